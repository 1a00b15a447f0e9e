//! The GFX12 SMEM encoding (scalar memory loads, prefetches, cache
//! invalidation, ATC probes), 64 bits: th 24:23, scope 22:21, nv 20,
//! op 18:13, sdata 12:6, sbase 5:0 (in SGPR pairs); soffset 63:57,
//! scale_offset 56, a signed 24-bit byte offset 55:32. RDNA4 ISA manual,
//! "SMEM".

use super::cpol::{ThKind, fmt_th_scope};
use super::tables::smem::SMEM;
use crate::gfx9::sop::{Warnings, fmt_sop};
use crate::gfx11::operand::{Half, Operand, Special, decode_stuple, fmt_signed_hex};
use crate::gfx11::smem::{DATA_IMM, base_operand, data_operand, fmt_data, soffset_operand};
use crate::{DecodeError, Target};
use std::fmt;

/// How an opcode's operands are printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Form {
    /// sdata, sbase, then the offset (loads, ATC probes).
    Load,
    /// [sbase,] offset, soffset, sdata as an immediate (`s_prefetch_*`).
    Prefetch,
    /// No operands.
    Bare,
}

/// One SMEM opcode.
#[derive(Debug, PartialEq, Eq)]
pub struct SmemRow {
    pub op: u8,
    pub name: &'static str,
    pub form: Form,
    /// sdata width in dwords; 0: none; [`DATA_IMM`]: an immediate below
    /// 32.
    pub data: u8,
    /// sbase width in dwords (0: none, 2: an address, 4: a buffer resource).
    pub base: u8,
    /// LLVM prints th, scope and nv.
    pub cpol: bool,
    /// LLVM prints scale_offset.
    pub scale: bool,
    /// LLVM accepts a negative offset.
    pub negative: bool,
}

static IDX: [u8; 64] = {
    let mut t = [0xffu8; 64];
    let mut i = 0;
    while i < SMEM.len() {
        t[SMEM[i].op as usize] = i as u8;
        i += 1;
    }
    t
};

/// A GFX12 SMEM instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Smem {
    pub row: &'static SmemRow,
    pub sdata: u8,
    pub sbase: u8,
    pub soffset: u8,
    /// The signed 24-bit byte offset.
    pub offset: i32,
    pub th: u8,
    pub scope: u8,
    pub nv: bool,
    pub scale_offset: bool,
    /// Bit 19 and 26:25 of the first dword, which LLVM ignores, kept for
    /// re-encoding.
    pub unused: u32,
}

const W0_UNUSED: u32 = 1 << 19 | 3 << 25;

impl Smem {
    /// Decodes an SMEM word pair: the opcode's row and the dwords.
    pub(crate) fn decode(target: Target, w0: u32, bytes: &[u8]) -> Result<(u16, u32), DecodeError> {
        let invalid = DecodeError::Invalid { target, word: w0 };
        let w1 = crate::gfx9::word(bytes, 1)?;
        let r = IDX[((w0 >> 13) & 0x3f) as usize];
        let row = SMEM.get(usize::from(r)).ok_or(invalid.clone())?;
        if !row.negative && w1 & 1 << 23 != 0 {
            return Err(invalid);
        }
        let sdata = ((w0 >> 6) & 0x7f) as u16;
        // An immediate sdata takes values below 32 only.
        if row.data == DATA_IMM && sdata >= 32 {
            return Err(invalid);
        }
        if row.data != 0 && row.data != DATA_IMM && decode_stuple(sdata, row.data).is_none() {
            return Err(invalid);
        }
        if row.base != 0 && decode_stuple((w0 as u16 & 0x3f) * 2, row.base).is_none() {
            return Err(invalid);
        }
        Ok((u16::from(r), w1))
    }

    pub(crate) fn from_raw(r: usize, w0: u32, w1: u32) -> Smem {
        Smem {
            row: &SMEM[r],
            sdata: ((w0 >> 6) & 0x7f) as u8,
            sbase: (w0 & 0x3f) as u8,
            soffset: (w1 >> 25) as u8,
            offset: ((w1 << 8) as i32) >> 8,
            th: ((w0 >> 23) & 3) as u8,
            scope: ((w0 >> 21) & 3) as u8,
            nv: w0 & 1 << 20 != 0,
            scale_offset: w1 & 1 << 24 != 0,
            unused: w0 & W0_UNUSED,
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let w0 = 0xf400_0000
            | u32::from(self.th) << 23
            | u32::from(self.scope) << 21
            | u32::from(self.nv) << 20
            | u32::from(self.row.op) << 13
            | u32::from(self.sdata) << 6
            | u32::from(self.sbase)
            | self.unused & W0_UNUSED;
        let w1 = u32::from(self.soffset) << 25
            | u32::from(self.scale_offset) << 24
            | (self.offset as u32 & 0xff_ffff);
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
    }

    /// The sdata operand (a register tuple), if the opcode has one.
    pub fn data(&self) -> Option<Operand> {
        data_operand(self.row.data, self.sdata)
    }

    /// The sbase operand.
    pub fn base(&self) -> Option<Operand> {
        base_operand(self.row.base, self.sbase)
    }

    /// The soffset register (`null`: none).
    pub fn soffset(&self) -> Operand {
        soffset_operand(self.soffset)
    }
}

impl fmt::Display for Smem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = self.row;
        f.write_str(row.name)?;
        if row.form == Form::Bare {
            return Ok(());
        }
        let mut warn = Warnings::default();
        f.write_str(" ")?;
        let soff = self.soffset();
        let null = soff == Operand::Special(Special::Null, Half::Full);
        if row.form == Form::Prefetch {
            if let Some(base) = self.base() {
                fmt_sop(f, &base, row.base, &mut warn)?;
                f.write_str(", ")?;
            }
            fmt_signed_hex(f, i64::from(self.offset))?;
            f.write_str(", ")?;
            fmt_sop(f, &soff, 1, &mut warn)?;
            f.write_str(", ")?;
            fmt_data(f, DATA_IMM, self.sdata, &mut warn)?;
            return warn.write(f);
        }
        fmt_data(f, row.data, self.sdata, &mut warn)?;
        f.write_str(", ")?;
        if let Some(base) = self.base() {
            fmt_sop(f, &base, row.base, &mut warn)?;
        }
        f.write_str(", ")?;
        if !null {
            fmt_sop(f, &soff, 1, &mut warn)?;
            f.write_str(" offset:")?;
        }
        fmt_signed_hex(f, i64::from(self.offset))?;
        if row.scale && self.scale_offset {
            f.write_str(" scale_offset")?;
        }
        if row.cpol {
            fmt_th_scope(f, ThKind::Load, self.th, self.scope)?;
            if self.nv {
                f.write_str(" nv")?;
            }
        }
        warn.write(f)
    }
}
