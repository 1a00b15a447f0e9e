//! EXP (export) encoding. The CDNA targets have no export unit: LLVM 22
//! decodes no EXP word on gfx90a, gfx942 or gfx950, so every such word is
//! invalid.

use super::Inst;
use crate::{DecodeError, Target};

/// Rejects the word: exports do not exist on the CDNA targets.
pub fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
    let w0 = super::word(bytes, 0)?;
    Err(DecodeError::Invalid { target, word: w0 })
}
