//! Vector ALU instructions as inline code: each the interpreter's semantics
//! (`exec::valu`) for one chunk of four lanes held in a 128-bit host
//! vector, inside a run's loop over the wave's 16 chunks.
//!
//! Only plain encodings are inlined (no SDWA or DPP, no clamp); integer
//! operations ignore the float modifiers, as the interpreter's do. A
//! destination is written under EXEC with a per-chunk select; a mask
//! result (compare, carry) is ANDed with EXEC, as `write_mask` does, and
//! gathered into a 64-bit value that the run writes to its SGPR pair after
//! the loop.
//!
//! f32 operations (`exec::valu::float_arith`, `cvt`) run for MODE's
//! round-to-nearest-even only: the run checks MODE.FP_ROUND first and
//! leaves the rest of the block to the interpreter otherwise
//! (`translate::emit_run`). MODE's denormal bits are read at run time:
//! inputs flushed to a signed zero unless FP_DENORM bit 4 is set, results
//! where the interpreter's `out32` flushes them (neither bit 4 nor bit 5
//! set), `v_mad`/`v_mac` flushing inputs, product and sum regardless.
//! Results are the host's IEEE arithmetic (the interpreter's too); a NaN
//! result takes the interpreter's NaN operand, quieted, in its order of
//! precedence (for add, sub, mul and fma the first NaN source; for
//! `v_subrev` S1 before S0; for `v_mad`/`v_mac` S2, then S1, then S0, as
//! its compiled code does); min/max follow the interpreter's `min32` /
//! `max32` (MODE.IEEE quiets a signaling NaN, else a NaN loses to a
//! number; -0 below +0). No omod or clamp.

use super::translate::{Em, src_ok};
use crate::exec::op::{Ext, NO_VDST, Op};
use crate::exec::wave::{Src, VREGS, Width, sreg};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value, types};
use std::collections::{BTreeMap, HashMap};

const I32X4: types::Type = types::I32X4;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum VK {
    Mov,
    Not,
    Add,
    Sub,
    SubRev,
    And,
    Or,
    Xor,
    Xnor,
    /// `v_*rev_*32`: S1 shifted by S0[4:0].
    LshlRev,
    LshrRev,
    AshrRev,
    MulLo,
    MulHiU,
    MulHiI,
    MulU24,
    MulI24,
    MadU24,
    MadI24,
    Add3,
    Xad,
    LshlAdd,
    AddLshl,
    LshlOr,
    AndOr,
    Or3,
    AlignBit,
    Bfi,
    BfeU,
    BfeI,
    MinU,
    MaxU,
    MinI,
    MaxI,
    /// S1 where the mask `src[2]` has the lane's bit, else S0.
    Cnd,
    /// A 32-bit compare (`None`: the always-false / always-true forms).
    Cmp(Option<IntCC>, bool),
    AddCo,
    SubCo,
    SubRevCo,
    AddC,
    SubB,
    SubBRev,
    LshlAddU64,
    FAdd,
    FSub,
    FSubRev,
    FMul,
    /// Fused multiply-add (`v_fma`, `v_fmac`, `v_fmamk`, `v_fmaak`).
    Fma,
    /// Multiply then add, each rounded, denormals flushed (`v_mad`,
    /// `v_mac`, `v_madmk`, `v_madak`).
    Mad,
    FMin,
    FMax,
    CvtF32I32,
    CvtF32U32,
    CvtI32F32,
    CvtU32F32,
}

/// A vector instruction the translator emits inline.
#[derive(Clone, Debug)]
pub(crate) struct VOp {
    k: VK,
    vdst: u16,
    sdst: u8,
    src: [Src; 3],
    /// Float modifiers per source (bit i: source i).
    abs: u8,
    neg: u8,
}

fn kind(name: &str) -> Option<VK> {
    use VK::*;
    if let Some(r) = name.strip_prefix("v_cmp_") {
        let (cond, ty) = r.split_once('_')?;
        let signed = match ty {
            "i32" => true,
            "u32" => false,
            _ => return None,
        };
        let cc = match (cond, signed) {
            ("f", _) => return Some(Cmp(None, false)),
            ("t", _) => return Some(Cmp(None, true)),
            ("eq", _) => IntCC::Equal,
            ("ne", _) => IntCC::NotEqual,
            ("lt", true) => IntCC::SignedLessThan,
            ("le", true) => IntCC::SignedLessThanOrEqual,
            ("gt", true) => IntCC::SignedGreaterThan,
            ("ge", true) => IntCC::SignedGreaterThanOrEqual,
            ("lt", false) => IntCC::UnsignedLessThan,
            ("le", false) => IntCC::UnsignedLessThanOrEqual,
            ("gt", false) => IntCC::UnsignedGreaterThan,
            ("ge", false) => IntCC::UnsignedGreaterThanOrEqual,
            _ => return None,
        };
        return Some(Cmp(Some(cc), false));
    }
    Some(match name {
        "v_mov_b32" | "v_accvgpr_mov_b32" => Mov,
        "v_not_b32" => Not,
        "v_add_u32" | "v_add_i32" => Add,
        "v_sub_u32" | "v_sub_i32" => Sub,
        "v_subrev_u32" => SubRev,
        "v_and_b32" => And,
        "v_or_b32" => Or,
        "v_xor_b32" => Xor,
        "v_xnor_b32" => Xnor,
        "v_lshlrev_b32" => LshlRev,
        "v_lshrrev_b32" => LshrRev,
        "v_ashrrev_i32" => AshrRev,
        "v_mul_lo_u32" => MulLo,
        "v_mul_hi_u32" => MulHiU,
        "v_mul_hi_i32" => MulHiI,
        "v_mul_u32_u24" => MulU24,
        "v_mul_i32_i24" => MulI24,
        "v_mad_u32_u24" => MadU24,
        "v_mad_i32_i24" => MadI24,
        "v_add3_u32" => Add3,
        "v_xad_u32" => Xad,
        "v_lshl_add_u32" => LshlAdd,
        "v_add_lshl_u32" => AddLshl,
        "v_lshl_or_b32" => LshlOr,
        "v_and_or_b32" => AndOr,
        "v_or3_b32" => Or3,
        "v_alignbit_b32" => AlignBit,
        "v_bfi_b32" => Bfi,
        "v_bfe_u32" => BfeU,
        "v_bfe_i32" => BfeI,
        "v_min_u32" => MinU,
        "v_max_u32" => MaxU,
        "v_min_i32" => MinI,
        "v_max_i32" => MaxI,
        "v_cndmask_b32" => Cnd,
        "v_add_co_u32" => AddCo,
        "v_sub_co_u32" => SubCo,
        "v_subrev_co_u32" => SubRevCo,
        "v_addc_co_u32" => AddC,
        "v_subb_co_u32" => SubB,
        "v_subbrev_co_u32" => SubBRev,
        "v_lshl_add_u64" => LshlAddU64,
        "v_add_f32" => FAdd,
        "v_sub_f32" => FSub,
        "v_subrev_f32" => FSubRev,
        "v_mul_f32" => FMul,
        "v_fma_f32" | "v_fmac_f32" | "v_fmamk_f32" | "v_fmaak_f32" => Fma,
        "v_mad_f32" | "v_mac_f32" | "v_madmk_f32" | "v_madak_f32" => Mad,
        "v_min_f32" => FMin,
        "v_max_f32" => FMax,
        "v_cvt_f32_i32" => CvtF32I32,
        "v_cvt_f32_u32" => CvtF32U32,
        "v_cvt_i32_f32" => CvtI32F32,
        "v_cvt_u32_f32" => CvtU32F32,
        _ => return None,
    })
}

/// Whether the host runs f32 fused multiply-adds as the interpreter's
/// `fma_lanes32` does (its FMA instructions, with their NaN order).
fn host_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl VK {
    /// An f32 operation: reads MODE's denormal (and IEEE) bits.
    fn float(self) -> bool {
        use VK::*;
        matches!(
            self,
            FAdd | FSub
                | FSubRev
                | FMul
                | Fma
                | Mad
                | FMin
                | FMax
                | CvtF32I32
                | CvtF32U32
                | CvtI32F32
                | CvtU32F32
        )
    }

    /// Rounds its result: runs only under round-to-nearest-even.
    fn rounds(self) -> bool {
        use VK::*;
        matches!(
            self,
            FAdd | FSub | FSubRev | FMul | Fma | Mad | CvtF32I32 | CvtF32U32
        )
    }
}

/// Source widths (0: unused), whether `src[2]` is a lane mask, whether the
/// result includes a mask, and the destination's width (0: none).
fn shape(k: VK) -> ([u8; 3], bool, bool, u8) {
    use VK::*;
    match k {
        Mov | Not => ([32, 0, 0], false, false, 32),
        Add | Sub | SubRev | And | Or | Xor | Xnor | LshlRev | LshrRev | AshrRev | MulLo
        | MulHiU | MulHiI | MulU24 | MulI24 | MinU | MaxU | MinI | MaxI => {
            ([32, 32, 0], false, false, 32)
        }
        MadU24 | MadI24 | Add3 | Xad | LshlAdd | AddLshl | LshlOr | AndOr | Or3 | AlignBit
        | Bfi | BfeU | BfeI => ([32, 32, 32], false, false, 32),
        Cnd => ([32, 32, 0], true, false, 32),
        FAdd | FSub | FSubRev | FMul | FMin | FMax => ([32, 32, 0], false, false, 32),
        Fma | Mad => ([32, 32, 32], false, false, 32),
        CvtF32I32 | CvtF32U32 | CvtI32F32 | CvtU32F32 => ([32, 0, 0], false, false, 32),
        Cmp(..) => ([32, 32, 0], false, true, 0),
        AddCo | SubCo | SubRevCo => ([32, 32, 0], false, true, 32),
        AddC | SubB | SubBRev => ([32, 32, 0], true, true, 32),
        LshlAddU64 => ([64, 32, 64], false, false, 64),
    }
}

/// The inline form of a vector instruction, if it has one.
pub(super) fn lower(op: &Op, name: &str) -> Option<VOp> {
    if op.ext != Ext::None || op.mods.clamp {
        return None;
    }
    let k = kind(name)?;
    if k.float() && op.mods.omod != 0 {
        return None;
    }
    // The interpreter's integer-to-float conversions ignore abs/neg: not
    // inlined with them rather than copied.
    if matches!(k, VK::CvtF32I32 | VK::CvtF32U32) && (op.mods.abs | op.mods.neg) != 0 {
        return None;
    }
    if k == VK::Fma && !host_fma() {
        return None;
    }
    let (w, mask_in, _, dst) = shape(k);
    for (i, &wi) in w.iter().enumerate() {
        if wi == 0 {
            continue;
        }
        match op.src[i] {
            Src::V(r) => {
                let last = usize::from(r) + usize::from(wi / 32) - 1;
                if last >= VREGS {
                    return None;
                }
            }
            s if !src_ok(s) => return None,
            _ => {}
        }
    }
    if mask_in && (matches!(op.src[2], Src::V(_)) || !src_ok(op.src[2])) {
        return None;
    }
    match dst {
        0 => {}
        _ => {
            let last = usize::from(op.vdst) + usize::from(dst / 32) - 1;
            if op.vdst == NO_VDST || last >= VREGS {
                return None;
            }
        }
    }
    let (abs, neg) = if k.float() || k == VK::Cnd {
        (op.mods.abs & 7, op.mods.neg & 7)
    } else {
        (0, 0)
    };
    Some(VOp {
        k,
        vdst: op.vdst,
        sdst: op.sdst,
        src: op.src,
        abs,
        neg,
    })
}

impl VOp {
    /// Reads MODE (an f32 operation).
    pub(super) fn reads_mode(&self) -> bool {
        self.k.float()
    }

    /// Runs only under MODE's round-to-nearest-even for f32.
    pub(super) fn needs_rne(&self) -> bool {
        self.k.rounds()
    }

    /// The SGPR pair this instruction writes a lane mask to.
    pub(super) fn mask_out(&self) -> Option<u8> {
        shape(self.k).2.then_some(self.sdst)
    }

    /// The SGPR pair whose lane bits are the mask input.
    pub(super) fn mask_in_reg(&self) -> Option<u8> {
        match (shape(self.k).1, self.src[2]) {
            (true, Src::S(m)) => Some(m),
            _ => None,
        }
    }

    /// SGPR indices read as scalar values (broadcast sources), EXEC
    /// excluded.
    pub(super) fn scalar_reads(&self) -> Vec<u8> {
        let (w, _, _, _) = shape(self.k);
        let mut v = Vec::new();
        for (i, &wi) in w.iter().enumerate() {
            match (wi, self.src[i]) {
                (0, _) => {}
                (_, Src::S(r)) => {
                    v.push(r);
                    if wi == 64 {
                        v.push(r.wrapping_add(1));
                    }
                }
                (_, Src::Hw(crate::exec::wave::HwReg::Vccz)) => {
                    v.extend([sreg::VCC, sreg::VCC + 1])
                }
                (_, Src::Hw(crate::exec::wave::HwReg::Execz)) => {
                    v.extend([sreg::EXEC, sreg::EXEC + 1])
                }
                _ => {}
            }
        }
        v
    }
}

/// A lane source: a vector register, or a uniform value (i32, or i64 for
/// 64-bit sources).
#[derive(Copy, Clone, Debug)]
enum LSrc {
    None,
    V(u16),
    U(Value),
}

/// The mask input of a lane instruction.
#[derive(Copy, Clone, Debug)]
enum MaskIn {
    /// An i64 read at the instruction's place in the run.
    Uniform(Value),
    /// The mask an earlier instruction of the run (its index) computed.
    Local(usize),
}

/// What a lane instruction reads besides its vector registers, taken at
/// its place among the run's scalar instructions.
pub(super) struct LaneIn {
    exec: Value,
    srcs: [LSrc; 3],
    mask: Option<MaskIn>,
    /// MODE (i32), for f32 operations.
    mode: Option<Value>,
}

/// Reads the uniform inputs of `v` from the scalar state as it is at this
/// point of the run. `producer`: the index (among the run's vector
/// instructions) of the one whose mask `v` reads, if in the run.
pub(super) fn inputs(em: &mut Em, v: &VOp, producer: Option<usize>) -> LaneIn {
    let (w, mask_in, _, _) = shape(v.k);
    let mut srcs = [LSrc::None; 3];
    for (i, &wi) in w.iter().enumerate() {
        srcs[i] = match (wi, v.src[i]) {
            (0, _) => LSrc::None,
            (_, Src::V(r)) => LSrc::V(r),
            (32, s) => LSrc::U(em.src32(s).expect("checked by lower")),
            (_, s) => LSrc::U(em.src64(s, Width::B64).expect("checked by lower")),
        };
    }
    let mask = mask_in.then(|| match producer {
        Some(p) => MaskIn::Local(p),
        None => MaskIn::Uniform(em.src64(v.src[2], Width::B64).expect("checked by lower")),
    });
    let exec = em.sget64(sreg::EXEC);
    let mode = v.reads_mode().then(|| em.mode());
    LaneIn {
        exec,
        srcs,
        mask,
        mode,
    }
}

/// One pass of the lane loop: the chunk's address, its bit position in a
/// mask, and its cached registers.
struct Chunk {
    /// `v_base` + the chunk's byte offset in a row.
    vb: Value,
    /// The chunk's first lane (i64).
    shift: Value,
    vals: BTreeMap<u16, (Value, bool)>,
    masks: HashMap<Value, Value>,
    /// Per run instruction: its mask result (ANDed with EXEC).
    local: Vec<Option<Value>>,
}

impl Chunk {
    fn vget(&mut self, em: &mut Em, r: u16) -> Value {
        if let Some((v, _)) = self.vals.get(&r) {
            return *v;
        }
        let v = em.b.ins().load(I32X4, em.vfl, self.vb, i32::from(r) * 256);
        self.vals.insert(r, (v, false));
        v
    }

    fn vset(&mut self, em: &mut Em, r: u16, val: Value, mask: Value) {
        let old = self.vget(em, r);
        let v = em.b.ins().bitselect(mask, val, old);
        self.vals.insert(r, (v, true));
    }

    /// The chunk's lanes of a 64-bit mask as an all-ones/zero vector.
    fn mask(&mut self, em: &mut Em, m: Value) -> Value {
        if let Some(v) = self.masks.get(&m) {
            return *v;
        }
        let bits = em.b.ins().ushr(m, self.shift);
        let bits = em.b.ins().ireduce(types::I32, bits);
        let bits = em.b.ins().band_imm_u(bits, 15);
        let s = em.b.ins().splat(I32X4, bits);
        let lane = em.vconst([1, 2, 4, 8]);
        let x = em.b.ins().band(s, lane);
        let v = em.b.ins().icmp(IntCC::Equal, x, lane);
        self.masks.insert(m, v);
        v
    }

    fn src(&mut self, em: &mut Em, s: LSrc) -> Value {
        match s {
            LSrc::V(r) => self.vget(em, r),
            LSrc::U(x) => em.b.ins().splat(I32X4, x),
            LSrc::None => em.vconst([0; 4]),
        }
    }

    /// A 64-bit source as (low, high) dword vectors.
    fn src64(&mut self, em: &mut Em, s: LSrc) -> (Value, Value) {
        match s {
            LSrc::V(r) => (self.vget(em, r), self.vget(em, r + 1)),
            LSrc::U(x) => {
                let (lo, hi) = em.split(x);
                (em.b.ins().splat(I32X4, lo), em.b.ins().splat(I32X4, hi))
            }
            LSrc::None => (em.vconst([0; 4]), em.vconst([0; 4])),
        }
    }
}

/// Applies `f` to each lane's scalars of `srcs` (i32 each), giving one or
/// two i32 results per lane, gathered into vectors.
fn per_lane<const N: usize>(
    em: &mut Em,
    srcs: &[Value],
    f: impl Fn(&mut Em, &[Value]) -> [Value; N],
) -> [Value; N] {
    let mut out = [(); N].map(|_| em.vconst([0; 4]));
    for l in 0..4u8 {
        let xs: Vec<Value> = srcs.iter().map(|&s| em.b.ins().extractlane(s, l)).collect();
        let r = f(em, &xs);
        for (o, v) in out.iter_mut().zip(r) {
            *o = em.b.ins().insertlane(*o, v, l);
        }
    }
    out
}

/// The uniform (scalar) value of source `s`, if it is one.
fn uniform(s: LSrc) -> Option<Value> {
    match s {
        LSrc::U(x) => Some(x),
        _ => None,
    }
}

/// `x << (n & 31)` per lane (`n` a source).
fn shl_by(
    em: &mut Em,
    ch: &mut Chunk,
    x: Value,
    n: LSrc,
    op: fn(&mut Em, Value, Value) -> Value,
) -> Value {
    match uniform(n) {
        Some(s) => {
            let s = em.b.ins().band_imm_u(s, 31);
            op(em, x, s)
        }
        None => {
            let nv = ch.src(em, n);
            let [r] = per_lane(em, &[x, nv], |em, v| {
                let s = em.b.ins().band_imm_u(v[1], 31);
                [op(em, v[0], s)]
            });
            r
        }
    }
}

fn ishl(em: &mut Em, x: Value, s: Value) -> Value {
    em.b.ins().ishl(x, s)
}

fn ushr(em: &mut Em, x: Value, s: Value) -> Value {
    em.b.ins().ushr(x, s)
}

fn sshr(em: &mut Em, x: Value, s: Value) -> Value {
    em.b.ins().sshr(x, s)
}

/// The results of one lane instruction for one chunk.
struct Out {
    d: Option<Value>,
    hi: Option<Value>,
    mask: Option<Value>,
}

fn emit_op(em: &mut Em, ch: &mut Chunk, v: &VOp, inp: &LaneIn) -> Out {
    use VK::*;
    let s = inp.srcs;
    let mut out = Out {
        d: None,
        hi: None,
        mask: None,
    };
    let mask_in = |em: &mut Em, ch: &mut Chunk| -> Value {
        match inp.mask.expect("a mask input") {
            MaskIn::Uniform(m) => ch.mask(em, m),
            MaskIn::Local(p) => ch.local[p].expect("the producer's mask"),
        }
    };
    if v.k == LshlAddU64 {
        let (alo, ahi) = ch.src64(em, s[0]);
        let (clo, chi) = ch.src64(em, s[2]);
        let b = ch.src(em, s[1]);
        let [lo, hi] = per_lane(em, &[alo, ahi, b, clo, chi], |em, x| {
            let a = em.concat(x[0], x[1]);
            let c = em.concat(x[3], x[4]);
            let n = em.b.ins().band_imm_u(x[2], 7);
            let n = em.b.ins().uextend(types::I64, n);
            let r = em.b.ins().ishl(a, n);
            let r = em.b.ins().iadd(r, c);
            let (lo, hi) = em.split(r);
            [lo, hi]
        });
        out.d = Some(lo);
        out.hi = Some(hi);
        return out;
    }
    if v.k.float() {
        out.d = Some(float_op(em, ch, v, inp));
        return out;
    }
    let a = ch.src(em, s[0]);
    let b = if matches!(s[1], LSrc::None) {
        a
    } else {
        ch.src(em, s[1])
    };
    let c = if matches!(s[2], LSrc::None) {
        a
    } else {
        ch.src(em, s[2])
    };
    let d = match v.k {
        Mov => a,
        Not => em.b.ins().bnot(a),
        Add => em.b.ins().iadd(a, b),
        Sub => em.b.ins().isub(a, b),
        SubRev => em.b.ins().isub(b, a),
        And => em.b.ins().band(a, b),
        Or => em.b.ins().bor(a, b),
        Xor => em.b.ins().bxor(a, b),
        Xnor => {
            let x = em.b.ins().bxor(a, b);
            em.b.ins().bnot(x)
        }
        LshlRev => shl_by(em, ch, b, s[0], ishl),
        LshrRev => shl_by(em, ch, b, s[0], ushr),
        AshrRev => shl_by(em, ch, b, s[0], sshr),
        MulLo => em.b.ins().imul(a, b),
        MulHiU | MulHiI => {
            let signed = v.k == MulHiI;
            let [r] = per_lane(em, &[a, b], |em, x| {
                [if signed {
                    em.b.ins().smulhi(x[0], x[1])
                } else {
                    em.b.ins().umulhi(x[0], x[1])
                }]
            });
            r
        }
        MulU24 | MadU24 => {
            let m = em.vconst([0x00ff_ffff; 4]);
            let x = em.b.ins().band(a, m);
            let y = em.b.ins().band(b, m);
            let p = em.b.ins().imul(x, y);
            if v.k == MadU24 {
                em.b.ins().iadd(p, c)
            } else {
                p
            }
        }
        MulI24 | MadI24 => {
            let x = em.b.ins().ishl_imm_u(a, 8);
            let x = em.b.ins().sshr_imm_u(x, 8);
            let y = em.b.ins().ishl_imm_u(b, 8);
            let y = em.b.ins().sshr_imm_u(y, 8);
            let p = em.b.ins().imul(x, y);
            if v.k == MadI24 {
                em.b.ins().iadd(p, c)
            } else {
                p
            }
        }
        Add3 => {
            let x = em.b.ins().iadd(a, b);
            em.b.ins().iadd(x, c)
        }
        Xad => {
            let x = em.b.ins().bxor(a, b);
            em.b.ins().iadd(x, c)
        }
        LshlAdd => {
            let x = shl_by(em, ch, a, s[1], ishl);
            em.b.ins().iadd(x, c)
        }
        AddLshl => {
            let x = em.b.ins().iadd(a, b);
            shl_by(em, ch, x, s[2], ishl)
        }
        LshlOr => {
            let x = shl_by(em, ch, a, s[1], ishl);
            em.b.ins().bor(x, c)
        }
        AndOr => {
            let x = em.b.ins().band(a, b);
            em.b.ins().bor(x, c)
        }
        Or3 => {
            let x = em.b.ins().bor(a, b);
            em.b.ins().bor(x, c)
        }
        AlignBit => match uniform(s[2]) {
            // (S1 >> n) | (S0 << (32 - n)), the second shift as two so
            // that n = 0 leaves nothing of S0.
            Some(n) => {
                let n = em.b.ins().band_imm_u(n, 31);
                let lo = em.b.ins().ushr(b, n);
                let k = em.b.ins().iconst(types::I32, 31);
                let m = em.b.ins().isub(k, n);
                let hi = em.b.ins().ishl(a, m);
                let hi = em.b.ins().ishl_imm_u(hi, 1);
                em.b.ins().bor(lo, hi)
            }
            None => {
                let [r] = per_lane(em, &[a, b, c], |em, x| {
                    let w = em.concat(x[1], x[0]);
                    let n = em.b.ins().band_imm_u(x[2], 31);
                    let n = em.b.ins().uextend(types::I64, n);
                    let r = em.b.ins().ushr(w, n);
                    [em.b.ins().ireduce(types::I32, r)]
                });
                r
            }
        },
        Bfi => em.b.ins().bitselect(a, b, c),
        BfeU | BfeI => {
            let signed = v.k == BfeI;
            let [r] = per_lane(em, &[a, b, c], |em, x| [bfe(em, x[0], x[1], x[2], signed)]);
            r
        }
        MinU => em.b.ins().umin(a, b),
        MaxU => em.b.ins().umax(a, b),
        MinI => em.b.ins().smin(a, b),
        MaxI => em.b.ins().smax(a, b),
        Cnd => {
            let m = mask_in(em, ch);
            let a = absneg(em, a, v, 0);
            let b = absneg(em, b, v, 1);
            em.b.ins().bitselect(m, b, a)
        }
        Cmp(cc, t) => {
            out.mask = Some(match cc {
                Some(cc) => em.b.ins().icmp(cc, a, b),
                None => em.vconst(if t { [u32::MAX; 4] } else { [0; 4] }),
            });
            return out;
        }
        AddCo => {
            let x = em.b.ins().iadd(a, b);
            out.mask = Some(em.b.ins().icmp(IntCC::UnsignedLessThan, x, a));
            x
        }
        SubCo | SubRevCo => {
            let (p, q) = if v.k == SubCo { (a, b) } else { (b, a) };
            let x = em.b.ins().isub(p, q);
            out.mask = Some(em.b.ins().icmp(IntCC::UnsignedGreaterThan, q, p));
            x
        }
        AddC => {
            // The carry-in mask is all ones (-1) in carrying lanes.
            let ci = mask_in(em, ch);
            let s1 = em.b.ins().iadd(a, b);
            let x = em.b.ins().isub(s1, ci);
            let c1 = em.b.ins().icmp(IntCC::UnsignedLessThan, s1, a);
            let c2 = em.b.ins().icmp(IntCC::UnsignedLessThan, x, s1);
            out.mask = Some(em.b.ins().bor(c1, c2));
            x
        }
        SubB | SubBRev => {
            let bi = mask_in(em, ch);
            let (p, q) = if v.k == SubB { (a, b) } else { (b, a) };
            let d1 = em.b.ins().isub(p, q);
            let x = em.b.ins().iadd(d1, bi);
            let b1 = em.b.ins().icmp(IntCC::UnsignedGreaterThan, q, p);
            let zero = em.vconst([0; 4]);
            let z = em.b.ins().icmp(IntCC::Equal, d1, zero);
            let b2 = em.b.ins().band(bi, z);
            out.mask = Some(em.b.ins().bor(b1, b2));
            x
        }
        LshlAddU64 => unreachable!("handled above"),
        _ => unreachable!("f32 operations handled above"),
    };
    out.d = Some(d);
    out
}

/// Source `i`'s abs/neg modifiers applied to the bits `x` (I32X4).
fn absneg(em: &mut Em, x: Value, v: &VOp, i: u8) -> Value {
    let x = if v.abs >> i & 1 != 0 {
        let m = em.vconst([0x7fff_ffff; 4]);
        em.b.ins().band(x, m)
    } else {
        x
    };
    if v.neg >> i & 1 != 0 {
        let m = em.vconst([0x8000_0000; 4]);
        em.b.ins().bxor(x, m)
    } else {
        x
    }
}

/// All-ones lanes where MODE (i32) has none of the bits `bits` set.
fn mode_clear(em: &mut Em, mode: Value, bits: u32) -> Value {
    let m = em.b.ins().band_imm_u(mode, i64::from(bits));
    let z = em.b.ins().icmp_imm_u(IntCC::Equal, m, 0);
    let z = em.b.ins().bmask(types::I32, z);
    em.b.ins().splat(I32X4, z)
}

/// Lanes of `x` whose exponent is zero (denormals and zeros) replaced by
/// their sign, where `when` is all ones.
fn flush(em: &mut Em, x: Value, when: Option<Value>) -> Value {
    let e = em.vconst([0x7f80_0000; 4]);
    let sign = em.vconst([0x8000_0000; 4]);
    let ex = em.b.ins().band(x, e);
    let zero = em.vconst([0; 4]);
    let tiny = em.b.ins().icmp(IntCC::Equal, ex, zero);
    let tiny = match when {
        Some(w) => em.b.ins().band(tiny, w),
        None => tiny,
    };
    let s = em.b.ins().band(x, sign);
    em.b.ins().bitselect(tiny, s, x)
}

/// All-ones lanes where `x` (f32 bits) is a NaN.
fn is_nan(em: &mut Em, x: Value) -> Value {
    let m = em.vconst([0x7fff_ffff; 4]);
    let inf = em.vconst([0x7f80_0000; 4]);
    let a = em.b.ins().band(x, m);
    em.b.ins().icmp(IntCC::SignedGreaterThan, a, inf)
}

/// `x` with the quiet bit set.
fn quiet(em: &mut Em, x: Value) -> Value {
    let q = em.vconst([0x0040_0000; 4]);
    em.b.ins().bor(x, q)
}

/// `r` where no operand is a NaN; else the first NaN of `order`, quieted.
fn nan_first(em: &mut Em, r: Value, order: &[Value]) -> Value {
    let mut r = r;
    for &x in order.iter().rev() {
        let n = is_nan(em, x);
        let qx = quiet(em, x);
        r = em.b.ins().bitselect(n, qx, r);
    }
    r
}

fn as_f32(em: &mut Em, x: Value) -> Value {
    let fl = cranelift_codegen::ir::MemFlagsData::new()
        .with_endianness(cranelift_codegen::ir::Endianness::Little);
    em.b.ins().bitcast(types::F32X4, fl, x)
}

fn as_i32(em: &mut Em, x: Value) -> Value {
    let fl = cranelift_codegen::ir::MemFlagsData::new()
        .with_endianness(cranelift_codegen::ir::Endianness::Little);
    em.b.ins().bitcast(I32X4, fl, x)
}

/// An f32 operation for one chunk: the interpreter's `f32v` sources
/// (input denormals flushed per MODE, then abs/neg), the host's
/// arithmetic, its NaN order, and `out32`'s result flushing.
fn float_op(em: &mut Em, ch: &mut Chunk, v: &VOp, inp: &LaneIn) -> Value {
    use VK::*;
    let mode = inp.mode.expect("f32 operations read MODE");
    let (w, _, _, _) = shape(v.k);
    let flush_in = mode_clear(em, mode, 1 << 4);
    let mut x = [None; 3];
    for i in 0..3 {
        if w[i] == 0 {
            continue;
        }
        let raw = ch.src(em, inp.srcs[i]);
        x[i] = Some(if matches!(v.k, CvtF32I32 | CvtF32U32) {
            raw
        } else {
            let f = flush(em, raw, Some(flush_in));
            absneg(em, f, v, i as u8)
        });
    }
    let a = x[0].expect("source 0");
    let r = match v.k {
        FAdd | FSub | FSubRev | FMul => {
            let b = x[1].expect("source 1");
            let (p, q) = if v.k == FSubRev { (b, a) } else { (a, b) };
            let (fp, fq) = (as_f32(em, p), as_f32(em, q));
            let f = match v.k {
                FAdd => em.b.ins().fadd(fp, fq),
                FMul => em.b.ins().fmul(fp, fq),
                _ => em.b.ins().fsub(fp, fq),
            };
            let r = as_i32(em, f);
            nan_first(em, r, &[p, q])
        }
        Fma => {
            let (b, c) = (x[1].expect("source 1"), x[2].expect("source 2"));
            let (fa, fb, fc) = (as_f32(em, a), as_f32(em, b), as_f32(em, c));
            let f = em.b.ins().fma(fa, fb, fc);
            let r = as_i32(em, f);
            nan_first(em, r, &[a, b, c])
        }
        Mad => {
            let (b, c) = (x[1].expect("source 1"), x[2].expect("source 2"));
            let (a, b, c) = (flush(em, a, None), flush(em, b, None), flush(em, c, None));
            let (fa, fb) = (as_f32(em, a), as_f32(em, b));
            let p = em.b.ins().fmul(fa, fb);
            let p = as_i32(em, p);
            let p = nan_first(em, p, &[b, a]);
            let p = flush(em, p, None);
            let (fp, fc) = (as_f32(em, p), as_f32(em, c));
            let s = em.b.ins().fadd(fp, fc);
            let s = as_i32(em, s);
            let s = nan_first(em, s, &[c, p]);
            return flush(em, s, None);
        }
        FMin | FMax => {
            let b = x[1].expect("source 1");
            min_max(em, a, b, v.k == FMax, mode)
        }
        CvtI32F32 => {
            let f = as_f32(em, a);
            return em.b.ins().fcvt_to_sint_sat(I32X4, f);
        }
        CvtU32F32 => {
            let f = as_f32(em, a);
            return em.b.ins().fcvt_to_uint_sat(I32X4, f);
        }
        CvtF32I32 => {
            let f = em.b.ins().fcvt_from_sint(types::F32X4, a);
            as_i32(em, f)
        }
        CvtF32U32 => {
            let f = em.b.ins().fcvt_from_uint(types::F32X4, a);
            as_i32(em, f)
        }
        _ => unreachable!("not an f32 operation"),
    };
    // out32: results flushed unless FP_DENORM[1] (bit 5) is set.
    let flush_out = mode_clear(em, mode, 1 << 5);
    flush(em, r, Some(flush_out))
}

/// The interpreter's `min32` / `max32` per lane (f32 bits).
fn min_max(em: &mut Em, a: Value, b: Value, max: bool, mode: Value) -> Value {
    use cranelift_codegen::ir::condcodes::FloatCC;
    let (fa, fb) = (as_f32(em, a), as_f32(em, b));
    let cc = if max {
        FloatCC::GreaterThanOrEqual
    } else {
        FloatCC::LessThan
    };
    let pick_a = em.b.ins().fcmp(cc, fa, fb);
    let mut r = em.b.ins().bitselect(pick_a, a, b);
    // A pair of zeros: -0 below +0.
    let m = em.vconst([0x7fff_ffff; 4]);
    let both = em.b.ins().bor(a, b);
    let mag = em.b.ins().band(both, m);
    let zero = em.vconst([0; 4]);
    let zeros = em.b.ins().icmp(IntCC::Equal, mag, zero);
    let z = if max {
        em.b.ins().band(a, b)
    } else {
        em.b.ins().bor(a, b)
    };
    r = em.b.ins().bitselect(zeros, z, r);
    // A NaN loses to a number.
    let (na, nb) = (is_nan(em, a), is_nan(em, b));
    r = em.b.ins().bitselect(nb, a, r);
    r = em.b.ins().bitselect(na, b, r);
    // MODE.IEEE: a signaling NaN gives its quieted self, S0 first.
    let ieee =
        em.b.ins()
            .band_imm_u(mode, i64::from(crate::exec::valu::float::MODE_IEEE));
    let ieee = em.b.ins().icmp_imm_u(IntCC::NotEqual, ieee, 0);
    let ieee = em.b.ins().bmask(types::I32, ieee);
    let ieee = em.b.ins().splat(I32X4, ieee);
    let qbit = em.vconst([0x0040_0000; 4]);
    for (x, nx) in [(b, nb), (a, na)] {
        let q = em.b.ins().band(x, qbit);
        let sig = em.b.ins().icmp(IntCC::Equal, q, zero);
        let sig = em.b.ins().band(sig, nx);
        let sig = em.b.ins().band(sig, ieee);
        let qx = em.b.ins().bor(x, qbit);
        r = em.b.ins().bitselect(sig, qx, r);
    }
    r
}

/// `v_bfe_{u,i}32` for one lane: `w` = S2[4:0] bits of S0 from bit
/// S1[4:0], sign-extended when `signed` (0 for a zero width).
fn bfe(em: &mut Em, x: Value, off: Value, width: Value, signed: bool) -> Value {
    let o = em.b.ins().band_imm_u(off, 31);
    let w = em.b.ins().band_imm_u(width, 31);
    if signed {
        let f = em.b.ins().sshr(x, o);
        let k = em.b.ins().iconst(types::I32, 32);
        let sh = em.b.ins().isub(k, w);
        let sh = em.b.ins().band_imm_u(sh, 31);
        let r = em.b.ins().ishl(f, sh);
        let r = em.b.ins().sshr(r, sh);
        let zero = em.b.ins().iconst(types::I32, 0);
        let is0 = em.b.ins().icmp_imm_u(IntCC::Equal, w, 0);
        em.b.ins().select(is0, zero, r)
    } else {
        let f = em.b.ins().ushr(x, o);
        let one = em.b.ins().iconst(types::I32, 1);
        let m = em.b.ins().ishl(one, w);
        let m = em.b.ins().iadd_imm_s(m, -1);
        em.b.ins().band(f, m)
    }
}

/// Chunks (of four lanes) one pass of a lane loop works on, interleaved
/// so that the host overlaps their operations.
const CHUNKS_PER_PASS: i64 = 2;

/// Emits the lane loops of a run's vector instructions and writes their
/// masks: one loop without EXEC selects, taken when every EXEC the run's
/// instructions see is all ones, and one with them.
pub(super) fn emit_lanes(em: &mut Em, lanes: &[(&VOp, LaneIn)]) {
    let zero = em.b.ins().iconst(types::I64, 0);
    let accs: Vec<Option<cranelift_frontend::Variable>> = lanes
        .iter()
        .map(|(v, _)| {
            v.mask_out().map(|_| {
                let var = em.b.declare_var(types::I64);
                em.b.def_var(var, zero);
                var
            })
        })
        .collect();
    let mut execs: Vec<Value> = Vec::new();
    for (_, inp) in lanes {
        if !execs.contains(&inp.exec) {
            execs.push(inp.exec);
        }
    }
    let mut full = None;
    for &e in &execs {
        let f = em.b.ins().icmp_imm_s(IntCC::Equal, e, -1);
        full = Some(match full {
            None => f,
            Some(g) => em.b.ins().band(g, f),
        });
    }
    let fast = em.b.create_block();
    let slow = em.b.create_block();
    let join = em.b.create_block();
    em.b.ins()
        .brif(full.expect("a lane instruction"), fast, &[], slow, &[]);
    for (block, masked) in [(fast, false), (slow, true)] {
        em.b.switch_to_block(block);
        lane_loop(em, lanes, &accs, masked);
        em.b.ins().jump(join, &[]);
    }
    em.b.switch_to_block(join);
    for (k, (v, _)) in lanes.iter().enumerate() {
        if let (Some(d), Some(acc)) = (v.mask_out(), accs[k]) {
            let a = em.b.use_var(acc);
            em.sset64(d, a);
        }
    }
}

/// One loop over the wave's chunks; `masked`: results are selected by
/// EXEC (else every lane is written).
fn lane_loop(
    em: &mut Em,
    lanes: &[(&VOp, LaneIn)],
    accs: &[Option<cranelift_frontend::Variable>],
    masked: bool,
) {
    let i_var = em.b.declare_var(types::I64);
    let zero = em.b.ins().iconst(types::I64, 0);
    em.b.def_var(i_var, zero);
    let body = em.b.create_block();
    let after = em.b.create_block();
    em.b.ins().jump(body, &[]);
    em.b.switch_to_block(body);
    let i = em.b.use_var(i_var);
    let mut chunks: Vec<Chunk> = (0..CHUNKS_PER_PASS)
        .map(|c| {
            let k = em.b.ins().iadd_imm_s(i, c);
            let off = em.b.ins().ishl_imm_u(k, 4);
            let vb = em.b.ins().iadd(em.v_base, off);
            let shift = em.b.ins().ishl_imm_u(k, 2);
            Chunk {
                vb,
                shift,
                vals: BTreeMap::new(),
                masks: HashMap::new(),
                local: vec![None; lanes.len()],
            }
        })
        .collect();
    for (k, (v, inp)) in lanes.iter().enumerate() {
        for ch in chunks.iter_mut() {
            let exec = masked.then(|| ch.mask(em, inp.exec));
            let out = emit_op(em, ch, v, inp);
            let write = |em: &mut Em, ch: &mut Chunk, r: u16, x: Value| match exec {
                Some(m) => ch.vset(em, r, x, m),
                None => {
                    ch.vals.insert(r, (x, true));
                }
            };
            if let Some(d) = out.d {
                write(em, ch, v.vdst, d);
            }
            if let Some(h) = out.hi {
                write(em, ch, v.vdst + 1, h);
            }
            if let (Some(m), Some(acc)) = (out.mask, accs[k]) {
                let m = match exec {
                    Some(e) => em.b.ins().band(m, e),
                    None => m,
                };
                ch.local[k] = Some(m);
                let bits = em.b.ins().vhigh_bits(types::I64, m);
                let bits = em.b.ins().ishl(bits, ch.shift);
                let a = em.b.use_var(acc);
                let a = em.b.ins().bor(a, bits);
                em.b.def_var(acc, a);
            }
        }
    }
    for ch in &chunks {
        for (&r, &(v, dirty)) in ch.vals.iter() {
            if dirty {
                em.b.ins().store(em.vfl, v, ch.vb, i32::from(r) * 256);
            }
        }
    }
    let i1 = em.b.ins().iadd_imm_s(i, CHUNKS_PER_PASS);
    em.b.def_var(i_var, i1);
    let more = em.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, i1, 16);
    em.b.ins().brif(more, body, &[], after, &[]);
    em.b.switch_to_block(after);
}
