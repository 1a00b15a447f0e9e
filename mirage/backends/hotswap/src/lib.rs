//! The `hotswap` backend: code objects built for the guest GPU are rewritten
//! at load time for the host's GPU, without presenting a guest identity.
//! Registered so that profiles can name it and `mirage emulators` lists
//! it; it is not available until rocjitsu's DBT can rewrite code objects
//! (after the [dbt] issue).

use mirage_core::backend::Registration;
use mirage_core::{Availability, Backend, BackendError, NodeEmulator, NodeSetup, Resolved};

pub struct Hotswap;

/// Why the backend cannot run yet.
pub const REASON: &str = "needs rocjitsu's code-object rewriting for the host GPU, which comes after DBT guest mode (the [dbt] issue); not built yet";

impl Backend for Hotswap {
    fn kind(&self) -> &'static str {
        "hotswap"
    }
    fn summary(&self) -> &'static str {
        "load-time rewriting of guest-built code objects for the host GPU, no guest identity"
    }
    fn availability(&self) -> Availability {
        Availability::Unavailable {
            reason: REASON.into(),
        }
    }
    fn check(&self, _: &Resolved) -> Result<(), BackendError> {
        Err(self.unavailable())
    }
    fn boot_node(&self, _: &NodeSetup) -> Result<Box<dyn NodeEmulator>, BackendError> {
        Err(self.unavailable())
    }
}

impl Hotswap {
    fn unavailable(&self) -> BackendError {
        BackendError::Unavailable {
            kind: self.kind().into(),
            reason: REASON.into(),
        }
    }
}

inventory::submit! { Registration(&Hotswap) }
