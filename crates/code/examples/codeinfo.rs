//! Prints what rocjitsu-code reads from code objects, bundles and HIP fat
//! binaries: `cargo run -p rocjitsu-code --example codeinfo -- FILE...`.

use rocjitsu_code::{CodeObject, Container};
use std::process::ExitCode;

fn show(path: &str) -> rocjitsu_code::Result<()> {
    let bytes = std::fs::read(path).map_err(|e| rocjitsu_code::Error {
        file: path.to_string(),
        section: None,
        offset: 0,
        kind: rocjitsu_code::ErrorKind::Invalid {
            what: "file",
            detail: e.to_string(),
        },
    })?;
    let c = Container::parse(path, &bytes)?;
    println!("{path}: {:?}, {} entries", c.kind, c.entries.len());
    for e in &c.entries {
        println!("  entry {} ({} bytes)", e.id.id, e.bytes.len());
    }
    for e in c.code_objects() {
        let co = CodeObject::parse(&e.name, e.bytes.clone())?;
        println!(
            "  {}: {} code object v{}",
            e.name,
            co.target_id(),
            co.code_object_version()
        );
        if let Some(t) = co.text() {
            println!("    .text 0x{:x}, {} bytes", t.address, t.bytes.len());
        }
        for k in co.kernels() {
            let d = &k.descriptor;
            println!(
                "    kernel {} entry 0x{:x} size {} vgprs {} sgprs {} user sgprs {} lds {} scratch {} kernarg {}",
                k.name,
                k.entry,
                k.code_size,
                d.vgpr_count(co.target()),
                d.sgpr_count(co.target()),
                d.user_sgpr_count(),
                d.group_segment_fixed_size,
                d.private_segment_fixed_size,
                d.kernarg_size
            );
            if let Some(m) = &k.metadata {
                for a in &m.args {
                    println!(
                        "      arg @{} size {} {}{}",
                        a.offset,
                        a.size,
                        a.value_kind.as_str(),
                        a.name
                            .as_deref()
                            .map(|n| format!(" {n}"))
                            .unwrap_or_default()
                    );
                }
            }
        }
        for f in co.functions().iter().filter(|f| !f.is_kernel) {
            println!("    function {} 0x{:x} size {}", f.name, f.address, f.size);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for path in std::env::args().skip(1) {
        if let Err(e) = show(&path) {
            eprintln!("error: {e}");
            status = ExitCode::FAILURE;
        }
    }
    status
}
