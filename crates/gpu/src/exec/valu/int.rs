//! Integer, bitwise, move and lane vector ALU operations.

use super::*;
use crate::exec::op::{Ctx, Fault, Op};

/// The semantic function of an integer vector ALU base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_mov_b32" => v_mov_b32,
        "v_add_u32" => v_add_u32,
        "v_sub_u32" => v_sub_u32,
        "v_lshlrev_b32" => v_lshlrev_b32,
        "v_add_co_u32" => v_add_co_u32,
        "v_addc_co_u32" => v_addc_co_u32,
        _ => return None,
    })
}

lanes32!(v_mov_b32, |a| a);
lanes32!(v_sub_u32, |a, b| a.wrapping_sub(b));
lanes32!(v_lshlrev_b32, |a, b| b << (a & 31));

/// `v_add_u32`: wrapping add; with clamp, unsigned saturation.
pub fn v_add_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1) = (b32(c, op, 0), b32(c, op, 1));
    let r: Lanes = if op.mods.clamp {
        std::array::from_fn(|l| s0[l].saturating_add(s1[l]))
    } else {
        std::array::from_fn(|l| s0[l].wrapping_add(s1[l]))
    };
    write_b32(c, op, &r);
    Ok(())
}

/// `v_add_co_u32`: add with the carry-out in `sdst`.
pub fn v_add_co_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1) = (b32(c, op, 0), b32(c, op, 1));
    let mut carry = 0u64;
    let r: Lanes = std::array::from_fn(|l| {
        let (x, o) = s0[l].overflowing_add(s1[l]);
        carry |= u64::from(o) << l;
        x
    });
    write_b32(c, op, &r);
    write_mask(c, op, carry);
    Ok(())
}

/// `v_addc_co_u32`: add with carry-in (`src[2]`'s lane bit) and carry-out.
pub fn v_addc_co_u32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (s0, s1) = (b32(c, op, 0), b32(c, op, 1));
    let cin = mask_src(c, op, 2);
    let mut carry = 0u64;
    let r: Lanes = std::array::from_fn(|l| {
        let x = u64::from(s0[l]) + u64::from(s1[l]) + (cin >> l & 1);
        carry |= (x >> 32) << l;
        x as u32
    });
    write_b32(c, op, &r);
    write_mask(c, op, carry);
    Ok(())
}
