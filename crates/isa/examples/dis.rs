//! Development probe: decodes one instruction per input line and prints
//! `TEXT<TAB>SIZE` (or `<invalid><TAB>4`). Input lines are hex byte strings
//! (`0102027e...`). Usage: `cargo run -p rocjitsu-isa --example dis -- gfx942`.

use std::io::{BufRead, Write};

fn main() {
    let target: rocjitsu_isa::Target = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "gfx942".into())
        .parse()
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let hex = line.trim();
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .filter_map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
            .collect();
        let r = match rocjitsu_isa::decode(target, &bytes) {
            Ok(inst) => {
                let enc = inst.encode();
                let rt = if bytes.get(..enc.len()) == Some(&enc[..]) {
                    ""
                } else {
                    "\tRT-MISMATCH"
                };
                writeln!(out, "{inst}\t{}{rt}", inst.len())
            }
            Err(_) => writeln!(out, "<invalid>\t4"),
        };
        if r.is_err() {
            break;
        }
    }
}
