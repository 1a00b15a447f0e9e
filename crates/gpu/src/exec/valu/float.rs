//! Floating-point vector ALU operations (f16, f32, f64), conversions and
//! transcendentals.

use super::*;
use crate::exec::op::{Ctx, Fault, Op};

/// The semantic function of a floating-point vector ALU base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "v_add_f32" => v_add_f32,
        "v_mul_f32" => v_mul_f32,
        "v_fma_f32" | "v_fmac_f32" => v_fma_f32,
        _ => return None,
    })
}

lanes_f32!(v_add_f32, |a, b| a + b);
lanes_f32!(v_mul_f32, |a, b| a * b);
lanes_f32!(v_fma_f32, |a, b, d| a.mul_add(b, d));
