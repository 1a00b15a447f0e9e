//! LDS instructions (DS encoding): loads, stores, atomics, permutes and
//! swizzles on the workgroup's local data share.
//!
//! Addresses are byte offsets into the workgroup's LDS: the `addr` VGPR
//! plus the 16-bit offset (or, for the `*2*` forms, plus `offset0` /
//! `offset1` times the element size, times 64 for `st64`). M0 does not
//! bound LDS accesses on GFX9 CDNA; the bound is the workgroup's
//! allocation ([`Env::lds_size`](super::op::Env)). An access that does not
//! lie entirely inside it is dropped: a load returns 0, a store or atomic
//! writes nothing (and a returning atomic returns 0), following the ISA
//! manual's out-of-range rule for LDS. Accesses need no alignment.
//!
//! Lowered form: `vdst` the destination register (VGPR or AGPR), `src[0]`
//! the address VGPR, `src[1]`, `src[2]` the data registers, `imm` the
//! 16-bit offset field (offset0 | offset1 << 8).

mod cross;
#[cfg(test)]
mod tests;

use super::lower::unsupported;
use super::op::{Ctx, ExecFn, Fault, Op};
use super::vmem::{AtomicOp, apply32, apply64, ld, st};
use super::wave::{AGPR0, Src};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;

/// The byte range `addr .. addr + len` of the LDS if it lies inside the
/// workgroup's allocation.
#[inline]
fn range(c: &Ctx, addr: u64, len: usize) -> Option<std::ops::Range<usize>> {
    let bound = (c.env.lds_size as usize).min(c.lds.len()) as u64;
    let end = addr.checked_add(len as u64)?;
    (end <= bound).then_some(addr as usize..end as usize)
}

/// Reads LDS bytes at `addr`; zeros when out of range.
#[inline(always)]
pub(crate) fn read_bytes(c: &Ctx, addr: u64, out: &mut [u8]) {
    match range(c, addr, out.len()).and_then(|r| c.lds.get(r)) {
        Some(s) => out.copy_from_slice(s),
        None => out.fill(0),
    }
}

/// Writes LDS bytes at `addr`; dropped when out of range.
#[inline(always)]
pub(crate) fn write_bytes(c: &mut Ctx, addr: u64, data: &[u8]) {
    if let Some(r) = range(c, addr, data.len())
        && let Some(s) = c.lds.get_mut(r)
    {
        s.copy_from_slice(data);
    }
}

fn read_u32(c: &Ctx, addr: u64) -> u32 {
    let mut b = [0; 4];
    read_bytes(c, addr, &mut b);
    u32::from_le_bytes(b)
}

/// Instantiates `$f::<K, N>` for the kinds a DS load or store names.
macro_rules! pick_kn {
    ($f:ident, $k:expr, $n:expr) => {
        match ($k, $n) {
            (0, _) => $f::<0, 1> as ExecFn,
            (1, _) => $f::<1, 1> as ExecFn,
            (2, _) => $f::<2, 1> as ExecFn,
            (3, _) => $f::<3, 1> as ExecFn,
            (5, _) => $f::<5, 1> as ExecFn,
            (6, _) => $f::<6, 1> as ExecFn,
            (7, _) => $f::<7, 1> as ExecFn,
            (8, _) => $f::<8, 1> as ExecFn,
            (9, _) => $f::<9, 1> as ExecFn,
            (10, _) => $f::<10, 1> as ExecFn,
            (_, 1) => $f::<4, 1> as ExecFn,
            (_, 2) => $f::<4, 2> as ExecFn,
            (_, 3) => $f::<4, 3> as ExecFn,
            _ => $f::<4, 4> as ExecFn,
        }
    };
}

fn ds_atomic_op(t: &str) -> Option<AtomicOp> {
    use AtomicOp as A;
    Some(match t {
        "add_u32" => A::Add,
        "sub_u32" => A::Sub,
        "rsub_u32" => A::Rsub,
        "inc_u32" => A::Inc,
        "dec_u32" => A::Dec,
        "min_i32" => A::Smin,
        "max_i32" => A::Smax,
        "min_u32" => A::Umin,
        "max_u32" => A::Umax,
        "and_b32" => A::And,
        "or_b32" => A::Or,
        "xor_b32" => A::Xor,
        "mskor_b32" => A::Mskor,
        "cmpst_b32" => A::CmpSt,
        "cmpst_f32" => A::CmpStF,
        "min_f32" => A::FMin,
        "max_f32" => A::FMax,
        "add_f32" => A::FAdd,
        "pk_add_f16" => A::PkAddF16,
        "pk_add_bf16" => A::PkAddBf16,
        "wrxchg_b32" => A::Swap,
        "wrap_b32" => A::Wrap,
        "add_u64" => A::Add64,
        "sub_u64" => A::Sub64,
        "rsub_u64" => A::Rsub64,
        "inc_u64" => A::Inc64,
        "dec_u64" => A::Dec64,
        "min_i64" => A::Smin64,
        "max_i64" => A::Smax64,
        "min_u64" => A::Umin64,
        "max_u64" => A::Umax64,
        "and_b64" => A::And64,
        "or_b64" => A::Or64,
        "xor_b64" => A::Xor64,
        "mskor_b64" => A::Mskor64,
        "cmpst_b64" => A::CmpSt64,
        "cmpst_f64" => A::CmpStF64,
        "min_f64" => A::FMin64,
        "max_f64" => A::FMax64,
        "add_f64" => A::FAdd64,
        "wrxchg_b64" => A::Swap64,
        _ => return None,
    })
}

fn pick_atomic(a: AtomicOp, rtn: bool) -> ExecFn {
    use AtomicOp as A;
    macro_rules! ops {
        ($($v:ident),*) => {
            match (a, rtn) {
                $(
                    (A::$v, false) => atomic::<{ A::$v as u8 }, false> as ExecFn,
                    (A::$v, true) => atomic::<{ A::$v as u8 }, true> as ExecFn,
                )*
                _ => unsupported,
            }
        };
    }
    ops!(
        Add, Sub, Rsub, Smin, Umin, Smax, Umax, And, Or, Xor, Inc, Dec, Swap, CmpSt, CmpStF, Mskor,
        Wrap, FAdd, FMin, FMax, PkAddF16, PkAddBf16, Add64, Sub64, Rsub64, Smin64, Umin64, Smax64,
        Umax64, And64, Or64, Xor64, Inc64, Dec64, Swap64, CmpSt64, CmpStF64, Mskor64, FAdd64,
        FMin64, FMax64
    )
}

/// The semantic function of a DS mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    let t = name.strip_prefix("ds_")?;
    if let Some(f) = cross::lookup(t) {
        return Some(f);
    }
    Some(match t {
        "nop" => nop,
        "read2_b32" => read2::<1, false>,
        "read2_b64" => read2::<2, false>,
        "read2st64_b32" => read2::<1, true>,
        "read2st64_b64" => read2::<2, true>,
        "write2_b32" => write2::<1, false>,
        "write2_b64" => write2::<2, false>,
        "write2st64_b32" => write2::<1, true>,
        "write2st64_b64" => write2::<2, true>,
        "wrxchg2_rtn_b32" => wrxchg2::<1, false>,
        "wrxchg2_rtn_b64" => wrxchg2::<2, false>,
        "wrxchg2st64_rtn_b32" => wrxchg2::<1, true>,
        "wrxchg2st64_rtn_b64" => wrxchg2::<2, true>,
        _ => {
            if let Some(r) = t.strip_prefix("read_") {
                let (k, n) = read_kind(r)?;
                return Some(pick_kn!(read, k, n));
            }
            if let Some(w) = t.strip_prefix("write_") {
                let (k, n) = write_kind(w)?;
                return Some(pick_kn!(write, k, n));
            }
            if let Some((a, b)) = t.split_once("_rtn_") {
                let op = ds_atomic_op(&format!("{a}_{b}"))?;
                return Some(pick_atomic(op, true));
            }
            return ds_atomic_op(t).map(|op| pick_atomic(op, false));
        }
    })
}

fn read_kind(t: &str) -> Option<(u8, usize)> {
    Some(match t {
        "u8" => (ld::U8, 1),
        "i8" => (ld::I8, 1),
        "u16" => (ld::U16, 1),
        "i16" => (ld::I16, 1),
        "b32" => (ld::B32, 1),
        "b64" => (ld::B32, 2),
        "b96" => (ld::B32, 3),
        "b128" => (ld::B32, 4),
        "u8_d16" => (ld::U8_D16, 1),
        "i8_d16" => (ld::I8_D16, 1),
        "u16_d16" => (ld::B16_D16, 1),
        "u8_d16_hi" => (ld::U8_D16_HI, 1),
        "i8_d16_hi" => (ld::I8_D16_HI, 1),
        "u16_d16_hi" => (ld::B16_D16_HI, 1),
        _ => return None,
    })
}

/// Store kinds use the load-kind numbering of [`pick_kn`]: 0 b8, 2 b16,
/// 4 b32 (x N), 8 b8_d16_hi, 10 b16_d16_hi.
fn write_kind(t: &str) -> Option<(u8, usize)> {
    Some(match t {
        "b8" => (0, 1),
        "b16" => (2, 1),
        "b32" => (4, 1),
        "b64" => (4, 2),
        "b96" => (4, 3),
        "b128" => (4, 4),
        "b8_d16_hi" => (8, 1),
        "b16_d16_hi" => (10, 1),
        _ => return None,
    })
}

/// Lowers a DS instruction.
pub fn lower(inst: Inst) -> Op {
    let mut op = Op::new(inst, lookup(inst.mnemonic()).unwrap_or(unsupported));
    if let Body::Ds(d) = &inst.body() {
        if d.gds {
            op.exec = unsupported;
        }
        let acc = if d.acc { AGPR0 } else { 0 };
        op.vdst = acc + u16::from(d.vdst);
        op.src = [
            Src::V(u16::from(d.addr)),
            Src::V(acc + u16::from(d.data0)),
            Src::V(acc + u16::from(d.data1)),
        ];
        op.imm = i64::from(d.offset);
    }
    op
}

fn nop(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Ok(())
}

/// The per-lane base addresses: the address VGPR plus `off`, in 32-bit
/// arithmetic (compilers fold negative VGPR values with positive offsets:
/// `v1 = -4 * t` with `offset:1020` addresses `1020 - 4t`).
#[inline]
fn addrs(c: &Ctx, op: &Op, off: u64) -> [u64; 64] {
    let Src::V(a) = op.src[0] else {
        return [off & 0xffff_ffff; 64];
    };
    let v = c.wave.vreg(a);
    std::array::from_fn(|l| u64::from(v[l].wrapping_add(off as u32)))
}

/// The LDS offset each lane of a DS instruction accesses first (for
/// plugins; the `*2*` forms' first element).
pub(crate) fn lane_addresses(c: &Ctx, op: &Op) -> [u64; 64] {
    let name = op.name();
    if name.contains("read2") || name.contains("write2") || name.contains("wrxchg2") {
        let w = u64::from(op.class.bytes) / 2;
        let unit = w * if name.contains("st64") { 64 } else { 1 };
        addrs(c, op, (op.imm as u64 & 0xff) * unit)
    } else {
        addrs(c, op, op.imm as u64)
    }
}

/// `base + off` in the 32-bit arithmetic of LDS addresses, as for
/// [`addrs`]: the `*2*` forms add their scaled offsets to a base that may be
/// negative (`v = -4 * t` with `offset0:19` addresses `76 - 4t`).
#[inline(always)]
fn at(base: u64, off: u64) -> u64 {
    u64::from((base as u32).wrapping_add(off as u32))
}

fn data_reg(op: &Op, i: usize) -> u16 {
    match op.src.get(1 + i) {
        Some(Src::V(r)) => *r,
        _ => 0,
    }
}

/// `ds_read_*`: `N` elements of load kind `K` into `vdst..`.
fn read<const K: u8, const N: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let a = addrs(c, op, op.imm as u64);
    let size = ld::size(K);
    let mut out = [[0u32; 64]; N];
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let mut buf = [0u8; 16];
        read_bytes(c, a[l], &mut buf[..size * N]);
        for (k, o) in out.iter_mut().enumerate() {
            let mut w = [0u8; 4];
            w[..size].copy_from_slice(&buf[k * size..k * size + size]);
            let raw = u32::from_le_bytes(w);
            o[l] = if K == ld::B32 {
                raw
            } else {
                ld::merge(
                    K,
                    raw,
                    c.env
                        .d16_keep(c.wave.vreg(op.vdst.wrapping_add(k as u16))[l]),
                )
            };
        }
    }
    for (k, o) in out.iter().enumerate() {
        c.wave.write_v(op.vdst.wrapping_add(k as u16), o, exec);
    }
    Ok(())
}

/// The store kind of the load-kind number `k` used by [`pick_kn`].
const fn store_of(k: u8) -> u8 {
    match k {
        0 => st::B8,
        2 => st::B16,
        8 => st::B8_HI,
        10 => st::B16_HI,
        _ => st::B32,
    }
}

/// `ds_write_*`: `N` elements from `data0..`.
fn write<const K: u8, const N: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let a = addrs(c, op, op.imm as u64);
    let s = store_of(K);
    let size = st::size(s);
    let d = data_reg(op, 0);
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let mut buf = [0u8; 16];
        for k in 0..N {
            let v = st::value(s, c.wave.vreg(d.wrapping_add(k as u16))[l]);
            buf[k * size..k * size + size].copy_from_slice(&v.to_le_bytes()[..size]);
        }
        write_bytes(c, a[l], &buf[..size * N]);
    }
    Ok(())
}

/// The two addresses' offsets of a `*2*` instruction with `W`-dword
/// elements.
fn offsets2<const W: usize, const ST64: bool>(op: &Op) -> [u64; 2] {
    let unit = 4 * W as u64 * if ST64 { 64 } else { 1 };
    [
        (op.imm as u64 & 0xff) * unit,
        (op.imm as u64 >> 8 & 0xff) * unit,
    ]
}

/// `ds_read2*`: two `W`-dword elements into `vdst..vdst+2W`.
fn read2<const W: usize, const ST64: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let a = addrs(c, op, 0);
    let offs = offsets2::<W, ST64>(op);
    let mut out = [[0u32; 64]; 4];
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        for (i, off) in offs.iter().enumerate() {
            for k in 0..W {
                out[i * W + k][l] = read_u32(c, at(a[l], off + 4 * k as u64));
            }
        }
    }
    for (k, o) in out.iter().take(2 * W).enumerate() {
        c.wave.write_v(op.vdst.wrapping_add(k as u16), o, exec);
    }
    Ok(())
}

/// `ds_write2*`: `data0` (W dwords) to the first address, `data1` to the
/// second.
fn write2<const W: usize, const ST64: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let a = addrs(c, op, 0);
    let offs = offsets2::<W, ST64>(op);
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        for (i, off) in offs.iter().enumerate() {
            let d = data_reg(op, i);
            let mut buf = [0u8; 8];
            for k in 0..W {
                let v = c.wave.vreg(d.wrapping_add(k as u16))[l];
                buf[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
            }
            write_bytes(c, at(a[l], *off), &buf[..4 * W]);
        }
    }
    Ok(())
}

/// `ds_wrxchg2*_rtn`: exchanges `data0` with the first element and `data1`
/// with the second, returning both old values in `vdst..vdst+2W`.
fn wrxchg2<const W: usize, const ST64: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let a = addrs(c, op, 0);
    let offs = offsets2::<W, ST64>(op);
    let mut out = [[0u32; 64]; 4];
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        for (i, off) in offs.iter().enumerate() {
            let addr = at(a[l], *off);
            let d = data_reg(op, i);
            let mut old = [0u8; 8];
            read_bytes(c, addr, &mut old[..4 * W]);
            let mut new = [0u8; 8];
            for k in 0..W {
                let v = c.wave.vreg(d.wrapping_add(k as u16))[l];
                new[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
                out[i * W + k][l] = u32::from_le_bytes([
                    old[4 * k],
                    old[4 * k + 1],
                    old[4 * k + 2],
                    old[4 * k + 3],
                ]);
            }
            write_bytes(c, addr, &new[..4 * W]);
        }
    }
    for (k, o) in out.iter().take(2 * W).enumerate() {
        c.wave.write_v(op.vdst.wrapping_add(k as u16), o, exec);
    }
    Ok(())
}

/// DS atomics: per active lane in lane order, applies `A` at the address
/// with `data0` (and `data1`: the new value of compare-and-store, the OR
/// value of mask-or); with `RTN` the pre-op value goes to `vdst`.
fn atomic<const A: u8, const RTN: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let a = AtomicOp::from_u8(A);
    let exec = c.wave.exec();
    let addr = addrs(c, op, op.imm as u64);
    let (d0r, d1r) = (data_reg(op, 0), data_reg(op, 1));
    let w = if a.is64() { 2 } else { 1 };
    let mut ret = [[0u32; 64]; 2];
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let rd = |r: u16, k: u16| c.wave.vreg(r.wrapping_add(k))[l];
        let Some(r) = range(c, addr[l], 4 * w) else {
            continue;
        };
        if a.is64() {
            let d0 = u64::from(rd(d0r, 0)) | (u64::from(rd(d0r, 1)) << 32);
            let d1 = u64::from(rd(d1r, 0)) | (u64::from(rd(d1r, 1)) << 32);
            let mut b = [0u8; 8];
            read_bytes(c, addr[l], &mut b);
            let old = u64::from_le_bytes(b);
            if let (Some(new), Some(s)) = (apply64(a, old, d0, d1), c.lds.get_mut(r)) {
                s.copy_from_slice(&new.to_le_bytes());
            }
            ret[0][l] = old as u32;
            ret[1][l] = (old >> 32) as u32;
        } else {
            let (d0, d1) = (rd(d0r, 0), rd(d1r, 0));
            let old = read_u32(c, addr[l]);
            if let (Some(new), Some(s)) = (apply32(a, old, d0, d1), c.lds.get_mut(r)) {
                s.copy_from_slice(&new.to_le_bytes());
            }
            ret[0][l] = old;
        }
    }
    if RTN {
        for k in 0..w {
            c.wave
                .write_v(op.vdst.wrapping_add(k as u16), &ret[k], exec);
        }
    }
    Ok(())
}
