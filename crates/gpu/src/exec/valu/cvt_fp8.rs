//! Low-precision conversions: FP8/BF8 (gfx942 FNUZ, gfx950 and gfx1201 OCP) and the
//! gfx950 `v_cvt_scalef32_*` family with FP8, BF8, FP6 (E2M3), BF6 (E3M2)
//! and FP4 (E2M1) (CDNA3 / CDNA4 ISA, "VOP3A instructions").
//!
//! The number formats and their roundings are [`crate::float`]'s. The
//! scaled conversions take an f32 scale operand of which only the biased
//! exponent `e` counts (an E8M0 scale 2^(e - 127)): conversions to the
//! narrow format divide by the scale before rounding, conversions from it
//! multiply after decoding. Conversions to a narrow format round to
//! nearest even (or stochastically for `sr`); the scaled ones saturate
//! when the VOP3 clamp bit is set, the unscaled ones ignore clamp. Stochastic rounding consumes the seed as
//! [`crate::float::Format::encode_sr`] does; packed stochastic forms
//! advance the seed with `V_PRNG_B32` between elements.

use super::float::*;
use super::*;
use crate::exec::op::{Ctx, Fault, Op};
use crate::float::isa::{Fp8Kind, fp8_format};
use crate::float::{BF16, Convert, E2M1, E2M3, E3M2, Format};
use rocjitsu_isa::Target;
use std::sync::OnceLock;

/// The semantic function of a low-precision conversion base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    const F8: u8 = 0;
    const B8: u8 = 1;
    const F6: u8 = 2;
    const B6: u8 = 3;
    const F4: u8 = 4;
    const W32: u8 = 0;
    const W16: u8 = 1;
    const WB16: u8 = 2;
    Some(match name {
        "v_cvt_f32_fp8" => cvt_f32_f8::<F8>,
        "v_cvt_f32_bf8" => cvt_f32_f8::<B8>,
        "v_cvt_pk_f32_fp8" => cvt_pk_f32_f8::<F8>,
        "v_cvt_pk_f32_bf8" => cvt_pk_f32_f8::<B8>,
        "v_cvt_pk_fp8_f32" => cvt_pk_f8_f32::<F8>,
        "v_cvt_pk_bf8_f32" => cvt_pk_f8_f32::<B8>,
        "v_cvt_sr_fp8_f32" => cvt_sr_f8_f32::<F8>,
        "v_cvt_sr_bf8_f32" => cvt_sr_f8_f32::<B8>,
        // Scaled, to narrow formats.
        "v_cvt_scalef32_pk_fp8_f32" => scale_pk_f32::<F8>,
        "v_cvt_scalef32_pk_bf8_f32" => scale_pk_f32::<B8>,
        "v_cvt_scalef32_pk_fp4_f32" => scale_pk_f32::<F4>,
        "v_cvt_scalef32_pk_fp8_f16" => scale_pk_16::<F8, W16>,
        "v_cvt_scalef32_pk_bf8_f16" => scale_pk_16::<B8, W16>,
        "v_cvt_scalef32_pk_fp4_f16" => scale_pk_16::<F4, W16>,
        "v_cvt_scalef32_pk_fp8_bf16" => scale_pk_16::<F8, WB16>,
        "v_cvt_scalef32_pk_bf8_bf16" => scale_pk_16::<B8, WB16>,
        "v_cvt_scalef32_pk_fp4_bf16" => scale_pk_16::<F4, WB16>,
        "v_cvt_scalef32_sr_fp8_f32" => scale_sr_8::<F8, W32>,
        "v_cvt_scalef32_sr_bf8_f32" => scale_sr_8::<B8, W32>,
        "v_cvt_scalef32_sr_fp8_f16" => scale_sr_8::<F8, W16>,
        "v_cvt_scalef32_sr_bf8_f16" => scale_sr_8::<B8, W16>,
        "v_cvt_scalef32_sr_fp8_bf16" => scale_sr_8::<F8, WB16>,
        "v_cvt_scalef32_sr_bf8_bf16" => scale_sr_8::<B8, WB16>,
        "v_cvt_scalef32_sr_pk_fp4_f32" => scale_sr_pk_fp4::<W32>,
        "v_cvt_scalef32_sr_pk_fp4_f16" => scale_sr_pk_fp4::<W16>,
        "v_cvt_scalef32_sr_pk_fp4_bf16" => scale_sr_pk_fp4::<WB16>,
        // Scaled, from narrow formats.
        "v_cvt_scalef32_f32_fp8" => scale_from_byte::<F8, W32>,
        "v_cvt_scalef32_f32_bf8" => scale_from_byte::<B8, W32>,
        "v_cvt_scalef32_f16_fp8" => scale_from_byte::<F8, W16>,
        "v_cvt_scalef32_f16_bf8" => scale_from_byte::<B8, W16>,
        "v_cvt_scalef32_pk_f32_fp8" => scale_pk_from::<F8, W32>,
        "v_cvt_scalef32_pk_f32_bf8" => scale_pk_from::<B8, W32>,
        "v_cvt_scalef32_pk_f32_fp4" => scale_pk_from::<F4, W32>,
        "v_cvt_scalef32_pk_f16_fp8" => scale_pk_from::<F8, W16>,
        "v_cvt_scalef32_pk_f16_bf8" => scale_pk_from::<B8, W16>,
        "v_cvt_scalef32_pk_f16_fp4" => scale_pk_from::<F4, W16>,
        "v_cvt_scalef32_pk_bf16_fp8" => scale_pk_from::<F8, WB16>,
        "v_cvt_scalef32_pk_bf16_bf8" => scale_pk_from::<B8, WB16>,
        "v_cvt_scalef32_pk_bf16_fp4" => scale_pk_from::<F4, WB16>,
        // Scaled, 32 x 6-bit.
        "v_cvt_scalef32_2xpk16_fp6_f32" => scale_2xpk16::<F6>,
        "v_cvt_scalef32_2xpk16_bf6_f32" => scale_2xpk16::<B6>,
        "v_cvt_scalef32_sr_pk32_fp6_f32" => scale_pk32_to::<F6, W32, true>,
        "v_cvt_scalef32_sr_pk32_bf6_f32" => scale_pk32_to::<B6, W32, true>,
        "v_cvt_scalef32_pk32_fp6_f16" => scale_pk32_to::<F6, W16, false>,
        "v_cvt_scalef32_pk32_fp6_bf16" => scale_pk32_to::<F6, WB16, false>,
        "v_cvt_scalef32_pk32_bf6_f16" => scale_pk32_to::<B6, W16, false>,
        "v_cvt_scalef32_pk32_bf6_bf16" => scale_pk32_to::<B6, WB16, false>,
        "v_cvt_scalef32_sr_pk32_fp6_f16" => scale_pk32_to::<F6, W16, true>,
        "v_cvt_scalef32_sr_pk32_fp6_bf16" => scale_pk32_to::<F6, WB16, true>,
        "v_cvt_scalef32_sr_pk32_bf6_f16" => scale_pk32_to::<B6, W16, true>,
        "v_cvt_scalef32_sr_pk32_bf6_bf16" => scale_pk32_to::<B6, WB16, true>,
        "v_cvt_scalef32_pk32_f32_fp6" => scale_pk32_from::<F6, W32>,
        "v_cvt_scalef32_pk32_f32_bf6" => scale_pk32_from::<B6, W32>,
        "v_cvt_scalef32_pk32_f16_fp6" => scale_pk32_from::<F6, W16>,
        "v_cvt_scalef32_pk32_f16_bf6" => scale_pk32_from::<B6, W16>,
        "v_cvt_scalef32_pk32_bf16_fp6" => scale_pk32_from::<F6, WB16>,
        "v_cvt_scalef32_pk32_bf16_bf6" => scale_pk32_from::<B6, WB16>,
        _ => return None,
    })
}

/// The narrow format `F` (0 fp8, 1 bf8, 2 fp6, 3 bf6, 4 fp4) on the
/// executing target.
#[inline(always)]
fn narrow<const F: u8>(c: &Ctx) -> Format {
    let ocp = matches!(c.env.target, Target::Gfx950 | Target::Gfx1201);
    match F {
        0 => fp8_format(Fp8Kind::Fp8, ocp),
        1 => fp8_format(Fp8Kind::Bf8, ocp),
        2 => E2M3,
        3 => E3M2,
        _ => E2M1,
    }
}

/// Every code of format `F` on the executing target decoded to f32 (a
/// table built once per format).
fn decode_table<const F: u8>(c: &Ctx) -> &'static [f32; 256] {
    static TABLES: [OnceLock<[f32; 256]>; 7] = [const { OnceLock::new() }; 7];
    let ocp = matches!(c.env.target, Target::Gfx950 | Target::Gfx1201);
    let idx = match F {
        0 | 1 => usize::from(F) + if ocp { 2 } else { 0 },
        f => usize::from(f) + 2,
    };
    let fmt = narrow::<F>(c);
    TABLES
        .get(idx)
        .unwrap_or(&TABLES[0])
        .get_or_init(|| std::array::from_fn(|i| fmt.decode(i as u32)))
}

/// Bits per element of format `F`.
const fn width<const F: u8>() -> u32 {
    match F {
        0 | 1 => 8,
        2 | 3 => 6,
        _ => 4,
    }
}

/// Conversion options: round to nearest even, saturating with clamp.
#[inline(always)]
fn conv(op: &Op) -> Convert {
    Convert {
        saturate: op.mods.clamp,
        ..Convert::RNE
    }
}

/// `V_PRNG_B32`: the LFSR step that advances a stochastic-rounding seed.
#[inline(always)]
pub fn prng(x: u32) -> u32 {
    (x << 1) ^ if x >> 31 != 0 { 197 } else { 0 }
}

/// The scale exponent: the biased exponent field of an f32 scale.
#[inline(always)]
fn scale_exp(bits: u32) -> i32 {
    ((bits >> 23) & 0xff) as i32
}

/// `x / 2^(e - 127)` as f32 (exact unless beyond f32's range).
#[inline(always)]
fn scale_down(x: f32, e: i32) -> f32 {
    (f64::from(x) * pow2(127 - e)) as f32
}

/// A 16-bit source element (`W` 1: f16, 2: bf16) as f32.
#[inline(always)]
fn wide16<const W: u8>(h: u16) -> f32 {
    if W == 2 {
        f32::from_bits(u32::from(h) << 16)
    } else {
        crate::float::f16_to_f32(h)
    }
}

/// A decoded narrow value times 2^(e - 127) in the output format `W`
/// (0: f32 bits, 1: f16 bits, 2: bf16 bits), rounded to nearest even.
#[inline(always)]
fn widen<const W: u8>(v: f32, e: i32) -> u32 {
    let x = f64::from(v) * pow2(e - 127);
    match W {
        0 => (x as f32).to_bits(),
        1 => u32::from(f2h_exact(round_fmt(
            x,
            0.0,
            FMT16,
            crate::float::Rounding::NearestEven,
        ))),
        _ => BF16.encode(x as f32, Convert::RNE),
    }
}

/// Writes 32-bit lanes to `n` consecutive registers from `vdst`.
fn write_regs(c: &mut Ctx, op: &Op, regs: &[Lanes]) {
    let mask = lanes(c, op);
    for (k, r) in regs.iter().enumerate() {
        c.wave.write_v(op.vdst.wrapping_add(k as u16), r, mask);
    }
}

/// The `N` consecutive VGPRs of source `i`.
fn src_regs<const N: usize>(c: &Ctx, op: &Op, i: usize) -> Result<[Lanes; N], Fault> {
    match op.src.get(i) {
        Some(Src::V(r)) => Ok(std::array::from_fn(|k| {
            *c.wave.vreg(r.wrapping_add(k as u16))
        })),
        _ => Err(Fault::Invalid(format!(
            "{}: source {i} must be a vector register range",
            op.name()
        ))),
    }
}

// ---------------------------------------------------------------------------
// Unscaled FP8 (gfx942, gfx950).

/// `v_cvt_f32_{fp8,bf8}`: byte 0 after the SDWA select, or the byte chosen
/// by VOP3 op_sel[1:0].
pub fn cvt_f32_f8<const F: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = decode_table::<F>(c);
    let s0 = b32(c, op, 0);
    let byte = u32::from(op.mods.opsel & 3);
    let out: [f32; 64] = std::array::from_fn(|l| t[(s0[l] >> (8 * byte) & 0xff) as usize]);
    write_f32(c, op, &out);
    Ok(())
}

/// `v_cvt_pk_f32_{fp8,bf8}`: the two bytes of a word (SDWA word select or
/// VOP3 op_sel[0]) to an f32 pair.
pub fn cvt_pk_f32_f8<const F: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let t = decode_table::<F>(c);
    let s0 = b32(c, op, 0);
    let hi = op.mods.opsel & 1 != 0;
    let plain = op.mods.omod == 0 && !op.mods.clamp;
    let fin = |x: f32| if plain { x } else { f32_out(op, x) };
    let out: [u64; 64] = std::array::from_fn(|l| {
        let w = if hi { s0[l] >> 16 } else { s0[l] & 0xffff };
        let lo = fin(t[(w & 0xff) as usize]).to_bits();
        let hi = fin(t[(w >> 8 & 0xff) as usize]).to_bits();
        u64::from(lo) | u64::from(hi) << 32
    });
    write_b64(c, op, &out);
    Ok(())
}

/// `v_cvt_pk_{fp8,bf8}_f32`: two f32 into the op_sel[3] word, the other
/// word kept; round to nearest even, no saturation (the manual: "ignores
/// OMOD and clamp").
pub fn cvt_pk_f8_f32<const F: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fmt = narrow::<F>(c);
    let (s0, s1) = (f32v(c, op, 0), f32v(c, op, 1));
    let d = *c.wave.vreg(op.vdst);
    let hi = op.mods.opsel & 8 != 0;
    let out: Lanes =
        std::array::from_fn(|l| crate::float::isa::cvt_pk_f32(fmt, s0[l], s1[l], d[l], hi, false));
    write_b32(c, op, &out);
    Ok(())
}

/// `v_cvt_sr_{fp8,bf8}_f32`: stochastic rounding with seed S1 into byte
/// op_sel[3:2], the other bytes kept.
pub fn cvt_sr_f8_f32<const F: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fmt = narrow::<F>(c);
    let s0 = f32v(c, op, 0);
    let s1 = b32(c, op, 1);
    let d = *c.wave.vreg(op.vdst);
    let byte = u32::from(op.mods.opsel >> 2 & 3);
    let out: Lanes = std::array::from_fn(|l| {
        crate::float::isa::cvt_sr_f32(fmt, s0[l], s1[l], d[l], byte, false)
    });
    write_b32(c, op, &out);
    Ok(())
}

// ---------------------------------------------------------------------------
// Scaled conversions to narrow formats.

/// Places a packed result of `bits` bits into the destination: the
/// op_sel[3] word (16-bit results) or the op_sel[3:2] byte (8-bit).
#[inline(always)]
fn place(old: u32, v: u32, bits: u32, opsel: u8) -> u32 {
    let (sh, mask) = if bits == 16 {
        (u32::from(opsel >> 3 & 1) * 16, 0xffffu32)
    } else {
        (u32::from(opsel >> 2 & 3) * 8, 0xffu32)
    };
    (old & !(mask << sh)) | (v & mask) << sh
}

/// `v_cvt_scalef32_pk_{fp8,bf8,fp4}_f32`: S0, S1 scaled by S2 into a word
/// (8-bit formats) or byte (fp4) of the destination.
pub fn scale_pk_f32<const F: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fmt = narrow::<F>(c);
    let (s0, s1, s2) = (f32v(c, op, 0), f32v(c, op, 1), b32(c, op, 2));
    let d = *c.wave.vreg(op.vdst);
    let (w, cv) = (width::<F>(), conv(op));
    let out: Lanes = std::array::from_fn(|l| {
        let e = scale_exp(s2[l]);
        let a = fmt.encode(scale_down(s0[l], e), cv);
        let b = fmt.encode(scale_down(s1[l], e), cv);
        place(d[l], a | b << w, 2 * w, op.mods.opsel)
    });
    write_b32(c, op, &out);
    Ok(())
}

/// `v_cvt_scalef32_pk_{fp8,bf8,fp4}_{f16,bf16}`: the two halves of S0
/// scaled by S1.
pub fn scale_pk_16<const F: u8, const W: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fmt = narrow::<F>(c);
    let (s0, s1) = (b32(c, op, 0), b32(c, op, 1));
    let d = *c.wave.vreg(op.vdst);
    let (w, cv) = (width::<F>(), conv(op));
    let out: Lanes = std::array::from_fn(|l| {
        let e = scale_exp(s1[l]);
        let a = fmt.encode(scale_down(wide16::<W>(s0[l] as u16), e), cv);
        let b = fmt.encode(scale_down(wide16::<W>((s0[l] >> 16) as u16), e), cv);
        place(d[l], a | b << w, 2 * w, op.mods.opsel)
    });
    write_b32(c, op, &out);
    Ok(())
}

/// `v_cvt_scalef32_sr_{fp8,bf8}_{f32,f16,bf16}`: one value scaled by S2,
/// stochastically rounded with seed S1, into byte op_sel[3:2].
pub fn scale_sr_8<const F: u8, const W: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fmt = narrow::<F>(c);
    let x: [f32; 64] = if W == 0 {
        f32v(c, op, 0)
    } else {
        let h = b16(c, op, 0);
        std::array::from_fn(|l| wide16::<W>(h[l]))
    };
    let (s1, s2) = (b32(c, op, 1), b32(c, op, 2));
    let d = *c.wave.vreg(op.vdst);
    let cv = conv(op);
    let out: Lanes = std::array::from_fn(|l| {
        let v = fmt.encode_sr(scale_down(x[l], scale_exp(s2[l])), s1[l], cv);
        place(d[l], v, 8, op.mods.opsel)
    });
    write_b32(c, op, &out);
    Ok(())
}

/// `v_cvt_scalef32_sr_pk_fp4_{f32,f16,bf16}`: two values (an f32 pair or
/// packed halves) scaled by S2, stochastically rounded (seed S1, then its
/// PRNG successor) into byte op_sel[3:2].
pub fn scale_sr_pk_fp4<const W: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let pair: [[f32; 2]; 64] = if W == 0 {
        let v = b64(c, op, 0);
        let (abs, neg) = (op.mods.abs & 1 != 0, op.mods.neg & 1 != 0);
        std::array::from_fn(|l| {
            [v[l] as u32, (v[l] >> 32) as u32].map(|mut b| {
                if abs {
                    b &= 0x7fff_ffff;
                }
                if neg {
                    b ^= 0x8000_0000;
                }
                f32::from_bits(b)
            })
        })
    } else {
        let v = b32(c, op, 0);
        std::array::from_fn(|l| [wide16::<W>(v[l] as u16), wide16::<W>((v[l] >> 16) as u16)])
    };
    let (s1, s2) = (b32(c, op, 1), b32(c, op, 2));
    let d = *c.wave.vreg(op.vdst);
    let cv = conv(op);
    let out: Lanes = std::array::from_fn(|l| {
        let e = scale_exp(s2[l]);
        let a = E2M1.encode_sr(scale_down(pair[l][0], e), s1[l], cv);
        let b = E2M1.encode_sr(scale_down(pair[l][1], e), prng(s1[l]), cv);
        place(d[l], a | b << 4, 8, op.mods.opsel)
    });
    write_b32(c, op, &out);
    Ok(())
}

// ---------------------------------------------------------------------------
// Scaled conversions from narrow formats.

/// `v_cvt_scalef32_{f32,f16}_{fp8,bf8}`: byte op_sel[1:0] of S0 times the
/// scale S1; an f16 result goes to the op_sel[3] half.
pub fn scale_from_byte<const F: u8, const W: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fmt = narrow::<F>(c);
    let (s0, s1) = (b32(c, op, 0), b32(c, op, 1));
    let byte = u32::from(op.mods.opsel & 3);
    let vals: Lanes = std::array::from_fn(|l| {
        widen::<W>(fmt.decode(s0[l] >> (8 * byte) & 0xff), scale_exp(s1[l]))
    });
    if W == 0 {
        write_b32(c, op, &vals);
    } else {
        let h: [u16; 64] = std::array::from_fn(|l| vals[l] as u16);
        write_b16_keep(c, op, &h);
    }
    Ok(())
}

/// `v_cvt_scalef32_pk_{f32,f16,bf16}_{fp8,bf8,fp4}`: two elements (the
/// op_sel[0] word for 8-bit formats, the op_sel[1:0] byte for fp4) times
/// the scale S1; f32 results fill a register pair, 16-bit results one
/// register.
pub fn scale_pk_from<const F: u8, const W: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fmt = narrow::<F>(c);
    let (s0, s1) = (b32(c, op, 0), b32(c, op, 1));
    let w = width::<F>();
    let sh = if w == 8 {
        u32::from(op.mods.opsel & 1) * 16
    } else {
        u32::from(op.mods.opsel & 3) * 8
    };
    let m = (1u32 << w) - 1;
    let pairs: [[u32; 2]; 64] = std::array::from_fn(|l| {
        let src = s0[l] >> sh;
        let e = scale_exp(s1[l]);
        [
            widen::<W>(fmt.decode(src & m), e),
            widen::<W>(fmt.decode(src >> w & m), e),
        ]
    });
    if W == 0 {
        let out: [u64; 64] =
            std::array::from_fn(|l| u64::from(pairs[l][0]) | u64::from(pairs[l][1]) << 32);
        write_b64(c, op, &out);
    } else {
        let out: Lanes = std::array::from_fn(|l| pairs[l][0] | pairs[l][1] << 16);
        write_b32(c, op, &out);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// 32 x 6-bit packs.

/// Sets `n` bits at bit offset `off` of a little-endian dword array.
#[inline(always)]
fn set_bits(words: &mut [u32], off: u32, n: u32, v: u32) {
    for k in 0..n {
        let bit = off + k;
        if let Some(w) = words.get_mut((bit / 32) as usize) {
            *w = (*w & !(1 << (bit % 32))) | ((v >> k & 1) << (bit % 32));
        }
    }
}

/// Reads `n` bits at bit offset `off` of a little-endian dword array.
#[inline(always)]
fn get_bits(words: &[u32], off: u32, n: u32) -> u32 {
    (0..n).fold(0, |acc, k| {
        let bit = off + k;
        let b = words
            .get((bit / 32) as usize)
            .map_or(0, |w| w >> (bit % 32) & 1);
        acc | b << k
    })
}

/// `v_cvt_scalef32_2xpk16_{fp6,bf6}_f32`: 16 f32 from S0 and 16 from S1,
/// interleaved (S0[i] at bit 12i, S1[i] at 12i + 6), scaled by S2.
pub fn scale_2xpk16<const F: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fmt = narrow::<F>(c);
    let a = src_regs::<16>(c, op, 0)?;
    let b = src_regs::<16>(c, op, 1)?;
    let s2 = b32(c, op, 2);
    let cv = conv(op);
    let mut out = [[0u32; 64]; 6];
    for l in 0..64 {
        let e = scale_exp(s2[l]);
        let mut words = [0u32; 6];
        for p in 0..16 {
            let x = fmt.encode(scale_down(f32::from_bits(a[p][l]), e), cv);
            let y = fmt.encode(scale_down(f32::from_bits(b[p][l]), e), cv);
            set_bits(&mut words, 12 * p as u32, 6, x);
            set_bits(&mut words, 12 * p as u32 + 6, 6, y);
        }
        for (k, w) in words.iter().enumerate() {
            out[k][l] = *w;
        }
    }
    write_regs(c, op, &out);
    Ok(())
}

/// 32 elements of a source: 32 f32 registers (`W` 0) or 16 registers of
/// packed halves.
fn elems32<const W: u8>(c: &Ctx, op: &Op) -> Result<[[f32; 32]; 64], Fault> {
    if W == 0 {
        let r = src_regs::<32>(c, op, 0)?;
        Ok(std::array::from_fn(|l| {
            std::array::from_fn(|p| f32::from_bits(r[p][l]))
        }))
    } else {
        let r = src_regs::<16>(c, op, 0)?;
        Ok(std::array::from_fn(|l| {
            std::array::from_fn(|p| wide16::<W>((r[p / 2][l] >> (16 * (p % 2))) as u16))
        }))
    }
}

/// `v_cvt_scalef32_[sr_]pk32_{fp6,bf6}_{f32,f16,bf16}`: 32 elements
/// scaled by the last source into 192 bits (element i at bit 6i); the
/// `SR` forms round stochastically with seed S1 advanced per element.
pub fn scale_pk32_to<const F: u8, const W: u8, const SR: bool>(
    c: &mut Ctx,
    op: &Op,
) -> Result<(), Fault> {
    let fmt = narrow::<F>(c);
    let x = elems32::<W>(c, op)?;
    let (seed, scale) = if SR {
        (b32(c, op, 1), b32(c, op, 2))
    } else {
        ([0; 64], b32(c, op, 1))
    };
    let cv = conv(op);
    let mut out = [[0u32; 64]; 6];
    for l in 0..64 {
        let e = scale_exp(scale[l]);
        let mut rand = seed[l];
        let mut words = [0u32; 6];
        for p in 0..32 {
            let v = scale_down(x[l][p], e);
            let code = if SR {
                let code = fmt.encode_sr(v, rand, cv);
                rand = prng(rand);
                code
            } else {
                fmt.encode(v, cv)
            };
            set_bits(&mut words, 6 * p as u32, 6, code);
        }
        for (k, w) in words.iter().enumerate() {
            out[k][l] = *w;
        }
    }
    write_regs(c, op, &out);
    Ok(())
}

/// `v_cvt_scalef32_pk32_{f32,f16,bf16}_{fp6,bf6}`: 32 elements of 6 bits
/// times the scale S1, into 32 f32 registers or 16 registers of halves.
pub fn scale_pk32_from<const F: u8, const W: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fmt = narrow::<F>(c);
    let src = src_regs::<6>(c, op, 0)?;
    let s1 = b32(c, op, 1);
    let n = if W == 0 { 32 } else { 16 };
    let mut out = [[0u32; 64]; 32];
    for l in 0..64 {
        let words: [u32; 6] = std::array::from_fn(|k| src[k][l]);
        let e = scale_exp(s1[l]);
        for p in 0..32 {
            let v = widen::<W>(fmt.decode(get_bits(&words, 6 * p as u32, 6)), e);
            if W == 0 {
                out[p][l] = v;
            } else {
                out[p / 2][l] |= (v & 0xffff) << (16 * (p % 2));
            }
        }
    }
    write_regs(c, op, &out[..n]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::prng;
    use crate::exec::testing::run;
    use rocjitsu_isa::Target;

    /// An independent decoder: sign, `e` exponent bits, `m` mantissa bits,
    /// bias; `fnuz`: 0x80 is NaN and there is no -0; `nan_all_ones`: the
    /// all-ones magnitude is NaN (OCP E4M3); `ieee`: the top exponent holds
    /// inf/NaN.
    fn dec(code: u32, e: u32, m: u32, bias: i32, kind: &str) -> f64 {
        let bits = 1 + e + m;
        let code = code & ((1 << bits) - 1);
        let s = if code >> (e + m) != 0 { -1.0 } else { 1.0 };
        let ex = (code >> m) & ((1 << e) - 1);
        let mn = code & ((1 << m) - 1);
        match kind {
            "fnuz" if code == 1 << (e + m) => return f64::NAN,
            "ocp43" if code & ((1 << (e + m)) - 1) == (1 << (e + m)) - 1 => return f64::NAN,
            "ieee" if ex == (1 << e) - 1 => {
                return if mn == 0 { s * f64::INFINITY } else { f64::NAN };
            }
            _ => {}
        }
        let mag = if ex == 0 {
            f64::from(mn) / f64::from(1 << m) * 2f64.powi(1 - bias)
        } else {
            (1.0 + f64::from(mn) / f64::from(1 << m)) * 2f64.powi(ex as i32 - bias)
        };
        s * mag
    }

    /// An independent round-to-nearest-even encoder for in-range values:
    /// the nearest finite code, ties to the even code.
    fn enc(x: f64, e: u32, m: u32, bias: i32, kind: &str) -> u32 {
        let bits = 1 + e + m;
        let mut best: Option<(f64, u32)> = None;
        for code in 0..(1u32 << bits) {
            let v = dec(code, e, m, bias, kind);
            if !v.is_finite() {
                continue;
            }
            // Zero keeps its sign (FNUZ has only +0).
            if v == 0.0 && kind != "fnuz" && (code >> (e + m) != 0) != x.is_sign_negative() {
                continue;
            }
            let d = (x - v).abs();
            best = match best {
                Some((bd, bc)) if bd < d || (bd == d && bc & 1 == 0) => Some((bd, bc)),
                _ => Some((d, code)),
            };
        }
        best.map_or(0, |b| b.1)
    }

    fn lane_vals() -> Vec<f32> {
        (0..64)
            .map(|l| {
                let t = l as f32;
                ((t * 0.37).sin() * 60.0) * if l % 3 == 0 { 0.01 } else { 1.0 }
            })
            .collect()
    }

    #[test]
    fn fp8_round_trip_fnuz_and_ocp() {
        let v = lane_vals();
        for (target, fp8k, bf8k, fb, bb) in [
            (Target::Gfx942, "fnuz", "fnuz", 8, 16),
            (Target::Gfx950, "ocp43", "ieee", 7, 15),
        ] {
            let r = run(
                target,
                "v_cvt_pk_fp8_f32 v2, v0, v1\n\
                 v_cvt_pk_bf8_f32 v2, v1, v0 op_sel:[0,0,1]\n\
                 v_cvt_f32_fp8_sdwa v3, v2 src0_sel:BYTE_1\n\
                 v_cvt_pk_f32_bf8_sdwa v[4:5], v2 src0_sel:WORD_1\n\
                 v_cvt_f32_fp8_e64 v6, v2",
                |w, _| {
                    for l in 0..64 {
                        w.v[0][l] = v[l].to_bits();
                        w.v[1][l] = (-v[l] * 3.0).to_bits();
                    }
                },
            )
            .unwrap();
            for l in 0..64 {
                let (a, b) = (f64::from(v[l]), f64::from(-v[l] * 3.0));
                let w = &r.wave.v;
                let want = enc(a, 4, 3, fb, fp8k)
                    | enc(b, 4, 3, fb, fp8k) << 8
                    | enc(b, 5, 2, bb, bf8k) << 16
                    | enc(a, 5, 2, bb, bf8k) << 24;
                assert_eq!(w[2][l], want, "{target:?} lane {l}: {a} {b}");
                assert_eq!(
                    f64::from(f32::from_bits(w[3][l])),
                    dec(want >> 8, 4, 3, fb, fp8k)
                );
                assert_eq!(
                    f64::from(f32::from_bits(w[4][l])),
                    dec(want >> 16, 5, 2, bb, bf8k)
                );
                assert_eq!(
                    f64::from(f32::from_bits(w[5][l])),
                    dec(want >> 24, 5, 2, bb, bf8k)
                );
                assert_eq!(
                    f64::from(f32::from_bits(w[6][l])),
                    dec(want, 4, 3, fb, fp8k)
                );
            }
        }
    }

    #[test]
    fn fp8_overflow_and_sr_keeps_other_bytes() {
        let r = run(
            Target::Gfx942,
            "v_cvt_pk_fp8_f32 v2, v0, v1\n\
             v_cvt_sr_bf8_f32 v3, v0, v4 op_sel:[0,0,1,1]",
            |w, _| {
                w.v[0] = [1e6f32.to_bits(); 64];
                w.v[1] = [(-1e6f32).to_bits(); 64];
                w.v[2] = [0xdead_beef; 64];
                w.v[3] = [0x1122_3344; 64];
                w.v[4] = [0; 64];
            },
        )
        .unwrap();
        // Out of E4M3FNUZ's range: NaN (0x80), no saturation (the manual:
        // "ignores clamp"); the high word is kept.
        assert_eq!(r.wave.v[2][0], 0xdead_8080);
        // bf8 (E5M2FNUZ) of 1e6 without clamp overflows to NaN 0x80, placed
        // in byte 3.
        assert_eq!(r.wave.v[3][0], 0x8022_3344);
    }

    #[test]
    fn scalef32_fp8_and_fp4() {
        let v = lane_vals();
        let r = run(
            Target::Gfx950,
            "v_cvt_scalef32_pk_fp8_f32 v2, v0, v1, v5\n\
             v_cvt_scalef32_pk_f32_fp8 v[6:7], v2, v5\n\
             v_cvt_scalef32_pk_fp4_f32 v8, v0, v1, v9 op_sel:[0,0,0,1]\n\
             v_cvt_scalef32_pk_f32_fp4 v[10:11], v8, v9 op_sel:[0,1]",
            |w, _| {
                for l in 0..64 {
                    w.v[0][l] = v[l].to_bits();
                    w.v[1][l] = (v[l] * 0.5).to_bits();
                    w.v[5][l] = 4.0f32.to_bits(); // scale 2^2
                    w.v[9][l] = 8.0f32.to_bits(); // scale 2^3
                    w.v[8][l] = 0xaabb_ccdd;
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let (a, b) = (f64::from(v[l]), f64::from(v[l] * 0.5));
            let w = &r.wave.v;
            let f8 = |x: f64| enc(x / 4.0, 4, 3, 7, "ocp43");
            assert_eq!(w[2][l] & 0xffff, f8(a) | f8(b) << 8, "lane {l}");
            assert_eq!(
                f64::from(f32::from_bits(w[6][l])),
                dec(f8(a), 4, 3, 7, "ocp43") * 4.0
            );
            assert_eq!(
                f64::from(f32::from_bits(w[7][l])),
                dec(f8(b), 4, 3, 7, "ocp43") * 4.0
            );
            // FP4 E2M1 (bias 1, max 6, saturating).
            let f4 = |x: f64| enc((x / 8.0).clamp(-6.0, 6.0), 2, 1, 1, "fin");
            let byte = f4(a) | f4(b) << 4;
            // op_sel[3:2] = 2: byte 2.
            assert_eq!(w[8][l], 0xaa00_ccdd | byte << 16, "fp4 lane {l}");
            assert_eq!(
                f64::from(f32::from_bits(w[10][l])),
                dec(f4(a), 2, 1, 1, "fin") * 8.0
            );
            assert_eq!(
                f64::from(f32::from_bits(w[11][l])),
                dec(f4(b), 2, 1, 1, "fin") * 8.0
            );
        }
    }

    #[test]
    fn scalef32_fp6_pack_round_trip() {
        let r = run(
            Target::Gfx950,
            "v_cvt_scalef32_pk32_fp6_f16 v[40:45], v[0:15], v16\n\
             v_cvt_scalef32_pk32_f32_fp6 v[60:91], v[40:45], v16",
            |w, _| {
                for l in 0..64 {
                    for p in 0..32u32 {
                        let x = (p as f32 - 15.5) * 0.25 + (l % 4) as f32 * 0.125;
                        let h = u32::from(crate::float::f32_to_f16(
                            x,
                            crate::float::Rounding::NearestEven,
                        ));
                        w.v[(p / 2) as usize][l] |= h << (16 * (p % 2));
                    }
                    w.v[16][l] = 1.0f32.to_bits();
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            for p in 0..32u32 {
                let x = f64::from((p as f32 - 15.5) * 0.25 + (l % 4) as f32 * 0.125);
                // FP6 E2M3: bias 1, max 7.5, saturating.
                let code = enc(x.clamp(-7.5, 7.5), 2, 3, 1, "fin");
                let got = f64::from(f32::from_bits(r.wave.v[60 + p as usize][l]));
                assert_eq!(got, dec(code, 2, 3, 1, "fin"), "lane {l} elem {p} x {x}");
            }
        }
    }

    #[test]
    fn prng_is_the_lfsr_step() {
        assert_eq!(prng(1), 2);
        assert_eq!(prng(0x8000_0000), 197);
        assert_eq!(prng(0xc000_0001), 0x8000_0002 ^ 197);
    }
}
