//! Typed buffer accesses: `buffer_load_format_*`, `buffer_store_format_*`
//! (format from the V#) and `tbuffer_*` (format from the instruction's
//! `dfmt` / `nfmt`), ISA manual "Buffer Data Formats" / "Buffer Numeric
//! Formats".
//!
//! Data formats: 8, 16, 8_8, 32, 16_16, 10_11_11, 11_11_10, 10_10_10_2,
//! 2_10_10_10, 8_8_8_8, 32_32, 16_16_16_16, 32_32_32, 32_32_32_32 (the
//! name lists components from the most significant; `x` is the lowest
//! bits). Numeric formats: unorm, snorm, uscaled, sscaled, uint, sint,
//! float (the packed 10/11-bit float formats convert on loads only).
//! Missing components read as 0 (`x`, `y`, `z`) and 1 (`w`); the V#
//! `dst_sel` swizzle is not applied (compute resources use the identity).
//! A format access is range checked as a whole element; a store writes
//! only the components the instruction supplies.

use super::addr::{Vsharp, addrs};
use super::{read, seg, write};
use crate::exec::op::{Ctx, ExecFn, Fault, Op};
use crate::exec::wave::Src;
use crate::float::{Rounding, f16_to_f32, f32_to_f16};

/// The semantic function of a format access named `rest` (the mnemonic
/// after `buffer_` / `tbuffer_`); `typed` for the MTBUF forms.
pub(crate) fn select(rest: &str, typed: bool) -> Option<ExecFn> {
    let (store, t) = if let Some(t) = rest.strip_prefix("load_format_") {
        (false, t)
    } else {
        (true, rest.strip_prefix("store_format_")?)
    };
    let (d16, comps) = if let Some(c) = t.strip_prefix("d16_hi_") {
        (2u8, c)
    } else if let Some(c) = t.strip_prefix("d16_") {
        (1, c)
    } else {
        (0, t)
    };
    let n = match comps {
        "x" => 1,
        "xy" => 2,
        "xyz" => 3,
        "xyzw" => 4,
        _ => return None,
    };
    macro_rules! inst {
        ($f:ident) => {
            match (typed, n, d16) {
                (false, 1, 0) => $f::<false, 1, 0> as ExecFn,
                (false, 2, 0) => $f::<false, 2, 0>,
                (false, 3, 0) => $f::<false, 3, 0>,
                (false, 4, 0) => $f::<false, 4, 0>,
                (false, 1, 1) => $f::<false, 1, 1>,
                (false, 2, 1) => $f::<false, 2, 1>,
                (false, 3, 1) => $f::<false, 3, 1>,
                (false, 4, 1) => $f::<false, 4, 1>,
                (false, _, _) => $f::<false, 1, 2>,
                (true, 1, 0) => $f::<true, 1, 0>,
                (true, 2, 0) => $f::<true, 2, 0>,
                (true, 3, 0) => $f::<true, 3, 0>,
                (true, 4, 0) => $f::<true, 4, 0>,
                (true, 1, 1) => $f::<true, 1, 1>,
                (true, 2, 1) => $f::<true, 2, 1>,
                (true, 3, 1) => $f::<true, 3, 1>,
                (true, 4, 1) => $f::<true, 4, 1>,
                (true, _, _) => $f::<true, 1, 2>,
            }
        };
    }
    Some(if store {
        inst!(store_format)
    } else {
        inst!(load_format)
    })
}

/// Component bit widths of a data format, `x` first.
fn layout(dfmt: u8) -> Option<&'static [u32]> {
    Some(match dfmt {
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
        _ => return None,
    })
}

const UNORM: u8 = 0;
const SNORM: u8 = 1;
const USCALED: u8 = 2;
const SSCALED: u8 = 3;
const UINT: u8 = 4;
const SINT: u8 = 5;
// 7 is float (the remaining case of the conversions); 6 is reserved.

/// The format of the access: from the instruction (MTBUF) or the V#.
/// GFX11 has one 7-bit FORMAT field (the V#'s bits 108:102, the MTBUF
/// instruction's, which the lowering puts at `imm` bit 40), numbered as
/// LLVM's `BUF_FMT_*` table for the family, mapped here to GFX9's data
/// and numeric format pair.
fn format<const TYPED: bool>(c: &Ctx, op: &Op) -> Result<(&'static [u32], u8), Fault> {
    let (dfmt, nfmt) = if c.env.target.family() == rocjitsu_isa::Family::Gfx11 {
        let f = if TYPED {
            ((op.imm >> 40) & 0x7f) as usize
        } else {
            ((c.wave.s32(op.sdst.wrapping_add(3)) >> 12) & 0x7f) as usize
        };
        gfx11_format(f).ok_or_else(|| {
            Fault::Invalid(format!("buffer format {f} is not a valid GFX11 format"))
        })?
    } else if TYPED {
        (((op.imm >> 40) & 0xf) as u8, ((op.imm >> 48) & 7) as u8)
    } else {
        let r = Vsharp::read(c, op.sdst);
        (r.dfmt, r.nfmt)
    };
    match layout(dfmt) {
        Some(l) if nfmt != 6 => Ok((l, nfmt)),
        _ => Err(Fault::Invalid(format!(
            "buffer format dfmt {dfmt} nfmt {nfmt} is not a valid format"
        ))),
    }
}

/// GFX9's (data format, numeric format) of GFX11 FORMAT `f`, from the
/// name LLVM's table gives it (`[BUF_FMT_16_16_FLOAT]`; format 1, printed
/// as nothing, is the default `8_UNORM`).
fn gfx11_format(f: usize) -> Option<(u8, u8)> {
    const DATA: [&str; 14] = [
        "8",
        "16",
        "8_8",
        "32",
        "16_16",
        "10_11_11",
        "11_11_10",
        "10_10_10_2",
        "2_10_10_10",
        "8_8_8_8",
        "32_32",
        "16_16_16_16",
        "32_32_32",
        "32_32_32_32",
    ];
    const NUM: [(&str, u8); 7] = [
        ("UNORM", 0),
        ("SNORM", 1),
        ("USCALED", 2),
        ("SSCALED", 3),
        ("UINT", 4),
        ("SINT", 5),
        ("FLOAT", 7),
    ];
    let name = match (*rocjitsu_isa::gfx11::tables::mubuf::FORMATS.get(f)?)? {
        "" => "8_UNORM",
        n => n.strip_prefix("[BUF_FMT_")?.strip_suffix(']')?,
    };
    let (data, num) = name.rsplit_once('_')?;
    let d = DATA.iter().position(|&x| x == data)? as u8 + 1;
    let n = NUM.iter().find(|(x, _)| *x == num)?.1;
    Some((d, n))
}

fn sext(v: u32, bits: u32) -> i32 {
    ((v << (32 - bits)) as i32) >> (32 - bits)
}

/// An unsigned float with a 5-bit exponent and `m` mantissa bits (the
/// 10- and 11-bit components) as f32.
fn small_float(v: u32, m: u32) -> f32 {
    let e = (v >> m) & 0x1f;
    let f = v & ((1 << m) - 1);
    match e {
        0 => f as f32 * (2f32).powi(-14 - m as i32),
        31 if f == 0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + f as f32 / (1 << m) as f32) * (2f32).powi(e as i32 - 15),
    }
}

/// A component's 32-bit register value.
fn to_reg(v: u32, bits: u32, nfmt: u8) -> u32 {
    let max = if bits == 32 {
        u32::MAX as f64
    } else {
        ((1u64 << bits) - 1) as f64
    };
    match nfmt {
        UNORM => ((f64::from(v) / max) as f32).to_bits(),
        SNORM => {
            let smax = (max / 2.0).floor();
            ((f64::from(sext(v, bits)) / smax).max(-1.0) as f32).to_bits()
        }
        USCALED => (v as f32).to_bits(),
        SSCALED => (sext(v, bits) as f32).to_bits(),
        UINT => v,
        SINT => sext(v, bits) as u32,
        _ => match bits {
            32 => v,
            16 => f16_to_f32(v as u16).to_bits(),
            11 => small_float(v, 6).to_bits(),
            10 => small_float(v, 5).to_bits(),
            _ => v,
        },
    }
}

/// A register value as a component's bits (stores).
fn from_reg(r: u32, bits: u32, nfmt: u8) -> Result<u32, Fault> {
    let mask = if bits == 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    };
    let f = f32::from_bits(r);
    let max = f64::from(mask);
    Ok(mask
        & match nfmt {
            UNORM => (f64::from(f).clamp(0.0, 1.0) * max).round_ties_even() as u32,
            SNORM => {
                let smax = (max / 2.0).floor();
                (f64::from(f).clamp(-1.0, 1.0) * smax).round_ties_even() as i32 as u32
            }
            USCALED => f as u32,
            SSCALED => f as i32 as u32,
            UINT | SINT => r,
            _ => match bits {
                32 => r,
                16 => u32::from(f32_to_f16(f, Rounding::NearestEven)),
                _ => {
                    return Err(Fault::Unsupported(
                        "buffer stores of packed 10/11-bit float formats",
                    ));
                }
            },
        })
}

/// Whether a numeric format gives float register values (D16 forms
/// convert them to half precision).
fn is_float(nfmt: u8) -> bool {
    !matches!(nfmt, UINT | SINT)
}

fn bits_at(b: &[u8; 16], at: u32, n: u32) -> u32 {
    let w = u128::from_le_bytes(*b);
    ((w >> at) & ((1u128 << n) - 1)) as u32
}

/// Format loads: `N` components per active lane into `vdst..` (D16 1:
/// packed halves; 2: one half-precision component in the high half).
fn load_format<const TYPED: bool, const N: usize, const D16: u8>(
    c: &mut Ctx,
    op: &Op,
) -> Result<(), Fault> {
    let exec = c.wave.exec();
    if exec == 0 {
        return Ok(());
    }
    let (lay, nfmt) = format::<TYPED>(c, op)?;
    let bytes = (lay.iter().sum::<u32>() / 8) as usize;
    let ad = addrs::<{ seg::BUFFER }>(c, op);
    let regs = if D16 == 1 { N.div_ceil(2) } else { N };
    let mut out = [[0u32; 64]; 4];
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let mut comp = [0u32; 4];
        if ad.limit[l] >= bytes as u64 {
            let mut b = [0u8; 16];
            read(c, ad.space, l, ad.a[l], &mut b[..bytes])?;
            let mut at = 0;
            for (i, &w) in lay.iter().enumerate() {
                comp[i] = to_reg(bits_at(&b, at, w), w, nfmt);
                at += w;
            }
            if lay.len() < 4 {
                comp[3] = if is_float(nfmt) { 1f32.to_bits() } else { 1 };
            }
        }
        let half = |v: u32| {
            if is_float(nfmt) {
                u32::from(f32_to_f16(f32::from_bits(v), Rounding::NearestEven))
            } else {
                v & 0xffff
            }
        };
        let old = |k: usize| {
            c.env
                .d16_keep(c.wave.vreg(op.vdst.wrapping_add(k as u16))[l])
        };
        match D16 {
            0 => out[..N].iter_mut().zip(comp).for_each(|(o, v)| o[l] = v),
            2 => out[0][l] = (old(0) & 0xffff) | (half(comp[0]) << 16),
            _ if N == 1 => out[0][l] = (old(0) & 0xffff_0000) | half(comp[0]),
            _ => {
                for k in 0..regs {
                    let hi = if 2 * k + 1 < N {
                        half(comp[2 * k + 1])
                    } else {
                        0
                    };
                    out[k][l] = half(comp[2 * k]) | (hi << 16);
                }
            }
        }
    }
    for (k, o) in out.iter().take(regs).enumerate() {
        c.wave.write_v(op.vdst.wrapping_add(k as u16), o, exec);
    }
    Ok(())
}

/// Format stores: the first `N` components of each active lane's element
/// from `src[1]..` (D16: from half-precision / 16-bit halves).
fn store_format<const TYPED: bool, const N: usize, const D16: u8>(
    c: &mut Ctx,
    op: &Op,
) -> Result<(), Fault> {
    let exec = c.wave.exec();
    if exec == 0 {
        return Ok(());
    }
    let (lay, nfmt) = format::<TYPED>(c, op)?;
    let bytes = (lay.iter().sum::<u32>() / 8) as usize;
    let ad = addrs::<{ seg::BUFFER }>(c, op);
    let Src::V(d) = op.src[1] else { return Ok(()) };
    for l in 0..64 {
        if exec >> l & 1 == 0 || ad.limit[l] < bytes as u64 {
            continue;
        }
        let mut b = [0u8; 16];
        read(c, ad.space, l, ad.a[l], &mut b[..bytes])?;
        let reg = |k: usize| c.wave.vreg(d.wrapping_add(k as u16))[l];
        let mut w = u128::from_le_bytes(b);
        let mut at = 0;
        for (i, &bits) in lay.iter().enumerate().take(N) {
            let r = match D16 {
                0 => reg(i),
                2 => reg(0) >> 16,
                _ => reg(i / 2) >> (16 * (i % 2)) & 0xffff,
            };
            let r = if D16 == 0 {
                r
            } else if is_float(nfmt) {
                f16_to_f32(r as u16).to_bits()
            } else if nfmt == SINT {
                r as u16 as i16 as i32 as u32
            } else {
                r
            };
            let v = from_reg(r, bits, nfmt)?;
            let m = ((1u128 << bits) - 1) << at;
            w = (w & !m) | (u128::from(v) << at);
            at += bits;
        }
        write(c, ad.space, l, ad.a[l], &w.to_le_bytes()[..bytes])?;
    }
    Ok(())
}
