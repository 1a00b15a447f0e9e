//! `rocjitsu --config CONFIG -- APP [ARGS...]`: runs an unmodified ROCm
//! program on emulated GPUs (local mode). The launcher checks the
//! configuration, then replaces itself with the program, with
//! `librocjitsu.so` preloaded and a fake `lsmod` (bookworm's rocminfo asks
//! it whether the amdgpu module is loaded) first in PATH.

use anyhow::{Context, Result, bail};
use rocjitsu_gpu::config::GpuConfig;
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of local mode.
pub struct Launch {
    pub config: PathBuf,
    pub threads: Option<usize>,
    pub watchdog: Option<u64>,
    pub log: Option<String>,
    pub app: Vec<OsString>,
}

/// The preload library: `$ROCJITSU_PRELOAD`, or `librocjitsu.so` beside
/// this executable (where cargo puts both).
fn preload_library() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("ROCJITSU_PRELOAD") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!(
                "ROCJITSU_PRELOAD names {}, which does not exist",
                p.display()
            );
        }
        return Ok(p);
    }
    let exe = std::env::current_exe().context("cannot find the rocjitsu executable")?;
    let lib = exe.with_file_name("librocjitsu.so");
    if !lib.is_file() {
        bail!(
            "{} is missing: build it with `cargo build --release -p rocjitsu-preload` (or `make build`), or set ROCJITSU_PRELOAD",
            lib.display()
        );
    }
    Ok(lib)
}

/// A directory holding an `lsmod` that reports the amdgpu module.
fn lsmod_shim(dir: &Path) -> Result<PathBuf> {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).with_context(|| format!("cannot create {}", bin.display()))?;
    let lsmod = bin.join("lsmod");
    let text = "#!/bin/sh\n# rocjitsu: the emulated GPU's kernel module, as lsmod shows it\necho 'Module                  Size  Used by'\necho 'amdgpu              16384000  0'\n";
    if std::fs::read_to_string(&lsmod).ok().as_deref() != Some(text) {
        let tmp = bin.join(format!(".lsmod-{}", std::process::id()));
        std::fs::write(&tmp, text)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
        std::fs::rename(&tmp, &lsmod)?;
    }
    Ok(bin)
}

pub fn run(l: Launch) -> Result<ExitCode> {
    let Some((app, args)) = l.app.split_first() else {
        bail!(
            "no program to run: give one after `--`, e.g. `rocjitsu --config configs/gfx90a_cdna2_kmd.json -- rocminfo`"
        );
    };
    let cfg = GpuConfig::load(&l.config)?;
    let config = std::fs::canonicalize(&l.config)
        .with_context(|| format!("cannot resolve {}", l.config.display()))?;
    let lib = preload_library()?;
    let dir = rocjitsu_kmd::runtime_dir();
    let bin = lsmod_shim(&dir)?;
    tracing::info!(
        "{} GPU(s) from {}: {}",
        cfg.gpus.len(),
        config.display(),
        cfg.gpus
            .iter()
            .map(|g| format!("{} ({})", g.marketing_name, g.gfx_target.name()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut preload = lib.into_os_string();
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|s| !s.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let mut path = bin.into_os_string();
    if let Some(old) = std::env::var_os("PATH") {
        path.push(":");
        path.push(old);
    }
    let mut cmd = std::process::Command::new(app);
    cmd.args(args)
        .env("LD_PRELOAD", preload)
        .env("PATH", path)
        .env("ROCJITSU_CONFIG", &config)
        .env("ROCJITSU_RUNTIME_DIR", &dir);
    if let Some(t) = l.threads {
        cmd.env("ROCJITSU_THREADS", t.to_string());
    }
    if let Some(w) = l.watchdog {
        cmd.env("ROCJITSU_WATCHDOG", w.to_string());
    }
    if let Some(f) = &l.log {
        cmd.env("ROCJITSU_LOG", f);
    }
    let err = cmd.exec();
    eprintln!("rocjitsu: error: cannot run {}: {err}", show(app));
    Ok(ExitCode::from(127))
}

fn show(s: &OsStr) -> String {
    s.to_string_lossy().into_owned()
}
