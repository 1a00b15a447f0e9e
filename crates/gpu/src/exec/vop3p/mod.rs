//! VOP3P instructions: packed 16-bit and f32 math, mixed-precision FMA,
//! dot products, AccVGPR moves and the matrix instructions (MFMA, SMFMAC,
//! with the gfx950 scaled forms).
//!
//! Lowered form: `vdst` the destination (VGPR or AGPR index), `src` the
//! sources (AGPR slots and MFMA operands resolved to VGPR or AGPR indices
//! by the row and the acc bits). `mods`: `neg` is neg_lo, `neg_hi`,
//! `opsel` (op_sel, bit i for source i), `opsel_hi` (op_sel_hi, src2's
//! from word 0 bit 14), `clamp`; for `v_fma_mix*` neg_hi is `abs`. MFMA
//! lowering is described in [`mfma`].
//!
//! Packed operand rules (ISA manual, "VOP3P instructions"): for the
//! result's low half, source i supplies its half (16-bit ops) or dword
//! (packed f32) selected by op_sel[i]; for the high half, by op_sel_hi[i].
//! neg_lo / neg_hi negate the float inputs of the low / high result.

mod dot;
mod half;
mod mfma;
mod mix;
mod pk16;
mod pk32;

use super::lower::{src_field, unsupported};
use super::op::{Ctx, ExecFn, Fault, Mods, NO_VDST, Op};
use super::wave::{AGPR0, Lanes, Src, Width, const_bits};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;
use rocjitsu_isa::gfx9::vop3p::{Kind, Tail, Vop3p};

/// The semantic function of a VOP3P mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    pk16::lookup(name)
        .or_else(|| pk32::lookup(name))
        .or_else(|| mix::lookup(name))
        .or_else(|| dot::lookup(name))
        .or_else(|| {
            Some(match name {
                "v_accvgpr_read_b32" | "v_accvgpr_write_b32" => mov_b32,
                // Alone (not fused with the MFMA that follows, see
                // [`mfma`]), the scale load has no architectural effect
                // the emulator models.
                "v_mfma_ld_scale_b32" => nop,
                _ => return None,
            })
        })
}

/// Lowers a VOP3P instruction.
pub fn lower(inst: Inst) -> Op {
    let Body::Vop3p(v) = &inst.body() else {
        return Op::new(inst, unsupported);
    };
    let v = v.clone();
    if matches!(v.tail, Tail::Scaled(_)) || v.row.kind == Kind::Mfma {
        return mfma::lower(inst, &v);
    }
    let row = v.row;
    let mut op = Op::new(inst, lookup(row.name).unwrap_or(unsupported));
    op.vdst = match (row.dst, row.dst_agpr) {
        (0, _) => NO_VDST,
        (_, true) => AGPR0 + u16::from(v.vdst),
        (_, false) => u16::from(v.vdst),
    };
    for (k, s) in row.srcs.iter().enumerate().take(3) {
        let src = src_field(v.src[k], s.n, v.literal());
        op.src[k] = match src {
            Src::V(r) if s.agpr => Src::V(AGPR0 + r),
            x => x,
        };
    }
    op.mods = mods_of(&v);
    op
}

/// The packed modifiers of a non-matrix VOP3P instruction.
fn mods_of(v: &Vop3p) -> Mods {
    let neg_hi = v.hi_bits & 7;
    let mix = v.row.kind == Kind::Mix;
    Mods {
        neg: v.neg_lo & 7,
        abs: if mix { neg_hi } else { 0 },
        neg_hi: if mix { 0 } else { neg_hi },
        opsel: (v.hi_bits >> 3) & 7,
        opsel_hi: (v.op_sel_hi & 3) | (((v.hi_bits >> 6) & 1) << 2),
        clamp: v.clamp,
        omod: 0,
    }
}

fn nop(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Ok(())
}

/// `v_accvgpr_read_b32` / `v_accvgpr_write_b32`: a 32-bit move between the
/// VGPR and AGPR halves of the file (the lowering resolved which is which).
fn mov_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = c.wave.read_v32(op.src[0], Width::B32, &c.env.apertures);
    write32(c, op, &v);
    Ok(())
}

// ---------------------------------------------------------------------------
// Operand access shared by the families.

/// How a 32-bit source container reads an inline float constant (GFX9:
/// for f16 and bf16 operands the constant fills the low half and zeros
/// the high half; integer and f32 operands read the f32 bit pattern, as
/// LLVM's assembler and SP3 model the hardware).
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum Cst {
    F16,
    Bf16,
    B32,
}

/// The 32-bit container of source `i` per lane. Integer inline constants
/// are sign-extended to 32 bits (so -1 fills both halves).
#[inline]
pub(crate) fn src32(c: &Ctx, op: &Op, i: usize, k: Cst) -> Lanes {
    let src = op.src.get(i).copied().unwrap_or(Src::None);
    let ap = &c.env.apertures;
    match src {
        Src::V(r) => *c.wave.vreg(r),
        Src::Float(_) => {
            let x = match k {
                Cst::F16 => const_bits(src, Width::B16, c.wave, ap) as u32,
                Cst::Bf16 => (const_bits(src, Width::B32, c.wave, ap) >> 16) as u32,
                Cst::B32 => const_bits(src, Width::B32, c.wave, ap) as u32,
            };
            [x; 64]
        }
        _ => [c.wave.read_s32(src, Width::B32, ap); 64],
    }
}

/// Source `i`'s two 16-bit inputs per lane: `[0]` for the low result (the
/// half op_sel[i] selects), `[1]` for the high result (op_sel_hi[i]). With
/// `float`, neg_lo[i] / neg_hi[i] flip the sign bits.
#[inline]
pub(crate) fn halves(c: &Ctx, op: &Op, i: usize, k: Cst, float: bool) -> [[u16; 64]; 2] {
    let v = src32(c, op, i, k);
    let s_lo = u32::from(op.mods.opsel >> i & 1) * 16;
    let s_hi = u32::from(op.mods.opsel_hi >> i & 1) * 16;
    let (n_lo, n_hi) = if float {
        (
            u16::from(op.mods.neg >> i & 1) << 15,
            u16::from(op.mods.neg_hi >> i & 1) << 15,
        )
    } else {
        (0, 0)
    };
    [
        std::array::from_fn(|l| (v[l] >> s_lo) as u16 ^ n_lo),
        std::array::from_fn(|l| (v[l] >> s_hi) as u16 ^ n_hi),
    ]
}

/// Writes 32-bit results to `vdst` in the active lanes.
#[inline]
pub(crate) fn write32(c: &mut Ctx, op: &Op, vals: &Lanes) {
    let exec = c.wave.exec();
    c.wave.write_v(op.vdst, vals, exec);
}

/// Writes two 16-bit results per lane (low and high half) to `vdst`.
#[inline]
pub(crate) fn write16x2(c: &mut Ctx, op: &Op, lo: &[u16; 64], hi: &[u16; 64]) {
    let r: Lanes = std::array::from_fn(|l| u32::from(lo[l]) | (u32::from(hi[l]) << 16));
    write32(c, op, &r);
}

/// The floating-point controls of MODE an instruction obeys (ISA manual,
/// "MODE register": FP_ROUND[3:0], FP_DENORM[7:4], DX10_CLAMP[8],
/// IEEE[9]).
#[derive(Copy, Clone)]
pub(crate) struct Fp {
    /// f32 denormals kept on input / output.
    pub f32_in: bool,
    pub f32_out: bool,
    /// f16 (and f64) denormals kept on input / output.
    pub f16_in: bool,
    pub f16_out: bool,
    /// f16 and f32 rounding modes (MODE.FP_ROUND fields, 0 nearest even).
    pub f16_round: u32,
    pub f32_round: u32,
    pub ieee: bool,
}

impl Fp {
    #[inline]
    pub fn of(c: &Ctx) -> Fp {
        let m = c.wave.mode;
        Fp {
            f32_in: m >> 4 & 1 != 0,
            f32_out: m >> 5 & 1 != 0,
            f16_in: m >> 6 & 1 != 0,
            f16_out: m >> 7 & 1 != 0,
            f16_round: (m >> 2) & 3,
            f32_round: m & 3,
            ieee: m >> 9 & 1 != 0,
        }
    }

    /// An f16 input as f64, flushed if MODE says so.
    #[inline]
    pub fn h_in(self, h: u16) -> f64 {
        let h = if self.f16_in { h } else { half::ftz16(h) };
        f64::from(half::f16_to_f32(h))
    }

    /// Rounds an f16 result, applying clamp and output flushing.
    #[inline]
    pub fn h_out(self, x: f64, clamp: bool) -> u16 {
        let x = if clamp { clamp01(x) } else { x };
        let h = half::f64_to_f16(x, self.f16_round);
        if self.f16_out { h } else { half::ftz16(h) }
    }

    /// Rounds the f16 result of a single add, multiply, min or max of f16
    /// values (exact in f64): through f32 when rounding to nearest even,
    /// which is then exact rounding (24 >= 2 * 11 + 2 bits).
    #[inline]
    pub fn h_out_single(self, x: f64, clamp: bool) -> u16 {
        if self.f16_round != 0 {
            return self.h_out(x, clamp);
        }
        let x = if clamp { clamp01(x) } else { x };
        let h = half::f32_to_f16_rne(x as f32);
        if self.f16_out { h } else { half::ftz16(h) }
    }

    /// An f32 input (bits), flushed if MODE says so.
    #[inline]
    pub fn s_in(self, x: u32) -> f32 {
        f32::from_bits(if self.f32_in { x } else { half::ftz32(x) })
    }

    /// An f32 result as bits, with clamp and output flushing.
    #[inline]
    pub fn s_out(self, x: f32, clamp: bool) -> u32 {
        let x = if clamp {
            if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
        } else {
            x
        };
        if self.f32_out {
            x.to_bits()
        } else {
            half::ftz32(x.to_bits())
        }
    }
}

/// Clamp to [0, 1] (NaN becomes 0), as the VALU's clamp bit does.
#[inline]
fn clamp01(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

#[cfg(test)]
mod tests {
    use crate::exec::testing::run;
    use rocjitsu_isa::Target;

    #[test]
    fn accvgpr_moves() {
        let r = run(
            Target::Gfx942,
            "v_accvgpr_write_b32 a3, v1\n\
             v_accvgpr_read_b32 v2, a3\n\
             v_accvgpr_write_b32 a4, -7\n\
             s_mov_b64 exec, 0xff\n\
             v_accvgpr_read_b32 v5, a4",
            |w, _| {
                w.v[1] = std::array::from_fn(|l| l as u32 * 3 + 1);
                w.v[5] = [9; 64];
            },
        )
        .unwrap();
        for l in 0..64 {
            assert_eq!(r.wave.v[256 + 3][l], l as u32 * 3 + 1);
            assert_eq!(r.wave.v[2][l], l as u32 * 3 + 1);
            assert_eq!(r.wave.v[256 + 4][l], (-7i32) as u32);
            assert_eq!(r.wave.v[5][l], if l < 8 { (-7i32) as u32 } else { 9 });
        }
    }

    /// Every VOP3P opcode of every target (decoded from words with VGPR
    /// operands) has semantics: executing it never reports `Unsupported`.
    #[test]
    fn every_opcode_has_semantics() {
        use crate::exec::lower::lower;
        use crate::exec::op::{Ctx, Env, Fault};
        use crate::exec::wave::{VREGS, Wave};
        use crate::mem::{Tlb, Vm};
        let mut seen = 0;
        for t in Target::ALL {
            for opc in 0..128u32 {
                // vdst v96 (0 where there is no destination), src0 v0,
                // src1 v32, src2 v64, op_sel_hi all ones.
                for vdst in [96u32, 0] {
                    let w0 = 0xd380_0000 | (opc << 16) | (1 << 14) | vdst;
                    let w1: u32 = 0x100 | (0x120 << 9) | (0x140 << 18) | (3 << 27);
                    let mut bytes = w0.to_le_bytes().to_vec();
                    bytes.extend_from_slice(&w1.to_le_bytes());
                    let Ok(inst) = rocjitsu_isa::decode(t, &bytes) else {
                        continue;
                    };
                    let name = inst.mnemonic();
                    let op = lower(inst);
                    let mut wave = Wave::new(VREGS);
                    wave.set_exec(u64::MAX);
                    let vm = Vm::new();
                    let env = Env::new(t);
                    let mut tlb = Tlb::default();
                    let mut lds = vec![0u8; 16];
                    let mut c = Ctx {
                        wave: &mut wave,
                        lds: &mut lds,
                        vm: &vm,
                        tlb: &mut tlb,
                        env: &env,
                    };
                    let r = (op.exec)(&mut c, &op);
                    assert!(
                        !matches!(r, Err(Fault::Unsupported(_))),
                        "{t:?} {name}: {r:?}"
                    );
                    seen += 1;
                    break;
                }
            }
        }
        // gfx90a, gfx942 and gfx950 have 246 VOP3P opcodes between them
        // that decode with these operands, gfx908 51 (its table rows).
        assert_eq!(seen, 246 + 51, "opcodes decoded");
    }
}
