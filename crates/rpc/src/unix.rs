//! The Unix-socket transport: stream sockets carrying [`wire`](crate::wire)
//! messages, with file descriptors passed as SCM_RIGHTS ancillary data on
//! the first byte of the message that carries them.

use crate::wire::{HEADER_LEN, Header, MAX_FDS};
use crate::{Message, Transport};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

/// One connection. Its descriptor is closed with a raw `close` system call,
/// bypassing any `close` an LD_PRELOAD library interposes (the preload
/// refuses to let the application close the descriptors it owns).
pub struct UnixTransport {
    stream: std::mem::ManuallyDrop<UnixStream>,
}

impl Drop for UnixTransport {
    fn drop(&mut self) {
        // SAFETY: the stream's descriptor is ours and is not used after
        // this; ManuallyDrop keeps std from closing it a second time.
        unsafe { libc::syscall(libc::SYS_close, self.stream.as_raw_fd()) };
    }
}

/// The peer of a connection as the kernel identifies it (SO_PEERCRED).
pub use crate::scm::Peer;

impl UnixTransport {
    pub fn connect(path: &Path) -> io::Result<UnixTransport> {
        let stream = UnixStream::connect(path)?;
        Ok(UnixTransport::from_stream(stream))
    }

    /// Connects to a server that must run as the caller's effective uid
    /// (SO_PEERCRED): a socket another user listens on (a daemon they
    /// started at a path the caller expected to be its own) is refused
    /// before a byte is sent.
    pub fn connect_own(path: &Path) -> io::Result<UnixTransport> {
        let t = UnixTransport::connect(path)?;
        let peer = t.peer()?;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if peer.uid != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "the server at {} runs as uid {} (pid {}), not as you (uid {me}); it is refused: use a daemon you started yourself",
                    path.display(),
                    peer.uid,
                    peer.pid
                ),
            ));
        }
        Ok(t)
    }

    pub fn from_stream(stream: UnixStream) -> UnixTransport {
        UnixTransport {
            stream: std::mem::ManuallyDrop::new(stream),
        }
    }

    /// Moves the connection's descriptor with `relocate`, which returns the
    /// new descriptor (a dup of the old one, which it closes).
    pub fn relocate(self, relocate: impl FnOnce(RawFd) -> RawFd) -> UnixTransport {
        let me = std::mem::ManuallyDrop::new(self);
        let fd = relocate(me.stream.as_raw_fd());
        // SAFETY: `relocate` hands back a descriptor we own, of the same
        // socket.
        UnixTransport::from_stream(unsafe { UnixStream::from_raw_fd(fd) })
    }

    pub fn as_raw_fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    /// The connected process's credentials.
    pub fn peer(&self) -> io::Result<Peer> {
        crate::scm::peer(self.stream.as_fd())
    }

    /// Ends the connection in both directions (a thread blocked reading it
    /// sees EOF).
    pub fn shutdown(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }

    fn send_all(&self, msg: &[u8], fds: &[BorrowedFd]) -> io::Result<()> {
        if fds.len() > MAX_FDS {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "too many fds"));
        }
        let mut sent = 0;
        while sent < msg.len() {
            // The descriptors go with the message's first byte.
            let with = if sent == 0 { fds } else { &[] };
            sent += crate::scm::send(self.stream.as_fd(), &msg[sent..], with)?;
        }
        Ok(())
    }

    /// Reads exactly `buf.len()` bytes, collecting descriptors that arrive
    /// on the way. Ok(false) on a clean EOF before the first byte.
    fn recv_exact(&self, buf: &mut [u8], fds: &mut Vec<OwnedFd>) -> io::Result<bool> {
        let mut got = 0;
        while got < buf.len() {
            let n = crate::scm::recv(self.stream.as_fd(), &mut buf[got..], fds)?.len;
            if n == 0 {
                if got == 0 {
                    return Ok(false);
                }
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            got += n;
        }
        Ok(true)
    }
}

impl Transport for UnixTransport {
    fn send(&self, header: &Header, payload: &[u8], fds: &[BorrowedFd]) -> io::Result<()> {
        let mut msg = Vec::with_capacity(HEADER_LEN + payload.len());
        msg.extend_from_slice(&header.encode());
        msg.extend_from_slice(payload);
        self.send_all(&msg, fds)
    }

    fn recv(&self) -> io::Result<Option<Message>> {
        let mut fds = Vec::new();
        let mut hb = [0u8; HEADER_LEN];
        if !self.recv_exact(&mut hb, &mut fds)? {
            return Ok(None);
        }
        let header = Header::decode(&hb)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        let mut payload = vec![0u8; header.payload_len as usize];
        if !payload.is_empty() && !self.recv_exact(&mut payload, &mut fds)? {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if fds.len() > MAX_FDS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "too many file descriptors in one message",
            ));
        }
        Ok(Some(Message {
            header,
            payload,
            fds,
        }))
    }

    fn close(&self) {
        self.shutdown();
    }
}

/// A listening socket at a path, in a directory only its owner can enter.
pub struct UnixServer {
    listener: UnixListener,
    path: std::path::PathBuf,
}

impl UnixServer {
    /// Listens at `path`: creates its directory (mode 0700) if it does not
    /// exist (an existing directory keeps its mode: it may be `/tmp`; the
    /// daemon checks its clients' uid) and replaces a stale socket (one
    /// nobody listens on); a socket that answers is left alone (AddrInUse),
    /// and anything else at `path` (a file, a symbolic link) is refused.
    pub fn bind(path: &Path) -> io::Result<UnixServer> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && std::fs::symlink_metadata(dir).is_err()
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        if let Ok(m) = std::fs::symlink_metadata(path) {
            use std::os::unix::fs::FileTypeExt;
            if !m.file_type().is_socket() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!(
                        "{} exists and is not a socket; remove it or choose another socket path",
                        path.display()
                    ),
                ));
            }
            if UnixStream::connect(path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("a daemon already listens on {}", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path)?;
        Ok(UnixServer {
            listener,
            path: path.to_path_buf(),
        })
    }

    pub fn accept(&self) -> io::Result<UnixTransport> {
        let (stream, _) = self.listener.accept()?;
        Ok(UnixTransport::from_stream(stream))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn as_raw_fd(&self) -> RawFd {
        self.listener.as_raw_fd()
    }
}

impl Drop for UnixServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Opcode;
    use std::os::fd::AsFd;

    #[test]
    fn messages_and_descriptors_cross_a_socket() {
        let dir = std::env::temp_dir().join(format!("rocjitsu-rpc-test-{}", std::process::id()));
        let path = dir.join("s.sock");
        let server = UnixServer::bind(&path).unwrap();
        let client = UnixTransport::connect(&path).unwrap();
        let conn = server.accept().unwrap();
        assert_eq!(conn.peer().unwrap().pid, std::process::id());
        // SAFETY: plain syscall on a NUL-terminated name.
        let memfd = unsafe { libc::memfd_create(c"t".as_ptr(), libc::MFD_CLOEXEC) };
        // SAFETY: memfd_create returned a fresh descriptor we own.
        let memfd = unsafe { OwnedFd::from_raw_fd(memfd) };
        let h = Header {
            opcode: Opcode::Mmap as u16,
            reserved: 0,
            request_id: 3,
            payload_len: 300_000,
            result: 0,
        };
        let big = vec![0xabu8; 300_000];
        let t = std::thread::spawn(move || {
            client.send(&h, &big, &[memfd.as_fd()]).unwrap();
            client
        });
        let m = conn.recv().unwrap().unwrap();
        let client = t.join().unwrap();
        assert_eq!(m.header, h);
        assert_eq!(m.payload.len(), 300_000);
        assert!(m.payload.iter().all(|&b| b == 0xab));
        assert_eq!(m.fds.len(), 1);
        // The received descriptor is the same file.
        // SAFETY: stat is plain old data; all-zero is a valid value.
        let mut a: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat writes into `a`.
        assert_eq!(unsafe { libc::fstat(m.fds[0].as_raw_fd(), &mut a) }, 0);
        // A clean close is a None, not an error.
        drop(client);
        assert!(conn.recv().unwrap().is_none());
        // A second daemon on the same path is refused (its probe is a
        // connection that closes at once).
        assert_eq!(
            UnixServer::bind(&path).err().map(|e| e.kind()),
            Some(io::ErrorKind::AddrInUse)
        );
        assert!(server.accept().unwrap().recv().unwrap().is_none());
        drop(server);
        assert!(!path.exists());
        let _ = std::fs::remove_dir(&dir);
    }
}
