//! The GFX11 encoding family as implemented by the RDNA3 targets gfx1100
//! (Navi 31) and gfx1151 (RDNA3.5, Strix Halo).
//!
//! Each encoding has a module with its field struct, decoder, encoder and
//! printer. The encoding of a word is chosen from its top bits (the RDNA3
//! ISA manual's "Microcode formats" chapter). Operands whose width follows
//! the wavefront size (VCC, EXEC and carry masks, VOPC destinations) are
//! decoded for the wave size the instruction was decoded in, which LLVM
//! takes from the `wavefrontsize32`/`wavefrontsize64` features and a code
//! object from its kernel descriptor.

pub mod ds;
pub mod exp;
pub mod flat;
pub mod interp;
pub mod mimg;
pub mod mubuf;
pub mod operand;
pub mod regs;
pub mod smem;
pub mod sop;
pub mod tables;
pub mod valu;
pub mod vop;
pub mod vop3;
pub mod vop3p;
pub mod vopd;

use crate::{DecodeError, Target};
use std::fmt;
use std::num::NonZeroU64;

/// The GFX11 targets, in table-column order ([`Target::index`]).
pub const TARGETS: [Target; 2] = [Target::Gfx1100, Target::Gfx1151];

/// A decoded GFX11 instruction: its target and wave size, the row of its
/// opcode in its encoding's table and its dwords. The operand fields are
/// read from the dwords when asked for ([`Inst::body`]).
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct Inst {
    /// The first dword (31:0), the size in bytes (39:32), the target's
    /// index (47:40) and the wave size (bit 48 set for wave64).
    head: NonZeroU64,
    /// The second dword (31:0) and the opcode's row (47:32).
    second: u64,
    /// The third and fourth dwords.
    tail: u64,
}

impl fmt::Debug for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inst")
            .field("target", &self.target())
            .field("wave64", &self.wave64())
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
    Vop3(vop3::Vop3),
    /// VOP1, VOP2 and VOPC in their 32-bit and DPP forms.
    Vop(vop::Vop),
    Vop3p(vop3p::Vop3p),
    Vopd(vopd::Vopd),
    Vinterp(interp::Vinterp),
    Ldsdir(interp::Ldsdir),
    Ds(ds::Ds),
    Flat(flat::Flat),
    /// MUBUF and MTBUF.
    Buf(mubuf::Buf),
    Exp(exp::Exp),
    Mimg(mimg::Mimg),
}

impl Inst {
    #[inline(always)]
    pub(crate) fn new(target: Target, wave64: bool, row: u16, len: u8, words: [u32; 4]) -> Inst {
        let [w0, w1, w2, w3] = words.map(u64::from);
        let head =
            w0 | u64::from(len) << 32 | (target.index() as u64) << 40 | u64::from(wave64) << 48;
        Inst {
            head: NonZeroU64::new(head).unwrap_or(NonZeroU64::MIN),
            second: w1 | u64::from(row) << 32,
            tail: w2 | w3 << 32,
        }
    }

    /// The target the instruction was decoded for.
    #[inline]
    pub fn target(&self) -> Target {
        TARGETS[usize::from((self.head.get() >> 40) as u8 & 1)]
    }

    /// Whether it was decoded for 64-lane waves.
    #[inline]
    pub fn wave64(&self) -> bool {
        self.head.get() >> 48 & 1 != 0
    }

    /// The encoding of the first dword.
    #[inline]
    pub fn encoding(&self) -> Encoding {
        // Every decoded first dword has one.
        encoding_of(self.word(0)).unwrap_or(Encoding::Exp)
    }

    #[inline]
    fn row(&self) -> u16 {
        (self.second >> 32) as u16
    }

    /// Size in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        usize::from((self.head.get() >> 32) as u8)
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

    /// The encoding-specific fields, read from the dwords.
    pub fn body(&self) -> Body {
        use sop::AluForm;
        const T: &sop::SopTables = &sop::TABLES;
        let r = usize::from(self.row());
        let len = self.len() as u8;
        let [w0, w1] = [0, 1].map(|i| self.word(i));
        match self.encoding() {
            Encoding::Sop1 => Body::Salu(sop::Salu::from_raw(T, AluForm::Sop1, r, len, w0, w1)),
            Encoding::Sop2 => Body::Salu(sop::Salu::from_raw(T, AluForm::Sop2, r, len, w0, w1)),
            Encoding::Sopc => Body::Salu(sop::Salu::from_raw(T, AluForm::Sopc, r, len, w0, w1)),
            Encoding::Sopk => Body::Sopk(sop::Sopk::from_raw(T, r, len, w0, w1)),
            Encoding::Sopp => Body::Sopp(sop::Sopp::from_raw(T, self.target(), r, w0)),
            Encoding::Smem => Body::Smem(smem::Smem::from_raw(&smem::TABLES, r, w0, w1)),
            Encoding::Vop3p => Body::Vop3p(vop3p::Vop3p::from_raw(
                &vop3p::TABLES,
                r,
                self.wave64(),
                len,
                [0, 1, 2, 3].map(|i| self.word(i)),
            )),
            Encoding::Vopd => Body::Vopd(vopd::Vopd::from_raw(
                &vopd::TABLES,
                self.row(),
                len,
                [w0, w1, self.word(2)],
            )),
            Encoding::Vinterp => Body::Vinterp(interp::Vinterp::from_raw(
                interp::TABLES,
                r,
                len,
                [w0, w1, self.word(2)],
            )),
            Encoding::Ldsdir => Body::Ldsdir(interp::Ldsdir { w0 }),
            Encoding::Ds => Body::Ds(ds::Ds::from_raw(&ds::TABLES, r, w0, w1)),
            Encoding::Flat => Body::Flat(flat::Flat::from_raw(&flat::TABLES, r, w0, w1)),
            Encoding::Exp => Body::Exp(exp::Exp {
                t: &exp::TABLES,
                w0,
                w1,
            }),
            Encoding::Mimg => Body::Mimg(mimg::Mimg::from_raw(r, len, w0, w1, self.word(2))),
            Encoding::Mubuf | Encoding::Mtbuf => Body::Buf(mubuf::Buf::from_raw(
                &mubuf::TABLES,
                r,
                self.encoding() == Encoding::Mtbuf,
                len,
                w0,
                w1,
                self.word(2),
            )),
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => Body::Vop(vop::Vop::from_raw(
                &vop::TABLES,
                self.target(),
                r,
                self.wave64(),
                len,
                [w0, w1, self.word(2)],
            )),
            Encoding::Vop3 => Body::Vop3(vop3::Vop3::from_raw(
                &vop3::TABLES,
                self.row(),
                self.wave64(),
                len,
                [0, 1, 2, 3].map(|i| self.word(i)),
            )),
        }
    }

    /// Writes the instruction's bytes (re-encoded from its fields).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match &self.body() {
            Body::Salu(i) => i.encode_into(out),
            Body::Sopk(i) => i.encode_into(out),
            Body::Sopp(i) => i.encode_into(out),
            Body::Smem(i) => i.encode_into(out),
            Body::Vop3(i) => i.encode_into(out),
            Body::Vop(i) => i.encode_into(out),
            Body::Vop3p(i) => i.encode_into(out),
            Body::Vopd(i) => i.encode_into(out),
            Body::Vinterp(i) => i.encode_into(out),
            Body::Ldsdir(i) => i.encode_into(out),
            Body::Ds(i) => i.encode_into(out),
            Body::Flat(i) => i.encode_into(out),
            Body::Buf(i) => i.encode_into(out),
            Body::Exp(i) => i.encode_into(out),
            Body::Mimg(i) => i.encode_into(out),
        }
    }

    /// The instruction's bytes, re-encoded from its fields.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len());
        self.encode_into(&mut v);
        v
    }

    /// For PC-relative branches, the address the instruction at `pc`
    /// branches to.
    pub fn branch_target(&self, pc: u64) -> Option<u64> {
        match &self.body() {
            Body::Sopp(i) => i.branch_target(pc),
            Body::Sopk(i) => i.branch_target(pc),
            _ => None,
        }
    }

    /// LLVM's mnemonic, including the encoding suffix where LLVM prints one.
    pub fn mnemonic(&self) -> &'static str {
        match &self.body() {
            Body::Salu(i) => i.mnemonic(),
            Body::Sopk(i) => i.mnemonic(),
            Body::Sopp(i) => i.mnemonic(),
            Body::Smem(i) => i.mnemonic(),
            Body::Vop3(i) => i.mnemonic(),
            Body::Vop(i) => i.mnemonic(),
            Body::Vop3p(i) => i.mnemonic(),
            Body::Vopd(i) => i.mnemonic(),
            Body::Vinterp(i) => i.mnemonic(),
            Body::Ldsdir(i) => i.mnemonic(),
            Body::Ds(i) => i.mnemonic(),
            Body::Flat(i) => i.mnemonic(),
            Body::Buf(i) => i.mnemonic(),
            Body::Exp(i) => i.mnemonic(),
            Body::Mimg(i) => i.mnemonic(),
        }
    }
}

impl fmt::Display for Inst {
    /// The instruction in LLVM 22's syntax, as `llvm-objdump -d` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.body() {
            Body::Salu(i) => i.fmt(f),
            Body::Sopk(i) => i.fmt_with(f, self.target()),
            Body::Sopp(i) => i.fmt(f),
            Body::Smem(i) => i.fmt(f),
            Body::Vop3(i) => i.fmt(f),
            Body::Vop(i) => i.fmt(f),
            Body::Vop3p(i) => i.fmt(f),
            Body::Vopd(i) => i.fmt(f),
            Body::Vinterp(i) => i.fmt(f),
            Body::Ldsdir(i) => i.fmt(f),
            Body::Ds(i) => i.fmt(f),
            Body::Flat(i) => i.fmt(f),
            Body::Buf(i) => i.fmt(f),
            Body::Exp(i) => i.fmt(f),
            Body::Mimg(i) => i.fmt(f),
        }
    }
}

/// Reads the dword at `i` (little-endian), or reports truncation.
pub(crate) fn word(bytes: &[u8], i: usize) -> Result<u32, DecodeError> {
    crate::gfx9::word(bytes, i)
}

/// The encodings of the GFX11 family, identified by a word's top bits.
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
    Vopd,
    Vinterp,
    Ldsdir,
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
        0x32 => Vopd,
        0x33 => match (w >> 24) & 3 {
            0 => Vop3p,
            1 => Vinterp,
            2 => Ldsdir,
            _ => return None,
        },
        // LLVM also decodes the GFX9 VOP3P layout (0xD3 high byte) of the
        // fma_mix opcodes.
        0x34 if w >> 23 == 0x1a7 => Vop3p,
        0x35 => Vop3,
        0x36 => Ds,
        0x37 => Flat,
        0x38 => Mubuf,
        0x3a => Mtbuf,
        0x3c => Mimg,
        0x3d => Smem,
        0x3e => Exp,
        _ => return None,
    })
}

/// Decodes one instruction for 32-lane (`wave64` false) or 64-lane waves.
#[inline(always)]
pub fn decode(target: Target, wave64: bool, bytes: &[u8]) -> Result<Inst, DecodeError> {
    use sop::AluForm::{Sop1, Sop2, Sopc};
    let w0 = word(bytes, 0)?;
    let inst = |(r, len, words): sop::Raw| Inst::new(target, wave64, r, len, words);
    if w0 >> 31 == 0 {
        return vop::decode(&vop::TABLES, target, wave64, w0, bytes).map(inst);
    }
    let invalid = DecodeError::Invalid { target, word: w0 };
    let t = &sop::TABLES;
    match encoding_of(w0) {
        Some(Encoding::Sopp) => sop::Sopp::decode(t, target, w0).map(inst),
        Some(Encoding::Sop1) => sop::Salu::decode(t, target, Sop1, w0, bytes).map(inst),
        Some(Encoding::Sop2) => sop::Salu::decode(t, target, Sop2, w0, bytes).map(inst),
        Some(Encoding::Sopc) => sop::Salu::decode(t, target, Sopc, w0, bytes).map(inst),
        Some(Encoding::Sopk) => sop::Sopk::decode(t, target, w0, bytes).map(inst),
        Some(Encoding::Smem) => smem::Smem::decode(&smem::TABLES, target, w0, bytes).map(inst),
        Some(Encoding::Vop3) => vop3::decode(&vop3::TABLES, target, wave64, w0, bytes).map(inst),
        Some(Encoding::Vop3p) => vop3p::decode(&vop3p::TABLES, target, wave64, w0, bytes).map(inst),
        Some(Encoding::Vopd) => vopd::decode(&vopd::TABLES, target, wave64, w0, bytes).map(inst),
        Some(Encoding::Vinterp) => {
            interp::decode_vinterp(interp::TABLES, target, w0, bytes).map(inst)
        }
        Some(Encoding::Ldsdir) => interp::decode_ldsdir(target, wave64, w0),
        Some(Encoding::Ds) => ds::decode(&ds::TABLES, target, w0, bytes).map(inst),
        Some(Encoding::Flat) => flat::decode(&flat::TABLES, target, w0, bytes).map(inst),
        Some(Encoding::Exp) => exp::decode(w0, bytes).map(inst),
        Some(Encoding::Mimg) => mimg::decode(target, wave64, w0, bytes),
        Some(Encoding::Mubuf) => mubuf::decode(&mubuf::TABLES, target, w0, bytes, false).map(inst),
        Some(Encoding::Mtbuf) => mubuf::decode(&mubuf::TABLES, target, w0, bytes, true).map(inst),
        _ => Err(invalid),
    }
}
