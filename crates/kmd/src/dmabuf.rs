//! DMA-buf export and import (`EXPORT_DMABUF`, `GET_DMABUF_INFO`,
//! `IMPORT_DMABUF`), which ROCm 7's runtime uses for IPC: a process
//! exports its allocation as a dma-buf descriptor, hands it to another
//! process (a Unix socket, `pidfd_getfd`), which imports it. The runtime
//! also imports the descriptor into the render node through libdrm
//! (`amdgpu_bo_import`: `PRIME_FD_TO_HANDLE`, then `AMDGPU_GEM_METADATA`
//! and `AMDGPU_GEM_OP` on the GEM handle, `GEM_CLOSE`) to tag the buffer
//! with a token the importer checks: [`GemHandles`] and [`gem_ioctl`].
//!
//! The descriptor is the allocation's memfd (a duplicate of it), so the
//! importer and anyone who maps the descriptor reach the same bytes. The
//! device remembers every memfd it exported by inode; a descriptor it did
//! not export is not a dma-buf of this driver's, and is refused with
//! EINVAL as `dma_buf_get` refuses a file that is not a dma-buf (EBADF
//! when the number names no open file). An export stays importable while
//! some process still holds an allocation of the memory (the exporter's,
//! or an import); the kernel keeps a dma-buf's memory alive as long as a
//! descriptor of it is open, so importing a descriptor whose every
//! allocation has been freed is refused here where it would succeed there.

use crate::Errno;
use crate::abi::{Args, drm, kfd, put};
use crate::user::UserMemory;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex, Weak};

/// The exported memfds of a device, by inode.
#[derive(Default)]
pub struct Exports {
    by_inode: Mutex<HashMap<(u64, u64), Export>>,
}

/// What an exported allocation was.
#[derive(Clone)]
struct Export {
    memfd: Weak<OwnedFd>,
    size: u64,
    /// KFD allocation flags of the exporter's allocation.
    flags: u32,
    gpu: usize,
    /// The buffer's `AMDGPU_GEM_METADATA`: tiling, flags and up to 256
    /// bytes of driver data (kept with the buffer, seen by every importer).
    tiling_info: u64,
    metadata_flags: u64,
    metadata: Vec<u8>,
}

/// What a dma-buf descriptor holds.
pub struct Buffer {
    /// The memory, to import (the exporter's memfd).
    pub memfd: Arc<OwnedFd>,
    pub size: u64,
    pub flags: u32,
    /// The GPU whose memory it is.
    pub gpu: usize,
}

/// The identity of an open file (`st_dev`, `st_ino`); EBADF when `fd` is
/// not open.
fn inode(fd: &impl AsRawFd) -> Result<(u64, u64), Errno> {
    // SAFETY: an all-zero stat is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes into the stat buffer we own.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(Errno(libc::EBADF));
    }
    Ok((st.st_dev, st.st_ino))
}

impl Exports {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(u64, u64), Export>> {
        self.by_inode.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `memfd` (an allocation of `size` bytes, `flags`, on `gpu`)
    /// as exported and returns a descriptor of it for the caller.
    pub fn export(
        &self,
        memfd: &Arc<OwnedFd>,
        size: u64,
        flags: u32,
        gpu: usize,
    ) -> Result<OwnedFd, Errno> {
        let key = inode(memfd.as_ref())?;
        let mut t = self.lock();
        t.retain(|_, e| e.memfd.strong_count() > 0);
        // A buffer exported again keeps its metadata.
        let e = t.entry(key).or_insert_with(|| Export {
            memfd: Arc::downgrade(memfd),
            size,
            flags,
            gpu,
            tiling_info: 0,
            metadata_flags: 0,
            metadata: Vec::new(),
        });
        e.memfd = Arc::downgrade(memfd);
        memfd
            .try_clone()
            .map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EMFILE)))
    }

    /// What the descriptor `fd` holds, if this device exported it.
    pub fn lookup(&self, fd: &OwnedFd) -> Result<Buffer, Errno> {
        self.lookup_inode(inode(fd)?)
    }

    fn lookup_inode(&self, key: (u64, u64)) -> Result<Buffer, Errno> {
        let e = self.lock().get(&key).cloned().ok_or(Errno::EINVAL)?;
        let memfd = e.memfd.upgrade().ok_or(Errno::EINVAL)?;
        Ok(Buffer {
            memfd,
            size: e.size,
            flags: e.flags,
            gpu: e.gpu,
        })
    }
}

/// The GEM handles of one process's render nodes: a buffer imported with
/// `PRIME_FD_TO_HANDLE` (the inode of its memfd), by (GPU, handle).
#[derive(Default)]
pub struct GemHandles {
    by_handle: Mutex<HashMap<(usize, u32), (u64, u64)>>,
}

impl GemHandles {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(usize, u32), (u64, u64)>> {
        self.by_handle.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, gpu: usize, handle: u32) -> Result<(u64, u64), Errno> {
        // An unknown handle: `drm_gem_object_lookup` fails, ENOENT.
        self.lock()
            .get(&(gpu, handle))
            .copied()
            .ok_or(Errno::ENOENT)
    }
}

/// The GEM ioctls of a render node on GPU `gpu`, as amdgpu answers them
/// for buffers imported from dma-bufs; `None` for other requests.
/// - `PRIME_FD_TO_HANDLE` {handle out, flags, fd}: the buffer's handle in
///   this file, the same one each time it is imported (handles count from
///   1); EBADF for a number naming no file, EINVAL for a file that is not
///   one of this device's dma-bufs.
/// - `GEM_CLOSE` {handle}: EINVAL for a handle not open.
/// - `AMDGPU_GEM_METADATA` {handle, op, data}: SET stores tiling, flags
///   and `data_size_bytes` (at most 256, else EINVAL) bytes of data with
///   the buffer (size 0 drops them); GET returns them. ENOENT for an
///   unknown handle, EINVAL for another op.
/// - `AMDGPU_GEM_OP` {handle, op, value}: GET_GEM_CREATE_INFO writes the
///   buffer's `drm_amdgpu_gem_create_in` at `value` (size, page alignment,
///   domain, the creation flags KFD gives its buffers); other ops EINVAL.
pub fn gem_ioctl(
    exports: &Exports,
    handles: &GemHandles,
    gpu: usize,
    nr: u8,
    a: &mut Args,
    mem: &dyn UserMemory,
) -> Option<Result<i32, Errno>> {
    let r = match nr {
        drm::PRIME_FD_TO_HANDLE => (|| {
            use drm::prime_handle as p;
            let key = inode(&mem.file(a.get(p::FD))?)?;
            exports.lookup_inode(key)?;
            let mut h = handles.lock();
            let handle = match h.iter().find(|(k, v)| k.0 == gpu && **v == key) {
                Some((k, _)) => k.1,
                None => {
                    let n = (1..)
                        .find(|n| !h.contains_key(&(gpu, *n)))
                        .ok_or(Errno::ENOSPC)?;
                    h.insert((gpu, n), key);
                    n
                }
            };
            a.set(p::HANDLE, handle);
            Ok(0)
        })(),
        drm::GEM_CLOSE => match handles.lock().remove(&(gpu, a.get(drm::gem_close::HANDLE))) {
            Some(_) => Ok(0),
            None => Err(Errno::EINVAL),
        },
        drm::AMDGPU_GEM_METADATA => (|| {
            use drm::gem_metadata as m;
            let key = handles.get(gpu, a.get(m::HANDLE))?;
            let mut t = exports.lock();
            let e = t.get_mut(&key).ok_or(Errno::ENOENT)?;
            match a.get(m::OP) {
                drm::GEM_METADATA_OP_SET => {
                    let n = a.get(m::DATA_SIZE_BYTES) as usize;
                    if n > 256 {
                        return Err(Errno::EINVAL);
                    }
                    e.tiling_info = a.get(m::TILING_INFO);
                    if n == 0 {
                        e.metadata.clear();
                    } else {
                        e.metadata = a.get(m::DATA)[..n].to_vec();
                        e.metadata_flags = a.get(m::DATA_FLAGS);
                    }
                    Ok(0)
                }
                drm::GEM_METADATA_OP_GET => {
                    let mut data = [0u8; 256];
                    data[..e.metadata.len()].copy_from_slice(&e.metadata);
                    a.set(m::DATA, data);
                    a.set(m::DATA_SIZE_BYTES, e.metadata.len() as u32);
                    a.set(m::DATA_FLAGS, e.metadata_flags);
                    a.set(m::TILING_INFO, e.tiling_info);
                    Ok(0)
                }
                _ => Err(Errno::EINVAL),
            }
        })(),
        drm::AMDGPU_GEM_OP => (|| {
            use drm::gem_op as o;
            let b = exports.lookup_inode(handles.get(gpu, a.get(o::HANDLE))?)?;
            if a.get(o::OP) != drm::GEM_OP_GET_GEM_CREATE_INFO {
                return Err(Errno::EINVAL);
            }
            use drm::gem_create_in as c;
            let (domain, flags) = if b.flags & kfd::ALLOC_VRAM != 0 {
                let access = if b.flags & kfd::ALLOC_PUBLIC != 0 {
                    drm::GEM_CREATE_CPU_ACCESS_REQUIRED
                } else {
                    drm::GEM_CREATE_NO_CPU_ACCESS
                };
                (
                    drm::GEM_DOMAIN_VRAM,
                    access | drm::GEM_CREATE_VRAM_WIPE_ON_RELEASE,
                )
            } else {
                (drm::GEM_DOMAIN_GTT, 0)
            };
            let mut info = [0u8; c::SIZE];
            put(&mut info, c::BO_SIZE, b.size);
            put(&mut info, c::ALIGNMENT, 4096);
            put(&mut info, c::DOMAINS, domain);
            put(&mut info, c::DOMAIN_FLAGS, flags);
            mem.write(a.get(o::VALUE), &info)?;
            Ok(0)
        })(),
        _ => return None,
    };
    Some(r)
}

/// The flags `GET_DMABUF_INFO` reports for a buffer allocated with
/// `flags` (`amdgpu_amdkfd_get_dmabuf_info`): its domain, VRAM or GTT,
/// and PUBLIC when the CPU may access it.
pub fn info_flags(flags: u32) -> u32 {
    let domain = if flags & kfd::ALLOC_VRAM != 0 {
        kfd::ALLOC_VRAM
    } else {
        kfd::ALLOC_GTT
    };
    domain | (flags & kfd::ALLOC_PUBLIC)
}

/// The flags of an imported allocation (`import_dmabuf_fd`): the
/// buffer's domain, writable and executable.
pub fn import_flags(flags: u32) -> u32 {
    info_flags(flags) & !kfd::ALLOC_PUBLIC | kfd::ALLOC_WRITABLE | kfd::ALLOC_EXECUTABLE
}

/// `GET_DMABUF_INFO` {size out, metadata_ptr, metadata_size in/out,
/// gpu_id out, flags out, dmabuf_fd}: no buffer carries metadata (nothing
/// sets it), so the size is 0 and nothing is copied.
pub fn get_info(a: &mut Args, buffer: &Buffer, gpu_id: u32) {
    use kfd::get_dmabuf_info as x;
    a.set(x::BYTES, buffer.size);
    a.set(x::METADATA_SIZE, 0);
    a.set(x::GPU_ID, gpu_id);
    a.set(x::FLAGS, info_flags(buffer.flags));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memfd() -> Arc<OwnedFd> {
        Arc::new(crate::memory::memfd("rocjitsu-test-dmabuf", 4096).unwrap())
    }

    #[test]
    fn an_export_is_found_by_any_descriptor_of_it() {
        let t = Exports::default();
        let m = memfd();
        let fd = t
            .export(&m, 4096, kfd::ALLOC_VRAM | kfd::ALLOC_PUBLIC, 1)
            .unwrap();
        assert_ne!(fd.as_raw_fd(), m.as_raw_fd());
        let b = t.lookup(&fd.try_clone().unwrap()).unwrap();
        assert_eq!((b.size, b.gpu), (4096, 1));
        assert_eq!(inode(b.memfd.as_ref()), inode(m.as_ref()));
        assert_eq!(info_flags(b.flags), kfd::ALLOC_VRAM | kfd::ALLOC_PUBLIC);
        assert_eq!(
            import_flags(b.flags),
            kfd::ALLOC_VRAM | kfd::ALLOC_WRITABLE | kfd::ALLOC_EXECUTABLE
        );
    }

    #[test]
    fn other_files_are_not_dmabufs() {
        let t = Exports::default();
        // A memfd nobody exported, and a plain file.
        let other = memfd();
        assert_eq!(
            t.lookup(&other.try_clone().unwrap()).err(),
            Some(Errno::EINVAL)
        );
        let f: OwnedFd = std::fs::File::open("/proc/self/status").unwrap().into();
        assert_eq!(t.lookup(&f).err(), Some(Errno::EINVAL));
    }

    #[test]
    fn an_export_whose_allocations_are_gone_is_refused() {
        let t = Exports::default();
        let m = memfd();
        let fd = t.export(&m, 4096, kfd::ALLOC_GTT, 0).unwrap();
        drop(m);
        assert_eq!(t.lookup(&fd).err(), Some(Errno::EINVAL));
    }
}
