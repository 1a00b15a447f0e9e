//! The GFX11 FLAT encoding with its segments FLAT (0), SCRATCH (1) and
//! GLOBAL (2), 64 bits: offset 12:0 (unsigned for FLAT, signed for the
//! others), dlc 13, glc 14, slc 15, seg 17:16, op 24:18; addr 39:32, data
//! 47:40, saddr 54:48 (`null`: off), sve 55 (SCRATCH: the VGPR address is
//! used), vdst 63:56. Opcode facts and the saddr texts come from
//! `tables/flat.rs` (learned from LLVM 22).

use super::Inst;
use super::tables::flat::{FLAT_GFX1100, FLAT_GFX1151, FLAT_OPS, SADDR};
use super::valu::fmt_vgpr;
use crate::{DecodeError, Target};
use std::fmt;

/// One form of an opcode (glc clear or set).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlatForm {
    /// Bits of the 64-bit instruction (dword 1 high) that must equal `val`.
    pub fix: u64,
    pub val: u64,
    /// vdst and data widths in dwords (0: not an operand).
    pub vdst: u8,
    pub data: u8,
    /// The address operand is printed.
    pub addr: bool,
}

/// One opcode: its forms with glc clear and set.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlatOp {
    pub name: &'static str,
    pub forms: [Option<FlatForm>; 2],
    /// The `SADDR` table of how LLVM prints each saddr value (0xff: FLAT,
    /// which has none).
    pub saddr: u8,
}

/// The null saddr: no scalar address.
const OFF: u32 = 0x7c;

fn table(target: Target) -> &'static [u8; 384] {
    if target == Target::Gfx1151 {
        &FLAT_GFX1151
    } else {
        &FLAT_GFX1100
    }
}

/// Decodes a FLAT, SCRATCH or GLOBAL instruction (8 bytes).
pub(crate) fn decode(
    target: Target,
    wave64: bool,
    w0: u32,
    bytes: &[u8],
) -> Result<Inst, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let seg = (w0 >> 16) & 3;
    if seg == 3 {
        return Err(invalid);
    }
    let i = (seg * 128 + ((w0 >> 18) & 0x7f)) as usize;
    let row = table(target)[i];
    let op = FLAT_OPS.get(usize::from(row)).ok_or(invalid.clone())?;
    let form = op.forms[((w0 >> 14) & 1) as usize].ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & form.fix != form.val {
        return Err(invalid);
    }
    let saddr = ((w1 >> 16) & 0x7f) as usize;
    if seg != 0 && SADDR[usize::from(op.saddr)][saddr].is_none() {
        return Err(invalid);
    }
    Ok(Inst::new(target, wave64, u16::from(row), 8, [w0, w1, 0, 0]))
}

/// A decoded FLAT, SCRATCH or GLOBAL instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Flat {
    pub op: &'static FlatOp,
    pub w0: u32,
    pub w1: u32,
}

impl Flat {
    pub(crate) fn from_raw(r: usize, w0: u32, w1: u32) -> Flat {
        Flat {
            op: &FLAT_OPS[r],
            w0,
            w1,
        }
    }

    pub fn seg(&self) -> u32 {
        (self.w0 >> 16) & 3
    }

    pub(crate) fn form(&self) -> FlatForm {
        self.op.forms[((self.w0 >> 14) & 1) as usize].unwrap_or(FlatForm {
            fix: 0,
            val: 0,
            vdst: 0,
            data: 0,
            addr: false,
        })
    }

    pub fn mnemonic(&self) -> &'static str {
        self.op.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
        out.extend_from_slice(&self.w1.to_le_bytes());
    }
}

impl fmt::Display for Flat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (w0, w1) = (self.w0, self.w1);
        let form = self.form();
        let seg = self.seg();
        let saddr = (w1 >> 16) & 0x7f;
        let addr = (w1 & 0xff) as u16;
        f.write_str(self.op.name)?;
        let mut sep = " ";
        if form.vdst > 0 {
            f.write_str(sep)?;
            fmt_vgpr(f, (w1 >> 24) as u16, form.vdst)?;
            sep = ", ";
        }
        if form.addr {
            f.write_str(sep)?;
            sep = ", ";
            match seg {
                0 => fmt_vgpr(f, addr, 2)?,
                1 if w1 & 1 << 23 != 0 => fmt_vgpr(f, addr, 1)?,
                1 => f.write_str("off")?,
                _ if saddr == OFF => fmt_vgpr(f, addr, 2)?,
                _ => fmt_vgpr(f, addr, 1)?,
            }
        }
        if form.data > 0 {
            f.write_str(sep)?;
            sep = ", ";
            fmt_vgpr(f, ((w1 >> 8) & 0xff) as u16, form.data)?;
        }
        let mut warn = None;
        if seg != 0 {
            let text = SADDR[usize::from(self.op.saddr)][saddr as usize].unwrap_or("");
            let (name, w) = match text.split_once(" ; ") {
                Some((a, b)) => (a, Some(b)),
                None => (text, None),
            };
            warn = w;
            write!(f, "{sep}{name}")?;
        }
        let off = w0 & 0x1fff;
        if off != 0 {
            if seg == 0 {
                write!(f, " offset:{off}")?;
            } else {
                write!(f, " offset:{}", ((off << 19) as i32) >> 19)?;
            }
        }
        for (bit, name) in [(14, " glc"), (15, " slc"), (13, " dlc")] {
            if w0 & 1 << bit != 0 {
                f.write_str(name)?;
            }
        }
        if let Some(w) = warn {
            write!(f, " ; {w}")?;
        }
        Ok(())
    }
}
