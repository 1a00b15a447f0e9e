//! Robustness: decoding, printing and re-encoding never panic and always make
//! progress, on random bytes and on every truncation of random instructions.
//! A panic is caught per chunk and reported with the chunk's bytes.

use rocjitsu_isa::{Target, WaveSize, decode_in, disassemble_in};
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Random bytes fed to the disassembler per target.
const RANDOM_BYTES: usize = 4 << 20;
const CHUNK: usize = 4096;
/// Random 16-byte instructions of which every prefix is decoded.
const TRUNCATED: usize = 500;

/// Every decoded target in each wave size it runs.
fn modes() -> Vec<(Target, WaveSize)> {
    let mut v = Vec::new();
    for t in Target::KNOWN.into_iter().filter(|t| t.decodes()) {
        v.push((t, WaveSize::Wave64));
        if t.wave_size() == 32 {
            v.push((t, WaveSize::Wave32));
        }
    }
    v
}

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

    fn fill(&mut self, out: &mut [u8]) {
        for c in out.chunks_mut(8) {
            let r = self.next().to_le_bytes();
            c.copy_from_slice(&r[..c.len()]);
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Disassembles `bytes`, prints and re-encodes every instruction, and checks
/// that the lines tile the input exactly.
fn exercise(target: Target, wave: WaveSize, bytes: &[u8], text: &mut String) {
    let lines = disassemble_in(target, wave, bytes);
    let mut off = 0;
    for l in &lines {
        assert_eq!(l.offset, off, "lines must tile the input");
        assert!(l.len > 0, "every line must make progress");
        if let Some(inst) = &l.inst {
            assert_eq!(inst.len(), l.len);
            text.clear();
            let _ = write!(text, "{inst}");
            assert!(!text.is_empty());
            let enc = inst.encode();
            assert_eq!(
                Some(&enc[..]),
                bytes.get(l.offset..l.offset + l.len),
                "re-encoding of {text}"
            );
        }
        off += l.len;
    }
    assert_eq!(off, bytes.len());
}

fn check(target: Target, wave: WaveSize, bytes: &[u8], what: &str) {
    let mut text = String::new();
    let r = catch_unwind(AssertUnwindSafe(|| {
        exercise(target, wave, bytes, &mut text)
    }));
    assert!(
        r.is_ok(),
        "{} {wave:?}: panic on {what}: {}",
        target.name(),
        hex(bytes)
    );
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = SplitMix64(0x6e6f_7061_6e69_6321);
    let mut buf = vec![0u8; RANDOM_BYTES];
    for (target, wave) in modes() {
        rng.fill(&mut buf);
        for (i, chunk) in buf.chunks(CHUNK).enumerate() {
            check(target, wave, chunk, &format!("random chunk {i}"));
        }
    }
}

#[test]
fn truncations_never_panic() {
    let mut rng = SplitMix64(0x7472_756e_6361_7465);
    let mut case = [0u8; 16];
    for (target, wave) in modes() {
        for i in 0..TRUNCATED {
            rng.fill(&mut case);
            for k in 0..=case.len() {
                let bytes = &case[..k];
                check(
                    target,
                    wave,
                    bytes,
                    &format!("case {i} truncated to {k} bytes"),
                );
                // A decoded instruction never claims more bytes than it got.
                let r = catch_unwind(|| decode_in(target, wave, bytes).map(|inst| inst.len()));
                match r {
                    Ok(Ok(len)) => assert!(
                        len <= k,
                        "{}: {} decodes {len} bytes",
                        target.name(),
                        hex(bytes)
                    ),
                    Ok(Err(_)) => {}
                    Err(_) => panic!("{}: decode panics on {}", target.name(), hex(bytes)),
                }
            }
        }
    }
}
