//! Every opcode that the decoder (generated from LLVM 22's tables) knows on
//! the executed targets (`Target::ALL`: gfx90a, gfx942, gfx950, gfx908) has
//! semantics in the engine, or is matched by
//! an entry of `NOT_EMULATED` (crates/gpu/src/exec/unsupported.rs), the one
//! list of what is not emulated, with the reason. Each opcode is walked
//! once (a minimal instance from `rocjitsu_isa::opcodes`), and again with
//! each modifier bit the lowering looks at (DS `gds`, FLAT and MUBUF `glc`
//! and `lds`) where that still decodes to the same mnemonic.
//!
//! Also fails on a stale entry (one that matches no opcode, or matches
//! opcodes that have semantics) and on an entry that the README's "Limits"
//! section does not name. The list, with counts per target, is printed
//! with eprintln (`--nocapture` shows it on success too).

// GFX11 (gfx1100, gfx1151): its own sweep, in this binary to save a link.
#[path = "every_opcode/gfx11.rs"]
mod gfx11;

use rocjitsu_gpu::exec::lower::{lower, unsupported};
use rocjitsu_gpu::exec::op::ExecFn;
use rocjitsu_gpu::exec::unsupported::{NOT_EMULATED, entry, list_name};
use rocjitsu_isa::Target;
use rocjitsu_isa::gfx9::Encoding;
use rocjitsu_isa::gfx9::opcodes::printed_mnemonic;
use std::collections::{BTreeMap, BTreeSet};

/// Modifier bits (of the first dword) that change the lowering.
const VARIANTS: &[(Encoding, u32, &str)] = &[
    (Encoding::Ds, 1 << 16, "gds"),
    (Encoding::Flat, 1 << 16, "glc"),
    (Encoding::Flat, 1 << 13, "lds"),
    (Encoding::Mubuf, 1 << 14, "glc"),
    (Encoding::Mubuf, 1 << 16, "lds"),
];

#[derive(Default)]
struct Counts {
    opcodes: usize,
    variants: usize,
    /// Instances (opcodes and variants) with semantics, and listed.
    sem: usize,
    unsup: usize,
    with: BTreeSet<String>,
    without: BTreeSet<String>,
}

#[test]
fn every_opcode_has_semantics_or_a_listed_reason() {
    let mut errors = Vec::new();
    // Per entry: per target, the names it matches that lower to
    // `unsupported`; and the instances it matches that have semantics.
    let n = Target::ALL.len();
    let mut listed: BTreeMap<&str, Vec<BTreeSet<String>>> = BTreeMap::new();
    let mut has_sem: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut counts: Vec<Counts> = (0..n).map(|_| Counts::default()).collect();
    for (ti, t) in Target::ALL.into_iter().enumerate() {
        let c = &mut counts[ti];
        for o in rocjitsu_isa::opcodes(t) {
            c.opcodes += 1;
            let inst = match rocjitsu_isa::decode(t, &o.bytes()) {
                Ok(i) if printed_mnemonic(&i) == o.mnemonic => i,
                other => {
                    let got = other.map(|i| printed_mnemonic(&i));
                    errors.push(format!(
                        "{t} {}: its instance decodes as {got:?}",
                        o.mnemonic
                    ));
                    continue;
                }
            };
            let mut insts = vec![(inst, String::new())];
            for &(enc, bit, tag) in VARIANTS {
                let mut w = o.words;
                if enc != o.encoding || w[0] & bit != 0 {
                    continue;
                }
                w[0] |= bit;
                let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
                if let Ok(i) = rocjitsu_isa::decode(t, &bytes)
                    && printed_mnemonic(&i) == o.mnemonic
                {
                    c.variants += 1;
                    insts.push((i, format!(" ({tag})")));
                }
            }
            for (inst, tag) in insts {
                let name = list_name(&inst);
                let sem = !std::ptr::fn_addr_eq(lower(inst).exec, unsupported as ExecFn);
                match (sem, entry(&name)) {
                    (true, Some((p, _))) => {
                        has_sem
                            .entry(p)
                            .or_default()
                            .insert(format!("{t} {}{tag}", o.mnemonic));
                    }
                    (true, None) => {
                        c.sem += 1;
                        c.with.insert(name);
                    }
                    (false, Some((p, _))) => {
                        c.unsup += 1;
                        listed.entry(p).or_insert_with(|| vec![BTreeSet::new(); n])[ti]
                            .insert(name.clone());
                        c.without.insert(name);
                    }
                    (false, None) => {
                        errors.push(format!(
                            "{t} {}{tag}: no semantics, and no NOT_EMULATED entry matches {name:?}",
                            o.mnemonic
                        ));
                        c.without.insert(name);
                    }
                }
            }
        }
    }
    for (p, set) in &has_sem {
        errors.push(format!(
            "NOT_EMULATED entry {p:?} matches instructions with semantics: {set:?}"
        ));
    }
    for (p, _) in NOT_EMULATED {
        if !listed.contains_key(p) {
            errors.push(format!(
                "NOT_EMULATED entry {p:?} matches no instruction without semantics"
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
    for (p, _) in NOT_EMULATED {
        if !limits.contains(&format!("`{p}`")) {
            errors.push(format!("README's Limits section does not name `{p}`"));
        }
    }

    let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
    eprintln!(
        "Not emulated (NOT_EMULATED in crates/gpu/src/exec/unsupported.rs); names matched on {}:",
        names.join("/")
    );
    for (p, why) in NOT_EMULATED {
        let sets = listed
            .get(p)
            .cloned()
            .unwrap_or_else(|| vec![BTreeSet::new(); n]);
        let per: Vec<String> = sets.iter().map(|s| format!("{:>3}", s.len())).collect();
        let total: usize = sets.iter().map(BTreeSet::len).sum();
        eprintln!("  {p:<28} {}  {why}", per.join(" "));
        if p.contains('*') && total <= 60 {
            let all: BTreeSet<&String> = sets.iter().flatten().collect();
            let all: Vec<&str> = all.into_iter().map(String::as_str).collect();
            eprintln!("      {}", all.join(", "));
        }
    }
    for (ti, t) in Target::ALL.into_iter().enumerate() {
        let c = &counts[ti];
        let partial: Vec<&String> = c.with.intersection(&c.without).collect();
        eprintln!(
            "{t}: {} opcodes + {} modifier variants walked: {} with semantics, {} listed \
             ({} names with semantics, {} names listed){}",
            c.opcodes,
            c.variants,
            c.sem,
            c.unsup,
            c.with.len(),
            c.without.len(),
            if partial.is_empty() {
                String::new()
            } else {
                format!(" (some forms of {partial:?})")
            }
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
