//! The arithmetic: decode each operand element once into a small matrix on
//! the stack, multiply-accumulate in a tight loop (vectorisable over the
//! result row, each result element summed in k order), scatter D.

use std::sync::OnceLock;

use super::layout::{blgp_source, broadcast_block, input_lane, output_pos, sparse_index_shift};
use super::{Elem, Lanes, MfmaError, MfmaInfo, MfmaMods};
use crate::float::{self, Format};

/// The largest operand: M*K*B (or K*N*B) elements (16x16x128, 32x32x64).
const MAX_IN: usize = 2048;
/// The largest result: 32 registers of 64 lanes.
const MAX_OUT: usize = 2048;
/// The widest result row.
const MAX_N: usize = 32;

/// `width` bits at bit `bit` of a lane's registers concatenated.
#[inline(always)]
fn raw(regs: &[Lanes], lane: usize, bit: usize, width: usize) -> u64 {
    let r = bit / 32;
    let lo = regs.get(r).map_or(0, |x| x[lane & 63]) as u64;
    let v = if bit % 32 + width > 32 {
        lo | (regs.get(r + 1).map_or(0, |x| x[lane & 63]) as u64) << 32
    } else {
        lo
    };
    (v >> (bit % 32)) & (u64::MAX >> (64 - width))
}

fn lut256(fmt: Format, cell: &'static OnceLock<[f32; 256]>) -> &'static [f32; 256] {
    cell.get_or_init(|| std::array::from_fn(|b| fmt.decode(b as u32)))
}

fn f16_lut() -> &'static [f32] {
    static LUT: OnceLock<Vec<f32>> = OnceLock::new();
    LUT.get_or_init(|| (0..=u16::MAX).map(float::f16_to_f32).collect())
}

/// An f32 truncated to XF32 (10 mantissa bits), NaNs kept NaN.
#[inline]
fn xf32(bits: u32) -> f32 {
    let x = f32::from_bits(bits);
    if x.is_nan() {
        f32::from_bits(bits | 0x0040_0000)
    } else {
        f32::from_bits(bits & 0xffff_e000)
    }
}

/// The f32 decoder of a float element type.
enum Dec {
    F32,
    Xf32,
    Bf16,
    Table(&'static [f32]),
}

impl Dec {
    fn new(e: Elem) -> Dec {
        static FP8F: OnceLock<[f32; 256]> = OnceLock::new();
        static BF8F: OnceLock<[f32; 256]> = OnceLock::new();
        static FP8: OnceLock<[f32; 256]> = OnceLock::new();
        static BF8: OnceLock<[f32; 256]> = OnceLock::new();
        static FP6: OnceLock<[f32; 256]> = OnceLock::new();
        static BF6: OnceLock<[f32; 256]> = OnceLock::new();
        static FP4: OnceLock<[f32; 256]> = OnceLock::new();
        match e {
            Elem::Xf32 => Dec::Xf32,
            Elem::Bf16 => Dec::Bf16,
            Elem::F16 => Dec::Table(f16_lut()),
            Elem::Fp8Fnuz => Dec::Table(lut256(float::E4M3FNUZ, &FP8F)),
            Elem::Bf8Fnuz => Dec::Table(lut256(float::E5M2FNUZ, &BF8F)),
            Elem::Fp8 => Dec::Table(lut256(float::E4M3FN, &FP8)),
            Elem::Bf8 => Dec::Table(lut256(float::E5M2, &BF8)),
            Elem::Fp6 => Dec::Table(lut256(float::E2M3, &FP6)),
            Elem::Bf6 => Dec::Table(lut256(float::E3M2, &BF6)),
            Elem::Fp4 => Dec::Table(lut256(float::E2M1, &FP4)),
            // F32, and the integer/F64 types, which never reach here.
            _ => Dec::F32,
        }
    }

    #[inline(always)]
    fn get(&self, v: u64) -> f32 {
        match self {
            Dec::F32 => f32::from_bits(v as u32),
            Dec::Xf32 => xf32(v as u32),
            Dec::Bf16 => f32::from_bits((v as u32) << 16),
            Dec::Table(t) => t.get(v as usize).copied().unwrap_or(0.0),
        }
    }
}

/// The numeric type of one instruction family and its multiply-accumulate.
trait Mac {
    type T: Copy + Default;
    fn mac(acc: Self::T, a: Self::T, b: Self::T) -> Self::T;
    fn from_c(bits: u64) -> Self::T;
    fn to_d(v: Self::T) -> u64;
}

/// Low-precision floats: the product is exact in f32, one rounding per add.
struct Exact;
impl Mac for Exact {
    type T = f32;
    #[inline(always)]
    fn mac(acc: f32, a: f32, b: f32) -> f32 {
        acc + a * b
    }
    fn from_c(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }
    fn to_d(v: f32) -> u64 {
        v.to_bits() as u64
    }
}

/// F32 inputs: fused multiply-add.
struct Fused;
impl Mac for Fused {
    type T = f32;
    #[inline(always)]
    fn mac(acc: f32, a: f32, b: f32) -> f32 {
        a.mul_add(b, acc)
    }
    fn from_c(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }
    fn to_d(v: f32) -> u64 {
        v.to_bits() as u64
    }
}

struct Int;
impl Mac for Int {
    type T = i32;
    #[inline(always)]
    fn mac(acc: i32, a: i32, b: i32) -> i32 {
        acc.wrapping_add(a.wrapping_mul(b))
    }
    fn from_c(bits: u64) -> i32 {
        bits as u32 as i32
    }
    fn to_d(v: i32) -> u64 {
        v as u32 as u64
    }
}

struct Dbl;
impl Mac for Dbl {
    type T = f64;
    #[inline(always)]
    fn mac(acc: f64, a: f64, b: f64) -> f64 {
        a.mul_add(b, acc)
    }
    fn from_c(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
    fn to_d(v: f64) -> u64 {
        v.to_bits()
    }
}

/// The shape of one operand for gathering.
#[derive(Clone, Copy)]
struct Operand {
    /// Rows (A) or columns (B) per block.
    rows: usize,
    blocks: usize,
    k: usize,
    per_lane: usize,
    bits: usize,
}

/// Decodes every element of an operand into `dst`: A at
/// `(block*rows + r)*k + kk`, B (`transposed`) at `(block*k + kk)*rows + r`.
/// `src_lane` maps the lane that holds an element to the lane actually read
/// (BLGP).
fn gather<T: Copy>(
    dst: &mut [T],
    regs: &[Lanes],
    op: Operand,
    transposed: bool,
    src_lane: impl Fn(usize) -> usize,
    dec: impl Fn(u64) -> T,
) {
    for b in 0..op.blocks {
        for r in 0..op.rows {
            for kk in 0..op.k {
                let (lane, slot) = input_lane(op.rows, op.blocks, op.per_lane, r, b, kk);
                let v = dec(raw(regs, src_lane(lane), slot * op.bits, op.bits));
                let at = if transposed {
                    (b * op.k + kk) * op.rows + r
                } else {
                    (b * op.rows + r) * op.k + kk
                };
                if let Some(d) = dst.get_mut(at) {
                    *d = v;
                }
            }
        }
    }
}

fn out_dims(info: &MfmaInfo) -> (usize, usize, usize, usize) {
    (info.m, info.n, info.blocks, info.cd.bits())
}

/// Reads C in (block, i, j) order.
fn load_c<M: Mac>(info: &MfmaInfo, c: &[Lanes], dst: &mut [M::T]) {
    let (m, n, blocks, bits) = out_dims(info);
    for b in 0..blocks {
        for i in 0..m {
            for j in 0..n {
                let (reg, lane) = output_pos(m, n, bits, i, j, b);
                let v = raw(c, lane, reg * 32, bits);
                if let Some(d) = dst.get_mut((b * m + i) * n + j) {
                    *d = M::from_c(v);
                }
            }
        }
    }
}

/// Writes D from (block, i, j) order.
fn store_d<M: Mac>(info: &MfmaInfo, src: &[M::T], d: &mut [Lanes]) {
    let (m, n, blocks, bits) = out_dims(info);
    for b in 0..blocks {
        for i in 0..m {
            for j in 0..n {
                let (reg, lane) = output_pos(m, n, bits, i, j, b);
                let Some(&v) = src.get((b * m + i) * n + j) else {
                    continue;
                };
                let v = M::to_d(v);
                if let Some(r) = d.get_mut(reg) {
                    r[lane & 63] = v as u32;
                }
                if let (64, Some(r)) = (bits, d.get_mut(reg + 1)) {
                    r[lane & 63] = (v >> 32) as u32;
                }
            }
        }
    }
}

/// acc[b][i][..] += A[ab][i][..] * B[b][..][..] for every block and row,
/// with `ab` the block that CBSZ/ABID broadcast to `b`.
fn dense_loop<M: Mac>(
    info: &MfmaInfo,
    mods: &MfmaMods,
    am: &[M::T],
    bt: &[M::T],
    acc: &mut [M::T],
) {
    let (m, n, k) = (info.m, info.n, info.k);
    for b in 0..info.blocks {
        let ab = if info.broadcast {
            broadcast_block(info.blocks, mods.cbsz, mods.abid, b)
        } else {
            b
        };
        let Some(bblk) = bt.get(b * k * n..(b + 1) * k * n) else {
            continue;
        };
        for i in 0..m {
            let Some(arow) = am.get((ab * m + i) * k..(ab * m + i + 1) * k) else {
                continue;
            };
            let Some(out) = acc.get_mut((b * m + i) * n..(b * m + i + 1) * n) else {
                continue;
            };
            let mut row = [M::T::default(); MAX_N];
            let row = &mut row[..n];
            row.copy_from_slice(out);
            for (&x, brow) in arow.iter().zip(bblk.chunks_exact(n)) {
                for (s, &y) in row.iter_mut().zip(brow) {
                    *s = M::mac(*s, x, y);
                }
            }
            out.copy_from_slice(row);
        }
    }
}

fn operands(info: &MfmaInfo, a: Elem, b: Elem) -> (Operand, Operand) {
    (
        Operand {
            rows: info.m,
            blocks: info.blocks,
            k: info.k,
            per_lane: info.a_per_lane(),
            bits: a.bits(),
        },
        Operand {
            rows: info.n,
            blocks: info.blocks,
            k: info.k,
            per_lane: info.b_per_lane(),
            bits: b.bits(),
        },
    )
}

fn blgp_of(info: &MfmaInfo, mods: &MfmaMods) -> u8 {
    if info.lane_pattern { mods.blgp } else { 0 }
}

pub(super) fn dense(
    info: &MfmaInfo,
    mods: &MfmaMods,
    a: &[Lanes],
    b: &[Lanes],
    c: &[Lanes],
    d: &mut [Lanes],
) -> Result<(), MfmaError> {
    let (ea, eb) = info.elems(mods)?;
    let (opa, opb) = operands(info, ea, eb);
    let blgp = blgp_of(info, mods);
    let lanes = move |l| blgp_source(blgp, l);
    match info.cd {
        Elem::I32 => {
            let mut am = [0i32; MAX_IN];
            let mut bt = [0i32; MAX_IN];
            let mut acc = [0i32; MAX_OUT];
            let dec = |v: u64| v as u8 as i8 as i32;
            gather(&mut am, a, opa, false, |l| l, dec);
            gather(&mut bt, b, opb, true, lanes, dec);
            load_c::<Int>(info, c, &mut acc);
            dense_loop::<Int>(info, mods, &am, &bt, &mut acc);
            store_d::<Int>(info, &acc, d);
        }
        Elem::F64 => {
            let mut am = [0f64; MAX_IN / 4];
            let mut bt = [0f64; MAX_IN / 4];
            let mut acc = [0f64; MAX_OUT / 2];
            let neg = |bit: u8| if mods.neg & bit != 0 { -1.0 } else { 1.0 };
            let (na, nb, nc) = (neg(1), neg(2), neg(4));
            gather(&mut am, a, opa, false, |l| l, |v| na * f64::from_bits(v));
            gather(&mut bt, b, opb, true, |l| l, |v| nb * f64::from_bits(v));
            load_c::<Dbl>(info, c, &mut acc);
            for x in acc.iter_mut() {
                *x *= nc;
            }
            dense_loop::<Dbl>(info, mods, &am, &bt, &mut acc);
            store_d::<Dbl>(info, &acc, d);
        }
        _ => {
            let mut am = [0f32; MAX_IN];
            let mut bt = [0f32; MAX_IN];
            let mut acc = [0f32; MAX_OUT];
            let (da, db) = (Dec::new(ea), Dec::new(eb));
            gather(&mut am, a, opa, false, |l| l, |v| da.get(v));
            gather(&mut bt, b, opb, true, lanes, |v| db.get(v));
            load_c::<Exact>(info, c, &mut acc);
            if info.scaled && (mods.scale_a.is_some() || mods.scale_b.is_some()) {
                scaled_loop(info, mods, &am, &bt, &mut acc);
            } else if ea == Elem::F32 {
                dense_loop::<Fused>(info, mods, &am, &bt, &mut acc);
            } else {
                dense_loop::<Exact>(info, mods, &am, &bt, &mut acc);
            }
            store_d::<Exact>(info, &acc, d);
        }
    }
    Ok(())
}

/// 2^(e-127) of each lane's selected E8M0 byte, as an exponent (None: NaN).
fn scale_exponents(scale: &Option<(Lanes, u8)>) -> [Option<i32>; 64] {
    match scale {
        None => [Some(0); 64],
        Some((lanes, sel)) => std::array::from_fn(|l| {
            let e = (lanes[l] >> (8 * u32::from(sel & 3))) & 0xff;
            (e != 0xff).then_some(e as i32 - 127)
        }),
    }
}

/// The scaled f8f6f4 forms (one block): each exact product times its A and
/// B lanes' scales, rounded to f32, added in k order.
fn scaled_loop(info: &MfmaInfo, mods: &MfmaMods, am: &[f32], bt: &[f32], acc: &mut [f32]) {
    let (m, n, k) = (info.m, info.n, info.k);
    let (pa, pb) = (info.a_per_lane(), info.b_per_lane());
    let sa = scale_exponents(&mods.scale_a);
    let sb = scale_exponents(&mods.scale_b);
    for i in 0..m {
        for j in 0..n {
            let Some(out) = acc.get_mut(i * n + j) else {
                continue;
            };
            let mut s = *out;
            for kk in 0..k {
                let (la, _) = input_lane(m, 1, pa, i, 0, kk);
                let (lb, _) = input_lane(n, 1, pb, j, 0, kk);
                let factor = match (sa[la & 63], sb[lb & 63]) {
                    (Some(x), Some(y)) => f64::from_bits(((x + y + 1023) as u64) << 52),
                    _ => f64::NAN,
                };
                let x = am.get(i * k + kk).copied().unwrap_or(0.0);
                let y = bt.get(kk * n + j).copied().unwrap_or(0.0);
                s += (f64::from(x * y) * factor) as f32;
            }
            *out = s;
        }
    }
}

/// SMFMAC: the stored A values and the dense k each multiplies.
pub(super) fn sparse(
    info: &MfmaInfo,
    mods: &MfmaMods,
    a: &[Lanes],
    b: &[Lanes],
    idx: &Lanes,
    cd: &mut [Lanes],
) -> Result<(), MfmaError> {
    let (ea, eb) = (info.a, info.b);
    let (m, k) = (info.m, info.k);
    let kc = k / 2;
    let pa = info.a_per_lane();
    // The dense k of each stored element, in (row, stored index) order.
    let mut kidx = [0u16; MAX_IN / 2];
    for i in 0..m {
        for c in 0..kc {
            let (lane, slot) = input_lane(m, 1, pa, i, 0, c);
            let shift = sparse_index_shift(pa, mods.cbsz, mods.abid, slot);
            let sel = (idx[lane & 63] >> shift) & 3;
            if let Some(x) = kidx.get_mut(i * kc + c) {
                *x = (4 * (c / 2) + sel as usize) as u16;
            }
        }
    }
    let opa = Operand {
        rows: m,
        blocks: 1,
        k: kc,
        per_lane: pa,
        bits: ea.bits(),
    };
    let (_, opb) = operands(info, ea, eb);
    let cd_in: &[Lanes] = cd;
    match info.cd {
        Elem::I32 => {
            let mut am = [0i32; MAX_IN / 2];
            let mut bt = [0i32; MAX_IN];
            let mut acc = [0i32; MAX_OUT];
            let dec = |v: u64| v as u8 as i8 as i32;
            gather(&mut am, a, opa, false, |l| l, dec);
            gather(&mut bt, b, opb, true, |l| l, dec);
            load_c::<Int>(info, cd_in, &mut acc);
            sparse_loop::<Int>(info, &am, &kidx, &bt, &mut acc);
            store_d::<Int>(info, &acc, cd);
        }
        _ => {
            let mut am = [0f32; MAX_IN / 2];
            let mut bt = [0f32; MAX_IN];
            let mut acc = [0f32; MAX_OUT];
            let (da, db) = (Dec::new(ea), Dec::new(eb));
            gather(&mut am, a, opa, false, |l| l, |v| da.get(v));
            gather(&mut bt, b, opb, true, |l| l, |v| db.get(v));
            load_c::<Exact>(info, cd_in, &mut acc);
            sparse_loop::<Exact>(info, &am, &kidx, &bt, &mut acc);
            store_d::<Exact>(info, &acc, cd);
        }
    }
    Ok(())
}

fn sparse_loop<M: Mac>(info: &MfmaInfo, am: &[M::T], kidx: &[u16], bt: &[M::T], acc: &mut [M::T]) {
    let (m, n) = (info.m, info.n);
    let kc = info.k / 2;
    for i in 0..m {
        let (Some(arow), Some(krow)) =
            (am.get(i * kc..(i + 1) * kc), kidx.get(i * kc..(i + 1) * kc))
        else {
            continue;
        };
        let Some(out) = acc.get_mut(i * n..(i + 1) * n) else {
            continue;
        };
        let mut row = [M::T::default(); MAX_N];
        let row = &mut row[..n];
        row.copy_from_slice(out);
        for (&x, &kk) in arow.iter().zip(krow) {
            let kk = usize::from(kk);
            let Some(brow) = bt.get(kk * n..(kk + 1) * n) else {
                continue;
            };
            for (s, &y) in row.iter_mut().zip(brow) {
                *s = M::mac(*s, x, y);
            }
        }
        out.copy_from_slice(row);
    }
}
