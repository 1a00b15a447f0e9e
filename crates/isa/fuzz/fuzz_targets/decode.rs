//! Fuzzes the GFX9 decoder: for every target, the input is disassembled
//! linearly; every line must make progress and tile the input, every decoded
//! instruction must print and re-encode to exactly its bytes, and `decode` of
//! the whole input must agree with the first line. Any panic is a finding.
//! Run with `make fuzz` (see the Makefile for the flags).

#![no_main]

use libfuzzer_sys::fuzz_target;
use rocjitsu_isa::{decode, disassemble};
use std::fmt::Write as _;

fuzz_target!(|data: &[u8]| {
    let mut text = String::new();
    for target in rocjitsu_isa::gfx9::ALL_TARGETS {
        let lines = disassemble(target, data);
        let mut off = 0;
        for l in &lines {
            assert_eq!(l.offset, off);
            assert!(l.len > 0);
            if let Some(inst) = &l.inst {
                text.clear();
                let _ = write!(text, "{inst}");
                assert_eq!(inst.len(), l.len);
                assert_eq!(
                    Some(&inst.encode()[..]),
                    data.get(off..off + l.len),
                    "{text}"
                );
            }
            off += l.len;
        }
        assert_eq!(off, data.len());
        if let Ok(inst) = decode(target, data) {
            assert!(
                lines
                    .first()
                    .is_some_and(|l| l.inst.as_ref() == Some(&inst))
            );
        }
    }
});
