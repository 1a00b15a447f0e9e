//! Half-precision helpers for packed math: exact f16 to f32 conversion,
//! correctly rounded f64 to f16 conversion under the MODE rounding modes,
//! denormal flushing and the IEEE min/max rules.
//!
//! f16 arithmetic is evaluated in f64 and rounded once to f16: sums and
//! products of f16 values are exact in f64, and fused multiply-adds go
//! through [`fma_odd`], so every result is the correctly rounded one.

/// MODE.FP_ROUND values (ISA manual, "MODE register"): 0 nearest even
/// (the default arm of the matches below), 1 toward +infinity, 2 toward
/// -infinity, 3 toward zero.
pub const RUP: u32 = 1;
pub const RDN: u32 = 2;
pub const RTZ: u32 = 3;

/// f16 bits to f32 (exact; NaN payloads kept). All three cases are
/// computed and one selected, so that lane loops vectorise.
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    let h = u32::from(h);
    let sign = (h & 0x8000) << 16;
    let em = h & 0x7fff;
    let exp = em & 0x7c00;
    // Normal: rebias the exponent by 127 - 15.
    let normal = (em << 13) + 0x3800_0000;
    let special = (em << 13) | 0x7f80_0000;
    // Zero or denormal: em * 2^-24, exact.
    let tiny = (em as f32 * f32::from_bits(0x3380_0000)).to_bits();
    let mag = if exp == 0x7c00 {
        special
    } else if exp == 0 {
        tiny
    } else {
        normal
    };
    f32::from_bits(sign | mag)
}

/// Rounds an f32 to f16, nearest even (the common MODE): the fast path
/// for results that are exact in f32 or whose f32 rounding is innocuous.
/// Every case is computed and one selected, so that lane loops vectorise.
#[inline]
pub fn f32_to_f16_rne(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = (b >> 16) & 0x8000;
    let a = b & 0x7fff_ffff;
    // Normal: rebias, drop 13 mantissa bits with nearest-even (a carry
    // moves into the exponent).
    let r = a.wrapping_sub(0x3800_0000);
    let t = r >> 13;
    let rem = r & 0x1fff;
    let normal = t + u32::from((rem > 0x1000) | ((rem == 0x1000) & (t & 1 == 1)));
    // Below 2^-14: adding 0.5 (whose f32 ulp is 2^-24) rounds to a count
    // of 2^-24 quanta, nearest even, in the low bits.
    let tiny = (f32::from_bits(a) + 0.5)
        .to_bits()
        .wrapping_sub(0x3f00_0000);
    let nan = 0x7e00 | ((a >> 13) & 0x1ff);
    let mag = if a > 0x7f80_0000 {
        nan
    } else if a >= 0x477f_f000 {
        // 65520 and above (and infinity) round to infinity.
        0x7c00
    } else if a < 0x3880_0000 {
        tiny
    } else {
        normal
    };
    (sign | mag) as u16
}

/// Rounds `x` to f16 with the MODE rounding mode `rm`. NaNs become quiet
/// NaNs keeping the top payload bits; overflow gives infinity or the
/// largest finite value as the rounding direction demands. Integer
/// arithmetic on the f64 encoding: the significand is shifted down to the
/// f16 quantum at its magnitude and rounded on the dropped bits.
pub fn f64_to_f16(x: f64, rm: u32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let neg = sign != 0;
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if biased == 0x7ff {
        return sign
            | if frac == 0 {
                0x7c00
            } else {
                0x7e00 | (frac >> 42) as u16 & 0x1ff
            };
    }
    let overflow = || -> u16 {
        let to_inf = match rm {
            RTZ => false,
            RUP => !neg,
            RDN => neg,
            _ => true,
        };
        sign | if to_inf { 0x7c00 } else { 0x7bff }
    };
    if bits << 1 == 0 {
        return sign;
    }
    // Unbiased exponent and significand (f64 denormals are far below
    // f16's range; their significand only contributes a sticky bit).
    let (e, sig) = if biased == 0 {
        (-1022, frac)
    } else {
        (biased - 1023, frac | (1u64 << 52))
    };
    if e > 15 {
        return overflow();
    }
    // Value = sig * 2^(e-52); the f16 quantum is 2^(max(e,-14)-10).
    let shift = (42 + e.max(-14) - e) as u32;
    let (t, rem, half) = if shift >= 64 {
        (0, sig, u64::MAX)
    } else {
        (
            sig >> shift,
            sig & ((1u64 << shift) - 1),
            1u64 << (shift - 1),
        )
    };
    let up = match rm {
        RTZ => false,
        RUP => !neg && rem != 0,
        RDN => neg && rem != 0,
        _ => rem > half || (rem == half && t & 1 == 1),
    };
    let m = (t + u64::from(up)) as u32;
    if e < -14 || m < 1024 {
        // Denormal range: the encoding is the count of 2^-24 quanta (a
        // carry into 1024 is the smallest normal's encoding).
        return sign | m as u16;
    }
    // Normal: m in 1024..=2048 quanta of 2^(e-10).
    let (m, e) = if m == 2048 { (1024, e + 1) } else { (m, e) };
    if e > 15 {
        return overflow();
    }
    sign | (((e + 15) as u16) << 10) | (m - 1024) as u16
}

/// `a * b + c` rounded to f64 with round-to-odd, for `a * b` exact in f64
/// (products of f32 or f16 values): the sum's rounding error (Knuth's
/// TwoSum) decides whether the last bit is made odd. Rounding the result
/// once more to a format of at most 51 significant bits (f32, f16) gives
/// the correctly rounded fused multiply-add, without relying on a
/// hardware FMA.
#[inline]
pub fn fma_odd(a: f64, b: f64, c: f64) -> f64 {
    let p = a * b;
    let s = p + c;
    let bb = s - p;
    let err = (p - (s - bb)) + (c - bb);
    let bits = s.to_bits();
    // Step an even, inexact, finite result to its odd neighbour on the
    // side of the exact value (branch-free, so that lane loops vectorise).
    let step = u64::from(s.is_finite() & (err != 0.0) & (bits & 1 == 0));
    let up = (err > 0.0) == (s > 0.0);
    let delta = if up { step } else { step.wrapping_neg() };
    f64::from_bits(bits.wrapping_add(delta))
}

/// Single-precision fused multiply-add, correctly rounded (nearest even).
#[inline]
pub fn fma32(a: f32, b: f32, c: f32) -> f32 {
    fma_odd(f64::from(a), f64::from(b), f64::from(c)) as f32
}

/// Lane-wise single-precision fused multiply-add on f32 bit patterns,
/// `out = (a ^ n[0]) * (b ^ n[1]) + (c ^ n[2])` (`n` flips sign bits),
/// correctly rounded: with the CPU's FMA instructions where it has them,
/// else with [`fma32`].
#[inline]
pub fn fma_bits(a: &[u32; 64], b: &[u32; 64], c: &[u32; 64], n: [u32; 3], out: &mut [u32; 64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: `fma_bits_hw` only requires the FMA extension, which the
        // CPU was just found to have.
        unsafe { fma_bits_hw(a, b, c, n, out) };
        return;
    }
    for l in 0..64 {
        let (x, y, z) = (
            f32::from_bits(a[l] ^ n[0]),
            f32::from_bits(b[l] ^ n[1]),
            f32::from_bits(c[l] ^ n[2]),
        );
        out[l] = fma32(x, y, z).to_bits();
    }
}

/// [`fma_bits`] compiled for CPUs with FMA (`mul_add` becomes one
/// instruction).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma,avx2")]
fn fma_bits_hw(a: &[u32; 64], b: &[u32; 64], c: &[u32; 64], n: [u32; 3], out: &mut [u32; 64]) {
    for l in 0..64 {
        let (x, y, z) = (
            f32::from_bits(a[l] ^ n[0]),
            f32::from_bits(b[l] ^ n[1]),
            f32::from_bits(c[l] ^ n[2]),
        );
        out[l] = x.mul_add(y, z).to_bits();
    }
}

/// Rounds `y` to f32 in the MODE rounding direction `rm`. `y` must be the
/// exact result or its round-to-odd in f64 (as [`fma_odd`] gives), from
/// which every direction rounds correctly (53 >= 24 + 2 bits).
#[inline]
pub fn f64_to_f32_dir(y: f64, rm: u32) -> f32 {
    let t = y as f32;
    if rm == 0 || y.is_nan() || f64::from(t) == y {
        return t;
    }
    // One f32 step up or down the number line (from the nearest value,
    // which is at most one step from the directed one).
    let up = |t: f32| {
        if t == 0.0 {
            f32::from_bits(1)
        } else if t > 0.0 {
            f32::from_bits(t.to_bits() + 1)
        } else {
            f32::from_bits(t.to_bits() - 1)
        }
    };
    let down = |t: f32| -up(-t);
    let above = f64::from(t) > y;
    match rm {
        RTZ if f64::from(t).abs() > y.abs() => {
            if t > 0.0 {
                down(t)
            } else {
                up(t)
            }
        }
        RUP if !above => up(t),
        RDN if above => down(t),
        _ => t,
    }
}

/// Flushes an f16 denormal to a signed zero.
#[inline]
pub fn ftz16(h: u16) -> u16 {
    if h & 0x7c00 == 0 { h & 0x8000 } else { h }
}

/// Flushes an f32 denormal (as bits) to a signed zero.
#[inline]
pub fn ftz32(x: u32) -> u32 {
    if x & 0x7f80_0000 == 0 {
        x & 0x8000_0000
    } else {
        x
    }
}

/// IEEE min/max of two f32 values as the VALU computes them (ISA manual,
/// "V_MIN_F32"): -0 is less than +0; a NaN operand is ignored unless
/// both are NaN; in IEEE mode a signaling NaN input gives a quiet NaN.
#[inline]
pub fn minmax(a: f32, b: f32, max: bool, ieee: bool) -> f32 {
    let quiet = |x: f32| f32::from_bits(x.to_bits() | 0x0040_0000);
    let snan = |x: f32| x.is_nan() && x.to_bits() & 0x0040_0000 == 0;
    if ieee {
        if snan(a) {
            return quiet(a);
        }
        if snan(b) {
            return quiet(b);
        }
    }
    match (a.is_nan(), b.is_nan()) {
        (true, true) => quiet(a),
        (true, false) => b,
        (false, true) => a,
        _ => {
            // Total order on the sign of zero: -0 < +0.
            let a_lt_b = a < b || (a == b && a.is_sign_negative() && !b.is_sign_negative());
            if a_lt_b == max { b } else { a }
        }
    }
}

/// IEEE 754-2019 minimum/maximum (gfx950 `v_pk_minimum3_f16`): NaN in,
/// NaN out; -0 is less than +0.
#[inline]
pub fn minimum(a: f32, b: f32, max: bool) -> f32 {
    if a.is_nan() {
        return f32::from_bits(a.to_bits() | 0x0040_0000);
    }
    if b.is_nan() {
        return f32::from_bits(b.to_bits() | 0x0040_0000);
    }
    let a_lt_b = a < b || (a == b && a.is_sign_negative() && !b.is_sign_negative());
    if a_lt_b == max { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::float::{Rounding, f16_to_f32 as ref_to_f32, f32_to_f16 as ref_to_f16};

    const RNE: u32 = 0;

    fn is_nan16(h: u16) -> bool {
        h & 0x7c00 == 0x7c00 && h & 0x3ff != 0
    }

    /// Every f16 converts exactly (checked against the float module, which
    /// is tested against numpy).
    #[test]
    fn f16_to_f32_matches_reference_on_every_value() {
        for h in 0..=u16::MAX {
            let (a, b) = (f16_to_f32(h), ref_to_f32(h));
            if b.is_nan() {
                assert!(a.is_nan(), "{h:#x}");
            } else {
                assert_eq!(a.to_bits(), b.to_bits(), "{h:#x}");
            }
        }
    }

    /// Rounding f32 values (exact in f64) matches the float module's
    /// f32-to-f16 conversion in every mode, over a sweep that covers
    /// ties, denormals, overflow and both signs.
    #[test]
    fn f64_to_f16_matches_reference_rounding() {
        let modes = [
            (RNE, Rounding::NearestEven),
            (RUP, Rounding::TowardPositive),
            (RDN, Rounding::TowardNegative),
            (RTZ, Rounding::TowardZero),
        ];
        let mut x: u32 = 0;
        while x < 0x4800_0000 {
            for s in [0, 0x8000_0000u32] {
                let f = f32::from_bits(x | s);
                for (rm, r) in modes {
                    let want = ref_to_f16(f, r);
                    let got = f64_to_f16(f64::from(f), rm);
                    assert_eq!(got, want, "{:#x} mode {rm}", x | s);
                }
            }
            x += 4099;
        }
        // Every midpoint between adjacent finite f16 values, and its
        // neighbours one f32 ulp away.
        for h in 0..0x7bffu16 {
            // Exact in f32, which has 13 more mantissa bits.
            let mid = ((f16_to_f32(h) + f16_to_f32(h + 1)) * 0.5).to_bits();
            for d in [mid - 1, mid, mid + 1] {
                for s in [0, 0x8000_0000u32] {
                    let f = f32::from_bits(d | s);
                    for (rm, r) in modes {
                        assert_eq!(f64_to_f16(f64::from(f), rm), ref_to_f16(f, r), "{f:e} {rm}");
                    }
                }
            }
        }
        for (rm, r) in modes {
            for f in [65520.0f32, 65519.0, 1e10, -1e10, 5.96e-8, 2.98e-8, -2.99e-8] {
                assert_eq!(f64_to_f16(f64::from(f), rm), ref_to_f16(f, r), "{f} {rm}");
            }
        }
        assert_eq!(f64_to_f16(f64::INFINITY, RTZ), 0x7c00);
        assert!(is_nan16(f64_to_f16(f64::NAN, RNE)));
    }

    /// fma32 agrees with the standard library's correctly rounded
    /// `mul_add` on random and boundary operands.
    #[test]
    fn fma32_matches_std_mul_add() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        };
        let special = [
            0.0f32,
            -0.0,
            1.0,
            f32::MIN_POSITIVE,
            1.0e-45,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
            1.0 + f32::EPSILON,
            -1.0,
        ];
        for i in 0..400_000 {
            let (a, b, c) = if i < 1000 {
                (special[i % 10], special[i / 10 % 10], special[i / 100 % 10])
            } else if i % 2 == 0 {
                (
                    f32::from_bits(next()),
                    f32::from_bits(next()),
                    f32::from_bits(next()),
                )
            } else {
                // Near-cancelling operands: c close to -a*b.
                let (a, b) = (
                    f32::from_bits(next() & 0xbfff_ffff),
                    f32::from_bits(next() & 0xbfff_ffff),
                );
                let c = -(a * b) * (1.0 + f32::from_bits(next() & 0x007f_ffff | 0x3000_0000));
                (a, b, c)
            };
            let (got, want) = (fma32(a, b, c), a.mul_add(b, c));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{a:e} {b:e} {c:e}: {got:e} != {want:e}"
            );
        }
    }

    /// The lane-wise fma (hardware path where available) agrees with the
    /// portable one, sign flips included.
    #[test]
    fn fma_bits_matches_fma32() {
        let a: [u32; 64] = std::array::from_fn(|l| ((l as f32 - 31.5) * 1.0e-3 + 1.0).to_bits());
        let b: [u32; 64] = std::array::from_fn(|l| (1.0 / (l as f32 + 0.25)).to_bits());
        let c: [u32; 64] = std::array::from_fn(|l| {
            (f32::from_bits(a[l]) * f32::from_bits(b[l]) + l as f32 * 1.0e-9).to_bits()
        });
        let mut got = [0u32; 64];
        fma_bits(&a, &b, &c, [0, 0, 0x8000_0000], &mut got);
        for l in 0..64 {
            let (x, y, z) = (
                f32::from_bits(a[l]),
                f32::from_bits(b[l]),
                -f32::from_bits(c[l]),
            );
            assert_eq!(got[l], fma32(x, y, z).to_bits(), "lane {l}");
        }
    }

    /// Directed rounding of exact f64 products agrees with truncating the
    /// f64 significand to f32's 24 bits (toward zero) and stepping one f32
    /// ulp away from zero when bits were dropped (away from zero), for
    /// results in f32's normal range.
    #[test]
    fn f64_to_f32_directed() {
        let mut x: u64 = 0x1234_5678_9abc_def1;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = f32::from_bits(0x3f80_0000 | (x as u32 & 0x807f_ffff));
            let b = f32::from_bits(0x4000_0000 | ((x >> 32) as u32 & 0x807f_ffff));
            let y = f64::from(a) * f64::from(b);
            let trunc = f64::from_bits(y.to_bits() & !((1u64 << 29) - 1)) as f32;
            let inexact = f64::from(trunc) != y;
            let away = if inexact {
                f32::from_bits(trunc.to_bits() + 1)
            } else {
                trunc
            };
            let (hi, lo) = if y > 0.0 {
                (away, trunc)
            } else {
                (trunc, away)
            };
            assert_eq!(f64_to_f32_dir(y, RTZ), trunc, "{a} * {b}");
            assert_eq!(f64_to_f32_dir(y, RUP), hi, "{a} * {b}");
            assert_eq!(f64_to_f32_dir(y, RDN), lo, "{a} * {b}");
            assert_eq!(f64_to_f32_dir(y, RNE), y as f32);
        }
        assert_eq!(f64_to_f32_dir(1.0e300, RTZ), f32::MAX);
        assert_eq!(f64_to_f32_dir(-1.0e300, RUP), -f32::MAX);
        assert_eq!(f64_to_f32_dir(1.0e-300, RUP), f32::from_bits(1));
        assert_eq!(f64_to_f32_dir(1.0e-300, RDN), 0.0);
    }

    #[test]
    fn minmax_rules() {
        assert_eq!(
            minmax(-0.0, 0.0, false, false).to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(minmax(0.0, -0.0, true, false).to_bits(), 0);
        assert_eq!(minmax(f32::NAN, 2.0, false, false), 2.0);
        assert_eq!(minmax(3.0, f32::NAN, true, true), 3.0);
        let snan = f32::from_bits(0x7f80_0001);
        assert!(minmax(snan, 1.0, false, true).is_nan());
        assert_eq!(minmax(snan, 1.0, false, false), 1.0);
        assert!(minimum(1.0, f32::NAN, false).is_nan());
        assert_eq!(minimum(-0.0, 0.0, true).to_bits(), 0);
    }
}
