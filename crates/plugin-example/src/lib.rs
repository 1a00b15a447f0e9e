//! An example of an execution plugin built outside the emulator: a shared
//! library exporting `rocjitsu_plugin_v1`, the C ABI of
//! `crates/gpu/include/rocjitsu_plugin.h`. It depends on nothing of the
//! emulator; the structs below mirror the header.
//!
//! It counts wave-instructions per family and the bytes each kind of memory
//! instruction moves (bytes per lane times active lanes), per process, and
//! at exit writes one JSON line to the file of its `out=PATH` option (else
//! stderr):
//!
//! ```text
//! {"plugin":"count","dispatches":1,"instructions":1040,"families":[...12 counts...],"bytes":{"load":..,"store":..,"atomic":..}}
//! ```
//!
//! Use: `rocjitsu run-kernel ... --plugin target/release/librocjitsu_plugin_example.so:out=/tmp/count.json`.

use std::ffi::{CStr, c_char, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

const ABI_VERSION: u32 = 1;
const WANTS_INSTRUCTIONS: u32 = 1;
const WANTS_MEMORY: u32 = 2;
const FAMILIES: usize = 12;

#[repr(C)]
pub struct Dispatch {
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
pub struct Inst {
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
pub struct Mem {
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
pub struct End {
    size: u32,
    faulted: u32,
    instructions: u64,
    waves: u64,
    wall_s: f64,
}

type Ctx = *mut c_void;

#[repr(C)]
pub struct Table {
    abi_version: u32,
    size: u32,
    name: *const c_char,
    wants: u32,
    reserved: u32,
    create: Option<unsafe extern "C" fn(*const c_char, *mut c_char, usize) -> Ctx>,
    dispatch: Option<unsafe extern "C" fn(Ctx, *const Dispatch) -> Ctx>,
    worker: Option<unsafe extern "C" fn(Ctx, u32) -> Ctx>,
    instruction: Option<unsafe extern "C" fn(Ctx, *const Inst)>,
    memory: Option<unsafe extern "C" fn(Ctx, *const Mem)>,
    worker_end: Option<unsafe extern "C" fn(Ctx)>,
    dispatch_end: Option<unsafe extern "C" fn(Ctx, *const End)>,
    finish: Option<unsafe extern "C" fn(Ctx)>,
    destroy: Option<unsafe extern "C" fn(Ctx)>,
}

/// The process-wide state: totals merged from the workers.
struct Plugin {
    out: Option<String>,
    dispatches: AtomicU64,
    totals: Mutex<Counts>,
}

#[derive(Default, Clone)]
struct Counts {
    families: [u64; FAMILIES],
    /// Bytes of loads, stores and atomics.
    bytes: [u64; 3],
}

/// A host thread's counts for one dispatch.
struct Worker {
    plugin: *const Plugin,
    counts: Counts,
}

/// Writes `msg` into the emulator's error buffer.
fn set_err(err: *mut c_char, len: usize, msg: &str) {
    if err.is_null() || len == 0 {
        return;
    }
    let n = msg.len().min(len - 1);
    // SAFETY: the emulator passes a buffer of `len` bytes; n + 1 <= len.
    unsafe {
        std::ptr::copy_nonoverlapping(msg.as_ptr().cast::<c_char>(), err, n);
        *err.add(n) = 0;
    }
}

unsafe extern "C" fn create(options: *const c_char, err: *mut c_char, len: usize) -> Ctx {
    // SAFETY: the emulator passes a NUL-terminated string.
    let opts = unsafe { CStr::from_ptr(options) }
        .to_string_lossy()
        .into_owned();
    let mut out = None;
    for kv in opts.split(',').filter(|s| !s.is_empty()) {
        match kv.split_once('=') {
            Some(("out", v)) => out = Some(v.to_string()),
            _ => {
                set_err(
                    err,
                    len,
                    &format!("unknown option `{kv}`; it takes out=PATH"),
                );
                return std::ptr::null_mut();
            }
        }
    }
    Box::into_raw(Box::new(Plugin {
        out,
        dispatches: AtomicU64::new(0),
        totals: Mutex::new(Counts::default()),
    }))
    .cast()
}

unsafe extern "C" fn dispatch(plugin: Ctx, _d: *const Dispatch) -> Ctx {
    // SAFETY: `plugin` is the context `create` returned.
    let p = unsafe { &*plugin.cast::<Plugin>() };
    p.dispatches.fetch_add(1, Ordering::Relaxed);
    plugin
}

unsafe extern "C" fn worker(dispatch: Ctx, _slot: u32) -> Ctx {
    Box::into_raw(Box::new(Worker {
        plugin: dispatch.cast::<Plugin>(),
        counts: Counts::default(),
    }))
    .cast()
}

unsafe extern "C" fn instruction(worker: Ctx, i: *const Inst) {
    // SAFETY: `worker` is this thread's context from `worker`; `i` is valid
    // during the call.
    let (w, i) = unsafe { (&mut *worker.cast::<Worker>(), &*i) };
    if let Some(c) = w.counts.families.get_mut(i.family as usize) {
        *c += 1;
    }
}

unsafe extern "C" fn memory(worker: Ctx, m: *const Mem) {
    // SAFETY: as for `instruction`.
    let (w, m) = unsafe { (&mut *worker.cast::<Worker>(), &*m) };
    let lanes = if m.scalar != 0 {
        1
    } else {
        u64::from(m.exec.count_ones())
    };
    if let Some(b) = (m.kind as usize)
        .checked_sub(1)
        .and_then(|k| w.counts.bytes.get_mut(k))
    {
        *b += u64::from(m.bytes) * lanes;
    }
}

unsafe extern "C" fn worker_end(worker: Ctx) {
    // SAFETY: `worker` came from Box::into_raw in `worker` and is ended once.
    let w = unsafe { Box::from_raw(worker.cast::<Worker>()) };
    // SAFETY: the plugin context outlives its dispatches' workers.
    let p = unsafe { &*w.plugin };
    let mut t = p.totals.lock().unwrap_or_else(|e| e.into_inner());
    for (a, b) in t.families.iter_mut().zip(w.counts.families) {
        *a += b;
    }
    for (a, b) in t.bytes.iter_mut().zip(w.counts.bytes) {
        *a += b;
    }
}

unsafe extern "C" fn finish(plugin: Ctx) {
    // SAFETY: `plugin` is the context `create` returned.
    let p = unsafe { &*plugin.cast::<Plugin>() };
    let t = p.totals.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let fams: Vec<String> = t.families.iter().map(u64::to_string).collect();
    let line = format!(
        "{{\"plugin\":\"count\",\"dispatches\":{},\"instructions\":{},\"families\":[{}],\"bytes\":{{\"load\":{},\"store\":{},\"atomic\":{}}}}}\n",
        p.dispatches.load(Ordering::Relaxed),
        t.families.iter().sum::<u64>(),
        fams.join(","),
        t.bytes[0],
        t.bytes[1],
        t.bytes[2]
    );
    match &p.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, line) {
                eprintln!("count plugin: {path}: {e}");
            }
        }
        None => eprint!("{line}"),
    }
}

unsafe extern "C" fn destroy(plugin: Ctx) {
    // SAFETY: `plugin` came from Box::into_raw in `create`, destroyed once.
    drop(unsafe { Box::from_raw(plugin.cast::<Plugin>()) });
}

struct Static(Table);
// SAFETY: the table is immutable; its only pointer is to a static string.
unsafe impl Sync for Static {}

static TABLE: Static = Static(Table {
    abi_version: ABI_VERSION,
    size: std::mem::size_of::<Table>() as u32,
    name: c"count".as_ptr(),
    wants: WANTS_INSTRUCTIONS | WANTS_MEMORY,
    reserved: 0,
    create: Some(create),
    dispatch: Some(dispatch),
    worker: Some(worker),
    instruction: Some(instruction),
    memory: Some(memory),
    worker_end: Some(worker_end),
    dispatch_end: None,
    finish: Some(finish),
    destroy: Some(destroy),
});

/// The plugin's table (the one symbol the emulator looks up).
#[unsafe(no_mangle)]
pub extern "C" fn rocjitsu_plugin_v1() -> *const Table {
    &TABLE.0
}
