//! DS instructions that move data between lanes or use wave-level
//! addressing: `ds_swizzle_b32`, `ds_permute_b32`, `ds_bpermute_b32`,
//! `ds_append` / `ds_consume`, `ds_read_addtid_b32` /
//! `ds_write_addtid_b32`. The GWS instructions (global wave sync across
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
        _ => return None,
    })
}

/// The source lane of lane `l` for a `ds_swizzle_b32` offset (ISA manual,
/// "DS_SWIZZLE_B32"): with offset\[15\] set, quad-permute mode (offset\[7:0\]
/// holds a 2-bit source per lane of each group of four); otherwise bit-mask
/// mode within each 32-lane half, `((l & and) | or) ^ xor` with the masks
/// in offset\[4:0\], \[9:5\], \[14:10\]. `None` for the other patterns
/// (offset\[15\] set with offset\[14:8\] non-zero: rotate and FFT).
pub(crate) fn swizzle_src(off: u16, l: usize) -> Option<usize> {
    if off & 0x8000 != 0 {
        if off & 0x7f00 != 0 {
            return None;
        }
        let sel = usize::from(off >> (2 * (l & 3))) & 3;
        Some((l & !3) | sel)
    } else {
        let and = usize::from(off & 0x1f);
        let or = usize::from((off >> 5) & 0x1f);
        let xor = usize::from((off >> 10) & 0x1f);
        Some((l & 0x20) | ((((l & 0x1f) & and) | or) ^ xor))
    }
}

/// `ds_swizzle_b32`: each active lane reads the `addr` VGPR of its source
/// lane; an
/// inactive source lane gives 0 (the data passes through the LDS crossbar,
/// which only active lanes write). The rotate and FFT patterns, which the
/// GFX9 CDNA manuals do not define, fault as unsupported.
fn swizzle(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let off = op.imm as u16;
    // The data comes from the instruction's address VGPR.
    let Src::V(a) = op.src[0] else { return Ok(()) };
    let src = *c.wave.vreg(a);
    let mut out = [0u32; 64];
    for (l, o) in out.iter_mut().enumerate() {
        let s = swizzle_src(off, l).ok_or(Fault::Unsupported("ds_swizzle_b32 rotate/FFT mode"))?;
        if exec >> s & 1 != 0 {
            *o = src[s & 63];
        }
    }
    c.wave.write_v(op.vdst, &out, exec);
    Ok(())
}

/// The lane a permute address names: `(addr + offset) / 4` modulo 64.
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
    let mut out = [0u32; 64];
    for l in 0..64 {
        let s = lane_of(a[l]);
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
    let mut out = [0u32; 64];
    for l in 0..64 {
        if exec >> l & 1 != 0 {
            out[lane_of(a[l])] = src[l];
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
