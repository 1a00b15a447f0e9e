//! Opcode tables generated from LLVM 22's disassembler by `scripts/gen/`.

#[rustfmt::skip]
pub mod vop;
