//! `rocjitsu dbt`: dynamic binary translation of code objects.

use anyhow::{Context, Result, bail};
use rocjitsu_code::dbt::{self, Options};
use rocjitsu_code::{Container, elf};
use rocjitsu_isa::Target;
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
            let bytes =
                std::fs::read(&input).with_context(|| format!("reading {}", input.display()))?;
            let name = input.display().to_string();
            let elf_bytes = if elf::is_elf(&bytes)
                && rocjitsu_code::CodeObject::parse(&name, bytes.clone()).is_ok()
            {
                bytes
            } else {
                let c = Container::parse(&name, &bytes)?;
                c.select(guest)
                    .with_context(|| format!("{name}: no {} code object", guest.name()))?
                    .bytes()
                    .to_vec()
            };
            let t0 = Instant::now();
            let t = match dbt::translate(&elf_bytes, &Options { guest, host }) {
                Ok(t) => t,
                Err(e) => bail!("{name}: {e}"),
            };
            let micros = t0.elapsed().as_secs_f64() * 1e6;
            std::fs::write(&output, &t.elf)
                .with_context(|| format!("writing {}", output.display()))?;
            if json {
                let mut v = serde_json::to_value(&t.report)?;
                v["translate_us"] = serde_json::json!(micros);
                println!("{v}");
            } else if report {
                print!("{}", t.report);
                println!("dbt: translated in {:.1} us", micros);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
