//! [`KfdPassthrough`]: the machine's real `/dev/kfd` and render nodes as a
//! [`Driver`], the next KFD down for DBT guest mode's `hardware` backend on
//! a machine with an AMD GPU. Every ioctl and mmap goes to the real device
//! unchanged, except `ACQUIRE_VM`, whose DRM descriptor is the real render
//! node's (the application holds our stand-in for it).
//!
//! The devices are reached with raw system calls, so the preload library's
//! own interposition of `open`/`ioctl` never sees them. This cannot be
//! tested on machines without an AMD GPU (the project's are such); the
//! topology reading is tested against a fake sysfs tree.

use crate::abi::{self, kfd};
use crate::guest::HostGpu;
use crate::{DeviceFile, Driver, Errno, MapSource};
use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One real GPU node: its KFD ids and what the guest layer checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RealGpu {
    pub gpu: HostGpu,
    pub gfx_target_version: u32,
    /// The node's index in the KFD topology.
    pub node: usize,
}

/// The GPU nodes of the KFD topology under `sys_root`
/// (`class/kfd/kfd/topology/nodes/N`), in node order.
pub fn read_topology(sys_root: &Path) -> Result<Vec<RealGpu>, String> {
    let nodes = sys_root.join("class/kfd/kfd/topology/nodes");
    let mut out = Vec::new();
    for node in 0.. {
        let dir = nodes.join(node.to_string());
        let Ok(id) = std::fs::read_to_string(dir.join("gpu_id")) else {
            break;
        };
        let gpu_id: u32 = id
            .trim()
            .parse()
            .map_err(|_| format!("{}: not a gpu_id: {id:?}", dir.join("gpu_id").display()))?;
        if gpu_id == 0 {
            continue;
        }
        let props = std::fs::read_to_string(dir.join("properties"))
            .map_err(|e| format!("{}: {e}", dir.join("properties").display()))?;
        let prop = |k: &str| -> u32 {
            props
                .lines()
                .find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix(' ')))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        out.push(RealGpu {
            gpu: HostGpu {
                gpu_id,
                minor: prop("drm_render_minor"),
            },
            gfx_target_version: prop("gfx_target_version"),
            node,
        });
    }
    if out.is_empty() {
        return Err(format!(
            "{} lists no GPU node (is the amdgpu driver loaded?)",
            nodes.display()
        ));
    }
    Ok(out)
}

/// The real KFD of this machine.
pub struct KfdPassthrough {
    kfd: RawFd,
    gpus: Vec<RealGpu>,
    sys_root: PathBuf,
    /// Real render nodes by minor, opened on first use.
    renders: Mutex<HashMap<u32, RawFd>>,
}

fn open_raw(path: &str) -> Result<RawFd, Errno> {
    let c = CString::new(path).map_err(|_| Errno::EINVAL)?;
    // SAFETY: a raw openat of a NUL-terminated path; no memory is shared.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::O_RDWR | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        Err(Errno(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        ))
    } else {
        Ok(fd as RawFd)
    }
}

impl KfdPassthrough {
    /// Opens `/dev/kfd` and reads the real topology under `/sys`.
    pub fn open() -> Result<KfdPassthrough, String> {
        Self::open_at(Path::new("/sys"), "/dev/kfd")
    }

    /// As [`KfdPassthrough::open`], with another sysfs root and device.
    pub fn open_at(sys_root: &Path, kfd_path: &str) -> Result<KfdPassthrough, String> {
        let gpus = read_topology(sys_root)?;
        let kfd = open_raw(kfd_path).map_err(|e| {
            format!(
                "cannot open {kfd_path} (errno {}): the hardware backend without a daemon needs a real AMD GPU",
                e.0
            )
        })?;
        Ok(KfdPassthrough {
            kfd,
            gpus,
            sys_root: sys_root.to_path_buf(),
            renders: Mutex::new(HashMap::new()),
        })
    }

    pub fn gpus(&self) -> &[RealGpu] {
        &self.gpus
    }

    pub fn sys_root(&self) -> &Path {
        &self.sys_root
    }

    fn render(&self, minor: u32) -> Result<RawFd, Errno> {
        let mut r = self.renders.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&fd) = r.get(&minor) {
            return Ok(fd);
        }
        let fd = open_raw(&format!("/dev/dri/renderD{minor}"))?;
        r.insert(minor, fd);
        Ok(fd)
    }

    fn raw_ioctl(fd: RawFd, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        // SAFETY: the kernel reads and writes `arg` (the caller's structure,
        // `_IOC_SIZE` bytes); pointers inside it are the application's own.
        let r = unsafe { libc::syscall(libc::SYS_ioctl, fd, request, arg.as_mut_ptr()) };
        if r < 0 {
            Err(Errno(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO),
            ))
        } else {
            Ok(r as i32)
        }
    }
}

impl Driver for KfdPassthrough {
    fn device_for_path(&self, path: &str) -> Option<DeviceFile> {
        if path == "/dev/kfd" {
            return Some(DeviceFile::Kfd);
        }
        let minor: u32 = path.strip_prefix("/dev/dri/renderD")?.parse().ok()?;
        let gpu = self.gpus.iter().position(|g| g.gpu.minor == minor)?;
        Some(DeviceFile::Render { gpu, minor })
    }

    fn sysfs_redirect(&self, _path: &str) -> Option<PathBuf> {
        // The real files are where they are.
        None
    }

    fn open(&self, dev: DeviceFile) -> Result<(), Errno> {
        if let DeviceFile::Render { minor, .. } = dev {
            self.render(minor)?;
        }
        Ok(())
    }

    fn ioctl(&self, dev: DeviceFile, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        match dev {
            DeviceFile::Kfd => {
                if abi::ioc_type(request) == abi::KFD_TYPE
                    && abi::ioc_nr(request) == kfd::ACQUIRE_VM
                    && arg.len() >= abi::kfd::acquire_vm::SIZE
                {
                    use abi::kfd::acquire_vm::{DRM_FD, GPU_ID};
                    // The real render node of that GPU.
                    let gpu_id = abi::get(arg, GPU_ID);
                    let minor = self
                        .gpus
                        .iter()
                        .find(|g| g.gpu.gpu_id == gpu_id)
                        .ok_or(Errno::EINVAL)?
                        .gpu
                        .minor;
                    let fd = self.render(minor)?;
                    let mut real = arg.to_vec();
                    abi::put(&mut real, DRM_FD, fd as u32);
                    return Self::raw_ioctl(self.kfd, request, &mut real);
                }
                Self::raw_ioctl(self.kfd, request, arg)
            }
            DeviceFile::Render { minor, .. } => Self::raw_ioctl(self.render(minor)?, request, arg),
        }
    }

    fn mmap(&self, dev: DeviceFile, offset: u64, _len: u64) -> Result<MapSource, Errno> {
        let fd = match dev {
            DeviceFile::Kfd => self.kfd,
            DeviceFile::Render { minor, .. } => self.render(minor)?,
        };
        Ok(MapSource {
            fd,
            offset,
            close_after: false,
        })
    }
}

impl Drop for KfdPassthrough {
    fn drop(&mut self) {
        // SAFETY: closing descriptors this driver opened and owns.
        unsafe {
            libc::close(self.kfd);
            for (_, fd) in self
                .renders
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .drain()
            {
                libc::close(fd);
            }
        }
    }
}
