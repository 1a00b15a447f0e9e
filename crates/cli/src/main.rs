//! `rocjitsu`: the AMD GPU emulator's command-line tool.

mod cfg;
mod dbi;
mod dbt;
mod disasm;
mod guest;
mod launch;
mod objdump;
mod plugins;
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
    after_help = "Run a ROCm program on an emulated GPU:\n  rocjitsu --config configs/gfx90a_cdna2_kmd.json -- rocminfo\n  rocjitsu --config configs/gfx90a_cdna2_kmd.json --watchdog 60 -- ./my_hip_app arg1\n\n\
See inside the GPU (execution plugins; `rocjitsu plugins` lists them):\n  rocjitsu --config configs/gfx942_cdna3_kmd.json --plugin metrics -- ./my_hip_app                 (a summary table on stderr at exit)\n  rocjitsu --config configs/gfx942_cdna3_kmd.json --plugin trace --plugin-out out -- ./my_hip_app  (out/trace-<pid>.json for ui.perfetto.dev)\n\n\
Share one emulated GPU between processes (daemon mode):\n  rocjitsu --config configs/gfx942_cdna3_kmd.json --daemon -- torchrun ...   (a daemon for this program and its children)\n  rocjitsu --config configs/gfx942_cdna3_kmd.json --daemon                   (a daemon alone, in the foreground)\n  rocjitsu --attach -- ./my_hip_app                                          (a program on that daemon)\n  rocjitsu daemon-status                                                     (what the daemon holds)\n\n\
DBT guest mode (a gfx950 shown to the program, its kernels translated and run on a gfx942):\n  rocjitsu --config configs/guest_gfx950_on_gfx942.json -- ./app                       (host: the emulated MI300X in the process)\n  rocjitsu --config configs/guest_gfx950_on_gfx942_hardware.json --socket S -- ./app   (host: the daemon at S serving gfx942)\n\n\
A daemon serves every client process (pid) within limits: at most --client-connections connections (default 64; more are refused, EMFILE), at most --client-memory percent of each GPU's VRAM and of the GTT (default 100; past it, ENOMEM); the others go on being served.\n\n\
The daemon's socket: --socket, else $ROCJITSU_RUNTIME_DIR/daemon.sock, else $XDG_RUNTIME_DIR/rocjitsu/daemon.sock, else /tmp/rocjitsu-<uid>/daemon.sock."
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
    /// Host the GPU in a daemon that the program and the processes it starts share; without a program, run the daemon alone.
    #[arg(long, conflicts_with = "attach")]
    daemon: bool,
    /// Run the program on a daemon that is already running (no --config needed).
    #[arg(long)]
    attach: bool,
    /// The daemon's socket (see below for the default); with a DBT guest configuration of the hardware backend, the daemon that serves the host GPU.
    #[arg(long, value_name = "PATH")]
    socket: Option<std::path::PathBuf>,
    /// With --daemon: connections (each a daemon thread) one client process may have open at once; one more is refused with EMFILE.
    #[arg(long, value_name = "N", default_value_t = rocjitsu_kmd::daemon::DEFAULT_CLIENT_CONNECTIONS, requires = "daemon")]
    client_connections: usize,
    /// With --daemon: the percentage (1-100) of each GPU's VRAM, and of the 16 GiB GTT, that one client process may hold; an allocation past it is refused with ENOMEM.
    #[arg(long, value_name = "PERCENT", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100), requires = "daemon")]
    client_memory: u32,
    /// With --daemon: start from a checkpoint (`rocjitsu daemon-checkpoint`) of a daemon of the same configuration; its processes reconnect (they wait ROCJITSU_DAEMON_RECONNECT seconds for it). A corrupt or mismatched file is refused and nothing starts.
    #[arg(long, value_name = "FILE", requires = "daemon")]
    restore: Option<std::path::PathBuf>,
    /// DBT guest mode without the HSA tools library (librocjitsu_hooks.so): a diagnostic in which the program sees the host and the guest GPU as two agents and no kernel is translated.
    #[arg(long)]
    no_dbt_hooks: bool,
    #[command(flatten)]
    plugins: plugins::PluginArgs,
    /// The program to run and its arguments, after `--`.
    #[arg(last = true, value_name = "APP")]
    app: Vec<std::ffi::OsString>,
}

#[derive(Subcommand)]
// One command is parsed per process: the size of the largest (run-kernel's
// options) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Disassemble a code object, offload bundle or HIP executable (or hex bytes from stdin)
    Disasm(disasm::Args),
    /// Show the control-flow graph of a code object's kernels and functions (blocks, edges; registers live before each instruction with --live)
    Cfg(cfg::Args),
    /// Run one kernel of a code object on an emulated GPU (buffers from files, scalars from the command line)
    RunKernel(run_kernel::Args),
    /// Translate code objects between targets (gfx950 code for gfx942)
    Dbt(dbt::Args),
    /// Instrument code objects with probes (bbcount: basic-block counts; memtrace: global memory addresses)
    Dbi(dbi::Args),
    /// List the execution plugins (--plugin NAME[:key=value,...]), one per line
    Plugins,
    /// Print what a running daemon holds (clients, connections, allocations, queues, VRAM in use) as JSON
    DaemonStatus {
        /// The daemon's socket (default: as for --attach).
        #[arg(long, value_name = "PATH")]
        socket: Option<std::path::PathBuf>,
    },
    /// Have a running daemon write a checkpoint of its GPU state (memory, queues, events) to FILE and freeze; restore it with `--daemon --restore FILE` (docs/checkpoint.md)
    DaemonCheckpoint {
        /// The daemon's socket (default: as for --attach).
        #[arg(long, value_name = "PATH")]
        socket: Option<std::path::PathBuf>,
        /// The checkpoint file to write.
        #[arg(long, value_name = "FILE")]
        out: std::path::PathBuf,
    },
}

fn attach_socket(socket: Option<std::path::PathBuf>) -> std::path::PathBuf {
    launch::attach_socket(&launch::Launch {
        mode: launch::Mode::Attach,
        config: None,
        socket,
        threads: None,
        watchdog: None,
        log: None,
        no_dbt_hooks: false,
        limits: Default::default(),
        restore: None,
        plugins: Default::default(),
        app: vec![],
    })
}

fn daemon_checkpoint(
    socket: Option<std::path::PathBuf>,
    out: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    let s = attach_socket(socket);
    let json = rocjitsu_kmd::daemon::request_checkpoint(&s, out).map_err(anyhow::Error::msg)?;
    println!("{json}");
    Ok(ExitCode::SUCCESS)
}

fn daemon_status(socket: Option<std::path::PathBuf>) -> anyhow::Result<ExitCode> {
    let s = attach_socket(socket);
    let json = rocjitsu_kmd::daemon::query_status(&s).map_err(anyhow::Error::msg)?;
    println!("{json}");
    Ok(ExitCode::SUCCESS)
}

fn init_logging() {
    let filter = std::env::var(rocjitsu_config::env::LOG)
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
        Some(Command::Cfg(a)) => cfg::run(a),
        Some(Command::RunKernel(a)) => run_kernel::run(a),
        Some(Command::Dbt(a)) => dbt::run(a),
        Some(Command::Dbi(a)) => dbi::run(a),
        Some(Command::DaemonStatus { socket }) => daemon_status(socket),
        Some(Command::DaemonCheckpoint { socket, out }) => daemon_checkpoint(socket, &out),
        Some(Command::Plugins) => plugins::list(),
        None if cli.config.is_none() && cli.app.is_empty() && !cli.daemon && !cli.attach => {
            use clap::CommandFactory;
            let _ = Cli::command().print_help();
            return ExitCode::from(2);
        }
        None => launch::run(launch::Launch {
            mode: if cli.daemon {
                launch::Mode::Daemon
            } else if cli.attach {
                launch::Mode::Attach
            } else {
                launch::Mode::Local
            },
            config: cli.config,
            socket: cli.socket,
            threads: cli.threads,
            watchdog: cli.watchdog,
            log: cli.log,
            no_dbt_hooks: cli.no_dbt_hooks,
            limits: rocjitsu_kmd::daemon::ClientLimits {
                connections: cli.client_connections,
                memory_percent: cli.client_memory,
            },
            restore: cli.restore,
            plugins: cli.plugins,
            app: cli.app,
        }),
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
