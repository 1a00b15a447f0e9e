//! Every opcode that the GFX11 decoder (generated from LLVM 22's tables,
//! agreeing with LLVM's disassembler on the corpus and random words) knows
//! on gfx1100 and gfx1151, in wave32 and wave64, has semantics in the
//! engine, or is matched by an entry of `NOT_EMULATED_GFX11`
//! (crates/gpu/src/exec/unsupported.rs): instructions without a compute
//! meaning, which fault naming themselves.
//!
//! The opcodes are found by sweeping each encoding's opcode field over all
//! its values, each with pseudo-random operand bits (the DS `gds` bit, the
//! FLAT segment and the cache bits among them) until the opcode decodes;
//! every decoded instance is lowered. VOPD's X and Y halves are swept each
//! with the other half fixed.
//!
//! Also fails on a stale entry (matching no opcode without semantics, or
//! matching one with semantics) and on an entry the README's "Limits"
//! section does not name. The counts are printed with eprintln.

use rocjitsu_gpu::exec::gfx11::lower;
use rocjitsu_gpu::exec::lower::unsupported;
use rocjitsu_gpu::exec::op::ExecFn;
use rocjitsu_gpu::exec::unsupported::{NOT_EMULATED_GFX11, entry_gfx11, list_name_of};
use rocjitsu_isa::{Instruction, Target, gfx11};
use std::collections::{BTreeMap, BTreeSet};

/// An encoding: the fixed bits of its first dword (mask, value) and its
/// opcode field (shift, width).
struct Sweep {
    mask: u32,
    value: u32,
    shift: u32,
    bits: u32,
}

const fn s(mask: u32, value: u32, shift: u32, bits: u32) -> Sweep {
    Sweep {
        mask,
        value,
        shift,
        bits,
    }
}

/// The GFX11 encodings (RDNA3 ISA manual, "Microcode Formats").
const SWEEPS: &[Sweep] = &[
    s(0xc000_0000, 0x8000_0000, 23, 7), // SOP2, SOPK (and the prefixes below)
    s(0xff80_0000, 0xbe80_0000, 8, 8),  // SOP1
    s(0xff80_0000, 0xbf00_0000, 16, 7), // SOPC
    s(0xff80_0000, 0xbf80_0000, 16, 7), // SOPP
    s(0xfc00_0000, 0xf400_0000, 18, 8), // SMEM
    s(0xfe00_0000, 0x7e00_0000, 9, 8),  // VOP1
    s(0xfe00_0000, 0x7c00_0000, 17, 8), // VOPC
    s(0x8000_0000, 0x0000_0000, 25, 6), // VOP2
    s(0xfc00_0000, 0xd400_0000, 16, 10), // VOP3
    s(0xff00_0000, 0xcc00_0000, 16, 7), // VOP3P
    s(0xff00_0000, 0xcd00_0000, 16, 7), // VINTERP
    s(0xff00_0000, 0xce00_0000, 20, 2), // LDSDIR
    s(0xfc00_0000, 0xd800_0000, 18, 8), // DS
    s(0xfc00_0000, 0xdc00_0000, 18, 7), // FLAT, GLOBAL, SCRATCH
    s(0xfc00_0000, 0xe000_0000, 18, 8), // MUBUF
    s(0xfc00_0000, 0xe800_0000, 15, 4), // MTBUF
    s(0xfc00_0000, 0xf000_0000, 18, 8), // MIMG
    s(0xfc00_0000, 0xf800_0000, 0, 0),  // EXP
];

/// VOPD: OPX 25:22, OPY 21:17.
const VOPD: u32 = 0xc800_0000;
/// `v_dual_mov_b32` as OPX and as OPY.
const DUAL_MOV_X: u32 = 8;
const DUAL_MOV_Y: u32 = 0x10;

/// Tries per opcode value.
const TRIES: usize = 200;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

#[derive(Default)]
struct Counts {
    names: BTreeSet<String>,
    sem: BTreeSet<String>,
    listed: BTreeSet<String>,
}

#[test]
fn every_gfx11_opcode_has_semantics_or_is_listed() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut errors = BTreeSet::new();
    // Names without semantics or an entry, each with an example.
    let mut missing: BTreeMap<String, String> = BTreeMap::new();
    let mut listed: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut has_sem: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut counts: BTreeMap<String, Counts> = BTreeMap::new();
    for t in [Target::Gfx1100, Target::Gfx1151] {
        for wave64 in [false, true] {
            let c = counts
                .entry(format!("{t} wave{}", if wave64 { 64 } else { 32 }))
                .or_default();
            let mut check = |inst: gfx11::Inst, name: String, vopd_half: Option<String>| {
                let sem = !std::ptr::fn_addr_eq(lower(inst).exec, unsupported as ExecFn);
                let key = vopd_half.unwrap_or_else(|| name.clone());
                c.names.insert(key.clone());
                match (sem, entry_gfx11(&key)) {
                    (true, Some((p, _))) => {
                        has_sem.entry(p).or_default().insert(format!("{t} {key}"));
                    }
                    (true, None) => {
                        c.sem.insert(key);
                    }
                    (false, Some((p, _))) => {
                        listed.entry(p).or_default().insert(key.clone());
                        c.listed.insert(key);
                    }
                    (false, None) => {
                        missing
                            .entry(key)
                            .or_insert_with(|| format!("{t} `{inst}`"));
                    }
                }
            };
            let decode = |w: [u32; 4]| {
                let b: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
                gfx11::decode(t, wave64, &b).ok()
            };
            for sw in SWEEPS {
                for op in 0..1u32 << sw.bits {
                    let mut seen = BTreeSet::new();
                    for _ in 0..TRIES {
                        let fixed = sw.mask | (((1u64 << sw.bits) - 1) as u32) << sw.shift;
                        let w0 = (rng.next() & !fixed) | sw.value | op << sw.shift;
                        let w = [w0, rng.next(), rng.next(), rng.next()];
                        if let Some(inst) = decode(w) {
                            let name = list_name_of(&Instruction::Gfx11(inst));
                            if seen.insert(name.clone()) {
                                check(inst, name, None);
                            }
                        }
                    }
                }
            }
            for (x_sweep, shift, bits) in [(true, 22, 4), (false, 17, 5)] {
                for op in 0..1u32 << bits {
                    let mut seen = BTreeSet::new();
                    for _ in 0..TRIES {
                        let other = if x_sweep {
                            DUAL_MOV_Y << 17
                        } else {
                            DUAL_MOV_X << 22
                        };
                        let w0 = (rng.next() & 0x1ffff) | VOPD | other | op << shift;
                        let w = [w0, rng.next(), rng.next(), rng.next()];
                        let Some(inst) = decode(w) else { continue };
                        let gfx11::Body::Vopd(v) = inst.body() else {
                            continue;
                        };
                        let half = if x_sweep { v.x.name } else { v.y.name };
                        if seen.insert(half.to_string()) {
                            let name = list_name_of(&Instruction::Gfx11(inst));
                            check(inst, name, Some(half.to_string()));
                        }
                    }
                }
            }
        }
    }
    for (k, e) in &missing {
        errors.insert(format!(
            "{k}: no semantics, and no NOT_EMULATED_GFX11 entry matches it (e.g. {e})"
        ));
    }
    for (p, set) in &has_sem {
        errors.insert(format!(
            "NOT_EMULATED_GFX11 entry {p:?} matches instructions with semantics: {set:?}"
        ));
    }
    for (p, _) in NOT_EMULATED_GFX11 {
        if !listed.contains_key(p) {
            errors.insert(format!(
                "NOT_EMULATED_GFX11 entry {p:?} matches no instruction without semantics"
            ));
        }
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let limits = readme
        .split("\n## Limits")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap_or("");
    for (p, _) in NOT_EMULATED_GFX11 {
        if !limits.contains(&format!("`{p}`")) {
            errors.insert(format!("README's Limits section does not name `{p}`"));
        }
    }
    eprintln!("Not emulated on GFX11 (NOT_EMULATED_GFX11 in crates/gpu/src/exec/unsupported.rs):");
    for (p, why) in NOT_EMULATED_GFX11 {
        let set = listed.get(p).cloned().unwrap_or_default();
        eprintln!("  {p:<24} {:>3}  {why}", set.len());
        let all: Vec<&str> = set.iter().map(String::as_str).collect();
        eprintln!("      {}", all.join(", "));
    }
    for (k, c) in &counts {
        eprintln!(
            "{k}: {} names decoded: {} with semantics, {} listed",
            c.names.len(),
            c.sem.len(),
            c.listed.len()
        );
    }
    if !errors.is_empty() {
        eprintln!("{} errors:", errors.len());
        for e in &errors {
            eprintln!("  {e}");
        }
    }
    assert!(errors.is_empty(), "{} errors (listed above)", errors.len());
}
