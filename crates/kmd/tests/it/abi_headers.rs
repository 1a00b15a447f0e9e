//! Every field `rocjitsu_kmd::abi` declares, and every structure size,
//! checked against the C headers: a generated C program prints `offsetof` and
//! `sizeof` of each, compiled with `cc` against
//!
//! - `ROCJITSU_KFD_HEADER` (default `/usr/include/linux/kfd_ioctl.h`): the
//!   KFD structures; a field newer than the header's
//!   `KFD_IOCTL_MINOR_VERSION` is listed as not checked (and so is a size
//!   that depends on one); the ROCm driver's IPC structures are checked where
//!   the header has them (`AMDKFD_IOC_IPC_EXPORT_HANDLE`), listed otherwise;
//! - `ROCJITSU_DRM_HEADER` (default `/usr/include/drm/amdgpu_drm.h`): the
//!   DRM and amdgpu structures, listed as not checked when it is absent
//!   (unless the variable names it: then it must exist).
//!
//! With `ROCJITSU_ABI_COMPLETE=1` every KFD and DRM field must be checked
//! (`make test-hip-sid` runs it so against the sid sysroot's headers, KFD
//! 1.23). A wrong offset or size, or a member the header does not have, fails.

use rocjitsu_kmd::abi::{self, Header, Layout};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A C condition under which the header has the field (or the size).
fn guard(l: &Layout, since: Option<u32>) -> String {
    let mut g = vec![];
    match l.header {
        Header::Kfd => {}
        Header::Drm => g.push("HAVE_DRM".to_string()),
        Header::RocmKfd => g.push("defined(AMDKFD_IOC_IPC_EXPORT_HANDLE)".to_string()),
    }
    if let Some(v) = since {
        g.push(format!("KFD_IOCTL_MINOR_VERSION >= {v}"));
    }
    if g.is_empty() {
        "1".into()
    } else {
        g.join(" && ")
    }
}

fn module(l: &Layout) -> &str {
    l.module.trim_start_matches("rocjitsu_kmd::abi::")
}

fn program(kfd: &Path, drm: Option<&Path>) -> String {
    let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n");
    writeln!(c, "#include \"{}\"", kfd.display()).unwrap();
    if let Some(d) = drm {
        writeln!(c, "#include \"{}\"\n#define HAVE_DRM 1", d.display()).unwrap();
    } else {
        c.push_str("#define HAVE_DRM 0\n");
    }
    c.push_str("int main(void) {\n  printf(\"version %d\\n\", KFD_IOCTL_MINOR_VERSION);\n");
    for l in abi::layouts() {
        let s = format!("struct {}", l.c);
        let mut line = |g: String, key: String, off: String, size: String| {
            writeln!(
                c,
                "#if {g}\n  printf(\"{key} %zu %zu\\n\", (size_t)({off}), (size_t)({size}));\n#else\n  printf(\"{key} missing\\n\");\n#endif"
            )
            .unwrap();
        };
        for f in l.fields {
            let m = f.c_name();
            line(
                guard(l, f.since),
                format!("{}::{}", module(l), f.name),
                format!("offsetof({s}, {m})"),
                format!("sizeof((({s} *)0)->{m})"),
            );
        }
        if l.size.is_some() {
            line(
                guard(l, l.size_since),
                format!("{}::SIZE", module(l)),
                "0".into(),
                format!("sizeof({s})"),
            );
        }
    }
    c.push_str("  return 0;\n}\n");
    c
}

fn header(var: &str, default: &str) -> (PathBuf, bool) {
    match std::env::var_os(var) {
        Some(p) => (PathBuf::from(p), true),
        None => (PathBuf::from(default), false),
    }
}

#[test]
fn abi_fields_match_the_c_headers() {
    let (kfd, _) = header("ROCJITSU_KFD_HEADER", "/usr/include/linux/kfd_ioctl.h");
    let (drm, drm_named) = header("ROCJITSU_DRM_HEADER", "/usr/include/drm/amdgpu_drm.h");
    let complete = std::env::var("ROCJITSU_ABI_COMPLETE").is_ok_and(|v| v == "1");
    assert!(kfd.is_file(), "no KFD header at {}", kfd.display());
    let drm = if drm.is_file() {
        Some(drm)
    } else {
        assert!(
            !drm_named && !complete,
            "no DRM header at {} (ROCJITSU_DRM_HEADER)",
            drm.display()
        );
        None
    };

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("abi_headers");
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("layouts.c"), dir.join("layouts"));
    std::fs::write(&src, program(&kfd, drm.as_deref())).unwrap();
    // kfd_ioctl.h includes <drm/drm.h> for the ioctl macros and types only;
    // Debian's linux-libc-dev no longer ships it (libdrm-dev has it under
    // libdrm/), so a stand-in that includes those comes last in the search.
    let stub = dir.join("stub");
    std::fs::create_dir_all(stub.join("drm")).unwrap();
    std::fs::write(
        stub.join("drm/drm.h"),
        "#include <linux/types.h>\n#include <linux/ioctl.h>\n",
    )
    .unwrap();
    let mut cc = Command::new(std::env::var_os("CC").unwrap_or("cc".into()));
    if let Some(d) = &drm {
        // The DRM header's own drm.h, after the system's directories.
        cc.arg("-idirafter")
            .arg(d.parent().unwrap().parent().unwrap());
    }
    let cc = cc
        .arg("-idirafter")
        .arg(&stub)
        .arg("-Wall")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("cc (the header check needs a C compiler)");
    assert!(
        cc.status.success(),
        "cc {} failed (a member abi.rs names that the header lacks?):\n{}",
        src.display(),
        String::from_utf8_lossy(&cc.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    let out = String::from_utf8(out.stdout).unwrap();
    let mut lines = out.lines();
    let version = lines.next().unwrap().to_string();
    let measured: std::collections::HashMap<&str, Option<(usize, usize)>> = lines
        .map(|l| {
            let mut w = l.split(' ');
            let key = w.next().unwrap();
            let v = match (w.next().unwrap(), w.next()) {
                ("missing", _) => None,
                (o, Some(s)) => Some((o.parse().unwrap(), s.parse().unwrap())),
                _ => panic!("bad line {l}"),
            };
            (key, v)
        })
        .collect();

    let (mut checked, mut wrong, mut unchecked) = (0, vec![], vec![]);
    for l in abi::layouts() {
        let mut expect: Vec<(String, usize, usize)> = l
            .fields
            .iter()
            .map(|f| (format!("{}::{}", module(l), f.name), f.off, f.size))
            .collect();
        if let Some(size) = l.size {
            expect.push((format!("{}::SIZE", module(l)), 0, size));
        }
        for (key, off, size) in expect {
            match measured[key.as_str()] {
                Some(got) if got == (off, size) => checked += 1,
                Some((o, s)) => wrong.push(format!(
                    "{key} (struct {}): abi.rs has offset {off}, size {size}; the header {o}, {s}",
                    l.c
                )),
                None => unchecked.push((l, key)),
            }
        }
    }
    let structs = abi::layouts().count();
    let total = checked + wrong.len() + unchecked.len();
    eprintln!(
        "abi: {checked} of {total} fields and sizes ({structs} structures) checked against {} (KFD 1.{}){}",
        kfd.display(),
        version.trim_start_matches("version "),
        drm.as_ref().map_or(
            " (no DRM header: DRM layouts not checked)".into(),
            |d| format!(" and {}", d.display())
        )
    );
    let mut by_struct: Vec<(&Layout, Vec<&str>)> = vec![];
    for (l, key) in &unchecked {
        let name = key.rsplit("::").next().unwrap();
        match by_struct.last_mut() {
            Some((last, v)) if std::ptr::eq(*last, *l) => v.push(name),
            _ => by_struct.push((l, vec![name])),
        }
    }
    for (l, names) in &by_struct {
        let why = match l.header {
            Header::Kfd => "newer than this KFD header",
            Header::Drm => "no DRM header",
            Header::RocmKfd => {
                "the ROCm driver's, in no header here (layout from ROCm's kfd_ioctl.h: see abi.rs)"
            }
        };
        let all = names.len() == l.fields.len() + usize::from(l.size.is_some());
        let what = if all {
            "all".to_string()
        } else {
            names.join(", ")
        };
        eprintln!("abi: not checked: {} ({what}): {why}", module(l));
    }
    assert!(
        wrong.is_empty(),
        "abi.rs disagrees with the headers:\n{}",
        wrong.join("\n")
    );
    if complete {
        let missing: Vec<&String> = unchecked
            .iter()
            .filter(|(l, _)| l.header != Header::RocmKfd)
            .map(|(_, k)| k)
            .collect();
        assert!(
            missing.is_empty(),
            "ROCJITSU_ABI_COMPLETE=1, but not checked: {missing:?}"
        );
    }
    assert!(checked > 0);
}
