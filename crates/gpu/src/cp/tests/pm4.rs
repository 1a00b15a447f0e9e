//! PM4 compute queues: packet streams built by hand from the field layouts
//! of Linux's `soc15d.h`, dispatches of clang-compiled kernels programmed
//! through the COMPUTE_* registers (gfx9 offsets), and the faults of
//! malformed streams.

use super::*;
use rocjitsu_code::{KernelDescriptor, SgprUse};

/// A PM4 queue: the ring, then the read pointer (32-bit ring dword
/// offset) at +0 and the write pointer (64-bit dword count) at +8.
struct Pm4Queue {
    id: u32,
    ring: u64,
    dwords: u64,
    ptrs: u64,
}

impl Pm4Queue {
    fn new(vm: &Vm, cp: &TestCp, dwords: u64) -> Pm4Queue {
        let ring = vm.alloc(4 * dwords, Perms::RW);
        let ptrs = vm.alloc(64, Perms::RW);
        let id = cp
            .create_queue(QueueDesc {
                kind: QueueKind::Pm4,
                gpu: 0,
                ring_base: ring,
                ring_size: 4 * dwords,
                read_ptr: ptrs,
                write_ptr: ptrs + 8,
                doorbell: 0,
                priority: 0,
            })
            .unwrap();
        Pm4Queue {
            id,
            ring,
            dwords,
            ptrs,
        }
    }

    fn wptr(&self, vm: &Vm) -> u64 {
        rd64(vm, self.ptrs + 8)
    }

    /// Writes packets at the write pointer (wrapping at the ring's end),
    /// then moves the write pointer and rings the doorbell. Waits for
    /// room first.
    fn submit(&self, vm: &Vm, cp: &CommandProcessor, pkt: &[u32]) {
        let w = self.wptr(vm);
        let n = pkt.len() as u64;
        assert!(wait_until(10.0, || {
            let used = (w % self.dwords + self.dwords - u64::from(self.rptr(vm))) % self.dwords;
            used + n < self.dwords
        }));
        for (i, d) in pkt.iter().enumerate() {
            let off = (w + i as u64) % self.dwords;
            vm.fill(self.ring + 4 * off, &d.to_le_bytes()).unwrap();
        }
        wr64(vm, self.ptrs + 8, w + n);
        cp.kick();
    }

    fn rptr(&self, vm: &Vm) -> u32 {
        rd32(vm, self.ptrs)
    }

    fn drained(&self, vm: &Vm) -> bool {
        u64::from(self.rptr(vm)) == self.wptr(vm) % self.dwords
    }
}

pub(super) fn lo(a: u64) -> u32 {
    a as u32
}

pub(super) fn hi(a: u64) -> u32 {
    (a >> 32) as u32
}

/// A type-3 packet: the header counts the body's dwords minus 1.
pub(super) fn pkt3(op: u32, body: &[u32]) -> Vec<u32> {
    let mut p = vec![3 << 30 | (body.len() as u32 - 1) << 16 | op << 8];
    p.extend_from_slice(body);
    p
}

/// WRITE_DATA to memory (DST_SEL 5) with write confirm.
pub(super) fn write_data(dst: u64, data: &[u32]) -> Vec<u32> {
    let mut b = vec![5 << 8 | 1 << 20, lo(dst), hi(dst)];
    b.extend_from_slice(data);
    pkt3(0x37, &b)
}

fn copy_data(src_sel: u32, dst_sel: u32, wide: bool, src: u64, dst: u64) -> Vec<u32> {
    let ctl = src_sel | dst_sel << 8 | u32::from(wide) << 16 | 1 << 20;
    pkt3(0x40, &[ctl, lo(src), hi(src), lo(dst), hi(dst)])
}

/// WAIT_REG_MEM on memory.
pub(super) fn wait_mem(a: u64, reference: u32, mask: u32, func: u32) -> Vec<u32> {
    pkt3(0x3c, &[func | 1 << 4, lo(a), hi(a), reference, mask, 4])
}

/// RELEASE_MEM as gfx9 writes it: CACHE_FLUSH_AND_INV_TS_EVENT (0x14) at
/// end of pipe (index 5).
pub(super) fn release_mem(a: u64, data: u64, data_sel: u32, int_sel: u32, ctx: u32) -> Vec<u32> {
    let event = 0x14 | 5 << 8 | 1 << 15 | 1 << 19;
    let sel = data_sel << 29 | int_sel << 24;
    pkt3(0x49, &[event, sel, lo(a), hi(a), lo(data), hi(data), ctx])
}

pub(super) fn indirect_buffer(a: u64, dwords: u32, chain: bool) -> Vec<u32> {
    pkt3(
        0x3f,
        &[lo(a), hi(a), dwords | u32::from(chain) << 20 | 1 << 23],
    )
}

/// SET_SH_REG of consecutive registers from absolute offset `reg`.
fn set_sh(reg: u32, vals: &[u32]) -> Vec<u32> {
    let mut b = vec![reg - 0x2c00];
    b.extend_from_slice(vals);
    pkt3(0x76, &b)
}

/// An IB holding `pkts`; returns its address and size in dwords.
pub(super) fn ib(vm: &Vm, pkts: &[Vec<u32>]) -> (u64, u32) {
    let words: Vec<u32> = pkts.concat();
    let a = vm.alloc(4 * words.len() as u64, Perms::RW);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    vm.fill(a, &bytes).unwrap();
    (a, words.len() as u32)
}

pub(super) fn fault_report(host: &TestHost, n: usize) -> GpuFault {
    assert!(
        wait_until(10.0, || host.faults().len() >= n),
        "no fault {n} reported"
    );
    host.faults()[n - 1].1.clone()
}

#[test]
fn write_copy_and_nop_packets_run_in_order_across_the_ring_end() {
    let (vm, host, cp) = setup(None);
    // 64 dwords: the packets below wrap around the ring's end twice.
    let q = Pm4Queue::new(&vm, &cp, 64);
    let out = buffer(&vm, 64);
    // A type-2 filler, amdgpu's one-dword NOP (count 0x3fff) and a NOP
    // whose payload would be invalid packets.
    q.submit(&vm, &cp, &[0x8000_0000, 3 << 30 | 0x3fff << 16 | 0x10 << 8]);
    q.submit(
        &vm,
        &cp,
        &pkt3(0x10, &[0xffff_ffff, 0x0000_0000, 0x4000_0000]),
    );
    q.submit(&vm, &cp, &write_data(out, &[11, 22, 33]));
    // WR_ONE_ADDR: every dword to the same address; the last stays.
    q.submit(
        &vm,
        &cp,
        &pkt3(
            0x37,
            &[5 << 8 | 1 << 16, lo(out + 12), hi(out + 12), 7, 8, 9],
        ),
    );
    // COPY_DATA: 64-bit immediate to memory, 32-bit memory to memory.
    let imm = 0x0123_4567_89ab_cdefu64;
    q.submit(&vm, &cp, &copy_data(5, 5, true, imm, out + 16));
    q.submit(&vm, &cp, &copy_data(1, 5, false, out + 4, out + 24));
    // A register round trip: WRITE_DATA to a register (DST_SEL 0), then
    // COPY_DATA of that register and the next (64 bits) to memory; and
    // memory into a register and back.
    let reg = 0x2e40; // COMPUTE_USER_DATA_0
    q.submit(&vm, &cp, &pkt3(0x37, &[0, reg, 0, 0x1111, 0x2222]));
    q.submit(&vm, &cp, &copy_data(0, 5, true, u64::from(reg), out + 32));
    q.submit(
        &vm,
        &cp,
        &copy_data(1, 0, false, out + 8, u64::from(reg + 5)),
    );
    q.submit(
        &vm,
        &cp,
        &copy_data(0, 2, false, u64::from(reg + 5), out + 40),
    );
    // Two GPU clock reads.
    q.submit(&vm, &cp, &copy_data(9, 5, true, 0, out + 48));
    q.submit(&vm, &cp, &copy_data(9, 5, true, 0, out + 56));
    q.submit(&vm, &cp, &pkt3(0x10, &[0; 20]));
    q.submit(&vm, &cp, &write_data(out + 64, &[44]));
    assert!(wait_until(10.0, || q.drained(&vm)), "rptr {}", q.rptr(&vm));
    let got = words(&vm, out, 17);
    assert_eq!(&got[..4], &[11, 22, 33, 9]);
    assert_eq!(rd64(&vm, out + 16), imm);
    assert_eq!(got[6], 22);
    assert_eq!(got[7], SENTINEL, "a 32-bit copy writes one dword");
    assert_eq!(rd64(&vm, out + 32), 0x2222 << 32 | 0x1111);
    assert_eq!(got[10], 33);
    let (t0, t1) = (rd64(&vm, out + 48), rd64(&vm, out + 56));
    assert!(t0 >= 100 && t1 > t0, "clock {t0} {t1}");
    assert_eq!(got[16], 44);
    assert!(q.wptr(&vm) > 64, "the stream wrapped the ring");
    assert!(host.faults().is_empty(), "{:?}", host.faults());
}

#[test]
fn wait_reg_mem_holds_the_queue_until_its_compare_passes() {
    let (vm, host, cp) = setup(None);
    let q = Pm4Queue::new(&vm, &cp, 1024);
    let flag = vm.alloc(64, Perms::RW);
    let out = buffer(&vm, 8);
    // (function, reference, a failing value, a passing value), with the
    // comparison the CPU makes as the oracle; the mask keeps bits 0-15.
    let cases: [(u32, u32, u32, u32); 6] = [
        (1, 10, 10, 9),        // <
        (2, 10, 11, 10),       // <=
        (3, 10, 11, 0x5_000a), // == (the high bits are masked off)
        (4, 10, 10, 12),       // !=
        (5, 10, 9, 10),        // >=
        (6, 10, 10, 11),       // >
    ];
    let cpu = |f: u32, v: u32, r: u32| match f {
        1 => v < r,
        2 => v <= r,
        3 => v == r,
        4 => v != r,
        5 => v >= r,
        _ => v > r,
    };
    for (i, &(func, reference, fail, pass)) in cases.iter().enumerate() {
        assert!(!cpu(func, fail & 0xffff, reference));
        assert!(cpu(func, pass & 0xffff, reference));
        wr32(&vm, flag, fail);
        q.submit(&vm, &cp, &wait_mem(flag, reference, 0xffff, func));
        q.submit(&vm, &cp, &write_data(out + 4 * i as u64, &[i as u32 + 1]));
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(words(&vm, out, 8)[i], SENTINEL, "function {func} waits");
        wr32(&vm, flag, pass);
        assert!(
            wait_until(10.0, || words(&vm, out, 8)[i] == i as u32 + 1),
            "function {func} passes"
        );
    }
    // Function 0 always passes; a register wait on the queue's register
    // file; the HDP flush (write a register, wait on another) completes.
    wr32(&vm, flag, 0);
    q.submit(&vm, &cp, &wait_mem(flag, 5, 0xffff_ffff, 0));
    q.submit(&vm, &cp, &set_sh(0x2e41, &[0x77]));
    q.submit(&vm, &cp, &pkt3(0x3c, &[3, 0x2e41, 0, 0x77, 0xff, 4]));
    q.submit(
        &vm,
        &cp,
        &pkt3(0x3c, &[3 | 1 << 6, 0x54f7, 0x54f8, 1, 1, 4]),
    );
    q.submit(&vm, &cp, &write_data(out + 28, &[99]));
    assert!(wait_until(10.0, || q.drained(&vm)));
    assert_eq!(words(&vm, out, 8)[7], 99);
    assert!(host.faults().is_empty(), "{:?}", host.faults());
}

#[test]
fn a_wait_that_never_passes_is_stopped_by_the_watchdog() {
    let (vm, host, cp) = setup(Some(Duration::from_millis(200)));
    let q = Pm4Queue::new(&vm, &cp, 256);
    let flag = vm.alloc(64, Perms::RW);
    let out = buffer(&vm, 1);
    q.submit(&vm, &cp, &wait_mem(flag, 1, 0xffff_ffff, 3));
    q.submit(&vm, &cp, &write_data(out, &[1]));
    let f = fault_report(&host, 1);
    assert!(f.hang, "{f:?}");
    assert!(f.report.contains("PM4 queue"), "{}", f.report);
    assert!(f.report.contains("WAIT_REG_MEM"), "{}", f.report);
    assert!(f.report.contains("watchdog"), "{}", f.report);
    // The queue stopped: setting the flag now runs nothing.
    wr32(&vm, flag, 1);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(words(&vm, out, 1)[0], SENTINEL);
    assert_eq!(q.rptr(&vm), 0);
}

#[test]
fn release_mem_writes_each_data_sel_and_raises_the_interrupt() {
    let (vm, host, cp) = setup(None);
    let q = Pm4Queue::new(&vm, &cp, 512);
    let out = buffer(&vm, 16);
    let data = 0x1122_3344_5566_7788u64;
    q.submit(&vm, &cp, &release_mem(out, data, 0, 0, 0));
    q.submit(&vm, &cp, &release_mem(out + 8, data, 1, 0, 0));
    q.submit(&vm, &cp, &release_mem(out + 16, data, 2, 0, 0));
    q.submit(&vm, &cp, &release_mem(out + 24, 0, 3, 0, 0));
    q.submit(&vm, &cp, &release_mem(out + 32, 0, 3, 0, 0));
    // tinygrad's signal: the value as 32 bits, an interrupt after the
    // write is confirmed, the event id as context id (kfdtest's form).
    q.submit(&vm, &cp, &release_mem(out + 40, 5, 1, 2, 42));
    // An interrupt without data.
    q.submit(&vm, &cp, &release_mem(0, 0, 0, 1, 43));
    assert!(wait_until(10.0, || q.drained(&vm)));
    let got = words(&vm, out, 12);
    assert_eq!(
        &got[0..2],
        &[SENTINEL, SENTINEL],
        "DATA_SEL 0 writes nothing"
    );
    assert_eq!(
        &got[2..4],
        &[data as u32, SENTINEL],
        "DATA_SEL 1: low 32 bits"
    );
    assert_eq!(rd64(&vm, out + 16), data, "DATA_SEL 2: 64 bits");
    let (t0, t1) = (rd64(&vm, out + 24), rd64(&vm, out + 32));
    assert!(t0 >= 100 && t1 > t0, "DATA_SEL 3: GPU clock {t0} {t1}");
    assert_eq!(got[10], 5);
    assert_eq!(host.events(), vec![42, 43]);
    assert!(host.faults().is_empty(), "{:?}", host.faults());
}

#[test]
fn indirect_buffers_nest_chain_and_return() {
    let (vm, host, cp) = setup(None);
    let q = Pm4Queue::new(&vm, &cp, 256);
    let out = buffer(&vm, 8);
    let (ib3, n3) = ib(&vm, &[write_data(out + 12, &[4])]);
    let (ib2, n2) = ib(&vm, &[write_data(out + 4, &[2])]);
    // IB1 calls IB2, goes on, then chains to IB3: what follows the chain
    // in IB1 never runs.
    let (ib1, n1) = ib(
        &vm,
        &[
            write_data(out, &[1]),
            indirect_buffer(ib2, n2, false),
            write_data(out + 8, &[3]),
            indirect_buffer(ib3, n3, true),
            write_data(out + 20, &[66]),
        ],
    );
    q.submit(&vm, &cp, &indirect_buffer(ib1, n1, false));
    // An empty IB, then a packet on the ring after them.
    q.submit(&vm, &cp, &indirect_buffer(ib1, 0, false));
    q.submit(&vm, &cp, &write_data(out + 16, &[5]));
    assert!(wait_until(10.0, || q.drained(&vm)));
    assert_eq!(words(&vm, out, 6), vec![1, 2, 3, 4, 5, SENTINEL]);
    assert!(host.faults().is_empty(), "{:?}", host.faults());
    // An IB called from IB2 is one level too deep.
    let (inner, ni) = ib(&vm, &[write_data(out + 28, &[7])]);
    let (l2, n2) = ib(&vm, &[indirect_buffer(inner, ni, false)]);
    let (l1, n1) = ib(&vm, &[pkt3(0x10, &[0]), indirect_buffer(l2, n2, false)]);
    q.submit(&vm, &cp, &indirect_buffer(l1, n1, false));
    let f = fault_report(&host, 1);
    assert!(f.report.contains("at offset 0x0 of IB2"), "{}", f.report);
    assert!(f.report.contains("INDIRECT_BUFFER"), "{}", f.report);
    assert_eq!(f.addr, l2);
    assert_eq!(words(&vm, out, 8)[7], SENTINEL);
}

#[test]
fn unknown_opcodes_stop_only_their_queue_with_a_report() {
    let (vm, host, cp) = setup(None);
    let (q, other) = (Pm4Queue::new(&vm, &cp, 256), Pm4Queue::new(&vm, &cp, 256));
    let out = buffer(&vm, 4);
    q.submit(&vm, &cp, &pkt3(0x10, &[0]));
    q.submit(&vm, &cp, &pkt3(0x99, &[1, 2]));
    q.submit(&vm, &cp, &write_data(out, &[1]));
    let f = fault_report(&host, 1);
    assert!(
        f.report.contains(&format!("PM4 queue {}", q.id)),
        "{}",
        f.report
    );
    assert!(f.report.contains("opcode 0x99"), "{}", f.report);
    assert!(f.report.contains("at ring offset 0x8"), "{}", f.report);
    assert_eq!(f.addr, q.ring + 8);
    assert!(!f.hang);
    // The other queue still runs; the faulted one ran nothing more.
    other.submit(&vm, &cp, &write_data(out + 4, &[2]));
    assert!(wait_until(10.0, || other.drained(&vm)));
    assert_eq!(words(&vm, out, 2), vec![SENTINEL, 2]);
    assert_eq!(q.rptr(&vm), 2, "the NOP before the bad packet was consumed");
    // In an IB, the report names the IB and the offset in it; a type-0
    // packet is refused the same way.
    let (b, n) = ib(&vm, &[pkt3(0x10, &[0, 0]), pkt3(0xee, &[0])]);
    other.submit(&vm, &cp, &indirect_buffer(b, n, false));
    let f = fault_report(&host, 2);
    assert!(
        f.report.contains("opcode 0xee") && f.report.contains("at offset 0xc of IB1"),
        "{}",
        f.report
    );
    assert_eq!(f.addr, b + 12);
    let third = Pm4Queue::new(&vm, &cp, 256);
    third.submit(&vm, &cp, &[0x0000_2e40]);
    let f = fault_report(&host, 3);
    assert!(f.report.contains("type-0 packet"), "{}", f.report);
}

#[test]
fn malformed_packets_fault() {
    let (vm, host, cp) = setup(None);
    let out = buffer(&vm, 4);
    // A WRITE_DATA whose count runs past the end of its IB.
    let q = Pm4Queue::new(&vm, &cp, 256);
    let mut w = write_data(out, &[1, 2]);
    w.truncate(4);
    let (b, n) = ib(&vm, &[w]);
    q.submit(&vm, &cp, &indirect_buffer(b, n, false));
    let f = fault_report(&host, 1);
    assert!(f.report.contains("WRITE_DATA"), "{}", f.report);
    assert!(f.report.contains("past the end of its IB"), "{}", f.report);
    assert_eq!(words(&vm, out, 1)[0], SENTINEL);
    // A packet longer than the ring.
    let q = Pm4Queue::new(&vm, &cp, 64);
    q.submit(&vm, &cp, &[3 << 30 | 100 << 16 | 0x10 << 8]);
    let f = fault_report(&host, 2);
    assert!(f.report.contains("does not fit the ring"), "{}", f.report);
    // SET_SH_REG past the end of the SH space; a packet too short for its
    // opcode.
    let q = Pm4Queue::new(&vm, &cp, 256);
    q.submit(&vm, &cp, &pkt3(0x76, &[0x3ff, 1, 2]));
    let f = fault_report(&host, 3);
    assert!(f.report.contains("SET_SH_REG"), "{}", f.report);
    assert!(f.report.contains("register space"), "{}", f.report);
    let q = Pm4Queue::new(&vm, &cp, 256);
    q.submit(&vm, &cp, &pkt3(0x49, &[0, 0, 0]));
    let f = fault_report(&host, 4);
    assert!(f.report.contains("RELEASE_MEM"), "{}", f.report);
    assert!(f.report.contains("fewer than the 8"), "{}", f.report);
    // A WRITE_DATA to an unmapped address is a memory fault.
    let q = Pm4Queue::new(&vm, &cp, 256);
    q.submit(&vm, &cp, &write_data(0x10, &[1]));
    let f = fault_report(&host, 5);
    assert_eq!(f.addr, 0x10);
    assert!(f.write);
}

/// COMPUTE_* register offsets (gfx9).
const DISPATCH_DIRECT: u32 = 0x15;
const START_X: u32 = 0x2e04;
const PGM_LO: u32 = 0x2e0c;
const RSRC1: u32 = 0x2e12;
const RSRC3: u32 = 0x2e2d;
const TMPRING: u32 = 0x2e18;
const USER_DATA_0: u32 = 0x2e40;
/// DISPATCH_INITIATOR: COMPUTE_SHADER_EN, PARTIAL_TG_EN,
/// FORCE_START_AT_000, USE_THREAD_DIMENSIONS.
const EN: u32 = 1;
const PARTIAL: u32 = 2;
const FORCE_START: u32 = 4;
const THREAD_DIMS: u32 = 32;

/// The packets that program kernel `kd_addr` as a PM4 runtime does from
/// its descriptor: PGM_LO/HI, RSRC1/2/3, scratch, user data (the kernarg
/// pointer where the descriptor wants it), START_X..Z and NUM_THREAD_X..Z.
fn program(vm: &Vm, kd_addr: u64, kernarg: u64, start: [u32; 3], block: [u32; 3]) -> Vec<u32> {
    program_regs(vm, kd_addr, kernarg, start, block, (RSRC3, 0))
}

/// [`program`] with the target's COMPUTE_PGM_RSRC3 offset and a
/// COMPUTE_TMPRING_SIZE value.
fn program_regs(
    vm: &Vm,
    kd_addr: u64,
    kernarg: u64,
    start: [u32; 3],
    block: [u32; 3],
    (rsrc3, tmpring): (u32, u32),
) -> Vec<u32> {
    let kd = KernelDescriptor::from_bytes(&vm.read_vec(kd_addr, 64).unwrap().try_into().unwrap());
    let entry = kd_addr.wrapping_add(kd.kernel_code_entry_byte_offset as u64);
    assert_eq!(entry % 256, 0);
    let mut user = vec![0u32; kd.compute_pgm_rsrc2.user_sgpr_count as usize];
    for slot in kd.sgpr_layout() {
        let s = slot.first as usize;
        match slot.what {
            SgprUse::KernargSegmentPtr => {
                user[s] = lo(kernarg);
                user[s + 1] = hi(kernarg);
            }
            // No scratch is used: its resource stays 0.
            SgprUse::PrivateSegmentBuffer => {}
            SgprUse::WorkgroupIdX
            | SgprUse::WorkgroupIdY
            | SgprUse::WorkgroupIdZ
            | SgprUse::PrivateSegmentWaveOffset => {}
            w => panic!("the test kernel asks for {w:?}"),
        }
    }
    let mut p = set_sh(PGM_LO, &[lo(entry >> 8), hi(entry >> 8)]);
    p.extend(set_sh(
        RSRC1,
        &[kd.compute_pgm_rsrc1.raw, kd.compute_pgm_rsrc2.raw],
    ));
    p.extend(set_sh(rsrc3, &[kd.compute_pgm_rsrc3.raw]));
    p.extend(set_sh(TMPRING, &[tmpring]));
    if !user.is_empty() {
        p.extend(set_sh(USER_DATA_0, &user));
    }
    let mut dims = start.to_vec();
    dims.extend_from_slice(&block);
    p.extend(set_sh(START_X, &dims));
    p
}

/// What `pm4_ids` writes at row `y`, column `x` (the CPU reference).
fn ids_ref(x: u32, y: u32) -> u32 {
    x * 7 + y * 1000 + 1
}

#[test]
fn dispatch_direct_runs_a_kernel_from_its_registers() {
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let q = Pm4Queue::new(&vm, &cp, 1024);
    let width = 3 * 64;
    // 3 x 4 workgroups of 64 work-items.
    let out = buffer(&vm, width * 4);
    let ka = kernarg(&vm, &[out, width]);
    let mut s = program(&vm, k["pm4_ids"], ka, [0; 3], [64, 1, 1]);
    s.extend(pkt3(DISPATCH_DIRECT, &[3, 4, 1, EN | FORCE_START]));
    // Rows 1..4 only: COMPUTE_START_Y = 1 and the dimensions are end values.
    let out2 = buffer(&vm, width * 4);
    let ka2 = kernarg(&vm, &[out2, width]);
    s.extend(program(&vm, k["pm4_ids"], ka2, [0, 1, 0], [64, 1, 1]));
    s.extend(pkt3(DISPATCH_DIRECT, &[3, 4, 1, EN]));
    // 100 work-items in thread dimensions, a partial second workgroup.
    let out3 = buffer(&vm, 128);
    let ka3 = kernarg(&vm, &[out3, 128]);
    s.extend(program(&vm, k["pm4_ids"], ka3, [0; 3], [64, 1, 1]));
    s.extend(pkt3(
        DISPATCH_DIRECT,
        &[100, 1, 1, EN | PARTIAL | THREAD_DIMS],
    ));
    let done = vm.alloc(8, Perms::RW);
    s.extend(release_mem(done, 1, 1, 2, 9));
    let (b, n) = ib(&vm, &[s]);
    q.submit(&vm, &cp, &indirect_buffer(b, n, false));
    assert!(wait_until(20.0, || rd32(&vm, done) == 1));
    assert!(host.faults().is_empty(), "{:?}", host.faults());
    assert_eq!(host.events(), vec![9]);
    let (a, b2) = (words(&vm, out, width * 4), words(&vm, out2, width * 4));
    for y in 0..4u32 {
        for x in 0..width as u32 {
            let i = (y * width as u32 + x) as usize;
            assert_eq!(a[i], ids_ref(x, y), "({x}, {y})");
            let want = if y >= 1 { ids_ref(x, y) } else { SENTINEL };
            assert_eq!(b2[i], want, "started at row 1: ({x}, {y})");
        }
    }
    let c = words(&vm, out3, 128);
    for (x, &w) in c.iter().enumerate() {
        let want = if x < 100 {
            ids_ref(x as u32, 0)
        } else {
            SENTINEL
        };
        assert_eq!(w, want, "partial: {x}");
    }
    assert!(wait_until(10.0, || q.drained(&vm)));
}

#[test]
fn dispatch_indirect_reads_its_dimensions_from_memory() {
    let (vm, host, cp) = setup(None);
    let k = load_kernels(&vm, &host);
    let q = Pm4Queue::new(&vm, &cp, 1024);
    let width = 2 * 64;
    let dims = vm.alloc(64, Perms::RW);
    for (i, d) in [2u32, 3, 1, 0, 1, 2, 1].iter().enumerate() {
        wr32(&vm, dims + 4 * i as u64, *d);
    }
    // The MEC form with the address in the packet: 2 x 3 workgroups.
    let out = buffer(&vm, width * 3);
    let ka = kernarg(&vm, &[out, width]);
    let mut s = program(&vm, k["pm4_ids"], ka, [0; 3], [64, 1, 1]);
    s.extend(pkt3(0x16, &[lo(dims), hi(dims), EN | FORCE_START]));
    // The SET_BASE form: an offset from the indirect base, 1 x 2.
    let out2 = buffer(&vm, width * 3);
    let ka2 = kernarg(&vm, &[out2, width]);
    s.extend(program(&vm, k["pm4_ids"], ka2, [0; 3], [64, 1, 1]));
    s.extend(pkt3(0x11, &[1, lo(dims), hi(dims)]));
    s.extend(pkt3(0x16, &[16, EN | FORCE_START]));
    q.submit(&vm, &cp, &s);
    assert!(wait_until(20.0, || q.drained(&vm)));
    assert!(host.faults().is_empty(), "{:?}", host.faults());
    let (a, b) = (words(&vm, out, width * 3), words(&vm, out2, width * 3));
    for y in 0..3u32 {
        for x in 0..width as u32 {
            let i = (y * width as u32 + x) as usize;
            assert_eq!(a[i], ids_ref(x, y), "({x}, {y})");
            let want = if x < 64 && y < 2 {
                ids_ref(x, y)
            } else {
                SENTINEL
            };
            assert_eq!(b[i], want, "SET_BASE form ({x}, {y})");
        }
    }
    // Dimensions at an unmapped address: a memory fault naming the packet.
    q.submit(&vm, &cp, &pkt3(0x16, &[0x40, 0, EN]));
    let f = fault_report(&host, 1);
    assert!(f.report.contains("DISPATCH_INDIRECT"), "{}", f.report);
    assert_eq!(f.addr, 0x40);
}

/// The RDNA3 kernels: `pm4_ids`, and `pm4_private`, whose 32 KiB + 4 of
/// private memory per work-item (a dynamically indexed array) is written
/// and read back through scratch.
const GFX11_KERNELS: &str = r#"
typedef unsigned int uint;
__kernel void pm4_ids(__global uint* out, uint width) {
    uint x = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
    uint y = __builtin_amdgcn_workgroup_id_y();
    out[y * width + x] = x * 7 + y * 1000 + 1;
}
__kernel void pm4_private(__global uint* out, uint n) {
    volatile uint priv[8192];
    uint x = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
    for (uint i = 0; i < n; i++) priv[(i * 17 + x) & 8191] = i + x;
    uint s = 0;
    for (uint i = 0; i < n; i++) s += priv[(i * 17 + x) & 8191];
    out[x] = s;
}
"#;

/// GFX11's COMPUTE_PGM_RSRC3 (`gc_11_0_0_offset.h`).
const RSRC3_GFX11: u32 = 0x2e28;
/// DISPATCH_INITIATOR.CS_W32_EN.
const CS_W32_EN: u32 = 1 << 15;

/// tinygrad's PM4 dispatches on gfx1100: wave32 code (clang's default for
/// gfx11) runs with CS_W32_EN, wave64 code without, workgroups of 64 being
/// two waves or one; COMPUTE_TMPRING_SIZE.WAVESIZE is 15 bits in units of
/// 256 bytes on GFX11 (gfx9: 13 bits of 1 KiB), so a wave of 64 lanes with
/// 32 KiB + 4 of private memory each asks for 0x2001 units, which the gfx9
/// reading cut to 1 (16 bytes a lane: the first scratch store faulted).
#[test]
fn gfx1100_dispatches_run_wave32_and_wave64_code_with_gfx11_scratch_units() {
    let (vm, host, cp) = setup_target(
        rocjitsu_isa::Target::Gfx1100,
        CpOptions {
            threads: 2,
            ..CpOptions::default()
        },
    );
    let q = Pm4Queue::new(&vm, &cp, 4096);
    for (w32, args) in [(true, &[][..]), (false, &["-mwavefrontsize64"][..])] {
        let co = CodeObject::parse("k.hsaco", compile_for("cl", GFX11_KERNELS, "gfx1100", args))
            .unwrap();
        let base = loader::load(&vm, &co).unwrap().base;
        let kd = |name: &str| base + co.kernel(name).unwrap().descriptor_address;
        let wave = if w32 { CS_W32_EN } else { 0 };
        let mut s = Vec::new();
        // 3 x 2 workgroups of 64 work-items.
        let width = 3 * 64;
        let out = buffer(&vm, width * 2);
        let ka = kernarg(&vm, &[out, width]);
        s.extend(program_regs(
            &vm,
            kd("pm4_ids"),
            ka,
            [0; 3],
            [64, 1, 1],
            (RSRC3_GFX11, 0),
        ));
        s.extend(pkt3(DISPATCH_DIRECT, &[3, 2, 1, EN | FORCE_START | wave]));
        // Two workgroups of 64 with private memory; tinygrad sizes
        // WAVESIZE for 64 lanes: ceil(64 * 32772 / 256) = 0x2001.
        let n = 8192u32;
        let priv_out = buffer(&vm, 128);
        let ka2 = kernarg(&vm, &[priv_out, u64::from(n)]);
        let wavesize = (64 * 32772u32).div_ceil(256);
        assert_eq!(wavesize, 0x2001);
        let tmpring = wavesize << 12 | 16;
        s.extend(program_regs(
            &vm,
            kd("pm4_private"),
            ka2,
            [0; 3],
            [64, 1, 1],
            (RSRC3_GFX11, tmpring),
        ));
        s.extend(pkt3(DISPATCH_DIRECT, &[2, 1, 1, EN | FORCE_START | wave]));
        let done = vm.alloc(8, Perms::RW);
        s.extend(release_mem(done, 1, 1, 0, 0));
        q.submit(&vm, &cp, &s);
        assert!(
            wait_until(60.0, || rd32(&vm, done) == 1),
            "wave32 {w32}: {:?}",
            host.faults()
        );
        assert!(
            host.faults().is_empty(),
            "wave32 {w32}: {:?}",
            host.faults()
        );
        let a = words(&vm, out, width * 2);
        for y in 0..2u32 {
            for x in 0..width as u32 {
                assert_eq!(
                    a[(y * width as u32 + x) as usize],
                    ids_ref(x, y),
                    "wave32 {w32}: ({x}, {y})"
                );
            }
        }
        // Each slot is written once (17 is odd: i * 17 + x is a
        // permutation of 0..8192), so the sum is that of i + x.
        let sum = |x: u32| (0..n).fold(0u32, |s, i| s.wrapping_add(i + x));
        for (x, &got) in words(&vm, priv_out, 128).iter().enumerate() {
            assert_eq!(
                got,
                sum(x as u32),
                "wave32 {w32}: private sum of work-item {x}"
            );
        }
    }
}
