//! The GFX12 VBUFFER encoding (buffer and typed-buffer loads, stores and
//! atomics), 96 bits: soffset 6:0, nv 7, op 21:14 (tbuffer at 0x80-0x8f),
//! tfe 22, 0b110001 31:26; vdata 39:32, rsrc 47:41 (an SGPR quad), scope
//! 51:50, th 54:52, format 61:55, offen 62, idxen 63; vaddr 71:64, a
//! 24-bit offset 95:72. RDNA4 ISA manual, "VBUFFER". Opcode facts, the
//! soffset texts and the format names come from `tables/vbuffer.rs`
//! (learned from LLVM 22).

use super::cpol::{ThKind, fmt_th_scope};
use super::tables::vbuffer::{BUF, BUF_OPS, FORMATS, SOFFSET};
use crate::gfx9::sop::{Warnings, fmt_sop};
use crate::gfx11::operand::decode_stuple;
use crate::gfx11::valu::fmt_vgpr;
use crate::{DecodeError, Target};
use std::fmt;

/// One form of an opcode (th bit 0 clear or set).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BufForm {
    /// Bits of the first two dwords (dword 1 high) that must equal `val`.
    pub fix: u64,
    pub val: u64,
    /// vdata width in dwords (0: none; [`BARE`]: no operands at all).
    pub data: u8,
    /// How th reads.
    pub th: ThKind,
    /// LLVM accepts an offset with bit 23 set.
    pub negative: bool,
}

/// [`BufForm::data`] of an opcode without operands.
pub const BARE: u8 = 0xff;

/// One opcode: its forms with th bit 0 clear and set.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BufOp {
    pub name: &'static str,
    pub forms: [Option<BufForm>; 2],
}

pub(crate) fn form_of(op: &BufOp, w1: u32) -> Option<BufForm> {
    op.forms[((w1 >> 20) & 1) as usize]
}

fn is_tbuffer(w0: u32) -> bool {
    (w0 >> 14) & 0xf0 == 0x80
}

/// Decodes a VBUFFER instruction (12 bytes): the row and the dwords.
pub(crate) fn decode(
    target: Target,
    w0: u32,
    bytes: &[u8],
) -> Result<(u16, [u32; 3]), DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = crate::gfx9::word(bytes, 1)?;
    let w2 = crate::gfx9::word(bytes, 2)?;
    let row = BUF[((w0 >> 14) & 0xff) as usize];
    let op = BUF_OPS.get(usize::from(row)).ok_or(invalid.clone())?;
    let form = form_of(op, w1).ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & form.fix != form.val
        || !form.negative && w2 >> 31 != 0
        || SOFFSET[(w0 & 0x7f) as usize].is_none()
        || decode_stuple(((w1 >> 9) & 0x7f) as u16, 4).is_none()
        || is_tbuffer(w0) && FORMATS[((w1 >> 23) & 0x7f) as usize].is_none()
    {
        return Err(invalid);
    }
    Ok((u16::from(row), [w0, w1, w2]))
}

/// A decoded VBUFFER instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Buf {
    pub op: &'static BufOp,
    pub w0: u32,
    pub w1: u32,
    pub w2: u32,
}

impl Buf {
    pub(crate) fn from_raw(r: usize, [w0, w1, w2]: [u32; 3]) -> Buf {
        Buf {
            op: &BUF_OPS[r],
            w0,
            w1,
            w2,
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.op.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        for w in [self.w0, self.w1, self.w2] {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
}

impl fmt::Display for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (w0, w1) = (self.w0, self.w1);
        let Some(form) = form_of(self.op, w1) else {
            return f.write_str(self.op.name);
        };
        f.write_str(self.op.name)?;
        if form.data == BARE {
            return Ok(());
        }
        let (tfe, offen, idxen) = (w0 >> 22 & 1 != 0, w1 >> 30 & 1 != 0, w1 >> 31 != 0);
        let mut warn = Warnings::default();
        f.write_str(" ")?;
        if form.data > 0 {
            fmt_vgpr(f, (w1 & 0xff) as u16, form.data + u8::from(tfe))?;
            f.write_str(", ")?;
        }
        let vaddr = (self.w2 & 0xff) as u16;
        match (offen, idxen) {
            (false, false) => f.write_str("off")?,
            (true, true) => fmt_vgpr(f, vaddr, 2)?,
            _ => fmt_vgpr(f, vaddr, 1)?,
        }
        f.write_str(", ")?;
        if let Some(op) = decode_stuple(((w1 >> 9) & 0x7f) as u16, 4) {
            fmt_sop(f, &op, 4, &mut warn)?;
        }
        f.write_str(", ")?;
        let text = SOFFSET[(w0 & 0x7f) as usize].unwrap_or("");
        let (soff, note) = match text.split_once(" ; ") {
            Some((a, b)) => (a, Some(b)),
            None => (text, None),
        };
        f.write_str(soff)?;
        if is_tbuffer(w0) {
            let name = FORMATS[((w1 >> 23) & 0x7f) as usize].unwrap_or("");
            if !name.is_empty() {
                write!(f, " format:{name}")?;
            }
        }
        if idxen {
            f.write_str(" idxen")?;
        }
        if offen {
            f.write_str(" offen")?;
        }
        let off = self.w2 >> 8;
        if off != 0 {
            write!(f, " offset:{off}")?;
        }
        fmt_th_scope(f, form.th, ((w1 >> 20) & 7) as u8, ((w1 >> 18) & 3) as u8)?;
        if w0 & 1 << 7 != 0 {
            f.write_str(" nv")?;
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
