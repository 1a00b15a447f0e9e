//! gfx950 f8f6f4 MFMA: every A/B format pair, register counts, and the
//! scaled forms.

use super::*;
use crate::mfma::{MfmaMods, execute, lookup};

use super::dense::check_dense;

const SHAPES: [&str; 2] = ["v_mfma_f32_16x16x128_f8f6f4", "v_mfma_f32_32x32x64_f8f6f4"];

#[test]
fn every_format_pair() {
    for name in SHAPES.iter().chain(&["v_mfma_scale_f32_16x16x128_f8f6f4"]) {
        let info = lookup(name).unwrap();
        for cbsz in 0..5 {
            for blgp in 0..5 {
                let mods = MfmaMods {
                    cbsz,
                    blgp,
                    ..Default::default()
                };
                check_dense(info, &mods, u64::from(cbsz * 5 + blgp), false);
                check_dense(info, &mods, 100 + u64::from(cbsz * 5 + blgp), true);
            }
        }
    }
}

#[test]
fn register_counts_follow_the_formats() {
    let info = lookup(SHAPES[0]).unwrap();
    for (sel, regs) in [(0, 8), (1, 8), (2, 6), (3, 6), (4, 4)] {
        let mods = MfmaMods {
            cbsz: sel,
            blgp: 4 - sel.min(4),
            ..Default::default()
        };
        assert_eq!(info.a_dwords_for(&mods), Ok(regs));
    }
    assert_eq!(info.a_dwords, 8);
    let bad = MfmaMods {
        cbsz: 5,
        ..Default::default()
    };
    assert!(info.a_dwords_for(&bad).is_err());
}

/// Scaled forms: A[i][k] is scaled by the E8M0 byte (selected by opsel) of
/// the lane that holds it, B[k][j] likewise.
fn check_scaled(name: &str, cbsz: u8, blgp: u8, sel_a: u8, sel_b: u8, seed: u64) {
    let info = lookup(name).unwrap();
    let mut rng = Rng::new(seed);
    let mods0 = MfmaMods {
        cbsz,
        blgp,
        ..Default::default()
    };
    let (ea, eb) = info.elems(&mods0).unwrap();
    let (m, n, k) = (info.m, info.n, info.k);
    let am = random_matrix(1, m, k, || random_bits(ea, &mut rng));
    let bm = random_matrix(1, n, k, || random_bits(eb, &mut rng));
    let cm = random_matrix(1, m, n, || random_bits(Elem::F32, &mut rng));
    let la = InLayout {
        rows: m,
        blocks: 1,
        k,
        bits: ea.bits(),
        interleave16: interleaved(info, ea.bits()),
    };
    let lb = InLayout {
        rows: n,
        blocks: 1,
        k,
        bits: eb.bits(),
        interleave16: interleaved(info, eb.bits()),
    };
    let a = la.scatter(&am, info.a_dwords_for(&mods0).unwrap());
    let b = lb.scatter(&bm, info.b_dwords_for(&mods0).unwrap());
    let c = scatter_out(info, &cm);
    // Scales 2^-6 .. 2^6 in the selected byte, noise elsewhere.
    let mut scales = |sel: u8| -> Lanes {
        std::array::from_fn(|_| {
            let noise = rng.next() as u32;
            let e = 121 + rng.below(13) as u32;
            (noise & !(0xff << (8 * sel))) | (e << (8 * sel))
        })
    };
    let (sa, sb) = (scales(sel_a), scales(sel_b));
    let mods = MfmaMods {
        scale_a: Some((sa, sel_a)),
        scale_b: Some((sb, sel_b)),
        ..mods0
    };
    let mut d = vec![[0u32; 64]; info.cd_dwords];
    execute(info, &mods, &a, &b, &c, &mut d).unwrap();
    let got = gather_out(info, &d);
    // The lane holding A[i][k] / B[k][j]: 32 consecutive k per lane.
    let per_lane = k * m / 64;
    let scale = |lanes: &Lanes, sel: u8, lane: usize| {
        2f64.powi(((lanes[lane] >> (8 * sel)) & 0xff) as i32 - 127)
    };
    for i in 0..m {
        for j in 0..n {
            let cv = value(Elem::F32, cm[0][i][j]);
            let (mut want, mut mag) = (cv, cv.abs());
            for kk in 0..k {
                let lane_a = i + m * (kk / per_lane);
                let lane_b = j + n * (kk / per_lane);
                let p = value(ea, am[0][i][kk])
                    * scale(&sa, sel_a, lane_a)
                    * value(eb, bm[0][j][kk])
                    * scale(&sb, sel_b, lane_b);
                want += p;
                mag += p.abs();
            }
            let g = f64::from(f32::from_bits(got[0][i][j] as u32));
            assert!(
                close(g, want, mag, k, 2f64.powi(-24), 2f64.powi(-149)),
                "{name} cbsz {cbsz} blgp {blgp} [{i}][{j}]: got {g}, want {want}"
            );
        }
    }
}

#[test]
fn scaled_forms() {
    for name in [
        "v_mfma_scale_f32_16x16x128_f8f6f4",
        "v_mfma_scale_f32_32x32x64_f8f6f4",
    ] {
        for (n, (cbsz, blgp)) in [(0, 0), (1, 4), (4, 2), (3, 3), (2, 1), (4, 4)]
            .into_iter()
            .enumerate()
        {
            let n = n as u8;
            check_scaled(name, cbsz, blgp, n % 4, (n + 1) % 4, u64::from(n));
        }
    }
}

/// A NaN scale (E8M0 0xFF) makes the products it scales NaN.
#[test]
fn nan_scale() {
    let info = lookup("v_mfma_scale_f32_16x16x128_f8f6f4").unwrap();
    let one = 0x38u32 * 0x0101_0101; // fp8 1.0 in every byte
    let a = vec![[one; 64]; 8];
    let b = vec![[one; 64]; 8];
    let c = vec![[0u32; 64]; 4];
    let mut sa = [127u32; 64];
    sa[1] = 0xff; // A row 1, k 0..31
    let mods = MfmaMods {
        scale_a: Some((sa, 0)),
        scale_b: Some(([127u32 << 16; 64], 2)),
        ..Default::default()
    };
    let mut d = vec![[0u32; 64]; 4];
    execute(info, &mods, &a, &b, &c, &mut d).unwrap();
    // D[0][j] = 128 (lanes 0-15 of register 0), D[1][j] NaN (register 1).
    assert!(d[0][..16].iter().all(|&x| f32::from_bits(x) == 128.0));
    assert!(d[1][..16].iter().all(|&x| f32::from_bits(x).is_nan()));
}
