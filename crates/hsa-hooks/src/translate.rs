//! The translator seam: a guest code object to a host code object.

/// A host code object and a one-line summary of what was rewritten.
pub struct Translated {
    pub elf: Vec<u8>,
    pub report: String,
}

/// Translates `elf` from `guest` to `host` (target names such as `gfx950`).
/// The error names the kernel, PC and instruction that cannot be translated.
pub fn translate(elf: &[u8], guest: &str, host: &str) -> Result<Translated, String> {
    let _ = (elf, guest, host);
    Err("the DBT translator (rocjitsu_code::dbt) is not part of this build".into())
}
