//! Plugins from outside the tree: shared libraries loaded by path that
//! export `rocjitsu_plugin_v1`, the C ABI of `include/rocjitsu_plugin.h`
//! (documented in docs/plugins.md). The structs here mirror the header's;
//! an adapter turns the library's table into a [`Plugin`].

use super::{
    DispatchEnd, DispatchInfo, DispatchObserver, InstEvent, MemEvent, MemKind, Observer, Plugin,
    PluginError, Spec, Wants,
};
use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::Arc;

pub const ABI_VERSION: u32 = 1;
const WANTS_INSTRUCTIONS: u32 = 1;
const WANTS_MEMORY: u32 = 2;

#[repr(C)]
struct DispatchV1 {
    size: u32,
    threads: u32,
    seq: u64,
    kernel: *const c_char,
    target: *const c_char,
    entry: u64,
    grid: [u32; 3],
    block: [u32; 3],
}

#[repr(C)]
struct InstV1 {
    size: u32,
    wave: u32,
    group: [u32; 3],
    family: u32,
    pc: u64,
    exec: u64,
    mnemonic: *const c_char,
    bytes: u32,
    reserved: u32,
}

#[repr(C)]
struct MemV1 {
    size: u32,
    wave: u32,
    group: [u32; 3],
    kind: u32,
    pc: u64,
    exec: u64,
    bytes: u32,
    scalar: u32,
    addr: *const u64,
    space: *const u8,
}

#[repr(C)]
struct EndV1 {
    size: u32,
    faulted: u32,
    instructions: u64,
    waves: u64,
    wall_s: f64,
}

type Ctx = *mut c_void;

/// `rocjitsu_plugin_v1` of the header.
#[repr(C)]
struct TableV1 {
    abi_version: u32,
    size: u32,
    name: *const c_char,
    wants: u32,
    reserved: u32,
    create: Option<unsafe extern "C" fn(*const c_char, *mut c_char, usize) -> Ctx>,
    dispatch: Option<unsafe extern "C" fn(Ctx, *const DispatchV1) -> Ctx>,
    worker: Option<unsafe extern "C" fn(Ctx, u32) -> Ctx>,
    instruction: Option<unsafe extern "C" fn(Ctx, *const InstV1)>,
    memory: Option<unsafe extern "C" fn(Ctx, *const MemV1)>,
    worker_end: Option<unsafe extern "C" fn(Ctx)>,
    dispatch_end: Option<unsafe extern "C" fn(Ctx, *const EndV1)>,
    finish: Option<unsafe extern "C" fn(Ctx)>,
    destroy: Option<unsafe extern "C" fn(Ctx)>,
}

type Entry = unsafe extern "C" fn() -> *const TableV1;

/// Whether a spec names a library rather than a built-in plugin.
pub fn is_path(name: &str) -> bool {
    name.contains('/') || name.ends_with(".so")
}

/// A loaded library and its checked table.
struct Library {
    /// Kept loaded while the table is used.
    _lib: libloading::Library,
    table: *const TableV1,
    name: &'static str,
}

// SAFETY: the table is immutable data of the library, which stays loaded
// while `Library` lives; the header makes the callbacks callable from any
// thread (per-thread worker contexts, per-dispatch contexts).
unsafe impl Send for Library {}
// SAFETY: as for Send: nothing here is mutated after loading.
unsafe impl Sync for Library {}

impl Library {
    fn table(&self) -> &TableV1 {
        // SAFETY: `load` checked the pointer is non-null and the table's
        // size covers every field of TableV1; the library is still loaded.
        unsafe { &*self.table }
    }
}

fn load(path: &str) -> Result<Library, PluginError> {
    let err = |why: String| PluginError::Load {
        path: path.to_string(),
        why,
    };
    // SAFETY: loading runs the library's initialisers; a plugin is code the
    // user chose to run in the emulator's process.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| err(e.to_string()))?;
    // SAFETY: the symbol's type is the header's `rocjitsu_plugin_v1`.
    let entry: libloading::Symbol<Entry> =
        unsafe { lib.get(b"rocjitsu_plugin_v1\0") }.map_err(|e| {
            err(format!(
                "{e} (a plugin exports rocjitsu_plugin_v1, see include/rocjitsu_plugin.h)"
            ))
        })?;
    // SAFETY: calling the plugin's entry point, which takes no arguments.
    let table = unsafe { entry() };
    if table.is_null() {
        return Err(err("rocjitsu_plugin_v1() returned NULL".into()));
    }
    // SAFETY: non-null, and the first two fields are read before anything
    // else so that a table of another layout is refused by its size.
    let (abi, size) = unsafe { ((*table).abi_version, (*table).size) };
    if abi != ABI_VERSION {
        return Err(err(format!(
            "ABI version {abi}; this emulator loads version {ABI_VERSION}"
        )));
    }
    if (size as usize) < std::mem::size_of::<TableV1>() {
        return Err(err(format!(
            "its rocjitsu_plugin_v1 table is {size} bytes, version 1 has {}",
            std::mem::size_of::<TableV1>()
        )));
    }
    // SAFETY: the table is complete (size checked); `name` is NULL or a
    // NUL-terminated string of the library.
    let name = unsafe {
        let n = (*table).name;
        if n.is_null() {
            path.to_string()
        } else {
            CStr::from_ptr(n).to_string_lossy().into_owned()
        }
    };
    Ok(Library {
        _lib: lib,
        table,
        name: Box::leak(name.into_boxed_str()),
    })
}

/// Checks that `spec` names a loadable plugin (the library is unloaded
/// again; its `create` is not called).
pub(crate) fn check(spec: &Spec) -> Result<(), PluginError> {
    load(&spec.name).map(|_| ())
}

/// Loads the plugin `spec` names and creates it with its options.
pub(crate) fn make(spec: &Spec) -> Result<Box<dyn Plugin>, PluginError> {
    let lib = Arc::new(load(&spec.name)?);
    let options = spec
        .options
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let coptions = CString::new(options).map_err(|_| PluginError::Load {
        path: spec.name.clone(),
        why: "an option holds a NUL byte".into(),
    })?;
    let create = lib.table().create.ok_or_else(|| PluginError::Load {
        path: spec.name.clone(),
        why: "its table has no create function".into(),
    })?;
    let mut msg = [0 as c_char; 512];
    // SAFETY: `create` is the plugin's; the options string and the message
    // buffer outlive the call, and the buffer's length is passed.
    let ctx = unsafe { create(coptions.as_ptr(), msg.as_mut_ptr(), msg.len()) };
    if ctx.is_null() {
        msg[msg.len() - 1] = 0;
        // SAFETY: the buffer is NUL-terminated (its last byte was just set).
        let why = unsafe { CStr::from_ptr(msg.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        return Err(PluginError::Load {
            path: spec.name.clone(),
            why: if why.is_empty() {
                "its create function refused the options".into()
            } else {
                why
            },
        });
    }
    Ok(Box::new(External {
        lib,
        ctx: Shared(ctx),
        finished: std::sync::atomic::AtomicBool::new(false),
    }))
}

/// A context pointer of the plugin.
#[derive(Copy, Clone)]
struct Shared(Ctx);
// SAFETY: the header requires plugin and dispatch contexts to be usable
// from any thread; worker contexts are only used on their own thread.
unsafe impl Send for Shared {}
// SAFETY: as for Send.
unsafe impl Sync for Shared {}

struct External {
    lib: Arc<Library>,
    ctx: Shared,
    finished: std::sync::atomic::AtomicBool,
}

impl Plugin for External {
    fn name(&self) -> &'static str {
        self.lib.name
    }

    fn wants(&self) -> Wants {
        let t = self.lib.table();
        Wants {
            instructions: t.wants & WANTS_INSTRUCTIONS != 0 && t.instruction.is_some(),
            memory: t.wants & WANTS_MEMORY != 0 && t.memory.is_some(),
            code: false,
        }
    }

    fn dispatch(&self, d: &DispatchInfo) -> Box<dyn DispatchObserver> {
        let kernel = CString::new(d.kernel.replace('\0', "?")).unwrap_or_default();
        let target = CString::new(d.target.name()).unwrap_or_default();
        let info = DispatchV1 {
            size: std::mem::size_of::<DispatchV1>() as u32,
            threads: d.threads as u32,
            seq: d.seq,
            kernel: kernel.as_ptr(),
            target: target.as_ptr(),
            entry: d.entry,
            grid: d.grid,
            block: d.block,
        };
        let dctx = match self.lib.table().dispatch {
            // SAFETY: the plugin's callback with its context and a struct
            // (and strings) that outlive the call.
            Some(f) => unsafe { f(self.ctx.0, &info) },
            None => std::ptr::null_mut(),
        };
        Box::new(ExtDispatch {
            lib: self.lib.clone(),
            dctx: Shared(dctx),
        })
    }

    fn finish(&self) {
        if self
            .finished
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return;
        }
        if let Some(f) = self.lib.table().finish {
            // SAFETY: the plugin's callback with its own context, once.
            unsafe { f(self.ctx.0) }
        }
    }
}

impl Drop for External {
    fn drop(&mut self) {
        self.finish();
        if let Some(f) = self.lib.table().destroy {
            // SAFETY: the plugin's callback with its own context, once, after
            // every dispatch and finish.
            unsafe { f(self.ctx.0) }
        }
    }
}

struct ExtDispatch {
    lib: Arc<Library>,
    dctx: Shared,
}

impl DispatchObserver for ExtDispatch {
    fn worker(&self, slot: usize) -> Box<dyn Observer + '_> {
        let wctx = match self.lib.table().worker {
            // SAFETY: the plugin's callback with the dispatch's context.
            Some(f) => unsafe { f(self.dctx.0, slot as u32) },
            None => std::ptr::null_mut(),
        };
        Box::new(ExtWorker {
            table: self.lib.table(),
            wctx,
        })
    }

    fn end(self: Box<Self>, e: &DispatchEnd) {
        let end = EndV1 {
            size: std::mem::size_of::<EndV1>() as u32,
            faulted: u32::from(e.error.is_some()),
            instructions: e.instructions,
            waves: e.waves,
            wall_s: e.wall.as_secs_f64(),
        };
        if let Some(f) = self.lib.table().dispatch_end {
            // SAFETY: the plugin's callback with the dispatch's context, after
            // every worker ended; `end` outlives the call.
            unsafe { f(self.dctx.0, &end) }
        }
    }
}

struct ExtWorker<'a> {
    table: &'a TableV1,
    wctx: Ctx,
}

fn kind_code(k: MemKind) -> u32 {
    match k {
        MemKind::Load => 1,
        MemKind::Store => 2,
        MemKind::Atomic => 3,
        MemKind::None => 0,
    }
}

impl Observer for ExtWorker<'_> {
    fn instruction(&mut self, i: &InstEvent) {
        let Some(f) = self.table.instruction else {
            return;
        };
        let name = i.op.name();
        // Mnemonics are static strings without a NUL: pass a terminated copy
        // from a per-thread cache.
        let cname = mnemonic_c(name);
        let ev = InstV1 {
            size: std::mem::size_of::<InstV1>() as u32,
            wave: i.id.wave,
            group: i.id.group,
            family: i.op.class.family as u32,
            pc: i.pc,
            exec: i.exec,
            mnemonic: cname,
            bytes: u32::from(i.op.len),
            reserved: 0,
        };
        // SAFETY: the plugin's callback with this thread's worker context and
        // an event that outlives the call.
        unsafe { f(self.wctx, &ev) }
    }

    fn memory(&mut self, m: &MemEvent) {
        let Some(f) = self.table.memory else {
            return;
        };
        let lanes = m.lanes();
        let space = lanes.space.map(|s| s as u8);
        let ev = MemV1 {
            size: std::mem::size_of::<MemV1>() as u32,
            wave: m.id.wave,
            group: m.id.group,
            kind: kind_code(m.class().mem),
            pc: m.pc,
            exec: m.exec,
            bytes: m.bytes(),
            scalar: u32::from(m.class().seg == super::Seg::Scalar),
            addr: lanes.addr.as_ptr(),
            space: space.as_ptr(),
        };
        // SAFETY: as for `instruction`; the lane arrays outlive the call.
        unsafe { f(self.wctx, &ev) }
    }

    fn finish(self: Box<Self>) {
        if let Some(f) = self.table.worker_end {
            // SAFETY: the plugin's callback with this thread's worker context,
            // once, on the thread that used it.
            unsafe { f(self.wctx) }
        }
    }
}

/// A NUL-terminated copy of a static mnemonic, made once per thread.
fn mnemonic_c(name: &'static str) -> *const c_char {
    thread_local! {
        static NAMES: std::cell::RefCell<std::collections::HashMap<usize, CString>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    NAMES.with(|n| {
        n.borrow_mut()
            .entry(name.as_ptr() as usize)
            .or_insert_with(|| CString::new(name).unwrap_or_default())
            .as_ptr()
    })
}
