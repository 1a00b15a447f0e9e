//! The GFX11 scalar ALU encodings: SOP2, SOP1, SOPC (register and constant
//! operands, optional 32-bit literal), SOPK (16-bit immediate) and SOPP
//! (program control). Field layouts follow the RDNA3 ISA manual's
//! "Microcode formats" chapter; opcode tables are generated from LLVM 22
//! (`tables/sop.rs`). GFX12 shares the layouts: its module decodes with its
//! own [`SopTables`] through the functions here.

use super::operand::{Operand, Special, Sregs, ValType, fmt_inline_float, fmt_literal};
use super::tables::sop as tab;
use crate::gfx9::sop::{Field, Warnings, fmt_imm32, fmt_invalid_imm, fmt_sop};
use crate::{DecodeError, Target};
use std::fmt;

pub use crate::gfx9::sop::AluForm;

/// One SOP1/SOP2/SOPC opcode: operand widths in dwords (0: the field is not
/// an operand) and [`alu_flags`].
#[derive(Debug, PartialEq, Eq)]
pub struct AluRow {
    pub op: u8,
    pub name: &'static str,
    pub dst: u8,
    pub src0: u8,
    pub src1: u8,
    pub flags: u16,
    /// Bit 0 gfx1100, bit 1 gfx1151 (GFX12's tables: bit 0 gfx1201).
    pub targets: u8,
}

/// [`AluRow::flags`] bits.
pub mod alu_flags {
    /// src0 takes registers only; LLVM notes constants as invalid.
    pub const REG_ONLY: u16 = 1;
    /// src0 is an 8-bit `sendmsg(...)` immediate (`s_sendmsg_rtn_*`).
    pub const SENDMSG: u16 = 2;
    /// A field that is not an operand must be zero.
    pub const ZERO_UNUSED: u16 = 4;
    /// src0 reads a 16-bit float (a literal prints its low half).
    pub const SRC0_F16: u16 = 8;
    /// src1 reads a 16-bit float.
    pub const SRC1_F16: u16 = 16;
    /// A literal constant K follows src1 (`s_fmaak_f32`).
    pub const K_LAST: u16 = 32;
    /// A literal constant K sits between src0 and src1 (`s_fmamk_f32`).
    pub const K_MIDDLE: u16 = 64;
    /// The sources are typed as 16-bit integers (`s_cmp_*_f16`): inline
    /// floats print as f16 bit patterns, a literal as its low half.
    pub const SRC_I16: u16 = 128;
    /// src0 names `src_lds_direct` without the register-class note (GFX12's
    /// barrier opcodes).
    pub const LDS_DIRECT: u16 = 256;
}
use alu_flags as af;

/// One SOPK opcode.
#[derive(Debug, PartialEq, Eq)]
pub struct KRow {
    pub op: u8,
    pub name: &'static str,
    pub kind: SopkKind,
    /// LLVM rejects a non-zero sdst field (it is not an operand).
    pub sdst_zero: bool,
    pub targets: u8,
}

/// How a SOPK opcode uses its `sdst` and `simm16` fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SopkKind {
    /// `sdst, 0xIMM`.
    Imm,
    /// `s_version`: the immediate alone, as a symbolic version expression.
    Version,
    /// `sdst, hwreg(...)`.
    GetReg,
    /// `hwreg(...), sdst` (sdst is the source).
    SetReg,
    /// `hwreg(...), imm32` with a trailing 32-bit immediate.
    SetRegImm32,
    /// `s[n:n+1], OFFSET`: `s_call_b64`.
    Branch64,
    /// `sdst, OFFSET` in decimal: `s_subvector_loop_begin/end`.
    Dec,
}

/// One SOPP opcode.
#[derive(Debug, PartialEq, Eq)]
pub struct PRow {
    pub op: u8,
    pub name: &'static str,
    pub kind: SoppKind,
    pub targets: u8,
}

/// How a SOPP opcode prints its `simm16` field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SoppKind {
    /// No operand; LLVM rejects a non-zero immediate.
    NoImm,
    /// Printed only when non-zero, in decimal (`s_endpgm`).
    OptionalImm,
    /// Decimal up to 64, hex above.
    Imm,
    /// Always hex (`s_clause 0x0`).
    Hex,
    /// Branch offset in dwords, printed as the raw unsigned field.
    Branch,
    /// `vmcnt(..) expcnt(..) lgkmcnt(..)`.
    Waitcnt,
    /// `depctr_*(..)` fields of `s_waitcnt_depctr`.
    DepCtr,
    /// `instid0(..) | instskip(..) | instid1(..)` of `s_delay_alu`.
    DelayAlu,
    /// `sendmsg(...)`.
    Sendmsg,
}

/// A SOP1, SOP2 or SOPC instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Salu {
    pub form: AluForm,
    pub row: &'static AluRow,
    pub sdst: Field,
    pub src0: Field,
    pub src1: Field,
    /// The literal constant K of `s_fmaak_f32` / `s_fmamk_f32`.
    pub k: Option<u32>,
    /// The family's symbolic `sendmsg` names (`s_sendmsg_rtn_*`).
    pub sendmsg: &'static [(u8, &'static str, u8)],
    /// The family's numbering of m0 and null.
    pub sregs: Sregs,
}

/// A SOPK instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Sopk {
    pub row: &'static KRow,
    /// The raw sdst field (bits 22:16).
    pub sdst_bits: u8,
    pub simm16: u16,
    /// The trailing dword of `s_setreg_imm32_b32`.
    pub imm32: Option<u32>,
    /// The family's symbolic `hwreg` names.
    pub hwreg: &'static [(u8, &'static str, u8)],
    /// The family's numbering of m0 and null.
    pub sregs: Sregs,
}

/// A SOPP instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Sopp {
    pub row: &'static PRow,
    pub simm16: u16,
    /// The family's symbolic `sendmsg` names.
    pub sendmsg: &'static [(u8, &'static str, u8)],
    /// GFX10: the `sendmsg(...)` texts of the target (see
    /// [`SopTables::sendmsg_text`]).
    pub sendmsg_text: Option<&'static [&'static str; 512]>,
    /// The family's `s_waitcnt` layout (see [`SopTables::waitcnt`]).
    pub waitcnt: &'static [(u8, u8); 16],
    /// The target's `s_waitcnt_depctr` has `depctr_hold_cnt`.
    pub hold_cnt: bool,
}

/// One family's scalar ALU opcode tables (a generated `tables/sop.rs`) with
/// their opcode-to-row maps; built by [`sop_tables!`].
pub struct SopTables {
    pub sop2: &'static [AluRow],
    pub sop1: &'static [AluRow],
    pub sopc: &'static [AluRow],
    pub sopk: &'static [KRow],
    pub sopp: &'static [PRow],
    /// Symbolic `hwreg` names: (id, name, targets).
    pub hwreg: &'static [(u8, &'static str, u8)],
    /// Symbolic `sendmsg` names: (id, name, targets).
    pub sendmsg: &'static [(u8, &'static str, u8)],
    /// GFX10's `sendmsg(...)` text per target index for each immediate
    /// whose set bits are in the message, operation and stream fields,
    /// indexed by `stream << 7 | op << 4 | msg` (empty: the decimal
    /// immediate); empty for GFX11 and GFX12, which name messages by id.
    pub sendmsg_text: &'static [[&'static str; 512]],
    /// `s_waitcnt`'s immediate: (counter, bit) per bit, counter 0 vmcnt,
    /// 1 expcnt, 2 lgkmcnt, 3 none.
    pub waitcnt: &'static [(u8, u8); 16],
    /// Target mask of the targets whose `s_waitcnt_depctr` (GFX12:
    /// `s_wait_alu`) has `depctr_hold_cnt`.
    pub depctr_hold: u8,
    /// The family's numbering of m0 and null.
    pub sregs: Sregs,
    /// Row index per opcode (0xff: none).
    pub sop2_idx: [u8; 128],
    pub sop1_idx: [u8; 256],
    pub sopc_idx: [u8; 128],
    pub sopk_idx: [u8; 32],
    pub sopp_idx: [u8; 128],
}

/// Maps opcodes to row indices at compile time (0xff: no row).
macro_rules! ops_of {
    ($rows:expr, $n:expr) => {{
        let mut t = [0xffu8; $n];
        let mut i = 0;
        while i < $rows.len() {
            t[$rows[i].op as usize] = i as u8;
            i += 1;
        }
        t
    }};
}
pub(crate) use ops_of;

/// The [`SopTables`] of a generated `tables/sop.rs` module.
macro_rules! sop_tables {
    ($tab:ident) => {
        $crate::gfx11::sop::sop_tables!($tab, Gfx11)
    };
    ($tab:ident, $sregs:ident) => {
        $crate::gfx11::sop::SopTables {
            sregs: $crate::gfx11::operand::Sregs::$sregs,
            sop2: $tab::SOP2,
            sop1: $tab::SOP1,
            sopc: $tab::SOPC,
            sopk: $tab::SOPK,
            sopp: $tab::SOPP,
            hwreg: $tab::HWREG,
            sendmsg: $tab::SENDMSG,
            sendmsg_text: $tab::SENDMSG_TEXT,
            waitcnt: &$tab::WAITCNT,
            depctr_hold: $tab::DEPCTR_HOLD_CNT,
            sop2_idx: $crate::gfx11::sop::ops_of!($tab::SOP2, 128),
            sop1_idx: $crate::gfx11::sop::ops_of!($tab::SOP1, 256),
            sopc_idx: $crate::gfx11::sop::ops_of!($tab::SOPC, 128),
            sopk_idx: $crate::gfx11::sop::ops_of!($tab::SOPK, 32),
            sopp_idx: $crate::gfx11::sop::ops_of!($tab::SOPP, 128),
        }
    };
}
pub(crate) use sop_tables;

/// GFX11's tables.
pub static TABLES: SopTables = sop_tables!(tab);

/// What a scalar decoder found: the opcode's row, the size in bytes and the
/// dwords, for the family's `Inst`.
pub(crate) type Raw = (u16, u8, [u32; 4]);

fn rows(t: &'static SopTables, form: AluForm) -> &'static [AluRow] {
    match form {
        AluForm::Sop2 => t.sop2,
        AluForm::Sop1 => t.sop1,
        AluForm::Sopc => t.sopc,
    }
}

/// The opcode, sdst, ssrc0 and ssrc1 fields of a word of `form` (0 for a
/// field the form lacks).
#[inline(always)]
fn fields(form: AluForm, w0: u32) -> (usize, u8, u8, u8) {
    let (d, s0, s1) = ((w0 >> 16) as u8 & 0x7f, w0 as u8, (w0 >> 8) as u8);
    match form {
        AluForm::Sop2 => (((w0 >> 23) & 0x7f) as usize, d, s0, s1),
        AluForm::Sop1 => (((w0 >> 8) & 0xff) as usize, d, s0, 0),
        AluForm::Sopc => (((w0 >> 16) & 0x7f) as usize, 0, s0, s1),
    }
}

fn row_of(t: &'static SopTables, form: AluForm, op: usize) -> Option<usize> {
    let idx: &[u8] = match form {
        AluForm::Sop2 => &t.sop2_idx,
        AluForm::Sop1 => &t.sop1_idx,
        AluForm::Sopc => &t.sopc_idx,
    };
    idx.get(op).copied().filter(|&r| r != 0xff).map(usize::from)
}

/// Whether a source field names an operand read from the literal dword.
fn reads_literal(v: u8, width: u8, flags: u16, is_src0: bool) -> bool {
    v == 255 && width != 0 && !(is_src0 && flags & af::SENDMSG != 0)
}

impl Salu {
    /// Decodes a SOP1, SOP2 or SOPC word (and its literal).
    #[inline(always)]
    pub(crate) fn decode(
        t: &'static SopTables,
        target: Target,
        form: AluForm,
        w0: u32,
        bytes: &[u8],
    ) -> Result<Raw, DecodeError> {
        let invalid = DecodeError::Invalid { target, word: w0 };
        let (op, d, s0, s1) = fields(form, w0);
        let r = row_of(t, form, op).ok_or(invalid.clone())?;
        let row = &rows(t, form)[r];
        if row.targets & target.bit() == 0 {
            return Err(invalid);
        }
        let lit = reads_literal(s0, row.src0, row.flags, true)
            || reads_literal(s1, row.src1, row.flags, false)
            || row.flags & (af::K_LAST | af::K_MIDDLE) != 0;
        let w1 = if lit { crate::gfx9::word(bytes, 1)? } else { 0 };
        if row.dst != 0 && t.sregs.decode_sreg(u16::from(d), row.dst).is_none() {
            return Err(invalid);
        }
        for (v, width, is0) in [(s0, row.src0, true), (s1, row.src1, false)] {
            if width == 0 || (is0 && row.flags & af::SENDMSG != 0) {
                continue;
            }
            if t.sregs.decode_src(u16::from(v), width, Some(0)).is_none() {
                return Err(invalid);
            }
        }
        if row.flags & af::ZERO_UNUSED != 0 {
            let unused = (row.dst == 0 && form != AluForm::Sopc && d != 0)
                || (row.src0 == 0 && s0 != 0)
                || (row.src1 == 0 && form != AluForm::Sop1 && s1 != 0);
            if unused {
                return Err(invalid);
            }
        }
        let len = if lit { 8 } else { 4 };
        Ok((r as u16, len, [w0, w1, 0, 0]))
    }

    /// The fields of an instruction whose opcode is row `r` of `form`'s table.
    pub(crate) fn from_raw(
        t: &'static SopTables,
        form: AluForm,
        r: usize,
        len: u8,
        w0: u32,
        w1: u32,
    ) -> Salu {
        let row = &rows(t, form)[r];
        let (_, d, s0, s1) = fields(form, w0);
        let lit = (len == 8).then_some(w1);
        let field = |v: u8, width: u8, sendmsg: bool| -> Field {
            if width == 0 {
                Field::Unused(v)
            } else if sendmsg {
                Field::Op(Operand::Imm(i64::from(v)))
            } else {
                t.sregs
                    .decode_src(u16::from(v), width, lit)
                    .map_or(Field::Unused(v), Field::Op)
            }
        };
        let sdst = if row.dst == 0 {
            Field::Unused(d)
        } else {
            t.sregs
                .decode_sreg(u16::from(d), row.dst)
                .map_or(Field::Unused(d), Field::Op)
        };
        Salu {
            form,
            row,
            sdst,
            src0: field(s0, row.src0, row.flags & af::SENDMSG != 0),
            src1: field(s1, row.src1, false),
            k: lit.filter(|_| row.flags & (af::K_LAST | af::K_MIDDLE) != 0),
            sendmsg: t.sendmsg,
            sregs: t.sregs,
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let bits = |f: &Field| -> u32 {
            match f {
                Field::Unused(v) => u32::from(*v),
                Field::Op(Operand::Imm(v)) => (*v as u32) & 0xff,
                Field::Op(op) => u32::from(self.sregs.encode_src(op) & 0xff),
            }
        };
        let op = u32::from(self.row.op);
        let (d, s0, s1) = (bits(&self.sdst), bits(&self.src0), bits(&self.src1));
        let w = match self.form {
            AluForm::Sop2 => 0x8000_0000 | op << 23 | d << 16 | s1 << 8 | s0,
            AluForm::Sop1 => 0xbe80_0000 | d << 16 | op << 8 | s0,
            AluForm::Sopc => 0xbf00_0000 | op << 16 | s1 << 8 | s0,
        };
        out.extend_from_slice(&w.to_le_bytes());
        let lit = |f: &Field| match f {
            Field::Op(Operand::Literal(v)) => Some(*v),
            _ => None,
        };
        if let Some(l) = self.k.or(lit(&self.src0)).or(lit(&self.src1)) {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }
}

/// Writes a scalar source of `width` dwords read as `ty` (16-bit types
/// print their constants as LLVM prints them for that type).
fn fmt_ssrc(
    f: &mut fmt::Formatter<'_>,
    op: &Operand,
    width: u8,
    ty: ValType,
    w: &mut Warnings,
) -> fmt::Result {
    match (op, ty) {
        (Operand::Literal(v), ValType::F16 | ValType::I16) => fmt_literal(f, *v, ty),
        (Operand::InlineFloat(c), ValType::I16) => fmt_inline_float(f, *c, ty),
        _ => fmt_sop(f, op, width, w),
    }
}

/// The value type of source `i` (0 or 1) of a row.
fn src_type(flags: u16, i: usize) -> ValType {
    if flags & af::SRC_I16 != 0 {
        ValType::I16
    } else if flags & [af::SRC0_F16, af::SRC1_F16][i] != 0 {
        ValType::F16
    } else {
        ValType::I32
    }
}

impl fmt::Display for Salu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.row.name)?;
        let mut warn = Warnings::default();
        let row = self.row;
        let mut sep = " ";
        if let Field::Op(op) = &self.sdst {
            f.write_str(sep)?;
            sep = ", ";
            fmt_sop(f, op, row.dst, &mut warn)?;
        }
        if let Field::Op(op) = &self.src0 {
            f.write_str(sep)?;
            sep = ", ";
            match op {
                Operand::Imm(v) if row.flags & af::SENDMSG != 0 => {
                    fmt_sendmsg(f, self.sendmsg, *v as u16)?
                }
                Operand::Special(Special::SrcLdsDirect, _) if row.flags & af::LDS_DIRECT != 0 => {
                    f.write_str("src_lds_direct")?
                }
                Operand::InlineInt(_) | Operand::InlineFloat(_) | Operand::Literal(_)
                    if row.flags & af::REG_ONLY != 0 =>
                {
                    fmt_invalid_imm(f, op, &mut warn)?
                }
                _ => fmt_ssrc(f, op, row.src0, src_type(row.flags, 0), &mut warn)?,
            }
        }
        if row.flags & af::K_MIDDLE != 0 {
            write!(f, "{sep}0x{:x}", self.k.unwrap_or(0))?;
        }
        if let Field::Op(op) = &self.src1 {
            f.write_str(sep)?;
            fmt_ssrc(f, op, row.src1, src_type(row.flags, 1), &mut warn)?;
        }
        if row.flags & af::K_LAST != 0 {
            write!(f, ", 0x{:x}", self.k.unwrap_or(0))?;
        }
        warn.write(f)
    }
}

/// `pc + 4 + 4 * simm16` (sign-extended), the destination of a 4-byte branch.
fn branch_dest(pc: u64, simm16: u16) -> u64 {
    pc.wrapping_add(4)
        .wrapping_add_signed(i64::from(simm16 as i16) * 4)
}

/// The width in dwords of a SOPK sdst operand (0: the field is unused).
fn sdst_width(kind: SopkKind) -> u8 {
    match kind {
        SopkKind::Branch64 => 2,
        SopkKind::SetRegImm32 | SopkKind::Version => 0,
        _ => 1,
    }
}

impl Sopk {
    #[inline(always)]
    pub(crate) fn decode(
        t: &'static SopTables,
        target: Target,
        w0: u32,
        bytes: &[u8],
    ) -> Result<Raw, DecodeError> {
        let invalid = DecodeError::Invalid { target, word: w0 };
        let r = t.sopk_idx[((w0 >> 23) & 0x1f) as usize];
        let row = t.sopk.get(usize::from(r)).ok_or(invalid.clone())?;
        if row.targets & target.bit() == 0 {
            return Err(invalid);
        }
        let d = ((w0 >> 16) & 0x7f) as u16;
        let width = sdst_width(row.kind);
        if width != 0 && t.sregs.decode_sreg(d, width).is_none() || row.sdst_zero && d != 0 {
            return Err(invalid);
        }
        let (w1, len) = match row.kind {
            SopkKind::SetRegImm32 => (crate::gfx9::word(bytes, 1)?, 8),
            _ => (0, 4),
        };
        Ok((u16::from(r), len, [w0, w1, 0, 0]))
    }

    pub(crate) fn from_raw(t: &'static SopTables, r: usize, len: u8, w0: u32, w1: u32) -> Sopk {
        Sopk {
            row: &t.sopk[r],
            hwreg: t.hwreg,
            sregs: t.sregs,
            sdst_bits: (w0 >> 16) as u8 & 0x7f,
            simm16: w0 as u16,
            imm32: (len == 8).then_some(w1),
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    /// The sdst operand, if the opcode has one.
    pub fn sdst(&self) -> Option<Operand> {
        match sdst_width(self.row.kind) {
            0 => None,
            w => self.sregs.decode_sreg(u16::from(self.sdst_bits), w),
        }
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let w = 0xb000_0000
            | u32::from(self.row.op) << 23
            | u32::from(self.sdst_bits) << 16
            | u32::from(self.simm16);
        out.extend_from_slice(&w.to_le_bytes());
        if let Some(v) = self.imm32 {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// For `s_call_b64` and `s_subvector_loop_*`, the target address of the
    /// instruction at `pc`.
    pub fn branch_target(&self, pc: u64) -> Option<u64> {
        matches!(self.row.kind, SopkKind::Branch64 | SopkKind::Dec)
            .then(|| branch_dest(pc, self.simm16))
    }

    pub(crate) fn fmt_with(&self, f: &mut fmt::Formatter<'_>, target: Target) -> fmt::Result {
        let mut warn = Warnings::default();
        write!(f, "{} ", self.row.name)?;
        let sdst = self.sdst();
        let dst = |f: &mut fmt::Formatter<'_>, w: &mut Warnings| match &sdst {
            Some(op) => fmt_sop(f, op, sdst_width(self.row.kind), w),
            None => Ok(()),
        };
        match self.row.kind {
            SopkKind::Imm => {
                dst(f, &mut warn)?;
                write!(f, ", 0x{:x}", self.simm16)?;
            }
            SopkKind::Branch64 | SopkKind::Dec => {
                dst(f, &mut warn)?;
                write!(f, ", {}", self.simm16)?;
            }
            SopkKind::Version => fmt_version(f, self.simm16)?,
            SopkKind::GetReg => {
                dst(f, &mut warn)?;
                f.write_str(", ")?;
                fmt_hwreg(f, self.hwreg, target, self.simm16)?;
            }
            SopkKind::SetReg => {
                fmt_hwreg(f, self.hwreg, target, self.simm16)?;
                f.write_str(", ")?;
                dst(f, &mut warn)?;
            }
            SopkKind::SetRegImm32 => {
                fmt_hwreg(f, self.hwreg, target, self.simm16)?;
                f.write_str(", ")?;
                fmt_imm32(f, self.imm32.unwrap_or(0))?;
            }
        }
        warn.write(f)
    }
}

/// Writes `hwreg(NAME, offset, size)` (or `hwreg(NAME)` for the whole
/// register) for a `simm16` hardware-register selector.
fn fmt_hwreg(
    f: &mut fmt::Formatter<'_>,
    names: &[(u8, &str, u8)],
    target: Target,
    v: u16,
) -> fmt::Result {
    let id = (v & 0x3f) as u8;
    let offset = (v >> 6) & 0x1f;
    let size = (v >> 11) + 1;
    f.write_str("hwreg(")?;
    match names.iter().find(|r| r.0 == id && r.2 & target.bit() != 0) {
        Some(r) => f.write_str(r.1)?,
        None => write!(f, "{id}")?,
    }
    if offset != 0 || size != 32 {
        write!(f, ", {offset}, {size}")?;
    }
    f.write_str(")")
}

/// `s_version`'s operand: the version byte (named for the GFX levels LLVM
/// knows) or'ed with the wave-size and MDP flags, as LLVM prints the
/// expression; other values in hex.
fn fmt_version(f: &mut fmt::Formatter<'_>, v: u16) -> fmt::Result {
    const FLAGS: [(u16, &str); 3] = [
        (0x2000, "UC_VERSION_W64_BIT"),
        (0x4000, "UC_VERSION_W32_BIT"),
        (0x8000, "UC_VERSION_MDP_BIT"),
    ];
    if v & 0x1f00 != 0 {
        return write!(f, "0x{v:x}");
    }
    let flags: Vec<&str> = FLAGS
        .iter()
        .filter(|(b, _)| v & b != 0)
        .map(|(_, n)| *n)
        .collect();
    // Each `|` after the first wraps what precedes it in parentheses.
    for _ in 1..flags.len() {
        f.write_str("(")?;
    }
    match v & 0xff {
        0 => f.write_str("UC_VERSION_GFX7")?,
        4 => f.write_str("UC_VERSION_GFX10")?,
        6 => f.write_str("UC_VERSION_GFX11")?,
        9 => f.write_str("UC_VERSION_GFX12")?,
        n => write!(f, "{n}")?,
    }
    for (i, n) in flags.iter().enumerate() {
        write!(f, "|{n}")?;
        if i + 1 < flags.len() {
            f.write_str(")")?;
        }
    }
    Ok(())
}

impl Sopp {
    #[inline(always)]
    pub(crate) fn decode(
        t: &'static SopTables,
        target: Target,
        w0: u32,
    ) -> Result<Raw, DecodeError> {
        let invalid = DecodeError::Invalid { target, word: w0 };
        let r = t.sopp_idx[((w0 >> 16) & 0x7f) as usize];
        let row = t.sopp.get(usize::from(r)).ok_or(invalid.clone())?;
        if row.targets & target.bit() == 0 || row.kind == SoppKind::NoImm && w0 as u16 != 0 {
            return Err(invalid);
        }
        Ok((u16::from(r), 4, [w0, 0, 0, 0]))
    }

    pub(crate) fn from_raw(t: &'static SopTables, target: Target, r: usize, w0: u32) -> Sopp {
        Sopp {
            row: &t.sopp[r],
            simm16: w0 as u16,
            sendmsg: t.sendmsg,
            sendmsg_text: t.sendmsg_text.get(target.index()),
            waitcnt: t.waitcnt,
            hold_cnt: t.depctr_hold & target.bit() != 0,
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let w = 0xbf80_0000 | u32::from(self.row.op) << 16 | u32::from(self.simm16);
        out.extend_from_slice(&w.to_le_bytes());
    }

    /// For branches, the target address of the instruction at `pc`.
    pub fn branch_target(&self, pc: u64) -> Option<u64> {
        (self.row.kind == SoppKind::Branch).then(|| branch_dest(pc, self.simm16))
    }
}

/// `s_waitcnt`'s counters, gathered from their bits by the family's
/// `layout` (GFX11: vmcnt 15:10, lgkmcnt 9:4, expcnt 2:0; GFX10 splits
/// vmcnt over 3:0 and 15:14). A counter at its maximum (no wait) is left
/// out unless all are.
fn fmt_waitcnt(f: &mut fmt::Formatter<'_>, layout: &[(u8, u8); 16], v: u16) -> fmt::Result {
    let (mut val, mut max) = ([0u16; 3], [0u16; 3]);
    for (b, &(c, bit)) in layout.iter().enumerate() {
        if let (Some(x), Some(m)) = (val.get_mut(usize::from(c)), max.get_mut(usize::from(c))) {
            *x |= (v >> b & 1) << bit;
            *m |= 1 << bit;
        }
    }
    let all = val == max;
    let mut sep = "";
    for (i, name) in ["vmcnt", "expcnt", "lgkmcnt"].into_iter().enumerate() {
        if val[i] != max[i] || all {
            write!(f, "{sep}{name}({})", val[i])?;
            sep = " ";
        }
    }
    Ok(())
}

/// The `s_waitcnt_depctr` fields: name, shift, width; a field's default
/// (no wait) is its maximum.
const DEPCTR: [(&str, u16, u16); 7] = [
    ("depctr_hold_cnt", 7, 1),
    ("depctr_sa_sdst", 0, 1),
    ("depctr_va_vdst", 12, 4),
    ("depctr_va_sdst", 9, 3),
    ("depctr_va_ssrc", 8, 1),
    ("depctr_va_vcc", 1, 1),
    ("depctr_vm_vsrc", 2, 3),
];

/// `s_waitcnt_depctr`'s fields, the ones not at their default (all of them
/// when every one is), or hex when bits outside the fields are set;
/// `hold_cnt`: the target has `depctr_hold_cnt` (gfx1010 has not).
fn fmt_depctr(f: &mut fmt::Formatter<'_>, hold_cnt: bool, v: u16) -> fmt::Result {
    let fields = &DEPCTR[usize::from(!hold_cnt)..];
    let known: u16 = fields.iter().map(|&(_, s, w)| ((1 << w) - 1) << s).sum();
    if v & !known != 0 {
        return write!(f, "0x{v:x}");
    }
    let field = |s: u16, w: u16| (v >> s) & ((1 << w) - 1);
    let any_set = fields.iter().any(|&(_, s, w)| field(s, w) != (1 << w) - 1);
    let mut sep = "";
    for &(name, s, w) in fields {
        let val = field(s, w);
        if val != (1 << w) - 1 || !any_set {
            write!(f, "{sep}{name}({val})")?;
            sep = " ";
        }
    }
    Ok(())
}

/// `s_delay_alu`'s instid0 (3:0), instskip (6:4) and instid1 (10:7).
fn fmt_delay_alu(f: &mut fmt::Formatter<'_>, v: u16) -> fmt::Result {
    const IDS: [&str; 12] = [
        "NO_DEP",
        "VALU_DEP_1",
        "VALU_DEP_2",
        "VALU_DEP_3",
        "VALU_DEP_4",
        "TRANS32_DEP_1",
        "TRANS32_DEP_2",
        "TRANS32_DEP_3",
        "FMA_ACCUM_CYCLE_1",
        "SALU_CYCLE_1",
        "SALU_CYCLE_2",
        "SALU_CYCLE_3",
    ];
    const SKIPS: [&str; 6] = ["SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"];
    let id = |x: u16| {
        IDS.get(usize::from(x))
            .copied()
            .unwrap_or("/* invalid instid value */")
    };
    let mut sep = "";
    for (name, val, text) in [
        ("instid0", v & 0xf, id(v & 0xf)),
        (
            "instskip",
            v >> 4 & 7,
            SKIPS
                .get(usize::from(v >> 4 & 7))
                .copied()
                .unwrap_or("/* invalid instskip value */"),
        ),
        ("instid1", v >> 7 & 0xf, id(v >> 7 & 0xf)),
    ] {
        if val != 0 {
            write!(f, "{sep}{name}({text})")?;
            sep = " | ";
        }
    }
    if sep.is_empty() {
        f.write_str("0")?;
    }
    Ok(())
}

/// `sendmsg(NAME)` for a known message id (bits 7:0), `sendmsg(ID, 0, 0)`
/// for another id with no other bits set, else the decimal immediate.
fn fmt_sendmsg(f: &mut fmt::Formatter<'_>, names: &[(u8, &str, u8)], v: u16) -> fmt::Result {
    let id = v & 0xff;
    match names.iter().find(|r| u16::from(r.0) == id) {
        Some(r) => write!(f, "sendmsg({})", r.1),
        None if v < 256 => write!(f, "sendmsg({id}, 0, 0)"),
        None => write!(f, "{v}"),
    }
}

impl fmt::Display for Sopp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.row.name;
        let v = self.simm16;
        match self.row.kind {
            SoppKind::NoImm => f.write_str(name),
            SoppKind::OptionalImm if v == 0 => f.write_str(name),
            SoppKind::OptionalImm | SoppKind::Branch => write!(f, "{name} {v}"),
            SoppKind::Imm if v <= 64 => write!(f, "{name} {v}"),
            SoppKind::Imm | SoppKind::Hex => write!(f, "{name} 0x{v:x}"),
            SoppKind::Waitcnt => {
                write!(f, "{name} ")?;
                fmt_waitcnt(f, self.waitcnt, v)
            }
            SoppKind::DepCtr => {
                write!(f, "{name} ")?;
                fmt_depctr(f, self.hold_cnt, v)
            }
            SoppKind::DelayAlu => {
                write!(f, "{name} ")?;
                fmt_delay_alu(f, v)
            }
            SoppKind::Sendmsg => {
                write!(f, "{name} ")?;
                // GFX10: the text of the message, operation and stream
                // fields; a named message ignores the other bits, a
                // numeric one takes none. Else the decimal immediate.
                if let Some(texts) = self.sendmsg_text {
                    let k = usize::from((v >> 8 & 3) << 7 | (v & 0x7f));
                    let named = |t: &&&str| {
                        !t.starts_with("sendmsg(")
                            || !t[8..].starts_with(|c: char| c.is_ascii_digit())
                    };
                    let t = texts.get(k).filter(|t| !t.is_empty());
                    return match t.filter(|t| v & !0x37f == 0 || named(t)) {
                        Some(t) => f.write_str(t),
                        None => write!(f, "{v}"),
                    };
                }
                fmt_sendmsg(f, self.sendmsg, v)
            }
        }
    }
}
