//! Floating-point arithmetic: add/sub/mul, fused and unfused multiply-add,
//! min/max/med3, ldexp, the f16 dot products, cube-map helpers and
//! `v_pack_b32_f16` (ISA manual, "VOP2 / VOP3A instructions").
//!
//! f32 operations use the host's IEEE arithmetic when MODE rounds to
//! nearest even and an exact f64 evaluation rounded by
//! [`round_fmt`](super::float::round_fmt) otherwise; f16 operations are
//! evaluated exactly in f64 and rounded once.

use super::float::*;
use super::*;
use crate::exec::op::{Ctx, Fault, Op};
use crate::float::Rounding;

/// The semantic function of an arithmetic float base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_add_f32" => v_add_f32,
        "v_sub_f32" => v_sub_f32,
        "v_subrev_f32" => v_subrev_f32,
        "v_mul_f32" => v_mul_f32,
        "v_mul_legacy_f32" => v_mul_legacy_f32,
        "v_fma_f32" | "v_fmac_f32" | "v_fmamk_f32" | "v_fmaak_f32" => v_fma_f32,
        "v_mad_f32" | "v_mac_f32" | "v_madmk_f32" | "v_madak_f32" => v_mad_f32,
        "v_mad_legacy_f32" => v_mad_legacy_f32,
        "v_min_f32" => v_min_f32,
        "v_max_f32" => v_max_f32,
        "v_min3_f32" => v_min3_f32,
        "v_max3_f32" => v_max3_f32,
        // GFX11+ (RDNA3 ISA: V_MAXMIN_F32 is V_MIN_F32(V_MAX_F32(S0, S1),
        // S2), V_MINMAX_F32 is V_MAX_F32(V_MIN_F32(S0, S1), S2)).
        "v_maxmin_f32" => v_maxmin_f32,
        "v_minmax_f32" => v_minmax_f32,
        "v_med3_f32" => v_med3_f32,
        "v_minimum3_f32" => v_minimum3_f32,
        "v_maximum3_f32" => v_maximum3_f32,
        "v_ldexp_f32" => v_ldexp_f32,
        "v_add_f16" => v_add_f16,
        "v_sub_f16" => v_sub_f16,
        "v_subrev_f16" => v_subrev_f16,
        "v_mul_f16" => v_mul_f16,
        "v_mac_f16" | "v_mad_legacy_f16" => v_mad_f16_lo,
        "v_madmk_f16" | "v_madak_f16" => v_mad_f16_lo,
        "v_mad_f16" => v_mad_f16,
        "v_fma_f16" => v_fma_f16,
        "v_fma_legacy_f16" => v_fma_f16_lo,
        "v_pk_fmac_f16" => v_pk_fmac_f16,
        "v_min_f16" => v_min_f16,
        "v_max_f16" => v_max_f16,
        "v_maxmin_f16" => v_maxmin_f16,
        "v_minmax_f16" => v_minmax_f16,
        "v_min3_f16" => v_min3_f16,
        "v_max3_f16" => v_max3_f16,
        "v_med3_f16" => v_med3_f16,
        "v_ldexp_f16" => v_ldexp_f16,
        "v_add_f64" => v_add_f64,
        "v_mul_f64" => v_mul_f64,
        "v_fma_f64" | "v_fmac_f64" => v_fma_f64,
        "v_min_f64" => v_min_f64,
        "v_max_f64" => v_max_f64,
        "v_ldexp_f64" => v_ldexp_f64,
        "v_dot2c_f32_f16" => v_dot2c_f32_f16,
        "v_dot2c_f32_bf16" => v_dot2c_f32_bf16,
        "v_cubeid_f32" => v_cubeid_f32,
        "v_cubesc_f32" => v_cubesc_f32,
        "v_cubetc_f32" => v_cubetc_f32,
        "v_cubema_f32" => v_cubema_f32,
        "v_pack_b32_f16" => v_pack_b32_f16,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// f32.

/// Runs a two-source f32 operation: `rne` when MODE rounds to nearest
/// even, `dir` with the rounding direction otherwise.
#[inline(always)]
fn f32_2(
    c: &mut Ctx,
    op: &Op,
    rne: impl Fn(f32, f32) -> f32,
    dir: impl Fn(f32, f32, Rounding) -> f32,
) -> Result<(), Fault> {
    let (s0, s1) = (f32v(c, op, 0), f32v(c, op, 1));
    let r = round32(c);
    let out: [f32; 64] = if r == Rounding::NearestEven {
        std::array::from_fn(|l| rne(s0[l], s1[l]))
    } else {
        std::array::from_fn(|l| dir(s0[l], s1[l], r))
    };
    out32(c, op, &out);
    Ok(())
}

fn add_dir(a: f32, b: f32, r: Rounding) -> f32 {
    let (s, e) = two_sum(f64::from(a), f64::from(b));
    to_f32(s, e, r)
}

fn mul_dir(a: f32, b: f32, r: Rounding) -> f32 {
    to_f32(f64::from(a) * f64::from(b), 0.0, r)
}

/// f32 fused multiply-add, correctly rounded to nearest even: the product
/// is exact in f64, the sum is rounded to odd at 53 bits (exact error by
/// TwoSum) so that the final rounding to 24 bits is correct. Branch-free
/// so that lane loops vectorise without a hardware FMA.
#[inline(always)]
pub fn fma32(a: f32, b: f32, c: f32) -> f32 {
    let p = f64::from(a) * f64::from(b);
    let (s, e) = two_sum(p, f64::from(c));
    let bits = s.to_bits();
    let even = bits & 1 == 0;
    let inexact = e != 0.0;
    // Step to the odd neighbour in the direction of the error.
    let grow = (e > 0.0) == (s > 0.0);
    let adj = if even && inexact {
        if grow {
            bits.wrapping_add(1)
        } else {
            bits.wrapping_sub(1)
        }
    } else {
        bits
    };
    f64::from_bits(adj) as f32
}

fn fma_dir(a: f32, b: f32, c: f32, r: Rounding) -> f32 {
    let p = f64::from(a) * f64::from(b);
    let (s, e) = two_sum(p, f64::from(c));
    to_f32(s, e, r)
}

pub fn v_add_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_2(c, op, |a, b| a + b, add_dir)
}

pub fn v_sub_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_2(c, op, |a, b| a - b, |a, b, r| add_dir(a, -b, r))
}

pub fn v_subrev_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_2(c, op, |a, b| b - a, |a, b, r| add_dir(b, -a, r))
}

pub fn v_mul_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_2(c, op, |a, b| a * b, mul_dir)
}

/// `v_mul_legacy_f32`: DX9 multiply, 0 times anything (even inf or NaN)
/// is +0.
pub fn v_mul_legacy_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_2(
        c,
        op,
        |a, b| if a == 0.0 || b == 0.0 { 0.0 } else { a * b },
        |a, b, r| {
            if a == 0.0 || b == 0.0 {
                0.0
            } else {
                mul_dir(a, b, r)
            }
        },
    )
}

/// `v_fma_f32` and its two-address and literal forms: fused multiply-add.
pub fn v_fma_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1, s2) = (f32v(c, op, 0), f32v(c, op, 1), f32v(c, op, 2));
    let r = round32(c);
    let out: [f32; 64] = if r == Rounding::NearestEven {
        fma_lanes32(&s0, &s1, &s2)
    } else {
        std::array::from_fn(|l| fma_dir(s0[l], s1[l], s2[l], r))
    };
    out32(c, op, &out);
    Ok(())
}

/// An f32 denormal flushed to a signed zero.
#[inline(always)]
fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// `v_mad_f32`, `v_mac_f32`, `v_madmk_f32`, `v_madak_f32`: multiply-add
/// with the product rounded to f32 before the add (not fused); denormal
/// inputs, product and result are flushed (ISA manual: "denormals are
/// flushed").
pub fn v_mad_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    mad32(c, op, false)
}

/// `v_mad_legacy_f32`: [`v_mad_f32`] with the DX9 multiply of
/// `v_mul_legacy_f32`: a zero factor (after denormal flushing) makes the
/// product +0 even when the other factor is an infinity or a NaN.
pub fn v_mad_legacy_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    mad32(c, op, true)
}

fn mad32(c: &mut Ctx, op: &Op, legacy: bool) -> Result<(), Fault> {
    let (s0, s1, s2) = (f32s(c, op, 0), f32s(c, op, 1), f32s(c, op, 2));
    let r = round32(c);
    let out: [f32; 64] = std::array::from_fn(|l| {
        let (a, b, d) = (ftz32(s0[l]), ftz32(s1[l]), ftz32(s2[l]));
        let p = if legacy && (a == 0.0 || b == 0.0) {
            0.0
        } else if r == Rounding::NearestEven {
            ftz32(a * b)
        } else {
            ftz32(mul_dir(a, b, r))
        };
        if r == Rounding::NearestEven {
            ftz32(p + d)
        } else {
            ftz32(add_dir(p, d, r))
        }
    });
    write_f32(c, op, &out);
    Ok(())
}

/// IEEE-mode aware minimum (ISA manual, `V_MIN_F32`): with MODE.IEEE a
/// signaling NaN gives its quieted self; otherwise a NaN loses to a
/// number; -0 is below +0.
#[inline(always)]
pub fn min32(a: f32, b: f32, ieee: bool) -> f32 {
    if ieee && snan32(a) {
        quiet32(a)
    } else if ieee && snan32(b) {
        quiet32(b)
    } else if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_negative() { a } else { b }
    } else if a < b {
        a
    } else {
        b
    }
}

/// IEEE-mode aware maximum (ISA manual, `V_MAX_F32`).
#[inline(always)]
pub fn max32(a: f32, b: f32, ieee: bool) -> f32 {
    if ieee && snan32(a) {
        quiet32(a)
    } else if ieee && snan32(b) {
        quiet32(b)
    } else if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_positive() { a } else { b }
    } else if a >= b {
        a
    } else {
        b
    }
}

/// `V_MED3_F32`: with any NaN the min3, otherwise the median.
#[inline(always)]
pub fn med3_32(a: f32, b: f32, d: f32, ieee: bool) -> f32 {
    if a.is_nan() || b.is_nan() || d.is_nan() {
        return min32(min32(a, b, ieee), d, ieee);
    }
    let m = max32(max32(a, b, ieee), d, ieee);
    if m == a {
        max32(b, d, ieee)
    } else if m == b {
        max32(a, d, ieee)
    } else {
        max32(a, b, ieee)
    }
}

/// Runs a two-source f32 selection: `fast` (branch-free, for NaN-free
/// lanes) when no lane has a NaN, else `exact`.
#[inline(always)]
fn sel32(
    c: &mut Ctx,
    op: &Op,
    fast: impl Fn(f32, f32) -> f32,
    exact: impl Fn(f32, f32) -> f32,
) -> Result<(), Fault> {
    let (s0, s1) = (f32v(c, op, 0), f32v(c, op, 1));
    let nan = s0
        .iter()
        .zip(&s1)
        .fold(false, |n, (a, b)| n | a.is_nan() | b.is_nan());
    let out: [f32; 64] = if nan {
        std::array::from_fn(|l| exact(s0[l], s1[l]))
    } else {
        std::array::from_fn(|l| fast(s0[l], s1[l]))
    };
    out32(c, op, &out);
    Ok(())
}

/// NaN-free minimum with -0 below +0: equal operands are either the same
/// value or a pair of zeros, whose OR is -0 if either is.
#[inline(always)]
fn min32_nonan(a: f32, b: f32) -> f32 {
    let eq = f32::from_bits(a.to_bits() | b.to_bits());
    if a < b {
        a
    } else if b < a {
        b
    } else {
        eq
    }
}

/// NaN-free maximum with +0 above -0.
#[inline(always)]
fn max32_nonan(a: f32, b: f32) -> f32 {
    let eq = f32::from_bits(a.to_bits() & b.to_bits());
    if a > b {
        a
    } else if b > a {
        b
    } else {
        eq
    }
}

pub fn v_min_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel32(c, op, min32_nonan, |a, b| min32(a, b, i))
}

pub fn v_max_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel32(c, op, max32_nonan, |a, b| max32(a, b, i))
}

/// Runs a three-source f32 selection (no rounding involved).
#[inline(always)]
fn f32_3(c: &mut Ctx, op: &Op, f: impl Fn(f32, f32, f32) -> f32) -> Result<(), Fault> {
    let (s0, s1, s2) = (f32v(c, op, 0), f32v(c, op, 1), f32v(c, op, 2));
    let out: [f32; 64] = std::array::from_fn(|l| f(s0[l], s1[l], s2[l]));
    out32(c, op, &out);
    Ok(())
}

/// Runs a three-source f32 selection: `fast` when no lane has a NaN,
/// else `exact`.
#[inline(always)]
fn sel32_3(
    c: &mut Ctx,
    op: &Op,
    fast: impl Fn(f32, f32, f32) -> f32,
    exact: impl Fn(f32, f32, f32) -> f32,
) -> Result<(), Fault> {
    let (s0, s1, s2) = (f32v(c, op, 0), f32v(c, op, 1), f32v(c, op, 2));
    let nan = (0..64).fold(false, |n, l| {
        n | s0[l].is_nan() | s1[l].is_nan() | s2[l].is_nan()
    });
    let out: [f32; 64] = if nan {
        std::array::from_fn(|l| exact(s0[l], s1[l], s2[l]))
    } else {
        std::array::from_fn(|l| fast(s0[l], s1[l], s2[l]))
    };
    out32(c, op, &out);
    Ok(())
}

pub fn v_min3_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel32_3(
        c,
        op,
        |a, b, d| min32_nonan(min32_nonan(a, b), d),
        |a, b, d| min32(min32(a, b, i), d, i),
    )
}

pub fn v_max3_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel32_3(
        c,
        op,
        |a, b, d| max32_nonan(max32_nonan(a, b), d),
        |a, b, d| max32(max32(a, b, i), d, i),
    )
}

pub fn v_maxmin_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel32_3(
        c,
        op,
        |a, b, d| min32_nonan(max32_nonan(a, b), d),
        |a, b, d| min32(max32(a, b, i), d, i),
    )
}

pub fn v_minmax_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel32_3(
        c,
        op,
        |a, b, d| max32_nonan(min32_nonan(a, b), d),
        |a, b, d| max32(min32(a, b, i), d, i),
    )
}

pub fn v_med3_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    f32_3(c, op, |a, b, d| med3_32(a, b, d, i))
}

/// IEEE 754-2019 minimum: NaNs propagate (quieted), -0 < +0.
fn minimum32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        quiet32(a)
    } else if b.is_nan() {
        quiet32(b)
    } else {
        min32(a, b, true)
    }
}

/// IEEE 754-2019 maximum.
fn maximum32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        quiet32(a)
    } else if b.is_nan() {
        quiet32(b)
    } else {
        max32(a, b, true)
    }
}

pub fn v_minimum3_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_3(c, op, |a, b, d| minimum32(minimum32(a, b), d))
}

pub fn v_maximum3_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_3(c, op, |a, b, d| maximum32(maximum32(a, b), d))
}

/// `v_ldexp_f32`: S0 * 2^S1 (S1 a signed integer), one rounding: the
/// product is exact in f64 for |S1| <= 400, which covers every finite
/// non-zero f32 result.
pub fn v_ldexp_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = f32v(c, op, 0);
    let s1 = b32(c, op, 1);
    let r = round32(c);
    // 2^n with n clamped so that the f64 exponent stays normal.
    let scale = |n: u32| f64::from_bits((((n as i32).clamp(-400, 400) + 1023) as u64) << 52);
    let out: [f32; 64] = if r == Rounding::NearestEven {
        std::array::from_fn(|l| (f64::from(s0[l]) * scale(s1[l])) as f32)
    } else {
        std::array::from_fn(|l| to_f32(f64::from(s0[l]) * scale(s1[l]), 0.0, r))
    };
    out32(c, op, &out);
    Ok(())
}

// ---------------------------------------------------------------------------
// f16.

/// Runs a two-source f16 operation evaluated in f64: `f` returns the
/// value and its rounding error (0 when exact).
#[inline(always)]
fn f16_2(c: &mut Ctx, op: &Op, f: impl Fn(f64, f64) -> (f64, f64)) -> Result<(), Fault> {
    let (s0, s1) = (h32(c, op, 0), h32(c, op, 1));
    let (r, keep) = (round64(c), dp_denorm_out(c));
    let out: [u16; 64] = if plain16(c, op) {
        // Exact in f64; rounding via f32 is innocuous (24 >= 2 * 11 + 2).
        std::array::from_fn(|l| f2h_rne(f(f64::from(s0[l]), f64::from(s1[l])).0 as f32))
    } else {
        std::array::from_fn(|l| {
            let (v, e) = f(f64::from(s0[l]), f64::from(s1[l]));
            out16(op, v, e, r, keep)
        })
    };
    write_b16(c, op, &out);
    Ok(())
}

/// Three f16 sources evaluated in f64 and rounded to f16 per MODE.
#[inline(always)]
fn f16_3(c: &Ctx, op: &Op, f: impl Fn(f64, f64, f64, Rounding) -> (f64, f64)) -> [u16; 64] {
    let (s0, s1, s2) = (h32(c, op, 0), h32(c, op, 1), h32(c, op, 2));
    let (r, keep) = (round64(c), dp_denorm_out(c));
    std::array::from_fn(|l| {
        let (v, e) = f(f64::from(s0[l]), f64::from(s1[l]), f64::from(s2[l]), r);
        out16(op, v, e, r, keep)
    })
}

pub fn v_add_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16_2(c, op, |a, b| (a + b, 0.0))
}

pub fn v_sub_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16_2(c, op, |a, b| (a - b, 0.0))
}

pub fn v_subrev_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16_2(c, op, |a, b| (b - a, 0.0))
}

pub fn v_mul_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16_2(c, op, |a, b| (a * b, 0.0))
}

/// The fused f16 multiply-add, exact product and TwoSum error.
#[inline(always)]
fn fma16(a: f64, b: f64, d: f64, _: Rounding) -> (f64, f64) {
    two_sum(a * b, d)
}

/// The unfused f16 multiply-add: the product rounded to f16 first.
#[inline(always)]
fn mad16(a: f64, b: f64, d: f64, r: Rounding) -> (f64, f64) {
    (round_fmt(a * b, 0.0, FMT16, r) + d, 0.0)
}

/// `v_mad_f16`: result into the op_sel[3] half, the other half kept.
pub fn v_mad_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let out = f16_3(c, op, mad16);
    write_b16_keep(c, op, &out);
    Ok(())
}

/// `v_mac_f16`, `v_madmk_f16`, `v_madak_f16`, `v_mad_legacy_f16`: unfused
/// multiply-add written to the low half with the high half zeroed (or to
/// the high half with op_sel[3]).
pub fn v_mad_f16_lo(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let out = f16_3(c, op, mad16);
    write_b16(c, op, &out);
    Ok(())
}

/// `v_fma_f16`: result into the op_sel[3] half, the other half kept.
pub fn v_fma_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let out = f16_3(c, op, fma16);
    write_b16_keep(c, op, &out);
    Ok(())
}

/// `v_fma_legacy_f16`: fused, high half zeroed unless op_sel[3].
pub fn v_fma_f16_lo(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let out = f16_3(c, op, fma16);
    write_b16(c, op, &out);
    Ok(())
}

/// `v_pk_fmac_f16`: two f16 fused multiply-adds into both halves of the
/// destination. SDWA/DPP negation applies to both halves of a source.
pub fn v_pk_fmac_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1) = (b32(c, op, 0), b32(c, op, 1));
    let d = *c.wave.vreg(op.vdst);
    let (r, keep_in, keep_out) = (round64(c), dp_denorm_in(c), dp_denorm_out(c));
    let m = |i: usize, x: u32| {
        let mut x = x;
        if op.mods.abs >> i & 1 != 0 {
            x &= 0x7fff_7fff;
        }
        if op.mods.neg >> i & 1 != 0 {
            x ^= 0x8000_8000;
        }
        x
    };
    let out: Lanes = std::array::from_fn(|l| {
        let (a, b) = (m(0, s0[l]), m(1, s1[l]));
        let half = |sh: u32| {
            let f = |x: u32| f64::from(h2f((x >> sh) as u16, keep_in));
            let (v, e) = two_sum(f(a) * f(b), f(d[l]));
            u32::from(out16(op, v, e, r, keep_out))
        };
        half(0) | half(16) << 16
    });
    write_b32(c, op, &out);
    Ok(())
}

/// f16 bit patterns of source `i` with abs/neg, op_sel and the MODE's
/// input denormal flushing.
#[inline]
fn h16(c: &Ctx, op: &Op, i: usize) -> [u16; 64] {
    let mut v = f16s(c, op, i);
    if !dp_denorm_in(c) {
        for x in v.iter_mut() {
            if *x & 0x7c00 == 0 {
                *x &= 0x8000;
            }
        }
    }
    v
}

#[inline(always)]
fn nan16(x: u16) -> bool {
    x & 0x7fff > 0x7c00
}

#[inline(always)]
fn snan16(x: u16) -> bool {
    nan16(x) && x & 0x0200 == 0
}

/// `V_MIN_F16` on bit patterns.
pub fn min16(a: u16, b: u16, ieee: bool) -> u16 {
    if ieee && snan16(a) {
        a | 0x0200
    } else if ieee && snan16(b) {
        b | 0x0200
    } else if nan16(a) {
        b
    } else if nan16(b) {
        a
    } else if a & 0x7fff == 0 && b & 0x7fff == 0 {
        if a & 0x8000 != 0 { a } else { b }
    } else if h2f(a, true) < h2f(b, true) {
        a
    } else {
        b
    }
}

/// `V_MAX_F16` on bit patterns.
pub fn max16(a: u16, b: u16, ieee: bool) -> u16 {
    if ieee && snan16(a) {
        a | 0x0200
    } else if ieee && snan16(b) {
        b | 0x0200
    } else if nan16(a) {
        b
    } else if nan16(b) {
        a
    } else if a & 0x7fff == 0 && b & 0x7fff == 0 {
        if a & 0x8000 == 0 { a } else { b }
    } else if h2f(a, true) >= h2f(b, true) {
        a
    } else {
        b
    }
}

fn med3_16(a: u16, b: u16, d: u16, i: bool) -> u16 {
    if nan16(a) || nan16(b) || nan16(d) {
        return min16(min16(a, b, i), d, i);
    }
    let m = max16(max16(a, b, i), d, i);
    let eq = |x: u16, y: u16| h2f(x, true) == h2f(y, true);
    if eq(m, a) {
        max16(b, d, i)
    } else if eq(m, b) {
        max16(a, d, i)
    } else {
        max16(a, b, i)
    }
}

/// A selection among f16 sources, with omod/clamp applied to the chosen
/// value.
#[inline(always)]
fn sel16(c: &mut Ctx, op: &Op, n: usize, f: impl Fn(u16, u16, u16) -> u16) -> Result<(), Fault> {
    let s0 = h16(c, op, 0);
    let s1 = h16(c, op, 1);
    let s2 = if n > 2 { h16(c, op, 2) } else { [0; 64] };
    let plain = op.mods.omod == 0 && !op.mods.clamp;
    let (r, keep) = (round64(c), dp_denorm_out(c));
    let out: [u16; 64] = std::array::from_fn(|l| {
        let x = f(s0[l], s1[l], s2[l]);
        if plain {
            x
        } else {
            out16(op, f64::from(h2f(x, true)), 0.0, r, keep)
        }
    });
    if n > 2 {
        write_b16_keep(c, op, &out);
    } else {
        write_b16(c, op, &out);
    }
    Ok(())
}

pub fn v_min_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel16(c, op, 2, |a, b, _| min16(a, b, i))
}

pub fn v_max_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel16(c, op, 2, |a, b, _| max16(a, b, i))
}

pub fn v_min3_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel16(c, op, 3, |a, b, d| min16(min16(a, b, i), d, i))
}

pub fn v_max3_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel16(c, op, 3, |a, b, d| max16(max16(a, b, i), d, i))
}

/// GFX11 `v_maxmin_f16`: min(max(S0, S1), S2).
pub fn v_maxmin_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel16(c, op, 3, |a, b, d| min16(max16(a, b, i), d, i))
}

/// GFX11 `v_minmax_f16`: max(min(S0, S1), S2).
pub fn v_minmax_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel16(c, op, 3, |a, b, d| max16(min16(a, b, i), d, i))
}

pub fn v_med3_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let i = ieee(c);
    sel16(c, op, 3, |a, b, d| med3_16(a, b, d, i))
}

/// `v_ldexp_f16`: S0 * 2^S1 with S1 a signed 16-bit integer.
pub fn v_ldexp_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = h32(c, op, 0);
    let s1 = b16(c, op, 1);
    let (r, keep) = (round64(c), dp_denorm_out(c));
    let out: [u16; 64] = std::array::from_fn(|l| {
        let x = f64::from(s0[l]);
        let n = i32::from(s1[l] as i16).clamp(-100, 100);
        out16(op, x * pow2(n), 0.0, r, keep)
    });
    write_b16(c, op, &out);
    Ok(())
}

// ---------------------------------------------------------------------------
// f64.

pub fn v_add_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1) = (d64(c, op, 0), d64(c, op, 1));
    let r = round64(c);
    let mut out: [f64; 64] = std::array::from_fn(|l| {
        let (a, b) = (s0[l], s1[l]);
        if r == Rounding::NearestEven {
            a + b
        } else {
            let (s, e) = two_sum(a, b);
            direct_f64(s, e, r, a.is_finite() && b.is_finite())
        }
    });
    out64(c, op, &mut out);
    Ok(())
}

pub fn v_mul_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1) = (d64(c, op, 0), d64(c, op, 1));
    let r = round64(c);
    let mut out: [f64; 64] = std::array::from_fn(|l| {
        let (a, b) = (s0[l], s1[l]);
        let p = a * b;
        if r == Rounding::NearestEven {
            p
        } else {
            let e = if p.is_finite() { a.mul_add(b, -p) } else { 0.0 };
            direct_f64(p, e, r, a.is_finite() && b.is_finite())
        }
    });
    out64(c, op, &mut out);
    Ok(())
}

/// `v_fma_f64`, `v_fmac_f64`: fused multiply-add (round to nearest even).
pub fn v_fma_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1, s2) = (d64(c, op, 0), d64(c, op, 1), d64(c, op, 2));
    let mut out = fma_lanes64(&s0, &s1, &s2);
    out64(c, op, &mut out);
    Ok(())
}

/// `V_MIN_F64`.
pub fn min64(a: f64, b: f64, ieee: bool) -> f64 {
    if ieee && snan64(a) {
        quiet64(a)
    } else if ieee && snan64(b) {
        quiet64(b)
    } else if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_negative() { a } else { b }
    } else if a < b {
        a
    } else {
        b
    }
}

/// `V_MAX_F64`.
pub fn max64(a: f64, b: f64, ieee: bool) -> f64 {
    if ieee && snan64(a) {
        quiet64(a)
    } else if ieee && snan64(b) {
        quiet64(b)
    } else if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_positive() { a } else { b }
    } else if a >= b {
        a
    } else {
        b
    }
}

pub fn v_min_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1, i) = (d64(c, op, 0), d64(c, op, 1), ieee(c));
    let mut out: [f64; 64] = std::array::from_fn(|l| min64(s0[l], s1[l], i));
    out64(c, op, &mut out);
    Ok(())
}

pub fn v_max_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1, i) = (d64(c, op, 0), d64(c, op, 1), ieee(c));
    let mut out: [f64; 64] = std::array::from_fn(|l| max64(s0[l], s1[l], i));
    out64(c, op, &mut out);
    Ok(())
}

/// `v_ldexp_f64`: S0 * 2^S1 (S1 a signed 32-bit integer), one rounding.
pub fn v_ldexp_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = d64(c, op, 0);
    let s1 = b32(c, op, 1);
    let mut out: [f64; 64] = std::array::from_fn(|l| scalbn(s0[l], s1[l] as i32));
    out64(c, op, &mut out);
    Ok(())
}

// ---------------------------------------------------------------------------
// Dot products, cube maps, packing.

/// Source `i` of a VOP2 dot product as two 16-bit halves: DPP `neg`
/// negates the low half and `abs` the high half (ISA manual,
/// `V_DOT2C_F32_F16`: "ABS[1:0] are used as NEG_HI[1:0]").
#[inline]
fn dot_src(c: &Ctx, op: &Op, i: usize) -> Lanes {
    let mut v = b32(c, op, i);
    let flip = if op.mods.neg >> i & 1 != 0 { 0x8000 } else { 0 }
        | if op.mods.abs >> i & 1 != 0 {
            0x8000_0000
        } else {
            0
        };
    if flip != 0 {
        for x in v.iter_mut() {
            *x ^= flip;
        }
    }
    v
}

/// `D = D + a.lo * b.lo + a.hi * b.hi` in f32, the products exact, each
/// addition rounded (ISA manual pseudocode order).
#[inline(always)]
fn dot2c(c: &mut Ctx, op: &Op, dec: impl Fn(u16) -> f32) -> Result<(), Fault> {
    let (s0, s1) = (dot_src(c, op, 0), dot_src(c, op, 1));
    let d = *c.wave.vreg(op.vdst);
    let r = round32(c);
    let out: [f32; 64] = std::array::from_fn(|l| {
        let (a, b) = (s0[l], s1[l]);
        let p0 = dec(a as u16) * dec(b as u16);
        let p1 = dec((a >> 16) as u16) * dec((b >> 16) as u16);
        let acc = f32::from_bits(d[l]);
        if r == Rounding::NearestEven {
            acc + p0 + p1
        } else {
            add_dir(add_dir(acc, p0, r), p1, r)
        }
    });
    write_f32(c, op, &out);
    Ok(())
}

pub fn v_dot2c_f32_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let keep = dp_denorm_in(c);
    dot2c(c, op, |h| h2f(h, keep))
}

pub fn v_dot2c_f32_bf16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    dot2c(c, op, |h| f32::from_bits(u32::from(h) << 16))
}

/// The major axis of a cube-map coordinate: 2 for z, 1 for y, 0 for x
/// (ISA manual, `V_CUBEID_F32`).
#[inline(always)]
fn cube_axis(x: f32, y: f32, z: f32) -> u8 {
    if z.abs() >= x.abs() && z.abs() >= y.abs() {
        2
    } else if y.abs() >= x.abs() {
        1
    } else {
        0
    }
}

pub fn v_cubeid_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_3(c, op, |x, y, z| match cube_axis(x, y, z) {
        2 => {
            if z < 0.0 {
                5.0
            } else {
                4.0
            }
        }
        1 => {
            if y < 0.0 {
                3.0
            } else {
                2.0
            }
        }
        _ => {
            if x < 0.0 {
                1.0
            } else {
                0.0
            }
        }
    })
}

pub fn v_cubesc_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_3(c, op, |x, y, z| match cube_axis(x, y, z) {
        2 => {
            if z < 0.0 {
                -x
            } else {
                x
            }
        }
        1 => x,
        _ => {
            if x < 0.0 {
                z
            } else {
                -z
            }
        }
    })
}

pub fn v_cubetc_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_3(c, op, |x, y, z| match cube_axis(x, y, z) {
        1 => {
            if y < 0.0 {
                -z
            } else {
                z
            }
        }
        _ => -y,
    })
}

lanes_f32!(v_cubema_f32, |x, y, z| match cube_axis(x, y, z) {
    2 => z * 2.0,
    1 => y * 2.0,
    _ => x * 2.0,
});

/// `v_pack_b32_f16`: D = { S1.f16, S0.f16 } with abs/neg and op_sel.
pub fn v_pack_b32_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1) = (f16s(c, op, 0), f16s(c, op, 1));
    let out: Lanes = std::array::from_fn(|l| u32::from(s0[l]) | u32::from(s1[l]) << 16);
    write_b32(c, op, &out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::testing::run;
    use rocjitsu_isa::Target;

    /// Interesting f32 values: signed zeros, denormals, normals, ties,
    /// extremes, infinities and NaNs.
    pub(crate) fn specials32() -> Vec<f32> {
        let mut v = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            3.0,
            1e-40,
            -1e-40,
            f32::from_bits(1),
            f32::MIN_POSITIVE,
            f32::MAX,
            -f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::from_bits(0x7f80_0001), // signaling NaN
            f32::from_bits(0x3f80_0001),
            1.0e20,
            -3.25e-20,
            std::f32::consts::PI,
            0.1,
            16777217.0,
            -7.0,
        ];
        // Deterministic pseudo-random values.
        let mut x = 0x1234_5678u32;
        while v.len() < 64 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            v.push(f32::from_bits(x & 0xbfff_ffff));
        }
        v
    }

    fn lanes_of(v: &[f32], rot: usize) -> Lanes {
        std::array::from_fn(|l| v[(l + rot) % v.len()].to_bits())
    }

    /// Bitwise equality, any NaN matching any NaN.
    fn same(a: u32, b: f32) -> bool {
        let x = f32::from_bits(a);
        (x.is_nan() && b.is_nan()) || a == b.to_bits()
    }

    #[test]
    fn fma32_is_correctly_rounded() {
        let v = specials32();
        for &a in &v {
            for &b in &v {
                for &d in v.iter().step_by(5) {
                    let want = a.mul_add(b, d);
                    let got = fma32(a, b, d);
                    assert!(
                        (got.is_nan() && want.is_nan()) || got.to_bits() == want.to_bits(),
                        "fma({a:e}, {b:e}, {d:e}) = {got:e}, want {want:e}"
                    );
                }
            }
        }
        // A case where rounding the f64 sum twice goes wrong.
        let (a, b, d) = (1.0 + 2f32.powi(-23), 1.0 - 2f32.powi(-24), -1.0);
        assert_eq!(fma32(a, b, d), a.mul_add(b, d));
    }

    #[test]
    fn binary_f32_ops_match_ieee_lane_by_lane() {
        let v = specials32();
        let (x, y) = (lanes_of(&v, 0), lanes_of(&v, 7));
        type Ref = fn(f32, f32) -> f32;
        let ops: [(&str, Ref); 4] = [
            ("v_add_f32", |a, b| a + b),
            ("v_sub_f32", |a, b| a - b),
            ("v_subrev_f32", |a, b| b - a),
            ("v_mul_f32", |a, b| a * b),
        ];
        for (name, f) in ops {
            for enc in ["", "_e64"] {
                let r = run(
                    Target::Gfx942,
                    &format!("{name}{enc} v2, v0, v1"),
                    |w, _| {
                        w.v[0] = x;
                        w.v[1] = y;
                    },
                )
                .unwrap();
                for l in 0..64 {
                    let want = f(f32::from_bits(x[l]), f32::from_bits(y[l]));
                    assert!(same(r.wave.v[2][l], want), "{name}{enc} lane {l}");
                }
            }
        }
    }

    #[test]
    fn fma_fmac_mad_and_literal_forms() {
        let v = specials32();
        let (x, y, z) = (lanes_of(&v, 0), lanes_of(&v, 11), lanes_of(&v, 23));
        let r = run(
            Target::Gfx942,
            "v_fma_f32 v3, v0, v1, v2\n\
             v_mov_b32 v4, v2\n\
             v_fmac_f32 v4, v0, v1\n\
             v_fma_f32 v5, v0, v1, v2\n\
             v_fmamk_f32 v6, v0, 0x40400000, v2\n\
             v_fmaak_f32 v7, v0, v1, 0x3f000000\n\
             v_fma_f32 v8, -v0, |v1|, -v2",
            |w, _| {
                w.v[0] = x;
                w.v[1] = y;
                w.v[2] = z;
            },
        )
        .unwrap();
        for l in 0..64 {
            let (a, b, d) = (
                f32::from_bits(x[l]),
                f32::from_bits(y[l]),
                f32::from_bits(z[l]),
            );
            let w = &r.wave.v;
            assert!(same(w[3][l], a.mul_add(b, d)), "fma lane {l}");
            assert!(same(w[4][l], a.mul_add(b, d)), "fmac lane {l}");
            assert!(same(w[5][l], a.mul_add(b, d)), "fma lane {l}");
            assert!(same(w[6][l], a.mul_add(3.0, d)), "fmamk lane {l}");
            assert!(same(w[7][l], a.mul_add(b, 0.5)), "fmaak lane {l}");
            assert!(
                same(w[8][l], (-a).mul_add(b.abs(), -d)),
                "fma mods lane {l}"
            );
        }
    }

    #[test]
    fn mad_mac_madmk_madak_round_the_product() {
        // gfx90a still has the unfused multiply-adds.
        let v = specials32();
        let (x, y, z) = (lanes_of(&v, 0), lanes_of(&v, 13), lanes_of(&v, 29));
        let r = run(
            Target::Gfx90a,
            "v_mad_f32 v3, v0, v1, v2\n\
             v_mov_b32 v4, v2\n\
             v_mac_f32 v4, v0, v1\n\
             v_madmk_f32 v5, v0, 0x3eaaaaab, v2\n\
             v_madak_f32 v6, v0, v1, 0x3f000000\n\
             v_mad_legacy_f32 v7, v0, -v1, v2",
            |w, _| {
                w.v[0] = x;
                w.v[1] = y;
                w.v[2] = z;
            },
        )
        .unwrap();
        let ftz = |x: f32| {
            if x.is_subnormal() {
                0.0f32.copysign(x)
            } else {
                x
            }
        };
        let mad = |a: f32, b: f32, d: f32| ftz(ftz(ftz(a) * ftz(b)) + ftz(d));
        let k = f32::from_bits(0x3eaa_aaab);
        for l in 0..64 {
            let (a, b, d) = (
                f32::from_bits(x[l]),
                f32::from_bits(y[l]),
                f32::from_bits(z[l]),
            );
            let w = &r.wave.v;
            assert!(same(w[3][l], mad(a, b, d)), "mad lane {l}");
            assert!(same(w[4][l], mad(a, b, d)), "mac lane {l}");
            assert!(same(w[5][l], mad(a, k, d)), "madmk lane {l}");
            assert!(same(w[6][l], mad(a, b, 0.5)), "madak lane {l}");
            assert!(same(w[7][l], mad(a, -b, d)), "mad_legacy lane {l}");
        }
        // Not fused: (1 + 2^-12)^2 - 1 loses the 2^-24 term.
        let r = run(Target::Gfx90a, "v_mad_f32 v3, v0, v0, -1.0", |w, _| {
            w.v[0] = [(1.0f32 + 2f32.powi(-12)).to_bits(); 64];
        })
        .unwrap();
        assert_eq!(f32::from_bits(r.wave.v[3][0]), 2f32.powi(-11));
    }

    #[test]
    fn directed_rounding_from_mode() {
        // s_setreg MODE.FP_ROUND[1:0]: 1 = +inf, 2 = -inf, 3 = zero.
        let third = 1.0f32 / 3.0;
        for (mode, up) in [(1, true), (2, false), (3, false)] {
            let r = run(
                Target::Gfx942,
                "v_mul_f32 v2, v0, v1\nv_add_f32 v3, v0, v1\nv_fma_f32 v4, v0, v1, v1",
                |w, _| {
                    w.mode = (w.mode & !3) | mode;
                    w.v[0] = [1.0f32.to_bits(); 64];
                    w.v[1] = [third.to_bits(); 64];
                },
            )
            .unwrap();
            // 1 * (1/3) is exact; 1 + 1/3 and 1/3 + 1/3 * 1 are not.
            let exact_sum = 1.0f64 + f64::from(third);
            let got = f32::from_bits(r.wave.v[3][0]);
            assert_eq!(f32::from_bits(r.wave.v[2][0]), third);
            assert_eq!(f64::from(got) > exact_sum, up, "mode {mode}: {got}");
            assert!((f64::from(got) - exact_sum).abs() < 2f64.powi(-22));
            let exact_fma = 2.0 * f64::from(third);
            let got = f32::from_bits(r.wave.v[4][0]);
            assert_eq!(
                f64::from(got) > exact_fma,
                up && f64::from(got) != exact_fma
            );
        }
    }

    #[test]
    fn min_max_follow_ieee_mode() {
        let snan = f32::from_bits(0x7f80_0001);
        let cases = [
            (1.0f32, 2.0f32),
            (-0.0, 0.0),
            (0.0, -0.0),
            (f32::NAN, 3.0),
            (3.0, f32::NAN),
            (snan, 3.0),
            (3.0, snan),
            (f32::NEG_INFINITY, -1e-40),
        ];
        for ieee_on in [false, true] {
            let r = run(
                Target::Gfx942,
                "v_min_f32 v2, v0, v1\nv_max_f32 v3, v0, v1",
                |w, _| {
                    w.mode = if ieee_on {
                        w.mode | MODE_IEEE
                    } else {
                        w.mode & !MODE_IEEE
                    };
                    for (l, &(a, b)) in cases.iter().enumerate() {
                        w.v[0][l] = a.to_bits();
                        w.v[1][l] = b.to_bits();
                    }
                },
            )
            .unwrap();
            for (l, &(a, b)) in cases.iter().enumerate() {
                let (lo, hi) = (r.wave.v[2][l], r.wave.v[3][l]);
                let sig = |x: f32| x.is_nan() && x.to_bits() & 0x40_0000 == 0;
                if ieee_on && (sig(a) || sig(b)) {
                    let n = if sig(a) { a } else { b };
                    assert_eq!(lo, n.to_bits() | 0x40_0000, "lane {l}");
                    assert_eq!(hi, n.to_bits() | 0x40_0000, "lane {l}");
                } else if a.is_nan() || b.is_nan() {
                    let num = if a.is_nan() { b } else { a };
                    assert_eq!(lo, num.to_bits(), "lane {l} ieee {ieee_on}");
                    assert_eq!(hi, num.to_bits(), "lane {l} ieee {ieee_on}");
                } else if a == 0.0 && b == 0.0 {
                    assert_eq!(lo, (-0.0f32).to_bits());
                    assert_eq!(hi, 0.0f32.to_bits());
                } else {
                    assert_eq!(f32::from_bits(lo), a.min(b), "lane {l}");
                    assert_eq!(f32::from_bits(hi), a.max(b), "lane {l}");
                }
            }
        }
    }

    #[test]
    fn med3_min3_max3() {
        let v = specials32();
        let (x, y, z) = (lanes_of(&v, 0), lanes_of(&v, 3), lanes_of(&v, 9));
        let r = run(
            Target::Gfx942,
            "v_med3_f32 v3, v0, v1, v2\nv_min3_f32 v4, v0, v1, v2\nv_max3_f32 v5, v0, v1, v2",
            |w, _| {
                w.v[0] = x;
                w.v[1] = y;
                w.v[2] = z;
            },
        )
        .unwrap();
        for l in 0..64 {
            let t = [x[l], y[l], z[l]].map(f32::from_bits);
            if t.iter().any(|a| a.is_nan()) {
                continue;
            }
            let mut s = t;
            s.sort_by(|a, b| a.partial_cmp(b).unwrap());
            assert_eq!(f32::from_bits(r.wave.v[3][l]), s[1], "med3 lane {l} {t:?}");
            assert_eq!(f32::from_bits(r.wave.v[4][l]), s[0], "min3 lane {l}");
            assert_eq!(f32::from_bits(r.wave.v[5][l]), s[2], "max3 lane {l}");
        }
    }

    #[test]
    fn clamp_omod_and_partial_exec() {
        let r = run(
            Target::Gfx942,
            "v_add_f32_e64 v2, v0, v1 clamp\n\
             v_mul_f32_e64 v3, v0, v1 mul:2\n\
             v_mul_f32_e64 v4, v0, v1 div:2",
            |w, _| {
                w.set_exec(0x5555_5555_5555_5555);
                for l in 0..64 {
                    w.v[0][l] = (l as f32 * 0.05 - 1.0).to_bits();
                    w.v[1][l] = 0.25f32.to_bits();
                    w.v[2][l] = 0xdead_beef;
                    w.v[3][l] = 0xdead_beef;
                    w.v[4][l] = 0xdead_beef;
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let a = l as f32 * 0.05 - 1.0;
            if l % 2 == 1 {
                assert_eq!(r.wave.v[2][l], 0xdead_beef);
                assert_eq!(r.wave.v[3][l], 0xdead_beef);
                continue;
            }
            assert_eq!(f32::from_bits(r.wave.v[2][l]), (a + 0.25).clamp(0.0, 1.0));
            assert_eq!(f32::from_bits(r.wave.v[3][l]), a * 0.25 * 2.0);
            assert_eq!(f32::from_bits(r.wave.v[4][l]), a * 0.25 * 0.5);
        }
    }

    #[test]
    fn sdwa_and_dpp_forms() {
        let r = run(
            Target::Gfx942,
            "v_add_f32_dpp v2, v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n\
             v_mul_f32_sdwa v3, v0, v1 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD\n\
             v_add_f16_sdwa v4, v5, v6 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:WORD_0",
            |w, _| {
                for l in 0..64 {
                    w.v[0][l] = (l as f32).to_bits();
                    w.v[1][l] = 0.5f32.to_bits();
                    w.v[4][l] = 0x1234_5678;
                    // hi half 1.5, lo half 2.0 ; second: lo half 0.25
                    w.v[5][l] = 0x3e00_4000;
                    w.v[6][l] = 0x0000_3400;
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let src = (l ^ 1) as f32;
            assert_eq!(f32::from_bits(r.wave.v[2][l]), src + 0.5, "dpp lane {l}");
            assert_eq!(f32::from_bits(r.wave.v[3][l]), l as f32 * 0.5);
            // 1.5 + 0.25 = 1.75 = 0x3f00 into the high word.
            assert_eq!(r.wave.v[4][l], 0x3f00_5678);
        }
    }

    #[test]
    fn f16_arithmetic_rounds_once() {
        use crate::float::{f16_to_f32, f32_to_f16};
        let vals: Vec<u16> = (0..64u32)
            .map(|i| (i.wrapping_mul(0x9e37) ^ 0x3c00) as u16)
            .collect();
        let vals2: Vec<u16> = (0..64u32)
            .map(|i| (i.wrapping_mul(0x7f4b) + 0x0123) as u16)
            .collect();
        let r = run(
            Target::Gfx942,
            "v_add_f16 v2, v0, v1\nv_mul_f16 v3, v0, v1\nv_fma_f16 v4, v0, v1, v0\nv_sub_f16_e64 v5, v0, -v1",
            |w, _| {
                for l in 0..64 {
                    w.v[0][l] = u32::from(vals[l]);
                    w.v[1][l] = u32::from(vals2[l]);
                    w.v[4][l] = 0xabcd_0000;
                }
            },
        )
        .unwrap();
        let rne = crate::float::Rounding::NearestEven;
        for l in 0..64 {
            let (a, b) = (f16_to_f32(vals[l]), f16_to_f32(vals2[l]));
            // f16 sums and products are exact in f64, so one rounding of
            // the f64 value is the IEEE result.
            let h = |x: f64| f32_to_f16(x as f32, rne);
            let eq = |got: u32, want: u16| {
                let g = got as u16;
                (g & 0x7fff > 0x7c00 && want & 0x7fff > 0x7c00) || g == want
            };
            let (a64, b64) = (f64::from(a), f64::from(b));
            assert!(eq(r.wave.v[2][l], h(a64 + b64)), "add lane {l}");
            assert_eq!(r.wave.v[2][l] >> 16, 0, "high half zeroed");
            assert!(eq(r.wave.v[3][l], h(a64 * b64)), "mul lane {l}");
            // fma: compare with f64 fma rounded to f32 then f16 — both
            // steps exact or innocuous here since a*b+a is exact in f64
            // for these magnitudes.
            let f = a64.mul_add(b64, a64);
            assert!(eq(r.wave.v[4][l], h(f)), "fma lane {l}");
            assert_eq!(r.wave.v[4][l] >> 16, 0xabcd, "fma keeps the high half");
            assert!(eq(r.wave.v[5][l], h(a64 + b64)), "sub neg lane {l}");
        }
    }

    #[test]
    fn ldexp_and_f64_ops() {
        let r = run(
            Target::Gfx942,
            "v_ldexp_f32 v2, v0, v1\n\
             v_add_f64 v[4:5], v[6:7], v[8:9]\n\
             v_mul_f64 v[10:11], v[6:7], v[8:9]\n\
             v_fma_f64 v[12:13], v[6:7], v[8:9], v[6:7]\n\
             v_max_f64 v[14:15], v[6:7], v[8:9]\n\
             v_ldexp_f64 v[16:17], v[6:7], v1",
            |w, _| {
                for l in 0..64 {
                    w.v[0][l] = (1.5f32 + l as f32).to_bits();
                    w.v[1][l] = (l as i32 * 9 - 300) as u32;
                    let a = (l as f64 - 20.5) * 1.1e10;
                    let b = 1.0 / (l as f64 + 0.3);
                    w.v[6][l] = a.to_bits() as u32;
                    w.v[7][l] = (a.to_bits() >> 32) as u32;
                    w.v[8][l] = b.to_bits() as u32;
                    w.v[9][l] = (b.to_bits() >> 32) as u32;
                }
            },
        )
        .unwrap();
        let get = |v: usize, l: usize| {
            f64::from_bits(u64::from(r.wave.v[v][l]) | u64::from(r.wave.v[v + 1][l]) << 32)
        };
        for l in 0..64 {
            let n = l as i32 * 9 - 300;
            let x = 1.5f32 + l as f32;
            let want = (f64::from(x) * 2f64.powi(n)) as f32;
            assert_eq!(f32::from_bits(r.wave.v[2][l]), want, "ldexp lane {l}");
            let a = (l as f64 - 20.5) * 1.1e10;
            let b = 1.0 / (l as f64 + 0.3);
            assert_eq!(get(4, l), a + b);
            assert_eq!(get(10, l), a * b);
            assert_eq!(get(12, l), a.mul_add(b, a));
            assert_eq!(get(14, l), a.max(b));
            assert_eq!(get(16, l), a * 2f64.powi(n));
        }
    }

    #[test]
    fn dot2c_and_pack() {
        use crate::float::f32_to_f16;
        let rne = crate::float::Rounding::NearestEven;
        let h = |x: f32| u32::from(f32_to_f16(x, rne));
        let r = run(
            Target::Gfx942,
            "v_dot2c_f32_f16 v2, v0, v1\nv_pack_b32_f16 v3, v0, -v1",
            |w, _| {
                for l in 0..64 {
                    w.v[0][l] = h(l as f32) | h(0.5) << 16;
                    w.v[1][l] = h(3.0) | h(-(l as f32)) << 16;
                    w.v[2][l] = 10.0f32.to_bits();
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let want = 10.0 + l as f32 * 3.0 + 0.5 * -(l as f32);
            assert_eq!(f32::from_bits(r.wave.v[2][l]), want, "dot lane {l}");
            assert_eq!(r.wave.v[3][l], h(l as f32) | (h(3.0) ^ 0x8000) << 16);
        }
    }

    #[test]
    fn f16_min_max_med3_and_nan_rules() {
        use crate::float::{Rounding, f16_to_f32, f32_to_f16};
        let h = |x: f32| f32_to_f16(x, Rounding::NearestEven);
        let cases: [(u16, u16, u16); 8] = [
            (h(1.0), h(2.0), h(-3.0)),
            (h(-0.0), h(0.0), h(5.0)),
            (0x7e00, h(3.0), h(1.0)), // qNaN
            (0x7c01, h(3.0), h(1.0)), // sNaN
            (h(7.5), h(7.5), h(-7.5)),
            (h(65504.0), 0xfc00, h(0.5)), // max, -inf
            (0x0001, 0x8001, 0x0000),     // denormals
            (h(2.0), 0x7e00, h(-1.0)),
        ];
        let r = run(
            Target::Gfx942,
            "v_min_f16 v3, v0, v1\nv_max_f16 v4, v0, v1\nv_med3_f16 v5, v0, v1, v2\n\
             v_max3_f16 v6, v0, v1, v2\nv_min3_f16 v7, v0, v1, v2",
            |w, _| {
                w.mode |= MODE_IEEE;
                for (l, &(a, b, d)) in cases.iter().enumerate() {
                    w.v[0][l] = u32::from(a);
                    w.v[1][l] = u32::from(b);
                    w.v[2][l] = u32::from(d);
                    w.v[6][l] = 0xabcd_0000;
                }
            },
        )
        .unwrap();
        let f = |x: u16| f16_to_f32(x);
        let nan = |x: u16| x & 0x7fff > 0x7c00;
        for (l, &(a, b, d)) in cases.iter().enumerate() {
            let w = &r.wave.v;
            let (lo, hi) = (w[3][l] as u16, w[4][l] as u16);
            if a == 0x7c01 {
                // IEEE mode: a signaling NaN comes back quieted.
                assert_eq!((lo, hi), (0x7e01, 0x7e01));
                continue;
            }
            if nan(a) || nan(b) {
                let num = if nan(a) { b } else { a };
                assert_eq!((lo, hi), (num, num), "lane {l}");
                continue;
            }
            if f(a) == 0.0 && f(b) == 0.0 {
                assert_eq!((lo, hi), (0x8000, 0x0000));
            } else {
                assert_eq!(f(lo), f(a).min(f(b)), "min lane {l}");
                assert_eq!(f(hi), f(a).max(f(b)), "max lane {l}");
            }
            let mut t = [f(a), f(b), f(d)];
            t.sort_by(|x, y| x.partial_cmp(y).unwrap());
            assert_eq!(f(w[5][l] as u16), t[1], "med3 lane {l}");
            assert_eq!(f(w[6][l] as u16), t[2], "max3 lane {l}");
            assert_eq!(w[6][l] >> 16, 0xabcd, "max3 keeps the high half");
            assert_eq!(f(w[7][l] as u16), t[0], "min3 lane {l}");
        }
    }

    #[test]
    fn mad_legacy_f32_zero_times_anything_is_zero() {
        // ISA manual, V_MAD_LEGACY_F32: D = S0 * S1 + S2 with DX9 rules
        // (0 * x = 0 even for x = inf or NaN); V_MAD_F32 gives NaN there.
        let xs = [0.0, -0.0, f32::INFINITY, f32::NAN, 2.0, -3.0, 0.5];
        let ys = [f32::INFINITY, f32::NAN, 0.0, 0.0, -4.0, 1.0, 7.0];
        let r = run(
            Target::Gfx90a,
            "v_mad_legacy_f32 v3, v0, v1, v2\n\
             v_mad_f32 v4, v0, v1, v2",
            |w, _| {
                for l in 0..64 {
                    w.v[0][l] = xs[l % 7].to_bits();
                    w.v[1][l] = ys[(l / 7) % 7].to_bits();
                    w.v[2][l] = 1.5f32.to_bits();
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let (x, y) = (xs[l % 7], ys[(l / 7) % 7]);
            let legacy = if x == 0.0 || y == 0.0 { 0.0 } else { x * y } + 1.5;
            assert!(same(r.wave.v[3][l], legacy), "legacy {x} * {y} + 1.5");
            assert!(same(r.wave.v[4][l], x * y + 1.5), "mad {x} * {y} + 1.5");
        }
    }

    #[test]
    fn f32_denorm_mode_1_keeps_inputs_and_flushes_results() {
        // MODE.FP_DENORM[5:4] for f32: 1 = allow input denormals, flush
        // output denormals; 2 = flush inputs, allow outputs; 3 = allow both.
        let tiny = f32::from_bits(0x0000_0400); // a denormal
        for (den, keep_in, keep_out) in [
            (0u32, false, false),
            (1, true, false),
            (2, false, true),
            (3, true, true),
        ] {
            let r = run(
                Target::Gfx942,
                "v_mul_f32 v2, v0, v1\n\
                 v_add_f32 v3, v0, v1",
                |w, _| {
                    w.mode = (w.mode & !0x30) | den << 4;
                    for l in 0..64 {
                        w.v[0][l] = tiny.to_bits();
                        w.v[1][l] = if l % 2 == 0 { 2.0f32 } else { 0.0 }.to_bits();
                    }
                },
            )
            .unwrap();
            for l in 0..64 {
                let y = if l % 2 == 0 { 2.0f32 } else { 0.0 };
                let x = if keep_in { tiny } else { 0.0 };
                let flush = |v: f32| {
                    if !keep_out && v.is_subnormal() {
                        0.0f32.copysign(v)
                    } else {
                        v
                    }
                };
                assert!(
                    same(r.wave.v[2][l], flush(x * y)),
                    "mode {den}: mul lane {l}"
                );
                assert!(
                    same(r.wave.v[3][l], flush(x + y)),
                    "mode {den}: add lane {l}"
                );
            }
        }
    }

    #[test]
    fn legacy_mul_fmac_f64_and_cube() {
        let r = run(
            Target::Gfx942,
            "v_mul_legacy_f32 v3, v0, v1\n\
             v_fmac_f64 v[4:5], v[6:7], v[8:9]\n\
             v_cubeid_f32 v10, v0, v1, v2\n\
             v_cubema_f32 v11, v0, v1, v2\n\
             v_cubesc_f32 v12, v0, v1, v2\n\
             v_cubetc_f32 v13, v0, v1, v2",
            |w, _| {
                for l in 0..64 {
                    let x = [0.0, f32::INFINITY, f32::NAN, 2.0, -3.0, 0.5][l % 6];
                    let y = [f32::INFINITY, 0.0, 0.0, -4.0, 1.0, 7.0][(l / 6) % 6];
                    w.v[0][l] = x.to_bits();
                    w.v[1][l] = y.to_bits();
                    w.v[2][l] = (l as f32 - 30.0).to_bits();
                    let (a, b, d) = (l as f64 * 1.5, -0.25 * l as f64, 1e10);
                    for (r, v) in [(4, d), (6, a), (8, b)] {
                        w.v[r][l] = v.to_bits() as u32;
                        w.v[r + 1][l] = (v.to_bits() >> 32) as u32;
                    }
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let x = [0.0, f32::INFINITY, f32::NAN, 2.0, -3.0, 0.5][l % 6];
            let y = [f32::INFINITY, 0.0, 0.0, -4.0, 1.0, 7.0][(l / 6) % 6];
            let z = l as f32 - 30.0;
            let w = &r.wave.v;
            let want = if x == 0.0 || y == 0.0 { 0.0 } else { x * y };
            assert!(same(w[3][l], want), "legacy {x} * {y}");
            let got = f64::from_bits(u64::from(w[4][l]) | u64::from(w[5][l]) << 32);
            assert_eq!(got, (l as f64 * 1.5).mul_add(-0.25 * l as f64, 1e10));
            if x.is_nan() {
                continue;
            }
            // The major axis and face from first principles.
            let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
            let (id, ma, sc, tc) = if az >= ax && az >= ay {
                (
                    if z < 0.0 { 5.0 } else { 4.0 },
                    2.0 * z,
                    if z < 0.0 { -x } else { x },
                    -y,
                )
            } else if ay >= ax {
                (
                    if y < 0.0 { 3.0 } else { 2.0 },
                    2.0 * y,
                    x,
                    if y < 0.0 { -z } else { z },
                )
            } else {
                (
                    if x < 0.0 { 1.0 } else { 0.0 },
                    2.0 * x,
                    if x < 0.0 { z } else { -z },
                    -y,
                )
            };
            assert!(same(w[10][l], id), "cubeid lane {l}");
            assert!(same(w[11][l], ma), "cubema lane {l}");
            assert!(same(w[12][l], sc), "cubesc lane {l}");
            assert!(same(w[13][l], tc), "cubetc lane {l}");
        }
    }

    #[test]
    fn f64_f16_directed_rounding_and_denormal_modes() {
        use crate::float::{f16_to_f32, f32_to_f16};
        // MODE.FP_ROUND[3:2] = 2 (toward -inf) for f64 and f16.
        let r = run(
            Target::Gfx942,
            "v_add_f64 v[4:5], v[0:1], v[2:3]\nv_mul_f64 v[6:7], v[0:1], v[2:3]\nv_add_f16 v8, v9, v10",
            |w, _| {
                w.mode = (w.mode & !0xc) | 2 << 2;
                for l in 0..64 {
                    let (a, b) = (1.0 + l as f64, if l % 2 == 0 { 1e-20f64 } else { -1e-20 });
                    w.v[0][l] = a.to_bits() as u32;
                    w.v[1][l] = (a.to_bits() >> 32) as u32;
                    w.v[2][l] = b.to_bits() as u32;
                    w.v[3][l] = (b.to_bits() >> 32) as u32;
                    w.v[9][l] = 0x3c00; // 1.0
                    w.v[10][l] = u32::from(f32_to_f16(
                        if l % 2 == 0 { 1e-4 } else { -1e-4 },
                        Rounding::NearestEven,
                    ));
                }
            },
        )
        .unwrap();
        let g = |v: usize, l: usize| {
            f64::from_bits(u64::from(r.wave.v[v][l]) | u64::from(r.wave.v[v + 1][l]) << 32)
        };
        for l in 0..64 {
            let a = 1.0 + l as f64;
            let down = f64::from_bits(a.to_bits() - 1);
            let want_add = if l % 2 == 0 { a } else { down };
            assert_eq!(g(4, l), want_add, "add lane {l}");
            // a * 1e-20 rounded down: at most the nearest value, below the
            // exact product.
            let b = if l % 2 == 0 { 1e-20 } else { -1e-20 };
            let p = g(6, l);
            assert!(
                p <= a * b && a * b - p <= (a * b).abs() * 2.3e-16,
                "mul lane {l}"
            );
            let e = (p - a * b).abs();
            assert!(e == 0.0 || p < a * b);
            // 1 + 1e-4 rounds down to 1.0; 1 - 1e-4 to the f16 below 1 - 2^-11.
            let hsum = f16_to_f32(r.wave.v[8][l] as u16);
            let exact = 1.0 + if l % 2 == 0 { 1e-4f64 } else { -1e-4 };
            let ulp = if l % 2 == 0 {
                2f64.powi(-10)
            } else {
                2f64.powi(-11)
            };
            assert!(
                f64::from(hsum) <= exact && exact - f64::from(hsum) < ulp,
                "f16 lane {l}"
            );
        }
        // Denormal flushing: f64/f16 with MODE.FP_DENORM[3:2] = 0, f32 with
        // FP_DENORM[1:0] = 0.
        let r = run(
            Target::Gfx942,
            "v_mul_f64 v[4:5], v[0:1], v[2:3]\nv_mul_f16 v6, v7, v7\nv_mul_f32 v8, v9, v9\n\
             v_add_f32 v10, v11, 0",
            |w, _| {
                w.mode &= !0xf0;
                let (a, b) = (1e-300f64, 1e-10f64);
                w.v[0] = [a.to_bits() as u32; 64];
                w.v[1] = [(a.to_bits() >> 32) as u32; 64];
                w.v[2] = [b.to_bits() as u32; 64];
                w.v[3] = [(b.to_bits() >> 32) as u32; 64];
                w.v[7] = [0x0400; 64]; // smallest normal f16: its square is tiny
                w.v[9] = [1e-20f32.to_bits(); 64];
                w.v[11] = [1e-40f32.to_bits(); 64];
            },
        )
        .unwrap();
        assert_eq!(r.wave.v[4][0], 0);
        assert_eq!(r.wave.v[5][0], 0);
        assert_eq!(r.wave.v[6][0] & 0xffff, 0);
        assert_eq!(r.wave.v[8][0], 0);
        assert_eq!(r.wave.v[10][0], 0);
    }
}
