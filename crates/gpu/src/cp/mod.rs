//! The command processor: the part of the GPU that consumes the queues the
//! ROCm runtime writes in user memory. AQL queues ([`aql`]) carry kernel
//! dispatches and barriers in the HSA packet format; SDMA queues ([`sdma`])
//! carry copy, fill and signalling packets for the DMA engines; PM4 compute
//! queues ([`pm4`]) carry the MEC's type-3 packets (register writes,
//! dispatches, waits, end-of-pipe releases) as direct-to-KFD runtimes
//! write them.
//!
//! Each queue is served by its own host thread. A thread notices new work by
//! polling the queue's write pointer: it keeps polling (yielding the core)
//! for a short while after the last packet, then sleeps on a condition
//! variable with growing timeouts, so an idle process burns no core.
//! [`CommandProcessor::kick`] (the driver's doorbell notification) wakes
//! sleeping threads at once.
//!
//! All memory the queues name (rings, pointers, packets, signals, kernel
//! code) is read and written through the [`Vm`] with checked accesses: a bad
//! pointer is reported as a GPU fault through [`Host::gpu_fault`] and stops
//! the queue, as on hardware, and never touches the host program.

mod aql;
mod kernels;
mod launch;
pub(crate) mod names;
mod pm4;
mod pool;
mod sdma;
mod signal;
#[cfg(test)]
mod tests;

use crate::exec::op::Env;
use crate::mem::{MemFault, Vm};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the command processor needs from the (simulated) kernel driver.
pub trait Host: Send + Sync + 'static {
    /// The GPU wrote `event_id` to a signal's event mailbox and raised the interrupt.
    fn signal_event(&self, event_id: u32);
    /// A GPU VM fault, a dispatch stopped by the watchdog, or a queue
    /// exception (`fault.error`, reported here before it is delivered), on
    /// GPU `gpu` (index in config order).
    fn gpu_fault(&self, gpu: u32, fault: &GpuFault);
    /// The GPU timestamp counter (the clock KFD's GET_CLOCK_COUNTERS reports as gpu_clock_counter).
    fn gpu_clock(&self) -> u64;
    /// An end-of-pipe interrupt carrying `context_id` (a PM4 RELEASE_MEM's
    /// INT_CTXID), which KFD's interrupt handler takes for the id of the
    /// signal event to set (by default, [`Host::signal_event`] of it).
    fn eop_interrupt(&self, context_id: u32) {
        self.signal_event(context_id);
    }
    /// A name for the kernel whose descriptor is at `kernel_object`, for
    /// fault reports (none by default: the command processor then reads it
    /// from the loaded code object's dynamic symbols, or gives the address).
    fn kernel_name(&self, _kernel_object: u64) -> Option<String> {
        None
    }
    /// A queue exception raised to the driver for queue `queue` (the
    /// command processor's id) of GPU `gpu`, in the process whose memory is
    /// `vm`: the interrupt ROCr's trap handler sends for a wave exception
    /// (M0 = the queue's doorbell and the exception's bit), or the CP's
    /// bad-opcode interrupt for a packet it refused. KFD hands it to the
    /// runtime when the runtime enabled exception reporting
    /// (`AMDKFD_IOC_RUNTIME_ENABLE`); returns whether the runtime was told
    /// (by default, never).
    fn queue_error(&self, _gpu: u32, _queue: u32, _vm: &Vm, _error: QueueError) -> bool {
        false
    }
    /// A queue exception (`fault.error`, already reported through
    /// [`Host::gpu_fault`]) that reached no one: neither the runtime's
    /// exception payload nor its queue's inactive signal. A real GPU would
    /// leave the waves halted; the driver may raise it another way so that
    /// the program does not hang.
    fn undelivered(&self, _gpu: u32, _fault: &GpuFault) {}
}

/// A queue exception as KFD numbers it (`enum kfd_dbg_trap_exception_code`
/// of kfd_ioctl.h), with the code the same condition had in an
/// `amd_queue_t`'s `queue_inactive_signal` before KFD reported exceptions:
/// the CP firmware still writes that code for a packet it refuses, and
/// ROCr's first trap handler (installed when the runtime did not enable
/// KFD's exception reporting) writes it for a wave exception.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueueError {
    /// `EC_QUEUE_*`.
    pub ec: u32,
    /// The `queue_inactive_signal` value ROCr's queue error handler decodes.
    pub legacy: u64,
}

impl QueueError {
    /// `EC_QUEUE_WAVE_ABORT`: `s_trap 2` (`llvm.trap`); the old trap
    /// handler's `SIGNAL_CODE_LLVM_TRAP`.
    pub const WAVE_ABORT: QueueError = QueueError {
        ec: 1,
        legacy: 0x8000_0000,
    };
    /// `EC_QUEUE_WAVE_TRAP`: any other `s_trap`.
    pub const WAVE_TRAP: QueueError = QueueError {
        ec: 2,
        legacy: 0x8000_0000,
    };
    /// `EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION`; `SIGNAL_CODE_ILLEGAL_INST`.
    pub const WAVE_ILLEGAL_INSTRUCTION: QueueError = QueueError {
        ec: 4,
        legacy: 0x4000_0000,
    };
    /// `EC_QUEUE_WAVE_APERTURE_VIOLATION`: an access outside an aperture
    /// (LDS, private); `SIGNAL_CODE_MEM_VIOL`.
    pub const WAVE_APERTURE_VIOLATION: QueueError = QueueError {
        ec: 6,
        legacy: 0x2000_0000,
    };
    /// `EC_QUEUE_PACKET_DISPATCH_DIM_INVALID`.
    pub const DISPATCH_DIM_INVALID: QueueError = QueueError { ec: 16, legacy: 2 };
    /// `EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID`.
    pub const DISPATCH_GROUP_SEGMENT_SIZE_INVALID: QueueError = QueueError { ec: 17, legacy: 4 };
    /// `EC_QUEUE_PACKET_DISPATCH_CODE_INVALID`: a null kernel object.
    pub const DISPATCH_CODE_INVALID: QueueError = QueueError { ec: 18, legacy: 8 };
    /// `EC_QUEUE_PACKET_UNSUPPORTED`: a packet type the queue does not take.
    pub const PACKET_UNSUPPORTED: QueueError = QueueError { ec: 20, legacy: 32 };
    /// `EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID`.
    pub const DISPATCH_WORK_GROUP_SIZE_INVALID: QueueError = QueueError { ec: 21, legacy: 64 };
    /// `EC_QUEUE_PACKET_VENDOR_UNSUPPORTED`: a vendor-specific packet of an
    /// unknown format.
    pub const VENDOR_UNSUPPORTED: QueueError = QueueError {
        ec: 23,
        legacy: 256,
    };

    /// KFD's `KFD_EC_MASK(ec)`: the bit KFD ORs into the runtime's error
    /// payload.
    pub const fn mask(self) -> u64 {
        1 << (self.ec - 1)
    }

    /// A packet the CP refused (rather than a wave's exception).
    pub const fn is_packet(self) -> bool {
        self.ec >= 16
    }

    /// The name KFD's header gives the code.
    pub fn name(self) -> &'static str {
        match self.ec {
            1 => "EC_QUEUE_WAVE_ABORT",
            2 => "EC_QUEUE_WAVE_TRAP",
            4 => "EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION",
            6 => "EC_QUEUE_WAVE_APERTURE_VIOLATION",
            16 => "EC_QUEUE_PACKET_DISPATCH_DIM_INVALID",
            17 => "EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID",
            18 => "EC_QUEUE_PACKET_DISPATCH_CODE_INVALID",
            20 => "EC_QUEUE_PACKET_UNSUPPORTED",
            21 => "EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID",
            23 => "EC_QUEUE_PACKET_VENDOR_UNSUPPORTED",
            _ => "EC_QUEUE_?",
        }
    }
}

/// `amd_queue_t::read_dispatch_id`: an AQL queue's read pointer minus this
/// is its `amd_queue_t` (ROCr sets `read_dispatch_id_field_base_byte_offset`
/// to it for the CP).
pub const AMD_QUEUE_READ_DISPATCH_ID: u64 = aql::READ_DISPATCH_ID_OFFSET;

/// `amd_queue_t::queue_inactive_signal` (ROCr `amd_hsa_queue.h`).
pub const QUEUE_INACTIVE_SIGNAL: u64 = 0xc0;

/// Stores `code` into the `queue_inactive_signal` of the `amd_queue_t` at
/// `amd_queue`, as the CP firmware does for a packet it refuses and ROCr's
/// first trap handler for a wave exception: the value is swapped in and,
/// when it was 0 and the signal has an event mailbox, the signal's event id
/// is written there and the interrupt raised. Returns whether the signal
/// exists (its handle is nonzero).
pub fn set_queue_inactive(
    vm: &Vm,
    host: &dyn Host,
    amd_queue: u64,
    code: u64,
) -> Result<bool, MemFault> {
    let mut tlb = crate::mem::Tlb::default();
    let sig = signal::load_u64(vm, &mut tlb, amd_queue.wrapping_add(QUEUE_INACTIVE_SIGNAL))?;
    if sig == 0 {
        return Ok(false);
    }
    let old = vm.atomic_u64(&mut tlb, sig.wrapping_add(signal::VALUE), |_| Some(code))?;
    if old == 0 {
        signal::interrupt(vm, &mut tlb, host, sig)?;
    }
    Ok(true)
}

/// A fault that stopped a queue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuFault {
    /// The faulting address (0 when the fault is not a memory access).
    pub addr: u64,
    /// Whether the faulting access was a write (or an atomic).
    pub write: bool,
    /// The queue was stopped by the watchdog rather than by a fault.
    pub hang: bool,
    /// Multi-line human report: queue, packet, kernel, workgroup, wave, PC,
    /// instruction, address.
    pub report: String,
    /// The queue exception the hardware raises for it (none for memory
    /// faults, which reach the driver as VM faults, and for hangs).
    pub error: Option<QueueError>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QueueKind {
    Aql,
    Sdma,
    /// A PM4 compute queue (KFD_IOC_QUEUE_TYPE_COMPUTE).
    Pm4,
}

/// A queue as KFD's CREATE_QUEUE describes it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueueDesc {
    pub kind: QueueKind,
    /// GPU index, in config order.
    pub gpu: u32,
    /// Ring buffer address and size in bytes (a power of two; a size or
    /// base of 0 makes the queue inactive).
    pub ring_base: u64,
    pub ring_size: u64,
    /// Addresses of the read and write pointers (KFD's
    /// `read_pointer_address` / `write_pointer_address`): 64-bit packet
    /// indices for AQL queues (`amd_queue_t::read_dispatch_id` and
    /// `write_dispatch_id`), 64-bit monotonically increasing byte offsets
    /// for SDMA queues; for PM4 queues a 64-bit write pointer counting
    /// dwords (monotonic, as gfx9's 64-bit WPTR) and a 32-bit read pointer,
    /// the dword offset in the ring the CP has consumed up to.
    pub read_ptr: u64,
    pub write_ptr: u64,
    /// Address of this queue's doorbell (host memory), 0 if none.
    pub doorbell: u64,
    pub priority: u32,
}

/// One GPU as the command processor sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CpGpu {
    pub target: rocjitsu_isa::Target,
    /// LDS bytes one workgroup may have.
    pub max_lds: u32,
    /// SRAM ECC is on (the topology's HSA_CAP_SRAM_EDCSUPPORTED): see
    /// [`Env::sramecc`].
    pub sramecc: bool,
}

#[derive(Clone, Debug, Default)]
pub struct CpOptions {
    /// Host threads per dispatch (0: one per core).
    pub threads: usize,
    /// Stop a dispatch, barrier or poll that takes longer than this and
    /// report it as a hang.
    pub watchdog: Option<Duration>,
    /// Execution plugins observing every dispatch of every queue.
    pub plugins: Option<std::sync::Arc<crate::plugin::Plugins>>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CpError {
    #[error("no queue with id {0}")]
    NoQueue(u32),
    #[error("no GPU with index {0}")]
    NoGpu(u32),
    #[error("invalid queue: {0}")]
    BadQueue(String),
    #[error("cannot start a queue thread: {0}")]
    Thread(String),
    /// The queue's thread panicked (a bug in the emulator; the queue is
    /// gone).
    #[error("the thread of queue {0} panicked")]
    Panicked(u32),
    /// Queues still in the middle of a packet when a pause gave up.
    #[error("queues {0:?} were still running a packet after {1:?}")]
    Busy(Vec<u32>, Duration),
}

/// The command processors of all GPUs of one process.
pub struct CommandProcessor {
    shared: Arc<Shared>,
    queues: Mutex<HashMap<u32, QueueHandle>>,
}

/// Queue ids are unique in the process, so that queue threads' names
/// ("rj-cp-q<id>", as `ps -L` and debuggers show them) are.
static NEXT_QUEUE_ID: AtomicU32 = AtomicU32::new(0);

/// The name of queue `id`'s thread (at most 15 bytes, Linux's limit, for
/// ids below 10^8).
pub(crate) fn thread_name(id: u32) -> String {
    format!("rj-cp-q{id}")
}

struct QueueHandle {
    ctl: Arc<QueueCtl>,
    thread: Option<JoinHandle<()>>,
}

/// A process as the GPU sees it (a VMID): the GPU virtual memory its
/// queues' addresses resolve in, the driver that receives its interrupts and
/// faults, and the kernels decoded from its memory. Queues of different
/// processes share the command processor but never each other's memory.
pub struct Process {
    vm: Arc<Vm>,
    host: Arc<dyn Host>,
    kernels: kernels::Cache,
}

impl Process {
    pub fn new(vm: Arc<Vm>, host: Arc<dyn Host>) -> Arc<Process> {
        Arc::new(Process {
            vm,
            host,
            kernels: kernels::Cache::default(),
        })
    }

    pub fn vm(&self) -> &Arc<Vm> {
        &self.vm
    }
}

/// What a queue thread shares with the [`CommandProcessor`].
pub(crate) struct QueueCtl {
    id: u32,
    process: Arc<Process>,
    desc: Mutex<QueueDesc>,
    /// Set to stop the thread (and cancel the dispatch it runs).
    stop: AtomicBool,
    /// The thread is parked by [`CommandProcessor::pause`], between two
    /// packets of its ring.
    parked: AtomicBool,
}

impl QueueCtl {
    fn desc(&self) -> QueueDesc {
        *self.desc.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// State shared by every queue thread.
pub(crate) struct Shared {
    gpus: Vec<Gpu>,
    opts: CpOptions,
    wake: Wake,
    /// Queue threads park at their next packet boundary while set.
    paused: AtomicBool,
}

pub(crate) struct Gpu {
    spec: CpGpu,
    env: Env,
}

/// Wakes sleeping queue threads: a generation counter bumped on every kick.
#[derive(Default)]
struct Wake {
    generation: Mutex<u64>,
    cv: Condvar,
}

impl Wake {
    fn generation(&self) -> u64 {
        *self.generation.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn kick(&self) {
        let mut g = self.generation.lock().unwrap_or_else(|e| e.into_inner());
        *g = g.wrapping_add(1);
        self.cv.notify_all();
    }

    /// Sleeps up to `timeout` unless a kick came after generation `seen`.
    fn wait(&self, seen: u64, timeout: Duration) {
        let g = self.generation.lock().unwrap_or_else(|e| e.into_inner());
        if *g == seen {
            let _ = self.cv.wait_timeout(g, timeout);
        }
    }
}

/// Begins the report of a fault that is a bug of the emulator.
pub const INTERNAL_ERROR: &str = "internal error";

/// How long a queue thread keeps polling after its last packet.
const SPIN: Duration = Duration::from_millis(2);
/// First and longest sleep of an idle queue thread.
const NAP_MIN: Duration = Duration::from_micros(50);
const NAP_MAX: Duration = Duration::from_millis(1);

/// What one look at a queue found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// A packet was processed.
    Progress,
    /// Nothing to do.
    Idle,
    /// The packet at the read pointer waits for a condition.
    Blocked,
    /// The queue faulted (already reported) and stops.
    Halt,
}

/// One kind of queue's packet processor.
pub(crate) trait Engine: Send {
    fn step(&mut self, cx: &Cx) -> Step;
    /// Whether the engine is between two packets of its ring (not inside
    /// an indirect buffer), so that everything it will do next follows
    /// from the queue's memory (its read and write pointers and ring): a
    /// paused queue stops only there ([`CommandProcessor::pause`]).
    fn quiescent(&self) -> bool {
        true
    }
}

/// What an engine works with during one step.
pub(crate) struct Cx<'a> {
    shared: &'a Shared,
    ctl: &'a QueueCtl,
    desc: QueueDesc,
}

impl Cx<'_> {
    fn vm(&self) -> &Vm {
        &self.ctl.process.vm
    }

    fn host(&self) -> &dyn Host {
        &*self.ctl.process.host
    }

    fn kernels(&self) -> &kernels::Cache {
        &self.ctl.process.kernels
    }

    fn gpu(&self) -> &Gpu {
        // Checked at queue creation.
        &self.shared.gpus[self.desc.gpu as usize]
    }

    fn watchdog(&self) -> Option<Duration> {
        self.shared.opts.watchdog
    }

    /// The queue's name in reports.
    fn queue_name(&self) -> String {
        let kind = match self.desc.kind {
            QueueKind::Aql => "AQL",
            QueueKind::Sdma => "SDMA",
            QueueKind::Pm4 => "PM4",
        };
        format!(
            "{kind} queue {} on GPU {} (ring 0x{:x}, {} bytes)",
            self.ctl.id, self.desc.gpu, self.desc.ring_base, self.desc.ring_size
        )
    }

    /// Reports a fault and stops the queue. The report comes first (the
    /// runtime may end the process as soon as it hears of the error); then
    /// a packet the CP refused has its code written to the queue's
    /// `queue_inactive_signal` (AQL queues) and any queue exception goes to
    /// the driver's interrupt handler; one that reached nobody goes back to
    /// the driver as [`Host::undelivered`].
    fn fault(&self, fault: GpuFault) -> Step {
        self.host().gpu_fault(self.desc.gpu, &fault);
        if let Some(e) = fault.error {
            let mut told = false;
            if e.is_packet() && self.desc.kind == QueueKind::Aql {
                let amd_queue = self
                    .desc
                    .read_ptr
                    .wrapping_sub(aql::READ_DISPATCH_ID_OFFSET);
                match set_queue_inactive(self.vm(), self.host(), amd_queue, e.legacy) {
                    Ok(t) => told = t,
                    Err(f) => tracing::warn!(
                        "queue {}: cannot write its inactive signal: {f}",
                        self.ctl.id
                    ),
                }
            }
            told |= self
                .host()
                .queue_error(self.desc.gpu, self.ctl.id, self.vm(), e);
            if !told {
                self.host().undelivered(self.desc.gpu, &fault);
            }
        }
        Step::Halt
    }

    /// Reports a memory fault the command processor itself took while
    /// reading or writing `what`.
    fn mem_fault(&self, what: &str, f: &MemFault) -> Step {
        self.fault(GpuFault {
            addr: f.addr,
            write: f.access != crate::mem::Access::Read,
            hang: false,
            report: format!("{}\n  {what}: {f}", self.queue_name()),
            ..GpuFault::default()
        })
    }

    /// Keeps a packet waiting (its wait began at `*since`, set now if
    /// unset), or reports a hang once the watchdog ran out.
    fn wait(&self, since: &mut Option<Instant>, what: &dyn Fn() -> String) -> Stop {
        let t = *since.get_or_insert_with(Instant::now);
        match self.check_wait(t, what) {
            Step::Halt => Stop::Halt,
            _ => Stop::Blocked,
        }
    }

    /// Checks a wait that began at `since` against the watchdog; reports a
    /// hang when it ran out.
    fn check_wait(&self, since: Instant, what: &dyn Fn() -> String) -> Step {
        match self.watchdog() {
            Some(t) if since.elapsed() > t => self.fault(GpuFault {
                addr: 0,
                write: false,
                hang: true,
                report: format!(
                    "{}\n  {} did not complete within the watchdog's {t:?} and was stopped",
                    self.queue_name(),
                    what(),
                ),
                ..GpuFault::default()
            }),
            _ => Step::Blocked,
        }
    }
}

impl CommandProcessor {
    /// The command processors of `gpus`; the queues of every [`Process`]
    /// run on them.
    pub fn new(gpus: Vec<CpGpu>, opts: CpOptions) -> Self {
        let gpus = gpus
            .into_iter()
            .map(|spec| Gpu {
                spec,
                env: Env {
                    sramecc: spec.sramecc,
                    ..Env::new(spec.target)
                },
            })
            .collect();
        CommandProcessor {
            shared: Arc::new(Shared {
                gpus,
                opts,
                wake: Wake::default(),
                paused: AtomicBool::new(false),
            }),
            queues: Mutex::new(HashMap::new()),
        }
    }

    /// Starts serving a queue of `process`; returns its id.
    pub fn create_queue(&self, process: &Arc<Process>, desc: QueueDesc) -> Result<u32, CpError> {
        validate(&desc, self.shared.gpus.len())?;
        let id = NEXT_QUEUE_ID.fetch_add(1, Ordering::Relaxed);
        let ctl = Arc::new(QueueCtl {
            id,
            process: process.clone(),
            desc: Mutex::new(desc),
            stop: AtomicBool::new(false),
            parked: AtomicBool::new(false),
        });
        let (shared, c) = (self.shared.clone(), ctl.clone());
        let thread = std::thread::Builder::new()
            .name(thread_name(id))
            .spawn(move || serve(&shared, &c))
            .map_err(|e| CpError::Thread(e.to_string()))?;
        self.lock().insert(
            id,
            QueueHandle {
                ctl,
                thread: Some(thread),
            },
        );
        Ok(id)
    }

    /// Stops a queue; returns once its thread has stopped (a dispatch in
    /// progress is cancelled). Called from a [`Host`] callback on the
    /// queue's own thread, it returns at once and the thread ends after the
    /// callback.
    pub fn destroy_queue(&self, id: u32) -> Result<(), CpError> {
        let q = self.lock().remove(&id).ok_or(CpError::NoQueue(id))?;
        if stop(q, &self.shared.wake) {
            Ok(())
        } else {
            Err(CpError::Panicked(id))
        }
    }

    /// Changes a queue's ring and priority (KFD UPDATE_QUEUE); the queue
    /// thread uses them from its next packet on. A ring size or base of 0
    /// makes the queue inactive, as KFD's `queue_percentage` of 0 does
    /// (ROCr suspends a queue that way): pass 0 for the size then.
    pub fn update_queue(
        &self,
        id: u32,
        ring_base: u64,
        ring_size: u64,
        priority: u32,
    ) -> Result<(), CpError> {
        let queues = self.lock();
        let q = queues.get(&id).ok_or(CpError::NoQueue(id))?;
        let mut d = q.ctl.desc.lock().unwrap_or_else(|e| e.into_inner());
        let new = QueueDesc {
            ring_base,
            ring_size,
            priority,
            ..*d
        };
        validate(&new, self.shared.gpus.len())?;
        *d = new;
        drop(d);
        self.shared.wake.kick();
        Ok(())
    }

    /// "Something may have been written": wakes idle queue threads now.
    pub fn kick(&self) {
        self.shared.wake.kick();
    }

    /// Stops every queue between two packets of its ring and returns once
    /// all have stopped: a packet being run (a dispatch, a copy, the
    /// packets of an indirect buffer) is finished first, a packet waiting
    /// for a condition (a barrier, a poll) stays unconsumed. While paused,
    /// a queue's next packet is wholly described by its memory (ring, read
    /// and write pointers), which is what a checkpoint saves. Queues
    /// created meanwhile start paused. Fails, resuming the queues, when
    /// one has not stopped within `timeout` (naming it).
    pub fn pause(&self, timeout: Duration) -> Result<(), CpError> {
        self.shared.paused.store(true, Ordering::Release);
        self.shared.wake.kick();
        let t0 = Instant::now();
        loop {
            let running: Vec<u32> = self
                .lock()
                .values()
                .filter(|q| {
                    !q.ctl.parked.load(Ordering::Acquire)
                        && q.thread.as_ref().is_some_and(|t| !t.is_finished())
                })
                .map(|q| q.ctl.id)
                .collect();
            if running.is_empty() {
                return Ok(());
            }
            if t0.elapsed() > timeout {
                self.resume();
                return Err(CpError::Busy(running, timeout));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// A queue's description as it is now (after any UPDATE_QUEUE).
    pub fn queue_desc(&self, id: u32) -> Option<QueueDesc> {
        self.lock().get(&id).map(|q| q.ctl.desc())
    }

    /// Lets the queues stopped by [`CommandProcessor::pause`] go on.
    pub fn resume(&self) {
        self.shared.paused.store(false, Ordering::Release);
        self.shared.wake.kick();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u32, QueueHandle>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for CommandProcessor {
    fn drop(&mut self) {
        let queues: Vec<QueueHandle> = self.lock().drain().map(|(_, q)| q).collect();
        for q in &queues {
            q.ctl.stop.store(true, Ordering::Release);
        }
        for q in queues {
            // A panic has been printed; there is nothing more to do here.
            let _ = stop(q, &self.shared.wake);
        }
    }
}

/// Stops a queue's thread and waits for it; returns false if it had
/// panicked.
fn stop(mut q: QueueHandle, wake: &Wake) -> bool {
    q.ctl.stop.store(true, Ordering::Release);
    wake.kick();
    match q.thread.take() {
        // A host callback running on the queue's own thread (a fault
        // handler destroying the faulting queue) cannot wait for itself:
        // the thread ends when the callback returns.
        Some(t) if t.thread().id() != std::thread::current().id() => t.join().is_ok(),
        _ => true,
    }
}

fn validate(d: &QueueDesc, gpus: usize) -> Result<(), CpError> {
    if d.gpu as usize >= gpus {
        return Err(CpError::NoGpu(d.gpu));
    }
    let bad = |why: String| Err(CpError::BadQueue(why));
    if d.ring_size != 0 && !d.ring_size.is_power_of_two() {
        return bad(format!(
            "the ring size {} is not a power of two",
            d.ring_size
        ));
    }
    let min = match d.kind {
        QueueKind::Aql => 64,
        QueueKind::Sdma | QueueKind::Pm4 => 256,
    };
    if d.ring_size != 0 && d.ring_size < min {
        return bad(format!(
            "the ring of {} bytes is smaller than {min}",
            d.ring_size
        ));
    }
    // A PM4 ring's base is programmed as address >> 8 (CP_HQD_PQ_BASE).
    let align = match d.kind {
        QueueKind::Aql => 64,
        QueueKind::Sdma => 4,
        QueueKind::Pm4 => 256,
    };
    if !d.ring_base.is_multiple_of(align) {
        return bad(format!("the ring at 0x{:x} is misaligned", d.ring_base));
    }
    // PM4's read pointer is a 32-bit word; the others are 64-bit.
    let rptr_align = if d.kind == QueueKind::Pm4 { 4 } else { 8 };
    if d.read_ptr == 0 || !d.read_ptr.is_multiple_of(rptr_align) {
        return bad(format!("read pointer address 0x{:x}", d.read_ptr));
    }
    if (d.write_ptr == 0 && d.doorbell == 0)
        || !d.write_ptr.is_multiple_of(8)
        || !d.doorbell.is_multiple_of(8)
    {
        return bad(format!(
            "write pointer address 0x{:x} / doorbell 0x{:x}",
            d.write_ptr, d.doorbell
        ));
    }
    Ok(())
}

/// A packet that did not complete.
pub(crate) enum Stop {
    /// It waits for a condition.
    Blocked,
    /// The queue faulted (reported) and stops.
    Halt,
}

/// The compare functions of SDMA's POLL_REGMEM and PM4's WAIT_REG_MEM
/// (0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >); `None` for the reserved 7.
pub(crate) fn compare(func: u32, v: u32, reference: u32) -> Option<bool> {
    Some(match func {
        0 => true,
        1 => v < reference,
        2 => v <= reference,
        3 => v == reference,
        4 => v != reference,
        5 => v >= reference,
        6 => v > reference,
        _ => return None,
    })
}

/// Reads `out.len()` bytes (at most the ring's size) of the ring at `base`
/// of `size` bytes from byte offset `off` (below `size`), wrapping around
/// its end.
pub(crate) fn ring_read(
    vm: &Vm,
    tlb: &mut crate::mem::Tlb,
    (base, size): (u64, u64),
    off: u64,
    out: &mut [u8],
) -> Result<(), MemFault> {
    let first = out.len().min(size.saturating_sub(off) as usize);
    vm.read(tlb, base.wrapping_add(off), &mut out[..first])?;
    if first < out.len() {
        vm.read(tlb, base, &mut out[first..])?;
    }
    Ok(())
}

/// Little-endian dwords of `raw`, into `out` (cleared first).
pub(crate) fn dwords(raw: &[u8], out: &mut Vec<u32>) {
    out.clear();
    out.extend(
        raw.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
}

/// A queue thread: runs the queue's packets as they arrive, until stopped.
fn serve(shared: &Shared, ctl: &QueueCtl) {
    let desc = ctl.desc();
    let mut engine: Box<dyn Engine> = match desc.kind {
        QueueKind::Aql => Box::new(aql::Aql::default()),
        QueueKind::Sdma => Box::new(sdma::Sdma::default()),
        QueueKind::Pm4 => Box::new(pm4::Pm4::default()),
    };
    let mut last_work = Instant::now();
    let mut nap = NAP_MIN;
    let mut halted = false;
    while !ctl.stop.load(Ordering::Acquire) {
        let seen = shared.wake.generation();
        if shared.paused.load(Ordering::Acquire) && (halted || engine.quiescent()) {
            ctl.parked.store(true, Ordering::Release);
            while shared.paused.load(Ordering::Acquire) && !ctl.stop.load(Ordering::Acquire) {
                let seen = shared.wake.generation();
                if shared.paused.load(Ordering::Acquire) {
                    shared.wake.wait(seen, NAP_MAX);
                }
            }
            ctl.parked.store(false, Ordering::Release);
            last_work = Instant::now();
            nap = NAP_MIN;
            continue;
        }
        if !halted {
            let cx = Cx {
                shared,
                ctl,
                desc: ctl.desc(),
            };
            // A panic is a bug of the emulator; it stops this queue with a
            // fault report (the application sees a GPU fault, not a hang)
            // and leaves the process running.
            let step = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.step(&cx)))
                .unwrap_or_else(|p| {
                    let why = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    cx.fault(GpuFault {
                        addr: 0,
                        write: false,
                        hang: false,
                        report: format!(
                            "{}\n  {INTERNAL_ERROR}: the emulator panicked: {why}",
                            cx.queue_name()
                        ),
                        ..GpuFault::default()
                    })
                });
            match step {
                Step::Progress => {
                    // Other queues may wait on what this packet signalled.
                    shared.wake.kick();
                    last_work = Instant::now();
                    nap = NAP_MIN;
                    continue;
                }
                Step::Halt => halted = true,
                Step::Idle | Step::Blocked => {}
            }
        }
        if !halted && last_work.elapsed() < SPIN {
            std::thread::yield_now();
            continue;
        }
        shared.wake.wait(seen, nap);
        nap = (nap * 2).min(NAP_MAX);
    }
}
