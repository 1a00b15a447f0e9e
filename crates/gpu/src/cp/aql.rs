//! The AQL packet processor (HSA Platform System Architecture, "Architected
//! Queuing Language"; ROCr `hsa.h`, `hsa_ext_amd.h`, `amd_hsa_queue.h`).
//!
//! The ring holds 64-byte packets; packet `i` is in slot
//! `i % (ring_size / 64)`. The runtime reserves slots by bumping
//! `write_dispatch_id`, fills the packet and stores its header last, so a
//! packet is ready once the write index passed it and its header type is
//! not INVALID. After a packet the processor sets its header type back to
//! INVALID, advances `read_dispatch_id` and completes the packet's
//! completion signal. Packets run in order, so the barrier bit (wait for the
//! earlier packets) always holds.

use super::launch::{self, MAX_PRIVATE};
use super::pool::Pool;
use super::signal::{self, load_u32, load_u64, store_u64};
use super::{Cx, Engine, GpuFault, QueueError, Step, Stop};
use crate::exec::dispatch::{Extra, Launch};
use crate::mem::Tlb;
use rocjitsu_code::KernelDescriptor;
use std::time::Instant;

/// Header types (`hsa_packet_type_t`).
const VENDOR_SPECIFIC: u32 = 0;
const INVALID: u32 = 1;
const KERNEL_DISPATCH: u32 = 2;
const BARRIER_AND: u32 = 3;
const AGENT_DISPATCH: u32 = 4;
const BARRIER_OR: u32 = 5;

/// AMD vendor packet formats (the `AmdFormat` byte at offset 2):
/// `AMD_AQL_FORMAT_PM4_IB` and `HSA_AMD_PACKET_TYPE_BARRIER_VALUE`.
const AMD_PM4_IB: u8 = 1;
const AMD_BARRIER_VALUE: u8 = 2;

/// `amd_queue_t::read_dispatch_id` is at this offset in the queue, so the
/// queue (`hsa_queue_t`) address the kernel sees is the read pointer minus
/// it.
pub const READ_DISPATCH_ID_OFFSET: u64 = 128;

/// Offset of `completion_signal` in every packet type.
const COMPLETION_SIGNAL: usize = 56;

/// The AQL engine of one queue.
#[derive(Default)]
pub struct Aql {
    tlb: Tlb,
    /// Index of the next packet; loaded from the read pointer at the start.
    read: Option<u64>,
    /// When the packet at the read index began to wait (barriers).
    waiting: Option<Instant>,
    /// The GPU clock when the packet at the read index was first processed
    /// (its start timestamp).
    started: Option<u64>,
    /// Threads for dispatches of several workgroups.
    pool: Option<Pool>,
    /// The PM4 engine that runs the IBs of PM4-IB packets (its registers
    /// persist from one packet to the next, as the CP's do).
    pm4: super::pm4::Pm4,
}

fn u16_at(p: &[u8; 64], o: usize) -> u16 {
    u16::from_le_bytes([p[o], p[o + 1]])
}

fn u32_at(p: &[u8; 64], o: usize) -> u32 {
    u32::from_le_bytes([p[o], p[o + 1], p[o + 2], p[o + 3]])
}

fn u64_at(p: &[u8; 64], o: usize) -> u64 {
    u64::from_le_bytes(std::array::from_fn(|i| p[o + i]))
}

impl Engine for Aql {
    fn quiescent(&self) -> bool {
        self.pm4.quiescent()
    }

    fn step(&mut self, cx: &Cx) -> Step {
        let d = cx.desc;
        if d.ring_size < 64 || d.ring_base == 0 {
            // Inactive (KFD: a queue without a ring or with a percentage
            // of 0).
            return Step::Idle;
        }
        let vm = cx.vm();
        let read = match self.read {
            Some(r) => r,
            None => match load_u64(vm, &mut self.tlb, d.read_ptr) {
                Ok(r) => *self.read.insert(r),
                Err(f) => return cx.mem_fault("reading the queue's read pointer", &f),
            },
        };
        let write = if d.write_ptr != 0 {
            load_u64(vm, &mut self.tlb, d.write_ptr)
        } else {
            // The doorbell holds the index of the last packet written.
            load_u64(vm, &mut self.tlb, d.doorbell).map(|x| x.wrapping_add(1))
        };
        let write = match write {
            Ok(w) => w,
            Err(f) => return cx.mem_fault("reading the queue's write pointer", &f),
        };
        if write <= read {
            return Step::Idle;
        }
        let slot = d.ring_base.wrapping_add((read % (d.ring_size / 64)) * 64);
        let header = match load_u32(vm, &mut self.tlb, slot) {
            Ok(h) => h & 0xffff,
            Err(f) => return cx.mem_fault(&format!("reading packet {read}"), &f),
        };
        if header & 0xff == INVALID {
            // Reserved but not written yet.
            return Step::Idle;
        }
        let mut pkt = [0u8; 64];
        if let Err(f) = vm.read(&mut self.tlb, slot, &mut pkt) {
            return cx.mem_fault(&format!("reading packet {read}"), &f);
        }
        let start = *self.started.get_or_insert_with(|| cx.host().gpu_clock());
        let r = match header & 0xff {
            KERNEL_DISPATCH => self.kernel_dispatch(cx, read, slot, &pkt),
            BARRIER_AND | BARRIER_OR => self.barrier(cx, read, &pkt, header & 0xff == BARRIER_AND),
            VENDOR_SPECIFIC => match pkt[2] {
                // An INDIRECT_BUFFER command (dwords 1-4) whose IB runs on
                // the queue's PM4 engine: ROCr's cache invalidations,
                // direct-to-KFD runtimes' waits, writes and end-of-pipe
                // releases between dispatches.
                AMD_PM4_IB => {
                    let cmd = std::array::from_fn(|i| u32_at(&pkt, 4 + 4 * i));
                    self.pm4.run_aql_ib(cx, slot, cmd)
                }
                AMD_BARRIER_VALUE => self.barrier_value(cx, read, &pkt),
                f => Err(invalid(
                    cx,
                    read,
                    slot,
                    &format!("vendor-specific packet of unknown format {f}"),
                    QueueError::VENDOR_UNSUPPORTED,
                )),
            },
            AGENT_DISPATCH => Err(invalid(
                cx,
                read,
                slot,
                "an agent dispatch packet on a GPU kernel dispatch queue",
                QueueError::PACKET_UNSUPPORTED,
            )),
            t => Err(invalid(
                cx,
                read,
                slot,
                &format!("packet type {t}"),
                QueueError::PACKET_UNSUPPORTED,
            )),
        };
        match r {
            Ok(()) => {}
            Err(Stop::Blocked) => return Step::Blocked,
            Err(Stop::Halt) => return Step::Halt,
        }
        self.waiting = None;
        self.started = None;
        let end = cx.host().gpu_clock();
        // Release the slot, then move the read index past it.
        let freed = vm.atomic_u32(&mut self.tlb, slot, |h| Some((h & 0xffff_0000) | INVALID));
        if let Err(f) = freed {
            return cx.mem_fault(&format!("invalidating packet {read}"), &f);
        }
        self.read = Some(read + 1);
        if let Err(f) = store_u64(vm, &mut self.tlb, d.read_ptr, read + 1) {
            return cx.mem_fault("writing the queue's read pointer", &f);
        }
        let sig = u64_at(&pkt, COMPLETION_SIGNAL);
        tracing::trace!(
            "queue {} packet {read} type {} done, signal 0x{sig:x}",
            cx.ctl.id,
            header & 0xff
        );
        if let Err(f) = signal::complete(vm, &mut self.tlb, cx.host(), sig, start, end) {
            return cx.mem_fault(&format!("completing packet {read}'s signal 0x{sig:x}"), &f);
        }
        Step::Progress
    }
}

/// Reports a malformed packet.
fn invalid(cx: &Cx, index: u64, slot: u64, what: &str, error: QueueError) -> Stop {
    cx.fault(GpuFault {
        addr: slot,
        error: Some(error),
        write: false,
        hang: false,
        report: format!(
            "{}\n  packet {index} at 0x{slot:x}: {what}: the queue stops",
            cx.queue_name()
        ),
    });
    Stop::Halt
}

impl Aql {
    /// Waits (without blocking other queues) for a barrier's condition;
    /// `Ok` once it holds.
    fn wait_until(&mut self, cx: &Cx, held: bool, what: &dyn Fn() -> String) -> Result<(), Stop> {
        if held {
            return Ok(());
        }
        Err(cx.wait(&mut self.waiting, what))
    }

    fn barrier(&mut self, cx: &Cx, index: u64, pkt: &[u8; 64], and: bool) -> Result<(), Stop> {
        let deps: Vec<u64> = (0..5).map(|i| u64_at(pkt, 8 + 8 * i)).collect();
        let mut zero = Vec::with_capacity(5);
        for &s in &deps {
            zero.push(match s {
                // A null handle is a satisfied dependency for AND and an
                // unsatisfied one for OR.
                0 => and,
                s => match signal::value(cx.vm(), &mut self.tlb, s) {
                    Ok(v) => v == 0,
                    Err(f) => {
                        cx.mem_fault(
                            &format!("reading packet {index}'s dependent signal 0x{s:x}"),
                            &f,
                        );
                        return Err(Stop::Halt);
                    }
                },
            });
        }
        // AND: every non-null dependency has reached 0. OR: one has, or
        // there is none at all (a barrier-OR with only null handles
        // completes at once, as on the hardware).
        let held = if and {
            zero.iter().all(|&z| z)
        } else {
            deps.iter().all(|&s| s == 0) || zero.iter().any(|&z| z)
        };
        let kind = if and { "AND" } else { "OR" };
        tracing::trace!(
            "queue {} packet {index}: barrier-{kind} on {deps:x?}: {zero:?}",
            cx.ctl.id
        );
        self.wait_until(cx, held, &|| {
            format!("packet {index} (barrier-{kind} on signals {deps:x?})")
        })
    }

    /// `hsa_amd_barrier_value_packet_t`: waits until
    /// `(value(signal) & mask) cond value`.
    fn barrier_value(&mut self, cx: &Cx, index: u64, pkt: &[u8; 64]) -> Result<(), Stop> {
        let sig = u64_at(pkt, 8);
        let want = u64_at(pkt, 16) as i64;
        let mask = u64_at(pkt, 24) as i64;
        let cond = u32_at(pkt, 32);
        let held = if sig == 0 {
            true
        } else {
            let v = match signal::value(cx.vm(), &mut self.tlb, sig) {
                Ok(v) => v & mask,
                Err(f) => {
                    cx.mem_fault(&format!("reading packet {index}'s signal 0x{sig:x}"), &f);
                    return Err(Stop::Halt);
                }
            };
            match cond {
                0 => v == want,
                1 => v != want,
                2 => v < want,
                3 => v >= want,
                c => {
                    return Err(invalid(
                        cx,
                        index,
                        0,
                        &format!("barrier-value packet with unknown condition {c}"),
                        QueueError::VENDOR_UNSUPPORTED,
                    ));
                }
            }
        };
        self.wait_until(cx, held, &|| {
            format!("packet {index} (barrier-value on signal 0x{sig:x})")
        })
    }

    fn kernel_dispatch(
        &mut self,
        cx: &Cx,
        index: u64,
        slot: u64,
        pkt: &[u8; 64],
    ) -> Result<(), Stop> {
        let dims = (u16_at(pkt, 2) & 3) as usize;
        if dims == 0 {
            return Err(invalid(
                cx,
                index,
                slot,
                "kernel dispatch with 0 dimensions",
                QueueError::DISPATCH_DIM_INVALID,
            ));
        }
        let mut block = [1u32; 3];
        let mut items = [1u64; 3];
        for i in 0..dims {
            block[i] = u32::from(u16_at(pkt, 4 + 2 * i));
            items[i] = u64::from(u32_at(pkt, 12 + 4 * i));
        }
        if items.contains(&0) {
            // An empty grid has no work-items: nothing runs.
            return Ok(());
        }
        if block.contains(&0) {
            return Err(invalid(
                cx,
                index,
                slot,
                &format!("kernel dispatch with a workgroup of {block:?} work-items"),
                QueueError::DISPATCH_WORK_GROUP_SIZE_INVALID,
            ));
        }
        let private = u32_at(pkt, 24);
        let group = u32_at(pkt, 28);
        let kernel_object = u64_at(pkt, 32);
        let kernarg = u64_at(pkt, 40);
        if kernel_object == 0 {
            return Err(invalid(
                cx,
                index,
                slot,
                "kernel dispatch of a null kernel object",
                QueueError::DISPATCH_CODE_INVALID,
            ));
        }
        let vm = cx.vm();
        let mut kd = [0u8; 64];
        if let Err(f) = vm.read(&mut self.tlb, kernel_object, &mut kd) {
            cx.mem_fault(&format!("reading packet {index}'s kernel descriptor"), &f);
            return Err(Stop::Halt);
        }
        let kd = KernelDescriptor::from_bytes(&kd);
        let entry = kernel_object.wrapping_add(kd.kernel_code_entry_byte_offset as u64);
        let kernel = cx
            .host()
            .kernel_name(kernel_object)
            .or_else(|| cx.kernels().name(vm, kernel_object))
            .unwrap_or_else(|| format!("<kernel object 0x{kernel_object:x}>"));
        let gpu = cx.gpu();
        let wave32 = kd.kernel_code_properties.enable_wavefront_size32;
        let prog = launch::program(cx, &mut self.tlb, entry, wave32, &|| {
            format!("packet {index} at 0x{slot:x}: kernel {kernel}")
        })?;
        let private_bytes = private.max(kd.private_segment_fixed_size);
        if private_bytes > MAX_PRIVATE {
            return Err(invalid(
                cx,
                index,
                slot,
                &format!(
                    "kernel {kernel} needs {private_bytes} bytes of private memory per work-item, more than the {MAX_PRIVATE} a wave's scratch can hold"
                ),
                QueueError::DISPATCH_GROUP_SEGMENT_SIZE_INVALID,
            ));
        }
        let lds = group.max(kd.group_segment_fixed_size);
        if lds > gpu.spec.max_lds {
            return Err(invalid(
                cx,
                index,
                slot,
                &format!(
                    "kernel {kernel} needs {lds} bytes of group memory, more than the {} a workgroup can have",
                    gpu.spec.max_lds
                ),
                QueueError::DISPATCH_GROUP_SEGMENT_SIZE_INVALID,
            ));
        }
        let private_bytes = private_bytes.max(4).next_multiple_of(16);
        let grid: [u32; 3] = std::array::from_fn(|i| {
            items[i]
                .div_ceil(u64::from(block[i]))
                .min(u64::from(u32::MAX)) as u32
        });
        let launch = Launch {
            kernel: kernel.clone(),
            entry,
            descriptor: kd,
            grid,
            block,
            // The packet's group segment size includes the kernel's static
            // LDS (the runtime adds the dynamic size to it).
            dynamic_lds: group.saturating_sub(kd.group_segment_fixed_size),
            kernarg,
            dispatch_packet: slot,
            queue: cx.desc.read_ptr.wrapping_sub(READ_DISPATCH_ID_OFFSET),
            private_bytes,
            threads: cx.shared.opts.threads,
            timeout: cx.watchdog(),
            max_lds: gpu.spec.max_lds,
            trace: 0,
        };
        let extra = Extra {
            grid_items: Some(items),
            dispatch_id: index,
            ..Extra::default()
        };
        launch::run(cx, &mut self.pool, &prog, &launch, extra, &|| {
            format!(
                "packet {index} at 0x{slot:x}: kernel dispatch of {kernel}, {}x{}x{} work-items in workgroups of {}x{}x{}",
                items[0], items[1], items[2], block[0], block[1], block[2],
            )
        })
    }
}
