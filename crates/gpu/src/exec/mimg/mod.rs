//! Image instructions (MIMG on GFX9): loads, stores and atomics by texel
//! coordinate, samples and gathers through a sampler, and
//! `image_get_resinfo`, against the image resource (T#, eight SGPRs at
//! `srsrc`) and sampler (S#, four SGPRs at `ssamp`) descriptors decoded
//! in [`desc`]. Formats are in [`texel`], filtering and address modes in
//! [`sample`].
//!
//! # Addresses
//!
//! The address VGPRs start at `vaddr`; how many the hardware reads follows
//! from the image's dimension (T# `TYPE`) and the opcode, not the
//! encoding. Loads, stores and atomics take unsigned texel coordinates
//! `x [y] [z | layer] [mip]`. Samplers and gathers take, in order: the
//! texel offsets (`_o`: one dword, signed 6-bit x \[5:0\], y \[13:8\], z
//! \[21:16\]), the LOD bias (`_b`), the depth-comparison reference (`_c`),
//! the derivatives (`_d`/`_cd`: d/dx of each coordinate, then d/dy), the
//! coordinates (normalised floats unless `unorm`; the layer of an array
//! is rounded to the nearest integer), and the LOD (`_l`) or LOD clamp
//! (`_cl`). With `a16` the coordinates, derivatives and LOD are 16-bit
//! (two per dword, low half first; each derivative group and the
//! coordinates start a dword) while offsets, bias and reference stay 32-bit.
//!
//! # Data
//!
//! One dword per `dmask` bit (x, y, z, w in order) at `vdata`; with `d16`
//! two 16-bit values per dword (f16 for float formats, the low 16 bits of
//! integers). Loads and samples apply the T#'s `dst_sel` swizzle; stores
//! write components in the format's order. Gathers return four dwords, the
//! component `dmask` selects from each of the four texels. Atomics operate
//! on 32-bit integer images (`image_atomic_cmpswap`: data then compare
//! value) and return the old value with `glc`.
//!
//! Coordinates outside the image make loads return zeros and drop stores
//! and atomics (atomics then return 0).
//!
//! # Levels of detail
//!
//! `image_sample` without an explicit LOD derives it from the coordinates'
//! differences across each quad of lanes (lanes 4q+1 and 4q+2 against
//! 4q, as for compute shaders); the LOD picks `XY_MIN_FILTER` (> 0) or
//! `XY_MAG_FILTER`. With `MIP_FILTER` none, or an image of one level, the
//! base level is read. The emulator addresses level 0 only: anything
//! reaching another level faults naming it, as does a tiled image other
//! than 2D ones (whose swizzle modes are in [`tiling`]), a cube or MSAA
//! image, a format it cannot read or write (naming `DATA_FORMAT` and
//! `NUM_FORMAT`) and a sampler with a border colour table.
//!
//! Lowered form: `vdst` the vdata register (VGPR or AGPR), `src[0]` the
//! first address VGPR, `sdst` the T#'s first SGPR, `src[1]` the S#'s first
//! SGPR (samplers), `imm` the flags ([`flag`]) and the opcode's variant.

pub mod desc;
pub mod sample;
#[cfg(test)]
mod tests;
pub mod texel;
pub mod tiling;

use super::lower::unsupported;
use super::op::{Ctx, ExecFn, Fault, Op};
use super::vmem::{AtomicOp, apply32};
use super::wave::{AGPR0, Src};
use crate::float::{Rounding, f16_to_f32, f32_to_f16};
use desc::{Dim, Ssharp, Tsharp};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;
use sample::Query;

/// Bits of a lowered op's `imm`.
pub mod flag {
    pub const DMASK: i64 = 0xf;
    pub const UNORM: i64 = 1 << 4;
    pub const GLC: i64 = 1 << 5;
    pub const A16: i64 = 1 << 6;
    pub const D16: i64 = 1 << 7;
    /// Loads and stores: the `_mip` forms.
    pub const MIP: i64 = 1 << 8;
    /// Loads and stores: the `_pck` forms (no format conversion).
    pub const PCK: i64 = 1 << 9;
    /// `_pck_sgn`: sign-extend.
    pub const SGN: i64 = 1 << 10;
    /// Samplers and gathers: `_o`, `_b`, `_c`, `_d`/`_cd`, `_l`, `_cl`, `_lz`.
    pub const OFFSET: i64 = 1 << 11;
    pub const BIAS: i64 = 1 << 12;
    pub const COMPARE: i64 = 1 << 13;
    pub const DERIV: i64 = 1 << 14;
    pub const LOD: i64 = 1 << 15;
    pub const CLAMP: i64 = 1 << 16;
    pub const LZ: i64 = 1 << 17;
    /// Atomics: the [`AtomicOp`](super::AtomicOp) in bits 24..32.
    pub const ATOMIC_SHIFT: u32 = 24;
}

/// The semantic function and variant flags of an image mnemonic.
fn select(name: &str) -> Option<(ExecFn, i64)> {
    let rest = name.strip_prefix("image_")?;
    Some(match rest {
        "load" => (load as ExecFn, 0),
        "load_mip" => (load, flag::MIP),
        "load_pck" => (load, flag::PCK),
        "load_pck_sgn" => (load, flag::PCK | flag::SGN),
        "load_mip_pck" => (load, flag::MIP | flag::PCK),
        "load_mip_pck_sgn" => (load, flag::MIP | flag::PCK | flag::SGN),
        "store" => (store, 0),
        "store_mip" => (store, flag::MIP),
        "store_pck" => (store, flag::PCK),
        "store_mip_pck" => (store, flag::MIP | flag::PCK),
        "get_resinfo" => (resinfo, 0),
        _ => {
            if let Some(a) = rest.strip_prefix("atomic_") {
                return Some((atomic, i64::from(atomic_op(a)? as u8) << flag::ATOMIC_SHIFT));
            }
            let (f, mods): (ExecFn, &str) = if let Some(m) = rest.strip_prefix("sample") {
                (sample_op, m)
            } else if let Some(m) = rest.strip_prefix("gather4") {
                (gather_op, m)
            } else {
                return None;
            };
            let mut bits = 0;
            for m in mods.split('_').filter(|m| !m.is_empty()) {
                bits |= match m {
                    "o" => flag::OFFSET,
                    "b" => flag::BIAS,
                    "c" => flag::COMPARE,
                    "d" | "cd" => flag::DERIV,
                    "l" => flag::LOD,
                    "cl" => flag::CLAMP,
                    "lz" => flag::LZ,
                    _ => return None,
                };
            }
            (f, bits)
        }
    })
}

fn atomic_op(a: &str) -> Option<AtomicOp> {
    use AtomicOp as A;
    Some(match a {
        "swap" => A::Swap,
        "cmpswap" => A::CmpSwap,
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
        _ => return None,
    })
}

const ATOMICS: [AtomicOp; 13] = [
    AtomicOp::Swap,
    AtomicOp::CmpSwap,
    AtomicOp::Add,
    AtomicOp::Sub,
    AtomicOp::Smin,
    AtomicOp::Umin,
    AtomicOp::Smax,
    AtomicOp::Umax,
    AtomicOp::And,
    AtomicOp::Or,
    AtomicOp::Xor,
    AtomicOp::Inc,
    AtomicOp::Dec,
];

/// Lowers a MIMG instruction.
pub fn lower(inst: Inst) -> Op {
    let target = inst.target();
    let Body::Mimg(m) = inst.body() else {
        return Op::new(inst, unsupported);
    };
    let Some((exec, variant)) = select(m.op.name) else {
        return Op::new(inst, unsupported);
    };
    let mut op = Op::new(inst, exec);
    let acc = if m.vdata_agpr(target) { AGPR0 } else { 0 };
    op.vdst = acc + u16::from(m.vdata);
    op.src[0] = Src::V(u16::from(m.vaddr));
    op.sdst = m.srsrc.wrapping_mul(4);
    op.src[1] = if m.op.sampler {
        Src::S(m.ssamp.wrapping_mul(4))
    } else {
        Src::None
    };
    op.imm = variant
        | i64::from(m.dmask)
        | if m.unorm { flag::UNORM } else { 0 }
        | if m.glc { flag::GLC } else { 0 }
        | if m.a16 { flag::A16 } else { 0 }
        | if m.d16 { flag::D16 } else { 0 };
    op
}

fn tsharp(c: &Ctx, op: &Op) -> Result<Tsharp, Fault> {
    let s = op.sdst;
    Tsharp::decode(std::array::from_fn(|i| c.wave.s32(s.wrapping_add(i as u8))))
}

fn ssharp(c: &Ctx, op: &Op) -> Result<Ssharp, Fault> {
    let Src::S(s) = op.src[1] else {
        return Err(Fault::Invalid("image sampler operand missing".into()));
    };
    Ssharp::decode(std::array::from_fn(|i| c.wave.s32(s.wrapping_add(i as u8))))
}

/// Reads address components from the VGPRs at `vaddr`, in order.
struct Cursor {
    reg: u16,
    half: bool,
    a16: bool,
}

impl Cursor {
    fn new(op: &Op) -> Cursor {
        let Src::V(reg) = op.src[0] else {
            unreachable!("image ops have a vaddr")
        };
        Cursor {
            reg,
            half: false,
            a16: op.imm & flag::A16 != 0,
        }
    }

    /// Moves to the next dword boundary.
    fn align(&mut self) {
        if self.half {
            self.half = false;
            self.reg += 1;
        }
    }

    /// A 32-bit component (offsets, bias, reference).
    fn dword(&mut self, c: &Ctx) -> [u32; 64] {
        self.align();
        let v = *c.wave.vreg(self.reg);
        self.reg += 1;
        v
    }

    /// A coordinate component: 16 bits with `a16`, zero-extended, else 32.
    fn raw(&mut self, c: &Ctx) -> [u32; 64] {
        if !self.a16 {
            return self.dword(c);
        }
        let v = c.wave.vreg(self.reg);
        let sh = if self.half { 16 } else { 0 };
        let out = v.map(|x| (x >> sh) & 0xffff);
        if self.half {
            self.reg += 1;
        }
        self.half = !self.half;
        out
    }

    /// A float coordinate (f16 with `a16`).
    fn float(&mut self, c: &Ctx) -> [f32; 64] {
        let a16 = self.a16;
        self.raw(c).map(|x| {
            if a16 {
                f16_to_f32(x as u16)
            } else {
                f32::from_bits(x)
            }
        })
    }
}

/// The T#'s `dst_sel` applied to a decoded texel.
fn swizzle(t: &Tsharp, v: [u32; 4]) -> [u32; 4] {
    t.dst_sel.map(|s| match s {
        1 => t.format.one(),
        4..=7 => v[usize::from(s - 4)],
        _ => 0,
    })
}

/// Writes a lane's result: the `dmask` channels of `v` (all four for
/// gathers), packed in halves with `d16`.
fn write_lane(c: &mut Ctx, op: &Op, l: usize, v: [u32; 4], all: bool, int: bool) {
    let dmask = op.imm & flag::DMASK;
    let mut vals = [0u32; 4];
    let mut n = 0;
    for (k, &x) in v.iter().enumerate() {
        if all || dmask >> k & 1 != 0 {
            vals[n] = x;
            n += 1;
        }
    }
    let n = n.max(1);
    if op.imm & flag::D16 != 0 {
        let h = |x: u32| {
            if int {
                x & 0xffff
            } else {
                u32::from(f32_to_f16(f32::from_bits(x), Rounding::NearestEven))
            }
        };
        for d in 0..n.div_ceil(2) {
            let lo = h(vals[2 * d]);
            let hi = if 2 * d + 1 < n { h(vals[2 * d + 1]) } else { 0 };
            if let Some(r) = c.wave.vreg_mut(op.vdst + d as u16) {
                r[l] = lo | (hi << 16);
            }
        }
    } else {
        for (d, &x) in vals.iter().enumerate().take(n) {
            if let Some(r) = c.wave.vreg_mut(op.vdst + d as u16) {
                r[l] = x;
            }
        }
    }
}

/// Reads a lane's store data: the `dmask` channels, in the format's
/// component order; with `d16` from halves (f16 for float formats,
/// zero- or sign-extended for integer ones).
fn read_data(c: &Ctx, op: &Op, l: usize, t: &Tsharp) -> [u32; 4] {
    let dmask = op.imm & flag::DMASK;
    let d16 = op.imm & flag::D16 != 0;
    let mut out = [0, 0, 0, t.format.one()];
    let mut n = 0u16;
    for (k, o) in out.iter_mut().enumerate() {
        if dmask >> k & 1 == 0 {
            continue;
        }
        *o = if d16 {
            let h = (c.wave.vreg(op.vdst + n / 2)[l] >> (16 * (n % 2))) & 0xffff;
            match t.format.num {
                texel::num::UINT => h,
                texel::num::SINT => h as u16 as i16 as i32 as u32,
                _ if op.imm & flag::PCK != 0 => h,
                _ => f16_to_f32(h as u16).to_bits(),
            }
        } else {
            c.wave.vreg(op.vdst + n)[l]
        };
        n += 1;
    }
    out
}

/// Texel coordinates of a load, store or atomic: (x, y, z/layer) and the
/// mip level, per lane.
fn int_coords(c: &Ctx, op: &Op, t: &Tsharp) -> ([[u32; 64]; 3], [u32; 64]) {
    let mut cur = Cursor::new(op);
    let mut xyz = [[0; 64]; 3];
    for k in 0..t.dim.coords() {
        xyz[k] = cur.raw(c);
    }
    if t.dim.arrayed() {
        xyz[t.dim.coords()] = cur.raw(c);
    }
    let mip = if op.imm & flag::MIP != 0 {
        cur.raw(c)
    } else {
        [0; 64]
    };
    (xyz, mip)
}

/// The byte address of an in-range texel at `mip`, `None` outside the
/// image; faults for levels other than 0.
fn texel_at(t: &Tsharp, x: u32, y: u32, z: u32, mip: u32) -> Result<Option<u64>, Fault> {
    let level = t.base_level + mip;
    if level > t.last_level.max(t.base_level) {
        return Ok(None);
    }
    if level != 0 {
        return Err(mip_fault(level));
    }
    let [w, h, d] = t.level_size(0);
    if x >= w || y >= h || z >= d {
        return Ok(None);
    }
    let z = if t.dim.arrayed() { z + t.base_array } else { z };
    Ok(Some(t.texel_addr(x, y, z)))
}

fn mip_fault(level: u32) -> Fault {
    Fault::Invalid(format!(
        "image access to mip level {level}: the emulator addresses level 0 of linear images only"
    ))
}

/// Reads and decodes the texel at `addr`.
fn fetch(c: &mut Ctx, t: &Tsharp, addr: u64) -> Result<[u32; 4], Fault> {
    let mut buf = [0u8; 16];
    let b = &mut buf[..t.format.bytes as usize];
    c.vm.load(c.tlb, addr, b)?;
    Ok(t.format.decode(b))
}

/// Raw components without conversion (the `_pck` loads).
fn unpack_raw(t: &Tsharp, raw: &[u8], sgn: bool) -> [u32; 4] {
    let mut v = 0u128;
    for (i, b) in raw.iter().enumerate() {
        v |= u128::from(*b) << (8 * i);
    }
    let mut out = [0u32; 4];
    let mut bit = 0;
    for (i, &w) in t.format.comps.iter().enumerate() {
        let w = u32::from(w);
        let x = ((v >> bit) as u64 & ((1u64 << w) - 1)) as u32;
        out[i] = if sgn && w < 32 {
            ((x << (32 - w)) as i32 >> (32 - w)) as u32
        } else {
            x
        };
        bit += w;
    }
    out
}

fn pack_raw(t: &Tsharp, v: [u32; 4]) -> Vec<u8> {
    let mut acc = 0u128;
    let mut bit = 0;
    for (i, &w) in t.format.comps.iter().enumerate() {
        let w = u32::from(w);
        acc |= u128::from(u64::from(v[i]) & ((1u64 << w) - 1)) << bit;
        bit += w;
    }
    acc.to_le_bytes()[..t.format.bytes as usize].to_vec()
}

/// The active lanes.
fn lanes(c: &Ctx) -> impl Iterator<Item = usize> + use<> {
    let exec = c.wave.exec();
    (0..64).filter(move |l| exec >> l & 1 != 0)
}

fn load(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = tsharp(c, op)?;
    let (xyz, mip) = int_coords(c, op, &t);
    let pck = op.imm & flag::PCK != 0;
    for l in lanes(c) {
        let v = match texel_at(&t, xyz[0][l], xyz[1][l], xyz[2][l], mip[l])? {
            None => [0; 4],
            Some(a) if pck => {
                let mut buf = [0u8; 16];
                let b = &mut buf[..t.format.bytes as usize];
                c.vm.load(c.tlb, a, b)?;
                unpack_raw(&t, b, op.imm & flag::SGN != 0)
            }
            Some(a) => swizzle(&t, fetch(c, &t, a)?),
        };
        write_lane(c, op, l, v, false, t.format.is_int() || pck);
    }
    Ok(())
}

fn store(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = tsharp(c, op)?;
    let (xyz, mip) = int_coords(c, op, &t);
    let pck = op.imm & flag::PCK != 0;
    for l in lanes(c) {
        let Some(a) = texel_at(&t, xyz[0][l], xyz[1][l], xyz[2][l], mip[l])? else {
            continue;
        };
        let v = read_data(c, op, l, &t);
        let bytes = if pck {
            pack_raw(&t, v)
        } else {
            t.format.encode(v)?
        };
        c.vm.store(c.tlb, a, &bytes)?;
    }
    Ok(())
}

fn atomic(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = tsharp(c, op)?;
    if t.format.bytes != 4 || !t.format.is_int() || t.format.comps.len() != 1 {
        return Err(Fault::Invalid(format!(
            "{} on an image of DATA_FORMAT {} NUM_FORMAT {}: the emulator does image atomics \
             on 32-bit integer formats (32, UINT or SINT)",
            op.name(),
            t.format.data,
            t.format.num
        )));
    }
    let a_op = ATOMICS
        .into_iter()
        .find(|a| *a as u8 == (op.imm >> flag::ATOMIC_SHIFT) as u8)
        .unwrap_or(AtomicOp::Add);
    let (xyz, mip) = int_coords(c, op, &t);
    let rtn = op.imm & flag::GLC != 0;
    for l in lanes(c) {
        let d0 = c.wave.vreg(op.vdst)[l];
        let d1 = c.wave.vreg(op.vdst + 1)[l];
        let old = match texel_at(&t, xyz[0][l], xyz[1][l], xyz[2][l], mip[l])? {
            Some(a) => {
                c.vm.atomic_u32(c.tlb, a, |old| apply32(a_op, old, d0, d1))?
            }
            None => 0,
        };
        if rtn && let Some(r) = c.wave.vreg_mut(op.vdst) {
            r[l] = old;
        }
    }
    Ok(())
}

fn resinfo(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = tsharp(c, op)?;
    let mip = Cursor::new(op).dword(c);
    let levels = t.last_level.saturating_sub(t.base_level) + 1;
    for l in lanes(c) {
        let [w, h, d] = t.level_size(mip[l]);
        let v = match t.dim {
            Dim::D1 => [w, 1, 1, levels],
            Dim::D1Array => [w, t.depth, 1, levels],
            _ => [w, h, d, levels],
        };
        write_lane(c, op, l, v, false, true);
    }
    Ok(())
}

/// A sampler instruction's per-lane inputs.
struct SampleArgs {
    offset: [u32; 64],
    bias: [f32; 64],
    compare: [f32; 64],
    /// d/dx and d/dy of each coordinate (texel space).
    deriv: Option<[[[f32; 64]; 3]; 2]>,
    coords: [[f32; 64]; 3],
    layer: [f32; 64],
    lod: [f32; 64],
    clamp: [f32; 64],
}

fn sample_args(c: &Ctx, op: &Op, t: &Tsharp) -> SampleArgs {
    let mut cur = Cursor::new(op);
    let f = op.imm;
    let get32 = |on: bool, cur: &mut Cursor| if on { cur.dword(c) } else { [0; 64] };
    let offset = get32(f & flag::OFFSET != 0, &mut cur);
    let bias = get32(f & flag::BIAS != 0, &mut cur).map(f32::from_bits);
    let compare = get32(f & flag::COMPARE != 0, &mut cur).map(f32::from_bits);
    let n = t.dim.coords();
    let deriv = (f & flag::DERIV != 0).then(|| {
        let mut d = [[[0.0; 64]; 3]; 2];
        for dir in &mut d {
            cur.align();
            for axis in dir.iter_mut().take(n) {
                *axis = cur.float(c);
            }
        }
        d
    });
    cur.align();
    let mut coords = [[0.0; 64]; 3];
    for axis in coords.iter_mut().take(n) {
        *axis = cur.float(c);
    }
    let layer = if t.dim.arrayed() {
        cur.float(c)
    } else {
        [0.0; 64]
    };
    let lod = if f & flag::LOD != 0 {
        cur.float(c)
    } else {
        [0.0; 64]
    };
    let clamp = if f & flag::CLAMP != 0 {
        cur.float(c)
    } else {
        [f32::INFINITY; 64]
    };
    SampleArgs {
        offset,
        bias,
        compare,
        deriv,
        coords,
        layer,
        lod,
        clamp,
    }
}

/// Per-lane LODs: explicit, zero, or from the derivatives (given, or the
/// quad's coordinate differences).
fn lods(op: &Op, t: &Tsharp, s: &Ssharp, a: &SampleArgs) -> [f32; 64] {
    let f = op.imm;
    let normalised = f & flag::UNORM == 0 && !s.force_unnormalized;
    let size = t.level_size(0);
    let n = t.dim.coords();
    let scale = |k: usize| if normalised { size[k] as f32 } else { 1.0 };
    std::array::from_fn(|l| {
        let base = if f & flag::LOD != 0 {
            a.lod[l]
        } else if f & flag::LZ != 0 {
            0.0
        } else {
            let (dx, dy): ([f32; 3], [f32; 3]) = match &a.deriv {
                Some(d) => (
                    std::array::from_fn(|k| d[0][k][l] * scale(k)),
                    std::array::from_fn(|k| d[1][k][l] * scale(k)),
                ),
                None => {
                    let q = l & !3;
                    (
                        std::array::from_fn(|k| (a.coords[k][q + 1] - a.coords[k][q]) * scale(k)),
                        std::array::from_fn(|k| (a.coords[k][q + 2] - a.coords[k][q]) * scale(k)),
                    )
                }
            };
            let len = |v: [f32; 3]| v[..n].iter().map(|x| x * x).sum::<f32>().sqrt();
            len(dx).max(len(dy)).log2()
        };
        let lod = base + s.lod_bias + a.bias[l];
        lod.min(a.clamp[l]).clamp(s.min_lod, s.max_lod)
    })
}

/// The texel offsets of an `_o` dword.
fn offsets(v: u32) -> [i32; 3] {
    let s6 = |x: u32| ((x << 26) as i32) >> 26;
    [s6(v), s6(v >> 8), s6(v >> 16)]
}

/// Resolves the level a lod reads: the base level unless a mip filter
/// and several levels make another one.
fn check_level(t: &Tsharp, s: &Ssharp, lod: f32) -> Result<(), Fault> {
    if s.mip_filter == 0 || t.last_level <= t.base_level {
        if t.base_level != 0 {
            return Err(mip_fault(t.base_level));
        }
        return Ok(());
    }
    let top = (t.last_level - t.base_level) as f32;
    let lo = lod.max(0.0).min(top);
    let level = if s.mip_filter == 1 {
        lo.round()
    } else {
        lo.ceil()
    };
    if t.base_level != 0 || level > 0.0 {
        return Err(mip_fault(t.base_level + level as u32));
    }
    Ok(())
}

fn sample_common(c: &mut Ctx, op: &Op, gather: bool) -> Result<(), Fault> {
    let t = tsharp(c, op)?;
    let s = ssharp(c, op)?;
    let a = sample_args(c, op, &t);
    let lod = lods(op, &t, &s, &a);
    let unnorm = op.imm & flag::UNORM != 0;
    let comp = (op.imm & flag::DMASK).trailing_zeros().min(3) as usize;
    for l in lanes(c) {
        check_level(&t, &s, lod[l])?;
        let layer = if t.dim.arrayed() {
            let r = a.layer[l].round_ties_even();
            if r.is_nan() {
                0
            } else {
                r.clamp(0.0, (t.depth - 1) as f32) as u32
            }
        } else {
            0
        };
        let q = Query {
            coords: [a.coords[0][l], a.coords[1][l], a.coords[2][l]],
            layer,
            offset: if op.imm & flag::OFFSET != 0 {
                offsets(a.offset[l])
            } else {
                [0; 3]
            },
            minify: lod[l] > 0.0,
            compare: (op.imm & flag::COMPARE != 0).then_some(a.compare[l]),
        };
        let (vm, tlb) = (c.vm, &mut *c.tlb);
        let mut fetch = |x: u32, y: u32, z: u32| -> Result<[u32; 4], Fault> {
            let z = if t.dim.arrayed() { z + t.base_array } else { z };
            let mut buf = [0u8; 16];
            let b = &mut buf[..t.format.bytes as usize];
            vm.load(tlb, t.texel_addr(x, y, z), b)?;
            Ok(swizzle(&t, t.format.decode(b)))
        };
        let v = if gather {
            sample::gather(&t, &s, unnorm, &q, comp, &mut fetch)?
        } else {
            sample::sample(&t, &s, unnorm, &q, &mut fetch)?
        };
        let int = t.format.is_int() && q.compare.is_none();
        write_lane(c, op, l, v, gather, int);
    }
    Ok(())
}

fn sample_op(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    sample_common(c, op, false)
}

fn gather_op(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    sample_common(c, op, true)
}

/// The per-lane addresses of an image load, store or atomic (the texel
/// each lane accesses, 0 where none), for plugins.
pub(crate) fn lane_addresses(c: &Ctx, op: &Op) -> [u64; 64] {
    let Ok(t) = tsharp(c, op) else {
        return [0; 64];
    };
    let name = op.name();
    if !(name.starts_with("image_load")
        || name.starts_with("image_store")
        || name.starts_with("image_atomic"))
    {
        return [0; 64];
    }
    let (xyz, mip) = int_coords(c, op, &t);
    std::array::from_fn(|l| {
        texel_at(&t, xyz[0][l], xyz[1][l], xyz[2][l], mip[l])
            .ok()
            .flatten()
            .unwrap_or(0)
    })
}
