//! The rewrite patterns: for each guest-only instruction, the checks that
//! decide whether an exact host sequence exists, and the sequence.

use super::Site;
use super::enc::{self, Seq, Src, int, v, vop1, vop2, vop3};
use crate::object::CodeObject;
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;

/// What the object guarantees about the MODE register: whether every
/// kernel starts with round-to-nearest-even and kept denormals, and whether
/// any instruction may change MODE.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ModeFacts {
    /// Every kernel starts with RNE rounding (f32 and f16/f64).
    pub rne: bool,
    /// f32 denormals: `Some(true)` every kernel keeps them (in and out),
    /// `Some(false)` every kernel flushes them, `None` mixed.
    pub f32_denorms: Option<bool>,
    /// Some instruction writes MODE (`s_setreg*`, `s_round_mode`, `s_denorm_mode`).
    pub mode_written: bool,
}

impl ModeFacts {
    pub fn of(co: &CodeObject, sites: &[Site]) -> ModeFacts {
        let ks = co.kernels();
        let rne = ks.iter().all(|k| {
            let r = &k.descriptor.compute_pgm_rsrc1;
            (r.raw >> 12) & 0xf == 0
        });
        let dm = |k: &crate::object::Kernel| (k.descriptor.compute_pgm_rsrc1.raw >> 16) & 3;
        let f32_denorms = if ks.iter().all(|k| dm(k) == 3) {
            Some(true)
        } else if ks.iter().all(|k| dm(k) == 0) {
            Some(false)
        } else {
            None
        };
        let mode_written = sites.iter().any(|s| {
            let m = s.inst.mnemonic();
            m.starts_with("s_setreg") || m == "s_round_mode" || m == "s_denorm_mode"
        });
        ModeFacts {
            rne,
            f32_denorms,
            mode_written,
        }
    }
}

/// How an instruction is rewritten: the number of temporary VGPRs and the
/// generator of its host sequence (given the first temporary).
pub(crate) struct Plan {
    pub temps: u32,
    inst: Inst,
    emitter: fn(&Inst, u32) -> Seq,
}

impl Plan {
    pub fn emit(&self, temp_base: u32) -> Seq {
        (self.emitter)(&self.inst, temp_base)
    }
}

fn plan_of(inst: &Inst, temps: u32, emitter: fn(&Inst, u32) -> Seq) -> Result<Plan, String> {
    Ok(Plan {
        temps,
        inst: *inst,
        emitter,
    })
}

/// Decides how to rewrite `inst` for gfx942, or why it cannot be.
pub(crate) fn plan(inst: &Inst, mode: &ModeFacts) -> Result<Plan, String> {
    let name = inst.mnemonic();
    let body = inst.body();
    match (name, &body) {
        ("v_bitop3_b32", Body::Vop3(i)) => {
            if i.literal.is_some() || i.clamp || i.abs_opsel_sdst & 0x78 != 0 {
                return Err("v_bitop3_b32 with a literal, clamp or op_sel has no rewrite".into());
            }
            plan_of(inst, 2, gen_bitop3_b32)
        }
        ("v_bitop3_b16", Body::Vop3(i)) => {
            if i.literal.is_some() || i.clamp {
                return Err("v_bitop3_b16 with a literal or clamp has no rewrite".into());
            }
            let opsel = (i.abs_opsel_sdst >> 3) & 0xf;
            for (k, &src) in i.src.iter().enumerate() {
                // Float inline constants read as f16 in a 16-bit operation.
                if (240..=248).contains(&src) {
                    return Err("v_bitop3_b16 with a float inline constant has no rewrite".into());
                }
                if opsel >> k & 1 != 0 && (128..=255).contains(&src) {
                    return Err("v_bitop3_b16 with op_sel on a constant has no rewrite".into());
                }
            }
            plan_of(inst, 7, gen_bitop3_b16)
        }
        ("v_cvt_pk_f16_f32", Body::Vop3(i)) => {
            if i.literal.is_some() || i.clamp || i.omod != 0 || i.abs_opsel_sdst & 0x78 != 0 {
                return Err(
                    "v_cvt_pk_f16_f32 with a literal, clamp, omod or op_sel has no rewrite".into(),
                );
            }
            if !mode.rne || mode.mode_written {
                return Err("v_cvt_pk_f16_f32 rounds to nearest even whatever MODE says; gfx942's v_cvt_f16_f32 follows MODE, and this object starts a kernel with another rounding mode or writes MODE".into());
            }
            plan_of(inst, 3, gen_cvt_pk_f16_f32)
        }
        ("v_cvt_pk_bf16_f32", Body::Vop3(i)) => {
            if i.literal.is_some() || i.clamp || i.omod != 0 || i.abs_opsel_sdst & 0x78 != 0 {
                return Err(
                    "v_cvt_pk_bf16_f32 with a literal, clamp, omod or op_sel has no rewrite".into(),
                );
            }
            if mode.mode_written || mode.f32_denorms.is_none() {
                return Err("v_cvt_pk_bf16_f32 flushes input denormals as MODE says; this object writes MODE or its kernels differ in f32 denormal mode".into());
            }
            if mode.f32_denorms == Some(true) {
                plan_of(inst, 9, gen_cvt_pk_bf16_f32_keep)
            } else {
                plan_of(inst, 9, gen_cvt_pk_bf16_f32_flush)
            }
        }
        ("v_permlane32_swap_b32_e32" | "v_permlane16_swap_b32_e32", Body::Vop(_)) => {
            plan_of(inst, 8, gen_permlane_swap)
        }
        // The e64 form's bound_ctrl and fi do not change a swap: both lanes
        // of each pair are read whatever EXEC says.
        ("v_permlane32_swap_b32_e64" | "v_permlane16_swap_b32_e64", Body::Vop3(i)) => {
            if i.src[0] < 256 || i.clamp || i.neg != 0 || i.omod != 0 {
                return Err(format!("{name} with modifiers has no rewrite"));
            }
            plan_of(inst, 8, gen_permlane_swap)
        }
        ("v_prng_b32_e32", Body::Vop(_)) => plan_of(inst, 2, gen_prng),
        ("v_prng_b32_e64", Body::Vop3(i)) => {
            if i.clamp || i.neg != 0 || i.omod != 0 || i.abs_opsel_sdst != 0 || i.literal.is_some()
            {
                return Err(format!("{name} with modifiers has no rewrite"));
            }
            plan_of(inst, 2, gen_prng)
        }
        ("ds_read_b64_tr_b16" | "ds_read_b64_tr_b8", Body::Ds(d)) => {
            if d.acc || d.gds {
                return Err(format!("{name} into AccVGPRs or GDS has no rewrite"));
            }
            let k = if name.ends_with("b16") { 4 } else { 8 };
            plan_of(inst, read_tr_group_temps(k, 4), gen_read_tr)
        }
        ("global_load_lds_dwordx4", Body::Flat(f)) => {
            if f.offset & 0x1000 != 0 {
                return Err("global_load_lds_dwordx4 with a negative offset has no rewrite".into());
            }
            let _ = f;
            plan_of(inst, 7, gen_load_lds_x4)
        }
        (_, Body::Vop3p(p)) if mfma_split(name).is_some() => {
            if p.hi_bits != 0 || p.neg_lo != 0 {
                return Err(format!("{name} with cbsz, abid or blgp has no rewrite"));
            }
            if !matches!(p.tail, rocjitsu_isa::gfx9::vop3p::Tail::None) {
                return Err(format!("{name} with a literal has no rewrite"));
            }
            let (_, chunks, regs) = mfma_split(name).unwrap_or((0, 0, 0));
            let (d, a, b) = (p.vdst as u32, p.src[0] as u32, p.src[1] as u32);
            let dn = if name.contains("32x32") { 16 } else { 4 };
            let acc_d = p.clamp;
            for (k, src, acc) in [
                (0u32, a, p.op_sel_hi & 1 != 0),
                (1, b, p.op_sel_hi & 2 != 0),
            ] {
                if src < 256 {
                    return Err(format!("{name}: source {k} is not a register"));
                }
                // The later MFMAs read their slice of A and B after the
                // first has written D: they must not overlap.
                let (lo, hi) = (src - 256 + regs, src - 256 + regs * chunks);
                if acc == acc_d && lo < d + dn && d < hi {
                    return Err(format!(
                        "{name}: D overlaps source {k}, which the split reads after D is written"
                    ));
                }
            }
            plan_of(inst, 0, gen_mfma_split)
        }
        _ => {
            let text = inst.to_string();
            let shown = text.split_whitespace().next().unwrap_or(name);
            if shown.contains("fp8") || shown.contains("bf8") || shown.contains("f8f6f4") {
                return Err(format!(
                    "`{shown}` reads or writes OCP fp8/bf8 (or fp6/fp4), which gfx942 lacks (its fp8/bf8 are FNUZ, same encodings); no exact rewrite, fails closed"
                ));
            }
            Err(format!(
                "`{shown}` has no gfx942 equivalent in the translator (fails closed rather than run wrong code)"
            ))
        }
    }
}

/// A gfx950 MFMA with a larger K than its gfx942 sibling: (the sibling's
/// VOP3P opcode, how many K slices, VGPRs per slice of A and of B).
fn mfma_split(name: &str) -> Option<(u32, u32, u32)> {
    Some(match name {
        "v_mfma_f32_32x32x16_f16" => (0x4c, 2, 2),
        "v_mfma_f32_16x16x32_f16" => (0x4d, 2, 2),
        "v_mfma_f32_32x32x16_bf16" => (0x60, 2, 2),
        "v_mfma_f32_16x16x32_bf16" => (0x61, 2, 2),
        "v_mfma_i32_32x32x32_i8" => (0x56, 2, 2),
        "v_mfma_i32_16x16x64_i8" => (0x57, 2, 2),
        _ => return None,
    })
}

/// The truth table of a `v_bitop3`: bits 2:0 in neg, 5:3 in abs, 7:6 in omod.
fn bitop3_table(i: &rocjitsu_isa::gfx9::vop3::Vop3) -> u8 {
    (i.neg & 7) | ((i.abs_opsel_sdst & 7) << 3) | ((i.omod & 3) << 6)
}

/// `D = bitop3(S0, S1, S2)` as a `v_bfi_b32` tree: the table splits on S0
/// into two functions of (S1, S2), each splits on S1 into functions of S2
/// alone (0, S2, ~S2 or ~0). `temp` and `temp+1` hold the two halves; the
/// last `v_bfi_b32` writes D, so D may be any of the sources.
fn emit_bitop3(seq: &mut Seq, vdst: u32, src: [Src; 3], table: u8, temp: u32) {
    let [s0, s1, s2] = src;
    // ~S2 is needed when some pair (S1 fixed) has the table bits 0b01.
    let need_not = (0..4).any(|k| (table >> (2 * k)) & 3 == 1);
    let not_s2 = v(temp + 1);
    if need_not {
        seq.vop1(vop1::NOT_B32, temp + 1, s2, None);
    }
    // g(bits) for S2: bits = (f(S2=1) << 1) | f(S2=0).
    let g = |bits: u8| -> Src {
        match bits {
            0 => int(0),
            1 => not_s2,
            2 => s2,
            _ => int(-1),
        }
    };
    // The function of (S1, S2) for S0 = a: table bits 4a..4a+3, index (S1<<1)|S2.
    let f = |a: u8| -> (Src, Src) {
        let t = (table >> (4 * a)) & 0xf;
        (g(t >> 2 & 3), g(t & 3))
    };
    let (f1_hi, f1_lo) = f(1);
    let (f0_hi, f0_lo) = f(0);
    // temp = F1(S1, S2) = bfi(S1, hi, lo); ~S2 in temp+1 is read by both
    // before F0 overwrites... F0 goes to temp+1 last.
    seq.vop3(vop3::BFI_B32, temp, [s1, f1_hi, f1_lo]);
    seq.vop3(vop3::BFI_B32, temp + 1, [s1, f0_hi, f0_lo]);
    seq.vop3(vop3::BFI_B32, vdst, [s0, v(temp), v(temp + 1)]);
}

fn gen_bitop3_b32(inst: &Inst, temp: u32) -> Seq {
    let Body::Vop3(i) = inst.body() else {
        unreachable!()
    };
    let mut seq = Seq::new();
    emit_bitop3(&mut seq, u32::from(i.vdst), i.src, bitop3_table(&i), temp);
    seq
}

/// The 16-bit form: sources with op_sel take their high halves (shifted
/// into temporaries), the 32-bit function is computed into a temporary, and
/// its low half written to D's low half (high half zeroed) or, with
/// op_sel[3], to D's high half (low half kept), as the VOP3 16-bit write.
fn gen_bitop3_b16(inst: &Inst, t: u32) -> Seq {
    let Body::Vop3(i) = inst.body() else {
        unreachable!()
    };
    let opsel = (i.abs_opsel_sdst >> 3) & 0xf;
    let mut seq = Seq::new();
    let mut src = i.src;
    for (k, s) in src.iter_mut().enumerate() {
        if opsel >> k & 1 != 0 {
            let tmp = t + 3 + k as u32;
            seq.vop3(vop3::LSHRREV_B32_E64, tmp, [int(16), *s, 0]);
            *s = v(tmp);
        }
    }
    emit_bitop3(&mut seq, t + 2, src, bitop3_table(&i), t);
    let d = u32::from(i.vdst);
    if opsel & 8 == 0 {
        seq.vop2(vop2::AND_B32, d, enc::LITERAL, t + 2, Some(0xffff));
    } else {
        seq.mov_lit(t + 6, 0x0504_0100);
        seq.vop3(vop3::PERM_B32, d, [v(t + 2), v(d), v(t + 6)]);
    }
    seq
}

/// `v_cvt_pk_f16_f32 D, S0, S1` as two `v_cvt_f16_f32` (same source
/// modifiers) and a byte permute; only rewritten when MODE rounds to
/// nearest even throughout.
fn gen_cvt_pk_f16_f32(inst: &Inst, t: u32) -> Seq {
    let Body::Vop3(i) = inst.body() else {
        unreachable!()
    };
    let abs = i.abs_opsel_sdst & 7;
    let mut seq = Seq::new();
    for k in 0..2 {
        seq.vop3_mods(
            vop3::CVT_F16_F32,
            t + k as u32,
            [i.src[k], 0, 0],
            abs >> k & 1,
            i.neg >> k & 1,
            0,
            false,
        );
    }
    seq.mov_lit(t + 2, 0x0504_0100);
    seq.vop3(
        vop3::PERM_B32,
        u32::from(i.vdst),
        [v(t + 1), v(t), v(t + 2)],
    );
    seq
}

/// f32 -> bf16 round to nearest even on the bits (NaNs quieted), as
/// gfx950's `v_cvt_pk_bf16_f32`: for each source, `x` (modifiers applied
/// as bit operations, denormals flushed if the kernels flush them), the
/// rounded value `x + 0x7fff + x[16]`, the quiet NaN `x | 0x400000`, and
/// the NaN mask `(0x7f800000 - |x|) >> 31` selecting between them; then
/// the high halves are packed.
fn gen_cvt_pk_bf16_f32_keep(inst: &Inst, t: u32) -> Seq {
    cvt_pk_bf16_f32(inst, t, false)
}

fn gen_cvt_pk_bf16_f32_flush(inst: &Inst, t: u32) -> Seq {
    cvt_pk_bf16_f32(inst, t, true)
}

fn cvt_pk_bf16_f32(inst: &Inst, t: u32, flush: bool) -> Seq {
    let Body::Vop3(i) = inst.body() else {
        unreachable!()
    };
    let abs = i.abs_opsel_sdst & 7;
    let mut seq = Seq::new();
    for k in 0..2u32 {
        let (x, n, r, q) = (t + 4 * k, t + 4 * k + 1, t + 4 * k + 2, t + 4 * k + 3);
        seq.mov(x, i.src[k as usize]);
        if flush {
            // x &= exponent == 0 ? 0x80000000 : ~0 (denormals to signed zero).
            seq.vop2(vop2::AND_B32, n, enc::LITERAL, x, Some(0x7f80_0000));
            seq.vop2(vop2::SUB_U32, n, int(0), n, None);
            seq.vop2(vop2::ASHRREV_I32, n, int(31), n, None);
            seq.vop2(vop2::OR_B32, n, enc::LITERAL, n, Some(0x8000_0000));
            seq.vop2(vop2::AND_B32, x, v(n), x, None);
        }
        if abs >> k & 1 != 0 {
            seq.vop2(vop2::AND_B32, x, enc::LITERAL, x, Some(0x7fff_ffff));
        }
        if i.neg >> k & 1 != 0 {
            seq.vop2(vop2::XOR_B32, x, enc::LITERAL, x, Some(0x8000_0000));
        }
        seq.vop2(vop2::AND_B32, n, enc::LITERAL, x, Some(0x7fff_ffff));
        seq.vop2(vop2::SUB_U32, n, enc::LITERAL, n, Some(0x7f80_0000));
        seq.vop2(vop2::ASHRREV_I32, n, int(31), n, None);
        seq.vop3(vop3::BFE_U32, r, [v(x), int(16), int(1)]);
        seq.vop2(vop2::ADD_U32, r, enc::LITERAL, r, Some(0x7fff));
        seq.vop2(vop2::ADD_U32, r, v(x), r, None);
        seq.vop2(vop2::OR_B32, q, enc::LITERAL, x, Some(0x40_0000));
        seq.vop3(vop3::BFI_B32, r, [v(n), v(q), v(r)]);
    }
    seq.mov_lit(t + 8, 0x0706_0302);
    seq.vop3(
        vop3::PERM_B32,
        u32::from(i.vdst),
        [v(t + 6), v(t + 2), v(t + 8)],
    );
    seq
}

/// Saves EXEC in lanes 0 and 1 of VGPR `e` and makes every lane active, so
/// that cross-lane reads see lanes the guest instruction reads regardless
/// of EXEC. `v_writelane` ignores EXEC and `s_mov_b64` leaves SCC alone.
fn exec_all(seq: &mut Seq, e: u32) {
    seq.vop3(vop3::WRITELANE_B32, e, [enc::EXEC_LO, int(0), 0]);
    seq.vop3(vop3::WRITELANE_B32, e, [enc::EXEC_HI, int(1), 0]);
    seq.raw(&[enc::S_MOV_B64_EXEC_ALL]);
}

/// Restores EXEC from lanes 0 and 1 of VGPR `e` (`v_readlane` into
/// exec_lo/hi), then waits out the VALU-writes-EXEC hazard.
fn exec_restore(seq: &mut Seq, e: u32) {
    seq.vop3(
        vop3::READLANE_B32,
        u32::from(enc::EXEC_LO),
        [v(e), int(0), 0],
    );
    seq.vop3(
        vop3::READLANE_B32,
        u32::from(enc::EXEC_HI),
        [v(e), int(1), 0],
    );
    seq.raw(&[enc::s_nop(4)]);
}

/// `v_permlane{16,32}_swap_b32 D, S`: with every lane active, P = S of the
/// partner lane (`l ^ 16` or `l ^ 32`) and Q = D of the partner lane
/// (`ds_bpermute_b32`); the lane-half mask M (bit 4 or 5 of the lane id)
/// picks D' = M ? P : D and S' = M ? S : Q; both are written back under the
/// guest's EXEC.
fn gen_permlane_swap(inst: &Inst, t: u32) -> Seq {
    let (w0, w1) = (inst.word(0), inst.word(1));
    let (s, d) = if inst.len() == 4 {
        (w0 & 0xff, (w0 >> 17) & 0xff)
    } else {
        (w1 & 0xff, w0 & 0xff)
    };
    let half = if inst.mnemonic().starts_with("v_permlane32") {
        32
    } else {
        16
    };
    let bit = if half == 32 { 5 } else { 4 };
    let (e, l, a, p, q, m, nd, ns) = (t, t + 1, t + 2, t + 3, t + 4, t + 5, t + 6, t + 7);
    let mut seq = Seq::new();
    exec_all(&mut seq, e);
    seq.lane_id(l);
    seq.vop2(vop2::XOR_B32, a, int(half), l, None);
    seq.vop2(vop2::LSHLREV_B32, a, int(2), a, None);
    seq.ds(enc::ds::BPERMUTE_B32, p, a, s, 0, 0);
    seq.ds(enc::ds::BPERMUTE_B32, q, a, d, 0, 0);
    seq.vop3(vop3::BFE_I32, m, [v(l), int(bit), int(1)]);
    seq.raw(&[enc::S_WAITCNT_LGKM0]);
    seq.vop3(vop3::BFI_B32, nd, [v(m), v(p), v(d)]);
    seq.vop3(vop3::BFI_B32, ns, [v(m), v(s), v(q)]);
    exec_restore(&mut seq, e);
    seq.mov(d, v(nd));
    seq.mov(s, v(ns));
    seq
}

/// `ds_read_b64_tr_b16/b8 D, A offset:o`: destination lane l's element n is
/// element `l % k` of the 64 bits at source lane `(l & 48) + (l / k) % g +
/// g * n` (k elements per lane, g = 16 / k). With every lane active, each
/// element's address is the source lane's address (`ds_bpermute_b32`) plus
/// the element's byte offset; `ds_read_u16`/`ds_read_u8` load it and the
/// elements are packed; D is written under the guest's EXEC.
fn gen_read_tr(inst: &Inst, t: u32) -> Seq {
    read_tr_group(std::slice::from_ref(inst), t)
}

/// Temporaries of a group of `n` transposing loads of `k` elements.
pub(crate) fn read_tr_group_temps(k: u32, n: u32) -> u32 {
    5 + k * n
}

/// Whether `next` may join a group of transposing loads `group` (same
/// kind, at most 4, and no earlier destination feeds a later address: the
/// group writes its destinations at the end).
pub(crate) fn read_tr_joins(group: &[Inst], next: &Inst) -> bool {
    let kind = |i: &Inst| i.mnemonic();
    if group.len() >= 4 || group.first().is_none_or(|g| kind(g) != kind(next)) {
        return false;
    }
    let Body::Ds(n) = next.body() else {
        return false;
    };
    group.iter().all(|g| match g.body() {
        Body::Ds(d) => n.addr != d.vdst && n.addr != d.vdst.wrapping_add(1),
        _ => false,
    })
}

/// A run of consecutive transposing loads of one kind in one sequence:
/// EXEC saved and the lane arithmetic done once, every address fetched, one
/// wait, every element loaded, one wait, then the destinations written in
/// order under the guest's EXEC.
pub(crate) fn read_tr_group(insts: &[Inst], t: u32) -> Seq {
    let b16 = insts[0].mnemonic().ends_with("b16");
    let (k, g, esize): (u32, u32, u32) = if b16 { (4, 4, 2) } else { (8, 2, 1) };
    let (e, l, q, x, off) = (t, t + 1, t + 2, t + 3, t + 4);
    let slot = |i: u32, n: u32| t + 5 + i * k + n;
    let ds: Vec<_> = insts
        .iter()
        .map(|i| match i.body() {
            Body::Ds(d) => d,
            _ => unreachable!("a transposing load"),
        })
        .collect();
    let mut seq = Seq::new();
    exec_all(&mut seq, e);
    seq.lane_id(l);
    // q = ((l & 48) + (l / k) % g) * 4: the first source lane's byte index.
    seq.vop2(vop2::AND_B32, q, int(48), l, None);
    seq.vop3(
        vop3::BFE_U32,
        x,
        [
            v(l),
            int(k.trailing_zeros() as i32),
            int(g.trailing_zeros() as i32),
        ],
    );
    seq.vop2(vop2::OR_B32, q, v(q), x, None);
    seq.vop2(vop2::LSHLREV_B32, q, int(2), q, None);
    // The element's byte offset in its source lane's data: (l % k) * size.
    seq.vop2(vop2::AND_B32, off, int(k as i32 - 1), l, None);
    if esize == 2 {
        seq.vop2(vop2::LSHLREV_B32, off, int(1), off, None);
    }
    for (i, d) in ds.iter().enumerate() {
        for n in 0..k {
            let a = slot(i as u32, n);
            seq.ds(
                enc::ds::BPERMUTE_B32,
                a,
                q,
                u32::from(d.addr),
                0,
                (4 * g * n) as u16,
            );
        }
    }
    seq.raw(&[enc::S_WAITCNT_LGKM0]);
    let rd = if b16 {
        enc::ds::READ_U16
    } else {
        enc::ds::READ_U8
    };
    for (i, d) in ds.iter().enumerate() {
        for n in 0..k {
            let a = slot(i as u32, n);
            seq.vop2(vop2::ADD_U32, a, v(a), off, None);
            seq.ds(rd, a, a, 0, 0, d.offset);
        }
    }
    seq.raw(&[enc::S_WAITCNT_LGKM0]);
    // Pack: dword j holds elements j*k/2 .. (j+1)*k/2.
    let per = k / 2;
    for i in 0..ds.len() as u32 {
        for j in 0..2 {
            let base = slot(i, j * per);
            for n in 1..per {
                seq.vop3(
                    vop3::LSHL_OR_B32,
                    base,
                    [
                        v(slot(i, j * per + n)),
                        int((n * 8 * esize) as i32),
                        v(base),
                    ],
                );
            }
        }
    }
    exec_restore(&mut seq, e);
    for (i, d) in ds.iter().enumerate() {
        let dst = u32::from(d.vdst);
        seq.mov(dst, v(slot(i as u32, 0)));
        seq.mov(dst + 1, v(slot(i as u32, per)));
    }
    seq
}

/// `global_load_lds_dwordx4 A, off|S offset:o`: lane l's 16 bytes go to LDS
/// at `M0 + o + 16 l`. As `global_load_dwordx4` into four temporaries (same
/// address, offset and cache bits), `s_waitcnt vmcnt(0)`, the LDS address
/// from M0 and the lane id, `ds_write_b128` (offset o) and `s_waitcnt
/// lgkmcnt(0)`: the data is in LDS when the sequence ends, which only makes
/// the guest's later `s_waitcnt vmcnt` waits conservative.
fn gen_load_lds_x4(inst: &Inst, t: u32) -> Seq {
    let w0 = inst.word(0);
    let w1 = inst.word(1);
    let offset = w0 & 0xfff;
    let data = t; // t .. t+3, 4-aligned
    let (m, l) = (t + 4, t + 5);
    let mut seq = Seq::new();
    let nw0 = (w0 & !(0x7f << 18)) | (enc::flat::GLOBAL_LOAD_DWORDX4 << 18);
    let nw1 = (w1 & 0x00ff_ffff) | (data & 0xff) << 24;
    seq.raw(&[nw0, nw1]);
    seq.mov(m, enc::M0);
    seq.lane_id(l);
    seq.vop3(vop3::LSHL_ADD_U32, m, [v(l), int(4), v(m)]);
    seq.raw(&[enc::S_WAITCNT_VM0]);
    seq.ds(enc::ds::WRITE_B128, 0, m, data, 0, offset as u16);
    seq.raw(&[enc::S_WAITCNT_LGKM0]);
    seq
}

/// A larger-K gfx950 MFMA as gfx942 MFMAs over K slices: slice c takes
/// VGPRs `c*r .. c*r + r` of A and of B (the same K subset for both, as
/// the A and B lane layouts are symmetric), the first accumulates onto C,
/// the rest onto D.
fn gen_mfma_split(inst: &Inst, _t: u32) -> Seq {
    let (w0, w1) = (inst.word(0), inst.word(1));
    let (op, chunks, regs) = mfma_split(inst.mnemonic()).unwrap_or((0, 1, 0));
    let d = w0 & 0xff;
    let acc_cd = w0 & 0x8000 != 0;
    let (a, b, c) = (w1 & 0x1ff, (w1 >> 9) & 0x1ff, (w1 >> 18) & 0x1ff);
    let mut seq = Seq::new();
    for k in 0..chunks {
        let src2 = if k == 0 { c } else { 256 + d };
        let nw0 = (w0 & !(0x7f << 16)) | op << 16;
        let nw1 = (w1 & !0x07ff_ffff) | (src2 << 18) | ((b + k * regs) << 9) | (a + k * regs);
        seq.raw(&[nw0, nw1]);
    }
    let _ = acc_cd;
    // The guest's wait states after the MFMA were counted for gfx950's
    // latency; 20 more cover the longest gfx942 XDL write -> VALU read
    // (18 for 16 passes) on hardware. The emulator has no hazards.
    seq.raw(&[enc::s_nop(7), enc::s_nop(7), enc::s_nop(3)]);
    seq
}

/// `v_prng_b32 D, S`: one step of the 32-bit LFSR, `S << 1 ^ (S < 0 ? 197 :
/// 0)` (taps 0xc5), from the source moved into a temporary.
fn gen_prng(inst: &Inst, t: u32) -> Seq {
    let (w0, w1) = (inst.word(0), inst.word(1));
    let (src, d, lit) = if inst.encoding() == rocjitsu_isa::gfx9::Encoding::Vop1 {
        (
            (w0 & 0x1ff) as Src,
            (w0 >> 17) & 0xff,
            (inst.len() == 8).then_some(w1),
        )
    } else {
        ((w1 & 0x1ff) as Src, w0 & 0xff, None)
    };
    let mut seq = Seq::new();
    seq.vop1(vop1::MOV_B32, t, src, lit);
    seq.vop2(vop2::ASHRREV_I32, t + 1, int(31), t, None);
    seq.vop2(vop2::AND_B32, t + 1, enc::LITERAL, t + 1, Some(0xc5));
    seq.vop2(vop2::LSHLREV_B32, t, int(1), t, None);
    seq.vop2(vop2::XOR_B32, d, v(t), t + 1, None);
    seq
}
