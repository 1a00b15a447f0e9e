//! `rocjitsu dbt`: dynamic binary translation of code objects.

use anyhow::{Context, Result, bail};
use rocjitsu_code::dbt::{self, Options};
use rocjitsu_code::{Container, elf};
use rocjitsu_isa::Target;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
#[command(
    about = "Translate code objects between GPU targets (gfx950 code to run on gfx942)",
    after_help = "Example:\n  rocjitsu dbt translate --guest gfx950 --host gfx942 kernel.hsaco kernel-gfx942.hsaco --report"
)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Translate a guest code object into a host code object
    #[command(
        after_help = "Every guest instruction that the host lacks or encodes differently is \
rewritten into an equivalent host sequence (trampolines in an appended segment); kernel \
descriptors get the temporary VGPRs. What cannot be translated exactly fails closed: the \
error names the kernel, the PC (byte offset in the kernel) and the instruction, and no output \
is written. IN may be a bare code object, an offload bundle or a HIP executable (its guest \
code object is taken). Exit status: 0 translated, 1 not translated.\n\n\
Examples:\n  rocjitsu dbt translate --guest gfx950 --host gfx942 k.hsaco k942.hsaco --report\n  \
rocjitsu dbt translate k.hsaco k942.hsaco --json        # the report as JSON on stdout"
    )]
    Translate {
        /// The target the code object was compiled for
        #[arg(long, default_value = "gfx950", value_name = "TARGET")]
        guest: String,
        /// The target to translate for
        #[arg(long, default_value = "gfx942", value_name = "TARGET")]
        host: String,
        /// The guest code object
        input: PathBuf,
        /// Where to write the host code object
        output: PathBuf,
        /// Print what was rewritten, per kernel and function, and the translation time
        #[arg(long)]
        report: bool,
        /// Print the report as JSON (with the translation time in microseconds)
        #[arg(long)]
        json: bool,
    },
    /// Count the guest-only instruction kinds of code objects and whether each translates
    #[command(
        after_help = "Prints, over all FILES, each instruction kind the host lacks or encodes differently, how many instances have a rewrite and how many fail closed (with the first reason), and how many code objects translate completely.\n\nExample:\n  rocjitsu dbt coverage build/kernels/gfx950/*.hsaco"
    )]
    Coverage {
        #[arg(long, default_value = "gfx950", value_name = "TARGET")]
        guest: String,
        #[arg(long, default_value = "gfx942", value_name = "TARGET")]
        host: String,
        /// Guest code objects
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
}

fn guest_elf(input: &std::path::Path, guest: Target) -> Result<Vec<u8>> {
    let bytes = std::fs::read(input).with_context(|| format!("reading {}", input.display()))?;
    let name = input.display().to_string();
    if elf::is_elf(&bytes) && rocjitsu_code::CodeObject::parse(&name, bytes.clone()).is_ok() {
        return Ok(bytes);
    }
    let c = Container::parse(&name, &bytes)?;
    Ok(c.select(guest)
        .with_context(|| format!("{name}: no {} code object", guest.name()))?
        .bytes()
        .to_vec())
}

fn coverage(guest: Target, host: Target, files: &[PathBuf], json: bool) -> Result<ExitCode> {
    use std::collections::BTreeMap;
    let opts = Options { guest, host };
    let mut kinds: BTreeMap<String, dbt::KindSurvey> = BTreeMap::new();
    let mut translated = 0;
    for f in files {
        let elf = guest_elf(f, guest)?;
        let s = dbt::survey(&elf, &opts).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
        for k in s {
            let e = kinds
                .entry(k.kind.clone())
                .or_insert_with(|| dbt::KindSurvey {
                    kind: k.kind.clone(),
                    ..Default::default()
                });
            e.translated += k.translated;
            if e.untranslated == 0 && k.untranslated > 0 {
                e.reason = format!("{}: {}", f.display(), k.reason);
            }
            e.untranslated += k.untranslated;
        }
        if dbt::translate(&elf, &opts).is_ok() {
            translated += 1;
        }
    }
    let kinds: Vec<_> = kinds.into_values().collect();
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(
            out,
            "{}",
            serde_json::json!({"objects": files.len(), "objects_translated": translated, "kinds": kinds})
        )?;
    } else {
        let full = kinds.iter().filter(|k| k.untranslated == 0).count();
        writeln!(
            out,
            "{full}/{} guest-only instruction kinds translate; {translated}/{} code objects translate",
            kinds.len(),
            files.len()
        )?;
        for k in &kinds {
            writeln!(
                out,
                "  {:40} {:6} translated {:6} not {}",
                k.kind, k.translated, k.untranslated, k.reason
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(a: Args) -> Result<ExitCode> {
    match a.command {
        Command::Translate {
            guest,
            host,
            input,
            output,
            report,
            json,
        } => {
            let guest: Target = guest.parse().context("--guest")?;
            let host: Target = host.parse().context("--host")?;
            let name = input.display().to_string();
            let elf_bytes = guest_elf(&input, guest)?;
            let t0 = Instant::now();
            let t = match dbt::translate(&elf_bytes, &Options { guest, host }) {
                Ok(t) => t,
                Err(e) => bail!("{name}: {e}"),
            };
            let micros = t0.elapsed().as_secs_f64() * 1e6;
            let mut out = std::io::stdout().lock();
            std::fs::write(&output, &t.elf)
                .with_context(|| format!("writing {}", output.display()))?;
            if json {
                let mut v = serde_json::to_value(&t.report)?;
                v["translate_us"] = serde_json::json!(micros);
                writeln!(out, "{v}")?;
            } else if report {
                write!(out, "{}", t.report)?;
                writeln!(out, "dbt: translated in {:.1} us", micros)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Coverage {
            guest,
            host,
            files,
            json,
        } => coverage(
            guest.parse().context("--guest")?,
            host.parse().context("--host")?,
            &files,
            json,
        ),
    }
}
