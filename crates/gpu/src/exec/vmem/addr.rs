//! Per-lane addresses of FLAT, GLOBAL, SCRATCH and buffer instructions
//! (the conventions are in the parent module's documentation).

use super::{IMM_IDXEN, IMM_OFFEN, Space, seg};
use crate::exec::op::{Ctx, Op};
use crate::exec::wave::{Src, Width, sreg};

/// The addresses of one instruction's lanes.
pub(crate) struct Addrs {
    pub a: [u64; 64],
    pub space: Space,
    /// Bytes in range from each lane's address (buffer range checking);
    /// `u64::MAX` where nothing is checked.
    pub limit: [u64; 64],
}

/// The 64-bit value of a VGPR pair per lane.
#[inline]
fn v64(c: &Ctx, r: u16) -> [u64; 64] {
    let (lo, hi) = (c.wave.vreg(r), c.wave.vreg(r.wrapping_add(1)));
    std::array::from_fn(|l| u64::from(lo[l]) | (u64::from(hi[l]) << 32))
}

/// The addresses of an instruction of segment `SEG`.
#[inline]
pub(crate) fn addrs<const SEG: u8>(c: &Ctx, op: &Op) -> Addrs {
    let imm = op.imm as u64;
    let unchecked = |a, space| Addrs {
        a,
        space,
        limit: [u64::MAX; 64],
    };
    match SEG {
        seg::FLAT | seg::GLOBAL => {
            let space = if SEG == seg::FLAT {
                Space::Flat
            } else {
                Space::Global
            };
            let Src::V(v) = op.src[0] else {
                return unchecked([imm; 64], space);
            };
            let a = match op.src[2] {
                Src::S(s) if SEG == seg::GLOBAL => {
                    let base = c.wave.s64(s).wrapping_add(imm);
                    let off = c.wave.vreg(v);
                    std::array::from_fn(|l| base.wrapping_add(u64::from(off[l])))
                }
                _ => {
                    let a = v64(c, v);
                    std::array::from_fn(|l| a[l].wrapping_add(imm))
                }
            };
            unchecked(a, space)
        }
        seg::SCRATCH => {
            // GFX11's scratch base is architected (no FLAT_SCRATCH SGPRs:
            // s102/s103 are plain SGPRs there); per-lane private memory
            // starts at 0.
            let fs = if c.env.target.family() == rocjitsu_isa::Family::Gfx9 {
                c.wave.s64(sreg::FLAT_SCRATCH)
            } else {
                0
            };
            let mut base = fs.wrapping_add(imm);
            if let Src::S(s) = op.src[2] {
                base = base.wrapping_add(u64::from(c.wave.s32(s)));
            }
            let a = match op.src[0] {
                Src::V(v) => {
                    let off = c.wave.vreg(v);
                    std::array::from_fn(|l| base.wrapping_add(u64::from(off[l])))
                }
                _ => [base; 64],
            };
            unchecked(a, Space::Private)
        }
        _ => buffer(c, op),
    }
}

/// The fields of a buffer resource (V#) used for addressing (ISA manual,
/// "Buffer Resource").
#[derive(Copy, Clone, Debug)]
pub(crate) struct Vsharp {
    pub base: u64,
    pub stride: u64,
    pub swizzle: bool,
    pub num_records: u64,
    pub nfmt: u8,
    pub dfmt: u8,
    pub elem_size: u64,
    pub index_stride: u64,
    pub add_tid: bool,
}

impl Vsharp {
    pub fn read(c: &Ctx, first: u8) -> Vsharp {
        let w: [u32; 4] = std::array::from_fn(|i| c.wave.s32(first.wrapping_add(i as u8)));
        Vsharp {
            base: u64::from(w[0]) | (u64::from(w[1] & 0xffff) << 32),
            stride: u64::from((w[1] >> 16) & 0x3fff),
            swizzle: w[1] >> 31 != 0,
            num_records: u64::from(w[2]),
            nfmt: ((w[3] >> 12) & 7) as u8,
            dfmt: ((w[3] >> 15) & 0xf) as u8,
            elem_size: 2 << ((w[3] >> 19) & 3),
            index_stride: 8 << ((w[3] >> 21) & 3),
            add_tid: w[3] & (1 << 23) != 0,
        }
    }
}

/// MUBUF/MTBUF addresses: private-segment accesses (the V# base is the
/// private aperture) are per-lane private offsets; others are global
/// addresses with their range limits.
fn buffer(c: &Ctx, op: &Op) -> Addrs {
    let r = Vsharp::read(c, op.sdst);
    let ap = &c.env.apertures;
    let soff = u64::from(c.wave.read_s32(op.src[2], Width::B32, ap));
    // 12 bits on GFX9 and GFX11, 24 on GFX12's VBUFFER.
    let inst = (op.imm & 0xff_ffff) as u64;
    let (idxen, offen) = (op.imm & IMM_IDXEN != 0, op.imm & IMM_OFFEN != 0);
    let Src::V(v) = op.src[0] else {
        return Addrs {
            a: [0; 64],
            space: Space::Global,
            limit: [0; 64],
        };
    };
    let zero = [0u32; 64];
    let (idx, voff) = match (idxen, offen) {
        (true, true) => (c.wave.vreg(v), c.wave.vreg(v.wrapping_add(1))),
        (true, false) => (c.wave.vreg(v), &zero),
        (false, true) => (&zero, c.wave.vreg(v)),
        (false, false) => (&zero, &zero),
    };
    if r.base == ap.private_base & 0xffff_ffff_ffff {
        // The scratch ABI of MUBUF private accesses keeps wave-level offsets
        // in SGPRs (the stack and frame pointers, the wave offset): a lane's
        // byte is at soffset / wavesize + voffset + offset of its own
        // (swizzled) private segment (AMDGPUUsage, "Private Segment
        // Buffer"; LLVM scales MUBUF stack offsets by the wave size: 32
        // in a GFX10 wave32 kernel's `s_addk_i32 s32, 0x400` for a 32-byte
        // frame).
        let lanes = if c.wave.wave32 { 32 } else { 64 };
        return Addrs {
            a: std::array::from_fn(|l| soff / lanes + u64::from(voff[l]) + inst),
            space: Space::Private,
            limit: [u64::MAX; 64],
        };
    }
    let mut a = [0; 64];
    let mut limit = [0; 64];
    let base = r.base.wrapping_add(soff);
    for l in 0..64 {
        let index = u64::from(idx[l]) + if r.add_tid { l as u64 } else { 0 };
        let offset = u64::from(voff[l]) + inst;
        let off = if r.swizzle {
            let (ims, ils) = (index / r.index_stride, index % r.index_stride);
            let (oms, ols) = (offset / r.elem_size, offset % r.elem_size);
            (ims * r.stride + oms * r.elem_size) * r.index_stride + ils * r.elem_size + ols
        } else {
            index * r.stride + offset
        };
        a[l] = base.wrapping_add(off);
        limit[l] = if r.stride == 0 || r.swizzle {
            r.num_records.saturating_sub(offset)
        } else if index < r.num_records {
            u64::MAX
        } else {
            0
        };
    }
    Addrs {
        a,
        space: Space::Global,
        limit,
    }
}
