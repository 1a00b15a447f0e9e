//! Finding the rocjitsu libraries mirage injects into executions.
//!
//! `librocjitsu.so` (the LD_PRELOAD interposer of local mode) is looked for
//! in order: `$ROCJITSU_PRELOAD` (a file), beside the running executable
//! (cargo puts `mirage` and `librocjitsu.so` in the same `target/release`),
//! one directory up (test executables live in `target/release/deps`),
//! `<exe>/../lib/rocjitsu`, `/usr/local/lib/rocjitsu`, `/usr/lib/rocjitsu`.

use std::path::PathBuf;

pub const PRELOAD_NAME: &str = "librocjitsu.so";

/// Where `librocjitsu.so` was found, or every place searched.
pub fn rocjitsu_preload() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("ROCJITSU_PRELOAD").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "ROCJITSU_PRELOAD names {}, which does not exist",
                p.display()
            ))
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
        let p = d.join(PRELOAD_NAME);
        if p.is_file() {
            return std::fs::canonicalize(&p).map_err(|e| format!("{}: {e}", p.display()));
        }
    }
    Err(format!(
        "{PRELOAD_NAME} not found (searched {}): build it with `cargo build --release -p rocjitsu-preload` (or `make build`), or set ROCJITSU_PRELOAD",
        searched
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}
