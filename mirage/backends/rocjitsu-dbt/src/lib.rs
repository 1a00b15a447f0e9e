//! The `rocjitsu-dbt` backend: rocjitsu's DBT guest mode (a public guest
//! agent presented to the runtime, kernels translated for and run on the
//! host; `librocjitsu_hooks.so` through HSA_TOOLS_LIB). Registered so that
//! profiles can name it and `mirage emulators` lists it; it is not
//! available until rocjitsu has DBT guest mode (the [dbt] issue).

use mirage_core::backend::Registration;
use mirage_core::{Availability, Backend, BackendError, NodeEmulator, NodeSetup, Resolved};

pub struct RocjitsuDbt;

/// Why the backend cannot run yet.
pub const REASON: &str = "needs rocjitsu's DBT guest mode (librocjitsu_hooks.so, loaded through HSA_TOOLS_LIB), which rocjitsu does not have yet (the [dbt] issue)";

impl Backend for RocjitsuDbt {
    fn kind(&self) -> &'static str {
        "rocjitsu-dbt"
    }
    fn summary(&self) -> &'static str {
        "rocjitsu's DBT guest mode: guest agent shown, kernels run on the host GPU"
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

impl RocjitsuDbt {
    fn unavailable(&self) -> BackendError {
        BackendError::Unavailable {
            kind: self.kind().into(),
            reason: REASON.into(),
        }
    }
}

inventory::submit! { Registration(&RocjitsuDbt) }
