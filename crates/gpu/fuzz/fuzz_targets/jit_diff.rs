//! Fuzzes the translation tier against the interpreter: the input chooses
//! a target, a straight-line sequence of scalar and vector ALU instructions
//! and a wave state (`rocjitsu_gpu::jit::fuzz::check_bytes`); both tiers run
//! it, and any difference in a register, SCC, PC, MODE or the fault panics.
//! Run with `make fuzz-jit` (see the Makefile for the flags).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rocjitsu_gpu::jit::fuzz::check_bytes(data);
});
