//! `rocjitsu dbi`: binary instrumentation of code objects, and reading the
//! probes' buffer back after `run-kernel`.

use anyhow::{Context, Result, bail};
use rocjitsu_code::dbi::{self, Manifest, Tool, memtrace};
use rocjitsu_code::{CodeObject, Container, elf};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(
    about = "Instrument code objects with probes (basic-block counts, memory address traces)",
    after_help = "Example:\n  rocjitsu dbi instrument --tool bbcount k.hsaco k-bb.hsaco --report\n  \
rocjitsu run-kernel k-bb.hsaco --kernel K ... --dbi-out counts.json\n  rocjitsu dbi report counts.json"
)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Insert a tool's probes into a code object
    #[command(after_help = "\
TOOLS:
  bbcount   counts, per basic block of every kernel and function, how many times a wave
            entered it (64-bit counters, one s_atomic_add_x2 per entry)
  memtrace  records, for the chosen global/flat memory instructions (--pc, --mnemonic),
            the address registers of every active lane on every Nth execution (--every)
            of each, up to --records records

Each patch point's instruction is displaced into a trampoline (in a segment appended to
the object) that runs the probes, the instruction and a branch back; original code does
not move. Probes borrow SGPRs (and for memtrace one VGPR) that register liveness shows
dead there, save SCC where it is live, and leave EXEC and VCC alone; kernel descriptors
grow their SGPR count when the borrowed SGPRs lie above it. The probes' buffer follows the
trampolines in the same segment, addressed PC-relative (no relocation); the manifest
(section .rocjitsu.dbi, JSON) says what it holds. `rocjitsu run-kernel --dbi-out FILE`
writes it out after the dispatch, and `rocjitsu dbi report FILE` prints it.

What cannot be instrumented exactly is refused: the error names the kernel, the PC (byte
offset in it), the instruction and why, and nothing is written. GFX9 targets only
(gfx908, gfx90a, gfx942, gfx950). Exit status: 0 instrumented, 1 refused or bad input.

Examples:
  rocjitsu dbi instrument --tool bbcount k.hsaco k-bb.hsaco
  rocjitsu dbi instrument --tool memtrace --mnemonic global_load --every 4 k.hsaco k-mt.hsaco
  rocjitsu dbi instrument --tool memtrace --pc 0x1a2c k.hsaco k-mt.hsaco --json")]
    Instrument {
        /// bbcount or memtrace
        #[arg(long, value_name = "NAME")]
        tool: String,
        /// The code object (bare, an offload bundle or a HIP executable: its first code object)
        input: PathBuf,
        /// Where to write the instrumented code object
        output: PathBuf,
        /// memtrace: trace the instruction at this code object address (hex with 0x), repeatable
        #[arg(long = "pc", value_name = "ADDR")]
        pcs: Vec<String>,
        /// memtrace: trace the global/flat instructions whose mnemonic starts with this, repeatable
        #[arg(long = "mnemonic", value_name = "PREFIX")]
        mnemonics: Vec<String>,
        /// memtrace: record every Nth execution of each traced instruction (a power of two)
        #[arg(long, default_value_t = 1, value_name = "N")]
        every: u32,
        /// memtrace: records in the buffer (later executions are counted, not recorded)
        #[arg(long, default_value_t = 4096, value_name = "N")]
        records: u32,
        /// Print what was inserted
        #[arg(long)]
        report: bool,
        /// Print the report as JSON
        #[arg(long)]
        json: bool,
    },
    /// Print the probes' results that `run-kernel --dbi-out` wrote
    Report {
        /// The JSON file written by `run-kernel --dbi-out`
        file: PathBuf,
    },
}

fn input_elf(input: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(input).with_context(|| format!("reading {}", input.display()))?;
    let name = input.display().to_string();
    if elf::is_elf(&bytes) && CodeObject::parse(&name, bytes.clone()).is_ok() {
        return Ok(bytes);
    }
    let c = Container::parse(&name, &bytes)?;
    let first = c
        .code_objects()
        .next()
        .with_context(|| format!("{name}: no AMDGPU code object inside"))?;
    Ok(first.bytes.clone())
}

fn parse_addr(s: &str) -> Result<u64> {
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    v.with_context(|| format!("--pc {s}: not an address (decimal, or hex with 0x)"))
}

pub fn run(a: Args) -> Result<ExitCode> {
    match a.command {
        Command::Instrument {
            tool,
            input,
            output,
            pcs,
            mnemonics,
            every,
            records,
            report,
            json,
        } => {
            let tool = match tool.as_str() {
                "bbcount" => {
                    if !pcs.is_empty() || !mnemonics.is_empty() {
                        bail!(
                            "--pc and --mnemonic choose memtrace's instructions; bbcount counts every block"
                        );
                    }
                    Tool::BbCount
                }
                "memtrace" => {
                    if pcs.is_empty() && mnemonics.is_empty() {
                        bail!(
                            "memtrace needs the instructions to trace: --pc ADDR or --mnemonic PREFIX (e.g. global_load)"
                        );
                    }
                    if every == 0 || !every.is_power_of_two() {
                        bail!("--every {every}: must be a power of two (1, 2, 4, ...)");
                    }
                    if records == 0 {
                        bail!("--records must be at least 1");
                    }
                    Tool::MemTrace(memtrace::Options {
                        pcs: pcs.iter().map(|p| parse_addr(p)).collect::<Result<_>>()?,
                        mnemonics,
                        every,
                        records,
                    })
                }
                t => bail!("--tool {t}: unknown tool; the tools are bbcount and memtrace"),
            };
            let name = input.display().to_string();
            let bytes = input_elf(&input)?;
            let r = match dbi::instrument(&bytes, &tool) {
                Ok(r) => r,
                Err(e) => bail!("{name}: {e}"),
            };
            std::fs::write(&output, &r.elf)
                .with_context(|| format!("writing {}", output.display()))?;
            let mut out = std::io::stdout().lock();
            if json {
                writeln!(out, "{}", serde_json::to_value(&r.report)?)?;
            } else if report {
                write!(out, "{}", r.report)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Report { file } => {
            let text =
                std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let v: serde_json::Value = serde_json::from_slice(&text)
                .with_context(|| format!("{}: not a run-kernel --dbi-out file", file.display()))?;
            print_report(&v, &mut std::io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The probes' results after a dispatch, from the buffer's bytes (read at
/// the load base plus [`Manifest::buffer`]), as JSON.
pub fn results(m: &Manifest, buf: &[u8]) -> Result<serde_json::Value> {
    let u64_at = |o: usize| -> u64 {
        buf.get(o..o + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    match m.tool.as_str() {
        "bbcount" => {
            let blocks: Vec<serde_json::Value> = m
                .blocks
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    serde_json::json!({
                        "function": b.function, "start": b.start, "end": b.end, "first": b.first,
                        "count": u64_at(8 * i),
                    })
                })
                .collect();
            Ok(serde_json::json!({"tool": "bbcount", "target": m.target, "blocks": blocks}))
        }
        "memtrace" => {
            let l = m
                .memtrace
                .as_ref()
                .context("the memtrace manifest has no layout")?;
            Ok(memtrace::decode(l, buf))
        }
        t => bail!("the manifest names an unknown tool `{t}`"),
    }
}

fn print_report(v: &serde_json::Value, out: &mut impl Write) -> Result<()> {
    match v["tool"].as_str() {
        Some("bbcount") => {
            writeln!(out, "{:>12}  {:<18} function", "count", "block")?;
            for b in v["blocks"].as_array().into_iter().flatten() {
                writeln!(
                    out,
                    "{:>12}  {:<18} {}",
                    b["count"].as_u64().unwrap_or(0),
                    format!(
                        "{:x}-{:x}",
                        b["start"].as_u64().unwrap_or(0),
                        b["end"].as_u64().unwrap_or(0)
                    ),
                    b["function"].as_str().unwrap_or("")
                )?;
            }
        }
        Some("memtrace") => {
            for s in v["sites"].as_array().into_iter().flatten() {
                writeln!(
                    out,
                    "site {} at 0x{:x} `{}`: {} executions",
                    s["index"],
                    s["address"].as_u64().unwrap_or(0),
                    s["instruction"].as_str().unwrap_or(""),
                    s["executions"].as_u64().unwrap_or(0)
                )?;
            }
            let recs = v["records"].as_array().map_or(0, Vec::len);
            writeln!(
                out,
                "{recs} records ({} dropped: the buffer was full)",
                v["dropped"]
            )?;
            for r in v["records"].as_array().into_iter().flatten() {
                let lanes: Vec<String> = r["addresses"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|a| format!("{:x}", a[1].as_u64().unwrap_or(0)))
                    .collect();
                writeln!(
                    out,
                    "  site {} exec {:016x}: {}",
                    r["site"],
                    r["exec"].as_u64().unwrap_or(0),
                    lanes.join(" ")
                )?;
            }
        }
        _ => bail!("not a run-kernel --dbi-out file (no tool named)"),
    }
    Ok(())
}
