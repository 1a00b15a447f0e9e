//! LDS instructions (DS encoding): loads, stores, atomics, permutes and
//! swizzles on the workgroup's local data share.
//!
//! Lowered form: `vdst` the destination register (VGPR or AGPR), `src[0]`
//! the address VGPR, `src[1]`, `src[2]` the data registers, `imm` the
//! 16-bit offset field (offset0 | offset1 << 8).

use super::op::{ExecFn, Op, unsupported};
use super::wave::{AGPR0, Src};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;

/// The semantic function of a DS mnemonic.
pub fn lookup(_name: &str) -> Option<ExecFn> {
    None
}

/// Lowers a DS instruction.
pub fn lower(inst: Inst) -> Op {
    let mut op = Op::new(inst.clone(), lookup(inst.mnemonic()).unwrap_or(unsupported));
    if let Body::Ds(d) = &inst.body {
        let acc = if d.acc { AGPR0 } else { 0 };
        op.vdst = acc + u16::from(d.vdst);
        op.src = [
            Src::V(u16::from(d.addr)),
            Src::V(acc + u16::from(d.data0)),
            Src::V(acc + u16::from(d.data1)),
        ];
        op.imm = i64::from(d.offset);
    }
    op
}
