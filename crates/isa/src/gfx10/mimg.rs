//! The GFX10 MIMG encoding (image loads, stores, atomics, samples,
//! gathers and, on gfx1030, BVH ray intersection), 64 bits plus one to
//! three dwords of addresses in the NSA form (RDNA ISA manuals, "MIMG").
//!
//! Word 0: op bit 7 at 0, nsa 2:1 (the count of NSA dwords), dim 5:3, dlc
//! 7, dmask 11:8, unorm 12, glc 13, r128 15, tfe 16, lwe 17, op 24:18, slc
//! 25, 0b111100 31:26. Word 1: vaddr 7:0, vdata 15:8, srsrc 20:16 and
//! ssamp 25:21 (in SGPR quads), a16 30, d16 31. NSA: the other addresses
//! in the bytes of the dwords after.
//!
//! As on GFX11 (`gfx11::mimg`), LLVM decodes a word to a default variant
//! of its opcode (one per NSA dword count) and then selects the variant
//! whose data and address counts fit, keeping the default when there is
//! none, the NSA dwords cannot hold the addresses or a widened register
//! would pass v255. The table (`tables/mimg.rs`) records the defaults and
//! the counts LLVM selects.

use super::tables::mimg::{MIMG_GFX1010, MIMG_GFX1030, MIMG_OPS};
use crate::gfx9::sop::{Warnings, fmt_sop};
use crate::gfx11::mimg::DIMS;
use crate::gfx11::operand::{Sregs, decode_stuple};
use crate::gfx11::sop::Raw;
use crate::gfx11::valu::fmt_vgpr;
use crate::{DecodeError, Target};
use std::fmt;

/// One MIMG opcode.
#[derive(Debug, PartialEq, Eq)]
pub struct MimgOp {
    pub name: &'static str,
    /// What LLVM prints between the mnemonic and vdata in the NSA form.
    pub nsa_sep: &'static str,
    /// Bits (word 1 in the high half) that must equal `val`.
    pub fix: u64,
    pub val: u64,
    /// A sampler operand follows the resource.
    pub ssamp: bool,
    /// Resource width in dwords.
    pub rsrc: u8,
    pub bvh: bool,
    /// The data count ignores dmask (gathers: 4).
    pub gather: bool,
    /// Data counts LLVM has a variant for (bit n: n dwords).
    pub vdata_ok: u8,
    /// Address count LLVM selects per dim and a16, non-NSA and NSA (0:
    /// no variant).
    pub addrs: [[u8; 2]; 8],
    pub nsa: [[u8; 2]; 8],
    /// The default variants' data and address counts: non-NSA, then per
    /// NSA dword count 1..3 (0: the word does not decode).
    pub dflt: [[u8; 2]; 4],
    /// BVH: the NSA register widths per a16.
    pub bvh_nsa: [&'static [u8]; 2],
}

const SREGS: Sregs = Sregs::Gfx10;

fn table(target: Target) -> &'static [u8; 256] {
    if target == Target::Gfx1010 {
        &MIMG_GFX1010
    } else {
        &MIMG_GFX1030
    }
}

/// The opcode: bits 24:18, and bit 7 at bit 0.
fn opcode(w0: u32) -> usize {
    (((w0 >> 18) & 0x7f) | (w0 & 1) << 7) as usize
}

/// Decodes a MIMG instruction (8 bytes, 12 to 20 in the NSA form): its
/// row, length and dwords (a fifth, the third NSA dword, apart).
pub(crate) fn decode(target: Target, w0: u32, bytes: &[u8]) -> Result<(Raw, u32), DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = crate::gfx9::word(bytes, 1)?;
    let r = table(target)[opcode(w0)];
    let op = MIMG_OPS.get(usize::from(r)).ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    let k = ((w0 >> 1) & 3) as usize;
    if all & op.fix != op.val & op.fix
        || op.dflt[k][0] == 0
        || decode_stuple(SREGS.field(((w1 >> 16) & 0x1f) as u16 * 4), op.rsrc).is_none()
        || op.ssamp && decode_stuple(SREGS.field(((w1 >> 21) & 0x1f) as u16 * 4), 4).is_none()
    {
        return Err(invalid);
    }
    let mut words = [w0, w1, 0, 0];
    for (i, w) in words.iter_mut().enumerate().skip(2).take(k) {
        *w = crate::gfx9::word(bytes, i)?;
    }
    let fifth = if k == 3 {
        crate::gfx9::word(bytes, 4)?
    } else {
        0
    };
    Ok(((u16::from(r), 8 + 4 * k as u8, words), fifth))
}

/// A decoded MIMG instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Mimg {
    pub op: &'static MimgOp,
    pub w0: u32,
    pub w1: u32,
    /// The NSA address dwords (as many as the nsa field says).
    pub nsa: [u32; 3],
}

/// The registers LLVM prints: the data count and the address widths (one
/// entry for a non-NSA tuple).
struct Layout {
    data: u8,
    addrs: Vec<u8>,
}

impl Mimg {
    pub(crate) fn from_raw(r: usize, w0: u32, w1: u32, nsa: [u32; 3]) -> Mimg {
        Mimg {
            op: &MIMG_OPS[r],
            w0,
            w1,
            nsa,
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.op.name
    }

    /// The count of NSA dwords (0: a vaddr tuple).
    pub fn nsa_dwords(&self) -> usize {
        ((self.w0 >> 1) & 3) as usize
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
        out.extend_from_slice(&self.w1.to_le_bytes());
        for w in &self.nsa[..self.nsa_dwords()] {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// Address register `k`: vaddr, then the NSA bytes.
    fn addr_reg(&self, k: usize) -> u16 {
        match k {
            0 => (self.w1 & 0xff) as u16,
            _ => {
                let (i, b) = ((k - 1) / 4, (k - 1) % 4);
                ((self.nsa[i % 3] >> (8 * b)) & 0xff) as u16
            }
        }
    }

    /// The variant LLVM selects: the one whose data and address counts
    /// fit, else the default of the NSA dword count.
    fn layout(&self) -> Layout {
        let (op, w0, w1) = (self.op, self.w0, self.w1);
        let k = self.nsa_dwords();
        let [vd, va] = op.dflt[k];
        let nsa = k > 0;
        let one = |n: u8| {
            if nsa {
                vec![1; usize::from(n)]
            } else {
                vec![n]
            }
        };
        let default = Layout {
            data: vd,
            addrs: if op.bvh && nsa {
                op.bvh_nsa[((w1 >> 30) & 1) as usize].to_vec()
            } else {
                one(va)
            },
        };
        if op.bvh {
            return default;
        }
        let (dim, a16) = (((w0 >> 3) & 7) as usize, ((w1 >> 30) & 1) as usize);
        let mut dst = if op.gather {
            4
        } else {
            ((w0 >> 8) & 0xf).count_ones().max(1) as u8
        };
        if w1 & 1 << 31 != 0 {
            dst = dst.div_ceil(2);
        }
        dst += u8::from(w0 & 1 << 16 != 0);
        let count = if nsa {
            op.nsa[dim][a16]
        } else {
            op.addrs[dim][a16]
        };
        if count == 0
            || dst == vd && count == va
            || dst != vd && op.vdata_ok & (1 << dst) == 0
            || nsa && count > va
        {
            return default;
        }
        // A widened register may not pass v255.
        let vdata = ((w1 >> 8) & 0xff) as u16;
        if dst != vd && vdata + u16::from(dst) > 256
            || !nsa && count != va && self.addr_reg(0) + u16::from(count) > 256
        {
            return default;
        }
        Layout {
            data: dst,
            addrs: one(count),
        }
    }
}

impl fmt::Display for Mimg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (op, w0, w1) = (self.op, self.w0, self.w1);
        let l = self.layout();
        let mut warn = Warnings::default();
        f.write_str(op.name)?;
        let nsa = self.nsa_dwords() > 0;
        f.write_str(if nsa { op.nsa_sep } else { " " })?;
        fmt_vgpr(f, ((w1 >> 8) & 0xff) as u16, l.data)?;
        f.write_str(", ")?;
        if nsa {
            f.write_str("[")?;
            for (k, &w) in l.addrs.iter().enumerate() {
                if k > 0 {
                    f.write_str(", ")?;
                }
                fmt_vgpr(f, self.addr_reg(k), w)?;
            }
            f.write_str("]")?;
        } else {
            fmt_vgpr(f, self.addr_reg(0), l.addrs[0])?;
        }
        f.write_str(", ")?;
        if let Some(r) = decode_stuple(SREGS.field(((w1 >> 16) & 0x1f) as u16 * 4), op.rsrc) {
            fmt_sop(f, &r, op.rsrc, &mut warn)?;
        }
        if op.ssamp {
            f.write_str(", ")?;
            if let Some(s) = decode_stuple(SREGS.field(((w1 >> 21) & 0x1f) as u16 * 4), 4) {
                fmt_sop(f, &s, 4, &mut warn)?;
            }
        }
        if !op.bvh {
            let dmask = (w0 >> 8) & 0xf;
            if dmask != 0 {
                write!(f, " dmask:0x{dmask:x}")?;
            }
            write!(f, " dim:SQ_RSRC_IMG_{}", DIMS[((w0 >> 3) & 7) as usize])?;
        }
        for (word, bit, name) in [
            (w0, 12, " unorm"),
            (w0, 13, " glc"),
            (w0, 25, " slc"),
            (w0, 7, " dlc"),
            (w0, 15, " r128"),
            (w1, 30, " a16"),
            (w0, 16, " tfe"),
            (w0, 17, " lwe"),
            (w1, 31, " d16"),
        ] {
            // BVH operations print only a16 of these (the rest are fixed).
            if word & 1 << bit != 0 && (!op.bvh || bit == 30 && word == w1) {
                f.write_str(name)?;
            }
        }
        warn.write(f)
    }
}
