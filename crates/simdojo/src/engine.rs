//! The engine: components, ports, links, events and the conservative
//! parallel run loop (see the crate documentation for the algorithm).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::barrier::EpochBarrier;
use crate::queue::EventQueue;

use crate::time::Time;

/// A component's number: its place in the order components were added
/// (for a [`crate::Topology`], the tree order of the configuration). Part
/// of every event's ordering key, so it does not depend on partitions or
/// threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComponentId(pub u32);

/// One of a component's outgoing ports: the sending end of one link.
/// Numbered from 0 in the order the component's outgoing links were added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OutPort(pub u32);

/// The port an event arrived on: the receiving end of one link (numbered
/// from 0 in the order the component's incoming links were added), or
/// [`InPort::SELF`] for an event the component scheduled for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InPort(pub u32);

impl InPort {
    /// The port of self-scheduled events ([`Ctx::schedule`]).
    pub const SELF: InPort = InPort(u32::MAX);

    /// The index of an incoming link, or `None` for [`InPort::SELF`].
    pub fn link(self) -> Option<usize> {
        (self != InPort::SELF).then_some(self.0 as usize)
    }
}

/// A model: state that changes only when it handles an event, and talks to
/// other components only by sending messages over its links.
///
/// Determinism rests on this contract: a component's behaviour is a
/// function of its state and the events it is given (no clocks, no shared
/// memory, no randomness that is not seeded from its state).
pub trait Component: Send {
    /// The messages that travel between components of the model.
    type Msg: Send;

    /// Called once, at time 0, before the first event, in component order:
    /// look up ports by name and schedule the first events.
    fn init(&mut self, ctx: &mut Ctx<'_, Self::Msg>) {
        let _ = ctx;
    }

    /// Handles one event: `msg` arrived on `port` at [`Ctx::now`].
    fn handle(&mut self, ctx: &mut Ctx<'_, Self::Msg>, port: InPort, msg: Self::Msg);
}

/// An error building a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// A link names a component that was never added.
    #[error("link {link}: component {component} does not exist (the model has {count})")]
    NoSuchComponent {
        link: usize,
        component: u32,
        count: usize,
    },
    /// A link from a component to itself (use [`Ctx::schedule`]).
    #[error(
        "link {link}: `{name}` is linked to itself; a component reaches itself with a self-event (Ctx::schedule)"
    )]
    SelfLink { link: usize, name: String },
    /// A zero-latency link between partitions leaves no lookahead.
    #[error(
        "link {link}: `{from}` (partition {from_partition}) -> `{to}` (partition {to_partition}) has zero latency; links between partitions need a positive latency (it is the lookahead), or put both ends in one partition"
    )]
    ZeroLatencyAcrossPartitions {
        link: usize,
        from: String,
        to: String,
        from_partition: u32,
        to_partition: u32,
    },
    /// More components than event keys can name.
    #[error("{count} components; a model may have at most {MAX_COMPONENTS}")]
    TooManyComponents { count: usize },
    /// Zero-latency links that form a cycle: time could stop advancing.
    #[error(
        "zero-latency links form a cycle ({cycle}); an event could go round it forever without time advancing: give one of them a latency"
    )]
    ZeroLatencyCycle { cycle: String },
}

/// An error from [`Simulation::run`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// A message for another partition would have landed inside the window
    /// being run: the receiver might already have passed its time. The
    /// engine's lookahead is the minimum latency between partitions, so this
    /// means an engine bug; the run stops rather than give a wrong answer.
    #[error(
        "causality: a message from component {src} to component {dst} at {time} ps lands inside the window that ends at {window_end} ps (lookahead {lookahead} ps)"
    )]
    Causality {
        src: u32,
        dst: u32,
        time: Time,
        window_end: Time,
        lookahead: Time,
    },
    /// A component sent more events than sequence numbers hold.
    #[error(
        "component {component} has sent {MAX_SEQ} events, the most one component may send in a run"
    )]
    SequenceOverflow { component: u32 },
}

/// Options of one [`Simulation::run`].
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Host threads (at least 1; more than the partitions is the same as one
    /// per partition).
    pub threads: usize,
    /// Run the events with a time before this (exclusive); `Time::MAX` runs
    /// until no event is left.
    pub until: Time,
}

/// What one [`Simulation::run`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunStats {
    /// Events handled.
    pub events: u64,
    /// Barrier epochs (windows) run.
    pub epochs: u64,
    /// Threads used (`min(threads, partitions)`).
    pub threads: usize,
}

/// Deliberate engine faults, for the tests that prove the determinism test
/// can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Fault {
    None,
    /// Simultaneous events in the order they were queued (a FIFO) instead
    /// of by (source, sequence number).
    NoTieBreak,
    /// Windows twice the lookahead: messages between partitions can land
    /// inside the window being run.
    WideWindow,
}

/// One handled event, as recorded by [`Simulation::enable_trace`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceEntry {
    /// When it was handled.
    pub time: Time,
    /// The component that handled it.
    pub dst: u32,
    /// The port it arrived on (`u32::MAX`: a self-event).
    pub port: u32,
    /// The component that sent it.
    pub src: u32,
    /// The sender's sequence number.
    pub seq: u64,
}

impl TraceEntry {
    /// Size of [`TraceEntry::to_bytes`].
    pub const BYTES: usize = 28;

    /// Little-endian bytes: time, dst, port, src, seq.
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut b = [0; Self::BYTES];
        b[0..8].copy_from_slice(&self.time.to_le_bytes());
        b[8..12].copy_from_slice(&self.dst.to_le_bytes());
        b[12..16].copy_from_slice(&self.port.to_le_bytes());
        b[16..20].copy_from_slice(&self.src.to_le_bytes());
        b[20..28].copy_from_slice(&self.seq.to_le_bytes());
        b
    }
}

/// Components a model may have: ids are 24-bit in an event's key.
pub const MAX_COMPONENTS: usize = 1 << SRC_BITS;
/// Events one component may send or schedule: sequence numbers are 40-bit
/// in an event's key (at 10^9 events a second, 18 minutes of one
/// component's events alone).
pub const MAX_SEQ: u64 = 1 << SEQ_BITS;
const SRC_BITS: u32 = 24;
const SEQ_BITS: u32 = 40;

/// An event in a queue, ordered by its key: time, source component, source
/// sequence number, packed into one `u128` (64, 24 and 40 bits) so that
/// the queue compares one integer. The order does not depend on which
/// partition or thread produced or holds the event.
pub(crate) struct Event<M> {
    pub(crate) key: u128,
    pub(crate) dst_local: u32,
    pub(crate) port: u32,
    pub(crate) msg: M,
}

pub(crate) fn pack(time: Time, src: u32, seq: u64) -> u128 {
    (u128::from(time) << 64) | (u128::from(src) << SEQ_BITS) | u128::from(seq & (MAX_SEQ - 1))
}

impl<M> Event<M> {
    pub(crate) fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
    fn src(&self) -> u32 {
        ((self.key >> SEQ_BITS) as u64 & ((1 << SRC_BITS) - 1)) as u32
    }
    fn seq(&self) -> u64 {
        self.key as u64 & (MAX_SEQ - 1)
    }
}

/// Where an outgoing port leads.
#[derive(Debug, Clone, Copy)]
struct Route {
    dst: u32,
    dst_partition: u32,
    dst_local: u32,
    in_port: u32,
    latency: Time,
}

/// A component's names: its own and its ports' peers'.
#[derive(Debug, Clone, Default)]
struct Names {
    name: String,
    /// Per outgoing port: the receiving component's name.
    out: Vec<String>,
    /// Per incoming port: the sending component's name.
    inp: Vec<String>,
}

struct Meta {
    id: u32,
    seq: u64,
    routes: std::ops::Range<usize>,
    names: Names,
}

struct Partition<C: Component> {
    index: u32,
    comps: Vec<C>,
    meta: Vec<Meta>,
    routes: Vec<Route>,
    queue: EventQueue<C::Msg>,
    /// Messages for other partitions produced in the current window, by
    /// destination partition.
    outbox: Vec<Vec<Event<C::Msg>>>,
    trace: Option<Vec<TraceEntry>>,
    events: u64,
    fifo: u64,
    violation: Option<RunError>,
    /// A component's panic, re-raised on the caller's thread after the run.
    panic: Option<Box<dyn std::any::Any + Send>>,
}

/// What a component sees while it handles an event.
pub struct Ctx<'a, M> {
    now: Time,
    me: u32,
    local: u32,
    partition: u32,
    seq: &'a mut u64,
    routes: &'a [Route],
    names: &'a Names,
    queue: &'a mut EventQueue<M>,
    outbox: &'a mut [Vec<Event<M>>],
    window_end: Time,
    lookahead: Time,
    violation: &'a mut Option<RunError>,
    fault: Fault,
    fifo: &'a mut u64,
}

impl<M> Ctx<'_, M> {
    /// The current time (picoseconds).
    pub fn now(&self) -> Time {
        self.now
    }

    /// This component.
    pub fn id(&self) -> ComponentId {
        ComponentId(self.me)
    }

    /// This component's name (its path in the topology).
    pub fn name(&self) -> &str {
        &self.names.name
    }

    /// The first outgoing port whose link leads to the component named
    /// `peer`.
    pub fn out_port(&self, peer: &str) -> Option<OutPort> {
        self.names
            .out
            .iter()
            .position(|n| n == peer)
            .map(|i| OutPort(i as u32))
    }

    /// The number of outgoing ports.
    pub fn out_ports(&self) -> usize {
        self.routes.len()
    }

    /// The name of the component an outgoing port leads to.
    pub fn out_peer(&self, port: OutPort) -> &str {
        &self.names.out[port.0 as usize]
    }

    /// The latency of an outgoing port's link.
    pub fn latency(&self, port: OutPort) -> Time {
        self.routes[port.0 as usize].latency
    }

    /// The names of the components at the other end of the incoming ports,
    /// by port number.
    pub fn in_peers(&self) -> &[String] {
        &self.names.inp
    }

    /// Sends `msg` over `port`: it arrives after the link's latency (a time
    /// past `Time::MAX` is `Time::MAX`, which no run reaches).
    pub fn send(&mut self, port: OutPort, msg: M) {
        self.send_after(port, 0, msg);
    }

    /// Sends `msg` over `port` `delay` from now: it arrives after the delay
    /// and the link's latency (a component that answers a request after
    /// some work of its own, without an event for the wait).
    pub fn send_after(&mut self, port: OutPort, delay: Time, msg: M) {
        let r = self.routes[port.0 as usize];
        let time = self.now.saturating_add(delay).saturating_add(r.latency);
        let seq = self.next_seq();
        let ev = Event {
            key: pack(time, self.me, seq),
            dst_local: r.dst_local,
            port: r.in_port,
            msg,
        };
        if r.dst_partition == self.partition {
            self.push(ev);
        } else {
            if time < self.window_end && self.violation.is_none() {
                *self.violation = Some(RunError::Causality {
                    src: self.me,
                    dst: r.dst,
                    time,
                    window_end: self.window_end,
                    lookahead: self.lookahead,
                });
            }
            self.outbox[r.dst_partition as usize].push(ev);
        }
    }

    /// Schedules `msg` for this component itself, `delay` from now (it
    /// arrives on [`InPort::SELF`]).
    pub fn schedule(&mut self, delay: Time, msg: M) {
        let seq = self.next_seq();
        let ev = Event {
            key: pack(self.now.saturating_add(delay), self.me, seq),
            dst_local: self.local,
            port: InPort::SELF.0,
            msg,
        };
        self.push(ev);
    }

    fn next_seq(&mut self) -> u64 {
        let s = *self.seq;
        *self.seq += 1;
        if s >= MAX_SEQ && self.violation.is_none() {
            *self.violation = Some(RunError::SequenceOverflow { component: self.me });
        }
        s
    }

    fn push(&mut self, mut ev: Event<M>) {
        if self.fault == Fault::NoTieBreak {
            ev.key = pack(ev.time(), 0, *self.fifo);
            *self.fifo += 1;
        }
        self.queue.push(ev);
    }
}

/// Builds a model: components, each in a partition, and the links between
/// them.
pub struct ModelBuilder<C: Component> {
    comps: Vec<(String, u32, C)>,
    links: Vec<(u32, u32, Time)>,
}

impl<C: Component> Default for ModelBuilder<C> {
    fn default() -> Self {
        ModelBuilder {
            comps: Vec::new(),
            links: Vec::new(),
        }
    }
}

impl<C: Component> ModelBuilder<C> {
    /// An empty model.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a component to partition `partition` (any number; partitions
    /// are renumbered densely in increasing order). Components of one
    /// partition always run on one thread.
    pub fn add(&mut self, name: impl Into<String>, partition: u32, component: C) -> ComponentId {
        self.comps.push((name.into(), partition, component));
        ComponentId(self.comps.len() as u32 - 1)
    }

    /// Adds a one-way link: a new outgoing port of `from` and a new
    /// incoming port of `to`; what is sent arrives `latency` picoseconds
    /// later.
    pub fn link(&mut self, from: ComponentId, to: ComponentId, latency: Time) {
        self.links.push((from.0, to.0, latency));
    }

    /// Checks the links and builds the simulation.
    pub fn build(self) -> Result<Simulation<C>, BuildError> {
        let n = self.comps.len();
        if n > MAX_COMPONENTS {
            return Err(BuildError::TooManyComponents { count: n });
        }
        let name = |i: u32| self.comps[i as usize].0.clone();
        for (l, &(from, to, latency)) in self.links.iter().enumerate() {
            for c in [from, to] {
                if c as usize >= n {
                    return Err(BuildError::NoSuchComponent {
                        link: l,
                        component: c,
                        count: n,
                    });
                }
            }
            if from == to {
                return Err(BuildError::SelfLink {
                    link: l,
                    name: name(from),
                });
            }
            let (pf, pt) = (self.comps[from as usize].1, self.comps[to as usize].1);
            if latency == 0 && pf != pt {
                return Err(BuildError::ZeroLatencyAcrossPartitions {
                    link: l,
                    from: name(from),
                    to: name(to),
                    from_partition: pf,
                    to_partition: pt,
                });
            }
        }
        if let Some(cycle) = zero_latency_cycle(n, &self.links) {
            let names: Vec<String> = cycle.iter().map(|&c| name(c)).collect();
            return Err(BuildError::ZeroLatencyCycle {
                cycle: names.join(" -> "),
            });
        }

        // Dense partition numbers, in increasing order of the labels.
        let mut labels: Vec<u32> = self.comps.iter().map(|c| c.1).collect();
        labels.sort_unstable();
        labels.dedup();
        let dense: HashMap<u32, u32> = labels
            .iter()
            .enumerate()
            .map(|(i, &l)| (l, i as u32))
            .collect();
        let parts = labels.len();

        // Each component's partition and index inside it.
        let mut counts = vec![0u32; parts];
        let locs: Vec<(u32, u32)> = self
            .comps
            .iter()
            .map(|c| {
                let p = dense[&c.1];
                counts[p as usize] += 1;
                (p, counts[p as usize] - 1)
            })
            .collect();

        let mut names: Vec<Names> = self
            .comps
            .iter()
            .map(|c| Names {
                name: c.0.clone(),
                ..Names::default()
            })
            .collect();
        let mut routes: Vec<Vec<Route>> = vec![Vec::new(); n];
        let mut lookahead = Time::MAX;
        for &(from, to, latency) in &self.links {
            let (f, t) = (from as usize, to as usize);
            let in_port = names[t].inp.len() as u32;
            let peer = names[f].name.clone();
            names[t].inp.push(peer);
            let peer = names[t].name.clone();
            names[f].out.push(peer);
            routes[f].push(Route {
                dst: to,
                dst_partition: locs[t].0,
                dst_local: locs[t].1,
                in_port,
                latency,
            });
            if locs[f].0 != locs[t].0 {
                lookahead = lookahead.min(latency);
            }
        }

        let mut partitions: Vec<Partition<C>> = (0..parts)
            .map(|i| Partition {
                index: i as u32,
                comps: Vec::new(),
                meta: Vec::new(),
                routes: Vec::new(),
                queue: EventQueue::default(),
                outbox: (0..parts).map(|_| Vec::new()).collect(),
                trace: None,
                events: 0,
                fifo: 0,
                violation: None,
                panic: None,
            })
            .collect();
        for (id, ((_, _, comp), (names, routes))) in self
            .comps
            .into_iter()
            .zip(names.into_iter().zip(routes))
            .enumerate()
        {
            let part = &mut partitions[locs[id].0 as usize];
            let start = part.routes.len();
            part.routes.extend(routes);
            part.meta.push(Meta {
                id: id as u32,
                seq: 0,
                routes: start..part.routes.len(),
                names,
            });
            part.comps.push(comp);
        }
        Ok(Simulation {
            parts: partitions,
            locs,
            lookahead,
            initialized: false,
            fault: Fault::None,
        })
    }
}

/// A cycle of zero-latency links, as the components along it (the first
/// repeated at the end), if there is one.
pub(crate) fn zero_latency_cycle(n: usize, links: &[(u32, u32, Time)]) -> Option<Vec<u32>> {
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(f, t, l) in links {
        if l == 0 {
            adj[f as usize].push(t);
        }
    }
    // Iterative depth-first search: 0 unvisited, 1 on the stack, 2 done.
    let mut color = vec![0u8; n];
    for root in 0..n {
        if color[root] != 0 || adj[root].is_empty() {
            continue;
        }
        let mut stack: Vec<(u32, usize)> = vec![(root as u32, 0)];
        color[root] = 1;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&w) = adj[v as usize].get(*next) {
                *next += 1;
                match color[w as usize] {
                    0 => {
                        color[w as usize] = 1;
                        stack.push((w, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|&(c, _)| c == w).unwrap_or(0);
                        let mut cycle: Vec<u32> = stack[from..].iter().map(|&(c, _)| c).collect();
                        cycle.push(w);
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                color[v as usize] = 2;
                stack.pop();
            }
        }
    }
    None
}

/// State the worker threads share during a run. Everything is double
/// buffered by epoch parity: in epoch k threads write buffer `k % 2` before
/// the barrier and read it after, while nobody writes it again before the
/// next barrier has been passed by all. One barrier per epoch suffices.
struct Shared<M> {
    /// Per buffer, per partition: the earliest time of its queued events
    /// and of the messages it posted.
    next: [Vec<AtomicU64>; 2],
    /// Per buffer, `mail[from * partitions + to]`: messages between
    /// partitions, posted at the end of a window and collected after the
    /// barrier.
    mail: [Vec<Mutex<Vec<Event<M>>>>; 2],
    barrier: EpochBarrier,
    /// Per buffer: a partition met a causality violation or a panic; every
    /// thread stops after the barrier.
    failed: [AtomicBool; 2],
}

/// A model ready to run (see [`ModelBuilder`] and
/// [`crate::Topology::build`]).
pub struct Simulation<C: Component> {
    parts: Vec<Partition<C>>,
    /// Per component: (partition, index inside it).
    locs: Vec<(u32, u32)>,
    lookahead: Time,
    initialized: bool,
    fault: Fault,
}

impl<C: Component> Simulation<C> {
    /// The number of components.
    pub fn len(&self) -> usize {
        self.locs.len()
    }

    /// Whether the model has no component.
    pub fn is_empty(&self) -> bool {
        self.locs.is_empty()
    }

    /// The number of partitions.
    pub fn partitions(&self) -> usize {
        self.parts.len()
    }

    /// The lookahead: the smallest latency of a link between partitions
    /// (`None` when no link crosses partitions).
    pub fn lookahead(&self) -> Option<Time> {
        (self.lookahead != Time::MAX).then_some(self.lookahead)
    }

    /// The partition a component runs in.
    pub fn partition_of(&self, id: ComponentId) -> usize {
        self.locs[id.0 as usize].0 as usize
    }

    fn meta(&self, id: ComponentId) -> &Meta {
        let (p, l) = self.locs[id.0 as usize];
        &self.parts[p as usize].meta[l as usize]
    }

    /// A component's name.
    pub fn name(&self, id: ComponentId) -> &str {
        &self.meta(id).names.name
    }

    /// A component's state.
    pub fn component(&self, id: ComponentId) -> &C {
        let (p, l) = self.locs[id.0 as usize];
        &self.parts[p as usize].comps[l as usize]
    }

    /// Every component, in id order.
    pub fn components(&self) -> impl Iterator<Item = (ComponentId, &C)> {
        (0..self.len() as u32).map(|i| (ComponentId(i), self.component(ComponentId(i))))
    }

    /// Events handled so far.
    pub fn events(&self) -> u64 {
        self.parts.iter().map(|p| p.events).sum()
    }

    /// The time of the earliest event still queued.
    pub fn next_time(&self) -> Option<Time> {
        self.parts.iter().filter_map(Partition::next_time).min()
    }

    /// Records every handled event from now on ([`Simulation::trace`]).
    pub fn enable_trace(&mut self) {
        for p in &mut self.parts {
            p.trace.get_or_insert_with(Vec::new);
        }
    }

    /// The recorded events, component by component in id order, each
    /// component's in the order it handled them.
    pub fn trace(&self) -> Vec<TraceEntry> {
        let mut all: Vec<TraceEntry> = self
            .parts
            .iter()
            .flat_map(|p| p.trace.iter().flatten().copied())
            .collect();
        all.sort_by_key(|e| e.dst);
        all
    }

    /// [`Simulation::trace`] as bytes ([`TraceEntry::to_bytes`]).
    pub fn trace_bytes(&self) -> Vec<u8> {
        self.trace().iter().flat_map(|e| e.to_bytes()).collect()
    }

    #[cfg(test)]
    pub(crate) fn set_fault(&mut self, fault: Fault) {
        self.fault = fault;
    }

    /// Calls every component's `init` (once, before the first run) and
    /// delivers what they sent.
    fn init(&mut self) {
        if self.initialized {
            return;
        }
        self.initialized = true;
        let lookahead = self.lookahead;
        for part in &mut self.parts {
            part.init(lookahead, self.fault);
        }
        self.exchange();
    }

    /// Moves every outbox's messages to their partitions (single-threaded).
    fn exchange(&mut self) {
        let n = self.parts.len();
        for from in 0..n {
            for to in 0..n {
                let mut msgs = std::mem::take(&mut self.parts[from].outbox[to]);
                for ev in msgs.drain(..) {
                    self.parts[to].push(ev, self.fault);
                }
                self.parts[from].outbox[to] = msgs;
            }
        }
    }

    /// Runs the model: every event with a time before `opts.until`, on
    /// `opts.threads` host threads. The result (every component's state and
    /// the trace) is the same for any number of threads.
    pub fn run(&mut self, opts: RunOptions) -> Result<RunStats, RunError> {
        self.init();
        let p = self.parts.len();
        let threads = opts.threads.clamp(1, p.max(1));
        let window = match self.fault {
            Fault::WideWindow => self.lookahead.saturating_mul(2),
            _ => self.lookahead,
        };
        let lookahead = self.lookahead;
        let fault = self.fault;
        let until = opts.until;
        let events_before = self.events();
        let new_mail = || (0..p * p).map(|_| Mutex::new(Vec::new())).collect();
        let shared: Shared<C::Msg> = Shared {
            next: [
                self.parts
                    .iter()
                    .map(|part| AtomicU64::new(part.next_time().unwrap_or(Time::MAX)))
                    .collect(),
                (0..p).map(|_| AtomicU64::new(Time::MAX)).collect(),
            ],
            mail: [new_mail(), new_mail()],
            barrier: EpochBarrier::new(threads),
            failed: [AtomicBool::new(false), AtomicBool::new(false)],
        };
        // Partitions dealt to threads by weight (their components), largest
        // first to the least loaded thread. Any assignment gives the same
        // result; this one balances a GPU whose partitions differ in size.
        let mut order: Vec<usize> = (0..p).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.parts[i].comps.len()));
        let mut load = vec![0usize; threads];
        let mut owner = vec![0usize; p];
        for i in order {
            let t = (0..threads).min_by_key(|&t| (load[t], t)).unwrap_or(0);
            load[t] += self.parts[i].comps.len().max(1);
            owner[i] = t;
        }
        let mut buckets: Vec<Vec<&mut Partition<C>>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, part) in self.parts.iter_mut().enumerate() {
            buckets[owner[i]].push(part);
        }
        let run = Run {
            shared: &shared,
            window,
            lookahead,
            until,
            fault,
        };
        let epochs = std::thread::scope(|s| {
            let mut it = buckets.into_iter();
            let first = it.next().unwrap_or_default();
            let handles: Vec<_> = it.map(|b| s.spawn(|| run.worker(b))).collect();
            let epochs = run.worker(first);
            for h in handles {
                if let Err(panic) = h.join() {
                    std::panic::resume_unwind(panic);
                }
            }
            epochs
        });
        for part in &mut self.parts {
            if let Some(panic) = part.panic.take() {
                std::panic::resume_unwind(panic);
            }
        }
        if let Some(v) = self.parts.iter_mut().find_map(|p| p.violation.take()) {
            return Err(v);
        }
        Ok(RunStats {
            events: self.events() - events_before,
            epochs,
            threads,
        })
    }
}

/// One run's parameters, shared by its worker threads.
struct Run<'a, M> {
    shared: &'a Shared<M>,
    window: Time,
    lookahead: Time,
    until: Time,
    fault: Fault,
}

impl<M: Send> Run<'_, M> {
    /// One thread's loop over barrier epochs; returns the number of epochs.
    ///
    /// Every thread computes the same window from the published times, so
    /// all leave the loop together, after collecting their last mail.
    fn worker<C: Component<Msg = M>>(&self, mut mine: Vec<&mut Partition<C>>) -> u64 {
        let sh = self.shared;
        let n = sh.next[0].len();
        let mut epochs = 0;
        let mut b = 0;
        loop {
            for part in mine.iter_mut() {
                part.collect(&sh.mail[b], n, self.fault);
            }
            let tmin = sh.next[b]
                .iter()
                .map(|a| a.load(Ordering::Relaxed))
                .min()
                .unwrap_or(Time::MAX);
            if tmin >= self.until || sh.failed[b].load(Ordering::Relaxed) {
                return epochs;
            }
            // Every message between partitions sent from an event at
            // t >= tmin arrives at t + latency >= tmin + lookahead: the
            // window's events can all run without waiting for anyone.
            let end = tmin.saturating_add(self.window).min(self.until);
            let nb = 1 - b;
            for part in mine.iter_mut() {
                if part.panic.is_none() {
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        part.process(end, self.lookahead, self.fault)
                    }));
                    if let Err(panic) = r {
                        part.panic = Some(panic);
                    }
                }
                let posted = part.post(&sh.mail[nb], n);
                let next = part.next_time().unwrap_or(Time::MAX).min(posted);
                sh.next[nb][part.index as usize].store(next, Ordering::Relaxed);
                if part.violation.is_some() || part.panic.is_some() {
                    sh.failed[nb].store(true, Ordering::Relaxed);
                }
            }
            sh.barrier.wait();
            b = nb;
            epochs += 1;
        }
    }
}

impl<C: Component> Partition<C> {
    fn next_time(&self) -> Option<Time> {
        self.queue.next_time()
    }

    fn push(&mut self, mut ev: Event<C::Msg>, fault: Fault) {
        if fault == Fault::NoTieBreak {
            ev.key = pack(ev.time(), 0, self.fifo);
            self.fifo += 1;
        }
        self.queue.push(ev);
    }

    /// Calls `f` with component `local` and its context at `now`, in a
    /// window that ends at `end`.
    fn with_ctx(
        &mut self,
        local: usize,
        now: Time,
        end: Time,
        (lookahead, fault): (Time, Fault),
        f: impl FnOnce(&mut C, &mut Ctx<'_, C::Msg>),
    ) {
        let Meta {
            id,
            seq,
            routes,
            names,
        } = &mut self.meta[local];
        let mut ctx = Ctx {
            now,
            me: *id,
            local: local as u32,
            partition: self.index,
            seq,
            routes: &self.routes[routes.clone()],
            names,
            queue: &mut self.queue,
            outbox: &mut self.outbox,
            window_end: end,
            lookahead,
            violation: &mut self.violation,
            fault,
            fifo: &mut self.fifo,
        };
        f(&mut self.comps[local], &mut ctx);
    }

    fn init(&mut self, lookahead: Time, fault: Fault) {
        for local in 0..self.comps.len() {
            self.with_ctx(local, 0, 0, (lookahead, fault), |c, ctx| c.init(ctx));
        }
    }

    /// Handles the queued events with a time before `end`, earliest first.
    fn process(&mut self, end: Time, lookahead: Time, fault: Fault) {
        while self.queue.next_time().is_some_and(|t| t < end) {
            let Some(ev) = self.queue.pop() else { break };
            let local = ev.dst_local as usize;
            if let Some(t) = &mut self.trace {
                t.push(TraceEntry {
                    time: ev.time(),
                    dst: self.meta[local].id,
                    port: ev.port,
                    src: ev.src(),
                    seq: ev.seq(),
                });
            }
            let (now, port) = (ev.time(), InPort(ev.port));
            self.with_ctx(local, now, end, (lookahead, fault), |c, ctx| {
                c.handle(ctx, port, ev.msg)
            });
            self.events += 1;
        }
    }

    /// Hands this window's messages for other partitions to the mailboxes;
    /// returns the earliest time among them.
    fn post(&mut self, mail: &[Mutex<Vec<Event<C::Msg>>>], n: usize) -> Time {
        let mut first = Time::MAX;
        for (to, out) in self.outbox.iter_mut().enumerate() {
            if out.is_empty() {
                continue;
            }
            first = out.iter().map(Event::time).fold(first, Time::min);
            let mut slot = lock(&mail[self.index as usize * n + to]);
            if slot.is_empty() {
                std::mem::swap(&mut *slot, out);
            } else {
                slot.append(out);
            }
        }
        first
    }

    /// Queues the messages other partitions posted for this one. The queue
    /// orders them by key, so the order they are collected in is irrelevant.
    fn collect(&mut self, mail: &[Mutex<Vec<Event<C::Msg>>>], n: usize, fault: Fault) {
        for from in 0..n {
            let mut slot = lock(&mail[from * n + self.index as usize]);
            for ev in slot.drain(..) {
                self.push(ev, fault);
            }
        }
    }
}

/// Locks a mailbox; a poisoned one (a panic while it was held) is still
/// consistent, since every critical section only moves whole events.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
