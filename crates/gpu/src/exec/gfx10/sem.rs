//! GFX10 operations whose names no other family's lowering knows (RDNA1 /
//! RDNA2 ISA manuals, instruction descriptions), by the name of the
//! operation with the same semantics elsewhere.

use super::super::gfx11;
use super::super::op::ExecFn;

/// The semantic function of one of GFX10's own operations (LLVM name
/// without encoding suffix).
pub fn lookup(name: &str) -> Option<ExecFn> {
    let same = match name {
        // The instruction prefetch hint (a no-op in a functional model).
        "s_inst_prefetch" => "s_set_inst_prefetch_distance",
        // Wave32 EXEC updates with an inverted operand (GFX11 spells
        // n1 / n2 not0 / not1: ~S0 and ~EXEC).
        "s_andn1_saveexec_b32" => "s_and_not0_saveexec_b32",
        "s_andn2_saveexec_b32" => "s_and_not1_saveexec_b32",
        "s_orn1_saveexec_b32" => "s_or_not0_saveexec_b32",
        "s_orn2_saveexec_b32" => "s_or_not1_saveexec_b32",
        "s_andn1_wrexec_b32" => "s_and_not0_wrexec_b32",
        "s_andn2_wrexec_b32" => "s_and_not1_wrexec_b32",
        _ => return None,
    };
    gfx11::sem::lookup(same)
}
