//! The `rocjitsu` backend: each node of a session is a machine with the
//! topology's GPUs of the profile's agent, emulated by rocjitsu.
//!
//! At boot, a node gets a rocjitsu GPU configuration synthesised from the
//! agent (one entry per GPU, each with its own render minor and PCI
//! location; the node's GPUs share an XGMI hive id when the topology links
//! them by XGMI) in `<node dir>/gpu.json`, and a rocjitsu runtime directory
//! `<node dir>/rocjitsu` (the KFD sysfs tree, the `lsmod` shim).
//!
//! By default (`backend.options.mode` = `"daemon"`) the node's GPUs live in
//! a rocjitsu daemon hosted by the session supervisor itself (it links
//! rocjitsu's driver crate), serving that configuration on
//! `<node dir>/rocjitsu/daemon.sock`; every process of the node attaches to
//! it, so they share one emulated machine as processes share a real one
//! (hipIpc, one VRAM, one set of queues). Executions get the environment of
//! `rocjitsu --attach`: `LD_PRELOAD=librocjitsu.so`,
//! `ROCJITSU_DAEMON_SOCKET`, `ROCJITSU_RUNTIME_DIR`, the `lsmod` shim first
//! in PATH, and `log`. With `"mode": "local"` each process emulates its own
//! private GPUs instead (rocjitsu's local mode: `ROCJITSU_CONFIG`,
//! `threads`, `watchdog_s`). The daemon stops with the session.

#![forbid(unsafe_code)]

pub mod live;

use mirage_core::backend::{self, Registration};
use mirage_core::{
    Attach, Availability, Backend, BackendError, GpuLink, NodeEmulator, NodeSetup, Resolved, atomic,
};
use rocjitsu_config::GpuConfig;
use rocjitsu_kmd::launch::{Emulator, Gpus};
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub struct Rocjitsu;

/// The `backend.options` keys of the rocjitsu backend (the hotswap
/// backend passes these through).
pub const OPTION_KEYS: &[&str] = &["threads", "watchdog_s", "log", "mode", "live_metrics"];

/// `backend.options` of a rocjitsu profile.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    /// Host threads of the execution engine (`ROCJITSU_THREADS`).
    threads: Option<u32>,
    /// Seconds before a hung kernel is stopped (`ROCJITSU_WATCHDOG`).
    watchdog_s: Option<u64>,
    /// A tracing filter for rocjitsu's log (`ROCJITSU_LOG`).
    log: Option<String>,
    /// `daemon` (default: the node's processes share one emulated machine)
    /// or `local` (each process emulates its own).
    mode: Option<String>,
    /// Count live metrics in the node's daemon (default true; daemon mode
    /// only): what the dashboard charts.
    live_metrics: Option<bool>,
}

fn options(map: &serde_json::Map<String, serde_json::Value>) -> Result<Options, BackendError> {
    let v = serde_json::Value::Object(map.clone());
    let o = serde_path_to_error::deserialize::<_, Options>(v).map_err(|e| BackendError::Field {
        path: format!("backend.options.{}", e.path()).replace("options..", "options"),
        message: e.into_inner().to_string(),
    })?;
    match o.mode.as_deref() {
        None | Some("daemon") | Some("local") => Ok(o),
        Some(m) => Err(BackendError::Field {
            path: "backend.options.mode".into(),
            message: format!("'{m}' is neither \"daemon\" nor \"local\""),
        }),
    }
}

/// How executions reach the node's emulator.
enum Mode {
    /// Every process emulates its own GPUs (rocjitsu local mode).
    Local,
    /// The node's daemon, serving in this process (the supervisor).
    Daemon(HostedDaemon),
}

/// A rocjitsu daemon served by a thread of this process (the session
/// supervisor) until [`HostedDaemon::stop`].
pub struct HostedDaemon {
    pub socket: PathBuf,
    /// Its live counters, when it counts them.
    pub live: Option<std::sync::Arc<live::Live>>,
    daemon: std::sync::Arc<rocjitsu_kmd::daemon::Daemon>,
    server: std::sync::Mutex<Option<std::thread::JoinHandle<Result<(), String>>>>,
}

impl HostedDaemon {
    /// The daemon's own accounting (clients, queues, VRAM per GPU).
    pub fn status(&self) -> rocjitsu_kmd::daemon::Status {
        self.daemon.status()
    }

    /// Stops the daemon and waits for its thread.
    pub fn stop(&self) {
        (self.daemon.stopper())();
        if let Some(t) = self.server.lock().unwrap_or_else(|e| e.into_inner()).take() {
            match t.join() {
                Ok(Err(e)) => tracing::warn!("the node's daemon: {e}"),
                Err(_) => tracing::warn!("the node's daemon thread panicked"),
                Ok(Ok(())) => {}
            }
        }
    }
}

impl Mode {
    fn name(&self) -> &'static str {
        match self {
            Mode::Local => "local",
            Mode::Daemon(_) => "daemon",
        }
    }
}

struct Node {
    mode: Mode,
    preload: PathBuf,
    config: PathBuf,
    runtime_dir: PathBuf,
    shim: PathBuf,
    gpus: u32,
    target: &'static str,
    options: Options,
    node: u32,
    vram_size: Vec<u64>,
}

/// Creates (mode 0700) or checks the node's runtime directory (it must be
/// a real directory of ours nobody else can write to) and writes the
/// `lsmod` shim (as the rocjitsu launcher does) in it; returns the shim's
/// directory.
pub fn write_shim(runtime_dir: &Path) -> std::io::Result<PathBuf> {
    let dir = rocjitsu_kmd::PrivateDir::ensure(runtime_dir, "MIRAGE_RUNTIME_DIR")?;
    rocjitsu_kmd::write_lsmod_shim(&dir)
}

fn mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x0000_0100_0000_01b3)
}

fn hash(words: &[&[u8]]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for w in words {
        for &b in *w {
            h = mix(h, u64::from(b));
        }
        h = mix(h, 0xff);
    }
    h
}

/// The rocjitsu configuration of one node: `gpus` copies of the agent's
/// GPU, each its own device (render minor 128+i, PCI bus +i, unique id),
/// in one XGMI hive when linked by XGMI.
pub fn node_config(setup: &NodeSetup) -> Result<GpuConfig, BackendError> {
    let session = setup.session.as_bytes();
    let node = setup.node.to_le_bytes();
    let hive = match setup.gpu_link {
        GpuLink::Xgmi if setup.gpus > 1 => hash(&[b"hive", session, &node]) | 1,
        _ => 0,
    };
    let mut gpus = vec![];
    for i in 0..setup.gpus {
        let mut g = setup.agent.gpu.clone();
        g.kfd.drm_render_minor = 128 + i;
        g.pci.location_id = g.pci.location_id.wrapping_add(i << 8);
        g.kfd.unique_id = hash(&[b"gpu", session, &node, &i.to_le_bytes()]);
        g.kfd.hive_id = hive;
        gpus.push(g);
    }
    let cfg = GpuConfig {
        schema: None,
        version: rocjitsu_config::CONFIG_VERSION,
        gpus,
        dbt_guest: None,
        plugins: Vec::new(),
    };
    cfg.validate().map_err(|(p, m)| BackendError::Field {
        path: format!("topology.agent.{}", p.replacen("gpus[0]", "gpu", 1)),
        message: m,
    })?;
    Ok(cfg)
}

impl Backend for Rocjitsu {
    fn kind(&self) -> &'static str {
        "rocjitsu"
    }
    fn summary(&self) -> &'static str {
        "rocjitsu's emulated AMD GPUs (a daemon per node hosted by the session; LD_PRELOAD of librocjitsu.so)"
    }
    fn availability(&self) -> Availability {
        match mirage_core::discovery::rocjitsu_preload() {
            Ok(p) => Availability::Available {
                detail: format!(
                    "{} (daemon mode; options.mode \"local\" for local mode)",
                    p.display()
                ),
            },
            Err(reason) => Availability::Unavailable { reason },
        }
    }
    fn check(&self, r: &Resolved) -> Result<(), BackendError> {
        options(&r.profile.backend.options)?;
        backend::no_plugins(r)
    }
    fn boot_node(&self, setup: &NodeSetup) -> Result<Box<dyn NodeEmulator>, BackendError> {
        let options = options(setup.options)?;
        let preload = mirage_core::discovery::rocjitsu_preload().map_err(|reason| {
            BackendError::Unavailable {
                kind: "rocjitsu".into(),
                reason,
            }
        })?;
        let cfg = node_config(setup)?;
        let config = setup.dir.join("gpu.json");
        atomic::write_json(&config, &cfg).map_err(|e| BackendError::Node(e.to_string()))?;
        let runtime_dir = setup.dir.join("rocjitsu");
        let shim = write_shim(&runtime_dir)
            .map_err(|e| BackendError::Node(format!("{}: {e}", runtime_dir.display())))?;
        let mode = if options.mode.as_deref() == Some("local") {
            Mode::Local
        } else {
            Mode::Daemon(start_daemon_with(
                &cfg,
                &runtime_dir,
                options.threads,
                options.watchdog_s,
                options
                    .live_metrics
                    .unwrap_or(true)
                    .then(|| live::Live::new(cfg.gpus.len())),
            )?)
        };
        tracing::info!(
            "node {}: {} x {} ({}), config {}",
            setup.node,
            setup.gpus,
            setup.agent.name,
            setup.agent.gpu.gfx_target,
            config.display()
        );
        Ok(Box::new(Node {
            mode,
            preload,
            config,
            runtime_dir,
            shim,
            gpus: setup.gpus,
            target: setup.agent.gpu.gfx_target.name(),
            options,
            node: setup.node,
            vram_size: cfg.gpus.iter().map(|g| g.memory.size_bytes).collect(),
        }))
    }
}

/// Starts a daemon serving `cfg` in this process (the session supervisor),
/// on `<runtime_dir>/daemon.sock`.
pub fn start_daemon(
    cfg: &GpuConfig,
    runtime_dir: &Path,
    threads: Option<u32>,
    watchdog_s: Option<u64>,
) -> Result<HostedDaemon, BackendError> {
    start_daemon_with(cfg, runtime_dir, threads, watchdog_s, None)
}

/// [`start_daemon`], counting live metrics into `live` when given.
pub fn start_daemon_with(
    cfg: &GpuConfig,
    runtime_dir: &Path,
    threads: Option<u32>,
    watchdog_s: Option<u64>,
    live: Option<std::sync::Arc<live::Live>>,
) -> Result<HostedDaemon, BackendError> {
    use rocjitsu_kmd::daemon::{Daemon, DaemonOptions};
    let socket = runtime_dir.join("daemon.sock");
    let plugins = live.iter().map(|l| l.plugin()).collect();
    let daemon = Daemon::bind_with_plugins(
        DaemonOptions {
            driver: rocjitsu_kmd::DriverOptions {
                config: cfg.clone(),
                runtime_dir: runtime_dir.to_path_buf(),
                threads: threads.unwrap_or(0) as usize,
                watchdog: watchdog_s
                    .filter(|&s| s > 0)
                    .map(std::time::Duration::from_secs),
            },
            socket: socket.clone(),
            owner: None,
            limits: Default::default(),
            restore: None,
        },
        plugins,
    )
    .map_err(|e| BackendError::Node(format!("the node's rocjitsu daemon: {e}")))?;
    let daemon = std::sync::Arc::new(daemon);
    let d = daemon.clone();
    let server = std::thread::Builder::new()
        .name("rocjitsu-daemon".into())
        .spawn(move || d.run())
        .map_err(|e| BackendError::Node(format!("cannot start the daemon's thread: {e}")))?;
    Ok(HostedDaemon {
        socket,
        live,
        daemon,
        server: std::sync::Mutex::new(Some(server)),
    })
}

impl NodeEmulator for Node {
    fn attach(&self) -> Attach {
        let gpus = match &self.mode {
            Mode::Local => Gpus::Local {
                config: &self.config,
                threads: self.options.threads.map(u64::from),
                watchdog_s: self.options.watchdog_s,
            },
            Mode::Daemon(HostedDaemon { socket, .. }) => Gpus::Daemon { socket },
        };
        let env = Emulator {
            runtime_dir: &self.runtime_dir,
            gpus,
            log: self.options.log.as_deref(),
        }
        .sets();
        Attach {
            env,
            preload: vec![self.preload.clone()],
            path: vec![self.shim.clone()],
            argv_prefix: vec![],
            host_paths: vec![self.preload.clone()],
        }
    }

    fn shutdown(&self) {
        if let Mode::Daemon(d) = &self.mode {
            d.stop();
        }
    }

    fn sample(&self, after_event: u64) -> Option<mirage_core::metrics::NodeSample> {
        let Mode::Daemon(d) = &self.mode else {
            return None;
        };
        let live = d.live.as_ref()?;
        let st = d.status();
        Some(live.sample(
            self.node,
            after_event,
            &st.vram_used,
            &self.vram_size,
            &st.queues_by_gpu,
        ))
    }

    fn describe(&self) -> serde_json::Value {
        // Written into the session's state at boot: what stays true (the
        // daemon's own accounting: `rocjitsu daemon-status --socket S`).
        let socket = match &self.mode {
            Mode::Daemon(d) => serde_json::json!(d.socket),
            Mode::Local => serde_json::Value::Null,
        };
        serde_json::json!({
            "mode": self.mode.name(),
            "daemon_socket": socket,
            "gpus": self.gpus,
            "target": self.target,
            "config": self.config,
            "runtime_dir": self.runtime_dir,
            "preload": self.preload,
        })
    }
}

inventory::submit! { Registration(&Rocjitsu) }

#[cfg(test)]
mod tests {
    use super::*;
    use mirage_core::Agent;
    use rocjitsu_config::Target;

    fn agent() -> Agent {
        Agent {
            name: "MI300X".into(),
            description: String::new(),
            gpu: GpuConfig::builtin(Target::Gfx942).gpus[0].clone(),
        }
    }

    fn setup<'a>(
        a: &'a Agent,
        o: &'a serde_json::Map<String, serde_json::Value>,
        gpus: u32,
        link: GpuLink,
    ) -> NodeSetup<'a> {
        NodeSetup {
            session: "s1",
            node: 1,
            dir: std::env::temp_dir(),
            agent: a,
            gpus,
            gpu_link: link,
            options: o,
            plugins: &[],
        }
    }

    #[test]
    fn config_has_one_device_per_gpu() {
        let a = agent();
        let o = Default::default();
        let cfg = node_config(&setup(&a, &o, 4, GpuLink::Xgmi)).unwrap();
        assert_eq!(cfg.gpus.len(), 4);
        let minors: Vec<u32> = cfg.gpus.iter().map(|g| g.kfd.drm_render_minor).collect();
        assert_eq!(minors, [128, 129, 130, 131]);
        let mut locs: Vec<u32> = cfg.gpus.iter().map(|g| g.pci.location_id).collect();
        locs.dedup();
        assert_eq!(locs.len(), 4);
        assert!(
            cfg.gpus
                .iter()
                .all(|g| g.kfd.hive_id != 0 && g.kfd.hive_id == cfg.gpus[0].kfd.hive_id)
        );
        // The synthesised file loads with rocjitsu's own loader.
        let text = serde_json::to_string(&cfg).unwrap();
        GpuConfig::from_str("synth", &text).unwrap();
        let pcie = node_config(&setup(&a, &o, 2, GpuLink::Pcie)).unwrap();
        assert!(pcie.gpus.iter().all(|g| g.kfd.hive_id == 0));
        let one = node_config(&setup(&a, &o, 1, GpuLink::Xgmi)).unwrap();
        assert_eq!(one.gpus[0].kfd.hive_id, 0);
    }

    #[test]
    fn options_are_checked_by_name() {
        let mut o = serde_json::Map::new();
        o.insert("threads".into(), 4.into());
        assert_eq!(options(&o).unwrap().threads, Some(4));
        o.insert("thread".into(), 4.into());
        let e = options(&o).unwrap_err().to_string();
        assert!(
            e.starts_with("backend.options.thread: unknown field `thread`"),
            "{e}"
        );
        let mut o = serde_json::Map::new();
        o.insert("watchdog_s".into(), "ten".into());
        let e = options(&o).unwrap_err().to_string();
        assert!(
            e.starts_with("backend.options.watchdog_s: invalid type"),
            "{e}"
        );
    }
}
