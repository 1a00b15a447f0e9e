//! Sessions as seen from outside their supervisor.
//!
//! A session is a directory `<runtime>/sessions/<id>/`:
//! - `lock`: held (flock, exclusive) by the supervisor for its whole life.
//!   Whether the session lives is whether the lock is held: no heartbeat,
//!   no pid guess; a killed supervisor releases it at once.
//! - `profile.json`: the resolved profile the session runs (written before
//!   the supervisor starts).
//! - `state.json`: what the supervisor booted (nodes, containers, network),
//!   written atomically at each change.
//! - `control.sock`: the supervisor's control socket (see [`crate::ipc`]).
//! - `supervisor.log`: the supervisor's log (`mirage session logs`).
//! - `nodes/<n>/`: each node's files (the emulator's configuration and
//!   runtime directory).
//!
//! Every process a session starts carries `MIRAGE_SESSION=<id>` and
//! `MIRAGE_SESSION_DIR=<dir>` in its environment, and every container the
//! label `mirage.session-dir=<dir>`: that is how `mirage cleanup` finds what
//! a killed supervisor left.

use crate::model::Profile;
use crate::{Error, Result, atomic};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

pub const ENV_SESSION: &str = "MIRAGE_SESSION";
pub const ENV_SESSION_DIR: &str = "MIRAGE_SESSION_DIR";
pub const LABEL_SESSION: &str = "mirage.session";
pub const LABEL_SESSION_DIR: &str = "mirage.session-dir";
pub const LABEL_RUNTIME: &str = "mirage.runtime";

/// How a session was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `mirage session start`: a detached supervisor, alive until stopped.
    Detached,
    /// `mirage run`: the supervisor is the `mirage run` process; the session
    /// ends with its workload.
    Run,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Booting,
    Running,
    Stopping,
}

/// One node of a booted session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeState {
    pub index: u32,
    pub hostname: String,
    pub gpus: u32,
    /// The address other nodes reach it at.
    pub address: String,
    /// `NCCL_HOSTID` of its ranks.
    pub host_id: String,
    /// Its container, when the session runs in an image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// The node's directory in the session directory.
    pub dir: PathBuf,
    /// What the backend says about the node's emulator.
    #[serde(default)]
    pub emulator: serde_json::Value,
}

/// `state.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionState {
    pub id: String,
    pub mode: Mode,
    pub status: Status,
    pub supervisor_pid: u32,
    /// Seconds since the Unix epoch.
    pub started: u64,
    pub profile: String,
    pub backend: String,
    /// `host`, `sysroot PATH` or `image NAME`.
    pub root: String,
    pub master_port: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    pub nodes: Vec<NodeState>,
}

/// The files of one session directory.
#[derive(Debug, Clone)]
pub struct SessionDir {
    pub id: String,
    pub dir: PathBuf,
}

/// Whether a session's supervisor lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    /// The lock is free: the supervisor is gone (killed, or crashed).
    Dead,
}

impl SessionDir {
    pub fn new(sessions: &Path, id: &str) -> SessionDir {
        SessionDir {
            id: id.to_string(),
            dir: sessions.join(id),
        }
    }

    pub fn lock_file(&self) -> PathBuf {
        self.dir.join("lock")
    }
    pub fn state_file(&self) -> PathBuf {
        self.dir.join("state.json")
    }
    pub fn profile_file(&self) -> PathBuf {
        self.dir.join("profile.json")
    }
    pub fn socket(&self) -> PathBuf {
        self.dir.join("control.sock")
    }
    pub fn log_file(&self) -> PathBuf {
        self.dir.join("supervisor.log")
    }
    pub fn node_dir(&self, n: u32) -> PathBuf {
        self.dir.join("nodes").join(n.to_string())
    }

    /// Creates the directory (it must not exist) and takes its lock.
    pub fn create(&self) -> Result<SessionLock> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(0o700).create(&self.dir).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::Other(format!(
                    "session '{}' exists ({}): choose another --id, or stop it (`mirage session stop {}`)",
                    self.id,
                    self.dir.display(),
                    self.id
                ))
            } else {
                Error::io(&self.dir, e)
            }
        })?;
        let lock = SessionLock::acquire(&self.lock_file())?.ok_or_else(|| {
            Error::Other(format!(
                "session '{}': its lock is held by another process",
                self.id
            ))
        })?;
        Ok(lock)
    }

    pub fn liveness(&self) -> Liveness {
        let Ok(f) = File::open(self.lock_file()) else {
            // No lock file: a directory being created or half removed.
            return Liveness::Dead;
        };
        // SAFETY: flock on a descriptor we own; no memory is involved.
        let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
        if r == 0 {
            Liveness::Dead
        } else {
            Liveness::Alive
        }
    }

    pub fn read_state(&self) -> Result<SessionState> {
        let f = self.state_file();
        let text = std::fs::read_to_string(&f).map_err(|e| Error::io(&f, e))?;
        crate::model::parse(
            &format!("session '{}' state file {}", self.id, f.display()),
            &text,
        )
    }

    pub fn write_state(&self, s: &SessionState) -> Result<()> {
        atomic::write_json(&self.state_file(), s)
    }

    pub fn read_profile(&self) -> Result<Profile> {
        let f = self.profile_file();
        let text = std::fs::read_to_string(&f).map_err(|e| Error::io(&f, e))?;
        crate::model::parse(
            &format!("session '{}' profile {}", self.id, f.display()),
            &text,
        )
    }
}

/// A held session lock (released when dropped or when the process dies).
#[derive(Debug)]
pub struct SessionLock {
    file: File,
}

impl SessionLock {
    /// Takes the lock, or `None` when another process holds it.
    pub fn acquire(path: &Path) -> Result<Option<SessionLock>> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        // SAFETY: flock on a descriptor we own.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Ok(None);
            }
            return Err(Error::io(path, e));
        }
        Ok(Some(SessionLock { file }))
    }

    /// Adopts a descriptor of a lock file locked by our parent (the
    /// descriptor shares the lock).
    pub fn from_file(file: File) -> SessionLock {
        SessionLock { file }
    }

    pub fn file(&self) -> &File {
        &self.file
    }
}

/// Every session directory under `sessions`, with its liveness.
pub fn scan(sessions: &Path) -> Vec<(SessionDir, Liveness)> {
    let mut out = vec![];
    let Ok(rd) = std::fs::read_dir(sessions) else {
        return out;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !e.path().is_dir() || crate::check_name(&name).is_err() {
            continue;
        }
        let d = SessionDir::new(sessions, &name);
        let l = d.liveness();
        out.push((d, l));
    }
    out.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    out
}

/// A fresh session id: 8 hex digits from the kernel's random pool.
pub fn new_id() -> String {
    let mut b = [0u8; 4];
    if let Ok(mut f) = File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut b);
    }
    if b == [0; 4] {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        b = (t.subsec_nanos() ^ std::process::id()).to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_is_liveness() {
        let root = std::env::temp_dir().join(format!("mirage-session-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let d = SessionDir::new(&root, "abc");
        let lock = d.create().unwrap();
        assert_eq!(d.liveness(), Liveness::Alive);
        assert!(d.create().unwrap_err().to_string().contains("exists"));
        assert!(SessionLock::acquire(&d.lock_file()).unwrap().is_none());
        assert_eq!(scan(&root).len(), 1);
        drop(lock);
        assert_eq!(d.liveness(), Liveness::Dead);
        assert!(SessionLock::acquire(&d.lock_file()).unwrap().is_some());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn ids_are_names() {
        let a = new_id();
        assert_eq!(a.len(), 8);
        crate::check_name(&a).unwrap();
        assert_ne!(a, new_id());
    }
}
