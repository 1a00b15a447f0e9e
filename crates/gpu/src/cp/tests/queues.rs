//! Queue threads: idle queues sleep, and UPDATE_QUEUE moves or pauses a
//! ring.

use super::*;

/// User plus system CPU time, in clock ticks, of this process's thread
/// named `name` (from /proc).
fn thread_ticks(name: &str) -> u64 {
    for e in std::fs::read_dir("/proc/self/task").unwrap() {
        let dir = e.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap();
            // Fields after "(comm)": state is field 3, utime 14, stime 15.
            let rest: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
            return rest[11].parse::<u64>().unwrap() + rest[12].parse::<u64>().unwrap();
        }
    }
    panic!("no thread named {name}");
}

#[test]
fn idle_queue_threads_sleep() {
    let (vm, _host, cp) = setup(None);
    let (qa, qb) = (AqlQueue::new(&vm, &cp, 8), AqlQueue::new(&vm, &cp, 8));
    let ring = vm.alloc(4096, Perms::RW);
    let ptrs = vm.alloc(64, Perms::RW);
    let qs = cp
        .create_queue(QueueDesc {
            kind: QueueKind::Sdma,
            gpu: 0,
            ring_base: ring,
            ring_size: 4096,
            read_ptr: ptrs,
            write_ptr: ptrs + 8,
            doorbell: ptrs + 16,
            priority: 0,
        })
        .unwrap();
    let s = signal(&vm, 1, None);
    qa.submit(&vm, barrier_packet(true, [0; 5], s));
    assert!(wait_until(10.0, || rd64(&vm, s + 8) == 0));
    // Past the polling period, the threads sleep.
    std::thread::sleep(Duration::from_millis(100));
    let names = [thread_name(qa.id), thread_name(qb.id), thread_name(qs)];
    let ticks = || names.iter().map(|n| thread_ticks(n)).sum::<u64>();
    let before = ticks();
    std::thread::sleep(Duration::from_millis(500));
    let used = ticks() - before;
    // Three polling threads would use up to 150 ticks (of 10 ms).
    assert!(used <= 10, "idle queue threads used {used} ticks in 0.5 s");
    // A sleeping queue still notices new work.
    let s2 = signal(&vm, 1, None);
    qb.submit(&vm, barrier_packet(true, [0; 5], s2));
    assert!(wait_until(10.0, || rd64(&vm, s2 + 8) == 0));
}

#[test]
fn update_queue_pauses_and_moves_the_ring() {
    let (vm, host, cp) = setup(None);
    let q = AqlQueue::new(&vm, &cp, 8);
    let s = signal(&vm, 1, None);
    q.submit(&vm, barrier_packet(true, [0; 5], s));
    assert!(wait_until(10.0, || rd64(&vm, s + 8) == 0));
    // A new ring of 16 slots, inactive (size 0) at first.
    let ring = vm.alloc(16 * 64, Perms::RW);
    for i in 0..16 {
        vm.fill(ring + 64 * i, &PKT_INVALID.to_le_bytes()).unwrap();
    }
    cp.update_queue(q.id, ring, 0, 3).unwrap();
    let moved = AqlQueue {
        id: q.id,
        ring,
        slots: 16,
        queue: q.queue,
    };
    let s2 = signal(&vm, 1, None);
    assert_eq!(moved.submit(&vm, barrier_packet(true, [0; 5], s2)), 1);
    cp.kick();
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!((rd64(&vm, s2 + 8), q.read_index(&vm)), (1, 1), "paused");
    cp.update_queue(q.id, ring, 16 * 64, 3).unwrap();
    assert!(wait_until(10.0, || rd64(&vm, s2 + 8) == 0));
    assert_eq!(q.read_index(&vm), 2);
    assert_eq!(
        rd32(&vm, ring + 64) & 0xff,
        1,
        "slot 1 of the new ring released"
    );
    assert_eq!(
        cp.update_queue(99_999, ring, 0, 0),
        Err(CpError::NoQueue(99_999))
    );
    assert!(host.faults().is_empty());
}
