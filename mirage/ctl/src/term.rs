//! The client side of a terminal execution: the local terminal in raw
//! mode, relayed to and from the pty master the supervisor handed over;
//! window-size changes follow (SIGWINCH).

use mirage_core::ipc::Winsize;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

/// The size of the terminal on `fd`, if it is one.
pub fn winsize(fd: RawFd) -> Option<Winsize> {
    // SAFETY: winsize is plain data written by the ioctl.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes a winsize to the pointer.
    let r = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_row > 0).then_some(Winsize {
        rows: ws.ws_row,
        cols: ws.ws_col,
    })
}

fn set_winsize(fd: RawFd, w: Winsize) {
    let ws = libc::winsize {
        ws_row: w.rows,
        ws_col: w.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads a winsize from the pointer.
    unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, &ws) };
}

/// Raw mode on a terminal until dropped.
pub struct Raw {
    fd: RawFd,
    saved: libc::termios,
}

impl Raw {
    pub fn enter(fd: RawFd) -> Option<Raw> {
        // SAFETY: isatty has no memory arguments.
        if unsafe { libc::isatty(fd) } != 1 {
            return None;
        }
        // SAFETY: termios is plain data written by tcgetattr.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: t is a valid termios to write.
        if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
            return None;
        }
        let saved = t;
        // SAFETY: cfmakeraw edits the structure; tcsetattr reads it.
        unsafe {
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(fd, libc::TCSANOW, &t);
        }
        Some(Raw { fd, saved })
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        // SAFETY: restores the attributes saved by enter.
        unsafe { libc::tcsetattr(self.fd, libc::TCSANOW, &self.saved) };
    }
}

static WINCH_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_winch(_: libc::c_int) {
    let fd = WINCH_PIPE.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; one byte from a static.
        unsafe { libc::write(fd, [0u8].as_ptr().cast(), 1) };
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut p = [0; 2];
    // SAFETY: pipe2 writes two descriptors into p.
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: two new descriptors we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) })
}

fn read(fd: RawFd, buf: &mut [u8]) -> isize {
    // SAFETY: buf is valid for writes of its length.
    unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) }
}

fn write_all(fd: RawFd, mut data: &[u8]) -> bool {
    while !data.is_empty() {
        // SAFETY: data is valid for reads of its length.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        data = &data[n as usize..];
    }
    true
}

/// Relays stdin (when `input`) to `master` and `master` to stdout until the
/// pty closes and `done` (the control channel) reports the exit status.
pub fn relay(
    master: &OwnedFd,
    input: bool,
    control: &mirage_core::ipc::Channel,
) -> std::io::Result<i32> {
    let m = master.as_raw_fd();
    let (winch_r, winch_w) = pipe()?;
    WINCH_PIPE.store(winch_w.as_raw_fd(), Ordering::Relaxed);
    // SAFETY: installs a handler that only writes a byte to a pipe.
    unsafe {
        libc::signal(libc::SIGWINCH, on_winch as *const () as libc::sighandler_t);
    }
    let _raw = if input { Raw::enter(0) } else { None };
    let mut stdin_open = input;
    let mut pty_open = true;
    let mut code = None;
    let mut buf = vec![0u8; 64 * 1024];
    while pty_open || code.is_none() {
        let mut fds = vec![
            libc::pollfd {
                fd: if pty_open { m } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: control.raw_fd(),
                events: if code.is_none() { libc::POLLIN } else { 0 },
                revents: 0,
            },
            libc::pollfd {
                fd: winch_r.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: if stdin_open { 0 } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // After the exit status, the pty's last output may still be on its
        // way: wait a little for it, not forever.
        let timeout = if code.is_some() { 200 } else { -1 };
        // SAFETY: fds is a valid array of pollfd of its length.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if r < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if r == 0 && code.is_some() {
            break;
        }
        if fds[0].revents != 0 {
            let n = read(m, &mut buf);
            if n > 0 {
                write_all(1, &buf[..n as usize]);
            } else if n == 0
                || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                pty_open = false;
            }
        }
        if fds[1].revents != 0 {
            match control.recv::<mirage_core::ipc::Reply>() {
                Ok(Some((mirage_core::ipc::Reply::Exit { code: c }, _))) => code = Some(c),
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => {
                    if code.is_none() {
                        code = Some(255);
                    }
                }
            }
        }
        if fds[2].revents != 0 {
            let mut b = [0u8; 64];
            while read(winch_r.as_raw_fd(), &mut b) > 0 {}
            if let Some(w) = winsize(0) {
                set_winsize(m, w);
            }
        }
        if fds[3].revents != 0 {
            let n = read(0, &mut buf);
            if n > 0 {
                if !write_all(m, &buf[..n as usize]) {
                    stdin_open = false;
                }
            } else {
                stdin_open = false;
            }
        }
    }
    WINCH_PIPE.store(-1, Ordering::Relaxed);
    Ok(code.unwrap_or(255))
}
