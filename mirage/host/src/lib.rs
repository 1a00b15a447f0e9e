//! The session supervisor: one process owns each session. It boots the
//! nodes (each node's emulator through the profile's backend, and a
//! container per node when the profile names an image), serves the control
//! socket, runs executions (one process, or ranks across nodes with their
//! output prefixed), and at the end stops everything it started.
//!
//! `mirage session start` runs it as a detached process ([`supervise`]);
//! `mirage run` runs it inside the `mirage run` process itself.
//!
//! Never leaking: every process an execution starts carries the session's
//! and the execution's tags in its environment and leads its own process
//! group, with SIGKILL on the supervisor's death; teardown signals the
//! groups, then every process the process table shows with the session's
//! tag, removes the containers and the network, and removes the session
//! directory; the session lock dies with the process.

pub mod cleanup;
mod compat;
mod control;
mod exec;
pub mod manage;
pub mod pty;
pub mod spawn;

pub use exec::{Io, Launch, Running, Target};

use mirage_container::{Engine, NodeSpec};
use mirage_core::backend;
use mirage_core::model::Root;
use mirage_core::session::{
    self, LABEL_RUNTIME, LABEL_SESSION, LABEL_SESSION_DIR, Mode, NodeState, SessionDir,
    SessionLock, SessionState, Status,
};
use mirage_core::{NodeEmulator, NodeSetup, Resolved};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// An error of the supervisor, naming the session and what would fix it.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("session {session}: {message}")]
    Session { session: String, message: String },
}

pub type Result<T, E = HostError> = std::result::Result<T, E>;

/// Where one node's executions run.
#[derive(Debug, Clone)]
enum NodeRoot {
    Host,
    Sysroot(PathBuf),
    Container(String),
}

struct Node {
    index: u32,
    hostname: String,
    address: String,
    host_id: String,
    dir: PathBuf,
    root: NodeRoot,
    emulator: Box<dyn NodeEmulator>,
    /// Directories of libraries bridged into the guest (LD_LIBRARY_PATH).
    bridge: Option<PathBuf>,
}

/// A booted session.
pub struct Session {
    pub dir: SessionDir,
    paths_runtime: PathBuf,
    resolved: Resolved,
    mode: Mode,
    nodes: Vec<Node>,
    engine: Option<Arc<Engine>>,
    network: Option<String>,
    master_port: u16,
    /// The directory `mirage run`/`session start` ran in, visible in guests.
    boot_cwd: Option<PathBuf>,
    state: Mutex<SessionState>,
    spawner: spawn::Spawner,
    execs: Mutex<BTreeMap<u64, Arc<exec::Shared>>>,
    next_exec: AtomicU64,
    stopping: AtomicBool,
    torn_down: Mutex<bool>,
    stop_cv: (Mutex<bool>, Condvar),
    _lock: SessionLock,
}

/// How to boot.
pub struct BootOptions {
    pub dir: SessionDir,
    pub lock: SessionLock,
    pub runtime: PathBuf,
    pub mode: Mode,
    pub resolved: Resolved,
    pub cwd: Option<PathBuf>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(29500)
}

impl Session {
    fn err(&self, message: impl Into<String>) -> HostError {
        HostError::Session {
            session: self.dir.id.clone(),
            message: message.into(),
        }
    }

    /// Boots a session: every node's emulator, containers, network. On
    /// failure, whatever was started is removed again before returning.
    pub fn boot(o: BootOptions) -> Result<Arc<Session>> {
        let id = o.dir.id.clone();
        let fail = |m: String| HostError::Session {
            session: id.clone(),
            message: m,
        };
        let backend = backend::check_profile(&o.resolved)
            .map_err(|e| fail(format!("profile '{}': {e}", o.resolved.profile.name)))?;
        let root = o.resolved.root();
        let topo = o.resolved.topology().clone();
        let engine = match &root {
            Root::Image(_) => Some(Arc::new(Engine::detect().map_err(|e| fail(e.to_string()))?)),
            _ => None,
        };
        let state = SessionState {
            id: id.clone(),
            mode: o.mode,
            status: Status::Booting,
            // SAFETY: getpid has no preconditions.
            supervisor_pid: unsafe { libc::getpid() } as u32,
            started: session::now(),
            profile: o.resolved.profile.name.clone(),
            backend: backend.kind().into(),
            root: root.to_string(),
            master_port: 0,
            network: None,
            engine: engine
                .as_ref()
                .map(|e| format!("{} ({})", e.program.display(), e.version)),
            nodes: vec![],
        };
        o.dir.write_state(&state).map_err(|e| fail(e.to_string()))?;
        let cwd = o.cwd.filter(|c| c != Path::new("/") && c.is_dir());
        let mut s = Session {
            dir: o.dir,
            paths_runtime: o.runtime,
            resolved: o.resolved,
            mode: o.mode,
            nodes: vec![],
            engine,
            network: None,
            master_port: 0,
            boot_cwd: cwd,
            state: Mutex::new(state),
            spawner: spawn::Spawner::start(),
            execs: Mutex::new(BTreeMap::new()),
            next_exec: AtomicU64::new(1),
            stopping: AtomicBool::new(false),
            torn_down: Mutex::new(false),
            stop_cv: (Mutex::new(false), Condvar::new()),
            _lock: o.lock,
        };
        match s.boot_nodes(backend, &topo) {
            Ok(()) => {}
            Err(e) => {
                tracing::error!("{e}");
                s.remove_nodes();
                return Err(e);
            }
        }
        {
            let mut st = s.state.lock().unwrap_or_else(|e| e.into_inner());
            st.status = Status::Running;
            st.master_port = s.master_port;
            st.network = s.network.clone();
            st.nodes = s
                .nodes
                .iter()
                .map(|n| NodeState {
                    index: n.index,
                    hostname: n.hostname.clone(),
                    gpus: topo.gpus_per_node,
                    address: n.address.clone(),
                    host_id: n.host_id.clone(),
                    container: match &n.root {
                        NodeRoot::Container(c) => Some(c.clone()),
                        _ => None,
                    },
                    dir: n.dir.clone(),
                    emulator: n.emulator.describe(),
                })
                .collect();
            s.dir.write_state(&st).map_err(|e| fail(e.to_string()))?;
        }
        tracing::info!(
            "session {} running: profile {}, {} node(s) x {} {}, {}",
            s.dir.id,
            s.resolved.profile.name,
            topo.nodes,
            topo.gpus_per_node,
            s.resolved.agent().name,
            s.resolved.root()
        );
        Ok(Arc::new(s))
    }

    fn labels(&self) -> BTreeMap<String, String> {
        [
            (LABEL_SESSION.to_string(), self.dir.id.clone()),
            (
                LABEL_SESSION_DIR.to_string(),
                self.dir.dir.display().to_string(),
            ),
            (
                LABEL_RUNTIME.to_string(),
                self.paths_runtime.display().to_string(),
            ),
        ]
        .into()
    }

    fn boot_nodes(
        &mut self,
        backend: &'static dyn mirage_core::Backend,
        topo: &mirage_core::Topology,
    ) -> Result<()> {
        let root = self.resolved.root();
        if let Root::Sysroot(r) = &root
            && !r.join("bin/sh").exists()
        {
            return Err(self.err(format!(
                "sysroot {} is missing or not a root file system (no bin/sh): build it with rocjitsu's `scripts/sysroot.sh --rocm 6 build` (ROCm 6.4; `--rocm 7` for 7.2), or give another with --sysroot",
                r.display()
            )));
        }
        if let (Root::Image(image), Some(engine)) = (&root, &self.engine)
            && !engine.image_exists(image)
        {
            return Err(
                self.err(mirage_container::ContainerError::NoImage(image.clone()).to_string())
            );
        }
        let mut emulators = vec![];
        for n in 0..topo.nodes {
            let dir = self.dir.node_dir(n);
            std::fs::create_dir_all(&dir)
                .map_err(|e| self.err(format!("{}: {e}", dir.display())))?;
            let setup = NodeSetup {
                session: &self.dir.id,
                node: n,
                dir: dir.clone(),
                agent: self.resolved.agent(),
                gpus: topo.gpus_per_node,
                gpu_link: topo.gpu_link,
                options: &self.resolved.profile.backend.options,
                plugins: &self.resolved.profile.plugins,
            };
            let emu = backend
                .boot_node(&setup)
                .map_err(|e| self.err(format!("node {n}: {e}")))?;
            emulators.push((n, dir, emu));
        }
        let host_paths: Vec<PathBuf> = emulators
            .first()
            .map(|(_, _, e)| e.attach().host_paths)
            .unwrap_or_default();
        match &root {
            Root::Host => {
                self.master_port = free_port();
                for (n, dir, emu) in emulators {
                    self.nodes.push(Node {
                        index: n,
                        hostname: format!("node{n}"),
                        address: "127.0.0.1".into(),
                        host_id: format!("mirage-{}-node{n}", self.dir.id),
                        dir,
                        root: NodeRoot::Host,
                        emulator: emu,
                        bridge: None,
                    });
                }
            }
            Root::Sysroot(r) => {
                let bridge = compat::check_sysroot(r, &host_paths, &self.dir.dir.join("bridge"))
                    .map_err(|m| self.err(m))?;
                self.master_port = free_port();
                for (n, dir, emu) in emulators {
                    self.nodes.push(Node {
                        index: n,
                        hostname: format!("node{n}"),
                        address: "127.0.0.1".into(),
                        host_id: format!("mirage-{}-node{n}", self.dir.id),
                        dir,
                        root: NodeRoot::Sysroot(r.clone()),
                        emulator: emu,
                        bridge: bridge.clone(),
                    });
                }
            }
            Root::Image(image) => {
                let engine = self
                    .engine
                    .clone()
                    .ok_or_else(|| self.err("no container engine"))?;
                let net = format!("mirage-{}", self.dir.id);
                match engine.network_create(&net, &self.labels()) {
                    Ok(()) => self.network = Some(net),
                    Err(e) => tracing::warn!(
                        "no network for the session ({e}); the nodes share the host's network"
                    ),
                }
                self.master_port = if self.network.is_some() {
                    29500
                } else {
                    free_port()
                };
                let mut mounts: Vec<(PathBuf, PathBuf, bool)> = host_paths
                    .iter()
                    .map(|p| (p.clone(), p.clone(), true))
                    .collect();
                mounts.push((self.dir.dir.clone(), self.dir.dir.clone(), false));
                if let Some(c) = &self.boot_cwd {
                    mounts.push((c.clone(), c.clone(), false));
                }
                for m in &self.resolved.profile.mounts {
                    mounts.push((m.host.clone(), m.guest.clone(), m.read_only));
                }
                for (host, _, _) in &mounts {
                    if host.as_os_str().to_string_lossy().contains(':') {
                        return Err(self.err(format!(
                            "{}: a path with ':' cannot be mounted into a container",
                            host.display()
                        )));
                    }
                }
                let mut first_bridge = None;
                for (n, dir, emu) in emulators {
                    let name = format!("mirage-{}-node{n}", self.dir.id);
                    let spec = NodeSpec {
                        name: name.clone(),
                        hostname: format!("node{n}"),
                        image: image.clone(),
                        network: self.network.clone(),
                        labels: self.labels(),
                        env: vec![
                            (session::ENV_SESSION.into(), self.dir.id.clone()),
                            (
                                session::ENV_SESSION_DIR.into(),
                                self.dir.dir.display().to_string(),
                            ),
                        ],
                        mounts: mounts.clone(),
                    };
                    // Pushed before starting, so that a failure removes it.
                    self.nodes.push(Node {
                        index: n,
                        hostname: format!("node{n}"),
                        address: "127.0.0.1".into(),
                        host_id: format!("mirage-{}-node{n}", self.dir.id),
                        dir,
                        root: NodeRoot::Container(name.clone()),
                        emulator: emu,
                        bridge: None,
                    });
                    engine
                        .run_node(&spec)
                        .map_err(|e| self.err(format!("node {n}: {e}")))?;
                    if n == 0 {
                        first_bridge = compat::check_container(
                            &engine,
                            &name,
                            image,
                            &host_paths,
                            &self.dir.dir.join("bridge"),
                        )
                        .map_err(|m| self.err(m))?;
                    }
                    if let Some(net) = &self.network
                        && let Some(ip) = engine.address(&name, net)
                        && let Some(node) = self.nodes.last_mut()
                    {
                        node.address = ip;
                    }
                }
                for node in &mut self.nodes {
                    node.bridge = first_bridge.clone();
                }
                if self.network.is_some() {
                    let hosts: String = self
                        .nodes
                        .iter()
                        .map(|n| format!("{} {}\n", n.address, n.hostname))
                        .collect();
                    for node in &self.nodes {
                        if let NodeRoot::Container(c) = &node.root
                            && let Err(e) = engine.append(c, "/etc/hosts", &hosts)
                        {
                            tracing::warn!("{c}: cannot add the other nodes to /etc/hosts: {e}");
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Removes the containers and network and shuts the emulators down.
    fn remove_nodes(&self) {
        if let Some(engine) = &self.engine {
            // In parallel: each removal is a second or so of the engine's.
            std::thread::scope(|scope| {
                for n in &self.nodes {
                    if let NodeRoot::Container(c) = &n.root {
                        scope.spawn(move || {
                            if let Err(e) = engine.remove(c) {
                                tracing::warn!("removing container {c}: {e}");
                            }
                        });
                    }
                }
            });
            if let Some(net) = &self.network
                && let Err(e) = engine.network_remove(net)
            {
                tracing::warn!("removing network {net}: {e}");
            }
        }
        for n in &self.nodes {
            n.emulator.shutdown();
        }
    }

    pub fn id(&self) -> &str {
        &self.dir.id
    }

    /// The nodes' live counters now, with the dispatch events after
    /// `after[node]` (the last event id the reader has, per node).
    pub fn sample(&self, after: &[u64]) -> mirage_core::metrics::Frame {
        let time = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        mirage_core::metrics::Frame {
            time,
            nodes: self
                .nodes
                .iter()
                .filter_map(|n| {
                    n.emulator
                        .sample(after.get(n.index as usize).copied().unwrap_or(0))
                })
                .collect(),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn nodes(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Asks the session to stop (teardown runs in the thread that waits).
    pub fn request_stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        for e in self.running() {
            e.signal(libc::SIGTERM);
        }
        let (m, cv) = &self.stop_cv;
        *m.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }

    /// Blocks until a stop is requested.
    pub fn wait_stop(&self) {
        let (m, cv) = &self.stop_cv;
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        while !*g {
            g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn running(&self) -> Vec<Arc<exec::Shared>> {
        self.execs
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Ends everything the session started and removes its directory.
    /// Idempotent.
    pub fn teardown(&self) {
        let mut done = self.torn_down.lock().unwrap_or_else(|e| e.into_inner());
        if *done {
            return;
        }
        *done = true;
        self.stopping.store(true, Ordering::SeqCst);
        tracing::info!("session {} stopping", self.dir.id);
        if let Ok(mut st) = self.state.lock() {
            st.status = Status::Stopping;
            let _ = self.dir.write_state(&st);
        }
        let execs = self.running();
        for e in &execs {
            e.signal(libc::SIGTERM);
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while execs.iter().any(|e| !e.finished()) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        for e in &execs {
            if !e.finished() {
                e.signal(libc::SIGKILL);
            }
        }
        // Containers first: their processes end with them.
        self.remove_nodes();
        let stragglers =
            mirage_core::proctable::kill_session(&self.dir.dir, Duration::from_secs(2));
        if !stragglers.is_empty() {
            tracing::info!(
                "ended {} more process(es) of the session: {stragglers:?}",
                stragglers.len()
            );
        }
        remove_session_dir(&self.dir);
        tracing::info!("session {} stopped", self.dir.id);
        let (m, cv) = &self.stop_cv;
        *m.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }

    /// Serves the control socket on a thread.
    pub fn serve(self: &Arc<Session>) -> Result<()> {
        control::serve(self.clone())
    }
}

/// Removes a session directory: renamed aside first (a listing never sees
/// a half-removed session), then deleted.
pub fn remove_session_dir(d: &SessionDir) {
    let Some(parent) = d.dir.parent() else { return };
    let aside = parent.join(format!(".{}.removing-{}", d.id, std::process::id()));
    let target = if std::fs::rename(&d.dir, &aside).is_ok() {
        aside
    } else {
        d.dir.clone()
    };
    if let Err(e) = std::fs::remove_dir_all(&target)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("removing {}: {e}", target.display());
    }
}

/// Blocks SIGTERM, SIGINT and SIGHUP in this thread (and the threads it
/// starts afterwards), and starts a thread that calls `on_signal` for each
/// one received. Children get an empty mask again (see [`spawn`]).
pub fn handle_signals(on_signal: impl Fn(i32) + Send + 'static) {
    // SAFETY: sigset operations on a local set; pthread_sigmask on this thread.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            loop {
                let mut sig = 0;
                // SAFETY: set is a valid signal set; sig receives the number.
                let r = unsafe { libc::sigwait(&set, &mut sig) };
                if r == 0 {
                    on_signal(sig);
                }
            }
        })
        .expect("cannot start the signal thread");
}

/// The detached supervisor (`mirage session start`): boots the session
/// whose directory and profile `mirage` prepared, reports readiness on
/// `ready` (a JSON line), serves until stopped, tears down. Returns the
/// process's exit status.
pub fn supervise(
    dir: SessionDir,
    lock: SessionLock,
    runtime: PathBuf,
    cwd: Option<PathBuf>,
    mut ready: std::fs::File,
) -> i32 {
    use std::io::Write;
    let stop_flag = Arc::new(Mutex::new(None::<Arc<Session>>));
    let early_stop = Arc::new(AtomicBool::new(false));
    {
        let stop_flag = stop_flag.clone();
        let early_stop = early_stop.clone();
        handle_signals(move |sig| {
            tracing::info!("signal {sig}: stopping");
            early_stop.store(true, Ordering::SeqCst);
            if let Some(s) = stop_flag.lock().ok().and_then(|g| g.clone()) {
                s.request_stop();
            }
        });
    }
    let report = |ready: &mut std::fs::File, r: std::result::Result<(), String>| {
        let line = match r {
            Ok(()) => serde_json::json!({"ok": true}),
            Err(m) => serde_json::json!({"ok": false, "error": m}),
        };
        let _ = writeln!(ready, "{line}");
    };
    let profile = match dir.read_profile() {
        Ok(p) => p,
        Err(e) => {
            report(&mut ready, Err(e.to_string()));
            remove_session_dir(&dir);
            return 1;
        }
    };
    let resolved = match Resolved::from_inline(profile) {
        Ok(r) => r,
        Err((p, m)) => {
            report(
                &mut ready,
                Err(format!("session {}: profile.json: {p}: {m}", dir.id)),
            );
            remove_session_dir(&dir);
            return 1;
        }
    };
    let session = match Session::boot(BootOptions {
        dir: dir.clone(),
        lock,
        runtime,
        mode: Mode::Detached,
        resolved,
        cwd,
    }) {
        Ok(s) => s,
        Err(e) => {
            report(&mut ready, Err(e.to_string()));
            remove_session_dir(&dir);
            return 1;
        }
    };
    if let Err(e) = session.serve() {
        report(&mut ready, Err(e.to_string()));
        session.teardown();
        return 1;
    }
    if let Ok(mut g) = stop_flag.lock() {
        *g = Some(session.clone());
    }
    if early_stop.load(Ordering::SeqCst) {
        session.request_stop();
    }
    report(&mut ready, Ok(()));
    drop(ready);
    session.wait_stop();
    session.teardown();
    0
}
