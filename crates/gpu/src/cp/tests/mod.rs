//! Test support: a recording [`Host`], queues in a [`Vm`] written the way
//! the runtime writes them, and kernels compiled by clang-22.

mod aql;
mod fuzz;
mod pm4;
mod queues;
mod sdma;

use super::*;
use crate::exec::loader;
use crate::mem::{Perms, Tlb};
use rocjitsu_code::CodeObject;
use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;

/// Records what the command processor reported.
pub struct TestHost {
    pub events: Mutex<Vec<u32>>,
    pub faults: Mutex<Vec<(u32, GpuFault)>>,
    epoch: Instant,
    clock: AtomicU64,
}

impl Default for TestHost {
    fn default() -> Self {
        TestHost {
            events: Mutex::default(),
            faults: Mutex::default(),
            epoch: Instant::now(),
            clock: AtomicU64::new(0),
        }
    }
}

impl Host for TestHost {
    fn signal_event(&self, event_id: u32) {
        self.events.lock().unwrap().push(event_id);
    }
    fn gpu_fault(&self, gpu: u32, fault: &GpuFault) {
        self.faults.lock().unwrap().push((gpu, fault.clone()));
    }
    fn gpu_clock(&self) -> u64 {
        // Nanoseconds since the host was made, plus 100, made strictly
        // increasing so that timestamps taken in order differ.
        let now = self.epoch.elapsed().as_nanos() as u64 + 100;
        let prev = self
            .clock
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                Some(now.max(c + 1))
            })
            .unwrap_or(0);
        now.max(prev + 1)
    }
}

impl TestHost {
    pub fn faults(&self) -> Vec<(u32, GpuFault)> {
        self.faults.lock().unwrap().clone()
    }
    pub fn events(&self) -> Vec<u32> {
        self.events.lock().unwrap().clone()
    }
}

pub const TARGET: rocjitsu_isa::Target = rocjitsu_isa::Target::Gfx90a;

/// A command processor and the one process whose queues the tests create.
pub struct TestCp {
    pub cp: CommandProcessor,
    pub process: Arc<Process>,
}

impl std::ops::Deref for TestCp {
    type Target = CommandProcessor;
    fn deref(&self) -> &CommandProcessor {
        &self.cp
    }
}

impl TestCp {
    pub fn create_queue(&self, desc: QueueDesc) -> Result<u32, CpError> {
        self.cp.create_queue(&self.process, desc)
    }
}

pub fn setup(watchdog: Option<Duration>) -> (Arc<Vm>, Arc<TestHost>, TestCp) {
    setup_with(CpOptions {
        threads: 2,
        watchdog,
        ..CpOptions::default()
    })
}

pub fn setup_with(opts: CpOptions) -> (Arc<Vm>, Arc<TestHost>, TestCp) {
    setup_target(TARGET, opts)
}

/// A command processor whose one GPU is a `target`.
pub fn setup_target(
    target: rocjitsu_isa::Target,
    opts: CpOptions,
) -> (Arc<Vm>, Arc<TestHost>, TestCp) {
    let vm = Arc::new(Vm::new());
    let host = Arc::new(TestHost::default());
    let cp = CommandProcessor::new(
        vec![CpGpu {
            target,
            max_lds: 65536,
            sramecc: target.sramecc_default(),
        }],
        opts,
    );
    let process = Process::new(vm.clone(), host.clone());
    (vm, host, TestCp { cp, process })
}

/// Polls `f` until it holds or `secs` pass; returns whether it held.
pub fn wait_until(secs: f64, mut f: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed().as_secs_f64() < secs {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    f()
}

/// What [`buffer`] fills its words with: a word still holding it was not
/// written.
pub const SENTINEL: u32 = 0xdead_beef;

/// A buffer of `words` dwords, each [`SENTINEL`].
pub fn buffer(vm: &Vm, words: u64) -> u64 {
    let b = vm.alloc(4 * words, Perms::RW);
    let fill: Vec<u8> = (0..words).flat_map(|_| SENTINEL.to_le_bytes()).collect();
    vm.fill(b, &fill).unwrap();
    b
}

/// The first `n` dwords at `b`.
pub fn words(vm: &Vm, b: u64, n: u64) -> Vec<u32> {
    vm.read_vec(b, 4 * n)
        .unwrap()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn rd64(vm: &Vm, a: u64) -> u64 {
    u64::from_le_bytes(vm.read_vec(a, 8).unwrap().try_into().unwrap())
}

pub fn rd32(vm: &Vm, a: u64) -> u32 {
    u32::from_le_bytes(vm.read_vec(a, 4).unwrap().try_into().unwrap())
}

pub fn wr64(vm: &Vm, a: u64, v: u64) {
    vm.atomic_u64(&mut Tlb::default(), a, |_| Some(v)).unwrap();
}

pub fn wr32(vm: &Vm, a: u64, v: u32) {
    vm.atomic_u32(&mut Tlb::default(), a, |_| Some(v)).unwrap();
}

/// An `amd_signal_t` with `value`, and an event mailbox when `event` is set.
pub fn signal(vm: &Vm, value: i64, event: Option<(u64, u32)>) -> u64 {
    let s = vm.alloc(64, Perms::RW);
    wr64(vm, s, 1); // AMD_SIGNAL_KIND_USER
    wr64(vm, s + 8, value as u64);
    if let Some((mailbox, id)) = event {
        wr64(vm, s + 16, mailbox);
        wr32(vm, s + 24, id);
    }
    s
}

/// The OpenCL kernels the AQL tests run.
const KERNELS: &str = r#"
typedef unsigned int uint;
typedef unsigned short ushort;
#define DISPATCH ((__constant ushort*)__builtin_amdgcn_dispatch_ptr())
#define GRID(i) (((__constant uint*)__builtin_amdgcn_dispatch_ptr())[3 + (i)])

__kernel void empty(void) {}

__kernel void ids1d(__global uint* out) {
    uint i = __builtin_amdgcn_workgroup_id_x() * DISPATCH[2] + __builtin_amdgcn_workitem_id_x();
    out[i] = i * 3 + 1;
}

__kernel void ids2d(__global uint* out) {
    uint x = __builtin_amdgcn_workgroup_id_x() * DISPATCH[2] + __builtin_amdgcn_workitem_id_x();
    uint y = __builtin_amdgcn_workgroup_id_y() * DISPATCH[3] + __builtin_amdgcn_workitem_id_y();
    out[y * GRID(0) + x] = (x << 16 | y) + 1;
}

__kernel void poke(__global uint* p) {
    p[__builtin_amdgcn_workitem_id_x()] = 1;
}

__kernel void spin(volatile __global uint* flag) {
    while (*flag == 0) {}
}

// For PM4 dispatches, which have no dispatch packet: workgroups of 64.
__kernel void pm4_ids(__global uint* out, uint width) {
    uint x = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
    uint y = __builtin_amdgcn_workgroup_id_y();
    out[y * width + x] = x * 7 + y * 1000 + 1;
}
"#;

/// The kernels' code object (compiled once per test run).
fn code_object() -> &'static [u8] {
    static CO: OnceLock<Vec<u8>> = OnceLock::new();
    CO.get_or_init(|| compile("cl", KERNELS))
}

/// `src` (OpenCL C for `ext` "cl", LLVM IR for "ll") compiled by clang-22
/// for gfx90a into a code object.
pub fn compile(ext: &str, src: &str) -> Vec<u8> {
    compile_for(ext, src, "gfx90a", &[])
}

/// `src` compiled by clang-22 for `mcpu`, with more clang `args`.
pub fn compile_for(ext: &str, src: &str, mcpu: &str, args: &[&str]) -> Vec<u8> {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "rocjitsu-cp-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (file, out) = (dir.join(format!("k.{ext}")), dir.join("k.hsaco"));
    std::fs::write(&file, src).unwrap();
    let lang = if ext == "cl" { "cl" } else { "ir" };
    let st = std::process::Command::new("clang-22")
        .args(["-x", lang, "-target", "amdgcn-amd-amdhsa"])
        .arg(format!("-mcpu={mcpu}"))
        .args(["-nogpulib", "-O2", "-mcode-object-version=5", "-w"])
        .args(args)
        .arg(&file)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang-22 runs");
    assert!(st.success(), "clang-22 compiles the test kernels");
    let bytes = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

/// Loads the test kernels into `vm`; returns kernel name -> kernel object
/// (descriptor address). Fault reports find the names in the loaded code
/// object, as with the runtime's loader (the host names none).
pub fn load_kernels(vm: &Vm, _host: &TestHost) -> HashMap<String, u64> {
    let co = CodeObject::parse("k.hsaco", code_object().to_vec()).unwrap();
    let loaded = loader::load(vm, &co).unwrap();
    co.kernels()
        .iter()
        .map(|k| (k.name.clone(), loaded.base + k.descriptor_address))
        .collect()
}

/// An AQL queue as ROCr lays it out: the ring (headers INVALID) and an
/// `amd_queue_t` whose write/read dispatch ids are at 56 and 128.
pub struct AqlQueue {
    pub id: u32,
    pub ring: u64,
    pub slots: u64,
    pub queue: u64,
}

pub const PKT_INVALID: u16 = 1;

impl AqlQueue {
    pub fn new(vm: &Vm, cp: &TestCp, slots: u64) -> AqlQueue {
        let ring = vm.alloc(slots * 64, Perms::RW);
        for i in 0..slots {
            vm.fill(ring + 64 * i, &PKT_INVALID.to_le_bytes()).unwrap();
        }
        let queue = vm.alloc(256, Perms::RW);
        let id = cp
            .create_queue(QueueDesc {
                kind: QueueKind::Aql,
                gpu: 0,
                ring_base: ring,
                ring_size: slots * 64,
                read_ptr: queue + 128,
                write_ptr: queue + 56,
                doorbell: 0,
                priority: 7,
            })
            .unwrap();
        AqlQueue {
            id,
            ring,
            slots,
            queue,
        }
    }

    /// Submits a packet the way the runtime does (reserve a slot by
    /// bumping the write index, write the body, store the header last);
    /// returns its index.
    pub fn submit(&self, vm: &Vm, pkt: [u8; 64]) -> u64 {
        let index = rd64(vm, self.queue + 56);
        wr64(vm, self.queue + 56, index + 1);
        let slot = self.ring + (index % self.slots) * 64;
        vm.fill(slot + 4, &pkt[4..]).unwrap();
        let dw0 = u32::from_le_bytes(pkt[0..4].try_into().unwrap());
        wr32(vm, slot, dw0);
        index
    }

    pub fn read_index(&self, vm: &Vm) -> u64 {
        rd64(vm, self.queue + 128)
    }
}

/// A kernel dispatch packet.
pub fn dispatch_packet(
    kernel_object: u64,
    block: [u16; 3],
    grid: [u32; 3],
    kernarg: u64,
    signal: u64,
) -> [u8; 64] {
    let mut p = [0u8; 64];
    let dims: u16 = if grid[2] > 1 || block[2] > 1 {
        3
    } else if grid[1] > 1 || block[1] > 1 {
        2
    } else {
        1
    };
    p[0..2].copy_from_slice(&(2u16 | 1 << 8 | 2 << 9 | 2 << 11).to_le_bytes());
    p[2..4].copy_from_slice(&dims.to_le_bytes());
    for i in 0..3 {
        p[4 + 2 * i..6 + 2 * i].copy_from_slice(&block[i].to_le_bytes());
        p[12 + 4 * i..16 + 4 * i].copy_from_slice(&grid[i].to_le_bytes());
    }
    p[32..40].copy_from_slice(&kernel_object.to_le_bytes());
    p[40..48].copy_from_slice(&kernarg.to_le_bytes());
    p[56..64].copy_from_slice(&signal.to_le_bytes());
    p
}

/// A barrier-AND (type 3) or barrier-OR (type 5) packet.
pub fn barrier_packet(and: bool, deps: [u64; 5], signal: u64) -> [u8; 64] {
    let mut p = [0u8; 64];
    let ty: u16 = if and { 3 } else { 5 };
    p[0..2].copy_from_slice(&(ty | 1 << 8).to_le_bytes());
    for (i, d) in deps.iter().enumerate() {
        p[8 + 8 * i..16 + 8 * i].copy_from_slice(&d.to_le_bytes());
    }
    p[56..64].copy_from_slice(&signal.to_le_bytes());
    p
}

/// A kernarg segment holding `args` (8 bytes each).
pub fn kernarg(vm: &Vm, args: &[u64]) -> u64 {
    let a = vm.alloc(256, Perms::RW);
    for (i, x) in args.iter().enumerate() {
        vm.fill(a + 8 * i as u64, &x.to_le_bytes()).unwrap();
    }
    a
}
