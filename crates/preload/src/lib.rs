//! `librocjitsu.so`: loaded with LD_PRELOAD into an unmodified ROCm
//! program, it interposes the C library calls through which the ROCm user
//! space reaches the kernel driver, and routes those that name our device
//! files, file descriptors or sysfs paths to the driver (`rocjitsu_kmd`):
//! the simulated driver in this process (local mode), or a daemon that
//! hosts the GPU for several processes (daemon mode). Everything else goes
//! to the real function untouched. This crate only routes; it holds no
//! simulation logic.
//!
//! Set-up comes from the environment (the `rocjitsu` launcher sets it):
//! `ROCJITSU_DAEMON_SOCKET` (daemon mode: the daemon's socket), else
//! `ROCJITSU_CONFIG` (local mode: the GPU configuration JSON; with an
//! enabled `dbt_guest` block, the DBT guest layer `GuestKfd` over the host
//! driver of its backend: the simulator, or for `hardware` the daemon at
//! `ROCJITSU_DBT_HOST_SOCKET`, else the real `/dev/kfd`); without either
//! nothing is routed. `ROCJITSU_RUNTIME_DIR`, `ROCJITSU_THREADS`,
//! `ROCJITSU_WATCHDOG` (seconds), `ROCJITSU_LOG` (a `tracing` filter),
//! `ROCJITSU_SHMEM_MADVISE` (see `advice`).

mod advice;
mod dlsym;
mod fds;
mod hooks;
mod log;
mod real;

use rocjitsu_kmd::remote::{Fds, RemoteDriver};
use rocjitsu_kmd::{Driver, DriverOptions, SimulatedDriver};
use std::sync::{Arc, Once, RwLock};

/// The driver of this process, created on first use. After fork the
/// child starts without one (the parent's belongs to the parent).
static DRIVER: RwLock<Option<Arc<dyn Driver>>> = RwLock::new(None);
/// Set when creating the driver failed: not retried.
static FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static CREATE: std::sync::Mutex<()> = std::sync::Mutex::new(());
static ATFORK: Once = Once::new();

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

/// The driver if there is one already (never creates it).
fn existing_driver() -> Option<Arc<dyn Driver>> {
    DRIVER.try_read().ok()?.as_ref().cloned()
}

/// The driver, created on first use.
fn driver() -> Option<Arc<dyn Driver>> {
    if let Some(d) = DRIVER.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
        return Some(d.clone());
    }
    if FAILED.load(std::sync::atomic::Ordering::Relaxed)
        || IN_INIT.try_with(|c| c.get()).unwrap_or(true)
    {
        return None;
    }
    let _one = CREATE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = DRIVER.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
        return Some(d.clone());
    }
    IN_INIT.with(|c| c.set(true));
    let d = create();
    IN_INIT.with(|c| c.set(false));
    match d {
        Some(d) => {
            *DRIVER.write().unwrap_or_else(|e| e.into_inner()) = Some(d.clone());
            ATFORK.call_once(|| {
                // SAFETY: registering a child handler that only touches our
                // own statics.
                unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
            });
            Some(d)
        }
        None => {
            FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
            None
        }
    }
}

/// The process closed its last `/dev/kfd`: a daemon's client lets go of
/// its GPU; the next open starts afresh.
fn release_driver() {
    let d = DRIVER.read().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(d) = d
        && d.release()
    {
        let mut cur = DRIVER.write().unwrap_or_else(|e| e.into_inner());
        if cur.as_ref().is_some_and(|c| Arc::ptr_eq(c, &d)) {
            *cur = None;
        }
    }
}

/// In a forked child: the driver and the device descriptors so far are the
/// parent's. The child gets a driver of its own (a new daemon client, or a
/// new simulated GPU) when it opens a device again, as with KFD.
extern "C" fn after_fork_in_child() {
    let old = DRIVER.write().unwrap_or_else(|e| e.into_inner()).take();
    // The parent's driver must not be dropped here: its threads do not
    // exist in the child, and its connections are the parent's.
    if old.is_some() {
        // The parent's userptr pages are shared with its daemon: the child
        // gets private copies, as with anonymous memory.
        rocjitsu_kmd::remote::privatize_userptr_mappings();
    }
    std::mem::forget(old);
    fds::forked();
}

fn create() -> Option<Arc<dyn Driver>> {
    let socket = std::env::var_os(rocjitsu_config::env::DAEMON_SOCKET).filter(|s| !s.is_empty());
    let config_path = std::env::var_os(rocjitsu_config::env::CONFIG);
    if socket.is_none() && config_path.is_none() {
        return None;
    }
    log::init(&std::env::var(rocjitsu_config::env::LOG).unwrap_or_default());
    let runtime_dir = rocjitsu_kmd::runtime_dir();
    if let Some(socket) = socket {
        return match RemoteDriver::connect(socket.as_ref(), &runtime_dir, fds_hooks()) {
            Ok(d) => Some(Arc::new(d)),
            Err(e) => {
                eprintln!("rocjitsu: {e}; no GPU is emulated");
                None
            }
        };
    }
    let path = config_path?;
    let config = match rocjitsu_config::GpuConfig::load(&path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rocjitsu: {e}; no GPU is emulated");
            return None;
        }
    };
    if let Some(guest) = config.guest().cloned() {
        return guest_driver(config, &guest, runtime_dir, fds_hooks());
    }
    match SimulatedDriver::new(driver_options(config, runtime_dir)) {
        Ok(d) => {
            tracing::info!(
                "emulating the GPUs of {} (sysfs at {})",
                path.to_string_lossy(),
                d.sysfs().root().display()
            );
            Some(Arc::new(d))
        }
        Err(e) => {
            eprintln!("rocjitsu: {e}; no GPU is emulated");
            None
        }
    }
}

fn fds_hooks() -> Fds {
    Fds {
        relocate: fds::relocate,
        release: fds::release,
    }
}

fn driver_options(
    config: rocjitsu_config::GpuConfig,
    runtime_dir: std::path::PathBuf,
) -> DriverOptions {
    DriverOptions {
        config,
        runtime_dir,
        threads: env_u64(rocjitsu_config::env::THREADS).unwrap_or(0) as usize,
        watchdog: env_u64(rocjitsu_config::env::WATCHDOG)
            .filter(|&s| s > 0)
            .map(std::time::Duration::from_secs),
    }
}

/// DBT guest mode: the guest layer over the host driver its backend names
/// (the simulator in this process; for `hardware`, the daemon at
/// `ROCJITSU_DBT_HOST_SOCKET`, else the machine's real `/dev/kfd`).
fn guest_driver(
    config: rocjitsu_config::GpuConfig,
    guest: &rocjitsu_config::DbtGuest,
    runtime_dir: std::path::PathBuf,
    fds: Fds,
) -> Option<Arc<dyn Driver>> {
    use rocjitsu_config::DbtBackend;
    let result = match guest.execution_backend {
        DbtBackend::Simulator => {
            SimulatedDriver::new(driver_options(config.clone(), runtime_dir.clone())).and_then(
                |d| rocjitsu_kmd::GuestKfd::new(Arc::new(d), &config, guest, &runtime_dir),
            )
        }
        DbtBackend::Hardware => {
            match std::env::var_os(rocjitsu_config::env::DBT_HOST_SOCKET).filter(|s| !s.is_empty())
            {
                Some(socket) => {
                    RemoteDriver::connect(socket.as_ref(), &runtime_dir, fds).and_then(|d| {
                        let c = d.config().clone();
                        rocjitsu_kmd::GuestKfd::new(Arc::new(d), &c, guest, &runtime_dir)
                    })
                }
                // The machine's own KFD.
                None => rocjitsu_kmd::KfdPassthrough::open().and_then(|d| {
                    rocjitsu_kmd::GuestKfd::over_real(Arc::new(d), guest, &runtime_dir)
                }),
            }
        }
    };
    match result {
        Ok(d) => Some(Arc::new(d)),
        Err(e) => {
            eprintln!("rocjitsu: DBT guest mode: {e}; no GPU is emulated");
            None
        }
    }
}
