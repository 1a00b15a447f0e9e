//! End-to-end tests of `rocjitsu run-kernel`: bad input gives an error that
//! names the thing and exit status 1; kernels run and fault as reported.

use std::path::PathBuf;
use std::process::{Command, Output};

fn rocjitsu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocjitsu"))
        .args(args)
        .output()
        .expect("running rocjitsu")
}

fn corpus(target: &str, name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../build/corpus")
        .join(target)
        .join(format!("{name}.hsaco"));
    assert!(p.exists(), "{} is missing: run `make corpus`", p.display());
    p.display().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs with `args` and expects exit status 1 with all of `needles` in the
/// error message.
fn fails_with(args: &[&str], needles: &[&str]) {
    let o = rocjitsu(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
    for n in needles {
        assert!(e.contains(n), "{args:?}: `{n}` missing from: {e}");
    }
}

#[test]
fn bad_inputs_name_the_problem() {
    let k = corpus("gfx942", "elementwise_f32");
    let base = ["run-kernel", &k, "--kernel", "saxpy"];
    fails_with(
        &["run-kernel", "/nonexistent.hsaco"],
        &["/nonexistent.hsaco"],
    );
    fails_with(
        &["run-kernel", &k, "--kernel", "nope"],
        &["no kernel `nope`", "saxpy", "f32_math"],
    );
    fails_with(&["run-kernel", &k], &["pick one with --kernel"]);
    fails_with(
        &base,
        &["takes 4 argument(s), 0 given", "float*", "offset 20"],
    );
    let args = |a: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        for x in a {
            v.push("--arg".into());
            v.push(x.to_string());
        }
        v
    };
    let run = |a: &[&str], needles: &[&str]| {
        let v = args(a);
        let v: Vec<&str> = v.iter().map(|s| s.as_str()).collect();
        fails_with(&v, needles);
    };
    run(
        &["f32:1", "null", "null", "i32:4"],
        &["argument 1", "takes a pointer", "float*"],
    );
    run(
        &["null", "null", "i32:1", "i32:4"],
        &["argument 3", "float"],
    );
    run(
        &["null", "null", "f32:x", "i32:4"],
        &["`x` is not a valid value"],
    );
    run(
        &["null", "in:/nonexistent.bin", "f32:1", "i32:4"],
        &["/nonexistent.bin"],
    );
    run(
        &["null", "out:/tmp/x.bin", "f32:1", "i32:4"],
        &["out:FILE:BYTES"],
    );
    run(&["null", "null", "f32:1", "str:4"], &["unknown kind `str`"]);
    fails_with(
        &["run-kernel", &k, "--kernel", "saxpy", "--grid", "0"],
        &["--grid 0", "positive"],
    );
    fails_with(
        &["run-kernel", &k, "--kernel", "saxpy", "--block", "1,2,3,4"],
        &["--block"],
    );
    fails_with(
        &["run-kernel", "--gpu", "gfx1100", &k],
        &["--gpu gfx1100", "gfx942"],
    );
    fails_with(&["run-kernel", "--gpu", "gfx90a", &k], &["gfx90a"]);
}

#[test]
fn list_shows_kernels_and_arguments() {
    let k = corpus("gfx90a", "elementwise_f32");
    let o = rocjitsu(&["run-kernel", &k, "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().any(|l| l == "saxpy"), "{out}");
    assert!(out.contains("(float*, 8 bytes at offset 0)"), "{out}");
}

#[test]
fn saxpy_runs_and_writes_its_output_on_every_target() {
    let dir = std::env::temp_dir().join(format!("rocjitsu-rk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let y0: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let bytes = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
    let (xp, yp) = (dir.join("x.bin"), dir.join("y.bin"));
    std::fs::write(&xp, bytes(&x)).unwrap();
    for t in ["gfx90a", "gfx942", "gfx950"] {
        std::fs::write(&yp, bytes(&y0)).unwrap();
        let k = corpus(t, "elementwise_f32");
        let (ya, xa) = (
            format!("inout:{}", yp.display()),
            format!("in:{}", xp.display()),
        );
        let o = rocjitsu(&[
            "run-kernel",
            "--gpu",
            t,
            &k,
            "--kernel",
            "saxpy",
            "--grid",
            "4",
            "--block",
            "256",
            "--arg",
            &ya,
            "--arg",
            &xa,
            "--arg",
            "f32:3",
            "--arg",
            "i32:1000",
            "--stats",
        ]);
        assert!(o.status.success(), "{t}: {}", stderr(&o));
        let stats = String::from_utf8_lossy(&o.stdout);
        assert!(stats.contains("waves:                16"), "{t}: {stats}");
        let out = std::fs::read(&yp).unwrap();
        for i in 0..n {
            let got = f32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap());
            let (fused, unfused) = (3f32.mul_add(x[i], y0[i]), 3.0 * x[i] + y0[i]);
            assert!(
                got == fused || got == unfused,
                "{t}: y[{i}] = {got}, want {unfused}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_null_pointer_is_a_reported_gpu_fault() {
    let k = corpus("gfx942", "elementwise_f32");
    let o = rocjitsu(&[
        "run-kernel",
        &k,
        "--kernel",
        "saxpy",
        "--grid",
        "2",
        "--block",
        "64",
        "--arg",
        "null",
        "--arg",
        "null",
        "--arg",
        "f32:1",
        "--arg",
        "i32:128",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    for needle in [
        "GPU memory fault",
        "is not mapped",
        "kernel:    saxpy",
        "workgroup: (",
        "PC:",
        "instruction: global_load",
    ] {
        assert!(e.contains(needle), "`{needle}` missing from: {e}");
    }
}

#[test]
fn an_endless_loop_stops_at_the_timeout() {
    // A million workgroups of 1024 work-items take far longer than 0.2 s.
    let k = corpus("gfx942", "elementwise_f32");
    let o = rocjitsu(&[
        "run-kernel",
        &k,
        "--kernel",
        "saxpy",
        "--grid",
        "1000000",
        "--block",
        "1024",
        "--arg",
        "null",
        "--arg",
        "null",
        "--arg",
        "f32:1",
        "--arg",
        "i32:0",
        "--timeout",
        "0.2",
        "--threads",
        "1",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("timeout of 0.2 s"), "{e}");
}
