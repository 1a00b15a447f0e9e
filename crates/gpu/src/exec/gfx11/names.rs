//! GFX11 mnemonics and the GFX9 mnemonics of the same operation.
//!
//! RDNA3 renamed many instructions without changing what they compute
//! (`v_add_nc_u32` is GFX9's `v_add_u32`, `global_load_b32` is
//! `global_load_dword`, `ds_load_2addr_b32` is `ds_read2_b32`, ...). The
//! lowering looks up the semantic function of the GFX9 name, so that both
//! families execute the same code; operations whose semantics differ have
//! their own functions ([`super::sem`]) and are looked up before this map.

use std::borrow::Cow;

/// Exact renames (GFX11 name, GFX9 name).
const RENAMES: &[(&str, &str)] = &[
    // SOP1 / SOP2
    ("s_and_not1_b32", "s_andn2_b32"),
    ("s_and_not1_b64", "s_andn2_b64"),
    ("s_or_not1_b32", "s_orn2_b32"),
    ("s_or_not1_b64", "s_orn2_b64"),
    ("s_and_not1_saveexec_b64", "s_andn2_saveexec_b64"),
    ("s_or_not1_saveexec_b64", "s_orn2_saveexec_b64"),
    ("s_and_not0_saveexec_b64", "s_andn1_saveexec_b64"),
    ("s_or_not0_saveexec_b64", "s_orn1_saveexec_b64"),
    ("s_and_not1_wrexec_b64", "s_andn2_wrexec_b64"),
    ("s_and_not0_wrexec_b64", "s_andn1_wrexec_b64"),
    ("s_ctz_i32_b32", "s_ff1_i32_b32"),
    ("s_ctz_i32_b64", "s_ff1_i32_b64"),
    ("s_clz_i32_u32", "s_flbit_i32_b32"),
    ("s_clz_i32_u64", "s_flbit_i32_b64"),
    ("s_cls_i32", "s_flbit_i32"),
    ("s_cls_i32_i64", "s_flbit_i32_i64"),
    // VOP1 / VOP2 / VOP3
    ("v_add_nc_u32", "v_add_u32"),
    ("v_sub_nc_u32", "v_sub_u32"),
    ("v_subrev_nc_u32", "v_subrev_u32"),
    ("v_add_nc_i32", "v_add_i32"),
    ("v_sub_nc_i32", "v_sub_i32"),
    ("v_add_nc_u16", "v_add_u16"),
    ("v_sub_nc_u16", "v_sub_u16"),
    ("v_add_nc_i16", "v_add_i16"),
    ("v_sub_nc_i16", "v_sub_i16"),
    ("v_add_co_ci_u32", "v_addc_co_u32"),
    ("v_sub_co_ci_u32", "v_subb_co_u32"),
    ("v_subrev_co_ci_u32", "v_subbrev_co_u32"),
    ("v_ctz_i32_b32", "v_ffbl_b32"),
    ("v_clz_i32_u32", "v_ffbh_u32"),
    ("v_cls_i32", "v_ffbh_i32"),
    ("v_cvt_floor_i32_f32", "v_cvt_flr_i32_f32"),
    ("v_cvt_nearest_i32_f32", "v_cvt_rpi_i32_f32"),
    ("v_mad_co_u64_u32", "v_mad_u64_u32"),
    ("v_cvt_pk_rtz_f16_f32", "v_cvt_pkrtz_f16_f32"),
    // The accumulator is made the third source (see `is_mac`).
    ("v_fmac_f16", "v_fma_f16"),
    ("v_mad_co_i64_i32", "v_mad_i64_i32"),
    ("v_cmp_t_f16", "v_cmp_tru_f16"),
    ("v_cmp_t_f32", "v_cmp_tru_f32"),
    ("v_cmp_t_f64", "v_cmp_tru_f64"),
    ("v_cmpx_t_f16", "v_cmpx_tru_f16"),
    ("v_cmpx_t_f32", "v_cmpx_tru_f32"),
    ("v_cmpx_t_f64", "v_cmpx_tru_f64"),
    ("v_cvt_pk_norm_i16_f32", "v_cvt_pknorm_i16_f32"),
    ("v_cvt_pk_norm_u16_f32", "v_cvt_pknorm_u16_f32"),
    ("v_cvt_pk_norm_i16_f16", "v_cvt_pknorm_i16_f16"),
    ("v_cvt_pk_norm_u16_f16", "v_cvt_pknorm_u16_f16"),
    // The accumulator is the destination (see `is_mac`).
    ("v_dot2acc_f32_f16", "v_dot2c_f32_f16"),
    ("v_mul_dx9_zero_f32", "v_mul_legacy_f32"),
    // The literal K is placed by the lowering (`lower_vop`).
    ("v_fmamk_f16", "v_fma_f16"),
    ("v_fmaak_f16", "v_fma_f16"),
    // DS
    ("ds_load_2addr_b32", "ds_read2_b32"),
    ("ds_load_2addr_b64", "ds_read2_b64"),
    ("ds_load_2addr_stride64_b32", "ds_read2st64_b32"),
    ("ds_load_2addr_stride64_b64", "ds_read2st64_b64"),
    ("ds_store_2addr_b32", "ds_write2_b32"),
    ("ds_store_2addr_b64", "ds_write2_b64"),
    ("ds_store_2addr_stride64_b32", "ds_write2st64_b32"),
    ("ds_store_2addr_stride64_b64", "ds_write2st64_b64"),
    ("ds_storexchg_rtn_b32", "ds_wrxchg_rtn_b32"),
    ("ds_storexchg_rtn_b64", "ds_wrxchg_rtn_b64"),
    ("ds_storexchg_2addr_rtn_b32", "ds_wrxchg2_rtn_b32"),
    ("ds_storexchg_2addr_rtn_b64", "ds_wrxchg2_rtn_b64"),
    (
        "ds_storexchg_2addr_stride64_rtn_b32",
        "ds_wrxchg2st64_rtn_b32",
    ),
    (
        "ds_storexchg_2addr_stride64_rtn_b64",
        "ds_wrxchg2st64_rtn_b64",
    ),
    ("ds_cmpstore_b32", "ds_cmpst_b32"),
    ("ds_cmpstore_b64", "ds_cmpst_b64"),
    ("ds_cmpstore_rtn_b32", "ds_cmpst_rtn_b32"),
    ("ds_cmpstore_rtn_b64", "ds_cmpst_rtn_b64"),
    ("ds_cmpstore_f32", "ds_cmpst_f32"),
    ("ds_cmpstore_f64", "ds_cmpst_f64"),
    ("ds_cmpstore_rtn_f32", "ds_cmpst_rtn_f32"),
    ("ds_cmpstore_rtn_f64", "ds_cmpst_rtn_f64"),
    // GFX12 (RDNA4) renames of the same operations.
    ("s_add_co_u32", "s_add_u32"),
    ("s_sub_co_u32", "s_sub_u32"),
    ("s_add_co_i32", "s_add_i32"),
    ("s_sub_co_i32", "s_sub_i32"),
    ("s_add_co_ci_u32", "s_addc_u32"),
    ("s_sub_co_ci_u32", "s_subb_u32"),
    ("s_addk_co_i32", "s_addk_i32"),
    // The `_num` min/max return the other operand for a NaN, as GFX9's do
    // outside IEEE mode (GFX12 has no IEEE mode: the dispatch clears it).
    ("v_max_num_f32", "v_max_f32"),
    ("v_min_num_f32", "v_min_f32"),
    ("v_max_num_f16", "v_max_f16"),
    ("v_min_num_f16", "v_min_f16"),
    ("v_max_num_f64", "v_max_f64"),
    ("v_min_num_f64", "v_min_f64"),
    ("v_max3_num_f32", "v_max3_f32"),
    ("v_min3_num_f32", "v_min3_f32"),
    ("v_max3_num_f16", "v_max3_f16"),
    ("v_min3_num_f16", "v_min3_f16"),
    ("v_med3_num_f32", "v_med3_f32"),
    ("v_med3_num_f16", "v_med3_f16"),
    ("v_pk_max_num_f16", "v_pk_max_f16"),
    ("v_pk_min_num_f16", "v_pk_min_f16"),
    ("ds_min_num_f32", "ds_min_f32"),
    ("ds_max_num_f32", "ds_max_f32"),
    ("ds_min_num_rtn_f32", "ds_min_rtn_f32"),
    ("ds_max_num_rtn_f32", "ds_max_rtn_f32"),
    ("ds_min_num_f64", "ds_min_f64"),
    ("ds_max_num_f64", "ds_max_f64"),
    ("ds_min_num_rtn_f64", "ds_min_rtn_f64"),
    ("ds_max_num_rtn_f64", "ds_max_rtn_f64"),
];

/// Whether a DS opcode is a compare-store, whose data operands GFX11
/// orders (new value, compare value) where GFX9 orders (compare, new).
pub fn is_cmpstore(name: &str) -> bool {
    name.starts_with("ds_cmpstore")
}

/// The memory element suffixes: GFX11's, GFX9's.
const LOAD_TYPES: &[(&str, &str)] = &[
    ("b32", "dword"),
    ("b64", "dwordx2"),
    ("b96", "dwordx3"),
    ("b128", "dwordx4"),
    ("u8", "ubyte"),
    ("i8", "sbyte"),
    ("u16", "ushort"),
    ("i16", "sshort"),
    ("d16_u8", "ubyte_d16"),
    ("d16_i8", "sbyte_d16"),
    ("d16_b16", "short_d16"),
    ("d16_hi_u8", "ubyte_d16_hi"),
    ("d16_hi_i8", "sbyte_d16_hi"),
    ("d16_hi_b16", "short_d16_hi"),
];

const STORE_TYPES: &[(&str, &str)] = &[
    ("b8", "byte"),
    ("b16", "short"),
    ("b32", "dword"),
    ("b64", "dwordx2"),
    ("b96", "dwordx3"),
    ("b128", "dwordx4"),
    ("d16_hi_b8", "byte_d16_hi"),
    ("d16_hi_b16", "short_d16_hi"),
];

/// Vector memory atomics: GFX11's operation suffix, GFX9's.
const ATOMICS: &[(&str, &str)] = &[
    ("swap_b32", "swap"),
    ("cmpswap_b32", "cmpswap"),
    ("add_u32", "add"),
    ("sub_u32", "sub"),
    ("min_i32", "smin"),
    ("min_u32", "umin"),
    ("max_i32", "smax"),
    ("max_u32", "umax"),
    ("and_b32", "and"),
    ("or_b32", "or"),
    ("xor_b32", "xor"),
    ("inc_u32", "inc"),
    ("dec_u32", "dec"),
    ("swap_b64", "swap_x2"),
    ("cmpswap_b64", "cmpswap_x2"),
    ("add_u64", "add_x2"),
    ("sub_u64", "sub_x2"),
    ("min_i64", "smin_x2"),
    ("min_u64", "umin_x2"),
    ("max_i64", "smax_x2"),
    ("max_u64", "umax_x2"),
    ("and_b64", "and_x2"),
    ("or_b64", "or_x2"),
    ("xor_b64", "xor_x2"),
    ("inc_u64", "inc_x2"),
    ("dec_u64", "dec_x2"),
    ("add_f32", "add_f32"),
    ("min_f32", "min_f32"),
    ("max_f32", "max_f32"),
    ("min_num_f32", "min_f32"),
    ("max_num_f32", "max_f32"),
    ("pk_add_f16", "pk_add_f16"),
    ("pk_add_bf16", "pk_add_bf16"),
    ("csub_u32", "csub"),
    ("cmpswap_f32", "cmpswap_f32"),
];

/// SMEM element suffixes.
const SMEM_TYPES: &[(&str, &str)] = &[
    ("b32", "dword"),
    ("b64", "dwordx2"),
    ("b96", "dwordx3"),
    ("b128", "dwordx4"),
    ("b256", "dwordx8"),
    ("b512", "dwordx16"),
];

fn find(table: &[(&'static str, &'static str)], k: &str) -> Option<&'static str> {
    table.iter().find(|(a, _)| *a == k).map(|(_, b)| *b)
}

/// The GFX9 mnemonic of the operation GFX11's `name` (without encoding
/// suffix) performs; `name` itself where GFX9 uses the same name.
pub fn gfx9_name(name: &str) -> Cow<'static, str> {
    if let Some(n) = find(RENAMES, name) {
        return Cow::Borrowed(n);
    }
    // The d16 format accesses: GFX11 `buffer_load_d16_hi_format_x`,
    // GFX9 `buffer_load_format_d16_hi_x`.
    for (a, b) in [
        ("_d16_hi_format_", "_format_d16_hi_"),
        ("_d16_format_", "_format_d16_"),
    ] {
        if name.contains(a) {
            return Cow::Owned(name.replacen(a, b, 1));
        }
    }
    for seg in ["global_", "flat_", "scratch_", "buffer_"] {
        let Some(rest) = name.strip_prefix(seg) else {
            continue;
        };
        let mapped = if let Some(t) = rest.strip_prefix("load_") {
            find(LOAD_TYPES, t).map(|t| format!("{seg}load_{t}"))
        } else if let Some(t) = rest.strip_prefix("store_") {
            find(STORE_TYPES, t).map(|t| format!("{seg}store_{t}"))
        } else if let Some(t) = rest.strip_prefix("atomic_") {
            find(ATOMICS, t).map(|t| format!("{seg}atomic_{t}"))
        } else {
            None
        };
        return mapped.map_or(Cow::Owned(name.to_string()), Cow::Owned);
    }
    for seg in ["s_load_", "s_buffer_load_"] {
        if let Some(t) = name.strip_prefix(seg)
            && let Some(t) = find(SMEM_TYPES, t)
        {
            return Cow::Owned(format!("{seg}{t}"));
        }
    }
    if let Some(t) = name.strip_prefix("ds_load_") {
        return Cow::Owned(format!("ds_read_{t}"));
    }
    if let Some(t) = name.strip_prefix("ds_store_") {
        return Cow::Owned(format!("ds_write_{t}"));
    }
    Cow::Owned(name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renamed_operations_map_to_gfx9_names() {
        for (a, b) in [
            ("v_add_nc_u32", "v_add_u32"),
            ("v_add_co_ci_u32", "v_addc_co_u32"),
            ("s_and_not1_b32", "s_andn2_b32"),
            ("global_load_b128", "global_load_dwordx4"),
            ("global_load_d16_hi_b16", "global_load_short_d16_hi"),
            ("global_store_b8", "global_store_byte"),
            ("scratch_store_b64", "scratch_store_dwordx2"),
            ("global_atomic_cmpswap_b64", "global_atomic_cmpswap_x2"),
            ("global_atomic_max_i32", "global_atomic_smax"),
            ("buffer_load_u16", "buffer_load_ushort"),
            ("s_load_b256", "s_load_dwordx8"),
            ("s_buffer_load_b32", "s_buffer_load_dword"),
            ("ds_load_b128", "ds_read_b128"),
            ("ds_load_u16_d16_hi", "ds_read_u16_d16_hi"),
            ("ds_store_b16_d16_hi", "ds_write_b16_d16_hi"),
            ("ds_load_2addr_stride64_b32", "ds_read2st64_b32"),
            ("ds_add_u32", "ds_add_u32"),
            ("v_fma_f32", "v_fma_f32"),
            ("buffer_load_d16_format_xy", "buffer_load_format_d16_xy"),
            (
                "buffer_store_d16_hi_format_x",
                "buffer_store_format_d16_hi_x",
            ),
            ("tbuffer_load_d16_format_x", "tbuffer_load_format_d16_x"),
            ("global_atomic_csub_u32", "global_atomic_csub"),
            ("v_cmpx_t_f16", "v_cmpx_tru_f16"),
        ] {
            assert_eq!(gfx9_name(a), b, "{a}");
        }
    }
}
