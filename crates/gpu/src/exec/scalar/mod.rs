//! Scalar ALU and program control: SOP1, SOP2, SOPC, SOPK and SOPP.
//!
//! Lowered form: `sdst` the scalar destination (file index; for the SOPK
//! compares and `s_setreg_b32` the register the `sdst` field names, which
//! they read), `src[0]`, `src[1]` the scalar sources (the `gpr_idx` mode of
//! `s_set_gpr_idx_on` is `src[1]` as a literal), `imm` the SOPK/SOPP 16-bit
//! immediate sign-extended (consumers needing the raw field take its low 16
//! bits; branches add it in dwords to the next PC with [`branch_dest`]).
//!
//! Semantics follow the instruction pseudo-code of the CDNA3/CDNA4 ISA
//! manuals ("SOP2 / SOPK / SOP1 / SOPC / SOPP Instructions"); SCC is written
//! exactly where the manual writes it and left alone elsewhere.
//!
//! Families: [`alu`] (arithmetic, bit and compare operations), [`control`]
//! (branches, PC, EXEC, messages, GPR indexing, fork/join), [`hwreg`]
//! (`s_getreg` / `s_setreg` and the hardware registers).

mod alu;
mod control;
pub mod hwreg;

#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod tests_control;

use super::lower::{base_name, sdst_of, src_of, unsupported};
use super::op::{Ctx, ExecFn, Op};
use super::wave::{Src, Width};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;
use rocjitsu_isa::gfx9::sop::Field;

pub(crate) use control::rel_index_at;
pub use control::{GprIdx, gpr_idx};

/// The semantic function of a scalar mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    alu::lookup(name)
        .or_else(|| control::lookup(name))
        .or_else(|| hwreg::lookup(name))
}

/// Lowers a SOP1/SOP2/SOPC/SOPK/SOPP instruction.
pub fn lower(inst: Inst) -> Op {
    let name = base_name(inst.mnemonic());
    let mut op = Op::new(inst, lookup(name).unwrap_or(unsupported));
    match &inst.body() {
        Body::Salu(s) => {
            if let Some(f) = s.fields() {
                if let Field::Op(d) = &f.sdst {
                    op.sdst = sdst_of(d);
                }
                if let Field::Op(o) = &f.src0 {
                    op.src[0] = src_of(o);
                }
                if let Field::Op(o) = &f.src1 {
                    op.src[1] = src_of(o);
                }
            }
        }
        Body::Sopk(k) => {
            if let Field::Op(d) = k.sdst() {
                op.sdst = sdst_of(&d);
            }
            op.imm = i64::from(k.simm16 as i16);
            if let Some(x) = k.imm32 {
                op.src[0] = Src::Lit(x);
            }
        }
        Body::Sopp(p) => {
            op.imm = i64::from(p.simm16 as i16);
        }
        _ => {}
    }
    op
}

/// The branch destination of a SOPP/SOPK branch whose next instruction is
/// at `next_pc`: `simm16` counts dwords from it.
#[inline]
pub fn branch_dest(next_pc: u64, simm16: i64) -> u64 {
    next_pc.wrapping_add((simm16 * 4) as u64)
}

/// Source `i` as a 32-bit value.
#[inline]
fn s32(c: &Ctx, op: &Op, i: usize) -> u32 {
    let src = op.src.get(i).copied().unwrap_or(Src::None);
    c.wave.read_s32(src, Width::B32, &c.env.apertures)
}

/// Source `i` as a 64-bit value (a register pair, or a constant widened as
/// a 64-bit integer).
#[inline]
fn s64(c: &Ctx, op: &Op, i: usize) -> u64 {
    let src = op.src.get(i).copied().unwrap_or(Src::None);
    c.wave.read_s64(src, Width::B64, &c.env.apertures)
}
