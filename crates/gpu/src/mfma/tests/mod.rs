//! Tests: matrices are built first, placed into lanes by a scatter routine
//! written here from the register-to-element formulas of AMD's matrix
//! instruction calculator (lane → row/block/k, the inverse of what the
//! implementation computes), multiplied on the CPU in f64, and compared
//! with what `execute` leaves in D (read back through explicit per-shape
//! result layouts).

// Matrix arithmetic reads most plainly with index loops.
#![allow(clippy::needless_range_loop)]

mod dense;
mod f8f6f4;
mod sparse;
mod speed;
mod table;

use super::{Elem, Lanes, MfmaInfo};
use crate::float::{self, Format};

/// splitmix64.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Uniform in [-1, 1).
    pub(super) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// The format a low-precision float element decodes with.
pub(super) fn format_of(e: Elem) -> Option<Format> {
    Some(match e {
        Elem::F16 => float::F16,
        Elem::Bf16 => float::BF16,
        Elem::Fp8Fnuz => float::E4M3FNUZ,
        Elem::Bf8Fnuz => float::E5M2FNUZ,
        Elem::Fp8 => float::E4M3FN,
        Elem::Bf8 => float::E5M2,
        Elem::Fp6 => float::E2M3,
        Elem::Bf6 => float::E3M2,
        Elem::Fp4 => float::E2M1,
        _ => return None,
    })
}

/// The value an element's bits stand for, as the instruction reads it.
pub(super) fn value(e: Elem, bits: u64) -> f64 {
    match e {
        Elem::F64 => f64::from_bits(bits),
        Elem::F32 => f64::from(f32::from_bits(bits as u32)),
        // XF32 keeps the sign, the exponent and the top 10 mantissa bits.
        Elem::Xf32 => f64::from(f32::from_bits(bits as u32 >> 13 << 13)),
        Elem::I8 => f64::from(bits as u8 as i8),
        Elem::I32 => f64::from(bits as u32 as i32),
        _ => match format_of(e) {
            Some(f) => f64::from(f.decode(bits as u32)),
            None => f64::NAN,
        },
    }
}

/// Random bits of a finite element: floats within a range that keeps sums
/// of products far from f32 overflow, denormals included.
pub(super) fn random_bits(e: Elem, rng: &mut Rng) -> u64 {
    match e {
        Elem::F64 => (rng.unit() * 4.0).to_bits(),
        Elem::F32 | Elem::Xf32 => ((rng.unit() * 4.0) as f32).to_bits() as u64,
        Elem::I8 => rng.below(256),
        Elem::I32 => rng.next() & 0xffff_ffff,
        Elem::Bf16 => {
            // sign, exponent 2^-40..2^40, random mantissa.
            let exp = 127 - 40 + rng.below(81);
            (rng.below(2) << 15) | (exp << 7) | rng.below(128)
        }
        _ => {
            let Some(f) = format_of(e) else { return 0 };
            loop {
                let b = rng.below(1 << f.bits());
                if f.decode(b as u32).is_finite() {
                    return b;
                }
            }
        }
    }
}

/// Bits of a small integer value in -4..=4 (exact in every type), or
/// halves for the types that have them.
pub(super) fn small_bits(e: Elem, rng: &mut Rng) -> u64 {
    let v = rng.below(9) as i64 - 4;
    encode(e, v as f64)
}

/// Encodes an exactly representable value.
pub(super) fn encode(e: Elem, v: f64) -> u64 {
    match e {
        Elem::F64 => v.to_bits(),
        Elem::F32 | Elem::Xf32 => (v as f32).to_bits() as u64,
        Elem::I8 => (v as i8) as u8 as u64,
        Elem::I32 => (v as i32) as u32 as u64,
        _ => match format_of(e) {
            Some(f) => {
                let b = f.encode_rne(v as f32);
                assert_eq!(f64::from(f.decode(b)), v, "{e:?} cannot hold {v}");
                b as u64
            }
            None => 0,
        },
    }
}

/// Writes `width` bits at bit `bit` of a lane's registers concatenated.
pub(super) fn put_bits(regs: &mut [Lanes], lane: usize, bit: usize, width: usize, v: u64) {
    let mut v = v & (u64::MAX >> (64 - width));
    let mut bit = bit;
    let mut left = width;
    while left > 0 {
        let r = bit / 32;
        let off = bit % 32;
        let take = (32 - off).min(left);
        let mask = ((1u64 << take) - 1) as u32;
        let reg = &mut regs[r];
        reg[lane] = (reg[lane] & !(mask << off)) | (((v as u32) & mask) << off);
        v >>= take;
        bit += take;
        left -= take;
    }
}

pub(super) fn get_bits(regs: &[Lanes], lane: usize, bit: usize, width: usize) -> u64 {
    let mut out = 0u64;
    for n in 0..width {
        let b = bit + n;
        out |= u64::from((regs[b / 32][lane] >> (b % 32)) & 1) << n;
    }
    out
}

/// An input operand's register layout (calculator, "register to matrix
/// element mapping"): in lane `l`, row (A) or column (B) `l % rows`, block
/// `(l / rows) % blocks`, and the lane's `per_lane` slots hold k =
/// `(l / (rows*blocks)) * per_lane + slot`; for the 8-bit operands of the
/// gfx950 f8f6f4 forms (`interleave16`, CDNA4 ISA register layout, one
/// 128-bit pass per half of the lane's registers), slot s of lane group g
/// holds k = `(s / 16) * 16 * groups + 16 * g + s % 16`.
pub(super) struct InLayout {
    pub rows: usize,
    pub blocks: usize,
    pub k: usize,
    pub bits: usize,
    pub interleave16: bool,
}

/// Whether an operand of `info` with `bits`-bit elements uses the
/// interleaved f8f6f4 layout.
pub(super) fn interleaved(info: &MfmaInfo, bits: usize) -> bool {
    info.name.ends_with("f8f6f4") && bits == 8
}

impl InLayout {
    pub(super) fn per_lane(&self) -> usize {
        self.k * self.rows * self.blocks / 64
    }

    /// (block, row, k) of each (lane, slot).
    pub(super) fn each(&self, mut f: impl FnMut(usize, usize, usize, usize, usize)) {
        let pl = self.per_lane();
        for lane in 0..64 {
            for slot in 0..pl {
                let row = lane % self.rows;
                let block = (lane / self.rows) % self.blocks;
                let g = lane / (self.rows * self.blocks);
                let k = if self.interleave16 {
                    let groups = 64 / (self.rows * self.blocks);
                    (slot / 16) * 16 * groups + 16 * g + slot % 16
                } else {
                    g * pl + slot
                };
                f(lane, slot, block, row, k);
            }
        }
    }

    /// Registers holding `m[block][row][k]`.
    pub(super) fn scatter(&self, m: &[Vec<Vec<u64>>], dwords: usize) -> Vec<Lanes> {
        let mut regs = vec![[0u32; 64]; dwords];
        self.each(|lane, slot, block, row, k| {
            put_bits(
                &mut regs,
                lane,
                slot * self.bits,
                self.bits,
                m[block][row][k],
            );
        });
        regs
    }

    /// `m[block][row][k]` read back from registers.
    pub(super) fn gather(&self, regs: &[Lanes]) -> Vec<Vec<Vec<u64>>> {
        let mut m = vec![vec![vec![0u64; self.k]; self.rows]; self.blocks];
        self.each(|lane, slot, block, row, k| {
            m[block][row][k] = get_bits(regs, lane, slot * self.bits, self.bits);
        });
        m
    }
}

/// Register (first of a pair for 64-bit) and lane of result element
/// (i, j) of block b, per shape (calculator, "C or D[i][j].block GPR /
/// Lane").
pub(super) fn out_pos(info: &MfmaInfo, i: usize, j: usize, b: usize) -> (usize, usize) {
    match (info.m, info.cd.bits()) {
        (4, 64) => (0, 16 * i + 4 * b + j),
        (16, 64) => (2 * (i / 4), 16 * (i % 4) + j),
        (4, _) => (i, 4 * b + j),
        (16, _) => (4 * b + i % 4, 16 * (i / 4) + j),
        (32, _) => (16 * b + 4 * (i / 8) + i % 4, 32 * ((i / 4) % 2) + j),
        _ => panic!("no result layout for {}", info.name),
    }
}

/// C/D registers holding `m[block][i][j]`.
pub(super) fn scatter_out(info: &MfmaInfo, m: &[Vec<Vec<u64>>]) -> Vec<Lanes> {
    let mut regs = vec![[0u32; 64]; info.cd_dwords];
    let w = info.cd.bits();
    for b in 0..info.blocks {
        for i in 0..info.m {
            for j in 0..info.n {
                let (r, l) = out_pos(info, i, j, b);
                put_bits(&mut regs[r..], l, 0, w, m[b][i][j]);
            }
        }
    }
    regs
}

pub(super) fn gather_out(info: &MfmaInfo, regs: &[Lanes]) -> Vec<Vec<Vec<u64>>> {
    let w = info.cd.bits();
    (0..info.blocks)
        .map(|b| {
            (0..info.m)
                .map(|i| {
                    (0..info.n)
                        .map(|j| {
                            let (r, l) = out_pos(info, i, j, b);
                            get_bits(&regs[r..], l, 0, w)
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

pub(super) fn random_matrix(
    blocks: usize,
    rows: usize,
    cols: usize,
    mut f: impl FnMut() -> u64,
) -> Vec<Vec<Vec<u64>>> {
    (0..blocks)
        .map(|_| {
            (0..rows)
                .map(|_| (0..cols).map(|_| f()).collect())
                .collect()
        })
        .collect()
}

/// Checks a float result against the f64 reference `want` whose terms have
/// magnitude sum `mag`: sequential rounding in a format with unit roundoff
/// `u` over `terms` additions errs by at most about terms*u*mag (plus
/// denormal-range slack).
pub(super) fn close(got: f64, want: f64, mag: f64, terms: usize, u: f64, tiny: f64) -> bool {
    if got == want {
        return true;
    }
    let bound = 1.01 * (terms as f64 + 1.0) * u * mag + terms as f64 * tiny;
    (got - want).abs() <= bound
}
