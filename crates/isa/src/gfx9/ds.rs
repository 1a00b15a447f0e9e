//! DS (local/global data share) encoding: LDS and GDS loads, stores, atomics,
//! permutes and GWS operations ("DS" microcode format).
//!
//! Layout: dword 0 holds offset0 [7:0], offset1 [15:8], gds [16], op [24:17],
//! acc [25]; dword 1 holds addr [7:0], data0 [15:8], data1 [23:16] and
//! vdst [31:24]. Which fields an opcode uses, and which bits must hold a fixed
//! value for LLVM to accept the word, come from the generated table.

use super::Inst;
use super::tables::ds::{DS_GFX90A, DS_GFX908, DS_GFX942, DS_GFX950, DS_OPS};
use crate::{DecodeError, Target};
use std::fmt;

/// A register field of the DS encoding.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DsField {
    Addr,
    Data0,
    Data1,
    Vdst,
}

/// How the 16 offset bits are printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OffStyle {
    /// Not printed (the bits are fixed at zero).
    NoOff,
    /// One 16-bit byte offset, `offset:N`.
    Off16,
    /// Two 8-bit offsets, `offset0:N offset1:M` (the `*2*` opcodes).
    Off2,
    /// The `ds_swizzle_b32` pattern, `offset:swizzle(...)`.
    Swizzle,
}

/// One printed operand of an opcode.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DsOperand {
    pub field: DsField,
    /// Width in dwords.
    pub width: u8,
    /// Register class LLVM names for a misaligned tuple (acc clear / set).
    pub cls: &'static str,
    pub cls_acc: &'static str,
    /// Whether the acc bit turns this operand into an AccVGPR.
    pub acc_agpr: bool,
}

/// Per-opcode facts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DsOp {
    pub name: &'static str,
    /// Bits of the 64-bit instruction (dword 1 in the high half) that must
    /// equal `val` for the opcode to decode.
    pub fix: u64,
    pub val: u64,
    pub ops: &'static [DsOperand],
    pub off: OffStyle,
    /// Whether LLVM prints the `gds` modifier when the bit is set.
    pub gds: bool,
}

/// A decoded DS instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Ds {
    pub opcode: u8,
    pub op: &'static DsOp,
    /// offset1:offset0 as one 16-bit value.
    pub offset: u16,
    pub gds: bool,
    pub acc: bool,
    pub addr: u8,
    pub data0: u8,
    pub data1: u8,
    pub vdst: u8,
}

pub(crate) fn table(target: Target) -> &'static [u16; 256] {
    match target {
        Target::Gfx90a => &DS_GFX90A,
        Target::Gfx942 => &DS_GFX942,
        Target::Gfx908 => &DS_GFX908,
        // gfx950: the decoder is given GFX9 targets only.
        _ => &DS_GFX950,
    }
}

/// Decodes a DS instruction (8 bytes).
pub(crate) fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let w0 = super::word(bytes, 0)?;
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let opcode = ((w0 >> 17) & 0xff) as u8;
    let row = table(target)[usize::from(opcode)];
    let op = DS_OPS.get(usize::from(row)).ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & op.fix != op.val {
        return Err(invalid);
    }
    let ds = Ds::with_op(op, w0, w1);
    for o in op.ops {
        if ds.acc && o.acc_agpr && u16::from(ds.field(o.field)) + u16::from(o.width) > 256 {
            return Err(invalid);
        }
    }
    Ok(Inst::new(target, row, 8, [w0, w1, 0, 0]))
}

impl Ds {
    /// The fields of a DS instruction whose opcode is row `r` of [`DS_OPS`].
    pub(crate) fn from_raw(r: usize, w0: u32, w1: u32) -> Ds {
        Ds::with_op(&DS_OPS[r], w0, w1)
    }

    #[inline(always)]
    fn with_op(op: &'static DsOp, w0: u32, w1: u32) -> Ds {
        Ds {
            opcode: ((w0 >> 17) & 0xff) as u8,
            op,
            offset: (w0 & 0xffff) as u16,
            gds: w0 & (1 << 16) != 0,
            acc: w0 & (1 << 25) != 0,
            addr: (w1 & 0xff) as u8,
            data0: ((w1 >> 8) & 0xff) as u8,
            data1: ((w1 >> 16) & 0xff) as u8,
            vdst: (w1 >> 24) as u8,
        }
    }

    fn field(&self, f: DsField) -> u8 {
        match f {
            DsField::Addr => self.addr,
            DsField::Data0 => self.data0,
            DsField::Data1 => self.data1,
            DsField::Vdst => self.vdst,
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        self.op.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let w0 = (0x36u32 << 26)
            | u32::from(self.offset)
            | (u32::from(self.gds) << 16)
            | (u32::from(self.opcode) << 17)
            | (u32::from(self.acc) << 25);
        let w1 = u32::from(self.addr)
            | (u32::from(self.data0) << 8)
            | (u32::from(self.data1) << 16)
            | (u32::from(self.vdst) << 24);
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
    }
}

/// Prints a VGPR or AccVGPR tuple as LLVM does, including the comment LLVM
/// appends when a multi-dword tuple is not 64-bit aligned (CDNA requires even
/// register numbers for tuples).
pub(crate) fn fmt_vreg(
    f: &mut fmt::Formatter<'_>,
    agpr: bool,
    index: u16,
    width: u8,
    cls: &str,
) -> fmt::Result {
    let p = if agpr { "a" } else { "v" };
    if width <= 1 {
        write!(f, "{p}{index}")?;
    } else {
        write!(f, "{p}[{index}:{}]", index + u16::from(width) - 1)?;
    }
    // An `_Align2` class (gfx90a and later) is named for an odd tuple;
    // another (gfx908's VGPR-only data classes, named for an AGPR) always.
    let misaligned = width > 1 && index % 2 == 1;
    if !cls.is_empty() && (misaligned || !cls.ends_with("_Align2")) {
        write!(
            f,
            "/*Invalid register, operand has '{cls}' register class*/"
        )?;
    }
    Ok(())
}

/// Writes the `ds_swizzle_b32` offset pattern (ISA manual, "DS_SWIZZLE_B32").
fn fmt_swizzle(f: &mut fmt::Formatter<'_>, off: u16) -> fmt::Result {
    if off & 0x8000 != 0 {
        if off & 0xff00 == 0x8000 {
            let q = |i: u16| (off >> (2 * i)) & 3;
            return write!(
                f,
                " offset:swizzle(QUAD_PERM,{},{},{},{})",
                q(0),
                q(1),
                q(2),
                q(3)
            );
        }
        return match off & 0xe000 {
            0xc000 => write!(
                f,
                " offset:swizzle(ROTATE,{},{})",
                (off >> 10) & 1,
                (off >> 5) & 0x1f
            ),
            0xe000 => write!(f, " offset:swizzle(FFT,{})", off & 0x1f),
            _ => write!(f, " offset:{off}"),
        };
    }
    let and = off & 0x1f;
    let or = (off >> 5) & 0x1f;
    let xor = (off >> 10) & 0x1f;
    if and == 0x1f && or == 0 && xor != 0 {
        if xor.is_power_of_two() {
            return write!(f, " offset:swizzle(SWAP,{xor})");
        }
        if (xor + 1).is_power_of_two() {
            return write!(f, " offset:swizzle(REVERSE,{})", xor + 1);
        }
    }
    if xor == 0 {
        for gs in [2u16, 4, 8, 16, 32] {
            if and == 0x1f & !(gs - 1) && or < gs {
                return write!(f, " offset:swizzle(BROADCAST,{gs},{or})");
            }
        }
    }
    f.write_str(" offset:swizzle(BITMASK_PERM,\"")?;
    for i in (0..5).rev() {
        let (a, o, x) = ((and >> i) & 1, (or >> i) & 1, (xor >> i) & 1);
        let c = match (a, o, x) {
            (0, _, _) | (_, 1, _) => {
                if o ^ x == 1 {
                    '1'
                } else {
                    '0'
                }
            }
            (_, _, 0) => 'p',
            _ => 'i',
        };
        write!(f, "{c}")?;
    }
    f.write_str("\")")
}

impl fmt::Display for Ds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.op.name)?;
        for (i, o) in self.op.ops.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            let agpr = self.acc && o.acc_agpr;
            let cls = if self.acc { o.cls_acc } else { o.cls };
            fmt_vreg(f, agpr, u16::from(self.field(o.field)), o.width, cls)?;
        }
        match self.op.off {
            OffStyle::NoOff => {}
            OffStyle::Off16 if self.offset != 0 => write!(f, " offset:{}", self.offset)?,
            OffStyle::Off16 => {}
            OffStyle::Off2 => {
                let (o0, o1) = (self.offset & 0xff, self.offset >> 8);
                if o0 != 0 {
                    write!(f, " offset0:{o0}")?;
                }
                if o1 != 0 {
                    write!(f, " offset1:{o1}")?;
                }
            }
            OffStyle::Swizzle if self.offset != 0 => fmt_swizzle(f, self.offset)?,
            OffStyle::Swizzle => {}
        }
        if self.gds && self.op.gds {
            f.write_str(" gds")?;
        }
        Ok(())
    }
}

/// Test helper shared by the memory-encoding modules: decodes each case,
/// compares the text (and size) with LLVM 22's, and checks that `encode`
/// reproduces the bytes. `None` means LLVM prints `<invalid>`.
#[cfg(test)]
pub(crate) fn check_cases(cases: &[(Target, &[u32], Option<&str>, usize)]) {
    for &(target, words, text, len) in cases {
        let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        bytes.extend_from_slice(&[0; 8]);
        match (crate::decode(target, &bytes), text) {
            (Ok(inst), Some(t)) => {
                assert_eq!(inst.to_string(), t, "{words:08x?} on {target}");
                assert_eq!(inst.len(), len, "{words:08x?} on {target}");
                assert_eq!(inst.encode(), bytes[..len], "{words:08x?} round trip");
            }
            (Err(_), None) => {}
            (r, t) => panic!("{words:08x?} on {target}: ours {r:?}, LLVM {t:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_cases;
    use crate::Target::*;

    /// Expected texts are LLVM 22's (`llvm-mc-22 --disassemble`).
    #[test]
    fn matches_llvm() {
        check_cases(&[
            (
                Gfx942,
                &[0xd8ec0008, 0x02000002],
                Some("ds_read_b64 v[2:3], v2 offset:8"),
                8,
            ),
            (
                Gfx942,
                &[0xd81c0201, 0x00000201],
                Some("ds_write2_b32 v1, v2, v0 offset0:1 offset1:2"),
                8,
            ),
            (
                Gfx942,
                &[0xd87a80e4, 0x01000002],
                Some("ds_swizzle_b32 v1, v2 offset:swizzle(QUAD_PERM,0,1,2,3)"),
                8,
            ),
            (
                Gfx942,
                &[0xd87a041f, 0x01000002],
                Some("ds_swizzle_b32 v1, v2 offset:swizzle(SWAP,1)"),
                8,
            ),
            (Gfx950, &[0xd9310000, 0x00000001], None, 4),
            (
                Gfx90a,
                &[0xdaec0000, 0x02000002],
                Some("ds_read_b64 a[2:3], v2"),
                8,
            ),
            (
                Gfx942,
                &[0xd8ec0000, 0x01000002],
                Some(
                    "ds_read_b64 v[1:2]/*Invalid register, operand has 'AV_64_Align2' register class*/, v2",
                ),
                8,
            ),
            (Gfx942, &[0xd87d0000, 0x01000002], None, 4),
            (
                Gfx950,
                &[0xd9c00000, 0x04000002],
                Some("ds_read_b64_tr_b4 v[4:5], v2"),
                8,
            ),
            (Gfx942, &[0xd9c00000, 0x04000002], None, 4),
            (Gfx942, &[0xd8280000, 0x00000000], Some("ds_nop"), 8),
            (Gfx942, &[0xd8280001, 0x00000000], None, 4),
        ]);
    }

    #[test]
    fn truncated() {
        assert!(matches!(
            crate::decode(Gfx942, &[0x08, 0x00, 0xec, 0xd8]),
            Err(crate::DecodeError::Truncated { .. })
        ));
    }
}
