//! The decoder's integration tests, one module per former test file, in
//! one test binary (one link instead of seven). `cargo test -p
//! rocjitsu-isa --test it gfx11::` runs one module's tests.

mod corpus;
mod gfx10;
mod gfx11;
mod gfx12;
mod gfx908;
mod no_panic;
mod regs;
