//! Register liveness and def-use chains over a [`Cfg`], for every target
//! whose instructions' registers the isa crate describes
//! ([`rocjitsu_isa::Instruction::regs`]).
//!
//! Registers are the units of [`rocjitsu_isa::gfx9::regs`]: SGPRs, VCC,
//! M0, EXEC, SCC, TTMPs, VGPRs and AccVGPRs, 32 bits each. An instruction
//! *uses* what it reads, plus EXEC (`exec_lo` in wave32) for every vector
//! instruction (every mnemonic not starting with `s_`). It *kills* (writes
//! the whole of, so that the value before is dead) only scalar units:
//! every vector register write is conservatively partial, since lanes
//! outside EXEC keep their value (and some writes are 16-bit halves or
//! single lanes). A write of one half of VCC or EXEC (a wave32 VOPC
//! writing `vcc_lo`) kills that half only. Registers addressed through M0
//! are not the printed ones: `s_movrels*`/`v_movrels*` (and the `*_movrelsd`
//! forms) use every register of the file from the printed source up, the
//! `*_movreld`/`*_movrelsd` destinations define that range and kill
//! nothing; between `s_set_gpr_idx_on` and `s_set_gpr_idx_off` in a block
//! (GFX9), vector operands are widened the same way and M0 is used.
//!
//! Liveness is the backward fixed point over each function's blocks.
//! Calls go through summaries of the callee (what its entry reads before
//! writing, and what passes through it unwritten; computed bottom-up to a
//! fixed point, recursion included), so what is live after one call does
//! not leak into another caller. A callee's own instructions see, at its
//! returns, the union of what is live after every call to it (and at its
//! tail callers' returns). Conservatively, everything is live after an
//! unknown indirect jump or call, a broken block, and at the returns of a
//! function whose callers are not all known (one that no call in the
//! object reaches, or any function when the object has an unknown
//! indirect call). Nothing is live after `s_endpgm`.
//!
//! Def-use chains are reaching definitions over the same graph, with calls
//! going into the callee and returns back to every caller's return point
//! (context-insensitive: a definition may be reported reaching through a
//! callee to another caller's use): for each register an instruction uses,
//! the instructions whose write of it may reach the use, and whether the
//! value may come from the function's entry (a kernel's initial state or a
//! caller the graph does not see). Only scalar writes stop earlier writes
//! from reaching; an unknown call may define every register.

use crate::cfg::{Cfg, EdgeKind, Exit};
use rocjitsu_isa::gfx9::regs::{AGPR0, EXEC, M0, Range, SCC, TTMP0, UNITS, Unit, VCC, VGPR0};
use rocjitsu_isa::{Family, WaveSize};
use std::fmt;

/// Why liveness was not computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LivenessError {
    #[error(
        "{target}: the registers its instructions read and write are not described yet \
         (rocjitsu_isa::Instruction::regs); liveness needs them"
    )]
    NoRegisters { target: rocjitsu_isa::Target },
}

const WORDS: usize = UNITS.div_ceil(64);

/// A set of register units.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RegSet {
    bits: [u64; WORDS],
}

impl RegSet {
    pub const fn empty() -> RegSet {
        RegSet { bits: [0; WORDS] }
    }

    /// Every register a program can hold a value in: SGPRs, VCC, TTMPs,
    /// M0, EXEC, SCC, VGPRs and AccVGPRs.
    pub fn all() -> RegSet {
        let mut s = RegSet::empty();
        for u in 0..=M0 {
            s.insert(u);
        }
        s.insert(EXEC);
        s.insert(EXEC + 1);
        s.insert(SCC);
        for u in VGPR0..UNITS as Unit {
            s.insert(u);
        }
        s
    }

    /// [`RegSet::all`] of a family: GFX10 and later have no AccVGPRs.
    pub fn all_of(family: Family) -> RegSet {
        let mut s = RegSet::all();
        if family != Family::Gfx9 {
            for u in AGPR0..UNITS as Unit {
                s.remove(u);
            }
        }
        s
    }

    pub fn insert(&mut self, u: Unit) {
        let u = usize::from(u);
        if u < UNITS {
            self.bits[u / 64] |= 1 << (u % 64);
        }
    }

    pub fn remove(&mut self, u: Unit) {
        let u = usize::from(u);
        if u < UNITS {
            self.bits[u / 64] &= !(1 << (u % 64));
        }
    }

    pub fn contains(&self, u: Unit) -> bool {
        let u = usize::from(u);
        u < UNITS && self.bits[u / 64] & (1 << (u % 64)) != 0
    }

    pub fn insert_range(&mut self, r: Range) {
        for u in r.units() {
            self.insert(u);
        }
    }

    /// Whether every unit of `r` is in the set.
    pub fn contains_range(&self, r: Range) -> bool {
        r.units().all(|u| self.contains(u))
    }

    /// Adds `o`; whether anything was added.
    pub fn union_with(&mut self, o: &RegSet) -> bool {
        let mut changed = false;
        for (a, b) in self.bits.iter_mut().zip(o.bits.iter()) {
            let n = *a | *b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }

    pub fn subtract(&mut self, o: &RegSet) {
        for (a, b) in self.bits.iter_mut().zip(o.bits.iter()) {
            *a &= !*b;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|w| *w == 0)
    }

    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The units in the set, in order.
    pub fn iter(&self) -> impl Iterator<Item = Unit> + '_ {
        (0..UNITS as Unit).filter(|&u| self.contains(u))
    }

    /// The set as maximal runs `(first, last)` of consecutive units that
    /// print as one register range for `family`: SGPRs (through `s105` on
    /// GFX10 and later; GFX9's units 102..=105 are `flat_scratch` and
    /// `xnack_mask`), TTMPs, VGPRs, AccVGPRs; each special register alone.
    pub fn runs(&self, family: Family) -> Vec<(Unit, Unit)> {
        let sgpr_end: Unit = if family == Family::Gfx9 { 102 } else { VCC };
        // The first unit of the group a unit prints in.
        let group = |u: Unit| -> Unit {
            match u {
                _ if u < sgpr_end => 0,
                102..=105 => u & !1,
                VCC..=107 => VCC,
                TTMP0..=123 => TTMP0,
                EXEC..=127 => EXEC,
                VGPR0..AGPR0 => VGPR0,
                AGPR0.. => AGPR0,
                _ => u,
            }
        };
        let mut out: Vec<(Unit, Unit)> = Vec::new();
        for u in self.iter() {
            match out.last_mut() {
                Some((a, b)) if *b + 1 == u && group(*a) == group(u) => *b = u,
                _ => out.push((u, u)),
            }
        }
        out
    }

    /// The set in LLVM's register names for `family`, space-separated:
    /// `s[0:3] vcc v[0:7] scc`.
    pub fn names(&self, family: Family) -> String {
        let name = |(a, b): (Unit, Unit)| -> String {
            let (prefix, base) = match a {
                _ if family != Family::Gfx9 && a < VCC => ("s", 0),
                0..=101 => ("s", 0),
                TTMP0..=123 => ("ttmp", TTMP0),
                VGPR0..AGPR0 => ("v", VGPR0),
                AGPR0.. => ("a", AGPR0),
                // Special registers: vcc, exec_lo, m0, scc, ...
                _ => return Range::new(a, (b - a + 1) as u8).to_string(),
            };
            if a == b {
                format!("{prefix}{}", a - base)
            } else {
                format!("{prefix}[{}:{}]", a - base, b - base)
            }
        };
        let v: Vec<String> = self.runs(family).into_iter().map(name).collect();
        v.join(" ")
    }
}

impl fmt::Debug for RegSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{self}}}")
    }
}

impl fmt::Display for RegSet {
    /// [`RegSet::names`] for GFX9.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names(Family::Gfx9))
    }
}

/// What one instruction does to liveness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effect {
    /// Units whose value before the instruction it may read.
    pub uses: RegSet,
    /// Units it may write.
    pub defs: RegSet,
    /// Units it writes whole (a subset of `defs`).
    pub kills: RegSet,
}

/// What a register operand addressed relative to M0 (or the GPR index)
/// may reach: its file from the printed register up (SGPRs below VCC).
fn relative(r: Range) -> Range {
    let end = if r.first >= AGPR0 {
        UNITS as Unit
    } else if r.first >= VGPR0 {
        AGPR0
    } else if r.first < VCC {
        VCC
    } else {
        return r;
    };
    Range::new(r.first, (end - r.first).min(255) as u8)
}

/// The [`Effect`] of each instruction of `cfg`, in [`Cfg::sites`] order.
pub fn effects(cfg: &Cfg) -> Result<Vec<Effect>, LivenessError> {
    let mut out = Vec::with_capacity(cfg.sites.len());
    let exec = match cfg.wave {
        WaveSize::Wave32 => Range::new(EXEC, 1),
        WaveSize::Wave64 => Range::new(EXEC, 2),
    };
    let m0 = Range::new(M0, 1);
    for blk in &cfg.blocks {
        // Between s_set_gpr_idx_on and s_set_gpr_idx_off (GFX9), vector
        // operands are indexed by M0[7:0].
        let mut gpr_idx = false;
        for s in &cfg.sites[blk.insts.clone()] {
            let g = s
                .inst
                .regs()
                .ok_or(LivenessError::NoRegisters { target: cfg.target })?;
            let name = s.inst.mnemonic();
            let mut e = Effect::default();
            let scalar = name.starts_with("s_");
            // The source (in its own file) read through M0.
            let rel_read = name.starts_with("s_movrels") || name.starts_with("v_movrels");
            for r in g.reads() {
                let indexed = if scalar {
                    rel_read && r.is_scalar()
                } else {
                    (rel_read || gpr_idx) && r.is_vector()
                };
                e.uses.insert_range(if indexed { relative(r) } else { r });
            }
            if !scalar {
                e.uses.insert_range(exec);
                if gpr_idx {
                    e.uses.insert_range(m0);
                }
            }
            let rel_write = ["s_movreld", "s_movrelsd", "v_movreld", "v_movrelsd"]
                .iter()
                .any(|p| name.starts_with(p))
                || gpr_idx && !scalar;
            for r in g.writes() {
                if rel_write && r != m0 {
                    e.defs.insert_range(relative(r));
                } else {
                    e.defs.insert_range(r);
                    if r.is_scalar() {
                        e.kills.insert_range(r);
                    }
                }
            }
            match name {
                "s_set_gpr_idx_on" => {
                    // Sets M0[7:0] and the mode, keeping the rest of M0.
                    e.uses.insert_range(m0);
                    e.defs.insert_range(m0);
                    gpr_idx = true;
                }
                "s_set_gpr_idx_off" => gpr_idx = false,
                _ => {}
            }
            out.push(e);
        }
    }
    Ok(out)
}

/// Liveness of every instruction of a [`Cfg`].
#[derive(Clone, Debug)]
pub struct Liveness {
    /// Per site: what is live before it.
    pub live_in: Vec<RegSet>,
    /// Per site: what is live after it.
    pub live_out: Vec<RegSet>,
    pub effects: Vec<Effect>,
}

/// How control leaves each function: its return points (blocks after
/// the calls that reach it, directly or through tail calls) and whether
/// it may be called from somewhere the graph does not see.
struct Returns {
    points: Vec<Vec<usize>>,
    unknown_callers: Vec<bool>,
    /// Per block: the functions it belongs to.
    owners: Vec<Vec<usize>>,
}

impl Returns {
    fn of(cfg: &Cfg) -> Returns {
        let n = cfg.functions.len();
        let mut points: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut called = vec![false; n];
        let any_unknown_call = cfg.blocks.iter().any(|b| b.exit == Some(Exit::UnknownCall));
        let mut tail: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (f, func) in cfg.functions.iter().enumerate() {
            for &(site, callee) in &func.calls {
                let Some(g) = callee else { continue };
                called[g] = true;
                let b = cfg.sites[site].block;
                if let Some(e) = cfg.blocks[b]
                    .succs
                    .iter()
                    .find(|e| e.kind == EdgeKind::AfterCall)
                {
                    points[g].push(e.to);
                }
            }
            for &g in &func.tail_calls {
                called[g] = true;
                tail[g].push(f);
            }
        }
        let mut unknown_callers: Vec<bool> = (0..n)
            .map(|f| !cfg.functions[f].is_kernel && (!called[f] || any_unknown_call))
            .collect();
        // A tail callee returns where its tail callers return.
        loop {
            let mut changed = false;
            for g in 0..n {
                for &f in &tail[g].clone() {
                    for p in points[f].clone() {
                        if !points[g].contains(&p) {
                            points[g].push(p);
                            changed = true;
                        }
                    }
                    if unknown_callers[f] && !unknown_callers[g] {
                        unknown_callers[g] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut owners = vec![Vec::new(); cfg.blocks.len()];
        for (f, func) in cfg.functions.iter().enumerate() {
            for &b in &func.blocks {
                owners[b].push(f);
            }
        }
        Returns {
            points,
            unknown_callers,
            owners,
        }
    }
}

/// A function's liveness summary: what is live at its entry when nothing
/// is live at its returns (`gen`), and when everything is (`gen_through`:
/// `gen` and what passes from the returns to the entry unwritten). The
/// live-in for live-out `L` at the returns is `gen | (gen_through & L)`
/// (liveness is a gen/kill problem, so this is exact per register).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Summary {
    gen_: RegSet,
    gen_through: RegSet,
}

impl Summary {
    fn apply(&self, after: &RegSet) -> RegSet {
        let mut s = self.gen_;
        for (i, w) in s.bits.iter_mut().enumerate() {
            *w |= self.gen_through.bits[i] & after.bits[i];
        }
        s
    }
}

/// The backward solver of one function at a time.
struct Solver<'a> {
    cfg: &'a Cfg,
    /// Every register of the target (what is live where control goes
    /// somewhere unknown).
    all: RegSet,
    effects: &'a [Effect],
    summaries: Vec<Summary>,
    /// Per block: its position in its function's block list, per function.
    pos: Vec<Vec<(usize, usize)>>,
}

impl<'a> Solver<'a> {
    fn new(cfg: &'a Cfg, effects: &'a [Effect]) -> Solver<'a> {
        let mut pos = vec![Vec::new(); cfg.blocks.len()];
        for (f, func) in cfg.functions.iter().enumerate() {
            for (i, &b) in func.blocks.iter().enumerate() {
                pos[b].push((f, i));
            }
        }
        Solver {
            cfg,
            all: RegSet::all_of(cfg.target.family()),
            effects,
            summaries: vec![Summary::default(); cfg.functions.len()],
            pos,
        }
    }

    fn index(&self, f: usize, b: usize) -> usize {
        self.pos[b]
            .iter()
            .find(|(g, _)| *g == f)
            .map_or(0, |&(_, i)| i)
    }

    /// What is live after block `b` of function `f`, given the live-in of
    /// f's blocks and what is live at f's returns.
    fn block_out(&self, f: usize, b: usize, block_in: &[RegSet], ret: &RegSet) -> RegSet {
        let cfg = self.cfg;
        let blk = &cfg.blocks[b];
        let mut out = RegSet::empty();
        match blk.exit {
            Some(Exit::UnknownJump | Exit::UnknownCall | Exit::Broken) => return self.all,
            Some(Exit::Return) => {
                out = *ret;
            }
            Some(Exit::EndProgram) | None => {}
        }
        let after = blk
            .succs
            .iter()
            .find(|e| e.kind == EdgeKind::AfterCall)
            .map(|e| block_in[self.index(f, e.to)]);
        for e in &blk.succs {
            match e.kind {
                EdgeKind::AfterCall => {}
                EdgeKind::Call => {
                    let after = after.unwrap_or(self.all);
                    match cfg.function_at(cfg.blocks[e.to].start) {
                        Some(g) => out.union_with(&self.summaries[g].apply(&after)),
                        None => out.union_with(&self.all),
                    };
                }
                EdgeKind::TailCall => {
                    match cfg.function_at(cfg.blocks[e.to].start) {
                        Some(g) => out.union_with(&self.summaries[g].apply(ret)),
                        None => out.union_with(&self.all),
                    };
                }
                _ => {
                    out.union_with(&block_in[self.index(f, e.to)]);
                }
            }
        }
        out
    }

    /// Live-in of each block of `f` (in `f.blocks` order) when `ret` is
    /// live at its returns.
    fn solve(&self, f: usize, ret: &RegSet) -> Vec<RegSet> {
        let blocks = &self.cfg.functions[f].blocks;
        let mut block_in = vec![RegSet::empty(); blocks.len()];
        loop {
            let mut changed = false;
            for (i, &b) in blocks.iter().enumerate().rev() {
                let mut live = self.block_out(f, b, &block_in, ret);
                for k in self.cfg.blocks[b].insts.clone().rev() {
                    let e = &self.effects[k];
                    live.subtract(&e.kills);
                    live.union_with(&e.uses);
                }
                // Sets only grow: the transfers are monotone and the
                // start is empty.
                changed |= block_in[i].union_with(&live);
            }
            if !changed {
                break;
            }
        }
        block_in
    }
}

impl Liveness {
    /// Liveness of `cfg`'s instructions.
    pub fn of(cfg: &Cfg) -> Result<Liveness, LivenessError> {
        let effects = effects(cfg)?;
        let mut solver = Solver::new(cfg, &effects);
        let nf = cfg.functions.len();
        let entry_pos = |f: usize| {
            cfg.functions[f]
                .blocks
                .iter()
                .position(|&b| b == cfg.functions[f].entry_block)
                .unwrap_or(0)
        };
        // Summaries, bottom-up to a fixed point (recursion included).
        loop {
            let mut changed = false;
            for f in 0..nf {
                let e = entry_pos(f);
                let s = Summary {
                    gen_: solver.solve(f, &RegSet::empty())[e],
                    gen_through: solver.solve(f, &solver.all)[e],
                };
                if s != solver.summaries[f] {
                    solver.summaries[f].gen_.union_with(&s.gen_);
                    solver.summaries[f].gen_through.union_with(&s.gen_through);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // What is live at each function's returns: after each call to it,
        // and at its tail callers' returns.
        let ret = Returns::of(cfg);
        let mut at_ret: Vec<RegSet> = (0..nf)
            .map(|f| {
                if ret.unknown_callers[f] {
                    solver.all
                } else {
                    RegSet::empty()
                }
            })
            .collect();
        let mut solved: Vec<Vec<RegSet>> = vec![Vec::new(); nf];
        loop {
            let mut changed = false;
            for f in 0..nf {
                solved[f] = solver.solve(f, &at_ret[f]);
                let func = &cfg.functions[f];
                for &(site, callee) in &func.calls {
                    let Some(g) = callee else { continue };
                    let b = cfg.sites[site].block;
                    if let Some(e) = cfg.blocks[b]
                        .succs
                        .iter()
                        .find(|e| e.kind == EdgeKind::AfterCall)
                    {
                        let live = solved[f][solver.index(f, e.to)];
                        changed |= at_ret[g].union_with(&live);
                    }
                }
                for &g in &func.tail_calls {
                    let live = at_ret[f];
                    changed |= at_ret[g].union_with(&live);
                }
            }
            if !changed {
                break;
            }
        }
        // Per instruction, over every function a block is in.
        let n = cfg.sites.len();
        let mut live_in = vec![RegSet::empty(); n];
        let mut live_out = vec![RegSet::empty(); n];
        for f in 0..nf {
            for &b in &cfg.functions[f].blocks {
                let mut live = solver.block_out(f, b, &solved[f], &at_ret[f]);
                for k in cfg.blocks[b].insts.clone().rev() {
                    live_out[k].union_with(&live);
                    let e = &effects[k];
                    live.subtract(&e.kills);
                    live.union_with(&e.uses);
                    live_in[k].union_with(&live);
                }
            }
        }
        Ok(Liveness {
            live_in,
            live_out,
            effects,
        })
    }

    /// Units written by the instruction at site `k` that no later
    /// instruction reads (dead definitions).
    pub fn dead_defs(&self, k: usize) -> RegSet {
        let mut d = self.effects[k].defs;
        let live = &self.live_out[k];
        for u in self.effects[k].defs.iter() {
            if live.contains(u) {
                d.remove(u);
            }
        }
        d
    }
}

/// Where a used value may come from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Def {
    /// The instruction at this index of [`Cfg::sites`].
    Site(usize),
    /// The entry of this function (index in [`Cfg::functions`]): the
    /// dispatch's initial state, or a caller's value.
    Entry(usize),
}

/// Def-use chains: for each instruction, each unit it uses and the
/// definitions that may reach it.
#[derive(Clone, Debug)]
pub struct DefUse {
    /// Per site: (unit, definitions reaching it), units in order.
    pub uses: Vec<Vec<(Unit, Vec<Def>)>>,
}

impl DefUse {
    /// Reaching definitions of every used unit of `cfg`'s instructions.
    pub fn of(cfg: &Cfg, effects: &[Effect]) -> DefUse {
        let nb = cfg.blocks.len();
        let ret = Returns::of(cfg);
        // Forward successors, interprocedural: a call goes into the
        // callee, a return back to its callers' return points.
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); nb];
        for (b, blk) in cfg.blocks.iter().enumerate() {
            let calls = blk.succs.iter().any(|e| e.kind == EdgeKind::Call);
            for e in &blk.succs {
                if !(e.kind == EdgeKind::AfterCall && calls) {
                    succ[b].push(e.to);
                }
            }
            if blk.exit == Some(Exit::Return) {
                for &f in &ret.owners[b] {
                    succ[b].extend(ret.points[f].iter().copied());
                }
            }
        }
        // Blocks whose entry brings a value from outside the graph.
        let mut entry_of: Vec<Option<usize>> = vec![None; nb];
        for (f, func) in cfg.functions.iter().enumerate() {
            if func.is_kernel || ret.unknown_callers[f] {
                entry_of[func.entry_block] = Some(f);
            }
        }
        // Units used anywhere, and per unit its definitions.
        let mut used = RegSet::empty();
        for e in effects {
            used.union_with(&e.uses);
        }
        let mut uses: Vec<Vec<(Unit, Vec<Def>)>> = vec![Vec::new(); cfg.sites.len()];
        // Which instructions define anything at all (unknown calls define
        // everything: the callee may write any register).
        let unknown_call: Vec<bool> = (0..cfg.sites.len())
            .map(|k| {
                let b = &cfg.blocks[cfg.sites[k].block];
                b.exit == Some(Exit::UnknownCall) && b.insts.end - 1 == k
            })
            .collect();
        for u in used.iter() {
            // Reaching definitions of `u` at each block's start.
            let mut block_in: Vec<Vec<Def>> = vec![Vec::new(); nb];
            for (b, f) in entry_of.iter().enumerate() {
                if let Some(f) = *f {
                    block_in[b].push(Def::Entry(f));
                }
            }
            let step = |k: usize, set: &mut Vec<Def>| {
                let e = &effects[k];
                if e.kills.contains(u) {
                    set.clear();
                    set.push(Def::Site(k));
                } else if (e.defs.contains(u) || unknown_call[k])
                    && let Err(i) = set.binary_search(&Def::Site(k))
                {
                    set.insert(i, Def::Site(k));
                }
            };
            let mut work: Vec<usize> = (0..nb).rev().collect();
            let mut queued = vec![true; nb];
            while let Some(b) = work.pop() {
                queued[b] = false;
                let mut set = block_in[b].clone();
                for k in cfg.blocks[b].insts.clone() {
                    step(k, &mut set);
                }
                for &s in &succ[b] {
                    let mut changed = false;
                    for d in &set {
                        if let Err(i) = block_in[s].binary_search(d) {
                            block_in[s].insert(i, *d);
                            changed = true;
                        }
                    }
                    if changed && !queued[s] {
                        queued[s] = true;
                        work.push(s);
                    }
                }
            }
            for (b, blk) in cfg.blocks.iter().enumerate() {
                let mut set = block_in[b].clone();
                for k in blk.insts.clone() {
                    if effects[k].uses.contains(u) {
                        uses[k].push((u, set.clone()));
                    }
                    step(k, &mut set);
                }
            }
        }
        DefUse { uses }
    }

    /// The definitions reaching the use of `unit` at site `k`.
    pub fn reaching(&self, k: usize, unit: Unit) -> Option<&[Def]> {
        self.uses[k]
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, d)| d.as_slice())
    }
}
