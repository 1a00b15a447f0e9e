//! [`CodeObject`]: one AMDGPU ELF code object with its target, kernels
//! (descriptor, metadata, code range), functions and text, parsed up front so
//! that every accessor is infallible.

use crate::descriptor::{KERNEL_DESCRIPTOR_SIZE, KernelDescriptor};
use crate::elf::{
    AmdgpuFlags, Elf, NT_AMDGPU_METADATA, PF_X, PT_LOAD, Section, Symbol, SymbolTable, SymbolType,
};
use crate::error::{Error, ErrorKind, Reader, Result};
use crate::metadata::{KernelMeta, Metadata};
use crate::msgpack::Value;
use rocjitsu_isa::{Target, WaveSize};
use std::collections::{HashMap, HashSet};

/// A kernel: its descriptor (`name.kd`), metadata entry and code.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Kernel {
    /// Kernel name (the descriptor symbol without `.kd`).
    pub name: String,
    /// The descriptor symbol (`name.kd`).
    pub descriptor_symbol: String,
    /// Address (or section offset, in relocatable objects) of the descriptor.
    pub descriptor_address: u64,
    pub descriptor: KernelDescriptor,
    /// The `amdhsa.kernels` entry whose `.symbol` is the descriptor symbol.
    pub metadata: Option<KernelMeta>,
    /// Address of the first instruction: the descriptor address plus
    /// KERNEL_CODE_ENTRY_BYTE_OFFSET (in relocatable objects, where that
    /// field is filled by a relocation, the kernel's function symbol).
    pub entry: u64,
    /// Size in bytes of the kernel's function symbol (0 if there is none).
    pub code_size: u64,
}

impl Kernel {
    /// The code range `entry..entry+code_size`.
    pub fn code_range(&self) -> std::ops::Range<u64> {
        self.entry..self.entry.saturating_add(self.code_size)
    }
}

/// A function symbol (STT_FUNC): kernels and the functions they call.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Function {
    pub name: String,
    pub address: u64,
    pub size: u64,
    /// Whether a kernel descriptor points at it.
    pub is_kernel: bool,
    /// Index of the section holding it.
    pub shndx: u16,
}

/// The code section: its bytes and load address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Text<'a> {
    /// Address of `bytes[0]` (0 in relocatable objects).
    pub address: u64,
    pub bytes: &'a [u8],
    /// Offset of `bytes[0]` in the file.
    pub file_offset: u64,
}

/// One AMDGPU code object.
#[derive(Clone, Debug)]
pub struct CodeObject {
    name: String,
    bytes: Vec<u8>,
    elf: Elf,
    target: Target,
    flags: AmdgpuFlags,
    metadata: Option<Metadata>,
    kernels: Vec<Kernel>,
    functions: Vec<Function>,
    /// Defined, named symbols (no section/file symbols), deduplicated across
    /// `.symtab` and `.dynsym`, sorted by address.
    by_address: Vec<Symbol>,
    /// Address, file offset and size of the code.
    text: Option<(u64, u64, u64)>,
}

impl CodeObject {
    /// Parses a code object. `name` names the data in errors.
    pub fn parse(name: &str, bytes: impl Into<Vec<u8>>) -> Result<CodeObject> {
        let bytes = bytes.into();
        let elf = Elf::parse(name, &bytes)?;
        let target = elf.target(name)?;
        let flags = elf.amdgpu_flags();
        let metadata = parse_metadata(name, &bytes, &elf)?;

        // `.symtab` comes first, so its entry wins over the `.dynsym` copy.
        let mut by_address: Vec<Symbol> = Vec::new();
        let mut seen = HashSet::new();
        for s in &elf.symbols {
            let defined = s.shndx != 0 && !s.name.is_empty();
            let plain = !matches!(s.kind, SymbolType::Section | SymbolType::File);
            if defined && plain && seen.insert((s.name.as_str(), s.value, s.shndx)) {
                by_address.push(s.clone());
            }
        }
        by_address.sort_by(|a, b| (a.value, &a.name).cmp(&(b.value, &b.name)));

        let kernels = find_kernels(name, &bytes, &elf, metadata.as_ref(), &by_address)?;

        let entries: HashSet<(&str, u64)> =
            kernels.iter().map(|k| (k.name.as_str(), k.entry)).collect();
        let mut functions: Vec<Function> = by_address
            .iter()
            .filter(|s| s.kind == SymbolType::Func)
            .map(|s| Function {
                name: s.name.clone(),
                address: s.value,
                size: s.size,
                is_kernel: entries.contains(&(s.name.as_str(), s.value)),
                shndx: s.shndx,
            })
            .collect();
        functions.sort_by(|a, b| (a.address, &a.name).cmp(&(b.address, &b.name)));

        let text = elf
            .sections
            .iter()
            .find(|s| s.name == ".text" && s.is_executable())
            .or_else(|| {
                elf.sections
                    .iter()
                    .find(|s| s.is_executable() && s.has_file_data())
            })
            .map(|s| (s.addr, s.offset, s.size))
            .or_else(|| {
                // Without section headers: the executable PT_LOAD segment.
                elf.segments
                    .iter()
                    .filter(|_| elf.sections.is_empty())
                    .find(|p| p.kind == PT_LOAD && p.flags & PF_X != 0)
                    .map(|p| (p.vaddr, p.offset, p.filesz))
            });
        Ok(CodeObject {
            name: name.to_string(),
            bytes,
            elf,
            target,
            flags,
            metadata,
            kernels,
            functions,
            by_address,
            text,
        })
    }

    /// The name given to [`CodeObject::parse`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The ELF headers and tables.
    pub fn elf(&self) -> &Elf {
        &self.elf
    }

    pub fn target(&self) -> Target {
        self.target
    }

    /// The decoded `e_flags` (mach, xnack, sramecc, generic version).
    pub fn flags(&self) -> AmdgpuFlags {
        self.flags
    }

    /// Code object version (4, 5, 6).
    pub fn code_object_version(&self) -> u32 {
        self.elf.header.code_object_version()
    }

    /// The target ID (`gfx90a:sramecc+:xnack-`).
    pub fn target_id(&self) -> String {
        self.flags.target_id()
    }

    /// The metadata note, if the object has one.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.metadata.as_ref()
    }

    /// Kernels in descriptor address order.
    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    /// The wave size the object's code runs in: 64 on targets with only
    /// 64-lane waves; otherwise wave32 if any kernel descriptor sets
    /// ENABLE_WAVEFRONT_SIZE32 (or there are no kernels), else wave64.
    pub fn wave_size(&self) -> WaveSize {
        if self.target.wave_size() == 64 {
            return WaveSize::Wave64;
        }
        let ks = &self.kernels;
        if ks.is_empty()
            || ks
                .iter()
                .any(|k| k.descriptor.kernel_code_properties.enable_wavefront_size32)
        {
            WaveSize::Wave32
        } else {
            WaveSize::Wave64
        }
    }

    /// The kernel with this name (or descriptor symbol).
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels
            .iter()
            .find(|k| k.name == name || k.descriptor_symbol == name)
    }

    /// Every function symbol, kernels included, sorted by address.
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// The code section (`.text`, else the first executable section; in a
    /// file without section headers, the executable PT_LOAD segment).
    pub fn text(&self) -> Option<Text<'_>> {
        let (address, offset, size) = self.text?;
        let bytes = self
            .bytes
            .get(usize::try_from(offset).ok()?..usize::try_from(offset.checked_add(size)?).ok()?)?;
        Some(Text {
            address,
            bytes,
            file_offset: offset,
        })
    }

    /// `len` bytes at virtual address `addr` as the loader would map them
    /// (file data only: NOBITS and the zero-filled tail of segments are not
    /// readable here).
    pub fn bytes_at(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let off = self.elf.file_offset_of(addr, len)?;
        self.bytes
            .get(usize::try_from(off).ok()?..usize::try_from(off.checked_add(len)?).ok()?)
    }

    /// File bytes of a section.
    pub fn section_data(&self, s: &Section) -> &[u8] {
        self.elf
            .section_data(&self.name, &self.bytes, s)
            .unwrap_or(&[])
    }

    /// The symbol covering `addr`: a function or object whose range holds
    /// it, else a symbol whose value is exactly `addr`. Function symbols win.
    pub fn symbol_at(&self, addr: u64) -> Option<&Symbol> {
        let end = self.by_address.partition_point(|s| s.value <= addr);
        let candidates = &self.by_address[..end];
        let covers = |s: &&Symbol| addr - s.value < s.size.max(1);
        candidates
            .iter()
            .rev()
            .filter(covers)
            .find(|s| s.kind == SymbolType::Func)
            .or_else(|| candidates.iter().rev().find(covers))
    }

    /// The function whose range holds `addr`.
    pub fn function_at(&self, addr: u64) -> Option<&Function> {
        let end = self.functions.partition_point(|f| f.address <= addr);
        self.functions[..end]
            .iter()
            .rev()
            .find(|f| addr - f.address < f.size.max(1))
    }
}

fn parse_metadata(name: &str, bytes: &[u8], elf: &Elf) -> Result<Option<Metadata>> {
    let notes = elf.notes(name, bytes)?;
    let Some(note) = notes
        .iter()
        .find(|n| n.name == b"AMDGPU" && n.kind == NT_AMDGPU_METADATA)
    else {
        return Ok(None);
    };
    let section = elf
        .sections
        .iter()
        .find(|s| s.offset <= note.desc_offset && note.desc_offset < s.offset + s.size)
        .map(|s| s.name.as_str());
    let value = Value::decode(note.desc).map_err(|e| {
        Error::new(
            name,
            section,
            note.desc_offset + e.offset as u64,
            ErrorKind::Msgpack(e.what.to_string()),
        )
    })?;
    Metadata::from_value(value)
        .map(Some)
        .map_err(|e| Error::new(name, section, note.desc_offset, ErrorKind::Msgpack(e)))
}

fn find_kernels(
    name: &str,
    bytes: &[u8],
    elf: &Elf,
    metadata: Option<&Metadata>,
    symbols: &[Symbol],
) -> Result<Vec<Kernel>> {
    let mut out = Vec::new();
    let mut funcs_by_name: HashMap<&str, &Symbol> = HashMap::new();
    let mut funcs_by_value: HashMap<u64, Vec<&Symbol>> = HashMap::new();
    for f in symbols.iter().filter(|f| f.kind == SymbolType::Func) {
        funcs_by_name.entry(f.name.as_str()).or_insert(f);
        funcs_by_value.entry(f.value).or_default().push(f);
    }
    let mut kernel_names = HashSet::new();
    let mut meta_by_symbol: HashMap<&str, &KernelMeta> = HashMap::new();
    for k in metadata.map(|m| m.kernels.as_slice()).unwrap_or_default() {
        meta_by_symbol.entry(k.symbol.as_str()).or_insert(k);
    }
    for s in symbols {
        let Some(kname) = s.name.strip_suffix(".kd") else {
            continue;
        };
        // One kernel per descriptor name (a repeated name, which no linker
        // produces, would otherwise repeat its metadata).
        if s.kind != SymbolType::Object || !kernel_names.insert(s.name.as_str()) {
            continue;
        }
        let section = elf.sections.get(usize::from(s.shndx));
        let sname = section.map(|x| x.name.as_str());
        let off = elf
            .symbol_file_offset(s.shndx, s.value, KERNEL_DESCRIPTOR_SIZE as u64)
            .or_else(|| {
                // Without section headers, through the PT_LOAD segments.
                elf.sections
                    .is_empty()
                    .then(|| elf.file_offset_of(s.value, KERNEL_DESCRIPTOR_SIZE as u64))
                    .flatten()
            })
            .ok_or_else(|| {
                Error::new(
                    name,
                    sname,
                    section.map_or(0, |x| x.offset),
                    ErrorKind::Invalid {
                        what: "kernel descriptor",
                        detail: format!(
                            "symbol {} at 0x{:x} does not have 64 bytes of data in section {}",
                            s.name, s.value, s.shndx
                        ),
                    },
                )
            })?;
        let raw = Reader::new(name, bytes)
            .in_section(sname.unwrap_or(""))
            .slice(off, KERNEL_DESCRIPTOR_SIZE as u64, "kernel descriptor")?;
        let mut b = [0u8; KERNEL_DESCRIPTOR_SIZE];
        b.copy_from_slice(raw);
        let descriptor = KernelDescriptor::from_bytes(&b);
        let func = funcs_by_name.get(kname);
        let entry = if elf.header.is_relocatable() {
            func.map_or(0, |f| f.value)
        } else {
            s.value
                .wrapping_add(descriptor.kernel_code_entry_byte_offset as u64)
        };
        let code_size = funcs_by_value
            .get(&entry)
            .and_then(|fs| {
                fs.iter()
                    .min_by_key(|f| (f.name != kname, f.table == SymbolTable::Dynsym))
            })
            .map_or(0, |f| f.size);
        out.push(Kernel {
            name: kname.to_string(),
            descriptor_symbol: s.name.clone(),
            descriptor_address: s.value,
            descriptor,
            metadata: meta_by_symbol.get(s.name.as_str()).map(|m| (*m).clone()),
            entry,
            code_size,
        });
    }
    Ok(out)
}
