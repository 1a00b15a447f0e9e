//! Executions started through the API: a command run in a session by the
//! session's supervisor (the control socket's `Exec`, as `mirage exec`
//! does), with stdin from /dev/null and stdout and stderr into one pipe
//! whose output is kept (the last [`KEEP`] bytes) and streamed to
//! WebSocket readers. As with `mirage exec`, an execution belongs to its
//! connection: it ends if the server goes away.

use mirage_core::ipc::{Channel, ExecRequest, Reply, Request};
use mirage_core::session::SessionDir;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// Output bytes kept per execution.
pub const KEEP: usize = 4 << 20;

/// What readers of an execution are sent.
#[derive(Debug, Clone)]
pub enum Event {
    Output(Arc<[u8]>),
    Exit(i32),
}

/// An execution's record, as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Info {
    pub id: String,
    pub session: String,
    pub argv: Vec<String>,
    pub node: Option<u32>,
    pub nproc_per_node: Option<u32>,
    /// `starting`, `running`, `exited` or `failed`.
    pub status: String,
    /// The exit status (128+N for signal N).
    pub code: Option<i32>,
    /// Why it failed to start.
    pub error: Option<String>,
    pub pids: Vec<u32>,
    /// Seconds since the Unix epoch.
    pub started: u64,
    pub ended: Option<u64>,
    /// Bytes of output so far (the first ones may have been dropped).
    pub output_bytes: u64,
    /// The session is stopped when it ends (`POST /api/run`).
    pub ephemeral: bool,
}

pub struct Execution {
    pub info: Mutex<Info>,
    /// The kept output (the tail of it).
    output: Mutex<Vec<u8>>,
    tx: broadcast::Sender<Event>,
    channel: Mutex<Option<Arc<Channel>>>,
}

impl Execution {
    pub fn info(&self) -> Info {
        self.info.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The kept output and a receiver of what follows it (taken together,
    /// so nothing is missed or repeated).
    pub fn subscribe(&self) -> (Vec<u8>, Option<i32>, broadcast::Receiver<Event>) {
        let out = self.output.lock().unwrap_or_else(|e| e.into_inner());
        let rx = self.tx.subscribe();
        let code = self.info().code;
        (out.clone(), code, rx)
    }

    pub fn output(&self) -> Vec<u8> {
        self.output
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn append(&self, data: &[u8]) {
        let mut out = self.output.lock().unwrap_or_else(|e| e.into_inner());
        out.extend_from_slice(data);
        if out.len() > KEEP {
            let cut = out.len() - KEEP;
            out.drain(..cut);
        }
        self.info
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .output_bytes += data.len() as u64;
        let _ = self.tx.send(Event::Output(data.into()));
    }

    fn finish(&self, status: &str, code: Option<i32>, error: Option<String>) {
        // Under the output lock: a reader subscribing now sees either the
        // code or the Exit event.
        let _out = self.output.lock().unwrap_or_else(|e| e.into_inner());
        {
            let mut i = self.info.lock().unwrap_or_else(|e| e.into_inner());
            if i.ended.is_some() {
                return;
            }
            i.status = status.into();
            i.code = code;
            i.error = error;
            i.ended = Some(mirage_core::session::now());
        }
        let _ = self.tx.send(Event::Exit(code.unwrap_or(255)));
    }

    pub fn is_running(&self) -> bool {
        self.info().ended.is_none()
    }

    /// Sends a signal to the execution's processes (through its
    /// supervisor).
    pub fn signal(&self, signal: i32) -> bool {
        let ch = self
            .channel
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        ch.is_some_and(|c| c.send(&Request::Signal { signal }, &[]).is_ok())
    }
}

/// Every execution the server started (finished ones stay until deleted;
/// at most [`RECORDS`] finished ones are kept).
#[derive(Default)]
pub struct Executions {
    map: Mutex<BTreeMap<u64, Arc<Execution>>>,
    next: AtomicU64,
}

/// Finished executions kept.
pub const RECORDS: usize = 200;

/// What to run.
pub struct Spec {
    pub argv: Vec<String>,
    pub node: Option<u32>,
    pub nproc_per_node: Option<u32>,
    pub env: Vec<(String, String)>,
    pub client_env: Vec<(String, String)>,
    pub cwd: Option<std::path::PathBuf>,
    pub ephemeral: bool,
}

impl Executions {
    pub fn list(&self) -> Vec<Arc<Execution>> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    pub fn get(&self, id: &str) -> Option<Arc<Execution>> {
        let n: u64 = id.strip_prefix('e')?.parse().ok()?;
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&n)
            .cloned()
    }

    /// Removes a finished execution's record.
    pub fn remove(&self, id: &str) -> Result<(), &'static str> {
        let Some(n) = id.strip_prefix('e').and_then(|n| n.parse::<u64>().ok()) else {
            return Err("not found");
        };
        let mut m = self.map.lock().unwrap_or_else(|e| e.into_inner());
        match m.get(&n) {
            None => Err("not found"),
            Some(e) if e.is_running() => Err("running"),
            Some(_) => {
                m.remove(&n);
                Ok(())
            }
        }
    }

    /// Ends every running execution (the server is stopping).
    pub fn end_all(&self) {
        for e in self.list() {
            if e.is_running() {
                e.signal(libc::SIGTERM);
            }
            if let Some(c) = e.channel.lock().unwrap_or_else(|e| e.into_inner()).take() {
                c.shutdown();
            }
        }
    }

    fn prune(&self) {
        let mut m = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let finished: Vec<u64> = m
            .iter()
            .filter(|(_, e)| !e.is_running())
            .map(|(k, _)| *k)
            .collect();
        if finished.len() > RECORDS {
            for k in &finished[..finished.len() - RECORDS] {
                m.remove(k);
            }
        }
    }

    /// Starts `spec` in session `d`; returns at once (the supervisor's
    /// answer and the output are followed by threads of their own).
    /// `on_end` runs when it has ended.
    pub fn start(
        &self,
        d: &SessionDir,
        spec: Spec,
        on_end: impl FnOnce(&Execution) + Send + 'static,
    ) -> Arc<Execution> {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, _) = broadcast::channel(1024);
        let e = Arc::new(Execution {
            info: Mutex::new(Info {
                id: format!("e{n}"),
                session: d.id.clone(),
                argv: spec.argv.clone(),
                node: spec.node,
                nproc_per_node: spec.nproc_per_node,
                status: "starting".into(),
                code: None,
                error: None,
                pids: vec![],
                started: mirage_core::session::now(),
                ended: None,
                output_bytes: 0,
                ephemeral: spec.ephemeral,
            }),
            output: Mutex::new(Vec::new()),
            tx,
            channel: Mutex::new(None),
        });
        self.prune();
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(n, e.clone());
        let socket = d.socket();
        let id = d.id.clone();
        let ex = e.clone();
        std::thread::spawn(move || {
            match launch(&socket, &id, &ex, spec) {
                Ok(()) => {}
                Err(m) => ex.finish("failed", None, Some(m)),
            }
            on_end(&ex);
        });
        e
    }
}

/// Sends the request with a pipe for the output, then follows the output
/// and the supervisor's answers until the execution ends.
fn launch(
    socket: &std::path::Path,
    id: &str,
    ex: &Arc<Execution>,
    spec: Spec,
) -> Result<(), String> {
    let ch = Channel::connect(socket)
        .map_err(|e| format!("session {id}: cannot reach its supervisor: {e}"))?;
    let ch = Arc::new(ch);
    let (r, w) = std::io::pipe().map_err(|e| e.to_string())?;
    let null: OwnedFd = std::fs::File::open("/dev/null")
        .map_err(|e| e.to_string())?
        .into();
    let w: OwnedFd = w.into();
    let req = Request::Exec(ExecRequest {
        argv: spec.argv,
        node: spec.node,
        nproc_per_node: spec.nproc_per_node,
        env: spec.env,
        client_env: spec.client_env,
        cwd: spec.cwd,
        tty: None,
    });
    ch.send(&req, &[null.as_fd(), w.as_fd(), w.as_fd()])
        .map_err(|e| format!("session {id}: {e}"))?;
    drop((null, w));
    *ex.channel.lock().unwrap_or_else(|e| e.into_inner()) = Some(ch.clone());
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    {
        let ex = ex.clone();
        std::thread::spawn(move || {
            let _done = done_tx;
            let mut r = r;
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match r.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => ex.append(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        });
    }
    let mut result = None;
    loop {
        match ch.recv::<Reply>() {
            Ok(Some((Reply::Started { pids }, _))) => {
                let mut i = ex.info.lock().unwrap_or_else(|e| e.into_inner());
                i.status = "running".into();
                i.pids = pids;
            }
            Ok(Some((Reply::Exit { code }, _))) => {
                result = Some(Ok(code));
                break;
            }
            Ok(Some((Reply::Error { message }, _))) => {
                result = Some(Err(message));
                break;
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    // The output's last bytes come before the exit is told (unless a
    // process the execution left behind holds the pipe open).
    let _ = done_rx.recv_timeout(std::time::Duration::from_secs(1));
    ex.channel.lock().unwrap_or_else(|e| e.into_inner()).take();
    match result {
        Some(Ok(code)) => ex.finish("exited", Some(code), None),
        Some(Err(m)) => ex.finish("failed", None, Some(m)),
        None => ex.finish(
            "failed",
            None,
            Some(format!(
                "session {id}: the supervisor closed the connection (the session stopped?)"
            )),
        ),
    }
    Ok(())
}
