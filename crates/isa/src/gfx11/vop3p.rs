//! The GFX11 VOP3P encoding: packed 16-bit math, dot products, `fma_mix`
//! and WMMA, with an optional literal and `_e64_dpp` forms (RDNA3 ISA
//! manual, "VOP3P").
//!
//! Word 0: vdst 7:0, neg_hi 10:8, op_sel 13:11, op_sel_hi[2] 14, clamp 15,
//! op 22:16, 0xCC 31:24. Word 1: src0 8:0, src1 17:9, src2 26:18,
//! op_sel_hi[1:0] 28:27, neg_lo 31:29.
//!
//! LLVM prints each modifier as a list with an entry per source, when one
//! differs from its default (op_sel_hi defaults to 1 on packed opcodes);
//! the mix opcodes print neg_lo and neg_hi as `-` and `|...|` on the
//! sources instead.

use super::operand::{Operand, Sregs, ValType};
use super::sop::Raw;
use super::tables::vop3p::VOP3P;
use super::valu::{Slot, fmt_mod_src, fmt_vgpr};
use super::vop::{dpp8_sel, fmt_dpp8, fmt_dpp16};
use super::vop3::{DPP8, DPP16, NO_CONST, PLAIN, REJECT_CONST};
use crate::gfx9::sop::Warnings;
use crate::{DecodeError, Target};
use std::fmt;

/// A VOP3P source slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PSrc {
    /// Width in dwords in wave32 and wave64.
    pub w: [u8; 2],
    /// How constants print, in wave32 and wave64.
    pub ty: [ValType; 2],
    /// How constants print in the `_e64_dpp` forms.
    pub dpp_ty: ValType,
    pub bad_s: &'static str,
    pub bad_v: &'static str,
    pub flags: u8,
}

/// One VOP3P opcode.
#[derive(Debug, PartialEq, Eq)]
pub struct PRow {
    pub op: u8,
    pub tg: u8,
    pub name: &'static str,
    /// Destination VGPR width in wave32 and wave64.
    pub dst: [u8; 2],
    pub srcs: &'static [PSrc],
    /// op_sel_hi defaults to 1.
    pub packed: bool,
    /// neg_lo/neg_hi are the sources' neg/abs.
    pub mix: bool,
    pub zero_src: u8,
    /// DPP forms ([`DPP16`], [`DPP8`]) and, bits 2..7, the DPP16 dword's
    /// bits 18..23 LLVM rejects.
    pub dpp: u8,
    /// Sources (bit k) the DPP form takes as VGPRs only: an SGPR prints
    /// with a `VGPR_32` note, a constant as an invalid immediate.
    pub dpp_vgpr: u8,
    /// LLVM reads the DPP8 selector through its source-operand decoder
    /// (see [`super::vop::dpp8_sel`]).
    pub dpp8_src: bool,
    /// Modifier bits LLVM rejects when they differ from the row's base word
    /// (op_sel_hi set on packed opcodes) / prints (bit i < 8: word 0 bit
    /// 8+i; 8+j: word 1 bit 27+j); `zero` per wave size (wave32, wave64).
    pub zero: [u16; 2],
    pub mods: u16,
    /// op_sel bits printed as `index_key` (GFX12's SWMMAC): bits 2k+1:2k
    /// hold the value op_sel bit k adds.
    pub index_key: u8,
}

/// One family's VOP3P rows (a generated `tables/vop3p.rs`) with the row
/// index per (target bit, opcode).
pub struct Vop3pTables {
    pub rows: &'static [PRow],
    idx: [[u8; 128]; 2],
    /// The family's numbering of m0 and null.
    pub sregs: Sregs,
}

impl Vop3pTables {
    pub const fn new(rows: &'static [PRow]) -> Vop3pTables {
        let mut t = [[u8::MAX; 128]; 2];
        let mut i = rows.len();
        while i > 0 {
            i -= 1;
            let r = &rows[i];
            let mut k = 0;
            while k < 2 {
                if r.tg & (1 << k) != 0 {
                    t[k][r.op as usize] = i as u8;
                }
                k += 1;
            }
        }
        Vop3pTables {
            rows,
            idx: t,
            sregs: Sregs::Gfx11,
        }
    }

    /// The tables with GFX10's numbering of m0 and null.
    pub const fn gfx10(self) -> Vop3pTables {
        Vop3pTables {
            sregs: Sregs::Gfx10,
            ..self
        }
    }
}

/// GFX11's tables.
pub static TABLES: Vop3pTables = Vop3pTables::new(VOP3P);

fn mod_bits(w0: u32, w1: u32) -> u16 {
    ((w0 >> 8) & 0xff) as u16 | (((w1 >> 27) & 0x1f) as u16) << 8
}

/// The modifier bits of the word an opcode's row was learned from:
/// op_sel_hi set on packed opcodes. A `zero` bit must keep this value.
fn base_bits(row: &PRow) -> u16 {
    if row.packed { 1 << 6 | 3 << 8 } else { 0 }
}

fn src_fields(w1: u32) -> [u16; 3] {
    [0, 9, 18].map(|s| ((w1 >> s) & 0x1ff) as u16)
}

/// Decodes a VOP3P instruction (8 bytes; 12 with a literal or DPP dword,
/// 16 with both) with the family's tables: the row, length and dwords.
pub(crate) fn decode(
    t: &'static Vop3pTables,
    target: Target,
    wave64: bool,
    w0: u32,
    bytes: &[u8],
) -> Result<Raw, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let i = t.idx[target.index() & 1][((w0 >> 16) & 0x7f) as usize];
    let row = t.rows.get(usize::from(i)).ok_or(invalid.clone())?;
    // Bit 23 is not part of the opcode and must be clear, except in the
    // GFX9 layout LLVM accepts for the fma_mix opcodes (no DPP there).
    let gfx9 = gfx9_layout(w0);
    if (gfx9 && !row.mix)
        || (!gfx9 && w0 & 1 << 23 != 0)
        || (mod_bits(w0, w1) ^ base_bits(row)) & row.zero[usize::from(wave64)] != 0
    {
        return Err(invalid);
    }
    let fields = src_fields(w1);
    let dpp = match fields[0] {
        _ if gfx9 => false,
        0xfa if row.dpp & DPP16 != 0 => {
            let d = super::word(bytes, 2)?;
            if (d >> 18) as u8 & 0x3f & (row.dpp >> 2) != 0 {
                return Err(invalid);
            }
            true
        }
        0xe9 | 0xea if row.dpp & DPP8 != 0 => true,
        _ => false,
    };
    // A DPP control or selector LLVM reads as the literal source.
    let mut lit = dpp
        && match fields[0] {
            0xfa => mixhi_ctrl(row) && (super::word(bytes, 2)? >> 8) & 0x1ff == 0xff,
            _ => row.dpp8_src && super::word(bytes, 2)? >> 8 == 0xff,
        };
    for (k, &v) in fields.iter().enumerate() {
        match row.srcs.get(k) {
            Some(_) if k == 0 && dpp => {}
            Some(s) => {
                let ok = match t.sregs.decode_src(v, s.w[usize::from(wave64)], Some(0)) {
                    None => false,
                    Some(Operand::InlineInt(_) | Operand::InlineFloat(_) | Operand::Literal(_)) => {
                        s.flags & REJECT_CONST == 0
                    }
                    Some(_) => true,
                };
                if !ok {
                    return Err(invalid);
                }
                lit |= v == 255;
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
    Ok((u16::from(i), len as u8, words))
}

/// Whether `w0` is in the GFX9 VOP3P layout (high byte 0xD3, bit 23 set).
fn gfx9_layout(w0: u32) -> bool {
    w0 >> 24 == 0xd3
}

/// LLVM 22 decodes the DPP16 control of `v_fma_mixlo_f16` and
/// `v_fma_mixhi_f16` (16-bit results merged into the destination) as a
/// source operand: an inline integer
/// stands for its value, other constants for theirs, 255 for the literal.
fn mixhi_ctrl(row: &PRow) -> bool {
    matches!(row.name, "v_fma_mixhi_f16" | "v_fma_mixlo_f16")
}

/// The DPP16 control LLVM prints for `v_fma_mixhi_f16` (see
/// [`mixhi_ctrl`]); `None` for a value it prints as invalid.
fn mixhi_ctrl_value(c: u32, literal: Option<u32>) -> Option<u32> {
    match c {
        0x80..=0xc0 => Some(c - 0x80),
        0xc1..=0xd0 | 0xf0..=0xf8 => None,
        0xff => literal,
        _ => Some(c),
    }
}

/// A decoded VOP3P instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Vop3p {
    pub row: &'static PRow,
    pub wave64: bool,
    /// The family's numbering of m0 and null.
    pub sregs: Sregs,
    pub w0: u32,
    pub w1: u32,
    pub dpp: Option<u32>,
    pub literal: Option<u32>,
}

impl Vop3p {
    pub(crate) fn from_raw(
        t: &'static Vop3pTables,
        r: usize,
        wave64: bool,
        len: u8,
        words: [u32; 4],
    ) -> Vop3p {
        let [w0, w1, w2, w3] = words;
        let row = &t.rows[r];
        let dpp = row.dpp & 3 != 0 && !gfx9_layout(w0) && matches!(w1 & 0x1ff, 0xfa | 0xe9 | 0xea);
        let base = if dpp { 12 } else { 8 };
        Vop3p {
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
        for w in [Some(self.w0), Some(self.w1), self.dpp, self.literal]
            .into_iter()
            .flatten()
        {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// Source `k`'s operand, if the opcode has it.
    pub fn src(&self, k: usize) -> Option<Operand> {
        let s = self.row.srcs.get(k)?;
        let v = match self.dpp {
            Some(d) if k == 0 => 256 | (d & 0xff) as u16,
            _ => src_fields(self.w1)[k],
        };
        self.sregs
            .decode_src(v, s.w[usize::from(self.wave64)], self.literal)
    }
}

/// Writes ` NAME:[a,b,c]` for `n` entries of `bits` (entry k at bit k) when
/// one differs from `default`.
fn fmt_list(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    n: usize,
    bits: u16,
    default: bool,
) -> fmt::Result {
    if (0..n).all(|k| (bits >> k & 1 != 0) == default) {
        return Ok(());
    }
    write!(f, " {name}:[")?;
    for k in 0..n {
        if k > 0 {
            f.write_str(",")?;
        }
        write!(f, "{}", bits >> k & 1)?;
    }
    f.write_str("]")
}

impl fmt::Display for Vop3p {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = self.row;
        let w = usize::from(self.wave64);
        let m = mod_bits(self.w0, self.w1);
        // A modifier bit LLVM does not decode reads as its default.
        let bit = |i: u16, default: bool| -> bool {
            if row.mods & (1 << i) != 0 {
                m & (1 << i) != 0
            } else {
                default
            }
        };
        let mut warn = Warnings::default();
        f.write_str(row.name)?;
        if self.dpp.is_some() {
            f.write_str("_e64_dpp")?;
        }
        f.write_str(" ")?;
        fmt_vgpr(f, (self.w0 & 0xff) as u16, row.dst[w])?;
        let n = row.srcs.len();
        for (k, s) in row.srcs.iter().enumerate() {
            f.write_str(", ")?;
            let Some(op) = self.src(k) else { continue };
            let vgpr_only = self.dpp.is_some() && row.dpp_vgpr & (1 << k) != 0;
            let slot = Slot {
                width: s.w[w],
                ty: if self.dpp.is_some() {
                    s.dpp_ty
                } else {
                    s.ty[w]
                },
                plain: s.flags & PLAIN != 0 || vgpr_only,
                bad_const: s.flags & NO_CONST != 0 || vgpr_only,
                bad_s: if vgpr_only { "VGPR_32" } else { s.bad_s },
                bad_v: s.bad_v,
                t16: false,
                hi: false,
            };
            let k = k as u16;
            let (neg, abs) = if row.mix {
                (bit(10 + k, false), bit(k, false))
            } else {
                (false, false)
            };
            fmt_mod_src(f, &op, &slot, neg, abs, &mut warn)?;
        }
        let gather = |ids: [u16; 3], default: bool| -> u16 {
            (0..3).map(|k| u16::from(bit(ids[k], default)) << k).sum()
        };
        let opsel = gather([3, 4, 5], false);
        let key_bits = (0..3)
            .filter(|k| row.index_key >> (2 * k) & 3 != 0)
            .map(|k| 1 << k)
            .sum::<u16>();
        fmt_list(f, "op_sel", n, opsel & !key_bits, false)?;
        fmt_list(f, "op_sel_hi", n, gather([8, 9, 6], row.packed), row.packed)?;
        let index_key: u8 = (0..3)
            .filter(|k| opsel & key_bits & (1 << k) != 0)
            .map(|k| row.index_key >> (2 * k) & 3)
            .sum();
        if index_key != 0 {
            write!(f, " index_key:{index_key}")?;
        }
        if !row.mix {
            fmt_list(f, "neg_lo", n, gather([10, 11, 12], false), false)?;
            fmt_list(f, "neg_hi", n, gather([0, 1, 2], false), false)?;
        }
        if bit(7, false) {
            f.write_str(" clamp")?;
        }
        match self.dpp {
            Some(d) if self.w1 & 0x1ff == 0xfa && mixhi_ctrl(row) => {
                match mixhi_ctrl_value((d >> 8) & 0x1ff, self.literal) {
                    Some(c) if c <= 0x1ff => fmt_dpp16(f, d & !(0x1ff << 8) | c << 8)?,
                    _ => {
                        // An out-of-range control prints as invalid.
                        fmt_dpp16(f, d | 0x1ff << 8)?
                    }
                }
            }
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
