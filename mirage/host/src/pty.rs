//! Pseudo-terminals for interactive executions (`mirage exec -it`).

use mirage_core::ipc::Winsize;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// A new pty pair (master, slave), both close-on-exec, of the given size.
pub fn open(size: Winsize) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut master = -1;
    let mut slave = -1;
    let ws = libc::winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors; name and termios may be null,
    // ws points at a valid winsize.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &ws,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: openpty returned two new descriptors that we now own.
    let (m, s) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    for fd in [&m, &s] {
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl on a descriptor we own.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok((m, s))
}
