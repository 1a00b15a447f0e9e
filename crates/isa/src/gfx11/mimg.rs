//! The GFX11 MIMG encoding (image loads, stores, atomics, samples,
//! gathers and BVH ray intersection), 64 bits plus one dword of addresses
//! in the NSA form (RDNA3 ISA manual, "MIMG").
//!
//! Word 0: nsa 0, dim 4:2, unorm 7, dmask 11:8, slc 12, dlc 13, glc 14,
//! r128 15, a16 16, d16 17, op 25:18, 0b111100 31:26. Word 1: vaddr 7:0,
//! vdata 15:8, srsrc 20:16 and ssamp 30:26 (in SGPR quads), tfe 21, lwe 22.
//! NSA: the other addresses in the bytes of a third dword.
//!
//! LLVM decodes a word to a default variant of its opcode and then selects
//! the variant whose data and address counts fit (data: dmask, d16, tfe;
//! addresses: the opcode, dim and a16), keeping the default when no such
//! variant exists or a widened register would pass v255. The table
//! (`tables/mimg.rs`) records the defaults and the layouts LLVM selects.

use super::Inst;
use super::operand::decode_stuple;
use super::tables::mimg::{MIMG_GFX1100, MIMG_GFX1151, MIMG_OPS};
use super::valu::fmt_vgpr;
use crate::gfx9::sop::{Warnings, fmt_sop};
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
    pub val: u32,
    /// A sampler operand follows the resource.
    pub ssamp: bool,
    /// Resource width in dwords.
    pub rsrc: u8,
    pub bvh: bool,
    /// The data count ignores dmask (4: gather4, msaa_load).
    pub gather: bool,
    /// Data counts LLVM has a variant for (bit n: n dwords).
    pub vdata_ok: u8,
    /// Non-NSA address count LLVM selects per dim and a16 (0: none).
    pub addrs: [[u8; 2]; 8],
    /// NSA address register widths LLVM selects per dim and a16 (empty:
    /// none).
    pub nsa: [[&'static [u8]; 2]; 8],
    /// The default variant's data and address counts, non-NSA and NSA.
    pub dflt: [u8; 2],
    pub nsa_dflt: [u8; 2],
    /// BVH: the NSA register widths per a16.
    pub bvh_nsa: [&'static [u8]; 2],
    /// GFX12: the address bytes of the third dword (bit k: byte k) that
    /// must be zero.
    pub addr_zero: u8,
}

fn table(target: Target) -> &'static [u8; 256] {
    if target == Target::Gfx1151 {
        &MIMG_GFX1151
    } else {
        &MIMG_GFX1100
    }
}

/// Decodes a MIMG instruction (8 bytes, 12 in the NSA form).
pub(crate) fn decode(
    target: Target,
    wave64: bool,
    w0: u32,
    bytes: &[u8],
) -> Result<Inst, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let r = table(target)[((w0 >> 18) & 0xff) as usize];
    let op = MIMG_OPS.get(usize::from(r)).ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & op.fix != u64::from(op.val) & op.fix
        || decode_stuple(((w1 >> 16) & 0x1f) as u16 * 4, op.rsrc).is_none()
        || op.ssamp && decode_stuple(((w1 >> 26) & 0x1f) as u16 * 4, 4).is_none()
    {
        return Err(invalid);
    }
    let (w2, len) = if w0 & 1 != 0 {
        (super::word(bytes, 2)?, 12)
    } else {
        (0, 8)
    };
    Ok(Inst::new(
        target,
        wave64,
        u16::from(r),
        len,
        [w0, w1, w2, 0],
    ))
}

/// A decoded MIMG instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Mimg {
    pub op: &'static MimgOp,
    pub w0: u32,
    pub w1: u32,
    /// The NSA address dword.
    pub nsa: Option<u32>,
}

/// The registers LLVM prints: the data count and the address widths (one
/// entry for a non-NSA tuple).
pub(crate) struct Layout {
    pub data: u8,
    pub addrs: Vec<u8>,
}

/// The fields that select an opcode's variant.
pub(crate) struct Select {
    pub nsa: bool,
    pub dim: usize,
    pub a16: usize,
    pub dmask: u32,
    pub d16: bool,
    pub tfe: bool,
    /// The vdata register.
    pub vdata: u16,
}

/// The variant LLVM selects for `op`: the one whose data and address
/// counts fit, else the default; `addr_reg(k)` is address register `k`.
pub(crate) fn select_layout(op: &MimgOp, s: &Select, addr_reg: &dyn Fn(usize) -> u16) -> Layout {
    let (nsa, dim, a16) = (s.nsa, s.dim, s.a16);
    if op.bvh {
        return Layout {
            data: op.dflt[0],
            addrs: if nsa {
                op.bvh_nsa[a16].to_vec()
            } else {
                vec![op.addrs[0][a16]]
            },
        };
    }
    let [vd, va] = if nsa { op.nsa_dflt } else { op.dflt };
    let default = Layout {
        data: vd,
        addrs: if nsa {
            vec![1; usize::from(va)]
        } else {
            vec![va]
        },
    };
    let mut dst = if op.gather {
        4
    } else {
        s.dmask.count_ones().max(1) as u8
    };
    if s.d16 {
        dst = dst.div_ceil(2);
    }
    if s.tfe {
        dst += 1;
    }
    let addrs: Vec<u8> = if nsa {
        op.nsa[dim][a16].to_vec()
    } else {
        match op.addrs[dim][a16] {
            0 => vec![],
            n => vec![n],
        }
    };
    let count: u8 = addrs.iter().sum();
    if addrs.is_empty() || dst == vd && count == va || dst != vd && op.vdata_ok & (1 << dst) == 0 {
        return default;
    }
    // A widened register may not pass v255.
    if dst != vd && s.vdata + u16::from(dst) > 256 {
        return default;
    }
    let last = addrs.len() - 1;
    if (!nsa && count != va || nsa && addrs[last] > 1)
        && addr_reg(last) + u16::from(addrs[last]) > 256
    {
        return default;
    }
    Layout { data: dst, addrs }
}

impl Mimg {
    pub(crate) fn from_raw(r: usize, len: u8, w0: u32, w1: u32, w2: u32) -> Mimg {
        Mimg {
            op: &MIMG_OPS[r],
            w0,
            w1,
            nsa: (len == 12).then_some(w2),
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.op.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
        out.extend_from_slice(&self.w1.to_le_bytes());
        if let Some(n) = self.nsa {
            out.extend_from_slice(&n.to_le_bytes());
        }
    }

    /// The address registers: vaddr, then the NSA bytes.
    pub(crate) fn addr_reg(&self, k: usize) -> u16 {
        match k {
            0 => (self.w1 & 0xff) as u16,
            _ => ((self.nsa.unwrap_or(0) >> (8 * (k - 1))) & 0xff) as u16,
        }
    }

    pub(crate) fn layout(&self) -> Layout {
        let (w0, w1) = (self.w0, self.w1);
        let sel = Select {
            nsa: self.nsa.is_some(),
            dim: ((w0 >> 2) & 7) as usize,
            a16: ((w0 >> 16) & 1) as usize,
            dmask: (w0 >> 8) & 0xf,
            d16: w0 & 1 << 17 != 0,
            tfe: w1 & 1 << 21 != 0,
            vdata: ((w1 >> 8) & 0xff) as u16,
        };
        select_layout(self.op, &sel, &|k| self.addr_reg(k))
    }
}

pub(crate) const DIMS: [&str; 8] = [
    "1D",
    "2D",
    "3D",
    "CUBE",
    "1D_ARRAY",
    "2D_ARRAY",
    "2D_MSAA",
    "2D_MSAA_ARRAY",
];

impl fmt::Display for Mimg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (op, w0, w1) = (self.op, self.w0, self.w1);
        let l = self.layout();
        let mut warn = Warnings::default();
        f.write_str(op.name)?;
        f.write_str(if self.nsa.is_some() { op.nsa_sep } else { " " })?;
        fmt_vgpr(f, ((w1 >> 8) & 0xff) as u16, l.data)?;
        f.write_str(", ")?;
        if self.nsa.is_some() {
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
        if let Some(r) = decode_stuple(((w1 >> 16) & 0x1f) as u16 * 4, op.rsrc) {
            fmt_sop(f, &r, op.rsrc, &mut warn)?;
        }
        if op.ssamp {
            f.write_str(", ")?;
            if let Some(s) = decode_stuple(((w1 >> 26) & 0x1f) as u16 * 4, 4) {
                fmt_sop(f, &s, 4, &mut warn)?;
            }
        }
        if !op.bvh {
            let dmask = (w0 >> 8) & 0xf;
            if dmask != 0 {
                write!(f, " dmask:0x{dmask:x}")?;
            }
            write!(f, " dim:SQ_RSRC_IMG_{}", DIMS[((w0 >> 2) & 7) as usize])?;
        }
        for (word, bit, name) in [
            (w0, 7, " unorm"),
            (w0, 14, " glc"),
            (w0, 12, " slc"),
            (w0, 13, " dlc"),
            (w0, 15, " r128"),
            (w0, 16, " a16"),
            (w1, 21, " tfe"),
            (w1, 22, " lwe"),
            (w0, 17, " d16"),
        ] {
            // BVH operations print only a16 of these (the rest are fixed).
            if word & 1 << bit != 0 && (!op.bvh || bit == 16 && word == w0) {
                f.write_str(name)?;
            }
        }
        warn.write(f)
    }
}
