//! The command line's integration tests, one module per former test file,
//! in one test binary (each binary links the whole emulator: one link
//! instead of seven). `cargo test -p rocjitsu-cli --test it dbt::` runs
//! one module's tests.

mod common;

mod cfg;
mod dbi;
mod dbi_memtrace;
mod dbt;
mod disasm;
mod launch;
mod run_kernel;
