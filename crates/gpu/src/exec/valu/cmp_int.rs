//! Integer compares (VOPC and their VOP3 forms): `v_cmp_<cond>_<type>`
//! writes a lane mask to its scalar destination (VCC for e32), inactive
//! lanes reading 0; `v_cmpx_*` also writes the mask to EXEC (GFX9 writes
//! both).
//!
//! One generic semantic function serves every condition and type.

use super::*;
use crate::exec::op::{Ctx, Fault, Op};

/// Condition codes in opcode order (ISA manual, "VOPC instructions").
const F: u8 = 0;
const LT: u8 = 1;
const EQ: u8 = 2;
const LE: u8 = 3;
const GT: u8 = 4;
const NE: u8 = 5;
const GE: u8 = 6;
const T: u8 = 7;

/// The semantic function of an integer compare base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    let (rest, x) = if let Some(r) = name.strip_prefix("v_cmpx_") {
        (r, true)
    } else {
        (name.strip_prefix("v_cmp_")?, false)
    };
    let (cond, ty) = rest.split_once('_')?;
    let cond = match cond {
        "f" => F,
        "lt" => LT,
        "eq" => EQ,
        "le" => LE,
        "gt" => GT,
        "ne" => NE,
        "ge" => GE,
        "t" => T,
        _ => return None,
    };
    match ty {
        "i16" => pick::<i16>(cond, x),
        "u16" => pick::<u16>(cond, x),
        "i32" => pick::<i32>(cond, x),
        "u32" => pick::<u32>(cond, x),
        "i64" => pick::<i64>(cond, x),
        "u64" => pick::<u64>(cond, x),
        _ => None,
    }
}

fn pick<V: CmpVal>(cond: u8, x: bool) -> Option<ExecFn> {
    Some(match (cond, x) {
        (F, false) => cmp::<V, F, false>,
        (LT, false) => cmp::<V, LT, false>,
        (EQ, false) => cmp::<V, EQ, false>,
        (LE, false) => cmp::<V, LE, false>,
        (GT, false) => cmp::<V, GT, false>,
        (NE, false) => cmp::<V, NE, false>,
        (GE, false) => cmp::<V, GE, false>,
        (T, false) => cmp::<V, T, false>,
        (F, true) => cmp::<V, F, true>,
        (LT, true) => cmp::<V, LT, true>,
        (EQ, true) => cmp::<V, EQ, true>,
        (LE, true) => cmp::<V, LE, true>,
        (GT, true) => cmp::<V, GT, true>,
        (NE, true) => cmp::<V, NE, true>,
        (GE, true) => cmp::<V, GE, true>,
        (T, true) => cmp::<V, T, true>,
        _ => return None,
    })
}

/// A compared operand type and how to read it.
trait CmpVal: Copy + Ord + 'static {
    fn read(c: &Ctx, op: &Op, i: usize) -> [Self; 64];
}

impl CmpVal for u16 {
    fn read(c: &Ctx, op: &Op, i: usize) -> [u16; 64] {
        b16(c, op, i)
    }
}

impl CmpVal for i16 {
    fn read(c: &Ctx, op: &Op, i: usize) -> [i16; 64] {
        b16(c, op, i).map(|x| x as i16)
    }
}

impl CmpVal for u32 {
    fn read(c: &Ctx, op: &Op, i: usize) -> [u32; 64] {
        b32(c, op, i)
    }
}

impl CmpVal for i32 {
    fn read(c: &Ctx, op: &Op, i: usize) -> [i32; 64] {
        b32(c, op, i).map(|x| x as i32)
    }
}

impl CmpVal for u64 {
    fn read(c: &Ctx, op: &Op, i: usize) -> [u64; 64] {
        b64(c, op, i)
    }
}

impl CmpVal for i64 {
    fn read(c: &Ctx, op: &Op, i: usize) -> [i64; 64] {
        b64(c, op, i).map(|x| x as i64)
    }
}

#[inline(always)]
fn test<V: Ord>(cond: u8, a: V, b: V) -> bool {
    match cond {
        LT => a < b,
        EQ => a == b,
        LE => a <= b,
        GT => a > b,
        NE => a != b,
        GE => a >= b,
        T => true,
        _ => false,
    }
}

/// `v_cmp{x}_<COND>_<V>`.
fn cmp<V: CmpVal, const COND: u8, const X: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let bits = match COND {
        F => 0,
        T => u64::MAX,
        _ => {
            let (a, b) = (V::read(c, op, 0), V::read(c, op, 1));
            let mut m = 0u64;
            for l in 0..64 {
                m |= u64::from(test(COND, a[l], b[l])) << l;
            }
            m
        }
    };
    let m = bits & lanes(c, op);
    c.wave.set_s64(op.sdst, m);
    if X {
        c.wave.set_exec(m);
    }
    Ok(())
}
