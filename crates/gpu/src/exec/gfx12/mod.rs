//! GFX12 (RDNA4: gfx1201) lowering: a decoded [`gfx12::Inst`] becomes an
//! [`Op`] in the form GFX9 and GFX11 use.
//!
//! The encodings GFX12 shares with GFX11 (SOP*, VOP1/VOP2/VOPC, VOP3,
//! VOP3P, VOPD, DS) decode into the gfx11 field structs and are lowered by
//! the gfx11 lowering ([`super::gfx11`]); the GFX12 names of renamed
//! operations are in [`super::gfx11::names`] with GFX11's. GFX12's own
//! layouts are lowered here: SMEM (a signed 24-bit offset, SGPR-pair
//! `sbase`), VFLAT/VGLOBAL/VSCRATCH and VBUFFER (three dwords, a 24-bit
//! offset, th/scope cache policy, `th` bit 0 asking atomics to return the
//! pre-op value). Operations GFX12 defines anew or otherwise have their
//! semantics in [`sem`] (split wait counters, split barriers, 64-bit SALU
//! adds, SALU floats, pseudo-scalar transcendentals, permlane*_var, ...)
//! and [`wmma`] (WMMA and SWMMAC with RDNA4's lane layouts); they replace
//! what the shared lowering found ([`refine`]).
//!
//! VIMAGE/VSAMPLE, VINTERP, VDSDIR and export lower to
//! [`unsupported`]: a wave that reaches one faults naming it.

pub mod sem;
#[cfg(test)]
mod tests;
pub mod wmma;

use super::gfx11::{self, NULL_FIELD, names, new, sdst_f, sdst_src, src_f};
use super::lower::{base_name, unsupported};
use super::op::Op;
use super::wave::Src;
use crate::plugin::class;
use crate::plugin::{Class, Family, Seg};
use rocjitsu_isa::Instruction;
use rocjitsu_isa::gfx12::{Body, Inst, smem, vbuffer, vflat};

/// Lowers a decoded GFX12 instruction. Never fails: an instruction without
/// semantics lowers to [`unsupported`], which faults naming it if a wave
/// reaches it.
pub fn lower(inst: Inst) -> Op {
    let i = Instruction::Gfx12(inst);
    let mut op = match inst.body() {
        Body::Salu(s) => gfx11::lower_salu(i, &s),
        Body::Sopk(k) => gfx11::lower_sopk(i, &k),
        Body::Sopp(p) => gfx11::lower_sopp(i, &p),
        Body::Smem(s) => lower_smem(i, &s),
        Body::Vop(v) => gfx11::lower_vop(i, &v),
        Body::Vop3(v) => gfx11::lower_vop3(i, &v),
        Body::Vop3p(v) => gfx11::lower_vop3p(i, &v),
        Body::Vopd(v) => gfx11::lower_vopd(i, &v),
        Body::Ds(d) => gfx11::lower_ds(i, &d),
        Body::Flat(f) => lower_flat(i, &f),
        Body::Buf(b) => lower_buf(i, &b),
        Body::Image(_) => new(i, unsupported, Class::plain(Family::VmemLoad)),
        Body::Vinterp(_) | Body::Vdsdir(_) | Body::Exp(_) => {
            new(i, unsupported, Class::plain(Family::Other))
        }
    };
    refine(&mut op);
    op
}

/// Replaces the semantic function the shared lowering chose by GFX12's
/// own where GFX12 has one (in VOPD halves too).
fn refine(op: &mut Op) {
    let name = base_name(op.name());
    if let Some(f) = sem::lookup(name).or_else(|| wmma::lookup(name)) {
        op.exec = f;
    }
    if sem::is_scalarized(name) {
        sem::scalarize(op);
    } else if let Some(pair) = op.pair.as_mut() {
        for half in pair.iter_mut() {
            let n = base_name(half.name());
            let n = format!("v_{}", n.trim_start_matches("v_dual_"));
            if let Some(f) = sem::lookup(&n) {
                half.exec = f;
            }
        }
    }
}

/// An SMEM instruction (RDNA4 ISA manual, "SMEM"): sdata, sbase (SGPR
/// pairs), soffset (`null`: none) and a signed 24-bit byte offset.
fn lower_smem(inst: Instruction, s: &smem::Smem) -> Op {
    let name = s.row.name;
    let name9 = names::gfx9_name(name);
    let exec = sem::lookup(name)
        .or_else(|| super::gfx11::sem::lookup(name))
        .or_else(|| super::smem::lookup(&name9))
        .unwrap_or(unsupported);
    let mut op = new(inst, exec, class::smem(&name9));
    // scale_offset (the SGPR offset scaled by the element size) is not
    // modelled: such an instruction faults naming itself.
    if s.scale_offset {
        op.exec = unsupported;
    }
    if s.row.data != 0 && s.row.data != rocjitsu_isa::gfx11::smem::DATA_IMM {
        op.sdst = sdst_f(u16::from(s.sdata), s.row.data);
    }
    if s.row.base != 0 {
        op.src[0] = src_f(u16::from(s.sbase) * 2, s.row.base, None);
    }
    if s.soffset != NULL_FIELD {
        op.src[1] = src_f(u16::from(s.soffset), 1, None);
    }
    op.imm = i64::from(s.offset);
    op
}

/// A VFLAT, VSCRATCH or VGLOBAL instruction (RDNA4 ISA manual, "VFLAT",
/// "VSCRATCH", "VGLOBAL"): saddr 6:0 (`null`: none), seg 25:24; vdst
/// 39:32, sve 49, th 54:52, vsrc 62:55; vaddr 71:64, a signed 24-bit
/// offset 95:72.
fn lower_flat(inst: Instruction, f: &vflat::Flat) -> Op {
    let name9 = names::gfx9_name(f.op.name);
    let (w0, w1, w2) = (f.w0, f.w1, f.w2);
    let seg = f.seg();
    let rtn = (w1 >> 20) & 1 != 0;
    let exec = sem::lookup(f.op.name)
        .or_else(|| super::vmem::select(&name9, rtn, false))
        .unwrap_or(unsupported);
    let cseg = match seg {
        0 => Seg::Flat,
        1 => Seg::Scratch,
        _ => Seg::Global,
    };
    let mut op = new(inst, exec, class::vmem(&name9, cseg));
    // scale_offset (bit 48) is not modelled.
    if (w1 >> 16) & 1 != 0 {
        op.exec = unsupported;
    }
    let saddr = (w0 & 0x7f) as u16;
    let sve = (w1 >> 17) & 1 != 0;
    op.vdst = (w1 & 0xff) as u16;
    op.src[1] = Src::V(((w1 >> 23) & 0xff) as u16);
    op.src[2] = if saddr == u16::from(NULL_FIELD) || seg == 0 {
        Src::None
    } else {
        sdst_src(saddr, if seg == 2 { 2 } else { 1 })
    };
    let uses_vaddr = seg != 1 || sve;
    op.src[0] = if uses_vaddr {
        Src::V((w2 & 0xff) as u16)
    } else {
        Src::None
    };
    op.imm = i64::from(f.offset());
    op
}

/// A VBUFFER instruction (RDNA4 ISA manual, "VBUFFER"): soffset 6:0, tfe
/// 22; vdata 39:32, rsrc 47:41 (the first SGPR of the quad), th 54:52,
/// offen 62, idxen 63; vaddr 71:64, a 24-bit offset 95:72. The typed
/// forms (`tbuffer_*`) and tfe have no semantics yet.
fn lower_buf(inst: Instruction, b: &vbuffer::Buf) -> Op {
    let name = b.op.name;
    let name9 = names::gfx9_name(name);
    let (w0, w1, w2) = (b.w0, b.w1, b.w2);
    let rtn = (w1 >> 20) & 1 != 0;
    let exec = if name.starts_with("tbuffer_") || (w0 >> 22) & 1 != 0 {
        None
    } else {
        sem::lookup(name).or_else(|| super::vmem::select(&name9, rtn, false))
    };
    let mut op = new(
        inst,
        exec.unwrap_or(unsupported),
        class::vmem(&name9, Seg::Buffer),
    );
    op.vdst = (w1 & 0xff) as u16;
    op.src[0] = Src::V((w2 & 0xff) as u16);
    op.src[1] = Src::V(op.vdst);
    op.src[2] = src_f((w0 & 0x7f) as u16, 1, None);
    op.sdst = ((w1 >> 9) & 0x7f) as u8;
    op.imm = i64::from(w2 >> 8)
        | if w1 >> 31 != 0 {
            super::vmem::IMM_IDXEN
        } else {
            0
        }
        | if (w1 >> 30) & 1 != 0 {
            super::vmem::IMM_OFFEN
        } else {
            0
        };
    op
}
