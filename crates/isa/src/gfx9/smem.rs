//! The SMEM encoding (scalar memory: loads, stores, atomics, cache control
//! and time counters), 64 bits.
//!
//! Fields, per the GFX9 / CDNA ISA manuals' "SMEM" microcode format:
//! dword 0: sbase[5:0] (SGPR pair index / 2), sdata[12:6], soe[14], nv[15],
//! glc[16], imm[17], op[25:18], 0b110000 in [31:26];
//! dword 1: offset[20:0], soffset[31:25].

use super::Inst;
use super::operand::{Half, Operand, Reg, RegFile, Special};
use super::sop::{Field, Warnings, decode_ssrc, encode_ssrc, fmt_sop, note_alignment};
use super::tables::smem as tab;
use crate::{DecodeError, Target};
use std::fmt;

/// How an SMEM opcode uses its fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SmemKind {
    /// `sdata, sbase, offset`: loads, stores, atomics.
    Data,
    /// `sbase, offset`: s_dcache_discard*.
    NoData,
    /// `N, sbase, offset` with the sdata field printed as a number: s_atc_probe*.
    Probe,
    /// `sdata` only (s_memtime, s_memrealtime); no immediate offset allowed.
    DataOnly,
    /// No operands (s_dcache_inv, s_dcache_wb, ...); no immediate offset allowed.
    NoOperands,
}

/// One SMEM opcode: widths in dwords of the data and base operands.
#[derive(Debug, PartialEq, Eq)]
pub struct SmemRow {
    pub op: u8,
    pub name: &'static str,
    pub kind: SmemKind,
    pub data: u8,
    pub base: u8,
    /// Whether LLVM prints the `glc` bit for this opcode.
    pub glc: bool,
    /// Bit 0 gfx90a, bit 1 gfx942, bit 2 gfx950.
    pub targets: u8,
}

/// The address offset of an SMEM instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SmemOffset {
    /// No offset operand (the opcode takes none).
    None,
    /// imm=1, soe=0: 21-bit signed byte offset.
    Imm(i32),
    /// imm=0: an SGPR offset (from the offset field, or soffset when soe=1).
    Sgpr(Operand),
    /// imm=1, soe=1: `soffset offset:N`.
    SgprImm(Operand, i32),
}

/// An SMEM instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct SmemFields {
    pub row: &'static SmemRow,
    pub sdata: Field,
    pub sbase: Option<Operand>,
    pub offset: SmemOffset,
    pub imm: bool,
    pub soe: bool,
    pub glc: bool,
    pub nv: bool,
    /// Bits of the 64-bit encoding that no field above represents (ignored by
    /// LLVM); kept so that re-encoding reproduces the input.
    pub unused_bits: u64,
}

static IDX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < tab::SMEM.len() {
        t[tab::SMEM[i].op as usize] = i as u8;
        i += 1;
    }
    t
};

/// Decodes a register tuple of `width` dwords (4 or more) starting at field
/// value `field`.
#[inline(always)]
fn decode_wide(field: u8, width: u8) -> Option<Operand> {
    if width <= 2 {
        return decode_ssrc(field, width, None);
    }
    let (file, index, limit) = match field {
        0..=101 => (RegFile::Sgpr, u16::from(field), 102),
        108..=123 => (RegFile::Ttmp, u16::from(field) - 108, 16),
        125 => return Some(Operand::Special(Special::Null, Half::Full)),
        _ => return None,
    };
    let lo = index - index % 4;
    (lo + u16::from(width) <= limit + if file == RegFile::Sgpr { 2 } else { 0 })
        .then_some(Operand::Reg(Reg::new(file, index, width)))
}

fn sext21(v: u32) -> i32 {
    ((v << 11) as i32) >> 11
}

const OFFSET_MASK: u64 = 0x1f_ffff << 32;
const SOFFSET_MASK: u64 = 0x7f << 57;

impl SmemFields {
    #[inline(always)]
    pub fn decode_fields(target: Target, bytes: &[u8]) -> Result<(SmemFields, u8), DecodeError> {
        let w0 = super::word(bytes, 0)?;
        let invalid = DecodeError::Invalid { target, word: w0 };
        let w1 = super::word(bytes, 1)?;
        let raw = u64::from(w0) | u64::from(w1) << 32;
        let row = IDX
            .get(((w0 >> 18) & 0xff) as usize)
            .and_then(|&i| tab::SMEM.get(usize::from(i)))
            .ok_or(invalid.clone())?;
        if row.targets & target.bit() == 0 {
            return Err(invalid);
        }
        let (imm, soe) = (w0 >> 17 & 1 == 1, w0 >> 14 & 1 == 1);
        let sdata_f = (w0 >> 6) as u8 & 0x7f;
        let sbase_f = (w0 & 0x3f) as u8 * 2;
        // Bits the typed fields below account for.
        let mut used: u64 = 0xfc00_0000 | 0xff << 18 | 1 << 17 | 1 << 16 | 1 << 15 | 1 << 14;
        let sdata = match row.kind {
            SmemKind::Data | SmemKind::DataOnly => {
                used |= 0x7f << 6;
                Field::Op(decode_wide(sdata_f, row.data).ok_or(invalid.clone())?)
            }
            SmemKind::Probe => {
                used |= 0x7f << 6;
                Field::Op(Operand::Imm(i64::from(sdata_f)))
            }
            _ => Field::Unused(0),
        };
        let has_addr = matches!(
            row.kind,
            SmemKind::Data | SmemKind::NoData | SmemKind::Probe
        );
        let (sbase, offset) = if has_addr {
            used |= 0x3f;
            let sbase = decode_wide(sbase_f, row.base).ok_or(invalid.clone())?;
            let soffset = || decode_ssrc((w1 >> 25) as u8, 1, None).ok_or(invalid.clone());
            let offset = match (imm, soe) {
                (true, false) => {
                    used |= OFFSET_MASK;
                    SmemOffset::Imm(sext21(w1))
                }
                (true, true) => {
                    used |= OFFSET_MASK | SOFFSET_MASK;
                    SmemOffset::SgprImm(soffset()?, sext21(w1))
                }
                (false, true) => {
                    used |= SOFFSET_MASK;
                    SmemOffset::Sgpr(soffset()?)
                }
                (false, false) => {
                    used |= 0x7f << 32;
                    SmemOffset::Sgpr(
                        decode_ssrc((w1 & 0x7f) as u8, 1, None).ok_or(invalid.clone())?,
                    )
                }
            };
            (Some(sbase), offset)
        } else {
            if imm {
                return Err(invalid);
            }
            (None, SmemOffset::None)
        };
        let glc = w0 >> 16 & 1 == 1;
        let nv = w0 >> 15 & 1 == 1;
        let unused_bits = raw & !used;
        Ok((
            SmemFields {
                row,
                sdata,
                sbase,
                offset,
                imm,
                soe,
                glc,
                nv,
                unused_bits,
            },
            8,
        ))
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut v = self.unused_bits | 0xc000_0000 | u64::from(self.row.op) << 18;
        v |= u64::from(self.imm) << 17 | u64::from(self.glc) << 16 | u64::from(self.nv) << 15;
        v |= u64::from(self.soe) << 14;
        match self.sdata {
            Field::Op(Operand::Imm(n)) => v |= (n as u64 & 0x7f) << 6,
            Field::Op(op) => v |= u64::from(encode_ssrc(&op) & 0x7f) << 6,
            Field::Unused(_) => {}
        }
        if let Some(b) = self.sbase {
            v |= u64::from(encode_ssrc(&b) / 2);
        }
        let off = |o: i32| (o as u32 as u64 & 0x1f_ffff) << 32;
        let sreg = |o: &Operand| u64::from(encode_ssrc(o) & 0x7f);
        match (&self.offset, self.soe) {
            (SmemOffset::None, _) => {}
            (SmemOffset::Imm(o), _) => v |= off(*o),
            (SmemOffset::SgprImm(s, o), _) => v |= off(*o) | sreg(s) << 57,
            (SmemOffset::Sgpr(s), true) => v |= sreg(s) << 57,
            (SmemOffset::Sgpr(s), false) => v |= sreg(s) << 32,
        }
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn fmt_offset(f: &mut fmt::Formatter<'_>, o: i32) -> fmt::Result {
    if o < 0 {
        write!(f, "-0x{:x}", o.unsigned_abs())
    } else {
        write!(f, "0x{o:x}")
    }
}

impl fmt::Display for SmemFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = self.row;
        let mut warn = Warnings::default();
        f.write_str(row.name)?;
        let mut sep = " ";
        match self.sdata {
            Field::Op(Operand::Imm(n)) => {
                if n <= 64 {
                    write!(f, " {n}")?
                } else {
                    write!(f, " 0x{n:x}")?
                }
                sep = ", ";
            }
            Field::Op(op) => {
                f.write_str(" ")?;
                fmt_sop(f, &op, row.data, &mut warn)?;
                // The data register class excludes m0 and exec.
                if let Operand::Special(Special::M0 | Special::Exec, _) = op {
                    let class = if row.data >= 2 {
                        "SReg_64_XEXEC"
                    } else {
                        "SReg_32_XM0_XEXEC"
                    };
                    write!(
                        f,
                        "/*Invalid register, operand has '{class}' register class*/"
                    )?;
                }
                // A returning atomic's data register is both destination and
                // source; LLVM checks (and reports) its alignment twice.
                if let (true, Operand::Reg(r)) = (self.glc && row.name.contains("atomic"), op) {
                    note_alignment(r, &mut warn);
                }
                sep = ", ";
            }
            Field::Unused(_) => {}
        }
        if let Some(b) = &self.sbase {
            f.write_str(sep)?;
            match b {
                // A 128-bit base from a special register pair prints as its
                // first half's name (LLVM has no wider names).
                Operand::Special(sp, Half::Full) if row.base > 2 => {
                    super::operand::fmt_special(f, *sp, Half::Full)?
                }
                _ => fmt_sop(f, b, row.base, &mut warn)?,
            }
            f.write_str(", ")?;
        }
        match &self.offset {
            SmemOffset::None => {}
            SmemOffset::Imm(o) => fmt_offset(f, *o)?,
            SmemOffset::Sgpr(s) => fmt_sop(f, s, 1, &mut warn)?,
            SmemOffset::SgprImm(s, o) => {
                fmt_sop(f, s, 1, &mut warn)?;
                f.write_str(" offset:")?;
                fmt_offset(f, *o)?;
            }
        }
        if self.glc && row.glc {
            f.write_str(" glc")?;
        }
        warn.write(f)
    }
}

/// An SMEM instruction as decoded: the opcode's table row and the instruction's
/// dwords, whose operand fields [`Smem::fields`] expands. Keeping the
/// fields packed makes decoding cheap: the operands are validated when
/// decoding, but only built into [`Operand`]s when asked for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Smem {
    pub target: Target,
    /// Size in bytes.
    len: u8,
    pub row: &'static SmemRow,
    /// The first dword.
    w0: u32,
    /// The second dword of an 8-byte instruction; 0 for a 4-byte one.
    w1: u32,
}

impl Smem {
    /// Decodes an SMEM instruction (with its second dword).
    #[inline]
    pub(crate) fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
        let (v, len) = SmemFields::decode_fields(target, bytes)?;
        let r = IDX[usize::from(v.row.op)];
        let w0 = super::word(bytes, 0)?;
        let w1 = super::word(bytes, 1)?;
        Ok(Inst::new(target, u16::from(r), len, [w0, w1, 0, 0]))
    }

    /// The fields of an SMEM instruction whose opcode is row `r` of the
    /// SMEM table.
    pub(crate) fn from_raw(target: Target, r: usize, w0: u32, w1: u32) -> Smem {
        Smem {
            target,
            len: 8,
            row: &tab::SMEM[r],
            w0,
            w1,
        }
    }

    /// The instruction's bytes and their count.
    fn bytes(&self) -> ([u8; 8], usize) {
        super::raw_bytes(u64::from(self.w0) | (u64::from(self.w1) << 32), self.len)
    }

    /// The typed operands and modifiers. `None` only for a value that
    /// [`Smem::decode`] did not produce.
    pub fn fields(&self) -> Option<SmemFields> {
        let (b, n) = self.bytes();
        let target = self.target;

        let bytes = b.get(..n)?;
        SmemFields::decode_fields(target, bytes)
            .ok()
            .map(|(v, _)| v)
    }

    pub fn mnemonic(&self) -> &'static str {
        self.row.name
    }

    /// Writes the instruction's bytes, re-encoded from its fields.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self.fields() {
            Some(v) => v.encode_into(out),
            None => {
                let (b, n) = self.bytes();
                out.extend_from_slice(b.get(..n).unwrap_or_default());
            }
        }
    }
}

impl fmt::Display for Smem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fields() {
            Some(v) => v.fmt(f),
            None => f.write_str("<invalid>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gfx9::sop::tests::check;

    /// Texts from LLVM 22's disassembler (`scripts/dev/llvm_oracle.py`).
    #[test]
    fn matches_llvm() {
        let cases: &[(Target, &[u32], Option<&str>)] = &[
            (
                Target::Gfx942,
                &[0xc00200c0, 0x00000024],
                Some("s_load_dword s3, s[0:1], 0x24"),
            ),
            (
                Target::Gfx942,
                &[0xc00a0100, 0x00000000],
                Some("s_load_dwordx4 s[4:7], s[0:1], 0x0"),
            ),
            (
                Target::Gfx942,
                &[0xc0010143, 0x00000024],
                Some("s_load_dword s5, s[6:7], s36 glc"),
            ),
            (
                Target::Gfx942,
                &[0xc0024143, 0x0e000024],
                Some("s_load_dword s5, s[6:7], s7 offset:0x24"),
            ),
            (
                Target::Gfx942,
                &[0xc0020143, 0x001fffff],
                Some("s_load_dword s5, s[6:7], -0x1"),
            ),
            (
                Target::Gfx942,
                &[0xc0030143, 0x00000024],
                Some("s_load_dword s5, s[6:7], 0x24 glc"),
            ),
            (
                Target::Gfx942,
                &[0xc0220143, 0x00000024],
                Some(
                    "s_buffer_load_dword s5, s[4:7], 0x24 ; Warning: SGPR_128: scalar reg isn't aligned 6",
                ),
            ),
            (
                Target::Gfx942,
                &[0xc0800000, 0x00000000],
                Some("s_dcache_inv"),
            ),
            (
                Target::Gfx942,
                &[0xc0900080, 0x00000000],
                Some("s_memtime s[2:3]"),
            ),
            (
                Target::Gfx942,
                &[0xc0980000, 0x00000000],
                Some("s_atc_probe 0, s[0:1], s0"),
            ),
            (
                Target::Gfx942,
                &[0xc09a1003, 0x00000024],
                Some("s_atc_probe 64, s[6:7], 0x24"),
            ),
            (
                Target::Gfx942,
                &[0xc0a60103, 0x00000024],
                Some("s_dcache_discard_x2 s[6:7], 0x24"),
            ),
            (
                Target::Gfx942,
                &[0xc0028000, 0x00000024],
                Some("s_load_dword s0, s[0:1], 0x24"),
            ),
            (Target::Gfx942, &[0xc0831f00, 0x00000024], None),
            (
                Target::Gfx942,
                &[0xc2871f40, 0x00000024],
                Some("s_atomic_cmpswap_x2 null, s[0:1], 0x24 glc"),
            ),
            (
                Target::Gfx942,
                &[0xc1971f45, 0x00000024],
                Some(
                    "s_buffer_atomic_umin_x2 null, s[8:11], 0x24 glc ; Warning: SGPR_128: scalar reg isn't aligned 10",
                ),
            ),
            (
                Target::Gfx942,
                &[0xc0021f00, 0x00000024],
                Some(
                    "s_load_dword m0/*Invalid register, operand has 'SReg_32_XM0_XEXEC' register class*/, s[0:1], 0x24",
                ),
            ),
            (Target::Gfx942, &[0xc00a1980, 0x00000024], None),
            (
                Target::Gfx950,
                &[0xc0060200, 0x00000010],
                Some("s_load_dwordx2 s[8:9], s[0:1], 0x10"),
            ),
            (
                Target::Gfx90a,
                &[0xc0060200, 0x00000010],
                Some("s_load_dwordx2 s[8:9], s[0:1], 0x10"),
            ),
            (Target::Gfx942, &[0xc0121980, 0x00000024], None),
            (Target::Gfx942, &[0xc03e0dbd, 0x00000024], None),
        ];
        for &(t, words, want) in cases {
            check(t, words, want);
        }
    }

    #[test]
    fn truncated_second_dword() {
        let bytes = 0xc002_00c0u32.to_le_bytes();
        assert!(matches!(
            Smem::decode(Target::Gfx942, &bytes),
            Err(DecodeError::Truncated { need: 8, have: 4 })
        ));
    }

    /// Sampled SMEM words decode without panicking and re-encode exactly,
    /// including the bits LLVM ignores.
    #[test]
    fn sampled_words_round_trip() {
        let mut x: u64 = 0x0123_4567_89ab_cdef;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x & !(0x3f << 26)) | 0x30 << 26;
            let bytes = v.to_le_bytes();
            for t in crate::gfx9::ALL_TARGETS {
                if let Ok(inst) = crate::decode(t, &bytes) {
                    assert_eq!(inst.encode(), bytes, "{v:016x}");
                    let _ = inst.to_string();
                }
            }
        }
    }

    #[test]
    fn offset_is_21_bit_signed() {
        assert_eq!(sext21(0x1f_ffff), -1);
        assert_eq!(sext21(0x10_0000), -0x10_0000);
        assert_eq!(sext21(0xfe00_0024), 0x24);
    }
}
