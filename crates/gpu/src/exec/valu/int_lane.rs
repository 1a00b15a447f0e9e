//! Moves, selects and cross-lane vector ALU operations: `v_mov_*`,
//! `v_cndmask_b32`, `v_readlane_b32` / `v_readfirstlane_b32` /
//! `v_writelane_b32` (which ignore EXEC for the lane they name),
//! `v_swap_b32` and gfx950's `v_permlane{16,32}_swap_b32`.

use super::int::{lane_masks, split64, src32, src64, write_pair};
use super::*;
use crate::exec::op::{Ctx, Fault, Op};

/// The semantic function of a move or lane vector ALU base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_mov_b32" | "v_accvgpr_mov_b32" => v_mov_b32,
        "v_mov_b64" => v_mov_b64,
        "v_nop" | "v_clrexcp" => v_nop,
        "v_cndmask_b32" => v_cndmask_b32,
        "v_readfirstlane_b32" => v_readfirstlane_b32,
        "v_readlane_b32" => v_readlane_b32,
        "v_writelane_b32" => v_writelane_b32,
        "v_swap_b32" => v_swap_b32,
        "v_permlane16_swap_b32" => v_permlane16_swap_b32,
        "v_permlane32_swap_b32" => v_permlane32_swap_b32,
        _ => return None,
    })
}

lanes32!(v_mov_b32, |a| a);

/// `v_mov_b64` (gfx940+): 64-bit move (DPP applies to the pair).
pub fn v_mov_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let r = {
        let a = src64(c, op, 0);
        split64(|l| a.get(l))
    };
    write_pair(c, op, &r);
    Ok(())
}

/// `v_nop`, `v_clrexcp`: nothing to do.
pub fn v_nop(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Ok(())
}

/// Source `i`'s raw bits with the float abs/neg modifiers applied as sign
/// bit operations (the select does not otherwise interpret its sources).
#[inline(always)]
fn b32_absneg(c: &Ctx, op: &Op, i: usize) -> Lanes {
    let mut v = b32(c, op, i);
    let abs = op.mods.abs >> i & 1 != 0;
    let neg = op.mods.neg >> i & 1 != 0;
    if abs || neg {
        let and = if abs { 0x7fff_ffff } else { u32::MAX };
        let xor = if neg { 0x8000_0000 } else { 0 };
        for x in v.iter_mut() {
            *x = (*x & and) ^ xor;
        }
    }
    v
}

/// `v_cndmask_b32`: S1 where the condition mask (`src[2]`: VCC, or the
/// VOP3 SGPR pair) has the lane's bit set, otherwise S0.
pub fn v_cndmask_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let m = lane_masks(mask_src(c, op, 2));
    let select = |a: &Lanes, b: &Lanes| -> Lanes {
        let mut r = [0u32; 64];
        for l in 0..64 {
            r[l] = (a[l] & !m[l]) | (b[l] & m[l]);
        }
        r
    };
    let r = if op.mods.abs | op.mods.neg != 0 {
        select(&b32_absneg(c, op, 0), &b32_absneg(c, op, 1))
    } else {
        let (ta, tb);
        select(src32!(c, op, 0, ta), src32!(c, op, 1, tb))
    };
    write_b32(c, op, &r);
    Ok(())
}

/// Lane `l` of a source that should be a VGPR (a scalar value otherwise).
#[inline]
fn lane_of(c: &Ctx, src: Src, l: usize) -> u32 {
    match src {
        Src::V(i) => c.wave.vreg(i)[l & 63],
        s => c.wave.read_s32(s, Width::B32, &c.env.apertures),
    }
}

/// `v_readfirstlane_b32`: the source's value in the lowest active lane
/// (lane 0 when EXEC is zero) to the scalar destination.
pub fn v_readfirstlane_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let exec = c.wave.exec();
    let l = if exec == 0 {
        0
    } else {
        exec.trailing_zeros() as usize
    };
    let v = lane_of(c, op.src[0], l);
    c.wave.set_s32(op.sdst, v);
    Ok(())
}

/// The lane number mask of the wave: 31 for a 32-lane wave, else 63.
#[inline]
fn last_lane(c: &Ctx) -> u32 {
    if c.wave.wave32 { 31 } else { 63 }
}

/// `v_readlane_b32`: lane S1[5:0] (S1[4:0] in a 32-lane wave) of the VGPR S0 to the scalar
/// destination, whatever EXEC.
pub fn v_readlane_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let l = c.wave.read_s32(op.src[1], Width::B32, &c.env.apertures) & last_lane(c);
    let v = lane_of(c, op.src[0], l as usize);
    c.wave.set_s32(op.sdst, v);
    Ok(())
}

/// `v_writelane_b32`: the scalar S0 into lane S1[5:0] of VDST, whatever
/// EXEC.
pub fn v_writelane_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let ap = c.env.apertures;
    let v = c.wave.read_s32(op.src[0], Width::B32, &ap);
    let l = c.wave.read_s32(op.src[1], Width::B32, &ap) & last_lane(c);
    if let Some(r) = c.wave.vreg_mut(op.vdst)
        && let Some(x) = r.get_mut(l as usize)
    {
        *x = v;
    }
    Ok(())
}

/// The VGPR index of a source that must be a vector register.
fn vsrc(op: &Op, i: usize) -> Result<u16, Fault> {
    match op.src.get(i) {
        Some(Src::V(r)) => Ok(*r),
        _ => Err(Fault::Invalid(format!(
            "{}: source {i} is not a vector register",
            op.name()
        ))),
    }
}

/// `v_swap_b32`: exchanges VDST and the VGPR S0 in the active lanes.
pub fn v_swap_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s = vsrc(op, 0)?;
    let exec = c.wave.exec();
    let (d, x) = (*c.wave.vreg(op.vdst), *c.wave.vreg(s));
    c.wave.write_v(op.vdst, &x, exec);
    c.wave.write_v(s, &d, exec);
    Ok(())
}

/// Exchanges lane `pair(l).0` of VDST with lane `pair(l).1` of the VGPR
/// S0 for `l` in 0..32; each side is written where its lane is active.
fn permlane_swap(
    c: &mut Ctx,
    op: &Op,
    pair: impl Fn(usize) -> (usize, usize),
) -> Result<(), Fault> {
    let s = vsrc(op, 0)?;
    let exec = c.wave.exec();
    let (old_d, old_s) = (*c.wave.vreg(op.vdst), *c.wave.vreg(s));
    let (mut new_d, mut new_s) = (old_d, old_s);
    for l in 0..32 {
        let (x, y) = pair(l);
        new_d[x] = old_s[y];
        new_s[y] = old_d[x];
    }
    c.wave.write_v(op.vdst, &new_d, exec);
    c.wave.write_v(s, &new_s, exec);
    Ok(())
}

/// `v_permlane16_swap_b32` (gfx950): the odd rows (16 lanes each) of VDST
/// swap with the even rows of S0.
pub fn v_permlane16_swap_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    permlane_swap(c, op, |l| {
        let (row, i) = (2 * (l / 16), l % 16);
        ((row + 1) * 16 + i, row * 16 + i)
    })
}

/// `v_permlane32_swap_b32` (gfx950): rows 2-3 of VDST swap with rows 0-1
/// of S0.
pub fn v_permlane32_swap_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    permlane_swap(c, op, |l| (l + 32, l))
}

#[cfg(test)]
mod tests {
    use crate::exec::valu::test_util::*;
    use rocjitsu_isa::Target::{Gfx90a, Gfx942, Gfx950};

    #[test]
    fn moves() {
        op3(Gfx942, "v_mov_b32 v3, v0", |a, _, _| a);
        op3(Gfx942, "v_mov_b32_e64 v3, v1", |_, b, _| b);
        op3(Gfx942, "v_mov_b32 v3, -16", |_, _, _| (-16i32) as u32);
        op3(Gfx942, "v_mov_b32 v3, 0.5", |_, _, _| 0.5f32.to_bits());
        op3(Gfx90a, "v_mov_b32 v3, 0xabcdef01", |_, _, _| 0xabcd_ef01);
        op3(Gfx950, "v_prng_b32 v3, v0", |a, _, _| {
            let tap = if (a as i32) < 0 { 197 } else { 0 };
            a.wrapping_mul(2) ^ tap
        });
        let (a, b) = (vals(0), vals(1));
        let r = exec(
            Gfx942,
            "v_mov_b64 v[4:5], v[0:1]\nv_mov_b64 v[6:7], -3\nv_mov_b64 v[8:9], s[10:11]\n\
             v_accvgpr_mov_b32 a2, a1",
            |w| {
                (w.v[0], w.v[1], w.v[257]) = (a, b, a);
                w.s[10] = 0x1234_5678;
                w.s[11] = 0x9abc_def0;
                w.set_exec(EXEC);
            },
        );
        for l in 0..64 {
            let on = EXEC >> l & 1 != 0;
            let want = |x: u64| if on { x } else { 0 };
            assert_eq!(
                pair(&r.wave, 4, l),
                want(u64::from(a[l]) | u64::from(b[l]) << 32)
            );
            assert_eq!(pair(&r.wave, 6, l), want(-3i64 as u64));
            assert_eq!(pair(&r.wave, 8, l), want(0x9abc_def0_1234_5678));
        }
        check("accvgpr_mov", &r.wave.v[258], &[0; 64], EXEC, |l| a[l]);
    }

    #[test]
    fn cndmask_selects_by_mask_with_modifiers() {
        let cond = 0x5a5a_0ff0_c3c3_1248u64;
        let (a, b, old) = (vals(0), vals(1), vals(3));
        type Modifier = fn(u32) -> u32;
        let cases: [(&str, Modifier, Modifier); 4] = [
            ("v_cndmask_b32 v3, v0, v1, vcc", |x| x, |x| x),
            ("v_cndmask_b32_e64 v3, v0, v1, s[6:7]", |x| x, |x| x),
            (
                "v_cndmask_b32_e64 v3, -v0, |v1|, s[6:7]",
                |x| x ^ 0x8000_0000,
                |x| x & 0x7fff_ffff,
            ),
            (
                "v_cndmask_b32_e64 v3, |v0|, -|v1|, vcc",
                |x| x & 0x7fff_ffff,
                |x| x | 0x8000_0000,
            ),
        ];
        for (asm, fa, fb) in cases {
            let r = exec(Gfx942, asm, |w| {
                (w.v[0], w.v[1], w.v[3]) = (a, b, old);
                w.set_vcc(cond);
                w.s[6] = cond as u32;
                w.s[7] = (cond >> 32) as u32;
                w.set_exec(EXEC);
            });
            check(asm, &r.wave.v[3], &old, EXEC, |l| {
                if cond >> l & 1 != 0 {
                    fb(b[l])
                } else {
                    fa(a[l])
                }
            });
        }
        let r = exec(
            Gfx942,
            "v_cndmask_b32_e64 v3, v0, 7, s[10:11]\nv_cndmask_b32_e64 v4, v0, 7, s[12:13]",
            |w| {
                w.v[0] = a;
                w.s[12] = u32::MAX;
                w.s[13] = u32::MAX;
            },
        );
        check("cndmask all false", &r.wave.v[3], &[0; 64], u64::MAX, |l| {
            a[l]
        });
        check("cndmask all true", &r.wave.v[4], &[0; 64], u64::MAX, |_| 7);
    }

    #[test]
    fn readlane_readfirstlane_writelane() {
        let a = vals(0);
        let r = exec(
            Gfx942,
            "v_readlane_b32 s10, v0, 37\nv_readlane_b32 s11, v0, s4\n\
             v_readlane_b32 s12, v0, m0\nv_readfirstlane_b32 s13, v0\n\
             v_writelane_b32 v1, s5, 9\nv_writelane_b32 v1, 63, s4\n\
             s_mov_b64 exec, 0\nv_readfirstlane_b32 s14, v0\nv_writelane_b32 v1, s5, m0\n\
             v_readlane_b32 s15, v0, 63",
            |w| {
                w.v[0] = a;
                w.s[4] = 64 + 20; // only bits 5:0 select the lane
                w.s[5] = 0xfeed_f00d;
                w.s[124] = 50;
                w.set_exec(0xff00_0000_0000_0000);
            },
        );
        assert_eq!(r.wave.s[10], a[37]);
        assert_eq!(r.wave.s[11], a[20]);
        assert_eq!(r.wave.s[12], a[50]);
        assert_eq!(r.wave.s[13], a[56], "first active lane");
        assert_eq!(r.wave.s[14], a[0], "lane 0 when EXEC is zero");
        assert_eq!(r.wave.s[15], a[63], "readlane ignores EXEC");
        for l in 0..64 {
            let want = match l {
                9 | 50 => 0xfeed_f00d,
                20 => 63,
                _ => 0,
            };
            assert_eq!(r.wave.v[1][l], want, "writelane lane {l}");
        }
    }

    #[test]
    fn swap_under_exec() {
        let (a, b) = (vals(0), vals(1));
        let r = exec(Gfx942, "v_swap_b32 v0, v1", |w| {
            (w.v[0], w.v[1]) = (a, b);
            w.set_exec(EXEC);
        });
        check("swap v0", &r.wave.v[0], &a, EXEC, |l| b[l]);
        check("swap v1", &r.wave.v[1], &b, EXEC, |l| a[l]);
    }

    #[test]
    fn permlane_swaps() {
        let (a, b) = (vals(0), vals(1));
        let r = exec(
            Gfx950,
            "v_permlane32_swap_b32 v0, v1\nv_permlane16_swap_b32 v2, v3",
            |w| {
                (w.v[0], w.v[1], w.v[2], w.v[3]) = (a, b, a, b);
            },
        );
        let (d32, s32, d16, s16) = (&r.wave.v[0], &r.wave.v[1], &r.wave.v[2], &r.wave.v[3]);
        for l in 0..64 {
            // permlane32: vdst's lanes 32-63 and src0's lanes 0-31 trade.
            let (wd, ws) = if l >= 32 {
                (b[l - 32], b[l])
            } else {
                (a[l], a[l + 32])
            };
            assert_eq!((d32[l], s32[l]), (wd, ws), "permlane32 lane {l}");
            // permlane16: vdst's odd rows and src0's even rows trade.
            let row = l / 16;
            let (wd, ws) = if row % 2 == 1 {
                (b[l - 16], b[l])
            } else {
                (a[l], a[l + 16])
            };
            assert_eq!((d16[l], s16[l]), (wd, ws), "permlane16 lane {l}");
        }
    }
}
