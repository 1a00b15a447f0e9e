//! `librocjitsu.so`: loaded with LD_PRELOAD into an unmodified ROCm
//! program, it interposes the C library calls through which the ROCm user
//! space reaches the kernel driver, and routes those that name our device
//! files, file descriptors or sysfs paths to the simulated driver
//! (`rocjitsu_kmd`). Everything else goes to the real function untouched.
//! This crate only routes; it holds no simulation logic.
//!
//! Set-up comes from the environment (the `rocjitsu` launcher sets it):
//! `ROCJITSU_CONFIG` (GPU configuration JSON; without it nothing is
//! routed), `ROCJITSU_RUNTIME_DIR`, `ROCJITSU_THREADS`,
//! `ROCJITSU_WATCHDOG` (seconds), `ROCJITSU_LOG` (a `tracing` filter).

mod fds;
mod hooks;
mod log;
mod real;

use rocjitsu_kmd::{DriverOptions, SimulatedDriver};
use std::sync::OnceLock;

static DRIVER: OnceLock<Option<SimulatedDriver>> = OnceLock::new();

/// True for paths that may be ours (cheap test, no allocation, no driver).
fn maybe_ours(path: &[u8]) -> bool {
    path.starts_with(b"/dev/kfd")
        || path.starts_with(b"/dev/dri/renderD")
        || rocjitsu_kmd::sysfs::is_redirected(path)
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

thread_local! {
    /// Set while this thread creates the driver: the files it reads then
    /// (the configuration, the host's amdgpu.ids) are the host's own.
    static IN_INIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The driver, created on first use.
fn driver() -> Option<&'static SimulatedDriver> {
    if let Some(d) = DRIVER.get() {
        return d.as_ref();
    }
    if IN_INIT.try_with(|c| c.get()).unwrap_or(true) {
        return None;
    }
    DRIVER
        .get_or_init(|| {
            IN_INIT.with(|c| c.set(true));
            let d = create();
            IN_INIT.with(|c| c.set(false));
            d
        })
        .as_ref()
}

fn create() -> Option<SimulatedDriver> {
    let path = std::env::var_os("ROCJITSU_CONFIG")?;
    log::init(&std::env::var("ROCJITSU_LOG").unwrap_or_default());
    let config = match rocjitsu_gpu::config::GpuConfig::load(&path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rocjitsu: {e}; no GPU is emulated");
            return None;
        }
    };
    let runtime_dir = rocjitsu_kmd::runtime_dir();
    let opts = DriverOptions {
        config,
        runtime_dir,
        threads: env_u64("ROCJITSU_THREADS").unwrap_or(0) as usize,
        watchdog: env_u64("ROCJITSU_WATCHDOG")
            .filter(|&s| s > 0)
            .map(std::time::Duration::from_secs),
    };
    match SimulatedDriver::new(opts) {
        Ok(d) => {
            tracing::info!(
                "emulating the GPUs of {} (sysfs at {})",
                path.to_string_lossy(),
                d.sysfs().root().display()
            );
            Some(d)
        }
        Err(e) => {
            eprintln!("rocjitsu: {e}; no GPU is emulated");
            None
        }
    }
}
