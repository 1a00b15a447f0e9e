//! Opcode tables generated from LLVM 22's disassembler by `scripts/gen/gfx11/`.

#[rustfmt::skip]
pub mod sop;
#[rustfmt::skip]
pub mod smem;
#[rustfmt::skip]
pub(crate) mod vop3;
#[rustfmt::skip]
pub(crate) mod vop;
#[rustfmt::skip]
pub(crate) mod vop3p;
#[rustfmt::skip]
pub(crate) mod vopd;
#[rustfmt::skip]
pub(crate) mod vinterp;
#[rustfmt::skip]
pub mod ds;
#[rustfmt::skip]
pub mod flat;
#[rustfmt::skip]
pub mod mubuf;
#[rustfmt::skip]
pub mod exp;
#[rustfmt::skip]
pub mod mimg;
