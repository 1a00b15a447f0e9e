//! ELF64 little-endian reading for AMDGPU code objects: the file header and
//! its AMDGPU `e_flags`, section headers, program headers, symbol tables and
//! notes (System V gABI "ELF Header", "Sections", "Symbol Table"; LLVM
//! AMDGPUUsage "ELF Code Object").

use crate::error::{Error, ErrorKind, Reader, Result};
use crate::mach_table::MACH_NAMES;
use rocjitsu_isa::Target;

/// `e_machine` for AMD GPUs.
pub const EM_AMDGPU: u16 = 224;
/// `EI_OSABI` of HSA code objects.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `EI_OSABI` of PAL code objects.
pub const ELFOSABI_AMDGPU_PAL: u8 = 65;
/// `EI_OSABI` of Mesa3D code objects.
pub const ELFOSABI_AMDGPU_MESA3D: u8 = 66;

/// Section header types used here.
pub const SHT_NULL: u32 = 0;
pub const SHT_PROGBITS: u32 = 1;
pub const SHT_SYMTAB: u32 = 2;
pub const SHT_STRTAB: u32 = 3;
pub const SHT_NOTE: u32 = 7;
pub const SHT_NOBITS: u32 = 8;
pub const SHT_RELA: u32 = 4;
pub const SHT_DYNSYM: u32 = 11;

/// Section flag: executable instructions.
pub const SHF_EXECINSTR: u64 = 0x4;

/// Program header types used here.
pub const PT_LOAD: u32 = 1;
pub const PT_DYNAMIC: u32 = 2;
pub const PT_NOTE: u32 = 4;
/// Segment flag: executable.
pub const PF_X: u32 = 1;

/// The AMDGPU metadata note type (`NT_AMDGPU_METADATA`, owner "AMDGPU").
pub const NT_AMDGPU_METADATA: u32 = 32;

const EHDR_SIZE: u64 = 64;
const SHDR_SIZE: u64 = 64;
const PHDR_SIZE: u64 = 56;
const SYM_SIZE: u64 = 24;
const RELA_SIZE: u64 = 24;

/// AMDGPU relocation types (`r_type` of ELF64_R_INFO), from the AMDGPU
/// ELF ABI (LLVM's `AMDGPUUsage`, "Relocation Records").
pub mod reloc {
    pub const ABS32_LO: u32 = 1;
    pub const ABS32_HI: u32 = 2;
    pub const ABS64: u32 = 3;
    pub const REL32: u32 = 4;
    pub const REL64: u32 = 5;
    pub const ABS32: u32 = 6;
    pub const GOTPCREL: u32 = 7;
    pub const GOTPCREL32_LO: u32 = 8;
    pub const GOTPCREL32_HI: u32 = 9;
    pub const REL32_LO: u32 = 10;
    pub const REL32_HI: u32 = 11;
}

/// One `Elf64_Rela` entry of an `SHT_RELA` section.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Rela {
    /// Index of the section the entry patches (the RELA section's `sh_info`).
    pub section: u32,
    /// `r_offset`: the patched byte's offset in that section (an address in
    /// executables and shared objects).
    pub offset: u64,
    /// `r_type`.
    pub kind: u32,
    /// The symbol (`r_sym`) as an index into [`Elf::symbols`]; `None` for 0.
    pub symbol: Option<usize>,
    /// `r_addend`.
    pub addend: i64,
}

/// The state of a target feature (`xnack`, `sramecc`) in a code object.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum FeatureState {
    /// The target does not support the feature.
    Unsupported,
    /// Code works with the feature on or off (no suffix in the target ID).
    Any,
    /// Code requires the feature off (`:xnack-`).
    Off,
    /// Code requires the feature on (`:xnack+`).
    On,
}

impl FeatureState {
    fn from_v4_bits(bits: u32) -> Self {
        match bits & 3 {
            0 => FeatureState::Unsupported,
            1 => FeatureState::Any,
            2 => FeatureState::Off,
            _ => FeatureState::On,
        }
    }

    fn suffix(self) -> Option<char> {
        match self {
            FeatureState::On => Some('+'),
            FeatureState::Off => Some('-'),
            _ => None,
        }
    }
}

/// The AMDGPU interpretation of ELF `e_flags`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct AmdgpuFlags {
    /// EF_AMDGPU_MACH (bits 0-7).
    pub mach: u32,
    /// XNACK (bits 8-9 in code object v4+, bit 8 in v3).
    pub xnack: FeatureState,
    /// SRAMECC (bits 10-11 in code object v4+, bit 9 in v3).
    pub sramecc: FeatureState,
    /// EF_AMDGPU_GENERIC_VERSION (bits 24-31, code object v6+); 0 when not generic.
    pub generic_version: u8,
}

impl AmdgpuFlags {
    /// Decodes `e_flags` for a given code object version.
    pub fn from_e_flags(flags: u32, code_object_version: u32) -> Self {
        let (xnack, sramecc) = if code_object_version >= 4 {
            (
                FeatureState::from_v4_bits(flags >> 8),
                FeatureState::from_v4_bits(flags >> 10),
            )
        } else {
            let st = |b: u32| {
                if flags & b != 0 {
                    FeatureState::On
                } else {
                    FeatureState::Any
                }
            };
            (st(0x100), st(0x200))
        };
        AmdgpuFlags {
            mach: flags & 0xff,
            xnack,
            sramecc,
            generic_version: if code_object_version >= 6 {
                (flags >> 24) as u8
            } else {
                0
            },
        }
    }

    /// LLVM's processor name for the mach value (`gfx942`), if known.
    pub fn processor(&self) -> Option<&'static str> {
        mach_name(self.mach)
    }

    /// The target ID as LLVM writes it (`gfx90a:sramecc+:xnack-`); the mach
    /// value in hex when the processor is unknown.
    pub fn target_id(&self) -> String {
        let mut s = match self.processor() {
            Some(p) => p.to_string(),
            None => format!("mach-0x{:x}", self.mach),
        };
        if let Some(c) = self.sramecc.suffix() {
            s.push_str(":sramecc");
            s.push(c);
        }
        if let Some(c) = self.xnack.suffix() {
            s.push_str(":xnack");
            s.push(c);
        }
        s
    }
}

/// LLVM's processor name for an EF_AMDGPU_MACH value.
pub fn mach_name(mach: u32) -> Option<&'static str> {
    MACH_NAMES
        .iter()
        .find(|(m, _)| *m == mach)
        .map(|(_, name)| *name)
}

/// The ELF file header fields this reader keeps.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Header {
    /// `EI_OSABI`.
    pub os_abi: u8,
    /// `EI_ABIVERSION`.
    pub abi_version: u8,
    /// `e_type` (1 relocatable, 2 executable, 3 shared object).
    pub e_type: u16,
    /// `e_machine`.
    pub machine: u16,
    /// `e_entry`.
    pub entry: u64,
    /// `e_phoff`.
    pub phoff: u64,
    /// `e_shoff`.
    pub shoff: u64,
    /// `e_flags`.
    pub flags: u32,
    /// Number of program headers (after extended numbering).
    pub phnum: u32,
    /// Number of section headers (after extended numbering).
    pub shnum: u32,
    /// Index of the section name string table (after extended numbering).
    pub shstrndx: u32,
}

impl Header {
    /// The code object version: 2 + `EI_ABIVERSION` for HSA code objects
    /// (ABI version 1 is v3, 2 is v4, 3 is v5, 4 is v6).
    pub fn code_object_version(&self) -> u32 {
        u32::from(self.abi_version) + 2
    }

    /// `e_type == ET_REL`: section-relative symbol values.
    pub fn is_relocatable(&self) -> bool {
        self.e_type == 1
    }
}

/// One section header.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Section {
    /// Index in the section header table.
    pub index: u32,
    /// Name from the section name string table.
    pub name: String,
    /// `sh_type`.
    pub kind: u32,
    /// `sh_flags`.
    pub flags: u64,
    /// `sh_addr`.
    pub addr: u64,
    /// `sh_offset`.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
    /// `sh_link`.
    pub link: u32,
    /// `sh_info`.
    pub info: u32,
    /// `sh_addralign`.
    pub addralign: u64,
    /// `sh_entsize`.
    pub entsize: u64,
}

impl Section {
    /// Whether the section occupies bytes in the file.
    pub fn has_file_data(&self) -> bool {
        self.kind != SHT_NOBITS && self.kind != SHT_NULL
    }

    /// Whether the section holds executable code.
    pub fn is_executable(&self) -> bool {
        self.flags & SHF_EXECINSTR != 0
    }
}

/// One program header.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Segment {
    /// `p_type`.
    pub kind: u32,
    /// `p_flags`.
    pub flags: u32,
    /// `p_offset`.
    pub offset: u64,
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_paddr`.
    pub paddr: u64,
    /// `p_filesz`.
    pub filesz: u64,
    /// `p_memsz`.
    pub memsz: u64,
    /// `p_align`.
    pub align: u64,
}

/// `STT_*` symbol types.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SymbolType {
    NoType,
    Object,
    Func,
    Section,
    File,
    Common,
    Tls,
    /// `STT_AMDGPU_HSA_KERNEL` (10) in old code objects.
    AmdgpuHsaKernel,
    Other(u8),
}

impl SymbolType {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => SymbolType::NoType,
            1 => SymbolType::Object,
            2 => SymbolType::Func,
            3 => SymbolType::Section,
            4 => SymbolType::File,
            5 => SymbolType::Common,
            6 => SymbolType::Tls,
            10 => SymbolType::AmdgpuHsaKernel,
            v => SymbolType::Other(v),
        }
    }

    /// The name llvm-readelf prints (`FUNC`, `OBJECT`, ...).
    pub fn readelf_name(self) -> String {
        match self {
            SymbolType::NoType => "NOTYPE".into(),
            SymbolType::Object => "OBJECT".into(),
            SymbolType::Func => "FUNC".into(),
            SymbolType::Section => "SECTION".into(),
            SymbolType::File => "FILE".into(),
            SymbolType::Common => "COMMON".into(),
            SymbolType::Tls => "TLS".into(),
            SymbolType::AmdgpuHsaKernel => "AMDGPU_HSA_KERNEL".into(),
            SymbolType::Other(v) => format!("{v}"),
        }
    }
}

/// `STB_*` symbol bindings.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SymbolBinding {
    Local,
    Global,
    Weak,
    Other(u8),
}

impl SymbolBinding {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => SymbolBinding::Local,
            1 => SymbolBinding::Global,
            2 => SymbolBinding::Weak,
            v => SymbolBinding::Other(v),
        }
    }

    /// The name llvm-readelf prints (`LOCAL`, `GLOBAL`, `WEAK`).
    pub fn readelf_name(self) -> String {
        match self {
            SymbolBinding::Local => "LOCAL".into(),
            SymbolBinding::Global => "GLOBAL".into(),
            SymbolBinding::Weak => "WEAK".into(),
            SymbolBinding::Other(v) => format!("{v}"),
        }
    }
}

/// Which symbol table a symbol came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SymbolTable {
    /// `.symtab` (SHT_SYMTAB).
    Symtab,
    /// `.dynsym` (SHT_DYNSYM).
    Dynsym,
}

/// One symbol table entry.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Symbol {
    /// Name from the linked string table.
    pub name: String,
    /// `st_value`: an address, or a section offset in relocatable objects.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
    /// Type (low 4 bits of `st_info`).
    pub kind: SymbolType,
    /// Binding (high 4 bits of `st_info`).
    pub binding: SymbolBinding,
    /// Visibility (low 2 bits of `st_other`).
    pub visibility: u8,
    /// `st_shndx`: the section index (0 undefined, 0xfff1 absolute).
    pub shndx: u16,
    /// The table this entry is in.
    pub table: SymbolTable,
    /// Index within that table.
    pub index: u32,
}

/// One ELF note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note<'a> {
    /// Owner name, without the terminating NUL.
    pub name: &'a [u8],
    /// `n_type`.
    pub kind: u32,
    /// Descriptor bytes.
    pub desc: &'a [u8],
    /// File offset of the descriptor.
    pub desc_offset: u64,
}

/// A parsed ELF file: headers and tables, borrowing nothing.
#[derive(Clone, Debug)]
pub struct Elf {
    pub header: Header,
    pub sections: Vec<Section>,
    pub segments: Vec<Segment>,
    /// Entries of `.symtab` then `.dynsym`, without the null entry 0.
    pub symbols: Vec<Symbol>,
}

/// Checks the identification bytes and machine of an AMDGPU ELF header.
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

impl Elf {
    /// Parses headers, sections, segments and symbols of an AMDGPU ELF64
    /// little-endian file: `e_machine` must be EM_AMDGPU and an HSA code
    /// object must have a v3-v6 ABI version.
    pub fn parse(file: &str, bytes: &[u8]) -> Result<Elf> {
        let r = Reader::new(file, bytes);
        let elf = Elf::parse_any(file, bytes)?;
        if elf.header.machine != EM_AMDGPU {
            return Err(r.err(18, ErrorKind::WrongMachine(elf.header.machine)));
        }
        let h = &elf.header;
        if h.os_abi == ELFOSABI_AMDGPU_HSA && !(1..=4).contains(&h.abi_version) {
            return Err(r.err(
                8,
                ErrorKind::UnsupportedElf {
                    field: "ABI version",
                    value: format!(
                        "{} (code object v3-v6 have ABI versions 1-4)",
                        h.abi_version
                    ),
                },
            ));
        }
        Ok(elf)
    }

    /// Parses any ELF64 little-endian file (a HIP host object, for one).
    pub fn parse_any(file: &str, bytes: &[u8]) -> Result<Elf> {
        let r = Reader::new(file, bytes);
        let ident = r.slice(0, 16, "ELF identification")?;
        if &ident[0..4] != b"\x7fELF" {
            return Err(r.err(
                0,
                ErrorKind::BadMagic {
                    what: "an ELF file",
                },
            ));
        }
        if ident[4] != 2 {
            return Err(r.err(
                4,
                ErrorKind::UnsupportedElf {
                    field: "class",
                    value: format!("{} (only ELF64 is supported)", ident[4]),
                },
            ));
        }
        if ident[5] != 1 {
            return Err(r.err(
                5,
                ErrorKind::UnsupportedElf {
                    field: "data encoding",
                    value: format!("{} (only little-endian is supported)", ident[5]),
                },
            ));
        }
        r.slice(0, EHDR_SIZE, "ELF header")?;
        let machine = r.u16(18, "e_machine")?;
        let mut header = Header {
            os_abi: ident[7],
            abi_version: ident[8],
            e_type: r.u16(16, "e_type")?,
            machine,
            entry: r.u64(24, "e_entry")?,
            phoff: r.u64(32, "e_phoff")?,
            shoff: r.u64(40, "e_shoff")?,
            flags: r.u32(48, "e_flags")?,
            phnum: u32::from(r.u16(56, "e_phnum")?),
            shnum: u32::from(r.u16(60, "e_shnum")?),
            shstrndx: u32::from(r.u16(62, "e_shstrndx")?),
        };
        let shentsize = r.u16(58, "e_shentsize")?;
        if header.shoff != 0 && u64::from(shentsize) != SHDR_SIZE {
            return Err(r.err(
                58,
                ErrorKind::Invalid {
                    what: "e_shentsize",
                    detail: format!("{shentsize}, expected {SHDR_SIZE}"),
                },
            ));
        }
        // Extended numbering: counts that do not fit in 16 bits live in
        // section header 0.
        if header.shoff != 0 {
            let sh0 = r.region(header.shoff, SHDR_SIZE, "section header 0")?;
            let sh0_size = u64::from_le_bytes(sh0[32..40].try_into().unwrap_or([0; 8]));
            let sh0_link = u32::from_le_bytes(sh0[40..44].try_into().unwrap_or([0; 4]));
            let sh0_info = u32::from_le_bytes(sh0[44..48].try_into().unwrap_or([0; 4]));
            if header.shnum == 0 {
                header.shnum = u32::try_from(sh0_size).unwrap_or(u32::MAX);
            }
            if header.shstrndx == 0xffff {
                header.shstrndx = sh0_link;
            }
            if header.phnum == 0xffff {
                header.phnum = sh0_info;
            }
        }
        let sections = parse_sections(&r, &header)?;
        let segments = parse_segments(&r, &header)?;
        let mut elf = Elf {
            header,
            sections,
            segments,
            symbols: Vec::new(),
        };
        elf.symbols = parse_symbols(&r, &elf.sections)?;
        if elf.sections.is_empty() {
            elf.symbols = elf.dynamic_symbols(&r)?;
        }
        Ok(elf)
    }

    /// The AMDGPU meaning of `e_flags`.
    pub fn amdgpu_flags(&self) -> AmdgpuFlags {
        AmdgpuFlags::from_e_flags(self.header.flags, self.header.code_object_version())
    }

    /// The implemented target of this file, or an error naming the mach value.
    pub fn target(&self, file: &str) -> Result<Target> {
        let mach = self.header.flags & 0xff;
        Target::from_elf_mach(mach).ok_or_else(|| {
            Error::new(
                file,
                None,
                48,
                ErrorKind::UnknownTarget {
                    mach,
                    name: mach_name(mach),
                },
            )
        })
    }

    /// The section a symbol is defined in (`None` for undefined, absolute
    /// and common symbols).
    pub fn symbol_section(&self, sym: &Symbol) -> Option<&Section> {
        if sym.shndx == 0 || sym.shndx >= 0xff00 {
            return None;
        }
        self.sections.get(usize::from(sym.shndx))
    }

    /// The file offset of `len` bytes at virtual address `addr`, through the
    /// PT_LOAD segments (for relocatable objects, which have none, through
    /// the sections' addresses).
    pub fn file_offset_of(&self, addr: u64, len: u64) -> Option<u64> {
        let end = addr.checked_add(len)?;
        if let Some(p) = self.segments.iter().find(|p| {
            p.kind == PT_LOAD && p.vaddr <= addr && end <= p.vaddr.saturating_add(p.filesz)
        }) {
            return p.offset.checked_add(addr - p.vaddr);
        }
        let s = self.sections.iter().find(|s| {
            s.has_file_data() && s.addr <= addr && end <= s.addr.saturating_add(s.size)
        })?;
        s.offset.checked_add(addr - s.addr)
    }

    /// The dynamic symbol table found through PT_DYNAMIC (DT_SYMTAB,
    /// DT_STRTAB, DT_STRSZ, and DT_HASH for the count), for files whose
    /// section headers were stripped; empty when any of these is missing.
    fn dynamic_symbols(&self, r: &Reader<'_, '_>) -> Result<Vec<Symbol>> {
        const DT_NULL: u64 = 0;
        const DT_HASH: u64 = 4;
        const DT_STRTAB: u64 = 5;
        const DT_SYMTAB: u64 = 6;
        const DT_STRSZ: u64 = 10;
        let Some(dynamic) = self.segments.iter().find(|p| p.kind == PT_DYNAMIC) else {
            return Ok(Vec::new());
        };
        let r = r.in_section("PT_DYNAMIC segment");
        let data = r.region(dynamic.offset, dynamic.filesz, "dynamic segment")?;
        let (mut hash, mut strtab, mut symtab, mut strsz) = (None, None, None, None);
        for e in data.chunks_exact(16) {
            let mut t = [0u8; 8];
            t.copy_from_slice(&e[0..8]);
            let mut v = [0u8; 8];
            v.copy_from_slice(&e[8..16]);
            let (tag, val) = (u64::from_le_bytes(t), u64::from_le_bytes(v));
            match tag {
                DT_NULL => break,
                DT_HASH => hash = Some(val),
                DT_STRTAB => strtab = Some(val),
                DT_SYMTAB => symtab = Some(val),
                DT_STRSZ => strsz = Some(val),
                _ => {}
            }
        }
        let (Some(hash), Some(strtab), Some(symtab), Some(strsz)) = (hash, strtab, symtab, strsz)
        else {
            return Ok(Vec::new());
        };
        let at = |addr: u64, len: u64, what: &'static str| {
            self.file_offset_of(addr, len).ok_or_else(|| {
                r.err(
                    dynamic.offset,
                    ErrorKind::Invalid {
                        what,
                        detail: format!(
                            "address 0x{addr:x} (+0x{len:x}) is not in a PT_LOAD segment"
                        ),
                    },
                )
            })
        };
        // DT_HASH: nbucket, nchain; nchain is the number of symbols.
        let nchain = u64::from(r.u32(at(hash, 8, "DT_HASH")? + 4, "DT_HASH nchain")?);
        let syms_off = at(symtab, nchain.saturating_mul(SYM_SIZE), "DT_SYMTAB")?;
        let str_off = at(strtab, strsz, "DT_STRTAB")?;
        let syms = Section {
            index: 0,
            name: "PT_DYNAMIC symbols".into(),
            kind: SHT_DYNSYM,
            flags: 0,
            addr: symtab,
            offset: syms_off,
            size: nchain * SYM_SIZE,
            link: 1,
            info: 0,
            addralign: 8,
            entsize: SYM_SIZE,
        };
        let strs = Section {
            index: 1,
            name: "PT_DYNAMIC strings".into(),
            kind: SHT_STRTAB,
            flags: 0,
            addr: strtab,
            offset: str_off,
            size: strsz,
            link: 0,
            info: 0,
            addralign: 1,
            entsize: 0,
        };
        parse_symbols(&r, &[syms, strs])
    }

    /// The entries of every `SHT_RELA` section, in file order.
    pub fn relocations(&self, file: &str, bytes: &[u8]) -> Result<Vec<Rela>> {
        let mut out = Vec::new();
        for s in self.sections.iter().filter(|s| s.kind == SHT_RELA) {
            let r = Reader::new(file, bytes).in_section(&s.name);
            if s.entsize != RELA_SIZE || s.size % RELA_SIZE != 0 {
                return Err(r.err(
                    s.offset,
                    ErrorKind::Invalid {
                        what: "relocation section",
                        detail: format!(
                            "entry size {} and size {} (Elf64_Rela entries are {RELA_SIZE} bytes)",
                            s.entsize, s.size
                        ),
                    },
                ));
            }
            let table = match self.sections.get(s.link as usize).map(|t| t.kind) {
                Some(SHT_DYNSYM) => SymbolTable::Dynsym,
                _ => SymbolTable::Symtab,
            };
            let data = r.region(s.offset, s.size, "relocation section")?;
            for e in data.chunks_exact(RELA_SIZE as usize) {
                let word = |i: usize| {
                    let mut v = [0u8; 8];
                    v.copy_from_slice(&e[i..i + 8]);
                    u64::from_le_bytes(v)
                };
                let info = word(8);
                let sym = (info >> 32) as u32;
                out.push(Rela {
                    section: s.info,
                    offset: word(0),
                    kind: info as u32,
                    symbol: (sym != 0)
                        .then(|| {
                            self.symbols
                                .iter()
                                .position(|x| x.table == table && x.index == sym)
                        })
                        .flatten(),
                    addend: word(16) as i64,
                });
            }
        }
        Ok(out)
    }

    /// The section with this name.
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The file bytes of a section (empty for NOBITS).
    pub fn section_data<'a>(&self, file: &str, bytes: &'a [u8], s: &Section) -> Result<&'a [u8]> {
        if !s.has_file_data() {
            return Ok(&[]);
        }
        Reader::new(file, bytes)
            .in_section(&s.name)
            .region(s.offset, s.size, "section data")
    }

    /// All notes of all SHT_NOTE sections.
    /// The notes come from the SHT_NOTE sections, or, in a file without
    /// section headers, from the PT_NOTE segments.
    pub fn notes<'a>(&self, file: &str, bytes: &'a [u8]) -> Result<Vec<Note<'a>>> {
        let mut regions: Vec<(&str, u64, u64)> = self
            .sections
            .iter()
            .filter(|s| s.kind == SHT_NOTE)
            .map(|s| (s.name.as_str(), s.offset, s.size))
            .collect();
        if self.sections.is_empty() {
            regions.extend(
                self.segments
                    .iter()
                    .filter(|p| p.kind == PT_NOTE)
                    .map(|p| ("PT_NOTE segment", p.offset, p.filesz)),
            );
        }
        let mut out = Vec::new();
        for (name, offset, size) in regions {
            let s = Section {
                index: 0,
                name: String::new(),
                kind: SHT_NOTE,
                flags: 0,
                addr: 0,
                offset,
                size,
                link: 0,
                info: 0,
                addralign: 0,
                entsize: 0,
            };
            let r = Reader::new(file, bytes).in_section(name);
            r.region(s.offset, s.size, "note section")?;
            let end = s.offset + s.size;
            let mut at = s.offset;
            while at < end {
                let namesz = u64::from(r.u32(at, "note header")?);
                let descsz = u64::from(r.u32(at + 4, "note header")?);
                let kind = r.u32(at + 8, "note header")?;
                let name_at = at + 12;
                let desc_at = name_at + align4(namesz);
                let next = desc_at.saturating_add(align4(descsz));
                if next > end {
                    return Err(r.err(
                        at,
                        ErrorKind::OutOfBounds {
                            what: "note",
                            offset: at,
                            size: next - at,
                            limit: s.size,
                            container: "note section",
                        },
                    ));
                }
                let name = r.slice(name_at, namesz, "note name")?;
                let name = name.strip_suffix(&[0]).unwrap_or(name);
                let desc = r.slice(desc_at, descsz, "note descriptor")?;
                out.push(Note {
                    name,
                    kind,
                    desc,
                    desc_offset: desc_at,
                });
                at = next;
            }
        }
        Ok(out)
    }

    /// The file offset of `value` as a symbol value in section `shndx`,
    /// checked to have `len` bytes of file data in that section.
    pub fn symbol_file_offset(&self, shndx: u16, value: u64, len: u64) -> Option<u64> {
        let s = self.sections.get(usize::from(shndx))?;
        if !s.has_file_data() || shndx == 0 {
            return None;
        }
        let base = if self.header.is_relocatable() {
            0
        } else {
            s.addr
        };
        let rel = value.checked_sub(base)?;
        if rel.checked_add(len)? > s.size {
            return None;
        }
        s.offset.checked_add(rel)
    }
}

fn align4(v: u64) -> u64 {
    v.saturating_add(3) & !3
}

/// Bytes of names one file may make this reader allocate: many symbols can
/// share one long name, so the total is capped rather than each name.
fn name_budget(file_len: usize) -> u64 {
    (file_len as u64).saturating_mul(4).saturating_add(1 << 20)
}

fn cstr(
    r: &Reader<'_, '_>,
    table: &[u8],
    table_off: u64,
    at: u32,
    what: &'static str,
    budget: &mut u64,
) -> Result<String> {
    let start = at as usize;
    let rest = table.get(start..).ok_or_else(|| {
        r.err(
            table_off,
            ErrorKind::Invalid {
                what,
                detail: format!(
                    "string offset {at} past the end of the {}-byte string table",
                    table.len()
                ),
            },
        )
    })?;
    let end = rest.iter().position(|&b| b == 0).ok_or_else(|| {
        r.err(
            table_off + u64::from(at),
            ErrorKind::Invalid {
                what,
                detail: "string not NUL-terminated".into(),
            },
        )
    })?;
    if end as u64 > *budget {
        return Err(r.err(
            table_off + u64::from(at),
            ErrorKind::TooLarge {
                what: "total of symbol and section names",
                size: end as u64,
                limit: *budget,
            },
        ));
    }
    *budget -= end as u64;
    Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
}

fn parse_sections(r: &Reader<'_, '_>, h: &Header) -> Result<Vec<Section>> {
    if h.shoff == 0 || h.shnum == 0 {
        return Ok(Vec::new());
    }
    let table = r.region(
        h.shoff,
        u64::from(h.shnum) * SHDR_SIZE,
        "section header table",
    )?;
    let mut raw = Vec::with_capacity(h.shnum as usize);
    for (i, e) in table.chunks_exact(SHDR_SIZE as usize).enumerate() {
        let u32_at = |o: usize| u32::from_le_bytes([e[o], e[o + 1], e[o + 2], e[o + 3]]);
        let u64_at = |o: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&e[o..o + 8]);
            u64::from_le_bytes(b)
        };
        raw.push((
            u32_at(0),
            Section {
                index: i as u32,
                name: String::new(),
                kind: u32_at(4),
                flags: u64_at(8),
                addr: u64_at(16),
                offset: u64_at(24),
                size: u64_at(32),
                link: u32_at(40),
                info: u32_at(44),
                addralign: u64_at(48),
                entsize: u64_at(56),
            },
        ));
    }
    let strtab: Option<(&[u8], u64, String)> = if h.shstrndx == 0 {
        None
    } else {
        let s = raw
            .get(h.shstrndx as usize)
            .map(|(_, s)| s)
            .ok_or_else(|| {
                r.err(
                    62,
                    ErrorKind::Invalid {
                        what: "e_shstrndx",
                        detail: format!("{} but there are {} sections", h.shstrndx, h.shnum),
                    },
                )
            })?;
        let data =
            r.in_section(".shstrtab")
                .region(s.offset, s.size, "section name string table")?;
        Some((data, s.offset, ".shstrtab".into()))
    };
    let mut out = Vec::with_capacity(raw.len());
    let mut budget = name_budget(r.bytes.len());
    for (name_off, mut s) in raw {
        if let Some((data, off, sname)) = &strtab {
            s.name = cstr(
                &r.in_section(sname),
                data,
                *off,
                name_off,
                "section name",
                &mut budget,
            )?;
        }
        if s.has_file_data() {
            r.in_section(&s.name)
                .region(s.offset, s.size, "section data")?;
        }
        out.push(s);
    }
    Ok(out)
}

fn parse_segments(r: &Reader<'_, '_>, h: &Header) -> Result<Vec<Segment>> {
    if h.phoff == 0 || h.phnum == 0 {
        return Ok(Vec::new());
    }
    let table = r.region(
        h.phoff,
        u64::from(h.phnum) * PHDR_SIZE,
        "program header table",
    )?;
    Ok(table
        .chunks_exact(PHDR_SIZE as usize)
        .map(|e| {
            let u32_at = |o: usize| u32::from_le_bytes([e[o], e[o + 1], e[o + 2], e[o + 3]]);
            let u64_at = |o: usize| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&e[o..o + 8]);
                u64::from_le_bytes(b)
            };
            Segment {
                kind: u32_at(0),
                flags: u32_at(4),
                offset: u64_at(8),
                vaddr: u64_at(16),
                paddr: u64_at(24),
                filesz: u64_at(32),
                memsz: u64_at(40),
                align: u64_at(48),
            }
        })
        .collect())
}

fn parse_symbols(r: &Reader<'_, '_>, sections: &[Section]) -> Result<Vec<Symbol>> {
    let mut out = Vec::new();
    let mut budget = name_budget(r.bytes.len());
    for table_kind in [SHT_SYMTAB, SHT_DYNSYM] {
        for s in sections.iter().filter(|s| s.kind == table_kind) {
            let rs = r.in_section(&s.name);
            if s.entsize != SYM_SIZE || s.size % SYM_SIZE != 0 {
                return Err(rs.err(
                    s.offset,
                    ErrorKind::Invalid {
                        what: "symbol table",
                        detail: format!(
                            "entry size {} and size {} (entries are {SYM_SIZE} bytes)",
                            s.entsize, s.size
                        ),
                    },
                ));
            }
            let data = rs.region(s.offset, s.size, "symbol table")?;
            let strsec = sections.get(s.link as usize).ok_or_else(|| {
                rs.err(
                    s.offset,
                    ErrorKind::Invalid {
                        what: "sh_link",
                        detail: format!("string table index {} does not exist", s.link),
                    },
                )
            })?;
            let strtab =
                r.in_section(&strsec.name)
                    .region(strsec.offset, strsec.size, "string table")?;
            let table = if table_kind == SHT_SYMTAB {
                SymbolTable::Symtab
            } else {
                SymbolTable::Dynsym
            };
            for (i, e) in data.chunks_exact(SYM_SIZE as usize).enumerate().skip(1) {
                let name_off = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
                let mut v = [0u8; 8];
                v.copy_from_slice(&e[8..16]);
                let mut z = [0u8; 8];
                z.copy_from_slice(&e[16..24]);
                out.push(Symbol {
                    name: cstr(
                        &r.in_section(&strsec.name),
                        strtab,
                        strsec.offset,
                        name_off,
                        "symbol name",
                        &mut budget,
                    )?,
                    value: u64::from_le_bytes(v),
                    size: u64::from_le_bytes(z),
                    kind: SymbolType::from_u8(e[4] & 0xf),
                    binding: SymbolBinding::from_u8(e[4] >> 4),
                    visibility: e[5] & 3,
                    shndx: u16::from_le_bytes([e[6], e[7]]),
                    table,
                    index: i as u32,
                });
            }
        }
    }
    Ok(out)
}
