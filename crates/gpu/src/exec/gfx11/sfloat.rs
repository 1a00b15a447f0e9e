//! The scalar floating-point instructions of GFX11.5 (RDNA3.5: gfx1151;
//! LLVM's `FeatureSALUFloatInsts`): `s_add_f32` .. `s_fmac_f16` (SOP2),
//! `s_ceil_f32` .. `s_rndne_f16` and the `s_cvt_*` conversions (SOP1), and
//! the `s_cmp_*_f32` / `s_cmp_*_f16` compares (SOPC).
//!
//! The RDNA3.5 and RDNA4 ISA manuals ("SALU floating point") define these as
//! the VALU operations of the same name on one value: rounding and denormal
//! handling follow MODE as for the VALU, `s_cvt_hi_f32_f16` converts the
//! high half of its source, and only the compares write SCC. The emulator
//! therefore runs the VALU counterpart's semantic function on lane 0 of a
//! borrowed vector register (EXEC narrowed to that lane), so that the
//! scalar and vector forms cannot differ. The counterpart is lowered once
//! into [`Op::pair`]'s first op. A 16-bit result is written zero-extended
//! to the SGPR (the manuals give only the low half).

use super::super::op::{Ctx, Fault, Op};
use super::super::wave::Src;

/// What the scalar operation does with its VALU counterpart's result.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The counterpart's 32-bit (or zero-extended 16-bit) result is D.
    Value,
    /// A compare: the counterpart's lane-0 result bit is SCC.
    Compare,
}

/// How a GFX11.5 scalar float operation maps to its VALU counterpart: the
/// counterpart's GFX9 mnemonic, its source order (indices into
/// `[src0, src1, K or D]`, where K is the literal of `s_fmaak_f32` /
/// `s_fmamk_f32` and D the destination's old value for `s_fmac_*`), an
/// op_sel for the sources (`s_cvt_hi_f32_f16` reads the high half), and
/// the kind.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Counterpart {
    pub valu: &'static str,
    pub srcs: &'static [usize],
    pub opsel: u8,
    pub kind: Kind,
}

const UNARY: &[usize] = &[0];
const BINARY: &[usize] = &[0, 1];
/// `S0 * S1 + (K or D)`.
const FMA_LAST: &[usize] = &[0, 1, 2];
/// `S0 * K + S1` (`s_fmamk_f32`).
const FMA_MIDDLE: &[usize] = &[0, 2, 1];

/// The VALU counterpart of a GFX11.5 scalar float mnemonic, or `None` for
/// any other scalar operation.
pub fn counterpart(name: &str) -> Option<Counterpart> {
    let value = |valu, srcs| Counterpart {
        valu,
        srcs,
        opsel: 0,
        kind: Kind::Value,
    };
    Some(match name {
        "s_add_f32" => value("v_add_f32", BINARY),
        "s_sub_f32" => value("v_sub_f32", BINARY),
        "s_min_f32" => value("v_min_f32", BINARY),
        "s_max_f32" => value("v_max_f32", BINARY),
        "s_mul_f32" => value("v_mul_f32", BINARY),
        "s_fmaak_f32" | "s_fmac_f32" => value("v_fma_f32", FMA_LAST),
        "s_fmamk_f32" => value("v_fma_f32", FMA_MIDDLE),
        "s_cvt_pk_rtz_f16_f32" => value("v_cvt_pkrtz_f16_f32", BINARY),
        "s_add_f16" => value("v_add_f16", BINARY),
        "s_sub_f16" => value("v_sub_f16", BINARY),
        "s_min_f16" => value("v_min_f16", BINARY),
        "s_max_f16" => value("v_max_f16", BINARY),
        "s_mul_f16" => value("v_mul_f16", BINARY),
        "s_fmac_f16" => value("v_fma_f16", FMA_LAST),
        "s_ceil_f32" => value("v_ceil_f32", UNARY),
        "s_floor_f32" => value("v_floor_f32", UNARY),
        "s_trunc_f32" => value("v_trunc_f32", UNARY),
        "s_rndne_f32" => value("v_rndne_f32", UNARY),
        "s_cvt_f32_i32" => value("v_cvt_f32_i32", UNARY),
        "s_cvt_f32_u32" => value("v_cvt_f32_u32", UNARY),
        "s_cvt_i32_f32" => value("v_cvt_i32_f32", UNARY),
        "s_cvt_u32_f32" => value("v_cvt_u32_f32", UNARY),
        "s_cvt_f16_f32" => value("v_cvt_f16_f32", UNARY),
        "s_cvt_f32_f16" => value("v_cvt_f32_f16", UNARY),
        "s_cvt_hi_f32_f16" => Counterpart {
            opsel: 1,
            ..value("v_cvt_f32_f16", UNARY)
        },
        "s_ceil_f16" => value("v_ceil_f16", UNARY),
        "s_floor_f16" => value("v_floor_f16", UNARY),
        "s_trunc_f16" => value("v_trunc_f16", UNARY),
        "s_rndne_f16" => value("v_rndne_f16", UNARY),
        _ => {
            let rest = name.strip_prefix("s_cmp_")?;
            let valu = COMPARES
                .iter()
                .find(|v| v.strip_prefix("v_cmp_") == Some(rest))?;
            Counterpart {
                valu,
                srcs: BINARY,
                opsel: 0,
                kind: Kind::Compare,
            }
        }
    })
}

/// The VALU compares the scalar ones map to (`s_cmp_<pred>_<ty>` is
/// `v_cmp_<pred>_<ty>`; GFX11.5 has no `f`/`t` scalar predicates).
const COMPARES: &[&str] = &[
    "v_cmp_lt_f32",
    "v_cmp_eq_f32",
    "v_cmp_le_f32",
    "v_cmp_gt_f32",
    "v_cmp_lg_f32",
    "v_cmp_ge_f32",
    "v_cmp_o_f32",
    "v_cmp_u_f32",
    "v_cmp_nge_f32",
    "v_cmp_nlg_f32",
    "v_cmp_ngt_f32",
    "v_cmp_nle_f32",
    "v_cmp_neq_f32",
    "v_cmp_nlt_f32",
    "v_cmp_lt_f16",
    "v_cmp_eq_f16",
    "v_cmp_le_f16",
    "v_cmp_gt_f16",
    "v_cmp_lg_f16",
    "v_cmp_ge_f16",
    "v_cmp_o_f16",
    "v_cmp_u_f16",
    "v_cmp_nge_f16",
    "v_cmp_nlg_f16",
    "v_cmp_ngt_f16",
    "v_cmp_nle_f16",
    "v_cmp_neq_f16",
    "v_cmp_nlt_f16",
];

/// Lowers a scalar float operation `op` (its sources and destination
/// already resolved; `k` the literal K) onto its VALU counterpart:
/// `op.exec` becomes [`execute`] and `op.pair[0]` the counterpart reading
/// the scalar operands. `None` when the counterpart has no semantics.
pub fn lower(mut op: Op, name: &str, k: Option<u32>) -> Option<Op> {
    let cp = counterpart(name)?;
    let valu = super::super::valu::lookup(cp.valu)?;
    let operands = [
        op.src[0],
        op.src[1],
        match k {
            Some(k) => Src::Lit(k),
            None => Src::S(op.sdst),
        },
    ];
    let mut v = op.clone();
    v.exec = valu;
    v.src = [Src::None; 3];
    for (d, &s) in v.src.iter_mut().zip(cp.srcs) {
        *d = operands[s];
    }
    v.mods.opsel = cp.opsel;
    v.vdst = LANE_REG;
    v.sdst = MASK_REG;
    op.exec = match cp.kind {
        Kind::Value => execute::<false>,
        Kind::Compare => execute::<true>,
    };
    op.pair = Some(Box::new([v, op.clone()]));
    Some(op)
}

/// The vector register whose lane 0 receives a counterpart's value (saved
/// and restored around it).
const LANE_REG: u16 = 0;
/// The scalar register pair a compare counterpart writes its lane mask to
/// (saved and restored around it).
const MASK_REG: u8 = 0;

/// Runs the counterpart in `op.pair[0]` on lane 0 and writes its value to
/// the scalar destination, or (`CMP`) its compare bit to SCC. The borrowed
/// registers (lane 0 of v0, s0/s1) and EXEC are restored.
fn execute<const CMP: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let Some(pair) = &op.pair else {
        return Err(Fault::Invalid(format!(
            "{}: scalar float op without its VALU counterpart",
            op.name()
        )));
    };
    let v = &pair[0];
    let exec = c.wave.exec();
    let lane = c.wave.vreg(LANE_REG)[0];
    let mask = (c.wave.s32(MASK_REG), c.wave.s32(MASK_REG + 1));
    // The D of s_fmac_* is read by the counterpart before the borrowed
    // registers change, so a D of s0 still reads s0's value.
    c.wave.set_exec(1);
    if let Some(r) = c.wave.vreg_mut(LANE_REG) {
        r[0] = 0;
    }
    let ran = (v.exec)(c, v);
    let value = c.wave.vreg(LANE_REG)[0];
    let bit = c.wave.s32(MASK_REG) & 1 != 0;
    if let Some(r) = c.wave.vreg_mut(LANE_REG) {
        r[0] = lane;
    }
    c.wave.set_s32(MASK_REG, mask.0);
    c.wave.set_s32(MASK_REG + 1, mask.1);
    c.wave.set_exec(exec);
    ran?;
    if CMP {
        c.wave.scc = bit;
    } else {
        c.wave.set_s32(op.sdst, value);
    }
    Ok(())
}
