//! The GFX12 encoding family as implemented by RDNA4's gfx1201, in 32- and
//! 64-lane waves (RDNA4 ISA manual, "Microcode formats").
//!
//! The encodings whose field layouts GFX12 shares with GFX11 decode,
//! re-encode and print through the gfx11 modules with GFX12's own tables
//! (learned from LLVM 22 by `scripts/gen/gfx11/*.py gfx12`): the scalar
//! ALU (`gfx11::sop`: the split `s_wait_*` counters, `s_wait_alu`,
//! barriers), VOP1/VOP2/VOPC and VOP3 (`gfx11::vop`, `gfx11::vop3`: DPP16,
//! DPP8, literals; `byte_sel`, the
//! pseudo-scalar `v_s_*` opcodes), VOP3P (`gfx11::vop3p`: WMMA with
//! op_sel_hi fixed at 1, SWMMAC with `index_key`), VOPD, DS, VINTERP and
//! export. GFX12's new layouts have modules here: SMEM (`smem.rs`),
//! VFLAT/VSCRATCH/VGLOBAL (`vflat.rs`), VBUFFER (`vbuffer.rs`), VIMAGE and
//! VSAMPLE (`vimage.rs`), VDSDIR (`vdsdir.rs`), with the th/scope
//! cache-policy printer they share (`cpol.rs`); their tables come from
//! `scripts/gen/gfx12/*.py`.
//!
//! 16-bit VALU operands have two readings, as LLVM has two modes for
//! them ([`True16`](crate::True16)): LLVM 22's default for gfx1201 is
//! fake-16-bit (32-bit register names, v0-v127, a register above v127
//! annotated as invalid or rejected), `+real-true16` names VGPR halves
//! (`v1.l`, `v1.h`: bit 7 of an 8-bit VGPR field or an op_sel bit selects
//! the half). The bits mean the same to the hardware; the modes differ in
//! the words they accept and in how they print them. Real-true16 accepts
//! every word fake-16-bit does and names the half the hardware reads, so
//! execution decodes in it. The VOP1/VOP2/VOPC, VOP3 and VINTERP tables
//! differ between the modes (`tables::t16`); the others are the same.

pub mod cpol;
pub mod smem;
pub mod tables;
pub mod vbuffer;
pub mod vdsdir;
pub mod vflat;
pub mod vimage;

use crate::gfx11::ds::{self, DsTables};
use crate::gfx11::exp::{self, ExpTables};
use crate::gfx11::interp;
use crate::gfx11::sop::{self, AluForm, Raw, SopTables};
use crate::gfx11::vop::{self, VopTables};
use crate::gfx11::vop3::{self, Vop3Tables};
use crate::gfx11::vop3p::{self, Vop3pTables};
use crate::gfx11::vopd::{self, VopdTables};
use crate::{DecodeError, Target};
use std::fmt;

/// GFX12's scalar ALU tables.
pub static SOP: SopTables = sop::sop_tables!(sop_tab);
use tables::sop as sop_tab;

/// GFX12's VOP1, VOP2 and VOPC tables.
pub static VOP: VopTables = VopTables::new(tables::vop::VOP);

/// GFX12's VOP3 tables.
pub static VOP3: Vop3Tables = Vop3Tables::new(tables::vop3::VOP3, tables::vop3::VOP3_FAKE16);

/// GFX12's VOP1, VOP2 and VOPC tables in real-true16 mode.
pub static VOP_T16: VopTables = VopTables::new(tables::t16::vop::VOP);

/// GFX12's VOP3 tables in real-true16 mode.
pub static VOP3_T16: Vop3Tables =
    Vop3Tables::new(tables::t16::vop3::VOP3, tables::t16::vop3::VOP3_FAKE16);

/// The tables of the encodings whose rows depend on the 16-bit operand
/// mode.
struct ModeTables {
    vop: &'static VopTables,
    vop3: &'static Vop3Tables,
    vinterp: &'static [interp::InterpRow],
}

/// Per mode: LLVM 22's default (fake-16-bit), real-true16.
static MODE_TABLES: [ModeTables; 2] = [
    ModeTables {
        vop: &VOP,
        vop3: &VOP3,
        vinterp: tables::vinterp::VINTERP,
    },
    ModeTables {
        vop: &VOP_T16,
        vop3: &VOP3_T16,
        vinterp: tables::t16::vinterp::VINTERP,
    },
];

/// GFX12's VOP3P tables (packed math, dot products, WMMA, SWMMAC).
pub static VOP3P: Vop3pTables = Vop3pTables::new(tables::vop3p::VOP3P);

/// GFX12's DS opcodes.
pub static DS: DsTables = DsTables {
    ops: &tables::ds::DS_OPS,
    rows: [&tables::ds::DS_GFX1201, &tables::ds::DS_GFX1201],
};

/// GFX12's export mnemonic and targets.
pub static EXP: ExpTables = ExpTables {
    mnemonic: tables::exp::MNEMONIC,
    targets: &tables::exp::TARGETS,
};

/// GFX12's VOPD X and Y opcodes.
pub static VOPD: VopdTables = VopdTables {
    x: tables::vopd::VOPD_X,
    y: tables::vopd::VOPD_Y,
};

/// The encodings of the GFX12 family, identified by a word's top bits.
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
    Vopd,
    Ds,
    Vinterp,
    Vdsdir,
    Export,
    /// VFLAT, VSCRATCH and VGLOBAL.
    Vflat,
    Vbuffer,
    Vimage,
    Vsample,
}

/// The encoding a first instruction dword belongs to (`None`: none). A
/// 0xD3 word with bit 23 set is named VOP3P (the GFX9-layout fma_mix) but
/// decodes as VIMAGE where LLVM reads it so ([`Inst::encoding`]).
pub fn encoding_of(w: u32) -> Option<Encoding> {
    use Encoding::*;
    if w >> 31 == 0 {
        return Some(match w >> 25 {
            0x3f => Vop1,
            0x3e => Vopc,
            _ => Vop2,
        });
    }
    if w >> 30 != 0b10 {
        return match w >> 26 {
            0x31 => Some(Vbuffer),
            0x32 => Some(Vopd),
            0x33 => match (w >> 24) & 3 {
                0 => Some(Vop3p),
                1 => Some(Vinterp),
                2 => Some(Vdsdir),
                _ => None,
            },
            // LLVM also decodes the GFX9 VOP3P layout (0xD3 high byte) of
            // the fma_mix opcodes.
            0x34 if w >> 23 == 0x1a7 => Some(Vop3p),
            0x34 => Some(Vimage),
            0x39 => Some(Vsample),
            0x35 => Some(Vop3),
            0x36 => Some(Ds),
            0x3b => Some(Vflat),
            0x3d => Some(Smem),
            0x3e => Some(Export),
            _ => None,
        };
    }
    Some(match w >> 23 {
        0x17d => Sop1,
        0x17e => Sopc,
        0x17f => Sopp,
        _ if w >> 28 == 0b1011 => Sopk,
        _ => Sop2,
    })
}

/// A decoded GFX12 instruction: its target and wave size, the row of its
/// opcode in its encoding's table and its dwords.
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct Inst {
    target: Target,
    wave64: bool,
    /// Decoded in real-true16 mode (VGPR halves named `.l`/`.h`).
    real_true16: bool,
    len: u8,
    /// The encoding it decoded as (a 0xD3 word with bit 23 set is VIMAGE
    /// where that decodes, else VOP3P's GFX9-layout fma_mix).
    enc: Encoding,
    row: u16,
    words: [u32; 4],
}

impl fmt::Debug for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inst")
            .field("target", &self.target)
            .field("wave64", &self.wave64)
            .field("real_true16", &self.real_true16)
            .field("encoding", &self.encoding())
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
    /// VOP1, VOP2 and VOPC in their 32-bit and DPP forms.
    Vop(vop::Vop),
    Vop3(vop3::Vop3),
    Vop3p(vop3p::Vop3p),
    Vopd(vopd::Vopd),
    Ds(ds::Ds),
    Vinterp(interp::Vinterp),
    Vdsdir(vdsdir::Vdsdir),
    Exp(exp::Exp),
    Flat(vflat::Flat),
    Buf(vbuffer::Buf),
    /// VIMAGE and VSAMPLE.
    Image(vimage::Image),
}

impl Inst {
    fn new(
        target: Target,
        wave64: bool,
        real_true16: bool,
        enc: Encoding,
        (row, len, words): Raw,
    ) -> Inst {
        Inst {
            target,
            wave64,
            real_true16,
            len,
            enc,
            row,
            words,
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

    /// Whether it was decoded in LLVM's real-true16 mode.
    pub fn real_true16(&self) -> bool {
        self.real_true16
    }

    fn mode(&self) -> &'static ModeTables {
        &MODE_TABLES[usize::from(self.real_true16)]
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
        match self.encoding() {
            Encoding::Sop1 => salu(AluForm::Sop1),
            Encoding::Sop2 => salu(AluForm::Sop2),
            Encoding::Sopc => salu(AluForm::Sopc),
            Encoding::Sopk => Body::Sopk(sop::Sopk::from_raw(&SOP, r, self.len, w0, w1)),
            Encoding::Sopp => Body::Sopp(sop::Sopp::from_raw(&SOP, self.target, r, w0)),
            Encoding::Smem => Body::Smem(smem::Smem::from_raw(r, w0, w1)),
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => Body::Vop(vop::Vop::from_raw(
                self.mode().vop,
                self.target,
                r,
                self.wave64,
                self.len,
                [w0, w1, self.words[2]],
            )),
            Encoding::Vop3p => Body::Vop3p(vop3p::Vop3p::from_raw(
                &VOP3P,
                r,
                self.wave64,
                self.len,
                self.words,
            )),
            Encoding::Vinterp => Body::Vinterp(interp::Vinterp::from_raw(
                self.mode().vinterp,
                r,
                self.len,
                [w0, w1, self.words[2]],
            )),
            Encoding::Vdsdir => Body::Vdsdir(vdsdir::Vdsdir { w0 }),
            Encoding::Export => Body::Exp(exp::Exp { t: &EXP, w0, w1 }),
            Encoding::Vflat => Body::Flat(vflat::Flat::from_raw(
                r,
                self.wave64,
                [w0, w1, self.words[2]],
            )),
            Encoding::Vbuffer => Body::Buf(vbuffer::Buf::from_raw(r, [w0, w1, self.words[2]])),
            Encoding::Vimage | Encoding::Vsample => {
                Body::Image(vimage::Image::from_raw(r, self.len, self.words))
            }
            Encoding::Ds => Body::Ds(ds::Ds::from_raw(&DS, r, w0, w1)),
            Encoding::Vopd => Body::Vopd(vopd::Vopd::from_raw(
                &VOPD,
                self.row,
                self.len,
                [w0, w1, self.words[2]],
            )),
            Encoding::Vop3 => Body::Vop3(vop3::Vop3::from_raw(
                self.mode().vop3,
                self.row,
                self.wave64,
                self.len,
                self.words,
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
            Body::Vop(i) => i.encode_into(out),
            Body::Vop3(i) => i.encode_into(out),
            Body::Vop3p(i) => i.encode_into(out),
            Body::Vopd(i) => i.encode_into(out),
            Body::Ds(i) => i.encode_into(out),
            Body::Vinterp(i) => i.encode_into(out),
            Body::Vdsdir(i) => i.encode_into(out),
            Body::Exp(i) => i.encode_into(out),
            Body::Flat(i) => i.encode_into(out),
            Body::Buf(i) => i.encode_into(out),
            Body::Image(i) => i.encode_into(out),
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
            Body::Vop(i) => i.mnemonic(),
            Body::Vop3(i) => i.mnemonic(),
            Body::Vop3p(i) => i.mnemonic(),
            Body::Vopd(i) => i.mnemonic(),
            Body::Ds(i) => i.mnemonic(),
            Body::Vinterp(i) => i.mnemonic(),
            Body::Vdsdir(i) => i.mnemonic(),
            Body::Exp(i) => i.mnemonic(),
            Body::Flat(i) => i.mnemonic(),
            Body::Buf(i) => i.mnemonic(),
            Body::Image(i) => i.mnemonic(),
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
            Body::Vop(i) => i.fmt(f),
            Body::Vop3(i) => i.fmt(f),
            Body::Vop3p(i) => i.fmt(f),
            Body::Vopd(i) => i.fmt(f),
            Body::Ds(i) => i.fmt(f),
            Body::Vinterp(i) => i.fmt(f),
            Body::Vdsdir(i) => i.fmt(f),
            Body::Exp(i) => i.fmt(f),
            Body::Flat(i) => i.fmt(f),
            Body::Buf(i) => i.fmt(f),
            Body::Image(i) => i.fmt(f),
        }
    }
}

/// Decodes one instruction for 32-lane (`wave64` false) or 64-lane waves
/// in LLVM 22's default mode for gfx1201 (fake-16-bit operands); targets
/// of other families give [`DecodeError::Unsupported`].
pub fn decode(target: Target, wave64: bool, bytes: &[u8]) -> Result<Inst, DecodeError> {
    decode_mode(target, wave64, false, bytes)
}

/// [`decode`] in LLVM's real-true16 mode (`real_true16`) or its default.
pub fn decode_mode(
    target: Target,
    wave64: bool,
    real_true16: bool,
    bytes: &[u8],
) -> Result<Inst, DecodeError> {
    use AluForm::{Sop1, Sop2, Sopc};
    let mode = &MODE_TABLES[usize::from(real_true16)];
    if target.family() != crate::Family::Gfx12 {
        return Err(DecodeError::Unsupported { target });
    }
    let w0 = crate::gfx9::word(bytes, 0)?;
    let Some(mut enc) = encoding_of(w0) else {
        return Err(DecodeError::Invalid { target, word: w0 });
    };
    let raw = match Some(enc) {
        Some(Encoding::Sopp) => sop::Sopp::decode(&SOP, target, w0),
        Some(Encoding::Sop1) => sop::Salu::decode(&SOP, target, Sop1, w0, bytes),
        Some(Encoding::Sop2) => sop::Salu::decode(&SOP, target, Sop2, w0, bytes),
        Some(Encoding::Sopc) => sop::Salu::decode(&SOP, target, Sopc, w0, bytes),
        Some(Encoding::Sopk) => sop::Sopk::decode(&SOP, target, w0, bytes),
        Some(Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc) => {
            vop::decode(mode.vop, target, wave64, w0, bytes)
        }
        Some(Encoding::Vop3) => vop3::decode(mode.vop3, target, wave64, w0, bytes),
        // LLVM tries a 0xD3 word with bit 23 set as VIMAGE first, then as
        // the GFX9-layout fma_mix.
        Some(Encoding::Vop3p) if w0 >> 26 == 0x34 => match vimage::decode(target, w0, bytes) {
            Ok(raw) => {
                enc = Encoding::Vimage;
                Ok(raw)
            }
            Err(_) => vop3p::decode(&VOP3P, target, wave64, w0, bytes),
        },
        Some(Encoding::Vop3p) => vop3p::decode(&VOP3P, target, wave64, w0, bytes),
        Some(Encoding::Vopd) => vopd::decode(&VOPD, target, wave64, w0, bytes),
        Some(Encoding::Ds) => ds::decode(&DS, target, w0, bytes),
        Some(Encoding::Vinterp) => interp::decode_vinterp(mode.vinterp, target, w0, bytes),
        Some(Encoding::Vdsdir) => vdsdir::decode(target, w0).map(|()| (0, 4, [w0, 0, 0, 0])),
        Some(Encoding::Export) => exp::decode(w0, bytes),
        Some(Encoding::Vflat) => {
            vflat::decode(target, w0, bytes).map(|(r, [w0, w1, w2])| (r, 12, [w0, w1, w2, 0]))
        }
        Some(Encoding::Vbuffer) => {
            vbuffer::decode(target, w0, bytes).map(|(r, [w0, w1, w2])| (r, 12, [w0, w1, w2, 0]))
        }
        Some(Encoding::Vimage | Encoding::Vsample) => vimage::decode(target, w0, bytes),
        Some(Encoding::Smem) => {
            smem::Smem::decode(target, w0, bytes).map(|(r, w1)| (r, 8, [w0, w1, 0, 0]))
        }
        None => Err(DecodeError::Invalid { target, word: w0 }),
    }?;
    Ok(Inst::new(target, wave64, real_true16, enc, raw))
}
