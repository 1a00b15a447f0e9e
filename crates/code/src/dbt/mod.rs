//! Dynamic binary translation of code objects between GFX9 targets:
//! gfx950 (CDNA4) code objects rewritten to run on gfx942 (CDNA3).
//!
//! [`translate`] parses the ELF, decodes every executable section with the
//! guest decoder and classifies each instruction:
//! - *same on the host*: the bytes decode on the host target to the same
//!   instruction (same length, same LLVM text), so they stay as they are;
//! - *rewritten*: a guest-only instruction (or one the host encodes
//!   differently) with an equivalent host sequence ([`rewrite`]): the
//!   original is replaced in place by an `s_branch` to a trampoline (padded
//!   with `s_nop`) in an executable segment appended to the object; the
//!   trampoline holds the host sequence and an `s_branch` back. Original
//!   code never moves, so PC-relative constants, `s_getpc`-based addressing,
//!   branch targets and kernel entry offsets stay valid;
//! - anything else fails closed: [`DbtError`] names the function, the PC
//!   (byte offset in the function) and the instruction (LLVM syntax).
//!
//! Temporaries are VGPRs free where the rewrite runs, from register
//! liveness over the guest's control-flow graph ([`temps`]); where no block
//! of them is free, VGPRs above every kernel's ArchVGPRs: the descriptors'
//! `accum_offset` and granulated VGPR count grow by what those rewrites
//! need (AccVGPRs are named relative to `accum_offset`, so they keep their
//! meaning). No SGPR and no SCC is touched by a rewrite; VCC is not used.
//! The ELF is retargeted: `e_flags` machine, the metadata note's
//! `amdhsa.target`, and each kernel's limits are checked against the host
//! (LDS at most 64 KiB on gfx942).

pub(crate) mod elfedit;
pub mod enc;
mod rewrite;
mod temps;

use crate::descriptor::KernelDescriptor;
use crate::object::CodeObject;
use rocjitsu_isa::{Inst, Target};
use std::collections::BTreeMap;
use std::fmt;

/// What to translate from and to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The target the code object was compiled for.
    pub guest: Target,
    /// The target the translated code object runs on.
    pub host: Target,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            guest: Target::Gfx950,
            host: Target::Gfx942,
        }
    }
}

/// The translated code object and what was done to it.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The host code object (ELF bytes).
    pub elf: Vec<u8>,
    pub report: Report,
}

/// What the translation rewrote, per function (kernels and the functions
/// they call).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Report {
    pub guest: String,
    pub host: String,
    /// Every function symbol with code, in address order.
    pub functions: Vec<FunctionReport>,
    /// Kernel descriptors changed (register counts).
    pub kernels: Vec<KernelReport>,
    /// Instructions decoded in all executable sections.
    pub instructions: usize,
    /// Instructions rewritten, in all.
    pub rewritten: usize,
    /// Rewritten instructions per kind (mnemonic), over the whole object.
    pub rewritten_by_kind: BTreeMap<String, usize>,
    /// Bytes of trampoline code appended.
    pub trampoline_bytes: usize,
    /// Temporary VGPRs added above the ArchVGPRs of every kernel.
    pub temp_vgprs: u32,
    /// Rewrites (or runs of transposing loads) whose temporaries are VGPRs
    /// free where they run (register liveness), needing no added VGPRs.
    pub temps_in_free_vgprs: usize,
}

/// One function's rewrites.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct FunctionReport {
    pub name: String,
    pub is_kernel: bool,
    /// Instructions in the function.
    pub instructions: usize,
    /// Rewritten instructions per kind.
    pub rewritten: BTreeMap<String, usize>,
}

/// One kernel descriptor's changes.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct KernelReport {
    pub name: String,
    /// Allocated VGPRs (unified file) before and after.
    pub vgprs: (u32, u32),
    /// ArchVGPRs (`accum_offset`) before and after.
    pub arch_vgprs: (u32, u32),
    /// Static LDS bytes (unchanged; checked against the host's limit).
    pub lds_bytes: u32,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "dbt: {} -> {}: {} instructions, {} rewritten, {} bytes of trampolines, {} temporary VGPRs added, {} rewrites in free VGPRs",
            self.guest,
            self.host,
            self.instructions,
            self.rewritten,
            self.trampoline_bytes,
            self.temp_vgprs,
            self.temps_in_free_vgprs
        )?;
        for func in &self.functions {
            let kinds: Vec<String> = func
                .rewritten
                .iter()
                .map(|(k, n)| format!("{k} x{n}"))
                .collect();
            writeln!(
                f,
                "  {} {}: {} instructions, {} rewritten{}{}",
                if func.is_kernel { "kernel" } else { "function" },
                func.name,
                func.instructions,
                func.rewritten.values().sum::<usize>(),
                if kinds.is_empty() { "" } else { ": " },
                kinds.join(", ")
            )?;
        }
        for k in &self.kernels {
            writeln!(
                f,
                "  descriptor {}: VGPRs {} -> {}, ArchVGPRs {} -> {}, LDS {} bytes",
                k.name, k.vgprs.0, k.vgprs.1, k.arch_vgprs.0, k.arch_vgprs.1, k.lds_bytes
            )?;
        }
        Ok(())
    }
}

/// Why a code object was not translated (see [`RewriteError`](crate::rewrite_error::RewriteError)).
pub type DbtError = crate::rewrite_error::RewriteError;

/// The host's static LDS limit per workgroup.
fn host_lds_limit(host: Target) -> u32 {
    match host {
        Target::Gfx950 => 160 * 1024,
        _ => 64 * 1024,
    }
}

/// One decoded guest instruction of an executable section.
#[derive(Clone, Copy)]
pub(crate) struct Site {
    pub address: u64,
    pub file_offset: usize,
    pub inst: Inst,
}

/// How a guest instruction relates to the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Identical bytes, identical instruction on the host.
    Same,
    /// Must be rewritten into a host sequence.
    Rewrite,
}

/// Classifies a guest instruction for `host`: the same bytes must decode on
/// the host to an instruction of the same length with the same LLVM text,
/// and mean the same there. The fp8 and bf8 instructions (conversions,
/// MFMAs, SMFMACs) share their encodings between gfx942 and gfx950 but not
/// their formats: gfx942 reads FNUZ e4m3/e5m2, gfx950 the OCP formats.
pub fn classify(inst: &Inst, host: Target) -> Class {
    if inst.target() != host {
        let text = inst.to_string();
        let m = text.split_whitespace().next().unwrap_or("");
        if m.contains("fp8") || m.contains("bf8") {
            return Class::Rewrite;
        }
    }
    let b = inst.bytes();
    match rocjitsu_isa::decode(host, &b[..inst.len()]) {
        Ok(h) if h.len() == inst.len() && h.to_string() == inst.to_string() => Class::Same,
        _ => Class::Rewrite,
    }
}

/// The instruction's kind in reports: its mnemonic as LLVM prints it (a
/// scaled MFMA pair is `v_mfma_scale_*`).
fn kind_of(inst: &Inst) -> String {
    inst.to_string()
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string()
}

/// Translates a guest code object (bare ELF) for the host.
pub fn translate(elf: &[u8], opts: &Options) -> Result<Translation, DbtError> {
    if (opts.guest, opts.host) != (Target::Gfx950, Target::Gfx942) {
        return Err(DbtError::new(
            "dbt",
            format!(
                "translating {} code for {} is not implemented (supported: --guest gfx950 --host gfx942)",
                opts.guest.name(),
                opts.host.name()
            ),
        ));
    }
    let co = CodeObject::parse("input", elf.to_vec())
        .map_err(|e| DbtError::new("dbt", format!("cannot read the code object: {e}")))?;
    if co.target() != opts.guest {
        return Err(DbtError::new(
            "dbt",
            format!(
                "the code object is for {}, not the guest {} (pass --guest {})",
                co.target_id(),
                opts.guest.name(),
                co.target().name()
            ),
        ));
    }
    if co.elf().header.is_relocatable() {
        return Err(DbtError::new(
            "dbt",
            "relocatable object: link it first (ld.lld-22 -shared), only loadable code objects are translated",
        ));
    }
    let mut report = Report {
        guest: opts.guest.name().to_string(),
        host: opts.host.name().to_string(),
        ..Report::default()
    };

    // Descriptor limits on the host.
    for k in co.kernels() {
        let lds = k.descriptor.group_segment_fixed_size;
        if lds > host_lds_limit(opts.host) {
            return Err(DbtError {
                kernel: Some(k.name.clone()),
                message: format!(
                    "the kernel allocates {lds} bytes of LDS; {} has {} (the kernel cannot run there)",
                    opts.host.name(),
                    host_lds_limit(opts.host)
                ),
                ..DbtError::new("dbt", "")
            });
        }
    }

    // Decode and classify every instruction of the executable sections.
    let sites = decode_sections(&co, opts)?;
    report.instructions = sites.len();
    let mut funcs: BTreeMap<u64, FunctionReport> = BTreeMap::new();
    for f in co.functions().iter().filter(|f| f.size > 0) {
        funcs.insert(
            f.address,
            FunctionReport {
                name: f.name.clone(),
                is_kernel: f.is_kernel,
                ..FunctionReport::default()
            },
        );
    }
    let mode = rewrite::ModeFacts::of(&co, &sites);
    let mut plans = Vec::new();
    for s in &sites {
        let func = co.function_at(s.address);
        if let Some(f) = func
            && let Some(r) = funcs.get_mut(&f.address)
        {
            r.instructions += 1;
        }
        if classify(&s.inst, opts.host) == Class::Same {
            continue;
        }
        let locate = |message: String| DbtError {
            tool: "dbt",

            kernel: func.map(|f| f.name.clone()),
            pc: func.map(|f| s.address - f.address),
            address: Some(s.address),
            instruction: Some(s.inst.to_string()),
            message,
        };
        let plan = rewrite::plan(&s.inst, &mode).map_err(locate)?;
        let kind = kind_of(&s.inst);
        if let Some(f) = func
            && let Some(r) = funcs.get_mut(&f.address)
        {
            *r.rewritten.entry(kind.clone()).or_default() += 1;
        }
        *report.rewritten_by_kind.entry(kind).or_default() += 1;
        plans.push((*s, plan));
    }
    report.rewritten = plans.len();
    report.functions = funcs.into_values().collect();

    // Runs of consecutive transposing loads share one trampoline (EXEC
    // saved once, one wait per phase): the first one's branch goes there
    // and comes back after the last; the others keep their own trampolines
    // for control that reaches them directly (none does when they are not
    // branch targets, which a run requires).
    let targets: std::collections::HashSet<u64> = sites
        .iter()
        .filter_map(|s| s.inst.branch_target(s.address))
        .collect();
    let mut i = 0;
    let mut groups = Vec::new();
    while i < plans.len() {
        let head = &plans[i].0;
        let mut group = vec![head.inst];
        let mut end = head.address + head.inst.len() as u64;
        let mut j = i + 1;
        if head.inst.mnemonic().starts_with("ds_read_b64_tr_") {
            while j < plans.len() {
                let n = &plans[j].0;
                if n.address != end
                    || targets.contains(&n.address)
                    || !rewrite::read_tr_joins(&group, &n.inst)
                {
                    break;
                }
                group.push(n.inst);
                end += n.inst.len() as u64;
                j += 1;
            }
        }
        if group.len() > 1 {
            groups.push((i, group, end));
        }
        i = j;
    }
    let grouped: std::collections::HashMap<usize, (Vec<Inst>, u64)> =
        groups.into_iter().map(|(i, g, e)| (i, (g, e))).collect();
    // Temporaries: per rewrite (or run of transposing loads), a block of
    // VGPRs free there (`temps.rs`), else VGPRs above the largest ArchVGPR
    // count of any kernel, for which the descriptors grow.
    let base = co
        .kernels()
        .iter()
        .map(|k| k.descriptor.accum_offset())
        .max()
        .unwrap_or(0);
    let free = temps::Temps::of(&co);
    let mut temps_needed = 0u32;
    // The first rewrite that found no free block, for the error below.
    let mut first_fallback: Option<Site> = None;
    let mut bases: Vec<u32> = Vec::with_capacity(plans.len());
    for (idx, (s, plan)) in plans.iter().enumerate() {
        let addresses: Vec<u64> = match grouped.get(&idx) {
            Some((group, _)) => {
                let mut a = s.address;
                group
                    .iter()
                    .map(|i| {
                        let here = a;
                        a += i.len() as u64;
                        here
                    })
                    .collect()
            }
            None => vec![s.address],
        };
        match free.free_block(&addresses, plan.temps) {
            Some(b) => {
                report.temps_in_free_vgprs += 1;
                bases.push(b);
            }
            None => {
                temps_needed = temps_needed.max(plan.temps);
                first_fallback.get_or_insert(*s);
                bases.push(base);
            }
        }
    }
    let mut descriptors: Vec<(u64, KernelDescriptor)> = Vec::new();
    if temps_needed > 0 {
        if base + temps_needed > 256 {
            let func = first_fallback.and_then(|s| co.function_at(s.address));
            return Err(DbtError {
                tool: "dbt",

                kernel: func.map(|f| f.name.clone()),
                pc: first_fallback.zip(func).map(|(s, f)| s.address - f.address),
                address: first_fallback.map(|s| s.address),
                instruction: first_fallback.map(|s| s.inst.to_string()),
                message: format!(
                    "the rewrite needs {temps_needed} temporary VGPRs: no block of them is free \
                     here (register liveness), and above the kernels' ArchVGPRs (v0..v{}) they \
                     would pass v255",
                    base.saturating_sub(1)
                ),
            });
        }
        report.temp_vgprs = temps_needed;
        for k in co.kernels() {
            let d = k.descriptor;
            let old_total = d.vgpr_count(opts.guest);
            let old_arch = d.accum_offset();
            let agprs = old_total.saturating_sub(old_arch);
            let new_arch = (base + temps_needed).div_ceil(4) * 4;
            let new_total = (new_arch + agprs).div_ceil(8) * 8;
            if new_total > 512 {
                return Err(DbtError {
                    kernel: Some(k.name.clone()),
                    message: format!(
                        "with {temps_needed} temporary VGPRs the kernel needs {new_total} VGPRs, more than the 512 of {}",
                        opts.host.name()
                    ),
                    ..DbtError::new("dbt", "")
                });
            }
            let mut nd = d;
            let r1 = (d.compute_pgm_rsrc1.raw & !0x3f) | (new_total / 8 - 1);
            nd.compute_pgm_rsrc1 = crate::descriptor::PgmRsrc1::from_raw(r1);
            let r3 = (d.compute_pgm_rsrc3.raw & !0x3f) | (new_arch / 4 - 1);
            nd.compute_pgm_rsrc3 = crate::descriptor::PgmRsrc3::from_raw(r3);
            descriptors.push((k.descriptor_address, nd));
            report.kernels.push(KernelReport {
                name: k.name.clone(),
                vgprs: (old_total, new_total),
                arch_vgprs: (old_arch, new_arch),
                lds_bytes: d.group_segment_fixed_size,
            });
        }
    } else {
        for k in co.kernels() {
            let d = k.descriptor;
            report.kernels.push(KernelReport {
                name: k.name.clone(),
                vgprs: (d.vgpr_count(opts.guest), d.vgpr_count(opts.guest)),
                arch_vgprs: (d.accum_offset(), d.accum_offset()),
                lds_bytes: d.group_segment_fixed_size,
            });
        }
    }

    let mut out = elfedit::Editor::new(&co);
    out.retarget(&co, opts.host)?;
    for (addr, d) in &descriptors {
        out.write_descriptor(&co, *addr, d)?;
    }
    let mut tramp = elfedit::Trampolines::new(&co);
    for (idx, (s, plan)) in plans.iter().enumerate() {
        if let Some((group, end)) = grouped.get(&idx) {
            let seq = rewrite::read_tr_group(group, bases[idx]);
            tramp
                .add_run(&mut out, s, *end, &seq)
                .map_err(|message| DbtError {
                    tool: "dbt",

                    kernel: co.function_at(s.address).map(|f| f.name.clone()),
                    pc: co.function_at(s.address).map(|f| s.address - f.address),
                    address: Some(s.address),
                    instruction: Some(s.inst.to_string()),
                    message,
                })?;
            continue;
        }
        let seq = plan.emit(bases[idx]);
        tramp.add(&mut out, s, &seq).map_err(|message| {
            let func = co.function_at(s.address);
            DbtError {
                tool: "dbt",

                kernel: func.map(|f| f.name.clone()),
                pc: func.map(|f| s.address - f.address),
                address: Some(s.address),
                instruction: Some(s.inst.to_string()),
                message,
            }
        })?;
    }
    report.trampoline_bytes = tramp.len();
    let elf = out.finish(tramp, &co)?;
    Ok(Translation { elf, report })
}

/// Decodes every executable section linearly with the guest decoder. An
/// undecodable word inside a function is an error; outside (padding between
/// functions) it is skipped.
fn decode_sections(co: &CodeObject, opts: &Options) -> Result<Vec<Site>, DbtError> {
    let elf = co.elf();
    let mut sites = Vec::new();
    for s in elf
        .sections
        .iter()
        .filter(|s| s.is_executable() && s.has_file_data())
    {
        let data = co.section_data(s);
        let mut off = 0usize;
        while off < data.len() {
            let address = s.addr + off as u64;
            match rocjitsu_isa::decode(opts.guest, &data[off..]) {
                Ok(inst) => {
                    sites.push(Site {
                        address,
                        file_offset: s.offset as usize + off,
                        inst,
                    });
                    off += inst.len();
                }
                Err(e) => {
                    if let Some(f) = co.function_at(address) {
                        return Err(DbtError {
                            tool: "dbt",

                            kernel: Some(f.name.clone()),
                            pc: Some(address - f.address),
                            address: Some(address),
                            instruction: None,
                            message: format!("undecodable guest code ({e})"),
                        });
                    }
                    off += 4;
                }
            }
        }
    }
    Ok(sites)
}

#[cfg(test)]
mod tests;

/// How one guest-only instruction kind fares in a code object.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct KindSurvey {
    pub kind: String,
    /// Instructions of this kind that have a rewrite.
    pub translated: usize,
    /// Instructions of this kind that fail closed.
    pub untranslated: usize,
    /// Why the first untranslated one fails.
    pub reason: String,
}

/// Every guest-only instruction kind of a code object and whether each
/// instance has a rewrite, without stopping at the first failure (the
/// coverage figure; [`translate`] itself fails closed on the first).
pub fn survey(elf: &[u8], opts: &Options) -> Result<Vec<KindSurvey>, DbtError> {
    let co = CodeObject::parse("input", elf.to_vec())
        .map_err(|e| DbtError::new("dbt", format!("cannot read the code object: {e}")))?;
    if co.target() != opts.guest {
        return Err(DbtError::new(
            "dbt",
            format!(
                "the code object is for {}, not the guest {}",
                co.target_id(),
                opts.guest.name()
            ),
        ));
    }
    let sites = decode_sections(&co, opts)?;
    let mode = rewrite::ModeFacts::of(&co, &sites);
    let mut kinds: BTreeMap<String, KindSurvey> = BTreeMap::new();
    for s in &sites {
        if classify(&s.inst, opts.host) == Class::Same {
            continue;
        }
        let kind = kind_of(&s.inst);
        let e = kinds.entry(kind.clone()).or_insert_with(|| KindSurvey {
            kind,
            ..KindSurvey::default()
        });
        match rewrite::plan(&s.inst, &mode) {
            Ok(_) => e.translated += 1,
            Err(why) => {
                if e.untranslated == 0 {
                    e.reason = why;
                }
                e.untranslated += 1;
            }
        }
    }
    Ok(kinds.into_values().collect())
}

/// The host sequence for one guest instruction (its bytes at the start of
/// `guest`), with temporaries from `v{temp_base}` up, assuming kernels that
/// start in round-to-nearest-even with f32 denormals kept and never write
/// MODE (what compilers emit): the rewrite that [`translate`] places in a
/// trampoline. `Ok(None)` when the instruction is the same on the host.
/// For tests that run both on the VM.
pub fn rewrite_one(
    guest: &[u8],
    opts: &Options,
    temp_base: u32,
) -> Result<Option<(Inst, Vec<u8>)>, String> {
    let inst = rocjitsu_isa::decode(opts.guest, guest).map_err(|e| e.to_string())?;
    if classify(&inst, opts.host) == Class::Same {
        return Ok(None);
    }
    let mode = rewrite::ModeFacts {
        rne: true,
        f32_denorms: Some(true),
        mode_written: false,
    };
    let plan = rewrite::plan(&inst, &mode)?;
    Ok(Some((inst, plan.emit(temp_base).bytes())))
}

/// The one-trampoline sequence [`translate`] emits for a run of
/// consecutive transposing LDS loads (`guest` holds exactly the run), with
/// temporaries from `v{temp_base}`. For tests that run it on the VM.
pub fn rewrite_tr_run(guest: &[u8], opts: &Options, temp_base: u32) -> Result<Vec<u8>, String> {
    let mut insts: Vec<Inst> = Vec::new();
    for line in rocjitsu_isa::disassemble(opts.guest, guest) {
        let inst = line.inst.ok_or("undecodable guest bytes")?;
        if !inst.mnemonic().starts_with("ds_read_b64_tr_")
            || (!insts.is_empty() && !rewrite::read_tr_joins(&insts, &inst))
        {
            return Err(format!("`{inst}` does not join the run"));
        }
        insts.push(inst);
    }
    Ok(rewrite::read_tr_group(&insts, temp_base).bytes())
}
