//! The matrix instructions' glue: lowering MFMA / SMFMAC operands to
//! register ranges and running them with [`crate::mfma`].
//!
//! Lowered form: `vdst` the first register of D (an AGPR when acc_cd, word
//! 0 bit 15, is set); `src[0]` / `src[1]` the first registers of A and B
//! (AGPRs when their acc bit, op_sel_hi[0] / [1], is set); `src[2]` the
//! first register of C (an AGPR with acc_cd), or an inline constant that
//! fills every element of C, or for SMFMAC the sparsity-index VGPR (C is
//! D). `mods.opsel` is CBSZ, `mods.opsel_hi` ABID, `mods.neg` BLGP (the
//! neg bits of the f64 forms). `imm` packs the operand widths in
//! registers: A in bits 7:0, B in 15:8, C/D in 23:16; bit 24 marks a gfx950
//! `v_mfma_scale_*` pair, whose scale operands (VGPRs of the
//! `v_mfma_ld_scale_b32` half, E8M0 byte chosen by op_sel | op_sel_hi << 1)
//! are read from `inst` when it executes.
//!
//! MFMA reads all 64 lanes of its operands and writes all 64 lanes of D:
//! it does not look at EXEC (compilers issue it with EXEC all ones).

use super::AGPR0;
use crate::exec::op::{Ctx, ExecFn, Fault, Mods, NO_VDST, Op, src_field};
use crate::exec::wave::Src;
use rocjitsu_isa::gfx9::vop3p::{Kind, Tail, Vop3p};
use rocjitsu_isa::{Inst, Target};

/// `imm` bit marking a scaled pair.
const SCALED: i64 = 1 << 24;

/// The inner MFMA of a gfx950 `v_mfma_scale_*` pair, without the abid
/// bit that marks the pair.
fn scaled_inner(v: &Vop3p) -> Option<Vop3p> {
    let Tail::Scaled(m) = &v.tail else {
        return None;
    };
    let [w0, w1] = m.words;
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&(w0 & !(0xf << 11)).to_le_bytes());
    bytes[4..].copy_from_slice(&w1.to_le_bytes());
    rocjitsu_isa::gfx9::vop3p::decode(Target::Gfx950, &bytes).ok()
}

/// Lowers an MFMA, SMFMAC or scaled MFMA pair.
pub fn lower(inst: Inst, v: &Vop3p) -> Op {
    let (m, scaled) = match scaled_inner(v) {
        Some(m) => (m, true),
        None => (v.clone(), false),
    };
    let row = m.row;
    let mut op = Op::new(inst, exec_fn(row.name));
    if row.kind != Kind::Mfma {
        op.exec = super::unsupported;
        return op;
    }
    let acc_cd = m.clamp;
    op.vdst = match row.dst {
        0 => NO_VDST,
        _ if acc_cd || row.dst_agpr => AGPR0 + u16::from(m.vdst),
        _ => u16::from(m.vdst),
    };
    let mut widths = [0u8; 3];
    for (i, s) in row.srcs.iter().enumerate().take(3) {
        let n = m.width(i, s);
        widths[i] = n;
        let agpr = match i {
            0 | 1 => s.agpr || m.op_sel_hi >> i & 1 != 0,
            // The SMFMAC index (a single VGPR) never is an AGPR.
            _ => s.agpr || (acc_cd && s.n > 1),
        };
        let src = src_field(m.src[i], n, m.literal());
        op.src[i] = match src {
            Src::V(r) if agpr => Src::V(AGPR0 + r),
            x => x,
        };
    }
    op.mods = Mods {
        opsel: m.hi_bits & 7,
        opsel_hi: (m.hi_bits >> 3) & 15,
        neg: m.neg_lo & 7,
        ..Mods::default()
    };
    op.imm = i64::from(widths[0])
        | (i64::from(widths[1]) << 8)
        | (i64::from(row.dst) << 16)
        | if scaled { SCALED } else { 0 };
    op
}

/// The exec function of a matrix mnemonic.
fn exec_fn(_name: &str) -> ExecFn {
    run
}

/// Runs the matrix instruction (see the module docs).
fn run(_c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    Err(Fault::Unsupported(op.name()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::testing::assemble;

    fn lower_asm(t: Target, asm: &str) -> Op {
        let bytes = assemble(t, asm);
        let inst = rocjitsu_isa::decode(t, &bytes).unwrap();
        crate::exec::op::lower(inst)
    }

    #[test]
    fn operands_resolve_to_vgpr_or_agpr_ranges() {
        let op = lower_asm(
            Target::Gfx942,
            "v_mfma_f32_32x32x8_f16 a[4:19], a[10:11], v[20:21], a[30:45] cbsz:1 abid:8 blgp:2",
        );
        assert_eq!(op.vdst, AGPR0 + 4);
        assert_eq!(op.src, [Src::V(AGPR0 + 10), Src::V(20), Src::V(AGPR0 + 30)]);
        assert_eq!((op.mods.opsel, op.mods.opsel_hi, op.mods.neg), (1, 8, 2));
        assert_eq!(op.imm, 2 | (2 << 8) | (16 << 16));

        let op = lower_asm(
            Target::Gfx942,
            "v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], 1.0",
        );
        assert_eq!(op.vdst, 0);
        assert!(matches!(op.src[2], Src::Float(_)));

        // gfx950 f8f6f4: fp6 A (cbsz:2) is 6 registers, fp4 B (blgp:4) 4.
        let op = lower_asm(
            Target::Gfx950,
            "v_mfma_f32_16x16x128_f8f6f4 v[4:7], v[10:15], v[20:23], v[30:33] cbsz:2 blgp:4",
        );
        assert_eq!(op.imm, 6 | (4 << 8) | (4 << 16));

        // SMFMAC: src[2] is the index VGPR even with AGPR C/D.
        let op = lower_asm(
            Target::Gfx942,
            "v_smfmac_f32_16x16x32_f16 a[0:3], v[4:5], v[6:9], v10 cbsz:1 abid:1",
        );
        assert_eq!(op.vdst, AGPR0);
        assert_eq!(op.src[2], Src::V(10));
    }

    #[test]
    fn scaled_pair_lowers_the_inner_mfma() {
        let op = lower_asm(
            Target::Gfx950,
            "v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], a[4:11], v[12:19], a[0:3], v20, v21 op_sel_hi:[0,0,0]",
        );
        assert_eq!(op.len, 16);
        assert_eq!(op.vdst, AGPR0);
        assert_eq!(op.src, [Src::V(AGPR0 + 4), Src::V(12), Src::V(AGPR0)]);
        assert_eq!(op.imm, 8 | (8 << 8) | (4 << 16) | SCALED);
    }
}
