//! Vector memory: FLAT, GLOBAL and SCRATCH instructions, MUBUF and MTBUF
//! (loads, stores, atomics), through the GPU VM (global), the workgroup's
//! LDS (flat addresses in the LDS aperture) and the wave's private memory
//! (scratch).
//!
//! # Address spaces
//!
//! * GLOBAL: `saddr` (64-bit SGPR pair) + 32-bit VGPR offset, or a 64-bit
//!   VGPR address when `saddr` is `off`, plus the 13-bit signed offset.
//! * FLAT: a 64-bit VGPR address plus the unsigned offset. An address in the
//!   LDS aperture (`shared_base .. shared_base + 4 GiB`) accesses the
//!   workgroup's LDS at `address - shared_base`; one in the private aperture
//!   (`private_base .. + 4 GiB`) accesses the lane's private memory at
//!   `FLAT_SCRATCH + address - private_base`; any other address is global.
//! * SCRATCH: the lane's private offset is `FLAT_SCRATCH` (s\[102:103\]) +
//!   the `saddr` SGPR (if any) + the VGPR (if any: gfx90a uses it when
//!   `saddr` is `off`, gfx940+ when the SVE bit is set) + the signed offset.
//!   The dispatcher gives every wave its own private memory
//!   ([`Wave::scratch`](super::wave::Wave), `lane_bytes` per lane) and sets
//!   `FLAT_SCRATCH` to 0, so `FLAT_SCRATCH` acts as an offset added to
//!   every private address.
//! * MUBUF/MTBUF: the address comes from the buffer resource (V#, four
//!   SGPRs: base \[47:0\], stride, swizzle enable, num_records, data and
//!   numeric formats, element size, index stride, add_tid_enable), the
//!   `soffset` operand, the VGPR index (`idxen`) and offset (`offen`) and the
//!   instruction offset (ISA manual, "Buffer Addressing"). Range checking
//!   drops out-of-range stores and returns 0 for out-of-range loads: for
//!   raw buffers (stride 0 or swizzled) a dword is in range when
//!   `voffset + offset + 4k + size <= num_records` (soffset is not range
//!   checked), for structured buffers when `index < num_records`; dword
//!   loads and stores check each dword, byte/short/format accesses and
//!   atomics check the whole access.
//! * Private-segment buffer: the dispatcher puts a V# whose base is the
//!   private aperture (the low 48 bits of `private_base`) with
//!   `add_tid_enable` in s\[0:3\]. A buffer access through a V# with that
//!   base goes to the lane's private memory at offset
//!   `soffset / lanes + voffset + offset` (lanes: the wave's, 64 or 32).
//!   The hardware swizzles that segment (dword `i` of lane `l` at
//!   `soffset + (i * lanes + l) * 4`), so `soffset` is a wave-level offset:
//!   the wave offset SGPR is 0 and the ABI's stack pointer (s32, used as
//!   soffset) advances by the wave size times the frame size (`s_addk_i32
//!   s32, 0x400` for a 16-byte frame in wave64, a 32-byte one in wave32). The `voffset` and
//!   instruction offset are per-lane. No num_records check applies, the
//!   private-memory bound does.
//!
//! Loads to LDS (`global_load_lds_*`, `scratch_load_lds_*`, MUBUF loads
//! with `lds`) write lane `l`'s data, extended to a dword for byte and short
//! loads, to LDS at `M0 + offset + l * size` (size 4, or 12 / 16 for the
//! dwordx3 / dwordx4 forms), only for active lanes.
//!
//! Accesses of private memory beyond `lane_bytes` fault with
//! [`Fault::Private`]; LDS accesses outside the workgroup's allocation read
//! 0 and drop writes (see [`super::lds`]); global accesses fault through
//! the [`Vm`](crate::mem::Vm).
//!
//! Cache-policy bits (`glc`/`slc`/`scc`, `sc0`/`sc1`/`nt`) have no
//! functional effect, except that an atomic returns the pre-op value only
//! with `glc` / `sc0` set.
//!
//! Lowered form: `vdst` the data destination register (VGPR or AGPR),
//! `src[0]` the address VGPR (`None` when unused), `src[1]` the data
//! register, `src[2]` the scalar base (`saddr`) or, for buffers, the
//! `soffset` operand; buffers keep the first SGPR of the resource in
//! `sdst`. `imm` holds the instruction offset; for buffers its bits 32 and
//! 33 are `idxen` and `offen` and bits 40-47 / 48-55 the MTBUF `dfmt` /
//! `nfmt`.

mod addr;
mod atomic;
mod format;
mod ldst;
#[cfg(test)]
mod tests;

use super::lds;
use super::lower::{src_field, unsupported};
use super::op::{Ctx, ExecFn, Fault, Op};
use super::wave::{AGPR0, Src, Wave, sreg};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;

pub(crate) use atomic::{AtomicOp, apply32, apply64};

/// Segments, as the const parameter `SEG` of the semantic functions.
pub(crate) mod seg {
    pub const FLAT: u8 = 0;
    pub const SCRATCH: u8 = 1;
    pub const GLOBAL: u8 = 2;
    pub const BUFFER: u8 = 3;
}

/// Load kinds: how the loaded bytes land in the destination dword.
pub(crate) mod ld {
    pub const U8: u8 = 0;
    pub const I8: u8 = 1;
    pub const U16: u8 = 2;
    pub const I16: u8 = 3;
    pub const B32: u8 = 4;
    pub const U8_D16: u8 = 5;
    pub const I8_D16: u8 = 6;
    pub const B16_D16: u8 = 7;
    pub const U8_D16_HI: u8 = 8;
    pub const I8_D16_HI: u8 = 9;
    pub const B16_D16_HI: u8 = 10;

    /// Bytes one element of kind `k` reads.
    pub const fn size(k: u8) -> usize {
        match k {
            U8 | I8 | U8_D16 | I8_D16 | U8_D16_HI | I8_D16_HI => 1,
            U16 | I16 | B16_D16 | B16_D16_HI => 2,
            _ => 4,
        }
    }

    /// The destination dword after loading `raw` (zero-extended bytes) over
    /// `old`: zero or sign extension to 32 bits, or a 16-bit value in the
    /// low (`_d16`) or high (`_d16_hi`) half with the other half kept.
    #[inline]
    pub const fn merge(k: u8, raw: u32, old: u32) -> u32 {
        let h = match k {
            U8 | U8_D16 | U8_D16_HI => raw & 0xff,
            I8 => return raw as u8 as i8 as i32 as u32,
            I8_D16 | I8_D16_HI => raw as u8 as i8 as i16 as u16 as u32,
            U16 | B16_D16 | B16_D16_HI => raw & 0xffff,
            I16 => return raw as u16 as i16 as i32 as u32,
            _ => return raw,
        };
        match k {
            U8 | U16 => h,
            U8_D16 | I8_D16 | B16_D16 => (old & 0xffff_0000) | h,
            _ => (old & 0xffff) | (h << 16),
        }
    }
}

/// Store kinds: which bytes of the data dword are written.
pub(crate) mod st {
    pub const B8: u8 = 0;
    pub const B16: u8 = 1;
    pub const B32: u8 = 2;
    pub const B8_HI: u8 = 3;
    pub const B16_HI: u8 = 4;

    pub const fn size(k: u8) -> usize {
        match k {
            B8 | B8_HI => 1,
            B16 | B16_HI => 2,
            _ => 4,
        }
    }

    /// The value stored (its low `size(k)` bytes).
    #[inline]
    pub const fn value(k: u8, v: u32) -> u32 {
        match k {
            B8_HI | B16_HI => v >> 16,
            _ => v,
        }
    }
}

/// The load kind and dword count named by a mnemonic's type suffix.
pub(crate) fn load_kind(t: &str) -> Option<(u8, usize)> {
    Some(match t {
        "ubyte" => (ld::U8, 1),
        "sbyte" => (ld::I8, 1),
        "ushort" => (ld::U16, 1),
        "sshort" => (ld::I16, 1),
        "dword" => (ld::B32, 1),
        "dwordx2" => (ld::B32, 2),
        "dwordx3" => (ld::B32, 3),
        "dwordx4" => (ld::B32, 4),
        "ubyte_d16" => (ld::U8_D16, 1),
        "sbyte_d16" => (ld::I8_D16, 1),
        "short_d16" => (ld::B16_D16, 1),
        "ubyte_d16_hi" => (ld::U8_D16_HI, 1),
        "sbyte_d16_hi" => (ld::I8_D16_HI, 1),
        "short_d16_hi" => (ld::B16_D16_HI, 1),
        _ => return None,
    })
}

fn store_kind(t: &str) -> Option<(u8, usize)> {
    Some(match t {
        "byte" => (st::B8, 1),
        "short" => (st::B16, 1),
        "dword" => (st::B32, 1),
        "dwordx2" => (st::B32, 2),
        "dwordx3" => (st::B32, 3),
        "dwordx4" => (st::B32, 4),
        "byte_d16_hi" => (st::B8_HI, 1),
        "short_d16_hi" => (st::B16_HI, 1),
        _ => return None,
    })
}

/// Instantiates a semantic function for a segment and const arguments
/// chosen at run time from a small set.
macro_rules! pick_seg {
    ($seg:expr, $f:ident, $($g:expr),*) => {
        match $seg {
            seg::FLAT => $f::<{ seg::FLAT }, $({ $g }),*> as ExecFn,
            seg::SCRATCH => $f::<{ seg::SCRATCH }, $({ $g }),*> as ExecFn,
            seg::GLOBAL => $f::<{ seg::GLOBAL }, $({ $g }),*> as ExecFn,
            _ => $f::<{ seg::BUFFER }, $({ $g }),*> as ExecFn,
        }
    };
}

macro_rules! pick_load {
    ($seg:expr, $f:ident, $k:expr, $n:expr) => {
        match ($k, $n) {
            (ld::U8, _) => pick_seg!($seg, $f, ld::U8, 1),
            (ld::I8, _) => pick_seg!($seg, $f, ld::I8, 1),
            (ld::U16, _) => pick_seg!($seg, $f, ld::U16, 1),
            (ld::I16, _) => pick_seg!($seg, $f, ld::I16, 1),
            (ld::U8_D16, _) => pick_seg!($seg, $f, ld::U8_D16, 1),
            (ld::I8_D16, _) => pick_seg!($seg, $f, ld::I8_D16, 1),
            (ld::B16_D16, _) => pick_seg!($seg, $f, ld::B16_D16, 1),
            (ld::U8_D16_HI, _) => pick_seg!($seg, $f, ld::U8_D16_HI, 1),
            (ld::I8_D16_HI, _) => pick_seg!($seg, $f, ld::I8_D16_HI, 1),
            (ld::B16_D16_HI, _) => pick_seg!($seg, $f, ld::B16_D16_HI, 1),
            (_, 1) => pick_seg!($seg, $f, ld::B32, 1),
            (_, 2) => pick_seg!($seg, $f, ld::B32, 2),
            (_, 3) => pick_seg!($seg, $f, ld::B32, 3),
            _ => pick_seg!($seg, $f, ld::B32, 4),
        }
    };
}

fn pick_store(s: u8, k: u8, n: usize) -> ExecFn {
    use ldst::store;
    match (k, n) {
        (st::B8, _) => pick_seg!(s, store, st::B8, 1),
        (st::B16, _) => pick_seg!(s, store, st::B16, 1),
        (st::B8_HI, _) => pick_seg!(s, store, st::B8_HI, 1),
        (st::B16_HI, _) => pick_seg!(s, store, st::B16_HI, 1),
        (_, 1) => pick_seg!(s, store, st::B32, 1),
        (_, 2) => pick_seg!(s, store, st::B32, 2),
        (_, 3) => pick_seg!(s, store, st::B32, 3),
        _ => pick_seg!(s, store, st::B32, 4),
    }
}

fn pick_atomic(s: u8, a: AtomicOp, rtn: bool) -> ExecFn {
    use AtomicOp as A;
    use atomic::atomic;
    macro_rules! ops {
        ($($v:ident),*) => {
            match (a, rtn) {
                $(
                    (A::$v, false) => pick_seg!(s, atomic, A::$v as u8, false),
                    (A::$v, true) => pick_seg!(s, atomic, A::$v as u8, true),
                )*
            }
        };
    }
    ops!(
        Add, Sub, Rsub, Smin, Umin, Smax, Umax, And, Or, Xor, Inc, Dec, Swap, CmpSwap, CmpSt,
        CmpStF, Mskor, Wrap, FAdd, FMin, FMax, PkAddF16, PkAddBf16, CSub, CmpSwapF, Add64, Sub64,
        Rsub64, Smin64, Umin64, Smax64, Umax64, And64, Or64, Xor64, Inc64, Dec64, Swap64,
        CmpSwap64, CmpSt64, CmpStF64, Mskor64, FAdd64, FMin64, FMax64
    )
}

/// The atomic operation named by the part of a FLAT/GLOBAL/BUFFER mnemonic
/// after `atomic_`.
fn vmem_atomic(t: &str) -> Option<AtomicOp> {
    use AtomicOp as A;
    Some(match t {
        "add" => A::Add,
        "sub" => A::Sub,
        "smin" => A::Smin,
        "umin" => A::Umin,
        "smax" => A::Smax,
        "umax" => A::Umax,
        "and" => A::And,
        "or" => A::Or,
        "xor" => A::Xor,
        "inc" => A::Inc,
        "dec" => A::Dec,
        "swap" => A::Swap,
        "cmpswap" => A::CmpSwap,
        "add_x2" => A::Add64,
        "sub_x2" => A::Sub64,
        "smin_x2" => A::Smin64,
        "umin_x2" => A::Umin64,
        "smax_x2" => A::Smax64,
        "umax_x2" => A::Umax64,
        "and_x2" => A::And64,
        "or_x2" => A::Or64,
        "xor_x2" => A::Xor64,
        "inc_x2" => A::Inc64,
        "dec_x2" => A::Dec64,
        "swap_x2" => A::Swap64,
        "cmpswap_x2" => A::CmpSwap64,
        "add_f32" => A::FAdd,
        // GFX11's clamped subtract and float compare-swap.
        "csub" => A::CSub,
        "cmpswap_f32" => A::CmpSwapF,
        // GFX11's global/flat/buffer f32 min and max (GFX9 has them in DS
        // only).
        "min_f32" => A::FMin,
        "max_f32" => A::FMax,
        // GFX10's names of the f32 and f64 min and max.
        "fmin" => A::FMin,
        "fmax" => A::FMax,
        "fmin_x2" => A::FMin64,
        "fmax_x2" => A::FMax64,
        "pk_add_f16" => A::PkAddF16,
        "pk_add_bf16" => A::PkAddBf16,
        "add_f64" => A::FAdd64,
        "min_f64" => A::FMin64,
        "max_f64" => A::FMax64,
        _ => return None,
    })
}

/// The semantic function of a vector memory mnemonic; `rtn` selects the
/// returning form of atomics, `lds` the load-to-LDS form of loads.
pub fn select(name: &str, rtn: bool, lds: bool) -> Option<ExecFn> {
    let (s, rest) = if let Some(r) = name.strip_prefix("flat_") {
        (seg::FLAT, r)
    } else if let Some(r) = name.strip_prefix("global_") {
        (seg::GLOBAL, r)
    } else if let Some(r) = name.strip_prefix("scratch_") {
        (seg::SCRATCH, r)
    } else if let Some(r) = name.strip_prefix("buffer_") {
        (seg::BUFFER, r)
    } else if let Some(r) = name.strip_prefix("tbuffer_") {
        return format::select(r, true);
    } else {
        return None;
    };
    if s == seg::BUFFER {
        match rest {
            "wbl2" | "inv" | "invl2" | "wbinvl1" | "wbinvl1_vol" => return Some(nop),
            "store_lds_dword" => return Some(ldst::store_from_lds),
            _ => {}
        }
        if let Some(f) = format::select(rest, false) {
            return Some(f);
        }
    }
    if let Some(t) = rest.strip_prefix("load_lds_") {
        let (k, n) = load_kind(t)?;
        return Some(pick_load!(s, load_lds, k, n));
    }
    if let Some(t) = rest.strip_prefix("load_") {
        let (k, n) = load_kind(t)?;
        return Some(if lds {
            pick_load!(s, load_lds, k, n)
        } else {
            pick_load!(s, load, k, n)
        });
    }
    if let Some(t) = rest.strip_prefix("store_") {
        let (k, n) = store_kind(t)?;
        return Some(pick_store(s, k, n));
    }
    let t = rest.strip_prefix("atomic_")?;
    Some(pick_atomic(s, vmem_atomic(t)?, rtn))
}

use ldst::{load, load_lds};

/// The semantic function of a vector memory mnemonic (non-returning
/// atomics, loads to VGPRs).
pub fn lookup(name: &str) -> Option<ExecFn> {
    select(name, false, false)
}

/// Cache write-back / invalidate: no functional effect (the emulator has
/// no caches).
fn nop(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Ok(())
}

/// Bits of a buffer op's `imm` above the offset.
pub(crate) const IMM_IDXEN: i64 = 1 << 32;
pub(crate) const IMM_OFFEN: i64 = 1 << 33;

/// Lowers a FLAT/GLOBAL/SCRATCH, MUBUF or MTBUF instruction.
pub fn lower(inst: Inst) -> Op {
    let target = inst.target();
    match &inst.body() {
        Body::Flat(f) => {
            let lds_mode = f.lds && !(f.seg == 1 && target.is_gfx940_plus());
            let exec = select(f.op.name, f.glc, lds_mode).unwrap_or(unsupported);
            let mut op = Op::new(inst, exec);
            let acc = if f.acc { AGPR0 } else { 0 };
            op.vdst = acc + u16::from(f.vdst);
            op.src[1] = Src::V(acc + u16::from(f.data));
            op.src[2] = if f.saddr == 0x7f {
                Src::None
            } else {
                Src::S(f.saddr)
            };
            let uses_vaddr = match f.seg {
                1 if target.is_gfx940_plus() => f.lds,
                1 => f.saddr == 0x7f,
                _ => true,
            };
            op.src[0] = if uses_vaddr {
                Src::V(u16::from(f.addr))
            } else {
                Src::None
            };
            op.imm = if f.seg == 0 {
                i64::from(f.offset)
            } else {
                i64::from(sext13(f.offset))
            };
            op
        }
        Body::Mubuf(b) | Body::Mtbuf(b) => {
            let exec = if b.mtbuf {
                format::select(b.op.name.trim_start_matches("tbuffer_"), true)
            } else {
                select(b.op.name, b.glc, b.lds)
            };
            let mut op = Op::new(inst, exec.unwrap_or(unsupported));
            let acc = if b.acc { AGPR0 } else { 0 };
            op.vdst = acc + u16::from(b.vdata);
            op.src[0] = Src::V(u16::from(b.vaddr));
            op.src[1] = Src::V(acc + u16::from(b.vdata));
            op.src[2] = src_field(u16::from(b.soffset), 1, b.literal());
            op.sdst = b.srsrc.wrapping_mul(4);
            op.imm = i64::from(b.offset & 0xfff)
                | if b.idxen { IMM_IDXEN } else { 0 }
                | if b.offen { IMM_OFFEN } else { 0 }
                | i64::from(b.dfmt) << 40
                | i64::from(b.nfmt) << 48;
            op
        }
        _ => Op::new(inst, unsupported),
    }
}

/// The 13-bit signed offset of GLOBAL/SCRATCH instructions.
fn sext13(v: u16) -> i16 {
    ((v << 3) as i16) >> 3
}

/// The per-lane addresses of a vector memory instruction, each with its
/// space (FLAT lanes by aperture, buffer lanes by resource), for plugins.
/// Lanes of a private access hold offsets in the lane's private memory.
pub(crate) fn lane_addresses(c: &Ctx, op: &Op) -> crate::plugin::Lanes {
    use crate::plugin::{Seg, Space as S};
    if op.class.seg == Seg::Image {
        return crate::plugin::Lanes {
            addr: super::mimg::lane_addresses(c, op),
            space: [S::Global; 64],
        };
    }
    let ad = match op.class.seg {
        Seg::Flat => addr::addrs::<{ seg::FLAT }>(c, op),
        Seg::Scratch => addr::addrs::<{ seg::SCRATCH }>(c, op),
        Seg::Global => addr::addrs::<{ seg::GLOBAL }>(c, op),
        _ => addr::addrs::<{ seg::BUFFER }>(c, op),
    };
    let mut out = crate::plugin::Lanes {
        addr: ad.a,
        space: [S::Global; 64],
    };
    for l in 0..64 {
        (out.addr[l], out.space[l]) = match locate(c, ad.space, ad.a[l]) {
            Loc::Global(a) => (a, S::Global),
            Loc::Lds(a) => (a, S::Lds),
            Loc::Private(a) => (a, S::Scratch),
        };
    }
    out
}

/// Where a lane's address points.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    /// Global memory through the VM.
    Global,
    /// The lane's private memory (an offset in its segment).
    Private,
    /// A flat address: classified by aperture per access.
    Flat,
}

/// A resolved location.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Loc {
    Global(u64),
    Lds(u64),
    Private(u64),
}

#[inline(always)]
fn locate(c: &Ctx, space: Space, addr: u64) -> Loc {
    match space {
        Space::Global => Loc::Global(addr),
        Space::Private => Loc::Private(addr),
        Space::Flat => {
            let ap = &c.env.apertures;
            let lds = addr.wrapping_sub(ap.shared_base);
            let prv = addr.wrapping_sub(ap.private_base);
            if lds < 1 << 32 {
                Loc::Lds(lds)
            } else if prv < 1 << 32 {
                // GFX11: no FLAT_SCRATCH SGPRs (see addr.rs).
                let fs = if c.env.target.family() == rocjitsu_isa::Family::Gfx9 {
                    c.wave.s64(sreg::FLAT_SCRATCH)
                } else {
                    0
                };
                Loc::Private(prv.wrapping_add(fs))
            } else {
                Loc::Global(addr)
            }
        }
    }
}

/// The byte range of lane `l`'s private memory at offset `off`, or the
/// private-memory fault.
#[inline(always)]
fn private_range(
    w: &Wave,
    l: usize,
    off: u64,
    size: usize,
) -> Result<std::ops::Range<usize>, Fault> {
    let lb = u64::from(w.lane_bytes);
    let fault = || Fault::Private {
        addr: off,
        size: size as u32,
        limit: w.lane_bytes,
    };
    let end = off.checked_add(size as u64).ok_or_else(fault)?;
    if end > lb {
        return Err(fault());
    }
    let start = (l as u64 * lb + off) as usize;
    let r = start..start + size;
    if r.end > w.scratch.len() {
        return Err(fault());
    }
    Ok(r)
}

/// Reads `out.len()` bytes of lane `l` at `addr` in `space`. Inlined so
/// that the copy of a constant-size element compiles to plain moves.
#[inline(always)]
pub(crate) fn read(
    c: &mut Ctx,
    space: Space,
    l: usize,
    addr: u64,
    out: &mut [u8],
) -> Result<(), Fault> {
    match locate(c, space, addr) {
        Loc::Global(a) => Ok(c.vm.load(c.tlb, a, out)?),
        Loc::Lds(a) => {
            lds::read_bytes(c, a, out);
            Ok(())
        }
        Loc::Private(a) => {
            let r = private_range(c.wave, l, a, out.len())?;
            if let Some(s) = c.wave.scratch.get(r) {
                out.copy_from_slice(s);
            }
            Ok(())
        }
    }
}

/// Writes `data` for lane `l` at `addr` in `space`.
#[inline(always)]
pub(crate) fn write(
    c: &mut Ctx,
    space: Space,
    l: usize,
    addr: u64,
    data: &[u8],
) -> Result<(), Fault> {
    match locate(c, space, addr) {
        Loc::Global(a) => Ok(c.vm.store(c.tlb, a, data)?),
        Loc::Lds(a) => {
            lds::write_bytes(c, a, data);
            Ok(())
        }
        Loc::Private(a) => {
            let r = private_range(c.wave, l, a, data.len())?;
            if let Some(s) = c.wave.scratch.get_mut(r) {
                s.copy_from_slice(data);
            }
            Ok(())
        }
    }
}

/// Atomically applies `f` to the dword of lane `l` at `addr`; returns the
/// old value. LDS and private memory belong to one host thread at a time,
/// so a read-modify-write is atomic there.
pub(crate) fn rmw32(
    c: &mut Ctx,
    space: Space,
    l: usize,
    addr: u64,
    f: impl Fn(u32) -> Option<u32>,
) -> Result<u32, Fault> {
    if let Loc::Global(a) = locate(c, space, addr) {
        return Ok(c.vm.atomic_u32(c.tlb, a, f)?);
    }
    let mut b = [0; 4];
    read(c, space, l, addr, &mut b)?;
    let old = u32::from_le_bytes(b);
    if let Some(new) = f(old) {
        write(c, space, l, addr, &new.to_le_bytes())?;
    }
    Ok(old)
}

/// As [`rmw32`] for a qword.
pub(crate) fn rmw64(
    c: &mut Ctx,
    space: Space,
    l: usize,
    addr: u64,
    f: impl Fn(u64) -> Option<u64>,
) -> Result<u64, Fault> {
    if let Loc::Global(a) = locate(c, space, addr) {
        return Ok(c.vm.atomic_u64(c.tlb, a, f)?);
    }
    let mut b = [0; 8];
    read(c, space, l, addr, &mut b)?;
    let old = u64::from_le_bytes(b);
    if let Some(new) = f(old) {
        write(c, space, l, addr, &new.to_le_bytes())?;
    }
    Ok(old)
}
