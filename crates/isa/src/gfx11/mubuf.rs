//! The GFX11 buffer encodings MUBUF and MTBUF (typed), 64 bits plus a
//! literal when soffset is 255.
//!
//! MUBUF: offset 11:0, slc 12, dlc 13, glc 14, op 25:18, 0b111000 31:26.
//! MTBUF: offset 11:0, slc 12, dlc 13, glc 14, op 18:15, format 25:19,
//! 0b111010 31:26. Both: vaddr 39:32, vdata 47:40, srsrc 52:48 (in SGPR
//! quads), tfe 53, offen 54, idxen 55, soffset 63:56. GFX10 has the same
//! fields elsewhere (offen 12, idxen 13, dlc 15, an lds bit 16, slc 54, tfe
//! 55; MUBUF op 24:18; MTBUF op 18:16 with its bit 3 at 53): see
//! [`BufTables`]. Opcode facts, the soffset texts and the format names
//! come from `tables/mubuf.rs`.

use super::operand::{Sregs, decode_stuple};
use super::sop::Raw;
use super::tables::mubuf::*;
use super::valu::fmt_vgpr;
use crate::gfx9::sop::{Warnings, fmt_sop};
use crate::{DecodeError, Target};
use std::fmt;

/// One form of an opcode (glc clear or set, lds clear or set).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BufForm {
    pub fix: u64,
    pub val: u64,
    /// vdata width in dwords ([`BARE`]: no operands at all).
    pub data: u8,
}

/// [`BufForm::data`] of an opcode printed without operands.
pub const BARE: u8 = 0xff;

/// One MUBUF or MTBUF opcode: its forms, indexed by `glc | lds << 1`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BufOp {
    pub name: &'static str,
    pub forms: [Option<BufForm>; 4],
}

/// One family's buffer opcodes and the positions of its fields, as bit
/// numbers of the 64-bit instruction (the second dword from 32).
#[derive(Debug, PartialEq)]
pub struct BufTables {
    pub ops: &'static [BufOp],
    /// Row of `ops` per MUBUF / MTBUF opcode, per target index (0xff: none).
    pub mubuf: [&'static [u8; 256]; 2],
    pub mtbuf: [&'static [u8; 16]; 2],
    /// How each soffset value prints (`None`: invalid; 255: a literal).
    pub soffset: &'static [Option<&'static str>; 256],
    /// MTBUF format names ("": the default, not printed; `None`: invalid).
    pub formats: &'static [Option<&'static str>; 128],
    pub glc: u32,
    pub slc: u32,
    pub dlc: u32,
    pub tfe: u32,
    pub offen: u32,
    pub idxen: u32,
    /// GFX10's lds bit (a load to LDS: no vdata).
    pub lds: Option<u32>,
    /// The family's numbering of m0 and null (srsrc may name them).
    pub sregs: Sregs,
    /// The MUBUF opcode field: shift and width.
    pub mubuf_op: (u32, u32),
    /// The MTBUF opcode field: shift, width and where its high bit sits
    /// (GFX10: bit 53).
    pub mtbuf_op: (u32, u32, Option<u32>),
}

/// GFX11's tables.
pub static TABLES: BufTables = BufTables {
    ops: &BUF_OPS,
    mubuf: [&MUBUF_GFX1100, &MUBUF_GFX1151],
    mtbuf: [&MTBUF_GFX1100, &MTBUF_GFX1151],
    soffset: &SOFFSET,
    formats: &FORMATS,
    glc: 14,
    slc: 12,
    dlc: 13,
    tfe: 53,
    offen: 54,
    idxen: 55,
    lds: None,
    sregs: Sregs::Gfx11,
    mubuf_op: (18, 8),
    mtbuf_op: (15, 4, None),
};

impl BufTables {
    fn row(&self, target: Target, mtbuf: bool, all: u64) -> u8 {
        let t = target.index() & 1;
        if mtbuf {
            let (sh, w, hi) = self.mtbuf_op;
            let mut op = (all >> sh) & ((1 << w) - 1);
            if let Some(b) = hi {
                op |= (all >> b & 1) << w;
            }
            self.mtbuf[t][op as usize & 15]
        } else {
            let (sh, w) = self.mubuf_op;
            self.mubuf[t][((all >> sh) & ((1 << w) - 1)) as usize & 255]
        }
    }

    /// The form index of an instruction: `glc | lds << 1` (MTBUF has no
    /// lds bit).
    fn form_index(&self, mtbuf: bool, all: u64) -> usize {
        let lds = !mtbuf && self.lds.is_some_and(|b| all >> b & 1 != 0);
        ((all >> self.glc) & 1) as usize | usize::from(lds) << 1
    }
}

/// Decodes a MUBUF (`mtbuf` false) or MTBUF instruction.
pub(crate) fn decode(
    t: &'static BufTables,
    target: Target,
    w0: u32,
    bytes: &[u8],
    mtbuf: bool,
) -> Result<Raw, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    let r = t.row(target, mtbuf, all);
    let op = t.ops.get(usize::from(r)).ok_or(invalid.clone())?;
    let form = op.forms[t.form_index(mtbuf, all)].ok_or(invalid.clone())?;
    if all & form.fix != form.val {
        return Err(invalid);
    }
    let mut len = 8;
    if form.data != BARE {
        let soff = (w1 >> 24) as usize;
        if decode_stuple(t.sregs.field(((w1 >> 16) & 0x1f) as u16 * 4), 4).is_none()
            || soff != 255 && t.soffset[soff].is_none()
            || mtbuf && t.formats[((w0 >> 19) & 0x7f) as usize].is_none()
        {
            return Err(invalid);
        }
        if soff == 255 {
            super::word(bytes, 2)?;
            len = 12;
        }
    }
    let w2 = if len == 12 { super::word(bytes, 2)? } else { 0 };
    Ok((u16::from(r), len, [w0, w1, w2, 0]))
}

/// A decoded MUBUF or MTBUF instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Buf {
    pub t: &'static BufTables,
    pub op: &'static BufOp,
    pub mtbuf: bool,
    pub w0: u32,
    pub w1: u32,
    /// The literal soffset.
    pub literal: Option<u32>,
}

impl Buf {
    pub(crate) fn from_raw(
        t: &'static BufTables,
        r: usize,
        mtbuf: bool,
        len: u8,
        w0: u32,
        w1: u32,
        w2: u32,
    ) -> Buf {
        Buf {
            t,
            op: &t.ops[r],
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
        let (w0, w1, t) = (self.w0, self.w1, self.t);
        let all = u64::from(w0) | (u64::from(w1) << 32);
        let form = self.op.forms[t.form_index(self.mtbuf, all)];
        let data = form.map_or(0, |x| x.data);
        f.write_str(self.op.name)?;
        if data == BARE {
            return Ok(());
        }
        let bit = |b: u32| all >> b & 1 != 0;
        let (tfe, offen, idxen) = (bit(t.tfe), bit(t.offen), bit(t.idxen));
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
        if let Some(op) = decode_stuple(t.sregs.field(((w1 >> 16) & 0x1f) as u16 * 4), 4) {
            fmt_sop(f, &op, 4, &mut warn)?;
        }
        f.write_str(", ")?;
        let soff = (w1 >> 24) as usize;
        let mut note = None;
        match self.literal {
            Some(l) => super::operand::fmt_literal(f, l, super::operand::ValType::I32)?,
            None => {
                let text = t.soffset[soff].unwrap_or("");
                let (t, w) = match text.split_once(" ; ") {
                    Some((a, b)) => (a, Some(b)),
                    None => (text, None),
                };
                note = w;
                f.write_str(t)?;
            }
        }
        if self.mtbuf {
            let fmt_name = t.formats[((w0 >> 19) & 0x7f) as usize].unwrap_or("");
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
        for (b, name) in [(t.glc, " glc"), (t.slc, " slc"), (t.dlc, " dlc")] {
            if bit(b) {
                f.write_str(name)?;
            }
        }
        if !self.mtbuf && t.lds.is_some_and(bit) {
            f.write_str(" lds")?;
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
