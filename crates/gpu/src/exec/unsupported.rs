//! The instructions the engine has no semantics for, each with the reason:
//! the one list that `tests/every_opcode.rs` checks every opcode of every
//! target against (and `tests/coverage.rs` the compiled corpus), and that
//! the README's "Limits" section names entry by entry. Such an instruction
//! lowers to [`unsupported`](super::lower::unsupported) and stops the
//! kernel with a report naming it if a wave reaches it.

use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;

/// `(pattern, reason)`. A pattern matches the [`list_name`] of an
/// instruction: a base mnemonic, or a `*` standing for any run of
/// characters (`image_*`, `ds_* gds`).
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

/// The entry of [`NOT_EMULATED`] whose pattern matches `name` (a
/// [`list_name`]), the first if several do.
pub fn entry(name: &str) -> Option<&'static (&'static str, &'static str)> {
    NOT_EMULATED.iter().find(|(p, _)| matches(p, name))
}

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
    }
}
