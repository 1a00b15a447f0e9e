//! GFX11 semantics against values computed by hand, on snippets assembled
//! by `llvm-mc-22 -mcpu=gfx1100` in wave32 and wave64.

use crate::exec::testing::{Run, buffer_at_kernarg_8, iota, run_in, run_in_ok};
use crate::exec::wave::sreg;
use rocjitsu_isa::{Target, WaveSize};

const T: Target = Target::Gfx1100;
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
fn wave32_compares_write_vcc_lo_only() {
    let r = run(
        W32,
        "v_cmp_gt_u32_e32 vcc_lo, v0, v1\n\
         v_cndmask_b32_e32 v2, v3, v4, vcc_lo\n\
         v_cmp_eq_u32_e64 s4, 3, v0",
        |w, _| {
            w.v[0] = iota();
            w.v[1] = [10; 64];
            w.v[3] = [100; 64];
            w.v[4] = [200; 64];
            w.s[usize::from(sreg::VCC) + 1] = 0xdead;
            w.s[5] = 0xbeef;
        },
    );
    let want: u32 = 0xffff_f800; // lanes 11..31
    assert_eq!(r.wave.s[usize::from(sreg::VCC)], want);
    assert_eq!(r.wave.s[usize::from(sreg::VCC) + 1], 0xdead, "vcc_hi kept");
    assert_eq!(r.wave.s[4], 1 << 3);
    assert_eq!(r.wave.s[5], 0xbeef, "the SGPR after a wave32 mask is kept");
    for l in 0..32 {
        assert_eq!(r.wave.v[2][l], if l > 10 { 200 } else { 100 }, "lane {l}");
    }
    // Lanes 32..63 do not exist in a 32-lane wave.
    assert_eq!(r.wave.v[2][40], 0);
}

#[test]
fn wave64_compares_write_the_pair() {
    let r = run(W64, "v_cmp_gt_u32_e32 vcc, v0, v1", |w, _| {
        w.v[0] = iota();
        w.v[1] = [40; 64];
    });
    assert_eq!(r.wave.vcc(), !0u64 << 41);
}

#[test]
fn wave32_64bit_add_carries_through_vcc_lo() {
    for wave in [W32, W64] {
        let vcc = if wave == W32 { "vcc_lo" } else { "vcc" };
        let r = run(
            wave,
            &format!(
                "v_add_co_u32 v4, {vcc}, v0, v2\n\
                 v_add_co_ci_u32_e32 v5, {vcc}, v1, v3, {vcc}"
            ),
            |w, _| {
                for l in 0..64 {
                    let a = 0xffff_fff0u64 + l as u64 + (7 << 32);
                    let b = 0x20u64 + (1 << 32);
                    w.v[0][l] = a as u32;
                    w.v[1][l] = (a >> 32) as u32;
                    w.v[2][l] = b as u32;
                    w.v[3][l] = (b >> 32) as u32;
                }
            },
        );
        let lanes = wave.lanes() as usize;
        for l in 0..lanes {
            let sum = 0xffff_fff0u64 + l as u64 + (7 << 32) + 0x20 + (1 << 32);
            let got = u64::from(r.wave.v[4][l]) | u64::from(r.wave.v[5][l]) << 32;
            assert_eq!(got, sum, "{wave:?} lane {l}");
        }
    }
}

#[test]
fn wave32_saveexec_and_branch_on_exec_lo() {
    let r = run(
        W32,
        "v_cmp_lt_u32_e32 vcc_lo, v0, v1\n\
         s_and_saveexec_b32 s0, vcc_lo\n\
         v_mov_b32_e32 v2, 7\n\
         s_or_b32 exec_lo, exec_lo, s0\n\
         s_mov_b32 s1, exec_lo",
        |w, _| {
            w.v[0] = iota();
            w.v[1] = [5; 64];
        },
    );
    assert_eq!(r.wave.s[0], 0xffff_ffff, "the saved EXEC_LO");
    assert_eq!(r.wave.s[1], 0xffff_ffff);
    assert_eq!(r.wave.s[usize::from(sreg::EXEC) + 1], 0, "EXEC_HI stays 0");
    for l in 0..32 {
        assert_eq!(r.wave.v[2][l], if l < 5 { 7 } else { 0 }, "lane {l}");
    }
}

#[test]
fn m0_and_null_are_gfx11_numbered() {
    let r = run(
        W32,
        "s_mov_b32 m0, 0x1234\n\
         s_mov_b32 s2, m0\n\
         s_mov_b32 null, 5\n\
         s_add_u32 s3, null, 9",
        |_, _| {},
    );
    assert_eq!(r.wave.s[2], 0x1234);
    assert_eq!(r.wave.s[3], 9, "null reads 0 and drops writes");
}

#[test]
fn vopd_halves_read_before_either_writes() {
    let r = run(
        W32,
        "v_dual_mov_b32 v0, v1 :: v_dual_mov_b32 v1, v0\n\
         v_dual_add_f32 v4, v2, v3 :: v_dual_mul_f32 v5, v4, v6",
        |w, _| {
            w.v[0] = [1; 64];
            w.v[1] = [2; 64];
            w.v[2] = [3.0f32.to_bits(); 64];
            w.v[3] = [4.0f32.to_bits(); 64];
            w.v[4] = [10.0f32.to_bits(); 64];
            w.v[6] = [4.0f32.to_bits(); 64];
        },
    );
    assert_eq!(r.wave.v[0][0], 2);
    assert_eq!(r.wave.v[1][0], 1);
    assert_eq!(f32::from_bits(r.wave.v[4][3]), 7.0);
    assert_eq!(
        f32::from_bits(r.wave.v[5][3]),
        40.0,
        "Y reads v4 before X writes it"
    );
}

#[test]
fn dpp16_row_share_row_xmask_and_dpp8() {
    let r = run(
        W32,
        "v_mov_b32_dpp v1, v0 row_share:3 row_mask:0xf bank_mask:0xf\n\
         v_mov_b32_dpp v2, v0 row_xmask:5 row_mask:0xf bank_mask:0xf\n\
         v_mov_b32_dpp v3, v0 dpp8:[7,6,5,4,3,2,1,0]\n\
         v_add_nc_u32_dpp v4, v0, v0 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1",
        |w, _| w.v[0] = std::array::from_fn(|l| 100 + l as u32),
    );
    for l in 0..32 {
        let row = l & !15;
        assert_eq!(r.wave.v[1][l], 100 + (row + 3) as u32, "row_share lane {l}");
        assert_eq!(
            r.wave.v[2][l],
            100 + (row | ((l & 15) ^ 5)) as u32,
            "row_xmask lane {l}"
        );
        assert_eq!(
            r.wave.v[3][l],
            100 + ((l & !7) | (7 - (l & 7))) as u32,
            "dpp8 lane {l}"
        );
        let shr = if l & 15 == 0 { 0 } else { 100 + l as u32 - 1 };
        assert_eq!(r.wave.v[4][l], shr + 100 + l as u32, "row_shr lane {l}");
    }
}

#[test]
fn permlanex16_reads_the_other_row() {
    let r = run(
        W32,
        "v_permlanex16_b32 v1, v0, s0, s1\n\
         v_permlane16_b32 v2, v0, s0, s1",
        |w, _| {
            w.v[0] = std::array::from_fn(|l| 1000 + l as u32);
            // Lane i of a row selects (15 - i).
            w.s[0] = 0x89ab_cdef;
            w.s[1] = 0x0123_4567;
        },
    );
    for l in 0..32 {
        let sel = 15 - (l & 15);
        assert_eq!(
            r.wave.v[1][l],
            1000 + (((l & 16) ^ 16) + sel) as u32,
            "x16 lane {l}"
        );
        assert_eq!(
            r.wave.v[2][l],
            1000 + ((l & 16) + sel) as u32,
            "16 lane {l}"
        );
    }
}

#[test]
fn permlane64_swaps_the_halves_in_wave64() {
    let r = run(W64, "v_permlane64_b32 v1, v0", |w, _| w.v[0] = iota());
    for l in 0..64 {
        assert_eq!(r.wave.v[1][l], (l ^ 32) as u32);
    }
}

#[test]
fn true16_halves_select_and_keep_the_other_half() {
    let r = run(
        W32,
        "v_add_f16_e32 v1.h, v2.l, v3.h\n\
         v_mov_b16_e32 v4.l, v2.h",
        |w, _| {
            w.v[1] = [0x0000_5555; 64];
            // v2: hi 3.0, lo 1.0; v3: hi 2.0, lo 0.5
            w.v[2] = [0x4200_3c00; 64];
            w.v[3] = [0x4000_3800; 64];
            w.v[4] = [0xabcd_0000; 64];
        },
    );
    // 1.0 + 2.0 = 3.0 (0x4200) in the high half.
    assert_eq!(r.wave.v[1][0], 0x4200_5555);
    assert_eq!(r.wave.v[4][0], 0xabcd_4200);
}

#[test]
fn vop3_16bit_result_keeps_the_high_half() {
    let r = run(W32, "v_add_nc_u16 v1, v2, v3", |w, _| {
        w.v[1] = [0x7777_0000; 64];
        w.v[2] = [0x0000_0005; 64];
        w.v[3] = [0x0000_0006; 64];
    });
    assert_eq!(r.wave.v[1][0], 0x7777_000b);
}

#[test]
fn global_and_smem_loads_stores() {
    let mut buf = 0;
    let r = run(
        W32,
        "s_load_b64 s[2:3], s[0:1], 0x8\n\
         s_waitcnt lgkmcnt(0)\n\
         v_lshlrev_b32_e32 v1, 2, v0\n\
         global_load_b32 v2, v1, s[2:3]\n\
         s_waitcnt vmcnt(0)\n\
         v_mul_lo_u32 v2, v2, 3\n\
         global_store_b32 v1, v2, s[2:3] offset:128",
        |w, vm| buf = buffer_at_kernarg_8(w, vm, 32),
    );
    let out = r.vm.read_vec(buf + 128, 32 * 4).unwrap();
    for l in 0..32 {
        let v = u32::from_le_bytes(out[l * 4..l * 4 + 4].try_into().unwrap());
        assert_eq!(v, 3 * (l as u32 + 1), "lane {l}");
    }
}

#[test]
fn ds_cmpstore_takes_the_new_value_first() {
    let r = run(
        W32,
        "ds_store_b32 v0, v1\n\
         ds_cmpstore_rtn_b32 v3, v0, v4, v5\n\
         ds_load_b32 v6, v0",
        |w, _| {
            w.v[0] = std::array::from_fn(|l| 4 * l as u32);
            w.v[1] = std::array::from_fn(|l| (l % 2) as u32);
            // data0 (new) = 9, data1 (compare) = 1.
            w.v[4] = [9; 64];
            w.v[5] = [1; 64];
        },
    );
    for l in 0..32 {
        let old = (l % 2) as u32;
        assert_eq!(r.wave.v[3][l], old, "returned lane {l}");
        assert_eq!(
            r.wave.v[6][l],
            if old == 1 { 9 } else { 0 },
            "stored lane {l}"
        );
    }
}

#[test]
fn scratch_is_per_lane_without_flat_scratch() {
    let r = run(
        W32,
        "s_mov_b32 s102, 0x100\n\
         s_mov_b32 s103, 0x1\n\
         scratch_store_b32 off, v0, off offset:16\n\
         scratch_load_b32 v1, off, off offset:16",
        |w, _| w.v[0] = std::array::from_fn(|l| 7 * l as u32),
    );
    for l in 0..32 {
        assert_eq!(r.wave.v[1][l], 7 * l as u32);
    }
}

#[test]
fn cmpx_writes_exec_only() {
    let r = run(
        W32,
        "s_mov_b32 vcc_lo, 0x55\n\
         v_cmpx_gt_u32_e32 8, v0",
        |w, _| w.v[0] = iota(),
    );
    assert_eq!(r.wave.exec(), 0xff);
    assert_eq!(r.wave.s[usize::from(sreg::VCC)], 0x55);
}

#[test]
fn sendmsg_rtn_realtime_and_mode_setting() {
    let r = run(
        W32,
        "s_sendmsg_rtn_b64 s[0:1], sendmsg(MSG_RTN_GET_REALTIME)\n\
         s_round_mode 0x3\n\
         s_denorm_mode 0x0",
        |_, _| {},
    );
    assert_eq!(r.wave.mode & 0xff, 0x03);
}

/// `v_xor3_b32` (VOP3, GFX10+), which tinygrad's kernels use for hashes
/// (its threefry random numbers): D = S0 ^ S1 ^ S2, with an inline
/// constant and an SGPR as sources too.
#[test]
fn xor3_xors_three_sources() {
    let r = run(
        W32,
        "v_xor3_b32 v3, v0, v1, v2\n\
         v_xor3_b32 v4, s2, 0x1234, v0",
        |w, _| {
            w.v[0] = std::array::from_fn(|l| 0x0f0f_0000 | l as u32);
            w.v[1] = std::array::from_fn(|l| (l as u32) << 8);
            w.v[2] = [0xffff_0000; 64];
            w.s[2] = 0x8000_0001;
        },
    );
    for l in 0..32u32 {
        assert_eq!(
            r.wave.v[3][l as usize],
            (0x0f0f_0000 | l) ^ (l << 8) ^ 0xffff_0000,
            "lane {l}"
        );
        assert_eq!(
            r.wave.v[4][l as usize],
            0x8000_0001 ^ 0x1234 ^ (0x0f0f_0000 | l),
            "lane {l}"
        );
    }
}

/// GFX11's fused min/max (`v_maxmin_*`: min(max(S0, S1), S2);
/// `v_minmax_*`: max(min(S0, S1), S2)), which LLVM selects for clamps.
#[test]
fn maxmin_and_minmax_clamp() {
    let r = run(
        W32,
        "v_maxmin_f32 v3, v0, v1, v2\n\
         v_minmax_f32 v4, v0, v1, v2\n\
         v_maxmin_i32 v5, v0, v1, v2\n\
         v_minmax_i32 v6, v0, v1, v2\n\
         v_maxmin_u32 v7, v0, v1, v2\n\
         v_minmax_u32 v8, v0, v1, v2",
        |w, _| {
            // Floats in v0 and ints in v10.. would need two runs; the
            // float rows use the bit patterns of the floats below.
            w.v[0] = std::array::from_fn(|l| (l as f32 - 16.0).to_bits());
            w.v[1] = [(-2.5f32).to_bits(); 64];
            w.v[2] = [6.0f32.to_bits(); 64];
        },
    );
    for l in 0..32 {
        let (a, b, d) = (l as f32 - 16.0, -2.5f32, 6.0f32);
        assert_eq!(
            f32::from_bits(r.wave.v[3][l]),
            a.max(b).min(d),
            "maxmin_f32 lane {l}"
        );
        assert_eq!(
            f32::from_bits(r.wave.v[4][l]),
            a.min(b).max(d),
            "minmax_f32 lane {l}"
        );
        let (a, b, d) = (
            (l as f32 - 16.0).to_bits(),
            (-2.5f32).to_bits(),
            6.0f32.to_bits(),
        );
        let (ai, bi, di) = (a as i32, b as i32, d as i32);
        assert_eq!(
            r.wave.v[5][l] as i32,
            ai.max(bi).min(di),
            "maxmin_i32 lane {l}"
        );
        assert_eq!(
            r.wave.v[6][l] as i32,
            ai.min(bi).max(di),
            "minmax_i32 lane {l}"
        );
        assert_eq!(r.wave.v[7][l], a.max(b).min(d), "maxmin_u32 lane {l}");
        assert_eq!(r.wave.v[8][l], a.min(b).max(d), "minmax_u32 lane {l}");
    }
}

#[test]
fn an_instruction_without_semantics_faults_naming_it() {
    let e = run_in(T, W32, "v_nop\nexp mrt0 off, off, off, off", |_, _| {})
        .err()
        .expect("exp has no semantics");
    assert!(e.0.to_string().contains("exp"), "{}", e.0);
}

/// Scatters a 16x16 matrix of 16-bit elements into 8 VGPRs as WMMA's A
/// (`rows`: lane i holds row i) or B (lane j holds column j), K along the
/// registers two elements a register, low half first; lanes 16..31 hold a
/// copy of lanes 0..15.
fn scatter16(m: &[[u16; 16]; 16], rows: bool, regs: &mut [[u32; 64]]) {
    for lane in 0..32 {
        let i = lane % 16;
        for k in 0..16 {
            let e = if rows { m[i][k] } else { m[k][i] };
            let r = &mut regs[k / 2][lane];
            if k % 2 == 0 {
                *r = (*r & 0xffff_0000) | u32::from(e);
            } else {
                *r = (*r & 0xffff) | (u32::from(e) << 16);
            }
        }
    }
}

#[test]
fn wmma_f32_f16_matches_a_cpu_matrix_product() {
    use crate::float::{Rounding, f32_to_f16};
    // Values whose products and sums are exact in f32: the comparison is
    // bit-exact.
    let a: [[f32; 16]; 16] =
        std::array::from_fn(|i| std::array::from_fn(|k| ((i * 7 + k * 3) % 9) as f32 - 4.0));
    let b: [[f32; 16]; 16] =
        std::array::from_fn(|k| std::array::from_fn(|j| ((k * 5 + j) % 7) as f32 * 0.5 - 1.5));
    let cm: [[f32; 16]; 16] =
        std::array::from_fn(|i| std::array::from_fn(|j| (i * 16 + j) as f32 * 0.25));
    let h = |m: &[[f32; 16]; 16]| -> [[u16; 16]; 16] {
        std::array::from_fn(|i| std::array::from_fn(|j| f32_to_f16(m[i][j], Rounding::NearestEven)))
    };
    let r = run(
        W32,
        "v_wmma_f32_16x16x16_f16 v[16:23], v[0:7], v[8:15], v[16:23]",
        |w, _| {
            scatter16(&h(&a), true, &mut w.v[0..8]);
            scatter16(&h(&b), false, &mut w.v[8..16]);
            // C/D: element v of lane l is row 2v + l / 16, column l % 16.
            for v in 0..8 {
                for l in 0..32 {
                    w.v[16 + v][l] = cm[2 * v + l / 16][l % 16].to_bits();
                }
            }
        },
    );
    for i in 0..16 {
        for j in 0..16 {
            let want = cm[i][j] + (0..16).map(|k| a[i][k] * b[k][j]).sum::<f32>();
            let (v, l) = (i / 2, (i % 2) * 16 + j);
            assert_eq!(f32::from_bits(r.wave.v[16 + v][l]), want, "D[{i}][{j}]");
        }
    }
}

#[test]
fn wmma_i32_iu8_signedness_follows_neg_lo() {
    // A all -1 (0xff bytes), B all 2: signed A gives -32 per element,
    // unsigned 255 * 2 * 16.
    for (mods, want) in [("neg_lo:[1,1,0]", -32i32), ("", 255 * 2 * 16)] {
        let r = run(
            W32,
            &format!("v_wmma_i32_16x16x16_iu8 v[16:23], v[0:3], v[8:11], v[16:23] {mods}"),
            |w, _| {
                for k in 0..4 {
                    w.v[k] = [0xffff_ffff; 64];
                    w.v[8 + k] = [0x0202_0202; 64];
                }
                for v in 0..8 {
                    w.v[16 + v] = [0; 64];
                }
            },
        );
        assert_eq!(r.wave.v[16][0] as i32, want, "{mods}");
        assert_eq!(r.wave.v[23][31] as i32, want, "{mods}");
    }
}

#[test]
fn wmma_in_a_wave64_faults_rather_than_guess_its_layout() {
    let e = run_in(
        T,
        W64,
        "v_wmma_f32_16x16x16_f16 v[16:19], v[0:7], v[8:15], v[16:19]",
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
fn a_null_carry_out_in_wave64_does_not_reach_exec() {
    let r = run(
        W64,
        "v_mad_u64_u32 v[1:2], null, s2, s3, v[4:5]\n\
         v_mov_b32_e32 v6, 1",
        |w, _| {
            w.s[2] = 3;
            w.s[3] = 5;
            w.v[4] = [7; 64];
        },
    );
    assert_eq!(r.wave.exec(), u64::MAX);
    assert_eq!(r.wave.v[1][63], 22);
    assert_eq!(r.wave.v[6][63], 1);
}
