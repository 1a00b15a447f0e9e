//! Packed f32 math of gfx90a+: `v_pk_fma_f32`, `v_pk_mul_f32`,
//! `v_pk_add_f32` and `v_pk_mov_b32` (ISA manual, "VOP3P instructions").
//!
//! Sources and the destination are 64-bit (a register pair, an SGPR pair
//! or a constant). The low result reads, from source i, the dword op_sel[i]
//! selects, and the high result the dword op_sel_hi[i] selects; neg_lo /
//! neg_hi negate them. An inline constant is a 32-bit value in the low
//! dword: an f32 bit pattern (high dword 0) or an integer sign-extended to
//! 64 bits (compilers select the low dword for both results with
//! op_sel_hi:0).

use super::{Fp, write32};
use crate::exec::op::{Ctx, ExecFn, Fault, Op};
use crate::exec::wave::{Lanes, Src, Width, const_bits};

/// The semantic function of a packed f32 mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_pk_fma_f32" => v_pk_fma_f32,
        "v_pk_mul_f32" => v_pk_mul_f32,
        "v_pk_add_f32" => v_pk_add_f32,
        "v_pk_mov_b32" => v_pk_mov_b32,
        _ => return None,
    })
}

/// Dword `hi` (0 or 1) of source `i`: the register's lanes, or `tmp`
/// filled with the broadcast scalar or constant dword.
#[inline]
fn dword<'a>(c: &'a Ctx, op: &Op, i: usize, hi: bool, tmp: &'a mut Lanes) -> &'a Lanes {
    let src = op.src.get(i).copied().unwrap_or(Src::None);
    match src {
        Src::V(r) => c.wave.vreg(r.wrapping_add(u16::from(hi))),
        Src::S(s) => {
            *tmp = [c.wave.s32(s.wrapping_add(u8::from(hi))); 64];
            tmp
        }
        _ => {
            let ap = &c.env.apertures;
            let v = match src {
                Src::Float(_) => const_bits(src, Width::B32, c.wave, ap),
                Src::Lit(x) => u64::from(x),
                _ => const_bits(src, Width::B64, c.wave, ap),
            };
            *tmp = [(v >> (32 * u32::from(hi))) as u32; 64];
            tmp
        }
    }
}

/// The dword of source `i` feeding result half `h` (0 low, 1 high).
#[inline]
fn sel<'a>(c: &'a Ctx, op: &Op, i: usize, h: usize, tmp: &'a mut Lanes) -> &'a Lanes {
    let bits = if h == 0 {
        op.mods.opsel
    } else {
        op.mods.opsel_hi
    };
    dword(c, op, i, bits >> i & 1 != 0, tmp)
}

/// The sign flip neg_lo / neg_hi apply to source `i` in result half `h`.
#[inline]
fn neg(op: &Op, i: usize, h: usize) -> u32 {
    let bits = if h == 0 { op.mods.neg } else { op.mods.neg_hi };
    u32::from(bits >> i & 1) << 31
}

/// Computes both f32 results of an `N`-source op with `f` and writes the
/// destination pair.
#[inline]
fn pk<const N: usize>(c: &mut Ctx, op: &Op, f: impl Fn([f32; N]) -> f32) -> Result<(), Fault> {
    let fp = Fp::of(c);
    let cl = op.mods.clamp;
    let plain = fp.f32_in && fp.f32_out && !cl;
    let mut out = [[0u32; 64]; 2];
    for (h, r) in out.iter_mut().enumerate() {
        let mut tmp = [[0u32; 64]; N];
        let mut srcs: [&Lanes; N] = [&[0; 64]; N];
        let mut negs = [0u32; N];
        for (i, t) in tmp.iter_mut().enumerate() {
            srcs[i] = sel(c, op, i, h, t);
            negs[i] = neg(op, i, h);
        }
        if plain {
            for l in 0..64 {
                r[l] = f(std::array::from_fn(|i| {
                    f32::from_bits(srcs[i][l] ^ negs[i])
                }))
                .to_bits();
            }
        } else {
            for l in 0..64 {
                let x = f(std::array::from_fn(|i| fp.s_in(srcs[i][l] ^ negs[i])));
                r[l] = fp.s_out(x, cl);
            }
        }
    }
    let exec = c.wave.exec();
    c.wave.write_v(op.vdst, &out[0], exec);
    c.wave.write_v(op.vdst.wrapping_add(1), &out[1], exec);
    Ok(())
}

fn v_pk_fma_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    pk(c, op, |[a, b, d]| a.mul_add(b, d))
}

fn v_pk_mul_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    pk(c, op, |[a, b]| a * b)
}

fn v_pk_add_f32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    pk(c, op, |[a, b]| a + b)
}

/// `v_pk_mov_b32`: the low dword from source 0 (dword op_sel[0]), the high
/// dword from source 1 (dword op_sel[1]).
fn v_pk_mov_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (mut t0, mut t1) = ([0u32; 64], [0u32; 64]);
    let lo = *dword(c, op, 0, op.mods.opsel & 1 != 0, &mut t0);
    let hi = *dword(c, op, 1, op.mods.opsel & 2 != 0, &mut t1);
    write32(c, op, &lo);
    let exec = c.wave.exec();
    c.wave.write_v(op.vdst.wrapping_add(1), &hi, exec);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::exec::testing::run;
    use rocjitsu_isa::Target;

    const F32S: [f32; 12] = [
        0.0,
        -0.0,
        1.5,
        -3.25,
        f32::MAX,
        1.0e-40, // denormal
        -7.0e-39,
        f32::INFINITY,
        f32::NAN,
        1.0e20,
        -2.0e-20,
        0.1,
    ];

    fn val(l: usize, k: usize) -> f32 {
        F32S[(l * (k + 1) + 2 * k) % 12]
    }

    fn same(a: f32, b: f32) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    /// Registers v[2:3], v[4:5], v[6:7] hold per-lane values; checks
    /// v[0:1] against `lo` and `hi` of (src dwords) per lane.
    fn check(asm: &str, lo: impl Fn(&[f32; 6]) -> f32, hi: impl Fn(&[f32; 6]) -> f32) {
        let r = run(Target::Gfx942, asm, |w, _| {
            for l in 0..64 {
                for k in 0..6 {
                    w.v[2 + k][l] = val(l, k).to_bits();
                }
            }
        })
        .unwrap();
        for l in 0..64 {
            let s: [f32; 6] = std::array::from_fn(|k| val(l, k));
            let got = (
                f32::from_bits(r.wave.v[0][l]),
                f32::from_bits(r.wave.v[1][l]),
            );
            assert!(
                same(got.0, lo(&s)) && same(got.1, hi(&s)),
                "{asm} lane {l}: {s:?} -> {got:?}"
            );
        }
    }

    #[test]
    fn packed_f32_ops_match_reference() {
        // s[0], s[1] = v2, v3 (src0); s[2], s[3] = v4, v5; s[4], s[5] = v6, v7.
        check(
            "v_pk_mul_f32 v[0:1], v[2:3], v[4:5]",
            |s| s[0] * s[2],
            |s| s[1] * s[3],
        );
        check(
            "v_pk_add_f32 v[0:1], v[2:3], v[4:5]",
            |s| s[0] + s[2],
            |s| s[1] + s[3],
        );
        check(
            "v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]",
            |s| s[0].mul_add(s[2], s[4]),
            |s| s[1].mul_add(s[3], s[5]),
        );
        check(
            "v_pk_mul_f32 v[0:1], v[2:3], v[4:5] op_sel_hi:[0,1]",
            |s| s[0] * s[2],
            |s| s[0] * s[3],
        );
        check(
            "v_pk_mul_f32 v[0:1], v[2:3], v[4:5] op_sel:[1,1] op_sel_hi:[0,0]",
            |s| s[1] * s[3],
            |s| s[0] * s[2],
        );
        check(
            "v_pk_add_f32 v[0:1], v[2:3], v[4:5] op_sel_hi:[1,0] neg_lo:[0,1] neg_hi:[0,1]",
            |s| s[0] - s[2],
            |s| s[1] - s[2],
        );
        check(
            "v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7] op_sel_hi:[1,1,0] neg_lo:[0,0,1] neg_hi:[0,0,1]",
            |s| s[0].mul_add(s[2], -s[4]),
            |s| s[1].mul_add(s[3], -s[4]),
        );
        let cl = |x: f32| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
        check(
            "v_pk_add_f32 v[0:1], v[2:3], v[4:5] clamp",
            |s| cl(s[0] + s[2]),
            |s| cl(s[1] + s[3]),
        );
    }

    #[test]
    fn scalar_and_constant_sources() {
        let r = run(
            Target::Gfx942,
            "v_pk_mul_f32 v[0:1], v[2:3], s[4:5] op_sel_hi:[1,0]\n\
             v_pk_add_f32 v[6:7], v[2:3], 1.0 op_sel_hi:[1,0]\n\
             v_pk_add_f32 v[8:9], v[2:3], 1.0\n\
             v_pk_fma_f32 v[10:11], v[2:3], 0.5, v[2:3] op_sel_hi:[1,0,1]",
            |w, _| {
                w.s[4] = 3.0f32.to_bits();
                w.s[5] = 100.0f32.to_bits();
                w.v[2] = [2.0f32.to_bits(); 64];
                w.v[3] = [(-8.0f32).to_bits(); 64];
            },
        )
        .unwrap();
        let g = |i: usize| f32::from_bits(r.wave.v[i][5]);
        assert_eq!((g(0), g(1)), (6.0, -24.0));
        assert_eq!((g(6), g(7)), (3.0, -7.0));
        // op_sel_hi:[1,1]: the high result reads the constant's high dword, 0.
        assert_eq!((g(8), g(9)), (3.0, -8.0));
        assert_eq!((g(10), g(11)), (3.0, -12.0));
    }

    #[test]
    fn pk_mov_selects_dwords_and_respects_exec() {
        let r = run(
            Target::Gfx942,
            "v_pk_mov_b32 v[0:1], s[4:5], s[4:5] op_sel:[0,1]\n\
             v_pk_mov_b32 v[2:3], v[6:7], v[8:9] op_sel:[1,0]\n\
             s_mov_b64 exec, 1\n\
             v_pk_mov_b32 v[10:11], v[6:7], v[8:9]",
            |w, _| {
                w.s[4] = 11;
                w.s[5] = 22;
                w.v[6] = [6; 64];
                w.v[7] = [7; 64];
                w.v[8] = [8; 64];
                w.v[9] = [9; 64];
                w.v[10] = [100; 64];
                w.v[11] = [101; 64];
            },
        )
        .unwrap();
        let w = &r.wave;
        assert_eq!((w.v[0][3], w.v[1][3]), (11, 22));
        assert_eq!((w.v[2][3], w.v[3][3]), (7, 8));
        assert_eq!((w.v[10][0], w.v[11][0]), (6, 8));
        assert_eq!((w.v[10][1], w.v[11][1]), (100, 101));
    }

    /// With MODE flushing f32 denormals, denormal inputs count as zero.
    #[test]
    fn denormals_flush_per_mode() {
        let r = run(
            Target::Gfx942,
            "v_pk_add_f32 v[0:1], v[2:3], v[2:3]",
            |w, _| {
                w.mode = 0xc0; // f32 denormals flushed, f16/f64 kept
                w.v[2] = [1.0e-40f32.to_bits(); 64];
                w.v[3] = [1.0f32.to_bits(); 64];
            },
        )
        .unwrap();
        assert_eq!(r.wave.v[0][0], 0);
        assert_eq!(f32::from_bits(r.wave.v[1][0]), 2.0);
    }
}
