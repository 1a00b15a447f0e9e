//! Throughput: a 1024^3 FP8 GEMM is 131072 `v_mfma_f32_16x16x32_fp8_fp8`
//! (or 32768 `v_mfma_f32_16x16x128_f8f6f4`) issues; together they must
//! take well under 5 s on one thread. Release builds run the full count;
//! debug builds a 1/512 share (timing only asserted in release).

use std::time::Instant;

use super::*;
use crate::config::GfxTarget;
use crate::mfma::{MfmaMods, execute, lookup_for};

fn time_issues(target: GfxTarget, name: &str, issues: usize) -> f64 {
    let info = lookup_for(target, name).unwrap();
    let mut rng = Rng::new(11);
    // Finite fp8 bytes in every register.
    let a: Vec<Lanes> = (0..info.a_dwords)
        .map(|_| std::array::from_fn(|_| (rng.next() as u32) & 0x3737_3737))
        .collect();
    let b = a.clone();
    let mut c = vec![[0u32; 64]; info.cd_dwords];
    let mut d = c.clone();
    let t = Instant::now();
    for _ in 0..issues {
        execute(info, &MfmaMods::default(), &a, &b, &c, &mut d).unwrap();
        std::mem::swap(&mut c, &mut d);
    }
    let s = t.elapsed().as_secs_f64();
    assert!(c.iter().flatten().all(|&x| f32::from_bits(x).is_finite()));
    s
}

#[test]
fn fp8_gemm_1024_cubed() {
    let share = if cfg!(debug_assertions) { 512 } else { 1 };
    let t942 = time_issues(
        GfxTarget::Gfx942,
        "v_mfma_f32_16x16x32_fp8_fp8",
        131072 / share,
    );
    let t950 = time_issues(
        GfxTarget::Gfx950,
        "v_mfma_f32_16x16x128_f8f6f4",
        32768 / share,
    );
    eprintln!(
        "1024^3 fp8 GEMM (1/{share}): 16x16x32 fp8 {t942:.3} s, 16x16x128 f8f6f4 {t950:.3} s"
    );
    if !cfg!(debug_assertions) {
        assert!(t942 < 5.0 && t950 < 5.0);
    }
}
