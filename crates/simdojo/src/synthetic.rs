//! A synthetic GPU traffic model for the engine's tests and benchmark: the
//! shape of a GPU (compute units, L2 caches, memory) with made-up behaviour
//! whose every outcome depends on the order events arrive in.
//!
//! - A compute unit ticks every clock cycle. On a tick it folds the time into
//!   its state and, if its state says so and fewer than
//!   [`Synthetic::MAX_OUTSTANDING`] requests are in flight, sends a request
//!   (carrying its state) to the first component it links to.
//! - An L2 cache folds each request (and the port it came on) into its
//!   state; the state decides hit or miss. A hit is answered on the link
//!   back to the requester; a miss goes on to the memory, whose answer the
//!   L2 passes back to the requester (misses are answered in order).
//! - The memory answers every request on the link back, with its state.
//! - Every other kind does nothing.
//!
//! Latencies are the links'; nothing here is calibrated: it exists to load
//! the engine with many simultaneous events (all compute units tick at the
//! same instants, over links of equal latency).

use std::collections::VecDeque;

use crate::engine::{Component, Ctx, InPort, OutPort};
use crate::time::{Clock, Time};
use crate::topology::Kind;

/// The messages of the synthetic model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Msg {
    /// A compute unit's clock tick (a self-event).
    Tick,
    /// A request carrying the sender's state.
    Request(u64),
    /// An answer carrying the answerer's state.
    Response(u64),
}

/// One component of the synthetic model.
#[derive(Debug, Clone)]
pub struct Synthetic {
    kind: Kind,
    period: Time,
    state: u64,
    /// Events handled.
    handled: u64,
    outstanding: u32,
    /// Compute unit: the port to its cache. L2: the port to memory.
    up: Option<OutPort>,
    /// Per incoming port: the outgoing port back to that peer.
    back: Vec<Option<OutPort>>,
    /// L2: the incoming ports of the requests that went to memory, oldest
    /// first.
    misses: VecDeque<u32>,
}

/// A step of a 64-bit mixing function: the result depends on the order of
/// the values folded in.
fn mix(state: u64, v: u64) -> u64 {
    (state ^ v)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29)
        .wrapping_add(0x632B_E59B_D9B4_E019)
}

impl Synthetic {
    /// Requests a compute unit keeps in flight at most.
    pub const MAX_OUTSTANDING: u32 = 4;

    /// A component of kind `kind`; compute units tick every `period`
    /// picoseconds; `seed` starts its state.
    pub fn new(kind: Kind, period: Time, seed: u64) -> Synthetic {
        Synthetic {
            kind,
            period: period.max(1),
            state: mix(seed, 0x5EED),
            handled: 0,
            outstanding: 0,
            up: None,
            back: Vec::new(),
            misses: VecDeque::new(),
        }
    }

    /// The state: a digest of everything the component has handled.
    pub fn state(&self) -> u64 {
        self.state
    }

    /// Events handled.
    pub fn handled(&self) -> u64 {
        self.handled
    }

    fn answer(&self, ctx: &mut Ctx<'_, Msg>, port: InPort, msg: Msg) {
        if let Some(Some(back)) = port.link().and_then(|i| self.back.get(i)) {
            ctx.send(*back, msg);
        }
    }
}

impl Component for Synthetic {
    type Msg = Msg;

    fn init(&mut self, ctx: &mut Ctx<'_, Msg>) {
        self.back = ctx.in_peers().iter().map(|p| ctx.out_port(p)).collect();
        match self.kind {
            Kind::ComputeUnit => {
                self.up = (ctx.out_ports() > 0).then_some(OutPort(0));
                ctx.schedule(self.period, Msg::Tick);
            }
            Kind::L2Cache => {
                // Memory is the peer that is not a compute unit.
                self.up = (0..ctx.out_ports() as u32)
                    .map(OutPort)
                    .find(|&p| ctx.out_peer(p).ends_with("gpu_memory"));
            }
            _ => {}
        }
    }

    fn handle(&mut self, ctx: &mut Ctx<'_, Msg>, port: InPort, msg: Msg) {
        self.handled += 1;
        match (self.kind, msg) {
            (Kind::ComputeUnit, Msg::Tick) => {
                self.state = mix(self.state, ctx.now());
                if let Some(up) = self.up
                    && self.outstanding < Self::MAX_OUTSTANDING
                    && self.state.is_multiple_of(4)
                {
                    self.outstanding += 1;
                    ctx.send(up, Msg::Request(self.state));
                }
                ctx.schedule(self.period, Msg::Tick);
            }
            (Kind::ComputeUnit, Msg::Response(v)) => {
                self.state = mix(self.state, v);
                self.outstanding = self.outstanding.saturating_sub(1);
            }
            (Kind::L2Cache, Msg::Request(v)) => {
                self.state = mix(self.state, v ^ u64::from(port.0));
                match self.up {
                    Some(up) if self.state % 8 >= 5 => {
                        self.misses.push_back(port.0);
                        ctx.send(up, Msg::Request(self.state));
                    }
                    _ => self.answer(ctx, port, Msg::Response(self.state)),
                }
            }
            (Kind::L2Cache, Msg::Response(v)) => {
                self.state = mix(self.state, v);
                if let Some(p) = self.misses.pop_front() {
                    self.answer(ctx, InPort(p), Msg::Response(self.state));
                }
            }
            (Kind::GpuMemory, Msg::Request(v)) => {
                self.state = mix(self.state, v ^ u64::from(port.0));
                self.answer(ctx, port, Msg::Response(self.state));
            }
            (_, _) => self.state = mix(self.state, 1),
        }
    }
}

/// How [`GpuShape::topology_json`] cuts the GPU into partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// One partition: the whole GPU on one thread.
    None,
    /// One partition per XCD (with its L2 and compute units), plus the
    /// root's (memory, command processor).
    Xcd,
    /// One per XCD (its L2) and one per shader engine (its compute units),
    /// plus the root's.
    ShaderEngine,
}

/// The shape of a synthetic GPU.
#[derive(Debug, Clone)]
pub struct GpuShape {
    pub xcds: u32,
    /// Compute units of each shader engine of an XCD.
    pub cus_per_shader_engine: Vec<u32>,
    /// The compute units' clock.
    pub clock: Clock,
    /// Compute unit to L2 latency (each way), in cycles.
    pub cu_l2_cycles: u64,
    /// L2 to memory latency (each way), in cycles.
    pub l2_memory_cycles: u64,
}

impl GpuShape {
    /// The size of an MI300X: 8 XCDs of 4 shader engines with 10, 10, 9 and
    /// 9 compute units (38 per XCD, 304 in all) at 2100 MHz. The latencies
    /// are round figures, not measurements.
    pub fn mi300x() -> GpuShape {
        GpuShape {
            xcds: 8,
            cus_per_shader_engine: vec![10, 10, 9, 9],
            clock: Clock::from_mhz(2100).expect("2100 MHz is a clock"),
            cu_l2_cycles: 100,
            l2_memory_cycles: 200,
        }
    }

    /// Compute units in all.
    pub fn compute_units(&self) -> u32 {
        self.xcds * self.cus_per_shader_engine.iter().sum::<u32>()
    }

    /// The topology file of this shape, cut into partitions by `cut`.
    pub fn topology_json(&self, cut: Cut) -> String {
        let ses: Vec<String> = self
            .cus_per_shader_engine
            .iter()
            .enumerate()
            .map(|(i, n)| {
                format!(
                    r#""shader_engine[{i}]": {{ "partition": {}, "compute_unit[0:{n}]": {{}} }}"#,
                    cut == Cut::ShaderEngine
                )
            })
            .collect();
        format!(
            r#"{{
  "version": 1,
  "timing": {{
    "topology": {{
      "gpu_memory": {{}},
      "command_processor": {{}},
      "xcd[0:{xcds}]": {{
        "partition": {xcd_part},
        "l2_cache": {{}},
        {ses},
        "links": [
          {{ "from": "shader_engine[*].compute_unit[*]", "to": "l2_cache", "latency_ps": {cu_l2}, "duplex": true }}
        ]
      }},
      "links": [
        {{ "from": "xcd[*].l2_cache", "to": "gpu_memory", "latency_ps": {l2_mem}, "duplex": true }}
      ]
    }}
  }}
}}"#,
            xcds = self.xcds,
            xcd_part = cut != Cut::None,
            ses = ses.join(",\n        "),
            cu_l2 = self.clock.cycles(self.cu_l2_cycles),
            l2_mem = self.clock.cycles(self.l2_memory_cycles),
        )
    }
}
