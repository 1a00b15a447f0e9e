//! mirage's core: the objects a user names (agents, topologies, profiles),
//! their stores (JSON files under `$MIRAGE_HOME`, else
//! `$XDG_CONFIG_HOME/mirage`, plus the builtins), sessions as they are seen
//! from outside (the state file, the lock that tells whether the supervisor
//! lives, the control socket), the emulator-backend trait that the backends
//! implement, discovery of the rocjitsu libraries, and the process table
//! scans that find what a session started.
//!
//! Nothing here starts a process; `mirage-host` (the supervisor) and
//! `mirage-ctl` (the command line) do.

pub mod atomic;
pub mod backend;
pub mod catalog;
pub mod discovery;
pub mod elfver;
pub mod ipc;
pub mod metrics;
pub mod model;
pub mod paths;
pub mod proctable;
pub mod session;

pub use backend::{Attach, Availability, Backend, BackendError, NodeEmulator, NodeSetup};
pub use catalog::{Builtins, Catalog, Entry, Source};
pub use model::{Agent, GpuLink, Mount, NameOr, Overrides, Profile, Resolved, Topology};
pub use paths::Paths;

/// An error about one object mirage reads or writes. Every message names
/// the object (file, profile, session) and, where one exists, the JSON path
/// of the offending value.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A value is malformed: `what` names the object (e.g. `profile file
    /// /home/u/.config/mirage/profiles/p.json`), `path` the JSON path.
    #[error("{what}: {path}: {message}")]
    Invalid {
        what: String,
        path: String,
        message: String,
    },
    /// A name that is not in the store.
    #[error("{kind} '{name}' not found; {hint}")]
    NotFound {
        kind: &'static str,
        name: String,
        hint: String,
    },
    /// Anything else, with its own complete message.
    #[error("{0}")]
    Other(String),
}

impl Error {
    pub fn io(file: impl AsRef<std::path::Path>, source: std::io::Error) -> Error {
        Error::Io {
            file: file.as_ref().display().to_string(),
            source,
        }
    }

    pub fn invalid(
        what: impl Into<String>,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Error {
        Error::Invalid {
            what: what.into(),
            path: path.into(),
            message: message.into(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Names of agents, topologies, profiles and sessions: 1 to 64 characters,
/// letters, digits, `.`, `_`, `-`, starting with a letter or digit (they
/// become file names and container names).
pub fn check_name(name: &str) -> Result<(), String> {
    let ok_first = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let ok_rest = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if name.is_empty() || name.len() > 64 || !ok_first || !ok_rest {
        return Err(format!(
            "'{name}' is not a valid name: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn names() {
        for good in ["mi300x", "MI300X", "a", "x.y_z-1"] {
            super::check_name(good).unwrap();
        }
        for bad in ["", "-x", ".hidden", "a/b", "a b", &"x".repeat(65)] {
            assert!(super::check_name(bad).is_err(), "{bad}");
        }
    }
}
