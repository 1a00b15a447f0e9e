//! The matrix instructions' glue: lowering MFMA / SMFMAC operands to
//! register ranges and running them with [`crate::mfma`].
//!
//! Lowered form: `vdst` the first register of D (an AGPR when acc_cd, word
//! 0 bit 15, is set); `src[0]` / `src[1]` the first registers of A and B
//! (AGPRs when their acc bit, op_sel_hi[0] / [1], is set); `src[2]` the
//! first register of C (an AGPR with acc_cd), or an inline constant that
//! fills every element of C, or for SMFMAC the sparsity-index VGPR (C is
//! D). `mods.opsel` is CBSZ, `mods.opsel_hi` ABID, `mods.neg` BLGP (the
//! neg bits of the f64 forms). `imm` packs the operand widths in
//! registers: A in bits 7:0, B in 15:8, C/D in 23:16, the index of the
//! instruction in [`mfma::ALL`] from bit 32; bit 24 marks a gfx950
//! `v_mfma_scale_*` pair, whose scale operands (VGPRs of the
//! `v_mfma_ld_scale_b32` half, E8M0 byte chosen by op_sel | op_sel_hi << 1)
//! are read from `inst` when it executes.
//!
//! MFMA reads all 64 lanes of its operands and writes all 64 lanes of D:
//! it does not look at EXEC (compilers issue it with EXEC all ones).

use super::AGPR0;
use crate::exec::lower::src_field;
use crate::exec::op::{Ctx, Fault, Mods, NO_VDST, Op};
use crate::exec::wave::{Lanes, Src, Width, const_bits};
use crate::mfma::{self, MfmaMods};
use rocjitsu_isa::gfx9::Body;
use rocjitsu_isa::gfx9::vop3p::{Kind, Tail, Vop3p};
use rocjitsu_isa::{Inst, Target};

/// `imm` bit marking a scaled pair.
const SCALED: i64 = 1 << 24;

/// The inner MFMA of a gfx950 `v_mfma_scale_*` pair, without the abid
/// bit that marks the pair.
fn scaled_inner(v: &Vop3p) -> Option<Vop3p> {
    let Tail::Scaled(m) = &v.tail else {
        return None;
    };
    let [w0, w1] = m.words;
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&(w0 & !(0xf << 11)).to_le_bytes());
    bytes[4..].copy_from_slice(&w1.to_le_bytes());
    match rocjitsu_isa::decode(Target::Gfx950, &bytes).ok()?.body() {
        Body::Vop3p(m) => Some(m),
        _ => None,
    }
}

/// Lowers an MFMA, SMFMAC or scaled MFMA pair.
pub fn lower(inst: Inst, v: &Vop3p) -> Op {
    let (m, scaled) = match scaled_inner(v) {
        Some(m) => (m, true),
        None => (v.clone(), false),
    };
    let row = m.row;
    let name = if scaled {
        format!("v_mfma_scale_{}", row.name.trim_start_matches("v_mfma_"))
    } else {
        row.name.to_string()
    };
    let target = inst.target();
    let mut op = Op::new(inst, run);
    let info = match info_index(target, &name) {
        Some(i) if row.kind == Kind::Mfma => i,
        _ => {
            op.exec = super::unsupported;
            return op;
        }
    };
    let acc_cd = m.clamp;
    op.vdst = match row.dst {
        0 => NO_VDST,
        _ if acc_cd || row.dst_agpr => AGPR0 + u16::from(m.vdst),
        _ => u16::from(m.vdst),
    };
    let mut widths = [0u8; 3];
    for (i, s) in row.srcs.iter().enumerate().take(3) {
        let n = m.width(i, s);
        widths[i] = n;
        let agpr = match i {
            0 | 1 => s.agpr || m.op_sel_hi >> i & 1 != 0,
            // The SMFMAC index (a single VGPR) never is an AGPR.
            _ => s.agpr || (acc_cd && s.n > 1),
        };
        let src = src_field(m.src[i], n, m.literal());
        op.src[i] = match src {
            Src::V(r) if agpr => Src::V(AGPR0 + r),
            x => x,
        };
    }
    op.mods = Mods {
        opsel: m.hi_bits & 7,
        opsel_hi: (m.hi_bits >> 3) & 15,
        neg: m.neg_lo & 7,
        ..Mods::default()
    };
    op.imm = i64::from(widths[0])
        | (i64::from(widths[1]) << 8)
        | (i64::from(row.dst) << 16)
        | if scaled { SCALED } else { 0 }
        | ((info as i64) << 32);
    op
}

/// The index in [`mfma::ALL`] of the instruction `name` on `t`.
fn info_index(t: Target, name: &str) -> Option<usize> {
    let info = mfma::lookup_for(t, name)?;
    mfma::ALL.iter().position(|x| std::ptr::eq(x, info))
}

/// The registers `[r, r + n)` of the wave's file, if they lie within one
/// half (VGPRs or AGPRs).
#[inline]
fn regs<'a>(c: &'a Ctx<'_>, r: u16, n: usize) -> Result<&'a [Lanes], Fault> {
    let start = usize::from(r);
    let end = start + n;
    let half_end = if start < usize::from(AGPR0) { 256 } else { 512 };
    if end > half_end {
        return Err(Fault::Invalid(format!(
            "matrix operand register range {start}..{end} runs past the end of its register file"
        )));
    }
    c.wave.v.get(start..end).ok_or_else(|| {
        Fault::Invalid(format!(
            "matrix operand registers {start}..{end} do not exist"
        ))
    })
}

/// A matrix operand of `n` registers: a register range, or scalar
/// registers / a constant broadcast into `tmp` (a constant fills every
/// element; with `f64`, every 64-bit element of register pairs).
fn operand<'a>(
    c: &'a Ctx<'_>,
    src: Src,
    n: usize,
    f64: bool,
    tmp: &'a mut [Lanes],
) -> Result<&'a [Lanes], Fault> {
    if let Src::V(r) = src {
        return regs(c, r, n);
    }
    let tmp = tmp
        .get_mut(..n)
        .ok_or_else(|| Fault::Invalid(format!("matrix operand of {n} registers")))?;
    let ap = &c.env.apertures;
    match src {
        Src::S(s) => {
            for (k, t) in tmp.iter_mut().enumerate() {
                *t = [c.wave.s32(s.wrapping_add(k as u8)); 64];
            }
        }
        Src::None => return Err(Fault::Invalid("missing matrix operand".into())),
        _ => {
            let v = if f64 {
                const_bits(src, Width::F64, c.wave, ap)
            } else {
                u64::from(c.wave.read_s32(src, Width::B32, ap))
            };
            for (k, t) in tmp.iter_mut().enumerate() {
                let x = if f64 && k % 2 == 1 { v >> 32 } else { v };
                *t = [x as u32; 64];
            }
        }
    }
    Ok(tmp)
}

/// The scale operands of a `v_mfma_scale_*` pair: the `v_mfma_ld_scale_b32`
/// half's two sources, each with the byte op_sel | op_sel_hi << 1 selects.
fn scales(c: &Ctx, op: &Op) -> Option<[(Lanes, u8); 2]> {
    let Some(Body::Vop3p(v)) = op.gfx9().map(|i| i.body()) else {
        return None;
    };
    let ap = &c.env.apertures;
    let one = |i: usize| {
        let src = src_field(v.src[i], 1, v.literal());
        let sel = ((v.hi_bits >> (3 + i)) & 1) | (((v.op_sel_hi >> i) & 1) << 1);
        (c.wave.read_v32(src, Width::B32, ap), sel)
    };
    Some([one(0), one(1)])
}

/// Runs the matrix instruction (see the module docs).
fn run(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let idx = (op.imm >> 32) as usize;
    let info = mfma::ALL.get(idx).ok_or(Fault::Unsupported(op.name()))?;
    let (na, nb, ncd) = (
        (op.imm & 0xff) as usize,
        ((op.imm >> 8) & 0xff) as usize,
        ((op.imm >> 16) & 0xff) as usize,
    );
    let m = op.mods;
    let mut mods = MfmaMods {
        cbsz: m.opsel,
        abid: m.opsel_hi,
        blgp: if info.neg { 0 } else { m.neg },
        neg: if info.neg { m.neg } else { 0 },
        scale_a: None,
        scale_b: None,
    };
    if op.imm & SCALED != 0
        && let Some([sa, sb]) = scales(c, op)
    {
        mods.scale_a = Some(sa);
        mods.scale_b = Some(sb);
    }
    let f64 = info.cd == mfma::Elem::F64;
    let err = |e: mfma::MfmaError| Fault::Invalid(e.to_string());
    // A and B are copied out (at most 8 registers) so that the result can be
    // written into the register file in place; nothing is zeroed first.
    let (mut ta, mut tb) = (Operand::new(), Operand::new());
    operand_into(c, op.src[0], na, false, &mut ta)?;
    operand_into(c, op.src[1], nb, false, &mut tb)?;
    let (a, b) = (ta.get(), tb.get());
    regs(c, op.vdst, ncd)?;
    let start = usize::from(op.vdst);
    if info.sparse {
        let Src::V(ir) = op.src[2] else {
            return Err(Fault::Invalid("SMFMAC index is not a VGPR".into()));
        };
        let idx = *regs(c, ir, 1)?.first().unwrap_or(&[0; 64]);
        let cd = c
            .wave
            .v
            .get_mut(start..start + ncd)
            .ok_or(Fault::Unsupported(op.name()))?;
        return mfma::execute_smfmac(info, &mods, a, b, &idx, cd).map_err(err);
    }
    if op.src[2] == Src::V(op.vdst) {
        // Accumulate in place (D = C), the common form.
        let cd = c
            .wave
            .v
            .get_mut(start..start + ncd)
            .ok_or(Fault::Unsupported(op.name()))?;
        return mfma::execute_in_place(info, &mods, a, b, cd).map_err(err);
    }
    let mut tc = [[0u32; 64]; MAX_CD];
    let mut d = [[0u32; 64]; MAX_CD];
    let d = d
        .get_mut(..ncd)
        .ok_or_else(|| Fault::Invalid(format!("{}: {ncd} result registers", op.name())))?;
    let cm = operand(c, op.src[2], ncd, f64, &mut tc)?;
    mfma::execute(info, &mods, a, b, cm, d).map_err(err)?;
    if let Some(dst) = c.wave.v.get_mut(start..start + ncd) {
        dst.copy_from_slice(d);
    }
    Ok(())
}

/// An A or B operand copied out of the register file.
struct Operand {
    regs: [std::mem::MaybeUninit<Lanes>; MAX_AB],
    n: usize,
}

impl Operand {
    fn new() -> Operand {
        Operand {
            regs: [std::mem::MaybeUninit::uninit(); MAX_AB],
            n: 0,
        }
    }

    fn get(&self) -> &[Lanes] {
        let init = self.regs.get(..self.n).unwrap_or(&[]);
        // SAFETY: `operand_into` initialised the first `n` entries, and
        // MaybeUninit<Lanes> has the layout of Lanes.
        unsafe { &*(init as *const [std::mem::MaybeUninit<Lanes>] as *const [Lanes]) }
    }
}

/// Copies an `n`-register A/B operand into `out`.
fn operand_into(c: &Ctx, src: Src, n: usize, f64: bool, out: &mut Operand) -> Result<(), Fault> {
    if n > MAX_AB {
        return Err(Fault::Invalid(format!("matrix operand of {n} registers")));
    }
    let vals: &[Lanes] = if let Src::V(r) = src {
        regs(c, r, n)?
    } else {
        let mut t = [[0u32; 64]; MAX_AB];
        operand(c, src, n, f64, &mut t)?;
        for (k, v) in t.iter().take(n).enumerate() {
            out.regs[k] = std::mem::MaybeUninit::new(*v);
        }
        out.n = n;
        return Ok(());
    };
    for (k, v) in vals.iter().enumerate() {
        out.regs[k] = std::mem::MaybeUninit::new(*v);
    }
    out.n = n;
    Ok(())
}

/// The most registers an A/B operand and a C/D operand have.
const MAX_AB: usize = 8;
const MAX_CD: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::testing::assemble;

    fn lower_asm(t: Target, asm: &str) -> Op {
        let bytes = assemble(t, asm);
        let inst = rocjitsu_isa::decode(t, &bytes).unwrap();
        crate::exec::lower::lower(inst)
    }

    #[test]
    fn operands_resolve_to_vgpr_or_agpr_ranges() {
        let op = lower_asm(
            Target::Gfx942,
            "v_mfma_f32_32x32x8_f16 a[4:19], a[10:11], v[20:21], a[30:45] cbsz:1 abid:8 blgp:2",
        );
        assert_eq!(op.vdst, AGPR0 + 4);
        assert_eq!(op.src, [Src::V(AGPR0 + 10), Src::V(20), Src::V(AGPR0 + 30)]);
        assert_eq!((op.mods.opsel, op.mods.opsel_hi, op.mods.neg), (1, 8, 2));
        assert_eq!(op.imm & 0xffff_ffff, 2 | (2 << 8) | (16 << 16));

        let op = lower_asm(
            Target::Gfx942,
            "v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], 1.0",
        );
        assert_eq!(op.vdst, 0);
        assert!(matches!(op.src[2], Src::Float(_)));

        // gfx950 f8f6f4: fp6 A (cbsz:2) is 6 registers, fp4 B (blgp:4) 4.
        let op = lower_asm(
            Target::Gfx950,
            "v_mfma_f32_16x16x128_f8f6f4 v[4:7], v[10:15], v[20:23], v[30:33] cbsz:2 blgp:4",
        );
        assert_eq!(op.imm & 0xffff_ffff, 6 | (4 << 8) | (4 << 16));

        // SMFMAC: src[2] is the index VGPR even with AGPR C/D.
        let op = lower_asm(
            Target::Gfx942,
            "v_smfmac_f32_16x16x32_f16 a[0:3], v[4:5], v[6:9], v10 cbsz:1 abid:1",
        );
        assert_eq!(op.vdst, AGPR0);
        assert_eq!(op.src[2], Src::V(10));
    }

    #[test]
    fn scaled_pair_lowers_the_inner_mfma() {
        let op = lower_asm(
            Target::Gfx950,
            "v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], a[4:11], v[12:19], a[0:3], v20, v21 op_sel_hi:[0,0,0]",
        );
        assert_eq!(op.len, 16);
        assert_eq!(op.vdst, AGPR0);
        assert_eq!(op.src, [Src::V(AGPR0 + 4), Src::V(12), Src::V(AGPR0)]);
        assert_eq!(op.imm & 0xffff_ffff, 8 | (8 << 8) | (4 << 16) | SCALED);
        assert_eq!(
            mfma::ALL[(op.imm >> 32) as usize].name,
            "v_mfma_scale_f32_16x16x128_f8f6f4"
        );
    }

    // End to end: operands in registers, D compared with a CPU matmul. The
    // register layouts are AMD's matrix instruction calculator's (CDNA ISA,
    // "Matrix Arithmetic Instructions"; spot-checked with its
    // `--get-register`), written out here independently of
    // `crate::mfma::layout`. Values are small integers so that every sum is
    // exact whatever the accumulation order.

    use crate::exec::testing::run;
    use crate::float::{Rounding, f32_to_f16};

    /// A deterministic small integer in -4..=4.
    fn small(x: usize) -> i32 {
        ((x * 7 + x / 3) % 9) as i32 - 4
    }

    fn f16_bits(x: i32) -> u32 {
        u32::from(f32_to_f16(x as f32, Rounding::NearestEven))
    }

    /// v_mfma_f32_32x32x8_f16 with B in AGPRs (acc bit) and C/D in AGPRs
    /// (acc_cd). Layout: A[i][k] in lane i + 32*(k/4), f16 slot k%4 of the
    /// register pair; B[k][j] in lane j + 32*(k/4), slot k%4; D[i][j] in
    /// register 4*(i/8) + i%4, lane j + 32*((i/4)%2).
    #[test]
    fn mfma_f32_32x32x8_f16_end_to_end() {
        let a = |i: usize, k: usize| small(i * 8 + k);
        let b = |k: usize, j: usize| small(k * 32 + j + 5);
        let cm = |i: usize, j: usize| small(i + 3 * j) * 10;
        let r = run(
            Target::Gfx942,
            "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], a[16:17], a[0:15]",
            |w, _| {
                for l in 0..64 {
                    for e in 0..4 {
                        let k = 4 * (l / 32) + e;
                        let (reg, sh) = (e / 2, 16 * (e % 2));
                        w.v[reg][l] |= f16_bits(a(l % 32, k)) << sh;
                        w.v[256 + 16 + reg][l] |= f16_bits(b(k, l % 32)) << sh;
                    }
                }
                for i in 0..32 {
                    for j in 0..32 {
                        let reg = 4 * (i / 8) + i % 4;
                        let lane = j + 32 * ((i / 4) % 2);
                        w.v[256 + reg][lane] = (cm(i, j) as f32).to_bits();
                    }
                }
            },
        )
        .unwrap();
        for i in 0..32 {
            for j in 0..32 {
                let want: i32 = cm(i, j) + (0..8).map(|k| a(i, k) * b(k, j)).sum::<i32>();
                let reg = 4 * (i / 8) + i % 4;
                let lane = j + 32 * ((i / 4) % 2);
                let got = f32::from_bits(r.wave.v[256 + reg][lane]);
                assert_eq!(got, want as f32, "D[{i}][{j}]");
            }
        }
    }

    /// gfx90a v_mfma_i32_32x32x8i8 (same layout, one register of four i8
    /// per lane) into VGPRs, with C overlapping D.
    #[test]
    fn mfma_i32_32x32x8i8_end_to_end() {
        let a = |i: usize, k: usize| small(i * 8 + k) * 30;
        let b = |k: usize, j: usize| small(k * 32 + j + 1) * 31;
        let cm = |i: usize, j: usize| small(i * 5 + j) * 100_000;
        let r = run(
            Target::Gfx90a,
            "v_mfma_i32_32x32x8i8 v[4:19], v0, v1, v[4:19]",
            |w, _| {
                for l in 0..64 {
                    for e in 0..4 {
                        let k = 4 * (l / 32) + e;
                        w.v[0][l] |= (a(l % 32, k) as u8 as u32) << (8 * e);
                        w.v[1][l] |= (b(k, l % 32) as u8 as u32) << (8 * e);
                    }
                }
                for i in 0..32 {
                    for j in 0..32 {
                        w.v[4 + 4 * (i / 8) + i % 4][j + 32 * ((i / 4) % 2)] = cm(i, j) as u32;
                    }
                }
            },
        )
        .unwrap();
        for i in 0..32 {
            for j in 0..32 {
                let want: i32 = cm(i, j) + (0..8).map(|k| a(i, k) * b(k, j)).sum::<i32>();
                let got = r.wave.v[4 + 4 * (i / 8) + i % 4][j + 32 * ((i / 4) % 2)] as i32;
                assert_eq!(got, want, "D[{i}][{j}]");
            }
        }
    }

    /// f64 16x16x4: A[i][k] in lane i + 16*k, B[k][j] in lane j + 16*k (one
    /// f64 per lane), D[i][j] in register pair 2*(i/4), lane j + 16*(i%4).
    /// gfx90a with an inline constant C; gfx942 with neg:[1,0,1].
    #[test]
    fn mfma_f64_16x16x4_end_to_end() {
        let a = |i: usize, k: usize| f64::from(small(i * 4 + k)) * 0.5;
        let b = |k: usize, j: usize| f64::from(small(k * 16 + j + 2)) * 0.25;
        let cm = |i: usize, j: usize| f64::from(small(i + 7 * j)) * 8.0;
        let setup = |w: &mut crate::exec::Wave| {
            for l in 0..64 {
                let (x, y) = (a(l % 16, l / 16).to_bits(), b(l / 16, l % 16).to_bits());
                w.v[8][l] = x as u32;
                w.v[9][l] = (x >> 32) as u32;
                w.v[10][l] = y as u32;
                w.v[11][l] = (y >> 32) as u32;
            }
            for i in 0..16 {
                for j in 0..16 {
                    let z = cm(i, j).to_bits();
                    let (reg, lane) = (12 + 2 * (i / 4), j + 16 * (i % 4));
                    w.v[reg][lane] = z as u32;
                    w.v[reg + 1][lane] = (z >> 32) as u32;
                }
            }
        };
        let r90 = run(
            Target::Gfx90a,
            "v_mfma_f64_16x16x4f64 v[0:7], v[8:9], v[10:11], 1.0",
            |w, _| setup(w),
        )
        .unwrap();
        let r942 = run(
            Target::Gfx942,
            "v_mfma_f64_16x16x4_f64 v[0:7], v[8:9], v[10:11], v[12:19] neg:[1,0,1]",
            |w, _| setup(w),
        )
        .unwrap();
        let get = |w: &crate::exec::Wave, i: usize, j: usize| {
            let (reg, lane) = (2 * (i / 4), j + 16 * (i % 4));
            f64::from_bits(u64::from(w.v[reg][lane]) | (u64::from(w.v[reg + 1][lane]) << 32))
        };
        for i in 0..16 {
            for j in 0..16 {
                let ab: f64 = (0..4).map(|k| a(i, k) * b(k, j)).sum();
                assert_eq!(get(&r90.wave, i, j), 1.0 + ab, "gfx90a D[{i}][{j}]");
                assert_eq!(get(&r942.wave, i, j), -cm(i, j) - ab, "gfx942 D[{i}][{j}]");
            }
        }
    }

    /// v_smfmac_f32_16x16x32_f16 with B all ones: whatever the sparsity
    /// indices select, D[i][j] = C[i][j] + the sum of row i's stored A
    /// values, which lie in the lanes l with l % 16 == i (two registers of
    /// two f16 each). D[i][j] is in register i % 4, lane 16*(i/4) + j.
    #[test]
    fn smfmac_accumulates_in_place_end_to_end() {
        let a = |l: usize, e: usize| small(l * 4 + e);
        let cm = |i: usize, j: usize| small(i * 16 + j) * 3;
        let r = run(
            Target::Gfx942,
            "v_smfmac_f32_16x16x32_f16 v[0:3], v[4:5], v[6:9], v10",
            |w, _| {
                for l in 0..64 {
                    for e in 0..4 {
                        w.v[4 + e / 2][l] |= f16_bits(a(l, e)) << (16 * (e % 2));
                    }
                    for k in 6..10 {
                        w.v[k][l] = 0x3c00_3c00;
                    }
                    w.v[10][l] = (l as u32).wrapping_mul(0x9e37_79b9);
                }
                for i in 0..16 {
                    for j in 0..16 {
                        w.v[i % 4][16 * (i / 4) + j] = (cm(i, j) as f32).to_bits();
                    }
                }
            },
        )
        .unwrap();
        for i in 0..16 {
            let row: i32 = (0..64)
                .filter(|l| l % 16 == i)
                .map(|l| (0..4).map(|e| a(l, e)).sum::<i32>())
                .sum();
            for j in 0..16 {
                let got = f32::from_bits(r.wave.v[i % 4][16 * (i / 4) + j]);
                assert_eq!(got, (cm(i, j) + row) as f32, "D[{i}][{j}]");
            }
        }
    }

    /// gfx950 scaled MFMA, fp8 (E4M3) A and B all 1.0 (0x38): each element
    /// is C + 128 * scale_a * scale_b. The scale bytes are chosen by
    /// op_sel | op_sel_hi << 1 (byte 1 of v20: 2^2; byte 3 of v21: 2^-1; the
    /// other bytes hold 2^0), as LLVM encodes the intrinsic's selectors.
    #[test]
    fn scaled_mfma_selects_scale_bytes() {
        let r = run(
            Target::Gfx950,
            "v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], a[12:19], a[0:3], v20, v21 op_sel:[1,1,0] op_sel_hi:[0,1,0]",
            |w, _| {
                for k in 0..8 {
                    w.v[4 + k] = [0x3838_3838; 64];
                    w.v[256 + 12 + k] = [0x3838_3838; 64];
                }
                for k in 0..4 {
                    w.v[256 + k] = std::array::from_fn(|l| (l as f32 - k as f32).to_bits());
                }
                w.v[20] = [0x7f7f_817f; 64];
                w.v[21] = [0x7e7f_7f7f; 64];
            },
        )
        .unwrap();
        for k in 0..4 {
            for l in 0..64 {
                let got = f32::from_bits(r.wave.v[256 + k][l]);
                assert_eq!(got, l as f32 - k as f32 + 256.0, "a{k} lane {l}");
            }
        }
    }
}
