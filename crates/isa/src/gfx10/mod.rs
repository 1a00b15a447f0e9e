//! The GFX10 encoding family as implemented by RDNA1's gfx1010 and RDNA2's
//! gfx1030, in 32- and 64-lane waves (RDNA ISA manuals, "Microcode
//! formats").
//!
//! GFX10 lays out most encodings as GFX11 does, with its own opcodes: the
//! scalar ALU (`gfx11::sop`: GFX10's `s_waitcnt` layout and `sendmsg`
//! texts), VOP1/VOP2/VOPC with DPP16 and DPP8 (`gfx11::vop`, plus GFX10's
//! SDWA), VOP3 (`gfx11::vop3`: literals, no DPP, the interpolation
//! opcodes), VOP3P (`gfx11::vop3p`) and DS (`gfx11::ds`), each with GFX10's
//! tables (learned from LLVM 22 by `scripts/gen/gfx11/*.py gfx10`). EXP and
//! VINTRP keep GFX9's fields (`gfx9::exp`, `gfx9::vintrp`) under other top
//! bits.

pub mod mimg;
pub mod tables;

use crate::gfx9::exp::Exp;
use crate::gfx9::vintrp::Vintrp;
use crate::gfx11::ds::{self, DsTables};
use crate::gfx11::flat::{self, FlatTables};
use crate::gfx11::mubuf::{self, BufTables};
use crate::gfx11::operand::Sregs;
use crate::gfx11::smem::{self, SmemTables};
use crate::gfx11::sop::{self, AluForm, Raw, SopTables};
use crate::gfx11::vop::{self, VopTables};
use crate::gfx11::vop3::{self, Vop3Tables};
use crate::gfx11::vop3p::{self, Vop3pTables};
use crate::{DecodeError, Target};
use std::fmt;

/// The GFX10 targets, in table-column order ([`Target::index`]).
pub const TARGETS: [Target; 2] = [Target::Gfx1010, Target::Gfx1030];

/// GFX10's scalar ALU tables.
pub static SOP: SopTables = sop::sop_tables!(sop_tab, Gfx10);
use tables::sop as sop_tab;

/// GFX10's VOP1, VOP2 and VOPC tables.
pub static VOP: VopTables = VopTables::new(tables::vop::VOP).gfx10(tables::sdwa::SDWA);

/// GFX10's VOP3 tables.
pub static VOP3: Vop3Tables =
    Vop3Tables::new(tables::vop3::VOP3, tables::vop3::VOP3_FAKE16).gfx10();

/// GFX10's VOP3P tables.
pub static VOP3P: Vop3pTables = Vop3pTables::new(tables::vop3p::VOP3P).gfx10();

/// GFX10's SMEM opcodes: GFX11's fields with glc at bit 16 and dlc at 14.
pub static SMEM: SmemTables = SmemTables::new(tables::smem::SMEM, 16, 14, Sregs::Gfx10);

/// GFX10's FLAT, SCRATCH and GLOBAL opcodes and field positions.
pub static FLAT: FlatTables = FlatTables {
    ops: &tables::flat::FLAT_OPS,
    rows: [&tables::flat::FLAT_GFX1010, &tables::flat::FLAT_GFX1030],
    saddr: &tables::flat::SADDR,
    glc: 16,
    slc: 17,
    dlc: 12,
    seg: 14,
    offset_bits: 12,
    lds: Some(13),
    off: 0x7d,
    sve: false,
};

/// GFX10's MUBUF and MTBUF opcodes and field positions.
pub static BUF: BufTables = BufTables {
    ops: &tables::mubuf::BUF_OPS,
    mubuf: [&tables::mubuf::MUBUF_GFX1010, &tables::mubuf::MUBUF_GFX1030],
    mtbuf: [&tables::mubuf::MTBUF_GFX1010, &tables::mubuf::MTBUF_GFX1030],
    soffset: &tables::mubuf::SOFFSET,
    formats: &tables::mubuf::FORMATS,
    glc: 14,
    slc: 54,
    dlc: 15,
    tfe: 55,
    offen: 12,
    idxen: 13,
    lds: Some(16),
    sregs: Sregs::Gfx10,
    mubuf_op: (18, 8),
    mtbuf_op: (16, 3, Some(53)),
};

/// GFX10's DS opcodes.
pub static DS: DsTables = DsTables {
    ops: &tables::ds::DS_OPS,
    rows: [&tables::ds::DS_GFX1010, &tables::ds::DS_GFX1030],
};

/// The encodings of the GFX10 family, identified by a word's top bits.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
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

/// The encoding a first instruction dword belongs to (`None`: none).
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
        0x32 => Vintrp,
        0x33 if (w >> 24) & 3 == 0 => Vop3p,
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

/// A decoded GFX10 instruction: its target and wave size, the row of its
/// opcode in its encoding's table and its dwords.
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct Inst {
    target: Target,
    wave64: bool,
    len: u8,
    enc: Encoding,
    row: u16,
    words: [u32; 4],
    /// A fifth dword: MIMG's third NSA dword.
    fifth: u32,
}

impl fmt::Debug for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inst")
            .field("target", &self.target)
            .field("wave64", &self.wave64)
            .field("encoding", &self.enc)
            .field("row", &self.row)
            .field("words", &&self.words[..self.len() / 4])
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
    Flat(flat::Flat),
    /// MUBUF and MTBUF.
    Buf(mubuf::Buf),
    Mimg(mimg::Mimg),
    /// VOP1, VOP2 and VOPC in their 32-bit, SDWA and DPP forms.
    Vop(vop::Vop),
    Vop3(vop3::Vop3),
    Vop3p(vop3p::Vop3p),
    Vintrp(Vintrp),
    Ds(ds::Ds),
    Exp(Exp),
}

impl Inst {
    fn new(target: Target, wave64: bool, enc: Encoding, (row, len, words): Raw) -> Inst {
        Inst {
            target,
            wave64,
            len,
            enc,
            row,
            words,
            fifth: 0,
        }
    }

    /// The target the instruction was decoded for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Whether it was decoded for 64-lane waves.
    pub fn wave64(&self) -> bool {
        self.wave64
    }

    /// The encoding of the first dword.
    pub fn encoding(&self) -> Encoding {
        self.enc
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Never true: every instruction has at least one dword.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The encoding-specific fields, read from the dwords.
    pub fn body(&self) -> Body {
        let r = usize::from(self.row);
        let [w0, w1, ..] = self.words;
        let salu = |form| Body::Salu(sop::Salu::from_raw(&SOP, form, r, self.len, w0, w1));
        match self.enc {
            Encoding::Sop1 => salu(AluForm::Sop1),
            Encoding::Sop2 => salu(AluForm::Sop2),
            Encoding::Sopc => salu(AluForm::Sopc),
            Encoding::Sopk => Body::Sopk(sop::Sopk::from_raw(&SOP, r, self.len, w0, w1)),
            Encoding::Sopp => Body::Sopp(sop::Sopp::from_raw(&SOP, self.target, r, w0)),
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => Body::Vop(vop::Vop::from_raw(
                &VOP,
                self.target,
                r,
                self.wave64,
                self.len,
                [w0, w1, self.words[2]],
            )),
            Encoding::Vop3 => Body::Vop3(vop3::Vop3::from_raw(
                &VOP3,
                self.row,
                self.wave64,
                self.len,
                self.words,
            )),
            Encoding::Vop3p => Body::Vop3p(vop3p::Vop3p::from_raw(
                &VOP3P,
                r,
                self.wave64,
                self.len,
                self.words,
            )),
            Encoding::Vintrp => Body::Vintrp(Vintrp {
                name: tables::vintrp::VINTRP[r & 3].unwrap_or(""),
                w0,
            }),
            Encoding::Ds => Body::Ds(ds::Ds::from_raw(&DS, r, w0, w1)),
            Encoding::Exp => Body::Exp(Exp {
                targets: &tables::exp::TARGETS,
                w0,
                w1,
            }),
            Encoding::Smem => Body::Smem(smem::Smem::from_raw(&SMEM, r, w0, w1)),
            Encoding::Flat => Body::Flat(flat::Flat::from_raw(&FLAT, r, w0, w1)),
            Encoding::Mubuf | Encoding::Mtbuf => Body::Buf(mubuf::Buf::from_raw(
                &BUF,
                r,
                self.enc == Encoding::Mtbuf,
                self.len,
                w0,
                w1,
                self.words[2],
            )),
            Encoding::Mimg => Body::Mimg(mimg::Mimg::from_raw(
                r,
                w0,
                w1,
                [self.words[2], self.words[3], self.fifth],
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
            Body::Flat(i) => i.encode_into(out),
            Body::Buf(i) => i.encode_into(out),
            Body::Mimg(i) => i.encode_into(out),
            Body::Vop(i) => i.encode_into(out),
            Body::Vop3(i) => i.encode_into(out),
            Body::Vop3p(i) => i.encode_into(out),
            Body::Vintrp(i) => i.encode_into(out),
            Body::Ds(i) => i.encode_into(out),
            Body::Exp(i) => i.encode_into(out),
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

    /// LLVM's mnemonic.
    pub fn mnemonic(&self) -> &'static str {
        match &self.body() {
            Body::Salu(i) => i.mnemonic(),
            Body::Sopk(i) => i.mnemonic(),
            Body::Sopp(i) => i.mnemonic(),
            Body::Smem(i) => i.mnemonic(),
            Body::Flat(i) => i.mnemonic(),
            Body::Buf(i) => i.mnemonic(),
            Body::Mimg(i) => i.mnemonic(),
            Body::Vop(i) => i.mnemonic(),
            Body::Vop3(i) => i.mnemonic(),
            Body::Vop3p(i) => i.mnemonic(),
            Body::Vintrp(i) => i.name,
            Body::Ds(i) => i.mnemonic(),
            Body::Exp(i) => i.mnemonic(),
        }
    }
}

impl fmt::Display for Inst {
    /// The instruction in LLVM 22's syntax, as `llvm-objdump -d` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.body() {
            Body::Salu(i) => i.fmt(f),
            Body::Sopk(i) => i.fmt_with(f, self.target),
            Body::Sopp(i) => i.fmt(f),
            Body::Smem(i) => i.fmt(f),
            Body::Flat(i) => i.fmt(f),
            Body::Buf(i) => i.fmt(f),
            Body::Mimg(i) => i.fmt(f),
            Body::Vop(i) => i.fmt(f),
            Body::Vop3(i) => i.fmt(f),
            Body::Vop3p(i) => i.fmt(f),
            Body::Vintrp(i) => i.fmt(f),
            Body::Ds(i) => i.fmt(f),
            Body::Exp(i) => i.fmt(f),
        }
    }
}

/// Decodes one instruction for 32-lane (`wave64` false) or 64-lane waves;
/// targets of other families give [`DecodeError::Unsupported`].
pub fn decode(target: Target, wave64: bool, bytes: &[u8]) -> Result<Inst, DecodeError> {
    use AluForm::{Sop1, Sop2, Sopc};
    if target.family() != crate::Family::Gfx10 {
        return Err(DecodeError::Unsupported { target });
    }
    let w0 = crate::gfx9::word(bytes, 0)?;
    let invalid = DecodeError::Invalid { target, word: w0 };
    let Some(enc) = encoding_of(w0) else {
        return Err(invalid);
    };
    let raw = match enc {
        Encoding::Sopp => sop::Sopp::decode(&SOP, target, w0),
        Encoding::Sop1 => sop::Salu::decode(&SOP, target, Sop1, w0, bytes),
        Encoding::Sop2 => sop::Salu::decode(&SOP, target, Sop2, w0, bytes),
        Encoding::Sopc => sop::Salu::decode(&SOP, target, Sopc, w0, bytes),
        Encoding::Sopk => sop::Sopk::decode(&SOP, target, w0, bytes),
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => {
            vop::decode(&VOP, target, wave64, w0, bytes)
        }
        Encoding::Vop3 => vop3::decode(&VOP3, target, wave64, w0, bytes),
        Encoding::Vop3p => vop3p::decode(&VOP3P, target, wave64, w0, bytes),
        Encoding::Vintrp => match tables::vintrp::VINTRP[((w0 >> 16) & 3) as usize] {
            Some(_) => Ok((((w0 >> 16) & 3) as u16, 4, [w0, 0, 0, 0])),
            None => Err(invalid),
        },
        Encoding::Ds => ds::decode(&DS, target, w0, bytes),
        Encoding::Exp => crate::gfx9::word(bytes, 1).map(|w1| (0, 8, [w0, w1, 0, 0])),
        Encoding::Smem => smem::Smem::decode(&SMEM, target, w0, bytes),
        Encoding::Flat => flat::decode(&FLAT, target, w0, bytes),
        Encoding::Mubuf => mubuf::decode(&BUF, target, w0, bytes, false),
        Encoding::Mtbuf => mubuf::decode(&BUF, target, w0, bytes, true),
        Encoding::Mimg => {
            let (raw, fifth) = mimg::decode(target, w0, bytes)?;
            return Ok(Inst {
                fifth,
                ..Inst::new(target, wave64, enc, raw)
            });
        }
    }?;
    Ok(Inst::new(target, wave64, enc, raw))
}
