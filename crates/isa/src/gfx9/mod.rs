//! The GFX9 encoding family as implemented by the CDNA targets gfx908
//! (CDNA1), gfx90a (CDNA2), gfx942 (CDNA3) and gfx950 (CDNA4). gfx908 is
//! the GFX9 of Vega with matrix instructions: it keeps the graphics
//! encodings (VINTRP, EXP, interpolation in VOP3, image sampling), has
//! `tfe` where gfx90a has the memory `acc` bit and no VGPR alignment rule;
//! the generated tables carry it as a fourth target.
//!
//! Each encoding has a module with its field struct, decoder, encoder and
//! printer. The encoding of a word is chosen from its top bits (the ISA
//! manuals' "Microcode formats" chapter).

pub mod ds;
pub mod exp;
pub mod flat;
pub mod mimg;
pub mod mubuf;
pub mod opcodes;
pub mod operand;
pub mod regs;
pub mod smem;
pub mod sop;
pub mod tables;
pub mod vintrp;
pub mod vop;
pub mod vop3;
pub mod vop3p;

use crate::{DecodeError, Target};
use std::fmt;
use std::num::NonZeroU64;

/// The number of GFX9 targets: per-target tables have a column for each
/// `Target::index()` (gfx90a, gfx942, gfx950, gfx908).
pub(crate) const TARGETS: usize = 4;

/// The GFX9 targets, in `Target::index()` order.
pub const ALL_TARGETS: [Target; TARGETS] = [
    Target::Gfx90a,
    Target::Gfx942,
    Target::Gfx950,
    Target::Gfx908,
];

/// A decoded GFX9 instruction: its encoding, the row of its opcode in that
/// encoding's table (chosen and validated for the target when decoding) and
/// its dwords. The operand fields are read from the dwords when asked for:
/// [`Inst::body`] gives them typed, per encoding family.
///
/// Keeping the dwords rather than the expanded fields makes the value small
/// (24 bytes) and decoding cheap; every check that decides whether LLVM
/// accepts the word is made when decoding.
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct Inst {
    /// The first dword (bits 31:0, whose top bits name the encoding), the
    /// size in bytes (39:32, never zero) and the target's index (47:40):
    /// what a decoder knows without a table lookup, so that this word, and
    /// the size a linear disassembly reads back next, is ready as soon as
    /// the dword is loaded.
    head: NonZeroU64,
    /// The second dword (bits 31:0) and the opcode's row in the encoding's
    /// table (47:32).
    second: u64,
    /// The third and fourth dwords (a literal, or a scaled MFMA's second
    /// instruction).
    tail: u64,
}

impl fmt::Debug for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inst")
            .field("target", &self.target())
            .field("encoding", &self.encoding())
            .field("row", &self.row())
            .field("bytes", &&self.bytes()[..self.len()])
            .finish()
    }
}

/// The encoding-specific fields of an instruction (see [`Inst::body`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// SOP1, SOP2 and SOPC.
    Salu(sop::Salu),
    Sopk(sop::Sopk),
    Sopp(sop::Sopp),
    Smem(smem::Smem),
    /// VOP1, VOP2, VOPC (e32, SDWA, DPP).
    Vop(vop::Vop),
    Ds(ds::Ds),
    Flat(flat::Flat),
    Mimg(mimg::Mimg),
    Mubuf(mubuf::Buf),
    Mtbuf(mubuf::Buf),
    Vop3(vop3::Vop3),
    Vop3p(vop3p::Vop3p),
    /// gfx908 only.
    Vintrp(vintrp::Vintrp),
    /// gfx908 only.
    Exp(exp::Exp),
}

impl Inst {
    /// An instruction of `len` bytes whose opcode is row `row` of its
    /// encoding's table; `words` holds its dwords (zero past `len`). Whole
    /// 64-bit words, so that the value is stored and reloaded at one width
    /// (no store-to-load forwarding stall).
    #[inline(always)]
    pub(crate) fn new(target: Target, row: u16, len: u8, words: [u32; 4]) -> Inst {
        let [w0, w1, w2, w3] = words.map(u64::from);
        let head = w0 | u64::from(len) << 32 | (target.index() as u64) << 40;
        Inst {
            head: NonZeroU64::new(head).unwrap_or(NonZeroU64::MIN),
            second: w1 | u64::from(row) << 32,
            tail: w2 | w3 << 32,
        }
    }

    /// The target the instruction was decoded for.
    #[inline]
    pub fn target(&self) -> Target {
        match (self.head.get() >> 40) as u8 {
            0 => Target::Gfx90a,
            1 => Target::Gfx942,
            2 => Target::Gfx950,
            _ => Target::Gfx908,
        }
    }

    /// The encoding of the first dword.
    #[inline]
    pub fn encoding(&self) -> Encoding {
        // Every decoded first dword has one.
        encoding_of(self.word(0)).unwrap_or(Encoding::Exp)
    }

    /// The opcode's row in the encoding's table.
    #[inline]
    fn row(&self) -> u16 {
        (self.second >> 32) as u16
    }

    /// Size in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.size())
    }

    /// Size in bytes.
    #[inline]
    fn size(&self) -> u8 {
        (self.head.get() >> 32) as u8
    }

    /// Never true: every instruction has at least one dword.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Dword `i` of the instruction (0 past its length).
    pub fn word(&self, i: usize) -> u32 {
        match i {
            0 => self.head.get() as u32,
            1 => self.second as u32,
            2 => self.tail as u32,
            3 => (self.tail >> 32) as u32,
            _ => 0,
        }
    }

    /// The instruction's bytes: the first [`Inst::len`] of the array.
    pub fn bytes(&self) -> [u8; 16] {
        let mut b = [0; 16];
        for (i, c) in b.chunks_exact_mut(4).enumerate() {
            c.copy_from_slice(&self.word(i).to_le_bytes());
        }
        b
    }

    /// The encoding-specific fields: opcode row, operands and modifiers,
    /// read from the dwords.
    pub fn body(&self) -> Body {
        let t = self.target();
        let r = usize::from(self.row());
        let len = self.size();
        let [w0, w1, w2, w3] = [0, 1, 2, 3].map(|i| self.word(i));
        match self.encoding() {
            Encoding::Sop1 => {
                Body::Salu(sop::Salu::from_raw(t, sop::AluForm::Sop1, r, len, w0, w1))
            }
            Encoding::Sop2 => {
                Body::Salu(sop::Salu::from_raw(t, sop::AluForm::Sop2, r, len, w0, w1))
            }
            Encoding::Sopc => {
                Body::Salu(sop::Salu::from_raw(t, sop::AluForm::Sopc, r, len, w0, w1))
            }
            Encoding::Sopk => Body::Sopk(sop::Sopk::from_raw(r, len, w0, w1)),
            Encoding::Sopp => Body::Sopp(sop::Sopp::from_raw(r, w0)),
            Encoding::Smem => Body::Smem(smem::Smem::from_raw(t, r, w0, w1)),
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => {
                Body::Vop(vop::Vop::from_raw(t, r, len, w0, w1))
            }
            Encoding::Vop3 => Body::Vop3(vop3::Vop3::from_raw(r, len, w0, w1, w2)),
            Encoding::Vop3p => Body::Vop3p(vop3p::Vop3p::from_raw(r, len, [w0, w1, w2, w3])),
            Encoding::Ds => Body::Ds(ds::Ds::from_raw(r, w0, w1)),
            Encoding::Flat => Body::Flat(flat::Flat::from_raw(r, w0, w1)),
            Encoding::Mubuf => Body::Mubuf(mubuf::Buf::from_raw(false, r, len, w0, w1, w2)),
            Encoding::Mtbuf => Body::Mtbuf(mubuf::Buf::from_raw(true, r, len, w0, w1, w2)),
            Encoding::Mimg => Body::Mimg(mimg::Mimg::from_raw(r, w0, w1)),
            Encoding::Vintrp => Body::Vintrp(vintrp::Vintrp::from_raw(w0)),
            Encoding::Exp => Body::Exp(exp::Exp::from_raw(w0, w1)),
        }
    }

    /// Writes the instruction's bytes (re-encoded from its fields).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match &self.body() {
            Body::Salu(i) => i.encode_into(out),
            Body::Sopk(i) => i.encode_into(out),
            Body::Sopp(i) => i.encode_into(out),
            Body::Smem(i) => i.encode_into(out),
            Body::Vop(v) => v.encode_into(out),
            Body::Ds(b) => b.encode_into(out),
            Body::Flat(b) => b.encode_into(out),
            Body::Mimg(b) => b.encode_into(out),
            Body::Mubuf(b) | Body::Mtbuf(b) => b.encode_into(out),
            Body::Vop3(i) => i.encode_into(out),
            Body::Vop3p(i) => i.encode_into(out),
            Body::Vintrp(i) => i.encode_into(out),
            Body::Exp(i) => i.encode_into(out),
        }
    }

    /// The instruction's bytes, re-encoded from its fields.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len());
        self.encode_into(&mut v);
        v
    }

    /// For PC-relative branches (SOPP branches, `s_call_b64` and
    /// `s_cbranch_i_fork`), the address that the instruction at `pc`
    /// branches to.
    pub fn branch_target(&self, pc: u64) -> Option<u64> {
        match self.encoding() {
            Encoding::Sopp | Encoding::Sopk => match &self.body() {
                Body::Sopp(i) => i.branch_target(pc),
                Body::Sopk(i) => i.branch_target(pc),
                _ => None,
            },
            _ => None,
        }
    }

    /// LLVM's mnemonic for the instruction, including the encoding suffix
    /// (`_e32`, `_e64`, `_sdwa`, `_dpp`) where LLVM prints one.
    pub fn mnemonic(&self) -> &'static str {
        match &self.body() {
            Body::Salu(i) => i.mnemonic(),
            Body::Sopk(i) => i.mnemonic(),
            Body::Sopp(i) => i.mnemonic(),
            Body::Smem(i) => i.mnemonic(),
            Body::Vop(v) => v.mnemonic(),
            Body::Ds(b) => b.mnemonic(),
            Body::Flat(b) => b.mnemonic(),
            Body::Mimg(b) => b.mnemonic(),
            Body::Mubuf(b) | Body::Mtbuf(b) => b.mnemonic(),
            Body::Vop3(i) => i.row.name,
            Body::Vop3p(i) => i.row.name,
            Body::Vintrp(i) => i.name,
            Body::Exp(i) => i.mnemonic(),
        }
    }
}

impl fmt::Display for Inst {
    /// The instruction in LLVM 22's assembly syntax, as `llvm-objdump -d`
    /// prints it (without address or raw bytes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.body() {
            Body::Salu(i) => i.fmt(f),
            Body::Sopk(i) => i.fmt_with(f, self.target()),
            Body::Sopp(i) => i.fmt(f),
            Body::Smem(i) => i.fmt(f),
            Body::Vop(v) => v.fmt(f),
            Body::Ds(b) => b.fmt(f),
            Body::Flat(b) => b.fmt_with(f, self.target()),
            Body::Mimg(b) => b.fmt_with(f, self.target()),
            Body::Mubuf(b) | Body::Mtbuf(b) => b.fmt_with(f, self.target()),
            Body::Vop3(i) => i.fmt(f),
            Body::Vop3p(i) => i.fmt(f),
            Body::Vintrp(i) => i.fmt(f),
            Body::Exp(i) => i.fmt(f),
        }
    }
}

/// The bytes of an instruction kept as its first two dwords (`w0` in the
/// low half of `raw`), and how many of them it has (at most 8).
#[inline]
pub(crate) fn raw_bytes(raw: u64, len: u8) -> ([u8; 8], usize) {
    (raw.to_le_bytes(), usize::from(len).min(8))
}

/// Reads the dword at `i` (little-endian), or reports truncation.
pub(crate) fn word(bytes: &[u8], i: usize) -> Result<u32, DecodeError> {
    let s = bytes.get(i * 4..i * 4 + 4).ok_or(DecodeError::Truncated {
        need: (i * 4 + 4) as u32,
        // Fewer bytes than `need`, so the value fits.
        have: bytes.len() as u32,
    })?;
    Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// The encodings of the GFX9 family, identified by a word's top bits.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Encoding {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    Vop3,
    Vop3p,
    Vintrp,
    Ds,
    Flat,
    Mubuf,
    Mtbuf,
    Mimg,
    Exp,
}

/// Which encoding a first instruction dword belongs to.
pub fn encoding_of(w: u32) -> Option<Encoding> {
    use Encoding::*;
    if w >> 31 == 0 {
        return Some(match w >> 25 {
            0x3f => Vop1,
            0x3e => Vopc,
            _ => Vop2,
        });
    }
    if w >> 30 == 0b10 {
        return Some(match w >> 23 {
            0x17d => Sop1,
            0x17e => Sopc,
            0x17f => Sopp,
            _ if w >> 28 == 0b1011 => Sopk,
            _ => Sop2,
        });
    }
    Some(match w >> 26 {
        0x30 => Smem,
        0x31 => Exp,
        0x34 if (w >> 23) & 7 == 7 => Vop3p,
        0x34 => Vop3,
        0x35 => Vintrp,
        0x36 => Ds,
        0x37 => Flat,
        0x38 => Mubuf,
        0x3a => Mtbuf,
        0x3c => Mimg,
        _ => return None,
    })
}

/// Decodes one instruction.
#[inline(always)]
pub fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let w0 = word(bytes, 0)?;
    // VOP1, VOP2 and VOPC (top bit clear) are the most frequent encodings.
    if w0 >> 31 == 0 {
        return vop::decode(target, w0, bytes);
    }
    // SOPP (mostly `s_nop` and `s_waitcnt`) is the most frequent of the rest.
    if w0 >> 23 == 0x17f {
        return sop::Sopp::decode(target, w0);
    }
    decode_other(target, w0, bytes)
}

/// Decodes an instruction of an encoding other than VOP1 / VOP2 / VOPC.
#[inline(always)]
fn decode_other(target: Target, w0: u32, bytes: &[u8]) -> Result<Inst, DecodeError> {
    use sop::AluForm::{Sop1, Sop2, Sopc};
    let invalid = DecodeError::Invalid { target, word: w0 };
    match encoding_of(w0) {
        None => Err(invalid),
        Some(enc) => match enc {
            Encoding::Sopp => sop::Sopp::decode(target, w0),
            Encoding::Sop1 => sop::Salu::decode(target, Sop1, w0, bytes),
            Encoding::Sop2 => sop::Salu::decode(target, Sop2, w0, bytes),
            Encoding::Sopc => sop::Salu::decode(target, Sopc, w0, bytes),
            Encoding::Sopk => sop::Sopk::decode(target, bytes),
            Encoding::Smem => smem::Smem::decode(target, bytes),
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => vop::decode(target, w0, bytes),
            Encoding::Vop3 => vop3::decode(target, w0, bytes),
            Encoding::Vop3p => vop3p::decode(target, w0, bytes),
            Encoding::Vintrp => vintrp::decode(target, w0),
            Encoding::Ds => ds::decode(target, bytes),
            Encoding::Mubuf => mubuf::decode(target, bytes, false),
            Encoding::Mtbuf => mubuf::decode(target, bytes, true),
            Encoding::Flat => flat::decode(target, bytes),
            Encoding::Mimg => mimg::decode(target, bytes),
            Encoding::Exp => exp::decode(target, bytes),
        },
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// The decoded instruction stays small: it is returned by value from
    /// every `decode` call, so its size is a large part of the decode cost.
    #[test]
    fn inst_is_small() {
        assert!(size_of::<Inst>() <= 24);
        assert_eq!(size_of::<Result<Inst, DecodeError>>(), size_of::<Inst>());
    }
}
