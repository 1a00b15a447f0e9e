//! The daemon over a real Unix socket, against clients that misbehave:
//! malformed headers and payloads, bad handshakes, arguments of the
//! wrong size, pointers at memory the client did not send, device files
//! that do not exist. Each gets an error (or its connection closed) and
//! the daemon goes on serving a well-behaved client; a client that goes
//! away leaves nothing behind in the daemon's accounting.

use rocjitsu_config::{GpuConfig, Target};
use rocjitsu_kmd::daemon::{Daemon, DaemonOptions};
use rocjitsu_kmd::remote::{Fds, RemoteDriver};
use rocjitsu_kmd::{DeviceFile, Driver, DriverOptions, Errno};
use rocjitsu_rpc::Transport;
use rocjitsu_rpc::unix::UnixTransport;
use rocjitsu_rpc::wire::{self, Device, Header, Hello, Ioctl, Opcode, Welcome};
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};

#[allow(unused_imports)]
use crate::common::*;

struct Running {
    dir: PathBuf,
    socket: PathBuf,
    stop: Box<dyn Fn()>,
    server: Option<std::thread::JoinHandle<Result<(), String>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        (self.stop)();
        if let Some(s) = self.server.take() {
            s.join().unwrap().unwrap();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start(name: &str) -> Running {
    start_with(name, Default::default())
}

fn start_with(name: &str, limits: rocjitsu_kmd::daemon::ClientLimits) -> Running {
    let dir = std::env::temp_dir().join(format!("rocjitsu-daemon-{name}-{}", std::process::id()));
    let daemon = Daemon::bind(DaemonOptions {
        driver: DriverOptions {
            config: GpuConfig::builtin(Target::Gfx942),
            runtime_dir: dir.clone(),
            threads: 1,
            watchdog: None,
        },
        socket: dir.join("daemon.sock"),
        owner: None,
        limits,
        restore: None,
    })
    .unwrap();
    let socket = daemon.socket().to_path_buf();
    let stop = daemon.stopper();
    let server = std::thread::spawn(move || daemon.run());
    Running {
        dir,
        socket,
        stop: Box::new(stop),
        server: Some(server),
    }
}

fn header(op: u16, id: u32, len: usize) -> Header {
    Header {
        opcode: op,
        reserved: 0,
        request_id: id,
        payload_len: len as u32,
        result: 0,
    }
}

/// A raw connection that has shaken hands; returns it and the welcome.
fn hello(socket: &Path) -> (UnixTransport, Welcome) {
    let t = UnixTransport::connect(socket).unwrap();
    let h = Hello {
        version: wire::VERSION,
        pid: std::process::id(),
        token: [0; 16],
    }
    .encode();
    t.send(&header(Opcode::Handshake as u16, 1, h.len()), &h, &[])
        .unwrap();
    let m = t.recv().unwrap().unwrap();
    assert_eq!(
        m.header.result,
        0,
        "{}",
        String::from_utf8_lossy(&m.payload)
    );
    let w = Welcome::decode(&m.payload).unwrap();
    (t, w)
}

fn call(t: &UnixTransport, op: u16, payload: &[u8]) -> Option<rocjitsu_rpc::Message> {
    t.send(&header(op, 9, payload.len()), payload, &[]).ok()?;
    t.recv().ok().flatten()
}

fn status(socket: &Path) -> String {
    rocjitsu_kmd::daemon::query_status(socket).unwrap()
}

/// A well-behaved client: GET_VERSION answers 1.17.
fn healthy(socket: &Path) {
    let r = RemoteDriver::connect(socket, socket.parent().unwrap(), Fds::PLAIN).unwrap();
    let mut v = [0u8; 8];
    r.ioctl(DeviceFile::Kfd, ior(1, 8), &mut v).unwrap();
    assert_eq!(u32::from_le_bytes(v[0..4].try_into().unwrap()), 1);
    assert_eq!(u32::from_le_bytes(v[4..8].try_into().unwrap()), 17);
}

#[test]
fn bad_handshakes_are_refused() {
    let d = start("hello");
    let try_hello = |version: u32, pid: u32, token: [u8; 16]| {
        let t = UnixTransport::connect(&d.socket).unwrap();
        let h = Hello {
            version,
            pid,
            token,
        }
        .encode();
        t.send(&header(Opcode::Handshake as u16, 1, h.len()), &h, &[])
            .unwrap();
        let m = t.recv().unwrap().unwrap();
        (
            m.header.result,
            String::from_utf8_lossy(&m.payload).into_owned(),
        )
    };
    let (r, why) = try_hello(wire::VERSION + 1, std::process::id(), [0; 16]);
    assert_eq!(r, -libc::EPROTONOSUPPORT);
    assert!(why.contains("protocol version"), "{why}");
    // A pid that is not the kernel's (a client in a container knows itself
    // by another number) is no reason to refuse: the kernel's pid is used.
    let (r, _) = try_hello(wire::VERSION, std::process::id() + 1, [0; 16]);
    assert_eq!(r, 0);
    let (r, _) = try_hello(wire::VERSION, std::process::id(), [7; 16]);
    assert_eq!(r, -libc::EPERM, "an unknown token");
    // A first message that is not a handshake.
    let t = UnixTransport::connect(&d.socket).unwrap();
    let m = call(&t, Opcode::Close as u16, b"").unwrap();
    assert_eq!(m.header.result, -libc::EPROTO);
    healthy(&d.socket);
}

#[test]
fn malformed_requests_get_errors_and_the_daemon_goes_on() {
    let d = start("malformed");
    let (t, _) = hello(&d.socket);
    // A payload that does not decode: an error reply, the connection lives.
    let m = call(&t, Opcode::Ioctl as u16, &[1, 2, 3]).unwrap();
    assert_eq!(m.header.result, -libc::EINVAL);
    // An argument that is not its request's size.
    let io = |request: u64, arg: Vec<u8>, buffers: Vec<(u64, Vec<u8>)>, device: Device| Ioctl {
        device,
        request,
        arg,
        buffers,
        fds: 0,
        fd_offset: 0,
        notes: vec![],
    };
    let m = call(
        &t,
        Opcode::Ioctl as u16,
        &io(ior(1, 8), vec![0; 4], vec![], Device::Kfd).encode(),
    )
    .unwrap();
    assert_eq!(m.header.result, -libc::EINVAL);
    // A render node that is not ours.
    let m = call(
        &t,
        Opcode::Ioctl as u16,
        &io(
            ior(1, 8),
            vec![0; 8],
            vec![],
            Device::Render { gpu: 0, minor: 200 },
        )
        .encode(),
    )
    .unwrap();
    assert_eq!(m.header.result, -libc::EINVAL);
    // WAIT_EVENTS pointing at memory the client did not send: EFAULT, and
    // the daemon never reads its own memory at that address.
    let local = [0u8; 48];
    let mut w = vec![0u8; 24];
    w[0..8].copy_from_slice(&(local.as_ptr() as u64).to_le_bytes());
    w[8..12].copy_from_slice(&1u32.to_le_bytes());
    let m = call(
        &t,
        Opcode::Ioctl as u16,
        &io(iowr(0x0c, 24), w.clone(), vec![], Device::Kfd).encode(),
    )
    .unwrap();
    assert_eq!(m.header.result, -libc::EFAULT);
    // The same with the range sent along: the driver reads the copy (and
    // rejects event id 0, which does not exist, with EINVAL).
    let m = call(
        &t,
        Opcode::Ioctl as u16,
        &io(
            iowr(0x0c, 24),
            w,
            vec![(local.as_ptr() as u64, vec![0; 48])],
            Device::Kfd,
        )
        .encode(),
    )
    .unwrap();
    assert_eq!(m.header.result, -libc::EINVAL);
    // MMAP of an offset nobody allocated.
    let mm = wire::Mmap {
        device: Device::Render { gpu: 0, minor: 128 },
        offset: 1 << 40,
        len: 4096,
    };
    let m = call(&t, Opcode::Mmap as u16, &mm.encode()).unwrap();
    assert_eq!(m.header.result, -libc::EINVAL);
    assert!(m.fds.is_empty());
    // A second handshake on the same connection.
    let h = Hello {
        version: wire::VERSION,
        pid: std::process::id(),
        token: [0; 16],
    }
    .encode();
    let m = call(&t, Opcode::Handshake as u16, &h).unwrap();
    assert_eq!(m.header.result, -libc::EPROTO);
    // A header with an unknown opcode: the stream cannot be trusted any
    // more, so the daemon ends this connection (and only this one).
    let raw = header(0x7777, 1, 0).encode();
    // SAFETY: writing a header to our own socket.
    unsafe { libc::write(t.as_raw_fd(), raw.as_ptr().cast(), raw.len()) };
    assert!(t.recv().map(|m| m.is_none()).unwrap_or(true));
    healthy(&d.socket);
}

#[test]
fn a_client_that_goes_away_leaves_nothing_behind() {
    let d = start("leave");
    {
        let r = RemoteDriver::connect(&d.socket, &d.dir, Fds::PLAIN).unwrap();
        let gpu_id = rocjitsu_kmd::gpu_id_of(r.config(), 0);
        // 4 MiB of VRAM at an address of our choosing (never mapped by us).
        let mut a = [0u8; 40];
        a[0..8].copy_from_slice(&0x7e00_0000_0000u64.to_le_bytes());
        a[8..16].copy_from_slice(&(4u64 << 20).to_le_bytes());
        a[32..36].copy_from_slice(&gpu_id.to_le_bytes());
        a[36..40].copy_from_slice(&(0x8000_0001u32 | 1 << 29).to_le_bytes());
        r.ioctl(DeviceFile::Kfd, iowr(0x16, 40), &mut a).unwrap();
        let st = status(&d.socket);
        assert!(st.contains("\"clients\": 1"), "{st}");
        assert!(st.contains("\"allocations\": 1"), "{st}");
        assert!(
            st.contains(&format!("\"vram_used\": [{}]", 4u64 << 20)),
            "{st}"
        );
        // Too much VRAM for the device: ENOMEM from the daemon's accounting.
        a[8..16].copy_from_slice(&(1u64 << 50).to_le_bytes());
        assert_eq!(
            r.ioctl(DeviceFile::Kfd, iowr(0x16, 40), &mut a),
            Err(Errno::ENOMEM)
        );
    }
    // Dropping the client closes its connections: the daemon frees it all.
    let t0 = std::time::Instant::now();
    loop {
        let st = status(&d.socket);
        if st.contains("\"clients\": 0")
            && st.contains("\"allocations\": 0")
            && st.contains("\"vram_used\": [0]")
        {
            break;
        }
        assert!(t0.elapsed().as_secs() < 10, "the daemon still holds {st}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// After fork, a child's copy of an adopted userptr page is its own: the
/// child writes it without the parent seeing the write (without the
/// privatisation it would: the page is a shared mapping of the memfd).
#[test]
fn a_forked_child_gets_private_copies_of_userptr_pages() {
    const PAGES: usize = 64;
    let d = start("userptr-fork");
    let r = RemoteDriver::connect(&d.socket, &d.dir, Fds::PLAIN).unwrap();
    let gpu_id = rocjitsu_kmd::gpu_id_of(r.config(), 0);
    let page = anon(PAGES * 4096) as *mut u32;
    // Two pages hold data (the first and the 41st); the rest were never
    // touched.
    let far = page.wrapping_add(40 * 1024);
    // SAFETY: our mapping.
    unsafe {
        page.write_volatile(7);
        far.write_volatile(5);
    }
    let mut a = [0u8; 40];
    a[0..8].copy_from_slice(&0x7f10_0000_0000u64.to_le_bytes());
    a[8..16].copy_from_slice(&((PAGES * 4096) as u64).to_le_bytes());
    a[24..32].copy_from_slice(&(page as u64).to_le_bytes());
    a[32..36].copy_from_slice(&gpu_id.to_le_bytes());
    a[36..40].copy_from_slice(&(4u32 | 1 << 31).to_le_bytes());
    r.ioctl(DeviceFile::Kfd, iowr(0x16, 40), &mut a).unwrap();
    assert_eq!(read(page), 7, "adoption kept the contents");
    assert_eq!(read(far), 5, "adoption kept the contents");
    fn read(p: *mut u32) -> u32 {
        // SAFETY: the test's mapping, mapped throughout.
        unsafe { p.read_volatile() }
    }
    fn resident(p: *mut u32) -> usize {
        let mut v = [0u8; PAGES];
        // SAFETY: the test's mapping, PAGES pages, one byte each.
        let rc = unsafe { libc::mincore(p.cast(), PAGES * 4096, v.as_mut_ptr()) };
        assert_eq!(rc, 0);
        v.iter().filter(|&&b| b & 1 != 0).count()
    }
    let child = |privatize: bool, expect: u32, value: u32| {
        // SAFETY: the child only calls async-signal-tolerant code (it is a
        // test: privatising reads /proc and maps memory) and _exits.
        match unsafe { libc::fork() } {
            // SAFETY: in the child: the test's mapping is mapped; _exit
            // ends it.
            0 => unsafe {
                let code = if !privatize {
                    0
                } else if rocjitsu_kmd::remote::privatize_userptr_mappings() == 0 {
                    3
                } else if page.read_volatile() != expect || far.read_volatile() != 5 {
                    4 // the parent's data did not come along
                } else if resident(page) != 2 {
                    5 // untouched pages were copied too
                } else {
                    0
                };
                page.write_volatile(value);
                libc::_exit(code);
            },
            pid => {
                let mut st = 0;
                // SAFETY: waiting for our child.
                unsafe { libc::waitpid(pid, &mut st, 0) };
                assert!(
                    libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0,
                    "child status {st:#x}"
                );
            }
        }
    };
    // The hazard is real: a child that does not privatise writes the
    // parent's page.
    child(false, 7, 8);
    assert_eq!(read(page), 8, "the page is shared with the memfd");
    child(true, 8, 9);
    assert_eq!(
        read(page),
        8,
        "the privatised child wrote the parent's page"
    );
    // SAFETY: our mapping.
    unsafe { libc::munmap(page.cast(), PAGES * 4096) };
}

/// The memfd a client receives for its VRAM cannot be shrunk (or grown)
/// under the daemon: a hostile client's ftruncate fails and the daemon,
/// which maps the same memory, goes on.
#[test]
fn a_client_cannot_resize_the_memory_it_maps() {
    let d = start("sealed");
    let r = RemoteDriver::connect(&d.socket, &d.dir, Fds::PLAIN).unwrap();
    let gpu_id = rocjitsu_kmd::gpu_id_of(r.config(), 0);
    let mut a = [0u8; 40];
    a[0..8].copy_from_slice(&0x7e10_0000_0000u64.to_le_bytes());
    a[8..16].copy_from_slice(&(1u64 << 20).to_le_bytes());
    a[32..36].copy_from_slice(&gpu_id.to_le_bytes());
    a[36..40].copy_from_slice(&(1u32 | 1 << 31).to_le_bytes());
    r.ioctl(DeviceFile::Kfd, iowr(0x16, 40), &mut a).unwrap();
    let offset = u64::from_le_bytes(a[24..32].try_into().unwrap());
    let src = r
        .mmap(DeviceFile::Render { gpu: 0, minor: 128 }, offset, 1 << 20)
        .unwrap();
    for size in [0, 4 << 20] {
        // SAFETY: ftruncate on the descriptor we received.
        let rc = unsafe { libc::ftruncate(src.fd, size) };
        let e = std::io::Error::last_os_error().raw_os_error();
        assert_eq!((rc, e), (-1, Some(libc::EPERM)), "ftruncate to {size}");
    }
    // SAFETY: our descriptor.
    unsafe { libc::close(src.fd) };
    healthy(&d.socket);
}

/// Registering a range again that an earlier userptr allocation already
/// moved into a daemon memfd reuses that memory: the mapping stays as it
/// is (same memfd), nothing is copied.
#[test]
fn a_userptr_range_registered_again_keeps_its_shared_memory() {
    let d = start("userptr-again");
    let r = RemoteDriver::connect(&d.socket, &d.dir, Fds::PLAIN).unwrap();
    let gpu_id = rocjitsu_kmd::gpu_id_of(r.config(), 0);
    let len = 64 << 10;
    let base = anon(len);
    let backing_of = |va: u64| -> String {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        maps.lines()
            .find(|l| {
                let (a, b) = l
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .split_once('-')
                    .unwrap();
                let (a, b) = (
                    u64::from_str_radix(a, 16).unwrap(),
                    u64::from_str_radix(b, 16).unwrap(),
                );
                a <= va && va < b
            })
            .map(|l| l.split_whitespace().skip(4).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    let register = |va: u64, size: u64| {
        let mut a = [0u8; 40];
        a[0..8].copy_from_slice(&0x7f20_0000_0000u64.to_le_bytes());
        a[8..16].copy_from_slice(&size.to_le_bytes());
        a[24..32].copy_from_slice(&va.to_le_bytes());
        a[32..36].copy_from_slice(&gpu_id.to_le_bytes());
        a[36..40].copy_from_slice(&(4u32 | 1 << 31).to_le_bytes());
        r.ioctl(DeviceFile::Kfd, iowr(0x16, 40), &mut a).unwrap();
        let mut f = [0u8; 8];
        f.copy_from_slice(&a[16..24]);
        f
    };
    // SAFETY: our mapping.
    unsafe { (base as *mut u64).write_volatile(0x1234) };
    let h = register(base, len as u64);
    let first = backing_of(base);
    assert!(first.contains("/memfd:rocjitsu-userptr-"), "{first}");
    r.ioctl(DeviceFile::Kfd, iowr(0x17, 8), &mut h.clone())
        .unwrap();
    // The whole range again, then a part of it at an offset.
    let h2 = register(base, len as u64);
    assert_eq!(backing_of(base), first, "the range was moved again");
    let h3 = register(base + 16384, 8192);
    assert_eq!(
        backing_of(base + 16384),
        first,
        "the sub-range was moved again"
    );
    // SAFETY: our mapping (still the same memory).
    assert_eq!(unsafe { (base as *const u64).read_volatile() }, 0x1234);
    for h in [h2, h3] {
        r.ioctl(DeviceFile::Kfd, iowr(0x17, 8), &mut h.clone())
            .unwrap();
    }
    // SAFETY: our mapping.
    unsafe { libc::munmap(base as *mut libc::c_void, len) };
    // Memory a client offers must be a memfd whose size is sealed: its own
    // unsealed memfd is refused (EINVAL), as is a count of descriptors that
    // does not match the request's.
    let (t, _) = hello(&d.socket);
    // SAFETY: a memfd of our own, 64 KiB.
    let own = unsafe {
        let fd = libc::memfd_create(c"mine".as_ptr(), libc::MFD_CLOEXEC);
        assert!(fd >= 0 && libc::ftruncate(fd, 65536) == 0);
        std::os::fd::OwnedFd::from_raw_fd(fd)
    };
    let mut a = vec![0u8; 40];
    a[0..8].copy_from_slice(&0x7f30_0000_0000u64.to_le_bytes());
    a[8..16].copy_from_slice(&4096u64.to_le_bytes());
    a[24..32].copy_from_slice(&0x7f30_0000_0000u64.to_le_bytes());
    a[32..36].copy_from_slice(&gpu_id.to_le_bytes());
    a[36..40].copy_from_slice(&(4u32 | 1 << 31).to_le_bytes());
    for (fds, sent) in [(1, true), (0, true), (1, false)] {
        let io = Ioctl {
            device: Device::Kfd,
            request: iowr(0x16, 40),
            arg: a.clone(),
            buffers: vec![],
            fds,
            fd_offset: 0,
            notes: vec![],
        }
        .encode();
        use std::os::fd::AsFd;
        let attached = if sent { vec![own.as_fd()] } else { vec![] };
        t.send(&header(Opcode::Ioctl as u16, 5, io.len()), &io, &attached)
            .unwrap();
        let m = t.recv().unwrap().unwrap();
        assert_eq!(m.header.result, -libc::EINVAL, "fds {fds}, sent {sent}");
        assert!(m.fds.is_empty());
    }
    healthy(&d.socket);
}

/// Registers `[va, va + size)` as userptr memory with the GPU and frees
/// it again (the pages stay the daemon's shared memory).
fn register_and_free(r: &RemoteDriver, gpu_id: u32, va: u64, size: u64) {
    let mut a = [0u8; 40];
    a[0..8].copy_from_slice(&0x7f40_0000_0000u64.to_le_bytes());
    a[8..16].copy_from_slice(&size.to_le_bytes());
    a[24..32].copy_from_slice(&va.to_le_bytes());
    a[32..36].copy_from_slice(&gpu_id.to_le_bytes());
    // USERPTR | WRITABLE | NO_SUBSTITUTE
    a[36..40].copy_from_slice(&(4u32 | 1 << 31 | 1 << 28).to_le_bytes());
    r.ioctl(DeviceFile::Kfd, iowr(0x16, 40), &mut a).unwrap();
    let mut f = [0u8; 8];
    f.copy_from_slice(&a[16..24]);
    r.ioctl(DeviceFile::Kfd, iowr(0x17, 8), &mut f).unwrap();
}

/// A userptr range shares its page with memory another thread keeps
/// writing (as a small malloc'd buffer shares its page with the heap's
/// bookkeeping): while the client moves the page into the daemon's memfd,
/// none of that thread's writes may be lost. Each round moves a fresh
/// page (a page moved once is not moved again).
#[test]
fn adopting_userptr_pages_loses_no_concurrent_write() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    const ROUNDS: usize = 300;
    let d = start("userptr-race");
    let r = RemoteDriver::connect(&d.socket, &d.dir, Fds::PLAIN).unwrap();
    let gpu_id = rocjitsu_kmd::gpu_id_of(r.config(), 0);
    let len = ROUNDS * 8192;
    let base = anon(len);
    // The writer's slot sits in the round's registered page, past the part
    // the GPU would use; the writer checks each write reads back.
    let slot = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let (lost, writes) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 1u64;
            while !stop.load(Ordering::Relaxed) {
                let at = slot.load(Ordering::Acquire);
                if at == 0 {
                    std::hint::spin_loop();
                    continue;
                }
                // SAFETY: inside `base`'s mapping (remapped in place).
                let v = unsafe { &*(at as *const AtomicU64) };
                v.store(i, Ordering::SeqCst);
                // A later read of an older value means the write went to
                // a page that was then replaced.
                if (0..4).any(|_| v.load(Ordering::SeqCst) != i) {
                    lost.fetch_add(1, Ordering::Relaxed);
                }
                writes.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
        });
        for round in 0..ROUNDS as u64 {
            let page = base + round * 8192;
            slot.store(page + 2048, Ordering::Release);
            while writes.load(Ordering::Relaxed) < round * 8 {
                std::hint::spin_loop();
            }
            register_and_free(&r, gpu_id, page, 4096);
        }
        stop.store(true, Ordering::Relaxed);
    });
    let lost = lost.load(Ordering::Relaxed);
    assert!(writes.load(Ordering::Relaxed) > 0, "the writer never ran");
    assert_eq!(lost, 0, "{lost} writes were lost while pages moved");
    // SAFETY: our mapping, no writer left.
    unsafe { libc::munmap(base as *mut libc::c_void, len) };
}

/// Registering the page of a small heap buffer while other threads
/// allocate and free (their writes to the heap's bookkeeping wait on the
/// fence): it completes, and the heap stays intact.
#[test]
fn adopting_a_heap_page_while_others_allocate_completes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let d = start("userptr-heap");
    let r = RemoteDriver::connect(&d.socket, &d.dir, Fds::PLAIN).unwrap();
    let gpu_id = rocjitsu_kmd::gpu_id_of(r.config(), 0);
    let stop = AtomicBool::new(false);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        for t in 0..3u8 {
            let stop = &stop;
            s.spawn(move || {
                let mut n = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    let v: Vec<u8> = vec![t ^ n as u8; 16 + n % 200];
                    assert!(v.iter().all(|&b| b == t ^ n as u8), "heap corrupted");
                    n += 1;
                }
            });
        }
        let r = &r;
        s.spawn(move || {
            for _ in 0..100 {
                let buf: Box<[u8; 96]> = Box::new([7; 96]);
                let page = (buf.as_ptr() as u64) & !4095;
                register_and_free(r, gpu_id, page, 4096);
                assert!(buf.iter().all(|&b| b == 7), "the buffer changed");
            }
            done_tx.send(()).unwrap();
        });
        let finished = done_rx.recv_timeout(std::time::Duration::from_secs(60));
        if finished.is_err() {
            // The stuck threads would keep the scope (and the test) from
            // ever ending: fail the whole run instead.
            eprintln!("registering heap pages hung (a thread waits on its own write fence)");
            std::process::exit(1);
        }
        stop.store(true, Ordering::Relaxed);
    });
}

/// A peer of another uid is refused with EPERM even when it can reach the
/// socket (normally the socket directory's mode 0700 keeps it out), and
/// the daemon goes on serving its own uid.
#[test]
fn a_peer_of_another_uid_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    assert_eq!(
        uid, 0,
        "this test runs a client as another uid (setuid), which needs root; run it as root, as CI does"
    );
    let d = start("other-uid");
    // Let anybody reach the socket, so only the daemon's own check stands.
    std::fs::set_permissions(&d.dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&d.socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    // SAFETY: the child switches uid, makes one request and _exits.
    match unsafe { libc::fork() } {
        0 => {
            // SAFETY: dropping privileges in the child.
            let dropped = unsafe { libc::setgid(65534) == 0 && libc::setuid(65534) == 0 };
            let code = if !dropped {
                10
            } else {
                match UnixTransport::connect(&d.socket) {
                    Err(_) => 11, // could not even connect: the test proves nothing
                    Ok(t) => {
                        let h = Hello {
                            version: wire::VERSION,
                            pid: std::process::id(),
                            token: [0; 16],
                        }
                        .encode();
                        let _ = t.send(&header(Opcode::Handshake as u16, 1, h.len()), &h, &[]);
                        match t.recv() {
                            Ok(Some(m)) if m.header.result == -libc::EPERM => 0,
                            Ok(Some(m)) if m.header.result == 0 => 12, // accepted
                            _ => 13,
                        }
                    }
                }
            };
            // SAFETY: ends the child without running the parent's exit code.
            unsafe { libc::_exit(code) }
        }
        pid => {
            let mut st = 0;
            // SAFETY: waiting for our child.
            unsafe { libc::waitpid(pid, &mut st, 0) };
            assert!(libc::WIFEXITED(st), "child status {st:#x}");
            let code = libc::WEXITSTATUS(st);
            assert_eq!(
                code, 0,
                "the other uid's handshake: 10 no setuid, 11 no connection, 12 accepted, 13 no EPERM reply"
            );
        }
    }
    healthy(&d.socket);
}

/// A fresh private anonymous mapping of `len` bytes (the test unmaps it).
fn anon(len: usize) -> u64 {
    // SAFETY: a new mapping, overlapping nothing.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED, "mmap of {len} bytes");
    p as u64
}

#[test]
fn a_process_past_its_connection_limit_is_refused_and_the_daemon_goes_on() {
    let limits = rocjitsu_kmd::daemon::ClientLimits {
        connections: 8,
        ..Default::default()
    };
    let d = start_with("conn-limit", limits);
    let mut held: Vec<UnixTransport> = (0..8).map(|_| hello(&d.socket).0).collect();
    // The ninth connection of this process: EMFILE with the reason, before
    // the daemon reads anything or starts a thread for it.
    for _ in 0..20 {
        let t = UnixTransport::connect(&d.socket).unwrap();
        let h = Hello {
            version: wire::VERSION,
            pid: std::process::id(),
            token: [0; 16],
        }
        .encode();
        let _ = t.send(&header(Opcode::Handshake as u16, 0, h.len()), &h, &[]);
        let m = t.recv().unwrap().unwrap();
        assert_eq!(m.header.result, -libc::EMFILE);
        let why = String::from_utf8_lossy(&m.payload);
        assert!(
            why.contains("8 connections open") && why.contains("--client-connections"),
            "{why}"
        );
        assert!(t.recv().map_or(true, |m| m.is_none()), "then it is closed");
    }
    // A connection given back is a slot free again (a status query, from
    // this same process, gets it once the daemon has seen the close).
    held.pop();
    let t0 = std::time::Instant::now();
    let mut refused = 20;
    let st = loop {
        match rocjitsu_kmd::daemon::query_status(&d.socket) {
            Ok(st) => break st,
            Err(e) => {
                assert!(e.contains("errno 24"), "{e}");
                assert!(t0.elapsed().as_secs() < 10, "the slot never came back: {e}");
                refused += 1;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(
        st.contains(&format!("\"refused_connections\": {refused}")),
        "{st}"
    );
    assert!(st.contains("\"connections\": 8"), "{st}");
    drop(held);
}

/// DMA-buf IPC between two clients of one daemon, as ROCm 7's runtime
/// does it: A exports its VRAM allocation (the descriptor comes back over
/// the socket and maps A's bytes) and tags the buffer through the render
/// node; B, handed the descriptor, sees the buffer's size, GPU and tag and
/// imports it. A descriptor the daemon did not export is not a dma-buf of
/// its (EINVAL), and a number naming no file is EBADF.
#[test]
fn a_dmabuf_exported_by_one_client_is_imported_by_another() {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let d = start("dmabuf");
    let a = RemoteDriver::connect(&d.socket, &d.dir, Fds::PLAIN).unwrap();
    let b = RemoteDriver::connect(&d.socket, &d.dir, Fds::PLAIN).unwrap();
    let gpu_id = rocjitsu_kmd::gpu_id_of(a.config(), 0);
    let render = DeviceFile::Render { gpu: 0, minor: 128 };
    let drm = |nr: u64, size: u64| (3u64 << 30) | (size << 16) | (u64::from(b'd') << 8) | nr;
    let size = 1u64 << 20;
    let va = reserve(size as usize);
    let mut al = vram_args(va, size, gpu_id);
    a.ioctl(DeviceFile::Kfd, iowr(0x16, 40), &mut al).unwrap();
    let handle = get64(&al, 16);
    let src = a.mmap(render, get64(&al, 24), size).unwrap();
    // SAFETY: mapping the daemon's memfd over A's reservation, writing it.
    unsafe {
        let p = libc::mmap(
            va as *mut libc::c_void,
            size as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            src.fd,
            src.offset as libc::off_t,
        );
        assert_eq!(p as u64, va);
        *((va + 64) as *mut u32) = 0xabad_cafe;
    }

    let mut e = [0u8; 16];
    put64(&mut e, 0, handle);
    a.ioctl(DeviceFile::Kfd, iowr(0x24, 16), &mut e).unwrap();
    // SAFETY: the descriptor the export installed in this process.
    let fd = unsafe { OwnedFd::from_raw_fd(get32(&e, 12) as i32) };
    // SAFETY: mapping the descriptor, reading it, unmapping it.
    let seen = unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        let v = *((p as u64 + 64) as *const u32);
        libc::munmap(p, 4096);
        v
    };
    assert_eq!(seen, 0xabad_cafe);
    // A tags the buffer through its render node.
    let mut p = [0u8; 12];
    put32(&mut p, 8, fd.as_raw_fd() as u32);
    a.ioctl(render, drm(0x2e, 12), &mut p).unwrap();
    let mut md = vec![0u8; 288];
    put32(&mut md, 0, get32(&p, 0));
    put32(&mut md, 4, 1);
    put32(&mut md, 24, 4);
    put32(&mut md, 28, 4242);
    a.ioctl(render, drm(0x46, 288), &mut md).unwrap();

    // B: the buffer's size, GPU and tag, then an import.
    let mut g = [0u8; 32];
    put32(&mut g, 28, fd.as_raw_fd() as u32);
    b.ioctl(DeviceFile::Kfd, iowr(0x1c, 32), &mut g).unwrap();
    assert_eq!((get64(&g, 0), get32(&g, 20)), (size, gpu_id));
    let mut p = [0u8; 12];
    put32(&mut p, 8, fd.as_raw_fd() as u32);
    b.ioctl(render, drm(0x2e, 12), &mut p).unwrap();
    let mut get = vec![0u8; 288];
    put32(&mut get, 0, get32(&p, 0));
    put32(&mut get, 4, 2);
    b.ioctl(render, drm(0x46, 288), &mut get).unwrap();
    assert_eq!((get32(&get, 24), get32(&get, 28)), (4, 4242));
    let va2 = reserve(size as usize);
    let mut im = [0u8; 24];
    put64(&mut im, 0, va2);
    put32(&mut im, 16, gpu_id);
    put32(&mut im, 20, fd.as_raw_fd() as u32);
    b.ioctl(DeviceFile::Kfd, iowr(0x1d, 24), &mut im).unwrap();
    assert_eq!(get64(&im, 8) >> 32, u64::from(gpu_id));

    // Not a dma-buf of the daemon's, and no file at all.
    // SAFETY: a memfd of our own.
    let own = unsafe {
        let f = libc::memfd_create(c"mine".as_ptr(), libc::MFD_CLOEXEC);
        assert!(f >= 0 && libc::ftruncate(f, 4096) == 0);
        OwnedFd::from_raw_fd(f)
    };
    put32(&mut g, 28, own.as_raw_fd() as u32);
    assert_eq!(
        b.ioctl(DeviceFile::Kfd, iowr(0x1c, 32), &mut g),
        Err(Errno::EINVAL)
    );
    put32(&mut g, 28, 1 << 20);
    assert_eq!(
        b.ioctl(DeviceFile::Kfd, iowr(0x1c, 32), &mut g),
        Err(Errno(libc::EBADF))
    );
    healthy(&d.socket);
    // SAFETY: releasing the test's reservations.
    unsafe {
        libc::munmap(va as *mut libc::c_void, size as usize);
        libc::munmap(va2 as *mut libc::c_void, size as usize);
    }
}
