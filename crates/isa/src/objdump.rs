//! One instruction line as `llvm-objdump-22 -d` prints it: the instruction
//! text padded to column 60 (after a tab), then the address and the dwords
//! in a `//` comment, then any branch annotation. Shared by `rocjitsu
//! disasm` and the coverage plugin's listings.

use std::fmt::Write as _;

/// The text of what decodes at the start of `raw` (`decoded`), or of an
/// undecodable word (`.long`) or tail of fewer than 4 bytes (`.byte`).
pub fn text<I: std::fmt::Display>(decoded: Option<&I>, raw: &[u8]) -> String {
    match decoded {
        Some(inst) => inst.to_string(),
        None if raw.len() >= 4 => {
            let w = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
            format!(".long 0x{w:08x}")
        }
        None => {
            let b: Vec<String> = raw.iter().map(|b| format!("0x{b:02x}")).collect();
            format!(".byte {}", b.join(", "))
        }
    }
}

/// The line of an instruction at `pc` whose bytes are `raw` and text
/// `text`, with `note` (e.g. ` <kernel+0x40>`) after the words; no newline.
pub fn line(pc: u64, raw: &[u8], text: &str, note: &str) -> String {
    let mut words = String::new();
    if raw.len().is_multiple_of(4) {
        for (k, c) in raw.chunks_exact(4).enumerate() {
            let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if k > 0 {
                words.push(' ');
            }
            let _ = write!(words, "{w:08X}");
        }
    } else {
        let b: Vec<String> = raw.iter().map(|b| format!("{b:02X}")).collect();
        words = b.join(" ");
    }
    format!("\t{text:<59}// {pc:012X}: {words}{note}")
}

/// The annotation objdump appends to a branch whose target is `disp`
/// bytes past the symbol `sym`.
pub fn branch_note(sym: &str, disp: u64) -> String {
    if disp == 0 {
        format!(" <{sym}>")
    } else {
        format!(" <{sym}+0x{disp:x}>")
    }
}
