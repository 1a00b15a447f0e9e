//! Copies to and from the calling process's memory through pointers found
//! inside ioctl arguments, with the kernel's `copy_from_user` /
//! `copy_to_user` behaviour: a bad pointer is `EFAULT`, never a crash.
//!
//! [`UserMemory`] is the caller's address space as the driver sees it:
//! [`Local`] when the caller is this very process (local mode: copies go
//! through `process_vm_readv`/`process_vm_writev` on ourselves, which check
//! the range the way the kernel does), [`Buffers`] when it is a daemon
//! client (the client sent copies of the ranges its arguments point at;
//! anything else is EFAULT, so a client never makes the daemon touch the
//! daemon's own memory).

use crate::Errno;
use std::sync::Mutex;

/// The memory of the process that issued an ioctl.
pub trait UserMemory {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), Errno>;
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), Errno>;
    /// Memory the caller offers for a userptr allocation of this call: a
    /// sealed memfd it already maps over the range, and the offset of the
    /// range in it (daemon clients only; taken at most once).
    fn take_userptr_backing(&self) -> Option<(std::os::fd::OwnedFd, u64)> {
        None
    }
    /// The caller's open file `fd`, as a dma-buf ioctl names it
    /// (`dma_buf_get`): EBADF when the number names none.
    fn file(&self, fd: u32) -> Result<std::os::fd::OwnedFd, Errno>;
    /// Installs `fd` among the caller's descriptors (`dma_buf_fd`),
    /// close-on-exec when asked, and returns its number there.
    fn install(&self, fd: std::os::fd::OwnedFd, cloexec: bool) -> Result<u32, Errno>;
}

/// This process's own memory.
pub struct Local;

impl UserMemory for Local {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), Errno> {
        read(addr, out)
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), Errno> {
        write(addr, data)
    }
    fn file(&self, fd: u32) -> Result<std::os::fd::OwnedFd, Errno> {
        let fd = i32::try_from(fd).map_err(|_| Errno(libc::EBADF))?;
        // SAFETY: duplicating a descriptor number; a bad one is EBADF.
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            return Err(Errno(libc::EBADF));
        }
        // SAFETY: `dup` was just created and is owned by nobody else.
        Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(dup) })
    }
    fn install(&self, fd: std::os::fd::OwnedFd, cloexec: bool) -> Result<u32, Errno> {
        let fd = std::os::fd::IntoRawFd::into_raw_fd(fd);
        if !cloexec {
            // SAFETY: clearing FD_CLOEXEC on a descriptor we own.
            unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
        }
        Ok(fd as u32)
    }
}

/// Copies of ranges of another process's memory.
#[derive(Default)]
pub struct Buffers {
    ranges: Mutex<Vec<Range>>,
    backing: Mutex<Option<(std::os::fd::OwnedFd, u64)>>,
    /// A descriptor the call gives the client ([`UserMemory::install`]),
    /// sent with the reply; the client installs it and writes its number
    /// where the argument holds it.
    installed: Mutex<Option<std::os::fd::OwnedFd>>,
}

struct Range {
    addr: u64,
    data: Vec<u8>,
    written: bool,
}

impl Buffers {
    /// Offers `fd` (at `offset`) as the memory of a userptr allocation
    /// this call makes; see [`UserMemory::take_userptr_backing`].
    pub fn offer_userptr_backing(&self, fd: std::os::fd::OwnedFd, offset: u64) {
        *self.backing.lock().unwrap_or_else(|e| e.into_inner()) = Some((fd, offset));
    }

    /// Whether an offered backing is still there (not taken).
    pub fn backing_offered(&self) -> bool {
        self.backing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// The descriptor the call gave the client, if any.
    pub fn take_installed(&self) -> Option<std::os::fd::OwnedFd> {
        self.installed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Adds the copy of `data.len()` bytes at `addr`.
    pub fn add(&self, addr: u64, data: Vec<u8>) {
        self.lock().push(Range {
            addr,
            data,
            written: false,
        });
    }

    /// The ranges the driver wrote, to be copied back into the client.
    pub fn written(self) -> Vec<(u64, Vec<u8>)> {
        self.ranges
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .into_iter()
            .filter(|r| r.written)
            .map(|r| (r.addr, r.data))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Range>> {
        self.ranges.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The range holding `[addr, addr + len)` and the offset in it.
    fn find(ranges: &[Range], addr: u64, len: usize) -> Option<(usize, usize)> {
        ranges.iter().enumerate().find_map(|(i, r)| {
            let off = addr.checked_sub(r.addr)?;
            let end = off.checked_add(len as u64)?;
            (end <= r.data.len() as u64).then_some((i, off as usize))
        })
    }
}

impl UserMemory for Buffers {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), Errno> {
        if out.is_empty() {
            return Ok(());
        }
        let ranges = self.lock();
        let (i, off) = Self::find(&ranges, addr, out.len()).ok_or(Errno::EFAULT)?;
        out.copy_from_slice(&ranges[i].data[off..off + out.len()]);
        Ok(())
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), Errno> {
        if data.is_empty() {
            return Ok(());
        }
        let mut ranges = self.lock();
        let (i, off) = Self::find(&ranges, addr, data.len()).ok_or(Errno::EFAULT)?;
        ranges[i].data[off..off + data.len()].copy_from_slice(data);
        ranges[i].written = true;
        Ok(())
    }
    fn take_userptr_backing(&self) -> Option<(std::os::fd::OwnedFd, u64)> {
        self.backing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
    /// The client sends the descriptor a dma-buf ioctl names along with
    /// the call; without one the number names nothing here.
    fn file(&self, _fd: u32) -> Result<std::os::fd::OwnedFd, Errno> {
        self.take_userptr_backing()
            .map(|(fd, _)| fd)
            .ok_or(Errno(libc::EBADF))
    }
    fn install(&self, fd: std::os::fd::OwnedFd, _cloexec: bool) -> Result<u32, Errno> {
        *self.installed.lock().unwrap_or_else(|e| e.into_inner()) = Some(fd);
        Ok(0)
    }
}

/// Whether every page of `[addr, addr + len)` is mapped in this process
/// (`mincore` fails with ENOMEM on a hole).
pub fn is_mapped(addr: u64, len: u64) -> bool {
    const CHUNK: u64 = 1 << 30;
    let mut vec = vec![0u8; (CHUNK / 4096) as usize];
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    let mut at = addr;
    while at < end {
        let n = (end - at).min(CHUNK);
        // SAFETY: mincore only reads the page tables and writes `vec`,
        // which holds one byte per page of `n` bytes.
        if unsafe { libc::mincore(at as *mut libc::c_void, n as usize, vec.as_mut_ptr()) } != 0 {
            return false;
        }
        at += n;
    }
    true
}

/// The mapping of this process that holds `addr` (from /proc/self/maps):
/// its start, end and whether it is writable; None when `addr` is not
/// mapped or its mapping is not readable.
pub fn mapping_of(addr: u64) -> Option<(u64, u64, bool)> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (range, perms) = (f.next()?, f.next()?);
        let (a, b) = range.split_once('-')?;
        let (lo, hi) = (
            u64::from_str_radix(a, 16).ok()?,
            u64::from_str_radix(b, 16).ok()?,
        );
        if (lo..hi).contains(&addr) {
            return perms
                .starts_with('r')
                .then(|| (lo, hi, perms.as_bytes().get(1) == Some(&b'w')));
        }
    }
    None
}

pub fn read(addr: u64, out: &mut [u8]) -> Result<(), Errno> {
    if out.is_empty() {
        return Ok(());
    }
    if addr == 0 {
        return Err(Errno::EFAULT);
    }
    let local = libc::iovec {
        iov_base: out.as_mut_ptr().cast(),
        iov_len: out.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: out.len(),
    };
    // SAFETY: both iovecs describe valid lengths; the kernel checks the
    // remote range and fails with EFAULT instead of touching bad memory.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == out.len() as isize {
        Ok(())
    } else {
        Err(Errno::EFAULT)
    }
}

pub fn write(addr: u64, data: &[u8]) -> Result<(), Errno> {
    if data.is_empty() {
        return Ok(());
    }
    if addr == 0 {
        return Err(Errno::EFAULT);
    }
    let local = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: as in `read`; the local buffer is only read by the kernel.
    let n = unsafe { libc::process_vm_writev(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == data.len() as isize {
        Ok(())
    } else {
        Err(Errno::EFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_faults() {
        let src = [1u8, 2, 3, 4];
        let mut dst = [0u8; 4];
        read(src.as_ptr() as u64, &mut dst).unwrap();
        assert_eq!(dst, src);
        let mut target = [0u8; 4];
        write(target.as_mut_ptr() as u64, &[9, 8, 7, 6]).unwrap();
        assert_eq!(target, [9, 8, 7, 6]);
        assert_eq!(read(0, &mut dst), Err(Errno::EFAULT));
        assert_eq!(read(8, &mut dst), Err(Errno::EFAULT));
        assert_eq!(write(0xffff_0000_0000_0000, &[1]), Err(Errno::EFAULT));
    }

    #[test]
    fn buffers_serve_only_the_ranges_they_hold() {
        let b = Buffers::default();
        b.add(0x1000, vec![1, 2, 3, 4]);
        b.add(0x8000, vec![0; 8]);
        let mut out = [0u8; 2];
        b.read(0x1002, &mut out).unwrap();
        assert_eq!(out, [3, 4]);
        assert_eq!(b.read(0x1003, &mut out), Err(Errno::EFAULT));
        assert_eq!(b.read(0xfff, &mut out), Err(Errno::EFAULT));
        // The daemon's own address space is out of reach.
        assert_eq!(b.read(out.as_ptr() as u64, &mut out), Err(Errno::EFAULT));
        b.write(0x8004, &[7, 7]).unwrap();
        assert_eq!(b.write(u64::MAX - 1, &[1, 2, 3]), Err(Errno::EFAULT));
        assert_eq!(b.written(), vec![(0x8000, vec![0, 0, 0, 0, 7, 7, 0, 0])]);
    }
}
