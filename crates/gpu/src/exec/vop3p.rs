//! VOP3P instructions: packed 16-bit and f32 math, mixed-precision FMA,
//! dot products, AccVGPR moves and the matrix instructions (MFMA, SMFMAC,
//! with the gfx950 scaled forms).
//!
//! Lowered form: `vdst` the destination (VGPR or AGPR index), `src` the
//! sources (matrix operands resolved to VGPR or AGPR ranges by the acc
//! bits), `mods` neg_lo/neg_hi/op_sel/op_sel_hi/clamp (MFMA: cbsz in
//! `opsel`, abid in `opsel_hi`, blgp in `neg`).

use super::op::{ExecFn, Op, unsupported};
use rocjitsu_isa::Inst;

/// The semantic function of a VOP3P mnemonic.
pub fn lookup(_name: &str) -> Option<ExecFn> {
    None
}

/// Lowers a VOP3P instruction.
pub fn lower(inst: Inst) -> Op {
    Op::new(inst.clone(), lookup(inst.mnemonic()).unwrap_or(unsupported))
}
