//! The timing model: one simdojo component per instance of the timing
//! topology, replaying a recorded dispatch ([`super::record`]).
//!
//! * the GPU's `command_processor` deals the workgroups round-robin to the
//!   XCDs (workgroup `i` to XCD `i % n`, as MI300X does in SPX mode) after
//!   the kernel's start-up overhead, and ends the dispatch when every XCD
//!   reports its last workgroup done;
//! * an XCD's `command_processor` places workgroups on its compute units,
//!   one every `dispatch.cycles_per_workgroup`, each on the next unit (round
//!   robin) with room for all its waves: wave slots, VGPRs and SGPRs per
//!   SIMD, LDS per unit;
//! * a `compute_unit` issues its waves' instructions: each cycle one SIMD
//!   has its turn, and up to one instruction per class (VALU/MFMA,
//!   scalar, vector memory, LDS, branch) issues from its oldest ready
//!   waves, each wave at most one; pipes stay busy per
//!   [`super::Params::issue`]; `s_waitcnt` holds a wave until the counted
//!   operations' modelled completion (vector memory completes in order, LDS
//!   and scalar memory by their latencies), `s_barrier` until the
//!   workgroup's live waves arrive. Vector memory goes through the unit's
//!   L1 (set associative, LRU, `l1.bytes_per_cycle`); misses, stores and
//!   atomics travel to the XCD's `l2_cache`;
//! * an `l2_cache` (set associative, LRU; channels of
//!   `bytes_per_cycle_per_channel`) answers hits after `hit_latency`, sends
//!   misses (merged per line) to `gpu_memory`, and writes through to it
//!   (the traffic of a write-back cache that writes every dirty line back
//!   by the end of the kernel, as a release does);
//! * `gpu_memory` is the MALL (set associative, LRU, one bandwidth for all
//!   of it) in front of HBM channels.
//!
//! Times inside a component are cycles of the engine clock; a message's
//! time is its picosecond time rounded up to a cycle edge.

use super::params::Params;
use super::record::{DispatchTrace, Kind, NO_WAIT, Rec};
use rocjitsu_simdojo::{Component, Ctx, InPort, Instance, Kind as TKind, OutPort, Time};
use std::collections::VecDeque;
use std::sync::Arc;

/// Maps keyed by line addresses and workgroup ids, hashed by one multiply
/// (the keys are not chosen by an adversary, and SipHash showed in
/// profiles). Only looked up, never iterated, so order cannot leak into
/// the model's results.
type HashMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<KeyHasher>>;

#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
}

/// A wave's resource needs, from its kernel descriptor.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// VGPRs allocated per lane (ArchVGPRs and AccVGPRs).
    pub vgprs: u32,
    pub sgprs: u32,
    /// LDS bytes per workgroup (static and dynamic).
    pub lds_bytes: u32,
}

/// What the model and the recorded dispatch share, read-only.
pub(crate) struct Shared {
    pub p: Params,
    pub trace: Arc<DispatchTrace>,
    pub kernel: Kernel,
    pub period: Time,
    /// Waves a SIMD can hold of this kernel.
    pub per_simd: u32,
    pub line_bytes: u64,
}

impl Shared {
    fn cycle(&self, t: Time) -> u64 {
        t.div_ceil(self.period)
    }
    fn waves_of(&self, wg: u32) -> usize {
        self.trace.groups[wg as usize].waves.len()
    }
}

/// The messages between components.
#[derive(Clone, Debug)]
pub enum Msg {
    /// GPU command processor -> XCD: its workgroups (linear ids).
    Work(Arc<[u32]>),
    /// XCD -> GPU command processor: every workgroup it got has ended.
    XcdDone,
    /// XCD command processor -> compute unit: run workgroup `wg`, wave `k`
    /// on SIMD `simds[k]`.
    Place { wg: u32, simds: [u8; 16] },
    /// Compute unit -> XCD command processor: workgroup `wg` has ended.
    GroupDone { wg: u32 },
    /// A line read (`write` false) or write, tagged by the requester.
    Req { line: u64, tag: u32, write: bool },
    /// The answer to a [`Msg::Req`].
    Resp { line: u64, tag: u32 },
    /// Self-event: act at this cycle.
    Tick,
}

/// One component of the model.
pub enum Block {
    Gpu(GpuCp),
    Xcd(XcdCp),
    Cu(Box<Cu>),
    L2(Box<L2>),
    Mem(Box<Mem>),
    /// Kinds with no behaviour here (soc, xcd, shader_engine).
    Inert,
}

impl Block {
    /// The component of a topology instance.
    pub(crate) fn of(inst: &Instance, parent: Option<TKind>, sh: &Arc<Shared>) -> Block {
        match inst.kind {
            TKind::CommandProcessor if parent == Some(TKind::Xcd) => Block::Xcd(XcdCp::new(sh)),
            TKind::CommandProcessor => Block::Gpu(GpuCp::new(sh)),
            TKind::ComputeUnit => Block::Cu(Box::new(Cu::new(sh))),
            TKind::L2Cache => Block::L2(Box::new(L2::new(sh))),
            TKind::GpuMemory => Block::Mem(Box::new(Mem::new(sh))),
            _ => Block::Inert,
        }
    }

    /// The GPU command processor's end of the dispatch, in picoseconds.
    pub(crate) fn end(&self) -> Option<(Time, usize, usize)> {
        match self {
            Block::Gpu(g) => Some((g.end?, g.done, g.xcds)),
            _ => None,
        }
    }
}

impl Component for Block {
    type Msg = Msg;

    fn init(&mut self, ctx: &mut Ctx<'_, Msg>) {
        match self {
            Block::Gpu(c) => c.init(ctx),
            Block::Xcd(c) => c.init(ctx),
            Block::Cu(c) => c.init(ctx),
            Block::L2(c) => c.init(ctx),
            Block::Mem(c) => c.init(ctx),
            Block::Inert => {}
        }
    }

    fn handle(&mut self, ctx: &mut Ctx<'_, Msg>, port: InPort, msg: Msg) {
        match self {
            Block::Gpu(c) => c.handle(ctx, msg),
            Block::Xcd(c) => c.handle(ctx, msg),
            Block::Cu(c) => c.handle(ctx, msg),
            Block::L2(c) => c.handle(ctx, port, msg),
            Block::Mem(c) => c.handle(ctx, port, msg),
            Block::Inert => {}
        }
    }
}

/// Sends `msg` on `port` at cycle `at` (now if that has passed).
fn send_at(ctx: &mut Ctx<'_, Msg>, sh: &Shared, at: u64, port: OutPort, msg: Msg) {
    let t = at * sh.period;
    let d = t.saturating_sub(ctx.now());
    ctx.send_after(port, d, msg);
}

/// The outgoing ports whose peer's path ends with `suffix`.
fn ports_to(ctx: &Ctx<'_, Msg>, suffix: &str) -> Vec<OutPort> {
    (0..ctx.out_ports() as u32)
        .map(OutPort)
        .filter(|&p| ctx.out_peer(p).ends_with(suffix))
        .collect()
}

/// For each incoming port, the outgoing port to the same peer.
fn reply_ports(ctx: &Ctx<'_, Msg>) -> Vec<Option<OutPort>> {
    ctx.in_peers()
        .to_vec()
        .iter()
        .map(|n| ctx.out_port(n))
        .collect()
}

/// The GPU's command processor.
pub struct GpuCp {
    sh: Arc<Shared>,
    xcds: usize,
    done: usize,
    pub end: Option<Time>,
}

impl GpuCp {
    fn new(sh: &Arc<Shared>) -> GpuCp {
        GpuCp {
            sh: sh.clone(),
            xcds: 0,
            done: 0,
            end: None,
        }
    }

    /// XCDs done and XCDs.
    pub fn progress(&self) -> (usize, usize) {
        (self.done, self.xcds)
    }

    fn init(&mut self, ctx: &mut Ctx<'_, Msg>) {
        let ports = ports_to(ctx, ".command_processor");
        self.xcds = ports.len();
        let groups = self.sh.trace.groups.len() as u32;
        if groups == 0 || ports.is_empty() {
            self.end = Some(0);
            return;
        }
        let at = u64::from(self.sh.p.dispatch.kernel_overhead_cycles);
        let n = ports.len() as u32;
        for (k, port) in ports.into_iter().enumerate() {
            let list: Vec<u32> = (k as u32..groups).step_by(n as usize).collect();
            send_at(ctx, &self.sh, at, port, Msg::Work(list.into()));
        }
    }

    fn handle(&mut self, ctx: &mut Ctx<'_, Msg>, msg: Msg) {
        if let Msg::XcdDone = msg {
            self.done += 1;
            if self.done == self.xcds {
                let c =
                    self.sh.cycle(ctx.now()) + u64::from(self.sh.p.dispatch.kernel_overhead_cycles);
                self.end = Some(c * self.sh.period);
            }
        }
    }
}

/// What an XCD's dispatcher knows of one compute unit.
struct CuSlot {
    port: OutPort,
    /// Free wave slots per SIMD (for this kernel).
    free: Vec<u32>,
    lds_free: u32,
    /// Placed workgroups and the SIMD of each wave.
    placed: HashMap<u32, Vec<u8>>,
}

/// An XCD's command processor (workgroup dispatcher).
pub struct XcdCp {
    sh: Arc<Shared>,
    gpu: Option<OutPort>,
    cus: Vec<CuSlot>,
    /// The compute unit of each placed workgroup.
    where_placed: HashMap<u32, usize>,
    queue: VecDeque<u32>,
    total: usize,
    ended: usize,
    next_place: u64,
    rr: usize,
    tick_at: Option<u64>,
}

impl XcdCp {
    fn new(sh: &Arc<Shared>) -> XcdCp {
        XcdCp {
            sh: sh.clone(),
            gpu: None,
            cus: Vec::new(),
            where_placed: HashMap::default(),
            queue: VecDeque::new(),
            total: 0,
            ended: 0,
            next_place: 0,
            rr: 0,
            tick_at: None,
        }
    }

    fn init(&mut self, ctx: &mut Ctx<'_, Msg>) {
        self.gpu = (0..ctx.out_ports() as u32)
            .map(OutPort)
            .find(|&p| ctx.out_peer(p) == "command_processor");
        let p = &self.sh.p;
        self.cus = (0..ctx.out_ports() as u32)
            .map(OutPort)
            .filter(|&q| ctx.out_peer(q).contains("compute_unit["))
            .map(|port| CuSlot {
                port,
                free: vec![self.sh.per_simd; p.cu.simds as usize],
                lds_free: p.cu.lds_bytes,
                placed: HashMap::default(),
            })
            .collect();
    }

    fn handle(&mut self, ctx: &mut Ctx<'_, Msg>, msg: Msg) {
        let now = self.sh.cycle(ctx.now());
        match msg {
            Msg::Work(list) => {
                self.total += list.len();
                self.queue.extend(list.iter().copied());
                if self.total == 0 {
                    if let Some(g) = self.gpu {
                        ctx.send(g, Msg::XcdDone);
                    }
                    return;
                }
            }
            Msg::GroupDone { wg } => {
                if let Some(i) = self.where_placed.remove(&wg) {
                    let cu = &mut self.cus[i];
                    if let Some(simds) = cu.placed.remove(&wg) {
                        for s in simds {
                            cu.free[s as usize] += 1;
                        }
                        cu.lds_free += self.sh.kernel.lds_bytes;
                    }
                }
                self.ended += 1;
                if self.ended == self.total
                    && self.queue.is_empty()
                    && let Some(g) = self.gpu
                {
                    ctx.send(g, Msg::XcdDone);
                }
            }
            Msg::Tick if self.tick_at == Some(now) => self.tick_at = None,
            _ => {}
        }
        self.place(ctx, now);
    }

    fn place(&mut self, ctx: &mut Ctx<'_, Msg>, now: u64) {
        let n = self.cus.len();
        while let Some(&wg) = self.queue.front() {
            if now < self.next_place {
                if self.tick_at.is_none_or(|t| t > self.next_place) {
                    self.tick_at = Some(self.next_place);
                    ctx.schedule(self.next_place * self.sh.period - ctx.now(), Msg::Tick);
                }
                return;
            }
            let waves = self.sh.waves_of(wg);
            let lds = self.sh.kernel.lds_bytes;
            let mut chosen = None;
            for k in 0..n {
                let i = (self.rr + k) % n;
                if let Some(simds) = fit(&self.cus[i], waves, lds) {
                    chosen = Some((i, simds));
                    break;
                }
            }
            let Some((i, simds)) = chosen else {
                return;
            };
            self.queue.pop_front();
            let cu = &mut self.cus[i];
            let mut arr = [0u8; 16];
            for (k, &s) in simds.iter().enumerate() {
                cu.free[s as usize] -= 1;
                arr[k] = s;
            }
            cu.lds_free -= lds;
            cu.placed.insert(wg, simds);
            ctx.send(cu.port, Msg::Place { wg, simds: arr });
            self.where_placed.insert(wg, i);
            self.rr = (i + 1) % n;
            self.next_place = now + u64::from(self.sh.p.dispatch.cycles_per_workgroup);
        }
    }
}

/// The SIMD of each of `waves` waves on `cu` (the SIMD with the most free
/// slots, lowest first), or `None` when the unit has no room.
fn fit(cu: &CuSlot, waves: usize, lds: u32) -> Option<Vec<u8>> {
    if cu.lds_free < lds || cu.free.iter().sum::<u32>() < waves as u32 {
        return None;
    }
    let mut free = [0u32; 16];
    free[..cu.free.len()].copy_from_slice(&cu.free);
    let free = &mut free[..cu.free.len()];
    let mut out = Vec::with_capacity(waves);
    for _ in 0..waves {
        let (s, &f) = free
            .iter()
            .enumerate()
            .max_by_key(|&(i, &f)| (f, std::cmp::Reverse(i)))?;
        if f == 0 {
            return None;
        }
        free[s] -= 1;
        out.push(s as u8);
    }
    Some(out)
}

/// A bandwidth-limited server: each use of `cost` (in 1/256 cycles) starts
/// when the previous ended.
#[derive(Clone, Debug)]
struct Server {
    free: u64,
    cost: u64,
}

impl Server {
    fn new(bytes: u64, per_cycle: u64) -> Server {
        Server {
            free: 0,
            cost: (bytes * 256).div_ceil(per_cycle.max(1)),
        }
    }
    /// Starts a use at cycle `at` or later; returns the cycle it ends.
    fn take(&mut self, at: u64) -> u64 {
        let start = self.free.max(at * 256);
        self.free = start + self.cost;
        self.free.div_ceil(256)
    }
}

/// A set-associative cache of line addresses with LRU replacement and a
/// dirty bit per line.
struct Cache {
    sets: u64,
    ways: usize,
    tags: Vec<u64>,
    stamps: Vec<u32>,
    clock: u32,
}

const EMPTY: u64 = u64::MAX;
const DIRTY: u64 = 1 << 63;

impl Cache {
    fn new(bytes: u64, line: u64, ways: u32) -> Cache {
        let ways = ways.max(1) as usize;
        let lines = (bytes / line) as usize;
        let sets = (lines / ways).max(1) as u64;
        Cache {
            sets,
            ways,
            tags: vec![EMPTY; lines.max(ways)],
            stamps: vec![0; lines.max(ways)],
            clock: 0,
        }
    }

    fn set(&self, line: u64) -> std::ops::Range<usize> {
        // Lines interleave over the sets with a hash of the upper bits, so
        // that power-of-two strides spread.
        let h = line ^ (line >> 17) ^ (line >> 31);
        let s = (h % self.sets) as usize * self.ways;
        s..s + self.ways
    }

    /// Whether `line` is present (and marks it used).
    fn hit(&mut self, line: u64) -> bool {
        self.clock = self.clock.wrapping_add(1);
        for i in self.set(line) {
            if self.tags[i] != EMPTY && self.tags[i] & !DIRTY == line {
                self.stamps[i] = self.clock;
                return true;
            }
        }
        false
    }

    /// Puts `line` in (dirty if `dirty`); returns an evicted dirty line.
    fn insert(&mut self, line: u64, dirty: bool) -> Option<u64> {
        self.clock = self.clock.wrapping_add(1);
        let r = self.set(line);
        let mut victim = r.start;
        for i in r {
            if self.tags[i] != EMPTY && self.tags[i] & !DIRTY == line {
                if dirty {
                    self.tags[i] |= DIRTY;
                }
                self.stamps[i] = self.clock;
                return None;
            }
            if self.tags[i] == EMPTY {
                victim = i;
                break;
            }
            if self.clock.wrapping_sub(self.stamps[i])
                > self.clock.wrapping_sub(self.stamps[victim])
            {
                victim = i;
            }
        }
        let old = self.tags[victim];
        self.tags[victim] = line | if dirty { DIRTY } else { 0 };
        self.stamps[victim] = self.clock;
        (old != EMPTY && old & DIRTY != 0).then_some(old & !DIRTY)
    }
}

/// A vector memory instruction in flight.
#[derive(Clone, Debug)]
struct VmOp {
    /// Lines not yet answered.
    left: u32,
    /// The latest known completion of its lines (cycle).
    done: u64,
    slot: u32,
    /// Whether the data goes through the L1 (loads).
    fill: bool,
}

const INF: u64 = u64::MAX;

/// A wave on a compute unit.
struct Wave {
    wg: u32,
    idx: u32,
    simd: u8,
    pos: usize,
    /// The first cycle it may issue again (`INF`: waiting on something
    /// whose time is not known yet).
    ready: u64,
    at_barrier: bool,
    /// The kind of the instruction at `pos` (`None`: the wave has run out).
    next: Option<Kind>,
    /// Vector memory operations in issue order (op ids).
    vm: VecDeque<u32>,
    /// Completion cycles of LDS and scalar memory operations.
    lgkm: Vec<u64>,
}

struct Group {
    live: u32,
    at_barrier: u32,
    slots: Vec<u32>,
}

/// A compute unit.
pub struct Cu {
    sh: Arc<Shared>,
    cp: Option<OutPort>,
    l2: Option<OutPort>,
    waves: Vec<Option<Wave>>,
    free_slots: Vec<u32>,
    /// Per SIMD, its waves' slots, oldest first.
    simd_waves: Vec<Vec<u32>>,
    groups: HashMap<u32, Group>,
    valu_free: Vec<u64>,
    mfma_free: Vec<u64>,
    salu_free: u64,
    branch_free: u64,
    vmem_free: u64,
    lds: Server,
    l1: Cache,
    l1_port: Server,
    ops: Vec<VmOp>,
    free_ops: Vec<u32>,
    tick_at: u64,
    last_cycle: Option<u64>,
}

/// Issue classes: at most one instruction of each per SIMD turn.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Port {
    Valu,
    Scalar,
    Vmem,
    Lds,
    Branch,
    None,
}

fn port_of(k: Kind) -> Port {
    match k {
        Kind::Valu | Kind::Trans | Kind::Mfma => Port::Valu,
        Kind::Salu | Kind::Smem => Port::Scalar,
        Kind::VmemLoad | Kind::VmemStore | Kind::VmemAtomic => Port::Vmem,
        Kind::Lds => Port::Lds,
        Kind::Branch => Port::Branch,
        Kind::Wait | Kind::Barrier | Kind::Other => Port::None,
    }
}

impl Cu {
    fn new(sh: &Arc<Shared>) -> Cu {
        let p = &sh.p;
        let simds = p.cu.simds as usize;
        Cu {
            sh: sh.clone(),
            cp: None,
            l2: None,
            waves: Vec::new(),
            free_slots: Vec::new(),
            simd_waves: vec![Vec::new(); simds],
            groups: HashMap::default(),
            valu_free: vec![0; simds],
            mfma_free: vec![0; simds],
            salu_free: 0,
            branch_free: 0,
            vmem_free: 0,
            lds: Server::new(1, 1),
            l1: Cache::new(p.l1.bytes.into(), sh.line_bytes, p.l1.ways),
            l1_port: Server::new(sh.line_bytes, p.l1.bytes_per_cycle.into()),
            ops: Vec::new(),
            free_ops: Vec::new(),
            tick_at: INF,
            last_cycle: None,
        }
    }

    fn init(&mut self, ctx: &mut Ctx<'_, Msg>) {
        self.cp = ports_to(ctx, "command_processor").first().copied();
        self.l2 = ports_to(ctx, "l2_cache").first().copied();
    }

    fn handle(&mut self, ctx: &mut Ctx<'_, Msg>, msg: Msg) {
        let now = self.sh.cycle(ctx.now());
        match msg {
            Msg::Place { wg, simds } => self.place(now, wg, &simds),
            Msg::Resp { line, tag } => {
                // Only a wave woken by its last line can issue earlier than
                // planned: its next turn.
                if let Some(simd) = self.answer(now, line, tag) {
                    let turn = u64::from(self.sh.p.issue.simd_turn_cycles);
                    let mut t = now + 1;
                    t += (u64::from(simd) % turn + turn - t % turn) % turn;
                    if t < self.tick_at {
                        self.tick_at = t;
                        ctx.schedule(t * self.sh.period - ctx.now(), Msg::Tick);
                    }
                }
                return;
            }
            Msg::Tick => {
                if self.tick_at == now {
                    self.tick_at = INF;
                }
                if self.last_cycle.is_none_or(|l| l < now) {
                    self.last_cycle = Some(now);
                    self.issue(ctx, now);
                }
            }
            _ => {}
        }
        self.reschedule(ctx, now);
    }

    fn place(&mut self, now: u64, wg: u32, simds: &[u8; 16]) {
        let n = self.sh.waves_of(wg);
        let start = now + u64::from(self.sh.p.dispatch.wave_launch_cycles);
        let mut slots = Vec::with_capacity(n);
        for (k, &simd) in simds.iter().enumerate().take(n) {
            let mut w = Wave {
                wg,
                idx: k as u32,
                simd,
                pos: 0,
                ready: start,
                at_barrier: false,
                next: None,
                vm: VecDeque::new(),
                lgkm: Vec::new(),
            };
            w.next = self.trace_rec(&w).map(|r| r.kind);
            let slot = match self.free_slots.pop() {
                Some(s) => {
                    self.waves[s as usize] = Some(w);
                    s
                }
                None => {
                    self.waves.push(Some(w));
                    self.waves.len() as u32 - 1
                }
            };
            self.simd_waves[simd as usize].push(slot);
            slots.push(slot);
        }
        self.groups.insert(
            wg,
            Group {
                live: n as u32,
                at_barrier: 0,
                slots,
            },
        );
    }

    /// A line of op `tag` came back from the L2 at cycle `now`. Returns
    /// the SIMD of a wave this wakes.
    fn answer(&mut self, now: u64, line: u64, tag: u32) -> Option<u8> {
        let hit_latency = u64::from(self.sh.p.l1.hit_latency);
        let op = &mut self.ops[tag as usize];
        let ready = if op.fill {
            let t = self.l1_port.take(now);
            self.l1.insert(line, false);
            t + hit_latency
        } else {
            now
        };
        let op = &mut self.ops[tag as usize];
        op.done = op.done.max(ready);
        op.left -= 1;
        if op.left == 0 {
            let slot = op.slot as usize;
            if let Some(w) = self.waves[slot].as_mut()
                && w.ready == INF
                && !w.at_barrier
            {
                w.ready = now;
                return Some(w.simd);
            }
        }
        None
    }

    fn trace_rec(&self, w: &Wave) -> Option<Rec> {
        self.sh.trace.groups[w.wg as usize].waves[w.idx as usize]
            .recs
            .get(w.pos)
            .copied()
    }

    /// When the wave's wait for `vm`/`lgkm` is satisfied: `Some(cycle)` if
    /// known (dropping what has completed by `now`), `None` if it depends on
    /// a reply still in flight.
    fn wait_until(&mut self, slot: usize, now: u64, vm: u8, lgkm: u8) -> Option<u64> {
        let w = self.waves[slot].as_mut()?;
        let mut at = now;
        // Vector memory completes in order: an op is complete once it and
        // every older op are.
        let mut prefix = 0u64;
        while let Some(&id) = w.vm.front() {
            let op = &self.ops[id as usize];
            if op.left != 0 {
                break;
            }
            let done = prefix.max(op.done);
            if done > now {
                break;
            }
            prefix = done;
            w.vm.pop_front();
            self.free_ops.push(id);
        }
        if vm != NO_WAIT && w.vm.len() > usize::from(vm) {
            let need = w.vm.len() - usize::from(vm);
            let mut t = prefix;
            for &id in w.vm.iter().take(need) {
                let op = &self.ops[id as usize];
                if op.left != 0 {
                    return None;
                }
                t = t.max(op.done);
            }
            at = at.max(t);
        }
        w.lgkm.retain(|&d| d > now);
        if lgkm != NO_WAIT && w.lgkm.len() > usize::from(lgkm) {
            let need = w.lgkm.len() - usize::from(lgkm);
            let mut v = w.lgkm.clone();
            v.sort_unstable();
            at = at.max(v[need - 1]);
        }
        Some(at)
    }

    fn issue(&mut self, ctx: &mut Ctx<'_, Msg>, now: u64) {
        // A copy of the issue figures: cloning the shared `Arc` here (once
        // per cycle per CU) made every thread bump one reference count.
        let issue = self.sh.p.issue;
        let turn = u64::from(issue.simd_turn_cycles);
        let simds = self.simd_waves.len() as u64;
        // The SIMDs whose turn it is: with a turn of `simds` cycles, one.
        for s in 0..simds {
            if s % turn != now % turn {
                continue;
            }
            let mut used = [false; 5];
            let mut i = 0;
            while i < self.simd_waves[s as usize].len() {
                let slot = self.simd_waves[s as usize][i] as usize;
                i += 1;
                let Some(w) = self.waves[slot].as_ref() else {
                    continue;
                };
                if w.ready > now {
                    continue;
                }
                let Some(rec) = self.trace_rec(w) else {
                    if self.end_wave(ctx, now, slot) {
                        // Its slot left the list: the next wave is at `i - 1`.
                        i -= 1;
                    }
                    continue;
                };
                let port = port_of(rec.kind);
                if port != Port::None && used[port as usize] {
                    continue;
                }
                match rec.kind {
                    Kind::Wait => {
                        match self.wait_until(slot, now, rec.vm, rec.lgkm) {
                            Some(t) if t <= now => self.advance(slot, now + 1),
                            Some(t) => self.hold(slot, t),
                            None => self.hold(slot, INF),
                        }
                        continue;
                    }
                    Kind::Barrier => {
                        self.barrier(now, slot);
                        continue;
                    }
                    Kind::Other => {
                        self.advance(slot, now + 1);
                        continue;
                    }
                    _ => {}
                }
                let s = s as usize;
                let busy = match rec.kind {
                    Kind::Valu | Kind::Trans => self.valu_free[s],
                    Kind::Mfma => self.mfma_free[s],
                    Kind::Salu | Kind::Smem => self.salu_free,
                    Kind::Branch => self.branch_free,
                    Kind::VmemLoad | Kind::VmemStore | Kind::VmemAtomic => self.vmem_free,
                    _ => 0,
                };
                if busy > now {
                    continue;
                }
                used[port as usize] = true;
                match rec.kind {
                    Kind::Valu => self.valu_free[s] = now + u64::from(issue.valu_cycles),
                    Kind::Trans => self.valu_free[s] = now + u64::from(issue.trans_cycles),
                    Kind::Mfma => {
                        self.mfma_free[s] =
                            now + u64::from(rec.arg.max(1)) * u64::from(issue.mfma_pass_cycles)
                    }
                    Kind::Salu => self.salu_free = now + u64::from(issue.salu_cycles),
                    Kind::Smem => {
                        self.salu_free = now + u64::from(issue.salu_cycles);
                        let done = now + u64::from(issue.smem_latency);
                        if let Some(w) = self.waves[slot].as_mut() {
                            w.lgkm.push(done);
                        }
                    }
                    Kind::Branch => self.branch_free = now + u64::from(issue.branch_cycles),
                    Kind::Lds => {
                        self.lds.cost = u64::from(rec.arg.max(1)) * 256;
                        let end = self.lds.take(now);
                        let done = end + u64::from(issue.lds_latency);
                        if let Some(w) = self.waves[slot].as_mut() {
                            w.lgkm.push(done);
                        }
                    }
                    Kind::VmemLoad | Kind::VmemStore | Kind::VmemAtomic => {
                        self.vmem_free = now + u64::from(issue.vmem_issue_cycles);
                        self.vmem(ctx, now, slot, rec);
                    }
                    _ => {}
                }
                self.advance(slot, now + 1);
            }
        }
    }

    fn vmem(&mut self, ctx: &mut Ctx<'_, Msg>, now: u64, slot: usize, rec: Rec) {
        let Some(w) = self.waves[slot].as_ref() else {
            return;
        };
        let (wg, idx) = (w.wg, w.idx);
        let load = rec.kind == Kind::VmemLoad;
        let id = match self.free_ops.pop() {
            Some(i) => i,
            None => {
                self.ops.push(VmOp {
                    left: 0,
                    done: 0,
                    slot: 0,
                    fill: false,
                });
                self.ops.len() as u32 - 1
            }
        };
        let hit_latency = u64::from(self.sh.p.l1.hit_latency);
        let mut op = VmOp {
            left: 0,
            done: now + hit_latency,
            slot: slot as u32,
            fill: load,
        };
        let wt = &self.sh.trace.groups[wg as usize].waves[idx as usize];
        let lines = &wt.lines[rec.first as usize..rec.first as usize + usize::from(rec.count)];
        for &line in lines {
            if load && self.l1.hit(line) {
                let t = self.l1_port.take(now);
                op.done = op.done.max(t + hit_latency);
                continue;
            }
            op.left += 1;
            if let Some(l2) = self.l2 {
                ctx.send(
                    l2,
                    Msg::Req {
                        line,
                        tag: id,
                        write: rec.kind == Kind::VmemStore,
                    },
                );
            }
        }
        if self.l2.is_none() {
            op.left = 0;
        }
        self.ops[id as usize] = op;
        if let Some(w) = self.waves[slot].as_mut() {
            w.vm.push_back(id);
        }
    }

    fn advance(&mut self, slot: usize, ready: u64) {
        if let Some(w) = self.waves[slot].as_mut() {
            w.pos += 1;
            w.ready = ready;
            w.next = self.sh.trace.groups[w.wg as usize].waves[w.idx as usize]
                .recs
                .get(w.pos)
                .map(|r| r.kind);
        }
    }

    fn hold(&mut self, slot: usize, until: u64) {
        if let Some(w) = self.waves[slot].as_mut() {
            w.ready = until;
        }
    }

    fn barrier(&mut self, now: u64, slot: usize) {
        self.advance(slot, INF);
        let Some(w) = self.waves[slot].as_mut() else {
            return;
        };
        w.at_barrier = true;
        let wg = w.wg;
        if let Some(g) = self.groups.get_mut(&wg) {
            g.at_barrier += 1;
        }
        self.release(now, wg);
    }

    /// Lets a workgroup's waves past the barrier once all live ones are
    /// at it.
    fn release(&mut self, now: u64, wg: u32) {
        let Some(g) = self.groups.get_mut(&wg) else {
            return;
        };
        if g.live == 0 || g.at_barrier < g.live {
            return;
        }
        g.at_barrier = 0;
        let at = now + u64::from(self.sh.p.issue.barrier_cycles);
        for &s in &g.slots {
            if let Some(w) = self.waves[s as usize].as_mut()
                && w.at_barrier
            {
                w.at_barrier = false;
                w.ready = at;
            }
        }
    }

    /// The wave ran out of instructions: it ends once its memory
    /// operations have completed. Returns whether it ended.
    fn end_wave(&mut self, ctx: &mut Ctx<'_, Msg>, now: u64, slot: usize) -> bool {
        match self.wait_until(slot, now, 0, 0) {
            Some(t) if t <= now => {}
            Some(t) => {
                self.hold(slot, t);
                return false;
            }
            None => {
                self.hold(slot, INF);
                return false;
            }
        }
        let Some(w) = self.waves[slot].take() else {
            return false;
        };
        for id in w.vm {
            self.free_ops.push(id);
        }
        self.free_slots.push(slot as u32);
        self.simd_waves[w.simd as usize].retain(|&s| s as usize != slot);
        let wg = w.wg;
        let done = match self.groups.get_mut(&wg) {
            Some(g) => {
                g.live -= 1;
                g.slots.retain(|&s| s as usize != slot);
                g.live == 0
            }
            None => false,
        };
        if done {
            self.groups.remove(&wg);
            if let Some(cp) = self.cp {
                ctx.send(cp, Msg::GroupDone { wg });
            }
        } else {
            self.release(now, wg);
        }
        true
    }

    /// Schedules the next cycle at which a wave could issue.
    fn reschedule(&mut self, ctx: &mut Ctx<'_, Msg>, now: u64) {
        let turn = u64::from(self.sh.p.issue.simd_turn_cycles);
        let mut next = INF;
        for (s, list) in self.simd_waves.iter().enumerate() {
            for &slot in list {
                let Some(w) = self.waves[slot as usize].as_ref() else {
                    continue;
                };
                if w.ready == INF {
                    continue;
                }
                let busy = match w.next {
                    Some(Kind::Valu | Kind::Trans) => self.valu_free[s],
                    Some(Kind::Mfma) => self.mfma_free[s],
                    Some(Kind::Salu | Kind::Smem) => self.salu_free,
                    Some(Kind::Branch) => self.branch_free,
                    Some(Kind::VmemLoad | Kind::VmemStore | Kind::VmemAtomic) => self.vmem_free,
                    _ => 0,
                };
                let mut t = w.ready.max(busy).max(now + 1);
                let phase = s as u64 % turn;
                t += (phase + turn - t % turn) % turn;
                next = next.min(t);
            }
        }
        if next != INF && next < self.tick_at {
            self.tick_at = next;
            ctx.schedule(next * self.sh.period - ctx.now(), Msg::Tick);
        }
    }
}

/// An XCD's L2 cache.
pub struct L2 {
    sh: Arc<Shared>,
    cache: Cache,
    channels: Vec<Server>,
    replies: Vec<Option<OutPort>>,
    mem: Option<OutPort>,
    /// Reads waiting for a line from memory: (reply port, tag).
    waiting: HashMap<u64, Vec<(OutPort, u32)>>,
}

impl L2 {
    fn new(sh: &Arc<Shared>) -> L2 {
        let p = &sh.p.l2;
        L2 {
            sh: sh.clone(),
            cache: Cache::new(p.bytes.into(), sh.line_bytes, p.ways),
            channels: vec![
                Server::new(sh.line_bytes, p.bytes_per_cycle_per_channel.into());
                p.channels as usize
            ],
            replies: Vec::new(),
            mem: None,
            waiting: HashMap::default(),
        }
    }

    fn init(&mut self, ctx: &mut Ctx<'_, Msg>) {
        self.replies = reply_ports(ctx);
        self.mem = ports_to(ctx, "gpu_memory").first().copied();
    }

    fn handle(&mut self, ctx: &mut Ctx<'_, Msg>, port: InPort, msg: Msg) {
        let now = self.sh.cycle(ctx.now());
        let hit = u64::from(self.sh.p.l2.hit_latency);
        match msg {
            Msg::Req { line, tag, write } => {
                let Some(reply) = port.link().and_then(|i| self.replies[i]) else {
                    return;
                };
                let ch = (line % self.channels.len() as u64) as usize;
                let t = self.channels[ch].take(now);
                if write {
                    // Writes go through to memory (the traffic a write-back
                    // L2 sends when it evicts or, at the end of the
                    // kernel, writes back the line) and keep a clean copy.
                    self.cache.insert(line, false);
                    self.forward(ctx, line, true);
                    send_at(ctx, &self.sh, t + hit, reply, Msg::Resp { line, tag });
                } else if self.cache.hit(line) {
                    send_at(ctx, &self.sh, t + hit, reply, Msg::Resp { line, tag });
                } else {
                    let w = self.waiting.entry(line).or_default();
                    w.push((reply, tag));
                    if w.len() == 1 {
                        self.forward(ctx, line, false);
                    }
                }
            }
            Msg::Resp { line, .. } => {
                self.cache.insert(line, false);
                let ch = (line % self.channels.len() as u64) as usize;
                let t = self.channels[ch].take(now);
                for (reply, tag) in self.waiting.remove(&line).unwrap_or_default() {
                    send_at(ctx, &self.sh, t + hit, reply, Msg::Resp { line, tag });
                }
            }
            _ => {}
        }
    }

    fn forward(&mut self, ctx: &mut Ctx<'_, Msg>, line: u64, write: bool) {
        if let Some(m) = self.mem {
            ctx.send(
                m,
                Msg::Req {
                    line,
                    tag: 0,
                    write,
                },
            );
        } else if !write {
            // No memory behind this L2: the line is there at once.
            ctx.schedule(0, Msg::Resp { line, tag: 0 });
        }
    }
}

/// The GPU's memory: the MALL in front of HBM.
pub struct Mem {
    sh: Arc<Shared>,
    mall: Option<Cache>,
    mall_port: Server,
    hbm: Vec<Server>,
    replies: Vec<Option<OutPort>>,
}

impl Mem {
    fn new(sh: &Arc<Shared>) -> Mem {
        let p = &sh.p;
        Mem {
            sh: sh.clone(),
            mall: (p.mall.bytes > 0).then(|| Cache::new(p.mall.bytes, sh.line_bytes, p.mall.ways)),
            mall_port: Server::new(sh.line_bytes, p.mall.bytes_per_cycle.into()),
            hbm: vec![
                // Bytes per channel per cycle may be fractional: the cost
                // is kept in 1/256 cycles from the total.
                Server {
                    free: 0,
                    cost: (sh.line_bytes * 256 * u64::from(p.hbm.channels))
                        .div_ceil(u64::from(p.hbm.bytes_per_cycle)),
                };
                p.hbm.channels as usize
            ],
            replies: Vec::new(),
        }
    }

    fn init(&mut self, ctx: &mut Ctx<'_, Msg>) {
        self.replies = reply_ports(ctx);
    }

    fn handle(&mut self, ctx: &mut Ctx<'_, Msg>, port: InPort, msg: Msg) {
        let Msg::Req { line, tag, write } = msg else {
            return;
        };
        let now = self.sh.cycle(ctx.now());
        let p = &self.sh.p;
        let t = self.mall_port.take(now);
        let hit = match &mut self.mall {
            Some(m) if write => {
                m.insert(line, false);
                false
            }
            Some(m) => m.hit(line),
            None => false,
        };
        if write {
            let h = line ^ (line >> 11) ^ (line >> 23);
            let ch = (h % self.hbm.len() as u64) as usize;
            self.hbm[ch].take(t);
            return;
        }
        let ready = if hit {
            t + u64::from(p.mall.hit_latency)
        } else {
            let h = line ^ (line >> 11) ^ (line >> 23);
            let ch = (h % self.hbm.len() as u64) as usize;
            let end = self.hbm[ch].take(t);
            if let Some(m) = &mut self.mall {
                m.insert(line, false);
            }
            end + u64::from(p.mall.hit_latency) + u64::from(p.hbm.latency)
        };
        if let Some(reply) = port.link().and_then(|i| self.replies[i]) {
            send_at(ctx, &self.sh, ready, reply, Msg::Resp { line, tag });
        }
    }
}
