//! A small C API for embedding a daemon in another program (a control
//! plane, a test harness): one opaque handle owns the whole chain, daemon
//! -> device (topology, GPUs, command processors) -> the drivers of its
//! clients, with no cycles; stopping it releases everything.
//!
//! ```c
//! struct rocjitsu_daemon *d = rocjitsu_daemon_start("configs/gfx942_cdna3_kmd.json", "/tmp/rj/daemon.sock");
//! // ... run programs with ROCJITSU_DAEMON_SOCKET=/tmp/rj/daemon.sock ...
//! rocjitsu_daemon_stop(d);
//! ```

use crate::daemon::{Daemon, DaemonOptions};
use crate::driver::DriverOptions;
use std::ffi::{CStr, CString, c_char};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The handle: a daemon serving on a thread of its own.
pub struct RocjitsuDaemon {
    daemon: Arc<Daemon>,
    socket: CString,
    server: Option<JoinHandle<Result<(), String>>>,
}

/// Starts a daemon for the GPUs of the configuration at `config`, listening
/// on `socket`; returns NULL (after printing why on stderr) on failure.
///
/// # Safety
/// Both arguments are NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocjitsu_daemon_start(
    config: *const c_char,
    socket: *const c_char,
) -> *mut RocjitsuDaemon {
    if config.is_null() || socket.is_null() {
        eprintln!("rocjitsu_daemon_start: a NULL argument");
        return std::ptr::null_mut();
    }
    // SAFETY: the caller passes NUL-terminated strings.
    let (config, socket) = unsafe { (CStr::from_ptr(config), CStr::from_ptr(socket)) };
    let start = || -> Result<RocjitsuDaemon, String> {
        let path = std::path::Path::new(config.to_str().map_err(|e| e.to_string())?);
        let cfg = rocjitsu_config::GpuConfig::load(path).map_err(|e| e.to_string())?;
        let daemon = Arc::new(Daemon::bind(DaemonOptions {
            driver: DriverOptions {
                config: cfg,
                runtime_dir: crate::runtime_dir(),
                threads: 0,
                watchdog: None,
            },
            socket: socket.to_str().map_err(|e| e.to_string())?.into(),
            owner: None,
            limits: Default::default(),
            restore: None,
        })?);
        let d = daemon.clone();
        let server = std::thread::Builder::new()
            .name("rj-daemon".into())
            .spawn(move || d.run())
            .map_err(|e| e.to_string())?;
        Ok(RocjitsuDaemon {
            daemon,
            socket: socket.to_owned(),
            server: Some(server),
        })
    };
    match start() {
        Ok(h) => Box::into_raw(Box::new(h)),
        Err(e) => {
            eprintln!("rocjitsu_daemon_start: {e}");
            std::ptr::null_mut()
        }
    }
}

/// The socket the daemon listens on (owned by the handle).
///
/// # Safety
/// `d` is a handle from `rocjitsu_daemon_start` not yet stopped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocjitsu_daemon_socket(d: *const RocjitsuDaemon) -> *const c_char {
    // SAFETY: the caller passes a live handle.
    unsafe { d.as_ref() }.map_or(std::ptr::null(), |d| d.socket.as_ptr())
}

/// The number of client processes the daemon serves now (-1 for NULL).
///
/// # Safety
/// `d` is a handle from `rocjitsu_daemon_start` not yet stopped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocjitsu_daemon_clients(d: *const RocjitsuDaemon) -> i64 {
    // SAFETY: the caller passes a live handle.
    unsafe { d.as_ref() }.map_or(-1, |d| d.daemon.status().clients as i64)
}

/// Stops the daemon, releases every client and frees the handle.
///
/// # Safety
/// `d` is a handle from `rocjitsu_daemon_start` (or NULL), not used after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocjitsu_daemon_stop(d: *mut RocjitsuDaemon) {
    if d.is_null() {
        return;
    }
    // SAFETY: the caller gives back the handle it got from us.
    let mut h = unsafe { Box::from_raw(d) };
    (h.daemon.stopper())();
    if let Some(t) = h.server.take() {
        let _ = t.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_serve_and_stop_through_the_c_api() {
        let dir = std::env::temp_dir().join(format!("rocjitsu-capi-{}", std::process::id()));
        let config = CString::new(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../configs/gfx90a_cdna2_kmd.json")
                .to_str()
                .unwrap(),
        )
        .unwrap();
        let socket = CString::new(dir.join("d.sock").to_str().unwrap()).unwrap();
        // SAFETY: NUL-terminated strings; the handle is used and stopped once.
        unsafe {
            let d = rocjitsu_daemon_start(config.as_ptr(), socket.as_ptr());
            assert!(!d.is_null());
            assert_eq!(CStr::from_ptr(rocjitsu_daemon_socket(d)), socket.as_c_str());
            assert_eq!(rocjitsu_daemon_clients(d), 0);
            let st = crate::daemon::query_status(&dir.join("d.sock")).unwrap();
            assert!(st.contains("\"clients\": 0"), "{st}");
            rocjitsu_daemon_stop(d);
            assert!(
                !dir.join("d.sock").exists(),
                "the socket goes with the daemon"
            );
            let bad = CString::new("/nonexistent.json").unwrap();
            assert!(rocjitsu_daemon_start(bad.as_ptr(), socket.as_ptr()).is_null());
            rocjitsu_daemon_stop(std::ptr::null_mut());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
