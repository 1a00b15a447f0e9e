//! The control socket: `mirage exec`, `session stop` and `session show`
//! talk to the supervisor through it (see `mirage_core::ipc`).
//!
//! An execution belongs to its connection: signals the client forwards
//! reach it, and when the client goes away (killed, or its terminal closed)
//! the execution is ended.

use crate::exec::{Io, Launch, Target};
use crate::{Result, Session};
use mirage_core::ipc::{Channel, ExecRequest, Listener, Reply, Request};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

pub(crate) fn serve(session: Arc<Session>) -> Result<()> {
    let path = session.dir.socket();
    let listener =
        Listener::bind(&path).map_err(|e| session.err(format!("{}: {e}", path.display())))?;
    let id = session.id().to_string();
    std::thread::Builder::new()
        .name("control".into())
        .spawn(move || {
            loop {
                match listener.accept() {
                    Ok(ch) => {
                        let s = session.clone();
                        std::thread::spawn(move || connection(s, ch));
                    }
                    Err(e) => {
                        if !session.is_stopping() {
                            tracing::error!("control socket: {e}");
                        }
                        break;
                    }
                }
            }
        })
        .map_err(|e| crate::HostError::Session {
            session: id,
            message: format!("cannot start the control thread: {e}"),
        })?;
    Ok(())
}

fn connection(session: Arc<Session>, ch: Channel) {
    let ch = Arc::new(ch);
    let Ok(Some((req, fds))) = ch.recv::<Request>() else {
        return;
    };
    match req {
        Request::Exec(e) => exec(&session, &ch, e, fds),
        Request::Stop => {
            let _ = ch.send(&Reply::Stopping, &[]);
            session.request_stop();
        }
        Request::Status => {
            let _ = ch.send(
                &Reply::Status {
                    executions: session.executions(),
                },
                &[],
            );
        }
        Request::Metrics { interval_ms } => metrics(&session, &ch, interval_ms),
        Request::Signal { .. } => {
            let _ = ch.send(
                &Reply::Error {
                    message: "no execution on this connection to signal".into(),
                },
                &[],
            );
        }
    }
}

fn exec(session: &Arc<Session>, ch: &Arc<Channel>, e: ExecRequest, fds: Vec<OwnedFd>) {
    let io = match e.tty {
        Some(size) => Io::Tty(size),
        None => {
            let mut it = fds.into_iter();
            match (it.next(), it.next(), it.next()) {
                (Some(stdin), Some(stdout), Some(stderr)) => Io::Fds {
                    stdin,
                    stdout,
                    stderr,
                },
                _ => {
                    let _ = ch.send(&Reply::Error { message: "an execution without a terminal needs three descriptors (stdin, stdout, stderr)".into() }, &[]);
                    return;
                }
            }
        }
    };
    let target = match e.nproc_per_node {
        Some(n) => Target::Ranks { nproc_per_node: n },
        None => Target::Node(e.node.unwrap_or(0)),
    };
    let launch = Launch {
        argv: e.argv,
        target,
        env: e.env,
        client_env: e.client_env,
        cwd: e.cwd,
        io,
    };
    let running = match session.launch(launch) {
        Ok(r) => r,
        Err(err) => {
            let _ = ch.send(
                &Reply::Error {
                    message: err.to_string(),
                },
                &[],
            );
            return;
        }
    };
    let started = Reply::Started {
        pids: running.pids(),
    };
    let sent = match &running.master {
        Some(m) => ch.send(&started, &[m.as_fd()]),
        None => ch.send(&started, &[]),
    };
    let shared = running.shared.clone();
    drop(running);
    if sent.is_err() {
        shared.signal(libc::SIGKILL);
    }
    let waiter = {
        let ch = ch.clone();
        let shared = shared.clone();
        std::thread::spawn(move || {
            let code = shared.wait();
            let _ = ch.send(&Reply::Exit { code }, &[]);
        })
    };
    loop {
        match ch.recv::<Request>() {
            Ok(Some((Request::Signal { signal }, _))) => shared.signal(signal),
            Ok(Some(_)) => {
                let _ = ch.send(
                    &Reply::Error {
                        message: "one request per connection besides signals".into(),
                    },
                    &[],
                );
            }
            Ok(None) | Err(_) => break,
        }
    }
    if !shared.finished() {
        tracing::info!("the client of an execution went away: ending it");
        shared.signal(libc::SIGHUP);
        shared.signal(libc::SIGTERM);
        std::thread::sleep(std::time::Duration::from_millis(500));
        if !shared.finished() {
            shared.signal(libc::SIGKILL);
        }
    }
    let _ = waiter.join();
}

/// Sends the session's live counters every `interval_ms` until the client
/// goes away or the session stops. Each frame carries the dispatch events
/// this client has not seen yet.
fn metrics(session: &Arc<Session>, ch: &Channel, interval_ms: u32) {
    let every = std::time::Duration::from_millis(u64::from(interval_ms.clamp(100, 5000)));
    let mut seen: Vec<u64> = vec![0; session.nodes()];
    while !session.is_stopping() {
        let frame = session.sample(&seen);
        for n in &frame.nodes {
            if let (Some(s), Some(last)) = (seen.get_mut(n.node as usize), n.events.last()) {
                *s = last.id;
            }
        }
        if ch.send(&Reply::Metrics { frame }, &[]).is_err() {
            return;
        }
        std::thread::sleep(every);
    }
}
