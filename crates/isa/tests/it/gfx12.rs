//! gfx1201 (GFX12) instructions with the text LLVM 22 prints for them (its
//! disassembler): a word of each encoding GFX12 lays out anew, and the
//! printing rules the differential found (the split wait counters,
//! `s_wait_alu`, barriers, GFX12's `hwreg` and `sendmsg` names, th/scope,
//! fake-16-bit operands, `byte_sel`, SWMMAC's `index_key`, the 0xD3 words
//! read as VIMAGE before the GFX9-layout fma_mix), and 16-bit operands in
//! LLVM's real-true16 mode beside its default fake-16-bit one.

use rocjitsu_isa::gfx12::{decode, decode_mode};
use rocjitsu_isa::{Target, True16, WaveSize, decode_with};

/// Bytes (hex) and LLVM's text (the same in both wave sizes).
const CASES: &[(&str, &str)] = &[
    ("0300c0bf", "s_wait_loadcnt 0x3"),
    ("feff88bf", "s_wait_alu 0xfffe"),
    ("0000c8bf", "s_wait_loadcnt_dscnt 0x0"),
    ("c14e80be", "s_barrier_signal -1"),
    ("fe4e80be", "s_barrier_signal src_lds_direct"),
    (
        "fe0080be",
        "s_mov_b32 s0, src_lds_direct/*Invalid register, operand has 'SReg_32' register class*/",
    ),
    ("ffff94bf", "s_barrier_wait 0xffff"),
    ("01f884b8", "s_getreg_b32 s4, hwreg(HW_REG_WAVE_MODE)"),
    ("0300b6bf", "s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)"),
    (
        "910487bf",
        "s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(SALU_CYCLE_1)",
    ),
    ("01ff008078563412", "s_add_co_u32 s0, s1, 0x12345678"),
    // SMEM: th/scope/nv/scale_offset, a prefetch, and a 96-bit TTMP tuple
    // (LLVM reads it as TTMP_256).
    (
        "0201f0f510000007",
        "s_load_b32 s4, s[4:5], s3 offset:0x10 scale_offset th:TH_LOAD_BYPASS scope:SCOPE_SYS nv",
    ),
    ("028104f420000006", "s_prefetch_inst s[4:5], 0x20, s3, 4"),
    (
        "020100f4000000f9",
        "s_load_b32 s4, s[4:5], 0x0 scale_offset",
    ),
    (
        "42bd00f4100000f8",
        "s_load_b96 ttmp[8:15]/*Invalid register, operand has 'SReg_96' register class*/, s[4:5], 0x10 ; Warning: TTMP_256: scalar reg isn't aligned 9",
    ),
    // VOP1/VOP2: GFX12's 16-bit operands are fake-16-bit (v0..v127).
    ("0203027e", "v_mov_b32_e32 v1, v2"),
    (
        "79f5bd64",
        "v_add_f16_e32 v94, v121, v250/*Invalid register, operand has 'VGPR_32_Lo128' register class*/",
    ),
    // VOP3: byte_sel of the fp8 conversions, the v_s_* destinations'
    // SReg_32_XEXEC class.
    (
        "2a216cd7ee439005",
        "v_cvt_sr_bf8_f32 v42, |v238|, s33 byte_sel:1",
    ),
    (
        "7ef884d6165ea122",
        "v_s_rcp_f32 exec_lo/*Invalid register, operand has 'SReg_32_XEXEC' register class*/, -s22 clamp",
    ),
    // VSCRATCH, VBUFFER, VSAMPLE (96 bits).
    (
        "67e585ed68e9338b87fe1a1a",
        "scratch_load_b128 v[104:107], v135, s103 offset:1710846 scale_offset th:TH_LOAD_LU",
    ),
    (
        "c81605c70a0bf81f75a15337",
        "buffer_load_b32 v10, off, s[4:7], s72 offset:3625889 th:0x7 scope:SCOPE_DEV nv ; Warning: SGPR_128: scalar reg isn't aligned 5",
    ),
    (
        "8f6787e4949e3f28e7d86851",
        "image_sample_l v148, [v231, v216, v104, v81], v[207:214]/*Invalid register, operand has 'SReg_256_XNULL' register class*/, s[80:83] dmask:0x2 dim:SQ_RSRC_IMG_2D_MSAA_ARRAY unorm th:TH_LOAD_BYPASS scope:SCOPE_SYS nv tfe",
    ),
    // 0xD3 with bit 23: VIMAGE where it decodes, else the GFX9-layout
    // fma_mix.
    (
        "cf1ea1d3af81fd007c891cad",
        "image_atomic_min_flt v175, [v124, v137, v28, v173], 64/*Invalid immediate*/ dmask:0xe dim:SQ_RSRC_IMG_2D_MSAA_ARRAY th:TH_ATOMIC_CASCADE_NT scope:SCOPE_SYS nv a16 tfe",
    ),
    ("0500a0d301050904", "v_fma_mix_f32 v5, v1, 2, v2"),
    // A gather whose data would pass v255: LLVM keeps the default variant
    // (four addresses).
    (
        "262e06e4ff142200859062b4",
        "image_msaa_load v[255:258], [v133, v144, v98, v180], v[10:17]/*Invalid register, operand has 'SReg_256_XNULL' register class*/ dim:SQ_RSRC_IMG_2D_MSAA unorm th:TH_LOAD_HT d16",
    ),
];

fn bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn texts_match_llvm() {
    for &(hex, want) in CASES {
        let b = bytes(hex);
        for wave64 in [false, true] {
            let inst = decode(Target::Gfx1201, wave64, &b)
                .unwrap_or_else(|e| panic!("{hex} (wave64 {wave64}): {e}"));
            assert_eq!(inst.to_string(), want, "{hex}");
            assert_eq!(inst.len(), b.len(), "{hex}: length");
            assert_eq!(inst.encode(), b, "{hex}: re-encoding");
        }
    }
}

/// Bytes and LLVM's text in wave32 and in wave64 (`None`: invalid).
const WAVE_CASES: &[(&str, Option<&str>, Option<&str>)] = &[
    // v_cndmask_b32_dpp closes src1's abs bar after the carry mask.
    (
        "fafcbf036284922c",
        Some(
            "v_cndmask_b32_dpp v223, -v98, |v254, vcc_lo| quad_perm:[0,1,0,2] row_mask:0x2 bank_mask:0xc",
        ),
        Some(
            "v_cndmask_b32_dpp v223, -v98, |v254, vcc| quad_perm:[0,1,0,2] row_mask:0x2 bank_mask:0xc",
        ),
    ),
    // SWMMAC: index_key, its operands halving in wave64, and an index_key
    // bit wave64 alone accepts.
    (
        "654851ccf67dc63d",
        Some(
            "v_swmmac_f32_16x16x32_bf16 v[101:108], v[246:249], v[62:69], v113 index_key:1 neg_lo:[1,0,0]",
        ),
        Some(
            "v_swmmac_f32_16x16x32_bf16 v[101:104], v[246:247], v[62:65], v113 index_key:1 neg_lo:[1,0,0]",
        ),
    ),
    (
        "26d854cc03d33e5d",
        None,
        Some(
            "v_swmmac_i32_16x16x32_iu8 v[38:41], v3, v[105:106], v79 index_key:3 neg_lo:[0,1,0] clamp",
        ),
    ),
];

#[test]
fn wave_size_texts_match_llvm() {
    for &(hex, w32, w64) in WAVE_CASES {
        let b = bytes(hex);
        for (wave64, want) in [(false, w32), (true, w64)] {
            match (decode(Target::Gfx1201, wave64, &b), want) {
                (Ok(inst), Some(want)) => {
                    assert_eq!(inst.to_string(), want, "{hex} (wave64 {wave64})");
                    assert_eq!(inst.encode(), b, "{hex}: re-encoding");
                }
                (Err(_), None) => {}
                (got, want) => panic!("{hex} (wave64 {wave64}): {got:?}, LLVM {want:?}"),
            }
        }
    }
}

/// Bytes, the text LLVM 22 prints with `+real-true16` (in both wave
/// sizes) and in its default mode for gfx1201 (`None`: invalid there).
/// The first word is Triton's (`v_mov_b16_e32 v28.h, v9.l`); the others:
/// each 16-bit operand kind (VOP1/VOP2 `.h` destinations and sources, a
/// 16-bit mac, a literal, DPP16, VOP3 with op_sel, VINTERP).
const T16_CASES: &[(&str, &str, Option<&str>)] = &[
    ("0939387f", "v_mov_b16_e32 v28.h, v9.l", None),
    (
        "81050a64",
        "v_add_f16_e32 v5.l, v1.h, v2.l",
        Some(
            "v_add_f16_e32 v5, v129/*Invalid register, operand has 'VS_32_Lo128' register class*/, v2",
        ),
    ),
    ("01050b6d", "v_fmac_f16_e32 v5.h, v1.l, v2.h", None),
    ("0415067f", "v_cvt_f16_f32_e32 v3.h, v4", None),
    (
        "8417067e",
        "v_cvt_f32_f16_e32 v3, v4.h",
        Some(
            "v_cvt_f32_f16_e32 v3, v132/*Invalid register, operand has 'VS_32_Lo128' register class*/",
        ),
    ),
    (
        "055032d501050200",
        "v_add_f16_e64 v5.h, v1.l, v2.h op_sel:[0,1,1]",
        Some("v_add_f16_e64 v5, v1, v2"),
    ),
    (
        "052848d601050e04",
        "v_fma_f16 v5.l, v1.h, v2.l, v3.h op_sel:[1,0,1,0]",
        Some("v_fma_f16 v5, v1, v2, v3 op_sel:[1,0,1,0]"),
    ),
    (
        "010811d702070200",
        "v_pack_b32_f16 v1, v2.h, v3.l op_sel:[1,0,0]",
        Some("v_pack_b32_f16 v1, v2, v3 op_sel:[1,0,0]"),
    ),
    (
        "fa040a6481b100ff",
        "v_add_f16_dpp v5.l, v1.h, v2.l quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
        Some(
            "v_add_f16_dpp v5, v129/*Invalid register, operand has 'VGPR_32_Lo128' register class*/, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
        ),
    ),
    ("f2fefe6b", "v_mul_f16_e32 v127.h, 1.0, v127.l", None),
    (
        "012802cd02071204",
        "v_interp_p10_f16_f32 v1, v2.h, v3, v4.h op_sel:[1,0,1,0] wait_exp:0",
        Some("v_interp_p10_f16_f32 v1, v2, v3, v4 op_sel:[1,0,1,0] wait_exp:0"),
    ),
    (
        "37aadc62",
        "v_max_num_f16_e32 v110.l, s55, v85.l",
        Some("v_max_num_f16_e32 v110, s55, v85"),
    ),
    ("ff04026b34120000", "v_mul_f16_e32 v1.h, 0x1234, v2.l", None),
];

#[test]
fn real_true16_texts_match_llvm() {
    for &(hex, real, default) in T16_CASES {
        let b = bytes(hex);
        for wave64 in [false, true] {
            let inst = decode_mode(Target::Gfx1201, wave64, true, &b)
                .unwrap_or_else(|e| panic!("{hex} (wave64 {wave64}, real-true16): {e}"));
            assert!(inst.real_true16());
            assert_eq!(inst.to_string(), real, "{hex} (real-true16)");
            assert_eq!(inst.len(), b.len(), "{hex}: length");
            assert_eq!(inst.encode(), b, "{hex}: re-encoding");
            let wave = if wave64 {
                WaveSize::Wave64
            } else {
                WaveSize::Wave32
            };
            let any = decode_with(Target::Gfx1201, wave, True16::Real, &b).expect("decodes");
            assert_eq!(any.to_string(), real, "{hex}: decode_with");
            match (decode(Target::Gfx1201, wave64, &b), default) {
                (Ok(i), Some(want)) => {
                    assert!(!i.real_true16());
                    assert_eq!(i.to_string(), want, "{hex} (default mode)");
                    assert_eq!(i.encode(), b, "{hex}: re-encoding (default mode)");
                }
                (Err(_), None) => {}
                (got, want) => panic!("{hex} (default mode): {got:?}, LLVM {want:?}"),
            }
        }
    }
}

/// The mode's LLVM feature: `+real-true16` on gfx1201 only (GFX11's
/// default is real-true16 already; GFX9 and GFX10 have no such operands).
#[test]
fn real_true16_feature() {
    assert_eq!(True16::Real.llvm_feature(Target::Gfx1201), "+real-true16");
    assert_eq!(True16::LlvmDefault.llvm_feature(Target::Gfx1201), "");
    assert_eq!(True16::Real.llvm_feature(Target::Gfx1100), "");
    assert_eq!(True16::Real.llvm_feature(Target::Gfx942), "");
}

/// Words of no encoding (top bits 0b111111), and other families' targets,
/// are refused by name rather than misread.
#[test]
fn undecoded_encodings_are_refused() {
    let e = decode(Target::Gfx1201, false, &bytes("ffffffff00000000")).unwrap_err();
    assert!(e.to_string().contains("gfx1201"), "{e}");
    let e = decode(Target::Gfx1100, false, &bytes("0300c0bf")).unwrap_err();
    assert!(e.to_string().contains("gfx1100"), "{e}");
}
