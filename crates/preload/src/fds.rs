//! The file descriptors the preload library owns or stands behind.
//!
//! Device files: each open of one of our device files returns a real
//! descriptor (a memfd), so the process can pass it around, poll it or
//! close it like any other; only its ioctls, mmaps and fstat are ours. A
//! descriptor inherited across fork belongs to the parent's driver: in the
//! child its ioctls fail with EBADF, as KFD's do.
//!
//! Internal descriptors (connections to the daemon, memfds received from
//! it) are moved into a reserved range, [`RESERVED_START`]..+256, and the
//! application's `close` of one of them is refused (EBADF), so the
//! runtime's many transient open/close calls, or a stray close of a number
//! it no longer owns, never cut the emulator's descriptors.

use rocjitsu_kmd::DeviceFile;
use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

static TABLE: RwLock<Option<HashMap<i32, (DeviceFile, u32)>>> = RwLock::new(None);
/// Fast path: no device file was ever opened.
static ANY: AtomicBool = AtomicBool::new(false);
/// Bumped in a child after fork: older entries belong to the parent.
static GENERATION: AtomicU32 = AtomicU32::new(0);

/// A device descriptor: the device, and whether it is this process's own
/// (false: inherited across fork).
pub fn get(fd: i32) -> Option<(DeviceFile, bool)> {
    if !ANY.load(Ordering::Relaxed) || fd < 0 {
        return None;
    }
    let t = TABLE.read().unwrap_or_else(|e| e.into_inner());
    let g = GENERATION.load(Ordering::Relaxed);
    t.as_ref()
        .and_then(|m| m.get(&fd).map(|&(d, gen_)| (d, gen_ == g)))
}

pub fn insert(fd: i32, dev: DeviceFile) {
    insert_gen(fd, dev, GENERATION.load(Ordering::Relaxed));
}

/// Records `new` as a duplicate of `old` (same device, same owner).
pub fn duplicate(old: i32, new: i32) {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    let entry = {
        let t = TABLE.read().unwrap_or_else(|e| e.into_inner());
        t.as_ref().and_then(|m| m.get(&old).copied())
    };
    if let Some((dev, g)) = entry {
        insert_gen(new, dev, g);
    }
}

fn insert_gen(fd: i32, dev: DeviceFile, g: u32) {
    let mut t = TABLE.write().unwrap_or_else(|e| e.into_inner());
    t.get_or_insert_with(HashMap::new).insert(fd, (dev, g));
    ANY.store(true, Ordering::Relaxed);
}

/// Forgets a descriptor; true when it was this process's last `/dev/kfd`.
pub fn remove(fd: i32) -> bool {
    if !ANY.load(Ordering::Relaxed) {
        return false;
    }
    let mut t = TABLE.write().unwrap_or_else(|e| e.into_inner());
    let Some(m) = t.as_mut() else {
        return false;
    };
    let g = GENERATION.load(Ordering::Relaxed);
    match m.remove(&fd) {
        Some((DeviceFile::Kfd, gen_)) if gen_ == g => {
            !m.values().any(|&(d, gg)| d == DeviceFile::Kfd && gg == g)
        }
        _ => false,
    }
}

/// After fork, in the child: every device descriptor so far is the
/// parent's.
pub fn forked() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// First descriptor of the reserved range.
pub const RESERVED_START: i32 = 4000;
const RESERVED_LEN: i32 = 256;
static RESERVED: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

fn bit(fd: i32) -> Option<(usize, u64)> {
    let i = fd
        .checked_sub(RESERVED_START)
        .filter(|&i| (0..RESERVED_LEN).contains(&i))?;
    Some(((i / 64) as usize, 1u64 << (i % 64)))
}

/// Whether `fd` is one of ours that the application may not close.
pub fn is_reserved(fd: i32) -> bool {
    bit(fd).is_some_and(|(w, b)| RESERVED[w].load(Ordering::Relaxed) & b != 0)
}

/// Moves an internal descriptor into the reserved range (close-on-exec)
/// and closes the original; returns the descriptor to use. When the range
/// is full the descriptor stays where it is.
pub fn relocate(fd: i32) -> i32 {
    // SAFETY: F_DUPFD_CLOEXEC duplicates our own descriptor.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, RESERVED_START) };
    if new < 0 {
        return fd;
    }
    let Some((w, b)) = bit(new) else {
        // SAFETY: closing the duplicate we just made.
        unsafe { libc::syscall(libc::SYS_close, new) };
        return fd;
    };
    RESERVED[w].fetch_or(b, Ordering::Relaxed);
    // SAFETY: closing the original of a descriptor we own, bypassing our
    // own close hook.
    unsafe { libc::syscall(libc::SYS_close, fd) };
    new
}

/// `fd` (an internal descriptor) is about to be closed by us.
pub fn release(fd: i32) {
    if let Some((w, b)) = bit(fd) {
        RESERVED[w].fetch_and(!b, Ordering::Relaxed);
    }
}
