//! The compiled-kernel corpus against LLVM's disassembler.
//!
//! `make corpus` compiles the kernels of `tests/corpus/src` for every target
//! into `build/corpus/<target>/<name>.hsaco` and stores `llvm-objdump-22 -d`'s
//! text of each beside it as `<name>.objdump`. This test reads every
//! `.objdump`, decodes the raw bytes of each instruction line with
//! [`rocjitsu_isa::decode_in`] and checks that
//!   (a) our text equals LLVM's, whitespace-normalised,
//!   (b) our length equals the number of bytes LLVM consumed,
//!   (c) re-encoding gives back the same bytes.
//! Words LLVM cannot decode appear as `.long`/`.byte` data lines; for those
//! our decoder must report an error too.
//!
//! RDNA listings start with `; rocjitsu-corpus: wavefront-size N`, the wave
//! size the code object's kernels declare (corpus.py disassembles wave64
//! objects with `--mattr=+wavefrontsize64`); they are decoded in that mode,
//! and every RDNA target must have listings of both modes.
//!
//! gfx1201's code objects have a second listing, `<name>.t16.objdump`,
//! made with `--mattr=+real-true16` and starting with `; rocjitsu-corpus:
//! real-true16` (Triton's gfx1201 code is in that mode, which LLVM 22 does
//! not default to there); it is decoded with [`True16::Real`] and counted
//! as a target of its own (`gfx1201 real-true16`), which must be present.
//!
//! The directory can be overridden with `ROCJITSU_CORPUS_DIR`. Run it alone
//! with `make test-corpus` (or `cargo test -p rocjitsu-isa --test it
//! corpus:: -- --nocapture`) to see the report.

use rocjitsu_isa::{Target, True16, WaveSize};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Fewest kernels per target and instructions in all for the corpus to count.
const MIN_KERNELS_PER_TARGET: usize = 30;
const MIN_INSTRUCTIONS: usize = 20_000;
/// How many mismatches are printed in full (`ROCJITSU_CORPUS_SHOW` overrides);
/// each is the first occurrence of a distinct mismatching byte sequence.
const SHOW: usize = 30;

/// One disassembly line of `llvm-objdump -d` with its raw bytes.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    /// The line's address.
    addr: u64,
    /// Offset of its bytes in the enclosing [`Region`].
    off: usize,
    /// Number of bytes LLVM consumed.
    len: usize,
    /// LLVM's text, or `None` for a data line (`.long`, `.byte`), which is
    /// what objdump prints for bytes it cannot decode.
    text: Option<String>,
}

/// A run of contiguous bytes in one section, as listed by objdump.
#[derive(Debug, Default, PartialEq)]
struct Region {
    start: u64,
    bytes: Vec<u8>,
    items: Vec<Item>,
}

/// The parsed disassembly of one code object.
#[derive(Debug, Default)]
struct Listing {
    regions: Vec<Region>,
    /// Function symbols, less clang's callable copies of OpenCL kernels
    /// (`__clang_ocl_kern_imp_*`).
    kernels: usize,
    /// The wave size of the `; rocjitsu-corpus: wavefront-size N` line.
    wave: Option<WaveSize>,
    /// The `; rocjitsu-corpus: real-true16` line: made with
    /// `--mattr=+real-true16`.
    t16: bool,
}

/// The report's name of a target's real-true16 listings.
fn t16_name(t: Target) -> &'static str {
    match t {
        Target::Gfx1201 => "gfx1201 real-true16",
        _ => "real-true16 (unexpected target)",
    }
}

/// Collapses runs of whitespace to one space and trims the ends.
fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parses the `ADDR: HEX...` comment that ends an instruction line: the
/// address, then dwords (8 hex digits, little-endian in memory) or single
/// bytes (2 digits, on `.byte` lines), then possibly a symbolic branch
/// target `<sym+0x..>`, which is ignored.
fn parse_comment(c: &str) -> Option<(u64, Vec<u8>)> {
    let (addr, rest) = c.trim().split_once(':')?;
    let addr = u64::from_str_radix(addr.trim(), 16).ok()?;
    let mut bytes = Vec::new();
    for tok in rest.split_whitespace() {
        if tok.starts_with('<') {
            break;
        }
        match tok.len() {
            8 => bytes.extend_from_slice(&u32::from_str_radix(tok, 16).ok()?.to_le_bytes()),
            2 => bytes.push(u8::from_str_radix(tok, 16).ok()?),
            _ => return None,
        }
    }
    (!bytes.is_empty()).then_some((addr, bytes))
}

/// Parses `llvm-objdump -d` output. Lines other than instruction lines, symbol
/// labels, section headers, the file-format line, blank lines and `;` comment
/// lines are returned as errors so that the parser cannot silently skip code.
fn parse_objdump(text: &str) -> Result<Listing, String> {
    let mut listing = Listing::default();
    let mut cur: Option<Region> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(w) = trimmed.strip_prefix("; rocjitsu-corpus: wavefront-size ") {
            listing.wave = Some(match w {
                "32" => WaveSize::Wave32,
                "64" => WaveSize::Wave64,
                _ => return Err(format!("line {}: bad wave size `{line}`", n + 1)),
            });
            continue;
        }
        if trimmed == "; rocjitsu-corpus: real-true16" {
            listing.t16 = true;
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with(';') || trimmed.contains("file format") {
            continue;
        }
        if trimmed.starts_with("Disassembly of section") {
            listing.regions.extend(cur.take());
            continue;
        }
        if let Some(label) = trimmed.strip_suffix(">:") {
            let (addr, name) = label
                .split_once(" <")
                .ok_or(format!("line {}: bad label `{line}`", n + 1))?;
            u64::from_str_radix(addr, 16)
                .map_err(|_| format!("line {}: bad label address `{line}`", n + 1))?;
            if !name.starts_with("__clang_ocl_kern_imp_") {
                listing.kernels += 1;
            }
            continue;
        }
        let Some(pos) = line.rfind("//") else {
            return Err(format!("line {}: unrecognised `{line}`", n + 1));
        };
        let (asm, comment) = (&line[..pos], &line[pos + 2..]);
        let (addr, bytes) = parse_comment(comment).ok_or(format!(
            "line {}: bad address/bytes comment `{line}`",
            n + 1
        ))?;
        let asm = normalize(asm);
        let is_data = [".long", ".byte", ".short", ".quad"]
            .iter()
            .any(|d| asm == *d || asm.starts_with(&format!("{d} ")));
        let region = match &mut cur {
            Some(r) if r.start + r.bytes.len() as u64 == addr => r,
            _ => {
                listing.regions.extend(cur.take());
                cur.insert(Region {
                    start: addr,
                    ..Region::default()
                })
            }
        };
        region.items.push(Item {
            addr,
            off: region.bytes.len(),
            len: bytes.len(),
            text: (!is_data).then_some(asm),
        });
        region.bytes.extend_from_slice(&bytes);
    }
    listing.regions.extend(cur);
    Ok(listing)
}

/// Formats bytes as little-endian dwords, as objdump shows them.
fn hex_words(bytes: &[u8]) -> String {
    let mut s = String::new();
    for (i, c) in bytes.chunks(4).enumerate() {
        if i > 0 {
            s.push(' ');
        }
        if c.len() == 4 {
            let _ = write!(s, "{:08X}", u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        } else {
            for b in c {
                let _ = write!(s, "{b:02X}");
            }
        }
    }
    s
}

#[derive(Debug)]
struct Mismatch {
    file: String,
    addr: u64,
    bytes: Vec<u8>,
    ours: String,
    llvm: String,
    what: &'static str,
}

#[derive(Default)]
struct Totals {
    files: usize,
    kernels: usize,
    insts: usize,
    text: usize,
    len: usize,
    encode: usize,
    data: usize,
    mismatches: usize,
    /// Distinct byte sequences, and those of them that mismatch.
    distinct: HashSet<Vec<u8>>,
    distinct_bad: HashSet<Vec<u8>>,
    /// Instructions in wave64 listings of RDNA targets.
    wave64_insts: usize,
}

/// Checks one item; returns what differs (first difference only).
fn check_item(
    target: Target,
    wave: WaveSize,
    t16: True16,
    region: &Region,
    item: &Item,
) -> Option<(&'static str, String)> {
    let rest = region.bytes.get(item.off..).unwrap_or(&[]);
    let own = rest.get(..item.len).unwrap_or(rest);
    match (
        rocjitsu_isa::decode_with(target, wave, t16, rest),
        &item.text,
    ) {
        (Ok(inst), Some(llvm)) => {
            let ours = normalize(&format!("{inst}"));
            if &ours != llvm {
                return Some(("text", ours));
            }
            if inst.len() != item.len {
                return Some((
                    "len",
                    format!("{ours}  (len {} != {})", inst.len(), item.len),
                ));
            }
            let enc = inst.encode();
            if enc != own {
                return Some((
                    "encode",
                    format!("{ours}  (re-encoded as {})", hex_words(&enc)),
                ));
            }
            None
        }
        (Err(e), Some(_)) => Some(("text", format!("<error: {e}>"))),
        (Ok(inst), None) => Some(("data", format!("{inst}  (LLVM cannot decode these bytes)"))),
        (Err(_), None) => None,
    }
}

fn corpus_dir() -> PathBuf {
    match std::env::var_os("ROCJITSU_CORPUS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../build/corpus"),
    }
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    v.sort();
    v
}

#[test]
fn corpus_matches_llvm_objdump() {
    let root = corpus_dir();
    let show = std::env::var("ROCJITSU_CORPUS_SHOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SHOW);
    assert!(
        root.is_dir(),
        "the kernel corpus is missing ({}): run `make corpus` first",
        root.display()
    );
    let mut per_target: BTreeMap<&'static str, Totals> = BTreeMap::new();
    let mut mismatches: Vec<Mismatch> = Vec::new();
    let mut by_mnemonic: BTreeMap<String, usize> = BTreeMap::new();
    let mut parse_errors = Vec::new();

    for dir in sorted_entries(&root) {
        let Some(name) = dir.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        if !dir.is_dir() || name.starts_with('.') {
            continue;
        }
        let target: Target = name
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for file in sorted_entries(&dir) {
            if file.extension().and_then(|e| e.to_str()) != Some("objdump") {
                continue;
            }
            let rel = format!(
                "{name}/{}",
                file.file_name().and_then(|n| n.to_str()).unwrap_or("?")
            );
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let listing = match parse_objdump(&text) {
                Ok(l) => l,
                Err(e) => {
                    parse_errors.push(format!("{rel}: {e}"));
                    continue;
                }
            };
            let wave = match (target.wave_size(), listing.wave) {
                (64, None) => WaveSize::Wave64,
                (32, Some(w)) => w,
                (_, w) => {
                    parse_errors.push(format!(
                        "{rel}: wave size line {w:?} does not fit {target}: rebuild with `make corpus`"
                    ));
                    continue;
                }
            };
            let (t16, key) = if listing.t16 {
                (True16::Real, t16_name(target))
            } else {
                (True16::LlvmDefault, target.name())
            };
            let totals = per_target.entry(key).or_default();
            totals.files += 1;
            totals.kernels += listing.kernels;
            for region in &listing.regions {
                for item in &region.items {
                    totals.insts += 1;
                    if target.wave_size() == 32 && wave == WaveSize::Wave64 {
                        totals.wave64_insts += 1;
                    }
                    if item.text.is_none() {
                        totals.data += 1;
                    }
                    let bytes = region
                        .bytes
                        .get(item.off..item.off + item.len)
                        .unwrap_or(&[])
                        .to_vec();
                    let first_seen = totals.distinct.insert(bytes.clone());
                    let Some((what, ours)) = check_item(target, wave, t16, region, item) else {
                        continue;
                    };
                    totals.mismatches += 1;
                    totals.distinct_bad.insert(bytes.clone());
                    match what {
                        "text" => totals.text += 1,
                        "len" => totals.len += 1,
                        _ => totals.encode += 1,
                    }
                    let llvm = item
                        .text
                        .clone()
                        .unwrap_or_else(|| "<data: cannot decode>".into());
                    let mnemonic = llvm.split(' ').next().unwrap_or("").to_owned();
                    *by_mnemonic.entry(mnemonic).or_default() += 1;
                    // Examples: the first occurrence of each distinct encoding.
                    if first_seen && mismatches.len() < show {
                        mismatches.push(Mismatch {
                            file: rel.clone(),
                            addr: item.addr,
                            bytes,
                            ours,
                            llvm,
                            what,
                        });
                    }
                }
            }
        }
    }

    let mut report = String::new();
    let mut all = Totals::default();
    for (t, s) in &per_target {
        let _ = writeln!(
            report,
            "corpus {t}: {} code objects, {} kernels, {} instructions ({} data lines), {} mismatches \
             (text {}, length {}, re-encoding {}), agreement {:.3}%; distinct encodings {}, \
             {} mismatching, agreement {:.3}%{}",
            s.files,
            s.kernels,
            s.insts,
            s.data,
            s.mismatches,
            s.text,
            s.len,
            s.encode,
            100.0 * (s.insts - s.mismatches) as f64 / s.insts.max(1) as f64,
            s.distinct.len(),
            s.distinct_bad.len(),
            100.0 * (s.distinct.len() - s.distinct_bad.len()) as f64
                / s.distinct.len().max(1) as f64,
            if s.wave64_insts > 0 {
                format!("; {} instructions in wave64 code objects", s.wave64_insts)
            } else {
                String::new()
            }
        );
        all.insts += s.insts;
        all.mismatches += s.mismatches;
    }
    let _ = writeln!(
        report,
        "corpus total: {} instructions, {} mismatches",
        all.insts, all.mismatches
    );
    if !by_mnemonic.is_empty() {
        let mut top: Vec<_> = by_mnemonic.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let list: Vec<String> = top
            .iter()
            .take(40)
            .map(|(m, n)| format!("{m} {n}"))
            .collect();
        let _ = writeln!(
            report,
            "mismatches by LLVM mnemonic ({} distinct): {}",
            top.len(),
            list.join(", ")
        );
    }
    for m in &mismatches {
        let _ = writeln!(
            report,
            "  [{}] {} @0x{:x}: {} | ours: {} | llvm: {}",
            m.what,
            m.file,
            m.addr,
            hex_words(&m.bytes),
            m.ours,
            m.llvm
        );
    }
    println!("{report}");

    assert!(
        parse_errors.is_empty(),
        "unparsed objdump output:\n{}",
        parse_errors.join("\n")
    );
    for t in Target::KNOWN.into_iter().filter(|t| t.decodes()) {
        let s = per_target.get(t.name());
        let kernels = s.map_or(0, |s| s.kernels);
        assert!(
            kernels >= MIN_KERNELS_PER_TARGET,
            "corpus has {kernels} kernels for {t}, expected at least {MIN_KERNELS_PER_TARGET}: run `make corpus`"
        );
        if !True16::Real.llvm_feature(t).is_empty() {
            let n = per_target.get(t16_name(t)).map_or(0, |s| s.insts);
            assert!(
                n > 0,
                "corpus has no real-true16 listing for {t}: run `make corpus`"
            );
        }
        if t.wave_size() == 32 {
            let (all, w64) = s.map_or((0, 0), |s| (s.insts, s.wave64_insts));
            assert!(
                w64 > 0 && w64 < all,
                "corpus for {t} has {w64} of {all} instructions in wave64 code objects; both \
                 modes must be covered: run `make corpus`"
            );
        }
    }
    assert!(
        all.insts >= MIN_INSTRUCTIONS,
        "corpus has {} instructions, expected at least {MIN_INSTRUCTIONS}: run `make corpus`",
        all.insts
    );
    assert!(
        all.mismatches == 0,
        "{} of {} corpus instructions differ from LLVM 22; the report above lists them",
        all.mismatches,
        all.insts
    );
}

#[cfg(test)]
mod parser_tests {
    use super::*;

    const SAMPLE: &str = "\nk.hsaco:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n\
0000000000001900 <saxpy>:\n\
\ts_load_dword s3, s[0:1], 0x24                              // 000000001900: C00200C0 00000024\n\
\ts_cbranch_execz 18                                         // 000000001908: BF880012 <saxpy+0x78>\n\
\tv_mfma_scale_f32_16x16x128_f8f6f4 v[18:21], v[30:37], v[38:45], v[18:21], v28, v29 op_sel_hi:[0,0,0]// 00000000190C: D3AC0000 00023B1C D3AD0812 044A4D1E\n\
\n\
000000000000191c <__clang_ocl_kern_imp_saxpy>:\n\
\t.long 0xffffffff                                           // 00000000191C: FFFFFFFF\n\
\t.byte 0x34, 0x12                                           // 000000001920: 34 12\n";

    #[test]
    fn parses_objdump_lines() {
        let l = parse_objdump(SAMPLE).unwrap();
        assert_eq!(l.kernels, 1);
        assert_eq!(l.regions.len(), 1);
        let r = &l.regions[0];
        assert_eq!(r.start, 0x1900);
        assert_eq!(r.bytes.len(), 8 + 4 + 16 + 4 + 2);
        assert_eq!(&r.bytes[..8], &[0xc0, 0x00, 0x02, 0xc0, 0x24, 0, 0, 0]);
        let texts: Vec<Option<&str>> = r.items.iter().map(|i| i.text.as_deref()).collect();
        assert_eq!(
            texts,
            [
                Some("s_load_dword s3, s[0:1], 0x24"),
                Some("s_cbranch_execz 18"),
                Some(
                    "v_mfma_scale_f32_16x16x128_f8f6f4 v[18:21], v[30:37], v[38:45], v[18:21], v28, v29 \
                     op_sel_hi:[0,0,0]"
                ),
                None,
                None
            ]
        );
        let lens: Vec<usize> = r.items.iter().map(|i| i.len).collect();
        assert_eq!(lens, [8, 4, 16, 4, 2]);
        assert_eq!(r.items[2].off, 12);
        assert_eq!(r.items[4].addr, 0x1920);
    }

    #[test]
    fn splits_regions_at_gaps_and_rejects_unknown_lines() {
        let text = "0000000000000000 <f>:\n\ts_nop 0 // 000000000000: BF800000\n\
\ts_nop 0 // 000000000010: BF800000\n";
        let l = parse_objdump(text).unwrap();
        assert_eq!(l.regions.len(), 2);
        assert_eq!(l.regions[1].start, 0x10);
        assert!(parse_objdump("\tsomething odd\n").is_err());
        assert!(parse_objdump("\ts_nop 0 // 000000000000: BF8000\n").is_err());
    }

    #[test]
    fn normalizes_whitespace() {
        assert_eq!(
            normalize("  v_add_f32  v0,\tv1, v2 "),
            "v_add_f32 v0, v1, v2"
        );
    }
}
