//! The `races` plugin: accesses to the same bytes that nothing orders,
//! where at least one writes.
//!
//! * Within a workgroup: LDS and global accesses by different waves
//!   between the same two barriers (`s_barrier` orders the waves of a
//!   workgroup; nothing else does).
//! * Across workgroups: global accesses by different workgroups of one
//!   dispatch (nothing orders workgroups).
//!
//! A race needs a plain write: atomics race neither with each other nor
//! with reads (a relaxed atomic load compiles to a plain load on LDS and,
//! below agent scope, on gfx90a; compare-and-swap loops read before they
//! swap). Loads and stores with the coherence bits set (`glc`/`scc`,
//! gfx942+ `sc0`/`sc1`: atomic loads and stores at agent or system
//! scope, volatile accesses) count as atomics. Every access is recorded as a byte interval (lanes that touch
//! adjacent bytes merge into one), tagged with its wave, workgroup and
//! PC. The intervals of a workgroup are checked at each barrier and when
//! the workgroup ends; the global intervals of the whole dispatch when it
//! ends (sorted, then swept). Reports name the kernel, both instructions
//! (PC and offset in the kernel), their waves, the space, the address and
//! the bytes; they are merged per pair of PCs.

use super::{
    DispatchEnd, DispatchInfo, DispatchObserver, Format, GroupEvent, MemEvent, MemKind, Observer,
    Options, Output, Plugin, PluginError, SCHEMA, Seg, Sink, Space, Spec, Wants, WaveId, lock,
};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub const OPTIONS: &str = "format=text|jsonl (text), global=true|false (true: also check global memory across workgroups), max_intervals=N (4000000: global intervals kept per dispatch)";

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Access {
    Read,
    Write,
    Atomic,
}

impl Access {
    fn name(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Atomic => "atomic",
        }
    }
}

/// Bytes `[lo, hi)` one instruction of one wave accessed.
#[derive(Copy, Clone, Debug)]
struct Interval {
    lo: u64,
    hi: u64,
    pc: u64,
    /// Linear workgroup index in the dispatch.
    group: u32,
    wave: u16,
    access: Access,
}

impl Interval {
    /// Whether `a` and `b` race, owners aside: they overlap and one of them
    /// is a plain write.
    fn conflicts(a: &Interval, b: &Interval) -> bool {
        a.lo < b.hi && b.lo < a.hi && (a.access == Access::Write || b.access == Access::Write)
    }
}

/// A race, merged per pair of PCs.
#[derive(Clone, Debug)]
struct Race {
    space: Space,
    scope: &'static str,
    a: Interval,
    b: Interval,
    /// The first overlapping byte and how many overlap.
    addr: u64,
    bytes: u64,
    count: u64,
}

type Key = (Space, u64, u64, Access, Access);

#[derive(Default)]
struct Races(HashMap<Key, Race>);

impl Races {
    fn add(&mut self, space: Space, scope: &'static str, a: &Interval, b: &Interval) {
        // Order the pair so that the same two instructions give one key.
        let (a, b) = if (a.pc, a.access) <= (b.pc, b.access) {
            (a, b)
        } else {
            (b, a)
        };
        let lo = a.lo.max(b.lo);
        let hi = a.hi.min(b.hi);
        self.0
            .entry((space, a.pc, b.pc, a.access, b.access))
            .and_modify(|r| r.count += 1)
            .or_insert(Race {
                space,
                scope,
                a: *a,
                b: *b,
                addr: lo,
                bytes: hi - lo,
                count: 1,
            });
    }

    fn merge(&mut self, o: Races) {
        for (k, r) in o.0 {
            self.0
                .entry(k)
                .and_modify(|e| e.count += r.count)
                .or_insert(r);
        }
    }
}

/// Sorts `v` by address and keeps, of the intervals that are the same
/// bytes, access and PC, those of at most two owners: a third adds no
/// race (any owner differs from one of two others).
fn compact(v: &mut Vec<Interval>, owner: &impl Fn(&Interval) -> u64) {
    v.sort_unstable_by_key(|i| (i.lo, i.hi, i.access, i.pc, owner(i)));
    let mut out = 0;
    let mut run = 0;
    for k in 0..v.len() {
        let i = v[k];
        let same = out > 0 && {
            let p = &v[out - 1];
            (p.lo, p.hi, p.access, p.pc) == (i.lo, i.hi, i.access, i.pc)
        };
        if same {
            if owner(&v[out - 1]) == owner(&i) || run >= 2 {
                continue;
            }
            run += 1;
        } else {
            run = 1;
        }
        v[out] = i;
        out += 1;
    }
    v.truncate(out);
}

/// Reports every conflicting pair among `v` whose owners differ by
/// `owner`. Sorts and compacts `v`, unless it holds no plain write: a race
/// needs one, so reads and atomics alone (a GEMM's tile reads between
/// barriers) are left as they are.
fn sweep(
    v: &mut Vec<Interval>,
    owner: impl Fn(&Interval) -> u64,
    mut found: impl FnMut(&Interval, &Interval),
) {
    if !v.iter().any(|i| i.access == Access::Write) {
        return;
    }
    compact(v, &owner);
    // Active intervals (they reach past the current start): writes, and
    // the others (reads, atomics), which race only with writes.
    let mut writes: Vec<Interval> = Vec::new();
    let mut others: Vec<Interval> = Vec::new();
    for i in v.iter() {
        if writes.last().is_some_and(|w| w.hi <= i.lo) || writes.len() > 64 {
            writes.retain(|w| w.hi > i.lo);
        }
        if others.last().is_some_and(|w| w.hi <= i.lo) || others.len() > 64 {
            others.retain(|r| r.hi > i.lo);
        }
        for w in &writes {
            if owner(w) != owner(i) && Interval::conflicts(w, i) {
                found(w, i);
            }
        }
        if i.access == Access::Write {
            for r in &others {
                if owner(r) != owner(i) && Interval::conflicts(r, i) {
                    found(r, i);
                }
            }
            writes.push(*i);
        } else {
            others.push(*i);
        }
    }
}

struct Inner {
    format: Format,
    global: bool,
    max_intervals: usize,
    sink: Mutex<Sink>,
    total: std::sync::atomic::AtomicU64,
    dispatches: std::sync::atomic::AtomicU64,
}

pub struct RacesPlugin {
    inner: Arc<Inner>,
}

fn options(spec: &Spec) -> Result<(Format, bool, usize), PluginError> {
    let mut o = Options::new("races", OPTIONS, spec);
    let r = (
        o.format()?,
        o.bool("global", true)?,
        o.count("max_intervals", 4_000_000)?,
    );
    o.finish().map(|()| r)
}

pub(crate) fn check(spec: &Spec) -> Result<(), PluginError> {
    options(spec).map(|_| ())
}

pub(crate) fn make(spec: &Spec, out: &Output) -> Result<Box<dyn Plugin>, PluginError> {
    let (format, global, max_intervals) = options(spec)?;
    let sink = out.open("races", format.ext())?;
    Ok(Box::new(RacesPlugin {
        inner: Arc::new(Inner {
            format,
            global,
            max_intervals,
            sink: Mutex::new(sink),
            total: Default::default(),
            dispatches: Default::default(),
        }),
    }))
}

impl Plugin for RacesPlugin {
    fn name(&self) -> &'static str {
        "races"
    }

    fn wants(&self) -> Wants {
        Wants {
            instructions: false,
            memory: true,
            code: false,
        }
    }

    fn dispatch(&self, d: &DispatchInfo) -> Box<dyn DispatchObserver> {
        self.inner
            .dispatches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Box::new(Dispatch {
            info: d.clone(),
            state: Mutex::new((Races::default(), Vec::new(), false)),
            inner: self.inner.clone(),
        })
    }

    fn finish(&self) {
        let i = &self.inner;
        let n = i.total.load(std::sync::atomic::Ordering::Relaxed);
        let d = i.dispatches.load(std::sync::atomic::Ordering::Relaxed);
        let text = match i.format {
            Format::Text => format!("races: {n} race(s) in {d} dispatch(es)\n"),
            Format::Jsonl => format!(
                "{}\n",
                json!({"schema": SCHEMA, "plugin": "races", "type": "summary",
                       "pid": std::process::id(), "dispatches": d, "races": n})
            ),
        };
        lock(&i.sink).write(&text);
    }
}

struct Dispatch {
    info: DispatchInfo,
    /// Races found, the dispatch's global intervals, and whether some were
    /// dropped past `max_intervals`.
    state: Mutex<(Races, Vec<Interval>, bool)>,
    inner: Arc<Inner>,
}

impl DispatchObserver for Dispatch {
    fn worker(&self, _slot: usize) -> Box<dyn Observer + '_> {
        Box::new(Worker {
            d: self,
            group: 0,
            lds: Vec::new(),
            global: Vec::new(),
            dispatch_global: Vec::new(),
            next_compact: [COMPACT_AT; 3],
            runs: Vec::with_capacity(64),
            dropped: false,
            races: Races::default(),
        })
    }

    fn end(self: Box<Self>, _end: &DispatchEnd) {
        let (mut races, mut global, dropped) =
            self.state.into_inner().unwrap_or_else(|e| e.into_inner());
        sweep(
            &mut global,
            |i| u64::from(i.group),
            |a, b| {
                races.add(Space::Global, "dispatch", a, b);
            },
        );
        let i = &self.inner;
        let mut list: Vec<Race> = races.0.into_values().collect();
        list.sort_by_key(|r| (r.a.pc, r.b.pc));
        i.total
            .fetch_add(list.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let d = &self.info;
        let mut text = String::new();
        if dropped {
            let why = format!(
                "races: kernel {}: more than {} global accesses; workgroup pairs past them were not checked (races:max_intervals=N raises it)",
                d.kernel, i.max_intervals
            );
            tracing::warn!("{why}");
            if i.format == Format::Text {
                text += &why;
                text += "\n";
            }
        }
        for r in &list {
            match i.format {
                Format::Text => text += &describe(d, r),
                Format::Jsonl => text += &format!("{}\n", record(d, r)),
            }
        }
        if !text.is_empty() {
            lock(&i.sink).write(&text);
        }
    }
}

fn side(d: &DispatchInfo, i: &Interval, group: [u32; 3]) -> serde_json::Value {
    json!({
        "pc": i.pc,
        "offset": i.pc.wrapping_sub(d.entry),
        "access": i.access.name(),
        "group": group,
        "wave": i.wave,
    })
}

fn group3(d: &DispatchInfo, linear: u32) -> [u32; 3] {
    let [gx, gy, _] = d.grid;
    let (gx, gy) = (gx.max(1), gy.max(1));
    [linear % gx, (linear / gx) % gy, linear / (gx * gy)]
}

fn describe(d: &DispatchInfo, r: &Race) -> String {
    let one = |i: &Interval| {
        let g = group3(d, i.group);
        format!(
            "{} at {}+0x{:x} by workgroup ({}, {}, {}) wave {}",
            i.access.name(),
            d.kernel,
            i.pc.wrapping_sub(d.entry),
            g[0],
            g[1],
            g[2],
            i.wave
        )
    };
    format!(
        "races: {} race ({}): {} byte(s) at {} 0x{:x}: {} and {}; {} time(s)\n",
        r.space.name(),
        r.scope,
        r.bytes,
        r.space.name(),
        r.addr,
        one(&r.a),
        one(&r.b),
        r.count
    )
}

fn record(d: &DispatchInfo, r: &Race) -> serde_json::Value {
    json!({
        "schema": SCHEMA,
        "plugin": "races",
        "type": "race",
        "pid": std::process::id(),
        "dispatch": d.seq,
        "kernel": d.kernel,
        "space": r.space.name(),
        "scope": r.scope,
        "address": r.addr,
        "bytes": r.bytes,
        "first": side(d, &r.a, group3(d, r.a.group)),
        "second": side(d, &r.b, group3(d, r.b.group)),
        "count": r.count,
    })
}

/// Interval lists are compacted ([`compact`]) each time they double past
/// this length, so that loops over the same bytes stay small.
const COMPACT_AT: usize = 1 << 16;

struct Worker<'a> {
    d: &'a Dispatch,
    /// Linear index of the workgroup running on this thread.
    group: u32,
    /// This workgroup's LDS and global intervals since its last barrier.
    lds: Vec<Interval>,
    global: Vec<Interval>,
    /// Global intervals of every workgroup this thread ran.
    dispatch_global: Vec<Interval>,
    /// The lengths of `lds`, `global` and `dispatch_global` at which they
    /// are next compacted: twice what the last compaction left, so a list
    /// whose intervals are mostly distinct is not sorted again and again.
    next_compact: [usize; 3],
    /// Scratch for `memory`: one instruction's runs of bytes (space, lo, hi).
    runs: Vec<(u8, u64, u64)>,
    dropped: bool,
    races: Races,
}

impl Worker<'_> {
    /// Checks the workgroup's intervals since the last barrier.
    fn epoch(&mut self) {
        let races = &mut self.races;
        for (space, v) in [
            (Space::Lds, &mut self.lds),
            (Space::Global, &mut self.global),
        ] {
            sweep(
                v,
                |i| u64::from(i.wave),
                |a, b| {
                    races.add(space, "workgroup", a, b);
                },
            );
            v.clear();
        }
        self.next_compact[..2].fill(COMPACT_AT);
    }

    fn linear(&self, g: [u32; 3]) -> u32 {
        let [gx, gy, _] = self.d.info.grid;
        g[0] + gx * (g[1] + gy * g[2])
    }

    fn push(&mut self, space: Space, i: Interval) {
        let (list, next) = match space {
            Space::Lds => (&mut self.lds, &mut self.next_compact[0]),
            Space::Global => (&mut self.global, &mut self.next_compact[1]),
            _ => return,
        };
        // Extend the previous interval of the same instruction and wave.
        if let Some(last) = list.last_mut()
            && last.pc == i.pc
            && last.wave == i.wave
            && last.access == i.access
            && last.hi == i.lo
        {
            last.hi = i.hi;
        } else {
            list.push(i);
            if list.len() >= *next {
                compact(list, &|i: &Interval| u64::from(i.wave));
                *next = (2 * list.len()).max(COMPACT_AT);
            }
        }
        if space == Space::Global && self.d.inner.global {
            if let Some(last) = self.dispatch_global.last_mut()
                && last.pc == i.pc
                && last.group == i.group
                && last.access == i.access
                && last.hi == i.lo
            {
                last.hi = i.hi;
            } else {
                if self.dispatch_global.len() >= self.next_compact[2] {
                    compact(&mut self.dispatch_global, &|i: &Interval| {
                        u64::from(i.group)
                    });
                    self.next_compact[2] = (2 * self.dispatch_global.len()).max(COMPACT_AT);
                }
                if self.dispatch_global.len() < self.d.inner.max_intervals {
                    self.dispatch_global.push(i);
                } else {
                    self.dropped = true;
                }
            }
        }
    }
}

impl Observer for Worker<'_> {
    fn group_begin(&mut self, g: &GroupEvent) {
        self.group = self.linear(g.group);
        self.lds.clear();
        self.global.clear();
        self.next_compact[..2].fill(COMPACT_AT);
    }

    fn group_end(&mut self, _g: &GroupEvent) {
        self.epoch();
    }

    fn barrier_release(&mut self, _group: [u32; 3]) {
        self.epoch();
    }

    fn memory(&mut self, m: &MemEvent) {
        let c = m.class();
        let access = match c.mem {
            _ if m.op.gfx9().is_some_and(coherent) => Access::Atomic,
            MemKind::Load => Access::Read,
            MemKind::Store => Access::Write,
            MemKind::Atomic => Access::Atomic,
            MemKind::None => return,
        };
        if m.exec == 0 && c.seg != Seg::Scalar {
            return;
        }
        let bytes = u64::from(m.bytes());
        let lanes = m.lanes();
        let WaveId { wave, .. } = m.id;
        let wave = wave as u16;
        let group = self.group;
        let mk = |lo: u64, n: u64| Interval {
            lo,
            hi: lo + n,
            pc: m.pc,
            group,
            wave,
            access,
        };
        if c.seg == Seg::Scalar {
            self.push(Space::Global, mk(lanes.addr[0], bytes));
            return;
        }
        // The `*2*` DS forms access two elements `(offset1 - offset0) *
        // unit` apart.
        let name = m.op.name();
        let two = c.seg == Seg::Lds
            && (name.contains("read2") || name.contains("write2") || name.contains("wrxchg2"));
        let (elem, second) = if two {
            let w = bytes / 2;
            let unit = w * if name.contains("st64") { 64 } else { 1 };
            let (o0, o1) = (m.op.imm as u64 & 0xff, (m.op.imm as u64 >> 8) & 0xff);
            (w, Some(o1.wrapping_sub(o0).wrapping_mul(unit)))
        } else {
            (bytes, None)
        };
        if let Some(d) = second {
            for l in 0..64 {
                if m.exec >> l & 1 == 0 {
                    continue;
                }
                let space = lanes.space[l];
                let a = lanes.addr[l];
                self.push(space, mk(a, elem));
                self.push(
                    space,
                    mk(u64::from((a as u32).wrapping_add(d as u32)), elem),
                );
            }
            return;
        }
        // One interval per run of bytes the wave's active lanes touch in
        // one space: lanes whose bytes follow the previous lane's (a
        // coalesced access) join in lane order; other orders (swizzled LDS
        // tiles) are sorted by address and joined where they touch or
        // overlap. Lanes of one wave never race with each other, so this
        // keeps every byte and owner.
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        for l in 0..64 {
            if m.exec >> l & 1 == 0 {
                continue;
            }
            let (space, a) = (lanes.space[l] as u8, lanes.addr[l]);
            match runs.last_mut() {
                Some(r) if r.0 == space && r.2 == a => r.2 = a + elem,
                _ => runs.push((space, a, a + elem)),
            }
        }
        let mut n = runs.len();
        if n > 1 {
            runs.sort_unstable_by_key(|r| (r.0, r.1));
            let mut out = 0;
            for k in 1..n {
                let r = runs[k];
                let cur = &mut runs[out];
                if cur.0 == r.0 && r.1 <= cur.2 {
                    cur.2 = cur.2.max(r.2);
                } else {
                    out += 1;
                    runs[out] = r;
                }
            }
            n = out + 1;
        }
        for &(space, lo, hi) in &runs[..n] {
            self.push(Space::ALL[usize::from(space)], mk(lo, hi - lo));
        }
        self.runs = runs;
    }

    fn finish(self: Box<Self>) {
        let d = self.d;
        let mut st = lock(&d.state);
        st.0.merge(self.races);
        st.2 |= self.dropped;
        let room = d.inner.max_intervals.saturating_sub(st.1.len());
        if self.dispatch_global.len() > room {
            st.2 = true;
        }
        st.1.extend(self.dispatch_global.into_iter().take(room));
    }
}

/// Whether a vector memory instruction sets the coherence bits
/// (`glc`/`scc`; `sc0`/`sc1` on gfx942+).
fn coherent(inst: &rocjitsu_isa::Inst) -> bool {
    use rocjitsu_isa::gfx9::Body;
    match inst.body() {
        Body::Flat(f) => f.glc || f.scc,
        Body::Mubuf(b) | Body::Mtbuf(b) => b.glc || b.scc,
        _ => false,
    }
}
