//! The simulated driver through its ioctl interface, with argument
//! structures laid out as `linux/kfd_ioctl.h` defines them and errno values
//! as the amdgpu KFD returns them.

use rocjitsu_config::{GpuConfig, Target};
use rocjitsu_kmd::{DeviceFile, Driver, DriverOptions, Errno, SimulatedDriver, gpu_id_of};

#[allow(unused_imports)]
use crate::common::*;

fn driver() -> (SimulatedDriver, u32) {
    let config = GpuConfig::builtin(Target::Gfx942);
    let gpu_id = gpu_id_of(&config, 0);
    let dir = std::env::temp_dir().join(format!("rocjitsu-kmd-test-{}", std::process::id()));
    let d = SimulatedDriver::new(DriverOptions {
        config,
        runtime_dir: dir,
        threads: 1,
        watchdog: None,
    })
    .unwrap();
    (d, gpu_id)
}

const KFD: DeviceFile = DeviceFile::Kfd;

/// WAIT_EVENTS on one signal event whose last seen age is `age` (0: none):
/// the wait result (0 complete, 1 timeout) and the age KFD wrote back.
fn wait_event(d: &SimulatedDriver, id: u32, age: u64, timeout_ms: u32) -> (u32, u64) {
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

#[test]
fn version_apertures_and_unknown_requests() {
    let (d, gpu_id) = driver();
    let mut v = [0u8; 8];
    d.ioctl(KFD, ior(0x01, 8), &mut v).unwrap();
    assert_eq!((get32(&v, 0), get32(&v, 4)), (1, 17));

    // GET_PROCESS_APERTURES_NEW: first the count, then the entries.
    let mut ap = vec![0u8; 56 * 4];
    let mut a = [0u8; 16];
    d.ioctl(KFD, iowr(0x14, 16), &mut a).unwrap();
    assert_eq!(get32(&a, 8), 1);
    put64(&mut a, 0, ap.as_mut_ptr() as u64);
    put32(&mut a, 8, 4);
    d.ioctl(KFD, iowr(0x14, 16), &mut a).unwrap();
    assert_eq!(get32(&a, 8), 1);
    assert_eq!(get32(&ap, 48), gpu_id);
    assert_eq!(get64(&ap, 0), 1 << 48);
    // A bad pointer is EFAULT, as copy_to_user fails.
    put64(&mut a, 0, 8);
    assert_eq!(d.ioctl(KFD, iowr(0x14, 16), &mut a), Err(Errno::EFAULT));

    // Unknown commands and foreign request types.
    assert_eq!(
        d.ioctl(KFD, iowr(0x82, 40), &mut [0u8; 40]),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        d.ioctl(KFD, 0xc040_6400, &mut [0u8; 64]),
        Err(Errno::ENOTTY)
    );
    // A GPU id that is not ours.
    let mut acq = [0u8; 8];
    put32(&mut acq, 4, gpu_id ^ 0x5555);
    assert_eq!(d.ioctl(KFD, iow(0x15, 8), &mut acq), Err(Errno::EINVAL));
    put32(&mut acq, 4, gpu_id);
    d.ioctl(KFD, iow(0x15, 8), &mut acq).unwrap();
}

#[test]
fn memory_lifecycle_and_errors() {
    let (d, gpu_id) = driver();
    // Reserve a VA range as the thunk does, allocate VRAM in it, map it
    // through the render node and for the GPU.
    let size = 1 << 20;
    let (va, handle, offset) = vram(&d, gpu_id, size);
    assert_eq!(handle >> 32, u64::from(gpu_id));
    let mut a = [0u8; 40];
    put64(&mut a, 0, va);
    put64(&mut a, 8, size as u64);
    put32(&mut a, 32, gpu_id);
    put32(&mut a, 36, 0x8000_0001 | 1 << 29); // VRAM | WRITABLE | PUBLIC
    // SAFETY: `va` is mapped read-write just above.
    unsafe { *((va + 64) as *mut u32) = 0x1234_5678 };
    let mut tlb = rocjitsu_gpu::mem::Tlb::default();
    assert_eq!(d.vm().read_u32(&mut tlb, va + 64).unwrap(), 0x1234_5678);
    assert_eq!(d.allocation_count(), 1);

    // Too big for the GPU's memory: ENOMEM; no size: EINVAL.
    let mut big = a;
    put64(&mut big, 8, 1 << 50);
    assert_eq!(d.ioctl(KFD, iowr(0x16, 40), &mut big), Err(Errno::ENOMEM));
    put64(&mut big, 8, 0);
    assert_eq!(d.ioctl(KFD, iowr(0x16, 40), &mut big), Err(Errno::EINVAL));

    // Free: the GPU loses it; a second free is EINVAL.
    let mut f = [0u8; 8];
    put64(&mut f, 0, handle);
    d.ioctl(KFD, iow(0x17, 8), &mut f).unwrap();
    assert!(d.vm().read_u32(&mut tlb, va + 64).is_err());
    assert_eq!(d.ioctl(KFD, iow(0x17, 8), &mut f), Err(Errno::EINVAL));
    assert_eq!(d.allocation_count(), 0);
    assert_eq!(
        d.mmap(DeviceFile::Render { gpu: 0, minor: 128 }, offset, 4096),
        Err(Errno::EINVAL)
    );
    // SAFETY: releasing the test's reservation.
    unsafe { libc::munmap(va as *mut libc::c_void, size) };
}

#[test]
fn events_and_queue_arguments() {
    let (d, gpu_id) = driver();
    let mut e = [0u8; 32];
    put32(&mut e, 12, 0); // signal event
    put32(&mut e, 16, 1);
    d.ioctl(KFD, iowr(0x08, 32), &mut e).unwrap();
    let id = get32(&e, 24);
    // WAIT_EVENTS with a zero timeout: not signalled yet.
    assert_eq!(wait_event(&d, id, 0, 0).0, 1, "timeout");
    let mut s = [0u8; 8];
    put32(&mut s, 0, id);
    d.ioctl(KFD, iow(0x0a, 8), &mut s).unwrap();
    assert_eq!(wait_event(&d, id, 0, 1000).0, 0, "complete");
    put32(&mut s, 0, id + 77);
    assert_eq!(d.ioctl(KFD, iow(0x0a, 8), &mut s), Err(Errno::EINVAL));

    // CREATE_QUEUE argument checks.
    #[repr(C, align(64))]
    struct Ring([u8; 4096]);
    let ring = Box::new(Ring([0; 4096]));
    let ptrs = [0u64; 2];
    let mut q = [0u8; 88];
    put64(&mut q, 0, ring.0.as_ptr() as u64);
    put64(&mut q, 8, ptrs.as_ptr() as u64);
    put64(&mut q, 16, ptrs.as_ptr() as u64 + 8);
    put32(&mut q, 32, 4096);
    put32(&mut q, 36, gpu_id);
    put32(&mut q, 40, 2); // AQL
    put32(&mut q, 44, 100);
    put32(&mut q, 48, 7);
    let mut bad = q;
    put32(&mut bad, 32, 3000); // not a power of two
    assert_eq!(d.ioctl(KFD, iowr(0x02, 88), &mut bad), Err(Errno::EINVAL));
    let mut bad = q;
    put32(&mut bad, 48, 16); // priority above 15
    assert_eq!(d.ioctl(KFD, iowr(0x02, 88), &mut bad), Err(Errno::EINVAL));
    let mut bad = q;
    put64(&mut bad, 0, 0);
    assert_eq!(d.ioctl(KFD, iowr(0x02, 88), &mut bad), Err(Errno::EFAULT));
    // A context save area must have the sizes KFD computes for the node
    // (kfd_queue_acquire_buffers): the whole area and the control stack.
    let want = rocjitsu_kmd::cwsr::sizes(&GpuConfig::builtin(Target::Gfx942).gpus[0]);
    let save = vec![0u8; 4096];
    let mut cwsr = q;
    put64(&mut cwsr, 72, save.as_ptr() as u64);
    put32(&mut cwsr, 80, want.cwsr - 4096);
    put32(&mut cwsr, 84, want.ctl_stack);
    assert_eq!(d.ioctl(KFD, iowr(0x02, 88), &mut cwsr), Err(Errno::EINVAL));
    put32(&mut cwsr, 80, want.cwsr);
    put32(&mut cwsr, 84, want.ctl_stack + 4096);
    assert_eq!(d.ioctl(KFD, iowr(0x02, 88), &mut cwsr), Err(Errno::EINVAL));
    put32(&mut cwsr, 84, want.ctl_stack);
    d.ioctl(KFD, iowr(0x02, 88), &mut cwsr).unwrap();
    let mut dq = [0u8; 8];
    put32(&mut dq, 0, get32(&cwsr, 52));
    d.ioctl(KFD, iowr(0x03, 8), &mut dq).unwrap();
    d.ioctl(KFD, iowr(0x02, 88), &mut q).unwrap();
    let qid = get32(&q, 52);
    assert_eq!(get64(&q, 24) >> 62, 3, "doorbell mmap type");
    assert_eq!(d.queue_gpu(qid), Some(0));
    put32(&mut dq, 0, qid);
    d.ioctl(KFD, iowr(0x03, 8), &mut dq).unwrap();
    assert_eq!(d.ioctl(KFD, iowr(0x03, 8), &mut dq), Err(Errno::EINVAL));

    // An SDMA queue by engine id (type 4, ROCr 7 asks for it; the 96-byte
    // layout of KFD 1.17): an engine the GPU has, then one it has not.
    // Unknown types are refused (PM4 compute, type 0, is accepted: see
    // `a_pm4_compute_queue_runs_packets_and_raises_its_event`).
    let engines = {
        let q = &GpuConfig::builtin(Target::Gfx942).gpus[0].queues;
        q.sdma_engines + q.sdma_xgmi_engines
    };
    let mut q96 = [0u8; 96];
    q96[..88].copy_from_slice(&q);
    put32(&mut q96, 40, 4);
    put32(&mut q96, 88, engines - 1);
    d.ioctl(KFD, iowr(0x02, 96), &mut q96).unwrap();
    put32(&mut dq, 0, get32(&q96, 52));
    d.ioctl(KFD, iowr(0x03, 8), &mut dq).unwrap();
    put32(&mut q96, 88, engines);
    assert_eq!(d.ioctl(KFD, iowr(0x02, 96), &mut q96), Err(Errno::EINVAL));
    for t in [5, 6] {
        put32(&mut q96, 40, t);
        put32(&mut q96, 88, 0);
        assert_eq!(
            d.ioctl(KFD, iowr(0x02, 96), &mut q96),
            Err(Errno::EINVAL),
            "type {t}"
        );
    }
}

/// Regression: CREATE_EVENT answered an event-page offset of 0 for every
/// signal event after the first, so libhsakmt gave those events no mailbox
/// address, ROCr's signals carried none, and the GPU's completions raised no
/// interrupt (HIP programs waited forever in hipEventElapsedTime, and every
/// wait fell back to polling). KFD answers KFD_MMAP_TYPE_EVENTS for every
/// signal event and 0 for the other types.
#[test]
fn every_signal_event_gets_the_event_page_offset() {
    let (d, _) = driver();
    for (i, (kind, want)) in [(0, 2u64 << 62), (0, 2 << 62), (8, 0), (0, 2 << 62)]
        .into_iter()
        .enumerate()
    {
        let mut e = [0u8; 32];
        put32(&mut e, 12, kind);
        put32(&mut e, 16, 1);
        d.ioctl(KFD, iowr(0x08, 32), &mut e).unwrap();
        assert_eq!(
            get64(&e, 0),
            want,
            "event {i} (type {kind}): event_page_offset"
        );
        if kind == 0 {
            let id = get32(&e, 24);
            assert_ne!(id, 0, "signal event ids start at 1, as in KFD");
            assert_eq!(get32(&e, 28), id, "event_slot_index");
            assert_eq!(get32(&e, 8), id, "event_trigger_data");
        }
    }
}

/// WAIT_EVENTS with `last_event_age` (ROCr 6.x's libhsakmt): a signal
/// event that fired since the caller's age returns at once even when
/// another waiter consumed it, and the wait reports the current age.
#[test]
fn wait_events_honours_event_ages() {
    let (d, _) = driver();
    let mut e = [0u8; 32];
    put32(&mut e, 16, 1);
    d.ioctl(KFD, iowr(0x08, 32), &mut e).unwrap();
    let id = get32(&e, 24);
    let wait = |age: u64, timeout: u32| wait_event(&d, id, age, timeout);
    // Age 1 at creation: nothing fired yet.
    assert_eq!(wait(1, 0), (1, 1));
    let mut s = [0u8; 8];
    put32(&mut s, 0, id);
    d.ioctl(KFD, iow(0x0a, 8), &mut s).unwrap();
    // An age-less waiter consumes the (auto-reset) event...
    assert_eq!(wait(0, 0), (0, 0));
    assert_eq!(wait(0, 0).0, 1);
    // ...but a waiter that last saw age 1 still learns that it fired, and
    // gets age 2 back; with age 2 it waits.
    assert_eq!(wait(1, 0), (0, 2));
    assert_eq!(wait(2, 0), (1, 2));
}

/// Allocates `size` bytes of VRAM, maps it for the CPU (as the thunk does
/// through the render node) and for the GPU; returns its address, handle
/// and render-node mmap offset.
fn vram(d: &SimulatedDriver, gpu_id: u32, size: usize) -> (u64, u64, u64) {
    vram_at(d, gpu_id, reserve(size), size)
}

/// [`vram`] at `va`, an address range the caller holds.
fn vram_at(d: &SimulatedDriver, gpu_id: u32, va: u64, size: usize) -> (u64, u64, u64) {
    let mut a = vram_args(va, size as u64, gpu_id);
    d.ioctl(KFD, iowr(0x16, 40), &mut a).unwrap();
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
    let ids = [gpu_id];
    let mut m = [0u8; 24];
    put64(&mut m, 0, get64(&a, 16));
    put64(&mut m, 8, ids.as_ptr() as u64);
    put32(&mut m, 16, 1);
    d.ioctl(KFD, iowr(0x18, 24), &mut m).unwrap();
    assert_eq!(get32(&m, 20), 1, "mapped to one GPU");
    (va, get64(&a, 16), get64(&a, 24))
}

/// KFD runs a queue only while its percentage is above 0: a queue created
/// (or updated) with 0 holds its packets until UPDATE_QUEUE gives it a
/// percentage again.
#[test]
fn a_queue_at_zero_percent_is_suspended() {
    let (d, gpu_id) = driver();
    let (mem, _, _) = vram(&d, gpu_id, 1 << 16);
    let (ring, rptr, wptr, signal) = (mem, mem + 0x1000, mem + 0x1008, mem + 0x1040);
    let at = |addr: u64| addr as *mut u64;
    // SAFETY: all four lie in the mapping `vram` made; the CP reads them
    // atomically through its own mapping of the same pages.
    unsafe {
        std::ptr::write_volatile(at(signal), 1); // kind: user
        std::ptr::write_volatile(at(signal + 8), 1); // value
        // A barrier-AND with no dependencies and a completion signal.
        std::ptr::write_volatile(at(ring + 56), signal);
        std::ptr::write_volatile(at(ring), 3 | 1 << 8);
        std::ptr::write_volatile(at(wptr), 1);
    }
    let value = || {
        // SAFETY: as above.
        unsafe { std::ptr::read_volatile(at(signal + 8)) }
    };
    let mut q = [0u8; 88];
    put64(&mut q, 0, ring);
    put64(&mut q, 8, wptr);
    put64(&mut q, 16, rptr);
    put32(&mut q, 32, 4096);
    put32(&mut q, 36, gpu_id);
    put32(&mut q, 40, 2); // AQL
    put32(&mut q, 44, 0); // percentage
    d.ioctl(KFD, iowr(0x02, 88), &mut q).unwrap();
    let qid = get32(&q, 52);
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(value(), 1, "a queue at 0% ran a packet");
    let mut u = [0u8; 24];
    put64(&mut u, 0, ring);
    put32(&mut u, 8, qid);
    put32(&mut u, 12, 4096);
    put32(&mut u, 16, 100);
    d.ioctl(KFD, iow(0x07, 24), &mut u).unwrap();
    let t0 = std::time::Instant::now();
    while value() != 0 {
        assert!(
            t0.elapsed().as_secs() < 10,
            "the resumed queue never ran its packet"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// A PM4 compute queue (type 0) as a direct-to-KFD runtime drives one: the
/// ring, read and write pointers in VRAM, packets written, the 64-bit
/// write pointer (in dwords) stored and the doorbell rung; the CP writes
/// the data, then RELEASE_MEM writes the event's slot and raises the
/// interrupt with the event id as context id, which wakes WAIT_EVENTS.
#[test]
fn a_pm4_compute_queue_runs_packets_and_raises_its_event() {
    let (d, gpu_id) = driver();
    let (mem, _, _) = vram(&d, gpu_id, 1 << 16);
    let (ring, rptr, wptr, out) = (mem, mem + 0x1000, mem + 0x1008, mem + 0x1100);
    // The event page (KFD's 4096 slots of 8 bytes) and a signal event in it.
    let (page, page_handle, _) = vram(&d, gpu_id, 8 * 4096);
    let mut e = [0u8; 32];
    put64(&mut e, 0, page_handle);
    put32(&mut e, 16, 1); // auto-reset
    d.ioctl(KFD, iowr(0x08, 32), &mut e).unwrap();
    let id = get32(&e, 24);
    let slot = page + 8 * u64::from(id);
    let at32 = |a: u64| a as *mut u32;
    let at64 = |a: u64| a as *mut u64;
    // SAFETY: `slot`, `out`, the ring and the pointers lie in the mappings
    // `vram` made; the CP accesses the same pages through the driver's.
    let rd64 = |a: u64| unsafe { std::ptr::read_volatile(at64(a)) };
    // SAFETY: as above.
    let rd32 = |a: u64| unsafe { std::ptr::read_volatile(at32(a)) };
    assert_eq!(rd64(slot), u64::MAX, "the slot starts unsignaled");

    let mut q = [0u8; 88];
    put64(&mut q, 0, ring);
    put64(&mut q, 8, wptr);
    put64(&mut q, 16, rptr);
    put32(&mut q, 32, 4096);
    put32(&mut q, 36, gpu_id);
    put32(&mut q, 40, 0); // KFD_IOC_QUEUE_TYPE_COMPUTE
    put32(&mut q, 44, 100);
    d.ioctl(KFD, iowr(0x02, 88), &mut q).unwrap();
    // The doorbell page, as libhsakmt maps it.
    let bell = d.mmap(KFD, get64(&q, 24), 4096).unwrap();
    // SAFETY: a new shared mapping of the driver's doorbell memfd.
    let doorbell = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            bell.fd,
            bell.offset as libc::off_t,
        )
    };
    assert_ne!(doorbell, libc::MAP_FAILED);

    let pkt3 = |op: u32, body: &[u32]| {
        let mut p = vec![3 << 30 | (body.len() as u32 - 1) << 16 | op << 8];
        p.extend_from_slice(body);
        p
    };
    let (lo, hi) = (|a: u64| a as u32, |a: u64| (a >> 32) as u32);
    let mut words = pkt3(0x37, &[5 << 8 | 1 << 20, lo(out), hi(out), 0xabcd, 0x1234]);
    // RELEASE_MEM: 32-bit data (the event id) to the slot, interrupt after
    // the write is confirmed, context id = event id.
    words.extend(pkt3(
        0x49,
        &[
            0x14 | 5 << 8,
            1 << 29 | 2 << 24,
            lo(slot),
            hi(slot),
            id,
            0,
            id,
        ],
    ));
    for (i, w) in words.iter().enumerate() {
        // SAFETY: inside the ring.
        unsafe { std::ptr::write_volatile(at32(ring + 4 * i as u64), *w) };
    }
    let n = words.len() as u64;
    // SAFETY: the write pointer, then the doorbell (its first slot).
    unsafe {
        std::ptr::write_volatile(at64(wptr), n);
        std::ptr::write_volatile(doorbell as *mut u64, n);
    }

    assert_eq!(wait_event(&d, id, 0, 10_000).0, 0, "WAIT_EVENTS completes");
    assert_eq!((rd32(out), rd32(out + 4)), (0xabcd, 0x1234));
    // KFD resets the slot of the event it set; the read pointer (a 32-bit
    // ring dword offset) has passed both packets.
    assert_eq!(rd64(slot), u64::MAX);
    let t0 = std::time::Instant::now();
    while u64::from(rd32(rptr)) != n {
        assert!(t0.elapsed().as_secs() < 10, "read pointer {}", rd32(rptr));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // SAFETY: unmapping the doorbell mapping made above.
    unsafe { libc::munmap(doorbell, 4096) };
}

/// `AMDKFD_IOC_SVM` with `attrs` after the arguments: the request's size
/// field counts them, as libhsakmt encodes it.
fn svm(
    d: &SimulatedDriver,
    start: u64,
    size: u64,
    op: u32,
    attrs: &[(u32, u32)],
) -> Result<Vec<(u32, u32)>, Errno> {
    let mut a = vec![0u8; 24 + 8 * attrs.len()];
    put64(&mut a, 0, start);
    put64(&mut a, 8, size);
    put32(&mut a, 16, op);
    put32(&mut a, 20, attrs.len() as u32);
    for (i, (t, v)) in attrs.iter().enumerate() {
        put32(&mut a, 24 + 8 * i, *t);
        put32(&mut a, 28 + 8 * i, *v);
    }
    d.ioctl(KFD, iowr(0x20, a.len() as u64), &mut a)?;
    Ok((0..attrs.len())
        .map(|i| (get32(&a, 24 + 8 * i), get32(&a, 28 + 8 * i)))
        .collect())
}

#[test]
fn svm_ranges_through_the_ioctl() {
    use rocjitsu_kmd::svm::*;
    let (d, gpu_id) = driver();
    let size = 16 * 4096;
    // Anonymous memory, as hipMallocManaged's.
    // SAFETY: a fresh private mapping owned by the test.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    } as u64;
    let mut tlb = rocjitsu_gpu::mem::Tlb::default();
    // SAFETY: writing the test's own mapping.
    unsafe { *((p + 8) as *mut u32) = 7 };
    assert!(d.vm().read_u32(&mut tlb, p + 8).is_err(), "not SVM yet");
    svm(&d, p, size as u64, OP_SET_ATTR, &[(ATTR_ACCESS, gpu_id)]).unwrap();
    assert_eq!(d.vm().read_u32(&mut tlb, p + 8).unwrap(), 7);
    d.vm().write_u32(&mut tlb, p + 12, 9).unwrap();
    // SAFETY: reading the test's own mapping.
    assert_eq!(unsafe { *((p + 12) as *const u32) }, 9);
    // Prefetch half of it to the GPU; GET_ATTR answers per interval.
    svm(&d, p, 8 * 4096, OP_SET_ATTR, &[(ATTR_PREFETCH_LOC, gpu_id)]).unwrap();
    let got = svm(
        &d,
        p,
        size as u64,
        OP_GET_ATTR,
        &[
            (ATTR_PREFETCH_LOC, 0),
            (ATTR_ACCESS, gpu_id),
            (ATTR_PREFERRED_LOC, 0),
        ],
    )
    .unwrap();
    assert_eq!(
        got,
        [
            (ATTR_PREFETCH_LOC, LOCATION_UNDEFINED),
            (ATTR_ACCESS, gpu_id),
            (ATTR_PREFERRED_LOC, LOCATION_UNDEFINED)
        ]
    );
    let got = svm(&d, p, 8 * 4096, OP_GET_ATTR, &[(ATTR_PREFETCH_LOC, 0)]).unwrap();
    assert_eq!(got, [(ATTR_PREFETCH_LOC, gpu_id)]);

    // The kernel's errnos: unaligned, empty, a bad op, a GPU that is not
    // ours, attributes beyond the argument, memory the process has not
    // mapped, memory of a KFD allocation.
    assert_eq!(svm(&d, p + 1, 4096, OP_SET_ATTR, &[]), Err(Errno::EINVAL));
    assert_eq!(svm(&d, p, 0, OP_SET_ATTR, &[]), Err(Errno::EINVAL));
    // An unknown operation: KFD returns a positive 22 (no errno).
    let mut op = [0u8; 24];
    put64(&mut op, 0, p);
    put64(&mut op, 8, 4096);
    put32(&mut op, 16, 7);
    assert_eq!(d.ioctl(KFD, iowr(0x20, 24), &mut op), Ok(22));
    // Attributes are checked before the interval: a bad GPU in an
    // unmapped interval is EINVAL, not EFAULT.
    assert_eq!(
        svm(&d, 0x1000, 4096, OP_SET_ATTR, &[(ATTR_ACCESS, gpu_id ^ 1)]),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        svm(&d, p, 4096, OP_SET_ATTR, &[(ATTR_ACCESS, gpu_id ^ 1)]),
        Err(Errno::EINVAL)
    );
    let mut short = [0u8; 24];
    put64(&mut short, 0, p);
    put64(&mut short, 8, 4096);
    put32(&mut short, 20, 2);
    assert_eq!(d.ioctl(KFD, iowr(0x20, 24), &mut short), Err(Errno::EINVAL));
    let hole = reserve(2 * 4096);
    // SAFETY: unmapping the test's own reservation, leaving a hole.
    unsafe { libc::munmap(hole as *mut libc::c_void, 2 * 4096) };
    assert_eq!(svm(&d, hole, 4096, OP_SET_ATTR, &[]), Err(Errno::EFAULT));
    let (va, handle, _) = vram(&d, gpu_id, 1 << 16);
    assert_eq!(svm(&d, va, 4096, OP_SET_ATTR, &[]), Err(Errno::EADDRINUSE));
    let mut f = [0u8; 8];
    put64(&mut f, 0, handle);
    d.ioctl(KFD, iow(0x17, 8), &mut f).unwrap();

    // The process unmaps part of it (the preload tells the driver first):
    // the GPU faults there, the rest stays.
    d.host_unmapped(p + 4096, 4096);
    // SAFETY: unmapping a page of the test's own mapping.
    unsafe { libc::munmap((p + 4096) as *mut libc::c_void, 4096) };
    assert!(d.vm().read_u32(&mut tlb, p + 4096).is_err());
    assert_eq!(d.vm().read_u32(&mut tlb, p + 8).unwrap(), 7);
    assert!(d.vm().read_u32(&mut tlb, p + 2 * 4096).is_ok());
    // Asking about memory that is gone is EFAULT, as in KFD.
    assert_eq!(
        svm(&d, p + 4096, 4096, OP_GET_ATTR, &[(ATTR_ACCESS, gpu_id)]),
        Err(Errno::EFAULT)
    );
    d.host_unmapped(p, size as u64);
    // SAFETY: the rest of the test's mapping.
    unsafe { libc::munmap(p as *mut libc::c_void, size) };
    assert!(d.vm().read_u32(&mut tlb, p + 8).is_err());
}

/// Memory the process frees inside libc (free() of a large block unmaps it
/// without passing the preload's munmap) leaves its SVM range behind; when
/// the runtime later allocates VRAM at those addresses (found by the
/// rocPRIM suite: SDMA copies into the new buffer faulted), the range ends
/// as KFD's MMU notifier would have ended it, and the GPU reaches the
/// allocation across the old range's bounds.
#[test]
fn an_allocation_over_memory_the_process_unmapped_ends_its_svm_range() {
    use rocjitsu_kmd::svm::*;
    let (d, gpu_id) = driver();
    let page = 4096u64;
    let size = 8 * page as usize;
    let va = reserve(size);
    // SAFETY: making part of the test's own reservation ordinary memory.
    let p = unsafe {
        libc::mmap(
            (va + 2 * page) as *mut libc::c_void,
            4 * page as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
            -1,
            0,
        )
    } as u64;
    assert_eq!(p, va + 2 * page);
    svm(&d, p, 4 * page, OP_SET_ATTR, &[(ATTR_ACCESS, gpu_id)]).unwrap();
    // Gone behind the preload's back: the reservation takes it back.
    // SAFETY: remapping the test's own range.
    unsafe {
        libc::mmap(
            p as *mut libc::c_void,
            4 * page as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    let (va, handle, _) = vram_at(&d, gpu_id, va, size);
    let mut tlb = rocjitsu_gpu::mem::Tlb::default();
    // Eight bytes across the old range's end, and its last page.
    let end = p + 4 * page;
    d.vm()
        .write(&mut tlb, end - 4, &[1, 2, 3, 4, 5, 6, 7, 8])
        .unwrap();
    let mut got = [0u8; 8];
    d.vm().read(&mut tlb, end - 4, &mut got).unwrap();
    assert_eq!(got, [1, 2, 3, 4, 5, 6, 7, 8]);
    // SAFETY: reading the allocation's host mapping (the test's own).
    let host = unsafe { *((end - 4) as *const u32) };
    assert_eq!(host, u32::from_le_bytes([1, 2, 3, 4]));
    assert_eq!(
        svm(&d, p, page, OP_GET_ATTR, &[(ATTR_ACCESS, gpu_id)]),
        Err(Errno::EADDRINUSE),
        "the addresses are the allocation's now"
    );
    let mut f = [0u8; 8];
    put64(&mut f, 0, handle);
    d.ioctl(KFD, iow(0x17, 8), &mut f).unwrap();
    assert!(d.vm().read_u32(&mut tlb, va).is_err(), "freed");
}

/// With XNACK on (SET_XNACK_MODE 1, as ROCr does under HSA_XNACK=1) the GPU
/// reaches any readable memory of the process, as recoverable page faults
/// let it on the hardware: plain anonymous memory never registered, at its
/// own address; read-only memory stays read-only; unmapped memory faults.
/// With XNACK off the same access faults.
#[test]
fn xnack_on_resolves_gpu_faults_on_process_memory() {
    let (d, _) = driver();
    let page = 4096usize;
    let map = |prot| {
        // SAFETY: a fresh private mapping owned by the test.
        unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4 * page,
                prot,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            ) as u64
        }
    };
    let rw = map(libc::PROT_READ | libc::PROT_WRITE);
    let ro = map(libc::PROT_READ);
    let none = map(libc::PROT_NONE);
    // SAFETY: writing the test's own mapping.
    unsafe { *((rw + 100) as *mut u32) = 41 };
    let mut tlb = rocjitsu_gpu::mem::Tlb::default();
    assert!(d.vm().read_u32(&mut tlb, rw + 100).is_err(), "XNACK off");
    let mut x = [0u8; 4];
    put32(&mut x, 0, 1);
    d.ioctl(KFD, iowr(0x21, 4), &mut x).unwrap();
    put32(&mut x, 0, u32::MAX); // -1 asks
    d.ioctl(KFD, iowr(0x21, 4), &mut x).unwrap();
    assert_eq!(get32(&x, 0), 1);
    assert_eq!(d.vm().read_u32(&mut tlb, rw + 100).unwrap(), 41);
    d.vm().write_u32(&mut tlb, rw + 3 * page as u64, 7).unwrap();
    // SAFETY: reading the test's own mapping.
    assert_eq!(unsafe { *((rw + 3 * page as u64) as *const u32) }, 7);
    assert_eq!(d.vm().read_u32(&mut tlb, ro + 8).unwrap(), 0);
    assert!(d.vm().write_u32(&mut tlb, ro + 8, 1).is_err(), "read-only");
    assert!(d.vm().read_u32(&mut tlb, none).is_err(), "PROT_NONE");
    // The process unmaps it: the GPU faults there again.
    d.host_unmapped(rw, 4 * page as u64);
    // SAFETY: the test's own mappings.
    unsafe {
        libc::munmap(rw as *mut libc::c_void, 4 * page);
        libc::munmap(ro as *mut libc::c_void, 4 * page);
        libc::munmap(none as *mut libc::c_void, 4 * page);
    }
    assert!(d.vm().read_u32(&mut tlb, rw + 100).is_err());
}

/// gfx908 has no per-process XNACK mode (KFD's `kfd_process_xnack_mode`
/// with amdgpu's default `noretry`): asking reads off, turning it on is
/// EPERM, turning it off succeeds.
#[test]
fn xnack_cannot_be_turned_on_on_gfx908() {
    let dir = std::env::temp_dir().join(format!("rocjitsu-kmd-xnack-{}", std::process::id()));
    let d = SimulatedDriver::new(DriverOptions {
        config: GpuConfig::builtin(Target::Gfx908),
        runtime_dir: dir,
        threads: 1,
        watchdog: None,
    })
    .unwrap();
    let mut x = [0u8; 4];
    put32(&mut x, 0, u32::MAX); // -1 asks
    d.ioctl(KFD, iowr(0x21, 4), &mut x).unwrap();
    assert_eq!(get32(&x, 0), 0);
    put32(&mut x, 0, 1);
    assert_eq!(d.ioctl(KFD, iowr(0x21, 4), &mut x), Err(Errno::EPERM));
    put32(&mut x, 0, 0);
    d.ioctl(KFD, iowr(0x21, 4), &mut x).unwrap();
}

#[test]
fn a_configured_plugin_that_does_not_exist_is_named() {
    let mut config = GpuConfig::builtin(Target::Gfx942);
    config.plugins = vec![rocjitsu_config::PluginConfig {
        name: "nosuch".into(),
        options: Default::default(),
        require: true,
    }];
    let dir = std::env::temp_dir().join(format!("rocjitsu-kmd-plugin-{}", std::process::id()));
    let opts = |config| DriverOptions {
        config,
        runtime_dir: dir.clone(),
        threads: 1,
        watchdog: None,
    };
    let e = SimulatedDriver::new(opts(config.clone()))
        .err()
        .expect("an unknown required plugin fails");
    assert!(
        e.contains("`nosuch`") && e.contains("available: metrics,") && e.contains("trace"),
        "{e}"
    );
    // Not required: the driver starts without it.
    config.plugins[0].require = false;
    assert!(SimulatedDriver::new(opts(config)).is_ok());
}

/// A DRM request number (`DRM_IOWR`) on the render node.
fn drm_iowr(nr: u64, size: u64) -> u64 {
    (3 << 30) | (size << 16) | (u64::from(b'd') << 8) | nr
}

const RENDER: DeviceFile = DeviceFile::Render { gpu: 0, minor: 128 };

/// EXPORT_DMABUF, GET_DMABUF_INFO and IMPORT_DMABUF as KFD answers them,
/// and the GEM handles libdrm takes of a dma-buf on the render node
/// (PRIME_FD_TO_HANDLE, AMDGPU_GEM_METADATA, AMDGPU_GEM_OP, GEM_CLOSE):
/// the descriptor maps the allocation's bytes, the import reaches the same
/// memory from the GPU, and bad arguments get the kernel's errnos.
#[test]
fn dmabuf_export_import_and_gem_handles() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let (d, gpu_id) = driver();
    let size = 1 << 20;
    let (va, handle, _) = vram(&d, gpu_id, size);
    // SAFETY: `va` is mapped read-write by `vram`.
    unsafe { *((va + 128) as *mut u32) = 0xfeed_beef };

    let export = |h: u64, flags: u32| {
        let mut e = [0u8; 16];
        put64(&mut e, 0, h);
        put32(&mut e, 8, flags);
        d.ioctl(KFD, iowr(0x24, 16), &mut e)
            .map(|_| get32(&e, 12) as i32)
    };
    let fd = export(handle, libc::O_CLOEXEC as u32).unwrap();
    // SAFETY: the descriptor the driver just installed, ours to close.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: querying a descriptor flag.
    assert_eq!(unsafe { libc::fcntl(fd, libc::F_GETFD) }, libc::FD_CLOEXEC);
    // The descriptor maps the allocation's bytes.
    // SAFETY: mapping the descriptor read-only, then reading it.
    let seen = unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        let v = *((p as u64 + 128) as *const u32);
        libc::munmap(p, 4096);
        v
    };
    assert_eq!(seen, 0xfeed_beef);
    // Unknown handle, handle on an unknown GPU: EINVAL.
    assert_eq!(export(handle + 1000, 0), Err(Errno::EINVAL));
    assert_eq!(export(handle & 0xffff_ffff, 0), Err(Errno::EINVAL));

    let info = |n: i32| {
        let mut g = [0u8; 32];
        put32(&mut g, 28, n as u32);
        d.ioctl(KFD, iowr(0x1c, 32), &mut g).map(|_| g)
    };
    let g = info(fd).unwrap();
    assert_eq!(get64(&g, 0), size as u64);
    assert_eq!(get32(&g, 20), gpu_id);
    assert_eq!(get32(&g, 24), 1 | 1 << 29, "VRAM | PUBLIC");
    assert_eq!(get32(&g, 16), 0, "no metadata");
    // A file that is not a dma-buf: EINVAL; a number naming no file: EBADF.
    let status = std::fs::File::open("/proc/self/status").unwrap();
    use std::os::fd::AsRawFd;
    assert_eq!(info(status.as_raw_fd()).err(), Some(Errno::EINVAL));
    assert_eq!(info(1 << 20).err(), Some(Errno(libc::EBADF)));

    // Import at another address: the GPU reaches the same bytes there.
    let va2 = reserve(size);
    let mut im = [0u8; 24];
    put64(&mut im, 0, va2);
    put32(&mut im, 16, gpu_id);
    put32(&mut im, 20, fd as u32);
    d.ioctl(KFD, iowr(0x1d, 24), &mut im).unwrap();
    let h2 = get64(&im, 8);
    assert_eq!(h2 >> 32, u64::from(gpu_id));
    let ids = [gpu_id];
    let mut m = [0u8; 24];
    put64(&mut m, 0, h2);
    put64(&mut m, 8, ids.as_ptr() as u64);
    put32(&mut m, 16, 1);
    d.ioctl(KFD, iowr(0x18, 24), &mut m).unwrap();
    let mut tlb = rocjitsu_gpu::mem::Tlb::default();
    assert_eq!(d.vm().read_u32(&mut tlb, va2 + 128).unwrap(), 0xfeed_beef);
    // On a GPU that does not exist: EINVAL.
    put32(&mut im, 16, gpu_id ^ 0xffff);
    assert_eq!(d.ioctl(KFD, iowr(0x1d, 24), &mut im), Err(Errno::EINVAL));

    // GEM handles of the dma-buf: the same one each time, from 1.
    let prime = |n: i32| {
        let mut p = [0u8; 12];
        put32(&mut p, 8, n as u32);
        d.ioctl(RENDER, drm_iowr(0x2e, 12), &mut p)
            .map(|_| get32(&p, 0))
    };
    assert_eq!(prime(fd), Ok(1));
    assert_eq!(prime(fd), Ok(1));
    assert_eq!(prime(status.as_raw_fd()), Err(Errno::EINVAL));
    assert_eq!(prime(1 << 20), Err(Errno(libc::EBADF)));
    // Metadata set on the handle is the buffer's.
    let mut md = vec![0u8; 288];
    put32(&mut md, 0, 1);
    put32(&mut md, 4, 1); // SET
    put64(&mut md, 16, 0x77);
    put32(&mut md, 24, 4);
    put32(&mut md, 28, 0x1234);
    d.ioctl(RENDER, drm_iowr(0x46, 288), &mut md).unwrap();
    let mut get = vec![0u8; 288];
    put32(&mut get, 0, 1);
    put32(&mut get, 4, 2); // GET
    d.ioctl(RENDER, drm_iowr(0x46, 288), &mut get).unwrap();
    assert_eq!(
        (get32(&get, 24), get32(&get, 28), get64(&get, 16)),
        (4, 0x1234, 0x77)
    );
    // Too much data, an unknown op: EINVAL.
    put32(&mut md, 24, 257);
    assert_eq!(
        d.ioctl(RENDER, drm_iowr(0x46, 288), &mut md),
        Err(Errno::EINVAL)
    );
    put32(&mut md, 4, 3);
    put32(&mut md, 24, 4);
    assert_eq!(
        d.ioctl(RENDER, drm_iowr(0x46, 288), &mut md),
        Err(Errno::EINVAL)
    );
    // The buffer's creation info.
    let mut create = [0u8; 32];
    let mut op = [0u8; 16];
    put32(&mut op, 0, 1);
    put64(&mut op, 8, create.as_mut_ptr() as u64);
    d.ioctl(RENDER, drm_iowr(0x50, 16), &mut op).unwrap();
    assert_eq!(get64(&create, 0), size as u64);
    assert_eq!(get64(&create, 16), 4, "VRAM domain");
    assert_eq!(get64(&create, 24) & 1, 1, "CPU access required");
    // Closed, the handle is gone: GEM_CLOSE again is EINVAL, other calls
    // ENOENT.
    let mut c = [0u8; 8];
    put32(&mut c, 0, 1);
    d.ioctl(RENDER, drm_iowr(0x09, 8), &mut c).unwrap();
    assert_eq!(
        d.ioctl(RENDER, drm_iowr(0x09, 8), &mut c),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        d.ioctl(RENDER, drm_iowr(0x46, 288), &mut get),
        Err(Errno::ENOENT)
    );
    assert_eq!(
        d.ioctl(RENDER, drm_iowr(0x50, 16), &mut op),
        Err(Errno::ENOENT)
    );

    // Freed by both holders, the memory can no longer be imported.
    for h in [h2, handle] {
        let mut f = [0u8; 8];
        put64(&mut f, 0, h);
        d.ioctl(KFD, iow(0x17, 8), &mut f).unwrap();
    }
    assert_eq!(info(fd).err(), Some(Errno::EINVAL));
    drop(owned);

    // A userptr allocation cannot be exported (EPERM).
    let page = reserve(4096);
    // SAFETY: making the test's own reservation usable memory.
    unsafe {
        libc::mprotect(
            page as *mut libc::c_void,
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
        )
    };
    let mut u = [0u8; 40];
    put64(&mut u, 0, page);
    put64(&mut u, 8, 4096);
    put64(&mut u, 24, page);
    put32(&mut u, 32, gpu_id);
    put32(&mut u, 36, 4 | 1 << 31);
    d.ioctl(KFD, iowr(0x16, 40), &mut u).unwrap();
    assert_eq!(export(get64(&u, 16), 0), Err(Errno::EPERM));
    // SAFETY: releasing the test's reservations.
    unsafe {
        libc::munmap(va as *mut libc::c_void, size);
        libc::munmap(va2 as *mut libc::c_void, size);
    }
}

/// An AQL queue for the queue-error tests: its ring, an `amd_queue_t` whose
/// `read_dispatch_id` and `write_dispatch_id` are the queue's pointers,
/// and an interrupt signal at `queue_inactive_signal` (kind user, value 0,
/// mailbox `mailbox` with event `event`).
struct ErrQueue {
    ring: u64,
    amd_queue: u64,
    inactive: u64,
}

impl ErrQueue {
    fn new(mem: u64, mailbox: u64, event: u32) -> ErrQueue {
        let q = ErrQueue {
            ring: mem,
            amd_queue: mem + 0x1000,
            inactive: mem + 0x2000,
        };
        // SAFETY: all inside the caller's VRAM mapping of 64 KiB at `mem`.
        unsafe {
            std::ptr::write_volatile((q.amd_queue + 0xc0) as *mut u64, q.inactive);
            std::ptr::write_volatile(q.inactive as *mut u64, 1);
            std::ptr::write_volatile((q.inactive + 16) as *mut u64, mailbox);
            std::ptr::write_volatile((q.inactive + 24) as *mut u32, event);
        }
        q
    }

    /// CREATE_QUEUE arguments (KFD 1.17 layout) for it.
    fn args(&self, gpu_id: u32, ctx_save: u64, spec: &rocjitsu_config::GpuSpec) -> [u8; 96] {
        let mut a = [0u8; 96];
        put64(&mut a, 0, self.ring);
        put64(&mut a, 8, self.amd_queue + 56);
        put64(&mut a, 16, self.amd_queue + 128);
        put32(&mut a, 32, 4096);
        put32(&mut a, 36, gpu_id);
        put32(&mut a, 40, 2); // AQL
        put32(&mut a, 44, 100);
        if ctx_save != 0 {
            let s = rocjitsu_kmd::cwsr::sizes(spec);
            put64(&mut a, 72, ctx_save);
            put32(&mut a, 80, s.cwsr);
            put32(&mut a, 84, s.ctl_stack);
        }
        a
    }

    /// Writes packet 0 with header `header` and stores the write index.
    fn submit(&self, header: u16) {
        // SAFETY: the ring and amd_queue_t lie in the caller's mapping.
        unsafe {
            std::ptr::write_volatile(self.ring as *mut u16, header);
            std::ptr::write_volatile((self.amd_queue + 56) as *mut u64, 1);
        }
    }

    fn inactive_value(&self) -> u64 {
        // SAFETY: as in `new`.
        unsafe { std::ptr::read_volatile((self.inactive + 8) as *const u64) }
    }
}

/// A signal event in an event page of its own: (id, its slot's address).
fn signal_event(d: &SimulatedDriver, gpu_id: u32) -> (u32, u64) {
    let (page, page_handle, _) = vram(d, gpu_id, 8 * 4096);
    let mut e = [0u8; 32];
    put64(&mut e, 0, page_handle);
    put32(&mut e, 16, 1); // auto-reset
    d.ioctl(KFD, iowr(0x08, 32), &mut e).unwrap();
    let id = get32(&e, 24);
    (id, page + 8 * u64::from(id))
}

/// With the runtime enabled (`AMDKFD_IOC_RUNTIME_ENABLE`, as ROCr 6 and 7
/// call it when the node's firmware supports debugging), a packet the CP
/// refuses reaches the runtime as KFD sends it: `KFD_EC_MASK(ec)` ORed into
/// the u64 the queue's context save area header names (`err_payload_addr`)
/// and the header's `err_event_id` set. The CP also stores the old error
/// code (32, invalid packet format) into the queue's inactive signal.
/// Enabling twice is EBUSY, as in KFD.
#[test]
fn with_the_runtime_enabled_a_refused_packet_goes_to_the_error_payload() {
    let (d, gpu_id) = driver();
    let spec = GpuConfig::builtin(Target::Gfx942).gpus[0].clone();
    let mut r = [0u8; 16];
    put32(&mut r, 8, 1); // KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK
    assert!(!d.runtime_enabled());
    d.ioctl(KFD, iowr(0x25, 16), &mut r).unwrap();
    assert!(d.runtime_enabled());
    assert_eq!(get32(&r, 12), 0, "no capabilities");
    assert_eq!(d.ioctl(KFD, iowr(0x25, 16), &mut r), Err(Errno::EBUSY));

    let (mem, _, _) = vram(&d, gpu_id, 1 << 16);
    let (ev, _) = signal_event(&d, gpu_id);
    let q = ErrQueue::new(mem, 0, 0);
    let payload = mem + 0x3000;
    let ctx_size = rocjitsu_kmd::cwsr::sizes(&spec).cwsr as usize;
    let (ctx, _, _) = vram(&d, gpu_id, ctx_size.next_multiple_of(1 << 16));
    // SAFETY: the header lies in the mapping `vram` made; libhsakmt's
    // fill_cwsr_header writes these fields.
    unsafe {
        std::ptr::write_volatile(payload as *mut u64, 1 << 40);
        std::ptr::write_volatile((ctx + 24) as *mut u64, payload);
        std::ptr::write_volatile((ctx + 32) as *mut u32, ev);
    }
    let mut a = q.args(gpu_id, ctx, &spec);
    d.ioctl(KFD, iowr(0x02, 96), &mut a).unwrap();
    q.submit(4 | 1 << 8); // an agent dispatch packet
    assert_eq!(wait_event(&d, ev, 0, 10_000).0, 0, "err_event_id is set");
    // SAFETY: as above.
    let got = unsafe { std::ptr::read_volatile(payload as *const u64) };
    assert_eq!(
        got,
        1 << 40 | 1 << 19,
        "EC_QUEUE_PACKET_UNSUPPORTED ORed in"
    );
    assert_eq!(q.inactive_value(), 32);

    put32(&mut r, 8, 0);
    d.ioctl(KFD, iowr(0x25, 16), &mut r).unwrap();
    assert!(!d.runtime_enabled(), "disabled");
}

/// Without the runtime enabled (ROCm 5's thunk never enables it), a packet
/// the CP refuses reaches the runtime only through the queue's inactive
/// signal: the error code ROCr decodes (2, invalid dimensions) swapped in,
/// the signal's event id written to its mailbox and the event raised.
#[test]
fn without_the_runtime_a_refused_packet_goes_to_the_inactive_signal() {
    let (d, gpu_id) = driver();
    let spec = GpuConfig::builtin(Target::Gfx942).gpus[0].clone();
    let (mem, _, _) = vram(&d, gpu_id, 1 << 16);
    let (ev, slot) = signal_event(&d, gpu_id);
    let q = ErrQueue::new(mem, slot, ev);
    let mut a = q.args(gpu_id, 0, &spec);
    d.ioctl(KFD, iowr(0x02, 96), &mut a).unwrap();
    q.submit(2 | 1 << 8); // a kernel dispatch of 0 dimensions
    assert_eq!(wait_event(&d, ev, 0, 10_000).0, 0, "the signal's event");
    assert_eq!(q.inactive_value(), 2);
}
