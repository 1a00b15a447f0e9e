//! The instructions the engine has no semantics for, each with the reason:
//! the one list that `tests/it/every_opcode.rs` checks every opcode of every
//! target against (and `tests/it/coverage.rs` the compiled corpus), and that
//! the README's "Limits" section names entry by entry. Such an instruction
//! lowers to [`unsupported`](super::lower::unsupported) and stops the
//! kernel with a report naming it if a wave reaches it.

use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;

/// `(pattern, reason)`. A pattern matches the [`list_name`] of an
/// instruction: a base mnemonic, where each `*` stands for any run of
/// characters (`image_*`, `ds_* gds`, `ds_*_src2_*`).
pub const NOT_EMULATED: &[(&str, &str)] = &[
    (
        "image_gather4h",
        "gfx908's gather of four texels of one row: no compute compiler \
         emits it; not implemented",
    ),
    (
        "image_get_lod",
        "gfx908's LOD query (graphics: derivatives of a pixel quad); not \
         implemented",
    ),
    (
        "v_interp_*",
        "gfx908's graphics attribute interpolation (VINTRP and its VOP3 \
         forms): compute kernels have no attributes",
    ),
    (
        "ds_*_src2_*",
        "gfx908's LDS-to-LDS operations (the second operand read from an \
         address the offset fields give; gone in gfx90a): LLVM's code \
         generator never selects them (assembler only); not implemented",
    ),
    (
        "ds_gws_*",
        "global wave sync uses the GPU's GWS block, shared across queues; \
         the emulated KFD grants no GWS (ALLOC_QUEUE_GWS answers without it)",
    ),
    (
        "ds_* gds",
        "the global data share (GDS, the DS `gds` bit) is not modelled; \
         no CDNA compute compiler uses it",
    ),
    (
        "s_scratch_*",
        "scalar loads and stores of the private segment: LLVM's code \
         generator never selects them (assembler only); not implemented yet",
    ),
    (
        "ds_condxchg32_rtn_b64",
        "conditional exchange of a dword pair, which the ISA manuals \
         describe only by name: no LLVM intrinsic or compiler emits it; \
         not implemented yet",
    ),
    (
        "v_screen_partition_4se_b32",
        "graphics: a primitive's screen partition across 4 shader engines; \
         no compute compiler emits it",
    ),
];

/// The name [`NOT_EMULATED`] patterns match: the base mnemonic as LLVM
/// prints it (without `_e32` / `_e64` / `_sdwa` / `_dpp`), followed by
/// ` gds` for a DS instruction with the `gds` bit set.
pub fn list_name(inst: &Inst) -> String {
    let s = inst.to_string();
    let m = s.split_whitespace().next().unwrap_or("");
    let mut name = super::lower::base_name(m).to_string();
    if let Body::Ds(d) = inst.body()
        && d.gds
        && !name.starts_with("ds_gws_")
    {
        name.push_str(" gds");
    }
    name
}

/// The GFX11 (gfx1100, gfx1151) instructions without semantics, each
/// with the reason: the graphics-only instructions, which have no meaning
/// in a compute dispatch. `tests/every_opcode/gfx11.rs` checks every GFX11
/// opcode against it; the README's "Limits" section names each entry.
pub const NOT_EMULATED_GFX11: &[(&str, &str)] = &[
    (
        "exp",
        "graphics: export of a pixel's colour or a vertex's position and \
         parameters to the fixed-function pipeline, which a compute \
         dispatch does not have",
    ),
    (
        "v_interp_*",
        "graphics (VINTERP): attribute interpolation from the parameter \
         data LDS_PARAM_LOAD gives a pixel shader; compute waves have no \
         attributes",
    ),
    (
        "lds_*",
        "graphics (LDSDIR): `lds_param_load` and `lds_direct_load` read \
         the attribute parameters the rasterizer writes to LDS for pixel \
         shaders; compute dispatches have none",
    ),
    (
        "image_*",
        "texture and image operations need the texture unit's sampler and \
         format model (MIMG resource descriptors), which is not \
         implemented; no compute compiler of the corpus emits them",
    ),
    (
        "ds_* gds",
        "the global data share (GDS, the DS `gds` bit) is not modelled; \
         RDNA3 compute compilers use it only for graphics streamout",
    ),
    (
        "ds_bvh_stack_rtn_b32",
        "ray tracing: the BVH traversal stack in LDS that pairs with \
         `image_bvh*_intersect_ray` (MIMG, not implemented)",
    ),
    (
        "ds_condxchg32_rtn_b64",
        "conditional exchange of a dword pair, which the ISA manuals \
         describe only by name: no LLVM intrinsic or compiler emits it; \
         not implemented",
    ),
    (
        "s_subvector_loop_*",
        "wave64 subvector loops (run a block once per 32-lane half): \
         LLVM's code generator never selects them (assembler only); not \
         implemented",
    ),
];

/// The name [`NOT_EMULATED_GFX11`] patterns match, for an instruction of
/// any family: as [`list_name`], the base mnemonic as LLVM prints it,
/// followed by ` gds` for a DS instruction with the `gds` bit set.
pub fn list_name_of(inst: &rocjitsu_isa::Instruction) -> String {
    use rocjitsu_isa::Instruction;
    let gds = match inst {
        Instruction::Gfx9(i) => return list_name(i),
        Instruction::Gfx11(i) => {
            matches!(i.body(), rocjitsu_isa::gfx11::Body::Ds(d) if d.fields.gds)
        }
        _ => false,
    };
    let s = inst.to_string();
    let m = s.split_whitespace().next().unwrap_or("");
    // `_e64_dpp`: both suffixes go.
    let mut name = super::lower::base_name(super::lower::base_name(m)).to_string();
    if gds && !name.starts_with("ds_gws_") {
        name.push_str(" gds");
    }
    name
}

/// The entry of [`NOT_EMULATED_GFX11`] whose pattern matches `name` (a
/// [`list_name_of`]).
pub fn entry_gfx11(name: &str) -> Option<&'static (&'static str, &'static str)> {
    NOT_EMULATED_GFX11.iter().find(|(p, _)| matches(p, name))
}

/// The entry of [`NOT_EMULATED`] whose pattern matches `name` (a
/// [`list_name`]), the first if several do.
pub fn entry(name: &str) -> Option<&'static (&'static str, &'static str)> {
    NOT_EMULATED.iter().find(|(p, _)| matches(p, name))
}

fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    // Each middle piece at its first place after the previous one; the last
    // piece at the end.
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn patterns() {
        assert!(matches("ds_gws_*", "ds_gws_init"));
        assert!(matches("ds_* gds", "ds_add_u32 gds"));
        assert!(!matches("ds_* gds", "ds_add_u32"));
        assert!(matches("ds_*_src2_*", "ds_add_src2_u32"));
        assert!(matches("ds_*_src2_*", "ds_write_src2_b64"));
        assert!(!matches("ds_*_src2_*", "ds_add_u32"));
        assert!(!matches("ds_*_src2_*", "ds_add_src2"));
        assert!(matches("image_get_lod", "image_get_lod"));
        assert!(!matches("image_get_lod", "image_get_lod2"));
        assert!(!matches("v_*_*", "v_"));
    }
}
