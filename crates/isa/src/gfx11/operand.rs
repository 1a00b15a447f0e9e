//! The GFX11 source-operand space: the 9-bit source field (SGPRs, special
//! registers, inline constants, literal, VGPRs) as RDNA3's ISA manual
//! ("Scalar and vector source operands") and LLVM 22 define it. It differs
//! from GFX9's in the registers above s101: s102..s105 are SGPRs, 124 is
//! `null` and 125 is `m0`; there is no `flat_scratch` or `xnack_mask`.
//!
//! The operand values and their printing are shared with GFX9
//! ([`crate::gfx9::operand`]).

pub use crate::gfx9::operand::{
    Half, InlineFloat, Operand, Reg, RegFile, Special, Typed, ValType, fmt_inline_float,
    fmt_literal, fmt_special,
};

/// Which of 124 and 125 is `m0` and which `null`: GFX10 numbers m0 124 and
/// null 125, GFX11 and GFX12 the other way round; the rest of the source
/// operand space is the same. The shared decoders read GFX11's numbering;
/// a family's tables name its own, and [`Sregs::field`] maps a field to
/// GFX11's numbering before decoding and back after encoding.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sregs {
    Gfx10,
    Gfx11,
}

impl Sregs {
    /// The GFX11-numbered value of a scalar or source field (an
    /// involution: it also maps GFX11's numbering back).
    #[inline(always)]
    pub fn field(self, v: u16) -> u16 {
        match (self, v) {
            (Sregs::Gfx10, 124) => 125,
            (Sregs::Gfx10, 125) => 124,
            _ => v,
        }
    }

    /// [`decode_src`] of a field numbered this way.
    #[inline(always)]
    pub fn decode_src(self, v: u16, count: u8, literal: Option<u32>) -> Option<Operand> {
        decode_src(self.field(v), count, literal)
    }

    /// [`decode_sreg`] of a field numbered this way.
    #[inline(always)]
    pub fn decode_sreg(self, v: u16, count: u8) -> Option<Operand> {
        decode_sreg(self.field(v), count)
    }

    /// [`encode_src`] numbered this way.
    #[inline(always)]
    pub fn encode_src(self, op: &Operand) -> u16 {
        self.field(encode_src(op))
    }
}

/// Decodes a scalar register field (7 bits, or the low 128 values of a
/// source field) read as `count` dwords; `None` for the values LLVM rejects
/// at that width (the high halves of 64-bit registers, `m0` as a pair).
#[inline]
pub fn decode_sreg(field: u16, count: u8) -> Option<Operand> {
    let wide = count >= 2;
    let pair = |sp: Special| -> Option<Operand> {
        match (wide, field & 1 == 1) {
            (true, true) => None,
            (true, false) => Some(Operand::Special(sp, Half::Full)),
            (false, false) => Some(Operand::Special(sp, Half::Lo)),
            (false, true) => Some(Operand::Special(sp, Half::Hi)),
        }
    };
    match field {
        0..=105 => Some(Operand::Reg(Reg::new(RegFile::Sgpr, field, count))),
        106 | 107 => pair(Special::Vcc),
        108..=123 => Some(Operand::Reg(Reg::new(RegFile::Ttmp, field - 108, count))),
        124 => Some(Operand::Special(Special::Null, Half::Full)),
        125 if !wide => Some(Operand::Special(Special::M0, Half::Full)),
        126 | 127 => pair(Special::Exec),
        _ => None,
    }
}

/// Decodes a 9-bit source field (or an 8-bit scalar source field) read as
/// `count` dwords; `literal` is the dword that follows the instruction when
/// the field is 255. `None` for reserved values.
#[inline]
pub fn decode_src(field: u16, count: u8, literal: Option<u32>) -> Option<Operand> {
    let wide = count >= 2;
    if count > 2 {
        // Tuples of three or more dwords: SGPR/TTMP tuples and `null`, or
        // a constant; no other special register.
        return match field {
            0..=127 => decode_stuple(field, count),
            128..=208 | 240..=248 | 255 => decode_src(field, 1, literal),
            256..=511 => Some(Operand::Reg(Reg::new(RegFile::Vgpr, field - 256, count))),
            _ => None,
        };
    }
    let full = |sp: Special| Some(Operand::Special(sp, Half::Full));
    match field {
        0..=127 => decode_sreg(field, count),
        128..=192 => Some(Operand::InlineInt((field - 128) as i8)),
        193..=208 => Some(Operand::InlineInt(-((field - 192) as i8))),
        230 => Some(Operand::Special(Special::SrcFlatScratchBase, Half::Lo)),
        231 if !wide => Some(Operand::Special(Special::SrcFlatScratchBase, Half::Hi)),
        235 => full(Special::SrcSharedBase),
        236 => full(Special::SrcSharedLimit),
        237 => full(Special::SrcPrivateBase),
        238 => full(Special::SrcPrivateLimit),
        239 => full(Special::SrcPopsExitingWaveId),
        240..=248 => InlineFloat::from_field(field).map(Operand::InlineFloat),
        251 => full(Special::SrcVccz),
        252 => full(Special::SrcExecz),
        253 => full(Special::SrcScc),
        254 if !wide => full(Special::SrcLdsDirect),
        255 => literal.map(Operand::Literal),
        256..=511 => Some(Operand::Reg(Reg::new(RegFile::Vgpr, field - 256, count))),
        _ => None,
    }
}

/// The source-field value that encodes `op` (inverse of [`decode_src`]).
pub fn encode_src(op: &Operand) -> u16 {
    match *op {
        Operand::Reg(r) => match r.file {
            RegFile::Sgpr => r.index,
            RegFile::Ttmp => 108 + r.index,
            RegFile::Vgpr | RegFile::Agpr => 256 + r.index,
        },
        Operand::Special(sp, half) => {
            let hi = u16::from(half == Half::Hi);
            match sp {
                Special::Vcc => 106 + hi,
                Special::Null => 124,
                Special::M0 => 125,
                Special::Exec => 126 + hi,
                Special::SrcFlatScratchBase => 230 + hi,
                Special::SrcSharedBase => 235,
                Special::SrcSharedLimit => 236,
                Special::SrcPrivateBase => 237,
                Special::SrcPrivateLimit => 238,
                Special::SrcPopsExitingWaveId => 239,
                Special::SrcVccz => 251,
                Special::SrcExecz => 252,
                Special::SrcScc => 253,
                Special::SrcLdsDirect => 254,
                // Not GFX11 operands; never decoded.
                Special::FlatScratch | Special::XnackMask => 0,
            }
        }
        Operand::InlineInt(v) if v >= 0 => 128 + v as u16,
        Operand::InlineInt(v) => 192 + (-i16::from(v)) as u16,
        Operand::InlineFloat(c) => c.field(),
        Operand::Literal(_) | Operand::Imm(_) => 255,
    }
}

/// Decodes a 7-bit scalar register field as an operand of `count` dwords
/// the way LLVM's scalar register classes accept it: SGPR and TTMP tuples
/// (a misaligned tuple is printed from the aligned-down register, with a
/// warning, by `fmt_sop`), `vcc` and `exec` as pairs, `null` at any width.
/// `None` for the values LLVM rejects.
pub fn decode_stuple(field: u16, count: u8) -> Option<Operand> {
    if count <= 2 {
        return decode_sreg(field, count);
    }
    let aligned = field & !3;
    let n = u16::from(count);
    // LLVM has no 96-bit TTMP class: such a field reads as TTMP_256.
    let tcount = if count == 3 { 8 } else { count };
    match field {
        0..=105 if aligned + n <= 104 => Some(Operand::Reg(Reg::new(RegFile::Sgpr, field, count))),
        108..=123 if aligned - 108 + u16::from(tcount) <= 16 => {
            Some(Operand::Reg(Reg::new(RegFile::Ttmp, field - 108, tcount)))
        }
        124 => Some(Operand::Special(Special::Null, Half::Full)),
        _ => None,
    }
}

/// Writes `v` as LLVM's `formatHex` writes a signed value: `-0x1`, `0x10`.
pub(crate) fn fmt_signed_hex(f: &mut std::fmt::Formatter<'_>, v: i64) -> std::fmt::Result {
    if v < 0 {
        write!(f, "-0x{:x}", v.unsigned_abs())
    } else {
        write!(f, "0x{v:x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        for v in (0..512u16).filter(|&v| v != 255) {
            if let Some(op) = decode_src(v, 1, None) {
                assert_eq!(encode_src(&op), v, "{op:?}");
            }
        }
        assert_eq!(
            decode_src(124, 2, None),
            Some(Operand::Special(Special::Null, Half::Full))
        );
        assert_eq!(decode_src(125, 2, None), None);
        assert_eq!(decode_src(107, 2, None), None);
    }
}
