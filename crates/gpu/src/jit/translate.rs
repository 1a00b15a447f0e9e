//! Block translation: find the block's instructions, decide for each
//! whether it becomes inline code, a branch, nothing, or a call of the
//! interpreter's semantic function, group the inline ones into runs, and
//! build the Cranelift function.
//!
//! Generated code sees the wave only through the [`super::Frame`]: the
//! scalar file (`s`, indexed as [`crate::exec::wave`] documents), the
//! vector file (`v`: 512 rows of 64 lanes, row `r` at `r * 256` bytes),
//! SCC, MODE, STATUS and the PC. Scalar registers, SCC and STATUS are
//! cached in SSA values and written back before every call and exit; a
//! chunk's vector registers are cached within one pass of a run's lane
//! loop and written back at its end.

use super::memory::{self, MOp};
use super::scalar::{self, SOp};
use super::vector::{self, LaneIn, VOp};
use super::{Block, call_op, code::ExecMem, frame};
use crate::exec::engine::Program;
use crate::exec::lower::base_name;
use crate::exec::op::Op;
use crate::exec::wave::{Src, sreg};
use crate::plugin::Family;
use cranelift_codegen::Context;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, AtomicRmwOp, ConstantData, Function, InstBuilder, MemFlagsData, SigRef, Signature,
    UserFuncName, Value, types,
};
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;

/// Instructions in one block at most.
pub const MAX_BLOCK: usize = 256;

/// The host's code generator, made once (`None` on hosts the tier does not
/// support).
pub(super) fn isa() -> Option<&'static dyn TargetIsa> {
    static ISA: OnceLock<Option<OwnedTargetIsa>> = OnceLock::new();
    ISA.get_or_init(|| {
        if !cfg!(target_arch = "x86_64") {
            return None;
        }
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").ok()?;
        let verify = if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        };
        flags.set("enable_verifier", verify).ok()?;
        let b = cranelift_native::builder().ok()?;
        b.finish(settings::Flags::new(flags)).ok()
    })
    .as_deref()
}

/// How a block ends when its last instruction is a branch the translator
/// emits inline.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Br {
    Always,
    /// Taken when SCC equals the flag.
    Scc(bool),
    /// Taken when VCC is zero (true) or non-zero (false).
    Vccz(bool),
    /// Taken when EXEC is zero (true) or non-zero (false).
    Execz(bool),
}

/// What one instruction becomes.
#[derive(Clone, Debug)]
pub(super) enum Kind {
    /// No effect (`s_nop`, `s_waitcnt`, ...).
    Nop,
    S(SOp),
    V(VOp),
    /// A load or store with an inline common case and the interpreter's
    /// semantic function for the rest.
    M(MOp),
    Branch(Br),
    /// A call of the interpreter's semantic function; `term`: the
    /// instruction may change the control flow or the wave's state, so the
    /// block ends after it.
    Call {
        term: bool,
    },
}

/// SOPP instructions whose semantic function does nothing.
const NOPS: &[&str] = &[
    "s_nop",
    "s_waitcnt",
    "s_wakeup",
    "s_sleep",
    "s_icache_inv",
    "s_incperflevel",
    "s_decperflevel",
    "s_ttracedata",
    "s_sendmsg",
];

/// Scalar instructions outside SOPP that change the control flow.
const CONTROL: &[&str] = &[
    "s_setpc_b64",
    "s_swappc_b64",
    "s_call_b64",
    "s_rfe_b64",
    "s_rfe_restore_b64",
    "s_cbranch_join",
    "s_cbranch_g_fork",
    "s_cbranch_i_fork",
];

pub(super) fn classify(op: &Op, pc: u64) -> Kind {
    use rocjitsu_isa::gfx9::Body;
    // An instruction the interpreter refuses (no semantics, or a form the
    // target lacks) is called, so that it faults as it does there.
    if std::ptr::fn_addr_eq(
        op.exec,
        crate::exec::lower::unsupported as crate::exec::op::ExecFn,
    ) {
        return Kind::Call { term: true };
    }
    let name = base_name(op.name());
    if let Some(Body::Sopp(_)) = op.gfx9().map(|i| i.body()) {
        return match name {
            "s_branch" => Kind::Branch(Br::Always),
            "s_cbranch_scc0" => Kind::Branch(Br::Scc(false)),
            "s_cbranch_scc1" => Kind::Branch(Br::Scc(true)),
            "s_cbranch_vccz" => Kind::Branch(Br::Vccz(true)),
            "s_cbranch_vccnz" => Kind::Branch(Br::Vccz(false)),
            "s_cbranch_execz" => Kind::Branch(Br::Execz(true)),
            "s_cbranch_execnz" => Kind::Branch(Br::Execz(false)),
            n if NOPS.contains(&n) => Kind::Nop,
            _ => match scalar::lower(op, name, pc) {
                Some(s) => Kind::S(s),
                None => Kind::Call { term: true },
            },
        };
    }
    if CONTROL.contains(&name) || op.class.family == Family::Branch {
        return Kind::Call { term: true };
    }
    if let Some(s) = scalar::lower(op, name, pc) {
        return Kind::S(s);
    }
    if let Some(v) = vector::lower(op, name) {
        return Kind::V(v);
    }
    if let Some(m) = memory::lower(op, name) {
        return Kind::M(m);
    }
    Kind::Call { term: false }
}

impl Kind {
    fn ends_block(&self) -> bool {
        matches!(self, Kind::Branch(_) | Kind::Call { term: true })
    }
}

/// One instruction of a block.
pub(super) struct Inst<'p> {
    pub pc: u64,
    pub op: &'p Op,
    pub kind: Kind,
}

/// The instructions of the block at `start`: up to and including the first
/// that ends a block, at most [`MAX_BLOCK`], stopping before an
/// instruction that does not decode (the interpreter reports it).
pub(super) fn scan(prog: &Program, start: u64) -> Vec<Inst<'_>> {
    let mut out = Vec::new();
    let mut pc = start;
    while out.len() < MAX_BLOCK {
        let Ok(op) = prog.fetch(pc) else { break };
        let kind = classify(op, pc);
        let end = kind.ends_block();
        out.push(Inst { pc, op, kind });
        pc = pc.wrapping_add(u64::from(op.len));
        if end {
            break;
        }
    }
    out
}

/// Where control may go after the block at `pc` (for translating a whole
/// kernel ahead of time).
pub(super) fn successors(prog: &Program, pc: u64) -> Vec<u64> {
    let insts = scan(prog, pc);
    let Some(last) = insts.last() else {
        return Vec::new();
    };
    let next = last.pc.wrapping_add(u64::from(last.op.len));
    match last.kind {
        Kind::Branch(br) => {
            let target = crate::exec::scalar::branch_dest(next, last.op.imm);
            if br == Br::Always {
                vec![target]
            } else {
                vec![target, next]
            }
        }
        _ if base_name(last.op.name()).starts_with("s_endpgm") => Vec::new(),
        _ => vec![next],
    }
}

/// A piece of a block in emission order.
enum Piece {
    /// Instructions that are all inline (scalar, vector, nops).
    Run(Vec<usize>),
    /// One instruction called out to the interpreter.
    Call(usize),
    /// A load or store: inline, or called out when unusual.
    Mem(usize),
    /// The block's final branch.
    Branch(usize),
}

/// Groups the inline instructions into runs within which the scalar
/// instructions can run first and the vector ones chunk by chunk: a run
/// ends before a scalar instruction that touches (or a vector instruction
/// that reads as a scalar) an SGPR a vector instruction of the run writes
/// (a compare or carry mask), and after a vector instruction that writes
/// EXEC. A vector instruction may read such a mask as its carry-in or
/// condition: it takes the producer's lanes.
fn plan(insts: &[Inst]) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    // SGPR index -> the vector instruction (run position) that wrote it.
    let mut lw: HashMap<u8, usize> = HashMap::new();
    let close = |run: &mut Vec<usize>, lw: &mut HashMap<u8, usize>, out: &mut Vec<Piece>| {
        if !run.is_empty() {
            out.push(Piece::Run(std::mem::take(run)));
        }
        lw.clear();
    };
    for (i, inst) in insts.iter().enumerate() {
        match &inst.kind {
            Kind::Nop => run.push(i),
            Kind::S(s) => {
                if s.touches().iter().any(|r| lw.contains_key(r)) {
                    close(&mut run, &mut lw, &mut out);
                }
                run.push(i);
            }
            Kind::V(v) => {
                let scalar_hit = v.scalar_reads().iter().any(|r| lw.contains_key(r));
                let mask_hit = match v.mask_in_reg() {
                    Some(m) => {
                        let (a, b) = (lw.get(&m), lw.get(&m.wrapping_add(1)));
                        match (a, b) {
                            (None, None) => false,
                            (Some(&p), Some(&q))
                                if p == q && local_mask_of(insts, &run, p) == Some(m) =>
                            {
                                false
                            }
                            _ => true,
                        }
                    }
                    None => false,
                };
                if scalar_hit || mask_hit {
                    close(&mut run, &mut lw, &mut out);
                }
                run.push(i);
                if let Some(d) = v.mask_out() {
                    let pos = run.len() - 1;
                    for r in [d, d.wrapping_add(1)] {
                        if r < 128 && r != sreg::NULL {
                            lw.insert(r, pos);
                        }
                    }
                    if d >= sreg::EXEC - 1 {
                        // EXEC (or its low half paired with s125) changes.
                        close(&mut run, &mut lw, &mut out);
                    }
                }
            }
            Kind::Call { .. } => {
                close(&mut run, &mut lw, &mut out);
                out.push(Piece::Call(i));
            }
            Kind::M(_) => {
                close(&mut run, &mut lw, &mut out);
                out.push(Piece::Mem(i));
            }
            Kind::Branch(_) => {
                close(&mut run, &mut lw, &mut out);
                out.push(Piece::Branch(i));
            }
        }
    }
    close(&mut run, &mut lw, &mut out);
    out
}

/// The mask register the vector instruction at run position `p` writes.
fn local_mask_of(insts: &[Inst], run: &[usize], p: usize) -> Option<u8> {
    match &insts[*run.get(p)?].kind {
        Kind::V(v) => v.mask_out(),
        _ => None,
    }
}

/// The emitter: the function being built, the frame's pointers and the
/// caches of scalar state.
pub(super) struct Em<'a> {
    pub b: FunctionBuilder<'a>,
    /// Memory flags of the frame and scalar state (aligned, never
    /// trapping) and of vector rows (never trapping, maybe unaligned).
    pub fl: MemFlagsData,
    pub vfl: MemFlagsData,
    pub frame: Value,
    pub call_conv: cranelift_codegen::isa::CallConv,
    pub s_base: Value,
    pub v_base: Value,
    scc_ptr: Value,
    status_ptr: Value,
    mode_ptr: Value,
    pc_ptr: Value,
    /// Cached SGPRs: value (i32) and whether it differs from memory.
    sregs: BTreeMap<u8, (Value, bool)>,
    /// Cached SCC (i8, 0 or 1).
    scc: Option<(Value, bool)>,
    status: Option<(Value, bool)>,
    /// Cached MODE (translated code never writes it).
    mode: Option<Value>,
    /// MODE's f32 rounding is known to be to nearest even here (checked
    /// since the last call, which may change MODE).
    rne: bool,
}

impl Em<'_> {
    fn load_bases(&mut self) {
        let fl = self.fl;
        let f = self.frame;
        self.s_base = self.b.ins().load(types::I64, fl, f, frame::S);
        self.v_base = self.b.ins().load(types::I64, fl, f, frame::V);
        self.scc_ptr = self.b.ins().load(types::I64, fl, f, frame::SCC);
        self.status_ptr = self.b.ins().load(types::I64, fl, f, frame::STATUS);
        self.mode_ptr = self.b.ins().load(types::I64, fl, f, frame::MODE);
        self.pc_ptr = self.b.ins().load(types::I64, fl, f, frame::PC);
    }

    pub fn iconst32(&mut self, x: u32) -> Value {
        self.b.ins().iconst(types::I32, i64::from(x as i32))
    }

    pub fn iconst64(&mut self, x: u64) -> Value {
        self.b.ins().iconst(types::I64, x as i64)
    }

    /// SGPR `i` (0 outside the file), as the interpreter's `s32` reads it.
    pub fn sget(&mut self, i: u8) -> Value {
        if usize::from(i) >= crate::exec::wave::SREGS {
            return self.iconst32(0);
        }
        if let Some((v, _)) = self.sregs.get(&i) {
            return *v;
        }
        let v = self
            .b
            .ins()
            .load(types::I32, self.fl, self.s_base, i32::from(i) * 4);
        self.sregs.insert(i, (v, false));
        v
    }

    /// Writes SGPR `i` (dropped for `null` and outside the file).
    pub fn sset(&mut self, i: u8, v: Value) {
        if i != sreg::NULL && usize::from(i) < crate::exec::wave::SREGS {
            self.sregs.insert(i, (v, true));
        }
    }

    pub fn sget64(&mut self, i: u8) -> Value {
        let lo = self.sget(i);
        let hi = self.sget(i.wrapping_add(1));
        self.concat(lo, hi)
    }

    pub fn sset64(&mut self, i: u8, v: Value) {
        let (lo, hi) = self.split(v);
        self.sset(i, lo);
        self.sset(i.wrapping_add(1), hi);
    }

    pub fn concat(&mut self, lo: Value, hi: Value) -> Value {
        let lo = self.b.ins().uextend(types::I64, lo);
        let hi = self.b.ins().uextend(types::I64, hi);
        let hi = self.b.ins().ishl_imm_u(hi, 32);
        self.b.ins().bor(lo, hi)
    }

    pub fn split(&mut self, v: Value) -> (Value, Value) {
        let lo = self.b.ins().ireduce(types::I32, v);
        let hi = self.b.ins().ushr_imm_u(v, 32);
        let hi = self.b.ins().ireduce(types::I32, hi);
        (lo, hi)
    }

    /// SCC as an i8 0/1.
    pub fn scc(&mut self) -> Value {
        if let Some((v, _)) = self.scc {
            return v;
        }
        let v = self.b.ins().load(types::I8, self.fl, self.scc_ptr, 0);
        self.scc = Some((v, false));
        v
    }

    /// Sets SCC from an i8 0/1.
    pub fn set_scc(&mut self, v: Value) {
        self.scc = Some((v, true));
    }

    /// SCC = (x != 0).
    pub fn set_scc_nz(&mut self, x: Value) {
        let v = self.b.ins().icmp_imm_u(IntCC::NotEqual, x, 0);
        self.set_scc(v);
    }

    pub fn status(&mut self) -> Value {
        if let Some((v, _)) = self.status {
            return v;
        }
        let v = self.b.ins().load(types::I32, self.fl, self.status_ptr, 0);
        self.status = Some((v, false));
        v
    }

    pub fn set_status(&mut self, v: Value) {
        self.status = Some((v, true));
    }

    /// MODE (i32).
    pub fn mode(&mut self) -> Value {
        if let Some(v) = self.mode {
            return v;
        }
        let v = self.b.ins().load(types::I32, self.fl, self.mode_ptr, 0);
        self.mode = Some(v);
        v
    }

    /// A scalar source's 32-bit value as [`crate::exec::wave::Wave::read_s32`]
    /// reads it (`None`: not readable by translated code).
    pub fn src32(&mut self, src: Src) -> Option<Value> {
        Some(match src {
            Src::S(i) => self.sget(i),
            Src::V(_) | Src::Hw(_) if hw_value(src).is_none() => return None,
            Src::Hw(_) => {
                let v = self.hw(src)?;
                self.b.ins().ireduce(types::I32, v)
            }
            _ => {
                let bits = const_bits(src, crate::exec::wave::Width::B32)?;
                self.iconst32(bits as u32)
            }
        })
    }

    /// A scalar source's 64-bit value as `read_s64` reads it with width
    /// `w` (register pairs; constants widened per `w`).
    pub fn src64(&mut self, src: Src, w: crate::exec::wave::Width) -> Option<Value> {
        Some(match src {
            Src::S(i) => self.sget64(i),
            Src::V(_) => return None,
            Src::Hw(_) => self.hw(src)?,
            _ => {
                let bits = const_bits(src, w)?;
                self.iconst64(bits)
            }
        })
    }

    /// The hardware registers translated code can read (as i64).
    fn hw(&mut self, src: Src) -> Option<Value> {
        use crate::exec::wave::HwReg;
        let Src::Hw(h) = src else { return None };
        Some(match h {
            HwReg::Scc => {
                let s = self.scc();
                self.b.ins().uextend(types::I64, s)
            }
            HwReg::Vccz | HwReg::Execz => {
                let r = if h == HwReg::Vccz {
                    sreg::VCC
                } else {
                    sreg::EXEC
                };
                let x = self.sget64(r);
                let z = self.b.ins().icmp_imm_u(IntCC::Equal, x, 0);
                self.b.ins().uextend(types::I64, z)
            }
            _ => return None,
        })
    }

    /// Writes every changed cached value back to the wave.
    pub fn flush(&mut self) {
        let fl = self.fl;
        for (&i, e) in self.sregs.iter_mut() {
            if e.1 {
                self.b.ins().store(fl, e.0, self.s_base, i32::from(i) * 4);
                e.1 = false;
            }
        }
        if let Some((v, true)) = self.scc {
            self.b.ins().store(fl, v, self.scc_ptr, 0);
            self.scc = Some((v, false));
        }
        if let Some((v, true)) = self.status {
            self.b.ins().store(fl, v, self.status_ptr, 0);
            self.status = Some((v, false));
        }
    }

    /// Writes every changed cached value back to the wave but keeps them
    /// marked changed: for a path that leaves the code other paths go on
    /// with (an instruction called out to the interpreter that writes no
    /// scalar state).
    pub fn flush_keep(&mut self) {
        let fl = self.fl;
        for (&i, e) in self.sregs.iter() {
            if e.1 {
                self.b.ins().store(fl, e.0, self.s_base, i32::from(i) * 4);
            }
        }
        if let Some((v, true)) = self.scc {
            self.b.ins().store(fl, v, self.scc_ptr, 0);
        }
        if let Some((v, true)) = self.status {
            self.b.ins().store(fl, v, self.status_ptr, 0);
        }
    }

    /// The frame's (start, end) of the LDS (`k` = 0) or private (1)
    /// aperture in flat addresses.
    pub fn aperture(&mut self, k: i32) -> (Value, Value) {
        let at = frame::APERTURES + 16 * k;
        let lo = self.b.ins().load(types::I64, self.fl, self.frame, at);
        let hi = self.b.ins().load(types::I64, self.fl, self.frame, at + 8);
        (lo, hi)
    }

    /// The frame's pointers to the range cache and the Vm's epoch.
    pub fn ranges(&mut self) -> (Value, Value) {
        let r = self
            .b
            .ins()
            .load(types::I64, self.fl, self.frame, frame::RANGES);
        let e = self
            .b
            .ins()
            .load(types::I64, self.fl, self.frame, frame::EPOCH);
        (r, e)
    }

    /// Forgets the caches (after a call that may change anything).
    fn forget(&mut self) {
        self.sregs.clear();
        self.scc = None;
        self.status = None;
        self.mode = None;
        self.rne = false;
    }

    /// A 128-bit constant of four u32 lanes.
    pub fn vconst(&mut self, lanes: [u32; 4]) -> Value {
        let bytes: Vec<u8> = lanes.iter().flat_map(|x| x.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(types::I32X4, c)
    }
}

/// Whether translated code can read a hardware-register source.
fn hw_value(src: Src) -> Option<()> {
    use crate::exec::wave::HwReg;
    match src {
        Src::Hw(HwReg::Scc | HwReg::Vccz | HwReg::Execz) => Some(()),
        _ => None,
    }
}

/// A constant source's bits at width `w` (`None` for registers).
pub(super) fn const_bits(src: Src, w: crate::exec::wave::Width) -> Option<u64> {
    match src {
        Src::Int(_) | Src::Float(_) | Src::Lit(_) | Src::None => {
            let wave = crate::exec::wave::Wave::new(1);
            Some(crate::exec::wave::const_bits(
                src,
                w,
                &wave,
                &crate::exec::wave::Apertures::default(),
            ))
        }
        _ => None,
    }
}

/// Whether a scalar source is readable by translated code.
pub(super) fn src_ok(src: Src) -> bool {
    match src {
        Src::S(_) | Src::Int(_) | Src::Float(_) | Src::Lit(_) | Src::None => true,
        Src::Hw(_) => hw_value(src).is_some(),
        Src::V(_) => false,
    }
}

/// Translates the block at `start`.
pub(super) fn translate(prog: &Program, start: u64) -> Result<Block, String> {
    let isa = isa().ok_or("no code generator for this host")?;
    let insts = scan(prog, start);
    if insts.is_empty() {
        return Err("no instruction decodes there".into());
    }
    let calls: Vec<usize> = insts
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i.kind, Kind::Call { .. } | Kind::M(_)))
        .map(|(k, _)| k)
        .collect();
    let sites: Box<[AtomicU64]> = calls.iter().map(|_| AtomicU64::new(0)).collect();
    let names: Box<[&'static str]> = calls.iter().map(|&k| insts[k].op.name()).collect();

    let ptr = types::I64;
    let cc = isa.default_call_conv();
    let mut sig = Signature::new(cc);
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(types::I64));
    sig.returns.push(AbiParam::new(types::I64));
    let mut func = Function::with_name_signature(UserFuncName::default(), sig);
    let mut fctx = FunctionBuilderContext::new();
    let b = FunctionBuilder::new(&mut func, &mut fctx);
    let fl = MemFlagsData::trusted();
    let vfl = MemFlagsData::new().with_notrap();
    let mut em = Em {
        b,
        fl,
        vfl,
        frame: Value::from_u32(0),
        call_conv: cc,
        s_base: Value::from_u32(0),
        v_base: Value::from_u32(0),
        scc_ptr: Value::from_u32(0),
        status_ptr: Value::from_u32(0),
        mode_ptr: Value::from_u32(0),
        pc_ptr: Value::from_u32(0),
        sregs: BTreeMap::new(),
        scc: None,
        status: None,
        mode: None,
        rne: false,
    };
    let entry = em.b.create_block();
    em.b.append_block_params_for_function_params(entry);
    em.b.switch_to_block(entry);
    em.frame = em.b.block_params(entry)[0];
    let budget = em.b.block_params(entry)[1];
    let done = em.b.declare_var(types::I64);
    let zero = em.b.ins().iconst(types::I64, 0);
    em.b.def_var(done, zero);
    let head = em.b.create_block();
    em.b.ins().jump(head, &[]);
    em.b.switch_to_block(head);
    em.load_bases();

    let mut call_sig = Signature::new(cc);
    call_sig.params.push(AbiParam::new(ptr));
    call_sig.params.push(AbiParam::new(types::I64));
    call_sig.returns.push(AbiParam::new(types::I32));
    let call_sig = em.b.import_signature(call_sig);

    let n = insts.len() as u32;
    let mut site = 0;
    let mut ended = false;
    for piece in plan(&insts) {
        match piece {
            Piece::Run(idx) => emit_run(&mut em, &insts, &idx, done),
            Piece::Call(k) => {
                em.flush();
                call_interp(&mut em, &sites[site], insts[k].pc, k, done, call_sig);
                site += 1;
                em.load_bases();
                em.forget();
                if let Kind::Call { term: true } = insts[k].kind {
                    let d = em.b.use_var(done);
                    let v = em.b.ins().iadd_imm_s(d, i64::from(k as u32 + 1));
                    em.b.ins().return_(&[v]);
                    ended = true;
                }
            }
            Piece::Mem(k) => {
                let Kind::M(m) = &insts[k].kind else {
                    unreachable!("a memory piece")
                };
                let slow = em.b.create_block();
                let cont = em.b.create_block();
                em.b.set_cold_block(slow);
                memory::emit(&mut em, m, slow, cont);
                // The interpreter's semantic function for everything the
                // inline form does not take: it writes VGPRs and memory
                // only, so the cached scalar state stays good.
                em.b.switch_to_block(slow);
                em.flush_keep();
                call_interp(&mut em, &sites[site], insts[k].pc, k, done, call_sig);
                site += 1;
                em.b.ins().jump(cont, &[]);
                em.b.switch_to_block(cont);
                em.load_bases();
            }
            Piece::Branch(k) => {
                emit_branch(&mut em, &insts[k], start, n, done, budget, head);
                ended = true;
            }
        }
    }
    if !ended {
        // The block was cut (length, or an instruction that does not
        // decode): continue after its last instruction.
        let last = insts.last().expect("non-empty");
        em.flush();
        let next = em.iconst64(last.pc.wrapping_add(u64::from(last.op.len)));
        em.b.ins().store(em.fl, next, em.pc_ptr, 0);
        let d = em.b.use_var(done);
        let v = em.b.ins().iadd_imm_s(d, i64::from(n));
        em.b.ins().return_(&[v]);
    }
    em.b.seal_all_blocks();
    let Em { b, .. } = em;
    b.finalize(isa.frontend_config());

    let mut ctx = Context::for_function(func);
    let code = ctx
        .compile(isa, &mut ControlPlane::default())
        .map_err(|e| format!("code generation failed: {:?}", e.inner))?;
    if !code.buffer.relocs().is_empty() {
        return Err("the code needs relocations".into());
    }
    let bytes = code.code_buffer().to_vec();
    dump(start, &ctx.func, &bytes);
    let mem = ExecMem::new(&bytes).map_err(|e| format!("cannot map code: {e}"))?;
    // SAFETY: the mapping holds a complete function compiled for the host
    // with the signature `BlockFn` declares (two i64 parameters, an i64
    // result, the host's C calling convention).
    let f = unsafe { std::mem::transmute::<*const u8, super::BlockFn>(mem.addr()) };
    Ok(Block {
        f,
        insts: n,
        sites,
        names,
        _code: mem,
    })
}

/// Emits a call of the interpreter's semantic function for the instruction
/// at `pc` (the `k`th of the block), counted in `site`: on a fault the
/// block returns; otherwise the builder continues after the call. The
/// caller writes the cached state back first.
fn call_interp(em: &mut Em, site: &AtomicU64, pc: u64, k: usize, done: Variable, call_sig: SigRef) {
    let counter = em.iconst64(std::ptr::from_ref(site) as u64);
    let one = em.iconst64(1);
    em.b.ins()
        .atomic_rmw(types::I64, em.fl, AtomicRmwOp::Add, counter, one);
    let callee = em.iconst64(call_op as *const () as u64);
    let pcv = em.iconst64(pc);
    let frame = em.frame;
    let call = em.b.ins().call_indirect(call_sig, callee, &[frame, pcv]);
    let r = em.b.inst_results(call)[0];
    let fault = em.b.create_block();
    let cont = em.b.create_block();
    em.b.set_cold_block(fault);
    em.b.ins().brif(r, fault, &[], cont, &[]);
    em.b.switch_to_block(fault);
    let d = em.b.use_var(done);
    let v = em.b.ins().iadd_imm_s(d, (1i64 << 32) + k as i64);
    em.b.ins().return_(&[v]);
    em.b.switch_to_block(cont);
}

/// With `ROCJITSU_JIT_DUMP=DIR` (a debugging aid), writes each block's
/// Cranelift IR and machine code to `DIR/<pc>.clif` and `DIR/<pc>.bin`
/// (`objdump -D -b binary -m i386:x86-64` reads the latter).
fn dump(pc: u64, func: &Function, code: &[u8]) {
    static DIR: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    let Some(dir) = DIR.get_or_init(|| std::env::var_os("ROCJITSU_JIT_DUMP").map(Into::into))
    else {
        return;
    };
    let _ = std::fs::write(dir.join(format!("{pc:x}.clif")), func.display().to_string());
    let _ = std::fs::write(dir.join(format!("{pc:x}.bin")), code);
}

/// Emits the block's final branch: PC = target or the next instruction,
/// looping in place when the target is the block's own start and the
/// budget allows another pass.
#[allow(clippy::too_many_arguments)]
fn emit_branch(
    em: &mut Em,
    inst: &Inst,
    start: u64,
    n: u32,
    done: Variable,
    budget: Value,
    head: cranelift_codegen::ir::Block,
) {
    let Kind::Branch(br) = inst.kind else {
        unreachable!("a branch piece")
    };
    let next = inst.pc.wrapping_add(u64::from(inst.op.len));
    let target = crate::exec::scalar::branch_dest(next, inst.op.imm);
    let taken = match br {
        Br::Always => em.b.ins().iconst(types::I8, 1),
        Br::Scc(v) => {
            let s = em.scc();
            em.b.ins().icmp_imm_u(IntCC::Equal, s, i64::from(v))
        }
        Br::Vccz(z) | Br::Execz(z) => {
            let r = if matches!(br, Br::Vccz(_)) {
                sreg::VCC
            } else {
                sreg::EXEC
            };
            let x = em.sget64(r);
            let cc = if z { IntCC::Equal } else { IntCC::NotEqual };
            em.b.ins().icmp_imm_u(cc, x, 0)
        }
    };
    em.flush();
    let d = em.b.use_var(done);
    let d1 = em.b.ins().iadd_imm_s(d, i64::from(n));
    if target == start {
        // Another pass if taken and it fits in the budget.
        let need = em.b.ins().iadd_imm_s(d1, i64::from(n));
        let fits =
            em.b.ins()
                .icmp(IntCC::UnsignedLessThanOrEqual, need, budget);
        let again = em.b.ins().band(taken, fits);
        let out = em.b.create_block();
        em.b.def_var(done, d1);
        em.b.ins().brif(again, head, &[], out, &[]);
        em.b.switch_to_block(out);
    }
    let t = em.iconst64(target);
    let f = em.iconst64(next);
    let pc = em.b.ins().select(taken, t, f);
    em.b.ins().store(em.fl, pc, em.pc_ptr, 0);
    em.b.ins().return_(&[d1]);
}

/// Emits a run: its scalar instructions in order, then its vector
/// instructions chunk by chunk, then the masks they wrote. A run with f32
/// operations that round first checks that MODE rounds f32 to nearest
/// even; if not, the block stops before the run and hands the rest to the
/// interpreter (status 2: PC at the run's first instruction).
fn emit_run(em: &mut Em, insts: &[Inst], idx: &[usize], done: Variable) {
    let rounds = idx
        .iter()
        .any(|&i| matches!(&insts[i].kind, Kind::V(v) if v.needs_rne()));
    if rounds && !em.rne {
        let mode = em.mode();
        let r = em.b.ins().band_imm_u(mode, 3);
        let other = em.b.create_block();
        let go = em.b.create_block();
        em.b.set_cold_block(other);
        em.b.ins().brif(r, other, &[], go, &[]);
        em.b.switch_to_block(other);
        em.flush_keep();
        let first = idx[0];
        let pc = em.iconst64(insts[first].pc);
        em.b.ins().store(em.fl, pc, em.pc_ptr, 0);
        let d = em.b.use_var(done);
        let v = em.b.ins().iadd_imm_s(d, (2i64 << 32) + first as i64);
        em.b.ins().return_(&[v]);
        em.b.switch_to_block(go);
        em.rne = true;
    }
    let mut lanes: Vec<(&VOp, LaneIn)> = Vec::new();
    for &i in idx {
        match &insts[i].kind {
            Kind::S(s) => scalar::emit(em, s),
            Kind::V(v) => {
                let producer = v
                    .mask_in_reg()
                    .and_then(|m| lanes.iter().rposition(|(p, _)| p.mask_out() == Some(m)));
                let input = vector::inputs(em, v, producer);
                lanes.push((v, input));
            }
            _ => {}
        }
    }
    if !lanes.is_empty() {
        vector::emit_lanes(em, &lanes);
    }
}
