//! Decode throughput over the compiled-kernel corpus: the `.text` bytes of
//! `build/corpus/<target>/*.hsaco` (override the directory with
//! `ROCJITSU_CORPUS_DIR`), decoded linearly as a disassembler does (an
//! undecodable word is skipped as 4 bytes), on one core.
//!
//! `make bench` (`cargo bench -p rocjitsu-isa --bench decode`) first prints a
//! plain instructions-per-second figure per target, then runs the criterion
//! benchmark, whose throughput is in instructions (`elem/s`). RDNA code
//! objects are decoded in the wave size their corpus listing records (`;
//! rocjitsu-corpus: wavefront-size N`).
//!
//! Decoding makes every check that decides whether the word is valid and
//! yields the typed instruction (encoding, opcode row, size, dwords); its
//! operand fields are read from the dwords on demand by `body()`. A second
//! plain figure per target includes that: every instruction decoded and its
//! fields read.

use criterion::{Criterion, Throughput};
use rocjitsu_isa::{Instruction, Target, WaveSize, decode_in};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Throughput the decoder is meant to reach, in instructions per second.
const GOAL: f64 = 100e6;

/// The corpus directory: `ROCJITSU_CORPUS_DIR` or `<workspace>/build/corpus`.
fn corpus_dir() -> PathBuf {
    std::env::var_os("ROCJITSU_CORPUS_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../build/corpus"),
        PathBuf::from,
    )
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?)).ok()
}

/// The contents of the `.text` section of a little-endian ELF64 file (the
/// section header table and section name string table of the ELF
/// specification's "Sections" chapter).
fn elf_text(elf: &[u8]) -> Option<&[u8]> {
    if elf.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let shoff = u64_at(elf, 0x28)?;
    let shentsize = usize::from(u16_at(elf, 0x3a)?);
    let shnum = usize::from(u16_at(elf, 0x3c)?);
    let shstrndx = usize::from(u16_at(elf, 0x3e)?);
    let header = |i: usize| elf.get(shoff + i * shentsize..shoff + (i + 1) * shentsize);
    let contents = |h: &[u8]| {
        let off = u64_at(h, 24)?;
        elf.get(off..off.checked_add(u64_at(h, 32)?)?)
    };
    let names = contents(header(shstrndx)?)?;
    (0..shnum).find_map(|i| {
        let h = header(i)?;
        let name = names.get(u32_at(h, 0)? as usize..)?;
        (name.split(|&c| c == 0).next()? == b".text")
            .then(|| contents(h))
            .flatten()
    })
}

/// One code object's `.text` and the wave size it runs in.
type Code = (WaveSize, Vec<u8>);

/// The wave size of a corpus code object: from the first line of its
/// `.objdump` listing on RDNA targets.
fn wave_of(target: Target, hsaco: &Path) -> WaveSize {
    let listing = std::fs::read_to_string(hsaco.with_extension("objdump")).unwrap_or_default();
    if target.wave_size() == 64 || listing.starts_with("; rocjitsu-corpus: wavefront-size 64") {
        WaveSize::Wave64
    } else {
        WaveSize::Wave32
    }
}

/// The `.text` of every code object of `target` in the corpus.
fn corpus(target: Target) -> Vec<Code> {
    let dir = corpus_dir().join(target.name());
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|e| e == "hsaco"));
    paths.sort();
    paths
        .iter()
        .filter_map(|p| {
            let text = elf_text(&std::fs::read(p).ok()?)?.to_vec();
            Some((wave_of(target, p), text))
        })
        .collect()
}

/// Decodes `code` linearly (and, with `FIELDS`, reads every instruction's
/// operand fields); returns (instructions, of which decoded).
fn decode_linear<const FIELDS: bool>(target: Target, wave: WaveSize, code: &[u8]) -> (u64, u64) {
    let (mut n, mut ok) = (0, 0);
    let mut rest = code;
    while !rest.is_empty() {
        let step = match decode_in(target, wave, rest) {
            Ok(inst) => {
                ok += 1;
                if FIELDS {
                    match &inst {
                        Instruction::Gfx9(i) => {
                            black_box(i.body());
                        }
                        Instruction::Gfx10(i) => {
                            black_box(i.body());
                        }
                        Instruction::Gfx11(i) => {
                            black_box(i.body());
                        }
                        Instruction::Gfx12(i) => {
                            black_box(i.body());
                        }
                    }
                }
                black_box(&inst).len()
            }
            Err(_) => 4,
        };
        rest = rest.get(step..).unwrap_or_default();
        n += 1;
    }
    (n, ok)
}

fn decode_corpus(target: Target, code: &[Code]) -> (u64, u64) {
    code.iter().fold((0, 0), |(n, ok), (w, c)| {
        let (a, b) = decode_linear::<false>(target, *w, black_box(c));
        (n + a, ok + b)
    })
}

fn decode_corpus_fields(target: Target, code: &[Code]) -> (u64, u64) {
    code.iter().fold((0, 0), |(n, ok), (w, c)| {
        let (a, b) = decode_linear::<true>(target, *w, black_box(c));
        (n + a, ok + b)
    })
}

/// CPU time this thread has used (user + system), from
/// `/proc/thread-self/stat` (proc(5): fields 14 and 15, in USER_HZ = 100
/// ticks per second); `None` where that file is unavailable.
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The command name (field 2) may hold spaces; fields resume after ')'.
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let mut f = rest.split_whitespace().skip(11);
    let ticks: u64 = f.next()?.parse::<u64>().ok()? + f.next()?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Times whole passes of `pass` over the corpus for about `budget`:
/// instructions per second of wall time and, on a shared machine more
/// telling, per second of this thread's CPU time.
fn plain_rate(
    target: Target,
    code: &[Code],
    budget: Duration,
    pass: fn(Target, &[Code]) -> (u64, u64),
) -> (f64, Option<f64>) {
    let cpu0 = thread_cpu_time();
    let start = Instant::now();
    let mut insts = 0;
    while start.elapsed() < budget {
        insts += pass(target, code).0;
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = thread_cpu_time()
        .zip(cpu0)
        .map(|(b, a)| b.saturating_sub(a).as_secs_f64());
    let per_cpu = cpu.filter(|&t| t >= 0.1).map(|t| insts as f64 / t);
    (insts as f64 / wall, per_cpu)
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let quick = std::env::args().any(|a| a == "--test" || a == "--list");
    let mut group = c.benchmark_group("decode");
    for target in Target::KNOWN.into_iter().filter(|t| t.decodes()) {
        let code = corpus(target);
        let bytes: usize = code.iter().map(|c| c.1.len()).sum();
        if bytes == 0 {
            println!(
                "{}: no corpus in {} (run `make corpus`)",
                target.name(),
                corpus_dir().join(target.name()).display()
            );
            continue;
        }
        let (insts, ok) = decode_corpus(target, &code);
        let budget = Duration::from_millis(if quick { 10 } else { 2000 });
        let per_cpu =
            |cpu: Option<f64>| cpu.map_or_else(|| "n/a".to_string(), |r| format!("{:.1}", r / 1e6));
        let (wall, cpu) = plain_rate(target, &code, budget, decode_corpus);
        let best = cpu.unwrap_or(wall).max(wall);
        println!(
            "{}: {} code objects, {bytes} bytes, {insts} instructions ({ok} decoded): \
             {:.1} M instructions/s (wall), {} M instructions/s (thread CPU time){}",
            target.name(),
            code.len(),
            wall / 1e6,
            per_cpu(cpu),
            if best >= GOAL { "" } else { " (goal: 100 M/s)" }
        );
        let (wall, cpu) = plain_rate(target, &code, budget / 2, decode_corpus_fields);
        println!(
            "{}: with the operand fields read (Inst::body): {:.1} M instructions/s (wall), \
             {} M instructions/s (thread CPU time)",
            target.name(),
            wall / 1e6,
            per_cpu(cpu),
        );
        group.throughput(Throughput::Elements(insts));
        group.bench_function(target.name(), |b| b.iter(|| decode_corpus(target, &code)));
    }
    group.finish();
    c.final_summary();
}
