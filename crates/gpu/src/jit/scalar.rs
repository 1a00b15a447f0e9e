//! Scalar ALU instructions as inline code, each the interpreter's
//! semantics (`exec::scalar::alu`, `exec::scalar::control`) over the
//! emitter's cached SGPRs and SCC.

use super::translate::{Em, src_ok};
use crate::exec::op::Op;
use crate::exec::wave::{Src, Width, sreg};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value, types};

/// Bitwise operations of SOP2 (and the saveexec family).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Logic {
    And,
    Or,
    Xor,
    Andn2,
    Orn2,
    Nand,
    Nor,
    Xnor,
    Andn1,
    Orn1,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Shift {
    Shl,
    Shr,
    Ashr,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum SK {
    Mov32,
    Mov64,
    Cmov32,
    Cmov64,
    Not32,
    Not64,
    Logic32(Logic),
    Logic64(Logic),
    Shift32(Shift),
    Shift64(Shift),
    AddU32,
    SubU32,
    AddI32,
    SubI32,
    AddcU32,
    SubbU32,
    /// SCC: the first source was selected.
    MinMax {
        signed: bool,
        max: bool,
    },
    Mul32,
    MulHi {
        signed: bool,
    },
    Cselect32,
    Cselect64,
    BfeU32,
    BfeI32,
    Bfm32,
    LshlAdd(u32),
    Cmp32(IntCC),
    Cmp64(IntCC),
    Bitcmp32(bool),
    Bitcmp64(bool),
    Movk,
    Cmovk,
    /// The compare, and whether the immediate is sign-extended.
    Cmpk(IntCC, bool),
    Addk,
    Mulk,
    SaveExec(Logic),
    WrExec(Logic),
    GetPc,
    Sext8,
    Sext16,
    Abs32,
    Absdiff32,
    PackLL,
    PackLH,
    PackHH,
    Bcnt1_32,
    Bcnt1_64,
    Setprio,
}

/// A scalar instruction the translator emits inline.
#[derive(Clone, Debug)]
pub(crate) struct SOp {
    pub(super) k: SK,
    sdst: u8,
    src: [Src; 2],
    imm: i64,
    /// The address of the next instruction (`s_getpc_b64`).
    next_pc: u64,
}

fn logic(name: &str) -> Option<Logic> {
    Some(match name {
        "and" => Logic::And,
        "or" => Logic::Or,
        "xor" => Logic::Xor,
        "andn2" => Logic::Andn2,
        "orn2" => Logic::Orn2,
        "nand" => Logic::Nand,
        "nor" => Logic::Nor,
        "xnor" => Logic::Xnor,
        "andn1" => Logic::Andn1,
        "orn1" => Logic::Orn1,
        _ => return None,
    })
}

fn kind(name: &str) -> Option<SK> {
    use IntCC::*;
    if let Some(r) = name.strip_prefix("s_")
        && let Some((l, w)) = r.rsplit_once('_')
        && let Some(g) = logic(l)
        && !matches!(g, Logic::Andn1 | Logic::Orn1)
    {
        match w {
            "b32" => return Some(SK::Logic32(g)),
            "b64" => return Some(SK::Logic64(g)),
            _ => {}
        }
    }
    if let Some(r) = name.strip_prefix("s_")
        && let Some(r) = r.strip_suffix("_saveexec_b64")
    {
        return logic(r).map(SK::SaveExec);
    }
    if let Some(r) = name.strip_prefix("s_")
        && let Some(r) = r.strip_suffix("_wrexec_b64")
    {
        return logic(r).map(SK::WrExec);
    }
    Some(match name {
        "s_mov_b32" => SK::Mov32,
        "s_mov_b64" => SK::Mov64,
        "s_cmov_b32" => SK::Cmov32,
        "s_cmov_b64" => SK::Cmov64,
        "s_not_b32" => SK::Not32,
        "s_not_b64" => SK::Not64,
        "s_lshl_b32" => SK::Shift32(Shift::Shl),
        "s_lshr_b32" => SK::Shift32(Shift::Shr),
        "s_ashr_i32" => SK::Shift32(Shift::Ashr),
        "s_lshl_b64" => SK::Shift64(Shift::Shl),
        "s_lshr_b64" => SK::Shift64(Shift::Shr),
        "s_ashr_i64" => SK::Shift64(Shift::Ashr),
        "s_add_u32" => SK::AddU32,
        "s_sub_u32" => SK::SubU32,
        "s_add_i32" => SK::AddI32,
        "s_sub_i32" => SK::SubI32,
        "s_addc_u32" => SK::AddcU32,
        "s_subb_u32" => SK::SubbU32,
        "s_min_i32" => SK::MinMax {
            signed: true,
            max: false,
        },
        "s_min_u32" => SK::MinMax {
            signed: false,
            max: false,
        },
        "s_max_i32" => SK::MinMax {
            signed: true,
            max: true,
        },
        "s_max_u32" => SK::MinMax {
            signed: false,
            max: true,
        },
        "s_mul_i32" => SK::Mul32,
        "s_mul_hi_u32" => SK::MulHi { signed: false },
        "s_mul_hi_i32" => SK::MulHi { signed: true },
        "s_cselect_b32" => SK::Cselect32,
        "s_cselect_b64" => SK::Cselect64,
        "s_bfe_u32" => SK::BfeU32,
        "s_bfe_i32" => SK::BfeI32,
        "s_bfm_b32" => SK::Bfm32,
        "s_lshl1_add_u32" => SK::LshlAdd(1),
        "s_lshl2_add_u32" => SK::LshlAdd(2),
        "s_lshl3_add_u32" => SK::LshlAdd(3),
        "s_lshl4_add_u32" => SK::LshlAdd(4),
        "s_cmp_eq_i32" | "s_cmp_eq_u32" => SK::Cmp32(Equal),
        "s_cmp_lg_i32" | "s_cmp_lg_u32" => SK::Cmp32(NotEqual),
        "s_cmp_gt_i32" => SK::Cmp32(SignedGreaterThan),
        "s_cmp_ge_i32" => SK::Cmp32(SignedGreaterThanOrEqual),
        "s_cmp_lt_i32" => SK::Cmp32(SignedLessThan),
        "s_cmp_le_i32" => SK::Cmp32(SignedLessThanOrEqual),
        "s_cmp_gt_u32" => SK::Cmp32(UnsignedGreaterThan),
        "s_cmp_ge_u32" => SK::Cmp32(UnsignedGreaterThanOrEqual),
        "s_cmp_lt_u32" => SK::Cmp32(UnsignedLessThan),
        "s_cmp_le_u32" => SK::Cmp32(UnsignedLessThanOrEqual),
        "s_cmp_eq_u64" => SK::Cmp64(Equal),
        "s_cmp_lg_u64" => SK::Cmp64(NotEqual),
        "s_bitcmp0_b32" => SK::Bitcmp32(false),
        "s_bitcmp1_b32" => SK::Bitcmp32(true),
        "s_bitcmp0_b64" => SK::Bitcmp64(false),
        "s_bitcmp1_b64" => SK::Bitcmp64(true),
        "s_movk_i32" => SK::Movk,
        "s_cmovk_i32" => SK::Cmovk,
        "s_cmpk_eq_i32" => SK::Cmpk(Equal, true),
        "s_cmpk_eq_u32" => SK::Cmpk(Equal, false),
        "s_cmpk_lg_i32" => SK::Cmpk(NotEqual, true),
        "s_cmpk_lg_u32" => SK::Cmpk(NotEqual, false),
        "s_cmpk_gt_i32" => SK::Cmpk(SignedGreaterThan, true),
        "s_cmpk_ge_i32" => SK::Cmpk(SignedGreaterThanOrEqual, true),
        "s_cmpk_lt_i32" => SK::Cmpk(SignedLessThan, true),
        "s_cmpk_le_i32" => SK::Cmpk(SignedLessThanOrEqual, true),
        "s_cmpk_gt_u32" => SK::Cmpk(UnsignedGreaterThan, false),
        "s_cmpk_ge_u32" => SK::Cmpk(UnsignedGreaterThanOrEqual, false),
        "s_cmpk_lt_u32" => SK::Cmpk(UnsignedLessThan, false),
        "s_cmpk_le_u32" => SK::Cmpk(UnsignedLessThanOrEqual, false),
        "s_addk_i32" => SK::Addk,
        "s_mulk_i32" => SK::Mulk,
        "s_getpc_b64" => SK::GetPc,
        "s_sext_i32_i8" => SK::Sext8,
        "s_sext_i32_i16" => SK::Sext16,
        "s_abs_i32" => SK::Abs32,
        "s_absdiff_i32" => SK::Absdiff32,
        "s_pack_ll_b32_b16" => SK::PackLL,
        "s_pack_lh_b32_b16" => SK::PackLH,
        "s_pack_hh_b32_b16" => SK::PackHH,
        "s_bcnt1_i32_b32" => SK::Bcnt1_32,
        "s_bcnt1_i32_b64" => SK::Bcnt1_64,
        "s_setprio" => SK::Setprio,
        _ => return None,
    })
}

/// Source widths (0: unused) and whether the op reads its destination.
fn shape(k: SK) -> ([u8; 2], bool) {
    use SK::*;
    match k {
        Mov32 | Cmov32 | Not32 | Sext8 | Sext16 | Abs32 | Bcnt1_32 => ([32, 0], false),
        Mov64 | Cmov64 | Not64 | Bcnt1_64 | SaveExec(_) | WrExec(_) => ([64, 0], false),
        Logic64(_) | Cselect64 | Cmp64(_) => ([64, 64], false),
        Shift64(_) | Bitcmp64(_) => ([64, 32], false),
        Movk | GetPc | Setprio => ([0, 0], false),
        Cmovk => ([0, 0], false),
        Cmpk(..) | Addk | Mulk => ([0, 0], true),
        _ => ([32, 32], false),
    }
}

/// The inline form of a scalar instruction, if it has one.
pub(super) fn lower(op: &Op, name: &str, pc: u64) -> Option<SOp> {
    let k = kind(name)?;
    let (w, _) = shape(k);
    for (i, &wi) in w.iter().enumerate() {
        if wi != 0 && !src_ok(op.src[i]) {
            return None;
        }
    }
    Some(SOp {
        k,
        sdst: op.sdst,
        src: [op.src[0], op.src[1]],
        imm: op.imm,
        next_pc: pc.wrapping_add(u64::from(op.len)),
    })
}

fn regs_of(src: Src, width: u8, out: &mut Vec<u8>) {
    match src {
        Src::S(i) => {
            out.push(i);
            if width == 64 {
                out.push(i.wrapping_add(1));
            }
        }
        Src::Hw(crate::exec::wave::HwReg::Vccz) => out.extend([sreg::VCC, sreg::VCC + 1]),
        Src::Hw(crate::exec::wave::HwReg::Execz) => out.extend([sreg::EXEC, sreg::EXEC + 1]),
        _ => {}
    }
}

impl SOp {
    /// Every SGPR index the instruction reads or writes.
    pub(super) fn touches(&self) -> Vec<u8> {
        let (w, reads_dst) = shape(self.k);
        let mut v = Vec::new();
        for (i, &wi) in w.iter().enumerate() {
            if wi != 0 {
                regs_of(self.src[i], wi, &mut v);
            }
        }
        let _ = reads_dst;
        let d = self.sdst;
        v.push(d);
        if self.dst64() {
            v.push(d.wrapping_add(1));
        }
        if matches!(self.k, SK::SaveExec(_) | SK::WrExec(_)) {
            v.extend([sreg::EXEC, sreg::EXEC + 1]);
        }
        v
    }

    fn dst64(&self) -> bool {
        use SK::*;
        matches!(
            self.k,
            Mov64
                | Cmov64
                | Not64
                | Logic64(_)
                | Shift64(_)
                | Cselect64
                | SaveExec(_)
                | WrExec(_)
                | GetPc
        )
    }
}

fn logic_op(em: &mut Em, g: Logic, a: Value, b: Value) -> Value {
    let i = &mut em.b;
    match g {
        Logic::And => i.ins().band(a, b),
        Logic::Or => i.ins().bor(a, b),
        Logic::Xor => i.ins().bxor(a, b),
        Logic::Andn2 => i.ins().band_not(a, b),
        Logic::Orn2 => i.ins().bor_not(a, b),
        Logic::Nand => {
            let x = i.ins().band(a, b);
            i.ins().bnot(x)
        }
        Logic::Nor => {
            let x = i.ins().bor(a, b);
            i.ins().bnot(x)
        }
        Logic::Xnor => {
            let x = i.ins().bxor(a, b);
            i.ins().bnot(x)
        }
        Logic::Andn1 => i.ins().band_not(b, a),
        Logic::Orn1 => i.ins().bor_not(b, a),
    }
}

/// `s_*_saveexec_b64` / `wrexec` compute op(S0, EXEC); `Andn2` there is
/// S0 & !EXEC, `Andn1` !S0 & EXEC.
fn exec_op(em: &mut Em, g: Logic, s: Value, e: Value) -> Value {
    logic_op(em, g, s, e)
}

fn s32(em: &mut Em, op: &SOp, i: usize) -> Value {
    em.src32(op.src[i]).expect("checked by lower")
}

fn s64(em: &mut Em, op: &SOp, i: usize) -> Value {
    em.src64(op.src[i], Width::B64).expect("checked by lower")
}

fn bool32(em: &mut Em, c: Value) -> Value {
    em.b.ins().uextend(types::I32, c)
}

/// Emits one scalar instruction.
pub(super) fn emit(em: &mut Em, op: &SOp) {
    use SK::*;
    let d = op.sdst;
    match op.k {
        Mov32 => {
            let a = s32(em, op, 0);
            em.sset(d, a);
        }
        Mov64 => {
            let a = s64(em, op, 0);
            em.sset64(d, a);
        }
        Cmov32 | Cmov64 => {
            let scc = em.scc();
            if op.k == Cmov32 {
                let a = s32(em, op, 0);
                let old = em.sget(d);
                let v = em.b.ins().select(scc, a, old);
                em.sset(d, v);
            } else {
                let a = s64(em, op, 0);
                let old = em.sget64(d);
                let v = em.b.ins().select(scc, a, old);
                em.sset64(d, v);
            }
        }
        Not32 => {
            let a = s32(em, op, 0);
            let v = em.b.ins().bnot(a);
            em.sset(d, v);
            em.set_scc_nz(v);
        }
        Not64 => {
            let a = s64(em, op, 0);
            let v = em.b.ins().bnot(a);
            em.sset64(d, v);
            em.set_scc_nz(v);
        }
        Logic32(g) => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let v = logic_op(em, g, a, b);
            em.sset(d, v);
            em.set_scc_nz(v);
        }
        Logic64(g) => {
            let (a, b) = (s64(em, op, 0), s64(em, op, 1));
            let v = logic_op(em, g, a, b);
            em.sset64(d, v);
            em.set_scc_nz(v);
        }
        Shift32(sh) => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let n = em.b.ins().band_imm_u(b, 31);
            let v = match sh {
                Shift::Shl => em.b.ins().ishl(a, n),
                Shift::Shr => em.b.ins().ushr(a, n),
                Shift::Ashr => em.b.ins().sshr(a, n),
            };
            em.sset(d, v);
            em.set_scc_nz(v);
        }
        Shift64(sh) => {
            let (a, b) = (s64(em, op, 0), s32(em, op, 1));
            let n = em.b.ins().band_imm_u(b, 63);
            let n = em.b.ins().uextend(types::I64, n);
            let v = match sh {
                Shift::Shl => em.b.ins().ishl(a, n),
                Shift::Shr => em.b.ins().ushr(a, n),
                Shift::Ashr => em.b.ins().sshr(a, n),
            };
            em.sset64(d, v);
            em.set_scc_nz(v);
        }
        AddU32 => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let (v, c) = em.b.ins().uadd_overflow(a, b);
            em.sset(d, v);
            em.set_scc(c);
        }
        SubU32 => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let (v, c) = em.b.ins().usub_overflow(a, b);
            em.sset(d, v);
            em.set_scc(c);
        }
        AddI32 => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let (v, c) = em.b.ins().sadd_overflow(a, b);
            em.sset(d, v);
            em.set_scc(c);
        }
        SubI32 => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let (v, c) = em.b.ins().ssub_overflow(a, b);
            em.sset(d, v);
            em.set_scc(c);
        }
        AddcU32 => {
            // 64-bit sum of a + b + scc; SCC = the carry out.
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let scc = em.scc();
            let a = em.b.ins().uextend(types::I64, a);
            let b = em.b.ins().uextend(types::I64, b);
            let c = em.b.ins().uextend(types::I64, scc);
            let t = em.b.ins().iadd(a, b);
            let t = em.b.ins().iadd(t, c);
            let v = em.b.ins().ireduce(types::I32, t);
            let hi = em.b.ins().ushr_imm_u(t, 32);
            em.sset(d, v);
            em.set_scc_nz(hi);
        }
        SubbU32 => {
            // d = a - b - scc; SCC = b + scc > a (64-bit).
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let scc = em.scc();
            let c32 = bool32(em, scc);
            let t = em.b.ins().isub(a, b);
            let v = em.b.ins().isub(t, c32);
            let a64 = em.b.ins().uextend(types::I64, a);
            let b64 = em.b.ins().uextend(types::I64, b);
            let c64 = em.b.ins().uextend(types::I64, scc);
            let bc = em.b.ins().iadd(b64, c64);
            let borrow = em.b.ins().icmp(IntCC::UnsignedGreaterThan, bc, a64);
            em.sset(d, v);
            em.set_scc(borrow);
        }
        MinMax { signed, max } => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let cc = match (signed, max) {
                (true, false) => IntCC::SignedLessThan,
                (false, false) => IntCC::UnsignedLessThan,
                (true, true) => IntCC::SignedGreaterThanOrEqual,
                (false, true) => IntCC::UnsignedGreaterThanOrEqual,
            };
            let s = em.b.ins().icmp(cc, a, b);
            let v = em.b.ins().select(s, a, b);
            em.sset(d, v);
            em.set_scc(s);
        }
        Mul32 => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let v = em.b.ins().imul(a, b);
            em.sset(d, v);
        }
        MulHi { signed } => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let v = if signed {
                em.b.ins().smulhi(a, b)
            } else {
                em.b.ins().umulhi(a, b)
            };
            em.sset(d, v);
        }
        Cselect32 => {
            let scc = em.scc();
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let v = em.b.ins().select(scc, a, b);
            em.sset(d, v);
        }
        Cselect64 => {
            let scc = em.scc();
            let (a, b) = (s64(em, op, 0), s64(em, op, 1));
            let v = em.b.ins().select(scc, a, b);
            em.sset64(d, v);
        }
        BfeU32 | BfeI32 => {
            // Offset b[4:0], width b[22:16] (all ones from 32 up).
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let off = em.b.ins().band_imm_u(b, 31);
            let w = em.b.ins().ushr_imm_u(b, 16);
            let w = em.b.ins().band_imm_u(w, 0x7f);
            let sh = if op.k == BfeU32 {
                em.b.ins().ushr(a, off)
            } else {
                em.b.ins().sshr(a, off)
            };
            let mask = mask32(em, w);
            let f = em.b.ins().band(sh, mask);
            let v = if op.k == BfeU32 {
                f
            } else {
                sext_from(em, f, w)
            };
            em.sset(d, v);
            em.set_scc_nz(v);
        }
        Bfm32 => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let n = em.b.ins().band_imm_u(a, 31);
            let m = mask32(em, n);
            let s = em.b.ins().band_imm_u(b, 31);
            let v = em.b.ins().ishl(m, s);
            em.sset(d, v);
        }
        LshlAdd(n) => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let a = em.b.ins().uextend(types::I64, a);
            let b = em.b.ins().uextend(types::I64, b);
            let a = em.b.ins().ishl_imm_u(a, i64::from(n));
            let t = em.b.ins().iadd(a, b);
            let v = em.b.ins().ireduce(types::I32, t);
            let hi = em.b.ins().ushr_imm_u(t, 32);
            em.sset(d, v);
            em.set_scc_nz(hi);
        }
        Cmp32(cc) => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let v = em.b.ins().icmp(cc, a, b);
            em.set_scc(v);
        }
        Cmp64(cc) => {
            let (a, b) = (s64(em, op, 0), s64(em, op, 1));
            let v = em.b.ins().icmp(cc, a, b);
            em.set_scc(v);
        }
        Bitcmp32(one) | Bitcmp64(one) => {
            let wide = matches!(op.k, Bitcmp64(_));
            let a = if wide { s64(em, op, 0) } else { s32(em, op, 0) };
            let b = s32(em, op, 1);
            let n = em.b.ins().band_imm_u(b, if wide { 63 } else { 31 });
            let n = if wide {
                em.b.ins().uextend(types::I64, n)
            } else {
                n
            };
            let x = em.b.ins().ushr(a, n);
            let x = em.b.ins().band_imm_u(x, 1);
            let v = em.b.ins().icmp_imm_u(IntCC::Equal, x, i64::from(one));
            em.set_scc(v);
        }
        Movk => {
            let v = em.iconst32(op.imm as i16 as i32 as u32);
            em.sset(d, v);
        }
        Cmovk => {
            let scc = em.scc();
            let k = em.iconst32(op.imm as i16 as i32 as u32);
            let old = em.sget(d);
            let v = em.b.ins().select(scc, k, old);
            em.sset(d, v);
        }
        Cmpk(cc, sext) => {
            let x = em.sget(d);
            let k = if sext {
                op.imm as i16 as i32 as u32
            } else {
                u32::from(op.imm as u16)
            };
            let k = em.iconst32(k);
            let v = em.b.ins().icmp(cc, x, k);
            em.set_scc(v);
        }
        Addk => {
            let x = em.sget(d);
            let k = em.iconst32(op.imm as i16 as i32 as u32);
            let (v, o) = em.b.ins().sadd_overflow(x, k);
            em.sset(d, v);
            em.set_scc(o);
        }
        Mulk => {
            let x = em.sget(d);
            let v = em.b.ins().imul_imm_s(x, i64::from(op.imm as i16));
            em.sset(d, v);
        }
        SaveExec(g) | WrExec(g) => {
            let s = s64(em, op, 0);
            let old = em.sget64(sreg::EXEC);
            let new = exec_op(em, g, s, old);
            em.sset64(sreg::EXEC, new);
            em.sset64(
                d,
                if matches!(op.k, SaveExec(_)) {
                    old
                } else {
                    new
                },
            );
            em.set_scc_nz(new);
        }
        GetPc => {
            let v = em.iconst64(op.next_pc);
            em.sset64(d, v);
        }
        Sext8 | Sext16 => {
            let a = s32(em, op, 0);
            let sh = if op.k == Sext8 { 24 } else { 16 };
            let x = em.b.ins().ishl_imm_u(a, sh);
            let v = em.b.ins().sshr_imm_u(x, sh);
            em.sset(d, v);
        }
        Abs32 => {
            let a = s32(em, op, 0);
            let v = em.b.ins().iabs(a);
            em.sset(d, v);
            em.set_scc_nz(v);
        }
        Absdiff32 => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let x = em.b.ins().isub(a, b);
            let v = em.b.ins().iabs(x);
            em.sset(d, v);
            em.set_scc_nz(v);
        }
        PackLL | PackLH | PackHH => {
            let (a, b) = (s32(em, op, 0), s32(em, op, 1));
            let (lo, hi) = match op.k {
                PackLL => {
                    let lo = em.b.ins().band_imm_u(a, 0xffff);
                    let hi = em.b.ins().ishl_imm_u(b, 16);
                    (lo, hi)
                }
                PackLH => {
                    let lo = em.b.ins().band_imm_u(a, 0xffff);
                    let hi = em.b.ins().band_imm_u(b, 0xffff_0000u32 as i64);
                    (lo, hi)
                }
                _ => {
                    let lo = em.b.ins().ushr_imm_u(a, 16);
                    let hi = em.b.ins().band_imm_u(b, 0xffff_0000u32 as i64);
                    (lo, hi)
                }
            };
            let v = em.b.ins().bor(lo, hi);
            em.sset(d, v);
        }
        Bcnt1_32 => {
            let a = s32(em, op, 0);
            let v = em.b.ins().popcnt(a);
            em.sset(d, v);
            em.set_scc_nz(v);
        }
        Bcnt1_64 => {
            let a = s64(em, op, 0);
            let v = em.b.ins().popcnt(a);
            let v = em.b.ins().ireduce(types::I32, v);
            em.sset(d, v);
            em.set_scc_nz(v);
        }
        Setprio => {
            // STATUS.USER_PRIO (bits 4:3) = SIMM16[1:0].
            let s = em.status();
            let kept = em.b.ins().band_imm_s(s, !(3i64 << 3));
            let v = em.b.ins().bor_imm_u(kept, (op.imm & 3) << 3);
            em.set_status(v);
        }
    }
}

/// `(1 << n) - 1`, all ones for `n >= 32` (n an i32 value).
fn mask32(em: &mut Em, n: Value) -> Value {
    let n64 = em.b.ins().uextend(types::I64, n);
    let one = em.b.ins().iconst(types::I64, 1);
    let big =
        em.b.ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, n64, 32);
    let m = em.b.ins().ishl(one, n64);
    let m = em.b.ins().iadd_imm_s(m, -1);
    let m = em.b.ins().ireduce(types::I32, m);
    let all = em.b.ins().iconst(types::I32, -1);
    em.b.ins().select(big, all, m)
}

/// Sign-extends the low `n` bits of `v` (`n` = 0 gives 0; `n >= 32` keeps
/// `v`).
fn sext_from(em: &mut Em, v: Value, n: Value) -> Value {
    let zero = em.b.ins().iconst(types::I32, 0);
    let is0 = em.b.ins().icmp_imm_u(IntCC::Equal, n, 0);
    let big =
        em.b.ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, n, 32);
    let thirty_two = em.b.ins().iconst(types::I32, 32);
    let s = em.b.ins().isub(thirty_two, n);
    let s = em.b.ins().band_imm_u(s, 31);
    let x = em.b.ins().ishl(v, s);
    let x = em.b.ins().sshr(x, s);
    let x = em.b.ins().select(big, v, x);
    em.b.ins().select(is0, zero, x)
}
