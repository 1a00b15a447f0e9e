//! Device memory: KFD allocations (VRAM, GTT, userptr, doorbell, MMIO
//! remap), their mmap offsets, and their registration in the GPU's VM.
//!
//! VRAM and GTT buffers are memfds. The thunk maps them into the process at
//! their GPU address through an mmap of the render node; the driver keeps a
//! second mapping of its own so the GPU can reach buffers the process never
//! maps (private VRAM). Userptr buffers are the process's own pages when
//! the driver lives in the process; a driver serving another process (the
//! daemon) backs them with a memfd too, which that process maps over its
//! pages.

use crate::Errno;
use crate::abi::kfd;
use rocjitsu_gpu::mem::{Perms, Vm};
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

const PAGE: u64 = 4096;

/// One allocation.
pub struct Allocation {
    pub gpu: usize,
    pub va: u64,
    pub size: u64,
    pub flags: u32,
    memfd: Option<std::sync::Arc<OwnedFd>>,
    /// The driver's own mapping (VRAM/GTT) or the user pages (userptr).
    host: u64,
    owns_mapping: bool,
    /// Start of the buffer in the render node's mmap offset space.
    pub offset: u64,
    pub mapped: bool,
    /// The Vm region of the GPU mapping, if there is one.
    region: Option<u64>,
    /// What the allocation was charged to (given back when it goes).
    charge: Charge,
}

/// What an allocation counts against: VRAM (the device's pool and the
/// client's [`Quota`]), GTT (the client's quota: GTT buffers and the
/// userptr memfds a daemon creates), or nothing (doorbells, MMIO, a
/// process's own userptr pages, IPC imports: counted by the exporter).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Charge {
    None,
    Vram,
    Gtt,
}

impl Allocation {
    /// The memfd backing the buffer (VRAM, GTT, memfd-backed userptr).
    pub fn memfd(&self) -> Option<RawFd> {
        self.memfd.as_ref().map(|f| f.as_raw_fd())
    }

    /// The memfd itself, shared (IPC export).
    pub fn shared_memfd(&self) -> Option<std::sync::Arc<OwnedFd>> {
        self.memfd.clone()
    }
}

/// VRAM per GPU, shared by every process on the device.
pub struct VramPool {
    size: Vec<u64>,
    used: Vec<AtomicU64>,
}

impl VramPool {
    pub fn new(size: Vec<u64>) -> VramPool {
        VramPool {
            used: size.iter().map(|_| AtomicU64::new(0)).collect(),
            size,
        }
    }

    pub fn used(&self, gpu: usize) -> u64 {
        self.used.get(gpu).map_or(0, |u| u.load(Ordering::Relaxed))
    }

    pub fn available(&self, gpu: usize) -> u64 {
        self.size
            .get(gpu)
            .copied()
            .unwrap_or(0)
            .saturating_sub(self.used(gpu))
    }

    /// Takes `bytes` of GPU `gpu`'s VRAM, or fails with ENOMEM.
    fn take(&self, gpu: usize, bytes: u64) -> Result<(), Errno> {
        let (Some(used), Some(&size)) = (self.used.get(gpu), self.size.get(gpu)) else {
            return Err(Errno::EINVAL);
        };
        take_within(used, size, bytes)
    }

    fn give(&self, gpu: usize, bytes: u64) {
        if let Some(u) = self.used.get(gpu) {
            give_back(u, bytes);
        }
    }
}

/// Adds `bytes` to `used` unless the sum would pass `limit` (or overflow):
/// ENOMEM then, and `used` is unchanged.
fn take_within(used: &AtomicU64, limit: u64, bytes: u64) -> Result<(), Errno> {
    used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
        u.checked_add(bytes).filter(|&n| n <= limit)
    })
    .map(|_| ())
    .map_err(|_| Errno::ENOMEM)
}

fn give_back(used: &AtomicU64, bytes: u64) {
    let _ = used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |x| {
        Some(x.saturating_sub(bytes))
    });
}

/// What one client process of a daemon may hold, and holds: VRAM per GPU
/// and GTT (GTT buffers and the userptr memfds the daemon creates for it).
/// Shared by every driver of the process (see [`crate::daemon`]); an
/// allocation that would take the process past a limit fails with ENOMEM,
/// whatever the device has left.
pub struct Quota {
    vram_limit: Vec<u64>,
    vram: Vec<AtomicU64>,
    gtt_limit: u64,
    gtt: AtomicU64,
}

impl Quota {
    pub fn new(vram_limit: Vec<u64>, gtt_limit: u64) -> Quota {
        Quota {
            vram: vram_limit.iter().map(|_| AtomicU64::new(0)).collect(),
            vram_limit,
            gtt_limit,
            gtt: AtomicU64::new(0),
        }
    }

    /// VRAM the process holds on GPU `gpu` (bytes).
    pub fn vram_used(&self, gpu: usize) -> u64 {
        self.vram.get(gpu).map_or(0, |u| u.load(Ordering::Relaxed))
    }

    /// VRAM the process may still take on GPU `gpu`.
    fn vram_left(&self, gpu: usize) -> u64 {
        self.vram_limit
            .get(gpu)
            .copied()
            .unwrap_or(0)
            .saturating_sub(self.vram_used(gpu))
    }

    fn take(&self, charge: Charge, gpu: usize, bytes: u64) -> Result<(), Errno> {
        match charge {
            Charge::None => Ok(()),
            Charge::Vram => {
                let (Some(used), Some(&limit)) = (self.vram.get(gpu), self.vram_limit.get(gpu))
                else {
                    return Err(Errno::EINVAL);
                };
                take_within(used, limit, bytes)
            }
            Charge::Gtt => take_within(&self.gtt, self.gtt_limit, bytes),
        }
    }

    fn give(&self, charge: Charge, gpu: usize, bytes: u64) {
        match charge {
            Charge::None => {}
            Charge::Vram => {
                if let Some(u) = self.vram.get(gpu) {
                    give_back(u, bytes);
                }
            }
            Charge::Gtt => give_back(&self.gtt, bytes),
        }
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if self.owns_mapping && self.host != 0 {
            // SAFETY: `host..host+size` is the mapping this allocation made
            // and nothing else refers to it once the allocation is gone
            // (the VM region was removed before the drop).
            unsafe { libc::munmap(self.host as *mut libc::c_void, self.size as usize) };
        }
    }
}

/// A memfd of `size` bytes whose size is sealed: a daemon's client that
/// receives it (to map VRAM, GTT, a userptr range) cannot shrink it under
/// the GPU, which would turn the daemon's next access into a SIGBUS.
pub(crate) fn memfd(name: &str, size: u64) -> Result<OwnedFd, Errno> {
    let cname = std::ffi::CString::new(name).map_err(|_| Errno::EINVAL)?;
    // SAFETY: plain syscall wrappers on a NUL-terminated name.
    let fd =
        unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(Errno::ENOMEM);
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: ftruncate on our own fd.
    if unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
        return Err(Errno::ENOMEM);
    }
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on our own fd.
    if unsafe { libc::fcntl(fd, libc::F_ADD_SEALS, seals) } != 0 {
        return Err(Errno::ENOMEM);
    }
    Ok(owned)
}

fn map_shared(fd: RawFd, size: u64) -> Result<u64, Errno> {
    map_shared_at(fd, size, 0)
}

pub(crate) fn map_shared_at(fd: RawFd, size: u64, offset: u64) -> Result<u64, Errno> {
    // SAFETY: a fresh shared mapping of our own memfd at an address the
    // kernel chooses; it replaces nothing.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            offset as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        Err(Errno::ENOMEM)
    } else {
        Ok(p as u64)
    }
}

/// All allocations of the process.
pub struct Memory {
    allocs: BTreeMap<u32, Allocation>,
    /// Render-node mmap offset -> allocation id.
    by_offset: BTreeMap<u64, u32>,
    next_id: u32,
    next_offset: u64,
    vram: std::sync::Arc<VramPool>,
    /// The process's limits (daemon clients; None: the device's alone).
    quota: Option<std::sync::Arc<Quota>>,
    /// Userptr buffers are memfds (the process is elsewhere).
    userptr_memfd: bool,
    doorbells: Vec<Option<OwnedFd>>,
    doorbell_bytes: Vec<u64>,
    mmio: Vec<Option<OwnedFd>>,
}

/// Argument of an allocation request.
pub struct AllocRequest {
    pub gpu: usize,
    pub gpu_id: u32,
    pub va: u64,
    pub size: u64,
    pub mmap_offset: u64,
    pub flags: u32,
    /// Userptr only, daemon only: the memory to use instead of a fresh
    /// memfd (one the client already maps over the range; checked by
    /// [`check_userptr_backing`]), and the range's offset in it.
    pub backing: Option<(OwnedFd, u64)>,
}

/// Whether `fd` may back a userptr allocation of `size` bytes at `offset`:
/// a memfd whose size is sealed (so the client cannot shrink it under the
/// GPU) and which holds the whole range.
pub fn check_userptr_backing(fd: RawFd, offset: u64, size: u64) -> Result<(), Errno> {
    if offset % PAGE != 0 {
        return Err(Errno::EINVAL);
    }
    // SAFETY: fcntl on a descriptor we own.
    let seals = unsafe { libc::fcntl(fd, libc::F_GET_SEALS) };
    if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
        return Err(Errno::EINVAL);
    }
    // SAFETY: fstat into a local.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(Errno::EINVAL);
    }
    let end = size
        .checked_next_multiple_of(PAGE)
        .and_then(|s| offset.checked_add(s))
        .ok_or(Errno::EINVAL)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || (st.st_size as u64) < end {
        return Err(Errno::EINVAL);
    }
    Ok(())
}

impl Memory {
    pub fn new(
        vram: std::sync::Arc<VramPool>,
        doorbell_bytes: Vec<u64>,
        userptr_memfd: bool,
    ) -> Memory {
        let n = doorbell_bytes.len();
        Memory {
            allocs: BTreeMap::new(),
            by_offset: BTreeMap::new(),
            next_id: 1,
            next_offset: 1 << 32,
            vram,
            quota: None,
            userptr_memfd,
            doorbells: (0..n).map(|_| None).collect(),
            doorbell_bytes,
            mmio: (0..n).map(|_| None).collect(),
        }
    }

    /// Limits what this process may hold beyond what the device has
    /// ([`Quota`]; a daemon's client).
    pub fn set_quota(&mut self, quota: std::sync::Arc<Quota>) {
        self.quota = Some(quota);
    }

    /// VRAM this process can still allocate on GPU `gpu`: what the device
    /// has left, within the process's quota.
    pub fn available(&self, gpu: usize) -> u64 {
        let device = self.vram.available(gpu);
        match &self.quota {
            Some(q) => device.min(q.vram_left(gpu)),
            None => device,
        }
    }

    /// Charges `bytes` of `charge` to the device's pool and the quota.
    fn take(&self, charge: Charge, gpu: usize, bytes: u64) -> Result<(), Errno> {
        if let Some(q) = &self.quota {
            q.take(charge, gpu, bytes)?;
        }
        if charge == Charge::Vram
            && let Err(e) = self.vram.take(gpu, bytes)
        {
            if let Some(q) = &self.quota {
                q.give(charge, gpu, bytes);
            }
            return Err(e);
        }
        Ok(())
    }

    fn give(&self, charge: Charge, gpu: usize, bytes: u64) {
        if charge == Charge::Vram {
            self.vram.give(gpu, bytes);
        }
        if let Some(q) = &self.quota {
            q.give(charge, gpu, bytes);
        }
    }

    /// The next render-node mmap offset after a buffer of `size` bytes at
    /// the current one (a guard page between buffers); ENOMEM once the
    /// offset space (which mmap takes as a signed 64-bit offset) is spent.
    fn offset_after(&self, size: u64) -> Result<u64, Errno> {
        self.next_offset
            .checked_add(size)
            .and_then(|n| n.checked_add(PAGE))
            .filter(|&n| n <= i64::MAX as u64)
            .ok_or(Errno::ENOMEM)
    }

    /// `ALLOC_MEMORY_OF_GPU`: returns (allocation id, mmap offset).
    ///
    /// Every size and address is the client's: the page-rounded size and
    /// `va + size` must not overflow (EINVAL), and a buffer goes beyond
    /// neither the device's VRAM nor the process's [`Quota`] (ENOMEM).
    pub fn alloc(&mut self, r: &AllocRequest) -> Result<(u32, u64), Errno> {
        if r.size == 0 || r.va % PAGE != 0 {
            return Err(Errno::EINVAL);
        }
        let size = r.size.checked_next_multiple_of(PAGE).ok_or(Errno::EINVAL)?;
        if r.va.checked_add(size).is_none() || size > i64::MAX as u64 {
            return Err(Errno::EINVAL);
        }
        let kinds = r.flags
            & (kfd::ALLOC_VRAM
                | kfd::ALLOC_GTT
                | kfd::ALLOC_USERPTR
                | kfd::ALLOC_DOORBELL
                | kfd::ALLOC_MMIO_REMAP);
        if kinds.count_ones() != 1 {
            return Err(Errno::EINVAL);
        }
        let id = self.next_id;
        let next_id = id.checked_add(1).ok_or(Errno::ENOMEM)?;
        let (memfd, host, owns, offset, charge) = match kinds {
            kfd::ALLOC_VRAM | kfd::ALLOC_GTT => {
                let charge = if kinds == kfd::ALLOC_VRAM {
                    Charge::Vram
                } else {
                    Charge::Gtt
                };
                let next_offset = self.offset_after(size)?;
                self.take(charge, r.gpu, size)?;
                let backing = memfd(&format!("rocjitsu-bo-{id}"), size)
                    .and_then(|fd| Ok((map_shared(fd.as_raw_fd(), size)?, fd)));
                let (host, fd) = match backing {
                    Ok(b) => b,
                    Err(e) => {
                        self.give(charge, r.gpu, size);
                        return Err(e);
                    }
                };
                let offset = self.next_offset;
                self.next_offset = next_offset;
                (Some(std::sync::Arc::new(fd)), host, true, offset, charge)
            }
            kfd::ALLOC_USERPTR if self.userptr_memfd => {
                if r.mmap_offset % PAGE != 0 || r.mmap_offset == 0 {
                    return Err(Errno::EINVAL);
                }
                let (fd, host, charge) = match &r.backing {
                    // Memory the client already has (a range registered
                    // before, charged then).
                    Some((fd, off)) => {
                        check_userptr_backing(fd.as_raw_fd(), *off, size)?;
                        let fd = fd.try_clone().map_err(|_| Errno::ENOMEM)?;
                        let host = map_shared_at(fd.as_raw_fd(), size, *off)?;
                        (fd, host, Charge::None)
                    }
                    None => {
                        self.take(Charge::Gtt, r.gpu, size)?;
                        let backing = memfd(&format!("rocjitsu-userptr-{id}"), size)
                            .and_then(|fd| Ok((map_shared(fd.as_raw_fd(), size)?, fd)));
                        match backing {
                            Ok((host, fd)) => (fd, host, Charge::Gtt),
                            Err(e) => {
                                self.give(Charge::Gtt, r.gpu, size);
                                return Err(e);
                            }
                        }
                    }
                };
                (
                    Some(std::sync::Arc::new(fd)),
                    host,
                    true,
                    r.mmap_offset,
                    charge,
                )
            }
            kfd::ALLOC_USERPTR => (None, r.mmap_offset, false, r.mmap_offset, Charge::None),
            kfd::ALLOC_DOORBELL => (
                None,
                0,
                false,
                (kfd::MMAP_TYPE_DOORBELL << kfd::MMAP_TYPE_SHIFT)
                    | (u64::from(r.gpu_id) << kfd::MMAP_GPU_ID_SHIFT),
                Charge::None,
            ),
            _ => (
                None,
                0,
                false,
                (kfd::MMAP_TYPE_MMIO << kfd::MMAP_TYPE_SHIFT)
                    | (u64::from(r.gpu_id) << kfd::MMAP_GPU_ID_SHIFT),
                Charge::None,
            ),
        };
        if kinds & (kfd::ALLOC_VRAM | kfd::ALLOC_GTT) != 0 {
            self.by_offset.insert(offset, id);
        }
        self.next_id = next_id;
        self.allocs.insert(
            id,
            Allocation {
                gpu: r.gpu,
                va: r.va,
                size,
                flags: r.flags,
                memfd,
                host,
                owns_mapping: owns,
                offset,
                mapped: false,
                region: None,
                charge,
            },
        );
        Ok((id, offset))
    }

    pub fn get(&self, id: u32) -> Option<&Allocation> {
        self.allocs.get(&id)
    }

    /// IPC import: a buffer of another process (its memfd) becomes an
    /// allocation of this one at `va`, mapped through the render node like
    /// VRAM. Returns (allocation id, mmap offset). Its memory is counted
    /// once, by the exporter.
    pub fn import(
        &mut self,
        gpu: usize,
        va: u64,
        size: u64,
        flags: u32,
        fd: std::sync::Arc<OwnedFd>,
    ) -> Result<(u32, u64), Errno> {
        if va % PAGE != 0 || size == 0 {
            return Err(Errno::EINVAL);
        }
        let size = size.checked_next_multiple_of(PAGE).ok_or(Errno::EINVAL)?;
        if va.checked_add(size).is_none() {
            return Err(Errno::EINVAL);
        }
        let id = self.next_id;
        let next_id = id.checked_add(1).ok_or(Errno::ENOMEM)?;
        let next_offset = self.offset_after(size)?;
        let host = map_shared(fd.as_raw_fd(), size)?;
        self.next_id = next_id;
        let offset = self.next_offset;
        self.next_offset = next_offset;
        self.by_offset.insert(offset, id);
        self.allocs.insert(
            id,
            Allocation {
                gpu,
                va,
                size,
                // Not VRAM of this process's: freeing it returns nothing.
                flags: (flags & !kfd::ALLOC_VRAM) | kfd::ALLOC_GTT,
                memfd: Some(fd),
                host,
                owns_mapping: true,
                offset,
                mapped: false,
                region: None,
                charge: Charge::None,
            },
        );
        Ok((id, offset))
    }

    /// `FREE_MEMORY_OF_GPU`.
    pub fn free(&mut self, id: u32, vm: &Vm) -> Result<(), Errno> {
        let a = self.allocs.remove(&id).ok_or(Errno::EINVAL)?;
        if let Some(r) = a.region {
            vm.unmap_region(r);
        }
        self.give(a.charge, a.gpu, a.size);
        if a.flags & (kfd::ALLOC_VRAM | kfd::ALLOC_GTT) != 0 {
            self.by_offset.remove(&a.offset);
        }
        Ok(())
    }

    /// `MAP_MEMORY_TO_GPU`: makes the buffer reachable by the GPU at its VA.
    pub fn map(&mut self, id: u32, vm: &Vm) -> Result<(), Errno> {
        let a = self.allocs.get_mut(&id).ok_or(Errno::EINVAL)?;
        if a.mapped || a.host == 0 || a.va == 0 {
            a.mapped = a.mapped || a.host != 0;
            return Ok(());
        }
        let perms = Perms {
            read: true,
            write: a.flags & kfd::ALLOC_WRITABLE != 0 || a.flags & kfd::ALLOC_USERPTR != 0,
            exec: true,
        };
        // SAFETY: `host..host+size` is either our own mapping of the
        // buffer's memfd (kept until the allocation is freed, which unmaps
        // the VM region first) or the user pages the process registered
        // (which the process keeps until it frees the allocation, as the
        // KFD ABI requires).
        a.region = Some(unsafe { vm.map_host(a.va, a.size, a.host as *mut u8, perms) });
        a.mapped = true;
        Ok(())
    }

    /// `UNMAP_MEMORY_FROM_GPU`.
    pub fn unmap(&mut self, id: u32, vm: &Vm) -> Result<(), Errno> {
        let a = self.allocs.get_mut(&id).ok_or(Errno::EINVAL)?;
        if let Some(r) = a.region.take() {
            vm.unmap_region(r);
        }
        a.mapped = false;
        Ok(())
    }

    /// What an mmap of the render node at `offset` maps: `len` bytes
    /// from there must lie inside one buffer (EINVAL otherwise, an
    /// `offset + len` that overflows included).
    pub fn render_map(&self, offset: u64, len: u64) -> Result<(RawFd, u64), Errno> {
        let (&start, &id) = self
            .by_offset
            .range(..=offset)
            .next_back()
            .ok_or(Errno::EINVAL)?;
        let a = self.allocs.get(&id).ok_or(Errno::EINVAL)?;
        let within = offset - start;
        if within.checked_add(len).is_none_or(|end| end > a.size) {
            return Err(Errno::EINVAL);
        }
        let fd = a.memfd.as_ref().ok_or(Errno::EINVAL)?;
        Ok((fd.as_raw_fd(), within))
    }

    /// What an mmap of /dev/kfd at a doorbell or MMIO offset maps.
    pub fn kfd_map(&mut self, gpu: usize, kind: u64, len: u64) -> Result<(RawFd, u64), Errno> {
        let (slot, size, name) = match kind {
            kfd::MMAP_TYPE_DOORBELL => (
                self.doorbells.get_mut(gpu).ok_or(Errno::EINVAL)?,
                self.doorbell_bytes.get(gpu).copied().unwrap_or(PAGE * 2),
                "rocjitsu-doorbells",
            ),
            kfd::MMAP_TYPE_MMIO => (
                self.mmio.get_mut(gpu).ok_or(Errno::EINVAL)?,
                PAGE,
                "rocjitsu-mmio",
            ),
            _ => return Err(Errno::EINVAL),
        };
        if len > size.next_multiple_of(PAGE) {
            return Err(Errno::EINVAL);
        }
        if slot.is_none() {
            *slot = Some(memfd(name, size.next_multiple_of(PAGE))?);
        }
        let fd = slot.as_ref().ok_or(Errno::ENOMEM)?;
        Ok((fd.as_raw_fd(), 0))
    }

    /// The host address of the driver's view of GPU address `va`, if a
    /// VRAM/GTT allocation covers it (the event page, signal slots).
    pub fn host_of(&self, va: u64) -> Option<u64> {
        self.allocs
            .values()
            .find(|a| a.host != 0 && va.checked_sub(a.va).is_some_and(|d| d < a.size))
            .map(|a| a.host + (va - a.va))
    }

    /// Whether an allocation's GPU addresses overlap `[start, end)`.
    pub fn overlaps(&self, start: u64, end: u64) -> bool {
        self.allocs
            .values()
            .any(|a| a.va != 0 && a.va < end && start < a.va.saturating_add(a.size))
    }

    pub fn count(&self) -> usize {
        self.allocs.len()
    }
}

/// What a restore found of one allocation's bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Allocations restored.
    pub allocations: usize,
    /// Of those, memory the process still had (its memfd adopted, or its
    /// own pages in local mode) rather than filled from the file.
    pub adopted: usize,
    /// Per adopted allocation whose bytes are not the checkpoint's: its
    /// id, address and how many bytes differ (what the process wrote
    /// after the checkpoint; the process's bytes are kept).
    pub differing: Vec<(u32, u64, u64)>,
}

/// The bytes of `len` at host address `host` (the driver's own mapping of
/// an allocation, or the process's pages in local mode).
///
/// # Safety
/// `host..host + len` must be mapped and readable for the call.
unsafe fn host_bytes<'a>(host: u64, len: u64) -> &'a [u8] {
    // SAFETY: the caller's promise.
    unsafe { std::slice::from_raw_parts(host as *const u8, len as usize) }
}

impl Memory {
    /// The allocations' state, their bytes appended to `payload`. Memory
    /// shared with another process (an IPC or dma-buf import) is refused:
    /// a checkpoint holds one process's own memory.
    pub fn snapshot(
        &self,
        payload: &mut crate::checkpoint::PayloadWriter,
    ) -> Result<crate::checkpoint::MemoryState, crate::checkpoint::CheckpointError> {
        use crate::checkpoint::{AllocKind, AllocationState, CheckpointError};
        let mut allocations = Vec::with_capacity(self.allocs.len());
        for (&id, a) in &self.allocs {
            let kind = match a.flags
                & (kfd::ALLOC_VRAM
                    | kfd::ALLOC_GTT
                    | kfd::ALLOC_USERPTR
                    | kfd::ALLOC_DOORBELL
                    | kfd::ALLOC_MMIO_REMAP)
            {
                kfd::ALLOC_VRAM => AllocKind::Vram,
                kfd::ALLOC_GTT => AllocKind::Gtt,
                kfd::ALLOC_USERPTR => AllocKind::Userptr,
                kfd::ALLOC_DOORBELL => AllocKind::Doorbell,
                _ => AllocKind::Mmio,
            };
            let import = a.memfd.is_some()
                && a.charge == Charge::None
                && matches!(kind, AllocKind::Gtt | AllocKind::Vram);
            if import {
                return Err(CheckpointError::Unsupported(format!(
                    "allocation {id} at 0x{:x} ({} bytes) is another process's memory (an IPC or dma-buf import); a checkpoint holds each process's own memory only",
                    a.va, a.size
                )));
            }
            let contents = (a.host != 0).then(|| {
                // SAFETY: `host` is the driver's mapping of the buffer (or
                // the process's registered pages), `size` bytes, alive
                // while the allocation is.
                payload.add(unsafe { host_bytes(a.host, a.size) })
            });
            allocations.push(AllocationState {
                id,
                gpu: a.gpu,
                kind,
                va: a.va,
                size: a.size,
                flags: a.flags,
                mmap_offset: a.offset,
                mapped: a.mapped,
                contents,
            });
        }
        Ok(crate::checkpoint::MemoryState {
            next_id: self.next_id,
            next_offset: self.next_offset,
            allocations,
        })
    }

    /// Restores `st` into this (empty) process: every allocation at its
    /// address, id and mmap offset, charged as when it was made, mapped
    /// to the GPU if it was. Memory with contents is the memfd `adopt`
    /// gives for it with the buffer's offset in it (the one the process
    /// still maps there: checked to be
    /// a size-sealed memfd holding the buffer, its bytes compared with the
    /// checkpoint's and kept), else a new memfd filled from the file. In
    /// local mode a userptr allocation is the process's own pages again.
    pub fn restore(
        &mut self,
        st: &crate::checkpoint::MemoryState,
        ck: &crate::checkpoint::Checkpoint,
        vm: &Vm,
        adopt: &mut dyn FnMut(&crate::checkpoint::AllocationState) -> Option<(OwnedFd, u64)>,
        report: &mut RestoreReport,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        use crate::checkpoint::{AllocKind, CheckpointError};
        if !self.allocs.is_empty() {
            return Err(CheckpointError::Unsupported(
                "a checkpoint is restored into a new process only".into(),
            ));
        }
        for a in &st.allocations {
            let at = format!("allocation {} at 0x{:x} ({} bytes)", a.id, a.va, a.size);
            let fail = |why: String| CheckpointError::Unsupported(format!("{at}: {why}"));
            if a.size == 0
                || a.size % PAGE != 0
                || a.va.checked_add(a.size).is_none()
                || self.allocs.contains_key(&a.id)
                || a.id >= st.next_id
            {
                return Err(fail("a size, address or id no allocation can have".into()));
            }
            let contents = match (&a.contents, a.kind) {
                (Some(b), AllocKind::Vram | AllocKind::Gtt | AllocKind::Userptr) => {
                    Some(ck.contents(b))
                }
                (None, AllocKind::Doorbell | AllocKind::Mmio) => None,
                _ => {
                    return Err(fail(format!(
                        "{:?} memory without its contents, or contents of memory that has none",
                        a.kind
                    )));
                }
            };
            let charge = match a.kind {
                AllocKind::Vram => Charge::Vram,
                AllocKind::Gtt => Charge::Gtt,
                AllocKind::Userptr if self.userptr_memfd => Charge::Gtt,
                _ => Charge::None,
            };
            self.take(charge, a.gpu, a.size)
                .map_err(|_| fail("the GPU (or the process's quota) has no room for it".into()))?;
            let backed = match (a.kind, contents) {
                (AllocKind::Userptr, Some(bytes)) if !self.userptr_memfd => {
                    // The process's own pages (at the address it
                    // registered, not the GPU's): whatever they hold now.
                    let user = a.process_address();
                    if !crate::user::is_mapped(user, a.size) {
                        self.give(charge, a.gpu, a.size);
                        return Err(fail("the process no longer maps these pages".into()));
                    }
                    // SAFETY: checked mapped just above; the process keeps
                    // registered pages until it frees the allocation.
                    let now = unsafe { host_bytes(user, a.size) };
                    Ok((None, user, false, differing(now, bytes), true))
                }
                (_, Some(bytes)) => self.restore_backing(a, bytes, adopt),
                (_, None) => Ok((None, 0, false, 0, false)),
            };
            let (memfd, host, owns, diff, adopted) = match backed {
                Ok(b) => b,
                Err(why) => {
                    self.give(charge, a.gpu, a.size);
                    return Err(fail(why));
                }
            };
            report.allocations += 1;
            if adopted {
                report.adopted += 1;
                if diff != 0 {
                    report.differing.push((a.id, a.va, diff));
                }
            }
            if matches!(a.kind, AllocKind::Vram | AllocKind::Gtt) {
                self.by_offset.insert(a.mmap_offset, a.id);
            }
            self.allocs.insert(
                a.id,
                Allocation {
                    gpu: a.gpu,
                    va: a.va,
                    size: a.size,
                    flags: a.flags,
                    memfd: memfd.map(std::sync::Arc::new),
                    host,
                    owns_mapping: owns,
                    offset: a.mmap_offset,
                    mapped: false,
                    region: None,
                    charge,
                },
            );
            if a.mapped {
                self.map(a.id, vm)
                    .map_err(|e| fail(format!("mapping it to the GPU: errno {}", e.0)))?;
            }
        }
        self.next_id = st.next_id;
        self.next_offset = st.next_offset;
        Ok(())
    }

    /// The memfd and the driver's mapping of a restored buffer: the
    /// process's (adopted) or a new one filled with `bytes`; with how many
    /// bytes differ from the checkpoint's and whether it was adopted.
    #[allow(clippy::type_complexity)]
    fn restore_backing(
        &self,
        a: &crate::checkpoint::AllocationState,
        bytes: &[u8],
        adopt: &mut dyn FnMut(&crate::checkpoint::AllocationState) -> Option<(OwnedFd, u64)>,
    ) -> Result<(Option<OwnedFd>, u64, bool, u64, bool), String> {
        if let Some((fd, off)) = adopt(a) {
            check_userptr_backing(fd.as_raw_fd(), off, a.size).map_err(|_| {
                "the memory the process offers for it is not a size-sealed memfd holding the buffer"
                    .to_string()
            })?;
            let host = map_shared_at(fd.as_raw_fd(), a.size, off)
                .map_err(|_| "cannot map the process's memfd".to_string())?;
            // SAFETY: the mapping made just above, `size` bytes.
            let now = unsafe { host_bytes(host, a.size) };
            return Ok((Some(fd), host, true, differing(now, bytes), true));
        }
        let fd = memfd(&format!("rocjitsu-bo-{}", a.id), a.size)
            .map_err(|_| "cannot create its memfd".to_string())?;
        let host =
            map_shared(fd.as_raw_fd(), a.size).map_err(|_| "cannot map its memfd".to_string())?;
        // SAFETY: the fresh mapping made just above, `size` bytes, which
        // nothing else uses yet.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), host as *mut u8, bytes.len()) };
        Ok((Some(fd), host, true, 0, false))
    }

    /// The host address of the driver's view of `va` and the allocation
    /// (address) holding it, if a VRAM/GTT/userptr allocation does.
    pub fn va_of_host(&self, host: u64) -> Option<u64> {
        self.allocs
            .values()
            .find(|a| a.host != 0 && host.checked_sub(a.host).is_some_and(|d| d < a.size))
            .map(|a| a.va + (host - a.host))
    }
}

/// How many bytes of `a` and `b` differ.
fn differing(a: &[u8], b: &[u8]) -> u64 {
    a.iter().zip(b).filter(|(x, y)| x != y).count() as u64
}

impl Drop for Memory {
    /// A process that goes away (or exits without freeing) gives its VRAM
    /// back to the device (and what it was charged to its quota); the
    /// buffers' mappings go with the allocations.
    fn drop(&mut self) {
        for a in self.allocs.values() {
            self.give(a.charge, a.gpu, a.size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(flags: u32, size: u64, va: u64) -> AllocRequest {
        AllocRequest {
            gpu: 0,
            gpu_id: 0x1234,
            va,
            size,
            mmap_offset: 0,
            flags,
            backing: None,
        }
    }

    #[test]
    fn vram_is_shared_with_the_render_mapping_and_reachable_by_the_gpu() {
        let vm = Vm::new();
        let mut m = Memory::new(
            std::sync::Arc::new(VramPool::new(vec![1 << 30])),
            vec![8192],
            false,
        );
        let va = 0x7000_0000_0000;
        let (id, off) = m
            .alloc(&req(kfd::ALLOC_VRAM | kfd::ALLOC_WRITABLE, 10_000, va))
            .unwrap();
        assert_eq!(m.available(0), (1 << 30) - 12288);
        m.map(id, &vm).unwrap();
        // What the process would map through the render node ...
        let (fd, within) = m.render_map(off, 12288).unwrap();
        assert_eq!(within, 0);
        let host = map_shared(fd, 12288).unwrap();
        // SAFETY: `host` is a fresh 12 KiB mapping made just above.
        unsafe { *((host + 4096) as *mut u32) = 0xdead_beef };
        // ... is what the GPU sees at the VA.
        let mut tlb = rocjitsu_gpu::mem::Tlb::default();
        assert_eq!(vm.read_u32(&mut tlb, va + 4096).unwrap(), 0xdead_beef);
        assert!(m.render_map(off + 8192, 8192).is_err());
        m.free(id, &vm).unwrap();
        assert!(vm.read_u32(&mut tlb, va + 4096).is_err());
        assert_eq!(m.available(0), 1 << 30);
        assert_eq!(m.free(id, &vm), Err(Errno::EINVAL));
        // SAFETY: unmapping the test's own mapping.
        unsafe { libc::munmap(host as *mut libc::c_void, 12288) };
    }

    #[test]
    fn bad_requests_get_the_kernel_errno() {
        let mut m = Memory::new(
            std::sync::Arc::new(VramPool::new(vec![1 << 20])),
            vec![8192],
            false,
        );
        assert_eq!(
            m.alloc(&req(kfd::ALLOC_VRAM, 0, 0x1000)).err(),
            Some(Errno::EINVAL)
        );
        assert_eq!(
            m.alloc(&req(kfd::ALLOC_VRAM, 2 << 20, 0x1000)).err(),
            Some(Errno::ENOMEM)
        );
        assert_eq!(
            m.alloc(&req(kfd::ALLOC_VRAM | kfd::ALLOC_GTT, 4096, 0x1000))
                .err(),
            Some(Errno::EINVAL)
        );
        assert_eq!(m.count(), 0);
    }

    #[test]
    fn client_offsets_and_lengths_that_overflow_are_einval_not_a_wrap() {
        let vm = Vm::new();
        let mut m = Memory::new(
            std::sync::Arc::new(VramPool::new(vec![1 << 20])),
            vec![8192],
            true,
        );
        let top = !(PAGE - 1);
        // A size whose rounding to a page overflows.
        for size in [u64::MAX, u64::MAX - 100, top + 1] {
            for kind in [kfd::ALLOC_VRAM, kfd::ALLOC_GTT] {
                assert_eq!(
                    m.alloc(&req(kind, size, 0x1000)).err(),
                    Some(Errno::EINVAL),
                    "size {size:#x}"
                );
            }
        }
        // A buffer whose end (va + size) passes the top of the address space.
        assert_eq!(
            m.alloc(&req(kfd::ALLOC_VRAM, 8192, top)).err(),
            Some(Errno::EINVAL)
        );
        let mut userptr = req(kfd::ALLOC_USERPTR, 2 * PAGE, top);
        userptr.mmap_offset = top;
        assert_eq!(m.alloc(&userptr).err(), Some(Errno::EINVAL));
        assert_eq!(m.count(), 0);
        assert_eq!(m.available(0), 1 << 20, "nothing was taken");

        // An mmap whose offset + length overflows past a real buffer.
        let (id, off) = m.alloc(&req(kfd::ALLOC_VRAM, 2 * PAGE, 0x10_0000)).unwrap();
        assert!(m.render_map(off, 2 * PAGE).is_ok());
        assert_eq!(m.render_map(off, u64::MAX).err(), Some(Errno::EINVAL));
        assert_eq!(
            m.render_map(off + PAGE, u64::MAX - PAGE + 1).err(),
            Some(Errno::EINVAL)
        );
        // An IPC import of a size that overflows, or at the top.
        let fd = m.get(id).unwrap().shared_memfd().unwrap();
        assert_eq!(
            m.import(0, 0x20_0000, u64::MAX, kfd::ALLOC_VRAM, fd.clone())
                .err(),
            Some(Errno::EINVAL)
        );
        assert_eq!(
            m.import(0, top, 2 * PAGE, kfd::ALLOC_VRAM, fd).err(),
            Some(Errno::EINVAL)
        );
        // Render-node offsets that would wrap: ENOMEM, and nothing taken.
        let used = m.available(0);
        m.next_offset = u64::MAX - PAGE;
        assert_eq!(
            m.alloc(&req(kfd::ALLOC_VRAM, PAGE, 0x40_0000)).err(),
            Some(Errno::ENOMEM)
        );
        assert_eq!(
            m.alloc(&req(kfd::ALLOC_GTT, PAGE, 0x40_0000)).err(),
            Some(Errno::ENOMEM)
        );
        assert_eq!(m.available(0), used);
        assert_eq!(m.count(), 1);
        // Allocation ids that would wrap onto a live one: ENOMEM.
        m.next_offset = 1 << 32;
        m.next_id = u32::MAX;
        assert_eq!(
            m.alloc(&req(kfd::ALLOC_DOORBELL, PAGE, 0)).err(),
            Some(Errno::ENOMEM)
        );
        assert!(m.get(id).is_some());
        m.free(id, &vm).unwrap();
        assert_eq!(m.available(0), 1 << 20);
    }

    #[test]
    fn a_quota_holds_a_process_to_its_share_whatever_the_device_has() {
        let vm = Vm::new();
        let pool = std::sync::Arc::new(VramPool::new(vec![1 << 20]));
        let quota = std::sync::Arc::new(Quota::new(vec![256 << 10], 128 << 10));
        let mut m = Memory::new(pool.clone(), vec![8192], true);
        m.set_quota(quota.clone());
        let (v, _) = m
            .alloc(&req(kfd::ALLOC_VRAM, 256 << 10, 0x10_0000))
            .unwrap();
        assert_eq!(m.available(0), 0, "the quota is spent, not the device");
        assert_eq!(pool.available(0), 768 << 10);
        assert_eq!(
            m.alloc(&req(kfd::ALLOC_VRAM, PAGE, 0x80_0000)).err(),
            Some(Errno::ENOMEM)
        );
        // GTT and the userptr memfds the daemon makes count against the
        // GTT share.
        let (g, _) = m.alloc(&req(kfd::ALLOC_GTT, 64 << 10, 0x90_0000)).unwrap();
        let mut userptr = req(kfd::ALLOC_USERPTR, 64 << 10, 0xa0_0000);
        userptr.mmap_offset = 0xa0_0000;
        m.alloc(&userptr).unwrap();
        assert_eq!(quota.gtt.load(Ordering::Relaxed), 128 << 10);
        assert_eq!(
            m.alloc(&req(kfd::ALLOC_GTT, PAGE, 0xb0_0000)).err(),
            Some(Errno::ENOMEM)
        );
        // Another process on the device has its own share.
        let mut other = Memory::new(pool.clone(), vec![8192], true);
        other.set_quota(std::sync::Arc::new(Quota::new(vec![256 << 10], 128 << 10)));
        other
            .alloc(&req(kfd::ALLOC_VRAM, 256 << 10, 0x10_0000))
            .unwrap();
        assert_eq!(pool.available(0), 512 << 10);
        // Freeing gives the share back; so does the process going away.
        m.free(v, &vm).unwrap();
        m.free(g, &vm).unwrap();
        assert_eq!(quota.vram_used(0), 0);
        assert_eq!(quota.gtt.load(Ordering::Relaxed), 64 << 10);
        m.alloc(&req(kfd::ALLOC_VRAM, 256 << 10, 0x10_0000))
            .unwrap();
        drop(m);
        assert_eq!(quota.vram_used(0), 0);
        assert_eq!(quota.gtt.load(Ordering::Relaxed), 0);
        drop(other);
        assert_eq!(pool.available(0), 1 << 20);
    }
}
