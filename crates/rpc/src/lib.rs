//! The daemon's transport and wire protocol.
//!
//! In daemon mode one process (the daemon) hosts the simulated GPU and
//! every client process's preload library talks to it: [`wire`] defines the
//! messages (a fixed 16-byte header, then an opcode-specific payload),
//! [`Transport`] moves them with file descriptors attached, and [`unix`] is
//! the Unix-socket implementation (SCM_RIGHTS for descriptors, through
//! [`scm`], which mirage's control channel uses too). The message
//! format is independent of the transport, so another one (named pipes,
//! RDMA) can carry the same messages. [`dir`] is the checked private
//! runtime directory every rocjitsu and mirage component writes into.

pub mod dir;
pub mod scm;
pub mod unix;
pub mod wire;

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};

/// A received message: header, payload and the descriptors that came with
/// it.
#[derive(Debug)]
pub struct Message {
    pub header: wire::Header,
    pub payload: Vec<u8>,
    pub fds: Vec<OwnedFd>,
}

/// Moves messages between a client and the daemon.
pub trait Transport: Send + Sync {
    /// Sends one message, with descriptors (handles) attached when `fds` is
    /// not empty.
    fn send(&self, header: &wire::Header, payload: &[u8], fds: &[BorrowedFd]) -> io::Result<()>;
    /// Receives one message with the descriptors that came with it;
    /// `None` when the peer closed the connection between messages.
    fn recv(&self) -> io::Result<Option<Message>>;
    /// Ends the connection.
    fn close(&self);
}
