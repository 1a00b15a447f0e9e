//! Can the emulator libraries built on the host be loaded in a guest root
//! (a sysroot or a container image)? They need the symbol versions their
//! build host's glibc, libgcc_s and (if used) libstdc++ define. A guest
//! with a newer glibc is fine; an older one cannot be bridged (a process
//! has one C library). A library the guest lacks altogether (say
//! libgcc_s.so.1 in a minimal image) is bridged: the host's copy is put in
//! the session's `bridge/` directory, appended to LD_LIBRARY_PATH, as long
//! as the guest's glibc satisfies that copy too.

use mirage_container::Engine;
use mirage_core::elfver::{self, Gap, LIBRARY_DIRS};
use std::path::{Path, PathBuf};

/// The C library itself: never bridged.
const CORE: &[&str] = &[
    "libc.so.6",
    "libm.so.6",
    "ld-linux-x86-64.so.2",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
];

fn host_library(name: &str) -> Option<PathBuf> {
    LIBRARY_DIRS
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// Checks `libs` against a guest (`lookup` reads a guest library by
/// soname). Returns the bridge directory when one was needed.
fn check(
    guest: &str,
    libs: &[PathBuf],
    bridge: &Path,
    mut lookup: impl FnMut(&str) -> Option<Vec<u8>>,
) -> Result<Option<PathBuf>, String> {
    let mut bridged = false;
    for lib in libs
        .iter()
        .filter(|l| l.extension().is_some_and(|x| x == "so") || l.to_string_lossy().contains(".so"))
    {
        let bytes = std::fs::read(lib).map_err(|e| format!("{}: {e}", lib.display()))?;
        let needed = elfver::needs(&bytes).map_err(|e| format!("{}: {e}", lib.display()))?;
        for gap in elfver::gaps(&needed, &mut lookup) {
            match gap {
                Gap::Old {
                    library,
                    missing,
                    newest,
                } => {
                    let have = newest
                        .map(|n| format!(" (its newest is {n})"))
                        .unwrap_or_default();
                    return Err(format!(
                        "{guest} cannot load {}: its {library} lacks {}{have}, which the library, built on this host, needs; use an image or sysroot with a newer {}, or build rocjitsu against the guest's",
                        lib.display(),
                        missing.join(", "),
                        if library.starts_with("libstdc++") {
                            "libstdc++"
                        } else if library.starts_with("libgcc") {
                            "libgcc"
                        } else {
                            "glibc"
                        },
                    ));
                }
                Gap::Missing { library } if CORE.contains(&library.as_str()) => {
                    return Err(format!(
                        "{guest} has no {library}, which {} needs: it is not a glibc system; use an image or sysroot with glibc",
                        lib.display()
                    ));
                }
                Gap::Missing { library } => {
                    let Some(host) = host_library(&library) else {
                        return Err(format!(
                            "{guest} has no {library}, which {} needs, and neither has this host: install it in the guest",
                            lib.display()
                        ));
                    };
                    let hb =
                        std::fs::read(&host).map_err(|e| format!("{}: {e}", host.display()))?;
                    let hn = elfver::needs(&hb).map_err(|e| format!("{}: {e}", host.display()))?;
                    if let Some(g) = elfver::gaps(&hn, &mut lookup).into_iter().next() {
                        let why = match g {
                            Gap::Missing { library } => {
                                format!("the guest has no {library} either")
                            }
                            Gap::Old {
                                library, missing, ..
                            } => format!("the guest's {library} lacks {}", missing.join(", ")),
                        };
                        return Err(format!(
                            "{guest} has no {library}, which {} needs, and this host's copy cannot be bridged ({why}): install {library} in the guest",
                            lib.display()
                        ));
                    }
                    std::fs::create_dir_all(bridge)
                        .map_err(|e| format!("{}: {e}", bridge.display()))?;
                    std::fs::copy(&host, bridge.join(&library))
                        .map_err(|e| format!("{}: {e}", bridge.display()))?;
                    tracing::info!(
                        "{guest} lacks {library}: bridged the host's {}",
                        host.display()
                    );
                    bridged = true;
                }
            }
        }
    }
    Ok(bridged.then(|| bridge.to_path_buf()))
}

pub(crate) fn check_sysroot(
    root: &Path,
    libs: &[PathBuf],
    bridge: &Path,
) -> Result<Option<PathBuf>, String> {
    check(
        &format!("sysroot {}", root.display()),
        libs,
        bridge,
        |name| {
            LIBRARY_DIRS
                .iter()
                .map(|d| root.join(d.trim_start_matches('/')).join(name))
                .find_map(|p| std::fs::read(p).ok())
        },
    )
}

pub(crate) fn check_container(
    engine: &Engine,
    container: &str,
    image: &str,
    libs: &[PathBuf],
    bridge: &Path,
) -> Result<Option<PathBuf>, String> {
    check(&format!("image {image}"), libs, bridge, |name| {
        LIBRARY_DIRS
            .iter()
            .find_map(|d| engine.read_file(container, &format!("{d}/{name}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn this_binary(tag: &str) -> Vec<PathBuf> {
        // A test binary is an ELF that needs libc, like the preload library;
        // its name has no ".so", so copy it under one.
        let dir = std::env::temp_dir().join(format!("mirage-compat-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("libme-{tag}.so"));
        std::fs::copy(std::env::current_exe().unwrap(), &p).unwrap();
        vec![p]
    }

    #[test]
    fn the_host_itself_is_compatible() {
        let libs = this_binary("the_ho");
        let bridge = libs[0].parent().unwrap().join("bridge");
        assert_eq!(check_sysroot(Path::new("/"), &libs, &bridge).unwrap(), None);
    }

    #[test]
    fn an_old_glibc_is_named() {
        let libs = this_binary("an_old");
        let bridge = libs[0].parent().unwrap().join("bridge");
        // A "guest" whose libc defines nothing the binary needs.
        let e = check("image old", &libs, &bridge, |name| {
            if name == "libc.so.6" {
                std::fs::read(host_library("libgcc_s.so.1")?).ok()
            } else {
                std::fs::read(host_library(name)?).ok()
            }
        })
        .unwrap_err();
        assert!(e.starts_with("image old cannot load"), "{e}");
        assert!(e.contains("its libc.so.6 lacks GLIBC_"), "{e}");
    }

    #[test]
    fn a_missing_helper_library_is_bridged() {
        let libs = this_binary("a_miss");
        let bridge = libs[0].parent().unwrap().join("bridge2");
        let got = check("image minimal", &libs, &bridge, |name| {
            if name.starts_with("libgcc_s") {
                None
            } else {
                std::fs::read(host_library(name)?).ok()
            }
        })
        .unwrap();
        let needs_gcc = elfver::needs(&std::fs::read(&libs[0]).unwrap())
            .unwrap()
            .iter()
            .any(|(l, _)| l.starts_with("libgcc_s"));
        if needs_gcc {
            assert_eq!(got.as_deref(), Some(bridge.as_path()));
            assert!(bridge.join("libgcc_s.so.1").is_file());
        } else {
            assert_eq!(got, None);
        }
        let e = check("image busybox", &libs, &bridge, |_| None).unwrap_err();
        assert!(
            e.contains("has no libc.so.6") || e.contains("has no "),
            "{e}"
        );
    }
}
