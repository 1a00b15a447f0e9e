//! Control-flow graphs of a code object's code, for every decoded target
//! (GFX9 gfx90a/gfx942/gfx950, GFX11 gfx1100/gfx1151, GFX12 gfx1201).
//!
//! [`Cfg::build`] finds the functions (kernel entry points from the
//! descriptors, `STT_FUNC` symbols, and the callees of `s_swappc_b64` and
//! `s_call_b64`), decodes what is reachable from each entry and splits it
//! into basic blocks joined by [`Edge`]s: fallthrough, `s_branch`,
//! `s_cbranch_*` (taken and not taken), calls and the return point after
//! them, and `s_setpc_b64`/`s_swappc_b64` whose target is computed from
//! `s_getpc_b64` and constants ([`values`]: `s_add_u32`/`s_addc_u32` and
//! their GFX12 names, moves, `s_sext_i32_i16`, with literals or, in
//! relocatable objects, the `R_AMDGPU_REL32_LO/HI` relocations resolved).
//!
//! A block ends at a branch, a call, `s_setpc_b64`, `s_endpgm*` and
//! `s_trap` (which falls through: the trap handler may resume the wave).
//! A block with no successor says why in [`Block::exit`]. What the graph
//! cannot follow is listed in [`Cfg::issues`] instead of being guessed: an
//! indirect branch or call whose target is not recovered ("unknown
//! indirect", with its PC), an undecodable word, a branch out of the code
//! or into the middle of an instruction, code that runs off the end of
//! its section. [`Cfg::is_complete`] is true only when there are none.
//!
//! An `s_setpc_b64` of `s[30:31]` with no recovered target in a function
//! that is not a kernel is a return (the AMDGPU calling convention's
//! return address register); in a kernel it is an unknown indirect jump.

pub mod listing;
pub mod values;

use crate::elf::{Rela, SymbolType, reloc};
use crate::object::CodeObject;
use rocjitsu_isa::gfx9::regs::Range;
use rocjitsu_isa::{DecodeError, Instruction, Target, WaveSize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use values::Resolved;

/// One decoded, reachable instruction.
#[derive(Clone, Copy, Debug)]
pub struct Site {
    pub address: u64,
    pub inst: Instruction,
    /// Index of its block in [`Cfg::blocks`].
    pub block: usize,
}

impl Site {
    /// The address of the next instruction.
    pub fn next(&self) -> u64 {
        self.address + self.inst.len() as u64
    }
}

/// How control reaches a block from its predecessor.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum EdgeKind {
    /// Into the next instruction, the block having ended at a branch
    /// target (or after `s_trap`).
    Fallthrough,
    /// `s_branch`, or an `s_setpc_b64` whose target is recovered inside
    /// the function.
    Jump,
    /// A conditional branch taken.
    Taken,
    /// A conditional branch not taken.
    NotTaken,
    /// `s_swappc_b64` or `s_call_b64` to a callee's entry.
    Call,
    /// From a call to the instruction after it, where the callee returns.
    AfterCall,
    /// `s_setpc_b64` to another function's entry.
    TailCall,
}

impl EdgeKind {
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Fallthrough => "fallthrough",
            EdgeKind::Jump => "jump",
            EdgeKind::Taken => "taken",
            EdgeKind::NotTaken => "not-taken",
            EdgeKind::Call => "call",
            EdgeKind::AfterCall => "after-call",
            EdgeKind::TailCall => "tail-call",
        }
    }
}

/// An edge to block `to`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Edge {
    pub to: usize,
    pub kind: EdgeKind,
}

/// Why a block has no successor (or, for an unknown call, why the callee
/// is not in the graph).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Exit {
    /// `s_endpgm` (and its variants): the wave ends.
    EndProgram,
    /// `s_setpc_b64 s[30:31]` in a function: back to its callers.
    Return,
    /// An indirect jump whose target is not recovered.
    UnknownJump,
    /// An indirect call whose target is not recovered (the block goes on
    /// to the instruction after it).
    UnknownCall,
    /// The code stops being decodable or leaves the code sections (see
    /// [`Cfg::issues`]).
    Broken,
}

impl Exit {
    pub fn name(self) -> &'static str {
        match self {
            Exit::EndProgram => "end-program",
            Exit::Return => "return",
            Exit::UnknownJump => "unknown-indirect-jump",
            Exit::UnknownCall => "unknown-indirect-call",
            Exit::Broken => "broken",
        }
    }
}

/// A basic block: instructions `insts` of [`Cfg::sites`], entered only at
/// the first and left only after the last.
#[derive(Clone, Debug)]
pub struct Block {
    pub start: u64,
    /// The address after its last instruction.
    pub end: u64,
    pub insts: std::ops::Range<usize>,
    pub succs: Vec<Edge>,
    pub preds: Vec<usize>,
    pub exit: Option<Exit>,
}

/// A function: a kernel, a symbol, or a callee found in the code.
#[derive(Clone, Debug)]
pub struct Function {
    /// Its symbol's name, or `sub_<address>` for a callee without one.
    pub name: String,
    pub entry: u64,
    pub is_kernel: bool,
    /// Index of its entry block.
    pub entry_block: usize,
    /// Its blocks (reachable from the entry without following calls), in
    /// address order.
    pub blocks: Vec<usize>,
    /// Call sites in it: the index in [`Cfg::sites`] of each call and its
    /// callee (index in [`Cfg::functions`], `None` when unknown).
    pub calls: Vec<(usize, Option<usize>)>,
    /// Functions it enters by `s_setpc_b64` (tail calls).
    pub tail_calls: Vec<usize>,
}

/// Something the graph does not follow.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Issue {
    /// An `s_setpc_b64`, `s_swappc_b64` (or `s_rfe*`, `s_cbranch_join`,
    /// `s_cbranch_g_fork`) whose target is not recovered.
    UnknownIndirect {
        address: u64,
        call: bool,
        text: String,
    },
    /// A word the target's decoder rejects.
    Undecodable { address: u64 },
    /// A branch or call to an address outside the code sections.
    OutsideCode { from: u64, target: u64 },
    /// A branch into the middle of a decoded instruction.
    MidInstruction { from: u64, target: u64 },
    /// Code that runs past the end of its section.
    FallsOffEnd { address: u64 },
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Issue::UnknownIndirect {
                address,
                call,
                text,
            } => write!(
                f,
                "0x{address:x}: `{text}`: unknown indirect {}: the target is not computed from \
                 s_getpc_b64 and constants",
                if *call { "call" } else { "jump" }
            ),
            Issue::Undecodable { address } => {
                write!(f, "0x{address:x}: not a valid instruction")
            }
            Issue::OutsideCode { from, target } => write!(
                f,
                "0x{from:x}: branches to 0x{target:x}, outside the code sections"
            ),
            Issue::MidInstruction { from, target } => write!(
                f,
                "0x{from:x}: branches to 0x{target:x}, inside another instruction"
            ),
            Issue::FallsOffEnd { address } => {
                write!(f, "0x{address:x}: runs past the end of its code section")
            }
        }
    }
}

/// Why no graph was built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CfgError {
    #[error(
        "{object}: the registers {target} instructions read and write are not described yet \
         (GFX10), so no graph or liveness; they are for gfx908, gfx90a, gfx942, gfx950, gfx1100, \
         gfx1151 and gfx1201"
    )]
    Unsupported { object: String, target: Target },
    #[error(
        "{object}: a relocatable object with {sections} code sections (their addresses overlap): \
         link it (clang -o k.hsaco, or ld.lld -shared) and pass the linked code object"
    )]
    OverlappingSections { object: String, sections: usize },
    #[error("{object}: {what}")]
    Elf { object: String, what: String },
}

/// The code sections of an object: where instructions are read from.
#[derive(Clone, Debug)]
pub struct Code<'a> {
    pub target: Target,
    pub wave: WaveSize,
    /// (address, bytes) of each executable section.
    pub sections: Vec<(u64, &'a [u8])>,
    /// Values of relocated dwords in code, by their address: `Some` where
    /// the relocation resolves to a constant (a PC-relative reference to
    /// a symbol defined in the same code section), `None` where it does
    /// not (external symbols, GOT entries).
    pub relocated: HashMap<u64, Option<u32>>,
}

impl<'a> Code<'a> {
    /// The code of `co`.
    pub fn of(co: &'a CodeObject) -> Result<Code<'a>, CfgError> {
        let target = co.target();
        if !target.has_register_roles() {
            return Err(CfgError::Unsupported {
                object: co.name().to_string(),
                target,
            });
        }
        let elf = co.elf();
        let mut sections = Vec::new();
        let mut indices = Vec::new();
        for s in elf
            .sections
            .iter()
            .filter(|s| s.is_executable() && s.has_file_data() && s.size > 0)
        {
            sections.push((s.addr, co.section_data(s)));
            indices.push(s.index);
        }
        if sections.is_empty()
            && let Some(t) = co.text()
        {
            sections.push((t.address, t.bytes));
        }
        let relocatable = elf.header.is_relocatable();
        if relocatable && sections.len() > 1 {
            return Err(CfgError::OverlappingSections {
                object: co.name().to_string(),
                sections: sections.len(),
            });
        }
        let relas = elf
            .relocations(co.name(), co.bytes())
            .map_err(|e| CfgError::Elf {
                object: co.name().to_string(),
                what: e.to_string(),
            })?;
        let mut relocated = HashMap::new();
        for r in relas.iter().filter(|r| indices.contains(&r.section)) {
            relocated.insert(r.offset, resolve(co, r, relocatable));
        }
        Ok(Code {
            target,
            wave: co.wave_size(),
            sections,
            relocated,
        })
    }

    /// The bytes from `addr` to the end of its section.
    fn bytes_at(&self, addr: u64) -> Option<&'a [u8]> {
        self.sections.iter().find_map(|&(a, b)| {
            let off = usize::try_from(addr.checked_sub(a)?).ok()?;
            (off < b.len()).then(|| &b[off..])
        })
    }

    fn decode(&self, addr: u64) -> Result<Instruction, DecodeError> {
        let b = self.bytes_at(addr).unwrap_or(&[]);
        rocjitsu_isa::decode_in(self.target, self.wave, b)
    }
}

/// The value of a relocated dword in code: PC-relative references to a
/// symbol of the same section (`sym@rel32@lo/hi`, as clang emits for
/// calls and for addresses of functions) resolve to constants; anything
/// else (external symbols, GOT entries, absolute addresses) does not.
fn resolve(co: &CodeObject, r: &Rela, relocatable: bool) -> Option<u32> {
    let sym = &co.elf().symbols[r.symbol?];
    let defined_here = if relocatable {
        u32::from(sym.shndx) == r.section
    } else {
        sym.shndx != 0
    };
    if !defined_here || sym.kind == SymbolType::Section && !relocatable {
        return None;
    }
    let v = sym
        .value
        .wrapping_add(r.addend as u64)
        .wrapping_sub(r.offset);
    match r.kind {
        reloc::REL32_LO => Some(v as u32),
        reloc::REL32_HI => Some((v >> 32) as u32),
        _ => None,
    }
}

/// What an instruction does to control flow, by LLVM's mnemonic (shared by
/// every family).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Goes on to the next instruction.
    Next,
    EndProgram,
    /// `s_trap`: ends a block, then falls through.
    Trap,
    Branch(u64),
    CondBranch(u64),
    /// `s_call_b64` to a PC-relative target.
    Call(u64),
    /// `s_setpc_b64` of a register pair.
    SetPc(Range),
    /// `s_swappc_b64`: the target register pair.
    SwapPc(Range),
    /// `s_rfe*`, `s_cbranch_join`, `s_cbranch_g_fork`: a target the graph
    /// never recovers.
    Indirect,
}

impl Flow {
    /// The control flow of `inst` at `pc`.
    pub fn of(inst: &Instruction, pc: u64) -> Flow {
        let name = inst.mnemonic();
        if !name.starts_with("s_") {
            return Flow::Next;
        }
        if name.starts_with("s_endpgm") {
            return Flow::EndProgram;
        }
        match name {
            "s_trap" => return Flow::Trap,
            "s_setpc_b64" | "s_swappc_b64" => {
                let pair = inst
                    .salu_operands()
                    .and_then(|[_, s0, _]| s0)
                    .and_then(|o| rocjitsu_isa::gfx9::regs::range_of(&o));
                return match (name, pair) {
                    ("s_setpc_b64", Some(r)) => Flow::SetPc(r),
                    ("s_swappc_b64", Some(r)) => Flow::SwapPc(r),
                    _ => Flow::Indirect,
                };
            }
            "s_cbranch_join" | "s_cbranch_g_fork" => return Flow::Indirect,
            _ if name.starts_with("s_rfe") => return Flow::Indirect,
            _ => {}
        }
        match inst.branch_target(pc) {
            Some(t) if name == "s_branch" => Flow::Branch(t),
            Some(t) if name == "s_call_b64" => Flow::Call(t),
            Some(t) => Flow::CondBranch(t),
            None => Flow::Next,
        }
    }

    /// Whether a block ends after the instruction.
    pub fn ends_block(self) -> bool {
        self != Flow::Next
    }
}

/// A function entry the graph starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub address: u64,
    pub is_kernel: bool,
}

impl Entry {
    /// The kernels of `co` and its function symbols with code.
    pub fn of(co: &CodeObject) -> Vec<Entry> {
        let mut v: Vec<Entry> = co
            .kernels()
            .iter()
            .filter(|k| k.entry != 0 || co.elf().header.is_relocatable())
            .map(|k| Entry {
                name: k.name.clone(),
                address: k.entry,
                is_kernel: true,
            })
            .collect();
        for f in co.functions() {
            if !v.iter().any(|e| e.address == f.address) {
                v.push(Entry {
                    name: f.name.clone(),
                    address: f.address,
                    is_kernel: f.is_kernel,
                });
            }
        }
        v
    }
}

/// The control-flow graph of a code object.
#[derive(Clone, Debug)]
pub struct Cfg {
    pub target: Target,
    pub wave: WaveSize,
    /// Every reachable instruction, in address order.
    pub sites: Vec<Site>,
    /// Blocks in address order.
    pub blocks: Vec<Block>,
    /// Functions in entry address order.
    pub functions: Vec<Function>,
    /// What the graph does not follow, in address order.
    pub issues: Vec<Issue>,
    /// Indirect branches and calls whose target was recovered: PC, target.
    pub resolved: BTreeMap<u64, u64>,
}

/// The most rounds of recovering targets and rebuilding (each round can
/// only add functions, blocks and targets; code with more levels of
/// calls through computed addresses than this is reported unresolved).
const MAX_ROUNDS: usize = 16;

impl Cfg {
    /// The graph of every kernel and function of `co`.
    pub fn of(co: &CodeObject) -> Result<Cfg, CfgError> {
        let code = Code::of(co)?;
        Ok(Cfg::build(&code, &Entry::of(co)))
    }

    /// The graph of `code` from `entries`.
    pub fn build(code: &Code, entries: &[Entry]) -> Cfg {
        let mut resolved: BTreeMap<u64, u64> = BTreeMap::new();
        let mut entries: Vec<Entry> = entries.to_vec();
        let mut cfg = Cfg::explore(code, &entries, &resolved);
        for _ in 0..MAX_ROUNDS {
            let found = values::recover(&cfg, code);
            let mut changed = false;
            for (&pc, r) in &found {
                if let Resolved::Target(t) = *r
                    && resolved.insert(pc, t) != Some(t)
                {
                    changed = true;
                }
            }
            // A call to an address with no function yet makes one.
            for s in &cfg.sites {
                let callee = match Flow::of(&s.inst, s.address) {
                    Flow::Call(t) => Some(t),
                    Flow::SwapPc(_) => resolved.get(&s.address).copied(),
                    _ => None,
                };
                if let Some(t) = callee
                    && !entries.iter().any(|e| e.address == t)
                    && code.bytes_at(t).is_some()
                {
                    entries.push(Entry {
                        name: format!("sub_{t:x}"),
                        address: t,
                        is_kernel: false,
                    });
                    changed = true;
                }
            }
            if !changed {
                break;
            }
            cfg = Cfg::explore(code, &entries, &resolved);
        }
        cfg
    }

    /// Decodes what is reachable from `entries`, following the targets
    /// recovered so far, and splits it into blocks.
    fn explore(code: &Code, entries: &[Entry], resolved: &BTreeMap<u64, u64>) -> Cfg {
        let is_entry = |a: u64| entries.iter().any(|e| e.address == a);
        let mut insts: BTreeMap<u64, Instruction> = BTreeMap::new();
        let mut leaders: BTreeSet<u64> = BTreeSet::new();
        let mut issues: Vec<Issue> = Vec::new();
        let mut work: Vec<u64> = Vec::new();
        for e in entries {
            if code.bytes_at(e.address).is_some() {
                leaders.insert(e.address);
                work.push(e.address);
            } else {
                issues.push(Issue::OutsideCode {
                    from: e.address,
                    target: e.address,
                });
            }
        }
        // Targets reached from somewhere, checked once every instruction
        // is known (a target inside an instruction decoded later).
        let mut targets: Vec<(u64, u64)> = Vec::new();
        while let Some(pc) = work.pop() {
            if insts.contains_key(&pc) {
                continue;
            }
            let inst = match code.decode(pc) {
                Ok(i) => i,
                Err(_) => {
                    issues.push(Issue::Undecodable { address: pc });
                    continue;
                }
            };
            insts.insert(pc, inst);
            let next = pc + inst.len() as u64;
            // Where control goes next, and the targets that start blocks.
            let mut to: Vec<(u64, bool)> = Vec::new();
            let flow = Flow::of(&inst, pc);
            let falls = match flow {
                Flow::Next | Flow::Trap => true,
                Flow::EndProgram | Flow::Indirect => false,
                Flow::Branch(t) => {
                    to.push((t, true));
                    false
                }
                Flow::CondBranch(t) => {
                    to.push((t, true));
                    true
                }
                // The callee is an entry of its own; the call returns.
                Flow::Call(t) => {
                    targets.push((pc, t));
                    true
                }
                Flow::SwapPc(_) => {
                    if let Some(&t) = resolved.get(&pc) {
                        targets.push((pc, t));
                    }
                    true
                }
                Flow::SetPc(_) => {
                    if let Some(&t) = resolved.get(&pc) {
                        if is_entry(t) {
                            targets.push((pc, t));
                        } else {
                            to.push((t, true));
                        }
                    }
                    false
                }
            };
            if falls {
                if code.bytes_at(next).is_some() {
                    to.push((next, flow.ends_block()));
                } else {
                    issues.push(Issue::FallsOffEnd { address: pc });
                }
            }
            for (t, leader) in to {
                if leader {
                    leaders.insert(t);
                    targets.push((pc, t));
                }
                if code.bytes_at(t).is_some() {
                    work.push(t);
                }
            }
        }
        // An instruction decoded inside another (a branch into its middle)
        // is dropped; the branch is reported below.
        let mut end = 0u64;
        let mut inside = Vec::new();
        for (&a, i) in &insts {
            if a < end {
                inside.push(a);
            } else {
                end = a + i.len() as u64;
            }
        }
        for a in inside {
            insts.remove(&a);
        }
        // Targets outside the code, or inside an instruction.
        let mut bad: BTreeSet<u64> = BTreeSet::new();
        for &(from, t) in &targets {
            if code.bytes_at(t).is_none() {
                issues.push(Issue::OutsideCode { from, target: t });
                bad.insert(t);
            } else if let Some((&a, i)) = insts.range(..t).next_back()
                && a + i.len() as u64 > t
            {
                issues.push(Issue::MidInstruction { from, target: t });
                bad.insert(t);
            }
        }

        // Blocks.
        let sites_list: Vec<(u64, Instruction)> = insts.into_iter().collect();
        let mut sites: Vec<Site> = Vec::with_capacity(sites_list.len());
        let mut blocks: Vec<Block> = Vec::new();
        for (k, &(pc, inst)) in sites_list.iter().enumerate() {
            let contiguous = k > 0 && {
                let (p, pi) = sites_list[k - 1];
                p + pi.len() as u64 == pc && !Flow::of(&pi, p).ends_block()
            };
            if !contiguous || leaders.contains(&pc) {
                blocks.push(Block {
                    start: pc,
                    end: pc,
                    insts: k..k,
                    succs: Vec::new(),
                    preds: Vec::new(),
                    exit: None,
                });
            }
            let b = blocks.len() - 1;
            blocks[b].end = pc + inst.len() as u64;
            blocks[b].insts.end = k + 1;
            sites.push(Site {
                address: pc,
                inst,
                block: b,
            });
        }
        let block_at = |a: u64| -> Option<usize> {
            let i = blocks.partition_point(|b| b.start <= a);
            (i > 0 && blocks[i - 1].start == a).then(|| i - 1)
        };

        // Functions: blocks reachable from each entry without calls.
        let mut functions: Vec<Function> = Vec::new();
        let mut sorted: Vec<&Entry> = entries.iter().collect();
        sorted.sort_by_key(|e| e.address);
        for e in sorted {
            let Some(entry_block) = block_at(e.address) else {
                continue;
            };
            functions.push(Function {
                name: e.name.clone(),
                entry: e.address,
                is_kernel: e.is_kernel,
                entry_block,
                blocks: Vec::new(),
                calls: Vec::new(),
                tail_calls: Vec::new(),
            });
        }
        let func_at = |a: u64| functions.iter().position(|f| f.entry == a);

        // Edges and exits.
        let mut succs: Vec<Vec<Edge>> = vec![Vec::new(); blocks.len()];
        let mut exits: Vec<Option<Exit>> = vec![None; blocks.len()];
        for (b, blk) in blocks.iter().enumerate() {
            let last = &sites[blk.insts.end - 1];
            let pc = last.address;
            let next = last.next();
            let edge = |t: u64, kind: EdgeKind, v: &mut Vec<Edge>| {
                if !bad.contains(&t)
                    && let Some(to) = block_at(t)
                {
                    v.push(Edge { to, kind });
                }
            };
            let v = &mut succs[b];
            let flow = Flow::of(&last.inst, pc);
            let mut exit = None;
            match flow {
                Flow::Next | Flow::Trap => edge(next, EdgeKind::Fallthrough, v),
                Flow::EndProgram => exit = Some(Exit::EndProgram),
                Flow::Indirect => exit = Some(Exit::UnknownJump),
                Flow::Branch(t) => edge(t, EdgeKind::Jump, v),
                Flow::CondBranch(t) => {
                    edge(t, EdgeKind::Taken, v);
                    edge(next, EdgeKind::NotTaken, v);
                }
                Flow::Call(t) => {
                    edge(t, EdgeKind::Call, v);
                    edge(next, EdgeKind::AfterCall, v);
                }
                Flow::SwapPc(_) => {
                    match resolved.get(&pc) {
                        Some(&t) if func_at(t).is_some() => edge(t, EdgeKind::Call, v),
                        _ => exit = Some(Exit::UnknownCall),
                    }
                    edge(next, EdgeKind::AfterCall, v);
                }
                Flow::SetPc(_) => match resolved.get(&pc) {
                    Some(&t) if is_entry(t) => edge(t, EdgeKind::TailCall, v),
                    Some(&t) => edge(t, EdgeKind::Jump, v),
                    // Decided per function below (return or unknown).
                    None => exit = Some(Exit::UnknownJump),
                },
            }
            if v.is_empty() && exit.is_none() {
                exit = Some(Exit::Broken);
            }
            exits[b] = exit;
        }
        for (b, blk) in blocks.iter_mut().enumerate() {
            blk.succs = std::mem::take(&mut succs[b]);
            blk.exit = exits[b];
        }
        for b in 0..blocks.len() {
            for k in 0..blocks[b].succs.len() {
                let to = blocks[b].succs[k].to;
                if !blocks[to].preds.contains(&b) {
                    blocks[to].preds.push(b);
                }
            }
        }

        let mut cfg = Cfg {
            target: code.target,
            wave: code.wave,
            sites,
            blocks,
            functions,
            issues,
            resolved: resolved.clone(),
        };
        cfg.assign_functions();
        cfg.finish_issues();
        cfg
    }

    /// Fills each function's blocks, calls and tail calls, and decides
    /// whether an unresolved `s_setpc_b64` is a return.
    fn assign_functions(&mut self) {
        for f in 0..self.functions.len() {
            let mut seen = vec![false; self.blocks.len()];
            let mut stack = vec![self.functions[f].entry_block];
            let mut blocks = Vec::new();
            let mut calls = Vec::new();
            let mut tails = Vec::new();
            while let Some(b) = stack.pop() {
                if std::mem::replace(&mut seen[b], true) {
                    continue;
                }
                blocks.push(b);
                let last = self.blocks[b].insts.end - 1;
                if matches!(self.blocks[b].exit, Some(Exit::UnknownCall)) {
                    calls.push((last, None));
                }
                for e in &self.blocks[b].succs {
                    match e.kind {
                        EdgeKind::Call => {
                            calls.push((last, self.function_at(self.blocks[e.to].start)))
                        }
                        EdgeKind::TailCall => {
                            if let Some(g) = self.function_at(self.blocks[e.to].start) {
                                tails.push(g);
                            }
                        }
                        _ => stack.push(e.to),
                    }
                }
            }
            blocks.sort_unstable();
            calls.sort_unstable();
            tails.sort_unstable();
            tails.dedup();
            let func = &mut self.functions[f];
            func.blocks = blocks;
            func.calls = calls;
            func.tail_calls = tails;
        }
        // An unresolved s_setpc_b64 of s[30:31] reached only from
        // functions that are not kernels returns.
        let mut in_kernel = vec![false; self.blocks.len()];
        let mut in_function = vec![false; self.blocks.len()];
        for f in &self.functions {
            for &b in &f.blocks {
                if f.is_kernel {
                    in_kernel[b] = true;
                } else {
                    in_function[b] = true;
                }
            }
        }
        for (b, blk) in self.blocks.iter_mut().enumerate() {
            if blk.exit != Some(Exit::UnknownJump) {
                continue;
            }
            let last = &self.sites[blk.insts.end - 1];
            if let Flow::SetPc(r) = Flow::of(&last.inst, last.address)
                && r == Range::new(30, 2)
                && in_function[b]
                && !in_kernel[b]
            {
                blk.exit = Some(Exit::Return);
            }
        }
    }

    /// Adds an unknown-indirect issue per block that ends in one, and
    /// sorts the issues.
    fn finish_issues(&mut self) {
        for blk in &self.blocks {
            if let Some(e @ (Exit::UnknownJump | Exit::UnknownCall)) = blk.exit {
                let s = &self.sites[blk.insts.end - 1];
                self.issues.push(Issue::UnknownIndirect {
                    address: s.address,
                    call: e == Exit::UnknownCall,
                    text: s.inst.to_string(),
                });
            }
        }
        let key = |i: &Issue| match *i {
            Issue::UnknownIndirect { address, .. }
            | Issue::Undecodable { address }
            | Issue::FallsOffEnd { address } => address,
            Issue::OutsideCode { from, .. } | Issue::MidInstruction { from, .. } => from,
        };
        self.issues.sort_by_key(key);
        self.issues.dedup();
    }

    /// The issues at instructions of function `f` (index in
    /// [`Cfg::functions`]).
    pub fn issues_in(&self, f: usize) -> Vec<&Issue> {
        let func = &self.functions[f];
        let inside = |a: u64| {
            func.blocks
                .iter()
                .any(|&b| self.blocks[b].start <= a && a < self.blocks[b].end)
        };
        self.issues
            .iter()
            .filter(|i| match **i {
                Issue::UnknownIndirect { address, .. } | Issue::FallsOffEnd { address } => {
                    inside(address)
                }
                Issue::OutsideCode { from, .. } | Issue::MidInstruction { from, .. } => {
                    inside(from)
                }
                // An undecodable word ends the block before it.
                Issue::Undecodable { address } => {
                    func.blocks.iter().any(|&b| self.blocks[b].end == address)
                }
            })
            .collect()
    }

    /// Whether everything reachable was followed: no unknown indirect
    /// branch or call, no undecodable or out-of-code target.
    pub fn is_complete(&self) -> bool {
        self.issues.is_empty()
    }

    /// The block starting at `addr`.
    pub fn block_at(&self, addr: u64) -> Option<usize> {
        let i = self.blocks.partition_point(|b| b.start <= addr);
        (i > 0 && self.blocks[i - 1].start == addr).then(|| i - 1)
    }

    /// The index in [`Cfg::sites`] of the instruction at `addr`.
    pub fn site_at(&self, addr: u64) -> Option<usize> {
        self.sites.binary_search_by_key(&addr, |s| s.address).ok()
    }

    /// The function whose entry is `addr`.
    pub fn function_at(&self, addr: u64) -> Option<usize> {
        self.functions.iter().position(|f| f.entry == addr)
    }

    /// The function called `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
}

#[cfg(test)]
mod tests;
