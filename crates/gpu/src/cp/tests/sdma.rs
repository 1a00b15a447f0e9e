//! SDMA queues: every packet kind ROCr's BlitSdma writes, plus ring
//! wrap-around, waits and faults. Packets are built from the field layouts
//! of ROCr's `sdma_registers.h`.

use super::*;

/// An SDMA queue: the ring, then the read pointer, write pointer and
/// doorbell (64-bit byte offsets) in one block.
struct SdmaQueue {
    id: u32,
    ring: u64,
    size: u64,
    ptrs: u64,
}

impl SdmaQueue {
    fn new(vm: &Vm, cp: &TestCp, size: u64) -> SdmaQueue {
        let ring = vm.alloc(size, Perms::RW);
        let ptrs = vm.alloc(64, Perms::RW);
        let id = cp
            .create_queue(QueueDesc {
                kind: QueueKind::Sdma,
                gpu: 0,
                ring_base: ring,
                ring_size: size,
                read_ptr: ptrs,
                write_ptr: ptrs + 8,
                doorbell: ptrs + 16,
                priority: 0,
            })
            .unwrap();
        SdmaQueue {
            id,
            ring,
            size,
            ptrs,
        }
    }

    fn rptr(&self, vm: &Vm) -> u64 {
        rd64(vm, self.ptrs)
    }

    /// Writes a packet at the write pointer (wrapping at the ring's end),
    /// then updates the write pointer and the doorbell as BlitSdma does.
    /// Waits for room first.
    fn submit(&self, vm: &Vm, cp: &CommandProcessor, pkt: &[u32]) {
        let w = rd64(vm, self.ptrs + 8);
        let need = 4 * pkt.len() as u64;
        assert!(wait_until(10.0, || w + need - self.rptr(vm) < self.size));
        for (i, d) in pkt.iter().enumerate() {
            let off = (w + 4 * i as u64) % self.size;
            vm.fill(self.ring + off, &d.to_le_bytes()).unwrap();
        }
        wr64(vm, self.ptrs + 8, w + need);
        wr64(vm, self.ptrs + 16, w + need);
        cp.kick();
    }

    fn drained(&self, vm: &Vm) -> bool {
        self.rptr(vm) == rd64(vm, self.ptrs + 8)
    }
}

fn lo(a: u64) -> u32 {
    a as u32
}

fn hi(a: u64) -> u32 {
    (a >> 32) as u32
}

fn copy(src: u64, dst: u64, n: u32) -> Vec<u32> {
    vec![1, n - 1, 0, lo(src), hi(src), lo(dst), hi(dst)]
}

fn fence(a: u64, v: u32) -> Vec<u32> {
    vec![5, lo(a), hi(a), v]
}

fn atomic(op: u32, a: u64, src: u64, cmp: u64, looped: bool) -> Vec<u32> {
    let h = 10 | op << 25 | u32::from(looped) << 16;
    vec![h, lo(a), hi(a), lo(src), hi(src), lo(cmp), hi(cmp), 0]
}

fn poll_mem(a: u64, reference: u32, mask: u32, func: u32) -> Vec<u32> {
    vec![
        8 | func << 28 | 1 << 31,
        lo(a),
        hi(a),
        reference,
        mask,
        4 | 0xfff << 16,
    ]
}

fn bytes(vm: &Vm, a: u64, n: u64) -> Vec<u8> {
    vm.read_vec(a, n).unwrap()
}

#[test]
fn every_packet_kind_in_order() {
    let (vm, host, cp) = setup(None);
    let q = SdmaQueue::new(&vm, &cp, 4096);
    // COPY LINEAR of an odd size.
    let n = 10007u64;
    let (src, dst) = (vm.alloc(n, Perms::RW), vm.alloc(n + 16, Perms::RW));
    let data: Vec<u8> = (0..n).map(|i| (i * 7 + i / 256) as u8).collect();
    vm.fill(src, &data).unwrap();
    q.submit(&vm, &cp, &copy(src, dst, n as u32));
    // CONST_FILL of 37 dwords (count as ROCr writes it: (dwords - 1) * 4).
    let fill = vm.alloc(4 * 40, Perms::RW);
    q.submit(
        &vm,
        &cp,
        &[11 | 2 << 30, lo(fill), hi(fill), 0x1234_5678, 36 * 4],
    );
    // WRITE LINEAR (untiled) of 3 dwords.
    let wbuf = vm.alloc(64, Perms::RW);
    q.submit(&vm, &cp, &[2, lo(wbuf), hi(wbuf), 2, 11, 22, 33]);
    // NOP with two dwords of payload, then the HDP flush (a register poll).
    q.submit(&vm, &cp, &[2 << 16, 0xffff_ffff, 0xffff_ffff]);
    q.submit(&vm, &cp, &[0x8, 0x0, 0x8000_0000, 0x0, 0x0, 0x0]);
    // GET_GLOBAL timestamps around a SET/GET of the local counter.
    let ts = vm.alloc(64, Perms::RW);
    q.submit(&vm, &cp, &[13 | 2 << 8, lo(ts), hi(ts)]);
    q.submit(&vm, &cp, &[13, 5000, 0]);
    q.submit(&vm, &cp, &[13 | 1 << 8, lo(ts + 8), hi(ts + 8)]);
    q.submit(&vm, &cp, &[13 | 2 << 8, lo(ts + 16), hi(ts + 16)]);
    // ATOMIC: ROCr's signal decrement (ADD64 of -1), a 32-bit compare-swap
    // that fails and one that succeeds, a 32-bit signed min, a 64-bit inc.
    let sig = signal(&vm, 5, None);
    q.submit(&vm, &cp, &atomic(47, sig + 8, u64::MAX, 0, false));
    let at = vm.alloc(64, Perms::RW);
    wr32(&vm, at, 10);
    q.submit(&vm, &cp, &atomic(0x48, at, 99, 11, false));
    wr32(&vm, at + 4, 10);
    q.submit(&vm, &cp, &atomic(0x08, at + 4, 99, 10, false));
    wr32(&vm, at + 8, 5);
    q.submit(
        &vm,
        &cp,
        &atomic(0x11, at + 8, (-3i32) as u32 as u64, 0, false),
    );
    wr64(&vm, at + 16, 7);
    q.submit(&vm, &cp, &atomic(0x38, at + 16, 100, 0, false));
    // GCR_REQ (SDMA v6, gfx11): a cache write-back/invalidate of a range,
    // nothing to do without caches; the packets behind it run.
    q.submit(&vm, &cp, &[17 | 1 << 8, 0x80, 0x0001_0000, 0x100, 0]);
    // The mailbox FENCE and TRAP ROCr ends an interrupt signal's
    // submission with.
    let mailbox = vm.alloc(8, Perms::RW);
    q.submit(&vm, &cp, &fence(mailbox, 9));
    q.submit(&vm, &cp, &[6, 9]);
    assert!(wait_until(10.0, || q.drained(&vm)));

    assert_eq!(bytes(&vm, dst, n), data);
    assert_eq!(
        bytes(&vm, dst + n, 16),
        vec![0; 16],
        "no byte past the copy"
    );
    let f = bytes(&vm, fill, 160);
    for i in 0..40 {
        let w = u32::from_le_bytes(f[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(w, if i < 37 { 0x1234_5678 } else { 0 }, "fill dword {i}");
    }
    assert_eq!(
        (rd32(&vm, wbuf), rd32(&vm, wbuf + 8), rd32(&vm, wbuf + 12)),
        (11, 33, 0)
    );
    let (t0, local, t1) = (rd64(&vm, ts), rd64(&vm, ts + 8), rd64(&vm, ts + 16));
    assert!(t0 >= 100 && t1 > t0, "global timestamps {t0} {t1}");
    // SET made the local counter 5000 at some clock c (t0 < c < t1); GET at
    // a later clock reads 5000 plus the ticks since.
    assert!(local > 5000 && local < 5000 + (t1 - t0), "local {local}");
    assert_eq!(rd64(&vm, sig + 8), 4);
    assert_eq!(rd32(&vm, at), 10, "compare failed: unchanged");
    assert_eq!(rd32(&vm, at + 4), 99);
    assert_eq!(rd32(&vm, at + 8) as i32, -3);
    assert_eq!(rd64(&vm, at + 16), 8);
    assert_eq!(rd32(&vm, mailbox), 9);
    assert_eq!(host.events(), vec![9]);
    assert!(host.faults().is_empty(), "{:?}", host.faults());
}

#[test]
fn poll_waits_for_memory_and_later_packets_wait_behind_it() {
    let (vm, _host, cp) = setup(None);
    let q = SdmaQueue::new(&vm, &cp, 1024);
    let (flag, out) = (vm.alloc(8, Perms::RW), vm.alloc(8, Perms::RW));
    wr32(&vm, flag, 0x100);
    // Wait until (flag & 0xff) == 3, as ROCr waits on a dependent signal.
    q.submit(&vm, &cp, &poll_mem(flag, 3, 0xff, 3));
    q.submit(&vm, &cp, &fence(out, 42));
    std::thread::sleep(Duration::from_millis(40));
    assert_eq!(rd32(&vm, out), 0);
    wr32(&vm, flag, 0x203);
    assert!(wait_until(10.0, || rd32(&vm, out) == 42));
    // A compare-swap loop retries until the compare holds.
    let word = vm.alloc(8, Perms::RW);
    wr64(&vm, word, 1);
    q.submit(&vm, &cp, &atomic(0x28, word, 77, 2, true));
    q.submit(&vm, &cp, &fence(out, 43));
    std::thread::sleep(Duration::from_millis(40));
    assert_eq!((rd64(&vm, word), rd32(&vm, out)), (1, 42));
    wr64(&vm, word, 2);
    assert!(wait_until(10.0, || rd32(&vm, out) == 43));
    assert_eq!(rd64(&vm, word), 77);
}

#[test]
fn packets_straddling_the_ring_end_wrap_around() {
    let (vm, host, cp) = setup(None);
    // 7-dword copies in a 256-byte ring: the 10th packet straddles the end.
    let q = SdmaQueue::new(&vm, &cp, 256);
    let src = vm.alloc(4096, Perms::RW);
    let dst = vm.alloc(4096, Perms::RW);
    let data: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    vm.fill(src, &data).unwrap();
    for i in 0..30u64 {
        q.submit(&vm, &cp, &copy(src + 100 * i, dst + 100 * i, 100));
    }
    assert!(wait_until(10.0, || q.drained(&vm)));
    assert_eq!(q.rptr(&vm), 30 * 28);
    assert_eq!(bytes(&vm, dst, 3000), data[..3000].to_vec());
    assert!(host.faults().is_empty(), "{:?}", host.faults());
}

#[test]
fn copy_rect_moves_a_window() {
    let (vm, _host, cp) = setup(None);
    let q = SdmaQueue::new(&vm, &cp, 1024);
    // 4-byte elements (element = 2): source rows of 8 elements, 2 slices
    // of 6 rows; window of 3 x 4 x 2 elements at (1, 2, 0) to a
    // destination of 5-element rows and 7-row slices at (0, 1, 1).
    let (spitch, sslice, dpitch, dslice) = (8u64, 48u64, 5u64, 35u64);
    let src = vm.alloc(4 * 96, Perms::RW);
    let dst = vm.alloc(4 * 128, Perms::RW);
    let data: Vec<u8> = (0..96u32).flat_map(|i| (i + 1).to_le_bytes()).collect();
    vm.fill(src, &data).unwrap();
    let pkt = [
        1 | 4 << 8 | 2 << 29,
        lo(src),
        hi(src),
        1 | 2 << 16,
        (spitch as u32 - 1) << 13,
        sslice as u32 - 1,
        lo(dst),
        hi(dst),
        1 << 16,
        1 | (dpitch as u32 - 1) << 13,
        dslice as u32 - 1,
        2 | 3 << 16,
        1,
    ];
    q.submit(&vm, &cp, &pkt);
    assert!(wait_until(10.0, || q.drained(&vm)));
    let mut want = vec![0u32; 128];
    for z in 0..2u64 {
        for y in 0..4u64 {
            for x in 0..3u64 {
                let s = (1 + x) + (2 + y) * spitch + z * sslice;
                let d = x + (1 + y) * dpitch + (1 + z) * dslice;
                want[d as usize] = s as u32 + 1;
            }
        }
    }
    let got: Vec<u32> = bytes(&vm, dst, 512)
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn bad_packets_and_addresses_fault_and_stop_the_queue() {
    let (vm, host, cp) = setup(Some(Duration::from_millis(150)));
    let q = SdmaQueue::new(&vm, &cp, 1024);
    let out = vm.alloc(8, Perms::RW);
    q.submit(&vm, &cp, &[0x3f]);
    q.submit(&vm, &cp, &fence(out, 1));
    assert!(wait_until(10.0, || !host.faults().is_empty()));
    let f = host.faults()[0].1.clone();
    assert!(f.report.contains("opcode 63"), "{}", f.report);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(rd32(&vm, out), 0, "the queue stopped");

    // A copy from an unmapped address reports it.
    let q2 = SdmaQueue::new(&vm, &cp, 1024);
    q2.submit(&vm, &cp, &copy(0x2000, out, 8));
    assert!(wait_until(10.0, || host.faults().len() == 2));
    let f = host.faults()[1].1.clone();
    assert_eq!((f.addr, f.write, f.hang), (0x2000, false, false));
    assert!(f.report.contains("COPY"), "{}", f.report);

    // A poll that never holds is stopped by the watchdog.
    let q3 = SdmaQueue::new(&vm, &cp, 1024);
    q3.submit(&vm, &cp, &poll_mem(out, 1, 0xffff_ffff, 3));
    assert!(wait_until(10.0, || host.faults().len() == 3));
    let f = host.faults()[2].1.clone();
    assert!(f.hang && f.report.contains("POLL_REGMEM"), "{}", f.report);
    for id in [q.id, q2.id, q3.id] {
        cp.destroy_queue(id).unwrap();
    }
}

/// INDIRECT_BUFFER: the buffer's packets run in order (a COND_EXE whose
/// dword differs from its reference skips the next packet, in the buffer
/// and on the ring), then the ring goes on; the ring's read pointer passes
/// the INDIRECT_BUFFER packet only once its buffer has run.
#[test]
fn indirect_buffers_and_cond_exe() {
    let (vm, host, cp) = setup(None);
    let q = SdmaQueue::new(&vm, &cp, 1024);
    let (out, flag) = (vm.alloc(64, Perms::RW), vm.alloc(8, Perms::RW));
    wr32(&vm, flag, 1);
    let cond = |reference: u32, count: u32| vec![9, lo(flag), hi(flag), reference, count];
    let mut ib: Vec<u32> = Vec::new();
    ib.extend(fence(out, 1));
    ib.extend(cond(1, 4)); // holds: the next fence runs
    ib.extend(fence(out + 4, 2));
    ib.extend(cond(2, 4)); // differs: the next fence is skipped
    ib.extend(fence(out + 8, 3));
    ib.extend([2, lo(out + 12), hi(out + 12), 1, 4, 5]); // WRITE of 2 dwords
    let ibuf = vm.alloc(4 * ib.len() as u64, Perms::RW);
    let raw: Vec<u8> = ib.iter().flat_map(|w| w.to_le_bytes()).collect();
    vm.fill(ibuf, &raw).unwrap();
    q.submit(&vm, &cp, &[4, lo(ibuf), hi(ibuf), ib.len() as u32, 0, 0]);
    q.submit(&vm, &cp, &cond(0, 4));
    q.submit(&vm, &cp, &fence(out + 20, 6));
    q.submit(&vm, &cp, &fence(out + 24, 7));
    assert!(wait_until(10.0, || q.drained(&vm)));
    let got: Vec<u32> = (0..7).map(|i| rd32(&vm, out + 4 * i)).collect();
    assert_eq!(got, vec![1, 2, 0, 4, 5, 0, 7]);
    assert_eq!(q.rptr(&vm), 4 * (6 + 5 + 4 + 4));
    assert!(host.faults().is_empty(), "{:?}", host.faults());

    // An IB inside an IB, and a packet running past its IB's end, stop
    // the queue with a report naming them.
    for (inner, what) in [
        (
            vec![4, 0, 0, 1, 0, 0],
            "INDIRECT_BUFFER inside an indirect buffer",
        ),
        (fence(out, 9)[..3].to_vec(), "FENCE packet at dword 0"),
    ] {
        let q = SdmaQueue::new(&vm, &cp, 1024);
        let n = host.faults().len();
        let b = vm.alloc(64, Perms::RW);
        let raw: Vec<u8> = inner.iter().flat_map(|w| w.to_le_bytes()).collect();
        vm.fill(b, &raw).unwrap();
        q.submit(&vm, &cp, &[4, lo(b), hi(b), inner.len() as u32, 0, 0]);
        assert!(wait_until(10.0, || host.faults().len() > n));
        let f = host.faults()[n].1.clone();
        assert!(f.report.contains(what), "{}", f.report);
        cp.destroy_queue(q.id).unwrap();
    }
}

/// SEMAPHORE: a wait holds the queue (and what follows it) until the
/// 64-bit semaphore is nonzero, then takes one off; a signal adds one, or
/// writes 1 with the write-one bit.
#[test]
fn semaphores_signal_and_wait() {
    let (vm, host, cp) = setup(None);
    let waiter = SdmaQueue::new(&vm, &cp, 1024);
    let signaller = SdmaQueue::new(&vm, &cp, 1024);
    let (sem, out) = (vm.alloc(8, Perms::RW), vm.alloc(8, Perms::RW));
    let sem_pkt = |bits: u32| vec![7 | bits, lo(sem), hi(sem)];
    waiter.submit(&vm, &cp, &sem_pkt(0));
    waiter.submit(&vm, &cp, &fence(out, 1));
    std::thread::sleep(Duration::from_millis(40));
    assert_eq!(rd32(&vm, out), 0, "the wait holds");
    signaller.submit(&vm, &cp, &sem_pkt(1 << 30));
    assert!(wait_until(10.0, || rd32(&vm, out) == 1));
    assert_eq!(rd64(&vm, sem), 0, "the wait took the signal");
    // Signals add up; write-one sets 1.
    signaller.submit(&vm, &cp, &sem_pkt(1 << 30));
    signaller.submit(&vm, &cp, &sem_pkt(1 << 30));
    assert!(wait_until(10.0, || signaller.drained(&vm)));
    assert_eq!(rd64(&vm, sem), 2);
    signaller.submit(&vm, &cp, &sem_pkt(1 << 30 | 1 << 29));
    assert!(wait_until(10.0, || signaller.drained(&vm)));
    assert_eq!(rd64(&vm, sem), 1);
    assert!(host.faults().is_empty(), "{:?}", host.faults());
}

/// POLL_REGMEM completes under each compare function (always, <, <=, ==,
/// !=, >=, >) when the masked value passes and waits while it does not;
/// the reserved function 7 stops the queue. The HDP flush form (a
/// register poll with bit 26) completes at once.
#[test]
fn poll_regmem_every_function() {
    let (vm, host, cp) = setup(None);
    let (word, out) = (vm.alloc(8, Perms::RW), vm.alloc(8, Perms::RW));
    // (function, value that passes, value that does not) against
    // reference 5 under mask 0xff (the 0x100 bit is masked off).
    let cases = [
        (1, 4, 5),
        (2, 5, 6),
        (3, 5, 4),
        (4, 6, 5),
        (5, 5, 4),
        (6, 6, 5),
    ];
    for (func, pass, fail) in cases {
        let q = SdmaQueue::new(&vm, &cp, 1024);
        wr32(&vm, word, 0x100 | fail);
        wr32(&vm, out, 0);
        q.submit(&vm, &cp, &poll_mem(word, 5, 0xff, func));
        q.submit(&vm, &cp, &fence(out, func));
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(rd32(&vm, out), 0, "function {func} waits on {fail}");
        wr32(&vm, word, 0x100 | pass);
        assert!(
            wait_until(10.0, || rd32(&vm, out) == func),
            "function {func}"
        );
        cp.destroy_queue(q.id).unwrap();
    }
    let q = SdmaQueue::new(&vm, &cp, 1024);
    q.submit(&vm, &cp, &poll_mem(word, 0, 0, 0));
    // The HDP flush: a register poll (bit 31 clear) with bit 26.
    q.submit(&vm, &cp, &[8 | 1 << 26 | 3 << 28, 0x5000, 0x5004, 1, 1, 10]);
    q.submit(&vm, &cp, &fence(out, 77));
    assert!(wait_until(10.0, || rd32(&vm, out) == 77));
    assert!(host.faults().is_empty(), "{:?}", host.faults());
    q.submit(&vm, &cp, &poll_mem(word, 0, 0, 7));
    assert!(wait_until(10.0, || !host.faults().is_empty()));
    assert!(host.faults()[0].1.report.contains("reserved function 7"));
}

/// CONST_FILL of 1-, 2- and 4-byte elements, each of an odd count; the
/// count's bytes below the element size are ignored. 8-byte elements are
/// not an SDMA v4 fill size: the queue stops, naming it.
#[test]
fn const_fill_of_every_width() {
    let (vm, host, cp) = setup(None);
    let q = SdmaQueue::new(&vm, &cp, 1024);
    let buf = vm.alloc(256, Perms::RW);
    let base = |i: u64| buf + 64 * i;
    // (fill size, count field, data): 13 bytes, 7 words, 5 dwords.
    q.submit(&vm, &cp, &[11, lo(base(0)), hi(base(0)), 0xa5, 12]);
    q.submit(
        &vm,
        &cp,
        &[11 | 1 << 30, lo(base(1)), hi(base(1)), 0xbeef, 13],
    );
    q.submit(
        &vm,
        &cp,
        &[11 | 2 << 30, lo(base(2)), hi(base(2)), 0x1234_5678, 19],
    );
    assert!(wait_until(10.0, || q.drained(&vm)));
    let b = bytes(&vm, buf, 192);
    let mut want = vec![0u8; 192];
    want[..13].fill(0xa5);
    for i in 0..7 {
        want[64 + 2 * i..64 + 2 * i + 2].copy_from_slice(&0xbeefu16.to_le_bytes());
    }
    for i in 0..5 {
        want[128 + 4 * i..128 + 4 * i + 4].copy_from_slice(&0x1234_5678u32.to_le_bytes());
    }
    assert_eq!(b, want);
    q.submit(&vm, &cp, &[11 | 3 << 30, lo(buf), hi(buf), 1, 7]);
    assert!(wait_until(10.0, || !host.faults().is_empty()));
    assert!(host.faults()[0].1.report.contains("8-byte elements"));
}
