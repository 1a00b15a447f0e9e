//! `madvise` on the driver's shared memory. Linux 6.17's shmem turns
//! MADV_HUGEPAGE and MADV_DONTFORK on a memfd mapping into SIGBUS on the
//! next access; the runtime gives both advices for its GPU allocations,
//! which here are memfds (`/memfd:rocjitsu-bo-N`, `/memfd:rocjitsu-userptr-N`).
//! On such a kernel they are answered with success without reaching it (the
//! advice is a hint and a fork-time nicety; dropping it loses no data). On
//! every other kernel madvise passes through. `ROCJITSU_SHMEM_MADVISE=pass`
//! or `=suppress` overrides the kernel check.

use std::sync::atomic::{AtomicU8, Ordering};

/// Whether this advice on `[addr, addr + len)` is to be dropped.
pub fn suppressed(addr: u64, len: u64, advice: libc::c_int) -> bool {
    if advice != libc::MADV_HUGEPAGE && advice != libc::MADV_DONTFORK {
        return false;
    }
    if !affected() {
        return false;
    }
    let drop = std::fs::read_to_string("/proc/self/maps")
        .is_ok_and(|m| overlaps_driver_memfd(&m, addr, len));
    if drop {
        let name = if advice == libc::MADV_HUGEPAGE {
            "MADV_HUGEPAGE"
        } else {
            "MADV_DONTFORK"
        };
        tracing::debug!(
            "madvise({addr:#x}, {len:#x}, {name}) on the driver's memory: not passed on"
        );
    }
    drop
}

/// Cached: 1 pass, 2 suppress.
static MODE: AtomicU8 = AtomicU8::new(0);

fn affected() -> bool {
    match MODE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let release = uname_release();
            let on = match std::env::var(rocjitsu_config::env::SHMEM_MADVISE).as_deref() {
                Ok("pass") => false,
                Ok("suppress") => true,
                _ => release.as_deref().is_some_and(kernel_is_affected),
            };
            if on {
                tracing::debug!(
                    "kernel {}: MADV_HUGEPAGE and MADV_DONTFORK on the driver's memory are not passed on",
                    release.as_deref().unwrap_or("?")
                );
            }
            MODE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
    }
}

fn uname_release() -> Option<String> {
    // SAFETY: uname fills the structure it is given.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    // SAFETY: the kernel NUL-terminates the release.
    let r = unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) };
    Some(r.to_string_lossy().into_owned())
}

/// Linux 6.17.x (a release such as "6.17.3-arch1-1").
fn kernel_is_affected(release: &str) -> bool {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    matches!((parts.next(), parts.next()), (Some("6"), Some("17")))
}

/// Whether `[addr, addr + len)` overlaps a mapping of one of the driver's
/// memfds, per the text of /proc/self/maps.
fn overlaps_driver_memfd(maps: &str, addr: u64, len: u64) -> bool {
    let end = addr.saturating_add(len.max(1));
    maps.lines().any(|line| {
        let mut f = line.split_whitespace();
        let Some((a, b)) = f.next().and_then(|r| r.split_once('-')) else {
            return false;
        };
        let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) else {
            return false;
        };
        a < end && addr < b && f.nth(4).is_some_and(|p| p.starts_with("/memfd:rocjitsu-"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_linux_6_17_is_affected() {
        for r in ["6.17.0", "6.17.3-arch1-1", "6.17-rc4"] {
            assert!(kernel_is_affected(r), "{r}");
        }
        for r in [
            "6.18.44-fc-v669",
            "6.16.9",
            "5.17.1",
            "6.1.0-27-amd64",
            "16.17.0",
            "",
        ] {
            assert!(!kernel_is_affected(r), "{r}");
        }
    }

    #[test]
    fn only_ranges_touching_a_driver_memfd_match() {
        let maps = "\
7f0000000000-7f0000200000 rw-s 00000000 00:01 1234 /memfd:rocjitsu-bo-7 (deleted)
7f0000200000-7f0000400000 rw-p 00000000 00:00 0 
7f0000400000-7f0000401000 rw-s 00000000 00:01 99 /memfd:other (deleted)
7f0000500000-7f0000502000 rw-s 00000000 00:01 77 /memfd:rocjitsu-userptr-3 (deleted)
";
        assert!(overlaps_driver_memfd(maps, 0x7f00_0000_0000, 0x1000));
        assert!(
            overlaps_driver_memfd(maps, 0x7f00_001f_f000, 0x2000),
            "straddles the end"
        );
        assert!(overlaps_driver_memfd(maps, 0x7f00_0050_1000, 0x1000));
        assert!(
            !overlaps_driver_memfd(maps, 0x7f00_0020_0000, 0x1000),
            "anonymous"
        );
        assert!(
            !overlaps_driver_memfd(maps, 0x7f00_0040_0000, 0x1000),
            "another memfd"
        );
        assert!(
            !overlaps_driver_memfd(maps, 0x7f00_0000_0000 - 0x1000, 0x1000),
            "just before"
        );
    }

    #[test]
    fn other_advice_always_passes() {
        assert!(!suppressed(0x1000, 0x1000, libc::MADV_DONTNEED));
        assert!(!suppressed(0x1000, 0x1000, libc::MADV_WILLNEED));
    }
}
