//! The `hazards` plugin: what would go wrong on hardware that the
//! emulator, which runs every memory instruction to completion before the
//! next, hides.
//!
//! * **Missing waits.** Each wave's memory instructions are tracked as the
//!   hardware's counters see them ([`rocjitsu_code::analysis::waitcnt`]):
//!   a load's destination registers stay "in flight" until an `s_waitcnt`
//!   proves the load complete. An instruction that reads or overwrites such
//!   a register is reported with the load that writes it.
//! * **LDS writes at a barrier.** An LDS store or atomic, or a load into
//!   LDS (LDS DMA), still in flight when its wave reaches `s_barrier`: the
//!   other waves may read LDS before it lands.
//! * **Wait states.** The documented hazards the hardware does not
//!   interlock (VALU writes of SGPRs read by VMEM, DPP, lane selects, MFMA
//!   results, ...), checked along the path each wave takes with the shared
//!   rule table ([`rocjitsu_code::analysis::waitstates`]).
//!
//! Each report names the kernel, the PC (and its offset in the kernel),
//! the instruction, the register and the instruction that produced it.
//! Reports are merged per (kind, PC, producer, register) with the number
//! of waves that hit them, unless `all=true`.

use super::{
    DispatchEnd, DispatchInfo, DispatchObserver, Family, Format, InstEvent, MemEvent, MemKind,
    Observer, Options, Output, Plugin, PluginError, SCHEMA, Seg, Sink, Space, Spec, Wants, WaveId,
    lock,
};
use rocjitsu_code::analysis::waitcnt::{Events, Model, Pending, Wait};
use rocjitsu_code::analysis::waitstates::{Facts, Plan, RULES, Violation, Window};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::regs::Range;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub const OPTIONS: &str =
    "format=text|jsonl (text), all=true|false (false: one report per PC, producer and register)";

/// What kind of hazard.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A register read before its load is known complete.
    Read,
    /// A register overwritten before the load writing it is known complete.
    Overwrite,
    /// `s_barrier` with an LDS write in flight.
    Barrier,
    /// A wait-state rule ([`RULES`] index).
    WaitStates(usize),
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Read | Kind::Overwrite => "missing-wait",
            Kind::Barrier => "barrier-lds-write",
            Kind::WaitStates(_) => "wait-states",
        }
    }
}

/// One hazard, as merged over the waves that hit it.
#[derive(Clone, Debug)]
struct Report {
    kind: Kind,
    pc: u64,
    inst: Inst,
    reg: Option<Range>,
    producer_pc: u64,
    producer: Inst,
    /// Counters that would have covered it (missing waits).
    counters: String,
    needed: u8,
    got: u32,
    waves: u64,
    first: WaveId,
}

type Key = (Kind, u64, u64, Option<Range>);

struct Inner {
    format: Format,
    all: bool,
    sink: Mutex<Sink>,
    /// Reports of every dispatch so far, for the summary.
    total: std::sync::atomic::AtomicU64,
    dispatches: std::sync::atomic::AtomicU64,
}

pub struct Hazards {
    inner: Arc<Inner>,
}

fn options(spec: &Spec) -> Result<(Format, bool), PluginError> {
    let mut o = Options::new("hazards", OPTIONS, spec);
    let r = (o.format()?, o.bool("all", false)?);
    o.finish().map(|()| r)
}

pub(crate) fn check(spec: &Spec) -> Result<(), PluginError> {
    options(spec).map(|_| ())
}

pub(crate) fn make(spec: &Spec, out: &Output) -> Result<Box<dyn Plugin>, PluginError> {
    let (format, all) = options(spec)?;
    let sink = out.open("hazards", format.ext())?;
    Ok(Box::new(Hazards {
        inner: Arc::new(Inner {
            format,
            all,
            sink: Mutex::new(sink),
            total: Default::default(),
            dispatches: Default::default(),
        }),
    }))
}

impl Plugin for Hazards {
    fn name(&self) -> &'static str {
        "hazards"
    }

    fn wants(&self) -> Wants {
        Wants {
            instructions: true,
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
            reports: Mutex::new(Reports::default()),
            inner: self.inner.clone(),
        })
    }

    fn finish(&self) {
        let i = &self.inner;
        let n = i.total.load(std::sync::atomic::Ordering::Relaxed);
        let d = i.dispatches.load(std::sync::atomic::Ordering::Relaxed);
        let text = match i.format {
            Format::Text => format!("hazards: {n} hazard(s) in {d} dispatch(es)\n"),
            Format::Jsonl => format!(
                "{}\n",
                json!({"schema": SCHEMA, "plugin": "hazards", "type": "summary",
                       "pid": std::process::id(), "dispatches": d, "hazards": n})
            ),
        };
        lock(&i.sink).write(&text);
    }
}

/// Merged reports, or every occurrence (`all=true`).
#[derive(Default)]
struct Reports {
    merged: HashMap<Key, Report>,
    list: Vec<Report>,
}

impl Reports {
    fn add(&mut self, all: bool, r: Report) {
        if all {
            self.list.push(r);
            return;
        }
        let key = (r.kind, r.pc, r.producer_pc, r.reg);
        self.merged
            .entry(key)
            .and_modify(|e| e.waves += r.waves)
            .or_insert(r);
    }

    fn merge(&mut self, o: Reports) {
        for (k, r) in o.merged {
            self.merged
                .entry(k)
                .and_modify(|e| {
                    e.waves += r.waves;
                    if (r.first.group, r.first.wave) < (e.first.group, e.first.wave) {
                        e.first = r.first;
                    }
                })
                .or_insert(r);
        }
        self.list.extend(o.list);
    }

    fn into_sorted(self) -> Vec<Report> {
        let mut v: Vec<Report> = self.merged.into_values().chain(self.list).collect();
        v.sort_by_key(|r| (r.pc, r.producer_pc, r.first.group, r.first.wave));
        v
    }
}

struct Dispatch {
    info: DispatchInfo,
    reports: Mutex<Reports>,
    inner: Arc<Inner>,
}

impl DispatchObserver for Dispatch {
    fn worker(&self, _slot: usize) -> Box<dyn Observer + '_> {
        Box::new(Worker {
            d: self,
            model: Model::new(self.info.target),
            cache: vec![None; CACHE],
            waves: Vec::new(),
            reports: Reports::default(),
            scratch: Vec::new(),
        })
    }

    fn end(self: Box<Self>, _end: &DispatchEnd) {
        let reports = self
            .reports
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .into_sorted();
        let i = &self.inner;
        i.total
            .fetch_add(reports.len() as u64, std::sync::atomic::Ordering::Relaxed);
        if reports.is_empty() {
            return;
        }
        let d = &self.info;
        let mut text = String::new();
        for r in &reports {
            match i.format {
                Format::Text => text += &describe(d, r),
                Format::Jsonl => text += &format!("{}\n", record(d, r)),
            }
        }
        lock(&i.sink).write(&text);
    }
}

fn offset(d: &DispatchInfo, pc: u64) -> String {
    format!("{}+0x{:x}", d.kernel, pc.wrapping_sub(d.entry))
}

fn describe(d: &DispatchInfo, r: &Report) -> String {
    let reg = r.reg.map_or(String::new(), |x| x.to_string());
    let what = match r.kind {
        Kind::Read => format!(
            "reads {reg} before `{}` ({}) has written it: no wait on {} covers it",
            r.producer,
            offset(d, r.producer_pc),
            r.counters
        ),
        Kind::Overwrite => format!(
            "overwrites {reg} that `{}` ({}) has yet to write: no wait on {} covers it",
            r.producer,
            offset(d, r.producer_pc),
            r.counters
        ),
        Kind::Barrier => format!(
            "the LDS write `{}` ({}) may still be in flight: no wait on {} before the barrier",
            r.producer,
            offset(d, r.producer_pc),
            r.counters
        ),
        Kind::WaitStates(i) => format!(
            "{} {}after `{}` ({}): {} wait state(s), {} needed [{}]",
            RULES[i].id,
            if reg.is_empty() {
                String::new()
            } else {
                format!("on {reg} ")
            },
            r.producer,
            offset(d, r.producer_pc),
            r.got,
            r.needed,
            RULES[i].about
        ),
    };
    format!(
        "hazards: {}: PC 0x{:x} ({}) `{}` {what}; {} wave(s), first workgroup ({}, {}, {}) wave {}\n",
        r.kind.name(),
        r.pc,
        offset(d, r.pc),
        r.inst,
        r.waves,
        r.first.group[0],
        r.first.group[1],
        r.first.group[2],
        r.first.wave
    )
}

fn record(d: &DispatchInfo, r: &Report) -> serde_json::Value {
    let rule = match r.kind {
        Kind::WaitStates(i) => json!(RULES[i].id),
        _ => serde_json::Value::Null,
    };
    json!({
        "schema": SCHEMA,
        "plugin": "hazards",
        "type": "hazard",
        "pid": std::process::id(),
        "dispatch": d.seq,
        "kernel": d.kernel,
        "kind": r.kind.name(),
        "access": match r.kind { Kind::Read => "read", Kind::Overwrite => "write", _ => "" },
        "rule": rule,
        "pc": r.pc,
        "offset": r.pc.wrapping_sub(d.entry),
        "instruction": r.inst.to_string(),
        "register": r.reg.map(|x| x.to_string()),
        "producer": {
            "pc": r.producer_pc,
            "offset": r.producer_pc.wrapping_sub(d.entry),
            "instruction": r.producer.to_string(),
        },
        "counters": r.counters,
        "wait_states": {"needed": r.needed, "got": r.got},
        "waves": r.waves,
        "first": {"group": r.first.group, "wave": r.first.wave},
    })
}

/// Decoded facts per PC, direct-mapped (validated by the instruction, so
/// code rewritten between dispatches is decoded again).
const CACHE: usize = 4096;

#[derive(Clone)]
struct Info {
    pc: u64,
    inst: Inst,
    facts: Facts,
    /// The wait-state checks of this instruction, worked out once.
    plan: Plan,
    events: Events,
    wait: Option<Wait>,
    /// An LDS store or atomic (visible to the workgroup's other waves).
    lds_write: bool,
    barrier: bool,
}

type Tag = (u64, Inst);

struct WaveState {
    pending: Pending<Tag>,
    window: Window<Tag>,
}

struct Worker<'a> {
    d: &'a Dispatch,
    model: Model,
    cache: Vec<Option<Box<Info>>>,
    /// Per wave index of the current workgroup.
    waves: Vec<WaveState>,
    reports: Reports,
    scratch: Vec<Violation<Tag>>,
}

impl Worker<'_> {
    #[inline]
    fn info(&mut self, pc: u64, inst: &Inst, class: &super::Class) -> usize {
        let slot = ((pc >> 2) as usize) & (CACHE - 1);
        let hit = self.cache[slot]
            .as_ref()
            .is_some_and(|i| i.pc == pc && i.inst == *inst);
        if !hit {
            self.fill(slot, pc, inst, class);
        }
        slot
    }

    #[cold]
    #[inline(never)]
    fn fill(&mut self, slot: usize, pc: u64, inst: &Inst, class: &super::Class) {
        let facts = Facts::of(inst);
        let lds_write = (class.seg == Seg::Lds
            && matches!(class.mem, MemKind::Store | MemKind::Atomic))
            || lds_dma(&facts);
        self.cache[slot] = Some(Box::new(Info {
            pc,
            inst: *inst,
            plan: Plan::new(self.d.info.target, &facts),
            facts,
            events: self.model.events(inst),
            wait: self.model.wait(inst),
            lds_write,
            barrier: class.family == Family::Barrier,
        }));
    }

    #[inline]
    fn wave(&mut self, id: WaveId) -> &mut WaveState {
        let i = id.wave as usize;
        if i < self.waves.len() {
            return &mut self.waves[i];
        }
        let target = self.d.info.target;
        while self.waves.len() <= i {
            self.waves.push(WaveState {
                pending: Pending::default(),
                window: Window::new(target),
            });
        }
        &mut self.waves[i]
    }
}

impl Observer for Worker<'_> {
    fn wave_begin(&mut self, w: WaveId) {
        let s = self.wave(w);
        s.pending.clear();
        s.window.clear();
    }

    fn instruction(&mut self, e: &InstEvent) {
        // The wait-state rules and counters are GFX9's.
        let Some(inst) = e.op.gfx9() else {
            return;
        };
        let slot = self.info(e.pc, inst, &e.op.class);
        self.wave(e.id);
        let info = self.cache[slot].as_deref().expect("just filled");
        let s = &mut self.waves[e.id.wave as usize];
        if !s.pending.is_empty() {
            outstanding(&mut self.reports, self.d.inner.all, e, info, &s.pending);
        }
        self.scratch.clear();
        s.window
            .step_plan(&info.plan, (e.pc, info.inst), &mut self.scratch);
        if !self.scratch.is_empty() {
            wait_states(&mut self.reports, self.d.inner.all, e, info, &self.scratch);
        }
        if let Some(w) = &info.wait {
            s.pending.wait(w);
        }
        // FLAT (generic) instructions wait for their addresses (memory()).
        if !info.events.is_empty() && !info.events.flat {
            s.pending.issue(
                &info.events,
                false,
                info.facts.regs.writes(),
                info.lds_write,
                (e.pc, info.inst),
            );
        }
    }

    fn memory(&mut self, m: &MemEvent) {
        if m.class().seg != Seg::Flat {
            return;
        }
        let Some(inst) = m.op.gfx9() else {
            return;
        };
        let slot = self.info(m.pc, inst, &m.op.class);
        let lanes = if m.exec != 0 { Some(m.lanes()) } else { None };
        let lds = lanes
            .is_some_and(|l| (0..64).any(|i| m.exec >> i & 1 != 0 && l.space[i] == Space::Lds));
        let info = self.cache[slot].as_deref().expect("just filled");
        let (events, writes, inst) = (info.events, info.facts.regs, info.inst);
        let s = self.wave(m.id);
        s.pending
            .issue(&events, lds, writes.writes(), false, (m.pc, inst));
    }

    fn finish(self: Box<Self>) {
        lock(&self.d.reports).merge(self.reports);
    }
}

/// A report of `kind` at the instruction of `e`, produced by `producer`.
fn report_at(
    e: &InstEvent,
    info: &Info,
    kind: Kind,
    reg: Option<Range>,
    producer: Tag,
    counters: String,
) -> Report {
    Report {
        kind,
        pc: e.pc,
        inst: info.inst,
        reg,
        producer_pc: producer.0,
        producer: producer.1,
        counters,
        needed: 0,
        got: 0,
        waves: 1,
        first: e.id,
    }
}

/// Reads and overwrites of registers whose load is still outstanding, and
/// LDS writes still in flight at a barrier.
#[inline(never)]
fn outstanding(
    reports: &mut Reports,
    all: bool,
    e: &InstEvent,
    info: &Info,
    pending: &Pending<Tag>,
) {
    let counters = |op: &rocjitsu_code::analysis::waitcnt::Op<Tag>| {
        op.counters()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join("/")
    };
    let mut read = [None; 8];
    let mut nread = 0;
    for r in info.facts.regs.reads() {
        for (reg, op) in pending.writers_of(r) {
            if let Some(slot) = read.get_mut(nread) {
                *slot = Some((reg, op.tag.0));
                nread += 1;
            }
            reports.add(
                all,
                report_at(e, info, Kind::Read, Some(reg), op.tag, counters(op)),
            );
        }
    }
    for r in info.facts.regs.writes() {
        // A read of the same register already names the hazard.
        for (reg, op) in pending.writers_of(r) {
            if read.contains(&Some((reg, op.tag.0))) {
                continue;
            }
            reports.add(
                all,
                report_at(e, info, Kind::Overwrite, Some(reg), op.tag, counters(op)),
            );
        }
    }
    if info.barrier {
        for op in pending.shared_writes() {
            reports.add(
                all,
                report_at(e, info, Kind::Barrier, None, op.tag, counters(op)),
            );
        }
    }
}

/// The wait-state rules the instruction of `e` broke.
#[cold]
#[inline(never)]
fn wait_states(
    reports: &mut Reports,
    all: bool,
    e: &InstEvent,
    info: &Info,
    found: &[Violation<Tag>],
) {
    for v in found {
        let mut r = report_at(
            e,
            info,
            Kind::WaitStates(v.rule),
            v.reg,
            v.producer,
            String::new(),
        );
        r.needed = v.needed;
        r.got = v.got;
        reports.add(all, r);
    }
}

/// A load into LDS (LDS DMA): a vector memory instruction reading M0, where
/// the LDS address comes from.
fn lds_dma(f: &Facts) -> bool {
    use rocjitsu_code::analysis::waitstates::kind;
    f.is(kind::VMEM | kind::FLAT) && f.is(kind::M0_READ)
}
