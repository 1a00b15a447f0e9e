//! Differential test of `rocjitsu_isa::decode_in` against LLVM 22's
//! disassembler over seeded random instruction words, for gfx90a, gfx942,
//! gfx950, and gfx1100, gfx1151 and gfx1201 in 32- and 64-lane waves (the
//! full count in each; LLVM gets `+wavefrontsize64` for the latter); on
//! gfx1201 also per encoding family (the words of one family's top bits),
//! and in LLVM's real-true16 mode (`+real-true16`, the mode Triton's
//! gfx1201 code is in): uniformly and per encoding family whose tables
//! depend on the mode (VOP1/VOP2/VOPC, VOP3, VINTERP).
//!
//! Every case is 12 random bytes on GFX9 and 16 on GFX11 (its longest forms
//! are VOP3P with DPP and a literal), so 64-bit encodings and literals get
//! random later dwords. Most cases are uniformly random; a fixed share is
//! forced to exercise literals (a source field of 255) and the SDWA/DPP
//! markers (src0 = 0xF9/0xFA in VOP1/VOP2/VOPC on GFX9; DPP16/DPP8 markers
//! in VOP1/VOP2/VOPC, VOP3 and VOP3P, DPP8 selectors below 256, and VOPD, on
//! GFX11). A case agrees when LLVM and
//! we print the same text (whitespace-normalised) and consume the same number
//! of bytes, or when LLVM reports `<invalid>` and we return an error. Every
//! compared case must agree, and every case we decode must re-encode to its
//! input bytes.
//!
//! LLVM runs in `llvm-oracle-worker` child processes; cases that crash LLVM
//! are counted and left out of the rate. Environment overrides:
//! `ROCJITSU_DIFF_CASES` (cases per target and wave size, default 200000),
//! `ROCJITSU_DIFF_SEED`, `ROCJITSU_DIFF_SHOW` (disagreements printed),
//! `ROCJITSU_DIFF_ONLY` (print only disagreements of this encoding, e.g.
//! `vop3`).
//! Run with `cargo test --release -p llvm-oracle --test random_diff -- --nocapture`.

use llvm_oracle::{Outcome, decode_isolated, decode_isolated_with};
use rocjitsu_isa::{Family, Target, True16, WaveSize};
use std::collections::BTreeMap;
use std::path::Path;

const CASES: usize = 200_000;
const SEED: u64 = 0x726f_636a_6974_7375;
const SHOW: usize = 25;
const WORKER: &str = env!("CARGO_BIN_EXE_llvm-oracle-worker");

/// splitmix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number
/// generators").
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Sets the bits under `mask` of `w` to `value`.
fn set(w: u32, mask: u32, value: u32) -> u32 {
    (w & !mask) | (value & mask)
}

/// Forces the first two dwords of one case in 12 (each of the 12 kinds below
/// in 1/144 of the cases) to exercise literals and SDWA/DPP; the other cases
/// stay uniformly random.
fn force(rng: &mut SplitMix64, w: u32, w1: u32) -> (u32, u32) {
    match rng.below(144) {
        // SDWA (0xF9) or DPP (0xFA) marker in src0 of VOP2 / VOP1 / VOPC.
        0 => (
            set(
                set(w, 0x8000_01ff, 0xf9),
                0x7e00_0000,
                (rng.below(0x3e) as u32) << 25,
            ),
            w1,
        ),
        1 => (set(w, 0xfe00_01ff, 0x7e00_00fa), w1),
        2 => (set(w, 0xfe00_01ff, 0x7c00_00f9 + rng.below(2) as u32), w1),
        3 => (set(w, 0xfe00_01ff, 0x7e00_00f9), w1),
        // Literal in src0 of VOP2 / VOP1 / VOPC.
        4 => (set(w, 0x8000_01ff, 0xff), w1),
        5 => (set(w, 0xfe00_01ff, 0x7e00_00ff), w1),
        6 => (set(w, 0xfe00_01ff, 0x7c00_00ff), w1),
        // Literal in SOP2 ssrc0 / ssrc1, SOP1 ssrc0, SOPC ssrc0 or ssrc1.
        7 => (
            set(
                set(w, 0xc000_00ff, 0x8000_00ff),
                0x3000_0000,
                (rng.below(3) as u32) << 28,
            ),
            w1,
        ),
        8 => (
            set(
                set(w, 0xc000_ff00, 0x8000_ff00),
                0x3000_0000,
                (rng.below(3) as u32) << 28,
            ),
            w1,
        ),
        9 => (set(w, 0xff80_00ff, 0xbe80_00ff), w1),
        10 => (
            set(w, 0xff80_0000 | 0xff << (8 * rng.below(2)), 0xbf00_ffff),
            w1,
        ),
        // VOP3 / VOP3P with a source field of 255 (second dword).
        11 => {
            let shift = 9 * rng.below(3);
            (
                set(w, 0xfc00_0000, 0xd000_0000),
                set(w1, 0x1ff << shift, 0xff << shift),
            )
        }
        _ => (w, w1),
    }
}

/// The GFX10/GFX11 form of [`force`]: 13 cases in 144 (each kind in
/// 1/144); `sdwa` (GFX10) adds the SDWA marker 0xF9 to the DPP markers.
fn force_gfx11(rng: &mut SplitMix64, w: u32, w1: u32, sdwa: bool) -> (u32, u32) {
    let vop = |w: u32| set(w, 0x8000_0000, 0);
    let markers: &[u32] = if sdwa {
        &[0xfa, 0xe9, 0xea, 0xf9]
    } else {
        &[0xfa, 0xe9, 0xea]
    };
    let dpp = |rng: &mut SplitMix64| markers[rng.below(markers.len() as u64) as usize];
    match rng.below(144) {
        // DPP16 / DPP8 marker or literal in src0 of VOP1 / VOP2 / VOPC.
        0 | 1 => (set(vop(w), 0x1ff, dpp(rng)), w1),
        2 => (set(w, 0xfe00_01ff, 0x7e00_0000 | dpp(rng)), w1),
        3 => (set(w, 0xfe00_01ff, 0x7c00_0000 | dpp(rng)), w1),
        4 => (set(vop(w), 0x1ff, 0xff), w1),
        // Literal in SOP2/SOPK/SOP1/SOPC/SOPP ssrc0 or ssrc1.
        5 => (set(w, 0xc000_00ff, 0x8000_00ff), w1),
        6 => (set(w, 0xc000_ff00, 0x8000_ff00), w1),
        // VOP3 with a source of 255, or a DPP marker in src0.
        7 => {
            let shift = 9 * rng.below(3);
            (
                set(w, 0xfc00_0000, 0xd400_0000),
                set(w1, 0x1ff << shift, 0xff << shift),
            )
        }
        8 => (set(w, 0xfc00_0000, 0xd400_0000), set(w1, 0x1ff, dpp(rng))),
        // VOP3P likewise.
        9 => {
            let shift = 9 * rng.below(3);
            (
                set(w, 0xff80_0000, 0xcc00_0000),
                set(w1, 0x1ff << shift, 0xff << shift),
            )
        }
        10 => (set(w, 0xff80_0000, 0xcc00_0000), set(w1, 0x1ff, dpp(rng))),
        // VOPD with a literal in srcX0 or srcY0.
        11 => match rng.below(2) {
            0 => (set(w, 0xfc00_01ff, 0xc800_00ff), w1),
            _ => (set(w, 0xfc00_0000, 0xc800_0000), set(w1, 0x1ff, 0xff)),
        },
        // DPP8 in VOP2 / VOP1 with a selector below 256 (LLVM reads those
        // through its source-operand decoder on some opcodes).
        12 => {
            let w = match rng.below(2) {
                0 => vop(w),
                _ => set(w, 0xfe00_0000, 0x7e00_0000),
            };
            (set(w, 0x1ff, 0xe9 + rng.below(2) as u32), w1 & 0xffff)
        }
        _ => (w, w1),
    }
}

/// The seeded cases for one target: 12 bytes each on GFX9, 16 on GFX11.
fn cases(target: Target, seed: u64, n: usize) -> Vec<Vec<u8>> {
    let mut rng = SplitMix64(seed);
    let gfx9 = target.family() == Family::Gfx9;
    (0..n)
        .map(|_| {
            let a = rng.next();
            let b = rng.next();
            let (w0, w1) = if gfx9 {
                force(&mut rng, a as u32, (a >> 32) as u32)
            } else {
                force_gfx11(
                    &mut rng,
                    a as u32,
                    (a >> 32) as u32,
                    target.family() == Family::Gfx10,
                )
            };
            let mut v = Vec::with_capacity(16);
            v.extend_from_slice(&w0.to_le_bytes());
            v.extend_from_slice(&w1.to_le_bytes());
            v.extend_from_slice(&(b as u32).to_le_bytes());
            if !gfx9 {
                v.extend_from_slice(&((b >> 32) as u32).to_le_bytes());
            }
            // GFX10's longest form, MIMG with three NSA dwords, has five.
            if target.family() == Family::Gfx10 {
                v.extend_from_slice(&(rng.next() as u32).to_le_bytes());
            }
            v
        })
        .collect()
}

/// The encoding of a first dword, by its family's `encoding_of`.
fn encoding_name(target: Target, w0: u32) -> String {
    let e = match target.family() {
        Family::Gfx9 => rocjitsu_isa::gfx9::encoding_of(w0).map(|e| format!("{e:?}")),
        Family::Gfx10 => rocjitsu_isa::gfx10::encoding_of(w0).map(|e| format!("{e:?}")),
        Family::Gfx12 => rocjitsu_isa::gfx12::encoding_of(w0).map(|e| format!("{e:?}")),
        _ => rocjitsu_isa::gfx11::encoding_of(w0).map(|e| format!("{e:?}")),
    };
    e.unwrap_or_else(|| "none".to_string())
}

fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The comparison of one target's cases.
#[derive(Default)]
struct Report {
    cases: usize,
    crashes: usize,
    agree: usize,
    round_trip: Vec<String>,
    /// Per encoding (by the first dword's top bits): cases, disagreements.
    by_encoding: BTreeMap<String, (usize, usize)>,
    disagreements: Vec<String>,
}

impl Report {
    fn rate(&self) -> f64 {
        100.0 * self.agree as f64 / (self.cases - self.crashes).max(1) as f64
    }
}

/// Which disagreements are printed: the first `count`, of the encoding named
/// `only` (as `encoding_of` names it, any case) if given.
struct Show {
    count: usize,
    only: Option<String>,
}

/// What our decoder made of a case: its text, length and re-encoded bytes.
struct Ours {
    text: String,
    len: usize,
    enc: Vec<u8>,
}

/// [`Ours`] from `rocjitsu_isa::decode_in` (`None`: an error).
fn decode_in(target: Target, wave: WaveSize, bytes: &[u8]) -> Option<Ours> {
    decode_with(target, wave, True16::LlvmDefault, bytes)
}

/// [`Ours`] from `rocjitsu_isa::decode_with` (`None`: an error).
fn decode_with(target: Target, wave: WaveSize, t16: True16, bytes: &[u8]) -> Option<Ours> {
    let i = rocjitsu_isa::decode_with(target, wave, t16, bytes).ok()?;
    Some(Ours {
        text: i.to_string(),
        len: i.len(),
        enc: i.encode(),
    })
}

fn compare(
    target: Target,
    decode: &dyn Fn(&[u8]) -> Option<Ours>,
    cases: &[Vec<u8>],
    oracle: &[Outcome],
    show: &Show,
) -> Report {
    let mut r = Report {
        cases: cases.len(),
        ..Report::default()
    };
    for (bytes, want) in cases.iter().zip(oracle) {
        let ours = decode(bytes);
        if let Some(o) = &ours
            && (bytes.get(..o.enc.len()) != Some(&o.enc[..]) || o.enc.len() != o.len)
        {
            r.round_trip.push(format!(
                "{} | {} | re-encoded {}",
                hex(&bytes[..o.len.min(bytes.len())]),
                o.text,
                hex(&o.enc)
            ));
        }
        if *want == Outcome::Crashed {
            r.crashes += 1;
            continue;
        }
        let ok = match (&ours, want) {
            (Some(o), Outcome::Decoded { text, size }) => {
                o.len == *size && normalise(&o.text) == normalise(text)
            }
            (None, Outcome::Invalid) => true,
            _ => false,
        };
        let w0 = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let enc = encoding_name(target, w0);
        let shown = show
            .only
            .as_ref()
            .is_none_or(|o| o.eq_ignore_ascii_case(&enc));
        let slot = r.by_encoding.entry(enc).or_default();
        slot.0 += 1;
        if ok {
            r.agree += 1;
            continue;
        }
        slot.1 += 1;
        if shown && r.disagreements.len() < show.count {
            let (otext, olen) = match &ours {
                Some(o) => (o.text.clone(), o.len),
                None => ("<invalid>".to_string(), 4),
            };
            let (ltext, llen) = match want {
                Outcome::Decoded { text, size } => (text.clone(), *size),
                _ => ("<invalid>".to_string(), 4),
            };
            r.disagreements.push(format!(
                "{} | {otext} | {ltext}",
                hex(&bytes[..olen.max(llen).min(bytes.len())])
            ));
        }
    }
    r
}

fn print(target: Target, wave: WaveSize, t16: True16, r: &Report) {
    println!(
        "{}{}{}: {} cases, {} crash LLVM, {}/{} agree ({:.3}%), {} round-trip failures",
        target.name(),
        if target.wave_size() == 32 {
            format!(" wave{}", wave.lanes())
        } else {
            String::new()
        },
        if t16.llvm_feature(target).is_empty() {
            ""
        } else {
            " real-true16"
        },
        r.cases,
        r.crashes,
        r.agree,
        r.cases - r.crashes,
        r.rate(),
        r.round_trip.len()
    );
    println!("  disagreements by encoding (bad/cases):");
    for (enc, (n, bad)) in &r.by_encoding {
        if *bad > 0 {
            println!(
                "    {enc:<8} {bad:>7}/{n:<7} ({:.3}% agree)",
                100.0 * (n - bad) as f64 / *n as f64
            );
        }
    }
    println!("  first disagreements (HEX | ours | llvm):");
    for d in &r.disagreements {
        println!("    {d}");
    }
    for d in r.round_trip.iter().take(25) {
        println!("  round-trip failure: {d}");
    }
}

/// Compares `ROCJITSU_DIFF_CASES` cases for `target` in waves of `wave`
/// lanes (targets with 32-lane waves are called once per wave size, each
/// with its own seed).
fn run(target: Target, wave: WaveSize) {
    let n = env_or("ROCJITSU_DIFF_CASES", CASES);
    let mut seed =
        env_or("ROCJITSU_DIFF_SEED", SEED) ^ (target as u64).wrapping_mul(0x1000_0000_01b3);
    if target.wave_size() == 32 {
        seed ^= u64::from(wave.lanes()) << 56;
    }
    let cases = cases(target, seed, n);
    check(target, wave, True16::LlvmDefault, &cases, &|b| {
        decode_in(target, wave, b)
    });
}

/// Compares `cases` decoded by `decode` with LLVM for `target` in waves of
/// `wave` lanes and the 16-bit operand mode `t16`, prints the report and
/// fails on any disagreement.
fn check(
    target: Target,
    wave: WaveSize,
    t16: True16,
    cases: &[Vec<u8>],
    decode: &dyn Fn(&[u8]) -> Option<Ours>,
) {
    let show = Show {
        count: env_or("ROCJITSU_DIFF_SHOW", SHOW),
        only: std::env::var("ROCJITSU_DIFF_ONLY").ok(),
    };
    let wave_feature = if wave == WaveSize::default_for(target) {
        ""
    } else {
        wave.llvm_feature()
    };
    let features = [t16.llvm_feature(target), wave_feature]
        .into_iter()
        .filter(|f| !f.is_empty())
        .collect::<Vec<_>>()
        .join(",");
    let oracle = decode_isolated_with(Path::new(WORKER), target.name(), &features, cases)
        .unwrap_or_else(|e| panic!("{e}"));
    let r = compare(target, decode, cases, &oracle, &show);
    print(target, wave, t16, &r);
    assert!(
        r.round_trip.is_empty(),
        "{}: {} round-trip failures",
        target.name(),
        r.round_trip.len()
    );
    let compared = r.cases - r.crashes;
    assert_eq!(
        r.agree,
        compared,
        "{} {wave:?}: {} of {compared} cases disagree with LLVM ({:.3}% agree)",
        target.name(),
        compared - r.agree,
        r.rate()
    );
}

#[test]
fn random_words_gfx90a() {
    run(Target::Gfx90a, WaveSize::Wave64);
}

#[test]
fn random_words_gfx942() {
    run(Target::Gfx942, WaveSize::Wave64);
}

#[test]
fn random_words_gfx950() {
    run(Target::Gfx950, WaveSize::Wave64);
}

#[test]
fn random_words_gfx908() {
    run(Target::Gfx908, WaveSize::Wave64);
}

#[test]
fn random_words_gfx1030_wave32() {
    run(Target::Gfx1030, WaveSize::Wave32);
}

#[test]
fn random_words_gfx1030_wave64() {
    run(Target::Gfx1030, WaveSize::Wave64);
}

#[test]
fn random_words_gfx1010_wave32() {
    run(Target::Gfx1010, WaveSize::Wave32);
}

#[test]
fn random_words_gfx1010_wave64() {
    run(Target::Gfx1010, WaveSize::Wave64);
}

#[test]
fn random_words_gfx1100_wave32() {
    run(Target::Gfx1100, WaveSize::Wave32);
}

#[test]
fn random_words_gfx1100_wave64() {
    run(Target::Gfx1100, WaveSize::Wave64);
}

#[test]
fn random_words_gfx1151_wave32() {
    run(Target::Gfx1151, WaveSize::Wave32);
}

#[test]
fn random_words_gfx1151_wave64() {
    run(Target::Gfx1151, WaveSize::Wave64);
}

#[test]
fn random_words_gfx1201_wave32() {
    run(Target::Gfx1201, WaveSize::Wave32);
}

#[test]
fn random_words_gfx1201_wave64() {
    run(Target::Gfx1201, WaveSize::Wave64);
}

/// Cases per gfx1201 encoding family unless `ROCJITSU_DIFF_CASES` is set
/// (`make test-diff-deep` runs 1,000,000).
const FAMILY_CASES: usize = 50_000;

/// Cases per gfx908 and GFX10 encoding family (25 and 36 families: fewer
/// per family, for CI time; `make test-diff-deep` runs 1,000,000).
const FAMILY_CASES_SMALL: usize = 20_000;

/// gfx1201 per encoding family (see [`run_family`]).
fn run_gfx1201_family(what: &str, wave: WaveSize, mask: u8, value: u8) {
    run_family(Target::Gfx1201, what, wave, mask, value, FAMILY_CASES);
}

/// Per encoding family: the seeded cases with the first dword's top byte's
/// bits under `mask` set to `value`, so the encodings that uniform words
/// reach rarely (memory, images) get cases of their own.
fn run_family(target: Target, what: &str, wave: WaveSize, mask: u8, value: u8, count: usize) {
    run_family_in(
        target,
        what,
        wave,
        True16::LlvmDefault,
        (mask, value),
        count,
    );
}

/// [`run_family`] in the 16-bit operand mode `t16`.
fn run_family_in(
    target: Target,
    what: &str,
    wave: WaveSize,
    t16: True16,
    (mask, value): (u8, u8),
    count: usize,
) {
    let n = env_or("ROCJITSU_DIFF_CASES", count);
    let mut seed = env_or("ROCJITSU_DIFF_SEED", SEED)
        ^ (target as u64).wrapping_mul(0x1000_0000_01b3)
        ^ u64::from(value);
    if target.wave_size() == 32 {
        seed ^= u64::from(wave.lanes()) << 56;
    }
    let cases: Vec<_> = cases(target, seed, n)
        .into_iter()
        .map(|mut c| {
            c[3] = c[3] & !mask | value;
            c
        })
        .collect();
    println!("{} {what} words:", target.name());
    check(target, wave, t16, &cases, &|b| {
        decode_with(target, wave, t16, b)
    });
}

/// gfx1201 in real-true16 mode: uniform words (their own seed) in both
/// wave sizes, then the encoding families whose tables depend on the mode.
fn run_gfx1201_real_true16(wave: WaveSize) {
    let t = Target::Gfx1201;
    let n = env_or("ROCJITSU_DIFF_CASES", CASES);
    let seed = env_or("ROCJITSU_DIFF_SEED", SEED)
        ^ (t as u64).wrapping_mul(0x1000_0000_01b3)
        ^ u64::from(wave.lanes()) << 56
        ^ 0x7416;
    let cases = cases(t, seed, n);
    check(t, wave, True16::Real, &cases, &|b| {
        decode_with(t, wave, True16::Real, b)
    });
    for (what, mask, value) in [
        ("VOP1/VOP2/VOPC", 0x80, 0),
        ("VOP3", 0xfc, 0xd4),
        ("VOP3P/VINTERP/VDSDIR", 0xfc, 0xcc),
    ] {
        run_family_in(t, what, wave, True16::Real, (mask, value), FAMILY_CASES);
    }
}

#[test]
fn random_words_gfx1201_real_true16_wave32() {
    run_gfx1201_real_true16(WaveSize::Wave32);
}

#[test]
fn random_words_gfx1201_real_true16_wave64() {
    run_gfx1201_real_true16(WaveSize::Wave64);
}

/// SOP1, SOP2, SOPC, SOPK and SOPP: top bits 0b10.
#[test]
fn random_scalar_words_gfx1201_wave32() {
    run_gfx1201_family("scalar ALU", WaveSize::Wave32, 0xc0, 0x80);
}

#[test]
fn random_scalar_words_gfx1201_wave64() {
    run_gfx1201_family("scalar ALU", WaveSize::Wave64, 0xc0, 0x80);
}

/// SMEM: top bits 0b111101.
#[test]
fn random_smem_words_gfx1201_wave32() {
    run_gfx1201_family("SMEM", WaveSize::Wave32, 0xfc, 0xf4);
}

#[test]
fn random_smem_words_gfx1201_wave64() {
    run_gfx1201_family("SMEM", WaveSize::Wave64, 0xfc, 0xf4);
}

/// VOP1, VOP2 and VOPC with their literal and DPP forms: top bit 0.
#[test]
fn random_vop_words_gfx1201_wave32() {
    run_gfx1201_family("VOP1/VOP2/VOPC", WaveSize::Wave32, 0x80, 0);
}

#[test]
fn random_vop_words_gfx1201_wave64() {
    run_gfx1201_family("VOP1/VOP2/VOPC", WaveSize::Wave64, 0x80, 0);
}

/// VOP3 (incl. VOPC with SDST, VOP3 DPP16/DPP8 and literals): top bits
/// 0b110101.
#[test]
fn random_vop3_words_gfx1201_wave32() {
    run_gfx1201_family("VOP3", WaveSize::Wave32, 0xfc, 0xd4);
}

#[test]
fn random_vop3_words_gfx1201_wave64() {
    run_gfx1201_family("VOP3", WaveSize::Wave64, 0xfc, 0xd4);
}

/// VOP3P (packed math, dot products, WMMA, SWMMAC; DPP and literals): top
/// byte 0xcc.
#[test]
fn random_vop3p_words_gfx1201_wave32() {
    run_gfx1201_family("VOP3P", WaveSize::Wave32, 0xff, 0xcc);
}

#[test]
fn random_vop3p_words_gfx1201_wave64() {
    run_gfx1201_family("VOP3P", WaveSize::Wave64, 0xff, 0xcc);
}

/// VOPD (dual issue, with a literal): top bits 0b110010.
#[test]
fn random_vopd_words_gfx1201_wave32() {
    run_gfx1201_family("VOPD", WaveSize::Wave32, 0xfc, 0xc8);
}

#[test]
fn random_vopd_words_gfx1201_wave64() {
    run_gfx1201_family("VOPD", WaveSize::Wave64, 0xfc, 0xc8);
}

/// DS: top bits 0b110110.
#[test]
fn random_ds_words_gfx1201_wave32() {
    run_gfx1201_family("DS", WaveSize::Wave32, 0xfc, 0xd8);
}

#[test]
fn random_ds_words_gfx1201_wave64() {
    run_gfx1201_family("DS", WaveSize::Wave64, 0xfc, 0xd8);
}

/// VINTERP, VDSDIR (and VOP3P): top bits 0b110011.
#[test]
fn random_interp_words_gfx1201_wave32() {
    run_gfx1201_family("VOP3P/VINTERP/VDSDIR", WaveSize::Wave32, 0xfc, 0xcc);
}

#[test]
fn random_interp_words_gfx1201_wave64() {
    run_gfx1201_family("VOP3P/VINTERP/VDSDIR", WaveSize::Wave64, 0xfc, 0xcc);
}

/// Export: top bits 0b111110.
#[test]
fn random_export_words_gfx1201_wave32() {
    run_gfx1201_family("export", WaveSize::Wave32, 0xfc, 0xf8);
}

#[test]
fn random_export_words_gfx1201_wave64() {
    run_gfx1201_family("export", WaveSize::Wave64, 0xfc, 0xf8);
}

/// VFLAT, VSCRATCH and VGLOBAL: top bits 0b111011.
#[test]
fn random_vflat_words_gfx1201_wave32() {
    run_gfx1201_family("VFLAT/VSCRATCH/VGLOBAL", WaveSize::Wave32, 0xfc, 0xec);
}

#[test]
fn random_vflat_words_gfx1201_wave64() {
    run_gfx1201_family("VFLAT/VSCRATCH/VGLOBAL", WaveSize::Wave64, 0xfc, 0xec);
}

/// VBUFFER: top bits 0b110001.
#[test]
fn random_vbuffer_words_gfx1201_wave32() {
    run_gfx1201_family("VBUFFER", WaveSize::Wave32, 0xfc, 0xc4);
}

#[test]
fn random_vbuffer_words_gfx1201_wave64() {
    run_gfx1201_family("VBUFFER", WaveSize::Wave64, 0xfc, 0xc4);
}

/// VIMAGE (and the GFX9-layout fma_mix words): top bits 0b110100.
#[test]
fn random_vimage_words_gfx1201_wave32() {
    run_gfx1201_family("VIMAGE", WaveSize::Wave32, 0xfc, 0xd0);
}

#[test]
fn random_vimage_words_gfx1201_wave64() {
    run_gfx1201_family("VIMAGE", WaveSize::Wave64, 0xfc, 0xd0);
}

/// VSAMPLE: top bits 0b111001.
#[test]
fn random_vsample_words_gfx1201_wave32() {
    run_gfx1201_family("VSAMPLE", WaveSize::Wave32, 0xfc, 0xe4);
}

#[test]
fn random_vsample_words_gfx1201_wave64() {
    run_gfx1201_family("VSAMPLE", WaveSize::Wave64, 0xfc, 0xe4);
}

/// GFX10's encoding families: name, and the top byte's mask and value.
const GFX10_FAMILIES: [(&str, u8, u8); 12] = [
    ("scalar ALU", 0xc0, 0x80),
    ("SMEM", 0xfc, 0xf4),
    ("VOP1/VOP2/VOPC (SDWA, DPP)", 0x80, 0),
    ("VINTRP", 0xfc, 0xc8),
    ("VOP3P", 0xff, 0xcc),
    ("VOP3", 0xfc, 0xd4),
    ("DS", 0xfc, 0xd8),
    ("FLAT/SCRATCH/GLOBAL", 0xfc, 0xdc),
    ("MUBUF", 0xfc, 0xe0),
    ("MTBUF", 0xfc, 0xe8),
    ("MIMG", 0xfc, 0xf0),
    ("EXP", 0xfc, 0xf8),
];

/// Every GFX10 encoding family of `target` in waves of `wave` lanes.
fn run_gfx10_families(target: Target, wave: WaveSize) {
    for (what, mask, value) in GFX10_FAMILIES {
        run_family(target, what, wave, mask, value, FAMILY_CASES_SMALL);
    }
}

/// gfx1030's families in both wave sizes; gfx1010 (the same decoder with
/// its own table columns) in wave32, its wave64 forms covered by its
/// uniform words and gfx1030's families.
#[test]
fn random_family_words_gfx1030_wave32() {
    run_gfx10_families(Target::Gfx1030, WaveSize::Wave32);
}

#[test]
fn random_family_words_gfx1030_wave64() {
    run_gfx10_families(Target::Gfx1030, WaveSize::Wave64);
}

#[test]
fn random_family_words_gfx1010_wave32() {
    run_gfx10_families(Target::Gfx1010, WaveSize::Wave32);
}

/// gfx908 per encoding family (64-lane waves): the GFX9 encodings,
/// including the graphics ones gfx908 keeps (VINTRP, EXP, samplers).
fn run_gfx908_family(what: &str, mask: u8, value: u8) {
    run_family(
        Target::Gfx908,
        what,
        WaveSize::Wave64,
        mask,
        value,
        FAMILY_CASES_SMALL,
    );
}

/// SOP1, SOP2, SOPC, SOPK and SOPP: top bits 0b10.
#[test]
fn random_scalar_words_gfx908() {
    run_gfx908_family("scalar ALU", 0xc0, 0x80);
}

/// SMEM: top bits 0b110000.
#[test]
fn random_smem_words_gfx908() {
    run_gfx908_family("SMEM", 0xfc, 0xc0);
}

/// VOP1, VOP2 and VOPC with their literal, SDWA and DPP forms: top bit 0.
#[test]
fn random_vop_words_gfx908() {
    run_gfx908_family("VOP1/VOP2/VOPC", 0x80, 0);
}

/// VOP3 (incl. interpolation) and VOP3P (incl. MFMA): top bits 0b110100.
#[test]
fn random_vop3_words_gfx908() {
    run_gfx908_family("VOP3/VOP3P", 0xfc, 0xd0);
}

/// VOP3P (packed math, dot products, MFMA) and the VOP3 opcodes that
/// share their top byte (0xd3).
#[test]
fn random_vop3p_words_gfx908() {
    run_gfx908_family("VOP3P", 0xff, 0xd3);
}

/// VINTRP: top bits 0b110101.
#[test]
fn random_vintrp_words_gfx908() {
    run_gfx908_family("VINTRP", 0xfc, 0xd4);
}

/// DS: top bits 0b110110.
#[test]
fn random_ds_words_gfx908() {
    run_gfx908_family("DS", 0xfc, 0xd8);
}

/// FLAT, SCRATCH and GLOBAL: top bits 0b110111.
#[test]
fn random_flat_words_gfx908() {
    run_gfx908_family("FLAT/SCRATCH/GLOBAL", 0xfc, 0xdc);
}

/// MUBUF: top bits 0b111000.
#[test]
fn random_mubuf_words_gfx908() {
    run_gfx908_family("MUBUF", 0xfc, 0xe0);
}

/// MTBUF: top bits 0b111010.
#[test]
fn random_mtbuf_words_gfx908() {
    run_gfx908_family("MTBUF", 0xfc, 0xe8);
}

/// MIMG: top bits 0b111100.
#[test]
fn random_mimg_words_gfx908() {
    run_gfx908_family("MIMG", 0xfc, 0xf0);
}

/// EXP: top bits 0b110001.
#[test]
fn random_export_words_gfx908() {
    run_gfx908_family("EXP", 0xfc, 0xc4);
}

/// The wave size reaches LLVM: the same VOPC word reads `vcc_lo` in wave32
/// and `vcc` in wave64, and we agree in both.
#[test]
fn wave_size_reaches_llvm() {
    let case = vec![vec![0xc1, 0x08, 0x82, 0x7c]];
    for (wave, want) in [
        (WaveSize::Wave32, "v_cmp_lt_i32_e32 vcc_lo, -1, v4"),
        (WaveSize::Wave64, "v_cmp_lt_i32_e32 vcc, -1, v4"),
    ] {
        let got = decode_isolated_with(Path::new(WORKER), "gfx1100", wave.llvm_feature(), &case)
            .unwrap_or_else(|e| panic!("{e}"));
        let want = Outcome::Decoded {
            text: want.into(),
            size: 4,
        };
        assert_eq!(got, vec![want.clone()]);
        let ours = rocjitsu_isa::decode_in(Target::Gfx1100, wave, &case[0]).expect("decodes");
        assert_eq!(
            Outcome::Decoded {
                text: ours.to_string(),
                size: ours.len()
            },
            want
        );
    }
}

/// The isolation itself: a case that crashes LLVM 22 (gfx942 bytes
/// `f9 ce 9b 5c 6b be 87 25`, a VOPC SDWA word) is reported as crashed and
/// the cases after it are still decoded.
#[test]
fn crash_is_isolated() {
    let cases = vec![
        vec![0x02, 0x07, 0x02, 0x02],
        vec![0xf9, 0xce, 0x9b, 0x5c, 0x6b, 0xbe, 0x87, 0x25],
        vec![0xff, 0xff, 0xff, 0xff],
        vec![0x02, 0x07, 0x02, 0x02],
    ];
    let got =
        decode_isolated(Path::new(WORKER), "gfx942", &cases).unwrap_or_else(|e| panic!("{e}"));
    let v_add = Outcome::Decoded {
        text: "v_add_f32_e32 v1, v2, v3".into(),
        size: 4,
    };
    assert_eq!(
        got,
        vec![v_add.clone(), Outcome::Crashed, Outcome::Invalid, v_add]
    );
}

/// The comparison counts an error against `<invalid>` as agreement and a
/// decoded case against a crashed one as neither.
#[test]
fn compare_counts() {
    let cases = vec![vec![0xff; 12], vec![0xff; 12], vec![0xff; 12]];
    let oracle = vec![
        Outcome::Invalid,
        Outcome::Crashed,
        Outcome::Decoded {
            text: "s_nop 0".into(),
            size: 4,
        },
    ];
    let r = compare(
        Target::Gfx942,
        &|b| decode_in(Target::Gfx942, WaveSize::Wave64, b),
        &cases,
        &oracle,
        &Show {
            count: 5,
            only: None,
        },
    );
    assert_eq!((r.cases, r.crashes, r.agree), (3, 1, 1));
    assert_eq!(
        r.disagreements,
        vec!["ffffffff | <invalid> | s_nop 0".to_string()]
    );
    assert_eq!(r.rate(), 50.0);
}
