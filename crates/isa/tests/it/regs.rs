//! `Inst::regs` over the compiled corpus, against LLVM's text: every
//! register LLVM prints in an instruction's operands (with its file, index
//! and width) is among the registers `regs()` reports, and `regs()` reports
//! no register LLVM does not print except the implicit ones its
//! documentation lists (VCC, EXEC, M0, SCC). The destination LLVM prints first is
//! among the writes whenever the instruction writes a printed register.
//!
//! Reads `build/corpus/<target>/*.objdump` (`make corpus`), or
//! `ROCJITSU_CORPUS_DIR`; gfx1201's real-true16 listings are decoded in that
//! mode.

use rocjitsu_isa::gfx9::regs::{AGPR0, EXEC, M0, Range, SCC, TTMP0, VCC, VGPR0};
use rocjitsu_isa::{Target, True16, WaveSize};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn corpus_dir() -> PathBuf {
    std::env::var_os("ROCJITSU_CORPUS_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../build/corpus"),
        PathBuf::from,
    )
}

/// The register a printed operand names, if it is one.
fn parse_reg(tok: &str) -> Option<Range> {
    let special = |first, count| Some(Range::new(first, count));
    match tok {
        "vcc" => return special(VCC, 2),
        "vcc_lo" => return special(VCC, 1),
        "vcc_hi" => return special(VCC + 1, 1),
        "exec" => return special(EXEC, 2),
        "exec_lo" => return special(EXEC, 1),
        "exec_hi" => return special(EXEC + 1, 1),
        "m0" => return special(M0, 1),
        "flat_scratch" => return special(102, 2),
        "flat_scratch_lo" => return special(102, 1),
        "flat_scratch_hi" => return special(103, 1),
        "xnack_mask" => return special(104, 2),
        "xnack_mask_lo" => return special(104, 1),
        "xnack_mask_hi" => return special(105, 1),
        _ => {}
    }
    let (base, rest) = if let Some(r) = tok.strip_prefix("ttmp") {
        (TTMP0, r)
    } else if let Some(r) = tok.strip_prefix('v') {
        (VGPR0, r)
    } else if let Some(r) = tok.strip_prefix('s') {
        (0, r)
    } else if let Some(r) = tok.strip_prefix('a') {
        (AGPR0, r)
    } else {
        return None;
    };
    if let Some(r) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let (a, b) = r.split_once(':')?;
        let (a, b): (u16, u16) = (a.parse().ok()?, b.parse().ok()?);
        return Some(Range::new(base + a, (b - a + 1) as u8));
    }
    let n: u16 = rest.parse().ok()?;
    Some(Range::new(base + n, 1))
}

/// The registers among an instruction text's operands, in order.
fn text_regs(text: &str) -> Vec<Range> {
    let text = text.split(" ; ").next().unwrap_or(text);
    let mut ops = text.split_once(' ').map_or("", |(_, o)| o).to_string();
    // Drop LLVM's register-class comments.
    while let Some(a) = ops.find("/*") {
        let b = ops[a..].find("*/").map_or(ops.len(), |b| a + b + 2);
        ops.replace_range(a..b, "");
    }
    ops.split([',', ' '])
        .map(|t| {
            t.trim_start_matches(['-', '|'])
                .trim_end_matches('|')
                .trim_start_matches("neg(")
                .trim_start_matches("abs(")
                .trim_start_matches("sext(")
                .trim_end_matches(')')
        })
        // 16-bit halves (`v1.h`) and image address lists (`[v1, v2]`).
        .map(|t| t.trim_end_matches(".l").trim_end_matches(".h"))
        .map(|t| t.strip_prefix('[').unwrap_or(t))
        .map(|t| match t.strip_suffix(']') {
            Some(x) if !x.contains('[') => x,
            _ => t,
        })
        .filter_map(parse_reg)
        .collect()
}

#[test]
fn regs_match_llvm_text() {
    let dir = corpus_dir();
    let mut checked = 0usize;
    let mut bad = BTreeSet::new();
    let mut per_family: std::collections::BTreeMap<String, usize> = Default::default();
    for t in Target::KNOWN.into_iter().filter(|t| t.has_register_roles()) {
        let Ok(rd) = std::fs::read_dir(dir.join(t.to_string())) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "objdump") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let wave = if text.starts_with("; rocjitsu-corpus: wavefront-size 64") {
                WaveSize::Wave64
            } else {
                WaveSize::default_for(t)
            };
            // gfx1201's `--mattr=+real-true16` listings (corpus.py).
            let t16 = if text.contains("\n; rocjitsu-corpus: real-true16\n") {
                True16::Real
            } else {
                True16::LlvmDefault
            };
            for line in text.lines() {
                let Some((inst, comment)) = line.trim().split_once("//") else {
                    continue;
                };
                let inst = inst.trim();
                if inst.is_empty() || inst.starts_with('.') {
                    continue;
                }
                let Some((_, hex)) = comment.split_once(':') else {
                    continue;
                };
                let mut bytes = Vec::new();
                for tok in hex.split_whitespace() {
                    match tok.len() {
                        8 => bytes.extend(u32::from_str_radix(tok, 16).unwrap().to_le_bytes()),
                        _ => break,
                    }
                }
                bytes.extend([0; 16]);
                let Ok(i) = rocjitsu_isa::decode_with(t, wave, t16, &bytes) else {
                    continue;
                };
                let g = i
                    .regs()
                    .expect("every decoded family describes its registers");
                *per_family.entry(format!("{:?}", t.family())).or_default() += 1;
                let reported: Vec<Range> = g.reads().chain(g.writes()).collect();
                let printed = text_regs(inst);
                let covered = |r: &Range| reported.iter().any(|x| x == r);
                let implicit = |r: &Range| {
                    [VCC, EXEC].iter().any(|&b| {
                        r.first == b && (r.count == 2 || r.count == 1 && wave == WaveSize::Wave32)
                    }) || (r.first == M0 && r.count == 1)
                        || (r.first == SCC && r.count == 1)
                };
                let name = inst.split_whitespace().next().unwrap_or("");
                let mut why = Vec::new();
                for r in &printed {
                    if !covered(r) {
                        why.push(format!("{r} printed, not reported"));
                    }
                }
                for r in &reported {
                    if !printed.contains(r) && !implicit(r) {
                        why.push(format!("{r} reported, not printed"));
                    }
                }
                let printed_writes = g.writes().filter(|w| printed.contains(w)).count();
                if printed_writes > 0 && !printed.first().is_some_and(|f| g.writes_unit(f.first)) {
                    why.push(format!(
                        "first operand is not a write ({:?})",
                        printed.first()
                    ));
                }
                if !why.is_empty() {
                    bad.insert(format!("{t} {name}: {inst}: {}", why.join("; ")));
                }
                checked += 1;
            }
        }
    }
    assert!(
        checked > 10_000,
        "only {checked} instructions: run `make corpus`"
    );
    eprintln!("instructions checked per family: {per_family:?}");
    for fam in ["Gfx9", "Gfx11", "Gfx12"] {
        let n = per_family.get(fam).copied().unwrap_or(0);
        assert!(
            n > 10_000,
            "{fam}: only {n} instructions: run `make corpus`"
        );
    }
    let shown: Vec<_> = bad.iter().take(60).cloned().collect();
    assert!(
        bad.is_empty(),
        "{} instruction forms disagree with LLVM's text:\n{}",
        bad.len(),
        shown.join("\n")
    );
}
