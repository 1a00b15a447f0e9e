//! The control channel between `mirage` commands and a session's
//! supervisor: a Unix `SOCK_SEQPACKET` socket (`control.sock`, in the 0700
//! session directory; peers of another uid are refused), one JSON message
//! per packet, with file descriptors passed alongside (SCM_RIGHTS): an
//! execution's stdin/stdout/stderr go to the supervisor, a terminal's pty
//! master comes back.

use serde::{Deserialize, Serialize};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// The largest message (argv and environment included).
pub const MAX_MESSAGE: usize = 1 << 20;
const MAX_FDS: usize = rocjitsu_rpc::scm::MAX_FDS;

/// A request to a supervisor.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Runs a command; without `tty`, three descriptors (stdin, stdout,
    /// stderr) come with the message.
    Exec(ExecRequest),
    /// Sends a signal to the running execution of this connection.
    Signal { signal: i32 },
    /// Stops the session.
    Stop,
    /// Asks what runs.
    Status,
    /// Subscribes to the session's live metrics: a [`Reply::Metrics`]
    /// every `interval_ms` (clamped to 100..=5000) until the client closes
    /// the connection.
    Metrics { interval_ms: u32 },
}

/// Terminal size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Winsize {
    pub rows: u16,
    pub cols: u16,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExecRequest {
    pub argv: Vec<String>,
    /// The node to run on (default 0); ignored with `nproc_per_node`.
    #[serde(default)]
    pub node: Option<u32>,
    /// Launch this many ranks on every node (with RANK, WORLD_SIZE, ...)
    /// instead of one process.
    #[serde(default)]
    pub nproc_per_node: Option<u32>,
    /// Variables given on the command line (`--env`).
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// The client's environment: the base of executions on the host.
    #[serde(default)]
    pub client_env: Vec<(String, String)>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Run in a new pseudo-terminal of this size; its master comes back.
    #[serde(default)]
    pub tty: Option<Winsize>,
}

/// A supervisor's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Reply {
    /// The execution started (pids on the host); with a tty, the pty master
    /// comes with the message.
    Started { pids: Vec<u32> },
    /// The execution ended with this exit status (128+N for signal N).
    Exit { code: i32 },
    /// The request failed.
    Error { message: String },
    /// The session is stopping (it is gone when the supervisor exits).
    Stopping,
    /// What runs.
    Status { executions: Vec<ExecutionInfo> },
    /// The nodes' live counters (see [`crate::metrics`]).
    Metrics { frame: crate::metrics::Frame },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExecutionInfo {
    pub argv: Vec<String>,
    pub pids: Vec<u32>,
    pub started: u64,
}

/// One end of a control connection.
#[derive(Debug)]
pub struct Channel {
    fd: OwnedFd,
}

fn sockaddr(path: &Path) -> io::Result<(libc::sockaddr_un, libc::socklen_t)> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: sockaddr_un is plain data; all-zero is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= addr.sun_path.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "socket path {} is longer than {} bytes: set MIRAGE_RUNTIME_DIR to a shorter directory",
                path.display(),
                addr.sun_path.len() - 1
            ),
        ));
    }
    for (d, s) in addr.sun_path.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    Ok((addr, len as libc::socklen_t))
}

fn socket() -> io::Result<OwnedFd> {
    // SAFETY: socket() has no memory arguments.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A listening control socket.
#[derive(Debug)]
pub struct Listener {
    fd: OwnedFd,
    path: PathBuf,
}

impl Listener {
    /// Binds `path` (replacing a stale socket file).
    pub fn bind(path: &Path) -> io::Result<Listener> {
        let _ = std::fs::remove_file(path);
        let fd = socket()?;
        let (addr, len) = sockaddr(path)?;
        // SAFETY: addr is a valid sockaddr_un of length len.
        let r = unsafe { libc::bind(fd.as_raw_fd(), (&raw const addr).cast(), len) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: listen on our own socket.
        if unsafe { libc::listen(fd.as_raw_fd(), 64) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Listener {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Accepts one connection; peers of another uid are refused (closed).
    pub fn accept(&self) -> io::Result<Channel> {
        loop {
            // SAFETY: accept4 with null address arguments is allowed.
            let fd = unsafe {
                libc::accept4(
                    self.fd.as_raw_fd(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    libc::SOCK_CLOEXEC,
                )
            };
            if fd < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            // SAFETY: fd is a new descriptor that nothing else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            let ch = Channel { fd };
            // SAFETY: getuid has no preconditions.
            let me = unsafe { libc::getuid() };
            match ch.peer_uid() {
                Ok(uid) if uid == me => return Ok(ch),
                Ok(uid) => tracing::warn!("refused a control connection from uid {uid}"),
                Err(e) => tracing::warn!("refused a control connection: {e}"),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Wakes a thread blocked in `accept` (it gets an error).
    pub fn shutdown(&self) {
        // SAFETY: shutdown on our own socket.
        unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_RDWR) };
    }
}

impl Channel {
    pub fn connect(path: &Path) -> io::Result<Channel> {
        let fd = socket()?;
        let (addr, len) = sockaddr(path)?;
        // SAFETY: addr is a valid sockaddr_un of length len.
        let r = unsafe { libc::connect(fd.as_raw_fd(), (&raw const addr).cast(), len) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Channel { fd })
    }

    fn peer_uid(&self) -> io::Result<u32> {
        Ok(rocjitsu_rpc::scm::peer(self.fd.as_fd())?.uid)
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Sends one message with descriptors.
    pub fn send<T: Serialize>(&self, msg: &T, fds: &[BorrowedFd]) -> io::Result<()> {
        let data = serde_json::to_vec(msg).map_err(io::Error::other)?;
        if data.len() > MAX_MESSAGE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "message too large",
            ));
        }
        if fds.len() > MAX_FDS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "too many file descriptors",
            ));
        }
        // A packet socket: one send carries the whole message.
        rocjitsu_rpc::scm::send(self.fd.as_fd(), &data, fds).map(drop)
    }

    /// Receives one message and its descriptors; `None` at end of stream.
    pub fn recv<T: serde::de::DeserializeOwned>(&self) -> io::Result<Option<(T, Vec<OwnedFd>)>> {
        let mut data = vec![0u8; MAX_MESSAGE];
        let mut fds = vec![];
        let got = rocjitsu_rpc::scm::recv(self.fd.as_fd(), &mut data, &mut fds)?;
        let n = got.len;
        if n == 0 && fds.is_empty() {
            return Ok(None);
        }
        if got.truncated {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "message too large",
            ));
        }
        let msg = serde_json::from_slice(&data[..n]).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("bad control message: {e}"),
            )
        })?;
        Ok(Some((msg, fds)))
    }

    /// Ends both directions (wakes a thread blocked in `recv`).
    pub fn shutdown(&self) {
        // SAFETY: shutdown on our own socket.
        unsafe { libc::shutdown(self.fd.as_raw_fd(), libc::SHUT_RDWR) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn messages_and_descriptors_cross() {
        let dir = std::env::temp_dir().join(format!("mirage-ipc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.sock");
        let l = Listener::bind(&path).unwrap();
        let t = std::thread::spawn(move || {
            let ch = l.accept().unwrap();
            let (req, fds): (Request, _) = ch.recv().unwrap().unwrap();
            let Request::Exec(e) = req else { panic!() };
            assert_eq!(e.argv, ["echo", "hi"]);
            assert_eq!(fds.len(), 1);
            let mut f = std::fs::File::from(fds.into_iter().next().unwrap());
            f.write_all(b"through the passed fd").unwrap();
            ch.send(&Reply::Exit { code: 3 }, &[]).unwrap();
            assert!(ch.recv::<Request>().unwrap().is_none());
        });
        let ch = Channel::connect(&path).unwrap();
        let (r, w) = std::io::pipe().unwrap();
        let req = Request::Exec(ExecRequest {
            argv: vec!["echo".into(), "hi".into()],
            ..Default::default()
        });
        let wfd: OwnedFd = w.into();
        ch.send(&req, &[wfd.as_fd()]).unwrap();
        drop(wfd);
        let (reply, _): (Reply, _) = ch.recv().unwrap().unwrap();
        assert!(matches!(reply, Reply::Exit { code: 3 }));
        drop(ch);
        t.join().unwrap();
        let mut s = String::new();
        std::io::BufReader::new(r).read_to_string(&mut s).unwrap();
        assert_eq!(s, "through the passed fd");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    use std::os::fd::AsFd;
}
