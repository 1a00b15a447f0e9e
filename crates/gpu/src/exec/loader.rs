//! Loading a code object into GPU memory, as the ROCm loader does: its
//! loadable segments are copied to one allocation at a base address, and
//! symbol addresses become base + the symbol's value.

use super::engine::Program;
use crate::mem::{Perms, Vm};
use rocjitsu_code::CodeObject;
use rocjitsu_isa::WaveSize;

/// `PT_LOAD`.
const PT_LOAD: u32 = 1;
/// `R_AMDGPU_RELATIVE64`: base + addend, 64 bits.
const R_AMDGPU_RELATIVE64: u32 = 13;

/// A code object in GPU memory.
pub struct Loaded {
    /// Address the code object's virtual address 0 is loaded at.
    pub base: u64,
    /// Its bytes, as an instruction cache.
    pub program: Program,
}

/// Loads `co`'s `PT_LOAD` segments into a new allocation of `vm` and
/// applies its `R_AMDGPU_RELATIVE64` dynamic relocations.
pub fn load(vm: &Vm, co: &CodeObject) -> Result<Loaded, String> {
    if let Some(e) = co.target().kernels_not_executable() {
        return Err(format!("{}: {e}", co.name()));
    }
    let elf = co.elf();
    let loads: Vec<_> = elf.segments.iter().filter(|s| s.kind == PT_LOAD).collect();
    let end = loads
        .iter()
        .map(|s| s.vaddr.saturating_add(s.memsz))
        .max()
        .unwrap_or(0);
    if end == 0 || end > 1 << 32 {
        return Err(format!(
            "{}: no loadable segments of a sensible size",
            co.name()
        ));
    }
    let mut image = vec![0u8; end as usize];
    for s in &loads {
        let src = co
            .bytes()
            .get(s.offset as usize..(s.offset + s.filesz) as usize)
            .ok_or_else(|| {
                format!(
                    "{}: a PT_LOAD segment runs past the end of the file",
                    co.name()
                )
            })?;
        image[s.vaddr as usize..(s.vaddr + s.filesz) as usize].copy_from_slice(src);
    }
    let base = vm.alloc(end, Perms::RW);
    for (offset, kind, addend) in relocations(co) {
        if kind == R_AMDGPU_RELATIVE64
            && let Some(dst) = image.get_mut(offset as usize..offset as usize + 8)
        {
            dst.copy_from_slice(&base.wrapping_add(addend as u64).to_le_bytes());
        }
    }
    vm.fill(base, &image).map_err(|e| e.to_string())?;
    Ok(Loaded {
        base,
        program: Program::new_in(co.target(), wave_size(co), base, image),
    })
}

/// The wave size the code object's kernels run in: 32 lanes when any
/// kernel descriptor enables wave32 (GFX10+; the dispatch refuses a kernel
/// of the other size), else 64.
fn wave_size(co: &CodeObject) -> WaveSize {
    let w32 = co
        .kernels()
        .iter()
        .any(|k| k.descriptor.kernel_code_properties.enable_wavefront_size32);
    if w32 {
        WaveSize::Wave32
    } else {
        WaveSize::Wave64
    }
}

/// The `.rela.dyn` entries: (offset, type, addend).
fn relocations(co: &CodeObject) -> Vec<(u64, u32, i64)> {
    let elf = co.elf();
    let mut out = Vec::new();
    for s in &elf.sections {
        if s.name != ".rela.dyn" {
            continue;
        }
        let data = co.section_data(s);
        for e in data.chunks_exact(24) {
            let w = |i: usize| u64::from_le_bytes(e[i..i + 8].try_into().unwrap_or([0; 8]));
            out.push((w(0), w(8) as u32, w(16) as i64));
        }
    }
    out
}
