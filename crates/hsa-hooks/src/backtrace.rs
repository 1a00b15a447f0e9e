//! The opt-in `signal_backtrace` diagnostic (`ROCJITSU_DBT_SIGNAL_BACKTRACE=1`):
//! a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) prints the
//! faulting address and a stack trace on stderr, then the previous
//! disposition takes over (the process dies as it would have).
//!
//! Capturing a trace allocates and reads debug information, which is not
//! async-signal-safe; to make the handler's own capture as safe as it can
//! be, one trace is taken and symbolised before the handler is installed,
//! so the unwinder's lazy state (the loaded-object list, the symbol tables)
//! already exists. The handler runs on an alternate stack, so a stack
//! overflow is reported too.

use std::sync::Mutex;

const SIGNALS: [libc::c_int; 5] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGABRT];

/// The dispositions in place before ours, restored when a signal arrives.
static PREVIOUS: Mutex<Vec<(libc::c_int, libc::sigaction)>> = Mutex::new(Vec::new());

fn raw_write(s: &str) {
    // SAFETY: writes an owned buffer to stderr.
    unsafe { libc::write(2, s.as_ptr().cast(), s.len()) };
}

extern "C" fn on_fatal(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = if info.is_null() { std::ptr::null_mut() } else { unsafe { (*info).si_addr() } };
    raw_write(&format!(
        "[rocjitsu-hooks {}] fatal signal {sig} at address {addr:p}; stack:\n",
        std::process::id()
    ));
    let bt = std::backtrace::Backtrace::force_capture();
    raw_write(&format!("{bt}\n"));
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
    let warm = std::backtrace::Backtrace::force_capture().to_string();
    crate::log!(Debug, "signal_backtrace: unwinder prewarmed ({} bytes of trace)", warm.len());
    // SAFETY: a zeroed stack_t/sigaction are valid starting values; the
    // alternate stack is leaked so it lives as long as the handler.
    unsafe {
        let size = 256 * 1024;
        let stack: &'static mut [u8] = Box::leak(vec![0u8; size].into_boxed_slice());
        let ss = libc::stack_t { ss_sp: stack.as_mut_ptr().cast(), ss_flags: 0, ss_size: size };
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
