//! [`SimulatedDriver`]: the in-process KFD and amdgpu DRM.
//!
//! A [`Device`] is the machine's emulated GPUs (their sysfs tree, command
//! processors and VRAM), shared by every process that opens them; a
//! [`SimulatedDriver`] is one process's view of them, as KFD keeps a
//! `kfd_process` per process: its GPU virtual memory, allocations, events
//! and queues. Local mode has one of each; the daemon one device and a
//! driver per client.

use crate::abi::{self, Args, kfd, put};
use crate::events::{Events, MemoryException};
use crate::memory::{AllocRequest, Memory, VramPool};
use crate::svm::{self, Backing, Svm};
use crate::sysfs::SysfsTree;
use crate::user::UserMemory;
use crate::{DeviceFile, Driver, Errno, MapSource, dmabuf, drm, gpu_id_of, user};
use rocjitsu_config::GpuConfig;
use rocjitsu_gpu::cp::{self, CommandProcessor, CpGpu, CpOptions, GpuFault, QueueDesc, QueueKind};
use rocjitsu_gpu::mem::Vm;
use rocjitsu_gpu::plugin::Plugins;
use std::collections::HashMap;
use std::os::fd::RawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The KFD interface version this driver speaks.
pub const KFD_VERSION: (u32, u32) = (1, 17);

/// How the driver is set up.
#[derive(Clone, Debug)]
pub struct DriverOptions {
    pub config: GpuConfig,
    /// Where the generated sysfs tree goes.
    pub runtime_dir: PathBuf,
    /// Host threads for kernel execution (0: one per core).
    pub threads: usize,
    /// Stop a dispatch (and report a GPU hang) after this long.
    pub watchdog: Option<Duration>,
}

struct Gpu {
    gpu_id: u32,
    minor: u32,
}

struct Queue {
    cp_id: u32,
    gpu: usize,
}

#[derive(Default)]
struct Process {
    queues: HashMap<u32, Queue>,
    next_queue: u32,
    /// Doorbell slots in use, per GPU.
    doorbells: HashMap<(usize, u32), u32>,
    xnack: bool,
}

/// The emulated GPUs, shared by the processes that use them.
pub struct Device {
    opts: DriverOptions,
    gpus: Vec<Gpu>,
    sysfs: SysfsTree,
    vram: Arc<VramPool>,
    /// Started with the first queue.
    cp: OnceLock<CommandProcessor>,
    /// Execution plugins (the configuration's `plugins` block and
    /// `ROCJITSU_PLUGINS`), given to the command processor.
    plugins: Option<Arc<Plugins>>,
    /// Buffers exported for IPC, by share handle: alive while some process
    /// still has an allocation of them.
    ipc: Mutex<HashMap<[u8; 16], IpcBuffer>>,
    /// Allocations exported as dma-bufs.
    dmabufs: dmabuf::Exports,
}

struct IpcBuffer {
    memfd: std::sync::Weak<std::os::fd::OwnedFd>,
    size: u64,
    flags: u32,
}

/// Where the process a driver serves lives.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// This very process (local mode): userptr allocations are the
    /// process's own pages, fault reports go to its stderr.
    InProcess,
    /// Another process (daemon mode): userptr allocations are memfds the
    /// process maps over its pages (a client's address is never taken for
    /// one of the daemon's own), and fault reports are kept for the client
    /// ([`SimulatedDriver::take_reports`]) to print.
    Remote,
}

/// The simulated driver of one process.
pub struct SimulatedDriver {
    device: Arc<Device>,
    host: Arc<Host>,
    vm: Arc<Vm>,
    memory: Mutex<Memory>,
    events: Arc<Events>,
    process: Mutex<Process>,
    gpu_process: Arc<cp::Process>,
    caller: Caller,
    /// GEM handles of buffers imported into the render nodes.
    gem: dmabuf::GemHandles,
    /// The process's SVM ranges, whether it has any (the preload asks on
    /// every munmap) and whether XNACK is on.
    svm: Arc<SvmState>,
}

struct SvmState {
    ranges: Mutex<Svm>,
    live: AtomicBool,
    xnack: AtomicBool,
    /// Every GPU of the device (bit = index).
    all_gpus: u64,
}

impl SvmState {
    fn lock(&self) -> std::sync::MutexGuard<'_, Svm> {
        self.ranges.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether every GPU lets a process turn XNACK on (`SET_XNACK_MODE`):
/// gfx90a and later select it per process; gfx908 does not.
fn xnack_selectable(config: &GpuConfig) -> bool {
    config.gpus.iter().all(|g| g.gfx_target.is_gfx90a_plus())
}

/// Recoverable GPU page faults with XNACK on, in local mode: an access to
/// process memory that no range covers gets an SVM range over the part of
/// its mapping around it (at most the 2 MiB block, never over other GPU
/// mappings), accessible to every GPU, as KFD's fault handler creates one;
/// read-only process memory is read-only for the GPU too. Memory the
/// process has not mapped (or mapped PROT_NONE) still faults.
struct XnackPager(Arc<SvmState>);

impl rocjitsu_gpu::mem::Pager for XnackPager {
    fn fault(&self, vm: &Vm, addr: u64) -> bool {
        if !self.0.xnack.load(Ordering::Acquire) {
            return false;
        }
        let Some((gap_lo, gap_hi)) = vm.gap(addr) else {
            return false;
        };
        let Some((lo, hi, writable)) = user::mapping_of(addr) else {
            return false;
        };
        const BLOCK: u64 = 2 << 20;
        let block = addr & !(BLOCK - 1);
        let start = lo.max(block).max(gap_lo.next_multiple_of(svm::PAGE));
        let end = hi.min(block + BLOCK).min(gap_hi & !(svm::PAGE - 1));
        if start >= end {
            return false;
        }
        let ro = [svm::Attr {
            kind: svm::ATTR_SET_FLAGS,
            value: svm::FLAG_GPU_RO,
        }];
        let attrs: &[svm::Attr] = if writable { &[] } else { &ro };
        let mut sv = self.0.lock();
        if sv
            .set(
                start,
                end,
                attrs,
                Some(Backing::Host),
                self.0.all_gpus,
                &|_| None,
            )
            .is_err()
        {
            return false;
        }
        sv.map_into(vm);
        self.0.live.store(true, Ordering::Release);
        tracing::debug!("XNACK: GPU fault at {addr:#x} mapped {start:#x}..{end:#x}");
        true
    }
}

/// The GPU's timestamp counter: 100 MHz, derived from CLOCK_BOOTTIME so
/// that it advances in step with the system clock KFD reports beside it.
pub fn gpu_clock() -> u64 {
    boottime_ns() / 10
}

fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn boottime_ns() -> u64 {
    clock_ns(libc::CLOCK_BOOTTIME)
}

/// What the GPU tells the driver: interrupts and faults.
struct Host {
    events: Arc<Events>,
    gpu_ids: Vec<u32>,
    /// Reports kept for a remote caller (None: print them here).
    reports: Option<Mutex<Vec<String>>>,
    /// What delivering queue exceptions needs, kept by the ioctls.
    exceptions: Mutex<Exceptions>,
}

/// The process's state that decides where a queue exception goes.
#[derive(Default)]
struct Exceptions {
    /// The runtime enabled exception reporting (`AMDKFD_IOC_RUNTIME_ENABLE`,
    /// KFD's `DEBUG_RUNTIME_STATE_ENABLED`), with its `r_debug` pointer.
    runtime: Option<u64>,
    /// Each GPU's trap handler memory (`SET_TRAP_HANDLER`'s TMA), by index.
    tma: HashMap<usize, u64>,
    /// Compute queues by command-processor id.
    queues: HashMap<u32, ExceptionQueue>,
}

#[derive(Clone, Copy)]
struct ExceptionQueue {
    /// The context save area (`ctx_save_restore_address`), 0 if none.
    ctx_save: u64,
    /// The queue's `amd_queue_t` (an AQL queue's read pointer is its
    /// `read_dispatch_id`), which the trap handler's doorbell map holds for
    /// the queue; 0 for other queues.
    amd_queue: u64,
}

/// `struct kfd_context_save_area_header` (kfd_ioctl.h): `err_payload_addr`
/// and `err_event_id`, which libhsakmt fills in at queue creation.
const CSA_ERR_PAYLOAD_ADDR: u64 = 24;
const CSA_ERR_EVENT_ID: u64 = 32;

impl Exceptions {
    fn lock(m: &Mutex<Exceptions>) -> std::sync::MutexGuard<'_, Exceptions> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Host {
    /// KFD's `kfd_send_exception_to_runtime`: ORs the exception's bit into
    /// the u64 the context save area header at `ctx_save` names
    /// (`err_payload_addr`) and sets the header's `err_event_id`; whether
    /// that event exists.
    fn send_exception_to_runtime(
        &self,
        vm: &Vm,
        tlb: &mut rocjitsu_gpu::mem::Tlb,
        ctx_save: u64,
        error: cp::QueueError,
    ) -> Result<bool, rocjitsu_gpu::mem::MemFault> {
        let mut b = [0u8; 8];
        vm.read(tlb, ctx_save + CSA_ERR_PAYLOAD_ADDR, &mut b)?;
        let payload = u64::from_le_bytes(b);
        let event = vm.read_u32(tlb, ctx_save + CSA_ERR_EVENT_ID)?;
        vm.atomic_u64(tlb, payload, |v| Some(v | error.mask()))?;
        Ok(self.events.set(event).is_ok())
    }

    /// Raises KFD's memory exception event for `fault` (a VM fault, or a
    /// hang as KFD reports one).
    fn memory_exception(&self, gpu: u32, fault: &GpuFault) {
        let n = self.events.memory_exception(&MemoryException {
            gpu_id: self.gpu_ids.get(gpu as usize).copied().unwrap_or(0),
            va: if fault.hang { 0 } else { fault.addr },
            not_present: !fault.hang,
            read_only: false,
            imprecise: fault.hang || fault.error.is_some(),
            error_type: if fault.hang { 3 } else { 0 },
        });
        if n == 0 {
            self.report(
                "rocjitsu: no memory-exception event is registered; the fault goes unreported to the runtime"
                    .into(),
            );
        }
    }

    fn report(&self, text: String) {
        match &self.reports {
            Some(r) => {
                tracing::info!("{text}");
                r.lock().unwrap_or_else(|e| e.into_inner()).push(text);
            }
            None => eprintln!("{text}"),
        }
    }
}

impl cp::Host for Host {
    fn signal_event(&self, event_id: u32) {
        self.events.interrupt(event_id);
    }

    fn eop_interrupt(&self, context_id: u32) {
        self.events.eop_interrupt(context_id);
    }

    /// KFD's handling of the trap handler's interrupt (and the CP's
    /// bad-opcode one): with the runtime enabled, `kfd_set_dbg_ev_from_interrupt`
    /// finds the queue by its doorbell and `kfd_send_exception_to_runtime`
    /// ORs `KFD_EC_MASK(ec)` into the u64 at the queue's context save area
    /// header's `err_payload_addr` and sets the event `err_event_id`.
    /// Without it, ROCr's first trap handler (installed with a TMA holding
    /// its doorbell-to-`amd_queue_t` map) stores the error code into the
    /// queue's `queue_inactive_signal` itself and raises the signal's event.
    fn queue_error(&self, gpu: u32, queue: u32, vm: &Vm, error: cp::QueueError) -> bool {
        let (runtime, tma, q) = {
            let x = Exceptions::lock(&self.exceptions);
            (
                x.runtime.is_some(),
                x.tma.get(&(gpu as usize)).copied().unwrap_or(0),
                x.queues.get(&queue).copied(),
            )
        };
        let Some(q) = q else { return false };
        let mut tlb = rocjitsu_gpu::mem::Tlb::default();
        if runtime && q.ctx_save != 0 {
            let delivered = self.send_exception_to_runtime(vm, &mut tlb, q.ctx_save, error);
            return match delivered {
                Ok(d) => d,
                Err(f) => {
                    tracing::warn!("queue {queue}: cannot deliver {}: {f}", error.name());
                    false
                }
            };
        }
        if error.is_packet() || tma == 0 || q.amd_queue == 0 {
            return false;
        }
        let told = cp::set_queue_inactive(vm, self, q.amd_queue, error.legacy);
        told.unwrap_or_else(|f| {
            tracing::warn!(
                "queue {queue}: the trap handler cannot report {}: {f}",
                error.name()
            );
            false
        })
    }

    fn gpu_fault(&self, gpu: u32, fault: &GpuFault) {
        let node = gpu + 1;
        if fault.hang {
            self.report(format!(
                "rocjitsu: GPU node-{node}: the watchdog stopped a hung dispatch\n{}",
                fault.report
            ));
        } else if let Some(e) = fault.error {
            let what = if e.is_packet() {
                "the command processor refused a packet"
            } else {
                "a wave raised an exception"
            };
            self.report(format!(
                "rocjitsu: GPU node-{node}: {what} ({})\n{}",
                e.name(),
                fault.report
            ));
            return;
        } else {
            self.report(format!(
                "rocjitsu: GPU node-{node}: memory access fault on address 0x{:x}\n{}",
                fault.addr, fault.report
            ));
        }
        self.memory_exception(gpu, fault);
    }

    /// A queue exception with neither the runtime's exception reporting
    /// enabled nor a trap handler to store it: a real GPU would leave the
    /// waves halted and the program waiting forever; it goes out as a
    /// memory exception instead (at address 0, imprecise), which the
    /// runtime reports.
    fn undelivered(&self, gpu: u32, fault: &GpuFault) {
        let name = fault.error.map_or("a queue exception", |e| e.name());
        self.report(format!(
            "rocjitsu: GPU node-{}: the runtime enabled no exception reporting and installed no trap handler to receive {name}; it goes out as a memory exception",
            gpu + 1
        ));
        self.memory_exception(gpu, fault);
    }

    fn gpu_clock(&self) -> u64 {
        gpu_clock()
    }
}

impl Device {
    /// Sets up the GPUs of `opts.config` and writes their sysfs tree.
    pub fn new(opts: DriverOptions) -> Result<Arc<Device>, String> {
        Device::with_plugins(opts, Vec::new())
    }

    /// [`Device::new`] with plugin objects of the embedder's beside those
    /// of the configuration and `ROCJITSU_PLUGINS` (mirage's publisher of
    /// live counters).
    pub fn with_plugins(
        opts: DriverOptions,
        extra: Vec<Box<dyn rocjitsu_gpu::plugin::Plugin>>,
    ) -> Result<Arc<Device>, String> {
        let sysfs = SysfsTree::create(&opts.config, &opts.runtime_dir).map_err(|e| {
            format!(
                "cannot write the KFD sysfs tree under {}: {e} (set ROCJITSU_RUNTIME_DIR to a writable directory)",
                opts.runtime_dir.display()
            )
        })?;
        let gpus: Vec<Gpu> = opts
            .config
            .gpus
            .iter()
            .enumerate()
            .map(|(i, g)| Gpu {
                gpu_id: gpu_id_of(&opts.config, i),
                minor: g.kfd.drm_render_minor,
            })
            .collect();
        let vram = Arc::new(VramPool::new(
            opts.config
                .gpus
                .iter()
                .map(|g| g.memory.size_bytes)
                .collect(),
        ));
        let plugins = Plugins::from_config_and_env(&opts.config.plugins).map_err(|e| {
            format!(
                "{e} (plugins come from the configuration's plugins block and {})",
                rocjitsu_config::env::PLUGINS
            )
        })?;
        let plugins = match (plugins, extra.is_empty()) {
            (Some(p), _) => Some(p.with(extra)),
            (None, false) => Some(Plugins::of(extra)),
            (None, true) => None,
        }
        .map(Arc::new);
        if let Some(p) = &plugins {
            finish_at_exit(p);
        }
        Ok(Arc::new(Device {
            opts,
            gpus,
            sysfs,
            vram,
            cp: OnceLock::new(),
            plugins,
            ipc: Mutex::new(HashMap::new()),
            dmabufs: dmabuf::Exports::default(),
        }))
    }

    pub fn sysfs(&self) -> &SysfsTree {
        &self.sysfs
    }

    pub fn config(&self) -> &GpuConfig {
        &self.opts.config
    }

    /// VRAM in use on GPU `gpu` by every process (bytes).
    pub fn vram_used(&self, gpu: usize) -> u64 {
        self.vram.used(gpu)
    }

    /// The device file a path names, if it is one of ours.
    pub fn device_for_path(&self, path: &str) -> Option<DeviceFile> {
        if path == "/dev/kfd" {
            return Some(DeviceFile::Kfd);
        }
        let minor: u32 = path.strip_prefix("/dev/dri/renderD")?.parse().ok()?;
        let gpu = self.gpus.iter().position(|g| g.minor == minor)?;
        Some(DeviceFile::Render { gpu, minor })
    }

    fn gpu_index(&self, gpu_id: u32) -> Result<usize, Errno> {
        self.gpus
            .iter()
            .position(|g| g.gpu_id == gpu_id)
            .ok_or(Errno::EINVAL)
    }

    fn cp(&self) -> &CommandProcessor {
        self.cp.get_or_init(|| {
            let gpus = self
                .opts
                .config
                .gpus
                .iter()
                .map(|g| CpGpu {
                    target: g.gfx_target,
                    max_lds: g.cu.lds_bytes,
                    sramecc: g.kfd.capability & rocjitsu_config::hsa_cap::SRAM_EDCSUPPORTED != 0,
                })
                .collect();
            CommandProcessor::new(
                gpus,
                CpOptions {
                    threads: self.opts.threads,
                    watchdog: self.opts.watchdog,
                    plugins: self.plugins.clone(),
                },
            )
        })
    }
}

/// Plugin sets whose summaries are due when the process exits (a program
/// under the preload library never drops its driver).
static AT_EXIT: Mutex<Vec<std::sync::Weak<Plugins>>> = Mutex::new(Vec::new());

extern "C" fn finish_plugins() {
    let list = std::mem::take(&mut *AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()));
    for p in list.iter().filter_map(std::sync::Weak::upgrade) {
        p.finish();
    }
}

/// Has `p`'s summaries written at process exit, if it is still alive then.
fn finish_at_exit(p: &Arc<Plugins>) {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    REGISTER.call_once(|| {
        // SAFETY: `finish_plugins` is an `extern "C" fn()` that does not
        // unwind across the C boundary (it only locks and writes).
        unsafe {
            libc::atexit(finish_plugins);
        }
    });
    AT_EXIT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Arc::downgrade(p));
}

impl SimulatedDriver {
    /// A device of its own and its one process (local mode).
    pub fn new(opts: DriverOptions) -> Result<SimulatedDriver, String> {
        Ok(SimulatedDriver::open(
            &Device::new(opts)?,
            Caller::InProcess,
        ))
    }

    /// A new process on `device`.
    pub fn open(device: &Arc<Device>, caller: Caller) -> SimulatedDriver {
        let config = &device.opts.config;
        let memory = Memory::new(
            device.vram.clone(),
            config
                .gpus
                .iter()
                .map(|g| {
                    u64::from(g.queues.doorbell_bytes) * u64::from(g.queues.doorbells_per_process)
                })
                .collect(),
            caller == Caller::Remote,
        );
        let vm = Arc::new(Vm::new());
        let svm = Arc::new(SvmState {
            ranges: Mutex::new(Svm::default()),
            live: AtomicBool::new(false),
            xnack: AtomicBool::new(false),
            all_gpus: (1u64 << device.gpus.len()) - 1,
        });
        // The daemon cannot reach a client's memory: no recoverable faults.
        if caller == Caller::InProcess {
            vm.set_pager(Box::new(XnackPager(svm.clone())));
        }
        let events = Arc::new(Events::default());
        let host = Arc::new(Host {
            events: events.clone(),
            gpu_ids: device.gpus.iter().map(|g| g.gpu_id).collect(),
            reports: (caller == Caller::Remote).then(|| Mutex::new(Vec::new())),
            exceptions: Mutex::new(Exceptions::default()),
        });
        SimulatedDriver {
            device: device.clone(),
            gpu_process: cp::Process::new(vm.clone(), host.clone()),
            host,
            vm,
            memory: Mutex::new(memory),
            events,
            process: Mutex::new(Process::default()),
            caller,
            gem: dmabuf::GemHandles::default(),
            svm,
        }
    }

    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// Holds the process to `quota` (a daemon's client): an allocation
    /// that would take it past its share of VRAM or GTT fails with ENOMEM.
    pub(crate) fn set_quota(&self, quota: Arc<crate::memory::Quota>) {
        self.mem().set_quota(quota);
    }

    /// Fault reports kept for a remote caller since the last call.
    pub fn take_reports(&self) -> Vec<String> {
        self.host
            .reports
            .as_ref()
            .map(|r| std::mem::take(&mut *r.lock().unwrap_or_else(|e| e.into_inner())))
            .unwrap_or_default()
    }

    pub fn sysfs(&self) -> &SysfsTree {
        &self.device.sysfs
    }

    /// The GPU's view of memory (tests and tools).
    pub fn vm(&self) -> &Arc<Vm> {
        &self.vm
    }

    /// The memfd backing allocation `handle` (as ALLOC_MEMORY_OF_GPU
    /// returned it) and its size: what a remote client maps.
    pub fn allocation_fd(&self, handle: u64) -> Option<(RawFd, u64)> {
        let m = self.mem();
        let a = m.get(handle as u32)?;
        Some((a.memfd()?, a.size))
    }

    fn gpu_index(&self, gpu_id: u32) -> Result<usize, Errno> {
        self.device.gpu_index(gpu_id)
    }

    fn mem(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn proc(&self) -> std::sync::MutexGuard<'_, Process> {
        self.process.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn cp(&self) -> &CommandProcessor {
        self.device.cp()
    }

    /// Queues of this process (tests and the daemon's accounting).
    pub fn queue_count(&self) -> usize {
        self.proc().queues.len()
    }

    /// Queues of this process per GPU (index in the configuration).
    pub fn queues_by_gpu(&self) -> Vec<usize> {
        let mut n = vec![0; self.device.gpus.len()];
        for q in self.proc().queues.values() {
            if let Some(c) = n.get_mut(q.gpu) {
                *c += 1;
            }
        }
        n
    }

    fn apertures(&self, gpu: usize) -> [u8; kfd::process_device_apertures::SIZE] {
        use kfd::process_device_apertures as p;
        let mut a = [0u8; p::SIZE];
        // GFX9 64-bit apertures: LDS at 1 << 48, scratch at 2 << 48, GPUVM
        // over the 47-bit user address space.
        let lds = 1u64 << 48;
        let scratch = 2u64 << 48;
        put(&mut a, p::LDS_BASE, lds);
        put(&mut a, p::LDS_LIMIT, lds | 0xffff_ffff);
        put(&mut a, p::SCRATCH_BASE, scratch);
        put(&mut a, p::SCRATCH_LIMIT, scratch | 0xffff_ffff);
        put(&mut a, p::GPUVM_BASE, 0x20_0000);
        put(&mut a, p::GPUVM_LIMIT, (1 << 47) - 1);
        put(&mut a, p::GPU_ID, self.device.gpus[gpu].gpu_id);
        a
    }

    fn kfd_ioctl(&self, nr: u8, a: &mut Args, mem: &dyn UserMemory) -> Result<i32, Errno> {
        match nr {
            kfd::GET_VERSION => {
                a.set(kfd::get_version::MAJOR_VERSION, KFD_VERSION.0);
                a.set(kfd::get_version::MINOR_VERSION, KFD_VERSION.1);
            }
            kfd::GET_PROCESS_APERTURES_NEW => {
                use kfd::get_process_apertures_new as g;
                let ptr = a.get(g::KFD_PROCESS_DEVICE_APERTURES_PTR);
                let cap = a.get(g::NUM_OF_NODES) as usize;
                if cap == 0 {
                    a.set(g::NUM_OF_NODES, self.device.gpus.len() as u32);
                    return Ok(0);
                }
                let n = cap.min(self.device.gpus.len());
                let mut out = Vec::with_capacity(n * kfd::process_device_apertures::SIZE);
                for g in 0..n {
                    out.extend_from_slice(&self.apertures(g));
                }
                mem.write(ptr, &out)?;
                a.set(g::NUM_OF_NODES, n as u32);
            }
            kfd::GET_PROCESS_APERTURES => {
                use kfd::get_process_apertures as g;
                let mut all = a.get(g::PROCESS_APERTURES);
                let entries = all.chunks_exact_mut(kfd::process_device_apertures::SIZE);
                let n = self.device.gpus.len().min(entries.len());
                for (g, e) in entries.take(n).enumerate() {
                    e.copy_from_slice(&self.apertures(g));
                }
                a.set(g::PROCESS_APERTURES, all);
                a.set(g::NUM_OF_NODES, n as u32);
            }
            kfd::ACQUIRE_VM => {
                self.gpu_index(a.get(kfd::acquire_vm::GPU_ID))?;
            }
            kfd::SET_MEMORY_POLICY => {
                use kfd::set_memory_policy as p;
                self.gpu_index(a.get(p::GPU_ID))?;
                if a.get(p::DEFAULT_POLICY) > 1 || a.get(p::ALTERNATE_POLICY) > 1 {
                    return Err(Errno::EINVAL);
                }
            }
            kfd::GET_CLOCK_COUNTERS => {
                use kfd::get_clock_counters as c;
                // An unknown GPU gets a zero GPU counter, not an error.
                let known = self.gpu_index(a.get(c::GPU_ID)).is_ok();
                let boot = boottime_ns();
                a.set(c::GPU_CLOCK_COUNTER, if known { boot / 10 } else { 0 });
                a.set(c::CPU_CLOCK_COUNTER, clock_ns(libc::CLOCK_MONOTONIC_RAW));
                a.set(c::SYSTEM_CLOCK_COUNTER, boot);
                a.set(c::SYSTEM_CLOCK_FREQ, 1_000_000_000);
            }
            kfd::ALLOC_MEMORY_OF_GPU => {
                use kfd::alloc_memory_of_gpu as m;
                let gpu_id = a.get(m::GPU_ID);
                let gpu = self.gpu_index(gpu_id)?;
                if a.get(m::FLAGS) & kfd::ALLOC_USERPTR == 0 {
                    self.drop_stale_svm(a.get(m::VA_ADDR), a.get(m::BYTES));
                }
                let (id, offset) = self.mem().alloc(&AllocRequest {
                    gpu,
                    gpu_id,
                    va: a.get(m::VA_ADDR),
                    size: a.get(m::BYTES),
                    mmap_offset: a.get(m::MMAP_OFFSET),
                    flags: a.get(m::FLAGS),
                    backing: if a.get(m::FLAGS) & kfd::ALLOC_USERPTR != 0 {
                        mem.take_userptr_backing()
                    } else {
                        None
                    },
                })?;
                a.set(m::HANDLE, (u64::from(gpu_id) << 32) | u64::from(id));
                a.set(m::MMAP_OFFSET, offset);
                tracing::debug!(
                    "allocation {id}: va 0x{:x}, {} bytes, flags 0x{:08x}, mmap offset 0x{offset:x}",
                    a.get(m::VA_ADDR),
                    a.get(m::BYTES),
                    a.get(m::FLAGS)
                );
            }
            kfd::FREE_MEMORY_OF_GPU => {
                let id = a.get(kfd::free_memory_of_gpu::HANDLE) as u32;
                self.mem().free(id, &self.vm)?;
            }
            kfd::MAP_MEMORY_TO_GPU | kfd::UNMAP_MEMORY_FROM_GPU => {
                use kfd::map_memory_to_gpu as m;
                let id = a.get(m::HANDLE) as u32;
                let n = a.get(m::N_DEVICES) as usize;
                if n == 0 || n > self.device.gpus.len() * 4 {
                    return Err(Errno::EINVAL);
                }
                let mut ids = vec![0u8; n * 4];
                mem.read(a.get(m::DEVICE_IDS_ARRAY_PTR), &mut ids)?;
                for c in ids.chunks_exact(4) {
                    self.gpu_index(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))?;
                }
                let mut m = self.mem();
                if nr == kfd::MAP_MEMORY_TO_GPU {
                    m.map(id, &self.vm)?;
                } else {
                    m.unmap(id, &self.vm)?;
                }
                a.set(m::N_SUCCESS, n as u32);
            }
            kfd::AVAILABLE_MEMORY => {
                use kfd::available_memory as m;
                let gpu = self.gpu_index(a.get(m::GPU_ID))?;
                a.set(m::AVAILABLE, self.mem().available(gpu));
            }
            kfd::CREATE_EVENT => self.create_event(a)?,
            kfd::DESTROY_EVENT => self.events.destroy(a.get(kfd::destroy_event::EVENT_ID))?,
            kfd::SET_EVENT => self.events.set(a.get(kfd::set_event::EVENT_ID))?,
            kfd::RESET_EVENT => self.events.reset(a.get(kfd::reset_event::EVENT_ID))?,
            kfd::WAIT_EVENTS => {
                use kfd::wait_events as w;
                let n = a.get(w::NUM_EVENTS) as usize;
                if n == 0 || n > kfd::SIGNAL_EVENT_LIMIT as usize {
                    return Err(Errno::EINVAL);
                }
                let ptr = a.get(w::EVENTS_PTR);
                let mut list = vec![0u8; n * kfd::event_data::SIZE];
                mem.read(ptr, &mut list)?;
                if let Some(cp) = self.device.cp.get() {
                    cp.kick();
                }
                let all = a.get(w::WAIT_FOR_ALL) != 0;
                let r = self.events.wait(&mut list, all, a.get(w::TIMEOUT))?;
                mem.write(ptr, &list)?;
                a.set(w::WAIT_RESULT, r);
            }
            kfd::SET_SCRATCH_BACKING_VA => {
                self.gpu_index(a.get(kfd::set_scratch_backing_va::GPU_ID))?;
            }
            kfd::SET_TRAP_HANDLER => {
                use kfd::set_trap_handler as t;
                let gpu = self.gpu_index(a.get(t::GPU_ID))?;
                Exceptions::lock(&self.host.exceptions)
                    .tma
                    .insert(gpu, a.get(t::TMA_ADDR));
            }
            kfd::GET_TILE_CONFIG => {
                use kfd::get_tile_config as t;
                self.gpu_index(a.get(t::GPU_ID))?;
                let tiles = a.get(t::NUM_TILE_CONFIGS).min(32) as usize;
                let macros = a.get(t::NUM_MACRO_TILE_CONFIGS).min(16) as usize;
                if tiles > 0 {
                    mem.write(a.get(t::TILE_CONFIG_PTR), &vec![0u8; tiles * 4])?;
                }
                if macros > 0 {
                    mem.write(a.get(t::MACRO_TILE_CONFIG_PTR), &vec![0u8; macros * 4])?;
                }
                a.set(t::NUM_TILE_CONFIGS, tiles as u32);
                a.set(t::NUM_MACRO_TILE_CONFIGS, macros as u32);
                a.set(t::GB_ADDR_CONFIG, drm::GB_ADDR_CONFIG);
                a.set(t::NUM_BANKS, 0);
                a.set(t::NUM_RANKS, 0);
            }
            kfd::SET_XNACK_MODE => {
                use kfd::set_xnack_mode::XNACK_ENABLED;
                let want = a.get(XNACK_ENABLED) as i32;
                let mut p = self.proc();
                if want < 0 {
                    a.set(XNACK_ENABLED, u32::from(p.xnack));
                } else {
                    if !p.queues.is_empty() {
                        return Err(Errno::EBUSY);
                    }
                    // KFD's `kfd_process_xnack_mode`: per-process XNACK is
                    // gfx90a's and later; on gfx908 it follows amdgpu's
                    // `noretry`, on by default, so XNACK cannot be turned on.
                    if want != 0 && !xnack_selectable(self.device.config()) {
                        return Err(Errno::EPERM);
                    }
                    p.xnack = want != 0;
                    self.svm.xnack.store(p.xnack, Ordering::Release);
                }
            }
            kfd::CREATE_QUEUE => self.create_queue(a)?,
            kfd::DESTROY_QUEUE => {
                let qid = a.get(kfd::destroy_queue::QUEUE_ID);
                let q = {
                    let mut p = self.proc();
                    let q = p.queues.remove(&qid).ok_or(Errno::EINVAL)?;
                    p.doorbells.retain(|_, v| *v != qid);
                    q
                };
                Exceptions::lock(&self.host.exceptions)
                    .queues
                    .remove(&q.cp_id);
                self.cp()
                    .destroy_queue(q.cp_id)
                    .map_err(|_| Errno::EINVAL)?;
            }
            kfd::UPDATE_QUEUE => {
                use kfd::update_queue as u;
                let (percent, priority) = (a.get(u::QUEUE_PERCENTAGE), a.get(u::QUEUE_PRIORITY));
                if percent > 100 || priority > 15 {
                    return Err(Errno::EINVAL);
                }
                let size = a.get(u::RING_SIZE);
                if size != 0 && !size.is_power_of_two() {
                    return Err(Errno::EINVAL);
                }
                let cp_id = self
                    .proc()
                    .queues
                    .get(&a.get(u::QUEUE_ID))
                    .map(|q| q.cp_id)
                    .ok_or(Errno::EINVAL)?;
                // A percentage of 0 makes the queue inactive (KFD's
                // QUEUE_IS_ACTIVE wants size, percentage and address set).
                let size = if percent == 0 { 0 } else { size };
                self.cp()
                    .update_queue(cp_id, a.get(u::RING_BASE_ADDRESS), size.into(), priority)
                    .map_err(|_| Errno::EINVAL)?;
            }
            kfd::SET_CU_MASK => {
                use kfd::set_cu_mask as c;
                if !self.proc().queues.contains_key(&a.get(c::QUEUE_ID)) {
                    return Err(Errno::EINVAL);
                }
                let n = a.get(c::NUM_CU_MASK);
                if n == 0 || n % 32 != 0 {
                    return Err(Errno::EINVAL);
                }
            }
            kfd::ALLOC_QUEUE_GWS => {
                use kfd::alloc_queue_gws as g;
                if !self.proc().queues.contains_key(&a.get(g::QUEUE_ID)) {
                    return Err(Errno::EINVAL);
                }
                a.set(g::FIRST_GWS, 0);
            }
            kfd::RUNTIME_ENABLE => self.runtime_enable(a)?,
            kfd::SVM => return self.svm_ioctl(a, mem),
            kfd::IPC_EXPORT_HANDLE => self.ipc_export(a)?,
            kfd::IPC_IMPORT_HANDLE => self.ipc_import(a)?,
            kfd::EXPORT_DMABUF => self.export_dmabuf(a, mem)?,
            kfd::GET_DMABUF_INFO => {
                use kfd::get_dmabuf_info as x;
                let b = self
                    .device
                    .dmabufs
                    .lookup(&mem.file(a.get(x::DMABUF_FD))?)?;
                let gpu_id = self.device.gpus[b.gpu].gpu_id;
                dmabuf::get_info(a, &b, gpu_id);
            }
            kfd::IMPORT_DMABUF => self.import_dmabuf(a, mem)?,
            _ => return Err(Errno::EINVAL),
        }
        Ok(0)
    }

    /// `IPC_EXPORT_HANDLE` {handle, share_handle[4] out, gpu_id, flags}:
    /// a share handle any process on the device can import.
    fn ipc_export(&self, a: &mut Args) -> Result<(), Errno> {
        use kfd::ipc_export_handle as x;
        self.gpu_index(a.get(x::GPU_ID))?;
        let (fd, size, flags) = {
            let m = self.mem();
            let alloc = m.get(a.get(x::HANDLE) as u32).ok_or(Errno::EINVAL)?;
            (
                alloc.shared_memfd().ok_or(Errno::EINVAL)?,
                alloc.size,
                alloc.flags,
            )
        };
        let mut ipc = self.device.ipc.lock().unwrap_or_else(|e| e.into_inner());
        ipc.retain(|_, b| b.memfd.strong_count() > 0);
        let key = loop {
            let k = crate::daemon::token();
            if !ipc.contains_key(&k) {
                break k;
            }
        };
        ipc.insert(
            key,
            IpcBuffer {
                memfd: Arc::downgrade(&fd),
                size,
                flags,
            },
        );
        a.set(x::SHARE_HANDLE, key);
        Ok(())
    }

    /// `IPC_IMPORT_HANDLE` {handle out, va_addr, mmap_offset out,
    /// share_handle[4], gpu_id, flags out}: the exported buffer at
    /// `va_addr` in this process, to be mapped through the render node.
    fn ipc_import(&self, a: &mut Args) -> Result<(), Errno> {
        use kfd::ipc_import_handle as x;
        let gpu_id = a.get(x::GPU_ID);
        let gpu = self.gpu_index(gpu_id)?;
        let key = a.get(x::SHARE_HANDLE);
        let (fd, size, flags) = {
            let ipc = self.device.ipc.lock().unwrap_or_else(|e| e.into_inner());
            let b = ipc.get(&key).ok_or(Errno::EINVAL)?;
            (b.memfd.upgrade().ok_or(Errno::EINVAL)?, b.size, b.flags)
        };
        let (id, offset) = self.mem().import(gpu, a.get(x::VA_ADDR), size, flags, fd)?;
        a.set(x::HANDLE, (u64::from(gpu_id) << 32) | u64::from(id));
        a.set(x::MMAP_OFFSET, offset);
        a.set(x::FLAGS, flags);
        Ok(())
    }

    /// `EXPORT_DMABUF` {handle, flags, dmabuf_fd out}: a dma-buf
    /// descriptor of the allocation for the caller ([`crate::dmabuf`]).
    /// A userptr allocation cannot be exported (`amdgpu_gem_prime_export`:
    /// EPERM); doorbells and MMIO have no memory to share.
    fn export_dmabuf(&self, a: &mut Args, mem: &dyn UserMemory) -> Result<(), Errno> {
        use kfd::export_dmabuf as x;
        let handle = a.get(x::HANDLE);
        let gpu = self.gpu_index((handle >> 32) as u32)?;
        let (fd, size, flags) = {
            let m = self.mem();
            let alloc = m
                .get(handle as u32)
                .filter(|al| al.gpu == gpu)
                .ok_or(Errno::EINVAL)?;
            if alloc.flags & kfd::ALLOC_USERPTR != 0 {
                return Err(Errno::EPERM);
            }
            (
                alloc.shared_memfd().ok_or(Errno::EINVAL)?,
                alloc.size,
                alloc.flags,
            )
        };
        let dup = self.device.dmabufs.export(&fd, size, flags, gpu)?;
        let cloexec = a.get(x::FLAGS) & libc::O_CLOEXEC as u32 != 0;
        let n = mem.install(dup, cloexec)?;
        a.set(x::DMABUF_FD, n);
        Ok(())
    }

    /// `IMPORT_DMABUF` {va_addr, handle out, gpu_id, dmabuf_fd}: the
    /// buffer becomes an allocation of this process at `va_addr` on GPU
    /// `gpu_id` (any GPU may import another's memory, as over XGMI).
    fn import_dmabuf(&self, a: &mut Args, mem: &dyn UserMemory) -> Result<(), Errno> {
        use kfd::import_dmabuf as x;
        let gpu_id = a.get(x::GPU_ID);
        let gpu = self.gpu_index(gpu_id)?;
        let b = self
            .device
            .dmabufs
            .lookup(&mem.file(a.get(x::DMABUF_FD))?)?;
        let (id, _) = self.mem().import(
            gpu,
            a.get(x::VA_ADDR),
            b.size,
            dmabuf::import_flags(b.flags),
            b.memfd,
        )?;
        a.set(x::HANDLE, (u64::from(gpu_id) << 32) | u64::from(id));
        Ok(())
    }

    /// `SVM` {start_addr, size, op, nattr, attrs[nattr]}: see [`crate::svm`].
    fn svm_ioctl(&self, a: &mut Args, mem: &dyn UserMemory) -> Result<i32, Errno> {
        use kfd::svm as s;
        let (start, end) = svm::interval(a.get(s::START_ADDR), a.get(s::BYTES))?;
        let n = a.get(s::NATTR);
        let tail = a.bytes.get(s::SIZE..).unwrap_or(&[]);
        let mut attrs = svm::decode_attrs(tail, n)?;
        let gpu = |id| self.device.gpu_index(id).ok();
        // With XNACK on a new range starts accessible to every GPU.
        let new_access = if self.svm.xnack.load(Ordering::Acquire) {
            self.svm.all_gpus
        } else {
            0
        };
        match a.get(s::OP) {
            svm::OP_SET_ATTR => {
                // KFD checks the attributes first, then the interval.
                Svm::check(&attrs, &gpu)?;
                let backing = match self.caller {
                    // KFD wants the interval inside the process's mappings.
                    Caller::InProcess => {
                        if !user::is_mapped(start, end - start) {
                            return Err(Errno::EFAULT);
                        }
                        Some(Backing::Host)
                    }
                    // A daemon client offers the memfd it moved the pages
                    // into (or already shares); it checked its mappings.
                    Caller::Remote => match mem.take_userptr_backing() {
                        Some((fd, off)) => {
                            crate::memory::check_userptr_backing(
                                std::os::fd::AsRawFd::as_raw_fd(&fd),
                                off,
                                end - start,
                            )?;
                            let m = svm::Mapping::new(fd, off, start, end - start)?;
                            Some(Backing::Memfd(Arc::new(m)))
                        }
                        None => None,
                    },
                };
                // Memory of KFD allocations is not SVM memory.
                if self.mem().overlaps(start, end) {
                    return Err(Errno::EADDRINUSE);
                }
                let mut sv = self.svm.lock();
                sv.set(start, end, &attrs, backing, new_access, &gpu)?;
                sv.map_into(&self.vm);
                self.svm.live.store(!sv.is_empty(), Ordering::Release);
                tracing::debug!(
                    "SVM set {start:#x}..{end:#x} {attrs:x?}: {} ranges",
                    sv.ranges().len()
                );
            }
            svm::OP_GET_ATTR => {
                // The interval first, as for SET_ATTR (local mode: the
                // process's mappings; a daemon cannot see a client's).
                if self.caller == Caller::InProcess && !user::is_mapped(start, end - start) {
                    return Err(Errno::EFAULT);
                }
                if self.mem().overlaps(start, end) {
                    return Err(Errno::EADDRINUSE);
                }
                let sv = self.svm.lock();
                sv.get(start, end, &mut attrs, new_access, &gpu)?;
                svm::encode_attrs(&attrs, &mut a.bytes[s::SIZE..]);
            }
            // KFD's svm_ioctl answers an unknown operation with a positive
            // EINVAL: the ioctl returns 22 and sets no errno.
            _ => return Ok(libc::EINVAL),
        }
        Ok(0)
    }

    /// A new VRAM/GTT/doorbell allocation at `[va, va + size)`: the runtime
    /// took that address range from a fresh mmap of its own, so memory an
    /// SVM range there described is gone. KFD's MMU notifier ends such a
    /// range when the process unmaps it; an munmap inside libc (free() of a
    /// large block) does not pass through the preload's munmap, so the
    /// range ends here instead, before the allocation is mapped over it.
    fn drop_stale_svm(&self, va: u64, size: u64) {
        if !self.svm.live.load(Ordering::Acquire) || size == 0 {
            return;
        }
        let start = va & !(svm::PAGE - 1);
        let Some(end) = va
            .checked_add(size)
            .and_then(|e| e.checked_next_multiple_of(svm::PAGE))
        else {
            return;
        };
        let mut sv = self.svm.lock();
        if sv.forget(start, end) {
            tracing::debug!(
                "SVM ranges in {start:#x}..{end:#x} ended: a new allocation is there (the process unmapped that memory)"
            );
            sv.map_into(&self.vm);
            self.svm.live.store(!sv.is_empty(), Ordering::Release);
        }
    }

    /// The process unmapped `[addr, addr + len)` of its memory (local mode;
    /// the preload calls this before munmap): SVM ranges there end, as
    /// KFD's MMU notifier ends them, so the GPU faults there instead of
    /// reaching memory that is gone.
    pub fn forget_host_range(&self, addr: u64, len: u64) {
        if self.caller != Caller::InProcess || !self.svm.live.load(Ordering::Acquire) {
            return;
        }
        let start = addr & !(svm::PAGE - 1);
        let Some(end) = addr
            .checked_add(len)
            .and_then(|e| e.checked_next_multiple_of(svm::PAGE))
        else {
            return;
        };
        let mut sv = self.svm.lock();
        if sv.forget(start, end) {
            sv.map_into(&self.vm);
            self.svm.live.store(!sv.is_empty(), Ordering::Release);
        }
    }

    fn create_event(&self, a: &mut Args) -> Result<(), Errno> {
        use kfd::create_event as e;
        let page = a.get(e::EVENT_PAGE_OFFSET);
        if page != 0 && !self.events.has_page() {
            let id = page as u32;
            let m = self.mem();
            let alloc = m.get(id).ok_or(Errno::EINVAL)?;
            let host = m.host_of(alloc.va).ok_or(Errno::EINVAL)?;
            self.events.set_page(host, alloc.size)?;
        }
        let kind = a.get(e::EVENT_TYPE);
        if kind > kfd::EVENT_MEMORY {
            return Err(Errno::EINVAL);
        }
        let c = self.events.create(kind, a.get(e::AUTO_RESET) != 0)?;
        // A signal event lives in the event page: KFD answers the page's
        // mmap offset, and libhsakmt gives the event a mailbox address
        // (HWData2, which ROCr copies into its signals) only when that
        // offset is nonzero.
        a.set(
            e::EVENT_PAGE_OFFSET,
            if kind == kfd::EVENT_SIGNAL {
                kfd::MMAP_TYPE_EVENTS << kfd::MMAP_TYPE_SHIFT
            } else {
                0
            },
        );
        a.set(e::EVENT_TRIGGER_DATA, c.trigger_data);
        a.set(e::EVENT_ID, c.id);
        a.set(e::EVENT_SLOT_INDEX, c.slot);
        Ok(())
    }

    fn create_queue(&self, a: &mut Args) -> Result<(), Errno> {
        use kfd::create_queue as q;
        let gpu_id = a.get(q::GPU_ID);
        let gpu = self.gpu_index(gpu_id)?;
        let ring_base = a.get(q::RING_BASE_ADDRESS);
        let wptr = a.get(q::WRITE_POINTER_ADDRESS);
        let rptr = a.get(q::READ_POINTER_ADDRESS);
        let ring_size = a.get(q::RING_SIZE);
        let qtype = a.get(q::QUEUE_TYPE);
        let percent = a.get(q::QUEUE_PERCENTAGE);
        let priority = a.get(q::QUEUE_PRIORITY);
        if percent > 100 || priority > 15 || (ring_size != 0 && !ring_size.is_power_of_two()) {
            return Err(Errno::EINVAL);
        }
        if ring_base == 0 || wptr == 0 || rptr == 0 {
            return Err(Errno::EFAULT);
        }
        let spec = &self.device.opts.config.gpus[gpu];
        let kind = match qtype {
            kfd::QUEUE_TYPE_COMPUTE_AQL => QueueKind::Aql,
            kfd::QUEUE_TYPE_SDMA | kfd::QUEUE_TYPE_SDMA_XGMI => QueueKind::Sdma,
            kfd::QUEUE_TYPE_SDMA_BY_ENG_ID => {
                // The engine must exist: PCIe engines, then XGMI ones.
                let engines = spec.queues.sdma_engines + spec.queues.sdma_xgmi_engines;
                if a.get(q::SDMA_ENGINE_ID) >= engines {
                    return Err(Errno::EINVAL);
                }
                QueueKind::Sdma
            }
            // PM4 compute queues: the write pointer counts dwords (64
            // bits), the read pointer is the 32-bit ring offset the CP
            // writes back.
            kfd::QUEUE_TYPE_COMPUTE => QueueKind::Pm4,
            _ => return Err(Errno::EINVAL),
        };
        // A compute queue's context save area must have the sizes KFD
        // computes for the node (kfd_queue_acquire_buffers), which the
        // thunk derives from the same topology properties.
        if matches!(kind, QueueKind::Aql | QueueKind::Pm4)
            && a.get(q::CTX_SAVE_RESTORE_ADDRESS) != 0
        {
            let want = crate::cwsr::sizes(spec);
            let (size, ctl) = (a.get(q::CTX_SAVE_RESTORE_SIZE), a.get(q::CTL_STACK_SIZE));
            if size != want.cwsr || ctl != want.ctl_stack {
                tracing::warn!(
                    "CREATE_QUEUE: context save area of {size:#x} bytes with a {ctl:#x}-byte control \
                     stack; {} ({}) needs {:#x} and {:#x} (KFD's kfd_queue_ctx_save_restore_size)",
                    spec.marketing_name,
                    spec.gfx_target,
                    want.cwsr,
                    want.ctl_stack
                );
                return Err(Errno::EINVAL);
            }
        }
        let slots = spec.queues.doorbells_per_process;
        let mut p = self.proc();
        let qid = p.next_queue;
        // Queue ids are never reused: once they run out, ENOSPC.
        let next_queue = qid.checked_add(1).ok_or(Errno::ENOSPC)?;
        let slot = (0..slots)
            .find(|s| !p.doorbells.contains_key(&(gpu, *s)))
            .ok_or(Errno::ENOSPC)?;
        let cp_id = self
            .cp()
            .create_queue(
                &self.gpu_process,
                QueueDesc {
                    kind,
                    gpu: gpu as u32,
                    ring_base,
                    // A queue created with a percentage of 0 is inactive.
                    ring_size: if percent == 0 { 0 } else { ring_size.into() },
                    read_ptr: rptr,
                    write_ptr: wptr,
                    doorbell: 0,
                    priority,
                },
            )
            .map_err(|e| {
                tracing::warn!("CREATE_QUEUE: {e}");
                Errno::EINVAL
            })?;
        p.next_queue = next_queue;
        Exceptions::lock(&self.host.exceptions).queues.insert(
            cp_id,
            ExceptionQueue {
                ctx_save: a.get(q::CTX_SAVE_RESTORE_ADDRESS),
                amd_queue: if kind == QueueKind::Aql {
                    rptr.wrapping_sub(cp::AMD_QUEUE_READ_DISPATCH_ID)
                } else {
                    0
                },
            },
        );
        p.doorbells.insert((gpu, slot), qid);
        p.queues.insert(qid, Queue { cp_id, gpu });
        a.set(q::QUEUE_ID, qid);
        a.set(
            q::DOORBELL_OFFSET,
            (kfd::MMAP_TYPE_DOORBELL << kfd::MMAP_TYPE_SHIFT)
                | (u64::from(gpu_id) << kfd::MMAP_GPU_ID_SHIFT)
                | u64::from(slot * spec.queues.doorbell_bytes),
        );
        Ok(())
    }

    /// `AMDKFD_IOC_RUNTIME_ENABLE`, as KFD's `runtime_enable` and
    /// `runtime_disable` keep the process's runtime state: enabling twice is
    /// EBUSY; from then on queue exceptions go to the runtime through the
    /// queues' context save area headers. No capabilities are reported (KFD
    /// sets only `KFD_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK`, and
    /// this driver writes no core dumps).
    fn runtime_enable(&self, a: &mut Args) -> Result<(), Errno> {
        use kfd::runtime_enable as r;
        let mut x = Exceptions::lock(&self.host.exceptions);
        if a.get(r::MODE_MASK) & kfd::RUNTIME_ENABLE_MODE_ENABLE_MASK != 0 {
            if x.runtime.is_some() {
                return Err(Errno::EBUSY);
            }
            x.runtime = Some(a.get(r::R_DEBUG));
        } else {
            x.runtime = None;
        }
        a.set(r::CAPABILITIES_MASK, 0);
        Ok(())
    }

    /// Whether the runtime enabled exception reporting (tests).
    pub fn runtime_enabled(&self) -> bool {
        Exceptions::lock(&self.host.exceptions).runtime.is_some()
    }

    /// Live allocations (tests: everything is reclaimed).
    pub fn allocation_count(&self) -> usize {
        self.mem().count()
    }

    /// The GPU index a queue runs on (tests).
    pub fn queue_gpu(&self, queue_id: u32) -> Option<usize> {
        self.proc().queues.get(&queue_id).map(|q| q.gpu)
    }
}

/// Struct sizes this driver knows per KFD command (the newest layout).
fn kfd_arg_size(nr: u8) -> usize {
    match nr {
        kfd::CREATE_QUEUE => kfd::create_queue::SIZE,
        kfd::GET_PROCESS_APERTURES => kfd::get_process_apertures::SIZE,
        // Its attributes follow; the caller's size counts them.
        kfd::SVM => kfd::svm::SIZE,
        _ => 64,
    }
}

/// How long a checkpoint waits for the queues to finish the packets they
/// are running.
pub const CHECKPOINT_PAUSE: Duration = Duration::from_secs(120);

impl Device {
    /// Stops every queue of every process between two packets
    /// ([`CommandProcessor::pause`]); the state a checkpoint saves holds
    /// still until [`Device::resume`].
    pub fn pause(&self, timeout: Duration) -> Result<(), crate::checkpoint::CheckpointError> {
        match self.cp.get() {
            Some(cp) => cp.pause(timeout).map_err(|e| {
                crate::checkpoint::CheckpointError::Unsupported(format!(
                    "the queues did not stop for the checkpoint: {e}"
                ))
            }),
            None => Ok(()),
        }
    }

    /// Lets the queues go on after [`Device::pause`].
    pub fn resume(&self) {
        if let Some(cp) = self.cp.get() {
            cp.resume();
        }
    }

    /// A checkpoint of `clients` (each with the token and pid it is known
    /// by): the queues are paused while their processes' state is read,
    /// then go on. The caller keeps the processes from issuing ioctls
    /// meanwhile (the daemon holds its gate).
    /// With `keep_paused` the queues stay paused after a successful
    /// checkpoint (a daemon that freezes on what the file holds).
    pub fn checkpoint(
        &self,
        clients: &[(&SimulatedDriver, [u8; 16], u32)],
        keep_paused: bool,
    ) -> Result<crate::checkpoint::Checkpoint, crate::checkpoint::CheckpointError> {
        use crate::checkpoint as c;
        self.pause(CHECKPOINT_PAUSE)?;
        let mut payload = c::PayloadWriter::default();
        let states: Result<Vec<c::ClientState>, _> = clients
            .iter()
            .map(|(d, token, pid)| d.snapshot(token, *pid, &mut payload))
            .collect();
        let gpu_clock = gpu_clock();
        if states.is_err() || !keep_paused {
            self.resume();
        }
        Ok(c::Checkpoint {
            meta: c::Meta {
                format: c::FORMAT.into(),
                version: c::VERSION,
                rocjitsu: env!("CARGO_PKG_VERSION").into(),
                config_sha256: c::config_sha256(&self.opts.config),
                targets: c::targets(&self.opts.config),
                exec_mode: "functional".into(),
                gpu_clock,
                clients: states?,
            },
            payload: payload.bytes,
        })
    }
}

impl SimulatedDriver {
    /// This process's state for a checkpoint (the device's queues paused:
    /// [`Device::checkpoint`]), its memory's bytes appended to `payload`.
    /// What a checkpoint does not hold is refused, naming it: SVM ranges,
    /// PM4 compute queues (their register file and consumed-dword count
    /// live in the command processor), memory shared with another
    /// process.
    pub fn snapshot(
        &self,
        token: &[u8; 16],
        pid: u32,
        payload: &mut crate::checkpoint::PayloadWriter,
    ) -> Result<crate::checkpoint::ClientState, crate::checkpoint::CheckpointError> {
        use crate::checkpoint::{self as c, CheckpointError};
        if !self.svm.lock().is_empty() {
            return Err(CheckpointError::Unsupported(
                "the process has SVM ranges (hipMallocManaged, hipMemAdvise); checkpoints do not hold SVM state yet".into(),
            ));
        }
        let p = self.proc();
        let mem = self.mem();
        let memory = mem.snapshot(payload)?;
        let (page, next_other, events) = self.events.snapshot();
        let page = match page {
            Some((host, size)) => Some(c::EventPage {
                va: mem.va_of_host(host).ok_or_else(|| {
                    CheckpointError::Unsupported(
                        "the event page is no longer an allocation of the process".into(),
                    )
                })?,
                size,
            }),
            None => None,
        };
        let mut queues = Vec::with_capacity(p.queues.len());
        let mut ids: Vec<&u32> = p.queues.keys().collect();
        ids.sort();
        for &qid in ids {
            let q = &p.queues[&qid];
            let d = self.cp().queue_desc(q.cp_id).ok_or_else(|| {
                CheckpointError::Unsupported(format!("queue {qid} has no command-processor queue"))
            })?;
            let kind = match d.kind {
                QueueKind::Aql => c::QueueKind::Aql,
                QueueKind::Sdma => c::QueueKind::Sdma,
                QueueKind::Pm4 => {
                    return Err(CheckpointError::Unsupported(format!(
                        "queue {qid} is a PM4 compute queue: its register file and consumed-dword count are command-processor state a checkpoint does not hold yet"
                    )));
                }
            };
            let slot = p
                .doorbells
                .iter()
                .find(|&(&(g, _), &id)| g == q.gpu && id == qid)
                .map(|(&(_, s), _)| s)
                .ok_or_else(|| {
                    CheckpointError::Unsupported(format!("queue {qid} has no doorbell slot"))
                })?;
            let value = |addr: u64| {
                let mut b = [0u8; 8];
                let mut tlb = rocjitsu_gpu::mem::Tlb::default();
                self.vm
                    .read(&mut tlb, addr, &mut b)
                    .map(|_| u64::from_le_bytes(b))
            };
            let (read_value, write_value) = match (value(d.read_ptr), value(d.write_ptr)) {
                (Ok(r), Ok(w)) => (r, w),
                _ => {
                    return Err(CheckpointError::Unsupported(format!(
                        "queue {qid}: its read or write pointer (0x{:x}, 0x{:x}) is not in GPU memory",
                        d.read_ptr, d.write_ptr
                    )));
                }
            };
            queues.push(c::QueueState {
                id: qid,
                gpu: q.gpu,
                kind,
                doorbell_slot: slot,
                ring_base: d.ring_base,
                ring_size: d.ring_size,
                read_ptr: d.read_ptr,
                write_ptr: d.write_ptr,
                priority: d.priority,
                read_value,
                write_value,
            });
        }
        Ok(c::ClientState {
            token: if *token == [0; 16] {
                String::new()
            } else {
                c::hex(token)
            },
            pid,
            xnack: p.xnack,
            memory,
            events: c::EventsState {
                page,
                next_other,
                events,
            },
            queues: c::QueuesState {
                next_queue: p.next_queue,
                queues,
            },
        })
    }

    /// A new process on `device` in the state `st` of checkpoint `ck`
    /// (read and checked against the device's configuration: see
    /// [`crate::checkpoint::Checkpoint::read`]). Memory the process still
    /// maps is what `adopt` returns for an allocation (its memfd and the
    /// buffer's offset in it); the rest is filled from the file. Queues
    /// start again at their saved read pointers.
    pub fn restore(
        device: &Arc<Device>,
        caller: Caller,
        st: &crate::checkpoint::ClientState,
        ck: &crate::checkpoint::Checkpoint,
        adopt: &mut dyn FnMut(
            &crate::checkpoint::AllocationState,
        ) -> Option<(std::os::fd::OwnedFd, u64)>,
    ) -> Result<(SimulatedDriver, crate::memory::RestoreReport), crate::checkpoint::CheckpointError>
    {
        use crate::checkpoint::{self as c, CheckpointError};
        let bad = CheckpointError::Unsupported;
        let d = SimulatedDriver::open(device, caller);
        let mut report = crate::memory::RestoreReport::default();
        d.mem().restore(&st.memory, ck, &d.vm, adopt, &mut report)?;
        let page = match &st.events.page {
            Some(pg) => {
                let m = d.mem();
                let host = m.host_of(pg.va).ok_or_else(|| {
                    bad(format!("the event page at 0x{:x} is no allocation", pg.va))
                })?;
                if m.host_of(pg.va + pg.size.max(1) - 1) != Some(host + pg.size.max(1) - 1) {
                    return Err(bad(format!(
                        "the event page at 0x{:x} of {} bytes is not one allocation",
                        pg.va, pg.size
                    )));
                }
                Some((host, pg.size))
            }
            None => None,
        };
        d.events
            .restore(page, st.events.next_other, &st.events.events)
            .map_err(bad)?;
        if st.xnack && !xnack_selectable(device.config()) {
            return Err(bad("XNACK is on, which these GPUs cannot select".into()));
        }
        d.svm.xnack.store(st.xnack, Ordering::Release);
        let mut p = d.proc();
        p.xnack = st.xnack;
        for q in &st.queues.queues {
            let spec = device.opts.config.gpus.get(q.gpu).ok_or_else(|| {
                bad(format!(
                    "queue {} is on GPU {}, which does not exist",
                    q.id, q.gpu
                ))
            })?;
            if q.id >= st.queues.next_queue
                || p.queues.contains_key(&q.id)
                || q.doorbell_slot >= spec.queues.doorbells_per_process
                || p.doorbells.contains_key(&(q.gpu, q.doorbell_slot))
            {
                return Err(bad(format!(
                    "queue {}: its id or doorbell slot {} is out of range or taken twice",
                    q.id, q.doorbell_slot
                )));
            }
            let kind = match q.kind {
                c::QueueKind::Aql => QueueKind::Aql,
                c::QueueKind::Sdma => QueueKind::Sdma,
                c::QueueKind::Pm4 => {
                    return Err(bad(format!(
                        "queue {} is a PM4 compute queue, which checkpoints do not hold",
                        q.id
                    )));
                }
            };
            let cp_id = d
                .cp()
                .create_queue(
                    &d.gpu_process,
                    QueueDesc {
                        kind,
                        gpu: q.gpu as u32,
                        ring_base: q.ring_base,
                        ring_size: q.ring_size,
                        read_ptr: q.read_ptr,
                        write_ptr: q.write_ptr,
                        doorbell: 0,
                        priority: q.priority,
                    },
                )
                .map_err(|e| bad(format!("queue {}: {e}", q.id)))?;
            p.queues.insert(q.id, Queue { cp_id, gpu: q.gpu });
            p.doorbells.insert((q.gpu, q.doorbell_slot), q.id);
        }
        p.next_queue = st.queues.next_queue;
        drop(p);
        Ok((d, report))
    }
}

impl SimulatedDriver {
    /// Ends the process: threads waiting for its events wake (their wait
    /// fails) and later waits fail; its queues stop. What it allocated is
    /// released when the driver is dropped.
    pub fn shutdown(&self) {
        self.events.shutdown();
        let queues: Vec<u32> = self.proc().queues.drain().map(|(_, q)| q.cp_id).collect();
        if let Some(cp) = self.device.cp.get() {
            for id in queues {
                let _ = cp.destroy_queue(id);
            }
        }
        self.proc().doorbells.clear();
    }
}

impl SimulatedDriver {
    /// An ioctl from a process whose memory `mem` is (pointers inside the
    /// argument structure are followed there).
    pub fn ioctl_from(
        &self,
        dev: DeviceFile,
        request: u64,
        arg: &mut [u8],
        mem: &dyn UserMemory,
    ) -> Result<i32, Errno> {
        let nr = abi::ioc_nr(request);
        let (kind, name, known) = match dev {
            DeviceFile::Kfd => {
                if abi::ioc_type(request) != abi::KFD_TYPE {
                    return Err(Errno::ENOTTY);
                }
                ("kfd", kfd::name(nr), kfd_arg_size(nr))
            }
            DeviceFile::Render { .. } => {
                if abi::ioc_type(request) != abi::DRM_TYPE {
                    return Err(Errno::ENOTTY);
                }
                ("drm", abi::drm::name(nr), 64)
            }
        };
        let mut a = Args::new(arg, known.max(arg.len()));
        let r = match dev {
            DeviceFile::Kfd => self.kfd_ioctl(nr, &mut a, mem),
            DeviceFile::Render { gpu, .. } => {
                match dmabuf::gem_ioctl(&self.device.dmabufs, &self.gem, gpu, nr, &mut a, mem) {
                    Some(r) => r,
                    None => drm::ioctl(
                        &self.device.opts.config.gpus[gpu],
                        self.device.vram_used(gpu),
                        nr,
                        &mut a,
                        mem,
                    ),
                }
            }
        };
        match &r {
            Ok(_) => tracing::debug!("{kind} ioctl {name} (0x{request:x}) -> 0"),
            // Commands from 0x80 on belong to out-of-tree drivers (ROCr probes
            // one); upstream rejects them, so they are not worth a warning.
            Err(e) if name == "unknown" && nr < 0x80 => {
                tracing::warn!(
                    "{kind} ioctl 0x{request:x} (command 0x{nr:02x}) is not implemented -> errno {}",
                    e.0
                )
            }
            Err(e) => tracing::debug!("{kind} ioctl {name} (0x{request:x}) -> errno {}", e.0),
        }
        if r.is_ok() && abi::ioc_reads(request) {
            let n = arg.len();
            arg.copy_from_slice(&a.bytes[..n]);
        }
        r
    }
}

impl Drop for SimulatedDriver {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl Driver for SimulatedDriver {
    fn device_for_path(&self, path: &str) -> Option<DeviceFile> {
        self.device.device_for_path(path)
    }

    fn sysfs_redirect(&self, path: &str) -> Option<PathBuf> {
        self.device.sysfs.redirect(path)
    }

    fn open(&self, _dev: DeviceFile) -> Result<(), Errno> {
        Ok(())
    }

    fn ioctl(&self, dev: DeviceFile, request: u64, arg: &mut [u8]) -> Result<i32, Errno> {
        self.ioctl_from(dev, request, arg, &user::Local)
    }

    fn host_unmapped(&self, addr: u64, len: u64) {
        self.forget_host_range(addr, len);
    }

    fn mmap(&self, dev: DeviceFile, offset: u64, len: u64) -> Result<MapSource, Errno> {
        let (fd, offset) = match dev {
            DeviceFile::Render { .. } => self.mem().render_map(offset, len)?,
            DeviceFile::Kfd => {
                let kind = offset >> kfd::MMAP_TYPE_SHIFT;
                let gpu_id = ((offset >> kfd::MMAP_GPU_ID_SHIFT) & kfd::MMAP_GPU_ID_MASK) as u32;
                let gpu = self.gpu_index(gpu_id)?;
                self.mem().kfd_map(gpu, kind, len)?
            }
        };
        tracing::debug!("mmap {dev:?} -> fd {fd} + 0x{offset:x}");
        Ok(MapSource {
            fd,
            offset,
            close_after: false,
        })
    }
}
