//! The shipped configurations as files (feature `testing`): for the tests of
//! this crate and of the crates that build on a configuration.

use std::path::{Path, PathBuf};

use crate::GpuConfig;

/// The repository's `configs/` folder.
pub fn configs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs")
}

/// The shipped configurations, loaded and validated, with their file names.
pub fn shipped() -> Vec<(String, GpuConfig)> {
    let mut out = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(configs_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with("_kmd.json"))
        .collect();
    names.sort();
    for n in names {
        let cfg = GpuConfig::load(configs_dir().join(&n)).unwrap_or_else(|e| panic!("{e}"));
        out.push((n, cfg));
    }
    out
}
