//! GFX10 (RDNA1 gfx1010, RDNA2 gfx1030) lowering: a decoded
//! [`gfx10::Inst`] becomes an [`Op`] in the form GFX9, GFX11 and GFX12 use.
//!
//! GFX10's encodings decode into the gfx11 field structs (the decoder's
//! `gfx10` module keeps GFX10's opcodes and field positions in its
//! tables), so most of them are lowered by the gfx11 lowering
//! ([`super::gfx11`]), which reads every scalar field through the
//! instruction's own numbering of m0 and null (GFX10: m0 124, null 125;
//! GFX11 the other way round) and every FLAT and MUBUF field at the
//! family's position (GFX10: FLAT glc 16, seg 15:14, a 12-bit offset;
//! MUBUF offen 12, idxen 13 in the first dword). Semantics shared with
//! GFX11 follow from it: wave32 lane masks in one SGPR (`vcc_lo`,
//! `exec_lo`), `v_cmpx_*` writing EXEC only, 16-bit results keeping the
//! register's other half, DPP16 (`row_share`, `row_xmask`, `fi`) and DPP8.
//!
//! GFX10's own here:
//! * SDWA ([`lower_sdwa`], RDNA ISA manuals, "VOP_SDWA"): source selects
//!   with sign extension, destination selects, neg/abs, clamp and omod;
//!   VOPC's SDWA form writes the SDST named by its `sd` bit, else VCC.
//! * GFX10-only operations whose GFX11 counterparts are named otherwise
//!   ([`sem`]).
//!
//! The workgroup IDs and the private segment arrive in user and system
//! SGPRs as the kernel descriptor enables them (as on GFX9; no
//! architected TTMP IDs), and the work-item IDs in v0, v1 and v2: the
//! dispatch ([`super::dispatch`]) does that from the descriptor.
//!
//! MIMG, VINTRP and export lower to [`unsupported`]: a wave that reaches
//! one faults naming it.

pub mod sem;
#[cfg(test)]
mod tests;

use super::gfx11::{self, is_mac, new, reads_vcc, sdst_f, src_f, writes_carry};
use super::lower::{base_name, unsupported};
use super::op::{Ext, Mods, Op, SdwaSel};
use super::wave::{Src, sreg};
use crate::plugin::{Class, Family};
use rocjitsu_isa::Instruction;
use rocjitsu_isa::gfx10::{Body, Inst};
use rocjitsu_isa::gfx11::vop::{self, Form, Kind, sdwa};

/// Lowers a decoded GFX10 instruction. Never fails: an instruction without
/// semantics lowers to [`unsupported`], which faults naming it if a wave
/// reaches it.
pub fn lower(inst: Inst) -> Op {
    let i = Instruction::Gfx10(inst);
    let mut op = match inst.body() {
        Body::Salu(s) => gfx11::lower_salu(i, &s),
        Body::Sopk(k) => gfx11::lower_sopk(i, &k),
        Body::Sopp(p) => gfx11::lower_sopp(i, &p),
        Body::Smem(s) => gfx11::lower_smem(i, &s),
        Body::Vop(v) => match v.sdwa.filter(|_| v.form() == Form::Sdwa) {
            Some(row) => lower_sdwa(i, &v, row),
            None => gfx11::lower_vop(i, &v),
        },
        Body::Vop3(v) => gfx11::lower_vop3(i, &v),
        Body::Vop3p(v) => gfx11::lower_vop3p(i, &v),
        Body::Ds(d) => gfx11::lower_ds(i, &d),
        Body::Flat(f) => gfx11::lower_flat(i, &f),
        Body::Buf(b) => gfx11::lower_buf(i, &b),
        Body::Mimg(_) => new(i, unsupported, Class::plain(Family::VmemLoad)),
        Body::Vintrp(_) | Body::Exp(_) => new(i, unsupported, Class::plain(Family::Other)),
    };
    if let Some(f) = sem::lookup(base_name(op.name())) {
        op.exec = f;
    }
    op
}

/// A VOP1, VOP2 or VOPC instruction in its SDWA form (src0 field 0xF9;
/// RDNA ISA manuals, "VOP_SDWA"). The SDWA dword: src0 7:0, dst_sel 10:8,
/// dst_unused 12:11, clamp 13, omod 15:14 (VOPC: sdst 14:8 and `sd` 15),
/// src0_sel 18:16, src0_sext 19, src0_neg 20, src0_abs 21, s0 23 (src0 is
/// a scalar or constant), src1_sel 26:24, src1_sext 27, src1_neg 28,
/// src1_abs 29, s1 31.
pub(crate) fn lower_sdwa(inst: Instruction, v: &vop::Vop, s: &sdwa::SdwaRow) -> Op {
    let row = v.row;
    let name = base_name(row.name);
    let mut op = new(inst, gfx11::valu_exec(name), gfx11::valu_class());
    let (w0, w1) = (v.w0, v.w1);
    let bit = |b: u32| w1 >> b & 1 != 0;
    let src = |field: u16, scalar: bool| {
        if scalar {
            src_f(v.sregs.field(field), 1, None)
        } else {
            Src::V(field)
        }
    };
    op.src[0] = src((w1 & 0xff) as u16, bit(23));
    if row.src1.is_some() {
        op.src[1] = src(((w0 >> 9) & 0xff) as u16, bit(31));
    }
    // Sign extension and neg/abs where the opcode takes them (LLVM hides
    // the bits of the others, as their meaning is undefined).
    let shown = |k: u16, b: u32| {
        s.flags & [sdwa::S0_HIDDEN, sdwa::S1_HIDDEN][usize::from(k)] == 0 && bit(b)
    };
    let sext = [shown(0, 19), shown(1, 27)];
    op.mods = Mods {
        neg: u8::from(shown(0, 20)) | u8::from(shown(1, 28)) << 1,
        abs: u8::from(shown(0, 21)) | u8::from(shown(1, 29)) << 1,
        ..Mods::default()
    };
    let (dst_sel, dst_unused) = if row.kind == Kind::Vopc {
        let mask_w = if v.wave64 { 2 } else { 1 };
        op.sdst = if name.starts_with("v_cmpx_") {
            sreg::DISCARD
        } else if bit(15) {
            sdst_f(v.sregs.field(((w1 >> 8) & 0x7f) as u16), mask_w)
        } else {
            sreg::VCC
        };
        (6, 0)
    } else {
        op.vdst = ((w0 >> 17) & 0xff) as u16;
        op.mods.clamp = bit(13);
        op.mods.omod = ((w1 >> 14) & 3) as u8;
        if s.flags & sdwa::NO_DST_SEL != 0 {
            (6, 0)
        } else {
            (((w1 >> 8) & 7) as u8, ((w1 >> 11) & 3) as u8)
        }
    };
    op.ext = Ext::Sdwa(SdwaSel {
        dst_sel,
        dst_unused,
        src_sel: [((w1 >> 16) & 7) as u8, ((w1 >> 24) & 7) as u8],
        sext,
    });
    if reads_vcc(name) {
        op.src[2] = Src::S(sreg::VCC);
    }
    if writes_carry(name) {
        op.sdst = sreg::VCC;
    }
    if is_mac(name) {
        op.src[2] = Src::V(op.vdst);
    }
    op
}
