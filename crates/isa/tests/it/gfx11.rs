//! GFX11 (gfx1100, gfx1151) instructions with the text LLVM 22 prints for
//! them (`llvm-mc-22 -triple amdgcn -mcpu=gfx1100 -show-encoding` for the
//! bytes, its disassembler for the text, with `-mattr=+wavefrontsize64` for
//! the wave64 column): one of each encoding, the operands whose width follows
//! the wave size, and printing rules found by the random differential.

use rocjitsu_isa::{Target, WaveSize, decode_in};

/// Bytes (hex), wave32 text, wave64 text (`None`: invalid in wave64).
const CASES: &[(&str, &str, Option<&str>)] = &[
    (
        "c108827c",
        "v_cmp_lt_i32_e32 vcc_lo, -1, v4",
        Some("v_cmp_lt_i32_e32 vcc, -1, v4"),
    ),
    (
        "016a00d706020200",
        "v_add_co_u32 v1, vcc_lo, s6, v1",
        Some("v_add_co_u32 v1, vcc, s6, v1"),
    ),
    (
        "910487bf",
        "s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(SALU_CYCLE_1)",
        None,
    ),
    ("070089bf", "s_waitcnt vmcnt(0) lgkmcnt(0)", None),
    // The SReg_32_XM0 destinations of the lane reads.
    (
        "c23060d789daac00",
        "v_readlane_b32 -2/*Invalid immediate*/, 9/*Invalid immediate*/, ttmp1",
        None,
    ),
    (
        "eb05fa7e",
        "v_readfirstlane_b32 m0/*Invalid register, operand has 'SReg_32_XM0' register class*/, v235",
        None,
    ),
    // v_nop and v_pipeflush ignore src0, a DPP marker included.
    ("e900007e", "v_nop", None),
    ("fa36007e", "v_pipeflush", None),
    // The tid-addressed global ops take EXEC as saddr without a note.
    (
        "b695a6deae0d7ec6",
        "global_store_addtid_b32 v13, exec offset:-2634 slc",
        None,
    ),
    // v_fmac's DPP form prints a src1 of 255 as its field value, with no
    // literal dword.
    (
        "05002bd5fafe150401e400ff",
        "v_fmac_f32_e64_dpp v5, v1, 0xff quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
        None,
    ),
    (
        "050036d5fafe150401e400ff",
        "v_fmac_f16_e64_dpp v5.l, v1.l, 0xff quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
        None,
    ),
    (
        "05002bd5e9fe15040188c6fa",
        "v_fmac_f32_e64_dpp v5, v1, 0xff dpp8:[0,1,2,3,4,5,6,7]",
        None,
    ),
    (
        "05002bd5fae0010401e400ff",
        "v_fmac_f32_e64_dpp v5, v1, 0xf0 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
        None,
    ),
    // Below 256, LLVM reads the DPP8 selector of some VOP1/VOP2/VOP3P
    // opcodes as a source operand: inline integers and f32 constants print
    // as their values' low 24 bits; other opcodes and values print raw.
    (
        "eaba590488a10000",
        "v_dot2acc_f32_f16_dpp v44, v136, v221 dpp8:[1,4,0,0,0,0,0,0] fi:1",
        None,
    ),
    (
        "e90e587e88c10000",
        "v_cvt_u32_f32_dpp v44, v136 dpp8:[7,7,7,7,7,7,7,7]",
        None,
    ),
    (
        "e916587e88f80000",
        "v_cvt_f32_f16_dpp v44, v8.h dpp8:[3,0,6,4,7,5,0,1]",
        None,
    ),
    (
        "e916587e88d10000",
        "v_cvt_f32_f16_dpp v44, v8.h dpp8:[1,2,3,0,0,0,0,0]",
        None,
    ),
    (
        "050021cce9040e1c88d00000",
        "v_fma_mixlo_f16_e64_dpp v5, v136, v2, v3 op_sel_hi:[1,1,0] dpp8:[0,6,7,7,7,7,7,7]",
        None,
    ),
    // A selector of 255 reads the literal dword that follows.
    (
        "e944d87febff000052372cf5",
        "v_ceil_f32_dpp v236, v235 dpp8:[2,2,5,3,3,0,3,1]",
        None,
    ),
    (
        "050021cce9040e1c88ff000052372cf5",
        "v_fma_mixlo_f16_e64_dpp v5, v136, v2, v3 op_sel_hi:[1,1,0] dpp8:[2,2,5,3,3,0,3,1]",
        None,
    ),
    (
        "050003d5e904020001c10000",
        "v_add_f32_e64_dpp v5, v1, v2 dpp8:[1,0,3,0,0,0,0,0]",
        None,
    ),
    // The DPP forms of the dot products type their literals as 16-bit
    // scalars.
    (
        "05401accfafe0d1c01e400ff0000803f",
        "v_dot2_f32_bf16_e64_dpp v5, v1, lit(0x3f800000), v3 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
        None,
    ),
    (
        "054013ccfafe0d1c01e400ff78563412",
        "v_dot2_f32_f16_e64_dpp v5, v1, 0x12345678, v3 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
        None,
    ),
    (
        "054013ccfafe0d1c01e400ff0000803f",
        "v_dot2_f32_f16_e64_dpp v5, v1, lit(0x3f800000), v3 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
        None,
    ),
    (
        "004040cc0821021c",
        "v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]",
        Some("v_wmma_f32_16x16x16_f16 v[0:3], v[8:15], v[16:23], v[0:3]"),
    ),
    (
        "010003d5ff04022078563412",
        "v_add_f32_e64 v1, neg(0x12345678), v2",
        None,
    ),
    // A constant LLVM marks `lit(...)` is negated with `-`.
    (
        "010003d5ff04022040000000",
        "v_add_f32_e64 v1, -lit(0x40), v2",
        None,
    ),
    (
        "4dc022cc4fff4dd4f7ffb0f6",
        "v_fma_mixhi_f16 v77, v79, -lit(0xf6b0fff7), -v19 op_sel_hi:[0,1,1] clamp",
        None,
    ),
    // The GFX9 VOP3P layout of the fma_mix opcodes, which LLVM also decodes.
    (
        "0140a0d302070e84",
        "v_fma_mix_f32 v1, v2, v3, -v3 op_sel_hi:[0,0,1]",
        None,
    ),
    (
        "01480ecc0207125c",
        "v_pk_fma_f16 v1, v2, v3, v4 op_sel:[1,0,0] neg_lo:[0,1,0]",
        None,
    ),
    (
        "fa02027e021b00ff",
        "v_mov_b32_dpp v1, v2 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf",
        None,
    ),
    (
        "010003d5e906020002773905",
        "v_add_f32_e64_dpp v1, v2, v3 dpp8:[7,6,5,4,3,2,1,0]",
        None,
    ),
    ("82070264", "v_add_f16_e32 v1.l, v2.h, v3.l", None),
    (
        "100052dc02000001",
        "global_load_b32 v1, v2, s[0:1] offset:16",
        None,
    ),
    (
        "0c4050e002014103",
        "buffer_load_b32 v1, v2, s[4:7], s3 offen offset:12 glc",
        None,
    ),
    (
        "040f6cf004000210",
        "image_sample v[0:3], v[4:5], s[8:15], s[16:19] dmask:0xf dim:SQ_RSRC_IMG_2D",
        None,
    ),
    ("0f0800f800010203", "exp mrt0 v0, v1, v2, v3 done", None),
    (
        "000100cd01050e04",
        "v_interp_p10_f32 v0, v1, v2, v3 wait_exp:1",
        None,
    ),
    ("010001ce", "lds_param_load v1, attr0.x wait_vdst:1", None),
    ("040000d801020000", "ds_add_u32 v1, v2 offset:4", None),
    ("010004f4100000f8", "s_load_b64 s[0:1], s[2:3], 0x10", None),
    (
        "834d80be",
        "s_sendmsg_rtn_b64 s[0:1], sendmsg(MSG_RTN_GET_REALTIME)",
        None,
    ),
];

/// VOPD exists in wave32 only.
const WAVE32_ONLY: &[(&str, &str)] = &[(
    "0105c8c8040b0200",
    "v_dual_mul_f32 v0, v1, v2 :: v_dual_add_f32 v3, v4, v5",
)];

fn bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

fn text(target: Target, wave: WaveSize, b: &[u8]) -> Option<String> {
    let inst = decode_in(target, wave, b).ok()?;
    assert_eq!(inst.len(), b.len(), "{target} {wave:?}: length of {inst}");
    assert_eq!(inst.encode(), b, "{target} {wave:?}: re-encoding of {inst}");
    Some(inst.to_string())
}

#[test]
fn texts_match_llvm_in_both_wave_sizes() {
    for target in [Target::Gfx1100, Target::Gfx1151] {
        for &(hex, w32, w64) in CASES {
            let b = bytes(hex);
            assert_eq!(
                text(target, WaveSize::Wave32, &b).as_deref(),
                Some(w32),
                "{target} wave32 {hex}"
            );
            assert_eq!(
                text(target, WaveSize::Wave64, &b).as_deref(),
                Some(w64.unwrap_or(w32)),
                "{target} wave64 {hex}"
            );
        }
        for &(hex, w32) in WAVE32_ONLY {
            let b = bytes(hex);
            assert_eq!(text(target, WaveSize::Wave32, &b).as_deref(), Some(w32));
            assert_eq!(text(target, WaveSize::Wave64, &b), None, "{hex} in wave64");
        }
    }
}

/// The GFX9 decoder's entry point refuses GFX11 targets instead of
/// misreading their code.
#[test]
fn gfx9_entry_refuses_gfx11() {
    let e = rocjitsu_isa::decode(Target::Gfx1100, &bytes("c108827c")).unwrap_err();
    assert!(e.to_string().contains("gfx1100"), "{e}");
}
