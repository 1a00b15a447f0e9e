//! Editing the ELF image: retargeting, descriptor updates, site patches and
//! the appended trampoline segment.

use super::enc;
use super::{DbtError, Site};
use crate::descriptor::KernelDescriptor;
use crate::elf::{NT_AMDGPU_METADATA, PT_LOAD};
use crate::object::CodeObject;
use rocjitsu_isa::Target;

/// `PT_GNU_STACK`, which AMDGPU loaders ignore: its program header becomes
/// the trampoline segment's, so the header table does not move.
const PT_GNU_STACK: u32 = 0x6474_e551;
/// `PF_R | PF_X`.
pub(crate) const PF_RX: u32 = 5;
/// `PF_R | PF_W | PF_X`.
pub(crate) const PF_RWX: u32 = 7;
pub(crate) const PAGE: u64 = 0x1000;
/// `SHT_PROGBITS`, `SHF_ALLOC | SHF_EXECINSTR`.
const SHT_PROGBITS: u32 = 1;
pub(crate) const SHF_AX: u64 = 0x6;
/// `SHF_WRITE | SHF_ALLOC`.
pub(crate) const SHF_WA: u64 = 0x3;

/// The output image under construction.
pub(crate) struct Editor {
    pub bytes: Vec<u8>,
}

fn put32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

impl Editor {
    pub fn new(co: &CodeObject) -> Editor {
        Editor {
            bytes: co.bytes().to_vec(),
        }
    }

    /// Sets `e_flags`' machine to the host's and the metadata note's
    /// `amdhsa.target` to the host's target ID (same length: `gfx950` and
    /// `gfx942` are both six characters).
    pub fn retarget(&mut self, co: &CodeObject, host: Target) -> Result<(), DbtError> {
        let flags = co.elf().header.flags;
        let new = (flags & !0xff) | host.elf_mach();
        put32(&mut self.bytes, 48, new);
        let notes = co
            .elf()
            .notes(co.name(), co.bytes())
            .map_err(|e| DbtError::new("dbt", format!("cannot read the notes: {e}")))?;
        let mut found = false;
        for n in notes
            .iter()
            .filter(|n| n.name == b"AMDGPU" && n.kind == NT_AMDGPU_METADATA)
        {
            let start = n.desc_offset as usize;
            let desc = &co.bytes()[start..start + n.desc.len()];
            // The value of `amdhsa.target`: a msgpack fixstr or str8.
            let key = b"amdhsa.target";
            if let Some(p) = find(desc, key) {
                let at = p + key.len();
                let (len, start_v) = match desc.get(at) {
                    Some(&b) if b & 0xe0 == 0xa0 => (usize::from(b & 0x1f), at + 1),
                    Some(&0xd9) => (usize::from(desc.get(at + 1).copied().unwrap_or(0)), at + 2),
                    _ => (0, at),
                };
                let value = &desc[start_v..(start_v + len).min(desc.len())];
                let text = String::from_utf8_lossy(value).to_string();
                // `amdgcn-amd-amdhsa--gfx950[:features]`, or the newer
                // `amdgpu9.50-amd-amdhsa-unknown-gfx950` (the version in the
                // architecture name).
                let version = |t: Target| {
                    let n = &t.name()[3..];
                    format!("amdgpu{}.{}", &n[..1], &n[1..])
                };
                let new_text = text
                    .replace(co.target().name(), host.name())
                    .replace(&version(co.target()), &version(host));
                if new_text.len() == text.len() && new_text != text {
                    self.bytes[start + start_v..start + start_v + len]
                        .copy_from_slice(new_text.as_bytes());
                    found = true;
                }
            }
        }
        if co.metadata().is_some() && !found {
            return Err(DbtError::new(
                "dbt",
                "the metadata note has no amdhsa.target naming the guest",
            ));
        }
        Ok(())
    }

    /// Writes a kernel descriptor back at its address.
    pub fn write_descriptor(
        &mut self,
        co: &CodeObject,
        addr: u64,
        d: &KernelDescriptor,
    ) -> Result<(), DbtError> {
        let off = co.elf().file_offset_of(addr, 64).ok_or_else(|| {
            DbtError::new("dbt", format!("descriptor at 0x{addr:x} has no file data"))
        })?;
        let off = off as usize;
        self.bytes[off..off + 64].copy_from_slice(&d.to_bytes());
        Ok(())
    }

    /// Appends the trampoline segment (when there is one): its file data at
    /// the next page, the program header `PT_GNU_STACK` turned into its
    /// `PT_LOAD`, and a `.text.dbt` section header (with the section name
    /// table and section headers rewritten at the end of the file).
    pub fn finish(self, t: Trampolines, co: &CodeObject) -> Result<Vec<u8>, DbtError> {
        if t.code.is_empty() {
            return Ok(self.bytes);
        }
        let size = t.code.len() as u64;
        self.append(
            co,
            &NewSegment {
                vaddr: t.vaddr,
                data: t.code,
                flags: PF_RX,
                sections: vec![(".text.dbt", 0, size, SHF_AX)],
            },
            &[],
        )
        .map_err(|e| DbtError::new("dbt", e))
    }

    /// Appends `seg`: its file data at the next page, the program header
    /// `PT_GNU_STACK` turned into its `PT_LOAD` (AMDGPU loaders ignore
    /// `PT_GNU_STACK`, so the program header table does not move), a
    /// section header per named part of it, and after it the non-allocated
    /// sections `notes` (name, data); the section name table and section
    /// header table are written again at the end of the file.
    pub fn append(
        mut self,
        co: &CodeObject,
        seg: &NewSegment,
        notes: &[(&str, Vec<u8>)],
    ) -> Result<Vec<u8>, String> {
        let elf = co.elf();
        let h = &elf.header;
        let idx = elf
            .segments
            .iter()
            .position(|p| p.kind == PT_GNU_STACK)
            .ok_or_else(|| {
                "no PT_GNU_STACK program header to hold the appended segment (relinking with ld.lld-22 adds one)".to_string()
            })?;
        if elf.segments[idx + 1..].iter().any(|p| p.kind == PT_LOAD) {
            return Err(
                "PT_GNU_STACK precedes a PT_LOAD program header; the appended segment would break the PT_LOAD order".into(),
            );
        }
        let file_off = (self.bytes.len() as u64).div_ceil(PAGE) * PAGE;
        self.bytes.resize(file_off as usize, 0);
        self.bytes.extend_from_slice(&seg.data);
        let size = seg.data.len() as u64;
        let ph = h.phoff as usize + idx * 56;
        put32(&mut self.bytes, ph, PT_LOAD);
        put32(&mut self.bytes, ph + 4, seg.flags);
        put64(&mut self.bytes, ph + 8, file_off);
        put64(&mut self.bytes, ph + 16, seg.vaddr);
        put64(&mut self.bytes, ph + 24, seg.vaddr);
        put64(&mut self.bytes, ph + 32, size);
        put64(&mut self.bytes, ph + 40, size);
        put64(&mut self.bytes, ph + 48, PAGE);

        if h.shnum == 0 || h.shoff == 0 {
            return Ok(self.bytes);
        }
        let mut notes_at = Vec::new();
        for (_, data) in notes {
            notes_at.push(self.bytes.len() as u64);
            self.bytes.extend_from_slice(data);
        }
        // A new section name table and section header table at the end.
        let shstr = elf
            .sections
            .get(h.shstrndx as usize)
            .ok_or_else(|| "bad e_shstrndx".to_string())?;
        let mut names = co.section_data(shstr).to_vec();
        let mut headers = Vec::new();
        for &(name, start, len, flags) in &seg.sections {
            let name_off = names.len() as u32;
            names.extend_from_slice(name.as_bytes());
            names.push(0);
            let mut sh = [0u8; 64];
            put32(&mut sh, 0, name_off);
            put32(&mut sh, 4, SHT_PROGBITS);
            put64(&mut sh, 8, flags);
            put64(&mut sh, 16, seg.vaddr + start);
            put64(&mut sh, 24, file_off + start);
            put64(&mut sh, 32, len);
            put64(&mut sh, 48, 256);
            headers.push(sh);
        }
        for ((name, data), &at) in notes.iter().zip(&notes_at) {
            let name_off = names.len() as u32;
            names.extend_from_slice(name.as_bytes());
            names.push(0);
            let mut sh = [0u8; 64];
            put32(&mut sh, 0, name_off);
            put32(&mut sh, 4, SHT_PROGBITS);
            put64(&mut sh, 24, at);
            put64(&mut sh, 32, data.len() as u64);
            put64(&mut sh, 48, 1);
            headers.push(sh);
        }
        let names_off = self.bytes.len() as u64;
        self.bytes.extend_from_slice(&names);
        let shdr_off = (self.bytes.len() as u64).div_ceil(8) * 8;
        self.bytes.resize(shdr_off as usize, 0);
        let old = h.shoff as usize;
        let n = h.shnum as usize;
        let table = co.bytes()[old..old + n * 64].to_vec();
        self.bytes.extend_from_slice(&table);
        for sh in &headers {
            self.bytes.extend_from_slice(sh);
        }
        let s = shdr_off as usize + h.shstrndx as usize * 64;
        put64(&mut self.bytes, s + 24, names_off);
        put64(&mut self.bytes, s + 32, names.len() as u64);
        put64(&mut self.bytes, 40, shdr_off);
        let shnum =
            u16::try_from(n + headers.len()).map_err(|_| "too many sections".to_string())?;
        self.bytes[60..62].copy_from_slice(&shnum.to_le_bytes());
        Ok(self.bytes)
    }
}

/// A loadable segment to append: its address, bytes, `p_flags` and the
/// sections it holds (name, offset in the segment, size, `sh_flags`).
pub(crate) struct NewSegment {
    pub vaddr: u64,
    pub data: Vec<u8>,
    pub flags: u32,
    pub sections: Vec<(&'static str, u64, u64, u64)>,
}

/// The page after the highest loaded byte of `co`: where an appended
/// segment goes.
pub(crate) fn end_of_image(co: &CodeObject) -> u64 {
    let end = co
        .elf()
        .segments
        .iter()
        .filter(|p| p.kind == PT_LOAD)
        .map(|p| p.vaddr + p.memsz)
        .max()
        .unwrap_or(0);
    end.div_ceil(PAGE) * PAGE
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The trampoline code, placed at `vaddr` (the page after the highest
/// loaded byte).
pub(crate) struct Trampolines {
    pub vaddr: u64,
    pub code: Vec<u8>,
}

/// The `s_branch` from `from` (the branch's address) to `to`.
fn branch(from: u64, to: u64) -> Result<u32, String> {
    let delta = (to as i64 - (from as i64 + 4)) / 4;
    let d = i16::try_from(delta).map_err(|_| {
        format!("the trampoline is {delta} dwords away, out of s_branch's range (code objects above 128 KiB of code are not translated)")
    })?;
    Ok(enc::s_branch(d))
}

impl Trampolines {
    pub fn new(co: &CodeObject) -> Trampolines {
        Trampolines {
            vaddr: end_of_image(co),
            code: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.code.len()
    }

    /// Replaces the instructions from `s` up to `end` by `seq`: an
    /// `s_branch` at `s` to a trampoline running `seq` and branching back
    /// to `end`. The instructions after `s` keep their bytes (the caller
    /// patches them on their own).
    pub fn add_run(
        &mut self,
        out: &mut Editor,
        s: &Site,
        end: u64,
        seq: &enc::Seq,
    ) -> Result<(), String> {
        let len = s.inst.len();
        let at = s.file_offset;
        let here = self.vaddr + self.code.len() as u64;
        put32(&mut out.bytes, at, branch(s.address, here)?);
        for i in 1..len / 4 {
            put32(&mut out.bytes, at + 4 * i, enc::s_nop(0));
        }
        self.code.extend_from_slice(&seq.bytes());
        let back_at = self.vaddr + self.code.len() as u64;
        let back = branch(back_at, end)?;
        self.code.extend_from_slice(&back.to_le_bytes());
        Ok(())
    }

    /// Replaces the instruction at `s` by `seq`: in place when it fits
    /// (padded with `s_nop 0`), else by an `s_branch` to a trampoline that
    /// runs `seq` and branches back.
    pub fn add(&mut self, out: &mut Editor, s: &Site, seq: &enc::Seq) -> Result<(), String> {
        let len = s.inst.len();
        let at = s.file_offset;
        if seq.words.len() * 4 <= len {
            let mut w = seq.words.clone();
            w.resize(len / 4, enc::s_nop(0));
            for (i, x) in w.iter().enumerate() {
                put32(&mut out.bytes, at + 4 * i, *x);
            }
            return Ok(());
        }
        let here = self.vaddr + self.code.len() as u64;
        put32(&mut out.bytes, at, branch(s.address, here)?);
        for i in 1..len / 4 {
            put32(&mut out.bytes, at + 4 * i, enc::s_nop(0));
        }
        self.code.extend_from_slice(&seq.bytes());
        let back_at = self.vaddr + self.code.len() as u64;
        let back = branch(back_at, s.address + len as u64)?;
        self.code.extend_from_slice(&back.to_le_bytes());
        Ok(())
    }
}
