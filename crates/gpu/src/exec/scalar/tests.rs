//! Scalar ALU tests: each instruction assembled by `llvm-mc-22` and run
//! over many operand values (and both incoming SCC values), compared with
//! reference results computed here in plain wide-integer Rust, written
//! from the ISA manual's pseudo-code.

use crate::exec::engine::{Program, Stop};
use crate::exec::op::{Ctx, Env, Fault};
use crate::exec::testing::CODE_BASE;
use crate::exec::wave::{VREGS, Wave, WaveState};
use crate::jit::ExecMode;
use crate::mem::{Tlb, Vm};
use rocjitsu_isa::Target;

/// Assembles each line on its own (one `llvm-mc-22` run for all of them)
/// and returns the bytes of each.
pub(crate) fn assemble_each(target: Target, lines: &[String]) -> Vec<Vec<u8>> {
    let encs = crate::exec::testing::assemble_lines(target, &lines.join("\n"));
    assert_eq!(encs.len(), lines.len(), "one encoding per line");
    encs
}

/// `s_endpgm`.
const ENDPGM: [u8; 4] = [0x00, 0x00, 0x81, 0xbf];

/// Code ready to run many times.
pub(crate) struct Code {
    target: Target,
    prog: Program,
}

impl Code {
    /// The instruction bytes followed by `s_endpgm`.
    pub(crate) fn new(target: Target, bytes: &[u8]) -> Code {
        let mut b = bytes.to_vec();
        b.extend_from_slice(&ENDPGM);
        Code {
            target,
            prog: Program::new(target, CODE_BASE, b),
        }
    }

    /// Assembles `asm` (several lines) into one program.
    pub(crate) fn asm(target: Target, asm: &str) -> Code {
        let lines: Vec<String> = asm.lines().map(str::to_owned).collect();
        Code::new(target, &assemble_each(target, &lines).concat())
    }

    /// Runs one wave (EXEC all ones) after `setup`, until it ends, on
    /// the interpreter; then again on the translation tier (every block
    /// translated), which must end the same way (else this panics).
    pub(crate) fn run(&self, mut setup: impl FnMut(&mut Wave)) -> Result<Wave, (Fault, u64)> {
        let interp = self.run_on(&Vm::new(), &mut setup, ExecMode::Interp);
        if self.prog.jit().is_some() {
            let jit = self.run_on(&Vm::new(), &mut setup, ExecMode::Jit);
            let d = match (&interp, &jit) {
                (Ok(a), Ok(b)) => crate::jit::diff_waves(a, b),
                (Err(a), Err(b)) if a == b => None,
                (a, b) => Some(format!("{:?} vs {:?}", a.as_ref().err(), b.as_ref().err())),
            };
            if let Some(d) = d {
                panic!("the translated run differs from the interpreter's: {d}");
            }
        }
        interp
    }

    pub(crate) fn run_vm(
        &self,
        vm: &Vm,
        setup: impl FnOnce(&mut Wave),
    ) -> Result<Wave, (Fault, u64)> {
        let mut setup = Some(setup);
        self.run_on(
            vm,
            &mut |w| (setup.take().expect("run once"))(w),
            ExecMode::Interp,
        )
    }

    fn run_on(
        &self,
        vm: &Vm,
        setup: &mut dyn FnMut(&mut Wave),
        mode: ExecMode,
    ) -> Result<Wave, (Fault, u64)> {
        let mut wave = Wave::new(VREGS);
        wave.set_exec(u64::MAX);
        wave.pc = CODE_BASE;
        setup(&mut wave);
        let mut lds = vec![0u8; 1024];
        let mut env = Env::new(self.target);
        env.lds_size = 1024;
        let mut tlb = Tlb::default();
        let mut ctx = Ctx {
            wave: &mut wave,
            lds: &mut lds,
            vm,
            tlb: &mut tlb,
            env: &env,
        };
        loop {
            match crate::jit::run(&mut ctx, &self.prog, 100_000, mode)? {
                Stop::Ended => break,
                Stop::Barrier => ctx.wave.state = WaveState::Running,
                Stop::Quantum => return Err((Fault::Invalid("did not end".into()), ctx.wave.pc)),
            }
        }
        Ok(wave)
    }
}

/// Interesting 32-bit operands: zero, small, boundaries, sign bits,
/// bit-field selectors and a few pseudo-random values.
pub(crate) fn values32() -> Vec<u32> {
    let mut v = vec![
        0,
        1,
        2,
        3,
        4,
        31,
        32,
        33,
        63,
        64,
        0xffff,
        0x1_0000,
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0001,
        0xffff_fffe,
        0xffff_ffff,
        0x0008_0004, // bfe: offset 4, width 8
        0x0020_0000, // bfe: width 32
        0x0040_0010, // bfe: width 64, offset 16
        0x001f_001f,
        0x007f_0003,
        0xaaaa_aaaa,
        0x5555_5555,
        0xf0f0_0f0f,
    ];
    let mut x = 0x9e37_79b9u32;
    for _ in 0..8 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v.push(x);
    }
    v
}

/// Interesting 64-bit operands.
pub(crate) fn values64() -> Vec<u64> {
    let mut v = vec![
        0,
        1,
        2,
        63,
        64,
        0xffff_ffff,
        0x1_0000_0000,
        0x7fff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
        0xffff_ffff_ffff_ffff,
        0xffff_ffff_0000_0000,
        0x0000_0001_ffff_ffff,
        0x0f0f_0000_f0f0_1111,
        0x8000_0000_0000_0001,
    ];
    let mut x = 0x243f_6a88_85a3_08d3u64;
    for _ in 0..8 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x);
    }
    v
}

/// A reference result: the destination value (`None`: unchanged) and SCC
/// (`None`: unchanged).
type Expect<T> = (Option<T>, Option<bool>);

const SENTINEL: u32 = 0xcafe_f00d;
const SENTINEL64: u64 = 0x5a5a_a5a5_cafe_f00d;

fn sc(x: bool) -> Option<bool> {
    Some(x)
}

/// Runs `OP s2, s0, s1` (SOP2), `OP s2, s0` (SOP1) or `OP s0, s1` (SOPC)
/// per `form` for every pair of operands and both SCC values.
fn check32(target: Target, ops: &[(&str, Form, Ref32)]) {
    let lines: Vec<String> = ops
        .iter()
        .map(|(n, f, _)| match f {
            Form::Sop2 => format!("{n} s2, s0, s1"),
            Form::Sop1 => format!("{n} s2, s0"),
            Form::Sopc => format!("{n} s0, s1"),
        })
        .collect();
    let codes = assemble_each(target, &lines);
    let vals = values32();
    for ((name, form, reference), bytes) in ops.iter().zip(&codes) {
        let code = Code::new(target, bytes);
        let bs: &[u32] = if matches!(form, Form::Sop1) {
            &[0]
        } else {
            &vals
        };
        for &a in &vals {
            for &bv in bs {
                for scc in [false, true] {
                    let w = code
                        .run(|w| {
                            w.s[0] = a;
                            w.s[1] = bv;
                            w.s[2] = SENTINEL;
                            w.scc = scc;
                        })
                        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
                    let (d, s) = reference(a, bv, scc);
                    let what = format!("{name} a={a:#x} b={bv:#x} scc={scc}");
                    assert_eq!(w.s[2], d.unwrap_or(SENTINEL), "{what}: D");
                    assert_eq!(w.scc, s.unwrap_or(scc), "{what}: SCC");
                    assert_eq!((w.s[0], w.s[1]), (a, bv), "{what}: sources kept");
                }
            }
        }
    }
}

#[derive(Copy, Clone)]
enum Form {
    Sop2,
    Sop1,
    Sopc,
}

type Ref32 = fn(u32, u32, bool) -> Expect<u32>;

fn sx(x: u32) -> i64 {
    i64::from(x as i32)
}

fn zx(x: u32) -> i64 {
    i64::from(x)
}

fn bits32(v: i64) -> u32 {
    (v & 0xffff_ffff) as u32
}

/// Bit `i` of `v`, for bit-by-bit references.
fn bit(v: u64, i: u32) -> u64 {
    (v >> i) & 1
}

#[test]
fn sop2_32bit_arithmetic_matches_reference() {
    let ops: &[(&str, Form, Ref32)] = &[
        ("s_add_u32", Form::Sop2, |a, b, _| {
            let t = zx(a) + zx(b);
            (Some(bits32(t)), Some(t >= 1 << 32))
        }),
        ("s_sub_u32", Form::Sop2, |a, b, _| {
            (Some(bits32(zx(a) - zx(b))), Some(zx(b) > zx(a)))
        }),
        ("s_add_i32", Form::Sop2, |a, b, _| {
            let t = sx(a) + sx(b);
            (Some(bits32(t)), Some(t != i64::from(t as i32)))
        }),
        ("s_sub_i32", Form::Sop2, |a, b, _| {
            let t = sx(a) - sx(b);
            (Some(bits32(t)), Some(t != i64::from(t as i32)))
        }),
        ("s_addc_u32", Form::Sop2, |a, b, c| {
            let t = zx(a) + zx(b) + i64::from(c);
            (Some(bits32(t)), Some(t >= 1 << 32))
        }),
        ("s_subb_u32", Form::Sop2, |a, b, c| {
            let t = zx(a) - zx(b) - i64::from(c);
            (Some(bits32(t)), Some(t < 0))
        }),
        ("s_min_i32", Form::Sop2, |a, b, _| {
            let first = sx(a) < sx(b);
            (Some(if first { a } else { b }), Some(first))
        }),
        ("s_min_u32", Form::Sop2, |a, b, _| {
            let first = zx(a) < zx(b);
            (Some(if first { a } else { b }), Some(first))
        }),
        ("s_max_i32", Form::Sop2, |a, b, _| {
            let first = sx(a) >= sx(b);
            (Some(if first { a } else { b }), Some(first))
        }),
        ("s_max_u32", Form::Sop2, |a, b, _| {
            let first = zx(a) >= zx(b);
            (Some(if first { a } else { b }), Some(first))
        }),
        ("s_cselect_b32", Form::Sop2, |a, b, c| {
            (Some(if c { a } else { b }), None)
        }),
        ("s_mul_i32", Form::Sop2, |a, b, _| {
            (Some(bits32(sx(a).wrapping_mul(sx(b)))), None)
        }),
        ("s_mul_hi_u32", Form::Sop2, |a, b, _| {
            (Some(((u128::from(a) * u128::from(b)) >> 32) as u32), None)
        }),
        ("s_mul_hi_i32", Form::Sop2, |a, b, _| {
            (Some(bits32((sx(a) * sx(b)) >> 32)), None)
        }),
        ("s_absdiff_i32", Form::Sop2, |a, b, _| {
            // The difference wraps to 32 bits before the absolute value.
            let d = bits32(sx(a) - sx(b));
            let r = if (d as i32) < 0 { bits32(-sx(d)) } else { d };
            (Some(r), Some(r != 0))
        }),
        ("s_lshl1_add_u32", Form::Sop2, |a, b, _| lshl_add(a, b, 1)),
        ("s_lshl2_add_u32", Form::Sop2, |a, b, _| lshl_add(a, b, 2)),
        ("s_lshl3_add_u32", Form::Sop2, |a, b, _| lshl_add(a, b, 3)),
        ("s_lshl4_add_u32", Form::Sop2, |a, b, _| lshl_add(a, b, 4)),
        ("s_pack_ll_b32_b16", Form::Sop2, |a, b, _| {
            (Some((a % 65536) + (b % 65536) * 65536), None)
        }),
        ("s_pack_lh_b32_b16", Form::Sop2, |a, b, _| {
            (Some((a % 65536) + (b / 65536) * 65536), None)
        }),
        ("s_pack_hh_b32_b16", Form::Sop2, |a, b, _| {
            (Some((a / 65536) + (b / 65536) * 65536), None)
        }),
    ];
    check32(Target::Gfx942, ops);
}

fn lshl_add(a: u32, b: u32, n: u32) -> Expect<u32> {
    let t = u128::from(a) * (1 << n) + u128::from(b);
    (Some(t as u32), Some(t > 0xffff_ffff))
}

/// Reference logic ops, bit by bit.
fn bitwise32(a: u32, b: u32, f: fn(u64, u64) -> u64) -> Expect<u32> {
    let mut r = 0u32;
    for i in 0..32 {
        r |= (f(bit(a.into(), i), bit(b.into(), i)) as u32 & 1) << i;
    }
    (Some(r), Some(r != 0))
}

#[test]
fn sop2_32bit_logic_shifts_bitfields_match_reference() {
    let ops: &[(&str, Form, Ref32)] = &[
        ("s_and_b32", Form::Sop2, |a, b, _| {
            bitwise32(a, b, |x, y| x & y)
        }),
        ("s_or_b32", Form::Sop2, |a, b, _| {
            bitwise32(a, b, |x, y| x | y)
        }),
        ("s_xor_b32", Form::Sop2, |a, b, _| {
            bitwise32(a, b, |x, y| x ^ y)
        }),
        ("s_andn2_b32", Form::Sop2, |a, b, _| {
            bitwise32(a, b, |x, y| x & (1 - y))
        }),
        ("s_orn2_b32", Form::Sop2, |a, b, _| {
            bitwise32(a, b, |x, y| x | (1 - y))
        }),
        ("s_nand_b32", Form::Sop2, |a, b, _| {
            bitwise32(a, b, |x, y| 1 - (x & y))
        }),
        ("s_nor_b32", Form::Sop2, |a, b, _| {
            bitwise32(a, b, |x, y| 1 - (x | y))
        }),
        ("s_xnor_b32", Form::Sop2, |a, b, _| {
            bitwise32(a, b, |x, y| 1 - (x ^ y))
        }),
        ("s_lshl_b32", Form::Sop2, |a, b, _| {
            let r = bits32(zx(a) * (1i64 << (b % 32)));
            (Some(r), Some(r != 0))
        }),
        ("s_lshr_b32", Form::Sop2, |a, b, _| {
            let r = a / (1u32 << (b % 32));
            (Some(r), Some(r != 0))
        }),
        ("s_ashr_i32", Form::Sop2, |a, b, _| {
            let r = bits32(sx(a).div_euclid(1i64 << (b % 32)));
            (Some(r), Some(r != 0))
        }),
        ("s_bfm_b32", Form::Sop2, |a, b, _| {
            let mut r = 0u32;
            for i in 0..(a % 32) {
                if i + b % 32 < 32 {
                    r |= 1 << (i + b % 32);
                }
            }
            (Some(r), None)
        }),
        ("s_bfe_u32", Form::Sop2, |a, b, _| {
            let (off, width) = (b % 32, (b >> 16) % 128);
            let mut r = 0u32;
            for i in 0..width.min(32) {
                if off + i < 32 {
                    r |= (bit(a.into(), off + i) as u32) << i;
                }
            }
            (Some(r), Some(r != 0))
        }),
        ("s_bfe_i32", Form::Sop2, |a, b, _| {
            let (off, width) = (b % 32, (b >> 16) % 128);
            // Bits above bit 31 of the shifted source are copies of the
            // sign bit (arithmetic shift).
            let src = |i: u32| bit(a.into(), (off + i).min(31));
            let mut r = 0u32;
            for i in 0..32 {
                let v = if width == 0 {
                    0
                } else if i < width {
                    src(i)
                } else {
                    src(width - 1)
                };
                r |= (v as u32) << i;
            }
            if width >= 32 {
                r = bits32(sx(a) >> off);
            }
            (Some(r), Some(r != 0))
        }),
        ("s_bitcmp0_b32", Form::Sopc, |a, b, _| {
            (None, Some(bit(a.into(), b % 32) == 0))
        }),
        ("s_bitcmp1_b32", Form::Sopc, |a, b, _| {
            (None, Some(bit(a.into(), b % 32) == 1))
        }),
    ];
    check32(Target::Gfx90a, ops);
}

#[test]
fn sopc_32bit_compares_match_reference() {
    let ops: &[(&str, Form, Ref32)] = &[
        ("s_cmp_eq_i32", Form::Sopc, |a, b, _| {
            (None, sc(sx(a) == sx(b)))
        }),
        ("s_cmp_lg_i32", Form::Sopc, |a, b, _| {
            (None, sc(sx(a) != sx(b)))
        }),
        ("s_cmp_gt_i32", Form::Sopc, |a, b, _| {
            (None, sc(sx(a) > sx(b)))
        }),
        ("s_cmp_ge_i32", Form::Sopc, |a, b, _| {
            (None, sc(sx(a) >= sx(b)))
        }),
        ("s_cmp_lt_i32", Form::Sopc, |a, b, _| {
            (None, sc(sx(a) < sx(b)))
        }),
        ("s_cmp_le_i32", Form::Sopc, |a, b, _| {
            (None, sc(sx(a) <= sx(b)))
        }),
        ("s_cmp_eq_u32", Form::Sopc, |a, b, _| {
            (None, sc(zx(a) == zx(b)))
        }),
        ("s_cmp_lg_u32", Form::Sopc, |a, b, _| {
            (None, sc(zx(a) != zx(b)))
        }),
        ("s_cmp_gt_u32", Form::Sopc, |a, b, _| {
            (None, sc(zx(a) > zx(b)))
        }),
        ("s_cmp_ge_u32", Form::Sopc, |a, b, _| {
            (None, sc(zx(a) >= zx(b)))
        }),
        ("s_cmp_lt_u32", Form::Sopc, |a, b, _| {
            (None, sc(zx(a) < zx(b)))
        }),
        ("s_cmp_le_u32", Form::Sopc, |a, b, _| {
            (None, sc(zx(a) <= zx(b)))
        }),
    ];
    check32(Target::Gfx950, ops);
}

/// Reference for the find-first / find-last-bit family: the first index
/// `i` in `order` with `pred(i)`, or -1.
fn first(order: impl Iterator<Item = u32>, pred: impl Fn(u32) -> bool) -> u32 {
    for (k, i) in order.enumerate() {
        if pred(i) {
            return k as u32;
        }
    }
    u32::MAX
}

#[test]
fn sop1_32bit_ops_match_reference() {
    let ops: &[(&str, Form, Ref32)] = &[
        ("s_mov_b32", Form::Sop1, |a, _, _| (Some(a), None)),
        ("s_cmov_b32", Form::Sop1, |a, _, c| (c.then_some(a), None)),
        ("s_not_b32", Form::Sop1, |a, _, _| {
            (Some(u32::MAX - a), sc(a != u32::MAX))
        }),
        ("s_wqm_b32", Form::Sop1, |a, _, _| {
            let mut r = 0;
            for q in 0..8 {
                if (a >> (4 * q)) % 16 != 0 {
                    r += 15 << (4 * q);
                }
            }
            (Some(r), sc(r != 0))
        }),
        ("s_quadmask_b32", Form::Sop1, |a, _, _| {
            let mut r = 0;
            for q in 0..8 {
                if (a >> (4 * q)) % 16 != 0 {
                    r += 1 << q;
                }
            }
            (Some(r), sc(r != 0))
        }),
        ("s_brev_b32", Form::Sop1, |a, _, _| {
            let mut r = 0;
            for i in 0..32 {
                r |= (bit(a.into(), i) as u32) << (31 - i);
            }
            (Some(r), None)
        }),
        ("s_bcnt0_i32_b32", Form::Sop1, |a, _, _| {
            let n = (0..32).filter(|&i| bit(a.into(), i) == 0).count() as u32;
            (Some(n), sc(n != 0))
        }),
        ("s_bcnt1_i32_b32", Form::Sop1, |a, _, _| {
            let n = (0..32).filter(|&i| bit(a.into(), i) == 1).count() as u32;
            (Some(n), sc(n != 0))
        }),
        ("s_ff0_i32_b32", Form::Sop1, |a, _, _| {
            (Some(first(0..32, |i| bit(a.into(), i) == 0)), None)
        }),
        ("s_ff1_i32_b32", Form::Sop1, |a, _, _| {
            (Some(first(0..32, |i| bit(a.into(), i) == 1)), None)
        }),
        ("s_flbit_i32_b32", Form::Sop1, |a, _, _| {
            (Some(first((0..32).rev(), |i| bit(a.into(), i) == 1)), None)
        }),
        ("s_flbit_i32", Form::Sop1, |a, _, _| {
            let sign = bit(a.into(), 31);
            let r = first((0..31).rev(), |i| bit(a.into(), i) != sign);
            // Counted from the MSB: bit 30 is position 1.
            (Some(if r == u32::MAX { r } else { r + 1 }), None)
        }),
        ("s_sext_i32_i8", Form::Sop1, |a, _, _| {
            let v = i64::from(a % 256);
            (Some(bits32(if v >= 128 { v - 256 } else { v })), None)
        }),
        ("s_sext_i32_i16", Form::Sop1, |a, _, _| {
            let v = i64::from(a % 65536);
            (Some(bits32(if v >= 32768 { v - 65536 } else { v })), None)
        }),
        ("s_abs_i32", Form::Sop1, |a, _, _| {
            let r = bits32(sx(a).abs());
            (Some(r), sc(r != 0))
        }),
    ];
    check32(Target::Gfx942, ops);
}

#[test]
fn manual_functional_examples() {
    // The ISA manual's worked examples for the counting instructions.
    let cases: &[(&str, u32, u32)] = &[
        ("s_ff0_i32_b32", 0xfffe_ffff, 16),
        ("s_ff1_i32_b32", 0x0001_0000, 16),
        ("s_flbit_i32_b32", 0x0000_cccc, 16),
        ("s_flbit_i32_b32", 0x7fff_ffff, 1),
        ("s_flbit_i32", 0xffff_3333, 16),
        ("s_flbit_i32", 0x8000_0000, 1),
        ("s_flbit_i32", 0xffff_ffff, 0xffff_ffff),
        ("s_abs_i32", 0x8000_0000, 0x8000_0000),
        ("s_abs_i32", 0x8000_0002, 0x7fff_fffe),
        ("s_bcnt0_i32_b32", 0xcccc_cccc, 16),
    ];
    let lines: Vec<String> = cases
        .iter()
        .map(|(n, _, _)| format!("{n} s2, s0"))
        .collect();
    for ((name, a, want), bytes) in cases.iter().zip(assemble_each(Target::Gfx942, &lines)) {
        let w = Code::new(Target::Gfx942, &bytes)
            .run(|w| w.s[0] = *a)
            .unwrap();
        assert_eq!(w.s[2], *want, "{name}({a:#x})");
    }
    let w = Code::asm(
        Target::Gfx942,
        "s_absdiff_i32 s2, 0x80000000, 1\ns_absdiff_i32 s3, 0x80000000, -2",
    )
    .run(|_| {})
    .unwrap();
    assert_eq!((w.s[2], w.s[3]), (0x7fff_ffff, 0x7fff_fffe));
}

type Ref64 = fn(u64, u64, bool) -> Expect<u64>;

/// `OP s[4:5], s[0:1], s[2:3]` (or `s2` when the second source is 32-bit,
/// `OP s[4:5], s[0:1]` for SOP1, `OP s[0:1], s[2:3]` / `s2` for SOPC) over
/// 64-bit operand pairs.
fn check64(target: Target, ops: &[(&str, &str, Ref64)]) {
    let lines: Vec<String> = ops.iter().map(|(n, f, _)| format!("{n} {f}")).collect();
    let codes = assemble_each(target, &lines);
    let vals = values64();
    let mut bvals = vals.clone();
    bvals.extend(values32().into_iter().map(u64::from));
    for ((name, form, reference), bytes) in ops.iter().zip(&codes) {
        let code = Code::new(target, bytes);
        let one_src = !form.contains("s2") && !form.contains("s[2:3]");
        let bs: &[u64] = if one_src { &[0] } else { &bvals };
        for &a in &vals {
            for &bv in bs {
                for scc in [false, true] {
                    let w = code
                        .run(|w| {
                            w.set_s64(0, a);
                            w.set_s64(2, bv);
                            w.set_s64(4, SENTINEL64);
                            w.scc = scc;
                        })
                        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
                    // A 32-bit second source sees only s2.
                    let bsrc = if form.ends_with("s2") {
                        bv & 0xffff_ffff
                    } else {
                        bv
                    };
                    let (d, s) = reference(a, bsrc, scc);
                    let what = format!("{name} a={a:#x} b={bsrc:#x} scc={scc}");
                    let got = if form.starts_with("s4,") || form.starts_with("s4 ") {
                        (u64::from(w.s[4]) | (SENTINEL64 >> 32) << 32, w.scc)
                    } else {
                        (w.s64(4), w.scc)
                    };
                    assert_eq!(got.0, d.unwrap_or(SENTINEL64), "{what}: D");
                    assert_eq!(got.1, s.unwrap_or(scc), "{what}: SCC");
                }
            }
        }
    }
}

/// The low word of a 32-bit result placed over the sentinel's high word
/// (32-bit destinations of 64-bit sources leave s5 alone).
fn lo(v: u32) -> Option<u64> {
    Some(u64::from(v) | (SENTINEL64 >> 32) << 32)
}

fn bitwise64(a: u64, b: u64, f: fn(u64, u64) -> u64) -> Expect<u64> {
    let mut r = 0u64;
    for i in 0..64 {
        r |= (f(bit(a, i), bit(b, i)) & 1) << i;
    }
    (Some(r), Some(r != 0))
}

#[test]
fn sop_64bit_ops_match_reference() {
    const AB: &str = "s[4:5], s[0:1], s[2:3]";
    const AB32: &str = "s[4:5], s[0:1], s2";
    const A: &str = "s[4:5], s[0:1]";
    const A32D: &str = "s4, s[0:1]";
    const CMP: &str = "s[0:1], s[2:3]";
    const CMP32: &str = "s[0:1], s2";
    let ops: &[(&str, &str, Ref64)] = &[
        ("s_and_b64", AB, |a, b, _| bitwise64(a, b, |x, y| x & y)),
        ("s_or_b64", AB, |a, b, _| bitwise64(a, b, |x, y| x | y)),
        ("s_xor_b64", AB, |a, b, _| bitwise64(a, b, |x, y| x ^ y)),
        ("s_andn2_b64", AB, |a, b, _| {
            bitwise64(a, b, |x, y| x & (1 - y))
        }),
        ("s_orn2_b64", AB, |a, b, _| {
            bitwise64(a, b, |x, y| x | (1 - y))
        }),
        ("s_nand_b64", AB, |a, b, _| {
            bitwise64(a, b, |x, y| 1 - (x & y))
        }),
        ("s_nor_b64", AB, |a, b, _| {
            bitwise64(a, b, |x, y| 1 - (x | y))
        }),
        ("s_xnor_b64", AB, |a, b, _| {
            bitwise64(a, b, |x, y| 1 - (x ^ y))
        }),
        ("s_cselect_b64", AB, |a, b, c| {
            (Some(if c { a } else { b }), None)
        }),
        ("s_lshl_b64", AB32, |a, b, _| {
            let r = (u128::from(a) << (b % 64)) as u64;
            (Some(r), Some(r != 0))
        }),
        ("s_lshr_b64", AB32, |a, b, _| {
            let r = a / (1u64 << (b % 64));
            (Some(r), Some(r != 0))
        }),
        ("s_ashr_i64", AB32, |a, b, _| {
            let r = (i128::from(a as i64).div_euclid(1i128 << (b % 64))) as u64;
            (Some(r), Some(r != 0))
        }),
        ("s_bfe_u64", AB32, |a, b, _| {
            let (off, width) = ((b % 64) as u32, ((b >> 16) % 128) as u32);
            let mut r = 0u64;
            for i in 0..width.min(64) {
                if off + i < 64 {
                    r |= bit(a, off + i) << i;
                }
            }
            (Some(r), Some(r != 0))
        }),
        ("s_bfe_i64", AB32, |a, b, _| {
            let (off, width) = ((b % 64) as u32, ((b >> 16) % 128) as u32);
            let src = |i: u32| bit(a, (off + i).min(63));
            let mut r = 0u64;
            for i in 0..64 {
                let v = if width == 0 {
                    0
                } else if i < width {
                    src(i)
                } else {
                    src(width - 1)
                };
                r |= v << i;
            }
            (Some(r), Some(r != 0))
        }),
        ("s_mov_b64", A, |a, _, _| (Some(a), None)),
        ("s_cmov_b64", A, |a, _, c| (c.then_some(a), None)),
        ("s_not_b64", A, |a, _, _| {
            (Some(u64::MAX - a), Some(a != u64::MAX))
        }),
        ("s_brev_b64", A, |a, _, _| {
            let mut r = 0;
            for i in 0..64 {
                r |= bit(a, i) << (63 - i);
            }
            (Some(r), None)
        }),
        ("s_wqm_b64", A, |a, _, _| {
            let mut r = 0u64;
            for q in 0..16 {
                if (a >> (4 * q)) % 16 != 0 {
                    r += 15 << (4 * q);
                }
            }
            (Some(r), Some(r != 0))
        }),
        ("s_quadmask_b64", A, |a, _, _| {
            let mut r = 0u64;
            for q in 0..16 {
                if (a >> (4 * q)) % 16 != 0 {
                    r += 1 << q;
                }
            }
            (Some(r), Some(r != 0))
        }),
        ("s_bcnt0_i32_b64", A32D, |a, _, _| {
            let n = (0..64).filter(|&i| bit(a, i) == 0).count() as u32;
            (lo(n), Some(n != 0))
        }),
        ("s_bcnt1_i32_b64", A32D, |a, _, _| {
            let n = (0..64).filter(|&i| bit(a, i) == 1).count() as u32;
            (lo(n), Some(n != 0))
        }),
        ("s_ff0_i32_b64", A32D, |a, _, _| {
            (lo(first(0..64, |i| bit(a, i) == 0)), None)
        }),
        ("s_ff1_i32_b64", A32D, |a, _, _| {
            (lo(first(0..64, |i| bit(a, i) == 1)), None)
        }),
        ("s_flbit_i32_b64", A32D, |a, _, _| {
            (lo(first((0..64).rev(), |i| bit(a, i) == 1)), None)
        }),
        ("s_flbit_i32_i64", A32D, |a, _, _| {
            let sign = bit(a, 63);
            let r = first((0..63).rev(), |i| bit(a, i) != sign);
            (lo(if r == u32::MAX { r } else { r + 1 }), None)
        }),
        ("s_cmp_eq_u64", CMP, |a, b, _| (None, Some(a == b))),
        ("s_cmp_lg_u64", CMP, |a, b, _| (None, Some(a != b))),
        ("s_bitcmp0_b64", CMP32, |a, b, _| {
            (None, Some(bit(a, (b % 64) as u32) == 0))
        }),
        ("s_bitcmp1_b64", CMP32, |a, b, _| {
            (None, Some(bit(a, (b % 64) as u32) == 1))
        }),
    ];
    check64(Target::Gfx942, ops);
}

#[test]
fn bfm_bitset_bitreplicate_match_reference() {
    let code = Code::asm(
        Target::Gfx942,
        "s_bfm_b64 s[4:5], s0, s1\n\
         s_bitset0_b32 s6, s0\n\
         s_bitset1_b32 s7, s0\n\
         s_bitset0_b64 s[8:9], s0\n\
         s_bitset1_b64 s[10:11], s0\n\
         s_bitreplicate_b64_b32 s[12:13], s1",
    );
    for &a in &values32() {
        for &b in &values32() {
            let w = code
                .run(|w| {
                    w.s[0] = a;
                    w.s[1] = b;
                    w.s[6] = 0xffff_ffff;
                    w.s[7] = 0;
                    w.set_s64(8, u64::MAX);
                    w.set_s64(10, 0);
                })
                .unwrap();
            let mut bfm = 0u64;
            for i in 0..(a % 64) {
                if i + b % 64 < 64 {
                    bfm |= 1 << (i + b % 64);
                }
            }
            assert_eq!(w.s64(4), bfm, "bfm_b64 {a:#x} {b:#x}");
            assert_eq!(w.s[6], u32::MAX - (1 << (a % 32)), "bitset0_b32 {a}");
            assert_eq!(w.s[7], 1 << (a % 32), "bitset1_b32 {a}");
            assert_eq!(w.s64(8), u64::MAX - (1 << (a % 64)), "bitset0_b64 {a}");
            assert_eq!(w.s64(10), 1 << (a % 64), "bitset1_b64 {a}");
            let mut rep = 0u64;
            for i in 0..32 {
                rep |= bit(b.into(), i) << (2 * i) | bit(b.into(), i) << (2 * i + 1);
            }
            assert_eq!(w.s64(12), rep, "bitreplicate {b:#x}");
        }
    }
}

#[test]
fn sopk_ops_match_reference() {
    let imms: [i16; 8] = [0, 1, -1, 0x7fff, -0x8000, 100, -100, 0x1234];
    let names = [
        "s_cmpk_eq_i32",
        "s_cmpk_lg_i32",
        "s_cmpk_gt_i32",
        "s_cmpk_ge_i32",
        "s_cmpk_lt_i32",
        "s_cmpk_le_i32",
        "s_cmpk_eq_u32",
        "s_cmpk_lg_u32",
        "s_cmpk_gt_u32",
        "s_cmpk_ge_u32",
        "s_cmpk_lt_u32",
        "s_cmpk_le_u32",
        "s_movk_i32",
        "s_cmovk_i32",
        "s_addk_i32",
        "s_mulk_i32",
    ];
    let mut lines = Vec::new();
    for n in names {
        for k in imms {
            lines.push(format!("{n} s0, {:#x}", k as u16));
        }
    }
    let codes = assemble_each(Target::Gfx90a, &lines);
    let mut vals = values32();
    vals.extend([
        100,
        0xffff_ff9c,
        0x7fff,
        0x8000,
        0xffff_8000,
        0x1234,
        0x7fff_ff00,
    ]);
    let mut it = codes.iter();
    for n in names {
        for k in imms {
            let code = Code::new(Target::Gfx90a, it.next().expect("assembled"));
            let (ks, ku) = (i64::from(k), i64::from(k as u16));
            for &a in &vals {
                for scc in [false, true] {
                    let w = code
                        .run(|w| {
                            w.s[0] = a;
                            w.scc = scc;
                        })
                        .unwrap();
                    let (sa, za) = (sx(a), zx(a));
                    let (d, s): Expect<u32> = match n {
                        "s_cmpk_eq_i32" => (None, sc(sa == ks)),
                        "s_cmpk_lg_i32" => (None, sc(sa != ks)),
                        "s_cmpk_gt_i32" => (None, sc(sa > ks)),
                        "s_cmpk_ge_i32" => (None, sc(sa >= ks)),
                        "s_cmpk_lt_i32" => (None, sc(sa < ks)),
                        "s_cmpk_le_i32" => (None, sc(sa <= ks)),
                        "s_cmpk_eq_u32" => (None, sc(za == ku)),
                        "s_cmpk_lg_u32" => (None, sc(za != ku)),
                        "s_cmpk_gt_u32" => (None, sc(za > ku)),
                        "s_cmpk_ge_u32" => (None, sc(za >= ku)),
                        "s_cmpk_lt_u32" => (None, sc(za < ku)),
                        "s_cmpk_le_u32" => (None, sc(za <= ku)),
                        "s_movk_i32" => (Some(bits32(ks)), None),
                        "s_cmovk_i32" => (scc.then_some(bits32(ks)), None),
                        "s_addk_i32" => {
                            let t = sa + ks;
                            (Some(bits32(t)), sc(t != i64::from(t as i32)))
                        }
                        _ => (Some(bits32(sa * ks)), None),
                    };
                    let what = format!("{n} {a:#x}, {k}");
                    assert_eq!(w.s[0], d.unwrap_or(a), "{what}: D");
                    assert_eq!(w.scc, s.unwrap_or(scc), "{what}: SCC");
                }
            }
        }
    }
}

#[test]
fn constants_and_literals_as_scalar_sources() {
    let w = Code::asm(
        Target::Gfx942,
        "s_mov_b64 s[0:1], -1\n\
         s_mov_b64 s[2:3], 0x80000000\n\
         s_add_u32 s4, -16, 0x12345678\n\
         s_mov_b32 s5, 0.5\n\
         s_mov_b64 s[6:7], 1.0\n\
         s_and_b64 s[8:9], s[0:1], 64\n\
         s_lshl_b64 s[10:11], 1, 40\n\
         s_mov_b32 s12, vcc_lo\n\
         s_mov_b32 s13, exec_hi\n\
         s_mov_b32 s14, src_scc",
    )
    .run(|w| {
        w.set_vcc(0x1234_5678_9abc_def0);
        w.set_exec(0xdead_beef_0000_0001);
        w.scc = true;
    })
    .unwrap();
    assert_eq!(w.s64(0), u64::MAX);
    assert_eq!(w.s64(2), 0x8000_0000);
    assert_eq!(w.s[4], 0x1234_5678u32.wrapping_sub(16));
    assert_eq!(w.s[5], 0.5f32.to_bits());
    assert_eq!(w.s64(6), 1.0f64.to_bits());
    assert_eq!(w.s64(8), 64);
    assert_eq!(w.s64(10), 1 << 40);
    assert_eq!(w.s[12], 0x9abc_def0);
    assert_eq!(w.s[13], 0xdead_beef);
    assert_eq!(w.s[14], 1);
}

#[test]
fn add_with_carry_chain_is_64bit_addition() {
    let code = Code::asm(
        Target::Gfx942,
        "s_add_u32 s4, s0, s2\n\
         s_addc_u32 s5, s1, s3\n\
         s_sub_u32 s6, s0, s2\n\
         s_subb_u32 s7, s1, s3\n\
         s_cselect_b32 s8, 1, 0",
    );
    for &a in &values64() {
        for &bv in &values64() {
            let w = code
                .run(|w| {
                    w.set_s64(0, a);
                    w.set_s64(2, bv);
                })
                .unwrap();
            assert_eq!(w.s64(4), a.wrapping_add(bv), "{a:#x} + {bv:#x}");
            assert_eq!(w.s64(6), a.wrapping_sub(bv), "{a:#x} - {bv:#x}");
            // The final SCC is the borrow of the 64-bit subtraction.
            assert_eq!(w.s[8], u32::from(bv > a), "borrow {a:#x} - {bv:#x}");
        }
    }
}

#[test]
fn every_scalar_and_smem_opcode_has_semantics() {
    use rocjitsu_isa::gfx9::tables::{smem, sop};
    let names = sop::SOP2
        .iter()
        .chain(sop::SOP1)
        .chain(sop::SOPC)
        .map(|r| r.name)
        .chain(sop::SOPK.iter().map(|r| r.name))
        .chain(sop::SOPP.iter().map(|r| r.name));
    for n in names {
        assert!(super::lookup(n).is_some(), "{n} has no semantics");
    }
    for r in smem::SMEM {
        // Scalar scratch accesses are not modelled (see the smem module).
        let scratch = r.name.starts_with("s_scratch_");
        assert_eq!(
            crate::exec::smem::lookup(r.name).is_some(),
            !scratch,
            "{}",
            r.name
        );
    }
}
