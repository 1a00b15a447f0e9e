//! Float compares `v_cmp_*` / `v_cmpx_*` for f16, f32, f64 (the 16
//! predicates) and `v_cmp_class_*` (ISA manual, "VOPC instructions"). The
//! result goes to `sdst` (VCC in the e32 form) for active lanes; the
//! `cmpx` forms also write it to EXEC.

use super::float::*;
use super::*;
use crate::exec::op::{Ctx, Fault, Op};

/// The predicates in opcode order (ISA manual, "VOPC"): false, less,
/// equal, less-or-equal, greater, less-or-greater, greater-or-equal,
/// ordered, unordered, the negations of the six ordered relations (true
/// when unordered), true.
const PREDICATES: [&str; 16] = [
    "f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt",
    "tru",
];

/// The semantic function of a float compare base mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    let (x, rest) = if let Some(r) = name.strip_prefix("v_cmpx_") {
        (true, r)
    } else {
        (false, name.strip_prefix("v_cmp_")?)
    };
    let (pred, ty) = rest.rsplit_once('_')?;
    if pred == "class" {
        return Some(match (ty, x) {
            ("f16", false) => class16::<false>,
            ("f16", true) => class16::<true>,
            ("f32", false) => class32::<false>,
            ("f32", true) => class32::<true>,
            ("f64", false) => class64::<false>,
            ("f64", true) => class64::<true>,
            _ => return None,
        });
    }
    let p = PREDICATES.iter().position(|&q| q == pred)?;
    macro_rules! pick {
        ($f:ident) => {
            match (p, x) {
                (0, false) => $f::<0, false>,
                (1, false) => $f::<1, false>,
                (2, false) => $f::<2, false>,
                (3, false) => $f::<3, false>,
                (4, false) => $f::<4, false>,
                (5, false) => $f::<5, false>,
                (6, false) => $f::<6, false>,
                (7, false) => $f::<7, false>,
                (8, false) => $f::<8, false>,
                (9, false) => $f::<9, false>,
                (10, false) => $f::<10, false>,
                (11, false) => $f::<11, false>,
                (12, false) => $f::<12, false>,
                (13, false) => $f::<13, false>,
                (14, false) => $f::<14, false>,
                (15, false) => $f::<15, false>,
                (0, true) => $f::<0, true>,
                (1, true) => $f::<1, true>,
                (2, true) => $f::<2, true>,
                (3, true) => $f::<3, true>,
                (4, true) => $f::<4, true>,
                (5, true) => $f::<5, true>,
                (6, true) => $f::<6, true>,
                (7, true) => $f::<7, true>,
                (8, true) => $f::<8, true>,
                (9, true) => $f::<9, true>,
                (10, true) => $f::<10, true>,
                (11, true) => $f::<11, true>,
                (12, true) => $f::<12, true>,
                (13, true) => $f::<13, true>,
                (14, true) => $f::<14, true>,
                _ => $f::<15, true>,
            }
        };
    }
    Some(match ty {
        "f16" => pick!(cmp16),
        "f32" => pick!(cmp32),
        "f64" => pick!(cmp64),
        _ => return None,
    })
}

/// Predicate `P` (index into [`PREDICATES`]) on two values; the
/// negated predicates are true for unordered (NaN) operands.
#[inline(always)]
fn test<const P: u8, T: PartialOrd>(a: T, b: T) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let o = a.partial_cmp(&b);
    match P {
        0 => false,
        1 => o == Some(Less),
        2 => o == Some(Equal),
        3 => matches!(o, Some(Less | Equal)),
        4 => o == Some(Greater),
        5 => matches!(o, Some(Less | Greater)),
        6 => matches!(o, Some(Greater | Equal)),
        7 => o.is_some(),
        8 => o.is_none(),
        9 => !matches!(o, Some(Greater | Equal)),
        10 => !matches!(o, Some(Less | Greater)),
        11 => o != Some(Greater),
        12 => !matches!(o, Some(Less | Equal)),
        13 => o != Some(Equal),
        14 => o != Some(Less),
        _ => true,
    }
}

/// Writes the compare result to `sdst` and, for `cmpx`, to EXEC.
#[inline(always)]
fn finish<const X: bool>(c: &mut Ctx, op: &Op, bits: u64) -> Result<(), Fault> {
    let m = bits & lanes(c, op);
    write_mask(c, op, bits);
    if X {
        c.wave.set_exec(m);
    }
    Ok(())
}

pub fn cmp32<const P: u8, const X: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b) = (f32s(c, op, 0), f32s(c, op, 1));
    let mut bits = 0u64;
    for l in 0..64 {
        bits |= u64::from(test::<P, f32>(a[l], b[l])) << l;
    }
    finish::<X>(c, op, bits)
}

pub fn cmp16<const P: u8, const X: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b) = (h32(c, op, 0), h32(c, op, 1));
    let mut bits = 0u64;
    for l in 0..64 {
        bits |= u64::from(test::<P, f32>(a[l], b[l])) << l;
    }
    finish::<X>(c, op, bits)
}

pub fn cmp64<const P: u8, const X: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b) = (d64(c, op, 0), d64(c, op, 1));
    let mut bits = 0u64;
    for l in 0..64 {
        bits |= u64::from(test::<P, f64>(a[l], b[l])) << l;
    }
    finish::<X>(c, op, bits)
}

/// The class-mask bit of a value given its sign, biased exponent, whether
/// the exponent is all ones, mantissa and quiet bit (ISA manual,
/// `V_CMP_CLASS_F32`: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal,
/// 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf).
#[inline(always)]
fn class_bit(neg: bool, exp_zero: bool, exp_max: bool, man_zero: bool, quiet: bool) -> u32 {
    let pick = |n: u32, p: u32| if neg { n } else { p };
    if exp_max && !man_zero {
        if quiet { 1 } else { 0 }
    } else if exp_max {
        pick(2, 9)
    } else if !exp_zero {
        pick(3, 8)
    } else if !man_zero {
        pick(4, 7)
    } else {
        pick(5, 6)
    }
}

#[inline(always)]
fn class_finish<const X: bool>(
    c: &mut Ctx,
    op: &Op,
    class: impl Fn(usize) -> u32,
) -> Result<(), Fault> {
    let mask = b32(c, op, 1);
    let mut bits = 0u64;
    for l in 0..64 {
        bits |= u64::from(mask[l] >> class(l) & 1) << l;
    }
    finish::<X>(c, op, bits)
}

pub fn class32<const X: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = f32_raw(c, op, 0);
    class_finish::<X>(c, op, |l| {
        let b = v[l].to_bits();
        let e = b >> 23 & 0xff;
        class_bit(
            b >> 31 != 0,
            e == 0,
            e == 0xff,
            b & 0x7f_ffff == 0,
            b & 0x40_0000 != 0,
        )
    })
}

pub fn class64<const X: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = f64s(c, op, 0);
    class_finish::<X>(c, op, |l| {
        let b = v[l].to_bits();
        let e = b >> 52 & 0x7ff;
        class_bit(
            b >> 63 != 0,
            e == 0,
            e == 0x7ff,
            b & ((1 << 52) - 1) == 0,
            b & (1 << 51) != 0,
        )
    })
}

pub fn class16<const X: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = f16s(c, op, 0);
    class_finish::<X>(c, op, |l| {
        let b = v[l];
        let e = b >> 10 & 0x1f;
        class_bit(
            b >> 15 != 0,
            e == 0,
            e == 0x1f,
            b & 0x3ff == 0,
            b & 0x200 != 0,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::testing::run;
    use rocjitsu_isa::Target;

    fn reference(p: usize, a: f64, b: f64) -> bool {
        let un = a.is_nan() || b.is_nan();
        match p {
            0 => false,
            1 => !un && a < b,
            2 => !un && a == b,
            3 => !un && a <= b,
            4 => !un && a > b,
            5 => !un && a != b,
            6 => !un && a >= b,
            7 => !un,
            8 => un,
            9 => un || a < b,
            10 => un || a == b,
            11 => un || a <= b,
            12 => un || a > b,
            13 => un || a != b,
            14 => un || a >= b,
            _ => true,
        }
    }

    fn values() -> Vec<f64> {
        vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ]
    }

    #[test]
    fn all_predicates_all_types() {
        use crate::float::{Rounding, f32_to_f16};
        let vs = values();
        let pairs: Vec<(f64, f64)> = vs
            .iter()
            .flat_map(|&a| vs.iter().map(move |&b| (a, b)))
            .collect();
        assert_eq!(pairs.len(), 64);
        for (p, pred) in PREDICATES.iter().enumerate() {
            let asm = format!(
                "v_cmp_{pred}_f32 vcc, v0, v1\n\
                 v_cmp_{pred}_f32_e64 s[4:5], v0, v1\n\
                 v_cmp_{pred}_f64 s[6:7], v[2:3], v[4:5]\n\
                 v_cmp_{pred}_f16 s[8:9], v6, v7"
            );
            let r = run(Target::Gfx942, &asm, |w, _| {
                for (l, &(a, b)) in pairs.iter().enumerate() {
                    w.v[0][l] = (a as f32).to_bits();
                    w.v[1][l] = (b as f32).to_bits();
                    w.v[2][l] = a.to_bits() as u32;
                    w.v[3][l] = (a.to_bits() >> 32) as u32;
                    w.v[4][l] = b.to_bits() as u32;
                    w.v[5][l] = (b.to_bits() >> 32) as u32;
                    w.v[6][l] = u32::from(f32_to_f16(a as f32, Rounding::NearestEven));
                    w.v[7][l] = u32::from(f32_to_f16(b as f32, Rounding::NearestEven));
                }
            })
            .unwrap();
            let want: u64 = pairs
                .iter()
                .enumerate()
                .map(|(l, &(a, b))| u64::from(reference(p, a, b)) << l)
                .sum();
            assert_eq!(r.wave.vcc(), want, "v_cmp_{pred}_f32");
            assert_eq!(r.wave.s64(4), want, "v_cmp_{pred}_f32_e64");
            assert_eq!(r.wave.s64(6), want, "v_cmp_{pred}_f64");
            assert_eq!(r.wave.s64(8), want, "v_cmp_{pred}_f16");
        }
    }

    #[test]
    fn cmpx_writes_exec_and_respects_inactive_lanes() {
        let r = run(Target::Gfx942, "v_cmpx_gt_f32 vcc, v0, v1", |w, _| {
            w.set_exec(0xff00_ff00_ff00_ff00);
            for l in 0..64 {
                w.v[0][l] = (l as f32).to_bits();
                w.v[1][l] = 31.5f32.to_bits();
            }
        })
        .unwrap();
        let want = 0xff00_ff00_0000_0000u64;
        assert_eq!(r.wave.exec(), want);
        assert_eq!(r.wave.vcc(), want);
    }

    #[test]
    fn class_masks() {
        let vals: [u32; 10] = [
            0x7f80_0001, // sNaN
            0x7fc0_0000, // qNaN
            0xff80_0000, // -inf
            0xbf80_0000, // -1
            0x8000_0001, // -denormal
            0x8000_0000, // -0
            0x0000_0000, // +0
            0x0000_0001, // +denormal
            0x3f80_0000, // +1
            0x7f80_0000, // +inf
        ];
        let r = run(
            Target::Gfx942,
            "v_cmp_class_f32 vcc, v0, v1\nv_cmp_class_f64 s[4:5], v[2:3], v1",
            |w, _| {
                for l in 0..64 {
                    let k = l % 10;
                    w.v[0][l] = vals[k];
                    // Lane l asks for class (l / 10) % 10 and, on odd
                    // lanes, also its own class.
                    w.v[1][l] = 1 << ((l / 10) % 10) | if l % 2 == 1 { 1 << k } else { 0 };
                    let d = f64::from(f32::from_bits(vals[k]));
                    let d = if k == 4 {
                        -f64::from_bits(1)
                    } else if k == 7 {
                        f64::from_bits(1)
                    } else if k == 0 {
                        f64::from_bits(0x7ff0_0000_0000_0001)
                    } else {
                        d
                    };
                    w.v[2][l] = d.to_bits() as u32;
                    w.v[3][l] = (d.to_bits() >> 32) as u32;
                }
            },
        )
        .unwrap();
        let want: u64 = (0..64)
            .map(|l| {
                let k = l % 10;
                u64::from((l / 10) % 10 == k || l % 2 == 1) << l
            })
            .sum();
        assert_eq!(r.wave.vcc(), want);
        assert_eq!(r.wave.s64(4), want);
    }
}
