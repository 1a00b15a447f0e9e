//! `rocjitsu --config CONFIG [--daemon|--attach] -- APP [ARGS...]`: runs
//! an unmodified ROCm program on emulated GPUs. The launcher checks the
//! configuration, then replaces itself with the program, with
//! `librocjitsu.so` preloaded and a fake `lsmod` (bookworm's rocminfo asks
//! it whether the amdgpu module is loaded) first in PATH.
//!
//! - local mode (default): the GPU lives inside the program;
//! - `--daemon`: a daemon process hosts the GPU and the program, and every
//!   process it starts, share it; without a program, the daemon alone runs
//!   in the foreground;
//! - `--attach`: the program uses a daemon that is already running.

use anyhow::{Context, Result, bail};
use rocjitsu_config::GpuConfig;
use rocjitsu_kmd::DriverOptions;
use rocjitsu_kmd::daemon::{Daemon, DaemonOptions};
use rocjitsu_kmd::launch::{Emulator, Gpus, in_front};
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Local,
    Daemon,
    Attach,
}

/// What the launcher was asked to do.
pub struct Launch {
    pub mode: Mode,
    pub config: Option<PathBuf>,
    pub socket: Option<PathBuf>,
    pub threads: Option<usize>,
    pub watchdog: Option<u64>,
    pub log: Option<String>,
    /// Guest mode without the HSA tools library (a diagnostic).
    pub no_dbt_hooks: bool,
    /// What one client process of a daemon this launcher starts may hold.
    pub limits: rocjitsu_kmd::daemon::ClientLimits,
    /// A daemon this launcher starts begins from this checkpoint.
    pub restore: Option<PathBuf>,
    /// Execution plugins: for the program (local mode) or the daemon.
    pub plugins: crate::plugins::PluginArgs,
    pub app: Vec<OsString>,
}

/// The preload library: `$ROCJITSU_PRELOAD`, or `librocjitsu.so` beside
/// this executable (where cargo puts both).
fn preload_library() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(rocjitsu_config::env::PRELOAD) {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!(
                "ROCJITSU_PRELOAD names {}, which does not exist",
                p.display()
            );
        }
        return Ok(p);
    }
    let exe = std::env::current_exe().context("cannot find the rocjitsu executable")?;
    let lib = exe.with_file_name("librocjitsu.so");
    if !lib.is_file() {
        bail!(
            "{} is missing: build it with `cargo build --release -p rocjitsu-preload` (or `make build`), or set ROCJITSU_PRELOAD",
            lib.display()
        );
    }
    Ok(lib)
}

/// The runtime directory, checked (or created 0700), and in it a `bin/`
/// holding an `lsmod` that reports the amdgpu module.
fn lsmod_shim() -> Result<(PathBuf, PathBuf)> {
    let dir = rocjitsu_kmd::private_runtime_dir().map_err(anyhow::Error::msg)?;
    let bin = rocjitsu_kmd::write_lsmod_shim(&dir)
        .with_context(|| format!("cannot write the lsmod shim under {}", dir.path().display()))?;
    Ok((dir.path().to_path_buf(), bin))
}

/// The loaded configuration and its canonical path.
pub(crate) fn load_config(path: &Path) -> Result<(GpuConfig, PathBuf)> {
    let cfg = GpuConfig::load(path)?;
    let canon = std::fs::canonicalize(path)
        .with_context(|| format!("cannot resolve {}", path.display()))?;
    tracing::info!(
        "{} GPU(s) from {}: {}",
        cfg.gpus.len(),
        canon.display(),
        cfg.gpus
            .iter()
            .map(|g| format!("{} ({})", g.marketing_name, g.gfx_target.name()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok((cfg, canon))
}

fn driver_options(l: &Launch, config: GpuConfig) -> DriverOptions {
    DriverOptions {
        config,
        runtime_dir: rocjitsu_kmd::runtime_dir(),
        threads: l.threads.unwrap_or(0),
        watchdog: l
            .watchdog
            .filter(|&s| s > 0)
            .map(std::time::Duration::from_secs),
    }
}

/// Passes `--plugin` and `--plugin-out` on as `ROCJITSU_PLUGINS` and
/// `ROCJITSU_PLUGIN_OUT`, which the emulator reads where the GPU lives: in
/// the program (local mode, and the programs it starts) or in the daemon
/// (forked from this process).
fn plugin_env(l: &Launch) -> Result<()> {
    let p = &l.plugins;
    if p.plugin.is_empty() && p.plugin_out.is_none() {
        return Ok(());
    }
    if l.mode == Mode::Attach {
        bail!(
            "--plugin and --plugin-out do not apply with --attach: plugins run where the GPU is, in the daemon; start it with them (`rocjitsu --config CONFIG --daemon --plugin NAME`)"
        );
    }
    p.specs()?;
    let mut list: Vec<String> = std::env::var(rocjitsu_config::env::PLUGINS)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .into_iter()
        .collect();
    list.extend(p.plugin.iter().cloned());
    let out = match &p.plugin_out {
        Some(d) => {
            std::fs::create_dir_all(d)
                .with_context(|| format!("--plugin-out {}: cannot create it", d.display()))?;
            Some(
                std::fs::canonicalize(d)
                    .with_context(|| format!("--plugin-out {}", d.display()))?,
            )
        }
        None => None,
    };
    // SAFETY: the launcher is single-threaded until it forks the daemon or
    // execs the program, so nothing reads the environment concurrently.
    unsafe {
        std::env::set_var(rocjitsu_config::env::PLUGINS, list.join(";"));
        if let Some(d) = out {
            std::env::set_var(rocjitsu_config::env::PLUGIN_OUT, d);
        }
    }
    Ok(())
}

pub fn run(l: Launch) -> Result<ExitCode> {
    plugin_env(&l)?;
    if l.mode != Mode::Local
        && let Some(c) = &l.config
    {
        let (cfg, _) = load_config(c)?;
        if cfg.guest().is_some() {
            bail!(
                "{} is a DBT guest configuration (dbt_guest.enabled): guest mode runs the program locally only, so --daemon and --attach do not apply; run `rocjitsu --config {} -- APP` (for the hardware backend, serve the host GPU with `rocjitsu --config configs/gfx942_cdna3_kmd.json --daemon` and pass its --socket)",
                c.display(),
                c.display()
            );
        }
    }
    match (l.mode, l.app.is_empty()) {
        (Mode::Daemon, true) => return serve_foreground(&l),
        (_, true) => bail!(
            "no program to run: give one after `--`, e.g. `rocjitsu --config configs/gfx90a_cdna2_kmd.json -- rocminfo`"
        ),
        _ => {}
    }
    let lib = preload_library()?;
    let (dir, bin) = lsmod_shim()?;
    let (app, args) = l.app.split_first().expect("checked above");
    let mut cmd = std::process::Command::new(app);
    cmd.args(args)
        .env("LD_PRELOAD", in_front(&lib, std::env::var_os("LD_PRELOAD")))
        .env("PATH", in_front(&bin, std::env::var_os("PATH")));
    let (config, socket);
    let gpus = match l.mode {
        Mode::Local => {
            let Some(cfg_path) = &l.config else {
                bail!(
                    "--config CONFIG is required to run a program (e.g. --config configs/gfx90a_cdna2_kmd.json)"
                );
            };
            let cfg;
            (cfg, config) = load_config(cfg_path)?;
            match cfg.guest() {
                Some(_) => crate::guest::prepare(&mut cmd, &l, &cfg, &config)?,
                None if l.no_dbt_hooks => bail!(
                    "--no-dbt-hooks applies to DBT guest configurations only; {} has no enabled dbt_guest block",
                    config.display()
                ),
                None => {}
            }
            Gpus::Local {
                config: &config,
                threads: l.threads.map(|t| t as u64),
                watchdog_s: l.watchdog,
            }
        }
        Mode::Daemon => {
            socket = spawn_daemon(&l)?;
            Gpus::Daemon { socket: &socket }
        }
        Mode::Attach => {
            socket = attach_socket(&l);
            rocjitsu_kmd::daemon::query_status(&socket).map_err(|e| {
                anyhow::anyhow!(
                    "{e}; start a daemon first (`rocjitsu --config CONFIG --daemon`), or use --daemon to start one for this program"
                )
            })?;
            Gpus::Daemon { socket: &socket }
        }
    };
    let emulator = Emulator {
        runtime_dir: &dir,
        gpus,
        log: l.log.as_deref(),
    };
    rocjitsu_kmd::launch::apply(&mut cmd, emulator.changes());
    let err = cmd.exec();
    eprintln!("rocjitsu: error: cannot run {}: {err}", show(app));
    Ok(ExitCode::from(127))
}

/// The socket `--attach` (and `daemon-status`) use: `--socket`, else
/// `$ROCJITSU_DAEMON_SOCKET`, else the default path.
pub fn attach_socket(l: &Launch) -> PathBuf {
    l.socket
        .clone()
        .or_else(|| std::env::var_os(rocjitsu_config::env::DAEMON_SOCKET).map(PathBuf::from))
        .unwrap_or_else(rocjitsu_kmd::daemon::default_socket)
}

fn need_config(l: &Launch) -> Result<&Path> {
    l.config.as_deref().ok_or_else(|| {
        anyhow::anyhow!("--daemon needs --config CONFIG (the GPUs the daemon emulates)")
    })
}

/// `rocjitsu --config C --daemon`: serves in the foreground until SIGINT
/// or SIGTERM.
fn serve_foreground(l: &Launch) -> Result<ExitCode> {
    let (cfg, canon) = load_config(need_config(l)?)?;
    let socket = l
        .socket
        .clone()
        .unwrap_or_else(rocjitsu_kmd::daemon::default_socket);
    let daemon = Daemon::bind(DaemonOptions {
        driver: driver_options(l, cfg),
        socket,
        owner: None,
        limits: l.limits.clone(),
        restore: l.restore.clone(),
    })
    .map_err(anyhow::Error::msg)?;
    stop_on_signals(daemon.stopper());
    eprintln!(
        "rocjitsu: daemon serving the GPUs of {} on {} (attach with `rocjitsu --attach -- APP`; Ctrl-C stops it)",
        canon.display(),
        daemon.socket().display()
    );
    daemon.run().map_err(anyhow::Error::msg)?;
    Ok(ExitCode::SUCCESS)
}

static STOP: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>> = std::sync::OnceLock::new();

extern "C" fn on_signal(_: libc::c_int) {
    if let Some(f) = STOP.get() {
        f();
    }
}

fn stop_on_signals(stop: impl Fn() + Send + Sync + 'static) {
    let _ = STOP.set(Box::new(stop));
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores an atomic flag (async-signal-safe).
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

/// Starts a daemon for the program about to be exec'd in this process:
/// the daemon is a grandchild (so the program never sees it as its child),
/// listens on a socket of its own, and stops once this process (the
/// program, after exec) has exited and no client is left. Returns the
/// socket once the daemon listens.
fn spawn_daemon(l: &Launch) -> Result<PathBuf> {
    let (cfg, _) = load_config(need_config(l)?)?;
    let me = std::process::id();
    let socket = l
        .socket
        .clone()
        .unwrap_or_else(|| rocjitsu_kmd::runtime_dir().join(format!("daemon-{me}.sock")));
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills in two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        bail!("cannot create a pipe: {}", std::io::Error::last_os_error());
    }
    let (rd, wr) = (fds[0], fds[1]);
    // SAFETY: the launcher is single-threaded here; the child only runs the
    // daemon (and exits), the parent goes on.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        bail!(
            "cannot fork the daemon: {}",
            std::io::Error::last_os_error()
        );
    }
    if pid == 0 {
        // SAFETY: closing the pipe's read end in the child.
        unsafe { libc::close(rd) };
        // SAFETY: a process group of its own (so the terminal's Ctrl-C
        // meant for the program does not reach the daemon), then a second
        // fork so that the daemon is not the program's child. Not a new
        // session: the scheduler gives each session's group of processes
        // an equal share of the CPU (autogroup), and a session of its own
        // would hold the daemon's kernel threads to half the machine
        // against a program spinning while it waits for the GPU.
        unsafe {
            libc::setpgid(0, 0);
            if libc::fork() != 0 {
                libc::_exit(0);
            }
        }
        let code = run_daemon_child(l, cfg, socket, me, wr);
        std::process::exit(code);
    }
    // SAFETY: closing the write end in the parent; reaping the first child.
    unsafe {
        libc::close(wr);
        let mut st = 0;
        libc::waitpid(pid, &mut st, 0);
    }
    let mut msg = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        // SAFETY: reading into our buffer.
        let n = unsafe { libc::read(rd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        msg.extend_from_slice(&buf[..n as usize]);
    }
    // SAFETY: closing our pipe end.
    unsafe { libc::close(rd) };
    match msg.first() {
        Some(b'+') => Ok(socket),
        Some(b'-') => bail!(
            "the daemon did not start: {}",
            String::from_utf8_lossy(&msg[1..])
        ),
        _ => bail!("the daemon did not start (it exited without a word)"),
    }
}

fn run_daemon_child(l: &Launch, cfg: GpuConfig, socket: PathBuf, owner: u32, ready: i32) -> i32 {
    let say = |m: &[u8]| {
        // SAFETY: writing our message to the pipe.
        unsafe { libc::write(ready, m.as_ptr().cast(), m.len()) };
    };
    let daemon = match Daemon::bind(DaemonOptions {
        driver: driver_options(l, cfg),
        socket,
        owner: Some(owner),
        limits: l.limits.clone(),
        restore: l.restore.clone(),
    }) {
        Ok(d) => d,
        Err(e) => {
            say(format!("-{e}").as_bytes());
            return 1;
        }
    };
    say(b"+");
    // SAFETY: the parent reads until this end closes.
    unsafe { libc::close(ready) };
    // The daemon keeps the launcher's stderr (its fault reports go where
    // the program's would) but not its stdin/stdout.
    // SAFETY: pointing stdin and stdout at /dev/null.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
    stop_on_signals(daemon.stopper());
    match daemon.run() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("rocjitsu: daemon: {e}");
            1
        }
    }
}

fn show(s: &OsStr) -> String {
    s.to_string_lossy().into_owned()
}
