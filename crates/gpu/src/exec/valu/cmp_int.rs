//! Integer compares (VOPC and their VOP3 forms): `v_cmp_<cond>_<type>`
//! writes a lane mask to its scalar destination (VCC for e32), inactive
//! lanes reading 0; `v_cmpx_*` also writes the mask to EXEC (GFX9 writes
//! both).
//!
//! One generic semantic function serves every condition and type.

use super::int::{pack, src32, src64};
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

/// A compared operand type: its width and how a lane's bits convert.
trait CmpVal: Copy + Ord + 'static {
    /// Operand width in bits: 16, 32 or 64.
    const BITS: u32;
    fn from_bits(x: u64) -> Self;
}

impl CmpVal for u16 {
    const BITS: u32 = 16;
    fn from_bits(x: u64) -> u16 {
        x as u16
    }
}

impl CmpVal for i16 {
    const BITS: u32 = 16;
    fn from_bits(x: u64) -> i16 {
        x as i16
    }
}

impl CmpVal for u32 {
    const BITS: u32 = 32;
    fn from_bits(x: u64) -> u32 {
        x as u32
    }
}

impl CmpVal for i32 {
    const BITS: u32 = 32;
    fn from_bits(x: u64) -> i32 {
        x as i32
    }
}

impl CmpVal for u64 {
    const BITS: u32 = 64;
    fn from_bits(x: u64) -> u64 {
        x
    }
}

impl CmpVal for i64 {
    const BITS: u32 = 64;
    fn from_bits(x: u64) -> i64 {
        x as i64
    }
}

/// The lane mask of `test(COND, s0, s1)` over all 64 lanes.
#[inline(always)]
fn compare<V: CmpVal, const COND: u8>(c: &Ctx, op: &Op) -> u64 {
    let mut o = [0u8; 64];
    match V::BITS {
        16 => {
            let (a, b) = (b16(c, op, 0), b16(c, op, 1));
            for l in 0..64 {
                let (x, y) = (V::from_bits(a[l].into()), V::from_bits(b[l].into()));
                o[l] = u8::from(test(COND, x, y));
            }
        }
        32 => {
            let (ta, tb);
            let a = src32!(c, op, 0, ta);
            let b = src32!(c, op, 1, tb);
            for l in 0..64 {
                let (x, y) = (V::from_bits(a[l].into()), V::from_bits(b[l].into()));
                o[l] = u8::from(test(COND, x, y));
            }
        }
        _ => {
            let (a, b) = (src64(c, op, 0), src64(c, op, 1));
            for l in 0..64 {
                let (x, y) = (V::from_bits(a.get(l)), V::from_bits(b.get(l)));
                o[l] = u8::from(test(COND, x, y));
            }
        }
    }
    pack(&o)
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
        _ => compare::<V, COND>(c, op),
    };
    let m = bits & lanes(c, op);
    c.wave.set_mask(op.sdst, m);
    if X {
        c.wave.set_exec(m);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::exec::valu::test_util::*;
    use rocjitsu_isa::Target::Gfx942;
    use std::cmp::Ordering;

    /// Whether ordering `o` satisfies the condition named `cond`.
    fn holds(cond: &str, o: Ordering) -> bool {
        match cond {
            "f" => false,
            "lt" => o.is_lt(),
            "eq" => o.is_eq(),
            "le" => o.is_le(),
            "gt" => o.is_gt(),
            "ne" => o.is_ne(),
            "ge" => o.is_ge(),
            _ => true,
        }
    }

    #[test]
    fn every_condition_and_type() {
        let (a, b, c, d) = (vals(0), vals(1), vals(2), vals(3));
        // Make some lanes equal so that eq/le/ge see ties.
        let b: [u32; 64] = std::array::from_fn(|l| if l % 5 == 0 { a[l] } else { b[l] });
        let d: [u32; 64] = std::array::from_fn(|l| if l % 7 == 0 { c[l] } else { d[l] });
        let d: [u32; 64] = std::array::from_fn(|l| if l % 5 == 0 { b[l] } else { d[l] });
        for ty in ["i16", "u16", "i32", "u32", "i64", "u64"] {
            let order = |l: usize| -> Ordering {
                let x64 = u64::from(a[l]) | u64::from(c[l]) << 32;
                let y64 = u64::from(b[l]) | u64::from(d[l]) << 32;
                match ty {
                    "i16" => (a[l] as u16 as i16).cmp(&(b[l] as u16 as i16)),
                    "u16" => (a[l] & 0xffff).cmp(&(b[l] & 0xffff)),
                    "i32" => (a[l] as i32).cmp(&(b[l] as i32)),
                    "u32" => a[l].cmp(&b[l]),
                    "i64" => (x64 as i64).cmp(&(y64 as i64)),
                    _ => x64.cmp(&y64),
                }
            };
            let (s0, s1) = if ty.ends_with("64") {
                ("v[0:1]", "v[2:3]")
            } else {
                ("v0", "v2")
            };
            for cond in ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"] {
                let want = (0..64).fold(0u64, |m, l| m | u64::from(holds(cond, order(l))) << l);
                for (x, form) in [(false, "e32"), (false, "e64"), (true, "e32"), (true, "e64")] {
                    let cmp = if x { "v_cmpx" } else { "v_cmp" };
                    let dst = if form == "e32" { "vcc" } else { "s[8:9]" };
                    let asm = format!("{cmp}_{cond}_{ty}_{form} {dst}, {s0}, {s1}");
                    let r = exec(Gfx942, &asm, |w| {
                        (w.v[0], w.v[1], w.v[2], w.v[3]) = (a, c, b, d);
                        w.set_vcc(0x1234);
                        w.s[8] = 0x5678;
                        w.set_exec(EXEC);
                    });
                    let sd = if form == "e32" { 106 } else { 8 };
                    let got = u64::from(r.wave.s[sd]) | u64::from(r.wave.s[sd + 1]) << 32;
                    assert_eq!(got, want & EXEC, "{asm}");
                    let exec_after = r.wave.s64(126);
                    assert_eq!(
                        exec_after,
                        if x { want & EXEC } else { EXEC },
                        "{asm}: EXEC"
                    );
                }
            }
        }
    }

    #[test]
    fn constants_and_scalars() {
        let a = vals(0);
        let r = exec(
            Gfx942,
            "v_cmp_gt_i32 vcc, 5, v0\nv_cmp_lt_u32_e64 s[4:5], s10, v0\n\
             v_cmp_eq_u64_e64 s[6:7], -1, v[0:1]",
            |w| {
                w.v[0] = a;
                w.v[1] = [u32::MAX; 64];
                w.s[10] = 0x8000;
            },
        );
        let m = |f: &dyn Fn(usize) -> bool| (0..64).fold(0u64, |m, l| m | u64::from(f(l)) << l);
        assert_eq!(r.wave.vcc(), m(&|l| 5 > a[l] as i32));
        assert_eq!(r.wave.s64(4), m(&|l| 0x8000 < a[l]));
        assert_eq!(r.wave.s64(6), m(&|l| a[l] == u32::MAX));
    }
}
