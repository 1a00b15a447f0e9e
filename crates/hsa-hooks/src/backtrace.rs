//! The opt-in `signal_backtrace` diagnostic (`ROCJITSU_DBT_SIGNAL_BACKTRACE=1`):
//! a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) prints the
//! faulting address and a stack trace on stderr, then the previous
//! disposition takes over (the process dies as it would have).
//!
//! The trace comes from glibc's `backtrace` (the libgcc unwinder), one line
//! per frame: the program counter, the object it lies in with the offset
//! (usable with `addr2line -e OBJECT OFFSET` even for stripped ROCm
//! libraries) and the nearest dynamic symbol. The first `backtrace` call
//! loads libgcc_s and allocates, which is not async-signal-safe, so one
//! trace is taken before the handler is installed (prewarming); the
//! handler's own calls then only walk the stack and format into a fixed
//! buffer. It runs on an alternate stack, so a stack overflow is reported too.

use std::sync::Mutex;

const SIGNALS: [libc::c_int; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
];

/// The dispositions in place before ours, restored when a signal arrives.
static PREVIOUS: Mutex<Vec<(libc::c_int, libc::sigaction)>> = Mutex::new(Vec::new());

fn raw_write(s: &str) {
    // SAFETY: writes an owned buffer to stderr.
    unsafe { libc::write(2, s.as_ptr().cast(), s.len()) };
}

unsafe extern "C" {
    fn backtrace(buffer: *mut *mut libc::c_void, size: libc::c_int) -> libc::c_int;
}

/// Writes "pc (object+offset symbol)" for one address, without allocating.
fn write_frame(i: usize, pc: usize) {
    let mut line = Line::default();
    let _ = std::fmt::Write::write_fmt(&mut line, format_args!("  #{i:<2} {pc:#014x}"));
    // SAFETY: dladdr only reads the loader's tables; a zeroed Dl_info is valid.
    let mut dl: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::dladdr(pc as *const libc::c_void, &mut dl) } != 0 {
        let name = |p: *const libc::c_char| {
            if p.is_null() {
                ""
            } else {
                // SAFETY: dladdr's names are NUL-terminated strings of the loader.
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_str()
                    .unwrap_or("?")
            }
        };
        let _ = std::fmt::Write::write_fmt(
            &mut line,
            format_args!(" {}+{:#x}", name(dl.dli_fname), pc - dl.dli_fbase as usize),
        );
        if !dl.dli_sname.is_null() {
            let _ = std::fmt::Write::write_fmt(
                &mut line,
                format_args!(
                    " ({}+{:#x})",
                    name(dl.dli_sname),
                    pc - dl.dli_saddr as usize
                ),
            );
        }
    }
    line.push_newline();
    raw_write(line.as_str());
}

/// A fixed line buffer (no allocation in the handler).
struct Line {
    buf: [u8; 512],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line {
            buf: [0; 512],
            len: 0,
        }
    }
}

impl Line {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("?\n")
    }
    fn push_newline(&mut self) {
        let n = self.len.min(self.buf.len() - 1);
        self.buf[n] = b'\n';
        self.len = n + 1;
    }
}

impl std::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = self.buf.len() - 1 - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Walks and prints the current stack.
fn write_stack() {
    let mut frames = [std::ptr::null_mut::<libc::c_void>(); 64];
    // SAFETY: backtrace fills at most 64 entries of the buffer.
    let n = unsafe { backtrace(frames.as_mut_ptr(), 64) }.max(0) as usize;
    for (i, pc) in frames[..n].iter().enumerate() {
        write_frame(i, *pc as usize);
    }
}

extern "C" fn on_fatal(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let addr = if info.is_null() {
        0
    } else {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
        unsafe { (*info).si_addr() as usize }
    };
    let pc = if ctx.is_null() {
        0
    } else {
        // SAFETY: the kernel passes the interrupted context for SA_SIGINFO handlers.
        unsafe {
            (*ctx.cast::<libc::ucontext_t>()).uc_mcontext.gregs[libc::REG_RIP as usize] as usize
        }
    };
    let mut head = Line::default();
    let _ = std::fmt::Write::write_fmt(
        &mut head,
        format_args!(
            "[rocjitsu-hooks {}] fatal signal {sig} (address {addr:#x}); faulting pc:",
            std::process::id()
        ),
    );
    head.push_newline();
    raw_write(head.as_str());
    write_frame(0, pc);
    raw_write("  stack (the handler's frames first):\n");
    write_stack();
    // Restore what was there before and let it act.
    if let Ok(prev) = PREVIOUS.try_lock() {
        for (s, act) in prev.iter() {
            if *s == sig {
                // SAFETY: reinstalls the disposition saved at install time.
                unsafe { libc::sigaction(sig, act, std::ptr::null_mut()) };
            }
        }
    }
    if sig == libc::SIGABRT {
        // SAFETY: re-raises the signal under the restored disposition.
        unsafe { libc::raise(sig) };
    }
    // A fault re-executes the faulting instruction under the restored disposition.
}

/// Prewarms the unwinder and installs the handler.
pub fn install() {
    let mut frames = [std::ptr::null_mut::<libc::c_void>(); 64];
    // SAFETY: backtrace fills at most 64 entries; this first call loads the unwinder.
    let n = unsafe { backtrace(frames.as_mut_ptr(), 64) };
    // SAFETY: a zeroed Dl_info is valid; dladdr reads the loader's tables.
    let mut dl: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::dladdr(frames[0], &mut dl) };
    crate::log!(Debug, "signal_backtrace: unwinder prewarmed ({n} frames)");
    // SAFETY: a zeroed stack_t/sigaction are valid starting values; the
    // alternate stack is leaked so it lives as long as the handler.
    unsafe {
        let size = 256 * 1024;
        let stack: &'static mut [u8] = Box::leak(vec![0u8; size].into_boxed_slice());
        let ss = libc::stack_t {
            ss_sp: stack.as_mut_ptr().cast(),
            ss_flags: 0,
            ss_size: size,
        };
        libc::sigaltstack(&ss, std::ptr::null_mut());
        let mut prev = PREVIOUS.lock().unwrap_or_else(|e| e.into_inner());
        for sig in SIGNALS {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_fatal as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut act.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, &act, &mut old) == 0 {
                prev.push((sig, old));
            }
        }
    }
    crate::log!(Info, "signal_backtrace: fatal-signal handler installed");
}
