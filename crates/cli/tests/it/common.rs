//! Helpers the CLI's integration tests share: a fresh scratch directory,
//! clang-22 building a code object, and running the `rocjitsu` binary.
// Not every module of the test binary uses all of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An empty directory under the system's temporary directory, unique to
/// this test process and `tag`.
pub fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rocjitsu-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Builds `src` (language `lang` as clang's `-x` names it: `cl`,
/// `assembler`) into the code object `out` for `cpu`, with `extra` flags;
/// panics with clang's status if it fails.
pub fn clang(lang: &str, cpu: &str, src: &Path, out: &Path, extra: &[&str]) {
    let mut cmd = Command::new("clang-22");
    cmd.args(["-x", lang, "-target", "amdgcn-amd-amdhsa"])
        .arg(format!("-mcpu={cpu}"));
    if lang == "cl" {
        cmd.args(["-nogpulib", "-O2"]);
    }
    let st = cmd
        .args(extra)
        .arg(src)
        .arg("-o")
        .arg(out)
        .status()
        .expect("clang-22 (scripts/setup.sh installs it)");
    assert!(st.success(), "clang-22 -mcpu={cpu} {}: {st}", src.display());
}

/// Writes the OpenCL source `text` to `dir/k.cl` and builds it for `cpu`
/// into `dir/k-<cpu>.hsaco`, which it returns.
pub fn compile_cl(dir: &Path, text: &str, cpu: &str) -> PathBuf {
    let cl = dir.join("k.cl");
    std::fs::write(&cl, text).unwrap();
    let out = dir.join(format!("k-{cpu}.hsaco"));
    clang("cl", cpu, &cl, &out, &[]);
    out
}

/// Runs `target/release/rocjitsu` (the binary under test) with `args`.
pub fn rocjitsu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocjitsu"))
        .args(args)
        .output()
        .unwrap()
}

/// [`rocjitsu`], asserting that it succeeds; its stdout.
pub fn ok(args: &[&str]) -> String {
    let o = rocjitsu(args);
    assert!(
        o.status.success(),
        "rocjitsu {args:?}: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}
