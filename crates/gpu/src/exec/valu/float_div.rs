//! The division helpers `v_div_scale`, `v_div_fmas`, `v_div_fixup`
//! (f32/f64, fixup also f16) and `v_trig_preop_f64` (ISA manual,
//! "VOP3A instructions").
//!
//! The compiler divides as: scale numerator and denominator
//! (`v_div_scale`, which sets VCC when the quotient needs post-scaling),
//! reciprocal plus two Newton-Raphson steps with fma, `v_div_fmas` (the
//! last fma, post-scaled by 2^+-64 (f32) or 2^+-128 (f64) per VCC, the
//! sign of the scale chosen by the quotient's magnitude), then
//! `v_div_fixup` for zeros, infinities, NaN and under/overflow. "DENORM"
//! conditions of the manual's pseudocode are read as "a denormal of the
//! operation's precision".

use super::float::*;
use super::float_arith::fma32;
use super::*;
use crate::exec::op::{Ctx, Fault, Op};

/// The semantic function of a division-helper base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_div_scale_f32" => v_div_scale_f32,
        "v_div_scale_f64" => v_div_scale_f64,
        "v_div_fmas_f32" => v_div_fmas_f32,
        "v_div_fmas_f64" => v_div_fmas_f64,
        "v_div_fixup_f32" => v_div_fixup_f32,
        "v_div_fixup_f64" => v_div_fixup_f64,
        "v_div_fixup_f16" => v_div_fixup_f16,
        "v_div_fixup_legacy_f16" => v_div_fixup_legacy_f16,
        "v_trig_preop_f64" => v_trig_preop_f64,
        _ => return None,
    })
}

#[inline(always)]
fn exp32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xff) as i32
}

#[inline(always)]
fn exp64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32
}

/// `V_DIV_SCALE_F32` for one lane: the scaled value and the VCC bit.
pub fn div_scale32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    let ldexp = |x: f32, n: i32| (f64::from(x) * pow2(n)) as f32;
    if s2 == 0.0 || s1 == 0.0 {
        return (f32::NAN, false);
    }
    if exp32(s2) - exp32(s1) >= 96 {
        // Quotient near the largest f32: scale only the denominator.
        return (if s0 == s1 { ldexp(s0, 64) } else { s0 }, true);
    }
    if s1.is_subnormal() {
        return (ldexp(s0, 64), false);
    }
    let rcp_tiny = ((1.0 / f64::from(s1)) as f32).is_subnormal();
    let quot_tiny = (s2 / s1).is_subnormal();
    if rcp_tiny && quot_tiny {
        // Huge denominator and tiny quotient: scale the denominator down
        // (the manual's pseudocode says up, which overflows; down is what
        // makes the macro's quotient correct, with V_DIV_FMAS scaling the
        // result by 2^-64).
        return (if s0 == s1 { ldexp(s0, -64) } else { s0 }, true);
    }
    if rcp_tiny {
        return (ldexp(s0, -64), false);
    }
    if quot_tiny {
        return (if s0 == s2 { ldexp(s0, 64) } else { s0 }, true);
    }
    if exp32(s2) <= 23 {
        // Tiny numerator.
        return (ldexp(s0, 64), false);
    }
    (s0, false)
}

/// `V_DIV_SCALE_F64` for one lane.
pub fn div_scale64(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, false);
    }
    if exp64(s2) - exp64(s1) >= 768 {
        return (if s0 == s1 { scalbn(s0, 128) } else { s0 }, true);
    }
    if s1.is_subnormal() {
        return (scalbn(s0, 128), false);
    }
    let rcp_tiny = (1.0 / s1).is_subnormal();
    let quot_tiny = (s2 / s1).is_subnormal();
    if rcp_tiny && quot_tiny {
        // As in `div_scale32`: scale the huge denominator down.
        return (if s0 == s1 { scalbn(s0, -128) } else { s0 }, true);
    }
    if rcp_tiny {
        return (scalbn(s0, -128), false);
    }
    if quot_tiny {
        return (if s0 == s2 { scalbn(s0, 128) } else { s0 }, true);
    }
    if exp64(s2) <= 53 {
        return (scalbn(s0, 128), false);
    }
    (s0, false)
}

pub fn v_div_scale_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1, s2) = (f32_raw(c, op, 0), f32_raw(c, op, 1), f32_raw(c, op, 2));
    let mut vcc = 0u64;
    let out: [f32; 64] = std::array::from_fn(|l| {
        let (v, flag) = div_scale32(s0[l], s1[l], s2[l]);
        vcc |= u64::from(flag) << l;
        v
    });
    write_f32(c, op, &out);
    write_mask(c, op, vcc);
    Ok(())
}

pub fn v_div_scale_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1, s2) = (f64s(c, op, 0), f64s(c, op, 1), f64s(c, op, 2));
    let mut vcc = 0u64;
    let mut out: [f64; 64] = std::array::from_fn(|l| {
        let (v, flag) = div_scale64(s0[l], s1[l], s2[l]);
        vcc |= u64::from(flag) << l;
        v
    });
    out64(c, op, &mut out);
    write_mask(c, op, vcc);
    Ok(())
}

/// `v_div_fmas_f32`: fma, post-scaled by 2^64 (|S2| >= 2) or 2^-64 in
/// lanes whose VCC bit is set, with a single rounding. Input denormals
/// are not flushed.
pub fn v_div_fmas_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1, s2) = (f32_raw(c, op, 0), f32_raw(c, op, 1), f32_raw(c, op, 2));
    let vcc = c.wave.vcc();
    let r = round32(c);
    let out: [f32; 64] = std::array::from_fn(|l| {
        let (a, b, d) = (s0[l], s1[l], s2[l]);
        if vcc >> l & 1 == 0 {
            if r == crate::float::Rounding::NearestEven {
                return fma32(a, b, d);
            }
            let (s, e) = two_sum(f64::from(a) * f64::from(b), f64::from(d));
            return to_f32(s, e, r);
        }
        let k = if exp32(d) > 127 { pow2(64) } else { pow2(-64) };
        let (s, e) = two_sum(f64::from(a) * f64::from(b), f64::from(d));
        to_f32(s * k, e * k, r)
    });
    write_f32(c, op, &out);
    Ok(())
}

/// `v_div_fmas_f64`: fma, post-scaled by 2^128 (|S2| >= 2) or 2^-128 in
/// lanes whose VCC bit is set.
pub fn v_div_fmas_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1, s2) = (f64s(c, op, 0), f64s(c, op, 1), f64s(c, op, 2));
    let vcc = c.wave.vcc();
    let mut out: [f64; 64] = std::array::from_fn(|l| {
        let f = s0[l].mul_add(s1[l], s2[l]);
        if vcc >> l & 1 == 0 {
            f
        } else if exp64(s2[l]) > 1023 {
            scalbn(f, 128)
        } else {
            scalbn(f, -128)
        }
    });
    out64(c, op, &mut out);
    Ok(())
}

/// The special cases of a quotient `q` of `n / d` shared by the fixups;
/// `None` when `q` stands (with the quotient's sign).
#[inline(always)]
fn fixup_special(
    n_nan: bool,
    d_nan: bool,
    n0: bool,
    d0: bool,
    n_inf: bool,
    d_inf: bool,
) -> Option<u8> {
    if n_nan {
        Some(0)
    } else if d_nan {
        Some(1)
    } else if (d0 && n0) || (d_inf && n_inf) {
        Some(2)
    } else if d0 || n_inf {
        Some(3)
    } else if d_inf || n0 {
        Some(4)
    } else {
        None
    }
}

/// `V_DIV_FIXUP_F32` for one lane: quotient `q`, denominator `d`,
/// numerator `n`.
pub fn div_fixup32(q: f32, d: f32, n: f32) -> f32 {
    let neg = (d.to_bits() ^ n.to_bits()) >> 31 != 0;
    let sign = |x: f32| if neg { -x } else { x };
    match fixup_special(
        n.is_nan(),
        d.is_nan(),
        n == 0.0,
        d == 0.0,
        n.is_infinite(),
        d.is_infinite(),
    ) {
        Some(0) => quiet32(n),
        Some(1) => quiet32(d),
        Some(2) => f32::from_bits(0xffc0_0000),
        Some(3) => sign(f32::INFINITY),
        Some(_) => sign(0.0),
        None if exp32(n) - exp32(d) < -150 => sign(0.0),
        None if q.is_nan() => sign(f32::INFINITY),
        None => sign(q.abs()),
    }
}

/// `V_DIV_FIXUP_F64` for one lane.
pub fn div_fixup64(q: f64, d: f64, n: f64) -> f64 {
    let neg = (d.to_bits() ^ n.to_bits()) >> 63 != 0;
    let sign = |x: f64| if neg { -x } else { x };
    match fixup_special(
        n.is_nan(),
        d.is_nan(),
        n == 0.0,
        d == 0.0,
        n.is_infinite(),
        d.is_infinite(),
    ) {
        Some(0) => quiet64(n),
        Some(1) => quiet64(d),
        Some(2) => f64::from_bits(0xfff8_0000_0000_0000),
        Some(3) => sign(f64::INFINITY),
        Some(_) => sign(0.0),
        None if exp64(n) - exp64(d) < -1075 => sign(0.0),
        None if q.is_nan() => sign(f64::INFINITY),
        None => sign(q.abs()),
    }
}

/// `V_DIV_FIXUP_F16` for one lane on bit patterns.
pub fn div_fixup16(q: u16, d: u16, n: u16) -> u16 {
    let nan = |x: u16| x & 0x7fff > 0x7c00;
    let inf = |x: u16| x & 0x7fff == 0x7c00;
    let zero = |x: u16| x & 0x7fff == 0;
    let sign = (d ^ n) & 0x8000;
    match fixup_special(nan(n), nan(d), zero(n), zero(d), inf(n), inf(d)) {
        Some(0) => n | 0x0200,
        Some(1) => d | 0x0200,
        Some(2) => 0xfe00,
        Some(3) => sign | 0x7c00,
        Some(_) => sign,
        None if nan(q) => sign | 0x7c00,
        None => sign | (q & 0x7fff),
    }
}

pub fn v_div_fixup_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1, s2) = (f32_raw(c, op, 0), f32_raw(c, op, 1), f32_raw(c, op, 2));
    let out: [f32; 64] = std::array::from_fn(|l| div_fixup32(s0[l], s1[l], s2[l]));
    write_f32(c, op, &out);
    Ok(())
}

pub fn v_div_fixup_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1, s2) = (f64s(c, op, 0), f64s(c, op, 1), f64s(c, op, 2));
    let mut out: [f64; 64] = std::array::from_fn(|l| div_fixup64(s0[l], s1[l], s2[l]));
    out64(c, op, &mut out);
    Ok(())
}

fn fixup16_lanes(c: &Ctx, op: &Op) -> [u16; 64] {
    let (s0, s1, s2) = (f16s(c, op, 0), f16s(c, op, 1), f16s(c, op, 2));
    let plain = op.mods.omod == 0 && !op.mods.clamp;
    let keep = dp_denorm_out(c);
    std::array::from_fn(|l| {
        let q = div_fixup16(s0[l], s1[l], s2[l]);
        if plain {
            q
        } else {
            out16(
                op,
                f64::from(h2f(q, true)),
                0.0,
                crate::float::Rounding::NearestEven,
                keep,
            )
        }
    })
}

/// `v_div_fixup_f16`: result into the op_sel[3] half, the other kept.
pub fn v_div_fixup_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let out = fixup16_lanes(c, op);
    write_b16_keep(c, op, &out);
    Ok(())
}

/// `v_div_fixup_legacy_f16`: the other half zeroed unless op_sel[3].
pub fn v_div_fixup_legacy_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let out = fixup16_lanes(c, op);
    write_b16(c, op, &out);
    Ok(())
}

/// The first 1216 bits of the fraction 2/pi (0.b1200 b1199 ...), most
/// significant first (the last 15 bits are padding).
const TWO_OVER_PI: [u64; 19] = [
    0xa2f9836e4e441529,
    0xfc2757d1f534ddc0,
    0xdb6295993c439041,
    0xfe5163abdebbc561,
    0xb7246e3a424dd2e0,
    0x06492eea09d1921c,
    0xfe1deb1cb129a73e,
    0xe88235f52ebb4484,
    0xe99c7026b45f7e41,
    0x3991d639835339f4,
    0x9c845f8bbdf9283b,
    0x1ff897ffde05980f,
    0xef2f118b5a0a6d1f,
    0x6d367ecf27cb09b7,
    0x4f463f669e5fea2d,
    0x7527bac7ebe5f17b,
    0x3d0739f78a5292ea,
    0x6bfb5fb11f8d5d08,
    0x56033046fc7b0000,
];

/// 53 bits of 2/pi starting `shift` bits after the binary point.
fn two_over_pi_bits(shift: u32) -> u64 {
    let bit = |i: u32| -> u64 {
        // Bits past the table read as zero.
        TWO_OVER_PI
            .get((i / 64) as usize)
            .map_or(0, |w| w >> (63 - i % 64) & 1)
    };
    (0..53).fold(0u64, |acc, k| acc << 1 | bit(shift + k))
}

/// `v_trig_preop_f64`: a 53-bit segment of 2/pi (truncated), selected by
/// S1[4:0] and shifted by S0's exponent, for Payne-Hanek reduction.
pub fn v_trig_preop_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = f64s(c, op, 0);
    let s1 = b32(c, op, 1);
    let mut out: [f64; 64] = std::array::from_fn(|l| {
        let e = exp64(s0[l]);
        let mut shift = (s1[l] & 31) as i32 * 53;
        if e > 1077 {
            shift += e - 1077;
        }
        let seg = two_over_pi_bits(shift as u32) as f64;
        let mut scale = -53 - shift;
        if e >= 1968 {
            scale += 128;
        }
        scalbn(seg, scale)
    });
    out64(c, op, &mut out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::exec::testing::run;
    use rocjitsu_isa::Target;

    /// The f32 division sequence clang-22 emits for `a / b` (gfx942, IEEE
    /// denormals): the quotient is the correctly rounded a / b.
    const FDIV32: &str = "v_div_scale_f32 v12, s[0:1], v1, v1, v0\n\
        v_div_scale_f32 v13, vcc, v0, v1, v0\n\
        v_rcp_f32 v14, v12\n\
        v_fma_f32 v15, -v12, v14, 1.0\n\
        v_fmac_f32 v14, v15, v14\n\
        v_mul_f32 v15, v13, v14\n\
        v_fma_f32 v16, -v12, v15, v13\n\
        v_fmac_f32 v15, v16, v14\n\
        v_fma_f32 v12, -v12, v15, v13\n\
        v_div_fmas_f32 v12, v12, v14, v15\n\
        v_div_fixup_f32 v2, v12, v1, v0";

    /// The f64 sequence clang-22 emits for `a / b` (gfx942).
    const FDIV64: &str = "v_div_scale_f64 v[4:5], s[0:1], v[2:3], v[2:3], v[0:1]\n\
        v_rcp_f64 v[6:7], v[4:5]\n\
        v_div_scale_f64 v[8:9], vcc, v[0:1], v[2:3], v[0:1]\n\
        v_fma_f64 v[10:11], -v[4:5], v[6:7], 1.0\n\
        v_fmac_f64 v[6:7], v[6:7], v[10:11]\n\
        v_fma_f64 v[10:11], -v[4:5], v[6:7], 1.0\n\
        v_fmac_f64 v[6:7], v[6:7], v[10:11]\n\
        v_mul_f64 v[10:11], v[8:9], v[6:7]\n\
        v_fma_f64 v[4:5], -v[4:5], v[10:11], v[8:9]\n\
        v_div_fmas_f64 v[4:5], v[4:5], v[6:7], v[10:11]\n\
        v_div_fixup_f64 v[12:13], v[4:5], v[2:3], v[0:1]";

    fn cases32() -> Vec<(f32, f32)> {
        let mut v = vec![
            (1.0, 3.0),
            (2.0, 7.0),
            (-5.0, 0.1),
            (1.0, 0.0),
            (-1.0, 0.0),
            (0.0, 0.0),
            (f32::INFINITY, 2.0),
            (3.0, f32::INFINITY),
            (f32::INFINITY, f32::INFINITY),
            (f32::NAN, 1.0),
            (1.0, f32::NAN),
            (f32::MAX, 0.5),
            (f32::MAX, f32::MIN_POSITIVE),
            (f32::MIN_POSITIVE, 3.0),
            (1e-40, 3.0),
            (3.0, 1e-40),
            (1e-45, 1e30),
            (1e30, 1e-30),
            (1.0, f32::MAX),
            (7.0, 1e38),
            (1e-38, 1e38),
            (-0.0, 5.0),
            (6.0, -0.0),
            (1e20, 3e-21),
            (f32::MAX, f32::MAX),
            (1.2e-38, 0.99),
        ];
        let mut x = 0x2545_f491u32;
        while v.len() < 64 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let a = f32::from_bits(x & 0xbfff_ffff);
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let b = f32::from_bits(x & 0xbfff_ffff);
            v.push((a, b));
        }
        v
    }

    #[test]
    fn f32_division_sequence_is_correctly_rounded() {
        let cs = cases32();
        let r = run(Target::Gfx942, FDIV32, |w, _| {
            for (l, &(a, b)) in cs.iter().enumerate() {
                w.v[0][l] = a.to_bits();
                w.v[1][l] = b.to_bits();
            }
        })
        .unwrap();
        for (l, &(a, b)) in cs.iter().enumerate() {
            let want = a / b;
            let got = f32::from_bits(r.wave.v[2][l]);
            assert!(
                (got.is_nan() && want.is_nan()) || got.to_bits() == want.to_bits(),
                "{a:e} / {b:e} = {got:e}, want {want:e}"
            );
        }
    }

    #[test]
    fn f64_division_sequence_is_correctly_rounded() {
        let cs: Vec<(f64, f64)> = cases32()
            .into_iter()
            .enumerate()
            .map(|(i, (a, b))| {
                let k = 1.0 + i as f64 * 1e-9;
                (f64::from(a) * k, f64::from(b) / k)
            })
            .chain([
                (1e-310, 3.0),
                (3.0, 1e-310),
                (f64::MAX, 0.25),
                (1e300, 1e-300),
            ])
            .take(64)
            .collect();
        let r = run(Target::Gfx942, FDIV64, |w, _| {
            for (l, &(a, b)) in cs.iter().enumerate() {
                w.v[0][l] = a.to_bits() as u32;
                w.v[1][l] = (a.to_bits() >> 32) as u32;
                w.v[2][l] = b.to_bits() as u32;
                w.v[3][l] = (b.to_bits() >> 32) as u32;
            }
        })
        .unwrap();
        for (l, &(a, b)) in cs.iter().enumerate() {
            let want = a / b;
            let got = f64::from_bits(u64::from(r.wave.v[12][l]) | u64::from(r.wave.v[13][l]) << 32);
            assert!(
                (got.is_nan() && want.is_nan()) || got.to_bits() == want.to_bits(),
                "{a:e} / {b:e} = {got:e}, want {want:e}"
            );
        }
    }

    #[test]
    fn f16_division_via_f32_and_fixup() {
        use crate::float::{f16_to_f32, f32_to_f16};
        // clang's f16 division: cvt to f32, rcp, mul, cvt back, fixup.
        let rne = crate::float::Rounding::NearestEven;
        let r = run(
            Target::Gfx942,
            "v_cvt_f32_f16 v2, v0\nv_cvt_f32_f16 v3, v1\nv_rcp_f32 v3, v3\n\
             v_mul_f32 v2, v2, v3\nv_cvt_f16_f32 v2, v2\nv_div_fixup_f16 v4, v2, v1, v0",
            |w, _| {
                for l in 0..64 {
                    w.v[0][l] = u32::from(f32_to_f16(l as f32 - 20.0, rne));
                    w.v[1][l] = u32::from(f32_to_f16((l % 7) as f32 - 3.0, rne));
                    w.v[4][l] = 0x5555_0000;
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let (a, b) = (l as f32 - 20.0, (l % 7) as f32 - 3.0);
            let want = f32_to_f16(a / b, rne);
            let got = r.wave.v[4][l];
            assert_eq!(got >> 16, 0x5555, "high half kept");
            let g = got as u16;
            if want & 0x7fff > 0x7c00 {
                assert!(g & 0x7fff > 0x7c00, "{a}/{b}");
            } else {
                // One rounding of an f32 approximation: within one f16 ulp.
                let d = (f16_to_f32(g) - f16_to_f32(want)).abs();
                assert!(
                    d <= (a / b).abs() * 1e-3 || g == want,
                    "{a}/{b}: {g:x} vs {want:x}"
                );
            }
        }
    }

    #[test]
    fn trig_preop_segments() {
        let r = run(
            Target::Gfx942,
            "v_trig_preop_f64 v[2:3], v[0:1], 0\nv_trig_preop_f64 v[4:5], v[0:1], 1",
            |w, _| {
                w.v[0] = [0; 64];
                w.v[1] = [(1.0f64.to_bits() >> 32) as u32; 64];
            },
        )
        .unwrap();
        let seg0 = f64::from_bits(u64::from(r.wave.v[2][0]) | u64::from(r.wave.v[3][0]) << 32);
        let seg1 = f64::from_bits(u64::from(r.wave.v[4][0]) | u64::from(r.wave.v[5][0]) << 32);
        // 2/pi truncated to 53 bits and the next 53 bits (computed with
        // Machin's formula in exact integer arithmetic).
        assert_eq!(seg0 * 2f64.powi(53), 5734161139222658.0);
        assert_eq!(seg1 * 2f64.powi(106), 5814151408469972.0);
    }
}
