//! The scalar ALU encodings: SOP2, SOP1, SOPC (register/constant operands,
//! optional 32-bit literal), SOPK (16-bit immediate) and SOPP (program
//! control, 16-bit immediate). Field layouts follow the ISA manuals'
//! "Microcode formats" chapter; opcode tables are generated from LLVM 22
//! (`tables/sop.rs`).

use super::Inst;
use super::operand::{
    Half, InlineFloat, Operand, Reg, RegFile, SRC_CLASS, SRC_LITERAL, SRC_NARROW, SRC_WIDE,
    Special, fmt_special,
};
use super::tables::sop as tab;
use crate::{DecodeError, Target};
use std::fmt;

/// One SOP1/SOP2/SOPC opcode: operand widths in dwords (0: the field is not
/// an operand and is kept raw; 9: an 8-bit `gpr_idx` mode immediate).
#[derive(Debug, PartialEq, Eq)]
pub struct AluRow {
    pub op: u8,
    pub name: &'static str,
    pub dst: u8,
    pub src0: u8,
    pub src1: u8,
    /// src0 takes registers only; LLVM notes constants as invalid.
    pub src0_reg_only: bool,
    /// Bit 0 gfx90a, bit 1 gfx942, bit 2 gfx950.
    pub targets: u8,
}

/// One SOPK opcode.
#[derive(Debug, PartialEq, Eq)]
pub struct KRow {
    pub op: u8,
    pub name: &'static str,
    pub kind: SopkKind,
    pub targets: u8,
}

/// How a SOPK opcode uses its `sdst` and `simm16` fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SopkKind {
    /// `sdst, 0xIMM`: s_movk_i32, s_cmpk_*, s_addk_i32, s_mulk_i32.
    Imm,
    /// `s[n:n+1], OFFSET`: s_call_b64, s_cbranch_i_fork.
    Branch64,
    /// `sdst, hwreg(...)`.
    GetReg,
    /// `hwreg(...), sdst` (sdst is the source).
    SetReg,
    /// `hwreg(...), imm32` with a trailing 32-bit immediate; sdst unused.
    SetRegImm32,
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
    /// Unsigned immediate: decimal up to 64, hex above.
    Imm,
    /// Branch offset in dwords, printed as the raw unsigned field.
    Branch,
    /// `vmcnt(..) expcnt(..) lgkmcnt(..)`.
    Waitcnt,
    /// `sendmsg(...)`.
    Sendmsg,
    /// `gpr_idx(SRC0,...)`.
    GprIdxMode,
}

/// Which of the three register-operand scalar encodings.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum AluForm {
    Sop1,
    Sop2,
    Sopc,
}

/// A field that is either an operand or, for opcodes that ignore it, its raw
/// value (kept so that re-encoding reproduces the word).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Field {
    Op(Operand),
    Unused(u8),
}

/// A SOP1, SOP2 or SOPC instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct SaluFields {
    pub form: AluForm,
    pub row: &'static AluRow,
    pub sdst: Field,
    pub src0: Field,
    pub src1: Field,
}

/// A SOPK instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Sopk {
    pub row: &'static KRow,
    /// The raw sdst field (bits 22:16); see [`Sopk::sdst`].
    pub sdst_bits: u8,
    pub simm16: u16,
    /// The trailing dword of `s_setreg_imm32_b32`.
    pub imm32: Option<u32>,
}

/// A SOPP instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Sopp {
    pub row: &'static PRow,
    pub simm16: u16,
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

static SOP2_IDX: [u8; 256] = ops_of!(tab::SOP2, 256);
static SOP1_IDX: [u8; 256] = ops_of!(tab::SOP1, 256);
static SOPC_IDX: [u8; 256] = ops_of!(tab::SOPC, 256);
static SOPK_IDX: [u8; 32] = ops_of!(tab::SOPK, 32);
static SOPP_IDX: [u8; 128] = ops_of!(tab::SOPP, 128);

fn lookup<R>(rows: &'static [R], idx: &[u8], op: usize) -> Option<(usize, &'static R)> {
    let i = usize::from(*idx.get(op)?);
    Some((i, rows.get(i)?))
}

/// The opcode table of a scalar ALU form.
fn alu_rows(form: AluForm) -> &'static [AluRow] {
    match form {
        AluForm::Sop2 => tab::SOP2,
        AluForm::Sop1 => tab::SOP1,
        AluForm::Sopc => tab::SOPC,
    }
}

/// Decodes an 8-bit scalar source (or 7-bit destination) field read as
/// `width` dwords; `literal` is the dword after the instruction, if any.
/// Returns `None` for values LLVM rejects at that width.
#[inline(always)]
pub fn decode_ssrc(field: u8, width: u8, literal: Option<u32>) -> Option<Operand> {
    let wide = width >= 2;
    let pair = |sp: Special| -> Option<Operand> {
        let hi = field & 1 == 1;
        match (wide, hi) {
            (true, true) => None,
            (true, false) => Some(Operand::Special(sp, Half::Full)),
            (false, false) => Some(Operand::Special(sp, Half::Lo)),
            (false, true) => Some(Operand::Special(sp, Half::Hi)),
        }
    };
    let full = |sp: Special| Some(Operand::Special(sp, Half::Full));
    let f = u16::from(field);
    match field {
        0..=101 => Some(Operand::Reg(Reg::new(RegFile::Sgpr, f, width))),
        102 | 103 => pair(Special::FlatScratch),
        104 | 105 => pair(Special::XnackMask),
        106 | 107 => pair(Special::Vcc),
        108..=123 => Some(Operand::Reg(Reg::new(RegFile::Ttmp, f - 108, width))),
        124 if !wide => full(Special::M0),
        125 => full(Special::Null),
        126 | 127 => pair(Special::Exec),
        128..=192 => Some(Operand::InlineInt((field - 128) as i8)),
        193..=208 => Some(Operand::InlineInt(-((field - 192) as i8))),
        230 => Some(Operand::Special(Special::SrcFlatScratchBase, Half::Lo)),
        231 if !wide => Some(Operand::Special(Special::SrcFlatScratchBase, Half::Hi)),
        235 => full(Special::SrcSharedBase),
        236 => full(Special::SrcSharedLimit),
        237 => full(Special::SrcPrivateBase),
        238 => full(Special::SrcPrivateLimit),
        239 => full(Special::SrcPopsExitingWaveId),
        240..=248 => InlineFloat::from_field(f).map(Operand::InlineFloat),
        251 => full(Special::SrcVccz),
        252 => full(Special::SrcExecz),
        253 => full(Special::SrcScc),
        254 if !wide => full(Special::SrcLdsDirect),
        255 => literal.map(Operand::Literal),
        _ => None,
    }
}

/// What decoding checks of a SOP1, SOP2 or SOPC opcode, compiled from its
/// [`AluRow`]. The [`SRC_CLASS`] of src0, src1 and sdst land at bits 3:0,
/// 7:4 and 11:8 of a mask that `need` and `lit` test.
#[derive(Copy, Clone)]
struct AluCheck {
    targets: u8,
    /// For each operand field, the [`SRC_NARROW`] or [`SRC_WIDE`] bit its
    /// value must have (none for a field that is not an operand or is a
    /// `gpr_idx` immediate).
    need: u16,
    /// For each source that may be a literal, its [`SRC_LITERAL`] bit.
    lit: u16,
}

/// [`AluCheck`] of every row of `rows`.
const fn alu_checks<const N: usize>(rows: &[AluRow]) -> [AluCheck; N] {
    let mut t = [AluCheck {
        targets: 0,
        need: 0,
        lit: 0,
    }; N];
    let mut i = 0;
    while i < N {
        let r = &rows[i];
        let fields = [(r.src0, 0, true), (r.src1, 4, true), (r.dst, 8, false)];
        let (mut need, mut lit) = (0u16, 0u16);
        let mut k = 0;
        while k < 3 {
            let (width, at, source) = fields[k];
            if !matches!(width, 0 | 9) {
                let bit = if width >= 2 { SRC_WIDE } else { SRC_NARROW };
                need |= (bit as u16) << at;
                if source {
                    lit |= (SRC_LITERAL as u16) << at;
                }
            }
            k += 1;
        }
        t[i] = AluCheck {
            targets: r.targets,
            need,
            lit,
        };
        i += 1;
    }
    t
}

static SOP2_CHECK: [AluCheck; tab::SOP2.len()] = alu_checks(tab::SOP2);
static SOP1_CHECK: [AluCheck; tab::SOP1.len()] = alu_checks(tab::SOP1);
static SOPC_CHECK: [AluCheck; tab::SOPC.len()] = alu_checks(tab::SOPC);

/// The field value of a scalar operand (inverse of [`decode_ssrc`]).
pub fn encode_ssrc(op: &Operand) -> u8 {
    // Scalar operands never name VGPRs, so the 9-bit encoding fits in 8 bits.
    (super::operand::encode_src(op) & 0xff) as u8
}

/// Misaligned register tuples LLVM reports after the operands.
#[derive(Default)]
pub(crate) struct Warnings {
    items: [(bool, u8, u16); 4],
    n: usize,
}

impl Warnings {
    fn push(&mut self, ttmp: bool, width: u8, index: u16) {
        if let Some(slot) = self.items.get_mut(self.n) {
            *slot = (ttmp, width, index);
            self.n += 1;
        }
    }

    /// Writes ` ; Warning: ...` as LLVM appends it (messages run together).
    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &(ttmp, width, index)) in self.items.iter().take(self.n).enumerate() {
            f.write_str(if i == 0 { " ; " } else { "" })?;
            let class = if ttmp { "TTMP" } else { "SGPR" };
            write!(
                f,
                "Warning: {class}_{}: scalar reg isn't aligned {index}",
                u32::from(width) * 32
            )?;
        }
        Ok(())
    }
}

/// Records a warning when a register tuple is misaligned; returns the
/// aligned-down index LLVM prints.
pub(crate) fn note_alignment(r: Reg, w: &mut Warnings) -> u16 {
    if r.count <= 1 {
        return r.index;
    }
    let align: u16 = if r.count >= 3 { 4 } else { 2 };
    let lo = r.index - r.index % align;
    if lo != r.index {
        w.push(r.file == RegFile::Ttmp, r.count, r.index);
    }
    lo
}

/// Writes a scalar register tuple: LLVM prints a misaligned tuple from the
/// aligned-down index and records a warning.
pub(crate) fn fmt_sreg(f: &mut fmt::Formatter<'_>, r: Reg, w: &mut Warnings) -> fmt::Result {
    let p = if r.file == RegFile::Ttmp { "ttmp" } else { "s" };
    if r.count <= 1 {
        return write!(f, "{p}{}", r.index);
    }
    let lo = note_alignment(r, w);
    write!(f, "{p}[{lo}:{}]", u32::from(lo) + u32::from(r.count) - 1)
}

/// Whether a 32-bit literal has an inline-constant encoding, in which case
/// LLVM marks it `lit(...)`.
fn literal_is_inlinable(v: u32, width: u8) -> bool {
    if width >= 2 {
        return v <= 64;
    }
    v <= 64 || v >= 0xffff_fff0 || INLINE_F32.iter().any(|e| e.0 == v)
}

/// The 32-bit value of an inline float constant's literal form.
const INLINE_F32: [(u32, InlineFloat); 9] = [
    (0x3f00_0000, InlineFloat::Half),
    (0xbf00_0000, InlineFloat::NegHalf),
    (0x3f80_0000, InlineFloat::One),
    (0xbf80_0000, InlineFloat::NegOne),
    (0x4000_0000, InlineFloat::Two),
    (0xc000_0000, InlineFloat::NegTwo),
    (0x4080_0000, InlineFloat::Four),
    (0xc080_0000, InlineFloat::NegFour),
    (0x3e22_f983, InlineFloat::InvTwoPi),
];

/// Writes a 32-bit immediate as LLVM prints an untyped one: inline integers
/// in decimal, inline float bit patterns as floats, anything else in hex.
pub(crate) fn fmt_imm32(f: &mut fmt::Formatter<'_>, v: u32) -> fmt::Result {
    if v <= 64 || v >= 0xffff_fff0 {
        write!(f, "{}", v as i32)
    } else if let Some(&(_, c)) = INLINE_F32.iter().find(|e| e.0 == v) {
        fmt_sop(f, &Operand::InlineFloat(c), 1, &mut Warnings::default())
    } else {
        write!(f, "0x{v:x}")
    }
}

/// Writes a constant given to a register-only source the way LLVM does: as
/// a 32-bit immediate followed by an `Invalid immediate` note.
pub(crate) fn fmt_invalid_imm(
    f: &mut fmt::Formatter<'_>,
    op: &Operand,
    w: &mut Warnings,
) -> fmt::Result {
    match *op {
        Operand::Literal(v) => fmt_imm32(f, v)?,
        _ => fmt_sop(f, op, 1, w)?,
    }
    f.write_str("/*Invalid immediate*/")
}

/// Writes a scalar operand read as `width` dwords, in LLVM syntax.
pub(crate) fn fmt_sop(
    f: &mut fmt::Formatter<'_>,
    op: &Operand,
    width: u8,
    w: &mut Warnings,
) -> fmt::Result {
    match *op {
        Operand::Reg(r) => fmt_sreg(f, r, w),
        Operand::Special(Special::SrcLdsDirect, _) => {
            f.write_str("src_lds_direct/*Invalid register, operand has 'SReg_32' register class*/")
        }
        Operand::Special(sp, half) => fmt_special(f, sp, half),
        Operand::InlineInt(v) => write!(f, "{v}"),
        Operand::InlineFloat(InlineFloat::InvTwoPi) if width >= 2 => {
            f.write_str("0.15915494309189532")
        }
        Operand::InlineFloat(InlineFloat::InvTwoPi) => f.write_str("0.15915494"),
        Operand::InlineFloat(c) => write!(f, "{:.1}", c.value()),
        Operand::Literal(v) if literal_is_inlinable(v, width) => write!(f, "lit(0x{v:x})"),
        Operand::Literal(v) => write!(f, "0x{v:x}"),
        Operand::Imm(v) => write!(f, "{v}"),
    }
}

/// Reads the literal dword that follows a one-dword instruction, when one of
/// the given source fields is 255.
#[inline(always)]
fn literal_for(bytes: &[u8], fields: &[(u8, u8)]) -> Result<Option<u32>, DecodeError> {
    if fields.iter().any(|&(v, w)| v == 255 && w != 0 && w != 9) {
        Ok(Some(super::word(bytes, 1)?))
    } else {
        Ok(None)
    }
}

#[inline(always)]
fn decode_field(v: u8, width: u8, lit: Option<u32>) -> Option<Field> {
    match width {
        0 => Some(Field::Unused(v)),
        9 => Some(Field::Op(Operand::Imm(i64::from(v)))),
        _ => decode_ssrc(v, width, lit).map(Field::Op),
    }
}

fn field_bits(f: &Field) -> u32 {
    match f {
        Field::Unused(v) => u32::from(*v),
        Field::Op(Operand::Imm(v)) => (*v as u32) & 0xff,
        Field::Op(op) => u32::from(encode_ssrc(op)),
    }
}

fn field_literal(f: &Field) -> Option<u32> {
    match f {
        Field::Op(Operand::Literal(v)) => Some(*v),
        _ => None,
    }
}

impl SaluFields {
    /// Decodes a SOP1, SOP2 or SOPC word (and its literal).
    #[inline(always)]
    pub fn decode_fields(
        target: Target,
        form: AluForm,
        bytes: &[u8],
    ) -> Result<(SaluFields, u8), DecodeError> {
        let w0 = super::word(bytes, 0)?;
        let invalid = DecodeError::Invalid { target, word: w0 };
        let (rows, idx, op, d, s0, s1): (&'static [AluRow], &[u8], u32, u8, u8, u8) = match form {
            AluForm::Sop2 => (
                tab::SOP2,
                &SOP2_IDX,
                (w0 >> 23) & 0x7f,
                (w0 >> 16) as u8 & 0x7f,
                w0 as u8,
                (w0 >> 8) as u8,
            ),
            AluForm::Sop1 => (
                tab::SOP1,
                &SOP1_IDX,
                (w0 >> 8) & 0xff,
                (w0 >> 16) as u8 & 0x7f,
                w0 as u8,
                0,
            ),
            AluForm::Sopc => (
                tab::SOPC,
                &SOPC_IDX,
                (w0 >> 16) & 0x7f,
                0,
                w0 as u8,
                (w0 >> 8) as u8,
            ),
        };
        let (_, row) = lookup(rows, idx, op as usize).ok_or(invalid.clone())?;
        if row.targets & target.bit() == 0 {
            return Err(invalid);
        }
        let lit = literal_for(bytes, &[(s0, row.src0), (s1, row.src1)])?;
        let sdst = decode_field(d, row.dst, None).ok_or(invalid.clone())?;
        let src0 = decode_field(s0, row.src0, lit).ok_or(invalid.clone())?;
        let src1 = decode_field(s1, row.src1, lit).ok_or(invalid)?;
        let len = if lit.is_some() { 8 } else { 4 };
        Ok((
            SaluFields {
                form,
                row,
                sdst,
                src0,
                src1,
            },
            len,
        ))
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let op = u32::from(self.row.op);
        let d = field_bits(&self.sdst);
        let s0 = field_bits(&self.src0);
        let s1 = field_bits(&self.src1);
        let w = match self.form {
            AluForm::Sop2 => 0x8000_0000 | op << 23 | d << 16 | s1 << 8 | s0,
            AluForm::Sop1 => 0xbe80_0000 | d << 16 | op << 8 | s0,
            AluForm::Sopc => 0xbf00_0000 | op << 16 | s1 << 8 | s0,
        };
        out.extend_from_slice(&w.to_le_bytes());
        if let Some(l) = field_literal(&self.src0).or(field_literal(&self.src1)) {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }
}

/// Writes `gpr_idx(SRC0,SRC1,SRC2,DST)` for a 4-bit mode mask, or hex.
fn fmt_gpr_idx(f: &mut fmt::Formatter<'_>, v: u32) -> fmt::Result {
    if v > 15 {
        return write!(f, "0x{v:x}");
    }
    f.write_str("gpr_idx(")?;
    let mut first = true;
    for (bit, name) in ["SRC0", "SRC1", "SRC2", "DST"].iter().enumerate() {
        if v >> bit & 1 == 1 {
            f.write_str(if first { "" } else { "," })?;
            f.write_str(name)?;
            first = false;
        }
    }
    f.write_str(")")
}

impl fmt::Display for SaluFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.row.name)?;
        let mut warn = Warnings::default();
        let mut sep = " ";
        let row = self.row;
        let fields = [
            (&self.sdst, row.dst, false),
            (&self.src0, row.src0, row.src0_reg_only),
            (&self.src1, row.src1, false),
        ];
        for (field, width, reg_only) in fields {
            let Field::Op(op) = field else { continue };
            f.write_str(sep)?;
            sep = ", ";
            match (width, op) {
                (9, Operand::Imm(v)) => fmt_gpr_idx(f, *v as u32)?,
                (_, Operand::InlineInt(_) | Operand::InlineFloat(_) | Operand::Literal(_))
                    if reg_only =>
                {
                    fmt_invalid_imm(f, op, &mut warn)?
                }
                _ => fmt_sop(f, op, width, &mut warn)?,
            }
        }
        warn.write(f)
    }
}

impl Sopk {
    #[inline(always)]
    pub(crate) fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
        let w0 = super::word(bytes, 0)?;
        let invalid = DecodeError::Invalid { target, word: w0 };
        let (r, row) =
            lookup(tab::SOPK, &SOPK_IDX, ((w0 >> 23) & 0x1f) as usize).ok_or(invalid.clone())?;
        if row.targets & target.bit() == 0 {
            return Err(invalid);
        }
        let d = (w0 >> 16) as u8 & 0x7f;
        decode_field(d, sdst_width(row.kind), None).ok_or(invalid)?;
        let (w1, len) = match row.kind {
            SopkKind::SetRegImm32 => (super::word(bytes, 1)?, 8),
            _ => (0, 4),
        };
        Ok(Inst::new(target, r as u16, len, [w0, w1, 0, 0]))
    }

    /// The fields of a SOPK instruction of `len` bytes whose opcode is row
    /// `r` of the SOPK table.
    pub(crate) fn from_raw(r: usize, len: u8, w0: u32, w1: u32) -> Sopk {
        Sopk {
            row: &tab::SOPK[r],
            sdst_bits: (w0 >> 16) as u8 & 0x7f,
            simm16: w0 as u16,
            imm32: (len == 8).then_some(w1),
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
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
        SopkKind::SetRegImm32 => 0,
        _ => 1,
    }
}

impl Sopk {
    /// The sdst operand (decoded from [`Sopk::sdst_bits`] on demand).
    pub fn sdst(&self) -> Field {
        decode_field(self.sdst_bits, sdst_width(self.row.kind), None)
            .unwrap_or(Field::Unused(self.sdst_bits))
    }

    /// For `s_call_b64` and `s_cbranch_i_fork`, the target address of the
    /// instruction at `pc`.
    pub fn branch_target(&self, pc: u64) -> Option<u64> {
        (self.row.kind == SopkKind::Branch64).then(|| branch_dest(pc, self.simm16))
    }
}

/// Writes `hwreg(NAME, offset, size)` (or `hwreg(NAME)` for the whole
/// register) for a `simm16` hardware-register selector.
fn fmt_hwreg(f: &mut fmt::Formatter<'_>, target: Target, v: u16) -> fmt::Result {
    let id = (v & 0x3f) as u8;
    let offset = (v >> 6) & 0x1f;
    let size = (v >> 11) + 1;
    f.write_str("hwreg(")?;
    match tab::HWREG
        .iter()
        .find(|r| r.0 == id && r.2 & target.bit() != 0)
    {
        Some(r) => f.write_str(r.1)?,
        None => write!(f, "{id}")?,
    }
    if offset != 0 || size != 32 {
        write!(f, ", {offset}, {size}")?;
    }
    f.write_str(")")
}

impl Sopk {
    pub(crate) fn fmt_with(&self, f: &mut fmt::Formatter<'_>, target: Target) -> fmt::Result {
        let mut warn = Warnings::default();
        let name = self.row.name;
        let sdst = self.sdst();
        let dst = |f: &mut fmt::Formatter<'_>, w: &mut Warnings| match &sdst {
            Field::Op(op) => fmt_sop(f, op, 1, w),
            Field::Unused(_) => Ok(()),
        };
        match self.row.kind {
            SopkKind::Imm => {
                write!(f, "{name} ")?;
                dst(f, &mut warn)?;
                write!(f, ", 0x{:x}", self.simm16)?;
            }
            SopkKind::Branch64 => {
                write!(f, "{name} ")?;
                if let Field::Op(op) = &sdst {
                    fmt_sop(f, op, 2, &mut warn)?;
                }
                write!(f, ", {}", self.simm16)?;
            }
            SopkKind::GetReg => {
                write!(f, "{name} ")?;
                dst(f, &mut warn)?;
                f.write_str(", ")?;
                fmt_hwreg(f, target, self.simm16)?;
            }
            SopkKind::SetReg => {
                write!(f, "{name} ")?;
                fmt_hwreg(f, target, self.simm16)?;
                f.write_str(", ")?;
                dst(f, &mut warn)?;
            }
            SopkKind::SetRegImm32 => {
                write!(f, "{name} ")?;
                fmt_hwreg(f, target, self.simm16)?;
                f.write_str(", ")?;
                fmt_imm32(f, self.imm32.unwrap_or(0))?;
            }
        }
        warn.write(f)
    }
}

impl Sopp {
    #[inline(always)]
    pub(crate) fn decode(target: Target, w0: u32) -> Result<Inst, DecodeError> {
        let invalid = DecodeError::Invalid { target, word: w0 };
        let (r, row) =
            lookup(tab::SOPP, &SOPP_IDX, ((w0 >> 16) & 0x7f) as usize).ok_or(invalid.clone())?;
        if row.targets & target.bit() == 0 {
            return Err(invalid);
        }
        let simm16 = w0 as u16;
        if row.kind == SoppKind::NoImm && simm16 != 0 {
            return Err(invalid);
        }
        Ok(Inst::new(target, r as u16, 4, [w0, 0, 0, 0]))
    }

    /// The fields of a SOPP instruction whose opcode is row `r` of the SOPP
    /// table.
    pub(crate) fn from_raw(r: usize, w0: u32) -> Sopp {
        Sopp {
            row: &tab::SOPP[r],
            simm16: w0 as u16,
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let w = 0xbf80_0000 | u32::from(self.row.op) << 16 | u32::from(self.simm16);
        out.extend_from_slice(&w.to_le_bytes());
    }

    /// For branches, the target address of the instruction at `pc`: the
    /// signed `simm16` counts dwords from the next instruction.
    pub fn branch_target(&self, pc: u64) -> Option<u64> {
        (self.row.kind == SoppKind::Branch).then(|| branch_dest(pc, self.simm16))
    }

    /// The waitcnt counters (vmcnt, expcnt, lgkmcnt) of a GFX9 `simm16`.
    pub fn waitcnt(v: u16) -> (u16, u16, u16) {
        ((v & 0xf) | ((v >> 14) << 4), (v >> 4) & 7, (v >> 8) & 0xf)
    }
}

/// Writes a `sendmsg(...)` operand (or the raw decimal value when the
/// immediate has bits outside the message, operation and stream fields).
fn fmt_sendmsg(f: &mut fmt::Formatter<'_>, v: u16) -> fmt::Result {
    let (msg, op, stream) = (v & 0xf, (v >> 4) & 7, (v >> 8) & 3);
    const NAMES: [&str; 16] = [
        "",
        "MSG_INTERRUPT",
        "MSG_GS",
        "MSG_GS_DONE",
        "MSG_SAVEWAVE",
        "MSG_STALL_WAVE_GEN",
        "MSG_HALT_WAVES",
        "MSG_ORDERED_PS_DONE",
        "MSG_EARLY_PRIM_DEALLOC",
        "MSG_GS_ALLOC_REQ",
        "MSG_GET_DOORBELL",
        "",
        "",
        "",
        "",
        "MSG_SYSMSG",
    ];
    const GS_OPS: [&str; 4] = ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"];
    let name = NAMES[usize::from(msg)];
    // A known message with a valid operation and stream prints symbolically;
    // LLVM ignores the remaining bits then.
    match msg {
        2 | 3 if (1..=3).contains(&op) => {
            return write!(f, "sendmsg({name}, {}, {stream})", GS_OPS[usize::from(op)]);
        }
        3 if op == 0 && stream == 0 => return write!(f, "sendmsg({name}, GS_OP_NOP)"),
        15 if stream == 0 && matches!(op, 1 | 2 | 4) => {
            let o = match op {
                1 => "SYSMSG_OP_ECC_ERR_INTERRUPT",
                2 => "SYSMSG_OP_REG_RD",
                _ => "SYSMSG_OP_TTRACE_PC",
            };
            return write!(f, "sendmsg({name}, {o})");
        }
        1 | 4..=10 if op == 0 && stream == 0 => return write!(f, "sendmsg({name})"),
        _ => {}
    }
    // Otherwise numeric fields when they hold every set bit, else the raw value.
    if v & !0x37f == 0 {
        write!(f, "sendmsg({msg}, {op}, {stream})")
    } else {
        write!(f, "{v}")
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
            SoppKind::Imm => write!(f, "{name} 0x{v:x}"),
            SoppKind::Waitcnt => {
                let (vm, exp, lgkm) = Sopp::waitcnt(v);
                let all = vm == 63 && exp == 7 && lgkm == 15;
                f.write_str(name)?;
                let mut sep = " ";
                for (label, val, max) in
                    [("vmcnt", vm, 63), ("expcnt", exp, 7), ("lgkmcnt", lgkm, 15)]
                {
                    if val != max || all {
                        write!(f, "{sep}{label}({val})")?;
                        sep = " ";
                    }
                }
                Ok(())
            }
            SoppKind::Sendmsg => {
                write!(f, "{name} ")?;
                fmt_sendmsg(f, v)
            }
            SoppKind::GprIdxMode => {
                write!(f, "{name} ")?;
                fmt_gpr_idx(f, u32::from(v))
            }
        }
    }
}

/// A SOP1, SOP2 or SOPC instruction as decoded: the opcode's table row and the instruction's
/// dwords, whose operand fields [`Salu::fields`] expands. Keeping the
/// fields packed makes decoding cheap: the operands are validated when
/// decoding, but only built into [`Operand`]s when asked for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Salu {
    pub target: Target,
    pub form: AluForm,
    /// Size in bytes.
    len: u8,
    pub row: &'static AluRow,
    /// The first dword.
    w0: u32,
    /// The second dword of an 8-byte instruction; 0 for a 4-byte one.
    w1: u32,
}

impl Salu {
    /// Decodes A SOP1, SOP2 or SOPC instruction (with its second dword).
    #[inline(always)]
    pub(crate) fn decode(
        target: Target,
        form: AluForm,
        w0: u32,
        bytes: &[u8],
    ) -> Result<Inst, DecodeError> {
        let (idx, op, d, s0, s1): (&[u8; 256], u32, u32, u32, u32) = match form {
            AluForm::Sop2 => (
                &SOP2_IDX,
                (w0 >> 23) & 0x7f,
                (w0 >> 16) & 0x7f,
                w0 & 0xff,
                (w0 >> 8) & 0xff,
            ),
            AluForm::Sop1 => (&SOP1_IDX, (w0 >> 8) & 0xff, (w0 >> 16) & 0x7f, w0 & 0xff, 0),
            AluForm::Sopc => (&SOPC_IDX, (w0 >> 16) & 0x7f, 0, w0 & 0xff, (w0 >> 8) & 0xff),
        };
        let invalid = DecodeError::Invalid { target, word: w0 };
        let r = usize::from(idx[op as usize & 0xff]);
        let checks: &[AluCheck] = match form {
            AluForm::Sop2 => &SOP2_CHECK,
            AluForm::Sop1 => &SOP1_CHECK,
            AluForm::Sopc => &SOPC_CHECK,
        };
        let Some(c) = checks.get(r) else {
            return Err(invalid);
        };
        if c.targets & target.bit() == 0 {
            return Err(invalid);
        }
        // One class lookup per field and two tests for all of them.
        let class = |v: u32| u16::from(SRC_CLASS[v as usize & 0xff]);
        let m = class(s0) | class(s1) << 4 | class(d) << 8;
        let (w1, len) = if m & c.lit != 0 {
            (super::word(bytes, 1)?, 8)
        } else {
            (0, 4)
        };
        if !m & c.need != 0 {
            return Err(invalid);
        }
        Ok(Inst::new(target, r as u16, len, [w0, w1, 0, 0]))
    }

    /// The fields of a SOP1, SOP2 or SOPC instruction of `len` bytes whose
    /// opcode is row `r` of the form's table.
    pub(crate) fn from_raw(
        target: Target,
        form: AluForm,
        r: usize,
        len: u8,
        w0: u32,
        w1: u32,
    ) -> Salu {
        Salu {
            target,
            form,
            len,
            row: &alu_rows(form)[r],
            w0,
            w1,
        }
    }

    /// The instruction's bytes and their count.
    fn bytes(&self) -> ([u8; 8], usize) {
        super::raw_bytes(u64::from(self.w0) | (u64::from(self.w1) << 32), self.len)
    }

    /// The typed operands and modifiers. `None` only for a value that
    /// [`Salu::decode`] did not produce.
    pub fn fields(&self) -> Option<SaluFields> {
        let (b, n) = self.bytes();
        let target = self.target;
        let form = self.form;
        let bytes = b.get(..n)?;
        SaluFields::decode_fields(target, form, bytes)
            .ok()
            .map(|(v, _)| v)
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    /// Writes the instruction's bytes, re-encoded from its fields.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self.fields() {
            Some(v) => v.encode_into(out),
            None => {
                let (b, n) = self.bytes();
                out.extend_from_slice(b.get(..n).unwrap_or_default());
            }
        }
    }
}

impl fmt::Display for Salu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fields() {
            Some(v) => v.fmt(f),
            None => f.write_str("<invalid>"),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::gfx9::Body;

    /// Decodes `words` on `target` and checks the text (`None`: LLVM reports
    /// the word invalid), that the whole input is consumed, and that the
    /// encoder reproduces the bytes.
    pub(crate) fn check(target: Target, words: &[u32], want: Option<&str>) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        match (crate::decode(target, &bytes), want) {
            (Ok(inst), Some(text)) => {
                assert_eq!(inst.to_string(), text, "{words:08x?} on {target}");
                assert_eq!(inst.len(), bytes.len(), "{words:08x?}: size");
                assert_eq!(inst.encode(), bytes, "{words:08x?}: re-encoding");
            }
            (Err(_), None) => {}
            (got, want) => panic!("{words:08x?} on {target}: got {got:?}, LLVM says {want:?}"),
        }
    }

    /// Texts from LLVM 22's disassembler (`scripts/dev/llvm_oracle.py`).
    #[test]
    fn matches_llvm() {
        let cases: &[(Target, &[u32], Option<&str>)] = &[
            (
                Target::Gfx942,
                &[0x8002ff04, 0x3e000000],
                Some("s_add_u32 s2, s4, 0x3e000000"),
            ),
            (
                Target::Gfx942,
                &[0x86830705],
                Some(
                    "s_and_b64 s[2:3], s[4:5], s[6:7] ; Warning: SGPR_64: scalar reg isn't aligned 3Warning: SGPR_64: scalar reg isn't aligned 5Warning: SGPR_64: scalar reg isn't aligned 7",
                ),
            ),
            (
                Target::Gfx942,
                &[0x8002ff04, 0x00000005],
                Some("s_add_u32 s2, s4, lit(0x5)"),
            ),
            (
                Target::Gfx942,
                &[0x8d82ff04, 0xffffffff],
                Some("s_xnor_b64 s[2:3], s[4:5], 0xffffffff"),
            ),
            (
                Target::Gfx942,
                &[0x8002fe04],
                Some(
                    "s_add_u32 s2, s4, src_lds_direct/*Invalid register, operand has 'SReg_32' register class*/",
                ),
            ),
            (
                Target::Gfx942,
                &[0x8d8206f8],
                Some("s_xnor_b64 s[2:3], 0.15915494309189532, s[6:7]"),
            ),
            (
                Target::Gfx942,
                &[0x800206f8],
                Some("s_add_u32 s2, 0.15915494, s6"),
            ),
            (
                Target::Gfx942,
                &[0x8002ffff, 0x00000007],
                Some("s_add_u32 s2, lit(0x7), lit(0x7)"),
            ),
            (
                Target::Gfx942,
                &[0xbe821d80],
                Some("s_setpc_b64 0/*Invalid immediate*/"),
            ),
            (
                Target::Gfx942,
                &[0xbe822eff, 0x3f800000],
                Some("s_cbranch_join 1.0/*Invalid immediate*/"),
            ),
            (Target::Gfx942, &[0xbe801c00], Some("s_getpc_b64 s[0:1]")),
            (Target::Gfx942, &[0xbe801d1e], Some("s_setpc_b64 s[30:31]")),
            (
                Target::Gfx942,
                &[0xbe9e1e04],
                Some("s_swappc_b64 s[30:31], s[4:5]"),
            ),
            (
                Target::Gfx90a,
                &[0xbe80207e],
                Some("s_and_saveexec_b64 s[0:1], exec"),
            ),
            (
                Target::Gfx942,
                &[0xbf110306],
                Some("s_set_gpr_idx_on s6, gpr_idx(SRC0,SRC1)"),
            ),
            (
                Target::Gfx942,
                &[0xbf120604],
                Some("s_cmp_eq_u64 s[4:5], s[6:7]"),
            ),
            (Target::Gfx942, &[0xb0020604], Some("s_movk_i32 s2, 0x604")),
            (
                Target::Gfx942,
                &[0xb0a2ffff],
                Some("s_cmovk_i32 s34, 0xffff"),
            ),
            (
                Target::Gfx942,
                &[0xb8820001],
                Some("s_getreg_b32 s2, hwreg(HW_REG_MODE, 0, 1)"),
            ),
            (
                Target::Gfx942,
                &[0xb902f801],
                Some("s_setreg_b32 hwreg(HW_REG_MODE), s2"),
            ),
            (
                Target::Gfx942,
                &[0xba050001, 0x3f800000],
                Some("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 1), 1.0"),
            ),
            (
                Target::Gfx942,
                &[0xba82fffe],
                Some("s_call_b64 s[2:3], 65534"),
            ),
            (
                Target::Gfx950,
                &[0xb8820014],
                Some("s_getreg_b32 s2, hwreg(HW_REG_XCC_ID, 0, 1)"),
            ),
            (
                Target::Gfx90a,
                &[0xb8820014],
                Some("s_getreg_b32 s2, hwreg(20, 0, 1)"),
            ),
            (Target::Gfx942, &[0xbf800000], Some("s_nop 0")),
            (Target::Gfx942, &[0xbf81000a], Some("s_endpgm 10")),
            (
                Target::Gfx942,
                &[0xbf8c0000],
                Some("s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)"),
            ),
            (Target::Gfx942, &[0xbf8cc07f], Some("s_waitcnt lgkmcnt(0)")),
            (Target::Gfx942, &[0xbf8c0f70], Some("s_waitcnt vmcnt(0)")),
            (
                Target::Gfx942,
                &[0xbf8cffff],
                Some("s_waitcnt vmcnt(63) expcnt(7) lgkmcnt(15)"),
            ),
            (
                Target::Gfx942,
                &[0xbf900003],
                Some("s_sendmsg sendmsg(MSG_GS_DONE, GS_OP_NOP)"),
            ),
            (
                Target::Gfx942,
                &[0xbf90bc84],
                Some("s_sendmsg sendmsg(MSG_SAVEWAVE)"),
            ),
            (Target::Gfx942, &[0xbf901234], Some("s_sendmsg 4660")),
            (
                Target::Gfx942,
                &[0xbf90001f],
                Some("s_sendmsg sendmsg(MSG_SYSMSG, SYSMSG_OP_ECC_ERR_INTERRUPT)"),
            ),
            (
                Target::Gfx942,
                &[0xbf89ffdf],
                Some("s_cbranch_execnz 65503"),
            ),
            (
                Target::Gfx942,
                &[0xbf9d0009],
                Some("s_set_gpr_idx_mode gpr_idx(SRC0,DST)"),
            ),
            (Target::Gfx942, &[0xbf800041], Some("s_nop 0x41")),
            (Target::Gfx942, &[0xbf8a0000], Some("s_barrier")),
            (Target::Gfx942, &[0xbf8a0001], None),
            (Target::Gfx942, &[0xbe80207f], None),
            (Target::Gfx942, &[0x80020dd5], None),
            (
                Target::Gfx950,
                &[0x8002e604],
                Some("s_add_u32 s2, s4, src_flat_scratch_base_lo"),
            ),
            (Target::Gfx942, &[0x8d82e704], None),
        ];
        for &(t, words, want) in cases {
            check(t, words, want);
        }
    }

    /// The table-driven SOP1/SOP2/SOPC decoder accepts exactly the words
    /// that the operand decoder accepts, with the same length and error.
    #[test]
    fn fast_decode_matches_operand_decode() {
        let mut x: u64 = 0xbb67_ae85_84ca_a73b;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for t in crate::gfx9::ALL_TARGETS {
            for n in 0..300_000u32 {
                let r = next();
                // SOP2 opcodes fill bits 29:23 below the SOPK range.
                let (form, top) = match n % 3 {
                    0 => (AluForm::Sop1, 0xbe80_0000),
                    1 => (AluForm::Sopc, 0xbf00_0000),
                    _ => (AluForm::Sop2, 0x8000_0000 | (r as u32 % 0x60) << 23),
                };
                let mut w0 = top | ((r >> 32) as u32 & 0x007f_ffff);
                // Bias the source fields towards literals and specials.
                if n & 8 == 0 {
                    w0 |= 0xff;
                }
                if n & 16 == 0 {
                    w0 = (w0 & !0xff00) | (((r >> 8) as u32 & 0x7f) | 0x60) << 8;
                }
                let w1 = r as u32;
                for have in [4usize, 8] {
                    let bytes: Vec<u8> = [w0, w1]
                        .iter()
                        .flat_map(|w| w.to_le_bytes())
                        .take(have)
                        .collect();
                    let fast = Salu::decode(t, form, w0, &bytes).map(|i| i.len());
                    let want =
                        SaluFields::decode_fields(t, form, &bytes).map(|(_, l)| usize::from(l));
                    assert_eq!(fast, want, "{t} {form:?} {w0:08x} ({have} bytes)");
                }
            }
        }
    }

    #[test]
    fn missing_literal_is_truncation() {
        let bytes = 0x8d82_ff04u32.to_le_bytes();
        assert_eq!(
            crate::decode(Target::Gfx942, &bytes),
            Err(DecodeError::Truncated { need: 8, have: 4 })
        );
    }

    #[test]
    fn branch_targets() {
        let dec = |w: u32| crate::decode(Target::Gfx942, &w.to_le_bytes()).unwrap();
        let Body::Sopp(b) = dec(0xbf89_ffdf).body() else {
            panic!()
        };
        // `s_cbranch_execnz 65503` at 0x2504 goes to 0x2484 (llvm-objdump: <k1+0x84>).
        assert_eq!(b.branch_target(0x2504), Some(0x2484));
        let Body::Sopp(b) = dec(0xbf85_0035).body() else {
            panic!()
        };
        assert_eq!(b.branch_target(0x2434), Some(0x250c));
        let Body::Sopp(b) = dec(0xbf8c_0000).body() else {
            panic!()
        };
        assert_eq!(b.branch_target(0), None);
        let Body::Sopk(k) = dec(0xba82_fffe).body() else {
            panic!()
        };
        assert_eq!(k.branch_target(0x100), Some(0xfc));
    }

    #[test]
    fn waitcnt_fields() {
        assert_eq!(Sopp::waitcnt(0xc07f), (63, 7, 0));
        assert_eq!(Sopp::waitcnt(0x8000), (32, 0, 0));
        assert_eq!(Sopp::waitcnt(0x1234), (4, 3, 2));
    }

    /// Every 32-bit word whose top bits select a scalar ALU encoding decodes
    /// without panicking, and re-encodes to itself when valid.
    #[test]
    fn sampled_words_round_trip() {
        let mut x: u32 = 0x1234_5678;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let w = (x & 0x3fff_ffff) | 0x8000_0000;
            let bytes = [w.to_le_bytes(), x.rotate_left(7).to_le_bytes()].concat();
            for t in crate::gfx9::ALL_TARGETS {
                if let Ok(inst) = crate::decode(t, &bytes) {
                    assert_eq!(inst.encode(), bytes[..inst.len()], "{w:08x}");
                    let _ = inst.to_string();
                }
            }
        }
    }
}
