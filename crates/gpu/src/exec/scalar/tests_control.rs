//! Program-control tests: EXEC updates, branches and loops, calls and the
//! PC, hardware registers, relative moves, GPR indexing state, fork/join
//! and the SOPP wave-state instructions. Code sits at `CODE_BASE` (0x1000);
//! branch offsets are counted by hand (every instruction here is 4 bytes
//! unless noted).

use super::control::{MODE_GPR_IDX_EN, MODE_VSKIP};
use super::gpr_idx;
use super::tests::{Code, assemble_each, values32, values64};
use crate::exec::engine::{self, Program, Stop};
use crate::exec::op::{Ctx, Env, Fault};
use crate::exec::testing::CODE_BASE;
use crate::exec::wave::{MODE_DEFAULT, Wave, WaveState};
use crate::mem::{Tlb, Vm};
use rocjitsu_isa::Target;

const T: Target = Target::Gfx942;

#[test]
fn saveexec_and_wrexec_match_reference() {
    type R = fn(u64, u64) -> u64;
    let ops: &[(&str, R, bool)] = &[
        ("s_and_saveexec_b64", |s, e| s & e, false),
        ("s_or_saveexec_b64", |s, e| s | e, false),
        ("s_xor_saveexec_b64", |s, e| s ^ e, false),
        ("s_andn2_saveexec_b64", |s, e| s & (u64::MAX ^ e), false),
        ("s_orn2_saveexec_b64", |s, e| s | (u64::MAX ^ e), false),
        ("s_nand_saveexec_b64", |s, e| u64::MAX ^ (s & e), false),
        ("s_nor_saveexec_b64", |s, e| u64::MAX ^ (s | e), false),
        ("s_xnor_saveexec_b64", |s, e| u64::MAX ^ s ^ e, false),
        ("s_andn1_saveexec_b64", |s, e| (u64::MAX ^ s) & e, false),
        ("s_orn1_saveexec_b64", |s, e| (u64::MAX ^ s) | e, false),
        ("s_andn1_wrexec_b64", |s, e| (u64::MAX ^ s) & e, true),
        ("s_andn2_wrexec_b64", |s, e| s & (u64::MAX ^ e), true),
    ];
    let lines: Vec<String> = ops
        .iter()
        .flat_map(|(n, _, _)| [format!("{n} s[4:5], s[0:1]"), format!("{n} s[0:1], s[0:1]")])
        .collect();
    let codes = assemble_each(T, &lines);
    let vals = values64();
    for (k, (name, reference, wr)) in ops.iter().enumerate() {
        let plain = Code::new(T, &codes[2 * k]);
        let alias = Code::new(T, &codes[2 * k + 1]);
        for &s in &vals {
            for &e in &vals {
                let new = reference(s, e);
                let saved = if *wr { new } else { e };
                let w = plain
                    .run(|w| {
                        w.set_s64(0, s);
                        w.set_exec(e);
                    })
                    .unwrap();
                let what = format!("{name} s={s:#x} exec={e:#x}");
                assert_eq!(w.exec(), new, "{what}: EXEC");
                assert_eq!(w.s64(4), saved, "{what}: D");
                assert_eq!(w.scc, new != 0, "{what}: SCC");
                // The source is read before the destination (same pair)
                // is written.
                let w = alias
                    .run(|w| {
                        w.set_s64(0, s);
                        w.set_exec(e);
                    })
                    .unwrap();
                assert_eq!((w.exec(), w.s64(0)), (new, saved), "{what} aliased");
            }
        }
    }
}

#[test]
fn loop_with_compare_and_backward_branch() {
    // 0x1008: s_add; 0x1014: s_cbranch_scc1 -4 -> 0x1018 - 16 = 0x1008.
    let code = Code::asm(
        T,
        "s_mov_b32 s0, 0\n\
         s_mov_b32 s1, 0\n\
         s_add_u32 s0, s0, 1\n\
         s_add_u32 s1, s1, s0\n\
         s_cmp_lt_u32 s0, s2\n\
         s_cbranch_scc1 -4",
    );
    for n in [1u32, 2, 7, 100, 1000] {
        let w = code.run(|w| w.s[2] = n).unwrap();
        assert_eq!(w.s[1], (1..=n).sum::<u32>(), "sum 1..={n}");
        assert_eq!(w.s[0], n);
        // 2 moves + 4 per iteration + s_endpgm.
        assert_eq!(w.insts, 2 + 4 * u64::from(n) + 1);
    }
}

#[test]
fn conditional_branches_follow_their_condition() {
    type Cond = fn(&Wave) -> bool;
    let branches: &[(&str, Cond)] = &[
        ("s_branch", |_| true),
        ("s_cbranch_scc0", |w| !w.scc),
        ("s_cbranch_scc1", |w| w.scc),
        ("s_cbranch_vccz", |w| w.vcc() == 0),
        ("s_cbranch_vccnz", |w| w.vcc() != 0),
        ("s_cbranch_execz", |w| w.exec() == 0),
        ("s_cbranch_execnz", |w| w.exec() != 0),
        ("s_cbranch_cdbgsys", |w| w.status >> 21 & 1 == 1),
        ("s_cbranch_cdbguser", |w| w.status >> 20 & 1 == 1),
        ("s_cbranch_cdbgsys_or_user", |w| w.status >> 20 & 3 != 0),
        ("s_cbranch_cdbgsys_and_user", |w| w.status >> 20 & 3 == 3),
    ];
    let states: [(bool, u64, u64, u32); 6] = [
        (false, 0, 0, 0),
        (true, 1, 0, 0),
        (false, 1 << 63, 1 << 40, 1 << 20),
        (true, 0, u64::MAX, 1 << 21),
        (false, 0, 1, 3 << 20),
        (true, u64::MAX, 0, 0),
    ];
    for (name, cond) in branches {
        // Taken: skips the second move (0x1004 + 4 + 4 = 0x100c).
        let code = Code::asm(
            T,
            &format!("s_mov_b32 s0, 1\n{name} 1\ns_mov_b32 s0, 2\ns_mov_b32 s1, 3"),
        );
        for (scc, vcc, exec, status) in states {
            let set = |w: &mut Wave| {
                w.scc = scc;
                w.set_vcc(vcc);
                w.set_exec(exec);
                w.status = status;
            };
            let mut probe = Wave::new(1);
            set(&mut probe);
            let w = code.run(set).unwrap();
            let taken = cond(&probe);
            assert_eq!(w.s[0], if taken { 1 } else { 2 }, "{name} {probe:?}");
            assert_eq!(w.s[1], 3, "{name}: falls through to the next");
        }
    }
}

#[test]
fn getpc_swappc_call_setpc() {
    // 0x1000 s_getpc_b64          -> s[0:1] = 0x1004
    // 0x1004 s_add_u32 s0, s0, 20 -> 0x1018
    // 0x1008 s_addc_u32
    // 0x100c s_swappc_b64         -> s[30:31] = 0x1010, PC = 0x1018
    // 0x1010 s_call_b64 s[32:33], 3 -> s[32:33] = 0x1014, PC = 0x1020
    // 0x1014 s_endpgm
    // 0x1018 s_mov_b32 s10, 7 ; 0x101c s_setpc_b64 s[30:31]
    // 0x1020 s_mov_b32 s11, 9 ; 0x1024 s_setpc_b64 s[32:33]
    let w = Code::asm(
        T,
        "s_getpc_b64 s[0:1]\n\
         s_add_u32 s0, s0, 20\n\
         s_addc_u32 s1, s1, 0\n\
         s_swappc_b64 s[30:31], s[0:1]\n\
         s_call_b64 s[32:33], 3\n\
         s_endpgm\n\
         s_mov_b32 s10, 7\n\
         s_setpc_b64 s[30:31]\n\
         s_mov_b32 s11, 9\n\
         s_setpc_b64 s[32:33]",
    )
    .run(|_| {})
    .unwrap();
    assert_eq!(w.s64(0), CODE_BASE + 0x18);
    assert_eq!(w.s64(30), CODE_BASE + 0x10);
    assert_eq!(w.s64(32), CODE_BASE + 0x14);
    assert_eq!((w.s[10], w.s[11]), (7, 9));
    // The PC has moved past the s_endpgm at 0x1014.
    assert_eq!(w.pc, CODE_BASE + 0x18, "ended at the s_endpgm");
    // s_swappc with the same pair reads the target before writing.
    let w = Code::asm(T, "s_swappc_b64 s[0:1], s[0:1]\ns_endpgm\ns_mov_b32 s5, 1")
        .run(|w| w.set_s64(0, CODE_BASE + 8))
        .unwrap();
    assert_eq!((w.s64(0), w.s[5]), (CODE_BASE + 4, 1));
}

#[test]
fn setpc_outside_the_code_faults_with_its_pc() {
    let (f, pc) = Code::asm(T, "s_setpc_b64 s[0:1]")
        .run(|w| w.set_s64(0, 0x4000_0000))
        .expect_err("no code there");
    assert_eq!(f, Fault::OutsideCode(0x4000_0000));
    assert_eq!(pc, 0x4000_0000);
}

#[test]
fn trap_halt_kill_and_endpgm() {
    let (f, pc) = Code::asm(T, "s_nop 0\ns_trap 2\ns_mov_b32 s0, 1")
        .run(|_| {})
        .expect_err("trap");
    assert_eq!((f, pc), (Fault::Trap(2), CODE_BASE + 4));
    let (f, _) = Code::asm(T, "s_sethalt 1").run(|_| {}).expect_err("halt");
    assert!(matches!(f, Fault::Invalid(_)));
    let w = Code::asm(
        T,
        "s_sethalt 0\ns_setkill 0\ns_mov_b32 s0, 1\ns_setkill 1\ns_mov_b32 s0, 2",
    )
    .run(|_| {})
    .unwrap();
    assert_eq!(w.s[0], 1, "s_setkill 1 ends the wave");
    let w = Code::asm(T, "s_endpgm\ns_mov_b32 s0, 2")
        .run(|_| {})
        .unwrap();
    assert_eq!((w.s[0], w.insts), (0, 1));
}

#[test]
fn no_op_instructions_change_nothing_but_the_pc() {
    let code = Code::asm(
        T,
        "s_waitcnt vmcnt(0) lgkmcnt(0)\n\
         s_nop 7\n\
         s_sleep 2\n\
         s_icache_inv\n\
         s_incperflevel 1\n\
         s_decperflevel 1\n\
         s_ttracedata\n\
         s_sendmsg sendmsg(MSG_INTERRUPT)\n\
         s_wakeup\n\
         s_barrier",
    );
    let w = code
        .run(|w| {
            w.s[3] = 0x77;
            w.scc = true;
        })
        .unwrap();
    let mut want = Wave::new(8);
    want.s[3] = 0x77;
    want.set_exec(u64::MAX);
    assert_eq!(w.s, want.s);
    assert!(w.scc);
    assert_eq!((w.mode, w.status), (MODE_DEFAULT, 0));
    // Past the ten instructions and the closing s_endpgm.
    assert_eq!(w.pc, CODE_BASE + 44);
}

#[test]
fn barrier_stops_the_wave_after_the_barrier() {
    let bytes = assemble_each(T, &["s_barrier".into(), "s_endpgm".into()]).concat();
    let prog = Program::new(T, CODE_BASE, bytes);
    let vm = Vm::new();
    let mut wave = Wave::new(1);
    wave.pc = CODE_BASE;
    let env = Env::new(T);
    let mut tlb = Tlb::default();
    let mut lds = [0u8; 4];
    let mut ctx = Ctx {
        wave: &mut wave,
        lds: &mut lds,
        vm: &vm,
        tlb: &mut tlb,
        env: &env,
    };
    assert_eq!(engine::run(&mut ctx, &prog, 10), Ok(Stop::Barrier));
    assert_eq!(ctx.wave.pc, CODE_BASE + 4);
    assert_eq!(ctx.wave.state, WaveState::Barrier);
}

#[test]
fn getreg_setreg_fields_of_mode_and_trapsts() {
    // Round trips through every (offset, size) of a few selectors.
    let fields = [
        (0u32, 32u32),
        (0, 4),
        (4, 4),
        (2, 3),
        (8, 1),
        (20, 12),
        (31, 1),
        (28, 8),
    ];
    let mut lines = Vec::new();
    for (off, size) in fields {
        for reg in ["HW_REG_MODE", "HW_REG_TRAPSTS"] {
            lines.push(format!("s_setreg_b32 hwreg({reg}, {off}, {size}), s0"));
            lines.push(format!("s_getreg_b32 s1, hwreg({reg}, {off}, {size})"));
            lines.push(format!(
                "s_setreg_imm32_b32 hwreg({reg}, {off}, {size}), 0xa5a5c3c3"
            ));
        }
    }
    let codes = assemble_each(T, &lines);
    let mut it = codes.chunks(3);
    for (off, size) in fields {
        for id in [1u32, 3] {
            let c = it.next().expect("assembled");
            let (set, get, imm) = (&c[0], &c[1], &c[2]);
            let mut field = 0u64;
            for i in off..(off + size).min(32) {
                field |= 1 << i;
            }
            let field = field as u32;
            let start = 0x0123_4567u32;
            for &v in &values32() {
                let init = |w: &mut Wave| {
                    w.mode = start;
                    w.trapsts = start;
                    w.s[0] = v;
                };
                let reg = |w: &Wave| if id == 1 { w.mode } else { w.trapsts };
                let want = (start & !field) | ((u64::from(v) << off) as u32 & field);
                let w = Code::new(T, set).run(init).unwrap();
                assert_eq!(reg(&w), want, "setreg id {id} ({off}, {size}) {v:#x}");
                let w = Code::new(T, &[set.clone(), get.clone()].concat())
                    .run(init)
                    .unwrap();
                let back = (want >> off) as u64 & ((1u64 << size) - 1);
                assert_eq!(u64::from(w.s[1]), back, "getreg id {id} ({off}, {size})");
                let w = Code::new(T, imm).run(init).unwrap();
                let want = (start & !field) | ((0xa5a5_c3c3u64 << off) as u32 & field);
                assert_eq!(reg(&w), want, "setreg_imm32 id {id} ({off}, {size})");
            }
        }
    }
}

#[test]
fn getreg_status_hw_id_and_read_only_registers() {
    let code = Code::asm(
        T,
        "s_setprio 2\n\
         s_cmp_eq_u32 0, 0\n\
         s_getreg_b32 s1, hwreg(HW_REG_STATUS)\n\
         s_getreg_b32 s2, hwreg(HW_REG_HW_ID)\n\
         s_setreg_b32 hwreg(HW_REG_HW_ID), s0\n\
         s_getreg_b32 s3, hwreg(HW_REG_HW_ID)\n\
         s_setreg_b32 hwreg(HW_REG_STATUS), s0\n\
         s_getreg_b32 s4, hwreg(HW_REG_STATUS, 0, 1)\n\
         s_getreg_b32 s5, hwreg(HW_REG_SH_MEM_BASES)\n\
         s_getreg_b32 s6, hwreg(HW_REG_LDS_ALLOC)\n\
         s_setvskip 1, 0\n\
         s_getreg_b32 s7, hwreg(HW_REG_MODE)",
    );
    let w = code
        .run(|w| {
            w.id_in_group = 6;
            w.s[0] = 0;
            w.set_vcc(0);
            w.set_exec(1);
        })
        .unwrap();
    // SCC (bit 0) set, EXECZ (9) clear, VCCZ (10) set, USER_PRIO (4:3) = 2.
    assert_eq!(w.s[1], 1 | 1 << 10 | 2 << 3);
    // Wave 6 of its group: SIMD 2, slot 1.
    assert_eq!(w.s[2], 1 | 2 << 4);
    assert_eq!(w.s[3], w.s[2], "HW_ID is read-only");
    assert_eq!(w.s[4], 1, "STATUS writes are ignored");
    // The default apertures: private at 2 << 48, shared at 1 << 48.
    assert_eq!(w.s[5], 2 | 1 << 16);
    // 1 KiB of LDS: two 512-byte granules.
    assert_eq!(w.s[6], 2 << 12);
    assert_eq!(w.s[7] & MODE_VSKIP, MODE_VSKIP);
}

#[test]
fn movrel_moves_through_m0() {
    let code = Code::asm(
        T,
        "s_movrels_b32 s0, s10\n\
         s_movreld_b32 s20, s1\n\
         s_movrels_b64 s[2:3], s[10:11]\n\
         s_movreld_b64 s[30:31], s[4:5]",
    );
    for m0 in [0u32, 1, 2, 4, 10, 60, 90, 91, 92, 200, u32::MAX] {
        let init = |w: &mut Wave| {
            for i in 0..102 {
                w.s[i] = 1000 + i as u32;
            }
            w.s[124] = m0;
        };
        let w = code.run(init).unwrap();
        let mut want = Wave::new(1);
        init(&mut want);
        let m = m0 as u64;
        // Reads inside s0..s101 see that register, reads outside read 0;
        // writes outside are dropped. Later moves see earlier results.
        let rd = |w: &Wave, base: u64, n: u64| -> Option<u64> {
            (base + m + n <= 102).then(|| {
                let mut v = 0u64;
                for k in 0..n {
                    v |= u64::from(w.s[(base + m + k) as usize]) << (32 * k);
                }
                v
            })
        };
        want.s[0] = rd(&want, 10, 1).unwrap_or(0) as u32;
        if 20 + m < 102 {
            want.s[(20 + m) as usize] = want.s[1];
        }
        let v = rd(&want, 10, 2).unwrap_or(0);
        want.s[2] = v as u32;
        want.s[3] = (v >> 32) as u32;
        if 30 + m + 2 <= 102 {
            want.s[(30 + m) as usize] = want.s[4];
            want.s[(31 + m) as usize] = want.s[5];
        }
        assert_eq!(&w.s[..102], &want.s[..102], "m0 = {m0}");
    }
}

#[test]
fn gpr_index_mode_sets_m0_and_mode() {
    let w = Code::asm(
        T,
        "s_set_gpr_idx_on s0, gpr_idx(SRC0,DST)\n\
         s_mov_b32 s10, m0\n\
         s_getreg_b32 s11, hwreg(HW_REG_MODE)\n\
         s_set_gpr_idx_mode gpr_idx(SRC1,SRC2)\n\
         s_mov_b32 s12, m0\n\
         s_set_gpr_idx_idx s1\n\
         s_mov_b32 s13, m0",
    )
    .run(|w| {
        w.s[0] = 0x1234_5607;
        w.s[1] = 0x99;
        w.s[124] = 0xffff_0000;
    })
    .unwrap();
    assert_eq!(w.s[10], 0xffff_9007);
    assert_eq!(w.s[11] & MODE_GPR_IDX_EN, MODE_GPR_IDX_EN);
    assert_eq!(w.s[12], 0xffff_6007);
    assert_eq!(w.s[13], 0xffff_6099);
    let g = gpr_idx(&w).expect("indexing on");
    assert_eq!((g.index, g.src, g.dst), (0x99, [false, true, true], false));
    let w = Code::asm(T, "s_set_gpr_idx_on 3, gpr_idx(DST)\ns_set_gpr_idx_off")
        .run(|w| w.s[124] = 0)
        .unwrap();
    assert_eq!(gpr_idx(&w), None);
    assert_eq!(w.s[124], 0x8003, "M0 keeps the index and mode");
}

#[test]
fn fork_and_join_follow_the_manual() {
    // 0x1000 s_getreg s20 = MODE.CSP
    // 0x1004 s_cbranch_i_fork s[2:3], 3   -> target 0x1014
    // 0x1008 not-taken path: s40 |= exec; s41 += 1; s_branch 1 -> 0x1018
    // 0x1014 taken path: s42 |= exec
    // 0x1018 s_cbranch_join s20
    // 0x101c s_mov_b64 s[44:45], exec
    let code = Code::asm(
        T,
        "s_getreg_b32 s20, hwreg(HW_REG_MODE, 29, 3)\n\
         s_cbranch_i_fork s[2:3], 3\n\
         s_or_b32 s40, s40, exec_lo\n\
         s_add_u32 s41, s41, 1\n\
         s_branch 1\n\
         s_or_b32 s42, s42, exec_lo\n\
         s_cbranch_join s20\n\
         s_mov_b64 s[44:45], exec\n\
         s_getreg_b32 s21, hwreg(HW_REG_MODE, 29, 3)",
    );
    let exec = 0xfu64;
    for mask in 0..16u64 {
        let w = code
            .run(|w| {
                w.set_exec(exec);
                w.set_s64(2, mask);
            })
            .unwrap();
        let pass = mask & exec;
        let fail = exec & !mask;
        // (not-taken exec, taken exec, final exec)
        let (nt, t, last) = if pass == exec {
            (0, exec, exec)
        } else if fail == exec {
            (exec, 0, exec)
        } else if fail.count_ones() < pass.count_ones() {
            // Not-taken path first, then the taken path from the stack.
            (fail, pass, pass)
        } else {
            (fail, pass, fail)
        };
        assert_eq!(u64::from(w.s[40]), nt, "mask {mask:#x}: not-taken EXEC");
        assert_eq!(u64::from(w.s[42]), t, "mask {mask:#x}: taken EXEC");
        assert_eq!(w.s64(44), last, "mask {mask:#x}: EXEC after the join");
        assert_eq!(w.s[21], 0, "mask {mask:#x}: CSP back to its start");
        if pass != exec && fail != exec {
            // The stack entry: {address, mask} of the deferred path.
            let deferred_pc = if fail.count_ones() < pass.count_ones() {
                CODE_BASE + 0x14
            } else {
                CODE_BASE + 8
            };
            assert_eq!(w.s64(2), deferred_pc, "mask {mask:#x}: saved PC");
        }
    }
}

#[test]
fn g_fork_takes_its_target_from_a_register_pair() {
    // 0x1000 s_cbranch_g_fork s[2:3], s[4:5] (all lanes pass) -> 0x100c
    let w = Code::asm(
        T,
        "s_cbranch_g_fork s[2:3], s[4:5]\ns_mov_b32 s0, 1\ns_endpgm\ns_mov_b32 s0, 2",
    )
    .run(|w| {
        w.set_exec(0xff);
        w.set_s64(2, 0xfff);
        w.set_s64(4, CODE_BASE + 12);
    })
    .unwrap();
    assert_eq!(w.s[0], 2);
}

#[test]
fn rfe_jumps_and_drops_privilege() {
    let w = Code::asm(T, "s_rfe_b64 s[0:1]\ns_endpgm\ns_mov_b32 s5, 4")
        .run(|w| {
            w.set_s64(0, CODE_BASE + 8);
            w.status = 1 << 5;
        })
        .unwrap();
    assert_eq!((w.s[5], w.status & 1 << 5), (4, 0));
}
