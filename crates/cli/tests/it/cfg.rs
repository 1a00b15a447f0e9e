//! `rocjitsu cfg` end to end: the graph of kernels built by clang-22 (a
//! call through s_getpc/s_swappc, a loop) on a GFX9 and an RDNA target,
//! checked against llvm-objdump-22's listing; `--live` and `--json`; an
//! unknown indirect jump reported with exit status 3; bad names.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rocjitsu-cli-cfg-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(tool: &str, args: &[&str]) -> String {
    let out = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{tool} ({e}): scripts/setup.sh installs LLVM 22"));
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn compile(dir: &Path, cpu: &str, src: &str) -> PathBuf {
    let cl = dir.join("k.cl");
    std::fs::write(&cl, src).unwrap();
    let out = dir.join(format!("k-{cpu}.hsaco"));
    let mcpu = format!("-mcpu={cpu}");
    run(
        "clang-22",
        &[
            "-x",
            "cl",
            "-target",
            "amdgcn-amd-amdhsa",
            &mcpu,
            "-nogpulib",
            "-O2",
            cl.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    out
}

fn rocjitsu(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rocjitsu"))
        .args(args)
        .output()
        .unwrap()
}

const CALL: &str = r#"
__attribute__((noinline)) float poly(float x, __global const float *c, int n) {
    float r = 0.0f;
    for (int k = n; k >= 0; --k) r = r * x + c[k];
    return r;
}
__kernel void k(__global float *out, __global const float *x, __global const float *c, int n) {
    int i = __builtin_amdgcn_workitem_id_x();
    out[i] = poly(x[i], c, n) + poly(x[i] + 1.0f, c, n);
}
"#;

/// Addresses of the instructions llvm-objdump lists in `function`.
fn listed(objdump: &str, function: &str) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    let mut inside = false;
    for line in objdump.lines() {
        if line.ends_with(">:") {
            inside = line.ends_with(&format!("<{function}>:"));
            continue;
        }
        if !inside {
            continue;
        }
        let Some((inst, comment)) = line.trim().split_once("//") else {
            continue;
        };
        if inst.trim().is_empty() || inst.trim().starts_with('.') {
            continue;
        }
        if let Some((a, _)) = comment.trim().split_once(':')
            && let Ok(a) = u64::from_str_radix(a.trim(), 16)
        {
            out.insert(a);
        }
    }
    out
}

#[test]
fn kernel_with_calls_on_gfx942_and_gfx1100() {
    let dir = tmp("call");
    for cpu in ["gfx942", "gfx1100"] {
        let obj = compile(&dir, cpu, CALL);
        let o = obj.to_str().unwrap();
        let out = rocjitsu(&["cfg", o]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{cpu}: {}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("function k (kernel)"), "{cpu}:\n{text}");
        assert!(text.contains("function poly (function)"), "{cpu}:\n{text}");
        // The kernel calls poly twice (OpenCL's __clang_ocl_kern_imp_k
        // copy too).
        let k = text
            .split("function ")
            .find(|f| f.starts_with("k (kernel)"))
            .unwrap();
        assert_eq!(k.matches(" poly call").count(), 2, "{cpu}:\n{text}");
        assert!(text.contains("exit: return"), "{cpu}:\n{text}");
        assert!(text.contains("exit: end-program"), "{cpu}:\n{text}");
        assert!(text.contains("complete: every branch and call target is known"));

        // --json --live: every instruction llvm-objdump lists in the kernel
        // and in poly is in a block (the code up to the last s_endpgm or
        // s_setpc; padding after it is not reachable), with its live set.
        let listing = run("llvm-objdump-22", &["-d", o]);
        let out = rocjitsu(&["cfg", "--json", "--live", o]);
        assert!(out.status.success());
        let mut functions = 0;
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let name = v["function"].as_str().unwrap().to_string();
            if name != "k" && name != "poly" {
                continue;
            }
            functions += 1;
            assert_eq!(v["complete"], true);
            let mut ours = BTreeSet::new();
            for b in v["blocks"].as_array().unwrap() {
                for i in b["insts"].as_array().unwrap() {
                    ours.insert(i["address"].as_u64().unwrap());
                    assert!(i["live_in"].is_string());
                }
                assert!(b["live_out"].is_string());
            }
            let theirs = listed(&listing, &name);
            let last = *ours.last().unwrap();
            let theirs: BTreeSet<u64> = theirs.into_iter().filter(|&a| a <= last).collect();
            assert_eq!(ours, theirs, "{cpu} {name}");
        }
        assert_eq!(functions, 2, "{cpu}");

        // --live: each instruction carries its live set; the kernel's
        // first instruction reads its kernarg pointer.
        let out = rocjitsu(&["cfg", "--live", "--kernel", "k", o]);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let first = text.lines().find(|l| l.contains("; live:")).unwrap();
        assert!(first.contains("s[0:1]"), "{cpu}: {first}");
        assert!(
            !text.contains("function poly"),
            "{cpu}: --kernel k lists only k"
        );
    }
}

#[test]
fn unknown_indirect_jump_exits_3() {
    let dir = tmp("indirect");
    let s = dir.join("k.s");
    std::fs::write(
        &s,
        "  .amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n  .text\n  .globl k\n  \
         .type k,@function\nk:\n  s_load_dwordx2 s[4:5], s[0:1], 0x0\n  s_waitcnt lgkmcnt(0)\n  \
         s_setpc_b64 s[4:5]\n.Lend:\n  .size k, .Lend-k\n  .rodata\n  .p2align 6\n  \
         .amdhsa_kernel k\n    .amdhsa_next_free_vgpr 1\n    .amdhsa_next_free_sgpr 8\n    \
         .amdhsa_accum_offset 4\n  .end_amdhsa_kernel\n",
    )
    .unwrap();
    let o = dir.join("k.o");
    run(
        "llvm-mc-22",
        &[
            "-triple",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx942",
            "--filetype=obj",
            s.to_str().unwrap(),
            "-o",
            o.to_str().unwrap(),
        ],
    );
    let out = rocjitsu(&["cfg", o.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("exit: unknown-indirect-jump"), "{text}");
    assert!(
        text.contains("0xc: `s_setpc_b64 s[4:5]`: unknown indirect jump"),
        "{text}"
    );
}

#[test]
fn bad_names_are_reported() {
    let dir = tmp("bad");
    let obj = compile(&dir, "gfx942", CALL);
    let o = obj.to_str().unwrap();
    let out = rocjitsu(&["cfg", "--kernel", "nope", o]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no kernel or function named `nope`"), "{err}");
    assert!(
        err.contains("available: __clang_ocl_kern_imp_k, k, poly"),
        "{err}"
    );
    let out = rocjitsu(&["cfg", "--mcpu", "gfx90a", o]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no code object for --mcpu gfx90a"), "{err}");
    let out = rocjitsu(&["cfg", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--live") && help.contains("unknown-indirect-jump"),
        "{help}"
    );
}
