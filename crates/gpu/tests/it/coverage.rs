//! Every instruction that clang-22, hipcc and Triton emit for the corpus
//! (`build/corpus`, built by `make corpus`) has semantics in the engine,
//! apart from those matched by `NOT_EMULATED` (`exec/unsupported.rs`, the
//! one list of what is not emulated; `every_opcode.rs` checks it
//! against every opcode of every target).

use rocjitsu_gpu::exec::lower::{lower, unsupported};
use rocjitsu_gpu::exec::op::ExecFn;
use rocjitsu_gpu::exec::unsupported::{entry, list_name};
use std::collections::BTreeSet;
use std::path::PathBuf;

#[test]
fn every_corpus_instruction_has_semantics() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../build/corpus");
    let mut files = Vec::new();
    for t in ["gfx90a", "gfx942", "gfx950"] {
        let d = dir.join(t);
        let entries = std::fs::read_dir(&d)
            .unwrap_or_else(|e| panic!("{}: {e}: run `make corpus`", d.display()));
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "hsaco") {
                files.push(e.path());
            }
        }
    }
    assert!(
        files.len() > 100,
        "the corpus has {} code objects",
        files.len()
    );
    let mut missing = BTreeSet::new();
    let mut total = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let co = rocjitsu_code::CodeObject::parse(&f.display().to_string(), bytes).unwrap();
        for func in co.functions() {
            let code = co.bytes_at(func.address, func.size).unwrap_or(&[]);
            let mut off = 0;
            while off < code.len() {
                let Ok(inst) = rocjitsu_isa::decode(co.target(), &code[off..]) else {
                    off += 4;
                    continue;
                };
                off += inst.len();
                total += 1;
                let t = co.target();
                let op = lower(inst);
                if std::ptr::fn_addr_eq(op.exec, unsupported as ExecFn) {
                    let name = list_name(&inst);
                    if entry(&name).is_none() {
                        missing.insert(format!("{} {name}", t.name()));
                    }
                }
            }
        }
    }
    assert!(total > 50_000, "{total} instructions");
    assert!(missing.is_empty(), "no semantics for: {missing:?}");
}
