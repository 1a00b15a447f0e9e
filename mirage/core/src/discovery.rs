//! Finding the rocjitsu libraries mirage injects into executions.
//!
//! `librocjitsu.so` (the LD_PRELOAD interposer of local mode) and
//! `librocjitsu_hooks.so` (the HSA tools library of DBT guest mode and
//! hotswap) are looked for in order: `$ROCJITSU_PRELOAD` /
//! `$ROCJITSU_HOOKS` (a file), beside the running executable (cargo puts
//! `mirage` and both libraries in the same `target/release`), one directory
//! up (test executables live in `target/release/deps`),
//! `<exe>/../lib/rocjitsu`, `/usr/local/lib/rocjitsu`, `/usr/lib/rocjitsu`.

use std::path::PathBuf;

pub const PRELOAD_NAME: &str = "librocjitsu.so";
pub const HOOKS_NAME: &str = "librocjitsu_hooks.so";

/// Where `librocjitsu.so` was found, or every place searched.
pub fn rocjitsu_preload() -> Result<PathBuf, String> {
    find(
        PRELOAD_NAME,
        rocjitsu_config::env::PRELOAD,
        "cargo build --release -p rocjitsu-preload",
    )
}

/// Where `librocjitsu_hooks.so` was found, or every place searched.
pub fn rocjitsu_hooks() -> Result<PathBuf, String> {
    find(
        HOOKS_NAME,
        rocjitsu_config::env::HOOKS,
        "cargo build --release -p rocjitsu-hsa-hooks",
    )
}

fn find(name: &str, var: &str, build: &str) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("{var} names {}, which does not exist", p.display()))
        };
    }
    let mut searched = vec![];
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        searched.push(dir.to_path_buf());
        if let Some(up) = dir.parent() {
            searched.push(up.to_path_buf());
            searched.push(up.join("lib/rocjitsu"));
        }
    }
    searched.push("/usr/local/lib/rocjitsu".into());
    searched.push("/usr/lib/rocjitsu".into());
    for d in &searched {
        let p = d.join(name);
        if p.is_file() {
            return std::fs::canonicalize(&p).map_err(|e| format!("{}: {e}", p.display()));
        }
    }
    Err(format!(
        "{name} not found (searched {}): build it with `{build}` (or `make build`), or set {var}",
        searched
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Whether a backend that needs both `librocjitsu.so` and
/// `librocjitsu_hooks.so` can run here; `how` says in which mode (shown in
/// `mirage emulators`).
pub fn rocjitsu_with_hooks(how: &str) -> crate::backend::Availability {
    use crate::backend::Availability;
    match (rocjitsu_preload(), rocjitsu_hooks()) {
        (Ok(p), Ok(h)) => Availability::Available {
            detail: format!("{} and {} ({how})", p.display(), h.display()),
        },
        (Err(reason), _) | (_, Err(reason)) => Availability::Unavailable { reason },
    }
}
