//! Lowering: a decoded [`Inst`] becomes an executable [`Op`] once, on first
//! execution (decoded blocks are cached), with its operands resolved to
//! register-file indices and its semantic function chosen by each
//! family's `lower`. The types live in [`super::op`].

use super::op::{Ctx, Fault, Op};
use super::wave::{AGPR0, HwReg, Src, sreg};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::operand::{Half, Operand, RegFile, Special};

/// The semantic of an instruction without one: a fault naming it.
pub fn unsupported(_: &mut Ctx, op: &Op) -> Result<(), Fault> {
    Err(Fault::Unsupported(op.name()))
}

/// Lowers a decoded GFX9 instruction. Never fails: an instruction whose
/// semantics are missing lowers to [`unsupported`], which faults only if the
/// wave reaches it.
pub fn lower(inst: Inst) -> Op {
    use rocjitsu_isa::gfx9::Body;
    let body = inst.body();
    // gfx908 has no AccVGPR loads or stores: the bit gfx90a reads as `acc`
    // is `tfe` on MUBUF/MTBUF/MIMG (a status dword after the data, which
    // compute compilers never ask for) and names no valid register on DS
    // and FLAT (LLVM prints `a1/*Invalid register*/`). Either way the
    // instruction faults, naming itself, rather than move AGPR data.
    if !inst.target().is_gfx90a_plus() {
        let acc_bit = match &body {
            Body::Ds(d) => d.acc,
            Body::Flat(f) => f.acc,
            Body::Mubuf(b) | Body::Mtbuf(b) => b.acc,
            Body::Mimg(m) => m.acc,
            _ => false,
        };
        if acc_bit {
            return Op::new(inst, unsupported);
        }
    }
    match &body {
        Body::Salu(_) | Body::Sopk(_) | Body::Sopp(_) => super::scalar::lower(inst),
        Body::Smem(_) => super::smem::lower(inst),
        Body::Vop(_) | Body::Vop3(_) => super::valu::lower(inst),
        Body::Vop3p(_) => super::vop3p::lower(inst),
        Body::Ds(_) => super::lds::lower(inst),
        Body::Flat(_) | Body::Mubuf(_) | Body::Mtbuf(_) => super::vmem::lower(inst),
        Body::Mimg(_) => super::mimg::lower(inst),
        // gfx908's graphics interpolation and export: no compute kernel
        // uses them (NOT_EMULATED lists them).
        Body::Vintrp(_) | Body::Exp(_) => Op::new(inst, unsupported),
    }
}

/// The base mnemonic: LLVM's name without the `_e32` / `_e64` / `_sdwa` /
/// `_dpp` encoding suffix.
pub fn base_name(name: &str) -> &str {
    for suf in ["_e32", "_e64", "_sdwa", "_dpp"] {
        if let Some(b) = name.strip_suffix(suf) {
            return b;
        }
    }
    name
}

/// The lowered form of a decoded operand.
pub fn src_of(o: &Operand) -> Src {
    match *o {
        Operand::Reg(r) => match r.file {
            RegFile::Sgpr => Src::S(r.index as u8),
            RegFile::Ttmp => Src::S(sreg::TTMP0 + r.index as u8),
            RegFile::Vgpr => Src::V(r.index),
            RegFile::Agpr => Src::V(AGPR0 + r.index),
        },
        Operand::Special(sp, half) => {
            let hi = u8::from(half == Half::Hi);
            match sp {
                Special::FlatScratch => Src::S(sreg::FLAT_SCRATCH + hi),
                Special::XnackMask => Src::S(sreg::XNACK_MASK + hi),
                Special::Vcc => Src::S(sreg::VCC + hi),
                Special::Exec => Src::S(sreg::EXEC + hi),
                Special::M0 => Src::S(sreg::M0),
                Special::Null => Src::S(sreg::NULL),
                Special::SrcSharedBase => Src::Hw(HwReg::SharedBase),
                Special::SrcSharedLimit => Src::Hw(HwReg::SharedLimit),
                Special::SrcPrivateBase => Src::Hw(HwReg::PrivateBase),
                Special::SrcPrivateLimit => Src::Hw(HwReg::PrivateLimit),
                Special::SrcPopsExitingWaveId => Src::Hw(HwReg::PopsExitingWaveId),
                Special::SrcFlatScratchBase if hi == 1 => Src::Hw(HwReg::FlatScratchBaseHi),
                Special::SrcFlatScratchBase => Src::Hw(HwReg::FlatScratchBaseLo),
                Special::SrcVccz => Src::Hw(HwReg::Vccz),
                Special::SrcExecz => Src::Hw(HwReg::Execz),
                Special::SrcScc => Src::Hw(HwReg::Scc),
                Special::SrcLdsDirect => Src::Hw(HwReg::LdsDirect),
            }
        }
        Operand::InlineInt(i) => Src::Int(i),
        Operand::InlineFloat(f) => Src::Float(f),
        Operand::Literal(x) => Src::Lit(x),
        Operand::Imm(x) => Src::Lit(x as u32),
    }
}

/// The scalar-file index an operand writes (destinations), `null` when it
/// is not a scalar register.
pub fn sdst_of(o: &Operand) -> u8 {
    match src_of(o) {
        Src::S(i) => i,
        _ => sreg::NULL,
    }
}

/// The lowered form of a 9-bit source field (`count` dwords wide).
pub fn src_field(field: u16, count: u8, literal: Option<u32>) -> Src {
    rocjitsu_isa::gfx9::operand::decode_src(field, count, literal).map_or(Src::None, |o| src_of(&o))
}
