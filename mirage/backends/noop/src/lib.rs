//! The `noop` backend: no emulator; executions run as they are (useful to
//! check a workload's launch, ranks and environment without a GPU model).

#![forbid(unsafe_code)]

use mirage_core::backend::{self, Registration};
use mirage_core::{Attach, Availability, Backend, BackendError, NodeEmulator, NodeSetup, Resolved};

pub struct Noop;

struct NoopNode;

impl NodeEmulator for NoopNode {
    fn attach(&self) -> Attach {
        Attach::default()
    }
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({ "emulator": "none" })
    }
}

impl Backend for Noop {
    fn kind(&self) -> &'static str {
        "noop"
    }
    fn summary(&self) -> &'static str {
        "no emulator: runs the workload directly"
    }
    fn availability(&self) -> Availability {
        Availability::Available {
            detail: "always".into(),
        }
    }
    fn check(&self, r: &Resolved) -> Result<(), BackendError> {
        backend::no_options(r)?;
        backend::no_plugins(r)
    }
    fn boot_node(&self, _: &NodeSetup) -> Result<Box<dyn NodeEmulator>, BackendError> {
        Ok(Box::new(NoopNode))
    }
}

inventory::submit! { Registration(&Noop) }
