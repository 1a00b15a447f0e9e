//! Lists the instructions of compiled code objects that the execution
//! engine has no semantics for, with how often each occurs.
//!
//! ```text
//! cargo run -p rocjitsu-gpu --example coverage -- build/corpus/*/*.hsaco
//! ```

use rocjitsu_gpu::exec::lower::{lower, unsupported};
use rocjitsu_gpu::exec::op::ExecFn;
use std::collections::BTreeMap;

fn main() {
    let mut missing: BTreeMap<(String, &'static str), usize> = BTreeMap::new();
    let mut total = 0usize;
    for path in std::env::args().skip(1) {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let co = match rocjitsu_code::CodeObject::parse(&path, bytes) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let t = co.target();
        for f in co.functions() {
            let Some(code) = co.bytes_at(f.address, f.size) else {
                continue;
            };
            let mut off = 0;
            while off < code.len() {
                let Ok(inst) = rocjitsu_isa::decode(t, &code[off..]) else {
                    off += 4;
                    continue;
                };
                off += inst.len();
                total += 1;
                let op = lower(inst);
                if std::ptr::fn_addr_eq(op.exec, unsupported as ExecFn) {
                    *missing
                        .entry((t.name().to_string(), op.name()))
                        .or_default() += 1;
                }
            }
        }
    }
    let mut v: Vec<_> = missing.into_iter().collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.1));
    for ((t, name), n) in &v {
        println!("{n:7} {t} {name}");
    }
    let uncovered: usize = v.iter().map(|x| x.1).sum();
    println!(
        "{uncovered} of {total} instructions ({} distinct) lack semantics",
        v.len()
    );
}
