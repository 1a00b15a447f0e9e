//! Every instruction that clang-22, hipcc and Triton emit for the corpus
//! (`build/corpus`, built by `make corpus`) has semantics in the engine,
//! apart from the few listed in `NOT_EMULATED` with the reason.

use rocjitsu_gpu::exec::lower::{lower, unsupported};
use rocjitsu_gpu::exec::op::ExecFn;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Instructions the engine deliberately reports as unsupported when reached.
const NOT_EMULATED: &[(&str, &str)] = &[
    (
        "ds_gws_init",
        "global wave sync needs the GWS block of a multi-queue GPU",
    ),
    ("ds_gws_barrier", "as ds_gws_init"),
    ("ds_gws_sema_v", "as ds_gws_init"),
    ("ds_gws_sema_br", "as ds_gws_init"),
    ("ds_gws_sema_p", "as ds_gws_init"),
    ("ds_gws_sema_release_all", "as ds_gws_init"),
    (
        "image_load",
        "image resources (MIMG) need a texture unit model; no CDNA compute compiler emits them",
    ),
    ("image_store", "as image_load"),
];

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
                let name = op.name();
                if std::ptr::fn_addr_eq(op.exec, unsupported as ExecFn)
                    && !NOT_EMULATED.iter().any(|(n, _)| *n == name)
                {
                    missing.insert(format!("{} {name}", t.name()));
                }
            }
        }
    }
    assert!(total > 50_000, "{total} instructions");
    assert!(missing.is_empty(), "no semantics for: {missing:?}");
}
