//! The engine's determinism and ordering tests.

use crate::engine::Fault;
use crate::synthetic::{Cut, GpuShape, Msg, Synthetic};
use crate::time::{Clock, NS, Time};
use crate::{
    BuildError, Component, ComponentId, Ctx, InPort, ModelBuilder, OutPort, RunError, RunOptions,
    Simulation, Topology,
};

/// A small GPU with short links, so that a short run has many round trips
/// and many simultaneous events.
fn shape() -> GpuShape {
    GpuShape {
        xcds: 8,
        cus_per_shader_engine: vec![3, 3, 2, 2],
        clock: Clock::from_mhz(2100).unwrap(),
        // Multiples of the period: answers arrive on clock edges, together
        // with the compute units' ticks.
        cu_l2_cycles: 42,
        l2_memory_cycles: 84,
    }
}

fn model(cut: Cut, fault: Fault) -> Simulation<Synthetic> {
    let topo = Topology::from_str("synthetic", &shape().topology_json(cut)).unwrap();
    let period = shape().clock.period();
    let mut sim = topo
        .build(|inst| Synthetic::new(inst.kind, period, inst.path.len() as u64))
        .unwrap();
    sim.set_fault(fault);
    sim.enable_trace();
    sim
}

/// Everything a run produced: the trace and every component's state, as
/// bytes.
struct Outcome {
    trace: Vec<u8>,
    states: Vec<u8>,
    events: u64,
}

fn outcome(sim: &Simulation<Synthetic>) -> Outcome {
    Outcome {
        trace: sim.trace_bytes(),
        states: sim
            .components()
            .flat_map(|(_, c)| {
                let mut b = c.state().to_le_bytes().to_vec();
                b.extend(c.handled().to_le_bytes());
                b
            })
            .collect(),
        events: sim.events(),
    }
}

const UNTIL: Time = 3_000 * NS;

fn run(cut: Cut, threads: usize, fault: Fault) -> Result<Outcome, RunError> {
    let mut sim = model(cut, fault);
    sim.run(RunOptions {
        threads,
        until: UNTIL,
    })?;
    Ok(outcome(&sim))
}

const CUTS: [Cut; 3] = [Cut::None, Cut::Xcd, Cut::ShaderEngine];

#[test]
fn traces_are_identical_at_any_thread_count_and_partitioning() {
    let reference = run(Cut::None, 1, Fault::None).unwrap();
    // The model is busy and full of simultaneous events at one component
    // from different senders: the order among them is what is tested.
    assert!(reference.events > 100_000, "{} events", reference.events);
    let mut sim = model(Cut::None, Fault::None);
    sim.run(RunOptions {
        threads: 1,
        until: UNTIL,
    })
    .unwrap();
    let trace = sim.trace();
    let ties = trace
        .windows(2)
        .filter(|w| w[0].dst == w[1].dst && w[0].time == w[1].time && w[0].src != w[1].src)
        .count();
    assert!(
        ties > 1_000,
        "only {ties} simultaneous arrivals from different senders"
    );

    for cut in CUTS {
        for threads in [1, 2, 8] {
            let o = run(cut, threads, Fault::None).unwrap();
            assert_eq!(
                o.events, reference.events,
                "{cut:?} at {threads} threads: event count"
            );
            assert!(
                o.trace == reference.trace,
                "{cut:?} at {threads} threads: the event trace differs"
            );
            assert!(
                o.states == reference.states,
                "{cut:?} at {threads} threads: component states differ"
            );
        }
    }
}

#[test]
fn a_run_in_pieces_equals_one_run() {
    let whole = run(Cut::Xcd, 2, Fault::None).unwrap();
    let mut sim = model(Cut::Xcd, Fault::None);
    for until in [UNTIL / 3, UNTIL / 3 + 1, UNTIL] {
        sim.run(RunOptions { threads: 2, until }).unwrap();
    }
    let pieces = outcome(&sim);
    assert!(pieces.trace == whole.trace && pieces.states == whole.states);
}

/// The determinism test above is only worth something if it fails on an
/// engine that orders simultaneous events by arrival: this runs it on one.
#[test]
fn without_the_tie_break_partitionings_disagree() {
    let reference = run(Cut::None, 1, Fault::NoTieBreak).unwrap();
    let differing = CUTS
        .iter()
        .flat_map(|&cut| [1, 2, 8].map(|t| (cut, t)))
        .filter(|&(cut, t)| {
            // The trace holds the fault's stand-in keys; the states are
            // what the model computed.
            run(cut, t, Fault::NoTieBreak).unwrap().states != reference.states
        })
        .count();
    assert!(
        differing > 0,
        "a FIFO tie-break gave the same result everywhere: the test cannot see it"
    );
}

/// Windows wider than the lookahead let messages between partitions land
/// inside the window being run; the engine must stop with an error, not
/// give a result.
#[test]
fn messages_inside_the_window_are_refused() {
    for cut in [Cut::Xcd, Cut::ShaderEngine] {
        for threads in [1, 2] {
            match run(cut, threads, Fault::WideWindow) {
                Err(RunError::Causality {
                    time,
                    window_end,
                    lookahead,
                    ..
                }) => {
                    assert!(time < window_end, "{time} {window_end}");
                    assert!(lookahead > 0);
                }
                Ok(_) => panic!(
                    "{cut:?} at {threads} threads: a window of twice the lookahead ran without error"
                ),
                Err(e) => panic!("{cut:?} at {threads} threads: {e}"),
            }
        }
    }
    // Without partitions there is nothing to cross: the wide window is the
    // whole run and the result is the reference's.
    let a = run(Cut::None, 1, Fault::WideWindow).unwrap();
    let b = run(Cut::None, 1, Fault::None).unwrap();
    assert!(a.trace == b.trace);
}

/// A component that records what it receives and forwards or answers.
#[derive(Default)]
struct Probe {
    log: Vec<(Time, u32, u64)>,
    /// Sends at init: (port, value).
    start: Vec<(u32, u64)>,
    /// Answer each message on the port back to its sender, this many times.
    echo: u32,
}

impl Component for Probe {
    type Msg = u64;
    fn init(&mut self, ctx: &mut Ctx<'_, u64>) {
        for &(p, v) in &self.start {
            ctx.send(OutPort(p), v);
        }
    }
    fn handle(&mut self, ctx: &mut Ctx<'_, u64>, port: InPort, msg: u64) {
        self.log.push((ctx.now(), port.0, msg));
        if msg < u64::from(self.echo)
            && let Some(back) = port
                .link()
                .and_then(|i| ctx.out_port(&ctx.in_peers()[i].clone()))
        {
            ctx.send(back, msg + 1);
        }
    }
}

/// `a` (partition 0) and `z` (partition 1) answer each other up to 5;
/// a -> z takes 7 ps, z -> a 5 ps; `a` starts.
fn ping_pong() -> (Simulation<Probe>, ComponentId, ComponentId) {
    let mut b = ModelBuilder::new();
    let a = b.add(
        "a",
        0,
        Probe {
            start: vec![(0, 0)],
            echo: 5,
            ..Probe::default()
        },
    );
    let z = b.add(
        "z",
        1,
        Probe {
            echo: 5,
            ..Probe::default()
        },
    );
    b.link(a, z, 7);
    b.link(z, a, 5);
    (b.build().unwrap(), a, z)
}

#[test]
fn latencies_add_up() {
    for threads in [1, 2] {
        let (mut sim, a, z) = ping_pong();
        assert_eq!(sim.lookahead(), Some(5));
        sim.run(RunOptions {
            threads,
            until: Time::MAX,
        })
        .unwrap();
        assert_eq!(
            sim.component(z).log,
            vec![(7, 0, 0), (19, 0, 2), (31, 0, 4)]
        );
        assert_eq!(
            sim.component(a).log,
            vec![(12, 0, 1), (24, 0, 3), (36, 0, 5)]
        );
    }
    // Until is exclusive.
    let (mut sim, _, z) = ping_pong();
    sim.run(RunOptions {
        threads: 1,
        until: 19,
    })
    .unwrap();
    assert_eq!(sim.component(z).log, vec![(7, 0, 0)]);
    assert_eq!(sim.next_time(), Some(19));
}

#[test]
fn simultaneous_events_go_by_sender_then_sequence() {
    // Senders 0..3 each send two messages that arrive together at the sink
    // (id 4), the senders added in an order unlike their partitions.
    for threads in [1, 3] {
        let mut b = ModelBuilder::new();
        let mut senders = Vec::new();
        for i in 0..4u32 {
            senders.push(b.add(
                format!("s{i}"),
                3 - i,
                Probe {
                    start: vec![(0, u64::from(i) * 10), (0, u64::from(i) * 10 + 1)],
                    ..Probe::default()
                },
            ));
        }
        let sink = b.add("sink", 9, Probe::default());
        for &s in senders.iter().rev() {
            b.link(s, sink, 3);
        }
        let mut sim = b.build().unwrap();
        sim.run(RunOptions {
            threads,
            until: Time::MAX,
        })
        .unwrap();
        let got: Vec<u64> = sim.component(sink).log.iter().map(|e| e.2).collect();
        assert_eq!(got, vec![0, 1, 10, 11, 20, 21, 30, 31], "{threads} threads");
        // Ports are numbered in link order: s3's link came first.
        let ports: Vec<u32> = sim.component(sink).log.iter().map(|e| e.1).collect();
        assert_eq!(ports, vec![3, 3, 2, 2, 1, 1, 0, 0]);
    }
}

#[test]
fn build_errors_name_the_link() {
    let probe = Probe::default;
    let mut b = ModelBuilder::new();
    let a = b.add("a", 0, probe());
    let z = b.add("z", 1, probe());
    b.link(a, z, 0);
    let e = b.build().err().unwrap();
    assert!(
        matches!(e, BuildError::ZeroLatencyAcrossPartitions { link: 0, .. }),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("`a` (partition 0) -> `z` (partition 1) has zero latency"),
        "{e}"
    );

    let mut b = ModelBuilder::new();
    let a = b.add("a", 0, probe());
    let z = b.add("z", 0, probe());
    let y = b.add("y", 0, probe());
    b.link(a, z, 0);
    b.link(z, y, 0);
    b.link(y, z, 0);
    b.link(a, y, 4);
    let e = b.build().err().unwrap();
    assert_eq!(
        e.to_string(),
        "zero-latency links form a cycle (z -> y -> z); an event could go round it forever without time advancing: give one of them a latency"
    );

    let mut b = ModelBuilder::new();
    let a = b.add("a", 0, probe());
    b.link(a, a, 3);
    assert!(matches!(
        b.build().err().unwrap(),
        BuildError::SelfLink { .. }
    ));

    let mut b = ModelBuilder::new();
    let a = b.add("a", 0, probe());
    b.link(a, ComponentId(7), 3);
    assert!(matches!(
        b.build().err().unwrap(),
        BuildError::NoSuchComponent { component: 7, .. }
    ));

    // Zero latency inside a partition is allowed, and so is a zero-latency
    // chain without a cycle.
    let mut b = ModelBuilder::new();
    let a = b.add(
        "a",
        0,
        Probe {
            start: vec![(0, 0)],
            ..Probe::default()
        },
    );
    let z = b.add("z", 0, probe());
    b.link(a, z, 0);
    let mut sim = b.build().unwrap();
    sim.run(RunOptions {
        threads: 1,
        until: 1,
    })
    .unwrap();
    assert_eq!(sim.component(z).log, vec![(0, 0, 0)]);
}

/// A component that panics when it handles its first event.
struct Bomb;

impl Component for Bomb {
    type Msg = Msg;
    fn init(&mut self, ctx: &mut Ctx<'_, Msg>) {
        ctx.schedule(10, Msg::Tick);
    }
    fn handle(&mut self, _: &mut Ctx<'_, Msg>, _: InPort, _: Msg) {
        panic!("bomb");
    }
}

#[test]
fn a_component_panic_reaches_the_caller_without_a_hang() {
    for threads in [1, 2] {
        let mut b: ModelBuilder<Bomb> = ModelBuilder::new();
        let x = b.add("x", 0, Bomb);
        let y = b.add("y", 1, Bomb);
        b.link(x, y, 100);
        let mut sim = b.build().unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            sim.run(RunOptions {
                threads,
                until: Time::MAX,
            })
        }));
        let msg = r.err().unwrap();
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"bomb"));
    }
}

#[test]
fn event_keys_order_by_time_then_sender_then_sequence() {
    use crate::engine::{MAX_SEQ, pack};
    let keys = [
        pack(5, 0, 0),
        pack(5, 0, MAX_SEQ - 1),
        pack(5, 1, 0),
        pack(5, (crate::engine::MAX_COMPONENTS - 1) as u32, MAX_SEQ - 1),
        pack(6, 0, 0),
        pack(Time::MAX, 0, 0),
    ];
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
}
