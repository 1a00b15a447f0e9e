//! The translator seam: a guest code object to a host code object through
//! `rocjitsu_code::dbt::translate`.

use rocjitsu_code::dbt;
use rocjitsu_isa::Target;

/// A host code object and a one-line summary of what was rewritten.
pub struct Translated {
    pub elf: Vec<u8>,
    pub report: String,
}

fn target(what: &str, name: &str) -> Result<Target, String> {
    name.parse::<Target>()
        .map_err(|e| format!("dbt_guest.{what} {name}: {e}"))
}

/// Translates `elf` from `guest` to `host` (target names such as `gfx950`).
/// The error names the kernel, PC and instruction that cannot be translated.
pub fn translate(elf: &[u8], guest: &str, host: &str) -> Result<Translated, String> {
    let opts = dbt::Options {
        guest: target("guest_isa", guest)?,
        host: target("host_isa", host)?,
    };
    let t = dbt::translate(elf, &opts).map_err(|e| e.to_string())?;
    let report = t.report.to_string();
    Ok(Translated {
        elf: t.elf,
        report: report.lines().next().unwrap_or("").to_owned(),
    })
}
