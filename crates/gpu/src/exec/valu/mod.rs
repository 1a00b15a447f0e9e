//! Vector ALU instructions (VOP1, VOP2, VOPC and their VOP3 forms, with
//! SDWA and DPP): lowering to the uniform [`Op`] form, reading sources with
//! their modifiers and writing results under EXEC.
//!
//! Every encoding of one operation executes the same semantic function
//! (chosen by base mnemonic in [`lookup`]): the lowering makes implicit
//! operands explicit (VCC carry-in or condition as `src[2]`, VCC as the
//! carry-out / compare destination `sdst`, the accumulator of
//! `v_fmac`/`v_mac` as `src[2]`, the constant K of `v_madmk`/`v_madak` in
//! the place it multiplies or adds), so a semantic function only sees
//! `src[0..3]`, `vdst`, `sdst`, [`Mods`] and the SDWA/DPP [`Ext`].
//!
//! Semantic functions read sources with [`b32`], [`f32s`], [`b16`],
//! [`f16s`], [`b64`], [`f64s`] and write with [`write_b32`],
//! [`write_f32`], [`write_b16`], [`write_b64`], [`write_f64`] and
//! [`write_mask`]; those apply DPP lane selection, SDWA selects, abs/neg,
//! op_sel, omod, clamp (floats) and the EXEC mask.

#[macro_use]
mod macros;
mod cmp_float;
mod cmp_int;
mod cvt;
mod cvt_fp8;
pub(crate) mod float;
mod float_arith;
mod float_div;
mod float_unary;
mod int;
mod int_bits;
mod int_lane;

#[cfg(test)]
mod dpp_sdwa_tests;
#[cfg(test)]
mod float_kernels;
#[cfg(test)]
mod test_util;

use super::lower::{base_name, src_field, src_of, unsupported};
use super::op::{Ctx, DppCtl, Ext, Mods, NO_VDST, Op, SdwaSel};
use super::wave::{AGPR0, Lanes, Src, Width, sreg};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;
use rocjitsu_isa::gfx9::operand::{Operand, RegFile};
use rocjitsu_isa::gfx9::vop::{self, Dst, flags};
use rocjitsu_isa::gfx9::vop3;

pub use super::op::ExecFn;

/// The semantic function of a vector ALU base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    int::lookup(name).or_else(|| float::lookup(name))
}

/// Lowers a VOP1/VOP2/VOPC (e32, SDWA, DPP) or VOP3 instruction.
pub fn lower(inst: Inst) -> Op {
    match &inst.body() {
        Body::Vop(v) => match v.fields() {
            Some(f) => lower_vop(inst, &f),
            None => Op::new(inst, unsupported),
        },
        Body::Vop3(v) => {
            let v = v.clone();
            lower_vop3(inst, &v)
        }
        _ => Op::new(inst, unsupported),
    }
}

fn vreg_index(o: &Operand) -> u16 {
    match o {
        Operand::Reg(r) if r.file == RegFile::Vgpr => r.index,
        Operand::Reg(r) if r.file == RegFile::Agpr => AGPR0 + r.index,
        _ => NO_VDST,
    }
}

fn is_mac(name: &str) -> bool {
    name.starts_with("v_fmac_") || name.starts_with("v_mac_")
}

fn lower_vop(inst: Inst, f: &vop::VopFields) -> Op {
    let info = f.info;
    let name = info.name;
    // gfx908's DPP moves 32-bit lanes only: no DPP on 64-bit operations,
    // and neither row_newbcast (gfx90a) nor row_share/row_xmask (GFX10).
    if let vop::Ext::Dpp(d) = f.ext
        && !inst.target().is_gfx90a_plus()
        && (info.is_dp_alu() || (0x150..=0x16f).contains(&(d.ctrl & 0x1ff)))
    {
        return Op::new(inst, unsupported);
    }
    let mut op = Op::new(inst, lookup(name).unwrap_or(unsupported));
    match (info.dst, &f.dst) {
        (Dst::V32 | Dst::V64 | Dst::A32, Some(d)) => op.vdst = vreg_index(d),
        (Dst::S32 | Dst::Vcc, Some(d)) => op.sdst = super::lower::sdst_of(d),
        (Dst::Vcc, None) => op.sdst = sreg::VCC,
        _ => {}
    }
    let k = match f.ext {
        vop::Ext::Literal(k) => Some(k),
        _ => None,
    };
    let s0 = src_of(&f.src0);
    let s1 = f.src1.as_ref().map_or(Src::None, src_of);
    op.src = if info.flags & flags::MADMK != 0 {
        [s0, k.map_or(Src::None, Src::Lit), s1]
    } else if info.flags & flags::MADAK != 0 {
        [s0, s1, k.map_or(Src::None, Src::Lit)]
    } else {
        [s0, s1, Src::None]
    };
    if info.flags & flags::VCC_IN != 0 {
        op.src[2] = Src::S(sreg::VCC);
    }
    if info.flags & flags::CARRY_OUT != 0 {
        op.sdst = sreg::VCC;
    }
    if is_mac(name) {
        op.src[2] = Src::V(op.vdst);
    }
    match f.ext {
        vop::Ext::Sdwa(s) => {
            op.mods = Mods {
                neg: u8::from(s.src0.neg) | u8::from(s.src1.neg) << 1,
                abs: u8::from(s.src0.abs) | u8::from(s.src1.abs) << 1,
                clamp: s.clamp,
                omod: s.omod,
                ..Mods::default()
            };
            op.ext = Ext::Sdwa(SdwaSel {
                dst_sel: s.dst_sel,
                dst_unused: s.dst_unused,
                src_sel: [s.src0_sel, s.src1_sel],
                sext: [s.src0.sext, s.src1.sext],
            });
        }
        vop::Ext::Dpp(d) => {
            op.mods = Mods {
                neg: u8::from(d.src0.neg) | u8::from(d.src1.neg) << 1,
                abs: u8::from(d.src0.abs) | u8::from(d.src1.abs) << 1,
                ..Mods::default()
            };
            op.ext = Ext::Dpp(DppCtl {
                ctrl: d.ctrl,
                bound_ctrl: d.bound_ctrl,
                row_mask: d.row_mask,
                bank_mask: d.bank_mask,
                fi: false,
            });
        }
        _ => {}
    }
    op
}

fn lower_vop3(inst: Inst, v: &vop3::Vop3) -> Op {
    let row = v.row;
    let name = base_name(row.name);
    let mut op = Op::new(inst, lookup(name).unwrap_or(unsupported));
    match row.dst {
        vop3::Dst::V(_) => op.vdst = u16::from(v.vdst),
        vop3::Dst::A(_) => op.vdst = AGPR0 + u16::from(v.vdst),
        vop3::Dst::S(_) => op.sdst = v.vdst,
        vop3::Dst::No => {}
    }
    let (abs, opsel) = if row.sdst {
        op.sdst = v.abs_opsel_sdst & 0x7f;
        (0, 0)
    } else {
        (v.abs_opsel_sdst & 7, (v.abs_opsel_sdst >> 3) & 0xf)
    };
    for (k, s) in row.srcs.iter().enumerate().take(3) {
        op.src[k] = src_field(v.src[k], s.0, v.literal);
    }
    if is_mac(name) && row.srcs.len() == 2 {
        op.src[2] = Src::V(op.vdst);
    }
    op.mods = Mods {
        neg: v.neg,
        abs,
        opsel,
        clamp: v.clamp,
        omod: v.omod,
        ..Mods::default()
    };
    op
}

// ---------------------------------------------------------------------------
// Lane selection: EXEC and DPP.

/// Marks "no source lane" in [`DPP_SOURCES`].
const NO_LANE: u8 = 0xff;

/// The source lane DPP control `ctrl` reads for lane `l`, [`NO_LANE`] when
/// it is out of range or the control is not one of GFX9's (ISA manual,
/// "DPP_CTRL enumeration").
const fn dpp_lane(ctrl: u16, l: usize) -> u8 {
    let row = l & !15;
    let r = l & 15;
    let n = (ctrl & 15) as usize;
    let s = match ctrl {
        0x000..=0x0ff => (l & !3) | ((ctrl as usize >> ((l & 3) * 2)) & 3),
        // row_shl, row_shr: out of range past the row's ends.
        0x101..=0x10f if r + n < 16 => l + n,
        0x111..=0x11f if r >= n => l - n,
        0x121..=0x12f => row | ((r + 16 - n) & 15),
        0x130 if l < 63 => l + 1,
        0x134 => (l + 1) & 63,
        0x138 if l > 0 => l - 1,
        0x13c => (l + 63) & 63,
        0x140 => row | (15 - r),
        0x141 => (l & !7) | (7 - (l & 7)),
        0x142 if row >= 16 => row - 1,
        0x143 if row >= 32 => 31,
        // row_newbcast (gfx90a+) and row_share (GFX10+): lane n of each
        // row to the whole row.
        0x150..=0x15f => row | n,
        // row_xmask (GFX10+): lane r ^ n of the row.
        0x160..=0x16f => row | (r ^ n),
        _ => return NO_LANE,
    };
    s as u8
}

/// Number of DPP control values with a source pattern.
const DPP_CTRLS: usize = 0x170;

/// [`dpp_lane`] for every control below [`DPP_CTRLS`] and lane, computed at
/// compile time.
static DPP_SOURCES: [[u8; 64]; DPP_CTRLS] = {
    let mut t = [[NO_LANE; 64]; DPP_CTRLS];
    let mut c = 0;
    while c < DPP_CTRLS {
        let mut l = 0;
        while l < 64 {
            t[c][l] = dpp_lane(c as u16, l);
            l += 1;
        }
        c += 1;
    }
    t
};

/// The source lanes of DPP control `ctrl` ([`NO_LANE`] where none).
#[inline]
fn dpp_sources(ctrl: u16) -> &'static [u8; 64] {
    static NONE: [u8; 64] = [NO_LANE; 64];
    DPP_SOURCES.get(usize::from(ctrl)).unwrap_or(&NONE)
}

/// The source lane DPP control `ctrl` reads for lane `l`, `None` when it is
/// out of range (ISA manual, "DPP_CTRL enumeration").
pub fn dpp_source(ctrl: u16, l: usize) -> Option<usize> {
    let s = *dpp_sources(ctrl).get(l)?;
    (s != NO_LANE).then_some(usize::from(s))
}

/// Lane `l` of `src` as DPP control `ctrl` reads it: 0 where the source
/// lane is out of range or inactive in `exec`.
#[inline]
fn dpp_permute<T: Copy + Default>(ctrl: u16, exec: u64, src: &[T; 64]) -> [T; 64] {
    let tab = dpp_sources(ctrl);
    std::array::from_fn(|l| {
        let s = usize::from(tab[l] & 63);
        if tab[l] != NO_LANE && exec >> s & 1 != 0 {
            src[s]
        } else {
            T::default()
        }
    })
}

/// The lanes an instruction writes: EXEC, narrowed by DPP's row and bank
/// masks and, without `bound_ctrl`, by lanes whose source is out of range
/// or inactive.
#[inline(always)]
pub fn lanes(c: &Ctx, op: &Op) -> u64 {
    let exec = c.wave.exec();
    match op.ext {
        Ext::Dpp(d) => exec & dpp_mask(&d, fetched(exec, d.fi)),
        _ => exec,
    }
}

/// The lanes a DPP source may be read from: the active ones, or all with
/// `fi` (fetch inactive).
#[inline]
fn fetched(exec: u64, fi: bool) -> u64 {
    if fi { u64::MAX } else { exec }
}

/// Lane `l` of `src` as DPP8 selects `sel` read it: 0 where the source
/// lane is inactive in `exec`.
#[inline]
fn dpp8_permute<T: Copy + Default>(sel: u32, exec: u64, src: &[T; 64]) -> [T; 64] {
    std::array::from_fn(|l| {
        let s = (l & !7) | ((sel >> (3 * (l & 7))) & 7) as usize;
        if exec >> s & 1 != 0 {
            src[s]
        } else {
            T::default()
        }
    })
}

fn dpp_mask(d: &DppCtl, exec: u64) -> u64 {
    let mut rows = 0u64;
    for k in 0..4 {
        if d.row_mask >> k & 1 != 0 {
            rows |= 0xffff << (16 * k);
        }
    }
    let mut banks = 0u64;
    for k in 0..4 {
        if d.bank_mask >> k & 1 != 0 {
            banks |= 0x000f_000f_000f_000f << (4 * k);
        }
    }
    let src_ok = if d.bound_ctrl {
        u64::MAX
    } else {
        let tab = dpp_sources(d.ctrl);
        let mut m = 0u64;
        for l in 0..64 {
            let s = tab[l] & 63;
            m |= u64::from(tab[l] != NO_LANE && exec >> s & 1 != 0) << l;
        }
        m
    };
    rows & banks & src_ok
}

// ---------------------------------------------------------------------------
// Sources.

/// Applies an SDWA source select to a dword.
#[inline]
pub fn sdwa_select(v: u32, sel: u8, sext: bool) -> u32 {
    let (shift, bits) = match sel {
        0..=3 => (u32::from(sel) * 8, 8),
        4 | 5 => (u32::from(sel - 4) * 16, 16),
        _ => return v,
    };
    let x = v >> shift;
    if sext {
        (((x << (32 - bits)) as i32) >> (32 - bits)) as u32
    } else {
        x & ((1 << bits) - 1)
    }
}

/// Source `i`'s raw 32-bit lanes: a VGPR's lanes or a scalar/constant
/// broadcast, through DPP (source 0) and the SDWA select. No float
/// modifiers.
#[inline(always)]
pub fn b32(c: &Ctx, op: &Op, i: usize) -> Lanes {
    // The common case, inlined so that the copy folds into the caller's
    // lane loop: a plain VGPR.
    if let (Ext::None, Some(Src::V(r))) = (op.ext, op.src.get(i)) {
        return *c.wave.vreg(*r);
    }
    b32_general(c, op, i)
}

#[inline(never)]
fn b32_general(c: &Ctx, op: &Op, i: usize) -> Lanes {
    let src = op.src.get(i).copied().unwrap_or(Src::None);
    let mut v = c.wave.read_v32(src, Width::B32, &c.env.apertures);
    match op.ext {
        Ext::None => {}
        Ext::Sdwa(s) if i < 2 => {
            // The field moved to the top, then back down: the same shifts
            // for every lane.
            let (sel, sext) = (s.src_sel[i], s.sext[i]);
            if let Some((shift, bits)) = sdwa_field(sel) {
                let (up, down) = (32 - shift - bits, 32 - bits);
                if sext {
                    for x in v.iter_mut() {
                        *x = (((*x << up) as i32) >> down) as u32;
                    }
                } else {
                    for x in v.iter_mut() {
                        *x = (*x << up) >> down;
                    }
                }
            }
        }
        Ext::Dpp(d) if i == 0 => v = dpp_permute(d.ctrl, fetched(c.wave.exec(), d.fi), &v),
        Ext::Dpp8(d) if i == 0 => v = dpp8_permute(d.sel, fetched(c.wave.exec(), d.fi), &v),
        _ => {}
    }
    v
}

/// Source `i` as 64-bit lanes (a VGPR pair, or a constant widened as
/// `w`: [`Width::F64`] or [`Width::B64`]), through DPP (source 0).
#[inline]
pub fn b64w(c: &Ctx, op: &Op, i: usize, w: Width) -> [u64; 64] {
    let src = op.src.get(i).copied().unwrap_or(Src::None);
    let v = c.wave.read_v64(src, w, &c.env.apertures);
    match op.ext {
        Ext::Dpp(d) if i == 0 => dpp_permute(d.ctrl, fetched(c.wave.exec(), d.fi), &v),
        Ext::Dpp8(d) if i == 0 => dpp8_permute(d.sel, fetched(c.wave.exec(), d.fi), &v),
        _ => v,
    }
}

/// Source `i` as 64-bit integer lanes.
#[inline]
pub fn b64(c: &Ctx, op: &Op, i: usize) -> [u64; 64] {
    b64w(c, op, i, Width::B64)
}

/// Source `i` as 16-bit lanes: the low half, or the high half when the
/// VOP3 `op_sel` bit of the source is set; constants as 16-bit values.
#[inline]
pub fn b16(c: &Ctx, op: &Op, i: usize) -> [u16; 64] {
    let src = op.src.get(i).copied().unwrap_or(Src::None);
    let v = match src {
        Src::V(_) | Src::S(_) => b32(c, op, i),
        _ => [c.wave.read_s32(src, Width::B16, &c.env.apertures); 64],
    };
    let hi = op.mods.opsel >> i & 1 != 0;
    std::array::from_fn(|l| if hi { (v[l] >> 16) as u16 } else { v[l] as u16 })
}

/// Float-modifier bits of source `i`: (abs, neg).
#[inline]
fn absneg(op: &Op, i: usize) -> (bool, bool) {
    (op.mods.abs >> i & 1 != 0, op.mods.neg >> i & 1 != 0)
}

/// f32 denormals are kept on input when MODE.FP_DENORM[0] (bit 4) is set.
#[inline]
fn f32_denorm_in(c: &Ctx) -> bool {
    c.wave.mode & (1 << 4) != 0
}

/// f32 denormal results are kept when MODE.FP_DENORM[1] (bit 5) is set.
#[inline]
fn f32_denorm_out(c: &Ctx) -> bool {
    c.wave.mode & (1 << 5) != 0
}

/// Source `i` as f32 lanes, with abs/neg and the MODE's input denormal
/// handling.
#[inline]
pub fn f32s(c: &Ctx, op: &Op, i: usize) -> [f32; 64] {
    let v = b32(c, op, i);
    let (abs, neg) = absneg(op, i);
    let keep = f32_denorm_in(c);
    std::array::from_fn(|l| {
        let mut x = v[l];
        if !keep && x & 0x7f80_0000 == 0 {
            x &= 0x8000_0000;
        }
        if abs {
            x &= 0x7fff_ffff;
        }
        if neg {
            x ^= 0x8000_0000;
        }
        f32::from_bits(x)
    })
}

/// Source `i` as f16 bit patterns with abs/neg (op_sel as [`b16`]).
#[inline]
pub fn f16s(c: &Ctx, op: &Op, i: usize) -> [u16; 64] {
    let mut v = b16(c, op, i);
    let (abs, neg) = absneg(op, i);
    for x in v.iter_mut() {
        if abs {
            *x &= 0x7fff;
        }
        if neg {
            *x ^= 0x8000;
        }
    }
    v
}

/// Source `i` as f64 lanes with abs/neg.
#[inline]
pub fn f64s(c: &Ctx, op: &Op, i: usize) -> [f64; 64] {
    let v = b64w(c, op, i, Width::F64);
    let (abs, neg) = absneg(op, i);
    std::array::from_fn(|l| {
        let mut x = v[l];
        if abs {
            x &= !(1 << 63);
        }
        if neg {
            x ^= 1 << 63;
        }
        f64::from_bits(x)
    })
}

// ---------------------------------------------------------------------------
// Destinations.

/// The (shift, bits) of an SDWA select's field: 0-3 a byte, 4-5 a word;
/// `None` for DWORD.
#[inline]
fn sdwa_field(sel: u8) -> Option<(u32, u32)> {
    match sel {
        0..=3 => Some((u32::from(sel) * 8, 8)),
        4 | 5 => Some((u32::from(sel - 4) * 16, 16)),
        _ => None,
    }
}

/// Writes 32-bit results to `vdst` in the instruction's lanes, placed
/// under an SDWA destination select: the field takes the result's low
/// bits; the other bits are zero (UNUSED_PAD), the field's sign above it
/// and zero below (UNUSED_SEXT), or the old value (UNUSED_PRESERVE).
#[inline(always)]
pub fn write_b32(c: &mut Ctx, op: &Op, vals: &Lanes) {
    let mask = lanes(c, op);
    if let Ext::Sdwa(s) = op.ext
        && let Some((shift, bits)) = sdwa_field(s.dst_sel)
    {
        let low = ((1u64 << bits) - 1) as u32;
        let field = low << shift;
        let old = c.wave.vreg(op.vdst);
        let mut placed = [0u32; 64];
        match s.dst_unused {
            2 => {
                for l in 0..64 {
                    placed[l] = (old[l] & !field) | ((vals[l] << shift) & field);
                }
            }
            1 => {
                let top = shift + bits;
                let above = if top < 32 { u32::MAX << top } else { 0 };
                for l in 0..64 {
                    let sign = 0u32.wrapping_sub((vals[l] >> (bits - 1)) & 1);
                    placed[l] = ((vals[l] << shift) & field) | (above & sign);
                }
            }
            _ => {
                for l in 0..64 {
                    placed[l] = (vals[l] << shift) & field;
                }
            }
        }
        c.wave.write_v(op.vdst, &placed, mask);
        return;
    }
    c.wave.write_v(op.vdst, vals, mask);
}

/// Applies omod and clamp to an f32 result.
#[inline]
pub fn f32_out(op: &Op, x: f32) -> f32 {
    let x = match op.mods.omod {
        1 => x * 2.0,
        2 => x * 4.0,
        3 => x * 0.5,
        _ => x,
    };
    if op.mods.clamp {
        if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
    } else {
        x
    }
}

/// Writes f32 results (omod, clamp, and output denormal flushing per
/// MODE).
#[inline]
pub fn write_f32(c: &mut Ctx, op: &Op, vals: &[f32; 64]) {
    let keep = f32_denorm_out(c);
    let bits: Lanes = std::array::from_fn(|l| {
        let b = f32_out(op, vals[l]).to_bits();
        if !keep && b & 0x7f80_0000 == 0 {
            b & 0x8000_0000
        } else {
            b
        }
    });
    write_b32(c, op, &bits);
}

/// Writes 16-bit results: into the high half (keeping the low half) when
/// VOP3 `op_sel[3]` is set, otherwise into the low half with the high half
/// zeroed (GFX9) or kept (GFX10+), or under an SDWA destination select.
#[inline]
pub fn write_b16(c: &mut Ctx, op: &Op, vals: &[u16; 64]) {
    if op.mods.opsel & 8 != 0 {
        let old = *c.wave.vreg(op.vdst);
        let r: Lanes = std::array::from_fn(|l| (old[l] & 0xffff) | (u32::from(vals[l]) << 16));
        let mask = lanes(c, op);
        c.wave.write_v(op.vdst, &r, mask);
    } else if c.env.target.family() != rocjitsu_isa::Family::Gfx9 {
        // GFX10+: a 16-bit result keeps the register's other half.
        let old = *c.wave.vreg(op.vdst);
        let r: Lanes = std::array::from_fn(|l| (old[l] & 0xffff_0000) | u32::from(vals[l]));
        let mask = lanes(c, op);
        c.wave.write_v(op.vdst, &r, mask);
    } else {
        let r: Lanes = std::array::from_fn(|l| u32::from(vals[l]));
        write_b32(c, op, &r);
    }
}

/// Writes 64-bit results to the pair `vdst`, `vdst + 1`.
#[inline]
pub fn write_b64(c: &mut Ctx, op: &Op, vals: &[u64; 64]) {
    let mask = lanes(c, op);
    let lo: Lanes = std::array::from_fn(|l| vals[l] as u32);
    let hi: Lanes = std::array::from_fn(|l| (vals[l] >> 32) as u32);
    c.wave.write_v(op.vdst, &lo, mask);
    c.wave.write_v(op.vdst.wrapping_add(1), &hi, mask);
}

/// Writes f64 results (omod, clamp).
#[inline]
pub fn write_f64(c: &mut Ctx, op: &Op, vals: &[f64; 64]) {
    let m = op.mods;
    let bits: [u64; 64] = std::array::from_fn(|l| {
        let x = match m.omod {
            1 => vals[l] * 2.0,
            2 => vals[l] * 4.0,
            3 => vals[l] * 0.5,
            _ => vals[l],
        };
        let x = if m.clamp {
            if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
        } else {
            x
        };
        x.to_bits()
    });
    write_b64(c, op, &bits);
}

/// Writes a per-lane bit mask (compare result, carry-out) to `sdst`: bit l
/// is `bits`' bit l for active lanes and 0 for the others.
#[inline]
pub fn write_mask(c: &mut Ctx, op: &Op, bits: u64) {
    let m = bits & lanes(c, op);
    c.wave.set_mask(op.sdst, m);
}

/// Per-lane bits of a 64-bit scalar source (VCC carry-in, cndmask
/// condition).
#[inline]
pub fn mask_src(c: &Ctx, op: &Op, i: usize) -> u64 {
    let src = op.src.get(i).copied().unwrap_or(Src::None);
    c.wave.read_s64(src, Width::B64, &c.env.apertures) & c.wave.lane_mask()
}
