//! GFX11 compute operations that neither GFX9 nor the rest of [`super::sem`]
//! define (RDNA3 ISA manual, instruction descriptions): the 16-bit-result
//! and mixed-signedness dot products, the DX9-rule FMAs and `v_mullit_f32`,
//! the float-to-16-bit packing conversions, 16-to-32-bit integer
//! conversions, the M0-relative VGPR moves and swaps, `v_swap_b16`,
//! `s_pack_hl_b32_b16`, `s_movrelsd_2_b32`, the thread-id-addressed global
//! loads and stores, and the operations without functional effect in a
//! functional model (`v_pipeflush`, `s_version`, `s_ttracedata_imm`,
//! `s_wait_event`).
//!
//! Operations that GFX9 has under another name are mapped in
//! [`super::names`] instead (`v_cmp_t_*` is `v_cmp_tru_*`,
//! `v_cvt_pk_norm_*` is `v_cvt_pknorm_*`, `v_mul_dx9_zero_f32` is
//! `v_mul_legacy_f32`, ...).

use super::super::op::{Ctx, ExecFn, Fault, Op};
use super::super::valu::float::{
    Fmt, dp_denorm_in, dp_denorm_out, h2f, out16, round_fmt, round64, two_sum, write_b16_keep,
};
use super::super::valu::{b16, b32, f16s, f32s, lanes, write_b16, write_b32, write_f32};
use super::super::vmem::{self, Space};
use super::super::wave::{Lanes, Src, Width, sreg};

/// The semantic function of a GFX11 mnemonic defined here.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        // No functional effect: the VALU destination cache flush, the
        // version marker, thread-trace data, and the wait for an export
        // event (compute waves export nothing).
        "v_pipeflush" | "s_version" | "s_ttracedata_imm" | "s_wait_event" => nop,
        "v_dot2_f16_f16" => dot2_16::<false>,
        "v_dot2_bf16_bf16" => dot2_16::<true>,
        "v_dot4_i32_iu8" => dot_iu::<8>,
        "v_dot8_i32_iu4" => dot_iu::<4>,
        "v_fma_dx9_zero_f32" | "v_fmac_dx9_zero_f32" => fma_dx9,
        "v_mullit_f32" => mullit,
        "v_cvt_pk_i16_f32" => cvt_pk16_f32::<true>,
        "v_cvt_pk_u16_f32" => cvt_pk16_f32::<false>,
        "v_cvt_i32_i16" => cvt32_16::<true>,
        "v_cvt_u32_u16" => cvt32_16::<false>,
        "v_movrels_b32" => movrel::<{ REL_S }>,
        "v_movreld_b32" => movrel::<{ REL_D }>,
        "v_movrelsd_b32" => movrel::<{ REL_S | REL_D }>,
        "v_movrelsd_2_b32" => movrel::<{ REL_S | REL_D | REL_2 }>,
        "v_swaprel_b32" => swaprel,
        "v_swap_b16" => swap16,
        "s_pack_hl_b32_b16" => s_pack_hl,
        "s_movrelsd_2_b32" => s_movrelsd_2,
        "global_load_addtid_b32" => addtid::<false>,
        "global_store_addtid_b32" => addtid::<true>,
        _ => return None,
    })
}

fn nop(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Ok(())
}

/// bfloat16 as a rounding format.
const FMT_BF16: Fmt = Fmt {
    prec: 8,
    emin: -126,
    emax: 127,
};

/// Source `i` (a packed pair of 16-bit floats) with the VOP3 abs/neg
/// modifiers applied to both halves.
fn packed(c: &Ctx, op: &Op, i: usize) -> Lanes {
    let mut v = b32(c, op, i);
    for x in v.iter_mut() {
        if op.mods.abs >> i & 1 != 0 {
            *x &= 0x7fff_7fff;
        }
        if op.mods.neg >> i & 1 != 0 {
            *x ^= 0x8000_8000;
        }
    }
    v
}

/// `v_dot2_f16_f16` / `v_dot2_bf16_bf16` (VOP3): D.16 = S0[0] * S1[0] +
/// S0[1] * S1[1] + S2.16, the products exact and the sum rounded once per
/// MODE's f16/f64 round mode (bf16: the same mode). op_sel[2] picks S2's
/// half, op_sel[3] the destination's half (the other is kept); clamp
/// clamps to [0, 1].
fn dot2_16<const BF: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b) = (packed(c, op, 0), packed(c, op, 1));
    let d = f16s(c, op, 2);
    let (r, keep_in, keep_out) = (round64(c), dp_denorm_in(c), dp_denorm_out(c));
    let val = |h: u16| -> f64 {
        if BF {
            f64::from(f32::from_bits(u32::from(h) << 16))
        } else {
            f64::from(h2f(h, keep_in))
        }
    };
    let out: [u16; 64] = std::array::from_fn(|l| {
        let p0 = val(a[l] as u16) * val(b[l] as u16);
        let p1 = val((a[l] >> 16) as u16) * val((b[l] >> 16) as u16);
        let (s, e0) = two_sum(p0, p1);
        let (s, e1) = two_sum(s, val(d[l]));
        let err = e0 + e1;
        if !BF {
            return out16(op, s, err, r, keep_out);
        }
        let mut v = round_fmt(s, err, FMT_BF16, r);
        if op.mods.clamp {
            v = if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
        }
        let bits = (v as f32).to_bits();
        if v.is_nan() {
            0x7fc0
        } else {
            (bits >> 16) as u16
        }
    });
    write_b16_keep(c, op, &out);
    Ok(())
}

/// `v_dot4_i32_iu8` / `v_dot8_i32_iu4` (VOP3P): D = S2 + sum of the
/// products of the `BITS`-bit elements of S0 and S1, each source's
/// elements signed where its neg_lo bit is set (neg_lo[0] for S0,
/// neg_lo[1] for S1), unsigned otherwise; S2 is a signed 32-bit
/// accumulator. The sum wraps to 32 bits, or saturates to the i32 range
/// with clamp.
fn dot_iu<const BITS: u32>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b, acc) = (b32(c, op, 0), b32(c, op, 1), b32(c, op, 2));
    let sa = op.mods.neg & 1 != 0;
    let sb = op.mods.neg & 2 != 0;
    let elem = |x: u32, k: u32, signed: bool| -> i64 {
        let v = (x >> (k * BITS)) & ((1u32 << BITS) - 1);
        if signed && v >> (BITS - 1) != 0 {
            i64::from(v) - (1i64 << BITS)
        } else {
            i64::from(v)
        }
    };
    let out: Lanes = std::array::from_fn(|l| {
        let mut s = i64::from(acc[l] as i32);
        for k in 0..32 / BITS {
            s += elem(a[l], k, sa) * elem(b[l], k, sb);
        }
        if op.mods.clamp {
            s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
        } else {
            s as u32
        }
    });
    write_b32(c, op, &out);
    Ok(())
}

/// `v_fma_dx9_zero_f32` / `v_fmac_dx9_zero_f32`: D = S0 * S1 + S2 fused,
/// with DX9's rule that 0 times anything (infinity and NaN included) is
/// +0 (the accumulator of the `fmac` form is the destination).
fn fma_dx9(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b, d) = (f32s(c, op, 0), f32s(c, op, 1), f32s(c, op, 2));
    let out: [f32; 64] = std::array::from_fn(|l| {
        if a[l] == 0.0 || b[l] == 0.0 {
            0.0 + d[l]
        } else {
            a[l].mul_add(b[l], d[l])
        }
    });
    write_f32(c, op, &out);
    Ok(())
}

/// `v_mullit_f32`: -MAX_FLOAT where S1 is -MAX_FLOAT, -inf or NaN or S2
/// is <= 0 or NaN; otherwise S0 * S1 with 0 times anything 0 (the
/// lighting multiply's rules).
fn mullit(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b, d) = (f32s(c, op, 0), f32s(c, op, 1), f32s(c, op, 2));
    let out: [f32; 64] = std::array::from_fn(|l| {
        let (x, y, z) = (a[l], b[l], d[l]);
        if y == -f32::MAX || y == f32::NEG_INFINITY || y.is_nan() || z.is_nan() || z <= 0.0 {
            -f32::MAX
        } else if x == 0.0 || y == 0.0 {
            0.0
        } else {
            x * y
        }
    });
    write_f32(c, op, &out);
    Ok(())
}

/// `v_cvt_pk_i16_f32` / `v_cvt_pk_u16_f32`: D = {cvt(S1), cvt(S0)}, each
/// f32 truncated toward zero and saturated to the 16-bit range; NaN gives
/// 0.
fn cvt_pk16_f32<const SIGNED: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b) = (f32s(c, op, 0), f32s(c, op, 1));
    let cvt = |x: f32| -> u32 {
        if x.is_nan() {
            0
        } else if SIGNED {
            // `as` truncates toward zero and saturates.
            u32::from((x.trunc().clamp(-32768.0, 32767.0) as i16) as u16)
        } else {
            u32::from(x.trunc().clamp(0.0, 65535.0) as u16)
        }
    };
    let out: Lanes = std::array::from_fn(|l| cvt(a[l]) | (cvt(b[l]) << 16));
    write_b32(c, op, &out);
    Ok(())
}

/// `v_cvt_i32_i16` / `v_cvt_u32_u16`: the 16-bit source (its high half
/// with op_sel or `.h`) sign- or zero-extended.
fn cvt32_16<const SIGNED: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let a = b16(c, op, 0);
    let out: Lanes = std::array::from_fn(|l| {
        if SIGNED {
            i32::from(a[l] as i16) as u32
        } else {
            u32::from(a[l])
        }
    });
    write_b32(c, op, &out);
    Ok(())
}

/// The source register is indexed by M0.
const REL_S: u8 = 1;
/// The destination register is indexed by M0.
const REL_D: u8 = 2;
/// `_2` forms: the source offset is M0[9:0], the destination's M0[25:16].
const REL_2: u8 = 4;

/// The (source, destination) register offsets of an M0-relative move.
fn rel_offsets(c: &Ctx, k: u8) -> (u16, u16) {
    let m0 = c.wave.m0();
    if k & REL_2 != 0 {
        ((m0 & 0x3ff) as u16, ((m0 >> 16) & 0x3ff) as u16)
    } else {
        let o = m0 as u16;
        (
            if k & REL_S != 0 { o } else { 0 },
            if k & REL_D != 0 { o } else { 0 },
        )
    }
}

/// `v_movrels_b32` (D = VGPR[S0 + M0]), `v_movreld_b32` (VGPR[D + M0] =
/// S0), `v_movrelsd_b32` (VGPR[D + M0] = VGPR[S0 + M0]) and
/// `v_movrelsd_2_b32` (VGPR[D + M0[25:16]] = VGPR[S0 + M0[9:0]]). A
/// register past the file reads 0 and is not written. A non-VGPR source
/// is read as it is (only `v_movreld` allows one).
fn movrel<const K: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (so, dofs) = rel_offsets(c, K);
    let vals = match op.src[0] {
        Src::V(r) if K & REL_S != 0 => *c.wave.vreg(r.wrapping_add(so)),
        _ => b32(c, op, 0),
    };
    let mask = lanes(c, op);
    c.wave.write_v(op.vdst.wrapping_add(dofs), &vals, mask);
    Ok(())
}

/// `v_swaprel_b32`: swaps VGPR[D + M0[25:16]] and VGPR[S0 + M0[9:0]] in
/// the active lanes.
fn swaprel(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let Src::V(r) = op.src[0] else {
        return Err(Fault::Invalid(format!(
            "{}: the source is not a VGPR",
            op.name()
        )));
    };
    let (so, dofs) = rel_offsets(c, REL_S | REL_D | REL_2);
    let (s, d) = (r.wrapping_add(so), op.vdst.wrapping_add(dofs));
    let (sv, dv) = (*c.wave.vreg(s), *c.wave.vreg(d));
    let mask = lanes(c, op);
    c.wave.write_v(d, &sv, mask);
    c.wave.write_v(s, &dv, mask);
    Ok(())
}

/// `v_swap_b16`: swaps the 16-bit halves of D and S0 (`.h` of either by
/// op_sel[3] / op_sel[0]) in the active lanes.
fn swap16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let Src::V(r) = op.src[0] else {
        return Err(Fault::Invalid(format!(
            "{}: the source is not a VGPR",
            op.name()
        )));
    };
    let s = b16(c, op, 0);
    let dhi = op.mods.opsel & 8 != 0;
    let old_d = *c.wave.vreg(op.vdst);
    let d: [u16; 64] = std::array::from_fn(|l| (old_d[l] >> if dhi { 16 } else { 0 }) as u16);
    // D first (write_b16 places the half op_sel[3] names), then S0's half.
    write_b16(c, op, &s);
    let shi = op.mods.opsel & 1 != 0;
    let old_s = *c.wave.vreg(r);
    let new_s: Lanes = std::array::from_fn(|l| {
        if shi {
            (old_s[l] & 0xffff) | (u32::from(d[l]) << 16)
        } else {
            (old_s[l] & 0xffff_0000) | u32::from(d[l])
        }
    });
    let mask = lanes(c, op);
    c.wave.write_v(r, &new_s, mask);
    Ok(())
}

/// `s_pack_hl_b32_b16`: D = {S1[15:0], S0[31:16]}.
fn s_pack_hl(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let ap = c.env.apertures;
    let a = c.wave.read_s32(op.src[0], Width::B32, &ap);
    let b = c.wave.read_s32(op.src[1], Width::B32, &ap);
    c.wave.set_s32(op.sdst, (b << 16) | (a >> 16));
    Ok(())
}

/// `s_movrelsd_2_b32`: SGPR[D + M0[25:16]] = SGPR[S0 + M0[9:0]], each
/// index kept inside the register range its base is in (as `s_movrels`).
fn s_movrelsd_2(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    use super::super::scalar::rel_index_at;
    let m0 = c.wave.m0();
    let v = match op.src[0] {
        Src::S(b) => rel_index_at(b, 1, m0 & 0x3ff).map_or(0, |i| c.wave.s32(i)),
        _ => 0,
    };
    if op.sdst != sreg::DISCARD
        && let Some(i) = rel_index_at(op.sdst, 1, (m0 >> 16) & 0x3ff)
    {
        c.wave.set_s32(i, v);
    }
    Ok(())
}

/// `global_load_addtid_b32` / `global_store_addtid_b32`: lane `l`
/// accesses the dword at SADDR + offset + 4 * l (no VGPR address).
fn addtid<const STORE: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let ap = c.env.apertures;
    let base = match op.src[2] {
        Src::None => 0,
        s => c.wave.read_s64(s, Width::B64, &ap),
    }
    .wrapping_add(op.imm as u64);
    let exec = c.wave.exec() & c.wave.lane_mask();
    let data = match op.src[1] {
        Src::V(r) => *c.wave.vreg(r),
        _ => [0; 64],
    };
    let mut out = *c.wave.vreg(op.vdst);
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let a = base.wrapping_add(4 * l as u64);
        if STORE {
            vmem::write(c, Space::Global, l, a, &data[l].to_le_bytes())?;
        } else {
            let mut b = [0u8; 4];
            vmem::read(c, Space::Global, l, a, &mut b)?;
            out[l] = u32::from_le_bytes(b);
        }
    }
    if !STORE {
        c.wave.write_v(op.vdst, &out, exec);
    }
    Ok(())
}
