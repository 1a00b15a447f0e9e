//! Development probe: `rocjitsu_isa::decode_in` against LLVM 22 on random
//! words of one encoding, with disagreements grouped by mnemonic.
//!
//! ```text
//! cargo run --release -p llvm-oracle --example diff -- gfx1100 \
//!     [--wave64] [--mask 0xff800000 --value 0xbf800000] [--mask1 M --value1 V] \
//!     [--count 20000] [--seed 1] [--show 3] [--low16]
//! ```
//! `--mask/--value` force bits of the first dword (`--mask1/--value1` of
//! the second); `--low16` walks the low 16 bits of the first dword through
//! every value instead of drawing them.

use llvm_oracle::{Outcome, decode_isolated_with};
use rocjitsu_isa::{Target, WaveSize};
use std::collections::BTreeMap;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn num(s: &str) -> u64 {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).expect("hex number"),
        None => s.parse().expect("number"),
    }
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let target: Target = args
        .first()
        .expect("usage: diff TARGET [options]")
        .parse()
        .expect("target");
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| num(v))
    };
    let flag = |name: &str| args.iter().any(|a| a == name);
    let wave = if flag("--wave64") {
        WaveSize::Wave64
    } else {
        WaveSize::default_for(target)
    };
    let (mask, value) = (
        opt("--mask").unwrap_or(0) as u32,
        opt("--value").unwrap_or(0) as u32,
    );
    let (mask1, value1) = (
        opt("--mask1").unwrap_or(0) as u32,
        opt("--value1").unwrap_or(0) as u32,
    );
    let low16 = flag("--low16");
    let count = if low16 {
        65536
    } else {
        opt("--count").unwrap_or(20000) as usize
    };
    let show = opt("--show").unwrap_or(3) as usize;
    let mut rng = Rng(opt("--seed").unwrap_or(1));
    let cases: Vec<Vec<u8>> = (0..count)
        .map(|i| {
            let (a, b) = (rng.next(), rng.next());
            let mut w0 = (a as u32 & !mask) | (value & mask);
            if low16 {
                w0 = (w0 & !0xffff) | i as u32;
            }
            let w1 = ((a >> 32) as u32 & !mask1) | (value1 & mask1);
            let mut v = Vec::with_capacity(16);
            for w in [w0, w1, b as u32, (b >> 32) as u32] {
                v.extend_from_slice(&w.to_le_bytes());
            }
            v
        })
        .collect();
    let exe = std::env::current_exe().expect("current exe");
    let worker = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .join("llvm-oracle-worker");
    let feat = if wave == WaveSize::default_for(target) {
        ""
    } else {
        wave.llvm_feature()
    };
    let oracle = decode_isolated_with(&worker, target.name(), feat, &cases).expect("oracle");
    let (mut agree, mut crashed, mut rt) = (0, 0, 0);
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (bytes, want) in cases.iter().zip(&oracle) {
        let ours = rocjitsu_isa::decode_in(target, wave, bytes);
        if let Ok(i) = &ours {
            let enc = i.encode();
            if bytes.get(..enc.len()) != Some(&enc[..]) || enc.len() != i.len() {
                rt += 1;
                let hex: String = bytes[..i.len()]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                let e: String = enc.iter().map(|b| format!("{b:02x}")).collect();
                groups
                    .entry(format!("ROUNDTRIP {}", i.mnemonic()))
                    .or_default()
                    .push(format!("{hex} | {i} | {e}"));
            }
        }
        let ok = match (&ours, want) {
            (_, Outcome::Crashed) => {
                crashed += 1;
                continue;
            }
            (Ok(i), Outcome::Decoded { text, size }) => {
                i.len() == *size && norm(&i.to_string()) == norm(text)
            }
            (Err(_), Outcome::Invalid) => true,
            _ => false,
        };
        if ok {
            agree += 1;
            continue;
        }
        let (ot, ol) = match &ours {
            Ok(i) => (i.to_string(), i.len()),
            Err(_) => ("<invalid>".into(), 4),
        };
        let (lt, ll) = match want {
            Outcome::Decoded { text, size } => (text.clone(), *size),
            _ => ("<invalid>".into(), 4),
        };
        let key = if lt != "<invalid>" {
            lt.split_whitespace().next().unwrap_or("").to_string()
        } else {
            format!(
                "(llvm invalid) {}",
                ot.split_whitespace().next().unwrap_or("")
            )
        };
        let hex: String = bytes[..ol.max(ll).min(16)]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        groups
            .entry(key)
            .or_default()
            .push(format!("{hex} | {ot} ({ol}) | {lt} ({ll})"));
    }
    let n = cases.len() - crashed;
    println!(
        "{target} {wave:?}: {agree}/{n} agree ({:.3}%), {crashed} crash LLVM, {rt} round-trip failures",
        100.0 * agree as f64 / n.max(1) as f64
    );
    let mut g: Vec<_> = groups.into_iter().collect();
    g.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (k, v) in g.iter().take(40) {
        println!("{:>6} {k}", v.len());
        for e in v.iter().take(show) {
            println!("         {e}");
        }
    }
}
