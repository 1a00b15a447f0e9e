//! The WebSocket endpoints: an execution's output, a session's live
//! metrics, and a terminal into a session. Each handshake selects the
//! subprotocol [`crate::auth::WS_PROTOCOL`]. What talks to a supervisor
//! runs on threads of its own, so a slow session delays only its own
//! socket.

use crate::State;
use crate::api::{ApiError, connect};
use crate::auth::WS_PROTOCOL;
use crate::executions::Event;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query};
use axum::http::StatusCode;
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use mirage_core::ipc::{ExecRequest, Reply, Request, Winsize};
use mirage_core::metrics::{Frame, rates};
use mirage_core::session::Liveness;
use mirage_host::manage;
use serde::Deserialize;
use serde_json::json;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use tokio::sync::mpsc;
use utoipa::IntoParams;

/// What a reader thread hands the socket.
enum Out {
    Text(String),
    Binary(Vec<u8>),
}

/// Pumps `rx` into the socket and hands what the client sends to `input`
/// until either side ends.
async fn pump(socket: WebSocket, mut rx: mpsc::Receiver<Out>, mut input: impl FnMut(Message)) {
    let (mut sink, mut stream) = socket.split();
    loop {
        tokio::select! {
            m = rx.recv() => {
                let msg = match m {
                    Some(Out::Text(t)) => Message::Text(t.into()),
                    Some(Out::Binary(b)) => Message::Binary(b.into()),
                    None => break,
                };
                if sink.send(msg).await.is_err() {
                    return;
                }
            }
            c = stream.next() => match c {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(m)) => input(m),
            }
        }
    }
    let _ = sink.send(Message::Close(None)).await;
}

/// An execution's output: the kept output, then what follows, as binary
/// messages; at the end a text message `{"type": "exit", "code": N}`.
#[utoipa::path(get, path = "/api/executions/{id}/stream", tag = "executions", params(("id" = String, Path)),
    responses((status = 101, description = "WebSocket (subprotocol mirage.v1)"), (status = 404, body = ApiError)))]
pub async fn execution_stream(
    axum::extract::State(s): axum::extract::State<State>,
    Path(id): Path<String>,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let e = s
        .executions
        .get(&id)
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, format!("no execution '{id}'")))?;
    Ok(ws.protocols([WS_PROTOCOL]).on_upgrade(move |socket| async move {
        let (tx, rx) = mpsc::channel(64);
        let (kept, code, mut events) = e.subscribe();
        tokio::spawn(async move {
            if !kept.is_empty() && tx.send(Out::Binary(kept)).await.is_err() {
                return;
            }
            let exit = |c: i32| Out::Text(json!({"type": "exit", "code": c}).to_string());
            if let Some(c) = code {
                let _ = tx.send(exit(c)).await;
                return;
            }
            loop {
                match events.recv().await {
                    Ok(Event::Output(b)) => {
                        if tx.send(Out::Binary(b.to_vec())).await.is_err() {
                            return;
                        }
                    }
                    Ok(Event::Exit(c)) => {
                        let _ = tx.send(exit(c)).await;
                        return;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        let note = format!("\r\n[mirage: {n} output chunks dropped: the reader was too slow]\r\n");
                        if tx.send(Out::Binary(note.into_bytes())).await.is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                }
            }
        });
        pump(socket, rx, |_| {}).await;
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct MetricsQuery {
    /// Milliseconds between frames (100 to 5000, default 250).
    #[serde(default)]
    pub interval_ms: Option<u32>,
}

/// A session's live metrics: a text message per frame, `{"type":
/// "metrics", "time", "nodes": [{"node", "gpus": [per-GPU rates and
/// gauges], "total", "events": [dispatch begin/end]}]}`; `{"type":
/// "stalled"}` when the supervisor has been silent for 2 s; `{"type":
/// "ended", "reason"}` when the session stopped or died (at once: the
/// supervisor's end closes the connection).
#[utoipa::path(get, path = "/api/sessions/{id}/metrics", tag = "sessions", params(("id" = String, Path), MetricsQuery),
    responses((status = 101, description = "WebSocket (subprotocol mirage.v1)"), (status = 404, body = ApiError)))]
pub async fn session_metrics(
    axum::extract::State(s): axum::extract::State<State>,
    Path(id): Path<String>,
    Query(q): Query<MetricsQuery>,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let d = crate::api::blocking({
        let s = s.clone();
        move || Ok(manage::find(&s.paths, &id)?)
    })
    .await?;
    let interval = q.interval_ms.unwrap_or(250).clamp(100, 5000);
    Ok(ws.protocols([WS_PROTOCOL]).on_upgrade(move |socket| async move {
        let (tx, rx) = mpsc::channel(16);
        std::thread::spawn(move || {
            let ended = |why: String| Out::Text(json!({"type": "ended", "reason": why}).to_string());
            let ch = match connect(&d, 2) {
                Ok(c) => c,
                Err(e) => {
                    let _ = tx.blocking_send(ended(e.error));
                    return;
                }
            };
            if ch.send(&Request::Metrics { interval_ms: interval }, &[]).is_err() {
                let _ = tx.blocking_send(ended(format!("session {}: its supervisor did not take the request", d.id)));
                return;
            }
            let mut prev: Option<Frame> = None;
            loop {
                match ch.recv::<Reply>() {
                    Ok(Some((Reply::Metrics { frame }, _))) => {
                        let nodes = rates(prev.as_ref(), &frame);
                        let msg = json!({"type": "metrics", "time": frame.time, "nodes": nodes});
                        prev = Some(frame);
                        if tx.blocking_send(Out::Text(msg.to_string())).is_err() {
                            return;
                        }
                    }
                    Ok(Some(_)) => {}
                    Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                        if tx.blocking_send(Out::Text(json!({"type": "stalled"}).to_string())).is_err() {
                            return;
                        }
                    }
                    Ok(None) | Err(_) => {
                        let why = if !d.dir.exists() {
                            format!("session {} stopped", d.id)
                        } else if d.liveness() == Liveness::Dead {
                            format!("session {} died: its supervisor is gone (stop it to remove what it left)", d.id)
                        } else {
                            format!("session {} is stopping", d.id)
                        };
                        let _ = tx.blocking_send(ended(why));
                        return;
                    }
                }
            }
        });
        pump(socket, rx, |_| {}).await;
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct TerminalQuery {
    #[serde(default)]
    pub node: Option<u32>,
    #[serde(default)]
    pub rows: Option<u16>,
    #[serde(default)]
    pub cols: Option<u16>,
    /// The program to run (default `bash`).
    #[serde(default)]
    pub shell: Option<String>,
}

fn set_winsize(fd: i32, rows: u16, cols: u16) {
    let ws = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one winsize from the pointer.
    unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, &ws) };
}

/// A terminal in a session (`mirage exec -it`): binary messages carry the
/// terminal's bytes both ways; the client sends `{"type": "resize",
/// "rows", "cols"}` as text; the server ends with `{"type": "exit",
/// "code"}` (or `{"type": "error", "message"}`). Closing the socket ends
/// the program.
#[utoipa::path(get, path = "/api/sessions/{id}/terminal", tag = "sessions", params(("id" = String, Path), TerminalQuery),
    responses((status = 101, description = "WebSocket (subprotocol mirage.v1)"), (status = 404, body = ApiError)))]
pub async fn session_terminal(
    axum::extract::State(s): axum::extract::State<State>,
    Path(id): Path<String>,
    Query(q): Query<TerminalQuery>,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let d = crate::api::blocking({
        let s = s.clone();
        move || {
            let d = manage::find(&s.paths, &id)?;
            manage::require_alive(&d)?;
            Ok(d)
        }
    })
    .await?;
    let size = Winsize {
        rows: q.rows.unwrap_or(24).clamp(2, 500),
        cols: q.cols.unwrap_or(80).clamp(10, 1000),
    };
    let argv = vec![q.shell.unwrap_or_else(|| "bash".into())];
    let req = Request::Exec(ExecRequest {
        argv,
        node: q.node,
        nproc_per_node: None,
        env: vec![],
        client_env: s.client_env.clone(),
        cwd: s.cwd.clone(),
        tty: Some(size),
    });
    Ok(ws
        .protocols([WS_PROTOCOL])
        .on_upgrade(move |socket| async move {
            let (tx, rx) = mpsc::channel(64);
            let (in_tx, in_rx) = std::sync::mpsc::channel::<Vec<u8>>();
            let master_fd = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(-1));
            let fd_for_resize = master_fd.clone();
            let closer: std::sync::Arc<
                std::sync::Mutex<Option<std::sync::Arc<mirage_core::ipc::Channel>>>,
            > = Default::default();
            let closer2 = closer.clone();
            std::thread::spawn(move || {
                let error =
                    |m: String| Out::Text(json!({"type": "error", "message": m}).to_string());
                let ch = match connect(&d, 10) {
                    Ok(c) => std::sync::Arc::new(c),
                    Err(e) => {
                        let _ = tx.blocking_send(error(e.error));
                        return;
                    }
                };
                let started = ch.send(&req, &[]).and_then(|_| ch.recv::<Reply>());
                let master = match started {
                    Ok(Some((Reply::Started { .. }, mut fds))) => match fds.pop() {
                        Some(m) => m,
                        None => {
                            let _ = tx.blocking_send(error("no terminal came back".into()));
                            return;
                        }
                    },
                    Ok(Some((Reply::Error { message }, _))) => {
                        let _ = tx.blocking_send(error(message));
                        return;
                    }
                    other => {
                        let _ = tx.blocking_send(error(format!(
                            "session {}: no answer ({other:?})",
                            d.id
                        )));
                        return;
                    }
                };
                // The exit comes whenever the program ends.
                let tv = libc::timeval {
                    tv_sec: 0,
                    tv_usec: 0,
                };
                // SAFETY: setsockopt reads one timeval (0: no timeout) from
                // the pointer, on our own socket.
                unsafe {
                    libc::setsockopt(
                        ch.raw_fd(),
                        libc::SOL_SOCKET,
                        libc::SO_RCVTIMEO,
                        (&raw const tv).cast(),
                        std::mem::size_of::<libc::timeval>() as libc::socklen_t,
                    );
                }
                *closer2.lock().unwrap_or_else(|e| e.into_inner()) = Some(ch.clone());
                master_fd.store(master.as_raw_fd(), std::sync::atomic::Ordering::SeqCst);
                let mut reader = std::fs::File::from(master);
                let mut writer = match reader.try_clone() {
                    Ok(w) => w,
                    Err(e) => {
                        let _ = tx.blocking_send(error(e.to_string()));
                        return;
                    }
                };
                std::thread::spawn(move || {
                    while let Ok(b) = in_rx.recv() {
                        if writer.write_all(&b).is_err() {
                            break;
                        }
                    }
                });
                let out = tx.clone();
                let fd_clear = master_fd.clone();
                let pty = std::thread::spawn(move || {
                    let mut buf = vec![0u8; 32 * 1024];
                    loop {
                        match reader.read(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => {
                                if out.blocking_send(Out::Binary(buf[..n].to_vec())).is_err() {
                                    break;
                                }
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                            Err(_) => break,
                        }
                    }
                    // The descriptor closes with `reader` (the writer's copy is
                    // another one): resizes stop here.
                    fd_clear.store(-1, std::sync::atomic::Ordering::SeqCst);
                });
                let code = loop {
                    match ch.recv::<Reply>() {
                        Ok(Some((Reply::Exit { code }, _))) => break code,
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => break 255,
                    }
                };
                let _ = pty.join();
                let _ =
                    tx.blocking_send(Out::Text(json!({"type": "exit", "code": code}).to_string()));
            });
            pump(socket, rx, move |m| match m {
                Message::Binary(b) => {
                    let _ = in_tx.send(b.to_vec());
                }
                Message::Text(t) => {
                    #[derive(Deserialize)]
                    struct Resize {
                        rows: u16,
                        cols: u16,
                    }
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&t) {
                        if v["type"] == "resize"
                            && let Ok(r) = serde_json::from_value::<Resize>(v.clone())
                        {
                            let fd = fd_for_resize.load(std::sync::atomic::Ordering::SeqCst);
                            if fd >= 0 {
                                set_winsize(fd, r.rows.clamp(2, 500), r.cols.clamp(10, 1000));
                            }
                        } else if v["type"] == "input"
                            && let Some(s) = v["data"].as_str()
                        {
                            let _ = in_tx.send(s.as_bytes().to_vec());
                        }
                    }
                }
                _ => {}
            })
            .await;
            // The client went away: the supervisor ends the program when its
            // connection closes.
            if let Some(c) = closer.lock().unwrap_or_else(|e| e.into_inner()).take() {
                c.shutdown();
            }
        }))
}
