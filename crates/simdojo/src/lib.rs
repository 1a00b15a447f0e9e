//! simdojo: a conservative parallel discrete-event engine (components,
//! ports, links with latency, events in picoseconds), deterministic at any
//! thread count.
#![forbid(unsafe_code)]

mod engine;
pub mod synthetic;
pub mod time;
pub mod topology;

pub use engine::{
    BuildError, Component, ComponentId, Ctx, InPort, ModelBuilder, OutPort, RunError, RunOptions,
    RunStats, Simulation, TraceEntry,
};
pub use time::{Clock, Time};
pub use topology::{Instance, Kind, Link, Topology, TopologyError};

#[cfg(test)]
mod tests;
