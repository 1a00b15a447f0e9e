//! The translation tier: hot blocks of a kernel compiled to host code with
//! Cranelift, behind the interpreter ([`crate::exec::engine`]).
//!
//! - What runs where: [`run`] has the contract of [`engine::run`] (at
//!   most `quantum` instructions, the same [`Stop`] and fault reports). At
//!   each block start it looks the PC up in the program's [`ProgramJit`];
//!   a block that has run `threshold` times is translated
//!   ([`translate`]); one that is not yet (or cannot be) runs on the
//!   interpreter, an instruction at a time, to its end. A translated block
//!   runs only when the rest of the quantum holds all of it, so waves
//!   interleave exactly as under the interpreter.
//! - A block is straight-line code up to its first branch or other control
//!   instruction (at most [`translate::MAX_BLOCK`] instructions). Scalar
//!   and common vector ALU instructions become inline code
//!   ([`scalar`], [`vector`]); so do coalesced GLOBAL/FLAT loads and stores
//!   inside one mapped region ([`memory`], through the wave's
//!   [`crate::mem::RangeCache`]), which call the interpreter for anything
//!   else. Every other instruction (other memory, MFMA, cross-lane, rare
//!   modifiers) is a call of the interpreter's own semantic function for
//!   that instruction ([`call_op`]), so memory goes through the same
//!   checked [`crate::mem::Vm`] and a fault reports the same kernel, PC,
//!   instruction and address.
//! - Lanes: a run of inline instructions executes its scalar instructions
//!   once, then its vector instructions chunk by chunk (4 lanes in a
//!   128-bit host vector) in a loop over the wave, so that the values of a
//!   chunk's registers stay in host registers across the run; EXEC is a
//!   per-chunk vector mask. Register files stay in the [`Wave`] (the
//!   interpreter's layout), written back before every call and at every
//!   exit, so the tiers meet at any instruction boundary.
//! - A block that ends in a branch to its own start loops inside the host
//!   code for as long as the quantum allows.
//! - Code lives as long as the program: [`ProgramJit`] is shared by every
//!   [`Program`] with the same target, address and bytes in the process
//!   (the code cache), and unmapped when the last one is dropped.

mod code;
pub mod fuzz;
mod memory;
mod scalar;
mod translate;
mod vector;

#[cfg(test)]
mod tests;

use crate::exec::engine::{self, Program, Stop};
use crate::exec::op::{Ctx, Fault};
use crate::exec::wave::{VREGS, WaveState};
use std::any::Any;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Which tier runs a dispatch's waves.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum ExecMode {
    /// The interpreter only.
    #[default]
    Interp,
    /// Every block is translated on its first execution (the interpreter
    /// runs only what the translator hands back to it).
    Jit,
    /// Blocks are translated once they have run [`AUTO_THRESHOLD`] times;
    /// colder code stays on the interpreter.
    Auto,
}

/// Executions of a block before `auto` translates it.
pub const AUTO_THRESHOLD: u32 = 16;

impl ExecMode {
    /// The names `--exec` and `ROCJITSU_EXEC` take.
    pub const NAMES: &'static str = "interp, jit or auto";

    pub fn parse(s: &str) -> Result<ExecMode, String> {
        match s {
            "interp" => Ok(ExecMode::Interp),
            "jit" => Ok(ExecMode::Jit),
            "auto" => Ok(ExecMode::Auto),
            _ => Err(format!(
                "unknown execution mode `{s}`: use {}",
                ExecMode::NAMES
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ExecMode::Interp => "interp",
            ExecMode::Jit => "jit",
            ExecMode::Auto => "auto",
        }
    }

    /// The mode `ROCJITSU_EXEC` names (read once per process), else the
    /// default. A value that names no mode is reported once and ignored.
    pub fn from_env() -> ExecMode {
        static MODE: OnceLock<ExecMode> = OnceLock::new();
        *MODE.get_or_init(|| match std::env::var(rocjitsu_config::env::EXEC) {
            Ok(s) if !s.is_empty() => ExecMode::parse(&s).unwrap_or_else(|e| {
                tracing::warn!("{}: {e}; running the default", rocjitsu_config::env::EXEC);
                ExecMode::default()
            }),
            _ => ExecMode::default(),
        })
    }

    /// Executions of a block before it is translated (`None`: never).
    fn threshold(self) -> Option<u32> {
        match self {
            ExecMode::Interp => None,
            ExecMode::Jit => Some(1),
            ExecMode::Auto => Some(AUTO_THRESHOLD),
        }
    }
}

/// A translated block's entry point: `(frame, budget)` gives
/// `status << 32 | instructions executed`; status 0: left the block
/// normally (PC set), 1: a fault or panic (kept in the frame), 2: stopped
/// at the PC it set for the interpreter to run the rest of the block (a
/// MODE the inline code does not handle).
type BlockFn = unsafe extern "C" fn(*mut Frame, u64) -> u64;

/// A translated block.
struct Block {
    f: BlockFn,
    /// Instructions in one pass of the block.
    insts: u32,
    /// Per interpreter call site: executions (incremented by the block).
    sites: Box<[AtomicU64]>,
    /// Per call site: its mnemonic.
    names: Box<[&'static str]>,
    /// Keeps the code mapped while `f` may be called.
    _code: code::ExecMem,
}

/// Per dword of the program: how often a block started there, and its
/// translation once made (`None`: the translator declined).
#[derive(Default)]
struct Slot {
    hits: AtomicU32,
    block: OnceLock<Option<Block>>,
}

/// The translation tier's state for one piece of code.
pub struct ProgramJit {
    base: u64,
    slots: Box<[Slot]>,
    stats: Counters,
}

#[derive(Default)]
struct Counters {
    blocks: AtomicU64,
    declined: AtomicU64,
    translate_ns: AtomicU64,
    translated_insts: AtomicU64,
    jit_insts: AtomicU64,
    interp_insts: AtomicU64,
}

/// Figures of the translation tier for one program, cumulative.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JitStats {
    /// Blocks translated, and instructions in them.
    pub blocks: u64,
    pub translated_insts: u64,
    /// Blocks the translator declined (they stay on the interpreter).
    pub declined: u64,
    /// Time spent translating.
    pub translate_ns: u64,
    /// Wave-instructions executed by translated blocks (inline code and
    /// calls of the interpreter's semantic functions together).
    pub jit_insts: u64,
    /// Wave-instructions executed by the interpreter's loop (code not yet
    /// or never translated, the ends of quanta).
    pub interp_insts: u64,
    /// Wave-instructions that translated blocks ran by calling the
    /// interpreter's semantic function, per mnemonic, most frequent first.
    pub calls: Vec<(&'static str, u64)>,
}

impl JitStats {
    /// Wave-instructions that translated blocks ran by calling the
    /// interpreter.
    pub fn call_insts(&self) -> u64 {
        self.calls.iter().map(|c| c.1).sum()
    }
}

/// The code cache key: target, address, length and a hash of the bytes.
type Key = (rocjitsu_isa::Target, u64, usize, u64);

fn cache() -> &'static Mutex<HashMap<Key, Weak<ProgramJit>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Weak<ProgramJit>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

impl ProgramJit {
    /// The state for `prog`'s code: the process's existing one for the
    /// same code, else a new one. `None` where the host cannot run
    /// translated code.
    pub(crate) fn for_program(prog: &Program) -> Option<Arc<ProgramJit>> {
        translate::isa()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        prog.bytes().hash(&mut h);
        let key = (prog.target, prog.base(), prog.bytes().len(), h.finish());
        let mut map = cache().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(j) = map.get(&key).and_then(Weak::upgrade) {
            return Some(j);
        }
        map.retain(|_, w| w.strong_count() > 0);
        let slots = (0..prog.bytes().len().div_ceil(4))
            .map(|_| Slot::default())
            .collect();
        let j = Arc::new(ProgramJit {
            base: prog.base(),
            slots,
            stats: Counters::default(),
        });
        map.insert(key, Arc::downgrade(&j));
        Some(j)
    }

    fn slot(&self, pc: u64) -> Option<&Slot> {
        let off = pc.wrapping_sub(self.base);
        if !off.is_multiple_of(4) {
            return None;
        }
        self.slots.get(usize::try_from(off / 4).ok()?)
    }

    /// The translated block at `pc`: translated now if it has started
    /// `threshold` times (counting this one when `count`).
    fn block(&self, prog: &Program, pc: u64, count: bool, threshold: u32) -> Option<&Block> {
        let slot = self.slot(pc)?;
        if let Some(b) = slot.block.get() {
            return b.as_ref();
        }
        if !count || slot.hits.fetch_add(1, Ordering::Relaxed) + 1 < threshold {
            return None;
        }
        slot.block
            .get_or_init(|| {
                let t0 = std::time::Instant::now();
                let r = translate::translate(prog, pc);
                let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
                self.stats.translate_ns.fetch_add(ns, Ordering::Relaxed);
                match r {
                    Ok(b) => {
                        self.stats.blocks.fetch_add(1, Ordering::Relaxed);
                        self.stats
                            .translated_insts
                            .fetch_add(u64::from(b.insts), Ordering::Relaxed);
                        Some(b)
                    }
                    Err(why) => {
                        tracing::debug!("jit: block at 0x{pc:x} stays interpreted: {why}");
                        self.stats.declined.fetch_add(1, Ordering::Relaxed);
                        None
                    }
                }
            })
            .as_ref()
    }

    /// Translates every block reachable from `entry` by branches (for
    /// measuring translation time); returns how many were translated.
    pub fn translate_all(&self, prog: &Program, entry: u64) -> usize {
        let mut todo = vec![entry];
        let mut seen = std::collections::HashSet::new();
        let mut n = 0;
        while let Some(pc) = todo.pop() {
            if !seen.insert(pc) || !prog.contains(pc) {
                continue;
            }
            if let Some(b) = self.block(prog, pc, true, 0) {
                n += 1;
                let _ = b;
            }
            todo.extend(translate::successors(prog, pc));
        }
        n
    }

    pub fn stats(&self) -> JitStats {
        let s = &self.stats;
        let mut calls: HashMap<&'static str, u64> = HashMap::new();
        for slot in self.slots.iter() {
            if let Some(Some(b)) = slot.block.get() {
                for (name, c) in b.names.iter().zip(b.sites.iter()) {
                    *calls.entry(name).or_default() += c.load(Ordering::Relaxed);
                }
            }
        }
        let mut calls: Vec<_> = calls.into_iter().filter(|c| c.1 > 0).collect();
        calls.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        JitStats {
            blocks: s.blocks.load(Ordering::Relaxed),
            translated_insts: s.translated_insts.load(Ordering::Relaxed),
            declined: s.declined.load(Ordering::Relaxed),
            translate_ns: s.translate_ns.load(Ordering::Relaxed),
            jit_insts: s.jit_insts.load(Ordering::Relaxed),
            interp_insts: s.interp_insts.load(Ordering::Relaxed),
            calls,
        }
    }
}

/// The first difference between two waves' architectural state (scalar
/// and vector files, SCC, PC, MODE, STATUS, TRAPSTS, state, instruction
/// count, private memory), if any.
pub fn diff_waves(a: &crate::exec::Wave, b: &crate::exec::Wave) -> Option<String> {
    if let Some(i) = (0..a.s.len()).find(|&i| a.s[i] != b.s[i]) {
        return Some(format!("s[{i}]: 0x{:08x} vs 0x{:08x}", a.s[i], b.s[i]));
    }
    if a.v.len() != b.v.len() {
        return Some(format!("{} vs {} vector registers", a.v.len(), b.v.len()));
    }
    for (r, (x, y)) in a.v.iter().zip(&b.v).enumerate() {
        if let Some(l) = (0..64).find(|&l| x[l] != y[l]) {
            return Some(format!("v{r} lane {l}: 0x{:08x} vs 0x{:08x}", x[l], y[l]));
        }
    }
    let fields = [
        ("scc", u64::from(a.scc), u64::from(b.scc)),
        ("pc", a.pc, b.pc),
        ("mode", u64::from(a.mode), u64::from(b.mode)),
        ("status", u64::from(a.status), u64::from(b.status)),
        ("trapsts", u64::from(a.trapsts), u64::from(b.trapsts)),
        ("instructions", a.insts, b.insts),
    ];
    for (n, x, y) in fields {
        if x != y {
            return Some(format!("{n}: 0x{x:x} vs 0x{y:x}"));
        }
    }
    if a.state != b.state {
        return Some(format!("state: {:?} vs {:?}", a.state, b.state));
    }
    if a.scratch != b.scratch {
        return Some("private memory differs".into());
    }
    None
}

/// A wave's final architectural state, compact: the scalar file, a hash
/// per vector register and the other registers, for comparing the tiers
/// over whole dispatches (`run-kernel --exec check`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveDigest {
    s: Vec<u32>,
    v: Vec<u64>,
    other: [u64; 6],
}

impl WaveDigest {
    pub fn of(w: &crate::exec::Wave) -> WaveDigest {
        let v =
            w.v.iter()
                .map(|r| {
                    let mut h = 0xcbf2_9ce4_8422_2325u64;
                    for &x in r {
                        h = (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
                    }
                    h
                })
                .collect();
        let other = [
            u64::from(w.scc),
            w.pc,
            u64::from(w.mode),
            u64::from(w.status),
            u64::from(w.trapsts),
            w.insts,
        ];
        WaveDigest {
            s: w.s.to_vec(),
            v,
            other,
        }
    }

    /// The first register whose final value differs, if any.
    pub fn diff(&self, o: &WaveDigest) -> Option<String> {
        if let Some(i) = (0..self.s.len()).find(|&i| self.s.get(i) != o.s.get(i)) {
            return Some(format!(
                "s[{i}]: 0x{:08x} vs 0x{:08x}",
                self.s[i],
                o.s.get(i).copied().unwrap_or(0)
            ));
        }
        if let Some(r) = (0..self.v.len().max(o.v.len())).find(|&r| self.v.get(r) != o.v.get(r)) {
            let name = if r >= 256 {
                format!("a{}", r - 256)
            } else {
                format!("v{r}")
            };
            return Some(format!("{name} differs"));
        }
        let names = ["scc", "pc", "mode", "status", "trapsts", "instructions"];
        (0..6)
            .find(|&k| self.other[k] != o.other[k])
            .map(|k| format!("{}: 0x{:x} vs 0x{:x}", names[k], self.other[k], o.other[k]))
    }
}

/// What translated code reads through its first argument: pointers into
/// the wave (refreshed after every call of the interpreter), then what the
/// Rust side keeps for the block's exit.
#[repr(C)]
pub(crate) struct Frame<'a> {
    s: *mut u32,
    v: *mut u32,
    scc: *mut bool,
    mode: *mut u32,
    status: *mut u32,
    pc: *mut u64,
    ctx: *mut Ctx<'a>,
    prog: *const Program,
    /// The wave's [`crate::mem::RangeCache`] and the Vm's epoch counter.
    ranges: *mut crate::mem::RangeCache,
    epoch: *const AtomicU64,
    /// The LDS and private apertures: (start, end) each.
    apertures: [u64; 4],
    fault: Option<(Fault, u64)>,
    panic: Option<Box<dyn Any + Send>>,
}

/// Byte offsets of [`Frame`]'s pointers, as translated code loads them.
pub(crate) mod frame {
    pub const S: i32 = 0;
    pub const V: i32 = 8;
    pub const SCC: i32 = 16;
    pub const MODE: i32 = 24;
    pub const STATUS: i32 = 32;
    pub const PC: i32 = 40;
    pub const RANGES: i32 = 64;
    pub const EPOCH: i32 = 72;
    pub const APERTURES: i32 = 80;

    const _: () = {
        assert!(std::mem::offset_of!(super::Frame, s) == S as usize);
        assert!(std::mem::offset_of!(super::Frame, v) == V as usize);
        assert!(std::mem::offset_of!(super::Frame, scc) == SCC as usize);
        assert!(std::mem::offset_of!(super::Frame, mode) == MODE as usize);
        assert!(std::mem::offset_of!(super::Frame, status) == STATUS as usize);
        assert!(std::mem::offset_of!(super::Frame, pc) == PC as usize);
        assert!(std::mem::offset_of!(super::Frame, ranges) == RANGES as usize);
        assert!(std::mem::offset_of!(super::Frame, epoch) == EPOCH as usize);
        assert!(std::mem::offset_of!(super::Frame, apertures) == APERTURES as usize);
    };
}

impl Frame<'_> {
    fn refresh(&mut self, ctx: &mut Ctx) {
        self.s = ctx.wave.s.as_mut_ptr();
        self.v = ctx.wave.v.as_mut_ptr().cast::<u32>();
        self.scc = &mut ctx.wave.scc;
        self.mode = &mut ctx.wave.mode;
        self.status = &mut ctx.wave.status;
        self.pc = &mut ctx.wave.pc;
        self.ranges = &mut ctx.tlb.ranges;
    }
}

/// The host address of `va .. va + len` for an access with the flag
/// `need` from the wave's range cache, filled from the Vm on a miss
/// ([`crate::mem::RangeCache::resolve`]); 0 when the range is not wholly
/// inside one mapped region that allows the access.
///
/// # Safety
/// As [`call_op`]: `frame` is the frame [`run`] passed to the block.
unsafe extern "C" fn range_miss(frame: *mut Frame, va: u64, len: u64, need: u64) -> u64 {
    // SAFETY: the caller's contract, as in `call_op`.
    let f = unsafe { &mut *frame };
    // SAFETY: as in `call_op`: `run` holds the `Ctx` for the whole block.
    let ctx = unsafe { &mut *f.ctx };
    let vm = ctx.vm;
    let p = ctx
        .tlb
        .ranges
        .resolve(vm, va, len, need)
        .map_or(0, |p| p as u64);
    f.refresh(ctx);
    p
}

/// Executes the instruction at `pc` with the interpreter's semantic
/// function, as [`engine::run`] does (PC past it first; on a fault the PC
/// back at it). Returns 0, or 1 after a fault or a panic (kept in the
/// frame).
///
/// # Safety
/// `frame` is the frame [`run`] passed to the block, whose `ctx` and
/// `prog` are alive and not otherwise borrowed during the call.
unsafe extern "C" fn call_op(frame: *mut Frame, pc: u64) -> u32 {
    // SAFETY: the caller's contract: the frame `run` made, alive and
    // borrowed by nothing else while the block runs.
    let f = unsafe { &mut *frame };
    // SAFETY: `run` holds the `&mut Ctx` this points to for the whole
    // block and does not use it until the block returns.
    let ctx = unsafe { &mut *f.ctx };
    // SAFETY: `run` holds `&Program` for the whole block.
    let prog = unsafe { &*f.prog };
    let r = catch_unwind(AssertUnwindSafe(|| -> Result<(), Fault> {
        let op = prog.fetch(pc)?;
        ctx.wave.pc = pc.wrapping_add(u64::from(op.len));
        (op.exec)(ctx, op)
    }));
    let status = match r {
        Ok(Ok(())) => 0,
        Ok(Err(fault)) => {
            ctx.wave.pc = pc;
            f.fault = Some((fault, pc));
            1
        }
        Err(p) => {
            f.panic = Some(p);
            1
        }
    };
    f.refresh(ctx);
    status
}

/// Runs the wave in `ctx` for at most `quantum` instructions on the tier
/// `mode` names: [`engine::run`]'s contract.
pub fn run(
    ctx: &mut Ctx,
    prog: &Program,
    quantum: u64,
    mode: ExecMode,
) -> Result<Stop, (Fault, u64)> {
    let (Some(threshold), Some(jit)) = (mode.threshold(), prog.jit()) else {
        return engine::run(ctx, prog, quantum);
    };
    if ctx.wave.v.len() != VREGS {
        return engine::run(ctx, prog, quantum);
    }
    let mut n = 0u64;
    let (mut jit_n, mut interp_n) = (0u64, 0u64);
    let insts_before = ctx.wave.insts;
    // A fresh wave's first PC starts a block; so does every PC reached by
    // leaving a block. A wave resumed in the middle of one does not count.
    let mut at_start = ctx.wave.insts == 0;
    let r = loop {
        if n >= quantum {
            break Ok(Stop::Quantum);
        }
        let pc = ctx.wave.pc;
        let left = quantum - n;
        match jit.block(prog, pc, at_start, threshold) {
            Some(b) if u64::from(b.insts) <= left => {
                let (status, k) = run_block(ctx, prog, b, left);

                n += k;
                jit_n += k;
                ctx.wave.insts += k;
                match status {
                    Exit::Left => at_start = true,
                    Exit::Stopped(e) => break e,
                    Exit::Handed => {
                        let (r, k, ended) = interpret_block(ctx, prog, quantum - n);
                        n += k;
                        interp_n += k;
                        if let Err(e) = r {
                            break Err(e);
                        }
                        at_start = ended;
                    }
                }
            }
            _ => {
                let (r, k, ended) = interpret_block(ctx, prog, left);
                n += k;
                interp_n += k;
                if let Err(e) = r {
                    break Err(e);
                }
                at_start = ended;
            }
        }
        match ctx.wave.state {
            WaveState::Running => {}
            WaveState::Barrier => break Ok(Stop::Barrier),
            WaveState::Ended => break Ok(Stop::Ended),
        }
    };
    jit.stats.jit_insts.fetch_add(jit_n, Ordering::Relaxed);
    jit.stats
        .interp_insts
        .fetch_add(interp_n, Ordering::Relaxed);
    if r.is_err() {
        // As the interpreter's loop: a call that faults counts none of
        // its instructions.
        ctx.wave.insts = insts_before;
    }
    r
}

/// How a translated block ended.
enum Exit {
    /// Normally, at the PC it set.
    Left,
    /// On a fault.
    Stopped(Result<Stop, (Fault, u64)>),
    /// Handing the rest of the block, from the PC it set, to the
    /// interpreter.
    Handed,
}

/// Runs one translated block. Returns how it ended and the instructions
/// it completed.
fn run_block(ctx: &mut Ctx, prog: &Program, b: &Block, budget: u64) -> (Exit, u64) {
    let mut frame = Frame {
        s: std::ptr::null_mut(),
        v: std::ptr::null_mut(),
        scc: std::ptr::null_mut(),
        mode: std::ptr::null_mut(),
        status: std::ptr::null_mut(),
        pc: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
        prog,
        ranges: std::ptr::null_mut(),
        epoch: ctx.vm.epoch_cell(),
        apertures: {
            let ap = &ctx.env.apertures;
            [
                ap.shared_base,
                ap.shared_base.saturating_add(1 << 32),
                ap.private_base,
                ap.private_base.saturating_add(1 << 32),
            ]
        },
        fault: None,
        panic: None,
    };
    frame.refresh(ctx);
    frame.ctx = &raw mut *ctx;
    // SAFETY: `b.f` is code made by `translate` for this program's code (its
    // mapping lives in `b`); it reads and writes the wave only through the
    // frame's pointers, which point into `ctx.wave` (whose register file has
    // VREGS entries, checked by `run`), and calls `call_op` with the frame.
    let r = unsafe { (b.f)(&raw mut frame, budget) };
    let k = r & 0xffff_ffff;
    match r >> 32 {
        0 => return (Exit::Left, k),
        2 => return (Exit::Handed, k),
        _ => {}
    }
    if let Some(p) = frame.panic.take() {
        ctx.wave.insts += k;
        resume_unwind(p);
    }
    let e = frame.fault.take().unwrap_or_else(|| {
        (
            Fault::Invalid("translated block stopped without a fault".into()),
            ctx.wave.pc,
        )
    });
    (Exit::Stopped(Err(e)), k)
}

/// Runs the interpreter from the wave's PC to the end of the block there
/// (a branch or other control instruction, a taken jump, or a stop), at
/// most `left` instructions. Returns the result, the instructions run
/// and whether the block ended.
fn interpret_block(
    ctx: &mut Ctx,
    prog: &Program,
    left: u64,
) -> (Result<(), (Fault, u64)>, u64, bool) {
    let mut k = 0;
    while k < left {
        let pc = ctx.wave.pc;
        let (len, branch) = match prog.fetch(pc) {
            Ok(op) => (
                u64::from(op.len),
                op.class.family == crate::plugin::Family::Branch,
            ),
            Err(f) => return (Err((f, pc)), k, true),
        };
        match engine::run(ctx, prog, 1) {
            Err(e) => return (Err(e), k, true),
            Ok(Stop::Quantum) => k += 1,
            Ok(_) => return (Ok(()), k + 1, true),
        }
        if branch || ctx.wave.pc != pc.wrapping_add(len) {
            return (Ok(()), k, true);
        }
    }
    (Ok(()), k, false)
}
