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

/// A fresh directory of this test's own under the system's temporary
/// directory (never the real runtime directory, /tmp/rocjitsu-<uid>).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rocjitsu-launch-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn mode_of(p: &Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs `rocjitsu --config <gfx90a> -- true` with the runtime directory
/// `ROCJITSU_RUNTIME_DIR=dir`.
fn run_in_runtime_dir(dir: &Path) -> Output {
    Command::new(rocjitsu())
        .args(["--config", "configs/gfx90a_cdna2_kmd.json", "--", "true"])
        .env("ROCJITSU_RUNTIME_DIR", dir)
        .current_dir(repo())
        .output()
        .unwrap()
}

#[test]
fn a_runtime_directory_someone_else_could_write_is_refused_naming_it_and_the_fix() {
    let base = scratch("hostile");
    // Another user's directory (nobody, 65534): the test runs as root.
    let foreign = base.join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    set_mode(&foreign, 0o700);
    std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap_or_else(|e| {
        panic!(
            "chown {} to 65534 (the test needs root): {e}",
            foreign.display()
        )
    });
    // One of ours that everybody may write to.
    let open = base.join("open");
    std::fs::create_dir(&open).unwrap();
    set_mode(&open, 0o777);
    // A symbolic link to a directory of ours.
    let target = base.join("target");
    std::fs::create_dir(&target).unwrap();
    set_mode(&target, 0o700);
    let link = base.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let mut problems = vec![];
    for (dir, why) in [
        (&foreign, "owned by uid 65534"),
        (&open, "mode 0777"),
        (&link, "symbolic link"),
    ] {
        let out = run_in_runtime_dir(dir);
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(1) {
            problems.push(format!(
                "{}: exit {:?}, not 1: {err}",
                dir.display(),
                out.status.code()
            ));
        }
        for want in [
            format!("{} is not a safe runtime directory", dir.display()),
            why.to_string(),
            "set ROCJITSU_RUNTIME_DIR to a directory you own".to_string(),
        ] {
            if !err.contains(&want) {
                problems.push(format!("{}: no `{want}` in: {err}", dir.display()));
            }
        }
        // Nothing was written there (nor, through the link, in its target).
        let written: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        if !written.is_empty() {
            problems.push(format!("{}: written there: {written:?}", dir.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(
        mode_of(&open),
        0o777,
        "the refused directory is left as it was"
    );
    // A directory that does not exist yet is created, private.
    let fresh = base.join("fresh/rt");
    let out = run_in_runtime_dir(&fresh);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode_of(&fresh), 0o700);
    assert!(fresh.join("bin/lsmod").is_file());
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn a_daemon_socket_in_a_shared_directory_leaves_its_mode_alone() {
    let base = scratch("socket");
    let shared = base.join("shared");
    std::fs::create_dir(&shared).unwrap();
    set_mode(&shared, 0o1777);
    assert_eq!(mode_of(&shared), 0o1777);
    let socket = shared.join("h.sock");
    let runtime = base.join("rt");
    let mut daemon = Command::new(rocjitsu())
        .args([
            "--config",
            "configs/gfx90a_cdna2_kmd.json",
            "--daemon",
            "--socket",
        ])
        .arg(&socket)
        .env("ROCJITSU_RUNTIME_DIR", &runtime)
        .current_dir(repo())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let listening = loop {
        let status = Command::new(rocjitsu())
            .args(["daemon-status", "--socket"])
            .arg(&socket)
            .output()
            .unwrap();
        if status.status.success() {
            break true;
        }
        if daemon.try_wait().unwrap().is_some() || t0.elapsed().as_secs() > 30 {
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mode = mode_of(&shared);
    // SAFETY: signalling the daemon this test started.
    unsafe { libc::kill(daemon.id() as i32, libc::SIGTERM) };
    let out = daemon.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        listening,
        "the daemon did not listen on {}: {err}",
        socket.display()
    );
    assert_eq!(
        mode,
        0o1777,
        "the daemon changed the mode of {} from 1777 to {mode:04o}",
        shared.display()
    );
    std::fs::remove_dir_all(&base).unwrap();
}

/// A program that takes `mmap` from `dlsym(dlopen("libc.so.6"), ..)`
/// (Python's ctypes.CDLL("libc.so.6"), as tinygrad does) gets the
/// interposer's, so its mmap of KFD's doorbell page works; dlsym's answers
/// for RTLD_NEXT, other names and failed lookups stay the C library's
/// (tests/preload/dlsym_handle.c).
#[test]
fn functions_looked_up_through_a_library_handle_reach_the_interposer() {
    let dir = scratch("dlsym");
    let exe = dir.join("dlsym_handle");
    let cc = Command::new("cc")
        .arg("-O1")
        .arg("-o")
        .arg(&exe)
        .arg(repo().join("tests/preload/dlsym_handle.c"))
        .output()
        .expect("cc (Debian's gcc) is needed to build tests/preload/dlsym_handle.c");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let out = run(&[
        "--config",
        "configs/gfx90a_cdna2_kmd.json",
        "--",
        exe.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.trim() == "ok",
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// UCX's memory hooks would overwrite the interposer's `mmap` (bistro
/// mode): the launcher asks for reloc mode, unless the user chose a mode.
#[test]
fn ucx_memory_hooks_are_asked_for_reloc_mode_unless_the_user_chose() {
    let show = |user: Option<&str>| {
        let mut cmd = Command::new(rocjitsu());
        cmd.args([
            "--config",
            "configs/gfx90a_cdna2_kmd.json",
            "--",
            "sh",
            "-c",
            "echo \"$UCX_MEM_MMAP_HOOK_MODE\"",
        ])
        .current_dir(repo());
        match user {
            Some(v) => cmd.env("UCX_MEM_MMAP_HOOK_MODE", v),
            None => cmd.env_remove("UCX_MEM_MMAP_HOOK_MODE"),
        };
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(show(None), "reloc");
    assert_eq!(show(Some("bistro")), "bistro");
}
