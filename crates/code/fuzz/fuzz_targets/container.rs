//! Fuzzes `Container::parse` and every `CodeObject` accessor: no input may
//! panic, and every error must name the input.
//!
//! Run from crates/code/fuzz: `cargo +nightly fuzz run container`
//! (seed it with code objects, bundles and HIP host objects).

#![no_main]

use libfuzzer_sys::fuzz_target;
use rocjitsu_code::{CodeObject, Container};
use rocjitsu_isa::Target;

fuzz_target!(|data: &[u8]| {
    let c = match Container::parse("fuzz", data) {
        Ok(c) => c,
        Err(e) => {
            assert!(e.to_string().starts_with("fuzz"));
            return;
        }
    };
    let _ = c.targets();
    for t in Target::ALL {
        let _ = c.select(t);
    }
    for e in c.code_objects() {
        let Ok(co) = CodeObject::parse(&e.name, e.bytes.clone()) else {
            continue;
        };
        for k in co.kernels() {
            let _ = k.descriptor.directives(co.target());
            let _ = k.descriptor.to_bytes();
            let _ = (
                k.descriptor.vgpr_count(co.target()),
                k.descriptor.sgpr_count(co.target()),
            );
            let _ = (
                co.symbol_at(k.entry),
                co.function_at(k.entry),
                k.code_range(),
            );
        }
        for f in co.functions() {
            let _ = co.symbol_at(f.address.wrapping_add(f.size / 2));
            let _ = co.bytes_at(f.address, f.size);
        }
        if let Some(t) = co.text() {
            let _ = co.function_at(t.address);
        }
        for s in &co.elf().sections {
            let _ = co.section_data(s);
        }
        let _ = (co.target_id(), co.metadata(), co.symbol_at(u64::MAX));
    }
});
