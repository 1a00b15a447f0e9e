//! `llvm-objdump -d` compatible listings of AMDGPU code objects.
//!
//! The layout follows what `llvm-objdump-22 -d` prints for AMDGPU:
//!
//! - each executable section is split at its symbols (`.symtab`, or
//!   `.dynsym` when there is no other symbol); a section that does not start
//!   at a symbol gets a label named after the section;
//! - several symbols at one address print one label, the last in
//!   (address, name, type) order;
//! - the range of an `STT_OBJECT` symbol is dumped as bytes and ASCII, the
//!   range of any other symbol is decoded up to the next symbol;
//! - an instruction line is the text padded to column 60, then the address
//!   and the dwords in a `//` comment; undecodable words print as `.long`,
//!   a tail of fewer than 4 bytes as `.byte`;
//! - a PC-relative operand (SOPP branches, `s_call_b64`, `s_cbranch_i_fork`)
//!   whose target is exactly an `STT_NOTYPE` symbol of the section prints as
//!   that symbol's name; otherwise SOPP branches get a ` <sym+0xoff>`
//!   annotation naming the nearest symbol at or before the target.

use rocjitsu_code::CodeObject;
use rocjitsu_code::elf::{Section, SymbolTable, SymbolType};
use rocjitsu_isa::{Target, True16, WaveSize};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Output options shared by every code object of a run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Omit the address before symbol labels.
    pub no_leading_addr: bool,
    /// Only print the symbol with this name, up to its `st_size` (objdump
    /// would go on through the alignment padding up to the next symbol).
    pub only: Option<String>,
    /// Print JSON lines instead of text.
    pub json: bool,
    /// The wave size RDNA code is decoded for; `None` for the one the code
    /// object's kernels declare ([`CodeObject::wave_size`]).
    pub wave: Option<WaveSize>,
    /// The 16-bit operand syntax (gfx1201: `--mattr=+real-true16`).
    pub t16: True16,
}

/// A symbol as the listing uses it.
#[derive(Clone, Debug)]
struct Sym {
    addr: u64,
    name: String,
    /// The ELF `STT_*` value.
    kind: u8,
    /// `st_size` (0 when unknown).
    size: u64,
}

const STT_NOTYPE: u8 = 0;
const STT_OBJECT: u8 = 1;
const STT_FUNC: u8 = 2;

fn type_code(t: SymbolType) -> u8 {
    match t {
        SymbolType::NoType => 0,
        SymbolType::Object => 1,
        SymbolType::Func => 2,
        SymbolType::Section => 3,
        SymbolType::File => 4,
        SymbolType::Common => 5,
        SymbolType::Tls => 6,
        SymbolType::AmdgpuHsaKernel => 10,
        SymbolType::Other(v) => v,
    }
}

/// Symbols of a code object, grouped by section: those of `.symtab`, or of
/// `.dynsym` when `.symtab` defines none in a section (a stripped object).
struct SymbolIndex {
    /// Per section header index: its symbols, sorted.
    by_section: Vec<Vec<Sym>>,
    /// Absolute and undefined symbols, sorted.
    absolute: Vec<Sym>,
    /// Section header indices sorted by address (stable).
    by_address: Vec<usize>,
}

fn sort_syms(v: &mut [Sym]) {
    v.sort_by(|a, b| (a.addr, &a.name, a.kind).cmp(&(b.addr, &b.name, b.kind)));
}

impl SymbolIndex {
    fn new(co: &CodeObject) -> SymbolIndex {
        let elf = co.elf();
        let n = elf.sections.len();
        let mut by_section: Vec<Vec<Sym>> = vec![Vec::new(); n];
        let mut absolute = Vec::new();
        let mut any = false;
        for table in [SymbolTable::Symtab, SymbolTable::Dynsym] {
            if any {
                break;
            }
            for s in elf.symbols.iter().filter(|s| s.table == table) {
                if s.name.is_empty() || matches!(s.kind, SymbolType::Section | SymbolType::File) {
                    continue;
                }
                let sym = Sym {
                    addr: s.value,
                    name: s.name.clone(),
                    kind: type_code(s.kind),
                    size: s.size,
                };
                let idx = usize::from(s.shndx);
                if s.shndx != 0 && s.shndx < 0xff00 && idx < n {
                    by_section[idx].push(sym);
                    any = true;
                } else {
                    absolute.push(sym);
                }
            }
        }
        for v in &mut by_section {
            sort_syms(v);
        }
        sort_syms(&mut absolute);
        // A code section that does not start with a symbol is labelled with
        // the section name.
        for (i, s) in elf.sections.iter().enumerate() {
            if is_code(s) && by_section[i].first().is_none_or(|f| f.addr != s.addr) {
                by_section[i].insert(
                    0,
                    Sym {
                        addr: s.addr,
                        name: s.name.clone(),
                        kind: STT_FUNC,
                        size: 0,
                    },
                );
            }
        }
        let mut by_address: Vec<usize> = (0..n).collect();
        by_address.sort_by_key(|&i| elf.sections[i].addr);
        SymbolIndex {
            by_section,
            absolute,
            by_address,
        }
    }

    /// The symbol that objdump names in a branch annotation: the last one at
    /// or before `target` in the section(s) at the greatest address not above
    /// `target` (the current section in relocatable objects), else the last
    /// absolute symbol at or before it.
    fn annotation_symbol(&self, co: &CodeObject, section: usize, target: u64) -> Option<&Sym> {
        let elf = co.elf();
        let mut lists: Vec<&[Sym]> = Vec::new();
        if elf.header.is_relocatable() {
            lists.push(&self.by_section[section]);
        } else {
            let end = self
                .by_address
                .partition_point(|&i| elf.sections[i].addr <= target);
            let mut sec_addr = 0;
            for &i in self.by_address[..end].iter().rev() {
                let a = elf.sections[i].addr;
                if sec_addr == 0 {
                    sec_addr = a;
                }
                if a != sec_addr {
                    break;
                }
                lists.push(&self.by_section[i]);
            }
        }
        lists.push(&self.absolute);
        lists.into_iter().find_map(|l| {
            let end = l.partition_point(|s| s.addr <= target);
            l[..end].last()
        })
    }
}

/// Whether objdump -d disassembles the section.
pub fn is_code(s: &Section) -> bool {
    s.is_executable() && s.has_file_data()
}

/// What was printed for one code object.
#[derive(Default, Debug)]
pub struct Printed {
    /// Labels printed (after the `only` filter).
    pub symbols: usize,
    /// Names of every label in the code sections.
    pub labels: Vec<String>,
}

/// Writes the listing of `co`, titled `display_name`, as `llvm-objdump -d`
/// prints it (or as JSON lines).
pub fn write_object(
    out: &mut dyn Write,
    display_name: &str,
    co: &CodeObject,
    opts: &Options,
) -> io::Result<Printed> {
    let index = SymbolIndex::new(co);
    let elf = co.elf();
    let target = co.target();
    let wave = opts.wave.unwrap_or_else(|| co.wave_size());
    let mut printed = Printed::default();
    if !opts.json {
        write!(out, "\n{display_name}:\tfile format elf64-amdgpu\n\n")?;
    }
    for (si, sec) in elf.sections.iter().enumerate() {
        if !is_code(sec) {
            continue;
        }
        let data = co.section_data(sec);
        let sec_end = sec.addr.saturating_add(data.len() as u64);
        let syms = &index.by_section[si];
        let wanted = |name: &str| opts.only.as_deref().is_none_or(|o| o == name);
        let any_wanted = syms.iter().any(|s| wanted(&s.name));
        if !opts.json && any_wanted {
            writeln!(out, "Disassembly of section {}:", sec.name)?;
        }
        let mut i = 0;
        while i < syms.len() {
            let start = syms[i].addr;
            let mut j = i;
            while j < syms.len() && syms[j].addr == start {
                j += 1;
            }
            let label = &syms[j - 1];
            let mut end = syms.get(j).map_or(sec_end, |s| s.addr).min(sec_end);
            if opts.only.is_some() && label.size > 0 {
                end = end.min(start.saturating_add(label.size));
            }
            i = j;
            printed.labels.push(label.name.clone());
            if start < sec.addr || start >= end || !wanted(&label.name) {
                continue;
            }
            printed.symbols += 1;
            if !opts.json {
                if opts.no_leading_addr {
                    write!(out, "\n<{}>:\n", label.name)?;
                } else {
                    write!(out, "\n{start:016x} <{}>:\n", label.name)?;
                }
            }
            let lo = (start - sec.addr) as usize;
            let hi = (end - sec.addr) as usize;
            if label.kind == STT_OBJECT {
                if opts.json {
                    let hex: String = data[lo..hi].iter().map(|b| format!("{b:02x}")).collect();
                    let v = serde_json::json!({
                        "target": co.target_id(), "function": label.name, "address": start,
                        "bytes": hex, "data": true,
                    });
                    writeln!(out, "{v}")?;
                } else {
                    dump_data(out, start, &data[lo..hi])?;
                }
                continue;
            }
            let ctx = Ctx {
                co,
                index: &index,
                section: si,
                target,
                wave,
                t16: opts.t16,
            };
            let mut off = lo;
            while off < hi {
                let pc = sec.addr + off as u64;
                let rest = &data[off..];
                let n = write_inst(out, &ctx, &label.name, pc, rest, opts.json)?;
                off += n;
            }
        }
    }
    Ok(printed)
}

struct Ctx<'a> {
    co: &'a CodeObject,
    index: &'a SymbolIndex,
    section: usize,
    target: Target,
    wave: WaveSize,
    t16: True16,
}

/// Writes one instruction (or undecodable word) at `pc`, the start of
/// `rest`; returns its size.
fn write_inst(
    out: &mut dyn Write,
    ctx: &Ctx,
    function: &str,
    pc: u64,
    rest: &[u8],
    json: bool,
) -> io::Result<usize> {
    let decoded = rocjitsu_isa::decode_with(ctx.target, ctx.wave, ctx.t16, rest).ok();
    let size = match &decoded {
        Some(inst) => inst.len(),
        None => rest.len().min(4),
    };
    let raw = &rest[..size.min(rest.len())];
    let mut text = rocjitsu_isa::objdump::text(decoded.as_ref(), raw);
    let mut note = String::new();
    let mut target_addr = None;
    if let Some(inst) = &decoded
        && let Some(t) = inst.branch_target(pc)
    {
        target_addr = Some(t);
        let syms = &ctx.index.by_section[ctx.section];
        let exact = syms.iter().find(|s| s.addr == t && s.kind == STT_NOTYPE);
        if let Some(s) = exact {
            // The PC-relative immediate is the last operand.
            if let Some((head, _)) = text.rsplit_once(' ') {
                text = format!("{head} {}", s.name);
            }
        } else if inst.is_sopp()
            && let Some(s) = ctx.index.annotation_symbol(ctx.co, ctx.section, t)
        {
            note = rocjitsu_isa::objdump::branch_note(&s.name, t.wrapping_sub(s.addr));
        }
    }
    if json {
        let mut v = crate::disasm::json_line(pc, raw, decoded.as_ref());
        if let Some(o) = v.as_object_mut() {
            o.remove("offset");
            o.insert("target".into(), ctx.co.target_id().into());
            o.insert("function".into(), function.into());
            o.insert("address".into(), pc.into());
            o.insert("text".into(), text.clone().into());
            if let Some(t) = target_addr {
                o.insert("branch_target".into(), t.into());
            }
        }
        writeln!(out, "{v}")?;
        return Ok(size.max(1));
    }
    writeln!(
        out,
        "{}",
        rocjitsu_isa::objdump::line(pc, raw, &text, &note)
    )?;
    Ok(size.max(1))
}

/// Dumps the bytes of a data symbol as objdump does: 8 bytes a line, in hex
/// and ASCII.
fn dump_data(out: &mut dyn Write, addr: u64, bytes: &[u8]) -> io::Result<()> {
    for (k, chunk) in bytes.chunks(8).enumerate() {
        let mut line = format!("{:8x}:", addr + 8 * k as u64);
        for b in chunk {
            let _ = write!(line, " {b:02x}");
        }
        line.push_str(&" ".repeat(3 * (8 - chunk.len()) + 9));
        for &b in chunk {
            line.push(if (0x20..0x7f).contains(&b) {
                b as char
            } else {
                '.'
            });
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(addr: u64, bytes: &[u8]) -> String {
        let mut v = Vec::new();
        dump_data(&mut v, addr, bytes).expect("writing to a Vec");
        String::from_utf8(v).expect("ASCII")
    }

    #[test]
    fn data_dump_matches_objdump() {
        // llvm-objdump-22 -d on a 17-byte STT_OBJECT at 0x14 in .text.
        let bytes = [
            0x44, 0x43, 0x42, 0x41, 0x48, 0x47, 0x46, 0x45, 4, 3, 2, 1, 0x55, 0, 0, 0, 0x41,
        ];
        assert_eq!(
            dump(0x14, &bytes),
            "      14: 44 43 42 41 48 47 46 45         DCBAHGFE\n\
             \x20     1c: 04 03 02 01 55 00 00 00         ....U...\n\
             \x20     24: 41                              A\n"
        );
    }

    #[test]
    fn type_codes_are_elf_values() {
        assert_eq!(type_code(SymbolType::NoType), STT_NOTYPE);
        assert_eq!(type_code(SymbolType::Object), STT_OBJECT);
        assert_eq!(type_code(SymbolType::Func), STT_FUNC);
        assert_eq!(type_code(SymbolType::Other(13)), 13);
    }
}
