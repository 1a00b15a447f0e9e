//! The FP8 conversion instructions' data movement: which bytes and words of
//! the destination they write, around the conversions of [`Format`]
//! (CDNA3 ISA, "VOP3 opcodes": `V_CVT_PK_FP8_F32`, `V_CVT_PK_BF8_F32`,
//! `V_CVT_SR_FP8_F32`, `V_CVT_SR_BF8_F32`, `V_CVT_F32_FP8`,
//! `V_CVT_F32_BF8`, `V_CVT_PK_F32_FP8`, `V_CVT_PK_F32_BF8`).
//!
//! On gfx942 `fp8` is E4M3FNUZ and `bf8` E5M2FNUZ; on gfx950 they are the
//! OCP formats E4M3FN and E5M2. The conversions round to nearest even (or
//! stochastically for the `SR` forms); the instruction's clamp bit is
//! [`Convert::saturate`].

use super::{Convert, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, Format};

/// The two 8-bit float kinds of the FP8 instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fp8Kind {
    /// `fp8`: 4 exponent bits, 3 mantissa bits.
    Fp8,
    /// `bf8`: 5 exponent bits, 2 mantissa bits.
    Bf8,
}

/// The format of `fp8`/`bf8` operands: FNUZ on gfx942 (`ocp == false`),
/// OCP on gfx950 (`ocp == true`).
pub const fn fp8_format(kind: Fp8Kind, ocp: bool) -> Format {
    match (kind, ocp) {
        (Fp8Kind::Fp8, false) => E4M3FNUZ,
        (Fp8Kind::Bf8, false) => E5M2FNUZ,
        (Fp8Kind::Fp8, true) => E4M3FN,
        (Fp8Kind::Bf8, true) => E5M2,
    }
}

/// `V_CVT_PK_{FP8,BF8}_F32`: converts `s0` to byte 0 and `s1` to byte 1 of
/// a 16-bit word written to the low (`high_word == false`) or high half of
/// `old` (op_sel[3] of VOP3), keeping the other half.
pub fn cvt_pk_f32(fmt: Format, s0: f32, s1: f32, old: u32, high_word: bool, clamp: bool) -> u32 {
    let c = Convert {
        saturate: clamp,
        ..Convert::RNE
    };
    let word = fmt.encode(s0, c) & 0xff | (fmt.encode(s1, c) & 0xff) << 8;
    if high_word {
        (old & 0x0000_ffff) | word << 16
    } else {
        (old & 0xffff_0000) | word
    }
}

/// `V_CVT_SR_{FP8,BF8}_F32`: converts `s0` with stochastic rounding driven
/// by `rand` (src1) into byte `byte & 3` of `old` (op_sel[3:2]), keeping
/// the other bytes.
pub fn cvt_sr_f32(fmt: Format, s0: f32, rand: u32, old: u32, byte: u32, clamp: bool) -> u32 {
    let c = Convert {
        saturate: clamp,
        ..Convert::RNE
    };
    let shift = (byte & 3) * 8;
    (old & !(0xff << shift)) | (fmt.encode_sr(s0, rand, c) & 0xff) << shift
}

/// `V_CVT_F32_{FP8,BF8}`: converts byte `byte & 3` of `src` (SDWA src0_sel
/// or VOP3 op_sel[1:0]) to f32.
pub fn cvt_f32(fmt: Format, src: u32, byte: u32) -> f32 {
    fmt.decode(src >> ((byte & 3) * 8) & 0xff)
}

/// `V_CVT_PK_F32_{FP8,BF8}`: converts the two bytes of the low
/// (`high_word == false`) or high word of `src` (op_sel[0]) to two f32,
/// the lower byte first.
pub fn cvt_pk_to_f32(fmt: Format, src: u32, high_word: bool) -> [f32; 2] {
    let w = if high_word { src >> 16 } else { src & 0xffff };
    [fmt.decode(w & 0xff), fmt.decode(w >> 8 & 0xff)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_per_target() {
        assert_eq!(fp8_format(Fp8Kind::Fp8, false).name, "e4m3fnuz");
        assert_eq!(fp8_format(Fp8Kind::Bf8, false).name, "e5m2fnuz");
        assert_eq!(fp8_format(Fp8Kind::Fp8, true).name, "e4m3fn");
        assert_eq!(fp8_format(Fp8Kind::Bf8, true).name, "e5m2");
    }

    #[test]
    fn pk_writes_one_word() {
        let f = E4M3FNUZ;
        // 1.0 = 0x40 and -2.0 = 0xc8 in E4M3FNUZ (bias 8).
        assert_eq!(
            cvt_pk_f32(f, 1.0, -2.0, 0xdead_beef, false, false),
            0xdead_c840
        );
        assert_eq!(
            cvt_pk_f32(f, 1.0, -2.0, 0xdead_beef, true, false),
            0xc840_beef
        );
        // OCP E4M3FN: 1.0 = 0x38.
        assert_eq!(cvt_pk_f32(E4M3FN, 1.0, 448.0, 0, false, false), 0x7e38);
        // Clamp saturates; without it overflow is NaN.
        assert_eq!(cvt_pk_f32(f, 1e6, -1e6, 0, false, true), 0xff7f);
        assert_eq!(cvt_pk_f32(f, 1e6, -1e6, 0, false, false), 0x8080);
    }

    #[test]
    fn sr_writes_one_byte() {
        let f = E5M2FNUZ;
        let one = f.encode_rne(1.0);
        assert_eq!(one, 0x40);
        for byte in 0..4 {
            let got = cvt_sr_f32(f, 1.0, 0x1234_5678, 0xaabb_ccdd, byte, false);
            let want = (0xaabb_ccddu32 & !(0xff << (8 * byte))) | one << (8 * byte);
            assert_eq!(got, want, "byte {byte}");
        }
        // 1.125 lies a half ulp above 1.0 in E5M2: rand decides.
        assert_eq!(cvt_sr_f32(f, 1.125, 0, 0, 0, false), 0x40);
        assert_eq!(cvt_sr_f32(f, 1.125, 0x0010_0000, 0, 0, false), 0x41);
        assert_eq!(cvt_sr_f32(f, 1.125, 0x000f_ffff, 0, 0, false), 0x40);
    }

    #[test]
    fn to_f32_selects_bytes() {
        let src = 0x80c8_3840u32;
        assert_eq!(cvt_f32(E4M3FNUZ, src, 0), 1.0);
        assert_eq!(cvt_f32(E4M3FNUZ, src, 2), -2.0);
        assert!(cvt_f32(E4M3FNUZ, src, 3).is_nan());
        assert_eq!(cvt_f32(E4M3FN, src, 1), 1.0);
        assert_eq!(cvt_f32(E4M3FN, src, 5), 1.0); // byte & 3
        assert_eq!(cvt_pk_to_f32(E4M3FNUZ, src, false), [1.0, 0.5]);
        let hi = cvt_pk_to_f32(E4M3FNUZ, src, true);
        assert_eq!(hi[0], -2.0);
        assert!(hi[1].is_nan());
    }
}
