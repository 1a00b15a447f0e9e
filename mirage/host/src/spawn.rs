//! Starting the processes of executions.
//!
//! Every process is started by one long-lived thread of the supervisor (the
//! spawner): the child asks for SIGKILL when its parent thread dies
//! (PR_SET_PDEATHSIG), and Linux ties that to the thread that forked, so a
//! short-lived connection thread must not be the parent. A child leads its
//! own process group (or, with a terminal, its own session with the pty as
//! controlling terminal), so that signals reach everything it forks.
//!
//! In a sysroot, the child enters a private mount namespace, mounts /proc,
//! binds /sys, /dev and the host paths the execution needs at the same
//! paths, then chroots; the mounts vanish with the namespace.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::mpsc;

/// A bind mount into a sysroot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    pub host: PathBuf,
    /// The path inside the sysroot.
    pub guest: PathBuf,
    pub read_only: bool,
}

/// Entering a sysroot.
#[derive(Debug, Clone)]
pub struct Chroot {
    pub root: PathBuf,
    pub binds: Vec<Bind>,
    pub cwd: PathBuf,
}

/// What the child does before exec.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// New session with fd 0 (a pty slave) as controlling terminal.
    pub tty: bool,
    pub chroot: Option<Chroot>,
}

enum MountOp {
    Proc {
        target: CString,
    },
    Bind {
        source: CString,
        target: CString,
        recursive: bool,
        read_only: bool,
    },
}

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} has a NUL byte", p.display()),
        )
    })
}

/// Creates the mount point of `host` at `target` (a directory, or an empty
/// file for a file).
fn mount_point(host: &Path, target: &Path) -> io::Result<()> {
    if host.is_dir() {
        std::fs::create_dir_all(target)
    } else {
        if let Some(p) = target.parent() {
            std::fs::create_dir_all(p)?;
        }
        if !target.exists() {
            std::fs::File::create(target)?;
        }
        Ok(())
    }
}

struct Prepared {
    ops: Vec<MountOp>,
    root: CString,
    cwd: CString,
}

fn prepare(c: &Chroot) -> io::Result<Prepared> {
    let inside = |p: &Path| c.root.join(p.strip_prefix("/").unwrap_or(p));
    let mut ops = vec![];
    std::fs::create_dir_all(inside(Path::new("/proc")))?;
    ops.push(MountOp::Proc {
        target: cstr(&inside(Path::new("/proc")))?,
    });
    for d in ["/sys", "/dev"] {
        std::fs::create_dir_all(inside(Path::new(d)))?;
        ops.push(MountOp::Bind {
            source: cstr(Path::new(d))?,
            target: cstr(&inside(Path::new(d)))?,
            recursive: true,
            read_only: false,
        });
    }
    for b in &c.binds {
        let t = inside(&b.guest);
        mount_point(&b.host, &t)?;
        ops.push(MountOp::Bind {
            source: cstr(&b.host)?,
            target: cstr(&t)?,
            recursive: true,
            read_only: b.read_only,
        });
    }
    Ok(Prepared {
        ops,
        root: cstr(&c.root)?,
        cwd: cstr(&c.cwd)?,
    })
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Runs in the child between fork and exec: only async-signal-safe calls,
/// on data prepared before the fork.
fn in_child(parent: libc::pid_t, tty: bool, p: Option<&Prepared>) -> io::Result<()> {
    // SAFETY: each call below is an async-signal-safe system call on
    // NUL-terminated strings and plain values prepared before the fork.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        check(libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ))?;
        if libc::getppid() != parent {
            // The parent died before the request took effect.
            libc::_exit(137);
        }
        if tty {
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            check(libc::ioctl(0, libc::TIOCSCTTY, 0))?;
        }
        if let Some(p) = p {
            check(libc::unshare(libc::CLONE_NEWNS))?;
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for op in &p.ops {
                match op {
                    MountOp::Proc { target } => {
                        check(libc::mount(
                            c"proc".as_ptr(),
                            target.as_ptr(),
                            c"proc".as_ptr(),
                            0,
                            std::ptr::null(),
                        ))?;
                    }
                    MountOp::Bind {
                        source,
                        target,
                        recursive,
                        read_only,
                    } => {
                        let rec = if *recursive { libc::MS_REC } else { 0 };
                        check(libc::mount(
                            source.as_ptr(),
                            target.as_ptr(),
                            std::ptr::null(),
                            libc::MS_BIND | rec,
                            std::ptr::null(),
                        ))?;
                        if *read_only {
                            check(libc::mount(
                                std::ptr::null(),
                                target.as_ptr(),
                                std::ptr::null(),
                                libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | rec,
                                std::ptr::null(),
                            ))?;
                        }
                    }
                }
            }
            check(libc::chroot(p.root.as_ptr()))?;
            check(libc::chdir(p.cwd.as_ptr()))?;
        }
    }
    Ok(())
}

type Job = Box<dyn FnOnce() -> io::Result<Child> + Send>;

/// The thread that forks every process of a session.
pub struct Spawner {
    tx: mpsc::Sender<(Job, mpsc::Sender<io::Result<Child>>)>,
}

impl Spawner {
    pub fn start() -> Spawner {
        let (tx, rx) = mpsc::channel::<(Job, mpsc::Sender<io::Result<Child>>)>();
        std::thread::Builder::new()
            .name("spawner".into())
            .spawn(move || {
                for (job, reply) in rx {
                    let _ = reply.send(job());
                }
            })
            .expect("cannot start the spawner thread");
        Spawner { tx }
    }

    /// Spawns `cmd` after `setup` (from the spawner thread).
    pub fn spawn(&self, mut cmd: Command, setup: Setup) -> io::Result<Child> {
        let prepared = setup.chroot.as_ref().map(prepare).transpose()?;
        let (rtx, rrx) = mpsc::channel();
        let job: Job = Box::new(move || {
            // SAFETY: getpid has no preconditions.
            let parent = unsafe { libc::getpid() };
            if !setup.tty {
                cmd.process_group(0);
            }
            let tty = setup.tty;
            // SAFETY: the closure makes only async-signal-safe system calls
            // on data prepared before the fork (see in_child).
            unsafe {
                cmd.pre_exec(move || in_child(parent, tty, prepared.as_ref()));
            }
            cmd.spawn()
        });
        self.tx
            .send((job, rtx))
            .map_err(|_| io::Error::other("the spawner thread is gone"))?;
        rrx.recv()
            .map_err(|_| io::Error::other("the spawner thread is gone"))?
    }
}
