//! Daemon mode, server side: one process hosts the emulated GPUs (one
//! [`Device`]) and serves the ROCm processes of a job over a Unix socket,
//! so that they share one GPU as processes share a real one.
//!
//! Each client process gets its own [`SimulatedDriver`] on the shared
//! device (its own GPU virtual memory, allocations, events and queues, as
//! KFD keeps a `kfd_process` per process). A client opens one connection
//! per concurrent caller (see [`crate::remote`]); each connection is served
//! by its own thread, so a thread blocked in `WAIT_EVENTS` holds up nobody
//! else, and event semantics are exactly the in-process driver's.
//!
//! Nothing a client sends is trusted: the peer must have the daemon's uid
//! and is known by the pid the kernel reports (SO_PEERCRED; a further
//! connection of a process must come from it and carry its token); every
//! message is decoded with
//! bounds checks; ioctl arguments must have their request's size; the
//! memory an argument points at is served only from the copies the client
//! sent ([`user::Buffers`]), so no pointer of a client ever reaches the
//! daemon's own memory; device files must be ours. A malformed request gets
//! an error reply and the daemon goes on serving. A client that dies
//! (SIGKILL included) is noticed through a pidfd and everything it owned is
//! released without disturbing the others.
//!
//! Nor may one client starve the others ([`ClientLimits`]): a process (the
//! pid SO_PEERCRED reports) has at most `connections` connections open, so
//! at most that many daemon threads (one more is answered EMFILE and
//! closed before a thread is started for it), and holds at most
//! `memory_percent` of each GPU's VRAM and of the GTT size (an allocation
//! past that is ENOMEM, even when the device has room); every offset and
//! length a client sends is checked arithmetic (EINVAL, never a wrap or a
//! panic).

use crate::driver::{Caller, Device, DriverOptions, SimulatedDriver};
use crate::{DeviceFile, Driver, Errno, abi, user};
use rocjitsu_rpc::unix::{UnixServer, UnixTransport};
use rocjitsu_rpc::wire::{self, Header, Ioctl, Opcode, Request, Welcome};
use rocjitsu_rpc::{Message, Transport};
use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// The socket path when nothing else is given:
/// `$ROCJITSU_RUNTIME_DIR/daemon.sock`, else
/// `$XDG_RUNTIME_DIR/rocjitsu/daemon.sock`, else
/// `/tmp/rocjitsu-<uid>/daemon.sock`.
pub fn default_socket() -> PathBuf {
    if let Some(d) = std::env::var_os(rocjitsu_config::env::RUNTIME_DIR) {
        return PathBuf::from(d).join("daemon.sock");
    }
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("rocjitsu").join("daemon.sock");
    }
    crate::runtime_dir().join("daemon.sock")
}

/// How a daemon is set up.
pub struct DaemonOptions {
    pub driver: DriverOptions,
    pub socket: PathBuf,
    /// Stop once this process has exited and no client is left (the app
    /// of `rocjitsu --daemon -- APP`).
    pub owner: Option<u32>,
    /// What one client process may hold.
    pub limits: ClientLimits,
    /// Start from this checkpoint (`--restore FILE`): its processes are
    /// waited for, each reconnecting with its token and pid
    /// ([`crate::remote`]'s reconnect).
    pub restore: Option<PathBuf>,
}

/// [`ClientLimits::connections`] unless told otherwise: twice the pool a
/// client keeps ([`crate::remote`]), so a well-behaved one never meets it.
pub const DEFAULT_CLIENT_CONNECTIONS: usize = 64;

/// What one client process (one pid) of a daemon may hold at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientLimits {
    /// Connections open, each served by a thread of the daemon's.
    pub connections: usize,
    /// Percentage (1 to 100) of each GPU's VRAM, and of the GTT size the
    /// render node reports (16 GiB), the process's buffers may take.
    pub memory_percent: u32,
}

impl Default for ClientLimits {
    fn default() -> ClientLimits {
        ClientLimits {
            connections: DEFAULT_CLIENT_CONNECTIONS,
            memory_percent: 100,
        }
    }
}

impl ClientLimits {
    /// Checks the values (what the launcher's flags were given).
    pub fn check(&self) -> Result<(), String> {
        if self.connections == 0 {
            return Err(
                "a client must be allowed at least 1 connection (--client-connections)".into(),
            );
        }
        if !(1..=100).contains(&self.memory_percent) {
            return Err(format!(
                "--client-memory is a percentage from 1 to 100, not {}",
                self.memory_percent
            ));
        }
        Ok(())
    }

    /// `percent` of `bytes`, rounded down to a page.
    fn share(&self, bytes: u64) -> u64 {
        let b = u128::from(bytes) * u128::from(self.memory_percent.min(100)) / 100;
        (b as u64) & !4095
    }

    /// A fresh quota for one process on `config`'s GPUs.
    fn quota(&self, config: &rocjitsu_config::GpuConfig) -> crate::memory::Quota {
        crate::memory::Quota::new(
            config
                .gpus
                .iter()
                .map(|g| self.share(g.memory.size_bytes))
                .collect(),
            self.share(crate::drm::GTT_BYTES),
        )
    }
}

/// What the daemon holds right now (its own accounting).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub clients: usize,
    pub connections: usize,
    pub allocations: usize,
    pub queues: usize,
    /// VRAM in use per GPU, bytes.
    pub vram_used: Vec<u64>,
    /// Queues per GPU.
    pub queues_by_gpu: Vec<usize>,
    /// Connections refused since the daemon started because their
    /// process had [`ClientLimits::connections`] open already.
    pub refused_connections: usize,
}

impl Status {
    pub fn to_json(&self) -> String {
        format!(
            "{{\"clients\": {}, \"connections\": {}, \"allocations\": {}, \"queues\": {}, \"vram_used\": {:?}, \"refused_connections\": {}}}",
            self.clients,
            self.connections,
            self.allocations,
            self.queues,
            self.vram_used,
            self.refused_connections
        )
    }
}

struct Client {
    token: [u8; 16],
    pid: u32,
    /// Becomes readable when the process exits.
    pidfd: Option<OwnedFd>,
    driver: SimulatedDriver,
    conns: Mutex<Vec<Weak<UnixTransport>>>,
    live: AtomicUsize,
    closed: AtomicBool,
}

impl Client {
    /// Releases the process: waiters fail, queues stop, connections end;
    /// the allocations go with the last reference to the driver.
    fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.driver.shutdown();
        for c in self.lock_conns().drain(..) {
            if let Some(c) = c.upgrade() {
                c.shutdown();
            }
        }
    }

    fn lock_conns(&self) -> std::sync::MutexGuard<'_, Vec<Weak<UnixTransport>>> {
        self.conns.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the daemon counts per client process (pid): its open connections
/// and the quota every driver of the process shares.
#[derive(Default)]
struct Peer {
    conns: usize,
    quota: Weak<crate::memory::Quota>,
}

struct State {
    device: Arc<Device>,
    config_json: String,
    uid: u32,
    limits: ClientLimits,
    clients: Mutex<HashMap<[u8; 16], Arc<Client>>>,
    peers: Mutex<HashMap<u32, Peer>>,
    connections: AtomicUsize,
    refused: AtomicUsize,
    stop: AtomicBool,
    /// Wakes the event loop: a client came or went, or a stop.
    wake: OwnedFd,
    /// Holds the clients' calls during (and after) a checkpoint.
    gate: Gate,
    /// The checkpoint this daemon was restored from, and the processes of
    /// it not back yet (by token).
    restored: Option<Arc<crate::checkpoint::Checkpoint>>,
    pending: Mutex<HashMap<[u8; 16], Pending>>,
}

/// A process of the checkpoint a daemon was restored from, not back yet.
struct Pending {
    pid: u32,
    /// Its index in the checkpoint's clients.
    index: usize,
    /// Mappings of memfds it offered (ADOPT): start, length, offset, memfd.
    offered: Vec<(u64, u64, u64, Arc<OwnedFd>)>,
}

/// Counts the calls being served and holds new ones while frozen (a
/// checkpoint is taken once the calls in flight are done; a daemon that
/// checkpointed stays frozen until it is killed).
#[derive(Default)]
struct Gate {
    state: Mutex<(bool, usize)>,
    cv: std::sync::Condvar,
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, (bool, usize)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits while frozen, then counts a call in.
    fn enter(&self) -> GateGuard<'_> {
        let mut g = self.lock();
        while g.0 {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.1 += 1;
        GateGuard(self)
    }

    /// Freezes: new calls wait; returns once the calls in flight are done.
    fn freeze(&self) {
        let mut g = self.lock();
        g.0 = true;
        while g.1 > 0 {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn thaw(&self) {
        self.lock().0 = false;
        self.cv.notify_all();
    }
}

struct GateGuard<'a>(&'a Gate);

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        self.0.lock().1 -= 1;
        self.0.cv.notify_all();
    }
}

impl State {
    fn wake(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writing 8 bytes to our eventfd.
        unsafe { libc::write(self.wake.as_raw_fd(), one.as_ptr().cast(), 8) };
    }

    fn drain_wake(&self) {
        let mut b = [0u8; 8];
        // SAFETY: reading 8 bytes from our non-blocking eventfd.
        unsafe { libc::read(self.wake.as_raw_fd(), b.as_mut_ptr().cast(), 8) };
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 16], Arc<Client>>> {
        self.clients.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn peers(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Peer>> {
        self.peers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A connection slot of process `pid`'s, or None when it has
    /// [`ClientLimits::connections`] open already.
    fn admit(self: &Arc<Self>, pid: u32) -> Option<Slot> {
        let mut peers = self.peers();
        // Processes with nothing left here are forgotten.
        peers.retain(|_, p| p.conns > 0 || p.quota.strong_count() > 0);
        let p = peers.entry(pid).or_default();
        if p.conns >= self.limits.connections {
            return None;
        }
        p.conns += 1;
        Some(Slot {
            state: self.clone(),
            pid,
        })
    }

    /// The quota of process `pid`, shared by all its drivers.
    fn quota(&self, pid: u32) -> Arc<crate::memory::Quota> {
        let mut peers = self.peers();
        let p = peers.entry(pid).or_default();
        if let Some(q) = p.quota.upgrade() {
            return q;
        }
        let q = Arc::new(self.limits.quota(self.device.config()));
        p.quota = Arc::downgrade(&q);
        q
    }

    fn remove(&self, token: &[u8; 16], why: &str) {
        let c = self.lock().remove(token);
        if let Some(c) = c {
            tracing::info!("client pid {} {why}; releasing what it owned", c.pid);
            c.close();
            self.wake();
        }
    }

    /// Freezes the daemon and writes a checkpoint of every client to
    /// `path`: calls in flight finish, further ones are held, every queue
    /// stops between two packets; the daemon then stays frozen (what it
    /// holds is what the file says) until it is killed. A checkpoint that
    /// cannot be taken thaws it and names why.
    fn checkpoint(&self, path: &Path) -> Result<String, String> {
        self.gate.freeze();
        let clients: Vec<Arc<Client>> = self.lock().values().cloned().collect();
        let list: Vec<(&SimulatedDriver, [u8; 16], u32)> = clients
            .iter()
            .map(|c| (&c.driver, c.token, c.pid))
            .collect();
        let r = self
            .device
            .checkpoint(&list, true)
            .map_err(|e| e.to_string())
            .and_then(|ck| {
                ck.write(path).map_err(|e| e.to_string())?;
                Ok(ck)
            });
        match r {
            Ok(ck) => {
                let allocs: usize = ck
                    .meta
                    .clients
                    .iter()
                    .map(|c| c.memory.allocations.len())
                    .sum();
                let queues: usize = ck.meta.clients.iter().map(|c| c.queues.queues.len()).sum();
                tracing::info!(
                    "checkpoint of {} clients written to {}; the daemon is frozen until it is stopped",
                    clients.len(),
                    path.display()
                );
                Ok(format!(
                    "{{\"file\": {:?}, \"clients\": {}, \"allocations\": {allocs}, \"queues\": {queues}, \"payload_bytes\": {}}}",
                    path.display().to_string(),
                    clients.len(),
                    ck.payload.len()
                ))
            }
            Err(e) => {
                self.device.resume();
                self.gate.thaw();
                Err(e)
            }
        }
    }

    fn status(&self) -> Status {
        let clients: Vec<Arc<Client>> = self.lock().values().cloned().collect();
        Status {
            clients: clients.len(),
            connections: self.connections.load(Ordering::Relaxed),
            allocations: clients.iter().map(|c| c.driver.allocation_count()).sum(),
            queues: clients.iter().map(|c| c.driver.queue_count()).sum(),
            vram_used: (0..self.device.config().gpus.len())
                .map(|g| self.device.vram_used(g))
                .collect(),
            queues_by_gpu: clients.iter().map(|c| c.driver.queues_by_gpu()).fold(
                vec![0; self.device.config().gpus.len()],
                |mut a, q| {
                    for (x, y) in a.iter_mut().zip(q) {
                        *x += y;
                    }
                    a
                },
            ),
            refused_connections: self.refused.load(Ordering::Relaxed),
        }
    }
}

/// One of a process's connection slots, given back when its connection
/// thread ends.
struct Slot {
    state: Arc<State>,
    pid: u32,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(p) = self.state.peers().get_mut(&self.pid) {
            p.conns = p.conns.saturating_sub(1);
        }
    }
}

/// A running daemon.
pub struct Daemon {
    state: Arc<State>,
    server: UnixServer,
    owner: Option<OwnedFd>,
}

fn pidfd(pid: u32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a descriptor pidfd_open just returned, owned by nobody else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether the process behind a pidfd has exited.
fn exited(fd: BorrowedFd) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd, no timeout.
    unsafe { libc::poll(&mut p, 1, 0) > 0 && p.revents & libc::POLLIN != 0 }
}

/// 16 random bytes (process tokens, IPC share handles).
pub(crate) fn token() -> [u8; 16] {
    let mut t = [0u8; 16];
    // SAFETY: getrandom writes up to 16 bytes into `t`.
    let n = unsafe { libc::getrandom(t.as_mut_ptr().cast(), 16, 0) };
    if n != 16 {
        // Unique within the daemon is what matters; fall back to time and
        // a counter.
        static N: AtomicUsize = AtomicUsize::new(1);
        let v = (std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()))
            ^ (N.fetch_add(1, Ordering::Relaxed) as u128) << 64;
        t = v.to_le_bytes();
    }
    t
}

fn reply(t: &UnixTransport, req: &Header, result: i32, payload: &[u8], fds: &[BorrowedFd]) -> bool {
    let h = Header {
        opcode: req.opcode,
        reserved: 0,
        request_id: req.request_id,
        payload_len: payload.len() as u32,
        result,
    };
    t.send(&h, payload, fds).is_ok()
}

impl Daemon {
    /// Sets up the GPUs and listens at `opts.socket`.
    pub fn bind(opts: DaemonOptions) -> Result<Daemon, String> {
        Daemon::bind_with_plugins(opts, Vec::new())
    }

    /// [`Daemon::bind`] with plugin objects of the embedder's (see
    /// [`Device::with_plugins`]).
    pub fn bind_with_plugins(
        opts: DaemonOptions,
        plugins: Vec<Box<dyn rocjitsu_gpu::plugin::Plugin>>,
    ) -> Result<Daemon, String> {
        opts.limits.check()?;
        let config_json = serde_json::to_string(&opts.driver.config)
            .map_err(|e| format!("cannot serialise the GPU configuration: {e}"))?;
        // A checkpoint is read and checked before anything starts.
        let restored = match &opts.restore {
            Some(path) => Some(Arc::new(
                crate::checkpoint::Checkpoint::read(
                    path,
                    &crate::checkpoint::Expect::of(&opts.driver.config),
                )
                .map_err(|e| format!("cannot restore: {e}"))?,
            )),
            None => None,
        };
        let mut pending = HashMap::new();
        for (index, c) in restored
            .iter()
            .flat_map(|r| r.meta.clients.iter().enumerate())
        {
            let token = crate::checkpoint::unhex(&c.token)
                .and_then(|t| <[u8; 16]>::try_from(t).ok())
                .ok_or_else(|| {
                    format!(
                        "cannot restore: process {} of the checkpoint has no daemon token",
                        c.pid
                    )
                })?;
            pending.insert(
                token,
                Pending {
                    pid: c.pid,
                    index,
                    offered: Vec::new(),
                },
            );
        }
        let device = Device::with_plugins(opts.driver, plugins)?;
        let server = UnixServer::bind(&opts.socket)
            .map_err(|e| format!("cannot listen on {}: {e}", opts.socket.display()))?;
        let owner = match opts.owner {
            Some(pid) => Some(pidfd(pid).ok_or_else(|| {
                format!(
                    "cannot watch process {pid} (pidfd_open): {}",
                    std::io::Error::last_os_error()
                )
            })?),
            None => None,
        };
        // SAFETY: eventfd returns a new descriptor or -1.
        let wake = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if wake < 0 {
            return Err(format!("eventfd: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: a descriptor eventfd just returned, owned by nobody else.
        let wake = unsafe { OwnedFd::from_raw_fd(wake) };
        Ok(Daemon {
            state: Arc::new(State {
                device,
                config_json,
                // SAFETY: getuid has no preconditions.
                uid: unsafe { libc::getuid() },
                limits: opts.limits,
                clients: Mutex::new(HashMap::new()),
                peers: Mutex::new(HashMap::new()),
                connections: AtomicUsize::new(0),
                refused: AtomicUsize::new(0),
                stop: AtomicBool::new(false),
                wake,
                gate: Gate::default(),
                restored,
                pending: Mutex::new(pending),
            }),
            server,
            owner,
        })
    }

    pub fn socket(&self) -> &Path {
        self.server.path()
    }

    /// A handle that stops [`Daemon::run`] (within a fraction of a second).
    pub fn stopper(&self) -> impl Fn() + Send + Sync + 'static {
        let s = self.state.clone();
        move || {
            // Async-signal-safe: an atomic store and a write(2).
            s.stop.store(true, Ordering::Release);
            s.wake();
        }
    }

    pub fn status(&self) -> Status {
        self.state.status()
    }

    /// Serves clients until stopped (or, with an owner, until the owner
    /// has exited and no client is left). Clients still connected then are
    /// released.
    ///
    /// One thread waits on everything that can happen: a connection to
    /// accept, a client process or the owner exiting (their pidfds), the
    /// client set changing or a stop (an eventfd). Each connection is
    /// served on a thread of its own.
    pub fn run(&self) -> Result<(), String> {
        let result = self.event_loop();
        self.state.stop.store(true, Ordering::Release);
        let tokens: Vec<[u8; 16]> = self.state.lock().keys().copied().collect();
        for t in tokens {
            self.state
                .remove(&t, "was still connected when the daemon stopped");
        }
        result
    }

    fn event_loop(&self) -> Result<(), String> {
        loop {
            if self.state.stop.load(Ordering::Acquire) {
                return Ok(());
            }
            let owner_gone = self.owner.as_ref().is_some_and(|o| exited(o.as_fd()));
            if owner_gone && self.state.lock().is_empty() {
                tracing::info!(
                    "the application has exited and no client is left; the daemon stops"
                );
                return Ok(());
            }
            let poll_in = |fd: i32| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let mut fds = vec![
                poll_in(self.server.as_raw_fd()),
                poll_in(self.state.wake.as_raw_fd()),
            ];
            if let Some(o) = self.owner.as_ref().filter(|_| !owner_gone) {
                fds.push(poll_in(o.as_raw_fd()));
            }
            let clients: Vec<([u8; 16], i32)> = self
                .state
                .lock()
                .values()
                .filter_map(|c| c.pidfd.as_ref().map(|p| (c.token, p.as_raw_fd())))
                .collect();
            let first_client = fds.len();
            fds.extend(clients.iter().map(|&(_, fd)| poll_in(fd)));
            // SAFETY: `fds` is a valid array of pollfds for the call; the
            // timeout bounds how long a missed wake-up could delay a stop.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 1000) };
            if n <= 0 {
                continue;
            }
            if fds[1].revents != 0 {
                self.state.drain_wake();
            }
            for (i, &(token, _)) in clients.iter().enumerate() {
                if fds[first_client + i].revents != 0 {
                    self.state.remove(&token, "has exited");
                }
            }
            if fds[0].revents & libc::POLLIN != 0 {
                self.accept_one();
            }
        }
    }

    fn accept_one(&self) {
        let t = match self.server.accept() {
            Ok(t) => Arc::new(t),
            Err(e) => {
                tracing::warn!("accept on {}: {e}", self.server.path().display());
                return;
            }
        };
        let peer = match t.peer() {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!("a connection without peer credentials ({e}) is refused");
                return;
            }
        };
        // The process's connection slot is taken here, before a thread is
        // started: a process past its limit costs the daemon no thread.
        let Some(slot) = self.state.admit(peer.pid) else {
            self.refuse_connection(&t, peer.pid);
            return;
        };
        let state = self.state.clone();
        let spawned = std::thread::Builder::new()
            .name("rj-daemon-conn".into())
            .spawn(move || serve_connection(&state, &t, peer, slot));
        if let Err(e) = spawned {
            tracing::warn!("cannot start a connection thread: {e}");
        }
    }

    /// Answers a connection of a process that has all the connections it
    /// may have: EMFILE with the reason (the reply to the handshake the
    /// client sends first), and the connection is closed.
    fn refuse_connection(&self, t: &UnixTransport, pid: u32) {
        let n = self.state.refused.fetch_add(1, Ordering::Relaxed);
        let why = format!(
            "process {pid} has {} connections open to this daemon, the most one client may have; close some, or start the daemon with a higher --client-connections",
            self.state.limits.connections
        );
        // Once per process and burst is enough in the log.
        if n % 1000 == 0 {
            tracing::warn!("{why} (connection refused)");
        }
        let h = Header {
            opcode: Opcode::Handshake as u16,
            reserved: 0,
            request_id: 0,
            payload_len: 0,
            result: 0,
        };
        // A fresh connection's buffer has room for these few hundred
        // bytes: the send does not wait on the client.
        reply(t, &h, -libc::EMFILE, why.as_bytes(), &[]);
    }
}

/// Decrements the connection count when a connection thread ends.
struct ConnGuard<'a>(&'a State);

impl Drop for ConnGuard<'_> {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

fn serve_connection(
    state: &Arc<State>,
    t: &Arc<UnixTransport>,
    peer: rocjitsu_rpc::unix::Peer,
    _slot: Slot,
) {
    state.connections.fetch_add(1, Ordering::Relaxed);
    let _guard = ConnGuard(state);
    let first = match t.recv() {
        Ok(Some(m)) => m,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(
                "pid {}: a malformed first message ({e}); the connection is closed",
                peer.pid
            );
            return;
        }
    };
    if peer.uid != state.uid {
        tracing::warn!(
            "pid {} of uid {} is refused: the daemon serves uid {} only",
            peer.pid,
            peer.uid,
            state.uid
        );
        reply(t, &first.header, -libc::EPERM, b"", &[]);
        return;
    }
    if first.header.opcode == Opcode::Status as u16 {
        reply(
            t,
            &first.header,
            0,
            state.status().to_json().as_bytes(),
            &[],
        );
        return;
    }
    if first.header.opcode == Opcode::Checkpoint as u16 {
        let r = match Request::decode(&first.header, &first.payload) {
            Ok(Request::Checkpoint(path)) => state.checkpoint(Path::new(&path)),
            Ok(_) | Err(_) => Err("a malformed checkpoint request".into()),
        };
        match r {
            Ok(summary) => reply(t, &first.header, 0, summary.as_bytes(), &[]),
            Err(why) => {
                tracing::warn!("checkpoint refused: {why}");
                reply(t, &first.header, -libc::EINVAL, why.as_bytes(), &[])
            }
        };
        return;
    }
    let client = match handshake(state, t, peer.pid, &first) {
        Some(Joined::Client(c)) => c,
        Some(Joined::Pending(token)) => match resume(state, t, peer.pid, token) {
            Some(c) => c,
            None => return,
        },
        None => return,
    };
    client.live.fetch_add(1, Ordering::AcqRel);
    client.lock_conns().push(Arc::downgrade(t));
    loop {
        let m = match t.recv() {
            Ok(Some(m)) => m,
            Ok(None) => break,
            Err(e) => {
                if !client.closed.load(Ordering::Acquire) {
                    tracing::warn!("client pid {}: {e}; this connection is closed", client.pid);
                }
                break;
            }
        };
        if !serve_request(state, &client, t, m) {
            break;
        }
    }
    client
        .lock_conns()
        .retain(|w| w.strong_count() > 0 && !std::ptr::eq(w.as_ptr(), Arc::as_ptr(t)));
    if client.live.fetch_sub(1, Ordering::AcqRel) == 1 {
        // Every connection of the process is gone (it closed them or died).
        state.remove(&client.token, "closed its last connection");
    }
}

/// Whom a handshake admitted.
enum Joined {
    Client(Arc<Client>),
    /// A process of the checkpoint this daemon was restored from: it
    /// offers its memory (ADOPT), then RESUME restores it.
    Pending([u8; 16]),
}

fn handshake(state: &State, t: &UnixTransport, pid: u32, m: &Message) -> Option<Joined> {
    let refuse = |errno: i32, why: String| {
        tracing::warn!("pid {pid}: {why}");
        reply(t, &m.header, -errno, why.as_bytes(), &[]);
        None
    };
    let hello = match Request::decode(&m.header, &m.payload) {
        Ok(Request::Handshake(h)) => h,
        Ok(_) => return refuse(libc::EPROTO, "the first message must be a handshake".into()),
        Err(e) => return refuse(libc::EPROTO, format!("a malformed handshake: {e}")),
    };
    if hello.version != wire::VERSION {
        return refuse(
            libc::EPROTONOSUPPORT,
            format!(
                "protocol version {} is not the daemon's {} (use the same rocjitsu build for the daemon and the app)",
                hello.version,
                wire::VERSION
            ),
        );
    }
    if hello.pid != pid {
        // Not a lie necessarily: a client in another pid namespace (a
        // container) knows itself by another number. Its identity is the
        // kernel's (SO_PEERCRED) from here on.
        tracing::debug!("client pid {pid} calls itself pid {}", hello.pid);
    }
    let client = if hello.token == [0; 16] {
        let token = token();
        let c = Arc::new(Client {
            token,
            pid,
            pidfd: pidfd(pid),
            driver: {
                let d = SimulatedDriver::open(&state.device, Caller::Remote);
                d.set_quota(state.quota(pid));
                d
            },
            conns: Mutex::new(Vec::new()),
            live: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        });
        state.lock().insert(token, c.clone());
        state.wake();
        tracing::info!("client pid {pid} connected");
        c
    } else {
        let known = state.lock().get(&hello.token).cloned();
        match known {
            Some(c) if c.pid == pid && !c.closed.load(Ordering::Acquire) => c,
            Some(_) => return refuse(libc::EPERM, "an unknown or foreign process token".into()),
            None => {
                let waited = state
                    .pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&hello.token)
                    .map(|p| p.pid);
                return match waited {
                    Some(p) if p == pid => {
                        let w = welcome(state, hello.token);
                        reply(t, &m.header, 0, &w.encode(), &[])
                            .then_some(Joined::Pending(hello.token))
                    }
                    Some(p) => refuse(
                        libc::EPERM,
                        format!("the checkpoint's process with this token was pid {p}, not {pid}"),
                    ),
                    None => refuse(libc::EPERM, "an unknown or foreign process token".into()),
                };
            }
        }
    };
    let w = welcome(state, client.token);
    reply(t, &m.header, 0, &w.encode(), &[]).then_some(Joined::Client(client))
}

fn welcome(state: &State, token: [u8; 16]) -> Welcome {
    Welcome {
        version: wire::VERSION,
        token,
        config: state.config_json.clone(),
        sysfs_root: state.device.sysfs().root().to_string_lossy().into_owned(),
    }
}

/// Serves a process of the checkpoint coming back: ADOPT messages (its
/// memfd mappings), then RESUME, which restores its driver with that
/// memory; the client it becomes, or None when the connection ends.
fn resume(state: &State, t: &UnixTransport, pid: u32, token: [u8; 16]) -> Option<Arc<Client>> {
    loop {
        let m = t.recv().ok()??;
        let req = Request::decode(&m.header, &m.payload);
        let mut fds = m.fds;
        match req {
            Ok(Request::Adopt(a)) if a.maps.len() == fds.len() => {
                let mut pending = state.pending.lock().unwrap_or_else(|e| e.into_inner());
                let Some(p) = pending.get_mut(&token) else {
                    drop(pending);
                    reply(t, &m.header, -libc::EALREADY, b"", &[]);
                    continue;
                };
                for (&(start, len, off), fd) in a.maps.iter().zip(fds.drain(..)) {
                    p.offered.push((start, len, off, Arc::new(fd)));
                }
                drop(pending);
                reply(t, &m.header, 0, b"", &[]);
            }
            Ok(Request::Resume) => {
                let p = state
                    .pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&token);
                let Some(p) = p else {
                    // Another connection of the process resumed it.
                    reply(t, &m.header, -libc::EALREADY, b"", &[]);
                    return state.lock().get(&token).cloned();
                };
                match restore_client(state, token, pid, &p) {
                    Ok((c, summary)) => {
                        reply(t, &m.header, 0, summary.as_bytes(), &[]);
                        return Some(c);
                    }
                    Err(why) => {
                        tracing::warn!("pid {pid}: restore refused: {why}");
                        reply(t, &m.header, -libc::EINVAL, why.as_bytes(), &[]);
                        return None;
                    }
                }
            }
            _ => {
                reply(t, &m.header, -libc::EAGAIN, b"", &[]);
            }
        }
    }
}

/// Restores the checkpoint's process `p` on the daemon's device, its
/// memory the mappings it offered where they cover an allocation.
fn restore_client(
    state: &State,
    token: [u8; 16],
    pid: u32,
    p: &Pending,
) -> Result<(Arc<Client>, String), String> {
    let ck = state.restored.as_ref().ok_or("nothing to restore")?;
    let st = &ck.meta.clients[p.index];
    // The mapping over the allocation's bytes where the process has them:
    // a userptr allocation's at the address it registered, which need not
    // be its GPU address.
    let mut adopt = |a: &crate::checkpoint::AllocationState| {
        let at = a.process_address();
        let (start, _, off, fd) = p
            .offered
            .iter()
            .find(|(s, l, _, _)| *s <= at && at.saturating_add(a.size) <= s.saturating_add(*l))?;
        let dup = fd.try_clone().ok()?;
        Some((dup, off + (at - start)))
    };
    let (driver, report) =
        SimulatedDriver::restore(&state.device, Caller::Remote, st, ck, &mut adopt)
            .map_err(|e| e.to_string())?;
    driver.set_quota(state.quota(pid));
    let c = Arc::new(Client {
        token,
        pid,
        pidfd: pidfd(pid),
        driver,
        conns: Mutex::new(Vec::new()),
        live: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
    });
    state.lock().insert(token, c.clone());
    state.wake();
    tracing::info!(
        "client pid {pid} restored: {} allocations ({} of them the process's memory, {} with bytes written since the checkpoint), {} queues, {} events",
        report.allocations,
        report.adopted,
        report.differing.len(),
        st.queues.queues.len(),
        st.events.events.len()
    );
    let summary = format!(
        "{{\"allocations\": {}, \"adopted\": {}, \"changed_since_checkpoint\": {}, \"queues\": {}, \"events\": {}}}",
        report.allocations,
        report.adopted,
        report.differing.len(),
        st.queues.queues.len(),
        st.events.events.len()
    );
    Ok((c, summary))
}

/// Our device file for a device a client names.
fn device_file(state: &State, d: wire::Device) -> Result<DeviceFile, Errno> {
    match d {
        wire::Device::Kfd => Ok(DeviceFile::Kfd),
        wire::Device::Render { gpu, minor } => {
            let g = state
                .device
                .config()
                .gpus
                .get(gpu as usize)
                .ok_or(Errno::EINVAL)?;
            if g.kfd.drm_render_minor != minor {
                return Err(Errno::EINVAL);
            }
            Ok(DeviceFile::Render {
                gpu: gpu as usize,
                minor,
            })
        }
    }
}

/// Serves one request; false when the connection should end.
fn serve_request(state: &State, client: &Client, t: &UnixTransport, m: Message) -> bool {
    // Descriptors a client sends are used only as a userptr allocation's
    // memory (checked there); otherwise they are closed here.
    let mut fds = m.fds;
    let req = match Request::decode(&m.header, &m.payload) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("client pid {}: malformed request: {e}", client.pid);
            return reply(t, &m.header, -libc::EINVAL, b"", &[]);
        }
    };
    if client.closed.load(Ordering::Acquire) {
        return reply(t, &m.header, -libc::ENODEV, b"", &[]);
    }
    // Every call but a wait for events is held while a checkpoint is
    // taken (and after: the daemon stays frozen); a wait reads and changes
    // only event state, which the checkpoint reads under its lock.
    let waits = matches!(&req, Request::Ioctl(io)
        if abi::ioc_type(io.request) == abi::KFD_TYPE
            && abi::ioc_nr(io.request) == abi::kfd::WAIT_EVENTS);
    let _gate = (!waits).then(|| state.gate.enter());
    match req {
        Request::Handshake(_)
        | Request::Status
        | Request::Checkpoint(_)
        | Request::Adopt(_)
        | Request::Resume => reply(t, &m.header, -libc::EPROTO, b"", &[]),
        Request::Close => {
            state.remove(&client.token, "closed the device");
            let _ = reply(t, &m.header, 0, b"", &[]);
            false
        }
        Request::Mmap(mm) => {
            let r = device_file(state, mm.device)
                .and_then(|d| client.driver.mmap(d, mm.offset, mm.len));
            match r {
                Ok(src) => {
                    // SAFETY: `src.fd` is a memfd the driver keeps open while
                    // the allocation lives; it outlives this call.
                    let fd = unsafe { BorrowedFd::borrow_raw(src.fd) };
                    reply(t, &m.header, 0, &wire::encode_u64(src.offset), &[fd])
                }
                Err(e) => reply(t, &m.header, -e.0, b"", &[]),
            }
        }
        Request::Ioctl(io) => {
            let backing = match (io.fds, fds.len()) {
                (0, 0) => None,
                (1, 1) => fds.pop(),
                _ => return reply(t, &m.header, -libc::EINVAL, b"", &[]),
            };
            serve_ioctl(state, client, t, &m.header, io, backing)
        }
    }
}

fn serve_ioctl(
    state: &State,
    client: &Client,
    t: &UnixTransport,
    h: &Header,
    io: Ioctl,
    backing: Option<std::os::fd::OwnedFd>,
) -> bool {
    let dev = match device_file(state, io.device) {
        Ok(d) => d,
        Err(e) => return reply(t, h, -e.0, b"", &[]),
    };
    if io.arg.len() != abi::ioc_size(io.request)
        || io.buffers.iter().map(|(_, b)| b.len()).sum::<usize>() > abi::MAX_USER_BUFFERS
    {
        return reply(t, h, -libc::EINVAL, b"", &[]);
    }
    let mem = user::Buffers::default();
    for (addr, data) in io.buffers {
        mem.add(addr, data);
    }
    let offered = backing.is_some();
    if let Some(fd) = backing {
        mem.offer_userptr_backing(fd, io.fd_offset);
    }
    let mut arg = io.arg;
    let r = client.driver.ioctl_from(dev, io.request, &mut arg, &mem);
    // A userptr allocation is a memfd here: the client maps it over its
    // pages.
    // (Unless it is memory the client sent: it maps that already.)
    let mut fd = None;
    // A descriptor the call gives the client (a dma-buf export).
    let installed = mem.take_installed();
    let sent_and_used = offered && !mem.backing_offered();
    if r.is_ok()
        && !sent_and_used
        && dev == DeviceFile::Kfd
        && abi::ioc_nr(io.request) == abi::kfd::ALLOC_MEMORY_OF_GPU
        && abi::get(&arg, abi::kfd::alloc_memory_of_gpu::FLAGS) & abi::kfd::ALLOC_USERPTR != 0
    {
        fd = client
            .driver
            .allocation_fd(abi::get(&arg, abi::kfd::alloc_memory_of_gpu::HANDLE));
    }
    let out = Ioctl {
        device: io.device,
        request: io.request,
        arg,
        buffers: mem.written(),
        fds: u32::from(fd.is_some() || installed.is_some()),
        fd_offset: 0,
        notes: {
            let mut n = client.driver.take_reports();
            n.truncate(wire::MAX_NOTES);
            for s in &mut n {
                if s.len() > wire::MAX_NOTE {
                    let mut cut = wire::MAX_NOTE;
                    while !s.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    s.truncate(cut);
                }
            }
            n
        },
    };
    // SAFETY: the allocation's memfd stays open while the allocation lives,
    // which is beyond this reply.
    let fds: Vec<BorrowedFd> = fd
        .map(|(f, _)| unsafe { BorrowedFd::borrow_raw(f) })
        .into_iter()
        .chain(installed.as_ref().map(|f| f.as_fd()))
        .collect();
    match r {
        Ok(v) => reply(t, h, v, &out.encode(), &fds),
        Err(e) => reply(t, h, -e.0, &out.encode(), &[]),
    }
}

/// Has the daemon at `socket` write a checkpoint to `out` (a path the
/// daemon can write; made absolute here) and freeze; its summary (JSON).
pub fn request_checkpoint(socket: &Path, out: &Path) -> Result<String, String> {
    let out = std::path::absolute(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let t = UnixTransport::connect_own(socket).map_err(|e| match e.kind() {
        std::io::ErrorKind::PermissionDenied if e.get_ref().is_some() => e.to_string(),
        _ => format!("no daemon answers at {}: {e}", socket.display()),
    })?;
    let mut w = wire::Writer::default();
    w.bytes(out.to_string_lossy().as_bytes());
    let h = Header {
        opcode: Opcode::Checkpoint as u16,
        reserved: 0,
        request_id: 1,
        payload_len: w.buf.len() as u32,
        result: 0,
    };
    t.send(&h, &w.buf, &[]).map_err(|e| e.to_string())?;
    let m = t
        .recv()
        .map_err(|e| e.to_string())?
        .ok_or("the daemon closed the connection")?;
    let text = String::from_utf8_lossy(&m.payload).into_owned();
    if m.header.result != 0 {
        return Err(format!("the daemon did not checkpoint: {text}"));
    }
    Ok(text)
}

/// Asks the daemon at `socket` for its [`Status`] (JSON).
pub fn query_status(socket: &Path) -> Result<String, String> {
    let t = UnixTransport::connect_own(socket).map_err(|e| match e.kind() {
        std::io::ErrorKind::PermissionDenied if e.get_ref().is_some() => e.to_string(),
        _ => format!("no daemon answers at {}: {e}", socket.display()),
    })?;
    let h = Header {
        opcode: Opcode::Status as u16,
        reserved: 0,
        request_id: 1,
        payload_len: 0,
        result: 0,
    };
    // A daemon refusing the connection may have answered and closed it
    // before the request went out: its answer is read even then.
    let sent = t.send(&h, b"", &[]);
    let m = match t.recv() {
        Ok(Some(m)) => m,
        r => {
            sent.map_err(|e| e.to_string())?;
            r.map_err(|e| e.to_string())?;
            return Err("the daemon closed the connection".into());
        }
    };
    if m.header.result != 0 {
        let why = String::from_utf8_lossy(&m.payload);
        return Err(format!(
            "the daemon refused: errno {}{}{why}",
            -m.header.result,
            if why.is_empty() { "" } else { ": " }
        ));
    }
    String::from_utf8(m.payload).map_err(|e| e.to_string())
}
