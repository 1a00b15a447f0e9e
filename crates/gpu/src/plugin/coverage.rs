//! The `coverage` plugin: which instructions and basic blocks of each
//! kernel executed, and how often (wave-instructions).
//!
//! At exit it writes `coverage-<pid>.txt` (in the plugin directory, else
//! the current directory): per kernel, its listing in `llvm-objdump -d`'s
//! syntax (the same line printer as `rocjitsu disasm`,
//! [`rocjitsu_isa::objdump`]), each line prefixed by its execution count,
//! with a header of instructions and basic blocks executed. Addresses are
//! the code object's, as objdump shows them. With `format=jsonl`,
//! `coverage-<pid>.jsonl` holds one record per kernel instead.
//!
//! The kernel's extent and addresses come from its code object's dynamic
//! symbol (as loaded by the runtime or `run-kernel`); code reached outside
//! it (calls into other functions) is listed after it, executed
//! instructions only.

use super::{
    DispatchEnd, DispatchInfo, DispatchObserver, Format, InstEvent, KernelCode, Observer, Options,
    Output, Plugin, PluginError, SCHEMA, Spec, Wants, lock,
};
use rocjitsu_isa::{Inst, Instruction, Target};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::{Arc, Mutex};

pub const OPTIONS: &str = "format=text|jsonl (text)";

/// One kernel's counts over its dispatches.
struct Totals {
    target: Target,
    entry: u64,
    code: Option<Arc<KernelCode>>,
    dispatches: u64,
    /// Per dword of the kernel's code (index (pc - entry) / 4).
    counts: Vec<u64>,
    /// PCs outside the kernel's code: count and instruction.
    outside: BTreeMap<u64, (u64, Instruction)>,
}

/// A kernel: its name, entry and code object base.
type KernelKey = (String, u64, u64);

/// Execution counts per instruction slot (4-byte offset from the entry)
/// and, by PC, instructions outside the kernel's symbol (count, inst).
type Counts = (Vec<u64>, HashMap<u64, (u64, Instruction)>);

struct Inner {
    format: Format,
    out: Output,
    /// Per (kernel name, entry, code object base), in order of first
    /// dispatch.
    kernels: Mutex<Vec<(KernelKey, Totals)>>,
}

pub struct Coverage {
    inner: Arc<Inner>,
}

fn options(spec: &Spec) -> Result<Format, PluginError> {
    let mut o = Options::new("coverage", OPTIONS, spec);
    let r = o.format()?;
    o.finish().map(|()| r)
}

pub(crate) fn check(spec: &Spec) -> Result<(), PluginError> {
    options(spec).map(|_| ())
}

pub(crate) fn make(spec: &Spec, out: &Output) -> Result<Box<dyn Plugin>, PluginError> {
    let format = options(spec)?;
    Ok(Box::new(Coverage {
        inner: Arc::new(Inner {
            format,
            out: out.clone(),
            kernels: Mutex::new(Vec::new()),
        }),
    }))
}

impl Plugin for Coverage {
    fn name(&self) -> &'static str {
        "coverage"
    }

    fn wants(&self) -> Wants {
        Wants {
            instructions: true,
            memory: false,
            code: true,
        }
    }

    fn dispatch(&self, d: &DispatchInfo) -> Box<dyn DispatchObserver> {
        let n = d.code.as_ref().map_or(0, |c| c.bytes.len().div_ceil(4));
        Box::new(Dispatch {
            info: d.clone(),
            counts: Mutex::new((vec![0; n], HashMap::new())),
            inner: self.inner.clone(),
        })
    }

    fn finish(&self) {
        let i = &self.inner;
        let kernels = lock(&i.kernels);
        if kernels.is_empty() {
            return;
        }
        let ext = i.format.ext();
        let (mut f, path) = match i.out.file("coverage", ext) {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!("{e}");
                return;
            }
        };
        let mut text = String::new();
        for ((name, _, _), t) in kernels.iter() {
            let l = Listing::of(t);
            match i.format {
                Format::Text => text += &l.text(name, t),
                Format::Jsonl => text += &format!("{}\n", l.json(name, t)),
            }
        }
        if let Err(e) = f.write_all(text.as_bytes()) {
            tracing::warn!("coverage plugin: writing {}: {e}", path.display());
        }
        eprintln!(
            "rocjitsu: coverage of {} kernel(s) in {}",
            kernels.len(),
            path.display()
        );
    }
}

struct Dispatch {
    info: DispatchInfo,
    counts: Mutex<Counts>,
    inner: Arc<Inner>,
}

impl DispatchObserver for Dispatch {
    fn worker(&self, _slot: usize) -> Box<dyn Observer + '_> {
        Box::new(Worker {
            d: self,
            entry: self.info.entry,
            counts: vec![0; lock(&self.counts).0.len()],
            outside: HashMap::new(),
        })
    }

    fn end(self: Box<Self>, _end: &DispatchEnd) {
        let (counts, outside) = self.counts.into_inner().unwrap_or_else(|e| e.into_inner());
        let d = &self.info;
        let key = (
            d.kernel.clone(),
            d.entry,
            d.code.as_ref().map_or(0, |c| c.image_base),
        );
        let mut kernels = lock(&self.inner.kernels);
        let t = match kernels.iter().position(|(k, _)| *k == key) {
            Some(i) => &mut kernels[i].1,
            None => {
                kernels.push((
                    key,
                    Totals {
                        target: d.target,
                        entry: d.entry,
                        code: d.code.clone(),
                        dispatches: 0,
                        counts: vec![0; counts.len()],
                        outside: BTreeMap::new(),
                    },
                ));
                &mut kernels.last_mut().expect("just pushed").1
            }
        };
        t.dispatches += 1;
        if t.counts.len() == counts.len() {
            for (a, b) in t.counts.iter_mut().zip(counts) {
                *a += b;
            }
        }
        for (pc, (n, inst)) in outside {
            t.outside.entry(pc).or_insert((0, inst)).0 += n;
        }
    }
}

struct Worker<'a> {
    d: &'a Dispatch,
    entry: u64,
    counts: Vec<u64>,
    outside: HashMap<u64, (u64, Instruction)>,
}

impl Observer for Worker<'_> {
    #[inline]
    fn instruction(&mut self, e: &InstEvent) {
        let off = e.pc.wrapping_sub(self.entry);
        match self.counts.get_mut((off / 4) as usize) {
            Some(c) if off.is_multiple_of(4) => *c += 1,
            _ => self.outside.entry(e.pc).or_insert((0, e.op.inst)).0 += 1,
        }
    }

    fn finish(self: Box<Self>) {
        let mut c = lock(&self.d.counts);
        for (a, b) in c.0.iter_mut().zip(&self.counts) {
            *a += b;
        }
        for (pc, (n, inst)) in self.outside {
            c.1.entry(pc).or_insert((0, inst)).0 += n;
        }
    }
}

/// One listed instruction.
struct Line {
    /// Address as objdump shows it (the code object's).
    addr: u64,
    count: u64,
    text: String,
    /// The objdump line (without a count).
    line: String,
    /// Whether a basic block starts here.
    leader: bool,
}

struct Listing {
    lines: Vec<Line>,
    /// Outside lines (no code object addresses known for them).
    outside: Vec<(u64, u64, String)>,
    label: Option<(u64, String)>,
}

/// Whether a basic block ends after this instruction.
fn ends_block(inst: &Inst) -> bool {
    let n = inst.mnemonic();
    n == "s_endpgm"
        || n == "s_branch"
        || n.starts_with("s_cbranch")
        || n == "s_setpc_b64"
        || n == "s_swappc_b64"
        || n == "s_call_b64"
}

impl Listing {
    fn of(t: &Totals) -> Listing {
        let mut lines = Vec::new();
        let mut label = None;
        if let Some(code) = &t.code {
            let base = t.entry.wrapping_sub(code.image_base);
            label = Some((base, code.symbol.clone()));
            let bytes = &code.bytes;
            let mut targets = std::collections::BTreeSet::new();
            let mut off = 0usize;
            let mut after_end = true;
            while off < bytes.len() {
                let rest = &bytes[off..];
                let decoded = rocjitsu_isa::decode(t.target, rest).ok();
                let size = decoded.as_ref().map_or(rest.len().min(4), |i| i.len());
                let raw = &rest[..size];
                let addr = base + off as u64;
                let text = rocjitsu_isa::objdump::text(decoded.as_ref(), raw);
                let mut note = String::new();
                if let Some(i) = &decoded
                    && let Some(tg) = i.branch_target(addr)
                {
                    targets.insert(tg);
                    if matches!(i.body(), rocjitsu_isa::gfx9::Body::Sopp(_)) {
                        note =
                            rocjitsu_isa::objdump::branch_note(&code.symbol, tg.wrapping_sub(base));
                    }
                }
                let count = if off.is_multiple_of(4) {
                    t.counts.get(off / 4).copied().unwrap_or(0)
                } else {
                    0
                };
                lines.push(Line {
                    addr,
                    count,
                    line: rocjitsu_isa::objdump::line(addr, raw, &text, &note),
                    text,
                    leader: after_end,
                });
                after_end = decoded.as_ref().is_some_and(ends_block);
                off += size.max(1);
            }
            for l in &mut lines {
                if targets.contains(&l.addr) {
                    l.leader = true;
                }
            }
        }
        let outside = t
            .outside
            .iter()
            .map(|(pc, (n, i))| (*pc, *n, i.to_string()))
            .collect();
        Listing {
            lines,
            outside,
            label,
        }
    }

    /// (executed, total) instructions and basic blocks.
    fn figures(&self) -> ((usize, usize), (usize, usize)) {
        let run = self.lines.iter().filter(|l| l.count > 0).count();
        let blocks: Vec<&Line> = self.lines.iter().filter(|l| l.leader).collect();
        let brun = blocks.iter().filter(|l| l.count > 0).count();
        ((run, self.lines.len()), (brun, blocks.len()))
    }

    fn text(&self, name: &str, t: &Totals) -> String {
        let ((run, n), (brun, bn)) = self.figures();
        let pct = |a: usize, b: usize| {
            if b == 0 {
                0.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        let mut s = format!(
            "; coverage: kernel {name} ({} dispatch(es)): {run} of {n} instructions executed ({:.1}%), {brun} of {bn} basic blocks ({:.1}%)\n; count: wave-instructions executed; the rest of each line is llvm-objdump -d's\n",
            t.dispatches,
            pct(run, n),
            pct(brun, bn)
        );
        if let Some((addr, sym)) = &self.label {
            s += &format!("\n{addr:016x} <{sym}>:\n");
        } else {
            s += "; (the kernel's code object could not be read: executed instructions only)\n";
        }
        for l in &self.lines {
            s += &format!("{:>12} {}\n", l.count, l.line);
        }
        if !self.outside.is_empty() {
            s += "; executed outside the kernel's symbol (GPU addresses):\n";
            for (pc, n, text) in &self.outside {
                s += &format!("{n:>12} \t{text:<59}// {pc:012X}\n");
            }
        }
        s + "\n"
    }

    fn json(&self, name: &str, t: &Totals) -> serde_json::Value {
        let ((run, n), (brun, bn)) = self.figures();
        json!({
            "schema": SCHEMA,
            "plugin": "coverage",
            "type": "kernel",
            "pid": std::process::id(),
            "kernel": name,
            "dispatches": t.dispatches,
            "instructions": {"executed": run, "total": n},
            "blocks": {"executed": brun, "total": bn},
            "listing": self.lines.iter().map(|l| json!({
                "address": l.addr, "count": l.count, "text": l.text, "block_start": l.leader,
            })).collect::<Vec<_>>(),
            "outside": self.outside.iter().map(|(pc, c, text)| json!({
                "pc": pc, "count": c, "text": text,
            })).collect::<Vec<_>>(),
        })
    }
}
