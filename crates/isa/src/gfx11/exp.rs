//! The GFX11 EXP encoding (exports to render targets, positions and
//! primitive data), 64 bits: en 3:0, target 9:4, done 11, row_en 13,
//! 0b111110 31:26; vsrc0..vsrc3 in the bytes of the second dword.

use super::sop::Raw;
use super::tables::exp::{MNEMONIC, TARGETS};
use crate::DecodeError;
use std::fmt;

/// One family's export mnemonic and target names (a generated
/// `tables/exp.rs`).
#[derive(Debug, PartialEq)]
pub struct ExpTables {
    pub mnemonic: &'static str,
    pub targets: &'static [Option<&'static str>; 64],
}

/// GFX11's tables.
pub static TABLES: ExpTables = ExpTables {
    mnemonic: MNEMONIC,
    targets: &TARGETS,
};

/// Decodes an EXP instruction (8 bytes); every field value decodes.
pub(crate) fn decode(w0: u32, bytes: &[u8]) -> Result<Raw, DecodeError> {
    let w1 = super::word(bytes, 1)?;
    Ok((0, 8, [w0, w1, 0, 0]))
}

/// A decoded EXP instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Exp {
    pub t: &'static ExpTables,
    pub w0: u32,
    pub w1: u32,
}

impl Exp {
    pub fn mnemonic(&self) -> &'static str {
        self.t.mnemonic
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
        out.extend_from_slice(&self.w1.to_le_bytes());
    }
}

impl fmt::Display for Exp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tg = (self.w0 >> 4) & 0x3f;
        let m = self.t.mnemonic;
        match self.t.targets[tg as usize] {
            Some(n) => write!(f, "{m} {n}")?,
            None => write!(f, "{m} invalid_target_{tg}")?,
        }
        for k in 0..4 {
            f.write_str(if k == 0 { " " } else { ", " })?;
            if self.w0 >> k & 1 != 0 {
                write!(f, "v{}", (self.w1 >> (8 * k)) & 0xff)?;
            } else {
                f.write_str("off")?;
            }
        }
        if self.w0 & 1 << 11 != 0 {
            f.write_str(" done")?;
        }
        if self.w0 & 1 << 13 != 0 {
            f.write_str(" row_en")?;
        }
        Ok(())
    }
}
