//! GFX11.5 (gfx1151) scalar float operations against values computed by
//! hand, on snippets assembled by `llvm-mc-22 -mcpu=gfx1151`.

use crate::exec::op::Fault;
use crate::exec::testing::{CODE_BASE, Run, assemble_lines_in, run_in_ok, run_program};
use crate::exec::wave::sreg;
use crate::jit::ExecMode;
use rocjitsu_isa::{Target, WaveSize};

const T: Target = Target::Gfx1151;
const W32: WaveSize = WaveSize::Wave32;
const W64: WaveSize = WaveSize::Wave64;

fn run(
    wave: WaveSize,
    asm: &str,
    setup: impl FnMut(&mut crate::exec::Wave, &crate::mem::Vm),
) -> Run {
    run_in_ok(T, wave, asm, setup)
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

/// s0 = 1.5, s1 = 2.25 and `asm`, in a 32- and a 64-lane wave.
fn with_two(asm: &str) -> [Run; 2] {
    [W32, W64].map(|w| {
        run(w, asm, |w, _| {
            w.s[0] = f(1.5);
            w.s[1] = f(2.25);
        })
    })
}

#[test]
fn f32_arithmetic() {
    for r in with_two(
        "s_add_f32 s2, s0, s1\n\
         s_sub_f32 s3, s0, s1\n\
         s_mul_f32 s4, s0, s1\n\
         s_min_f32 s5, s0, s1\n\
         s_max_f32 s6, s0, s1\n\
         s_fmaak_f32 s7, s0, s1, 0x40000000\n\
         s_fmamk_f32 s8, s0, 0x40000000, s1\n\
         s_mov_b32 s9, 1.0\n\
         s_fmac_f32 s9, s0, s1\n\
         s_add_f32 s10, s0, -4.0",
    ) {
        let s = &r.wave.s;
        assert_eq!(s[2], f(3.75));
        assert_eq!(s[3], f(-0.75));
        assert_eq!(s[4], f(3.375));
        assert_eq!(s[5], f(1.5));
        assert_eq!(s[6], f(2.25));
        assert_eq!(s[7], f(5.375), "s0 * s1 + K");
        assert_eq!(s[8], f(5.25), "s0 * K + s1");
        assert_eq!(s[9], f(4.375), "s0 * s1 + D");
        assert_eq!(s[10], f(-2.5));
    }
}

#[test]
fn fmac_rounds_once() {
    // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24 exactly; a separate multiply would
    // round the square to 1 + 2^-11 (a tie to even) and give 2^-11.
    let a = f32::from_bits(0x3f80_0800);
    let r = run(W32, "s_mov_b32 s2, -1.0\ns_fmac_f32 s2, s0, s0", |w, _| {
        w.s[0] = f(a);
    });
    assert_eq!(r.wave.s[2], f(2f32.powi(-11) + 2f32.powi(-24)));
}

#[test]
fn min_max_of_a_nan_give_the_number() {
    let r = run(W32, "s_min_f32 s2, s0, s1\ns_max_f32 s3, s1, s0", |w, _| {
        w.s[0] = 0x7fc0_0000;
        w.s[1] = f(-3.0);
    });
    assert_eq!(r.wave.s[2], f(-3.0));
    assert_eq!(r.wave.s[3], f(-3.0));
}

#[test]
fn rounding_follows_mode() {
    // 1 + 2^-30 rounds to 1 to nearest, to 1 + 2^-23 toward +inf.
    let r = run(
        W32,
        "s_add_f32 s2, s0, s1\n\
         s_round_mode 0x1\n\
         s_add_f32 s3, s0, s1",
        |w, _| {
            w.s[0] = f(1.0);
            w.s[1] = f(2f32.powi(-30));
        },
    );
    assert_eq!(r.wave.s[2], f(1.0));
    assert_eq!(r.wave.s[3], 0x3f80_0001);
}

#[test]
fn f32_rounding_and_conversions() {
    let r = run(
        W32,
        "s_ceil_f32 s10, s0\n\
         s_floor_f32 s11, s0\n\
         s_trunc_f32 s12, s0\n\
         s_rndne_f32 s13, s1\n\
         s_cvt_f32_i32 s14, s2\n\
         s_cvt_f32_u32 s15, s2\n\
         s_cvt_i32_f32 s16, s0\n\
         s_cvt_u32_f32 s17, s0\n\
         s_cvt_u32_f32 s18, s3",
        |w, _| {
            w.s[0] = f(-1.5);
            w.s[1] = f(2.5);
            w.s[2] = (-7i32) as u32;
            w.s[3] = f(3.75);
        },
    );
    let s = &r.wave.s;
    assert_eq!(s[10], f(-1.0));
    assert_eq!(s[11], f(-2.0));
    assert_eq!(s[12], f(-1.0));
    assert_eq!(s[13], f(2.0), "ties to even");
    assert_eq!(s[14], f(-7.0));
    assert_eq!(s[15], f(4_294_967_289.0));
    assert_eq!(s[16], (-1i32) as u32, "toward zero");
    assert_eq!(s[17], 0, "negative to unsigned clamps to 0");
    assert_eq!(s[18], 3);
}

#[test]
fn f16_conversions() {
    let r = run(
        W32,
        "s_cvt_f16_f32 s10, s0\n\
         s_cvt_f32_f16 s11, s1\n\
         s_cvt_hi_f32_f16 s12, s1\n\
         s_cvt_pk_rtz_f16_f32 s13, s0, s2\n\
         s_cvt_pk_rtz_f16_f32 s14, s3, s0",
        |w, _| {
            w.s[0] = f(1.0);
            w.s[1] = 0xc000_3c00; // hi -2.0, lo 1.0
            w.s[2] = f(-2.0);
            w.s[3] = f(65520.0);
            w.s[10] = 0xdead_beef;
        },
    );
    let s = &r.wave.s;
    assert_eq!(s[10], 0x3c00, "the result zero-extended");
    assert_eq!(s[11], f(1.0));
    assert_eq!(s[12], f(-2.0));
    assert_eq!(s[13], 0xc000_3c00);
    // 65520 rounds to infinity to nearest but to the largest f16 toward 0.
    assert_eq!(s[14], 0x3c00_7bff);
}

#[test]
fn f16_arithmetic_reads_the_low_halves() {
    let r = run(
        W32,
        "s_add_f16 s10, s0, s1\n\
         s_sub_f16 s11, s0, s1\n\
         s_mul_f16 s12, s0, s1\n\
         s_min_f16 s13, s0, s1\n\
         s_max_f16 s14, s0, s1\n\
         s_mov_b32 s15, 0x3800\n\
         s_fmac_f16 s15, s0, s1\n\
         s_ceil_f16 s16, s2\n\
         s_floor_f16 s17, s2\n\
         s_trunc_f16 s18, s2\n\
         s_rndne_f16 s19, s2\n\
         s_add_f16 s20, s0, 1.0",
        |w, _| {
            w.s[0] = 0x1234_3e00; // 1.5
            w.s[1] = 0x5678_4080; // 2.25
            w.s[2] = 0xffff_be00; // -1.5
        },
    );
    let s = &r.wave.s;
    assert_eq!(s[10], 0x4380, "3.75");
    assert_eq!(s[11], 0xba00, "-0.75");
    assert_eq!(s[12], 0x42c0, "3.375");
    assert_eq!(s[13], 0x3e00);
    assert_eq!(s[14], 0x4080);
    assert_eq!(s[15], 0x43c0, "1.5 * 2.25 + 0.5 = 3.875");
    assert_eq!(s[16], 0xbc00, "-1.0");
    assert_eq!(s[17], 0xc000, "-2.0");
    assert_eq!(s[18], 0xbc00, "-1.0");
    assert_eq!(s[19], 0xc000, "-1.5 to even: -2.0");
    assert_eq!(s[20], 0x4100, "2.5");
}

#[test]
fn compares_set_scc() {
    // Each compare's SCC is saved by s_cselect into s[10 + i].
    let cases: &[(&str, u32, u32, bool)] = &[
        ("s_cmp_lt_f32", f(1.0), f(2.0), true),
        ("s_cmp_lt_f32", f(2.0), f(1.0), false),
        ("s_cmp_eq_f32", f(0.0), f(-0.0), true),
        ("s_cmp_le_f32", f(2.0), f(2.0), true),
        ("s_cmp_gt_f32", f(2.0), f(2.0), false),
        ("s_cmp_lg_f32", f(1.0), 0x7fc0_0000, false),
        ("s_cmp_ge_f32", f(3.0), f(2.0), true),
        ("s_cmp_o_f32", f(1.0), 0x7fc0_0000, false),
        ("s_cmp_u_f32", f(1.0), 0x7fc0_0000, true),
        ("s_cmp_nge_f32", f(1.0), 0x7fc0_0000, true),
        ("s_cmp_neq_f32", f(1.0), 0x7fc0_0000, true),
        ("s_cmp_nlt_f32", f(1.0), f(2.0), false),
        ("s_cmp_eq_f16", 0x1234_3c00, 0x5678_3c00, true),
        ("s_cmp_lt_f16", 0x0000_bc00, 0xffff_3c00, true),
        ("s_cmp_u_f16", 0x0000_7e00, 0x0000_3c00, true),
        ("s_cmp_ngt_f16", 0x0000_4000, 0x0000_3c00, false),
    ];
    for wave in [W32, W64] {
        let asm: String = (0..cases.len())
            .map(|i| {
                format!(
                    "{} s{}, s{}\ns_cselect_b32 s{}, 1, 0\n",
                    cases[i].0,
                    40 + 2 * i,
                    41 + 2 * i,
                    10 + i
                )
            })
            .collect();
        let r = run(wave, &asm, |w, _| {
            for (i, c) in cases.iter().enumerate() {
                w.s[40 + 2 * i] = c.1;
                w.s[41 + 2 * i] = c.2;
            }
        });
        for (i, c) in cases.iter().enumerate() {
            assert_eq!(
                r.wave.s[10 + i] != 0,
                c.3,
                "{wave:?} {} {:#x} {:#x}",
                c.0,
                c.1,
                c.2
            );
        }
    }
}

#[test]
fn the_borrowed_registers_are_restored() {
    for wave in [W32, W64] {
        let r = run(
            wave,
            "s_cmp_lt_f32 s2, s3\n\
             s_add_f32 s0, s2, s3\n\
             s_cvt_f16_f32 s1, s3",
            |w, _| {
                w.v[0] = std::array::from_fn(|l| 100 + l as u32);
                w.s[0] = 0x1111;
                w.s[1] = 0x2222;
                w.s[2] = f(1.0);
                w.s[3] = f(2.0);
            },
        );
        assert!(r.wave.scc);
        assert_eq!(r.wave.s[0], f(3.0));
        assert_eq!(r.wave.s[1], 0x4000);
        assert_eq!(r.wave.exec(), r.wave.lane_mask(), "{wave:?}");
        for l in 0..64 {
            assert_eq!(r.wave.v[0][l], 100 + l as u32, "{wave:?} lane {l}");
        }
    }
    // A compare keeps s0/s1 when they are not its operands.
    let r = run(W64, "s_cmp_u_f32 s2, s3", |w, _| {
        w.s[0] = 7;
        w.s[1] = 9;
        w.s[usize::from(sreg::VCC)] = 5;
    });
    assert_eq!((r.wave.s[0], r.wave.s[1]), (7, 9));
    assert_eq!(r.wave.s[usize::from(sreg::VCC)], 5);
}

/// gfx1100 has no scalar float operations: the bytes of gfx1151's
/// `s_add_f32` do not decode there, and the wave faults at them naming the
/// word rather than running them.
#[test]
fn gfx1100_faults_on_a_gfx1151_scalar_float_op() {
    let code = assemble_lines_in(T, W32, "s_add_f32 s2, s0, s1\ns_endpgm").concat();
    let prog = crate::exec::engine::Program::new_in(Target::Gfx1100, W32, CODE_BASE, code);
    let e = run_program(Target::Gfx1100, &prog, &mut |_, _| {}, ExecMode::Interp)
        .err()
        .expect("gfx1100 does not run s_add_f32");
    assert_eq!(e.1, CODE_BASE);
    assert!(matches!(e.0, Fault::Illegal(_)), "{:?}", e.0);
    assert!(e.0.to_string().contains("gfx1100"), "{}", e.0);
}
