//! SMFMAC: 4:2 structured-sparse A with per-lane index sets.

use super::*;
use crate::mfma::{ALL, MfmaError, MfmaMods, execute_smfmac, lookup};

/// Builds a 4:2 sparse A (two distinct positions of every group of four k
/// per row), its compressed registers and index register, runs the
/// instruction and compares with the dense product.
fn check_sparse(info: &MfmaInfo, cbsz: u8, abid: u8, seed: u64, exact: bool) {
    let mut rng = Rng::new(seed);
    let (m, n, k) = (info.m, info.n, info.k);
    let kc = k / 2;
    let pick = |e: Elem, rng: &mut Rng| {
        if exact {
            small_bits(e, rng)
        } else {
            random_bits(e, rng)
        }
    };
    // Compressed values and their positions within their group of four.
    let mut vals = vec![vec![0u64; kc]; m];
    let mut pos = vec![vec![0usize; kc]; m];
    for i in 0..m {
        for q in 0..kc / 2 {
            let p0 = rng.below(4) as usize;
            let p1 = (p0 + 1 + rng.below(3) as usize) % 4;
            pos[i][2 * q] = p0;
            pos[i][2 * q + 1] = p1;
            vals[i][2 * q] = pick(info.a, &mut rng);
            vals[i][2 * q + 1] = pick(info.a, &mut rng);
        }
    }
    let bm = random_matrix(1, n, k, || pick(info.b, &mut rng));
    let cm = random_matrix(1, m, n, || pick(info.cd, &mut rng));
    let la = InLayout {
        rows: m,
        blocks: 1,
        k: kc,
        bits: info.a.bits(),
        interleave16: false,
    };
    let lb = InLayout {
        rows: n,
        blocks: 1,
        k,
        bits: info.b.bits(),
        interleave16: false,
    };
    let a = la.scatter(&[vals.clone()], info.a_dwords);
    let b = lb.scatter(&bm, info.b_dwords);
    // Index register (CDNA3 ISA SMFMAC): for the lane holding a compressed
    // slot s, 4 bits per pair of slots starting at bit 0, first slot's
    // position in bits 1:0 and second's in 3:2; with CBSZ 0 ABID moves to
    // the ABID-th set, one set being as many slots as the lane holds. Other
    // bits hold noise.
    let per_lane = la.per_lane();
    let mut idx: Lanes = std::array::from_fn(|_| rng.next() as u32);
    let base = if cbsz == 0 {
        abid as usize * per_lane
    } else {
        0
    };
    la.each(|lane, slot, _, row, kk| {
        let at = 4 * ((slot + base) / 2) + 2 * (slot % 2);
        put_bits(
            std::slice::from_mut(&mut idx),
            lane,
            at % 32,
            2,
            pos[row][kk] as u64,
        );
    });
    let mut cd = scatter_out(info, &cm);
    let mods = MfmaMods {
        cbsz,
        abid,
        ..Default::default()
    };
    execute_smfmac(info, &mods, &a, &b, &idx, &mut cd).unwrap();
    let got = gather_out(info, &cd);

    for i in 0..m {
        for j in 0..n {
            // Dense A row.
            let mut arow = vec![0f64; k];
            let mut arow_i = vec![0i64; k];
            for c in 0..kc {
                let kk = 4 * (c / 2) + pos[i][c];
                arow[kk] = value(info.a, vals[i][c]);
                arow_i[kk] = vals[i][c] as u8 as i8 as i64;
            }
            if info.cd == Elem::I32 {
                let mut s = cm[0][i][j] as u32 as i32 as i64;
                for kk in 0..k {
                    s += arow_i[kk] * (bm[0][j][kk] as u8 as i8 as i64);
                }
                assert_eq!(
                    got[0][i][j] as u32 as i32, s as i32,
                    "{} [{i}][{j}]",
                    info.name
                );
                continue;
            }
            let cv = value(info.cd, cm[0][i][j]);
            let (mut want, mut mag) = (cv, cv.abs());
            for kk in 0..k {
                let p = arow[kk] * value(info.b, bm[0][j][kk]);
                want += p;
                mag += p.abs();
            }
            let g = f64::from(f32::from_bits(got[0][i][j] as u32));
            let ok = if exact {
                g == want
            } else {
                close(g, want, mag, kc, 2f64.powi(-24), 2f64.powi(-149))
            };
            assert!(
                ok,
                "{} cbsz {cbsz} abid {abid} [{i}][{j}]: got {g}, want {want}",
                info.name
            );
        }
    }
}

#[test]
fn every_smfmac_instruction() {
    let mut n = 0;
    for (s, info) in ALL.iter().filter(|i| i.sparse).enumerate() {
        let per_lane = info.a_per_lane();
        let sets = (32 / (2 * per_lane)).max(1) as u8;
        for abid in 0..sets {
            check_sparse(info, 0, abid, 10 * s as u64 + u64::from(abid), true);
        }
        check_sparse(info, 0, sets - 1, 500 + s as u64, false);
        check_sparse(info, 1, sets - 1, 900 + s as u64, true);
        n += 1;
    }
    assert_eq!(n, 36);
}

/// Unselected positions are skipped, not multiplied by zero: an infinite B
/// element there leaves the result finite.
#[test]
fn unselected_b_rows_are_not_read() {
    let info = lookup("v_smfmac_f32_16x16x32_f16").unwrap();
    let a = vec![[0x3c00_3c00u32; 64]; 2]; // 1.0 everywhere
    let mut b = vec![[0x3c00_3c00u32; 64]; 4];
    // B[k][j] for k = 3 (lane j, register 1 high half) = +inf.
    for r in b.iter_mut().skip(1).take(1) {
        for l in 0..16 {
            r[l] = 0x7c00_3c00;
        }
    }
    // Every pair selects positions 0 and 1.
    let idx = [0x4444_4444u32; 64];
    let mut cd = vec![[0u32; 64]; 4];
    execute_smfmac(info, &MfmaMods::default(), &a, &b, &idx, &mut cd).unwrap();
    assert_eq!(f32::from_bits(cd[0][0]), 16.0);
}

#[test]
fn dense_entry_point_rejects_smfmac_and_vice_versa() {
    let r = vec![[0u32; 64]; 16];
    let mut cd = r.clone();
    let dense = lookup("v_mfma_f32_16x16x16_f16").unwrap();
    assert!(matches!(
        execute_smfmac(dense, &MfmaMods::default(), &r, &r, &r[0], &mut cd),
        Err(MfmaError::NotSparse(_))
    ));
    let sparse = lookup("v_smfmac_f32_32x32x16_bf16").unwrap();
    assert!(matches!(
        execute_smfmac(sparse, &MfmaMods::default(), &r[..1], &r, &r[0], &mut cd),
        Err(MfmaError::Operand { operand: 'A', .. })
    ));
}
