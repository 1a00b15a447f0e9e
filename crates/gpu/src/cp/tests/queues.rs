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

/// Two processes (separate GPU virtual memories, as two VMIDs) run queues
/// at the same addresses on one command processor: each process's packets
/// see only its own memory, and its interrupts reach only its driver.
#[test]
fn processes_share_the_command_processor_but_not_memory() {
    let (vm_a, host_a, cp) = setup(None);
    let vm_b = Arc::new(Vm::new());
    let host_b = Arc::new(TestHost::default());
    let process_b = Process::new(vm_b.clone(), host_b.clone());
    // Same allocation sequence in both: the same addresses.
    let qa = AqlQueue::new(&vm_a, &cp, 8);
    let qb_ring = vm_b.alloc(8 * 64, Perms::RW);
    assert_eq!(qb_ring, qa.ring, "both processes lay out memory alike");
    for i in 0..8 {
        vm_b.fill(qb_ring + 64 * i, &PKT_INVALID.to_le_bytes())
            .unwrap();
    }
    let qb_queue = vm_b.alloc(256, Perms::RW);
    assert_eq!(qb_queue, qa.queue);
    // Process B's queue runs on A's command processor.
    let qb = AqlQueue {
        id: cp
            .cp
            .create_queue(
                &process_b,
                QueueDesc {
                    kind: QueueKind::Aql,
                    gpu: 0,
                    ring_base: qb_ring,
                    ring_size: 8 * 64,
                    read_ptr: qb_queue + 128,
                    write_ptr: qb_queue + 56,
                    doorbell: 0,
                    priority: 7,
                },
            )
            .unwrap(),
        ring: qb_ring,
        slots: 8,
        queue: qb_queue,
    };
    let (mbox_a, mbox_b) = (vm_a.alloc(64, Perms::RW), vm_b.alloc(64, Perms::RW));
    let sa = signal(&vm_a, 1, Some((mbox_a, 11)));
    let sb = signal(&vm_b, 3, Some((mbox_b, 22)));
    assert_eq!(sa, sb);
    qa.submit(&vm_a, barrier_packet(true, [0; 5], sa));
    qb.submit(&vm_b, barrier_packet(true, [0; 5], sb));
    qb.submit(&vm_b, barrier_packet(true, [0; 5], sb));
    cp.kick();
    assert!(wait_until(10.0, || qa.read_index(&vm_a) == 1
        && qb.read_index(&vm_b) == 2));
    let value = |vm: &Vm, s: u64| rd64(vm, s + 8);
    assert_eq!(value(&vm_a, sa), 0);
    assert_eq!(value(&vm_b, sb), 1);
    assert_eq!(host_a.events(), vec![11]);
    assert_eq!(host_b.events(), vec![22, 22]);
    cp.destroy_queue(qb.id).unwrap();
}
