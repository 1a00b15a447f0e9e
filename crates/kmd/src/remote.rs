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
//! them at the same address, so the process and the GPU share them.

use crate::abi::{self, kfd};
use crate::sysfs::SysfsTree;
use crate::{DeviceFile, Driver, Errno, MapSource};
use rocjitsu_gpu::config::GpuConfig;
use rocjitsu_rpc::unix::UnixTransport;
use rocjitsu_rpc::wire::{self, Header, Hello, Ioctl, Mmap, Opcode, Welcome};
use rocjitsu_rpc::{Message, Transport};
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
        })
    }

    fn handshake(
        socket: &Path,
        pid: u32,
        token: [u8; 16],
        fds: Fds,
    ) -> Result<(Conn, Welcome), String> {
        let t = UnixTransport::connect(socket)
            .map_err(|e| {
                format!(
                    "no rocjitsu daemon answers at {}: {e} (start one with `rocjitsu --config CONFIG --daemon`, or run the app with --daemon)",
                    socket.display()
                )
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
        t.send(&h, &hello, &[]).map_err(proto_err)?;
        let m = t
            .recv()
            .map_err(proto_err)?
            .ok_or_else(|| format!("the daemon at {} closed the connection", socket.display()))?;
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
        if !self.lost.swap(true, Ordering::AcqRel) {
            eprintln!(
                "rocjitsu: lost the daemon at {}: {why}; GPU calls fail from now on",
                self.socket.display()
            );
        }
        self.free.notify_all();
    }

    /// One request and its reply.
    fn call(&self, op: Opcode, payload: &[u8]) -> Result<Message, Errno> {
        let t = self.take()?;
        let h = Header {
            opcode: op as u16,
            reserved: 0,
            request_id: self.next_id.fetch_add(1, Ordering::Relaxed),
            payload_len: payload.len() as u32,
            result: 0,
        };
        let r = t.send(&h, payload, &[]).and_then(|_| {
            t.recv()?
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))
        });
        match r {
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
                self.lose(&e.to_string());
                Err(Errno::ENODEV)
            }
        }
    }

    /// Maps a userptr allocation's memfd over the process's pages at
    /// `va`, their contents copied first: only the pages the process has
    /// touched (present or swapped, per /proc/self/pagemap), since the rest
    /// read as zeros, which the fresh memfd already holds.
    fn adopt_userptr(&self, va: u64, size: u64, fd: RawFd) -> Result<(), Errno> {
        const PAGE: u64 = 4096;
        let size = size.next_multiple_of(PAGE);
        let pages = (size / PAGE) as usize;
        let touched = touched_pages(va, pages).unwrap_or_else(|| vec![true; pages]);
        let mut i = 0;
        while i < pages {
            if !touched[i] {
                i += 1;
                continue;
            }
            let run = touched[i..].iter().take_while(|&&t| t).count();
            let (off, len) = (i as u64 * PAGE, run as u64 * PAGE);
            // SAFETY: pwrite reads `len` bytes at `va + off`, inside the
            // range the caller registered with the GPU (mapped in this
            // process; if not, pwrite fails with EFAULT and nothing is
            // touched).
            let n = unsafe {
                libc::pwrite(
                    fd,
                    (va + off) as *const libc::c_void,
                    len as usize,
                    off as libc::off_t,
                )
            };
            if n != len as isize {
                return Err(Errno::EFAULT);
            }
            i += run;
        }
        // SAFETY: replaces the registered range with a shared mapping of
        // the same contents; the range is the caller's, page-aligned (the
        // driver checked), and keeps read/write access.
        let p = unsafe {
            libc::mmap(
                va as *mut libc::c_void,
                size as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd,
                0,
            )
        };
        if p as u64 != va {
            return Err(Errno::ENOMEM);
        }
        Ok(())
    }
}

/// For each page of `[va, va + pages * 4096)`, whether it is present or
/// swapped (bits 63 and 62 of its /proc/self/pagemap entry); None when the
/// pagemap cannot be read.
fn touched_pages(va: u64, pages: usize) -> Option<Vec<bool>> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open("/proc/self/pagemap").ok()?;
    let mut buf = vec![0u8; pages * 8];
    f.read_exact_at(&mut buf, (va / 4096) * 8).ok()?;
    // The file's descriptor is closed by File's drop through the C
    // library's close, which the preload lets through (it is not one of
    // its reserved descriptors).
    Some(
        buf.chunks_exact(8)
            .map(|e| u64::from_le_bytes(e.try_into().unwrap()) >> 62 != 0)
            .collect(),
    )
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
        let a = abi::Args::new(arg, 24);
        let (ptr, n) = (a.u64(0), a.u32(8) as usize);
        let mut list = vec![0u8; n.min(kfd::SIGNAL_EVENT_LIMIT as usize) * kfd::EVENT_DATA_SIZE];
        crate::user::read(ptr, &mut list)?;
        let gpu_id = crate::gpu_id_of(&self.config, 0);
        for e in list.chunks_exact_mut(kfd::EVENT_DATA_SIZE) {
            e[..32].fill(0);
            abi::put_u32(e, 12, 1); // imprecise
            abi::put_u32(e, 24, gpu_id);
            abi::put_u32(e, 28, 3); // ErrorType: GPU hang
        }
        crate::user::write(ptr, &list)?;
        abi::put_u32(arg, 20, kfd::WAIT_COMPLETE);
        Ok(0)
    }
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
        let req = Ioctl {
            device: wire_device(dev),
            request,
            arg: arg.to_vec(),
            buffers,
            fds: 0,
            notes: vec![],
        };
        let mut m = self.call(Opcode::Ioctl, &req.encode())?;
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
        for (addr, data) in &out.buffers {
            crate::user::write(*addr, data)?;
        }
        if abi::ioc_type(request) == abi::KFD_TYPE
            && abi::ioc_nr(request) == kfd::ALLOC_MEMORY_OF_GPU
            && let Some(fd) = m.fds.pop()
        {
            let a = abi::Args::new(arg, 40);
            let (va, size) = (a.u64(24), a.u64(8));
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
                let mut f = [0u8; 8];
                f.copy_from_slice(&a.u64(16).to_le_bytes());
                let free = (1u64 << 30)
                    | (8 << 16)
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
