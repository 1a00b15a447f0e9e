//! Running a kernel for a queue, shared by the AQL and PM4 packet
//! processors: the program decoded from the queue's process memory, the
//! dispatch on the queue's persistent threads under the watchdog and the
//! queue's stop flag, and the fault report of a dispatch that stopped.

use super::kernels::CodeIn;
use super::pool::Pool;
use super::{Cx, GpuFault, QueueError, Stop};
use crate::exec::dispatch::{self, DispatchError, Extra, Launch};
use crate::exec::engine::Program;
use crate::exec::op::Fault;
use crate::mem::{Access, Tlb};
use rocjitsu_isa::WaveSize;
use std::sync::Arc;

/// The most private memory a work-item can have: a wave's scratch size
/// (COMPUTE_TMPRING_SIZE.WAVESIZE) is 13 bits in units of 1 KiB, shared by
/// 64 lanes.
pub(crate) const MAX_PRIVATE: u32 = 8191 * 1024 / 64;

/// The decoded program holding the code at `entry`, for waves of 32 lanes
/// when `wave32` (the descriptor's `enable_wavefront_size32`; GFX9 code is
/// wave64 regardless); a fault report (`what` names the packet and kernel)
/// if it cannot be read.
pub(crate) fn program(
    cx: &Cx,
    tlb: &mut Tlb,
    entry: u64,
    wave32: bool,
    what: &dyn Fn() -> String,
) -> Result<Arc<Program>, Stop> {
    let wave = if wave32 {
        WaveSize::Wave32
    } else {
        WaveSize::Wave64
    };
    cx.kernels()
        .program(cx.vm(), tlb, cx.gpu().spec.target, wave, entry)
        .map_err(|why| {
            cx.fault(GpuFault {
                addr: entry,
                write: false,
                hang: false,
                report: format!("{}\n  {}: {why}", cx.queue_name(), what()),
                ..GpuFault::default()
            });
            Stop::Halt
        })
}

/// Runs `launch` to completion on the queue's threads (`pool`, started on
/// first use). A fault or a watchdog stop is reported with `what` (the
/// packet and the dispatch's shape) and stops the queue; so does the
/// queue being destroyed mid-dispatch (unreported).
pub(crate) fn run(
    cx: &Cx,
    pool: &mut Option<Pool>,
    prog: &Program,
    launch: &Launch,
    extra: Extra,
    what: &dyn Fn() -> String,
) -> Result<(), Stop> {
    let id = cx.ctl.id;
    let pool = pool.get_or_insert_with(|| Pool::new(super::thread_name(id)));
    let code = CodeIn {
        cache: cx.kernels(),
        target: cx.gpu().spec.target,
        wave: prog.wave,
    };
    let extra = Extra {
        cancel: Some(&cx.ctl.stop),
        workers: Some(pool),
        code: Some(&code),
        plugins: cx.shared.opts.plugins.as_deref(),
        gpu: cx.desc.gpu,
        ..extra
    };
    match dispatch::dispatch_with(cx.vm(), &cx.gpu().env, prog, launch, &extra) {
        Ok(_) => Ok(()),
        Err(DispatchError::Cancelled { .. }) => Err(Stop::Halt),
        Err(e) => {
            let (addr, write, hang) = match &e {
                DispatchError::Fault {
                    fault: Fault::Memory(m),
                    ..
                } => (m.addr, m.access != Access::Read, false),
                DispatchError::Fault {
                    fault: Fault::OutsideCode(pc),
                    ..
                } => (*pc, false, false),
                DispatchError::Timeout { .. } => (0, false, true),
                _ => (0, false, false),
            };
            let error = match &e {
                DispatchError::Fault { fault, .. } => wave_exception(fault),
                _ => None,
            };
            cx.fault(GpuFault {
                addr,
                write,
                hang,
                report: format!(
                    "{}\n  {}\n{}",
                    cx.queue_name(),
                    what(),
                    e.to_string()
                        .lines()
                        .map(|l| format!("  {l}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
                error,
            });
            Err(Stop::Halt)
        }
    }
}

/// The exception a wave's fault raises in its trap handler, as ROCr's trap
/// handler classifies it (from the trap id and SQ_WAVE_TRAPSTS): `s_trap 2`
/// (`llvm.trap`) aborts, other traps are generic, an instruction the wave
/// cannot execute is illegal, an LDS or private access outside its segment
/// an aperture violation. Memory faults (and a PC outside the code, an
/// instruction fetch fault) are none: they reach the driver as VM faults.
pub(crate) fn wave_exception(fault: &Fault) -> Option<QueueError> {
    match fault {
        Fault::Trap(2) => Some(QueueError::WAVE_ABORT),
        Fault::Trap(_) => Some(QueueError::WAVE_TRAP),
        Fault::Illegal(_) | Fault::Unsupported(_) | Fault::Invalid(_) => {
            Some(QueueError::WAVE_ILLEGAL_INSTRUCTION)
        }
        Fault::Lds { .. } | Fault::Private { .. } => Some(QueueError::WAVE_APERTURE_VIOLATION),
        Fault::Memory(_) | Fault::OutsideCode(_) => None,
    }
}
