//! VOP1, VOP2 and VOPC: the 32-bit vector ALU encodings ("e32"), with the
//! literal constant, SDWA and DPP second dwords (ISA manual, "Vector ALU
//! instructions" and "Microcode formats": VOP1, VOP2, VOPC, VOP_SDWA,
//! VOP_DPP).
//!
//! The per-opcode facts (mnemonic, destination kind, source value classes,
//! operand shape) live in the generated [`tables::vop`](super::tables::vop);
//! they are shared with the VOP3 forms of the same opcodes.

use super::operand::{
    Half, Operand, RegFile, Special, ValType, decode_src, encode_src, fmt_inline_float,
    fmt_literal, fmt_plain32, fmt_special,
};
use super::tables::vop as tab;
use crate::{DecodeError, Target};
use std::fmt;

/// Operand-shape flags of a [`VopOp`].
pub mod flags {
    /// The e32 mnemonic has no `_e32` suffix.
    pub const NO_SUFFIX: u8 = 1;
    /// No operands are printed (`v_nop`, `v_clrexcp`); vdst must be 0 and
    /// src0 is ignored.
    pub const NO_OPERANDS: u8 = 2;
    /// Writes a carry-out to `vcc`, printed after the destination.
    pub const CARRY_OUT: u8 = 4;
    /// Reads `vcc` (carry-in or condition mask), printed last.
    pub const VCC_IN: u8 = 8;
    /// `v_madmk`/`v_fmamk`: a 32-bit constant K between src0 and vsrc1.
    pub const MADMK: u8 = 16;
    /// `v_madak`/`v_fmaak`: a 32-bit constant K after vsrc1.
    pub const MADAK: u8 = 32;
    /// src0's VGPR field names an AGPR.
    pub const SRC0_AGPR: u8 = 64;
}
use flags::*;

/// The value class of a source operand: how LLVM prints its constants and
/// which register files it accepts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cls {
    /// No such operand.
    None,
    /// 32-bit integer or float.
    B32,
    F16,
    I16,
    /// Packed pair of halves.
    V2F16,
    BF16,
    /// Packed pair of bf16.
    V2BF16,
    /// 64-bit float (a literal is the high dword).
    F64,
    /// 64-bit integer (a literal is zero-extended).
    B64,
    /// VGPR only (`VGPR_32`).
    V32,
    /// VGPR or `src_lds_direct` only (`VRegOrLds_32`).
    VL32,
    /// AGPR only (`AGPR_32`).
    A32,
}

impl Cls {
    /// Width in dwords.
    pub fn dwords(self) -> u8 {
        match self {
            Cls::F64 | Cls::B64 => 2,
            _ => 1,
        }
    }

    /// The value type used for printing constants.
    pub fn val_type(self) -> ValType {
        match self {
            Cls::F16 => ValType::F16,
            Cls::I16 => ValType::I16,
            Cls::V2F16 => ValType::V2F16,
            Cls::BF16 => ValType::BF16,
            Cls::V2BF16 => ValType::V2BF16,
            Cls::F64 => ValType::F64,
            Cls::B64 => ValType::I64,
            _ => ValType::I32,
        }
    }

    /// The register class LLVM names when an operand of this class holds
    /// something it cannot.
    fn reg_class(self) -> &'static str {
        match self {
            Cls::VL32 => "VRegOrLds_32",
            Cls::A32 => "AGPR_32",
            _ => "VGPR_32",
        }
    }

    fn vgpr_only(self) -> bool {
        matches!(self, Cls::V32 | Cls::VL32 | Cls::A32)
    }
}

/// The destination of an e32 instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dst {
    None,
    V32,
    V64,
    /// An SGPR (`v_readfirstlane_b32`).
    S32,
    A32,
    /// VOPC: `vcc` (e32) or an SGPR pair (SDWA).
    Vcc,
}

/// One opcode's meaning: names and operand kinds.
#[derive(Debug, PartialEq, Eq)]
pub struct VopOp {
    /// Base mnemonic (`v_add_f32`).
    pub name: &'static str,
    pub e32: &'static str,
    pub sdwa: &'static str,
    pub dpp: &'static str,
    pub dst: Dst,
    pub src0: Cls,
    /// vsrc1 (VOP2, VOPC); `None` for VOP1.
    pub src1: Cls,
    pub flags: u8,
}

impl VopOp {
    fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Which of the three 32-bit encodings.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum VopKind {
    Vop1,
    Vop2,
    Vopc,
}

/// What follows the first dword.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ext {
    /// Nothing: a 4-byte instruction.
    None,
    /// A literal constant dword (src0 = 255, or the K of madmk/madak).
    Literal(u32),
}

/// A VOP1 / VOP2 / VOPC instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Vop {
    pub kind: VopKind,
    pub op: u8,
    pub info: &'static VopOp,
    /// Destination (`Reg`); `vcc` for VOPC; `None` when there is none.
    pub dst: Option<Operand>,
    pub src0: Operand,
    /// vsrc1 (a VGPR), for VOP2 and VOPC.
    pub src1: Option<Operand>,
    pub ext: Ext,
    /// Field bits that have no operand (src0 of `v_nop`), kept for re-encoding.
    pub unused: u16,
}

/// The targets' positions in the generated tables.
fn tix(t: Target) -> usize {
    match t {
        Target::Gfx90a => 0,
        Target::Gfx942 => 1,
        Target::Gfx950 => 2,
    }
}

/// Decodes a VOP1, VOP2 or VOPC instruction whose first dword is `w0`.
pub fn decode(
    target: Target,
    kind: VopKind,
    w0: u32,
    bytes: &[u8],
) -> Result<(Vop, u8), DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let t = tix(target);
    let (op, row) = match kind {
        VopKind::Vop2 => {
            let op = (w0 >> 25) & 0x3f;
            (op, tab::VOP2[t].get(op as usize).copied())
        }
        VopKind::Vop1 => {
            let op = (w0 >> 9) & 0xff;
            (op, tab::VOP1[t].get(op as usize).copied())
        }
        VopKind::Vopc => {
            let op = (w0 >> 17) & 0xff;
            (op, tab::VOPC[t].get(op as usize).copied())
        }
    };
    let row = row.filter(|&r| r != tab::NONE).ok_or(invalid.clone())?;
    let info = tab::OPS.get(usize::from(row)).ok_or(invalid.clone())?;
    let src0f = (w0 & 0x1ff) as u16;
    let vsrc1 = ((w0 >> 9) & 0xff) as u16;
    let vdst = ((w0 >> 17) & 0xff) as u16;
    if info.has(NO_OPERANDS) {
        if vdst != 0 {
            return Err(invalid);
        }
        let v = Vop {
            kind,
            op: op as u8,
            info,
            dst: None,
            src0: Operand::Imm(0),
            src1: None,
            ext: Ext::None,
            unused: src0f,
        };
        return Ok((v, 4));
    }
    let need_lit = src0f == 255 || info.has(MADMK | MADAK) || (info.dst == Dst::S32 && vdst == 255);
    let lit = if need_lit {
        Some(super::word(bytes, 1)?)
    } else {
        None
    };
    if src0f == 0xf9 || src0f == 0xfa {
        return Err(invalid);
    }
    let src0 = decode_src0(info.src0, src0f, lit).ok_or(invalid.clone())?;
    let dst = match kind {
        VopKind::Vopc => Some(Operand::Special(Special::Vcc, Half::Full)),
        _ => Some(decode_dst(info.dst, vdst, lit).ok_or(invalid.clone())?),
    };
    let src1 = match kind {
        VopKind::Vop1 => None,
        _ => Some(Operand::Reg(super::operand::Reg::new(
            RegFile::Vgpr,
            vsrc1,
            info.src1.dwords(),
        ))),
    };
    let ext = lit.map_or(Ext::None, Ext::Literal);
    let len = if need_lit { 8 } else { 4 };
    Ok((
        Vop {
            kind,
            op: op as u8,
            info,
            dst,
            src0,
            src1,
            ext,
            unused: 0,
        },
        len,
    ))
}

/// Decodes the 9-bit src0 field for an operand of class `cls`.
fn decode_src0(cls: Cls, field: u16, lit: Option<u32>) -> Option<Operand> {
    if cls == Cls::A32 && field >= 256 {
        return Some(Operand::Reg(super::operand::Reg::new(
            RegFile::Agpr,
            field - 256,
            1,
        )));
    }
    decode_src(field, cls.dwords(), lit)
}

/// Decodes the 8-bit vdst field.
fn decode_dst(d: Dst, field: u16, lit: Option<u32>) -> Option<Operand> {
    use super::operand::Reg;
    Some(match d {
        Dst::V32 | Dst::None | Dst::Vcc => Operand::Reg(Reg::new(RegFile::Vgpr, field, 1)),
        Dst::V64 => Operand::Reg(Reg::new(RegFile::Vgpr, field, 2)),
        Dst::A32 => Operand::Reg(Reg::new(RegFile::Agpr, field, 1)),
        Dst::S32 => return decode_src(field, 1, lit),
    })
}

/// The 8-bit field that encodes a destination or vsrc1 operand.
fn field8(op: &Operand) -> u32 {
    match op {
        Operand::Reg(r) if matches!(r.file, RegFile::Vgpr | RegFile::Agpr) => {
            u32::from(r.index) & 0xff
        }
        other => u32::from(encode_src(other)) & 0xff,
    }
}

/// The 9-bit field that encodes src0.
fn field9(op: &Operand) -> u32 {
    u32::from(encode_src(op)) & 0x1ff
}

impl Vop {
    /// Size in bytes.
    pub fn len(&self) -> u8 {
        match self.ext {
            Ext::None => 4,
            Ext::Literal(_) => 8,
        }
    }

    /// LLVM's mnemonic, with the encoding suffix it prints.
    pub fn mnemonic(&self) -> &'static str {
        if self.info.has(NO_SUFFIX) {
            self.info.name
        } else {
            self.info.e32
        }
    }

    /// Writes the instruction's bytes.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let src0 = if self.info.has(NO_OPERANDS) {
            u32::from(self.unused) & 0x1ff
        } else {
            field9(&self.src0)
        };
        let dst = self.dst.as_ref().map_or(0, field8);
        let src1 = self.src1.as_ref().map_or(0, field8);
        let op = u32::from(self.op);
        let w0 = match self.kind {
            VopKind::Vop2 => (op << 25) | (dst << 17) | (src1 << 9) | src0,
            VopKind::Vop1 => (0x3f << 25) | (dst << 17) | (op << 9) | src0,
            VopKind::Vopc => (0x3e << 25) | (op << 17) | (src1 << 9) | src0,
        };
        out.extend_from_slice(&w0.to_le_bytes());
        if let Ext::Literal(v) = self.ext {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// A warning LLVM appends to the line (`; Warning: SGPR_64: ...`).
#[derive(Default)]
struct Warn(Option<(&'static str, u16)>);

/// Writes a register operand of `count` dwords. Misaligned 64-bit register
/// pairs are printed as LLVM does: VGPRs with an invalid-register comment
/// naming `class64`, SGPR/TTMP pairs aligned down with a trailing warning.
fn fmt_reg(
    f: &mut fmt::Formatter<'_>,
    r: super::operand::Reg,
    class64: &str,
    warn: &mut Warn,
) -> fmt::Result {
    if r.count == 2 && r.index % 2 == 1 {
        match r.file {
            RegFile::Sgpr | RegFile::Ttmp => {
                let p = if r.file == RegFile::Sgpr { "s" } else { "ttmp" };
                warn.0 = Some((
                    if r.file == RegFile::Sgpr {
                        "SGPR_64"
                    } else {
                        "TTMP_64"
                    },
                    r.index,
                ));
                return write!(f, "{p}[{}:{}]", r.index - 1, r.index);
            }
            _ => {
                write!(f, "{r}")?;
                return write!(
                    f,
                    "/*Invalid register, operand has '{class64}' register class*/"
                );
            }
        }
    }
    write!(f, "{r}")
}

/// Writes a source operand of class `cls`.
fn fmt_src(f: &mut fmt::Formatter<'_>, op: &Operand, cls: Cls, warn: &mut Warn) -> fmt::Result {
    let ty = cls.val_type();
    if cls.vgpr_only() {
        let ok = matches!(op, Operand::Reg(r) if matches!(r.file, RegFile::Vgpr | RegFile::Agpr))
            || (cls == Cls::VL32 && *op == Operand::Special(Special::SrcLdsDirect, Half::Full));
        match op {
            Operand::Reg(r) if ok => return write!(f, "{r}"),
            Operand::Special(Special::SrcLdsDirect, _) if ok => {
                return f.write_str("src_lds_direct");
            }
            Operand::Special(sp, h) if is_src_constant_reg(*sp) => return fmt_special(f, *sp, *h),
            Operand::InlineInt(v) => write!(f, "{v}")?,
            Operand::InlineFloat(c) => fmt_inline_float(f, *c, ValType::I32)?,
            Operand::Literal(v) => fmt_plain32(f, *v)?,
            Operand::Imm(v) => write!(f, "{v}")?,
            Operand::Reg(r) => {
                write!(f, "{r}")?;
                return write!(
                    f,
                    "/*Invalid register, operand has '{}' register class*/",
                    cls.reg_class()
                );
            }
            Operand::Special(sp, h) => {
                fmt_special(f, *sp, *h)?;
                return write!(
                    f,
                    "/*Invalid register, operand has '{}' register class*/",
                    cls.reg_class()
                );
            }
        }
        return f.write_str("/*Invalid immediate*/");
    }
    match op {
        Operand::Reg(r) => fmt_reg(f, *r, "VS_64_Align2", warn),
        Operand::Special(sp, h) => fmt_special(f, *sp, *h),
        Operand::InlineInt(v) => write!(f, "{v}"),
        Operand::InlineFloat(c) => fmt_inline_float(f, *c, ty),
        Operand::Literal(v) => fmt_literal(f, *v, ty),
        Operand::Imm(v) => write!(f, "{v}"),
    }
}

/// The `src_*` hardware registers (apertures, `src_vccz`, ...), which LLVM
/// accepts in any source operand class.
fn is_src_constant_reg(sp: Special) -> bool {
    !matches!(
        sp,
        Special::FlatScratch
            | Special::XnackMask
            | Special::Vcc
            | Special::Exec
            | Special::M0
            | Special::Null
            | Special::SrcLdsDirect
    )
}

/// Writes the SGPR destination of `v_readfirstlane_b32` (class
/// `SReg_32_XM0`).
fn fmt_sdst(f: &mut fmt::Formatter<'_>, op: &Operand) -> fmt::Result {
    match op {
        Operand::Reg(r) => write!(f, "{r}"),
        Operand::Special(sp, h) => {
            fmt_special(f, *sp, *h)?;
            if matches!(sp, Special::M0 | Special::SrcLdsDirect) {
                f.write_str("/*Invalid register, operand has 'SReg_32_XM0' register class*/")?;
            }
            Ok(())
        }
        Operand::InlineInt(v) => write!(f, "{v}/*Invalid immediate*/"),
        Operand::InlineFloat(c) => {
            fmt_inline_float(f, *c, ValType::I32)?;
            f.write_str("/*Invalid immediate*/")
        }
        Operand::Literal(v) => {
            fmt_plain32(f, *v)?;
            f.write_str("/*Invalid immediate*/")
        }
        Operand::Imm(v) => write!(f, "{v}"),
    }
}

/// Writes a destination or vsrc1 operand.
fn fmt_vreg(f: &mut fmt::Formatter<'_>, op: &Operand, warn: &mut Warn) -> fmt::Result {
    match op {
        Operand::Reg(r) => fmt_reg(f, *r, "VReg_64_Align2", warn),
        Operand::Special(sp, h) => fmt_special(f, *sp, *h),
        other => write!(f, "{other}"),
    }
}

impl fmt::Display for Vop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let info = self.info;
        f.write_str(self.mnemonic())?;
        if info.has(NO_OPERANDS) {
            return Ok(());
        }
        let mut warn = Warn::default();
        f.write_str(" ")?;
        if let Some(d) = &self.dst {
            if info.dst == Dst::S32 {
                fmt_sdst(f, d)?;
            } else {
                fmt_vreg(f, d, &mut warn)?;
            }
            f.write_str(", ")?;
        }
        if info.has(CARRY_OUT) {
            f.write_str("vcc, ")?;
        }
        fmt_src(f, &self.src0, info.src0, &mut warn)?;
        let k = match self.ext {
            Ext::Literal(v) => v,
            Ext::None => 0,
        };
        if info.has(MADMK) {
            write!(f, ", 0x{k:x}")?;
        }
        if let Some(s1) = &self.src1 {
            f.write_str(", ")?;
            fmt_vreg(f, s1, &mut warn)?;
        }
        if info.has(MADAK) {
            write!(f, ", 0x{k:x}")?;
        }
        if info.has(VCC_IN) {
            f.write_str(", vcc")?;
        }
        if let Some((class, idx)) = warn.0 {
            write!(f, " ; Warning: {class}: scalar reg isn't aligned {idx}")?;
        }
        Ok(())
    }
}
