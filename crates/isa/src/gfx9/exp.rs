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

#[cfg(test)]
mod tests {
    use crate::Target::*;
    use crate::gfx9::ds::check_cases;

    /// LLVM 22 prints `<invalid>` for every EXP word on the CDNA targets.
    #[test]
    fn invalid_on_cdna() {
        check_cases(&[
            (Gfx90a, &[0xc400000f, 0x03020100], None, 4),
            (Gfx942, &[0xc400000f, 0x03020100], None, 4),
            (Gfx950, &[0xc400080f, 0x03020100], None, 4),
        ]);
    }
}
