//! The environment a DBT guest configuration's program is launched with,
//! shared by the `rocjitsu` launcher and mirage's `rocjitsu-dbt` backend:
//! the HSA tools library `librocjitsu_hooks.so` through `HSA_TOOLS_LIB`,
//! the guest configuration through `ROCJITSU_DBT_CONFIG` (and its log level
//! through `ROCJITSU_DBT_LOG`), the host daemon's socket for the hardware
//! backend (`ROCJITSU_DBT_HOST_SOCKET`), and an expanded
//! `ROCR_VISIBLE_DEVICES` that keeps the host GPU and the guest visible.
//! (The preload library builds the `GuestKfd` stack from the same
//! configuration; `LD_PRELOAD`, `ROCJITSU_CONFIG` and the runtime directory
//! are set as for any local launch.)

use rocjitsu_config::{DbtBackend, GpuConfig};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use crate::launch::EnvChange;

/// What a guest launch is given.
pub struct GuestLaunch<'a> {
    /// The loaded guest configuration (`dbt_guest` enabled) and its path.
    pub config: &'a GpuConfig,
    pub config_path: &'a Path,
    /// The hooks library; `None` runs without it (a diagnostic).
    pub hooks: Option<&'a Path>,
    /// The hardware backend's host daemon socket given explicitly.
    pub socket: Option<&'a Path>,
    /// Whether the launcher sets `ROCJITSU_LOG` itself.
    pub log_given: bool,
    /// The environment the program would otherwise inherit.
    pub env: &'a dyn Fn(&str) -> Option<OsString>,
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

use crate::launch::set;

/// The guest-mode environment changes, or an error naming what is wrong
/// and how to fix it. Fails when `config` has no enabled `dbt_guest` block.
pub fn guest_env(l: &GuestLaunch) -> Result<Vec<EnvChange>, String> {
    let path = l.config_path.display();
    let g = l
        .config
        .guest()
        .ok_or_else(|| format!("{path} has no enabled dbt_guest block"))?;
    let nonempty = |k: &str| (l.env)(k).filter(|v| !v.is_empty());
    let mut out = vec![];
    let hosts = match g.execution_backend {
        DbtBackend::Simulator => {
            if l.socket.is_some() {
                return Err(format!(
                    "--socket names the host daemon of the hardware backend, but {path} uses execution_backend `simulator` (the host GPU is emulated in the program); drop --socket or use a `hardware` configuration"
                ));
            }
            out.push(EnvChange::Unset(
                rocjitsu_config::env::DBT_HOST_SOCKET.into(),
            ));
            l.config.gpus.len()
        }
        DbtBackend::Hardware => {
            let socket = l
                .socket
                .map(Path::to_path_buf)
                .or_else(|| nonempty(rocjitsu_config::env::DBT_HOST_SOCKET).map(PathBuf::from));
            match socket {
                None => {
                    // The machine's own KFD, if it has one.
                    out.push(EnvChange::Unset(
                        rocjitsu_config::env::DBT_HOST_SOCKET.into(),
                    ));
                    let real = crate::read_topology(Path::new("/sys"))
                        .ok()
                        .filter(|_| Path::new("/dev/kfd").exists());
                    let Some(real) = real else {
                        return Err(format!(
                            "{path}: execution_backend `hardware` needs the next KFD down: this machine has no AMD GPU (/dev/kfd and its KFD topology), so give the socket of a rocjitsu daemon serving the host GPU with --socket (start one with `rocjitsu --config configs/gfx942_cdna3_kmd.json --daemon --socket S`)"
                        ));
                    };
                    if g.host_gpu_id as usize >= real.len() {
                        return Err(format!(
                            "{path}: dbt_guest.host_gpu_id: {} names host GPU {}, but this machine's KFD has {} GPU(s) (counted from 0)",
                            g.host_gpu_id,
                            g.host_gpu_id,
                            real.len()
                        ));
                    }
                    real.len()
                }
                Some(socket) => {
                    let status = crate::daemon::query_status(&socket).map_err(|e| {
                        format!(
                            "{e}; the hardware backend's host daemon must be running (`rocjitsu --config configs/gfx942_cdna3_kmd.json --daemon --socket {}`)",
                            socket.display()
                        )
                    })?;
                    let v: serde_json::Value = serde_json::from_str(&status).map_err(|e| {
                        format!("the daemon at {} sent a bad status: {e}", socket.display())
                    })?;
                    let n = v["vram_used"].as_array().map_or(0, Vec::len);
                    if g.host_gpu_id as usize >= n {
                        return Err(format!(
                            "{path}: dbt_guest.host_gpu_id: {} names host GPU {}, but the daemon at {} serves {n} GPU(s) (counted from 0)",
                            g.host_gpu_id,
                            g.host_gpu_id,
                            socket.display()
                        ));
                    }
                    let socket = std::fs::canonicalize(&socket).unwrap_or(socket);
                    out.push(set(rocjitsu_config::env::DBT_HOST_SOCKET, socket));
                    n
                }
            }
        }
    };
    if let Some(lib) = l.hooks {
        let mut tools: OsString = lib.as_os_str().to_owned();
        if let Some(old) = nonempty("HSA_TOOLS_LIB") {
            // ROCr reads a space-separated list.
            tools.push(" ");
            tools.push(old);
        }
        out.push(EnvChange::Set("HSA_TOOLS_LIB".into(), tools));
        if (l.env)("HSA_TOOLS_DISABLE_REGISTER").is_none() {
            out.push(set("HSA_TOOLS_DISABLE_REGISTER", "1"));
        }
    }
    out.push(set(rocjitsu_config::env::DBT_CONFIG, l.config_path));
    // The configuration's level unless the user asks for another.
    if nonempty(rocjitsu_config::env::DBT_LOG).is_none() {
        out.push(set(rocjitsu_config::env::DBT_LOG, g.log_level.name()));
    }
    if !l.log_given && (l.env)(rocjitsu_config::env::LOG).is_none() {
        out.push(set(rocjitsu_config::env::LOG, g.log_level.name()));
    }
    if let Some(v) = (l.env)("ROCR_VISIBLE_DEVICES")
        .and_then(|v| v.into_string().ok())
        .filter(|v| !v.trim().is_empty())
    {
        let e = expand_visible_devices(&v, g.host_gpu_id as usize, hosts);
        tracing::info!("ROCR_VISIBLE_DEVICES {v:?} expanded to {e:?} (host GPU and guest)");
        out.push(set("ROCR_VISIBLE_DEVICES", e));
    }
    tracing::info!(
        "DBT guest mode: {} shown, run on {} GPU {} ({:?} backend)",
        g.guest_isa,
        g.host_isa,
        g.host_gpu_id,
        g.execution_backend
    );
    Ok(out)
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

    #[test]
    fn simulator_guest_environment() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let path = root.join("guest_gfx950_on_gfx942.json");
        let cfg = GpuConfig::load(&path).unwrap();
        let env = |k: &str| match k {
            "HSA_TOOLS_LIB" => Some("/x/other.so".into()),
            "ROCR_VISIBLE_DEVICES" => Some("0".into()),
            _ => None,
        };
        let hooks = Path::new("/lib/librocjitsu_hooks.so");
        let out = guest_env(&GuestLaunch {
            config: &cfg,
            config_path: &path,
            hooks: Some(hooks),
            socket: None,
            log_given: false,
            env: &env,
        })
        .unwrap();
        let get = |k: &str| {
            out.iter().find_map(|c| match c {
                EnvChange::Set(n, v) if n == k => Some(v.to_string_lossy().into_owned()),
                _ => None,
            })
        };
        assert_eq!(
            get("HSA_TOOLS_LIB").as_deref(),
            Some("/lib/librocjitsu_hooks.so /x/other.so")
        );
        assert_eq!(get("HSA_TOOLS_DISABLE_REGISTER").as_deref(), Some("1"));
        assert_eq!(get("ROCR_VISIBLE_DEVICES").as_deref(), Some("0,1"));
        assert_eq!(get("ROCJITSU_DBT_LOG").as_deref(), Some("warn"));
        assert!(out.contains(&EnvChange::Unset("ROCJITSU_DBT_HOST_SOCKET".into())));
        let e = guest_env(&GuestLaunch {
            config: &cfg,
            config_path: &path,
            hooks: Some(hooks),
            socket: Some(Path::new("/nonexistent.sock")),
            log_given: false,
            env: &env,
        })
        .unwrap_err();
        assert!(e.contains("execution_backend `simulator`"), "{e}");
    }
}
