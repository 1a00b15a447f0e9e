//! Opcode tables generated from LLVM 22's disassembler by `scripts/gen/`.

pub mod ds;
pub mod flat;
pub mod mimg;
pub mod mubuf;
pub mod smem;
pub mod sop;
#[rustfmt::skip]
pub mod vop;
#[rustfmt::skip]
pub(crate) mod vop3;
