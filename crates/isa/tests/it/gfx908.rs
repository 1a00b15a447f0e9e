//! gfx908 (CDNA1) instructions with the text LLVM 22 prints for them (its
//! disassembler): the encodings gfx908 keeps from GFX9's graphics targets
//! (VINTRP, interpolation in VOP3, EXP, image sampling and gathers), the
//! bit gfx90a reads as `acc` that is `tfe` here, AGPR data named against
//! the VGPR-only classes of memory instructions, and the absence of
//! gfx90a's alignment rule for VGPR/AGPR tuples.

use rocjitsu_isa::{Target, decode};

/// Dwords and LLVM's text.
const CASES: &[(&[u32], &str)] = &[
    // VOP3 interpolation: the attribute (src0) prints after src1, `high`
    // is its bit 8, op_sel comes after clamp, and the sources name
    // VGPR_32.
    (
        &[0xd2770004, 0x00020100],
        "v_interp_p2_f16 v4, v0, attr0.x, s0/*Invalid register, operand has 'VGPR_32' register class*/ high",
    ),
    (
        &[0xd277980e, 0x0001800a],
        "v_interp_p2_f16 v14, 64/*Invalid immediate*/, attr10.x, s0/*Invalid register, operand has 'VGPR_32' register class*/ clamp op_sel:[1,0,0,0]",
    ),
    (
        &[0xd2750004, 0x00000605],
        "v_interp_p1lv_f16 v4, s3/*Invalid register, operand has 'VGPR_32' register class*/, attr5.x, s0/*Invalid register, operand has 'VGPR_32' register class*/",
    ),
    (
        &[0xd2720004, 0x00000405],
        "v_interp_mov_f32_e64 v4, p0, attr5.x",
    ),
    // VINTRP.
    (&[0xd4148701], "v_interp_p1_f32_e32 v5, v1, attr33.w"),
    (&[0xd4168702], "v_interp_mov_f32_e32 v5, p0, attr33.w"),
    // EXP: compressed sources repeat vsrc0 and vsrc1.
    (
        &[0xc400140f, 0x03020100],
        "exp mrt0 v0, v0, v1, v1 compr vm",
    ),
    (&[0xc4000bff, 0x04030201], "exp param31 v1, v2, v3, v4 done"),
    // MUBUF: tfe adds a dword, which may run past v255.
    (
        &[0xe0504000, 0x0080ff0b],
        "buffer_load_dword v[255:256], off, s[0:3], s0 glc tfe",
    ),
    (
        &[0xe0740000, 0x03800a0b],
        "buffer_store_dwordx2 v[10:12], off, s[0:3], s3 tfe",
    ),
    // MIMG: samplers with their opcode's vaddr width; a gather keeps its
    // two-dword form when four dwords (five with tfe) would pass v255.
    (
        &[0xf0c00f00, 0x00020a14],
        "image_sample_o v[10:13], v[20:21], s[8:15], s[0:3] dmask:0xf",
    ),
    (
        &[0xf1000f00, 0x0001fd14],
        "image_gather4 v[253:254], v20, s[4:11], s[0:3] dmask:0xf",
    ),
    (
        &[0xf1010f00, 0x0000fd14],
        "image_gather4 v[253:254], v20, s[0:7], s[0:3] dmask:0xf tfe",
    ),
    // FLAT: AGPR data is named against VGPR_32; bit 25 (gfx90a's scc) is
    // ignored.
    (
        &[0xde708000, 0x00801402],
        "global_store_dword v2, a20/*Invalid register, operand has 'VGPR_32' register class*/, s[0:1]",
    ),
    (
        &[0xdc508000, 0x2880000a],
        "global_load_dword a40/*Invalid register, operand has 'VGPR_32' register class*/, v10, s[0:1]",
    ),
    // DPP: 64-bit operations take any control; row_newbcast is gfx90a's.
    (
        &[0x7e0830fa, 0xff015002],
        "v_ceil_f64_dpp v[4:5], v[2:3]  /* row_newbcast/row_share is not supported on ASICs earlier than GFX90A/GFX10 */ row_mask:0xf bank_mask:0xf",
    ),
    (
        &[0x7e0830fa, 0xff00e402],
        "v_ceil_f64_dpp v[4:5], v[2:3] quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
    ),
    // No alignment rule for tuples; MFMA results in AGPRs.
    (
        &[0xd2800005, 0x00020f07],
        "v_add_f64 v[5:6], v[7:8], v[7:8]",
    ),
    (
        &[0xd3c40001, 0x04060302],
        "v_mfma_f32_32x32x2f32 a[1:16], v2, v1, a[1:16]",
    ),
    (
        &[0xd3c00100, 0x04020100],
        "v_mfma_f32_32x32x1f32 a[0:31], v0, v0, a[0:31] cbsz:1",
    ),
    // VOP2 opcode 4: gfx90a's v_fmac_f64 is gfx908's v_mul_legacy_f32.
    (&[0x08020501], "v_mul_legacy_f32_e32 v1, v1, v2"),
];

#[test]
fn matches_llvm() {
    for &(words, want) in CASES {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let inst = decode(Target::Gfx908, &bytes)
            .unwrap_or_else(|e| panic!("{words:08x?}: {e} (LLVM: {want})"));
        assert_eq!(inst.to_string(), want, "{words:08x?}");
        assert_eq!(inst.len(), bytes.len(), "{words:08x?}");
        assert_eq!(inst.encode(), bytes, "{words:08x?}");
    }
}

/// Words LLVM 22 rejects on gfx908 and accepts on gfx90a, and the reverse.
#[test]
fn target_specific_words() {
    // v_pk_fma_f32 (packed FP32) and v_mfma_f64_16x16x4f64 are gfx90a's.
    for w in [[0xd3b00000u32, 0x04020100], [0xd3ee0000, 0x04020100]] {
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert!(decode(Target::Gfx908, &bytes).is_err(), "{w:08x?}");
        assert!(decode(Target::Gfx90a, &bytes).is_ok(), "{w:08x?}");
    }
    // VINTRP and EXP exist on gfx908 only.
    for w in [[0xd4148701u32, 0], [0xc400140f, 0x03020100]] {
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert!(decode(Target::Gfx908, &bytes).is_ok(), "{w:08x?}");
        assert!(decode(Target::Gfx90a, &bytes).is_err(), "{w:08x?}");
    }
}
