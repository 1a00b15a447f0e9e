//! The virtual GPU: the machine's shape built from a configuration
//! (`rocjitsu_config`; [`topology`]), the number formats the execution
//! engine computes with ([`float`]), the matrix instructions' semantics
//! ([`mfma`]), the wave execution engine ([`exec`]) and the command processor
//! that serves the runtime's queues ([`cp`]), the translation tier behind the
//! engine's interpreter ([`jit`]), and the execution plugins that observe it
//! ([`plugin`]).

pub mod cp;
pub mod exec;
pub mod float;
pub mod jit;
pub mod mem;
pub mod mfma;
pub mod plugin;
pub mod timing;
pub mod topology;

pub use topology::Topology;
