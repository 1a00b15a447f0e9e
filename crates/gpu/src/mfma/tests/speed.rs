//! Throughput: a 1024^3 FP8 GEMM is 131072 `v_mfma_f32_16x16x32_fp8_fp8`
//! (or 32768 `v_mfma_f32_16x16x128_f8f6f4`) issues; together they must
//! take well under 5 s of CPU time on one thread. Release builds run the full count;
//! debug builds a 1/512 share (timing only asserted in release).

use std::time::Instant;

use super::*;
use crate::mfma::{MfmaMods, execute, lookup_for};
use rocjitsu_isa::Target;

/// This thread's CPU time in seconds (Linux schedstat), so that the
/// figures mean something on a shared machine; wall time elsewhere.
fn cpu_seconds(wall: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or_else(|| wall.elapsed().as_secs_f64(), |ns| ns as f64 * 1e-9)
}

fn time_issues(target: Target, name: &str, issues: usize) -> f64 {
    let info = lookup_for(target, name).unwrap();
    let mut rng = Rng::new(11);
    // Finite fp8 bytes in every register.
    let a: Vec<Lanes> = (0..info.a_dwords)
        .map(|_| std::array::from_fn(|_| (rng.next() as u32) & 0x3737_3737))
        .collect();
    let b = a.clone();
    let mut c = vec![[0u32; 64]; info.cd_dwords];
    let mut d = c.clone();
    let wall = Instant::now();
    let t0 = cpu_seconds(wall);
    for _ in 0..issues {
        execute(info, &MfmaMods::default(), &a, &b, &c, &mut d).unwrap();
        std::mem::swap(&mut c, &mut d);
    }
    let s = cpu_seconds(wall) - t0;
    let finite = match info.cd {
        Elem::F32 => c.iter().flatten().all(|&x| f32::from_bits(x).is_finite()),
        Elem::F64 => c.chunks(2).all(|p| {
            p.first().zip(p.get(1)).is_some_and(|(lo, hi)| {
                (0..64)
                    .all(|l| f64::from_bits(u64::from(lo[l]) | u64::from(hi[l]) << 32).is_finite())
            })
        }),
        _ => true,
    };
    assert!(finite, "{name}");
    s
}

#[test]
fn fp8_gemm_1024_cubed() {
    let share = if cfg!(debug_assertions) { 512 } else { 1 };
    let t942 = time_issues(
        Target::Gfx942,
        "v_mfma_f32_16x16x32_fp8_fp8",
        131072 / share,
    );
    let t950 = time_issues(Target::Gfx950, "v_mfma_f32_16x16x128_f8f6f4", 32768 / share);
    eprintln!(
        "1024^3 fp8 GEMM (1/{share}): 16x16x32 fp8 {t942:.3} s, 16x16x128 f8f6f4 {t950:.3} s"
    );
    if !cfg!(debug_assertions) {
        assert!(t942 < 5.0 && t950 < 5.0);
    }
}

/// Per-issue cost of a few other families (reported; asserted loosely in
/// release builds).
#[test]
fn other_families() {
    let share = if cfg!(debug_assertions) { 64 } else { 1 };
    for (t, name) in [
        (Target::Gfx942, "v_mfma_f32_32x32x8_f16"),
        (Target::Gfx942, "v_mfma_f32_32x32x2_f32"),
        (Target::Gfx942, "v_mfma_f64_16x16x4_f64"),
        (Target::Gfx942, "v_mfma_i32_32x32x16_i8"),
        (Target::Gfx90a, "v_mfma_f32_4x4x4f16"),
    ] {
        let issues = 8192 / share;
        let s = time_issues(t, name, issues);
        let us = s * 1e6 / issues as f64;
        eprintln!("{name}: {us:.2} us per issue");
        if !cfg!(debug_assertions) {
            assert!(us < 200.0, "{name}");
        }
    }
}
