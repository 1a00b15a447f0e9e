//! GPU virtual memory: the address ranges a dispatch may touch, with
//! permissions, and the accesses of scalar and vector memory instructions.
//!
//! A region maps a GPU virtual address range onto host memory. In the
//! standalone `run-kernel` mode the regions are buffers owned by the
//! [`Vm`]; in driver mode they are the application's allocations, mapped at
//! the same address on the GPU and the host (GPU VA = host VA). Every access
//! is checked against the regions: an address outside them, or a write to a
//! read-only region, is a [`MemFault`] carrying the faulting address, as a
//! real GPU's VM fault reports it.
//!
//! Waves of different workgroups run on different host threads and may touch
//! the same bytes, as GPU waves do; plain accesses are unsynchronised byte
//! copies (the GPU memory model gives no ordering without atomics or fences),
//! atomics are host atomics.

use std::sync::RwLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Access rights of a region.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Perms {
    pub read: bool,
    pub write: bool,
    pub exec: bool,
}

impl Perms {
    pub const RW: Perms = Perms {
        read: true,
        write: true,
        exec: false,
    };
    pub const RO: Perms = Perms {
        read: true,
        write: false,
        exec: false,
    };
    pub const RX: Perms = Perms {
        read: true,
        write: false,
        exec: true,
    };
}

/// What kind of access faulted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Atomic,
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::Atomic => "atomic",
        })
    }
}

/// A GPU memory fault: the faulting address, the access and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("GPU memory fault: {access} of {size} bytes at 0x{addr:x} {why}")]
pub struct MemFault {
    pub addr: u64,
    pub size: u32,
    pub access: Access,
    pub why: &'static str,
}

/// One mapped range.
#[derive(Debug)]
struct Region {
    start: u64,
    len: u64,
    /// Host address of `start`.
    host: *mut u8,
    perms: Perms,
    /// Unique among all regions this Vm ever had.
    id: u64,
    /// Owned backing store (standalone mode), kept alive with the region.
    _owned: Option<Box<[Line]>>,
}

/// 16 bytes of an owned buffer: buffers start 16-byte aligned, so that GPU
/// and host addresses agree modulo 16 and an aligned 16-byte access is one
/// host access (see [`Vm::load`]).
#[repr(C, align(16))]
#[derive(Debug, Default)]
struct Line([AtomicU64; 2]);

// SAFETY: a region's host pointer is either owned by the region (`_owned`)
// or registered by the driver, which keeps the mapping alive until it is
// unmapped from the Vm; accesses through it are bounds-checked.
unsafe impl Send for Region {}
// SAFETY: as above; concurrent accesses are either atomics or byte copies
// whose unsynchronised ordering is the GPU memory model's.
unsafe impl Sync for Region {}

/// A resolved range cached by a wave: host address of `start`, length and
/// permissions. Valid while the Vm's regions do not change. It also holds
/// the [`RangeCache`] of the translation tier, so that both live as long as
/// the thread's use of one Vm.
#[derive(Copy, Clone, Debug)]
pub struct Tlb {
    start: u64,
    end: u64,
    host: usize,
    perms: Perms,
    epoch: u64,
    /// Host windows of recently used regions, for translated code.
    pub ranges: RangeCache,
}

impl Default for Tlb {
    fn default() -> Self {
        Tlb {
            start: 1,
            end: 0,
            host: 0,
            perms: Perms::RO,
            epoch: u64::MAX,
            ranges: RangeCache::default(),
        }
    }
}

/// A mapped region's window onto host memory, as [`Vm::host_range`] gives
/// it: the GPU range `start .. start + len` is the host range `host ..
/// host + len`. The window is good while [`Vm::epoch`] still returns
/// `epoch` (a region mapped or unmapped changes it); whoever goes through
/// `host` after that point must check the epoch first.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HostRange {
    pub start: u64,
    pub len: u64,
    pub host: *mut u8,
    pub perms: Perms,
    pub epoch: u64,
}

impl HostRange {
    /// The host address of `va .. va + len`, if this window holds all of
    /// it.
    pub fn host_of(&self, va: u64, len: u64) -> Option<*mut u8> {
        let off = va.checked_sub(self.start)?;
        (off <= self.len && self.len - off >= len).then(|| self.host.wrapping_add(off as usize))
    }
}

/// Entries of a [`RangeCache`].
pub const RANGE_ENTRIES: usize = 4;
/// [`RangeEntry::flags`]: the region may be read.
pub const RANGE_READ: u64 = 1;
/// [`RangeEntry::flags`]: the region may be written.
pub const RANGE_WRITE: u64 = 2;

/// One cached window (the layout translated code reads).
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeEntry {
    /// GPU address of the region's first byte.
    pub start: u64,
    /// Bytes in the region (0: an empty entry, which holds nothing).
    pub len: u64,
    /// Host address of `start`.
    pub host: u64,
    /// [`RANGE_READ`] and [`RANGE_WRITE`] as the region's permissions allow.
    pub flags: u64,
}

/// A few recently used regions' host windows, all of one mapping epoch of
/// one [`Vm`]: an address range `va .. va + len` that lies inside entry
/// `e` (`va - e.start < e.len` and `e.len - (va - e.start) >= len`), with
/// the access's flag in `e.flags`, is at host address `e.host + (va -
/// e.start)`, as long as the Vm's epoch still equals `epoch`. Translated
/// code probes the entries inline and calls [`RangeCache::resolve`] on a
/// miss; anything that is not wholly inside one region (or not allowed)
/// misses every entry and gets `None` there.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct RangeCache {
    pub entries: [RangeEntry; RANGE_ENTRIES],
    /// The Vm epoch the entries belong to.
    pub epoch: u64,
    /// The entry the next fill replaces.
    next: u64,
}

impl Default for RangeCache {
    fn default() -> Self {
        RangeCache {
            entries: [RangeEntry::default(); RANGE_ENTRIES],
            epoch: u64::MAX,
            next: 0,
        }
    }
}

impl RangeCache {
    /// Drops every entry.
    pub fn clear(&mut self) {
        self.entries = [RangeEntry::default(); RANGE_ENTRIES];
        self.next = 0;
    }

    /// The host address of `va .. va + len` for an access with the flag
    /// `need` ([`RANGE_READ`] or [`RANGE_WRITE`]): from the entries when
    /// they are of `vm`'s current epoch, else from [`Vm::host_range`],
    /// whose window then replaces an entry. `None` when the range is not
    /// wholly inside one mapped region that allows the access (the caller
    /// then takes the checked path, which reports the fault or pages).
    pub fn resolve(&mut self, vm: &Vm, va: u64, len: u64, need: u64) -> Option<*mut u8> {
        let epoch = vm.epoch();
        if self.epoch != epoch {
            self.clear();
            self.epoch = epoch;
        }
        for e in &self.entries {
            let off = va.wrapping_sub(e.start);
            if off < e.len && e.len - off >= len && e.flags & need != 0 {
                return Some((e.host as usize).wrapping_add(off as usize) as *mut u8);
            }
        }
        let access = if need & RANGE_WRITE != 0 {
            Access::Write
        } else {
            Access::Read
        };
        let r = vm.host_range(va, len, access)?;
        let p = r.host_of(va, len)?;
        if r.epoch != self.epoch {
            // Mapped or unmapped since the check above: the older entries
            // may be stale.
            self.clear();
            self.epoch = r.epoch;
        }
        let flags =
            (u64::from(r.perms.read) * RANGE_READ) | (u64::from(r.perms.write) * RANGE_WRITE);
        let slot = (self.next % RANGE_ENTRIES as u64) as usize;
        self.next = self.next.wrapping_add(1);
        self.entries[slot] = RangeEntry {
            start: r.start,
            len: r.len,
            host: r.host as u64,
            flags,
        };
        Some(p)
    }
}

/// Resolves a GPU access to an unmapped address the way recoverable page
/// faults (XNACK) do: by mapping memory there ([`Vm::map_host`]) and
/// returning true, or false to let the access fault.
pub trait Pager: Send + Sync {
    fn fault(&self, vm: &Vm, addr: u64) -> bool;
}

/// The GPU virtual address space of one process (or of one run-kernel).
#[derive(Default)]
pub struct Vm {
    regions: RwLock<Vec<Region>>,
    epoch: AtomicU64,
    /// Next address handed out by [`Vm::alloc`].
    next: AtomicU64,
    /// Next region id.
    ids: AtomicU64,
    pager: std::sync::OnceLock<Box<dyn Pager>>,
}

impl std::fmt::Debug for Vm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vm")
            .field("regions", &self.regions)
            .field("epoch", &self.epoch)
            .field("pager", &self.pager.get().is_some())
            .finish()
    }
}

/// A mapped range as [`Vm::region`] reports it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RegionInfo {
    pub start: u64,
    pub len: u64,
    pub perms: Perms,
    /// Unique for the life of the Vm: a range unmapped and mapped again
    /// gets a new id.
    pub id: u64,
}

/// Where [`Vm::alloc`] places buffers: above the low 4 GiB and far from
/// the LDS and private apertures (which start at 1 << 48).
const ALLOC_BASE: u64 = 0x0000_7f00_0000_0000;
/// The GPU page size: the granule of mappings and permissions.
pub const PAGE: u64 = 4096;
/// Alignment and guard gap between allocated buffers.
const ALLOC_ALIGN: u64 = 1 << 16;

impl Vm {
    pub fn new() -> Vm {
        Vm {
            regions: RwLock::new(Vec::new()),
            epoch: AtomicU64::new(0),
            next: AtomicU64::new(ALLOC_BASE),
            ids: AtomicU64::new(0),
            pager: std::sync::OnceLock::new(),
        }
    }

    /// Installs the pager that unmapped accesses go to (once).
    pub fn set_pager(&self, pager: Box<dyn Pager>) -> bool {
        self.pager.set(pager).is_ok()
    }

    /// The unmapped span around `addr`: from the end of the region below
    /// it to the start of the region above it (None if `addr` is mapped).
    pub fn gap(&self, addr: u64) -> Option<(u64, u64)> {
        let r = self.regions.read().unwrap_or_else(|e| e.into_inner());
        let i = r.partition_point(|x| x.start <= addr);
        let lo = match i.checked_sub(1).and_then(|i| r.get(i)) {
            Some(x) if addr - x.start < x.len => return None,
            Some(x) => x.start + x.len,
            None => 0,
        };
        let hi = r.get(i).map_or(u64::MAX, |x| x.start);
        Some((lo, hi))
    }

    /// Allocates a zeroed buffer of `len` bytes and returns its GPU address.
    /// As on a GPU, access rights are per page: the buffer is mapped in
    /// whole 4 KiB pages (an access past `len` within its last page reads
    /// zeros, as the hardware's does), and buffers are separated by unmapped
    /// guard pages, so running off the end of one faults instead of reaching
    /// the next.
    pub fn alloc(&self, len: u64, perms: Perms) -> u64 {
        let len = len.max(1).next_multiple_of(PAGE);
        let lines = len.div_ceil(16).max(1) as usize;
        let owned: Box<[Line]> = (0..lines).map(|_| Line::default()).collect();
        let host = owned.as_ptr() as *mut u8;
        let span = (len.max(1)).div_ceil(ALLOC_ALIGN) * ALLOC_ALIGN + ALLOC_ALIGN;
        let start = self.next.fetch_add(span, Ordering::Relaxed);
        let _ = self.insert(Region {
            start,
            len,
            host,
            perms,
            id: 0,
            _owned: Some(owned),
        });
        start
    }

    /// Maps `len` bytes of host memory at `host` to GPU address `start`.
    ///
    /// # Safety
    /// `host..host+len` must stay valid for reads (and writes when `perms`
    /// allows) until [`Vm::unmap`] removes the range.
    /// Returns the region's id, for [`Vm::unmap_region`].
    pub unsafe fn map_host(&self, start: u64, len: u64, host: *mut u8, perms: Perms) -> u64 {
        self.insert(Region {
            start,
            len,
            host,
            perms,
            id: 0,
            _owned: None,
        })
    }

    /// Removes the region [`Vm::map_host`] returned `id` for (and no other
    /// region that starts at the same address); returns whether it did.
    pub fn unmap_region(&self, id: u64) -> bool {
        let mut r = self.regions.write().unwrap_or_else(|e| e.into_inner());
        let before = r.len();
        r.retain(|x| x.id != id);
        tracing::trace!("vm: unmap region {id} ({} regions)", before - r.len());
        self.epoch.fetch_add(1, Ordering::Release);
        r.len() != before
    }

    /// Removes the region starting at `start`; returns whether one did.
    pub fn unmap(&self, start: u64) -> bool {
        let mut r = self.regions.write().unwrap_or_else(|e| e.into_inner());
        let before = r.len();
        r.retain(|x| x.start != start);
        tracing::trace!("vm: unmap 0x{start:x} ({} regions)", before - r.len());
        self.epoch.fetch_add(1, Ordering::Release);
        r.len() != before
    }

    fn insert(&self, mut region: Region) -> u64 {
        let id = self.ids.fetch_add(1, Ordering::Relaxed);
        region.id = id;
        tracing::trace!(
            "vm: map 0x{:x}..0x{:x} -> host {:p}",
            region.start,
            region.start + region.len,
            region.host
        );
        let mut r = self.regions.write().unwrap_or_else(|e| e.into_inner());
        let at = r.partition_point(|x| x.start < region.start);
        r.insert(at, region);
        self.epoch.fetch_add(1, Ordering::Release);
        id
    }

    /// The region that contains `addr`, if any.
    pub fn region(&self, addr: u64) -> Option<RegionInfo> {
        let r = self.regions.read().unwrap_or_else(|e| e.into_inner());
        let i = r.partition_point(|x| x.start <= addr).checked_sub(1)?;
        let x = r.get(i).filter(|x| addr - x.start < x.len)?;
        Some(RegionInfo {
            start: x.start,
            len: x.len,
            perms: x.perms,
            id: x.id,
        })
    }

    /// The mapping epoch: it changes whenever a region is mapped or
    /// unmapped, so that a [`HostRange`] or [`Tlb`] taken at one epoch is
    /// known good while the epoch stays.
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The counter [`Vm::epoch`] reads (translated code reads it in place).
    pub(crate) fn epoch_cell(&self) -> &AtomicU64 {
        &self.epoch
    }

    /// The host window of the region that wholly contains `va .. va +
    /// len` and allows `access` (an atomic needs write permission), with
    /// the epoch it is good for. `None` when the range is empty, wraps,
    /// crosses a region's end or an unmapped gap, or the region forbids the
    /// access: nothing outside one mapped, accessible region is handed out.
    /// Unlike an access, this never calls the [`Pager`].
    pub fn host_range(&self, va: u64, len: u64, access: Access) -> Option<HostRange> {
        let end = va.checked_add(len)?;
        if len == 0 {
            return None;
        }
        // The epoch is read before the regions: a change after this point
        // makes the window look older than it is, never newer.
        let epoch = self.epoch();
        let r = self.regions.read().unwrap_or_else(|e| e.into_inner());
        let i = r.partition_point(|x| x.start <= va).checked_sub(1)?;
        let x = r.get(i).filter(|x| end <= x.start + x.len)?;
        let ok = match access {
            Access::Read => x.perms.read,
            Access::Write | Access::Atomic => x.perms.write,
        };
        ok.then_some(HostRange {
            start: x.start,
            len: x.len,
            host: x.host,
            perms: x.perms,
            epoch,
        })
    }

    /// Every mapped range, lowest first.
    pub fn regions(&self) -> Vec<RegionInfo> {
        let r = self.regions.read().unwrap_or_else(|e| e.into_inner());
        r.iter()
            .map(|x| RegionInfo {
                start: x.start,
                len: x.len,
                perms: x.perms,
                id: x.id,
            })
            .collect()
    }

    /// Resolves `addr..addr+size` to a host address, through `tlb`.
    #[inline]
    fn resolve(
        &self,
        tlb: &mut Tlb,
        addr: u64,
        size: u32,
        access: Access,
    ) -> Result<*mut u8, MemFault> {
        let end = addr.checked_add(u64::from(size)).ok_or(MemFault {
            addr,
            size,
            access,
            why: "wraps around the address space",
        })?;
        let epoch = self.epoch.load(Ordering::Acquire);
        if !(tlb.epoch == epoch && addr >= tlb.start && end <= tlb.end) {
            self.refill(tlb, addr, end, size, access, epoch)?;
        }
        let ok = match access {
            Access::Read => tlb.perms.read,
            Access::Write | Access::Atomic => tlb.perms.write,
        };
        if !ok {
            return Err(MemFault {
                addr,
                size,
                access,
                why: "violates the page permissions",
            });
        }
        Ok((tlb.host + (addr - tlb.start) as usize) as *mut u8)
    }

    #[cold]
    fn refill(
        &self,
        tlb: &mut Tlb,
        addr: u64,
        end: u64,
        size: u32,
        access: Access,
        epoch: u64,
    ) -> Result<(), MemFault> {
        for attempt in 0..2 {
            let epoch = if attempt == 0 {
                epoch
            } else {
                self.epoch.load(Ordering::Acquire)
            };
            {
                let r = self.regions.read().unwrap_or_else(|e| e.into_inner());
                let i = r.partition_point(|x| x.start <= addr);
                let hit = i
                    .checked_sub(1)
                    .and_then(|i| r.get(i))
                    .filter(|x| end <= x.start + x.len);
                if let Some(x) = hit {
                    tlb.start = x.start;
                    tlb.end = x.start + x.len;
                    tlb.host = x.host as usize;
                    tlb.perms = x.perms;
                    tlb.epoch = epoch;
                    return Ok(());
                }
            }
            // A recoverable fault: the pager may map memory there (with
            // no lock of ours held), then the lookup runs once more.
            let paged = attempt == 0 && self.pager.get().is_some_and(|p| p.fault(self, addr));
            if !paged {
                break;
            }
        }
        Err(MemFault {
            addr,
            size,
            access,
            why: "is not mapped",
        })
    }

    /// Reads `out.len()` bytes at `addr`.
    #[inline]
    pub fn read(&self, tlb: &mut Tlb, addr: u64, out: &mut [u8]) -> Result<(), MemFault> {
        let p = self.resolve(tlb, addr, out.len() as u32, Access::Read)?;
        // SAFETY: `resolve` checked that the range lies inside a live region.
        unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Writes `data` at `addr`.
    #[inline]
    pub fn write(&self, tlb: &mut Tlb, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        let p = self.resolve(tlb, addr, data.len() as u32, Access::Write)?;
        // SAFETY: `resolve` checked that the range lies inside a live,
        // writable region.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
        Ok(())
    }

    /// Reads `out.len()` bytes at `addr` as a wave's load instruction
    /// reads them while other waves (or the host) write concurrently:
    /// naturally aligned units of up to 16 bytes, each read at once, from
    /// the highest address down. A lane's aligned dwordx4 is one unit, as
    /// on the GPU, where rocPRIM's 128-bit `atomic_load`/`atomic_store`
    /// are plain `global_load_dwordx4`/`global_store_dwordx4`. Together with [`Vm::store`], which writes
    /// from the lowest address up, a reader that sees a value at a higher
    /// address sees everything the same store wrote below it, as a load of
    /// a whole line sees one store of it on the GPU. Producers that publish
    /// a flag above their data rely on that: RCCL's LL protocol (a flag in
    /// the high half of each 8-byte pair) and LL128 (a flag in the last 8
    /// bytes of each 128-byte line a wave stores).
    #[inline]
    pub fn load(&self, tlb: &mut Tlb, addr: u64, out: &mut [u8]) -> Result<(), MemFault> {
        let p = self.resolve(tlb, addr, out.len() as u32, Access::Read)?;
        // SAFETY: `resolve` checked that the range lies inside a live region.
        unsafe { load_descending(p, out) };
        Ok(())
    }

    /// Writes `data` at `addr` as a wave's store instruction does:
    /// naturally aligned units of up to 16 bytes, each written at once,
    /// from the lowest address up (see [`Vm::load`]).
    #[inline]
    pub fn store(&self, tlb: &mut Tlb, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        let p = self.resolve(tlb, addr, data.len() as u32, Access::Write)?;
        // SAFETY: `resolve` checked that the range lies inside a live,
        // writable region.
        unsafe { store_ascending(p, data) };
        Ok(())
    }

    /// Reads a little-endian dword.
    #[inline]
    pub fn read_u32(&self, tlb: &mut Tlb, addr: u64) -> Result<u32, MemFault> {
        let mut b = [0; 4];
        self.read(tlb, addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Writes a little-endian dword.
    #[inline]
    pub fn write_u32(&self, tlb: &mut Tlb, addr: u64, v: u32) -> Result<(), MemFault> {
        self.write(tlb, addr, &v.to_le_bytes())
    }

    /// Atomically replaces the dword at `addr` (4-byte aligned) with
    /// `f(old)` and returns the old value. `f` returning `None` leaves the
    /// value unchanged (compare-and-swap that fails).
    pub fn atomic_u32(
        &self,
        tlb: &mut Tlb,
        addr: u64,
        f: impl Fn(u32) -> Option<u32>,
    ) -> Result<u32, MemFault> {
        let p = self.resolve_atomic(tlb, addr, 4)?;
        // SAFETY: in bounds of a live region and 4-byte aligned (checked by
        // `resolve_atomic`; host buffers are at least 8-byte aligned and GPU
        // and host addresses agree modulo the alignment).
        let a = unsafe { &*(p as *const AtomicU32) };
        Ok(update(
            f,
            |x| a.load(x),
            |o, n| a.compare_exchange_weak(o, n, Ordering::AcqRel, Ordering::Relaxed),
        ))
    }

    /// As [`Vm::atomic_u32`] for a qword (8-byte aligned).
    pub fn atomic_u64(
        &self,
        tlb: &mut Tlb,
        addr: u64,
        f: impl Fn(u64) -> Option<u64>,
    ) -> Result<u64, MemFault> {
        let p = self.resolve_atomic(tlb, addr, 8)?;
        // SAFETY: in bounds and 8-byte aligned (checked by `resolve_atomic`).
        let a = unsafe { &*(p as *const AtomicU64) };
        Ok(update(
            f,
            |x| a.load(x),
            |o, n| a.compare_exchange_weak(o, n, Ordering::AcqRel, Ordering::Relaxed),
        ))
    }

    /// The host address of an aligned `size`-byte atomic at `addr`.
    fn resolve_atomic(&self, tlb: &mut Tlb, addr: u64, size: u32) -> Result<*mut u8, MemFault> {
        if !addr.is_multiple_of(u64::from(size)) {
            return Err(MemFault {
                addr,
                size,
                access: Access::Atomic,
                why: "is not aligned for an atomic",
            });
        }
        self.resolve(tlb, addr, size, Access::Atomic)
    }

    /// Copies a region's bytes out (for run-kernel's output files).
    pub fn read_vec(&self, addr: u64, len: u64) -> Result<Vec<u8>, MemFault> {
        let mut v = vec![0; len as usize];
        let mut tlb = Tlb::default();
        if len > 0 {
            self.read(&mut tlb, addr, &mut v)?;
        }
        Ok(v)
    }

    /// Copies bytes in, ignoring write permission (the host initialising a
    /// read-only buffer).
    pub fn fill(&self, addr: u64, data: &[u8]) -> Result<(), MemFault> {
        let mut tlb = Tlb::default();
        if data.is_empty() {
            return Ok(());
        }
        self.resolve(&mut tlb, addr, data.len() as u32, Access::Read)?;
        let p = (tlb.host + (addr - tlb.start) as usize) as *mut u8;
        // SAFETY: the range was checked to lie inside a live region; the
        // owner of read-only regions is the Vm itself.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
        Ok(())
    }
}

/// The size of the naturally aligned unit of at most 16 bytes and at most
/// `left` bytes that starts, or ends, at host address `at` (a unit of `n`
/// bytes is aligned at both ends or at neither).
#[inline(always)]
fn unit(at: usize, left: usize) -> usize {
    let mut n = 16;
    while n > 1 && (left < n || !at.is_multiple_of(n)) {
        n /= 2;
    }
    n
}

/// Single-copy atomic 16-byte accesses of host memory.
///
/// On x86-64, processors that enumerate AVX carry out the 16-byte accesses
/// of MOVDQA at a 16-byte aligned address atomically (Intel SDM vol. 3A,
/// "Guaranteed Atomic Operations"; AMD APM vol. 2, "Access Atomicity"). Elsewhere, and on older x86-64 processors, the two 8-byte
/// halves are moved under one of a set of spin locks chosen by address,
/// which makes the emulator's own 16-byte accesses atomic with respect to
/// each other.
mod wide {
    #[cfg(target_arch = "x86_64")]
    fn native() -> bool {
        std::arch::is_x86_feature_detected!("avx")
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn native() -> bool {
        false
    }

    /// Reads the 16 bytes at `p`.
    ///
    /// # Safety
    /// `p..p + 16` must be readable memory and `p` 16-byte aligned.
    #[inline]
    pub(super) unsafe fn load16(p: *const u8) -> u128 {
        #[cfg(target_arch = "x86_64")]
        if native() {
            let x: std::arch::x86_64::__m128i;
            // SAFETY: the caller guarantees 16 readable, 16-byte aligned
            // bytes at `p`, as MOVDQA requires.
            unsafe {
                std::arch::asm!(
                    "movdqa {x}, xmmword ptr [{p}]",
                    p = in(reg) p,
                    x = out(xmm_reg) x,
                    options(nostack, preserves_flags, readonly),
                );
            }
            // SAFETY: any 16 bytes are a valid u128.
            return unsafe { std::mem::transmute::<std::arch::x86_64::__m128i, u128>(x) };
        }
        let _g = locked(p as usize);
        // SAFETY: as above; the halves are 8-byte aligned.
        unsafe {
            let lo = std::ptr::read_volatile(p.cast::<u64>());
            let hi = std::ptr::read_volatile(p.add(8).cast::<u64>());
            u128::from(hi) << 64 | u128::from(lo)
        }
    }

    /// Writes `v` to the 16 bytes at `p`.
    ///
    /// # Safety
    /// `p..p + 16` must be writable memory and `p` 16-byte aligned.
    #[inline]
    pub(super) unsafe fn store16(p: *mut u8, v: u128) {
        #[cfg(target_arch = "x86_64")]
        if native() {
            // SAFETY: any u128 is a valid __m128i.
            let x = unsafe { std::mem::transmute::<u128, std::arch::x86_64::__m128i>(v) };
            // SAFETY: the caller guarantees 16 writable, 16-byte aligned
            // bytes at `p`, as MOVDQA requires.
            unsafe {
                std::arch::asm!(
                    "movdqa xmmword ptr [{p}], {x}",
                    p = in(reg) p,
                    x = in(xmm_reg) x,
                    options(nostack, preserves_flags),
                );
            }
            return;
        }
        let _g = locked(p as usize);
        // SAFETY: as above; the halves are 8-byte aligned.
        unsafe {
            std::ptr::write_volatile(p.cast::<u64>(), v as u64);
            std::ptr::write_volatile(p.add(8).cast::<u64>(), (v >> 64) as u64);
        }
    }

    use std::sync::atomic::{AtomicBool, Ordering};

    static LOCKS: [AtomicBool; 64] = [const { AtomicBool::new(false) }; 64];

    /// Holds the lock of the 16 bytes at host address `at` until dropped.
    struct Held(&'static AtomicBool);

    impl Drop for Held {
        fn drop(&mut self) {
            self.0.store(false, Ordering::Release);
        }
    }

    fn locked(at: usize) -> Held {
        let l = &LOCKS[(at >> 4) % LOCKS.len()];
        while l
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        Held(l)
    }
}

/// Copies `out.len()` bytes from `src` in aligned units, highest first
/// (see [`Vm::load`]).
///
/// # Safety
/// `src..src + out.len()` must be readable memory.
#[inline]
unsafe fn load_descending(src: *const u8, out: &mut [u8]) {
    let mut end = out.len();
    while end > 0 {
        let n = unit(src as usize + end, end);
        let at = end - n;
        // SAFETY: `src + at .. src + end` is inside the caller's range and
        // aligned to `n`; a volatile access of that width is one load.
        unsafe {
            let p = src.add(at);
            match n {
                16 => out[at..end].copy_from_slice(&wide::load16(p).to_ne_bytes()),
                8 => out[at..end]
                    .copy_from_slice(&std::ptr::read_volatile(p.cast::<u64>()).to_ne_bytes()),
                4 => out[at..end]
                    .copy_from_slice(&std::ptr::read_volatile(p.cast::<u32>()).to_ne_bytes()),
                2 => out[at..end]
                    .copy_from_slice(&std::ptr::read_volatile(p.cast::<u16>()).to_ne_bytes()),
                _ => out[at] = std::ptr::read_volatile(p),
            }
        }
        end = at;
    }
}

/// Copies `data` to `dst` in aligned units, lowest first (see
/// [`Vm::store`]).
///
/// # Safety
/// `dst..dst + data.len()` must be writable memory.
#[inline]
unsafe fn store_ascending(dst: *mut u8, data: &[u8]) {
    let mut at = 0;
    while at < data.len() {
        let n = unit(dst as usize + at, data.len() - at);
        let b = &data[at..at + n];
        // SAFETY: `dst + at .. + n` is inside the caller's range and
        // aligned to `n`; a volatile access of that width is one store.
        unsafe {
            let p = dst.add(at);
            match n {
                16 => wide::store16(p, u128::from_ne_bytes(b.try_into().unwrap_or_default())),
                8 => std::ptr::write_volatile(
                    p.cast::<u64>(),
                    u64::from_ne_bytes(b.try_into().unwrap_or_default()),
                ),
                4 => std::ptr::write_volatile(
                    p.cast::<u32>(),
                    u32::from_ne_bytes(b.try_into().unwrap_or_default()),
                ),
                2 => std::ptr::write_volatile(
                    p.cast::<u16>(),
                    u16::from_ne_bytes(b.try_into().unwrap_or_default()),
                ),
                _ => std::ptr::write_volatile(p, b[0]),
            }
        }
        at += n;
    }
}

/// A compare-and-swap loop: replaces the value with `f(old)` until no other
/// thread intervened (or `f` declines), and returns the old value.
fn update<T: Copy>(
    f: impl Fn(T) -> Option<T>,
    load: impl Fn(Ordering) -> T,
    cas: impl Fn(T, T) -> Result<T, T>,
) -> T {
    let mut old = load(Ordering::Relaxed);
    loop {
        let Some(new) = f(old) else { return old };
        match cas(old, new) {
            Ok(_) => return old,
            Err(x) => old = x,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_name_the_address_and_buffers_do_not_touch() {
        let vm = Vm::new();
        let a = vm.alloc(100, Perms::RW);
        let b = vm.alloc(16, Perms::RO);
        let mut t = Tlb::default();
        vm.write_u32(&mut t, a + 96, 7).unwrap();
        assert_eq!(vm.read_u32(&mut t, a + 96).unwrap(), 7);
        // The rest of the page is mapped; the next page is not.
        assert_eq!(vm.read_u32(&mut t, a + 4092).unwrap(), 0);
        let e = vm.read_u32(&mut t, a + 4094).unwrap_err();
        assert_eq!((e.addr, e.access), (a + 4094, Access::Read));
        assert!(b >= a + 100 + ALLOC_ALIGN - 1, "guard gap between buffers");
        let e = vm.write_u32(&mut t, b, 1).unwrap_err();
        assert_eq!(e.why, "violates the page permissions");
        vm.fill(b, &5u32.to_le_bytes()).unwrap();
        assert_eq!(vm.read_u32(&mut t, b).unwrap(), 5);
        assert!(vm.read_u32(&mut t, 0x1000).is_err());
    }

    /// Two host regions at one address (an SVM range and a KFD allocation
    /// the driver maps there): removing one by its id keeps the other.
    #[test]
    fn unmap_region_removes_only_that_region() {
        let vm = Vm::new();
        let mut a = vec![1u8; 8192];
        let mut b = vec![2u8; 4096];
        let base = 0x10_0000_0000;
        // SAFETY: both buffers outlive the Vm's use of them in this test.
        let (ra, rb) = unsafe {
            (
                vm.map_host(base, 8192, a.as_mut_ptr(), Perms::RW),
                vm.map_host(base, 4096, b.as_mut_ptr(), Perms::RW),
            )
        };
        assert_ne!(ra, rb);
        let mut t = Tlb::default();
        assert!(vm.unmap_region(rb));
        assert!(!vm.unmap_region(rb), "already gone");
        assert_eq!(vm.read_u32(&mut t, base + 4096).unwrap(), 0x0101_0101);
        assert!(vm.unmap_region(ra));
        assert!(vm.read_u32(&mut t, base).is_err());
    }

    /// A wave's load never sees half of one store of another wave's: the
    /// writer stores 1 KiB lines (8-byte words, each the round number, the
    /// last of every 128 bytes the "flag", as RCCL's LL128 lines are), the
    /// reader loads them whole and, wherever it sees a line's flag of round
    /// `r`, must see every word of that line at `r` or later. Odd sizes
    /// and offsets copy exactly.
    #[test]
    fn a_load_sees_no_half_written_store() {
        let vm = Vm::new();
        let a = vm.alloc(1024, Perms::RW);
        let rounds = 20_000u64;
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut t = Tlb::default();
                for r in 1..=rounds {
                    let line: Vec<u8> = (0..128).flat_map(|_| r.to_le_bytes()).collect();
                    vm.store(&mut t, a, &line).unwrap();
                }
            });
            s.spawn(|| {
                let mut t = Tlb::default();
                let mut buf = [0u8; 1024];
                let mut last = 0;
                while last < rounds {
                    vm.load(&mut t, a, &mut buf).unwrap();
                    let w =
                        |i: usize| u64::from_le_bytes(buf[8 * i..8 * i + 8].try_into().unwrap());
                    for line in 0..8 {
                        let flag = w(16 * line + 15);
                        for i in 16 * line..16 * line + 15 {
                            assert!(w(i) >= flag, "word {i} at {} under flag {flag}", w(i));
                        }
                    }
                    last = w(127);
                }
            });
        });
        let mut t = Tlb::default();
        let data: Vec<u8> = (0..37u8).collect();
        for off in 0..9 {
            vm.store(&mut t, a + off, &data).unwrap();
            let mut back = [0u8; 37];
            vm.load(&mut t, a + off, &mut back).unwrap();
            assert_eq!(&back[..], &data[..], "offset {off}");
        }
    }

    /// An aligned 16-byte store is one store, as a lane's dwordx4 is on the
    /// GPU (rocPRIM's `RocprimAtomicTests.Global128Bits`): two writers
    /// store 16 bytes whose halves are equal, each its own values, and a
    /// reader of the 16 bytes never sees the halves of different stores.
    #[test]
    fn aligned_16_byte_accesses_do_not_tear() {
        let vm = Vm::new();
        let a = vm.alloc(64, Perms::RW);
        let rounds = 200_000u64;
        let done = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for w in 0..2u64 {
                let (vm, done) = (&vm, &done);
                s.spawn(move || {
                    let mut t = Tlb::default();
                    for r in 0..rounds {
                        let x = (w << 63 | r).to_le_bytes();
                        let line: Vec<u8> = x.iter().chain(&x).copied().collect();
                        vm.store(&mut t, a + 16, &line).unwrap();
                    }
                    done.fetch_add(1, Ordering::Release);
                });
            }
            s.spawn(|| {
                let mut t = Tlb::default();
                let mut buf = [0u8; 16];
                while done.load(Ordering::Acquire) < 2 {
                    vm.load(&mut t, a + 16, &mut buf).unwrap();
                    let lo = u64::from_le_bytes(buf[..8].try_into().unwrap());
                    let hi = u64::from_le_bytes(buf[8..].try_into().unwrap());
                    assert_eq!(lo, hi, "a torn 16-byte load");
                }
            });
        });
        let mut t = Tlb::default();
        let mut buf = [0u8; 16];
        vm.load(&mut t, a + 16, &mut buf).unwrap();
        assert_eq!(buf[..8], buf[8..], "a torn 16-byte store");
    }

    /// The units `Vm::load` and `Vm::store` move at once: naturally
    /// aligned, up to 16 bytes (a lane's aligned dwordx4 is one).
    #[test]
    fn accesses_move_naturally_aligned_units_of_up_to_16_bytes() {
        assert_eq!(unit(0x1000, 16), 16);
        assert_eq!(unit(0x1000, 64), 16);
        assert_eq!(unit(0x1008, 16), 8);
        assert_eq!(unit(0x1000, 12), 8);
        assert_eq!(unit(0x1004, 12), 4);
        assert_eq!(unit(0x1003, 16), 1);
        // Owned buffers start 16-byte aligned on the host too.
        let vm = Vm::new();
        let a = vm.alloc(64, Perms::RW);
        let r = vm.host_range(a, 16, Access::Read).unwrap();
        assert_eq!(r.host as usize % 16, 0);
        assert_eq!(a % 16, 0);
    }

    #[test]
    fn host_ranges_are_whole_accessible_regions_of_one_epoch() {
        let vm = Vm::new();
        let a = vm.alloc(100, Perms::RW);
        let b = vm.alloc(8192, Perms::RO);
        let r = vm.host_range(a + 8, 16, Access::Read).unwrap();
        assert_eq!((r.start, r.len, r.epoch), (a, PAGE, vm.epoch()));
        assert_eq!(r.host_of(a + 8, 16), Some(r.host.wrapping_add(8)));
        assert_eq!(r.host_of(a + PAGE - 4, 8), None);
        // The last byte of the page, not one past it.
        assert!(vm.host_range(a + PAGE - 4, 4, Access::Write).is_some());
        assert!(vm.host_range(a + PAGE - 4, 5, Access::Read).is_none());
        assert!(vm.host_range(a, 0, Access::Read).is_none());
        assert!(vm.host_range(u64::MAX - 2, 4, Access::Read).is_none());
        assert!(vm.host_range(b, 4, Access::Write).is_none());
        assert!(vm.host_range(b, 4, Access::Atomic).is_none());
        assert!(vm.host_range(b + 4096, 4096, Access::Read).is_some());
        // Spanning the guard gap between two buffers.
        assert!(vm.host_range(a, b - a + 4, Access::Read).is_none());

        let mut t = Tlb::default();
        let c = &mut t.ranges;
        let p = c.resolve(&vm, a + 4, 8, RANGE_WRITE).unwrap();
        assert_eq!(p, r.host.wrapping_add(4));
        assert!(c.resolve(&vm, b, 8, RANGE_WRITE).is_none());
        assert!(c.resolve(&vm, b, 8, RANGE_READ).is_some());
        assert_eq!(c.entries.iter().filter(|e| e.len > 0).count(), 2);
        // A mapping change empties the cache: the unmapped range misses.
        assert!(vm.unmap(a));
        assert!(c.resolve(&vm, a + 4, 8, RANGE_READ).is_none());
        assert_eq!(c.epoch, vm.epoch());
        assert!(c.entries.iter().all(|e| e.len == 0));
        // More regions than entries: the oldest are replaced.
        let bufs: Vec<u64> = (0..6).map(|_| vm.alloc(64, Perms::RW)).collect();
        for &x in &bufs {
            assert!(c.resolve(&vm, x, 64, RANGE_READ).is_some());
        }
        let held: Vec<u64> = c.entries.iter().map(|e| e.start).collect();
        assert!(
            held.contains(&bufs[5]) && !held.contains(&bufs[0]),
            "{held:x?}"
        );
    }

    #[test]
    fn atomics_are_atomic_across_threads() {
        let vm = Vm::new();
        let a = vm.alloc(8, Perms::RW);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let mut t = Tlb::default();
                    for _ in 0..10_000 {
                        vm.atomic_u32(&mut t, a, |x| Some(x + 1)).unwrap();
                    }
                });
            }
        });
        let mut t = Tlb::default();
        assert_eq!(vm.read_u32(&mut t, a).unwrap(), 40_000);
        assert!(vm.atomic_u32(&mut t, a + 2, Some).is_err());
    }
}
