//! The launcher's part of DBT guest mode (`dbt_guest.enabled`): the
//! program gets the HSA tools library `librocjitsu_hooks.so` through
//! `HSA_TOOLS_LIB`, the guest configuration through `ROCJITSU_DBT_CONFIG`
//! (and its log level through `ROCJITSU_DBT_LOG`), the host daemon's socket
//! for the hardware backend (`ROCJITSU_DBT_HOST_SOCKET`), and an expanded
//! `ROCR_VISIBLE_DEVICES` that keeps the host GPU and the guest visible.
//! The preload library builds the `GuestKfd` stack from the same
//! configuration.

use crate::launch::Launch;
use anyhow::{Context, Result, bail};
use rocjitsu_gpu::config::{DbtBackend, DbtGuest, GpuConfig};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The hooks library: `$ROCJITSU_HOOKS`, or `librocjitsu_hooks.so` beside
/// this executable (where cargo puts both).
fn hooks_library() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("ROCJITSU_HOOKS").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!("ROCJITSU_HOOKS names {}, which does not exist", p.display());
        }
        return Ok(p);
    }
    let exe = std::env::current_exe().context("cannot find the rocjitsu executable")?;
    let lib = exe.with_file_name("librocjitsu_hooks.so");
    if !lib.is_file() {
        bail!(
            "{} is missing: DBT guest mode needs the HSA tools library; build it with `cargo build --release -p rocjitsu-hsa-hooks` (or set ROCJITSU_HOOKS), or run with --no-dbt-hooks to see the host and guest GPUs without it",
            lib.display()
        );
    }
    Ok(lib)
}

/// `ROCR_VISIBLE_DEVICES` with the host GPU's ordinal and the guest's
/// (appended after the host GPUs) added where missing, so that ROCr creates
/// both agents and the hooks library can show the guest in the host's place.
pub fn expand_visible_devices(v: &str, host: usize, guest: usize) -> String {
    let mut list: Vec<String> = v
        .split(',')
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    for want in [host, guest] {
        let w = want.to_string();
        if !list.contains(&w) {
            list.push(w);
        }
    }
    list.join(",")
}

/// Sets up the program's environment for guest mode.
pub fn prepare(
    cmd: &mut Command,
    l: &Launch,
    cfg: &GpuConfig,
    g: &DbtGuest,
    config_path: &Path,
) -> Result<()> {
    let hosts = match g.execution_backend {
        DbtBackend::Simulator => {
            if l.socket.is_some() {
                bail!(
                    "--socket names the host daemon of the hardware backend, but {} uses execution_backend `simulator` (the host GPU is emulated in the program); drop --socket or use a `hardware` configuration",
                    config_path.display()
                );
            }
            cmd.env_remove("ROCJITSU_DBT_HOST_SOCKET");
            cfg.gpus.len()
        }
        DbtBackend::Hardware => {
            let socket = l.socket.clone().or_else(|| {
                std::env::var_os("ROCJITSU_DBT_HOST_SOCKET")
                    .filter(|s| !s.is_empty())
                    .map(PathBuf::from)
            });
            let Some(socket) = socket else {
                // The machine's own KFD, if it has one.
                cmd.env_remove("ROCJITSU_DBT_HOST_SOCKET");
                let real = rocjitsu_kmd::read_topology(Path::new("/sys"))
                    .ok()
                    .filter(|_| Path::new("/dev/kfd").exists());
                let Some(real) = real else {
                    bail!(
                        "{}: execution_backend `hardware` needs the next KFD down: this machine has no AMD GPU (/dev/kfd and its KFD topology), so give the socket of a rocjitsu daemon serving the host GPU with --socket (start one with `rocjitsu --config configs/gfx942_cdna3_kmd.json --daemon --socket S`)",
                        config_path.display()
                    );
                };
                if g.host_gpu_id as usize >= real.len() {
                    bail!(
                        "{}: dbt_guest.host_gpu_id: {} names host GPU {}, but this machine's KFD has {} GPU(s) (counted from 0)",
                        config_path.display(),
                        g.host_gpu_id,
                        g.host_gpu_id,
                        real.len()
                    );
                }
                return finish(cmd, l, g, config_path, real.len());
            };
            let status = rocjitsu_kmd::daemon::query_status(&socket).map_err(|e| {
                anyhow::anyhow!(
                    "{e}; the hardware backend's host daemon must be running (`rocjitsu --config configs/gfx942_cdna3_kmd.json --daemon --socket {}`)",
                    socket.display()
                )
            })?;
            let v: serde_json::Value = serde_json::from_str(&status)
                .with_context(|| format!("the daemon at {} sent a bad status", socket.display()))?;
            let n = v["vram_used"].as_array().map_or(0, Vec::len);
            if g.host_gpu_id as usize >= n {
                bail!(
                    "{}: dbt_guest.host_gpu_id: {} names host GPU {}, but the daemon at {} serves {n} GPU(s) (counted from 0)",
                    config_path.display(),
                    g.host_gpu_id,
                    g.host_gpu_id,
                    socket.display()
                );
            }
            let socket = std::fs::canonicalize(&socket).unwrap_or(socket);
            cmd.env("ROCJITSU_DBT_HOST_SOCKET", socket);
            n
        }
    };
    finish(cmd, l, g, config_path, hosts)
}

/// The environment common to every backend; `hosts` is the number of host
/// GPUs (the guest's ordinal).
fn finish(
    cmd: &mut Command,
    l: &Launch,
    g: &DbtGuest,
    config_path: &Path,
    hosts: usize,
) -> Result<()> {
    if !l.no_dbt_hooks {
        let lib = hooks_library()?;
        let mut tools: OsString = lib.into_os_string();
        if let Some(old) = std::env::var_os("HSA_TOOLS_LIB").filter(|s| !s.is_empty()) {
            // ROCr reads a space-separated list.
            tools.push(" ");
            tools.push(old);
        }
        cmd.env("HSA_TOOLS_LIB", tools);
        if std::env::var_os("HSA_TOOLS_DISABLE_REGISTER").is_none() {
            cmd.env("HSA_TOOLS_DISABLE_REGISTER", "1");
        }
    }
    cmd.env("ROCJITSU_DBT_CONFIG", config_path);
    // The configuration's level unless the user asks for another.
    if std::env::var_os("ROCJITSU_DBT_LOG").is_none_or(|v| v.is_empty()) {
        cmd.env("ROCJITSU_DBT_LOG", g.log_level.name());
    }
    if l.log.is_none() && std::env::var_os("ROCJITSU_LOG").is_none() {
        cmd.env("ROCJITSU_LOG", g.log_level.name());
    }
    if let Some(v) = std::env::var("ROCR_VISIBLE_DEVICES")
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        let e = expand_visible_devices(&v, g.host_gpu_id as usize, hosts);
        tracing::info!("ROCR_VISIBLE_DEVICES {v:?} expanded to {e:?} (host GPU and guest)");
        cmd.env("ROCR_VISIBLE_DEVICES", e);
    }
    tracing::info!(
        "DBT guest mode: {} shown, run on {} GPU {} ({:?} backend)",
        g.guest_isa,
        g.host_isa,
        g.host_gpu_id,
        g.execution_backend
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_devices_keep_host_and_guest() {
        // One host GPU (0), the guest appended as ordinal 1.
        assert_eq!(expand_visible_devices("0", 0, 1), "0,1");
        // The host GPU missing from the list is added, then the guest.
        assert_eq!(expand_visible_devices("1", 0, 2), "1,0,2");
        assert_eq!(expand_visible_devices(" 2 , 0", 2, 4), "2,0,4");
        // Already there: unchanged (order kept, UUIDs kept).
        assert_eq!(expand_visible_devices("3,GPU-abc,0", 0, 3), "3,GPU-abc,0");
    }
}
