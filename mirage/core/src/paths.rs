//! Where mirage keeps things.
//!
//! - Configuration (agents, topologies, profiles): `$MIRAGE_HOME`, else
//!   `$XDG_CONFIG_HOME/mirage`, else `~/.config/mirage`.
//! - Runtime state (sessions): `$MIRAGE_RUNTIME_DIR`, else
//!   `$XDG_RUNTIME_DIR/mirage`, else `/tmp/mirage-<uid>`. Sessions live in
//!   `sessions/<id>/` below it; they end with their supervisor, so nothing
//!   there needs to survive a reboot. It is created with mode 0700, and an
//!   existing one must be a real directory of the caller's that nobody else
//!   can write to (`check_runtime`).

use rocjitsu_rpc::dir::PrivateDir;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Paths {
    /// The configuration directory (`agents/`, `topologies/`, `profiles/`).
    pub home: PathBuf,
    /// The runtime directory (`sessions/`).
    pub runtime: PathBuf,
}

fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

impl Paths {
    /// The directories the environment names (see the module documentation).
    pub fn from_env() -> crate::Result<Paths> {
        let home = match var("MIRAGE_HOME") {
            Some(h) => h,
            None => match var("XDG_CONFIG_HOME") {
                Some(x) => x.join("mirage"),
                None => var("HOME")
                    .ok_or_else(|| {
                        crate::Error::Other(
                            "neither MIRAGE_HOME, XDG_CONFIG_HOME nor HOME is set: set MIRAGE_HOME to the directory for mirage's profiles".into(),
                        )
                    })?
                    .join(".config/mirage"),
            },
        };
        let runtime = match var("MIRAGE_RUNTIME_DIR") {
            Some(r) => r,
            None => match var("XDG_RUNTIME_DIR") {
                Some(x) => x.join("mirage"),
                // SAFETY: getuid has no preconditions.
                None => PathBuf::from(format!("/tmp/mirage-{}", unsafe { libc::getuid() })),
            },
        };
        Ok(Paths { home, runtime })
    }

    pub fn sessions(&self) -> PathBuf {
        self.runtime.join("sessions")
    }

    /// Creates the runtime directory and its sessions directory (mode 0700:
    /// control sockets live there), or checks them when they exist: each
    /// must be a real directory of the caller's that nobody else can write
    /// to ([`rocjitsu_rpc::dir::PrivateDir`]).
    pub fn ensure_sessions(&self) -> crate::Result<PathBuf> {
        let runtime = PrivateDir::ensure(&self.runtime, "MIRAGE_RUNTIME_DIR")
            .map_err(|e| crate::Error::Other(e.to_string()))?;
        let sessions = runtime
            .subdir("sessions", 0o700)
            .map_err(|e| crate::Error::Other(e.to_string()))?;
        Ok(sessions.path().to_path_buf())
    }

    /// Checks the runtime directory and its sessions directory, where they
    /// exist, as [`Paths::ensure_sessions`] does (creating nothing): state
    /// read from a directory another user could write would name their
    /// processes and sockets.
    pub fn check_runtime(&self) -> crate::Result<()> {
        if std::fs::symlink_metadata(&self.runtime).is_err() {
            return Ok(());
        }
        let runtime = PrivateDir::ensure(&self.runtime, "MIRAGE_RUNTIME_DIR")
            .map_err(|e| crate::Error::Other(e.to_string()))?;
        if runtime.exists("sessions") {
            runtime
                .existing_subdir("sessions")
                .map_err(|e| crate::Error::Other(e.to_string()))?;
        }
        Ok(())
    }
}
