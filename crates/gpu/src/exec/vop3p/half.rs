//! Half-precision helpers for packed math: exact f16 to f32 conversion,
//! correctly rounded f64 to f16 conversion under the MODE rounding modes,
//! denormal flushing and the IEEE min/max rules.
//!
//! f16 arithmetic is evaluated in f64 and rounded once to f16: sums and
//! products of f16 values are exact in f64, and an f16 fma is exact or far
//! from an f16 rounding boundary, so the result is the correctly rounded
//! one.

/// MODE.FP_ROUND values (ISA manual, "MODE register"): 0 nearest even
/// (the default arm of the matches below), 1 toward +infinity, 2 toward
/// -infinity, 3 toward zero.
pub const RUP: u32 = 1;
pub const RDN: u32 = 2;
pub const RTZ: u32 = 3;

/// f16 bits to f32 (exact; NaN payloads kept).
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from(h >> 10) & 0x1f;
    let man = u32::from(h & 0x3ff);
    match exp {
        0 => {
            // Zero or denormal: man * 2^-24.
            let v = man as f32 * f32::from_bits(0x3380_0000);
            f32::from_bits(v.to_bits() | sign)
        }
        0x1f => f32::from_bits(sign | 0x7f80_0000 | (man << 13)),
        _ => f32::from_bits(sign | ((exp + 112) << 23) | (man << 13)),
    }
}

/// Rounds `x` to f16 with the MODE rounding mode `rm`. NaNs become quiet
/// NaNs keeping the top payload bits; overflow gives infinity or the
/// largest finite value as the rounding direction demands.
pub fn f64_to_f16(x: f64, rm: u32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let neg = sign != 0;
    if x.is_nan() {
        return sign | 0x7e00 | ((bits >> 42) & 0x1ff) as u16;
    }
    let a = x.abs();
    let overflow = || -> u16 {
        let to_inf = match rm {
            RTZ => false,
            RUP => !neg,
            RDN => neg,
            _ => true,
        };
        sign | if to_inf { 0x7c00 } else { 0x7bff }
    };
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    // Unbiased exponent of a (f64 denormals are far below f16's range).
    let e = ((bits >> 52) & 0x7ff) as i32 - 1023;
    if e > 15 {
        return overflow();
    }
    // The f16 quantum at this magnitude: 2^-24 for denormals, else
    // 2^(e-10).
    let q = e.max(-14) - 10;
    // a / 2^q, exact (a power-of-two scaling within f64's range).
    let n = a * f64::from_bits(((1023 - q) as u64) << 52);
    let t = n.trunc();
    let frac = n - t;
    let up = match rm {
        RTZ => false,
        RUP => !neg && frac > 0.0,
        RDN => neg && frac > 0.0,
        _ => frac > 0.5 || (frac == 0.5 && (t as u32) & 1 == 1),
    };
    let mut m = t as u32 + u32::from(up);
    let mut q = q;
    if q == -24 && m < 1024 {
        // Denormal (or zero): the encoding is the mantissa count.
        return sign | m as u16;
    }
    if m == 2048 {
        m = 1024;
        q += 1;
    }
    // Normal: m in 1024..2048, value m * 2^q, biased exponent q + 25.
    let biased = q + 25;
    if biased >= 31 {
        return overflow();
    }
    sign | ((biased as u16) << 10) | (m - 1024) as u16
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
