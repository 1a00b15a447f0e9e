//! The interposed C library functions. Each one decides in a few
//! comparisons whether the call is ours (a device path, a sysfs path we
//! serve, or a descriptor of one of our device files) and otherwise calls
//! the real function with the same arguments.
//!
//! Variadic C functions (`open`, `openat`, `ioctl`, `fcntl`) are declared
//! with their optional argument as a fixed one: on x86-64 the variadic and
//! fixed calling conventions put it in the same register.

#![allow(clippy::missing_safety_doc)]

use crate::real::real;
use crate::{driver, fds, maybe_ours};
use libc::{c_char, c_int, c_uint, c_ulong, c_void, off_t, size_t, ssize_t};
use rocjitsu_kmd::{DeviceFile, Errno};
use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStringExt;

enum Route {
    Pass,
    Device(DeviceFile),
    Redirect(CString),
}

/// Where a path goes.
///
/// # Safety
/// `path` is null or a NUL-terminated string.
unsafe fn route(path: *const c_char) -> Route {
    if path.is_null() {
        return Route::Pass;
    }
    // SAFETY: the caller passes a NUL-terminated path, as the C API requires.
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    if !maybe_ours(bytes) {
        return Route::Pass;
    }
    let Some(d) = driver() else {
        return Route::Pass;
    };
    let Ok(s) = std::str::from_utf8(bytes) else {
        return Route::Pass;
    };
    if let Some(dev) = d.device_for_path(s) {
        return Route::Device(dev);
    }
    if let Some(p) = d.sysfs_redirect(s) {
        tracing::trace!("sysfs {s} -> {}", p.display());
        if let Ok(c) = CString::new(p.into_os_string().into_vec()) {
            return Route::Redirect(c);
        }
    }
    Route::Pass
}

fn errno() -> c_int {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() }
}

fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns this thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

fn fail(e: Errno) -> c_int {
    set_errno(e.0);
    -1
}

/// Opens one of our device files: a memfd stands for it.
fn open_device(dev: DeviceFile, flags: c_int) -> c_int {
    let Some(d) = driver() else {
        return fail(Errno::ENOENT);
    };
    if let Err(e) = d.open(dev) {
        return fail(e);
    }
    let name: &[u8] = match dev {
        DeviceFile::Kfd => b"rocjitsu:/dev/kfd\0",
        DeviceFile::Render { .. } => b"rocjitsu:/dev/dri/renderD\0",
    };
    let mfd = if flags & libc::O_CLOEXEC != 0 {
        libc::MFD_CLOEXEC
    } else {
        0
    };
    // SAFETY: a NUL-terminated name and valid flags.
    let fd = unsafe { libc::memfd_create(name.as_ptr().cast(), mfd) };
    if fd >= 0 {
        fds::insert(fd, dev);
        tracing::debug!("open {dev:?} -> fd {fd}");
    }
    fd
}

/// Fills a `struct stat` for a device file.
fn device_stat(dev: DeviceFile, buf: *mut libc::stat64) {
    let (maj, min) = dev.rdev();
    // SAFETY: the caller's stat buffer, as the C API requires it to be valid.
    let st = unsafe { &mut *buf };
    // SAFETY: stat64 is plain old data; all-zero is a valid value.
    *st = unsafe { std::mem::zeroed() };
    st.st_mode = libc::S_IFCHR | 0o666;
    st.st_rdev = libc::makedev(maj, min);
    st.st_dev = libc::makedev(0, 5);
    st.st_ino = u64::from(maj) << 20 | u64::from(min);
    st.st_nlink = 1;
    st.st_blksize = 4096;
}

/// Rewrites the fstat result of a descriptor that stands for a device.
fn patch_fstat(fd: c_int, buf: *mut libc::stat64) {
    if let Some((dev, _)) = fds::get(fd) {
        device_stat(dev, buf);
    }
}

macro_rules! path_call {
    ($path:expr, $dev:ident => $on_dev:expr, $p:ident => $call:expr) => {{
        // SAFETY: the C API passes a NUL-terminated path (or null).
        match unsafe { route($path) } {
            Route::Pass => {
                let $p = $path;
                $call
            }
            Route::Device($dev) => $on_dev,
            Route::Redirect(c) => {
                let $p = c.as_ptr();
                $call
            }
        }
    }};
}

// ---- open ----------------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    path_call!(path, dev => open_device(dev, flags), p => match real!("open": unsafe extern "C" fn(*const c_char, c_int, c_uint) -> c_int) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(p, flags, mode) },
        None => fail(Errno::ENOENT),
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    path_call!(path, dev => open_device(dev, flags), p => match real!("open64": unsafe extern "C" fn(*const c_char, c_int, c_uint) -> c_int) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(p, flags, mode) },
        None => fail(Errno::ENOENT),
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __open_2(path: *const c_char, flags: c_int) -> c_int {
    // SAFETY: same contract as open without a mode.
    unsafe { open(path, flags, 0) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __open64_2(path: *const c_char, flags: c_int) -> c_int {
    // SAFETY: same contract as open64 without a mode.
    unsafe { open64(path, flags, 0) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn openat(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    path_call!(path, dev => open_device(dev, flags), p => match real!("openat": unsafe extern "C" fn(c_int, *const c_char, c_int, c_uint) -> c_int) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(dirfd, p, flags, mode) },
        None => fail(Errno::ENOENT),
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn openat64(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    path_call!(path, dev => open_device(dev, flags), p => match real!("openat64": unsafe extern "C" fn(c_int, *const c_char, c_int, c_uint) -> c_int) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(dirfd, p, flags, mode) },
        None => fail(Errno::ENOENT),
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fopen(path: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    path_call!(path, _dev => { set_errno(libc::EACCES); std::ptr::null_mut() }, p => match real!("fopen": unsafe extern "C" fn(*const c_char, *const c_char) -> *mut libc::FILE) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(p, mode) },
        None => std::ptr::null_mut(),
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fopen64(path: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    path_call!(path, _dev => { set_errno(libc::EACCES); std::ptr::null_mut() }, p => match real!("fopen64": unsafe extern "C" fn(*const c_char, *const c_char) -> *mut libc::FILE) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(p, mode) },
        None => std::ptr::null_mut(),
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn opendir(path: *const c_char) -> *mut libc::DIR {
    path_call!(path, _dev => { set_errno(libc::ENOTDIR); std::ptr::null_mut() }, p => match real!("opendir": unsafe extern "C" fn(*const c_char) -> *mut libc::DIR) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(p) },
        None => std::ptr::null_mut(),
    })
}

// ---- stat ----------------------------------------------------------------

type StatFn = unsafe extern "C" fn(*const c_char, *mut libc::stat64) -> c_int;
type XStatFn = unsafe extern "C" fn(c_int, *const c_char, *mut libc::stat64) -> c_int;

macro_rules! stat_hook {
    ($name:ident, $sym:literal) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(path: *const c_char, buf: *mut libc::stat64) -> c_int {
            path_call!(path, dev => { device_stat(dev, buf); 0 }, p => match real!($sym: StatFn) {
                // SAFETY: forwarding the caller's arguments to the real function.
                Some(f) => unsafe { f(p, buf) },
                None => fail(Errno::ENOENT),
            })
        }
    };
}
stat_hook!(stat, "stat");
stat_hook!(stat64, "stat64");
stat_hook!(lstat, "lstat");
stat_hook!(lstat64, "lstat64");

macro_rules! xstat_hook {
    ($name:ident, $sym:literal) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(ver: c_int, path: *const c_char, buf: *mut libc::stat64) -> c_int {
            path_call!(path, dev => { device_stat(dev, buf); 0 }, p => match real!($sym: XStatFn) {
                // SAFETY: forwarding the caller's arguments to the real function.
                Some(f) => unsafe { f(ver, p, buf) },
                None => fail(Errno::ENOENT),
            })
        }
    };
}
xstat_hook!(__xstat, "__xstat");
xstat_hook!(__xstat64, "__xstat64");
xstat_hook!(__lxstat, "__lxstat");
xstat_hook!(__lxstat64, "__lxstat64");

macro_rules! fstat_hook {
    ($name:ident, $sym:literal) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(fd: c_int, buf: *mut libc::stat64) -> c_int {
            let Some(f) = real!($sym: unsafe extern "C" fn(c_int, *mut libc::stat64) -> c_int) else {
                return fail(Errno::EINVAL);
            };
            // SAFETY: forwarding the caller's arguments to the real function.
            let r = unsafe { f(fd, buf) };
            if r == 0 {
                patch_fstat(fd, buf);
            }
            r
        }
    };
}
fstat_hook!(fstat, "fstat");
fstat_hook!(fstat64, "fstat64");

macro_rules! fxstat_hook {
    ($name:ident, $sym:literal) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(ver: c_int, fd: c_int, buf: *mut libc::stat64) -> c_int {
            let Some(f) = real!($sym: unsafe extern "C" fn(c_int, c_int, *mut libc::stat64) -> c_int) else {
                return fail(Errno::EINVAL);
            };
            // SAFETY: forwarding the caller's arguments to the real function.
            let r = unsafe { f(ver, fd, buf) };
            if r == 0 {
                patch_fstat(fd, buf);
            }
            r
        }
    };
}
fxstat_hook!(__fxstat, "__fxstat");
fxstat_hook!(__fxstat64, "__fxstat64");

macro_rules! fstatat_hook {
    ($name:ident, $sym:literal) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int) -> c_int {
            path_call!(path, dev => { device_stat(dev, buf); 0 }, p => match real!($sym: unsafe extern "C" fn(c_int, *const c_char, *mut libc::stat64, c_int) -> c_int) {
                Some(f) => {
                    // SAFETY: forwarding the caller's arguments to the real function.
                    let r = unsafe { f(dirfd, p, buf, flags) };
                    if r == 0 && flags & libc::AT_EMPTY_PATH != 0 {
                        patch_fstat(dirfd, buf);
                    }
                    r
                }
                None => fail(Errno::ENOENT),
            })
        }
    };
}
fstatat_hook!(fstatat, "fstatat");
fstatat_hook!(fstatat64, "fstatat64");

#[unsafe(no_mangle)]
pub unsafe extern "C" fn statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut libc::statx,
) -> c_int {
    let fill = |dev: DeviceFile| {
        let (maj, min) = dev.rdev();
        // SAFETY: the caller's statx buffer, valid per the C API.
        let st = unsafe { &mut *buf };
        // SAFETY: statx is plain old data; all-zero is a valid value.
        *st = unsafe { std::mem::zeroed() };
        st.stx_mask = libc::STATX_TYPE | libc::STATX_MODE | libc::STATX_NLINK;
        st.stx_mode = (libc::S_IFCHR | 0o666) as u16;
        st.stx_nlink = 1;
        st.stx_rdev_major = maj;
        st.stx_rdev_minor = min;
        st.stx_blksize = 4096;
    };
    path_call!(path, dev => { fill(dev); 0 }, p => match real!("statx": unsafe extern "C" fn(c_int, *const c_char, c_int, c_uint, *mut libc::statx) -> c_int) {
        Some(f) => {
            // SAFETY: forwarding the caller's arguments to the real function.
            let r = unsafe { f(dirfd, p, flags, mask, buf) };
            if r == 0 && flags & libc::AT_EMPTY_PATH != 0 && let Some((dev, _)) = fds::get(dirfd) {
                fill(dev);
            }
            r
        }
        None => fail(Errno(libc::ENOSYS)),
    })
}

// ---- access, readlink ----------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn access(path: *const c_char, mode: c_int) -> c_int {
    path_call!(path, _dev => 0, p => match real!("access": unsafe extern "C" fn(*const c_char, c_int) -> c_int) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(p, mode) },
        None => fail(Errno::ENOENT),
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn faccessat(
    dirfd: c_int,
    path: *const c_char,
    mode: c_int,
    flags: c_int,
) -> c_int {
    path_call!(path, _dev => 0, p => match real!("faccessat": unsafe extern "C" fn(c_int, *const c_char, c_int, c_int) -> c_int) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(dirfd, p, mode, flags) },
        None => fail(Errno::ENOENT),
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn readlink(path: *const c_char, buf: *mut c_char, size: size_t) -> ssize_t {
    path_call!(path, _dev => fail(Errno::EINVAL) as ssize_t, p => match real!("readlink": unsafe extern "C" fn(*const c_char, *mut c_char, size_t) -> ssize_t) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(p, buf, size) },
        None => fail(Errno::ENOENT) as ssize_t,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn readlinkat(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut c_char,
    size: size_t,
) -> ssize_t {
    path_call!(path, _dev => fail(Errno::EINVAL) as ssize_t, p => match real!("readlinkat": unsafe extern "C" fn(c_int, *const c_char, *mut c_char, size_t) -> ssize_t) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(dirfd, p, buf, size) },
        None => fail(Errno::ENOENT) as ssize_t,
    })
}

// ---- ioctl, mmap ---------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    if let Some((dev, own)) = fds::get(fd) {
        // A descriptor inherited across fork is the parent's (KFD: EBADF).
        let Some(d) = driver().filter(|_| own) else {
            return fail(Errno(libc::EBADF));
        };
        let size = rocjitsu_kmd::abi::ioc_size(request);
        let mut buf = vec![0u8; size];
        if size > 0
            && let Err(e) = rocjitsu_kmd::user::read(arg as u64, &mut buf)
        {
            return fail(e);
        }
        return match d.ioctl(dev, request, &mut buf) {
            Ok(r) => {
                if size > 0
                    && rocjitsu_kmd::abi::ioc_reads(request)
                    && let Err(e) = rocjitsu_kmd::user::write(arg as u64, &buf)
                {
                    return fail(e);
                }
                r
            }
            Err(e) => fail(e),
        };
    }
    match real!("ioctl": unsafe extern "C" fn(c_int, c_ulong, *mut c_void) -> c_int) {
        // SAFETY: forwarding the caller's arguments to the real function.
        Some(f) => unsafe { f(fd, request, arg) },
        None => fail(Errno::ENOTTY),
    }
}

type MmapFn = unsafe extern "C" fn(*mut c_void, size_t, c_int, c_int, c_int, off_t) -> *mut c_void;

/// # Safety
/// The arguments of `mmap`.
unsafe fn do_mmap(
    sym: fn() -> Option<MmapFn>,
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    let Some(real_mmap) = sym() else {
        set_errno(libc::ENODEV);
        return libc::MAP_FAILED;
    };
    if let Some((dev, own)) = fds::get(fd) {
        let Some(d) = driver().filter(|_| own) else {
            set_errno(libc::EBADF);
            return libc::MAP_FAILED;
        };
        return match d.mmap(dev, off as u64, len as u64) {
            Ok(src) => {
                // SAFETY: mapping the driver's backing memfd in place of the
                // device file, with the caller's address, protection and
                // flags.
                let p = unsafe { real_mmap(addr, len, prot, flags, src.fd, src.offset as off_t) };
                if src.close_after {
                    let e = errno();
                    fds::release(src.fd);
                    // SAFETY: the descriptor was handed to us to close once
                    // mapped; a raw close bypasses our own hook.
                    unsafe { libc::syscall(libc::SYS_close, src.fd) };
                    set_errno(e);
                }
                p
            }
            Err(e) => {
                set_errno(e.0);
                libc::MAP_FAILED
            }
        };
    }
    // SAFETY: forwarding the caller's arguments to the real function.
    unsafe { real_mmap(addr, len, prot, flags, fd, off) }
}

type MadviseFn = unsafe extern "C" fn(*mut c_void, size_t, c_int) -> c_int;

/// madvise: advice the kernel would mishandle on the driver's shared
/// memory is dropped (see `advice`); the rest passes through.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn madvise(addr: *mut c_void, len: size_t, advice: c_int) -> c_int {
    if crate::advice::suppressed(addr as u64, len as u64, advice) {
        return 0;
    }
    match real!("madvise": MadviseFn) {
        // SAFETY: the caller's arguments, to the C library's madvise.
        Some(f) => unsafe { f(addr, len, advice) },
        None => fail(Errno(libc::ENOSYS)),
    }
}

type MunmapFn = unsafe extern "C" fn(*mut c_void, size_t) -> c_int;

/// munmap: memory the GPU reaches in place (SVM ranges of local mode)
/// stops being reachable first, as KFD's MMU notifier ends SVM ranges.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: size_t) -> c_int {
    if let Some(d) = crate::existing_driver() {
        d.host_unmapped(addr as u64, len as u64);
    }
    match real!("munmap": MunmapFn) {
        // SAFETY: the caller's arguments, to the C library's munmap.
        Some(f) => unsafe { f(addr, len) },
        None => fail(Errno(libc::ENOSYS)),
    }
}

fn real_mmap() -> Option<MmapFn> {
    real!("mmap": MmapFn)
}

fn real_mmap64() -> Option<MmapFn> {
    real!("mmap64": MmapFn)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    // SAFETY: the caller's mmap arguments.
    unsafe { do_mmap(real_mmap, addr, len, prot, flags, fd, off) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    // SAFETY: the caller's mmap arguments.
    unsafe { do_mmap(real_mmap64, addr, len, prot, flags, fd, off) }
}

// ---- close, dup ----------------------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if fds::is_reserved(fd) {
        // One of the emulator's own descriptors: the application never
        // opened it, so for the application it is not open.
        return fail(Errno(libc::EBADF));
    }
    if fds::remove(fd) {
        crate::release_driver();
    }
    match real!("close": unsafe extern "C" fn(c_int) -> c_int) {
        // SAFETY: forwarding the caller's argument to the real function.
        Some(f) => unsafe { f(fd) },
        None => fail(Errno(libc::EBADF)),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn dup(fd: c_int) -> c_int {
    let Some(f) = real!("dup": unsafe extern "C" fn(c_int) -> c_int) else {
        return fail(Errno(libc::EBADF));
    };
    // SAFETY: forwarding the caller's argument to the real function.
    let new = unsafe { f(fd) };
    if new >= 0 {
        fds::duplicate(fd, new);
    }
    new
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn dup2(old: c_int, new: c_int) -> c_int {
    let Some(f) = real!("dup2": unsafe extern "C" fn(c_int, c_int) -> c_int) else {
        return fail(Errno(libc::EBADF));
    };
    if fds::is_reserved(new) && old != new {
        // dup2 would close one of our descriptors.
        return fail(Errno(libc::EBADF));
    }
    // SAFETY: forwarding the caller's arguments to the real function.
    let r = unsafe { f(old, new) };
    if r >= 0 && old != new {
        fds::remove(r);
        fds::duplicate(old, r);
    }
    r
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn dup3(old: c_int, new: c_int, flags: c_int) -> c_int {
    let Some(f) = real!("dup3": unsafe extern "C" fn(c_int, c_int, c_int) -> c_int) else {
        return fail(Errno(libc::EBADF));
    };
    if fds::is_reserved(new) {
        return fail(Errno(libc::EBADF));
    }
    // SAFETY: forwarding the caller's arguments to the real function.
    let r = unsafe { f(old, new, flags) };
    if r >= 0 {
        fds::remove(r);
        fds::duplicate(old, r);
    }
    r
}

macro_rules! fcntl_hook {
    ($name:ident, $sym:literal) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
            let Some(f) = real!($sym: unsafe extern "C" fn(c_int, c_int, c_ulong) -> c_int) else {
                return fail(Errno(libc::EBADF));
            };
            // SAFETY: forwarding the caller's arguments to the real function.
            let r = unsafe { f(fd, cmd, arg) };
            if r >= 0 && (cmd == libc::F_DUPFD || cmd == libc::F_DUPFD_CLOEXEC) {
                fds::duplicate(fd, r);
            }
            r
        }
    };
}
fcntl_hook!(fcntl, "fcntl");
fcntl_hook!(fcntl64, "fcntl64");
