//! GFX11 (RDNA3: gfx1100) lowering: a decoded [`gfx11::Inst`] becomes an
//! [`Op`] with its operands resolved to the wave's register-file indices,
//! like GFX9's lowering ([`super::lower`]) and into the same `Op` form, so
//! that the semantic functions of the encoding families ([`super::scalar`],
//! [`super::valu`], [`super::vop3p`], [`super::lds`], [`super::vmem`],
//! [`super::smem`]) run GFX11 code wherever the operation is the same. The
//! GFX11 name of a renamed operation is mapped to the GFX9 one in
//! [`names`]; operations GFX9 does not have, or whose semantics differ,
//! are in [`sem`].
//!
//! Differences the lowering makes explicit:
//! * m0 is operand 125 and null 124 (GFX9: 124, 125); the decoder's
//!   operands are mapped to the wave's file indices as on GFX9.
//! * Lane masks (VCC, compare and carry results, `v_cndmask` conditions)
//!   are one SGPR in wave32: the semantics write them through
//!   [`Wave::set_mask`](super::wave::Wave::set_mask).
//! * `v_cmpx_*` writes EXEC only (GFX9 also writes VCC / the SDST).
//! * True16 VGPR halves of the 32-bit encodings (bit 7 of an 8-bit VGPR
//!   field selects `.h`) become op_sel bits (sources 0, 1; bit 3 the
//!   destination), which the 16-bit semantics read as on VOP3; a 16-bit
//!   result keeps the other half of its register.
//! * DPP16 (`row_share`, `row_xmask`, `fi`) and DPP8 ([`Ext::Dpp8`]).
//! * VOPD: the X and Y operations are lowered as two ops held in
//!   [`Op::pair`] and executed with every source read before either
//!   result is written.
//! * GFX11.5's scalar float operations (gfx1151) run their VALU
//!   counterparts on one lane ([`sfloat`]).
//! * `s_delay_alu`, `s_clause`, `s_waitcnt_*`, `s_waitcnt_depctr`,
//!   `s_set_inst_prefetch_distance` and cache invalidations do nothing in
//!   a functional model.

pub mod names;
pub mod ops;
pub mod sem;
pub mod sfloat;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ops;
#[cfg(test)]
mod tests_sfloat;
pub mod wmma;

use super::lower::{base_name, sdst_of, src_of, unsupported};
use super::op::{Dpp8, DppCtl, ExecFn, Ext, Mods, NO_VDST, Op};
use super::wave::{Src, sreg};
use crate::plugin::class;
use crate::plugin::{Class, Family, Seg};
use rocjitsu_isa::Instruction;
use rocjitsu_isa::gfx11::operand::{Operand, decode_src, decode_sreg};
use rocjitsu_isa::gfx11::{Body, Inst, ds, sop, vop, vop3};

/// Lowers a decoded GFX11 instruction. Never fails: an instruction without
/// semantics lowers to [`unsupported`], which faults naming it if a wave
/// reaches it.
pub fn lower(inst: Inst) -> Op {
    let i = Instruction::Gfx11(inst);
    match inst.body() {
        Body::Salu(s) => {
            let name = s.mnemonic();
            let mut op = lower_salu(i, &s);
            if sfloat::counterpart(name).is_some() {
                // GFX11.5's scalar float ops (the decoder admits them on
                // gfx1151 only) run their VALU counterpart on one lane;
                // without a counterpart they stay unsupported. The
                // counterpart reads the sources in encoding order, K apart.
                if name == "s_fmamk_f32" {
                    op.src = [op.src[0], op.src[2], Src::None];
                }
                let fallback = op.clone();
                return sfloat::lower(op, name, s.k).unwrap_or(fallback);
            }
            op
        }
        Body::Sopk(k) => lower_sopk(i, &k),
        Body::Sopp(p) => lower_sopp(i, &p),
        Body::Smem(s) => lower_smem(i, &s),
        Body::Vop(v) => lower_vop(i, &v),
        Body::Vop3(v) => lower_vop3(i, &v),
        Body::Vop3p(v) => lower_vop3p(i, &v),
        Body::Vopd(v) => lower_vopd(i, &v),
        Body::Ds(d) => lower_ds(i, &d),
        Body::Flat(f) => lower_flat(i, &f),
        Body::Buf(b) => lower_buf(i, &b),
        Body::Mimg(_) => new(i, unsupported, Class::plain(Family::VmemLoad)),
        Body::Vinterp(_) | Body::Ldsdir(_) | Body::Exp(_) => {
            new(i, unsupported, Class::plain(Family::Other))
        }
    }
}

/// An SMEM instruction (GFX10 and GFX11): sdata, sbase (SGPR pairs),
/// soffset (`null`: none) and a signed 21-bit byte offset.
pub(crate) fn lower_smem(inst: Instruction, s: &rocjitsu_isa::gfx11::smem::Smem) -> Op {
    let name9 = names::gfx9_name(s.row.name);
    let exec = sem::lookup(s.row.name)
        .or_else(|| super::smem::lookup(&name9))
        .unwrap_or(unsupported);
    let mut op = new(inst, exec, class::smem(&name9));
    let sregs = s.t.sregs;
    let n = s.row.data.max(1);
    op.sdst = sdst_f(sregs.field(u16::from(s.sdata)), n);
    if s.row.base != 0 {
        op.src[0] = src_f(u16::from(s.sbase) * 2, s.row.base, None);
    }
    let soffset = sregs.field(u16::from(s.soffset));
    if soffset != u16::from(NULL_FIELD) {
        op.src[1] = src_f(soffset, 1, None);
    }
    op.imm = i64::from(s.offset);
    op.vdst = u16::from(s.glc);
    op
}

/// A SOP1, SOP2 or SOPC instruction (GFX11 and GFX12).
pub(crate) fn lower_salu(inst: Instruction, s: &sop::Salu) -> Op {
    let name = s.mnemonic();
    let mut op = new(inst, salu_exec(name), salu_class(name));
    if let rocjitsu_isa::gfx9::sop::Field::Op(d) = &s.sdst {
        op.sdst = sdst_any(d);
    }
    if let rocjitsu_isa::gfx9::sop::Field::Op(o) = &s.src0 {
        op.src[0] = src_of(o);
    }
    if let rocjitsu_isa::gfx9::sop::Field::Op(o) = &s.src1 {
        op.src[1] = src_of(o);
    }
    // The literal K of the SALU FMAs (GFX11.5, GFX12): D = S0 * S1 + K,
    // D = S0 * K + S1.
    if let Some(k) = s.k {
        if name == "s_fmamk_f32" {
            op.src = [op.src[0], Src::Lit(k), op.src[1]];
        } else {
            op.src[2] = Src::Lit(k);
        }
    }
    op
}

/// A SOPK instruction (GFX11 and GFX12).
pub(crate) fn lower_sopk(inst: Instruction, k: &sop::Sopk) -> Op {
    let name = k.mnemonic();
    let mut op = new(inst, salu_exec(name), salu_class(name));
    if let Some(d) = k.sdst() {
        op.sdst = sdst_any(&d);
    }
    op.imm = i64::from(k.simm16 as i16);
    if let Some(x) = k.imm32 {
        op.src[0] = Src::Lit(x);
    }
    op
}

/// A SOPP instruction (GFX11 and GFX12).
pub(crate) fn lower_sopp(inst: Instruction, p: &sop::Sopp) -> Op {
    let name = p.mnemonic();
    let mut op = new(inst, salu_exec(name), sopp_class(name));
    op.imm = i64::from(p.simm16 as i16);
    op
}

/// A DS instruction (GFX11 and GFX12).
pub(crate) fn lower_ds(inst: Instruction, d: &ds::Ds) -> Op {
    let name = d.fields.op.name;
    let name9 = names::gfx9_name(name);
    let exec = super::lds::lookup(&name9).unwrap_or(unsupported);
    let f = &d.fields;
    let mut op = new(inst, exec, class::ds(&name9, f.gds));
    if f.gds {
        op.exec = unsupported;
    }
    let (d0, d1) = if names::is_cmpstore(name) {
        (f.data1, f.data0)
    } else {
        (f.data0, f.data1)
    };
    op.vdst = u16::from(f.vdst);
    op.src = [
        Src::V(u16::from(f.addr)),
        Src::V(u16::from(d0)),
        Src::V(u16::from(d1)),
    ];
    op.imm = i64::from(f.offset);
    op
}

/// GFX11's `null` scalar operand field.
pub(crate) const NULL_FIELD: u8 = 124;

pub(crate) fn new(inst: Instruction, exec: ExecFn, class: Class) -> Op {
    Op::of(inst, exec, class)
}

/// The lowered form of a GFX11 9-bit source field read as `count` dwords.
pub(crate) fn src_f(field: u16, count: u8, literal: Option<u32>) -> Src {
    decode_src(field, count, literal).map_or(Src::None, |o| src_of(&o))
}

/// The scalar-file index a GFX11 scalar destination field names
/// ([`sreg::DISCARD`] for `null`).
pub(crate) fn sdst_f(field: u16, count: u8) -> u8 {
    decode_sreg(field, count).map_or(sreg::DISCARD, |o| sdst_any(&o))
}

/// The scalar-file index a destination operand names ([`sreg::DISCARD`]
/// for `null` and non-scalar operands).
pub(crate) fn sdst_any(o: &Operand) -> u8 {
    match sdst_of(o) {
        sreg::NULL => sreg::DISCARD,
        i => i,
    }
}

/// A VGPR operand's register.
fn vreg(field: u16) -> Src {
    Src::V(field)
}

pub(crate) fn salu_exec(name: &str) -> ExecFn {
    sem::lookup(name)
        .or_else(|| super::scalar::lookup(&names::gfx9_name(name)))
        .unwrap_or(unsupported)
}

fn salu_class(name: &str) -> Class {
    Class::plain(
        if matches!(name, "s_setpc_b64" | "s_swappc_b64" | "s_call_b64")
            || name.starts_with("s_cbranch")
        {
            Family::Branch
        } else if name.starts_with("s_waitcnt") || name.starts_with("s_wait_") {
            Family::Wait
        } else {
            Family::Salu
        },
    )
}

fn sopp_class(name: &str) -> Class {
    Class::plain(
        if name.starts_with("s_waitcnt") || name.starts_with("s_wait_") {
            Family::Wait
        } else if matches!(name, "s_barrier" | "s_barrier_signal" | "s_barrier_wait") {
            Family::Barrier
        } else if name == "s_branch" || name.starts_with("s_cbranch") {
            Family::Branch
        } else {
            Family::Other
        },
    )
}

/// The semantic function of a vector ALU operation (GFX11 name without
/// encoding suffix).
pub(crate) fn valu_exec(name: &str) -> ExecFn {
    sem::lookup(name)
        .or_else(|| super::valu::lookup(&names::gfx9_name(name)))
        .unwrap_or(unsupported)
}

pub(crate) fn valu_class() -> Class {
    Class::plain(Family::Valu)
}

/// Operations that read VCC (`vcc_lo` in wave32) as their third source
/// in the 32-bit encodings: carry-in and select condition.
pub(crate) fn reads_vcc(name: &str) -> bool {
    matches!(
        name,
        "v_add_co_ci_u32" | "v_sub_co_ci_u32" | "v_subrev_co_ci_u32" | "v_cndmask_b32"
    )
}

/// Operations that write their carry-out to VCC in the 32-bit encodings.
pub(crate) fn writes_carry(name: &str) -> bool {
    matches!(
        name,
        "v_add_co_ci_u32" | "v_sub_co_ci_u32" | "v_subrev_co_ci_u32"
    )
}

/// Multiply-accumulate operations whose accumulator is the destination.
pub(crate) fn is_mac(name: &str) -> bool {
    name.starts_with("v_fmac_")
        || name.starts_with("v_mac_")
        || name.starts_with("v_dot2c_")
        || name.starts_with("v_dot2acc_")
}

/// The DPP16 controls and source modifiers of a DPP dword.
pub(crate) fn dpp16(d: u32) -> (Ext, u8, u8) {
    let bit = |b: u32| d >> b & 1 != 0;
    let ext = Ext::Dpp(DppCtl {
        ctrl: ((d >> 8) & 0x1ff) as u16,
        fi: bit(18),
        bound_ctrl: bit(19),
        bank_mask: ((d >> 24) & 0xf) as u8,
        row_mask: ((d >> 28) & 0xf) as u8,
    });
    let neg = u8::from(bit(20)) | u8::from(bit(22)) << 1;
    let abs = u8::from(bit(21)) | u8::from(bit(23)) << 1;
    (ext, neg, abs)
}

/// A VOP1/VOP2/VOPC instruction in its 32-bit, DPP16 or DPP8 form.
pub(crate) fn lower_vop(inst: Instruction, v: &vop::Vop) -> Op {
    let row = v.row;
    let name = base_name(row.name);
    let mut op = new(inst, valu_exec(name), valu_class());
    let (w0, w1) = (v.w0, v.w1);
    let (src0, ext) = match v.form() {
        vop::Form::Dpp16 => {
            let (ext, neg, abs) = dpp16(w1);
            op.mods.neg = neg;
            op.mods.abs = abs;
            (256 | (w1 & 0xff) as u16, ext)
        }
        vop::Form::Dpp8 => (
            256 | (w1 & 0xff) as u16,
            Ext::Dpp8(Dpp8 {
                sel: w1 >> 8,
                fi: w0 & 0x1ff == 0xea,
            }),
        ),
        _ => ((w0 & 0x1ff) as u16, Ext::None),
    };
    op.ext = ext;
    // True16 operands: bit 7 of a VGPR field is the half.
    let mut opsel = 0u8;
    if let Some(s) = row.src0 {
        op.src[0] = if s.t16 && src0 >= 256 {
            opsel |= u8::from(src0 & 0x80 != 0);
            vreg(src0 & 0x7f)
        } else {
            src_f(v.sregs.field(src0), s.w.max(1), v.literal())
        };
    }
    if let Some((_, half)) = row.src1 {
        let f = ((w0 >> 9) & 0xff) as u16;
        op.src[1] = if half {
            opsel |= u8::from(f & 0x80 != 0) << 1;
            vreg(f & 0x7f)
        } else {
            vreg(f)
        };
    }
    let vdst = ((w0 >> 17) & 0xff) as u16;
    match row.dst {
        vop::VDst::V(_) => op.vdst = vdst,
        vop::VDst::V16 => {
            opsel |= u8::from(vdst & 0x80 != 0) << 3;
            op.vdst = vdst & 0x7f;
        }
        vop::VDst::S(_) => op.sdst = sdst_f(v.sregs.field(vdst), 1),
        vop::VDst::None => {}
    }
    op.mods.opsel = opsel;
    if row.kind == vop::Kind::Vopc {
        // v_cmpx writes EXEC only.
        op.sdst = if name.starts_with("v_cmpx_") {
            sreg::DISCARD
        } else {
            sreg::VCC
        };
    }
    let k = v.literal().map(Src::Lit).unwrap_or(Src::None);
    if name.starts_with("v_fmamk_") || name.starts_with("v_madmk_") {
        op.src = [op.src[0], k, op.src[1]];
        // The true16 half of vsrc1 moves with it to the third place.
        op.mods.opsel = (op.mods.opsel & !2) | ((op.mods.opsel & 2) << 1);
    } else if name.starts_with("v_fmaak_") || name.starts_with("v_madak_") {
        op.src[2] = k;
    }
    if reads_vcc(name) {
        op.src[2] = Src::S(sreg::VCC);
    }
    if writes_carry(name) {
        op.sdst = sreg::VCC;
    }
    if is_mac(name) {
        op.src[2] = Src::V(op.vdst);
        if opsel & 8 != 0 {
            op.mods.opsel |= 4;
        }
    }
    op
}

/// A VOP3 instruction (VOP3a, VOP3b with a carry-out, VOPC with an SDST),
/// with DPP16 or DPP8 in its `_e64_dpp` forms.
pub(crate) fn lower_vop3(inst: Instruction, v: &vop3::Vop3) -> Op {
    let row = v.row;
    let name = base_name(row.name);
    let mut op = new(inst, valu_exec(name), valu_class());
    let (w0, w1) = (v.w0, v.w1);
    let mask_w = if v.wave64 { 2 } else { 1 };
    let vdst = u16::from(v.vdst());
    let sfield = |f: u16| v.sregs.field(f);
    match row.dst {
        vop3::Dst::V(_) | vop3::Dst::V16 => op.vdst = vdst,
        vop3::Dst::S(n) | vop3::Dst::SXexec(n) => op.sdst = sdst_f(sfield(vdst), n),
        vop3::Dst::Mask => op.sdst = sdst_f(sfield(vdst), mask_w),
        vop3::Dst::No(_) => {}
    }
    let abs = if row.sdst {
        op.sdst = sdst_f(sfield(((w0 >> 8) & 0x7f) as u16), mask_w);
        0
    } else {
        ((w0 >> 8) & 7) as u8
    };
    for k in 0..row.srcs.len().min(3) {
        op.src[k] = v.src(k).map_or(Src::None, |o: Operand| src_of(&o));
    }
    let opsel = ((w0 >> 11) & 0xf) as u8;
    if is_mac(name) && row.srcs.len() == 2 {
        op.src[2] = Src::V(op.vdst);
    }
    if name.starts_with("v_cmpx_") {
        op.sdst = sreg::DISCARD;
    }
    op.mods = Mods {
        neg: ((w1 >> 29) & 7) as u8,
        abs,
        // The accumulator of a 16-bit mac is the destination's half.
        opsel: if is_mac(name) && opsel & 8 != 0 {
            opsel | 4
        } else {
            opsel
        },
        clamp: w0 >> 15 & 1 != 0,
        omod: ((w1 >> 27) & 3) as u8,
        ..Mods::default()
    };
    if let Some(d) = v.dpp {
        op.ext = if w1 & 0x1ff == 0xfa {
            dpp16(d).0
        } else {
            Ext::Dpp8(Dpp8 {
                sel: d >> 8,
                fi: w1 & 0x1ff == 0xea,
            })
        };
    }
    op
}

/// A VOP3P instruction (packed math, mixed-precision FMA, dot products,
/// WMMA).
pub(crate) fn lower_vop3p(inst: Instruction, v: &rocjitsu_isa::gfx11::vop3p::Vop3p) -> Op {
    let row = v.row;
    let name = row.name;
    let exec = sem::lookup(name)
        .or_else(|| wmma::lookup(name))
        .or_else(|| super::vop3p::lookup(&names::gfx9_name(name)))
        .unwrap_or(unsupported);
    let mut op = new(inst, exec, valu_class());
    let (w0, w1) = (v.w0, v.w1);
    op.vdst = if row.dst[usize::from(v.wave64)] == 0 {
        NO_VDST
    } else {
        (w0 & 0xff) as u16
    };
    for k in 0..row.srcs.len().min(3) {
        op.src[k] = v.src(k).map_or(Src::None, |o: Operand| src_of(&o));
    }
    let neg_hi = ((w0 >> 8) & 7) as u8;
    op.mods = Mods {
        neg: ((w1 >> 29) & 7) as u8,
        abs: if row.mix { neg_hi } else { 0 },
        neg_hi: if row.mix { 0 } else { neg_hi },
        opsel: ((w0 >> 11) & 7) as u8,
        opsel_hi: ((w1 >> 27) & 3) as u8 | (((w0 >> 14) & 1) as u8) << 2,
        clamp: w0 >> 15 & 1 != 0,
        omod: 0,
    };
    op
}

/// A VOPD pair: each half lowered as the VOP2/VOP1 operation it names.
pub(crate) fn lower_vopd(inst: Instruction, v: &rocjitsu_isa::gfx11::vopd::Vopd) -> Op {
    use rocjitsu_isa::gfx11::vopd::{DualRow, Role};
    let (dx, dy) = v.vdst();
    let half = |r: &DualRow, dst: u16, src0: u16, vsrc1: u16| -> Option<Op> {
        let name = format!("v_{}", r.name.trim_start_matches("v_dual_"));
        let name = match name.as_str() {
            "v_mul_dx9_zero_f32" => "v_mul_legacy_f32".to_string(),
            "v_dot2acc_f32_f16" => "v_dot2c_f32_f16".to_string(),
            "v_dot2acc_f32_bf16" => "v_dot2c_f32_bf16".to_string(),
            _ => name,
        };
        let exec = sem::lookup(&name).or_else(|| super::valu::lookup(&names::gfx9_name(&name)))?;
        let mut op = new(inst, exec, valu_class());
        op.vdst = dst;
        op.src[0] = src_f(src0, 1, v.literal);
        if r.roles.contains(&Role::Src1) {
            op.src[1] = vreg(vsrc1);
        }
        let k = v.literal.map_or(Src::None, Src::Lit);
        if name.starts_with("v_fmamk_") {
            op.src = [op.src[0], k, op.src[1]];
        } else if name.starts_with("v_fmaak_") {
            op.src[2] = k;
        } else if is_mac(&name) {
            op.src[2] = Src::V(dst);
        } else if name == "v_cndmask_b32" {
            op.src[2] = Src::S(sreg::VCC);
        }
        Some(op)
    };
    let x = half(v.x, dx, (v.w0 & 0x1ff) as u16, ((v.w0 >> 9) & 0xff) as u16);
    let y = half(v.y, dy, (v.w1 & 0x1ff) as u16, ((v.w1 >> 9) & 0xff) as u16);
    match (x, y) {
        (Some(x), Some(y)) => {
            let mut op = new(inst, sem::vopd, valu_class());
            op.pair = Some(Box::new([x, y]));
            op
        }
        // A half without semantics: the pair faults naming itself.
        _ => new(inst, unsupported, valu_class()),
    }
}

/// A FLAT, GLOBAL or SCRATCH instruction (GFX10 and GFX11; the field
/// positions are the family's [`FlatTables`](rocjitsu_isa::gfx11::flat::FlatTables)).
/// RDNA3 ISA manual, "FLAT": offset 12:0, glc 14, seg 17:16; addr, data,
/// saddr (`null`: none), sve (SCRATCH: the VGPR address is used), vdst in
/// the second dword. RDNA2: offset 11:0, lds 13, seg 15:14, glc 16; a
/// SCRATCH address is the VGPR's when saddr is `null` (0x7d), neither
/// (ST mode) when it is 0x7f. GFX10's lds bit (a load into LDS) has no
/// semantics: such an instruction faults naming itself.
pub(crate) fn lower_flat(inst: Instruction, f: &rocjitsu_isa::gfx11::flat::Flat) -> Op {
    let name9 = names::gfx9_name(f.op.name);
    let (w0, w1, t) = (f.w0, f.w1, f.t);
    let seg = f.seg();
    let glc = w0 >> t.glc & 1 != 0;
    let exec = sem::lookup(f.op.name)
        .or_else(|| super::vmem::select(&name9, glc, false))
        .unwrap_or(unsupported);
    let cseg = match seg {
        0 => Seg::Flat,
        1 => Seg::Scratch,
        _ => Seg::Global,
    };
    let mut op = new(inst, exec, class::vmem(&name9, cseg));
    if t.lds.is_some_and(|b| w0 >> b & 1 != 0) {
        op.exec = unsupported;
    }
    let addr = (w1 & 0xff) as u16;
    let data = ((w1 >> 8) & 0xff) as u16;
    let saddr = (w1 >> 16) & 0x7f;
    let no_saddr = saddr == t.off || (!t.sve && saddr == 0x7f);
    let sve = if t.sve {
        w1 >> 23 & 1 != 0
    } else {
        saddr == t.off
    };
    op.vdst = (w1 >> 24) as u16;
    op.src[1] = Src::V(data);
    op.src[2] = if no_saddr || seg == 0 {
        Src::None
    } else {
        sdst_src(saddr as u16, if seg == 2 { 2 } else { 1 })
    };
    let uses_vaddr = seg != 1 || sve;
    op.src[0] = if uses_vaddr { Src::V(addr) } else { Src::None };
    let bits = t.offset_bits;
    let off = w0 & ((1 << bits) - 1);
    op.imm = if seg == 0 {
        i64::from(off & ((1 << (bits - 1)) - 1))
    } else {
        let sh = 32 - bits;
        i64::from(((off << sh) as i32) >> sh)
    };
    op
}

/// A scalar register operand (saddr) as a source.
pub(crate) fn sdst_src(field: u16, count: u8) -> Src {
    match sdst_f(field, count) {
        sreg::DISCARD => Src::None,
        i => Src::S(i),
    }
}

/// A MUBUF or MTBUF instruction (GFX10 and GFX11; the field positions
/// are the family's [`BufTables`](rocjitsu_isa::gfx11::mubuf::BufTables)).
/// RDNA3 ISA manual, "MUBUF": offset 11:0, glc 14; vaddr, vdata, srsrc
/// (SGPR quads), offen 54, idxen 55, soffset; MTBUF (typed) adds FORMAT,
/// bits 25:19. RDNA2: offen 12, idxen 13, glc 14, lds 16. GFX10's MTBUF
/// (whose FORMAT values map through another table) and its loads into LDS
/// have no semantics yet.
pub(crate) fn lower_buf(inst: Instruction, b: &rocjitsu_isa::gfx11::mubuf::Buf) -> Op {
    let name = b.op.name;
    let name9 = names::gfx9_name(name);
    let (w0, w1, t) = (b.w0, b.w1, b.t);
    let bit = |n: u32| (u64::from(w0) | u64::from(w1) << 32) >> n & 1 != 0;
    let glc = bit(t.glc);
    let gfx10 = matches!(inst, Instruction::Gfx10(_));
    let exec = if (gfx10 && b.mtbuf) || t.lds.is_some_and(bit) {
        None
    } else {
        sem::lookup(name).or_else(|| super::vmem::select(&name9, glc, false))
    };
    let mut op = new(
        inst,
        exec.unwrap_or(unsupported),
        class::vmem(&name9, Seg::Buffer),
    );
    op.vdst = ((w1 >> 8) & 0xff) as u16;
    op.src[0] = Src::V((w1 & 0xff) as u16);
    op.src[1] = Src::V(op.vdst);
    op.src[2] = src_f(t.sregs.field((w1 >> 24) as u16), 1, b.literal);
    op.sdst = (((w1 >> 16) & 0x1f) * 4) as u8;
    op.imm = i64::from(w0 & 0xfff)
        | if bit(t.idxen) {
            super::vmem::IMM_IDXEN
        } else {
            0
        }
        | if bit(t.offen) {
            super::vmem::IMM_OFFEN
        } else {
            0
        };
    if b.mtbuf {
        // MTBUF's FORMAT (bits 25:19), which the typed accesses read at
        // bit 40.
        op.imm |= i64::from((w0 >> 19) & 0x7f) << 40;
    }
    op
}
