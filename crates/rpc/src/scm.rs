//! Unix-socket primitives shared by every socket of the project (the
//! daemon's stream transport in [`crate::unix`], mirage's control channel):
//! one `sendmsg`/`recvmsg` with file descriptors passed as SCM_RIGHTS
//! ancillary data, and the peer's credentials (SO_PEERCRED).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// The most descriptors one message carries.
pub const MAX_FDS: usize = 8;

/// Control-buffer words for [`MAX_FDS`] descriptors (CMSG_SPACE of 32
/// bytes is 48 on 64-bit Linux; 16 words leave room to spare).
const CBUF_WORDS: usize = 16;

/// The process at the other end of a connected Unix socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub pid: u32,
    pub uid: u32,
    pub gid: u32,
}

/// The credentials of `fd`'s peer, as the kernel recorded them at
/// connect (SO_PEERCRED).
pub fn peer(fd: BorrowedFd<'_>) -> io::Result<Peer> {
    let mut c = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `c`.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut c).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Peer {
        pid: c.pid as u32,
        uid: c.uid,
        gid: c.gid,
    })
}

/// One `sendmsg` of `data` with `fds` attached (none when empty),
/// retried on EINTR, without SIGPIPE. Returns the bytes sent, which on a
/// stream socket may be fewer than `data.len()`; the descriptors go with
/// the first byte.
pub fn send(fd: BorrowedFd<'_>, data: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<usize> {
    if fds.len() > MAX_FDS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} file descriptors in one message (at most {MAX_FDS})",
                fds.len()
            ),
        ));
    }
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: an all-zero msghdr is valid; we fill in what we use.
    let mut mh: libc::msghdr = unsafe { std::mem::zeroed() };
    mh.msg_iov = &mut iov;
    mh.msg_iovlen = 1;
    let mut cbuf = [0u64; CBUF_WORDS];
    if !fds.is_empty() {
        let payload = std::mem::size_of_val(fds) as u32;
        // SAFETY: CMSG_SPACE is a pure size computation.
        let space = unsafe { libc::CMSG_SPACE(payload) } as usize;
        mh.msg_control = cbuf.as_mut_ptr().cast();
        mh.msg_controllen = space;
        // SAFETY: msg_control points at `cbuf`, large enough for one header
        // with MAX_FDS descriptors (checked above).
        unsafe {
            let c = libc::CMSG_FIRSTHDR(&mh);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(payload) as usize;
            let out = libc::CMSG_DATA(c).cast::<RawFd>();
            for (i, f) in fds.iter().enumerate() {
                out.add(i).write_unaligned(f.as_raw_fd());
            }
        }
    }
    loop {
        // SAFETY: `mh` describes valid buffers for the call's duration.
        let n = unsafe { libc::sendmsg(fd.as_raw_fd(), &mh, libc::MSG_NOSIGNAL) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// What one [`recv`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Bytes read into the buffer (0: end of stream).
    pub len: usize,
    /// The datagram or packet did not fit in the buffer (MSG_TRUNC).
    pub truncated: bool,
}

/// One `recvmsg` into `buf`, retried on EINTR; descriptors that came with
/// it are appended to `fds` (close-on-exec). More descriptors than
/// [`MAX_FDS`] (the kernel dropped some: MSG_CTRUNC) is an InvalidData
/// error, after the ones received are in `fds` (and so closed with it).
pub fn recv(fd: BorrowedFd<'_>, buf: &mut [u8], fds: &mut Vec<OwnedFd>) -> io::Result<Received> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut cbuf = [0u64; CBUF_WORDS];
    // SAFETY: an all-zero msghdr is valid; we fill in what we use.
    let mut mh: libc::msghdr = unsafe { std::mem::zeroed() };
    mh.msg_iov = &mut iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf.as_mut_ptr().cast();
    mh.msg_controllen = std::mem::size_of_val(&cbuf);
    let n = loop {
        // SAFETY: `mh` describes valid buffers for the call's duration.
        let r = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut mh, libc::MSG_CMSG_CLOEXEC) };
        if r >= 0 {
            break r as usize;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    // SAFETY: the kernel filled the control buffer; the CMSG macros walk it
    // within msg_controllen, and each SCM_RIGHTS descriptor is new and ours
    // to own.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&mh);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(c).cast::<RawFd>();
                let bytes = (*c).cmsg_len - libc::CMSG_LEN(0) as usize;
                for i in 0..bytes / std::mem::size_of::<RawFd>() {
                    fds.push(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            c = libc::CMSG_NXTHDR(&mh, c);
        }
    }
    if mh.msg_flags & libc::MSG_CTRUNC != 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("too many file descriptors in one message (at most {MAX_FDS})"),
        ));
    }
    Ok(Received {
        len: n,
        truncated: mh.msg_flags & libc::MSG_TRUNC != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixDatagram;

    #[test]
    fn descriptors_and_bytes_cross_and_the_peer_is_us() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut f = tempfile();
        f.write_all(b"passed").unwrap();
        assert_eq!(send(a.as_fd(), b"hello", &[f.as_fd()]).unwrap(), 5);
        let mut buf = [0u8; 16];
        let mut fds = Vec::new();
        let r = recv(b.as_fd(), &mut buf, &mut fds).unwrap();
        assert_eq!((&buf[..r.len], r.truncated), (&b"hello"[..], false));
        assert_eq!(fds.len(), 1);
        let mut g = std::fs::File::from(fds.pop().unwrap());
        g.rewind().unwrap();
        let mut s = String::new();
        g.read_to_string(&mut s).unwrap();
        assert_eq!(s, "passed");
        let p = peer(b.as_fd()).unwrap();
        assert_eq!(p.pid, std::process::id());
        // SAFETY: getuid has no preconditions.
        assert_eq!(p.uid, unsafe { libc::getuid() });
    }

    #[test]
    fn too_many_descriptors_and_a_truncated_packet_are_reported() {
        let (a, b) = UnixDatagram::pair().unwrap();
        let f = tempfile();
        let many: Vec<_> = (0..=MAX_FDS).map(|_| f.as_fd()).collect();
        let e = send(a.as_fd(), b"x", &many).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        send(a.as_fd(), b"longer than four", &[]).unwrap();
        let mut buf = [0u8; 4];
        let r = recv(b.as_fd(), &mut buf, &mut Vec::new()).unwrap();
        assert_eq!((r.len, r.truncated), (4, true));
    }

    fn tempfile() -> std::fs::File {
        let name = c"scm-test";
        // SAFETY: memfd_create with a valid name.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), 0) };
        assert!(fd >= 0);
        // SAFETY: a new descriptor we own.
        std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}
