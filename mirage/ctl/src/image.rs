//! `mirage image build|list|rm`: container images made from local root
//! file systems (no registry is needed): by default rocjitsu's Debian sid
//! sysroot with ROCm 6.4.3 (`scripts/sysroot.sh`), `--rocm 7` the one with
//! ROCm 7.2.4.

use crate::{Ctx, print_json, print_table};
use anyhow::{Result, anyhow, bail};
use clap::Subcommand;
use mirage_container::Engine;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// Every image mirage built carries this label.
pub const LABEL_IMAGE: &str = "mirage.image";
const LABEL_SOURCE: &str = "mirage.source";
const LABEL_STAMP: &str = "mirage.source-stamp";

#[derive(Subcommand)]
pub enum ImageCmd {
    /// Build an image from a root file system (default: the sid sysroot with ROCm 6.4)
    Build {
        /// Which sid sysroot: 6 (ROCm 6.4.3, gfx942) or 7 (ROCm 7.2.4, gfx950)
        #[arg(long, default_value_t = 6)]
        rocm: u32,
        /// Another root file system
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        /// The image's name (default mirage-rocm6.4 or mirage-rocm7.2)
        #[arg(long)]
        name: Option<String>,
        /// Build even when the image is up to date
        #[arg(long)]
        force: bool,
    },
    /// List the images mirage built
    List,
    /// Remove an image
    Rm { name: String },
}

/// The default image name for a sid sysroot.
pub fn default_name(rocm: u32) -> String {
    match rocm {
        7 => "mirage-rocm7.2".into(),
        _ => "mirage-rocm6.4".into(),
    }
}

/// Identifies a root file system's content cheaply: its sysroot stamp (the
/// package list it was built from) and the stamp's modification time, else
/// the directory's.
fn stamp(dir: &std::path::Path) -> String {
    let f = dir.join(".rocjitsu-sysroot");
    let (text, meta) = match std::fs::read_to_string(&f) {
        Ok(t) => (t, std::fs::metadata(&f).ok()),
        Err(_) => (String::new(), std::fs::metadata(dir).ok()),
    };
    let mtime = meta
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes().chain(mtime.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

pub fn command(ctx: &Ctx, c: ImageCmd) -> Result<ExitCode> {
    let engine = Engine::detect()?;
    match c {
        ImageCmd::Build {
            rocm,
            from,
            name,
            force,
        } => {
            if from.is_none() && !matches!(rocm, 6 | 7) {
                bail!("--rocm takes 6 or 7, not {rocm}");
            }
            let dir = from.unwrap_or_else(|| mirage_builtin::sid_sysroot(rocm));
            if !dir.join("bin/sh").exists() {
                bail!(
                    "{} is not a root file system (no bin/sh): build the sid sysroot with rocjitsu's `scripts/sysroot.sh --rocm {rocm} build`, or give one with --from DIR",
                    dir.display()
                );
            }
            let name = name.unwrap_or_else(|| default_name(rocm));
            let st = stamp(&dir);
            if !force
                && let Some(labels) = engine.image_labels(&name)
                && labels.get(LABEL_STAMP) == Some(&st)
                && labels.get(LABEL_SOURCE).map(PathBuf::from).as_deref() == Some(dir.as_path())
            {
                if ctx.json {
                    print_json(
                        &serde_json::json!({ "name": name, "built": false, "source": dir }),
                    )?;
                } else {
                    println!("{name} is up to date (from {})", dir.display());
                }
                return Ok(ExitCode::SUCCESS);
            }
            let labels: BTreeMap<String, String> = [
                (LABEL_IMAGE.to_string(), "1".to_string()),
                (LABEL_SOURCE.to_string(), dir.display().to_string()),
                (LABEL_STAMP.to_string(), st),
            ]
            .into();
            let t0 = std::time::Instant::now();
            eprintln!(
                "mirage: importing {} as {name} (about a minute for 1 GB)",
                dir.display()
            );
            engine
                .import(&dir, &name, &labels)
                .map_err(|e| anyhow!("image {name}: {e}"))?;
            let secs = t0.elapsed().as_secs_f64();
            if ctx.json {
                print_json(
                    &serde_json::json!({ "name": name, "built": true, "source": dir, "seconds": secs }),
                )?;
            } else {
                println!("{name} built from {} in {secs:.0} s", dir.display());
            }
        }
        ImageCmd::List => {
            let images = engine.images_with_label(LABEL_IMAGE)?;
            if ctx.json {
                print_json(&images)?;
            } else {
                let rows: Vec<Vec<String>> = images
                    .iter()
                    .map(|i| {
                        vec![
                            i.names.first().cloned().unwrap_or_else(|| "<none>".into()),
                            i.id.clone(),
                            format!("{} MB", i.size / 1_000_000),
                            i.labels.get(LABEL_SOURCE).cloned().unwrap_or_default(),
                        ]
                    })
                    .collect();
                print_table(&["NAME", "ID", "SIZE", "FROM"], &rows);
            }
        }
        ImageCmd::Rm { name } => {
            engine.remove_image(&name)?;
            if ctx.json {
                print_json(&serde_json::json!({ "removed": name }))?;
            } else {
                println!("removed image {name}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
