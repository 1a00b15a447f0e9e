//! DS instructions that move data between lanes or use wave-level
//! addressing: `ds_swizzle_b32`, `ds_permute_b32`, `ds_bpermute_b32`,
//! `ds_append` / `ds_consume`, `ds_read_addtid_b32` /
//! `ds_write_addtid_b32`, the gfx950 transposing loads
//! `ds_read_b64_tr_b4/b8/b16` and `ds_read_b96_tr_b6`. The GWS instructions (global wave sync across
//! workgroups) are not emulated: they fault as unsupported.

use super::{addrs, data_reg, read_u32, write_bytes};
use crate::exec::op::{Ctx, ExecFn, Fault, Op};
use crate::exec::wave::Src;

/// The semantic function of a DS mnemonic (without `ds_`) of this module.
pub(super) fn lookup(t: &str) -> Option<ExecFn> {
    Some(match t {
        "swizzle_b32" => swizzle,
        "permute_b32" => permute,
        "bpermute_b32" => bpermute,
        "append" => append::<false>,
        "consume" => append::<true>,
        "read_addtid_b32" => read_addtid,
        "write_addtid_b32" => write_addtid,
        "read_b64_tr_b4" => read_tr::<4, 2>,
        "read_b64_tr_b8" => read_tr::<8, 2>,
        "read_b64_tr_b16" => read_tr::<16, 2>,
        "read_b96_tr_b6" => read_tr::<6, 3>,
        _ => return None,
    })
}

/// The source lane of lane `l` for a `ds_swizzle_b32` offset (ISA manual,
/// "DS_SWIZZLE_B32"): with offset\[15\] set, quad-permute mode (offset\[7:0\]
/// holds a 2-bit source per lane of each group of four); otherwise bit-mask
/// mode within each 32-lane half, `((l & and) | or) ^ xor` with the masks
/// in offset\[4:0\], \[9:5\], \[14:10\]. The GFX9 CDNA manuals test only
/// offset\[15\], so the rotate and FFT encodings LLVM also assembles (which
/// later architectures define) select quad-permute mode here.
pub(crate) fn swizzle_src(off: u16, l: usize) -> usize {
    if off & 0x8000 != 0 {
        let sel = usize::from(off >> (2 * (l & 3))) & 3;
        (l & !3) | sel
    } else {
        let and = usize::from(off & 0x1f);
        let or = usize::from((off >> 5) & 0x1f);
        let xor = usize::from((off >> 10) & 0x1f);
        (l & 0x20) | ((((l & 0x1f) & and) | or) ^ xor)
    }
}

/// `ds_swizzle_b32`: each active lane reads the `addr` VGPR of its source
/// lane; an inactive source lane gives 0 (the data passes through the LDS
/// crossbar, which only active lanes write).
fn swizzle(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let off = op.imm as u16;
    // The data comes from the instruction's address VGPR.
    let Src::V(a) = op.src[0] else { return Ok(()) };
    let src = *c.wave.vreg(a);
    let mut out = [0u32; 64];
    for (l, o) in out.iter_mut().enumerate() {
        let s = swizzle_src(off, l) & 63;
        if exec >> s & 1 != 0 {
            *o = src[s];
        }
    }
    c.wave.write_v(op.vdst, &out, exec);
    Ok(())
}

/// The lane a permute address names: `(addr + offset) / 4` modulo 64
/// (the callers take it modulo 32 in a 32-lane wave).
#[inline]
fn lane_of(a: u64) -> usize {
    ((a >> 2) & 63) as usize
}

/// `ds_bpermute_b32` (backward permute): active lane `l` reads `data0` of
/// lane `(addr[l] + offset) / 4 % 64`, 0 when that lane is inactive.
fn bpermute(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let a = addrs(c, op, op.imm as u64);
    let src = c.wave.vreg(data_reg(op, 0));
    let last = if c.wave.wave32 { 31 } else { 63 };
    let mut out = [0u32; 64];
    for l in 0..64 {
        let s = lane_of(a[l]) & last;
        if exec >> s & 1 != 0 {
            out[l] = src[s];
        }
    }
    c.wave.write_v(op.vdst, &out, exec);
    Ok(())
}

/// `ds_permute_b32` (forward permute): each active lane `l` writes its
/// `data0` to lane `(addr[l] + offset) / 4 % 64` (higher lanes win a
/// conflict); active lanes that nobody writes get 0.
fn permute(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let a = addrs(c, op, op.imm as u64);
    let src = c.wave.vreg(data_reg(op, 0));
    let last = if c.wave.wave32 { 31 } else { 63 };
    let mut out = [0u32; 64];
    for l in 0..64 {
        if exec >> l & 1 != 0 {
            out[lane_of(a[l]) & last] = src[l];
        }
    }
    c.wave.write_v(op.vdst, &out, exec);
    Ok(())
}

/// `ds_append` / `ds_consume`: adds (subtracts) the number of active lanes
/// to the dword at LDS `M0 + offset` and returns the pre-op value to every
/// active lane.
fn append<const CONSUME: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let addr = u64::from(c.wave.m0()) + (op.imm as u64 & 0xffff);
    let old = read_u32(c, addr);
    let n = exec.count_ones();
    let new = if CONSUME {
        old.wrapping_sub(n)
    } else {
        old.wrapping_add(n)
    };
    write_bytes(c, addr, &new.to_le_bytes());
    c.wave.write_v(op.vdst, &[old; 64], exec);
    Ok(())
}

/// The address of lane `l` for the `addtid` forms: `M0 + offset + l * 4`.
fn addtid_addr(c: &Ctx, op: &Op, l: usize) -> u64 {
    u64::from(c.wave.m0()) + (op.imm as u64 & 0xffff) + 4 * l as u64
}

/// `ds_read_addtid_b32`: lane `l` reads the dword at `M0 + offset + 4l`.
fn read_addtid(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let mut out = [0u32; 64];
    for (l, o) in out.iter_mut().enumerate() {
        if exec >> l & 1 != 0 {
            *o = read_u32(c, addtid_addr(c, op, l));
        }
    }
    c.wave.write_v(op.vdst, &out, exec);
    Ok(())
}

/// `ds_write_addtid_b32`: lane `l` writes `data0` at `M0 + offset + 4l`.
fn write_addtid(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let d = data_reg(op, 0);
    for l in 0..64 {
        if exec >> l & 1 != 0 {
            let v = c.wave.vreg(d)[l];
            write_bytes(c, addtid_addr(c, op, l), &v.to_le_bytes());
        }
    }
    Ok(())
}

/// The source lane and element of destination lane `l`'s element `n` for
/// a transposing load of `k` elements per lane (ISA manual, CDNA4,
/// "DS_READ_B64_TR_B16" and siblings). Within each group of 16 lanes the
/// `g = 16 / k` interleaved sets of `k` source lanes (`a, a + g, a + 2g,
/// ...`) form a `k x k` matrix of elements that is transposed onto
/// destination lanes `a*k .. a*k + k`: destination lane `l` = (`a`, `e`)
/// takes element `e` of source lane `a + g*n` as its element `n`. For
/// 16-bit elements this is the hardware-verified layout (lane `l`,
/// halfword `n` from lane `(l & ~15) | ((l >> 2) & 3) + 4n`, halfword
/// `l & 3`); the 8-, 6- and 4-bit forms follow the same rule with 2 and 1
/// interleaved sets.
pub(crate) fn tr_source(k: usize, l: usize, n: usize) -> (usize, usize) {
    let g = (16 / k).max(1);
    let a = (l / k) % g;
    let e = l % k;
    ((l & !15) + a + g * n, e)
}

/// Transposing loads: every lane reads `DW` dwords (64 or 96 bits) at its
/// address; within each 16-lane group the `BITS`-bit elements are
/// transposed per [`tr_source`]. Active lanes receive the result.
fn read_tr<const BITS: u32, const DW: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let a = addrs(c, op, op.imm as u64);
    let mut src = [0u128; 64];
    for (l, s) in src.iter_mut().enumerate() {
        let mut b = [0u8; 16];
        super::read_bytes(c, a[l], &mut b[..4 * DW]);
        *s = u128::from_le_bytes(b);
    }
    let k = (32 * DW) / BITS as usize;
    let mask = (1u128 << BITS) - 1;
    let mut out = [[0u32; 64]; DW];
    for l in 0..64 {
        let mut v = 0u128;
        for n in 0..k {
            let (sl, e) = tr_source(k, l, n);
            let x = src.get(sl).map_or(0, |w| (w >> (e as u32 * BITS)) & mask);
            v |= x << (n as u32 * BITS);
        }
        for (d, o) in out.iter_mut().enumerate() {
            o[l] = (v >> (32 * d)) as u32;
        }
    }
    for (d, o) in out.iter().enumerate() {
        c.wave.write_v(op.vdst.wrapping_add(d as u16), o, exec);
    }
    Ok(())
}
