//! AQL queues: dispatches, signals, barriers, vendor packets, faults and
//! the watchdog.

use super::*;

#[test]
fn dispatch_runs_and_completes_its_signal_with_an_event() {
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let q = AqlQueue::new(&vm, &cp, 16);
    let out = buffer(&vm, 256);
    let mailbox = vm.alloc(8, Perms::RW);
    wr64(&vm, mailbox, u64::MAX);
    let sig = signal(&vm, 1, Some((mailbox, 7)));
    let ka = kernarg(&vm, &[out]);
    q.submit(
        &vm,
        dispatch_packet(k["ids1d"], [64, 1, 1], [256, 1, 1], ka, sig),
    );
    cp.kick();
    assert!(
        wait_until(10.0, || rd64(&vm, sig + 8) == 0),
        "signal decremented"
    );
    let got = words(&vm, out, 256);
    for (i, &w) in got.iter().enumerate() {
        assert_eq!(w, i as u32 * 3 + 1, "work-item {i}");
    }
    // The event id went to the mailbox (32 bits, as the CP writes it) and
    // the interrupt was raised once.
    assert_eq!(rd32(&vm, mailbox), 7);
    assert_eq!(host.events(), vec![7]);
    let (start, end) = (rd64(&vm, sig + 32), rd64(&vm, sig + 40));
    assert!(start >= 100 && end > start, "timestamps {start} {end}");
    assert_eq!(q.read_index(&vm), 1);
    assert_eq!(rd32(&vm, q.ring) & 0xff, 1, "header set back to INVALID");
    assert!(host.faults().is_empty());
}

#[test]
fn plugins_see_the_queues_dispatches() {
    use crate::plugin::{Output, Plugins, Spec};
    let dir = std::env::temp_dir().join(format!("rocjitsu-cp-plugins-{}", std::process::id()));
    let plugins = Arc::new(
        Plugins::new(
            &Spec::parse_list("metrics:format=jsonl,summary=false").unwrap(),
            &Output {
                dir: Some(dir.clone()),
            },
        )
        .unwrap(),
    );
    let (vm, host, cp) = setup_with(CpOptions {
        threads: 2,
        plugins: Some(plugins.clone()),
        ..CpOptions::default()
    });
    let k = load_kernels(&vm, &host);
    let q = AqlQueue::new(&vm, &cp, 16);
    let out = buffer(&vm, 256);
    let sig = signal(&vm, 1, None);
    let ka = kernarg(&vm, &[out]);
    q.submit(
        &vm,
        dispatch_packet(k["ids1d"], [64, 1, 1], [256, 1, 1], ka, sig),
    );
    cp.kick();
    assert!(wait_until(10.0, || rd64(&vm, sig + 8) == 0));
    let path = dir.join(format!("metrics-{}.jsonl", std::process::id()));
    let text = std::fs::read_to_string(&path).unwrap();
    let r: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(r["kernel"], "ids1d", "{r}");
    assert_eq!(r["workgroups"], 4);
    assert_eq!(r["waves"], 4);
    assert_eq!(r["bytes"]["global"]["written"], 4 * 256, "{r}");
    drop(cp);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn packets_run_in_order_across_ring_wrap_without_kicks() {
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let q = AqlQueue::new(&vm, &cp, 4);
    let sig = signal(&vm, 10, None);
    let outs: Vec<u64> = (0..10).map(|_| buffer(&vm, 64)).collect();
    for (i, &o) in outs.iter().enumerate() {
        // Wait for a free slot, as the runtime does (write - read < size).
        assert!(wait_until(10.0, || (i as u64) - q.read_index(&vm) < q.slots));
        let ka = kernarg(&vm, &[o]);
        q.submit(
            &vm,
            dispatch_packet(k["ids1d"], [64, 1, 1], [64, 1, 1], ka, sig),
        );
    }
    assert!(wait_until(10.0, || rd64(&vm, sig + 8) == 0));
    for &o in &outs {
        assert_eq!(words(&vm, o, 64)[63], 63 * 3 + 1);
    }
    assert_eq!(q.read_index(&vm), 10);
}

#[test]
fn partial_workgroups_have_only_the_remaining_work_items() {
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let q = AqlQueue::new(&vm, &cp, 16);
    // 1-D: 100 work-items in workgroups of 64; the second has 36.
    let out1 = buffer(&vm, 128);
    let s1 = signal(&vm, 1, None);
    let ka = kernarg(&vm, &[out1]);
    q.submit(
        &vm,
        dispatch_packet(k["ids1d"], [64, 1, 1], [100, 1, 1], ka, s1),
    );
    // 2-D: 10 x 7 work-items in 4 x 4 workgroups.
    let out2 = buffer(&vm, 128);
    let s2 = signal(&vm, 1, None);
    let ka = kernarg(&vm, &[out2]);
    q.submit(
        &vm,
        dispatch_packet(k["ids2d"], [4, 4, 1], [10, 7, 1], ka, s2),
    );
    cp.kick();
    assert!(wait_until(10.0, || rd64(&vm, s2 + 8) == 0));
    assert_eq!(rd64(&vm, s1 + 8), 0);
    let got = words(&vm, out1, 128);
    for (i, &w) in got.iter().enumerate() {
        let want = if i < 100 { i as u32 * 3 + 1 } else { SENTINEL };
        assert_eq!(w, want, "1-D item {i}");
    }
    let got = words(&vm, out2, 128);
    for (i, &w) in got.iter().enumerate() {
        let (x, y) = (i as u32 % 10, i as u32 / 10);
        let want = if i < 70 { (x << 16 | y) + 1 } else { SENTINEL };
        assert_eq!(w, want, "2-D item {i}");
    }
    assert!(host.faults().is_empty(), "{:?}", host.faults());
}

#[test]
fn barrier_and_waits_for_another_queues_dispatch() {
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let (qa, qb) = (AqlQueue::new(&vm, &cp, 8), AqlQueue::new(&vm, &cp, 8));
    let dep = signal(&vm, 1, None);
    let (out_a, out_b) = (buffer(&vm, 64), buffer(&vm, 64));
    let done = signal(&vm, 1, None);
    qa.submit(&vm, barrier_packet(true, [0, dep, 0, 0, 0], 0));
    let ka = kernarg(&vm, &[out_a]);
    qa.submit(
        &vm,
        dispatch_packet(k["ids1d"], [64, 1, 1], [64, 1, 1], ka, done),
    );
    cp.kick();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        words(&vm, out_a, 1)[0],
        SENTINEL,
        "the barrier holds queue A"
    );
    assert_eq!(qa.read_index(&vm), 0);
    // Queue B's dispatch completes `dep`, which releases queue A.
    let ka = kernarg(&vm, &[out_b]);
    qb.submit(
        &vm,
        dispatch_packet(k["ids1d"], [64, 1, 1], [64, 1, 1], ka, dep),
    );
    cp.kick();
    assert!(wait_until(10.0, || rd64(&vm, done + 8) == 0));
    assert_eq!(words(&vm, out_b, 1)[0], 1);
    assert_eq!(words(&vm, out_a, 1)[0], 1);
    assert_eq!(qa.read_index(&vm), 2);
}

#[test]
fn barrier_or_needs_one_signal_and_null_handles_do_not_count() {
    let (vm, host, cp) = setup(None);
    let q = AqlQueue::new(&vm, &cp, 8);
    let (s1, s2) = (signal(&vm, 1, None), signal(&vm, 2, None));
    let done = signal(&vm, 1, None);
    q.submit(&vm, barrier_packet(false, [0, s1, s2, 0, 0], done));
    cp.kick();
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(rd64(&vm, done + 8), 1);
    let released = host.gpu_clock();
    wr64(&vm, s2 + 8, 0);
    assert!(wait_until(10.0, || rd64(&vm, done + 8) == 0));
    // The packet's timestamps span its wait: it started before the
    // dependency was released and ended after.
    let (start, end) = (rd64(&vm, done + 32), rd64(&vm, done + 40));
    assert!(
        start < released && end >= released,
        "timestamps {start}..{end}, released at {released}"
    );
    // An AND over null handles only is satisfied at once.
    let done2 = signal(&vm, 1, None);
    q.submit(&vm, barrier_packet(true, [0; 5], done2));
    assert!(wait_until(10.0, || rd64(&vm, done2 + 8) == 0));
    // So is an OR over null handles only (no dependency to wait for).
    let done3 = signal(&vm, 1, None);
    q.submit(&vm, barrier_packet(false, [0; 5], done3));
    assert!(wait_until(10.0, || rd64(&vm, done3 + 8) == 0));
}

#[test]
fn amd_vendor_packet_barrier_value() {
    let (vm, _host, cp) = setup(None);
    let q = AqlQueue::new(&vm, &cp, 8);
    let watched = signal(&vm, 5, None);
    let done = signal(&vm, 1, None);
    // hsa_amd_barrier_value_packet_t: wait until (value & 0xf0) >= 0x20.
    let mut p = [0u8; 64];
    p[0..2].copy_from_slice(&(1u16 << 8).to_le_bytes());
    p[2] = 2;
    p[8..16].copy_from_slice(&watched.to_le_bytes());
    p[16..24].copy_from_slice(&0x20i64.to_le_bytes());
    p[24..32].copy_from_slice(&0xf0i64.to_le_bytes());
    p[32..36].copy_from_slice(&3u32.to_le_bytes());
    p[56..64].copy_from_slice(&done.to_le_bytes());
    q.submit(&vm, p);
    cp.kick();
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(rd64(&vm, done + 8), 1);
    wr64(&vm, watched + 8, 0x1f);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(rd64(&vm, done + 8), 1, "0x10 is not >= 0x20");
    wr64(&vm, watched + 8, 0x2f);
    assert!(wait_until(10.0, || rd64(&vm, done + 8) == 0));
}

/// An `AMD_AQL_FORMAT_PM4_IB` packet (amd_aql_pm4_ib_packet_t): the
/// INDIRECT_BUFFER command in dwords 1-4, the dwords left in dword 5.
fn pm4_ib_packet(cmd: &[u32], signal: u64) -> [u8; 64] {
    let mut p = [0u8; 64];
    p[0..2].copy_from_slice(&(1u16 << 8).to_le_bytes());
    p[2] = 1;
    for (i, w) in cmd.iter().enumerate() {
        p[4 + 4 * i..8 + 4 * i].copy_from_slice(&w.to_le_bytes());
    }
    p[20..24].copy_from_slice(&10u32.to_le_bytes());
    p[56..64].copy_from_slice(&signal.to_le_bytes());
    p
}

/// A PM4-IB packet's IB runs on the queue's PM4 engine, in order with the
/// dispatches around it (as tinygrad's AQL queues use it between kernels):
/// its waits hold the queue, its writes land, its RELEASE_MEM raises the
/// interrupt, and the packet completes only once the IB has run.
#[test]
fn amd_vendor_packet_pm4_ib_runs_its_indirect_buffer() {
    use super::pm4::{ib, indirect_buffer, release_mem, wait_mem, write_data};
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let q = AqlQueue::new(&vm, &cp, 8);
    let flag = buffer(&vm, 4);
    let out = buffer(&vm, 4);
    let kout = buffer(&vm, 64);
    // IB2 writes a word; the IB1 waits for the host's flag, calls IB2 and
    // releases with an interrupt for event 9.
    let ib2 = ib(&vm, &[write_data(out + 4, &[0xb2])]);
    let ib1 = ib(
        &vm,
        &[
            wait_mem(flag, 1, 0xffff_ffff, 3),
            write_data(out, &[0xa1]),
            indirect_buffer(ib2.0, ib2.1, false),
            release_mem(out + 8, 0xc3, 1, 2, 9),
        ],
    );
    let s1 = signal(&vm, 1, None);
    q.submit(
        &vm,
        pm4_ib_packet(&indirect_buffer(ib1.0, ib1.1, false), s1),
    );
    // A dispatch after it runs only once the IB is done.
    let s2 = signal(&vm, 1, None);
    let ka = kernarg(&vm, &[kout]);
    q.submit(
        &vm,
        dispatch_packet(k["ids1d"], [64, 1, 1], [64, 1, 1], ka, s2),
    );
    cp.kick();
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(
        words(&vm, out, 3),
        vec![SENTINEL; 3],
        "the IB waits for the flag"
    );
    assert_eq!(rd64(&vm, s1 + 8), 1);
    assert_eq!(
        words(&vm, kout, 1)[0],
        SENTINEL,
        "the dispatch waits behind it"
    );
    wr32(&vm, flag, 1);
    assert!(wait_until(10.0, || rd64(&vm, s2 + 8) == 0));
    assert_eq!(words(&vm, out, 3), vec![0xa1, 0xb2, 0xc3]);
    assert_eq!(rd64(&vm, s1 + 8), 0);
    assert_eq!(words(&vm, kout, 64)[63], 63 * 3 + 1);
    assert_eq!(host.events(), vec![9]);
    assert!(host.faults().is_empty(), "{:?}", host.faults());
}

/// A PM4-IB packet that carries no INDIRECT_BUFFER command, or whose IB
/// holds an unknown opcode, stops the queue with a report naming the
/// packet.
#[test]
fn a_bad_pm4_ib_packet_stops_the_queue_with_a_report() {
    use super::pm4::{fault_report, ib, indirect_buffer, pkt3};
    let (vm, host, cp) = setup(None);
    let q = AqlQueue::new(&vm, &cp, 8);
    let s = signal(&vm, 1, None);
    q.submit(&vm, pm4_ib_packet(&[0, 0, 0, 0], s));
    cp.kick();
    let f = fault_report(&host, 1);
    assert!(
        f.report.contains("AQL PM4-IB packet at") && f.report.contains("not an INDIRECT_BUFFER"),
        "{}",
        f.report
    );
    assert_eq!(rd64(&vm, s + 8), 1, "the packet did not complete");
    let q2 = AqlQueue::new(&vm, &cp, 8);
    let bad = ib(&vm, &[pkt3(0x99, &[0])]);
    q2.submit(&vm, pm4_ib_packet(&indirect_buffer(bad.0, bad.1, false), s));
    cp.kick();
    let f = fault_report(&host, 2);
    assert!(
        f.report.contains("unknown PM4 opcode 0x99") && f.report.contains("of IB1 at"),
        "{}",
        f.report
    );
}

#[test]
fn a_faulting_kernel_stops_its_queue_and_others_go_on() {
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let (qa, qb) = (AqlQueue::new(&vm, &cp, 8), AqlQueue::new(&vm, &cp, 8));
    let bad = 0x1000u64;
    let sa = signal(&vm, 1, None);
    qa.submit(
        &vm,
        dispatch_packet(k["poke"], [64, 1, 1], [64, 1, 1], kernarg(&vm, &[bad]), sa),
    );
    let sa2 = signal(&vm, 1, None);
    qa.submit(&vm, barrier_packet(true, [0; 5], sa2));
    cp.kick();
    assert!(wait_until(10.0, || !host.faults().is_empty()));
    let (gpu, f) = host.faults()[0].clone();
    assert_eq!(gpu, 0);
    assert!(
        (bad..bad + 256).contains(&f.addr),
        "fault address 0x{:x}",
        f.addr
    );
    assert!(f.write && !f.hang);
    for part in [
        "AQL queue",
        "packet 0",
        "poke",
        "workgroup",
        "PC",
        "global_store_dword",
    ] {
        assert!(
            f.report.contains(part),
            "report lacks {part}:\n{}",
            f.report
        );
    }
    // The faulting queue stops: no signal, no further packet.
    let out = buffer(&vm, 64);
    let sb = signal(&vm, 1, None);
    qb.submit(
        &vm,
        dispatch_packet(k["ids1d"], [64, 1, 1], [64, 1, 1], kernarg(&vm, &[out]), sb),
    );
    cp.kick();
    assert!(
        wait_until(10.0, || rd64(&vm, sb + 8) == 0),
        "queue B still runs"
    );
    assert_eq!(words(&vm, out, 64)[5], 16);
    assert_eq!(rd64(&vm, sa + 8), 1);
    assert_eq!(rd64(&vm, sa2 + 8), 1);
    assert_eq!(qa.read_index(&vm), 0);
    assert_eq!(host.faults().len(), 1);
}

#[test]
fn watchdog_stops_a_hung_kernel_and_a_stuck_barrier() {
    let (vm, host, cp) = setup(Some(Duration::from_millis(200)));
    let k = load_kernels(&vm, &host);
    let q = AqlQueue::new(&vm, &cp, 8);
    let flag = buffer(&vm, 1);
    wr32(&vm, flag, 0);
    let s = signal(&vm, 1, None);
    q.submit(
        &vm,
        dispatch_packet(k["spin"], [64, 1, 1], [64, 1, 1], kernarg(&vm, &[flag]), s),
    );
    cp.kick();
    assert!(wait_until(20.0, || !host.faults().is_empty()));
    let f = host.faults()[0].1.clone();
    assert!(f.hang, "{f:?}");
    assert!(f.report.contains("spin"), "{}", f.report);
    assert_eq!(rd64(&vm, s + 8), 1);

    let q2 = AqlQueue::new(&vm, &cp, 8);
    let never = signal(&vm, 1, None);
    q2.submit(&vm, barrier_packet(true, [never, 0, 0, 0, 0], 0));
    cp.kick();
    assert!(wait_until(20.0, || host.faults().len() == 2));
    let f = host.faults()[1].1.clone();
    assert!(f.hang && f.report.contains("barrier-AND"), "{}", f.report);
    cp.destroy_queue(q.id).unwrap();
    cp.destroy_queue(q2.id).unwrap();
}

#[test]
fn destroy_cancels_a_running_dispatch() {
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let q = AqlQueue::new(&vm, &cp, 8);
    let flag = buffer(&vm, 1);
    wr32(&vm, flag, 0);
    let s = signal(&vm, 1, None);
    q.submit(
        &vm,
        dispatch_packet(k["spin"], [64, 1, 1], [64, 1, 1], kernarg(&vm, &[flag]), s),
    );
    cp.kick();
    std::thread::sleep(Duration::from_millis(50));
    let t = Instant::now();
    cp.destroy_queue(q.id).unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(rd64(&vm, s + 8), 1);
    assert_eq!(cp.destroy_queue(q.id), Err(CpError::NoQueue(q.id)));
    assert!(host.faults().is_empty());
}

#[test]
fn bad_packets_and_queues_are_errors_not_panics() {
    let (vm, host, cp) = setup(None);
    assert!(matches!(
        cp.create_queue(QueueDesc {
            kind: QueueKind::Aql,
            gpu: 3,
            ring_base: 0,
            ring_size: 4096,
            read_ptr: 8,
            write_ptr: 16,
            doorbell: 0,
            priority: 0
        }),
        Err(CpError::NoGpu(3))
    ));
    let q = AqlQueue::new(&vm, &cp, 8);
    assert!(cp.update_queue(q.id, q.ring, 1000, 0).is_err());
    // A dispatch whose kernel object points nowhere.
    q.submit(&vm, dispatch_packet(0x10, [64, 1, 1], [64, 1, 1], 0, 0));
    cp.kick();
    assert!(wait_until(10.0, || !host.faults().is_empty()));
    let f = host.faults()[0].1.clone();
    assert_eq!(f.addr, 0x10);
    assert!(f.report.contains("kernel descriptor"), "{}", f.report);
    // A packet of an unknown type on another queue.
    let q2 = AqlQueue::new(&vm, &cp, 8);
    let mut p = [0u8; 64];
    p[0] = 9;
    q2.submit(&vm, p);
    cp.kick();
    assert!(wait_until(10.0, || host.faults().len() == 2));
    assert!(host.faults()[1].1.report.contains("packet type 9"));
}

#[test]
fn empty_kernel_latency_on_an_active_queue() {
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let q = AqlQueue::new(&vm, &cp, 64);
    let s = signal(&vm, 0, None);
    for groups in [1, 16] {
        let median = latency(&vm, &q, s, k["empty"], groups);
        eprintln!("empty kernel, {groups} workgroups, write index to signal: median {median:?}");
        // The packets are never kicked: the queue thread finds them by
        // polling. The figure depends on the build and on how busy the
        // cores are (on an idle machine: ~45 us debug, ~7 us release for
        // one workgroup); the bound only catches a thread that stopped
        // noticing work.
        assert!(median < Duration::from_millis(100), "median {median:?}");
    }
}

/// The median time from a dispatch's write-index bump to its signal's
/// decrement over 200 dispatches.
fn latency(vm: &Vm, q: &AqlQueue, s: u64, kernel: u64, groups: u32) -> Duration {
    let mut lat = Vec::new();
    for _ in 0..200 {
        wr64(vm, s + 8, 1);
        let t = Instant::now();
        q.submit(
            vm,
            dispatch_packet(kernel, [64, 1, 1], [64 * groups, 1, 1], 0, s),
        );
        while rd64(vm, s + 8) != 0 {
            // Yield as a waiting runtime thread does: with fewer cores
            // than runnable threads a pure spin would hold the core the
            // queue thread needs for a whole time slice.
            std::thread::yield_now();
            assert!(t.elapsed() < Duration::from_secs(10));
        }
        lat.push(t.elapsed());
    }
    lat.sort();
    lat[lat.len() / 2]
}

/// A host whose fault handler destroys every queue, as a driver evicting
/// a faulting process's queues does.
#[derive(Default)]
struct EvictingHost {
    cp: OnceLock<std::sync::Weak<TestCp>>,
    queues: Mutex<Vec<u32>>,
    faults: AtomicU64,
}

impl Host for EvictingHost {
    fn signal_event(&self, _: u32) {}
    fn gpu_fault(&self, _: u32, _: &GpuFault) {
        self.faults.fetch_add(1, Ordering::Relaxed);
        if let Some(cp) = self.cp.get().and_then(|w| w.upgrade()) {
            for id in self.queues.lock().unwrap().drain(..) {
                cp.destroy_queue(id).unwrap();
            }
        }
    }
    fn gpu_clock(&self) -> u64 {
        1
    }
}

#[test]
fn a_fault_handler_may_destroy_the_faulting_queue() {
    let vm = Arc::new(Vm::new());
    let host = Arc::new(EvictingHost::default());
    let gpu = CpGpu {
        target: TARGET,
        max_lds: 65536,
        sramecc: TARGET.sramecc_default(),
    };
    let cp = Arc::new(TestCp {
        cp: CommandProcessor::new(vec![gpu], CpOptions::default()),
        process: Process::new(vm.clone(), host.clone()),
    });
    host.cp.set(Arc::downgrade(&cp)).unwrap();
    let (qa, qb) = (AqlQueue::new(&vm, &cp, 8), AqlQueue::new(&vm, &cp, 8));
    host.queues.lock().unwrap().extend([qa.id, qb.id]);
    let mut p = [0u8; 64];
    p[0] = 9;
    qa.submit(&vm, p);
    cp.kick();
    assert!(wait_until(10.0, || host.queues.lock().unwrap().is_empty()));
    assert_eq!(host.faults.load(Ordering::Relaxed), 1);
    assert_eq!(cp.destroy_queue(qa.id), Err(CpError::NoQueue(qa.id)));
    drop(cp);
}

#[test]
fn kernel_names_come_from_the_loaded_code_object() {
    let (vm, host, _cp) = setup(None);
    let k = load_kernels(&vm, &host);
    assert_eq!(k.len(), 6);
    for (name, &ko) in &k {
        assert_eq!(
            crate::cp::names::kernel_name(&vm, ko).as_deref(),
            Some(name.as_str())
        );
        // The function symbol at the code entry (what a PM4 dispatch
        // knows of its kernel) has the kernel's name too.
        let kd = rocjitsu_code::KernelDescriptor::from_bytes(
            &vm.read_vec(ko, 64).unwrap().try_into().unwrap(),
        );
        let entry = ko.wrapping_add(kd.kernel_code_entry_byte_offset as u64);
        assert_eq!(
            crate::cp::names::entry_name(&vm, entry).as_deref(),
            Some(name.as_str())
        );
    }
    // Not a descriptor, not mapped, or no code object around it.
    assert_eq!(crate::cp::names::kernel_name(&vm, k["poke"] + 8), None);
    assert_eq!(crate::cp::names::kernel_name(&vm, 0x1000), None);
    let plain = buffer(&vm, 1024);
    assert_eq!(crate::cp::names::kernel_name(&vm, plain + 64), None);
}

/// A kernel calling through a pointer it gets as an argument (LLVM IR:
/// OpenCL C has no function pointers): `out[i] = f(i) + 1`.
const CALLER: &str = r#"
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @call_ptr(ptr addrspace(1) %out, ptr %f) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %g64 = shl i32 %g, 6
  %i = add i32 %g64, %t
  %r = call i32 %f(i32 %i)
  %r1 = add i32 %r, 1
  %idx = zext i32 %i to i64
  %p = getelementptr i32, ptr addrspace(1) %out, i64 %idx
  store i32 %r1, ptr addrspace(1) %p
  ret void
}
"#;

/// The callee, in a code object of its own.
const CALLEE: &str = r#"
typedef unsigned int uint;
__attribute__((visibility("default"), noinline)) uint callee(uint x) {
    return x * 7 + 3 + (x & 1 ? 100 : 0);
}
__kernel void unused(void) {}
"#;

/// Loads `co`; returns its load base and the code object.
fn load(vm: &Vm, co: Vec<u8>) -> (u64, CodeObject) {
    let co = CodeObject::parse("k.hsaco", co).unwrap();
    let loaded = loader::load(vm, &co).unwrap();
    (loaded.base, co)
}

/// Runs `call_ptr` over 256 work-items calling `f`; returns the signal
/// and the output buffer.
fn run_call_ptr(vm: &Vm, cp: &TestCp, f: u64) -> (u64, u64) {
    let (base, co) = load(vm, compile("ll", CALLER));
    let k = base + co.kernel("call_ptr").unwrap().descriptor_address;
    let q = AqlQueue::new(vm, cp, 16);
    let out = buffer(vm, 256);
    let sig = signal(vm, 1, None);
    let mut pkt = dispatch_packet(k, [64, 1, 1], [256, 1, 1], kernarg(vm, &[out, f]), sig);
    // Private memory for the call's stack, as the runtime gives a kernel
    // with a dynamic stack.
    pkt[24..28].copy_from_slice(&1024u32.to_le_bytes());
    q.submit(vm, pkt);
    cp.kick();
    (sig, out)
}

#[test]
fn a_kernel_calls_a_function_of_another_code_object() {
    let (vm, host, cp) = setup(None);
    let (base, co) = load(&vm, compile("cl", CALLEE));
    let f = co.functions().iter().find(|f| f.name == "callee").unwrap();
    let (sig, out) = run_call_ptr(&vm, &cp, base + f.address);
    assert!(wait_until(10.0, || rd64(&vm, sig + 8) == 0), "done");
    assert!(host.faults().is_empty(), "{:?}", host.faults());
    for (i, &w) in words(&vm, out, 256).iter().enumerate() {
        let x = i as u32;
        assert_eq!(
            w,
            x * 7 + 3 + if x & 1 == 1 { 100 } else { 0 } + 1,
            "work-item {i}"
        );
    }
}

#[test]
fn a_call_to_unmapped_memory_faults_naming_the_pc() {
    let (vm, host, cp) = setup(None);
    let bad = 0x7_0000_0000u64;
    let (sig, out) = run_call_ptr(&vm, &cp, bad);
    assert!(wait_until(10.0, || !host.faults().is_empty()), "faulted");
    let report = &host.faults()[0].1.report;
    assert!(
        report.contains(&format!("the PC 0x{bad:x} is outside the kernel's code")),
        "{report}"
    );
    assert_eq!(rd64(&vm, sig + 8), 1, "signal not completed");
    assert_eq!(words(&vm, out, 1)[0], SENTINEL);
}

/// Kernels that trap and that execute a word no GFX9 encoding covers.
const EXCEPTIONS: &str = r#"
__kernel void aborts(__global int *out) {
    out[__builtin_amdgcn_workitem_id_x()] = 1;
    __builtin_trap();
}
__kernel void illegal(__global int *out) {
    out[__builtin_amdgcn_workitem_id_x()] = 1;
    __asm__ volatile(".long 0xffffffff");
}
"#;

/// A wave's exception stops its queue with the queue exception ROCr's trap
/// handler raises for it: `s_trap 2` (`__builtin_trap`) aborts
/// (EC_QUEUE_WAVE_ABORT), an undecodable word is an illegal instruction;
/// a memory fault raises none (it reaches the driver as a VM fault).
#[test]
fn wave_exceptions_carry_the_trap_handlers_exception_code() {
    let (vm, host, cp) = setup(None);
    let (base, co) = load(&vm, compile("cl", EXCEPTIONS));
    for (n, (name, want)) in [
        ("aborts", QueueError::WAVE_ABORT),
        ("illegal", QueueError::WAVE_ILLEGAL_INSTRUCTION),
    ]
    .into_iter()
    .enumerate()
    {
        let k = base + co.kernel(name).unwrap().descriptor_address;
        let q = AqlQueue::new(&vm, &cp, 8);
        let out = buffer(&vm, 64);
        let sig = signal(&vm, 1, None);
        q.submit(
            &vm,
            dispatch_packet(k, [64, 1, 1], [64, 1, 1], kernarg(&vm, &[out]), sig),
        );
        cp.kick();
        assert!(wait_until(10.0, || host.faults().len() == n + 1), "{name}");
        let f = host.faults()[n].1.clone();
        assert_eq!(f.error, Some(want), "{name}: {}", f.report);
        assert!(f.report.contains(name), "{}", f.report);
        assert_eq!(rd64(&vm, sig + 8), 1, "{name}: signal not completed");
    }
    let k = load_kernels(&vm, &host);
    let q = AqlQueue::new(&vm, &cp, 8);
    q.submit(
        &vm,
        dispatch_packet(
            k["poke"],
            [64, 1, 1],
            [64, 1, 1],
            kernarg(&vm, &[0x1000]),
            0,
        ),
    );
    cp.kick();
    assert!(wait_until(10.0, || host.faults().len() == 3));
    assert_eq!(host.faults()[2].1.error, None, "a memory fault");
}

/// Packets the CP refuses carry the exception code KFD defines for them
/// and the code the CP writes to the queue's inactive signal.
#[test]
fn refused_packets_carry_their_exception_codes() {
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let mut cases: Vec<([u8; 64], QueueError)> = Vec::new();
    let mut zero_dims = dispatch_packet(k["poke"], [64, 1, 1], [64, 1, 1], 0, 0);
    zero_dims[2] = 0;
    cases.push((zero_dims, QueueError::DISPATCH_DIM_INVALID));
    cases.push((
        dispatch_packet(k["poke"], [0, 1, 1], [64, 1, 1], 0, 0),
        QueueError::DISPATCH_WORK_GROUP_SIZE_INVALID,
    ));
    cases.push((
        dispatch_packet(0, [64, 1, 1], [64, 1, 1], 0, 0),
        QueueError::DISPATCH_CODE_INVALID,
    ));
    let mut big_lds = dispatch_packet(k["poke"], [64, 1, 1], [64, 1, 1], 0, 0);
    big_lds[28..32].copy_from_slice(&(1u32 << 20).to_le_bytes());
    cases.push((big_lds, QueueError::DISPATCH_GROUP_SEGMENT_SIZE_INVALID));
    let mut agent = [0u8; 64];
    agent[0] = 4;
    cases.push((agent, QueueError::PACKET_UNSUPPORTED));
    let mut vendor = [0u8; 64];
    vendor[2] = 0x7f;
    cases.push((vendor, QueueError::VENDOR_UNSUPPORTED));
    for (n, (p, want)) in cases.into_iter().enumerate() {
        let q = AqlQueue::new(&vm, &cp, 8);
        q.submit(&vm, p);
        cp.kick();
        assert!(
            wait_until(10.0, || host.faults().len() == n + 1),
            "case {n}"
        );
        let f = host.faults()[n].1.clone();
        assert_eq!(f.error, Some(want), "case {n}: {}", f.report);
        assert!(want.is_packet() && want.legacy != 0);
    }
}
