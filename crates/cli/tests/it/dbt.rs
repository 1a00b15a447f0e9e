//! `rocjitsu dbt translate` end to end: a gfx950 object built by clang-22
//! is translated, the result disassembled by llvm-objdump-22 as gfx942 and
//! run on the emulated gfx942 against the native gfx950 run; an
//! untranslatable instruction makes the command fail with the kernel, PC
//! and instruction, writing nothing.

use std::process::Command;

use crate::common::{compile_cl, rocjitsu, tmp};

const BITOP: &str = r#"
__kernel void bitop(__global uint *a) {
    uint i = __builtin_amdgcn_workitem_id_x();
    uint x = a[i], y = a[i + 64], z = a[i + 128], r;
    __asm__ volatile("v_bitop3_b32 %0, %1, %2, %3 bitop3:0x96" : "=v"(r) : "v"(x), "v"(y), "v"(z));
    a[i] = r;
}
"#;

#[test]
fn translated_object_runs_on_gfx942_like_native_gfx950() {
    let d = tmp("dbt-run");
    let inp = compile_cl(&d, BITOP, "gfx950");
    let out = d.join("out.hsaco");
    let (i, o) = (inp.to_str().unwrap(), out.to_str().unwrap());
    let r = rocjitsu(&[
        "dbt",
        "translate",
        "--guest",
        "gfx950",
        "--host",
        "gfx942",
        i,
        o,
        "--json",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(report["rewritten_by_kind"]["v_bitop3_b32"], 2);
    let listing = Command::new("llvm-objdump-22")
        .args(["-d", o])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    // llvm-objdump takes the CPU from e_flags: gfx942 code, trampolines included.
    assert!(
        listing.contains(".text.dbt") && listing.contains("v_bfi_b32"),
        "{listing}"
    );
    assert!(
        !listing.contains("v_bitop3") && !listing.contains("<unknown>"),
        "{listing}"
    );

    let data: Vec<u8> = (0..192u32)
        .flat_map(|x| x.wrapping_mul(0x9e37_79b9).to_le_bytes())
        .collect();
    let mut results = Vec::new();
    for (gpu, obj) in [("gfx950", i), ("gfx942", o)] {
        let buf = d.join(format!("buf-{gpu}.bin"));
        std::fs::write(&buf, &data).unwrap();
        let spec = format!("inout:{}", buf.display());
        let r = rocjitsu(&[
            "run-kernel",
            "--gpu",
            gpu,
            obj,
            "--kernel",
            "bitop",
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            &spec,
        ]);
        assert!(
            r.status.success(),
            "{gpu}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        results.push(std::fs::read(&buf).unwrap());
    }
    assert_eq!(
        results[0], results[1],
        "translated gfx942 run equals the native gfx950 run"
    );
    // And the numpy-free reference: x ^ y ^ z (table 0x96).
    let w = |k: usize| u32::from_le_bytes(data[4 * k..4 * k + 4].try_into().unwrap());
    let got = |k: usize| u32::from_le_bytes(results[1][4 * k..4 * k + 4].try_into().unwrap());
    for l in 0..64 {
        assert_eq!(got(l), w(l) ^ w(l + 64) ^ w(l + 128), "lane {l}");
    }
}

#[test]
fn untranslatable_object_fails_closed_and_writes_nothing() {
    let d = tmp("dbt-closed");
    let src = r#"
__kernel void sr(__global uint *a) {
    uint i = __builtin_amdgcn_workitem_id_x(), r;
    __asm__ volatile("v_cvt_sr_bf16_f32 %0, %1, %1" : "=v"(r) : "v"(a[i]));
    a[i] = r;
}
"#;
    let inp = compile_cl(&d, src, "gfx950");
    let out = d.join("out.hsaco");
    let r = rocjitsu(&[
        "dbt",
        "translate",
        inp.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("sr+0x") && err.contains("`v_cvt_sr_bf16_f32 v"),
        "{err}"
    );
    assert!(!out.exists(), "no output on failure");
}
