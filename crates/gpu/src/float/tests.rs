//! Tests against reference tables computed by `ml_dtypes` / numpy
//! (`scripts/gen/float_ref.py` → `crates/gpu/testdata/float_ref.bin`), and
//! against an independent search-based reference for the directed rounding
//! modes, saturation and stochastic rounding.

use super::*;
use std::collections::HashMap;

struct Reference {
    inputs: Vec<u32>,
    enc: HashMap<String, Vec<u32>>,
    dec: HashMap<String, Vec<u32>>,
}

fn reference() -> &'static Reference {
    static REF: std::sync::OnceLock<Reference> = std::sync::OnceLock::new();
    REF.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/float_ref.bin");
        let packed = std::fs::read(path).expect("testdata/float_ref.bin");
        let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&packed).expect("zlib");
        assert_eq!(&raw[..8], b"RJFREF1\n");
        let mut at = 8;
        let mut r = Reference {
            inputs: vec![],
            enc: HashMap::new(),
            dec: HashMap::new(),
        };
        while at < raw.len() {
            let nlen = raw[at] as usize;
            let name = std::str::from_utf8(&raw[at + 1..at + 1 + nlen])
                .unwrap()
                .to_string();
            at += 1 + nlen;
            let count = u32::from_le_bytes(raw[at..at + 4].try_into().unwrap()) as usize;
            let size = raw[at + 4] as usize;
            at += 5;
            let vals: Vec<u32> = raw[at..at + count * size]
                .chunks(size)
                .map(|c| c.iter().rev().fold(0u32, |a, &b| a << 8 | u32::from(b)))
                .collect();
            at += count * size;
            if name == "inputs" {
                r.inputs = vals;
            } else if let Some(f) = name.strip_prefix("enc.") {
                r.enc.insert(f.to_string(), vals);
            } else if let Some(f) = name.strip_prefix("dec.") {
                r.dec.insert(f.to_string(), vals);
            } else {
                panic!("unknown section {name}");
            }
        }
        assert!(r.inputs.len() > 100_000);
        r
    })
}

fn same_f32(a: u32, b: u32) -> bool {
    let (fa, fb) = (f32::from_bits(a), f32::from_bits(b));
    if fa.is_nan() || fb.is_nan() {
        fa.is_nan() && fb.is_nan() && (a >> 31 == b >> 31)
    } else {
        a == b
    }
}

/// Every encoding of every format decodes to the value ml_dtypes gives.
/// NaNs must be NaNs of the same sign (payload bits of NaN-to-NaN
/// conversions are not compared).
#[test]
fn decode_exhaustive() {
    let r = reference();
    for f in ALL {
        let want = &r.dec[f.name];
        assert_eq!(want.len(), 1 << f.bits(), "{}", f.name);
        let mut bad = vec![];
        for (bits, &w) in want.iter().enumerate() {
            let got = f.decode(bits as u32).to_bits();
            if !same_f32(got, w) {
                bad.push(format!("{:#x}: ours {got:#010x} ref {w:#010x}", bits));
            }
            assert_eq!(
                f.is_nan(bits as u32),
                f32::from_bits(w).is_nan(),
                "{} {bits:#x}",
                f.name
            );
        }
        assert!(
            bad.is_empty(),
            "{}: {} mismatches, e.g. {:?}",
            f.name,
            bad.len(),
            &bad[..bad.len().min(8)]
        );
    }
}

/// Round-to-nearest-even conversion of every reference input matches
/// ml_dtypes bit for bit, NaN inputs included (except FP6/FP4, which have
/// no NaN: ml_dtypes' result for NaN there is not meaningful).
#[test]
fn encode_rne_matches_ml_dtypes() {
    let r = reference();
    for f in ALL {
        let want = &r.enc[f.name];
        assert_eq!(want.len(), r.inputs.len());
        let mut bad = vec![];
        for (&x, &w) in r.inputs.iter().zip(want) {
            let xf = f32::from_bits(x);
            if xf.is_nan() && f.specials == Specials::FiniteOnly {
                continue;
            }
            // ml_dtypes rounds f32 denormals in (2^-127, 2^-126) to E8M0
            // as if they were normal (up to 2^-126 whenever x > 2^-127); we
            // round to nearest (see `e8m0_below_min_normal_f32`).
            if f.specials == Specials::Exponent && x > 0x0040_0000 && x < 0x0060_0000 {
                continue;
            }
            let got = f.encode_rne(xf);
            // For NaN inputs the oracles disagree on payloads (numpy keeps
            // f16 payloads unquieted, ml_dtypes canonicalizes bf16): compare
            // NaN-ness and sign only for the 16-bit formats.
            let ok = if xf.is_nan() && f.bits() == 16 {
                f.is_nan(got) && f.is_nan(w) && (got ^ w) & f.sign_mask() == 0
            } else {
                got == w
            };
            if !ok {
                bad.push(format!("{x:#010x} ({xf:e}): ours {got:#x} ref {w:#x}"));
            }
        }
        assert!(
            bad.is_empty(),
            "{}: {} mismatches, e.g. {:?}",
            f.name,
            bad.len(),
            &bad[..bad.len().min(8)]
        );
    }
}

/// The finite values of a format, ascending, from the reference decode table.
fn finite_values(f: Format) -> Vec<f64> {
    let mut v: Vec<f64> = reference().dec[f.name]
        .iter()
        .map(|&b| f64::from(f32::from_bits(b)))
        .filter(|v| v.is_finite())
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v.dedup();
    v
}

/// Expected value of a directed rounding of finite `x`, found by search over
/// the format's values: `Some(v)`, or `None` for overflow to the format's
/// infinity or NaN. Zero results carry the sign of `x` (FNUZ: +0).
fn directed(f: Format, vals: &[f64], x: f32, mode: Rounding) -> Option<f64> {
    let xd = f64::from(x);
    let i = vals.partition_point(|&v| v < xd); // first >= x
    let ge = vals.get(i).copied(); // smallest >= x
    let le = if vals.get(i) == Some(&xd) {
        Some(xd)
    } else {
        i.checked_sub(1).map(|j| vals[j]) // largest <= x
    };
    let toward_zero = if xd >= 0.0 { le } else { ge };
    let pick = match mode {
        Rounding::TowardZero => toward_zero,
        Rounding::TowardPositive => ge,
        Rounding::TowardNegative => le,
        Rounding::NearestEven => unreachable!(),
    };
    let max = *vals.last().unwrap();
    let v = match pick {
        Some(v) => v,
        // Beyond the largest finite value, rounding away from zero.
        None if f.specials == Specials::FiniteOnly => max.copysign(xd),
        // E8M0 has no zero: values below its smallest value go to it.
        None if f.specials == Specials::Exponent && xd < vals[0] => vals[0],
        None => return None,
    };
    // Toward-zero picks for |x| > max are the largest finite value.
    Some(if v == 0.0 {
        if xd.is_sign_negative() && f.specials != Specials::Fnuz {
            -0.0
        } else {
            0.0
        }
    } else {
        v
    })
}

fn show(f: Format, bits: u32) -> f64 {
    f64::from(f.decode(bits))
}

#[test]
fn encode_directed_rounding_matches_search() {
    let r = reference();
    for f in ALL {
        let vals = finite_values(f);
        for mode in [
            Rounding::TowardZero,
            Rounding::TowardPositive,
            Rounding::TowardNegative,
        ] {
            let mut bad = vec![];
            for &x in &r.inputs {
                let xf = f32::from_bits(x);
                if !xf.is_finite() {
                    continue;
                }
                if f.specials == Specials::Exponent && xf <= 0.0 {
                    continue;
                }
                let got = f.encode(xf, Convert::with(mode));
                let ok = match directed(f, &vals, xf, mode) {
                    None => {
                        f.is_nan(got)
                            || (f.specials == Specials::Ieee && show(f, got).is_infinite())
                    }
                    Some(v) => {
                        let g = show(f, got);
                        // E8M0 has no zero: tiny values go to its smallest value.
                        let v = if f.specials == Specials::Exponent && v == 0.0 {
                            vals[0]
                        } else {
                            v
                        };
                        g == v && g.is_sign_negative() == v.is_sign_negative()
                    }
                };
                if !ok {
                    bad.push(format!(
                        "{x:#010x} ({xf:e}): ours {got:#x} = {}",
                        show(f, got)
                    ));
                }
            }
            assert!(
                bad.is_empty(),
                "{} {mode:?}: {} mismatches, e.g. {:?}",
                f.name,
                bad.len(),
                &bad[..bad.len().min(8)]
            );
        }
    }
}

#[test]
fn ieee_overflow_in_directed_modes() {
    // Toward zero stays finite; away from zero goes to infinity.
    let big = 1e6f32;
    assert_eq!(f32_to_f16(big, Rounding::TowardZero), 0x7bff);
    assert_eq!(f32_to_f16(big, Rounding::TowardPositive), 0x7c00);
    assert_eq!(f32_to_f16(big, Rounding::TowardNegative), 0x7bff);
    assert_eq!(f32_to_f16(-big, Rounding::TowardNegative), 0xfc00);
    assert_eq!(f32_to_f16(-big, Rounding::TowardPositive), 0xfbff);
    assert_eq!(f32_to_f16(f32::INFINITY, Rounding::TowardZero), 0x7c00);
    assert_eq!(f32_to_bf16(f32::MAX, Rounding::NearestEven), 0x7f80);
    assert_eq!(f32_to_bf16(f32::MAX, Rounding::TowardZero), 0x7f7f);
    // FNUZ and OCP E4M3FN overflow to NaN, unless rounding toward zero.
    assert_eq!(E4M3FNUZ.encode(1000.0, Convert::RNE), 0x80);
    assert_eq!(
        E4M3FNUZ.encode(-1000.0, Convert::with(Rounding::TowardZero)),
        0xff
    );
    assert_eq!(E4M3FN.encode(1000.0, Convert::RNE), 0x7f);
    assert_eq!(E4M3FN.encode(-1000.0, Convert::RNE), 0xff);
}

/// Saturation (the conversion instructions' clamp bit): |x| beyond the
/// largest finite value and infinities give the largest finite value of the
/// same sign; NaN stays NaN; everything else is as without saturation.
#[test]
fn saturation() {
    let r = reference();
    for f in ALL {
        if f.specials == Specials::Exponent {
            continue;
        }
        let max = f.max_finite();
        let want_rne = &r.enc[f.name];
        let mut bad = vec![];
        for (&x, &w) in r.inputs.iter().zip(want_rne) {
            let xf = f32::from_bits(x);
            let got = f.encode(xf, Convert::RNE_SAT);
            let ok = if xf.is_nan() {
                f.specials == Specials::FiniteOnly || f.is_nan(got)
            } else if xf.abs() > max {
                got == (if xf < 0.0 { f.sign_mask() } else { 0 } | f.max_finite_mag())
            } else {
                got == w
            };
            if !ok {
                bad.push(format!("{x:#010x} ({xf:e}): ours {got:#x}"));
            }
        }
        assert!(
            bad.is_empty(),
            "{}: {} mismatches, e.g. {:?}",
            f.name,
            bad.len(),
            &bad[..bad.len().min(8)]
        );
    }
    assert_eq!(E4M3FNUZ.encode(f32::INFINITY, Convert::RNE_SAT), 0x7f);
    assert_eq!(E4M3FNUZ.encode(f32::NEG_INFINITY, Convert::RNE_SAT), 0xff);
    assert_eq!(E4M3FNUZ.encode(f32::NAN, Convert::RNE_SAT), 0x80);
    assert_eq!(E5M2FNUZ.encode(1e9, Convert::RNE_SAT), 0x7f);
    assert_eq!(E4M3FN.encode(-1e9, Convert::RNE_SAT), 0xfe);
    assert_eq!(E5M2.encode(f32::INFINITY, Convert::RNE_SAT), 0x7b);
    assert_eq!(E5M2.encode(f32::INFINITY, Convert::RNE), 0x7c);
    assert_eq!(E2M1.encode(100.0, Convert::RNE), 0x7);
}

#[test]
fn special_values() {
    // FNUZ: one NaN (0x80), no negative zero.
    assert!(E4M3FNUZ.decode(0x80).is_nan());
    assert_eq!(E4M3FNUZ.encode_rne(-0.0), 0x00);
    assert_eq!(E4M3FNUZ.encode_rne(-1e-30), 0x00);
    assert_eq!(E4M3FNUZ.decode(0x7f), 240.0);
    assert_eq!(E5M2FNUZ.decode(0x7f), 57344.0);
    // OCP E4M3FN: no infinity, S.1111.111 is NaN, max 448.
    assert_eq!(E4M3FN.decode(0x7e), 448.0);
    assert!(E4M3FN.decode(0x7f).is_nan() && E4M3FN.decode(0xff).is_nan());
    assert_eq!(E4M3FN.encode_rne(f32::INFINITY), 0x7f);
    assert_eq!(E4M3FN.encode_rne(-0.0), 0x80);
    // OCP E5M2: IEEE-like.
    assert_eq!(E5M2.decode(0x7c), f32::INFINITY);
    assert_eq!(E5M2.decode(0x7b), 57344.0);
    // FP6/FP4: every encoding finite.
    assert_eq!(E2M3.decode(0x1f), 7.5);
    assert_eq!(E3M2.decode(0x1f), 28.0);
    assert_eq!(E2M1.decode(0x7), 6.0);
    assert_eq!(E2M1.decode(0x1), 0.5);
    assert_eq!(E2M1.decode(0xf), -6.0);
    assert!((0..16).all(|b| !E2M1.is_nan(b)));
    // FP6/FP4 have no NaN: NaN converts to the largest magnitude, keeping the sign.
    assert_eq!(E2M1.encode_rne(f32::NAN), 0x7);
    assert_eq!(E2M1.encode_rne(-f32::NAN), 0xf);
    assert_eq!(E3M2.encode(f32::NAN, Convert::RNE_SAT), 0x1f);
    assert_eq!(E2M3.encode_sr(-f32::NAN, 5, Convert::RNE), 0x3f);
    // E8M0: 2^(e-127), 0xff NaN, no zero.
    assert_eq!(E8M0.decode(127), 1.0);
    assert_eq!(E8M0.decode(0), f32::from_bits(0x0040_0000));
    assert_eq!(E8M0.decode(0xfe), f32::from_bits(0x7f00_0000));
    assert!(E8M0.decode(0xff).is_nan());
    assert_eq!(E8M0.encode_rne(0.0), 0xff);
    assert_eq!(E8M0.encode_rne(-2.0), 0xff);
    assert_eq!(E8M0.encode(3.0, Convert::with(Rounding::TowardZero)), 128);
    // Bits above the format's width are ignored by decode.
    assert_eq!(E2M1.decode(0xf1), 0.5);
    // f16/bf16 helpers.
    assert_eq!(f32_to_f16(1.0, Rounding::NearestEven), 0x3c00);
    assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
    assert_eq!(
        f32_to_bf16(f32::from_bits(0x3f80_8000), Rounding::NearestEven),
        0x3f80
    ); // tie to even
    assert_eq!(
        f32_to_bf16(f32::from_bits(0x3f81_8000), Rounding::NearestEven),
        0x3f82
    ); // tie to even, up
    assert_eq!(bf16_to_f32(0x3f80), 1.0);
    // NaN conversions keep the sign and quiet the NaN.
    assert_eq!(
        f32_to_f16(f32::from_bits(0xff80_0001), Rounding::NearestEven) & 0xfe00,
        0xfe00
    );
    assert!(f16_to_f32(0x7c01).is_nan());
}

#[test]
fn flush_denormals() {
    let ftz = Convert {
        flush_denormals: true,
        ..Convert::RNE
    };
    let min_normal = 2f32.powi(-14);
    let tiny = 2f32.powi(-20);
    assert_eq!(F16.encode(tiny, Convert::RNE), 0x0010);
    assert_eq!(F16.encode(tiny, ftz), 0x0000);
    assert_eq!(F16.encode(-tiny, ftz), 0x8000);
    assert_eq!(F16.encode(min_normal, ftz), 0x0400);
    // Rounds up to the smallest normal: not a denormal result, kept.
    assert_eq!(F16.encode(min_normal * (1.0 - 1.0 / 4096.0), ftz), 0x0400);
    // f32 denormal inputs flush before conversion (to bf16 they would be denormal).
    assert_eq!(
        BF16.encode(f32::from_bits(0x0040_0000), Convert::RNE),
        0x0040
    );
    assert_eq!(BF16.encode(f32::from_bits(0x0040_0000), ftz), 0x0000);
    assert_eq!(F16.decode_ftz(0x8001).to_bits(), 0x8000_0000);
    assert_eq!(F16.decode_ftz(0x0400), min_normal);
    // Every denormal of every format flushes; every normal is unchanged.
    for f in ALL {
        for b in 0..1u32 << f.bits() {
            let v = f.decode(b);
            let d = f.decode_ftz(b);
            let denormal = v != 0.0 && v.is_finite() && v.abs() < f.decode(1 << f.man_bits);
            if denormal && f.specials != Specials::Exponent {
                assert_eq!(d, 0.0, "{} {b:#x}", f.name);
                assert_eq!(d.is_sign_negative(), v.is_sign_negative());
                assert_eq!(
                    f.encode(v, ftz),
                    f.encode(if v < 0.0 { -0.0 } else { 0.0 }, ftz)
                );
            } else if !v.is_nan() && f.specials != Specials::Exponent {
                assert_eq!(d.to_bits(), v.to_bits(), "{} {b:#x}", f.name);
                assert_eq!(
                    f.encode(v, ftz),
                    f.encode(v, Convert::RNE),
                    "{} {b:#x}",
                    f.name
                );
            }
        }
    }
}

/// Splitmix64, for reproducible random values.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn stochastic_rounding_bounds() {
    let r = reference();
    let mut seed = 7;
    for f in ALL {
        let min_normal = f64::from(f.decode(1 << f.man_bits));
        for &x in &r.inputs {
            let xf = f32::from_bits(x);
            if !xf.is_finite() || (f.specials == Specials::Exponent && xf <= 0.0) {
                continue;
            }
            let rtz = f.encode(xf, Convert::with(Rounding::TowardZero));
            let away = f.encode(
                xf,
                Convert::with(if xf < 0.0 {
                    Rounding::TowardNegative
                } else {
                    Rounding::TowardPositive
                }),
            );
            // Magnitudes whose truncation overflows overflow whatever rand is.
            if rtz & !f.sign_mask() == f.max_finite_mag() && xf.abs() > f.max_finite() {
                let trunc_overflows = f.encode_sr(xf, 0, Convert::RNE) != rtz;
                if trunc_overflows {
                    assert_eq!(f.encode_sr(xf, 0, Convert::RNE), away, "{} {x:#x}", f.name);
                    continue;
                }
            }
            // rand = 0 truncates.
            assert_eq!(f.encode_sr(xf, 0, Convert::RNE), rtz, "{} {x:#x}", f.name);
            // Any rand gives one of the two neighbours.
            let rand = splitmix(&mut seed) as u32;
            let sr = f.encode_sr(xf, rand, Convert::RNE);
            assert!(
                sr == rtz || sr == away,
                "{} {x:#x} rand {rand:#x}: {sr:#x}",
                f.name
            );
            // rand = all ones rounds away whenever anything is dropped
            // (for normal results, where no bits are pre-truncated).
            if f64::from(xf.abs()) >= min_normal {
                assert_eq!(
                    f.encode_sr(xf, u32::MAX, Convert::RNE),
                    away,
                    "{} {x:#x}",
                    f.name
                );
            }
        }
    }
}

#[test]
fn stochastic_rounding_is_unbiased() {
    let mut seed = 42;
    for (f, x) in [
        (E4M3FNUZ, 1.3f32),
        (E4M3FN, -3.1),
        (E5M2, 100.7),
        (E5M2FNUZ, 0.0123),
        (F16, 1.000_123_4),
        (BF16, 3.3),
        (E2M1, 2.6),
        (E3M2, 0.3),
    ] {
        let n = 20_000;
        let mean: f64 = (0..n)
            .map(|_| f64::from(f.decode(f.encode_sr(x, splitmix(&mut seed) as u32, Convert::RNE))))
            .sum::<f64>()
            / f64::from(n);
        let lo = f64::from(f.decode(f.encode(x, Convert::with(Rounding::TowardZero))));
        let hi = f64::from(f.decode(f.encode(
            x,
            Convert::with(if x < 0.0 {
                Rounding::TowardNegative
            } else {
                Rounding::TowardPositive
            }),
        )));
        let ulp = (hi - lo).abs();
        assert!(ulp > 0.0, "{} {x} is exact", f.name);
        assert!(
            (mean - f64::from(x)).abs() < 0.02 * ulp,
            "{} {x}: mean {mean}, ulp {ulp}",
            f.name
        );
    }
}

#[test]
fn stochastic_rounding_with_saturation() {
    let sat = Convert::RNE_SAT;
    assert_eq!(E4M3FNUZ.encode_sr(1000.0, 0, sat), 0x7f);
    assert_eq!(E4M3FNUZ.encode_sr(1000.0, 0, Convert::RNE), 0x80);
    // 240 < x < 256: truncation gives 240; rounding up overflows.
    assert_eq!(E4M3FNUZ.encode_sr(250.0, 0, Convert::RNE), 0x7f);
    assert_eq!(E4M3FNUZ.encode_sr(250.0, u32::MAX, Convert::RNE), 0x80);
    assert_eq!(E4M3FNUZ.encode_sr(250.0, u32::MAX, sat), 0x7f);
    assert_eq!(E5M2.encode_sr(60000.0, u32::MAX, Convert::RNE), 0x7c);
    assert_eq!(E5M2.encode_sr(60000.0, u32::MAX, sat), 0x7b);
}

#[test]
fn decode_encode_round_trip() {
    for f in ALL {
        for b in 0..1u32 << f.bits() {
            let v = f.decode(b);
            if v.is_nan() {
                assert!(f.is_nan(f.encode_rne(v)), "{} {b:#x}", f.name);
                continue;
            }
            for mode in [
                Rounding::NearestEven,
                Rounding::TowardZero,
                Rounding::TowardPositive,
                Rounding::TowardNegative,
            ] {
                assert_eq!(
                    f.encode(v, Convert::with(mode)),
                    b,
                    "{} {b:#x} {mode:?}",
                    f.name
                );
            }
            assert_eq!(
                f.encode_sr(v, 0x1234_5678, Convert::RNE),
                b,
                "{} {b:#x}",
                f.name
            );
        }
    }
}

#[test]
fn e8m0_below_min_normal_f32() {
    let two_m127 = f32::from_bits(0x0040_0000);
    let two_m126 = f32::from_bits(0x0080_0000);
    assert_eq!(E8M0.encode_rne(two_m127), 0x00);
    assert_eq!(E8M0.encode_rne(two_m127 * 1.25), 0x00);
    assert_eq!(E8M0.encode_rne(two_m127 * 1.5), 0x01); // tie: up, as for normals
    assert_eq!(E8M0.encode_rne(two_m127 * 1.75), 0x01);
    assert_eq!(E8M0.encode_rne(two_m126), 0x01);
    assert_eq!(E8M0.encode_rne(f32::from_bits(1)), 0x00);
    assert_eq!(
        E8M0.encode(two_m127 * 1.25, Convert::with(Rounding::TowardPositive)),
        0x01
    );
    assert_eq!(E8M0.encode_rne(1.5), 0x80);
    assert_eq!(E8M0.encode_rne(3.0), 0x81);
    assert_eq!(E8M0.encode_rne(f32::MAX), 0xff);
}

/// No input panics, and every result fits the format's width.
#[test]
fn any_input_any_mode() {
    let mut seed = 99;
    let modes = [
        Rounding::NearestEven,
        Rounding::TowardZero,
        Rounding::TowardPositive,
        Rounding::TowardNegative,
    ];
    for i in 0..100_000u32 {
        let x = f32::from_bits(splitmix(&mut seed) as u32);
        let rand = splitmix(&mut seed) as u32;
        let junk = splitmix(&mut seed) as u32;
        for f in ALL {
            let c = Convert {
                rounding: modes[(i % 4) as usize],
                saturate: i & 4 != 0,
                flush_denormals: i & 8 != 0,
            };
            let limit = 1u64 << f.bits();
            assert!(u64::from(f.encode(x, c)) < limit, "{} {x:e}", f.name);
            assert!(
                u64::from(f.encode_sr(x, rand, c)) < limit,
                "{} {x:e}",
                f.name
            );
            // Decode ignores the bits above the format's width.
            let b = f.encode(x, c);
            let high = junk << f.bits().min(31);
            assert_eq!(f.decode(b | high).to_bits(), f.decode(b).to_bits());
            let _ = f.decode_ftz(junk);
        }
    }
}
