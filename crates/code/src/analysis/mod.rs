//! Analyses of GFX9 code shared by the execution plugins, the DBT
//! translator and the timing model: the wait counters and what each
//! instruction adds to them ([`waitcnt`]), and the wait-state rules the
//! hardware leaves to software ([`waitstates`]). Register reads and writes
//! come from [`rocjitsu_isa::Inst::regs`].

pub mod mfma_passes;
pub mod waitcnt;
pub mod waitstates;

#[cfg(test)]
mod tests;
