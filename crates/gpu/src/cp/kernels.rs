//! Decoded kernel code, cached across dispatches.
//!
//! A [`Program`] covers the code around a kernel's entry within the memory
//! region holding it, so that calls into other functions of the same code
//! object resolve. Programs are shared by every kernel whose entry falls in
//! the same window of the same region. A cached program is used only while
//! its region still exists (regions get a new id when remapped) and the
//! code bytes at the entry still match what was decoded, so that a code
//! object unloaded and replaced at the same address is decoded afresh.

use crate::exec::dispatch::CodeAt;
use crate::exec::engine::Program;
use crate::mem::{Tlb, Vm};
use rocjitsu_isa::{Target, WaveSize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Regions up to this size are decoded as a whole; in larger ones a window
/// of this size around the entry (decoding state is ~30 bytes per code
/// byte, so a window bounds the memory a kernel costs).
const WINDOW: u64 = 4 << 20;
/// Alignment of windows in large regions (kernels in the same granule share
/// a window).
const GRANULE: u64 = 1 << 20;
/// Code bytes at the entry compared to detect replaced code.
const CHECK: u64 = 256;

#[derive(Hash, PartialEq, Eq, Clone, Copy)]
struct Key {
    region: u64,
    start: u64,
    target: Target,
    wave: WaveSize,
}

struct Entry {
    region_start: u64,
    prog: Arc<Program>,
}

#[derive(Default)]
pub struct Cache {
    map: Mutex<HashMap<Key, Entry>>,
    /// Kernel names by (kernel object or entry, id of its region, whether
    /// the address is a kernel object).
    names: Mutex<HashMap<(u64, u64, bool), Option<String>>>,
}

impl Cache {
    /// The name of the kernel whose descriptor is at `kernel_object`, from
    /// its loaded code object (see [`super::names`]), looked up once.
    pub fn name(&self, vm: &Vm, kernel_object: u64) -> Option<String> {
        self.lookup(vm, kernel_object, true)
    }

    /// The name of the kernel whose code starts at `entry` (see
    /// [`super::names::entry_name`]), looked up once.
    pub fn entry_name(&self, vm: &Vm, entry: u64) -> Option<String> {
        self.lookup(vm, entry, false)
    }

    fn lookup(&self, vm: &Vm, addr: u64, kd: bool) -> Option<String> {
        let region = vm.region(addr)?.id;
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = names.get(&(addr, region, kd)) {
            return n.clone();
        }
        names.retain(|&(k, r, _), _| vm.region(k).is_some_and(|x| x.id == r));
        let n = if kd {
            super::names::kernel_name(vm, addr)
        } else {
            super::names::entry_name(vm, addr)
        };
        names.insert((addr, region, kd), n.clone());
        n
    }

    /// The program holding the code at `entry`, for `target`, decoded for
    /// waves of `wave` lanes (RDNA code reads differently in wave32 and
    /// wave64: VCC and SGPR masks are one register or two).
    pub fn program(
        &self,
        vm: &Vm,
        tlb: &mut Tlb,
        target: Target,
        wave: WaveSize,
        entry: u64,
    ) -> Result<Arc<Program>, String> {
        let r = vm
            .region(entry)
            .ok_or_else(|| format!("the kernel code at 0x{entry:x} is not mapped"))?;
        let end = r.start.saturating_add(r.len);
        let (start, stop) = if r.len <= WINDOW {
            (r.start, end)
        } else {
            let s = (entry & !(GRANULE - 1))
                .saturating_sub(GRANULE)
                .max(r.start);
            (s, s.saturating_add(WINDOW).min(end))
        };
        let key = Key {
            region: r.id,
            start,
            target,
            wave,
        };
        let check = CHECK.min(stop - entry) as usize;
        let mut now = [0u8; CHECK as usize];
        vm.read(tlb, entry, &mut now[..check])
            .map_err(|e| e.to_string())?;
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = map.get(&key) {
            let off = (entry - start) as usize;
            if e.prog.bytes().get(off..off + check) == Some(&now[..check]) {
                return Ok(e.prog.clone());
            }
        }
        // A miss: forget programs of regions that are gone.
        map.retain(|k, e| vm.region(e.region_start).is_some_and(|r| r.id == k.region));
        let prog = Arc::new(
            Program::from_vm_in(target, wave, vm, start, stop - start)
                .map_err(|e| e.to_string())?,
        );
        map.insert(
            key,
            Entry {
                region_start: r.start,
                prog: prog.clone(),
            },
        );
        Ok(prog)
    }
}

/// The cache as the code a dispatch's waves may call into, for one target
/// and wave size.
pub struct CodeIn<'a> {
    pub cache: &'a Cache,
    pub target: Target,
    pub wave: WaveSize,
}

impl CodeAt for CodeIn<'_> {
    fn program_at(&self, vm: &Vm, tlb: &mut Tlb, pc: u64) -> Result<Arc<Program>, String> {
        self.cache.program(vm, tlb, self.target, self.wave, pc)
    }
}
