//! Tests of the DPP and SDWA operand paths of [`super`]: every DPP control
//! with partial EXEC, `bound_ctrl` and row/bank masks, and every SDWA
//! source and destination select, each against a model written from the
//! ISA manual's descriptions ("VOP_DPP", "VOP_SDWA").

use super::test_util::*;
use rocjitsu_isa::Target::{Gfx90a, Gfx942, Gfx950};

/// The lane DPP control `ctl` (LLVM syntax) reads for lane `l`, `None` when
/// out of range.
fn model_source(ctl: &str, l: usize) -> Option<usize> {
    let (row, r) = (l / 16, l % 16);
    let arg = |p: &str| ctl.strip_prefix(p).and_then(|n| n.parse::<usize>().ok());
    if let Some(q) = ctl.strip_prefix("quad_perm:[") {
        let sel: Vec<usize> = q
            .trim_end_matches(']')
            .split(',')
            .filter_map(|x| x.parse().ok())
            .collect();
        return Some(l - l % 4 + sel[l % 4]);
    }
    if let Some(n) = arg("row_shl:") {
        return (r + n <= 15).then_some(l + n);
    }
    if let Some(n) = arg("row_shr:") {
        return (r >= n).then(|| l - n);
    }
    if let Some(n) = arg("row_ror:") {
        return Some(row * 16 + (r + 16 - n) % 16);
    }
    if let Some(n) = arg("row_newbcast:") {
        return Some(row * 16 + n);
    }
    match ctl {
        "wave_shl:1" => (l + 1 < 64).then_some(l + 1),
        "wave_rol:1" => Some((l + 1) % 64),
        "wave_shr:1" => l.checked_sub(1),
        "wave_ror:1" => Some((l + 63) % 64),
        "row_mirror" => Some(row * 16 + 15 - r),
        "row_half_mirror" => Some(l / 8 * 8 + 7 - l % 8),
        "row_bcast:15" => (row > 0).then(|| row * 16 - 1),
        "row_bcast:31" => (row > 1).then_some(31),
        _ => panic!("no model for {ctl}"),
    }
}

const CONTROLS: [&str; 17] = [
    "quad_perm:[0,1,2,3]",
    "quad_perm:[3,2,1,0]",
    "quad_perm:[1,1,0,2]",
    "row_shl:1",
    "row_shl:15",
    "row_shr:3",
    "row_shr:15",
    "row_ror:1",
    "row_ror:12",
    "wave_shl:1",
    "wave_rol:1",
    "wave_shr:1",
    "wave_ror:1",
    "row_mirror",
    "row_half_mirror",
    "row_bcast:15",
    "row_bcast:31",
];

/// Checks `v_<op>_dpp v3, v0, ...` with `ctl`, masks and `bound_ctrl`
/// under `exec`; `f(src0_after_dpp, src1)` is the operation.
fn dpp_case(
    target: rocjitsu_isa::Target,
    op: &str,
    ctl: &str,
    (row_mask, bank_mask): (u32, u32),
    bound: bool,
    exec_mask: u64,
    f: impl Fn(u32, u32) -> u32,
) {
    let (a, b, old) = (vals(0), vals(1), vals(3));
    let bc = if bound { " bound_ctrl:1" } else { "" };
    let srcs = if op == "v_mov_b32" { "v0" } else { "v0, v1" };
    let asm =
        format!("{op}_dpp v3, {srcs} {ctl} row_mask:0x{row_mask:x} bank_mask:0x{bank_mask:x}{bc}");
    let r = exec(target, &asm, |w| {
        (w.v[0], w.v[1], w.v[3]) = (a, b, old);
        w.set_exec(exec_mask);
    });
    for l in 0..64 {
        let on = exec_mask >> l & 1 != 0;
        let row_on = row_mask >> (l / 16) & 1 != 0;
        let bank_on = bank_mask >> (l % 16 / 4) & 1 != 0;
        // A source is valid when in range and active.
        let src = model_source(ctl, l).filter(|&s| exec_mask >> s & 1 != 0);
        let write = on && row_on && bank_on && (src.is_some() || bound);
        let want = if write {
            f(src.map_or(0, |s| a[s]), b[l])
        } else {
            old[l]
        };
        assert_eq!(
            r.wave.v[3][l], want,
            "{asm} (exec 0x{exec_mask:x}): lane {l}"
        );
    }
}

#[test]
fn every_dpp_control_with_full_and_partial_exec() {
    for ctl in CONTROLS {
        for exec_mask in [u64::MAX, EXEC] {
            for bound in [false, true] {
                dpp_case(
                    Gfx942,
                    "v_mov_b32",
                    ctl,
                    (0xf, 0xf),
                    bound,
                    exec_mask,
                    |x, _| x,
                );
            }
        }
    }
}

#[test]
fn dpp_row_and_bank_masks() {
    for (rm, bm) in [(0xa, 0xf), (0x5, 0x3), (0xf, 0x9), (0x1, 0x4)] {
        for ctl in ["row_shr:1", "row_bcast:15", "quad_perm:[2,3,0,1]"] {
            dpp_case(Gfx90a, "v_mov_b32", ctl, (rm, bm), false, EXEC, |x, _| x);
            dpp_case(Gfx90a, "v_mov_b32", ctl, (rm, bm), true, EXEC, |x, _| x);
        }
    }
}

#[test]
fn dpp_applies_to_src0_only() {
    for ctl in [
        "row_shr:1",
        "row_bcast:31",
        "wave_ror:1",
        "quad_perm:[0,0,0,0]",
    ] {
        dpp_case(
            Gfx942,
            "v_add_u32",
            ctl,
            (0xf, 0xf),
            false,
            EXEC,
            u32::wrapping_add,
        );
        dpp_case(Gfx942, "v_max_i32", ctl, (0xf, 0xf), true, EXEC, |x, y| {
            (x as i32).max(y as i32) as u32
        });
        dpp_case(
            Gfx950,
            "v_subrev_u32",
            ctl,
            (0xf, 0xf),
            true,
            u64::MAX,
            |x, y| y.wrapping_sub(x),
        );
    }
}

#[test]
fn row_newbcast_on_32_and_64_bit_moves() {
    for n in [0, 5, 15] {
        let ctl = format!("row_newbcast:{n}");
        dpp_case(Gfx90a, "v_mov_b32", &ctl, (0xf, 0xf), false, EXEC, |x, _| x);
    }
    let (a, b) = (vals(0), vals(1));
    let r = exec(Gfx942, "v_mov_b64_dpp v[4:5], v[0:1] row_newbcast:7", |w| {
        (w.v[0], w.v[1]) = (a, b);
    });
    for l in 0..64 {
        let s = l / 16 * 16 + 7;
        assert_eq!(
            pair(&r.wave, 4, l),
            u64::from(a[s]) | u64::from(b[s]) << 32,
            "lane {l}"
        );
    }
}

/// The SDWA selects in LLVM syntax, by encoding value.
const SELS: [&str; 7] = [
    "BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD",
];

/// Source select `sel` of `x`, sign-extended when `sext`.
fn model_select(x: u32, sel: usize, sext: bool) -> u32 {
    let (lo, bits) = match sel {
        0..=3 => (8 * sel, 8),
        4 | 5 => (16 * (sel - 4), 16),
        _ => return x,
    };
    let f = (x >> lo) & ((1u32 << bits) - 1);
    let top = 1u32 << (bits - 1);
    if sext && f & top != 0 {
        f | !((1u32 << bits) - 1)
    } else {
        f
    }
}

#[test]
fn sdwa_source_selects_with_and_without_sign_extension() {
    let (a, b) = (vals(0), vals(1));
    for sext in [false, true] {
        let mut asm = String::new();
        for (i, s0) in SELS.iter().enumerate() {
            for (j, s1) in SELS.iter().enumerate() {
                let x = if sext { "sext(v0)" } else { "v0" };
                let y = if sext { "sext(v1)" } else { "v1" };
                let d = 10 + i * 7 + j;
                asm += &format!(
                    "v_add_u32_sdwa v{d}, {x}, {y} dst_sel:DWORD src0_sel:{s0} src1_sel:{s1}\n"
                );
            }
        }
        let r = exec(Gfx942, &asm, |w| {
            (w.v[0], w.v[1]) = (a, b);
            w.set_exec(EXEC);
        });
        for i in 0..7 {
            for j in 0..7 {
                let d = 10 + i * 7 + j;
                check(
                    &format!("sext {sext} sels {i} {j}"),
                    &r.wave.v[d],
                    &[0; 64],
                    EXEC,
                    |l| model_select(a[l], i, sext).wrapping_add(model_select(b[l], j, sext)),
                );
            }
        }
    }
}

#[test]
fn sdwa_destination_selects_and_unused_bits() {
    let (a, old) = (vals(0), vals(3));
    let unused = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"];
    let mut asm = String::new();
    for (i, sel) in SELS.iter().enumerate() {
        for (k, u) in unused.iter().enumerate() {
            let d = 10 + i * 3 + k;
            asm +=
                &format!("v_not_b32_sdwa v{d}, v0 dst_sel:{sel} dst_unused:{u} src0_sel:DWORD\n");
        }
    }
    let r = exec(Gfx942, &asm, |w| {
        w.v[0] = a;
        for d in 10..31 {
            w.v[d] = old;
        }
        w.set_exec(EXEC);
    });
    for i in 0..7 {
        for k in 0..3 {
            let d = 10 + i * 3 + k;
            check(
                &format!("dst_sel {i} unused {k}"),
                &r.wave.v[d],
                &old,
                EXEC,
                |l| {
                    let res = !a[l];
                    let (lo, bits) = match i {
                        0..=3 => (8 * i, 8),
                        4 | 5 => (16 * (i - 4), 16),
                        _ => return res,
                    };
                    let field_mask = (((1u64 << bits) - 1) << lo) as u32;
                    let field = (res << lo) & field_mask;
                    let above = !(((1u64 << (lo + bits)) - 1) as u32);
                    let sign = res >> (bits - 1) & 1 != 0;
                    match k {
                        0 => field,
                        1 => field | if sign { above } else { 0 },
                        _ => (old[l] & !field_mask) | field,
                    }
                },
            );
        }
    }
}

#[test]
fn sdwa_sixteen_bit_ops_compares_and_scalar_sources() {
    let (a, b) = (vals(0), vals(1));
    let r = exec(
        Gfx942,
        "v_max_i16_sdwa v3, sext(v0), v1 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1 src1_sel:WORD_1\n\
         v_cmp_eq_u16_sdwa s[4:5], v0, v1 src0_sel:BYTE_0 src1_sel:BYTE_2\n\
         v_cmp_gt_u32_sdwa vcc, v0, v1 src0_sel:WORD_1 src1_sel:BYTE_3\n\
         v_add_u32_sdwa v5, s8, v1 dst_sel:BYTE_2 dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:DWORD\n\
         v_and_b32_sdwa v6, v0, v1 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:WORD_1",
        |w| {
            (w.v[0], w.v[1]) = (a, b);
            w.v[3] = [0x1234_5678; 64];
            w.s[8] = 0xaabb_ccdd;
            w.set_exec(EXEC);
        },
    );
    check(
        "v_max_i16_sdwa",
        &r.wave.v[3],
        &[0x1234_5678; 64],
        EXEC,
        |l| {
            let x = (a[l] >> 8) as u8 as i8 as i16;
            let y = (b[l] >> 16) as u16 as i16;
            (x.max(y) as u16 as u32) << 16 | 0x5678
        },
    );
    let m = |f: &dyn Fn(usize) -> bool| (0..64).fold(0u64, |m, l| m | u64::from(f(l)) << l);
    assert_eq!(
        r.wave.s64(4),
        m(&|l| a[l] & 0xff == (b[l] >> 16) & 0xff) & EXEC
    );
    assert_eq!(r.wave.vcc(), m(&|l| a[l] >> 16 > b[l] >> 24) & EXEC);
    check("v_add_u32_sdwa scalar", &r.wave.v[5], &[0; 64], EXEC, |l| {
        (0xcc_u32.wrapping_add(b[l]) & 0xff) << 16
    });
    check("v_and_b32_sdwa", &r.wave.v[6], &[0; 64], EXEC, |l| {
        a[l] & 0xffff & (b[l] >> 16)
    });
}
