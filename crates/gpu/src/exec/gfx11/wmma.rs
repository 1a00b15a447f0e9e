//! GFX11 WMMA (`v_wmma_*_16x16x16_*`) in 32-lane waves: D = A x B + C for
//! 16x16 matrices (RDNA3 ISA manual, "Wave Matrix Multiply Accumulate").
//!
//! Lane layouts (wave32): A's row `i` is in lane `i` (lanes 16..31 hold a
//! copy, which is not read), its K elements in order through the source
//! VGPRs (two 16-bit elements per VGPR, low half first; four bytes or
//! eight nibbles per VGPR for the integer forms); B's column `j` is in lane
//! `j` the same way. C and D: element `v` of lane `l` is row `2v + l / 16`,
//! column `l % 16` (one dword per element, or the half of a dword op_sel[2]
//! picks for the 16-bit accumulators).
//!
//! Numerics: 16-bit products are exact in f64, and each dot product of 16
//! is added to C exactly in f64 before one rounding to the result type
//! (round to nearest even); the integer forms accumulate in 32 bits,
//! wrapping, or saturating with `clamp`. `neg_lo` / `neg_hi` negate the
//! low / high 16-bit elements of A and B (float forms) or make A and B
//! signed (bits 0 and 1 of `neg_lo`, integer forms).
//!
//! Not modelled (the instruction faults naming itself): 64-lane waves,
//! whose layout this module does not describe, and modifiers on C.

use super::super::op::{Ctx, ExecFn, Fault, Op};
use super::super::wave::{Lanes, Src, Width};
use crate::float::{Rounding, bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};

/// The semantic function of a WMMA mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_wmma_f32_16x16x16_f16" => float::<F16, false>,
        "v_wmma_f32_16x16x16_bf16" => float::<BF16, false>,
        "v_wmma_f16_16x16x16_f16" => float::<F16, true>,
        "v_wmma_bf16_16x16x16_bf16" => float::<BF16, true>,
        "v_wmma_i32_16x16x16_iu8" => int::<8>,
        "v_wmma_i32_16x16x16_iu4" => int::<4>,
        _ => return None,
    })
}

const F16: u8 = 0;
const BF16: u8 = 1;

/// `count` consecutive registers of a source (a constant fills each).
fn regs(c: &Ctx, src: Src, count: u16) -> Vec<Lanes> {
    (0..count)
        .map(|i| match src {
            Src::V(r) => *c.wave.vreg(r + i),
            s => [c.wave.read_s32(s, Width::B32, &c.env.apertures); 64],
        })
        .collect()
}

fn check(c: &Ctx, op: &Op) -> Result<(), Fault> {
    if !c.wave.wave32 {
        return Err(Fault::Unsupported(op.name()));
    }
    if op.mods.neg & 4 != 0 || op.mods.neg_hi & 4 != 0 {
        return Err(Fault::Invalid(format!(
            "{}: modifiers on C are not modelled",
            op.name()
        )));
    }
    Ok(())
}

fn half_to_f64<const T: u8>(h: u16) -> f64 {
    f64::from(if T == F16 {
        f16_to_f32(h)
    } else {
        bf16_to_f32(h)
    })
}

/// Element `k` of a 16-bit operand row (lane `l`), with its neg modifier.
fn elem16<const T: u8>(v: &[Lanes], l: usize, k: usize, neg: u8, neg_hi: u8, i: usize) -> f64 {
    let w = v[k / 2][l];
    let hi = k % 2 == 1;
    let x = half_to_f64::<T>(if hi { (w >> 16) as u16 } else { w as u16 });
    let n = if hi { neg_hi } else { neg };
    if n >> i & 1 != 0 { -x } else { x }
}

/// The float forms; `HALF`: a 16-bit accumulator (C and D in the half of
/// each dword op_sel[2] selects).
fn float<const T: u8, const HALF: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    check(c, op)?;
    let a = regs(c, op.src[0], 8);
    let b = regs(c, op.src[1], 8);
    let cv = regs(c, op.src[2], 8);
    let hi_half = op.mods.opsel & 4 != 0;
    let (neg, neg_hi) = (op.mods.neg, op.mods.neg_hi);
    let mut out = [[0u32; 64]; 8];
    for v in 0..8 {
        for l in 0..32 {
            let (row, col) = (2 * v + l / 16, l % 16);
            let mut s = 0f64;
            for k in 0..16 {
                s += elem16::<T>(&a, row, k, neg, neg_hi, 0)
                    * elem16::<T>(&b, col, k, neg, neg_hi, 1);
            }
            let w = cv[v][l];
            if HALF {
                let h = if hi_half { (w >> 16) as u16 } else { w as u16 };
                let r = (half_to_f64::<T>(h) + s) as f32;
                let d = if T == F16 {
                    f32_to_f16(r, Rounding::NearestEven)
                } else {
                    f32_to_bf16(r, Rounding::NearestEven)
                };
                out[v][l] = if hi_half {
                    (w & 0xffff) | (u32::from(d) << 16)
                } else {
                    (w & 0xffff_0000) | u32::from(d)
                };
            } else {
                out[v][l] = ((f64::from(f32::from_bits(w)) + s) as f32).to_bits();
            }
        }
    }
    write(c, op, &out);
    Ok(())
}

/// The integer forms with `BITS`-bit elements (8 or 4).
fn int<const BITS: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    check(c, op)?;
    let per = 32 / BITS;
    let nregs = (16 / per) as u16;
    let a = regs(c, op.src[0], nregs);
    let b = regs(c, op.src[1], nregs);
    let cv = regs(c, op.src[2], 8);
    let (sa, sb) = (op.mods.neg & 1 != 0, op.mods.neg & 2 != 0);
    let elem = |v: &[Lanes], l: usize, k: usize, signed: bool| -> i64 {
        let w = v[k / per][l] >> (BITS * (k % per));
        let m = (1u32 << BITS) - 1;
        let x = w & m;
        if signed && x >> (BITS - 1) & 1 != 0 {
            i64::from(x) - (1i64 << BITS)
        } else {
            i64::from(x)
        }
    };
    let mut out = [[0u32; 64]; 8];
    for v in 0..8 {
        for l in 0..32 {
            let (row, col) = (2 * v + l / 16, l % 16);
            let mut s = i64::from(cv[v][l] as i32);
            for k in 0..16 {
                s += elem(&a, row, k, sa) * elem(&b, col, k, sb);
            }
            out[v][l] = if op.mods.clamp {
                s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
            } else {
                s as u32
            };
        }
    }
    write(c, op, &out);
    Ok(())
}

/// Writes D (8 registers from `vdst`) in the active lanes.
fn write(c: &mut Ctx, op: &Op, out: &[Lanes; 8]) {
    let exec = c.wave.exec();
    for (i, d) in out.iter().enumerate() {
        c.wave.write_v(op.vdst + i as u16, d, exec);
    }
}
