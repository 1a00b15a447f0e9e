//! Executions: one process on a node, or ranks on every node, each with
//! the environment its node's emulator asks for, the rank variables of
//! torchrun-style launchers, and the session's tags.

use crate::spawn::{Bind, Chroot, Setup};
use crate::{HostError, Node, NodeRoot, Result, Session};
use mirage_core::ipc::{ExecutionInfo, Winsize};
use mirage_core::session::{ENV_SESSION, ENV_SESSION_DIR};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, mpsc};

/// Every process of an execution carries `MIRAGE_EXEC=<session>:<n>`.
pub const ENV_EXEC: &str = "MIRAGE_EXEC";

/// The PATH of executions in a sysroot or container.
const GUEST_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Client variables that pass into a sysroot or container (they steer
/// rocjitsu and the ROCm runtime), besides TERM.
const GUEST_PASS: &[&str] = &["ROCJITSU_", "HIP_", "HSA_", "AMD_", "ROCR_"];

/// Where an execution runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// One process on a node.
    Node(u32),
    /// This many ranks on every node.
    Ranks { nproc_per_node: u32 },
}

/// An execution's standard streams.
pub enum Io {
    /// The client's descriptors (ranks' output is prefixed through pipes).
    Fds {
        stdin: OwnedFd,
        stdout: OwnedFd,
        stderr: OwnedFd,
    },
    /// A new pseudo-terminal; its master is handed back.
    Tty(Winsize),
}

pub struct Launch {
    pub argv: Vec<String>,
    pub target: Target,
    pub env: Vec<(String, String)>,
    pub client_env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    pub io: Io,
}

/// An execution as the session tracks it.
pub struct Shared {
    tag: String,
    argv: Vec<String>,
    started: u64,
    pids: Mutex<Vec<u32>>,
    done: (Mutex<Option<i32>>, Condvar),
}

impl Shared {
    /// Signals every process group of the execution, and every process the
    /// process table shows with its tag (those that left their group).
    pub fn signal(&self, sig: i32) {
        let pids = self.pids.lock().map(|p| p.clone()).unwrap_or_default();
        for p in &pids {
            if let Ok(p) = i32::try_from(*p) {
                // SAFETY: kill has no memory arguments; a negative pid names
                // the process group the child leads.
                unsafe { libc::kill(-p, sig) };
            }
        }
        mirage_core::proctable::signal_all(
            &mirage_core::proctable::with_var(ENV_EXEC, &self.tag),
            sig,
        );
    }

    pub fn finished(&self) -> bool {
        self.done.0.lock().map(|g| g.is_some()).unwrap_or(true)
    }

    pub fn wait(&self) -> i32 {
        let (m, cv) = &self.done;
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        while g.is_none() {
            g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.unwrap_or(1)
    }

    fn finish(&self, code: i32) {
        let (m, cv) = &self.done;
        *m.lock().unwrap_or_else(|e| e.into_inner()) = Some(code);
        cv.notify_all();
    }

    pub fn info(&self) -> ExecutionInfo {
        ExecutionInfo {
            argv: self.argv.clone(),
            pids: self.pids.lock().map(|p| p.clone()).unwrap_or_default(),
            started: self.started,
        }
    }
}

/// A started execution.
pub struct Running {
    pub shared: Arc<Shared>,
    /// The pty master, for a terminal execution.
    pub master: Option<OwnedFd>,
}

impl Running {
    pub fn wait(&self) -> i32 {
        self.shared.wait()
    }
    pub fn signal(&self, sig: i32) {
        self.shared.signal(sig)
    }
    pub fn pids(&self) -> Vec<u32> {
        self.shared
            .pids
            .lock()
            .map(|p| p.clone())
            .unwrap_or_default()
    }
}

/// An ordered set of variables (a later `set` replaces).
#[derive(Default)]
struct Env(Vec<(String, String)>);

impl Env {
    fn set(&mut self, k: &str, v: impl Into<String>) {
        let v = v.into();
        match self.0.iter_mut().find(|(x, _)| x == k) {
            Some(e) => e.1 = v,
            None => self.0.push((k.to_string(), v)),
        }
    }
    fn get(&self, k: &str) -> Option<&str> {
        self.0.iter().find(|(x, _)| x == k).map(|(_, v)| v.as_str())
    }
    /// Puts `first` before the current value of a list variable.
    fn prepend(&mut self, k: &str, first: &[PathBuf], sep: &str) {
        if first.is_empty() {
            return;
        }
        let mut parts: Vec<String> = first.iter().map(|p| p.display().to_string()).collect();
        if let Some(old) = self.get(k).filter(|o| !o.is_empty()) {
            parts.push(old.to_string());
        }
        self.set(k, parts.join(sep));
    }
    fn append(&mut self, k: &str, last: &Path) {
        let v = match self.get(k).filter(|o| !o.is_empty()) {
            Some(old) => format!("{old}:{}", last.display()),
            None => last.display().to_string(),
        };
        self.set(k, v);
    }
}

/// The rank of one process.
#[derive(Debug, Clone, Copy)]
struct Rank {
    rank: u32,
    local: u32,
    world: u32,
    local_world: u32,
}

fn code_of(s: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

impl Session {
    /// Maps a host directory to where the guest sees it (through the boot
    /// directory and the profile's mounts).
    fn guest_dir(&self, host: &Path) -> Option<PathBuf> {
        if let Some(c) = &self.boot_cwd
            && host.starts_with(c)
        {
            return Some(host.to_path_buf());
        }
        if host.starts_with(&self.dir.dir) {
            return Some(host.to_path_buf());
        }
        for m in &self.resolved.profile.mounts {
            if let Ok(rest) = host.strip_prefix(&m.host) {
                return Some(m.guest.join(rest));
            }
        }
        None
    }

    fn env_for(&self, node: &Node, l: &Launch, rank: Option<Rank>, tag: &str) -> Env {
        let mut env = Env::default();
        match node.root {
            NodeRoot::Host => {
                for (k, v) in &l.client_env {
                    env.set(k, v.clone());
                }
            }
            NodeRoot::Sysroot(_) | NodeRoot::Container(_) => {
                env.set("PATH", GUEST_PATH);
                env.set("HOME", "/root");
                env.set("LANG", "C.UTF-8");
                for (k, v) in &l.client_env {
                    if k == "TERM" || GUEST_PASS.iter().any(|p| k.starts_with(p)) {
                        env.set(k, v.clone());
                    }
                }
            }
        }
        for (k, v) in &self.resolved.profile.env {
            env.set(k, v.clone());
        }
        for (k, v) in &l.env {
            env.set(k, v.clone());
        }
        let master = self
            .nodes
            .first()
            .map(|n| n.address.clone())
            .unwrap_or_else(|| "127.0.0.1".into());
        env.set("MASTER_ADDR", master);
        env.set("MASTER_PORT", self.master_port.to_string());
        env.set("NCCL_HOSTID", node.host_id.clone());
        env.set("MIRAGE_NODE", node.index.to_string());
        env.set("MIRAGE_NUM_NODES", self.nodes.len().to_string());
        if let Some(r) = rank {
            env.set("RANK", r.rank.to_string());
            env.set("LOCAL_RANK", r.local.to_string());
            env.set("WORLD_SIZE", r.world.to_string());
            env.set("LOCAL_WORLD_SIZE", r.local_world.to_string());
            env.set("NODE_RANK", node.index.to_string());
            env.set("GROUP_RANK", node.index.to_string());
        }
        env.set(ENV_SESSION, self.dir.id.clone());
        env.set(ENV_SESSION_DIR, self.dir.dir.display().to_string());
        env.set(ENV_EXEC, tag);
        let a = node.emulator.attach();
        for (k, v) in &a.env {
            env.set(k, v.clone());
        }
        env.prepend("LD_PRELOAD", &a.preload, ":");
        env.prepend("PATH", &a.path, ":");
        if let Some(b) = &node.bridge {
            env.append("LD_LIBRARY_PATH", b);
        }
        env
    }

    /// The command and set-up for one process.
    fn command(&self, node: &Node, l: &Launch, env: &Env, tty: bool) -> Result<(Command, Setup)> {
        let a = node.emulator.attach();
        let argv: Vec<String> = a
            .argv_prefix
            .iter()
            .cloned()
            .chain(l.argv.iter().cloned())
            .collect();
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| self.err("no command to run"))?;
        let host_cwd = l.cwd.clone().filter(|c| c.is_dir());
        match &node.root {
            NodeRoot::Host => {
                let mut c = Command::new(program);
                c.args(args)
                    .env_clear()
                    .envs(env.0.iter().map(|(k, v)| (k, v)));
                c.current_dir(host_cwd.unwrap_or_else(|| "/".into()));
                Ok((c, Setup { tty, chroot: None }))
            }
            NodeRoot::Sysroot(root) => {
                let mut binds: Vec<Bind> = a
                    .host_paths
                    .iter()
                    .map(|p| Bind {
                        host: p.clone(),
                        guest: p.clone(),
                        read_only: true,
                    })
                    .collect();
                binds.push(Bind {
                    host: self.dir.dir.clone(),
                    guest: self.dir.dir.clone(),
                    read_only: false,
                });
                if let Some(c) = &self.boot_cwd {
                    binds.push(Bind {
                        host: c.clone(),
                        guest: c.clone(),
                        read_only: false,
                    });
                }
                for m in &self.resolved.profile.mounts {
                    binds.push(Bind {
                        host: m.host.clone(),
                        guest: m.guest.clone(),
                        read_only: m.read_only,
                    });
                }
                let cwd = match &host_cwd {
                    Some(c) => match self.guest_dir(c) {
                        Some(g) => g,
                        None => {
                            // The working directory, as scripts/sysroot.sh binds it.
                            binds.push(Bind {
                                host: c.clone(),
                                guest: c.clone(),
                                read_only: false,
                            });
                            c.clone()
                        }
                    },
                    None => "/".into(),
                };
                let mut c = Command::new(program);
                c.args(args)
                    .env_clear()
                    .envs(env.0.iter().map(|(k, v)| (k, v)));
                Ok((
                    c,
                    Setup {
                        tty,
                        chroot: Some(Chroot {
                            root: root.clone(),
                            binds,
                            cwd,
                        }),
                    },
                ))
            }
            NodeRoot::Container(name) => {
                let engine = self
                    .engine
                    .as_ref()
                    .ok_or_else(|| self.err("no container engine"))?;
                let workdir = host_cwd.and_then(|c| self.guest_dir(&c));
                let mut c = engine.exec_command(name, &env.0, workdir.as_deref(), tty, &argv);
                // The engine's client carries the tags too (cleanup finds it).
                for k in [ENV_SESSION, ENV_SESSION_DIR, ENV_EXEC] {
                    if let Some(v) = env.get(k) {
                        c.env(k, v);
                    }
                }
                Ok((c, Setup { tty, chroot: None }))
            }
        }
    }

    /// Starts an execution.
    pub fn launch(self: &Arc<Session>, l: Launch) -> Result<Running> {
        if self.stopping.load(Ordering::SeqCst) {
            return Err(self.err("is stopping"));
        }
        let placements: Vec<(usize, Option<Rank>)> = match l.target {
            Target::Node(n) => {
                let n = n as usize;
                if n >= self.nodes.len() {
                    return Err(self.err(format!(
                        "has no node {n}: its nodes are 0 to {}",
                        self.nodes.len().saturating_sub(1)
                    )));
                }
                vec![(n, None)]
            }
            Target::Ranks { nproc_per_node } => {
                if !(1..=256).contains(&nproc_per_node) {
                    return Err(self.err(format!(
                        "--nproc-per-node: expected 1 to 256, got {nproc_per_node}"
                    )));
                }
                let world = nproc_per_node * self.nodes.len() as u32;
                (0..self.nodes.len())
                    .flat_map(|n| {
                        (0..nproc_per_node).map(move |local| {
                            (
                                n,
                                Some(Rank {
                                    rank: n as u32 * nproc_per_node + local,
                                    local,
                                    world,
                                    local_world: nproc_per_node,
                                }),
                            )
                        })
                    })
                    .collect()
            }
        };
        let tty = matches!(l.io, Io::Tty(_));
        if tty && placements.len() > 1 {
            return Err(self.err("a terminal (-t) runs one process: drop --nproc-per-node or -t"));
        }
        let id = self.next_exec.fetch_add(1, Ordering::SeqCst);
        let tag = format!("{}:{id}", self.dir.id);
        let shared = Arc::new(Shared {
            tag: tag.clone(),
            argv: l.argv.clone(),
            started: mirage_core::session::now(),
            pids: Mutex::new(vec![]),
            done: (Mutex::new(None), Condvar::new()),
        });
        let many = placements.len() > 1;
        let io_err =
            |e: std::io::Error| self.err(format!("cannot set up the execution's streams: {e}"));
        let mut master = None;
        let mut children = vec![];
        let mut readers = vec![];
        // The destinations of prefixed output.
        let (out_dest, err_dest) = match &l.io {
            Io::Fds { stdout, stderr, .. } if many => (
                Some(Arc::new(Mutex::new(File::from(
                    stdout.try_clone().map_err(io_err)?,
                )))),
                Some(Arc::new(Mutex::new(File::from(
                    stderr.try_clone().map_err(io_err)?,
                )))),
            ),
            _ => (None, None),
        };
        for (i, (n, rank)) in placements.iter().enumerate() {
            let node = &self.nodes[*n];
            let env = self.env_for(node, &l, *rank, &tag);
            let (mut cmd, setup) = self.command(node, &l, &env, tty)?;
            match &l.io {
                Io::Tty(size) => {
                    let (m, s) = crate::pty::open(*size).map_err(io_err)?;
                    cmd.stdin(Stdio::from(s.try_clone().map_err(io_err)?));
                    cmd.stdout(Stdio::from(s.try_clone().map_err(io_err)?));
                    cmd.stderr(Stdio::from(s));
                    master = Some(m);
                }
                Io::Fds {
                    stdin,
                    stdout,
                    stderr,
                } => {
                    if i == 0 {
                        cmd.stdin(Stdio::from(stdin.try_clone().map_err(io_err)?));
                    } else {
                        cmd.stdin(Stdio::null());
                    }
                    if many {
                        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
                    } else {
                        cmd.stdout(Stdio::from(stdout.try_clone().map_err(io_err)?));
                        cmd.stderr(Stdio::from(stderr.try_clone().map_err(io_err)?));
                    }
                }
            }
            let label = rank.map(|r| r.rank).unwrap_or(0);
            match self.spawner.spawn(cmd, setup) {
                Ok(mut child) => {
                    if let Ok(mut p) = shared.pids.lock() {
                        p.push(child.id());
                    }
                    if let (Some(o), Some(e)) = (&out_dest, &err_dest) {
                        if let Some(s) = child.stdout.take() {
                            readers.push(prefix(label, s, o.clone()));
                        }
                        if let Some(s) = child.stderr.take() {
                            readers.push(prefix(label, s, e.clone()));
                        }
                    }
                    children.push((label, child));
                }
                Err(e) => {
                    shared.signal(libc::SIGKILL);
                    for (_, mut c) in children {
                        let _ = c.wait();
                    }
                    return Err(HostError::Session {
                        session: self.dir.id.clone(),
                        message: format!(
                            "cannot run {:?} on node {n}: {e}",
                            l.argv.first().map(String::as_str).unwrap_or("")
                        ),
                    });
                }
            }
        }
        tracing::info!(
            "execution {tag} started: {:?} as {:?}",
            l.argv,
            shared.pids.lock().map(|p| p.clone()).unwrap_or_default()
        );
        if let Ok(mut m) = self.execs.lock() {
            m.insert(id, shared.clone());
        }
        // One waiter per process; the first failure ends the others.
        let (tx, rx) = mpsc::channel();
        for (label, mut child) in children {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let code = child.wait().map(code_of).unwrap_or(1);
                let _ = tx.send((label, code));
            });
        }
        drop(tx);
        let total = shared.pids.lock().map(|p| p.len()).unwrap_or(0);
        let session = self.clone();
        let sh = shared.clone();
        std::thread::spawn(move || {
            let mut result = 0;
            for _ in 0..total {
                let Ok((label, code)) = rx.recv() else { break };
                if code != 0 && result == 0 {
                    result = code;
                    if total > 1 {
                        tracing::info!("rank {label} exited with {code}: ending the other ranks");
                        sh.signal(libc::SIGTERM);
                    }
                }
            }
            for r in readers {
                let _ = r.join();
            }
            tracing::info!("execution {} ended: {result}", sh.tag);
            if let Ok(mut m) = session.execs.lock() {
                m.remove(&id);
            }
            sh.finish(result);
        });
        Ok(Running { shared, master })
    }

    /// What runs now.
    pub fn executions(&self) -> Vec<ExecutionInfo> {
        self.running().iter().map(|e| e.info()).collect()
    }
}

/// Copies a rank's stream line by line, each line prefixed with `[rank] `.
fn prefix(
    rank: u32,
    from: impl std::io::Read + Send + 'static,
    to: Arc<Mutex<File>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut r = BufReader::new(from);
        let mut line = vec![];
        loop {
            line.clear();
            match r.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    if let Ok(mut f) = to.lock() {
                        let _ = write!(f, "[{rank}] ");
                        let _ = f.write_all(&line);
                    }
                }
            }
        }
    })
}
