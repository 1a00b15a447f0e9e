//! FP8/BF8/FP6/FP4 conversions (gfx942 FNUZ, gfx950 OCP and the gfx950
//! `v_cvt_scalef32_*` family).

use super::*;

/// The semantic function of a low-precision conversion base mnemonic.
pub fn lookup(_name: &str) -> Option<ExecFn> {
    None
}
