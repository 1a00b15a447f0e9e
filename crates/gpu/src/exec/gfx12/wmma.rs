//! GFX12 WMMA (`v_wmma_*_16x16x{16,32}_*`) in 32-lane waves: D = A x B + C
//! for 16x16 result matrices (RDNA4 ISA manual, "Wave Matrix Multiply
//! Accumulate").
//!
//! Lane layouts (wave32; unlike GFX11 nothing is duplicated): A's row `i`
//! is in lanes `i` and `16 + i`, lane `i` holding the first half of its K
//! elements and lane `16 + i` the second half, packed in order through
//! the source VGPRs from bit 0 (two 16-bit, four 8-bit or eight 4-bit
//! elements per VGPR); B's column `j` is in lanes `j` and `16 + j` the same
//! way. C and D: element `v` of lane `l` is row `8 * (l / 16) + v`, column
//! `l % 16`, one per VGPR for the 32-bit results, two per VGPR (low half
//! first) for the 16-bit ones.
//!
//! Numerics: products are exact in f64, each dot product is added to C in
//! f64 before one rounding to the result type (round to nearest even); the
//! integer forms accumulate in 32 bits, wrapping, or saturating with
//! `clamp`. FP8 and BF8 are OCP E4M3 and E5M2. Modifiers: `neg_lo[0]` /
//! `neg_lo[1]` negate A / B (float forms) or make them signed (integer
//! forms), `neg_lo[2]` negates C and `neg_hi[2]` takes its absolute value
//! (float forms).
//!
//! Not modelled (the instruction faults naming itself): 64-lane waves,
//! whose layouts this module does not describe, `neg_hi` on A and B, and
//! SWMMAC (`v_swmmac_*`, sparse A with an index operand).

use super::super::op::{Ctx, ExecFn, Fault, Op};
use super::super::wave::{Lanes, Src, Width};
use crate::float::{E4M3FN, E5M2, Rounding, bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};

/// Element types.
const F16: u8 = 0;
const BF16: u8 = 1;
const FP8: u8 = 2;
const BF8: u8 = 3;
const IU8: u8 = 4;
const IU4: u8 = 5;

/// The semantic function of a GFX12 WMMA mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_wmma_f32_16x16x16_f16" => float::<F16, F16, false, false>,
        "v_wmma_f32_16x16x16_bf16" => float::<BF16, BF16, false, false>,
        "v_wmma_f16_16x16x16_f16" => float::<F16, F16, true, false>,
        "v_wmma_bf16_16x16x16_bf16" => float::<BF16, BF16, true, true>,
        "v_wmma_f32_16x16x16_fp8_fp8" => float::<FP8, FP8, false, false>,
        "v_wmma_f32_16x16x16_fp8_bf8" => float::<FP8, BF8, false, false>,
        "v_wmma_f32_16x16x16_bf8_fp8" => float::<BF8, FP8, false, false>,
        "v_wmma_f32_16x16x16_bf8_bf8" => float::<BF8, BF8, false, false>,
        "v_wmma_i32_16x16x16_iu8" => int::<IU8, 16>,
        "v_wmma_i32_16x16x16_iu4" => int::<IU4, 16>,
        "v_wmma_i32_16x16x32_iu4" => int::<IU4, 32>,
        _ => return None,
    })
}

/// Bits per element of a type.
const fn bits(t: u8) -> usize {
    match t {
        F16 | BF16 => 16,
        FP8 | BF8 | IU8 => 8,
        _ => 4,
    }
}

/// `count` consecutive registers of a source (a constant fills each).
fn regs(c: &Ctx, src: Src, count: usize) -> Vec<Lanes> {
    (0..count as u16)
        .map(|i| match src {
            Src::V(r) => *c.wave.vreg(r + i),
            s => [c.wave.read_s32(s, Width::B32, &c.env.apertures); 64],
        })
        .collect()
}

fn check(c: &Ctx, op: &Op, float: bool) -> Result<(), Fault> {
    if !c.wave.wave32 {
        return Err(Fault::Unsupported(op.name()));
    }
    if op.mods.neg_hi & 3 != 0 || !float && op.mods.neg_hi & 4 != 0 {
        return Err(Fault::Invalid(format!(
            "{}: neg_hi on A or B is not modelled",
            op.name()
        )));
    }
    Ok(())
}

/// The raw bits of element `k` (of `kk` per row/column) of the row or
/// column `i` of an A or B operand whose registers are `v`.
#[inline]
fn raw<const T: u8>(v: &[Lanes], i: usize, k: usize, kk: usize) -> u32 {
    let half = kk / 2;
    let lane = i + 16 * (k / half);
    let k = k % half;
    let b = bits(T);
    let per = 32 / b;
    let w = v[k / per][lane] >> (b * (k % per));
    w & ((1 << b) - 1)
}

fn to_f64<const T: u8>(x: u32) -> f64 {
    f64::from(match T {
        F16 => f16_to_f32(x as u16),
        BF16 => bf16_to_f32(x as u16),
        FP8 => E4M3FN.decode(x),
        _ => E5M2.decode(x),
    })
}

/// The float forms: A of type `TA`, B of `TB` (K = 16), D and C f32 or,
/// with `HALF`, 16-bit (`BFH`: bf16, else f16) packed two per VGPR.
fn float<const TA: u8, const TB: u8, const HALF: bool, const BFH: bool>(
    c: &mut Ctx,
    op: &Op,
) -> Result<(), Fault> {
    check(c, op, true)?;
    const K: usize = 16;
    let na = K / 2 * bits(TA) / 32;
    let nb = K / 2 * bits(TB) / 32;
    let a = regs(c, op.src[0], na);
    let b = regs(c, op.src[1], nb);
    let ncv = if HALF { 4 } else { 8 };
    let cv = regs(c, op.src[2], ncv);
    let (neg_a, neg_b) = (op.mods.neg & 1 != 0, op.mods.neg & 2 != 0);
    let (neg_c, abs_c) = (op.mods.neg & 4 != 0, op.mods.neg_hi & 4 != 0);
    // Rows of A and columns of B as f64, negated as asked.
    let am: Vec<[f64; K]> = (0..16)
        .map(|i| {
            std::array::from_fn(|k| {
                let x = to_f64::<TA>(raw::<TA>(&a, i, k, K));
                if neg_a { -x } else { x }
            })
        })
        .collect();
    let bm: Vec<[f64; K]> = (0..16)
        .map(|j| {
            std::array::from_fn(|k| {
                let x = to_f64::<TB>(raw::<TB>(&b, j, k, K));
                if neg_b { -x } else { x }
            })
        })
        .collect();
    let mut out = [[0u32; 64]; 8];
    for (r, o) in out.iter_mut().enumerate().take(ncv) {
        for l in 0..32 {
            let mut w = 0u32;
            for h in 0..if HALF { 2 } else { 1 } {
                let v = if HALF { 2 * r + h } else { r };
                let (row, col) = (8 * (l / 16) + v, l % 16);
                let s: f64 = (0..K).map(|k| am[row][k] * bm[col][k]).sum();
                let cw = cv[r][l];
                let mut cval = if HALF {
                    let bits = (cw >> (16 * h)) as u16;
                    f64::from(if BFH {
                        bf16_to_f32(bits)
                    } else {
                        f16_to_f32(bits)
                    })
                } else {
                    f64::from(f32::from_bits(cw))
                };
                if abs_c {
                    cval = cval.abs();
                }
                if neg_c {
                    cval = -cval;
                }
                let res = (cval + s) as f32;
                if HALF {
                    let d = if BFH {
                        f32_to_bf16(res, Rounding::NearestEven)
                    } else {
                        f32_to_f16(res, Rounding::NearestEven)
                    };
                    w |= u32::from(d) << (16 * h);
                } else {
                    w = res.to_bits();
                }
            }
            o[l] = w;
        }
    }
    write(c, op, &out[..ncv]);
    Ok(())
}

/// The integer forms with elements of type `T` (IU8, IU4) and K elements
/// per dot product.
fn int<const T: u8, const K: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    check(c, op, false)?;
    let b = bits(T);
    let nregs = (K / 2 * b).div_ceil(32);
    let av = regs(c, op.src[0], nregs);
    let bv = regs(c, op.src[1], nregs);
    let cv = regs(c, op.src[2], 8);
    let (sa, sb) = (op.mods.neg & 1 != 0, op.mods.neg & 2 != 0);
    let ext = |x: u32, signed: bool| -> i64 {
        if signed && x >> (b - 1) & 1 != 0 {
            i64::from(x) - (1i64 << b)
        } else {
            i64::from(x)
        }
    };
    let mut out = [[0u32; 64]; 8];
    for (v, o) in out.iter_mut().enumerate() {
        for l in 0..32 {
            let (row, col) = (8 * (l / 16) + v, l % 16);
            let mut s = i64::from(cv[v][l] as i32);
            for k in 0..K {
                s += ext(raw::<T>(&av, row, k, K), sa) * ext(raw::<T>(&bv, col, k, K), sb);
            }
            o[l] = if op.mods.clamp {
                s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
            } else {
                s as u32
            };
        }
    }
    write(c, op, &out);
    Ok(())
}

/// Writes D (`out.len()` registers from `vdst`) in the active lanes.
fn write(c: &mut Ctx, op: &Op, out: &[Lanes]) {
    let exec = c.wave.exec();
    for (i, d) in out.iter().enumerate() {
        c.wave.write_v(op.vdst + i as u16, d, exec);
    }
}
