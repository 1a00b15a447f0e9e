//! The wave execution engine: wave state ([`wave`]) over GPU memory
//! ([`crate::mem`]), instructions lowered to executable [`op::Op`]s, their
//! semantics per encoding family, the fetch/execute loop ([`engine`]) and
//! kernel dispatch ([`dispatch`]).
//!
//! Families: [`scalar`] (SOP1/SOP2/SOPC/SOPK/SOPP), [`smem`], [`valu`]
//! (VOP1/VOP2/VOPC/VOP3 with SDWA and DPP), [`vop3p`] (packed math, MFMA),
//! [`lds`] (DS), [`vmem`] (FLAT/GLOBAL/SCRATCH, MUBUF/MTBUF), [`mimg`]
//! (image instructions).

// Lane loops index several 64-entry arrays by lane number.
#![allow(clippy::needless_range_loop)]

pub mod dispatch;
pub mod engine;
pub mod gfx10;
pub mod gfx11;
pub mod gfx12;
pub mod lds;
pub mod loader;
pub mod lower;
pub mod mimg;
pub mod op;
pub mod scalar;
pub mod smem;
pub mod unsupported;
pub mod valu;
pub mod vmem;
pub mod vop3p;
pub mod wave;

#[cfg(test)]
mod dbt_tests;
#[cfg(test)]
pub mod testing;

pub use engine::{Program, Stop};
pub use op::{Ctx, Env, Fault, Op};
pub use wave::{Lanes, Wave, WaveState};
