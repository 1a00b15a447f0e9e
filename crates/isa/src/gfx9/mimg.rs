//! MIMG (image memory) encoding. gfx908 decodes the GFX9 set (loads,
//! stores, atomics, samplers, gathers); gfx90a a reduced one (loads, stores,
//! atomics, `image_get_resinfo`, `image_sample`); LLVM 22 decodes no MIMG
//! word on gfx942 or gfx950.
//!
//! Dword 0: bit 0 (must be 0), scc [7] (gfx90a), dmask [11:8], unorm [12],
//! glc [13], da [14], a16 [15], tfe [16] (gfx90a: acc), lwe [17], op
//! [24:18], slc [25]. Dword 1: vaddr [7:0], vdata [15:8], srsrc [20:16]
//! (units of 4 SGPRs, 8 wide), ssamp [25:21] (4 wide), d16 [31].

use super::Inst;
use super::ds::fmt_vreg;
use super::tables::mimg::*;
use crate::{DecodeError, Target};
use std::fmt;

/// Per-opcode facts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MimgOp {
    pub name: &'static str,
    /// Bits of the 64-bit instruction (dword 1 high) that must equal `val`.
    pub fix: u64,
    pub val: u64,
    /// vdata width of the form LLVM decodes before sizing it from the
    /// channels (2 for `image_atomic_cmpswap` and the gathers).
    pub vdata: u8,
    /// Bit n set: the opcode has an n-dword vdata form.
    pub widths: u8,
    /// A gather: four channels whatever the dmask.
    pub gather: bool,
    /// vaddr width in dwords (the opcode's; LLVM does not size it from the
    /// flags on GFX9).
    pub vaddr: u8,
    /// Takes a sampler operand (ssamp).
    pub sampler: bool,
}

/// A decoded MIMG instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Mimg {
    pub opcode: u8,
    pub op: &'static MimgOp,
    pub dmask: u8,
    pub unorm: bool,
    pub glc: bool,
    pub da: bool,
    pub a16: bool,
    /// Dword 0 bit 16: vdata names AGPRs (gfx90a), or `tfe` (gfx908).
    pub acc: bool,
    pub lwe: bool,
    pub slc: bool,
    pub scc: bool,
    pub d16: bool,
    pub vaddr: u8,
    pub vdata: u8,
    pub srsrc: u8,
    pub ssamp: u8,
    /// Bits LLVM ignores (dword 0 bits 6:1, dword 1 bits 30:26), kept so the
    /// word re-encodes exactly.
    pub unused: u64,
}

const UNUSED: u64 = 0x7e | (0x1f << 58);

/// The opcode-to-row map of `target`.
pub(crate) fn table(target: Target) -> &'static [u16; 128] {
    match target {
        Target::Gfx90a => &MIMG_GFX90A,
        Target::Gfx942 => &MIMG_GFX942,
        Target::Gfx908 => &MIMG_GFX908,
        // gfx950: the decoder is given GFX9 targets only.
        _ => &MIMG_GFX950,
    }
}

/// Decodes a MIMG instruction (8 bytes).
pub(crate) fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let w0 = super::word(bytes, 0)?;
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let tab = table(target);
    let opcode = ((w0 >> 18) & 0x7f) as u8;
    let row = tab.get(usize::from(opcode)).copied().unwrap_or(u16::MAX);
    let op = MIMG_OPS.get(usize::from(row)).ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & op.fix != op.val {
        return Err(invalid);
    }
    let m = Mimg::with_op(op, w0, w1);
    fn name(t: &'static [&'static str; 32], i: u8) -> &'static str {
        t.get(usize::from(i)).copied().unwrap_or("")
    }
    if name(&SRSRC, m.srsrc).is_empty() || (op.sampler && name(&SSAMP, m.ssamp).is_empty()) {
        return Err(invalid);
    }
    if m.acc
        && target.is_gfx90a_plus()
        && u16::from(m.vdata) + u16::from(m.vdata_width(target)) > 256
    {
        return Err(invalid);
    }
    Ok(Inst::new(target, row, 8, [w0, w1, 0, 0]))
}

impl Mimg {
    /// The fields of a MIMG instruction whose opcode is row `r` of
    /// [`MIMG_OPS`].
    pub(crate) fn from_raw(r: usize, w0: u32, w1: u32) -> Mimg {
        Mimg::with_op(&MIMG_OPS[r], w0, w1)
    }

    #[inline(always)]
    fn with_op(op: &'static MimgOp, w0: u32, w1: u32) -> Mimg {
        let all = u64::from(w0) | (u64::from(w1) << 32);
        Mimg {
            opcode: ((w0 >> 18) & 0x7f) as u8,
            op,
            dmask: ((w0 >> 8) & 0xf) as u8,
            unorm: w0 & (1 << 12) != 0,
            glc: w0 & (1 << 13) != 0,
            da: w0 & (1 << 14) != 0,
            a16: w0 & (1 << 15) != 0,
            acc: w0 & (1 << 16) != 0,
            lwe: w0 & (1 << 17) != 0,
            slc: w0 & (1 << 25) != 0,
            scc: w0 & (1 << 7) != 0,
            d16: w1 & (1 << 31) != 0,
            vaddr: (w1 & 0xff) as u8,
            vdata: ((w1 >> 8) & 0xff) as u8,
            srsrc: ((w1 >> 16) & 0x1f) as u8,
            ssamp: ((w1 >> 21) & 0x1f) as u8,
            unused: all & UNUSED,
        }
    }

    /// gfx908's `tfe` (a status dword after the data), the bit gfx90a
    /// reads as `acc`.
    pub fn tfe(&self, target: Target) -> bool {
        self.acc && !target.is_gfx90a_plus()
    }

    /// Whether vdata names AGPRs (gfx90a).
    pub fn vdata_agpr(&self, target: Target) -> bool {
        self.acc && target.is_gfx90a_plus()
    }

    /// vdata width: one dword per dmask bit (four for a gather; halves
    /// packed with d16), and one for `tfe`. LLVM keeps the base width when
    /// the opcode has no form of that width or the tuple would be
    /// misaligned (gfx90a) or run past the register file.
    pub(crate) fn vdata_width(&self, target: Target) -> u8 {
        let base = self.op.vdata;
        let mut n = if self.op.gather {
            4
        } else {
            (self.dmask.count_ones() as u8).max(1)
        };
        if self.d16 {
            n = n.div_ceil(2);
        }
        n += u8::from(self.tfe(target));
        if n != base
            && (self.op.widths >> n & 1 == 0
                || (self.vdata % 2 == 1 && target.is_gfx90a_plus())
                || u16::from(self.vdata) + u16::from(n) > 256)
        {
            return base;
        }
        n
    }

    pub fn mnemonic(&self) -> &'static str {
        self.op.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let w0 = (0x3cu32 << 26)
            | (u32::from(self.scc) << 7)
            | (u32::from(self.dmask) << 8)
            | (u32::from(self.unorm) << 12)
            | (u32::from(self.glc) << 13)
            | (u32::from(self.da) << 14)
            | (u32::from(self.a16) << 15)
            | (u32::from(self.acc) << 16)
            | (u32::from(self.lwe) << 17)
            | (u32::from(self.opcode) << 18)
            | (u32::from(self.slc) << 25)
            | self.unused as u32;
        let w1 = u32::from(self.vaddr)
            | (u32::from(self.vdata) << 8)
            | (u32::from(self.srsrc) << 16)
            | (u32::from(self.ssamp) << 21)
            | (u32::from(self.d16) << 31)
            | (self.unused >> 32) as u32;
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
    }
}

impl Mimg {
    /// Writes the instruction in LLVM syntax for `target`.
    pub fn fmt_with(&self, f: &mut fmt::Formatter<'_>, target: Target) -> fmt::Result {
        write!(f, "{} ", self.op.name)?;
        let w = self.vdata_width(target);
        let cls = match w {
            _ if !target.is_gfx90a_plus() => "",
            2 => "AV_64_Align2",
            3 => "AV_96_Align2",
            _ => "AV_128_Align2",
        };
        fmt_vreg(f, self.vdata_agpr(target), u16::from(self.vdata), w, cls)?;
        f.write_str(", ")?;
        fmt_vreg(f, false, u16::from(self.vaddr), self.op.vaddr, "")?;
        write!(f, ", {}", SRSRC[usize::from(self.srsrc & 31)])?;
        if self.op.sampler {
            write!(f, ", {}", SSAMP[usize::from(self.ssamp & 31)])?;
        }
        if self.dmask != 0 {
            write!(f, " dmask:0x{:x}", self.dmask)?;
        }
        // gfx908 has no scc bit (LLVM ignores it).
        let flags = [
            (self.unorm, " unorm"),
            (self.glc, " glc"),
            (self.slc, " slc"),
            (self.scc && target.is_gfx90a_plus(), " scc"),
            (self.a16, " a16"),
            (self.tfe(target), " tfe"),
            (self.lwe, " lwe"),
            (self.da, " da"),
            (self.d16, " d16"),
        ];
        for (on, s) in flags {
            if on {
                f.write_str(s)?;
            }
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
                Gfx90a,
                &[0xf0800f00, 0x00200201],
                Some("image_sample v[2:5], v1, s[0:7], s[4:7] dmask:0xf"),
                8,
            ),
            (Gfx942, &[0xf0800f00, 0x00200201], None, 4),
            (Gfx950, &[0xf0800f00, 0x00200201], None, 4),
            (
                Gfx90a,
                &[0xf2440300, 0x00001401],
                Some("image_atomic_cmpswap v[20:21], v1, s[0:7] dmask:0x3 slc"),
                8,
            ),
        ]);
    }
}
