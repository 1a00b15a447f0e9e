//! `rocjitsu dbi instrument` end to end: kernels built by clang-22 for
//! gfx90a, gfx942 and gfx950 are instrumented with `bbcount` and run on the
//! emulator; the counts `run-kernel --dbi-out` reads back must equal what
//! the `coverage` plugin counts for the same run of the original kernel,
//! and the outputs must equal the original's. `memtrace`'s addresses are
//! checked against the addresses the kernel's inputs make it access.

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::common::{compile_cl as compile, ok, rocjitsu, tmp};

/// Loops with a trip count per lane, divergent branches, a callee called
/// by some lanes, and a per-lane global load.
const LOOPS: &str = r#"
__attribute__((noinline)) int helper(int x) { return x * 3 + 1; }
__kernel void loops(__global int *a, int n) {
  int t = __builtin_amdgcn_workitem_id_x();
  int g = __builtin_amdgcn_workgroup_id_x();
  int s = 0;
  for (int k = 0; k < n + (t & 3) + g; k++) {
    if ((k ^ t) & 1) s += a[k & 63]; else s -= a[(k + t) & 63];
  }
  if (t < 17 + g) s = helper(s);
  a[64 + 64 * g + t] = s;
}
"#;

fn input(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    let data: Vec<u8> = (0..64 * 4i32)
        .flat_map(|i| (i * 7 - 100).to_le_bytes())
        .collect();
    std::fs::write(&p, data).unwrap();
    p
}

/// Per code object address, the coverage plugin's count (the kernel's
/// listing), and the counts of instructions outside the kernel's symbol
/// by (PC modulo the 4 KiB page, instruction text).
struct Coverage {
    listing: std::collections::HashMap<u64, (u64, String)>,
    outside: Vec<(u64, u64, String)>,
}

fn coverage(dir: &Path) -> Coverage {
    let f = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("coverage-")
        })
        .expect("the coverage plugin wrote its file");
    let text = std::fs::read_to_string(f).unwrap();
    let rec: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let mut listing = std::collections::HashMap::new();
    for l in rec["listing"].as_array().unwrap() {
        listing.insert(
            l["address"].as_u64().unwrap(),
            (
                l["count"].as_u64().unwrap(),
                l["text"].as_str().unwrap().to_string(),
            ),
        );
    }
    let outside = rec["outside"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["pc"].as_u64().unwrap(),
                o["count"].as_u64().unwrap(),
                o["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    Coverage { listing, outside }
}

#[test]
fn bbcount_equals_the_coverage_plugin_and_keeps_the_results() {
    for cpu in ["gfx90a", "gfx942", "gfx950"] {
        let d = tmp(&format!("dbi-bb-{cpu}"));
        let k = compile(&d, LOOPS, cpu);
        let out = d.join("k-bb.hsaco");
        let report = ok(&[
            "dbi",
            "instrument",
            "--tool",
            "bbcount",
            k.to_str().unwrap(),
            out.to_str().unwrap(),
            "--json",
        ]);
        let report: Value = serde_json::from_str(&report).unwrap();
        assert!(report["patch_points"].as_u64().unwrap() >= 8, "{report}");

        let a0 = input(&d, "a0.bin");
        let a1 = input(&d, "a1.bin");
        let cov_dir = d.join("cov");
        let common = [
            "run-kernel",
            "--gpu",
            cpu,
            "--kernel",
            "loops",
            "--grid",
            "3",
            "--block",
            "64",
            "--threads",
            "2",
        ];
        let mut orig = common.to_vec();
        let a0s = format!("inout:{}", a0.display());
        let a1s = format!("inout:{}", a1.display());
        orig.extend([
            k.to_str().unwrap(),
            "--arg",
            &a0s,
            "--arg",
            "i32:5",
            "--plugin",
            "coverage:format=jsonl",
            "--plugin-out",
            cov_dir.to_str().unwrap(),
        ]);
        ok(&orig);
        let counts = d.join("counts.json");
        let mut inst = common.to_vec();
        inst.extend([
            out.to_str().unwrap(),
            "--arg",
            &a1s,
            "--arg",
            "i32:5",
            "--dbi-out",
            counts.to_str().unwrap(),
        ]);
        ok(&inst);
        assert_eq!(
            std::fs::read(&a0).unwrap(),
            std::fs::read(&a1).unwrap(),
            "{cpu}: the instrumented kernel's output differs from the original's"
        );
        let cov = coverage(&cov_dir);
        let got: Value = serde_json::from_slice(&std::fs::read(&counts).unwrap()).unwrap();
        let blocks = got["blocks"].as_array().unwrap();
        let (mut compared, mut nonzero) = (0, 0);
        for b in blocks {
            let start = b["start"].as_u64().unwrap();
            let count = b["count"].as_u64().unwrap();
            let want = match cov.listing.get(&start) {
                Some((c, _)) => *c,
                None => {
                    // A callee: its first instruction among the PCs outside
                    // the kernel (same offset in the 4 KiB page, same text).
                    let inst = b["first"].as_str().unwrap().to_string();
                    let m: Vec<_> = cov
                        .outside
                        .iter()
                        .filter(|(pc, _, t)| pc % 4096 == start % 4096 && *t == inst)
                        .collect();
                    match m.as_slice() {
                        [one] => one.1,
                        [] => 0,
                        _ => panic!("{cpu}: 0x{start:x} matches several outside PCs"),
                    }
                }
            };
            assert_eq!(
                count, want,
                "{cpu}: block 0x{start:x} of {}: bbcount {count}, coverage {want}",
                b["function"]
            );
            compared += 1;
            nonzero += usize::from(count > 0);
        }
        assert!(
            compared >= 8 && nonzero >= 6,
            "{cpu}: {compared} blocks, {nonzero} run"
        );
        // The report command prints every block.
        let text = ok(&["dbi", "report", counts.to_str().unwrap()]);
        assert_eq!(text.lines().count(), blocks.len() + 1, "{text}");
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn refused_instrumentation_names_the_cause_and_writes_nothing() {
    let d = tmp("dbi-refuse");
    let k = compile(&d, LOOPS, "gfx1100");
    let out = d.join("o.hsaco");
    let o = rocjitsu(&[
        "dbi",
        "instrument",
        "--tool",
        "bbcount",
        k.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("GFX9 targets"), "{err}");
    assert!(!out.exists());
    let o = rocjitsu(&["dbi", "instrument", "--tool", "nosuch", "a", "b"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bbcount and memtrace"));
    let _ = std::fs::remove_dir_all(&d);
}
