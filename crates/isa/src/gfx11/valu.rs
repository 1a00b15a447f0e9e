//! Operand printing shared by the GFX11 vector ALU encodings (VOP1, VOP2,
//! VOPC, VOP3, VOP3P, DPP, VOPD): registers, typed constants, the
//! `neg`/`abs` source modifiers and the register-class notes LLVM appends
//! to an operand its slot does not accept.

use super::operand::{
    Operand, RegFile, Special, ValType, fmt_inline_float, fmt_literal, fmt_special,
};
use crate::gfx9::sop::{Warnings, fmt_imm32, fmt_sop};
use std::fmt;

/// A source slot's value type when it takes no constants: LLVM prints a
/// constant there as a plain 32-bit immediate.
pub const P32: ValType = ValType::I32;

/// Writes `v5`, `v[5:6]`: `n` dwords from VGPR `idx` (no range check: LLVM
/// prints `v[255:256]`).
pub(crate) fn fmt_vgpr(f: &mut fmt::Formatter<'_>, idx: u16, n: u8) -> fmt::Result {
    if n <= 1 {
        write!(f, "v{idx}")
    } else {
        write!(f, "v[{idx}:{}]", u32::from(idx) + u32::from(n) - 1)
    }
}

/// Writes a 16-bit VGPR half, `v5.l` or `v5.h`.
pub(crate) fn fmt_v16(f: &mut fmt::Formatter<'_>, idx: u16, hi: bool) -> fmt::Result {
    write!(f, "v{idx}.{}", if hi { 'h' } else { 'l' })
}

/// How a source slot prints and which operands it annotates.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Slot {
    pub width: u8,
    pub ty: ValType,
    /// Print constants as LLVM prints a plain 32-bit immediate (a slot that
    /// takes no constants), followed by `/*Invalid immediate*/` when
    /// `bad_const`.
    pub plain: bool,
    pub bad_const: bool,
    /// Register class named in the note after an SGPR operand ("" none).
    pub bad_s: &'static str,
    /// Register class named in the note after a VGPR operand ("" none).
    pub bad_v: &'static str,
    /// A VGPR prints as a 16-bit half (`.l`/`.h`, from `hi`).
    pub t16: bool,
    pub hi: bool,
}

/// Whether LLVM treats a special register as an inline value (never noted
/// as outside a slot's register class).
fn inline_value(sp: Special) -> bool {
    !matches!(
        sp,
        Special::Vcc | Special::Exec | Special::M0 | Special::SrcLdsDirect
    )
}

/// Writes source operand `op` in slot `s` (without modifiers).
pub(crate) fn fmt_operand(
    f: &mut fmt::Formatter<'_>,
    op: &Operand,
    s: &Slot,
    warn: &mut Warnings,
) -> fmt::Result {
    let note = |f: &mut fmt::Formatter<'_>, class: &str| {
        if class.is_empty() {
            Ok(())
        } else if class.starts_with("VReg_") && s.width <= 1 {
            // A tuple class narrowed to one register (WMMA in wave64).
            f.write_str("/*Invalid register, operand has 'VGPR_32' register class*/")
        } else if class.starts_with("VReg_") {
            // Vector tuple classes follow the slot's width (WMMA's halve in
            // wave64).
            write!(
                f,
                "/*Invalid register, operand has 'VReg_{}' register class*/",
                32 * u32::from(s.width)
            )
        } else {
            write!(
                f,
                "/*Invalid register, operand has '{class}' register class*/"
            )
        }
    };
    match *op {
        Operand::Reg(r) if r.file == RegFile::Vgpr => {
            if s.t16 {
                fmt_v16(f, r.index, s.hi)?;
            } else {
                fmt_vgpr(f, r.index, s.width.max(1))?;
            }
            note(f, s.bad_v)
        }
        Operand::Reg(_) => {
            fmt_sop(f, op, s.width.max(1), warn)?;
            note(f, s.bad_s)
        }
        Operand::Special(sp, half) => {
            fmt_special(f, sp, half)?;
            // `src_lds_direct` belongs to the `...OrLds` classes.
            if inline_value(sp) || sp == Special::SrcLdsDirect && s.bad_s.contains("Lds") {
                Ok(())
            } else if sp == Special::SrcLdsDirect && s.bad_v.starts_with("SReg") {
                // An SGPR-only slot (GFX12's `v_s_*`): its class.
                note(f, s.bad_v)
            } else {
                note(f, s.bad_s)
            }
        }
        Operand::InlineInt(v) => {
            write!(f, "{v}")?;
            if s.bad_const {
                f.write_str("/*Invalid immediate*/")?;
            }
            Ok(())
        }
        Operand::InlineFloat(c) => {
            if s.plain {
                fmt_inline_float(f, c, ValType::F32)?;
            } else {
                fmt_inline_float(f, c, s.ty)?;
            }
            if s.bad_const {
                f.write_str("/*Invalid immediate*/")?;
            }
            Ok(())
        }
        Operand::Literal(v) => {
            if s.plain {
                fmt_imm32(f, v)?;
            } else {
                fmt_literal(f, v, s.ty)?;
            }
            if s.bad_const {
                f.write_str("/*Invalid immediate*/")?;
            }
            Ok(())
        }
        Operand::Imm(v) => write!(f, "{v}"),
    }
}

/// Writes a source with its `neg`/`abs` modifiers: `-|v1|`, and `neg(1.0)`
/// for a negated constant without `abs` (so that `-1` stays unambiguous).
pub(crate) fn fmt_mod_src(
    f: &mut fmt::Formatter<'_>,
    op: &Operand,
    s: &Slot,
    neg: bool,
    abs: bool,
    warn: &mut Warnings,
) -> fmt::Result {
    let imm = matches!(
        op,
        Operand::InlineInt(_) | Operand::InlineFloat(_) | Operand::Literal(_)
    );
    if neg && !abs && imm {
        // LLVM holds a `lit(...)` constant as an expression, which takes a
        // plain `-`; other constants take `neg(...)`.
        let text = ConstText(op, s).to_string();
        return if text.starts_with("lit(") {
            write!(f, "-{text}")
        } else {
            write!(f, "neg({text})")
        };
    }
    if neg {
        f.write_str("-")?;
    }
    if abs {
        f.write_str("|")?;
    }
    fmt_operand(f, op, s, warn)?;
    if abs {
        f.write_str("|")?;
    }
    Ok(())
}

/// Writes the scalar destination of `v_readlane_b32`/`v_readfirstlane_b32`,
/// an 8-bit source-style field of class `SReg_32_XM0`: constants decode as
/// invalid immediates, and `m0` and `src_lds_direct` carry the class note.
pub(crate) fn fmt_sdst(
    f: &mut fmt::Formatter<'_>,
    op: &Operand,
    width: u8,
    xexec: bool,
    warn: &mut Warnings,
) -> fmt::Result {
    let slot = Slot {
        width,
        ty: ValType::I32,
        plain: true,
        bad_const: true,
        bad_s: "",
        bad_v: "",
        t16: false,
        hi: false,
    };
    fmt_operand(f, op, &slot, warn)?;
    if xexec {
        if matches!(
            op,
            Operand::Special(Special::Exec | Special::SrcLdsDirect, _)
        ) {
            f.write_str("/*Invalid register, operand has 'SReg_32_XEXEC' register class*/")?;
        }
    } else if matches!(op, Operand::Special(Special::M0 | Special::SrcLdsDirect, _)) {
        f.write_str("/*Invalid register, operand has 'SReg_32_XM0' register class*/")?;
    }
    Ok(())
}

/// A constant source as [`fmt_operand`] prints it (constants raise no
/// warnings).
struct ConstText<'a>(&'a Operand, &'a Slot);

impl fmt::Display for ConstText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_operand(f, self.0, self.1, &mut Warnings::default())
    }
}

/// Writes ` mul:2`, ` mul:4` or ` div:2` for an output modifier.
pub(crate) fn fmt_omod(f: &mut fmt::Formatter<'_>, omod: u8) -> fmt::Result {
    match omod {
        1 => f.write_str(" mul:2"),
        2 => f.write_str(" mul:4"),
        3 => f.write_str(" div:2"),
        _ => Ok(()),
    }
}
