//! Bit-exact low-precision number formats and their conversions from and to
//! f32: IEEE half (f16), bfloat16, the FP8 formats of CDNA3 (E4M3FNUZ,
//! E5M2FNUZ) and CDNA4 (OCP E4M3FN, E5M2), the OCP MX formats FP6 (E2M3,
//! E3M2) and FP4 (E2M1), and the E8M0 scale format.
//!
//! Every format is a [`Format`]: a sign bit (except E8M0), `exp_bits`
//! exponent bits with a bias, `man_bits` mantissa bits, and one of a few
//! conventions for special values ([`Specials`]). One generic converter
//! handles them all, in integer arithmetic on the f32 bit pattern:
//!
//! - rounding: [`Rounding`] (the four IEEE modes) or stochastic rounding
//!   ([`Format::encode_sr`], as `V_CVT_SR_FP8_F32` / `V_CVT_SR_BF8_F32` and
//!   the gfx950 `V_CVT_SR_*` / `V_CVT_SCALEF32_SR_*` instructions);
//! - saturation: [`Convert::saturate`] is the clamp bit of the conversion
//!   instructions (`V_CVT_PK_FP8_F32 ... clamp`): finite values beyond the
//!   largest finite value, and infinities, become the largest finite value
//!   of the same sign, NaN stays NaN. Without it, overflow follows the
//!   format: IEEE formats go to infinity, formats without infinity go to NaN
//!   (OCP E4M3FN: `S.1111.111`; FNUZ: `0x80`), and FP6/FP4, which have
//!   neither, always saturate;
//! - denormals: [`Convert::flush_denormals`] flushes denormal inputs and
//!   denormal results to zero of the same sign (the FP16 denormal mode of
//!   the MODE register).
//! - NaN inputs give a quiet NaN of the same sign; f16 and bf16 keep the
//!   top payload bits, the 8-bit formats give their canonical NaN (FNUZ:
//!   `0x80`, E8M0: `0xFF`); FP6/FP4, which have no NaN, give the largest
//!   magnitude with the NaN's sign.
//!
//! The reference for round-to-nearest-even is the `ml_dtypes` Python
//! package (and numpy for f16); see `scripts/gen/float_ref.py` and the tests.

pub mod isa;
#[cfg(test)]
mod tests;

/// IEEE 754 rounding-direction attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Rounding {
    /// Round to nearest, ties to even.
    #[default]
    NearestEven,
    /// Round toward zero (truncate).
    TowardZero,
    /// Round toward +infinity.
    TowardPositive,
    /// Round toward -infinity.
    TowardNegative,
}

/// How special values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Specials {
    /// IEEE 754: the all-ones exponent holds infinity (mantissa 0) and NaNs.
    Ieee,
    /// OCP E4M3FN: no infinities; only `S.1111.111` is NaN.
    NanOnly,
    /// FNUZ: no infinities and no negative zero; `0x80` (negative zero's
    /// encoding) is the single NaN.
    Fnuz,
    /// FP6/FP4: every encoding is a finite number.
    FiniteOnly,
    /// E8M0: unsigned power of two 2^(e-127); no zero, no denormals, `0xFF` is NaN.
    Exponent,
}

/// A binary floating-point format of at most 16 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Format {
    pub name: &'static str,
    pub exp_bits: u32,
    pub man_bits: u32,
    pub bias: i32,
    pub specials: Specials,
}

/// IEEE 754 binary16.
pub const F16: Format = Format::new("f16", 5, 10, 15, Specials::Ieee);
/// bfloat16: the top half of an f32.
pub const BF16: Format = Format::new("bf16", 8, 7, 127, Specials::Ieee);
/// FP8 E4M3 FNUZ (gfx942 `fp8`), max 240.
pub const E4M3FNUZ: Format = Format::new("e4m3fnuz", 4, 3, 8, Specials::Fnuz);
/// FP8 E5M2 FNUZ (gfx942 `bf8`), max 57344.
pub const E5M2FNUZ: Format = Format::new("e5m2fnuz", 5, 2, 16, Specials::Fnuz);
/// OCP FP8 E4M3FN (gfx950 `fp8`), max 448.
pub const E4M3FN: Format = Format::new("e4m3fn", 4, 3, 7, Specials::NanOnly);
/// OCP FP8 E5M2 (gfx950 `bf8`), max 57344, with infinities.
pub const E5M2: Format = Format::new("e5m2", 5, 2, 15, Specials::Ieee);
/// OCP MX FP6 E2M3, max 7.5.
pub const E2M3: Format = Format::new("e2m3", 2, 3, 1, Specials::FiniteOnly);
/// OCP MX FP6 E3M2, max 28.
pub const E3M2: Format = Format::new("e3m2", 3, 2, 3, Specials::FiniteOnly);
/// OCP MX FP4 E2M1, max 6.
pub const E2M1: Format = Format::new("e2m1", 2, 1, 1, Specials::FiniteOnly);
/// OCP MX E8M0 scale: 2^(e-127), 0xFF NaN.
pub const E8M0: Format = Format::new("e8m0", 8, 0, 127, Specials::Exponent);

/// Every format, for iteration.
pub const ALL: [Format; 10] = [
    F16, BF16, E4M3FNUZ, E5M2FNUZ, E4M3FN, E5M2, E2M3, E3M2, E2M1, E8M0,
];

/// Conversion options for [`Format::encode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Convert {
    pub rounding: Rounding,
    /// Clamp out-of-range values and infinities to the largest finite value.
    pub saturate: bool,
    /// Flush denormal inputs and results to signed zero.
    pub flush_denormals: bool,
}

impl Convert {
    /// Round to nearest even, no saturation, denormals kept.
    pub const RNE: Convert = Convert {
        rounding: Rounding::NearestEven,
        saturate: false,
        flush_denormals: false,
    };

    /// Round to nearest even with saturation.
    pub const RNE_SAT: Convert = Convert {
        rounding: Rounding::NearestEven,
        saturate: true,
        flush_denormals: false,
    };

    pub const fn with(rounding: Rounding) -> Convert {
        Convert {
            rounding,
            saturate: false,
            flush_denormals: false,
        }
    }
}

/// How the dropped low bits decide the rounding increment.
#[derive(Clone, Copy)]
enum Round {
    Mode(Rounding),
    Stochastic(u32),
}

const fn mask(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

impl Format {
    pub const fn new(
        name: &'static str,
        exp_bits: u32,
        man_bits: u32,
        bias: i32,
        specials: Specials,
    ) -> Format {
        // The converter works on f32 bit patterns: at most f32's exponent
        // width, at most 10 mantissa bits, at most 16 bits in all.
        assert!(exp_bits >= 1 && exp_bits <= 8 && man_bits <= 10);
        assert!(exp_bits + man_bits <= 15);
        Format {
            name,
            exp_bits,
            man_bits,
            bias,
            specials,
        }
    }

    /// Whether the format has a sign bit.
    pub const fn signed(self) -> bool {
        !matches!(self.specials, Specials::Exponent)
    }

    /// Width of an encoding in bits.
    pub const fn bits(self) -> u32 {
        self.exp_bits + self.man_bits + self.signed() as u32
    }

    /// The sign bit's mask (0 for unsigned formats).
    pub const fn sign_mask(self) -> u32 {
        if self.signed() {
            1 << (self.exp_bits + self.man_bits)
        } else {
            0
        }
    }

    const fn mag_mask(self) -> u32 {
        mask(self.exp_bits + self.man_bits)
    }

    const fn has_denormals(self) -> bool {
        !matches!(self.specials, Specials::Exponent)
    }

    /// Unbiased exponent of the smallest normal number.
    const fn emin(self) -> i32 {
        if self.has_denormals() {
            1 - self.bias
        } else {
            -self.bias
        }
    }

    /// Magnitude bits of the largest finite value.
    pub const fn max_finite_mag(self) -> u32 {
        let all = self.mag_mask();
        match self.specials {
            Specials::Ieee => all - (1 << self.man_bits),
            Specials::NanOnly | Specials::Exponent => all - 1,
            Specials::Fnuz | Specials::FiniteOnly => all,
        }
    }

    /// The largest finite value as an f32.
    pub fn max_finite(self) -> f32 {
        self.decode(self.max_finite_mag())
    }

    /// The canonical NaN encoding of a given sign (positive for FNUZ and
    /// E8M0). FP6/FP4 have no NaN: they return the largest finite value of
    /// that sign, which is also what NaN inputs convert to.
    pub const fn nan(self, negative: bool) -> u32 {
        let sign = if negative { self.sign_mask() } else { 0 };
        match self.specials {
            Specials::Ieee => {
                sign | (self.mag_mask() & !mask(self.man_bits)) | (1 << self.man_bits) >> 1
            }
            Specials::NanOnly => sign | self.mag_mask(),
            Specials::Fnuz => self.sign_mask(),
            Specials::FiniteOnly => sign | self.mag_mask(),
            Specials::Exponent => self.mag_mask(),
        }
    }

    /// Whether an encoding is a NaN.
    pub const fn is_nan(self, bits: u32) -> bool {
        let mag = bits & self.mag_mask();
        match self.specials {
            Specials::Ieee => {
                mag & !mask(self.man_bits) == self.mag_mask() & !mask(self.man_bits)
                    && mag & mask(self.man_bits) != 0
            }
            Specials::NanOnly | Specials::Exponent => mag == self.mag_mask(),
            Specials::Fnuz => bits & mask(self.bits()) == self.sign_mask(),
            Specials::FiniteOnly => false,
        }
    }

    /// Decodes an encoding (the low [`bits`](Self::bits) bits of `bits`) to
    /// f32; exact, since every value of these formats is an f32 value.
    /// NaNs decode to quiet f32 NaNs of the same sign carrying the payload.
    pub fn decode(self, bits: u32) -> f32 {
        self.decode_with(bits, false)
    }

    /// Like [`decode`](Self::decode), but denormals decode to signed zero.
    pub fn decode_ftz(self, bits: u32) -> f32 {
        self.decode_with(bits, true)
    }

    fn decode_with(self, bits: u32, ftz: bool) -> f32 {
        let bits = bits & mask(self.bits());
        let m = self.man_bits;
        let neg = bits & self.sign_mask() != 0;
        let sign = if neg { 0x8000_0000u32 } else { 0 };
        let mag = bits & self.mag_mask();
        let exp = mag >> m;
        let man = mag & mask(m);
        if self.is_nan(bits) {
            return f32::from_bits(sign | 0x7fc0_0000 | (man << (23 - m)));
        }
        if self.specials == Specials::Ieee && exp == mask(self.exp_bits) {
            return f32::from_bits(sign | 0x7f80_0000);
        }
        let (sig, e) = if exp == 0 && self.has_denormals() {
            if ftz || man == 0 {
                return f32::from_bits(sign);
            }
            (man, self.emin() - m as i32)
        } else {
            (man | (1 << m), exp as i32 - self.bias - m as i32)
        };
        // sig * 2^e, exactly representable in f32 (e >= -149 - 23 here, and
        // sig has at most 11 bits); compose in f64 to stay exact.
        let v = f64::from(sig) * pow2(e);
        let v = v as f32;
        if neg { -v } else { v }
    }

    /// Converts an f32 to this format (round per `c.rounding`).
    pub fn encode(self, x: f32, c: Convert) -> u32 {
        self.encode_with(x, Round::Mode(c.rounding), c.saturate, c.flush_denormals)
    }

    /// Converts an f32 with round to nearest even, no saturation.
    pub fn encode_rne(self, x: f32) -> u32 {
        self.encode(x, Convert::RNE)
    }

    /// Converts an f32 with stochastic rounding driven by `rand`.
    ///
    /// The f32 significand (24 bits with the hidden bit) is aligned to the
    /// result's exponent (for a denormal result the extra low bits are
    /// truncated first), then the low `23 - man_bits` bits of `rand` are
    /// added to the `23 - man_bits` bits that do not fit, and the carry out
    /// of them rounds the magnitude up. So the probability of rounding up
    /// equals the discarded fraction, and `rand = 0` truncates.
    /// `c.rounding` is ignored.
    pub fn encode_sr(self, x: f32, rand: u32, c: Convert) -> u32 {
        self.encode_with(x, Round::Stochastic(rand), c.saturate, c.flush_denormals)
    }

    fn encode_with(self, x: f32, round: Round, saturate: bool, ftz: bool) -> u32 {
        let bits = x.to_bits();
        let neg = bits >> 31 != 0;
        let abs = bits & 0x7fff_ffff;
        let m = self.man_bits;
        let sign = if neg { self.sign_mask() } else { 0 };
        let max = sign | self.max_finite_mag();
        let exponent_only = self.specials == Specials::Exponent;

        if abs > 0x7f80_0000 {
            // 16-bit formats keep the top payload bits (quieted); the
            // narrower ones produce their canonical NaN.
            return match self.specials {
                Specials::Ieee if self.bits() == 16 => {
                    sign | self.nan(false) | ((abs & 0x007f_ffff) >> (23 - m))
                }
                _ => self.nan(neg),
            };
        }
        let is_zero = abs == 0 || (ftz && abs < 0x0080_0000);
        if exponent_only && (neg || is_zero) {
            return self.nan(false);
        }
        if abs == 0x7f80_0000 {
            return match self.specials {
                _ if saturate => max,
                Specials::Ieee => sign | (self.mag_mask() & !mask(m)),
                Specials::FiniteOnly => max,
                _ => self.nan(neg),
            };
        }
        if is_zero {
            return self.zero(neg);
        }

        // |x| = sig * 2^e with sig < 2^24.
        let (sig, e) = if abs >> 23 == 0 {
            (abs, -149)
        } else {
            ((abs & 0x007f_ffff) | 0x0080_0000, (abs >> 23) as i32 - 150)
        };
        let ex = 31 - sig.leading_zeros() as i32 + e; // floor(log2 |x|)
        let mut q = ex.max(self.emin()) - m as i32; // exponent of the result's ulp
        let shift = q - e; // low bits of sig below the ulp
        let mut n: u64 = if shift <= 0 {
            u64::from(sig) << (-shift).min(40)
        } else {
            let sig = u64::from(sig);
            let (n, rem, sticky_half) = if shift >= 40 {
                (0, sig, 0u64) // rem < half
            } else {
                (
                    sig >> shift,
                    sig & ((1u64 << shift) - 1),
                    1u64 << (shift - 1),
                )
            };
            let up = match round {
                Round::Mode(Rounding::NearestEven) => {
                    shift < 40 && (rem > sticky_half || (rem == sticky_half && n & 1 == 1))
                }
                Round::Mode(Rounding::TowardZero) => false,
                Round::Mode(Rounding::TowardPositive) => rem != 0 && !neg,
                Round::Mode(Rounding::TowardNegative) => rem != 0 && neg,
                Round::Stochastic(r) => {
                    let d = (23 - m as i32).clamp(0, shift) as u32;
                    let pre = (shift - d as i32) as u32;
                    let t = if pre >= 32 {
                        0
                    } else {
                        u64::from(sig as u32 >> pre)
                    };
                    let dm = u64::from(mask(d));
                    (t & dm) + (u64::from(r) & dm) > dm
                }
            };
            n + u64::from(up)
        };

        if n == 0 {
            return if exponent_only { 0 } else { self.zero(neg) };
        }
        if n >> (m + 1) != 0 {
            n >>= 1;
            q += 1;
        }
        let mag: u64 = if n >> m == 0 {
            // Denormal (only at the minimum exponent).
            if ftz {
                return self.zero(neg);
            }
            n
        } else {
            let field = i64::from(q) + i64::from(m) + i64::from(self.bias);
            ((field as u64) << m) | (n & u64::from(mask(m)))
        };
        if mag > u64::from(self.max_finite_mag()) {
            let toward_zero = match round {
                Round::Mode(Rounding::TowardZero) => true,
                Round::Mode(Rounding::TowardPositive) => neg,
                Round::Mode(Rounding::TowardNegative) => !neg,
                _ => false,
            };
            return match self.specials {
                _ if saturate || toward_zero => max,
                Specials::Ieee => sign | (self.mag_mask() & !mask(m)),
                Specials::FiniteOnly => max,
                _ => self.nan(neg),
            };
        }
        sign | mag as u32
    }

    fn zero(self, neg: bool) -> u32 {
        if neg && self.specials != Specials::Fnuz {
            self.sign_mask()
        } else {
            0
        }
    }
}

/// 2^e as an f64, exact for -1074 <= e <= 1023.
fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// f32 to IEEE half with the given rounding.
pub fn f32_to_f16(x: f32, rounding: Rounding) -> u16 {
    F16.encode(x, Convert::with(rounding)) as u16
}

/// IEEE half to f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    F16.decode(h.into())
}

/// f32 to bfloat16 with the given rounding.
pub fn f32_to_bf16(x: f32, rounding: Rounding) -> u16 {
    BF16.encode(x, Convert::with(rounding)) as u16
}

/// bfloat16 to f32 (exact).
pub fn bf16_to_f32(h: u16) -> f32 {
    BF16.decode(h.into())
}
