//! Opcode tables generated from LLVM 22's disassembler by `scripts/gen/`.

#[rustfmt::skip]
pub mod ds;
#[rustfmt::skip]
pub mod exp;
#[rustfmt::skip]
pub mod flat;
#[rustfmt::skip]
pub mod mimg;
#[rustfmt::skip]
pub mod mubuf;
pub mod smem;
pub mod sop;
#[rustfmt::skip]
pub mod vop;
#[rustfmt::skip]
pub(crate) mod vop3;
#[rustfmt::skip]
pub(crate) mod vop3p;
