//! The GFX12 VDSDIR encoding (LDS parameter and direct loads), 32 bits:
//! vdst 7:0, attr_chan 9:8, attr 15:10, wait_va_vdst 19:16, op 20 (with
//! bits 22:21 zero), wait_vm_vsrc 23, 0xCE 31:24. RDNA4 ISA manual,
//! "VDSDIR".

use crate::{DecodeError, Target};
use std::fmt;

/// Decodes a VDSDIR word: bits 22:21 must be clear.
pub(crate) fn decode(target: Target, w0: u32) -> Result<(), DecodeError> {
    if w0 & 0x0060_0000 != 0 {
        return Err(DecodeError::Invalid { target, word: w0 });
    }
    Ok(())
}

/// A decoded VDSDIR instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Vdsdir {
    pub w0: u32,
}

impl Vdsdir {
    /// `ds_direct_load` (op 1) or `ds_param_load` (op 0).
    pub fn mnemonic(&self) -> &'static str {
        if self.w0 & 1 << 20 != 0 {
            "ds_direct_load"
        } else {
            "ds_param_load"
        }
    }

    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.w0.to_le_bytes());
    }
}

impl fmt::Display for Vdsdir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.w0;
        write!(f, "{} v{}", self.mnemonic(), w & 0xff)?;
        if w & 1 << 20 == 0 {
            let chan = ['x', 'y', 'z', 'w'][((w >> 8) & 3) as usize];
            write!(f, ", attr{}.{chan}", (w >> 10) & 0x3f)?;
        }
        write!(
            f,
            " wait_va_vdst:{} wait_vm_vsrc:{}",
            (w >> 16) & 0xf,
            (w >> 23) & 1
        )
    }
}
