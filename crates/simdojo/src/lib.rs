//! simdojo: a conservative parallel discrete-event engine.
//!
//! A model is a set of [`Component`]s that talk only by messages over
//! one-way links, each link with a latency. The engine runs the model's
//! events in time order on one or more host threads, and the result (every
//! component's state, every event's time and order) is the same for any
//! number of threads.
//!
//! # Time
//!
//! Simulated time is an integer number of picoseconds ([`Time`], `u64`).
//! Components of different clocks share this one timeline; a [`Clock`]
//! converts cycles to picoseconds, its period rounded to a whole picosecond
//! (2100 MHz: 476 ps).
//!
//! # Components, ports, links, events
//!
//! [`ModelBuilder::add`] adds a component to a partition;
//! [`ModelBuilder::link`] adds a one-way link, which gives the sender a new
//! [`OutPort`] and the receiver a new [`InPort`] (numbered in the order the
//! links were added, and named after the component at the other end:
//! [`Ctx::out_port`]). [`Ctx::send`] puts a message on a link; it arrives
//! after the link's latency. [`Ctx::schedule`] sends one to the component
//! itself after a delay ([`InPort::SELF`]). A topology file
//! ([`Topology`], `configs/timing/`) builds the same thing from the
//! component tree of a GPU.
//!
//! # The order of events
//!
//! Every event carries the key (time, sending component, the sender's
//! sequence number): the sequence number counts everything a component
//! has sent or scheduled, so the key is unique and is assigned the same
//! way whatever the partitions and threads. A partition handles its events
//! in key order; simultaneous events therefore go by sender, then by the
//! order the sender sent them. A component's behaviour depends only on the
//! events it is handed, in that order, so its whole history is fixed by the
//! model and not by the run.
//!
//! # Parallel execution: barrier epochs
//!
//! Components are grouped into partitions (a whole XCD, a GPU); a
//! partition's components always run on one thread, and its events sit in
//! one queue. The lookahead `L` is the smallest latency of a link between
//! two partitions (a link between partitions must have a positive
//! latency). The run proceeds in epochs:
//!
//! 1. every partition collects the messages posted for it in the last
//!    epoch into its queue (the queue orders them by key, so the order
//!    they are collected in does not matter), and every thread computes the
//!    same window `[T, T + L)`, `T` the earliest time published by any
//!    partition;
//! 2. each thread runs its partitions' events before `T + L`. A message
//!    for another partition is sent from an event at `t >= T` and arrives
//!    at `t + latency >= T + L`: after the window, so no partition can
//!    receive anything for a time it has already passed. Such messages
//!    wait in the sender's outbox, and go to a mailbox per (sender,
//!    receiver) pair at the end of the window. Each partition publishes
//!    the earliest time among its queue and what it posted;
//! 3. one barrier. The mailboxes and published times are double-buffered
//!    by epoch parity, so nobody writes what another thread may still be
//!    reading, and one barrier per epoch is enough.
//!
//! A message between partitions that would land inside the window (a
//! lookahead bug) stops the run with [`RunError::Causality`] rather than
//! give a result. A component that panics stops every thread at the next
//! barrier and the panic is raised again on the caller's thread.
//!
//! Why barrier epochs rather than null messages (Chandy-Misra-Bryant): a
//! GPU is a few partitions (8 XCDs and the memory) that are all connected
//! through the memory, so there is one global lookahead to use anyway, and
//! the events are dense (every compute unit acts every cycle), so each
//! window holds thousands of events and a barrier every window costs
//! little. A window also skips idle time (it starts at the earliest event).
//! Null messages pay per channel per step instead, grow with the square of
//! the partitions on a fully connected graph, and need care to avoid
//! deadlock on zero-lookahead cycles; they win on sparse models with
//! uneven lookaheads, which a GPU is not.
//!
//! # Why not an existing engine
//!
//! NeXosim (the maintained Rust discrete-event framework) parallelises by
//! running the models that have events at the same instant concurrently on
//! its async executor; it has no partitions or lookahead, and it promises
//! only causal ordering (two messages from one sender arrive in the order
//! sent), not a total order of simultaneous messages from different
//! senders, whose order may then depend on how the executor scheduled the
//! senders. dslab-core and the other crates found are sequential. The
//! engine here is small: the threads are `std::thread::scope`, the queue a
//! `BTreeMap` of buckets by time (`queue.rs`: a GPU's events come in crowds
//! at each clock edge; sorting a bucket once made the per-XCD model 2.4x
//! faster than a `BinaryHeap`); the one piece of synchronisation written
//! here is the epoch barrier (`barrier.rs`), which spins up to 50 us before
//! blocking like `std::sync::Barrier`: two threads on two cores pass it in
//! about 1 us where the std barrier, which always sleeps on a condition
//! variable, takes 6-10 us.
//!
//! # Example
//!
//! ```
//! use rocjitsu_simdojo::{Component, Ctx, InPort, ModelBuilder, OutPort, RunOptions, Time};
//!
//! /// Answers every number below 4 with the next one.
//! struct Echo {
//!     start: bool,
//!     log: Vec<(Time, u32)>,
//! }
//!
//! impl Component for Echo {
//!     type Msg = u32;
//!     fn init(&mut self, ctx: &mut Ctx<'_, u32>) {
//!         if self.start {
//!             ctx.send(OutPort(0), 0);
//!         }
//!     }
//!     fn handle(&mut self, ctx: &mut Ctx<'_, u32>, _port: InPort, n: u32) {
//!         self.log.push((ctx.now(), n));
//!         if n < 4 {
//!             ctx.send(OutPort(0), n + 1);
//!         }
//!     }
//! }
//!
//! let mut b = ModelBuilder::new();
//! let ping = b.add("ping", 0, Echo { start: true, log: vec![] });
//! let pong = b.add("pong", 1, Echo { start: false, log: vec![] });
//! b.link(ping, pong, 700);
//! b.link(pong, ping, 300);
//! let mut sim = b.build().unwrap();
//! assert_eq!(sim.lookahead(), Some(300));
//! let stats = sim.run(RunOptions { threads: 2, until: Time::MAX }).unwrap();
//! assert_eq!(stats.events, 5);
//! assert_eq!(sim.component(pong).log, [(700, 0), (1700, 2), (2700, 4)]);
//! assert_eq!(sim.component(ping).log, [(1000, 1), (2000, 3)]);
//! ```
#![forbid(unsafe_code)]

mod barrier;
mod engine;
mod queue;
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
