//! Sessions managed from outside their supervisor, shared by the `mirage`
//! commands and `mirage serve`: starting a detached supervisor (`mirage
//! supervise`, run from the `mirage` binary), finding and listing
//! sessions, stopping one (or cleaning up after a dead one).

use mirage_core::session::{self, Liveness, SessionDir, SessionLock, SessionState};
use mirage_core::{Catalog, Overrides, Paths, Resolved};
use std::io::BufRead;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// An error of a session operation, complete with what would fix it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ManageError(pub String);

impl From<mirage_core::Error> for ManageError {
    fn from(e: mirage_core::Error) -> Self {
        ManageError(e.to_string())
    }
}

pub type Result<T, E = ManageError> = std::result::Result<T, E>;

fn err(m: impl Into<String>) -> ManageError {
    ManageError(m.into())
}

/// Profile `name` resolved, with `overrides` applied and its backend's
/// checks passed.
pub fn resolve(catalog: &Catalog, name: &str, overrides: &Overrides) -> Result<Resolved> {
    let mut r = catalog.resolve_name(name)?;
    r.apply(overrides)
        .map_err(|(path, m)| err(format!("profile '{name}': {path}: {m}")))?;
    mirage_core::backend::check_profile(&r).map_err(|e| err(format!("profile '{name}': {e}")))?;
    Ok(r)
}

/// A new session directory (id `id`, else a random one) with its lock.
pub fn new_session_dir(paths: &Paths, id: Option<String>) -> Result<(SessionDir, SessionLock)> {
    let sessions = paths.ensure_sessions()?;
    let id = id.unwrap_or_else(session::new_id);
    mirage_core::check_name(&id).map_err(|m| err(format!("--id: {m}")))?;
    let d = SessionDir::new(&sessions, &id);
    let lock = d.create()?;
    Ok((d, lock))
}

/// How long a supervisor may take to boot (nothing is pulled from a
/// network; this is far beyond it).
pub const BOOT_TIMEOUT_MS: i32 = 300_000;

fn clear_cloexec(fd: i32) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor of this process.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// What [`start_detached`] is told.
pub struct Start<'a> {
    pub paths: &'a Paths,
    pub resolved: &'a Resolved,
    pub id: Option<String>,
    /// The directory executions start in (visible in sysroots and
    /// containers).
    pub cwd: Option<PathBuf>,
    /// The `mirage` binary (it has the hidden `supervise` command).
    pub exe: PathBuf,
    /// `-v` count passed on to the supervisor.
    pub verbose: u8,
}

/// Boots a session with a detached supervisor (`mirage supervise`, in a
/// session of its own) and waits until it reports that it runs.
pub fn start_detached(s: Start) -> Result<SessionDir> {
    let (dir, lock) = new_session_dir(s.paths, s.id)?;
    let cleanup = |e: ManageError| {
        crate::remove_session_dir(&dir);
        e
    };
    mirage_core::atomic::write_json(&dir.profile_file(), &s.resolved.profile)
        .map_err(|e| cleanup(e.into()))?;
    let (ready_r, ready_w) = std::io::pipe().map_err(|e| cleanup(err(e.to_string())))?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.log_file())
        .map_err(|e| cleanup(err(format!("{}: {e}", dir.log_file().display()))))?;
    let lock_fd = lock.file().as_raw_fd();
    let ready_fd = ready_w.as_raw_fd();
    let mut cmd = std::process::Command::new(&s.exe);
    cmd.arg("supervise")
        .arg("--dir")
        .arg(&dir.dir)
        .arg("--runtime")
        .arg(&s.paths.runtime)
        .args([
            "--lock-fd",
            &lock_fd.to_string(),
            "--ready-fd",
            &ready_fd.to_string(),
        ]);
    if let Some(c) = &s.cwd {
        cmd.arg("--cwd").arg(c);
    }
    if s.verbose > 1 {
        cmd.arg("-".to_string() + &"v".repeat(s.verbose as usize));
    }
    cmd.stdin(std::process::Stdio::null())
        .stdout(log.try_clone().map_err(|e| cleanup(err(e.to_string())))?)
        .stderr(log);
    // SAFETY: the closure makes only async-signal-safe calls (setsid,
    // fcntl) on descriptors of this process.
    unsafe {
        cmd.pre_exec(move || {
            libc::setsid();
            clear_cloexec(lock_fd)?;
            clear_cloexec(ready_fd)
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| cleanup(err(format!("cannot start the supervisor: {e}"))))?;
    drop(ready_w);
    // The supervisor holds the lock now (the same open file); ours goes.
    drop(lock);
    let mut p = libc::pollfd {
        fd: ready_r.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    if unsafe { libc::poll(&mut p, 1, BOOT_TIMEOUT_MS) } == 0 {
        let log = std::fs::read_to_string(dir.log_file()).unwrap_or_default();
        // SIGTERM: the supervisor removes what it started.
        // SAFETY: kill has no memory arguments.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let _ = child.wait();
        let tail: Vec<&str> = log.lines().rev().take(5).collect();
        return Err(err(format!(
            "session {}: not booted after {} s; the supervisor's last words:\n{}",
            dir.id,
            BOOT_TIMEOUT_MS / 1000,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )));
    }
    let mut line = String::new();
    let mut reader = std::io::BufReader::new(ready_r);
    let read = reader.read_line(&mut line);
    // The supervisor is detached: reap it when it has exited already.
    let _ = child.try_wait();
    let msg: serde_json::Value =
        serde_json::from_str(line.trim()).unwrap_or(serde_json::Value::Null);
    if read.is_err() || msg["ok"] != serde_json::Value::Bool(true) {
        let _ = child.wait();
        let why = msg["error"].as_str().map(String::from).unwrap_or_else(|| {
            let log = std::fs::read_to_string(dir.log_file()).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(5).collect();
            format!(
                "the supervisor exited during boot: {}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )
        });
        if dir.dir.exists() && dir.liveness() == Liveness::Dead {
            crate::remove_session_dir(&dir);
        }
        return Err(err(why));
    }
    // Reaped when it exits (a long-lived caller such as `mirage serve`
    // would otherwise keep it as a zombie).
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(dir)
}

/// The live sessions, with their state files where readable.
pub fn live(paths: &Paths) -> Vec<(SessionDir, Option<SessionState>)> {
    session::scan(&paths.sessions())
        .into_iter()
        .filter(|(_, l)| *l == Liveness::Alive)
        .map(|(d, _)| {
            let s = d.read_state().ok();
            (d, s)
        })
        .collect()
}

/// The session `id` (its directory exists; it may be dead).
pub fn find(paths: &Paths, id: &str) -> Result<SessionDir> {
    mirage_core::check_name(id).map_err(|m| err(format!("session {m}")))?;
    let d = SessionDir::new(&paths.sessions(), id);
    if !d.dir.is_dir() {
        let known: Vec<String> = live(paths).into_iter().map(|(d, _)| d.id).collect();
        return Err(err(format!(
            "no session '{id}'; {}",
            if known.is_empty() {
                "none is running (`mirage session start` boots one)".to_string()
            } else {
                format!("running: {}", known.join(", "))
            }
        )));
    }
    Ok(d)
}

/// Fails unless the session's supervisor lives.
pub fn require_alive(d: &SessionDir) -> Result<()> {
    if d.liveness() == Liveness::Dead {
        return Err(err(format!(
            "session '{}' is not running: its supervisor is gone; `mirage cleanup` removes what it left",
            d.id
        )));
    }
    Ok(())
}

/// Waits until a process has exited (pidfd when the kernel has it).
pub fn wait_exit(pid: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    // SAFETY: pidfd_open has no memory arguments.
    let pfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::c_long, 0 as libc::c_long) }
        as i32;
    if pfd >= 0 {
        // SAFETY: pfd is a new descriptor we own.
        let pfd = unsafe { OwnedFd::from_raw_fd(pfd) };
        let mut p = libc::pollfd {
            fd: pfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: p is one valid pollfd.
        return unsafe { libc::poll(&mut p, 1, ms) } == 1;
    }
    while Instant::now() < deadline {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("");
        if stat.is_empty() || state == "Z" || state == "X" {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// How [`stop`] went.
#[derive(Debug)]
pub enum Stopped {
    /// The supervisor tore the session down and exited.
    Stopped,
    /// The supervisor was gone already; what it left was removed.
    Cleaned(crate::cleanup::Report),
}

/// Stops session `d`: asks its supervisor over the control socket (else
/// SIGTERM), waits up to 30 s, then kills it and cleans up after it.
pub fn stop(d: &SessionDir) -> Stopped {
    if d.liveness() == Liveness::Dead {
        return Stopped::Cleaned(crate::cleanup::one(d, false));
    }
    let pid = d.read_state().ok().map(|s| s.supervisor_pid);
    let asked = mirage_core::ipc::Channel::connect(&d.socket()).and_then(|ch| {
        ch.send(&mirage_core::ipc::Request::Stop, &[])?;
        ch.recv::<mirage_core::ipc::Reply>()
    });
    if asked.is_err()
        && let Some(p) = pid
    {
        // SAFETY: kill has no memory arguments; p is the lock holder's pid.
        unsafe { libc::kill(p as i32, libc::SIGTERM) };
    }
    let exited = pid
        .map(|p| wait_exit(p, Duration::from_secs(30)))
        .unwrap_or(false);
    if !exited {
        if let Some(p) = pid {
            // SAFETY: as above.
            unsafe { libc::kill(p as i32, libc::SIGKILL) };
            wait_exit(p, Duration::from_secs(5));
        }
        crate::cleanup::one(d, false);
    }
    Stopped::Stopped
}
