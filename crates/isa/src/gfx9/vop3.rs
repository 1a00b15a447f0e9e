//! VOP3 (VOP3a and VOP3b): the 64-bit vector ALU encoding, carrying the
//! promoted VOP1/VOP2/VOPC opcodes (`_e64` forms) and the three-source
//! VOP3-only opcodes. ISA manual, "Microcode formats: VOP3A / VOP3B".
//!
//! Word 0: vdst[7:0], abs[10:8] / sdst[14:8] (VOP3b), op_sel[14:11], clamp[15],
//! op[25:16], encoding 0b110100 [31:26]. Word 1: src0[8:0], src1[17:9],
//! src2[26:18], omod[28:27], neg[31:29].
//!
//! The per-opcode operand kinds and the modifier bits each opcode accepts come
//! from `tables/vop3.rs` (learned from LLVM 22).

use super::Inst;
use super::operand::{
    Half, Operand, SRC_CLASS, SRC_LITERAL, SRC_LOW, SRC_NARROW, SRC_WIDE, Special, decode_sreg,
    fmt_special,
};
use super::tables::vop3::VOP3;
use crate::{DecodeError, Target};
use std::fmt;

/// Destination kind of an opcode.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dst {
    No,
    /// VGPR range of this many dwords.
    V(u8),
    /// Scalar register (range) in the 8-bit vdst field.
    S(u8),
    /// AccVGPR range.
    A(u8),
}

/// How inline float constants print in a source slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cst {
    /// As a decimal float, 1/(2*pi) with single precision.
    F32,
    /// As a decimal float, 1/(2*pi) with double precision.
    F64,
    /// As the hexadecimal half-precision bit pattern (16-bit integer slots).
    I16,
}

/// A source slot: width in dwords, `SRC_*` flags (which operand kinds LLVM
/// annotates as not fitting the slot's register class), constant style.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Src(pub u8, pub u16, pub Cst);

/// A VGPR is flagged: the slot takes SGPRs and constants only.
pub const SRC_NO_VGPR: u16 = 1;
/// An odd-aligned VGPR range is flagged (`VS_*_Align2` class).
pub const SRC_ALIGN: u16 = 2;
/// An SGPR is flagged: the slot takes VGPRs only.
pub const SRC_NO_SGPR: u16 = 4;
/// An inline constant is flagged (`/*Invalid immediate*/`).
pub const SRC_NO_CONST: u16 = 8;
/// The slot's register class is `VReg_*` rather than `VS_*` (with
/// [`SRC_NO_SGPR`] on a one-dword slot: `VGPR_32`, not `VRegOrLds_32`).
pub const SRC_VREG: u16 = 16;
/// A literal constant is read (and printed) as 16 bits.
pub const SRC_LIT16: u16 = 32;
/// The field is an interpolation attribute (the `v_interp_*` opcodes of
/// gfx908): attr[5:0] and channel[7:6], printed `attrN.c` after src1.
pub const SRC_ATTR: u16 = 64;
/// With [`SRC_ATTR`]: bit 8 of the field is `high` (else it must be 0).
pub const SRC_HIGH: u16 = 128;
/// The field is the parameter of `v_interp_mov_f32_e64` (src1): `p10`,
/// `p20`, `p0`, any other value printed as `invalid_param_N`.
pub const SRC_PARAM: u16 = 256;

/// One opcode of the VOP3 table.
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    pub op: u16,
    /// Targets: bit 0 gfx90a, bit 1 gfx942, bit 2 gfx950, bit 3 gfx908.
    pub tg: u8,
    pub name: &'static str,
    pub dst: Dst,
    /// An odd destination VGPR/AGPR range is annotated (gfx90a and later
    /// need even-aligned tuples).
    pub dst_align: bool,
    /// VOP3b: a scalar carry-out/condition destination in bits 14:8.
    pub sdst: bool,
    pub srcs: &'static [Src],
    /// Number of `op_sel` entries LLVM prints (0: derived from the sources).
    pub opsel: u8,
    /// Modifier bits LLVM requires to be zero (bit i < 8: word 0 bit 8+i;
    /// bit 8+j: word 1 bit 27+j).
    pub zero: u16,
    /// Modifier bits LLVM prints (same numbering).
    pub mods: u16,
}

/// Modifier bit numbering shared by `Row::zero` and `Row::mods`.
const M_ABS: u16 = 0;
const M_OPSEL: u16 = 3;
const M_CLAMP: u16 = 7;
const M_OMOD: u16 = 8;
const M_NEG: u16 = 10;

/// Looks up the row for `op` on `target` by searching the table (the
/// reference for [`lookup_vop3`]).
#[cfg(test)]
pub(crate) fn lookup(rows: &[Row], op: u16, target: Target) -> Option<&Row> {
    let bit = target.bit();
    let start = rows.partition_point(|r| r.op < op);
    rows.get(start..)?
        .iter()
        .take_while(|r| r.op == op)
        .find(|r| r.tg & bit != 0)
}

/// The index in [`VOP3`] of the row for each (target, opcode), `u16::MAX`
/// where there is none; the same row [`lookup`] finds (the first of the
/// opcode's rows that names the target), built at compile time so that
/// decoding is one indexed load.
static VOP3_IDX: [[u16; 1024]; super::TARGETS] = {
    let mut t = [[u16::MAX; 1024]; super::TARGETS];
    // Walking backwards leaves the first matching row in each slot.
    let mut i = VOP3.len();
    while i > 0 {
        i -= 1;
        let r = &VOP3[i];
        let mut k = 0;
        while k < super::TARGETS {
            if r.tg & (1 << k) != 0 {
                t[k][(r.op & 0x3ff) as usize] = i as u16;
            }
            k += 1;
        }
    }
    t
};

/// What decoding checks of an opcode's operand fields, compiled from its
/// [`Row`] so that decoding reads neither the row nor its source slots.
///
/// The operand fields are src0, src1, src2 (word 1), the vdst field when it
/// is a scalar destination decoded like a source (VOPC `_e64`) and the
/// VOP3b sdst field; operand `k`'s [`SRC_CLASS`] lands at bits `4k..4k+3`
/// of a mask that `need` and `lit` test.
#[derive(Copy, Clone)]
struct Check {
    /// Modifier bits that must be zero, numbered as in [`Row::zero`]
    /// (without the sdst bits of VOP3b).
    zero: u16,
    /// For each operand, the [`SRC_NARROW`] or [`SRC_WIDE`] bit its value
    /// must have.
    need: u32,
    /// For each operand that may be a literal, its [`SRC_LITERAL`] bit.
    lit: u32,
}

/// The [`SRC_CLASS`] bit an operand of `n` dwords needs.
const fn width_bit(n: u8) -> u8 {
    if n >= 2 { SRC_WIDE } else { SRC_NARROW }
}

/// [`Check`] of each row of [`VOP3`].
static VOP3_CHECK: [Check; VOP3.len()] = {
    let mut t = [Check {
        zero: 0,
        need: 0,
        lit: 0,
    }; VOP3.len()];
    let mut i = 0;
    while i < VOP3.len() {
        let r = &VOP3[i];
        let (mut need, mut lit) = (0u32, 0u32);
        let mut k = 0;
        while k < r.srcs.len() {
            let fl = r.srcs[k].1;
            if fl & SRC_ATTR != 0 {
                // Any attribute and channel; `high` only where it exists.
                if fl & SRC_HIGH == 0 {
                    need |= (SRC_LOW as u32) << (4 * k);
                }
            } else if fl & SRC_PARAM == 0 {
                need |= (width_bit(r.srcs[k].0) as u32) << (4 * k);
                lit |= (SRC_LITERAL as u32) << (4 * k);
            }
            k += 1;
        }
        if let Dst::S(n) = r.dst {
            need |= (width_bit(n) as u32) << 12;
            lit |= (SRC_LITERAL as u32) << 12;
        }
        if r.sdst {
            need |= (SRC_WIDE as u32) << 16;
        }
        t[i] = Check {
            zero: if r.sdst { r.zero & !0x7f } else { r.zero },
            need,
            lit,
        };
        i += 1;
    }
    t
};

/// The VOP3 row of `op` (10 bits) on `target`, by table index.
#[inline]
fn lookup_vop3(op: u16, target: Target) -> Option<&'static Row> {
    let k = target.index();
    let i = *VOP3_IDX.get(k)?.get(usize::from(op))?;
    VOP3.get(usize::from(i))
}

/// A decoded VOP3 instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Vop3 {
    pub row: &'static Row,
    pub vdst: u8,
    /// Bits 14:8 of word 0: abs[2:0] and op_sel[3:0], or sdst (VOP3b).
    pub abs_opsel_sdst: u8,
    pub clamp: bool,
    /// The three 9-bit source fields (unused ones kept for re-encoding).
    pub src: [u16; 3],
    pub omod: u8,
    pub neg: u8,
    /// The literal constant dword (gfx950 only; a source field of 255).
    pub literal: Option<u32>,
}

/// Modifier bits of a word pair, numbered as in [`Row::zero`].
fn mod_bits(w0: u32, w1: u32) -> u16 {
    (((w0 >> 8) & 0xff) | (((w1 >> 27) & 0x1f) << 8)) as u16
}

impl Vop3 {
    /// The fields of a VOP3 instruction of `len` bytes whose opcode is row
    /// `r` of [`VOP3`].
    pub(crate) fn from_raw(r: usize, len: u8, w0: u32, w1: u32, w2: u32) -> Vop3 {
        Vop3 {
            row: &VOP3[r],
            vdst: w0 as u8,
            abs_opsel_sdst: ((w0 >> 8) & 0x7f) as u8,
            clamp: w0 & 0x8000 != 0,
            src: [
                (w1 & 0x1ff) as u16,
                ((w1 >> 9) & 0x1ff) as u16,
                ((w1 >> 18) & 0x1ff) as u16,
            ],
            omod: ((w1 >> 27) & 3) as u8,
            neg: (w1 >> 29) as u8,
            literal: (len == 12).then_some(w2),
        }
    }

    /// Decodes from the two instruction dwords; `w2` is the dword after them
    /// (a literal constant on gfx950), if present.
    /// On failure, reports whether the literal dword was missing.
    pub fn decode(target: Target, w0: u32, w1: u32, w2: Option<u32>) -> Result<Vop3, bool> {
        let op = ((w0 >> 16) & 0x3ff) as u16;
        let row = lookup_vop3(op, target).ok_or(false)?;
        let mut zero = row.zero;
        if row.sdst {
            zero &= !0x7f;
        }
        if mod_bits(w0, w1) & zero != 0 {
            return Err(false);
        }
        let src = [
            (w1 & 0x1ff) as u16,
            ((w1 >> 9) & 0x1ff) as u16,
            ((w1 >> 18) & 0x1ff) as u16,
        ];
        // VOPC `_e64` destinations decode like sources, literal included.
        let dst_lit = matches!(row.dst, Dst::S(_)) && w0 & 0xff == 255;
        let wants_lit = dst_lit
            || row
                .srcs
                .iter()
                .zip(src)
                .any(|(s, v)| v == 255 && s.1 & (SRC_ATTR | SRC_PARAM) == 0);
        let literal = if wants_lit && target.is_gfx950() {
            Some(w2.ok_or(true)?)
        } else {
            None
        };
        let i = Vop3 {
            row,
            vdst: w0 as u8,
            abs_opsel_sdst: ((w0 >> 8) & 0x7f) as u8,
            clamp: w0 & 0x8000 != 0,
            src,
            omod: ((w1 >> 27) & 3) as u8,
            neg: (w1 >> 29) as u8,
            literal,
        };
        if i.valid() { Ok(i) } else { Err(false) }
    }

    /// Whether LLVM accepts the operand values (reserved fields and
    /// misnamed 64-bit halves make the word invalid).
    fn valid(&self) -> bool {
        let r = self.row;
        let dst_ok = match r.dst {
            Dst::S(n) => {
                sdst_ok(u16::from(self.vdst), n) || (self.vdst == 255 && self.literal.is_some())
            }
            _ => true,
        };
        let sdst_valid = !r.sdst || sdst_ok(u16::from(self.abs_opsel_sdst), 2);
        dst_ok
            && sdst_valid
            && r.srcs.iter().zip(self.src).all(|(s, v)| match s.1 {
                fl if fl & SRC_ATTR != 0 => v < 256 || fl & SRC_HIGH != 0,
                fl if fl & SRC_PARAM != 0 => true,
                _ => src_valid(v, s.0) || (v == 255 && self.literal.is_some()),
            })
    }

    /// Size in bytes.
    pub fn len(&self) -> u8 {
        if self.literal.is_some() { 12 } else { 8 }
    }

    /// Never true.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Appends the instruction's bytes to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let [w0, w1] = self.encode();
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
        if let Some(l) = self.literal {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }

    /// The two instruction dwords.
    pub fn encode(&self) -> [u32; 2] {
        let w0 = 0xD000_0000
            | (u32::from(self.row.op) << 16)
            | (u32::from(self.clamp) << 15)
            | (u32::from(self.abs_opsel_sdst & 0x7f) << 8)
            | u32::from(self.vdst);
        let w1 = u32::from(self.src[0] & 0x1ff)
            | (u32::from(self.src[1] & 0x1ff) << 9)
            | (u32::from(self.src[2] & 0x1ff) << 18)
            | (u32::from(self.omod & 3) << 27)
            | (u32::from(self.neg & 7) << 29);
        [w0, w1]
    }

    fn has(&self, bit: u16) -> bool {
        self.row.mods & (1 << bit) != 0
    }

    /// Whether `op_sel[3]` is set on an opcode that has it: the result goes
    /// to the high half of the destination (ISA manual, VOP3A `OPSEL`).
    pub fn dst_op_sel(&self) -> bool {
        !self.row.sdst
            && self.has(M_OPSEL + 3)
            && !(self.row.name.starts_with("v_permlane") && self.row.name.contains("_swap"))
            && self.abs_opsel_sdst & 0x40 != 0
    }
}

/// Whether a source field value is an inline constant.
fn is_constant(v: u16) -> bool {
    matches!(v, 128..=208 | 240..=248 | 255)
}

/// Whether a scalar destination field value decodes for a destination of
/// `n` dwords. LLVM decodes the 8-bit field of VOPC `_e64` destinations with
/// the source-operand rules, so constants are accepted (and flagged).
fn sdst_ok(v: u16, n: u8) -> bool {
    if v > 127 {
        return src_valid(v, n) && v != 255;
    }
    decode_sreg(v, n).is_some()
}

/// Whether a source field value decodes at all for a slot of `n` dwords.
#[inline]
fn src_valid(v: u16, n: u8) -> bool {
    // VGPRs, the most frequent sources, are valid at any width.
    if v >= 256 {
        return true;
    }
    match v {
        0..=127 => decode_sreg(v, n).is_some(),
        128..=208 => true,
        230 => true,
        231 => n == 1,
        235..=248 => true,
        251..=253 => true,
        254 => n == 1,
        256..=511 => true,
        _ => false,
    }
}

/// Alignment warnings LLVM appends after the instruction text.
pub(crate) struct Warnings {
    items: [(&'static str, u16, u16); 6],
    len: usize,
    /// When nonzero, the register-class size (bits) named in warnings,
    /// for operands LLVM decodes wider than it prints.
    pub(crate) class_bits: u16,
}

impl Warnings {
    pub(crate) fn new() -> Self {
        Warnings {
            items: [("", 0, 0); 6],
            len: 0,
            class_bits: 0,
        }
    }

    fn push(&mut self, file: &'static str, bits: u16, idx: u16) {
        if let Some(s) = self.items.get_mut(self.len) {
            *s = (file, bits, idx);
            self.len += 1;
        }
    }

    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (file, bits, idx)) in self.items.iter().take(self.len).enumerate() {
            if i == 0 {
                f.write_str(" ; ")?;
            }
            write!(f, "Warning: {file}_{bits}: scalar reg isn't aligned {idx}")?;
        }
        Ok(())
    }
}

/// Writes a register range as LLVM does (`v1`, `v[2:3]`).
pub(crate) fn write_range(f: &mut fmt::Formatter<'_>, p: &str, idx: u16, n: u8) -> fmt::Result {
    if n <= 1 {
        write!(f, "{p}{idx}")
    } else {
        write!(f, "{p}[{idx}:{}]", u32::from(idx) + u32::from(n) - 1)
    }
}

fn invalid_reg(f: &mut fmt::Formatter<'_>, class: &str, bits: u32) -> fmt::Result {
    if bits == 0 {
        write!(
            f,
            "/*Invalid register, operand has '{class}' register class*/"
        )
    } else {
        write!(
            f,
            "/*Invalid register, operand has '{class}_{bits}_Align2' register class*/"
        )
    }
}

/// Writes a scalar register (SGPR/TTMP range, with LLVM's alignment fix-up
/// and warning, or a special register).
pub(crate) fn write_sreg(
    f: &mut fmt::Formatter<'_>,
    w: &mut Warnings,
    v: u16,
    n: u8,
) -> fmt::Result {
    let (p, file, idx) = match v {
        0..=101 => ("s", "SGPR", v),
        108..=123 => ("ttmp", "TTMP", v - 108),
        _ => {
            return match decode_sreg(v, n) {
                Some(Operand::Special(sp, h)) => fmt_special(f, sp, h),
                _ => f.write_str("<bad>"),
            };
        }
    };
    if n <= 1 {
        return write!(f, "{p}{idx}");
    }
    // LLVM has no 1024-bit scalar class: it decodes those as 512 bits.
    let n = n.min(16);
    let align = if n >= 4 { 4 } else { 2 };
    let a = idx & !(align - 1);
    if a != idx {
        let bits = if w.class_bits != 0 {
            w.class_bits
        } else {
            u16::from(n) * 32
        };
        w.push(file, bits, idx);
    }
    write_range(f, p, a, n)
}

/// The f16 bit patterns of the inline float constants 240..=248.
const F16_BITS: [u16; 9] = [
    0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
];
const FLOATS: [&str; 8] = ["0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0"];

/// Writes a 9-bit source operand for slot `s`.
pub(crate) fn write_src(
    f: &mut fmt::Formatter<'_>,
    w: &mut Warnings,
    v: u16,
    s: Src,
    lit: u32,
) -> fmt::Result {
    let Src(n, fl, cst) = s;
    let bits = u32::from(n) * 32;
    match v {
        256..=511 => {
            let idx = v - 256;
            write_range(f, "v", idx, n)?;
            if fl & SRC_NO_VGPR != 0 {
                return invalid_reg(f, "SReg_32", 0);
            }
            if n > 1 && idx % 2 == 1 && fl & SRC_ALIGN != 0 {
                let class = if fl & SRC_VREG != 0 { "VReg" } else { "VS" };
                return invalid_reg(f, class, bits);
            }
            Ok(())
        }
        0..=127 => {
            write_sreg(f, w, v, n)?;
            let flagged = matches!(v, 0..=124 | 126 | 127);
            if fl & SRC_NO_SGPR != 0 && flagged {
                if n == 1 && fl & SRC_VREG != 0 {
                    invalid_reg(f, "VGPR_32", 0)?;
                } else if n == 1 {
                    invalid_reg(f, "VRegOrLds_32", 0)?;
                } else {
                    invalid_reg(f, "VReg", bits)?;
                }
            }
            Ok(())
        }
        _ => {
            match v {
                128..=192 => write!(f, "{}", i32::from(v) - 128)?,
                193..=208 => write!(f, "{}", 192 - i32::from(v))?,
                240..=247 => match cst {
                    Cst::I16 => write!(f, "0x{:x}", F16_BITS[usize::from(v - 240)])?,
                    _ => f.write_str(FLOATS[usize::from(v - 240)])?,
                },
                248 => match cst {
                    Cst::I16 => f.write_str("0x3118")?,
                    Cst::F64 => f.write_str("0.15915494309189532")?,
                    Cst::F32 => f.write_str("0.15915494")?,
                },
                255 if fl & SRC_LIT16 != 0 => write!(f, "0x{:x}", lit & 0xffff)?,
                255 => write!(f, "0x{lit:x}")?,
                230 => return f.write_str("src_flat_scratch_base_lo"),
                231 => return f.write_str("src_flat_scratch_base_hi"),
                _ => {
                    let sp = match v {
                        235 => Special::SrcSharedBase,
                        236 => Special::SrcSharedLimit,
                        237 => Special::SrcPrivateBase,
                        238 => Special::SrcPrivateLimit,
                        239 => Special::SrcPopsExitingWaveId,
                        251 => Special::SrcVccz,
                        252 => Special::SrcExecz,
                        253 => Special::SrcScc,
                        _ => Special::SrcLdsDirect,
                    };
                    return fmt_special(f, sp, Half::Full);
                }
            }
            if fl & SRC_NO_CONST != 0 {
                f.write_str("/*Invalid immediate*/")?;
            }
            Ok(())
        }
    }
}

/// Writes the parameter operand of `v_interp_mov_f32` (`p10`, `p20`, `p0`;
/// LLVM names other values `invalid_param_N`).
pub(crate) fn write_interp_param(f: &mut fmt::Formatter<'_>, v: u16) -> fmt::Result {
    match v {
        0 => f.write_str("p10"),
        1 => f.write_str("p20"),
        2 => f.write_str("p0"),
        _ => write!(f, "invalid_param_{v}"),
    }
}

/// Writes a destination operand.
pub(crate) fn write_dst(
    f: &mut fmt::Formatter<'_>,
    w: &mut Warnings,
    v: u16,
    d: Dst,
    align: bool,
    lit: u32,
) -> fmt::Result {
    match d {
        Dst::No => Ok(()),
        Dst::V(n) | Dst::A(n) => {
            let p = if matches!(d, Dst::A(_)) { "a" } else { "v" };
            write_range(f, p, v, n)?;
            if align && n > 1 && v % 2 == 1 {
                let class = if p == "a" { "AReg" } else { "VReg" };
                invalid_reg(f, class, u32::from(n) * 32)?;
            }
            Ok(())
        }
        Dst::S(n) if v > 127 => write_src(f, w, v, Src(n, SRC_NO_CONST, Cst::F32), lit),
        Dst::S(n) => {
            write_sreg(f, w, v, n)?;
            if n == 1 && v == 124 {
                invalid_reg(f, "SReg_32_XM0", 0)?;
            }
            Ok(())
        }
    }
}

impl fmt::Display for Vop3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.row;
        let mut w = Warnings::new();
        f.write_str(r.name)?;
        let mut first = true;
        let mut sep = |f: &mut fmt::Formatter<'_>| -> fmt::Result {
            let s = if first { " " } else { ", " };
            first = false;
            f.write_str(s)
        };
        if r.dst != Dst::No {
            sep(f)?;
            write_dst(
                f,
                &mut w,
                u16::from(self.vdst),
                r.dst,
                r.dst_align,
                self.literal.unwrap_or(0),
            )?;
        }
        if r.sdst {
            sep(f)?;
            write_sreg(f, &mut w, u16::from(self.abs_opsel_sdst), 2)?;
        }
        // gfx950 v_bitop3_*: the truth table sits in the neg, abs and omod bits.
        let bitop3 = r.name.starts_with("v_bitop3");
        // gfx908's v_interp_*: the attribute (src0) is printed after src1.
        let interp = r.srcs.first().is_some_and(|s| s.1 & SRC_ATTR != 0);
        let order: &[usize] = if interp { &[1, 0, 2] } else { &[0, 1, 2] };
        for &i in order.iter().filter(|&&i| i < r.srcs.len()) {
            let (s, v) = (&r.srcs[i], self.src[i]);
            sep(f)?;
            if s.1 & SRC_ATTR != 0 {
                let chan = ["x", "y", "z", "w"][usize::from(v >> 6) & 3];
                write!(f, "attr{}.{chan}", v & 0x3f)?;
                continue;
            }
            if s.1 & SRC_PARAM != 0 {
                write_interp_param(f, v)?;
                continue;
            }
            if bitop3 {
                write_src(f, &mut w, v, *s, self.literal.unwrap_or(0))?;
                continue;
            }
            let i = i as u16;
            let neg = self.has(M_NEG + i) && self.neg & (1 << i) != 0;
            let abs = !r.sdst && self.has(M_ABS + i) && self.abs_opsel_sdst & (1 << i) != 0;
            // LLVM spells a negated constant without abs as `neg(c)`.
            let neg_fn = neg && !abs && is_constant(v);
            if neg_fn {
                f.write_str("neg(")?;
            } else if neg {
                f.write_str("-")?;
            }
            if abs {
                f.write_str("|")?;
            }
            write_src(f, &mut w, v, *s, self.literal.unwrap_or(0))?;
            if abs || neg_fn {
                f.write_str(if abs { "|" } else { ")" })?;
            }
        }
        if bitop3 {
            let t = self.neg | ((self.abs_opsel_sdst & 7) << 3) | (self.omod << 6);
            // LLVM prints small values in decimal.
            match t {
                0 => {}
                1..=10 => write!(f, " bitop3:{t}")?,
                _ => write!(f, " bitop3:0x{t:x}")?,
            }
        }
        // Decoding accepts bit 8 of an attribute only where it is `high`.
        if interp && self.src[0] & 0x100 != 0 {
            f.write_str(" high")?;
        }
        // gfx950's v_permlane16/32_swap_b32_e64 reuse op_sel[1:0] as the
        // DPP-style bound_ctrl and fi controls.
        let permlane_swap = r.name.starts_with("v_permlane") && r.name.contains("_swap");
        if permlane_swap {
            let os = self.abs_opsel_sdst >> 3;
            if os & 2 != 0 {
                f.write_str(" bound_ctrl:1")?;
            }
            if os & 1 != 0 {
                f.write_str(" fi:1")?;
            }
        } else if !interp {
            self.write_op_sel(f)?;
        }
        if self.clamp && self.has(M_CLAMP) {
            f.write_str(" clamp")?;
        }
        if !bitop3 && (self.has(M_OMOD) || self.has(M_OMOD + 1)) {
            match self.omod {
                1 => f.write_str(" mul:2")?,
                2 => f.write_str(" mul:4")?,
                3 => f.write_str(" div:2")?,
                _ => {}
            }
        }
        // LLVM prints an interpolation's op_sel last.
        if interp {
            self.write_op_sel(f)?;
        }
        w.write(f)
    }
}

impl Vop3 {
    /// Writes ` op_sel:[...]` where the opcode has op_sel bits and one is
    /// set.
    fn write_op_sel(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.row;
        if r.sdst || !(0..4).any(|k| self.has(M_OPSEL + k)) {
            return Ok(());
        }
        // The op_sel bits LLVM prints (it ignores the others).
        let os = (self.abs_opsel_sdst >> 3) & (r.mods >> M_OPSEL) as u8 & 0xf;
        if os != 0 {
            // Entries for the sources, then the destination (bit 3).
            let n = if r.opsel != 0 {
                usize::from(r.opsel)
            } else {
                r.srcs.len() + 1
            };
            f.write_str(" op_sel:[")?;
            for k in 0..n - 1 {
                write!(f, "{},", (os >> k) & 1)?;
            }
            write!(f, "{}]", (os >> 3) & 1)?;
        }
        Ok(())
    }
}

/// Decodes a VOP3 instruction (8 bytes, 12 with a gfx950 literal): the
/// checks of [`Vop3::decode`], made from the opcode's [`Check`] with one
/// table lookup per operand.
#[inline]
pub(crate) fn decode(target: Target, w0: u32, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let r = VOP3_IDX[target.index()][((w0 >> 16) & 0x3ff) as usize];
    let Some(c) = VOP3_CHECK.get(usize::from(r)) else {
        return Err(invalid);
    };
    if mod_bits(w0, w1) & c.zero != 0 {
        return Err(invalid);
    }
    // One lookup per operand field, then two tests for all of them: which
    // opcode, and so which operand rules, comes next is not predictable.
    let class = |v: u32| u32::from(SRC_CLASS[v as usize & 0x1ff]);
    let m = class(w1)
        | class(w1 >> 9) << 4
        | class(w1 >> 18) << 8
        | class(w0 & 0xff) << 12
        | class((w0 >> 8) & 0x7f) << 16;
    let (len, w2) = if m & c.lit == 0 {
        (8, 0)
    } else if target.is_gfx950() {
        (12, super::word(bytes, 2)?)
    } else {
        // Only gfx950 reads a literal; elsewhere the 255 does not decode.
        return Err(invalid);
    };
    if !m & c.need != 0 {
        return Err(invalid);
    }
    Ok(Inst::new(target, r, len, [w0, w1, w2, 0]))
}

#[cfg(test)]
mod tests {
    /// The compile-time index finds the same row as searching the table.
    #[test]
    fn indexed_lookup_matches_search() {
        for t in crate::gfx9::ALL_TARGETS {
            for op in 0..1024u16 {
                let a = super::lookup_vop3(op, t).map(|r| r as *const super::Row);
                let b = super::lookup(super::VOP3, op, t).map(|r| r as *const super::Row);
                assert_eq!(a, b, "{t:?} {op:#x}");
            }
        }
    }

    use crate::Target;

    /// The table-driven decoder accepts exactly the words the field-by-field
    /// [`super::Vop3::decode`] accepts, with the same length and error.
    #[test]
    fn fast_decode_matches_field_decode() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for t in crate::gfx9::ALL_TARGETS {
            for n in 0..300_000u32 {
                let r = next();
                // Every opcode, with random fields biased towards the
                // interesting source values (SGPRs, specials, 255).
                let op = n % 1024;
                let mut w1 = r as u32;
                if n & 1 == 0 {
                    w1 = (w1 & !0x1ff) | (((r >> 40) as u32) & 0xff);
                }
                if n & 2 == 0 {
                    w1 = (w1 & !(0x1ff << 9)) | (0xff << 9);
                }
                let w0 = 0xd000_0000 | op << 16 | ((r >> 32) as u32 & 0xffff);
                let w2 = (r >> 17) as u32;
                for have in [8usize, 12] {
                    let bytes: Vec<u8> = [w0, w1, w2]
                        .iter()
                        .flat_map(|w| w.to_le_bytes())
                        .take(have)
                        .collect();
                    let fast = super::decode(t, w0, &bytes);
                    let want = super::Vop3::decode(t, w0, w1, (have == 12).then_some(w2));
                    match (&fast, &want) {
                        (Ok(i), Ok(v)) => {
                            assert_eq!(i.len(), usize::from(v.len()), "{w0:08x} {w1:08x}");
                            assert_eq!(i.body(), crate::gfx9::Body::Vop3(v.clone()));
                        }
                        (Err(crate::DecodeError::Truncated { .. }), Err(true)) => {}
                        (Err(crate::DecodeError::Invalid { .. }), Err(false)) => {}
                        _ => panic!("{t} {w0:08x} {w1:08x} ({have} bytes): {fast:?} vs {want:?}"),
                    }
                }
            }
        }
    }

    /// Decodes `hex` and checks LLVM 22's text and the re-encoded bytes.
    fn check(t: Target, hex: &str, llvm: &str) {
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let inst = crate::decode(t, &bytes).unwrap();
        assert_eq!(inst.to_string(), llvm);
        assert_eq!(inst.encode(), bytes);
        assert_eq!(inst.len(), bytes.len());
    }

    #[test]
    fn modifiers_and_vop3b() {
        let t = Target::Gfx942;
        check(
            t,
            "0487cbd10a297afc",
            "v_fma_f32 v4, -|v10|, -|v20|, -|v30| clamp div:2",
        );
        check(
            t,
            "0406e1d10a297a04",
            "v_div_scale_f64 v[4:5], s[6:7], v[10:11], v[20:21], v[30:31]",
        );
        check(
            t,
            "0458f6d10a297a04",
            "v_min3_u16 v4, v10, v20, v30 op_sel:[1,1,0,1]",
        );
    }

    #[test]
    fn llvm_annotations() {
        let t = Target::Gfx942;
        check(
            t,
            "0500c9d00a290200",
            "v_cmp_lt_u32_e64 s[4:5], v10, v20 ; Warning: SGPR_64: scalar reg isn't aligned 5",
        );
        check(
            t,
            "0500ccd10b2b7e04",
            "v_fma_f64 v[5:6]/*Invalid register, operand has 'VReg_64_Align2' register class*/, \
             v[11:12]/*Invalid register, operand has 'VS_64_Align2' register class*/, \
             v[21:22]/*Invalid register, operand has 'VS_64_Align2' register class*/, \
             v[31:32]/*Invalid register, operand has 'VS_64_Align2' register class*/",
        );
        check(
            t,
            "040089d20a290200",
            "v_readlane_b32 s4, v10, v20/*Invalid register, operand has 'SReg_32' register class*/",
        );
    }

    /// Texts from LLVM 22 (`D199100C 0000010B` is in the gfx950 corpus).
    #[test]
    fn permlane_swap_controls() {
        let t = Target::Gfx950;
        check(
            t,
            "0c1099d10b010000",
            "v_permlane16_swap_b32_e64 v12, v11 bound_ctrl:1",
        );
        check(
            t,
            "0c0899d10b010000",
            "v_permlane16_swap_b32_e64 v12, v11 fi:1",
        );
        check(
            t,
            "0c1899d10b010000",
            "v_permlane16_swap_b32_e64 v12, v11 bound_ctrl:1 fi:1",
        );
        check(t, "0c2099d10b010000", "v_permlane16_swap_b32_e64 v12, v11");
    }

    #[test]
    fn gfx950_literal_and_bitop3() {
        let t = Target::Gfx950;
        check(
            t,
            "0400c4d10aff79040100003f",
            "v_cubeid_f32 v4, v10, 0x3f000001, v30",
        );
        check(
            t,
            "670a33d266943775",
            "v_bitop3_b16 v103, flat_scratch_lo, v202, v77 bitop3:0x93 op_sel:[1,0,0,0]",
        );
        // The literal is missing.
        assert!(matches!(
            crate::decode(t, &[0x04, 0, 0xc4, 0xd1, 0x0a, 0xff, 0x79, 0x04]),
            Err(crate::DecodeError::Truncated { need: 12, have: 8 })
        ));
        // gfx940 and earlier: v_bitop3 does not exist.
        assert!(
            crate::decode(
                Target::Gfx942,
                &[0x67, 0x0a, 0x33, 0xd2, 0x66, 0x94, 0x37, 0x75]
            )
            .is_err()
        );
    }
}
