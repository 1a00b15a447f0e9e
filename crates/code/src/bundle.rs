//! Containers of code objects: clang offload bundles
//! (`__CLANG_OFFLOAD_BUNDLE__`), compressed bundles (`CCOB`, zlib or zstd,
//! versions 1-3), HIP fat binaries (a host ELF whose `.hip_fatbin` section
//! holds bundles at 4096-byte boundaries) and bare code objects (clang
//! "Clang Offload Bundler" documentation, "Bundled Code Object Layout" and
//! "Compression").

use crate::elf::{self, Elf};
use crate::error::{Error, ErrorKind, Reader, Result};
use crate::object::CodeObject;
use rocjitsu_isa::Target;
use std::io::Read;

/// Magic of an uncompressed offload bundle.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Magic of a compressed offload bundle.
pub const CCOB_MAGIC: &[u8; 4] = b"CCOB";
/// Alignment of bundles inside `.hip_fatbin`.
pub const FATBIN_ALIGN: u64 = 4096;
/// Most bytes decompression may produce for one container.
pub const MAX_DECOMPRESSED: u64 = 1 << 30;

/// What kind of file [`Container::parse`] read.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ContainerKind {
    /// A bare AMDGPU ELF code object.
    CodeObject,
    /// One uncompressed offload bundle.
    OffloadBundle,
    /// One compressed offload bundle.
    CompressedBundle,
    /// A host ELF with a `.hip_fatbin` section.
    HipFatBinary,
}

/// A bundle entry ID split into its parts:
/// `<offload kind>-<arch>-<vendor>-<os>-<env>-<target id>`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BundleId {
    /// The whole ID as written (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`).
    pub id: String,
    /// `hip`, `hipv4`, `openmp`, `host`, ...
    pub kind: String,
    /// The target triple (`amdgcn-amd-amdhsa-`).
    pub triple: String,
    /// The target ID (`gfx90a:xnack-`), empty for host entries.
    pub target_id: String,
}

impl BundleId {
    /// Splits an entry ID. Triples have four components; the old
    /// three-component form (`hip-amdgcn-amd-amdhsa-gfx906`) is recognized
    /// by its `gfx` fourth component.
    pub fn parse(id: &str) -> BundleId {
        let (kind, rest) = id.split_once('-').unwrap_or((id, ""));
        let parts: Vec<&str> = rest.splitn(5, '-').collect();
        let (triple, target_id) = if parts.len() >= 4 && parts[3].starts_with("gfx") {
            (parts[..3].join("-"), parts[3..].join("-"))
        } else if parts.len() == 5 {
            (parts[..4].join("-"), parts[4].to_string())
        } else {
            (rest.to_string(), String::new())
        };
        BundleId {
            id: id.to_string(),
            kind: kind.to_string(),
            triple,
            target_id,
        }
    }

    /// Whether the entry is AMDGPU device code.
    pub fn is_amdgcn(&self) -> bool {
        self.triple.starts_with("amdgcn")
    }

    /// The processor of the target ID (`gfx90a`).
    pub fn processor(&self) -> &str {
        self.target_id.split(':').next().unwrap_or("")
    }
}

/// One embedded file: a bundle entry, or the bare code object itself.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// Entry ID (for a bare code object: `amdgcn-amd-amdhsa--<target id>`).
    pub id: BundleId,
    /// Name for errors: `file:section@offset:entry id`.
    pub name: String,
    /// Offset of the entry's data in its bundle (after decompression for a
    /// compressed bundle).
    pub offset: u64,
    /// Offset of the bundle in the file.
    pub bundle_offset: u64,
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

/// A `__hip_fatbin_wrapper` from a host ELF's `.hipFatBinSegment`: the
/// structure the HIP runtime registers, pointing at one bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FatbinWrapper {
    /// Offset of the wrapper in the file.
    pub offset: u64,
    /// `HIPF` (0x48495046) in a valid wrapper.
    pub magic: u32,
    pub version: u32,
    /// Address of the bundle: resolved in linked files, 0 in relocatable
    /// objects (where a relocation supplies it).
    pub binary: u64,
}

/// Magic of a `__hip_fatbin_wrapper`.
pub const HIP_FATBIN_WRAPPER_MAGIC: u32 = 0x4849_5046;

/// A parsed container and its entries.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Container {
    pub name: String,
    pub kind: ContainerKind,
    /// Every entry, host entries included, in file order.
    pub entries: Vec<Entry>,
    /// For a HIP fat binary: the wrappers of `.hipFatBinSegment`, in order.
    pub wrappers: Vec<FatbinWrapper>,
}

impl Container {
    /// Recognizes the format by its magic and lists the embedded files.
    pub fn parse(name: &str, bytes: &[u8]) -> Result<Container> {
        if bytes.starts_with(BUNDLE_MAGIC) || bytes.starts_with(CCOB_MAGIC) {
            let mut budget = MAX_DECOMPRESSED;
            let (entries, _, compressed) = parse_blob(name, None, bytes, 0, &mut budget)?;
            return Ok(Container {
                name: name.to_string(),
                kind: if compressed {
                    ContainerKind::CompressedBundle
                } else {
                    ContainerKind::OffloadBundle
                },
                entries,
                wrappers: Vec::new(),
            });
        }
        if !elf::is_elf(bytes) {
            return Err(Error::new(name, None, 0, ErrorKind::UnknownFormat));
        }
        let e = Elf::parse_any(name, bytes)?;
        if e.header.machine == elf::EM_AMDGPU {
            let flags = Elf::parse(name, bytes)?.amdgpu_flags();
            return Ok(Container {
                name: name.to_string(),
                kind: ContainerKind::CodeObject,
                entries: vec![Entry {
                    id: BundleId::parse(&format!("hipv4-amdgcn-amd-amdhsa--{}", flags.target_id())),
                    name: name.to_string(),
                    offset: 0,
                    bundle_offset: 0,
                    bytes: bytes.to_vec(),
                }],
                wrappers: Vec::new(),
            });
        }
        let Some(sec) = e.section(".hip_fatbin") else {
            return Err(Error::new(
                name,
                None,
                0,
                ErrorKind::Invalid {
                    what: "HIP fat binary",
                    detail: format!(
                        "host ELF (e_machine {}) without a .hip_fatbin section",
                        e.header.machine
                    ),
                },
            ));
        };
        let data = e.section_data(name, bytes, sec)?;
        let entries = parse_fatbin(name, &sec.name, data, sec.offset)?;
        let mut wrappers = Vec::new();
        if let Some(seg) = e.section(".hipFatBinSegment") {
            let d = e.section_data(name, bytes, seg)?;
            for (i, w) in d.chunks_exact(24).enumerate() {
                let u32_at = |o: usize| u32::from_le_bytes([w[o], w[o + 1], w[o + 2], w[o + 3]]);
                let mut p = [0u8; 8];
                p.copy_from_slice(&w[8..16]);
                wrappers.push(FatbinWrapper {
                    offset: seg.offset + 24 * i as u64,
                    magic: u32_at(0),
                    version: u32_at(4),
                    binary: u64::from_le_bytes(p),
                });
            }
        }
        Ok(Container {
            name: name.to_string(),
            kind: ContainerKind::HipFatBinary,
            entries,
            wrappers,
        })
    }

    /// Entries holding AMDGPU code objects (non-empty amdgcn entries).
    pub fn code_objects(&self) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .filter(|e| e.id.is_amdgcn() && !e.bytes.is_empty())
    }

    /// Target IDs of the embedded code objects, in order, without repeats.
    pub fn targets(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for e in self.code_objects() {
            if !out.contains(&e.id.target_id) {
                out.push(e.id.target_id.clone());
            }
        }
        out
    }

    /// Every code object for `target`: a linked fat binary has one per
    /// translation unit.
    pub fn select_all(&self, target: Target) -> Result<Vec<CodeObject>> {
        let found: Vec<CodeObject> = self
            .code_objects()
            .filter(|e| e.id.processor() == target.name())
            .map(|e| CodeObject::parse(&e.name, e.bytes.clone()))
            .collect::<Result<_>>()?;
        if found.is_empty() {
            return Err(Error::new(
                &self.name,
                None,
                0,
                ErrorKind::NoMatchingTarget {
                    wanted: target.name().to_string(),
                    available: self.targets(),
                },
            ));
        }
        Ok(found)
    }

    /// The code object whose full target ID (`gfx90a:xnack-`) is `id`.
    pub fn select_id(&self, id: &str) -> Result<CodeObject> {
        match self.code_objects().find(|e| e.id.target_id == id) {
            Some(e) => CodeObject::parse(&e.name, e.bytes.clone()),
            None => Err(Error::new(
                &self.name,
                None,
                0,
                ErrorKind::NoMatchingTarget {
                    wanted: id.to_string(),
                    available: self.targets(),
                },
            )),
        }
    }

    /// The first code object for `target`, or an error listing the
    /// available target IDs.
    pub fn select(&self, target: Target) -> Result<CodeObject> {
        let mut all = self.select_all(target)?;
        Ok(all.swap_remove(0))
    }
}

/// Parses the bundles of a `.hip_fatbin` section: one at offset 0, further
/// ones (from linking several translation units) at 4096-byte boundaries.
fn parse_fatbin(name: &str, section: &str, data: &[u8], file_off: u64) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    let mut at = 0u64;
    let len = data.len() as u64;
    let mut budget = MAX_DECOMPRESSED;
    while at < len {
        let rest = &data[at as usize..];
        if rest.starts_with(BUNDLE_MAGIC) || rest.starts_with(CCOB_MAGIC) {
            let (mut e, size, _) =
                parse_blob(name, Some(section), rest, file_off + at, &mut budget)?;
            entries.append(&mut e);
            let next = at.saturating_add(size.max(1));
            at = next.div_ceil(FATBIN_ALIGN).saturating_mul(FATBIN_ALIGN);
        } else if at == 0 {
            return Err(Error::new(
                name,
                Some(section),
                file_off,
                ErrorKind::BadMagic {
                    what: "an offload bundle or compressed bundle",
                },
            ));
        } else {
            at = at.saturating_add(FATBIN_ALIGN);
        }
    }
    Ok(entries)
}

/// Parses one bundle (compressed or not) at the start of `data`, which is at
/// `file_off` in the file. Returns its entries, its size in `data` (for a
/// version-1 compressed bundle, which does not record it, all of `data`) and
/// whether it was compressed. `budget` is what decompression may still
/// produce for the whole container.
fn parse_blob(
    name: &str,
    section: Option<&str>,
    data: &[u8],
    file_off: u64,
    budget: &mut u64,
) -> Result<(Vec<Entry>, u64, bool)> {
    if data.starts_with(CCOB_MAGIC) {
        let (plain, size) = decompress(name, section, data, file_off, *budget)?;
        *budget -= plain.len() as u64;
        let inner = format!("{name}@0x{file_off:x}(decompressed)");
        // Errors in the decompressed data carry offsets into that data.
        let (entries, _) = parse_bundle(&inner, section, &plain, 0, name, file_off)?;
        Ok((entries, size, true))
    } else {
        let (entries, size) = parse_bundle(name, section, data, file_off, name, file_off)?;
        Ok((entries, size, false))
    }
}

/// Parses an uncompressed bundle: the magic, a u64 entry count, then per
/// entry a u64 offset, u64 size, u64 ID length and the ID; offsets are from
/// the bundle start. `err_off` is added to offsets in errors; `bundle_off`
/// is where the bundle (or the compressed bundle holding it) is in the file.
fn parse_bundle(
    name: &str,
    section: Option<&str>,
    data: &[u8],
    err_off: u64,
    file_name: &str,
    bundle_off: u64,
) -> Result<(Vec<Entry>, u64)> {
    let r = Reader {
        bytes: data,
        file: name,
        section,
    };
    let located = |e: Error| Error {
        offset: e.offset + err_off,
        ..e
    };
    let magic = r.slice(0, 24, "offload bundle magic").map_err(located)?;
    if magic != BUNDLE_MAGIC {
        return Err(located(r.err(
            0,
            ErrorKind::BadMagic {
                what: "an offload bundle",
            },
        )));
    }
    let count = r.u64(24, "bundle entry count").map_err(located)?;
    // Each entry header takes at least 24 bytes.
    if count > (data.len() as u64) / 24 {
        return Err(located(r.err(
            24,
            ErrorKind::Invalid {
                what: "bundle entry count",
                detail: format!("{count} entries cannot fit in {} bytes", data.len()),
            },
        )));
    }
    let mut at = 32u64;
    let mut end = at;
    let mut entries = Vec::with_capacity(count as usize);
    let mut total = 0u64;
    for _ in 0..count {
        let offset = r.u64(at, "bundle entry header").map_err(located)?;
        let size = r.u64(at + 8, "bundle entry header").map_err(located)?;
        let id_len = r.u64(at + 16, "bundle entry header").map_err(located)?;
        let id = r
            .slice(at + 24, id_len, "bundle entry ID")
            .map_err(located)?;
        let id = String::from_utf8_lossy(id).into_owned();
        let bytes = r.region(offset, size, "bundle entry").map_err(|e| {
            located(Error {
                offset: at,
                kind: match e.kind {
                    ErrorKind::OutOfBounds {
                        what,
                        offset,
                        size,
                        limit,
                        ..
                    } => ErrorKind::OutOfBounds {
                        what,
                        offset,
                        size,
                        limit,
                        container: "bundle",
                    },
                    k => k,
                },
                ..e
            })
        })?;
        // Entries of a real bundle are disjoint; overlapping ones would
        // make the copies below add up to more than the input.
        total += size;
        if total > data.len() as u64 {
            return Err(located(r.err(
                at,
                ErrorKind::Invalid {
                    what: "bundle entries",
                    detail: format!(
                        "entry sizes add up to more than the 0x{:x}-byte bundle (overlapping entries)",
                        data.len()
                    ),
                },
            )));
        }
        at += 24 + id_len;
        end = end.max(at).max(offset + size);
        let where_ = match section {
            Some(s) => format!("{file_name}:{s}@0x{bundle_off:x}:{id}"),
            None => format!("{file_name}:{id}"),
        };
        entries.push(Entry {
            id: BundleId::parse(&id),
            name: where_,
            offset,
            bundle_offset: bundle_off,
            bytes: bytes.to_vec(),
        });
    }
    Ok((entries, end))
}

/// Decompresses a `CCOB` bundle. Header layouts (little-endian, after the
/// 4-byte magic, u16 version and u16 method):
/// v1: u32 uncompressed size, u64 hash;
/// v2: u32 total size, u32 uncompressed size, u64 hash;
/// v3: u64 total size, u64 uncompressed size, u64 hash.
/// Method 0 is zlib, 1 is zstd.
fn decompress(
    name: &str,
    section: Option<&str>,
    data: &[u8],
    file_off: u64,
    limit: u64,
) -> Result<(Vec<u8>, u64)> {
    let r = Reader {
        bytes: data,
        file: name,
        section,
    };
    let err = |off: u64, kind| Error::new(name, section, file_off + off, kind);
    let located = |e: Error| Error {
        offset: e.offset + file_off,
        ..e
    };
    let version = r.u16(4, "compressed bundle header").map_err(located)?;
    let method = r.u16(6, "compressed bundle header").map_err(located)?;
    let (total, plain_size, header) = match version {
        1 => (
            None,
            u64::from(r.u32(8, "compressed bundle header").map_err(located)?),
            20u64,
        ),
        2 => (
            Some(u64::from(
                r.u32(8, "compressed bundle header").map_err(located)?,
            )),
            u64::from(r.u32(12, "compressed bundle header").map_err(located)?),
            24,
        ),
        3 => (
            Some(r.u64(8, "compressed bundle header").map_err(located)?),
            r.u64(16, "compressed bundle header").map_err(located)?,
            32,
        ),
        v => {
            return Err(err(
                4,
                ErrorKind::Invalid {
                    what: "compressed bundle version",
                    detail: format!("{v} (versions 1-3 are known)"),
                },
            ));
        }
    };
    r.slice(0, header, "compressed bundle header")
        .map_err(located)?;
    let total = total.unwrap_or(data.len() as u64);
    if total < header {
        return Err(err(
            8,
            ErrorKind::Invalid {
                what: "compressed bundle total size",
                detail: format!("{total} is smaller than the {header}-byte header"),
            },
        ));
    }
    let body = r
        .region(header, total - header, "compressed bundle data")
        .map_err(located)?;
    if plain_size > limit {
        return Err(err(
            if version == 3 { 16 } else { 12 },
            ErrorKind::TooLarge {
                what: "decompressed bundle",
                size: plain_size,
                limit,
            },
        ));
    }
    let out = match method {
        0 => miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(body, plain_size as usize)
            .map_err(|e| {
                err(
                    header,
                    ErrorKind::Decompress(format!("zlib: {:?}", e.status)),
                )
            })?,
        1 => {
            let dec = ruzstd::decoding::StreamingDecoder::new(body)
                .map_err(|e| err(header, ErrorKind::Decompress(format!("zstd: {e}"))))?;
            let mut out = Vec::new();
            dec.take(plain_size)
                .read_to_end(&mut out)
                .map_err(|e| err(header, ErrorKind::Decompress(format!("zstd: {e}"))))?;
            out
        }
        m => {
            return Err(err(
                6,
                ErrorKind::Invalid {
                    what: "compression method",
                    detail: format!("{m} (0 zlib and 1 zstd are known)"),
                },
            ));
        }
    };
    if out.len() as u64 != plain_size {
        return Err(err(
            header,
            ErrorKind::Decompress(format!(
                "produced {} bytes, the header says {plain_size}",
                out.len()
            )),
        ));
    }
    Ok((out, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_ids_split_into_kind_triple_and_target() {
        let b = BundleId::parse("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-");
        assert_eq!(b.kind, "hipv4");
        assert_eq!(b.triple, "amdgcn-amd-amdhsa-");
        assert_eq!(b.target_id, "gfx90a:xnack-");
        assert_eq!(b.processor(), "gfx90a");
        assert!(b.is_amdgcn());
        let h = BundleId::parse("host-x86_64-unknown-linux-gnu-");
        assert_eq!(h.triple, "x86_64-unknown-linux-gnu");
        assert_eq!(h.target_id, "");
        assert!(!h.is_amdgcn());
        let old = BundleId::parse("hip-amdgcn-amd-amdhsa-gfx906");
        assert_eq!(old.triple, "amdgcn-amd-amdhsa");
        assert_eq!(old.target_id, "gfx906");
    }

    fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = BUNDLE_MAGIC.to_vec();
        out.extend((entries.len() as u64).to_le_bytes());
        let header: usize = 32 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
        let mut data_at = header;
        for (id, d) in entries {
            out.extend((data_at as u64).to_le_bytes());
            out.extend((d.len() as u64).to_le_bytes());
            out.extend((id.len() as u64).to_le_bytes());
            out.extend(id.as_bytes());
            data_at += d.len();
        }
        for (_, d) in entries {
            out.extend(*d);
        }
        out
    }

    #[test]
    fn bundles_list_entries_and_report_bad_offsets() {
        let b = bundle(&[
            ("host-x86_64-unknown-linux-gnu-", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx942", b"abcd"),
        ]);
        let c = Container::parse("x.bundle", &b).unwrap();
        assert_eq!(c.kind, ContainerKind::OffloadBundle);
        assert_eq!(c.entries.len(), 2);
        assert_eq!(c.targets(), vec!["gfx942".to_string()]);
        assert_eq!(c.code_objects().next().unwrap().bytes, b"abcd");
        assert!(matches!(
            c.select_id("gfx942:xnack+").unwrap_err().kind,
            ErrorKind::NoMatchingTarget { .. }
        ));
        let e = c.select(Target::Gfx90a).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.bundle: at byte offset 0x0: no code object for gfx90a; available: gfx942"
        );

        let mut bad = b.clone();
        // Second entry's size field: far past the end.
        let size_at = 32 + 24 + 30 + 8;
        bad[size_at..size_at + 8].copy_from_slice(&1000u64.to_le_bytes());
        let e = Container::parse("x.bundle", &bad).unwrap_err();
        assert!(e.to_string().contains("bundle entry out of bounds"), "{e}");
        assert_eq!(e.offset, 32 + 24 + 30);
    }

    #[test]
    fn overlapping_entries_are_rejected() {
        let mut b = bundle(&[
            ("hipv4-amdgcn-amd-amdhsa--gfx942", b"abcd"),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"efgh"),
        ]);
        // Point both entries at the whole bundle.
        let len = b.len() as u64;
        for at in [32, 32 + 24 + 31] {
            b[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
            b[at + 8..at + 16].copy_from_slice(&len.to_le_bytes());
        }
        let e = Container::parse("o.bundle", &b).unwrap_err();
        assert!(e.to_string().contains("overlapping entries"), "{e}");
    }

    #[test]
    fn compressed_bundles_with_zlib() {
        let plain = bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx950", b"0123456789")]);
        let z = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        for version in [1u16, 2, 3] {
            let mut c = CCOB_MAGIC.to_vec();
            c.extend(version.to_le_bytes());
            c.extend(0u16.to_le_bytes());
            let header = [20usize, 24, 32][usize::from(version) - 1];
            let total = (header + z.len()) as u64;
            match version {
                1 => c.extend((plain.len() as u32).to_le_bytes()),
                2 => {
                    c.extend((total as u32).to_le_bytes());
                    c.extend((plain.len() as u32).to_le_bytes());
                }
                _ => {
                    c.extend(total.to_le_bytes());
                    c.extend((plain.len() as u64).to_le_bytes());
                }
            }
            c.extend(0u64.to_le_bytes());
            c.extend(&z);
            let got = Container::parse("c.bundle", &c).unwrap();
            assert_eq!(got.kind, ContainerKind::CompressedBundle);
            assert_eq!(got.entries[0].bytes, b"0123456789", "v{version}");
            assert_eq!(got.targets(), vec!["gfx950".to_string()]);
        }
    }

    #[test]
    fn unknown_format_is_an_error() {
        let e = Container::parse("junk", b"hello world").unwrap_err();
        assert_eq!(e.kind, ErrorKind::UnknownFormat);
    }
}
