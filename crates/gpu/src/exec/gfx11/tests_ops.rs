//! The GFX11 operations of [`super::ops`] and the renamed ones of
//! [`super::names`] against values computed by hand, on snippets assembled
//! by `llvm-mc-22 -mcpu=gfx1100`.

use crate::exec::testing::run_in_ok;
use crate::exec::wave::sreg;
use crate::mem::Perms;
use rocjitsu_isa::{Target, WaveSize};

const T: Target = Target::Gfx1100;
const W32: WaveSize = WaveSize::Wave32;

fn run(
    asm: &str,
    setup: impl FnMut(&mut crate::exec::Wave, &crate::mem::Vm),
) -> crate::exec::testing::Run {
    run_in_ok(T, W32, asm, setup)
}

/// Two 16-bit values packed (low first).
fn pk(lo: u16, hi: u16) -> u32 {
    u32::from(lo) | (u32::from(hi) << 16)
}

// f16 and bf16 bit patterns.
const H_0_5: u16 = 0x3800;
const H_1: u16 = 0x3c00;
const H_1_5: u16 = 0x3e00;
const H_2: u16 = 0x4000;
const H_3: u16 = 0x4200;
const H_5: u16 = 0x4500;
const H_M0_25: u16 = 0xb400;

#[test]
fn dot2_f16_f16_and_bf16_bf16() {
    let r = run(
        "v_dot2_f16_f16 v0.l, v1, v2, v3.l\n\
         v_dot2_f16_f16 v0.h, -v1, v2, v3.h\n\
         v_dot2_f16_f16 v4.l, |v1|, v2, v3.h\n\
         v_dot2_bf16_bf16 v5.l, v6, v7, v8.l\n\
         v_dot2_bf16_bf16 v5.h, v6, -v7, v8.l",
        |w, _| {
            w.v[0] = [0xdead_beef; 64];
            w.v[1] = [pk(H_1_5, H_2); 64];
            w.v[2] = [pk(H_2, H_M0_25); 64];
            w.v[3] = [pk(H_0_5, H_5); 64];
            w.v[4] = [0x1234_0000; 64];
            // bf16: (1.5, 3.0) . (2.0, 0.5) + 1.0
            w.v[6] = [pk(0x3fc0, 0x4040); 64];
            w.v[7] = [pk(0x4000, 0x3f00); 64];
            w.v[8] = [pk(0x3f80, 0); 64];
        },
    );
    // 1.5*2 + 2*-0.25 + 0.5 = 3; -(1.5*2) - 2*-0.25 + 5 = 2.5 (0x4100).
    assert_eq!(r.wave.v[0][0], pk(H_3, 0x4100));
    // |1.5, 2| . (2, -0.25) + 5 = 7.5 (0x4780); the high half kept.
    assert_eq!(r.wave.v[4][0], pk(0x4780, 0x1234));
    // 3 + 1.5 + 1 = 5.5 (0x40b0); -3 - 1.5 + 1 = -3.5 (0xc060).
    assert_eq!(r.wave.v[5][0], pk(0x40b0, 0xc060));
}

#[test]
fn dot_iu8_and_iu4_take_signedness_from_neg_lo() {
    let r = run(
        "v_dot4_i32_iu8 v10, v1, v2, v3\n\
         v_dot4_i32_iu8 v11, v1, v2, v3 neg_lo:[1,1,0]\n\
         v_dot4_i32_iu8 v12, v1, v2, v3 neg_lo:[1,0,0]\n\
         v_dot4_i32_iu8 v13, v1, v2, v4\n\
         v_dot4_i32_iu8 v14, v1, v2, v4 clamp\n\
         v_dot8_i32_iu4 v15, v5, v6, 0\n\
         v_dot8_i32_iu4 v16, v5, v6, 0 neg_lo:[1,1,0]\n\
         v_dot8_i32_iu4 v17, v5, v6, 0 neg_lo:[1,0,0]\n\
         v_dot8_i32_iu4 v18, v5, v6, 0 neg_lo:[0,1,0]",
        |w, _| {
            // Bytes (low first) 0x01, 0x7f, 0x80, 0xff and 0x02, 0xff,
            // 0x03, 0x80.
            w.v[1] = [0xff80_7f01; 64];
            w.v[2] = [0x8003_ff02; 64];
            w.v[3] = [10; 64];
            w.v[4] = [0x7fff_ffff; 64];
            // Nibbles (low first) 3, 0xf and 5, 0xf.
            w.v[5] = [0xf3; 64];
            w.v[6] = [0xf5; 64];
        },
    );
    let v = |i: usize| r.wave.v[i][0];
    // u8 . u8: 2 + 127*255 + 128*3 + 255*128 = 65411.
    assert_eq!(v(10), 65411 + 10);
    // i8 . i8: 2 - 127 - 384 + 128 = -381.
    assert_eq!(v(11) as i32, -381 + 10);
    // i8 . u8: 2 + 32385 - 384 - 128 = 31875.
    assert_eq!(v(12), 31875 + 10);
    // Wraps without clamp, saturates with it.
    assert_eq!(v(13), 0x7fff_ffffu32.wrapping_add(65411));
    assert_eq!(v(14), 0x7fff_ffff);
    // u4: 3*5 + 15*15 = 240; i4 . i4: 15 + (-1)(-1) = 16; i4 . u4: 15 -
    // 15 = 0; u4 . i4: 15 - 15 = 0.
    assert_eq!([v(15), v(16), v(17), v(18)], [240, 16, 0, 0]);
}

#[test]
fn maxmin_minmax_f16_and_16bit_fma_literals() {
    let r = run(
        "v_maxmin_f16 v0.l, v1.l, v1.h, v2.l\n\
         v_minmax_f16 v0.h, v1.l, v1.h, v2.h\n\
         v_fmamk_f16 v3.l, v4.l, 0x4000, v4.h\n\
         v_fmaak_f16 v3.h, v4.l, v4.h, 0x4000",
        |w, _| {
            w.v[1] = [pk(H_1, H_3); 64];
            w.v[2] = [pk(H_5, H_0_5); 64];
            w.v[4] = [pk(H_1_5, H_0_5); 64];
        },
    );
    // min(max(1, 3), 5) = 3; max(min(1, 3), 0.5) = 1.
    assert_eq!(r.wave.v[0][0], pk(H_3, H_1));
    // 1.5 * 2 + 0.5 = 3.5 (0x4300); 1.5 * 0.5 + 2 = 2.75 (0x4180).
    assert_eq!(r.wave.v[3][0], pk(0x4300, 0x4180));
}

#[test]
fn dot2acc_accumulates_into_the_destination() {
    let r = run("v_dot2acc_f32_f16 v0, v1, v2", |w, _| {
        w.v[0] = [1.0f32.to_bits(); 64];
        w.v[1] = [pk(H_1_5, H_2); 64];
        w.v[2] = [pk(H_2, H_M0_25); 64];
    });
    assert_eq!(f32::from_bits(r.wave.v[0][0]), 3.5);
}

#[test]
fn cmp_t_is_true_in_every_active_lane() {
    let r = run(
        "s_mov_b32 exec_lo, 0xf0f0\n\
         v_cmp_t_f32_e32 vcc_lo, v0, v1\n\
         v_cmp_t_f64_e64 s4, v[0:1], v[2:3]\n\
         v_cmpx_t_f16_e32 v0.l, v1.l\n\
         s_mov_b32 s5, exec_lo",
        |w, _| {
            // NaN operands: true all the same.
            w.v[0] = [0x7fc0_0000; 64];
        },
    );
    assert_eq!(r.wave.s[usize::from(sreg::VCC)], 0xf0f0);
    assert_eq!(r.wave.s[4], 0xf0f0);
    assert_eq!(r.wave.s[5], 0xf0f0);
}

#[test]
fn packing_and_16bit_conversions() {
    let r = run(
        "v_cvt_pk_i16_f32 v0, v1, v2\n\
         v_cvt_pk_u16_f32 v3, v2, v4\n\
         v_cvt_pk_i16_f32 v5, v6, v6\n\
         v_cvt_i32_i16_e32 v7, v8.h\n\
         v_cvt_u32_u16_e32 v9, v8.h\n\
         v_cvt_pk_norm_i16_f32 v10, v11, v12",
        |w, _| {
            w.v[1] = [40000.0f32.to_bits(); 64];
            w.v[2] = [(-3.7f32).to_bits(); 64];
            w.v[4] = [70000.5f32.to_bits(); 64];
            w.v[6] = [f32::NAN.to_bits(); 64];
            w.v[8] = [0x8001_0005; 64];
            w.v[11] = [1.0f32.to_bits(); 64];
            w.v[12] = [(-0.5f32).to_bits(); 64];
        },
    );
    let v = |i: usize| r.wave.v[i][0];
    assert_eq!(v(0), 0xfffd_7fff, "saturated 32767, truncated -3");
    assert_eq!(v(3), 0xffff_0000, "negative to 0, saturated 65535");
    assert_eq!(v(5), 0, "NaN to 0");
    assert_eq!(v(7), 0xffff_8001);
    assert_eq!(v(9), 0x8001);
    // snorm: 1.0 -> 32767, -0.5 -> -16384 (round to nearest).
    assert_eq!(v(10), 0xc000_7fff);
}

#[test]
fn dx9_zero_rules_and_mullit() {
    let inf = f32::INFINITY.to_bits();
    let r = run(
        "v_fma_dx9_zero_f32 v0, v1, v2, v3\n\
         v_fma_dx9_zero_f32 v4, v5, v6, v3\n\
         v_mul_dx9_zero_f32_e32 v7, v1, v8\n\
         v_fmac_dx9_zero_f32_e32 v9, v1, v2\n\
         v_mullit_f32 v10, v5, v6, v3\n\
         v_mullit_f32 v11, v5, v12, v3\n\
         v_mullit_f32 v13, v5, v6, v1\n\
         v_mullit_f32 v14, v1, v2, v3",
        |w, _| {
            w.v[1] = [0; 64];
            w.v[2] = [inf; 64];
            w.v[3] = [2.0f32.to_bits(); 64];
            w.v[5] = [3.0f32.to_bits(); 64];
            w.v[6] = [4.0f32.to_bits(); 64];
            w.v[8] = [f32::NAN.to_bits(); 64];
            w.v[9] = [5.0f32.to_bits(); 64];
            w.v[12] = [f32::NEG_INFINITY.to_bits(); 64];
        },
    );
    let f = |i: usize| f32::from_bits(r.wave.v[i][0]);
    assert_eq!(f(0), 2.0, "0 * inf = 0");
    assert_eq!(f(4), 14.0);
    assert_eq!(r.wave.v[7][0], 0, "0 * NaN = +0");
    assert_eq!(f(9), 5.0, "the accumulator plus 0 * inf");
    assert_eq!(f(10), 12.0);
    assert_eq!(f(11), -f32::MAX, "S1 = -inf");
    assert_eq!(f(13), -f32::MAX, "S2 <= 0");
    assert_eq!(f(14), 0.0, "0 * inf = 0");
}

#[test]
fn m0_relative_moves_and_swaps() {
    let r = run(
        "s_mov_b32 m0, 2\n\
         v_movrels_b32_e32 v0, v4\n\
         v_movreld_b32_e32 v8, v1\n\
         v_movrelsd_b32_e32 v20, v4\n\
         s_mov_b32 m0, 0x30001\n\
         v_movrelsd_2_b32_e32 v30, v4\n\
         v_swaprel_b32 v40, v50\n\
         v_swap_b16 v60.h, v61.l",
        |w, _| {
            for i in 0..8 {
                w.v[4 + i] = [100 + i as u32; 64];
            }
            w.v[1] = [7; 64];
            w.v[43] = [0x4343; 64];
            w.v[51] = [0x5151; 64];
            w.v[60] = [0xaaaa_bbbb; 64];
            w.v[61] = [0xcccc_dddd; 64];
        },
    );
    let v = |i: usize| r.wave.v[i][0];
    assert_eq!(v(0), 102, "v0 = v[4 + 2]");
    assert_eq!(v(10), 7, "v[8 + 2] = v1");
    assert_eq!(v(22), 102, "v[20 + 2] = v[4 + 2]");
    assert_eq!(v(33), 101, "v[30 + 3] = v[4 + 1]");
    assert_eq!((v(43), v(51)), (0x5151, 0x4343), "v[40 + 3] <-> v[50 + 1]");
    assert_eq!((v(60), v(61)), (0xdddd_bbbb, 0xcccc_aaaa));
}

#[test]
fn scalar_pack_hl_and_movrelsd_2() {
    let r = run(
        "s_pack_hl_b32_b16 s0, s1, s2\n\
         s_mov_b32 m0, 0x20003\n\
         s_movrelsd_2_b32 s10, s4",
        |w, _| {
            w.s[1] = 0x1234_5678;
            w.s[2] = 0x9abc_def0;
            w.s[7] = 0x7777;
        },
    );
    assert_eq!(r.wave.s[0], 0xdef0_1234);
    assert_eq!(r.wave.s[12], 0x7777, "s[10 + 2] = s[4 + 3]");
}

/// 1.0f32.
const ONE: u32 = 0x3f80_0000;

#[test]
fn addtid_loads_and_stores_and_the_new_atomics() {
    let mut buf = 0;
    let r = run(
        "global_load_addtid_b32 v1, s[2:3] offset:8\n\
         s_waitcnt vmcnt(0)\n\
         v_add_nc_u32_e32 v1, 1000, v1\n\
         global_store_addtid_b32 v1, s[2:3] offset:512\n\
         global_atomic_csub_u32 v3, v0, v2, s[4:5] glc\n\
         global_atomic_cmpswap_f32 v6, v0, v[8:9], s[6:7] glc\n\
         s_waitcnt vmcnt(0)",
        |w, vm| {
            buf = vm.alloc(4096, Perms::RW);
            let data: Vec<u8> = (0..300u32).flat_map(|i| i.to_le_bytes()).collect();
            vm.fill(buf, &data).unwrap();
            let csub = buf + 2048;
            let cmp = buf + 3072;
            // csub: 10 per dword, minus lane l.
            let d: Vec<u8> = (0..32u32).flat_map(|_| 10u32.to_le_bytes()).collect();
            vm.fill(csub, &d).unwrap();
            // cmpswap_f32: -0.0 equals the compare value +0.0 as floats.
            let d: Vec<u8> = (0..32u32)
                .flat_map(|l| if l % 2 == 0 { 0x8000_0000u32 } else { ONE }.to_le_bytes())
                .collect();
            vm.fill(cmp, &d).unwrap();
            w.s[2] = buf as u32;
            w.s[3] = (buf >> 32) as u32;
            w.s[4] = csub as u32;
            w.s[5] = (csub >> 32) as u32;
            w.s[6] = cmp as u32;
            w.s[7] = (cmp >> 32) as u32;
            w.v[0] = std::array::from_fn(|l| 4 * l as u32);
            w.v[2] = std::array::from_fn(|l| 3 * l as u32);
            w.v[8] = [3.5f32.to_bits(); 64];
            w.v[9] = [0; 64];
        },
    );
    let word = |a: u64| u32::from_le_bytes(r.vm.read_vec(a, 4).unwrap().try_into().unwrap());
    for l in 0..32u64 {
        // Lane l loaded dword 2 + l.
        assert_eq!(r.wave.v[1][l as usize], 1000 + 2 + l as u32, "lane {l}");
        assert_eq!(word(buf + 512 + 4 * l), 1002 + l as u32, "stored lane {l}");
        assert_eq!(r.wave.v[3][l as usize], 10, "csub returns the old value");
        let want = 10u32.saturating_sub(3 * l as u32);
        assert_eq!(word(buf + 2048 + 4 * l), want, "csub lane {l}");
        let old = if l % 2 == 0 { 0x8000_0000 } else { ONE };
        assert_eq!(r.wave.v[6][l as usize], old);
        let want = if l % 2 == 0 { 3.5f32.to_bits() } else { ONE };
        assert_eq!(word(buf + 3072 + 4 * l), want, "cmpswap_f32 lane {l}");
    }
}

#[test]
fn format_accesses_read_the_gfx11_format_field() {
    let mut buf = 0;
    let r = run(
        "buffer_load_format_xy v[0:1], off, s[4:7], 0\n\
         tbuffer_load_format_xy v[2:3], off, s[4:7], 0 format:[BUF_FMT_8_8_UINT] offset:4\n\
         buffer_load_d16_format_xy v4, off, s[4:7], 0\n\
         s_waitcnt vmcnt(0)",
        |w, vm| {
            buf = vm.alloc(4096, Perms::RW);
            vm.fill(buf, &0xffff_0000u32.to_le_bytes()).unwrap();
            vm.fill(buf + 4, &0x0000_0302u32.to_le_bytes()).unwrap();
            w.s[4] = buf as u32;
            w.s[5] = (buf >> 32) as u32 & 0xffff;
            w.s[6] = 4096;
            // FORMAT 23, BUF_FMT_16_16_UNORM, at bits 18:12.
            w.s[7] = 23 << 12;
        },
    );
    let v = |i: usize| r.wave.v[i][0];
    assert_eq!((v(0), v(1)), (0, 1.0f32.to_bits()), "16_16_UNORM");
    assert_eq!((v(2), v(3)), (2, 3), "8_8_UINT from the instruction");
    assert_eq!(v(4), 0x3c00_0000, "d16: 0.0 and 1.0 as f16");
}
