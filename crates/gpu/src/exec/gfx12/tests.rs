//! GFX12 semantics against values computed by hand and WMMA against CPU
//! matrix products, on snippets assembled by `llvm-mc-22 -mcpu=gfx1201`
//! in wave32 and wave64.

use crate::exec::testing::{Run, iota, run_in, run_in_mode, run_in_ok};
use crate::float::{E4M3FN, Rounding, f32_to_f16};
use crate::mem::Perms;
use rocjitsu_isa::{Target, True16, WaveSize};

const T: Target = Target::Gfx1201;
const W32: WaveSize = WaveSize::Wave32;
const W64: WaveSize = WaveSize::Wave64;

fn run(
    wave: WaveSize,
    asm: &str,
    setup: impl FnMut(&mut crate::exec::Wave, &crate::mem::Vm),
) -> Run {
    run_in_ok(T, wave, asm, setup)
}

#[test]
fn split_wait_counters_and_renamed_salu() {
    let r = run(
        W32,
        "s_wait_loadcnt 0x0\n\
         s_wait_kmcnt 0x0\n\
         s_wait_loadcnt_dscnt 0x0\n\
         s_wait_alu 0xfffe\n\
         s_add_co_u32 s4, s0, s1\n\
         s_add_co_ci_u32 s5, s2, s3\n\
         s_add_nc_u64 s[6:7], s[8:9], s[10:11]\n\
         s_sub_nc_u64 s[12:13], s[8:9], s[10:11]\n\
         s_mul_u64 s[14:15], s[8:9], s[10:11]",
        |w, _| {
            w.s[0] = 0xffff_fff0;
            w.s[1] = 0x20;
            w.s[2] = 7;
            w.s[3] = 1;
            w.s[8] = 0xffff_ffff;
            w.s[9] = 1;
            w.s[10] = 3;
            w.s[11] = 0;
        },
    );
    assert_eq!(r.wave.s[4], 0x10);
    assert_eq!(
        r.wave.s[5], 9,
        "the carry of s_add_co_u32 reaches s_add_co_ci_u32"
    );
    let a = 0x1_ffff_ffffu64;
    let s64 = |i: usize| u64::from(r.wave.s[i]) | u64::from(r.wave.s[i + 1]) << 32;
    assert_eq!(s64(6), a + 3);
    assert_eq!(s64(12), a - 3);
    assert_eq!(s64(14), a * 3);
}

#[test]
fn salu_floats_and_pseudo_scalar_transcendentals() {
    let r = run(
        W32,
        "s_add_f32 s2, s0, s1\n\
         s_mul_f32 s3, s0, s1\n\
         s_fmac_f32 s4, s0, s1\n\
         s_cvt_i32_f32 s5, s3\n\
         s_cvt_f32_u32 s6, s7\n\
         s_cmp_lt_f32 s0, s1\n\
         s_cselect_b32 s8, 1, 2\n\
         s_cmp_nlt_f32 s0, s1\n\
         s_cselect_b32 s9, 1, 2\n\
         v_s_sqrt_f32 s10, s11\n\
         v_s_exp_f32 s12, 2.0\n\
         s_fmamk_f32 s13, s0, 0x40000000, s1\n\
         s_cvt_f16_f32 s14, s1",
        |w, _| {
            w.s[0] = 1.5f32.to_bits();
            w.s[1] = (-4.0f32).to_bits();
            w.s[4] = 10.0f32.to_bits();
            w.s[7] = 12345;
            w.s[11] = 16.0f32.to_bits();
            // EXEC does not gate scalar results.
            w.set_exec(0);
        },
    );
    let f = |i: usize| f32::from_bits(r.wave.s[i]);
    assert_eq!(f(2), -2.5);
    assert_eq!(f(3), -6.0);
    assert_eq!(f(4), 4.0, "s_fmac_f32 accumulates into its destination");
    assert_eq!(r.wave.s[5] as i32, -6);
    assert_eq!(f(6), 12345.0);
    assert_eq!(r.wave.s[8], 2, "1.5 < -4 is false");
    assert_eq!(r.wave.s[9], 1);
    assert_eq!(f(10), 4.0);
    assert_eq!(f(12), 4.0);
    assert_eq!(f(13), 1.5 * 2.0 - 4.0);
    assert_eq!(r.wave.s[14], 0xc400, "f16 -4.0, upper half zero");
    assert_eq!(r.wave.v[511][0], 0, "the spare VGPR is restored");
}

#[test]
fn vglobal_saddr_offset_and_atomic_return() {
    let mut buf = 0;
    let r = run(
        W32,
        "s_load_b64 s[2:3], s[0:1], 0x8\n\
         s_load_b96 s[4:6], s[0:1], 0x10\n\
         s_load_u16 s7, s[0:1], 0x12\n\
         s_load_i8 s8, s[0:1], 0x13\n\
         s_wait_kmcnt 0x0\n\
         v_lshlrev_b32_e32 v1, 2, v0\n\
         global_load_b32 v2, v1, s[2:3] offset:-4\n\
         s_wait_loadcnt 0x0\n\
         v_mul_lo_u32 v2, v2, 3\n\
         global_store_b32 v1, v2, s[2:3] offset:0x1000\n\
         global_atomic_add_u32 v3, v1, v0, s[2:3] offset:0x2000 th:TH_ATOMIC_RETURN\n\
         global_atomic_add_u32 v1, v0, s[2:3] offset:0x2000\n\
         global_load_b32 v4, v1, s[2:3] offset:0x2000",
        |w, vm| {
            buf = vm.alloc(0x4000, Perms::RW);
            let args = vm.alloc(64, Perms::RW);
            vm.fill(args + 8, &(buf + 4).to_le_bytes()).unwrap();
            vm.fill(args + 0x10, &[1, 2, 0xfe, 0x85, 3, 0, 0, 0, 4, 0, 0, 0])
                .unwrap();
            let data: Vec<u8> = (0..33u32).flat_map(|i| (i + 1).to_le_bytes()).collect();
            vm.fill(buf, &data).unwrap();
            let acc: Vec<u8> = (0..33u32).flat_map(|i| (100 * i).to_le_bytes()).collect();
            vm.fill(buf + 4 + 0x2000, &acc).unwrap();
            w.s[0] = args as u32;
            w.s[1] = (args >> 32) as u32;
            w.v[0] = iota();
        },
    );
    assert_eq!(&r.wave.s[4..7], &[0x85fe_0201, 3, 4]);
    assert_eq!(r.wave.s[7], 0x85fe, "s_load_u16 zero-extends");
    assert_eq!(r.wave.s[8], 0xffff_ff85, "s_load_i8 sign-extends");
    let out = r.vm.read_vec(buf + 4 + 0x1000, 32 * 4).unwrap();
    for l in 0..32 {
        let v = u32::from_le_bytes(out[l * 4..l * 4 + 4].try_into().unwrap());
        assert_eq!(v, 3 * (l as u32 + 1), "lane {l}");
        assert_eq!(r.wave.v[3][l], 100 * l as u32, "the pre-op value, lane {l}");
        assert_eq!(r.wave.v[4][l], 100 * l as u32 + 2 * l as u32, "lane {l}");
    }
}

#[test]
fn vbuffer_offen_with_a_24_bit_offset() {
    let mut buf = 0;
    let r = run(
        W32,
        "v_lshlrev_b32_e32 v1, 2, v0\n\
         buffer_load_b32 v2, v1, s[4:7], null offen offset:0x10000\n\
         s_wait_loadcnt 0x0\n\
         buffer_store_b32 v2, v1, s[4:7], s8 offen offset:0x4",
        |w, vm| {
            buf = vm.alloc(0x20000, Perms::RW);
            let data: Vec<u8> = (0..32u32).flat_map(|i| (i * 7).to_le_bytes()).collect();
            vm.fill(buf + 0x10000, &data).unwrap();
            w.s[4] = buf as u32;
            w.s[5] = (buf >> 32) as u32 & 0xffff;
            w.s[6] = 0x20000;
            w.s[7] = 0x3002_0000;
            w.s[8] = 0x100;
            w.v[0] = iota();
        },
    );
    let out = r.vm.read_vec(buf + 0x104, 32 * 4).unwrap();
    for l in 0..32 {
        let v = u32::from_le_bytes(out[l * 4..l * 4 + 4].try_into().unwrap());
        assert_eq!(v, 7 * l as u32, "lane {l}");
    }
}

#[test]
fn permlane16_var_selects_per_lane() {
    let r = run(
        W32,
        "v_permlane16_var_b32 v2, v0, v1\n\
         v_permlanex16_var_b32 v3, v0, v1",
        |w, _| {
            w.v[0] = std::array::from_fn(|l| 1000 + l as u32);
            w.v[1] = std::array::from_fn(|l| (l as u32 * 3 + 1) & 0xf | 0x30);
        },
    );
    for l in 0..32usize {
        let sel = (l * 3 + 1) & 0xf;
        assert_eq!(r.wave.v[2][l], 1000 + ((l & 16) | sel) as u32, "lane {l}");
        assert_eq!(
            r.wave.v[3][l],
            1000 + (((l & 16) ^ 16) | sel) as u32,
            "lane {l}"
        );
    }
}

#[test]
fn barrier_signal_waits_for_the_workgroup() {
    let e = run_in(T, W32, "s_barrier_signal m0", |_, _| {}).err();
    let (f, _) = e.expect("named barriers are not modelled");
    assert!(f.to_string().contains("s_barrier_signal"), "{f}");
}

/// The lanes and VGPRs of a GFX12 WMMA A (`rows`) or B operand: row or
/// column `i` is in lanes `i` and `16 + i`, the first half of its K
/// elements in lane `i`, packed `bits` wide from bit 0 of each VGPR.
fn scatter(m: &[Vec<u32>], rows: bool, bits: usize, regs: &mut [[u32; 64]]) {
    let kk = if rows { m[0].len() } else { m.len() };
    let per = 32 / bits;
    for i in 0..16 {
        for k in 0..kk {
            let e = if rows { m[i][k] } else { m[k][i] };
            let lane = i + 16 * (k / (kk / 2));
            let k = k % (kk / 2);
            let sh = bits * (k % per);
            let r = &mut regs[k / per][lane];
            let mask = (((1u64 << bits) - 1) as u32) << sh;
            *r = (*r & !mask) | (e << sh);
        }
    }
}

/// C/D element (row, column) in the f32 layout: VGPR `row % 8`, lane
/// `16 * (row / 8) + column`.
fn cd(row: usize, col: usize) -> (usize, usize) {
    (row % 8, 16 * (row / 8) + col)
}

#[test]
fn wmma_f32_f16_matches_a_cpu_matrix_product() {
    // Products and sums exact in f32: the comparison is bit-exact.
    let a: Vec<Vec<f32>> = (0..16)
        .map(|i| {
            (0..16)
                .map(|k| ((i * 7 + k * 3) % 9) as f32 - 4.0)
                .collect()
        })
        .collect();
    let b: Vec<Vec<f32>> = (0..16)
        .map(|k| {
            (0..16)
                .map(|j| ((k * 5 + j) % 7) as f32 * 0.5 - 1.5)
                .collect()
        })
        .collect();
    let cm = |i: usize, j: usize| (i * 16 + j) as f32 * 0.25;
    let h = |m: &[Vec<f32>]| -> Vec<Vec<u32>> {
        m.iter()
            .map(|r| {
                r.iter()
                    .map(|&x| u32::from(f32_to_f16(x, Rounding::NearestEven)))
                    .collect()
            })
            .collect()
    };
    for neg in ["", " neg_lo:[1,0,0]"] {
        let r = run(
            W32,
            &format!("v_wmma_f32_16x16x16_f16 v[16:23], v[0:3], v[8:11], v[16:23]{neg}"),
            |w, _| {
                scatter(&h(&a), true, 16, &mut w.v[0..4]);
                scatter(&h(&b), false, 16, &mut w.v[8..12]);
                for i in 0..16 {
                    for j in 0..16 {
                        let (v, l) = cd(i, j);
                        w.v[16 + v][l] = cm(i, j).to_bits();
                    }
                }
            },
        );
        let sign = if neg.is_empty() { 1.0 } else { -1.0 };
        for i in 0..16 {
            for j in 0..16 {
                let want = cm(i, j) + sign * (0..16).map(|k| a[i][k] * b[k][j]).sum::<f32>();
                let (v, l) = cd(i, j);
                assert_eq!(
                    f32::from_bits(r.wave.v[16 + v][l]),
                    want,
                    "D[{i}][{j}]{neg}"
                );
            }
        }
    }
}

#[test]
fn wmma_f16_accumulator_is_packed_two_rows_per_vgpr() {
    let a: Vec<Vec<u32>> = (0..16)
        .map(|i| {
            (0..16)
                .map(|k| u32::from(f32_to_f16(((i + k) % 3) as f32, Rounding::NearestEven)))
                .collect()
        })
        .collect();
    let one = u32::from(f32_to_f16(1.0, Rounding::NearestEven));
    let b: Vec<Vec<u32>> = (0..16)
        .map(|k| (0..16).map(|j| if k == j { one } else { 0 }).collect())
        .collect();
    let r = run(
        W32,
        "v_wmma_f16_16x16x16_f16 v[16:19], v[0:3], v[8:11], v[16:19]",
        |w, _| {
            scatter(&a, true, 16, &mut w.v[0..4]);
            scatter(&b, false, 16, &mut w.v[8..12]);
            // C = 0.5 everywhere.
            for v in 16..20 {
                w.v[v] = [0x3800_3800; 64];
            }
        },
    );
    for i in 0..16 {
        for j in 0..16 {
            let want = f32_to_f16(((i + j) % 3) as f32 + 0.5, Rounding::NearestEven);
            let l = 16 * (i / 8) + j;
            let w = r.wave.v[16 + (i % 8) / 2][l];
            let got = (w >> (16 * (i % 2))) as u16;
            assert_eq!(got, want, "D[{i}][{j}]");
        }
    }
}

#[test]
fn wmma_fp8_is_ocp_e4m3() {
    // A[i][k] = k - 8 and B = 0.5 * (j + 1) as E4M3FN bytes: exact.
    let enc = |x: f32| E4M3FN.encode(x, crate::float::Convert::RNE) & 0xff;
    let a: Vec<Vec<u32>> = (0..16)
        .map(|i| {
            (0..16)
                .map(|k| enc((k as f32 - 8.0) + i as f32 * 0.0))
                .collect()
        })
        .collect();
    let b: Vec<Vec<u32>> = (0..16)
        .map(|_| (0..16).map(|j| enc(0.5 * (j + 1) as f32)).collect())
        .collect();
    let r = run(
        W32,
        "v_wmma_f32_16x16x16_fp8_fp8 v[16:23], v[0:1], v[8:9], 1.0",
        |w, _| {
            scatter(&a, true, 8, &mut w.v[0..2]);
            scatter(&b, false, 8, &mut w.v[8..10]);
        },
    );
    let sum_k: f32 = (0..16).map(|k| k as f32 - 8.0).sum();
    for i in 0..16 {
        for j in 0..16 {
            let (v, l) = cd(i, j);
            assert_eq!(
                f32::from_bits(r.wave.v[16 + v][l]),
                1.0 + sum_k * 0.5 * (j + 1) as f32,
                "D[{i}][{j}]"
            );
        }
    }
}

#[test]
fn wmma_integer_forms_match_a_cpu_product() {
    // iu8 (K=16) signed and iu4 (K=32) unsigned, random-ish elements.
    let a8: Vec<Vec<u32>> = (0..16)
        .map(|i| (0..16).map(|k| ((i * 37 + k * 11) % 256) as u32).collect())
        .collect();
    let b8: Vec<Vec<u32>> = (0..16)
        .map(|k| (0..16).map(|j| ((k * 13 + j * 29) % 256) as u32).collect())
        .collect();
    let r = run(
        W32,
        "v_wmma_i32_16x16x16_iu8 v[16:23], v[0:1], v[8:9], v[16:23] neg_lo:[1,1,0]",
        |w, _| {
            scatter(&a8, true, 8, &mut w.v[0..2]);
            scatter(&b8, false, 8, &mut w.v[8..10]);
            for v in 16..24 {
                w.v[v] = [5; 64];
            }
        },
    );
    for i in 0..16 {
        for j in 0..16 {
            let want: i32 = 5
                + (0..16)
                    .map(|k| i32::from(a8[i][k] as u8 as i8) * i32::from(b8[k][j] as u8 as i8))
                    .sum::<i32>();
            let (v, l) = cd(i, j);
            assert_eq!(r.wave.v[16 + v][l] as i32, want, "iu8 D[{i}][{j}]");
        }
    }
    let a4: Vec<Vec<u32>> = (0..16)
        .map(|i| (0..32).map(|k| ((i * 5 + k * 3) % 16) as u32).collect())
        .collect();
    let b4: Vec<Vec<u32>> = (0..32)
        .map(|k| (0..16).map(|j| ((k * 7 + j) % 16) as u32).collect())
        .collect();
    let r = run(
        W32,
        "v_wmma_i32_16x16x32_iu4 v[16:23], v[0:1], v[8:9], 0",
        |w, _| {
            scatter(&a4, true, 4, &mut w.v[0..2]);
            scatter(&b4, false, 4, &mut w.v[8..10]);
        },
    );
    for i in 0..16 {
        for j in 0..16 {
            let want: u32 = (0..32).map(|k| a4[i][k] * b4[k][j]).sum();
            let (v, l) = cd(i, j);
            assert_eq!(r.wave.v[16 + v][l], want, "iu4 D[{i}][{j}]");
        }
    }
}

#[test]
fn wmma_in_a_wave64_faults_rather_than_guess_its_layout() {
    let e = run_in(
        T,
        W64,
        "v_wmma_f32_16x16x16_f16 v[16:19], v[0:1], v[8:9], v[16:19]",
        |_, _| {},
    )
    .err()
    .expect("wave64 WMMA is not modelled");
    assert!(
        e.0.to_string().contains("v_wmma_f32_16x16x16_f16"),
        "{}",
        e.0
    );
}

#[test]
fn images_fault_naming_themselves() {
    let e = run_in(
        T,
        W32,
        "image_load v[0:3], [v4, v5], s[8:15] dmask:0xf dim:SQ_RSRC_IMG_2D",
        |_, _| {},
    )
    .err()
    .expect("images have no GFX12 semantics");
    assert!(e.0.to_string().contains("image_load"), "{}", e.0);
}

/// IEEE half bits of `x` (exact for the values used here).
fn h16(x: f32) -> u32 {
    u32::from(f32_to_f16(x, Rounding::NearestEven))
}

/// 16-bit VALU operations on VGPR halves, in LLVM's real-true16 syntax
/// (Triton's gfx1201 code): a `.h`/`.l` operand reads that half, a 16-bit
/// result writes its half and keeps the other; VOP1/VOP2 (bit 7 of the
/// register field), a 16-bit mac, a literal, DPP16, VOP3 (op_sel) and a
/// VOPC condition feeding `v_cndmask_b16`.
#[test]
fn true16_halves() {
    for wave in [W32, W64] {
        let (vcc, lanes) = if wave == W32 {
            ("vcc_lo", 32)
        } else {
            ("vcc", 64)
        };
        let asm = format!(
            "v_mov_b16_e32 v28.h, v9.l\n\
             v_add_f16_e32 v5.l, v1.h, v2.l\n\
             v_fmac_f16_e32 v6.h, v1.l, v2.h\n\
             v_cvt_f16_f32_e32 v7.h, v3\n\
             v_cvt_f32_f16_e32 v8, v4.h\n\
             v_add_f16_e64 v10.h, v1.l, v2.h\n\
             v_fma_f16 v11.l, v1.h, v2.l, v18.h\n\
             v_pack_b32_f16 v12, v2.h, v1.l\n\
             v_mul_f16_e32 v13.h, 0x4200, v2.l\n\
             v_max_num_f16_e32 v15.l, v1.h, v2.l\n\
             v_add_f16_dpp v16.l, v17.h, v2.l quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n\
             v_cmp_gt_f16_e32 {vcc}, v17.h, v1.l\n\
             v_cndmask_b16 v14.h, v2.l, v1.h, {vcc}"
        );
        let r = run_in_mode(T, wave, True16::Real, &asm, |w, _| {
            // v1 = (2.0, 1.5), v2 = (0.5, -3.0) as (.h, .l).
            w.v[1] = [0x4000_3e00; 64];
            w.v[2] = [0x3800_c200; 64];
            w.v[3] = [6.5f32.to_bits(); 64];
            w.v[4] = [0xc500_0000; 64];
            w.v[5] = [0x5555_0000; 64];
            w.v[6] = [0x3c00_7777; 64];
            w.v[7] = [0x0000_9999; 64];
            w.v[9] = [0x3333_4444; 64];
            w.v[10] = [0x0000_aaaa; 64];
            w.v[11] = [0xbbbb_0000; 64];
            w.v[13] = [0x0000_cccc; 64];
            w.v[14] = [0x0000_eeee; 64];
            w.v[15] = [0xdddd_0000; 64];
            w.v[16] = [0xabcd_0000; 64];
            w.v[17] = std::array::from_fn(|l| h16(l as f32) << 16 | 0x1234);
            w.v[18] = [0x4900_0000; 64];
            w.v[28] = [0x1111_2222; 64];
        })
        .unwrap_or_else(|(f, pc)| panic!("{wave:?}: faulted at 0x{pc:x}: {f}"));
        let v = |i: usize| r.wave.v[i][3];
        assert_eq!(v(28), 0x4444_2222, "{wave:?} v_mov_b16 v28.h, v9.l");
        assert_eq!(v(5), 0x5555_bc00, "{wave:?} v5.l = 2.0 + -3.0");
        assert_eq!(v(6), 0x3f00_7777, "{wave:?} v6.h = 1.5 * 0.5 + 1.0");
        assert_eq!(v(7), 0x4680_9999, "{wave:?} v7.h = f16(6.5)");
        assert_eq!(f32::from_bits(v(8)), -5.0, "{wave:?} f32(v4.h)");
        assert_eq!(v(10), 0x4000_aaaa, "{wave:?} VOP3 v10.h = 1.5 + 0.5");
        assert_eq!(v(11), 0xbbbb_4400, "{wave:?} v11.l = 2.0 * -3.0 + 10.0");
        assert_eq!(v(12), 0x3e00_3800, "{wave:?} pack(v2.h, v1.l)");
        assert_eq!(v(13), 0xc880_cccc, "{wave:?} v13.h = 3.0 * -3.0");
        assert_eq!(v(15), 0xdddd_4000, "{wave:?} max(2.0, -3.0)");
        for l in 0..lanes {
            let want = 0xabcd_0000 | h16((l ^ 1) as f32 - 3.0);
            assert_eq!(r.wave.v[16][l], want, "{wave:?} DPP lane {l}");
            // lane > 1.5 for lanes 2.. picks v1.h (2.0), else v2.l (-3.0).
            let pick = if l as f32 > 1.5 { 0x4000 } else { 0xc200 };
            assert_eq!(
                r.wave.v[14][l],
                pick << 16 | 0xeeee,
                "{wave:?} cndmask lane {l}"
            );
        }
    }
}

/// The two readings of GFX12's 16-bit operands lower to the same
/// operation wherever LLVM's default (fake-16-bit) reading names a valid
/// register: over seeded random VOP1/VOP2/VOPC (e32, DPP16, DPP8) and
/// VOP3 words, every word the default mode decodes also decodes in
/// real-true16 mode, and, unless the default text marks a register
/// invalid (a `.h` half it cannot name), both lower to the same
/// semantics, operands and modifiers. So decoding for execution in
/// real-true16 mode changes nothing LLVM's default reading gets right.
#[test]
fn true16_readings_agree_where_fake16_is_valid() {
    use rocjitsu_isa::gfx12::decode_mode;
    let mut x = 0x7416_7416_u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut both, mut compared) = (0, 0);
    for i in 0..40_000 {
        let a = next();
        let b = next();
        let mut w0 = a as u32;
        match i % 4 {
            0 => w0 &= 0x7fff_ffff,
            1 => w0 = w0 & 0x7fff_ff00 | 0xfa,
            2 => w0 = w0 & 0x7fff_fe00 | 0xe9,
            _ => w0 = w0 & 0x03ff_ffff | 0xd400_0000,
        }
        let mut bytes = w0.to_le_bytes().to_vec();
        bytes.extend_from_slice(&((a >> 32) as u32).to_le_bytes());
        bytes.extend_from_slice(&b.to_le_bytes());
        for wave64 in [false, true] {
            let Ok(fake) = decode_mode(T, wave64, false, &bytes) else {
                continue;
            };
            let real = decode_mode(T, wave64, true, &bytes)
                .unwrap_or_else(|e| panic!("{fake}: valid by default, not in real-true16: {e}"));
            both += 1;
            assert_eq!(fake.len(), real.len(), "{fake} / {real}");
            if fake.to_string().contains("Invalid register") {
                continue;
            }
            compared += 1;
            let (f, r) = (super::lower(fake), super::lower(real));
            let key = |o: &crate::exec::op::Op| {
                (o.exec as usize, o.vdst, o.sdst, o.src, o.mods, o.ext, o.imm)
            };
            assert!(key(&f) == key(&r), "{fake} / {real}: {f:?} / {r:?}");
        }
    }
    println!("{both} words decode in both modes, {compared} compared");
    assert!(compared > 10_000, "{compared} words compared");
}
