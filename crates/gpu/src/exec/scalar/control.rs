//! Program control: branches, calls and the PC (`s_getpc` / `s_setpc` /
//! `s_swappc` / `s_call`), EXEC updates (`s_*_saveexec_b64`,
//! `s_*_wrexec_b64`), relative SGPR moves, the fork/join branch stack, GPR
//! indexing mode and the SOPP program-control instructions.
//!
//! The engine completes memory operations synchronously, so `s_waitcnt`,
//! cache maintenance, sleeps, priorities and performance hints do nothing.

use super::{branch_dest, s32, s64};
use crate::exec::op::{Ctx, ExecFn, Fault, Op};
use crate::exec::wave::{SREGS, Src, Wave, WaveState, sreg};

/// MODE.GPR_IDX_EN (ISA manual, "MODE register").
pub const MODE_GPR_IDX_EN: u32 = 1 << 27;
/// MODE.VSKIP: vector instructions are skipped while set.
pub const MODE_VSKIP: u32 = 1 << 28;
/// MODE.CSP: the fork/join branch-stack pointer, bits 31:29.
const CSP_SHIFT: u32 = 29;

/// STATUS.PRIV.
pub const STATUS_PRIV: u32 = 1 << 5;
/// STATUS.USER_PRIO (set by `s_setprio`), bits 4:3.
const STATUS_USER_PRIO_SHIFT: u32 = 3;
/// STATUS.COND_DBG_USER and COND_DBG_SYS.
pub const STATUS_COND_DBG_USER: u32 = 1 << 20;
pub const STATUS_COND_DBG_SYS: u32 = 1 << 21;

/// The semantic function of a program-control mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "s_nop" | "s_waitcnt" | "s_wakeup" | "s_sleep" | "s_icache_inv" | "s_incperflevel"
        | "s_decperflevel" | "s_ttracedata" | "s_sendmsg" => s_nop,
        "s_endpgm" | "s_endpgm_saved" | "s_endpgm_ordered_ps_done" => s_endpgm,
        "s_barrier" => s_barrier,
        "s_setkill" => s_setkill,
        "s_sethalt" => s_sethalt,
        "s_sendmsghalt" => s_sendmsghalt,
        "s_setprio" => s_setprio,
        "s_trap" => s_trap,
        "s_branch" => s_branch,
        "s_cbranch_scc0" => s_cbranch_scc0,
        "s_cbranch_scc1" => s_cbranch_scc1,
        "s_cbranch_vccz" => s_cbranch_vccz,
        "s_cbranch_vccnz" => s_cbranch_vccnz,
        "s_cbranch_execz" => s_cbranch_execz,
        "s_cbranch_execnz" => s_cbranch_execnz,
        "s_cbranch_cdbgsys" => s_cbranch_cdbgsys,
        "s_cbranch_cdbguser" => s_cbranch_cdbguser,
        "s_cbranch_cdbgsys_or_user" => s_cbranch_cdbgsys_or_user,
        "s_cbranch_cdbgsys_and_user" => s_cbranch_cdbgsys_and_user,
        "s_getpc_b64" => s_getpc_b64,
        "s_setpc_b64" => s_setpc_b64,
        "s_swappc_b64" => s_swappc_b64,
        "s_call_b64" => s_call_b64,
        "s_rfe_b64" | "s_rfe_restore_b64" => s_rfe_b64,
        "s_and_saveexec_b64" => saveexec::<AND>,
        "s_or_saveexec_b64" => saveexec::<OR>,
        "s_xor_saveexec_b64" => saveexec::<XOR>,
        "s_andn2_saveexec_b64" => saveexec::<ANDN2>,
        "s_orn2_saveexec_b64" => saveexec::<ORN2>,
        "s_nand_saveexec_b64" => saveexec::<NAND>,
        "s_nor_saveexec_b64" => saveexec::<NOR>,
        "s_xnor_saveexec_b64" => saveexec::<XNOR>,
        "s_andn1_saveexec_b64" => saveexec::<ANDN1>,
        "s_orn1_saveexec_b64" => saveexec::<ORN1>,
        "s_andn1_wrexec_b64" => wrexec::<ANDN1>,
        "s_andn2_wrexec_b64" => wrexec::<ANDN2>,
        "s_movrels_b32" => s_movrels_b32,
        "s_movrels_b64" => s_movrels_b64,
        "s_movreld_b32" => s_movreld_b32,
        "s_movreld_b64" => s_movreld_b64,
        "s_cbranch_g_fork" => s_cbranch_g_fork,
        "s_cbranch_i_fork" => s_cbranch_i_fork,
        "s_cbranch_join" => s_cbranch_join,
        "s_set_gpr_idx_on" => s_set_gpr_idx_on,
        "s_set_gpr_idx_off" => s_set_gpr_idx_off,
        "s_set_gpr_idx_mode" => s_set_gpr_idx_mode,
        "s_set_gpr_idx_idx" => s_set_gpr_idx_idx,
        "s_setvskip" => s_setvskip,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// SOPP: wave state.

fn s_nop(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Ok(())
}

fn s_endpgm(c: &mut Ctx, _: &Op) -> Result<(), Fault> {
    c.wave.state = WaveState::Ended;
    Ok(())
}

/// `s_barrier`: the wave waits; the dispatcher releases the workgroup.
fn s_barrier(c: &mut Ctx, _: &Op) -> Result<(), Fault> {
    c.wave.state = WaveState::Barrier;
    Ok(())
}

/// `s_setkill`: kills the wave (ends it) when SIMM16[0] is set.
fn s_setkill(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.imm & 1 != 0 {
        c.wave.state = WaveState::Ended;
    }
    Ok(())
}

/// `s_sethalt 1` halts the wave until a debugger resumes it; with no
/// debugger that is reported as a fault. `s_sethalt 0` does nothing.
fn s_sethalt(_: &mut Ctx, op: &Op) -> Result<(), Fault> {
    if op.imm & 1 != 0 {
        return Err(Fault::Invalid("the wave halted (s_sethalt 1)".into()));
    }
    Ok(())
}

/// `s_sendmsghalt`: the message is dropped and the wave halts.
fn s_sendmsghalt(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Err(Fault::Invalid("the wave halted (s_sendmsghalt)".into()))
}

/// `s_setprio`: STATUS.USER_PRIO = SIMM16[1:0].
fn s_setprio(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let m = 3 << STATUS_USER_PRIO_SHIFT;
    c.wave.status = (c.wave.status & !m) | (((op.imm as u32) & 3) << STATUS_USER_PRIO_SHIFT);
    Ok(())
}

/// `s_trap`: enters the trap handler with TrapID = SIMM16[7:0]; the
/// emulator has no trap handler and reports the trap.
fn s_trap(_: &mut Ctx, op: &Op) -> Result<(), Fault> {
    Err(Fault::Trap((op.imm as u16) & 0xff))
}

// ---------------------------------------------------------------------------
// Branches.

/// A relative branch taken when `cond(wave)` holds.
macro_rules! cbranch {
    ($name:ident, |$w:ident| $cond:expr) => {
        fn $name(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
            let $w: &Wave = c.wave;
            if $cond {
                c.wave.pc = branch_dest(c.wave.pc, op.imm);
            }
            Ok(())
        }
    };
}

cbranch!(s_branch, |_w| true);
cbranch!(s_cbranch_scc0, |w| !w.scc);
cbranch!(s_cbranch_scc1, |w| w.scc);
cbranch!(s_cbranch_vccz, |w| w.vcc() == 0);
cbranch!(s_cbranch_vccnz, |w| w.vcc() != 0);
cbranch!(s_cbranch_execz, |w| w.exec() == 0);
cbranch!(s_cbranch_execnz, |w| w.exec() != 0);
cbranch!(s_cbranch_cdbgsys, |w| w.status & STATUS_COND_DBG_SYS != 0);
cbranch!(s_cbranch_cdbguser, |w| w.status & STATUS_COND_DBG_USER != 0);
cbranch!(s_cbranch_cdbgsys_or_user, |w| w.status
    & (STATUS_COND_DBG_SYS | STATUS_COND_DBG_USER)
    != 0);
cbranch!(s_cbranch_cdbgsys_and_user, |w| w.status
    & (STATUS_COND_DBG_SYS | STATUS_COND_DBG_USER)
    == STATUS_COND_DBG_SYS | STATUS_COND_DBG_USER);

/// `s_getpc_b64`: D = the address of the next instruction.
fn s_getpc_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let pc = c.wave.pc;
    c.wave.set_s64(op.sdst, pc);
    Ok(())
}

/// `s_setpc_b64`: PC = S0.
fn s_setpc_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    c.wave.pc = s64(c, op, 0);
    Ok(())
}

/// `s_swappc_b64`: D = the next instruction's address, PC = S0 (read
/// before D is written).
fn s_swappc_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let target = s64(c, op, 0);
    let pc = c.wave.pc;
    c.wave.set_s64(op.sdst, pc);
    c.wave.pc = target;
    Ok(())
}

/// `s_call_b64`: D = the next instruction's address, then a relative
/// branch.
fn s_call_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let pc = c.wave.pc;
    c.wave.set_s64(op.sdst, pc);
    c.wave.pc = branch_dest(pc, op.imm);
    Ok(())
}

/// `s_rfe_b64` (return from the trap handler): STATUS.PRIV = 0, PC = S0.
/// `s_rfe_restore_b64` does the same (its second source, for the
/// hardware's trap-handler bookkeeping, has no effect here).
fn s_rfe_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    c.wave.status &= !STATUS_PRIV;
    c.wave.pc = s64(c, op, 0);
    Ok(())
}

// ---------------------------------------------------------------------------
// EXEC.

const AND: u8 = 0;
const OR: u8 = 1;
const XOR: u8 = 2;
const ANDN2: u8 = 3;
const ORN2: u8 = 4;
const NAND: u8 = 5;
const NOR: u8 = 6;
const XNOR: u8 = 7;
const ANDN1: u8 = 8;
const ORN1: u8 = 9;

/// The new EXEC of the saveexec/wrexec operation `K` on S0 and EXEC.
#[inline(always)]
fn exec_op<const K: u8>(s: u64, e: u64) -> u64 {
    match K {
        AND => s & e,
        OR => s | e,
        XOR => s ^ e,
        ANDN2 => s & !e,
        ORN2 => s | !e,
        NAND => !(s & e),
        NOR => !(s | e),
        XNOR => !(s ^ e),
        ANDN1 => !s & e,
        _ => !s | e,
    }
}

/// `s_<op>_saveexec_b64`: D = EXEC; EXEC = op(S0, EXEC); SCC = EXEC != 0.
/// S0 is read before D is written (D may alias it).
fn saveexec<const K: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s = s64(c, op, 0);
    let old = c.wave.exec();
    let new = exec_op::<K>(s, old);
    c.wave.set_exec(new);
    c.wave.set_s64(op.sdst, old);
    c.wave.scc = new != 0;
    Ok(())
}

/// `s_<op>_wrexec_b64`: EXEC = op(S0, EXEC); D = EXEC; SCC = EXEC != 0.
fn wrexec<const K: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let s = s64(c, op, 0);
    let new = exec_op::<K>(s, c.wave.exec());
    c.wave.set_exec(new);
    c.wave.set_s64(op.sdst, new);
    c.wave.scc = new != 0;
    Ok(())
}

// ---------------------------------------------------------------------------
// Relative SGPR moves.

/// The scalar-file index `base + M0` for an `n`-dword access, when it stays
/// in the register range `base` belongs to (SGPRs or trap temporaries);
/// accesses outside it read 0 and drop writes.
fn rel_index(w: &Wave, base: u8, n: u32) -> Option<u8> {
    rel_index_at(base, n, w.m0())
}

/// [`rel_index`] with the offset `off` in place of M0 (GFX11's
/// `s_movrelsd_2_b32` takes the source's and the destination's offsets
/// from two fields of M0).
pub(crate) fn rel_index_at(base: u8, n: u32, off: u32) -> Option<u8> {
    let (lo, hi) = if base < sreg::FLAT_SCRATCH {
        (0u32, u32::from(sreg::FLAT_SCRATCH))
    } else if (sreg::TTMP0..sreg::M0).contains(&base) {
        (u32::from(sreg::TTMP0), u32::from(sreg::M0))
    } else {
        return None;
    };
    let i = u32::from(base).checked_add(off)?;
    (i >= lo && i.checked_add(n)? <= hi && (i as usize) < SREGS).then_some(i as u8)
}

/// The register-file index a register operand names.
fn reg_of(src: Src) -> Option<u8> {
    match src {
        Src::S(i) => Some(i),
        _ => None,
    }
}

/// `s_movrels_b32`: D = SGPR[S0.addr + M0].
fn s_movrels_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = reg_of(op.src[0])
        .and_then(|b| rel_index(c.wave, b, 1))
        .map_or(0, |i| c.wave.s32(i));
    c.wave.set_s32(op.sdst, v);
    Ok(())
}

/// `s_movrels_b64`: D = SGPR[S0.addr + M0] (a pair).
fn s_movrels_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = reg_of(op.src[0])
        .and_then(|b| rel_index(c.wave, b, 2))
        .map_or(0, |i| c.wave.s64(i));
    c.wave.set_s64(op.sdst, v);
    Ok(())
}

/// `s_movreld_b32`: SGPR[D.addr + M0] = S0.
fn s_movreld_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = s32(c, op, 0);
    if let Some(i) = rel_index(c.wave, op.sdst, 1) {
        c.wave.set_s32(i, v);
    }
    Ok(())
}

/// `s_movreld_b64`: SGPR[D.addr + M0] = S0 (a pair).
fn s_movreld_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = s64(c, op, 0);
    if let Some(i) = rel_index(c.wave, op.sdst, 2) {
        c.wave.set_s64(i, v);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The fork/join branch stack (ISA manual, S_CBRANCH_G_FORK / I_FORK /
// JOIN): MODE.CSP counts 128-bit entries kept in SGPR[CSP * 4 ..]: the
// mask in the low pair, the address in the high pair.

fn csp(w: &Wave) -> u32 {
    w.mode >> CSP_SHIFT
}

fn set_csp(w: &mut Wave, v: u32) {
    w.mode = (w.mode & !(7 << CSP_SHIFT)) | ((v & 7) << CSP_SHIFT);
}

/// A fork on `mask` with the taken path at `target`; the not-taken path
/// is the next instruction.
fn fork(w: &mut Wave, mask: u64, target: u64) {
    let exec = w.exec();
    let pass = mask & exec;
    let fail = !mask & exec;
    let next = w.pc;
    if pass == exec {
        w.pc = target;
    } else if fail != exec {
        let sp = csp(w);
        let slot = (sp * 4) as u8;
        let (run, run_pc, saved, saved_pc) = if fail.count_ones() < pass.count_ones() {
            (fail, next, pass, target)
        } else {
            (pass, target, fail, next)
        };
        w.set_exec(run);
        w.set_s64(slot, saved);
        w.set_s64(slot + 2, saved_pc);
        set_csp(w, sp + 1);
        w.pc = run_pc;
    }
}

/// `s_cbranch_g_fork`: S0 the mask, S1 the target address.
fn s_cbranch_g_fork(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (mask, target) = (s64(c, op, 0), s64(c, op, 1));
    fork(c.wave, mask, target);
    Ok(())
}

/// `s_cbranch_i_fork`: the `sdst` field's pair is the mask, the target is
/// relative.
fn s_cbranch_i_fork(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let mask = c.wave.s64(op.sdst);
    let target = branch_dest(c.wave.pc, op.imm);
    fork(c.wave, mask, target);
    Ok(())
}

/// `s_cbranch_join`: S0 the CSP saved before the fork.
fn s_cbranch_join(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let saved = s32(c, op, 0);
    let sp = csp(c.wave);
    if sp != saved {
        let sp = sp.wrapping_sub(1) & 7;
        set_csp(c.wave, sp);
        let slot = (sp * 4) as u8;
        let exec = c.wave.s64(slot);
        let pc = c.wave.s64(slot + 2);
        c.wave.set_exec(exec);
        c.wave.pc = pc;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// GPR indexing mode and VSKIP.

/// Vector GPR indexing while MODE.GPR_IDX_EN is set: the index M0[7:0] is
/// added to the VGPR numbers of the operands the mode M0[15:12] selects.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GprIdx {
    pub index: u16,
    /// VSRC0_REL, VSRC1_REL, VSRC2_REL.
    pub src: [bool; 3],
    /// VDST_REL.
    pub dst: bool,
}

/// The GPR indexing in force for the wave's vector instructions, if any.
#[inline]
pub fn gpr_idx(w: &Wave) -> Option<GprIdx> {
    if w.mode & MODE_GPR_IDX_EN == 0 {
        return None;
    }
    let m0 = w.m0();
    let mode = (m0 >> 12) & 0xf;
    Some(GprIdx {
        index: (m0 & 0xff) as u16,
        src: [mode & 1 != 0, mode & 2 != 0, mode & 4 != 0],
        dst: mode & 8 != 0,
    })
}

fn set_m0_bits(w: &mut Wave, mask: u32, v: u32) {
    let m0 = (w.m0() & !mask) | (v & mask);
    w.set_s32(sreg::M0, m0);
}

/// `s_set_gpr_idx_on`: GPR_IDX_EN = 1, M0[7:0] = S0[7:0], M0[15:12] = the
/// raw mode field.
fn s_set_gpr_idx_on(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let idx = s32(c, op, 0);
    let mode = match op.src[1] {
        Src::Lit(m) => m,
        _ => 0,
    };
    c.wave.mode |= MODE_GPR_IDX_EN;
    set_m0_bits(c.wave, 0xff, idx);
    set_m0_bits(c.wave, 0xf000, mode << 12);
    Ok(())
}

fn s_set_gpr_idx_off(c: &mut Ctx, _: &Op) -> Result<(), Fault> {
    c.wave.mode &= !MODE_GPR_IDX_EN;
    Ok(())
}

/// `s_set_gpr_idx_mode`: M0[15:12] = SIMM16[3:0].
fn s_set_gpr_idx_mode(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    set_m0_bits(c.wave, 0xf000, (op.imm as u32) << 12);
    Ok(())
}

/// `s_set_gpr_idx_idx`: M0[7:0] = S0[7:0].
fn s_set_gpr_idx_idx(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let idx = s32(c, op, 0);
    set_m0_bits(c.wave, 0xff, idx);
    Ok(())
}

/// `s_setvskip`: MODE.VSKIP = S0[S1[4:0]].
fn s_setvskip(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let on = (s32(c, op, 0) >> (s32(c, op, 1) & 31)) & 1 != 0;
    if on {
        c.wave.mode |= MODE_VSKIP;
    } else {
        c.wave.mode &= !MODE_VSKIP;
    }
    Ok(())
}
