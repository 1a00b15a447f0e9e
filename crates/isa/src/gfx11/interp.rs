//! The GFX11 interpolation encodings: VINTERP (64 bits: the parameter
//! interpolation ALU operations, with `wait_exp`) and LDSDIR (32 bits:
//! LDS parameter and direct loads, with `wait_vdst`). RDNA3 ISA manual,
//! "VINTERP", "LDSDIR".
//!
//! VINTERP word 0: vdst 7:0, wait_exp 10:8, op_sel 14:11, clamp 15, op
//! 22:16, 0xCD 31:24; word 1: src0 8:0, src1 17:9, src2 26:18, neg 31:29.
//! LDSDIR: vdst 7:0, attr_chan 9:8, attr 15:10, wait_vdst 19:16, op 21:20,
//! 0xCE 31:24.

use super::Inst;
use super::operand::{Operand, ValType, decode_src};
use super::sop::Raw;
use super::tables::vinterp::VINTERP;
use super::valu::{Slot, fmt_mod_src, fmt_v16, fmt_vgpr};
use crate::gfx9::sop::Warnings;
use crate::{DecodeError, Target};
use std::fmt;

/// One VINTERP opcode.
#[derive(Debug, PartialEq, Eq)]
pub struct InterpRow {
    pub op: u8,
    pub tg: u8,
    pub name: &'static str,
    /// 16-bit VGPR halves: bit k srcK, bit 3 vdst.
    pub t16: u8,
    /// op_sel is printed (four entries: the sources, then vdst).
    pub opsel: bool,
}

/// GFX11's rows.
pub static TABLES: &[InterpRow] = VINTERP;

fn row_of(
    rows: &'static [InterpRow],
    op: u32,
    target: Target,
) -> Option<(usize, &'static InterpRow)> {
    rows.iter()
        .enumerate()
        .find(|(_, r)| u32::from(r.op) == op && r.tg & target.bit() != 0)
}

/// Decodes a VINTERP instruction (8 bytes, 12 with a literal) with the
/// family's rows: the row, length and dwords.
pub(crate) fn decode_vinterp(
    rows: &'static [InterpRow],
    target: Target,
    w0: u32,
    bytes: &[u8],
) -> Result<Raw, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let (i, row) = row_of(rows, (w0 >> 16) & 0x7f, target).ok_or(invalid.clone())?;
    let mut lit = false;
    for k in 0..3 {
        let v = ((w1 >> (9 * k)) & 0x1ff) as u16;
        if row.t16 & (1 << k) == 0 {
            if decode_src(v, 1, Some(0)).is_none() {
                return Err(invalid);
            }
            lit |= v == 255;
        }
    }
    let (w2, len) = if lit {
        (super::word(bytes, 2)?, 12)
    } else {
        (0, 8)
    };
    Ok((i as u16, len, [w0, w1, w2, 0]))
}

/// A decoded VINTERP instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Vinterp {
    pub row: &'static InterpRow,
    pub w0: u32,
    pub w1: u32,
    pub literal: Option<u32>,
}

impl Vinterp {
    pub(crate) fn from_raw(
        rows: &'static [InterpRow],
        r: usize,
        len: u8,
        [w0, w1, w2]: [u32; 3],
    ) -> Vinterp {
        Vinterp {
            row: &rows[r],
            w0,
            w1,
            literal: (len == 12).then_some(w2),
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
        out.extend_from_slice(&self.w1.to_le_bytes());
        if let Some(l) = self.literal {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }
}

impl fmt::Display for Vinterp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = self.row;
        let opsel = (self.w0 >> 11) & 0xf;
        let mut warn = Warnings::default();
        write!(f, "{} ", row.name)?;
        let vdst = (self.w0 & 0xff) as u16;
        if row.t16 & 8 != 0 {
            fmt_v16(f, vdst, row.opsel && opsel & 8 != 0)?;
        } else {
            fmt_vgpr(f, vdst, 1)?;
        }
        for k in 0..3 {
            f.write_str(", ")?;
            let v = ((self.w1 >> (9 * k)) & 0x1ff) as u16;
            let neg = self.w1 >> (29 + k) & 1 != 0;
            if row.t16 & (1 << k) != 0 {
                // A 16-bit source is a VGPR whatever bit 8 says.
                if neg {
                    f.write_str("-")?;
                }
                fmt_v16(f, v & 0xff, row.opsel && opsel >> k & 1 != 0)?;
                continue;
            }
            let Some(op) = decode_src(v, 1, self.literal) else {
                continue;
            };
            let slot = Slot {
                width: 1,
                ty: ValType::I32,
                plain: true,
                bad_const: true,
                bad_s: "VGPR_32",
                bad_v: "",
                t16: false,
                hi: false,
            };
            let _: &Operand = &op;
            fmt_mod_src(f, &op, &slot, neg, false, &mut warn)?;
        }
        if self.w0 & 1 << 15 != 0 {
            f.write_str(" clamp")?;
        }
        if row.opsel && opsel != 0 {
            write!(
                f,
                " op_sel:[{},{},{},{}]",
                opsel & 1,
                opsel >> 1 & 1,
                opsel >> 2 & 1,
                opsel >> 3 & 1
            )?;
        }
        write!(f, " wait_exp:{}", (self.w0 >> 8) & 7)?;
        warn.write(f)
    }
}

/// Decodes an LDSDIR instruction (4 bytes).
pub(crate) fn decode_ldsdir(target: Target, wave64: bool, w0: u32) -> Result<Inst, DecodeError> {
    if w0 & 0x00e0_0000 != 0 {
        return Err(DecodeError::Invalid { target, word: w0 });
    }
    Ok(Inst::new(target, wave64, 0, 4, [w0, 0, 0, 0]))
}

/// A decoded LDSDIR instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Ldsdir {
    pub w0: u32,
}

impl Ldsdir {
    /// `lds_direct_load` (op 1) or `lds_param_load` (op 0).
    pub fn mnemonic(&self) -> &'static str {
        if self.w0 & 1 << 20 != 0 {
            "lds_direct_load"
        } else {
            "lds_param_load"
        }
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
    }
}

impl fmt::Display for Ldsdir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.w0;
        write!(f, "{} v{}", self.mnemonic(), w & 0xff)?;
        if w & 1 << 20 == 0 {
            let chan = ['x', 'y', 'z', 'w'][((w >> 8) & 3) as usize];
            write!(f, ", attr{}.{chan}", (w >> 10) & 0x3f)?;
        }
        write!(f, " wait_vdst:{}", (w >> 16) & 0xf)
    }
}
