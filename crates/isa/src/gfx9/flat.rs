//! FLAT encoding with its three segments: FLAT (seg 0), SCRATCH (seg 1) and
//! GLOBAL (seg 2) loads, stores and atomics ("FLAT" microcode format).
//!
//! Dword 0: offset [12:0] (unsigned for FLAT, signed for SCRATCH/GLOBAL),
//! lds [13] (gfx940+ SCRATCH: sve, "scratch VGPR enable"), seg [15:14],
//! glc/sc0 [16], slc/nt [17], op [24:18], scc/sc1 [25]. Dword 1: addr [7:0],
//! data [15:8], saddr [22:16] (0x7f: none), acc [23], vdst [31:24].

use super::Inst;
use super::ds::fmt_vreg;
use super::tables::flat::*;
use crate::{DecodeError, Target};
use std::fmt;

/// Per-opcode facts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlatOp {
    pub name: &'static str,
    /// Bits of the 64-bit instruction (dword 1 high) that must equal `val`.
    pub fix: u64,
    pub val: u64,
    /// vdst width without and with glc/sc0 (atomics return only with it).
    pub vdst: u8,
    pub vdst_glc: u8,
    /// data width (0: none).
    pub data: u8,
    /// Register classes LLVM names for misaligned tuples, indexed by
    /// `glc * 4 + acc * 2 + (0 for vdst, 1 for data)`.
    pub cls: [&'static str; 8],
    /// Bit `glc + 2 * scc` set: the acc bit may be set with that cache policy
    /// (some float atomics have no AccVGPR form with glc and scc both set).
    pub acc_ok: u8,
}

/// A decoded FLAT, SCRATCH or GLOBAL instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Flat {
    pub seg: u8,
    pub opcode: u8,
    pub op: &'static FlatOp,
    /// The 13-bit offset field as stored.
    pub offset: u16,
    /// lds (or sve for gfx940+ SCRATCH).
    pub lds: bool,
    pub glc: bool,
    pub slc: bool,
    pub scc: bool,
    pub addr: u8,
    pub data: u8,
    pub saddr: u8,
    pub acc: bool,
    pub vdst: u8,
}

pub(crate) struct Tabs {
    pub(crate) ops: &'static [u16; 384],
    s64: &'static [&'static str; 128],
    s32: &'static [&'static str; 128],
}

pub(crate) fn tabs(target: Target) -> Tabs {
    match target {
        Target::Gfx90a => Tabs {
            ops: &FLAT_GFX90A,
            s64: &SADDR64_GFX90A,
            s32: &SADDR32_GFX90A,
        },
        Target::Gfx942 => Tabs {
            ops: &FLAT_GFX942,
            s64: &SADDR64_GFX942,
            s32: &SADDR32_GFX942,
        },
        Target::Gfx908 => Tabs {
            ops: &FLAT_GFX908,
            s64: &SADDR64_GFX908,
            s32: &SADDR32_GFX908,
        },
        // gfx950: the decoder is given GFX9 targets only.
        _ => Tabs {
            ops: &FLAT_GFX950,
            s64: &SADDR64_GFX950,
            s32: &SADDR32_GFX950,
        },
    }
}

/// Decodes a FLAT-format instruction (8 bytes).
pub(crate) fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let w0 = super::word(bytes, 0)?;
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let seg = ((w0 >> 14) & 3) as u8;
    let opcode = ((w0 >> 18) & 0x7f) as u8;
    let t = tabs(target);
    let row = t
        .ops
        .get(usize::from(seg) * 128 + usize::from(opcode))
        .copied()
        .unwrap_or(u16::MAX);
    let op = FLAT_OPS.get(usize::from(row)).ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & op.fix != op.val {
        return Err(invalid);
    }
    let i = Flat::with_op(op, w0, w1);
    if seg != 0 && i.saddr_name(target).is_empty() {
        return Err(invalid);
    }
    if i.acc {
        if i.lds_mode(target) || op.acc_ok >> (u8::from(i.glc) + 2 * u8::from(i.scc)) & 1 == 0 {
            return Err(invalid);
        }
        let vd = i.vdst_width(target);
        if (vd > 0 && u16::from(i.vdst) + u16::from(vd) > 256)
            || (op.data > 0 && u16::from(i.data) + u16::from(op.data) > 256)
        {
            return Err(invalid);
        }
    }
    Ok(Inst::new(target, row, 8, [w0, w1, 0, 0]))
}

impl Flat {
    /// The fields of a FLAT instruction whose opcode is row `r` of
    /// [`FLAT_OPS`].
    pub(crate) fn from_raw(r: usize, w0: u32, w1: u32) -> Flat {
        Flat::with_op(&FLAT_OPS[r], w0, w1)
    }

    #[inline(always)]
    fn with_op(op: &'static FlatOp, w0: u32, w1: u32) -> Flat {
        Flat {
            seg: ((w0 >> 14) & 3) as u8,
            opcode: ((w0 >> 18) & 0x7f) as u8,
            op,
            offset: (w0 & 0x1fff) as u16,
            lds: w0 & (1 << 13) != 0,
            glc: w0 & (1 << 16) != 0,
            slc: w0 & (1 << 17) != 0,
            scc: w0 & (1 << 25) != 0,
            addr: (w1 & 0xff) as u8,
            data: ((w1 >> 8) & 0xff) as u8,
            saddr: ((w1 >> 16) & 0x7f) as u8,
            acc: w1 & (1 << 23) != 0,
            vdst: (w1 >> 24) as u8,
        }
    }

    /// Bit 13 acts as `lds` (the load writes LDS instead of vdst).
    pub(crate) fn lds_mode(&self, target: Target) -> bool {
        self.lds && !(self.seg == 1 && target.is_gfx940_plus())
    }

    pub(crate) fn vdst_width(&self, target: Target) -> u8 {
        if self.lds_mode(target) {
            0
        } else if self.glc {
            self.op.vdst_glc
        } else {
            self.op.vdst
        }
    }

    fn saddr_name(&self, target: Target) -> &'static str {
        let t = tabs(target);
        let names = if self.seg == 1 { t.s32 } else { t.s64 };
        names.get(usize::from(self.saddr)).copied().unwrap_or("")
    }

    pub fn mnemonic(&self) -> &'static str {
        self.op.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let w0 = (0x37u32 << 26)
            | u32::from(self.offset)
            | (u32::from(self.lds) << 13)
            | (u32::from(self.seg) << 14)
            | (u32::from(self.glc) << 16)
            | (u32::from(self.slc) << 17)
            | (u32::from(self.opcode) << 18)
            | (u32::from(self.scc) << 25);
        let w1 = u32::from(self.addr)
            | (u32::from(self.data) << 8)
            | (u32::from(self.saddr) << 16)
            | (u32::from(self.acc) << 23)
            | (u32::from(self.vdst) << 24);
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
    }

    /// Writes the instruction in LLVM syntax for `target`.
    pub fn fmt_with(&self, f: &mut fmt::Formatter<'_>, target: Target) -> fmt::Result {
        f.write_str(self.op.name)?;
        let mut sep = " ";
        let vd = self.vdst_width(target);
        let c = &self.op.cls;
        let k = usize::from(self.glc) * 4 + usize::from(self.acc) * 2;
        let (cv, cd) = (c[k], c[k + 1]);
        if vd > 0 {
            f.write_str(sep)?;
            fmt_vreg(f, self.acc, u16::from(self.vdst), vd, cv)?;
            sep = ", ";
        }
        let off_saddr = self.saddr == 0x7f;
        let (mut sname, warn) = match self.saddr_name(target).split_once(" ; ") {
            Some((a, b)) => (a, Some(b)),
            None => (self.saddr_name(target), None),
        };
        // GLOBAL loads to LDS (no vdst, no data) take exec as saddr without
        // the register-class complaint LLVM prints for the other forms.
        if self.seg == 2 && self.saddr == 126 && vd == 0 && self.op.data == 0 {
            sname = "exec";
        }
        f.write_str(sep)?;
        // gfx908 has no alignment rule for the address pair.
        let addr_cls = if target.is_gfx90a_plus() {
            "VReg_64_Align2"
        } else {
            ""
        };
        match self.seg {
            0 => fmt_vreg(f, false, u16::from(self.addr), 2, addr_cls)?,
            1 => {
                let v = if target.is_gfx940_plus() {
                    self.lds
                } else {
                    off_saddr
                };
                if v {
                    write!(f, "v{}", self.addr)?;
                } else {
                    f.write_str("off")?;
                }
            }
            _ if off_saddr => fmt_vreg(f, false, u16::from(self.addr), 2, addr_cls)?,
            _ => write!(f, "v{}", self.addr)?,
        }
        if self.op.data > 0 {
            f.write_str(", ")?;
            fmt_vreg(f, self.acc, u16::from(self.data), self.op.data, cd)?;
        }
        if self.seg != 0 {
            write!(f, ", {sname}")?;
        }
        if self.offset != 0 {
            if self.seg == 0 {
                write!(f, " offset:{}", self.offset)?;
            } else {
                write!(f, " offset:{}", ((self.offset << 3) as i16) >> 3)?;
            }
        }
        let g940 = target.is_gfx940_plus();
        if self.glc {
            f.write_str(if g940 { " sc0" } else { " glc" })?;
        }
        if self.slc {
            f.write_str(if g940 { " nt" } else { " slc" })?;
        }
        // gfx908 has no scc bit (LLVM ignores it).
        if self.scc && target.is_gfx90a_plus() {
            f.write_str(if g940 { " sc1" } else { " scc" })?;
        }
        if self.lds_mode(target) {
            f.write_str(" lds")?;
        }
        if let Some(w) = warn {
            write!(f, " ; {w}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Target::*;
    use crate::gfx9::ds::check_cases;

    /// Expected texts are LLVM 22's (`llvm-mc-22 --disassemble`).
    #[test]
    fn matches_llvm() {
        check_cases(&[
            (
                Gfx942,
                &[0xdc508010, 0x01040002],
                Some("global_load_dword v1, v2, s[4:5] offset:16"),
                8,
            ),
            (
                Gfx942,
                &[0xdc508000, 0x017f0002],
                Some("global_load_dword v1, v[2:3], off"),
                8,
            ),
            (
                Gfx90a,
                &[0xdc504000, 0x017f0002],
                Some("scratch_load_dword v1, v2, off"),
                8,
            ),
            (
                Gfx942,
                &[0xdc506000, 0x01040002],
                Some("scratch_load_dword v1, v2, s4"),
                8,
            ),
            (
                Gfx942,
                &[0xdd090000, 0x05000302],
                Some("flat_atomic_add v5, v[2:3], v3 sc0"),
                8,
            ),
            (
                Gfx90a,
                &[0xdd090000, 0x05000302],
                Some("flat_atomic_add v5, v[2:3], v3 glc"),
                8,
            ),
            (Gfx90a, &[0xdc502000, 0x00000002], None, 4),
            (
                Gfx942,
                &[0xdc501fff, 0x01000002],
                Some("flat_load_dword v1, v[2:3] offset:8191"),
                8,
            ),
            (
                Gfx942,
                &[0xdc509fff, 0x01000002],
                Some("global_load_dword v1, v2, s[0:1] offset:-1"),
                8,
            ),
            (
                Gfx942,
                &[0xdc508000, 0x01810002],
                Some(
                    "global_load_dword a1, v2, s[0:1] ; Warning: SGPR_64: scalar reg isn't aligned 1",
                ),
                8,
            ),
            (Gfx950, &[0xdcf48000, 0x00040002], None, 4),
            (
                Gfx950,
                &[0xddf895c1, 0x877e436f],
                Some("global_load_lds_dwordx3 v111, exec offset:-2623"),
                8,
            ),
        ]);
    }
}
