//! Scalar memory: `s_load_*`, `s_buffer_load_*`, `s_store_*`,
//! `s_buffer_store_*`, scalar atomics, cache control and `s_memtime` /
//! `s_memrealtime` (ISA manual, "Scalar Memory Operations" and "SMEM
//! Instructions").
//!
//! Lowered form: `sdst` the first data SGPR, `src[0]` the base register
//! pair (or buffer resource quad), `src[1]` an SGPR offset, `imm` the
//! immediate byte offset (signed), `vdst` 1 when GLC is set (atomics then
//! return the value memory held before the operation).
//!
//! Addresses: base (bits 47:0 of the pair) + SGPR offset (unsigned) +
//! immediate (signed), with the two low bits ignored. Buffer forms take the
//! base from the resource (`V#` dwords 0-1, bits 47:0) and check each dword
//! against `num_records` (dword 2, bytes): a dword that does not lie wholly
//! below it reads 0 and is not written. Scalar caches are not modelled, so
//! the cache-control instructions do nothing. The scalar scratch forms
//! (`s_scratch_load_*` / `s_scratch_store_*`, which no compiler emits) have
//! no semantics yet and fault as unsupported if reached.

use super::lower::{sdst_of, src_of, unsupported};
use super::op::{Ctx, ExecFn, Fault, Op};
use super::wave::{Src, Width};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;
use rocjitsu_isa::gfx9::smem::SmemOffset;
use rocjitsu_isa::gfx9::sop::Field;

/// The semantic function of a scalar memory mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    if let Some(f) = atomic_lookup(name) {
        return Some(f);
    }
    Some(match name {
        "s_load_dword" => s_load::<1>,
        "s_load_dwordx2" => s_load::<2>,
        // GFX12's s_load_b96.
        "s_load_dwordx3" => s_load::<3>,
        "s_load_dwordx4" => s_load::<4>,
        "s_load_dwordx8" => s_load::<8>,
        "s_load_dwordx16" => s_load::<16>,
        "s_buffer_load_dword" => s_buffer_load::<1>,
        "s_buffer_load_dwordx2" => s_buffer_load::<2>,
        "s_buffer_load_dwordx3" => s_buffer_load::<3>,
        "s_buffer_load_dwordx4" => s_buffer_load::<4>,
        "s_buffer_load_dwordx8" => s_buffer_load::<8>,
        "s_buffer_load_dwordx16" => s_buffer_load::<16>,
        "s_store_dword" => s_store::<1>,
        "s_store_dwordx2" => s_store::<2>,
        "s_store_dwordx4" => s_store::<4>,
        "s_buffer_store_dword" => s_buffer_store::<1>,
        "s_buffer_store_dwordx2" => s_buffer_store::<2>,
        "s_buffer_store_dwordx4" => s_buffer_store::<4>,
        "s_dcache_inv"
        | "s_dcache_wb"
        | "s_dcache_inv_vol"
        | "s_dcache_wb_vol"
        | "s_dcache_discard"
        | "s_dcache_discard_x2"
        | "s_atc_probe"
        | "s_atc_probe_buffer" => s_nop,
        "s_memtime" => s_memtime,
        "s_memrealtime" => s_memrealtime,
        _ => return None,
    })
}

/// Lowers an SMEM instruction.
pub fn lower(inst: Inst) -> Op {
    let mut op = Op::new(inst, lookup(inst.mnemonic()).unwrap_or(unsupported));
    if let Body::Smem(s) = &inst.body()
        && let Some(f) = s.fields()
    {
        if let Field::Op(d) = &f.sdata {
            op.sdst = sdst_of(d);
        }
        if let Some(b) = &f.sbase {
            op.src[0] = src_of(b);
        }
        match f.offset {
            SmemOffset::None => {}
            SmemOffset::Imm(i) => op.imm = i64::from(i),
            SmemOffset::Sgpr(o) => op.src[1] = src_of(&o),
            SmemOffset::SgprImm(o, i) => {
                op.src[1] = src_of(&o);
                op.imm = i64::from(i);
            }
        }
        op.vdst = u16::from(f.glc);
    }
    op
}

fn s_nop(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Ok(())
}

/// The SGPR offset plus the immediate offset.
fn offset(c: &Ctx, op: &Op) -> u64 {
    let soff = match op.src[1] {
        Src::None => 0,
        s => u64::from(c.wave.read_s32(s, Width::B32, &c.env.apertures)),
    };
    soff.wrapping_add(op.imm as u64)
}

/// The byte address of a scalar load/store/atomic: base + SGPR offset +
/// immediate, dword-aligned (the hardware ignores the two low bits).
pub(crate) fn address(c: &Ctx, op: &Op) -> u64 {
    let base = c.wave.read_s64(op.src[0], Width::B64, &c.env.apertures) & 0xffff_ffff_ffff;
    base.wrapping_add(offset(c, op)) & !3
}

/// A buffer access: the resource's base address, its size in bytes and the
/// dword-aligned byte offset into it.
fn buffer(c: &Ctx, op: &Op) -> (u64, u64, u64) {
    let (w0, w1, w2) = match op.src[0] {
        Src::S(i) => (
            c.wave.s32(i),
            c.wave.s32(i.wrapping_add(1)),
            c.wave.s32(i.wrapping_add(2)),
        ),
        _ => (0, 0, 0),
    };
    let base = u64::from(w0) | (u64::from(w1 & 0xffff) << 32);
    (base, u64::from(w2), offset(c, op) & 0xffff_ffff & !3)
}

fn dword(b: &[u8], i: usize) -> u32 {
    match b.get(i * 4..i * 4 + 4) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    }
}

/// `s_load_dword{,x2,x4,x8,x16}`: N dwords into `sdst..`.
fn s_load<const N: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let addr = address(c, op);
    let mut buf = [0u8; 64];
    let bytes = &mut buf[..N * 4];
    c.vm.load(c.tlb, addr, bytes)?;
    for i in 0..N {
        c.wave
            .set_s32(op.sdst.wrapping_add(i as u8), dword(bytes, i));
    }
    Ok(())
}

/// `s_buffer_load_dword{,x2,x4,x8,x16}`: N dwords of the buffer; dwords
/// past `num_records` read 0.
fn s_buffer_load<const N: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (base, size, off) = buffer(c, op);
    let mut out = [0u32; N];
    let in_range = (size.saturating_sub(off) / 4).min(N as u64) as usize;
    if in_range > 0 {
        let mut buf = [0u8; 64];
        let bytes = &mut buf[..in_range * 4];
        c.vm.load(c.tlb, base.wrapping_add(off), bytes)?;
        for (i, o) in out.iter_mut().enumerate().take(in_range) {
            *o = dword(bytes, i);
        }
    }
    for (i, v) in out.iter().enumerate() {
        c.wave.set_s32(op.sdst.wrapping_add(i as u8), *v);
    }
    Ok(())
}

/// The N data dwords starting at `sdst`.
fn data<const N: usize>(c: &Ctx, op: &Op) -> [u8; 64] {
    let mut buf = [0u8; 64];
    for i in 0..N {
        let v = c.wave.s32(op.sdst.wrapping_add(i as u8));
        buf[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    buf
}

/// `s_store_dword{,x2,x4}`: N dwords from `sdst..` to memory.
fn s_store<const N: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let addr = address(c, op);
    let buf = data::<N>(c, op);
    c.vm.store(c.tlb, addr, &buf[..N * 4])?;
    Ok(())
}

/// `s_buffer_store_dword{,x2,x4}`: dwords past `num_records` are dropped.
fn s_buffer_store<const N: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (base, size, off) = buffer(c, op);
    let in_range = (size.saturating_sub(off) / 4).min(N as u64) as usize;
    if in_range > 0 {
        let buf = data::<N>(c, op);
        c.vm.store(c.tlb, base.wrapping_add(off), &buf[..in_range * 4])?;
    }
    Ok(())
}

/// `s_memtime`: a 64-bit shader-clock count (nanoseconds since the
/// dispatch's epoch, a 1 GHz clock).
fn s_memtime(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = c.env.epoch.elapsed().as_nanos() as u64;
    c.wave.set_s64(op.sdst, t);
    Ok(())
}

/// `s_memrealtime`: the 64-bit real-time counter (100 MHz).
fn s_memrealtime(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = c.env.epoch.elapsed().as_nanos() as u64 / 10;
    c.wave.set_s64(op.sdst, t);
    Ok(())
}

// ---------------------------------------------------------------------------
// Atomics.

const SWAP: u8 = 0;
const CMPSWAP: u8 = 1;
const ADD: u8 = 2;
const SUB: u8 = 3;
const SMIN: u8 = 4;
const UMIN: u8 = 5;
const SMAX: u8 = 6;
const UMAX: u8 = 7;
const AND: u8 = 8;
const OR: u8 = 9;
const XOR: u8 = 10;
const INC: u8 = 11;
const DEC: u8 = 12;

fn atomic_lookup(name: &str) -> Option<ExecFn> {
    let (buf, rest) = if let Some(r) = name.strip_prefix("s_buffer_atomic_") {
        (true, r)
    } else {
        (false, name.strip_prefix("s_atomic_")?)
    };
    let (wide, op) = match rest.strip_suffix("_x2") {
        Some(o) => (true, o),
        None => (false, rest),
    };
    macro_rules! pick {
        ($k:expr) => {
            match (buf, wide) {
                (false, false) => atomic32::<$k, false> as ExecFn,
                (false, true) => atomic64::<$k, false>,
                (true, false) => atomic32::<$k, true>,
                (true, true) => atomic64::<$k, true>,
            }
        };
    }
    Some(match op {
        "swap" => pick!(SWAP),
        "cmpswap" => pick!(CMPSWAP),
        "add" => pick!(ADD),
        "sub" => pick!(SUB),
        "smin" => pick!(SMIN),
        "umin" => pick!(UMIN),
        "smax" => pick!(SMAX),
        "umax" => pick!(UMAX),
        "and" => pick!(AND),
        "or" => pick!(OR),
        "xor" => pick!(XOR),
        "inc" => pick!(INC),
        "dec" => pick!(DEC),
        _ => return None,
    })
}

/// The atomic's address, or `None` for a buffer access out of range (the
/// operation is dropped and returns 0).
fn atomic_address<const BUF: bool>(c: &Ctx, op: &Op, bytes: u64) -> Option<u64> {
    if BUF {
        let (base, size, off) = buffer(c, op);
        (off.checked_add(bytes)? <= size).then(|| base.wrapping_add(off))
    } else {
        Some(address(c, op))
    }
}

/// A 32-bit scalar atomic on the dword at the address: data in `sdst`
/// (`cmpswap`: the new value in `sdst`, the compare value in `sdst + 1`);
/// with GLC the old value is returned in `sdst`.
fn atomic32<const K: u8, const BUF: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let d = c.wave.s32(op.sdst);
    let cmp = c.wave.s32(op.sdst.wrapping_add(1));
    let old = match atomic_address::<BUF>(c, op, 4) {
        Some(a) => c.vm.atomic_u32(c.tlb, a, |m| match K {
            SWAP => Some(d),
            CMPSWAP => (m == cmp).then_some(d),
            ADD => Some(m.wrapping_add(d)),
            SUB => Some(m.wrapping_sub(d)),
            SMIN => Some((m as i32).min(d as i32) as u32),
            UMIN => Some(m.min(d)),
            SMAX => Some((m as i32).max(d as i32) as u32),
            UMAX => Some(m.max(d)),
            AND => Some(m & d),
            OR => Some(m | d),
            XOR => Some(m ^ d),
            INC => Some(if m >= d { 0 } else { m + 1 }),
            _ => Some(if m == 0 || m > d { d } else { m - 1 }),
        })?,
        None => 0,
    };
    if op.vdst == 1 {
        c.wave.set_s32(op.sdst, old);
    }
    Ok(())
}

/// A 64-bit scalar atomic: data in the pair at `sdst` (`cmpswap_x2`: the
/// new value in `sdst`, the compare value in `sdst + 2`); with GLC the old
/// value is returned in the pair at `sdst`.
fn atomic64<const K: u8, const BUF: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let d = c.wave.s64(op.sdst);
    let cmp = c.wave.s64(op.sdst.wrapping_add(2));
    let old = match atomic_address::<BUF>(c, op, 8) {
        Some(a) => c.vm.atomic_u64(c.tlb, a, |m| match K {
            SWAP => Some(d),
            CMPSWAP => (m == cmp).then_some(d),
            ADD => Some(m.wrapping_add(d)),
            SUB => Some(m.wrapping_sub(d)),
            SMIN => Some((m as i64).min(d as i64) as u64),
            UMIN => Some(m.min(d)),
            SMAX => Some((m as i64).max(d as i64) as u64),
            UMAX => Some(m.max(d)),
            AND => Some(m & d),
            OR => Some(m | d),
            XOR => Some(m ^ d),
            INC => Some(if m >= d { 0 } else { m + 1 }),
            _ => Some(if m == 0 || m > d { d } else { m - 1 }),
        })?,
        None => 0,
    };
    if op.vdst == 1 {
        c.wave.set_s64(op.sdst, old);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
