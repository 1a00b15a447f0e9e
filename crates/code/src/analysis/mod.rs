//! Analyses of code shared by the execution plugins, the DBT translator
//! and the timing model: the wait counters and what each instruction adds
//! to them ([`waitcnt`]), the wait-state rules the hardware leaves to
//! software ([`waitstates`], GFX9), and register liveness and def-use
//! chains over a control-flow graph ([`liveness`], every decoded target).
//! Register reads and writes come from
//! [`rocjitsu_isa::Instruction::regs`].

pub mod liveness;
pub mod mfma_passes;
pub mod waitcnt;
pub mod waitstates;

#[cfg(test)]
mod tests;
