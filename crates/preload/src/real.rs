//! The real C library functions, found with `dlsym(RTLD_NEXT, ...)` once
//! and cached.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Looks up `name` (NUL-terminated) in the objects after this one.
pub fn lookup(slot: &AtomicUsize, name: &'static [u8]) -> usize {
    let p = slot.load(Ordering::Relaxed);
    if p != 0 {
        return p;
    }
    // SAFETY: `name` is a NUL-terminated symbol name; RTLD_NEXT asks the
    // dynamic linker for the next definition after this library.
    let f = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) } as usize;
    slot.store(f, Ordering::Relaxed);
    f
}

/// `real!(name: fn(args) -> ret)` evaluates to the real function pointer.
macro_rules! real {
    ($name:literal : $ty:ty) => {{
        static SLOT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let f = $crate::real::lookup(&SLOT, concat!($name, "\0").as_bytes());
        if f == 0 {
            None
        } else {
            // SAFETY: `f` is the address of the C library's function of
            // this name, whose C signature is `$ty`.
            Some(unsafe { std::mem::transmute::<usize, $ty>(f) })
        }
    }};
}
pub(crate) use real;
