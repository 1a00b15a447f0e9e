//! `rocjitsu`: the AMD GPU emulator's command-line tool.

mod disasm;
mod launch;
mod objdump;
mod run_kernel;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "rocjitsu",
    version,
    about = "AMD GPU emulator: run and inspect AMDGPU code without an AMD GPU",
    long_about = "rocjitsu emulates AMD Instinct GPUs (gfx90a MI210, gfx942 MI300X, gfx950 MI355X).\n\
                  Logging: set ROCJITSU_LOG (or RUST_LOG), e.g. ROCJITSU_LOG=debug."
)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Run a ROCm program on an emulated GPU:\n  rocjitsu --config configs/gfx90a_cdna2_kmd.json -- rocminfo\n  rocjitsu --config configs/gfx90a_cdna2_kmd.json --watchdog 60 -- ./my_hip_app arg1"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// GPU configuration (JSON) of the emulated system, e.g. configs/gfx942_cdna3_kmd.json.
    #[arg(long, value_name = "CONFIG")]
    config: Option<std::path::PathBuf>,
    /// Host threads that execute kernels (default: one per core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Stop a kernel that runs longer than SECS and report a GPU hang (default: no limit).
    #[arg(long, value_name = "SECS")]
    watchdog: Option<u64>,
    /// Log filter for the emulator inside the program (e.g. debug, kmd=trace); also ROCJITSU_LOG.
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,
    /// The program to run and its arguments, after `--`.
    #[arg(last = true, value_name = "APP")]
    app: Vec<std::ffi::OsString>,
}

#[derive(Subcommand)]
enum Command {
    /// Disassemble a code object, offload bundle or HIP executable (or hex bytes from stdin)
    Disasm(disasm::Args),
    /// Run one kernel of a code object on an emulated GPU (buffers from files, scalars from the command line)
    RunKernel(run_kernel::Args),
}

fn init_logging() {
    let filter = std::env::var("ROCJITSU_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .try_init();
}

fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse();
    let r = match cli.command {
        Some(Command::Disasm(a)) => disasm::run(a),
        Some(Command::RunKernel(a)) => run_kernel::run(a),
        None => match cli.config {
            Some(config) => launch::run(launch::Launch {
                config,
                threads: cli.threads,
                watchdog: cli.watchdog,
                log: cli.log,
                app: cli.app,
            }),
            None if cli.app.is_empty() => {
                use clap::CommandFactory;
                let _ = Cli::command().print_help();
                return ExitCode::from(2);
            }
            None => Err(anyhow::anyhow!(
                "--config CONFIG is required to run a program (e.g. --config configs/gfx90a_cdna2_kmd.json)"
            )),
        },
    };
    match r {
        Ok(code) => code,
        // A closed stdout (`rocjitsu disasm k.o | head`) ends the listing quietly.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rocjitsu: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
