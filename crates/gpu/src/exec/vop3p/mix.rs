//! Mixed-precision FMA: `v_fma_mix_f32`, `v_fma_mixlo_f16`,
//! `v_fma_mixhi_f16` (ISA manual, "VOP3P instructions"). The `v_mad_mix*`
//! forms are gfx900-only and do not exist on gfx90a/gfx942/gfx950.
//!
//! Source i is an f16 (the half op_sel[i] selects) when op_sel_hi[i] is
//! set, an f32 otherwise; neg_hi is abs and neg_lo negates (after abs). The
//! fma rounds once, to f32 or to f16 (the `lo` / `hi` forms write that half
//! and keep the other).
//!
//! Constants are half-precision values: an inline float read as f32 is the
//! f16 constant converted to f32 (1/(2*pi) is 0x3e230000, not the f32
//! constant), read as f16 it fills the low half (the high half is 0). A
//! gfx950 literal is likewise a 16-bit value. Integer constants are 32-bit
//! sign-extended values either way.

use super::{Fp, half, write32};
use crate::exec::op::{Ctx, ExecFn, Fault, Op};
use crate::exec::wave::{Lanes, Src, Width, const_bits};

/// The semantic function of a mixed-precision FMA mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_fma_mix_f32" => v_fma_mix_f32,
        "v_fma_mixlo_f16" => v_fma_mixlo_f16,
        "v_fma_mixhi_f16" => v_fma_mixhi_f16,
        _ => return None,
    })
}

/// Source `i` as f32 lanes per the op_sel / op_sel_hi / abs / neg bits.
fn mix_src(c: &Ctx, op: &Op, i: usize, fp: Fp) -> [f32; 64] {
    let src = op.src.get(i).copied().unwrap_or(Src::None);
    let is_f16 = op.mods.opsel_hi >> i & 1 != 0;
    let shift = u32::from(op.mods.opsel >> i & 1) * 16;
    let (abs, neg) = (op.mods.abs >> i & 1 != 0, op.mods.neg >> i & 1 != 0);
    let sign = |x: f32| {
        let x = if abs { x.abs() } else { x };
        if neg { -x } else { x }
    };
    let cvt16 = |h: u16| half::f16_to_f32(if fp.f16_in { h } else { half::ftz16(h) });
    let v: Lanes = match src {
        Src::V(r) => *c.wave.vreg(r),
        Src::Float(_) | Src::Lit(_) => {
            let x = match src {
                Src::Lit(x) => x & 0xffff,
                _ => const_bits(src, Width::B16, c.wave, &c.env.apertures) as u32,
            };
            let f = if is_f16 {
                cvt16((x >> shift) as u16)
            } else {
                half::f16_to_f32(x as u16)
            };
            return [sign(f); 64];
        }
        _ => [c.wave.read_s32(src, Width::B32, &c.env.apertures); 64],
    };
    if is_f16 {
        std::array::from_fn(|l| sign(cvt16((v[l] >> shift) as u16)))
    } else {
        std::array::from_fn(|l| sign(fp.s_in(v[l])))
    }
}

fn v_fma_mix_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let fp = Fp::of(c);
    let (a, b, d) = (
        mix_src(c, op, 0, fp),
        mix_src(c, op, 1, fp),
        mix_src(c, op, 2, fp),
    );
    let r: Lanes = std::array::from_fn(|l| fp.s_out(a[l].mul_add(b[l], d[l]), op.mods.clamp));
    write32(c, op, &r);
    Ok(())
}

/// The f16 result: the product of two f32 values is exact in f64, the sum
/// rounds in f64 and then to f16.
fn mix_f16(c: &mut Ctx, op: &Op, high: bool) -> Result<(), Fault> {
    let fp = Fp::of(c);
    let (a, b, d) = (
        mix_src(c, op, 0, fp),
        mix_src(c, op, 1, fp),
        mix_src(c, op, 2, fp),
    );
    let old = *c.wave.vreg(op.vdst);
    let r: Lanes = std::array::from_fn(|l| {
        let x = f64::from(a[l]) * f64::from(b[l]) + f64::from(d[l]);
        let h = u32::from(fp.h_out(x, op.mods.clamp));
        if high {
            (old[l] & 0xffff) | (h << 16)
        } else {
            (old[l] & 0xffff_0000) | h
        }
    });
    write32(c, op, &r);
    Ok(())
}

fn v_fma_mixlo_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    mix_f16(c, op, false)
}

fn v_fma_mixhi_f16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    mix_f16(c, op, true)
}

#[cfg(test)]
mod tests {
    use crate::exec::testing::run;
    use crate::float::{Rounding, f16_to_f32, f32_to_f16};
    use rocjitsu_isa::Target;

    fn h(x: f32) -> u32 {
        u32::from(f32_to_f16(x, Rounding::NearestEven))
    }

    #[test]
    fn mix_f32_reads_f16_or_f32_per_source() {
        let r = run(
            Target::Gfx942,
            "v_fma_mix_f32 v0, v1, v2, v3 op_sel_hi:[1,1,0]\n\
             v_fma_mix_f32 v4, v1, v2, v3 op_sel:[1,0,0] op_sel_hi:[1,0,0]\n\
             v_fma_mix_f32 v5, -|v1|, v2, -v3 op_sel:[1,1,0] op_sel_hi:[1,1,0]\n\
             v_fma_mix_f32 v6, v1, v2, v3 op_sel:[0,1,1] op_sel_hi:[1,1,1] clamp",
            |w, _| {
                for l in 0..64 {
                    let x = l as f32 - 20.0;
                    w.v[1][l] = h(x * 0.25) | (h(-x) << 16);
                    w.v[2][l] = h(1.5) | (h(x + 0.5) << 16);
                    w.v[3][l] = (x * 1.0e-3).to_bits();
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let x = l as f32 - 20.0;
            let (a_lo, a_hi) = (x * 0.25, -x);
            let (b_lo, b_hi) = (1.5f32, x + 0.5);
            let v2 = f32::from_bits(r.wave.v[2][l]);
            let c = x * 1.0e-3;
            let got = |i: usize| f32::from_bits(r.wave.v[i][l]);
            assert_eq!(got(0), a_lo.mul_add(b_lo, c), "lane {l}");
            assert_eq!(got(4), a_hi.mul_add(v2, c), "lane {l}");
            assert_eq!(got(5), (-a_hi.abs()).mul_add(b_hi, -c), "lane {l}");
            let c_hi = f16_to_f32((r.wave.v[3][l] >> 16) as u16);
            let want = a_lo.mul_add(b_hi, c_hi).clamp(0.0, 1.0);
            assert_eq!(got(6), want, "lane {l}");
        }
    }

    #[test]
    fn mixlo_and_mixhi_write_one_half() {
        let r = run(
            Target::Gfx942,
            "v_fma_mixlo_f16 v0, v1, v2, v3\n\
             v_fma_mixhi_f16 v4, v1, v2, v3",
            |w, _| {
                for l in 0..64 {
                    w.v[1][l] = (l as f32 * 0.125 - 3.0).to_bits();
                    w.v[2][l] = (-3.25f32).to_bits();
                    w.v[3][l] = (0.75f32 + l as f32 / 1024.0).to_bits();
                    w.v[0][l] = 0xdead_beef;
                    w.v[4][l] = 0xdead_beef;
                }
            },
        )
        .unwrap();
        for l in 0..64 {
            let exact =
                f64::from(l as f32 * 0.125 - 3.0) * -3.25 + f64::from(0.75f32 + l as f32 / 1024.0);
            // The reference rounds through f32, which is exact here.
            assert_eq!(f64::from(exact as f32), exact);
            let want = u32::from(f32_to_f16(exact as f32, Rounding::NearestEven));
            assert_eq!(r.wave.v[0][l], 0xdead_0000 | want, "lane {l}");
            assert_eq!(r.wave.v[4][l], 0x0000_beef | (want << 16), "lane {l}");
        }
    }

    /// One rounding to f16: 1 + 2^-11 + 2^-30 is above the f16 tie
    /// 1 + 2^-11 and rounds up, where rounding to f32 first would make it
    /// the tie and round to even (1.0).
    #[test]
    fn mixlo_rounds_once() {
        let r = run(Target::Gfx942, "v_fma_mixlo_f16 v0, v1, 1.0, v2", |w, _| {
            w.v[1] = [(1.0f32 + 1.0 / 2048.0).to_bits(); 64];
            w.v[2] = [(1.0f32 / (1u64 << 30) as f32).to_bits(); 64];
        })
        .unwrap();
        assert_eq!(r.wave.v[0][0] & 0xffff, 0x3c01);
    }

    /// Inline constants are f16 values: read as f32, 1/(2*pi) is the f16
    /// constant widened.
    #[test]
    fn mix_constants_are_half_precision() {
        let r = run(
            Target::Gfx942,
            "v_fma_mix_f32 v0, v1, 1.0, 0.15915494\n\
             v_fma_mix_f32 v2, v1, 2.0, 0 op_sel_hi:[0,1,0]\n\
             v_fma_mix_f32 v3, v1, 2.0, 0 op_sel:[0,1,0] op_sel_hi:[0,1,0]",
            |w, _| {
                w.v[1] = [3.0f32.to_bits(); 64];
            },
        )
        .unwrap();
        let inv2pi_f16 = f16_to_f32(0x3118);
        assert_eq!(f32::from_bits(r.wave.v[0][0]), 3.0 + inv2pi_f16);
        assert_eq!(f32::from_bits(r.wave.v[2][0]), 6.0);
        // The high half of a constant is 0.
        assert_eq!(f32::from_bits(r.wave.v[3][0]), 0.0);
    }
}
