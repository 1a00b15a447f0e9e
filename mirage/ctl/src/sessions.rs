//! `mirage run`, `mirage session ...`, `mirage exec`, and the hidden
//! `mirage supervise` (the detached supervisor of `session start`).

use crate::{Ctx, ProfileArgs, print_json, print_table};
use anyhow::{Context, Result, anyhow, bail};
use clap::Subcommand;
use mirage_core::ipc::{Channel, ExecRequest, Reply, Request};
use mirage_core::model::{Overrides, parse_env};
use mirage_core::session::{self, Liveness, Mode, SessionDir, SessionLock};
use mirage_core::{Mount, Resolved};
use mirage_host::{BootOptions, Io, Launch, Session, Target, manage};
use std::io::{Read, Write};
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Subcommand)]
pub enum SessionCmd {
    /// Boot a session in the background and print its id
    Start {
        #[command(flatten)]
        profile: ProfileArgs,
        /// The session's id (default: a random one)
        #[arg(long)]
        id: Option<String>,
    },
    /// List the running sessions
    List,
    /// Show a session (nodes, emulators, executions)
    Show { id: String },
    /// Stop sessions: every process and container they started ends
    Stop {
        ids: Vec<String>,
        /// Stop every session
        #[arg(long, conflicts_with = "ids")]
        all: bool,
    },
    /// Print a session's supervisor log
    Logs {
        id: String,
        /// Keep printing until the session ends
        #[arg(short, long)]
        follow: bool,
    },
}

#[derive(clap::Args)]
pub struct ExecArgs {
    /// The session (default: the only running one)
    #[arg(short, long)]
    session: Option<String>,
    /// The node to run on
    #[arg(short, long, default_value_t = 0)]
    node: u32,
    /// Run ranks on every node instead (RANK, WORLD_SIZE, ... set)
    #[arg(long, value_name = "R", conflicts_with = "node")]
    nproc_per_node: Option<u32>,
    /// Keep stdin open
    #[arg(short, long)]
    interactive: bool,
    /// A terminal (through a pty in the session)
    #[arg(short, long)]
    tty: bool,
    /// KEY=VALUE (repeatable)
    #[arg(short, long = "env")]
    env: Vec<String>,
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

#[derive(clap::Args)]
pub struct SuperviseArgs {
    #[arg(long)]
    dir: PathBuf,
    #[arg(long)]
    runtime: PathBuf,
    #[arg(long)]
    cwd: Option<PathBuf>,
    #[arg(long)]
    lock_fd: i32,
    #[arg(long)]
    ready_fd: i32,
}

fn overrides(p: &ProfileArgs) -> Result<Overrides> {
    let mut env = vec![];
    for e in &p.env {
        env.push(parse_env(e).map_err(|m| anyhow!(m))?);
    }
    let mut mounts = vec![];
    for m in &p.mounts {
        mounts.push(m.parse::<Mount>().map_err(|e| anyhow!(e))?);
    }
    Ok(Overrides {
        num_nodes: p.num_nodes,
        gpus_per_node: p.gpus_per_node,
        backend: p.backend.clone(),
        image: p.image.clone(),
        sysroot: p.sysroot.clone(),
        host: p.host,
        env,
        mounts,
    })
}

fn resolve(ctx: &Ctx, p: &ProfileArgs) -> Result<Resolved> {
    let name = p
        .profile
        .clone()
        .or_else(|| {
            std::env::var("MIRAGE_PROFILE")
                .ok()
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| "mi210".into());
    Ok(manage::resolve(&ctx.catalog, &name, &overrides(p)?)?)
}

fn new_session_dir(ctx: &Ctx, id: Option<String>) -> Result<(SessionDir, SessionLock)> {
    Ok(manage::new_session_dir(&ctx.paths, id)?)
}

fn client_env() -> Vec<(String, String)> {
    std::env::vars().collect()
}

fn dup(fd: std::os::fd::BorrowedFd) -> Result<OwnedFd> {
    fd.try_clone_to_owned()
        .context("cannot duplicate a standard stream")
}

pub fn run(
    ctx: &Ctx,
    p: &ProfileArgs,
    nproc: u32,
    id: Option<String>,
    command: Vec<String>,
) -> Result<ExitCode> {
    let resolved = resolve(ctx, p)?;
    let (dir, lock) = new_session_dir(ctx, id)?;
    if let Err(e) = mirage_core::atomic::write_json(&dir.profile_file(), &resolved.profile) {
        mirage_host::remove_session_dir(&dir);
        return Err(e.into());
    }
    let cwd = std::env::current_dir().ok();
    let slot: Arc<std::sync::Mutex<Option<mirage_host::Running>>> = Arc::default();
    let session_slot: Arc<std::sync::Mutex<Option<Arc<Session>>>> = Arc::default();
    {
        let slot = slot.clone();
        let session_slot = session_slot.clone();
        let count = std::sync::atomic::AtomicU32::new(0);
        mirage_host::handle_signals(move |sig| {
            let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if let Some(r) = slot
                .lock()
                .ok()
                .and_then(|g| g.as_ref().map(|r| r.shared.clone()))
            {
                r.signal(if n == 0 { sig } else { libc::SIGKILL });
            } else if let Some(s) = session_slot.lock().ok().and_then(|g| g.clone()) {
                s.request_stop();
            }
        });
    }
    let runtime = ctx.paths.runtime.clone();
    let session = match Session::boot(BootOptions {
        dir: dir.clone(),
        lock,
        runtime,
        mode: Mode::Run,
        resolved,
        cwd: cwd.clone(),
    }) {
        Ok(s) => s,
        Err(e) => {
            mirage_host::remove_session_dir(&dir);
            return Err(e.into());
        }
    };
    if let Ok(mut g) = session_slot.lock() {
        *g = Some(session.clone());
    }
    let result = (|| -> Result<i32> {
        session.serve()?;
        let io = Io::Fds {
            stdin: dup(std::io::stdin().as_fd())?,
            stdout: dup(std::io::stdout().as_fd())?,
            stderr: dup(std::io::stderr().as_fd())?,
        };
        let running = session.launch(Launch {
            argv: command,
            target: Target::Ranks {
                nproc_per_node: nproc,
            },
            env: vec![],
            client_env: client_env(),
            cwd,
            io,
        })?;
        let shared = running.shared.clone();
        if let Ok(mut g) = slot.lock() {
            *g = Some(running);
        }
        Ok(shared.wait())
    })();
    session.teardown();
    let code = result?;
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

pub fn session(ctx: &Ctx, c: SessionCmd) -> Result<ExitCode> {
    match c {
        SessionCmd::Start { profile, id } => start(ctx, &profile, id),
        SessionCmd::List => list(ctx),
        SessionCmd::Show { id } => show(ctx, &id),
        SessionCmd::Stop { ids, all } => {
            let ids = if all {
                session::scan(&ctx.paths.sessions())
                    .into_iter()
                    .map(|(d, _)| d.id)
                    .collect()
            } else {
                if ids.is_empty() {
                    bail!("name the sessions to stop, or pass --all");
                }
                ids
            };
            let mut failed = false;
            for id in ids {
                if let Err(e) = stop(ctx, &id) {
                    eprintln!("mirage: error: {e:#}");
                    failed = true;
                }
            }
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        SessionCmd::Logs { id, follow } => logs(ctx, &id, follow),
    }
}

fn start(ctx: &Ctx, p: &ProfileArgs, id: Option<String>) -> Result<ExitCode> {
    let resolved = resolve(ctx, p)?;
    let dir = manage::start_detached(manage::Start {
        paths: &ctx.paths,
        resolved: &resolved,
        id,
        cwd: std::env::current_dir().ok(),
        exe: std::env::current_exe()?,
        verbose: ctx.verbose,
    })?;
    if ctx.json {
        print_json(&serde_json::json!({ "id": dir.id, "dir": dir.dir }))?;
    } else {
        println!("{}", dir.id);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn supervise(a: SuperviseArgs) -> ExitCode {
    // SAFETY: the descriptors were passed to us by `mirage session start`
    // and nothing else in this process owns them.
    let (lock, ready) = unsafe {
        (
            std::fs::File::from_raw_fd(a.lock_fd),
            std::fs::File::from_raw_fd(a.ready_fd),
        )
    };
    for fd in [a.lock_fd, a.ready_fd] {
        // SAFETY: fcntl on our own descriptors: executions must not inherit them.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    let Some(sessions) = a.dir.parent() else {
        return ExitCode::from(2);
    };
    let id = a
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = SessionDir::new(sessions, &id);
    let code = mirage_host::supervise(dir, SessionLock::from_file(lock), a.runtime, a.cwd, ready);
    ExitCode::from(code as u8)
}

fn live(ctx: &Ctx) -> Vec<(SessionDir, Option<session::SessionState>)> {
    manage::live(&ctx.paths)
}

fn uptime(started: u64) -> String {
    let s = session::now().saturating_sub(started);
    if s < 120 {
        format!("{s}s")
    } else if s < 7200 {
        format!("{}m", s / 60)
    } else {
        format!("{}h", s / 3600)
    }
}

fn list(ctx: &Ctx) -> Result<ExitCode> {
    let all = session::scan(&ctx.paths.sessions());
    let dead: Vec<String> = all
        .iter()
        .filter(|(_, l)| *l == Liveness::Dead)
        .map(|(d, _)| d.id.clone())
        .collect();
    let alive = live(ctx);
    if ctx.json {
        let v: Vec<serde_json::Value> = alive
            .iter()
            .map(|(d, s)| match s {
                Some(s) => serde_json::to_value(s).unwrap_or_default(),
                None => serde_json::json!({ "id": d.id, "status": "starting" }),
            })
            .collect();
        print_json(&v)?;
    } else {
        let rows: Vec<Vec<String>> = alive
            .iter()
            .map(|(d, s)| match s {
                Some(s) => vec![
                    s.id.clone(),
                    s.profile.clone(),
                    format!(
                        "{} x {}",
                        s.nodes.len(),
                        s.nodes.first().map(|n| n.gpus).unwrap_or(0)
                    ),
                    s.root.clone(),
                    format!("{:?}", s.status).to_lowercase(),
                    format!("{:?}", s.mode).to_lowercase(),
                    s.supervisor_pid.to_string(),
                    uptime(s.started),
                ],
                None => vec![
                    d.id.clone(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "starting".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                ],
            })
            .collect();
        print_table(
            &[
                "ID",
                "PROFILE",
                "NODES x GPUS",
                "RUNS IN",
                "STATUS",
                "MODE",
                "PID",
                "UP",
            ],
            &rows,
        );
    }
    if !dead.is_empty() {
        eprintln!(
            "mirage: {} session(s) whose supervisor is gone ({}): `mirage cleanup` removes what they left",
            dead.len(),
            dead.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn find(ctx: &Ctx, id: &str) -> Result<SessionDir> {
    Ok(manage::find(&ctx.paths, id)?)
}

fn require_alive(d: &SessionDir) -> Result<()> {
    Ok(manage::require_alive(d)?)
}

fn show(ctx: &Ctx, id: &str) -> Result<ExitCode> {
    let d = find(ctx, id)?;
    require_alive(&d)?;
    let s = d.read_state()?;
    let execs = Channel::connect(&d.socket())
        .ok()
        .and_then(|ch| {
            ch.send(&Request::Status, &[]).ok()?;
            match ch.recv::<Reply>().ok()?? {
                (Reply::Status { executions }, _) => Some(executions),
                _ => None,
            }
        })
        .unwrap_or_default();
    if ctx.json {
        let mut v = serde_json::to_value(&s)?;
        v["executions"] = serde_json::to_value(&execs)?;
        v["dir"] = serde_json::to_value(&d.dir)?;
        print_json(&v)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "session {}  ({:?}, {:?}, supervisor pid {}, up {})",
        s.id,
        s.mode,
        s.status,
        s.supervisor_pid,
        uptime(s.started)
    );
    println!(
        "  profile {}, backend {}, runs in {}",
        s.profile, s.backend, s.root
    );
    if let Some(e) = &s.engine {
        println!("  container engine {e}");
    }
    if let Some(n) = &s.network {
        println!("  network {n}");
    }
    println!("  master port {}", s.master_port);
    for n in &s.nodes {
        println!(
            "  node {} ({}): {} GPU(s), address {}, NCCL_HOSTID {}{}",
            n.index,
            n.hostname,
            n.gpus,
            n.address,
            n.host_id,
            n.container
                .as_ref()
                .map(|c| format!(", container {c}"))
                .unwrap_or_default()
        );
        if let Some(cfg) = n.emulator.get("config").and_then(|c| c.as_str()) {
            println!(
                "    emulator: {} ({}), config {cfg}",
                n.emulator["mode"].as_str().unwrap_or("?"),
                n.emulator["target"].as_str().unwrap_or("?")
            );
        }
    }
    for e in execs {
        println!(
            "  running: {:?} (pids {:?}, up {})",
            e.argv,
            e.pids,
            uptime(e.started)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn stop(ctx: &Ctx, id: &str) -> Result<()> {
    let d = find(ctx, id)?;
    match manage::stop(&d) {
        manage::Stopped::Cleaned(r) => {
            if ctx.json {
                print_json(&serde_json::json!({ "id": id, "stopped": false, "cleaned": r }))?;
            } else {
                println!(
                    "session {id}: its supervisor was gone; removed what it left ({})",
                    r.summary()
                );
            }
        }
        manage::Stopped::Stopped => {
            if ctx.json {
                print_json(&serde_json::json!({ "id": id, "stopped": true }))?;
            } else {
                println!("session {id} stopped");
            }
        }
    }
    Ok(())
}

fn logs(ctx: &Ctx, id: &str, follow: bool) -> Result<ExitCode> {
    let d = find(ctx, id)?;
    let f = d.log_file();
    let mut file =
        std::fs::File::open(&f).with_context(|| format!("session {id}: {}", f.display()))?;
    let mut out = std::io::stdout();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n > 0 {
            out.write_all(&buf[..n])?;
            continue;
        }
        out.flush()?;
        if !follow || d.liveness() == Liveness::Dead {
            // One last read: the supervisor's final lines.
            let mut rest = vec![];
            file.read_to_end(&mut rest)?;
            out.write_all(&rest)?;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn exec(ctx: &Ctx, a: ExecArgs) -> Result<ExitCode> {
    let d = match &a.session {
        Some(s) => find(ctx, s)?,
        None => {
            let alive = live(ctx);
            match alive.as_slice() {
                [(d, _)] => d.clone(),
                [] => bail!(
                    "no session is running: start one with `mirage session start` (or give -s SESSION)"
                ),
                many => bail!(
                    "{} sessions are running ({}): choose one with -s SESSION",
                    many.len(),
                    many.iter()
                        .map(|(d, _)| d.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
    };
    require_alive(&d)?;
    let mut env = vec![];
    for e in &a.env {
        env.push(parse_env(e).map_err(|m| anyhow!(m))?);
    }
    let ch = Channel::connect(&d.socket()).with_context(|| {
        format!(
            "session {}: cannot reach its supervisor at {}",
            d.id,
            d.socket().display()
        )
    })?;
    let tty = a.tty.then(|| {
        crate::term::winsize(0).unwrap_or(mirage_core::ipc::Winsize { rows: 24, cols: 80 })
    });
    let req = Request::Exec(ExecRequest {
        argv: a.command,
        node: Some(a.node),
        nproc_per_node: a.nproc_per_node,
        env,
        client_env: client_env(),
        cwd: std::env::current_dir().ok(),
        tty,
    });
    if tty.is_some() {
        ch.send(&req, &[])?;
        let (reply, mut fds) = ch
            .recv::<Reply>()?
            .ok_or_else(|| anyhow!("session {}: the supervisor closed the connection", d.id))?;
        match reply {
            Reply::Started { .. } => {}
            Reply::Error { message } => bail!("{message}"),
            other => bail!("session {}: unexpected answer {other:?}", d.id),
        }
        let master = fds
            .pop()
            .ok_or_else(|| anyhow!("session {}: no terminal came back", d.id))?;
        let code = crate::term::relay(&master, a.interactive, &ch)?;
        return Ok(ExitCode::from(code.clamp(0, 255) as u8));
    }
    let stdin = if a.interactive {
        dup(std::io::stdin().as_fd())?
    } else {
        std::fs::File::open("/dev/null")?.into()
    };
    let stdout = dup(std::io::stdout().as_fd())?;
    let stderr = dup(std::io::stderr().as_fd())?;
    let ch = Arc::new(ch);
    {
        let ch = ch.clone();
        mirage_host::handle_signals(move |sig| {
            let _ = ch.send(&Request::Signal { signal: sig }, &[]);
        });
    }
    ch.send(&req, &[stdin.as_fd(), stdout.as_fd(), stderr.as_fd()])?;
    drop((stdin, stdout, stderr));
    loop {
        match ch.recv::<Reply>()? {
            Some((Reply::Started { .. }, _)) => {}
            Some((Reply::Exit { code }, _)) => return Ok(ExitCode::from(code.clamp(0, 255) as u8)),
            Some((Reply::Error { message }, _)) => bail!("{message}"),
            Some((other, _)) => bail!("session {}: unexpected answer {other:?}", d.id),
            None => bail!(
                "session {}: the supervisor closed the connection (the session stopped?)",
                d.id
            ),
        }
    }
}
