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

    /// [`gather`] with this decoder, resolved once per operand.
    fn gather(
        &self,
        dst: &mut [f32],
        regs: &[Lanes],
        op: Operand,
        transposed: bool,
        src_lane: impl Fn(usize) -> usize,
    ) {
        match self {
            Dec::F32 => gather(dst, regs, op, transposed, src_lane, |v| {
                f32::from_bits(v as u32)
            }),
            Dec::Xf32 => gather(dst, regs, op, transposed, src_lane, |v| xf32(v as u32)),
            Dec::Bf16 => gather(dst, regs, op, transposed, src_lane, |v| {
                f32::from_bits((v as u32) << 16)
            }),
            Dec::Table(t) => gather(dst, regs, op, transposed, src_lane, |v| {
                t.get(v as usize).copied().unwrap_or(0.0)
            }),
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
    /// 8-bit operands of the gfx950 f8f6f4 forms: a lane's 32 elements are
    /// two runs of 16 k, one per 128-bit pass, with the lane groups'
    /// runs interleaved (group g holds k 16g.. and 16(groups + g)..), as
    /// the CDNA4 ISA's register layout for these instructions has it.
    interleave16: bool,
}

/// Decodes every element of an operand into `dst`: A at
/// `(block*rows + r)*k + kk`, B (`transposed`) at `(block*k + kk)*rows + r`.
/// `src_lane` maps the lane that holds an element to the lane actually read
/// (BLGP). Walks the lanes: lane `r + rows*(b + blocks*g)` holds row `r`
/// of block `b`, k from `g * per_lane` on ([`input_lane`]), its elements
/// packed from bit 0 of its first register up.
fn gather<T: Copy>(
    dst: &mut [T],
    regs: &[Lanes],
    op: Operand,
    transposed: bool,
    src_lane: impl Fn(usize) -> usize,
    dec: impl Fn(u64) -> T,
) {
    let pl = op.per_lane;
    let bits = op.bits;
    let mask = u64::MAX >> (64 - bits);
    let (k_step, r_step, b_step) = if transposed {
        (op.rows, 1, op.k * op.rows)
    } else {
        (1, op.k, op.rows * op.k)
    };
    let groups = 64 / (op.rows * op.blocks).max(1);
    let lanes = (0..groups)
        .flat_map(|g| (0..op.blocks).flat_map(move |b| (0..op.rows).map(move |r| (g, b, r))));
    for (g, b, r) in lanes {
        let lane = r + op.rows * (b + op.blocks * g);
        let k0 = g * pl;
        if k0 >= op.k {
            continue;
        }
        let src = src_lane(lane) & 63;
        let mut at = b * b_step + r * r_step + k0 * k_step;
        if bits == 64 {
            for e in 0..pl {
                let lo = regs.get(2 * e).map_or(0, |x| x[src]) as u64;
                let hi = regs.get(2 * e + 1).map_or(0, |x| x[src]) as u64;
                if let Some(d) = dst.get_mut(at) {
                    *d = dec(lo | hi << 32);
                }
                at += k_step;
            }
            continue;
        }
        if op.interleave16 {
            let base = b * b_step + r * r_step;
            for p in 0..pl {
                let kk = (p / 16) * 16 * groups + g * 16 + p % 16;
                let w = regs.get(p / 4).map_or(0, |x| x[src]) as u64;
                if let Some(d) = dst.get_mut(base + kk * k_step) {
                    *d = dec((w >> (8 * (p % 4))) & 0xff);
                }
            }
            continue;
        }
        // A bit buffer: registers go in 32 bits at a time, elements come out
        // `bits` at a time (FP6 elements straddle registers).
        let (mut buf, mut have, mut reg) = (0u64, 0usize, 0usize);
        for _ in 0..pl {
            if have < bits {
                let w = regs.get(reg).map_or(0, |x| x[src]) as u64;
                buf |= w << have;
                have += 32;
                reg += 1;
            }
            if let Some(d) = dst.get_mut(at) {
                *d = dec(buf & mask);
            }
            buf >>= bits;
            have -= bits;
            at += k_step;
        }
    }
}

fn out_dims(info: &MfmaInfo) -> (usize, usize, usize, usize) {
    (info.m, info.n, info.blocks, info.cd.bits())
}

/// Reads C in (block, i, j) order (a row's columns are consecutive lanes).
fn load_c<M: Mac>(info: &MfmaInfo, c: &[Lanes], dst: &mut [M::T]) {
    let (m, n, blocks, bits) = out_dims(info);
    for b in 0..blocks {
        for i in 0..m {
            let (reg, lane) = output_pos(m, n, bits, i, 0, b);
            let lo = c.get(reg).and_then(|x| x.get(lane..lane + n));
            let hi = c.get(reg + 1).and_then(|x| x.get(lane..lane + n));
            let Some(out) = dst.get_mut((b * m + i) * n..(b * m + i + 1) * n) else {
                continue;
            };
            match (lo, hi, bits) {
                (Some(lo), Some(hi), 64) => {
                    for ((o, &l), &h) in out.iter_mut().zip(lo).zip(hi) {
                        *o = M::from_c(l as u64 | (h as u64) << 32);
                    }
                }
                (Some(lo), _, _) => {
                    for (o, &l) in out.iter_mut().zip(lo) {
                        *o = M::from_c(l as u64);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Writes D from (block, i, j) order.
fn store_d<M: Mac>(info: &MfmaInfo, src: &[M::T], d: &mut [Lanes]) {
    let (m, n, blocks, bits) = out_dims(info);
    for b in 0..blocks {
        for i in 0..m {
            let (reg, lane) = output_pos(m, n, bits, i, 0, b);
            let Some(row) = src.get((b * m + i) * n..(b * m + i + 1) * n) else {
                continue;
            };
            if let Some(lo) = d.get_mut(reg).and_then(|x| x.get_mut(lane..lane + n)) {
                for (o, &v) in lo.iter_mut().zip(row) {
                    *o = M::to_d(v) as u32;
                }
            }
            let hi = d.get_mut(reg + 1).and_then(|x| x.get_mut(lane..lane + n));
            if let (64, Some(hi)) = (bits, hi) {
                for (o, &v) in hi.iter_mut().zip(row) {
                    *o = (M::to_d(v) >> 32) as u32;
                }
            }
        }
    }
}

/// One result row: `out[j] = mac(out[j], x, brow[j])` for each `(x, brow)`
/// in order; the accumulators live in registers for the row widths of the
/// instructions (4, 16, 32).
#[inline(always)]
fn row_mac<'a, M: Mac>(out: &mut [M::T], pairs: impl Iterator<Item = (M::T, &'a [M::T])>)
where
    M::T: 'a,
{
    match out.len() {
        4 => row_mac_n::<M, 4>(out, pairs),
        16 => row_mac_n::<M, 16>(out, pairs),
        32 => row_mac_n::<M, 32>(out, pairs),
        _ => {
            for (x, brow) in pairs {
                for (s, &y) in out.iter_mut().zip(brow) {
                    *s = M::mac(*s, x, y);
                }
            }
        }
    }
}

#[inline(always)]
fn row_mac_n<'a, M: Mac, const N: usize>(
    out: &mut [M::T],
    pairs: impl Iterator<Item = (M::T, &'a [M::T])>,
) where
    M::T: 'a,
{
    let Ok(out) = <&mut [M::T; N]>::try_from(out) else {
        return;
    };
    let mut row = *out;
    for (x, brow) in pairs {
        let Ok(brow) = <&[M::T; N]>::try_from(brow) else {
            continue;
        };
        for (s, &y) in row.iter_mut().zip(brow) {
            *s = M::mac(*s, x, y);
        }
    }
    *out = row;
}

/// acc[b][i][..] += A[ab][i][..] * B[b][..][..] for every block and row,
/// with `ab` the block that CBSZ/ABID broadcast to `b`.
#[inline(always)]
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
            row_mac::<M>(out, arow.iter().copied().zip(bblk.chunks_exact(n)));
        }
    }
}

fn operands(info: &MfmaInfo, a: Elem, b: Elem) -> (Operand, Operand) {
    let f8f6f4 = info.name.ends_with("f8f6f4");
    (
        Operand {
            rows: info.m,
            blocks: info.blocks,
            k: info.k,
            per_lane: info.a_per_lane(),
            bits: a.bits(),
            interleave16: f8f6f4 && a.bits() == 8,
        },
        Operand {
            rows: info.n,
            blocks: info.blocks,
            k: info.k,
            per_lane: info.b_per_lane(),
            bits: b.bits(),
            interleave16: f8f6f4 && b.bits() == 8,
        },
    )
}

fn blgp_of(info: &MfmaInfo, mods: &MfmaMods) -> u8 {
    if info.lane_pattern { mods.blgp } else { 0 }
}

/// Dense MFMA; `c: None` reads C from `d` (in place: C is read whole
/// before D is written).
pub(super) fn dense(
    info: &MfmaInfo,
    mods: &MfmaMods,
    a: &[Lanes],
    b: &[Lanes],
    c: Option<&[Lanes]>,
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
            load_c::<Int>(info, c.unwrap_or(d), &mut acc);
            simd_dense::<Int>(info, mods, &am, &bt, &mut acc);
            store_d::<Int>(info, &acc, d);
        }
        Elem::F64 => {
            let mut am = [0f64; MAX_IN / 4];
            let mut bt = [0f64; MAX_IN / 4];
            let mut acc = [0f64; MAX_OUT / 2];
            let neg = |bit: u8| {
                if info.neg && mods.neg & bit != 0 {
                    -1.0
                } else {
                    1.0
                }
            };
            let (na, nb, nc) = (neg(1), neg(2), neg(4));
            gather(&mut am, a, opa, false, |l| l, |v| na * f64::from_bits(v));
            gather(&mut bt, b, opb, true, |l| l, |v| nb * f64::from_bits(v));
            load_c::<Dbl>(info, c.unwrap_or(d), &mut acc);
            for x in acc.iter_mut() {
                *x *= nc;
            }
            simd_dense::<Dbl>(info, mods, &am, &bt, &mut acc);
            store_d::<Dbl>(info, &acc, d);
        }
        _ => {
            let mut am = [0f32; MAX_IN];
            let mut bt = [0f32; MAX_IN];
            let mut acc = [0f32; MAX_OUT];
            let (da, db) = (Dec::new(ea), Dec::new(eb));
            da.gather(&mut am, a, opa, false, |l| l);
            db.gather(&mut bt, b, opb, true, lanes);
            load_c::<Exact>(info, c.unwrap_or(d), &mut acc);
            if info.scaled && (mods.scale_a.is_some() || mods.scale_b.is_some()) {
                scaled_loop(info, mods, &am, &bt, &mut acc);
            } else if ea == Elem::F32 {
                simd_dense::<Fused>(info, mods, &am, &bt, &mut acc);
            } else {
                simd_dense::<Exact>(info, mods, &am, &bt, &mut acc);
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
        interleave16: false,
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
            simd_sparse::<Int>(info, &am, &kidx, &bt, &mut acc);
            store_d::<Int>(info, &acc, cd);
        }
        _ => {
            let mut am = [0f32; MAX_IN / 2];
            let mut bt = [0f32; MAX_IN];
            let mut acc = [0f32; MAX_OUT];
            let (da, db) = (Dec::new(ea), Dec::new(eb));
            da.gather(&mut am, a, opa, false, |l| l);
            db.gather(&mut bt, b, opb, true, |l| l);
            load_c::<Exact>(info, cd_in, &mut acc);
            simd_sparse::<Exact>(info, &am, &kidx, &bt, &mut acc);
            store_d::<Exact>(info, &acc, cd);
        }
    }
    Ok(())
}

#[inline(always)]
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
        let pairs = arow.iter().zip(krow).filter_map(|(&x, &kk)| {
            let kk = usize::from(kk);
            Some((x, bt.get(kk * n..(kk + 1) * n)?))
        });
        row_mac::<M>(out, pairs);
    }
}

/// Whether this CPU has AVX2 and FMA (x86-64), for the wide loops. Both
/// loops give the same bits either way: additions and products round the
/// same, and `mul_add` is a correctly rounded fused multiply-add with or
/// without the FMA instruction.
#[cfg(target_arch = "x86_64")]
fn wide() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

fn simd_dense<M: Mac>(
    info: &MfmaInfo,
    mods: &MfmaMods,
    am: &[M::T],
    bt: &[M::T],
    acc: &mut [M::T],
) {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above), the
        // only requirement of a `target_feature` function.
        unsafe { dense_loop_wide::<M>(info, mods, am, bt, acc) };
        return;
    }
    dense_loop::<M>(info, mods, am, bt, acc);
}

fn simd_sparse<M: Mac>(info: &MfmaInfo, am: &[M::T], kidx: &[u16], bt: &[M::T], acc: &mut [M::T]) {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above).
        unsafe { sparse_loop_wide::<M>(info, am, kidx, bt, acc) };
        return;
    }
    sparse_loop::<M>(info, am, kidx, bt, acc);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dense_loop_wide<M: Mac>(
    info: &MfmaInfo,
    mods: &MfmaMods,
    am: &[M::T],
    bt: &[M::T],
    acc: &mut [M::T],
) {
    dense_loop::<M>(info, mods, am, bt, acc);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn sparse_loop_wide<M: Mac>(
    info: &MfmaInfo,
    am: &[M::T],
    kidx: &[u16],
    bt: &[M::T],
    acc: &mut [M::T],
) {
    sparse_loop::<M>(info, am, kidx, bt, acc);
}

#[cfg(all(test, target_arch = "x86_64"))]
mod wide_tests {
    use super::*;
    use crate::mfma::{MfmaMods, lookup};

    /// The AVX2/FMA loops give the bits of the portable ones.
    #[test]
    fn wide_loops_match_portable_ones() {
        if !wide() {
            return;
        }
        let mut seed = 1u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        let info = lookup("v_mfma_f32_32x32x8_f16").unwrap_or(&crate::mfma::ALL[0]);
        let mods = MfmaMods::default();
        let fl: Vec<f32> = (0..MAX_IN)
            .map(|_| (next() as f32 - 2e9) * 1.37e-7)
            .collect();
        let fr: Vec<f32> = (0..MAX_IN)
            .map(|_| (next() as f32 - 2e9) * 3.1e-9)
            .collect();
        let mut a1 = vec![0.5f32; MAX_OUT];
        let mut a2 = a1.clone();
        dense_loop::<Fused>(info, &mods, &fl, &fr, &mut a1);
        // SAFETY: wide() checked the CPU features.
        unsafe { dense_loop_wide::<Fused>(info, &mods, &fl, &fr, &mut a2) };
        assert_eq!(a1, a2);
        dense_loop::<Exact>(info, &mods, &fl, &fr, &mut a1);
        // SAFETY: as above.
        unsafe { dense_loop_wide::<Exact>(info, &mods, &fl, &fr, &mut a2) };
        assert_eq!(a1, a2);
        let il: Vec<i32> = (0..MAX_IN).map(|_| next() as i32 % 128).collect();
        let mut i1 = vec![7i32; MAX_OUT];
        let mut i2 = i1.clone();
        dense_loop::<Int>(info, &mods, &il, &il, &mut i1);
        // SAFETY: as above.
        unsafe { dense_loop_wide::<Int>(info, &mods, &il, &il, &mut i2) };
        assert_eq!(i1, i2);
        let dl: Vec<f64> = fl.iter().map(|&x| f64::from(x) * 1.000_000_1).collect();
        let mut d1 = vec![0.25f64; MAX_OUT];
        let mut d2 = d1.clone();
        dense_loop::<Dbl>(info, &mods, &dl, &dl, &mut d1);
        // SAFETY: as above.
        unsafe { dense_loop_wide::<Dbl>(info, &mods, &dl, &dl, &mut d2) };
        assert_eq!(d1, d2);
        let kidx: Vec<u16> = (0..MAX_IN / 2).map(|n| (n % 8) as u16).collect();
        sparse_loop::<Exact>(info, &fl, &kidx, &fr, &mut a1);
        // SAFETY: as above.
        unsafe { sparse_loop_wide::<Exact>(info, &fl, &kidx, &fr, &mut a2) };
        assert_eq!(a1, a2);
    }
}
