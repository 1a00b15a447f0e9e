//! Bitwise vector ALU operations: logic, shifts (16/32/64-bit, the `rev`
//! forms take the shift amount in S0), bit fields, byte permutes, bit
//! counts, integer min/max/median and saturating packs.

use super::int::{map2_16, map3_16, split64, src32, src64, uniform32, write_pair};
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
        // GFX10+ (RDNA ISA manuals: D = S0 ^ S1 ^ S2).
        "v_xor3_b32" => v_xor3_b32,
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
        // GFX11+ (RDNA3 ISA: maxmin is min(max(S0, S1), S2), minmax is
        // max(min(S0, S1), S2)).
        "v_maxmin_i32" => v_maxmin_i32,
        "v_minmax_i32" => v_minmax_i32,
        "v_maxmin_u32" => v_maxmin_u32,
        "v_minmax_u32" => v_minmax_u32,
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
lanes32!(v_xor3_b32, |a, b, d| a ^ b ^ d);
lanes32!(v_lshl_or_b32, |a, b, d| (a << (b & 31)) | d);

/// The truth table of gfx950's `v_bitop3_*`, kept by the VOP3 lowering in
/// the neg (bits 2:0), abs (bits 5:3) and omod (bits 7:6) fields.
#[inline]
fn bitop3_table(op: &Op) -> u8 {
    (op.mods.neg & 7) | ((op.mods.abs & 7) << 3) | ((op.mods.omod & 3) << 6)
}

/// Bit i of the result is bit (S0[i] << 2 | S1[i] << 1 | S2[i]) of the
/// truth table `t`: the OR of the minterms the table selects. The table is
/// uniform, so the loop over minterms is outside the loop over lanes.
#[inline(always)]
fn bitop3(t: u8, a: &Lanes, b: &Lanes, d: &Lanes) -> Lanes {
    let mut r = [0u32; 64];
    for k in 0..8 {
        if t >> k & 1 == 0 {
            continue;
        }
        let fa = if k & 4 != 0 { 0 } else { u32::MAX };
        let fb = if k & 2 != 0 { 0 } else { u32::MAX };
        let fd = if k & 1 != 0 { 0 } else { u32::MAX };
        for l in 0..64 {
            r[l] |= (a[l] ^ fa) & (b[l] ^ fb) & (d[l] ^ fd);
        }
    }
    r
}

/// `v_bitop3_b32` (gfx950): any three-input bitwise function.
pub fn v_bitop3_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b, d) = (b32(c, op, 0), b32(c, op, 1), b32(c, op, 2));
    let r = bitop3(bitop3_table(op), &a, &b, &d);
    write_b32(c, op, &r);
    Ok(())
}

/// `v_bitop3_b16` (gfx950): 16-bit form, with op_sel.
pub fn v_bitop3_b16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let [a, b, d] = [0, 1, 2].map(|i| b16(c, op, i).map(u32::from));
    let r = bitop3(bitop3_table(op), &a, &b, &d);
    write_b16(c, op, &r.map(|x| x as u16));
    Ok(())
}

// ---------------------------------------------------------------------------
// Shifts: the amount is S0, the data S1.

/// A 32-bit shift of S1 by S0[4:0]; a uniform amount (the usual constant)
/// is hoisted out of the lane loop so that the loop vectorises.
#[inline(always)]
fn shift32(c: &mut Ctx, op: &Op, f: impl Fn(u32, u32) -> u32) -> Result<(), Fault> {
    match uniform32(c, op, 0) {
        Some(s) => {
            let s = s & 31;
            let r = {
                let tb;
                let b = src32!(c, op, 1, tb);
                let mut r = [0u32; 64];
                for l in 0..64 {
                    r[l] = f(b[l], s);
                }
                r
            };
            write_b32(c, op, &r);
            Ok(())
        }
        None => super::int::map2(c, op, |a, b| f(b, a & 31)),
    }
}

/// `v_lshlrev_b32`: S1 << S0[4:0].
pub fn v_lshlrev_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    shift32(c, op, |x, s| x << s)
}

/// `v_lshrrev_b32`: S1 >> S0[4:0].
pub fn v_lshrrev_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    shift32(c, op, |x, s| x >> s)
}

/// `v_ashrrev_i32`: S1.i32 >> S0[4:0].
pub fn v_ashrrev_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    shift32(c, op, |x, s| ((x as i32) >> s) as u32)
}

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
    let r = {
        let b = src64(c, op, 1);
        match uniform32(c, op, 0) {
            Some(s) => {
                let s = s & 63;
                split64(|l| f(b.get(l), s))
            }
            None => {
                let ta;
                let a = src32!(c, op, 0, ta);
                split64(|l| f(b.get(l), a[l] & 63))
            }
        }
    };
    write_pair(c, op, &r);
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
/// `v_alignbit_b32`: ({S0, S1} >> S2[4:0])[31:0]; a uniform shift (the
/// usual constant, as in rotates) is hoisted out of the lane loop.
pub fn v_alignbit_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    match uniform32(c, op, 2) {
        Some(s) => {
            let s = s & 31;
            let r = {
                let (ta, tb);
                let a = src32!(c, op, 0, ta);
                let b = src32!(c, op, 1, tb);
                let mut r = [0u32; 64];
                for l in 0..64 {
                    // Two 32-bit shifts; the high part's shift of 32 for
                    // s = 0 becomes a 64-bit shift that leaves nothing.
                    r[l] = (b[l] >> s) | ((u64::from(a[l]) << (32 - s)) as u32);
                }
                r
            };
            write_b32(c, op, &r);
            Ok(())
        }
        None => super::int::map3(c, op, |a, b, d| {
            ((u64::from(a) << 32 | u64::from(b)) >> (d & 31)) as u32
        }),
    }
}
lanes32!(v_alignbyte_b32, |a, b, d| {
    ((u64::from(a) << 32 | u64::from(b)) >> (8 * (d & 3))) as u32
});

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

/// One byte of a `v_perm_b32` selector as `((data >> shift) & mask) *
/// mul | or` over the eight bytes `data` = {S0, S1} (S1 the low dword):
/// 0-7 a byte, 8-11 the sign of byte 1, 3, 5 or 7 replicated, 12 zero,
/// 13-255 0xff.
#[derive(Copy, Clone)]
struct PermByte {
    shift: u32,
    mask: u64,
    mul: u64,
    or: u64,
}

#[inline(always)]
fn perm_byte(sel: u32) -> PermByte {
    match sel & 0xff {
        s @ 0..=7 => PermByte {
            shift: 8 * s,
            mask: 0xff,
            mul: 1,
            or: 0,
        },
        s @ 8..=11 => PermByte {
            shift: 16 * (s - 8) + 15,
            mask: 1,
            mul: 0xff,
            or: 0,
        },
        12 => PermByte {
            shift: 0,
            mask: 0,
            mul: 0,
            or: 0,
        },
        _ => PermByte {
            shift: 0,
            mask: 0,
            mul: 0,
            or: 0xff,
        },
    }
}

#[inline(always)]
fn perm_apply(bytes: &[PermByte; 4], s0: u32, s1: u32) -> u32 {
    let data = u64::from(s0) << 32 | u64::from(s1);
    let mut r = 0u64;
    for (k, b) in bytes.iter().enumerate() {
        r |= ((((data >> b.shift) & b.mask) * b.mul) | b.or) << (8 * k);
    }
    r as u32
}

/// `v_perm_b32`: each result byte chosen from the bytes of {S0, S1} by the
/// corresponding byte of S2 (see [`perm_byte`]). A uniform selector (the
/// usual case) is decoded once for all lanes.
pub fn v_perm_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let uniform = uniform32(c, op, 2);
    let r: Lanes = {
        let (ta, tb);
        let a = src32!(c, op, 0, ta);
        let b = src32!(c, op, 1, tb);
        match uniform {
            Some(sel) => perm_uniform(sel, a, b),
            None => {
                let d = b32(c, op, 2);
                std::array::from_fn(|l| {
                    let bytes = std::array::from_fn(|k| perm_byte(d[l] >> (8 * k)));
                    perm_apply(&bytes, a[l], b[l])
                })
            }
        }
    };
    write_b32(c, op, &r);
    Ok(())
}

/// `v_perm_b32` with the same selector in every lane: one pass over the
/// lanes per result byte, with the byte's source dword and shift fixed.
#[inline(always)]
fn perm_uniform(sel: u32, a: &Lanes, b: &Lanes) -> Lanes {
    let mut r = [0u32; 64];
    for k in 0..4 {
        let p = perm_byte(sel >> (8 * k));
        let src = if p.shift >= 32 { a } else { b };
        let (sh, mask, or, at) = (p.shift & 31, p.mask as u32, p.or as u32, 8 * k);
        if p.mul == 1 {
            for l in 0..64 {
                r[l] |= (((src[l] >> sh) & mask) | or) << at;
            }
        } else {
            // Sign replication: 0 or 0xff from one bit.
            for l in 0..64 {
                r[l] |= ((((src[l] >> sh) & mask).wrapping_neg() & 0xff) | or) << at;
            }
        }
    }
    r
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
lanes32!(
    v_maxmin_i32,
    |a, b, d| (a as i32).max(b as i32).min(d as i32) as u32
);
lanes32!(
    v_minmax_i32,
    |a, b, d| (a as i32).min(b as i32).max(d as i32) as u32
);
lanes32!(v_maxmin_u32, |a, b, d| a.max(b).min(d));
lanes32!(v_minmax_u32, |a, b, d| a.min(b).max(d));
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

#[cfg(test)]
mod tests {
    use crate::exec::valu::test_util::*;
    use rocjitsu_isa::Target::{Gfx90a, Gfx942, Gfx950};

    #[test]
    fn logic() {
        op3(Gfx942, "v_and_b32 v3, v0, v1", |a, b, _| a & b);
        op3(Gfx942, "v_or_b32 v3, v0, v1", |a, b, _| a | b);
        op3(Gfx942, "v_xor_b32 v3, v0, v1", |a, b, _| a ^ b);
        op3(Gfx942, "v_xnor_b32 v3, v0, v1", |a, b, _| !(a ^ b));
        op3(Gfx942, "v_not_b32 v3, v0", |a, _, _| a ^ 0xffff_ffff);
        op3(Gfx942, "v_and_or_b32 v3, v0, v1, v2", |a, b, c| (a & b) | c);
        op3(Gfx942, "v_or3_b32 v3, v0, v1, v2", |a, b, c| a | b | c);
        op3(Gfx942, "v_lshl_or_b32 v3, v0, v1, v2", |a, b, c| {
            ((u64::from(a) << (b % 32)) as u32) | c
        });
        op3(Gfx90a, "v_and_b32 v3, 0x7f, v1", |_, b, _| b & 0x7f);
    }

    #[test]
    fn bitop3_truth_tables() {
        // Bit i of the result indexes the table by {S0[i], S1[i], S2[i]}.
        for t in [0xf0u32, 0xcc, 0xaa, 0x96, 0xe8, 0x01, 0x80, 0x5c] {
            let f = move |a: u32, b: u32, c: u32| {
                (0..32).fold(0, |r, i| {
                    let k = (a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1);
                    r | ((t >> k & 1) << i)
                })
            };
            op3(
                Gfx950,
                &format!("v_bitop3_b32 v3, v0, v1, v2 bitop3:0x{t:x}"),
                f,
            );
            op3(
                Gfx950,
                &format!("v_bitop3_b16 v3, v0, v1, v2 bitop3:0x{t:x}"),
                move |a, b, c| f(a, b, c) & 0xffff,
            );
        }
    }

    #[test]
    fn shifts() {
        op3(Gfx942, "v_lshlrev_b32 v3, v0, v1", |a, b, _| {
            (u64::from(b) << (a % 32)) as u32
        });
        op3(Gfx942, "v_lshrrev_b32 v3, v0, v1", |a, b, _| {
            b / (1u32 << (a % 32))
        });
        op3(Gfx942, "v_ashrrev_i32 v3, v0, v1", |a, b, _| {
            (i64::from(b as i32) >> (a % 32)) as u32
        });
        // Uniform amounts (constants), including ones past 31.
        for k in [0u32, 1, 7, 31, 33, 64] {
            op3(
                Gfx942,
                &format!("v_lshlrev_b32 v3, {k}, v1"),
                move |_, b, _| (u64::from(b) << (k % 32)) as u32,
            );
            op3(
                Gfx942,
                &format!("v_lshrrev_b32 v3, {k}, v1"),
                move |_, b, _| b / (1u32 << (k % 32)),
            );
            op3(
                Gfx942,
                &format!("v_ashrrev_i32 v3, {k}, v1"),
                move |_, b, _| (i64::from(b as i32) >> (k % 32)) as u32,
            );
        }
        op3(Gfx942, "v_lshlrev_b16 v3, v0, v1", |a, b, _| {
            ((b & 0xffff) << (a % 16)) & 0xffff
        });
        op3(Gfx942, "v_lshrrev_b16 v3, v0, v1", |a, b, _| {
            (b & 0xffff) >> (a % 16)
        });
        op3(Gfx942, "v_ashrrev_i16 v3, v0, v1", |a, b, _| {
            ((i32::from(b as u16 as i16) >> (a % 16)) as u32) & 0xffff
        });
        let (a, b, c) = (vals(0), vals(1), vals(2));
        let r = exec(
            Gfx942,
            "v_lshlrev_b64 v[4:5], v0, v[2:3]\n\
             v_lshrrev_b64 v[6:7], v0, v[2:3]\n\
             v_ashrrev_i64 v[8:9], v0, v[2:3]\n\
             v_lshlrev_b64 v[10:11], 33, v[2:3]",
            |w| {
                (w.v[0], w.v[2], w.v[3]) = (a, b, c);
            },
        );
        for l in 0..64 {
            let x = u128::from(b[l]) | u128::from(c[l]) << 32;
            let s = a[l] % 64;
            assert_eq!(
                pair(&r.wave, 4, l),
                ((x << s) & u128::from(u64::MAX)) as u64
            );
            assert_eq!(pair(&r.wave, 6, l), (x >> s) as u64);
            assert_eq!(pair(&r.wave, 8, l), ((x as u64 as i64 as i128) >> s) as u64);
            assert_eq!(pair(&r.wave, 10, l), (x << 33) as u64);
        }
    }

    #[test]
    fn bit_counts() {
        let ffbh = |x: u32| {
            (0..32)
                .find(|&i| x >> (31 - i) & 1 != 0)
                .unwrap_or(u32::MAX)
        };
        op3(Gfx942, "v_bfrev_b32 v3, v0", |a, _, _| {
            (0..32).fold(0, |r, i| r | ((a >> i & 1) << (31 - i)))
        });
        op3(Gfx942, "v_ffbh_u32 v3, v0", move |a, _, _| ffbh(a));
        op3(Gfx942, "v_ffbl_b32 v3, v0", |a, _, _| {
            (0..32).find(|&i| a >> i & 1 != 0).unwrap_or(u32::MAX)
        });
        op3(Gfx942, "v_ffbh_i32 v3, v0", |a, _, _| {
            let sign = a >> 31;
            (1..32)
                .find(|&i| a >> (31 - i) & 1 != sign)
                .unwrap_or(u32::MAX)
        });
        let pop = |x: u32| (0..32).filter(|&i| x >> i & 1 != 0).count() as u32;
        op3(Gfx942, "v_bcnt_u32_b32 v3, v0, v1", move |a, b, _| {
            pop(a).wrapping_add(b)
        });
        op3(Gfx942, "v_bfm_b32 v3, v0, v1", |a, b, _| {
            (0..(a % 32)).fold(0u64, |r, i| r | (1 << (i + b % 32))) as u32
        });
    }

    #[test]
    fn mbcnt_counts_lanes_below() {
        let (a, b, old) = (vals(0), vals(1), vals(3));
        let mask = 0x8421_f00f_0ff0_1234u64;
        let r = exec(
            Gfx942,
            "v_mbcnt_lo_u32_b32 v3, s4, v1\nv_mbcnt_hi_u32_b32 v3, s5, v3\n\
             v_mbcnt_lo_u32_b32 v4, -1, 0\nv_mbcnt_hi_u32_b32 v4, -1, v4",
            |w| {
                (w.v[0], w.v[1], w.v[3]) = (a, b, old);
                w.s[4] = mask as u32;
                w.s[5] = (mask >> 32) as u32;
                w.set_exec(EXEC);
            },
        );
        check("mbcnt", &r.wave.v[3], &old, EXEC, |l| {
            let n = (0..l).filter(|&i| mask >> i & 1 != 0).count() as u32;
            b[l].wrapping_add(n)
        });
        check("mbcnt lane id", &r.wave.v[4], &[0; 64], EXEC, |l| l as u32);
    }

    #[test]
    fn bit_fields_and_byte_permutes() {
        let field = |x: u32, o: u32, w: u32| ((u64::from(x) >> o) & ((1u64 << w) - 1)) as u32;
        op3(Gfx942, "v_bfe_u32 v3, v0, v1, v2", move |a, b, c| {
            field(a, b % 32, c % 32)
        });
        op3(Gfx942, "v_bfe_i32 v3, v0, v1, v2", move |a, b, c| {
            let (o, w) = (b % 32, c % 32);
            if w == 0 {
                return 0;
            }
            // Bits above 31 of the source are copies of the sign.
            let x = (i64::from(a as i32) >> o) as u64 & ((1u64 << w) - 1);
            let signed = if x >> (w - 1) & 1 != 0 {
                x as i64 - (1i64 << w)
            } else {
                x as i64
            };
            signed as u32
        });
        op3(Gfx942, "v_bfe_u32 v3, v0, 8, 4", move |a, _, _| {
            field(a, 8, 4)
        });
        op3(Gfx942, "v_bfi_b32 v3, v0, v1, v2", |a, b, c| {
            (a & b) | (!a & c)
        });
        op3(Gfx942, "v_alignbit_b32 v3, v0, v1, v2", |a, b, c| {
            ((u128::from(a) << 32 | u128::from(b)) >> (c % 32)) as u32
        });
        for k in [0u32, 1, 29, 31, 32, 45] {
            op3(
                Gfx942,
                &format!("v_alignbit_b32 v3, v0, v1, {k}"),
                move |a, b, _| ((u128::from(a) << 32 | u128::from(b)) >> (k % 32)) as u32,
            );
        }
        op3(Gfx942, "v_alignbyte_b32 v3, v0, v1, v2", |a, b, c| {
            ((u128::from(a) << 32 | u128::from(b)) >> (8 * (c % 4))) as u32
        });
        let perm = |a: u32, b: u32, sel: u32| {
            let bytes: Vec<u8> = b.to_le_bytes().into_iter().chain(a.to_le_bytes()).collect();
            let mut out = [0u8; 4];
            for (k, o) in out.iter_mut().enumerate() {
                let s = sel.to_le_bytes()[k] as usize;
                *o = match s {
                    0..=7 => bytes[s],
                    8..=11 => {
                        if bytes[2 * (s - 8) + 1] & 0x80 != 0 {
                            0xff
                        } else {
                            0
                        }
                    }
                    12 => 0,
                    _ => 0xff,
                };
            }
            u32::from_le_bytes(out)
        };
        op3(Gfx942, "v_perm_b32 v3, v0, v1, v2", perm);
        // Every selector value in some byte (the selector in an SGPR).
        let (a, b) = (vals(0), vals(1));
        for base in (0..256u32).step_by(4) {
            let sel = base | (base + 1) << 8 | (base + 2) << 16 | (base + 3) << 24;
            let r = exec(Gfx942, "v_perm_b32 v3, v0, v1, s4", |w| {
                (w.v[0], w.v[1]) = (a, b);
                w.s[4] = sel;
            });
            check(
                "v_perm_b32 selectors",
                &r.wave.v[3],
                &[0; 64],
                u64::MAX,
                |l| perm(a[l], b[l], sel),
            );
        }
    }

    #[test]
    fn min_max_med() {
        let i = |x: u32| x as i32;
        let med = |mut v: [i64; 3]| {
            v.sort();
            v[1]
        };
        op3(Gfx942, "v_min_i32 v3, v0, v1", move |a, b, _| {
            if i(a) < i(b) { a } else { b }
        });
        op3(Gfx942, "v_max_i32 v3, v0, v1", move |a, b, _| {
            if i(a) > i(b) { a } else { b }
        });
        op3(
            Gfx942,
            "v_min_u32 v3, v0, v1",
            |a, b, _| if a < b { a } else { b },
        );
        op3(
            Gfx942,
            "v_max_u32 v3, v0, v1",
            |a, b, _| if a > b { a } else { b },
        );
        op3(Gfx942, "v_min3_i32 v3, v0, v1, v2", move |a, b, c| {
            [a, b, c].into_iter().min_by_key(|&x| i(x)).unwrap_or(0)
        });
        op3(Gfx942, "v_max3_u32 v3, v0, v1, v2", |a, b, c| {
            a.max(b).max(c)
        });
        op3(Gfx942, "v_min3_u32 v3, v0, v1, v2", |a, b, c| {
            a.min(b).min(c)
        });
        op3(Gfx942, "v_max3_i32 v3, v0, v1, v2", move |a, b, c| {
            [a, b, c].into_iter().max_by_key(|&x| i(x)).unwrap_or(0)
        });
        op3(Gfx942, "v_med3_i32 v3, v0, v1, v2", move |a, b, c| {
            med([i(a).into(), i(b).into(), i(c).into()]) as u32
        });
        op3(Gfx942, "v_med3_u32 v3, v0, v1, v2", move |a, b, c| {
            med([a.into(), b.into(), c.into()]) as u32
        });
        let h = |x: u32| i64::from(x as u16 as i16);
        let hu = |x: u32| i64::from(x as u16);
        let lo = |x: i64| (x as u32) & 0xffff;
        op3(Gfx942, "v_min_i16 v3, v0, v1", move |a, b, _| {
            lo(h(a).min(h(b)))
        });
        op3(Gfx942, "v_max_i16 v3, v0, v1", move |a, b, _| {
            lo(h(a).max(h(b)))
        });
        op3(Gfx942, "v_min_u16 v3, v0, v1", move |a, b, _| {
            lo(hu(a).min(hu(b)))
        });
        op3(Gfx942, "v_max_u16 v3, v0, v1", move |a, b, _| {
            lo(hu(a).max(hu(b)))
        });
        op3(Gfx942, "v_med3_i16 v3, v0, v1, v2", move |a, b, c| {
            lo(med([h(a), h(b), h(c)]))
        });
        op3(Gfx942, "v_med3_u16 v3, v0, v1, v2", move |a, b, c| {
            lo(med([hu(a), hu(b), hu(c)]))
        });
        op3(Gfx942, "v_min3_i16 v3, v0, v1, v2", move |a, b, c| {
            lo(h(a).min(h(b)).min(h(c)))
        });
        op3(Gfx942, "v_max3_u16 v3, v0, v1, v2", move |a, b, c| {
            lo(hu(a).max(hu(b)).max(hu(c)))
        });
        // op_sel picks high halves of the sources.
        op3(
            Gfx942,
            "v_max3_i16 v3, v0, v1, v2 op_sel:[1,1,0,0]",
            move |a, b, c| lo(h(a >> 16).max(h(b >> 16)).max(h(c))),
        );
    }

    #[test]
    fn saturating_packs() {
        let sat = |x: i64, lo: i64, hi: i64| (x.clamp(lo, hi) as u32) & 0xff;
        op3(Gfx942, "v_sat_pk_u8_i16 v3, v0", move |a, _, _| {
            sat(i64::from(a as u16 as i16), 0, 255)
                | sat(i64::from((a >> 16) as u16 as i16), 0, 255) << 8
        });
        for (name, lo, hi) in [
            ("v_ashr_pk_i8_i32", -128, 127),
            ("v_ashr_pk_u8_i32", 0, 255),
        ] {
            op3(Gfx950, &format!("{name} v3, v0, v1, v2"), move |a, b, c| {
                let f = |x: u32| sat(i64::from(x as i32) >> (c % 32), lo, hi);
                f(a) | f(b) << 8
            });
        }
    }
}
