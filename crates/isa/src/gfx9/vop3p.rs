//! VOP3P: packed math, dot products, `v_fma_mix*`, AccVGPR moves, and the
//! matrix instructions MFMA and SMFMAC. ISA manual, "Microcode formats:
//! VOP3P" and "Matrix fused multiply-add".
//!
//! Word 0: vdst[7:0], neg_hi[10:8], op_sel[13:11], op_sel_hi[2] [14],
//! clamp[15], op[22:16], 0x1A7 [31:23]. For MFMA: cbsz[10:8], abid[14:11],
//! acc_cd[15] (destination and srcC are AccVGPRs). Word 1: src0[8:0],
//! src1[17:9], src2[26:18], op_sel_hi[1:0] [28:27] (MFMA: acc bits for srcA
//! and srcB), neg_lo[31:29] (MFMA: blgp, or `neg:` on gfx940+ f64 MFMA).

use super::Inst;
use super::operand::{SRC_CLASS, SRC_LITERAL, SRC_NARROW, SRC_WIDE};
use super::tables::vop3p::VOP3P;
use super::vop3::{Cst, Warnings, write_range, write_sreg};
use crate::{DecodeError, Target};
use std::fmt;

/// How an opcode's modifier bits are used and printed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// op_sel / op_sel_hi / neg_lo / neg_hi lists.
    Packed,
    /// `v_fma_mix*`: neg_lo is `-`, neg_hi is `|..|`, op_sel_hi defaults to 0.
    Mix,
    /// MFMA / SMFMAC: cbsz, abid, blgp (or neg), acc bits.
    Mfma,
}

/// A VOP3P source slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PSrc {
    /// Width in dwords.
    pub n: u8,
    /// The VGPR-range field names AccVGPRs.
    pub agpr: bool,
    /// Register class LLVM names for an odd-aligned range ("" if none).
    pub odd: &'static str,
    /// Register class LLVM names for an SGPR ("" if accepted).
    pub sg: &'static str,
    /// Inline constants are flagged `/*Invalid immediate*/`.
    pub noc: bool,
    pub cst: Cst,
    /// Literals are read as 16 bits.
    pub lit16: bool,
}

/// One opcode of the VOP3P table.
#[derive(Debug, PartialEq, Eq)]
pub struct PRow {
    pub op: u8,
    /// Targets: bit 0 gfx90a, bit 1 gfx942, bit 2 gfx950.
    pub tg: u8,
    pub name: &'static str,
    pub kind: Kind,
    /// Destination width in dwords (0: none).
    pub dst: u8,
    pub dst_agpr: bool,
    pub dst_odd: &'static str,
    /// MFMA: the blgp bits print as `neg:[a,b,c]`.
    pub neg: bool,
    pub srcs: &'static [PSrc],
    /// Modifier bits LLVM requires to be zero (bit i < 8: word 0 bit 8+i;
    /// bit 8+j: word 1 bit 27+j).
    pub zero: u16,
    /// Modifier bits LLVM prints.
    pub mods: u16,
}

/// The index in [`VOP3P`] of the row for each (target, opcode), `u16::MAX`
/// where there is none: the first of the opcode's rows that names the
/// target, as [`lookup_search`] finds it, built at compile time.
static VOP3P_IDX: [[u16; 128]; super::TARGETS] = {
    let mut t = [[u16::MAX; 128]; super::TARGETS];
    // Walking backwards leaves the first matching row in each slot.
    let mut i = VOP3P.len();
    while i > 0 {
        i -= 1;
        let r = &VOP3P[i];
        let mut k = 0;
        while k < super::TARGETS {
            if r.tg & (1 << k) != 0 {
                t[k][(r.op & 0x7f) as usize] = i as u16;
            }
            k += 1;
        }
    }
    t
};

/// What the fast decoding path checks of an opcode, compiled from its
/// [`PRow`].
#[derive(Copy, Clone)]
struct Check {
    /// The opcode's source and destination ranges always fit their register
    /// files (no AccVGPR operands, no operand wider than 64 bits, not an
    /// MFMA) and it cannot start a scaled MFMA pair: its words need only
    /// the checks below, not [`Vop3p::decode`].
    fast: bool,
    /// Modifier bits that must be zero (numbered as [`PRow::zero`]).
    zero: u16,
    /// Without a destination, the vdst field must be zero.
    no_dst: bool,
    /// Source `k`'s [`SRC_CLASS`] lands at bits `4k..4k+3` of a mask: for
    /// each source, the [`SRC_NARROW`] or [`SRC_WIDE`] bit it must have.
    need: u16,
    /// For each source, its [`SRC_LITERAL`] bit.
    lit: u16,
}

/// Whether `s` ends with `suffix`, at compile time.
const fn ends_with(s: &str, suffix: &str) -> bool {
    let (s, x) = (s.as_bytes(), suffix.as_bytes());
    if x.len() > s.len() {
        return false;
    }
    let mut i = 0;
    while i < x.len() {
        if s[s.len() - x.len() + i] != x[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// [`Check`] of each row of [`VOP3P`].
static VOP3P_CHECK: [Check; VOP3P.len()] = {
    let mut t = [Check {
        fast: false,
        zero: 0,
        no_dst: false,
        need: 0,
        lit: 0,
    }; VOP3P.len()];
    let mut i = 0;
    while i < VOP3P.len() {
        let r = &VOP3P[i];
        let mut fast = !matches!(r.kind, Kind::Mfma)
            && !r.dst_agpr
            && r.dst <= 2
            && !ends_with(r.name, "f8f6f4")
            // `decode_scaled`'s first half.
            && !(r.dst == 0 && matches!(r.kind, Kind::Packed));
        let (mut need, mut lit) = (0u16, 0u16);
        let mut k = 0;
        while k < r.srcs.len() {
            let sl = &r.srcs[k];
            fast &= !sl.agpr && sl.n <= 2;
            let bit = if sl.n >= 2 { SRC_WIDE } else { SRC_NARROW };
            need |= (bit as u16) << (4 * k);
            lit |= (SRC_LITERAL as u16) << (4 * k);
            k += 1;
        }
        t[i] = Check {
            fast,
            zero: r.zero,
            no_dst: r.dst == 0,
            need,
            lit,
        };
        i += 1;
    }
    t
};

/// The row of the 7-bit opcode `op` on `target`, by table index.
#[inline]
fn lookup(op: u8, target: Target) -> Option<&'static PRow> {
    let k = target.index();
    let i = *VOP3P_IDX.get(k)?.get(usize::from(op))?;
    VOP3P.get(usize::from(i))
}

/// Finds the row of `op` on `target` by searching the table (the reference
/// for [`lookup`]).
#[cfg(test)]
fn lookup_search(op: u8, target: Target) -> Option<&'static PRow> {
    let bit = target.bit();
    let start = VOP3P.partition_point(|r| r.op < op);
    VOP3P
        .get(start..)?
        .iter()
        .take_while(|r| r.op == op)
        .find(|r| r.tg & bit != 0)
}

/// A decoded VOP3P instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Vop3p {
    pub row: &'static PRow,
    pub vdst: u8,
    /// Word 0 bits 14:8: neg_hi[2:0], op_sel[2:0], op_sel_hi[2] (MFMA:
    /// cbsz[2:0], abid[3:0]).
    pub hi_bits: u8,
    /// Word 0 bit 15: clamp (MFMA: acc_cd).
    pub clamp: bool,
    pub src: [u16; 3],
    /// Word 1 bits 28:27: op_sel_hi[1:0] (MFMA: acc for srcA, srcB).
    pub op_sel_hi: u8,
    /// Word 1 bits 31:29: neg_lo (MFMA: blgp).
    pub neg_lo: u8,
    /// What follows the two instruction dwords.
    pub tail: Tail,
}

/// The dwords that follow a VOP3P instruction's two dwords.
#[derive(Clone, Debug, PartialEq)]
pub enum Tail {
    None,
    /// The literal constant dword (gfx950), if a source field is 255.
    Literal(u32),
    /// gfx950: this `v_mfma_ld_scale_b32` prefixes an f8f6f4 MFMA, and LLVM
    /// reads the pair as one `v_mfma_scale_*` instruction (16 bytes).
    Scaled(ScaledMfma),
}

/// The MFMA half of a gfx950 `v_mfma_scale_*` pair: its two dwords (abid
/// field included), from which its row and fields are read.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaledMfma {
    pub words: [u32; 2],
}

impl ScaledMfma {
    /// The MFMA as a plain instruction (`None` only for words that
    /// [`decode_scaled`] did not accept).
    pub(crate) fn as_vop3p(&self) -> Option<Vop3p> {
        let [w0, w1] = self.words;
        Some(Vop3p {
            row: lookup(((w0 >> 16) & 0x7f) as u8, Target::Gfx950)?,
            vdst: w0 as u8,
            hi_bits: ((w0 >> 8) & 0x7f) as u8,
            clamp: w0 & 0x8000 != 0,
            src: [
                (w1 & 0x1ff) as u16,
                ((w1 >> 9) & 0x1ff) as u16,
                ((w1 >> 18) & 0x1ff) as u16,
            ],
            op_sel_hi: ((w1 >> 27) & 3) as u8,
            neg_lo: (w1 >> 29) as u8,
            tail: Tail::None,
        })
    }
}

#[inline]
fn valid_src(v: u16, n: u8) -> bool {
    // VGPRs, the most frequent sources, are valid at any width.
    if v >= 256 {
        return true;
    }
    match v {
        102..=107 | 126 | 127 if n > 2 => false,
        0..=127 => super::operand::decode_sreg(v, n).is_some(),
        128..=208 | 230 | 235..=248 | 251..=253 | 256..=511 => true,
        231 | 254 => n == 1,
        _ => false,
    }
}

impl Vop3p {
    /// The fields of a VOP3P instruction of `len` bytes (16 for a scaled
    /// MFMA pair) whose opcode is row `r` of [`VOP3P`].
    pub(crate) fn from_raw(r: usize, len: u8, words: [u32; 4]) -> Vop3p {
        let [w0, w1, w2, w3] = words;
        Vop3p {
            row: &VOP3P[r],
            vdst: w0 as u8,
            hi_bits: ((w0 >> 8) & 0x7f) as u8,
            clamp: w0 & 0x8000 != 0,
            src: [
                (w1 & 0x1ff) as u16,
                ((w1 >> 9) & 0x1ff) as u16,
                ((w1 >> 18) & 0x1ff) as u16,
            ],
            op_sel_hi: ((w1 >> 27) & 3) as u8,
            neg_lo: (w1 >> 29) as u8,
            tail: match len {
                16 => Tail::Scaled(ScaledMfma { words: [w2, w3] }),
                12 => Tail::Literal(w2),
                _ => Tail::None,
            },
        }
    }

    /// Decodes from the two instruction dwords and the optional third. On
    /// failure, reports whether the literal dword was missing.
    pub fn decode(target: Target, w0: u32, w1: u32, w2: Option<u32>) -> Result<Vop3p, bool> {
        let row = lookup(((w0 >> 16) & 0x7f) as u8, target).ok_or(false)?;
        let m = (((w0 >> 8) & 0xff) | (((w1 >> 27) & 0x1f) << 8)) as u16;
        // Without a destination the vdst field must be zero.
        if m & row.zero != 0 || (row.dst == 0 && w0 & 0xff != 0) {
            return Err(false);
        }
        let src = [
            (w1 & 0x1ff) as u16,
            ((w1 >> 9) & 0x1ff) as u16,
            ((w1 >> 18) & 0x1ff) as u16,
        ];
        let wants_lit = src.iter().take(row.srcs.len()).any(|&v| v == 255);
        let literal = if wants_lit && target.is_gfx950() {
            Some(w2.ok_or(true)?)
        } else {
            None
        };
        let ok = row
            .srcs
            .iter()
            .zip(src)
            .all(|(s, v)| valid_src(v, s.n) || (v == 255 && literal.is_some()));
        let i = Vop3p {
            row,
            vdst: w0 as u8,
            hi_bits: ((w0 >> 8) & 0x7f) as u8,
            clamp: w0 & 0x8000 != 0,
            src,
            op_sel_hi: ((w1 >> 27) & 3) as u8,
            neg_lo: (w1 >> 29) as u8,
            tail: literal.map_or(Tail::None, Tail::Literal),
        };
        if !ok || !i.ranges_fit() {
            return Err(false);
        }
        Ok(i)
    }

    /// LLVM rejects AccVGPR, SGPR and TTMP ranges that run past the end of
    /// their register file (VGPR ranges are printed regardless), and an
    /// AccVGPR srcC that is a hardware constant register.
    fn ranges_fit(&self) -> bool {
        let r = self.row;
        let d_agpr = r.dst_agpr || (r.kind == Kind::Mfma && self.clamp);
        if d_agpr && u16::from(self.vdst) + u16::from(r.dst) > 256 {
            return false;
        }
        let mfma = r.kind == Kind::Mfma;
        r.srcs.iter().enumerate().zip(self.src).all(|((i, s), v)| {
            let full = u16::from(self.width(i, s));
            let n = full.min(16);
            let align = if n >= 4 {
                4
            } else if n == 2 {
                2
            } else {
                1
            };
            match v {
                256..=511 => !self.src_agpr(i, s) || v - 256 + full <= 256,
                0..=101 => (v & !(align - 1)) + n <= 104,
                108..=123 => ((v - 108) & !(align - 1)) + n <= 16,
                // Matrix operands wider than 64 bits take no hardware constants.
                230 | 231 | 235..=239 | 251..=254 => !(mfma && n > 2),
                _ => true,
            }
        })
    }

    /// Width in dwords of source `i`: gfx950 `*_f8f6f4` MFMAs size srcA and
    /// srcB by their formats (cbsz, blgp): fp8/bf8 8, fp6/bf6 6, fp4 4.
    pub fn width(&self, i: usize, s: &PSrc) -> u8 {
        if i < 2 && self.row.name.ends_with("f8f6f4") {
            let fmt = if i == 0 {
                self.hi_bits & 7
            } else {
                self.neg_lo & 7
            };
            match fmt {
                2 | 3 => 6,
                4 => 4,
                _ => 8,
            }
        } else {
            s.n
        }
    }

    /// The literal constant dword, if any.
    pub fn literal(&self) -> Option<u32> {
        match self.tail {
            Tail::Literal(l) => Some(l),
            _ => None,
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> u8 {
        match self.tail {
            Tail::None => 8,
            Tail::Literal(_) => 12,
            Tail::Scaled(_) => 16,
        }
    }

    /// Never true.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The two instruction dwords.
    pub fn encode(&self) -> [u32; 2] {
        let w0 = 0xD380_0000
            | (u32::from(self.row.op & 0x7f) << 16)
            | (u32::from(self.clamp) << 15)
            | (u32::from(self.hi_bits & 0x7f) << 8)
            | u32::from(self.vdst);
        let w1 = u32::from(self.src[0] & 0x1ff)
            | (u32::from(self.src[1] & 0x1ff) << 9)
            | (u32::from(self.src[2] & 0x1ff) << 18)
            | (u32::from(self.op_sel_hi & 3) << 27)
            | (u32::from(self.neg_lo & 7) << 29);
        [w0, w1]
    }

    /// Appends the instruction's bytes to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let [w0, w1] = self.encode();
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
        match &self.tail {
            Tail::None => {}
            Tail::Literal(l) => out.extend_from_slice(&l.to_le_bytes()),
            Tail::Scaled(m) => {
                for w in m.words {
                    out.extend_from_slice(&w.to_le_bytes());
                }
            }
        }
    }

    fn has(&self, bit: u16) -> bool {
        self.row.mods & (1 << bit) != 0
    }

    /// Whether a source slot names AccVGPRs (MFMA acc / acc_cd bits).
    pub(crate) fn src_agpr(&self, i: usize, s: &PSrc) -> bool {
        if self.row.kind == Kind::Mfma {
            match i {
                0 | 1 => s.agpr || self.op_sel_hi & (1 << i) != 0,
                // The SMFMAC sparsity index (srcC) is always a VGPR.
                _ => s.agpr || (self.clamp && s.n > 1),
            }
        } else {
            s.agpr
        }
    }

    /// op_sel_hi bit of source `i` (src2's lives in word 0 bit 14).
    fn osh(&self, i: usize) -> u8 {
        if i < 2 {
            (self.op_sel_hi >> i) & 1
        } else {
            (self.hi_bits >> 6) & 1
        }
    }
}

fn write_list(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    n: usize,
    bit: impl Fn(usize) -> u8,
) -> fmt::Result {
    write!(f, " {name}:[")?;
    for i in 0..n {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{}", bit(i))?;
    }
    f.write_str("]")
}

/// Replaces the `VReg` of a register class name by `AReg` for AccVGPRs.
fn class_for(class: &str, agpr: bool, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match class.strip_prefix("VReg") {
        Some(rest) if agpr => write!(
            f,
            "/*Invalid register, operand has 'AReg{rest}' register class*/"
        ),
        _ => write!(
            f,
            "/*Invalid register, operand has '{class}' register class*/"
        ),
    }
}

/// The `AV_*_Align2` class of a gfx950 f8f6f4 operand of `n` dwords.
fn av_class(n: u8) -> &'static str {
    match n {
        4 => "AV_128_Align2",
        6 => "AV_192_Align2",
        _ => "AV_256_Align2",
    }
}

fn write_psrc(
    f: &mut fmt::Formatter<'_>,
    w: &mut Warnings,
    v: u16,
    s: &PSrc,
    agpr: bool,
    lit: u32,
) -> fmt::Result {
    match v {
        256..=511 => {
            let idx = v - 256;
            write_range(f, if agpr { "a" } else { "v" }, idx, s.n)?;
            if s.n > 1 && idx % 2 == 1 && !s.odd.is_empty() {
                class_for(s.odd, agpr, f)?;
            }
            Ok(())
        }
        0..=127 => {
            write_sreg(f, w, v, s.n)?;
            if !s.sg.is_empty() && v != 125 {
                class_for(s.sg, agpr, f)?;
            }
            Ok(())
        }
        255 => {
            let l = if s.lit16 { lit & 0xffff } else { lit };
            write!(f, "0x{l:x}")?;
            if s.noc {
                f.write_str("/*Invalid immediate*/")?;
            }
            Ok(())
        }
        254 if !s.sg.is_empty() => {
            f.write_str("src_lds_direct")?;
            class_for(s.sg, agpr, f)
        }
        _ => {
            let flags = if s.noc { super::vop3::SRC_NO_CONST } else { 0 };
            super::vop3::write_src(f, w, v, super::vop3::Src(s.n, flags, s.cst), lit)
        }
    }
}

impl fmt::Display for Vop3p {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut w = Warnings::new();
        if let Tail::Scaled(m) = &self.tail {
            let m = m.as_vop3p().ok_or(fmt::Error)?;
            let base = m.row.name.strip_prefix("v_mfma_").unwrap_or(m.row.name);
            write!(f, "v_mfma_scale_{base}")?;
            m.write_ops(f, &mut w)?;
            let lit = self.literal().unwrap_or(0);
            // The scale operands are VGPRs (class VGPR_32).
            let scale = PSrc {
                n: 1,
                agpr: false,
                odd: "",
                sg: "VGPR_32",
                noc: true,
                cst: Cst::F32,
                lit16: false,
            };
            for &v in self.src.iter().take(self.row.srcs.len()) {
                f.write_str(", ")?;
                write_psrc(f, &mut w, v, &scale, false, lit)?;
            }
            let os = (self.hi_bits >> 3) & 3;
            if os != 0 {
                write!(f, " op_sel:[{},{},0]", os & 1, os >> 1)?;
            }
            write!(
                f,
                " op_sel_hi:[{},{},0]",
                self.op_sel_hi & 1,
                (self.op_sel_hi >> 1) & 1
            )?;
            let (cbsz, blgp) = (m.hi_bits & 7, m.neg_lo);
            if cbsz != 0 {
                write!(f, " cbsz:{cbsz}")?;
            }
            if blgp != 0 {
                write!(f, " blgp:{blgp}")?;
            }
            return w.write(f);
        }
        f.write_str(self.row.name)?;
        self.write_ops(f, &mut w)?;
        self.write_mods(f)?;
        w.write(f)
    }
}

impl Vop3p {
    /// Writes the operand list (with its leading space).
    fn write_ops(&self, f: &mut fmt::Formatter<'_>, w: &mut Warnings) -> fmt::Result {
        let r = self.row;
        let mfma = r.kind == Kind::Mfma;
        let mut first = true;
        if r.dst > 0 {
            f.write_str(" ")?;
            first = false;
            let agpr = r.dst_agpr || (mfma && self.clamp);
            write_range(f, if agpr { "a" } else { "v" }, u16::from(self.vdst), r.dst)?;
            if r.dst > 1 && self.vdst % 2 == 1 && !r.dst_odd.is_empty() {
                class_for(r.dst_odd, agpr, f)?;
            }
        }
        let lit = self.literal().unwrap_or(0);
        for (i, (s, &v)) in r.srcs.iter().zip(self.src.iter()).enumerate() {
            f.write_str(if first { " " } else { ", " })?;
            first = false;
            if r.kind == Kind::Mix {
                let neg = self.neg_lo & (1 << i) != 0;
                let abs = self.hi_bits & (1 << i) != 0;
                // A negated constant without abs prints as `neg(c)`.
                let neg_fn = neg && !abs && matches!(v, 128..=208 | 240..=248 | 255);
                f.write_str(match (neg, abs) {
                    _ if neg_fn => "neg(",
                    (true, true) => "-|",
                    (true, false) => "-",
                    (false, true) => "|",
                    _ => "",
                })?;
                write_psrc(f, w, v, s, false, lit)?;
                if abs {
                    f.write_str("|")?;
                } else if neg_fn {
                    f.write_str(")")?;
                }
            } else {
                let n = self.width(i, s);
                if n != s.n && matches!(v, 128..=208) {
                    // LLVM prints an integer constant in a narrowed (fp6,
                    // fp4) slot of an f8f6f4 MFMA as 0.
                    f.write_str("0/*Invalid immediate*/")?;
                    continue;
                }
                let sw = if n == s.n {
                    *s
                } else {
                    PSrc {
                        n,
                        odd: av_class(n),
                        sg: av_class(n),
                        ..*s
                    }
                };
                // Alignment warnings name the opcode's 256-bit class.
                w.class_bits = if n == s.n { 0 } else { u16::from(s.n) * 32 };
                write_psrc(f, w, v, &sw, self.src_agpr(i, s), lit)?;
                w.class_bits = 0;
            }
        }
        Ok(())
    }

    /// Writes the modifiers.
    fn write_mods(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.row;
        let n = r.srcs.len();
        match r.kind {
            Kind::Mfma => {
                let cbsz = self.hi_bits & 7;
                let abid = (self.hi_bits >> 3) & 15;
                if cbsz != 0 && self.has(0) {
                    write!(f, " cbsz:{cbsz}")?;
                }
                if abid != 0 && self.has(3) {
                    write!(f, " abid:{abid}")?;
                }
                if self.neg_lo != 0 && self.has(10) {
                    if r.neg {
                        write_list(f, "neg", 3, |i| (self.neg_lo >> i) & 1)?;
                    } else {
                        write!(f, " blgp:{}", self.neg_lo)?;
                    }
                }
            }
            Kind::Packed | Kind::Mix => {
                let os = self.hi_bits >> 3 & 7;
                if (0..3).any(|k| self.has(3 + k)) && os & ((1 << n) - 1) != 0 {
                    write_list(f, "op_sel", n, |i| (os >> i) & 1)?;
                }
                let osh_print = self.has(8) || self.has(9) || self.has(6);
                let all: u8 = (0..n).map(|i| self.osh(i)).sum();
                let show = if r.kind == Kind::Mix {
                    all != 0
                } else {
                    usize::from(all) != n
                };
                if osh_print && show {
                    write_list(f, "op_sel_hi", n, |i| self.osh(i))?;
                }
                if r.kind == Kind::Packed {
                    if self.has(10) && self.neg_lo & ((1 << n) - 1) != 0 {
                        write_list(f, "neg_lo", n, |i| (self.neg_lo >> i) & 1)?;
                    }
                    if self.has(0) && self.hi_bits & ((1 << n) - 1) != 0 {
                        write_list(f, "neg_hi", n, |i| (self.hi_bits >> i) & 1)?;
                    }
                }
                if self.clamp && self.has(7) {
                    f.write_str(" clamp")?;
                }
            }
        }
        Ok(())
    }
}

/// Decodes a VOP3P instruction (8 bytes, 12 with a gfx950 literal, 16 for
/// a gfx950 scaled MFMA pair).
#[inline]
pub(crate) fn decode(target: Target, w0: u32, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let r = VOP3P_IDX[target.index()][((w0 >> 16) & 0x7f) as usize];
    let Some(c) = VOP3P_CHECK.get(usize::from(r)) else {
        return Err(invalid);
    };
    if !c.fast {
        return decode_full(target, w0, w1, r, bytes);
    }
    // The checks of `Vop3p::decode` for such an opcode, with one table
    // lookup per source (as VOP3 makes them).
    let m = (((w0 >> 8) & 0xff) | (((w1 >> 27) & 0x1f) << 8)) as u16;
    if m & c.zero != 0 || (c.no_dst & (w0 & 0xff != 0)) {
        return Err(invalid);
    }
    // One lookup per source, then two tests for all of them (as VOP3).
    let class = |v: u32| u16::from(SRC_CLASS[v as usize & 0x1ff]);
    let m = class(w1) | class(w1 >> 9) << 4 | class(w1 >> 18) << 8;
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

/// Decodes a VOP3P instruction whose opcode is row `r` (MFMA, AccVGPR and
/// wide operands, scaled MFMA pairs) field by field.
#[inline(never)]
fn decode_full(
    target: Target,
    w0: u32,
    w1: u32,
    r: u16,
    bytes: &[u8],
) -> Result<Inst, DecodeError> {
    let w2 = super::word(bytes, 2).ok();
    let i = match decode_scaled(target, bytes, w0, w1) {
        Some(i) => i,
        None => Vop3p::decode(target, w0, w1, w2).map_err(|need_lit| {
            if need_lit {
                DecodeError::Truncated {
                    need: 12,
                    // Fewer than 12 bytes, so the value fits.
                    have: bytes.len() as u32,
                }
            } else {
                DecodeError::Invalid { target, word: w0 }
            }
        })?,
    };
    let words = match &i.tail {
        Tail::None => [w0, w1, 0, 0],
        Tail::Literal(l) => [w0, w1, *l, 0],
        Tail::Scaled(m) => [w0, w1, m.words[0], m.words[1]],
    };
    Ok(Inst::new(target, r, i.len(), words))
}

/// gfx950: a `v_mfma_ld_scale_b32` followed by an f8f6f4 MFMA whose abid
/// field is 1 decodes as one `v_mfma_scale_*` instruction. LLVM ignores the
/// ld_scale modifier bits that the standalone form rejects.
fn decode_scaled(target: Target, bytes: &[u8], w0: u32, w1: u32) -> Option<Vop3p> {
    // The f8f6f4 MFMAs exist on gfx950 only.
    if !target.is_gfx950() {
        return None;
    }
    let row = lookup(((w0 >> 16) & 0x7f) as u8, target)?;
    if row.dst != 0 || row.kind != Kind::Packed {
        return None;
    }
    let m0 = super::word(bytes, 2).ok()?;
    let m1 = super::word(bytes, 3).ok()?;
    if m0 >> 23 != 0x1a7 || (m0 >> 11) & 0xf != 1 {
        return None;
    }
    // The abid field (which the plain MFMA requires to be zero) marks the
    // pair; decode the MFMA without it.
    let m = Vop3p::decode(target, m0 & !(0xf << 11), m1, None).ok()?;
    if !m.row.name.ends_with("f8f6f4") {
        return None;
    }
    let src = [
        (w1 & 0x1ff) as u16,
        ((w1 >> 9) & 0x1ff) as u16,
        ((w1 >> 18) & 0x1ff) as u16,
    ];
    if !row.srcs.iter().zip(src).all(|(s, v)| valid_src(v, s.n)) {
        return None;
    }
    Some(Vop3p {
        row,
        vdst: w0 as u8,
        hi_bits: ((w0 >> 8) & 0x7f) as u8,
        clamp: w0 & 0x8000 != 0,
        src,
        op_sel_hi: ((w1 >> 27) & 3) as u8,
        neg_lo: (w1 >> 29) as u8,
        tail: Tail::Scaled(ScaledMfma { words: [m0, m1] }),
    })
}

#[cfg(test)]
mod tests {
    /// The fast path accepts exactly the words that the field-by-field
    /// decoder accepts, with the same length and error.
    #[test]
    fn fast_decode_matches_full_decode() {
        let mut x: u64 = 0x6a09_e667_f3bc_c908;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for t in crate::gfx9::ALL_TARGETS {
            for n in 0..200_000u32 {
                let r = next();
                let op = n % 128;
                let mut w1 = r as u32;
                if n & 1 == 0 {
                    w1 = (w1 & !0x1ff) | (((r >> 40) as u32) & 0xff);
                }
                if n & 2 == 0 {
                    w1 = (w1 & !(0x1ff << 9)) | (0xff << 9);
                }
                if n & 12 == 0 {
                    w1 &= 0x07ff_ffff;
                }
                let mut w0 = 0xd380_0000 | op << 16 | ((r >> 32) as u32 & 0xffff);
                if n & 16 == 0 {
                    w0 &= !0xff00;
                }
                let w2 = (r >> 17) as u32;
                let idx = super::VOP3P_IDX[t.index()][op as usize];
                for have in [8usize, 12] {
                    let bytes: Vec<u8> = [w0, w1, w2]
                        .iter()
                        .flat_map(|w| w.to_le_bytes())
                        .take(have)
                        .collect();
                    let fast = super::decode(t, w0, &bytes);
                    let full = if usize::from(idx) < super::VOP3P.len() {
                        super::decode_full(t, w0, w1, idx, &bytes)
                    } else {
                        Err(crate::DecodeError::Invalid {
                            target: t,
                            word: w0,
                        })
                    };
                    assert_eq!(fast, full, "{t} {w0:08x} {w1:08x} ({have} bytes)");
                }
            }
        }
    }

    /// The compile-time index finds the same row as searching the table.
    #[test]
    fn indexed_lookup_matches_search() {
        for t in crate::gfx9::ALL_TARGETS {
            for op in 0..128u8 {
                let a = super::lookup(op, t).map(|r| r as *const super::PRow);
                let b = super::lookup_search(op, t).map(|r| r as *const super::PRow);
                assert_eq!(a, b, "{t:?} {op:#x}");
            }
        }
    }

    use crate::Target;

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
    fn packed_and_mix_modifiers() {
        let t = Target::Gfx942;
        check(
            t,
            "04ff8ed30a297afc",
            "v_pk_fma_f16 v4, v10, v20, v30 op_sel:[1,1,1] neg_lo:[1,1,1] neg_hi:[1,1,1] clamp",
        );
        check(
            t,
            "0400b0d30a297a04",
            "v_pk_fma_f32 v[4:5], v[10:11], v[20:21], v[30:31] op_sel_hi:[0,0,0]",
        );
        check(t, "0401a0d30a297a24", "v_fma_mix_f32 v4, -|v10|, v20, v30");
        check(t, "0400d8d30a010000", "v_accvgpr_read_b32 v4, a10");
    }

    #[test]
    fn mfma() {
        check(
            Target::Gfx942,
            "04c1ccd30a297a5c",
            "v_mfma_f32_32x32x8_f16 a[4:19], a[10:11], a[20:21], a[30:45] cbsz:1 abid:8 blgp:2",
        );
        // gfx940+ spells blgp as neg:[...] on f64 MFMA.
        check(
            Target::Gfx942,
            "0400eed30a297aa4",
            "v_mfma_f64_16x16x4_f64 v[4:11], v[10:11], v[20:21], v[30:37] neg:[1,0,1]",
        );
        // Annotations LLVM adds for operands outside their register class.
        check(
            Target::Gfx942,
            "4c38d2d30b472df9",
            "v_mfma_i32_4x4x4_16b_i8 v[76:79], a11, 35/*Invalid immediate*/, \
             s[72:75]/*Invalid register, operand has 'VReg_128_Align2' register class*/ abid:7 blgp:7 \
             ; Warning: SGPR_128: scalar reg isn't aligned 75",
        );
        // gfx90a names.
        check(
            Target::Gfx90a,
            "0400ccd30a297a04",
            "v_mfma_f32_32x32x8f16 v[4:19], v[10:11], v[20:21], v[30:45]",
        );
        // From llvm-objdump-22 on a clang-22 gfx942 GEMM kernel.
        check(
            Target::Gfx942,
            "0000ccd316310204",
            "v_mfma_f32_32x32x8_f16 v[0:15], v[22:23], v[24:25], v[0:15]",
        );
        // gfx950 f8f6f4: srcA is fp6 (cbsz:2, 6 dwords), srcB fp4 (blgp:4, 4 dwords).
        check(
            Target::Gfx950,
            "0402add30a297a84",
            "v_mfma_f32_16x16x128_f8f6f4 v[4:7], v[10:15], v[20:23], v[30:33] cbsz:2 blgp:4",
        );
        assert!(
            crate::decode(
                Target::Gfx942,
                &[0x04, 0x02, 0xad, 0xd3, 0x0a, 0x29, 0x7a, 0x84]
            )
            .is_err()
        );
    }

    #[test]
    fn gfx950_scaled_mfma_pair() {
        let t = Target::Gfx950;
        // llvm-mc-22 -mcpu=gfx950 encoding of the scaled MFMA.
        check(
            t,
            "0000acd3142b02000008add304190204",
            "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21 op_sel_hi:[0,0,0]",
        );
        check(
            t,
            "0000acd3142b02000088add30419020c",
            "v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], a[4:11], v[12:19], a[0:3], v20, v21 op_sel_hi:[0,0,0]",
        );
        // abid other than 1: two instructions.
        check(
            t,
            "0000acd3142b0200",
            "v_mfma_ld_scale_b32 v20, v21 op_sel_hi:[0,0]",
        );
        let pair = [
            0x00, 0x00, 0xac, 0xd3, 0x14, 0x2b, 0x02, 0x00, 0x00, 0x18, 0xad, 0xd3, 0x04, 0x19,
            0x02, 0x04,
        ];
        assert_eq!(crate::decode(t, &pair).unwrap().len(), 8);
    }
}
