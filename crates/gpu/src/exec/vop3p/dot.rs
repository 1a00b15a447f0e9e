//! Dot products (ISA manual, "VOP3P instructions"): `D = sum_k S0[k] *
//! S1[k] + S2` over 2 (16-bit), 4 (8-bit) or 8 (4-bit) packed elements.
//!
//! Integer forms accumulate exactly and wrap to 32 bits, or saturate with
//! clamp. Float forms (`v_dot2_f32_f16`, gfx950 `v_dot2_f32_bf16`) take
//! the exact products, sum them with S2 in f64 and round once to f32. For
//! the 2-element forms, op_sel / op_sel_hi pick each source's halves and
//! neg_lo / neg_hi negate the float elements; neg_lo[2] negates the f32
//! accumulator.

use super::{Cst, Fp, halves, src32, write32};
use crate::exec::op::{Ctx, ExecFn, Fault, Op};
use crate::exec::wave::Lanes;

/// The semantic function of a dot-product mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_dot2_f32_f16" => v_dot2_f32_f16,
        "v_dot2_f32_bf16" => v_dot2_f32_bf16,
        "v_dot2_i32_i16" => v_dot2_i32_i16,
        "v_dot2_u32_u16" => v_dot2_u32_u16,
        "v_dot4_i32_i8" => v_dot4_i32_i8,
        "v_dot4_u32_u8" => v_dot4_u32_u8,
        "v_dot8_i32_i4" => v_dot8_i32_i4,
        "v_dot8_u32_u4" => v_dot8_u32_u4,
        _ => return None,
    })
}

/// Float dot2 of 16-bit elements decoded by `cvt`.
fn fdot2(c: &mut Ctx, op: &Op, k: Cst, cvt: impl Fn(u16) -> f64) -> Result<(), Fault> {
    let fp = Fp::of(c);
    let a = halves(c, op, 0, k, true);
    let b = halves(c, op, 1, k, true);
    let acc = src32(c, op, 2, Cst::B32);
    let neg_c = u32::from(op.mods.neg >> 2 & 1) << 31;
    let r: Lanes = std::array::from_fn(|l| {
        let s = cvt(a[0][l]) * cvt(b[0][l])
            + cvt(a[1][l]) * cvt(b[1][l])
            + f64::from(fp.s_in(acc[l] ^ neg_c));
        fp.s_out(s as f32, op.mods.clamp)
    });
    write32(c, op, &r);
    Ok(())
}

fn v_dot2_f32_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fp = Fp::of(c);
    fdot2(c, op, Cst::F16, |h| fp.h_in(h))
}

fn v_dot2_f32_bf16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fp = Fp::of(c);
    fdot2(c, op, Cst::Bf16, |h| f64::from(fp.s_in(u32::from(h) << 16)))
}

/// Writes an exact integer sum: wrapped to 32 bits, or saturated to the
/// signed / unsigned range with clamp.
#[inline]
fn int_out(x: i64, signed: bool, clamp: bool) -> u32 {
    match (clamp, signed) {
        (false, _) => x as u32,
        (true, true) => x.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32,
        (true, false) => x.clamp(0, i64::from(u32::MAX)) as u32,
    }
}

fn idot2(c: &mut Ctx, op: &Op, signed: bool) -> Result<(), Fault> {
    let a = halves(c, op, 0, Cst::B32, false);
    let b = halves(c, op, 1, Cst::B32, false);
    let acc = src32(c, op, 2, Cst::B32);
    let ext = |h: u16| {
        if signed {
            i64::from(h as i16)
        } else {
            i64::from(h)
        }
    };
    let r: Lanes = std::array::from_fn(|l| {
        let x = if signed {
            i64::from(acc[l] as i32)
        } else {
            i64::from(acc[l])
        };
        let s = ext(a[0][l]) * ext(b[0][l]) + ext(a[1][l]) * ext(b[1][l]) + x;
        int_out(s, signed, op.mods.clamp)
    });
    write32(c, op, &r);
    Ok(())
}

fn v_dot2_i32_i16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    idot2(c, op, true)
}

fn v_dot2_u32_u16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    idot2(c, op, false)
}

/// Dot product of the `32 / BITS` packed `BITS`-bit elements of two
/// dwords, plus the accumulator.
fn idotn<const BITS: u32>(c: &mut Ctx, op: &Op, signed: bool) -> Result<(), Fault> {
    let a = src32(c, op, 0, Cst::B32);
    let b = src32(c, op, 1, Cst::B32);
    let acc = src32(c, op, 2, Cst::B32);
    let elem = |x: u32, k: u32| -> i64 {
        let v = x >> (k * BITS);
        if signed {
            // Sign-extend the BITS-bit field.
            i64::from(((v << (32 - BITS)) as i32) >> (32 - BITS))
        } else {
            i64::from(v & ((1u32 << BITS) - 1))
        }
    };
    let r: Lanes = std::array::from_fn(|l| {
        let mut s = if signed {
            i64::from(acc[l] as i32)
        } else {
            i64::from(acc[l])
        };
        for k in 0..32 / BITS {
            s += elem(a[l], k) * elem(b[l], k);
        }
        int_out(s, signed, op.mods.clamp)
    });
    write32(c, op, &r);
    Ok(())
}

fn v_dot4_i32_i8(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    idotn::<8>(c, op, true)
}

fn v_dot4_u32_u8(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    idotn::<8>(c, op, false)
}

fn v_dot8_i32_i4(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    idotn::<4>(c, op, true)
}

fn v_dot8_u32_u4(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    idotn::<4>(c, op, false)
}

#[cfg(test)]
mod tests {
    use crate::exec::testing::run;
    use crate::float::{Rounding, f16_to_f32, f32_to_bf16, f32_to_f16};
    use rocjitsu_isa::Target;

    /// A deterministic spread of dwords: extremes and mixed bytes.
    fn word(l: usize, k: usize) -> u32 {
        const W: [u32; 8] = [
            0,
            0xffff_ffff,
            0x8080_8080,
            0x7f7f_7f7f,
            0x0123_4567,
            0x89ab_cdef,
            0x8000_7fff,
            0x7fff_8000,
        ];
        W[(l + k * 3) % 8].rotate_left((l as u32 * 7 + k as u32) % 32)
    }

    /// Runs `asm` on v1, v2, v3 = word(l, 0..3) and checks v0 per lane.
    fn check(target: Target, asm: &str, f: impl Fn(u32, u32, u32) -> u32) {
        let r = run(target, asm, |w, _| {
            for l in 0..64 {
                for k in 0..3 {
                    w.v[1 + k][l] = word(l, k);
                }
            }
        })
        .unwrap();
        for l in 0..64 {
            let (a, b, c) = (word(l, 0), word(l, 1), word(l, 2));
            assert_eq!(
                r.wave.v[0][l],
                f(a, b, c),
                "{asm} lane {l}: {a:#x} {b:#x} {c:#x}"
            );
        }
    }

    /// Independent reference: elements as i128, products summed, then
    /// wrapped or saturated.
    fn reference(a: u32, b: u32, c: u32, bits: u32, signed: bool, clamp: bool) -> u32 {
        let n = 32 / bits;
        let field = |x: u32, k: u32| -> i128 {
            let raw = (x >> (k * bits)) & (((1u64 << bits) - 1) as u32);
            if signed && raw >> (bits - 1) == 1 {
                i128::from(raw) - (1i128 << bits)
            } else {
                i128::from(raw)
            }
        };
        let mut s: i128 = if signed {
            i128::from(c as i32)
        } else {
            i128::from(c)
        };
        for k in 0..n {
            s += field(a, k) * field(b, k);
        }
        if !clamp {
            return s as u32;
        }
        if signed {
            s.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32 as u32
        } else {
            s.clamp(0, i128::from(u32::MAX)) as u32
        }
    }

    #[test]
    fn integer_dots_match_reference() {
        let t = Target::Gfx942;
        for (name, bits, signed) in [
            ("v_dot2_i32_i16", 16, true),
            ("v_dot2_u32_u16", 16, false),
            ("v_dot4_i32_i8", 8, true),
            ("v_dot4_u32_u8", 8, false),
            ("v_dot8_i32_i4", 4, true),
            ("v_dot8_u32_u4", 4, false),
        ] {
            for clamp in [false, true] {
                let asm = format!("{name} v0, v1, v2, v3{}", if clamp { " clamp" } else { "" });
                check(t, &asm, |a, b, c| reference(a, b, c, bits, signed, clamp));
            }
        }
    }

    #[test]
    fn dot2_f32_f16_matches_reference() {
        let vals = [1.5f32, -2.25, 1000.0, 0.001, -7.0e-5, 3.0, 65504.0, -0.5];
        let r = run(
            Target::Gfx942,
            "v_dot2_f32_f16 v0, v1, v2, v3\n\
             v_dot2_f32_f16 v4, v1, v2, v3 neg_lo:[1,0,1] neg_hi:[0,1,0] clamp",
            |w, _| {
                for l in 0..64 {
                    let h = |i: usize| u32::from(f32_to_f16(vals[i % 8], Rounding::NearestEven));
                    w.v[1][l] = h(l) | (h(l / 8) << 16);
                    w.v[2][l] = h(l + 3) | (h(l / 8 + 5) << 16);
                    w.v[3][l] = (l as f32 * 0.37 - 9.0).to_bits();
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let x = |v: u32, hi: bool| f64::from(f16_to_f32((v >> (16 * u32::from(hi))) as u16));
            let (a, b) = (r.wave.v[1][l], r.wave.v[2][l]);
            let c = f64::from(l as f32 * 0.37 - 9.0);
            let exact = x(a, false) * x(b, false) + x(a, true) * x(b, true) + c;
            assert_eq!(f32::from_bits(r.wave.v[0][l]), exact as f32, "lane {l}");
            let negd = -x(a, false) * x(b, false) - x(a, true) * x(b, true) - c;
            let want = (negd as f32).clamp(0.0, 1.0);
            assert_eq!(f32::from_bits(r.wave.v[4][l]), want, "lane {l}");
        }
    }

    #[test]
    fn dot2_f32_bf16_on_gfx950() {
        let r = run(Target::Gfx950, "v_dot2_f32_bf16 v0, v1, v2, v3", |w, _| {
            for l in 0..64 {
                let b = |x: f32| u32::from(f32_to_bf16(x, Rounding::NearestEven));
                w.v[1][l] = b(l as f32 + 0.5) | (b(-3.0) << 16);
                w.v[2][l] = b(1.25) | (b(l as f32 * 100.0) << 16);
                w.v[3][l] = 0.1f32.to_bits();
            }
        })
        .unwrap();
        for l in 0..64 {
            let bf = |x: f32| {
                f64::from(f32::from_bits(
                    u32::from(f32_to_bf16(x, Rounding::NearestEven)) << 16,
                ))
            };
            let exact = bf(l as f32 + 0.5) * 1.25 + -3.0 * bf(l as f32 * 100.0) + f64::from(0.1f32);
            assert_eq!(f32::from_bits(r.wave.v[0][l]), exact as f32, "lane {l}");
        }
    }
}
