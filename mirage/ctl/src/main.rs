//! `mirage`: profiles, topologies, agents, sessions and executions of
//! emulated AMD GPU machines (see `mirage --help`).

mod cleanup;
mod image;
mod objects;
mod sessions;
mod term;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

// The backends register themselves (inventory); naming each crate here
// links it into the binary.
use mirage_backend_hotswap as _;
use mirage_backend_noop as _;
use mirage_backend_rocjitsu as _;
use mirage_backend_rocjitsu_dbt as _;

#[derive(Parser)]
#[command(
    name = "mirage",
    version,
    about = "Emulated AMD GPU machines for unmodified ROCm programs: profiles, sessions, multi-node runs, containers",
    long_about = "mirage runs unmodified ROCm programs on emulated AMD GPUs (rocjitsu), as managed sessions.\n\n\
An agent is a GPU model (MI210, MI300X, MI355X builtin), a topology is nodes x GPUs of one agent, a profile is a \
backend + topology + where executions run (the host, a sysroot, a container image) + plugins, and a session is a \
booted profile, alive until stopped.\n\n\
Files: profiles, topologies and agents are JSON files under $MIRAGE_HOME (default $XDG_CONFIG_HOME/mirage); \
sessions live under $MIRAGE_RUNTIME_DIR (default $XDG_RUNTIME_DIR/mirage or /tmp/mirage-<uid>)."
)]
struct Cli {
    /// More log output on stderr (-v info, -vv debug, -vvv trace; MIRAGE_LOG takes a filter)
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Print JSON instead of text
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

/// What may change in a profile for one session.
#[derive(Args, Clone, Default)]
pub struct ProfileArgs {
    /// The profile (default: $MIRAGE_PROFILE, else mi210)
    #[arg(short, long)]
    profile: Option<String>,
    /// Nodes of the virtual cluster (overrides the topology)
    #[arg(long, value_name = "N")]
    num_nodes: Option<u32>,
    /// GPUs per node (overrides the topology)
    #[arg(long, value_name = "G")]
    gpus_per_node: Option<u32>,
    /// Another backend (see `mirage emulators`)
    #[arg(long, value_name = "KIND")]
    backend: Option<String>,
    /// Run in containers of this image (one per node)
    #[arg(long, value_name = "IMAGE", conflicts_with_all = ["sysroot", "host"])]
    image: Option<String>,
    /// Run in this root file system (chroot)
    #[arg(long, value_name = "DIR", conflicts_with = "host")]
    sysroot: Option<PathBuf>,
    /// Run on the host (drop the profile's image or sysroot)
    #[arg(long)]
    host: bool,
    /// Make a host path visible: HOST:GUEST[:ro] (repeatable)
    #[arg(long = "mount", value_name = "H:C[:ro]")]
    mounts: Vec<String>,
    /// Set a variable in every execution: KEY=VALUE (repeatable)
    #[arg(short, long = "env", value_name = "K=V")]
    env: Vec<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Boot a session, run a command on it (ranks on every node), tear it down; exits with the command's status
    Run {
        #[command(flatten)]
        profile: ProfileArgs,
        /// Processes (ranks) per node; each gets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, NCCL_HOSTID
        #[arg(long, value_name = "R", default_value_t = 1)]
        nproc_per_node: u32,
        /// The session's id (default: a random one)
        #[arg(long)]
        id: Option<String>,
        /// The command and its arguments
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Profiles: backend + topology + image or sysroot + plugins
    #[command(subcommand)]
    Profile(objects::ProfileCmd),
    /// Topologies: nodes x GPUs of one agent, and their links
    #[command(subcommand)]
    Topology(objects::TopologyCmd),
    /// Agents: GPU models
    #[command(subcommand)]
    Agent(objects::AgentCmd),
    /// Sessions: booted profiles, alive until stopped
    #[command(subcommand)]
    Session(sessions::SessionCmd),
    /// Run a command in a running session
    Exec(sessions::ExecArgs),
    /// Find and remove what killed sessions left behind (processes, containers, networks, directories)
    Cleanup {
        /// Only report what would be removed
        #[arg(long)]
        dry_run: bool,
    },
    /// List the emulator backends and whether each is usable here
    Emulators,
    /// Container images for profiles
    #[command(subcommand)]
    Image(image::ImageCmd),
    /// Serve the REST/WebSocket API and the dashboard (loopback; every request needs the token)
    Serve {
        /// Address and port to listen on (port 0: any free one)
        #[arg(long, default_value = "127.0.0.1:8470", value_name = "ADDR:PORT")]
        listen: std::net::SocketAddr,
        /// Where to write the token, mode 0600, in a directory only you can write (default: $MIRAGE_RUNTIME_DIR/serve.token)
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
    },
    /// The session supervisor (started by `mirage session start`)
    #[command(hide = true)]
    Supervise(sessions::SuperviseArgs),
}

fn init_logs(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var("MIRAGE_LOG") {
        Ok(f) if !f.is_empty() => EnvFilter::new(f),
        _ => EnvFilter::new(match verbose {
            0 => "warn",
            1 => "info",
            2 => "debug",
            _ => "trace",
        }),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}

pub struct Ctx {
    pub json: bool,
    pub verbose: u8,
    pub paths: mirage_core::Paths,
    pub catalog: mirage_core::Catalog,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Supervise(a) = cli.command {
        // The supervisor logs at info unless told otherwise: its log is
        // what `mirage session logs` shows.
        init_logs(cli.verbose.max(1));
        return sessions::supervise(a);
    }
    init_logs(cli.verbose);
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mirage: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let paths = mirage_core::Paths::from_env()?;
    let catalog = mirage_core::Catalog::new(paths.home.clone(), mirage_builtin::builtins());
    let ctx = Ctx {
        json: cli.json,
        verbose: cli.verbose,
        paths,
        catalog,
    };
    if matches!(
        cli.command,
        Command::Run { .. }
            | Command::Session(_)
            | Command::Exec(_)
            | Command::Cleanup { .. }
            | Command::Serve { .. }
    ) {
        // Sessions are read (and their processes signalled) from there:
        // a runtime directory another user could write is refused first.
        ctx.paths.check_runtime()?;
    }
    match cli.command {
        Command::Run {
            profile,
            nproc_per_node,
            id,
            command,
        } => sessions::run(&ctx, &profile, nproc_per_node, id, command),
        Command::Profile(c) => objects::profile(&ctx, c),
        Command::Topology(c) => objects::topology(&ctx, c),
        Command::Agent(c) => objects::agent(&ctx, c),
        Command::Session(c) => sessions::session(&ctx, c),
        Command::Exec(a) => sessions::exec(&ctx, a),
        Command::Cleanup { dry_run } => cleanup::command(&ctx, dry_run),
        Command::Emulators => objects::emulators(&ctx),
        Command::Image(c) => image::command(&ctx, c),
        Command::Serve { listen, token_file } => serve(&ctx, listen, token_file),
        Command::Supervise(_) => unreachable!("handled in main"),
    }
}

/// Prints a value as pretty JSON.
pub fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

/// Prints rows as aligned columns under a header.
pub fn print_table(header: &[&str], rows: &[Vec<String>]) {
    let mut w: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < w.len() {
                w[i] = w[i].max(c.chars().count());
            }
        }
    }
    let line = |cells: Vec<String>| {
        let n = cells.len();
        let mut s = String::new();
        for (i, c) in cells.into_iter().enumerate() {
            if i + 1 == n {
                s.push_str(&c);
            } else {
                s.push_str(&format!("{c:<width$}  ", width = w[i]));
            }
        }
        println!("{}", s.trim_end());
    };
    line(header.iter().map(|h| h.to_string()).collect());
    for r in rows {
        line(r.clone());
    }
}

fn serve(ctx: &Ctx, listen: std::net::SocketAddr, token_file: Option<PathBuf>) -> Result<ExitCode> {
    let token_file = match token_file {
        Some(f) => f,
        None => {
            ctx.paths.ensure_sessions()?;
            ctx.paths.runtime.join("serve.token")
        }
    };
    if !listen.ip().is_loopback() {
        eprintln!(
            "mirage: warning: listening on {listen}, beyond this machine: anyone who can reach it and has the token controls your sessions"
        );
    }
    let exe = std::env::current_exe()?;
    let dashboard = mirage_daemon::assets::embedded();
    mirage_daemon::serve(
        mirage_daemon::Options {
            listen,
            token_file: token_file.clone(),
            exe,
        },
        |url| {
            println!("{url}");
            eprintln!(
                "mirage serve: token in {} (send it as `Authorization: Bearer TOKEN`){}",
                token_file.display(),
                if dashboard {
                    ""
                } else {
                    "; the dashboard is not built into this binary (`make dashboard`)"
                }
            );
            use std::io::Write;
            let _ = std::io::stdout().flush();
        },
    )?;
    Ok(ExitCode::SUCCESS)
}
