//! The launcher's part of DBT guest mode (`dbt_guest.enabled`): the
//! program gets the HSA tools library `librocjitsu_hooks.so` through
//! `HSA_TOOLS_LIB`, the guest configuration through `ROCJITSU_DBT_CONFIG`
//! (and its log level through `ROCJITSU_DBT_LOG`), the host daemon's socket
//! for the hardware backend (`ROCJITSU_DBT_HOST_SOCKET`), and an expanded
//! `ROCR_VISIBLE_DEVICES` that keeps the host GPU and the guest visible.
//! The preload library builds the `GuestKfd` stack from the same
//! configuration. The environment itself is
//! [`rocjitsu_kmd::guest_launch::guest_env`], which mirage's
//! `rocjitsu-dbt` backend uses too.

use crate::launch::Launch;
use anyhow::{Context, Result, bail};
use rocjitsu_config::GpuConfig;
use rocjitsu_kmd::guest_launch::{GuestLaunch, guest_env};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The hooks library: `$ROCJITSU_HOOKS`, or `librocjitsu_hooks.so` beside
/// this executable (where cargo puts both).
fn hooks_library() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(rocjitsu_config::env::HOOKS).filter(|p| !p.is_empty()) {
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

/// Sets up the program's environment for guest mode.
pub fn prepare(cmd: &mut Command, l: &Launch, cfg: &GpuConfig, config_path: &Path) -> Result<()> {
    let hooks = if l.no_dbt_hooks {
        None
    } else {
        Some(hooks_library()?)
    };
    let env = |k: &str| std::env::var_os(k);
    let changes = guest_env(&GuestLaunch {
        config: cfg,
        config_path,
        hooks: hooks.as_deref(),
        socket: l.socket.as_deref(),
        log_given: l.log.is_some(),
        env: &env,
    })
    .map_err(anyhow::Error::msg)?;
    rocjitsu_kmd::launch::apply(cmd, changes);
    Ok(())
}
