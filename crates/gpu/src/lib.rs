//! The virtual GPU: configurations ([`config`]), the machine's shape built
//! from them ([`topology`]), and the number formats the execution engine
//! computes with ([`float`]).

pub mod config;
pub mod exec;
pub mod float;
pub mod topology;

pub use config::{ConfigError, GfxTarget, GpuConfig, GpuSpec};
pub use topology::Topology;
