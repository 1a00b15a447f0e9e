//! Scalar arithmetic, bit-manipulation and compare operations (SOP2, SOP1,
//! SOPC, SOPK), per the ISA manual's pseudo-code.

use super::{s32, s64};
use crate::exec::op::{Ctx, ExecFn, Fault, Op};

/// The semantic function of an arithmetic / bit / compare mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        // SOP2
        "s_add_u32" => s_add_u32,
        "s_sub_u32" => s_sub_u32,
        "s_add_i32" => s_add_i32,
        "s_sub_i32" => s_sub_i32,
        "s_addc_u32" => s_addc_u32,
        "s_subb_u32" => s_subb_u32,
        "s_min_i32" => s_min_i32,
        "s_min_u32" => s_min_u32,
        "s_max_i32" => s_max_i32,
        "s_max_u32" => s_max_u32,
        "s_cselect_b32" => s_cselect_b32,
        "s_cselect_b64" => s_cselect_b64,
        "s_and_b32" => s_and_b32,
        "s_and_b64" => s_and_b64,
        "s_or_b32" => s_or_b32,
        "s_or_b64" => s_or_b64,
        "s_xor_b32" => s_xor_b32,
        "s_xor_b64" => s_xor_b64,
        "s_andn2_b32" => s_andn2_b32,
        "s_andn2_b64" => s_andn2_b64,
        "s_orn2_b32" => s_orn2_b32,
        "s_orn2_b64" => s_orn2_b64,
        "s_nand_b32" => s_nand_b32,
        "s_nand_b64" => s_nand_b64,
        "s_nor_b32" => s_nor_b32,
        "s_nor_b64" => s_nor_b64,
        "s_xnor_b32" => s_xnor_b32,
        "s_xnor_b64" => s_xnor_b64,
        "s_lshl_b32" => s_lshl_b32,
        "s_lshl_b64" => s_lshl_b64,
        "s_lshr_b32" => s_lshr_b32,
        "s_lshr_b64" => s_lshr_b64,
        "s_ashr_i32" => s_ashr_i32,
        "s_ashr_i64" => s_ashr_i64,
        "s_bfm_b32" => s_bfm_b32,
        "s_bfm_b64" => s_bfm_b64,
        "s_mul_i32" => s_mul_i32,
        "s_bfe_u32" => s_bfe_u32,
        "s_bfe_i32" => s_bfe_i32,
        "s_bfe_u64" => s_bfe_u64,
        "s_bfe_i64" => s_bfe_i64,
        "s_absdiff_i32" => s_absdiff_i32,
        "s_mul_hi_u32" => s_mul_hi_u32,
        "s_mul_hi_i32" => s_mul_hi_i32,
        "s_lshl1_add_u32" => s_lshl_add_u32::<1>,
        "s_lshl2_add_u32" => s_lshl_add_u32::<2>,
        "s_lshl3_add_u32" => s_lshl_add_u32::<3>,
        "s_lshl4_add_u32" => s_lshl_add_u32::<4>,
        "s_pack_ll_b32_b16" => s_pack_ll_b32_b16,
        "s_pack_lh_b32_b16" => s_pack_lh_b32_b16,
        "s_pack_hh_b32_b16" => s_pack_hh_b32_b16,
        // SOP1
        "s_mov_b32" => s_mov_b32,
        "s_mov_b64" => s_mov_b64,
        "s_cmov_b32" => s_cmov_b32,
        "s_cmov_b64" => s_cmov_b64,
        "s_not_b32" => s_not_b32,
        "s_not_b64" => s_not_b64,
        "s_wqm_b32" => s_wqm_b32,
        "s_wqm_b64" => s_wqm_b64,
        "s_brev_b32" => s_brev_b32,
        "s_brev_b64" => s_brev_b64,
        "s_bcnt0_i32_b32" => s_bcnt0_i32_b32,
        "s_bcnt0_i32_b64" => s_bcnt0_i32_b64,
        "s_bcnt1_i32_b32" => s_bcnt1_i32_b32,
        "s_bcnt1_i32_b64" => s_bcnt1_i32_b64,
        "s_ff0_i32_b32" => s_ff0_i32_b32,
        "s_ff0_i32_b64" => s_ff0_i32_b64,
        "s_ff1_i32_b32" => s_ff1_i32_b32,
        "s_ff1_i32_b64" => s_ff1_i32_b64,
        "s_flbit_i32_b32" => s_flbit_i32_b32,
        "s_flbit_i32_b64" => s_flbit_i32_b64,
        "s_flbit_i32" => s_flbit_i32,
        "s_flbit_i32_i64" => s_flbit_i32_i64,
        "s_sext_i32_i8" => s_sext_i32_i8,
        "s_sext_i32_i16" => s_sext_i32_i16,
        "s_bitset0_b32" => bitset32::<false>,
        "s_bitset0_b64" => bitset64::<false>,
        "s_bitset1_b32" => bitset32::<true>,
        "s_bitset1_b64" => bitset64::<true>,
        "s_quadmask_b32" => s_quadmask_b32,
        "s_quadmask_b64" => s_quadmask_b64,
        "s_abs_i32" => s_abs_i32,
        "s_bitreplicate_b64_b32" => s_bitreplicate_b64_b32,
        // SOPC
        "s_cmp_eq_i32" | "s_cmp_eq_u32" => s_cmp_eq_u32,
        "s_cmp_lg_i32" | "s_cmp_lg_u32" => s_cmp_lg_u32,
        "s_cmp_gt_i32" => s_cmp_gt_i32,
        "s_cmp_ge_i32" => s_cmp_ge_i32,
        "s_cmp_lt_i32" => s_cmp_lt_i32,
        "s_cmp_le_i32" => s_cmp_le_i32,
        "s_cmp_gt_u32" => s_cmp_gt_u32,
        "s_cmp_ge_u32" => s_cmp_ge_u32,
        "s_cmp_lt_u32" => s_cmp_lt_u32,
        "s_cmp_le_u32" => s_cmp_le_u32,
        "s_bitcmp0_b32" => s_bitcmp0_b32,
        "s_bitcmp1_b32" => s_bitcmp1_b32,
        "s_bitcmp0_b64" => s_bitcmp0_b64,
        "s_bitcmp1_b64" => s_bitcmp1_b64,
        "s_cmp_eq_u64" => s_cmp_eq_u64,
        "s_cmp_lg_u64" => s_cmp_lg_u64,
        // SOPK
        "s_movk_i32" => s_movk_i32,
        "s_cmovk_i32" => s_cmovk_i32,
        "s_cmpk_eq_i32" => s_cmpk_eq_i32,
        "s_cmpk_lg_i32" => s_cmpk_lg_i32,
        "s_cmpk_gt_i32" => s_cmpk_gt_i32,
        "s_cmpk_ge_i32" => s_cmpk_ge_i32,
        "s_cmpk_lt_i32" => s_cmpk_lt_i32,
        "s_cmpk_le_i32" => s_cmpk_le_i32,
        "s_cmpk_eq_u32" => s_cmpk_eq_u32,
        "s_cmpk_lg_u32" => s_cmpk_lg_u32,
        "s_cmpk_gt_u32" => s_cmpk_gt_u32,
        "s_cmpk_ge_u32" => s_cmpk_ge_u32,
        "s_cmpk_lt_u32" => s_cmpk_lt_u32,
        "s_cmpk_le_u32" => s_cmpk_le_u32,
        "s_addk_i32" => s_addk_i32,
        "s_mulk_i32" => s_mulk_i32,
        _ => return None,
    })
}

/// Two sources; writes `sdst` and SCC: the body gives `(d, scc)` from the
/// sources and the incoming SCC.
macro_rules! sop2_scc {
    ($name:ident, $ra:ident, $rb:ident, $set:ident, |$a:ident, $b:ident, $scc:ident| $body:expr) => {
        fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let $a = $ra(c, op, 0);
            let $b = $rb(c, op, 1);
            let $scc = c.wave.scc;
            let (d, s) = $body;
            c.wave.$set(op.sdst, d);
            c.wave.scc = s;
            Ok(())
        }
    };
}

/// Two sources; writes `sdst` and SCC = (result != 0).
macro_rules! sop2_nz {
    ($name:ident, $ra:ident, $rb:ident, $set:ident, |$a:ident, $b:ident| $body:expr) => {
        fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let $a = $ra(c, op, 0);
            let $b = $rb(c, op, 1);
            let d = $body;
            c.wave.$set(op.sdst, d);
            c.wave.scc = d != 0;
            Ok(())
        }
    };
}

/// Two sources; writes `sdst` only.
macro_rules! sop2 {
    ($name:ident, $ra:ident, $rb:ident, $set:ident, |$a:ident, $b:ident| $body:expr) => {
        fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let $a = $ra(c, op, 0);
            let $b = $rb(c, op, 1);
            let d = $body;
            c.wave.$set(op.sdst, d);
            Ok(())
        }
    };
}

/// One source; writes `sdst` and SCC = (result != 0).
macro_rules! sop1_nz {
    ($name:ident, $ra:ident, $set:ident, |$a:ident| $body:expr) => {
        fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let $a = $ra(c, op, 0);
            let d = $body;
            c.wave.$set(op.sdst, d);
            c.wave.scc = d != 0;
            Ok(())
        }
    };
}

/// One source; writes `sdst` only.
macro_rules! sop1 {
    ($name:ident, $ra:ident, $set:ident, |$a:ident| $body:expr) => {
        fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let $a = $ra(c, op, 0);
            let d = $body;
            c.wave.$set(op.sdst, d);
            Ok(())
        }
    };
}

/// A compare: SCC = predicate of the two sources.
macro_rules! sopc {
    ($name:ident, $ra:ident, $rb:ident, |$a:ident, $b:ident| $body:expr) => {
        fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let $a = $ra(c, op, 0);
            let $b = $rb(c, op, 1);
            c.wave.scc = $body;
            Ok(())
        }
    };
}

/// A SOPK compare of the register named by `sdst` with the immediate,
/// sign-extended (`i32`) or zero-extended (`u32`).
macro_rules! sopk_cmp {
    ($name:ident, i32, $cmp:tt) => {
        fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            c.wave.scc = (c.wave.s32(op.sdst) as i32) $cmp (op.imm as i16 as i32);
            Ok(())
        }
    };
    ($name:ident, u32, $cmp:tt) => {
        fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            c.wave.scc = c.wave.s32(op.sdst) $cmp u32::from(op.imm as u16);
            Ok(())
        }
    };
}

// ---------------------------------------------------------------------------
// SOP2: add/sub with carry, min/max, select.

sop2_scc!(s_add_u32, s32, s32, set_s32, |a, b, _scc| a
    .overflowing_add(b));
sop2_scc!(s_sub_u32, s32, s32, set_s32, |a, b, _scc| a
    .overflowing_sub(b));
sop2_scc!(s_add_i32, s32, s32, set_s32, |a, b, _scc| {
    let (d, o) = (a as i32).overflowing_add(b as i32);
    (d as u32, o)
});
sop2_scc!(s_sub_i32, s32, s32, set_s32, |a, b, _scc| {
    let (d, o) = (a as i32).overflowing_sub(b as i32);
    (d as u32, o)
});
sop2_scc!(s_addc_u32, s32, s32, set_s32, |a, b, scc| {
    let t = u64::from(a) + u64::from(b) + u64::from(scc);
    (t as u32, t >> 32 != 0)
});
sop2_scc!(s_subb_u32, s32, s32, set_s32, |a, b, scc| {
    let d = a.wrapping_sub(b).wrapping_sub(u32::from(scc));
    (d, u64::from(b) + u64::from(scc) > u64::from(a))
});
// SCC is set iff the first source is selected; the manual's maximum selects
// the first source when the two are equal.
sop2_scc!(s_min_i32, s32, s32, set_s32, |a, b, _scc| {
    let s = (a as i32) < (b as i32);
    (if s { a } else { b }, s)
});
sop2_scc!(s_min_u32, s32, s32, set_s32, |a, b, _scc| {
    let s = a < b;
    (if s { a } else { b }, s)
});
sop2_scc!(s_max_i32, s32, s32, set_s32, |a, b, _scc| {
    let s = (a as i32) >= (b as i32);
    (if s { a } else { b }, s)
});
sop2_scc!(s_max_u32, s32, s32, set_s32, |a, b, _scc| {
    let s = a >= b;
    (if s { a } else { b }, s)
});

fn s_cselect_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = s32(c, op, if c.wave.scc { 0 } else { 1 });
    c.wave.set_s32(op.sdst, v);
    Ok(())
}

fn s_cselect_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = s64(c, op, if c.wave.scc { 0 } else { 1 });
    c.wave.set_s64(op.sdst, v);
    Ok(())
}

// ---------------------------------------------------------------------------
// SOP2: bitwise logic and shifts (SCC = result != 0).

sop2_nz!(s_and_b32, s32, s32, set_s32, |a, b| a & b);
sop2_nz!(s_and_b64, s64, s64, set_s64, |a, b| a & b);
sop2_nz!(s_or_b32, s32, s32, set_s32, |a, b| a | b);
sop2_nz!(s_or_b64, s64, s64, set_s64, |a, b| a | b);
sop2_nz!(s_xor_b32, s32, s32, set_s32, |a, b| a ^ b);
sop2_nz!(s_xor_b64, s64, s64, set_s64, |a, b| a ^ b);
sop2_nz!(s_andn2_b32, s32, s32, set_s32, |a, b| a & !b);
sop2_nz!(s_andn2_b64, s64, s64, set_s64, |a, b| a & !b);
sop2_nz!(s_orn2_b32, s32, s32, set_s32, |a, b| a | !b);
sop2_nz!(s_orn2_b64, s64, s64, set_s64, |a, b| a | !b);
sop2_nz!(s_nand_b32, s32, s32, set_s32, |a, b| !(a & b));
sop2_nz!(s_nand_b64, s64, s64, set_s64, |a, b| !(a & b));
sop2_nz!(s_nor_b32, s32, s32, set_s32, |a, b| !(a | b));
sop2_nz!(s_nor_b64, s64, s64, set_s64, |a, b| !(a | b));
sop2_nz!(s_xnor_b32, s32, s32, set_s32, |a, b| !(a ^ b));
sop2_nz!(s_xnor_b64, s64, s64, set_s64, |a, b| !(a ^ b));
sop2_nz!(s_lshl_b32, s32, s32, set_s32, |a, b| a << (b & 31));
sop2_nz!(s_lshl_b64, s64, s32, set_s64, |a, b| a << (b & 63));
sop2_nz!(s_lshr_b32, s32, s32, set_s32, |a, b| a >> (b & 31));
sop2_nz!(s_lshr_b64, s64, s32, set_s64, |a, b| a >> (b & 63));
sop2_nz!(
    s_ashr_i32,
    s32,
    s32,
    set_s32,
    |a, b| ((a as i32) >> (b & 31)) as u32
);
sop2_nz!(
    s_ashr_i64,
    s64,
    s32,
    set_s64,
    |a, b| ((a as i64) >> (b & 63)) as u64
);

// ---------------------------------------------------------------------------
// SOP2: bit fields, multiplies, shift-add, pack.

/// `(1 << n) - 1` for a field width `n` (all ones from 32 up).
#[inline]
fn mask32(n: u32) -> u32 {
    if n >= 32 { u32::MAX } else { (1 << n) - 1 }
}

/// `(1 << n) - 1` for a field width `n` (all ones from 64 up).
#[inline]
fn mask64(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1 << n) - 1 }
}

/// The field width of `s_bfe_*`: bits 22:16 of the second source.
#[inline]
fn bfe_width(b: u32) -> u32 {
    (b >> 16) & 0x7f
}

/// Sign-extends the low `n` bits of `v` (`n` = 0 gives 0; `n` >= 32 keeps
/// `v`).
#[inline]
fn sext_from32(v: u32, n: u32) -> u32 {
    match n {
        0 => 0,
        1..=31 => (((v << (32 - n)) as i32) >> (32 - n)) as u32,
        _ => v,
    }
}

/// As [`sext_from32`] for 64-bit values.
#[inline]
fn sext_from64(v: u64, n: u32) -> u64 {
    match n {
        0 => 0,
        1..=63 => (((v << (64 - n)) as i64) >> (64 - n)) as u64,
        _ => v,
    }
}

sop2!(s_bfm_b32, s32, s32, set_s32, |a, b| mask32(a & 31)
    << (b & 31));
sop2!(s_bfm_b64, s32, s32, set_s64, |a, b| mask64(a & 63)
    << (b & 63));
sop2!(s_mul_i32, s32, s32, set_s32, |a, b| a.wrapping_mul(b));
sop2_nz!(s_bfe_u32, s32, s32, set_s32, |a, b| (a >> (b & 31))
    & mask32(bfe_width(b)));
sop2_nz!(s_bfe_i32, s32, s32, set_s32, |a, b| {
    let w = bfe_width(b);
    sext_from32((((a as i32) >> (b & 31)) as u32) & mask32(w), w)
});
sop2_nz!(s_bfe_u64, s64, s32, set_s64, |a, b| (a >> (b & 63))
    & mask64(bfe_width(b)));
sop2_nz!(s_bfe_i64, s64, s32, set_s64, |a, b| {
    let w = bfe_width(b);
    sext_from64((((a as i64) >> (b & 63)) as u64) & mask64(w), w)
});
sop2_nz!(
    s_absdiff_i32,
    s32,
    s32,
    set_s32,
    |a, b| (a.wrapping_sub(b) as i32).wrapping_abs() as u32
);
sop2!(
    s_mul_hi_u32,
    s32,
    s32,
    set_s32,
    |a, b| ((u64::from(a) * u64::from(b)) >> 32) as u32
);
sop2!(
    s_mul_hi_i32,
    s32,
    s32,
    set_s32,
    |a, b| ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32
);
sop2!(s_pack_ll_b32_b16, s32, s32, set_s32, |a, b| (a & 0xffff)
    | (b << 16));
sop2!(s_pack_lh_b32_b16, s32, s32, set_s32, |a, b| (a & 0xffff)
    | (b & 0xffff_0000));
sop2!(s_pack_hh_b32_b16, s32, s32, set_s32, |a, b| (a >> 16)
    | (b & 0xffff_0000));

/// `s_lshl{N}_add_u32`: `(S0 << N) + S1` computed in 64 bits; SCC is the
/// carry out of the whole (shifted-out bits included).
fn s_lshl_add_u32<const N: u32>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = (u64::from(s32(c, op, 0)) << N) + u64::from(s32(c, op, 1));
    c.wave.set_s32(op.sdst, t as u32);
    c.wave.scc = t >> 32 != 0;
    Ok(())
}

// ---------------------------------------------------------------------------
// SOP1.

sop1!(s_mov_b32, s32, set_s32, |a| a);
sop1!(s_mov_b64, s64, set_s64, |a| a);

fn s_cmov_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if c.wave.scc {
        let v = s32(c, op, 0);
        c.wave.set_s32(op.sdst, v);
    }
    Ok(())
}

fn s_cmov_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if c.wave.scc {
        let v = s64(c, op, 0);
        c.wave.set_s64(op.sdst, v);
    }
    Ok(())
}

sop1_nz!(s_not_b32, s32, set_s32, |a| !a);
sop1_nz!(s_not_b64, s64, set_s64, |a| !a);

/// Whole quad mode: each 4-bit group becomes all ones if any of its bits
/// is set.
#[inline]
fn wqm(v: u64) -> u64 {
    let any = v | (v >> 1) | (v >> 2) | (v >> 3);
    let q = any & 0x1111_1111_1111_1111;
    q * 0xf
}

/// Quad mask: bit i is set iff the 4-bit group i is nonzero.
#[inline]
fn quadmask(v: u64) -> u64 {
    let mut r = 0;
    for i in 0..16 {
        if (v >> (4 * i)) & 0xf != 0 {
            r |= 1 << i;
        }
    }
    r
}

sop1_nz!(s_wqm_b32, s32, set_s32, |a| wqm(u64::from(a)) as u32);
sop1_nz!(s_wqm_b64, s64, set_s64, |a| wqm(a));
sop1!(s_brev_b32, s32, set_s32, |a| a.reverse_bits());
sop1!(s_brev_b64, s64, set_s64, |a| a.reverse_bits());
sop1_nz!(s_bcnt0_i32_b32, s32, set_s32, |a| a.count_zeros());
sop1_nz!(s_bcnt0_i32_b64, s64, set_s32, |a| a.count_zeros());
sop1_nz!(s_bcnt1_i32_b32, s32, set_s32, |a| a.count_ones());
sop1_nz!(s_bcnt1_i32_b64, s64, set_s32, |a| a.count_ones());

/// A bit position, or -1 when there is none.
#[inline]
fn pos_or_neg1(found: bool, pos: u32) -> u32 {
    if found { pos } else { u32::MAX }
}

sop1!(s_ff0_i32_b32, s32, set_s32, |a| pos_or_neg1(
    a != u32::MAX,
    a.trailing_ones()
));
sop1!(s_ff0_i32_b64, s64, set_s32, |a| pos_or_neg1(
    a != u64::MAX,
    a.trailing_ones()
));
sop1!(s_ff1_i32_b32, s32, set_s32, |a| pos_or_neg1(
    a != 0,
    a.trailing_zeros()
));
sop1!(s_ff1_i32_b64, s64, set_s32, |a| pos_or_neg1(
    a != 0,
    a.trailing_zeros()
));
sop1!(s_flbit_i32_b32, s32, set_s32, |a| pos_or_neg1(
    a != 0,
    a.leading_zeros()
));
sop1!(s_flbit_i32_b64, s64, set_s32, |a| pos_or_neg1(
    a != 0,
    a.leading_zeros()
));
// Signed: the first bit from the MSB that differs from the sign bit.
sop1!(s_flbit_i32, s32, set_s32, |a| {
    let x = if (a as i32) < 0 { !a } else { a };
    pos_or_neg1(x != 0, x.leading_zeros())
});
sop1!(s_flbit_i32_i64, s64, set_s32, |a| {
    let x = if (a as i64) < 0 { !a } else { a };
    pos_or_neg1(x != 0, x.leading_zeros())
});
sop1!(s_sext_i32_i8, s32, set_s32, |a| a as i8 as i32 as u32);
sop1!(s_sext_i32_i16, s32, set_s32, |a| a as i16 as i32 as u32);

/// `s_bitset{0,1}_b32`: sets or clears bit S0[4:0] of the destination.
fn bitset32<const V: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let bit = 1u32 << (s32(c, op, 0) & 31);
    let d = c.wave.s32(op.sdst);
    c.wave.set_s32(op.sdst, if V { d | bit } else { d & !bit });
    Ok(())
}

/// `s_bitset{0,1}_b64`: sets or clears bit S0[5:0] of the destination.
fn bitset64<const V: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let bit = 1u64 << (s32(c, op, 0) & 63);
    let d = c.wave.s64(op.sdst);
    c.wave.set_s64(op.sdst, if V { d | bit } else { d & !bit });
    Ok(())
}

sop1_nz!(s_quadmask_b32, s32, set_s32, |a| quadmask(u64::from(a))
    as u32);
sop1_nz!(s_quadmask_b64, s64, set_s64, |a| quadmask(a));
sop1_nz!(s_abs_i32, s32, set_s32, |a| (a as i32).wrapping_abs()
    as u32);
sop1!(s_bitreplicate_b64_b32, s32, set_s64, |a| {
    let mut r = 0u64;
    for i in 0..32 {
        r |= u64::from((a >> i) & 1) * (3 << (2 * i));
    }
    r
});

// ---------------------------------------------------------------------------
// SOPC.

sopc!(s_cmp_eq_u32, s32, s32, |a, b| a == b);
sopc!(s_cmp_lg_u32, s32, s32, |a, b| a != b);
sopc!(s_cmp_gt_i32, s32, s32, |a, b| (a as i32) > (b as i32));
sopc!(s_cmp_ge_i32, s32, s32, |a, b| (a as i32) >= (b as i32));
sopc!(s_cmp_lt_i32, s32, s32, |a, b| (a as i32) < (b as i32));
sopc!(s_cmp_le_i32, s32, s32, |a, b| (a as i32) <= (b as i32));
sopc!(s_cmp_gt_u32, s32, s32, |a, b| a > b);
sopc!(s_cmp_ge_u32, s32, s32, |a, b| a >= b);
sopc!(s_cmp_lt_u32, s32, s32, |a, b| a < b);
sopc!(s_cmp_le_u32, s32, s32, |a, b| a <= b);
sopc!(s_bitcmp0_b32, s32, s32, |a, b| (a >> (b & 31)) & 1 == 0);
sopc!(s_bitcmp1_b32, s32, s32, |a, b| (a >> (b & 31)) & 1 == 1);
sopc!(s_bitcmp0_b64, s64, s32, |a, b| (a >> (b & 63)) & 1 == 0);
sopc!(s_bitcmp1_b64, s64, s32, |a, b| (a >> (b & 63)) & 1 == 1);
sopc!(s_cmp_eq_u64, s64, s64, |a, b| a == b);
sopc!(s_cmp_lg_u64, s64, s64, |a, b| a != b);

// ---------------------------------------------------------------------------
// SOPK.

fn s_movk_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    c.wave.set_s32(op.sdst, op.imm as i16 as i32 as u32);
    Ok(())
}

fn s_cmovk_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if c.wave.scc {
        c.wave.set_s32(op.sdst, op.imm as i16 as i32 as u32);
    }
    Ok(())
}

sopk_cmp!(s_cmpk_eq_i32, i32, ==);
sopk_cmp!(s_cmpk_lg_i32, i32, !=);
sopk_cmp!(s_cmpk_gt_i32, i32, >);
sopk_cmp!(s_cmpk_ge_i32, i32, >=);
sopk_cmp!(s_cmpk_lt_i32, i32, <);
sopk_cmp!(s_cmpk_le_i32, i32, <=);
sopk_cmp!(s_cmpk_eq_u32, u32, ==);
sopk_cmp!(s_cmpk_lg_u32, u32, !=);
sopk_cmp!(s_cmpk_gt_u32, u32, >);
sopk_cmp!(s_cmpk_ge_u32, u32, >=);
sopk_cmp!(s_cmpk_lt_u32, u32, <);
sopk_cmp!(s_cmpk_le_u32, u32, <=);

/// `s_addk_i32`: D += simm16 (sign-extended); SCC = signed overflow.
fn s_addk_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let d = c.wave.s32(op.sdst) as i32;
    let (r, o) = d.overflowing_add(i32::from(op.imm as i16));
    c.wave.set_s32(op.sdst, r as u32);
    c.wave.scc = o;
    Ok(())
}

/// `s_mulk_i32`: D *= simm16 (sign-extended); SCC unchanged.
fn s_mulk_i32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let d = c.wave.s32(op.sdst) as i32;
    c.wave
        .set_s32(op.sdst, d.wrapping_mul(i32::from(op.imm as i16)) as u32);
    Ok(())
}
