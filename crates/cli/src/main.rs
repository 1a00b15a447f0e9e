//! `rocjitsu`: the AMD GPU emulator's command-line tool.

mod disasm;
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
struct Cli {
    #[command(subcommand)]
    command: Command,
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
        Command::Disasm(a) => disasm::run(a),
        Command::RunKernel(a) => run_kernel::run(a),
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
