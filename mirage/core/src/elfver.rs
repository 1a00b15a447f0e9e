//! Symbol versions of ELF shared objects: which library versions a library
//! needs (`.gnu.version_r`) and which a library defines
//! (`.gnu.version_d`). mirage uses them to tell whether the emulator
//! libraries built on the host (e.g. against glibc 2.36) can be loaded in
//! a container image or sysroot, before running anything there.

/// The directories of a root file system where the dynamic loader finds
/// libraries on x86-64 Debian-like and Red Hat-like systems.
pub const LIBRARY_DIRS: &[&str] = &[
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

const SHT_GNU_VERDEF: u32 = 0x6fff_fffd;
const SHT_GNU_VERNEED: u32 = 0x6fff_fffe;

struct Elf<'a> {
    data: &'a [u8],
    sections: Vec<Section>,
}

#[derive(Clone, Copy)]
struct Section {
    kind: u32,
    offset: usize,
    size: usize,
    link: usize,
}

fn u16_at(d: &[u8], o: usize) -> Result<u16, String> {
    d.get(o..o + 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or_else(|| format!("truncated at offset {o}"))
}

fn u32_at(d: &[u8], o: usize) -> Result<u32, String> {
    d.get(o..o + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| format!("truncated at offset {o}"))
}

fn u64_at(d: &[u8], o: usize) -> Result<u64, String> {
    d.get(o..o + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
        .ok_or_else(|| format!("truncated at offset {o}"))
}

fn usize_of(v: u64) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("offset {v} out of range"))
}

impl<'a> Elf<'a> {
    fn parse(data: &'a [u8]) -> Result<Elf<'a>, String> {
        if data.len() < 64 || &data[..4] != b"\x7fELF" {
            return Err("not an ELF file".into());
        }
        if data[4] != 2 || data[5] != 1 {
            return Err("not a 64-bit little-endian ELF file".into());
        }
        let shoff = usize_of(u64_at(data, 0x28)?)?;
        let shentsize = usize::from(u16_at(data, 0x3a)?);
        let shnum = usize::from(u16_at(data, 0x3c)?);
        if shentsize < 64 && shnum > 0 {
            return Err(format!("section header size {shentsize} is too small"));
        }
        let mut sections = Vec::with_capacity(shnum);
        for i in 0..shnum {
            let h = shoff + i * shentsize;
            sections.push(Section {
                kind: u32_at(data, h + 4)?,
                offset: usize_of(u64_at(data, h + 0x18)?)?,
                size: usize_of(u64_at(data, h + 0x20)?)?,
                link: u32_at(data, h + 0x28)? as usize,
            });
        }
        Ok(Elf { data, sections })
    }

    fn string(&self, strtab: usize, off: u32) -> Result<String, String> {
        let s = self.sections.get(strtab).ok_or("bad string table link")?;
        let start = s.offset + off as usize;
        let end = s.offset + s.size;
        let bytes = self
            .data
            .get(start..end.min(self.data.len()))
            .ok_or("string out of range")?;
        let n = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Ok(String::from_utf8_lossy(&bytes[..n]).into_owned())
    }

    fn section(&self, kind: u32) -> Option<Section> {
        self.sections.iter().copied().find(|s| s.kind == kind)
    }
}

/// The versions a shared object needs, per library (`libc.so.6` ->
/// `GLIBC_2.2.5`, `GLIBC_2.34`, ...).
pub fn needs(data: &[u8]) -> Result<Vec<(String, Vec<String>)>, String> {
    let elf = Elf::parse(data)?;
    let Some(sec) = elf.section(SHT_GNU_VERNEED) else {
        return Ok(vec![]);
    };
    let mut out = vec![];
    let mut at = sec.offset;
    for _ in 0..4096 {
        let cnt = u16_at(data, at + 2)?;
        let file = elf.string(sec.link, u32_at(data, at + 4)?)?;
        let mut aux = at + u32_at(data, at + 8)? as usize;
        let mut versions = vec![];
        for _ in 0..cnt {
            versions.push(elf.string(sec.link, u32_at(data, aux + 8)?)?);
            let next = u32_at(data, aux + 12)? as usize;
            if next == 0 {
                break;
            }
            aux += next;
        }
        out.push((file, versions));
        let next = u32_at(data, at + 12)? as usize;
        if next == 0 {
            break;
        }
        at += next;
    }
    Ok(out)
}

/// The versions a shared object defines (`GLIBC_2.2.5`, ..., and its own
/// soname first).
pub fn defines(data: &[u8]) -> Result<Vec<String>, String> {
    let elf = Elf::parse(data)?;
    let Some(sec) = elf.section(SHT_GNU_VERDEF) else {
        return Ok(vec![]);
    };
    let mut out = vec![];
    let mut at = sec.offset;
    for _ in 0..4096 {
        let aux = at + u32_at(data, at + 12)? as usize;
        out.push(elf.string(sec.link, u32_at(data, aux)?)?);
        let next = u32_at(data, at + 16)? as usize;
        if next == 0 {
            break;
        }
        at += next;
    }
    Ok(out)
}

/// The newest `GLIBC_2.N[.M]` among versions, for messages.
pub fn newest_glibc(versions: &[String]) -> Option<String> {
    let key = |v: &str| -> Option<Vec<u32>> {
        v.strip_prefix("GLIBC_")?
            .split('.')
            .map(|p| p.parse().ok())
            .collect()
    };
    versions
        .iter()
        .filter_map(|v| key(v).map(|k| (k, v.clone())))
        .max()
        .map(|(_, v)| v)
}

/// One library a guest cannot give the emulator library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gap {
    /// The guest has no such library.
    Missing { library: String },
    /// The guest's copy lacks versions; `newest` is the newest glibc
    /// version it has, if it is a glibc library.
    Old {
        library: String,
        missing: Vec<String>,
        newest: Option<String>,
    },
}

/// Compares what `needed` (from [`needs`]) asks with what the guest's
/// libraries define; `lookup` returns a guest library's bytes by soname.
pub fn gaps(
    needed: &[(String, Vec<String>)],
    mut lookup: impl FnMut(&str) -> Option<Vec<u8>>,
) -> Vec<Gap> {
    let mut out = vec![];
    for (lib, versions) in needed {
        let Some(bytes) = lookup(lib) else {
            out.push(Gap::Missing {
                library: lib.clone(),
            });
            continue;
        };
        let defined = defines(&bytes).unwrap_or_default();
        let missing: Vec<String> = versions
            .iter()
            .filter(|v| !defined.contains(v))
            .cloned()
            .collect();
        if !missing.is_empty() {
            out.push(Gap::Old {
                library: lib.clone(),
                missing,
                newest: newest_glibc(&defined),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_libc() -> Vec<u8> {
        for d in LIBRARY_DIRS {
            if let Ok(b) = std::fs::read(format!("{d}/libc.so.6")) {
                return b;
            }
        }
        panic!("no libc.so.6 on this host");
    }

    #[test]
    fn host_libc_defines_glibc_versions() {
        let defs = defines(&host_libc()).unwrap();
        assert!(defs.iter().any(|d| d == "GLIBC_2.2.5"), "{defs:?}");
        let newest = newest_glibc(&defs).unwrap();
        assert!(newest.starts_with("GLIBC_2."), "{newest}");
    }

    #[test]
    fn this_test_binary_needs_libc() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let n = needs(&me).unwrap();
        let libc = n
            .iter()
            .find(|(f, _)| f == "libc.so.6")
            .expect("needs libc.so.6");
        assert!(libc.1.iter().any(|v| v == "GLIBC_2.2.5"), "{n:?}");
        // Against the host's own libc there is no gap; against a libc that
        // defines nothing, every glibc version is missing.
        let host = host_libc();
        assert!(
            gaps(&n[..], |l| (l == "libc.so.6").then(|| host.clone()))
                .iter()
                .all(|g| !matches!(g, Gap::Old { library, .. } if library == "libc.so.6"))
        );
        let g = gaps(&[("libc.so.6".into(), vec!["GLIBC_9.99".into()])], |_| {
            Some(host.clone())
        });
        assert!(
            matches!(&g[0], Gap::Old { missing, newest: Some(_), .. } if missing == &["GLIBC_9.99"])
        );
        let g = gaps(&[("libfoo.so.1".into(), vec![])], |_| None);
        assert_eq!(
            g,
            vec![Gap::Missing {
                library: "libfoo.so.1".into()
            }]
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(needs(b"not an elf").is_err());
        let mut bad = host_libc();
        bad.truncate(100);
        assert!(defines(&bad).is_err());
    }
}
