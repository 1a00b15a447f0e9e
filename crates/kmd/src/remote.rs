//! Daemon mode, client side: [`RemoteDriver`] is the [`Driver`] the
//! preload library uses when the GPU lives in a daemon (see
//! [`crate::daemon`]).
//!
//! Connections: ROCr calls the driver from several threads at once, and one
//! of them may sit in `WAIT_EVENTS` for a long time. Rather than serialising
//! every call on one socket, the client keeps a small pool of connections
//! to the daemon (all of the same process, joined by the token of the first
//! handshake); a call takes an idle connection, or opens one, for one
//! request and its reply. The daemon serves each connection on its own
//! thread, so a blocked wait holds up nobody and the daemon's events behave
//! exactly as the in-process driver's (every waiter wakes; ages, auto-reset
//! as in KFD).
//!
//! Memory: the daemon backs every allocation with a memfd. VRAM and GTT are
//! mapped by the runtime through the render node as in local mode (the
//! daemon passes the memfd with SCM_RIGHTS); a userptr allocation's pages
//! are copied into the memfd the daemon returns, which is then mapped over
//! them at the same address, so the process and the GPU share them (see
//! `adopt_userptr`); a range registered again is already such a memfd,
//! which is sent to the daemon instead (`shared_backing`).

use crate::abi::{self, kfd};
use crate::sysfs::SysfsTree;
use crate::user::UserMemory;
use crate::{DeviceFile, Driver, Errno, MapSource};
use rocjitsu_config::GpuConfig;
use rocjitsu_rpc::unix::UnixTransport;
use rocjitsu_rpc::wire::{self, Header, Hello, Ioctl, Mmap, Opcode, Welcome};
use rocjitsu_rpc::{Message, Transport};
use std::collections::HashMap;
use std::os::fd::{IntoRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Connections one process keeps at most (beyond that, callers wait for
/// one to come free).
const MAX_CONNECTIONS: usize = 32;

/// How the preload keeps its own descriptors: `relocate` moves one to
/// where the application cannot close it (returns the new descriptor,
/// having closed the old one); `release` is called before we close one.
#[derive(Copy, Clone)]
pub struct Fds {
    pub relocate: fn(RawFd) -> RawFd,
    pub release: fn(RawFd),
}

impl Fds {
    /// Descriptors left where they are (tests, tools).
    pub const PLAIN: Fds = Fds {
        relocate: |fd| fd,
        release: |_| {},
    };
}

/// A connection to the daemon whose descriptor the preload keeps safe.
struct Conn {
    t: Option<UnixTransport>,
    fds: Fds,
}

impl std::ops::Deref for Conn {
    type Target = UnixTransport;
    fn deref(&self) -> &UnixTransport {
        self.t.as_ref().expect("a connection until dropped")
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(t) = self.t.take() {
            (self.fds.release)(t.as_raw_fd());
        }
    }
}

pub struct RemoteDriver {
    socket: PathBuf,
    pid: u32,
    token: [u8; 16],
    config: GpuConfig,
    sysfs: SysfsTree,
    idle: Mutex<Vec<Conn>>,
    free: Condvar,
    open: AtomicUsize,
    next_id: AtomicU32,
    fds: Fds,
    /// The daemon went away: every call fails from now on.
    lost: AtomicBool,
    /// Set once the process let go of the device (CLOSE sent).
    closing: AtomicBool,
    /// The type of each event the process created (`CREATE_EVENT`), so
    /// that once the daemon is lost a wait can report what a GPU reset
    /// reports in each kind of event.
    event_types: Mutex<HashMap<u32, u32>>,
    /// How long to wait for a lost daemon to come back (restored from a
    /// checkpoint), `ROCJITSU_DAEMON_RECONNECT`; None: calls fail at once.
    reconnect: Option<std::time::Duration>,
    /// Bumped by every resume on a restored daemon; one resume at a time.
    resumed: Mutex<u64>,
}

fn proto_err(what: impl std::fmt::Display) -> String {
    what.to_string()
}

impl RemoteDriver {
    /// Connects to the daemon at `socket` as a new process; writes the
    /// daemon's sysfs tree under `runtime_dir` (it is generated from the
    /// configuration the daemon sends, so it also works where the daemon's
    /// files are not visible, e.g. in a container).
    pub fn connect(socket: &Path, runtime_dir: &Path, fds: Fds) -> Result<RemoteDriver, String> {
        let pid = std::process::id();
        let (t, w) = Self::handshake(socket, pid, [0; 16], fds)?;
        let config = GpuConfig::from_str("the daemon's configuration", &w.config).map_err(|e| {
            format!(
                "the daemon at {} sent a bad configuration: {e}",
                socket.display()
            )
        })?;
        let sysfs = SysfsTree::create(&config, runtime_dir).map_err(|e| {
            format!(
                "cannot write the KFD sysfs tree under {}: {e} (set ROCJITSU_RUNTIME_DIR to a writable directory)",
                runtime_dir.display()
            )
        })?;
        tracing::info!(
            "attached to the daemon at {} (its sysfs tree: {})",
            socket.display(),
            w.sysfs_root
        );
        Ok(RemoteDriver {
            socket: socket.to_path_buf(),
            pid,
            token: w.token,
            config,
            sysfs,
            idle: Mutex::new(vec![t]),
            free: Condvar::new(),
            open: AtomicUsize::new(1),
            next_id: AtomicU32::new(1),
            fds,
            lost: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            event_types: Mutex::new(HashMap::new()),
            reconnect: std::env::var(rocjitsu_config::env::DAEMON_RECONNECT)
                .ok()
                .and_then(|s| s.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s > 0.0)
                .map(std::time::Duration::from_secs_f64),
            resumed: Mutex::new(0),
        })
    }

    /// How long a call waits for a lost daemon to come back restored from
    /// a checkpoint (`ROCJITSU_DAEMON_RECONNECT` sets it at connect).
    pub fn set_reconnect(&mut self, wait: Option<std::time::Duration>) {
        self.reconnect = wait;
    }

    fn generation(&self) -> u64 {
        *self.resumed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The daemon went away during a call made at resume generation
    /// `seen`: with `ROCJITSU_DAEMON_RECONNECT`, waits (bounded) for a
    /// daemon restored from a checkpoint to listen on the socket again,
    /// comes back as this process (its token), offers the daemon's memfds
    /// it still maps and has it restore the process. True when the call
    /// can be made again (by this thread's resume or another's).
    fn try_resume(&self, seen: u64) -> bool {
        let Some(limit) = self.reconnect else {
            return false;
        };
        if self.closing.load(Ordering::Acquire) {
            return false;
        }
        let mut g = self.resumed.lock().unwrap_or_else(|e| e.into_inner());
        if *g != seen {
            return true;
        }
        if self.lost.load(Ordering::Acquire) {
            return false;
        }
        // The connections to the daemon that died are of no use.
        let dead = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        self.open.fetch_sub(dead.len(), Ordering::AcqRel);
        drop(dead);
        eprintln!(
            "rocjitsu: lost the daemon at {}; waiting up to {:.0} s for it to come back from a checkpoint",
            self.socket.display(),
            limit.as_secs_f64()
        );
        let t0 = std::time::Instant::now();
        let (t, why) = loop {
            match Self::handshake(&self.socket, self.pid, self.token, self.fds) {
                Ok((t, _)) => break (Some(t), String::new()),
                Err(e) if t0.elapsed() >= limit => break (None, e),
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
            }
        };
        let Some(t) = t else {
            eprintln!("rocjitsu: the daemon did not come back: {why}");
            return false;
        };
        match self.offer_and_resume(&t) {
            Ok(summary) => {
                eprintln!("rocjitsu: resumed on the restored daemon: {summary}");
                self.open.fetch_add(1, Ordering::AcqRel);
                self.give_back(t);
                *g += 1;
                true
            }
            Err(e) => {
                eprintln!("rocjitsu: the restored daemon did not take this process back: {e}");
                false
            }
        }
    }

    /// On a fresh connection to a restored daemon: ADOPT of every mapping
    /// of the daemon's memfds this process has (VRAM, GTT and userptr
    /// buffers, found in /proc/self/maps and reopened through
    /// /proc/self/map_files), then RESUME.
    fn offer_and_resume(&self, t: &Conn) -> Result<String, String> {
        let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| e.to_string())?;
        let mut offers: Vec<((u64, u64, u64), std::os::fd::OwnedFd)> = Vec::new();
        for line in maps.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            let Some(name) = f.get(5).and_then(|p| p.strip_prefix("/memfd:")) else {
                continue;
            };
            if !(name.starts_with("rocjitsu-bo-") || name.starts_with("rocjitsu-userptr-")) {
                continue;
            }
            let Some((lo, hi)) = f[0].split_once('-') else {
                continue;
            };
            let (Ok(lo), Ok(hi), Ok(off)) = (
                u64::from_str_radix(lo, 16),
                u64::from_str_radix(hi, 16),
                u64::from_str_radix(f[2], 16),
            ) else {
                continue;
            };
            if let Ok(file) = std::fs::File::options()
                .read(true)
                .write(true)
                .open(format!("/proc/self/map_files/{lo:x}-{hi:x}"))
            {
                offers.push(((lo, hi - lo, off), file.into()));
            }
        }
        let n = offers.len();
        let call = |op: Opcode, payload: &[u8], fds: &[std::os::fd::BorrowedFd]| {
            let h = Header {
                opcode: op as u16,
                reserved: 0,
                request_id: self.next_id.fetch_add(1, Ordering::Relaxed),
                payload_len: payload.len() as u32,
                result: 0,
            };
            t.send(&h, payload, fds).map_err(|e| e.to_string())?;
            let m = t
                .recv()
                .map_err(|e| e.to_string())?
                .ok_or("the daemon closed the connection")?;
            Ok::<_, String>(m)
        };
        for chunk in offers.chunks(wire::MAX_FDS) {
            let a = wire::Adopt {
                maps: chunk.iter().map(|(m, _)| *m).collect(),
            };
            let fds: Vec<std::os::fd::BorrowedFd> = chunk
                .iter()
                .map(|(_, f)| std::os::fd::AsFd::as_fd(f))
                .collect();
            let m = call(Opcode::Adopt, &a.encode(), &fds)?;
            if m.header.result != 0 && m.header.result != -libc::EALREADY {
                return Err(format!("ADOPT answered errno {}", -m.header.result));
            }
        }
        let m = call(Opcode::Resume, b"", &[])?;
        match m.header.result {
            0 => Ok(format!(
                "{} (offered {n} mappings)",
                String::from_utf8_lossy(&m.payload)
            )),
            r if r == -libc::EALREADY => Ok("already resumed".into()),
            r => Err(format!(
                "errno {}: {}",
                -r,
                String::from_utf8_lossy(&m.payload)
            )),
        }
    }

    fn handshake(
        socket: &Path,
        pid: u32,
        token: [u8; 16],
        fds: Fds,
    ) -> Result<(Conn, Welcome), String> {
        let t = UnixTransport::connect_own(socket)
            .map_err(|e| match e.kind() {
                // A daemon of another user: connect_own's words say so.
                std::io::ErrorKind::PermissionDenied if e.get_ref().is_some() => e.to_string(),
                _ => format!(
                    "no rocjitsu daemon answers at {}: {e} (start one with `rocjitsu --config CONFIG --daemon`, or run the app with --daemon)",
                    socket.display()
                ),
            })?
            .relocate(fds.relocate);
        let t = Conn { t: Some(t), fds };
        let hello = Hello {
            version: wire::VERSION,
            pid,
            token,
        }
        .encode();
        let h = Header {
            opcode: Opcode::Handshake as u16,
            reserved: 0,
            request_id: 0,
            payload_len: hello.len() as u32,
            result: 0,
        };
        // A daemon refusing the connection (this process has all the
        // connections it may have) may have answered and closed it before
        // the handshake went out: its answer is read even then.
        let sent = t.send(&h, &hello, &[]);
        let m = match t.recv() {
            Ok(Some(m)) => m,
            r => {
                sent.map_err(proto_err)?;
                r.map_err(proto_err)?;
                return Err(format!(
                    "the daemon at {} closed the connection",
                    socket.display()
                ));
            }
        };
        if m.header.result != 0 {
            return Err(format!(
                "the daemon at {} refused the connection: {}",
                socket.display(),
                String::from_utf8_lossy(&m.payload)
            ));
        }
        let w = Welcome::decode(&m.payload).map_err(proto_err)?;
        if w.version != wire::VERSION {
            return Err(format!(
                "the daemon at {} speaks protocol {} and this library {}",
                socket.display(),
                w.version,
                wire::VERSION
            ));
        }
        Ok((t, w))
    }

    pub fn config(&self) -> &GpuConfig {
        &self.config
    }

    /// Takes an idle connection or opens one.
    fn take(&self) -> Result<Conn, Errno> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.lost.load(Ordering::Acquire) {
                return Err(Errno::ENODEV);
            }
            if let Some(t) = idle.pop() {
                return Ok(t);
            }
            if self.open.load(Ordering::Acquire) < MAX_CONNECTIONS {
                self.open.fetch_add(1, Ordering::AcqRel);
                drop(idle);
                return match Self::handshake(&self.socket, self.pid, self.token, self.fds) {
                    Ok((t, _)) => Ok(t),
                    Err(e) => {
                        self.open.fetch_sub(1, Ordering::AcqRel);
                        // The caller may wait for the daemon to come back.
                        if self.reconnect.is_some() {
                            tracing::debug!("no new connection: {e}");
                            return Err(Errno::EAGAIN);
                        }
                        self.lose(&e);
                        Err(Errno::ENODEV)
                    }
                };
            }
            idle = self.free.wait(idle).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn give_back(&self, t: Conn) {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(t);
        self.free.notify_one();
    }

    fn lose(&self, why: &str) {
        // After CLOSE the daemon ends the process's other connections too
        // (a thread may be waiting on one): expected, not worth a word.
        if !self.lost.swap(true, Ordering::AcqRel) && !self.closing.load(Ordering::Acquire) {
            eprintln!(
                "rocjitsu: lost the daemon at {}: {why}; GPU calls fail from now on",
                self.socket.display()
            );
        }
        self.free.notify_all();
    }

    /// One request and its reply.
    fn call(&self, op: Opcode, payload: &[u8]) -> Result<Message, Errno> {
        self.call_with(op, payload, &[])
    }

    /// One request, with descriptors attached, and its reply.
    fn call_with(
        &self,
        op: Opcode,
        payload: &[u8],
        fds: &[std::os::fd::BorrowedFd],
    ) -> Result<Message, Errno> {
        loop {
            // A daemon lost during the call may come back restored from a
            // checkpoint; the call is then made again (the daemon froze
            // when it checkpointed, so it did not run it).
            let seen = self.generation();
            let t = match self.take() {
                Ok(t) => t,
                Err(Errno::EAGAIN) => {
                    if self.try_resume(seen) {
                        continue;
                    }
                    self.lose("no new connection to the daemon");
                    return Err(Errno::ENODEV);
                }
                Err(e) => return Err(e),
            };
            let h = Header {
                opcode: op as u16,
                reserved: 0,
                request_id: self.next_id.fetch_add(1, Ordering::Relaxed),
                payload_len: payload.len() as u32,
                result: 0,
            };
            let r = t.send(&h, payload, fds).and_then(|_| {
                t.recv()?
                    .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))
            });
            return match r {
                Ok(m) if m.header.request_id == h.request_id => {
                    self.give_back(t);
                    Ok(m)
                }
                Ok(_) => {
                    self.open.fetch_sub(1, Ordering::AcqRel);
                    self.lose("a reply to another request");
                    Err(Errno::EIO)
                }
                Err(e) => {
                    self.open.fetch_sub(1, Ordering::AcqRel);
                    drop(t);
                    if self.try_resume(seen) {
                        continue;
                    }
                    self.lose(&e.to_string());
                    Err(Errno::ENODEV)
                }
            };
        }
    }

    /// The memory to offer with an SVM SET_ATTR of `[va, va + size)`: the
    /// memfd the range already shares with the daemon, or else a new one
    /// its pages move into (as a userptr allocation's do), so the daemon's
    /// GPU and the process see the same bytes. None for an interval the
    /// daemon refuses anyway (unaligned, empty); EFAULT for one the
    /// process has not mapped, as KFD answers.
    fn svm_backing(
        &self,
        va: u64,
        size: u64,
    ) -> Result<Option<(std::os::fd::OwnedFd, u64)>, Errno> {
        if crate::svm::interval(va, size).is_err() {
            return Ok(None);
        }
        if let Some(b) = shared_backing(va, size) {
            return Ok(Some(b));
        }
        if !crate::user::is_mapped(va, size) {
            return Err(Errno::EFAULT);
        }
        let fd = crate::memory::memfd(&format!("rocjitsu-userptr-svm-{va:x}"), size)?;
        use std::os::fd::AsRawFd;
        self.adopt_userptr(va, size, fd.as_raw_fd())?;
        Ok(Some((fd, 0)))
    }

    /// Maps a userptr allocation's memfd over the process's pages at
    /// `va`, their contents copied first: only the pages the process has
    /// touched (present or swapped, per /proc/self/pagemap), since the rest
    /// read as zeros, which the fresh memfd already holds.
    ///
    /// The range may share pages with memory other threads are writing (a
    /// small malloc'd buffer shares its page with the heap's bookkeeping):
    /// a write landing between the copy and the remap would be lost. A
    /// [`WriteFence`] holds such writes (and first touches) in the kernel
    /// until the new mapping is in place; they then go on, on the shared
    /// pages. A thread held there may hold any lock of the process (the
    /// malloc arena's, the preload's descriptor table) and may own any
    /// heap page in the range, so while the fence is up this thread makes
    /// raw system calls only, writes nothing but its stack and a private
    /// mapping of its own, and takes no lock.
    fn adopt_userptr(&self, va: u64, size: u64, fd: RawFd) -> Result<(), Errno> {
        const PAGE: u64 = 4096;
        let size = size.next_multiple_of(PAGE);
        let pages = (size / PAGE) as usize;
        let t0 = std::time::Instant::now();
        // The page-map entries go to a mapping of their own: a heap buffer
        // could sit in one of the fenced pages, and reading into it would
        // then wait on the fence forever.
        let entries = Scratch::new(pages * 8).ok_or(Errno::ENOMEM)?;
        let resident = Scratch::new(pages).ok_or(Errno::ENOMEM)?;
        let pagemap = raw::open(c"/proc/self/pagemap");
        let fence = WriteFence::raise(va, size, self.fds);
        let guarded = fence.fd.is_some();
        let copied = copy_touched(va, pages, fd, pagemap, &entries, &resident);
        let p = copied.and_then(|n| raw::map_shared_fixed(va, size, fd).map(|()| n));
        drop(fence);
        if let Some(pm) = pagemap {
            raw::close(pm);
        }
        drop(entries);
        drop(resident);
        let copied = p?;
        if !guarded {
            tracing::debug!(
                "userptr {va:#x}+{size:#x}: moved without a write fence (no userfaultfd, or not private anonymous memory)"
            );
        }
        tracing::debug!(
            "userptr {va:#x}+{size:#x}: {copied} of {pages} pages copied into the daemon's memory in {:.3} ms",
            t0.elapsed().as_secs_f64() * 1e3
        );
        Ok(())
    }
}

/// Copies the touched pages of `[va, va + pages * 4096)` into `fd` at the
/// same offsets (every page if the page map cannot be read); returns how
/// many were copied. A page is touched when the page map has it present or
/// swapped, or when mincore has it resident: a range that is already a
/// shared mapping of a memfd (an earlier userptr's, where the daemon's
/// memfd could not be reopened through /proc/self/map_files, as in a
/// container without CAP_SYS_ADMIN) holds pages this process has not
/// faulted in, which the page map shows as absent. System calls only: it
/// runs under a [`WriteFence`].
fn copy_touched(
    va: u64,
    pages: usize,
    fd: RawFd,
    pagemap: Option<RawFd>,
    entries: &Scratch,
    resident: &Scratch,
) -> Result<usize, Errno> {
    const PAGE: u64 = 4096;
    let touched =
        pagemap.is_some_and(|pm| raw::pread_exact(pm, entries.ptr, pages * 8, (va / PAGE) * 8));
    let in_core = raw::mincore(va, pages * PAGE as usize, resident.ptr);
    let is_touched = |i: usize| {
        !touched || entries.u64_at(i) >> 62 != 0 || (in_core && resident.byte_at(i) & 1 != 0)
    };
    let (mut i, mut copied) = (0, 0);
    while i < pages {
        if !is_touched(i) {
            i += 1;
            continue;
        }
        let run = (i..pages).take_while(|&j| is_touched(j)).count();
        let (off, len) = (i as u64 * PAGE, run as u64 * PAGE);
        if !raw::pwrite_exact(fd, va + off, len as usize, off) {
            return Err(Errno::EFAULT);
        }
        copied += run;
        i += run;
    }
    Ok(copied)
}

/// A private anonymous mapping of its own, for data that must not live in
/// the heap.
struct Scratch {
    ptr: *mut u8,
    len: usize,
}

impl Scratch {
    fn new(len: usize) -> Option<Scratch> {
        let len = len.max(1).next_multiple_of(4096);
        let p = raw::mmap(0, len, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)?;
        Some(Scratch {
            ptr: p as *mut u8,
            len,
        })
    }

    fn u64_at(&self, i: usize) -> u64 {
        assert!(i * 8 + 8 <= self.len);
        // SAFETY: inside the mapping (checked), which lives as long as self.
        unsafe { (self.ptr.add(i * 8) as *const u64).read_unaligned() }
    }
}

impl Scratch {
    fn byte_at(&self, i: usize) -> u8 {
        assert!(i < self.len);
        // SAFETY: inside the mapping (checked), which lives as long as self.
        unsafe { self.ptr.add(i).read() }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        raw::munmap(self.ptr as u64, self.len);
    }
}

/// System calls made directly, never through the preload's interposed
/// wrappers (which take locks) and with every argument a full register (a
/// variadic call leaves the upper half of a 32-bit one undefined).
mod raw {
    use std::os::fd::RawFd;
    type L = libc::c_long;

    pub fn open(path: &std::ffi::CStr) -> Option<RawFd> {
        // SAFETY: a NUL-terminated path; flags only.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat,
                L::from(libc::AT_FDCWD),
                path.as_ptr() as L,
                L::from(libc::O_RDONLY | libc::O_CLOEXEC),
                0 as L,
            )
        };
        (fd >= 0).then_some(fd as RawFd)
    }

    pub fn close(fd: RawFd) {
        // SAFETY: closing a descriptor the caller owns.
        unsafe { libc::syscall(libc::SYS_close, L::from(fd)) };
    }

    /// mincore(2) of `[addr, addr + len)` into `vec` (one byte per page).
    pub fn mincore(addr: u64, len: usize, vec: *mut u8) -> bool {
        // SAFETY: the caller's `vec` holds one byte per page of `len`.
        unsafe { libc::syscall(libc::SYS_mincore, addr as L, len as L, vec as L) == 0 }
    }

    /// Reads exactly `len` bytes at `off` of `fd` into `buf`.
    pub fn pread_exact(fd: RawFd, buf: *mut u8, len: usize, off: u64) -> bool {
        // SAFETY: the caller's buffer holds `len` bytes.
        let n =
            unsafe { libc::syscall(libc::SYS_pread64, L::from(fd), buf as L, len as L, off as L) };
        n == len as L
    }

    /// Writes the `len` bytes at address `src` to `fd` at `off`; an
    /// unmapped source fails with EFAULT, touching nothing.
    pub fn pwrite_exact(fd: RawFd, src: u64, len: usize, off: u64) -> bool {
        // SAFETY: the kernel reads the source and checks it is mapped.
        let n = unsafe {
            libc::syscall(
                libc::SYS_pwrite64,
                L::from(fd),
                src as L,
                len as L,
                off as L,
            )
        };
        n == len as L
    }

    pub fn mmap(addr: u64, len: usize, flags: libc::c_int, fd: RawFd) -> Option<u64> {
        // SAFETY: a new mapping; with MAP_FIXED the caller owns the range.
        let p = unsafe {
            libc::syscall(
                libc::SYS_mmap,
                addr as L,
                len as L,
                L::from(libc::PROT_READ | libc::PROT_WRITE),
                L::from(flags),
                L::from(fd),
                0 as L,
            )
        };
        (!(-4095..0).contains(&p)).then_some(p as u64)
    }

    /// Replaces `[va, va + len)` with a shared read/write mapping of `fd`
    /// from offset 0.
    pub fn map_shared_fixed(va: u64, len: u64, fd: RawFd) -> Result<(), crate::Errno> {
        match mmap(va, len as usize, libc::MAP_SHARED | libc::MAP_FIXED, fd) {
            Some(p) if p == va => Ok(()),
            _ => Err(crate::Errno::ENOMEM),
        }
    }

    pub fn munmap(addr: u64, len: usize) {
        // SAFETY: unmapping a mapping the caller owns.
        unsafe { libc::syscall(libc::SYS_munmap, addr as L, len as L) };
    }

    /// An ioctl whose argument is a pointer.
    pub fn ioctl(fd: RawFd, request: u64, arg: *mut u64) -> bool {
        // SAFETY: the caller passes the structure the request expects.
        unsafe { libc::syscall(libc::SYS_ioctl, L::from(fd), request as L, arg as L) == 0 }
    }
}

/// A userfaultfd on a range of private anonymous memory that makes every
/// write to it, and every first touch of a page, wait in the kernel until
/// the fence is dropped: closing the userfaultfd wakes the waiters, whose
/// faults are then retried against whatever the range maps by then.
/// Raising it can fail (no userfaultfd, a range that is not private
/// anonymous memory, such as one already shared): the range is then
/// unguarded.
struct WriteFence {
    fd: Option<RawFd>,
    fds: Fds,
}

impl WriteFence {
    const UFFDIO_API: u64 = 0xc018_aa3f;
    const UFFDIO_REGISTER: u64 = 0xc020_aa00;
    const UFFDIO_WRITEPROTECT: u64 = 0xc018_aa06;
    const UFFD_API: u64 = 0xaa;
    const MODE_MISSING: u64 = 1;
    const MODE_WP: u64 = 2;
    const UFFD_USER_MODE_ONLY: libc::c_long = 1;

    fn raise(va: u64, len: u64, fds: Fds) -> WriteFence {
        // Faults from the kernel too (another thread's read(2) into the
        // range) wait when we may ask for that; otherwise user faults only
        // (the kernel's then fail with EFAULT during the brief window).
        let flags = libc::c_long::from(libc::O_CLOEXEC);
        // SAFETY: userfaultfd takes flags only.
        let mut fd = unsafe { libc::syscall(libc::SYS_userfaultfd, flags) };
        if fd < 0 {
            // SAFETY: as above.
            fd = unsafe { libc::syscall(libc::SYS_userfaultfd, flags | Self::UFFD_USER_MODE_ONLY) };
        }
        if fd < 0 {
            return WriteFence { fd: None, fds };
        }
        // Moved out of the application's reach before the fence goes up
        // (relocating takes the preload's locks).
        let fd = (fds.relocate)(fd as RawFd);
        let mut api = [Self::UFFD_API, 0, 0];
        let mut reg = [va, len, Self::MODE_MISSING | Self::MODE_WP, 0];
        let mut wp = [va, len, 1];
        // uffdio_api, uffdio_register and uffdio_writeprotect, in order;
        // the fence is up once the last succeeds.
        let up = raw::ioctl(fd, Self::UFFDIO_API, api.as_mut_ptr())
            && raw::ioctl(fd, Self::UFFDIO_REGISTER, reg.as_mut_ptr())
            && raw::ioctl(fd, Self::UFFDIO_WRITEPROTECT, wp.as_mut_ptr());
        let fence = WriteFence { fd: Some(fd), fds };
        if up {
            fence
        } else {
            drop(fence);
            WriteFence { fd: None, fds }
        }
    }
}

impl Drop for WriteFence {
    fn drop(&mut self) {
        if let Some(fd) = self.fd.take() {
            // Closing first drops the fence and wakes every waiter; only
            // then the preload's bookkeeping (which takes a lock a waiter
            // may hold).
            raw::close(fd);
            (self.fds.release)(fd);
        }
    }
}

/// The memfd of an earlier userptr adoption that still maps all of
/// `[va, va + size)`, opened through /proc/self/map_files, with the range's
/// offset in it; None when the range is ordinary memory (or map_files
/// cannot be opened, which needs CAP_SYS_ADMIN on most kernels).
fn shared_backing(va: u64, size: u64) -> Option<(std::os::fd::OwnedFd, u64)> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (range, _, pgoff) = (f.next()?, f.next()?, f.next()?);
        let (a, b) = range.split_once('-')?;
        let (start, end) = (
            u64::from_str_radix(a, 16).ok()?,
            u64::from_str_radix(b, 16).ok()?,
        );
        if va < start || va >= end {
            continue;
        }
        if va.checked_add(size).is_none_or(|e| e > end)
            || !line.contains("/memfd:rocjitsu-userptr-")
        {
            return None;
        }
        let pgoff = u64::from_str_radix(pgoff, 16).ok()?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/self/map_files/{a}-{b}"))
            .ok()?;
        return Some((file.into(), pgoff + (va - start)));
    }
    None
}

/// In a child after fork: the userptr ranges the parent adopted are still
/// shared mappings of the daemon's memfds, so parent and child would write
/// each other's memory (a heap page registered as userptr would join their
/// heaps). Each becomes a private copy again, as anonymous memory is across
/// fork. Call it before the child runs anything else (it is single-threaded
/// then); returns how many mappings it turned private.
pub fn privatize_userptr_mappings() -> usize {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return 0;
    };
    let mut n = 0;
    for line in maps.lines() {
        if !line.contains("/memfd:rocjitsu-userptr-") {
            continue;
        }
        let mut f = line.split_whitespace();
        let Some((range, pgoff)) = f.next().zip(f.nth(1)) else {
            continue;
        };
        let Some((start, end, pgoff)) = range.split_once('-').and_then(|(a, b)| {
            Some((
                u64::from_str_radix(a, 16).ok()?,
                u64::from_str_radix(b, 16).ok()?,
                u64::from_str_radix(pgoff, 16).ok()?,
            ))
        }) else {
            continue;
        };
        let len = (end - start) as usize;
        // Only the parts that hold data: the rest reads as zeros, which a
        // fresh private mapping already holds (a runtime's pool of
        // hundreds of megabytes is mostly untouched).
        let extents = data_extents(range, start, end, pgoff).unwrap_or_else(|| vec![(0, len)]);
        // SAFETY: a fresh private mapping, filled with the shared range's
        // data and then moved over it (mremap replaces what was at the
        // destination in one step).
        unsafe {
            let tmp = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if tmp == libc::MAP_FAILED {
                continue;
            }
            for &(off, n) in &extents {
                std::ptr::copy_nonoverlapping(
                    (start as usize + off) as *const u8,
                    tmp.cast::<u8>().add(off),
                    n,
                );
            }
            let moved = libc::mremap(
                tmp,
                len,
                len,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                start as *mut libc::c_void,
            );
            if moved as u64 == start {
                n += 1;
            } else {
                libc::munmap(tmp, len);
            }
        }
    }
    n
}

/// The parts of the shared mapping `[start, end)` of a memfd (from file
/// offset `pgoff`) that hold data, as (offset in the mapping, length):
/// the memfd's data extents (SEEK_DATA/SEEK_HOLE, which also finds pages
/// swapped out) when /proc/self/map_files opens it, else the pages
/// mincore finds in memory; None when neither can tell.
fn data_extents(range: &str, start: u64, end: u64, pgoff: u64) -> Option<Vec<(usize, usize)>> {
    use std::os::fd::AsRawFd;
    let stop = pgoff + (end - start);
    if let Ok(file) = std::fs::File::open(format!("/proc/self/map_files/{range}")) {
        let fd = file.as_raw_fd();
        let mut out = Vec::new();
        let mut pos = pgoff;
        while pos < stop {
            // SAFETY: lseek on our own descriptor.
            let d = unsafe { libc::lseek(fd, pos as libc::off_t, libc::SEEK_DATA) };
            if d < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO) {
                    break; // no data past `pos`
                }
                return None;
            }
            let d = d as u64;
            if d >= stop {
                break;
            }
            // SAFETY: as above.
            let h = unsafe { libc::lseek(fd, d as libc::off_t, libc::SEEK_HOLE) };
            let h = if h < 0 { stop } else { (h as u64).min(stop) };
            out.push(((d - pgoff) as usize, (h - d) as usize));
            pos = h;
        }
        return Some(out);
    }
    const PAGE: usize = 4096;
    let len = (end - start) as usize;
    let mut resident = vec![0u8; len / PAGE];
    // SAFETY: the mapping is ours; one byte per page.
    if unsafe { libc::mincore(start as *mut libc::c_void, len, resident.as_mut_ptr()) } != 0 {
        return None;
    }
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, _) in resident.iter().enumerate().filter(|(_, b)| *b & 1 != 0) {
        match out.last_mut() {
            Some((off, n)) if *off + *n == i * PAGE => *n += PAGE,
            _ => out.push((i * PAGE, PAGE)),
        }
    }
    Some(out)
}

impl RemoteDriver {
    /// Ioctls once the daemon is gone, which to the process is its GPU
    /// going away: a wait ends at once, each event carrying the memory
    /// exception of a GPU hang (imprecise, error type 3), so the runtime
    /// reports a GPU error and stops, as when KFD resets a hung GPU; every
    /// other ioctl fails with ENODEV.
    fn after_loss(&self, dev: DeviceFile, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        if dev != DeviceFile::Kfd
            || abi::ioc_type(request) != abi::KFD_TYPE
            || abi::ioc_nr(request) != kfd::WAIT_EVENTS
        {
            return Err(Errno::ENODEV);
        }
        use kfd::wait_events as w;
        let (ptr, n, timeout_ms) = (
            abi::get(arg, w::EVENTS_PTR),
            abi::get(arg, w::NUM_EVENTS) as usize,
            abi::get(arg, w::TIMEOUT),
        );
        let mut list = vec![0u8; n.min(kfd::SIGNAL_EVENT_LIMIT as usize) * kfd::event_data::SIZE];
        crate::user::read(ptr, &mut list)?;
        let gpu_id = crate::gpu_id_of(&self.config, 0);
        let types = self.event_types.lock().unwrap_or_else(|e| e.into_inner());
        if lost_gpu_events(&mut list, gpu_id, |id| types.get(&id).copied()) {
            drop(types);
            crate::user::write(ptr, &list)?;
            abi::put(arg, w::WAIT_RESULT, kfd::WAIT_COMPLETE);
        } else {
            drop(types);
            // Signal events only: a GPU that is gone never signals them.
            // The wait times out (at most a second at a time, so that a
            // waiter that never looks at exception events still wakes).
            std::thread::sleep(std::time::Duration::from_millis(
                timeout_ms.min(1000).into(),
            ));
            abi::put(arg, w::WAIT_RESULT, kfd::WAIT_TIMEOUT);
        }
        Ok(0)
    }

    /// Notes the type of an event the daemon created, and forgets one it
    /// destroyed.
    fn track_event(&self, request: u64, arg: &[u8]) {
        if abi::ioc_type(request) != abi::KFD_TYPE {
            return;
        }
        let mut types = self.event_types.lock().unwrap_or_else(|e| e.into_inner());
        match abi::ioc_nr(request) {
            kfd::CREATE_EVENT if arg.len() >= kfd::create_event::SIZE => {
                use kfd::create_event as c;
                types.insert(abi::get(arg, c::EVENT_ID), abi::get(arg, c::EVENT_TYPE));
            }
            kfd::DESTROY_EVENT if arg.len() >= kfd::destroy_event::SIZE => {
                types.remove(&abi::get(arg, kfd::destroy_event::EVENT_ID));
            }
            _ => {}
        }
    }
}

/// Fills the `WAIT_EVENTS` entries `list` as `kfd_signal_reset_event` and
/// the wait's copy-out do after a whole-GPU reset caused by a hang, with the
/// GPU's memory lost: a hardware-exception event gets the reset's data, a
/// memory-exception event a GPU-hang memory error (imprecise, no address);
/// signal events stay as they are. `type_of` gives an event's type by id.
/// Returns whether any entry was an exception event (the wait completes).
fn lost_gpu_events(list: &mut [u8], gpu_id: u32, type_of: impl Fn(u32) -> Option<u32>) -> bool {
    use kfd::event_data as e;
    let mut signalled = false;
    for entry in list.chunks_exact_mut(e::SIZE) {
        match type_of(abi::get(entry, e::EVENT_ID)) {
            Some(kfd::EVENT_HW_EXCEPTION) => {
                use kfd::hw_exception_data as h;
                let mut x = [0u8; h::SIZE];
                abi::put(&mut x, h::RESET_TYPE, kfd::HW_EXCEPTION_WHOLE_GPU_RESET);
                abi::put(&mut x, h::RESET_CAUSE, kfd::HW_EXCEPTION_GPU_HANG);
                abi::put(&mut x, h::MEMORY_LOST, 1);
                abi::put(&mut x, h::GPU_ID, gpu_id);
                abi::put(entry, e::HW_EXCEPTION_DATA, x);
                signalled = true;
            }
            Some(kfd::EVENT_MEMORY) => {
                use kfd::memory_exception_data as m;
                let mut x = [0u8; m::SIZE];
                abi::put(&mut x, m::IMPRECISE, 1);
                abi::put(&mut x, m::GPU_ID, gpu_id);
                abi::put(&mut x, m::ERROR_TYPE, kfd::MEM_ERR_GPU_HANG);
                abi::put(entry, e::MEMORY_EXCEPTION_DATA, x);
                signalled = true;
            }
            _ => {}
        }
    }
    signalled
}

fn wire_device(dev: DeviceFile) -> wire::Device {
    match dev {
        DeviceFile::Kfd => wire::Device::Kfd,
        DeviceFile::Render { gpu, minor } => wire::Device::Render {
            gpu: gpu as u32,
            minor,
        },
    }
}

impl Driver for RemoteDriver {
    fn device_for_path(&self, path: &str) -> Option<DeviceFile> {
        if path == "/dev/kfd" {
            return Some(DeviceFile::Kfd);
        }
        let minor: u32 = path.strip_prefix("/dev/dri/renderD")?.parse().ok()?;
        let gpu = self
            .config
            .gpus
            .iter()
            .position(|g| g.kfd.drm_render_minor == minor)?;
        Some(DeviceFile::Render { gpu, minor })
    }

    fn sysfs_redirect(&self, path: &str) -> Option<PathBuf> {
        self.sysfs.redirect(path)
    }

    fn open(&self, _dev: DeviceFile) -> Result<(), Errno> {
        if self.lost.load(Ordering::Acquire) {
            return Err(Errno::ENODEV);
        }
        Ok(())
    }

    fn ioctl(&self, dev: DeviceFile, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        if self.lost.load(Ordering::Acquire) {
            return self.after_loss(dev, request, arg);
        }
        let ranges = abi::user_buffers(request, arg)?;
        let mut buffers = Vec::with_capacity(ranges.len());
        for (addr, len) in ranges {
            let mut b = vec![0u8; len];
            crate::user::read(addr, &mut b)?;
            buffers.push((addr, b));
        }
        use kfd::alloc_memory_of_gpu as alloc;
        let is_userptr_alloc = abi::ioc_type(request) == abi::KFD_TYPE
            && abi::ioc_nr(request) == kfd::ALLOC_MEMORY_OF_GPU
            && arg.len() >= alloc::SIZE
            && abi::get(arg, alloc::FLAGS) & kfd::ALLOC_USERPTR != 0;
        // A userptr range the process already shares with the daemon (an
        // earlier allocation's memfd, still mapped there): the daemon uses
        // that memory, and nothing is copied or remapped. (A userptr's
        // address is passed in `mmap_offset`.)
        let is_svm_set = abi::ioc_type(request) == abi::KFD_TYPE
            && abi::ioc_nr(request) == kfd::SVM
            && arg.len() >= kfd::svm::SIZE
            && abi::get(arg, kfd::svm::OP) == crate::svm::OP_SET_ATTR;
        let is_kfd = |nr: u8| abi::ioc_type(request) == abi::KFD_TYPE && abi::ioc_nr(request) == nr;
        // A dma-buf ioctl names a descriptor of this process: it travels
        // with the call.
        let dmabuf_in = if is_kfd(kfd::GET_DMABUF_INFO) && arg.len() >= kfd::get_dmabuf_info::SIZE {
            Some(abi::get(arg, kfd::get_dmabuf_info::DMABUF_FD))
        } else if is_kfd(kfd::IMPORT_DMABUF) && arg.len() >= kfd::import_dmabuf::SIZE {
            Some(abi::get(arg, kfd::import_dmabuf::DMABUF_FD))
        } else if abi::ioc_type(request) == abi::DRM_TYPE
            && abi::ioc_nr(request) == abi::drm::PRIME_FD_TO_HANDLE
            && arg.len() >= abi::drm::prime_handle::SIZE
        {
            Some(abi::get(arg, abi::drm::prime_handle::FD))
        } else {
            None
        };
        let backing = if let Some(n) = dmabuf_in {
            Some((crate::user::Local.file(n)?, 0))
        } else if is_userptr_alloc {
            shared_backing(
                abi::get(arg, alloc::MMAP_OFFSET),
                abi::get(arg, alloc::BYTES),
            )
        } else if is_svm_set {
            self.svm_backing(
                abi::get(arg, kfd::svm::START_ADDR),
                abi::get(arg, kfd::svm::BYTES),
            )?
        } else {
            None
        };
        let mut req = Ioctl {
            device: wire_device(dev),
            request,
            arg: arg.to_vec(),
            buffers,
            fds: u32::from(backing.is_some()),
            fd_offset: backing.as_ref().map_or(0, |b| b.1),
            notes: vec![],
        };
        let mut m = match &backing {
            Some((fd, _)) => {
                use std::os::fd::AsFd;
                let m = self.call_with(Opcode::Ioctl, &req.encode(), &[fd.as_fd()])?;
                if m.header.result == -libc::EINVAL && is_userptr_alloc {
                    // Not acceptable to the daemon: the ordinary way.
                    req.fds = 0;
                    req.fd_offset = 0;
                    self.call(Opcode::Ioctl, &req.encode())?
                } else {
                    m
                }
            }
            None => self.call(Opcode::Ioctl, &req.encode())?,
        };
        drop(backing);
        let result = m.header.result;
        let out = Ioctl::decode(&m.payload).map_err(|_| Errno::EIO)?;
        // GPU fault reports of this process, printed where local mode
        // prints them.
        for n in &out.notes {
            eprintln!("{n}");
        }
        if result < 0 {
            return Err(Errno(-result));
        }
        if out.arg.len() != arg.len() || out.fds as usize != m.fds.len() {
            return Err(Errno::EIO);
        }
        arg.copy_from_slice(&out.arg);
        self.track_event(request, arg);
        for (addr, data) in &out.buffers {
            crate::user::write(*addr, data)?;
        }
        if is_kfd(kfd::EXPORT_DMABUF) && arg.len() >= kfd::export_dmabuf::SIZE {
            // The daemon's descriptor of the buffer becomes one of this
            // process's, as the kernel's `dma_buf_fd` makes it.
            let fd = m.fds.pop().ok_or(Errno::EIO)?;
            let cloexec = abi::get(arg, kfd::export_dmabuf::FLAGS) & libc::O_CLOEXEC as u32 != 0;
            let n = crate::user::Local.install(fd, cloexec)?;
            abi::put(arg, kfd::export_dmabuf::DMABUF_FD, n);
        }
        if abi::ioc_type(request) == abi::KFD_TYPE
            && abi::ioc_nr(request) == kfd::ALLOC_MEMORY_OF_GPU
            && let Some(fd) = m.fds.pop()
        {
            let (va, size) = (
                abi::get(arg, alloc::MMAP_OFFSET),
                abi::get(arg, alloc::BYTES),
            );
            let fd = (self.fds.relocate)(fd.into_raw_fd());
            let adopted = self.adopt_userptr(va, size, fd);
            // The mapping holds the memfd now.
            (self.fds.release)(fd);
            // SAFETY: closing the received descriptor we own, bypassing an
            // interposed close.
            unsafe { libc::syscall(libc::SYS_close, fd) };
            if let Err(e) = adopted {
                // Undo the allocation rather than leave the GPU with pages
                // the process does not see.
                let mut f = [0u8; kfd::free_memory_of_gpu::SIZE];
                let handle = abi::get(arg, alloc::HANDLE);
                abi::put(&mut f, kfd::free_memory_of_gpu::HANDLE, handle);
                let free = (1u64 << 30)
                    | ((f.len() as u64) << 16)
                    | (u64::from(abi::KFD_TYPE) << 8)
                    | u64::from(kfd::FREE_MEMORY_OF_GPU);
                let _ = self.ioctl(DeviceFile::Kfd, free, &mut f);
                return Err(e);
            }
        }
        Ok(result)
    }

    /// Tells the daemon the process is done with the GPU (CLOSE): it
    /// releases everything the process owned.
    fn release(&self) -> bool {
        self.closing.store(true, Ordering::Release);
        if !self.lost.load(Ordering::Acquire) {
            let _ = self.call(Opcode::Close, b"");
        }
        self.lost.store(true, Ordering::Release);
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).clear();
        true
    }

    fn mmap(&self, dev: DeviceFile, offset: u64, len: u64) -> Result<MapSource, Errno> {
        if self.lost.load(Ordering::Acquire) {
            return Err(Errno::ENODEV);
        }
        let req = Mmap {
            device: wire_device(dev),
            offset,
            len,
        };
        let mut m = self.call(Opcode::Mmap, &req.encode())?;
        if m.header.result < 0 {
            return Err(Errno(-m.header.result));
        }
        let within = wire::decode_u64(&m.payload).map_err(|_| Errno::EIO)?;
        let fd = m.fds.pop().ok_or(Errno::EIO)?;
        Ok(MapSource {
            fd: (self.fds.relocate)(fd.into_raw_fd()),
            offset: within,
            close_after: true,
        })
    }
}

impl Drop for RemoteDriver {
    fn drop(&mut self) {
        // Connections close with their transports; the daemon releases the
        // process when the last one goes.
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::{Scratch, copy_touched, data_extents, lost_gpu_events, raw};
    use crate::abi::{self, kfd};
    use std::os::fd::AsRawFd;

    /// After the daemon is lost, each kind of event gets what a GPU reset
    /// gives it in the union of its entry, and signal events nothing.
    #[test]
    fn a_lost_gpu_reports_a_reset_per_event_type() {
        use kfd::event_data as e;
        let ids = [7u32, 8, 9, 10];
        let mut list = vec![0u8; ids.len() * e::SIZE];
        for (entry, id) in list.chunks_exact_mut(e::SIZE).zip(ids) {
            abi::put(entry, e::EVENT_ID, id);
            // A signal event's age, which must survive.
            abi::put(entry, e::LAST_EVENT_AGE, 0x55u64);
        }
        let type_of = |id| match id {
            7 => Some(kfd::EVENT_SIGNAL),
            8 => Some(kfd::EVENT_HW_EXCEPTION),
            9 => Some(kfd::EVENT_MEMORY),
            _ => None,
        };
        assert!(lost_gpu_events(&mut list, 0x1234, type_of));
        let entry = |i: usize| &list[i * e::SIZE..(i + 1) * e::SIZE];
        let word =
            |i: usize, at: usize| u32::from_le_bytes(entry(i)[at..at + 4].try_into().unwrap());
        assert_eq!(abi::get(entry(0), e::LAST_EVENT_AGE), 0x55);
        assert_eq!(abi::get(entry(3), e::LAST_EVENT_AGE), 0x55);
        // hw_exception_data: reset_type, reset_cause, memory_lost, gpu_id.
        assert_eq!(
            [word(1, 0), word(1, 4), word(1, 8), word(1, 12)],
            [0, 0, 1, 0x1234]
        );
        // memory_exception_data: imprecise, va 0, gpu_id, ErrorType GPU hang.
        assert_eq!(
            [word(2, 0), word(2, 4), word(2, 8), word(2, 12)],
            [0, 0, 0, 1]
        );
        assert_eq!(abi::get(entry(2), kfd::memory_exception_data::VA), 0);
        assert_eq!([word(2, 24), word(2, 28)], [0x1234, 3]);
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(word(i, 40), id, "the event ids stay");
        }
        // Signal events alone: nothing fires.
        let mut only = list[..e::SIZE].to_vec();
        assert!(!lost_gpu_events(&mut only, 0x1234, type_of));
    }

    /// A range that is already a shared memfd mapping whose pages this
    /// process never faulted in (written through the descriptor, as an
    /// earlier userptr move writes them): the page map shows them absent,
    /// yet they hold the process's bytes and are copied.
    #[test]
    fn copy_touched_keeps_a_memfd_mapping_s_pages() {
        const PAGE: usize = 4096;
        let pages = 6;
        let old = crate::memory::memfd("copy-touched-old", (pages * PAGE) as u64).unwrap();
        for i in [0, 3, 5] {
            let b = [i as u8 + 1; PAGE];
            // SAFETY: writing our buffer to our memfd.
            let n = unsafe {
                libc::pwrite(
                    old.as_raw_fd(),
                    b.as_ptr().cast(),
                    PAGE,
                    (i * PAGE) as libc::off_t,
                )
            };
            assert_eq!(n, PAGE as isize);
        }
        // SAFETY: a fresh shared mapping of our memfd, not touched here.
        let va = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                pages * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                old.as_raw_fd(),
                0,
            )
        };
        assert_ne!(va, libc::MAP_FAILED);
        let new = crate::memory::memfd("copy-touched-new", (pages * PAGE) as u64).unwrap();
        let entries = Scratch::new(pages * 8).unwrap();
        let resident = Scratch::new(pages).unwrap();
        let pagemap = raw::open(c"/proc/self/pagemap");
        let copied = copy_touched(
            va as u64,
            pages,
            new.as_raw_fd(),
            pagemap,
            &entries,
            &resident,
        )
        .unwrap();
        if let Some(pm) = pagemap {
            raw::close(pm);
            assert_eq!(copied, 3, "the three pages the memfd holds");
        }
        for i in 0..pages {
            let mut b = [0u8; PAGE];
            // SAFETY: reading our memfd into our buffer.
            let n = unsafe {
                libc::pread(
                    new.as_raw_fd(),
                    b.as_mut_ptr().cast(),
                    PAGE,
                    (i * PAGE) as libc::off_t,
                )
            };
            assert_eq!(n, PAGE as isize);
            let want = if [0, 3, 5].contains(&i) {
                i as u8 + 1
            } else {
                0
            };
            assert!(b.iter().all(|&x| x == want), "page {i}");
        }
        // SAFETY: our mapping.
        unsafe { libc::munmap(va, pages * PAGE) };
    }

    /// Without /proc/self/map_files (a range name that does not open),
    /// the data extents of a shared memfd mapping are the pages in memory.
    #[test]
    fn data_extents_fall_back_to_the_pages_in_memory() {
        const PAGE: usize = 4096;
        // SAFETY: a fresh memfd of 8 pages, mapped shared; pages 1, 2 and
        // 6 written.
        let (p, start) = unsafe {
            let fd = libc::memfd_create(c"extents-test".as_ptr(), libc::MFD_CLOEXEC);
            assert!(fd >= 0);
            assert_eq!(libc::ftruncate(fd, (8 * PAGE) as libc::off_t), 0);
            let p = libc::mmap(
                std::ptr::null_mut(),
                8 * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            libc::close(fd);
            for i in [1, 2, 6] {
                p.cast::<u8>().add(i * PAGE).write_volatile(1);
            }
            (p, p as u64)
        };
        let end = start + 8 * PAGE as u64;
        let got = data_extents("not-a-range", start, end, 0).unwrap();
        assert_eq!(got, vec![(PAGE, 2 * PAGE), (6 * PAGE, PAGE)]);
        // With map_files (root here), the memfd's own extents agree.
        let range = format!("{start:x}-{end:x}");
        if let Some(via_file) = data_extents(&range, start, end, 0) {
            assert_eq!(via_file, got);
        }
        // SAFETY: our mapping.
        unsafe { libc::munmap(p, 8 * PAGE) };
    }
}
