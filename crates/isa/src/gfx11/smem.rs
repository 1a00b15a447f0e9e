//! The GFX11 SMEM encoding (scalar memory: loads from an address or a
//! buffer resource, cache invalidation, ATC probes), 64 bits:
//! op 25:18, glc 14, dlc 13, sdata 12:6, sbase 5:0 (in SGPR pairs);
//! soffset 63:57, a 21-bit signed byte offset 52:32. GFX10 has the same
//! fields with glc at 16 and dlc at 14 ([`SmemTables`]).

use super::operand::{
    Half, Operand, RegFile, Special, Sregs, decode_sreg, decode_stuple, fmt_signed_hex,
};
use super::sop::Raw;
use super::tables::smem::SMEM;
use crate::gfx9::sop::{Warnings, fmt_sop};
use crate::{DecodeError, Target};
use std::fmt;

/// One SMEM opcode.
#[derive(Debug, PartialEq, Eq)]
pub struct SmemRow {
    pub op: u8,
    pub name: &'static str,
    /// sdata width in dwords; 0: none (with no sbase: no operands at all);
    /// [`DATA_IMM`]: sdata is a 7-bit immediate.
    pub data: u8,
    /// sbase width in dwords (2: an address, 4: a buffer resource; 0: no
    /// address, GFX10's `s_memtime`, which prints sdata alone).
    pub base: u8,
    /// LLVM accepts the glc / dlc bits.
    pub glc: bool,
    pub dlc: bool,
    /// LLVM accepts them without printing them (GFX10's `s_atc_probe`).
    pub hidden: bool,
    /// A returning atomic: with glc, LLVM warns twice of a misaligned data
    /// tuple (it reads the tuple as destination and source).
    pub rtn: bool,
    pub targets: u8,
}

/// [`SmemRow::data`] of an opcode whose sdata field is an immediate.
pub const DATA_IMM: u8 = 0xff;

/// One family's SMEM rows and layout.
#[derive(Debug, PartialEq)]
pub struct SmemTables {
    pub rows: &'static [SmemRow],
    idx: [u8; 256],
    /// The bit numbers of glc and dlc in the first dword.
    pub glc: u32,
    pub dlc: u32,
    /// The family's numbering of m0 and null.
    pub sregs: Sregs,
}

impl SmemTables {
    pub const fn new(rows: &'static [SmemRow], glc: u32, dlc: u32, sregs: Sregs) -> SmemTables {
        let mut idx = [0xffu8; 256];
        let mut i = 0;
        while i < rows.len() {
            idx[rows[i].op as usize] = i as u8;
            i += 1;
        }
        SmemTables {
            rows,
            idx,
            glc,
            dlc,
            sregs,
        }
    }
}

/// GFX11's tables.
pub static TABLES: SmemTables = SmemTables::new(SMEM, 14, 13, Sregs::Gfx11);

/// An SMEM instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Smem {
    pub t: &'static SmemTables,
    pub row: &'static SmemRow,
    pub sdata: u8,
    pub sbase: u8,
    pub soffset: u8,
    /// The signed 21-bit byte offset.
    pub offset: i32,
    pub glc: bool,
    pub dlc: bool,
    /// Bits LLVM ignores (the first dword's bits 17:13 other than glc and
    /// dlc, 56:53 of the second), kept for re-encoding.
    pub unused: u32,
}

/// The first dword's bits 17:13, of which glc and dlc are two.
const W0_FLAGS: u32 = 0x1f << 13;
const W1_UNUSED: u32 = 0xf << 21;

impl Smem {
    #[inline(always)]
    pub(crate) fn decode(
        t: &'static SmemTables,
        target: Target,
        w0: u32,
        bytes: &[u8],
    ) -> Result<Raw, DecodeError> {
        let invalid = DecodeError::Invalid { target, word: w0 };
        let w1 = super::word(bytes, 1)?;
        let r = t.idx[((w0 >> 18) & 0xff) as usize];
        let row = t.rows.get(usize::from(r)).ok_or(invalid.clone())?;
        if row.targets & target.bit() == 0
            || (!row.glc && w0 & 1 << t.glc != 0)
            || (!row.dlc && w0 & 1 << t.dlc != 0)
        {
            return Err(invalid);
        }
        if row.data != 0
            && row.data != DATA_IMM
            && decode_stuple(t.sregs.field(sdata(w0)), row.data).is_none()
        {
            return Err(invalid);
        }
        if row.base != 0 && decode_stuple(t.sregs.field((w0 as u16 & 0x3f) * 2), row.base).is_none()
        {
            return Err(invalid);
        }
        Ok((u16::from(r), 8, [w0, w1, 0, 0]))
    }

    pub(crate) fn from_raw(t: &'static SmemTables, r: usize, w0: u32, w1: u32) -> Smem {
        Smem {
            t,
            row: &t.rows[r],
            sdata: sdata(w0) as u8,
            sbase: (w0 & 0x3f) as u8,
            soffset: (w1 >> 25) as u8,
            offset: ((w1 << 11) as i32) >> 11,
            glc: w0 & 1 << t.glc != 0,
            dlc: w0 & 1 << t.dlc != 0,
            unused: w0 & W0_FLAGS & !(1 << t.glc | 1 << t.dlc) | w1 & W1_UNUSED,
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let w0 = 0xf400_0000
            | u32::from(self.row.op) << 18
            | u32::from(self.glc) << self.t.glc
            | u32::from(self.dlc) << self.t.dlc
            | u32::from(self.sdata) << 6
            | u32::from(self.sbase)
            | self.unused & W0_FLAGS;
        let w1 = u32::from(self.soffset) << 25
            | (self.offset as u32 & 0x1f_ffff)
            | self.unused & W1_UNUSED;
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
    }

    /// The sdata operand (a register tuple), if the opcode has one.
    pub fn data(&self) -> Option<Operand> {
        data_operand(
            self.row.data,
            self.t.sregs.field(u16::from(self.sdata)) as u8,
        )
    }

    /// The sbase operand.
    pub fn base(&self) -> Option<Operand> {
        match self.row.base {
            0 => None,
            n => decode_stuple(self.t.sregs.field(u16::from(self.sbase) * 2), n),
        }
    }

    /// The soffset register (`null`: none).
    pub fn soffset(&self) -> Operand {
        soffset_operand(self.t.sregs.field(u16::from(self.soffset)) as u8)
    }
}

/// The sdata operand of a field of `width` dwords (a register tuple), if
/// it is one.
pub(crate) fn data_operand(width: u8, sdata: u8) -> Option<Operand> {
    match width {
        0 | DATA_IMM => None,
        n => decode_stuple(u16::from(sdata), n),
    }
}

/// The sbase operand of `width` dwords (0: none) of a field in SGPR pairs.
pub(crate) fn base_operand(width: u8, sbase: u8) -> Option<Operand> {
    match width {
        0 => None,
        n => decode_stuple(u16::from(sbase) * 2, n),
    }
}

/// The soffset register (`null`: none).
pub(crate) fn soffset_operand(soffset: u8) -> Operand {
    decode_sreg(u16::from(soffset), 1).unwrap_or(Operand::Special(Special::Null, Half::Full))
}

/// Prints an sdata field of `width` dwords ([`DATA_IMM`]: an immediate),
/// with LLVM's note on registers the operand's class leaves out.
pub(crate) fn fmt_data(
    f: &mut fmt::Formatter<'_>,
    width: u8,
    sdata: u8,
    warn: &mut Warnings,
) -> fmt::Result {
    let op = match width {
        DATA_IMM => None,
        n => decode_stuple(u16::from(sdata), n),
    };
    match op {
        Some(op) => {
            fmt_sop(f, &op, width, warn)?;
            // Registers the data operand's class leaves out.
            let class = match (width, op) {
                (1, Operand::Special(Special::M0 | Special::Exec, _)) => Some("SReg_32_XM0_XEXEC"),
                (2, Operand::Special(Special::Exec, _)) => Some("SReg_64_XEXEC"),
                (3, Operand::Reg(r)) if r.file == RegFile::Ttmp => Some("SReg_96"),
                _ => None,
            };
            if let Some(c) = class {
                write!(f, "/*Invalid register, operand has '{c}' register class*/")?;
            }
            Ok(())
        }
        None if sdata <= 64 => write!(f, "{sdata}"),
        None => write!(f, "0x{sdata:x}"),
    }
}

fn sdata(w0: u32) -> u16 {
    ((w0 >> 6) & 0x7f) as u16
}

impl fmt::Display for Smem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = self.row;
        f.write_str(row.name)?;
        if row.data == 0 && row.base == 0 {
            return Ok(());
        }
        let mut warn = Warnings::default();
        f.write_str(" ")?;
        if row.data != 0 {
            // A register field in GFX11's numbering; an immediate as it is.
            let sdata = match row.data {
                DATA_IMM => self.sdata,
                _ => self.t.sregs.field(u16::from(self.sdata)) as u8,
            };
            fmt_data(f, row.data, sdata, &mut warn)?;
            if row.rtn
                && self.glc
                && let Some(Operand::Reg(r)) = data_operand(row.data, sdata)
            {
                crate::gfx9::sop::note_alignment(r, &mut warn);
            }
            if row.base == 0 {
                return warn.write(f);
            }
            f.write_str(", ")?;
        }
        if let Some(base) = self.base() {
            fmt_sop(f, &base, row.base, &mut warn)?;
        }
        f.write_str(", ")?;
        let soff = self.soffset();
        let null = soff == Operand::Special(Special::Null, Half::Full);
        if self.offset == 0 {
            fmt_sop(f, &soff, 1, &mut warn)?;
        } else if null {
            fmt_signed_hex(f, i64::from(self.offset))?;
        } else {
            fmt_sop(f, &soff, 1, &mut warn)?;
            f.write_str(" offset:")?;
            fmt_signed_hex(f, i64::from(self.offset))?;
        }
        if self.glc && !row.hidden {
            f.write_str(" glc")?;
        }
        if self.dlc && !row.hidden {
            f.write_str(" dlc")?;
        }
        warn.write(f)
    }
}
