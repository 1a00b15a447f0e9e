//! The GFX11 VOP3 encoding: the 64-bit vector ALU form carrying the
//! promoted VOP1/VOP2/VOPC opcodes (`_e64`) and the VOP3-only opcodes,
//! with an optional 32-bit literal (RDNA3 ISA manual, "VOP3").
//!
//! Word 0: vdst 7:0, abs 10:8 (or the VOP3b sdst 14:8), op_sel 14:11,
//! clamp 15, op 25:16, encoding 0b110101 31:26. Word 1: src0 8:0,
//! src1 17:9, src2 26:18, omod 28:27, neg 31:29.
//!
//! The per-opcode operands and the modifier bits LLVM accepts come from
//! `tables/vop3.rs` (learned from LLVM 22). 16-bit operands are VGPR halves
//! (`v1.h` when the operand's op_sel bit is set); an op_sel bit of an
//! operand the opcode lacks makes LLVM fall back to the opcode's
//! fake-16-bit form, which prints 32-bit registers and no op_sel.

use super::operand::{Operand, Sregs, ValType};
use super::sop::Raw;
use super::tables::vop3::{VOP3, VOP3_FAKE16};
use super::valu::{Slot, fmt_mod_src, fmt_omod, fmt_operand, fmt_sdst, fmt_v16, fmt_vgpr};
use super::vop::{dpp8_sel, fmt_dpp8, fmt_dpp16};
use crate::gfx9::sop::{Warnings, fmt_sop};
use crate::{DecodeError, Target};
use std::fmt;

/// The destination of an opcode.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dst {
    /// None; the vdst field must hold this value.
    No(u8),
    /// A VGPR range of this many dwords.
    V(u8),
    /// A 16-bit VGPR half (op_sel bit 3 selects `.h`).
    V16,
    /// An SGPR range of this many dwords.
    S(u8),
    /// An SGPR range of the `SReg_32_XEXEC` class (GFX12's `v_s_*`
    /// pseudo-scalar opcodes).
    SXexec(u8),
    /// A lane mask: one SGPR in wave32, a pair in wave64.
    Mask,
}

/// A source operand slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Src {
    /// Width in dwords; 0: a lane mask (wave-sized).
    pub w: u8,
    /// How constants print.
    pub ty: ValType,
    /// How constants print in the `_e64_dpp` forms.
    pub dpp_ty: ValType,
    /// A VGPR is a 16-bit half.
    pub t16: bool,
    /// The register class LLVM names after an SGPR operand ("": accepted).
    pub bad_s: &'static str,
    /// The register class LLVM names after a VGPR operand.
    pub bad_v: &'static str,
    /// [`NO_CONST`], [`REJECT_CONST`], [`PLAIN`].
    pub flags: u8,
}

/// A constant is printed with `/*Invalid immediate*/`.
pub const NO_CONST: u8 = 1;
/// A constant makes LLVM reject the word.
pub const REJECT_CONST: u8 = 2;
/// Constants print as a plain 32-bit immediate.
pub const PLAIN: u8 = 4;
/// The field is an interpolation attribute (GFX10's `v_interp_*`):
/// attr[5:0] and channel[7:6], printed `attrN.c` after src1.
pub const ATTR: u8 = 8;
/// With [`ATTR`]: bit 8 of the field is `high` (else it must be 0).
pub const HIGH: u8 = 16;
/// The field is `v_interp_mov_f32_e64`'s parameter (`p10`, `p20`, `p0`,
/// else `invalid_param_N`).
pub const PARAM: u8 = 32;

/// One opcode of the VOP3 table.
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    pub op: u16,
    /// Targets: bit 0 gfx1100, bit 1 gfx1151.
    pub tg: u8,
    pub name: &'static str,
    /// LLVM prints the `_e64` suffix.
    pub e64: bool,
    pub dst: Dst,
    /// VOP3b: a lane-mask carry-out destination in bits 14:8.
    pub sdst: bool,
    pub srcs: &'static [Src],
    /// Unused source fields (bit k: srcK) LLVM requires to be zero.
    pub zero_src: u8,
    /// Operands (bit k: srcK, bit 3: vdst) that take v0..v127 only.
    pub lo128: u8,
    /// Modifier bits LLVM rejects (bit i < 8: word 0 bit 8+i; 8+j: word 1
    /// bit 27+j).
    pub zero: u16,
    /// Modifier bits LLVM prints.
    pub mods: u16,
    /// Bits of `zero` the DPP forms accept (and do not print).
    pub dpp_ok: u16,
    /// Modifier bits that select the fake-16-bit form.
    pub fake: u16,
    /// DPP forms: [`DPP16`], [`DPP8`], and (bits 2..7) the DPP16 dword's
    /// bits 18..23 LLVM rejects.
    pub dpp: u8,
    /// In the DPP forms, a src1 field of 255 takes no literal dword and
    /// prints as its value (LLVM's `v_fmac_*` DPP forms insert the tied
    /// accumulator before src1).
    pub raw_src1: bool,
    /// LLVM reads the DPP8 selector through its source-operand decoder
    /// (see `vop::dpp8_sel`).
    pub dpp8_src: bool,
    /// Entries of the printed `op_sel:[...]` (0: not printed), plus
    /// [`OPSEL_DST`] when the last is the destination's (op_sel bit 3).
    pub opsel: u8,
    /// op_sel bits printed as `byte_sel` (GFX12's fp8 conversions): bits
    /// 2k+1:2k hold the value op_sel bit k adds.
    pub byte_sel: u8,
}

/// [`Row::dpp`]: the `_e64_dpp` form with a DPP16 dword exists.
pub const DPP16: u8 = 1;
/// [`Row::dpp`]: the `_e64_dpp` form with a DPP8 dword exists.
pub const DPP8: u8 = 2;

/// [`Row::opsel`]: the last entry is the destination's select.
pub const OPSEL_DST: u8 = 8;

/// Writes ` op_sel:[...]` for the op_sel bits `v` (source k at bit k, the
/// destination at bit 3) when any is set: `layout` entries as in
/// [`Row::opsel`].
pub(crate) fn fmt_opsel(f: &mut fmt::Formatter<'_>, layout: u8, v: u16) -> fmt::Result {
    let n = layout & 7;
    if n == 0 || v == 0 {
        return Ok(());
    }
    let dst = layout & OPSEL_DST != 0;
    let srcs = n - u8::from(dst);
    let shown = v & ((1 << srcs) - 1) != 0 || dst && v & 8 != 0;
    if !shown {
        return Ok(());
    }
    f.write_str(" op_sel:[")?;
    for k in 0..srcs {
        if k > 0 {
            f.write_str(",")?;
        }
        write!(f, "{}", v >> k & 1)?;
    }
    if dst {
        write!(f, "{}{}", if srcs > 0 { "," } else { "" }, v >> 3 & 1)?;
    }
    f.write_str("]")
}

const M_ABS: u16 = 0;
const M_OPSEL: u16 = 3;
const M_CLAMP: u16 = 7;
const M_OMOD: u16 = 8;
const M_NEG: u16 = 10;

/// Row index per (target, opcode) in `rows`, `u16::MAX` for none.
const fn index(rows: &[Row]) -> [[u16; 1024]; 2] {
    let mut t = [[u16::MAX; 1024]; 2];
    let mut i = rows.len();
    while i > 0 {
        i -= 1;
        let r = &rows[i];
        let mut k = 0;
        while k < 2 {
            if r.tg & (1 << k) != 0 {
                t[k][(r.op & 0x3ff) as usize] = i as u16;
            }
            k += 1;
        }
    }
    t
}

/// One family's VOP3 rows and fake-16-bit rows (a generated
/// `tables/vop3.rs`) with their row indices per (target bit, opcode).
pub struct Vop3Tables {
    pub rows: &'static [Row],
    pub fake16: &'static [Row],
    idx: [[u16; 1024]; 2],
    idx_fake: [[u16; 1024]; 2],
    /// The family's numbering of m0 and null.
    pub sregs: Sregs,
}

impl Vop3Tables {
    pub const fn new(rows: &'static [Row], fake16: &'static [Row]) -> Vop3Tables {
        Vop3Tables {
            rows,
            fake16,
            idx: index(rows),
            idx_fake: index(fake16),
            sregs: Sregs::Gfx11,
        }
    }

    /// The tables with GFX10's numbering of m0 and null.
    pub const fn gfx10(self) -> Vop3Tables {
        Vop3Tables {
            sregs: Sregs::Gfx10,
            ..self
        }
    }

    /// The row an instruction's stored index names.
    pub(crate) fn row_at(&self, i: u16) -> &'static Row {
        if i & FAKE_ROW != 0 {
            &self.fake16[usize::from(i & !FAKE_ROW)]
        } else {
            &self.rows[usize::from(i)]
        }
    }
}

/// GFX11's tables.
pub static TABLES: Vop3Tables = Vop3Tables::new(VOP3, VOP3_FAKE16);

/// The row flag marking an index into [`Vop3Tables::fake16`].
const FAKE_ROW: u16 = 0x8000;

/// The modifier bits of a VOP3 word, numbered as in [`Row::zero`].
#[inline(always)]
fn mod_bits(w0: u32, w1: u32) -> u16 {
    ((w0 >> 8) & 0xff) as u16 | (((w1 >> 27) & 0x1f) as u16) << 8
}

/// The width of a slot in dwords for the wave size.
#[inline(always)]
fn width(w: u8, wave64: bool) -> u8 {
    if w == 0 { 1 + u8::from(wave64) } else { w }
}

/// Whether source field `v` decodes in slot `s` (a literal counts).
#[inline(always)]
fn src_decodes(sregs: Sregs, v: u16, s: &Src, wave64: bool) -> bool {
    if s.flags & REJECT_CONST != 0
        && (128..=255).contains(&v)
        && sregs.decode_src(v, 1, Some(0)).is_some()
    {
        return !matches!(
            sregs.decode_src(v, 1, Some(0)),
            Some(Operand::InlineInt(_) | Operand::InlineFloat(_) | Operand::Literal(_))
        );
    }
    sregs.decode_src(v, width(s.w, wave64), Some(0)).is_some()
}

/// Decodes a VOP3 instruction (8 bytes; 12 with a literal or a DPP dword,
/// 16 with both) with the family's tables: the row, length and dwords.
pub(crate) fn decode(
    tables: &'static Vop3Tables,
    target: Target,
    wave64: bool,
    w0: u32,
    bytes: &[u8],
) -> Result<Raw, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let op = ((w0 >> 16) & 0x3ff) as usize;
    let t = target.index() & 1;
    let mut i = tables.idx[t][op];
    let mut row = tables.rows.get(usize::from(i)).ok_or(invalid.clone())?;
    let mut m = mod_bits(w0, w1);
    if m & row.fake != 0 {
        // LLVM's fake-16-bit form: validated as its own opcode.
        let f = tables.idx_fake[t][op];
        row = tables.fake16.get(usize::from(f)).ok_or(invalid.clone())?;
        i = f | FAKE_ROW;
    }
    if row.sdst {
        m &= !0x7f;
        if tables
            .sregs
            .decode_sreg(((w0 >> 8) & 0x7f) as u16, width(0, wave64))
            .is_none()
        {
            return Err(invalid);
        }
    }
    let dpp_form = match w1 & 0x1ff {
        0xfa => row.dpp & DPP16 != 0,
        0xe9 | 0xea => row.dpp & DPP8 != 0,
        _ => false,
    };
    let zero = if dpp_form {
        row.zero & !row.dpp_ok
    } else {
        row.zero
    };
    if m & zero != 0 {
        return Err(invalid);
    }
    let vdst = (w0 & 0xff) as u16;
    let dst_ok = match row.dst {
        Dst::No(v) => vdst == u16::from(v),
        Dst::V(_) | Dst::V16 => row.lo128 & 8 == 0 || vdst < 128,
        Dst::S(n) | Dst::SXexec(n) => tables.sregs.decode_src(vdst, n, Some(0)).is_some(),
        Dst::Mask => tables
            .sregs
            .decode_src(vdst, width(0, wave64), Some(0))
            .is_some(),
    };
    if !dst_ok {
        return Err(invalid);
    }
    let fields = src_fields(w1);
    let mut lit_sel = false;
    let dpp = match fields[0] {
        0xfa if row.dpp & DPP16 != 0 => {
            let d = super::word(bytes, 2)?;
            if (d >> 18) as u8 & 0x3f & (row.dpp >> 2) != 0 {
                return Err(invalid);
            }
            true
        }
        0xe9 | 0xea if row.dpp & DPP8 != 0 => {
            // A selector LLVM reads as the literal source takes a literal
            // dword (see `vop::dpp8_sel`).
            lit_sel = row.dpp8_src && super::word(bytes, 2)? >> 8 == 0xff;
            true
        }
        _ => false,
    };
    let mut lit =
        lit_sel || matches!(row.dst, Dst::Mask | Dst::S(_) | Dst::SXexec(_)) && vdst == 255;
    for (k, &v) in fields.iter().enumerate() {
        match row.srcs.get(k) {
            // A DPP form's src0 is the VGPR of its DPP dword.
            Some(_) if k == 0 && dpp => {}
            Some(s) if s.flags & ATTR != 0 && v >= 256 && s.flags & HIGH == 0 => {
                return Err(invalid);
            }
            Some(s) if s.flags & ATTR != 0 => {}
            Some(s) if s.flags & PARAM != 0 => {}
            Some(s) => {
                if !src_decodes(tables.sregs, v, s, wave64) || row.lo128 & (1 << k) != 0 && v >= 384
                {
                    return Err(invalid);
                }
                lit |= v == 255 && !(k == 1 && dpp && row.raw_src1);
            }
            None if row.zero_src & (1 << k) != 0 && v != 0 => return Err(invalid),
            None => {}
        }
    }
    let mut words = [w0, w1, 0, 0];
    let mut len = 8;
    if dpp {
        words[2] = super::word(bytes, 2)?;
        len = 12;
    }
    if lit {
        words[len / 4] = super::word(bytes, len / 4)?;
        len += 4;
    }
    Ok((i, len as u8, words))
}

fn src_fields(w1: u32) -> [u16; 3] {
    [0, 9, 18].map(|s| ((w1 >> s) & 0x1ff) as u16)
}

/// A decoded VOP3 instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Vop3 {
    pub row: &'static Row,
    pub wave64: bool,
    /// The family's numbering of m0 and null.
    pub sregs: Sregs,
    pub w0: u32,
    pub w1: u32,
    /// The DPP16 or DPP8 dword of an `_e64_dpp` form (src0 0xFA or
    /// 0xE9/0xEA).
    pub dpp: Option<u32>,
    /// The literal constant, when a source field is 255.
    pub literal: Option<u32>,
}

impl Vop3 {
    pub(crate) fn from_raw(
        t: &'static Vop3Tables,
        r: u16,
        wave64: bool,
        len: u8,
        words: [u32; 4],
    ) -> Vop3 {
        let [w0, w1, w2, w3] = words;
        let row = t.row_at(r);
        let dpp = row.dpp != 0 && matches!(w1 & 0x1ff, 0xfa | 0xe9 | 0xea);
        let base = if dpp { 12 } else { 8 };
        Vop3 {
            row,
            wave64,
            sregs: t.sregs,
            w0,
            w1,
            dpp: dpp.then_some(w2),
            literal: (len > base).then_some(if dpp { w3 } else { w2 }),
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
        out.extend_from_slice(&self.w1.to_le_bytes());
        if let Some(d) = self.dpp {
            out.extend_from_slice(&d.to_le_bytes());
        }
        if let Some(l) = self.literal {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }

    /// The vdst field.
    pub fn vdst(&self) -> u8 {
        self.w0 as u8
    }

    /// Source `k`'s operand, if the opcode has it.
    pub fn src(&self, k: usize) -> Option<Operand> {
        let s = self.row.srcs.get(k)?;
        let v = match self.dpp {
            Some(d) if k == 0 => 256 | (d & 0xff) as u16,
            _ => src_fields(self.w1)[k],
        };
        self.sregs
            .decode_src(v, width(s.w, self.wave64), self.literal)
    }
}

impl fmt::Display for Vop3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = self.row;
        let m = mod_bits(self.w0, self.w1);
        let opsel = (m >> M_OPSEL) & 0xf;
        let mut warn = Warnings::default();
        f.write_str(row.name)?;
        if self.dpp.is_some() {
            f.write_str("_e64_dpp")?;
        } else if row.e64 {
            f.write_str("_e64")?;
        }
        let mut sep = " ";
        let vdst = u16::from(self.vdst());
        let mask_w = width(0, self.wave64);
        match row.dst {
            Dst::No(_) => {}
            Dst::V(n) => {
                f.write_str(sep)?;
                fmt_vgpr(f, vdst, n)?;
            }
            Dst::V16 => {
                f.write_str(sep)?;
                fmt_v16(f, vdst, opsel & 8 != 0)?;
            }
            Dst::S(n) | Dst::SXexec(n) => {
                f.write_str(sep)?;
                if let Some(op) = self.sregs.decode_src(vdst, n, self.literal) {
                    let xexec = matches!(row.dst, Dst::SXexec(_));
                    fmt_sdst(f, &op, n, xexec, &mut warn)?;
                }
            }
            Dst::Mask => {
                f.write_str(sep)?;
                if let Some(op) = self.sregs.decode_src(vdst, mask_w, self.literal) {
                    let slot = Slot {
                        width: mask_w,
                        ty: ValType::I32,
                        plain: true,
                        bad_const: true,
                        bad_s: "",
                        bad_v: "",
                        t16: false,
                        hi: false,
                    };
                    fmt_operand(f, &op, &slot, &mut warn)?;
                }
            }
        }
        if !matches!(row.dst, Dst::No(_)) {
            sep = ", ";
        }
        if row.sdst {
            f.write_str(sep)?;
            sep = ", ";
            if let Some(op) = self
                .sregs
                .decode_sreg(((self.w0 >> 8) & 0x7f) as u16, mask_w)
            {
                fmt_sop(f, &op, mask_w, &mut warn)?;
            }
        }
        let has = |bit: u16| row.mods & (1 << bit) != 0;
        // Interpolation: the attribute (src0) prints after src1.
        let interp = row.srcs.first().is_some_and(|s| s.flags & ATTR != 0);
        let order: &[usize] = if interp { &[1, 0, 2] } else { &[0, 1, 2] };
        for &k in order.iter().filter(|&&k| k < row.srcs.len()) {
            let s = &row.srcs[k];
            f.write_str(sep)?;
            sep = ", ";
            let field = src_fields(self.w1)[k];
            if s.flags & ATTR != 0 {
                let chan = ["x", "y", "z", "w"][usize::from(field >> 6) & 3];
                write!(f, "attr{}.{chan}", field & 0x3f)?;
                continue;
            }
            if s.flags & PARAM != 0 {
                crate::gfx9::vop3::write_interp_param(f, field)?;
                continue;
            }
            let raw = k == 1 && self.dpp.is_some() && row.raw_src1;
            let op = match self.src(k) {
                Some(op) => op,
                None if raw => Operand::Literal(u32::from(src_fields(self.w1)[1])),
                None => continue,
            };
            let slot = Slot {
                width: width(s.w, self.wave64),
                ty: if self.dpp.is_some() { s.dpp_ty } else { s.ty },
                plain: s.flags & PLAIN != 0,
                bad_const: s.flags & NO_CONST != 0,
                bad_s: s.bad_s,
                bad_v: s.bad_v,
                t16: s.t16,
                hi: opsel & (1 << k) != 0,
            };
            let op = match op {
                Operand::InlineInt(_) | Operand::InlineFloat(_) if raw => {
                    Operand::Literal(u32::from(src_fields(self.w1)[1]))
                }
                op => op,
            };
            let slot = Slot {
                plain: slot.plain || raw && matches!(op, Operand::Literal(_)),
                ..slot
            };
            let k = k as u16;
            let neg = has(M_NEG + k) && m & (1 << (M_NEG + k)) != 0;
            let abs = has(M_ABS + k) && !row.sdst && m & (1 << (M_ABS + k)) != 0;
            fmt_mod_src(f, &op, &slot, neg, abs, &mut warn)?;
        }
        if interp && src_fields(self.w1)[0] & 0x100 != 0 {
            f.write_str(" high")?;
        }
        // A VOPC's DPP form prints no destination select.
        let layout = if self.dpp.is_some() && row.dst == Dst::Mask {
            (row.opsel & 7).min(row.srcs.len() as u8)
        } else {
            row.opsel
        };
        fmt_opsel(f, layout, opsel & (row.mods >> M_OPSEL))?;
        let byte_sel: u8 = (0..4)
            .filter(|k| opsel & (row.mods >> M_OPSEL) & (1 << k) != 0)
            .map(|k| row.byte_sel >> (2 * k) & 3)
            .sum();
        if byte_sel != 0 {
            write!(f, " byte_sel:{byte_sel}")?;
        }
        if has(M_CLAMP) && m & (1 << M_CLAMP) != 0 {
            f.write_str(" clamp")?;
        }
        if has(M_OMOD) || has(M_OMOD + 1) {
            fmt_omod(f, ((m >> M_OMOD) & 3) as u8)?;
        }
        match self.dpp {
            Some(d) if self.w1 & 0x1ff == 0xfa => fmt_dpp16(f, d)?,
            Some(d) => fmt_dpp8(
                f,
                dpp8_sel(d, row.dpp8_src, self.literal.unwrap_or(0)),
                self.w1 & 0x1ff == 0xea,
            )?,
            None => {}
        }
        warn.write(f)
    }
}
