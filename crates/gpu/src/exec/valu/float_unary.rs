//! One-source float operations: rounding to integral values, fract,
//! frexp, and the transcendental unit (rcp, rsq, sqrt, exp, log, sin, cos)
//! for f16, f32 and f64 (ISA manual, "VOP1 instructions").
//!
//! Precision: the hardware's transcendentals are accurate to about 1 ULP
//! (f32/f16) or 2^29 ULP (f64 rcp/rsq/sqrt, refined by the compiler with
//! Newton-Raphson steps). The emulator evaluates them in f64 (host libm)
//! and rounds once to the result format, so f32/f16 results are correctly
//! rounded except in rare near-tie cases, and f64 rcp/sqrt are correctly
//! rounded (rsq within 1 ULP). As the manual states, the f32 rcp, rsq,
//! sqrt, exp and log flush denormal inputs and results; sin/cos take
//! their input in revolutions (sin(2 * pi * x)) with exact range
//! reduction, so large inputs (integers) give sin = 0, cos = 1.

use super::float::*;
use super::*;
use crate::exec::op::{Ctx, Fault, Op};
use crate::float::Rounding;

/// The semantic function of a one-source float base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_trunc_f32" => v_trunc_f32,
        "v_ceil_f32" => v_ceil_f32,
        "v_floor_f32" => v_floor_f32,
        "v_rndne_f32" => v_rndne_f32,
        "v_fract_f32" => v_fract_f32,
        "v_frexp_mant_f32" => v_frexp_mant_f32,
        "v_frexp_exp_i32_f32" => v_frexp_exp_i32_f32,
        "v_rcp_f32" => v_rcp_f32,
        "v_rcp_iflag_f32" => v_rcp_iflag_f32,
        "v_rsq_f32" => v_rsq_f32,
        "v_sqrt_f32" => v_sqrt_f32,
        "v_exp_f32" | "v_exp_legacy_f32" => v_exp_f32,
        "v_log_f32" | "v_log_legacy_f32" => v_log_f32,
        "v_sin_f32" => v_sin_f32,
        "v_cos_f32" => v_cos_f32,
        "v_trunc_f16" => v_trunc_f16,
        "v_ceil_f16" => v_ceil_f16,
        "v_floor_f16" => v_floor_f16,
        "v_rndne_f16" => v_rndne_f16,
        "v_fract_f16" => v_fract_f16,
        "v_frexp_mant_f16" => v_frexp_mant_f16,
        "v_frexp_exp_i16_f16" => v_frexp_exp_i16_f16,
        "v_rcp_f16" => v_rcp_f16,
        "v_rsq_f16" => v_rsq_f16,
        "v_sqrt_f16" => v_sqrt_f16,
        "v_exp_f16" => v_exp_f16,
        "v_log_f16" => v_log_f16,
        "v_sin_f16" => v_sin_f16,
        "v_cos_f16" => v_cos_f16,
        "v_trunc_f64" => v_trunc_f64,
        "v_ceil_f64" => v_ceil_f64,
        "v_floor_f64" => v_floor_f64,
        "v_rndne_f64" => v_rndne_f64,
        "v_fract_f64" => v_fract_f64,
        "v_frexp_mant_f64" => v_frexp_mant_f64,
        "v_frexp_exp_i32_f64" => v_frexp_exp_i32_f64,
        "v_rcp_f64" => v_rcp_f64,
        "v_rsq_f64" => v_rsq_f64,
        "v_sqrt_f64" => v_sqrt_f64,
        _ => return None,
    })
}

/// The NaN the hardware produces for an invalid operation.
const NAN32: u32 = 0xffc0_0000;

/// Runs a one-source f32 operation.
#[inline(always)]
fn un32(c: &mut Ctx, op: &Op, f: impl Fn(f32) -> f32) -> Result<(), Fault> {
    let s0 = f32v(c, op, 0);
    let out: [f32; 64] = std::array::from_fn(|l| f(s0[l]));
    out32(c, op, &out);
    Ok(())
}

/// Runs a one-source f16 operation evaluated in f64 and rounded to
/// nearest even.
#[inline(always)]
fn un16(c: &mut Ctx, op: &Op, f: impl Fn(f64) -> f64) -> Result<(), Fault> {
    let s0 = h32(c, op, 0);
    let keep = dp_denorm_out(c);
    let out: [u16; 64] =
        std::array::from_fn(|l| out16(op, f(f64::from(s0[l])), 0.0, Rounding::NearestEven, keep));
    write_b16(c, op, &out);
    Ok(())
}

/// Runs a one-source f64 operation.
#[inline(always)]
fn un64(c: &mut Ctx, op: &Op, f: impl Fn(f64) -> f64) -> Result<(), Fault> {
    let s0 = d64(c, op, 0);
    let mut out: [f64; 64] = std::array::from_fn(|l| f(s0[l]));
    out64(c, op, &mut out);
    Ok(())
}

/// An f32 denormal flushed to a signed zero.
#[inline(always)]
fn ftz(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// Evaluates `f` in f64 for an f32 operand and rounds to f32, with
/// denormal inputs and results flushed; an invalid operation gives the
/// hardware's default NaN, a NaN input its quieted self.
#[inline(always)]
fn trans32(x: f32, f: impl Fn(f64) -> f64) -> f32 {
    let x = ftz(x);
    if x.is_nan() {
        return quiet32(x);
    }
    let r = f(f64::from(x)) as f32;
    if r.is_nan() {
        f32::from_bits(NAN32)
    } else {
        ftz(r)
    }
}

/// x - floor(x), below 1 (ISA manual: "result clamped to 0x3f7fffff").
fn fract_f64(x: f64, below_one: f64) -> f64 {
    let r = x - x.floor();
    if r.is_nan() { r } else { r.min(below_one) }
}

/// frexp: the significand in [0.5, 1) with the sign, and the exponent;
/// infinities and NaN give themselves and 0, zero gives zero and 0.
fn frexp(x: f64) -> (f64, i32) {
    if !x.is_finite() || x == 0.0 {
        return (x, 0);
    }
    let e = ilogb(x) + 1;
    (scalbn(x, -e), e)
}

/// sin or cos of 2 * pi * x, reducing x exactly modulo 1/4 turn.
fn sincos_rev(x: f64, cos: bool) -> f64 {
    if !x.is_finite() {
        return f64::from_bits(0xfff8_0000_0000_0000);
    }
    if x == 0.0 && !cos {
        return x;
    }
    // x - round(x) is exact; so are the quarter-turn reduction steps.
    let r = x - x.round();
    let q = (r * 4.0).round();
    let t = (r - q * 0.25) * std::f64::consts::TAU;
    let quadrant = (q as i64).rem_euclid(4) + if cos { 1 } else { 0 };
    let v = match quadrant % 4 {
        0 => t.sin(),
        1 => t.cos(),
        2 => -t.sin(),
        _ => -t.cos(),
    };
    // Exact zeros come out positive.
    if v == 0.0 { 0.0 } else { v }
}

pub fn v_trunc_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, f32::trunc)
}

pub fn v_ceil_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, f32::ceil)
}

pub fn v_floor_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, f32::floor)
}

pub fn v_rndne_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, f32::round_ties_even)
}

pub fn v_fract_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let below = f64::from(f32::from_bits(0x3f7f_ffff));
    un32(c, op, |x| {
        if x.is_infinite() {
            return f32::from_bits(NAN32);
        }
        fract_f64(f64::from(x), below) as f32
    })
}

pub fn v_frexp_mant_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, |x| frexp(f64::from(x)).0 as f32)
}

pub fn v_frexp_exp_i32_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = f32v(c, op, 0);
    let out: Lanes = std::array::from_fn(|l| frexp(f64::from(s0[l])).1 as u32);
    write_b32(c, op, &out);
    Ok(())
}

pub fn v_rcp_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, |x| trans32(x, |v| 1.0 / v))
}

/// `v_rcp_iflag_f32`: the reciprocal for integer division macros
/// (denormals kept).
pub fn v_rcp_iflag_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, |x| (1.0 / f64::from(x)) as f32)
}

pub fn v_rsq_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, |x| trans32(x, |v| 1.0 / v.sqrt()))
}

pub fn v_sqrt_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, |x| trans32(x, f64::sqrt))
}

/// 1/k! for k = 0..=13.
const INV_FACT: [f64; 14] = {
    let mut c = [1.0f64; 14];
    let mut k = 1;
    while k < 14 {
        c[k] = c[k - 1] / k as f64;
        k += 1;
    }
    c
};

/// 2^x for 64 f32 lanes, evaluated in f64 (relative error below 1e-15)
/// and rounded to f32, with denormal results flushed: 2^x = 2^k *
/// e^(f ln 2) with k = round(x), |f| <= 1/2, e^t by its Taylor series to
/// degree 13 (truncation error < 2e-17 for |t| <= 0.35). Written stage by
/// stage over the lanes so that every loop vectorises.
pub fn exp2_lanes(x: &[f32; 64]) -> [f32; 64] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { exp2_lanes_avx2(x) };
    }
    exp2_lanes_impl(x)
}

/// [`exp2_lanes`] compiled for AVX2 (4-wide f64 vectors; the same
/// operations, so the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn exp2_lanes_avx2(x: &[f32; 64]) -> [f32; 64] {
    exp2_lanes_impl(x)
}

#[inline(always)]
fn exp2_lanes_impl(x: &[f32; 64]) -> [f32; 64] {
    // 1.5 * 2^52: adding it rounds to an integer kept in the low bits.
    const MAGIC: f64 = 6755399441055744.0;
    let xd: [f64; 64] = std::array::from_fn(|l| f64::from(x[l]).clamp(-200.0, 200.0));
    let kk: [f64; 64] = std::array::from_fn(|l| xd[l] + MAGIC);
    let t: [f64; 64] = std::array::from_fn(|l| (xd[l] - (kk[l] - MAGIC)) * std::f64::consts::LN_2);
    // Horner's scheme on 1/13!, 1/12!, ..., 1/0!.
    let mut p = [INV_FACT[13]; 64];
    for &c in INV_FACT[..13].iter().rev() {
        for l in 0..64 {
            p[l] = p[l] * t[l] + c;
        }
    }
    std::array::from_fn(|l| {
        let k = kk[l].to_bits().wrapping_sub(MAGIC.to_bits()) as i64;
        let scale = f64::from_bits(((k + 1023) as u64) << 52);
        let r = (p[l] * scale) as f32;
        let r = if r.is_subnormal() { 0.0 } else { r };
        if x[l].is_nan() { quiet32(x[l]) } else { r }
    })
}

pub fn v_exp_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = f32v(c, op, 0);
    let out = exp2_lanes(&s0);
    out32(c, op, &out);
    Ok(())
}

pub fn v_log_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, |x| trans32(x, f64::log2))
}

pub fn v_sin_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, |x| {
        if x.is_nan() {
            quiet32(x)
        } else {
            sincos_rev(f64::from(x), false) as f32
        }
    })
}

pub fn v_cos_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un32(c, op, |x| {
        if x.is_nan() {
            quiet32(x)
        } else {
            sincos_rev(f64::from(x), true) as f32
        }
    })
}

/// An f64 NaN quieted, or the default NaN for an invalid operation.
#[inline(always)]
fn nan_or(x: f64, r: f64) -> f64 {
    if x.is_nan() {
        quiet64(x)
    } else if r.is_nan() {
        f64::from_bits(0xfff8_0000_0000_0000)
    } else {
        r
    }
}

pub fn v_trunc_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, f64::trunc)
}

pub fn v_ceil_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, f64::ceil)
}

pub fn v_floor_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, f64::floor)
}

pub fn v_rndne_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, f64::round_ties_even)
}

pub fn v_fract_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    // 0x3bff: the largest f16 below 1.
    un16(c, op, |x| nan_or(x, fract_f64(x, 1.0 - 2f64.powi(-11))))
}

pub fn v_frexp_mant_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, |x| frexp(x).0)
}

pub fn v_frexp_exp_i16_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = h32(c, op, 0);
    let out: [u16; 64] = std::array::from_fn(|l| frexp(f64::from(s0[l])).1 as i16 as u16);
    write_b16(c, op, &out);
    Ok(())
}

pub fn v_rcp_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, |x| nan_or(x, 1.0 / x))
}

pub fn v_rsq_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, |x| nan_or(x, 1.0 / x.sqrt()))
}

pub fn v_sqrt_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, |x| nan_or(x, x.sqrt()))
}

pub fn v_exp_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, |x| nan_or(x, x.exp2()))
}

pub fn v_log_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, |x| nan_or(x, x.log2()))
}

pub fn v_sin_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, |x| nan_or(x, sincos_rev(x, false)))
}

pub fn v_cos_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un16(c, op, |x| nan_or(x, sincos_rev(x, true)))
}

pub fn v_trunc_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un64(c, op, f64::trunc)
}

pub fn v_ceil_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un64(c, op, f64::ceil)
}

pub fn v_floor_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un64(c, op, f64::floor)
}

pub fn v_rndne_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un64(c, op, f64::round_ties_even)
}

pub fn v_fract_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let below = f64::from_bits(0x3fef_ffff_ffff_ffff);
    un64(c, op, |x| nan_or(x, fract_f64(x, below)))
}

pub fn v_frexp_mant_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un64(c, op, |x| frexp(x).0)
}

pub fn v_frexp_exp_i32_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = d64(c, op, 0);
    let out: Lanes = std::array::from_fn(|l| frexp(s0[l]).1 as u32);
    write_b32(c, op, &out);
    Ok(())
}

pub fn v_rcp_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un64(c, op, |x| nan_or(x, 1.0 / x))
}

pub fn v_rsq_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un64(c, op, |x| nan_or(x, 1.0 / x.sqrt()))
}

pub fn v_sqrt_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    un64(c, op, |x| nan_or(x, x.sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::testing::run;
    use rocjitsu_isa::Target;

    fn vals() -> Vec<f32> {
        let mut v = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            0.49999997,
            -1.2,
            1e-40,
            -1e-40,
            8388609.0,
            1e30,
            -1e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            0.25,
            0.125,
            -0.75,
            3.0,
            100.3,
            -0.001,
            4.0,
        ];
        let mut x = 0x9876_5431u32;
        while v.len() < 64 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            v.push(f32::from_bits(x & 0xc7ff_ffff));
        }
        v
    }

    fn same(a: u32, b: f32) -> bool {
        let x = f32::from_bits(a);
        (x.is_nan() && b.is_nan()) || a == b.to_bits()
    }

    #[test]
    fn rounding_to_integers_and_fract() {
        let v = vals();
        let r = run(
            Target::Gfx942,
            "v_trunc_f32 v1, v0\nv_ceil_f32 v2, v0\nv_floor_f32 v3, v0\n\
             v_rndne_f32 v4, v0\nv_fract_f32 v5, v0\nv_frexp_mant_f32 v6, v0\n\
             v_frexp_exp_i32_f32 v7, v0",
            |w, _| w.v[0] = std::array::from_fn(|l| v[l].to_bits()),
        )
        .unwrap();
        for (l, &x) in v.iter().enumerate() {
            let w = &r.wave.v;
            assert!(same(w[1][l], x.trunc()), "trunc {x}");
            assert!(same(w[2][l], x.ceil()), "ceil {x}");
            assert!(same(w[3][l], x.floor()), "floor {x}");
            assert!(same(w[4][l], x.round_ties_even()), "rndne {x}");
            if x.is_finite() {
                let f = (f64::from(x) - f64::from(x).floor()) as f32;
                let f = f.min(f32::from_bits(0x3f7f_ffff));
                assert!(same(w[5][l], f), "fract {x}");
                assert!(f32::from_bits(w[5][l]) < 1.0);
                // frexp: x == mant * 2^exp with mant in [0.5, 1).
                let m = f32::from_bits(w[6][l]);
                let e = w[7][l] as i32;
                if x != 0.0 {
                    assert!((0.5..1.0).contains(&m.abs()), "mant {x} {m}");
                }
                assert_eq!(f64::from(m) * 2f64.powi(e), f64::from(x), "frexp {x}");
            } else {
                assert!(f32::from_bits(w[5][l]).is_nan(), "fract {x}");
                assert_eq!(w[7][l], 0);
            }
        }
        // -1.2: DX fract is 0.8.
        let l = v.iter().position(|&x| x == -1.2).unwrap();
        assert!((f32::from_bits(r.wave.v[5][l]) - 0.8).abs() < 1e-6);
    }

    #[test]
    fn transcendentals_within_one_ulp() {
        let v = vals();
        let r = run(
            Target::Gfx942,
            "v_rcp_f32 v1, v0\nv_sqrt_f32 v2, |v0|\nv_rsq_f32 v3, |v0|\n\
             v_exp_f32 v4, v0\nv_log_f32 v5, |v0|\nv_sin_f32 v6, v0\nv_cos_f32 v7, v0",
            |w, _| w.v[0] = std::array::from_fn(|l| v[l].to_bits()),
        )
        .unwrap();
        let ulp_close = |got: u32, want: f64, what: &str, x: f32| {
            let g = f32::from_bits(got);
            let w = want as f32;
            let w = if w.is_subnormal() {
                0.0f32.copysign(w)
            } else {
                w
            };
            if w.is_nan() {
                assert!(g.is_nan(), "{what}({x}) = {g}, want NaN");
                return;
            }
            if w.is_infinite() || w == 0.0 {
                assert_eq!(g, w, "{what}({x})");
                return;
            }
            let d = (g.to_bits() as i64 - w.to_bits() as i64).abs();
            assert!(d <= 1, "{what}({x}) = {g}, want {w}");
        };
        for (l, &x) in v.iter().enumerate() {
            let xf = if x.is_subnormal() {
                0.0f32.copysign(x)
            } else {
                x
            };
            let d = f64::from(xf);
            let w = &r.wave.v;
            ulp_close(w[1][l], 1.0 / d, "rcp", x);
            ulp_close(w[2][l], d.abs().sqrt(), "sqrt", x);
            ulp_close(w[3][l], 1.0 / d.abs().sqrt(), "rsq", x);
            ulp_close(w[4][l], d.exp2(), "exp", x);
            ulp_close(w[5][l], d.abs().log2(), "log", x);
            if x.is_finite() {
                // Reference: reduce in f64 with the host's rem_euclid.
                let rr = f64::from(x).rem_euclid(1.0) * std::f64::consts::TAU;
                let (s, c) = (rr.sin(), rr.cos());
                let gs = f64::from(f32::from_bits(w[6][l]));
                let gc = f64::from(f32::from_bits(w[7][l]));
                assert!((gs - s).abs() < 1e-6, "sin({x}) = {gs}, want {s}");
                assert!((gc - c).abs() < 1e-6, "cos({x}) = {gc}, want {c}");
            } else {
                assert!(f32::from_bits(w[6][l]).is_nan());
            }
        }
        // Manual's examples.
        let r = run(
            Target::Gfx942,
            "v_sin_f32 v1, v0\nv_cos_f32 v2, v0\nv_log_f32 v3, v0\nv_rcp_f32 v4, v0",
            |w, _| {
                w.v[0][0] = 0x3e80_0000; // 0.25
                w.v[0][1] = 0xff7f_ffff; // -MaxFloat
                w.v[0][2] = 0x8000_0000;
                w.v[0][3] = 0xbf80_0000;
            },
        )
        .unwrap();
        let w = &r.wave.v;
        assert_eq!((w[1][0], w[2][0]), (0x3f80_0000, 0));
        assert_eq!((w[1][1], w[2][1]), (0, 0x3f80_0000));
        assert_eq!((w[1][2], w[2][2]), (0x8000_0000, 0x3f80_0000));
        assert_eq!(w[3][2], 0xff80_0000);
        assert_eq!(w[3][3], 0xffc0_0000);
        assert_eq!(w[4][2], 0xff80_0000);
    }

    #[test]
    fn f16_and_f64_unary() {
        use crate::float::{f16_to_f32, f32_to_f16};
        let rne = Rounding::NearestEven;
        let xs: Vec<u16> = (0..64u32).map(|i| (i * 0x0283 + 0x1000) as u16).collect();
        let r = run(
            Target::Gfx942,
            "v_sqrt_f16 v1, v0\nv_rcp_f16 v2, v0\nv_floor_f16 v3, v0\n\
             v_sqrt_f64 v[4:5], v[6:7]\nv_rcp_f64 v[8:9], v[6:7]\nv_fract_f64 v[10:11], v[6:7]",
            |w, _| {
                for l in 0..64 {
                    w.v[0][l] = u32::from(xs[l]);
                    let d = (l as f64 - 31.7) * 3.3;
                    w.v[6][l] = d.to_bits() as u32;
                    w.v[7][l] = (d.to_bits() >> 32) as u32;
                }
            },
        )
        .unwrap();
        let g64 = |v: usize, l: usize| {
            f64::from_bits(u64::from(r.wave.v[v][l]) | u64::from(r.wave.v[v + 1][l]) << 32)
        };
        for l in 0..64 {
            let x = f16_to_f32(xs[l]);
            let h = |y: f64| f32_to_f16(y as f32, rne);
            let eq = |got: u32, want: u16| {
                let g = got as u16;
                (g & 0x7fff > 0x7c00 && want & 0x7fff > 0x7c00) || g == want
            };
            assert!(eq(r.wave.v[1][l], h(f64::from(x).sqrt())), "sqrt {x}");
            assert!(eq(r.wave.v[2][l], h(1.0 / f64::from(x))), "rcp {x}");
            assert!(eq(r.wave.v[3][l], h(f64::from(x).floor())), "floor {x}");
            let d = (l as f64 - 31.7) * 3.3;
            assert!(same64(g64(4, l), d.sqrt()), "sqrt64 {d}");
            assert_eq!(g64(8, l), 1.0 / d);
            assert_eq!(g64(10, l), d - d.floor());
        }
    }

    fn same64(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    #[test]
    fn fast_exp2_matches_libm() {
        let mut x = 0x0bad_f00du32;
        let mut vals = vec![
            0.0f32,
            -0.0,
            1.0,
            -126.0,
            -126.00001,
            127.99999,
            128.0,
            -149.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-30,
        ];
        while vals.len() < 300_032 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            // Mostly in [-140, 140], some anywhere.
            vals.push(if x & 7 == 0 {
                f32::from_bits(x)
            } else {
                (x >> 8) as f32 / (1u32 << 24) as f32 * 280.0 - 140.0
            });
        }
        let mut inexact = 0;
        for chunk in vals.chunks_exact(64) {
            let lanes: [f32; 64] = std::array::from_fn(|l| chunk[l]);
            let got = exp2_lanes(&lanes);
            for (&v, &g) in chunk.iter().zip(&got) {
                let want = f64::from(v).exp2() as f32;
                let want = if want.is_subnormal() { 0.0 } else { want };
                if want.is_nan() {
                    assert!(g.is_nan());
                } else if g != want {
                    let d = (g.to_bits() as i64 - want.to_bits() as i64).abs();
                    assert!(d <= 1, "exp2({v:e}) = {g:e}, libm {want:e}");
                    inexact += 1;
                }
            }
        }
        assert!(
            inexact < 30,
            "{inexact} results differ from libm by one ulp"
        );
    }
}
