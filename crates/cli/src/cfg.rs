//! `rocjitsu cfg`: the control-flow graph of a code object's kernels and
//! functions (blocks, edges, what the graph cannot follow) and, with
//! `--live`, the registers live before each instruction.

use crate::disasm::{code_err, decoded_targets, parse_mcpu};
use anyhow::{Context, Result, bail};
use rocjitsu_code::analysis::liveness::Liveness;
use rocjitsu_code::cfg::{Cfg, listing};
use rocjitsu_code::{CodeObject, Container};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(
    after_help = "Output: per function (kernels, the functions they call, other function \
    symbols) a header line, then each basic block: its address range and predecessors, its \
    instructions (LLVM 22 syntax), and its successors (`-> 0xADDR kind`: fallthrough, jump, \
    taken, not-taken, call, after-call, tail-call) or why it has none (`exit: end-program`, \
    `return`, `unknown-indirect-jump`, `unknown-indirect-call`, `broken`). Calls and jumps \
    through s_setpc_b64/s_swappc_b64 are followed when the target is computed from s_getpc_b64 \
    and constants; the last lines list what the graph does not follow (`incomplete: ...`).\n\n\
    With --live, each instruction is followed by `; live:` and the registers live before it \
    (SGPRs, VCC, M0, EXEC, SCC, VGPRs, AccVGPRs; a vector register write never ends a \
    register's life: lanes outside EXEC keep their value), and each block by what is live \
    after it.\n\n\
    Exit status: 0 when the graph of every listed function is complete, 3 when something is \
    not followed (it is listed), 1 on errors.\n\n\
    Examples:\n  \
    rocjitsu cfg kernel.hsaco\n  \
    rocjitsu cfg --mcpu gfx942 --kernel saxpy --live app.o\n  \
    rocjitsu cfg --json kernel.hsaco | jq .blocks"
)]
pub struct Args {
    /// Code object, clang offload bundle, or executable with a .hip_fatbin section
    file: PathBuf,
    /// Target processor: picks the code object of a bundle (default: every one)
    #[arg(long, value_name = "CPU")]
    mcpu: Option<String>,
    /// Only this kernel or function
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// Show the registers live before each instruction and after each block
    #[arg(long)]
    live: bool,
    /// Print one JSON object per function (blocks, edges, exits, issues; live sets with --live)
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let target = parse_mcpu(a.mcpu.as_deref())?;
    let name = a.file.display().to_string();
    let bytes = std::fs::read(&a.file).with_context(|| format!("cannot read {name}"))?;
    let container = Container::parse(&name, &bytes).map_err(code_err)?;
    let entries: Vec<_> = container
        .code_objects()
        .filter(|e| target.is_none_or(|t| e.id.processor() == t.name()))
        .collect();
    if entries.is_empty() {
        match target {
            Some(t) => bail!(
                "{name}: no code object for --mcpu {}; available targets: {}",
                t.name(),
                container.targets().join(", ")
            ),
            None => bail!(
                "{name}: contains no AMDGPU code object; compile with --offload-arch set to one \
                 of {}",
                decoded_targets()
            ),
        }
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut complete = true;
    let mut found = false;
    let mut names: Vec<String> = Vec::new();
    for e in entries {
        let co = CodeObject::parse(&e.name, e.bytes.clone()).map_err(code_err)?;
        let cfg = Cfg::of(&co).map_err(|err| anyhow::anyhow!("{err}"))?;
        names.extend(cfg.functions.iter().map(|f| f.name.clone()));
        if let Some(k) = &a.kernel
            && cfg.function(k).is_none()
        {
            continue;
        }
        found = true;
        let live = if a.live {
            Some(Liveness::of(&cfg).map_err(|err| anyhow::anyhow!("{}: {err}", e.name))?)
        } else {
            None
        };
        complete &= match a.kernel.as_deref().and_then(|k| cfg.function(k)) {
            Some(f) => cfg
                .issues_in(cfg.function_at(f.entry).unwrap_or(0))
                .is_empty(),
            None => cfg.is_complete(),
        };
        if a.json {
            for v in json(&co, &cfg, live.as_ref(), a.kernel.as_deref()) {
                writeln!(out, "{v}")?;
            }
        } else {
            writeln!(out, "; {} ({})", e.name, co.target_id())?;
            let opts = listing::Options {
                only: a.kernel.as_deref(),
                liveness: live.as_ref(),
            };
            out.write_all(listing::listing(&cfg, &opts).as_bytes())?;
        }
    }
    out.flush()?;
    if !found && let Some(k) = &a.kernel {
        names.sort();
        names.dedup();
        bail!(
            "{name}: no kernel or function named `{k}`; available: {}",
            names.join(", ")
        );
    }
    Ok(if complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}

/// One JSON object per function of `cfg` (only `only` when given).
fn json(
    co: &CodeObject,
    cfg: &Cfg,
    live: Option<&Liveness>,
    only: Option<&str>,
) -> Vec<serde_json::Value> {
    use serde_json::json;
    let family = cfg.target.family();
    cfg.functions
        .iter()
        .enumerate()
        .filter(|(_, f)| only.is_none_or(|o| o == f.name))
        .map(|(fi, f)| {
            let issues: Vec<String> = cfg.issues_in(fi).iter().map(|i| i.to_string()).collect();
            let blocks: Vec<serde_json::Value> = f
                .blocks
                .iter()
                .map(|&b| {
                    let blk = &cfg.blocks[b];
                    let insts: Vec<serde_json::Value> = blk
                        .insts
                        .clone()
                        .map(|k| {
                            let s = &cfg.sites[k];
                            let mut v = json!({ "address": s.address, "text": s.inst.to_string() });
                            if let Some(l) = live {
                                v["live_in"] = l.live_in[k].names(family).into();
                            }
                            v
                        })
                        .collect();
                    let succs: Vec<serde_json::Value> = blk
                        .succs
                        .iter()
                        .map(|e| json!({ "to": cfg.blocks[e.to].start, "kind": e.kind.name() }))
                        .collect();
                    let mut v = json!({
                        "start": blk.start,
                        "end": blk.end,
                        "preds": blk.preds.iter().map(|&p| cfg.blocks[p].start).collect::<Vec<_>>(),
                        "insts": insts,
                        "succs": succs,
                        "exit": blk.exit.map(|x| x.name()),
                    });
                    if let Some(l) = live {
                        v["live_out"] = l.live_out[blk.insts.end - 1].names(family).into();
                    }
                    v
                })
                .collect();
            json!({
                "target": co.target_id(),
                "function": f.name,
                "kernel": f.is_kernel,
                "entry": f.entry,
                "complete": issues.is_empty(),
                "issues": issues,
                "blocks": blocks,
            })
        })
        .collect()
}
