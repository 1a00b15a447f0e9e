//! VINTRP (parameter interpolation) in the GFX9 layout, which GFX10 keeps
//! under other top bits: 32 bits, vsrc 7:0, attrchan 9:8, attr 15:10, op
//! 17:16, vdst 25:18. gfx908 decodes it (0b110101 in 31:26); LLVM 22
//! decodes no VINTRP word on gfx90a, gfx942 or gfx950.

use super::Inst;
use super::tables::exp::VINTRP;
use crate::{DecodeError, Target};
use std::fmt;

/// Decodes a VINTRP instruction (4 bytes).
pub fn decode(target: Target, w0: u32) -> Result<Inst, DecodeError> {
    let op = (w0 >> 16) & 3;
    if target.is_gfx90a_plus() || VINTRP[op as usize].is_none() {
        return Err(DecodeError::Invalid { target, word: w0 });
    }
    Ok(Inst::new(target, op as u16, 4, [w0, 0, 0, 0]))
}

/// A decoded interpolation instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Vintrp {
    /// LLVM's mnemonic (`v_interp_p1_f32_e32`).
    pub name: &'static str,
    pub w0: u32,
}

impl Vintrp {
    /// A gfx908 instruction whose first dword is `w0`.
    pub(crate) fn from_raw(w0: u32) -> Vintrp {
        Vintrp {
            name: VINTRP[((w0 >> 16) & 3) as usize].unwrap_or(""),
            w0,
        }
    }

    /// The destination VGPR.
    pub fn vdst(&self) -> u8 {
        (self.w0 >> 18) as u8
    }

    /// The source VGPR, or for `v_interp_mov_f32` the parameter (0 `p10`,
    /// 1 `p20`, 2 `p0`).
    pub fn vsrc(&self) -> u8 {
        self.w0 as u8
    }

    /// The attribute (0-63) and channel (0-3, `x` to `w`).
    pub fn attr(&self) -> (u8, u8) {
        (((self.w0 >> 10) & 0x3f) as u8, ((self.w0 >> 8) & 3) as u8)
    }

    /// Whether the source is a parameter rather than a VGPR.
    pub fn is_mov(&self) -> bool {
        (self.w0 >> 16) & 3 == 2
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
    }
}

impl fmt::Display for Vintrp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} v{}, ", self.name, self.vdst())?;
        if self.is_mov() {
            super::vop3::write_interp_param(f, u16::from(self.vsrc()))?;
        } else {
            write!(f, "v{}", self.vsrc())?;
        }
        let (attr, chan) = self.attr();
        write!(
            f,
            ", attr{attr}.{}",
            ["x", "y", "z", "w"][usize::from(chan)]
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::Target::*;
    use crate::gfx9::ds::check_cases;

    /// Texts from LLVM 22.
    #[test]
    fn matches_llvm() {
        check_cases(&[
            (
                Gfx908,
                &[0xd4148701],
                Some("v_interp_p1_f32_e32 v5, v1, attr33.w"),
                4,
            ),
            (
                Gfx908,
                &[0xd41587ff],
                Some("v_interp_p2_f32_e32 v5, v255, attr33.w"),
                4,
            ),
            (
                Gfx908,
                &[0xd4168701],
                Some("v_interp_mov_f32_e32 v5, p20, attr33.w"),
                4,
            ),
            (
                Gfx908,
                &[0xd4168780],
                Some("v_interp_mov_f32_e32 v5, invalid_param_128, attr33.w"),
                4,
            ),
            (Gfx908, &[0xd4178701], None, 4),
            (Gfx90a, &[0xd4148701], None, 4),
        ]);
    }
}
