//! Fuzzes the daemon's message decoding: a header, then the request (and
//! reply) payload decoders. No input may panic; whatever decodes must
//! re-encode to the same bytes.
//!
//! Run from crates/rpc/fuzz: `cargo +nightly fuzz run message`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rocjitsu_rpc::wire::{HEADER_LEN, Header, Ioctl, Request, Welcome};

fuzz_target!(|data: &[u8]| {
    if data.len() < HEADER_LEN {
        return;
    }
    let (h, payload) = data.split_at(HEADER_LEN);
    if let Ok(header) = Header::decode(h.try_into().unwrap()) {
        let mut header = header;
        header.payload_len = payload.len() as u32;
        if let Ok(Request::Ioctl(io)) = Request::decode(&header, payload) {
            assert_eq!(io.encode(), payload);
        }
    }
    if let Ok(w) = Welcome::decode(payload) {
        assert_eq!(w.encode(), payload);
    }
    let _ = Ioctl::decode(payload);
});
