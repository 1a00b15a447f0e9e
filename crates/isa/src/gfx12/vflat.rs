//! The GFX12 VFLAT, VSCRATCH and VGLOBAL encodings (segments 0, 1, 2),
//! 96 bits: saddr 6:0 (`null`: off), nv 7, op 21:14, seg 25:24,
//! 0b111011 31:26; vdst 39:32, scale_offset 48, sve 49 (VSCRATCH: the VGPR
//! address is used), scope 51:50, th 54:52, vsrc 62:55; vaddr 71:64, a
//! signed 24-bit offset 95:72. RDNA4 ISA manual, "VFLAT", "VSCRATCH",
//! "VGLOBAL". Opcode facts and the saddr texts come from `tables/vflat.rs`
//! (learned from LLVM 22).

use super::cpol::{ThKind, fmt_th_scope};
use super::tables::vflat::{FLAT, FLAT_OPS, SADDR};
use crate::gfx11::valu::fmt_vgpr;
use crate::{DecodeError, Target};
use std::fmt;

/// One form of an opcode (th bit 0 clear or set: atomics return a value
/// with TH_ATOMIC_RETURN).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlatForm {
    /// Bits of the first two dwords (dword 1 high) that must equal `val`.
    pub fix: u64,
    pub val: u64,
    /// vdst width in dwords per wave size (wave32, wave64; 0: not an
    /// operand) and data width.
    pub vdst: [u8; 2],
    pub data: u8,
    /// The address operand is printed.
    pub addr: bool,
    /// How th reads.
    pub th: ThKind,
    /// scale_offset is printed.
    pub scale: bool,
}

/// One opcode: its forms with th bit 0 clear and set.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlatOp {
    pub name: &'static str,
    pub forms: [Option<FlatForm>; 2],
    /// The `SADDR` table of how LLVM prints each saddr value ("": not
    /// printed, as on VFLAT).
    pub saddr: u8,
}

/// The null saddr: no scalar address.
const OFF: u32 = 0x7c;

pub(crate) fn form_of(op: &FlatOp, w1: u32) -> Option<FlatForm> {
    op.forms[((w1 >> 20) & 1) as usize]
}

/// Decodes a VFLAT, VSCRATCH or VGLOBAL instruction (12 bytes): the row and
/// the dwords.
pub(crate) fn decode(
    target: Target,
    w0: u32,
    bytes: &[u8],
) -> Result<(u16, [u32; 3]), DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = crate::gfx9::word(bytes, 1)?;
    let w2 = crate::gfx9::word(bytes, 2)?;
    let seg = (w0 >> 24) & 3;
    let row = FLAT[(seg * 256 + ((w0 >> 14) & 0xff)) as usize];
    let op = FLAT_OPS.get(usize::from(row)).ok_or(invalid.clone())?;
    let form = form_of(op, w1).ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & form.fix != form.val {
        return Err(invalid);
    }
    if SADDR[usize::from(op.saddr)][(w0 & 0x7f) as usize].is_none() {
        return Err(invalid);
    }
    Ok((u16::from(row), [w0, w1, w2]))
}

/// A decoded VFLAT, VSCRATCH or VGLOBAL instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Flat {
    pub op: &'static FlatOp,
    pub wave64: bool,
    pub w0: u32,
    pub w1: u32,
    pub w2: u32,
}

impl Flat {
    pub(crate) fn from_raw(r: usize, wave64: bool, [w0, w1, w2]: [u32; 3]) -> Flat {
        Flat {
            op: &FLAT_OPS[r],
            wave64,
            w0,
            w1,
            w2,
        }
    }

    pub fn seg(&self) -> u32 {
        (self.w0 >> 24) & 3
    }

    /// The signed byte offset.
    pub fn offset(&self) -> i32 {
        (self.w2 as i32) >> 8
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

impl fmt::Display for Flat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (w0, w1) = (self.w0, self.w1);
        let Some(form) = form_of(self.op, w1) else {
            return f.write_str(self.op.name);
        };
        let seg = self.seg();
        let saddr = w0 & 0x7f;
        let addr = (self.w2 & 0xff) as u16;
        f.write_str(self.op.name)?;
        let mut sep = " ";
        let vdst = form.vdst[usize::from(self.wave64)];
        if vdst > 0 {
            f.write_str(sep)?;
            fmt_vgpr(f, (w1 & 0xff) as u16, vdst)?;
            sep = ", ";
        }
        if form.addr {
            f.write_str(sep)?;
            sep = ", ";
            match seg {
                0 => fmt_vgpr(f, addr, 2)?,
                1 if w1 & 1 << 17 != 0 => fmt_vgpr(f, addr, 1)?,
                1 => f.write_str("off")?,
                _ if saddr == OFF => fmt_vgpr(f, addr, 2)?,
                _ => fmt_vgpr(f, addr, 1)?,
            }
        }
        if form.data > 0 {
            f.write_str(sep)?;
            sep = ", ";
            fmt_vgpr(f, ((w1 >> 23) & 0xff) as u16, form.data)?;
        }
        let text = SADDR[usize::from(self.op.saddr)][saddr as usize].unwrap_or("");
        let (name, warn) = match text.split_once(" ; ") {
            Some((a, b)) => (a, Some(b)),
            None => (text, None),
        };
        if !name.is_empty() {
            write!(f, "{sep}{name}")?;
        }
        // The opcodes without operands (global_inv, global_wb) print no
        // offset.
        if (form.addr || vdst > 0 || form.data > 0) && self.offset() != 0 {
            write!(f, " offset:{}", self.offset())?;
        }
        if form.scale && w1 & 1 << 16 != 0 {
            f.write_str(" scale_offset")?;
        }
        fmt_th_scope(f, form.th, ((w1 >> 20) & 7) as u8, ((w1 >> 18) & 3) as u8)?;
        if w0 & 1 << 7 != 0 {
            f.write_str(" nv")?;
        }
        if let Some(w) = warn {
            write!(f, " ; {w}")?;
        }
        Ok(())
    }
}
