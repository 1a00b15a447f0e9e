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
