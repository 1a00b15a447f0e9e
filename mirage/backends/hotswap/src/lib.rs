//! The `hotswap` backend: the `rocjitsu` backend's emulated GPUs (the
//! profile's agent, e.g. MI300X, gfx942, shown as it is), plus load-time
//! rewriting of guest-built code objects: a gfx950 code object the
//! application loads (`hipModuleLoad`, HSA code-object readers from memory
//! or a file) is translated to gfx942 by rocjitsu's DBT and loaded on the
//! host GPU; code objects for the host GPU pass through.
//!
//! On top of the rocjitsu backend's environment (daemon or local mode,
//! `backend.options.mode`; no GuestKfd is involved, so both work),
//! executions get `librocjitsu_hooks.so` in `LD_PRELOAD` (its
//! `hipModuleLoad`/`hipModuleLoadData(Ex)` wrappers: HIP refuses a module
//! for another GPU before the HSA loader sees it) and in `HSA_TOOLS_LIB`
//! (the HSA code-object loader hooks), in its hotswap mode
//! (`ROCJITSU_DBT_MODE=hotswap`; `HSA_TOOLS_DISABLE_REGISTER=1`) and
//! `ROCJITSU_DBT_CONFIG=<node dir>/hotswap.json`, a `dbt_guest` block
//! naming the guest and host ISAs and the log level.

#![forbid(unsafe_code)]

use mirage_core::backend::{self, Registration};
use mirage_core::{
    Attach, Availability, Backend, BackendError, NodeEmulator, NodeSetup, Resolved, atomic,
};
use rocjitsu_config::{DbtBackend, DbtGuest, DbtIsa, DbtLogLevel, DbtRevision, GpuConfig, Target};
use serde::Deserialize;
use std::path::PathBuf;

pub struct Hotswap;

/// The options of this backend; the others go to the rocjitsu backend.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    /// The log level of the hooks (`ROCJITSU_DBT_LOG`).
    dbt_log_level: Option<DbtLogLevel>,
}

type Map = serde_json::Map<String, serde_json::Value>;

/// Splits `backend.options` into this backend's and the rocjitsu
/// backend's; a key neither knows is an error naming it.
fn split(map: &Map) -> Result<(Options, Map), BackendError> {
    let (mut own, mut rest) = (Map::new(), Map::new());
    for (k, v) in map {
        if mirage_backend_rocjitsu::OPTION_KEYS.contains(&k.as_str()) {
            rest.insert(k.clone(), v.clone());
        } else {
            own.insert(k.clone(), v.clone());
        }
    }
    let o = serde_path_to_error::deserialize::<_, Options>(serde_json::Value::Object(own))
        .map_err(|e| BackendError::Field {
            path: format!("backend.options.{}", e.path()).replace("options..", "options"),
            message: format!(
                "{} (the hotswap backend takes dbt_log_level and the rocjitsu backend's {})",
                e.into_inner(),
                mirage_backend_rocjitsu::OPTION_KEYS.join(", ")
            ),
        })?;
    Ok((o, rest))
}

fn check_host(agent: &mirage_core::Agent) -> Result<(), BackendError> {
    if agent.gpu.gfx_target != Target::Gfx942 {
        return Err(BackendError::Field {
            path: "topology.agent".into(),
            message: format!(
                "the hotswap backend translates gfx950 code objects for a gfx942 host, but agent {} is a {}; use a gfx942 agent such as MI300X",
                agent.name,
                agent.gpu.gfx_target.name()
            ),
        });
    }
    Ok(())
}

struct Node {
    inner: Box<dyn NodeEmulator>,
    hooks: PathBuf,
    config: PathBuf,
    log: DbtLogLevel,
}

impl Backend for Hotswap {
    fn kind(&self) -> &'static str {
        "hotswap"
    }
    fn summary(&self) -> &'static str {
        "rocjitsu's emulated GPUs, loading gfx950 code objects by translating them for the gfx942 host at load time (no guest identity)"
    }
    fn availability(&self) -> Availability {
        mirage_core::discovery::rocjitsu_with_hooks("hotswap mode; daemon or local")
    }
    fn check(&self, r: &Resolved) -> Result<(), BackendError> {
        let (_, rest) = split(&r.profile.backend.options)?;
        check_host(r.agent())?;
        let mut inner = r.clone();
        inner.profile.backend.options = rest;
        mirage_backend_rocjitsu::Rocjitsu.check(&inner)?;
        backend::no_plugins(r)
    }
    fn boot_node(&self, setup: &NodeSetup) -> Result<Box<dyn NodeEmulator>, BackendError> {
        let (o, rest) = split(setup.options)?;
        check_host(setup.agent)?;
        let hooks = mirage_core::discovery::rocjitsu_hooks().map_err(|reason| {
            BackendError::Unavailable {
                kind: "hotswap".into(),
                reason,
            }
        })?;
        let log = o.dbt_log_level.unwrap_or_default();
        let block = GpuConfig {
            schema: None,
            version: rocjitsu_config::CONFIG_VERSION,
            gpus: vec![],
            dbt_guest: Some(DbtGuest {
                enabled: true,
                guest_isa: DbtIsa::Gfx950,
                host_isa: DbtIsa::Gfx942,
                host_gpu_id: 0,
                // Not used by hotswap (the host GPUs are the node's own);
                // `hardware` keeps the block free of a simulator config.
                execution_backend: DbtBackend::Hardware,
                simulator_config: None,
                guest_revision: DbtRevision::Unspecified,
                host_revision: DbtRevision::Unspecified,
                log_level: log,
            }),
            plugins: Vec::new(),
        };
        block
            .validate()
            .map_err(|(p, m)| BackendError::Node(format!("hotswap.json: {p}: {m}")))?;
        let config = setup.dir.join("hotswap.json");
        atomic::write_json(&config, &block).map_err(|e| BackendError::Node(e.to_string()))?;
        let inner_setup = NodeSetup {
            options: &rest,
            ..setup.clone()
        };
        let inner = mirage_backend_rocjitsu::Rocjitsu.boot_node(&inner_setup)?;
        tracing::info!(
            "node {}: hotswap of gfx950 code objects on {} x {}",
            setup.node,
            setup.gpus,
            setup.agent.name
        );
        Ok(Box::new(Node {
            inner,
            hooks,
            config,
            log,
        }))
    }
}

impl NodeEmulator for Node {
    fn attach(&self) -> Attach {
        let mut a = self.inner.attach();
        a.env.extend([
            ("HSA_TOOLS_LIB".into(), self.hooks.display().to_string()),
            ("HSA_TOOLS_DISABLE_REGISTER".into(), "1".into()),
            (rocjitsu_config::env::DBT_MODE.into(), "hotswap".into()),
            (
                rocjitsu_config::env::DBT_CONFIG.into(),
                self.config.display().to_string(),
            ),
            (rocjitsu_config::env::DBT_LOG.into(), self.log.name().into()),
        ]);
        // Also preloaded: HIP checks a module's target before the HSA
        // loader sees it, so the library's hipModuleLoad* wrappers must
        // come first.
        a.preload.push(self.hooks.clone());
        a.host_paths.push(self.hooks.clone());
        a
    }
    fn shutdown(&self) {
        self.inner.shutdown();
    }
    fn sample(&self, after_event: u64) -> Option<mirage_core::metrics::NodeSample> {
        self.inner.sample(after_event)
    }
    fn describe(&self) -> serde_json::Value {
        let mut v = self.inner.describe();
        if let Some(m) = v.as_object_mut() {
            m.insert(
                "hotswap".into(),
                serde_json::json!({
                    "translates": "gfx950 code objects loaded on a gfx942 agent",
                    "hooks": self.hooks,
                    "config": self.config,
                }),
            );
        }
        v
    }
}

inventory::submit! { Registration(&Hotswap) }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_split_between_the_backends() {
        let mut m = Map::new();
        m.insert("mode".into(), "local".into());
        m.insert("dbt_log_level".into(), "info".into());
        let (o, rest) = split(&m).unwrap();
        assert_eq!(o.dbt_log_level, Some(DbtLogLevel::Info));
        assert_eq!(rest.len(), 1);
        m.insert("translate".into(), true.into());
        let e = split(&m).unwrap_err().to_string();
        assert!(
            e.starts_with("backend.options.translate: unknown field"),
            "{e}"
        );
        let mut m = Map::new();
        m.insert("dbt_log_level".into(), "loud".into());
        let e = split(&m).unwrap_err().to_string();
        assert!(e.starts_with("backend.options.dbt_log_level: "), "{e}");
    }
}
