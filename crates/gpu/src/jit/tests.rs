//! The translation tier against the interpreter: snippets run on both
//! (`exec::testing::run` compares every register, LDS and the fault), plus
//! what only the tier has: that blocks are translated and run inline,
//! stop exactly where the interpreter's quantum stops, and report faults
//! and calls.

use super::*;
use crate::exec::testing::{self, CODE_BASE, assemble, run_program};
use crate::exec::{Env, Wave};
use crate::mem::{Perms, Tlb, Vm};
use rocjitsu_isa::Target::{self, Gfx942};

/// The loop of the ALU benchmark (tests/bench/src/alu.cl on gfx942); the
/// branch goes back 12 dwords, to the `v_mul_lo_u32`.
const ALU_LOOP: &str = "
    s_mov_b32 s3, 100
    v_xor_b32_e32 v1, 0x9e3779b9, v0
    s_mov_b32 s2, 0x19660d
    v_mov_b32_e32 v2, v0
    v_mul_lo_u32 v2, v2, s2
    v_add_u32_e32 v2, 0x3c6ef35f, v2
    v_lshrrev_b32_e32 v3, 7, v2
    v_xor_b32_e32 v3, v3, v1
    v_alignbit_b32 v1, v3, v1, 29
    s_add_i32 s3, s3, -1
    s_cmp_lg_u32 s3, 0
    v_add_u32_e32 v2, v1, v2
    s_cbranch_scc1 65524
    v_xor_b32_e32 v2, v1, v2";

fn lane_ids(w: &mut Wave) {
    for l in 0..64 {
        w.v[0][l] = (l as u32).wrapping_mul(0x0101_0101) ^ 0x5a5a;
    }
}

/// The reference of [`ALU_LOOP`] for one lane.
fn alu_ref(x0: u32, iters: u32) -> u32 {
    let (mut x, mut y) = (x0, x0 ^ 0x9e37_79b9);
    for _ in 0..iters {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        y ^= x >> 7;
        y = y.rotate_left(3);
        x = x.wrapping_add(y);
    }
    x ^ y
}

#[test]
fn alu_loop_runs_translated_and_matches() {
    let r = testing::run(Gfx942, ALU_LOOP, |w, _| lane_ids(w)).unwrap();
    for l in 0..64 {
        let x0 = (l as u32).wrapping_mul(0x0101_0101) ^ 0x5a5a;
        assert_eq!(r.wave.v[2][l], alu_ref(x0, 100), "lane {l}");
    }
    // The same code on the translation tier: every loop pass inline.
    let code = assemble(Gfx942, &format!("{ALU_LOOP}\ns_endpgm"));
    let prog = Program::new(Gfx942, CODE_BASE + 0x40_0000, code);
    let mut setup = |w: &mut Wave, _: &Vm| lane_ids(w);
    let j = run_program(Gfx942, &prog, &mut setup, ExecMode::Jit).unwrap();
    assert_eq!(j.wave.v[2], r.wave.v[2]);
    let s = prog.jit().unwrap().stats();
    assert!(s.blocks >= 2, "{s:?}");
    assert_eq!(s.interp_insts, 0, "{s:?}");
    assert_eq!(s.jit_insts, r.wave.insts, "{s:?}");
    assert_eq!(s.call_insts(), 1, "only s_endpgm is called: {s:?}");
}

#[test]
fn partial_exec_carries_and_compares() {
    let asm = "
        v_add_co_u32 v4, vcc, v0, v1
        v_addc_co_u32 v5, vcc, v2, v3, vcc
        v_cmp_gt_u32 s[4:5], v4, v5
        v_cndmask_b32 v6, v0, v1, s[4:5]
        v_sub_co_u32 v7, s[6:7], v6, v2
        v_subb_co_u32 v8, s[8:9], v3, v7, s[6:7]
        v_subbrev_co_u32 v9, vcc, v8, v0, s[8:9]
        v_cmp_lt_i32 vcc, v9, 0
        s_and_saveexec_b64 s[10:11], vcc
        v_mad_u32_u24 v10, v0, v1, v2
        v_mad_i32_i24 v11, v0, v1, v2
        v_mul_hi_u32 v12, v0, v1
        v_mul_hi_i32 v13, v0, v1
        v_lshlrev_b32 v14, v3, v0
        v_ashrrev_i32 v15, v2, v1
        v_bfe_u32 v16, v0, v1, v2
        v_bfe_i32 v17, v0, v1, v2
        v_alignbit_b32 v18, v0, v1, v2
        v_lshl_add_u64 v[20:21], v[0:1], 3, v[2:3]
        s_or_b64 exec, exec, s[10:11]
        v_min_i32 v22, v0, v1
        v_max_u32 v23, v0, v1
        v_bfi_b32 v24, v0, v1, v2
        v_cmp_eq_u32 s[12:13], 0, v0";
    testing::run(Gfx942, asm, |w, _| {
        let mut x = 0x1234_5678u32;
        for r in 0..4 {
            for l in 0..64 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                w.v[r][l] = if l % 9 == 0 {
                    0
                } else if l % 7 == 0 {
                    u32::MAX
                } else {
                    x
                };
            }
        }
        w.set_exec(0xf0f0_3c3c_ffff_0001);
        w.set_vcc(0x8000_0001_0000_ffff);
    })
    .unwrap();
}

#[test]
fn a_fault_in_a_block_reports_the_interpreters_pc_and_address() {
    let asm = "
        v_mov_b32 v4, 1
        v_add_u32 v2, 16, v2
        global_load_dword v1, v[2:3], off offset:16
        v_mov_b32 v5, 2";
    let r = testing::run(Gfx942, asm, |w, _| {
        w.v[2] = [0x40; 64];
    });
    let (f, pc) = r.err().expect("faults");
    assert_eq!(pc, CODE_BASE + 8);
    assert!(
        matches!(f, crate::exec::Fault::Memory(ref m) if m.addr == 0x60),
        "{f:?}"
    );
}

#[test]
fn memory_through_calls_matches() {
    let mut buf = 0;
    testing::run(
        Gfx942,
        "v_lshlrev_b32 v1, 2, v0
         v_add_co_u32 v2, vcc, s0, v1
         v_mov_b32 v3, s1
         v_addc_co_u32 v3, vcc, 0, v3, vcc
         global_load_dword v4, v[2:3], off
         v_mul_lo_u32 v4, v4, v4
         global_store_dword v[2:3], v4, off offset:256
         ds_write_b32 v1, v4
         ds_read_b32 v5, v1 offset:4",
        |w, vm| {
            buf = vm.alloc(512, Perms::RW);
            for l in 0..64u64 {
                vm.fill(buf + 4 * l, &(l as u32 * 3 + 1).to_le_bytes())
                    .unwrap();
                w.v[0][l as usize] = l as u32;
            }
            w.s[0] = buf as u32;
            w.s[1] = (buf >> 32) as u32;
        },
    )
    .unwrap();
}

/// Runs `prog` on one wave in quanta of `q` instructions, recording the
/// instructions and PC after each.
fn quanta(target: Target, prog: &Program, q: u64, mode: ExecMode) -> Vec<(u64, u64)> {
    let vm = Vm::new();
    let mut wave = Wave::new(crate::exec::wave::VREGS);
    wave.set_exec(u64::MAX);
    wave.pc = CODE_BASE;
    lane_ids(&mut wave);
    let mut lds = vec![0u8; 64];
    let env = Env::new(target);
    let mut tlb = Tlb::default();
    let mut ctx = crate::exec::Ctx {
        wave: &mut wave,
        lds: &mut lds,
        vm: &vm,
        tlb: &mut tlb,
        env: &env,
    };
    let mut out = Vec::new();
    loop {
        let r = run(&mut ctx, prog, q, mode).unwrap();
        out.push((ctx.wave.insts, ctx.wave.pc));
        if r == Stop::Ended {
            return out;
        }
    }
}

#[test]
fn quanta_stop_where_the_interpreters_stop() {
    let code = assemble(Gfx942, &format!("{ALU_LOOP}\ns_endpgm"));
    for q in [1, 5, 7, 9, 10, 64, 4096] {
        let a = quanta(
            Gfx942,
            &Program::new(Gfx942, CODE_BASE, code.clone()),
            q,
            ExecMode::Interp,
        );
        for mode in [ExecMode::Jit, ExecMode::Auto] {
            let p = Program::new(Gfx942, CODE_BASE, code.clone());
            let b = quanta(Gfx942, &p, q, mode);
            assert_eq!(a, b, "quantum {q}, {mode:?}");
        }
    }
}

#[test]
fn auto_translates_only_hot_blocks() {
    // A distinct address, so that the code cache gives a fresh state.
    let code = assemble(Gfx942, &format!("{ALU_LOOP}\ns_endpgm"));
    let prog = Program::new(Gfx942, CODE_BASE + 0x10_0000, code);
    let vm = Vm::new();
    let mut wave = Wave::new(crate::exec::wave::VREGS);
    wave.set_exec(u64::MAX);
    wave.pc = CODE_BASE + 0x10_0000;
    let mut lds = vec![0u8; 64];
    let env = Env::new(Gfx942);
    let mut tlb = Tlb::default();
    let mut ctx = crate::exec::Ctx {
        wave: &mut wave,
        lds: &mut lds,
        vm: &vm,
        tlb: &mut tlb,
        env: &env,
    };
    assert_eq!(
        run(&mut ctx, &prog, 1 << 20, ExecMode::Auto),
        Ok(Stop::Ended)
    );
    let s = prog.jit().unwrap().stats();
    // The loop body only: entry and exit run once.
    assert_eq!(s.blocks, 1, "{s:?}");
    assert!(s.interp_insts > 0 && s.jit_insts > s.interp_insts, "{s:?}");
}

#[test]
fn the_code_cache_shares_translations_of_the_same_code() {
    let code = assemble(Gfx942, &format!("{ALU_LOOP}\ns_endpgm"));
    let a = Program::new(Gfx942, CODE_BASE + 0x20_0000, code.clone());
    let b = Program::new(Gfx942, CODE_BASE + 0x20_0000, code.clone());
    let c = Program::new(Gfx942, CODE_BASE + 0x30_0000, code);
    let (ja, jb, jc) = (a.jit().unwrap(), b.jit().unwrap(), c.jit().unwrap());
    assert!(std::ptr::eq(ja, jb));
    assert!(!std::ptr::eq(ja, jc));
    assert!(ja.translate_all(&a, CODE_BASE + 0x20_0000) >= 2);
    assert_eq!(jb.stats().blocks, ja.stats().blocks);
    assert_eq!(jc.stats().blocks, 0);
}

/// A buffer of `n` dwords (value `f(i)` at dword `i`) in `vm`; its address
/// also in s[0:1] and, per lane, `base + 4 * stride * lane` in v[2:3] and
/// `4 * stride * lane` in v4; the same 8 KiB further in s[8:9] and
/// v[6:7].
fn buffer(w: &mut Wave, vm: &Vm, n: u64, stride: u64, f: impl Fn(u64) -> u32) -> u64 {
    let buf = vm.alloc(4 * n, Perms::RW);
    for i in 0..n {
        vm.fill(buf + 4 * i, &f(i).to_le_bytes()).unwrap();
    }
    w.s[0] = buf as u32;
    w.s[1] = (buf >> 32) as u32;
    for l in 0..64u64 {
        let a = buf + 4 * stride * l;
        w.v[2][l as usize] = a as u32;
        w.v[3][l as usize] = (a >> 32) as u32;
        w.v[4][l as usize] = (4 * stride * l) as u32;
        w.v[6][l as usize] = (a + 8192) as u32;
        w.v[7][l as usize] = ((a + 8192) >> 32) as u32;
    }
    w.s[8] = (buf + 8192) as u32;
    w.s[9] = ((buf + 8192) >> 32) as u32;
    buf
}

/// Runs `asm` on both tiers (compared by `testing::run`, memory included)
/// and again on the translation tier alone: the calls of the interpreter's
/// semantic functions the translated run made, by mnemonic.
fn jit_calls(
    asm: &str,
    at: u64,
    mut setup: impl FnMut(&mut Wave, &Vm),
) -> Vec<(&'static str, u64)> {
    testing::run(Gfx942, asm, &mut setup).unwrap();
    let code = assemble(Gfx942, &format!("{asm}\ns_endpgm"));
    let prog = Program::new(Gfx942, CODE_BASE + at, code);
    run_program(Gfx942, &prog, &mut setup, ExecMode::Jit).unwrap();
    prog.jit().unwrap().stats().calls
}

#[test]
fn coalesced_global_loads_and_stores_run_inline() {
    // Lane l at 4l, 8l, 12l or 16l bytes, as each size needs.
    let asm = "
        global_load_dword v10, v[2:3], off
        global_load_dwordx2 v[12:13], v30, s[0:1] offset:1024
        global_load_dwordx3 v[14:16], v[32:33], off offset:16
        global_load_dwordx4 v[20:23], v34, s[0:1] offset:3072
        v_add_u32 v10, v10, v13
        global_store_dword v4, v10, s[8:9]
        global_store_dwordx2 v30, v[12:13], s[8:9] offset:1024
        global_store_dwordx3 v[36:37], v[14:16], off offset:8
        global_store_dwordx4 v34, v[20:23], s[8:9] offset:2048
        flat_load_dwordx2 v[24:25], v[38:39] offset:8
        flat_store_dword v[2:3], v24 offset:512";
    let calls = jit_calls(asm, 0x50_0000, |w, vm| {
        let buf = buffer(w, vm, 4096, 1, |i| (i as u32).wrapping_mul(0x9e37_79b9));
        for l in 0..64u64 {
            let lu = l as usize;
            w.v[30][lu] = 8 * l as u32;
            w.v[34][lu] = 16 * l as u32;
            for (r, a) in [
                (32, buf + 12 * l),
                (36, buf + 8192 + 12 * l),
                (38, buf + 8 * l),
            ] {
                w.v[r][lu] = a as u32;
                w.v[r + 1][lu] = (a >> 32) as u32;
            }
        }
    });
    assert_eq!(calls, vec![("s_endpgm", 1)], "every access inline");
}

#[test]
fn unusual_accesses_take_the_interpreters_path() {
    // Partial EXEC, lanes 8 bytes apart for a dword, an unaligned base,
    // a flat address in the LDS aperture, a read-only buffer written:
    // each runs the interpreter's function, with the same result.
    let calls = jit_calls(
        "global_load_dwordx2 v[12:13], v[2:3], off
         s_mov_b64 exec, 0xffff
         global_load_dword v10, v[2:3], off
         s_mov_b64 exec, -1
         global_load_dword v11, v[2:3], off offset:2
         global_load_dword v14, v[2:3], off offset:4
         global_load_dword v15, v[2:3], off offset:8",
        0x51_0000,
        |w, vm| {
            buffer(w, vm, 1024, 1, |i| i as u32 * 3);
        },
    );
    assert_eq!(
        calls,
        vec![
            ("global_load_dword", 3),
            ("global_load_dwordx2", 1),
            ("s_endpgm", 1)
        ]
    );
    let calls = jit_calls(
        "v_mov_b32 v3, s2
         v_mov_b32 v6, 1
         ds_write_b32 v4, v6
         flat_load_dword v10, v[2:3]
         flat_store_dword v[2:3], v4",
        0x52_0000,
        |w, vm| {
            buffer(w, vm, 64, 1, |i| i as u32);
            // The LDS aperture's high dword (src_shared_base >> 32).
            w.s[2] = ((1u64 << 48) >> 32) as u32;
        },
    );
    assert!(calls.contains(&("flat_load_dword", 1)), "{calls:?}");
    assert!(calls.contains(&("flat_store_dword", 1)), "{calls:?}");
    let r = testing::run(Gfx942, "global_store_dword v[2:3], v4, off", |w, vm| {
        let b = vm.alloc(256, Perms::RO);
        for l in 0..64u64 {
            w.v[2][l as usize] = (b + 4 * l) as u32;
            w.v[3][l as usize] = ((b + 4 * l) >> 32) as u32;
        }
    });
    let (f, pc) = r.err().expect("a read-only buffer");
    assert_eq!(pc, CODE_BASE);
    assert!(matches!(f, crate::exec::Fault::Memory(ref m) if m.why.contains("permission")));
}

#[test]
fn an_access_running_off_a_buffer_faults_as_the_interpreter_reports_it() {
    // A 4 KiB buffer (one page); lanes 32 to 63 lie past it. The
    // interpreter checks lanes from the last down: lane 63's address is
    // the one reported (and `testing::run` checks both tiers agree).
    let mut buf = 0;
    let r = testing::run(
        Gfx942,
        "v_mov_b32 v10, 7
         global_load_dwordx2 v[12:13], v4, s[0:1] offset:3840",
        |w, vm| {
            buf = buffer(w, vm, 1024, 2, |i| i as u32);
        },
    );
    let (f, pc) = r.err().expect("faults");
    assert_eq!(pc, CODE_BASE + 4);
    let crate::exec::Fault::Memory(m) = f else {
        panic!("{f:?}")
    };
    assert_eq!(m.addr, buf + 3840 + 8 * 63, "{m:?}");
}

/// One wave running `prog` to its end on the translation tier with the
/// given Vm and TLB (kept between runs, as a dispatch's worker keeps it).
fn run_with(
    prog: &Program,
    vm: &Vm,
    tlb: &mut Tlb,
    setup: impl Fn(&mut Wave),
) -> (Wave, Result<Stop, (crate::exec::Fault, u64)>) {
    let mut wave = Wave::new(crate::exec::wave::VREGS);
    wave.set_exec(u64::MAX);
    wave.pc = prog.base();
    setup(&mut wave);
    let mut lds = vec![0u8; 64];
    let env = Env::new(Gfx942);
    let mut ctx = crate::exec::Ctx {
        wave: &mut wave,
        lds: &mut lds,
        vm,
        tlb,
        env: &env,
    };
    let r = run(&mut ctx, prog, 1 << 20, ExecMode::Jit);
    (wave, r)
}

#[test]
fn a_mapping_change_empties_the_range_cache() {
    let code = assemble(Gfx942, "global_load_dword v10, v[2:3], off\ns_endpgm");
    let prog = Program::new(Gfx942, CODE_BASE + 0x53_0000, code);
    let vm = Vm::new();
    let mut tlb = Tlb::default();
    let buf = vm.alloc(256, Perms::RW);
    vm.fill(buf, &[7; 256]).unwrap();
    let at = |w: &mut Wave| {
        for l in 0..64u64 {
            w.v[2][l as usize] = (buf + 4 * l) as u32;
            w.v[3][l as usize] = ((buf + 4 * l) >> 32) as u32;
        }
    };
    let (w, r) = run_with(&prog, &vm, &mut tlb, at);
    assert_eq!(r, Ok(Stop::Ended));
    assert_eq!(w.v[10], [0x0707_0707; 64]);
    assert!(tlb.ranges.entries.iter().any(|e| e.start == buf));
    // The buffer unmapped: the cached window must not be used.
    assert!(vm.unmap(buf));
    let (_, r) = run_with(&prog, &vm, &mut tlb, at);
    let (f, pc) = r.expect_err("unmapped");
    assert_eq!(pc, prog.base());
    // Lanes are checked from the last down: lane 63's address.
    assert!(
        matches!(f, crate::exec::Fault::Memory(ref m) if m.addr == buf + 252),
        "{f:?}"
    );
    // Other memory mapped at the same address: its bytes are read.
    let mut other = vec![0x2au8; 4096];
    // SAFETY: `other` stays alive and unmoved until the range is unmapped
    // below.
    unsafe { vm.map_host(buf, 4096, other.as_mut_ptr(), Perms::RW) };
    let (w, r) = run_with(&prog, &vm, &mut tlb, at);
    assert_eq!(r, Ok(Stop::Ended));
    assert_eq!(w.v[10], [0x2a2a_2a2a; 64]);
    assert!(vm.unmap(buf));
    let s = prog.jit().unwrap().stats();
    assert_eq!(s.interp_insts, 0, "{s:?}");
}

/// f32 bit patterns that matter: zeros, denormals, normals, the extremes,
/// infinities, quiet and signaling NaNs with distinct payloads and signs,
/// and integers' edges (for the conversions).
const F32_EDGES: [u32; 24] = [
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x807f_ffff,
    0x0080_0000,
    0x3f80_0000,
    0xbf80_0000,
    0x3f00_0001,
    0x4b7f_ffff,
    0x4f00_0000,
    0xcf00_0000,
    0x4f80_0000,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0001,
    0xffc0_0002,
    0x7f80_0003,
    0xff80_0004,
    0x7fff_ffff,
    0x3380_0000,
    0x4000_0000,
    0xc0a0_0000,
];

/// Lanes of v0, v1, v2 covering pairs (and triples) of [`F32_EDGES`]:
/// each call of `setup` with a different `k` shifts the combinations.
fn f32_lanes(w: &mut Wave, k: usize) {
    let n = F32_EDGES.len();
    for l in 0..64 {
        let i = l + 64 * k;
        w.v[0][l] = F32_EDGES[i % n];
        w.v[1][l] = F32_EDGES[(i / n) % n];
        w.v[2][l] = F32_EDGES[(i / n / n + i) % n];
        w.v[3][l] = F32_EDGES[(i * 7) % n];
    }
}

/// Every inlined f32 operation, plain and with VOP3 abs/neg, on every
/// pair of edge values under every denormal and IEEE setting of MODE:
/// `testing::run` compares both tiers; the translated run must have
/// called the interpreter for `s_endpgm` only.
#[test]
fn f32_operations_run_inline_and_match_bit_for_bit() {
    let ops = "
        v_add_f32 v4, v0, v1
        v_sub_f32 v5, v0, v1
        v_subrev_f32 v6, v0, v1
        v_mul_f32 v7, v0, v1
        v_fma_f32 v8, v0, v1, v2
        v_mov_b32 v9, v2
        v_fmac_f32 v9, v0, v1
        v_max_f32 v10, v0, v1
        v_min_f32 v11, v0, v1
        v_cvt_f32_i32 v12, v0
        v_cvt_f32_u32 v13, v1
        v_cvt_i32_f32 v14, v0
        v_cvt_u32_f32 v15, v1
        v_cndmask_b32 v16, v0, v1, vcc
        v_add_f32_e64 v17, -v0, |v1|
        v_mul_f32_e64 v18, |v0|, -v1
        v_fma_f32 v19, -v0, v1, -|v2|
        v_max_f32_e64 v20, -v3, v1
        v_min_f32_e64 v21, |v0|, -|v3|
        v_cvt_i32_f32_e64 v22, -v3
        v_cndmask_b32_e64 v23, -v0, |v1|, s[4:5]
        v_sub_f32_e64 v24, 0.5, v3
        v_mul_f32 v25, 0x40490fdb, v1";
    for mode in [0x3f0, 0x0f0, 0x1f0, 0x2f0, 0x300, 0x010, 0x020, 0x000] {
        for k in 0..10 {
            let calls = jit_calls(ops, 0x60_0000 + k * 0x1000 + mode, |w, _| {
                w.mode = mode as u32;
                f32_lanes(w, k as usize);
                w.set_vcc(0x5555_aaaa_3333_cccc);
                w.s[4] = 0x0f0f_0f0f;
                w.s[5] = 0xf0f0_f0f0;
            });
            assert_eq!(calls, vec![("s_endpgm", 1)], "MODE 0x{mode:x}");
        }
    }
}

/// gfx90a's `v_mad_f32` and `v_mac_f32` (flushing, unfused) inline, and
/// partial EXEC.
#[test]
fn mad_and_mac_run_inline_and_match() {
    for mode in [0x3f0, 0x0f0, 0x000] {
        for k in 0..10 {
            let asm = "
                v_mad_f32 v4, v0, v1, v2
                v_mov_b32 v5, v2
                v_mac_f32 v5, v0, v1
                v_mad_f32 v6, -v0, |v1|, v3
                v_madak_f32 v7, v0, v1, 0x3e800000";
            let a = testing::run(Target::Gfx90a, asm, |w, _| {
                w.mode = mode;
                f32_lanes(w, k);
                w.set_exec(0xffff_0000_ffff_7777);
            });
            a.unwrap();
        }
    }
}

/// A MODE that rounds f32 other than to nearest even: the block hands
/// over to the interpreter at the float run, and a later `s_setreg` that
/// restores round-to-nearest lets the next run go inline.
#[test]
fn directed_rounding_hands_the_run_to_the_interpreter() {
    let asm = "
        v_add_u32 v5, v0, v1
        v_add_f32 v4, v0, v1
        s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 0
        v_mul_f32 v6, v0, v1";
    let code = assemble(Gfx942, &format!("{asm}\ns_endpgm"));
    for (mode, handed) in [(0x3f1u32, true), (0x3f0, false)] {
        let prog = Program::new(
            Gfx942,
            CODE_BASE + 0x70_0000 + u64::from(mode),
            code.clone(),
        );
        let mut setup = |w: &mut Wave, _: &Vm| {
            w.mode = mode;
            f32_lanes(w, 3);
        };
        let i = run_program(Gfx942, &prog, &mut setup, ExecMode::Interp).unwrap();
        let j = run_program(Gfx942, &prog, &mut setup, ExecMode::Jit).unwrap();
        assert_eq!(diff_waves(&i.wave, &j.wave), None, "MODE 0x{mode:x}");
        let s = prog.jit().unwrap().stats();
        // Handed over at the start of the run that holds v_add_u32 and
        // v_add_f32: all five instructions run on the interpreter.
        let want = if handed { 5 } else { 0 };
        assert_eq!(s.interp_insts, want, "MODE 0x{mode:x}: {s:?}");
    }
}
