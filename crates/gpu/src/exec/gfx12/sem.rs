//! Semantics of GFX12 operations GFX9 and GFX11 do not have or define
//! otherwise (RDNA4 ISA manual, instruction descriptions).
//!
//! * The split dependency counters (`s_wait_loadcnt`, `s_wait_dscnt`,
//!   `s_wait_kmcnt`, ...), `s_wait_alu`, `s_wait_event`, `s_sleep_var`,
//!   prefetches and the cache controls `global_inv` / `global_wb` /
//!   `global_wbinv` do nothing in a functional model (memory operations
//!   complete when they issue).
//! * The split workgroup barrier: `s_barrier_signal -1` waits there for
//!   the workgroup (as `s_barrier`), `s_barrier_wait` then finds it
//!   complete. Named barriers (`s_barrier_signal m0`, other ids) and
//!   `s_barrier_signal_isfirst` fault naming themselves.
//! * 64-bit SALU adds and multiplies without carry (`s_add_nc_u64`, ...).
//! * Sub-dword scalar loads (`s_load_u8`, `s_buffer_load_i16`, ...).
//! * The SALU float operations (also GFX11.5's) and the pseudo-scalar
//!   transcendentals `v_s_*` are computed by the VALU operation of the
//!   same arithmetic on lane 0 ([`scalarize`]), so that rounding, denormal
//!   and NaN behaviour are the VALU's; the SALU float compares set SCC.
//! * `v_permlane16_var_b32` / `v_permlanex16_var_b32`, `v_xor3_b32`,
//!   `v_maxmin_num_f32` / `v_minmax_num_f32`.

use super::super::gfx11;
use super::super::op::{Ctx, ExecFn, Fault, Op};
use super::super::valu::{b32, f32s, write_b32, write_f32};
use super::super::wave::{Src, VREGS, WaveState, Width, sreg};
use crate::float::f16_to_f32;

/// The semantic function of a GFX12 mnemonic (without encoding suffix)
/// that has its own semantics here.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "s_wait_loadcnt"
        | "s_wait_storecnt"
        | "s_wait_samplecnt"
        | "s_wait_bvhcnt"
        | "s_wait_expcnt"
        | "s_wait_dscnt"
        | "s_wait_kmcnt"
        | "s_wait_loadcnt_dscnt"
        | "s_wait_storecnt_dscnt"
        | "s_wait_alu"
        | "s_wait_event"
        | "s_sleep_var"
        | "s_barrier_wait"
        | "s_prefetch_inst"
        | "s_prefetch_inst_pc_rel"
        | "s_prefetch_data"
        | "s_prefetch_data_pc_rel"
        | "s_buffer_prefetch_data"
        | "global_inv"
        | "global_wb"
        | "global_wbinv" => nop,
        "s_barrier_signal" => barrier_signal,
        "s_add_nc_u64" => alu64::<ADD>,
        "s_sub_nc_u64" => alu64::<SUB>,
        "s_mul_u64" => alu64::<MUL>,
        "s_load_u8" => load_small::<1, false, false>,
        "s_load_i8" => load_small::<1, true, false>,
        "s_load_u16" => load_small::<2, false, false>,
        "s_load_i16" => load_small::<2, true, false>,
        "s_buffer_load_u8" => load_small::<1, false, true>,
        "s_buffer_load_i8" => load_small::<1, true, true>,
        "s_buffer_load_u16" => load_small::<2, false, true>,
        "s_buffer_load_i16" => load_small::<2, true, true>,
        "v_permlane16_var_b32" => permlane16_var::<false>,
        "v_permlanex16_var_b32" => permlane16_var::<true>,
        "v_xor3_b32" => xor3,
        "v_maxmin_num_f32" => minmax32::<true>,
        "v_minmax_num_f32" => minmax32::<false>,
        _ => return cmp_lookup(name),
    })
}

fn nop(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Ok(())
}

/// `s_barrier_signal -1` (SOP1, the barrier id an inline constant): the
/// wave waits at the workgroup barrier (the dispatcher releases the
/// workgroup when every wave has signalled).
fn barrier_signal(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.src[0] != Src::Int(-1) {
        return Err(Fault::Invalid(format!(
            "{}: only the workgroup barrier (-1) is modelled, not named barriers",
            op.name()
        )));
    }
    c.wave.state = WaveState::Barrier;
    Ok(())
}

const ADD: u8 = 0;
const SUB: u8 = 1;
const MUL: u8 = 2;

/// `s_add_nc_u64` / `s_sub_nc_u64` / `s_mul_u64`: 64-bit, SCC unchanged.
fn alu64<const K: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let ap = c.env.apertures;
    let a = c.wave.read_s64(op.src[0], Width::B64, &ap);
    let b = c.wave.read_s64(op.src[1], Width::B64, &ap);
    let r = match K {
        ADD => a.wrapping_add(b),
        SUB => a.wrapping_sub(b),
        _ => a.wrapping_mul(b),
    };
    c.wave.set_s64(op.sdst, r);
    Ok(())
}

/// `s_load_{u8,i8,u16,i16}` and their `s_buffer_load_` forms: `N` bytes
/// at base + SGPR offset + immediate (buffers: bytes past num_records read
/// 0), zero- or sign-extended to the destination SGPR.
fn load_small<const N: usize, const SIGNED: bool, const BUF: bool>(
    c: &mut Ctx,
    op: &Op,
) -> Result<(), Fault> {
    let ap = c.env.apertures;
    let soff = match op.src[1] {
        Src::None => 0,
        s => u64::from(c.wave.read_s32(s, Width::B32, &ap)),
    };
    let off = soff.wrapping_add(op.imm as u64);
    let mut b = [0u8; 2];
    if BUF {
        let Src::S(r) = op.src[0] else {
            return Err(Fault::Invalid(format!("{}: no resource", op.name())));
        };
        let base = u64::from(c.wave.s32(r)) | (u64::from(c.wave.s32(r + 1) & 0xffff) << 32);
        let size = u64::from(c.wave.s32(r + 2));
        let off = off & 0xffff_ffff;
        if off + N as u64 <= size {
            c.vm.load(c.tlb, base.wrapping_add(off), &mut b[..N])?;
        }
    } else {
        let base = c.wave.read_s64(op.src[0], Width::B64, &ap) & 0xffff_ffff_ffff;
        c.vm.load(c.tlb, base.wrapping_add(off), &mut b[..N])?;
    }
    let v = match (N, SIGNED) {
        (1, false) => u32::from(b[0]),
        (1, true) => b[0] as i8 as i32 as u32,
        (_, false) => u32::from(u16::from_le_bytes(b)),
        (_, true) => u16::from_le_bytes(b) as i16 as i32 as u32,
    };
    c.wave.set_s32(op.sdst, v);
    Ok(())
}

/// `v_permlane16_var_b32` / `v_permlanex16_var_b32` (`X`): lane `l` of
/// each row of 16 reads lane `src1[l] & 15` of src0 in its own row (`X`:
/// in the other row of its 32-lane half). op_sel[0] is FI, op_sel[1]
/// BOUND_CTRL, as for `v_permlane16_b32`.
fn permlane16_var<const X: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let src = b32(c, op, 0);
    let sel = b32(c, op, 1);
    let fi = op.mods.opsel & 1 != 0;
    let bound = op.mods.opsel & 2 != 0;
    let exec = c.wave.exec();
    let mut out = *c.wave.vreg(op.vdst);
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let row = if X {
            (l & !31) | ((l & 16) ^ 16)
        } else {
            l & !15
        };
        let s = row | (sel[l] & 0xf) as usize;
        if fi || exec >> s & 1 != 0 {
            out[l] = src[s];
        } else if bound {
            out[l] = 0;
        }
    }
    c.wave.write_v(op.vdst, &out, exec);
    Ok(())
}

/// `v_xor3_b32`.
fn xor3(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b, d) = (b32(c, op, 0), b32(c, op, 1), b32(c, op, 2));
    let r: [u32; 64] = std::array::from_fn(|l| a[l] ^ b[l] ^ d[l]);
    write_b32(c, op, &r);
    Ok(())
}

/// IEEE 754-2019 maximumNumber / minimumNumber (`MAX`): a NaN operand
/// gives the other one (both NaN: a quiet NaN), -0 orders below +0.
fn num32<const MAX: bool>(a: f32, b: f32) -> f32 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f32::from_bits(a.to_bits() | 0x0040_0000),
        (true, false) => b,
        (false, true) => a,
        _ if a == b => {
            if (a.is_sign_negative() == MAX) == b.is_sign_negative() {
                a
            } else {
                b
            }
        }
        _ if (a > b) == MAX => a,
        _ => b,
    }
}

/// `v_maxmin_num_f32` (`MAXMIN`: min(max(S0, S1), S2)) and
/// `v_minmax_num_f32` (max(min(S0, S1), S2)).
fn minmax32<const MAXMIN: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b, d) = (f32s(c, op, 0), f32s(c, op, 1), f32s(c, op, 2));
    let r: [f32; 64] = std::array::from_fn(|l| {
        if MAXMIN {
            num32::<false>(num32::<true>(a[l], b[l]), d[l])
        } else {
            num32::<true>(num32::<false>(a[l], b[l]), d[l])
        }
    });
    write_f32(c, op, &r);
    Ok(())
}

/// The SALU float compares (`s_cmp_<pred>_f32` / `_f16`): SCC = the
/// predicate on S0 and S1.
fn cmp_lookup(name: &str) -> Option<ExecFn> {
    let rest = name.strip_prefix("s_cmp_")?;
    let (pred, half) = if let Some(p) = rest.strip_suffix("_f32") {
        (p, false)
    } else {
        (rest.strip_suffix("_f16")?, true)
    };
    macro_rules! pick {
        ($($p:literal => $k:expr),*) => {
            match (pred, half) {
                $(($p, false) => cmp::<{ $k }, false>,
                  ($p, true) => cmp::<{ $k }, true>,)*
                _ => return None,
            }
        };
    }
    Some(
        pick!("lt" => 0, "eq" => 1, "le" => 2, "gt" => 3, "lg" => 4, "ge" => 5,
        "o" => 6, "u" => 7, "nge" => 8, "nlg" => 9, "ngt" => 10, "nle" => 11,
        "neq" => 12, "nlt" => 13),
    )
}

fn cmp<const P: u8, const HALF: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let ap = c.env.apertures;
    let val = |s: Src| -> f32 {
        if HALF {
            f16_to_f32(c.wave.read_s32(s, Width::B16, &ap) as u16)
        } else {
            f32::from_bits(c.wave.read_s32(s, Width::B32, &ap))
        }
    };
    let (a, b) = (val(op.src[0]), val(op.src[1]));
    // `None` when either is NaN: the ordered predicates are false and the
    // negated (`n*`) ones true.
    use std::cmp::Ordering::{Equal, Greater, Less};
    let ord = a.partial_cmp(&b);
    c.wave.scc = match P {
        0 => ord == Some(Less),
        1 => ord == Some(Equal),
        2 => matches!(ord, Some(Less | Equal)),
        3 => ord == Some(Greater),
        4 => matches!(ord, Some(Less | Greater)),
        5 => matches!(ord, Some(Greater | Equal)),
        6 => ord.is_some(),
        7 => ord.is_none(),
        8 => !matches!(ord, Some(Greater | Equal)),
        9 => !matches!(ord, Some(Less | Greater)),
        10 => ord != Some(Greater),
        11 => !matches!(ord, Some(Less | Equal)),
        12 => ord != Some(Equal),
        _ => ord != Some(Less),
    };
    Ok(())
}

/// The VGPR a scalarized operation computes in (lane 0): above the 256
/// VGPRs an RDNA wave can name.
const TMP: u16 = (VREGS - 1) as u16;

/// The VALU operation that computes a SALU float operation or a
/// pseudo-scalar transcendental, and how its operands differ.
fn vector_of(name: &str) -> Option<&'static str> {
    Some(match name {
        "v_s_exp_f32" => "v_exp_f32",
        "v_s_exp_f16" => "v_exp_f16",
        "v_s_log_f32" => "v_log_f32",
        "v_s_log_f16" => "v_log_f16",
        "v_s_rcp_f32" => "v_rcp_f32",
        "v_s_rcp_f16" => "v_rcp_f16",
        "v_s_rsq_f32" => "v_rsq_f32",
        "v_s_rsq_f16" => "v_rsq_f16",
        "v_s_sqrt_f32" => "v_sqrt_f32",
        "v_s_sqrt_f16" => "v_sqrt_f16",
        "s_add_f32" => "v_add_f32",
        "s_sub_f32" => "v_sub_f32",
        "s_mul_f32" => "v_mul_f32",
        "s_min_num_f32" | "s_min_f32" => "v_min_f32",
        "s_max_num_f32" | "s_max_f32" => "v_max_f32",
        "s_fmac_f32" | "s_fmaak_f32" | "s_fmamk_f32" => "v_fma_f32",
        "s_add_f16" => "v_add_f16",
        "s_sub_f16" => "v_sub_f16",
        "s_mul_f16" => "v_mul_f16",
        "s_min_num_f16" | "s_min_f16" => "v_min_f16",
        "s_max_num_f16" | "s_max_f16" => "v_max_f16",
        "s_fmac_f16" => "v_fma_f16",
        "s_cvt_pk_rtz_f16_f32" => "v_cvt_pk_rtz_f16_f32",
        "s_cvt_f32_i32" => "v_cvt_f32_i32",
        "s_cvt_f32_u32" => "v_cvt_f32_u32",
        "s_cvt_i32_f32" => "v_cvt_i32_f32",
        "s_cvt_u32_f32" => "v_cvt_u32_f32",
        "s_cvt_f16_f32" => "v_cvt_f16_f32",
        "s_cvt_f32_f16" | "s_cvt_hi_f32_f16" => "v_cvt_f32_f16",
        "s_ceil_f32" => "v_ceil_f32",
        "s_floor_f32" => "v_floor_f32",
        "s_trunc_f32" => "v_trunc_f32",
        "s_rndne_f32" => "v_rndne_f32",
        "s_ceil_f16" => "v_ceil_f16",
        "s_floor_f16" => "v_floor_f16",
        "s_trunc_f16" => "v_trunc_f16",
        "s_rndne_f16" => "v_rndne_f16",
        _ => return None,
    })
}

/// Whether `name` is computed by [`scalarize`].
pub fn is_scalarized(name: &str) -> bool {
    vector_of(name).is_some()
}

/// Makes `op` (a SALU float operation or a `v_s_*` instruction, already
/// lowered with its scalar destination and sources) run the VALU
/// operation of the same arithmetic on lane 0 of a spare VGPR and copy the
/// result to the destination SGPR. An operation whose VALU form has no
/// semantics keeps faulting naming itself.
pub fn scalarize(op: &mut Op) {
    let name = super::super::lower::base_name(op.name());
    let Some(vname) = vector_of(name) else {
        return;
    };
    let Some(f) = gfx11::sem::lookup(vname)
        .or_else(|| super::super::valu::lookup(&gfx11::names::gfx9_name(vname)))
    else {
        op.exec = super::super::lower::unsupported;
        return;
    };
    let mut v = op.clone();
    v.pair = None;
    v.exec = f;
    v.vdst = TMP;
    v.sdst = sreg::DISCARD;
    match name {
        "s_fmac_f32" | "s_fmac_f16" => v.src[2] = Src::S(op.sdst),
        "s_cvt_hi_f32_f16" => v.mods.opsel |= 1,
        _ => {}
    }
    // A 16-bit result is zero-extended in its SGPR.
    let half = (vname.ends_with("_f16") && vname != "v_cvt_f32_f16") || vname == "v_cvt_f16_f32";
    op.imm = i64::from(half);
    op.exec = via_lane0;
    op.pair = Some(Box::new([v.clone(), v]));
}

/// Runs the VALU form held in `op.pair[0]` with EXEC = lane 0 and writes
/// lane 0's result (16-bit results zero-extended when `op.imm` is 1) to
/// the destination SGPR.
fn via_lane0(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let Some(pair) = &op.pair else {
        return Err(Fault::Invalid(format!("{}: no VALU form", op.name())));
    };
    let v = &pair[0];
    let exec = c.wave.exec();
    let old = *c.wave.vreg(TMP);
    c.wave.write_v(TMP, &[0; 64], u64::MAX);
    c.wave.set_exec(1);
    let r = (v.exec)(c, v);
    c.wave.set_exec(exec);
    let mut val = c.wave.vreg(TMP)[0];
    c.wave.write_v(TMP, &old, u64::MAX);
    r?;
    if op.imm == 1 {
        val &= 0xffff;
    }
    c.wave.set_s32(op.sdst, val);
    Ok(())
}
