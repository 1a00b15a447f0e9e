//! Kernel dispatch per the HSA ABI: the grid is split into workgroups, each
//! workgroup's waves start with the SGPRs and VGPRs the kernel descriptor
//! enables (AMDGPUUsage, "Initial Kernel Execution State"), and workgroups
//! run in parallel on a pool of host threads. The waves of one workgroup
//! run on one thread, interleaved, so barriers and LDS behave as on a
//! compute unit.

use super::engine::{self, Program, Stop};
use super::op::{Ctx, Env, Fault};
use super::wave::{VREGS, Wave, WaveState, sreg};
use crate::mem::{Tlb, Vm};
use crate::plugin::{DispatchEnd, DispatchInfo, Fanout, FaultEvent, GroupEvent, Plugins, WaveId};
use rocjitsu_code::{KernelDescriptor, SgprUse};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What to launch and how.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Kernel name, for reports.
    pub kernel: String,
    /// Address of the kernel's first instruction.
    pub entry: u64,
    pub descriptor: KernelDescriptor,
    /// Workgroups per dimension (HIP's gridDim).
    pub grid: [u32; 3],
    /// Work-items per workgroup.
    pub block: [u32; 3],
    /// Dynamic LDS bytes, added to the descriptor's static size.
    pub dynamic_lds: u32,
    /// GPU address of the kernel arguments.
    pub kernarg: u64,
    /// GPU address of the AQL dispatch packet (for the dispatch pointer).
    pub dispatch_packet: u64,
    /// GPU address of the queue (for the queue pointer).
    pub queue: u64,
    /// Per-work-item private memory in bytes (at least the descriptor's).
    pub private_bytes: u32,
    /// Host threads (0: one per available core).
    pub threads: usize,
    /// Stop the dispatch after this long.
    pub timeout: Option<Duration>,
    /// LDS available to one workgroup on this GPU.
    pub max_lds: u32,
    /// Print this many instructions executed by wave 0 of workgroup
    /// (0, 0, 0) to stderr, with the registers each one changed.
    pub trace: u64,
}

/// Figures of a finished dispatch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Wave-instructions executed.
    pub instructions: u64,
    pub waves: u64,
    pub workgroups: u64,
    pub wall: Duration,
    pub threads: usize,
}

/// Where and why a dispatch stopped.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DispatchError {
    #[error(
        "{fault}\n  kernel:    {kernel}\n  workgroup: ({}, {}, {})\n  wave:      {wave}\n  PC:        0x{pc:x} (kernel entry + 0x{:x})\n  instruction: {inst}",
        group[0], group[1], group[2], pc.wrapping_sub(*entry)
    )]
    Fault {
        kernel: String,
        group: [u32; 3],
        wave: u32,
        pc: u64,
        entry: u64,
        inst: String,
        fault: Fault,
    },
    #[error("kernel {kernel}: the dispatch ran past its timeout of {secs:.1} s and was stopped")]
    Timeout { kernel: String, secs: f64 },
    #[error("kernel {kernel}: {why}")]
    Launch { kernel: String, why: String },
    /// Stopped from outside through [`Extra::cancel`].
    #[error("kernel {kernel}: the dispatch was cancelled")]
    Cancelled { kernel: String },
}

/// Persistent threads a dispatch may run its workers on instead of
/// starting threads of its own.
pub trait Workers: Sync {
    /// Runs `job` on up to `n` threads at once (the caller's among them)
    /// and returns when every instance has returned. The instances share
    /// the dispatch's workgroups, so running fewer is correct, only slower.
    fn run(&self, n: usize, job: &(dyn Fn() + Sync));
}

/// Executable code elsewhere in the GPU's address space: a kernel may call
/// (`s_swappc_b64`) a function of another loaded code object through a
/// pointer (rocFFT's load/store callbacks, a library's device function
/// pointers), as the hardware fetches from any address.
pub trait CodeAt: Sync {
    /// The program holding the code at `pc`, or why there is none.
    fn program_at(&self, vm: &Vm, tlb: &mut Tlb, pc: u64) -> Result<Arc<Program>, String>;
}

/// A callback given each wave's final state ([`Extra::wave_end`]).
pub type WaveEndFn<'a> = dyn Fn(WaveId, &Wave) + Sync + 'a;

/// What a command processor supplies beyond a [`Launch`].
#[derive(Clone, Copy, Default)]
pub struct Extra<'a> {
    /// Work-items per dimension (the AQL packet's grid size) when they need
    /// not be a whole number of workgroups. The grid then has
    /// `ceil(items / block)` workgroups per dimension (which must equal
    /// [`Launch::grid`]), and the last workgroup of a dimension is partial:
    /// it has only the remaining work-items, packed, as the hardware launches
    /// it (COMPUTE_NUM_THREAD_*.NUM_THREAD_PARTIAL).
    pub grid_items: Option<[u64; 3]>,
    /// Another thread sets this to stop the dispatch.
    pub cancel: Option<&'a AtomicBool>,
    /// The packet's dispatch id (the `DispatchId` SGPR pair).
    pub dispatch_id: u64,
    /// Threads to run the workgroups on (else the dispatch starts its own).
    pub workers: Option<&'a dyn Workers>,
    /// Where a wave whose PC leaves the kernel's program finds the code
    /// (else that is a fault).
    pub code: Option<&'a dyn CodeAt>,
    /// Values of the first user SGPRs, written from s0 up before the
    /// descriptor's SGPR layout is applied: a PM4 dispatch's
    /// COMPUTE_USER_DATA_* registers (its descriptor then enables no user
    /// SGPR of its own).
    pub user_sgprs: &'a [u32],
    /// The workgroup id of the grid's first workgroup (a PM4 dispatch's
    /// COMPUTE_START_*): the workgroup-id SGPRs are offset by it.
    pub first_group: [u32; 3],
    /// Execution plugins observing the dispatch.
    pub plugins: Option<&'a Plugins>,
    /// The tier that runs the waves (`None`: as `ROCJITSU_EXEC` says).
    /// With plugins enabled the interpreter runs them.
    pub exec: Option<crate::jit::ExecMode>,
    /// Called with each wave's final state when it ends (`run-kernel
    /// --exec check` compares the tiers' register files with it).
    pub wave_end: Option<&'a WaveEndFn<'a>>,
    /// The GPU (configuration index) running it, as plugins are told.
    pub gpu: u32,
}

impl Extra<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Work-items per dimension of workgroup `group`.
    fn shape(&self, l: &Launch, group: [u32; 3]) -> [u32; 3] {
        match self.grid_items {
            None => l.block,
            Some(items) => std::array::from_fn(|i| {
                let left = items[i].saturating_sub(u64::from(group[i]) * u64::from(l.block[i]));
                left.min(u64::from(l.block[i])) as u32
            }),
        }
    }
}

thread_local! {
    /// A thread's wave states and LDS buffer, kept between dispatches.
    static SPARE: std::cell::RefCell<(Vec<Wave>, Vec<u8>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Instructions a wave runs before the next wave of its workgroup gets a
/// turn (waves that spin on LDS flags need their peers to progress).
const QUANTUM: u64 = 4096;

/// Runs the kernel to completion (or the first fault).
pub fn dispatch(vm: &Vm, env: &Env, prog: &Program, l: &Launch) -> Result<Stats, DispatchError> {
    dispatch_with(vm, env, prog, l, &Extra::default())
}

/// [`dispatch`] with the command processor's [`Extra`] inputs.
pub fn dispatch_with(
    vm: &Vm,
    env: &Env,
    prog: &Program,
    l: &Launch,
    x: &Extra,
) -> Result<Stats, DispatchError> {
    let launch_err = |why: String| DispatchError::Launch {
        kernel: l.kernel.clone(),
        why,
    };
    let items = l.block.iter().map(|&x| u64::from(x)).product::<u64>();
    if items == 0 || items > 1024 {
        return Err(launch_err(format!(
            "a workgroup of {}x{}x{} work-items is not launchable (1 to 1024)",
            l.block[0], l.block[1], l.block[2]
        )));
    }
    if l.grid.contains(&0) {
        return Err(launch_err("the grid has a zero dimension".into()));
    }
    if let Some(items) = x.grid_items {
        for i in 0..3 {
            let (b, g) = (u64::from(l.block[i]), u64::from(l.grid[i]));
            if items[i] == 0 || items[i].div_ceil(b) != g {
                return Err(launch_err(format!(
                    "{} work-items in dimension {i} do not make {g} workgroups of {b}",
                    items[i]
                )));
            }
        }
    }
    let d = &l.descriptor;
    let wave32 = d.kernel_code_properties.enable_wavefront_size32;
    if wave32 && env.target.family() == rocjitsu_isa::Family::Gfx9 {
        return Err(launch_err(format!(
            "a wave32 kernel, but {} runs 64-lane waves only; build it for an RDNA target",
            env.target
        )));
    }
    if wave32 != (prog.wave == rocjitsu_isa::WaveSize::Wave32) {
        return Err(launch_err(format!(
            "a wave{} kernel, but its code was decoded for {}-lane waves (a code object mixing \
             wave32 and wave64 kernels is not supported)",
            if wave32 { 32 } else { 64 },
            prog.wave.lanes()
        )));
    }
    let lanes = if wave32 { 32 } else { 64 };
    let lds = u64::from(d.group_segment_fixed_size) + u64::from(l.dynamic_lds);
    if lds > u64::from(l.max_lds) {
        return Err(launch_err(format!(
            "needs {lds} bytes of LDS ({} static + {} dynamic), more than the {} a workgroup can have",
            d.group_segment_fixed_size, l.dynamic_lds, l.max_lds
        )));
    }
    let mut env = env.clone();
    env.lds_size = lds as u32;
    let groups = l.grid.iter().map(|&x| u64::from(x)).product::<u64>();
    let threads = if l.threads == 0 {
        host_cores()
    } else {
        l.threads
    }
    .clamp(1, groups.min(1024) as usize);

    let start = Instant::now();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let insts = AtomicU64::new(0);
    let waves_run = AtomicU64::new(0);
    let first_error: Mutex<Option<DispatchError>> = Mutex::new(None);
    let preload = preloaded_kernargs(vm, l).map_err(|f| launch_err(f.to_string()))?;
    let active = x.plugins.filter(|p| !p.is_empty()).map(|p| {
        p.begin(DispatchInfo {
            seq: 0,
            kernel: l.kernel.clone(),
            entry: l.entry,
            target: env.target,
            grid: l.grid,
            block: l.block,
            dispatch_id: x.dispatch_id,
            threads,
            gpu: x.gpu,
            start,
            code: p
                .wants()
                .code
                .then(|| crate::plugin::kernel_code(vm, l.entry))
                .flatten(),
        })
    });
    let slots = AtomicUsize::new(0);

    let worker = || {
        let slot = slots.fetch_add(1, Ordering::Relaxed);
        let mut obs = active.as_ref().map(|a| a.worker(slot));
        // Wave state and LDS left by this thread's previous dispatch (a
        // command processor's persistent threads run many): every wave is
        // re-initialised at launch and LDS cleared per workgroup.
        let (mut waves, mut lds_buf) = SPARE.with(|s| std::mem::take(&mut *s.borrow_mut()));
        lds_buf.resize(lds as usize, 0);
        let mut tlb = Tlb::default();
        let mut done = 0u64;
        let mut nwaves = 0u64;
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if x.cancelled() {
                stop.store(true, Ordering::Relaxed);
                let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(DispatchError::Cancelled {
                    kernel: l.kernel.clone(),
                });
                break;
            }
            if l.timeout.is_some_and(|t| start.elapsed() > t) {
                stop.store(true, Ordering::Relaxed);
                let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
                slot.get_or_insert(DispatchError::Timeout {
                    kernel: l.kernel.clone(),
                    secs: l.timeout.map_or(0.0, |t| t.as_secs_f64()),
                });
                break;
            }
            let g = next.fetch_add(1, Ordering::Relaxed);
            if g >= groups {
                break;
            }
            let gx = (g % u64::from(l.grid[0])) as u32;
            let gy = ((g / u64::from(l.grid[0])) % u64::from(l.grid[1])) as u32;
            let gz = (g / (u64::from(l.grid[0]) * u64::from(l.grid[1]))) as u32;
            let group = [gx, gy, gz];
            let shape = x.shape(l, group);
            let waves_per_group = shape.iter().product::<u32>().div_ceil(lanes) as usize;
            nwaves += waves_per_group as u64;
            let r = run_group(
                vm,
                &env,
                prog,
                l,
                x,
                (group, shape),
                waves_per_group,
                &mut waves,
                &mut lds_buf,
                &mut tlb,
                &stop,
                start,
                &preload,
                obs.as_mut().map(|o| (o, slot)),
            );
            match r {
                Ok(n) => done += n,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
                    if slot.is_none() {
                        *slot = Some(e);
                    }
                    break;
                }
            }
        }
        insts.fetch_add(done, Ordering::Relaxed);
        waves_run.fetch_add(nwaves, Ordering::Relaxed);
        SPARE.with(|s| *s.borrow_mut() = (waves, lds_buf));
        if let Some(o) = obs {
            o.finish();
        }
    };
    if threads == 1 {
        worker();
    } else if let Some(w) = x.workers {
        w.run(threads, &worker);
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(worker);
            }
        });
    }
    let error = first_error.into_inner().unwrap_or_else(|e| e.into_inner());
    let stats = Stats {
        instructions: insts.load(Ordering::Relaxed),
        waves: waves_run.load(Ordering::Relaxed),
        workgroups: groups,
        wall: start.elapsed(),
        threads,
    };
    if let Some(a) = active {
        a.end(&DispatchEnd {
            wall: stats.wall,
            instructions: stats.instructions,
            waves: stats.waves,
            workgroups: groups,
            error: error.as_ref().map(|e| e.to_string()),
        });
    }
    match error {
        Some(e) => Err(e),
        None => Ok(stats),
    }
}

/// The host cores this process may use, asked once: the standard library
/// reads the cgroup's CPU quota from sysfs on every call, which costs more
/// than launching a small kernel.
pub fn host_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The kernarg dwords the descriptor asks to preload into SGPRs.
fn preloaded_kernargs(vm: &Vm, l: &Launch) -> Result<Vec<u32>, crate::mem::MemFault> {
    let d = &l.descriptor;
    let n = d.kernarg_preload_spec_length as u64;
    let bytes = vm.read_vec(
        l.kernarg + 4 * u64::from(d.kernarg_preload_spec_offset),
        4 * n,
    )?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Runs one workgroup; returns the wave-instructions it executed.
#[allow(clippy::too_many_arguments)]
fn run_group(
    vm: &Vm,
    env: &Env,
    prog: &Program,
    l: &Launch,
    x: &Extra,
    (group, shape): ([u32; 3], [u32; 3]),
    nwaves: usize,
    waves: &mut Vec<Wave>,
    lds: &mut [u8],
    tlb: &mut Tlb,
    stop: &AtomicBool,
    start: Instant,
    preload: &[u32],
    mut obs: Option<(&mut Fanout, usize)>,
) -> Result<u64, DispatchError> {
    while waves.len() < nwaves {
        waves.push(Wave::new(VREGS));
    }
    lds.fill(0);
    for (i, w) in waves.iter_mut().take(nwaves).enumerate() {
        init_wave(w, prog.target, l, x, (group, shape), i as u32, preload);
        w.wave32 = prog.wave == rocjitsu_isa::WaveSize::Wave32;
    }
    let ge = |slot| GroupEvent {
        group,
        waves: nwaves as u32,
        slot,
    };
    if let Some((o, slot)) = obs.as_mut() {
        o.group_begin(&ge(*slot));
        for i in 0..nwaves {
            o.wave_begin(WaveId {
                group,
                wave: i as u32,
            });
        }
    }
    let mut total = 0;
    // Waves running code of another program than the kernel's (after a
    // call into another code object): wave index -> that program.
    let mut elsewhere: Vec<(usize, Arc<Program>)> = Vec::new();
    loop {
        let mut live = 0;
        let mut at_barrier = 0;
        for (i, w) in waves.iter_mut().take(nwaves).enumerate() {
            if w.state != WaveState::Running {
                live += usize::from(w.state == WaveState::Barrier);
                at_barrier += usize::from(w.state == WaveState::Barrier);
                continue;
            }
            let before = w.insts;
            let cur = elsewhere.iter().position(|(j, _)| *j == i);
            let p: &Program = cur.map_or(prog, |k| &elsewhere[k].1);
            let mut ctx = Ctx {
                wave: w,
                lds,
                vm,
                tlb,
                env,
            };
            let id = WaveId {
                group,
                wave: i as u32,
            };
            let r = if i == 0 && group == [0, 0, 0] && ctx.wave.insts < l.trace {
                trace_step(&mut ctx, p, l.trace)
            } else if let Some((o, _)) = obs.as_mut() {
                engine::run_observed(&mut ctx, p, QUANTUM, id, o)
            } else {
                let mode = x.exec.unwrap_or_else(crate::jit::ExecMode::from_env);
                crate::jit::run(&mut ctx, p, QUANTUM, mode)
            };
            total += w.insts - before;
            match r {
                Ok(Stop::Ended) => {
                    if let Some((o, _)) = obs.as_mut() {
                        o.wave_end(id);
                    }
                    if let Some(f) = x.wave_end {
                        f(id, w);
                    }
                }
                Ok(Stop::Barrier) => {
                    live += 1;
                    at_barrier += 1;
                    if let Some((o, _)) = obs.as_mut() {
                        o.barrier(id);
                    }
                }
                Ok(Stop::Quantum) => live += 1,
                Err((Fault::OutsideCode(pc), _)) if prog.contains(pc) => {
                    // Back in the kernel's own code.
                    if let Some(k) = cur {
                        elsewhere.swap_remove(k);
                    }
                    live += 1;
                }
                Err((fault, pc)) => {
                    let other = match (&fault, x.code) {
                        (Fault::OutsideCode(_), Some(code)) => Some(code.program_at(vm, tlb, pc)),
                        _ => None,
                    };
                    match other {
                        Some(Ok(np)) if np.contains(pc) => {
                            match cur {
                                Some(k) => elsewhere[k].1 = np,
                                None => elsewhere.push((i, np)),
                            }
                            live += 1;
                        }
                        _ => {
                            if let Some((o, _)) = obs.as_mut() {
                                o.fault(&FaultEvent {
                                    id,
                                    pc,
                                    fault: &fault,
                                });
                            }
                            return Err(DispatchError::Fault {
                                kernel: l.kernel.clone(),
                                group,
                                wave: i as u32,
                                pc,
                                entry: l.entry,
                                inst: p.disassemble(pc),
                                fault,
                            });
                        }
                    }
                }
            }
        }
        if live == 0 {
            if let Some((o, slot)) = obs.as_mut() {
                o.group_end(&ge(*slot));
            }
            return Ok(total);
        }
        if at_barrier == live {
            // Every wave still running has reached the barrier (ended
            // waves no longer take part, as on hardware).
            for w in waves.iter_mut().take(nwaves) {
                if w.state == WaveState::Barrier {
                    w.state = WaveState::Running;
                }
            }
            if let Some((o, _)) = obs.as_mut() {
                o.barrier_release(group);
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(total);
        }
        if x.cancelled() {
            return Err(DispatchError::Cancelled {
                kernel: l.kernel.clone(),
            });
        }
        if let Some(t) = l.timeout
            && start.elapsed() > t
        {
            return Err(DispatchError::Timeout {
                kernel: l.kernel.clone(),
                secs: t.as_secs_f64(),
            });
        }
    }
}

/// Runs up to `limit` instructions of a wave one at a time, printing each
/// with the scalar and vector registers (lane 0 .. 3) it changed.
fn trace_step(ctx: &mut Ctx, prog: &Program, limit: u64) -> Result<Stop, (Fault, u64)> {
    let mut stop = Stop::Quantum;
    while ctx.wave.insts < limit && stop == Stop::Quantum {
        let pc = ctx.wave.pc;
        let (s0, v0, scc0) = (ctx.wave.s, ctx.wave.v.clone(), ctx.wave.scc);
        let r = engine::run(ctx, prog, 1);
        let mut line = format!("trace: 0x{:x} {:<48}", pc, prog.disassemble(pc));
        for (i, (a, b)) in s0.iter().zip(ctx.wave.s.iter()).enumerate() {
            if a != b {
                line += &format!(" s{i}=0x{b:x}");
            }
        }
        if scc0 != ctx.wave.scc {
            line += &format!(" scc={}", u8::from(ctx.wave.scc));
        }
        for (i, (a, b)) in v0.iter().zip(ctx.wave.v.iter()).enumerate() {
            if a != b {
                line += &format!(
                    " v{i}=[0x{:x} 0x{:x} 0x{:x} 0x{:x} ..]",
                    b[0], b[1], b[2], b[3]
                );
            }
        }
        eprintln!("{line}");
        stop = r?;
    }
    Ok(stop)
}

/// Sets a wave's launch state: PC, EXEC, MODE, the enabled SGPRs and the
/// work-item IDs in v0. `shape` is the workgroup's work-items per dimension
/// (smaller than the block in a partial workgroup).
fn init_wave(
    w: &mut Wave,
    target: rocjitsu_isa::Target,
    l: &Launch,
    x: &Extra,
    (group, shape): ([u32; 3], [u32; 3]),
    index: u32,
    preload: &[u32],
) {
    let d = &l.descriptor;
    w.s = [0; super::wave::SREGS];
    for (i, &v) in x.user_sgprs.iter().enumerate() {
        w.set_s32(i as u8, v);
    }
    // Zero the registers the kernel allocated, not the whole file: the
    // ArchVGPRs, then the AccVGPRs (from ACCUM_OFFSET in gfx90a's unified
    // file; on gfx908, a file of their own, as many as the ArchVGPRs).
    let total = d.vgpr_count(target) as usize;
    let arch = total.min(256);
    let acc = if target.is_gfx90a_plus() {
        total.saturating_sub(d.accum_offset() as usize).min(256)
    } else {
        arch
    };
    for r in w.v.iter_mut().take(arch.max(3)) {
        *r = [0; 64];
    }
    for r in w.v.iter_mut().skip(256).take(acc) {
        *r = [0; 64];
    }
    w.scc = false;
    w.pc = l.entry;
    w.status = 0;
    w.trapsts = 0;
    w.state = WaveState::Running;
    w.id_in_group = index;
    w.insts = 0;
    let r1 = &d.compute_pgm_rsrc1;
    w.mode = (r1.float_round_mode_32 & 3)
        | (r1.float_round_mode_16_64 & 3) << 2
        | (r1.float_denorm_mode_32 & 3) << 4
        | (r1.float_denorm_mode_16_64 & 3) << 6
        | u32::from(r1.enable_dx10_clamp) << 8
        | u32::from(r1.enable_ieee_mode) << 9;
    // GFX12 has no DX10_CLAMP or IEEE mode bits (the descriptor's bit 21 is
    // WG_RR_EN there, bit 23 reserved): clamping maps NaN to 0 and min/max
    // return the other operand for a NaN (the `_num` operations).
    if target.family() == rocjitsu_isa::Family::Gfx12 {
        w.mode = (w.mode & !(3 << 8)) | 1 << 8;
    }
    w.lane_bytes = l.private_bytes;
    let need = l.private_bytes as usize * 64;
    if w.scratch.len() != need {
        w.scratch = vec![0; need];
    }

    // Work-items of this wave: linear IDs index*n .. +n within the group
    // (n the wave's lanes).
    let n = if d.kernel_code_properties.enable_wavefront_size32 {
        32
    } else {
        64
    };
    let [bx, by, _] = shape;
    let items = shape.iter().product::<u32>();
    let mut exec = 0u64;
    // Packed in v0, or (gfx908) X, Y and Z in v0, v1 and v2 as far as the
    // descriptor enables them.
    let packed = d.workitem_ids_packed(target);
    let dims = d.workitem_id_dims() as usize;
    for lane in 0..n {
        let id = index * n + lane;
        if id < items {
            exec |= 1 << lane;
            let x = id % bx;
            let y = (id / bx) % by;
            let z = id / (bx * by);
            if packed {
                w.v[0][lane as usize] = x | y << 10 | z << 20;
            } else {
                for (k, c) in [x, y, z].into_iter().enumerate().take(dims) {
                    w.v[k][lane as usize] = c;
                }
            }
        }
    }
    w.set_exec(exec);
    // GFX12's architected SGPRs: the workgroup IDs are in TTMP9 (X) and
    // TTMP7 (Y in bits 15:0, Z in 31:16) whatever the descriptor enables,
    // and the wave's index in its workgroup in TTMP8[29:25] (LLVM
    // AMDGPUUsage, "Initial Kernel Execution State"; `llvm.amdgcn.wave.id`).
    if target.family() == rocjitsu_isa::Family::Gfx12 {
        w.set_s32(sreg::TTMP0 + 9, group[0]);
        w.set_s32(sreg::TTMP0 + 7, (group[1] & 0xffff) | group[2] << 16);
        w.set_s32(sreg::TTMP0 + 8, (index & 0x1f) << 25);
    }

    for slot in d.sgpr_layout() {
        let s = slot.first as u8;
        match slot.what {
            SgprUse::PrivateSegmentBuffer => {
                // A V# over the private aperture: base, stride 0, swizzle
                // and ADD_TID enabled, unbounded. Accesses through it are
                // per-lane private memory (see vmem.rs).
                let base = super::wave::Apertures::default().private_base;
                w.set_s32(s, base as u32);
                w.set_s32(s + 1, ((base >> 32) as u32 & 0xffff) | 1 << 31);
                w.set_s32(s + 2, u32::MAX);
                w.set_s32(s + 3, 1 << 23 | 0x27000);
            }
            SgprUse::DispatchPtr => w.set_s64(s, l.dispatch_packet),
            SgprUse::QueuePtr => w.set_s64(s, l.queue),
            SgprUse::KernargSegmentPtr => w.set_s64(s, l.kernarg),
            SgprUse::DispatchId => w.set_s64(s, x.dispatch_id),
            // Flat scratch is an offset into the wave's private memory,
            // which starts at 0 for every wave.
            SgprUse::FlatScratchInit => w.set_s64(s, 0),
            SgprUse::PrivateSegmentSize => w.set_s32(s, l.private_bytes),
            SgprUse::PreloadedKernargs => {
                for (k, &x) in preload.iter().enumerate().take(slot.count as usize) {
                    w.set_s32(s + k as u8, x);
                }
            }
            SgprUse::WorkgroupIdX => w.set_s32(s, group[0].wrapping_add(x.first_group[0])),
            SgprUse::WorkgroupIdY => w.set_s32(s, group[1].wrapping_add(x.first_group[1])),
            SgprUse::WorkgroupIdZ => w.set_s32(s, group[2].wrapping_add(x.first_group[2])),
            SgprUse::WorkgroupInfo => w.set_s32(s, 0),
            SgprUse::PrivateSegmentWaveOffset => w.set_s32(s, 0),
        }
    }
    w.set_s64(sreg::FLAT_SCRATCH, 0);
}
