//! The GFX11 buffer encodings MUBUF and MTBUF (typed), 64 bits plus a
//! literal when soffset is 255.
//!
//! MUBUF: offset 11:0, slc 12, dlc 13, glc 14, op 25:18, 0b111000 31:26.
//! MTBUF: offset 11:0, slc 12, dlc 13, glc 14, op 18:15, format 25:19,
//! 0b111010 31:26. Both: vaddr 39:32, vdata 47:40, srsrc 52:48 (in SGPR
//! quads), tfe 53, offen 54, idxen 55, soffset 63:56. Opcode facts, the
//! soffset texts and the format names come from `tables/mubuf.rs`.

use super::Inst;
use super::operand::decode_stuple;
use super::tables::mubuf::*;
use super::valu::fmt_vgpr;
use crate::gfx9::sop::{Warnings, fmt_sop};
use crate::{DecodeError, Target};
use std::fmt;

/// One form of an opcode (glc clear or set).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BufForm {
    pub fix: u64,
    pub val: u64,
    /// vdata width in dwords ([`BARE`]: no operands at all).
    pub data: u8,
}

/// [`BufForm::data`] of an opcode printed without operands.
pub const BARE: u8 = 0xff;

/// One MUBUF or MTBUF opcode.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BufOp {
    pub name: &'static str,
    pub forms: [Option<BufForm>; 2],
}

fn row(target: Target, mtbuf: bool, w0: u32) -> u8 {
    let g = target == Target::Gfx1151;
    if mtbuf {
        let t = if g { &MTBUF_GFX1151 } else { &MTBUF_GFX1100 };
        t[((w0 >> 15) & 0xf) as usize]
    } else {
        let t = if g { &MUBUF_GFX1151 } else { &MUBUF_GFX1100 };
        t[((w0 >> 18) & 0xff) as usize]
    }
}

/// Decodes a MUBUF (`mtbuf` false) or MTBUF instruction.
pub(crate) fn decode(
    target: Target,
    wave64: bool,
    w0: u32,
    bytes: &[u8],
    mtbuf: bool,
) -> Result<Inst, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let r = row(target, mtbuf, w0);
    let op = BUF_OPS.get(usize::from(r)).ok_or(invalid.clone())?;
    let form = op.forms[((w0 >> 14) & 1) as usize].ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & form.fix != form.val {
        return Err(invalid);
    }
    let mut len = 8;
    if form.data != BARE {
        let soff = (w1 >> 24) as usize;
        if decode_stuple(((w1 >> 16) & 0x1f) as u16 * 4, 4).is_none()
            || soff != 255 && SOFFSET[soff].is_none()
            || mtbuf && FORMATS[((w0 >> 19) & 0x7f) as usize].is_none()
        {
            return Err(invalid);
        }
        if soff == 255 {
            super::word(bytes, 2)?;
            len = 12;
        }
    }
    let w2 = if len == 12 { super::word(bytes, 2)? } else { 0 };
    Ok(Inst::new(
        target,
        wave64,
        u16::from(r),
        len,
        [w0, w1, w2, 0],
    ))
}

/// A decoded MUBUF or MTBUF instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Buf {
    pub op: &'static BufOp,
    pub mtbuf: bool,
    pub w0: u32,
    pub w1: u32,
    /// The literal soffset.
    pub literal: Option<u32>,
}

impl Buf {
    pub(crate) fn from_raw(r: usize, mtbuf: bool, len: u8, w0: u32, w1: u32, w2: u32) -> Buf {
        Buf {
            op: &BUF_OPS[r],
            mtbuf,
            w0,
            w1,
            literal: (len == 12).then_some(w2),
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.op.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
        out.extend_from_slice(&self.w1.to_le_bytes());
        if let Some(l) = self.literal {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }
}

impl fmt::Display for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (w0, w1) = (self.w0, self.w1);
        let form = self.op.forms[((w0 >> 14) & 1) as usize];
        let data = form.map_or(0, |x| x.data);
        f.write_str(self.op.name)?;
        if data == BARE {
            return Ok(());
        }
        let (tfe, offen, idxen) = (w1 >> 21 & 1 != 0, w1 >> 22 & 1 != 0, w1 >> 23 & 1 != 0);
        let mut warn = Warnings::default();
        f.write_str(" ")?;
        if data > 0 {
            fmt_vgpr(f, ((w1 >> 8) & 0xff) as u16, data + u8::from(tfe))?;
            f.write_str(", ")?;
        }
        let vaddr = (w1 & 0xff) as u16;
        match (offen, idxen) {
            (false, false) => f.write_str("off")?,
            (true, true) => fmt_vgpr(f, vaddr, 2)?,
            _ => fmt_vgpr(f, vaddr, 1)?,
        }
        f.write_str(", ")?;
        if let Some(op) = decode_stuple(((w1 >> 16) & 0x1f) as u16 * 4, 4) {
            fmt_sop(f, &op, 4, &mut warn)?;
        }
        f.write_str(", ")?;
        let soff = (w1 >> 24) as usize;
        let mut note = None;
        match self.literal {
            Some(l) => super::operand::fmt_literal(f, l, super::operand::ValType::I32)?,
            None => {
                let text = SOFFSET[soff].unwrap_or("");
                let (t, w) = match text.split_once(" ; ") {
                    Some((a, b)) => (a, Some(b)),
                    None => (text, None),
                };
                note = w;
                f.write_str(t)?;
            }
        }
        if self.mtbuf {
            let fmt_name = FORMATS[((w0 >> 19) & 0x7f) as usize].unwrap_or("");
            if !fmt_name.is_empty() {
                write!(f, " format:{fmt_name}")?;
            }
        }
        if idxen {
            f.write_str(" idxen")?;
        }
        if offen {
            f.write_str(" offen")?;
        }
        let off = w0 & 0xfff;
        if off != 0 {
            write!(f, " offset:{off}")?;
        }
        for (bit, name) in [(14, " glc"), (12, " slc"), (13, " dlc")] {
            if w0 & 1 << bit != 0 {
                f.write_str(name)?;
            }
        }
        if tfe {
            f.write_str(" tfe")?;
        }
        if let Some(n) = note {
            write!(f, " ; {n}")?;
        }
        warn.write(f)
    }
}
