//! Checkpoint and restore of a process's driver state: a process with
//! memory (some of it mapped by the process, some private to the GPU), an
//! event page and events, and an AQL queue that has run a packet, is
//! checkpointed, its driver and device dropped (as a daemon that dies),
//! and restored on a new device from the file: every allocation's bytes
//! read back through the GPU's VM equal the checkpoint's, and the queue
//! goes on from its read pointer (the next packet runs, the one before is
//! not run again) and raises its event for WAIT_EVENTS.

use rocjitsu_config::{GpuConfig, Target};
use rocjitsu_kmd::checkpoint::{AllocKind, Checkpoint, Expect};
use rocjitsu_kmd::daemon::{Daemon, DaemonOptions};
use rocjitsu_kmd::remote::{Fds, RemoteDriver};
use rocjitsu_kmd::{Caller, Device, DeviceFile, Driver, DriverOptions, SimulatedDriver, gpu_id_of};
use std::os::fd::{FromRawFd, OwnedFd};

#[allow(unused_imports)]
use crate::common::*;

const KFD: DeviceFile = DeviceFile::Kfd;

fn opts(target: Target) -> DriverOptions {
    DriverOptions {
        config: GpuConfig::builtin(target),
        runtime_dir: std::env::temp_dir().join(format!("rocjitsu-kmd-ckpt-{}", std::process::id())),
        threads: 1,
        watchdog: None,
    }
}

/// VRAM of `size` bytes at a fresh reservation, mapped by the test (as
/// the thunk maps it through the render node) when `map` says so, and to
/// the GPU; its address and handle.
fn vram(d: &dyn Driver, gpu_id: u32, size: usize, map: bool) -> (u64, u64) {
    let va = reserve(size);
    let mut a = vram_args(va, size as u64, gpu_id);
    d.ioctl(KFD, iowr(0x16, 40), &mut a).unwrap();
    if map {
        let src = d
            .mmap(
                DeviceFile::Render { gpu: 0, minor: 128 },
                get64(&a, 24),
                size as u64,
            )
            .unwrap();
        // SAFETY: mapping the driver's memfd over the test's own reservation.
        let p = unsafe {
            libc::mmap(
                va as *mut libc::c_void,
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                src.fd,
                src.offset as libc::off_t,
            )
        };
        assert_eq!(p as u64, va);
        if src.close_after {
            // SAFETY: the descriptor the daemon sent, ours to close.
            unsafe { libc::close(src.fd) };
        }
    }
    let ids = [gpu_id];
    let mut m = [0u8; 24];
    put64(&mut m, 0, get64(&a, 16));
    put64(&mut m, 8, ids.as_ptr() as u64);
    put32(&mut m, 16, 1);
    d.ioctl(KFD, iowr(0x18, 24), &mut m).unwrap();
    (va, get64(&a, 16))
}

fn rd64(a: u64) -> u64 {
    // SAFETY: every address the tests read lies in a mapping `vram` made.
    unsafe { std::ptr::read_volatile(a as *const u64) }
}

fn wr64(a: u64, v: u64) {
    // SAFETY: as for `rd64`.
    unsafe { std::ptr::write_volatile(a as *mut u64, v) }
}

/// WAIT_EVENTS on one event, last seen age `age`: (result, age now).
fn wait_event(d: &dyn Driver, id: u32, age: u64, timeout_ms: u32) -> (u32, u64) {
    let mut list = vec![0u8; 48];
    put64(&mut list, 0, age);
    put32(&mut list, 40, id);
    let mut w = [0u8; 24];
    put64(&mut w, 0, list.as_ptr() as u64);
    put32(&mut w, 8, 1);
    put32(&mut w, 16, timeout_ms);
    d.ioctl(KFD, iowr(0x0c, 24), &mut w).unwrap();
    (get32(&w, 20), get64(&list, 0))
}

/// A barrier-AND packet (no dependencies) completing `signal`, written to
/// slot `index` of the ring at `ring`; the write pointer moves past it.
fn barrier(ring: u64, wptr: u64, index: u64, signal: u64) {
    let slot = ring + 64 * index;
    wr64(slot + 56, signal);
    wr64(slot, 3 | 1 << 8);
    wr64(wptr, index + 1);
}

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let t0 = std::time::Instant::now();
    while !cond() {
        assert!(t0.elapsed().as_secs() < 20, "{what} never happened");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Host pages registered with the GPU as hsaKmtRegisterMemory does on a
/// dGPU: a userptr allocation whose GPU address is a PROT_NONE
/// reservation of its own (the thunk's aperture), not the pages' address
/// (the allocation's mmap offset); mapped to the GPU. Its GPU address.
fn register_host(d: &dyn Driver, gpu_id: u32, host: u64, size: usize) -> u64 {
    let gva = reserve(size);
    let mut a = [0u8; 40];
    put64(&mut a, 0, gva);
    put64(&mut a, 8, size as u64);
    put64(&mut a, 24, host);
    put32(&mut a, 32, gpu_id);
    put32(&mut a, 36, 1 << 31 | 1 << 2); // WRITABLE | USERPTR
    d.ioctl(KFD, iowr(0x16, 40), &mut a).unwrap();
    let ids = [gpu_id];
    let mut m = [0u8; 24];
    put64(&mut m, 0, get64(&a, 16));
    put64(&mut m, 8, ids.as_ptr() as u64);
    put32(&mut m, 16, 1);
    d.ioctl(KFD, iowr(0x18, 24), &mut m).unwrap();
    gva
}

/// Fresh private anonymous read-write pages (ordinary host memory).
fn host_pages(size: usize) -> u64 {
    // SAFETY: a new mapping, overlapping nothing.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    p as u64
}

/// The memfd the test maps at `[va, va + size)`, through
/// `/proc/self/map_files` (what a daemon client offers on reconnecting).
fn mapped_memfd(va: u64, size: u64) -> Option<(OwnedFd, u64)> {
    let p = format!("/proc/self/map_files/{:x}-{:x}\0", va, va + size);
    // SAFETY: opening a NUL-terminated path.
    let fd = unsafe { libc::open(p.as_ptr().cast(), libc::O_RDWR | libc::O_CLOEXEC) };
    // SAFETY: a descriptor open just returned, owned by nobody else.
    (fd >= 0).then(|| (unsafe { OwnedFd::from_raw_fd(fd) }, 0))
}

#[test]
fn a_process_restored_from_its_checkpoint_has_its_memory_and_its_queue_goes_on() {
    let o = opts(Target::Gfx942);
    let gpu_id = gpu_id_of(&o.config, 0);
    let dir = std::env::temp_dir().join(format!("rocjitsu-kmd-ckpt-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("process.ckpt");

    let device = Device::new(o.clone()).unwrap();
    let d = SimulatedDriver::open(&device, Caller::Remote);
    // The queue's memory: ring, read/write pointers, signals, data.
    let (mem, _) = vram(&d, gpu_id, 1 << 16, true);
    let (ring, rptr, wptr) = (mem, mem + 0x1000 + 128, mem + 0x1000 + 56);
    let (s0, s1) = (mem + 0x1400, mem + 0x1440);
    for (i, b) in (0..0x8000u64).enumerate() {
        // SAFETY: inside the 64 KiB mapping.
        unsafe { *((mem + 0x4000 + b) as *mut u8) = (i * 31 + 7) as u8 };
    }
    // GPU-private VRAM the process never maps, filled through the GPU.
    let (private, _) = vram(&d, gpu_id, 1 << 14, false);
    let pattern: Vec<u8> = (0..1u32 << 14)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    d.vm().fill(private, &pattern).unwrap();
    // The event page, a signal event in it, a memory-exception event.
    let (page, page_handle) = vram(&d, gpu_id, 8 * 4096, true);
    let mut e = [0u8; 32];
    put64(&mut e, 0, page_handle);
    put32(&mut e, 16, 1);
    d.ioctl(KFD, iowr(0x08, 32), &mut e).unwrap();
    let ev = get32(&e, 24);
    let mut e = [0u8; 32];
    put32(&mut e, 8, 8);
    d.ioctl(KFD, iowr(0x08, 32), &mut e).unwrap();
    let mem_ev = get32(&e, 24);
    // An AQL queue that runs packet 0.
    let mut q = [0u8; 88];
    put64(&mut q, 0, ring);
    put64(&mut q, 8, wptr);
    put64(&mut q, 16, rptr);
    put32(&mut q, 32, 4096);
    put32(&mut q, 36, gpu_id);
    put32(&mut q, 40, 2);
    put32(&mut q, 44, 100);
    d.ioctl(KFD, iowr(0x02, 88), &mut q).unwrap();
    let qid = get32(&q, 52);
    wr64(s0 + 8, 1);
    barrier(ring, wptr, 0, s0);
    wait_until("packet 0", || rd64(s0 + 8) == 0 && rd64(rptr) == 1);

    let ck = device.checkpoint(&[(&d, [9; 16], 1234)], false).unwrap();
    ck.write(&file).unwrap();
    let c = &ck.meta.clients[0];
    assert_eq!(c.token, "09".repeat(16));
    assert_eq!(c.queues.queues.len(), 1);
    let qs = &c.queues.queues[0];
    assert_eq!((qs.id, qs.read_value, qs.write_value), (qid, 1, 1));
    assert_eq!(c.events.events.len(), 2);
    assert_eq!(c.events.page.as_ref().unwrap().va, page);
    let allocs = c.memory.allocations.clone();
    assert_eq!(allocs.len(), 3);
    assert!(
        allocs
            .iter()
            .all(|a| a.kind == AllocKind::Vram && a.contents.is_some())
    );
    // The process keeps running its own memory after the daemon is gone.
    drop(d);
    drop(device);
    assert_eq!(rd64(s0 + 8), 0, "the process's mapping outlives the daemon");

    // A new daemon reads the file and restores the process.
    let ck = Checkpoint::read(&file, &Expect::of(&o.config)).unwrap();
    let device = Device::new(o.clone()).unwrap();
    let mut offered = Vec::new();
    let (d, report) = SimulatedDriver::restore(
        &device,
        Caller::Remote,
        &ck.meta.clients[0],
        &ck,
        &mut |a| {
            offered.push(a.va);
            if a.va == private {
                None
            } else {
                mapped_memfd(a.va, a.size)
            }
        },
    )
    .unwrap();
    assert_eq!(offered.len(), 3);
    assert_eq!((report.allocations, report.adopted), (3, 2));
    assert!(report.differing.is_empty(), "{:?}", report.differing);
    // Every byte of every allocation, read through the GPU's VM, is the
    // checkpoint's.
    for a in &ck.meta.clients[0].memory.allocations {
        let got = d.vm().read_vec(a.va, a.size).unwrap();
        assert!(
            got == ck.contents(a.contents.as_ref().unwrap()),
            "allocation {} at 0x{:x}",
            a.id,
            a.va
        );
    }
    assert_eq!(d.vm().read_vec(private, 1 << 14).unwrap(), pattern);
    // The process's writes reach the restored GPU (its memfd was adopted).
    wr64(mem + 0x4000, 0x0123_4567_89ab_cdef);
    assert_eq!(
        d.vm().read_vec(mem + 0x4000, 8).unwrap(),
        0x0123_4567_89ab_cdef_u64.to_le_bytes()
    );

    // The queue goes on: packet 1 runs, raising the signal event; packet
    // 0 does not run again.
    wr64(s1 + 8, 1);
    wr64(s1 + 16, page + 8 * u64::from(ev));
    // SAFETY: the signal's event_id field, inside the mapping.
    unsafe { std::ptr::write_volatile((s1 + 24) as *mut u32, ev) };
    barrier(ring, wptr, 1, s1);
    assert_eq!(
        wait_event(&d, ev, 0, 20_000).0,
        0,
        "WAIT_EVENTS after the restore"
    );
    wait_until("packet 1", || rd64(s1 + 8) == 0 && rd64(rptr) == 2);
    assert_eq!(rd64(s0 + 8), 0, "packet 0 ran again");
    // Events kept their ids and state: the memory event is there, unsignaled.
    assert_eq!(wait_event(&d, mem_ev, 0, 0).0, 1);
    // New queues and allocations get ids after the restored ones.
    let mut q2 = q;
    put64(&mut q2, 0, ring + 0x800);
    d.ioctl(KFD, iowr(0x02, 88), &mut q2).unwrap();
    assert_eq!(get32(&q2, 52), qid + 1);
    assert_eq!(d.allocation_count(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_restore_refuses_a_foreign_configuration_and_memory_that_is_not_the_buffers() {
    let o = opts(Target::Gfx942);
    let gpu_id = gpu_id_of(&o.config, 0);
    let device = Device::new(o.clone()).unwrap();
    let d = SimulatedDriver::open(&device, Caller::Remote);
    let (va, _) = vram(&d, gpu_id, 1 << 13, true);
    wr64(va, 42);
    let ck = device.checkpoint(&[(&d, [1; 16], 1)], false).unwrap();
    let path = std::path::Path::new("mi300x.ckpt");
    let bytes = ck.encode();
    // A daemon of another GPU.
    let e = Checkpoint::decode(
        path,
        &bytes,
        &Expect::of(&GpuConfig::builtin(Target::Gfx90a)),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("mi300x.ckpt") && e.contains("gfx942") && e.contains("gfx90a"),
        "{e}"
    );
    // Memory offered for a buffer that is not a sealed memfd of its size.
    let ck = Checkpoint::decode(path, &bytes, &Expect::of(&o.config)).unwrap();
    let device2 = Device::new(o).unwrap();
    let r = SimulatedDriver::restore(
        &device2,
        Caller::Remote,
        &ck.meta.clients[0],
        &ck,
        &mut |_| {
            // SAFETY: memfd_create on a NUL-terminated name.
            let fd = unsafe { libc::memfd_create(c"unsealed".as_ptr(), 0) };
            // SAFETY: the descriptor just made.
            Some((unsafe { OwnedFd::from_raw_fd(fd) }, 0))
        },
    );
    let e = r.err().expect("an unsealed memfd was adopted").to_string();
    assert!(
        e.contains("size-sealed memfd") && e.contains(&format!("0x{va:x}")),
        "{e}"
    );
    assert_eq!(device2.vram_used(0), 0, "a refused restore holds no VRAM");
}

#[test]
fn state_a_checkpoint_does_not_hold_is_refused_by_name() {
    let o = opts(Target::Gfx942);
    let gpu_id = gpu_id_of(&o.config, 0);
    let device = Device::new(o).unwrap();
    let d = SimulatedDriver::open(&device, Caller::Remote);
    let (mem, _) = vram(&d, gpu_id, 1 << 16, true);
    let mut q = [0u8; 88];
    put64(&mut q, 0, mem);
    put64(&mut q, 8, mem + 0x1008);
    put64(&mut q, 16, mem + 0x1000);
    put32(&mut q, 32, 4096);
    put32(&mut q, 36, gpu_id);
    put32(&mut q, 40, 0); // PM4 compute
    put32(&mut q, 44, 100);
    d.ioctl(KFD, iowr(0x02, 88), &mut q).unwrap();
    let e = device
        .checkpoint(&[(&d, [2; 16], 2)], false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("queue 0 is a PM4 compute queue"), "{e}");
    // The queues run again after a refused checkpoint.
    let out = mem + 0x2000;
    let words = [
        3u32 << 30 | 3 << 16 | 0x37 << 8,
        5 << 8 | 1 << 20,
        out as u32,
        (out >> 32) as u32,
        0xabcd,
    ];
    for (i, w) in words.iter().enumerate() {
        // SAFETY: inside the ring, in the mapping.
        unsafe { std::ptr::write_volatile((mem + 4 * i as u64) as *mut u32, *w) };
    }
    wr64(mem + 0x1008, words.len() as u64);
    wait_until("the PM4 write after a refused checkpoint", || {
        rd64(out) & 0xffff_ffff == 0xabcd
    });
}

/// A daemon's stopper and the thread that runs it.
type Serving = (Box<dyn Fn()>, std::thread::JoinHandle<Result<(), String>>);

/// A daemon serving on `socket` (restored from `restore`) on a thread.
fn daemon(
    o: &DriverOptions,
    socket: &std::path::Path,
    restore: Option<std::path::PathBuf>,
) -> Serving {
    let d = Daemon::bind(DaemonOptions {
        driver: o.clone(),
        socket: socket.to_path_buf(),
        owner: None,
        limits: Default::default(),
        restore,
    })
    .unwrap();
    let stop = d.stopper();
    (Box::new(stop), std::thread::spawn(move || d.run()))
}

/// Daemon mode end to end: a client's daemon checkpoints (and freezes: a
/// call made then is held), is stopped, and a daemon restored from the
/// file takes the client back; the held call and the client's later
/// calls are served there, its queue goes on from its read pointer, and
/// the memory it maps is the restored GPU's.
#[test]
fn a_client_goes_on_on_a_daemon_restored_from_a_checkpoint() {
    let mut o = opts(Target::Gfx942);
    let dir = std::env::temp_dir().join(format!("rocjitsu-ckpt-daemon-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    o.runtime_dir = dir.clone();
    let (socket, file) = (dir.join("daemon.sock"), dir.join("daemon.ckpt"));
    let gpu_id = gpu_id_of(&o.config, 0);

    let (stop_a, a) = daemon(&o, &socket, None);
    let mut r = RemoteDriver::connect(&socket, &dir, Fds::PLAIN).unwrap();
    r.set_reconnect(Some(std::time::Duration::from_secs(60)));
    let r = std::sync::Arc::new(r);
    let (mem, _) = vram(&*r, gpu_id, 1 << 16, true);
    let (ring, rptr, wptr) = (mem, mem + 0x1000 + 128, mem + 0x1000 + 56);
    let (s0, s1) = (mem + 0x1400, mem + 0x1440);
    let (page, page_handle) = vram(&*r, gpu_id, 8 * 4096, true);
    let mut e = [0u8; 32];
    put64(&mut e, 0, page_handle);
    put32(&mut e, 16, 1);
    r.ioctl(KFD, iowr(0x08, 32), &mut e).unwrap();
    let ev = get32(&e, 24);
    let mut q = [0u8; 88];
    put64(&mut q, 0, ring);
    put64(&mut q, 8, wptr);
    put64(&mut q, 16, rptr);
    put32(&mut q, 32, 4096);
    put32(&mut q, 36, gpu_id);
    put32(&mut q, 40, 2);
    put32(&mut q, 44, 100);
    r.ioctl(KFD, iowr(0x02, 88), &mut q).unwrap();
    wr64(s0 + 8, 1);
    barrier(ring, wptr, 0, s0);
    wait_until("packet 0", || rd64(s0 + 8) == 0 && rd64(rptr) == 1);

    let summary = rocjitsu_kmd::daemon::request_checkpoint(&socket, &file).unwrap();
    assert!(
        summary.contains("\"clients\": 1") && summary.contains("\"queues\": 1"),
        "{summary}"
    );
    // The daemon is frozen: a call now is held (and served after the
    // restore); the queue does not run a packet written now.
    let held = {
        let r = r.clone();
        std::thread::spawn(move || {
            let mut v = [0u8; 8];
            r.ioctl(KFD, ior(1, 8), &mut v).map(|_| v)
        })
    };
    wr64(s1 + 8, 1);
    wr64(s1 + 16, page + 8 * u64::from(ev));
    // SAFETY: the signal's event_id field, inside the mapping.
    unsafe { std::ptr::write_volatile((s1 + 24) as *mut u32, ev) };
    barrier(ring, wptr, 1, s1);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!held.is_finished(), "a call was served by a frozen daemon");
    assert_eq!(rd64(s1 + 8), 1, "a frozen daemon's queue ran a packet");

    // The daemon goes away; a restored one takes the client back.
    stop_a();
    a.join().unwrap().unwrap();
    let (stop_b, b) = daemon(&o, &socket, Some(file.clone()));
    let v = held
        .join()
        .unwrap()
        .expect("the held call is served after the restore");
    assert_eq!((get32(&v, 0), get32(&v, 4)), (1, 17));
    assert_eq!(
        wait_event(&*r, ev, 0, 20_000).0,
        0,
        "WAIT_EVENTS on the restored daemon"
    );
    wait_until("packet 1", || rd64(s1 + 8) == 0 && rd64(rptr) == 2);
    assert_eq!(rd64(s0 + 8), 0, "packet 0 ran again");
    let st = rocjitsu_kmd::daemon::query_status(&socket).unwrap();
    assert!(
        st.contains("\"clients\": 1")
            && st.contains("\"allocations\": 2")
            && st.contains("\"queues\": 1"),
        "{st}"
    );
    drop(r);
    stop_b();
    b.join().unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_daemon_refuses_to_start_from_a_corrupt_or_foreign_checkpoint() {
    let mut o = opts(Target::Gfx942);
    let dir = std::env::temp_dir().join(format!("rocjitsu-ckpt-refuse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    o.runtime_dir = dir.clone();
    let device = Device::new(o.clone()).unwrap();
    let d = SimulatedDriver::open(&device, Caller::Remote);
    vram(&d, gpu_id_of(&o.config, 0), 1 << 13, true);
    let file = dir.join("one.ckpt");
    device
        .checkpoint(&[(&d, [3; 16], 3)], false)
        .unwrap()
        .write(&file)
        .unwrap();
    let bind = |o: &DriverOptions, restore: &std::path::Path| {
        Daemon::bind(DaemonOptions {
            driver: o.clone(),
            socket: dir.join("refused.sock"),
            owner: None,
            limits: Default::default(),
            restore: Some(restore.to_path_buf()),
        })
        .err()
        .expect("a daemon started from a bad checkpoint")
    };
    let mut other = opts(Target::Gfx90a);
    other.runtime_dir = dir.clone();
    let e = bind(&other, &file);
    assert!(
        e.contains("cannot restore") && e.contains("gfx942") && e.contains("gfx90a"),
        "{e}"
    );
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len();
    bytes[n - 5] ^= 0xff;
    let bad = dir.join("bad.ckpt");
    std::fs::write(&bad, &bytes).unwrap();
    let e = bind(&o, &bad);
    assert!(e.contains("bad.ckpt") && e.contains("SHA-256"), "{e}");
    assert!(
        !dir.join("refused.sock").exists(),
        "a refused restore started listening"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Local mode: registered host memory whose GPU address is not the pages'
/// address (hsaKmtRegisterMemory on a dGPU) is, after a restore, the
/// process's pages again, where they are (not at the GPU address, a
/// PROT_NONE reservation): what the process writes there after the
/// checkpoint is what the restored GPU reads at the GPU address.
#[test]
fn registered_host_memory_at_another_gpu_address_is_the_process_pages_after_a_restore() {
    let o = opts(Target::Gfx90a);
    let gpu_id = gpu_id_of(&o.config, 0);
    let device = Device::new(o.clone()).unwrap();
    let d = SimulatedDriver::open(&device, Caller::InProcess);
    let host = host_pages(8192);
    wr64(host + 0x1000, 0x1111);
    let gva = register_host(&d, gpu_id, host, 8192);
    assert_ne!(gva, host);
    assert_eq!(
        d.vm().read_vec(gva + 0x1000, 8).unwrap(),
        0x1111_u64.to_le_bytes()
    );
    let ck = device.checkpoint(&[(&d, [0; 16], 0)], false).unwrap();
    let a = &ck.meta.clients[0].memory.allocations[0];
    assert_eq!(
        (a.kind, a.va, a.mmap_offset),
        (AllocKind::Userptr, gva, host)
    );
    assert_eq!(a.process_address(), host);
    drop(d);
    drop(device);
    // Written after the checkpoint: the process's bytes are kept.
    wr64(host + 0x1000, 0x2222);
    let device = Device::new(o).unwrap();
    let (d, report) = SimulatedDriver::restore(
        &device,
        Caller::InProcess,
        &ck.meta.clients[0],
        &ck,
        &mut |_| None,
    )
    .unwrap();
    assert_eq!((report.allocations, report.adopted), (1, 1));
    assert_eq!(report.differing, [(a.id, gva, 2)]);
    assert_eq!(
        d.vm().read_vec(gva + 0x1000, 8).unwrap(),
        0x2222_u64.to_le_bytes()
    );
    wr64(host + 0x1008, 0x3333);
    assert_eq!(
        d.vm().read_vec(gva + 0x1008, 8).unwrap(),
        0x3333_u64.to_le_bytes()
    );
}

/// Daemon mode: a client's registered host memory at a GPU address of its
/// own (as ROCclr's pinned host buffers are: the fill pattern of
/// hipMemset, for one) stays shared with the restored GPU: the client
/// offers the memfd mapped over its pages, and the restored daemon takes
/// it for the allocation although the GPU address maps nothing. A barrier
/// packet written after the restore waits on a signal in that memory and
/// completes one there: the GPU sees the client's write, the client the
/// GPU's.
#[test]
fn a_restored_daemon_shares_registered_host_memory_at_another_gpu_address() {
    let mut o = opts(Target::Gfx90a);
    let dir = std::env::temp_dir().join(format!("rocjitsu-ckpt-userptr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    o.runtime_dir = dir.clone();
    let (socket, file) = (dir.join("daemon.sock"), dir.join("daemon.ckpt"));
    let gpu_id = gpu_id_of(&o.config, 0);

    let (stop_a, a) = daemon(&o, &socket, None);
    let mut r = RemoteDriver::connect(&socket, &dir, Fds::PLAIN).unwrap();
    r.set_reconnect(Some(std::time::Duration::from_secs(60)));
    let (mem, _) = vram(&r, gpu_id, 1 << 16, true);
    let (ring, rptr, wptr) = (mem, mem + 0x1000 + 128, mem + 0x1000 + 56);
    // Two signals in registered host memory: the barrier's dependency
    // (value at +8) and its completion signal (value at +0x48).
    let host = host_pages(4096);
    wr64(host + 8, 1);
    wr64(host + 0x48, 1);
    let gva = register_host(&r, gpu_id, host, 4096);
    assert_ne!(gva, host);
    let mut q = [0u8; 88];
    put64(&mut q, 0, ring);
    put64(&mut q, 8, wptr);
    put64(&mut q, 16, rptr);
    put32(&mut q, 32, 4096);
    put32(&mut q, 36, gpu_id);
    put32(&mut q, 40, 2);
    put32(&mut q, 44, 100);
    r.ioctl(KFD, iowr(0x02, 88), &mut q).unwrap();

    rocjitsu_kmd::daemon::request_checkpoint(&socket, &file).unwrap();
    let ck = Checkpoint::read(&file, &Expect::of(&o.config)).unwrap();
    let a_st = ck.meta.clients[0]
        .memory
        .allocations
        .iter()
        .find(|a| a.kind == AllocKind::Userptr)
        .expect("the userptr allocation is in the checkpoint");
    assert_eq!((a_st.va, a_st.process_address()), (gva, host));
    stop_a();
    a.join().unwrap().unwrap();
    let (stop_b, b) = daemon(&o, &socket, Some(file));
    // The first call finds the daemon gone and resumes on the restored one.
    let mut v = [0u8; 8];
    r.ioctl(KFD, ior(1, 8), &mut v).unwrap();

    // Packet 0: a barrier-AND on the dependency, completing the other.
    let slot = ring;
    wr64(slot + 8, gva);
    wr64(slot + 56, gva + 0x40);
    wr64(slot, 3 | 1 << 8);
    wr64(wptr, 1);
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(
        rd64(rptr),
        0,
        "the barrier ran before its dependency was met"
    );
    // The client meets it in its own pages; the restored GPU must see it.
    wr64(host + 8, 0);
    wait_until(
        "the barrier on a signal in registered host memory, after the restore",
        || rd64(rptr) == 1 && rd64(host + 0x48) == 0,
    );
    drop(r);
    stop_b();
    b.join().unwrap().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
