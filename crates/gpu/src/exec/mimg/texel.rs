//! Image data formats: a texel's bytes to its components and back
//! (`DATA_FORMAT` gives the component widths, `NUM_FORMAT` how each is
//! read).
//!
//! Data formats (`IMG_DATA_FORMAT`, the name lists components from the
//! most significant; `x` is in the lowest bits): 8 (1), 16 (2), 8_8 (3),
//! 32 (4), 16_16 (5), 10_11_11 (6), 11_11_10 (7), 10_10_10_2 (8),
//! 2_10_10_10 (9), 8_8_8_8 (10), 32_32 (11), 16_16_16_16 (12), 32_32_32
//! (13), 32_32_32_32 (14), 5_6_5 (16), 1_5_5_5 (17), 5_5_5_1 (18),
//! 4_4_4_4 (19). Numeric formats (`IMG_NUM_FORMAT`): unorm (0), snorm (1),
//! uscaled (2), sscaled (3), uint (4), sint (5), float (7), srgb (9).
//!
//! A decoded texel is four 32-bit values, `x` first: f32 bits for the
//! normalised, scaled and float formats, integers for uint/sint; missing
//! components read as 0 (`x`, `y`, `z`) and 1 (`w`).

use crate::exec::op::Fault;
use crate::float::{Rounding, f16_to_f32, f32_to_f16};

pub mod num {
    pub const UNORM: u8 = 0;
    pub const SNORM: u8 = 1;
    pub const USCALED: u8 = 2;
    pub const SSCALED: u8 = 3;
    pub const UINT: u8 = 4;
    pub const SINT: u8 = 5;
    pub const FLOAT: u8 = 7;
    pub const SRGB: u8 = 9;
}

/// An image element format.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Format {
    pub data: u8,
    pub num: u8,
    /// Component widths in bits, `x` first.
    pub comps: &'static [u8],
    /// Bytes per element.
    pub bytes: u32,
}

fn data_name(d: u32) -> String {
    let n = match d {
        0 => "INVALID",
        1 => "8",
        2 => "16",
        3 => "8_8",
        4 => "32",
        5 => "16_16",
        6 => "10_11_11",
        7 => "11_11_10",
        8 => "10_10_10_2",
        9 => "2_10_10_10",
        10 => "8_8_8_8",
        11 => "32_32",
        12 => "16_16_16_16",
        13 => "32_32_32",
        14 => "32_32_32_32",
        16 => "5_6_5",
        17 => "1_5_5_5",
        18 => "5_5_5_1",
        19 => "4_4_4_4",
        20 => "8_24",
        21 => "24_8",
        22 => "X24_8_32",
        _ => return format!("{d}"),
    };
    format!("{n} ({d})")
}

fn num_name(n: u32) -> String {
    let s = match n {
        0 => "UNORM",
        1 => "SNORM",
        2 => "USCALED",
        3 => "SSCALED",
        4 => "UINT",
        5 => "SINT",
        7 => "FLOAT",
        9 => "SRGB",
        _ => return format!("{n}"),
    };
    format!("{s} ({n})")
}

impl Format {
    /// The format of `DATA_FORMAT` / `NUM_FORMAT`, or the fault naming it.
    pub fn new(data: u32, num: u32) -> Result<Format, Fault> {
        let comps: &'static [u8] = match data {
            1 => &[8],
            2 => &[16],
            3 => &[8, 8],
            4 => &[32],
            5 => &[16, 16],
            6 => &[11, 11, 10],
            7 => &[10, 11, 11],
            8 => &[2, 10, 10, 10],
            9 => &[10, 10, 10, 2],
            10 => &[8, 8, 8, 8],
            11 => &[32, 32],
            12 => &[16, 16, 16, 16],
            13 => &[32, 32, 32],
            14 => &[32, 32, 32, 32],
            16 => &[5, 6, 5],
            17 => &[5, 5, 5, 1],
            18 => &[1, 5, 5, 5],
            19 => &[4, 4, 4, 4],
            _ => &[],
        };
        let bad = |why: &str| {
            Fault::Invalid(format!(
                "image format DATA_FORMAT {} NUM_FORMAT {} is not supported by the emulator ({why})",
                data_name(data),
                num_name(num)
            ))
        };
        if comps.is_empty() {
            return Err(bad("unknown or unsupported data format"));
        }
        let ok = match num as u8 {
            num::UNORM | num::SNORM | num::USCALED | num::SSCALED | num::UINT | num::SINT => {
                // 32-bit components are read as integers or floats only.
                !comps.contains(&32) || matches!(num as u8, num::UINT | num::SINT)
            }
            // Float: 16 and 32-bit components, and the packed 10/11-bit
            // floats.
            num::FLOAT => matches!(data, 2 | 4 | 5 | 6 | 7 | 11 | 12 | 13 | 14),
            // sRGB: 8-bit colour components.
            num::SRGB => matches!(data, 1 | 3 | 10),
            _ => false,
        };
        if !ok {
            return Err(bad("numeric format not valid for this data format"));
        }
        let bits: u32 = comps.iter().map(|&b| u32::from(b)).sum();
        Ok(Format {
            data: data as u8,
            num: num as u8,
            comps,
            bytes: bits / 8,
        })
    }

    /// Whether components are integers (uint/sint) rather than floats.
    pub fn is_int(&self) -> bool {
        matches!(self.num, num::UINT | num::SINT)
    }

    /// The neutral "one" of this format's results (1.0 or integer 1).
    pub fn one(&self) -> u32 {
        if self.is_int() { 1 } else { 1.0f32.to_bits() }
    }

    /// Decodes an element's bytes (little-endian, `bytes` of them).
    pub fn decode(&self, raw: &[u8]) -> [u32; 4] {
        let mut out = [0, 0, 0, self.one()];
        let mut bit = 0u32;
        for (i, &w) in self.comps.iter().enumerate() {
            let w = u32::from(w);
            let v = bits(raw, bit, w);
            bit += w;
            out[i] = self.decode_comp(v, w, i);
        }
        out
    }

    fn decode_comp(&self, v: u32, w: u32, i: usize) -> u32 {
        let max = if w == 32 { u32::MAX } else { (1u32 << w) - 1 };
        let sext = |v: u32| ((v << (32 - w)) as i32) >> (32 - w);
        let f = match self.num {
            num::UNORM => v as f32 / max as f32,
            num::SNORM => (sext(v) as f32 / (max >> 1) as f32).max(-1.0),
            num::USCALED => v as f32,
            num::SSCALED => sext(v) as f32,
            num::UINT => return v,
            num::SINT => return sext(v) as u32,
            num::SRGB => {
                let c = v as f32 / max as f32;
                if i == 3 { c } else { srgb_to_linear(c) }
            }
            _ => match w {
                32 => return v,
                16 => f16_to_f32(v as u16),
                11 => small_float(v, 6),
                _ => small_float(v, 5),
            },
        };
        f.to_bits()
    }

    /// Encodes components (`x` first; f32 bits for float formats) into an
    /// element, or the fault naming a format that cannot be written.
    pub fn encode(&self, v: [u32; 4]) -> Result<Vec<u8>, Fault> {
        let mut out = vec![0u8; self.bytes as usize];
        let mut bit = 0u32;
        for (i, &w) in self.comps.iter().enumerate() {
            let w = u32::from(w);
            let c = self.encode_comp(v[i], w)?;
            put_bits(&mut out, bit, w, c);
            bit += w;
        }
        Ok(out)
    }

    fn encode_comp(&self, v: u32, w: u32) -> Result<u32, Fault> {
        let max = if w == 32 { u32::MAX } else { (1u32 << w) - 1 };
        let smax = (max >> 1) as i64;
        let f = f32::from_bits(v);
        let rne = |x: f32| x.round_ties_even();
        Ok(match self.num {
            num::UNORM => {
                let x = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
                rne(x * max as f32) as u32
            }
            num::SNORM => {
                let x = if f.is_nan() { 0.0 } else { f.clamp(-1.0, 1.0) };
                (rne(x * smax as f32) as i32 as u32) & max
            }
            num::USCALED => (rne(f).clamp(0.0, max as f32) as u32) & max,
            num::SSCALED => (rne(f).clamp(-(smax as f32) - 1.0, smax as f32) as i32 as u32) & max,
            num::UINT => v.min(max),
            num::SINT => ((v as i32 as i64).clamp(-smax - 1, smax) as u32) & max,
            num::FLOAT if w == 32 => v,
            num::FLOAT if w == 16 => u32::from(f32_to_f16(f, Rounding::NearestEven)),
            _ => {
                return Err(Fault::Invalid(format!(
                    "image store to format DATA_FORMAT {} NUM_FORMAT {}: the emulator does not \
                     write this format",
                    data_name(u32::from(self.data)),
                    num_name(u32::from(self.num))
                )));
            }
        })
    }
}

/// `w` bits of `raw` from bit `lo`.
fn bits(raw: &[u8], lo: u32, w: u32) -> u32 {
    let mut v = 0u128;
    for (i, b) in raw.iter().enumerate().take(16) {
        v |= u128::from(*b) << (8 * i);
    }
    ((v >> lo) & ((1u128 << w) - 1)) as u32
}

fn put_bits(out: &mut [u8], lo: u32, w: u32, c: u32) {
    for i in 0..w {
        let b = lo + i;
        let byte = &mut out[(b / 8) as usize];
        let m = 1u8 << (b % 8);
        if c >> i & 1 != 0 {
            *byte |= m;
        } else {
            *byte &= !m;
        }
    }
}

/// An unsigned float with a 5-bit exponent (bias 15) and `mant` mantissa
/// bits (the 11- and 10-bit components of 10_11_11 / 11_11_10).
fn small_float(v: u32, mant: u32) -> f32 {
    let e = (v >> mant) & 31;
    let m = v & ((1 << mant) - 1);
    let scale = (1u32 << mant) as f32;
    match e {
        0 => m as f32 / scale * 2f32.powi(-14),
        31 if m == 0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + m as f32 / scale) * 2f32.powi(e as i32 - 15),
    }
}

/// The sRGB transfer function's inverse (IEC 61966-2-1).
fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}
