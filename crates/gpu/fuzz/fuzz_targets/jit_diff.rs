//! Fuzzes the translation tier against the interpreter: the input chooses
//! a target, a mix (ALU, f32-heavy, or with GLOBAL/FLAT loads and stores
//! over two buffers), a straight-line sequence and a wave state
//! (`rocjitsu_gpu::jit::fuzz::check_bytes`); both tiers run it, and any
//! difference in a register, SCC, PC, MODE, the buffers or the fault
//! panics.
//! Run with `make fuzz-jit` (see the Makefile for the flags).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rocjitsu_gpu::jit::fuzz::check_bytes(data);
});
