//! Fetch and execute: the decoded-instruction cache of a code range and
//! the loop that runs a wave.

use super::lower::lower;
use super::op::{Ctx, Fault, Op};
use super::wave::WaveState;
use crate::mem::Vm;
use crate::plugin::{Fanout, InstEvent, MemKind, WaveId};
use rocjitsu_isa::{Family, Instruction, Target, True16, WaveSize};
use std::sync::{Arc, OnceLock};

/// Code at a GPU address range, decoded on first execution of each
/// instruction and kept (one slot per dword), shared by every wave of every
/// thread.
pub struct Program {
    pub target: Target,
    /// The wave size the code is decoded for (on GFX10 and later it decides
    /// the width of lane-mask operands; GFX9 runs 64-lane waves only).
    pub wave: WaveSize,
    base: u64,
    bytes: Vec<u8>,
    ops: Vec<OnceLock<Result<Op, Fault>>>,
    /// The translation tier's state for this code, made on first use.
    jit: OnceLock<Option<Arc<crate::jit::ProgramJit>>>,
}

impl Program {
    /// Code whose first byte is at GPU address `base`, for waves of the
    /// target's default size (64 lanes on GFX9).
    pub fn new(target: Target, base: u64, bytes: Vec<u8>) -> Program {
        Program::new_in(target, WaveSize::default_for(target), base, bytes)
    }

    /// [`Program::new`] for waves of `wave` lanes.
    pub fn new_in(target: Target, wave: WaveSize, base: u64, bytes: Vec<u8>) -> Program {
        let wave = if target.family() == Family::Gfx9 {
            WaveSize::Wave64
        } else {
            wave
        };
        let ops = (0..bytes.len().div_ceil(4))
            .map(|_| OnceLock::new())
            .collect();
        Program {
            target,
            wave,
            base,
            bytes,
            ops,
            jit: OnceLock::new(),
        }
    }

    /// The translation tier's state for this code (`None` where the host
    /// cannot run translated code, and for code of other families than
    /// GFX9, which the translator does not know).
    pub fn jit(&self) -> Option<&crate::jit::ProgramJit> {
        if self.target.family() != Family::Gfx9 {
            return None;
        }
        self.jit
            .get_or_init(|| crate::jit::ProgramJit::for_program(self))
            .as_deref()
    }

    /// Reads the code from GPU memory.
    pub fn from_vm(target: Target, vm: &Vm, base: u64, len: u64) -> Result<Program, Fault> {
        Ok(Program::new(target, base, vm.read_vec(base, len)?))
    }

    /// [`Program::from_vm`] for waves of `wave` lanes.
    pub fn from_vm_in(
        target: Target,
        wave: WaveSize,
        vm: &Vm,
        base: u64,
        len: u64,
    ) -> Result<Program, Fault> {
        Ok(Program::new_in(target, wave, base, vm.read_vec(base, len)?))
    }

    pub fn base(&self) -> u64 {
        self.base
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether `pc` is inside this program's code.
    pub fn contains(&self, pc: u64) -> bool {
        pc.wrapping_sub(self.base) < self.bytes.len() as u64
    }

    /// The lowered instruction at `pc`.
    #[inline]
    pub fn fetch(&self, pc: u64) -> Result<&Op, Fault> {
        let off = pc.wrapping_sub(self.base);
        let slot = off
            .is_multiple_of(4)
            .then(|| self.ops.get((off / 4) as usize))
            .flatten()
            .ok_or(Fault::OutsideCode(pc))?;
        slot.get_or_init(|| self.decode(off as usize))
            .as_ref()
            .map_err(Clone::clone)
    }

    #[cold]
    fn decode(&self, off: usize) -> Result<Op, Fault> {
        let bytes = self.bytes.get(off..).unwrap_or(&[]);
        match rocjitsu_isa::decode_with(self.target, self.wave, True16::Real, bytes) {
            Ok(Instruction::Gfx9(inst)) => Ok(lower(inst)),
            Ok(Instruction::Gfx10(inst)) => Ok(super::gfx10::lower(inst)),
            Ok(Instruction::Gfx11(inst)) => Ok(super::gfx11::lower(inst)),
            Ok(Instruction::Gfx12(inst)) => Ok(super::gfx12::lower(inst)),
            Err(e) => Err(Fault::Illegal(e.to_string())),
        }
    }

    /// The instruction at `pc` in LLVM syntax, for reports.
    pub fn disassemble(&self, pc: u64) -> String {
        let off = pc.wrapping_sub(self.base) as usize;
        match self.bytes.get(off..) {
            Some(b) => match rocjitsu_isa::decode_with(self.target, self.wave, True16::Real, b) {
                Ok(i) => i.to_string(),
                Err(e) => format!("<{e}>"),
            },
            None => "<outside the code>".into(),
        }
    }
}

/// How a call to [`run`] ended without a fault.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The quantum ran out; the wave can continue.
    Quantum,
    /// The wave waits at a barrier.
    Barrier,
    /// The wave ended.
    Ended,
}

/// Runs the wave in `ctx` for at most `quantum` instructions. A fault comes
/// back with the PC of the instruction that raised it.
pub fn run(ctx: &mut Ctx, prog: &Program, quantum: u64) -> Result<Stop, (Fault, u64)> {
    let mut n = 0;
    while n < quantum {
        let pc = ctx.wave.pc;
        let op = prog.fetch(pc).map_err(|f| (f, pc))?;
        ctx.wave.pc = pc.wrapping_add(u64::from(op.len));
        if let Err(f) = (op.exec)(ctx, op) {
            ctx.wave.pc = pc;
            return Err((f, pc));
        }
        n += 1;
        match ctx.wave.state {
            WaveState::Running => {}
            WaveState::Barrier => {
                ctx.wave.insts += n;
                return Ok(Stop::Barrier);
            }
            WaveState::Ended => {
                ctx.wave.insts += n;
                return Ok(Stop::Ended);
            }
        }
    }
    ctx.wave.insts += n;
    Ok(Stop::Quantum)
}

/// [`run`] with plugins: before each instruction executes, the observers
/// get it (and, for memory instructions, the access) when they want it.
/// The dispatcher calls this loop only when a plugin is enabled, so that
/// [`run`] stays as it is.
pub(crate) fn run_observed(
    ctx: &mut Ctx,
    prog: &Program,
    quantum: u64,
    id: WaveId,
    obs: &mut Fanout,
) -> Result<Stop, (Fault, u64)> {
    let wants = obs.wants;
    let mut n = 0;
    while n < quantum {
        let pc = ctx.wave.pc;
        let op = prog.fetch(pc).map_err(|f| (f, pc))?;
        if wants.instructions {
            obs.instruction(&InstEvent {
                id,
                pc,
                op,
                exec: ctx.wave.exec(),
                wave: ctx.wave,
            });
        }
        if wants.memory && op.class.mem != MemKind::None {
            obs.memory(id, pc, op, ctx);
        }
        ctx.wave.pc = pc.wrapping_add(u64::from(op.len));
        if let Err(f) = (op.exec)(ctx, op) {
            ctx.wave.pc = pc;
            return Err((f, pc));
        }
        n += 1;
        match ctx.wave.state {
            WaveState::Running => {}
            WaveState::Barrier => {
                ctx.wave.insts += n;
                return Ok(Stop::Barrier);
            }
            WaveState::Ended => {
                ctx.wave.insts += n;
                return Ok(Stop::Ended);
            }
        }
    }
    ctx.wave.insts += n;
    Ok(Stop::Quantum)
}
