//! Every matrix instruction of gfx908, gfx90a, gfx942 and gfx950, by LLVM 22
//! mnemonic (the names of `crates/isa/src/gfx9/tables/vop3p.rs`, plus the
//! gfx950 `v_mfma_scale_*` pairs). Shapes, types and modifier support are
//! from AMD's matrix instruction calculator (CDNA2/CDNA3) and the CDNA4 ISA
//! manual's MFMA tables.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::Elem::{self, *};
use super::{GFX90A, GFX908, GFX942, GFX950, MfmaInfo};
use rocjitsu_isa::Target;

const BC: u8 = 1; // CBSZ/ABID broadcast
const LP: u8 = 2; // BLGP lane pattern
const NEG: u8 = 4; // F64 neg bits
const SP: u8 = 8; // sparse
const F8F6F4: u8 = 16;
const SCALED: u8 = 32;
const G9: u8 = GFX90A;
/// CDNA1's MFMAs, kept by gfx90a under the same names.
const G89: u8 = GFX908 | GFX90A;
const G4: u8 = GFX942;
const G5: u8 = GFX950;
const G45: u8 = GFX942 | GFX950;

#[allow(clippy::too_many_arguments)]
const fn i(
    name: &'static str,
    targets: u8,
    m: usize,
    n: usize,
    k: usize,
    blocks: usize,
    a: Elem,
    b: Elem,
    cd: Elem,
    flags: u8,
    passes: u8,
) -> MfmaInfo {
    let sparse = flags & SP != 0;
    let ka = if sparse { k / 2 } else { k };
    MfmaInfo {
        name,
        targets,
        m,
        n,
        k,
        blocks,
        a,
        b,
        cd,
        a_dwords: (ka * m * blocks / 64 * a.bits()).div_ceil(32),
        b_dwords: (k * n * blocks / 64 * b.bits()).div_ceil(32),
        cd_dwords: m * n * blocks * cd.bits() / 32 / 64,
        sparse,
        broadcast: flags & BC != 0,
        lane_pattern: flags & LP != 0,
        neg: flags & NEG != 0,
        f8f6f4: flags & F8F6F4 != 0,
        scaled: flags & SCALED != 0,
        passes,
    }
}

/// Every instruction. Names shared by gfx942 (FNUZ fp8/bf8) and gfx950
/// (OCP fp8/bf8) have one entry per target, gfx942's first.
#[rustfmt::skip]
pub static ALL: &[MfmaInfo] = &[
    // gfx90a (CDNA2) spellings; G89: gfx908 (CDNA1) has them too.
    i("v_mfma_f32_32x32x1f32", G89, 32, 32, 1, 2, F32, F32, F32, BC | LP, 16),
    i("v_mfma_f32_16x16x1f32", G89, 16, 16, 1, 4, F32, F32, F32, BC | LP, 8),
    i("v_mfma_f32_4x4x1f32", G89, 4, 4, 1, 16, F32, F32, F32, BC | LP, 2),
    i("v_mfma_f32_32x32x2f32", G89, 32, 32, 2, 1, F32, F32, F32, LP, 16),
    i("v_mfma_f32_16x16x4f32", G89, 16, 16, 4, 1, F32, F32, F32, LP, 8),
    i("v_mfma_f32_32x32x4f16", G89, 32, 32, 4, 2, F16, F16, F32, BC | LP, 16),
    i("v_mfma_f32_16x16x4f16", G89, 16, 16, 4, 4, F16, F16, F32, BC | LP, 8),
    i("v_mfma_f32_4x4x4f16", G89, 4, 4, 4, 16, F16, F16, F32, BC | LP, 2),
    i("v_mfma_f32_32x32x8f16", G89, 32, 32, 8, 1, F16, F16, F32, LP, 16),
    i("v_mfma_f32_16x16x16f16", G89, 16, 16, 16, 1, F16, F16, F32, LP, 8),
    i("v_mfma_i32_32x32x4i8", G89, 32, 32, 4, 2, I8, I8, I32, BC | LP, 16),
    i("v_mfma_i32_16x16x4i8", G89, 16, 16, 4, 4, I8, I8, I32, BC | LP, 8),
    i("v_mfma_i32_4x4x4i8", G89, 4, 4, 4, 16, I8, I8, I32, BC | LP, 2),
    i("v_mfma_i32_32x32x8i8", G89, 32, 32, 8, 1, I8, I8, I32, LP, 16),
    i("v_mfma_i32_16x16x16i8", G89, 16, 16, 16, 1, I8, I8, I32, LP, 8),
    i("v_mfma_f32_32x32x4bf16_1k", G9, 32, 32, 4, 2, Bf16, Bf16, F32, BC | LP, 16),
    i("v_mfma_f32_16x16x4bf16_1k", G9, 16, 16, 4, 4, Bf16, Bf16, F32, BC | LP, 8),
    i("v_mfma_f32_4x4x4bf16_1k", G9, 4, 4, 4, 16, Bf16, Bf16, F32, BC | LP, 2),
    i("v_mfma_f32_32x32x8bf16_1k", G9, 32, 32, 8, 1, Bf16, Bf16, F32, LP, 16),
    i("v_mfma_f32_16x16x16bf16_1k", G9, 16, 16, 16, 1, Bf16, Bf16, F32, LP, 8),
    i("v_mfma_f32_32x32x2bf16", G89, 32, 32, 2, 2, Bf16, Bf16, F32, BC | LP, 16),
    i("v_mfma_f32_16x16x2bf16", G89, 16, 16, 2, 4, Bf16, Bf16, F32, BC | LP, 8),
    i("v_mfma_f32_4x4x2bf16", G89, 4, 4, 2, 16, Bf16, Bf16, F32, BC | LP, 2),
    i("v_mfma_f32_32x32x4bf16", G89, 32, 32, 4, 1, Bf16, Bf16, F32, LP, 16),
    i("v_mfma_f32_16x16x8bf16", G89, 16, 16, 8, 1, Bf16, Bf16, F32, LP, 8),
    i("v_mfma_f64_16x16x4f64", G9, 16, 16, 4, 1, F64, F64, F64, 0, 8),
    i("v_mfma_f64_4x4x4f64", G9, 4, 4, 4, 4, F64, F64, F64, 0, 4),
    // gfx942 (CDNA3) spellings, also on gfx950.
    i("v_mfma_f32_32x32x1_2b_f32", G45, 32, 32, 1, 2, F32, F32, F32, BC | LP, 16),
    i("v_mfma_f32_16x16x1_4b_f32", G45, 16, 16, 1, 4, F32, F32, F32, BC | LP, 8),
    i("v_mfma_f32_4x4x1_16b_f32", G45, 4, 4, 1, 16, F32, F32, F32, BC | LP, 2),
    i("v_mfma_f32_32x32x2_f32", G45, 32, 32, 2, 1, F32, F32, F32, LP, 16),
    i("v_mfma_f32_16x16x4_f32", G45, 16, 16, 4, 1, F32, F32, F32, LP, 8),
    i("v_mfma_f32_32x32x4_2b_f16", G45, 32, 32, 4, 2, F16, F16, F32, BC | LP, 16),
    i("v_mfma_f32_16x16x4_4b_f16", G45, 16, 16, 4, 4, F16, F16, F32, BC | LP, 8),
    i("v_mfma_f32_4x4x4_16b_f16", G45, 4, 4, 4, 16, F16, F16, F32, BC | LP, 2),
    i("v_mfma_f32_32x32x8_f16", G45, 32, 32, 8, 1, F16, F16, F32, 0, 8),
    i("v_mfma_f32_16x16x16_f16", G45, 16, 16, 16, 1, F16, F16, F32, 0, 4),
    i("v_mfma_i32_32x32x4_2b_i8", G45, 32, 32, 4, 2, I8, I8, I32, BC | LP, 16),
    i("v_mfma_i32_16x16x4_4b_i8", G45, 16, 16, 4, 4, I8, I8, I32, BC | LP, 8),
    i("v_mfma_i32_4x4x4_16b_i8", G45, 4, 4, 4, 16, I8, I8, I32, BC | LP, 2),
    i("v_mfma_i32_32x32x16_i8", G45, 32, 32, 16, 1, I8, I8, I32, 0, 8),
    i("v_mfma_i32_16x16x32_i8", G45, 16, 16, 32, 1, I8, I8, I32, 0, 4),
    i("v_mfma_f32_32x32x4_2b_bf16", G45, 32, 32, 4, 2, Bf16, Bf16, F32, BC | LP, 16),
    i("v_mfma_f32_16x16x4_4b_bf16", G45, 16, 16, 4, 4, Bf16, Bf16, F32, BC | LP, 8),
    i("v_mfma_f32_4x4x4_16b_bf16", G45, 4, 4, 4, 16, Bf16, Bf16, F32, BC | LP, 2),
    i("v_mfma_f32_32x32x8_bf16", G45, 32, 32, 8, 1, Bf16, Bf16, F32, 0, 8),
    i("v_mfma_f32_16x16x16_bf16", G45, 16, 16, 16, 1, Bf16, Bf16, F32, 0, 4),
    i("v_mfma_f64_16x16x4_f64", G45, 16, 16, 4, 1, F64, F64, F64, NEG, 8),
    i("v_mfma_f64_4x4x4_4b_f64", G45, 4, 4, 4, 4, F64, F64, F64, NEG, 4),
    i("v_mfma_f32_16x16x8_xf32", G4, 16, 16, 8, 1, Xf32, Xf32, F32, 0, 4),
    i("v_mfma_f32_32x32x4_xf32", G4, 32, 32, 4, 1, Xf32, Xf32, F32, 0, 8),
    // FP8: FNUZ on gfx942.
    i("v_mfma_f32_16x16x32_bf8_bf8", G4, 16, 16, 32, 1, Bf8Fnuz, Bf8Fnuz, F32, 0, 4),
    i("v_mfma_f32_16x16x32_bf8_fp8", G4, 16, 16, 32, 1, Bf8Fnuz, Fp8Fnuz, F32, 0, 4),
    i("v_mfma_f32_16x16x32_fp8_bf8", G4, 16, 16, 32, 1, Fp8Fnuz, Bf8Fnuz, F32, 0, 4),
    i("v_mfma_f32_16x16x32_fp8_fp8", G4, 16, 16, 32, 1, Fp8Fnuz, Fp8Fnuz, F32, 0, 4),
    i("v_mfma_f32_32x32x16_bf8_bf8", G4, 32, 32, 16, 1, Bf8Fnuz, Bf8Fnuz, F32, 0, 8),
    i("v_mfma_f32_32x32x16_bf8_fp8", G4, 32, 32, 16, 1, Bf8Fnuz, Fp8Fnuz, F32, 0, 8),
    i("v_mfma_f32_32x32x16_fp8_bf8", G4, 32, 32, 16, 1, Fp8Fnuz, Bf8Fnuz, F32, 0, 8),
    i("v_mfma_f32_32x32x16_fp8_fp8", G4, 32, 32, 16, 1, Fp8Fnuz, Fp8Fnuz, F32, 0, 8),
    // FP8: OCP on gfx950.
    i("v_mfma_f32_16x16x32_bf8_bf8", G5, 16, 16, 32, 1, Bf8, Bf8, F32, 0, 4),
    i("v_mfma_f32_16x16x32_bf8_fp8", G5, 16, 16, 32, 1, Bf8, Fp8, F32, 0, 4),
    i("v_mfma_f32_16x16x32_fp8_bf8", G5, 16, 16, 32, 1, Fp8, Bf8, F32, 0, 4),
    i("v_mfma_f32_16x16x32_fp8_fp8", G5, 16, 16, 32, 1, Fp8, Fp8, F32, 0, 4),
    i("v_mfma_f32_32x32x16_bf8_bf8", G5, 32, 32, 16, 1, Bf8, Bf8, F32, 0, 8),
    i("v_mfma_f32_32x32x16_bf8_fp8", G5, 32, 32, 16, 1, Bf8, Fp8, F32, 0, 8),
    i("v_mfma_f32_32x32x16_fp8_bf8", G5, 32, 32, 16, 1, Fp8, Bf8, F32, 0, 8),
    i("v_mfma_f32_32x32x16_fp8_fp8", G5, 32, 32, 16, 1, Fp8, Fp8, F32, 0, 8),
    // SMFMAC, gfx942 and gfx950.
    i("v_smfmac_f32_16x16x32_f16", G45, 16, 16, 32, 1, F16, F16, F32, SP, 4),
    i("v_smfmac_f32_32x32x16_f16", G45, 32, 32, 16, 1, F16, F16, F32, SP, 8),
    i("v_smfmac_f32_16x16x32_bf16", G45, 16, 16, 32, 1, Bf16, Bf16, F32, SP, 4),
    i("v_smfmac_f32_32x32x16_bf16", G45, 32, 32, 16, 1, Bf16, Bf16, F32, SP, 8),
    i("v_smfmac_i32_16x16x64_i8", G45, 16, 16, 64, 1, I8, I8, I32, SP, 4),
    i("v_smfmac_i32_32x32x32_i8", G45, 32, 32, 32, 1, I8, I8, I32, SP, 8),
    i("v_smfmac_f32_16x16x64_bf8_bf8", G4, 16, 16, 64, 1, Bf8Fnuz, Bf8Fnuz, F32, SP, 4),
    i("v_smfmac_f32_16x16x64_bf8_fp8", G4, 16, 16, 64, 1, Bf8Fnuz, Fp8Fnuz, F32, SP, 4),
    i("v_smfmac_f32_16x16x64_fp8_bf8", G4, 16, 16, 64, 1, Fp8Fnuz, Bf8Fnuz, F32, SP, 4),
    i("v_smfmac_f32_16x16x64_fp8_fp8", G4, 16, 16, 64, 1, Fp8Fnuz, Fp8Fnuz, F32, SP, 4),
    i("v_smfmac_f32_32x32x32_bf8_bf8", G4, 32, 32, 32, 1, Bf8Fnuz, Bf8Fnuz, F32, SP, 8),
    i("v_smfmac_f32_32x32x32_bf8_fp8", G4, 32, 32, 32, 1, Bf8Fnuz, Fp8Fnuz, F32, SP, 8),
    i("v_smfmac_f32_32x32x32_fp8_bf8", G4, 32, 32, 32, 1, Fp8Fnuz, Bf8Fnuz, F32, SP, 8),
    i("v_smfmac_f32_32x32x32_fp8_fp8", G4, 32, 32, 32, 1, Fp8Fnuz, Fp8Fnuz, F32, SP, 8),
    i("v_smfmac_f32_16x16x64_bf8_bf8", G5, 16, 16, 64, 1, Bf8, Bf8, F32, SP, 4),
    i("v_smfmac_f32_16x16x64_bf8_fp8", G5, 16, 16, 64, 1, Bf8, Fp8, F32, SP, 4),
    i("v_smfmac_f32_16x16x64_fp8_bf8", G5, 16, 16, 64, 1, Fp8, Bf8, F32, SP, 4),
    i("v_smfmac_f32_16x16x64_fp8_fp8", G5, 16, 16, 64, 1, Fp8, Fp8, F32, SP, 4),
    i("v_smfmac_f32_32x32x32_bf8_bf8", G5, 32, 32, 32, 1, Bf8, Bf8, F32, SP, 8),
    i("v_smfmac_f32_32x32x32_bf8_fp8", G5, 32, 32, 32, 1, Bf8, Fp8, F32, SP, 8),
    i("v_smfmac_f32_32x32x32_fp8_bf8", G5, 32, 32, 32, 1, Fp8, Bf8, F32, SP, 8),
    i("v_smfmac_f32_32x32x32_fp8_fp8", G5, 32, 32, 32, 1, Fp8, Fp8, F32, SP, 8),
    // gfx950 (CDNA4) only.
    i("v_mfma_f32_16x16x32_f16", G5, 16, 16, 32, 1, F16, F16, F32, 0, 8),
    i("v_mfma_f32_32x32x16_f16", G5, 32, 32, 16, 1, F16, F16, F32, 0, 16),
    i("v_mfma_f32_16x16x32_bf16", G5, 16, 16, 32, 1, Bf16, Bf16, F32, 0, 8),
    i("v_mfma_f32_32x32x16_bf16", G5, 32, 32, 16, 1, Bf16, Bf16, F32, 0, 16),
    i("v_mfma_i32_16x16x64_i8", G5, 16, 16, 64, 1, I8, I8, I32, 0, 8),
    i("v_mfma_i32_32x32x32_i8", G5, 32, 32, 32, 1, I8, I8, I32, 0, 16),
    i("v_mfma_f32_16x16x128_f8f6f4", G5, 16, 16, 128, 1, Fp8, Fp8, F32, F8F6F4, 8),
    i("v_mfma_f32_32x32x64_f8f6f4", G5, 32, 32, 64, 1, Fp8, Fp8, F32, F8F6F4, 16),
    i("v_mfma_scale_f32_16x16x128_f8f6f4", G5, 16, 16, 128, 1, Fp8, Fp8, F32, F8F6F4 | SCALED, 8),
    i("v_mfma_scale_f32_32x32x64_f8f6f4", G5, 32, 32, 64, 1, Fp8, Fp8, F32, F8F6F4 | SCALED, 16),
    i("v_smfmac_f32_16x16x64_f16", G5, 16, 16, 64, 1, F16, F16, F32, SP, 8),
    i("v_smfmac_f32_32x32x32_f16", G5, 32, 32, 32, 1, F16, F16, F32, SP, 16),
    i("v_smfmac_f32_16x16x64_bf16", G5, 16, 16, 64, 1, Bf16, Bf16, F32, SP, 8),
    i("v_smfmac_f32_32x32x32_bf16", G5, 32, 32, 32, 1, Bf16, Bf16, F32, SP, 16),
    i("v_smfmac_i32_16x16x128_i8", G5, 16, 16, 128, 1, I8, I8, I32, SP, 8),
    i("v_smfmac_i32_32x32x64_i8", G5, 32, 32, 64, 1, I8, I8, I32, SP, 16),
    i("v_smfmac_f32_16x16x128_bf8_bf8", G5, 16, 16, 128, 1, Bf8, Bf8, F32, SP, 8),
    i("v_smfmac_f32_16x16x128_bf8_fp8", G5, 16, 16, 128, 1, Bf8, Fp8, F32, SP, 8),
    i("v_smfmac_f32_16x16x128_fp8_bf8", G5, 16, 16, 128, 1, Fp8, Bf8, F32, SP, 8),
    i("v_smfmac_f32_16x16x128_fp8_fp8", G5, 16, 16, 128, 1, Fp8, Fp8, F32, SP, 8),
    i("v_smfmac_f32_32x32x64_bf8_bf8", G5, 32, 32, 64, 1, Bf8, Bf8, F32, SP, 16),
    i("v_smfmac_f32_32x32x64_bf8_fp8", G5, 32, 32, 64, 1, Bf8, Fp8, F32, SP, 16),
    i("v_smfmac_f32_32x32x64_fp8_bf8", G5, 32, 32, 64, 1, Fp8, Bf8, F32, SP, 16),
    i("v_smfmac_f32_32x32x64_fp8_fp8", G5, 32, 32, 64, 1, Fp8, Fp8, F32, SP, 16),
];

/// Mnemonic → indices into [`ALL`] (one or two entries, gfx942's first).
fn index() -> &'static HashMap<&'static str, [Option<u16>; 2]> {
    static INDEX: OnceLock<HashMap<&'static str, [Option<u16>; 2]>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut map: HashMap<&'static str, [Option<u16>; 2]> = HashMap::new();
        for (n, info) in ALL.iter().enumerate() {
            let slot = map.entry(info.name).or_default();
            let n = Some(n as u16);
            if slot[0].is_none() {
                slot[0] = n;
            } else {
                slot[1] = n;
            }
        }
        map
    })
}

/// The instruction by LLVM mnemonic without the `_e64` suffix. For the
/// `fp8`/`bf8` names that gfx942 and gfx950 share this is gfx942's (FNUZ)
/// entry; use [`lookup_for`] to get a target's own.
pub fn lookup(mnemonic: &str) -> Option<&'static MfmaInfo> {
    let m = mnemonic.strip_suffix("_e64").unwrap_or(mnemonic);
    let [first, _] = index().get(m)?;
    ALL.get(usize::from((*first)?))
}

/// The instruction by mnemonic as `target` has it (None where the target
/// lacks it).
pub fn lookup_for(target: Target, mnemonic: &str) -> Option<&'static MfmaInfo> {
    let m = mnemonic.strip_suffix("_e64").unwrap_or(mnemonic);
    index()
        .get(m)?
        .iter()
        .flatten()
        .filter_map(|&n| ALL.get(usize::from(n)))
        .find(|info| info.on(target))
}
