//! Integer vector ALU arithmetic: add/sub with carries and saturation
//! (VOP3 `clamp` on an integer operation saturates), multiplies,
//! multiply-adds, 16-bit arithmetic, integer dot products and sums of
//! absolute differences. The other integer families live in
//! [`super::int_bits`] (bitwise, shifts, min/max), [`super::int_lane`]
//! (moves, selects, cross-lane) and [`super::cmp_int`] (compares); this
//! module's [`lookup`] covers them all.

use super::*;
use crate::exec::op::{Ctx, Fault, Op};

/// The semantic function of an integer, bitwise, move or lane vector ALU
/// base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    arith(name)
        .or_else(|| super::int_bits::lookup(name))
        .or_else(|| super::int_lane::lookup(name))
        .or_else(|| super::cmp_int::lookup(name))
}

fn arith(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_add_u32" => v_add_u32,
        "v_sub_u32" => v_sub_u32,
        "v_subrev_u32" => v_subrev_u32,
        "v_add_i32" => v_add_i32,
        "v_sub_i32" => v_sub_i32,
        "v_add_co_u32" => v_add_co_u32,
        "v_sub_co_u32" => v_sub_co_u32,
        "v_subrev_co_u32" => v_subrev_co_u32,
        "v_addc_co_u32" => v_addc_co_u32,
        "v_subb_co_u32" => v_subb_co_u32,
        "v_subbrev_co_u32" => v_subbrev_co_u32,
        "v_add3_u32" => v_add3_u32,
        "v_xad_u32" => v_xad_u32,
        "v_lshl_add_u32" => v_lshl_add_u32,
        "v_add_lshl_u32" => v_add_lshl_u32,
        "v_lshl_add_u64" => v_lshl_add_u64,
        "v_add_u16" => v_add_u16,
        "v_sub_u16" => v_sub_u16,
        "v_subrev_u16" => v_subrev_u16,
        "v_add_i16" => v_add_i16,
        "v_sub_i16" => v_sub_i16,
        "v_mul_lo_u16" => v_mul_lo_u16,
        "v_mul_lo_u32" => v_mul_lo_u32,
        "v_mul_hi_u32" => v_mul_hi_u32,
        "v_mul_hi_i32" => v_mul_hi_i32,
        "v_mul_u32_u24" => v_mul_u32_u24,
        "v_mul_hi_u32_u24" => v_mul_hi_u32_u24,
        "v_mul_i32_i24" => v_mul_i32_i24,
        "v_mul_hi_i32_i24" => v_mul_hi_i32_i24,
        "v_mad_u32_u24" => v_mad_u32_u24,
        "v_mad_i32_i24" => v_mad_i32_i24,
        "v_mad_u64_u32" => v_mad_u64_u32,
        "v_mad_i64_i32" => v_mad_i64_i32,
        "v_mad_u32_u16" => v_mad_u32_u16,
        "v_mad_i32_i16" => v_mad_i32_i16,
        "v_mad_u16" | "v_mad_legacy_u16" => v_mad_u16,
        "v_mad_i16" | "v_mad_legacy_i16" => v_mad_i16,
        "v_dot2c_i32_i16" => v_dot2c_i32_i16,
        "v_dot4c_i32_i8" => v_dot4c_i32_i8,
        "v_dot8c_i32_i4" => v_dot8c_i32_i4,
        "v_sad_u8" => v_sad_u8,
        "v_sad_hi_u8" => v_sad_hi_u8,
        "v_sad_u16" => v_sad_u16,
        "v_sad_u32" => v_sad_u32,
        "v_msad_u8" => v_msad_u8,
        "v_lerp_u8" => v_lerp_u8,
        "v_qsad_pk_u16_u8" => v_qsad_pk_u16_u8,
        "v_mqsad_pk_u16_u8" => v_mqsad_pk_u16_u8,
        "v_mqsad_u32_u8" => v_mqsad_u32_u8,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// Lane-wise helpers shared by the integer modules.

/// Writes `f(s0, s1)` per lane (32-bit sources and result).
#[inline(always)]
pub(super) fn map2(c: &mut Ctx, op: &Op, f: impl Fn(u32, u32) -> u32) -> Result<(), Fault> {
    let (a, b) = (b32(c, op, 0), b32(c, op, 1));
    let r: Lanes = std::array::from_fn(|l| f(a[l], b[l]));
    write_b32(c, op, &r);
    Ok(())
}

/// Writes `f(s0, s1, s2)` per lane (32-bit sources and result).
#[inline(always)]
pub(super) fn map3(c: &mut Ctx, op: &Op, f: impl Fn(u32, u32, u32) -> u32) -> Result<(), Fault> {
    let (a, b, d) = (b32(c, op, 0), b32(c, op, 1), b32(c, op, 2));
    let r: Lanes = std::array::from_fn(|l| f(a[l], b[l], d[l]));
    write_b32(c, op, &r);
    Ok(())
}

/// Writes the 16-bit `f(s0, s1)` per lane.
#[inline(always)]
pub(super) fn map2_16(c: &mut Ctx, op: &Op, f: impl Fn(u16, u16) -> u16) -> Result<(), Fault> {
    let (a, b) = (b16(c, op, 0), b16(c, op, 1));
    let r: [u16; 64] = std::array::from_fn(|l| f(a[l], b[l]));
    write_b16(c, op, &r);
    Ok(())
}

/// Writes the 16-bit `f(s0, s1, s2)` per lane.
#[inline(always)]
pub(super) fn map3_16(c: &mut Ctx, op: &Op, f: impl Fn(u16, u16, u16) -> u16) -> Result<(), Fault> {
    let (a, b, d) = (b16(c, op, 0), b16(c, op, 1), b16(c, op, 2));
    let r: [u16; 64] = std::array::from_fn(|l| f(a[l], b[l], d[l]));
    write_b16(c, op, &r);
    Ok(())
}

/// Writes `f(s0, s1)` to VDST and its carry bit to SDST per lane.
#[inline(always)]
fn carry2(c: &mut Ctx, op: &Op, f: impl Fn(u32, u32) -> (u32, bool)) -> Result<(), Fault> {
    let (a, b) = (b32(c, op, 0), b32(c, op, 1));
    let mut carry = 0u64;
    let r: Lanes = std::array::from_fn(|l| {
        let (x, o) = f(a[l], b[l]);
        carry |= u64::from(o) << l;
        x
    });
    write_b32(c, op, &r);
    write_mask(c, op, carry);
    Ok(())
}

/// Writes `f(s0, s1, carry_in)` to VDST and its carry bit to SDST, the
/// carry-in being `src[2]`'s lane bit.
#[inline(always)]
fn carry3(c: &mut Ctx, op: &Op, f: impl Fn(u32, u32, u32) -> (u32, bool)) -> Result<(), Fault> {
    let (a, b) = (b32(c, op, 0), b32(c, op, 1));
    let cin = mask_src(c, op, 2);
    let mut carry = 0u64;
    let r: Lanes = std::array::from_fn(|l| {
        let (x, o) = f(a[l], b[l], (cin >> l & 1) as u32);
        carry |= u64::from(o) << l;
        x
    });
    write_b32(c, op, &r);
    write_mask(c, op, carry);
    Ok(())
}

// ---------------------------------------------------------------------------
// 32-bit add and subtract.

/// `v_add_u32`: wrapping add; with clamp, unsigned saturation.
pub fn v_add_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2(c, op, u32::saturating_add)
    } else {
        map2(c, op, u32::wrapping_add)
    }
}

/// `v_sub_u32`: S0 - S1; with clamp, saturates at 0.
pub fn v_sub_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2(c, op, u32::saturating_sub)
    } else {
        map2(c, op, u32::wrapping_sub)
    }
}

/// `v_subrev_u32`: S1 - S0.
pub fn v_subrev_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2(c, op, |a, b| b.saturating_sub(a))
    } else {
        map2(c, op, |a, b| b.wrapping_sub(a))
    }
}

/// `v_add_i32` (VOP3): signed add; with clamp, signed saturation.
pub fn v_add_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2(c, op, |a, b| (a as i32).saturating_add(b as i32) as u32)
    } else {
        map2(c, op, u32::wrapping_add)
    }
}

/// `v_sub_i32` (VOP3): signed S0 - S1; with clamp, signed saturation.
pub fn v_sub_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2(c, op, |a, b| (a as i32).saturating_sub(b as i32) as u32)
    } else {
        map2(c, op, u32::wrapping_sub)
    }
}

/// `v_add_co_u32`: add, carry-out to SDST (VCC in e32); clamp saturates the
/// sum.
pub fn v_add_co_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    carry2(c, op, |a, b| {
        let (x, o) = a.overflowing_add(b);
        (if clamp && o { u32::MAX } else { x }, o)
    })
}

/// `v_sub_co_u32`: S0 - S1, borrow-out to SDST; clamp saturates at 0.
pub fn v_sub_co_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    carry2(c, op, |a, b| {
        let (x, o) = a.overflowing_sub(b);
        (if clamp && o { 0 } else { x }, o)
    })
}

/// `v_subrev_co_u32`: S1 - S0, borrow-out to SDST.
pub fn v_subrev_co_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    carry2(c, op, |a, b| {
        let (x, o) = b.overflowing_sub(a);
        (if clamp && o { 0 } else { x }, o)
    })
}

/// `v_addc_co_u32`: S0 + S1 + carry-in, carry-out to SDST.
pub fn v_addc_co_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    carry3(c, op, |a, b, ci| {
        let x = u64::from(a) + u64::from(b) + u64::from(ci);
        let o = x >> 32 != 0;
        (if clamp && o { u32::MAX } else { x as u32 }, o)
    })
}

/// `v_subb_co_u32`: S0 - S1 - borrow-in, borrow-out to SDST.
pub fn v_subb_co_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    carry3(c, op, |a, b, bi| sub_borrow(a, b, bi, clamp))
}

/// `v_subbrev_co_u32`: S1 - S0 - borrow-in, borrow-out to SDST.
pub fn v_subbrev_co_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    carry3(c, op, |a, b, bi| sub_borrow(b, a, bi, clamp))
}

#[inline(always)]
fn sub_borrow(a: u32, b: u32, bi: u32, clamp: bool) -> (u32, bool) {
    let o = u64::from(b) + u64::from(bi) > u64::from(a);
    let x = a.wrapping_sub(b).wrapping_sub(bi);
    (if clamp && o { 0 } else { x }, o)
}

/// `v_add3_u32`: S0 + S1 + S2.
pub fn v_add3_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map3(c, op, |a, b, d| {
            let s = u64::from(a) + u64::from(b) + u64::from(d);
            s.min(u64::from(u32::MAX)) as u32
        })
    } else {
        map3(c, op, |a, b, d| a.wrapping_add(b).wrapping_add(d))
    }
}

/// `v_xad_u32`: (S0 ^ S1) + S2.
pub fn v_xad_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map3(c, op, |a, b, d| (a ^ b).wrapping_add(d))
}

/// `v_lshl_add_u32`: (S0 << S1[4:0]) + S2.
pub fn v_lshl_add_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map3(c, op, |a, b, d| (a << (b & 31)).wrapping_add(d))
}

/// `v_add_lshl_u32`: (S0 + S1) << S2[4:0].
pub fn v_add_lshl_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map3(c, op, |a, b, d| a.wrapping_add(b) << (d & 31))
}

/// `v_lshl_add_u64` (gfx940+): (S0.u64 << S1[2:0]) + S2.u64.
pub fn v_lshl_add_u64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, s, d) = (b64(c, op, 0), b32(c, op, 1), b64(c, op, 2));
    let r: [u64; 64] = std::array::from_fn(|l| (a[l] << (s[l] & 7)).wrapping_add(d[l]));
    write_b64(c, op, &r);
    Ok(())
}

// ---------------------------------------------------------------------------
// 16-bit add, subtract, multiply.

/// `v_add_u16`: wrapping; clamp saturates unsigned.
pub fn v_add_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2_16(c, op, u16::saturating_add)
    } else {
        map2_16(c, op, u16::wrapping_add)
    }
}

/// `v_sub_u16`: S0 - S1; clamp saturates at 0.
pub fn v_sub_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2_16(c, op, u16::saturating_sub)
    } else {
        map2_16(c, op, u16::wrapping_sub)
    }
}

/// `v_subrev_u16`: S1 - S0.
pub fn v_subrev_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2_16(c, op, |a, b| b.saturating_sub(a))
    } else {
        map2_16(c, op, |a, b| b.wrapping_sub(a))
    }
}

/// `v_add_i16` (VOP3): signed; clamp saturates signed.
pub fn v_add_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2_16(c, op, |a, b| (a as i16).saturating_add(b as i16) as u16)
    } else {
        map2_16(c, op, u16::wrapping_add)
    }
}

/// `v_sub_i16` (VOP3): signed S0 - S1; clamp saturates signed.
pub fn v_sub_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2_16(c, op, |a, b| (a as i16).saturating_sub(b as i16) as u16)
    } else {
        map2_16(c, op, u16::wrapping_sub)
    }
}

/// `v_mul_lo_u16`: low 16 bits of the product; clamp saturates unsigned.
pub fn v_mul_lo_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2_16(c, op, u16::saturating_mul)
    } else {
        map2_16(c, op, u16::wrapping_mul)
    }
}

/// `v_mad_u16`: S0 * S1 + S2 (16-bit); clamp saturates unsigned.
pub fn v_mad_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    map3_16(c, op, |a, b, d| {
        let x = u32::from(a) * u32::from(b) + u32::from(d);
        if clamp {
            x.min(0xffff) as u16
        } else {
            x as u16
        }
    })
}

/// `v_mad_i16`: signed S0 * S1 + S2 (16-bit); clamp saturates signed.
pub fn v_mad_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    map3_16(c, op, |a, b, d| {
        let x = i32::from(a as i16) * i32::from(b as i16) + i32::from(d as i16);
        if clamp {
            x.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as u16
        } else {
            x as u16
        }
    })
}

/// `v_mad_u32_u16`: S0.u16 * S1.u16 + S2.u32; clamp saturates.
pub fn v_mad_u32_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b, d) = (b16(c, op, 0), b16(c, op, 1), b32(c, op, 2));
    let clamp = op.mods.clamp;
    let r: Lanes = std::array::from_fn(|l| {
        let x = u64::from(u32::from(a[l]) * u32::from(b[l])) + u64::from(d[l]);
        if clamp {
            x.min(u64::from(u32::MAX)) as u32
        } else {
            x as u32
        }
    });
    write_b32(c, op, &r);
    Ok(())
}

/// `v_mad_i32_i16`: S0.i16 * S1.i16 + S2.i32; clamp saturates signed.
pub fn v_mad_i32_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b, d) = (b16(c, op, 0), b16(c, op, 1), b32(c, op, 2));
    let clamp = op.mods.clamp;
    let r: Lanes = std::array::from_fn(|l| {
        let x = i64::from(i32::from(a[l] as i16) * i32::from(b[l] as i16)) + i64::from(d[l] as i32);
        if clamp {
            x.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
        } else {
            x as u32
        }
    });
    write_b32(c, op, &r);
    Ok(())
}

// ---------------------------------------------------------------------------
// 32-bit and 24-bit multiplies.

/// `v_mul_lo_u32`: low 32 bits of S0 * S1.
pub fn v_mul_lo_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2(c, op, u32::wrapping_mul)
}

/// `v_mul_hi_u32`: high 32 bits of the unsigned 64-bit product.
pub fn v_mul_hi_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2(c, op, |a, b| ((u64::from(a) * u64::from(b)) >> 32) as u32)
}

/// `v_mul_hi_i32`: high 32 bits of the signed 64-bit product.
pub fn v_mul_hi_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2(c, op, |a, b| {
        ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32
    })
}

/// The low 24 bits, zero-extended.
#[inline(always)]
fn u24(x: u32) -> u64 {
    u64::from(x & 0xff_ffff)
}

/// The low 24 bits, sign-extended.
#[inline(always)]
fn i24(x: u32) -> i64 {
    i64::from(((x << 8) as i32) >> 8)
}

/// `v_mul_u32_u24`: low 32 bits of S0[23:0] * S1[23:0].
pub fn v_mul_u32_u24(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2(c, op, |a, b| (u24(a) * u24(b)) as u32)
}

/// `v_mul_hi_u32_u24`: bits 47:32 of S0[23:0] * S1[23:0].
pub fn v_mul_hi_u32_u24(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2(c, op, |a, b| ((u24(a) * u24(b)) >> 32) as u32)
}

/// `v_mul_i32_i24`: low 32 bits of the signed 24-bit product.
pub fn v_mul_i32_i24(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map2(c, op, |a, b| {
            (i24(a) * i24(b)).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
        })
    } else {
        map2(c, op, |a, b| (i24(a) * i24(b)) as u32)
    }
}

/// `v_mul_hi_i32_i24`: bits 63:32 of the sign-extended signed 24-bit
/// product.
pub fn v_mul_hi_i32_i24(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2(c, op, |a, b| ((i24(a) * i24(b)) >> 32) as u32)
}

/// `v_mad_u32_u24`: S0[23:0] * S1[23:0] + S2; clamp saturates.
pub fn v_mad_u32_u24(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map3(c, op, |a, b, d| {
            (u24(a) * u24(b) + u64::from(d)).min(u64::from(u32::MAX)) as u32
        })
    } else {
        map3(c, op, |a, b, d| {
            (u24(a) * u24(b)).wrapping_add(u64::from(d)) as u32
        })
    }
}

/// `v_mad_i32_i24`: S0.i24 * S1.i24 + S2.i32; clamp saturates signed.
pub fn v_mad_i32_i24(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.mods.clamp {
        map3(c, op, |a, b, d| {
            (i24(a) * i24(b) + i64::from(d as i32)).clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                as u32
        })
    } else {
        map3(c, op, |a, b, d| {
            (i24(a) * i24(b) + i64::from(d as i32)) as u32
        })
    }
}

/// `v_mad_u64_u32` (VOP3b): {carry, D.u64} = S0.u32 * S1.u32 + S2.u64 in
/// 65 bits; clamp saturates D.
pub fn v_mad_u64_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b, d) = (b32(c, op, 0), b32(c, op, 1), b64(c, op, 2));
    let clamp = op.mods.clamp;
    let mut carry = 0u64;
    let r: [u64; 64] = std::array::from_fn(|l| {
        let (x, o) = (u64::from(a[l]) * u64::from(b[l])).overflowing_add(d[l]);
        carry |= u64::from(o) << l;
        if clamp && o { u64::MAX } else { x }
    });
    write_b64(c, op, &r);
    write_mask(c, op, carry);
    Ok(())
}

/// `v_mad_i64_i32` (VOP3b): {carry, D.i64} = S0.i32 * S1.i32 + S2.i64 in
/// 65-bit signed arithmetic (the carry is bit 64); clamp saturates D.
pub fn v_mad_i64_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b, d) = (b32(c, op, 0), b32(c, op, 1), b64(c, op, 2));
    let clamp = op.mods.clamp;
    let mut carry = 0u64;
    let r: [u64; 64] = std::array::from_fn(|l| {
        let x =
            i128::from(i64::from(a[l] as i32) * i64::from(b[l] as i32)) + i128::from(d[l] as i64);
        carry |= ((x >> 64) as u64 & 1) << l;
        if clamp {
            x.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as u64
        } else {
            x as u64
        }
    });
    write_b64(c, op, &r);
    write_mask(c, op, carry);
    Ok(())
}

// ---------------------------------------------------------------------------
// Integer dot products accumulating into VDST (VOP2 `c` forms).

/// Reads VDST as the accumulator, applies `f(s0, s1, acc)` and writes
/// VDST.
#[inline(always)]
fn dot_acc(c: &mut Ctx, op: &Op, f: impl Fn(u32, u32, i32) -> i64) -> Result<(), Fault> {
    let (a, b) = (b32(c, op, 0), b32(c, op, 1));
    let acc = *c.wave.vreg(op.vdst);
    let clamp = op.mods.clamp;
    let r: Lanes = std::array::from_fn(|l| {
        let x = f(a[l], b[l], acc[l] as i32);
        if clamp {
            x.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
        } else {
            x as u32
        }
    });
    write_b32(c, op, &r);
    Ok(())
}

/// `v_dot2c_i32_i16`: D += S0.i16[0] * S1.i16[0] + S0.i16[1] * S1.i16[1].
pub fn v_dot2c_i32_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    dot_acc(c, op, |a, b, acc| {
        let p = |k: u32| i64::from((a >> (16 * k)) as i16) * i64::from((b >> (16 * k)) as i16);
        i64::from(acc) + p(0) + p(1)
    })
}

/// `v_dot4c_i32_i8`: D += sum of the four signed byte products.
pub fn v_dot4c_i32_i8(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    dot_acc(c, op, |a, b, acc| {
        (0..4).fold(i64::from(acc), |s, k| {
            s + i64::from((a >> (8 * k)) as i8) * i64::from((b >> (8 * k)) as i8)
        })
    })
}

/// `v_dot8c_i32_i4`: D += sum of the eight signed nibble products.
pub fn v_dot8c_i32_i4(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    dot_acc(c, op, |a, b, acc| {
        let n = |x: u32, k: u32| i64::from((((x >> (4 * k)) << 28) as i32) >> 28);
        (0..8).fold(i64::from(acc), |s, k| s + n(a, k) * n(b, k))
    })
}

// ---------------------------------------------------------------------------
// Sums of absolute differences.

/// Sum over the four bytes of |a - b|, skipping bytes where `b` is 0 when
/// `masked` (MSAD).
#[inline(always)]
fn sad_bytes(a: u32, b: u32, masked: bool) -> u32 {
    (0..4).fold(0, |s, k| {
        let (x, y) = ((a >> (8 * k)) & 0xff, (b >> (8 * k)) & 0xff);
        if masked && y == 0 {
            s
        } else {
            s + x.abs_diff(y)
        }
    })
}

/// `v_sad_u8`: S2 + sum of byte |S0 - S1|; clamp saturates.
pub fn v_sad_u8(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    map3(c, op, |a, b, d| acc_sat(d, sad_bytes(a, b, false), clamp))
}

/// `v_sad_hi_u8`: S2 + (sum of byte |S0 - S1|) << 16.
pub fn v_sad_hi_u8(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    map3(c, op, |a, b, d| {
        acc_sat(d, sad_bytes(a, b, false) << 16, clamp)
    })
}

/// `v_sad_u16`: S2 + sum of half-word |S0 - S1|.
pub fn v_sad_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    map3(c, op, |a, b, d| {
        let s = (a & 0xffff).abs_diff(b & 0xffff) + (a >> 16).abs_diff(b >> 16);
        acc_sat(d, s, clamp)
    })
}

/// `v_sad_u32`: S2 + |S0 - S1|.
pub fn v_sad_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    map3(c, op, |a, b, d| acc_sat(d, a.abs_diff(b), clamp))
}

/// `v_msad_u8`: S2 + sum of byte |S0 - S1| over the bytes where S1 is not
/// zero.
pub fn v_msad_u8(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let clamp = op.mods.clamp;
    map3(c, op, |a, b, d| acc_sat(d, sad_bytes(a, b, true), clamp))
}

#[inline(always)]
fn acc_sat(d: u32, s: u32, clamp: bool) -> u32 {
    if clamp {
        d.saturating_add(s)
    } else {
        d.wrapping_add(s)
    }
}

/// `v_lerp_u8`: per byte, (S0 + S1 + S2[bit 0 of the byte]) >> 1.
pub fn v_lerp_u8(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map3(c, op, |a, b, d| {
        (0..4).fold(0, |r, k| {
            let s = ((a >> (8 * k)) & 0xff) + ((b >> (8 * k)) & 0xff) + ((d >> (8 * k)) & 1);
            r | ((s >> 1) << (8 * k))
        })
    })
}

/// Four SADs of S1 against the 32-bit windows of S0.u64 at byte offsets
/// 0..3, each accumulated onto a field of S2; `field` gives the field
/// width in bits (16 for the packed forms).
#[inline(always)]
fn quad_sad(src0: u64, s1: u32, masked: bool, acc: [u32; 4], clamp16: bool) -> [u32; 4] {
    std::array::from_fn(|k| {
        let win = (src0 >> (8 * k)) as u32;
        let s = acc[k].wrapping_add(sad_bytes(win, s1, masked));
        if clamp16 { s.min(0xffff) } else { s }
    })
}

/// `v_qsad_pk_u16_u8`: four 16-bit SADs of S1 against S0.u64's byte
/// windows, accumulated onto S2's 16-bit fields.
pub fn v_qsad_pk_u16_u8(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    pk_u16_sad(c, op, false)
}

/// `v_mqsad_pk_u16_u8`: as `v_qsad_pk_u16_u8` with masked SADs.
pub fn v_mqsad_pk_u16_u8(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    pk_u16_sad(c, op, true)
}

fn pk_u16_sad(c: &mut Ctx, op: &Op, masked: bool) -> Result<(), Fault> {
    let (a, b, d) = (b64(c, op, 0), b32(c, op, 1), b64(c, op, 2));
    let clamp = op.mods.clamp;
    let r: [u64; 64] = std::array::from_fn(|l| {
        let acc = std::array::from_fn(|k| ((d[l] >> (16 * k)) & 0xffff) as u32);
        let s = quad_sad(a[l], b[l], masked, acc, clamp);
        (0..4).fold(0u64, |x, k| x | (u64::from(s[k] & 0xffff) << (16 * k)))
    });
    write_b64(c, op, &r);
    Ok(())
}

/// `v_mqsad_u32_u8`: four 32-bit masked SADs of S1 against S0.u64's byte
/// windows, accumulated onto the four dwords of S2 (VGPR quad).
pub fn v_mqsad_u32_u8(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b) = (b64(c, op, 0), b32(c, op, 1));
    let acc: [Lanes; 4] = std::array::from_fn(|k| match op.src[2] {
        Src::V(i) => *c.wave.vreg(i.wrapping_add(k as u16)),
        s => [c.wave.read_s32(s, Width::B32, &c.env.apertures); 64],
    });
    let mut out = [[0u32; 64]; 4];
    for l in 0..64 {
        let s = quad_sad(a[l], b[l], true, std::array::from_fn(|k| acc[k][l]), false);
        for k in 0..4 {
            out[k][l] = s[k];
        }
    }
    let mask = lanes(c, op);
    for (k, v) in out.iter().enumerate() {
        c.wave.write_v(op.vdst.wrapping_add(k as u16), v, mask);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::exec::valu::test_util::*;
    use rocjitsu_isa::Target::{Gfx90a, Gfx942, Gfx950};

    fn sat_u32(x: i128) -> u32 {
        x.clamp(0, u32::MAX as i128) as u32
    }

    fn sat_i32(x: i128) -> u32 {
        x.clamp(i32::MIN as i128, i32::MAX as i128) as i32 as u32
    }

    fn s(x: u32) -> i128 {
        x as i32 as i128
    }

    fn u(x: u32) -> i128 {
        x as i128
    }

    #[test]
    fn add_sub_u32_wrap_and_clamp() {
        op3(Gfx942, "v_add_u32 v3, v0, v1", |a, b, _| {
            (u(a) + u(b)) as u32
        });
        op3(Gfx942, "v_add_u32_e64 v3, v0, v1 clamp", |a, b, _| {
            sat_u32(u(a) + u(b))
        });
        op3(Gfx90a, "v_sub_u32 v3, v0, v1", |a, b, _| {
            (u(a) - u(b)) as u32
        });
        op3(Gfx942, "v_sub_u32_e64 v3, v0, v1 clamp", |a, b, _| {
            sat_u32(u(a) - u(b))
        });
        op3(Gfx950, "v_subrev_u32 v3, v0, v1", |a, b, _| {
            (u(b) - u(a)) as u32
        });
        op3(Gfx942, "v_subrev_u32_e64 v3, v0, v1 clamp", |a, b, _| {
            sat_u32(u(b) - u(a))
        });
        op3(Gfx942, "v_add_i32 v3, v0, v1", |a, b, _| {
            (s(a) + s(b)) as u32
        });
        op3(Gfx942, "v_add_i32 v3, v0, v1 clamp", |a, b, _| {
            sat_i32(s(a) + s(b))
        });
        op3(Gfx942, "v_sub_i32 v3, v0, v1 clamp", |a, b, _| {
            sat_i32(s(a) - s(b))
        });
        // Constants: an inline integer and a literal.
        op3(Gfx942, "v_add_u32 v3, -5, v1", |_, b, _| (u(b) - 5) as u32);
        op3(Gfx942, "v_sub_u32 v3, 0x12345678, v1", |_, b, _| {
            (0x1234_5678 - u(b)) as u32
        });
    }

    /// Runs a carry-out op and checks VDST and the carry mask.
    fn carry(asm: &str, sdst: usize, cin: u64, want: impl Fn(u32, u32, u32) -> (u32, bool)) {
        let (a, b, old) = (vals(0), vals(1), vals(3));
        let r = exec(Gfx942, asm, |w| {
            w.v[0] = a;
            w.v[1] = b;
            w.v[3] = old;
            w.s[sdst] = 0x5555_5555;
            w.set_vcc(cin);
            w.s[6] = cin as u32;
            w.s[7] = (cin >> 32) as u32;
            w.set_exec(EXEC);
        });
        let cb = |l: usize| (cin >> l & 1) as u32;
        check(asm, &r.wave.v[3], &old, EXEC, |l| want(a[l], b[l], cb(l)).0);
        let mut m = 0u64;
        for l in 0..64 {
            m |= u64::from(want(a[l], b[l], cb(l)).1) << l;
        }
        let got = u64::from(r.wave.s[sdst]) | u64::from(r.wave.s[sdst + 1]) << 32;
        assert_eq!(got, m & EXEC, "{asm}: carry mask");
    }

    #[test]
    fn carries_in_and_out() {
        let cin = 0x0123_4567_89ab_cdef_u64;
        let add = |a, b, ci| {
            let x = u(a) + u(b) + u(ci);
            (x as u32, x > u32::MAX as i128)
        };
        let sub = |a, b, bi| {
            let x = u(a) - u(b) - u(bi);
            (x as u32, x < 0)
        };
        carry("v_add_co_u32 v3, vcc, v0, v1", 106, 0, add);
        carry("v_add_co_u32_e64 v3, s[4:5], v0, v1", 4, 0, add);
        carry(
            "v_add_co_u32_e64 v3, s[4:5], v0, v1 clamp",
            4,
            0,
            |a, b, _| {
                let (x, o) = add(a, b, 0);
                (if o { u32::MAX } else { x }, o)
            },
        );
        carry("v_sub_co_u32 v3, vcc, v0, v1", 106, 0, sub);
        carry("v_subrev_co_u32_e64 v3, s[4:5], v0, v1", 4, 0, |a, b, c| {
            sub(b, a, c)
        });
        carry("v_addc_co_u32 v3, vcc, v0, v1, vcc", 106, cin, add);
        carry("v_addc_co_u32_e64 v3, s[4:5], v0, v1, s[6:7]", 4, cin, add);
        carry("v_subb_co_u32 v3, vcc, v0, v1, vcc", 106, cin, sub);
        carry("v_subb_co_u32_e64 v3, s[4:5], v0, v1, s[6:7]", 4, cin, sub);
        carry(
            "v_subbrev_co_u32 v3, vcc, v0, v1, vcc",
            106,
            cin,
            |a, b, c| sub(b, a, c),
        );
    }

    #[test]
    fn three_operand_adds_and_shifts() {
        op3(Gfx942, "v_add3_u32 v3, v0, v1, v2", |a, b, c| {
            (u(a) + u(b) + u(c)) as u32
        });
        op3(Gfx942, "v_xad_u32 v3, v0, v1, v2", |a, b, c| {
            (u(a ^ b) + u(c)) as u32
        });
        op3(Gfx942, "v_lshl_add_u32 v3, v0, v1, v2", |a, b, c| {
            ((u(a) << (b % 32)) + u(c)) as u32
        });
        op3(Gfx942, "v_add_lshl_u32 v3, v0, v1, v2", |a, b, c| {
            ((u(a) + u(b)) << (c % 32)) as u32
        });
    }

    #[test]
    fn lshl_add_u64() {
        let (a, b, c, d) = (vals(0), vals(1), vals(2), vals(3));
        for sh in [0u32, 1, 3, 4] {
            let asm = format!("v_lshl_add_u64 v[4:5], v[0:1], {sh}, v[2:3]");
            let r = exec(Gfx942, &asm, |w| {
                (w.v[0], w.v[1], w.v[2], w.v[3]) = (a, b, c, d);
            });
            for l in 0..64 {
                let x = u(a[l]) | u(b[l]) << 32;
                let y = u(c[l]) | u(d[l]) << 32;
                let want = ((x << sh) + y) as u64;
                assert_eq!(pair(&r.wave, 4, l), want, "{asm} lane {l}");
            }
        }
    }

    fn lo16(x: u32) -> i128 {
        (x & 0xffff) as i128
    }

    fn s16(x: u32) -> i128 {
        x as u16 as i16 as i128
    }

    #[test]
    fn sixteen_bit_arithmetic_zeroes_the_high_half() {
        let m = |x: i128| (x as u32) & 0xffff;
        let sat_u = |x: i128| x.clamp(0, 0xffff) as u32;
        let sat_i = |x: i128| (x.clamp(-0x8000, 0x7fff) as u32) & 0xffff;
        op3(Gfx942, "v_add_u16 v3, v0, v1", |a, b, _| {
            m(lo16(a) + lo16(b))
        });
        op3(Gfx942, "v_add_u16_e64 v3, v0, v1 clamp", |a, b, _| {
            sat_u(lo16(a) + lo16(b))
        });
        op3(Gfx942, "v_sub_u16 v3, v0, v1", |a, b, _| {
            m(lo16(a) - lo16(b))
        });
        op3(Gfx942, "v_sub_u16_e64 v3, v0, v1 clamp", |a, b, _| {
            sat_u(lo16(a) - lo16(b))
        });
        op3(Gfx942, "v_subrev_u16 v3, v0, v1", |a, b, _| {
            m(lo16(b) - lo16(a))
        });
        op3(Gfx942, "v_add_i16 v3, v0, v1 clamp", |a, b, _| {
            sat_i(s16(a) + s16(b))
        });
        op3(Gfx942, "v_sub_i16 v3, v0, v1 clamp", |a, b, _| {
            sat_i(s16(a) - s16(b))
        });
        op3(Gfx942, "v_sub_i16 v3, v0, v1", |a, b, _| m(s16(a) - s16(b)));
        op3(Gfx942, "v_mul_lo_u16 v3, v0, v1", |a, b, _| {
            m(lo16(a) * lo16(b))
        });
        op3(Gfx942, "v_mad_u16 v3, v0, v1, v2", |a, b, c| {
            m(lo16(a) * lo16(b) + lo16(c))
        });
        op3(Gfx942, "v_mad_u16 v3, v0, v1, v2 clamp", |a, b, c| {
            sat_u(lo16(a) * lo16(b) + lo16(c))
        });
        op3(Gfx942, "v_mad_i16 v3, v0, v1, v2 clamp", |a, b, c| {
            sat_i(s16(a) * s16(b) + s16(c))
        });
        op3(Gfx942, "v_mad_legacy_i16 v3, v0, v1, v2", |a, b, c| {
            m(s16(a) * s16(b) + s16(c))
        });
        // op_sel: high halves of sources 0 and 2; result to the high half
        // with the low half kept.
        let old = vals(3);
        let (a, b, c) = (vals(0), vals(1), vals(2));
        let r = exec(Gfx942, "v_mad_u16 v3, v0, v1, v2 op_sel:[1,0,1,1]", |w| {
            (w.v[0], w.v[1], w.v[2], w.v[3]) = (a, b, c, old);
        });
        check("v_mad_u16 op_sel", &r.wave.v[3], &old, u64::MAX, |l| {
            let x = m(lo16(a[l] >> 16) * lo16(b[l]) + lo16(c[l] >> 16));
            (x << 16) | (old[l] & 0xffff)
        });
        op3(
            Gfx942,
            "v_mad_u32_u16 v3, v0, v1, v2 op_sel:[0,1,0,0]",
            |a, b, c| (lo16(a) * lo16(b >> 16) + u(c)) as u32,
        );
        op3(Gfx942, "v_mad_i32_i16 v3, v0, v1, v2", |a, b, c| {
            (s16(a) * s16(b) + s(c)) as u32
        });
        op3(Gfx942, "v_mad_i32_i16 v3, v0, v1, v2 clamp", |a, b, c| {
            sat_i32(s16(a) * s16(b) + s(c))
        });
    }

    fn u24(x: u32) -> i128 {
        (x & 0xff_ffff) as i128
    }

    fn i24(x: u32) -> i128 {
        let v = (x & 0xff_ffff) as i128;
        if v >= 0x80_0000 { v - 0x100_0000 } else { v }
    }

    #[test]
    fn multiplies() {
        op3(Gfx942, "v_mul_lo_u32 v3, v0, v1", |a, b, _| {
            (u(a) * u(b)) as u32
        });
        op3(Gfx942, "v_mul_hi_u32 v3, v0, v1", |a, b, _| {
            ((u(a) * u(b)) >> 32) as u32
        });
        op3(Gfx942, "v_mul_hi_i32 v3, v0, v1", |a, b, _| {
            ((s(a) * s(b)) >> 32) as u32
        });
        op3(Gfx942, "v_mul_u32_u24 v3, v0, v1", |a, b, _| {
            (u24(a) * u24(b)) as u32
        });
        op3(Gfx942, "v_mul_hi_u32_u24 v3, v0, v1", |a, b, _| {
            ((u24(a) * u24(b)) >> 32) as u32
        });
        op3(Gfx942, "v_mul_i32_i24 v3, v0, v1", |a, b, _| {
            (i24(a) * i24(b)) as u32
        });
        op3(Gfx942, "v_mul_hi_i32_i24 v3, v0, v1", |a, b, _| {
            ((i24(a) * i24(b)) >> 32) as u32
        });
        op3(Gfx942, "v_mad_u32_u24 v3, v0, v1, v2", |a, b, c| {
            (u24(a) * u24(b) + u(c)) as u32
        });
        op3(Gfx942, "v_mad_u32_u24 v3, v0, v1, v2 clamp", |a, b, c| {
            sat_u32(u24(a) * u24(b) + u(c))
        });
        op3(Gfx942, "v_mad_i32_i24 v3, v0, v1, v2", |a, b, c| {
            (i24(a) * i24(b) + s(c)) as u32
        });
    }

    #[test]
    fn mad_64_with_carry_out() {
        let (a, b, c, d) = (vals(0), vals(1), vals(2), vals(3));
        for (asm, signed, clamp) in [
            ("v_mad_u64_u32 v[4:5], s[8:9], v0, v1, v[2:3]", false, false),
            (
                "v_mad_u64_u32 v[4:5], s[8:9], v0, v1, v[2:3] clamp",
                false,
                true,
            ),
            ("v_mad_i64_i32 v[4:5], s[8:9], v0, v1, v[2:3]", true, false),
            (
                "v_mad_i64_i32 v[4:5], s[8:9], v0, v1, v[2:3] clamp",
                true,
                true,
            ),
        ] {
            let r = exec(Gfx942, asm, |w| {
                (w.v[0], w.v[1], w.v[2], w.v[3]) = (a, b, c, d);
                w.set_exec(EXEC);
            });
            let mut mask = 0u64;
            for l in 0..64 {
                let acc = u(c[l]) | u(d[l]) << 32;
                let x = if signed {
                    s(a[l]) * s(b[l]) + (acc as u64 as i64 as i128)
                } else {
                    u(a[l]) * u(b[l]) + acc
                };
                // Bit 64 of the 65-bit result (ISA pseudo-code).
                mask |= ((x >> 64) as u64 & 1) << l;
                let want = match (clamp, signed) {
                    (false, _) => x as u64,
                    (true, false) => x.min(u64::MAX as i128) as u64,
                    (true, true) => x.clamp(i64::MIN as i128, i64::MAX as i128) as u64,
                };
                if EXEC >> l & 1 != 0 {
                    assert_eq!(pair(&r.wave, 4, l), want, "{asm} lane {l}");
                } else {
                    assert_eq!(pair(&r.wave, 4, l), 0, "{asm} inactive lane {l}");
                }
            }
            let got = u64::from(r.wave.s[8]) | u64::from(r.wave.s[9]) << 32;
            assert_eq!(got, mask & EXEC, "{asm}: carry");
        }
    }

    #[test]
    fn dot_products_accumulate_into_vdst() {
        let b16 = |x: u32, k: u32| (x >> (16 * k)) as u16 as i16 as i128;
        let b8 = |x: u32, k: u32| (x >> (8 * k)) as u8 as i8 as i128;
        let b4 = |x: u32, k: u32| {
            let n = ((x >> (4 * k)) & 15) as i128;
            if n >= 8 { n - 16 } else { n }
        };
        // v3 is both the accumulator and the destination.
        let acc = vals(3);
        let run = |asm: &str, f: &dyn Fn(u32, u32) -> i128| {
            let (a, b) = (vals(0), vals(1));
            let r = exec(Gfx942, asm, |w| {
                (w.v[0], w.v[1], w.v[3]) = (a, b, acc);
                w.set_exec(EXEC);
            });
            check(asm, &r.wave.v[3], &acc, EXEC, |l| {
                (s(acc[l]) + f(a[l], b[l])) as u32
            });
        };
        run("v_dot2c_i32_i16 v3, v0, v1", &|a, b| {
            (0..2).map(|k| b16(a, k) * b16(b, k)).sum()
        });
        run("v_dot4c_i32_i8 v3, v0, v1", &|a, b| {
            (0..4).map(|k| b8(a, k) * b8(b, k)).sum()
        });
        run("v_dot8c_i32_i4 v3, v0, v1", &|a, b| {
            (0..8).map(|k| b4(a, k) * b4(b, k)).sum()
        });
    }

    fn bytes(x: u32) -> [i128; 4] {
        x.to_le_bytes().map(i128::from)
    }

    #[test]
    fn sums_of_absolute_differences() {
        let sad = |a: u32, b: u32| {
            let (x, y) = (bytes(a), bytes(b));
            (0..4).map(|k| (x[k] - y[k]).abs()).sum::<i128>()
        };
        let msad = |a: u32, b: u32| {
            let (x, y) = (bytes(a), bytes(b));
            (0..4)
                .filter(|&k| y[k] != 0)
                .map(|k| (x[k] - y[k]).abs())
                .sum::<i128>()
        };
        op3(Gfx942, "v_sad_u8 v3, v0, v1, v2", |a, b, c| {
            (sad(a, b) + u(c)) as u32
        });
        op3(Gfx942, "v_sad_u8 v3, v0, v1, v2 clamp", |a, b, c| {
            sat_u32(sad(a, b) + u(c))
        });
        op3(Gfx942, "v_sad_hi_u8 v3, v0, v1, v2", |a, b, c| {
            ((sad(a, b) << 16) + u(c)) as u32
        });
        op3(Gfx942, "v_sad_u16 v3, v0, v1, v2", |a, b, c| {
            ((lo16(a) - lo16(b)).abs() + (lo16(a >> 16) - lo16(b >> 16)).abs() + u(c)) as u32
        });
        op3(Gfx942, "v_sad_u32 v3, v0, v1, v2", |a, b, c| {
            ((u(a) - u(b)).abs() + u(c)) as u32
        });
        op3(Gfx942, "v_msad_u8 v3, v0, v1, v2", |a, b, c| {
            (msad(a, b) + u(c)) as u32
        });
        op3(Gfx942, "v_lerp_u8 v3, v0, v1, v2", |a, b, c| {
            let (x, y, z) = (bytes(a), bytes(b), bytes(c));
            (0..4)
                .map(|k| (((x[k] + y[k] + (z[k] & 1)) >> 1) as u32) << (8 * k))
                .sum()
        });
    }

    #[test]
    fn quad_sads() {
        let (a, b, c, d, e) = (vals(0), vals(1), vals(2), vals(3), vals(4));
        let r = exec(
            Gfx942,
            "v_qsad_pk_u16_u8 v[10:11], v[0:1], v2, v[4:5]\n\
             v_mqsad_pk_u16_u8 v[12:13], v[0:1], v2, v[4:5]\n\
             v_mqsad_u32_u8 v[14:17], v[0:1], v2, v[4:7]",
            |w| {
                (w.v[0], w.v[1], w.v[2], w.v[4], w.v[5]) = (a, b, c, d, e);
                (w.v[6], w.v[7]) = (a, c);
            },
        );
        for l in 0..64 {
            let src: Vec<i128> = [a[l], b[l]]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .map(i128::from)
                .collect();
            let refb = bytes(c[l]);
            let acc16 = u(d[l]) | u(e[l]) << 32;
            let acc32 = [d[l], e[l], a[l], c[l]];
            let mut q = 0u64;
            let mut mq = 0u64;
            for k in 0..4 {
                let win = &src[k..k + 4];
                let full: i128 = (0..4).map(|j| (win[j] - refb[j]).abs()).sum();
                let masked: i128 = (0..4)
                    .filter(|&j| refb[j] != 0)
                    .map(|j| (win[j] - refb[j]).abs())
                    .sum();
                let a16 = (acc16 >> (16 * k)) & 0xffff;
                q |= (((full + a16) as u64) & 0xffff) << (16 * k);
                mq |= (((masked + a16) as u64) & 0xffff) << (16 * k);
                assert_eq!(
                    r.wave.v[14 + k][l],
                    (masked + u(acc32[k])) as u32,
                    "mqsad_u32 lane {l} {k}"
                );
            }
            assert_eq!(pair(&r.wave, 10, l), q, "qsad lane {l}");
            assert_eq!(pair(&r.wave, 12, l), mq, "mqsad_pk lane {l}");
        }
    }
}
