//! The process table, as `/proc` shows it: the processes a session
//! started carry `MIRAGE_SESSION_DIR=<session dir>` in their environment
//! (inside containers too: the host's `/proc` sees them).

use crate::session::ENV_SESSION_DIR;
use std::path::{Path, PathBuf};

/// Every live process (not this one) whose environment holds
/// `MIRAGE_SESSION_DIR`, with the directory it names.
pub fn tagged() -> Vec<(u32, PathBuf)> {
    let me = std::process::id();
    let key = format!("{ENV_SESSION_DIR}=");
    let mut out = vec![];
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        for var in env.split(|&b| b == 0) {
            if let Some(v) = var.strip_prefix(key.as_bytes()) {
                use std::os::unix::ffi::OsStrExt;
                out.push((pid, PathBuf::from(std::ffi::OsStr::from_bytes(v))));
                break;
            }
        }
    }
    out.sort();
    out
}

/// Every live process (not this one) whose environment sets `key` to
/// exactly `value`.
pub fn with_var(key: &str, value: &str) -> Vec<u32> {
    let me = std::process::id();
    let want = format!("{key}={value}");
    let mut out = vec![];
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        if let Ok(env) = std::fs::read(e.path().join("environ"))
            && env.split(|&b| b == 0).any(|v| v == want.as_bytes())
        {
            out.push(pid);
        }
    }
    out.sort();
    out
}

/// The live processes of one session.
pub fn of_session(dir: &Path) -> Vec<u32> {
    tagged()
        .into_iter()
        .filter(|(_, d)| d == dir)
        .map(|(p, _)| p)
        .collect()
}

/// Sends a signal to each pid (errors ignored: a process may be gone).
pub fn signal_all(pids: &[u32], signal: i32) {
    for &p in pids {
        if let Ok(p) = i32::try_from(p) {
            // SAFETY: kill has no memory arguments.
            unsafe { libc::kill(p, signal) };
        }
    }
}

/// Kills a session's processes: SIGTERM, then SIGKILL after `grace` to
/// those left. Returns the pids found at first.
pub fn kill_session(dir: &Path, grace: std::time::Duration) -> Vec<u32> {
    let first = of_session(dir);
    if first.is_empty() {
        return first;
    }
    signal_all(&first, libc::SIGTERM);
    let deadline = std::time::Instant::now() + grace;
    loop {
        let left = of_session(dir);
        if left.is_empty() {
            break;
        }
        if std::time::Instant::now() >= deadline {
            signal_all(&left, libc::SIGKILL);
            std::thread::sleep(std::time::Duration::from_millis(50));
            if of_session(dir).is_empty() {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    first
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_and_kills_a_tagged_process() {
        let dir = std::env::temp_dir().join(format!("mirage-proc-{}", std::process::id()));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env(super::ENV_SESSION_DIR, &dir)
            .spawn()
            .unwrap();
        let mut seen = vec![];
        for _ in 0..100 {
            seen = super::of_session(&dir);
            if !seen.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(seen, vec![child.id()]);
        // The child stays a zombie until we wait, and a zombie has no
        // environment: kill_session sees it gone.
        let killed = super::kill_session(&dir, std::time::Duration::from_secs(2));
        assert_eq!(killed, vec![child.id()]);
        assert!(!child.wait().unwrap().success());
        assert!(super::of_session(&dir).is_empty());
    }
}
