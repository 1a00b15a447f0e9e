//! Exhaustive sweeps of immediate fields against LLVM 22: every SOPP and
//! SOPK opcode with every 16-bit immediate (SOPK with a few destinations),
//! on gfx1100, gfx1151 and gfx1201. A case agrees as in
//! `random_diff.rs` (same text and length, or both invalid); any
//! disagreement or re-encoding failure fails. About 88M words: not part of
//! `cargo test` (`test = false`); run with `make test-diff-sweep`.

use llvm_oracle::{Outcome, decode_isolated_with};
use rocjitsu_isa::{Target, WaveSize};
use std::path::Path;

const WORKER: &str = env!("CARGO_BIN_EXE_llvm-oracle-worker");
const SHOW: usize = 20;

fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Compares `cases` (8 bytes each: the word and a literal dword), prints
/// the counts and the first disagreements, and fails on any.
fn sweep(target: Target, wave: WaveSize, what: &str, cases: &[Vec<u8>]) {
    let decode = |b: &[u8]| -> Option<(String, usize, Vec<u8>)> {
        let i = rocjitsu_isa::decode_in(target, wave, b).ok()?;
        Some((i.to_string(), i.len(), i.encode()))
    };
    let features = if wave == WaveSize::default_for(target) {
        ""
    } else {
        wave.llvm_feature()
    };
    let oracle = decode_isolated_with(Path::new(WORKER), target.name(), features, cases)
        .unwrap_or_else(|e| panic!("{e}"));
    let (mut compared, mut bad, mut round) = (0usize, Vec::new(), 0usize);
    for (bytes, want) in cases.iter().zip(&oracle) {
        let ours = decode(bytes);
        if let Some((_, len, enc)) = &ours
            && (bytes.get(..*len) != Some(&enc[..]) || enc.len() != *len)
        {
            round += 1;
        }
        if *want == Outcome::Crashed {
            continue;
        }
        compared += 1;
        let ok = match (&ours, want) {
            (Some((t, len, _)), Outcome::Decoded { text, size }) => {
                len == size && normalise(t) == normalise(text)
            }
            (None, Outcome::Invalid) => true,
            _ => false,
        };
        if !ok {
            let o = ours.map_or("<invalid>".to_string(), |o| o.0);
            let l = match want {
                Outcome::Decoded { text, .. } => text.clone(),
                _ => "<invalid>".to_string(),
            };
            bad.push(format!("{} | {o} | {l}", hex(bytes)));
        }
    }
    println!(
        "{} {wave:?} {what}: {} cases, {compared} compared, {} disagree, {round} round-trip failures",
        target.name(),
        cases.len(),
        bad.len()
    );
    for b in bad.iter().take(SHOW) {
        println!("    {b}");
    }
    assert!(bad.is_empty() && round == 0, "{} {what}", target.name());
}

fn case(w0: u32) -> Vec<u8> {
    let mut v = w0.to_le_bytes().to_vec();
    v.extend_from_slice(&0x1234_5678u32.to_le_bytes());
    v
}

#[test]
fn sopp_every_immediate() {
    for target in [Target::Gfx1100, Target::Gfx1151, Target::Gfx1201] {
        let cases: Vec<_> = (0..128u32)
            .flat_map(|op| (0..=0xffffu32).map(move |imm| case(0xbf80_0000 | op << 16 | imm)))
            .collect();
        sweep(target, WaveSize::Wave32, "SOPP", &cases);
    }
}

#[test]
fn sopk_every_immediate() {
    for target in [Target::Gfx1100, Target::Gfx1151, Target::Gfx1201] {
        for wave in [WaveSize::Wave32, WaveSize::Wave64] {
            let cases: Vec<_> = (0..32u32)
                .flat_map(|op| {
                    [0u32, 5, 106, 125, 127].into_iter().flat_map(move |sdst| {
                        (0..=0xffffu32)
                            .map(move |imm| case(0xb000_0000 | op << 23 | sdst << 16 | imm))
                    })
                })
                .collect();
            sweep(target, wave, "SOPK", &cases);
        }
    }
}
