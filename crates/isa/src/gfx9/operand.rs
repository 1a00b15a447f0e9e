//! Operands shared by the GFX9 encodings: the 9-bit source operand field
//! (SGPRs, special registers, inline constants, literal, VGPRs), register
//! ranges, and how LLVM prints them.
//!
//! Field values follow the GFX9 / CDNA ISA manuals, "Scalar and vector source
//! operands" tables.

use std::fmt;

/// A register file.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum RegFile {
    /// Scalar registers `s0`..`s101`.
    Sgpr,
    /// Vector registers `v0`..`v255`.
    Vgpr,
    /// Accumulation registers `a0`..`a255` (CDNA).
    Agpr,
    /// Trap temporaries `ttmp0`..`ttmp15`.
    Ttmp,
}

/// A range of `count` consecutive 32-bit registers starting at `index`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Reg {
    pub file: RegFile,
    pub index: u16,
    /// Width in dwords (1 for `v1`, 2 for `v[2:3]`, ...).
    pub count: u8,
}

impl Reg {
    pub const fn new(file: RegFile, index: u16, count: u8) -> Reg {
        Reg { file, index, count }
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = match self.file {
            RegFile::Sgpr => "s",
            RegFile::Vgpr => "v",
            RegFile::Agpr => "a",
            RegFile::Ttmp => "ttmp",
        };
        if self.count <= 1 {
            write!(f, "{p}{}", self.index)
        } else {
            let last = u32::from(self.index) + u32::from(self.count) - 1;
            write!(f, "{p}[{}:{last}]", self.index)
        }
    }
}

/// Special scalar registers and hardware constants addressable as operands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Special {
    FlatScratch,
    XnackMask,
    Vcc,
    Exec,
    M0,
    Null,
    SrcSharedBase,
    SrcSharedLimit,
    SrcPrivateBase,
    SrcPrivateLimit,
    SrcPopsExitingWaveId,
    SrcFlatScratchBase,
    SrcVccz,
    SrcExecz,
    SrcScc,
    SrcLdsDirect,
}

/// Which half (or both halves) of a 64-bit special register an operand names.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Half {
    Lo,
    Hi,
    /// The whole 64-bit register (`vcc`, `exec`, `flat_scratch`).
    Full,
}

/// The value type an operand is read as; it decides how inline constants and
/// literals are printed and interpreted.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ValType {
    I16,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
    /// Packed pair of 16-bit integers.
    V2I16,
    /// Packed pair of halves.
    V2F16,
    V2BF16,
    /// Packed pair of f32 (gfx90a+ `v_pk_*_f32`), read from 64 bits.
    V2F32,
    /// Packed pair of halves whose inline constants fill both halves
    /// (GFX11 `v_pk_fmac_f16_e32`).
    V2F16Splat,
    /// A half whose literal LLVM shows as the whole dword (GFX11 DPP forms
    /// of the f16 dot products).
    F16Wide,
}

/// The inline floating-point constants (source field 240..248).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum InlineFloat {
    Half,
    NegHalf,
    One,
    NegOne,
    Two,
    NegTwo,
    Four,
    NegFour,
    /// 1/(2*pi).
    InvTwoPi,
}

impl InlineFloat {
    pub fn from_field(v: u16) -> Option<InlineFloat> {
        use InlineFloat::*;
        Some(match v {
            240 => Half,
            241 => NegHalf,
            242 => One,
            243 => NegOne,
            244 => Two,
            245 => NegTwo,
            246 => Four,
            247 => NegFour,
            248 => InvTwoPi,
            _ => return None,
        })
    }

    pub fn field(self) -> u16 {
        use InlineFloat::*;
        match self {
            Half => 240,
            NegHalf => 241,
            One => 242,
            NegOne => 243,
            Two => 244,
            NegTwo => 245,
            Four => 246,
            NegFour => 247,
            InvTwoPi => 248,
        }
    }

    pub fn value(self) -> f64 {
        use InlineFloat::*;
        match self {
            Half => 0.5,
            NegHalf => -0.5,
            One => 1.0,
            NegOne => -1.0,
            Two => 2.0,
            NegTwo => -2.0,
            Four => 4.0,
            NegFour => -4.0,
            InvTwoPi => 0.159_154_943_091_895_35,
        }
    }
}

/// A decoded operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Operand {
    Reg(Reg),
    Special(Special, Half),
    /// Inline integer constant -16..=64.
    InlineInt(i8),
    InlineFloat(InlineFloat),
    /// A 32-bit literal constant that follows the instruction.
    Literal(u32),
    /// An immediate carried in an instruction field (offsets, simm16, ...).
    Imm(i64),
}

/// Decodes a scalar source/destination field value that names a register or a
/// special register (not a constant); `count` is the operand width in dwords.
/// Returns `None` for values that are reserved on `target`.
#[inline]
pub fn decode_sreg(field: u16, count: u8) -> Option<Operand> {
    let full_or = |lo: u16, sp: Special| -> Option<Operand> {
        if count >= 2 {
            (field == lo).then_some(Operand::Special(sp, Half::Full))
        } else if field == lo {
            Some(Operand::Special(sp, Half::Lo))
        } else {
            Some(Operand::Special(sp, Half::Hi))
        }
    };
    match field {
        0..=101 => Some(Operand::Reg(Reg::new(RegFile::Sgpr, field, count))),
        102 | 103 => full_or(102, Special::FlatScratch),
        104 | 105 => full_or(104, Special::XnackMask),
        106 | 107 => full_or(106, Special::Vcc),
        108..=123 => Some(Operand::Reg(Reg::new(RegFile::Ttmp, field - 108, count))),
        124 if count == 1 => Some(Operand::Special(Special::M0, Half::Full)),
        125 => Some(Operand::Special(Special::Null, Half::Full)),
        126 | 127 => full_or(126, Special::Exec),
        _ => None,
    }
}

/// Decodes a 9-bit vector-ALU source field (or an 8-bit scalar source field,
/// which is the same space below 256). `count` is the operand width in dwords;
/// `literal` is the dword that follows the instruction when the field is 255.
///
/// Reserved values, and halves of 64-bit registers used as 64-bit operands
/// (`vcc_hi`, `m0`, `src_lds_direct`, ...), give `None`, as LLVM's decoder does.
#[inline]
pub fn decode_src(field: u16, count: u8, literal: Option<u32>) -> Option<Operand> {
    let wide = count >= 2;
    match field {
        0..=127 => decode_sreg(field, count),
        128..=192 => Some(Operand::InlineInt((field - 128) as i8)),
        193..=208 => Some(Operand::InlineInt(-((field - 192) as i8))),
        230 => Some(Operand::Special(Special::SrcFlatScratchBase, Half::Lo)),
        231 if !wide => Some(Operand::Special(Special::SrcFlatScratchBase, Half::Hi)),
        235 => Some(Operand::Special(Special::SrcSharedBase, Half::Full)),
        236 => Some(Operand::Special(Special::SrcSharedLimit, Half::Full)),
        237 => Some(Operand::Special(Special::SrcPrivateBase, Half::Full)),
        238 => Some(Operand::Special(Special::SrcPrivateLimit, Half::Full)),
        239 => Some(Operand::Special(Special::SrcPopsExitingWaveId, Half::Full)),
        240..=248 => InlineFloat::from_field(field).map(Operand::InlineFloat),
        251 => Some(Operand::Special(Special::SrcVccz, Half::Full)),
        252 => Some(Operand::Special(Special::SrcExecz, Half::Full)),
        253 => Some(Operand::Special(Special::SrcScc, Half::Full)),
        254 if !wide => Some(Operand::Special(Special::SrcLdsDirect, Half::Full)),
        255 => literal.map(Operand::Literal),
        256..=511 => Some(Operand::Reg(Reg::new(RegFile::Vgpr, field - 256, count))),
        _ => None,
    }
}

/// Whether [`decode_src`] gives an operand for the 9-bit field value `v`
/// read as one dword (`wide` false) or more. 255 (a literal) counts as
/// decoding: whether the literal is there is the caller's to check.
const fn src_field_ok(v: u16, wide: bool) -> bool {
    match v {
        0..=101 | 108..=123 | 125 | 128..=208 | 230 | 235..=248 | 251..=253 | 255..=511 => true,
        // The high halves of the 64-bit special registers.
        102..=107 | 126 | 127 => !wide || v & 1 == 0,
        124 | 231 | 254 => !wide,
        _ => false,
    }
}

/// [`src_field_ok`] for every field value: bit `v % 64` of word `v / 64`,
/// for one-dword operands (index 0) and wider ones (index 1).
static SRC_OK: [[u64; 8]; 2] = {
    let mut t = [[0u64; 8]; 2];
    let mut w = 0;
    while w < 2 {
        let mut v = 0;
        while v < 512 {
            if src_field_ok(v as u16, w == 1) {
                t[w][v / 64] |= 1 << (v % 64);
            }
            v += 1;
        }
        w += 1;
    }
    t
};

/// Whether the source field value `v` (9 bits, or an 8-bit scalar field)
/// decodes for an operand of one dword (`wide` false) or more, by table:
/// the check every decoder makes for every source. A literal (255) counts
/// as decoding.
#[inline(always)]
pub(crate) fn src_ok(v: u32, wide: bool) -> bool {
    SRC_OK[usize::from(wide)][(v as usize >> 6) & 7] >> (v & 63) & 1 != 0
}

/// [`SRC_CLASS`] bit: the field value decodes as a one-dword operand.
pub(crate) const SRC_NARROW: u8 = 1;
/// [`SRC_CLASS`] bit: the field value decodes as a wider operand.
pub(crate) const SRC_WIDE: u8 = 2;
/// [`SRC_CLASS`] bit: the field value is the literal (255).
pub(crate) const SRC_LITERAL: u8 = 4;
/// [`SRC_CLASS`] bit: the field value is below 256 (an interpolation
/// attribute field without `high`).
pub(crate) const SRC_LOW: u8 = 8;

/// For each 9-bit source field value, which of [`SRC_NARROW`],
/// [`SRC_WIDE`] and [`SRC_LITERAL`] hold, so that a decoder checks several
/// operands with one lookup each and a few bit operations (no branch on
/// the operand kinds).
pub(crate) static SRC_CLASS: [u8; 512] = {
    let mut t = [0u8; 512];
    let mut v = 0;
    while v < 512 {
        let mut c = 0;
        if src_field_ok(v as u16, false) {
            c |= SRC_NARROW;
        }
        if src_field_ok(v as u16, true) {
            c |= SRC_WIDE;
        }
        if v == 255 {
            c |= SRC_LITERAL;
        }
        if v < 256 {
            c |= SRC_LOW;
        }
        t[v] = c;
        v += 1;
    }
    t
};

/// The source-field value that encodes `op` (inverse of [`decode_src`]).
pub fn encode_src(op: &Operand) -> u16 {
    match *op {
        Operand::Reg(r) => match r.file {
            RegFile::Sgpr => r.index,
            RegFile::Ttmp => 108 + r.index,
            RegFile::Vgpr => 256 + r.index,
            RegFile::Agpr => 256 + r.index,
        },
        Operand::Special(sp, half) => {
            let hi = u16::from(half == Half::Hi);
            match sp {
                Special::FlatScratch => 102 + hi,
                Special::XnackMask => 104 + hi,
                Special::Vcc => 106 + hi,
                Special::M0 => 124,
                Special::Null => 125,
                Special::Exec => 126 + hi,
                Special::SrcSharedBase => 235,
                Special::SrcSharedLimit => 236,
                Special::SrcPrivateBase => 237,
                Special::SrcPrivateLimit => 238,
                Special::SrcPopsExitingWaveId => 239,
                Special::SrcFlatScratchBase => 230 + hi,
                Special::SrcVccz => 251,
                Special::SrcExecz => 252,
                Special::SrcScc => 253,
                Special::SrcLdsDirect => 254,
            }
        }
        Operand::InlineInt(v) if v >= 0 => 128 + v as u16,
        Operand::InlineInt(v) => 192 + (-i16::from(v)) as u16,
        Operand::InlineFloat(c) => c.field(),
        Operand::Literal(_) => 255,
        Operand::Imm(_) => 255,
    }
}

/// Writes a special register the way LLVM names it.
pub fn fmt_special(f: &mut fmt::Formatter<'_>, sp: Special, half: Half) -> fmt::Result {
    let base = match sp {
        Special::FlatScratch => "flat_scratch",
        Special::XnackMask => "xnack_mask",
        Special::Vcc => "vcc",
        Special::Exec => "exec",
        Special::M0 => return f.write_str("m0"),
        Special::Null => return f.write_str("null"),
        Special::SrcSharedBase => return f.write_str("src_shared_base"),
        Special::SrcSharedLimit => return f.write_str("src_shared_limit"),
        Special::SrcPrivateBase => return f.write_str("src_private_base"),
        Special::SrcPrivateLimit => return f.write_str("src_private_limit"),
        Special::SrcPopsExitingWaveId => return f.write_str("src_pops_exiting_wave_id"),
        Special::SrcFlatScratchBase => "src_flat_scratch_base",
        Special::SrcVccz => return f.write_str("src_vccz"),
        Special::SrcExecz => return f.write_str("src_execz"),
        Special::SrcScc => return f.write_str("src_scc"),
        Special::SrcLdsDirect => return f.write_str("src_lds_direct"),
    };
    match half {
        Half::Full => f.write_str(base),
        Half::Lo => write!(f, "{base}_lo"),
        Half::Hi => write!(f, "{base}_hi"),
    }
}

/// Operand with the value type it is read as, for printing in LLVM syntax.
pub struct Typed<'a>(pub &'a Operand, pub ValType);

impl fmt::Display for Typed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self.0 {
            Operand::Reg(r) => write!(f, "{r}"),
            Operand::Special(sp, half) => fmt_special(f, sp, half),
            Operand::InlineInt(v) => write!(f, "{v}"),
            Operand::InlineFloat(c) => fmt_inline_float(f, c, self.1),
            Operand::Literal(v) => fmt_literal(f, v, self.1),
            Operand::Imm(v) => write!(f, "{v}"),
        }
    }
}

/// The f32 bit patterns of the inline float constants (source 240..248).
pub(crate) const F32_INLINE: [u32; 9] = [
    0x3f00_0000,
    0xbf00_0000,
    0x3f80_0000,
    0xbf80_0000,
    0x4000_0000,
    0xc000_0000,
    0x4080_0000,
    0xc080_0000,
    0x3e22_f983,
];
/// The f16 bit patterns of the inline float constants.
const F16_INLINE: [u16; 9] = [
    0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
];
/// The bf16 bit patterns of the inline float constants.
const BF16_INLINE: [u16; 9] = [
    0x3f00, 0xbf00, 0x3f80, 0xbf80, 0x4000, 0xc000, 0x4080, 0xc080, 0x3e22,
];
/// The high dwords of the f64 inline float constants (1/(2*pi) has no such
/// form), in [`InlineFloat`] order.
const F64_HI_INLINE: [u32; 8] = [
    0x3fe0_0000,
    0xbfe0_0000,
    0x3ff0_0000,
    0xbff0_0000,
    0x4000_0000,
    0xc000_0000,
    0x4010_0000,
    0xc010_0000,
];
const FLOAT_TEXT: [&str; 9] = [
    "0.5",
    "-0.5",
    "1.0",
    "-1.0",
    "2.0",
    "-2.0",
    "4.0",
    "-4.0",
    "0.15915494",
];

/// Whether a 32-bit value equals an inline integer (-16..=64).
fn inline_int32(v: u32) -> bool {
    let s = v as i32;
    (-16..=64).contains(&s)
}

/// Whether a 16-bit value equals an inline integer (-16..=64 as 16 bits).
fn inline_int16(v: u16) -> bool {
    let s = v as i16;
    (-16..=64).contains(&s)
}

/// Whether a 32-bit value could have been encoded as an inline constant of
/// a 32-bit operand (an integer or one of the f32 float constants).
pub fn inline32(v: u32) -> bool {
    inline_int32(v) || F32_INLINE.contains(&v)
}

/// Writes a 32-bit value the way LLVM writes a 32-bit immediate that is not
/// tied to an operand type: an inline integer or float constant by value,
/// anything else in hex.
pub fn fmt_plain32(f: &mut fmt::Formatter<'_>, v: u32) -> fmt::Result {
    if inline_int32(v) {
        return write!(f, "{}", v as i32);
    }
    if let Some(i) = F32_INLINE.iter().position(|&c| c == v) {
        return f.write_str(FLOAT_TEXT[i]);
    }
    write!(f, "0x{v:x}")
}

/// Writes a literal constant (source 255) as LLVM 22 does for an operand of
/// type `ty`. A literal whose value an inline constant of that type could have
/// expressed is marked `lit(...)`; 16-bit operands show only the low half
/// unless they are so marked; a 64-bit float operand takes the literal as its
/// high dword and prints the resulting double when it is an inline value; a
/// 64-bit integer operand zero-extends it.
pub fn fmt_literal(f: &mut fmt::Formatter<'_>, v: u32, ty: ValType) -> fmt::Result {
    let lo = v as u16;
    let (marked, shown) = match ty {
        ValType::I32 | ValType::F32 | ValType::V2I16 => (inline32(v), v),
        ValType::F16 => (inline_int16(lo) || F16_INLINE.contains(&lo), u32::from(lo)),
        ValType::F16Wide => (inline_int16(lo) || F16_INLINE.contains(&lo), v),
        ValType::I16 => (inline32(v), u32::from(lo)),
        ValType::BF16 => (inline_int16(lo) || BF16_INLINE.contains(&lo), v),
        ValType::V2F16 => (
            inline_int32(v) || F16_INLINE.contains(&(v as u16)) && v >> 16 == 0,
            v,
        ),
        ValType::V2F16Splat => {
            let hi = (v >> 16) as u16;
            let splat = hi == lo && (F16_INLINE.contains(&lo) || lo <= 64);
            (inline_int32(v) || splat, v)
        }
        ValType::V2BF16 => (
            inline_int32(v) || BF16_INLINE.contains(&(v as u16)) && v >> 16 == 0,
            v,
        ),
        ValType::F64 | ValType::V2F32 => {
            if v == 0 {
                return f.write_str("0");
            }
            if let Some(i) = F64_HI_INLINE.iter().position(|&c| c == v) {
                return f.write_str(FLOAT_TEXT[i]);
            }
            (false, v)
        }
        ValType::I64 => (v <= 64, v),
    };
    if marked {
        write!(f, "lit(0x{v:x})")
    } else {
        write!(f, "0x{shown:x}")
    }
}

/// LLVM prints 1/(2*pi) with the precision of the operand type, and the
/// float constants of a 16-bit integer operand as their f16 bit patterns.
pub fn fmt_inline_float(f: &mut fmt::Formatter<'_>, c: InlineFloat, ty: ValType) -> fmt::Result {
    let i = usize::from(c.field() - 240);
    match ty {
        ValType::I16 => write!(f, "0x{:x}", F16_INLINE[i]),
        ValType::F64 | ValType::I64 | ValType::V2F32 if c == InlineFloat::InvTwoPi => {
            f.write_str("0.15915494309189532")
        }
        _ => f.write_str(FLOAT_TEXT[i]),
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Typed(self, ValType::I32).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lit(u32, ValType);
    impl fmt::Display for Lit {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            fmt_literal(f, self.0, self.1)
        }
    }

    /// The validity table agrees with the source decoder at every width.
    #[test]
    fn src_ok_matches_decode_src() {
        for n in [1, 2, 3, 4, 8, 16] {
            for v in 0..512u16 {
                assert_eq!(
                    src_ok(u32::from(v), n >= 2),
                    decode_src(v, n, Some(0)).is_some(),
                    "{v} at {n} dwords"
                );
            }
        }
    }

    /// Literal texts as LLVM 22 prints them (probed with v_add_f32,
    /// v_add_f16, v_add_u16, v_pk_fmac_f16, v_cvt_f32_bf16, v_rcp_f64 and
    /// v_mov_b64 on gfx942/gfx950).
    #[test]
    fn literal_printing_per_value_type() {
        let cases: &[(ValType, u32, &str)] = &[
            (ValType::F32, 0x3f80_0000, "lit(0x3f800000)"),
            (ValType::F32, 0x3e22_f983, "lit(0x3e22f983)"),
            (ValType::I32, 0x40, "lit(0x40)"),
            (ValType::I32, 0x41, "0x41"),
            (ValType::I32, 0xffff_fff0, "lit(0xfffffff0)"),
            (ValType::I32, 0xffff_ffef, "0xffffffef"),
            (ValType::F16, 0x3c00, "lit(0x3c00)"),
            (ValType::F16, 0xffff_3c00, "lit(0xffff3c00)"),
            (ValType::F16, 0x1234_5678, "0x5678"),
            (ValType::F16, 0x3e22_f983, "0xf983"),
            (ValType::I16, 0x3c00, "0x3c00"),
            (ValType::I16, 0x3ff0_0000, "0x0"),
            (ValType::I16, 0x3f80_0000, "lit(0x3f800000)"),
            (ValType::V2F16, 0x3c00, "lit(0x3c00)"),
            (ValType::V2F16, 0x3f80_0000, "0x3f800000"),
            (ValType::BF16, 0x3f80, "lit(0x3f80)"),
            (ValType::BF16, 0x1234_5678, "0x12345678"),
            (ValType::V2BF16, 0x3f80, "lit(0x3f80)"),
            (ValType::F16Wide, 0x3f80_0000, "lit(0x3f800000)"),
            (ValType::F16Wide, 0x1234_5678, "0x12345678"),
            (ValType::V2BF16, 0xffff_3f80, "0xffff3f80"),
            (ValType::F64, 0, "0"),
            (ValType::F64, 0x3ff0_0000, "1.0"),
            (ValType::F64, 0x3f80_0000, "0x3f800000"),
            (ValType::I64, 0x40, "lit(0x40)"),
            (ValType::I64, 0xffff_ffff, "0xffffffff"),
        ];
        for &(ty, v, want) in cases {
            assert_eq!(Lit(v, ty).to_string(), want, "{ty:?} {v:#x}");
        }
    }

    #[test]
    fn source_fields_and_64_bit_halves() {
        assert_eq!(
            decode_src(106, 1, None),
            Some(Operand::Special(Special::Vcc, Half::Lo))
        );
        assert_eq!(
            decode_src(106, 2, None),
            Some(Operand::Special(Special::Vcc, Half::Full))
        );
        assert_eq!(decode_src(107, 2, None), None);
        assert_eq!(decode_src(124, 2, None), None);
        assert_eq!(decode_src(254, 2, None), None);
        assert_eq!(decode_src(231, 2, None), None);
        assert_eq!(decode_src(220, 1, None), None);
        assert_eq!(decode_src(255, 1, None), None);
        assert_eq!(decode_src(255, 1, Some(7)), Some(Operand::Literal(7)));
        for field in (0..512u16).filter(|&f| f != 255) {
            if let Some(op) = decode_src(field, 1, None) {
                assert_eq!(encode_src(&op), field, "{op:?}");
            }
        }
        assert_eq!(
            Operand::InlineFloat(InlineFloat::InvTwoPi).to_string(),
            "0.15915494"
        );
        let t = Typed(&Operand::InlineFloat(InlineFloat::Half), ValType::I16).to_string();
        assert_eq!(t, "0x3800");
        let t = Typed(&Operand::InlineFloat(InlineFloat::InvTwoPi), ValType::F64).to_string();
        assert_eq!(t, "0.15915494309189532");
    }
}
