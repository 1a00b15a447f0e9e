//! Bitwise vector ALU operations: logic, shifts (16/32/64-bit, the `rev`
//! forms take the shift amount in S0), bit fields, byte permutes, bit
//! counts, integer min/max/median and saturating packs.

use super::int::{map2_16, map3, map3_16};
use super::*;
use crate::exec::op::{Ctx, Fault, Op};

/// The semantic function of a bitwise vector ALU base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_and_b32" => v_and_b32,
        "v_or_b32" => v_or_b32,
        "v_xor_b32" => v_xor_b32,
        "v_xnor_b32" => v_xnor_b32,
        "v_not_b32" => v_not_b32,
        "v_and_or_b32" => v_and_or_b32,
        "v_or3_b32" => v_or3_b32,
        "v_lshl_or_b32" => v_lshl_or_b32,
        "v_bitop3_b32" => v_bitop3_b32,
        "v_bitop3_b16" => v_bitop3_b16,
        "v_lshlrev_b32" => v_lshlrev_b32,
        "v_lshrrev_b32" => v_lshrrev_b32,
        "v_ashrrev_i32" => v_ashrrev_i32,
        "v_lshlrev_b16" => v_lshlrev_b16,
        "v_lshrrev_b16" => v_lshrrev_b16,
        "v_ashrrev_i16" => v_ashrrev_i16,
        "v_lshlrev_b64" => v_lshlrev_b64,
        "v_lshrrev_b64" => v_lshrrev_b64,
        "v_ashrrev_i64" => v_ashrrev_i64,
        "v_bfrev_b32" => v_bfrev_b32,
        "v_ffbh_u32" => v_ffbh_u32,
        "v_ffbl_b32" => v_ffbl_b32,
        "v_ffbh_i32" => v_ffbh_i32,
        "v_bcnt_u32_b32" => v_bcnt_u32_b32,
        "v_mbcnt_lo_u32_b32" => v_mbcnt_lo_u32_b32,
        "v_mbcnt_hi_u32_b32" => v_mbcnt_hi_u32_b32,
        "v_bfm_b32" => v_bfm_b32,
        "v_bfe_u32" => v_bfe_u32,
        "v_bfe_i32" => v_bfe_i32,
        "v_bfi_b32" => v_bfi_b32,
        "v_alignbit_b32" => v_alignbit_b32,
        "v_alignbyte_b32" => v_alignbyte_b32,
        "v_perm_b32" => v_perm_b32,
        "v_min_i32" => v_min_i32,
        "v_max_i32" => v_max_i32,
        "v_min_u32" => v_min_u32,
        "v_max_u32" => v_max_u32,
        "v_min_i16" => v_min_i16,
        "v_max_i16" => v_max_i16,
        "v_min_u16" => v_min_u16,
        "v_max_u16" => v_max_u16,
        "v_min3_i32" => v_min3_i32,
        "v_max3_i32" => v_max3_i32,
        "v_med3_i32" => v_med3_i32,
        "v_min3_u32" => v_min3_u32,
        "v_max3_u32" => v_max3_u32,
        "v_med3_u32" => v_med3_u32,
        "v_min3_i16" => v_min3_i16,
        "v_max3_i16" => v_max3_i16,
        "v_med3_i16" => v_med3_i16,
        "v_min3_u16" => v_min3_u16,
        "v_max3_u16" => v_max3_u16,
        "v_med3_u16" => v_med3_u16,
        "v_sat_pk_u8_i16" => v_sat_pk_u8_i16,
        "v_ashr_pk_i8_i32" => v_ashr_pk_i8_i32,
        "v_ashr_pk_u8_i32" => v_ashr_pk_u8_i32,
        "v_prng_b32" => v_prng_b32,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// Logic.

lanes32!(v_and_b32, |a, b| a & b);
lanes32!(v_or_b32, |a, b| a | b);
lanes32!(v_xor_b32, |a, b| a ^ b);
lanes32!(v_xnor_b32, |a, b| !(a ^ b));
lanes32!(v_not_b32, |a| !a);
lanes32!(v_and_or_b32, |a, b, d| (a & b) | d);
lanes32!(v_or3_b32, |a, b, d| a | b | d);
lanes32!(v_lshl_or_b32, |a, b, d| (a << (b & 31)) | d);

/// The truth table of gfx950's `v_bitop3_*`, kept by the VOP3 lowering in
/// the neg (bits 2:0), abs (bits 5:3) and omod (bits 7:6) fields.
#[inline]
fn bitop3_table(op: &Op) -> u8 {
    (op.mods.neg & 7) | ((op.mods.abs & 7) << 3) | ((op.mods.omod & 3) << 6)
}

/// Bit i of the result is bit (S0[i] << 2 | S1[i] << 1 | S2[i]) of the
/// truth table `t`.
#[inline(always)]
fn bitop3(t: u8, a: u32, b: u32, d: u32) -> u32 {
    let mut r = 0;
    for k in 0..8 {
        if t >> k & 1 != 0 {
            let x = if k & 4 != 0 { a } else { !a };
            let y = if k & 2 != 0 { b } else { !b };
            let z = if k & 1 != 0 { d } else { !d };
            r |= x & y & z;
        }
    }
    r
}

/// `v_bitop3_b32` (gfx950): any three-input bitwise function.
pub fn v_bitop3_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = bitop3_table(op);
    map3(c, op, |a, b, d| bitop3(t, a, b, d))
}

/// `v_bitop3_b16` (gfx950): 16-bit form, with op_sel.
pub fn v_bitop3_b16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = bitop3_table(op);
    map3_16(c, op, |a, b, d| {
        bitop3(t, u32::from(a), u32::from(b), u32::from(d)) as u16
    })
}

// ---------------------------------------------------------------------------
// Shifts: the amount is S0, the data S1.

lanes32!(v_lshlrev_b32, |a, b| b << (a & 31));
lanes32!(v_lshrrev_b32, |a, b| b >> (a & 31));
lanes32!(v_ashrrev_i32, |a, b| ((b as i32) >> (a & 31)) as u32);

/// `v_lshlrev_b16`: S1 << S0[3:0].
pub fn v_lshlrev_b16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2_16(c, op, |a, b| b << (a & 15))
}

/// `v_lshrrev_b16`: S1 >> S0[3:0].
pub fn v_lshrrev_b16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2_16(c, op, |a, b| b >> (a & 15))
}

/// `v_ashrrev_i16`: S1.i16 >> S0[3:0].
pub fn v_ashrrev_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2_16(c, op, |a, b| ((b as i16) >> (a & 15)) as u16)
}

#[inline(always)]
fn shift64(c: &mut Ctx, op: &Op, f: impl Fn(u64, u32) -> u64) -> Result<(), Fault> {
    let (a, b) = (b32(c, op, 0), b64(c, op, 1));
    let r: [u64; 64] = std::array::from_fn(|l| f(b[l], a[l] & 63));
    write_b64(c, op, &r);
    Ok(())
}

/// `v_lshlrev_b64`: S1.u64 << S0[5:0].
pub fn v_lshlrev_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    shift64(c, op, |x, s| x << s)
}

/// `v_lshrrev_b64`: S1.u64 >> S0[5:0].
pub fn v_lshrrev_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    shift64(c, op, |x, s| x >> s)
}

/// `v_ashrrev_i64`: S1.i64 >> S0[5:0].
pub fn v_ashrrev_i64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    shift64(c, op, |x, s| ((x as i64) >> s) as u64)
}

// ---------------------------------------------------------------------------
// Bit counts and bit fields.

lanes32!(v_bfrev_b32, |a| a.reverse_bits());
// Find first bit: -1 (all ones) when there is none.
lanes32!(v_ffbh_u32, |a| if a == 0 {
    u32::MAX
} else {
    a.leading_zeros()
});
lanes32!(v_ffbl_b32, |a| if a == 0 {
    u32::MAX
} else {
    a.trailing_zeros()
});
// The first bit from the MSB that differs from the sign bit.
lanes32!(v_ffbh_i32, |a| {
    let x = a ^ (((a as i32) >> 31) as u32);
    if x == 0 { u32::MAX } else { x.leading_zeros() }
});
lanes32!(v_bcnt_u32_b32, |a, b| a.count_ones().wrapping_add(b));
lanes32!(v_bfm_b32, |a, b| ((1u32 << (a & 31)).wrapping_sub(1))
    << (b & 31));
lanes32!(v_bfe_u32, |a, b, d| bfe_u32(a, b, d));
lanes32!(v_bfe_i32, |a, b, d| bfe_i32(a, b, d));
lanes32!(v_bfi_b32, |a, b, d| (a & b) | (!a & d));
lanes32!(v_alignbit_b32, |a, b, d| {
    ((u64::from(a) << 32 | u64::from(b)) >> (d & 31)) as u32
});
lanes32!(v_alignbyte_b32, |a, b, d| {
    ((u64::from(a) << 32 | u64::from(b)) >> (8 * (d & 3))) as u32
});
lanes32!(v_perm_b32, |a, b, d| perm(a, b, d));

/// Unsigned bit-field extract: `width` = S2[4:0] bits of S0 from bit
/// S1[4:0].
#[inline(always)]
fn bfe_u32(x: u32, off: u32, width: u32) -> u32 {
    let (o, w) = (off & 31, width & 31);
    (x >> o) & ((1u32 << w).wrapping_sub(1))
}

/// Signed bit-field extract: as [`bfe_u32`], sign-extended from the
/// field's top bit (0 for a zero width).
#[inline(always)]
fn bfe_i32(x: u32, off: u32, width: u32) -> u32 {
    let (o, w) = (off & 31, width & 31);
    if w == 0 {
        return 0;
    }
    let f = ((x as i32) >> o) as u32;
    (((f << (32 - w)) as i32) >> (32 - w)) as u32
}

/// `v_perm_b32`: each result byte selected from the eight bytes of
/// {S0, S1} (S1 the low dword) by the corresponding byte of S2: 0-7 a
/// byte, 8-11 the sign of byte 1, 3, 5 or 7 replicated, 12 zero, 13-255
/// 0xff.
#[inline(always)]
fn perm(s0: u32, s1: u32, sel: u32) -> u32 {
    let data = u64::from(s0) << 32 | u64::from(s1);
    (0..4).fold(0, |r, k| {
        let s = (sel >> (8 * k)) & 0xff;
        let byte = match s {
            0..=7 => ((data >> (8 * s)) & 0xff) as u32,
            8..=11 => {
                let bit = 16 * (s - 8) + 15;
                if data >> bit & 1 != 0 { 0xff } else { 0 }
            }
            12 => 0,
            _ => 0xff,
        };
        r | (byte << (8 * k))
    })
}

/// `v_mbcnt_lo_u32_b32`: S1 + the number of bits of S0 set below the
/// lane's position (lanes 32-63 count all 32).
pub fn v_mbcnt_lo_u32_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b) = (b32(c, op, 0), b32(c, op, 1));
    let r: Lanes = std::array::from_fn(|l| {
        let below = ((1u64 << l) - 1) as u32;
        (a[l] & below).count_ones().wrapping_add(b[l])
    });
    write_b32(c, op, &r);
    Ok(())
}

/// `v_mbcnt_hi_u32_b32`: S1 + the number of bits of S0 set below the
/// lane's position minus 32 (lanes 0-31 count none).
pub fn v_mbcnt_hi_u32_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b) = (b32(c, op, 0), b32(c, op, 1));
    let r: Lanes = std::array::from_fn(|l| {
        let below = (((1u64 << l) - 1) >> 32) as u32;
        (a[l] & below).count_ones().wrapping_add(b[l])
    });
    write_b32(c, op, &r);
    Ok(())
}

// ---------------------------------------------------------------------------
// Min, max, median.

lanes32!(v_min_i32, |a, b| (a as i32).min(b as i32) as u32);
lanes32!(v_max_i32, |a, b| (a as i32).max(b as i32) as u32);
lanes32!(v_min_u32, |a, b| a.min(b));
lanes32!(v_max_u32, |a, b| a.max(b));
lanes32!(v_min3_i32, |a, b, d| (a as i32).min(b as i32).min(d as i32)
    as u32);
lanes32!(v_max3_i32, |a, b, d| (a as i32).max(b as i32).max(d as i32)
    as u32);
lanes32!(v_med3_i32, |a, b, d| med3(a as i32, b as i32, d as i32)
    as u32);
lanes32!(v_min3_u32, |a, b, d| a.min(b).min(d));
lanes32!(v_max3_u32, |a, b, d| a.max(b).max(d));
lanes32!(v_med3_u32, |a, b, d| med3(a, b, d));

#[inline(always)]
fn med3<T: Ord + Copy>(a: T, b: T, c: T) -> T {
    a.min(b).max(a.max(b).min(c))
}

/// `v_min_i16`.
pub fn v_min_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2_16(c, op, |a, b| (a as i16).min(b as i16) as u16)
}

/// `v_max_i16`.
pub fn v_max_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2_16(c, op, |a, b| (a as i16).max(b as i16) as u16)
}

/// `v_min_u16`.
pub fn v_min_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2_16(c, op, u16::min)
}

/// `v_max_u16`.
pub fn v_max_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map2_16(c, op, u16::max)
}

/// `v_min3_i16`.
pub fn v_min3_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map3_16(c, op, |a, b, d| {
        (a as i16).min(b as i16).min(d as i16) as u16
    })
}

/// `v_max3_i16`.
pub fn v_max3_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map3_16(c, op, |a, b, d| {
        (a as i16).max(b as i16).max(d as i16) as u16
    })
}

/// `v_med3_i16`.
pub fn v_med3_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map3_16(c, op, |a, b, d| med3(a as i16, b as i16, d as i16) as u16)
}

/// `v_min3_u16`.
pub fn v_min3_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map3_16(c, op, |a, b, d| a.min(b).min(d))
}

/// `v_max3_u16`.
pub fn v_max3_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map3_16(c, op, |a, b, d| a.max(b).max(d))
}

/// `v_med3_u16`.
pub fn v_med3_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    map3_16(c, op, med3)
}

// ---------------------------------------------------------------------------
// Saturating packs and the gfx950 pseudo-random step.

// `v_sat_pk_u8_i16`: the two signed halves of S0 saturated to u8 and
// packed into bits 15:0; bits 31:16 are zero.
lanes32!(v_sat_pk_u8_i16, |a| {
    let s = |h: u32| ((a >> (16 * h)) as i16).clamp(0, 255) as u32;
    s(0) | (s(1) << 8)
});

/// `v_ashr_pk_i8_i32` (gfx950): S0 and S1 shifted right arithmetically by
/// S2[4:0], saturated to i8, packed into a 16-bit result.
pub fn v_ashr_pk_i8_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    ashr_pk(c, op, -128, 127)
}

/// `v_ashr_pk_u8_i32` (gfx950): as `v_ashr_pk_i8_i32` saturating to u8.
pub fn v_ashr_pk_u8_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    ashr_pk(c, op, 0, 255)
}

fn ashr_pk(c: &mut Ctx, op: &Op, lo: i32, hi: i32) -> Result<(), Fault> {
    let (a, b, d) = (b32(c, op, 0), b32(c, op, 1), b32(c, op, 2));
    let r: [u16; 64] = std::array::from_fn(|l| {
        let s = |x: u32| (((x as i32) >> (d[l] & 31)).clamp(lo, hi) as u16) & 0xff;
        s(a[l]) | (s(b[l]) << 8)
    });
    write_b16(c, op, &r);
    Ok(())
}

// `v_prng_b32` (gfx950): one step of a Galois LFSR: shift left, XOR the
// tap mask 0xc5 when the bit shifted out was set.
lanes32!(v_prng_b32, |a| (a << 1)
    ^ if a >> 31 != 0 { 0xc5 } else { 0 });
