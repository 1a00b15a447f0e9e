//! The GFX11 FLAT encoding with its segments FLAT (0), SCRATCH (1) and
//! GLOBAL (2), 64 bits: offset 12:0 (unsigned for FLAT, signed for the
//! others), dlc 13, glc 14, slc 15, seg 17:16, op 24:18; addr 39:32, data
//! 47:40, saddr 54:48 (`null`: off), sve 55 (SCRATCH: the VGPR address is
//! used), vdst 63:56. GFX10 has the same fields elsewhere in the first
//! dword (offset 11:0, dlc 12, lds 13, seg 15:14, glc 16, slc 17) and an
//! `lds` bit instead of sve ([`FlatTables`]). Opcode facts and the saddr
//! texts come from `tables/flat.rs` (learned from LLVM 22).

use super::sop::Raw;
use super::tables::flat::{FLAT_GFX1100, FLAT_GFX1151, FLAT_OPS, SADDR};
use super::valu::fmt_vgpr;
use crate::{DecodeError, Target};
use std::fmt;

/// One form of an opcode (glc clear or set, lds clear or set).
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

/// One opcode: its forms, indexed by `glc | lds << 1`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlatOp {
    pub name: &'static str,
    pub forms: [Option<FlatForm>; 4],
    /// The `SADDR` table of how LLVM prints each saddr value, without and
    /// with GFX10's lds bit (0xff: FLAT, which has none).
    pub saddr: [u8; 2],
}

/// One family's FLAT opcodes and the positions of its fields.
#[derive(Debug, PartialEq)]
pub struct FlatTables {
    pub ops: &'static [FlatOp],
    /// Row of `ops` per `seg * 128 + opcode`, per target index (0xff: none).
    pub rows: [&'static [u8; 384]; 2],
    /// How each saddr value prints, per [`FlatOp::saddr`] (`None`: invalid).
    pub saddr: &'static [[Option<&'static str>; 128]],
    /// Bit numbers of glc, slc and dlc and the seg field's shift.
    pub glc: u32,
    pub slc: u32,
    pub dlc: u32,
    pub seg: u32,
    /// Width of the offset field (13 on GFX11, 12 on GFX10).
    pub offset_bits: u32,
    /// GFX10's lds bit (the load writes LDS; no vdst).
    pub lds: Option<u32>,
    /// The saddr value that names no scalar address (`null`).
    pub off: u32,
    /// SCRATCH's VGPR address is used: GFX11 when sve (dword 1 bit 23) is
    /// set, GFX10 when saddr is off.
    pub sve: bool,
}

/// GFX11's tables.
pub static TABLES: FlatTables = FlatTables {
    ops: &FLAT_OPS,
    rows: [&FLAT_GFX1100, &FLAT_GFX1151],
    saddr: &SADDR,
    glc: 14,
    slc: 15,
    dlc: 13,
    seg: 16,
    offset_bits: 13,
    lds: None,
    off: 0x7c,
    sve: true,
};

impl FlatTables {
    /// The form index of a first dword: `glc | lds << 1`.
    fn form_index(&self, w0: u32) -> usize {
        let lds = self.lds.is_some_and(|b| w0 >> b & 1 != 0);
        ((w0 >> self.glc) & 1) as usize | usize::from(lds) << 1
    }
}

/// Decodes a FLAT, SCRATCH or GLOBAL instruction (8 bytes).
pub(crate) fn decode(
    t: &'static FlatTables,
    target: Target,
    w0: u32,
    bytes: &[u8],
) -> Result<Raw, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let seg = (w0 >> t.seg) & 3;
    if seg == 3 {
        return Err(invalid);
    }
    let i = (seg * 128 + ((w0 >> 18) & 0x7f)) as usize;
    let row = t.rows[target.index() & 1][i];
    let op = t.ops.get(usize::from(row)).ok_or(invalid.clone())?;
    let form = op.forms[t.form_index(w0)].ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & form.fix != form.val {
        return Err(invalid);
    }
    let saddr = ((w1 >> 16) & 0x7f) as usize;
    let names = t.saddr.get(usize::from(op.saddr[t.form_index(w0) >> 1]));
    if seg != 0 && names.is_none_or(|n| n[saddr].is_none()) {
        return Err(invalid);
    }
    Ok((u16::from(row), 8, [w0, w1, 0, 0]))
}

/// A decoded FLAT, SCRATCH or GLOBAL instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Flat {
    pub t: &'static FlatTables,
    pub op: &'static FlatOp,
    pub w0: u32,
    pub w1: u32,
}

impl Flat {
    pub(crate) fn from_raw(t: &'static FlatTables, r: usize, w0: u32, w1: u32) -> Flat {
        Flat {
            t,
            op: &t.ops[r],
            w0,
            w1,
        }
    }

    pub fn seg(&self) -> u32 {
        (self.w0 >> self.t.seg) & 3
    }

    pub(crate) fn form(&self) -> FlatForm {
        self.op.forms[self.t.form_index(self.w0)].unwrap_or(FlatForm {
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
        let (w0, w1, t) = (self.w0, self.w1, self.t);
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
            let vaddr = if t.sve {
                w1 & 1 << 23 != 0
            } else {
                saddr == t.off
            };
            match seg {
                0 => fmt_vgpr(f, addr, 2)?,
                1 if vaddr => fmt_vgpr(f, addr, 1)?,
                1 => f.write_str("off")?,
                _ if saddr == t.off => fmt_vgpr(f, addr, 2)?,
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
            let names = t
                .saddr
                .get(usize::from(self.op.saddr[t.form_index(w0) >> 1]));
            let text = names.and_then(|n| n[saddr as usize]).unwrap_or("");
            let (name, w) = match text.split_once(" ; ") {
                Some((a, b)) => (a, Some(b)),
                None => (text, None),
            };
            warn = w;
            write!(f, "{sep}{name}")?;
        }
        let off = w0 & ((1 << t.offset_bits) - 1);
        if off != 0 {
            if seg == 0 {
                write!(f, " offset:{off}")?;
            } else {
                let sh = 32 - t.offset_bits;
                write!(f, " offset:{}", ((off << sh) as i32) >> sh)?;
            }
        }
        for (bit, name) in [(t.glc, " glc"), (t.slc, " slc"), (t.dlc, " dlc")] {
            if w0 & 1 << bit != 0 {
                f.write_str(name)?;
            }
        }
        if t.lds.is_some_and(|b| w0 >> b & 1 != 0) {
            f.write_str(" lds")?;
        }
        if let Some(w) = warn {
            write!(f, " ; {w}")?;
        }
        Ok(())
    }
}
