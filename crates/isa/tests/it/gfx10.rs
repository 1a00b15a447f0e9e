//! gfx1030 and gfx1010 (GFX10) instructions with the text LLVM 22 prints
//! for them (its disassembler): the rules GFX10 has where its layouts are
//! GFX11's (m0 and null numbered 124 and 125, `s_waitcnt`'s split vmcnt,
//! `sendmsg` texts, `s_waitcnt_depctr` without hold_cnt on gfx1010), its
//! own forms (SDWA, VINTRP, EXP's compr and vm, VOP3 interpolation) and
//! its memory layouts (SMEM, FLAT with lds, MUBUF/MTBUF, MIMG with NSA).

use rocjitsu_isa::{Target, WaveSize, decode_in};

/// A case: dwords, and LLVM's text on gfx1030 in wave32 and wave64 and on
/// gfx1010 in wave32 (`None`: LLVM prints `<invalid>`).
type Case = (
    &'static [u32],
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
);

const CASES: &[Case] = &[
    // m0 is 124, null 125 (GFX11 swaps them).
    (&[0xbe80037c], Some("s_mov_b32 s0, m0"), None, None),
    (&[0xbe80037d], Some("s_mov_b32 s0, null"), None, None),
    // s_waitcnt: vmcnt in bits 3:0 and 15:14.
    (&[0xbf8c3f70], Some("s_waitcnt vmcnt(0)"), None, None),
    (&[0xbf8cc07f], Some("s_waitcnt lgkmcnt(0)"), None, None),
    // sendmsg: message, GS operation and stream; a named message ignores
    // the other bits.
    (
        &[0xbf900022],
        Some("s_sendmsg sendmsg(MSG_GS, GS_OP_EMIT, 0)"),
        None,
        None,
    ),
    (
        &[0xbf91b232],
        Some("s_sendmsghalt sendmsg(MSG_GS, GS_OP_EMIT_CUT, 2)"),
        None,
        None,
    ),
    (
        &[0xbfa30000],
        Some(
            "s_waitcnt_depctr depctr_hold_cnt(0) depctr_sa_sdst(0) depctr_va_vdst(0) depctr_va_sdst(0) depctr_va_ssrc(0) depctr_va_vcc(0) depctr_vm_vsrc(0)",
        ),
        None,
        Some(
            "s_waitcnt_depctr depctr_sa_sdst(0) depctr_va_vdst(0) depctr_va_sdst(0) depctr_va_ssrc(0) depctr_va_vcc(0) depctr_vm_vsrc(0)",
        ),
    ),
    // SMEM: glc 16, dlc 14; s_atc_probe takes them unprinted; gfx1010's
    // returning atomics warn twice of a misaligned tuple.
    (
        &[0xf4000102, 0xfa000010],
        Some("s_load_dword s4, s[4:5], 0x10"),
        None,
        None,
    ),
    (
        &[0xf4980102, 0x06000010],
        Some("s_atc_probe 4, s[4:5], s3 offset:0x10"),
        None,
        None,
    ),
    (
        &[0xf6850142, 0x06000020],
        None,
        None,
        Some(
            "s_atomic_cmpswap_x2 s[4:7], s[4:5], s3 offset:0x20 glc ; Warning: SGPR_128: scalar reg isn't aligned 5Warning: SGPR_128: scalar reg isn't aligned 5",
        ),
    ),
    // SDWA.
    (
        &[0x7e0a02f9, 0x00860603],
        Some("v_mov_b32_sdwa v5, s3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD"),
        None,
        None,
    ),
    (
        &[0x060a0cf9, 0x16162602],
        Some(
            "v_add_f32_sdwa v5, -v2, -v6 clamp dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD",
        ),
        None,
        None,
    ),
    (
        &[0x500a0cf9, 0x06060602],
        Some(
            "v_add_co_ci_u32_sdwa v5, vcc_lo, v2, v6, vcc_lo dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD",
        ),
        Some(
            "v_add_co_ci_u32_sdwa v5, vcc, v2, v6, vcc dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD",
        ),
        None,
    ),
    (
        &[0x7c0a0cf9, 0x06068402],
        Some("v_cmp_lg_f32_sdwa s4, v2, v6 src0_sel:DWORD src1_sel:DWORD"),
        Some("v_cmp_lg_f32_sdwa s[4:5], v2, v6 src0_sel:DWORD src1_sel:DWORD"),
        None,
    ),
    (
        &[0x7c2a0cf9, 0x06060002],
        Some("v_cmpx_lg_f32_sdwa v2, v6 src0_sel:DWORD src1_sel:DWORD"),
        None,
        None,
    ),
    // VINTRP (0b110010), EXP with compr and vm, VOP3 interpolation.
    (
        &[0xc8148701],
        Some("v_interp_p1_f32_e32 v5, v1, attr33.w"),
        None,
        None,
    ),
    (
        &[0xc8168702],
        Some("v_interp_mov_f32_e32 v5, p0, attr33.w"),
        None,
        None,
    ),
    (
        &[0xf800140f, 0x03020100],
        Some("exp mrt0 v0, v0, v1, v1 compr vm"),
        None,
        None,
    ),
    (
        &[0xd75a0005, 0x0402010a],
        Some("v_interp_p2_f16 v5, v0, attr10.x, v0 high"),
        None,
        None,
    ),
    // FLAT and MUBUF loads to LDS (no vdata).
    (
        &[0xdc30a000, 0x007d000a],
        Some("global_load_dword v[10:11], off lds"),
        None,
        None,
    ),
    (
        &[0xe0310000, 0x7d01020a],
        Some("buffer_load_dword off, s[4:7], null lds"),
        None,
        None,
    ),
    (
        &[0xe030f005, 0x7dc1020a],
        Some(
            "buffer_load_dword v[2:3], v[10:11], s[4:7], null idxen offen offset:5 glc slc dlc tfe",
        ),
        None,
        None,
    ),
    // MTBUF: opcode bit 3 in the second dword.
    (
        &[0xe8088000, 0x0321140a],
        Some("tbuffer_load_format_d16_x v20, off, s[4:7], s3 dlc"),
        None,
        None,
    ),
    // MIMG: NSA address lists; the default variant where LLVM has none.
    (
        &[0xf0800f02, 0x0002140a, 0x04030201],
        Some("image_sample  v20, [v10, v1, v2], s[8:15], s[0:3] dmask:0xf dim:SQ_RSRC_IMG_1D"),
        None,
        None,
    ),
    (
        &[0xf0b80f02, 0x0002140a, 0x04030201],
        Some(
            "image_sample_c_b_cl  v[20:23], [v10, v1, v2, v3], s[8:15], s[0:3] dmask:0xf dim:SQ_RSRC_IMG_1D",
        ),
        None,
        None,
    ),
    (
        &[0xf0000f00, 0x4002ff0a],
        Some("image_load v255, v10, s[8:15] dmask:0xf dim:SQ_RSRC_IMG_1D a16"),
        None,
        None,
    ),
];

fn check(t: Target, wave: WaveSize, words: &[u32], want: Option<&str>) {
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let n = bytes.len();
    bytes.extend_from_slice(&[0; 16]);
    match (decode_in(t, wave, &bytes), want) {
        (Ok(i), Some(text)) => {
            assert_eq!(i.to_string(), text, "{t} {wave:?} {words:08x?}");
            assert_eq!(i.len(), n, "{t} {wave:?} {words:08x?}");
            assert_eq!(i.encode(), bytes[..n], "{t} {wave:?} {words:08x?}");
        }
        (Err(_), None) => {}
        (got, want) => panic!("{t} {wave:?} {words:08x?}: ours {got:?}, LLVM {want:?}"),
    }
}

/// Each case on gfx1030 (wave32, wave64) and gfx1010 (wave32); a `None`
/// in the wave64 or gfx1010 column means LLVM prints what it prints on
/// gfx1030 in wave32, except where the gfx1030 column is `None` (the
/// instruction is gfx1010's alone).
#[test]
fn matches_llvm() {
    for &(words, w32, w64, g1010) in CASES {
        check(Target::Gfx1030, WaveSize::Wave32, words, w32);
        check(Target::Gfx1030, WaveSize::Wave64, words, w64.or(w32));
        check(Target::Gfx1010, WaveSize::Wave32, words, g1010.or(w32));
    }
}
