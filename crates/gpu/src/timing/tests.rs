//! Clocked mode on hand-written kernels: the recorded run computes what the
//! plain run computes, the modelled cycles do not depend on the host
//! threads, and they move the way the hardware would (more work, more
//! cycles; a pointer chase over a larger footprint, a higher latency).

use super::*;
use crate::exec::dispatch::{Extra, Launch, dispatch_with};
use crate::exec::engine::Program;
use crate::exec::op::Env;
use crate::mem::{Perms, Vm};
use crate::plugin::Plugins;
use rocjitsu_code::KernelDescriptor;

const T: Target = Target::Gfx942;

/// A kernel's run: its recorded trace (when recorded) and the buffer.
struct Run {
    trace: Option<Arc<DispatchTrace>>,
    buf: Vec<u8>,
    kernel: Kernel,
}

/// Runs `asm` with `s[0:1]` the kernarg pointer; the kernarg holds the
/// buffer's address then `args`.
fn run(asm: &str, buf: &[u8], args: &[u32], grid: u32, block: u32, record: bool) -> Run {
    let code = crate::exec::testing::assemble(T, asm);
    let vm = Vm::new();
    let base = vm.alloc(code.len() as u64, Perms::RW);
    vm.fill(base, &code).unwrap();
    let prog = Program::new(T, base, code);
    let b = vm.alloc(buf.len() as u64, Perms::RW);
    vm.fill(b, buf).unwrap();
    // Pointers inside the buffer are offsets: make them addresses.
    let mut ka = b.to_le_bytes().to_vec();
    for a in args {
        ka.extend(a.to_le_bytes());
    }
    let kernarg = vm.alloc(ka.len() as u64, Perms::RW);
    vm.fill(kernarg, &ka).unwrap();
    let mut kd = [0u8; 64];
    kd[0..4].copy_from_slice(&1024u32.to_le_bytes());
    kd[48] = 3; // 32 VGPRs
    kd[52] = (2 << 1) | (1 << 7); // 2 user SGPRs; the workgroup id in s2
    kd[56] = 1 << 3;
    let descriptor = KernelDescriptor::from_bytes(&kd);
    let launch = Launch {
        kernel: "timing_test".into(),
        entry: base,
        descriptor,
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_lds: 0,
        kernarg,
        dispatch_packet: 0,
        queue: 0,
        private_bytes: 16,
        threads: 2,
        timeout: None,
        max_lds: 65536,
        trace: 0,
    };
    let rec = Recorder::new(128);
    let plugins = Plugins::of(vec![Box::new(rec.clone())]);
    let x = Extra {
        plugins: record.then_some(&plugins),
        ..Extra::default()
    };
    dispatch_with(&vm, &Env::new(T), &prog, &launch, &x).unwrap();
    Run {
        trace: rec.take().pop().map(Arc::new),
        buf: vm.read_vec(b, buf.len() as u64).unwrap(),
        kernel: Kernel::of(&descriptor, T, 0),
    }
}

fn cycles(r: &Run, threads: usize) -> u64 {
    let cfg = TimingConfig::builtin(T).unwrap();
    simulate(&cfg, r.trace.clone().unwrap(), r.kernel, threads)
        .unwrap()
        .cycles
}

/// Each lane adds its index to its dword (256 per workgroup), through LDS
/// and a barrier.
const ADD: &str = "\
s_load_dwordx2 s[4:5], s[0:1], 0x0
v_lshlrev_b32_e32 v1, 2, v0
s_lshl_b32 s3, s2, 10
v_add_u32_e32 v4, s3, v1
s_waitcnt lgkmcnt(0)
global_load_dword v2, v4, s[4:5]
s_waitcnt vmcnt(0)
v_add_u32_e32 v2, v0, v2
ds_write_b32 v1, v2
s_waitcnt lgkmcnt(0)
s_barrier
ds_read_b32 v3, v1
s_waitcnt lgkmcnt(0)
global_store_dword v4, v3, s[4:5]
s_endpgm";

/// A loop of `s4` iterations of eight dependent f32 adds (the branch goes
/// back 11 dwords: llvm-mc's encodings here are of single lines, so
/// offsets are numbers).
const VALU: &str = "\
s_load_dword s4, s[0:1], 0x8
s_waitcnt lgkmcnt(0)
v_mov_b32 v1, 1.0
v_mov_b32 v2, 0.5
v_add_f32 v1, v1, v2
v_add_f32 v1, v1, v2
v_add_f32 v1, v1, v2
v_add_f32 v1, v1, v2
v_add_f32 v1, v1, v2
v_add_f32 v1, v1, v2
v_add_f32 v1, v1, v2
v_add_f32 v1, v1, v2
s_sub_u32 s4, s4, 1
s_cmp_lg_u32 s4, 0
s_cbranch_scc1 -11
s_endpgm";

/// A pointer chase of `s6` steps from the buffer's start: each element
/// holds the offset of the next, which the loop adds to the buffer's
/// address (the branch goes back 9 dwords).
const CHASE: &str = "\
s_load_dwordx2 s[4:5], s[0:1], 0x0
s_load_dword s6, s[0:1], 0x8
s_waitcnt lgkmcnt(0)
v_mov_b32 v0, s4
v_mov_b32 v1, s5
v_mov_b32 v3, s5
global_load_dwordx2 v[0:1], v[0:1], off
s_waitcnt vmcnt(0)
v_add_co_u32 v0, vcc, s4, v0
v_addc_co_u32 v1, vcc, v3, v1, vcc
s_waitcnt vmcnt(0)
s_sub_u32 s6, s6, 1
s_cmp_lg_u32 s6, 0
s_cbranch_scc1 -9
s_endpgm";

#[test]
fn builtin_config_loads() {
    let c = TimingConfig::builtin(T).unwrap();
    assert_eq!(c.params.clock_mhz, 2100);
    assert_eq!(c.period(), 476);
    assert!(matches!(
        TimingConfig::builtin(Target::Gfx90a),
        Err(TimingError::NoModel { .. })
    ));
}

/// Each bad value is refused with the JSON path of the value.
#[test]
fn bad_config_names_the_json_path() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "\"ways\": 16,\n        \"hit_latency\": 52",
            "\"ways\": 0,\n        \"hit_latency\": 52",
            "$.timing.model.l2.ways",
        ),
        (
            "\"lds_latency\": 64",
            "\"lds_latency\": 64, \"lds_latnecy\": 3",
            "$.timing.model.issue",
        ),
        (
            "\"clock_mhz\": 2100",
            "\"clock_mhz\": \"fast\"",
            "$.timing.model.clock_mhz",
        ),
        (
            "\"line_bytes\": 128",
            "\"line_bytes\": 100",
            "$.timing.model.line_bytes",
        ),
        (
            "\"bytes\": 32768",
            "\"bytes\": 32000",
            "$.timing.model.l1.bytes",
        ),
    ];
    for (from, to, path) in cases {
        assert!(MI300X.contains(from), "{from}");
        let text = MI300X.replacen(from, to, 1);
        let e = TimingConfig::from_str("t.json", &text)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&format!("t.json: {path}")), "{path}: {e}");
    }
    // A topology whose compute units have no way to the L2.
    let text = MI300X.replacen(
        "{ \"from\": \"shader_engine[*].compute_unit[*]\", \"to\": \"l2_cache\", \"latency_ps\": 9520, \"duplex\": true },",
        "",
        1,
    );
    assert_ne!(text, MI300X);
    let e = TimingConfig::from_str("t.json", &text)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("$.timing.topology.xcd[0].shader_engine[0].compute_unit[0]")
            && e.contains("l2_cache"),
        "{e}"
    );
    // No model block.
    let text = MI300X.replacen("\"model\"", "\"modell\"", 1);
    let e = TimingConfig::from_str("t.json", &text)
        .unwrap_err()
        .to_string();
    assert!(e.contains("$.timing"), "{e}");
}

#[test]
fn recording_changes_no_result() {
    let buf: Vec<u8> = (0..1024u32).flat_map(|i| (7 * i).to_le_bytes()).collect();
    let plain = run(ADD, &buf, &[], 4, 256, false);
    let rec = run(ADD, &buf, &[], 4, 256, true);
    assert!(plain.trace.is_none());
    assert_eq!(plain.buf, rec.buf);
    let want: Vec<u8> = (0..1024u32)
        .flat_map(|i| (7 * i + i % 256).to_le_bytes())
        .collect();
    assert_eq!(rec.buf, want);
    let t = rec.trace.unwrap();
    assert_eq!(t.groups.len(), 4);
    assert!(t.groups.iter().all(|g| g.waves.len() == 4));
    // Every wave recorded all 15 instructions; the load touched its 256
    // bytes: two 128-byte lines.
    for g in &t.groups {
        for w in &g.waves {
            assert_eq!(w.recs.len(), 15);
            let load = w.recs[5];
            assert_eq!(load.kind, record::Kind::VmemLoad);
            assert_eq!(load.count, 2);
            assert_eq!(w.recs[8].kind, record::Kind::Lds);
            assert_eq!(w.recs[8].arg, 2, "64 lanes over 32 banks, no conflict");
        }
    }
}

#[test]
fn same_cycles_at_any_thread_count() {
    let buf = vec![0u8; 1024 * 40];
    let r = run(ADD, &buf, &[], 40, 64, true);
    let one = cycles(&r, 1);
    assert!(one > 0);
    for t in [2, 3, 8] {
        assert_eq!(cycles(&r, t), one, "{t} threads");
    }
}

#[test]
fn more_work_takes_more_cycles() {
    let buf = vec![0u8; 64];
    let short = cycles(&run(VALU, &buf, &[100], 1, 64, true), 1);
    let long = cycles(&run(VALU, &buf, &[200], 1, 64, true), 1);
    // 800 more dependent adds at one per 4 cycles.
    assert!(long >= short + 3000, "{short} -> {long}");
    // 16 waves on one compute unit share its 4 SIMDs' VALUs (four waves
    // per VALU: the adds take four times as long, the loop's scalar
    // instructions overlap).
    let wide = cycles(&run(VALU, &buf, &[100], 1, 1024, true), 1);
    assert!(wide > 2 * short, "{short} -> {wide}");
    // 16 workgroups of one wave spread over the compute units.
    let spread = cycles(&run(VALU, &buf, &[100], 16, 64, true), 1);
    assert!(spread < wide, "{spread} vs {wide}");
}

/// A cyclic chain over `n` elements `stride` bytes apart in a random order.
fn chain(n: usize, stride: usize) -> Vec<u8> {
    let mut order: Vec<usize> = (1..n).collect();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in (1..order.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let mut buf = vec![0u8; n * stride];
    let mut cur = 0;
    for &next in order.iter().chain(std::iter::once(&0)) {
        buf[cur * stride..cur * stride + 8]
            .copy_from_slice(&((next * stride) as u64).to_le_bytes());
        cur = next;
    }
    buf
}

#[test]
fn a_larger_footprint_gives_a_higher_latency() {
    let steps = 8192u32;
    let mut last = 0;
    for n in [64usize, 1024, 8192] {
        let r = run(CHASE, &chain(n, 128), &[steps], 1, 1, true);
        let c = cycles(&r, 1);
        let per_step = c / u64::from(steps);
        assert!(
            per_step > last,
            "{n} elements: {per_step} cycles per step after {last}"
        );
        last = per_step;
    }
}
