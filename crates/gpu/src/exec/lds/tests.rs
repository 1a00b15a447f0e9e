//! DS tests: snippets assembled by llvm-mc-22; results compared with a
//! plain-Rust model of the LDS computed from the test's inputs.

use super::cross::swizzle_src;
use crate::exec::testing::{Run, run};
use rocjitsu_isa::Target;

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

const EXEC: u64 = 0x7fff_0ff0_f0f0_fffe;

/// Fills LDS bytes 0..1024 with `init` (`ds_write_b128` under a full
/// EXEC), then sets EXEC to [`EXEC`] and runs `asm`. `setup` prepares the
/// other registers (v20..v23, v30, s40, s41 are the prelude's).
fn lds_case(
    t: Target,
    asm: &str,
    init: &[u8; 1024],
    setup: impl FnMut(&mut crate::exec::wave::Wave),
) -> Run {
    lds_case_with(t, t.sramecc_default(), asm, init, setup)
}

/// [`lds_case`] on a GPU with SRAM ECC on or off.
fn lds_case_with(
    t: Target,
    sramecc: bool,
    asm: &str,
    init: &[u8; 1024],
    mut setup: impl FnMut(&mut crate::exec::wave::Wave),
) -> Run {
    let prelude = "ds_write_b128 v30, v[20:23]\ns_waitcnt lgkmcnt(0)\ns_mov_b64 exec, s[40:41]\n";
    crate::exec::testing::run_with(
        t,
        &format!("{prelude}{asm}"),
        &|e| e.sramecc = sramecc,
        |w, _| {
            for l in 0..64 {
                w.v[30][l] = 16 * l as u32;
                for k in 0..4 {
                    w.v[20 + k][l] = le32(init, 16 * l + 4 * k);
                }
            }
            w.s[40] = EXEC as u32;
            w.s[41] = (EXEC >> 32) as u32;
            setup(w);
        },
    )
    .unwrap()
}

fn random_init(seed: u64) -> [u8; 1024] {
    let mut s = seed;
    std::array::from_fn(|_| splitmix(&mut s) as u8)
}

fn olds() -> [[u32; 64]; 4] {
    let mut s = 1234;
    std::array::from_fn(|_| std::array::from_fn(|_| splitmix(&mut s) as u32))
}

#[test]
fn reads_of_every_kind() {
    let init = random_init(1);
    let old = olds();
    let kinds = [
        ("u8", 1),
        ("i8", 1),
        ("u16", 1),
        ("i16", 1),
        ("b32", 1),
        ("b64", 2),
        ("b96", 3),
        ("b128", 4),
        ("u8_d16", 1),
        ("i8_d16", 1),
        ("u16_d16", 1),
        ("u8_d16_hi", 1),
        ("i8_d16_hi", 1),
        ("u16_d16_hi", 1),
    ];
    // SRAM ECC on (MI300X as shipped): the D16 reads zero the other half;
    // off, they keep it.
    for ((kind, n), ecc) in kinds.into_iter().flat_map(|k| [(k, true), (k, false)]) {
        let dst = if n == 1 {
            "v10".to_string()
        } else {
            format!("v[10:{}]", 9 + n)
        };
        let asm = format!("ds_read_{kind} {dst}, v1 offset:300");
        let r = lds_case_with(Target::Gfx942, ecc, &asm, &init, |w| {
            for l in 0..64 {
                w.v[1][l] = 9 * l as u32 + 1;
                for k in 0..4 {
                    w.v[10 + k][l] = old[k][l];
                }
            }
        });
        assert_eq!(&r.lds[..1024], &init[..], "prelude ds_write_b128");
        for l in 0..64 {
            let at = 9 * l + 301;
            let b = init[at];
            let h = u16::from_le_bytes([init[at], init[at + 1]]);
            for k in 0..n {
                let o = old[k][l];
                let keep = if ecc { 0 } else { o };
                let want = if EXEC >> l & 1 == 0 {
                    o
                } else {
                    match kind {
                        "u8" => u32::from(b),
                        "i8" => b as i8 as i32 as u32,
                        "u16" => u32::from(h),
                        "i16" => h as i16 as i32 as u32,
                        "u8_d16" => (keep & 0xffff_0000) | u32::from(b),
                        "i8_d16" => (keep & 0xffff_0000) | u32::from(b as i8 as i16 as u16),
                        "u16_d16" => (keep & 0xffff_0000) | u32::from(h),
                        "u8_d16_hi" => (keep & 0xffff) | (u32::from(b) << 16),
                        "i8_d16_hi" => (keep & 0xffff) | (u32::from(b as i8 as i16 as u16) << 16),
                        "u16_d16_hi" => (keep & 0xffff) | (u32::from(h) << 16),
                        _ => le32(&init, at + 4 * k),
                    }
                };
                assert_eq!(
                    r.wave.v[10 + k][l],
                    want,
                    "{asm} (sramecc {ecc}) lane {l} dword {k}"
                );
            }
        }
    }
}

#[test]
fn writes_of_every_kind() {
    let init = random_init(2);
    let old = olds();
    let kinds = [
        ("b8", 1, 1),
        ("b16", 1, 2),
        ("b32", 1, 4),
        ("b64", 2, 4),
        ("b96", 3, 4),
        ("b128", 4, 4),
        ("b8_d16_hi", 1, 1),
        ("b16_d16_hi", 1, 2),
    ];
    for (kind, n, size) in kinds {
        let data = if n == 1 {
            "v10".to_string()
        } else {
            format!("v[10:{}]", 9 + n)
        };
        let asm = format!("ds_write_{kind} v1, {data} offset:3");
        let r = lds_case(Target::Gfx90a, &asm, &init, |w| {
            for l in 0..64 {
                w.v[1][l] = 16 * l as u32 - (l as u32 % 2);
                for k in 0..4 {
                    w.v[10 + k][l] = old[k][l];
                }
            }
        });
        let mut want = init.to_vec();
        want.resize(65536, 0);
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
                let at = 16 * l - l % 2 + 3 + 4 * k;
                want[at..at + size].copy_from_slice(&v.to_le_bytes()[..size]);
            }
        }
        assert_eq!(r.lds, want, "{asm}");
    }
}

#[test]
fn read2_and_write2_scale_offsets_by_element_size() {
    let init = random_init(3);
    for (asm, w, unit) in [
        (
            "ds_read2_b32 v[10:11], v1 offset0:3 offset1:250",
            1usize,
            4usize,
        ),
        ("ds_read2_b64 v[10:13], v1 offset0:1 offset1:100", 2, 8),
        ("ds_read2st64_b32 v[10:11], v1 offset0:0 offset1:3", 1, 256),
        ("ds_read2st64_b64 v[10:13], v1 offset0:1 offset1:1", 2, 512),
    ] {
        let r = lds_case(Target::Gfx942, asm, &init, |wv| {
            for l in 0..64 {
                wv.v[1][l] = 4 * (l as u32 % 7);
            }
        });
        let offs: Vec<usize> = asm
            .split(['t', ' '])
            .filter_map(|s| s.strip_prefix("0:").or_else(|| s.strip_prefix("1:")))
            .map(|s| s.parse().unwrap())
            .collect();
        for l in 0..64 {
            if EXEC >> l & 1 == 0 {
                continue;
            }
            for (i, o) in offs.iter().enumerate() {
                for k in 0..w {
                    let at = 4 * (l % 7) + o * unit + 4 * k;
                    let want = if at + 4 <= 1024 { le32(&init, at) } else { 0 };
                    assert_eq!(r.wave.v[10 + i * w + k][l], want, "{asm} lane {l}");
                }
            }
        }
    }
    for (asm, w, unit) in [
        (
            "ds_write2_b32 v1, v10, v11 offset0:2 offset1:9",
            1usize,
            4usize,
        ),
        (
            "ds_write2_b64 v1, v[10:11], v[12:13] offset0:1 offset1:7",
            2,
            8,
        ),
        ("ds_write2st64_b32 v1, v10, v11 offset0:1 offset1:2", 1, 256),
        ("ds_write2st64_b64 v1, v[10:11], v[12:13] offset1:3", 2, 512),
    ] {
        let r = lds_case(Target::Gfx942, asm, &[0; 1024], |wv| {
            for l in 0..64 {
                wv.v[1][l] = 4096 + 64 * l as u32;
                for k in 0..4 {
                    wv.v[10 + k][l] = 0x100 * k as u32 + l as u32;
                }
            }
        });
        let (o0, o1) = match asm {
            a if a.contains("offset0:2") => (2, 9),
            a if a.contains("offset0:1 offset1:7") => (1, 7),
            a if a.contains("offset0:1 offset1:2") => (1, 2),
            _ => (0, 3),
        };
        let mut want = vec![0u8; 65536];
        for l in 0..64 {
            if EXEC >> l & 1 == 0 {
                continue;
            }
            for (i, o) in [o0, o1].iter().enumerate() {
                for k in 0..w {
                    let at = 4096 + 64 * l + o * unit + 4 * k;
                    let v = 0x100 * (i * w + k) as u32 + l as u32;
                    want[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
        assert_eq!(r.lds, want, "{asm}");
    }
}

/// Regression (Triton's reverse `tl.cumsum` over a 4 x 512 tile): the
/// compiler folds a negative base `v = -4 * wave` with positive `offset0`/
/// `offset1` fields; the `*2*` forms add them in 32-bit arithmetic like
/// every other DS address, so `-12 + 19 * 4` is byte 64.
#[test]
fn read2_write2_and_wrxchg2_wrap_a_negative_base() {
    for t in [Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
        let asm = "ds_write2_b32 v1, v10, v11 offset0:19 offset1:23\n\
                   ds_write2_b64 v2, v[12:13], v[14:15] offset0:40 offset1:60\n\
                   s_waitcnt lgkmcnt(0)\n\
                   ds_read2_b32 v[16:17], v1 offset0:19 offset1:23\n\
                   ds_read2_b64 v[18:21], v2 offset0:40 offset1:60\n\
                   s_waitcnt lgkmcnt(0)\n\
                   ds_wrxchg2_rtn_b32 v[26:27], v1, v24, v25 offset0:19 offset1:23\n\
                   s_waitcnt lgkmcnt(0)";
        // Lane l: bases -4 * (l % 4) and -16 * (l % 4); data tagged by lane.
        let m = |l: usize| (l % 4) as i64;
        let r = lds_case(t, asm, &[0; 1024], |wv| {
            for l in 0..64 {
                wv.v[1][l] = (-4 * m(l)) as u32;
                wv.v[2][l] = (-16 * m(l)) as u32;
                for k in 0..6 {
                    wv.v[10 + k][l] = 0x1000 * (k as u32 + 1) + l as u32;
                }
                wv.v[24][l] = 0xa000 + l as u32;
                wv.v[25][l] = 0xb000 + l as u32;
            }
        });
        // Lanes of one residue share addresses: the highest active one wins.
        let mut last = [0usize; 4];
        for l in 0..64 {
            if EXEC >> l & 1 != 0 {
                last[l % 4] = l;
            }
        }
        let dw = |at: i64| le32(&r.lds, at as usize);
        for (q, &l) in last.iter().enumerate() {
            let (b1, b2) = (-4 * q as i64, -16 * q as i64);
            let l = l as u32;
            assert_eq!(
                dw(b1 + 76),
                0xa000 + l,
                "{t:?}: wrxchg2 offset0 of base {b1}"
            );
            assert_eq!(
                dw(b1 + 92),
                0xb000 + l,
                "{t:?}: wrxchg2 offset1 of base {b1}"
            );
            for k in 0..2i64 {
                assert_eq!(
                    dw(b2 + 320 + 4 * k),
                    0x3000 + 0x1000 * k as u32 + l,
                    "{t:?}: write2_b64"
                );
                assert_eq!(
                    dw(b2 + 480 + 4 * k),
                    0x5000 + 0x1000 * k as u32 + l,
                    "{t:?}: write2_b64"
                );
            }
        }
        for l in 0..64 {
            if EXEC >> l & 1 == 0 {
                continue;
            }
            let w = last[l % 4] as u32;
            let got = |v: usize| r.wave.v[v][l];
            assert_eq!(
                [got(16), got(17)],
                [0x1000 + w, 0x2000 + w],
                "{t:?} lane {l}: read2_b32"
            );
            assert_eq!(
                [got(18), got(19), got(20), got(21)],
                [0x3000 + w, 0x4000 + w, 0x5000 + w, 0x6000 + w],
                "{t:?} lane {l}: read2_b64"
            );
            // The exchange returns what the slot held before this lane's
            // exchange: the write2 value for the residue's first active
            // lane, else the previous active lane's exchanged data.
            let prev = (0..l).rev().find(|&p| p % 4 == l % 4 && EXEC >> p & 1 != 0);
            let want = match prev {
                Some(p) => [0xa000 + p as u32, 0xb000 + p as u32],
                None => [0x1000 + w, 0x2000 + w],
            };
            assert_eq!([got(26), got(27)], want, "{t:?} lane {l}: wrxchg2_rtn_b32");
        }
    }
}

/// The reference 32-bit DS atomic: returns the new value (None: unchanged).
fn model32(name: &str, old: u32, d0: u32, d1: u32) -> Option<u32> {
    let f = f32::from_bits;
    Some(match name {
        "add_u32" => old.wrapping_add(d0),
        "sub_u32" => old.wrapping_sub(d0),
        "rsub_u32" => d0.wrapping_sub(old),
        "inc_u32" => {
            if old >= d0 {
                0
            } else {
                old + 1
            }
        }
        "dec_u32" => {
            if old == 0 || old > d0 {
                d0
            } else {
                old - 1
            }
        }
        "min_i32" => (old as i32).min(d0 as i32) as u32,
        "max_i32" => (old as i32).max(d0 as i32) as u32,
        "min_u32" => old.min(d0),
        "max_u32" => old.max(d0),
        "and_b32" => old & d0,
        "or_b32" => old | d0,
        "xor_b32" => old ^ d0,
        "mskor_b32" => (old & !d0) | d1,
        "wrxchg_rtn_b32" => d0,
        "cmpst_b32" => return (old == d0).then_some(d1),
        "cmpst_f32" => return (f(old) == f(d0)).then_some(d1),
        "wrap_rtn_b32" => {
            if old >= d0 {
                old - d0
            } else {
                old.wrapping_add(d1)
            }
        }
        "add_f32" => (f(old) + f(d0)).to_bits(),
        "min_f32" => {
            if f(d0) < f(old) {
                d0
            } else {
                old
            }
        }
        "max_f32" => {
            if f(d0) > f(old) {
                d0
            } else {
                old
            }
        }
        _ => unreachable!("{name}"),
    })
}

#[test]
fn atomics_32_apply_in_lane_order_and_return_pre_op_values() {
    let names = [
        "add_u32",
        "sub_u32",
        "rsub_u32",
        "inc_u32",
        "dec_u32",
        "min_i32",
        "max_i32",
        "min_u32",
        "max_u32",
        "and_b32",
        "or_b32",
        "xor_b32",
        "mskor_b32",
        "cmpst_b32",
        "cmpst_f32",
        "add_f32",
        "min_f32",
        "max_f32",
        "wrxchg_rtn_b32",
        "wrap_rtn_b32",
    ];
    for name in names {
        let float = name.ends_with("f32");
        let two = matches!(
            name,
            "mskor_b32" | "cmpst_b32" | "cmpst_f32" | "wrap_rtn_b32"
        );
        let only_rtn = name.contains("_rtn_");
        for rtn in [false, true] {
            if only_rtn && !rtn {
                continue;
            }
            let mnem = match (rtn, only_rtn) {
                (true, false) => {
                    let (a, b) = name.split_once('_').unwrap();
                    format!("ds_{a}_rtn_{b}")
                }
                _ => format!("ds_{name}"),
            };
            let asm = format!(
                "{mnem} {}v1, v2{} offset:8",
                if rtn { "v10, " } else { "" },
                if two { ", v3" } else { "" }
            );
            let mut s = 77;
            let val = |s: &mut u64, l: usize| -> u32 {
                if float {
                    if l == 13 {
                        f32::NAN.to_bits()
                    } else {
                        ((splitmix(s) % 16) as f32 * 0.5 - 3.0).to_bits()
                    }
                } else if name.ends_with("i32") {
                    (splitmix(s) as u32 % 9).wrapping_sub(4)
                } else {
                    splitmix(s) as u32 % 7
                }
            };
            let mut init = [0u8; 1024];
            for i in 0..4 {
                init[8 + 4 * i..12 + 4 * i].copy_from_slice(&val(&mut s, 0).to_le_bytes());
            }
            let d0: Vec<u32> = (0..64).map(|l| val(&mut s, l)).collect();
            let d1: Vec<u32> = (0..64).map(|l| val(&mut s, l + 1)).collect();
            let r = lds_case(Target::Gfx942, &asm, &init, |w| {
                for l in 0..64 {
                    w.v[1][l] = 4 * (l as u32 % 4);
                    w.v[2][l] = d0[l];
                    w.v[3][l] = d1[l];
                    w.v[10][l] = 0xdead;
                }
            });
            let mut mem: Vec<u32> = (0..4).map(|i| le32(&init, 8 + 4 * i)).collect();
            for l in 0..64 {
                if EXEC >> l & 1 == 0 {
                    assert_eq!(r.wave.v[10][l], 0xdead);
                    continue;
                }
                let m = &mut mem[l % 4];
                let old = *m;
                if let Some(n) = model32(name, old, d0[l], d1[l]) {
                    *m = n;
                }
                let want = if rtn { old } else { 0xdead };
                assert_eq!(r.wave.v[10][l], want, "{asm} lane {l}");
            }
            for (i, m) in mem.iter().enumerate() {
                assert_eq!(le32(&r.lds, 8 + 4 * i), *m, "{asm} word {i}");
            }
        }
    }
}

#[test]
fn atomics_64_and_exchange_pairs() {
    let names = [
        "ds_add_rtn_u64",
        "ds_min_rtn_i64",
        "ds_max_rtn_u64",
        "ds_cmpst_rtn_b64",
        "ds_wrxchg_rtn_b64",
        "ds_add_rtn_f64",
        "ds_max_rtn_f64",
    ];
    for name in names {
        let two = name.contains("cmpst");
        let asm = format!(
            "{name} v[10:11], v1, v[2:3]{}",
            if two { ", v[4:5]" } else { "" }
        );
        let float = name.ends_with("f64");
        let mut s = 5;
        let val = |s: &mut u64| -> u64 {
            if float {
                ((splitmix(s) % 40) as f64 * 0.25 - 5.0).to_bits()
            } else if name.contains("i64") {
                (splitmix(s) % 9).wrapping_sub(4)
            } else {
                splitmix(s) % 5
            }
        };
        let mut init = [0u8; 1024];
        let m0 = val(&mut s);
        let m1 = val(&mut s);
        init[0..8].copy_from_slice(&m0.to_le_bytes());
        init[8..16].copy_from_slice(&m1.to_le_bytes());
        let d0: Vec<u64> = (0..64).map(|_| val(&mut s)).collect();
        let d1: Vec<u64> = (0..64).map(|_| val(&mut s)).collect();
        let r = lds_case(Target::Gfx942, &asm, &init, |w| {
            for l in 0..64 {
                w.v[1][l] = 8 * (l as u32 % 2);
                w.v[2][l] = d0[l] as u32;
                w.v[3][l] = (d0[l] >> 32) as u32;
                w.v[4][l] = d1[l] as u32;
                w.v[5][l] = (d1[l] >> 32) as u32;
            }
        });
        let mut mem = [m0, m1];
        let f = f64::from_bits;
        for l in 0..64 {
            if EXEC >> l & 1 == 0 {
                continue;
            }
            let m = &mut mem[l % 2];
            let (old, d, e) = (*m, d0[l], d1[l]);
            let new = match name {
                "ds_add_rtn_u64" => Some(old.wrapping_add(d)),
                "ds_min_rtn_i64" => Some((old as i64).min(d as i64) as u64),
                "ds_max_rtn_u64" => Some(old.max(d)),
                "ds_cmpst_rtn_b64" => (old == d).then_some(e),
                "ds_wrxchg_rtn_b64" => Some(d),
                "ds_add_rtn_f64" => Some((f(old) + f(d)).to_bits()),
                _ => Some(if f(d) > f(old) { d } else { old }),
            };
            if let Some(n) = new {
                *m = n;
            }
            let got = u64::from(r.wave.v[10][l]) | (u64::from(r.wave.v[11][l]) << 32);
            assert_eq!(got, old, "{asm} lane {l}");
        }
        assert_eq!(&r.lds[0..8], &mem[0].to_le_bytes(), "{asm}");
        assert_eq!(&r.lds[8..16], &mem[1].to_le_bytes(), "{asm}");
    }
    // ds_wrxchg2: each lane exchanges two dwords at distinct slots.
    let init = random_init(8);
    let r = lds_case(
        Target::Gfx942,
        "ds_wrxchg2st64_rtn_b32 v[10:11], v1, v2, v3 offset0:1 offset1:2",
        &init,
        |w| {
            for l in 0..64 {
                w.v[1][l] = 4 * l as u32;
                w.v[2][l] = 1000 + l as u32;
                w.v[3][l] = 2000 + l as u32;
            }
        },
    );
    for l in 0..64 {
        if EXEC >> l & 1 == 0 {
            continue;
        }
        assert_eq!(r.wave.v[10][l], le32(&init, 4 * l + 256), "lane {l}");
        assert_eq!(r.wave.v[11][l], le32(&init, 4 * l + 512), "lane {l}");
        assert_eq!(le32(&r.lds, 4 * l + 256), 1000 + l as u32, "lane {l}");
        assert_eq!(le32(&r.lds, 4 * l + 512), 2000 + l as u32, "lane {l}");
    }
}

#[test]
fn packed_half_atomics() {
    use crate::float::{Rounding, f16_to_f32, f32_to_f16};
    let mut init = [0u8; 1024];
    init[0..4].copy_from_slice(&0x3c00_bc00u32.to_le_bytes());
    let r = lds_case(
        Target::Gfx942,
        "ds_pk_add_rtn_f16 v10, v1, v2",
        &init,
        |w| {
            for l in 0..64 {
                w.v[1][l] = 0;
                w.v[2][l] = 0x2e66_3266 ^ (l as u32 * 0x0011_0013);
            }
        },
    );
    let mut m = 0x3c00_bc00u32;
    for l in 0..64 {
        if EXEC >> l & 1 == 0 {
            continue;
        }
        assert_eq!(r.wave.v[10][l], m, "lane {l}");
        let d = 0x2e66_3266 ^ (l as u32 * 0x0011_0013);
        let add = |i: u32| {
            let x = f64::from(f16_to_f32((m >> (16 * i)) as u16))
                + f64::from(f16_to_f32((d >> (16 * i)) as u16));
            u32::from(f32_to_f16(x as f32, Rounding::NearestEven))
        };
        m = add(0) | (add(1) << 16);
    }
    assert_eq!(le32(&r.lds, 0), m);
}

#[test]
fn out_of_range_accesses_read_zero_and_drop_writes() {
    let r = run(
        Target::Gfx942,
        "ds_write_b32 v1, v2\n\
         ds_read_b32 v3, v1\n\
         ds_add_rtn_u32 v4, v1, v2\n\
         ds_read_b64 v[6:7], v5",
        |w, _| {
            w.v[1] = [65534; 64];
            w.v[2] = [7; 64];
            w.v[3] = [9; 64];
            w.v[4] = [9; 64];
            w.v[5] = [65528; 64];
        },
    )
    .unwrap();
    assert!(r.lds.iter().all(|b| *b == 0));
    assert_eq!(r.wave.v[3], [0; 64]);
    assert_eq!(r.wave.v[4], [0; 64]);
    assert_eq!(r.wave.v[6], [0; 64], "in range: the zeroed LDS");
}

#[test]
fn bpermute_and_permute_move_data_between_lanes() {
    let init = [0u8; 1024];
    let addr = |l: usize| ((l * 37 + 11) % 64 * 4 + 256 * (l % 3)) as u32;
    let r = lds_case(
        Target::Gfx942,
        "ds_bpermute_b32 v10, v1, v2\n\
         ds_permute_b32 v11, v1, v2 offset:8\n\
         ds_bpermute_b32 v12, v3, v2",
        &init,
        |w| {
            for l in 0..64 {
                w.v[1][l] = addr(l);
                w.v[2][l] = 0x500 + l as u32;
                w.v[3][l] = 4 * l as u32 + 2;
                w.v[10][l] = 0xdead;
                w.v[11][l] = 0xdead;
            }
        },
    );
    let mut perm = [0u32; 64];
    for l in 0..64 {
        if EXEC >> l & 1 != 0 {
            perm[(addr(l) as usize + 8) / 4 % 64] = 0x500 + l as u32;
        }
    }
    for l in 0..64 {
        if EXEC >> l & 1 == 0 {
            assert_eq!((r.wave.v[10][l], r.wave.v[11][l]), (0xdead, 0xdead));
            continue;
        }
        let s = addr(l) as usize / 4 % 64;
        let want = if EXEC >> s & 1 != 0 {
            0x500 + s as u32
        } else {
            0
        };
        assert_eq!(r.wave.v[10][l], want, "bpermute lane {l}");
        assert_eq!(r.wave.v[11][l], perm[l], "permute lane {l}");
        assert_eq!(
            r.wave.v[12][l],
            0x500 + l as u32,
            "identity (low bits ignored)"
        );
    }
}

#[test]
fn swizzle_patterns() {
    type Pattern = (&'static str, fn(usize) -> usize);
    let cases: [Pattern; 5] = [
        ("swizzle(QUAD_PERM,3,1,2,0)", |l| {
            (l & !3) | [3, 1, 2, 0][l & 3]
        }),
        ("swizzle(SWAP,16)", |l| l ^ 16),
        ("swizzle(REVERSE,8)", |l| (l & !7) | (7 - (l & 7))),
        ("swizzle(BROADCAST,8,5)", |l| (l & !7) | 5),
        ("swizzle(BITMASK_PERM,\"01pip\")", |l| {
            (l & 0x20) | ((l & 0b00111) | 0b01000) ^ 0b00010
        }),
    ];
    for (pat, model) in cases {
        let asm = format!("ds_swizzle_b32 v10, v2 offset:{pat}");
        // The data is the address operand.
        let r = lds_case(Target::Gfx90a, &asm, &[0; 1024], |w| {
            for l in 0..64 {
                w.v[2][l] = 0x700 + l as u32;
            }
        });
        for l in 0..64 {
            if EXEC >> l & 1 == 0 {
                continue;
            }
            let s = model(l);
            let want = if EXEC >> s & 1 != 0 {
                0x700 + s as u32
            } else {
                0
            };
            assert_eq!(r.wave.v[10][l], want, "{asm} lane {l}");
        }
    }
    // Rotate/FFT encodings: quad-permute with offset[7:0] on GFX9.
    assert_eq!(swizzle_src(0xc000 | 0b1110_0100, 6), 6);
    assert_eq!(swizzle_src(0xe000 | 0b0001_1011, 5), 6);
}

#[test]
fn append_consume_and_addtid() {
    let mut init = [0u8; 1024];
    init[40..44].copy_from_slice(&100u32.to_le_bytes());
    init[44..48].copy_from_slice(&100u32.to_le_bytes());
    let r = lds_case(
        Target::Gfx942,
        "s_mov_b32 m0, 32\n\
         ds_append v10 offset:8\n\
         ds_consume v11 offset:12\n\
         s_mov_b32 m0, 512\n\
         ds_write_addtid_b32 v2 offset:4\n\
         s_mov_b32 m0, 0\n\
         ds_read_addtid_b32 v12 offset:16",
        &init,
        |w| {
            for l in 0..64 {
                w.v[2][l] = 0x900 + l as u32;
            }
        },
    );
    let n = EXEC.count_ones();
    for l in 0..64 {
        if EXEC >> l & 1 == 0 {
            continue;
        }
        assert_eq!(r.wave.v[10][l], 100);
        assert_eq!(r.wave.v[11][l], 100);
        assert_eq!(le32(&r.lds, 516 + 4 * l), 0x900 + l as u32, "lane {l}");
        assert_eq!(r.wave.v[12][l], le32(&r.lds, 16 + 4 * l), "lane {l}");
    }
    assert_eq!(le32(&r.lds, 40), 100 + n);
    assert_eq!(le32(&r.lds, 44), 100 - n);
}

#[test]
fn transposing_loads_gather_elements_across_lanes() {
    use super::cross::tr_source;
    // The 16-bit layout the CDNA4 hardware shows: lane l, halfword n from
    // lane (l & ~15) | ((l >> 2) & 3) + 4n, halfword l & 3.
    for l in 0..64 {
        for n in 0..4 {
            assert_eq!(
                tr_source(4, l, n),
                ((l & !15) + ((l >> 2) & 3) + 4 * n, l & 3)
            );
        }
        // Bytes: two interleaved 8x8 transposes (even and odd lanes).
        for n in 0..8 {
            assert_eq!(
                tr_source(8, l, n),
                ((l & !15) + ((l >> 3) & 1) + 2 * n, l & 7)
            );
        }
        // Nibbles and 6-bit values: one 16x16 transpose.
        for n in 0..16 {
            assert_eq!(tr_source(16, l, n), ((l & !15) + n, l & 15));
        }
    }
    let init = random_init(4);
    for (asm, bits, dw) in [
        ("ds_read_b64_tr_b16 v[10:11], v1 offset:16", 16u32, 2usize),
        ("ds_read_b64_tr_b8 v[10:11], v1 offset:16", 8, 2),
        ("ds_read_b64_tr_b4 v[10:11], v1 offset:16", 4, 2),
        ("ds_read_b96_tr_b6 v[10:12], v1 offset:16", 6, 3),
    ] {
        let r = lds_case(Target::Gfx950, asm, &init, |w| {
            for l in 0..64 {
                // Rows in a scrambled order: each lane names its own chunk.
                w.v[1][l] = (((l * 5) % 64) * 12) as u32;
            }
        });
        let chunk = |l: usize| {
            let at = ((l * 5) % 64) * 12 + 16;
            let mut b = [0u8; 16];
            b[..4 * dw].copy_from_slice(&init[at..at + 4 * dw]);
            u128::from_le_bytes(b)
        };
        let k = 32 * dw / bits as usize;
        for l in 0..64 {
            if EXEC >> l & 1 == 0 {
                continue;
            }
            let mut want = 0u128;
            for n in 0..k {
                let (s, e) = tr_source(k, l, n);
                let x = (chunk(s) >> (e as u32 * bits)) & ((1 << bits) - 1);
                want |= x << (n as u32 * bits);
            }
            for d in 0..dw {
                assert_eq!(
                    r.wave.v[10 + d][l],
                    (want >> (32 * d)) as u32,
                    "{asm} lane {l}"
                );
            }
        }
    }
}

#[test]
fn agpr_data_and_destinations() {
    let init = random_init(6);
    let r = lds_case(
        Target::Gfx90a,
        "ds_read_b64 a[2:3], v1 offset:8\n\
         ds_write_b32 v1, a4 offset:512\n\
         ds_add_rtn_u32 a5, v1, a4 offset:516",
        &init,
        |w| {
            for l in 0..64 {
                w.v[1][l] = 4 * l as u32;
                w.v[256 + 4][l] = 0x4000 + l as u32;
            }
        },
    );
    for l in 0..64 {
        if EXEC >> l & 1 == 0 {
            continue;
        }
        assert_eq!(r.wave.v[256 + 2][l], le32(&init, 4 * l + 8), "lane {l}");
        assert_eq!(r.wave.v[256 + 3][l], le32(&init, 4 * l + 12), "lane {l}");
        // The word lane l wrote, plus lane l - 1's add (which targets it).
        let prev = l.checked_sub(1).filter(|p| EXEC >> p & 1 != 0);
        let want = (0x4000 + l as u32) + prev.map_or(0, |p| 0x4000 + p as u32);
        assert_eq!(le32(&r.lds, 4 * l + 512), want, "lane {l}");
        // Lane l's add reads the word lane l + 1 wrote, or the initial one.
        let next = l + 1;
        let old = if next < 64 && EXEC >> next & 1 != 0 {
            0x4000 + next as u32
        } else {
            le32(&init, 4 * l + 516)
        };
        assert_eq!(r.wave.v[256 + 5][l], old, "lane {l}");
    }
}

#[test]
fn flat_lds_aperture_out_of_range_reads_zero() {
    let ap = crate::exec::wave::Apertures::default();
    let r = run(
        Target::Gfx942,
        "flat_store_dword v[4:5], v6\n\
         flat_load_dword v7, v[4:5]",
        |w, _| {
            for l in 0..64 {
                let a = ap.shared_base + 65536 - 2 + l as u64;
                w.v[4][l] = a as u32;
                w.v[5][l] = (a >> 32) as u32;
                w.v[6][l] = 5;
                w.v[7][l] = 9;
            }
        },
    )
    .unwrap();
    assert_eq!(r.wave.v[7], [0; 64]);
    assert!(r.lds.iter().all(|b| *b == 0));
}
