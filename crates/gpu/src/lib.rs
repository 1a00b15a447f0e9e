//! The virtual GPU: configurations ([`config`]), the machine's shape built
//! from them ([`topology`]), and the number formats the execution engine
//! computes with ([`float`]), and the matrix instructions' semantics
//! ([`mfma`]).

pub mod config;
pub mod exec;
pub mod float;
pub mod mfma;
pub mod topology;

pub use config::{ConfigError, GfxTarget, GpuConfig, GpuSpec};
pub use topology::Topology;
