//! Live counters of a node's GPUs: an execution plugin given to the node's
//! daemon ([`rocjitsu_kmd::daemon::Daemon::bind_with_plugins`]) that counts
//! what the metrics plugin counts (wave-instructions by family, bytes of
//! global memory and LDS), plus waves in flight and dispatch begin/end,
//! into atomics per GPU that the supervisor reads a few times a second
//! ([`Live::sample`]).
//!
//! Each host thread counts into its own totals and adds them to the GPU's
//! atomics every [`FLUSH`] wave-instructions and when it leaves a
//! workgroup, so a long kernel shows progress while it runs and counting
//! costs no atomic per instruction.

use mirage_core::metrics::{DispatchEvent, GpuSample, NodeSample};
use rocjitsu_gpu::plugin::{
    DispatchEnd, DispatchInfo, DispatchObserver, Family, GroupEvent, InstEvent, MemEvent, MemKind,
    Observer, Plugin, Space, Wants, WaveId,
};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// Wave-instructions a thread counts before adding them to the GPU's.
pub const FLUSH: u64 = 1 << 16;
/// Dispatch events kept for readers.
const EVENTS: usize = 256;

#[derive(Default)]
struct Gpu {
    waves_in_flight: AtomicI64,
    waves: AtomicU64,
    dispatches: AtomicU64,
    dispatches_active: AtomicI64,
    instructions: AtomicU64,
    by_family: [AtomicU64; Family::COUNT],
    /// Global memory: read, written, atomic; then LDS (all kinds).
    bytes: [AtomicU64; 4],
}

/// The counters of one node's GPUs.
pub struct Live {
    gpus: Vec<Gpu>,
    events: Mutex<(u64, VecDeque<DispatchEvent>)>,
}

impl Live {
    pub fn new(gpus: usize) -> Arc<Live> {
        Arc::new(Live {
            gpus: (0..gpus).map(|_| Gpu::default()).collect(),
            events: Mutex::new((0, VecDeque::new())),
        })
    }

    /// The plugin that feeds these counters.
    pub fn plugin(self: &Arc<Live>) -> Box<dyn Plugin> {
        Box::new(LivePlugin(self.clone()))
    }

    fn gpu(&self, i: u32) -> Option<&Gpu> {
        self.gpus.get(i as usize)
    }

    fn event(&self, mut e: DispatchEvent) {
        let mut g = self.events.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        e.id = g.0;
        if g.1.len() == EVENTS {
            g.1.pop_front();
        }
        g.1.push_back(e);
    }

    /// The counters now; `vram` and `queues` come from the daemon's own
    /// accounting (per GPU), `vram_size` from the configuration.
    pub fn sample(
        &self,
        node: u32,
        after_event: u64,
        vram: &[u64],
        vram_size: &[u64],
        queues: &[usize],
    ) -> NodeSample {
        let gpus = self
            .gpus
            .iter()
            .enumerate()
            .map(|(i, g)| GpuSample {
                gpu: i as u32,
                waves_in_flight: g.waves_in_flight.load(Relaxed).max(0),
                waves: g.waves.load(Relaxed),
                dispatches: g.dispatches.load(Relaxed),
                dispatches_active: g.dispatches_active.load(Relaxed).max(0) as u64,
                wave_instructions: g.instructions.load(Relaxed),
                by_family: Family::ALL
                    .iter()
                    .map(|f| (f.name().to_string(), g.by_family[*f as usize].load(Relaxed)))
                    .collect(),
                bytes_read: g.bytes[0].load(Relaxed),
                bytes_written: g.bytes[1].load(Relaxed),
                bytes_atomic: g.bytes[2].load(Relaxed),
                lds_bytes: g.bytes[3].load(Relaxed),
                vram_used: vram.get(i).copied().unwrap_or(0),
                vram_size: vram_size.get(i).copied().unwrap_or(0),
                queues: queues.get(i).copied().unwrap_or(0) as u64,
            })
            .collect();
        let events = self
            .events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .iter()
            .filter(|e| e.id > after_event)
            .cloned()
            .collect();
        NodeSample { node, gpus, events }
    }
}

struct LivePlugin(Arc<Live>);

impl Plugin for LivePlugin {
    fn name(&self) -> &'static str {
        "live"
    }

    fn wants(&self) -> Wants {
        Wants {
            instructions: true,
            memory: true,
            code: false,
        }
    }

    fn dispatch(&self, d: &DispatchInfo) -> Box<dyn DispatchObserver> {
        if let Some(g) = self.0.gpu(d.gpu) {
            g.dispatches_active.fetch_add(1, Relaxed);
        }
        self.0.event(DispatchEvent {
            id: 0,
            gpu: d.gpu,
            event: "begin".into(),
            kernel: d.kernel.clone(),
            grid: d.grid,
            block: d.block,
            wave_instructions: None,
            wall_s: None,
            error: None,
        });
        Box::new(Dispatch {
            live: self.0.clone(),
            gpu: d.gpu,
            kernel: d.kernel.clone(),
            grid: d.grid,
            block: d.block,
            in_flight: AtomicI64::new(0),
        })
    }
}

struct Dispatch {
    live: Arc<Live>,
    gpu: u32,
    kernel: String,
    grid: [u32; 3],
    block: [u32; 3],
    /// This dispatch's share of the GPU's waves in flight (taken back at
    /// the end: waves of a faulting dispatch never end).
    in_flight: AtomicI64,
}

impl DispatchObserver for Dispatch {
    fn worker(&self, _slot: usize) -> Box<dyn Observer + '_> {
        Box::new(Worker {
            d: self,
            gpu: self.live.gpu(self.gpu),
            instructions: 0,
            by_family: [0; Family::COUNT],
            bytes: [0; 4],
        })
    }

    fn end(self: Box<Self>, end: &DispatchEnd) {
        if let Some(g) = self.live.gpu(self.gpu) {
            g.waves_in_flight
                .fetch_sub(self.in_flight.load(Relaxed), Relaxed);
            g.dispatches_active.fetch_sub(1, Relaxed);
            g.dispatches.fetch_add(1, Relaxed);
        }
        self.live.event(DispatchEvent {
            id: 0,
            gpu: self.gpu,
            event: "end".into(),
            kernel: self.kernel.clone(),
            grid: self.grid,
            block: self.block,
            wave_instructions: Some(end.instructions),
            wall_s: Some(end.wall.as_secs_f64()),
            error: end.error.clone(),
        });
    }
}

struct Worker<'a> {
    d: &'a Dispatch,
    gpu: Option<&'a Gpu>,
    instructions: u64,
    by_family: [u64; Family::COUNT],
    bytes: [u64; 4],
}

impl Worker<'_> {
    fn flush(&mut self) {
        let Some(g) = self.gpu else { return };
        if self.instructions > 0 {
            g.instructions.fetch_add(self.instructions, Relaxed);
            self.instructions = 0;
            for (a, b) in g.by_family.iter().zip(self.by_family.iter_mut()) {
                if *b > 0 {
                    a.fetch_add(*b, Relaxed);
                    *b = 0;
                }
            }
        }
        for (a, b) in g.bytes.iter().zip(self.bytes.iter_mut()) {
            if *b > 0 {
                a.fetch_add(*b, Relaxed);
                *b = 0;
            }
        }
    }
}

impl Observer for Worker<'_> {
    fn wave_begin(&mut self, _w: WaveId) {
        if let Some(g) = self.gpu {
            g.waves_in_flight.fetch_add(1, Relaxed);
            g.waves.fetch_add(1, Relaxed);
            self.d.in_flight.fetch_add(1, Relaxed);
        }
    }

    fn wave_end(&mut self, _w: WaveId) {
        if let Some(g) = self.gpu {
            g.waves_in_flight.fetch_sub(1, Relaxed);
            self.d.in_flight.fetch_sub(1, Relaxed);
        }
    }

    fn group_end(&mut self, _g: &GroupEvent) {
        self.flush();
    }

    #[inline]
    fn instruction(&mut self, i: &InstEvent) {
        self.instructions += 1;
        self.by_family[i.op.class.family as usize] += 1;
        if self.instructions >= FLUSH {
            self.flush();
        }
    }

    fn memory(&mut self, m: &MemEvent) {
        let k = match m.op.class.mem {
            MemKind::Load => 0,
            MemKind::Store => 1,
            MemKind::Atomic => 2,
            MemKind::None => return,
        };
        let b = m.bytes_by_space();
        self.bytes[k] += b[Space::Global as usize];
        self.bytes[3] += b[Space::Lds as usize];
    }

    fn finish(mut self: Box<Self>) {
        self.flush();
    }
}
