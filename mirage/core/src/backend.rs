//! The emulator-backend seam. A backend is chosen per profile by
//! `backend.kind`; backends register themselves with [`inventory`] (one
//! crate each under `mirage/backends/`), so the binary that links a backend
//! crate knows it.
//!
//! The contract, per session:
//! 1. [`Backend::check`] validates the profile's backend options and plugins
//!    before anything starts (errors name the field).
//! 2. When the session boots, [`Backend::boot_node`] prepares the emulated
//!    machine of each node (files in the node's directory, and whatever
//!    long-lived emulator the backend runs; it lives inside the session's
//!    supervisor process) and returns a [`NodeEmulator`].
//! 3. Every execution on that node asks [`NodeEmulator::attach`] what it
//!    needs: environment, preloads, PATH entries, argv prefix, and the host
//!    paths that must be visible (at the same path) inside a container or
//!    sysroot.
//! 4. At teardown, [`NodeEmulator::shutdown`] ends the node's emulator.

use crate::model::{Agent, GpuLink, Resolved};
use std::path::PathBuf;

/// Whether a backend can run here.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum Availability {
    /// Usable; `detail` says with what (e.g. the library found).
    Available { detail: String },
    /// Not usable; `reason` says why and what would fix it.
    Unavailable { reason: String },
}

/// An error from a backend, naming the object and what would fix it.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// A profile field the backend rejects: `path` is its JSON path.
    #[error("{path}: {message}")]
    Field { path: String, message: String },
    /// The backend cannot run here.
    #[error("backend {kind} is not available here: {reason}")]
    Unavailable { kind: String, reason: String },
    /// Preparing a node failed.
    #[error("{0}")]
    Node(String),
}

/// What a backend is told about one node of a session.
#[derive(Debug, Clone)]
pub struct NodeSetup<'a> {
    pub session: &'a str,
    pub node: u32,
    /// A directory private to this node inside the session directory
    /// (visible to executions at the same path).
    pub dir: PathBuf,
    pub agent: &'a Agent,
    pub gpus: u32,
    pub gpu_link: GpuLink,
    /// The profile's `backend.options`.
    pub options: &'a serde_json::Map<String, serde_json::Value>,
    pub plugins: &'a [String],
}

/// What one execution on a node needs from the emulator.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attach {
    /// Variables to set.
    pub env: Vec<(String, String)>,
    /// Libraries to put first in `LD_PRELOAD`.
    pub preload: Vec<PathBuf>,
    /// Directories to put first in `PATH`.
    pub path: Vec<PathBuf>,
    /// Words to put before the command (a launcher).
    pub argv_prefix: Vec<String>,
    /// Host paths the execution reads (libraries, configurations, sockets):
    /// bound at the same path into a container or sysroot.
    pub host_paths: Vec<PathBuf>,
}

/// The emulated machine of one node, alive for the session.
pub trait NodeEmulator: Send + Sync {
    /// What an execution on this node needs.
    fn attach(&self) -> Attach;
    /// A description for `mirage session show` (files, GPUs, mode).
    fn describe(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    /// Ends the node's emulator (the session is stopping).
    fn shutdown(&self) {}
    /// The node's live counters per GPU, with the dispatch events whose
    /// id is above `after_event`; `None` when the emulator counts nothing
    /// the supervisor can read (e.g. every process emulates its own GPUs).
    fn sample(&self, _after_event: u64) -> Option<crate::metrics::NodeSample> {
        None
    }
}

/// An emulator backend.
pub trait Backend: Sync {
    /// The `backend.kind` that selects it.
    fn kind(&self) -> &'static str;
    /// One line for `mirage emulators`.
    fn summary(&self) -> &'static str;
    /// Whether it can run here.
    fn availability(&self) -> Availability;
    /// Checks a profile's backend options and plugins.
    fn check(&self, profile: &Resolved) -> Result<(), BackendError>;
    /// Prepares one node's emulated machine.
    fn boot_node(&self, setup: &NodeSetup) -> Result<Box<dyn NodeEmulator>, BackendError>;
}

/// A backend's registration (`inventory::submit!`).
pub struct Registration(pub &'static dyn Backend);

inventory::collect!(Registration);

/// Every registered backend, by kind.
pub fn all() -> Vec<&'static dyn Backend> {
    let mut v: Vec<&'static dyn Backend> = inventory::iter::<Registration>
        .into_iter()
        .map(|r| r.0)
        .collect();
    v.sort_by_key(|b| b.kind());
    v
}

/// The backend of a kind, or an error listing the known kinds.
pub fn find(kind: &str) -> Result<&'static dyn Backend, BackendError> {
    all()
        .into_iter()
        .find(|b| b.kind() == kind)
        .ok_or_else(|| BackendError::Field {
            path: "backend.kind".into(),
            message: format!(
                "unknown backend '{kind}'; known: {}",
                all()
                    .iter()
                    .map(|b| b.kind())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

/// Checks that a profile's backend exists, is available, and accepts the
/// profile.
pub fn check_profile(r: &Resolved) -> Result<&'static dyn Backend, BackendError> {
    let b = find(&r.profile.backend.kind)?;
    if let Availability::Unavailable { reason } = b.availability() {
        return Err(BackendError::Unavailable {
            kind: b.kind().into(),
            reason,
        });
    }
    b.check(r)?;
    Ok(b)
}

/// Rejects options for a backend that takes none.
pub fn no_options(r: &Resolved) -> Result<(), BackendError> {
    if let Some(k) = r.profile.backend.options.keys().next() {
        return Err(BackendError::Field {
            path: format!("backend.options.{k}"),
            message: format!("backend {} takes no options", r.profile.backend.kind),
        });
    }
    Ok(())
}

/// Rejects plugins for a backend that has none.
pub fn no_plugins(r: &Resolved) -> Result<(), BackendError> {
    if let Some(p) = r.profile.plugins.first() {
        return Err(BackendError::Field {
            path: "plugins[0]".into(),
            message: format!(
                "backend {} has no plugin '{p}' (it has no plugins)",
                r.profile.backend.kind
            ),
        });
    }
    Ok(())
}
