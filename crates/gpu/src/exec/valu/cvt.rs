//! Conversions between f16/bf16/f32/f64 and integers, normalized and
//! packed forms (ISA manual, "VOP1 / VOP3A instructions", `V_CVT_*`).
//!
//! Float-to-integer conversions truncate toward zero, saturate out-of-range
//! values and infinities, and turn NaN into 0 (`v_cvt_rpi_i32_f32` rounds
//! half up, `v_cvt_flr_i32_f32` rounds down). Integer-to-float and
//! narrowing float conversions round per MODE: f32 results by the f32
//! field, f16 results by the f64/f16 field (the manual's "DP rounding
//! mode" for `V_CVT_F16_F32`). The gfx950 `v_cvt_pk_f16_f32` and
//! `v_cvt_pk_bf16_f32` round to nearest even, `v_cvt_pkrtz_f16_f32` toward
//! zero; `v_cvt_pk_u8_f32` rounds to nearest even and saturates to
//! [0, 255].

use super::float::*;
use super::*;
use crate::exec::op::{Ctx, Fault, Op};
use crate::float::{BF16, Convert, F16 as H, Rounding};

/// The semantic function of a conversion base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_cvt_f32_i32" => v_cvt_f32_i32,
        "v_cvt_f32_u32" => v_cvt_f32_u32,
        "v_cvt_i32_f32" => v_cvt_i32_f32,
        "v_cvt_u32_f32" => v_cvt_u32_f32,
        "v_cvt_rpi_i32_f32" => v_cvt_rpi_i32_f32,
        "v_cvt_flr_i32_f32" => v_cvt_flr_i32_f32,
        "v_cvt_off_f32_i4" => v_cvt_off_f32_i4,
        "v_cvt_f16_f32" => v_cvt_f16_f32,
        "v_cvt_f32_f16" => v_cvt_f32_f16,
        "v_cvt_f32_f64" => v_cvt_f32_f64,
        "v_cvt_f64_f32" => v_cvt_f64_f32,
        "v_cvt_i32_f64" => v_cvt_i32_f64,
        "v_cvt_u32_f64" => v_cvt_u32_f64,
        "v_cvt_f64_i32" => v_cvt_f64_i32,
        "v_cvt_f64_u32" => v_cvt_f64_u32,
        "v_cvt_f32_ubyte0" => v_cvt_f32_ubyte::<0>,
        "v_cvt_f32_ubyte1" => v_cvt_f32_ubyte::<1>,
        "v_cvt_f32_ubyte2" => v_cvt_f32_ubyte::<2>,
        "v_cvt_f32_ubyte3" => v_cvt_f32_ubyte::<3>,
        "v_cvt_f16_u16" => v_cvt_f16_u16,
        "v_cvt_f16_i16" => v_cvt_f16_i16,
        "v_cvt_u16_f16" => v_cvt_u16_f16,
        "v_cvt_i16_f16" => v_cvt_i16_f16,
        "v_cvt_norm_i16_f16" => v_cvt_norm_i16_f16,
        "v_cvt_norm_u16_f16" => v_cvt_norm_u16_f16,
        "v_cvt_pknorm_i16_f32" => v_cvt_pknorm_i16_f32,
        "v_cvt_pknorm_u16_f32" => v_cvt_pknorm_u16_f32,
        "v_cvt_pknorm_i16_f16" => v_cvt_pknorm_i16_f16,
        "v_cvt_pknorm_u16_f16" => v_cvt_pknorm_u16_f16,
        "v_cvt_pkrtz_f16_f32" => v_cvt_pkrtz_f16_f32,
        "v_cvt_pk_u16_u32" => v_cvt_pk_u16_u32,
        "v_cvt_pk_i16_i32" => v_cvt_pk_i16_i32,
        "v_cvt_pk_u8_f32" => v_cvt_pk_u8_f32,
        "v_cvt_pkaccum_u8_f32" => v_cvt_pkaccum_u8_f32,
        "v_cvt_f32_bf16" => v_cvt_f32_bf16,
        "v_cvt_pk_f16_f32" => v_cvt_pk_f16_f32,
        "v_cvt_pk_bf16_f32" => v_cvt_pk_bf16_f32,
        "v_cvt_sr_f16_f32" => v_cvt_sr_f16_f32,
        "v_cvt_sr_bf16_f32" => v_cvt_sr_bf16_f32,
        _ => return None,
    })
}

/// Runs an f32 -> 32-bit integer conversion.
#[inline(always)]
fn f32_to_b32(c: &mut Ctx, op: &Op, f: impl Fn(f32) -> u32) -> Result<(), Fault> {
    let s0 = f32s(c, op, 0);
    let out: Lanes = std::array::from_fn(|l| f(s0[l]));
    write_b32(c, op, &out);
    Ok(())
}

/// Runs a 32-bit integer -> f32 conversion (exact in f64, then rounded
/// per MODE).
#[inline(always)]
fn b32_to_f32(c: &mut Ctx, op: &Op, f: impl Fn(u32) -> f64) -> Result<(), Fault> {
    let s0 = b32(c, op, 0);
    let r = round32(c);
    let out: [f32; 64] = std::array::from_fn(|l| to_f32(f(s0[l]), 0.0, r));
    write_f32(c, op, &out);
    Ok(())
}

pub fn v_cvt_f32_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    b32_to_f32(c, op, |x| f64::from(x as i32))
}

pub fn v_cvt_f32_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    b32_to_f32(c, op, f64::from)
}

pub fn v_cvt_i32_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_to_b32(c, op, |x| x as i32 as u32)
}

pub fn v_cvt_u32_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_to_b32(c, op, |x| x as u32)
}

/// `v_cvt_rpi_i32_f32`: floor(x + 0.5) (the add rounded in f32, as the
/// manual's pseudocode).
pub fn v_cvt_rpi_i32_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_to_b32(c, op, |x| (x + 0.5).floor() as i32 as u32)
}

pub fn v_cvt_flr_i32_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f32_to_b32(c, op, |x| x.floor() as i32 as u32)
}

/// `v_cvt_off_f32_i4`: the signed 4-bit S0[3:0] divided by 16.
pub fn v_cvt_off_f32_i4(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = b32(c, op, 0);
    let out: [f32; 64] = std::array::from_fn(|l| {
        let n = ((s0[l] << 28) as i32) >> 28;
        n as f32 / 16.0
    });
    write_f32(c, op, &out);
    Ok(())
}

/// `v_cvt_f16_f32`: rounded per MODE's f64/f16 field; omod/clamp and
/// denormal flushing per MODE.
pub fn v_cvt_f16_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = f32s(c, op, 0);
    let (r, keep) = (round64(c), dp_denorm_out(c));
    let out: [u16; 64] = std::array::from_fn(|l| out16(op, f64::from(s0[l]), 0.0, r, keep));
    write_b16(c, op, &out);
    Ok(())
}

pub fn v_cvt_f32_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = h32(c, op, 0);
    write_f32(c, op, &s0);
    Ok(())
}

pub fn v_cvt_f32_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = d64(c, op, 0);
    let r = round32(c);
    let out: [f32; 64] = std::array::from_fn(|l| to_f32(s0[l], 0.0, r));
    write_f32(c, op, &out);
    Ok(())
}

pub fn v_cvt_f64_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = f32s(c, op, 0);
    let mut out: [f64; 64] = std::array::from_fn(|l| f64::from(s0[l]));
    out64(c, op, &mut out);
    Ok(())
}

pub fn v_cvt_i32_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = d64(c, op, 0);
    let out: Lanes = std::array::from_fn(|l| s0[l] as i32 as u32);
    write_b32(c, op, &out);
    Ok(())
}

pub fn v_cvt_u32_f64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = d64(c, op, 0);
    let out: Lanes = std::array::from_fn(|l| s0[l] as u32);
    write_b32(c, op, &out);
    Ok(())
}

pub fn v_cvt_f64_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = b32(c, op, 0);
    let mut out: [f64; 64] = std::array::from_fn(|l| f64::from(s0[l] as i32));
    out64(c, op, &mut out);
    Ok(())
}

pub fn v_cvt_f64_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = b32(c, op, 0);
    let mut out: [f64; 64] = std::array::from_fn(|l| f64::from(s0[l]));
    out64(c, op, &mut out);
    Ok(())
}

/// `v_cvt_f32_ubyteN`: byte N of S0 (after any SDWA select) as f32.
pub fn v_cvt_f32_ubyte<const N: u32>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = b32(c, op, 0);
    let out: [f32; 64] = std::array::from_fn(|l| (s0[l] >> (8 * N) & 0xff) as f32);
    write_f32(c, op, &out);
    Ok(())
}

/// Runs a 16-bit integer -> f16 conversion.
#[inline(always)]
fn b16_to_f16(c: &mut Ctx, op: &Op, f: impl Fn(u16) -> f64) -> Result<(), Fault> {
    let s0 = b16(c, op, 0);
    let (r, keep) = (round64(c), dp_denorm_out(c));
    let out: [u16; 64] = std::array::from_fn(|l| out16(op, f(s0[l]), 0.0, r, keep));
    write_b16(c, op, &out);
    Ok(())
}

pub fn v_cvt_f16_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    b16_to_f16(c, op, f64::from)
}

pub fn v_cvt_f16_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    b16_to_f16(c, op, |x| f64::from(x as i16))
}

/// Runs an f16 -> 16-bit conversion.
#[inline(always)]
fn f16_to_b16(c: &mut Ctx, op: &Op, f: impl Fn(f32) -> u16) -> Result<(), Fault> {
    let s0 = h32(c, op, 0);
    let out: [u16; 64] = std::array::from_fn(|l| f(s0[l]));
    write_b16(c, op, &out);
    Ok(())
}

pub fn v_cvt_u16_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16_to_b16(c, op, |x| x as u16)
}

pub fn v_cvt_i16_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16_to_b16(c, op, |x| x as i16 as u16)
}

/// Signed normalized: clamp to [-1, 1], scale by 32767, round to nearest
/// even; NaN gives 0.
#[inline(always)]
fn snorm(x: f32) -> u16 {
    if x.is_nan() {
        return 0;
    }
    (f64::from(x.clamp(-1.0, 1.0)) * 32767.0).round_ties_even() as i16 as u16
}

/// Unsigned normalized: clamp to [0, 1], scale by 65535, round to nearest
/// even; NaN gives 0.
#[inline(always)]
fn unorm(x: f32) -> u16 {
    if x.is_nan() {
        return 0;
    }
    (f64::from(x.clamp(0.0, 1.0)) * 65535.0).round_ties_even() as u16
}

pub fn v_cvt_norm_i16_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16_to_b16(c, op, snorm)
}

pub fn v_cvt_norm_u16_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    f16_to_b16(c, op, unorm)
}

/// Packs two f32 sources converted by `f` as { f(S1), f(S0) }.
#[inline(always)]
fn pack_f32(c: &mut Ctx, op: &Op, f: impl Fn(f32) -> u16) -> Result<(), Fault> {
    let (s0, s1) = (f32s(c, op, 0), f32s(c, op, 1));
    let out: Lanes = std::array::from_fn(|l| u32::from(f(s0[l])) | u32::from(f(s1[l])) << 16);
    write_b32(c, op, &out);
    Ok(())
}

/// Packs two f16 sources converted by `f`.
#[inline(always)]
fn pack_f16(c: &mut Ctx, op: &Op, f: impl Fn(f32) -> u16) -> Result<(), Fault> {
    let (s0, s1) = (h32(c, op, 0), h32(c, op, 1));
    let out: Lanes = std::array::from_fn(|l| u32::from(f(s0[l])) | u32::from(f(s1[l])) << 16);
    write_b32(c, op, &out);
    Ok(())
}

pub fn v_cvt_pknorm_i16_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    pack_f32(c, op, snorm)
}

pub fn v_cvt_pknorm_u16_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    pack_f32(c, op, unorm)
}

pub fn v_cvt_pknorm_i16_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    pack_f16(c, op, snorm)
}

pub fn v_cvt_pknorm_u16_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    pack_f16(c, op, unorm)
}

pub fn v_cvt_pkrtz_f16_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let keep = dp_denorm_out(c);
    let cv = Convert {
        rounding: Rounding::TowardZero,
        saturate: false,
        flush_denormals: !keep,
    };
    pack_f32(c, op, |x| H.encode(x, cv) as u16)
}

/// gfx950 `v_cvt_pk_f16_f32`: round to nearest even regardless of MODE.
pub fn v_cvt_pk_f16_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let keep = dp_denorm_out(c);
    let cv = Convert {
        flush_denormals: !keep,
        ..Convert::RNE
    };
    pack_f32(c, op, |x| H.encode(x, cv) as u16)
}

/// gfx950 `v_cvt_pk_bf16_f32`: round to nearest even.
pub fn v_cvt_pk_bf16_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    pack_f32(c, op, |x| BF16.encode(x, Convert::RNE) as u16)
}

pub fn v_cvt_pk_u16_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1) = (b32(c, op, 0), b32(c, op, 1));
    let out: Lanes = std::array::from_fn(|l| s0[l].min(0xffff) | s1[l].min(0xffff) << 16);
    write_b32(c, op, &out);
    Ok(())
}

pub fn v_cvt_pk_i16_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1) = (b32(c, op, 0), b32(c, op, 1));
    let sat = |x: u32| u32::from((x as i32).clamp(-32768, 32767) as i16 as u16);
    let out: Lanes = std::array::from_fn(|l| sat(s0[l]) | sat(s1[l]) << 16);
    write_b32(c, op, &out);
    Ok(())
}

/// f32 to an unsigned byte: round to nearest even, saturate, NaN to 0.
#[inline(always)]
fn to_u8(x: f32) -> u32 {
    if x.is_nan() {
        0
    } else {
        x.round_ties_even().clamp(0.0, 255.0) as u32
    }
}

/// `v_cvt_pk_u8_f32`: byte S1[1:0] of S2 replaced by u8(S0).
pub fn v_cvt_pk_u8_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = f32s(c, op, 0);
    let (s1, s2) = (b32(c, op, 1), b32(c, op, 2));
    let out: Lanes = std::array::from_fn(|l| {
        let sh = (s1[l] & 3) * 8;
        (s2[l] & !(0xff << sh)) | to_u8(s0[l]) << sh
    });
    write_b32(c, op, &out);
    Ok(())
}

/// `v_cvt_pkaccum_u8_f32`: byte S1[1:0] of the destination replaced by
/// u8(S0).
pub fn v_cvt_pkaccum_u8_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = f32s(c, op, 0);
    let s1 = b32(c, op, 1);
    let d = *c.wave.vreg(op.vdst);
    let out: Lanes = std::array::from_fn(|l| {
        let sh = (s1[l] & 3) * 8;
        (d[l] & !(0xff << sh)) | to_u8(s0[l]) << sh
    });
    write_b32(c, op, &out);
    Ok(())
}

/// gfx950 `v_cvt_f32_bf16`: the 16 bits (SDWA word select or op_sel) as
/// the high half of an f32.
pub fn v_cvt_f32_bf16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s0 = b16(c, op, 0);
    let (abs, neg) = (op.mods.abs & 1 != 0, op.mods.neg & 1 != 0);
    let out: [f32; 64] = std::array::from_fn(|l| {
        let mut x = u32::from(s0[l]) << 16;
        if abs {
            x &= 0x7fff_ffff;
        }
        if neg {
            x ^= 0x8000_0000;
        }
        f32::from_bits(x)
    });
    write_f32(c, op, &out);
    Ok(())
}

/// Stochastic rounding to a 16-bit format into the op_sel[3] half of the
/// destination, the other half kept.
#[inline(always)]
fn sr16(c: &mut Ctx, op: &Op, fmt: crate::float::Format) -> Result<(), Fault> {
    let s0 = f32s(c, op, 0);
    let s1 = b32(c, op, 1);
    let out: [u16; 64] = std::array::from_fn(|l| fmt.encode_sr(s0[l], s1[l], Convert::RNE) as u16);
    write_b16_keep(c, op, &out);
    Ok(())
}

pub fn v_cvt_sr_f16_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    sr16(c, op, H)
}

pub fn v_cvt_sr_bf16_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    sr16(c, op, BF16)
}

#[cfg(test)]
mod tests {
    use crate::exec::testing::run;
    use crate::float::{Rounding, f16_to_f32, f32_to_bf16, f32_to_f16};
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
            -1.7,
            1e-40,
            65504.0,
            65520.0,
            1e10,
            -1e10,
            3e9,
            2147483647.0,
            -2147483648.0,
            4294967296.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1.0 / 3.0,
            0.000061035156,
            5.9604645e-8,
            2.9802322e-8,
            -300.75,
        ];
        let mut x = 0x1357_9bdfu32;
        while v.len() < 64 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            v.push(f32::from_bits(x & 0xcfff_ffff));
        }
        v
    }

    #[test]
    fn float_to_int_saturates_and_nan_is_zero() {
        let v = vals();
        let r = run(
            Target::Gfx942,
            "v_cvt_i32_f32 v1, v0\nv_cvt_u32_f32 v2, v0\nv_cvt_flr_i32_f32 v3, v0\n\
             v_cvt_rpi_i32_f32 v4, v0\nv_cvt_f64_f32 v[6:7], v0\nv_cvt_i32_f64 v5, v[6:7]\n\
             v_cvt_u32_f64 v8, v[6:7]",
            |w, _| w.v[0] = std::array::from_fn(|l| v[l].to_bits()),
        )
        .unwrap();
        for (l, &x) in v.iter().enumerate() {
            let w = &r.wave.v;
            // Reference: saturating conversions written out explicitly.
            let sat_i = |y: f64| -> i32 {
                if y.is_nan() {
                    0
                } else if y >= 2147483647.0 {
                    i32::MAX
                } else if y <= -2147483648.0 {
                    i32::MIN
                } else {
                    y as i64 as i32
                }
            };
            let sat_u = |y: f64| -> u32 {
                if y.is_nan() || y <= 0.0 {
                    0
                } else if y >= 4294967295.0 {
                    u32::MAX
                } else {
                    y as i64 as u32
                }
            };
            let d = f64::from(x);
            assert_eq!(w[1][l] as i32, sat_i(d.trunc()), "i32 {x}");
            assert_eq!(w[2][l], sat_u(d.trunc()), "u32 {x}");
            assert_eq!(w[3][l] as i32, sat_i(d.floor()), "flr {x}");
            assert_eq!(w[4][l] as i32, sat_i(f64::from(x + 0.5).floor()), "rpi {x}");
            assert_eq!(w[5][l] as i32, sat_i(d.trunc()), "i32_f64 {x}");
            assert_eq!(w[8][l], sat_u(d.trunc()), "u32_f64 {x}");
            let back = f64::from_bits(u64::from(w[6][l]) | u64::from(w[7][l]) << 32);
            assert!(back.to_bits() == d.to_bits() || (back.is_nan() && d.is_nan()));
        }
    }

    #[test]
    fn int_to_float_and_f16_conversions() {
        let v = vals();
        let ints: Vec<u32> = (0..64u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9) ^ (i << 3))
            .collect();
        let r = run(
            Target::Gfx942,
            "v_cvt_f32_i32 v2, v1\nv_cvt_f32_u32 v3, v1\nv_cvt_f16_f32 v4, v0\n\
             v_cvt_f32_f16 v5, v4\nv_cvt_pkrtz_f16_f32 v6, v0, v0\n\
             v_cvt_f32_ubyte2 v7, v1\nv_cvt_f32_f64 v8, v[10:11]",
            |w, _| {
                for l in 0..64 {
                    w.v[0][l] = v[l].to_bits();
                    w.v[1][l] = ints[l];
                    let d = f64::from(ints[l]) / 7.0;
                    w.v[10][l] = d.to_bits() as u32;
                    w.v[11][l] = (d.to_bits() >> 32) as u32;
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let w = &r.wave.v;
            assert_eq!(f32::from_bits(w[2][l]), ints[l] as i32 as f32);
            assert_eq!(f32::from_bits(w[3][l]), ints[l] as f32);
            let h = f32_to_f16(v[l], Rounding::NearestEven);
            let g = w[4][l] as u16;
            assert!(
                g == h || (g & 0x7fff > 0x7c00 && h & 0x7fff > 0x7c00),
                "f16 {}",
                v[l]
            );
            let back = f32::from_bits(w[5][l]);
            assert!(back.to_bits() == f16_to_f32(g).to_bits() || back.is_nan());
            let z = u32::from(f32_to_f16(v[l], Rounding::TowardZero));
            if v[l].is_nan() {
                assert!(w[6][l] as u16 & 0x7fff > 0x7c00);
            } else {
                assert_eq!(w[6][l], z | z << 16, "rtz {}", v[l]);
            }
            assert_eq!(f32::from_bits(w[7][l]), (ints[l] >> 16 & 0xff) as f32);
            assert_eq!(f32::from_bits(w[8][l]), (f64::from(ints[l]) / 7.0) as f32);
        }
    }

    #[test]
    fn f16_rounding_follows_mode() {
        // MODE.FP_ROUND[3:2] = 3: toward zero for f16 results.
        let r = run(Target::Gfx942, "v_cvt_f16_f32 v1, v0", |w, _| {
            w.mode |= 3 << 2;
            for l in 0..64 {
                w.v[0][l] = (1.0f32 + l as f32 * 0.000_37).to_bits();
            }
        })
        .unwrap();
        for l in 0..64 {
            let x = 1.0f32 + l as f32 * 0.000_37;
            assert_eq!(r.wave.v[1][l] as u16, f32_to_f16(x, Rounding::TowardZero));
        }
    }

    #[test]
    fn packed_and_normalized() {
        let r = run(
            Target::Gfx950,
            "v_cvt_pknorm_i16_f32 v2, v0, v1\nv_cvt_pknorm_u16_f32 v3, v0, v1\n\
             v_cvt_pk_i16_i32 v4, v5, v6\nv_cvt_pk_u16_u32 v7, v5, v6\n\
             v_cvt_pk_bf16_f32 v8, v0, v1\nv_cvt_pk_u8_f32 v9, v0, 2, v10\n\
             v_cvt_f32_bf16 v11, v8",
            |w, _| {
                for l in 0..64 {
                    w.v[0][l] = (l as f32 / 20.0 - 1.5).to_bits();
                    w.v[1][l] = (l as f32 * 7.3).to_bits();
                    w.v[5][l] = (l as i32 * 1500 - 40000) as u32;
                    w.v[6][l] = (l as u32) * 5000;
                    w.v[10][l] = 0x1122_3344;
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let (a, b) = (l as f32 / 20.0 - 1.5, l as f32 * 7.3);
            let sn =
                |x: f32| ((x.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16 as u16) as u32;
            let un = |x: f32| (x.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u32;
            let w = &r.wave.v;
            assert_eq!(w[2][l], sn(a) | sn(b) << 16);
            assert_eq!(w[3][l], un(a) | un(b) << 16);
            let (i, u) = (l as i32 * 1500 - 40000, l as u32 * 5000);
            let si = |x: i32| x.clamp(-32768, 32767) as i16 as u16 as u32;
            assert_eq!(w[4][l], si(i) | si(u as i32) << 16);
            assert_eq!(w[7][l], (i as u32).min(0xffff) | u.min(0xffff) << 16);
            let bf = |x: f32| u32::from(f32_to_bf16(x, Rounding::NearestEven));
            assert_eq!(w[8][l], bf(a) | bf(b) << 16);
            let byte = if a.is_sign_negative() {
                0
            } else {
                a.round_ties_even() as u32
            };
            assert_eq!(w[9][l], 0x1100_3344 | byte << 16);
            assert_eq!(w[11][l], bf(a) << 16);
        }
    }
}
