//! Floating-point vector ALU operations (f16, f32, f64), conversions and
//! transcendentals: the MODE register's float controls, exact rounding to a
//! narrower format under any IEEE rounding direction, f16 and f64 source
//! readers and result writers, and the lookup that chains the families
//! ([`super::float_arith`], [`super::float_unary`], [`super::float_div`],
//! [`super::cvt`], [`super::cvt_fp8`], [`super::cmp_float`]).
//!
//! MODE (ISA manual, "MODE register"): FP_ROUND bits 1:0 round f32 and bits
//! 3:2 round f64/f16 (0 nearest even, 1 toward +inf, 2 toward -inf, 3 toward
//! zero); FP_DENORM bit 4/5 allow f32 denormal inputs/outputs, bit 6/7
//! allow f64/f16 denormal inputs/outputs; bit 8 DX10_CLAMP; bit 9 IEEE.
//!
//! Rounding modes: f32 add/sub/mul/fma/mad, f16 arithmetic, int-to-float,
//! f64-to-f32 and f32-to-f16 conversions and `v_ldexp` honour all four
//! directions; f64 add/mul honour them; f64 fma and the transcendentals
//! round to nearest even.

use super::*;
use crate::exec::op::{Ctx, Op};
use crate::float::Rounding;

/// The semantic function of a floating-point vector ALU base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    super::float_arith::lookup(name)
        .or_else(|| super::float_unary::lookup(name))
        .or_else(|| super::float_div::lookup(name))
        .or_else(|| super::cvt::lookup(name))
        .or_else(|| super::cvt_fp8::lookup(name))
        .or_else(|| super::cmp_float::lookup(name))
}

// ---------------------------------------------------------------------------
// MODE.

/// MODE.IEEE: signaling NaNs are quieted by min/max.
pub const MODE_IEEE: u32 = 1 << 9;

/// The rounding direction of a two-bit FP_ROUND field.
#[inline]
pub fn rounding(bits: u32) -> Rounding {
    match bits & 3 {
        0 => Rounding::NearestEven,
        1 => Rounding::TowardPositive,
        2 => Rounding::TowardNegative,
        _ => Rounding::TowardZero,
    }
}

/// The f32 rounding direction (MODE.FP_ROUND[1:0]).
#[inline]
pub fn round32(c: &Ctx) -> Rounding {
    rounding(c.wave.mode)
}

/// The f64/f16 rounding direction (MODE.FP_ROUND[3:2]).
#[inline]
pub fn round64(c: &Ctx) -> Rounding {
    rounding(c.wave.mode >> 2)
}

/// MODE.IEEE.
#[inline]
pub fn ieee(c: &Ctx) -> bool {
    c.wave.mode & MODE_IEEE != 0
}

/// Whether f64/f16 denormal inputs are kept (MODE.FP_DENORM[2]).
#[inline]
pub fn dp_denorm_in(c: &Ctx) -> bool {
    c.wave.mode & (1 << 6) != 0
}

/// Whether f64/f16 denormal results are kept (MODE.FP_DENORM[3]).
#[inline]
pub fn dp_denorm_out(c: &Ctx) -> bool {
    c.wave.mode & (1 << 7) != 0
}

// ---------------------------------------------------------------------------
// Exact rounding.

/// A binary floating-point format: significand precision (with the hidden
/// bit) and normal exponent range.
#[derive(Copy, Clone, Debug)]
pub struct Fmt {
    pub prec: i32,
    pub emin: i32,
    pub emax: i32,
}

/// IEEE binary32.
pub const FMT32: Fmt = Fmt {
    prec: 24,
    emin: -126,
    emax: 127,
};
/// IEEE binary16.
pub const FMT16: Fmt = Fmt {
    prec: 11,
    emin: -14,
    emax: 15,
};

/// 2^e as an f64 (exact for -1074 <= e <= 1023).
#[inline]
pub fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e.min(1023) + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e.max(-1074) + 1074))
    }
}

/// floor(log2(|x|)) of a finite non-zero f64, denormals included.
#[inline]
pub fn ilogb(x: f64) -> i32 {
    let b = x.to_bits() & !(1 << 63);
    let e = (b >> 52) as i32;
    if e == 0 {
        -1011 - b.leading_zeros() as i32
    } else {
        e - 1023
    }
}

/// x * 2^n for f64 with a single rounding (to nearest even).
pub fn scalbn(x: f64, n: i32) -> f64 {
    let mut x = x;
    let mut n = n.clamp(-2200, 2200);
    if n > 1023 {
        x *= pow2(1023);
        n -= 1023;
        if n > 1023 {
            x *= pow2(1023);
            n = (n - 1023).min(1023);
        }
    } else if n < -1022 {
        // Scale in steps that stay normal so that only the last multiply
        // rounds.
        x *= pow2(-1022 + 53);
        n += 1022 - 53;
        if n < -1022 {
            x *= pow2(-1022 + 53);
            n = (n + 1022 - 53).max(-1022);
        }
    }
    x * pow2(n)
}

/// The sum of two f64 and its exact rounding error (Knuth's TwoSum); the
/// error is 0 when the sum is not finite.
#[inline]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    if !s.is_finite() {
        return (s, 0.0);
    }
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err)
}

/// Rounds the exact value `x + err` (`err` far smaller than an ulp of `x`
/// in `fmt`; only its sign matters) to `fmt` in direction `r`, with
/// gradual underflow and the direction's overflow rule. The result is an
/// f64 exactly representable in `fmt`; NaN and infinities pass through.
pub fn round_fmt(x: f64, err: f64, fmt: Fmt, r: Rounding) -> f64 {
    if !x.is_finite() || (x == 0.0 && err == 0.0) {
        return x;
    }
    let neg = x < 0.0 || (x == 0.0 && err < 0.0);
    let mag = x.abs();
    // The error in the direction of growing magnitude.
    let em = if neg { -err } else { err };
    let e = if mag == 0.0 {
        fmt.emin
    } else {
        ilogb(mag).max(fmt.emin)
    };
    let qe = e - (fmt.prec - 1);
    let scaled = mag * pow2(-qe);
    let n = scaled.floor();
    let frac = scaled - n;
    let away = match r {
        Rounding::NearestEven => {
            frac > 0.5 || (frac == 0.5 && (em > 0.0 || (em == 0.0 && n % 2.0 == 1.0)))
        }
        Rounding::TowardZero => false,
        Rounding::TowardPositive => !neg && (frac > 0.0 || em > 0.0),
        Rounding::TowardNegative => neg && (frac > 0.0 || em > 0.0),
    };
    let toward = frac == 0.0
        && em < 0.0
        && match r {
            Rounding::NearestEven => false,
            Rounding::TowardZero => true,
            Rounding::TowardPositive => neg,
            Rounding::TowardNegative => !neg,
        };
    let v = if away {
        (n + 1.0) * pow2(qe)
    } else if toward {
        // Just below a representable magnitude: one step of the binade
        // below when the magnitude is its binade's smallest.
        let step = if n == pow2(fmt.prec - 1) && e > fmt.emin {
            pow2(qe - 1)
        } else {
            pow2(qe)
        };
        n * pow2(qe) - step
    } else {
        n * pow2(qe)
    };
    let max = (2.0 - pow2(1 - fmt.prec)) * pow2(fmt.emax);
    let v = if v > max {
        let to_inf = match r {
            Rounding::NearestEven => true,
            Rounding::TowardZero => false,
            Rounding::TowardPositive => !neg,
            Rounding::TowardNegative => neg,
        };
        if to_inf { f64::INFINITY } else { max }
    } else {
        v
    };
    if neg { -v } else { v }
}

/// Rounds an exact-or-nearly f64 (`x + err`) to f32 in direction `r`.
#[inline]
pub fn to_f32(x: f64, err: f64, r: Rounding) -> f32 {
    if r == Rounding::NearestEven && err == 0.0 {
        x as f32
    } else {
        round_fmt(x, err, FMT32, r) as f32
    }
}

/// The next f64 toward +inf (`up`) or -inf.
#[inline]
pub fn next_f64(x: f64, up: bool) -> f64 {
    if x.is_nan() || (x.is_infinite() && (x > 0.0) == up) {
        return x;
    }
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = x.to_bits();
    let grow = (x > 0.0) == up;
    f64::from_bits(if grow { b + 1 } else { b - 1 })
}

/// Corrects an f64 result `s` rounded to nearest, whose exact value is
/// `s + err`, to direction `r`. `inf_from_finite`: `s` is an infinity
/// that overflowed from finite operands.
#[inline]
pub fn direct_f64(s: f64, err: f64, r: Rounding, inf_from_finite: bool) -> f64 {
    if r == Rounding::NearestEven {
        return s;
    }
    if s.is_infinite() {
        if !inf_from_finite {
            return s;
        }
        let keep = match r {
            Rounding::TowardPositive => s > 0.0,
            Rounding::TowardNegative => s < 0.0,
            _ => false,
        };
        return if keep { s } else { f64::MAX.copysign(s) };
    }
    if err == 0.0 || s.is_nan() {
        return s;
    }
    match r {
        Rounding::TowardPositive if err > 0.0 => next_f64(s, true),
        Rounding::TowardNegative if err < 0.0 => next_f64(s, false),
        Rounding::TowardZero if (s > 0.0 && err < 0.0) || (s < 0.0 && err > 0.0) => {
            next_f64(s, s < 0.0)
        }
        _ => s,
    }
}

// ---------------------------------------------------------------------------
// Fast f32 lanes.

/// Whether f32 denormal inputs are kept (MODE.FP_DENORM[0], bit 4, as
/// [`f32s`] reads it).
#[inline(always)]
pub fn sp_denorm(c: &Ctx) -> bool {
    c.wave.mode & (1 << 4) != 0
}

/// Source `i` as f32 lanes with abs/neg and the MODE's input denormal
/// flushing, like [`f32s`] but with the lane-invariant choices hoisted out
/// of the lane loops.
#[inline(always)]
pub fn f32v(c: &Ctx, op: &Op, i: usize) -> [f32; 64] {
    let mut v = b32(c, op, i);
    if !sp_denorm(c) {
        for x in v.iter_mut() {
            let keep = if *x & 0x7f80_0000 == 0 {
                0x8000_0000
            } else {
                u32::MAX
            };
            *x &= keep;
        }
    }
    let (abs, neg) = (op.mods.abs >> i & 1 != 0, op.mods.neg >> i & 1 != 0);
    if abs || neg {
        let and = if abs { 0x7fff_ffff } else { u32::MAX };
        let xor = if neg { 0x8000_0000 } else { 0 };
        for x in v.iter_mut() {
            *x = (*x & and) ^ xor;
        }
    }
    v.map(f32::from_bits)
}

/// Writes f32 results: straight to the register when there is no omod,
/// clamp or output flushing to apply (MODE.FP_DENORM[1], bit 5, keeps f32
/// denormal results), else through [`write_f32`].
#[inline(always)]
pub fn out32(c: &mut Ctx, op: &Op, vals: &[f32; 64]) {
    if op.mods.omod == 0 && !op.mods.clamp && c.wave.mode & (1 << 5) != 0 {
        let bits = vals.map(f32::to_bits);
        write_b32(c, op, &bits);
    } else {
        write_f32(c, op, vals);
    }
}

/// Fused multiply-add of 64 lanes, correctly rounded: the host's FMA
/// instructions when the CPU has them, else [`super::float_arith::fma32`].
#[inline]
pub fn fma_lanes32(a: &[f32; 64], b: &[f32; 64], d: &[f32; 64]) -> [f32; 64] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports FMA and AVX2, checked just above.
        return unsafe { fma_lanes32_hw(a, b, d) };
    }
    std::array::from_fn(|l| super::float_arith::fma32(a[l], b[l], d[l]))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma,avx2")]
fn fma_lanes32_hw(a: &[f32; 64], b: &[f32; 64], d: &[f32; 64]) -> [f32; 64] {
    std::array::from_fn(|l| a[l].mul_add(b[l], d[l]))
}

/// Fused multiply-add of 64 f64 lanes (host FMA instructions when
/// available, else the C library's `fma`).
#[inline]
pub fn fma_lanes64(a: &[f64; 64], b: &[f64; 64], d: &[f64; 64]) -> [f64; 64] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports FMA and AVX2, checked just above.
        return unsafe { fma_lanes64_hw(a, b, d) };
    }
    std::array::from_fn(|l| a[l].mul_add(b[l], d[l]))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma,avx2")]
fn fma_lanes64_hw(a: &[f64; 64], b: &[f64; 64], d: &[f64; 64]) -> [f64; 64] {
    std::array::from_fn(|l| a[l].mul_add(b[l], d[l]))
}

// ---------------------------------------------------------------------------
// Fast f16 conversions.

/// f16 bits to f32, exact (NaNs quieted, payload kept).
#[inline(always)]
pub fn h2f_fast(h: u16) -> f32 {
    let s = u32::from(h & 0x8000) << 16;
    let e = u32::from(h >> 10 & 0x1f);
    let m = u32::from(h & 0x3ff);
    if e == 0x1f {
        let q = if m != 0 { 0x0040_0000 } else { 0 };
        f32::from_bits(s | 0x7f80_0000 | m << 13 | q)
    } else if e == 0 {
        // m * 2^-24, exact.
        f32::from_bits(s | (m as f32 * f32::from_bits(0x3380_0000)).to_bits())
    } else {
        f32::from_bits(s | (e + 112) << 23 | m << 13)
    }
}

/// f32 to bfloat16 bits, round to nearest even (denormals kept, NaNs
/// quieted with the top payload bits kept).
#[inline(always)]
pub fn f2bf_rne(x: f32) -> u16 {
    let b = x.to_bits();
    if b & 0x7fff_ffff > 0x7f80_0000 {
        (b >> 16 | 0x40) as u16
    } else {
        ((b + 0x7fff + (b >> 16 & 1)) >> 16) as u16
    }
}

/// f32 to f16 bits, round to nearest even, denormals kept, NaNs quieted
/// with the top payload bits kept.
#[inline(always)]
pub fn f2h_rne(x: f32) -> u16 {
    let b = x.to_bits();
    let s = (b >> 16 & 0x8000) as u16;
    let a = b & 0x7fff_ffff;
    if a > 0x7f80_0000 {
        s | 0x7e00 | (a >> 13 & 0x3ff) as u16
    } else if a >= 0x477f_f000 {
        // 65520 and above round to infinity.
        s | 0x7c00
    } else if a >= 0x3880_0000 {
        // Normal: rebias the exponent and round 23 to 10 mantissa bits.
        let r = a - 0x3800_0000;
        let r = r + 0xfff + (r >> 13 & 1);
        s | (r >> 13) as u16
    } else {
        // Denormal or zero: adding 0.5 rounds to a multiple of 2^-24.
        let f = f32::from_bits(a) + 0.5;
        s | (f.to_bits() - 0x3f00_0000) as u16
    }
}

// ---------------------------------------------------------------------------
// NaN helpers.

/// Whether an f32 is a signaling NaN.
#[inline]
pub fn snan32(x: f32) -> bool {
    x.is_nan() && x.to_bits() & 0x0040_0000 == 0
}

/// Whether an f64 is a signaling NaN.
#[inline]
pub fn snan64(x: f64) -> bool {
    x.is_nan() && x.to_bits() & (1 << 51) == 0
}

/// An f32 NaN quieted.
#[inline]
pub fn quiet32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() | 0x0040_0000)
}

/// An f64 NaN quieted.
#[inline]
pub fn quiet64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() | (1 << 51))
}

// ---------------------------------------------------------------------------
// f16 sources and results.

/// f16 bits to f32 (exact), flushing denormals unless `keep`.
#[inline]
pub fn h2f(h: u16, keep: bool) -> f32 {
    if !keep && h & 0x7c00 == 0 {
        return if h & 0x8000 != 0 { -0.0 } else { 0.0 };
    }
    h2f_fast(h)
}

/// An f16 value already representable in f16 (or NaN/inf) to its bits.
#[inline]
pub fn f2h_exact(x: f64) -> u16 {
    f2h_rne(x as f32)
}

/// Source `i` as f16 values widened to f32, with abs/neg, op_sel and the
/// MODE's f16 input denormal handling.
#[inline]
pub fn h32(c: &Ctx, op: &Op, i: usize) -> [f32; 64] {
    let v = f16s(c, op, i);
    let keep = dp_denorm_in(c);
    std::array::from_fn(|l| h2f(v[l], keep))
}

/// Whether f16 results need nothing beyond rounding to nearest even: no
/// omod, clamp, directed rounding or denormal flushing.
#[inline(always)]
pub fn plain16(c: &Ctx, op: &Op) -> bool {
    round64(c) == Rounding::NearestEven && dp_denorm_out(c) && op.mods.omod == 0 && !op.mods.clamp
}

/// Finishes an f16 result computed exactly (or nearly, `err`) in f64:
/// rounds per MODE, applies omod and clamp, flushes a denormal result per
/// MODE and encodes it.
#[inline]
pub fn out16(op: &Op, x: f64, err: f64, r: Rounding, keep_denorm: bool) -> u16 {
    if r == Rounding::NearestEven
        && err == 0.0
        && keep_denorm
        && op.mods.omod == 0
        && !op.mods.clamp
    {
        // One rounding of the f32 nearest to x, which is the direct
        // rounding of x when x is the exact result of one f16 (or f32)
        // operation or conversion (24 >= 2 * 11 + 2).
        return f2h_rne(x as f32);
    }
    let mut v = round_fmt(x, err, FMT16, r);
    match op.mods.omod {
        1 => v = round_fmt(v * 2.0, 0.0, FMT16, r),
        2 => v = round_fmt(v * 4.0, 0.0, FMT16, r),
        3 => v = round_fmt(v * 0.5, 0.0, FMT16, r),
        _ => {}
    }
    if op.mods.clamp {
        v = if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
    }
    if !keep_denorm && v != 0.0 && v.abs() < pow2(-14) {
        v = 0.0f64.copysign(v);
    }
    f2h_exact(v)
}

/// Writes a 16-bit result into one half of `vdst` (the high half when
/// op_sel[3] is set) and keeps the other half: the VOP3-only f16 ops
/// (`v_fma_f16`, `v_mad_f16`, `v_div_fixup_f16`) on GFX9.
#[inline]
pub fn write_b16_keep(c: &mut Ctx, op: &Op, vals: &[u16; 64]) {
    let old = *c.wave.vreg(op.vdst);
    let hi = op.mods.opsel & 8 != 0;
    let r: Lanes = std::array::from_fn(|l| {
        if hi {
            (old[l] & 0xffff) | (u32::from(vals[l]) << 16)
        } else {
            (old[l] & 0xffff_0000) | u32::from(vals[l])
        }
    });
    let mask = lanes(c, op);
    c.wave.write_v(op.vdst, &r, mask);
}

// ---------------------------------------------------------------------------
// f64 sources and results.

/// Source `i` as f64 lanes with abs/neg, flushing denormals when MODE says
/// so.
#[inline]
pub fn d64(c: &Ctx, op: &Op, i: usize) -> [f64; 64] {
    let mut v = f64s(c, op, i);
    if !dp_denorm_in(c) {
        for x in v.iter_mut() {
            if x.is_subnormal() {
                *x = 0.0f64.copysign(*x);
            }
        }
    }
    v
}

/// Writes f64 results (omod, clamp), flushing denormal results when MODE
/// says so.
#[inline]
pub fn out64(c: &mut Ctx, op: &Op, vals: &mut [f64; 64]) {
    if !dp_denorm_out(c) {
        for x in vals.iter_mut() {
            if x.is_subnormal() {
                *x = 0.0f64.copysign(*x);
            }
        }
    }
    if op.mods.omod == 0 && !op.mods.clamp {
        write_b64(c, op, &vals.map(f64::to_bits));
    } else {
        write_f64(c, op, vals);
    }
}

/// f32 lanes from raw bits with abs/neg but no denormal flushing (for
/// operations that see denormals regardless of MODE).
#[inline]
pub fn f32_raw(c: &Ctx, op: &Op, i: usize) -> [f32; 64] {
    let v = b32(c, op, i);
    let (abs, neg) = (op.mods.abs >> i & 1 != 0, op.mods.neg >> i & 1 != 0);
    std::array::from_fn(|l| {
        let mut x = v[l];
        if abs {
            x &= 0x7fff_ffff;
        }
        if neg {
            x ^= 0x8000_0000;
        }
        f32::from_bits(x)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_fmt_matches_ieee_f32_rounding() {
        // Nearest even against Rust's f64 -> f32 conversion.
        let xs = [
            1.0 + 2f64.powi(-24),
            1.0 + 3.0 * 2f64.powi(-24),
            -1.0 - 2f64.powi(-24),
            3.4028235677973366e38,
            3.4028236e38,
            1e-45,
            7e-46,
            0.7e-45,
            1.5 * 2f64.powi(-149),
            -2.5 * 2f64.powi(-149),
            1.0e300,
        ];
        for x in xs {
            assert_eq!(
                round_fmt(x, 0.0, FMT32, Rounding::NearestEven) as f32,
                x as f32,
                "{x:e}"
            );
        }
        // Directed rounding around 1 + half an ulp.
        let x = 1.0 + 2f64.powi(-24);
        let up = f32::from_bits(0x3f80_0001);
        assert_eq!(
            round_fmt(x, 0.0, FMT32, Rounding::TowardPositive) as f32,
            up
        );
        assert_eq!(round_fmt(x, 0.0, FMT32, Rounding::TowardZero) as f32, 1.0);
        assert_eq!(
            round_fmt(-x, 0.0, FMT32, Rounding::TowardNegative) as f32,
            -up
        );
        assert_eq!(
            round_fmt(-x, 0.0, FMT32, Rounding::TowardPositive) as f32,
            -1.0
        );
        // Exactly 1.0 but a hair below: toward zero steps into the binade
        // below.
        let below = f32::from_bits(0x3f7f_ffff);
        assert_eq!(
            round_fmt(1.0, -1e-30, FMT32, Rounding::TowardZero) as f32,
            below
        );
        assert_eq!(
            round_fmt(1.0, -1e-30, FMT32, Rounding::NearestEven) as f32,
            1.0
        );
        // Ties broken by the error's sign.
        assert_eq!(round_fmt(x, 1e-30, FMT32, Rounding::NearestEven) as f32, up);
        assert_eq!(
            round_fmt(x, -1e-30, FMT32, Rounding::NearestEven) as f32,
            1.0
        );
        // Overflow.
        assert_eq!(
            round_fmt(1e39, 0.0, FMT32, Rounding::TowardZero) as f32,
            f32::MAX
        );
        assert_eq!(
            round_fmt(-1e39, 0.0, FMT32, Rounding::TowardPositive) as f32,
            -f32::MAX
        );
        assert!(round_fmt(1e39, 0.0, FMT32, Rounding::NearestEven).is_infinite());
        // f16: 65520 is the overflow threshold, 2^-25 rounds to 0 (tie to even).
        assert!(round_fmt(65520.0, 0.0, FMT16, Rounding::NearestEven).is_infinite());
        assert_eq!(
            round_fmt(65519.0, 0.0, FMT16, Rounding::NearestEven),
            65504.0
        );
        assert_eq!(
            round_fmt(2f64.powi(-25), 0.0, FMT16, Rounding::NearestEven),
            0.0
        );
        assert_eq!(
            round_fmt(2f64.powi(-25), 1e-40, FMT16, Rounding::NearestEven),
            2f64.powi(-24)
        );
    }

    #[test]
    fn fast_f16_conversions_match_the_reference() {
        use crate::float::{f16_to_f32, f32_to_f16};
        for h in 0..=u16::MAX {
            let (a, b) = (h2f_fast(h), f16_to_f32(h));
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{h:#x}"
            );
        }
        let mut x = 0x2468_ace1u32;
        let check = |b: u32| {
            let v = f32::from_bits(b);
            let (got, want) = (f2h_rne(v), f32_to_f16(v, Rounding::NearestEven));
            assert_eq!(got, want, "{v:e} ({b:#x})");
        };
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            // Bias toward f16's exponent range.
            check((x & 0x8fff_ffff) | 0x3000_0000);
            check(x);
        }
        for b in [
            0x477f_efff,
            0x477f_f000,
            0x3880_0000,
            0x387f_ffff,
            0x3300_0000,
            0x3300_0001,
            0x7f80_0000,
            0x7fc0_1234,
            0x0000_0001,
        ] {
            check(b);
            check(b | 0x8000_0000);
        }
    }

    #[test]
    fn fast_bf16_conversion_matches_the_reference() {
        use crate::float::f32_to_bf16;
        let mut x = 0x1357_2468u32;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let v = f32::from_bits(x);
            assert_eq!(f2bf_rne(v), f32_to_bf16(v, Rounding::NearestEven), "{v:e}");
        }
        for b in [
            0x7f7f_ffffu32,
            0x7f7f_8000,
            0x3f80_8000,
            0x3f81_8000,
            0x0000_8000,
            0x7f80_0001,
        ] {
            let v = f32::from_bits(b);
            assert_eq!(f2bf_rne(v), f32_to_bf16(v, Rounding::NearestEven), "{b:#x}");
        }
    }

    #[test]
    fn scalbn_rounds_once() {
        assert_eq!(scalbn(1.5, -1074), f64::from_bits(2));
        assert_eq!(scalbn(1.0, 2000), f64::INFINITY);
        assert_eq!(scalbn(3.0, -1075), f64::from_bits(2));
        assert_eq!(scalbn(f64::from_bits(1), 1074), 1.0);
        assert_eq!(scalbn(1.0, -3000), 0.0);
    }

    #[test]
    fn directed_f64_steps_one_ulp() {
        let (s, e) = two_sum(1.0, 1e-20);
        assert_eq!(s, 1.0);
        assert_eq!(
            direct_f64(s, e, Rounding::TowardPositive, false),
            next_f64(1.0, true)
        );
        assert_eq!(direct_f64(s, e, Rounding::TowardZero, false), 1.0);
        let (s, e) = two_sum(-1.0, -1e-20);
        assert_eq!(direct_f64(s, e, Rounding::TowardZero, false), -1.0);
        assert_eq!(
            direct_f64(s, e, Rounding::TowardNegative, false),
            next_f64(-1.0, false)
        );
        assert_eq!(
            direct_f64(f64::INFINITY, 0.0, Rounding::TowardZero, true),
            f64::MAX
        );
    }
}
