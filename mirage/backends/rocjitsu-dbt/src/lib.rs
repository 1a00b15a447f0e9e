//! The `rocjitsu-dbt` backend: rocjitsu's DBT guest mode. The profile's
//! agent is the guest (a gfx950, e.g. MI355X): the application sees it,
//! while its kernels are translated to gfx942 and run on a host GPU, the
//! agent named by `backend.options.host_agent` (default `MI300X`).
//!
//! At boot, a node gets `<node dir>/host.json` (the host GPU, synthesised
//! as the `rocjitsu` backend does) and `<node dir>/guest.json`: a
//! `dbt_guest` block (guest and host ISA, `execution_backend`, log level)
//! that, for the `simulator` backend, names `host.json` as its
//! `simulator_config` (like `configs/guest_gfx950_on_gfx942.json`). With
//! `execution_backend: "hardware"` the host GPU is "the next KFD down": a
//! rocjitsu daemon the supervisor hosts serving `host.json`
//! (`<node dir>/rocjitsu/daemon.sock`).
//!
//! Executions get exactly the environment the `rocjitsu` launcher gives a
//! guest configuration: `LD_PRELOAD=librocjitsu.so`, `ROCJITSU_CONFIG`,
//! `ROCJITSU_RUNTIME_DIR`, the `lsmod` shim, then
//! [`rocjitsu_kmd::guest_launch::guest_env`] (the same function the
//! launcher calls): `HSA_TOOLS_LIB=librocjitsu_hooks.so`,
//! `HSA_TOOLS_DISABLE_REGISTER`, `ROCJITSU_DBT_CONFIG`, `ROCJITSU_DBT_LOG`,
//! `ROCJITSU_LOG`, `ROCJITSU_DBT_HOST_SOCKET`. Guest mode is local-launch
//! only: every process builds its own GuestKfd and guest agent (there is no
//! guest daemon).

#![forbid(unsafe_code)]

use mirage_core::backend::{self, Registration};
use mirage_core::{
    Agent, Attach, Availability, Backend, BackendError, Catalog, NodeEmulator, NodeSetup, Resolved,
    atomic,
};
use rocjitsu_config::{DbtBackend, DbtGuest, DbtIsa, DbtLogLevel, DbtRevision, GpuConfig, Target};
use rocjitsu_kmd::guest_launch::{EnvChange, GuestLaunch, guest_env};
use rocjitsu_kmd::launch::{Emulator, Gpus};
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub struct RocjitsuDbt;

/// The guest ISA this backend shows, and the host ISA it translates to
/// (what rocjitsu's translator implements).
const GUEST: Target = Target::Gfx950;
const HOST: Target = Target::Gfx942;

/// `backend.options` of a rocjitsu-dbt profile.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    /// The agent of the host GPU (a gfx942): builtin or the user's.
    host_agent: Option<String>,
    /// `simulator` (default: the host GPU emulated in each process) or
    /// `hardware` (a rocjitsu daemon serving the host GPU, hosted by the
    /// session supervisor).
    execution_backend: Option<DbtBackend>,
    /// The guest mode's log level (`dbt_guest.log_level`).
    log_level: Option<DbtLogLevel>,
    /// Host threads of the execution engine (`ROCJITSU_THREADS`).
    threads: Option<u32>,
    /// Seconds before a hung kernel is stopped (`ROCJITSU_WATCHDOG`).
    watchdog_s: Option<u64>,
}

fn options(map: &serde_json::Map<String, serde_json::Value>) -> Result<Options, BackendError> {
    let v = serde_json::Value::Object(map.clone());
    serde_path_to_error::deserialize::<_, Options>(v).map_err(|e| BackendError::Field {
        path: format!("backend.options.{}", e.path()).replace("options..", "options"),
        message: e.into_inner().to_string(),
    })
}

fn catalog() -> Result<Catalog, BackendError> {
    let paths = mirage_core::Paths::from_env().map_err(|e| BackendError::Node(e.to_string()))?;
    Ok(Catalog::new(paths.home, mirage_builtin::builtins()))
}

/// The host agent named by the options, checked to be a gfx942.
fn host_agent(o: &Options) -> Result<Agent, BackendError> {
    let name = o.host_agent.as_deref().unwrap_or("MI300X");
    let field = |message: String| BackendError::Field {
        path: "backend.options.host_agent".into(),
        message,
    };
    let a = catalog()?
        .get::<Agent>(name)
        .map_err(|e| field(e.to_string()))?
        .item;
    if a.gpu.gfx_target != HOST {
        return Err(field(format!(
            "agent {name} is a {}, but the DBT translator runs {} code on a {} host; name a {} agent such as MI300X",
            a.gpu.gfx_target.name(),
            GUEST.name(),
            HOST.name(),
            HOST.name()
        )));
    }
    Ok(a)
}

fn check_guest(r: &Resolved) -> Result<(), BackendError> {
    let agent = r.agent();
    if agent.gpu.gfx_target != GUEST {
        return Err(BackendError::Field {
            path: "topology.agent".into(),
            message: format!(
                "the rocjitsu-dbt backend shows a {} guest, but agent {} is a {}; use a {} agent such as MI355X (for a {} use the rocjitsu backend)",
                GUEST.name(),
                agent.name,
                agent.gpu.gfx_target.name(),
                GUEST.name(),
                agent.gpu.gfx_target.name()
            ),
        });
    }
    let gpus = r.topology().gpus_per_node;
    if gpus != 1 {
        return Err(BackendError::Field {
            path: "topology.gpus_per_node".into(),
            message: format!(
                "DBT guest mode shows one guest GPU per node, got {gpus}; use 1 (and more nodes for more processes)"
            ),
        });
    }
    Ok(())
}

fn field(e: impl std::fmt::Display) -> BackendError {
    BackendError::Node(e.to_string())
}

/// The `dbt_guest` block of a node.
fn guest_block(o: &Options, simulator_config: Option<&Path>) -> DbtGuest {
    DbtGuest {
        enabled: true,
        guest_isa: DbtIsa::Gfx950,
        host_isa: DbtIsa::Gfx942,
        host_gpu_id: 0,
        execution_backend: o.execution_backend.unwrap_or(DbtBackend::Simulator),
        simulator_config: simulator_config.map(|p| p.display().to_string()),
        guest_revision: DbtRevision::Unspecified,
        host_revision: DbtRevision::Unspecified,
        log_level: o.log_level.unwrap_or_default(),
    }
}

struct Node {
    env: Vec<(String, String)>,
    preload: PathBuf,
    hooks: PathBuf,
    shim: PathBuf,
    guest_config: PathBuf,
    host_config: PathBuf,
    host_agent: String,
    guest_agent: String,
    backend: DbtBackend,
    daemon: Option<mirage_backend_rocjitsu::HostedDaemon>,
}

impl Backend for RocjitsuDbt {
    fn kind(&self) -> &'static str {
        "rocjitsu-dbt"
    }
    fn summary(&self) -> &'static str {
        "rocjitsu's DBT guest mode: a gfx950 guest shown, kernels translated and run on a gfx942 host (local launch only)"
    }
    fn availability(&self) -> Availability {
        mirage_core::discovery::rocjitsu_with_hooks("guest mode, local launch only")
    }
    fn check(&self, r: &Resolved) -> Result<(), BackendError> {
        let o = options(&r.profile.backend.options)?;
        host_agent(&o)?;
        check_guest(r)?;
        backend::no_plugins(r)
    }
    fn boot_node(&self, setup: &NodeSetup) -> Result<Box<dyn NodeEmulator>, BackendError> {
        let o = options(setup.options)?;
        let unavailable = |reason| BackendError::Unavailable {
            kind: "rocjitsu-dbt".into(),
            reason,
        };
        let preload = mirage_core::discovery::rocjitsu_preload().map_err(unavailable)?;
        let hooks = mirage_core::discovery::rocjitsu_hooks().map_err(unavailable)?;
        let host = host_agent(&o)?;
        let host_setup = NodeSetup {
            agent: &host,
            gpus: 1,
            ..setup.clone()
        };
        let host_cfg = mirage_backend_rocjitsu::node_config(&host_setup)?;
        let host_config = setup.dir.join("host.json");
        atomic::write_json(&host_config, &host_cfg).map_err(field)?;
        let runtime_dir = setup.dir.join("rocjitsu");
        let shim = mirage_backend_rocjitsu::write_shim(&runtime_dir)
            .map_err(|e| BackendError::Node(format!("{}: {e}", runtime_dir.display())))?;
        let backend = o.execution_backend.unwrap_or(DbtBackend::Simulator);
        let (block, daemon) = match backend {
            DbtBackend::Simulator => (guest_block(&o, Some(&host_config)), None),
            DbtBackend::Hardware => (
                guest_block(&o, None),
                Some(mirage_backend_rocjitsu::start_daemon(
                    &host_cfg,
                    &runtime_dir,
                    o.threads,
                    o.watchdog_s,
                )?),
            ),
        };
        let guest_cfg = GpuConfig {
            schema: None,
            version: rocjitsu_config::CONFIG_VERSION,
            gpus: vec![],
            dbt_guest: Some(block),
            plugins: Vec::new(),
        };
        let guest_config = setup.dir.join("guest.json");
        atomic::write_json(&guest_config, &guest_cfg).map_err(field)?;
        // Loaded back as the launcher loads it (validated, host resolved).
        let loaded = GpuConfig::load(&guest_config).map_err(field)?;
        let mut env = Emulator {
            runtime_dir: &runtime_dir,
            gpus: Gpus::Local {
                config: &guest_config,
                threads: o.threads.map(u64::from),
                watchdog_s: o.watchdog_s,
            },
            log: None,
        }
        .sets();
        // The execution's environment is a clean one: nothing inherited.
        let nothing = |_: &str| None;
        let changes = guest_env(&GuestLaunch {
            config: &loaded,
            config_path: &guest_config,
            hooks: Some(&hooks),
            socket: daemon.as_ref().map(|d| d.socket.as_path()),
            log_given: false,
            env: &nothing,
        })
        .map_err(|e| {
            if let Some(d) = &daemon {
                d.stop();
            }
            BackendError::Node(e)
        })?;
        for c in changes {
            if let EnvChange::Set(k, v) = c {
                env.push((k, v.to_string_lossy().into_owned()));
            }
        }
        tracing::info!(
            "node {}: guest {} ({}) on host {} ({}), {:?} backend, config {}",
            setup.node,
            setup.agent.name,
            GUEST.name(),
            host.name,
            HOST.name(),
            backend,
            guest_config.display()
        );
        Ok(Box::new(Node {
            env,
            preload,
            hooks,
            shim,
            guest_config,
            host_config,
            host_agent: host.name,
            guest_agent: setup.agent.name.clone(),
            backend,
            daemon,
        }))
    }
}

impl NodeEmulator for Node {
    fn attach(&self) -> Attach {
        Attach {
            env: self.env.clone(),
            preload: vec![self.preload.clone()],
            path: vec![self.shim.clone()],
            argv_prefix: vec![],
            host_paths: vec![self.preload.clone(), self.hooks.clone()],
        }
    }

    fn shutdown(&self) {
        if let Some(d) = &self.daemon {
            d.stop();
        }
    }

    fn describe(&self) -> serde_json::Value {
        let (mode, socket) = match &self.daemon {
            None => (
                "local: guest mode is local-launch only (no daemon); each process emulates its own host GPU and shows its own guest".to_string(),
                serde_json::Value::Null,
            ),
            Some(d) => (
                "local: guest mode is local-launch only (no guest daemon); the host GPU is served by the node's rocjitsu daemon (the hardware backend's next KFD down)".to_string(),
                serde_json::json!(d.socket),
            ),
        };
        serde_json::json!({
            "mode": mode,
            "guest": {"agent": self.guest_agent, "isa": GUEST.name()},
            "host": {"agent": self.host_agent, "isa": HOST.name(), "config": self.host_config},
            "execution_backend": match self.backend {
                DbtBackend::Simulator => "simulator",
                DbtBackend::Hardware => "hardware",
            },
            "host_daemon_socket": socket,
            "config": self.guest_config,
            "preload": self.preload,
            "hooks": self.hooks,
        })
    }
}

inventory::submit! { Registration(&RocjitsuDbt) }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked_by_name() {
        let mut o = serde_json::Map::new();
        o.insert("execution_backend".into(), "hardware".into());
        assert_eq!(
            options(&o).unwrap().execution_backend,
            Some(DbtBackend::Hardware)
        );
        o.insert("execution_backend".into(), "gpu".into());
        let e = options(&o).unwrap_err().to_string();
        assert!(
            e.starts_with("backend.options.execution_backend: unknown variant `gpu`"),
            "{e}"
        );
        let mut o = serde_json::Map::new();
        o.insert("host".into(), "MI300X".into());
        let e = options(&o).unwrap_err().to_string();
        assert!(e.starts_with("backend.options.host: unknown field"), "{e}");
    }

    #[test]
    fn host_agent_must_be_a_gfx942() {
        let o = Options::default();
        assert_eq!(host_agent(&o).unwrap().name, "MI300X");
        let o = Options {
            host_agent: Some("MI210".into()),
            ..Default::default()
        };
        let e = host_agent(&o).unwrap_err().to_string();
        assert!(
            e.starts_with("backend.options.host_agent: agent MI210 is a gfx90a"),
            "{e}"
        );
        let o = Options {
            host_agent: Some("MI999".into()),
            ..Default::default()
        };
        let e = host_agent(&o).unwrap_err().to_string();
        assert!(e.starts_with("backend.options.host_agent: "), "{e}");
        assert!(e.contains("MI999"), "{e}");
    }
}
