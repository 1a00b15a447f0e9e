//! The driver's integration tests, one module per former test file, in
//! one test binary (each binary links the whole emulator: one link instead
//! of six). `cargo test -p rocjitsu-kmd --test it guest::` runs one
//! module's tests. The modules share one process: their scratch
//! directories (runtime directories, daemon sockets) have a prefix of
//! their own besides the process id, so none is another module's.

mod common;

mod abi_headers;
mod checkpoint;
mod daemon;
mod drm_info;
mod guest;
mod ioctl;
