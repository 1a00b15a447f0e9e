//! Vector memory tests: snippets assembled by llvm-mc-22, results compared
//! with a plain-Rust model of each access computed from the test's inputs.

use crate::exec::op::Fault;
use crate::exec::testing::{Run, run, run_with};
use crate::exec::wave::{Apertures, Wave, sreg};
use crate::mem::{Perms, Vm};
use rocjitsu_isa::Target;

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed;
    (0..n).map(|_| splitmix(&mut s) as u8).collect()
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A partial EXEC with holes in both halves.
const EXEC: u64 = 0xf0f0_ffff_0ff0_7ffe;

fn set_addr64(w: &mut Wave, reg: usize, lane: usize, a: u64) {
    w.v[reg][lane] = a as u32;
    w.v[reg + 1][lane] = (a >> 32) as u32;
}

/// Runs `asm` with a random 4 KiB buffer at `buf`, per-lane byte offsets
/// `off[l]` in v2 (32-bit, for saddr forms) and 64-bit addresses
/// `buf + off[l]` in v[4:5], `buf` in s[4:5], the old destination values
/// `old[l]` in v10..v13 and the partial EXEC. Returns the run, the buffer's
/// initial bytes and its address.
fn global_case(asm: &str, off: &[u64; 64], old: &[[u32; 64]; 4]) -> (Run, Vec<u8>, u64) {
    global_case_with(asm, Target::Gfx942.sramecc_default(), off, old)
}

/// [`global_case`] on a GPU with SRAM ECC on or off.
fn global_case_with(
    asm: &str,
    sramecc: bool,
    off: &[u64; 64],
    old: &[[u32; 64]; 4],
) -> (Run, Vec<u8>, u64) {
    let init = random_bytes(4096, 7);
    let mut buf = 0;
    let r = run_with(Target::Gfx942, asm, &|e| e.sramecc = sramecc, |w, vm| {
        buf = vm.alloc(4096, Perms::RW);
        vm.fill(buf, &init).unwrap();
        w.set_s64(4, buf);
        for l in 0..64 {
            w.v[2][l] = off[l] as u32;
            set_addr64(w, 4, l, buf + off[l]);
            for k in 0..4 {
                w.v[10 + k][l] = old[k][l];
            }
        }
        w.set_exec(EXEC);
    })
    .unwrap();
    (r, init, buf)
}

fn offsets(stride: u64, base: u64) -> [u64; 64] {
    std::array::from_fn(|l| base + stride * l as u64 + (l as u64 % 3))
}

fn olds() -> [[u32; 64]; 4] {
    let mut s = 99;
    std::array::from_fn(|_| std::array::from_fn(|_| splitmix(&mut s) as u32))
}

/// The reference result of a load of `size` bytes at `at` over `old`
/// (which a D16 load keeps half of only with SRAM ECC off: pass 0 for
/// `old` when it is on).
fn model_load(kind: &str, mem: &[u8], at: usize, old: u32) -> u32 {
    let b = mem[at];
    let h = u16::from_le_bytes([mem[at], mem[at + 1]]);
    match kind {
        "ubyte" => u32::from(b),
        "sbyte" => i32::from(b as i8) as u32,
        "ushort" => u32::from(h),
        "sshort" => i32::from(h as i16) as u32,
        "ubyte_d16" => (old & 0xffff_0000) | u32::from(b),
        "sbyte_d16" => (old & 0xffff_0000) | u32::from(i16::from(b as i8) as u16),
        "short_d16" => (old & 0xffff_0000) | u32::from(h),
        "ubyte_d16_hi" => (old & 0xffff) | (u32::from(b) << 16),
        "sbyte_d16_hi" => (old & 0xffff) | (u32::from(i16::from(b as i8) as u16) << 16),
        "short_d16_hi" => (old & 0xffff) | (u32::from(h) << 16),
        _ => le32(mem, at),
    }
}

#[test]
fn global_loads_of_every_size_with_vaddr_and_saddr() {
    let old = olds();
    let kinds = [
        ("ubyte", 1),
        ("sbyte", 1),
        ("ushort", 1),
        ("sshort", 1),
        ("dword", 1),
        ("dwordx2", 2),
        ("dwordx3", 3),
        ("dwordx4", 4),
        ("ubyte_d16", 1),
        ("sbyte_d16", 1),
        ("short_d16", 1),
        ("ubyte_d16_hi", 1),
        ("sbyte_d16_hi", 1),
        ("short_d16_hi", 1),
    ];
    for (kind, n) in kinds {
        let dst = match n {
            1 => "v10".to_string(),
            n => format!("v[10:{}]", 9 + n),
        };
        // SRAM ECC on (as shipped) and off.
        for ((form, imm), ecc) in [("v[4:5], off", -24i64), ("v2, s[4:5]", 40)]
            .into_iter()
            .flat_map(|f| [(f, true), (f, false)])
        {
            let asm = format!("global_load_{kind} {dst}, {form} offset:{imm}");
            let off = offsets(17, 64);
            let (r, mem, _) = global_case_with(&asm, ecc, &off, &old);
            for l in 0..64 {
                for k in 0..n {
                    let got = r.wave.v[10 + k][l];
                    let want = if EXEC >> l & 1 == 0 {
                        old[k][l]
                    } else {
                        let at = (off[l] as i64 + imm) as usize + 4 * k;
                        model_load(kind, &mem, at, if ecc { 0 } else { old[k][l] })
                    };
                    assert_eq!(got, want, "{asm} (sramecc {ecc}): lane {l} dword {k}");
                }
            }
        }
    }
}

#[test]
fn global_stores_of_every_size() {
    let old = olds();
    let kinds = [
        ("byte", 1, 1),
        ("short", 1, 2),
        ("dword", 1, 4),
        ("dwordx2", 2, 4),
        ("dwordx3", 3, 4),
        ("dwordx4", 4, 4),
        ("byte_d16_hi", 1, 1),
        ("short_d16_hi", 1, 2),
    ];
    for (kind, n, size) in kinds {
        let data = match n {
            1 => "v10".to_string(),
            n => format!("v[10:{}]", 9 + n),
        };
        for (form, imm) in [("v[4:5], {data}, off", 12i64), ("v2, {data}, s[4:5]", -4)] {
            let asm = format!(
                "global_store_{kind} {} offset:{imm}",
                form.replace("{data}", &data)
            );
            // Lanes store to disjoint slots.
            let off = offsets(32, 16);
            let (r, init, buf) = global_case(&asm, &off, &old);
            let mut want = init.clone();
            for l in 0..64 {
                if EXEC >> l & 1 == 0 {
                    continue;
                }
                for k in 0..n {
                    let v = if kind.ends_with("_hi") {
                        old[k][l] >> 16
                    } else {
                        old[k][l]
                    };
                    let at = (off[l] as i64 + imm) as usize + 4 * k;
                    want[at..at + size].copy_from_slice(&v.to_le_bytes()[..size]);
                }
            }
            assert_eq!(r.vm.read_vec(buf, 4096).unwrap(), want, "{asm}");
        }
    }
}

#[test]
fn loads_and_stores_through_agprs() {
    let mut buf = 0;
    let r = run(
        Target::Gfx90a,
        "global_load_dwordx2 a[4:5], v[2:3], off\n\
         s_waitcnt vmcnt(0)\n\
         global_store_dword v[2:3], a5, off offset:8",
        |w, vm| {
            buf = vm.alloc(16, Perms::RW);
            vm.fill(buf, &[1, 0, 0, 0, 2, 0, 0, 0]).unwrap();
            w.set_exec(1);
            set_addr64(w, 2, 0, buf);
        },
    )
    .unwrap();
    assert_eq!((r.wave.v[256 + 4][0], r.wave.v[256 + 5][0]), (1, 2));
    assert_eq!(r.vm.read_vec(buf + 8, 4).unwrap(), [2, 0, 0, 0]);
}

/// Applies a 32-bit atomic in lane order to a model memory, returning the
/// pre-op values.
fn model_atomic32(name: &str, mem: &mut u32, d0: u32, d1: u32) -> u32 {
    let old = *mem;
    let f = f32::from_bits;
    let new = match name {
        "add" => Some(old.wrapping_add(d0)),
        "sub" => Some(old.wrapping_sub(d0)),
        "smin" => Some(std::cmp::min(old as i32, d0 as i32) as u32),
        "umin" => Some(old.min(d0)),
        "smax" => Some(std::cmp::max(old as i32, d0 as i32) as u32),
        "umax" => Some(old.max(d0)),
        "and" => Some(old & d0),
        "or" => Some(old | d0),
        "xor" => Some(old ^ d0),
        "inc" => Some(if old >= d0 { 0 } else { old + 1 }),
        "dec" => Some(if old == 0 || old > d0 { d0 } else { old - 1 }),
        "swap" => Some(d0),
        "cmpswap" => (old == d1).then_some(d0),
        "add_f32" => Some((f(old) + f(d0)).to_bits()),
        _ => unreachable!(),
    };
    if let Some(n) = new {
        *mem = n;
    }
    old
}

#[test]
fn global_atomics_32_return_pre_op_values_in_lane_order() {
    let names = [
        "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec", "swap",
        "cmpswap", "add_f32",
    ];
    for name in names {
        for rtn in [false, true] {
            let data = if name == "cmpswap" { "v[6:7]" } else { "v6" };
            let asm = format!(
                "global_atomic_{name} {}v[4:5], {data}, off offset:4{}",
                if rtn { "v10, " } else { "" },
                if rtn { " sc0" } else { "" }
            );
            let mut s = 5;
            // Four words shared by many lanes; small values make inc/dec
            // and cmpswap hit both outcomes.
            let init: Vec<u32> = (0..4).map(|_| splitmix(&mut s) as u32 % 8).collect();
            let d0: Vec<u32> = (0..64)
                .map(|l| match name {
                    "add_f32" => (l as f32 * 0.75 - 9.5).to_bits(),
                    "smin" | "smax" => (splitmix(&mut s) as u32) | ((l as u32 & 1) << 31),
                    _ => splitmix(&mut s) as u32 % 10,
                })
                .collect();
            let d1: Vec<u32> = (0..64).map(|_| splitmix(&mut s) as u32 % 8).collect();
            let mut buf = 0;
            let r = run(Target::Gfx942, &asm, |w, vm| {
                buf = vm.alloc(32, Perms::RW);
                for (i, v) in init.iter().enumerate() {
                    let v = if name == "add_f32" {
                        (*v as f32).to_bits()
                    } else {
                        *v
                    };
                    vm.fill(buf + 4 + 4 * i as u64, &v.to_le_bytes()).unwrap();
                }
                for l in 0..64 {
                    set_addr64(w, 4, l, buf + 4 * (l as u64 % 4));
                    w.v[6][l] = d0[l];
                    w.v[7][l] = d1[l];
                    w.v[10][l] = 0xdead;
                }
                w.set_exec(EXEC);
            })
            .unwrap();
            let mut mem: Vec<u32> = init
                .iter()
                .map(|v| {
                    if name == "add_f32" {
                        (*v as f32).to_bits()
                    } else {
                        *v
                    }
                })
                .collect();
            for l in 0..64 {
                let ret = if EXEC >> l & 1 != 0 {
                    model_atomic32(name, &mut mem[l % 4], d0[l], d1[l])
                } else {
                    0xdead
                };
                let want = if rtn { ret } else { 0xdead };
                assert_eq!(r.wave.v[10][l], want, "{asm}: lane {l}");
            }
            let got = r.vm.read_vec(buf + 4, 16).unwrap();
            for (i, m) in mem.iter().enumerate() {
                assert_eq!(le32(&got, 4 * i), *m, "{asm}: word {i}");
            }
        }
    }
}

#[test]
fn global_atomics_64_and_float() {
    let names = [
        "add_x2",
        "sub_x2",
        "smin_x2",
        "umax_x2",
        "xor_x2",
        "inc_x2",
        "dec_x2",
        "swap_x2",
        "cmpswap_x2",
        "add_f64",
        "min_f64",
        "max_f64",
    ];
    for name in names {
        let data = if name == "cmpswap_x2" {
            "v[6:9]"
        } else {
            "v[6:7]"
        };
        let asm = format!("global_atomic_{name} v[10:11], v[4:5], {data}, off sc0");
        let mut s = 11;
        let float = name.ends_with("f64");
        let val = |s: &mut u64, l: usize| -> u64 {
            if float {
                let x = (splitmix(s) % 2000) as f64 / 8.0 - 125.0;
                if l == 9 { f64::NAN } else { x }.to_bits()
            } else if name.starts_with("smin") {
                splitmix(s) | ((l as u64 & 1) << 63)
            } else {
                splitmix(s) % 6
            }
        };
        let init: Vec<u64> = (0..2).map(|l| val(&mut s, l + 1)).collect();
        let d0: Vec<u64> = (0..64).map(|l| val(&mut s, l)).collect();
        let d1: Vec<u64> = (0..64).map(|l| val(&mut s, l + 100)).collect();
        let mut buf = 0;
        let r = run(Target::Gfx942, &asm, |w, vm| {
            buf = vm.alloc(16, Perms::RW);
            for (i, v) in init.iter().enumerate() {
                vm.fill(buf + 8 * i as u64, &v.to_le_bytes()).unwrap();
            }
            for l in 0..64 {
                set_addr64(w, 4, l, buf + 8 * (l as u64 % 2));
                set_addr64(w, 6, l, d0[l]);
                set_addr64(w, 8, l, d1[l]);
            }
            w.set_exec(EXEC);
        })
        .unwrap();
        let mut mem = init.clone();
        let f = f64::from_bits;
        for l in 0..64 {
            if EXEC >> l & 1 == 0 {
                continue;
            }
            let m = &mut mem[l % 2];
            let (old, d, c) = (*m, d0[l], d1[l]);
            let new = match name {
                "add_x2" => Some(old.wrapping_add(d)),
                "sub_x2" => Some(old.wrapping_sub(d)),
                "smin_x2" => Some((old as i64).min(d as i64) as u64),
                "umax_x2" => Some(old.max(d)),
                "xor_x2" => Some(old ^ d),
                "inc_x2" => Some(if old >= d { 0 } else { old + 1 }),
                "dec_x2" => Some(if old == 0 || old > d { d } else { old - 1 }),
                "swap_x2" => Some(d),
                "cmpswap_x2" => (old == c).then_some(d),
                "add_f64" => Some((f(old) + f(d)).to_bits()),
                "min_f64" => Some(if f(d) < f(old) { d } else { old }),
                "max_f64" => Some(if f(d) > f(old) { d } else { old }),
                _ => unreachable!(),
            };
            if let Some(n) = new {
                *m = n;
            }
            let got = u64::from(r.wave.v[10][l]) | (u64::from(r.wave.v[11][l]) << 32);
            assert_eq!(got, old, "{asm}: lane {l}");
        }
        let got = r.vm.read_vec(buf, 16).unwrap();
        for (i, m) in mem.iter().enumerate() {
            let g = u64::from_le_bytes(got[8 * i..8 * i + 8].try_into().unwrap());
            assert_eq!(g, *m, "{asm}: qword {i}");
        }
    }
}

#[test]
fn packed_half_atomics_round_each_half() {
    use crate::float::{Rounding, bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
    type Half = (&'static str, fn(u16) -> f32, fn(f32) -> u16);
    let cases: [Half; 2] = [
        ("pk_add_f16", f16_to_f32, |x| {
            f32_to_f16(x, Rounding::NearestEven)
        }),
        ("pk_add_bf16", bf16_to_f32, |x| {
            f32_to_bf16(x, Rounding::NearestEven)
        }),
    ];
    for (name, dec, enc) in cases {
        let asm = format!("global_atomic_{name} v10, v[4:5], v6, off sc0");
        let init = 0x3c00_4248u32;
        let mut s = 3;
        let d0: Vec<u32> = (0..64)
            .map(|_| splitmix(&mut s) as u32 & 0x3fff_3fff)
            .collect();
        let mut buf = 0;
        let r = run(Target::Gfx942, &asm, |w, vm| {
            buf = vm.alloc(4, Perms::RW);
            vm.fill(buf, &init.to_le_bytes()).unwrap();
            for l in 0..64 {
                set_addr64(w, 4, l, buf);
                w.v[6][l] = d0[l];
            }
        })
        .unwrap();
        let mut m = init;
        for l in 0..64 {
            assert_eq!(r.wave.v[10][l], m, "{name} lane {l}");
            // Each half: the f64 sum of two values of <= 16 bits is exact,
            // then one rounding.
            let half = |v: u32, i: u32| dec((v >> (16 * i)) as u16);
            let add = |i: u32| {
                let x = f64::from(half(m, i)) + f64::from(half(d0[l], i));
                u32::from(enc(x as f32))
            };
            m = add(0) | (add(1) << 16);
        }
        assert_eq!(le32(&r.vm.read_vec(buf, 4).unwrap(), 0), m, "{name}");
    }
}

#[test]
fn flat_addresses_reach_global_lds_and_private_memory() {
    let ap = Apertures::default();
    let mut buf = 0;
    let r = run(
        Target::Gfx942,
        "flat_store_dword v[4:5], v6 offset:8\n\
         s_waitcnt vmcnt(0) lgkmcnt(0)\n\
         flat_load_dword v7, v[4:5] offset:8\n\
         flat_atomic_add v8, v[4:5], v6 offset:8 sc0",
        |w, vm| {
            buf = vm.alloc(64 * 16, Perms::RW);
            for l in 0..64 {
                let a = match l % 3 {
                    0 => buf + 16 * l as u64,
                    1 => ap.shared_base + 16 * l as u64,
                    _ => ap.private_base + 20,
                };
                set_addr64(w, 4, l, a);
                w.v[6][l] = 1000 + l as u32;
            }
        },
    )
    .unwrap();
    for l in 0..64 {
        let v = 1000 + l as u32;
        assert_eq!(r.wave.v[7][l], v, "lane {l} load");
        assert_eq!(r.wave.v[8][l], v, "lane {l} atomic returns pre-op");
        let stored = match l % 3 {
            0 => le32(&r.vm.read_vec(buf + 16 * l as u64 + 8, 4).unwrap(), 0),
            1 => le32(&r.lds, 16 * l + 8),
            _ => le32(&r.wave.scratch, 256 * l + 28),
        };
        assert_eq!(stored, 2 * v, "lane {l} memory");
    }
}

#[test]
fn scratch_addressing_forms_and_private_faults() {
    for (t, asm) in [
        (
            Target::Gfx90a,
            "scratch_store_dword v1, v2, off offset:-4\nscratch_load_dword v3, off, s5 offset:8",
        ),
        (
            Target::Gfx942,
            "scratch_store_dword v1, v2, off offset:-4\nscratch_load_dword v3, off, s5 offset:8",
        ),
        (
            Target::Gfx942,
            "scratch_store_dword off, v2, s6 offset:12\nscratch_load_dword v3, v1, s7",
        ),
    ] {
        let r = run(t, asm, |w, _| {
            for l in 0..64 {
                w.v[1][l] = 20 + 4 * (l as u32 % 5);
                w.v[2][l] = 0x100 + l as u32;
            }
            w.s[5] = 16;
            w.s[6] = 12;
            w.s[7] = 4;
        })
        .unwrap();
        for l in 0..64 {
            let lane = &r.wave.scratch[256 * l..256 * (l + 1)];
            let (store_at, load_at) = if asm.starts_with("scratch_store_dword v1") {
                (20 + 4 * (l % 5) - 4, 24)
            } else {
                (24, 4 + 20 + 4 * (l % 5))
            };
            assert_eq!(le32(lane, store_at), 0x100 + l as u32, "{asm} lane {l}");
            assert_eq!(r.wave.v[3][l], le32(lane, load_at), "{asm} lane {l}");
        }
    }
    let (f, _) = run(
        Target::Gfx942,
        "scratch_load_dwordx2 v[2:3], v1, off offset:4",
        |w, _| {
            w.v[1][63] = 252;
        },
    )
    .err()
    .expect("past the lane's 256 bytes");
    assert_eq!(
        f,
        Fault::Private {
            addr: 256,
            size: 8,
            limit: 256
        }
    );
    let (f, _) = run(
        Target::Gfx942,
        "scratch_load_dword v2, off, off offset:-4",
        |_, _| {},
    )
    .err()
    .expect("negative private offset");
    assert!(matches!(f, Fault::Private { size: 4, .. }), "{f:?}");
}

#[test]
fn flat_scratch_is_added_to_scratch_offsets() {
    let r = run(Target::Gfx942, "scratch_load_dword v3, v1, off", |w, _| {
        w.set_s64(sreg::FLAT_SCRATCH, 32);
        w.scratch[256 * 5 + 36..256 * 5 + 40].copy_from_slice(&77u32.to_le_bytes());
        w.v[1][5] = 4;
    })
    .unwrap();
    assert_eq!(r.wave.v[3][5], 77);
}

#[test]
fn global_faults_name_the_address() {
    let mut buf = 0;
    let (f, _) = run(
        Target::Gfx942,
        "global_store_dwordx4 v[4:5], v[0:3], off",
        |w, vm| {
            // The last 256 bytes of the buffer's page: lane 61's 16 bytes
            // cross into the unmapped guard page.
            buf = vm.alloc(256, Perms::RW) + 4096 - 256;
            for l in 0..64 {
                set_addr64(w, 4, l, buf + 4 * l as u64);
            }
        },
    )
    .err()
    .expect("lanes past the buffer fault");
    match f {
        Fault::Memory(m) => assert_eq!(m.addr, buf + 4 * 61),
        f => panic!("{f:?}"),
    }
    let (f, _) = run(
        Target::Gfx942,
        "global_load_dword v1, v0, s[4:5] offset:-8",
        |w, vm| {
            buf = vm.alloc(64, Perms::RO);
            w.set_s64(4, buf);
            w.set_exec(1 << 3);
            w.v[0][3] = 4;
        },
    )
    .err()
    .expect("below the buffer");
    match f {
        Fault::Memory(m) => assert_eq!(m.addr, buf - 4),
        f => panic!("{f:?}"),
    }
}

#[test]
fn global_load_lds_writes_lds_at_m0_plus_lane_offsets() {
    let init = random_bytes(1024, 3);
    for (asm, size, ldsz) in [
        ("global_load_lds_dword v[4:5], off offset:8", 4usize, 4usize),
        ("global_load_lds_ubyte v[4:5], off offset:8", 1, 4),
        ("global_load_lds_sshort v[4:5], off offset:8", 2, 4),
    ] {
        let r = run(
            Target::Gfx942,
            &format!("s_mov_b32 m0, 0x100\n{asm}"),
            |w, vm| {
                let buf = vm.alloc(1024, Perms::RW);
                vm.fill(buf, &init).unwrap();
                for l in 0..64 {
                    set_addr64(w, 4, l, buf + 8 * l as u64);
                }
                w.set_exec(EXEC);
            },
        )
        .unwrap();
        for l in 0..64 {
            let at = 0x100 + 8 + ldsz * l;
            let got = le32(&r.lds, at);
            let src = 8 * l + 8;
            let want = if EXEC >> l & 1 == 0 {
                0
            } else {
                match size {
                    1 => u32::from(init[src]),
                    2 => i32::from(i16::from_le_bytes([init[src], init[src + 1]])) as u32,
                    _ => le32(&init, src),
                }
            };
            assert_eq!(got, want, "{asm} lane {l}");
        }
    }
}

/// Writes a V# at s[8:11].
fn vsharp(w: &mut Wave, base: u64, stride: u32, num_records: u32, word3: u32) {
    w.s[8] = base as u32;
    w.s[9] = ((base >> 32) as u32 & 0xffff) | (stride << 16);
    w.s[10] = num_records;
    w.s[11] = word3;
}

#[test]
fn buffer_loads_range_check_per_dword() {
    let init = random_bytes(2048, 9);
    let num_records = 700u32;
    for (asm, n) in [
        (
            "buffer_load_dword v10, v1, s[8:11], s3 offen offset:4",
            1usize,
        ),
        (
            "buffer_load_dwordx4 v[10:13], v1, s[8:11], s3 offen offset:4",
            4,
        ),
        ("buffer_load_ushort v10, v1, s[8:11], s3 offen offset:4", 1),
    ] {
        let r = run(Target::Gfx942, asm, |w, vm| {
            let buf = vm.alloc(2048, Perms::RW);
            vm.fill(buf, &init).unwrap();
            vsharp(w, buf, 0, num_records, 0x0002_7000);
            w.s[3] = 32;
            for l in 0..64 {
                w.v[1][l] = 11 * l as u32;
                for k in 0..4 {
                    w.v[10 + k][l] = 0xbad;
                }
            }
        })
        .unwrap();
        for l in 0..64 {
            let off = 11 * l + 4;
            for k in 0..n {
                let at = off + 4 * k;
                let want = if asm.contains("ushort") {
                    if off + 2 <= num_records as usize {
                        u32::from(u16::from_le_bytes([init[32 + off], init[33 + off]]))
                    } else {
                        0
                    }
                } else if at + 4 <= num_records as usize {
                    le32(&init, 32 + at)
                } else {
                    0
                };
                assert_eq!(r.wave.v[10 + k][l], want, "{asm} lane {l} dword {k}");
            }
        }
    }
}

#[test]
fn buffer_stores_drop_out_of_range_and_index_by_stride() {
    // Structured buffer: stride 24, index from v1 plus the lane id
    // (add_tid_enable), offset from v2; records past num_records dropped.
    let mut buf = 0;
    let r = run(
        Target::Gfx90a,
        "buffer_store_dwordx2 v[4:5], v[2:3], s[8:11], 0 idxen offen offset:2",
        |w, vm| {
            buf = vm.alloc(4096, Perms::RW);
            vsharp(w, buf, 24, 60, 1 << 23);
            for l in 0..64 {
                w.v[2][l] = 1;
                w.v[3][l] = 2 * (l as u32 % 4);
                w.v[4][l] = 0x1111_0000 + l as u32;
                w.v[5][l] = 0x2222_0000 + l as u32;
            }
            w.set_exec(EXEC);
        },
    )
    .unwrap();
    let mut want = vec![0u8; 4096];
    for l in 0..64 {
        let index = 1 + l;
        if EXEC >> l & 1 == 0 || index >= 60 {
            continue;
        }
        let at = index * 24 + 2 * (l % 4) + 2;
        want[at..at + 4].copy_from_slice(&(0x1111_0000u32 + l as u32).to_le_bytes());
        want[at + 4..at + 8].copy_from_slice(&(0x2222_0000u32 + l as u32).to_le_bytes());
    }
    assert_eq!(r.vm.read_vec(buf, 4096).unwrap(), want);
}

#[test]
fn buffer_private_segment_accesses_are_per_lane() {
    let ap = Apertures::default();
    let r = run(
        Target::Gfx90a,
        "buffer_store_dword v1, off, s[0:3], s5 offset:4\n\
         buffer_store_short v1, v2, s[0:3], 0 offen offset:2\n\
         s_waitcnt vmcnt(0)\n\
         buffer_load_dword v3, off, s[0:3], s5 offset:4\n\
         buffer_atomic_add v1, off, s[0:3], s5 offset:4 glc",
        |w, _| {
            w.s[0] = ap.private_base as u32;
            w.s[1] = (ap.private_base >> 32) as u32 & 0xffff;
            w.s[2] = u32::MAX;
            w.s[3] = 1 << 23;
            // A wave-scaled offset: 8 bytes into each lane's segment.
            w.s[5] = 8 * 64;
            for l in 0..64 {
                w.v[1][l] = 0xabcd_0000 + l as u32;
                w.v[2][l] = 40 + l as u32;
            }
        },
    )
    .unwrap();
    for l in 0..64 {
        let lane = &r.wave.scratch[256 * l..256 * (l + 1)];
        let v = 0xabcd_0000 + l as u32;
        assert_eq!(le32(lane, 12), v.wrapping_mul(2), "lane {l}");
        assert_eq!(r.wave.v[3][l], v, "lane {l}");
        assert_eq!(r.wave.v[1][l], v, "lane {l} atomic pre-op");
        let at = 42 + l;
        assert_eq!(
            u16::from_le_bytes([lane[at], lane[at + 1]]),
            v as u16,
            "lane {l}"
        );
    }
}

#[test]
fn buffer_atomics_and_lds_loads() {
    let mut buf = 0;
    let r = run(
        Target::Gfx942,
        "buffer_atomic_cmpswap v[2:3], v1, s[8:11], 0 offen sc0\n\
         s_mov_b32 m0, 64\n\
         buffer_load_dword v1, s[8:11], 0 offen lds",
        |w, vm| {
            buf = vm.alloc(256, Perms::RW);
            vm.fill(buf, &[5, 0, 0, 0, 6, 0, 0, 0]).unwrap();
            // 16 valid bytes: lanes past them are out of range.
            vsharp(w, buf, 0, 8, 0);
            for l in 0..64 {
                w.v[1][l] = 4 * (l as u32 % 4);
                w.v[2][l] = 100 + l as u32;
                w.v[3][l] = 5 + (l as u32 % 2);
            }
        },
    )
    .unwrap();
    // Lane 0 swaps 5 -> 100 at 0; lane 1: 6 == 6 -> 101 at 4; lanes 4, 5
    // see the new values and fail; lanes at offset 8, 12 are out of range.
    let mem = r.vm.read_vec(buf, 8).unwrap();
    assert_eq!((le32(&mem, 0), le32(&mem, 4)), (100, 101));
    assert_eq!(r.wave.v[2][0], 5);
    assert_eq!(r.wave.v[2][1], 6);
    assert_eq!(r.wave.v[2][2], 0, "out of range returns 0");
    assert_eq!(r.wave.v[2][4], 100);
    assert_eq!(r.wave.v[2][5], 101);
    for l in 0..64 {
        let want = match l % 4 {
            0 => 100,
            1 => 101,
            _ => 0,
        };
        assert_eq!(le32(&r.lds, 64 + 4 * l), want, "lds lane {l}");
    }
}

#[test]
fn atomics_on_a_read_only_buffer_fault() {
    let (f, _) = run(
        Target::Gfx942,
        "global_atomic_add v[4:5], v6, off",
        |w, vm: &Vm| {
            let b = vm.alloc(4, Perms::RO);
            set_addr64(w, 4, 0, b);
            w.set_exec(1);
        },
    )
    .err()
    .expect("write to read-only memory");
    assert!(matches!(f, Fault::Memory(_)), "{f:?}");
}

/// V# word 3 with a data and numeric format.
fn fmt_word3(dfmt: u32, nfmt: u32) -> u32 {
    (dfmt << 15) | (nfmt << 12)
}

#[test]
fn buffer_format_loads_convert_components() {
    let init = random_bytes(512, 21);
    // (asm, dfmt, nfmt for the V#, element bytes)
    let cases = [
        (
            "buffer_load_format_xyzw v[10:13], v1, s[8:11], 0 offen",
            10,
            0,
        ),
        ("buffer_load_format_xy v[10:11], v1, s[8:11], 0 offen", 3, 1),
        (
            "buffer_load_format_xyzw v[10:13], v1, s[8:11], 0 offen",
            5,
            5,
        ),
        ("buffer_load_format_d16_xy v10, v1, s[8:11], 0 offen", 5, 7),
        (
            "tbuffer_load_format_xy v[10:11], v1, s[8:11], 0 format:[BUF_DATA_FORMAT_16_16,BUF_NUM_FORMAT_SINT] offen",
            0,
            0,
        ),
    ];
    for (asm, dfmt, nfmt) in cases {
        let r = run(Target::Gfx942, asm, |w, vm| {
            let buf = vm.alloc(512, Perms::RW);
            vm.fill(buf, &init).unwrap();
            vsharp(w, buf, 0, 512, fmt_word3(dfmt, nfmt));
            for l in 0..64 {
                w.v[1][l] = 8 * l as u32;
            }
        })
        .unwrap();
        for l in 0..64 {
            let at = 8 * l;
            let b = |i: usize| init[at + i];
            let h = |i: usize| u16::from_le_bytes([b(2 * i), b(2 * i + 1)]);
            let f = |x: f32| x.to_bits();
            let want: Vec<u32> = match (asm.starts_with("tbuffer"), dfmt, nfmt) {
                (true, ..) => vec![h(0) as i16 as i32 as u32, h(1) as i16 as i32 as u32],
                (_, 10, 0) => (0..4).map(|i| f(f32::from(b(i)) / 255.0)).collect(),
                (_, 3, 1) => (0..2)
                    .map(|i| f((f32::from(b(i) as i8) / 127.0).max(-1.0)))
                    .collect(),
                (_, 5, 5) => vec![h(0) as i16 as i32 as u32, h(1) as i16 as i32 as u32, 0, 1],
                _ => vec![u32::from(h(0)) | (u32::from(h(1)) << 16)],
            };
            for (k, w) in want.iter().enumerate() {
                assert_eq!(r.wave.v[10 + k][l], *w, "{asm} lane {l} reg {k}");
            }
        }
    }
}

#[test]
fn buffer_format_stores_convert_components() {
    let mut buf = 0;
    let vals = [0.5f32, -0.25, 1.5, 0.0039];
    let r = run(
        Target::Gfx942,
        "buffer_store_format_xyzw v[10:13], v1, s[8:11], 0 offen\n\
         tbuffer_store_format_x v14, v1, s[8:11], 0 format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_UINT] offen offset:4",
        |w, vm| {
            buf = vm.alloc(1024, Perms::RW);
            vsharp(w, buf, 0, 1024, fmt_word3(10, 0));
            for l in 0..64 {
                w.v[1][l] = 8 * l as u32;
                for (k, v) in vals.iter().enumerate() {
                    w.v[10 + k][l] = (v * l as f32).to_bits();
                }
                w.v[14][l] = 0x5000 + l as u32;
            }
        },
    )
    .unwrap();
    let mem = r.vm.read_vec(buf, 1024).unwrap();
    for l in 0..64 {
        for (k, v) in vals.iter().enumerate() {
            let x = f64::from(v * l as f32).clamp(0.0, 1.0) * 255.0;
            assert_eq!(
                mem[8 * l + k],
                x.round_ties_even() as u8,
                "lane {l} comp {k}"
            );
        }
        assert_eq!(le32(&mem, 8 * l + 4), 0x5000 + l as u32, "lane {l}");
    }
}

#[test]
fn every_vector_memory_and_ds_mnemonic_has_semantics() {
    use rocjitsu_isa::gfx9::tables::{ds::DS_OPS, flat::FLAT_OPS, mubuf::BUF_OPS};
    // Not emulated: global wave sync (needs the whole grid) and the GDS
    // conditional exchange.
    let missing = |n: &str| n.starts_with("ds_gws_") || n == "ds_condxchg32_rtn_b64";
    let names = FLAT_OPS
        .iter()
        .map(|o| o.name)
        .chain(BUF_OPS.iter().map(|o| o.name));
    for n in names {
        for (rtn, lds) in [(false, false), (true, false)] {
            assert!(super::select(n, rtn, lds).is_some(), "{n}");
        }
        if n.contains("load_") && !n.contains("format") && !n.contains("_lds_") {
            assert!(super::select(n, false, true).is_some(), "{n} lds");
        }
    }
    // The DS opcodes of the executed targets (gfx908's own, such as the
    // `_src2_` forms, are decoded but not executed).
    use rocjitsu_isa::gfx9::tables::ds::{DS_GFX90A, DS_GFX942, DS_GFX950};
    let executed: std::collections::BTreeSet<usize> = [&DS_GFX90A, &DS_GFX942, &DS_GFX950]
        .iter()
        .flat_map(|m| m.iter())
        .filter(|&&i| i != u16::MAX)
        .map(|&i| usize::from(i))
        .collect();
    for (i, o) in DS_OPS.iter().enumerate() {
        if !executed.contains(&i) {
            continue;
        }
        assert_eq!(
            crate::exec::lds::lookup(o.name).is_some(),
            !missing(o.name),
            "{}",
            o.name
        );
    }
}

#[test]
fn coalesced_loads_and_stores_match_per_lane_semantics() {
    let init = random_bytes(4096, 17);
    for (asm, n) in [
        (
            "global_load_dword v10, v[4:5], off offset:-4\nglobal_store_dword v[4:5], v10, off offset:1024",
            1usize,
        ),
        (
            "global_load_dwordx2 v[10:11], v2, s[4:5] offset:8\nglobal_store_dwordx2 v2, v[10:11], s[4:5] offset:1536",
            2,
        ),
        (
            "global_load_dwordx3 v[10:12], v2, s[4:5]\nglobal_store_dwordx3 v2, v[10:12], s[4:5] offset:2048",
            3,
        ),
        (
            "global_load_dwordx4 v[10:13], v[4:5], off\nglobal_store_dwordx4 v[4:5], v[10:13], off offset:2048",
            4,
        ),
        (
            "flat_load_dwordx4 v[10:13], v[4:5]\nflat_store_dwordx4 v[4:5], v[10:13] offset:2048",
            4,
        ),
    ] {
        let mut buf = 0;
        let r = run(Target::Gfx942, asm, |w, vm| {
            buf = vm.alloc(4096, Perms::RW);
            vm.fill(buf, &init).unwrap();
            w.set_s64(4, buf);
            for l in 0..64 {
                w.v[2][l] = (4 * n * l + 4) as u32;
                set_addr64(w, 4, l, buf + (4 * n * l + 4) as u64);
            }
        })
        .unwrap();
        let (load_at, store_off) = match n {
            1 => (0usize, 1028usize),
            2 => (12, 1540),
            3 => (4, 2052),
            _ => (4, 2052),
        };
        let mem = r.vm.read_vec(buf, 4096).unwrap();
        for l in 0..64 {
            for k in 0..n {
                let want = le32(&init, load_at + 4 * n * l + 4 * k);
                assert_eq!(r.wave.v[10 + k][l], want, "{asm} lane {l}");
                assert_eq!(
                    le32(&mem, store_off + 4 * n * l + 4 * k),
                    want,
                    "{asm} lane {l}"
                );
            }
        }
    }
    // The last lane runs off the buffer: the fault names its address.
    let mut buf = 0;
    let (f, _) = run(
        Target::Gfx942,
        "global_load_dword v1, v2, s[4:5] offset:4",
        |w, vm| {
            // The last 256 bytes of the buffer's page: lane 63 reaches the
            // unmapped guard page.
            buf = vm.alloc(256, Perms::RW) + 4096 - 256;
            w.set_s64(4, buf);
            for l in 0..64 {
                w.v[2][l] = 4 * l as u32;
            }
        },
    )
    .err()
    .expect("lane 63 is past the buffer");
    match f {
        Fault::Memory(m) => assert_eq!(m.addr, buf + 256),
        f => panic!("{f:?}"),
    }
}

#[test]
fn swizzled_buffer_addressing() {
    // Swizzled V#: stride 12, element size 4 (code 1), index stride 16
    // (code 1), add_tid_enable. ISA manual, "Swizzled Buffer Addressing":
    // addr = base + soffset + (index_msb * stride + offset_msb * elem)
    //        * index_stride + index_lsb * elem + offset_lsb.
    let (stride, elem, istride) = (12u64, 4u64, 16u64);
    let word3 = (1 << 19) | (1 << 21) | (1 << 23);
    let mut buf = 0;
    let r = run(
        Target::Gfx90a,
        "buffer_store_dword v3, v[4:5], s[8:11], s2 idxen offen offset:1",
        |w, vm| {
            buf = vm.alloc(8192, Perms::RW);
            w.s[8] = buf as u32;
            w.s[9] = ((buf >> 32) as u32 & 0xffff) | ((stride as u32) << 16) | 1 << 31;
            w.s[10] = 1 << 20;
            w.s[11] = word3;
            w.s[2] = 64;
            for l in 0..64 {
                w.v[3][l] = 0x7700 + l as u32;
                w.v[4][l] = 3;
                w.v[5][l] = 8 * (l as u32 % 3);
            }
        },
    )
    .unwrap();
    let mut want = vec![0u8; 8192];
    for l in 0..64u64 {
        let index = 3 + l;
        let offset = 8 * (l % 3) + 1;
        let a = 64
            + ((index / istride) * stride + (offset / elem) * elem) * istride
            + (index % istride) * elem
            + offset % elem;
        let a = a as usize;
        want[a..a + 4].copy_from_slice(&(0x7700 + l as u32).to_le_bytes());
    }
    assert_eq!(r.vm.read_vec(buf, 8192).unwrap(), want);
}

/// The integer atomics' reference: the new memory value (`None`: unchanged)
/// of `op` on `w`-bit words, written from the ISA manual's pseudo-code.
fn model_int_atomic(op: &str, w: u32, old: u64, d0: u64, d1: u64) -> Option<u64> {
    let mask = if w == 64 { u64::MAX } else { (1 << w) - 1 };
    let sx = |v: u64| {
        if w == 64 {
            v as i64
        } else {
            v as u32 as i32 as i64
        }
    };
    Some(
        match op {
            "add" => old.wrapping_add(d0),
            "sub" => old.wrapping_sub(d0),
            "smin" => {
                if sx(d0) < sx(old) {
                    d0
                } else {
                    old
                }
            }
            "smax" => {
                if sx(d0) > sx(old) {
                    d0
                } else {
                    old
                }
            }
            "umin" => old.min(d0),
            "umax" => old.max(d0),
            "and" => old & d0,
            "or" => old | d0,
            "xor" => old ^ d0,
            "inc" => {
                if old >= d0 {
                    0
                } else {
                    old + 1
                }
            }
            "dec" => {
                if old == 0 || old > d0 {
                    d0
                } else {
                    old - 1
                }
            }
            "swap" => d0,
            "cmpswap" => return (old == d1).then_some(d0),
            _ => unreachable!("{op}"),
        } & mask,
    )
}

/// Every integer atomic (32 and 64 bit; global, flat and buffer; with and
/// without return; each cache-policy bit) on every target, many lanes on
/// few addresses, against [`model_int_atomic`] applied in lane order. Signed
/// operands mix both signs, so a signed/unsigned mix-up shows.
#[test]
fn integer_atomics_on_every_target_segment_and_cache_policy() {
    const OPS: [&str; 13] = [
        "add", "sub", "smin", "smax", "umin", "umax", "and", "or", "xor", "inc", "dec", "swap",
        "cmpswap",
    ];
    let mut cases = 0;
    for t in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        // (bits on a returning form, extra policy bits for either form)
        let (rtn_bit, policies): (&str, &[&str]) = if t == Target::Gfx90a {
            ("glc", &["", "slc"])
        } else {
            ("sc0", &["", "sc1", "nt", "sc1 nt"])
        };
        for w in [32u32, 64] {
            for op in OPS {
                for seg in ["global", "flat", "buffer"] {
                    for rtn in [false, true] {
                        for pol in policies {
                            cases += 1;
                            check_int_atomic(t, w, op, seg, rtn, rtn_bit, pol);
                        }
                    }
                }
            }
        }
    }
    assert_eq!(cases, 2 * 13 * 3 * 2 * (2 + 4 + 4));
}

fn check_int_atomic(t: Target, w: u32, op: &str, seg: &str, rtn: bool, rtn_bit: &str, pol: &str) {
    let dw = (w / 32) as usize;
    let suffix = if w == 64 { "_x2" } else { "" };
    let ndata = if op == "cmpswap" { 2 * dw } else { dw };
    let data = if ndata == 1 {
        "v6".to_string()
    } else {
        format!("v[6:{}]", 5 + ndata)
    };
    let dst = if dw == 1 { "v10" } else { "v[10:11]" };
    let bits = [if rtn { rtn_bit } else { "" }, pol]
        .iter()
        .filter(|b| !b.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let asm = match seg {
        "global" => format!(
            "global_atomic_{op}{suffix} {}v[4:5], {data}, off offset:8 {bits}",
            if rtn {
                format!("{dst}, ")
            } else {
                String::new()
            }
        ),
        "flat" => format!(
            "flat_atomic_{op}{suffix} {}v[4:5], {data} offset:8 {bits}",
            if rtn {
                format!("{dst}, ")
            } else {
                String::new()
            }
        ),
        // Buffer atomics return into their data registers.
        _ => format!("buffer_atomic_{op}{suffix} {data}, v1, s[8:11], 0 offen offset:8 {bits}"),
    };
    let mut s = u64::from(w) * 131 + op.len() as u64 * 7 + seg.len() as u64;
    let words = 3usize;
    let small = matches!(op, "inc" | "dec" | "cmpswap");
    let val = |s: &mut u64| {
        let v = splitmix(s);
        let v = if small { v % 6 } else { v };
        if w == 32 { v & 0xffff_ffff } else { v }
    };
    let init: Vec<u64> = (0..words).map(|_| val(&mut s)).collect();
    let d0: Vec<u64> = (0..64).map(|_| val(&mut s)).collect();
    let d1: Vec<u64> = (0..64).map(|_| val(&mut s)).collect();
    let stride = u64::from(w / 8);
    let mut buf = 0;
    let r = run(t, &asm, |wv, vm| {
        buf = vm.alloc(64, Perms::RW);
        for (i, v) in init.iter().enumerate() {
            vm.fill(buf + 8 + stride * i as u64, &v.to_le_bytes()[..dw * 4])
                .unwrap();
        }
        vsharp(wv, buf, 0, 64, 0);
        for l in 0..64 {
            let off = stride * (l as u64 % words as u64);
            set_addr64(wv, 4, l, buf + off);
            wv.v[1][l] = off as u32;
            for k in 0..dw {
                wv.v[6 + k][l] = (d0[l] >> (32 * k)) as u32;
                wv.v[6 + dw + k][l] = (d1[l] >> (32 * k)) as u32;
                wv.v[10 + k][l] = 0xdead;
            }
        }
        wv.set_exec(EXEC);
    })
    .unwrap_or_else(|e| panic!("{t:?}: {asm}: {e:?}"));
    let mut mem = init.clone();
    for l in 0..64 {
        let ret_reg = if seg == "buffer" { 6 } else { 10 };
        let lane = |k: usize| u64::from(r.wave.v[ret_reg + k][l]);
        let got = lane(0) | if dw == 2 { lane(1) << 32 } else { 0 };
        let want = if EXEC >> l & 1 == 0 {
            None
        } else {
            let m = &mut mem[l % words];
            let old = *m;
            if let Some(n) = model_int_atomic(op, w, old, d0[l], d1[l]) {
                *m = n;
            }
            rtn.then_some(old)
        };
        // Without return (or in an inactive lane) the register keeps its
        // value: 0xdead, or for buffer atomics the data operand.
        let keep = if seg == "buffer" {
            d0[l]
        } else if dw == 2 {
            0xdead_0000_dead
        } else {
            0xdead
        };
        assert_eq!(got, want.unwrap_or(keep), "{t:?}: {asm}: lane {l}");
    }
    let bytes = r.vm.read_vec(buf + 8, stride * words as u64).unwrap();
    for (i, m) in mem.iter().enumerate() {
        let mut b = [0u8; 8];
        b[..dw * 4].copy_from_slice(&bytes[i * dw * 4..(i + 1) * dw * 4]);
        assert_eq!(u64::from_le_bytes(b), *m, "{t:?}: {asm}: word {i}");
    }
}
