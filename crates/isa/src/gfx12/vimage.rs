//! The GFX12 VIMAGE and VSAMPLE encodings (image loads, stores, atomics,
//! samples and gathers), 96 bits. Both: dim 2:0, r128 4, d16 5, a16 6, nv
//! 7, op 21:14, dmask 25:22; vdata 39:32, rsrc 49:41 (a 9-bit source
//! operand), scope 51:50, th 54:52; the address registers in the bytes of
//! the third dword. VIMAGE (0b110100 31:26): tfe 55. VSAMPLE (0b111001):
//! tfe 3, unorm 13, lwe 40, samp 63:55 (a 9-bit source operand). RDNA4 ISA
//! manual, "VIMAGE", "VSAMPLE".
//!
//! The rows are GFX11's MIMG rows (`gfx11::mimg::MimgOp`, learned by
//! `scripts/gen/gfx12/vimage.py`) and LLVM's variant selection is
//! `gfx11::mimg::select_layout`'s, with GFX12's address lists in the NSA
//! fields.

use super::cpol::{ThKind, fmt_th_scope};
use super::tables::vimage::{IMAGE_OPS, VIMAGE, VSAMPLE};
use crate::gfx9::sop::Warnings;
use crate::gfx11::mimg::{DIMS, MimgOp, Select, select_layout};
use crate::gfx11::operand::{ValType, decode_src};
use crate::gfx11::valu::{Slot, fmt_operand, fmt_vgpr};
use crate::{DecodeError, Target};
use std::fmt;

/// Whether a first dword is VSAMPLE's (else VIMAGE's).
pub(crate) fn is_sample(w0: u32) -> bool {
    w0 >> 26 == 0x39
}

/// The rsrc (8 dwords) or samp (4 dwords) operand of a 9-bit field.
fn resource(v: u32, width: u8, literal: Option<u32>) -> Option<crate::gfx11::operand::Operand> {
    decode_src(v as u16, width, literal)
}

/// Decodes a VIMAGE or VSAMPLE instruction (12 bytes, 16 with a literal
/// resource or sampler): the row, length and dwords.
pub(crate) fn decode(
    target: Target,
    w0: u32,
    bytes: &[u8],
) -> Result<(u16, u8, [u32; 4]), DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = crate::gfx9::word(bytes, 1)?;
    let w2 = crate::gfx9::word(bytes, 2)?;
    let sample = is_sample(w0);
    let tab = if sample { &VSAMPLE } else { &VIMAGE };
    let r = tab[((w0 >> 14) & 0xff) as usize];
    let op = IMAGE_OPS.get(usize::from(r)).ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    let (rsrc, samp) = ((w1 >> 9) & 0x1ff, w1 >> 23);
    if all & op.fix != u64::from(op.val) & op.fix
        || resource(rsrc, 8, Some(0)).is_none()
        || op.ssamp && resource(samp, 4, Some(0)).is_none()
        || (0..4).any(|k| op.addr_zero & (1 << k) != 0 && (w2 >> (8 * k)) & 0xff != 0)
    {
        return Err(invalid);
    }
    if rsrc == 255 || op.ssamp && samp == 255 {
        let w3 = crate::gfx9::word(bytes, 3)?;
        return Ok((u16::from(r), 16, [w0, w1, w2, w3]));
    }
    Ok((u16::from(r), 12, [w0, w1, w2, 0]))
}

/// A decoded VIMAGE or VSAMPLE instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    pub op: &'static MimgOp,
    pub w0: u32,
    pub w1: u32,
    pub w2: u32,
    /// The literal resource or sampler.
    pub literal: Option<u32>,
}

impl Image {
    pub(crate) fn from_raw(r: usize, len: u8, [w0, w1, w2, w3]: [u32; 4]) -> Image {
        Image {
            op: &IMAGE_OPS[r],
            w0,
            w1,
            w2,
            literal: (len == 16).then_some(w3),
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.op.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        for w in [Some(self.w0), Some(self.w1), Some(self.w2), self.literal]
            .into_iter()
            .flatten()
        {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// The registers LLVM prints: data count and address widths (VIMAGE
    /// and VSAMPLE always have separate address registers).
    pub(crate) fn layout(&self) -> crate::gfx11::mimg::Layout {
        let (w0, w1) = (self.w0, self.w1);
        let tfe = if is_sample(w0) {
            w0 & 1 << 3
        } else {
            w1 & 1 << 23
        } != 0;
        let sel = Select {
            nsa: true,
            dim: (w0 & 7) as usize,
            a16: ((w0 >> 6) & 1) as usize,
            dmask: (w0 >> 22) & 0xf,
            d16: w0 & 1 << 5 != 0,
            tfe,
            vdata: (w1 & 0xff) as u16,
        };
        select_layout(self.op, &sel, &|k| ((self.w2 >> (8 * k)) & 0xff) as u16)
    }

    /// How th reads, from the opcode's kind.
    fn th_kind(&self) -> ThKind {
        if self.op.name.starts_with("image_atomic") {
            ThKind::Atomic
        } else if self.op.name.starts_with("image_store") {
            ThKind::Store
        } else {
            ThKind::Load
        }
    }
}

impl fmt::Display for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (op, w0, w1) = (self.op, self.w0, self.w1);
        let sample = is_sample(w0);
        let tfe = if sample { w0 & 1 << 3 } else { w1 & 1 << 23 } != 0;
        let addr_reg = |k: usize| ((self.w2 >> (8 * k)) & 0xff) as u16;
        let l = self.layout();
        let mut warn = Warnings::default();
        f.write_str(op.name)?;
        f.write_str(op.nsa_sep)?;
        fmt_vgpr(f, (w1 & 0xff) as u16, l.data)?;
        f.write_str(", ")?;
        if l.addrs.len() == 1 {
            fmt_vgpr(f, addr_reg(0), l.addrs[0])?;
        } else {
            f.write_str("[")?;
            for (k, &w) in l.addrs.iter().enumerate() {
                if k > 0 {
                    f.write_str(", ")?;
                }
                fmt_vgpr(f, addr_reg(k), w)?;
            }
            f.write_str("]")?;
        }
        let res = |v: u32, width: u8, class: &'static str| {
            let slot = Slot {
                width,
                ty: ValType::I32,
                plain: true,
                bad_const: true,
                bad_s: "",
                bad_v: class,
                t16: false,
                hi: false,
            };
            (resource(v, width, self.literal), slot)
        };
        for (v, width, class, on) in [
            ((w1 >> 9) & 0x1ff, 8, "SReg_256_XNULL", true),
            (w1 >> 23, 4, "SReg_128_XNULL", op.ssamp),
        ] {
            if !on {
                continue;
            }
            f.write_str(", ")?;
            if let (Some(o), slot) = res(v, width, class) {
                fmt_operand(f, &o, &slot, &mut warn)?;
            }
        }
        let dmask = (w0 >> 22) & 0xf;
        if dmask != 0 {
            write!(f, " dmask:0x{dmask:x}")?;
        }
        write!(f, " dim:SQ_RSRC_IMG_{}", DIMS[(w0 & 7) as usize])?;
        if sample && w0 & 1 << 13 != 0 {
            f.write_str(" unorm")?;
        }
        fmt_th_scope(
            f,
            self.th_kind(),
            ((w1 >> 20) & 7) as u8,
            ((w1 >> 18) & 3) as u8,
        )?;
        for (on, name) in [
            (w0 & 1 << 7 != 0, " nv"),
            (w0 & 1 << 4 != 0, " r128"),
            (w0 & 1 << 6 != 0, " a16"),
            (tfe, " tfe"),
            (sample && w1 & 1 << 8 != 0, " lwe"),
            (w0 & 1 << 5 != 0, " d16"),
        ] {
            if on {
                f.write_str(name)?;
            }
        }
        warn.write(f)
    }
}
