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
