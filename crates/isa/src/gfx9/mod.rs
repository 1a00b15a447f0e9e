//! The GFX9 encoding family as implemented by the CDNA targets gfx90a
//! (CDNA2), gfx942 (CDNA3) and gfx950 (CDNA4).
//!
//! Each encoding has a module with its field struct, decoder, encoder and
//! printer. The encoding of a word is chosen from its top bits (the ISA
//! manuals' "Microcode formats" chapter).

pub mod ds;
pub mod exp;
pub mod flat;
pub mod mimg;
pub mod mubuf;
pub mod operand;
pub mod smem;
pub mod sop;
pub mod tables;
pub mod vop;
pub mod vop3;
pub mod vop3p;

use crate::{DecodeError, Target};
use std::fmt;

/// A decoded GFX9 instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub target: Target,
    /// Size in bytes, including any literal or second dword.
    pub len: u8,
    /// The encoding-specific fields: opcode, operands and modifiers.
    pub body: Body,
}

/// The encoding-specific fields of an instruction.
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
}

impl Inst {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Never true: every instruction has at least one dword.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Writes the instruction's bytes (re-encoded from its fields).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match &self.body {
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
        match &self.body {
            Body::Sopp(i) => i.branch_target(pc),
            Body::Sopk(i) => i.branch_target(pc),
            _ => None,
        }
    }

    /// LLVM's mnemonic for the instruction, including the encoding suffix
    /// (`_e32`, `_e64`, `_sdwa`, `_dpp`) where LLVM prints one.
    pub fn mnemonic(&self) -> &'static str {
        match &self.body {
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
        }
    }
}

impl fmt::Display for Inst {
    /// The instruction in LLVM 22's assembly syntax, as `llvm-objdump -d`
    /// prints it (without address or raw bytes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.body {
            Body::Salu(i) => i.fmt(f),
            Body::Sopk(i) => i.fmt_with(f, self.target),
            Body::Sopp(i) => i.fmt(f),
            Body::Smem(i) => i.fmt(f),
            Body::Vop(v) => v.fmt(f),
            Body::Ds(b) => b.fmt(f),
            Body::Flat(b) => b.fmt_with(f, self.target),
            Body::Mimg(b) => b.fmt(f),
            Body::Mubuf(b) | Body::Mtbuf(b) => b.fmt_with(f, self.target),
            Body::Vop3(i) => i.fmt(f),
            Body::Vop3p(i) => i.fmt(f),
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
#[inline]
pub fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let w0 = word(bytes, 0)?;
    // VOP1, VOP2 and VOPC (top bit clear) are the most frequent encodings.
    if w0 >> 31 == 0 {
        let v = vop::decode(target, vop::kind_of(w0), w0, bytes)?;
        return Ok(Inst {
            target,
            len: v.size(),
            body: Body::Vop(v),
        });
    }
    // SOPP (mostly `s_nop` and `s_waitcnt`) is the most frequent of the rest.
    if w0 >> 23 == 0x17f {
        let (i, len) = sop::Sopp::decode(target, bytes)?;
        return Ok(Inst {
            target,
            len,
            body: Body::Sopp(i),
        });
    }
    decode_other(target, w0, bytes)
}

/// Decodes an instruction of an encoding other than VOP1 / VOP2 / VOPC.
#[inline]
fn decode_other(target: Target, w0: u32, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    match encoding_of(w0) {
        None => Err(invalid),
        Some(enc) => {
            use sop::AluForm::{Sop1, Sop2, Sopc};
            let (body, len) = match enc {
                Encoding::Sopp => wrap(sop::Sopp::decode(target, bytes), Body::Sopp)?,
                Encoding::Sop1 => wrap(sop::Salu::decode(target, Sop1, bytes), Body::Salu)?,
                Encoding::Sop2 => wrap(sop::Salu::decode(target, Sop2, bytes), Body::Salu)?,
                Encoding::Sopc => wrap(sop::Salu::decode(target, Sopc, bytes), Body::Salu)?,
                Encoding::Sopk => wrap(sop::Sopk::decode(target, bytes), Body::Sopk)?,
                Encoding::Smem => wrap(smem::Smem::decode(target, bytes), Body::Smem)?,
                Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => {
                    let kind = match enc {
                        Encoding::Vop1 => vop::VopKind::Vop1,
                        Encoding::Vopc => vop::VopKind::Vopc,
                        _ => vop::VopKind::Vop2,
                    };
                    let v = vop::decode(target, kind, w0, bytes)?;
                    let len = v.size();
                    (Body::Vop(v), len)
                }
                Encoding::Vop3 => {
                    let i = vop3::decode(target, bytes)?;
                    let len = i.len();
                    (Body::Vop3(i), len)
                }
                Encoding::Vop3p => {
                    let i = vop3p::decode(target, bytes)?;
                    let len = i.len();
                    (Body::Vop3p(i), len)
                }
                // LLVM 22 decodes no VINTRP word on the CDNA targets (they
                // have no interpolation hardware).
                Encoding::Vintrp => return Err(invalid),
                Encoding::Ds => return ds::decode(target, bytes),
                Encoding::Mubuf => return mubuf::decode(target, bytes, false),
                Encoding::Mtbuf => return mubuf::decode(target, bytes, true),
                Encoding::Flat => return flat::decode(target, bytes),
                Encoding::Mimg => return mimg::decode(target, bytes),
                Encoding::Exp => return exp::decode(target, bytes),
            };
            Ok(Inst { target, len, body })
        }
    }
}

/// Wraps an encoding decoder's `(fields, length)` result into a [`Body`].
#[inline(always)]
fn wrap<T>(r: Result<(T, u8), DecodeError>, f: fn(T) -> Body) -> Result<(Body, u8), DecodeError> {
    r.map(|(t, len)| (f(t), len))
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// The decoded instruction stays small: it is returned by value from
    /// every `decode` call, so its size is a large part of the decode cost.
    #[test]
    fn inst_is_small() {
        for (name, size) in [
            ("Salu", size_of::<sop::Salu>()),
            ("Sopk", size_of::<sop::Sopk>()),
            ("Smem", size_of::<smem::Smem>()),
            ("Vop", size_of::<vop::Vop>()),
            ("Ds", size_of::<ds::Ds>()),
            ("Flat", size_of::<flat::Flat>()),
            ("Mimg", size_of::<mimg::Mimg>()),
            ("Buf", size_of::<mubuf::Buf>()),
            ("Vop3", size_of::<vop3::Vop3>()),
            ("Vop3p", size_of::<vop3p::Vop3p>()),
        ] {
            assert!(size <= 32, "{name} is {size} bytes");
        }
        assert!(size_of::<Inst>() <= 48);
        assert_eq!(size_of::<Result<Inst, DecodeError>>(), size_of::<Inst>());
    }
}
