//! MUBUF and MTBUF encodings: untyped and typed buffer loads, stores and
//! atomics through a buffer resource ("MUBUF" and "MTBUF" microcode formats).
//!
//! MUBUF dword 0: offset [11:0], offen [12], idxen [13], glc/sc0 [14],
//! scc/sc1 [15], lds [16], slc/nt [17], op [24:18]. MTBUF dword 0: offset,
//! offen, idxen, glc/sc0 as MUBUF, op [18:15], dfmt [22:19], nfmt [25:23];
//! its scc/sc1 and slc/nt are dword 1 bits 21 and 22. Dword 1 (both): vaddr
//! [7:0], vdata [15:8], srsrc [20:16] (in units of 4 SGPRs), acc [23]
//! (gfx908: tfe, a status dword after the data), soffset [31:24].

use super::Inst;
use super::ds::fmt_vreg;
use super::tables::mubuf::*;
use crate::{DecodeError, Target};
use std::fmt;

/// Per-opcode facts (shared by MUBUF and MTBUF).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BufOp {
    pub name: &'static str,
    /// Bits of the 64-bit instruction (dword 1 high) that must equal `val`.
    pub fix: u64,
    pub val: u64,
    /// vdata width in dwords (0: no vdata).
    pub vdata: u8,
    /// Register class LLVM names for a misaligned vdata (acc clear / set).
    pub cls: &'static str,
    pub cls_acc: &'static str,
    /// False for the operand-less cache operations (`buffer_wbl2`, `buffer_inv`).
    pub has_ops: bool,
    /// Whether vdata is still printed when the lds bit is set.
    pub lds_vdata: bool,
    /// Cache-policy bits LLVM prints: 1 glc/sc0, 2 slc/nt, 4 scc/sc1.
    pub cpol: u8,
    /// The opcode requires the lds bit, printed before the cache policy
    /// (`buffer_store_lds_dword`).
    pub lds_first: bool,
}

/// A decoded MUBUF or MTBUF instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Buf {
    pub mtbuf: bool,
    pub opcode: u8,
    pub op: &'static BufOp,
    pub offset: u16,
    pub offen: bool,
    pub idxen: bool,
    /// glc (gfx90a) / sc0 (gfx940+).
    pub glc: bool,
    /// slc (gfx90a) / nt (gfx940+).
    pub slc: bool,
    /// scc (gfx90a) / sc1 (gfx940+).
    pub scc: bool,
    /// MUBUF only: the load writes LDS instead of vdata.
    pub lds: bool,
    /// MTBUF only: data and numeric format.
    pub dfmt: u8,
    pub nfmt: u8,
    pub vaddr: u8,
    pub vdata: u8,
    pub srsrc: u8,
    /// Dword 1 bit 23: vdata names AGPRs (gfx90a and later), or `tfe`
    /// (gfx908; see [`Buf::tfe`]).
    pub acc: bool,
    pub soffset: u8,
    /// Whether the literal dword `lit` follows (gfx950, soffset 255).
    pub has_lit: bool,
    pub lit: u32,
    /// Bits LLVM ignores, kept so the word re-encodes exactly: bit 0 is
    /// MUBUF dword 0 bit 25, bits 1-2 are MUBUF dword 1 bits 21-22.
    pub unused: u8,
}

pub(crate) fn tables(target: Target) -> (&'static [u16; 128], &'static [u16; 16]) {
    match target {
        Target::Gfx90a => (&MUBUF_GFX90A, &MTBUF_GFX90A),
        Target::Gfx942 => (&MUBUF_GFX942, &MTBUF_GFX942),
        Target::Gfx908 => (&MUBUF_GFX908, &MTBUF_GFX908),
        // gfx950: the decoder is given GFX9 targets only.
        _ => (&MUBUF_GFX950, &MTBUF_GFX950),
    }
}

/// Decodes a MUBUF (`mtbuf == false`) or MTBUF instruction (8 bytes).
pub(crate) fn decode(target: Target, bytes: &[u8], mtbuf: bool) -> Result<Inst, DecodeError> {
    let w0 = super::word(bytes, 0)?;
    let invalid = DecodeError::Invalid { target, word: w0 };
    let w1 = super::word(bytes, 1)?;
    let (mu, mt) = tables(target);
    let opcode = if mtbuf {
        (w0 >> 15) & 0xf
    } else {
        (w0 >> 18) & 0x7f
    } as u8;
    let row = if mtbuf {
        mt.get(usize::from(opcode))
    } else {
        mu.get(usize::from(opcode))
    };
    let op = BUF_OPS
        .get(usize::from(row.copied().unwrap_or(u16::MAX)))
        .ok_or(invalid.clone())?;
    let all = u64::from(w0) | (u64::from(w1) << 32);
    if all & op.fix != op.val {
        return Err(invalid);
    }
    let srsrc = ((w1 >> 16) & 0x1f) as u8;
    let soffset = (w1 >> 24) as u8;
    let literal = if soffset == 255 && target.is_gfx950() && op.has_ops {
        Some(super::word(bytes, 2)?)
    } else {
        None
    };
    if op.has_ops
        && (srsrc == 26
            || srsrc == 31
            || (literal.is_none() && soffset_name(target, soffset).is_none()))
    {
        return Err(invalid);
    }
    let b = Buf::with_op(mtbuf, op, w0, w1, literal);
    if b.acc && b.lds {
        return Err(invalid);
    }
    // An AGPR tuple must fit the file; gfx908's tfe tuple may run past
    // v255 (LLVM prints `v[255:256]`).
    if b.acc
        && target.is_gfx90a_plus()
        && b.shows_vdata()
        && u16::from(b.vdata) + u16::from(op.vdata) > 256
    {
        return Err(invalid);
    }
    let len = if b.has_lit { 12 } else { 8 };
    let r = row.copied().unwrap_or(0);
    Ok(Inst::new(target, r, len, [w0, w1, b.lit, 0]))
}

/// How LLVM prints the soffset field (an SGPR, special register or inline
/// constant), or `None` where the value does not decode.
fn soffset_name(target: Target, v: u8) -> Option<SOff> {
    Some(match v {
        0..=101 => SOff::Sgpr(v),
        102..=127 => SOff::Name(SPECIAL[usize::from(v - 102)]),
        128..=208 => SOff::Int(if v <= 192 {
            i16::from(v) - 128
        } else {
            192 - i16::from(v)
        }),
        230 => SOff::Name("src_flat_scratch_base_lo"),
        231 => SOff::Name("src_flat_scratch_base_hi"),
        235 => SOff::Name("src_shared_base"),
        236 => SOff::Name("src_shared_limit"),
        237 => SOff::Name("src_private_base"),
        238 => SOff::Name("src_private_limit"),
        239 => SOff::Name("src_pops_exiting_wave_id"),
        240..=248 => SOff::Name(FLOATS[usize::from(v - 240)]),
        251 => SOff::Name("src_vccz"),
        252 => SOff::Name("src_execz"),
        253 => SOff::Name("src_scc"),
        254 => {
            SOff::Name("src_lds_direct/*Invalid register, operand has 'SReg_32' register class*/")
        }
        _ => {
            let _ = target;
            return None;
        }
    })
}

enum SOff {
    Sgpr(u8),
    Name(&'static str),
    Int(i16),
    Lit(u32),
}

const SPECIAL: [&str; 26] = [
    "flat_scratch_lo",
    "flat_scratch_hi",
    "xnack_mask_lo",
    "xnack_mask_hi",
    "vcc_lo",
    "vcc_hi",
    "ttmp0",
    "ttmp1",
    "ttmp2",
    "ttmp3",
    "ttmp4",
    "ttmp5",
    "ttmp6",
    "ttmp7",
    "ttmp8",
    "ttmp9",
    "ttmp10",
    "ttmp11",
    "ttmp12",
    "ttmp13",
    "ttmp14",
    "ttmp15",
    "m0",
    "null",
    "exec_lo",
    "exec_hi",
];

const FLOATS: [&str; 9] = [
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

impl Buf {
    /// The fields of a MUBUF or MTBUF instruction of `len` bytes whose
    /// opcode is row `r` of [`BUF_OPS`].
    pub(crate) fn from_raw(mtbuf: bool, r: usize, len: u8, w0: u32, w1: u32, w2: u32) -> Buf {
        Buf::with_op(mtbuf, &BUF_OPS[r], w0, w1, (len == 12).then_some(w2))
    }

    #[inline(always)]
    fn with_op(mtbuf: bool, op: &'static BufOp, w0: u32, w1: u32, literal: Option<u32>) -> Buf {
        let opcode = if mtbuf {
            (w0 >> 15) & 0xf
        } else {
            (w0 >> 18) & 0x7f
        } as u8;
        Buf {
            mtbuf,
            opcode,
            op,
            offset: (w0 & 0xfff) as u16,
            offen: w0 & (1 << 12) != 0,
            idxen: w0 & (1 << 13) != 0,
            glc: w0 & (1 << 14) != 0,
            scc: if mtbuf {
                w1 & (1 << 21) != 0
            } else {
                w0 & (1 << 15) != 0
            },
            slc: if mtbuf {
                w1 & (1 << 22) != 0
            } else {
                w0 & (1 << 17) != 0
            },
            lds: !mtbuf && w0 & (1 << 16) != 0,
            dfmt: if mtbuf { ((w0 >> 19) & 0xf) as u8 } else { 0 },
            nfmt: if mtbuf { ((w0 >> 23) & 0x7) as u8 } else { 0 },
            vaddr: (w1 & 0xff) as u8,
            vdata: ((w1 >> 8) & 0xff) as u8,
            srsrc: ((w1 >> 16) & 0x1f) as u8,
            acc: w1 & (1 << 23) != 0,
            soffset: (w1 >> 24) as u8,
            has_lit: literal.is_some(),
            lit: literal.unwrap_or(0),
            unused: if mtbuf {
                0
            } else {
                (((w0 >> 25) & 1) | ((w1 >> 20) & 6)) as u8
            },
        }
    }

    /// The literal dword that follows when soffset is 255 (gfx950).
    pub fn literal(&self) -> Option<u32> {
        self.has_lit.then_some(self.lit)
    }

    /// gfx908's `tfe`: the load or store has a status dword after its data
    /// (the bit gfx90a and later read as `acc`).
    pub fn tfe(&self, target: Target) -> bool {
        self.acc && !target.is_gfx90a_plus()
    }

    /// Whether vdata names AGPRs.
    pub fn vdata_agpr(&self, target: Target) -> bool {
        self.acc && target.is_gfx90a_plus()
    }

    /// The vdata width in dwords, with the status dword of `tfe`.
    pub fn vdata_width(&self, target: Target) -> u8 {
        self.op.vdata + u8::from(self.tfe(target))
    }

    fn shows_vdata(&self) -> bool {
        self.op.vdata > 0 && (!self.lds || self.op.lds_vdata)
    }

    pub fn mnemonic(&self) -> &'static str {
        self.op.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut w0 = u32::from(self.offset)
            | (u32::from(self.offen) << 12)
            | (u32::from(self.idxen) << 13)
            | (u32::from(self.glc) << 14);
        let mut w1 = u32::from(self.vaddr)
            | (u32::from(self.vdata) << 8)
            | (u32::from(self.srsrc) << 16)
            | (u32::from(self.acc) << 23)
            | (u32::from(self.soffset) << 24);
        if self.mtbuf {
            w0 |= (0x3a << 26)
                | (u32::from(self.opcode) << 15)
                | (u32::from(self.dfmt) << 19)
                | (u32::from(self.nfmt) << 23);
            w1 |= (u32::from(self.scc) << 21) | (u32::from(self.slc) << 22);
        } else {
            w0 |= (0x38 << 26)
                | (u32::from(self.scc) << 15)
                | (u32::from(self.lds) << 16)
                | (u32::from(self.slc) << 17)
                | (u32::from(self.opcode) << 18);
        }
        w0 |= u32::from(self.unused & 1) << 25;
        w1 |= u32::from(self.unused & 6) << 20;
        out.extend_from_slice(&w0.to_le_bytes());
        out.extend_from_slice(&w1.to_le_bytes());
        if let Some(l) = self.literal() {
            out.extend_from_slice(&l.to_le_bytes());
        }
    }

    /// Writes the operands and modifiers; `gfx940` selects the sc0/sc1/nt
    /// cache-policy spelling.
    pub fn fmt_with(&self, f: &mut fmt::Formatter<'_>, target: Target) -> fmt::Result {
        f.write_str(self.op.name)?;
        if self.op.has_ops {
            f.write_str(" ")?;
            if self.shows_vdata() {
                let cls = if self.acc {
                    self.op.cls_acc
                } else {
                    self.op.cls
                };
                fmt_vreg(
                    f,
                    self.vdata_agpr(target),
                    u16::from(self.vdata),
                    self.vdata_width(target),
                    cls,
                )?;
                f.write_str(", ")?;
            }
            match (self.offen, self.idxen) {
                // `buffer_store_lds_dword` has no address operand.
                (false, false) if self.op.lds_first => {}
                (false, false) => f.write_str("off")?,
                (true, true) => {
                    let aligned = !self.mtbuf && target.is_gfx90a_plus();
                    let cls = if aligned { "VReg_64_Align2" } else { "" };
                    fmt_vreg(f, false, u16::from(self.vaddr), 2, cls)?
                }
                _ => write!(f, "v{}", self.vaddr)?,
            }
            if !self.op.lds_first {
                f.write_str(", ")?;
            }
            let r = u16::from(self.srsrc) * 4;
            if r >= 108 {
                write!(f, "ttmp[{}:{}]", r - 108, r - 105)?;
            } else {
                write!(f, "s[{}:{}]", r, r + 3)?;
            }
            match self
                .literal()
                .map(SOff::Lit)
                .or_else(|| soffset_name(target, self.soffset))
            {
                Some(SOff::Lit(l)) => write!(f, ", 0x{l:x}")?,
                Some(SOff::Sgpr(s)) => write!(f, ", s{s}")?,
                Some(SOff::Name(n)) => write!(f, ", {n}")?,
                Some(SOff::Int(i)) => write!(f, ", {i}")?,
                None => {}
            }
        }
        if self.op.has_ops {
            self.fmt_addr_mods(f)?;
        }
        let c = self.op.cpol;
        let g940 = target.is_gfx940_plus();
        if self.glc && c & 1 != 0 {
            f.write_str(if g940 { " sc0" } else { " glc" })?;
        }
        if self.slc && c & 2 != 0 {
            f.write_str(if g940 { " nt" } else { " slc" })?;
        }
        if self.scc && c & 4 != 0 {
            f.write_str(if g940 { " sc1" } else { " scc" })?;
        }
        if self.tfe(target) {
            f.write_str(" tfe")?;
        }
        if self.lds && !self.op.lds_first {
            f.write_str(" lds")?;
        }
        Ok(())
    }

    /// The format, addressing and offset modifiers (and a leading `lds`).
    fn fmt_addr_mods(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mtbuf {
            let fm = MTBUF_FORMAT[usize::from(self.nfmt << 4 | self.dfmt) & 127];
            if !fm.is_empty() {
                write!(f, " {fm}")?;
            }
        }
        if self.idxen {
            f.write_str(" idxen")?;
        }
        if self.offen {
            f.write_str(" offen")?;
        }
        if self.offset != 0 {
            write!(f, " offset:{}", self.offset)?;
        }
        if self.lds && self.op.lds_first {
            f.write_str(" lds")?;
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
                &[0xe0501010, 0x03010201],
                Some("buffer_load_dword v2, v1, s[4:7], s3 offen offset:16"),
                8,
            ),
            (
                Gfx90a,
                &[0xe0503000, 0x03010202],
                Some("buffer_load_dword v2, v[2:3], s[4:7], s3 idxen offen"),
                8,
            ),
            (
                Gfx942,
                &[0xe0514000, 0x80010201],
                Some("buffer_load_dword off, s[4:7], 0 sc0 lds"),
                8,
            ),
            (
                Gfx90a,
                &[0xe0504000, 0x00810201],
                Some("buffer_load_dword a2, off, s[4:7], s0 glc"),
                8,
            ),
            (
                Gfx950,
                &[0xe0500000, 0xff010201, 0x00001234],
                Some("buffer_load_dword v2, off, s[4:7], 0x1234"),
                12,
            ),
            (Gfx942, &[0xe0a00000, 0x00000000], Some("buffer_wbl2"), 8),
            (
                Gfx942,
                &[0xe9a41000, 0x03010201],
                Some(
                    "tbuffer_load_format_d16_x v2, v1, s[4:7], s3 \
                     format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_SSCALED] offen",
                ),
                8,
            ),
            (
                Gfx90a,
                &[0xe8008000, 0x00410201],
                Some(
                    "tbuffer_load_format_xy v[2:3], off, s[4:7], s0 format:[BUF_DATA_FORMAT_INVALID] slc",
                ),
                8,
            ),
        ]);
    }
}
