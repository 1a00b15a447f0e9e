//! Opcode tables generated from LLVM 22's disassembler by
//! `scripts/gen/gfx11/*.py gfx10` (the layouts GFX10 shares with GFX11)
//! and `scripts/gen/gfx10/*.py` (its own).

#[rustfmt::skip]
pub mod sop;
#[rustfmt::skip]
pub mod smem;
#[rustfmt::skip]
pub mod vop;
#[rustfmt::skip]
pub mod sdwa;
#[rustfmt::skip]
pub mod vop3;
#[rustfmt::skip]
pub mod vop3p;
#[rustfmt::skip]
pub mod ds;
#[rustfmt::skip]
pub mod flat;
#[rustfmt::skip]
pub mod mubuf;
#[rustfmt::skip]
pub mod mimg;
#[rustfmt::skip]
pub mod exp;
#[rustfmt::skip]
pub mod vintrp;
