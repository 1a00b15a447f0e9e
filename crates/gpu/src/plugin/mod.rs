//! Execution plugins: observers of what the VM does, for tools that look
//! inside the GPU (metrics, traces; later hazard, race and coverage
//! checkers).
//!
//! # The observer API
//!
//! A [`Plugin`] is created once per process (from a [`Spec`]: a name and
//! options) and sees every dispatch:
//!
//! * [`Plugin::dispatch`] when a dispatch starts, returning the plugin's
//!   per-dispatch state, a [`DispatchObserver`];
//! * [`DispatchObserver::worker`] once for each host thread that runs
//!   workgroups of the dispatch, returning an [`Observer`] owned by that
//!   thread: it receives workgroup, wave, instruction, memory, barrier and
//!   fault events through `&mut self`, so counting needs no lock and no
//!   atomic; [`Observer::finish`] runs when the thread leaves the dispatch
//!   (merge the thread's figures into the dispatch's there);
//! * [`DispatchObserver::end`] after every thread has finished;
//! * [`Plugin::finish`] when the process is done with the GPU (summaries).
//!
//! Events are delivered before the instruction executes: an
//! [`InstEvent`] shows the wave's state (EXEC, registers, PC) as the
//! instruction finds it, and a [`MemEvent`] computes the per-lane
//! addresses from it on demand ([`MemEvent::lanes`]).
//!
//! A plugin says which events it needs ([`Wants`]); the dispatcher takes
//! the plain interpreter loop ([`crate::exec::engine::run`]) when no plugin
//! is enabled, and the observed loop only when one is: no plugin, no cost.
//!
//! Later plugins: a hazard checker reads each instruction's operands from
//! [`InstEvent::op`] (lowered register indices, [`crate::exec::Op::src`],
//! `vdst`, `sdst`) and the wait counts from the `s_waitcnt` instructions it
//! sees; a race detector takes [`MemEvent::lanes`] with the
//! [`WaveId`] (workgroup, wave) and the barrier events.
//!
//! # Output
//!
//! A plugin writes to stderr, or into the directory given by
//! `--plugin-out` / `ROCJITSU_PLUGIN_OUT` ([`Output`]); records in JSON Lines
//! carry `"schema": "rocjitsu.plugin.v1"` ([`SCHEMA`]); the record types
//! are listed in docs/plugins.md.

pub mod class;
pub mod coverage;
pub mod external;
pub mod hazards;
pub mod metrics;
pub mod races;
pub mod trace;

pub use class::{Class, Family, MemKind, Seg};

use crate::exec::op::{Ctx, Fault, Op};
use crate::exec::wave::Wave;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The version tag of every JSON record a built-in plugin writes.
pub const SCHEMA: &str = "rocjitsu.plugin.v1";

/// The events a plugin needs delivered.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Wants {
    /// Every executed instruction.
    pub instructions: bool,
    /// Every memory instruction ([`MemEvent`]).
    pub memory: bool,
    /// The kernel's code and symbol ([`DispatchInfo::code`]).
    pub code: bool,
}

impl Wants {
    fn union(self, o: Wants) -> Wants {
        Wants {
            instructions: self.instructions || o.instructions,
            memory: self.memory || o.memory,
            code: self.code || o.code,
        }
    }
}

/// A kernel's code as its code object has it: the function symbol's bytes
/// and where the code object (its ELF virtual address 0) is loaded.
#[derive(Clone, Debug)]
pub struct KernelCode {
    /// The GPU address of the code object's virtual address 0: a PC minus
    /// this is the address `llvm-objdump` shows.
    pub image_base: u64,
    pub symbol: String,
    /// The symbol's bytes (`st_size` of them, from the entry).
    pub bytes: Vec<u8>,
}

/// The code of the kernel at `entry`, when its code object's dynamic
/// symbols can be read from GPU memory (as the runtime and `run-kernel`
/// load code objects).
pub(crate) fn kernel_code(vm: &crate::mem::Vm, entry: u64) -> Option<Arc<KernelCode>> {
    let (image_base, symbol, size) = crate::cp::names::entry_symbol(vm, entry)?;
    let bytes = vm.read_vec(entry, size.min(64 << 20)).ok()?;
    Some(Arc::new(KernelCode {
        image_base,
        symbol,
        bytes,
    }))
}

/// A dispatch as plugins see it.
#[derive(Clone, Debug)]
pub struct DispatchInfo {
    /// Dispatches seen by this plugin set so far (0 for the first).
    pub seq: u64,
    pub kernel: String,
    /// Address of the kernel's first instruction.
    pub entry: u64,
    pub target: rocjitsu_isa::Target,
    /// Workgroups per dimension.
    pub grid: [u32; 3],
    /// Work-items per workgroup.
    pub block: [u32; 3],
    /// The packet's dispatch id.
    pub dispatch_id: u64,
    /// Host threads the dispatch runs on.
    pub threads: usize,
    /// The GPU (index in the configuration) whose queue dispatched it.
    pub gpu: u32,
    /// When it started.
    pub start: Instant,
    /// The kernel's code, when a plugin wants it ([`Wants::code`]) and it
    /// can be read.
    pub code: Option<Arc<KernelCode>>,
}

/// How a dispatch ended.
#[derive(Clone, Debug)]
pub struct DispatchEnd {
    pub wall: Duration,
    /// Wave-instructions executed.
    pub instructions: u64,
    pub waves: u64,
    pub workgroups: u64,
    /// The fault or stop, if it did not complete.
    pub error: Option<String>,
}

/// Which wave an event is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WaveId {
    /// Workgroup id (without the dispatch's first-group offset).
    pub group: [u32; 3],
    /// Wave index in the workgroup.
    pub wave: u32,
}

/// A workgroup starting or ending on a host thread.
#[derive(Copy, Clone, Debug)]
pub struct GroupEvent {
    pub group: [u32; 3],
    /// Waves in it.
    pub waves: u32,
    /// The host thread's slot in the dispatch (0 ..
    /// [`DispatchInfo::threads`]), the "CU slot" it runs on.
    pub slot: usize,
}

/// An instruction about to execute.
pub struct InstEvent<'a> {
    pub id: WaveId,
    pub pc: u64,
    /// The lowered instruction: [`Op::class`], [`Op::inst`] (the decoded
    /// instruction), operands.
    pub op: &'a Op,
    pub exec: u64,
    /// The wave's state before the instruction.
    pub wave: &'a Wave,
}

/// A memory instruction about to execute.
pub struct MemEvent<'a> {
    pub id: WaveId,
    pub pc: u64,
    pub op: &'a Op,
    pub exec: u64,
    ctx: &'a Ctx<'a>,
}

/// Where a lane's access goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Global,
    Lds,
    /// Private memory (scratch).
    Scratch,
    Gds,
}

impl Space {
    pub const ALL: [Space; 4] = [Space::Global, Space::Lds, Space::Scratch, Space::Gds];

    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Lds => "lds",
            Space::Scratch => "scratch",
            Space::Gds => "gds",
        }
    }
}

/// The per-lane addresses of a memory instruction: a global (virtual)
/// address, an LDS offset, or an offset in the lane's private memory.
pub struct Lanes {
    pub addr: [u64; 64],
    pub space: [Space; 64],
}

impl MemEvent<'_> {
    pub fn class(&self) -> Class {
        self.op.class
    }

    /// Bytes per active lane (per wave for SMEM).
    pub fn bytes(&self) -> u32 {
        u32::from(self.op.class.bytes)
    }

    /// The addresses each lane accesses (for SMEM, lane 0 holds the wave's
    /// one address; for the `ds_*2*` forms, the first element's address).
    /// Only lanes active in [`MemEvent::exec`] are meaningful.
    pub fn lanes(&self) -> Lanes {
        let c = &self.op.class;
        let (addr, space) = match c.seg {
            Seg::Lds | Seg::Gds => (
                crate::exec::lds::lane_addresses(self.ctx, self.op),
                if c.seg == Seg::Gds {
                    Space::Gds
                } else {
                    Space::Lds
                },
            ),
            Seg::Scalar => {
                let mut a = [0; 64];
                a[0] = crate::exec::smem::address(self.ctx, self.op);
                (a, Space::Global)
            }
            Seg::Flat | Seg::Global | Seg::Scratch | Seg::Buffer | Seg::Image => {
                return crate::exec::vmem::lane_addresses(self.ctx, self.op);
            }
        };
        Lanes {
            addr,
            space: [space; 64],
        }
    }

    /// Bytes this instruction accesses per space: per active lane, a flat
    /// instruction's lanes by aperture and a buffer's by resource.
    pub fn bytes_by_space(&self) -> [u64; 4] {
        let c = &self.op.class;
        let b = u64::from(c.bytes);
        let lanes = u64::from(self.exec.count_ones());
        let mut out = [0; 4];
        match c.seg {
            Seg::Global => out[0] = b * lanes,
            Seg::Scalar => out[0] = b,
            Seg::Lds => out[1] = b * lanes,
            Seg::Scratch => out[2] = b * lanes,
            Seg::Gds => out[3] = b * lanes,
            Seg::Flat | Seg::Buffer | Seg::Image => {
                if self.exec != 0 {
                    let l = self.lanes();
                    for i in 0..64 {
                        if self.exec >> i & 1 != 0 {
                            out[l.space[i] as usize] += b;
                        }
                    }
                }
            }
        }
        out
    }
}

/// A wave that faulted (the dispatch then stops).
pub struct FaultEvent<'a> {
    pub id: WaveId,
    pub pc: u64,
    pub fault: &'a Fault,
}

/// A host thread's view of one dispatch. Every method has a default that
/// does nothing.
pub trait Observer {
    fn group_begin(&mut self, _g: &GroupEvent) {}
    fn group_end(&mut self, _g: &GroupEvent) {}
    fn wave_begin(&mut self, _w: WaveId) {}
    /// A wave ended (`s_endpgm`).
    fn wave_end(&mut self, _w: WaveId) {}
    fn instruction(&mut self, _i: &InstEvent) {}
    fn memory(&mut self, _m: &MemEvent) {}
    /// A wave reached `s_barrier` and waits.
    fn barrier(&mut self, _w: WaveId) {}
    /// Every live wave of the workgroup reached the barrier; they go on.
    fn barrier_release(&mut self, _group: [u32; 3]) {}
    fn fault(&mut self, _f: &FaultEvent) {}
    /// The thread leaves the dispatch.
    fn finish(self: Box<Self>) {}
}

/// A plugin's state for one dispatch, shared by the threads running it.
pub trait DispatchObserver: Send + Sync {
    /// The observer of the host thread in `slot`.
    fn worker(&self, slot: usize) -> Box<dyn Observer + '_>;
    /// Every thread has finished.
    fn end(self: Box<Self>, end: &DispatchEnd);
}

/// An execution plugin.
pub trait Plugin: Send + Sync {
    fn name(&self) -> &'static str;
    fn wants(&self) -> Wants;
    /// A dispatch starts.
    fn dispatch(&self, d: &DispatchInfo) -> Box<dyn DispatchObserver>;
    /// The process is done with the GPU: print or write the summary.
    fn finish(&self) {}
}

/// A plugin to enable: `NAME[:key=value,...]` on the command line and in
/// `ROCJITSU_PLUGINS` (several separated by `;`), or an entry of a
/// configuration's `plugins` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub name: String,
    pub options: BTreeMap<String, String>,
    /// An unknown name is an error (else a warning and the plugin is left
    /// out).
    pub require: bool,
}

impl Spec {
    /// Parses `NAME[:key=value,...]`; NAME is a built-in plugin or the
    /// path of a plugin library (`dir/libfoo.so[:key=value,...]`).
    pub fn parse(s: &str) -> Result<Spec, PluginError> {
        let (name, opts) = match s.split_once(".so:") {
            Some((lib, opts)) if !lib.contains(',') => (&s[..lib.len() + 3], opts),
            _ if s.ends_with(".so") => (s, ""),
            _ => s.split_once(':').unwrap_or((s, "")),
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(PluginError::Syntax(s.to_string()));
        }
        let mut options = BTreeMap::new();
        for kv in opts.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| PluginError::Syntax(s.to_string()))?;
            options.insert(k.trim().to_string(), v.trim().to_string());
        }
        Ok(Spec {
            name: name.to_string(),
            options,
            require: true,
        })
    }

    /// Parses a `;`-separated list (`ROCJITSU_PLUGINS`).
    pub fn parse_list(s: &str) -> Result<Vec<Spec>, PluginError> {
        s.split(';')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(Spec::parse)
            .collect()
    }

    fn from_config(c: &rocjitsu_config::PluginConfig) -> Spec {
        Spec {
            name: c.name.clone(),
            options: c
                .options
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::String(s) => s.clone(),
                        v => v.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect(),
            require: c.require,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PluginError {
    #[error("no plugin named `{name}`; available: {}", available())]
    Unknown { name: String },
    #[error("plugin {plugin}: unknown option `{key}`; it takes: {takes}")]
    Option {
        plugin: &'static str,
        key: String,
        takes: &'static str,
    },
    #[error("plugin {plugin}: option {key}={value}: {why}")]
    Value {
        plugin: &'static str,
        key: String,
        value: String,
        why: &'static str,
    },
    #[error("`{0}` is not a plugin spec: expected NAME or NAME:key=value,...")]
    Syntax(String),
    #[error("plugin {plugin}: {why}")]
    Output { plugin: &'static str, why: String },
    #[error("plugin library {path}: {why}")]
    Load { path: String, why: String },
}

/// One built-in plugin: its name, a one-line description, its options and
/// its constructor.
pub struct Builtin {
    pub name: &'static str,
    pub about: &'static str,
    /// `key=values (default)` list, for help and errors.
    pub options: &'static str,
    make: Make,
    check: fn(&Spec) -> Result<(), PluginError>,
}

/// A built-in plugin's constructor.
type Make = fn(&Spec, &Output) -> Result<Box<dyn Plugin>, PluginError>;

/// The plugins built into the emulator.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "metrics",
        about: "per dispatch: waves, wave-instructions by family, bytes per space, active lanes, wave-instructions/s; a summary table at exit",
        options: metrics::OPTIONS,
        make: metrics::make,
        check: metrics::check,
    },
    Builtin {
        name: "coverage",
        about: "per kernel, the llvm-objdump listing with each instruction's execution count, and the instructions and basic blocks executed",
        options: coverage::OPTIONS,
        make: coverage::make,
        check: coverage::check,
    },
    Builtin {
        name: "hazards",
        about: "missing waits (registers used before the counters prove their loads complete, LDS writes in flight at a barrier) and the wait-state hazards of the target, each with kernel, PC, instruction, register and producer",
        options: hazards::OPTIONS,
        make: hazards::make,
        check: hazards::check,
    },
    Builtin {
        name: "races",
        about: "LDS and global accesses to the same bytes, one a write, by waves of a workgroup with no barrier between them, and global ones by different workgroups (atomics with atomics excepted)",
        options: races::OPTIONS,
        make: races::make,
        check: races::check,
    },
    Builtin {
        name: "trace",
        about: "a Chrome/Perfetto trace (JSON trace events) of dispatches, workgroups per host-thread slot and waves over host time",
        options: trace::OPTIONS,
        make: trace::make,
        check: trace::check,
    },
];

fn available() -> String {
    BUILTINS
        .iter()
        .map(|b| b.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where plugins write.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// A directory for the plugins' files; stderr (and, for files that must
    /// exist, the current directory) without one.
    pub dir: Option<PathBuf>,
}

impl Output {
    /// `DIR/<plugin>-<pid>.<ext>` (the process id keeps the files of
    /// several programs apart), or stderr without a directory.
    pub fn open(&self, plugin: &'static str, ext: &str) -> Result<Sink, PluginError> {
        match &self.dir {
            None => Ok(Sink::Stderr),
            Some(d) => self.file_in(d, plugin, ext).map(|(f, p)| Sink::File(f, p)),
        }
    }

    /// A file even without a directory (then in the current directory).
    pub fn file(
        &self,
        plugin: &'static str,
        ext: &str,
    ) -> Result<(std::fs::File, PathBuf), PluginError> {
        let d = self.dir.clone().unwrap_or_else(|| PathBuf::from("."));
        self.file_in(&d, plugin, ext)
    }

    fn file_in(
        &self,
        d: &std::path::Path,
        plugin: &'static str,
        ext: &str,
    ) -> Result<(std::fs::File, PathBuf), PluginError> {
        let err = |why: String| PluginError::Output { plugin, why };
        std::fs::create_dir_all(d)
            .map_err(|e| err(format!("cannot create {}: {e}", d.display())))?;
        let p = d.join(format!("{plugin}-{}.{ext}", std::process::id()));
        let f = std::fs::File::create(&p)
            .map_err(|e| err(format!("cannot create {}: {e}", p.display())))?;
        Ok((f, p))
    }
}

/// A stream a plugin writes lines to.
pub enum Sink {
    Stderr,
    File(std::fs::File, PathBuf),
}

impl Sink {
    /// Writes `text` (whole lines); errors are logged, not fatal: a tool
    /// must not stop the program it observes.
    pub fn write(&mut self, text: &str) {
        let r = match self {
            Sink::Stderr => std::io::stderr().lock().write_all(text.as_bytes()),
            Sink::File(f, _) => f.write_all(text.as_bytes()),
        };
        if let Err(e) = r {
            tracing::warn!("plugin output: {e}");
        }
    }
}

/// The enabled plugins of one process (or one `run-kernel`).
pub struct Plugins {
    list: Vec<Box<dyn Plugin>>,
    wants: Wants,
    seq: std::sync::atomic::AtomicU64,
    finished: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.list.iter().map(|p| p.name()))
            .finish()
    }
}

impl Plugins {
    /// The plugins `specs` name, writing to `out`. An unknown name fails
    /// when the spec requires it, else it is left out with a warning.
    pub fn new(specs: &[Spec], out: &Output) -> Result<Plugins, PluginError> {
        let mut list = Vec::new();
        for s in specs {
            match BUILTINS.iter().find(|b| b.name == s.name) {
                Some(b) => list.push((b.make)(s, out)?),
                None if external::is_path(&s.name) => list.push(external::make(s)?),
                None if s.require => {
                    return Err(PluginError::Unknown {
                        name: s.name.clone(),
                    });
                }
                None => tracing::warn!(
                    "{}; left out",
                    PluginError::Unknown {
                        name: s.name.clone()
                    }
                ),
            }
        }
        Ok(Plugins::of(list))
    }

    /// Checks specs (names, options) without creating any plugin or file.
    pub fn check(specs: &[Spec]) -> Result<(), PluginError> {
        for s in specs {
            match BUILTINS.iter().find(|b| b.name == s.name) {
                Some(b) => (b.check)(s)?,
                None if external::is_path(&s.name) => external::check(s)?,
                None if s.require => {
                    return Err(PluginError::Unknown {
                        name: s.name.clone(),
                    });
                }
                None => {}
            }
        }
        Ok(())
    }

    /// A set of plugin objects (tests, tools embedding the VM).
    pub fn of(list: Vec<Box<dyn Plugin>>) -> Plugins {
        // Timestamps count from here: an instant taken before the epoch
        // was fixed would read as 0.
        epoch();
        let wants = list
            .iter()
            .fold(Wants::default(), |w, p| w.union(p.wants()));
        Plugins {
            list,
            wants,
            seq: Default::default(),
            finished: Default::default(),
        }
    }

    /// The plugins of an emulated system: its configuration's `plugins`
    /// block, then `ROCJITSU_PLUGINS`, writing to `ROCJITSU_PLUGIN_OUT`;
    /// `None` when neither enables one.
    pub fn from_config_and_env(
        config: &[rocjitsu_config::PluginConfig],
    ) -> Result<Option<Plugins>, PluginError> {
        let mut specs: Vec<Spec> = config.iter().map(Spec::from_config).collect();
        if let Ok(v) = std::env::var(rocjitsu_config::env::PLUGINS) {
            specs.extend(Spec::parse_list(&v)?);
        }
        if specs.is_empty() {
            return Ok(None);
        }
        let out = Output {
            dir: std::env::var_os(rocjitsu_config::env::PLUGIN_OUT)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
        };
        Plugins::new(&specs, &out).map(Some)
    }

    /// These plugins and `more` (plugin objects an embedder adds, e.g. a
    /// publisher of live counters).
    pub fn with(mut self, more: Vec<Box<dyn Plugin>>) -> Plugins {
        let mut list = std::mem::take(&mut self.list);
        list.extend(more);
        Plugins::of(list)
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.list.iter().map(|p| p.name()).collect()
    }

    pub fn wants(&self) -> Wants {
        self.wants
    }

    /// A dispatch starts: the plugins' per-dispatch states.
    pub(crate) fn begin(&self, mut d: DispatchInfo) -> Active {
        d.seq = self.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Active {
            list: self.list.iter().map(|p| p.dispatch(&d)).collect(),
            wants: self.wants,
        }
    }

    /// Summaries (once; later calls do nothing).
    pub fn finish(&self) {
        if !self
            .finished
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            for p in &self.list {
                p.finish();
            }
        }
    }
}

impl Drop for Plugins {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The plugins' states of a running dispatch.
pub(crate) struct Active {
    list: Vec<Box<dyn DispatchObserver>>,
    pub wants: Wants,
}

impl Active {
    /// The observers of the thread in `slot`.
    pub fn worker(&self, slot: usize) -> Fanout<'_> {
        Fanout {
            list: self.list.iter().map(|d| d.worker(slot)).collect(),
            wants: self.wants,
        }
    }

    pub fn end(self, end: &DispatchEnd) {
        for d in self.list {
            d.end(end);
        }
    }
}

/// Every enabled plugin's observer of one thread, as one.
pub(crate) struct Fanout<'a> {
    list: Vec<Box<dyn Observer + 'a>>,
    pub wants: Wants,
}

impl Fanout<'_> {
    pub fn group_begin(&mut self, g: &GroupEvent) {
        for o in &mut self.list {
            o.group_begin(g);
        }
    }
    pub fn group_end(&mut self, g: &GroupEvent) {
        for o in &mut self.list {
            o.group_end(g);
        }
    }
    pub fn wave_begin(&mut self, w: WaveId) {
        for o in &mut self.list {
            o.wave_begin(w);
        }
    }
    pub fn wave_end(&mut self, w: WaveId) {
        for o in &mut self.list {
            o.wave_end(w);
        }
    }
    #[inline]
    pub fn instruction(&mut self, i: &InstEvent) {
        for o in &mut self.list {
            o.instruction(i);
        }
    }
    #[inline]
    pub fn memory(&mut self, id: WaveId, pc: u64, op: &Op, ctx: &Ctx) {
        let m = MemEvent {
            id,
            pc,
            op,
            exec: ctx.wave.exec(),
            ctx,
        };
        for o in &mut self.list {
            o.memory(&m);
        }
    }
    pub fn barrier(&mut self, w: WaveId) {
        for o in &mut self.list {
            o.barrier(w);
        }
    }
    pub fn barrier_release(&mut self, g: [u32; 3]) {
        for o in &mut self.list {
            o.barrier_release(g);
        }
    }
    pub fn fault(&mut self, f: &FaultEvent) {
        for o in &mut self.list {
            o.fault(f);
        }
    }
    pub fn finish(self) {
        for o in self.list {
            o.finish();
        }
    }
}

/// The host-time origin of the plugins' timestamps (the first use).
pub fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Microseconds from [`epoch`] to `t`.
pub fn micros(t: Instant) -> f64 {
    t.saturating_duration_since(epoch()).as_secs_f64() * 1e6
}

/// The output format of a plugin that writes reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Text,
    Jsonl,
}

impl Format {
    /// The file extension of this format's output file.
    pub(crate) fn ext(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Jsonl => "jsonl",
        }
    }
}

/// A built-in plugin's options, read key by key: each getter takes its key
/// (or the default when absent) and checks its value; [`Options::finish`]
/// refuses any key no getter took.
pub(crate) struct Options<'a> {
    plugin: &'static str,
    takes: &'static str,
    spec: &'a Spec,
    taken: BTreeSet<&'static str>,
}

impl<'a> Options<'a> {
    /// `takes` is the plugin's `key=values (default)` list, for errors.
    pub(crate) fn new(plugin: &'static str, takes: &'static str, spec: &'a Spec) -> Self {
        Options {
            plugin,
            takes,
            spec,
            taken: BTreeSet::new(),
        }
    }

    fn take(&mut self, key: &'static str) -> Option<&'a str> {
        self.taken.insert(key);
        self.spec.options.get(key).map(String::as_str)
    }

    fn bad(&self, key: &str, value: &str, why: &'static str) -> PluginError {
        PluginError::Value {
            plugin: self.plugin,
            key: key.to_string(),
            value: value.to_string(),
            why,
        }
    }

    /// `format=text|jsonl` (`json` is taken for `jsonl`), default text.
    pub(crate) fn format(&mut self) -> Result<Format, PluginError> {
        match self.take("format") {
            None | Some("text") => Ok(Format::Text),
            Some("jsonl" | "json") => Ok(Format::Jsonl),
            Some(v) => Err(self.bad("format", v, "expected text or jsonl")),
        }
    }

    /// A boolean option (`true/false`, `1/0`, `yes/no`, `on/off`).
    pub(crate) fn bool(&mut self, key: &'static str, default: bool) -> Result<bool, PluginError> {
        match self.take(key) {
            None => Ok(default),
            Some("1" | "true" | "yes" | "on") => Ok(true),
            Some("0" | "false" | "no" | "off") => Ok(false),
            Some(v) => Err(self.bad(key, v, "expected true or false")),
        }
    }

    /// A non-negative count.
    pub(crate) fn count(
        &mut self,
        key: &'static str,
        default: usize,
    ) -> Result<usize, PluginError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| self.bad(key, v, "expected a count")),
        }
    }

    /// Refuses the first option (in key order) that no getter took.
    pub(crate) fn finish(self) -> Result<(), PluginError> {
        match self
            .spec
            .options
            .keys()
            .find(|k| !self.taken.contains(k.as_str()))
        {
            Some(k) => Err(PluginError::Option {
                plugin: self.plugin,
                key: k.clone(),
                takes: self.takes,
            }),
            None => Ok(()),
        }
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
