//! Targets of `s_setpc_b64` and `s_swappc_b64` computed from `s_getpc_b64`
//! and constants: a forward constant propagation over each function's
//! blocks of the scalar registers and SCC.
//!
//! Values are 32-bit constants per SGPR (or special register) and SCC, or
//! unknown. `s_getpc_b64` gives the address of the next instruction (the
//! code object's addresses: the load base cancels out of a PC-relative
//! target); moves, `s_add_u32`/`s_addc_u32`, `s_sub_u32`/`s_subb_u32`,
//! their GFX12 names (`s_add_co_u32`, `s_add_co_ci_u32`, ...) and
//! `s_sext_i32_i16` compute on constants (inline, literal, or a literal
//! whose relocation resolves: [`Code::relocated`]). Any other write makes
//! its registers unknown ([`rocjitsu_isa::Instruction::regs`]; an
//! instruction whose registers are not described makes every register
//! unknown). After a call, the registers the callee may write (every
//! register written in it or in what it calls, transitively) are unknown;
//! after an unknown call, all are. Where paths meet, a register keeps its
//! value only if every path agrees.

use super::{Cfg, Code, EdgeKind, Flow};
use rocjitsu_isa::Instruction;
use rocjitsu_isa::gfx9::operand::Operand;
use rocjitsu_isa::gfx9::regs::{Range, SCC, range_of};
use std::collections::HashMap;

/// Tracked units: the scalar operand space below 128 (SGPRs, VCC, TTMP,
/// M0, EXEC) and SCC.
const SLOTS: usize = 129;
const SCC_SLOT: usize = 128;

fn slot(u: u16) -> Option<usize> {
    match u {
        0..=127 => Some(usize::from(u)),
        SCC => Some(SCC_SLOT),
        _ => None,
    }
}

/// Known values of the scalar registers at one point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    v: [Option<u32>; SLOTS],
}

impl State {
    /// Nothing known.
    pub fn unknown() -> State {
        State { v: [None; SLOTS] }
    }

    /// The value of unit `u`.
    pub fn get(&self, u: u16) -> Option<u32> {
        slot(u).and_then(|s| self.v[s])
    }

    fn set(&mut self, u: u16, x: Option<u32>) {
        if let Some(s) = slot(u) {
            self.v[s] = x;
        }
    }

    /// The 64-bit value of a register pair.
    pub fn pair(&self, r: Range) -> Option<u64> {
        if r.count != 2 {
            return None;
        }
        let lo = self.get(r.first)?;
        let hi = self.get(r.first + 1)?;
        Some(u64::from(hi) << 32 | u64::from(lo))
    }

    /// Keeps only what `o` agrees on; whether anything changed.
    fn meet(&mut self, o: &State) -> bool {
        let mut changed = false;
        for (a, b) in self.v.iter_mut().zip(o.v.iter()) {
            if a.is_some() && *a != *b {
                *a = None;
                changed = true;
            }
        }
        changed
    }

    fn forget(&mut self, units: &Writes) {
        match units {
            Writes::All => *self = State::unknown(),
            Writes::Some(set) => {
                for (s, w) in set.iter().enumerate() {
                    if *w {
                        self.v[s] = None;
                    }
                }
            }
        }
    }
}

/// The tracked units an instruction or a function may write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Writes {
    All,
    Some(Box<[bool; SLOTS]>),
}

impl Writes {
    fn none() -> Writes {
        Writes::Some(Box::new([false; SLOTS]))
    }

    fn of(inst: &Instruction) -> Writes {
        let Some(g) = inst.regs() else {
            return Writes::All;
        };
        let mut w = Writes::none();
        for r in g.writes() {
            for u in r.units() {
                w.add(u);
            }
        }
        w
    }

    fn add(&mut self, u: u16) {
        if let (Writes::Some(set), Some(s)) = (self, slot(u)) {
            set[s] = true;
        }
    }

    /// Adds `o`; whether anything changed.
    fn union(&mut self, o: &Writes) -> bool {
        match (&mut *self, o) {
            (Writes::All, _) => false,
            (_, Writes::All) => {
                *self = Writes::All;
                true
            }
            (Writes::Some(a), Writes::Some(b)) => {
                let mut changed = false;
                for (x, y) in a.iter_mut().zip(b.iter()) {
                    if *y && !*x {
                        *x = true;
                        changed = true;
                    }
                }
                changed
            }
        }
    }
}

/// What an indirect branch's target register pair holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    Target(u64),
    Unknown,
}

/// The value of a 32-bit source operand of the instruction at `pc`.
fn value(code: &Code, st: &State, pc: u64, o: &Operand) -> Option<u32> {
    match *o {
        Operand::InlineInt(i) => Some(i32::from(i) as u32),
        Operand::Literal(v) => match code.relocated.get(&(pc + 4)) {
            Some(r) => *r,
            None => Some(v),
        },
        _ => {
            let r = range_of(o)?;
            if r.count == 1 { st.get(r.first) } else { None }
        }
    }
}

/// Applies the instruction at `pc` to `st`.
pub fn step(code: &Code, st: &mut State, inst: &Instruction, pc: u64) {
    let name = inst.mnemonic();
    let ops = inst.salu_operands();
    let before = st.clone();
    st.forget(&Writes::of(inst));
    let Some([Some(d), s0, s1]) = ops else {
        return;
    };
    let Some(d) = range_of(&d) else {
        return;
    };
    let v = |o: Option<Operand>| o.and_then(|o| value(code, &before, pc, &o));
    let scc = before.get(SCC);
    let next = pc + inst.len() as u64;
    let (lo, carry): (Option<u32>, Option<Option<bool>>) = match name {
        "s_getpc_b64" if d.count == 2 => {
            st.set(d.first, Some(next as u32));
            st.set(d.first + 1, Some((next >> 32) as u32));
            return;
        }
        "s_mov_b64" if d.count == 2 => {
            let (a, b) = match s0 {
                Some(Operand::InlineInt(i)) => {
                    let x = i64::from(i) as u64;
                    (Some(x as u32), Some((x >> 32) as u32))
                }
                Some(o) => match range_of(&o) {
                    Some(r) if r.count == 2 => (before.get(r.first), before.get(r.first + 1)),
                    _ => (None, None),
                },
                None => (None, None),
            };
            st.set(d.first, a);
            st.set(d.first + 1, b);
            return;
        }
        "s_mov_b32" => (v(s0), None),
        "s_sext_i32_i16" => (v(s0).map(|x| x as u16 as i16 as i32 as u32), None),
        "s_add_u32" | "s_add_co_u32" => match (v(s0), v(s1)) {
            (Some(a), Some(b)) => {
                let (r, c) = a.overflowing_add(b);
                (Some(r), Some(Some(c)))
            }
            _ => (None, Some(None)),
        },
        "s_addc_u32" | "s_add_co_ci_u32" => match (v(s0), v(s1), scc) {
            (Some(a), Some(b), Some(c)) => {
                let t = u64::from(a) + u64::from(b) + u64::from(c);
                (Some(t as u32), Some(Some(t >> 32 != 0)))
            }
            _ => (None, Some(None)),
        },
        "s_sub_u32" | "s_sub_co_u32" => match (v(s0), v(s1)) {
            (Some(a), Some(b)) => {
                let (r, c) = a.overflowing_sub(b);
                (Some(r), Some(Some(c)))
            }
            _ => (None, Some(None)),
        },
        "s_subb_u32" | "s_sub_co_ci_u32" => match (v(s0), v(s1), scc) {
            (Some(a), Some(b), Some(c)) => {
                let r = a.wrapping_sub(b).wrapping_sub(c);
                (
                    Some(r),
                    Some(Some(u64::from(b) + u64::from(c) > u64::from(a))),
                )
            }
            _ => (None, Some(None)),
        },
        _ => return,
    };
    if d.count == 1 {
        st.set(d.first, lo);
    }
    if let Some(c) = carry {
        st.set(SCC, c.map(u32::from));
    }
}

/// What each function may write, transitively through its calls.
pub fn summaries(cfg: &Cfg) -> Vec<Writes> {
    let n = cfg.functions.len();
    let mut own: Vec<Writes> = Vec::with_capacity(n);
    for f in &cfg.functions {
        let mut w = Writes::none();
        for &b in &f.blocks {
            for s in &cfg.sites[cfg.blocks[b].insts.clone()] {
                w.union(&Writes::of(&s.inst));
            }
        }
        if f.calls.iter().any(|c| c.1.is_none()) {
            w = Writes::All;
        }
        own.push(w);
    }
    loop {
        let mut changed = false;
        for f in 0..n {
            let callees: Vec<usize> = cfg.functions[f]
                .calls
                .iter()
                .filter_map(|c| c.1)
                .chain(cfg.functions[f].tail_calls.iter().copied())
                .collect();
            for g in callees {
                if g != f {
                    let add = own[g].clone();
                    changed |= own[f].union(&add);
                }
            }
        }
        if !changed {
            break;
        }
    }
    own
}

/// The value each `s_setpc_b64`/`s_swappc_b64` target pair holds, by PC.
pub fn recover(cfg: &Cfg, code: &Code) -> HashMap<u64, Resolved> {
    let sums = summaries(cfg);
    let mut out: HashMap<u64, Resolved> = HashMap::new();
    for f in &cfg.functions {
        let mut ins: HashMap<usize, State> = HashMap::new();
        ins.insert(f.entry_block, State::unknown());
        let mut work = vec![f.entry_block];
        let mut queued: std::collections::HashSet<usize> = [f.entry_block].into();
        while let Some(b) = work.pop() {
            queued.remove(&b);
            let blk = &cfg.blocks[b];
            let mut st = ins[&b].clone();
            // The callee of a call ending the block, from the state before
            // it (not only from the graph's edges: a target first known in
            // this round is followed optimistically).
            let mut callee: Option<Option<usize>> = None;
            for s in &cfg.sites[blk.insts.clone()] {
                let flow = Flow::of(&s.inst, s.address);
                let pair = match flow {
                    Flow::SetPc(r) | Flow::SwapPc(r) => Some(r),
                    _ => None,
                };
                if let Some(r) = pair {
                    let now = st.pair(r).map_or(Resolved::Unknown, Resolved::Target);
                    let e = out.entry(s.address).or_insert(now);
                    if *e != now {
                        *e = Resolved::Unknown;
                    }
                    if let (Flow::SwapPc(_), Resolved::Target(t)) = (flow, now) {
                        callee = Some(cfg.function_at(t));
                    } else if matches!(flow, Flow::SwapPc(_)) {
                        callee = Some(None);
                    }
                }
                if let Flow::Call(t) = flow {
                    callee = Some(cfg.function_at(t));
                }
                step(code, &mut st, &s.inst, s.address);
            }
            for e in &blk.succs {
                let mut out_st = st.clone();
                match e.kind {
                    EdgeKind::Call | EdgeKind::TailCall => continue,
                    EdgeKind::AfterCall => match callee {
                        Some(Some(g)) => out_st.forget(&sums[g]),
                        _ => out_st = State::unknown(),
                    },
                    _ => {}
                }
                let changed = match ins.get_mut(&e.to) {
                    Some(cur) => cur.meet(&out_st),
                    None => {
                        ins.insert(e.to, out_st);
                        true
                    }
                };
                if changed && queued.insert(e.to) {
                    work.push(e.to);
                }
            }
        }
    }
    out
}
