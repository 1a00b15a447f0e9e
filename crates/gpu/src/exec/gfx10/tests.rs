//! GFX10 semantics against values computed by hand, on snippets assembled
//! by `llvm-mc-22 -mcpu=gfx1030` (and gfx1010) in wave32 and wave64.

use crate::exec::testing::{Run, buffer_at_kernarg_8, iota, run_in_ok};
use crate::exec::wave::sreg;
use crate::mem::Perms;
use rocjitsu_isa::{Target, WaveSize};

const T: Target = Target::Gfx1030;
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
fn m0_and_null_are_gfx10_numbered_in_every_encoding() {
    // GFX10: m0 is 124 and null 125 (GFX11 swaps them). SOP1, VOP1, VOP3
    // and SDWA sources, a SOP2 null source and a VOP3 null destination.
    let r = run(
        W32,
        "s_mov_b32 m0, 0xbeef0001\n\
         s_mov_b32 s2, m0\n\
         s_add_u32 s3, null, 9\n\
         v_mov_b32_e32 v1, m0\n\
         v_add_nc_u32_e64 v2, m0, 1\n\
         v_mov_b32_sdwa v3, m0 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1\n\
         v_cmp_eq_u32_e64 null, v0, 0",
        |w, _| w.v[0] = iota(),
    );
    assert_eq!(r.wave.s[2], 0xbeef_0001);
    assert_eq!(r.wave.s[3], 9, "null reads 0");
    assert_eq!(r.wave.s[usize::from(sreg::M0)], 0xbeef_0001, "m0 kept");
    assert_eq!(r.wave.v[1][5], 0xbeef_0001);
    assert_eq!(r.wave.v[2][5], 0xbeef_0002);
    assert_eq!(r.wave.v[3][5], 0xbeef);
}

#[test]
fn sdwa_source_selects_sign_extension_and_destination_selects() {
    let r = run(
        W32,
        "v_add_nc_u32_sdwa v2, sext(v0), v1 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1 src1_sel:WORD_0\n\
         v_add_nc_u32_sdwa v3, v0, v1 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:WORD_1\n\
         v_mov_b32_sdwa v4, v0 dst_sel:BYTE_0 dst_unused:UNUSED_SEXT src0_sel:BYTE_1\n\
         v_mov_b32_sdwa v5, v0 dst_sel:BYTE_2 dst_unused:UNUSED_PAD src0_sel:BYTE_0\n\
         v_and_b32_sdwa v6, s0, v1 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD",
        |w, _| {
            // Byte 1 is 0x80 | lane (negative as a byte), byte 0 0x7f.
            w.v[0] = std::array::from_fn(|l| 0x1234_807f | (l as u32) << 8);
            w.v[1] = std::array::from_fn(|l| 0xabcd_0005 + l as u32);
            w.v[2] = [0x1111_2222; 64];
            w.s[0] = 0xf0f0_1234;
        },
    );
    for l in 0..32u32 {
        let b1 = 0x80 | l;
        // sext(0x80 | l) + (5 + l), the low 16 bits into word 1, word 0 kept.
        let sum = (b1 as u8 as i8 as i32 as u32).wrapping_add(5 + l);
        assert_eq!(
            r.wave.v[2][l as usize],
            (sum & 0xffff) << 16 | 0x2222,
            "v2 lane {l}"
        );
        assert_eq!(r.wave.v[3][l as usize], b1 + 0xabcd, "v3 lane {l}");
        // Byte 0 written, bits 31:8 the sign of bit 7 (set: 0x80 | l).
        assert_eq!(r.wave.v[4][l as usize], 0xffff_ff00 | b1, "v4 lane {l}");
        assert_eq!(r.wave.v[5][l as usize], 0x7f << 16, "v5 lane {l}");
        assert_eq!(
            r.wave.v[6][l as usize],
            0xf0f0 & (0xabcd_0005 + l),
            "v6 lane {l}"
        );
    }
}

#[test]
fn sdwa_compare_writes_its_sdst_or_vcc() {
    for wave in [W32, W64] {
        let (sd, vcc) = if wave == W32 {
            ("s4", "vcc_lo")
        } else {
            ("s[4:5]", "vcc")
        };
        let r = run(
            wave,
            &format!(
                "v_cmp_gt_u32_sdwa {sd}, v0, v1 src0_sel:BYTE_0 src1_sel:DWORD\n\
                 v_cmp_eq_u16_sdwa {vcc}, v0, v1 src0_sel:WORD_1 src1_sel:WORD_0"
            ),
            |w, _| {
                // Byte 0 the lane, word 1 7.
                w.v[0] = std::array::from_fn(|l| 0x0007_0000 | 0x1200 | l as u32);
                w.v[1] = std::array::from_fn(|l| if l % 3 == 0 { 7 } else { 0x10007 + 1 });
                w.s[5] = 0x5555;
                w.s[usize::from(sreg::VCC) + 1] = 0xdead;
            },
        );
        let n = wave.lanes() as usize;
        let gt: u64 = (0..n)
            .filter(|&l| l as u32 > r_v1(l))
            .map(|l| 1u64 << l)
            .sum();
        let eq: u64 = (0..n).filter(|&l| l % 3 == 0).map(|l| 1u64 << l).sum();
        if wave == W32 {
            assert_eq!(u64::from(r.wave.s[4]), gt);
            assert_eq!(r.wave.s[5], 0x5555, "the SGPR after a wave32 mask is kept");
            assert_eq!(u64::from(r.wave.s[usize::from(sreg::VCC)]), eq);
            assert_eq!(r.wave.s[usize::from(sreg::VCC) + 1], 0xdead, "vcc_hi kept");
        } else {
            assert_eq!(u64::from(r.wave.s[4]) | u64::from(r.wave.s[5]) << 32, gt);
            assert_eq!(r.wave.vcc(), eq);
        }
    }

    fn r_v1(l: usize) -> u32 {
        if l.is_multiple_of(3) { 7 } else { 0x10008 }
    }
}

#[test]
fn vop3_compares_write_their_sdst_and_cmpx_writes_exec_only() {
    let r = run(
        W64,
        "v_cmp_lt_i32_e64 s[6:7], v0, -3\n\
         v_cmp_gt_i32_e32 vcc, 60, v0\n\
         v_cmpx_gt_u32_e32 v1, v0\n\
         v_mov_b32_e32 v2, 1",
        |w, _| {
            w.v[0] = std::array::from_fn(|l| (l as i32 - 10) as u32);
            w.v[1] = [20; 64];
        },
    );
    assert_eq!(r.wave.s[6], 0x7f, "lanes 0..6: l - 10 < -3");
    assert_eq!(r.wave.s[7], 0);
    // v_cmpx writes EXEC (lanes where 20 > l - 10 unsigned: 10..29) and
    // leaves VCC as the compare before it wrote it (60 > l - 10: all).
    assert_eq!(r.wave.vcc(), u64::MAX);
    let exec: u64 = (10..30).map(|l| 1u64 << l).sum();
    assert_eq!(r.wave.exec(), exec);
    for l in 0..64 {
        assert_eq!(r.wave.v[2][l], u32::from(exec >> l & 1 != 0), "lane {l}");
    }
}

#[test]
fn wave32_vcc_lo_carries_and_selects() {
    let r = run(
        W32,
        "v_add_co_u32 v4, vcc_lo, v0, v2\n\
         v_add_co_ci_u32_e32 v5, vcc_lo, v1, v3, vcc_lo\n\
         v_cmp_gt_u32_e32 vcc_lo, 16, v0\n\
         v_cndmask_b32_e64 v6, 1, 2, vcc_lo\n\
         s_and_saveexec_b32 s0, vcc_lo\n\
         v_mov_b32_e32 v7, 9\n\
         s_mov_b32 exec_lo, s0",
        |w, _| {
            for l in 0..64 {
                w.v[0][l] = 0xffff_fff0u32.wrapping_add(l as u32) & 0x1f;
                w.v[1][l] = 7;
                w.v[2][l] = 0xffff_fff8;
                w.v[3][l] = 1;
            }
            w.s[usize::from(sreg::VCC) + 1] = 0xdead;
        },
    );
    for l in 0..32usize {
        let a = u64::from(r_v0(l)) | 7 << 32;
        let b = 0xffff_fff8u64 | 1 << 32;
        let sum = a + b;
        assert_eq!(r.wave.v[4][l], sum as u32, "lane {l}");
        assert_eq!(r.wave.v[5][l], (sum >> 32) as u32, "lane {l}");
        // vcc_lo: 16 > v0 (selects src1, 2).
        let lt = r_v0(l) < 16;
        assert_eq!(r.wave.v[6][l], if lt { 2 } else { 1 }, "lane {l}");
        assert_eq!(r.wave.v[7][l], if lt { 9 } else { 0 }, "lane {l}");
    }
    assert_eq!(r.wave.s[usize::from(sreg::VCC) + 1], 0xdead, "vcc_hi kept");
    assert_eq!(r.wave.s[0], 0xffff_ffff, "the saved EXEC_LO");
    assert_eq!(r.wave.s[usize::from(sreg::EXEC) + 1], 0, "EXEC_HI stays 0");

    fn r_v0(l: usize) -> u32 {
        0xffff_fff0u32.wrapping_add(l as u32) & 0x1f
    }
}

#[test]
fn dpp16_and_dpp8_lane_moves() {
    for wave in [W32, W64] {
        let r = run(
            wave,
            "v_mov_b32_dpp v1, v0 row_share:3 row_mask:0xf bank_mask:0xf\n\
             v_mov_b32_dpp v2, v0 row_xmask:5 row_mask:0xf bank_mask:0xf\n\
             v_mov_b32_dpp v3, v0 dpp8:[7,6,5,4,3,2,1,0]\n\
             v_add_nc_u32_dpp v4, v0, v0 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1\n\
             v_mov_b32_dpp v5, v0 row_ror:4 row_mask:0x5 bank_mask:0xf",
            |w, _| {
                w.v[0] = std::array::from_fn(|l| 100 + l as u32);
                w.v[5] = [7; 64];
            },
        );
        for l in 0..wave.lanes() as usize {
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
            // bound_ctrl: an out-of-row source reads 0.
            let shr = if l & 15 == 0 { 0 } else { 100 + l as u32 - 1 };
            assert_eq!(r.wave.v[4][l], shr + 100 + l as u32, "row_shr lane {l}");
            // Rows 0 and 2 written (row_mask 0x5), rows 1 and 3 kept.
            let ror = 100 + (row | ((l + 12) & 15)) as u32;
            let want = if (l / 16) % 2 == 0 { ror } else { 7 };
            assert_eq!(r.wave.v[5][l], want, "row_ror lane {l}");
        }
    }
}

#[test]
fn s_waitcnt_vscnt_orders_a_store_before_a_load() {
    let mut buf = 0;
    let r = run(
        W32,
        "s_mov_b32 m0, 0x77\n\
         v_lshlrev_b32_e32 v1, 2, v0\n\
         global_store_dword v1, v2, s[0:1] offset:-8\n\
         s_waitcnt_vscnt null, 0x0\n\
         global_load_dword v3, v1, s[0:1] offset:-8\n\
         s_waitcnt vmcnt(0) lgkmcnt(0)\n\
         s_waitcnt_vscnt null, 0x1",
        |w, vm| {
            buf = vm.alloc(4096, Perms::RW);
            let base = buf + 8;
            w.s[0] = base as u32;
            w.s[1] = (base >> 32) as u32;
            w.v[0] = iota();
            w.v[2] = std::array::from_fn(|l| 0x5000 + l as u32);
        },
    );
    for l in 0..32 {
        assert_eq!(r.wave.v[3][l], 0x5000 + l as u32, "lane {l}");
    }
    let out = r.vm.read_vec(buf, 4).unwrap();
    assert_eq!(u32::from_le_bytes(out.try_into().unwrap()), 0x5000);
    assert_eq!(
        r.wave.s[usize::from(sreg::M0)],
        0x77,
        "null (125) is not m0"
    );
}

#[test]
fn smem_and_buffer_fields_at_gfx10_positions() {
    let mut buf = 0;
    let r = run(
        W32,
        "s_load_dwordx2 s[2:3], s[0:1], 0x8 glc dlc\n\
         s_waitcnt lgkmcnt(0)\n\
         s_mov_b32 s6, -1\n\
         s_mov_b32 s7, 0x31016fac\n\
         s_mov_b32 s4, s2\n\
         s_and_b32 s5, s3, 0xffff\n\
         v_lshlrev_b32_e32 v1, 2, v0\n\
         buffer_load_dword v2, v1, s[4:7], 0 offen offset:4 glc\n\
         s_waitcnt vmcnt(0)\n\
         v_mul_lo_u32 v2, v2, 3\n\
         buffer_store_dword v2, v1, s[4:7], 0 offen offset:256",
        |w, vm| buf = buffer_at_kernarg_8(w, vm, 40),
    );
    let out = r.vm.read_vec(buf + 256, 32 * 4).unwrap();
    for l in 0..32 {
        let v = u32::from_le_bytes(out[l * 4..l * 4 + 4].try_into().unwrap());
        // The dword after lane l's (offset:4) is l + 2.
        assert_eq!(v, 3 * (l as u32 + 2), "lane {l}");
    }
}

#[test]
fn gfx1010_madmk_takes_its_literal_as_the_multiplier() {
    let r = run_in_ok(
        Target::Gfx1010,
        W64,
        "v_madmk_f32 v2, v0, 0x40400000, v1\n\
         v_madak_f32 v3, v0, v1, 0x41200000",
        |w, _| {
            w.v[0] = std::array::from_fn(|l| (l as f32).to_bits());
            w.v[1] = [0.5f32.to_bits(); 64];
        },
    );
    for l in 0..64 {
        assert_eq!(
            f32::from_bits(r.wave.v[2][l]),
            l as f32 * 3.0 + 0.5,
            "lane {l}"
        );
        assert_eq!(
            f32::from_bits(r.wave.v[3][l]),
            l as f32 * 0.5 + 10.0,
            "lane {l}"
        );
    }
}
