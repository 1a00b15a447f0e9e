//! The control-flow graph and liveness of every code object of the
//! compiled corpus, against llvm-objdump-22's listing of it
//! (`build/corpus/<target>/<name>.objdump`, `make corpus`; or
//! `ROCJITSU_CORPUS_DIR`):
//!
//! - every instruction of the graph is one of the listing's, with the
//!   same text;
//! - every block starts at a function entry, at a branch target the
//!   listing names (`<sym+0xoff>`), or after an instruction that ends a
//!   block (branch, call, `s_setpc`, `s_endpgm`, `s_trap`); no block has
//!   such a start inside it; every branch's block has an edge to the
//!   listing's target;
//! - the graph follows everything (no unknown indirect branch) on every
//!   target; the only words it does not decode are those the listing
//!   shows as `.long`;
//! - liveness, where the isa crate describes registers: every register an
//!   instruction reads is live before it; and for every register an
//!   instruction writes, a search forward along the listing's control
//!   flow (the next instruction, the annotated branch targets) decides
//!   whether some path reads it before a whole write: live after the
//!   instruction if one does, dead if none does (searches that reach a
//!   call or an indirect jump, whose effect the listing does not show,
//!   decide nothing).

use rocjitsu_code::CodeObject;
use rocjitsu_code::analysis::liveness::Liveness;
use rocjitsu_code::cfg::{Cfg, Issue};
use rocjitsu_isa::Target;
use rocjitsu_isa::gfx9::regs::{EXEC, Range};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

fn corpus_dir() -> PathBuf {
    std::env::var_os("ROCJITSU_CORPUS_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../build/corpus"),
        PathBuf::from,
    )
}

/// One instruction of the listing.
#[derive(Clone, Debug)]
struct Line {
    text: String,
    mnemonic: String,
    /// The `<sym+0xoff>` annotation of a branch, resolved.
    target: Option<u64>,
    next: u64,
}

/// The listing: instructions by address, symbols by name.
struct Listing {
    insts: BTreeMap<u64, Line>,
    /// Words the disassembler prints as `.long` (not instructions).
    invalid: BTreeSet<u64>,
}

fn parse_listing(text: &str) -> Listing {
    let mut syms: HashMap<String, u64> = HashMap::new();
    // Address, text, branch annotation (symbol, offset), dwords.
    type Raw = (u64, String, Option<(String, u64)>, usize);
    let mut raw: Vec<Raw> = Vec::new();
    let mut invalid = BTreeSet::new();
    for line in text.lines() {
        // `0000000000001900 <poly>:`
        if let Some((addr, rest)) = line.split_once(" <")
            && let Some(name) = rest.strip_suffix(">:")
            && let Ok(a) = u64::from_str_radix(addr, 16)
        {
            syms.insert(name.to_string(), a);
            continue;
        }
        let Some((inst, comment)) = line.trim().split_once("//") else {
            continue;
        };
        let inst = inst.trim();
        let Some((addr, rest)) = comment.trim().split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        if inst.starts_with(".long") {
            invalid.insert(addr);
            continue;
        }
        if inst.is_empty() || inst.starts_with('.') {
            continue;
        }
        let mut words = 0;
        let mut note = None;
        for tok in rest.split_whitespace() {
            if tok.len() == 8 && u32::from_str_radix(tok, 16).is_ok() {
                words += 1;
            } else if let Some(t) = tok.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
                let (sym, off) = match t.split_once('+') {
                    Some((s, o)) => (
                        s,
                        u64::from_str_radix(o.trim_start_matches("0x"), 16).unwrap(),
                    ),
                    None => (t, 0),
                };
                note = Some((sym.to_string(), off));
            }
        }
        raw.push((addr, inst.to_string(), note, words));
    }
    let mut insts = BTreeMap::new();
    for (addr, text, note, words) in raw {
        let mnemonic = text.split_whitespace().next().unwrap_or("").to_string();
        let target = note.map(|(s, off)| syms[&s] + off);
        insts.insert(
            addr,
            Line {
                text,
                mnemonic,
                target,
                next: addr + 4 * words as u64,
            },
        );
    }
    Listing { insts, invalid }
}

/// Whether a block ends after an instruction with this mnemonic.
fn ends_block(m: &str) -> bool {
    m == "s_branch"
        || m.starts_with("s_cbranch_")
        || m.starts_with("s_endpgm")
        || matches!(m, "s_setpc_b64" | "s_swappc_b64" | "s_call_b64" | "s_trap")
}

/// Whether control goes on to the next instruction after `m`.
fn falls_through(m: &str) -> bool {
    !(m == "s_branch" || m.starts_with("s_endpgm") || m == "s_setpc_b64")
}

/// Where the listing says control may go after an instruction; `None` for
/// the instructions whose effect on registers it does not show (calls and
/// indirect jumps).
fn listing_succs(l: &Line) -> Option<Vec<u64>> {
    let m = l.mnemonic.as_str();
    if matches!(m, "s_setpc_b64" | "s_swappc_b64" | "s_call_b64") || m.starts_with("s_rfe") {
        return None;
    }
    let mut v = Vec::new();
    if let Some(t) = l.target {
        v.push(t);
    }
    if falls_through(m) {
        v.push(l.next);
    }
    Some(v)
}

/// The outcome of a forward search for a read of `u`.
#[derive(Debug, PartialEq, Eq)]
enum Search {
    Read,
    NoRead,
    Unknown,
}

struct Oracle<'a> {
    listing: &'a Listing,
    /// Per address: units read and units written whole.
    reads: HashMap<u64, Vec<Range>>,
    kills: HashMap<u64, Vec<Range>>,
}

impl Oracle<'_> {
    fn search(&self, from: &[u64], u: u16) -> Search {
        let mut seen: BTreeSet<u64> = BTreeSet::new();
        let mut stack: Vec<u64> = from.to_vec();
        let mut unknown = false;
        while let Some(a) = stack.pop() {
            if !seen.insert(a) {
                continue;
            }
            let Some(l) = self.listing.insts.get(&a) else {
                unknown = true;
                continue;
            };
            if self
                .reads
                .get(&a)
                .is_some_and(|r| r.iter().any(|r| r.contains(u)))
            {
                return Search::Read;
            }
            if self
                .kills
                .get(&a)
                .is_some_and(|r| r.iter().any(|r| r.contains(u)))
            {
                continue;
            }
            match listing_succs(l) {
                Some(v) => stack.extend(v),
                None => unknown = true,
            }
        }
        if unknown {
            Search::Unknown
        } else {
            Search::NoRead
        }
    }
}

#[derive(Default, Debug)]
struct Counts {
    objects: usize,
    functions: usize,
    blocks: usize,
    instructions: usize,
    live_checked: usize,
    live_read: usize,
    dead: usize,
    undecided: usize,
    /// Reachable words neither decoder decodes.
    undecodable: usize,
}

fn check_object(t: Target, path: &std::path::Path, counts: &mut Counts, bad: &mut Vec<String>) {
    let name = path.display().to_string();
    let co = CodeObject::parse(&name, std::fs::read(path).unwrap()).unwrap();
    let listing = parse_listing(&std::fs::read_to_string(path.with_extension("objdump")).unwrap());
    let cfg = Cfg::of(&co).unwrap();
    counts.objects += 1;
    counts.functions += cfg.functions.len();
    counts.blocks += cfg.blocks.len();
    counts.instructions += cfg.sites.len();
    let mut fail = |m: String| bad.push(format!("{t} {name}: {m}"));
    // The graph is complete but for words LLVM does not decode either
    // (Triton's gfx1201 code holds some).
    for i in &cfg.issues {
        match i {
            Issue::Undecodable { address } if listing.invalid.contains(address) => {
                counts.undecodable += 1;
            }
            _ => fail(format!("incomplete: {i}")),
        }
    }
    // Instructions are the listing's.
    for s in &cfg.sites {
        match listing.insts.get(&s.address) {
            Some(l) if l.text == s.inst.to_string() => {}
            Some(l) => fail(format!(
                "0x{:x}: `{}` where the listing has `{}`",
                s.address, s.inst, l.text
            )),
            None => fail(format!(
                "0x{:x}: not an instruction of the listing",
                s.address
            )),
        }
    }
    // Leaders per the listing: entries, annotated targets of reachable
    // branches, instructions after reachable block enders.
    let mut leaders: BTreeSet<u64> = cfg.functions.iter().map(|f| f.entry).collect();
    for s in &cfg.sites {
        let Some(l) = listing.insts.get(&s.address) else {
            continue;
        };
        if let Some(tg) = l.target {
            leaders.insert(tg);
        }
        if ends_block(&l.mnemonic) {
            leaders.insert(l.next);
        }
    }
    for b in &cfg.blocks {
        if !leaders.contains(&b.start) {
            fail(format!(
                "block at 0x{:x} starts at no leader of the listing",
                b.start
            ));
        }
        for s in &cfg.sites[b.insts.start + 1..b.insts.end] {
            if leaders.contains(&s.address) {
                fail(format!(
                    "block 0x{:x}..0x{:x} holds the leader 0x{:x}",
                    b.start, b.end, s.address
                ));
            }
        }
        let last = &cfg.sites[b.insts.end - 1];
        if let Some(tg) = listing.insts.get(&last.address).and_then(|l| l.target) {
            let to = cfg.block_at(tg);
            if !b.succs.iter().any(|e| Some(e.to) == to) {
                fail(format!(
                    "block 0x{:x}: no edge to the branch target 0x{tg:x}",
                    b.start
                ));
            }
        }
    }
    // Liveness.
    let Ok(live) = Liveness::of(&cfg) else {
        return;
    };
    let wave64 = cfg.wave == rocjitsu_isa::WaveSize::Wave64;
    let mut oracle = Oracle {
        listing: &listing,
        reads: HashMap::new(),
        kills: HashMap::new(),
    };
    for s in &cfg.sites {
        let g = s.inst.regs().unwrap();
        let mut reads: Vec<Range> = g.reads().collect();
        if !s.inst.mnemonic().starts_with("s_") {
            reads.push(Range::new(EXEC, if wave64 { 2 } else { 1 }));
        }
        let kills: Vec<Range> = g.writes().filter(|r| r.is_scalar()).collect();
        oracle.reads.insert(s.address, reads);
        oracle.kills.insert(s.address, kills);
    }
    for (k, s) in cfg.sites.iter().enumerate() {
        for r in &oracle.reads[&s.address] {
            if !live.live_in[k].contains_range(*r) {
                fail(format!(
                    "0x{:x} `{}` reads {r}, not live before it ({})",
                    s.address, s.inst, live.live_in[k]
                ));
            }
        }
        let Some(succs) = listing.insts.get(&s.address).and_then(listing_succs) else {
            continue;
        };
        let g = s.inst.regs().unwrap();
        for u in g.writes().flat_map(|r| r.units()) {
            counts.live_checked += 1;
            let found = oracle.search(&succs, u);
            let is_live = live.live_out[k].contains(u);
            match found {
                Search::Read => counts.live_read += 1,
                Search::NoRead => counts.dead += 1,
                Search::Unknown => counts.undecided += 1,
            }
            let want = match found {
                Search::Read => true,
                Search::NoRead => false,
                Search::Unknown => continue,
            };
            if want != is_live {
                fail(format!(
                    "0x{:x} `{}`: {} is {} after it, but a search of the listing finds {:?}",
                    s.address,
                    s.inst,
                    Range::new(u, 1),
                    if is_live { "live" } else { "dead" },
                    found
                ));
            }
        }
    }
}

#[test]
fn corpus_graphs_and_liveness_match_the_listing() {
    let dir = corpus_dir();
    let mut bad: Vec<String> = Vec::new();
    let mut per_target: Vec<(Target, Counts)> = Vec::new();
    for t in Target::KNOWN.into_iter().filter(|t| t.has_register_roles()) {
        let Ok(rd) = std::fs::read_dir(dir.join(t.to_string())) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "hsaco"))
            .collect();
        paths.sort();
        let mut counts = Counts::default();
        for p in paths {
            check_object(t, &p, &mut counts, &mut bad);
        }
        per_target.push((t, counts));
    }
    for (t, c) in &per_target {
        eprintln!("{t}: {c:?}");
    }
    let targets: Vec<Target> = per_target
        .iter()
        .filter(|(_, c)| c.objects > 0)
        .map(|(t, _)| *t)
        .collect();
    assert!(
        targets.len() >= 6,
        "corpus for {} targets only: run `make corpus`",
        targets.len()
    );
    let gfx9_checked: usize = per_target
        .iter()
        .filter(|(t, _)| t.family() == rocjitsu_isa::Family::Gfx9)
        .map(|(_, c)| c.live_checked - c.undecided)
        .sum();
    assert!(gfx9_checked > 10_000, "only {gfx9_checked} writes decided");
    let shown: Vec<&String> = bad.iter().take(40).collect();
    assert!(
        bad.is_empty(),
        "{} disagreements with the listing:\n{}",
        bad.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
