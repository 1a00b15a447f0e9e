//! The simulated amdgpu kernel driver.
//!
//! [`SimulatedDriver`] answers what the ROCm user space asks the kernel:
//! KFD ioctls on `/dev/kfd` (versions, apertures, memory, queues, events,
//! clocks, ...), the amdgpu DRM ioctls libdrm issues on the render node, the
//! mmaps of both, and the KFD sysfs topology (generated into a private
//! directory, see [`sysfs`]). The preload library routes the app's calls
//! here; nothing in this crate knows about symbol interposition.
//!
//! Validation contract: every ioctl argument is checked here and a bad one
//! gets the errno the kernel driver returns; the GPU model below
//! (`rocjitsu_gpu::cp`) may assume the queues and memory it is handed are
//! valid (it still reports faults on bad GPU addresses).
//!
//! GPU VA = host VA: an allocation's GPU address is the address the thunk
//! maps it at in the process. Device memory is backed by memfds; the driver
//! keeps its own mapping of each for the GPU's accesses.

pub mod abi;
pub mod capi;
pub mod checkpoint;
pub mod cwsr;
pub mod daemon;
mod dmabuf;
mod driver;
mod drm;
mod events;
pub mod guest;
pub mod guest_launch;
pub mod launch;
mod memory;
mod passthrough;
pub mod remote;
pub mod svm;
pub mod sysfs;
pub mod user;

pub use driver::{CHECKPOINT_PAUSE, Caller, Device, DriverOptions, SimulatedDriver};
pub use guest::GuestKfd;
pub use memory::RestoreReport;
pub use passthrough::{KfdPassthrough, RealGpu, read_topology};
pub use remote::RemoteDriver;

use rocjitsu_config::GpuConfig;
use std::os::fd::RawFd;
use std::path::PathBuf;

/// An errno value, as a kernel driver returns it (positive).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Errno(pub i32);

impl Errno {
    pub const EPERM: Errno = Errno(libc::EPERM);
    pub const ENOENT: Errno = Errno(libc::ENOENT);
    pub const EINTR: Errno = Errno(libc::EINTR);
    pub const EAGAIN: Errno = Errno(libc::EAGAIN);
    pub const EFAULT: Errno = Errno(libc::EFAULT);
    pub const EBUSY: Errno = Errno(libc::EBUSY);
    pub const EINVAL: Errno = Errno(libc::EINVAL);
    pub const ENOMEM: Errno = Errno(libc::ENOMEM);
    pub const ENOSPC: Errno = Errno(libc::ENOSPC);
    pub const ENODEV: Errno = Errno(libc::ENODEV);
    pub const ENOTTY: Errno = Errno(libc::ENOTTY);
    pub const EOPNOTSUPP: Errno = Errno(libc::EOPNOTSUPP);
    pub const ETIME: Errno = Errno(libc::ETIME);
    pub const EIO: Errno = Errno(libc::EIO);
    pub const EADDRINUSE: Errno = Errno(libc::EADDRINUSE);
}

/// A device file the driver serves.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DeviceFile {
    /// `/dev/kfd`.
    Kfd,
    /// `/dev/dri/renderD<minor>` of GPU `gpu` (index in config order).
    Render { gpu: usize, minor: u32 },
}

impl DeviceFile {
    /// The character device number `fstat` reports (`st_rdev`).
    pub fn rdev(self) -> (u32, u32) {
        match self {
            // KFD's major is dynamic; 236 is what amdgpu gets on most systems.
            DeviceFile::Kfd => (236, 0),
            DeviceFile::Render { minor, .. } => (226, minor),
        }
    }
}

/// What an mmap of a device file maps: `len` bytes of `fd` at `offset`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MapSource {
    pub fd: RawFd,
    pub offset: u64,
    /// The caller owns `fd` and closes it once mapped (a descriptor
    /// received from the daemon); otherwise the driver keeps it.
    pub close_after: bool,
}

/// The kernel-driver interface as the preload library sees it. The
/// in-process [`SimulatedDriver`] implements it, and [`RemoteDriver`]
/// forwards to a daemon.
pub trait Driver: Send + Sync {
    /// The device file a path names, if it is one of ours.
    fn device_for_path(&self, path: &str) -> Option<DeviceFile>;
    /// Where a sysfs path we serve lives, if it is one of ours.
    fn sysfs_redirect(&self, path: &str) -> Option<PathBuf>;
    /// A device file was opened.
    fn open(&self, dev: DeviceFile) -> Result<(), Errno>;
    /// An ioctl: `arg` holds the caller's argument structure (`_IOC_SIZE`
    /// bytes); results are written back into it. Returns the ioctl's
    /// non-negative return value.
    fn ioctl(&self, dev: DeviceFile, request: u64, arg: &mut [u8]) -> Result<i32, Errno>;
    /// What an mmap of `len` bytes at `offset` of a device file maps.
    fn mmap(&self, dev: DeviceFile, offset: u64, len: u64) -> Result<MapSource, Errno>;
    /// The process closed its last `/dev/kfd` descriptor: a driver that
    /// serves it from elsewhere lets go of it (KFD releases the process
    /// then too). Returns whether the driver is done (a later open needs a
    /// new one).
    /// The process is about to unmap `[addr, addr + len)` of its own
    /// memory (the preload's munmap): memory the GPU reaches there in
    /// place must stop being reachable.
    fn host_unmapped(&self, _addr: u64, _len: u64) {}
    fn release(&self) -> bool {
        false
    }
}

pub use rocjitsu_rpc::dir::PrivateDir;

/// [`runtime_dir`], created (mode 0700) or checked: it must be a real
/// directory of the caller's that nobody else can write to
/// ([`PrivateDir::ensure`]); the error names the path and the fix.
pub fn private_runtime_dir() -> std::io::Result<PrivateDir> {
    PrivateDir::ensure(&runtime_dir(), rocjitsu_config::env::RUNTIME_DIR)
}

/// The `lsmod` bookworm's rocminfo runs to ask whether the amdgpu module is
/// loaded: one that says it is.
pub const LSMOD_SHIM: &str = "#!/bin/sh\n# rocjitsu: the emulated GPU's kernel module, as lsmod shows it\necho 'Module                  Size  Used by'\necho 'amdgpu              16384000  0'\n";

/// Writes `bin/lsmod` ([`LSMOD_SHIM`]) in the runtime directory `dir`
/// (checked by [`PrivateDir::ensure`]) unless it is there already, and
/// returns `bin`, which goes first on the program's PATH: `bin` must pass
/// the same checks, and the script is replaced atomically, never written
/// through a link.
pub fn write_lsmod_shim(dir: &PrivateDir) -> std::io::Result<PathBuf> {
    let bin = dir.subdir("bin", 0o700)?;
    if bin.read("lsmod").ok().as_deref() != Some(LSMOD_SHIM.as_bytes()) {
        bin.replace_file("lsmod", LSMOD_SHIM.as_bytes(), 0o755)?;
    }
    Ok(bin.path().to_path_buf())
}

/// Where per-user runtime files go (the sysfs tree, the launcher's lsmod
/// shim): `$ROCJITSU_RUNTIME_DIR`, else `/tmp/rocjitsu-<uid>`. Whoever
/// writes there goes through [`private_runtime_dir`] (or
/// [`PrivateDir::ensure`] for another directory).
pub fn runtime_dir() -> PathBuf {
    std::env::var_os(rocjitsu_config::env::RUNTIME_DIR)
        .map(PathBuf::from)
        // SAFETY: getuid has no preconditions.
        .unwrap_or_else(|| format!("/tmp/rocjitsu-{}", unsafe { libc::getuid() }).into())
}

/// The KFD `gpu_id` of GPU `index`: a nonzero 16-bit value derived from the
/// GPU's identity (the kernel hashes its PCI location and properties).
pub fn gpu_id_of(config: &GpuConfig, index: usize) -> u32 {
    let g = &config.gpus[index.min(config.gpus.len().saturating_sub(1))];
    let mut h: u32 = 0x811c_9dc5;
    for v in [
        u32::from(g.pci.device_id),
        g.pci.location_id,
        g.pci.domain,
        g.gfx_target_version,
        index as u32,
    ] {
        h = (h ^ v).wrapping_mul(0x0100_0193);
    }
    let id = (h ^ (h >> 16)) & 0xffff;
    if id == 0 { 1 } else { id }
}
