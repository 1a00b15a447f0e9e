//! Opcode tables generated from LLVM 22's disassembler by
//! `scripts/gen/gfx11/*.py gfx12`.

#[rustfmt::skip]
pub mod sop;
#[rustfmt::skip]
pub mod smem;
#[rustfmt::skip]
pub mod vop;
#[rustfmt::skip]
pub mod vop3;
#[rustfmt::skip]
pub mod vop3p;
#[rustfmt::skip]
pub mod vopd;
#[rustfmt::skip]
pub mod ds;
#[rustfmt::skip]
pub mod exp;
#[rustfmt::skip]
pub mod vinterp;
#[rustfmt::skip]
pub mod vflat;
#[rustfmt::skip]
pub mod vbuffer;
#[rustfmt::skip]
pub mod vimage;
/// The tables that differ in LLVM's real-true16 mode (`+real-true16`):
/// the encodings with 16-bit VGPR operands.
pub mod t16;
