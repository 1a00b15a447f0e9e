//! Dense MFMA: every instruction, random and exact inputs, CBSZ/ABID and
//! BLGP, F64 negation.

use super::*;
use crate::mfma::{ALL, MfmaError, MfmaMods, execute, lookup, lookup_for};
use rocjitsu_isa::Target;

/// Generates A, B, C for `info`, runs it, and compares with an f64
/// reference. `exact`: small integers, so every result must be exact.
pub(super) fn check_dense(info: &MfmaInfo, mods: &MfmaMods, seed: u64, exact: bool) {
    let (ea, eb) = info.elems(mods).unwrap();
    let mut rng = Rng::new(seed);
    let (m, n, k, nb) = (info.m, info.n, info.k, info.blocks);
    let am = random_matrix(nb, m, k, || {
        if exact {
            small_bits(ea, &mut rng)
        } else {
            random_bits(ea, &mut rng)
        }
    });
    let bm = random_matrix(nb, n, k, || {
        if exact {
            small_bits(eb, &mut rng)
        } else {
            random_bits(eb, &mut rng)
        }
    });
    let cm = random_matrix(nb, m, n, || {
        if exact {
            small_bits(info.cd, &mut rng)
        } else {
            random_bits(info.cd, &mut rng)
        }
    });
    let la = InLayout {
        rows: m,
        blocks: nb,
        k,
        bits: ea.bits(),
        interleave16: interleaved(info, ea.bits()),
    };
    let lb = InLayout {
        rows: n,
        blocks: nb,
        k,
        bits: eb.bits(),
        interleave16: interleaved(info, eb.bits()),
    };
    let a = la.scatter(&am, info.a_dwords_for(mods).unwrap());
    let b = lb.scatter(&bm, info.b_dwords_for(mods).unwrap());
    let c = scatter_out(info, &cm);

    // What the instruction multiplies: BLGP permutes B's lanes (CDNA3 ISA
    // BLGP table), CBSZ/ABID replace A blocks.
    let b_used = if info.lane_pattern && mods.blgp != 0 {
        lb.gather(&blgp_permute(&b, mods.blgp))
    } else {
        bm.clone()
    };
    let a_block = |blk: usize| {
        if !info.broadcast || mods.cbsz == 0 {
            return blk;
        }
        let group = 1usize << mods.cbsz.min(nb.trailing_zeros() as u8);
        blk / group * group + mods.abid as usize % group
    };
    let sign = |bit: u8| {
        if info.neg && mods.neg & bit != 0 {
            -1.0
        } else {
            1.0
        }
    };

    let mut d = vec![[0xdead_beefu32; 64]; info.cd_dwords];
    execute(info, mods, &a, &b, &c, &mut d).unwrap();
    let got = gather_out(info, &d);

    for blk in 0..nb {
        for i in 0..m {
            for j in 0..n {
                let g = got[blk][i][j];
                if info.cd == Elem::I32 {
                    let mut s = cm[blk][i][j] as u32 as i32 as i64;
                    for kk in 0..k {
                        let x = am[a_block(blk)][i][kk] as u8 as i8 as i64;
                        let y = b_used[blk][j][kk] as u8 as i8 as i64;
                        s += x * y;
                    }
                    assert_eq!(
                        g as u32 as i32, s as i32,
                        "{} [{blk}][{i}][{j}] {mods:?}",
                        info.name
                    );
                    continue;
                }
                let cv = sign(4) * value(info.cd, cm[blk][i][j]);
                let (mut want, mut mag) = (cv, cv.abs());
                for kk in 0..k {
                    let x = sign(1) * value(ea, am[a_block(blk)][i][kk]);
                    let y = sign(2) * value(eb, b_used[blk][j][kk]);
                    want += x * y;
                    mag += (x * y).abs();
                }
                let (gv, u, tiny) = if info.cd == Elem::F64 {
                    (f64::from_bits(g), f64::EPSILON / 2.0, f64::from_bits(1))
                } else {
                    (
                        f64::from(f32::from_bits(g as u32)),
                        2f64.powi(-24),
                        2f64.powi(-149),
                    )
                };
                let ok = if exact {
                    gv == want
                } else {
                    close(gv, want, mag, k, u, tiny)
                };
                assert!(
                    ok,
                    "{} {mods:?} [{blk}][{i}][{j}]: got {gv}, want {want} (mag {mag})",
                    info.name
                );
            }
        }
    }
}

/// B registers as BLGP presents them to the multiplier (CDNA3 ISA): 1
/// lanes 0-31 also feed 32-63; 2 lanes 32-63 also feed 0-31; 3 rotate down
/// by 16 (lane 16 feeds lane 0, lane 0 feeds lane 48); 4-7 lanes 0-15,
/// 16-31, 32-47 or 48-63 feed every group of 16.
fn blgp_permute(regs: &[Lanes], blgp: u8) -> Vec<Lanes> {
    regs.iter()
        .map(|r| {
            std::array::from_fn(|l| {
                let src = match blgp {
                    1 if l >= 32 => l - 32,
                    2 if l < 32 => l + 32,
                    3 => (l + 16) % 64,
                    4..=7 => (blgp as usize - 4) * 16 + l % 16,
                    _ => l,
                };
                r[src]
            })
        })
        .collect()
}

fn dense_infos() -> impl Iterator<Item = &'static MfmaInfo> {
    ALL.iter().filter(|i| !i.sparse && !i.f8f6f4)
}

#[test]
fn every_dense_instruction_random() {
    let mut n = 0;
    for (s, info) in dense_infos().enumerate() {
        for round in 0..2 {
            check_dense(info, &MfmaMods::default(), 1000 * s as u64 + round, false);
        }
        n += 1;
    }
    assert_eq!(n, 73, "dense instructions");
}

#[test]
fn every_dense_instruction_exact() {
    for (s, info) in dense_infos().enumerate() {
        check_dense(info, &MfmaMods::default(), 7 + s as u64, true);
    }
}

#[test]
fn cbsz_abid_broadcast() {
    let mut n = 0;
    for (s, info) in dense_infos().filter(|i| i.broadcast).enumerate() {
        let max = info.blocks.trailing_zeros() as u8;
        for cbsz in 0..=max {
            for abid in [0, (1u8 << cbsz) - 1, (1u8 << cbsz) / 2] {
                let mods = MfmaMods {
                    cbsz,
                    abid,
                    ..Default::default()
                };
                check_dense(info, &mods, 31 * s as u64 + u64::from(cbsz), true);
                n += 1;
            }
        }
    }
    assert!(n > 100);
}

#[test]
fn blgp_lane_patterns() {
    let mut n = 0;
    for (s, info) in dense_infos().filter(|i| i.lane_pattern).enumerate() {
        for blgp in 0..8 {
            let mods = MfmaMods {
                blgp,
                ..Default::default()
            };
            check_dense(info, &mods, 17 * s as u64 + u64::from(blgp), true);
            n += 1;
        }
    }
    assert!(n > 200);
}

#[test]
fn broadcast_and_lane_pattern_together_random() {
    for name in [
        "v_mfma_f32_4x4x4_16b_f16",
        "v_mfma_f32_16x16x1_4b_f32",
        "v_mfma_i32_32x32x4_2b_i8",
    ] {
        let info = lookup(name).unwrap();
        let mods = MfmaMods {
            cbsz: 1,
            abid: 1,
            blgp: 3,
            ..Default::default()
        };
        check_dense(info, &mods, 99, false);
    }
}

#[test]
fn f64_neg_bits() {
    for name in ["v_mfma_f64_16x16x4_f64", "v_mfma_f64_4x4x4_4b_f64"] {
        let info = lookup(name).unwrap();
        for neg in 0..8 {
            let mods = MfmaMods {
                neg,
                ..Default::default()
            };
            check_dense(info, &mods, u64::from(neg), true);
            check_dense(info, &mods, 50 + u64::from(neg), false);
        }
    }
}

/// Without scale operands no lane pattern applies to instructions that
/// lack BLGP support: the field is ignored, not misread.
#[test]
fn blgp_ignored_where_unsupported() {
    let info = lookup("v_mfma_f32_16x16x16_f16").unwrap();
    assert!(!info.lane_pattern);
    let mods = MfmaMods {
        blgp: 2,
        ..Default::default()
    };
    check_dense(info, &mods, 5, true);
}

/// Denormal inputs and results are kept (no flush).
#[test]
fn denormals_kept() {
    let info = lookup("v_mfma_f32_16x16x16_f16").unwrap();
    // A = 2^-14 (smallest normal f16) in row 0, k 0; B = 2^-120 would not
    // fit f16, so use f32 MFMA for the result denormal and f16 for inputs.
    let mut a = vec![[0u32; 64]; 2];
    let mut b = vec![[0u32; 64]; 2];
    a[0][0] = 0x0001; // f16 denormal 2^-24, A[0][0]
    b[0][0] = 0x0001; // B[0][0]
    let c = vec![[0u32; 64]; 4];
    let mut d = vec![[0u32; 64]; 4];
    execute(info, &MfmaMods::default(), &a, &b, &c, &mut d).unwrap();
    assert_eq!(f32::from_bits(d[0][0]), 2f32.powi(-48));
    let info = lookup("v_mfma_f32_16x16x4_f32").unwrap();
    let a = vec![[f32::from_bits(1).to_bits(); 64]];
    let b = vec![[1f32.to_bits(); 64]];
    execute(info, &MfmaMods::default(), &a, &b, &c, &mut d).unwrap();
    assert_eq!(d[0][0], 4, "four denormal products of 2^-149");
}

/// XF32 drops the low 13 mantissa bits of its inputs.
#[test]
fn xf32_truncates() {
    let info = lookup("v_mfma_f32_16x16x8_xf32").unwrap();
    let one_plus = f32::from_bits(0x3f80_1fff); // 1 + (2^13-1)*2^-23
    let mut a = vec![[0u32; 64]; 2];
    let mut b = vec![[0u32; 64]; 2];
    a[0][0] = one_plus.to_bits();
    b[0][0] = 1f32.to_bits();
    let c = vec![[0u32; 64]; 4];
    let mut d = vec![[0u32; 64]; 4];
    execute(info, &MfmaMods::default(), &a, &b, &c, &mut d).unwrap();
    assert_eq!(f32::from_bits(d[0][0]), 1.0);
}

#[test]
fn fp8_formats_follow_the_target() {
    let g4 = lookup_for(Target::Gfx942, "v_mfma_f32_16x16x32_fp8_fp8").unwrap();
    let g5 = lookup_for(Target::Gfx950, "v_mfma_f32_16x16x32_fp8_fp8").unwrap();
    assert_eq!((g4.a, g5.a), (Elem::Fp8Fnuz, Elem::Fp8));
    assert!(lookup_for(Target::Gfx90a, "v_mfma_f32_16x16x32_fp8_fp8").is_none());
    // 0x48 is 2^(9-8)*1 = 2 in E4M3FNUZ, 2^(9-7) = 4 in E4M3FN.
    for (info, want) in [(g4, 2.0f32), (g5, 4.0)] {
        let mut a = vec![[0u32; 64]; 2];
        let mut b = vec![[0u32; 64]; 2];
        a[0][0] = 0x48;
        b[0][0] = 0x38; // 1.0 in E4M3FNUZ is 0x40; 0x38 is 0.5 there, 1.0 in E4M3FN
        let c = vec![[0u32; 64]; 4];
        let mut d = vec![[0u32; 64]; 4];
        execute(info, &MfmaMods::default(), &a, &b, &c, &mut d).unwrap();
        let bv = if info.a == Elem::Fp8 { 1.0 } else { 0.5 };
        assert_eq!(f32::from_bits(d[0][0]), want * bv, "{}", info.name);
    }
}

#[test]
fn short_operands_are_errors() {
    let info = lookup("v_mfma_f32_32x32x8_f16").unwrap();
    let r = vec![[0u32; 64]; 16];
    let mut d = vec![[0u32; 64]; 16];
    let mods = MfmaMods::default();
    assert!(matches!(
        execute(info, &mods, &r[..1], &r[..2], &r, &mut d),
        Err(MfmaError::Operand { operand: 'A', .. })
    ));
    assert!(matches!(
        execute(info, &mods, &r[..2], &r[..2], &r[..15], &mut d),
        Err(MfmaError::Operand { operand: 'C', .. })
    ));
    assert!(matches!(
        execute(info, &mods, &r[..2], &r[..2], &r, &mut d[..3]),
        Err(MfmaError::Operand { operand: 'D', .. })
    ));
    let sparse = lookup("v_smfmac_f32_16x16x32_f16").unwrap();
    assert!(matches!(
        execute(sparse, &mods, &r, &r, &r, &mut d),
        Err(MfmaError::Sparse(_))
    ));
}

/// Any modifier values, on every instruction, give a result or an error.
#[test]
fn no_panic_on_any_modifiers() {
    let regs = vec![[0x7fc0_0001u32; 64]; 32];
    for info in ALL {
        for (cbsz, abid, blgp, neg) in [(7, 15, 7, 7), (3, 9, 5, 0), (5, 0, 6, 3), (0, 1, 4, 0)] {
            let mods = MfmaMods {
                cbsz,
                abid,
                blgp,
                neg,
                scale_a: Some(([0xffu32; 64], 3)),
                scale_b: None,
            };
            let mut d = vec![[0u32; 64]; 32];
            let r = if info.sparse {
                let mut cd = d.clone();
                crate::mfma::execute_smfmac(info, &mods, &regs, &regs, &regs[0], &mut cd)
                    .map(|_| ())
            } else {
                execute(info, &mods, &regs, &regs, &regs, &mut d)
            };
            if info.f8f6f4 && (cbsz > 4 || blgp > 4) {
                assert!(matches!(r, Err(MfmaError::Format(_))), "{}", info.name);
            } else {
                assert!(r.is_ok(), "{}: {r:?}", info.name);
            }
        }
    }
}

/// The documented accumulation order, bit for bit: acc = C, then
/// acc += A[i][k]*B[k][j] for k ascending, one f32 rounding per step
/// (fused for F32 inputs). Inputs span a wide range of magnitudes so that
/// any other order or intermediate precision would show.
#[test]
fn accumulation_order_is_sequential_k() {
    for name in [
        "v_mfma_f32_32x32x8_f16",
        "v_mfma_f32_16x16x32_fp8_fp8",
        "v_mfma_f32_4x4x4_16b_bf16",
        "v_mfma_f32_32x32x2_f32",
        "v_mfma_f32_32x32x64_f8f6f4",
    ] {
        let info = lookup(name).unwrap();
        let (ea, eb) = (info.a, info.b);
        let (m, n, k, nb) = (info.m, info.n, info.k, info.blocks);
        let mut rng = Rng::new(3);
        let wide = |e: Elem, rng: &mut Rng| match e {
            Elem::F32 => {
                ((rng.unit() * 2f64.powi(rng.below(40) as i32 - 20)) as f32).to_bits() as u64
            }
            _ => random_bits(e, rng),
        };
        let am = random_matrix(nb, m, k, || wide(ea, &mut rng));
        let bm = random_matrix(nb, n, k, || wide(eb, &mut rng));
        let cm = random_matrix(nb, m, n, || ((rng.unit() * 1e3) as f32).to_bits() as u64);
        let a = InLayout {
            rows: m,
            blocks: nb,
            k,
            bits: ea.bits(),
            interleave16: interleaved(info, ea.bits()),
        }
        .scatter(&am, info.a_dwords);
        let b = InLayout {
            rows: n,
            blocks: nb,
            k,
            bits: eb.bits(),
            interleave16: interleaved(info, eb.bits()),
        }
        .scatter(&bm, info.b_dwords);
        let c = scatter_out(info, &cm);
        let mut d = vec![[0u32; 64]; info.cd_dwords];
        execute(info, &MfmaMods::default(), &a, &b, &c, &mut d).unwrap();
        let got = gather_out(info, &d);
        for blk in 0..nb {
            for i in 0..m {
                for j in 0..n {
                    let mut acc = f32::from_bits(cm[blk][i][j] as u32);
                    for kk in 0..k {
                        let x = value(ea, am[blk][i][kk]) as f32;
                        let y = value(eb, bm[blk][j][kk]) as f32;
                        acc = if ea == Elem::F32 {
                            x.mul_add(y, acc)
                        } else {
                            acc + x * y
                        };
                    }
                    assert_eq!(
                        got[blk][i][j] as u32,
                        acc.to_bits(),
                        "{name} [{blk}][{i}][{j}]"
                    );
                }
            }
        }
    }
}

/// The VOP3P-MAI fields as the isa crate decodes `v_mfma_f32_4x4x4_16b_f16
/// ... cbsz:3 abid:5 blgp:6` (word 0 bits 14:8 = 0x2b, word 1 bits 63:61 = 6).
#[test]
fn modifier_fields() {
    let m = MfmaMods::from_fields(0x2b, 6);
    assert_eq!((m.cbsz, m.abid, m.blgp, m.neg), (3, 5, 6, 6));
}

/// Accumulating in place gives what the two-buffer form gives.
#[test]
fn in_place_matches_separate_buffers() {
    for name in [
        "v_mfma_f32_32x32x1_2b_f32",
        "v_mfma_f64_4x4x4_4b_f64",
        "v_mfma_i32_16x16x32_i8",
        "v_mfma_f32_16x16x128_f8f6f4",
    ] {
        let info = lookup(name).unwrap();
        let mut rng = Rng::new(77);
        let mut regs = |n: usize| -> Vec<Lanes> {
            (0..n)
                .map(|_| std::array::from_fn(|_| rng.next() as u32 & 0x3f3f_3f3f))
                .collect()
        };
        let (a, b, c) = (
            regs(info.a_dwords),
            regs(info.b_dwords),
            regs(info.cd_dwords),
        );
        let mods = MfmaMods::default();
        let mut d = vec![[0u32; 64]; info.cd_dwords];
        execute(info, &mods, &a, &b, &c, &mut d).unwrap();
        let mut cd = c.clone();
        crate::mfma::execute_in_place(info, &mods, &a, &b, &mut cd).unwrap();
        assert_eq!(cd, d, "{name}");
    }
}

/// gfx90a's F64 forms have no negation: the bits change nothing.
#[test]
fn gfx90a_f64_ignores_neg() {
    let info = lookup("v_mfma_f64_16x16x4f64").unwrap();
    assert!(!info.neg);
    check_dense(
        info,
        &MfmaMods {
            neg: 7,
            blgp: 7,
            ..Default::default()
        },
        3,
        true,
    );
}
