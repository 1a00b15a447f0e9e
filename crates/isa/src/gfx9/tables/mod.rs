//! Opcode tables learned from LLVM 22's disassembler by the generators under
//! `scripts/gen/`.

#[rustfmt::skip]
pub(crate) mod vop3;
#[rustfmt::skip]
pub(crate) mod vop3p;
