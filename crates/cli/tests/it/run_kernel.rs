//! End-to-end tests of `rocjitsu run-kernel`: bad input gives an error that
//! names the thing and exit status 1; kernels run and fault as reported.

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::common::{self, clang, rocjitsu};

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
        &["--gpu gfx1100", "no code object for gfx1100", "gfx942"],
    );
    fails_with(
        &["run-kernel", "--gpu", "gfx1201", &k],
        &["--gpu gfx1201", "no code object for gfx1201", "gfx942"],
    );
    fails_with(
        &["run-kernel", "--gpu", "gfx1030", &k],
        &["--gpu gfx1030", "no code object for gfx1030", "gfx942"],
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
    let dir = common::tmp("rk");
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

/// saxpy over `n` floats in 4 workgroups of 256, with `extra` options;
/// returns the run's output.
fn saxpy_with(dir: &std::path::Path, n: usize, extra: &[&str]) -> Output {
    std::fs::create_dir_all(dir).unwrap();
    let x: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
    std::fs::write(dir.join("x.bin"), &x).unwrap();
    std::fs::write(dir.join("y.bin"), &x).unwrap();
    let k = corpus("gfx942", "elementwise_f32");
    let (xa, ya) = (
        format!("in:{}", dir.join("x.bin").display()),
        format!("inout:{}", dir.join("y.bin").display()),
    );
    let ns = format!("i32:{n}");
    let mut args = vec![
        "run-kernel",
        &k,
        "--kernel",
        "saxpy",
        "--grid",
        "4",
        "--block",
        "256",
        "--arg",
        &xa,
        "--arg",
        &ya,
        "--arg",
        "f32:2",
        "--arg",
        &ns,
        "--stats",
    ];
    args.extend_from_slice(extra);
    rocjitsu(&args)
}

fn plugin_file(dir: &std::path::Path, prefix: &str) -> String {
    let f = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}* in {}", dir.display()));
    std::fs::read_to_string(f).unwrap()
}

#[test]
fn an_unknown_plugin_or_option_is_named_with_the_available_ones() {
    let k = corpus("gfx942", "elementwise_f32");
    fails_with(
        &["run-kernel", &k, "--kernel", "saxpy", "--plugin", "nosuch"],
        &[
            "`nosuch`",
            "available: metrics, coverage, hazards, races, trace",
        ],
    );
    fails_with(
        &["run-kernel", &k, "--plugin", "metrics:colour=red"],
        &["metrics", "`colour`", "format=text|jsonl"],
    );
    fails_with(
        &["run-kernel", &k, "--plugin", "metrics:format"],
        &["--plugin metrics:format", "NAME:key=value"],
    );
    let o = rocjitsu(&["plugins"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let names: Vec<&str> = out
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["metrics", "coverage", "hazards", "races", "trace"],
        "{out}"
    );
}

#[test]
fn metrics_count_the_saxpy_buffers_bytes() {
    let dir = common::tmp("rk-metrics");
    let n = 1000;
    let o = saxpy_with(
        &dir,
        n,
        &[
            "--plugin",
            "metrics:format=jsonl",
            "--plugin-out",
            dir.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let stats = String::from_utf8_lossy(&o.stdout).into_owned();
    let insts: u64 = stats
        .lines()
        .find_map(|l| l.strip_prefix("instructions:"))
        .and_then(|v| v.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    let text = plugin_file(&dir, "metrics-");
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 2, "a dispatch and a summary record: {text}");
    let d = &recs[0];
    assert_eq!(d["schema"], "rocjitsu.plugin.v1");
    assert_eq!(d["type"], "dispatch");
    assert_eq!(d["kernel"], "saxpy");
    assert_eq!(d["waves"], 16);
    assert_eq!(d["wave_instructions"], insts);
    let fam = &d["by_family"];
    let sum: u64 = fam
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(sum, insts, "{fam}");
    // Every wave loads x and y and stores y once (the last workgroup's
    // lanes past n are off).
    assert_eq!(fam["vmem_load"], 2 * 16, "{fam}");
    assert_eq!(fam["vmem_store"], 16, "{fam}");
    let g = &d["bytes"]["global"];
    assert_eq!(g["written"], 4 * n as u64, "{g}");
    // x and y by the vector loads, the kernel arguments by each wave's
    // scalar loads (as many bytes per wave).
    let scalar = g["read"].as_u64().unwrap() - 8 * n as u64;
    assert!(scalar > 0 && scalar.is_multiple_of(16), "{g}");
    let ratio = d["active_lane_ratio"].as_f64().unwrap();
    assert!(ratio < 1.0 && ratio > 0.9, "{ratio}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_writes_a_trace_event_file() {
    let dir = common::tmp("rk-trace");
    let o = saxpy_with(
        &dir,
        1024,
        &[
            "--plugin",
            "trace",
            "--plugin-out",
            dir.to_str().unwrap(),
            "--threads",
            "2",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("trace-"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&plugin_file(&dir, "trace-")).unwrap();
    let ev = v.as_array().unwrap();
    let count = |cat: &str| ev.iter().filter(|e| e["cat"] == cat).count();
    assert_eq!(count("dispatch"), 1);
    assert_eq!(count("workgroup"), 4);
    assert_eq!(count("wave"), 16);
    for e in ev.iter().filter(|e| e["ph"] == "X") {
        for f in ["name", "ts", "dur", "pid", "tid"] {
            assert!(!e[f].is_null(), "{f} missing: {e}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `coverage` plugin on a hand-written kernel (tests/data/counted.s)
/// whose counts follow from its code: 2 workgroups of 100 work-items (2
/// waves each, 4 in all); a loop runs 5 times in every wave; lanes below
/// 32 (all in the first wave of each workgroup) take the `v_mov`; no wave
/// reaches the last block. Each listed line past the count must equal
/// `llvm-objdump-22 -d`'s line for the same instruction.
#[test]
fn coverage_counts_a_hand_written_kernel() {
    let dir = common::tmp("rk-cov");
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/counted.s");
    let obj = dir.join("counted.hsaco");
    clang("assembler", "gfx942", &src, &obj, &[]);
    let o = rocjitsu(&[
        "run-kernel",
        obj.to_str().unwrap(),
        "--grid",
        "2",
        "--block",
        "100",
        "--plugin",
        "coverage",
        "--plugin-out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = plugin_file(&dir, "coverage-");
    let header = text.lines().next().unwrap();
    assert!(
        header.contains("kernel counted (1 dispatch(es)): 12 of 14 instructions executed")
            && header.contains("6 of 7 basic blocks"),
        "{header}"
    );
    let listed: Vec<(u64, String)> = text
        .lines()
        .filter(|l| l.contains("// "))
        .map(|l| {
            let (count, line) = l.trim_start().split_once(' ').unwrap();
            (count.parse().unwrap(), line.to_string())
        })
        .collect();
    let counts: Vec<u64> = listed.iter().map(|x| x.0).collect();
    assert_eq!(
        counts,
        [4, 20, 20, 20, 4, 4, 4, 2, 4, 4, 4, 4, 0, 0],
        "{text}"
    );
    let objdump = Command::new("llvm-objdump-22")
        .arg("-d")
        .arg(&obj)
        .output()
        .expect("llvm-objdump-22");
    let want: Vec<String> = String::from_utf8_lossy(&objdump.stdout)
        .lines()
        .filter(|l| l.contains("// "))
        .map(str::to_string)
        .collect();
    let got: Vec<&String> = listed.iter().map(|x| &x.1).collect();
    assert_eq!(got, want.iter().collect::<Vec<_>>());
    assert!(
        text.contains("0000000000001400 <counted>:"),
        "the label as objdump prints it: {text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The example plugin crate (crates/plugin-example), built as a cdylib and
/// loaded by path through the `rocjitsu_plugin_v1` C ABI, counts the same
/// wave-instructions per family and memory bytes as the built-in metrics
/// plugin on the same run; a bad path or option is refused with the reason.
#[test]
fn an_outside_plugin_is_loaded_by_path_and_counts_what_metrics_counts() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_rocjitsu"));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let st = Command::new(env!("CARGO"))
        .args(["build", "--release", "-p", "rocjitsu-plugin-example"])
        .current_dir(&root)
        .status()
        .expect("cargo");
    assert!(st.success(), "building crates/plugin-example");
    let lib = bin.parent().unwrap().join("librocjitsu_plugin_example.so");
    assert!(lib.exists(), "{}", lib.display());
    let dir = common::tmp("rk-ext");
    let count = dir.join("count.json");
    let spec = format!("{}:out={}", lib.display(), count.display());
    let o = saxpy_with(
        &dir,
        1000,
        &[
            "--plugin",
            &spec,
            "--plugin",
            "metrics:format=jsonl",
            "--plugin-out",
            dir.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&count).unwrap()).unwrap();
    let text = plugin_file(&dir, "metrics-");
    let d: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(c["dispatches"], 1);
    assert_eq!(c["instructions"], d["wave_instructions"]);
    let fams = [
        "salu",
        "valu",
        "mfma",
        "smem",
        "vmem_load",
        "vmem_store",
        "vmem_atomic",
        "lds",
        "branch",
        "wait",
        "barrier",
        "other",
    ];
    for (i, f) in fams.iter().enumerate() {
        assert_eq!(c["families"][i], d["by_family"][f], "{f}");
    }
    let sum = |k: &str| -> u64 {
        d["bytes"]
            .as_object()
            .unwrap()
            .values()
            .map(|s| s[k].as_u64().unwrap())
            .sum()
    };
    assert_eq!(c["bytes"]["load"], sum("read"));
    assert_eq!(c["bytes"]["store"], sum("written"));
    assert_eq!(c["bytes"]["atomic"], sum("atomic"));
    assert!(c["bytes"]["store"].as_u64().unwrap() >= 4000);
    // Refusals name the library and the reason.
    let k = corpus("gfx942", "elementwise_f32");
    fails_with(
        &[
            "run-kernel",
            &k,
            "--kernel",
            "saxpy",
            "--plugin",
            "/nonexistent/libnone.so",
        ],
        &["plugin library /nonexistent/libnone.so"],
    );
    let bad = format!("{}:colour=red", lib.display());
    let o = saxpy_with(&dir, 1000, &["--plugin", &bad]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("unknown option `colour=red`") && e.contains("out=PATH"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An OpenCL saxpy compiled by clang-22 for gfx1100 (RDNA3) and gfx1201
/// (RDNA4: the workgroup ID in TTMP9) in wave32 and in wave64 runs through
/// run-kernel with the wave count of its wave size and the CPU's results.
#[test]
fn rdna_saxpy_runs_in_wave32_and_wave64() {
    let dir = common::tmp("rk-rdna");
    let src = dir.join("saxpy.cl");
    std::fs::write(
        &src,
        "__kernel void saxpy(__global float *y, __global const float *x, float a, int n) {\n\
           int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();\n\
           if (i < n) y[i] = a * x[i] + y[i];\n\
         }\n",
    )
    .unwrap();
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let y0: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let bytes = |v: &[f32]| v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>();
    let (xp, yp) = (dir.join("x.bin"), dir.join("y.bin"));
    std::fs::write(&xp, bytes(&x)).unwrap();
    for (target, wave, flag, waves) in [
        ("gfx1100", 32, "-mno-wavefrontsize64", 32),
        ("gfx1100", 64, "-mwavefrontsize64", 16),
        ("gfx1201", 32, "-mno-wavefrontsize64", 32),
        ("gfx1201", 64, "-mwavefrontsize64", 16),
    ] {
        let wave = format!("{target} wave{wave}");
        let obj = dir.join(format!("saxpy-{}.hsaco", wave.replace(' ', "-")));
        clang("cl", target, &src, &obj, &[flag]);
        std::fs::write(&yp, bytes(&y0)).unwrap();
        let (ya, xa) = (
            format!("inout:{}", yp.display()),
            format!("in:{}", xp.display()),
        );
        let o = rocjitsu(&[
            "run-kernel",
            "--gpu",
            target,
            obj.to_str().unwrap(),
            "--grid",
            "4",
            "--block",
            "256",
            "--arg",
            &ya,
            "--arg",
            &xa,
            "--arg",
            "f32:2",
            "--arg",
            "i32:1000",
            "--stats",
        ]);
        assert!(o.status.success(), "{wave}: {}", stderr(&o));
        let stats = String::from_utf8_lossy(&o.stdout);
        assert!(
            stats.contains(&format!("waves:                {waves}\n")),
            "{wave}: {stats}"
        );
        let out = std::fs::read(&yp).unwrap();
        for i in 0..n {
            let got = f32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap());
            let (fused, unfused) = (2f32.mul_add(x[i], y0[i]), 2.0 * x[i] + y0[i]);
            assert!(
                got == fused || got == unfused,
                "{wave}: y[{i}] = {got}, want {unfused}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Clocked mode (`--exec-mode clocked`) computes what functional mode
/// computes, byte for byte, and adds the modelled cycles to `--stats`; a
/// bad timing file is refused with the JSON path of the bad value.
#[test]
fn clocked_mode_keeps_results_and_models_time() {
    let dir = common::tmp("rk-clocked");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let obj = dir.join("timing.hsaco");
    let st = Command::new("clang-22")
        .args([
            "-x",
            "cl",
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx942",
            "-nogpulib",
        ])
        .arg(format!(
            "-I{}",
            root.join("tests/corpus/src/include").display()
        ))
        .arg(root.join("tests/bench/timing/timing.cl"))
        .arg("-o")
        .arg(&obj)
        .status()
        .expect("clang-22 (scripts/setup.sh installs it)");
    assert!(st.success());
    let n = 4096usize;
    let data = |seed: u32| -> Vec<u8> {
        (0..n as u32)
            .flat_map(|i| (((i * 2654435761u32) ^ seed) as f32 / 1e6).to_le_bytes())
            .collect()
    };
    std::fs::write(dir.join("b.bin"), data(1)).unwrap();
    std::fs::write(dir.join("c.bin"), data(2)).unwrap();
    let run = |mode: &str, out: &str, extra: &[&str]| {
        let mut args: Vec<String> = [
            "run-kernel",
            obj.to_str().unwrap(),
            "--kernel",
            "triad",
            "--grid",
            "16",
            "--block",
            "256",
            "--stats",
            "--exec-mode",
            mode,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for a in [
            format!("out:{}:{}", dir.join(out).display(), 4 * n),
            format!("in:{}", dir.join("b.bin").display()),
            format!("in:{}", dir.join("c.bin").display()),
            "f32:3.0".into(),
            format!("u32:{n}"),
        ] {
            args.push("--arg".into());
            args.push(a);
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        let v: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        rocjitsu(&v)
    };
    let f = run("functional", "a_functional.bin", &[]);
    assert!(f.status.success(), "{}", stderr(&f));
    let c = run("clocked", "a_clocked.bin", &["--threads", "3"]);
    assert!(c.status.success(), "{}", stderr(&c));
    let fa = std::fs::read(dir.join("a_functional.bin")).unwrap();
    let ca = std::fs::read(dir.join("a_clocked.bin")).unwrap();
    assert_eq!(fa.len(), 4 * n);
    assert_eq!(fa, ca, "clocked mode changed the results");
    let b = data(1);
    let cc = data(2);
    let f32_at = |v: &[u8], i: usize| f32::from_le_bytes(v[4 * i..4 * i + 4].try_into().unwrap());
    for i in [0, 1, 777, n - 1] {
        let want = f32_at(&b, i) + 3.0 * f32_at(&cc, i);
        assert!(
            (f32_at(&fa, i) - want).abs() <= 1e-3 * want.abs().max(1.0),
            "a[{i}]"
        );
    }
    let fout = String::from_utf8_lossy(&f.stdout);
    let cout = String::from_utf8_lossy(&c.stdout);
    assert!(!fout.contains("modelled cycles"), "{fout}");
    let cycles: u64 = cout
        .lines()
        .find_map(|l| l.strip_prefix("modelled cycles: "))
        .unwrap_or_else(|| panic!("no modelled cycles in:\n{cout}"))
        .trim()
        .parse()
        .unwrap();
    assert!(cycles > 0);
    assert!(cout.contains("at 2100 MHz"), "{cout}");
    // The same cycles on one host thread.
    let one = run("clocked", "a_one.bin", &["--threads", "1"]);
    assert!(String::from_utf8_lossy(&one.stdout).contains(&format!("modelled cycles: {cycles}\n")));

    let text = std::fs::read_to_string(root.join("configs/timing/mi300x.json")).unwrap();
    let bad = text.replacen("\"channels\": 16,", "\"channels\": 0,", 1);
    assert_ne!(bad, text);
    let bad_path = dir.join("bad.json");
    std::fs::write(&bad_path, bad).unwrap();
    let o = run(
        "clocked",
        "a_bad.bin",
        &["--timing-config", bad_path.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("$.timing.model.l2.channels: must be positive"),
        "{}",
        stderr(&o)
    );
    let o = run("cycled", "a_bad.bin", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("expected functional or clocked"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
