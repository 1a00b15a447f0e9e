//! `rocjitsu --config CONFIG -- APP`: local mode end to end with the real
//! ROCm 5.2.3 user space of Debian bookworm (installed by scripts/setup.sh).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rocjitsu() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_rocjitsu"));
    let lib = exe.with_file_name("librocjitsu.so");
    assert!(
        lib.is_file(),
        "{} is missing: build it first with `cargo build --release -p rocjitsu-preload` (make test does)",
        lib.display()
    );
    exe
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str]) -> Output {
    Command::new(rocjitsu())
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap()
}

#[test]
fn rocminfo_lists_the_configured_mi210() {
    let out = run(&[
        "--config",
        "configs/gfx90a_cdna2_kmd.json",
        "--",
        "rocminfo",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Values from the configuration, as ROCr reports them.
    let gpu = text
        .split("*******")
        .find(|agent| agent.contains("Device Type:             GPU"))
        .unwrap_or_else(|| panic!("no GPU agent:\n{text}"));
    for want in [
        "Name:                    gfx90a",
        "Marketing Name:          AMD Instinct MI210",
        "Compute Unit:            104",
        "SIMDs per CU:            4",
        "Shader Engines:          8",
        "Wavefront Size:          64(0x40)",
        "Chip ID:                 29711(0x740f)",
        "Segment:                 GLOBAL; FLAGS: COARSE GRAINED",
        "Size:                    67108864(0x4000000) KB",
        "Segment:                 GROUP",
        "L2:                      8192(0x2000) KB",
        "amdgcn-amd-amdhsa--gfx90a",
    ] {
        assert!(gpu.contains(want), "missing `{want}` in:\n{gpu}");
    }
}

#[test]
fn a_broken_config_is_named_with_its_json_path() {
    let dir = std::env::temp_dir().join(format!("rocjitsu-launch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("bad.json");
    let text = std::fs::read_to_string(repo().join("configs/gfx90a_cdna2_kmd.json"))
        .unwrap()
        .replace("\"xcds\": 1", "\"xcds\": 0");
    std::fs::write(&cfg, text).unwrap();
    let out = run(&["--config", cfg.to_str().unwrap(), "--", "true"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("gpus[0].soc.xcds"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn launcher_errors_name_the_fix() {
    let out = run(&["--config", "configs/gfx90a_cdna2_kmd.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("after `--`"));
    let out = run(&["--", "true"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--config CONFIG is required"));
    let out = run(&[
        "--config",
        "configs/gfx90a_cdna2_kmd.json",
        "--",
        "/nonexistent/app",
    ]);
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run /nonexistent/app"));
    let out = run(&["--help"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("--watchdog"));
}
