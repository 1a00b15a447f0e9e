//! Dynamic binary instrumentation of GFX9 code objects: probes inserted at
//! patch points, written into a code object that runs on the emulator and,
//! by construction, on hardware (only real instructions with valid
//! encodings; no original instruction moves except the displaced ones).
//!
//! A *patch point* is an instruction before which probes run (a site of
//! the graph): the first instruction of a basic block (bbcount), a chosen
//! instruction (memtrace); a kernel's exit is the patch point before each
//! of its `s_endpgm`. The instruction there is *displaced*: its
//! bytes become an `s_branch` (padded with `s_nop 0`) to a trampoline in a
//! segment appended to the object, which runs the probes, then the
//! displaced instruction, then branches back to the instruction after it.
//! Original code never moves, so branch offsets, `s_getpc`-relative
//! constants and entry points stay valid; the displaced instruction is
//! relocated where it depends on its own address: a PC-relative branch or
//! call gets its offset recomputed from the trampoline, an `s_getpc_b64`
//! gets the difference added back (only where SCC is dead, since
//! `s_add_u32` writes it), an `s_swappc_b64` returns into the trampoline,
//! which branches back. Instructions whose target the graph cannot follow
//! (`s_cbranch_join`, `s_rfe`) are refused.
//!
//! Probes get their scratch registers from liveness
//! ([`crate::analysis::liveness`]): SGPRs dead before the patch point,
//! below what every kernel's descriptor allocates less the six at its top
//! (VCC, FLAT_SCRATCH, XNACK_MASK); where too few are dead there, SGPRs
//! above it, and every descriptor's SGPR count grows to cover them.
//! Probes write no SCC unless it is dead or saved into a dead SGPR and
//! restored with `s_cmp_lg_u32`, never write EXEC or VCC, and begin with
//! `s_waitcnt lgkmcnt(0)` (a scalar load still in flight cannot write a
//! register the probe borrows) and end with one (their own scalar memory
//! operations are complete when the kernel's code resumes; waiting more
//! than the kernel asked for is always allowed).
//!
//! The probes' buffer lives in the appended segment after the
//! trampolines: they address it relative to their own `s_getpc_b64`, as
//! compilers address globals, so the loader needs no relocation and the
//! host finds it at the code object's load base plus
//! [`Manifest::buffer`]. The manifest (JSON, in the non-allocated section
//! [`MANIFEST_SECTION`]) says what each part of the buffer means; `rocjitsu
//! run-kernel --dbi-out FILE` reads the buffer back after the dispatch.
//!
//! Tools: [`Tool::BbCount`] counts, per basic block of the control-flow
//! graph, how many times a wave entered it (a 64-bit counter per block,
//! `s_atomic_add_x2`); [`Tool::MemTrace`] records, for chosen global
//! memory instructions, the address registers of every active lane on
//! every Nth execution (see [`memtrace`]).

pub mod enc;
pub mod memtrace;
#[cfg(test)]
mod tests;

use crate::analysis::liveness::{Liveness, RegSet};
use crate::cfg::{Cfg, Flow};
use crate::dbt::elfedit::{self, Editor, NewSegment, PAGE, PF_RWX, SHF_AX, SHF_WA};
use crate::dbt::enc::{s_branch, s_nop};
use crate::descriptor::{KernelDescriptor, PgmRsrc1};
use crate::object::CodeObject;
use rocjitsu_isa::gfx9::regs::{SCC, Unit, VGPR0};
use rocjitsu_isa::{Family, Instruction};
use std::collections::BTreeMap;
use std::fmt;

/// The non-allocated section holding the [`Manifest`] (JSON).
pub const MANIFEST_SECTION: &str = ".rocjitsu.dbi";

/// The most SGPRs a GFX9 wave addresses (s0..s101).
const SGPR_MAX: u32 = 102;
/// SGPRs at the top of a GFX9 allocation that hold VCC, FLAT_SCRATCH and
/// XNACK_MASK.
const SGPR_EXTRA: u32 = 6;

/// What to instrument with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Per-basic-block execution counts (wave entries).
    BbCount,
    /// Addresses of chosen global memory instructions.
    MemTrace(memtrace::Options),
}

impl Tool {
    pub fn name(&self) -> &'static str {
        match self {
            Tool::BbCount => "bbcount",
            Tool::MemTrace(_) => "memtrace",
        }
    }
}

/// One counted block of a bbcount manifest: counter `i` (a little-endian
/// u64 at `buffer + 8 i`) belongs to `blocks[i]`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CountedBlock {
    /// The function (kernel or callee) whose graph holds the block.
    pub function: String,
    /// Code object addresses of its first instruction and past its last.
    pub start: u64,
    pub end: u64,
    /// Its first instruction (LLVM syntax), as in the original object.
    pub first: String,
}

/// What the instrumented object's buffer holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// `bbcount` or `memtrace`.
    pub tool: String,
    pub target: String,
    /// The buffer's code object address (add the load base).
    pub buffer: u64,
    pub buffer_bytes: u64,
    /// bbcount: the blocks, in counter order.
    #[serde(default)]
    pub blocks: Vec<CountedBlock>,
    /// memtrace: the layout and the traced instructions.
    #[serde(default)]
    pub memtrace: Option<memtrace::Layout>,
}

impl Manifest {
    /// The manifest of an instrumented code object, if it is one.
    pub fn of(co: &CodeObject) -> Result<Option<Manifest>, String> {
        let Some(s) = co.elf().section(MANIFEST_SECTION) else {
            return Ok(None);
        };
        let data = co.section_data(s);
        serde_json::from_slice(data)
            .map(Some)
            .map_err(|e| format!("{}: section {MANIFEST_SECTION}: {e}", co.name()))
    }
}

/// What [`instrument`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    pub tool: String,
    pub target: String,
    /// Instructions displaced into trampolines.
    pub patch_points: usize,
    pub probes: usize,
    pub trampoline_bytes: usize,
    pub buffer_bytes: u64,
    /// Patch points whose probes save and restore SCC (live there).
    pub scc_saved: usize,
    /// Descriptors whose SGPR count grew: (kernel, before, after).
    pub sgprs_grown: Vec<(String, u32, u32)>,
    /// Descriptors whose VGPR count grew (probes borrowing VGPRs above the
    /// ArchVGPRs where none was dead): (kernel, before, after).
    pub vgprs_grown: Vec<(String, u32, u32)>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "dbi {}: {}: {} patch points, {} probes, {} bytes of trampolines, {} buffer bytes, SCC saved at {}",
            self.tool,
            self.target,
            self.patch_points,
            self.probes,
            self.trampoline_bytes,
            self.buffer_bytes,
            self.scc_saved
        )?;
        for (k, a, b) in &self.sgprs_grown {
            writeln!(f, "  descriptor {k}: SGPRs {a} -> {b}")?;
        }
        for (k, a, b) in &self.vgprs_grown {
            writeln!(f, "  descriptor {k}: VGPRs {a} -> {b}")?;
        }
        Ok(())
    }
}

/// The instrumented object.
#[derive(Clone, Debug)]
pub struct Instrumented {
    pub elf: Vec<u8>,
    pub manifest: Manifest,
    pub report: Report,
}

/// Why a code object was not instrumented (see [`RewriteError`](crate::rewrite_error::RewriteError)).
pub type DbiError = crate::rewrite_error::RewriteError;

/// A probe's register needs and its code. `emit` gets the trampoline
/// address where its code starts and the buffer's address; it returns the
/// probe's dwords (a fixed length whatever the addresses).
pub(crate) trait Probe {
    /// Scratch SGPR pairs (even-aligned) and single SGPRs it needs.
    fn sgprs(&self) -> (usize, usize);
    /// Scratch VGPRs it needs.
    fn vgprs(&self) -> usize;
    /// Whether it writes SCC.
    fn writes_scc(&self) -> bool;
    fn emit(&self, at: u64, buffer: u64, regs: &Scratch) -> Result<Vec<u32>, String>;
}

/// The scratch registers of one patch point.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    /// Even SGPRs starting dead pairs.
    pub pairs: Vec<u32>,
    pub singles: Vec<u32>,
    pub vgprs: Vec<u32>,
}

/// The bbcount probe: `counters[i] += 1` (64-bit, one per wave entry).
struct Count {
    counter: u64,
}

impl Probe for Count {
    fn sgprs(&self) -> (usize, usize) {
        (2, 0)
    }
    fn vgprs(&self) -> usize {
        0
    }
    fn writes_scc(&self) -> bool {
        false
    }
    fn emit(&self, at: u64, buffer: u64, r: &Scratch) -> Result<Vec<u32>, String> {
        let (p, d) = (r.pairs[0], r.pairs[1]);
        let pc = at + 4;
        let off = (buffer + 8 * self.counter) as i64 - pc as i64;
        if !enc::smem_offset_fits(off) {
            return Err(format!(
                "the counter is {off} bytes from the probe, out of the SMEM offset's 1 MiB range"
            ));
        }
        let mut w = vec![
            enc::sop1(enc::sop1::GETPC_B64, p, 0),
            enc::sop1(enc::sop1::MOV_B64, d, enc::int(1)),
        ];
        w.extend(enc::smem(enc::smem::ATOMIC_ADD_X2, d, p, off as i32, false));
        Ok(w)
    }
}

/// Instruments a GFX9 code object (bare, linked ELF) with `tool`.
pub fn instrument(elf: &[u8], tool: &Tool) -> Result<Instrumented, DbiError> {
    let co = CodeObject::parse("input", elf.to_vec())
        .map_err(|e| DbiError::new("dbi", format!("cannot read the code object: {e}")))?;
    let target = co.target();
    if target.family() != Family::Gfx9 {
        return Err(DbiError::new(
            "dbi",
            format!(
                "{}: instrumentation is implemented for GFX9 targets (gfx908, gfx90a, gfx942, gfx950); \
             the probes' encodings for {:?} are not written yet",
                target.name(),
                target.family()
            ),
        ));
    }
    if co.elf().header.is_relocatable() {
        return Err(DbiError::new(
            "dbi",
            "relocatable object: link it first (ld.lld-22 -shared); only loadable code objects are instrumented",
        ));
    }
    if co.elf().section(MANIFEST_SECTION).is_some() {
        return Err(DbiError::new(
            "dbi",
            "the code object is already instrumented (it has a .rocjitsu.dbi section); instrument the original",
        ));
    }
    let cfg = graph(&co)?;
    if let Some(issue) = cfg.issues.first() {
        let at = match issue {
            crate::cfg::Issue::UnknownIndirect { address, .. }
            | crate::cfg::Issue::Undecodable { address }
            | crate::cfg::Issue::FallsOffEnd { address } => *address,
            crate::cfg::Issue::OutsideCode { from, .. }
            | crate::cfg::Issue::MidInstruction { from, .. } => *from,
        };
        let f = cfg.site_at(at).and_then(|k| owner(&cfg, k));
        return Err(DbiError {
            kernel: f.map(|f| f.name.clone()),
            pc: f.map(|f| at - f.entry),
            address: Some(at),
            instruction: cfg.site_at(at).map(|k| cfg.sites[k].inst.to_string()),
            ..DbiError::new(
                "dbi",
                format!(
                    "the control-flow graph is incomplete ({issue}); code it does not reach would go uncounted, so the object is not instrumented"
                ),
            )
        });
    }
    let live = Liveness::of(&cfg).map_err(|e| DbiError::new("dbi", e.to_string()))?;
    let locate = |site: usize, message: String| {
        let s = &cfg.sites[site];
        let f = owner(&cfg, site);
        DbiError {
            tool: "dbi",

            kernel: f.map(|f| f.name.clone()),
            pc: f.map(|f| s.address - f.entry),
            address: Some(s.address),
            instruction: Some(s.inst.to_string()),
            message,
        }
    };

    // Patch points and their probes, by site.
    let mut manifest = Manifest {
        tool: tool.name().into(),
        target: target.name().into(),
        buffer: 0,
        buffer_bytes: 0,
        blocks: Vec::new(),
        memtrace: None,
    };
    let mut patches: BTreeMap<usize, Vec<Box<dyn Probe>>> = BTreeMap::new();
    let mut buffer_bytes: u64;
    match tool {
        Tool::BbCount => {
            let mut owner = vec![String::new(); cfg.blocks.len()];
            for f in &cfg.functions {
                for &b in &f.blocks {
                    if owner[b].is_empty() {
                        owner[b] = f.name.clone();
                    }
                }
            }
            for (b, blk) in cfg.blocks.iter().enumerate() {
                let site = blk.insts.start;
                let function = std::mem::take(&mut owner[b]);
                manifest.blocks.push(CountedBlock {
                    function,
                    start: blk.start,
                    end: blk.end,
                    first: cfg.sites[site].inst.to_string(),
                });
                patches
                    .entry(site)
                    .or_default()
                    .push(Box::new(Count { counter: b as u64 }));
            }
            buffer_bytes = 8 * cfg.blocks.len() as u64;
        }
        Tool::MemTrace(o) => {
            let (layout, probes) = memtrace::plan(&cfg, o).map_err(|(site, m)| match site {
                Some(s) => locate(s, m),
                None => DbiError::new("dbi", m),
            })?;
            buffer_bytes = layout.bytes();
            for (site, p) in probes {
                patches.entry(site).or_default().push(p);
            }
            manifest.memtrace = Some(layout);
        }
    }
    buffer_bytes = buffer_bytes.max(8);

    // Scratch registers per patch point.
    let kernels = co.kernels();
    let sgpr_alloc = kernels
        .iter()
        .map(|k| k.descriptor.sgpr_count(target))
        .min()
        .unwrap_or(SGPR_MAX + SGPR_EXTRA);
    let below = sgpr_alloc.saturating_sub(SGPR_EXTRA).min(SGPR_MAX);
    let vgpr_ok = vgpr_candidates(&co, &cfg);
    let mut report = Report {
        tool: tool.name().into(),
        target: target.name().into(),
        ..Report::default()
    };
    let mut highest_sgpr = 0u32;
    // The first VGPR above every kernel's ArchVGPRs, and how many above it
    // probes borrow.
    let vbase = kernels
        .iter()
        .map(|k| arch_vgprs(&k.descriptor, target))
        .max()
        .unwrap_or(0);
    let mut vgprs_above = 0u32;
    let mut plans: Vec<(usize, Scratch, Option<u32>)> = Vec::new();
    for (&site, probes) in &patches {
        let (pairs, singles) = probes.iter().fold((0, 0), |(a, b), p| {
            let (x, y) = p.sgprs();
            (a.max(x), b.max(y))
        });
        let nv = probes.iter().map(|p| p.vgprs()).max().unwrap_or(0);
        let scc_live = live.live_in[site].contains(SCC) && probes.iter().any(|p| p.writes_scc());
        let busy = &live.live_in[site];
        let singles = singles + usize::from(scc_live);
        let regs = pick_sgprs(busy, pairs, singles, below).ok_or_else(|| {
            locate(
                site,
                format!(
                    "the probe needs {pairs} SGPR pairs and {singles} SGPRs that no path needs here; \
                     fewer are dead below s{SGPR_MAX} (live: {})",
                    busy.names(Family::Gfx9)
                ),
            )
        })?;
        let (pairs_v, mut singles_v) = regs;
        let scc_save = if scc_live { singles_v.pop() } else { None };
        for &r in pairs_v.iter().chain(&singles_v).chain(scc_save.iter()) {
            highest_sgpr = highest_sgpr.max(r + 2);
        }
        let mut vgprs = Vec::new();
        if nv > 0 {
            let busy_v = {
                let mut b = live.live_in[site];
                b.union_with(&live.effects[site].uses);
                b.union_with(&live.effects[site].defs);
                b
            };
            for v in 0..256u32 {
                if vgprs.len() == nv {
                    break;
                }
                let u = VGPR0 + v as Unit;
                if vgpr_ok.contains(u) && !busy_v.contains(u) {
                    vgprs.push(v);
                }
            }
            if vgprs.len() < nv {
                // Above every kernel's ArchVGPRs, for which the
                // descriptors grow below.
                vgprs = (vbase..vbase + nv as u32).collect();
                vgprs_above = vgprs_above.max(nv as u32);
            }
        }
        if scc_live {
            report.scc_saved += 1;
        }
        plans.push((
            site,
            Scratch {
                pairs: pairs_v,
                singles: singles_v,
                vgprs,
            },
            scc_save,
        ));
    }

    // Descriptors: SGPR counts grown to cover the scratch SGPRs above the
    // allocation, VGPR counts (and ArchVGPRs) to cover the scratch VGPRs
    // above the kernels' ArchVGPRs.
    if vbase + vgprs_above > 256 {
        return Err(DbiError::new(
            "dbi",
            format!(
                "a probe needs {vgprs_above} VGPRs where none is dead, and above the kernels' ArchVGPRs (v0..v{}) they would pass v255",
                vbase.saturating_sub(1)
            ),
        ));
    }
    let mut descriptors: Vec<(u64, KernelDescriptor)> = Vec::new();
    let need_s = (highest_sgpr > below).then(|| (highest_sgpr + SGPR_EXTRA).div_ceil(16) * 16);
    for k in kernels {
        let d = k.descriptor;
        let mut nd = d;
        let old_s = d.sgpr_count(target);
        if let Some(need) = need_s.filter(|&n| n > old_s) {
            let r1 = (nd.compute_pgm_rsrc1.raw & !(0xf << 6)) | ((need / 8 - 1) << 6);
            nd.compute_pgm_rsrc1 = PgmRsrc1::from_raw(r1);
            report.sgprs_grown.push((k.name.clone(), old_s, need));
        }
        if vgprs_above > 0 {
            let old_total = d.vgpr_count(target);
            let old_arch = arch_vgprs(&d, target);
            let new_arch = (vbase + vgprs_above).div_ceil(4) * 4;
            let new_total = if target == rocjitsu_isa::Target::Gfx908 {
                new_arch.div_ceil(4) * 4
            } else {
                (new_arch + old_total.saturating_sub(old_arch)).div_ceil(8) * 8
            };
            if new_total > 512 {
                return Err(DbiError {
                    kernel: Some(k.name.clone()),
                    ..DbiError::new(
                        "dbi",
                        format!(
                            "with {vgprs_above} probe VGPRs the kernel needs {new_total} VGPRs, more than 512"
                        ),
                    )
                });
            }
            let granule = if target == rocjitsu_isa::Target::Gfx908 {
                4
            } else {
                8
            };
            let r1 = (nd.compute_pgm_rsrc1.raw & !0x3f) | (new_total / granule - 1);
            nd.compute_pgm_rsrc1 = PgmRsrc1::from_raw(r1);
            if target != rocjitsu_isa::Target::Gfx908 {
                let r3 = (d.compute_pgm_rsrc3.raw & !0x3f) | (new_arch / 4 - 1);
                nd.compute_pgm_rsrc3 = crate::descriptor::PgmRsrc3::from_raw(r3);
            }
            report
                .vgprs_grown
                .push((k.name.clone(), old_total, new_total));
        }
        if nd != d {
            descriptors.push((k.descriptor_address, nd));
        }
    }

    // Trampolines: sizes first (they do not depend on addresses), then the
    // buffer's address after them, then the code.
    let base = elfedit::end_of_image(&co);
    let emit_all = |buffer: u64| -> Result<Emitted, DbiError> {
        let mut code: Vec<u32> = Vec::new();
        let mut entries = Vec::new();
        for (site, regs, scc_save) in &plans {
            let here = base + 4 * code.len() as u64;
            entries.push((*site, here));
            code.push(enc::S_WAITCNT_LGKM0);
            if let Some(s) = scc_save {
                code.push(enc::sop2(
                    enc::sop2::CSELECT_B32,
                    *s,
                    enc::int(1),
                    enc::int(0),
                ));
            }
            for p in &patches[site] {
                let at = base + 4 * code.len() as u64;
                let w = p.emit(at, buffer, regs).map_err(|m| locate(*site, m))?;
                code.extend(w);
            }
            code.push(enc::S_WAITCNT_LGKM0);
            if let Some(s) = scc_save {
                code.push(enc::sopc(enc::sopc::CMP_LG_U32, *s, enc::int(0)));
            }
            let at = base + 4 * code.len() as u64;
            let w = displace(&cfg, &live, *site, at).map_err(|m| locate(*site, m))?;
            code.extend(w);
        }
        Ok((code, entries))
    };
    let (sized, _) = emit_all(base)?;
    let buffer = (base + 4 * sized.len() as u64).div_ceil(PAGE) * PAGE;
    let (code, entries) = emit_all(buffer)?;
    debug_assert_eq!(code.len(), sized.len());
    manifest.buffer = buffer;
    manifest.buffer_bytes = buffer_bytes;
    report.patch_points = plans.len();
    report.probes = patches.values().map(Vec::len).sum();
    report.trampoline_bytes = code.len() * 4;
    report.buffer_bytes = buffer_bytes;

    let mut out = Editor::new(&co);
    for (addr, d) in &descriptors {
        let off = co.elf().file_offset_of(*addr, 64).ok_or_else(|| {
            DbiError::new("dbi", format!("descriptor at 0x{addr:x} has no file data"))
        })? as usize;
        out.bytes[off..off + 64].copy_from_slice(&d.to_bytes());
    }
    for (site, at) in &entries {
        let s = &cfg.sites[*site];
        let off = co
            .elf()
            .file_offset_of(s.address, s.inst.len() as u64)
            .ok_or_else(|| locate(*site, "the instruction has no file data".into()))?
            as usize;
        let b = branch(s.address, *at).map_err(|m| locate(*site, m))?;
        out.bytes[off..off + 4].copy_from_slice(&b.to_le_bytes());
        for i in 1..s.inst.len() / 4 {
            out.bytes[off + 4 * i..off + 4 * i + 4].copy_from_slice(&s_nop(0).to_le_bytes());
        }
    }
    let mut data: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    let code_len = data.len() as u64;
    data.resize((buffer - base) as usize, 0);
    data.resize((buffer - base + buffer_bytes) as usize, 0);
    let json = serde_json::to_vec(&manifest).map_err(|e| DbiError::new("dbi", e.to_string()))?;
    let elf = out
        .append(
            &co,
            &NewSegment {
                vaddr: base,
                data,
                flags: PF_RWX,
                sections: vec![
                    (".text.dbi", 0, code_len, SHF_AX),
                    (".data.dbi", buffer - base, buffer_bytes, SHF_WA),
                ],
            },
            &[(MANIFEST_SECTION, json)],
        )
        .map_err(|e| DbiError::new("dbi", e))?;
    Ok(Instrumented {
        elf,
        manifest,
        report,
    })
}

/// The function holding site `k` (the first, where blocks are shared).
pub(crate) fn owner(cfg: &Cfg, k: usize) -> Option<&crate::cfg::Function> {
    let b = cfg.sites[k].block;
    cfg.functions.iter().find(|f| f.blocks.contains(&b))
}

/// A kernel's ArchVGPRs: below `accum_offset` in the unified file of
/// gfx90a and later, the whole VGPR allocation on gfx908.
fn arch_vgprs(d: &KernelDescriptor, target: rocjitsu_isa::Target) -> u32 {
    if target == rocjitsu_isa::Target::Gfx908 {
        d.vgpr_count(target)
    } else {
        d.accum_offset().min(d.vgpr_count(target))
    }
}

/// The control-flow graph from the kernels' entries: the functions they
/// call are found through their calls, and functions no kernel reaches are
/// left out, since nothing outside a code object calls into it (the HSA
/// loader links no code between code objects). Their callers all known,
/// liveness at the callees' returns is what their call sites need rather
/// than everything.
pub fn graph(co: &CodeObject) -> Result<Cfg, DbiError> {
    let code = crate::cfg::Code::of(co)
        .map_err(|e| DbiError::new("dbi", format!("control-flow graph: {e}")))?;
    let entries: Vec<crate::cfg::Entry> = crate::cfg::Entry::of(co)
        .into_iter()
        .filter(|e| e.is_kernel)
        .collect();
    if entries.is_empty() {
        return Err(DbiError::new(
            "dbi",
            "the code object has no kernel to instrument",
        ));
    }
    let first = Cfg::build(&code, &entries);
    // Name the callees after their symbols: the graph again with the
    // function symbols it reached as entries (their callers stay known).
    let mut named = entries;
    for e in crate::cfg::Entry::of(co) {
        if !e.is_kernel && first.functions.iter().any(|f| f.entry == e.address) {
            named.push(e);
        }
    }
    Ok(Cfg::build(&code, &named))
}

/// VGPRs a probe may borrow where they are dead: below every kernel's
/// ArchVGPRs, and named by no memory or matrix instruction (those read and
/// write their VGPRs after they issue, which liveness at issue does not
/// see).
fn vgpr_candidates(co: &CodeObject, cfg: &Cfg) -> RegSet {
    let arch = co
        .kernels()
        .iter()
        .map(|k| arch_vgprs(&k.descriptor, co.target()))
        .min()
        .unwrap_or(0);
    let mut ok = RegSet::empty();
    for v in 0..arch.min(256) {
        ok.insert(VGPR0 + v as Unit);
    }
    for s in &cfg.sites {
        let name = s.inst.mnemonic();
        let asynchronous = [
            "global_", "flat_", "scratch_", "buffer_", "tbuffer_", "ds_", "image_", "v_mfma",
            "v_smfmac",
        ]
        .iter()
        .any(|p| name.starts_with(p));
        if !asynchronous {
            continue;
        }
        let Some(g) = s.inst.regs() else { continue };
        for r in g.reads().chain(g.writes()).filter(|r| r.is_vector()) {
            for u in r.units() {
                ok.remove(u);
            }
        }
    }
    ok
}

/// `pairs` even-aligned SGPR pairs and `singles` SGPRs not in `busy`,
/// preferring those below `below` (allocated by every kernel).
fn pick_sgprs(
    busy: &RegSet,
    pairs: usize,
    singles: usize,
    below: u32,
) -> Option<(Vec<u32>, Vec<u32>)> {
    let free = |r: u32| r < SGPR_MAX && !busy.contains(r as Unit);
    let mut taken = vec![false; SGPR_MAX as usize];
    let mut order: Vec<u32> = (0..SGPR_MAX).collect();
    // Below the allocation first, then above it, each from the top down
    // (the low SGPRs hold the kernel's inputs and are most often live).
    order.sort_by_key(|&r| (r >= below, std::cmp::Reverse(r)));
    let mut ps = Vec::new();
    for &r in &order {
        if ps.len() == pairs {
            break;
        }
        if r % 2 == 0 && free(r) && free(r + 1) && !taken[r as usize] && !taken[r as usize + 1] {
            taken[r as usize] = true;
            taken[r as usize + 1] = true;
            ps.push(r);
        }
    }
    if ps.len() < pairs {
        return None;
    }
    let mut ss = Vec::new();
    for &r in &order {
        if ss.len() == singles {
            break;
        }
        if free(r) && !taken[r as usize] {
            taken[r as usize] = true;
            ss.push(r);
        }
    }
    (ss.len() == singles).then_some((ps, ss))
}

/// The trampolines' code and, per patch point, its site and trampoline
/// address.
type Emitted = (Vec<u32>, Vec<(usize, u64)>);

/// The `s_branch` at `from` to `to`.
fn branch(from: u64, to: u64) -> Result<u32, String> {
    let delta = (to as i64 - (from as i64 + 4)) / 4;
    let d = i16::try_from(delta).map_err(|_| {
        format!(
            "the trampoline is {delta} dwords away, out of s_branch's range of 128 KiB \
             (long branches through s_getpc/s_setpc are not implemented)"
        )
    })?;
    Ok(s_branch(d))
}

/// The displaced instruction at site `k` as it runs at `at` in a
/// trampoline, followed by the branch back where control falls through.
fn displace(cfg: &Cfg, live: &Liveness, k: usize, at: u64) -> Result<Vec<u32>, String> {
    let s = &cfg.sites[k];
    let Instruction::Gfx9(inst) = s.inst else {
        return Err("not a GFX9 instruction".into());
    };
    let len = inst.len();
    let mut w: Vec<u32> = (0..len / 4).map(|i| inst.word(i)).collect();
    let name = inst.mnemonic();
    let flow = Flow::of(&s.inst, s.address);
    let back_from = |w: &Vec<u32>| at + 4 * w.len() as u64;
    match flow {
        Flow::Indirect => {
            return Err(format!(
                "`{name}` branches where the graph cannot follow; it is not displaced"
            ));
        }
        Flow::Branch(t) | Flow::CondBranch(t) | Flow::Call(t) => {
            let d = (t as i64 - (at as i64 + 4)) / 4;
            let d = i16::try_from(d).map_err(|_| {
                format!("its target is {d} dwords from the trampoline, out of the branch's 128 KiB range")
            })?;
            w[0] = (w[0] & 0xffff_0000) | u32::from(d as u16);
        }
        _ => {}
    }
    if name == "s_getpc_b64" {
        if live.live_out[k].contains(SCC) {
            return Err(
                "`s_getpc_b64` at a patch point with SCC live: its result is corrected with s_add_u32/s_addc_u32, which write SCC"
                    .into(),
            );
        }
        let dst = (w[0] >> 16) & 0x7f;
        let delta = s.next().wrapping_sub(at + 4);
        w.push(enc::sop2(enc::sop2::ADD_U32, dst, dst, enc::LITERAL));
        w.push(delta as u32);
        w.push(enc::sop2(
            enc::sop2::ADDC_U32,
            dst + 1,
            dst + 1,
            enc::LITERAL,
        ));
        w.push((delta >> 32) as u32);
    }
    let falls_through = !matches!(flow, Flow::Branch(_) | Flow::EndProgram | Flow::SetPc(_));
    if falls_through {
        let from = back_from(&w);
        w.push(branch(from, s.next())?);
    }
    Ok(w)
}
