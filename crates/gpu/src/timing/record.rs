//! Recording a dispatch for the timing model: an execution plugin
//! ([`Recorder`]) that keeps each wave's instruction stream in a compact
//! form ([`Rec`]: the pipe it issues to, wait counts, MFMA passes, LDS
//! bank-conflict cycles, the cache lines a vector memory instruction
//! touches). It observes the functional run and changes nothing in it, so
//! clocked mode computes exactly what functional mode computes; the model
//! then replays the streams ([`super::model`]).

use crate::plugin::{
    DispatchEnd, DispatchInfo, DispatchObserver, Family, GroupEvent, InstEvent, MemEvent, MemKind,
    Observer, Plugin, Seg, Space, Wants,
};
use rocjitsu_code::analysis::waitcnt::{Counter, Model};
use rocjitsu_code::analysis::waitstates::mfma_passes;
use rocjitsu_isa::Target;
use std::sync::{Arc, Mutex};

/// What an instruction does, as far as timing goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    Salu,
    Valu,
    /// Transcendental VALU (`v_exp`, `v_log`, `v_rcp`, `v_rsq`, `v_sqrt`,
    /// `v_sin`, `v_cos`).
    Trans,
    /// Matrix instruction; [`Rec::arg`] holds its passes.
    Mfma,
    Smem,
    VmemLoad,
    VmemStore,
    VmemAtomic,
    /// DS instruction (or a FLAT one whose lanes address LDS); [`Rec::arg`]
    /// holds the cycles the LDS is busy with it (bank conflicts included).
    Lds,
    Branch,
    /// `s_waitcnt`: [`Rec::vm`], [`Rec::lgkm`].
    Wait,
    Barrier,
    /// Anything else (`s_nop`, `s_endpgm`, messages): one issue turn.
    Other,
}

/// One executed instruction of a wave.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Rec {
    pub kind: Kind,
    /// MFMA passes, or LDS busy cycles.
    pub arg: u8,
    /// `vmcnt` / `lgkmcnt` of a wait ([`NO_WAIT`]: not waited on).
    pub vm: u8,
    pub lgkm: u8,
    /// The lines a vector memory instruction touches:
    /// `WaveTrace::lines[first..first + count]`.
    pub count: u16,
    pub first: u32,
}

/// A wait count that waits for nothing.
pub const NO_WAIT: u8 = u8::MAX;

/// One wave's instructions in execution order and the cache lines (line
/// addresses: byte address / line size) of its memory instructions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaveTrace {
    pub recs: Vec<Rec>,
    pub lines: Vec<u64>,
}

/// A workgroup's waves, by index in the workgroup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupTrace {
    pub waves: Vec<WaveTrace>,
}

/// A recorded dispatch.
#[derive(Clone, Debug)]
pub struct DispatchTrace {
    pub kernel: String,
    pub target: Target,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Workgroups by linear id (x fastest).
    pub groups: Vec<GroupTrace>,
    /// Wave-instructions recorded.
    pub instructions: u64,
    /// The dispatch's fault or stop, if it did not complete.
    pub error: Option<String>,
}

/// The recording plugin. Clones share the recorded dispatches:
/// keep one, hand another to [`crate::plugin::Plugins::of`], and
/// [`Recorder::take`] the traces after the dispatches.
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<Inner>,
}

struct Inner {
    line_shift: u32,
    done: Mutex<Vec<DispatchTrace>>,
}

impl Recorder {
    /// A recorder of cache lines of `line_bytes` (a power of two).
    pub fn new(line_bytes: u32) -> Recorder {
        Recorder {
            inner: Arc::new(Inner {
                line_shift: line_bytes.max(1).trailing_zeros(),
                done: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The dispatches recorded so far, in the order they ended.
    pub fn take(&self) -> Vec<DispatchTrace> {
        std::mem::take(&mut *crate::plugin::lock(&self.inner.done))
    }
}

impl Plugin for Recorder {
    fn name(&self) -> &'static str {
        "timing"
    }

    fn wants(&self) -> Wants {
        Wants {
            instructions: true,
            memory: true,
            code: false,
        }
    }

    fn dispatch(&self, d: &DispatchInfo) -> Box<dyn DispatchObserver> {
        Box::new(Dispatch {
            inner: self.inner.clone(),
            info: d.clone(),
            groups: Mutex::new(Vec::new()),
        })
    }
}

struct Dispatch {
    inner: Arc<Inner>,
    info: DispatchInfo,
    /// (linear id, trace) of every finished workgroup.
    groups: Mutex<Vec<(u64, GroupTrace)>>,
}

impl DispatchObserver for Dispatch {
    fn worker(&self, _slot: usize) -> Box<dyn Observer + '_> {
        Box::new(Worker {
            d: self,
            model: Model::new(self.info.target),
            cache: vec![(u64::MAX, Info::default()); CACHE],
            group: [0; 3],
            waves: Vec::new(),
            done: Vec::new(),
            last: None,
        })
    }

    fn end(self: Box<Self>, end: &DispatchEnd) {
        let mut groups = self.groups.into_inner().unwrap_or_else(|e| e.into_inner());
        groups.sort_by_key(|g| g.0);
        let trace = DispatchTrace {
            kernel: self.info.kernel.clone(),
            target: self.info.target,
            grid: self.info.grid,
            block: self.info.block,
            instructions: end.instructions,
            error: end.error.clone(),
            groups: groups.into_iter().map(|g| g.1).collect(),
        };
        crate::plugin::lock(&self.inner.done).push(trace);
    }
}

/// Per-PC classification cache entries (direct mapped).
const CACHE: usize = 4096;

#[derive(Copy, Clone, Debug, Default)]
struct Info {
    kind: Option<Kind>,
    arg: u8,
    vm: u8,
    lgkm: u8,
}

struct Worker<'a> {
    d: &'a Dispatch,
    model: Model,
    cache: Vec<(u64, Info)>,
    group: [u32; 3],
    waves: Vec<WaveTrace>,
    done: Vec<(u64, GroupTrace)>,
    /// The wave of the last instruction event (its record gets the lines).
    last: Option<usize>,
}

impl Worker<'_> {
    fn info(&mut self, pc: u64, e: &InstEvent) -> Info {
        let slot = (pc >> 2) as usize % CACHE;
        if self.cache[slot].0 == pc {
            return self.cache[slot].1;
        }
        let info = classify(self.d.info.target, &self.model, e);
        self.cache[slot] = (pc, info);
        info
    }
}

fn classify(target: Target, model: &Model, e: &InstEvent) -> Info {
    let op = e.op;
    let name = op.inst.mnemonic();
    let mut info = Info {
        kind: None,
        arg: 0,
        vm: NO_WAIT,
        lgkm: NO_WAIT,
    };
    let kind = match op.class.family {
        Family::Salu => Kind::Salu,
        Family::Valu => {
            const TRANS: [&str; 7] = [
                "v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_",
            ];
            if TRANS.iter().any(|p| name.starts_with(p)) {
                Kind::Trans
            } else {
                Kind::Valu
            }
        }
        Family::Mfma => {
            // An MFMA the table does not know takes 4 passes (the most
            // common count of gfx942's shapes).
            info.arg = mfma_passes(target, name).map_or(4, |p| p.0);
            Kind::Mfma
        }
        Family::Smem => Kind::Smem,
        Family::VmemLoad => Kind::VmemLoad,
        Family::VmemStore => Kind::VmemStore,
        Family::VmemAtomic => Kind::VmemAtomic,
        Family::Lds => {
            // A lane exchange without memory (ds_swizzle, ds_permute):
            // 64 dwords through the LDS crossbar.
            info.arg = 2;
            Kind::Lds
        }
        Family::Branch => Kind::Branch,
        // GFX9's s_waitcnt (GFX11's split counters are not modelled yet:
        // such a wait is timed as any other SALU instruction).
        Family::Wait => match op.gfx9().and_then(|i| model.wait(i)) {
            Some(w) => {
                let c = |x: Option<u16>| x.map_or(NO_WAIT, |v| v.min(254) as u8);
                info.vm = c(w.get(Counter::Vm));
                info.lgkm = c(w.get(Counter::Lgkm));
                Kind::Wait
            }
            None => Kind::Other,
        },
        Family::Barrier => Kind::Barrier,
        Family::Other => Kind::Other,
    };
    info.kind = Some(kind);
    info
}

impl Observer for Worker<'_> {
    fn group_begin(&mut self, g: &GroupEvent) {
        self.group = g.group;
        self.waves.clear();
        self.waves.resize(g.waves as usize, WaveTrace::default());
    }

    fn group_end(&mut self, g: &GroupEvent) {
        let grid = self.d.info.grid;
        let id = u64::from(g.group[0])
            + u64::from(grid[0])
                * (u64::from(g.group[1]) + u64::from(grid[1]) * u64::from(g.group[2]));
        let waves = std::mem::take(&mut self.waves);
        self.done.push((id, GroupTrace { waves }));
        self.last = None;
    }

    fn instruction(&mut self, e: &InstEvent) {
        let info = self.info(e.pc, e);
        let w = e.id.wave as usize;
        let Some(wave) = self.waves.get_mut(w) else {
            return;
        };
        wave.recs.push(Rec {
            kind: info.kind.unwrap_or(Kind::Other),
            arg: info.arg,
            vm: info.vm,
            lgkm: info.lgkm,
            count: 0,
            first: 0,
        });
        self.last = Some(w);
    }

    fn memory(&mut self, m: &MemEvent) {
        let shift = self.d.inner.line_shift;
        let Some(w) = self.last.filter(|&w| w == m.id.wave as usize) else {
            return;
        };
        let c = m.class();
        if c.seg == Seg::Scalar || m.exec == 0 {
            return;
        }
        let lanes = m.lanes();
        let bytes = u64::from(c.bytes.max(1));
        let grid = self.d.info.grid;
        let group = u64::from(self.group[0])
            + u64::from(grid[0])
                * (u64::from(self.group[1]) + u64::from(grid[1]) * u64::from(self.group[2]));
        let wave_id = (group << 5) | w as u64;
        let wave = &mut self.waves[w];
        let Some(rec) = wave.recs.last_mut() else {
            return;
        };
        if c.seg == Seg::Lds || c.seg == Seg::Gds || lanes_in(&lanes, m.exec, Space::Lds) {
            rec.kind = Kind::Lds;
            rec.arg = lds_cycles(&lanes, m.exec, bytes);
            return;
        }
        if c.mem == MemKind::None {
            return;
        }
        let first = wave.lines.len();
        for l in 0..64 {
            if m.exec >> l & 1 == 0 {
                continue;
            }
            let a = match lanes.space[l] {
                Space::Global => lanes.addr[l],
                // Private memory is swizzled per lane (dword `j` of lane
                // `l` at `j * 256 + l * 4` of the wave's scratch), and
                // each wave has its own: a synthetic region per wave.
                Space::Scratch => {
                    (0xF << 60) | (wave_id << 32) | ((lanes.addr[l] / 4) * 256 + l as u64 * 4)
                }
                Space::Lds | Space::Gds => continue,
            };
            let (lo, hi) = (a >> shift, (a + bytes - 1) >> shift);
            for line in lo..=hi {
                wave.lines.push(line);
            }
        }
        let tail = &mut wave.lines[first..];
        tail.sort_unstable();
        let mut n = 0;
        for i in 0..tail.len() {
            if i == 0 || tail[i] != tail[n - 1] {
                tail[n] = tail[i];
                n += 1;
            }
        }
        wave.lines.truncate(first + n);
        rec.first = first as u32;
        rec.count = n.min(usize::from(u16::MAX)) as u16;
    }

    fn finish(self: Box<Self>) {
        let mut g = crate::plugin::lock(&self.d.groups);
        g.extend(self.done);
    }
}

fn lanes_in(lanes: &crate::plugin::Lanes, exec: u64, s: Space) -> bool {
    (0..64).any(|l| exec >> l & 1 != 0 && lanes.space[l] == s)
}

/// Cycles the LDS is busy with an access: per group of 32 lanes, the most
/// distinct dwords any of the 32 four-byte banks must deliver (lanes
/// reading the same dword share it), at least one cycle per group.
fn lds_cycles(lanes: &crate::plugin::Lanes, exec: u64, bytes: u64) -> u8 {
    let dwords = bytes.div_ceil(4).clamp(1, 4);
    let mut total = 0u64;
    let mut keys = [0u64; 128];
    for half in 0..2 {
        let mut n = 0;
        for l in half * 32..half * 32 + 32 {
            if exec >> l & 1 == 0 {
                continue;
            }
            for k in 0..dwords {
                let dw = (lanes.addr[l] / 4 + k) & 0xffff_ffff;
                keys[n] = (dw % 32) << 32 | dw;
                n += 1;
            }
        }
        if n == 0 {
            continue;
        }
        let keys = &mut keys[..n];
        keys.sort_unstable();
        let (mut best, mut run, mut prev) = (0u64, 0u64, u64::MAX);
        for &k in keys.iter() {
            if k == prev {
                continue;
            }
            if prev == u64::MAX || k >> 32 != prev >> 32 {
                run = 0;
            }
            run += 1;
            best = best.max(run);
            prev = k;
        }
        total += best.max(1);
    }
    total.clamp(1, 255) as u8
}
