//! Shared virtual memory: KFD's SVM API (`AMDKFD_IOC_SVM`), which ROCr's
//! `hsa_amd_svm_attributes_set/get` and `hsa_amd_svm_prefetch_async`, and
//! through them HIP's `hipMallocManaged`, `hipMemAdvise`,
//! `hipMemPrefetchAsync` and `hipMemRangeGetAttribute`, use.
//!
//! An SVM range is ordinary process memory (an anonymous mapping the
//! runtime made) that the GPU reaches at the same address. KFD keeps, per
//! page, the attributes the process set (preferred and prefetch location,
//! which GPUs may access it and how, flags, migration granularity); pages
//! with the same attributes form one range, split and merged as attributes
//! change. This module keeps the same bookkeeping and makes every range
//! that some GPU may access reachable in the process's GPU address space
//! ([`Svm::map_into`]); with XNACK on, a new range starts accessible to
//! every GPU, as in KFD.
//!
//! Memory stays where the process has it: the emulated GPU reads and
//! writes host memory directly, so there is nothing to migrate, and a
//! prefetch or a preferred location only changes what the attributes
//! report. In local mode the GPU uses the process's own pages; a daemon
//! cannot reach those, so there the client first moves the range into a
//! memfd it shares with the daemon (as for userptr memory, see
//! `remote.rs`) and offers it with the SET_ATTR call ([`Backing::Memfd`]).
//!
//! One GPU address space serves every GPU of the process, so a GPU without
//! access to a range that another GPU may access reaches it too (the
//! hardware would fault with XNACK off).

use crate::Errno;
use rocjitsu_gpu::mem::{Perms, Vm};
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;

/// `KFD_IOCTL_SVM_OP_*`.
pub const OP_SET_ATTR: u32 = 0;
pub const OP_GET_ATTR: u32 = 1;

/// `KFD_IOCTL_SVM_ATTR_*`.
pub const ATTR_PREFERRED_LOC: u32 = 0;
pub const ATTR_PREFETCH_LOC: u32 = 1;
pub const ATTR_ACCESS: u32 = 2;
pub const ATTR_ACCESS_IN_PLACE: u32 = 3;
pub const ATTR_NO_ACCESS: u32 = 4;
pub const ATTR_SET_FLAGS: u32 = 5;
pub const ATTR_CLR_FLAGS: u32 = 6;
pub const ATTR_GRANULARITY: u32 = 7;

/// `KFD_IOCTL_SVM_LOCATION_*`: system memory, or no location.
pub const LOCATION_SYSMEM: u32 = 0;
pub const LOCATION_UNDEFINED: u32 = 0xffff_ffff;

/// `KFD_IOCTL_SVM_FLAG_*`.
pub const FLAG_HOST_ACCESS: u32 = 0x1;
pub const FLAG_COHERENT: u32 = 0x2;
pub const FLAG_HIVE_LOCAL: u32 = 0x4;
pub const FLAG_GPU_RO: u32 = 0x8;
pub const FLAG_GPU_EXEC: u32 = 0x10;
pub const FLAG_GPU_READ_MOSTLY: u32 = 0x20;
pub const FLAG_GPU_ALWAYS_MAPPED: u32 = 0x40;
pub const FLAG_EXT_COHERENT: u32 = 0x80;
/// Every flag this KFD knows (others are EINVAL).
pub const FLAGS_ALL: u32 = 0xff;

/// The size of `struct kfd_ioctl_svm_args` before its attributes, and of
/// one attribute (`{type, value}`).
pub const ARGS_SIZE: usize = 24;
pub const ATTR_SIZE: usize = 8;

pub const PAGE: u64 = 4096;
/// The largest granularity (log2 of pages) KFD keeps: bigger is clamped.
const GRANULARITY_MAX: u32 = 0x3f;
/// A new range migrates in 2 MiB blocks (2^9 pages), KFD's default.
const GRANULARITY_DEFAULT: u8 = 9;

/// The attributes of a range of pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Attrs {
    preferred: u32,
    prefetch: u32,
    /// GPUs (bit = GPU index) that may access the range, with migration.
    access: u64,
    /// GPUs that may access the range where it is.
    in_place: u64,
    flags: u32,
    granularity: u8,
}

impl Default for Attrs {
    fn default() -> Self {
        Attrs {
            preferred: LOCATION_UNDEFINED,
            prefetch: LOCATION_UNDEFINED,
            access: 0,
            in_place: 0,
            flags: FLAG_HOST_ACCESS | FLAG_COHERENT,
            granularity: GRANULARITY_DEFAULT,
        }
    }
}

/// Host memory the driver holds mapped (a daemon client's memfd).
#[derive(Debug)]
pub struct Mapping {
    _fd: OwnedFd,
    host: *mut u8,
    len: u64,
    /// The client address the mapping's first byte stands for.
    va: u64,
    /// The file (device, inode) and the offset in it of `va`.
    file: (u64, u64),
    offset: u64,
}

// SAFETY: the mapping is the driver's own and lives as long as this value;
// the pointer is only handed to the Vm, which bounds-checks every access.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd` from `offset`, standing for client
    /// addresses from `va`.
    pub fn new(fd: OwnedFd, offset: u64, va: u64, len: u64) -> Result<Mapping, Errno> {
        let len = len.checked_next_multiple_of(PAGE).ok_or(Errno::EINVAL)?;
        // SAFETY: fstat into a local.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above, on a descriptor we own.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
            return Err(Errno::EINVAL);
        }
        // The caller checked that the file holds `offset + len` bytes.
        let p = crate::memory::map_shared_at(fd.as_raw_fd(), len, offset)? as *mut libc::c_void;
        Ok(Mapping {
            _fd: fd,
            host: p.cast(),
            len,
            va,
            file: (st.st_dev, st.st_ino),
            offset,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: our own mapping; the Vm regions that pointed into it were
        // removed before the last range holding it went. (The system call
        // itself: an interposed munmap would come back here for the lock
        // this runs under.)
        unsafe { libc::syscall(libc::SYS_munmap, self.host, self.len as usize) };
    }
}

/// Where a range's bytes are for the GPU.
#[derive(Clone, Debug)]
pub enum Backing {
    /// The process's own pages at the same address (local mode).
    Host,
    /// A memfd shared with the client, mapped by the driver (daemon mode).
    Memfd(Arc<Mapping>),
}

impl Backing {
    /// The host address of client address `va`.
    fn host(&self, va: u64) -> Option<u64> {
        match self {
            Backing::Host => Some(va),
            Backing::Memfd(m) => {
                let d = va.checked_sub(m.va).filter(|d| *d < m.len)?;
                Some(m.host as u64 + d)
            }
        }
    }

    fn same(&self, other: &Backing) -> bool {
        match (self, other) {
            (Backing::Host, Backing::Host) => true,
            (Backing::Memfd(a), Backing::Memfd(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// Whether both put every address at the same byte of the same file
    /// (a client offering again the memfd it already shares).
    fn equivalent(&self, other: &Backing) -> bool {
        match (self, other) {
            (Backing::Host, Backing::Host) => true,
            (Backing::Memfd(a), Backing::Memfd(b)) => {
                a.file == b.file
                    && i128::from(a.offset) - i128::from(a.va)
                        == i128::from(b.offset) - i128::from(b.va)
            }
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
struct Range {
    end: u64,
    attrs: Attrs,
    backing: Backing,
}

/// One `{type, value}` pair of an SVM call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    pub kind: u32,
    pub value: u32,
}

/// Decodes the attribute array that follows the arguments.
pub fn decode_attrs(bytes: &[u8], n: u32) -> Result<Vec<Attr>, Errno> {
    let need = (n as usize).checked_mul(ATTR_SIZE).ok_or(Errno::EINVAL)?;
    let b = bytes.get(..need).ok_or(Errno::EINVAL)?;
    Ok(b.chunks_exact(ATTR_SIZE)
        .map(|c| Attr {
            kind: u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
            value: u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
        })
        .collect())
}

/// Encodes attributes back into the array.
pub fn encode_attrs(attrs: &[Attr], out: &mut [u8]) {
    for (a, c) in attrs.iter().zip(out.chunks_exact_mut(ATTR_SIZE)) {
        c[..4].copy_from_slice(&a.kind.to_le_bytes());
        c[4..].copy_from_slice(&a.value.to_le_bytes());
    }
}

/// The SVM ranges of one process.
#[derive(Debug, Default)]
pub struct Svm {
    /// Non-overlapping page ranges by start address.
    ranges: BTreeMap<u64, Range>,
    /// The Vm regions [`Svm::map_into`] made: what each maps, its id.
    mapped: Vec<(Run, u64)>,
}

/// A contiguous run of ranges that one Vm region maps: start, end, host
/// address of the start, permissions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Run {
    start: u64,
    end: u64,
    host: u64,
    perms: Perms,
}

impl Svm {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Checks a SET_ATTR attribute list (nothing changes when one is
    /// invalid). `gpu` maps a gpu_id to its index.
    pub fn check(attrs: &[Attr], gpu: &dyn Fn(u32) -> Option<usize>) -> Result<(), Errno> {
        for a in attrs {
            match a.kind {
                // A preferred location may be "none"; a prefetch target
                // must be system memory or a GPU.
                ATTR_PREFERRED_LOC if a.value == LOCATION_UNDEFINED => {}
                ATTR_PREFERRED_LOC | ATTR_PREFETCH_LOC => {
                    if a.value != LOCATION_SYSMEM && gpu(a.value).is_none() {
                        return Err(Errno::EINVAL);
                    }
                }
                ATTR_ACCESS | ATTR_ACCESS_IN_PLACE | ATTR_NO_ACCESS => {
                    if gpu(a.value).is_none() {
                        return Err(Errno::EINVAL);
                    }
                }
                // Any flags and any granularity (clamped) are accepted.
                ATTR_SET_FLAGS | ATTR_CLR_FLAGS | ATTR_GRANULARITY => {}
                _ => return Err(Errno::EINVAL),
            }
        }
        Ok(())
    }

    /// Splits the range that contains `at` (not at its start) in two.
    fn split(&mut self, at: u64) {
        let Some((&start, r)) = self.ranges.range(..at).next_back() else {
            return;
        };
        if r.end <= at {
            return;
        }
        let tail = r.clone();
        self.ranges.get_mut(&start).expect("just found").end = at;
        self.ranges.insert(at, tail);
    }

    /// SET_ATTR over `[start, end)`: pages without a range get one (of
    /// `backing`, which a daemon client must offer), which the GPUs of
    /// `new_access` may access (every GPU with XNACK on, none with it off,
    /// as in KFD); `backing`, when given, becomes the memory of every page
    /// of the interval.
    pub fn set(
        &mut self,
        start: u64,
        end: u64,
        attrs: &[Attr],
        backing: Option<Backing>,
        new_access: u64,
        gpu: &dyn Fn(u32) -> Option<usize>,
    ) -> Result<(), Errno> {
        Self::check(attrs, gpu)?;
        let uncovered = self.gaps(start, end);
        if !uncovered.is_empty() && backing.is_none() {
            return Err(Errno::EFAULT);
        }
        self.split(start);
        self.split(end);
        if let Some(b) = &backing {
            for r in self.ranges.range_mut(start..end).map(|(_, r)| r) {
                if !r.backing.equivalent(b) {
                    r.backing = b.clone();
                }
            }
        }
        for (s, e) in uncovered {
            let backing = backing.clone().expect("checked above");
            self.ranges.insert(
                s,
                Range {
                    end: e,
                    attrs: Attrs {
                        access: new_access,
                        ..Attrs::default()
                    },
                    backing,
                },
            );
        }
        for r in self.ranges.range_mut(start..end).map(|(_, r)| r) {
            let t = &mut r.attrs;
            for a in attrs {
                let bit = |v| gpu(v).map_or(0, |i| 1u64 << i);
                match a.kind {
                    ATTR_PREFERRED_LOC => t.preferred = a.value,
                    ATTR_PREFETCH_LOC => t.prefetch = a.value,
                    ATTR_ACCESS => {
                        t.access |= bit(a.value);
                        t.in_place &= !bit(a.value);
                    }
                    ATTR_ACCESS_IN_PLACE => {
                        t.in_place |= bit(a.value);
                        t.access &= !bit(a.value);
                    }
                    ATTR_NO_ACCESS => {
                        t.access &= !bit(a.value);
                        t.in_place &= !bit(a.value);
                    }
                    ATTR_SET_FLAGS => t.flags |= a.value,
                    ATTR_CLR_FLAGS => t.flags &= !a.value,
                    ATTR_GRANULARITY => t.granularity = a.value.min(GRANULARITY_MAX) as u8,
                    _ => unreachable!("checked above"),
                }
            }
        }
        self.merge(start, end);
        Ok(())
    }

    /// The parts of `[start, end)` no range covers.
    fn gaps(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut at = start;
        let first = self
            .ranges
            .range(..start)
            .next_back()
            .filter(|(_, r)| r.end > start);
        let covering = first.into_iter().chain(self.ranges.range(start..end));
        for (&s, r) in covering {
            if s > at {
                out.push((at, s.min(end)));
            }
            at = at.max(r.end);
            if at >= end {
                break;
            }
        }
        if at < end {
            out.push((at, end));
        }
        out
    }

    /// Joins neighbours around `[start, end)` with equal attributes and
    /// contiguous memory.
    fn merge(&mut self, start: u64, end: u64) {
        let from = self
            .ranges
            .range(..start)
            .next_back()
            .map_or(start, |(&s, _)| s);
        let keys: Vec<u64> = self.ranges.range(from..=end).map(|(&s, _)| s).collect();
        let mut prev: Option<u64> = None;
        for k in keys {
            if let Some(p) = prev {
                let (pe, pa, pb) = {
                    let r = &self.ranges[&p];
                    (r.end, r.attrs, r.backing.clone())
                };
                let r = &self.ranges[&k];
                let joins = pe == k
                    && pa == r.attrs
                    && pb.same(&r.backing)
                    && pb.host(k - 1).map(|h| h + 1) == r.backing.host(k);
                if joins {
                    let e = r.end;
                    self.ranges.remove(&k);
                    self.ranges.get_mut(&p).expect("kept").end = e;
                    continue;
                }
            }
            prev = Some(k);
        }
    }

    /// GET_ATTR over `[start, end)`, answered in place.
    ///
    /// KFD answers from the ranges that overlap the interval (pages of it
    /// in no range do not count): a location that differs between them,
    /// or is UNDEFINED in one, is UNDEFINED; SET_FLAGS gives the flags
    /// every range has, CLR_FLAGS the complement of those any range has;
    /// the granularity is the smallest; an access query (ACCESS, value =
    /// gpu_id) answers in `kind`: ACCESS if every range gives that GPU
    /// access, else ACCESS_IN_PLACE if every range gives it in-place
    /// access, else NO_ACCESS. With no range at all a new range's defaults
    /// answer (`new_access`: the GPUs a new range may access).
    /// ACCESS_IN_PLACE and NO_ACCESS are not queries (EINVAL).
    pub fn get(
        &self,
        start: u64,
        end: u64,
        attrs: &mut [Attr],
        new_access: u64,
        gpu: &dyn Fn(u32) -> Option<usize>,
    ) -> Result<(), Errno> {
        let first = self
            .ranges
            .range(..start)
            .next_back()
            .filter(|(_, r)| r.end > start);
        let mut hit: Vec<Attrs> = first
            .into_iter()
            .chain(self.ranges.range(start..end))
            .map(|(_, r)| r.attrs)
            .collect();
        if hit.is_empty() {
            hit.push(Attrs {
                access: new_access,
                ..Attrs::default()
            });
        }
        let same = |f: &dyn Fn(&Attrs) -> u32| -> u32 {
            let x = f(&hit[0]);
            if hit.iter().all(|t| f(t) == x) {
                x
            } else {
                LOCATION_UNDEFINED
            }
        };
        let access = hit.iter().fold(u64::MAX, |m, t| m & t.access);
        let in_place = hit.iter().fold(u64::MAX, |m, t| m & t.in_place);
        for a in attrs.iter_mut() {
            match a.kind {
                ATTR_PREFERRED_LOC => a.value = same(&|t| t.preferred),
                ATTR_PREFETCH_LOC => a.value = same(&|t| t.prefetch),
                ATTR_ACCESS => {
                    let bit = 1u64 << gpu(a.value).ok_or(Errno::EINVAL)?;
                    a.kind = if access & bit != 0 {
                        ATTR_ACCESS
                    } else if in_place & bit != 0 {
                        ATTR_ACCESS_IN_PLACE
                    } else {
                        ATTR_NO_ACCESS
                    };
                }
                ATTR_SET_FLAGS => a.value = hit.iter().fold(u32::MAX, |f, t| f & t.flags),
                ATTR_CLR_FLAGS => a.value = !hit.iter().fold(0, |f, t| f | t.flags),
                ATTR_GRANULARITY => {
                    a.value = hit
                        .iter()
                        .map(|t| u32::from(t.granularity))
                        .min()
                        .unwrap_or(u32::from(GRANULARITY_DEFAULT))
                }
                _ => return Err(Errno::EINVAL),
            }
        }
        Ok(())
    }

    /// Drops `[start, end)` from every range (the process unmapped it).
    /// Returns whether anything changed.
    pub fn forget(&mut self, start: u64, end: u64) -> bool {
        if self.gaps(start, end) == [(start, end)] {
            return false;
        }
        self.split(start);
        self.split(end);
        let keys: Vec<u64> = self.ranges.range(start..end).map(|(&s, _)| s).collect();
        for k in keys {
            self.ranges.remove(&k);
        }
        true
    }

    /// Whether any range overlaps `[start, end)`.
    pub fn overlaps(&self, start: u64, end: u64) -> bool {
        self.gaps(start, end) != [(start, end)]
    }

    /// Makes the GPU address space show exactly the ranges some GPU may
    /// access (with XNACK on, KFD maps such a range at the GPU's first
    /// fault; mapping it at once reads the same): contiguous runs become
    /// one Vm region each, so an access across range boundaries does not
    /// fault. Regions whose run is unchanged stay as they are, and new ones
    /// are mapped before old ones go: a queue that is copying to or from
    /// one range (SDMA on pinned host memory) while the runtime sets the
    /// attributes of another never finds its memory unmapped.
    pub fn map_into(&mut self, vm: &Vm) {
        let runs = self.runs();
        let (mut keep, gone): (Vec<_>, Vec<_>) = std::mem::take(&mut self.mapped)
            .into_iter()
            .partition(|(r, _)| runs.contains(r));
        for run in runs {
            if keep.iter().any(|(r, _)| *r == run) {
                continue;
            }
            // SAFETY: `host..host + (end - start)` is either the process's
            // own pages (local mode: kept mapped while the range exists; an
            // munmap drops the range first, see `forget`) or the driver's
            // own mapping of a client's memfd, which the range keeps alive
            // until it is removed from the Vm here.
            let id = unsafe {
                vm.map_host(
                    run.start,
                    run.end - run.start,
                    run.host as *mut u8,
                    run.perms,
                )
            };
            keep.push((run, id));
        }
        for (_, id) in gone {
            vm.unmap_region(id);
        }
        self.mapped = keep;
    }

    /// The runs of ranges some GPU may access, each contiguous in GPU and
    /// host addresses with one set of permissions.
    fn runs(&self) -> Vec<Run> {
        let mut run: Option<Run> = None;
        let mut runs = Vec::new();
        for (&s, r) in &self.ranges {
            let reach = r.attrs.access | r.attrs.in_place != 0;
            let Some(host) = r.backing.host(s).filter(|_| reach) else {
                runs.extend(run.take());
                continue;
            };
            let perms = Perms {
                read: true,
                write: r.attrs.flags & FLAG_GPU_RO == 0,
                exec: true,
            };
            match &mut run {
                Some(x) if x.end == s && x.host + (s - x.start) == host && x.perms == perms => {
                    x.end = r.end;
                }
                _ => {
                    runs.extend(run.take());
                    run = Some(Run {
                        start: s,
                        end: r.end,
                        host,
                        perms,
                    });
                }
            }
        }
        runs.extend(run);
        runs
    }

    /// The ranges (start, end), for tests and logs.
    pub fn ranges(&self) -> Vec<(u64, u64)> {
        self.ranges.iter().map(|(&s, r)| (s, r.end)).collect()
    }
}

/// Checks a call's interval: page-aligned, nonzero and not wrapping.
pub fn interval(start: u64, size: u64) -> Result<(u64, u64), Errno> {
    if start % PAGE != 0 || size % PAGE != 0 || start == 0 || size == 0 {
        return Err(Errno::EINVAL);
    }
    let end = start.checked_add(size).ok_or(Errno::EINVAL)?;
    Ok((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u32 = 0x1234;
    const G2: u32 = 0x5678;

    fn gpu(id: u32) -> Option<usize> {
        match id {
            G => Some(0),
            G2 => Some(1),
            _ => None,
        }
    }

    fn at(kind: u32, value: u32) -> Attr {
        Attr { kind, value }
    }

    fn get1(s: &Svm, start: u64, end: u64, kind: u32, value: u32) -> Attr {
        let mut a = [at(kind, value)];
        s.get(start, end, &mut a, 0, &gpu).unwrap();
        a[0]
    }

    #[test]
    fn set_splits_and_get_merges_across_ranges() {
        let mut s = Svm::default();
        let (a, b) = (0x10_0000, 0x20_0000);
        s.set(a, b, &[at(ATTR_ACCESS, G)], Some(Backing::Host), 0, &gpu)
            .unwrap();
        assert_eq!(s.ranges(), [(a, b)]);
        // A prefetch to the GPU over the first half splits the range.
        let mid = a + 0x8_0000;
        s.set(a, mid, &[at(ATTR_PREFETCH_LOC, G)], None, 0, &gpu)
            .unwrap();
        assert_eq!(s.ranges(), [(a, mid), (mid, b)]);
        assert_eq!(get1(&s, a, mid, ATTR_PREFETCH_LOC, 0).value, G);
        assert_eq!(
            get1(&s, mid, b, ATTR_PREFETCH_LOC, 0).value,
            LOCATION_UNDEFINED
        );
        // Over both halves the locations differ: UNDEFINED.
        assert_eq!(
            get1(&s, a, b, ATTR_PREFETCH_LOC, 0).value,
            LOCATION_UNDEFINED
        );
        // Setting the second half the same joins them again.
        s.set(mid, b, &[at(ATTR_PREFETCH_LOC, G)], None, 0, &gpu)
            .unwrap();
        assert_eq!(s.ranges(), [(a, b)]);
        assert_eq!(get1(&s, a, b, ATTR_PREFETCH_LOC, 0).value, G);
        // Access: GPU 0 everywhere, GPU 1 nowhere.
        assert_eq!(get1(&s, a, b, ATTR_ACCESS, G).kind, ATTR_ACCESS);
        assert_eq!(get1(&s, a, b, ATTR_ACCESS, G2).kind, ATTR_NO_ACCESS);
        s.set(a, mid, &[at(ATTR_ACCESS_IN_PLACE, G2)], None, 0, &gpu)
            .unwrap();
        assert_eq!(get1(&s, a, mid, ATTR_ACCESS, G2).kind, ATTR_ACCESS_IN_PLACE);
        assert_eq!(get1(&s, a, b, ATTR_ACCESS, G2).kind, ATTR_NO_ACCESS);
    }

    #[test]
    fn flags_and_granularity_answer_over_every_range() {
        let mut s = Svm::default();
        let (a, m, b) = (0x10_0000, 0x11_0000, 0x12_0000);
        s.set(a, b, &[], Some(Backing::Host), 0, &gpu).unwrap();
        s.set(
            a,
            m,
            &[at(ATTR_SET_FLAGS, FLAG_GPU_RO), at(ATTR_GRANULARITY, 4)],
            None,
            0,
            &gpu,
        )
        .unwrap();
        s.set(
            m,
            b,
            &[at(ATTR_CLR_FLAGS, FLAG_COHERENT), at(ATTR_GRANULARITY, 99)],
            None,
            0,
            &gpu,
        )
        .unwrap();
        // Flags all ranges have; the complement of those any range has.
        assert_eq!(get1(&s, a, b, ATTR_SET_FLAGS, 0).value, FLAG_HOST_ACCESS);
        assert_eq!(
            get1(&s, a, b, ATTR_CLR_FLAGS, 0).value,
            !(FLAG_HOST_ACCESS | FLAG_COHERENT | FLAG_GPU_RO)
        );
        assert_eq!(get1(&s, a, b, ATTR_GRANULARITY, 0).value, 4);
        assert_eq!(get1(&s, m, b, ATTR_GRANULARITY, 0).value, GRANULARITY_MAX);
        // Where there is no range, a new range's defaults answer.
        let far = 0x100_0000;
        assert_eq!(
            get1(&s, far, far + PAGE, ATTR_SET_FLAGS, 0).value,
            FLAG_HOST_ACCESS | FLAG_COHERENT
        );
        assert_eq!(
            get1(&s, far, far + PAGE, ATTR_CLR_FLAGS, 0).value,
            !(FLAG_HOST_ACCESS | FLAG_COHERENT)
        );
        assert_eq!(get1(&s, far, far + PAGE, ATTR_GRANULARITY, 0).value, 9);
        assert_eq!(
            get1(&s, far, far + PAGE, ATTR_PREFERRED_LOC, 0).value,
            LOCATION_UNDEFINED
        );
        assert_eq!(
            get1(&s, far, far + PAGE, ATTR_ACCESS, G).kind,
            ATTR_NO_ACCESS
        );
        let mut q = [at(ATTR_ACCESS, G)];
        s.get(far, far + PAGE, &mut q, 1, &gpu).unwrap();
        assert_eq!(q[0].kind, ATTR_ACCESS, "XNACK on: every GPU by default");
        // ACCESS_IN_PLACE and NO_ACCESS are not queries.
        let mut q = [at(ATTR_NO_ACCESS, G)];
        assert_eq!(s.get(a, b, &mut q, 0, &gpu), Err(Errno::EINVAL));
    }

    #[test]
    fn invalid_attributes_change_nothing() {
        let mut s = Svm::default();
        let (a, b) = (0x10_0000, 0x20_0000);
        for bad in [
            at(ATTR_ACCESS, 0x9999),
            at(ATTR_ACCESS, 0),
            at(ATTR_PREFERRED_LOC, 0x9999),
            // A prefetch needs a place: system memory or a GPU.
            at(ATTR_PREFETCH_LOC, LOCATION_UNDEFINED),
            at(8, 0),
        ] {
            let r = s.set(
                a,
                b,
                &[at(ATTR_ACCESS, G), bad],
                Some(Backing::Host),
                0,
                &gpu,
            );
            assert_eq!(r, Err(Errno::EINVAL), "{bad:?}");
            assert!(s.is_empty());
        }
        // Without memory to back them (a daemon client that offered none).
        assert_eq!(s.set(a, b, &[], None, 0, &gpu), Err(Errno::EFAULT));
        assert_eq!(interval(a + 1, PAGE), Err(Errno::EINVAL));
        assert_eq!(interval(a, 0), Err(Errno::EINVAL));
        assert_eq!(interval(0, PAGE), Err(Errno::EINVAL));
        assert_eq!(interval(u64::MAX - PAGE + 1, 2 * PAGE), Err(Errno::EINVAL));
    }

    #[test]
    fn the_gpu_sees_what_some_gpu_may_access_and_not_after_munmap() {
        let vm = Vm::new();
        let mut s = Svm::default();
        let mut buf = vec![0u64; 3 * PAGE as usize / 8 + 512];
        let base = (buf.as_mut_ptr() as u64).next_multiple_of(PAGE);
        let (a, m, b) = (base, base + PAGE, base + 3 * PAGE);
        s.set(a, b, &[], Some(Backing::Host), 0, &gpu).unwrap();
        s.map_into(&vm);
        assert!(vm.region(a).is_none(), "no GPU has access yet");
        s.set(a, m, &[at(ATTR_ACCESS, G)], None, 0, &gpu).unwrap();
        s.set(m, b, &[at(ATTR_ACCESS_IN_PLACE, G2)], None, 0, &gpu)
            .unwrap();
        s.map_into(&vm);
        // Two ranges, one region: an access across the boundary works.
        let r = vm.region(a).unwrap();
        assert_eq!((r.start, r.len), (a, b - a));
        let mut tlb = Default::default();
        vm.write_u32(&mut tlb, m - 2, 0xdead_beef).unwrap();
        // SAFETY: reading our own buffer, which the Vm wrote through.
        let host = unsafe { std::ptr::read_unaligned((m - 2) as *const u32) };
        assert_eq!(host, 0xdead_beef);
        // Read-only for the GPU.
        s.set(m, b, &[at(ATTR_SET_FLAGS, FLAG_GPU_RO)], None, 0, &gpu)
            .unwrap();
        s.map_into(&vm);
        assert!(vm.write_u32(&mut tlb, m + 8, 1).is_err());
        assert!(vm.read_u32(&mut tlb, m + 8).is_ok());
        // The process unmaps the middle page: the GPU faults there.
        assert!(s.forget(m, m + PAGE));
        s.map_into(&vm);
        assert!(vm.read_u32(&mut tlb, m + 8).is_err());
        assert!(vm.read_u32(&mut tlb, a).is_ok());
        assert!(vm.read_u32(&mut tlb, m + PAGE).is_ok());
        assert!(!s.forget(m, m + PAGE), "nothing left there");
        // No GPU may access it any more: unmapped.
        s.set(a, m, &[at(ATTR_NO_ACCESS, G)], None, 0, &gpu)
            .unwrap();
        s.map_into(&vm);
        assert!(vm.read_u32(&mut tlb, a).is_err());
        // With XNACK on a new range starts accessible to every GPU.
        s.forget(a, b);
        s.set(a, m, &[], Some(Backing::Host), 0b11, &gpu).unwrap();
        s.map_into(&vm);
        assert!(vm.read_u32(&mut tlb, a).is_ok());
        s.forget(a, b);
        s.map_into(&vm);
        drop(buf);
    }

    /// ROCr 7 pins pageable memory for hipMemcpy through SVM ranges and
    /// sets the next chunk's attributes while SDMA copies the last one
    /// (rocPRIM's `RocprimDeviceUniqueByKeyTests/9.UniqueByKey`, whose
    /// copy faulted): setting one range leaves another's region in place,
    /// and a reader of that range never misses it.
    #[test]
    fn setting_one_range_never_unmaps_another() {
        let vm = Vm::new();
        let mut s = Svm::default();
        let mut buf = vec![0u64; 8 * PAGE as usize / 8 + 512];
        let base = (buf.as_mut_ptr() as u64).next_multiple_of(PAGE);
        let (a, b) = (base, base + 2 * PAGE);
        s.set(
            a,
            a + PAGE,
            &[at(ATTR_ACCESS_IN_PLACE, G)],
            Some(Backing::Host),
            0,
            &gpu,
        )
        .unwrap();
        s.map_into(&vm);
        let id = vm.region(a).unwrap().id;
        let stop = std::sync::atomic::AtomicBool::new(false);
        let started = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|t| {
            let reader = t.spawn(|| {
                let mut tlb = Default::default();
                let mut reads = 0u64;
                started.store(true, std::sync::atomic::Ordering::Relaxed);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    vm.read_u32(&mut tlb, a + 64)
                        .expect("the pinned range stays mapped");
                    reads += 1;
                }
                reads
            });
            while !started.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
            for i in 0..2000u64 {
                let (c, d) = (b + (i % 4) * PAGE, b + (i % 4 + 1) * PAGE);
                s.set(
                    c,
                    d,
                    &[at(ATTR_ACCESS_IN_PLACE, G)],
                    Some(Backing::Host),
                    0,
                    &gpu,
                )
                .unwrap();
                s.map_into(&vm);
                s.forget(c, d);
                s.map_into(&vm);
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            assert!(reader.join().unwrap() > 0);
        });
        assert_eq!(
            vm.region(a).unwrap().id,
            id,
            "the region was never remapped"
        );
        s.forget(a, a + PAGE);
        s.map_into(&vm);
        assert!(vm.region(a).is_none());
        drop(buf);
    }

    #[test]
    fn attributes_roundtrip_through_bytes() {
        let attrs = [at(ATTR_ACCESS, G), at(ATTR_GRANULARITY, 9)];
        let mut b = vec![0u8; 16];
        encode_attrs(&attrs, &mut b);
        assert_eq!(decode_attrs(&b, 2).unwrap(), attrs);
        assert_eq!(decode_attrs(&b, 3), Err(Errno::EINVAL));
    }
}
