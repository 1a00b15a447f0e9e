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
    /// Every kernel starts with f32 denormals kept (in and out).
    pub f32_denorms: bool,
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
        let f32_denorms = ks
            .iter()
            .all(|k| (k.descriptor.compute_pgm_rsrc1.raw >> 16) & 3 == 3);
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
pub(crate) fn plan(inst: &Inst, _mode: &ModeFacts) -> Result<Plan, String> {
    let name = inst.mnemonic();
    match (name, inst.body()) {
        ("v_bitop3_b32", Body::Vop3(i)) => {
            if i.literal.is_some() || i.clamp || i.abs_opsel_sdst & 0x78 != 0 {
                return Err("v_bitop3_b32 with a literal, clamp or op_sel has no rewrite".into());
            }
            plan_of(inst, 2, gen_bitop3_b32)
        }
        _ => Err(format!(
            "`{name}` has no gfx942 equivalent in the translator (fails closed rather than run wrong code)"
        )),
    }
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

#[allow(dead_code)]
fn unused() {
    let _ = (enc::LITERAL, vop2::AND_B32);
}
