//! Random packet streams: whatever the rings hold, a queue either runs it,
//! waits, or reports a fault, and its thread never panics.

use super::*;

/// xorshift64* (in a cell, so that draws can nest in one expression).
struct Rng(std::cell::Cell<u64>);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(std::cell::Cell::new(seed))
    }

    fn next(&self) -> u64 {
        let mut x = self.0.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// Waits until `done` holds, a new fault is reported, or `progress` stops
/// changing for 100 ms.
fn settle(
    host: &TestHost,
    faults: usize,
    mut progress: impl FnMut() -> u64,
    done: impl Fn() -> bool,
) {
    let t = Instant::now();
    let (mut last, mut since) = (progress(), Instant::now());
    while t.elapsed() < Duration::from_secs(20) {
        if done() || host.faults().len() > faults {
            return;
        }
        let p = progress();
        if p != last {
            (last, since) = (p, Instant::now());
        } else if since.elapsed() > Duration::from_millis(100) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("the queue neither finished, faulted nor waited");
}

#[test]
fn random_sdma_streams() {
    let (vm, host, cp) = setup(Some(Duration::from_millis(20)));
    let buf = vm.alloc(8192, Perms::RW);
    let rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    for _ in 0..40 {
        let ring = vm.alloc(1024, Perms::RW);
        let ptrs = vm.alloc(64, Perms::RW);
        let id = cp
            .create_queue(QueueDesc {
                kind: QueueKind::Sdma,
                gpu: 0,
                ring_base: ring,
                ring_size: 1024,
                read_ptr: ptrs,
                write_ptr: ptrs + 8,
                doorbell: 0,
                priority: 0,
            })
            .unwrap();
        let mut words: Vec<u32> = Vec::new();
        while words.len() < 200 {
            let op = rng.pick(&[0u64, 1, 1, 2, 5, 6, 8, 10, 11, 13, rng.below(256)]) as u32;
            let sub = rng.pick(&[0u64, 0, 1, 2, 4, rng.below(256)]) as u32;
            let extra = rng.pick(&[0u64, rng.next() & 0xffff_0000]) as u32;
            words.push(op | sub << 8 | extra);
            for _ in 0..rng.below(14) {
                let a = buf + rng.below(8192);
                words.push(rng.pick(&[
                    a & 0xffff_ffff,
                    a >> 32,
                    rng.below(64),
                    rng.next() & 0xffff_ffff,
                ]) as u32);
            }
        }
        words.truncate(200);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        vm.fill(ring, &bytes).unwrap();
        let faults = host.faults().len();
        wr64(&vm, ptrs + 8, 800);
        cp.kick();
        settle(&host, faults, || rd64(&vm, ptrs), || rd64(&vm, ptrs) == 800);
        assert_eq!(cp.destroy_queue(id), Ok(()));
    }
    // The streams reached the packets' fault paths, not only their opcodes.
    assert!(host.faults().len() >= 10, "{} faults", host.faults().len());
    no_internal_errors(&host);
}

#[test]
fn random_aql_packets() {
    let (vm, host, cp) = setup(Some(Duration::from_millis(50)));
    let k = load_kernels(&vm, &host);
    let buf = vm.alloc(8192, Perms::RW);
    let sig = signal(&vm, 1000, None);
    let rng = Rng::new(0x2545_f491_4f6c_dd1d);
    for _ in 0..60 {
        let q = AqlQueue::new(&vm, &cp, 8);
        let faults = host.faults().len();
        for _ in 0..4 {
            let mut p = [0u8; 64];
            for b in p.iter_mut() {
                *b = rng.next() as u8;
            }
            let ty = rng.pick(&[0u64, 2, 2, 2, 2, 2, 3, 4, 5, rng.below(256)]) as u16;
            let header = ty | (rng.below(2) as u16) << 8;
            p[0..2].copy_from_slice(&header.to_le_bytes());
            p[2] = rng.pick(&[1u64, 2, 3, rng.below(256)]) as u8;
            if ty == 2 {
                let ko = rng.pick(&[
                    k["ids1d"],
                    k["poke"],
                    k["empty"],
                    k["spin"],
                    buf,
                    0,
                    rng.next(),
                ]);
                p[32..40].copy_from_slice(&ko.to_le_bytes());
                let block = rng.pick(&[1u64, 64, 256, 1024, 2048, rng.below(65536)]) as u16;
                p[4..6].copy_from_slice(&block.to_le_bytes());
                let items = rng.pick(&[1u64, 100, 300, rng.next() & 0xffff_ffff]) as u32;
                p[12..16].copy_from_slice(&items.to_le_bytes());
                let ka = kernarg(&vm, &[rng.pick(&[buf, 0, rng.next()])]);
                p[40..48].copy_from_slice(&rng.pick(&[ka, 0, rng.next()]).to_le_bytes());
                let gs = rng.pick(&[0u64, 4096, rng.next() & 0xffff_ffff]) as u32;
                p[28..32].copy_from_slice(&gs.to_le_bytes());
                if rng.below(2) == 0 {
                    // A 1-D launch with sane sizes, so that kernels run.
                    p[2] = 1;
                    p[6..10].copy_from_slice(&[1, 0, 1, 0]);
                    p[16..24].copy_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0]);
                    p[24..32].fill(0);
                }
            }
            if ty == 3 || ty == 5 {
                for i in 0..5 {
                    let d = rng.pick(&[0, sig, buf, rng.next()]);
                    p[8 + 8 * i..16 + 8 * i].copy_from_slice(&d.to_le_bytes());
                }
            }
            let s = rng.pick(&[0, sig, sig, rng.next()]);
            p[56..64].copy_from_slice(&s.to_le_bytes());
            q.submit(&vm, p);
        }
        cp.kick();
        settle(
            &host,
            faults,
            || q.read_index(&vm),
            || q.read_index(&vm) == 4,
        );
        assert_eq!(cp.destroy_queue(q.id), Ok(()));
    }
    assert!(host.faults().len() >= 10, "{} faults", host.faults().len());
    no_internal_errors(&host);
}

fn no_internal_errors(host: &TestHost) {
    for (_, f) in host.faults() {
        assert!(!f.report.contains(INTERNAL_ERROR), "{}", f.report);
    }
}
