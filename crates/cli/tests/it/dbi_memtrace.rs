//! `memtrace` against the emulator's own memory events: a kernel built by
//! clang-22 runs once with an in-process plugin that records, for the
//! traced instructions, EXEC and every active lane's address as the VM
//! computes them (`MemEvent::lanes`), and once instrumented by `rocjitsu
//! dbi instrument --tool memtrace`; the records the probes wrote must be
//! exactly those events (every execution), or every Nth of each
//! instruction's executions in order (sampled). The buffers are allocated
//! before the code object is loaded, at the same addresses in both runs.

use crate::common;
use rocjitsu_code::CodeObject;
use rocjitsu_code::dbi::{self, Manifest, Tool, memtrace};
use rocjitsu_gpu::exec::dispatch::{self, Launch};
use rocjitsu_gpu::exec::{Env, loader};
use rocjitsu_gpu::mem::{Perms, Vm};
use rocjitsu_gpu::plugin::{
    DispatchEnd, DispatchInfo, DispatchObserver, MemEvent, Observer, Plugin, Plugins, Wants,
};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A gather (per-lane addresses from an index buffer, `saddr` form), a
/// divergent store through a 64-bit VGPR address, and partial EXEC.
const GATHER: &str = r#"
__kernel void gather(__global const int *idx, __global const int *a, __global int *b,
                     __global const ulong *ptrs) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  int v = a[idx[i]];
  if (i % 3 != 0) b[i] = v + 1;
  __global int *p = (__global int *)ptrs[i & 7];
  if (i % 5 == 1) p[i] = v;
}
"#;

fn compile(cpu: &str) -> (PathBuf, Vec<u8>) {
    let d = common::tmp(&format!("memtrace-{cpu}"));
    let out = common::compile_cl(&d, GATHER, cpu);
    let bytes = std::fs::read(&out).unwrap();
    (d, bytes)
}

/// (code object address of the instruction, EXEC, active lanes' addresses).
type Event = (u64, u64, Vec<(u32, u64)>);

struct Recorder {
    events: Arc<Mutex<Vec<Event>>>,
    /// The code object's load base.
    base: u64,
}

struct Dispatch {
    events: Arc<Mutex<Vec<Event>>>,
    base: u64,
}

struct Worker<'a> {
    d: &'a Dispatch,
}

impl Observer for Worker<'_> {
    fn memory(&mut self, m: &MemEvent) {
        let name = m.op.inst.mnemonic();
        if !(name.starts_with("global_") || name.starts_with("flat_")) {
            return;
        }
        let l = m.lanes();
        let lanes = (0..64u32)
            .filter(|&i| m.exec >> i & 1 != 0)
            .map(|i| (i, l.addr[i as usize]))
            .collect();
        self.d
            .events
            .lock()
            .unwrap()
            .push((m.pc - self.d.base, m.exec, lanes));
    }
}

impl DispatchObserver for Dispatch {
    fn worker(&self, _slot: usize) -> Box<dyn Observer + '_> {
        Box::new(Worker { d: self })
    }
    fn end(self: Box<Self>, _end: &DispatchEnd) {}
}

impl Plugin for Recorder {
    fn name(&self) -> &'static str {
        "memtrace-test"
    }
    fn wants(&self) -> Wants {
        Wants {
            instructions: false,
            memory: true,
            code: false,
        }
    }
    fn dispatch(&self, _d: &DispatchInfo) -> Box<dyn DispatchObserver> {
        Box::new(Dispatch {
            events: self.events.clone(),
            base: self.base,
        })
    }
}

/// Runs `gather` from `elf` over 4 workgroups of 64 on a fresh VM whose
/// buffers come first; returns the memory events at global/flat
/// instructions, and the probes' buffer when the object is instrumented.
fn run(elf: &[u8], record: bool) -> (Vec<Event>, Option<(Manifest, Vec<u8>)>) {
    let co = CodeObject::parse("k", elf.to_vec()).unwrap();
    let target = co.target();
    let vm = Vm::new();
    let n = 256u64;
    let idx: Vec<u8> = (0..n as i32)
        .flat_map(|i| ((i * 37 + 11) % 200).to_le_bytes())
        .collect();
    let a: Vec<u8> = (0..200i32).flat_map(|i| (i * 3).to_le_bytes()).collect();
    let idx_at = vm.alloc(idx.len() as u64, Perms::RW);
    vm.fill(idx_at, &idx).unwrap();
    let a_at = vm.alloc(a.len() as u64, Perms::RW);
    vm.fill(a_at, &a).unwrap();
    let b_at = vm.alloc(4 * n, Perms::RW);
    let targets: Vec<u64> = (0..8).map(|_| vm.alloc(4 * n, Perms::RW)).collect();
    let ptrs: Vec<u8> = targets.iter().flat_map(|p| p.to_le_bytes()).collect();
    let ptrs_at = vm.alloc(64, Perms::RW);
    vm.fill(ptrs_at, &ptrs).unwrap();
    let k = co.kernel("gather").unwrap();
    let mut kernarg = vec![0u8; 256];
    for (i, p) in [idx_at, a_at, b_at, ptrs_at].iter().enumerate() {
        kernarg[8 * i..8 * i + 8].copy_from_slice(&p.to_le_bytes());
    }
    let kernarg_at = vm.alloc(256, Perms::RW);
    vm.fill(kernarg_at, &kernarg).unwrap();
    let packet = vm.alloc(64, Perms::RW);
    let queue = vm.alloc(256, Perms::RW);
    let loaded = loader::load(&vm, &co).unwrap();
    let env = Env::new(target);
    let launch = Launch {
        kernel: k.name.clone(),
        entry: loaded.base + k.entry,
        descriptor: k.descriptor,
        grid: [4, 1, 1],
        block: [64, 1, 1],
        dynamic_lds: 0,
        kernarg: kernarg_at,
        dispatch_packet: packet,
        queue,
        private_bytes: 16,
        threads: 1,
        timeout: None,
        max_lds: 65536,
        trace: 0,
    };
    let events = Arc::new(Mutex::new(Vec::new()));
    let plugins = record.then(|| {
        Plugins::of(vec![Box::new(Recorder {
            events: events.clone(),
            base: loaded.base,
        })])
    });
    let extra = dispatch::Extra {
        plugins: plugins.as_ref(),
        ..Default::default()
    };
    dispatch::dispatch_with(&vm, &env, &loaded.program, &launch, &extra).unwrap();
    let probes = Manifest::of(&co).unwrap().map(|m| {
        let buf = vm.read_vec(loaded.base + m.buffer, m.buffer_bytes).unwrap();
        (m, buf)
    });
    let ev = events.lock().unwrap().clone();
    (ev, probes)
}

/// The records memtrace wrote, as events, in per-site serial order.
fn records(m: &Manifest, buf: &[u8]) -> (Vec<(u64, u32, Event)>, Vec<u64>) {
    let l = m.memtrace.as_ref().unwrap();
    let v = memtrace::decode(l, buf);
    assert_eq!(v["dropped"], 0, "{v}");
    let mut out = Vec::new();
    for r in v["records"].as_array().unwrap() {
        let site = &l.sites[r["site"].as_u64().unwrap() as usize];
        let lanes = r["addresses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_u64().unwrap() as u32, p[1].as_u64().unwrap()))
            .collect();
        out.push((
            site.address,
            r["serial"].as_u64().unwrap() as u32,
            (site.address, r["exec"].as_u64().unwrap(), lanes),
        ));
    }
    out.sort_by_key(|(a, s, _)| (*a, *s));
    let execs = v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["executions"].as_u64().unwrap())
        .collect();
    (out, execs)
}

#[test]
fn memtrace_records_the_addresses_the_emulator_accesses() {
    for cpu in ["gfx90a", "gfx942", "gfx950"] {
        let (dir, elf) = compile(cpu);
        let (events, _) = run(&elf, true);
        let mut per_site: BTreeMap<u64, Vec<Event>> = BTreeMap::new();
        for e in &events {
            per_site.entry(e.0).or_default().push(e.clone());
        }
        assert!(
            per_site.len() >= 4,
            "{cpu}: {} global instructions ran",
            per_site.len()
        );
        assert!(
            events.iter().any(|e| e.1 != u64::MAX && e.1 != 0),
            "{cpu}: no partial EXEC"
        );
        for every in [1u32, 4] {
            let tool = Tool::MemTrace(memtrace::Options {
                pcs: vec![],
                mnemonics: vec!["global_".into(), "flat_".into()],
                every,
                records: 4096,
            });
            let inst = dbi::instrument(&elf, &tool).unwrap_or_else(|e| panic!("{cpu}: {e}"));
            let (_, probes) = run(&inst.elf, false);
            let (m, buf) = probes.unwrap();
            let (recs, execs) = records(&m, &buf);
            let sites = &m.memtrace.as_ref().unwrap().sites;
            for (i, s) in sites.iter().enumerate() {
                let want = per_site.get(&s.address).map_or(&[][..], |v| &v[..]);
                assert_eq!(
                    execs[i],
                    want.len() as u64,
                    "{cpu}: executions of `{}` at 0x{:x}",
                    s.instruction,
                    s.address
                );
                // One host thread runs the waves in the same order both
                // times: the sampled records are the executions 0, N, 2N...
                let got: Vec<&Event> = recs
                    .iter()
                    .filter(|(a, _, _)| *a == s.address)
                    .map(|(_, _, e)| e)
                    .collect();
                let sampled: Vec<&Event> = want.iter().step_by(every as usize).collect();
                assert_eq!(
                    got, sampled,
                    "{cpu}: every {every}: `{}` at 0x{:x}",
                    s.instruction, s.address
                );
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
