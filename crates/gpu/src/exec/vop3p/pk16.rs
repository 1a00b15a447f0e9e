//! Packed 16-bit math: `v_pk_*_i16`, `v_pk_*_u16`, `v_pk_*_b16` and
//! `v_pk_*_f16` (two independent 16-bit operations per lane, ISA manual,
//! "VOP3P instructions").
//!
//! Integer ops with clamp saturate to the result type's range; f16 ops
//! obey MODE's f16 rounding and denormal controls and clamp to [0, 1].

use super::{Cst, Fp, half, halves, write16x2};
use crate::exec::op::{Ctx, ExecFn, Fault, Op};

/// The semantic function of a packed 16-bit mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_pk_add_u16" => v_pk_add_u16,
        "v_pk_sub_u16" => v_pk_sub_u16,
        "v_pk_add_i16" => v_pk_add_i16,
        "v_pk_sub_i16" => v_pk_sub_i16,
        "v_pk_mul_lo_u16" => v_pk_mul_lo_u16,
        "v_pk_mad_u16" => v_pk_mad_u16,
        "v_pk_mad_i16" => v_pk_mad_i16,
        "v_pk_lshlrev_b16" => v_pk_lshlrev_b16,
        "v_pk_lshrrev_b16" => v_pk_lshrrev_b16,
        "v_pk_ashrrev_i16" => v_pk_ashrrev_i16,
        "v_pk_max_i16" => v_pk_max_i16,
        "v_pk_min_i16" => v_pk_min_i16,
        "v_pk_max_u16" => v_pk_max_u16,
        "v_pk_min_u16" => v_pk_min_u16,
        "v_pk_add_f16" => v_pk_add_f16,
        "v_pk_mul_f16" => v_pk_mul_f16,
        "v_pk_fma_f16" => v_pk_fma_f16,
        "v_pk_min_f16" => v_pk_min_f16,
        "v_pk_max_f16" => v_pk_max_f16,
        "v_pk_minimum3_f16" => v_pk_minimum3_f16,
        "v_pk_maximum3_f16" => v_pk_maximum3_f16,
        _ => return None,
    })
}

/// Saturates to u16 / i16.
#[inline]
fn sat_u(x: i64) -> u16 {
    x.clamp(0, 0xffff) as u16
}

#[inline]
fn sat_i(x: i64) -> u16 {
    x.clamp(-0x8000, 0x7fff) as i16 as u16
}

/// Applies `f(a, b, clamp)` to both halves of two integer sources.
#[inline]
fn int2(c: &mut Ctx, op: &Op, f: impl Fn(u16, u16, bool) -> u16) -> Result<(), Fault> {
    let a = halves(c, op, 0, Cst::B32, false);
    let b = halves(c, op, 1, Cst::B32, false);
    let cl = op.mods.clamp;
    let lo: [u16; 64] = std::array::from_fn(|l| f(a[0][l], b[0][l], cl));
    let hi: [u16; 64] = std::array::from_fn(|l| f(a[1][l], b[1][l], cl));
    write16x2(c, op, &lo, &hi);
    Ok(())
}

/// Applies `f(a, b, c, clamp)` to both halves of three integer sources.
#[inline]
fn int3(c: &mut Ctx, op: &Op, f: impl Fn(u16, u16, u16, bool) -> u16) -> Result<(), Fault> {
    let a = halves(c, op, 0, Cst::B32, false);
    let b = halves(c, op, 1, Cst::B32, false);
    let d = halves(c, op, 2, Cst::B32, false);
    let cl = op.mods.clamp;
    let lo: [u16; 64] = std::array::from_fn(|l| f(a[0][l], b[0][l], d[0][l], cl));
    let hi: [u16; 64] = std::array::from_fn(|l| f(a[1][l], b[1][l], d[1][l], cl));
    write16x2(c, op, &lo, &hi);
    Ok(())
}

fn v_pk_add_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |a, b, cl| {
        if cl {
            a.saturating_add(b)
        } else {
            a.wrapping_add(b)
        }
    })
}

fn v_pk_sub_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |a, b, cl| {
        if cl {
            a.saturating_sub(b)
        } else {
            a.wrapping_sub(b)
        }
    })
}

fn v_pk_add_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |a, b, cl| {
        let (a, b) = (a as i16, b as i16);
        (if cl {
            a.saturating_add(b)
        } else {
            a.wrapping_add(b)
        }) as u16
    })
}

fn v_pk_sub_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |a, b, cl| {
        let (a, b) = (a as i16, b as i16);
        (if cl {
            a.saturating_sub(b)
        } else {
            a.wrapping_sub(b)
        }) as u16
    })
}

/// Low 16 bits of the product; with clamp, the product saturated to u16.
fn v_pk_mul_lo_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |a, b, cl| {
        let p = u32::from(a) * u32::from(b);
        if cl { sat_u(p.into()) } else { p as u16 }
    })
}

fn v_pk_mad_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int3(c, op, |a, b, d, cl| {
        let x = i64::from(a) * i64::from(b) + i64::from(d);
        if cl { sat_u(x) } else { x as u16 }
    })
}

fn v_pk_mad_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int3(c, op, |a, b, d, cl| {
        let x = i64::from(a as i16) * i64::from(b as i16) + i64::from(d as i16);
        if cl { sat_i(x) } else { x as u16 }
    })
}

/// Shifts: the shift amount is source 0's low 4 bits, the value source 1.
fn v_pk_lshlrev_b16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |s, v, _| v << (s & 15))
}

fn v_pk_lshrrev_b16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |s, v, _| v >> (s & 15))
}

fn v_pk_ashrrev_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |s, v, _| ((v as i16) >> (s & 15)) as u16)
}

fn v_pk_max_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |a, b, _| (a as i16).max(b as i16) as u16)
}

fn v_pk_min_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |a, b, _| (a as i16).min(b as i16) as u16)
}

fn v_pk_max_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |a, b, _| a.max(b))
}

fn v_pk_min_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    int2(c, op, |a, b, _| a.min(b))
}

// ---------------------------------------------------------------------------
// f16.

/// Applies `f` (on exact f64 values) to both halves of `N` f16 sources and
/// rounds each result to f16.
#[inline]
fn f16n<const N: usize>(c: &mut Ctx, op: &Op, f: impl Fn([f64; N]) -> f64) -> Result<(), Fault> {
    let fp = Fp::of(c);
    let s: [[[u16; 64]; 2]; N] = std::array::from_fn(|i| halves(c, op, i, Cst::F16, true));
    let cl = op.mods.clamp;
    let lo: [u16; 64] =
        std::array::from_fn(|l| fp.h_out(f(std::array::from_fn(|i| fp.h_in(s[i][0][l]))), cl));
    let hi: [u16; 64] =
        std::array::from_fn(|l| fp.h_out(f(std::array::from_fn(|i| fp.h_in(s[i][1][l]))), cl));
    write16x2(c, op, &lo, &hi);
    Ok(())
}

fn v_pk_add_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16n(c, op, |[a, b]| a + b)
}

fn v_pk_mul_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16n(c, op, |[a, b]| a * b)
}

/// The product of two f16 values is exact in f64; the sum rounds once.
fn v_pk_fma_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16n(c, op, |[a, b, d]| a * b + d)
}

/// Min/max on f16 values (exact in f32) with the VALU's NaN and signed
/// zero rules.
fn v_pk_min_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let ieee = Fp::of(c).ieee;
    f16n(c, op, |[a, b]| {
        f64::from(half::minmax(a as f32, b as f32, false, ieee))
    })
}

fn v_pk_max_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let ieee = Fp::of(c).ieee;
    f16n(c, op, |[a, b]| {
        f64::from(half::minmax(a as f32, b as f32, true, ieee))
    })
}

/// gfx950: IEEE 754-2019 minimum of three (NaN-propagating).
fn v_pk_minimum3_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16n(c, op, |[a, b, d]| {
        let m = half::minimum(a as f32, b as f32, false);
        f64::from(half::minimum(m, d as f32, false))
    })
}

fn v_pk_maximum3_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16n(c, op, |[a, b, d]| {
        let m = half::minimum(a as f32, b as f32, true);
        f64::from(half::minimum(m, d as f32, true))
    })
}

#[cfg(test)]
mod tests {
    use crate::exec::testing::run;
    use crate::float::{Rounding, f16_to_f32, f32_to_f16};
    use rocjitsu_isa::Target;

    /// Interesting 16-bit values: zero, one, signed extremes, small and
    /// large magnitudes.
    const I16S: [u16; 16] = [
        0, 1, 2, 0x7fff, 0x8000, 0xffff, 0xfffe, 0x1234, 0x00ff, 0x8001, 0x4000, 0xc000, 15, 16,
        0x7ffe, 0x5555,
    ];

    /// Lane `l`'s dword for source `k`: two values from the table.
    fn pack(l: usize, k: usize) -> u32 {
        let a = I16S[(l + 3 * k) % 16];
        let b = I16S[(l / 4 + 5 * k + 1) % 16];
        u32::from(a) | (u32::from(b) << 16)
    }

    /// Runs `asm` with v1, v2, v3 filled from the table and checks v0
    /// against `f` applied to (src0, src1, src2) per half.
    fn check_int(asm: &str, f: impl Fn(u16, u16, u16) -> u16) {
        let r = run(Target::Gfx942, asm, |w, _| {
            for l in 0..64 {
                for k in 0..3 {
                    w.v[1 + k][l] = pack(l, k);
                }
            }
        })
        .unwrap();
        for l in 0..64 {
            let s: Vec<u32> = (0..3).map(|k| pack(l, k)).collect();
            let want_lo = f(s[0] as u16, s[1] as u16, s[2] as u16);
            let want_hi = f(
                (s[0] >> 16) as u16,
                (s[1] >> 16) as u16,
                (s[2] >> 16) as u16,
            );
            let got = r.wave.v[0][l];
            assert_eq!(
                (got as u16, (got >> 16) as u16),
                (want_lo, want_hi),
                "{asm} lane {l}: {s:x?}"
            );
        }
    }

    #[test]
    fn integer_ops_match_reference() {
        let i = |x: u16| i64::from(x as i16);
        let u = i64::from;
        let sat_i = |x: i64| x.clamp(-32768, 32767) as u16;
        let sat_u = |x: i64| x.clamp(0, 65535) as u16;
        check_int("v_pk_add_u16 v0, v1, v2", |a, b, _| (u(a) + u(b)) as u16);
        check_int("v_pk_add_u16 v0, v1, v2 clamp", |a, b, _| {
            sat_u(u(a) + u(b))
        });
        check_int("v_pk_sub_u16 v0, v1, v2", |a, b, _| (u(a) - u(b)) as u16);
        check_int("v_pk_sub_u16 v0, v1, v2 clamp", |a, b, _| {
            sat_u(u(a) - u(b))
        });
        check_int("v_pk_add_i16 v0, v1, v2", |a, b, _| (i(a) + i(b)) as u16);
        check_int("v_pk_add_i16 v0, v1, v2 clamp", |a, b, _| {
            sat_i(i(a) + i(b))
        });
        check_int("v_pk_sub_i16 v0, v1, v2 clamp", |a, b, _| {
            sat_i(i(a) - i(b))
        });
        check_int("v_pk_mul_lo_u16 v0, v1, v2", |a, b, _| (u(a) * u(b)) as u16);
        check_int("v_pk_mad_u16 v0, v1, v2, v3", |a, b, d| {
            (u(a) * u(b) + u(d)) as u16
        });
        check_int("v_pk_mad_u16 v0, v1, v2, v3 clamp", |a, b, d| {
            sat_u(u(a) * u(b) + u(d))
        });
        check_int("v_pk_mad_i16 v0, v1, v2, v3", |a, b, d| {
            (i(a) * i(b) + i(d)) as u16
        });
        check_int("v_pk_mad_i16 v0, v1, v2, v3 clamp", |a, b, d| {
            sat_i(i(a) * i(b) + i(d))
        });
        check_int("v_pk_lshlrev_b16 v0, v1, v2", |s, v, _| {
            ((u(v) << (s % 16)) & 0xffff) as u16
        });
        check_int("v_pk_lshrrev_b16 v0, v1, v2", |s, v, _| {
            (u(v) >> (s % 16)) as u16
        });
        check_int("v_pk_ashrrev_i16 v0, v1, v2", |s, v, _| {
            (i(v) >> (s % 16)) as u16
        });
        check_int("v_pk_max_i16 v0, v1, v2", |a, b, _| i(a).max(i(b)) as u16);
        check_int("v_pk_min_i16 v0, v1, v2", |a, b, _| i(a).min(i(b)) as u16);
        check_int("v_pk_max_u16 v0, v1, v2", |a, b, _| a.max(b));
        check_int("v_pk_min_u16 v0, v1, v2", |a, b, _| a.min(b));
    }

    /// op_sel picks the half each source gives the low result, op_sel_hi
    /// the high result's.
    #[test]
    fn op_sel_swizzles_halves() {
        let r = run(
            Target::Gfx942,
            "v_pk_add_u16 v0, v1, v2 op_sel:[1,0] op_sel_hi:[0,1]\n\
             v_pk_sub_i16 v3, v1, v2 op_sel:[1,1] op_sel_hi:[0,0]",
            |w, _| {
                for l in 0..64 {
                    w.v[1][l] = pack(l, 0);
                    w.v[2][l] = pack(l, 1);
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let (a, b) = (pack(l, 0), pack(l, 1));
            let (alo, ahi, blo, bhi) = (a as u16, (a >> 16) as u16, b as u16, (b >> 16) as u16);
            let lo = ahi.wrapping_add(blo);
            let hi = alo.wrapping_add(bhi);
            assert_eq!(
                r.wave.v[0][l],
                u32::from(lo) | (u32::from(hi) << 16),
                "lane {l}"
            );
            let lo = ahi.wrapping_sub(bhi);
            let hi = alo.wrapping_sub(blo);
            assert_eq!(
                r.wave.v[3][l],
                u32::from(lo) | (u32::from(hi) << 16),
                "lane {l}"
            );
        }
    }

    /// Inline constants in packed operands (GFX9): an integer constant is
    /// sign-extended to 32 bits, so both halves see it only when negative;
    /// a float constant is the f16 value in the low half for f16 ops and
    /// the f32 bit pattern for integer ops.
    #[test]
    fn inline_constants_fill_the_32_bit_container() {
        let r = run(
            Target::Gfx942,
            "v_pk_add_u16 v0, v1, 5\n\
             v_pk_add_u16 v2, v1, -1\n\
             v_pk_add_u16 v3, v1, 1.0\n\
             v_pk_add_f16 v4, v5, 1.0\n\
             v_pk_add_f16 v6, v5, 1.0 op_sel_hi:[1,0]\n\
             v_pk_add_u16 v7, v1, 5 op_sel:[0,1] op_sel_hi:[1,1]",
            |w, _| {
                w.v[1] = [0x0010_0020; 64];
                w.v[5] = [0x4000_3c00; 64]; // (hi 2.0, lo 1.0)
            },
        )
        .unwrap();
        let w = &r.wave;
        assert_eq!(w.v[0][0], 0x0010_0025);
        assert_eq!(w.v[2][0], 0x000f_001f);
        assert_eq!(w.v[3][0], 0x3f90_0020);
        // lo 1.0 + 1.0 = 2.0; hi 2.0 + 0.0 = 2.0
        assert_eq!(w.v[4][0], 0x4000_4000);
        // op_sel_hi:[1,0]: the high result reads src1's low half (1.0).
        assert_eq!(w.v[6][0], 0x4200_4000);
        // The constant's high half is 0, whichever result reads it.
        assert_eq!(w.v[7][0], 0x0010_0020);
    }

    fn h(x: f32) -> u16 {
        f32_to_f16(x, Rounding::NearestEven)
    }

    const F16S: [f32; 16] = [
        0.0,
        -0.0,
        1.0,
        -2.5,
        65504.0,
        -65504.0,
        6.1e-5,
        5.96e-8,
        -3.0e-6,
        0.333,
        1000.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        7.0,
        0.1,
    ];

    fn fpack(l: usize, k: usize) -> u32 {
        let a = h(F16S[(l + 5 * k) % 16]);
        let b = h(F16S[(l / 4 + 3 * k + 2) % 16]);
        u32::from(a) | (u32::from(b) << 16)
    }

    /// Rounds an exact value to f16 (nearest even) independently of the
    /// code under test: round to f32 with round-to-odd (exact truncation
    /// plus a sticky bit), which f32-to-f16 rounding then turns into the
    /// correctly rounded f16.
    fn round_f16(y: f64) -> u16 {
        let mut t = y as f32;
        if t.is_finite() && f64::from(t) != y {
            if f64::from(t).abs() > y.abs() {
                t = f32::from_bits(t.to_bits() - 1);
            }
            t = f32::from_bits(t.to_bits() | 1);
        }
        f32_to_f16(t, Rounding::NearestEven)
    }

    /// Checks an f16 op against the exact result `f` (in f64) rounded to
    /// f16 by [`round_f16`] (values compared bitwise, NaNs as NaN).
    fn check_f16(asm: &str, clamp: bool, f: impl Fn(f64, f64, f64) -> f64) {
        let r = run(Target::Gfx942, asm, |w, _| {
            for l in 0..64 {
                for k in 0..3 {
                    w.v[1 + k][l] = fpack(l, k);
                }
            }
        })
        .unwrap();
        for l in 0..64 {
            let s: Vec<u32> = (0..3).map(|k| fpack(l, k)).collect();
            for half in 0..2 {
                let x = |k: usize| f64::from(f16_to_f32((s[k] >> (16 * half)) as u16));
                let mut y = f(x(0), x(1), x(2));
                if clamp {
                    y = if y.is_nan() { 0.0 } else { y.clamp(0.0, 1.0) };
                }
                let want = round_f16(y);
                let got = (r.wave.v[0][l] >> (16 * half)) as u16;
                if f16_to_f32(want).is_nan() {
                    assert!(f16_to_f32(got).is_nan(), "{asm} lane {l} half {half}");
                } else {
                    assert_eq!(got, want, "{asm} lane {l} half {half}: {s:x?}");
                }
            }
        }
    }

    #[test]
    fn f16_ops_match_reference() {
        check_f16("v_pk_add_f16 v0, v1, v2", false, |a, b, _| a + b);
        check_f16("v_pk_mul_f16 v0, v1, v2", false, |a, b, _| a * b);
        check_f16("v_pk_mul_f16 v0, v1, v2 clamp", true, |a, b, _| a * b);
        check_f16(
            "v_pk_add_f16 v0, v1, v2 neg_lo:[0,1] neg_hi:[0,1]",
            false,
            |a, b, _| a - b,
        );
        check_f16("v_pk_fma_f16 v0, v1, v2, v3", false, |a, b, d| a * b + d);
        let min = |a: f64, b: f64| {
            if a.is_nan() {
                b
            } else if b.is_nan() || a < b || (a == b && a.is_sign_negative()) {
                a
            } else {
                b
            }
        };
        check_f16("v_pk_min_f16 v0, v1, v2", false, |a, b, _| min(a, b));
        check_f16("v_pk_max_f16 v0, v1, v2", false, |a, b, _| -min(-a, -b));
    }

    /// The fma rounds once: (1 + 2^-10)^2 - (1 + 2^-9) is exactly 2^-20,
    /// where rounding the product to f16 first would give 0.
    #[test]
    fn f16_fma_rounds_once() {
        let r = run(Target::Gfx942, "v_pk_fma_f16 v0, v1, v1, v2", |w, _| {
            w.v[1] = [u32::from(h(1.0 + 1.0 / 1024.0)) * 0x1_0001; 64];
            w.v[2] = [u32::from(h(-(1.0 + 1.0 / 512.0))) * 0x1_0001; 64];
        })
        .unwrap();
        // 2^-20 is the f16 denormal 16 * 2^-24.
        assert_eq!(r.wave.v[0][0], 0x0010_0010);
    }

    /// MODE.FP_ROUND's f16 field rounds toward zero; MODE's f16 denormal
    /// field flushes.
    #[test]
    fn f16_mode_rounding_and_flushing() {
        let r = run(Target::Gfx942, "v_pk_add_f16 v0, v1, v2", |w, _| {
            // f16 round toward zero (FP_ROUND[3:2] = 3), f32 denormals kept,
            // f16 denormals flushed.
            w.mode = 0x0c | 0x30;
            w.v[1] = [u32::from(h(1.0)) | (u32::from(h(6.0e-8)) << 16); 64];
            w.v[2] = [u32::from(h(1.0 / 4096.0)) | (u32::from(h(0.0)) << 16); 64];
        })
        .unwrap();
        // 1 + 2^-12 toward zero is 1.0; the denormal input flushes to 0.
        assert_eq!(r.wave.v[0][0], u32::from(h(1.0)));
    }

    /// Inactive lanes keep their value.
    #[test]
    fn exec_masks_lanes() {
        let r = run(
            Target::Gfx942,
            "s_mov_b64 exec, 0x5555\nv_pk_add_u16 v0, v1, v1",
            |w, _| {
                w.v[1] = [0x0001_0002; 64];
                w.v[0] = [7; 64];
            },
        )
        .unwrap();
        for l in 0..64 {
            let on = l < 16 && l % 2 == 0;
            assert_eq!(r.wave.v[0][l], if on { 0x0002_0004 } else { 7 }, "lane {l}");
        }
    }
}
