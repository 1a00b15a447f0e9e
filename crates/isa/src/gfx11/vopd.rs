//! The GFX11 VOPD encoding: two VALU operations issued together, X and Y,
//! in 64 bits plus an optional shared literal (RDNA3 ISA manual, "VOPD").
//! Wave32 only.
//!
//! Word 0: srcX0 8:0, vsrcX1 16:9, opY 21:17, opX 25:22, 0b110010 31:26.
//! Word 1: srcY0 8:0, vsrcY1 16:9, vdstY[7:1] 23:17, vdstX 31:24; bit 0 of
//! vdstY is the opposite of bit 0 of vdstX.

use super::operand::{Operand, ValType, decode_src};
use super::sop::Raw;
use super::tables::vopd::{VOPD_X, VOPD_Y};
use super::valu::{Slot, fmt_operand, fmt_vgpr};
use crate::gfx9::sop::Warnings;
use crate::{DecodeError, Target};
use std::fmt;

/// A printed operand of one half of a VOPD pair.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    Dst,
    Src0,
    Src1,
    /// The literal constant of `v_dual_fmaak`/`v_dual_fmamk`.
    K,
}

/// One X or Y opcode.
#[derive(Debug, PartialEq, Eq)]
pub struct DualRow {
    pub op: u8,
    pub tg: u8,
    pub name: &'static str,
    pub roles: &'static [Role],
    /// How constants print in src0.
    pub ty: ValType,
    /// The vsrc1 field must be zero (`v_dual_mov_b32`).
    pub zero_vsrc1: bool,
}

/// One family's X and Y opcodes (a generated `tables/vopd.rs`).
pub struct VopdTables {
    pub x: &'static [DualRow],
    pub y: &'static [DualRow],
}

/// GFX11's tables.
pub static TABLES: VopdTables = VopdTables {
    x: VOPD_X,
    y: VOPD_Y,
};

fn row(rows: &'static [DualRow], op: u32, target: Target) -> Option<&'static DualRow> {
    rows.iter()
        .find(|r| u32::from(r.op) == op && r.tg & target.bit() != 0)
}

/// Decodes a VOPD instruction (8 bytes, 12 with a literal) with the
/// family's tables: the rows (X's index in the high byte), length and
/// dwords.
pub(crate) fn decode(
    t: &'static VopdTables,
    target: Target,
    wave64: bool,
    w0: u32,
    bytes: &[u8],
) -> Result<Raw, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    if wave64 {
        return Err(invalid);
    }
    let (x, y) = match (
        row(t.x, (w0 >> 22) & 0xf, target),
        row(t.y, (w0 >> 17) & 0x1f, target),
    ) {
        (Some(x), Some(y)) => (x, y),
        _ => return Err(invalid),
    };
    let mut lit = false;
    for (r, src0, vsrc1) in [
        (x, w0 & 0x1ff, (w0 >> 9) & 0xff),
        (y, w1 & 0x1ff, (w1 >> 9) & 0xff),
    ] {
        if decode_src(src0 as u16, 1, Some(0)).is_none() || r.zero_vsrc1 && vsrc1 != 0 {
            return Err(invalid);
        }
        lit |= src0 == 255 || r.roles.contains(&Role::K);
    }
    let (w2, len) = if lit {
        (super::word(bytes, 2)?, 12)
    } else {
        (0, 8)
    };
    let rx = t.x.iter().position(|r| std::ptr::eq(r, x)).unwrap_or(0);
    let ry = t.y.iter().position(|r| std::ptr::eq(r, y)).unwrap_or(0);
    Ok(((rx << 8 | ry) as u16, len, [w0, w1, w2, 0]))
}

/// A decoded VOPD pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Vopd {
    pub x: &'static DualRow,
    pub y: &'static DualRow,
    pub w0: u32,
    pub w1: u32,
    pub literal: Option<u32>,
}

impl Vopd {
    pub(crate) fn from_raw(
        t: &'static VopdTables,
        r: u16,
        len: u8,
        [w0, w1, w2]: [u32; 3],
    ) -> Vopd {
        Vopd {
            x: &t.x[usize::from(r >> 8)],
            y: &t.y[usize::from(r & 0xff)],
            w0,
            w1,
            literal: (len == 12).then_some(w2),
        }
    }

    /// `X :: Y` mnemonics are printed; this is the X half's.
    pub fn mnemonic(&self) -> &'static str {
        self.x.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
        out.extend_from_slice(&self.w1.to_le_bytes());
        if let Some(l) = self.literal {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }

    /// The X and Y destination VGPRs.
    pub fn vdst(&self) -> (u16, u16) {
        let x = (self.w1 >> 24) as u16;
        let y = (((self.w1 >> 17) & 0x7f) << 1) as u16 | (!x & 1);
        (x, y)
    }
}

fn fmt_half(
    f: &mut fmt::Formatter<'_>,
    r: &DualRow,
    dst: u16,
    src0: u16,
    vsrc1: u16,
    literal: Option<u32>,
    warn: &mut Warnings,
) -> fmt::Result {
    f.write_str(r.name)?;
    let mut sep = " ";
    for role in r.roles {
        f.write_str(sep)?;
        sep = ", ";
        match role {
            Role::Dst => fmt_vgpr(f, dst, 1)?,
            Role::Src1 => fmt_vgpr(f, vsrc1, 1)?,
            Role::K => write!(f, "0x{:x}", literal.unwrap_or(0))?,
            Role::Src0 => {
                if let Some(op) = decode_src(src0, 1, literal) {
                    let slot = Slot {
                        width: 1,
                        ty: r.ty,
                        plain: false,
                        bad_const: false,
                        bad_s: "",
                        bad_v: "",
                        t16: false,
                        hi: false,
                    };
                    let _: &Operand = &op;
                    fmt_operand(f, &op, &slot, warn)?;
                }
            }
        }
    }
    Ok(())
}

impl fmt::Display for Vopd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut warn = Warnings::default();
        let (dx, dy) = self.vdst();
        let (w0, w1) = (self.w0, self.w1);
        fmt_half(
            f,
            self.x,
            dx,
            (w0 & 0x1ff) as u16,
            ((w0 >> 9) & 0xff) as u16,
            self.literal,
            &mut warn,
        )?;
        f.write_str(" :: ")?;
        fmt_half(
            f,
            self.y,
            dy,
            (w1 & 0x1ff) as u16,
            ((w1 >> 9) & 0xff) as u16,
            self.literal,
            &mut warn,
        )?;
        warn.write(f)
    }
}
