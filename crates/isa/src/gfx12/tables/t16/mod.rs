//! GFX12's opcode tables in LLVM's real-true16 mode, generated from LLVM
//! 22's disassembler with `+real-true16` by `scripts/gen/gfx11/*.py gfx12
//! t16`: the encodings whose tables differ from the default mode's
//! (VOP1/VOP2/VOPC, VOP3, VINTERP). The others' tables are the same in
//! both modes (the generators' output in this mode is identical to
//! `super`'s).

#[rustfmt::skip]
pub mod vop;
#[rustfmt::skip]
pub mod vop3;
#[rustfmt::skip]
pub mod vinterp;
