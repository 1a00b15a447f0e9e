//! The wait-state rules on hand-written sequences: each rule broken (the
//! rule is reported, with the register and the distance) and kept (the
//! same sequence with enough `s_nop`s, or on a target the rule does not
//! apply to, reports nothing).

use super::waitstates::{Facts, RULES, Violation, Window};
use rocjitsu_isa::Target::{self, Gfx90a, Gfx942, Gfx950};
use std::process::Command;

/// Each instruction of `asm`, assembled by llvm-mc-22.
fn assemble(target: Target, asm: &str) -> Vec<rocjitsu_isa::Inst> {
    let mut child = Command::new("llvm-mc-22")
        .args([
            "-arch=amdgcn",
            &format!("-mcpu={}", target.name()),
            "-show-encoding",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("llvm-mc-22 runs (scripts/setup.sh installs it)");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(asm.as_bytes()).expect("write asm");
    }
    let out = child.wait_with_output().expect("llvm-mc-22 finishes");
    assert!(
        out.status.success(),
        "llvm-mc-22 rejected on {target}:\n{asm}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split("encoding: [").nth(1))
        .map(|e| {
            let mut b: Vec<u8> = e
                .trim_end_matches(']')
                .split(',')
                .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).unwrap())
                .collect();
            b.extend([0; 16]);
            rocjitsu_isa::decode(target, &b).unwrap()
        })
        .collect()
}

/// The rules `asm` breaks on `target`: `(rule id, register, needed, got)`.
fn broken(target: Target, asm: &str) -> Vec<(&'static str, String, u8, u32)> {
    let mut w = Window::<usize>::new(target);
    let mut out: Vec<Violation<usize>> = Vec::new();
    for (i, inst) in assemble(target, asm).iter().enumerate() {
        w.step(&Facts::of(inst), i, &mut out);
    }
    out.iter()
        .map(|v| {
            (
                RULES[v.rule].id,
                v.reg.map_or(String::new(), |r| r.to_string()),
                v.needed,
                v.got,
            )
        })
        .collect()
}

fn ids(target: Target, asm: &str) -> Vec<&'static str> {
    let mut v: Vec<_> = broken(target, asm).into_iter().map(|x| x.0).collect();
    v.sort();
    v.dedup();
    v
}

/// `(targets, sequence, rules broken)`.
const CASES: &[(&[Target], &str, &[&str])] = &[
    // VALU writes an SGPR that a VMEM instruction reads.
    (
        &[Gfx90a, Gfx942, Gfx950],
        "v_readfirstlane_b32 s4, v0\nglobal_load_dword v1, v2, s[4:5]",
        &["valu-sgpr-vmem"],
    ),
    (
        &[Gfx90a, Gfx942, Gfx950],
        "v_readfirstlane_b32 s4, v0\ns_nop 4\nglobal_load_dword v1, v2, s[4:5]",
        &[],
    ),
    (
        &[Gfx90a],
        "v_cmpx_eq_u32_e32 vcc, v0, v1\ns_nop 3\nglobal_load_dword v1, v[2:3], off",
        &["valu-sgpr-vmem"],
    ),
    // DPP.
    (
        &[Gfx90a, Gfx942, Gfx950],
        "v_add_f32_e32 v1, v2, v3\nv_mov_b32_dpp v4, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
        &["valu-vgpr-dpp"],
    ),
    (
        &[Gfx90a, Gfx942, Gfx950],
        "v_add_f32_e32 v1, v2, v3\ns_nop 1\nv_mov_b32_dpp v4, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
        &[],
    ),
    (
        &[Gfx90a],
        "v_cmpx_eq_u32_e32 vcc, v0, v1\ns_nop 2\nv_mov_b32_dpp v4, v5 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
        &["valu-exec-dpp"],
    ),
    // v_div_fmas after a VALU write of VCC.
    (
        &[Gfx90a],
        "v_div_scale_f32 v0, vcc, v1, v2, v3\nv_div_fmas_f32 v4, v0, v1, v2",
        &["valu-vcc-div-fmas"],
    ),
    (
        &[Gfx942, Gfx950],
        "v_div_scale_f32 v0, vcc, v1, v2, v3\nv_div_fmas_f32 v4, v0, v1, v2",
        &["valu-sgpr-valu", "valu-vcc-div-fmas"],
    ),
    (
        &[Gfx90a, Gfx942, Gfx950],
        "v_div_scale_f32 v0, vcc, v1, v2, v3\ns_nop 3\nv_div_fmas_f32 v4, v0, v1, v2",
        &[],
    ),
    // s_setreg / s_getreg of the same register.
    (
        &[Gfx90a, Gfx942, Gfx950],
        "s_setreg_b32 hwreg(HW_REG_MODE), s0\ns_getreg_b32 s1, hwreg(HW_REG_MODE)",
        &["setreg-getreg"],
    ),
    (
        &[Gfx90a, Gfx942, Gfx950],
        "s_setreg_b32 hwreg(HW_REG_MODE), s0\ns_getreg_b32 s1, hwreg(HW_REG_TRAPSTS)\ns_setreg_b32 hwreg(HW_REG_TRAPSTS), s1",
        &[],
    ),
    (
        &[Gfx90a, Gfx942, Gfx950],
        "s_setreg_b32 hwreg(HW_REG_MODE), s0\ns_nop 0\ns_setreg_b32 hwreg(HW_REG_MODE), s1",
        &["setreg-setreg"],
    ),
    // Store data of more than 64 bits overwritten too soon.
    (
        &[Gfx90a, Gfx942, Gfx950],
        "global_store_dwordx4 v[0:1], v[2:5], off\nv_mov_b32_e32 v3, 0",
        &["store-data-valu"],
    ),
    (
        &[Gfx942, Gfx950],
        "global_store_dwordx4 v[0:1], v[2:5], off\ns_nop 0\nv_mov_b32_e32 v3, 0",
        &["store-data-valu"],
    ),
    (
        &[Gfx90a],
        "global_store_dwordx4 v[0:1], v[2:5], off\ns_nop 0\nv_mov_b32_e32 v3, 0",
        &[],
    ),
    (
        &[Gfx90a, Gfx942, Gfx950],
        "global_store_dwordx2 v[0:1], v[2:3], off\nv_mov_b32_e32 v3, 0",
        &[],
    ),
    // Transcendental and partial-write forwarding (gfx942+).
    (
        &[Gfx942, Gfx950],
        "v_exp_f32_e32 v0, v1\nv_add_f32_e32 v2, v0, v0",
        &["trans-valu"],
    ),
    (
        &[Gfx90a],
        "v_exp_f32_e32 v0, v1\nv_add_f32_e32 v2, v0, v0",
        &[],
    ),
    (
        &[Gfx942, Gfx950],
        "v_exp_f32_e32 v0, v1\nv_exp_f32_e32 v2, v0",
        &[],
    ),
    (
        &[Gfx942, Gfx950],
        "v_add_f16_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_0 src1_sel:WORD_0\nv_add_f32_e32 v3, v0, v0",
        &["dst-sel-valu"],
    ),
    // VALU-written SGPRs read by VALU instructions (gfx942+).
    (
        &[Gfx942, Gfx950],
        "v_cmp_eq_u32_e32 vcc, v0, v1\nv_cndmask_b32_e32 v2, v3, v4, vcc",
        &["valu-sgpr-valu"],
    ),
    (
        &[Gfx942, Gfx950],
        "v_cmp_eq_u32_e32 vcc, v0, v1\ns_nop 1\nv_cndmask_b32_e32 v2, v3, v4, vcc",
        &[],
    ),
    (
        &[Gfx90a],
        "v_cmp_eq_u32_e32 vcc, v0, v1\nv_cndmask_b32_e32 v2, v3, v4, vcc",
        &[],
    ),
    (
        &[Gfx942, Gfx950],
        "v_add_u32_e32 v0, v1, v2\nv_readlane_b32 s0, v0, 1",
        &["valu-vgpr-readlane"],
    ),
    (
        &[Gfx942, Gfx950],
        "v_cmpx_eq_u32_e32 vcc, v0, v1\ns_nop 2\nv_readlane_b32 s0, v1, 1",
        &["valu-exec-rwlane"],
    ),
    // Lane select written by a VALU.
    (
        &[Gfx90a],
        "v_readfirstlane_b32 s2, v0\nv_readlane_b32 s0, v1, s2",
        &["valu-sgpr-lane-select"],
    ),
    (
        &[Gfx90a, Gfx942, Gfx950],
        "v_readfirstlane_b32 s2, v0\ns_nop 3\nv_readlane_b32 s0, v1, s2",
        &[],
    ),
    // M0 written by an SALU, then read by s_movrel.
    (
        &[Gfx90a, Gfx942, Gfx950],
        "s_mov_b32 m0, s0\ns_movrels_b32 s1, s2",
        &["salu-m0"],
    ),
    (
        &[Gfx90a, Gfx942, Gfx950],
        "s_mov_b32 m0, s0\ns_nop 0\ns_movrels_b32 s1, s2",
        &[],
    ),
    // MFMA inputs.
    (
        &[Gfx942, Gfx950],
        "v_add_f32_e32 v16, v20, v21\nv_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]",
        &["valu-vgpr-mfma"],
    ),
    (
        &[Gfx942, Gfx950],
        "v_add_f32_e32 v16, v20, v21\ns_nop 1\nv_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]",
        &[],
    ),
    (
        &[Gfx942, Gfx950],
        "v_cmpx_eq_u32_e32 vcc, v20, v21\ns_nop 2\nv_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]",
        &["valu-exec-mfma"],
    ),
    // MFMA chains: the same C back to back needs nothing; overlapping C,
    // A and B do.
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]\nv_mfma_f32_32x32x8_f16 v[0:15], v[20:21], v[22:23], v[0:15]",
        &[],
    ),
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_16x16x16_f16 v[0:3], v[16:17], v[18:19], v[0:3]\nv_mfma_f32_32x32x8_f16 v[0:15], v[20:21], v[22:23], v[0:15]",
        &["mfma-srcc"],
    ),
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_16x16x16_f16 v[0:3], v[16:17], v[18:19], v[0:3]\ns_nop 4\nv_mfma_f32_32x32x8_f16 v[0:15], v[20:21], v[22:23], v[0:15]",
        &[],
    ),
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_16x16x16_f16 v[20:23], v[16:17], v[18:19], v[0:3]\ns_nop 5\nv_mfma_f32_16x16x16_f16 v[4:7], v[20:21], v[18:19], v[4:7]",
        &["mfma-srcab"],
    ),
    (
        &[Gfx942],
        "v_mfma_f32_16x16x16_f16 v[20:23], v[16:17], v[18:19], v[0:3]\ns_nop 6\nv_mfma_f32_16x16x16_f16 v[4:7], v[20:21], v[18:19], v[4:7]",
        &[],
    ),
    (
        &[Gfx950],
        "v_mfma_f32_16x16x16_f16 v[20:23], v[16:17], v[18:19], v[0:3]\ns_nop 6\nv_mfma_f32_16x16x16_f16 v[4:7], v[20:21], v[18:19], v[4:7]",
        &["mfma-srcab"],
    ),
    // MFMA results read, overwritten; C overwritten while being read.
    (
        &[Gfx90a],
        "v_mfma_f32_32x32x2f32 v[0:15], v16, v17, v[0:15]\ns_nop 7\ns_nop 7\ns_nop 1\nv_add_f32_e32 v20, v0, v1",
        &["mfma-read"],
    ),
    (
        &[Gfx90a],
        "v_mfma_f32_32x32x2f32 v[0:15], v16, v17, v[0:15]\ns_nop 7\ns_nop 7\ns_nop 2\nv_add_f32_e32 v20, v0, v1",
        &[],
    ),
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_32x32x2_f32 v[0:15], v16, v17, v[0:15]\nv_add_f32_e32 v20, v0, v1",
        &["mfma-read"],
    ),
    // gfx942+: the f32-input MFMAs are not XDL: passes+2.
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_32x32x2_f32 v[0:15], v16, v17, v[0:15]\ns_nop 7\ns_nop 7\ns_nop 1\nglobal_store_dwordx4 v[16:17], v[0:3], off",
        &[],
    ),
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_32x32x2_f32 v[0:15], v16, v17, v[0:15]\ns_nop 7\ns_nop 7\ns_nop 0\nglobal_store_dwordx4 v[16:17], v[0:3], off",
        &["mfma-read"],
    ),
    // Dot products.
    (
        &[Gfx90a, Gfx942],
        "v_dot2_f32_f16 v0, v1, v2, v3\ns_nop 1\nv_add_f32_e32 v4, v0, v0",
        &["dot-read"],
    ),
    (
        &[Gfx90a, Gfx942],
        "v_dot2_f32_f16 v0, v1, v2, v3\ns_nop 2\nv_add_f32_e32 v4, v0, v0",
        &[],
    ),
    (
        &[Gfx942],
        "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]\ns_nop 7\ns_nop 2\nv_add_f32_e32 v20, v0, v1\nglobal_store_dword v[30:31], v1, off",
        &[],
    ),
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]\ns_nop 7\nds_write_b32 v20, v1",
        &["mfma-read"],
    ),
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]\ns_nop 7\nv_mov_b32_e32 v3, 0",
        &["mfma-overwrite"],
    ),
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_32x32x8_f16 v[32:47], v[16:17], v[18:19], v[0:15]\ns_nop 4\nv_mov_b32_e32 v3, 0",
        &["mfma-srcc-overwrite"],
    ),
    (
        &[Gfx942, Gfx950],
        "v_mfma_f32_32x32x8_f16 v[32:47], v[16:17], v[18:19], v[0:15]\ns_nop 6\nv_mov_b32_e32 v3, 0",
        &[],
    ),
    (
        &[Gfx942, Gfx950],
        "v_mfma_f64_4x4x4_4b_f64 v[0:1], v[2:3], v[4:5], v[0:1]\nv_fma_f64 v[6:7], v[8:9], v[10:11], v[12:13]",
        &["dgemm-fma64"],
    ),
    (
        &[Gfx90a],
        "v_add_f32_e32 v2, v0, v1\nv_mfma_f64_4x4x4f64 v[10:11], v[12:13], v[14:15], v[10:11]\nglobal_store_dword v[0:1], v2, off",
        &["valu-dgemm-vmem"],
    ),
];

#[test]
fn rules_broken_and_kept() {
    let mut bad = Vec::new();
    for (targets, asm, want) in CASES {
        for &t in *targets {
            let got = ids(t, asm);
            if got != *want {
                bad.push(format!(
                    "{t}: {asm:?}\n  want {want:?}\n  got  {:?}",
                    broken(t, asm)
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn violations_name_register_and_distance() {
    let v = broken(
        Gfx942,
        "v_readfirstlane_b32 s4, v0\ns_nop 1\nglobal_load_dword v1, v2, s[4:5]",
    );
    assert_eq!(v, vec![("valu-sgpr-vmem", "s[4:5]".to_string(), 5, 2)]);
}

#[test]
fn every_rule_is_tested() {
    for r in RULES {
        assert!(
            CASES.iter().any(|c| c.2.contains(&r.id)),
            "rule {} has no case that breaks it",
            r.id
        );
    }
}

#[test]
fn mfma_passes_cover_the_decoder() {
    for t in Target::ALL {
        for o in rocjitsu_isa::opcodes(t) {
            let m = o.mnemonic.as_str();
            if (m.starts_with("v_mfma") || m.starts_with("v_smfmac"))
                && !m.starts_with("v_mfma_ld_scale")
            {
                assert!(
                    super::waitstates::mfma_passes(t, m).is_some(),
                    "{t} {m}: no passes"
                );
            }
        }
    }
}
