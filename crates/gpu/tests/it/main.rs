//! The engine's integration tests, one module per former test file, in
//! one test binary (one link instead of two). `cargo test -p rocjitsu-gpu
//! --test it every_opcode::` runs one module's tests.

mod coverage;
mod every_opcode;
