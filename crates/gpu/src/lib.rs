//! The virtual GPU: configurations ([`config`]), the machine's shape built
//! from them ([`topology`]), and the number formats the execution engine
//! computes with ([`float`]), and the matrix instructions' semantics
//! ([`mfma`]), and the command processor that serves the runtime's queues
//! ([`cp`]).

pub mod config;
pub mod cp;
pub mod exec;
pub mod float;
pub mod mem;
pub mod mfma;
pub mod topology;

pub use config::{ConfigError, GfxTarget, GpuConfig, GpuSpec};
pub use topology::Topology;
