//! `dlsym`: a function looked up through an explicit library handle
//! reaches our hook too.
//!
//! LD_PRELOAD puts this library first in the global lookup scope, so calls
//! bound by the dynamic linker, `dlsym(RTLD_DEFAULT, ..)` and
//! `dlsym(RTLD_NEXT, ..)` from the program all find our hooks. A lookup
//! through a handle searches only that object and its dependencies:
//! `dlsym(dlopen("libc.so.6"), "mmap")` (what Python's
//! `ctypes.CDLL("libc.so.6").mmap` does, e.g. tinygrad's direct-to-KFD
//! runtime) returns the C library's `mmap`, which maps the memfd standing
//! for the device file at the driver's offset instead of the allocation's
//! memory. Here such a lookup that lands on exactly the definition one of
//! our hooks stands in front of (the next one after this library) returns
//! the hook instead, as the global scope would have.
//!
//! `RTLD_NEXT` and `RTLD_DEFAULT` depend on the caller (the object after
//! which to search, the namespace): for them the entry point jumps to the C
//! library's `dlsym` with the caller's return address still on the stack,
//! so the answer is exactly the one the C library gives that caller. `dlvsym`
//! (versioned lookups) is not interposed.

use libc::{c_char, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// The C library's `dlsym`, resolved on the first call.
static REAL_DLSYM: AtomicUsize = AtomicUsize::new(0);

/// The entry point: `dlsym(handle, name)`.
///
/// x86-64 System V: `handle` in rdi, `name` in rsi. RTLD_NEXT (-1) and
/// RTLD_DEFAULT (0) tail-jump to the C library's `dlsym` (the return
/// address stays the caller's); any other handle goes to [`by_handle`].
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    // SAFETY (of the assembly): only rax and the argument registers are
    // touched before the tail jump; the slow path saves rdi/rsi around a
    // call with the stack 16-byte aligned, as the ABI requires.
    core::arch::naked_asm!(
        "mov rax, qword ptr [rip + {real}]",
        "test rax, rax",
        "jz 3f",
        "2:",
        "cmp rdi, -1",
        "je 4f",
        "test rdi, rdi",
        "je 4f",
        "jmp {by_handle}",
        "4:",
        "jmp rax",
        "3:",
        "push rdi",
        "push rsi",
        "sub rsp, 8",
        "call {resolve}",
        "add rsp, 8",
        "pop rsi",
        "pop rdi",
        "jmp 2b",
        real = sym REAL_DLSYM,
        by_handle = sym by_handle,
        resolve = sym resolve,
    )
}

/// Finds the C library's `dlsym` (the next definition after this library)
/// and stores it for the entry point; returns it.
extern "C" fn resolve() -> usize {
    let p = REAL_DLSYM.load(Ordering::Relaxed);
    if p != 0 {
        return p;
    }
    // glibc 2.34 moved dlsym into libc (version GLIBC_2.34); before that it
    // lived in libdl as GLIBC_2.2.5.
    for version in [c"GLIBC_2.34", c"GLIBC_2.2.5"] {
        // SAFETY: NUL-terminated names; dlvsym is not interposed, and
        // RTLD_NEXT from this library finds the C library's definition.
        let f = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) };
        if !f.is_null() {
            REAL_DLSYM.store(f as usize, Ordering::Relaxed);
            return f as usize;
        }
    }
    // No dlsym at all: every lookup then fails (null) rather than jumping
    // to address 0.
    fail_all as DlsymFn as usize
}

extern "C" fn fail_all(_: *mut c_void, _: *const c_char) -> *mut c_void {
    std::ptr::null_mut()
}

fn real() -> DlsymFn {
    // SAFETY: `resolve` returns the address of a function with dlsym's C
    // signature (the C library's, or `fail_all`).
    unsafe { std::mem::transmute::<usize, DlsymFn>(resolve()) }
}

/// A lookup through an explicit handle: the C library's answer, unless it
/// is the very definition one of our hooks interposes.
extern "C" fn by_handle(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    let real = real();
    // SAFETY: the caller's arguments, to the C library's dlsym.
    let found = unsafe { real(handle, name) };
    if found.is_null() || name.is_null() {
        return found;
    }
    // SAFETY: `name` is the caller's NUL-terminated symbol name.
    let hook = unsafe { hook_for(real, name) };
    // Our own lookups may have failed (a name this library does not
    // define): the caller's lookup succeeded, so dlerror() reports nothing.
    // SAFETY: dlerror only reads and resets this thread's error state.
    unsafe { libc::dlerror() };
    match hook {
        Some((hook, next)) if next == found => hook,
        _ => found,
    }
}

/// This library's own handle and load address.
fn this_library() -> Option<(usize, usize)> {
    static SELF: OnceLock<Option<(usize, usize)>> = OnceLock::new();
    *SELF.get_or_init(|| {
        // SAFETY: dladdr fills `info` for an address inside this library;
        // dlopen with RTLD_NOLOAD only returns a handle of a loaded object.
        unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            if libc::dladdr(by_handle as *const c_void, &mut info) == 0 || info.dli_fname.is_null()
            {
                return None;
            }
            let h = libc::dlopen(info.dli_fname, libc::RTLD_LAZY | libc::RTLD_NOLOAD);
            (!h.is_null()).then_some((h as usize, info.dli_fbase as usize))
        }
    })
}

/// If this library defines `name` (one of its hooks): the hook and the
/// definition it stands in front of (the next one after this library).
///
/// # Safety
/// `name` is NUL-terminated.
unsafe fn hook_for(real: DlsymFn, name: *const c_char) -> Option<(*mut c_void, *mut c_void)> {
    let (handle, base) = this_library()?;
    // SAFETY: our own handle (searches this library first, then its
    // dependencies) and the caller's NUL-terminated name.
    let ours = unsafe { real(handle as *mut c_void, name) };
    if ours.is_null() {
        return None;
    }
    // SAFETY: dladdr only reads the loader's tables.
    let defined_here = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        libc::dladdr(ours, &mut info) != 0 && info.dli_fbase as usize == base
    };
    if !defined_here {
        return None;
    }
    // SAFETY: called from this library, RTLD_NEXT finds the definition
    // after it, the one the hook forwards to.
    let next = unsafe { real(libc::RTLD_NEXT, name) };
    Some((ours, next))
}
