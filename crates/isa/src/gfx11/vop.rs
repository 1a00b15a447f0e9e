//! The GFX11 32-bit vector ALU encodings VOP1, VOP2 and VOPC (`_e32`, with
//! a literal when src0 is 255) and their DPP forms: DPP16 (src0 0xFA, a
//! second dword with src0, the control, bound_ctrl, fi, neg/abs and the row
//! and bank masks) and DPP8 (src0 0xE9, or 0xEA for fi:1; a second dword
//! with src0 and eight 3-bit lane selects). RDNA3 ISA manual, "VOP1",
//! "VOP2", "VOPC", "DPP16", "DPP8".
//!
//! VOP1: 0b0111111 31:25, vdst 24:17, op 16:9, src0 8:0.
//! VOP2: 0 31, op 30:25, vdst 24:17, vsrc1 16:9, src0 8:0.
//! VOPC: 0b0111110 31:25, op 24:17, vsrc1 16:9, src0 8:0.
//!
//! A 16-bit operand names a VGPR half: bit 7 of an 8-bit VGPR field (or of
//! src0's register number) selects `.h`, so only v0..v127 are reachable.

use super::operand::{Operand, Reg, RegFile, Sregs};
use super::sop::Raw;
use super::tables::vop::VOP;
use super::valu::{Slot, fmt_mod_src, fmt_omod, fmt_sdst, fmt_v16, fmt_vgpr};
use super::vop3::{NO_CONST, PLAIN, REJECT_CONST, Src};
use crate::gfx9::operand::F32_INLINE;
use crate::gfx9::sop::Warnings;
use crate::{DecodeError, Target};
use std::fmt;

/// Which 32-bit encoding an opcode belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Vop1,
    Vop2,
    Vopc,
}

/// A printed operand of a 32-bit or DPP form, in order.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// The vdst field.
    Dst,
    /// The implicit `vcc_lo` (wave32) or `vcc` (wave64) LLVM prints for
    /// carries and VOPC destinations.
    Vcc,
    Src0,
    /// The vsrc1 VGPR field.
    Src1,
    /// The literal constant of `v_fmamk`/`v_fmaak`.
    K,
}

/// The destination of a 32-bit form.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VDst {
    None,
    V(u8),
    V16,
    S(u8),
}

/// One VOP1, VOP2 or VOPC opcode.
#[derive(Debug, PartialEq, Eq)]
pub struct VopRow {
    pub kind: Kind,
    pub op: u8,
    pub tg: u8,
    /// The mnemonic of the 32-bit form, as printed (`v_add_f32_e32`).
    pub name: &'static str,
    /// The mnemonic of the DPP16 form ("": none).
    pub dpp: &'static str,
    /// The mnemonic of the DPP8 form ("": none).
    pub dpp8: &'static str,
    pub roles: &'static [Role],
    pub dst: VDst,
    pub src0: Option<Src>,
    /// vsrc1: width in dwords, 16-bit half.
    pub src1: Option<(u8, bool)>,
    /// No operands (`v_nop`, `v_pipeflush`, `v_illegal`): the fields must
    /// be zero (VOP1: vdst only).
    pub bare: bool,
    /// DPP16 neg/abs bits LLVM rejects (bit 0 src0 neg, 1 src0 abs, 2 src1
    /// neg, 3 src1 abs) and prints; `dpp_mods` bit 4 ([`ABS_AFTER_VCC`]):
    /// LLVM closes src1's abs bar after the `vcc` that follows it.
    pub dpp_zero: u8,
    pub dpp_mods: u8,
    /// LLVM reads the DPP8 selector through its source-operand decoder
    /// (see [`dpp8_sel`]).
    pub dpp8_src: bool,
    /// Fake-16-bit operands (GFX12) above v127: bit 0 src0 and bit 1 vsrc1
    /// are printed with LLVM's register-class note, bit 3 a vdst makes LLVM
    /// reject the word.
    pub lo128: u8,
}

/// [`VopRow::dpp_mods`]: src1's abs bar closes after the `vcc` operand.
pub const ABS_AFTER_VCC: u8 = 16;

/// One family's VOP1/VOP2/VOPC rows (a generated `tables/vop.rs`) with the
/// row index per (target bit, kind, opcode): VOP1 at 0, VOP2 at 256, VOPC
/// at 512; `u16::MAX` for none. GFX10 adds its SDWA rows.
pub struct VopTables {
    pub rows: &'static [VopRow],
    idx: [[u16; 768]; 2],
    /// The family's numbering of m0 and null.
    pub sregs: Sregs,
    /// The SDWA forms (GFX10; empty for GFX11 and GFX12) and their index,
    /// as [`VopTables::rows`]'.
    pub sdwa: &'static [sdwa::SdwaRow],
    sdwa_idx: [[u16; 768]; 2],
}

/// Where a (kind, opcode) sits in a row of a [`VopTables`] index.
const fn slot(kind: Kind, op: u8) -> usize {
    (match kind {
        Kind::Vop1 => 0,
        Kind::Vop2 => 256,
        Kind::Vopc => 512,
    }) + op as usize
}

impl VopTables {
    pub const fn new(rows: &'static [VopRow]) -> VopTables {
        let mut t = [[u16::MAX; 768]; 2];
        let mut i = rows.len();
        while i > 0 {
            i -= 1;
            let r = &rows[i];
            let mut k = 0;
            while k < 2 {
                if r.tg & (1 << k) != 0 {
                    t[k][slot(r.kind, r.op)] = i as u16;
                }
                k += 1;
            }
        }
        VopTables {
            rows,
            idx: t,
            sregs: Sregs::Gfx11,
            sdwa: &[],
            sdwa_idx: [[u16::MAX; 768]; 2],
        }
    }

    /// The tables with GFX10's numbering of m0 and null and its SDWA rows.
    pub const fn gfx10(self, sdwa: &'static [sdwa::SdwaRow]) -> VopTables {
        let mut t = [[u16::MAX; 768]; 2];
        let mut i = sdwa.len();
        while i > 0 {
            i -= 1;
            let r = &sdwa[i];
            let mut k = 0;
            while k < 2 {
                if r.tg & (1 << k) != 0 {
                    t[k][slot(r.kind, r.op)] = i as u16;
                }
                k += 1;
            }
        }
        VopTables {
            sregs: Sregs::Gfx10,
            sdwa,
            sdwa_idx: t,
            ..self
        }
    }

    /// The SDWA row of a (kind, opcode) on the target of index `t`.
    fn sdwa_row(&self, t: usize, kind: Kind, op: usize) -> Option<&'static sdwa::SdwaRow> {
        let i = *self.sdwa_idx.get(t)?.get(slot(kind, 0) + op)?;
        self.sdwa.get(usize::from(i))
    }
}

/// GFX10's SDWA forms (src0 0xF9): a second dword with src0 7:0, dst_sel
/// 10:8, dst_unused 12:11, clamp 13, omod 15:14, src0_sel 18:16, src0
/// sext 19, neg 20, abs 21, src0 is an SGPR or constant 23, src1_sel
/// 26:24, src1 sext 27, neg 28, abs 29, vsrc1 is an SGPR or constant 31;
/// VOPC: an SGPR destination 14:8 when bit 15 is set (else vcc). RDNA ISA
/// manual, "VOP_SDWA".
pub mod sdwa {
    use super::Kind;
    use crate::gfx11::operand::ValType;

    /// src0 takes `sext` (an integer operand).
    pub const S0_SEXT: u16 = 1;
    /// src0 takes `neg`/`abs` (a float operand).
    pub const S0_NEG: u16 = 2;
    pub const S1_SEXT: u16 = 4;
    pub const S1_NEG: u16 = 8;
    pub const CLAMP: u16 = 16;
    pub const OMOD: u16 = 32;
    /// No destination select: dst_sel must be DWORD, dst_unused is ignored
    /// and neither is printed.
    pub const NO_DST_SEL: u16 = 64;
    /// src0's / src1's modifier bits are accepted but not printed.
    pub const S0_HIDDEN: u16 = 128;
    pub const S1_HIDDEN: u16 = 256;
    /// No operands (`v_nop`): an SDWA dword with no select or modifier
    /// bits set keeps the marker's 8-byte form, else it is 4 bytes.
    pub const BARE: u16 = 512;

    /// The SDWA form of one opcode.
    #[derive(Debug, PartialEq, Eq)]
    pub struct SdwaRow {
        pub kind: Kind,
        pub op: u8,
        pub tg: u8,
        pub name: &'static str,
        pub flags: u16,
        /// How constants print in src0 and src1.
        pub ty: [ValType; 2],
    }

    /// The select names of dst_sel, src0_sel and src1_sel (7 crashes LLVM
    /// 22; not decoded).
    pub(crate) const SEL: [&str; 7] = [
        "BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD",
    ];
    pub(crate) const UNUSED: [&str; 4] =
        ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "UNUSED_PAD"];
}

/// GFX11's tables.
pub static TABLES: VopTables = VopTables::new(VOP);

/// Which form a word is in, from its src0 field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Form {
    E32,
    Dpp16,
    Dpp8,
    /// GFX10's SDWA (src0 0xF9).
    Sdwa,
}

fn form_of(w0: u32) -> Form {
    match w0 & 0x1ff {
        0xfa => Form::Dpp16,
        0xe9 | 0xea => Form::Dpp8,
        _ => Form::E32,
    }
}

/// The kind and opcode of a first dword whose top bit is clear.
fn kind_op(w0: u32) -> (Kind, usize) {
    match w0 >> 25 {
        0x3f => (Kind::Vop1, ((w0 >> 9) & 0xff) as usize),
        0x3e => (Kind::Vopc, ((w0 >> 17) & 0xff) as usize),
        _ => (Kind::Vop2, ((w0 >> 25) & 0x3f) as usize),
    }
}

/// Whether source field `v` decodes in slot `s` at width `n`.
fn src_ok(sregs: Sregs, v: u16, s: &Src, n: u8) -> bool {
    match sregs.decode_src(v, n, Some(0)) {
        None => false,
        Some(Operand::InlineInt(_) | Operand::InlineFloat(_) | Operand::Literal(_)) => {
            s.flags & REJECT_CONST == 0
        }
        Some(_) => true,
    }
}

/// Decodes a VOP1, VOP2 or VOPC word (and its literal or DPP dword) with
/// the family's tables: the row, length and dwords.
pub(crate) fn decode(
    t: &'static VopTables,
    target: Target,
    wave64: bool,
    w0: u32,
    bytes: &[u8],
) -> Result<Raw, DecodeError> {
    let invalid = DecodeError::Invalid { target, word: w0 };
    let (kind, op) = kind_op(w0);
    let base = match kind {
        Kind::Vop1 => 0,
        Kind::Vop2 => 256,
        Kind::Vopc => 512,
    };
    let i = t.idx[target.index() & 1][base + op];
    let row = t.rows.get(usize::from(i)).ok_or(invalid.clone())?;
    if w0 & 0x1ff == 0xf9
        && let Some(s) = t.sdwa_row(target.index() & 1, kind, op)
    {
        let w1 = super::word(bytes, 1)?;
        if s.flags & sdwa::BARE == 0 {
            return if sdwa_ok(t.sregs, s, row, kind, wave64, w0, w1) {
                Ok((i, 8, [w0, w1, 0, 0]))
            } else {
                Err(invalid)
            };
        }
        // An operand-less opcode keeps the 8-byte form only for a dword
        // without selects or modifiers.
        if w1 & 0xbf3f_e000 == 0 && w0 & 0x01fe_0000 == 0 {
            return Ok((i, 8, [w0, w1, 0, 0]));
        }
    }
    // `v_nop` and `v_pipeflush` have no DPP forms and ignore src0, so a DPP
    // marker there decodes as the plain instruction.
    let form = if row.bare { Form::E32 } else { form_of(w0) };
    if row.lo128 & 8 != 0 && (w0 >> 17) & 0x80 != 0 {
        return Err(invalid);
    }
    let len = match form {
        Form::Dpp16 if !row.dpp.is_empty() => {
            let w1 = super::word(bytes, 1)?;
            if (w1 >> 20) as u8 & 0xf & row.dpp_zero != 0 {
                return Err(invalid);
            }
            8
        }
        Form::Dpp8 if !row.dpp8.is_empty() => {
            // A selector LLVM reads as the literal source takes a literal
            // dword (see `dpp8_sel`).
            if row.dpp8_src && super::word(bytes, 1)? >> 8 == 0xff {
                super::word(bytes, 2)?;
                12
            } else {
                8
            }
        }
        // (`form_of` never names SDWA; its words are decoded above.)
        Form::Dpp16 | Form::Dpp8 | Form::Sdwa => return Err(invalid),
        Form::E32 => {
            if row.bare {
                // VOP1 (`v_nop`, `v_pipeflush`) ignores src0 but not vdst.
                let fields = match kind {
                    Kind::Vop1 => w0 & 0x01fe_0000,
                    Kind::Vop2 => w0 & 0x01ff_ffff,
                    Kind::Vopc => w0 & 0x1_ffff,
                };
                if fields != 0 {
                    return Err(invalid);
                }
                4
            } else {
                let mut lit = row.roles.contains(&Role::K);
                if let Some(s) = &row.src0 {
                    let v = (w0 & 0x1ff) as u16;
                    let n = if s.w == 0 { 1 + u8::from(wave64) } else { s.w };
                    if !src_ok(t.sregs, v, s, n) {
                        return Err(invalid);
                    }
                    lit |= v == 255;
                }
                if let VDst::S(n) = row.dst {
                    let d = ((w0 >> 17) & 0xff) as u16;
                    if t.sregs.decode_src(d, n, Some(0)).is_none() {
                        return Err(invalid);
                    }
                    lit |= d == 255;
                }
                if lit {
                    super::word(bytes, 1)?;
                    8
                } else {
                    4
                }
            }
        }
    };
    let w1 = if len >= 8 { super::word(bytes, 1)? } else { 0 };
    let w2 = if len == 12 { super::word(bytes, 2)? } else { 0 };
    Ok((i, len, [w0, w1, w2, 0]))
}

/// Whether LLVM accepts the SDWA dword `w1` of `w0` (opcode row `row`, SDWA
/// row `s`).
fn sdwa_ok(
    sregs: Sregs,
    s: &sdwa::SdwaRow,
    row: &VopRow,
    kind: Kind,
    wave64: bool,
    w0: u32,
    w1: u32,
) -> bool {
    use sdwa::*;
    let bit = |b: u32| w1 >> b & 1 != 0;
    let sel = |b: u32| (w1 >> b) & 7;
    let f = s.flags;
    let mods_ok = |sext: u32, neg: u16, sx: u16| {
        !(bit(sext) && f & sx == 0 || (bit(sext + 1) || bit(sext + 2)) && f & neg == 0)
    };
    if sel(16) > 6 || !mods_ok(19, S0_NEG, S0_SEXT) {
        return false;
    }
    if bit(23) && sregs.decode_src((w1 & 0xff) as u16, 1, None).is_none() {
        return false;
    }
    if kind == Kind::Vop1 {
        if w1 & 0xbf00_0000 != 0 {
            return false;
        }
    } else {
        if sel(24) > 6 || !mods_ok(27, S1_NEG, S1_SEXT) {
            return false;
        }
        if bit(31)
            && sregs
                .decode_src(((w0 >> 9) & 0xff) as u16, 1, None)
                .is_none()
        {
            return false;
        }
    }
    if kind == Kind::Vopc {
        // An SGPR destination where the opcode writes vcc (not v_cmpx).
        return !bit(15)
            || row.roles.contains(&Role::Vcc)
                && sregs
                    .decode_sreg(((w1 >> 8) & 0x7f) as u16, 1 + u8::from(wave64))
                    .is_some();
    }
    sel(8) <= 6
        && !(f & NO_DST_SEL != 0 && sel(8) != 6)
        && !(bit(13) && f & CLAMP == 0)
        && !((w1 >> 14) & 3 != 0 && f & OMOD == 0)
}

/// A decoded VOP1, VOP2 or VOPC instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Vop {
    pub row: &'static VopRow,
    /// The SDWA form's row (GFX10, src0 0xF9).
    pub sdwa: Option<&'static sdwa::SdwaRow>,
    pub wave64: bool,
    /// The family's numbering of m0 and null.
    pub sregs: Sregs,
    pub w0: u32,
    /// The literal or DPP dword (0 when there is none).
    pub w1: u32,
    /// The literal after a DPP8 dword whose selector reads one (0 when
    /// there is none).
    pub w2: u32,
    pub len: u8,
}

impl Vop {
    pub(crate) fn from_raw(
        t: &'static VopTables,
        target: Target,
        r: usize,
        wave64: bool,
        len: u8,
        words: [u32; 3],
    ) -> Vop {
        let [w0, w1, w2] = words;
        let row = &t.rows[r];
        let (kind, op) = kind_op(w0);
        let sdwa = (!row.bare && w0 & 0x1ff == 0xf9)
            .then(|| t.sdwa_row(target.index() & 1, kind, op))
            .flatten();
        Vop {
            row,
            sdwa,
            wave64,
            sregs: t.sregs,
            w0,
            w1,
            w2,
            len,
        }
    }

    pub fn form(&self) -> Form {
        if self.row.bare {
            Form::E32
        } else if self.sdwa.is_some() {
            Form::Sdwa
        } else {
            form_of(self.w0)
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        match (self.form(), self.sdwa) {
            (Form::Sdwa, Some(s)) => s.name,
            (Form::Dpp16, _) => self.row.dpp,
            (Form::Dpp8, _) => self.row.dpp8,
            _ => self.row.name,
        }
    }

    /// Writes the SDWA form.
    fn fmt_sdwa(&self, f: &mut fmt::Formatter<'_>, s: &sdwa::SdwaRow) -> fmt::Result {
        use sdwa::*;
        let (w0, w1) = (self.w0, self.w1);
        let bit = |b: u32| w1 >> b & 1 != 0;
        let sel = |b: u32| SEL[((w1 >> b) & 7) as usize % SEL.len()];
        let (kind, _) = kind_op(w0);
        let mut warn = Warnings::default();
        f.write_str(s.name)?;
        let mut sep = " ";
        let vcc = if self.wave64 { "vcc" } else { "vcc_lo" };
        for role in self.row.roles {
            if *role == Role::K {
                continue;
            }
            f.write_str(sep)?;
            sep = ", ";
            match role {
                Role::Dst => {
                    let n = match self.row.dst {
                        VDst::V(n) => n,
                        _ => 1,
                    };
                    fmt_vgpr(f, ((w0 >> 17) & 0xff) as u16, n)?;
                }
                Role::Vcc if kind == Kind::Vopc && bit(15) => {
                    let n = 1 + u8::from(self.wave64);
                    if let Some(op) = self.sregs.decode_sreg(((w1 >> 8) & 0x7f) as u16, n) {
                        crate::gfx9::sop::fmt_sop(f, &op, n, &mut warn)?;
                    }
                }
                Role::Vcc => f.write_str(vcc)?,
                Role::Src0 | Role::Src1 => {
                    let k = usize::from(*role == Role::Src1);
                    let (field, scalar, m) = if k == 0 {
                        ((w1 & 0xff) as u16, bit(23), 19)
                    } else {
                        (((w0 >> 9) & 0xff) as u16, bit(31), 27)
                    };
                    let op = if scalar {
                        match self.sregs.decode_src(field, 1, None) {
                            Some(op) => op,
                            None => continue,
                        }
                    } else {
                        Operand::Reg(Reg::new(RegFile::Vgpr, field, 1))
                    };
                    let hidden = s.flags & if k == 0 { S0_HIDDEN } else { S1_HIDDEN } != 0;
                    let sext = !hidden && bit(m);
                    let (neg, abs) = (!hidden && bit(m + 1), !hidden && bit(m + 2));
                    let slot = Slot {
                        width: 1,
                        ty: s.ty[k],
                        plain: false,
                        bad_const: false,
                        bad_s: "",
                        bad_v: "",
                        t16: false,
                        hi: false,
                    };
                    if sext {
                        f.write_str("sext(")?;
                    }
                    fmt_mod_src(f, &op, &slot, neg, abs, &mut warn)?;
                    if sext {
                        f.write_str(")")?;
                    }
                }
                Role::K => {}
            }
        }
        if kind != Kind::Vopc {
            if bit(13) {
                f.write_str(" clamp")?;
            }
            fmt_omod(f, ((w1 >> 14) & 3) as u8)?;
            if s.flags & NO_DST_SEL == 0 {
                write!(
                    f,
                    " dst_sel:{} dst_unused:{}",
                    sel(8),
                    UNUSED[((w1 >> 11) & 3) as usize]
                )?;
            }
        }
        write!(f, " src0_sel:{}", sel(16))?;
        if kind != Kind::Vop1 {
            write!(f, " src1_sel:{}", sel(24))?;
        }
        warn.write(f)
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
        if self.len >= 8 {
            out.extend_from_slice(&self.w1.to_le_bytes());
        }
        if self.len == 12 {
            out.extend_from_slice(&self.w2.to_le_bytes());
        }
    }

    /// The literal constant, in the 32-bit form.
    pub fn literal(&self) -> Option<u32> {
        (self.form() == Form::E32 && self.len == 8).then_some(self.w1)
    }
}

/// Writes a DPP16 control as LLVM prints it on GFX10 and later.
pub(crate) fn fmt_dpp_ctrl(f: &mut fmt::Formatter<'_>, c: u32) -> fmt::Result {
    match c {
        0..=0xff => write!(
            f,
            "quad_perm:[{},{},{},{}]",
            c & 3,
            c >> 2 & 3,
            c >> 4 & 3,
            c >> 6 & 3
        ),
        0x101..=0x10f => write!(f, "row_shl:{}", c & 0xf),
        0x111..=0x11f => write!(f, "row_shr:{}", c & 0xf),
        0x121..=0x12f => write!(f, "row_ror:{}", c & 0xf),
        0x130 => f.write_str("/* wave_shl is not supported starting from GFX10 */"),
        0x134 => f.write_str("/* wave_rol is not supported starting from GFX10 */"),
        0x138 => f.write_str("/* wave_shr is not supported starting from GFX10 */"),
        0x13c => f.write_str("/* wave_ror is not supported starting from GFX10 */"),
        0x140 => f.write_str("row_mirror"),
        0x141 => f.write_str("row_half_mirror"),
        0x142 | 0x143 => f.write_str("/* row_bcast is not supported starting from GFX10 */"),
        0x150..=0x15f => write!(f, "row_share:{}", c & 0xf),
        0x160..=0x16f => write!(f, "row_xmask:{}", c & 0xf),
        _ => f.write_str("/* Invalid dpp_ctrl value */"),
    }
}

/// Writes the DPP16 controls after the operands: ` CTRL row_mask:0xR
/// bank_mask:0xB[ bound_ctrl:1][ fi:1]`.
pub(crate) fn fmt_dpp16(f: &mut fmt::Formatter<'_>, d: u32) -> fmt::Result {
    f.write_str(" ")?;
    fmt_dpp_ctrl(f, (d >> 8) & 0x1ff)?;
    write!(
        f,
        " row_mask:0x{:x} bank_mask:0x{:x}",
        d >> 28,
        (d >> 24) & 0xf
    )?;
    if d & 1 << 19 != 0 {
        f.write_str(" bound_ctrl:1")?;
    }
    if d & 1 << 18 != 0 {
        f.write_str(" fi:1")?;
    }
    Ok(())
}

/// The 24 select bits LLVM 22 prints for the DPP8 dword `d`. For the
/// opcodes whose selector goes through its source-operand decoder (`src`:
/// the rows with `dpp8_src`, which the generators learn), a selector below
/// 256 that names an inline integer or f32 inline constant stands for its
/// 32-bit value, and 255 for the literal dword that then follows; the low
/// 24 bits are printed.
pub(crate) fn dpp8_sel(d: u32, src: bool, literal: u32) -> u32 {
    let sel = d >> 8;
    if !src {
        return sel;
    }
    let v = match sel {
        128..=192 => sel - 128,
        193..=208 => 192u32.wrapping_sub(sel),
        240..=248 => F32_INLINE[(sel - 240) as usize],
        255 => literal,
        _ => sel,
    };
    v & 0xff_ffff
}

/// Writes ` dpp8:[...]` for 24 select bits (see [`dpp8_sel`]), and ` fi:1`
/// when `fi`.
pub(crate) fn fmt_dpp8(f: &mut fmt::Formatter<'_>, sel: u32, fi: bool) -> fmt::Result {
    f.write_str(" dpp8:[")?;
    for i in 0..8 {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{}", (sel >> (3 * i)) & 7)?;
    }
    f.write_str("]")?;
    if fi {
        f.write_str(" fi:1")?;
    }
    Ok(())
}

impl fmt::Display for Vop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = self.sdwa.filter(|_| self.form() == Form::Sdwa) {
            return self.fmt_sdwa(f, s);
        }
        let row = self.row;
        let form = self.form();
        f.write_str(self.mnemonic())?;
        let mut warn = Warnings::default();
        let mut sep = " ";
        let vdst = ((self.w0 >> 17) & 0xff) as u16;
        let mask_w = 1 + u8::from(self.wave64);
        // LLVM closes an abs bar of vsrc1 after a `vcc` that follows it
        // (`v_cndmask_b32_dpp ..., |v1, vcc_lo|`).
        let mut close_after_vcc = false;
        for role in row.roles {
            if *role == Role::K && form != Form::E32 {
                continue;
            }
            f.write_str(sep)?;
            sep = ", ";
            match role {
                Role::Dst => match row.dst {
                    VDst::V(n) => fmt_vgpr(f, vdst, n)?,
                    VDst::V16 => fmt_v16(f, vdst & 0x7f, vdst & 0x80 != 0)?,
                    VDst::S(n) => {
                        // An 8-bit source-style field: constants decode,
                        // as invalid immediates.
                        if let Some(op) = self.sregs.decode_src(vdst, n, self.literal()) {
                            fmt_sdst(f, &op, n, false, &mut warn)?;
                        }
                    }
                    VDst::None => {}
                },
                Role::Vcc => {
                    f.write_str(if self.wave64 { "vcc" } else { "vcc_lo" })?;
                    if close_after_vcc {
                        f.write_str("|")?;
                        close_after_vcc = false;
                    }
                }
                Role::K => write!(f, "0x{:x}", self.w1)?,
                Role::Src0 => {
                    let Some(s) = &row.src0 else { continue };
                    let n = if s.w == 0 { mask_w } else { s.w };
                    let (v, neg, abs) = match form {
                        Form::E32 => ((self.w0 & 0x1ff) as u16, false, false),
                        _ => {
                            let m = (self.w1 >> 20) as u8 & row.dpp_mods;
                            (
                                256 | (self.w1 & 0xff) as u16,
                                form == Form::Dpp16 && m & 1 != 0,
                                form == Form::Dpp16 && m & 2 != 0,
                            )
                        }
                    };
                    let Some(mut op) = self.sregs.decode_src(v, n, self.literal()) else {
                        continue;
                    };
                    let mut hi = false;
                    if s.t16
                        && let Operand::Reg(r) = op
                        && r.file == RegFile::Vgpr
                    {
                        hi = r.index & 0x80 != 0;
                        op = Operand::Reg(Reg::new(RegFile::Vgpr, r.index & 0x7f, 1));
                    }
                    let lo128 = row.lo128 & 1 != 0
                        && matches!(op, Operand::Reg(r) if r.file == RegFile::Vgpr && r.index >= 128);
                    let slot = Slot {
                        width: n,
                        ty: s.ty,
                        plain: s.flags & PLAIN != 0,
                        bad_const: s.flags & NO_CONST != 0,
                        bad_s: s.bad_s,
                        bad_v: match form {
                            _ if !lo128 => s.bad_v,
                            Form::E32 => "VS_32_Lo128",
                            _ => "VGPR_32_Lo128",
                        },
                        t16: s.t16,
                        hi,
                    };
                    fmt_mod_src(f, &op, &slot, neg, abs, &mut warn)?;
                }
                Role::Src1 => {
                    let Some((n, t16)) = row.src1 else { continue };
                    let v = ((self.w0 >> 9) & 0xff) as u16;
                    let m = if form == Form::Dpp16 {
                        (self.w1 >> 20) as u8 & row.dpp_mods
                    } else {
                        0
                    };
                    let (neg, abs) = (m & 4 != 0, m & 8 != 0);
                    if neg {
                        f.write_str("-")?;
                    }
                    if abs {
                        f.write_str("|")?;
                    }
                    if t16 {
                        fmt_v16(f, v & 0x7f, v & 0x80 != 0)?;
                    } else {
                        fmt_vgpr(f, v, n)?;
                        if row.lo128 & 2 != 0 && v >= 128 {
                            f.write_str(
                                "/*Invalid register, operand has 'VGPR_32_Lo128' register class*/",
                            )?;
                        }
                    }
                    if abs {
                        if row.dpp_mods & ABS_AFTER_VCC != 0 {
                            close_after_vcc = true;
                        } else {
                            f.write_str("|")?;
                        }
                    }
                }
            }
        }
        match form {
            Form::E32 | Form::Sdwa => {}
            Form::Dpp16 => fmt_dpp16(f, self.w1)?,
            Form::Dpp8 => fmt_dpp8(
                f,
                dpp8_sel(self.w1, row.dpp8_src, self.w2),
                self.w0 & 0x1ff == 0xea,
            )?,
        }
        warn.write(f)
    }
}
