//! Moves, selects and cross-lane vector ALU operations: `v_mov_*`,
//! `v_cndmask_b32`, `v_readlane_b32` / `v_readfirstlane_b32` /
//! `v_writelane_b32` (which ignore EXEC for the lane they name),
//! `v_swap_b32` and gfx950's `v_permlane{16,32}_swap_b32`.

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
    let a = b64(c, op, 0);
    write_b64(c, op, &a);
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
    let (a, b) = (b32_absneg(c, op, 0), b32_absneg(c, op, 1));
    let cond = mask_src(c, op, 2);
    let r: Lanes = std::array::from_fn(|l| if cond >> l & 1 != 0 { b[l] } else { a[l] });
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

/// `v_readlane_b32`: lane S1[5:0] of the VGPR S0 to the scalar
/// destination, whatever EXEC.
pub fn v_readlane_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let l = c.wave.read_s32(op.src[1], Width::B32, &c.env.apertures) & 63;
    let v = lane_of(c, op.src[0], l as usize);
    c.wave.set_s32(op.sdst, v);
    Ok(())
}

/// `v_writelane_b32`: the scalar S0 into lane S1[5:0] of VDST, whatever
/// EXEC.
pub fn v_writelane_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let ap = c.env.apertures;
    let v = c.wave.read_s32(op.src[0], Width::B32, &ap);
    let l = c.wave.read_s32(op.src[1], Width::B32, &ap) & 63;
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
