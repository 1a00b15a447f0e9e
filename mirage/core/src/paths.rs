//! Where mirage keeps things.
//!
//! - Configuration (agents, topologies, profiles): `$MIRAGE_HOME`, else
//!   `$XDG_CONFIG_HOME/mirage`, else `~/.config/mirage`.
//! - Runtime state (sessions): `$MIRAGE_RUNTIME_DIR`, else
//!   `$XDG_RUNTIME_DIR/mirage`, else `/tmp/mirage-<uid>`. Sessions live in
//!   `sessions/<id>/` below it; they end with their supervisor, so nothing
//!   there needs to survive a reboot.

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

    /// Creates the sessions directory (mode 0700: control sockets live there).
    pub fn ensure_sessions(&self) -> crate::Result<PathBuf> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = self.sessions();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| crate::Error::io(&dir, e))?;
        Ok(dir)
    }
}
