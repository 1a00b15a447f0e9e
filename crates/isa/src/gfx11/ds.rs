//! The GFX11 DS encoding (LDS/GDS loads, stores, atomics, permutes, GWS
//! and BVH stack operations), 64 bits: offset0 7:0, offset1 15:8, gds 17,
//! op 25:18; addr 39:32, data0 47:40, data1 55:48, vdst 63:56. The opcode
//! rows and their printing are GFX9's ([`crate::gfx9::ds`]); the table
//! (`tables/ds.rs`) is learned from LLVM 22.

use super::sop::Raw;
use super::tables::ds::{DS_GFX1100, DS_GFX1151, DS_OPS};
use crate::gfx9::ds::DsOp;
use crate::{DecodeError, Target};
use std::fmt;

/// A decoded DS instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Ds {
    /// The fields, in the GFX9 struct that prints them.
    pub fields: crate::gfx9::ds::Ds,
    /// The raw words (the GFX11 layout), for re-encoding.
    pub w0: u32,
    pub w1: u32,
}

/// One family's DS opcode rows and, per target (by [`Target::index`]), the
/// row of each opcode (0xff: invalid), from a generated `tables/ds.rs`.
pub struct DsTables {
    pub ops: &'static [DsOp],
    pub rows: [&'static [u8; 256]; 2],
}

/// GFX11's tables.
pub static TABLES: DsTables = DsTables {
    ops: &DS_OPS,
    rows: [&DS_GFX1100, &DS_GFX1151],
};

/// Decodes a DS instruction (8 bytes) with the family's tables: the row
/// and the dwords.
pub(crate) fn decode(
    t: &'static DsTables,
    target: Target,
    w0: u32,
    bytes: &[u8],
) -> Result<Raw, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let row = t.rows[target.index() & 1][((w0 >> 18) & 0xff) as usize];
    let op: &DsOp = t.ops.get(usize::from(row)).ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & op.fix != op.val {
        return Err(invalid);
    }
    Ok((u16::from(row), 8, [w0, w1, 0, 0]))
}

impl Ds {
    pub(crate) fn from_raw(t: &'static DsTables, r: usize, w0: u32, w1: u32) -> Ds {
        Ds {
            fields: crate::gfx9::ds::Ds {
                opcode: ((w0 >> 18) & 0xff) as u8,
                op: &t.ops[r],
                offset: (w0 & 0xffff) as u16,
                gds: w0 & (1 << 17) != 0,
                acc: false,
                addr: (w1 & 0xff) as u8,
                data0: ((w1 >> 8) & 0xff) as u8,
                data1: ((w1 >> 16) & 0xff) as u8,
                vdst: (w1 >> 24) as u8,
            },
            w0,
            w1,
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.fields.op.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let d = &self.fields;
        let w0 = (0x36u32 << 26)
            | u32::from(d.offset)
            | (u32::from(d.gds) << 17)
            | (u32::from(d.opcode) << 18)
            | (self.w0 & 1 << 16);
        let w1 = u32::from(d.addr)
            | (u32::from(d.data0) << 8)
            | (u32::from(d.data1) << 16)
            | (u32::from(d.vdst) << 24);
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
    }
}

impl fmt::Display for Ds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fields.fmt(f)
    }
}
