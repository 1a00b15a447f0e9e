//! Kernel names for fault reports, from the code object the runtime loaded.
//!
//! The loader copies a code object's loadable segments to one allocation;
//! the first segment starts at the ELF header and holds the dynamic symbol
//! table, where the kernel descriptor is the symbol `<kernel>.kd`. So the
//! name of the kernel whose descriptor is at `kernel_object` is found by
//! looking back from it, page by page within its region, for an ELF header
//! and reading the dynamic symbols through `PT_DYNAMIC`. Every read goes
//! through the Vm: a malformed image gives no name, never a fault.

use crate::mem::{PAGE, Tlb, Vm};

/// How far back from the descriptor an ELF header is looked for.
const MAX_BACK: u64 = 64 << 20;
/// `EM_AMDGPU`.
const EM_AMDGPU: u16 = 224;
const PT_DYNAMIC: u32 = 2;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_STRSZ: u64 = 10;
/// Bounds on what is read, against corrupt images.
const MAX_SYMBOLS: u64 = 1 << 20;
const MAX_PHDRS: u64 = 64;
const MAX_DYNAMIC: u64 = 256;

struct Image<'a> {
    vm: &'a Vm,
    tlb: Tlb,
    base: u64,
}

impl Image<'_> {
    fn bytes<const N: usize>(&mut self, off: u64) -> Option<[u8; N]> {
        let mut b = [0u8; N];
        self.vm
            .read(&mut self.tlb, self.base.checked_add(off)?, &mut b)
            .ok()?;
        Some(b)
    }

    fn u16(&mut self, off: u64) -> Option<u16> {
        self.bytes(off).map(u16::from_le_bytes)
    }

    fn u32(&mut self, off: u64) -> Option<u32> {
        self.bytes(off).map(u32::from_le_bytes)
    }

    fn u64(&mut self, off: u64) -> Option<u64> {
        self.bytes(off).map(u64::from_le_bytes)
    }
}

/// The name of the kernel whose descriptor is at `kernel_object`, if the
/// code object around it can be read.
pub fn kernel_name(vm: &Vm, kernel_object: u64) -> Option<String> {
    symbol_name(vm, kernel_object, true)
}

/// The name of the kernel whose first instruction is at `entry` (a PM4
/// dispatch knows only COMPUTE_PGM_LO/HI): the function symbol there.
pub fn entry_name(vm: &Vm, entry: u64) -> Option<String> {
    symbol_name(vm, entry, false)
}

/// The function symbol at `entry` with the address its code object is
/// loaded at (where the ELF header is): `(image base, name, size)`.
pub fn entry_symbol(vm: &Vm, entry: u64) -> Option<(u64, String, u64)> {
    find(vm, entry, false)
}

/// The dynamic symbol whose value is `addr`: a kernel descriptor
/// `<kernel>.kd` (named without the suffix) when `kd`, else any other.
fn symbol_name(vm: &Vm, addr: u64, kd: bool) -> Option<String> {
    find(vm, addr, kd).map(|(_, name, _)| name)
}

/// [`symbol_name`] with the image base and the symbol's size.
fn find(vm: &Vm, addr: u64, kd: bool) -> Option<(u64, String, u64)> {
    let region = vm.region(addr)?;
    let mut tlb = Tlb::default();
    let mut page = addr & !(PAGE - 1);
    let lowest = region.start.max(addr.saturating_sub(MAX_BACK));
    while page >= lowest {
        let mut magic = [0u8; 4];
        if vm.read(&mut tlb, page, &mut magic).is_ok() && magic == *b"\x7fELF" {
            let mut img = Image {
                vm,
                tlb,
                base: page,
            };
            if let Some((n, size)) = lookup(&mut img, addr - page, kd) {
                return Some((page, n, size));
            }
            tlb = img.tlb;
        }
        page = page.checked_sub(PAGE)?;
    }
    None
}

/// Finds the dynamic symbol `<name>.kd` (when `kd`; else a symbol not so
/// named) whose value is `value`: its name and size.
fn lookup(img: &mut Image, value: u64, kd: bool) -> Option<(String, u64)> {
    if img.bytes::<1>(4)? != [2] || img.u16(18)? != EM_AMDGPU {
        return None;
    }
    let (phoff, phentsize, phnum) = (img.u64(32)?, u64::from(img.u16(54)?), img.u16(56)?);
    let dynamic = (0..u64::from(phnum).min(MAX_PHDRS)).find_map(|i| {
        let ph = phoff.checked_add(i * phentsize)?;
        (img.u32(ph)? == PT_DYNAMIC).then(|| img.u64(ph.wrapping_add(16)))?
    })?;
    let (mut symtab, mut strtab, mut strsz, mut hash) = (None, None, None, None);
    for i in 0..MAX_DYNAMIC {
        let e = dynamic.checked_add(16 * i)?;
        let (tag, val) = (img.u64(e)?, img.u64(e.wrapping_add(8))?);
        match tag {
            0 => break,
            DT_SYMTAB => symtab = Some(val),
            DT_STRTAB => strtab = Some(val),
            DT_STRSZ => strsz = Some(val),
            DT_HASH => hash = Some(val),
            _ => {}
        }
    }
    let (symtab, strtab, strsz) = (symtab?, strtab?, strsz?);
    // The SysV hash table's chain count is the number of symbols; without
    // one, the symbols are taken to run up to the string table.
    let count = match hash {
        Some(h) => u64::from(img.u32(h.wrapping_add(4))?),
        None => strtab.checked_sub(symtab)? / 24,
    }
    .min(MAX_SYMBOLS);
    for i in 0..count {
        let s = symtab.checked_add(24 * i)?;
        if img.u64(s.wrapping_add(8))? != value {
            continue;
        }
        let name = u64::from(img.u32(s)?);
        let mut bytes = Vec::new();
        while name + (bytes.len() as u64) < strsz && bytes.len() < 4096 {
            match img.bytes::<1>(strtab.wrapping_add(name + bytes.len() as u64))? {
                [0] => break,
                [c] => bytes.push(c),
            }
        }
        let name = String::from_utf8_lossy(&bytes);
        let size = img.u64(s.wrapping_add(16))?;
        match name.strip_suffix(".kd") {
            Some(k) if kd => return Some((k.to_string(), size)),
            None if !kd && !name.is_empty() => return Some((name.into_owned(), size)),
            _ => {}
        }
    }
    None
}
