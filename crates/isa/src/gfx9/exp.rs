//! EXP (export) in the GFX9 layout, which GFX10 keeps: 64 bits, en 3:0,
//! target 9:4, compr 10, done 11, vm 12, 0b110001 31:26; vsrc0..vsrc3 in
//! the bytes of the second dword. gfx908 decodes it; the other CDNA targets
//! have no export unit (LLVM 22 decodes no EXP word on gfx90a, gfx942 or
//! gfx950).

use super::Inst;
use super::tables::exp::EXP_TARGETS;
use crate::{DecodeError, Target};
use std::fmt;

/// Decodes an EXP instruction (8 bytes): every field value decodes where
/// exports exist.
pub fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let w0 = super::word(bytes, 0)?;
    if target.is_gfx90a_plus() {
        return Err(DecodeError::Invalid { target, word: w0 });
    }
    let w1 = super::word(bytes, 1)?;
    Ok(Inst::new(target, 0, 8, [w0, w1, 0, 0]))
}

/// A decoded export.
#[derive(Clone, Debug, PartialEq)]
pub struct Exp {
    /// The target names by target id (`None`: `invalid_target_N`).
    pub targets: &'static [Option<&'static str>; 64],
    pub w0: u32,
    pub w1: u32,
}

impl Exp {
    /// An export of gfx908.
    pub(crate) fn from_raw(w0: u32, w1: u32) -> Exp {
        Exp {
            targets: &EXP_TARGETS,
            w0,
            w1,
        }
    }

    /// The export target id.
    pub fn target_id(&self) -> u8 {
        ((self.w0 >> 4) & 0x3f) as u8
    }

    /// Whether the sources are compressed (two 16-bit pairs in vsrc0 and
    /// vsrc1).
    pub fn compr(&self) -> bool {
        self.w0 & 1 << 10 != 0
    }

    /// The VGPR of source slot `k` (0-3) when it is enabled: with `compr`,
    /// slots 0 and 1 read vsrc0 and slots 2 and 3 vsrc1, as LLVM prints
    /// them.
    pub fn source(&self, k: u32) -> Option<u8> {
        if self.w0 >> k & 1 == 0 {
            return None;
        }
        let field = if self.compr() { k / 2 } else { k };
        Some((self.w1 >> (8 * field)) as u8)
    }

    pub fn mnemonic(&self) -> &'static str {
        "exp"
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
        out.extend_from_slice(&self.w1.to_le_bytes());
    }
}

impl fmt::Display for Exp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tg = self.target_id();
        match self.targets[usize::from(tg)] {
            Some(n) => write!(f, "exp {n}")?,
            None => write!(f, "exp invalid_target_{tg}")?,
        }
        for k in 0..4 {
            f.write_str(if k == 0 { " " } else { ", " })?;
            match self.source(k) {
                Some(v) => write!(f, "v{v}")?,
                None => f.write_str("off")?,
            }
        }
        if self.w0 & 1 << 11 != 0 {
            f.write_str(" done")?;
        }
        if self.compr() {
            f.write_str(" compr")?;
        }
        if self.w0 & 1 << 12 != 0 {
            f.write_str(" vm")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Target::*;
    use crate::gfx9::ds::check_cases;

    /// LLVM 22 prints `<invalid>` for every EXP word on gfx90a and later.
    #[test]
    fn invalid_on_gfx90a_plus() {
        check_cases(&[
            (Gfx90a, &[0xc400000f, 0x03020100], None, 4),
            (Gfx942, &[0xc400000f, 0x03020100], None, 4),
            (Gfx950, &[0xc400080f, 0x03020100], None, 4),
        ]);
    }

    /// gfx908 exports, texts from LLVM 22.
    #[test]
    fn gfx908_exports() {
        check_cases(&[
            (
                Gfx908,
                &[0xc400080f, 0x03020100],
                Some("exp mrt0 v0, v1, v2, v3 done"),
                8,
            ),
            (
                Gfx908,
                &[0xc400140f, 0x03020100],
                Some("exp mrt0 v0, v0, v1, v1 compr vm"),
                8,
            ),
            (
                Gfx908,
                &[0xc4000c0b, 0x04030201],
                Some("exp mrt0 v1, v1, off, v2 done compr"),
                8,
            ),
            (
                Gfx908,
                &[0xc40003ff, 0x03020100],
                Some("exp param31 v0, v1, v2, v3"),
                8,
            ),
            (
                Gfx908,
                &[0xc40001d5, 0x03020100],
                Some("exp invalid_target_29 v0, off, v2, off"),
                8,
            ),
        ]);
    }
}
