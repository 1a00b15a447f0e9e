//! Errors: every one names the file, the section (when there is one) and the
//! byte offset where reading went wrong.

use std::fmt;

/// What went wrong, independent of where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// A structure runs past the end of the data.
    #[error("truncated {what}: needs {need} bytes, {have} available")]
    Truncated {
        what: &'static str,
        need: u64,
        have: u64,
    },
    /// The data does not start with the expected magic bytes.
    #[error("bad magic: not {what}")]
    BadMagic { what: &'static str },
    /// An ELF identification or header field has a value we cannot read.
    #[error("unsupported ELF {field}: {value}")]
    UnsupportedElf { field: &'static str, value: String },
    /// `e_machine` is not EM_AMDGPU (224).
    #[error("wrong machine type {0}: not EM_AMDGPU (224)")]
    WrongMachine(u16),
    /// The EF_AMDGPU_MACH value is not one of the implemented targets.
    #[error(
        "unknown target: EF_AMDGPU_MACH 0x{mach:03x}{} is not implemented (implemented: gfx90a, gfx942, gfx950)",
        match name { Some(n) => format!(" ({n})"), None => String::new() }
    )]
    UnknownTarget {
        mach: u32,
        name: Option<&'static str>,
    },
    /// A region named by a header lies outside the data.
    #[error(
        "{what} out of bounds: bytes 0x{offset:x}..0x{offset:x}+0x{size:x} exceed the 0x{limit:x}-byte {container}"
    )]
    OutOfBounds {
        what: &'static str,
        offset: u64,
        size: u64,
        limit: u64,
        container: &'static str,
    },
    /// A structurally invalid value (bad index, bad size, bad string, ...).
    #[error("invalid {what}: {detail}")]
    Invalid { what: &'static str, detail: String },
    /// The msgpack metadata note could not be decoded.
    #[error("bad msgpack metadata: {0}")]
    Msgpack(String),
    /// A compressed offload bundle failed to decompress.
    #[error("decompression failed: {0}")]
    Decompress(String),
    /// A declared size is larger than this reader accepts.
    #[error("{what} of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        what: &'static str,
        size: u64,
        limit: u64,
    },
    /// No embedded code object matches the requested target.
    #[error("no code object for {wanted}; available: {}", if available.is_empty() { "none".to_string() } else { available.join(", ") })]
    NoMatchingTarget {
        wanted: String,
        available: Vec<String>,
    },
    /// The data is none of the containers this crate reads.
    #[error(
        "unrecognized format: not an AMDGPU ELF, offload bundle, compressed bundle or HIP fat binary"
    )]
    UnknownFormat,
}

/// An error located in a named file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The name the caller gave for the data (a path, or `path:section:entry`).
    pub file: String,
    /// The ELF section being read, if any.
    pub section: Option<String>,
    /// Byte offset from the start of the file's data.
    pub offset: u64,
    /// What is wrong.
    pub kind: ErrorKind,
}

impl Error {
    pub(crate) fn new(file: &str, section: Option<&str>, offset: u64, kind: ErrorKind) -> Self {
        Error {
            file: file.to_string(),
            section: section.map(str::to_string),
            offset,
            kind,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        if let Some(s) = &self.section {
            write!(f, "section {s}: ")?;
        }
        write!(f, "at byte offset 0x{:x}: {}", self.offset, self.kind)
    }
}

impl std::error::Error for Error {}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Bounds-checked little-endian reads from a named byte buffer, producing
/// located errors.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a, 'n> {
    pub bytes: &'a [u8],
    pub file: &'n str,
    pub section: Option<&'n str>,
}

impl<'a, 'n> Reader<'a, 'n> {
    pub fn new(file: &'n str, bytes: &'a [u8]) -> Self {
        Reader {
            bytes,
            file,
            section: None,
        }
    }

    /// The same buffer, with errors reported in `section`.
    pub fn in_section(self, section: &'n str) -> Self {
        Reader {
            section: Some(section),
            ..self
        }
    }

    pub fn err(&self, offset: u64, kind: ErrorKind) -> Error {
        Error::new(self.file, self.section, offset, kind)
    }

    /// `len` bytes at `offset`, or a truncation error naming `what`.
    pub fn slice(&self, offset: u64, len: u64, what: &'static str) -> Result<&'a [u8]> {
        let have = self.bytes.len() as u64;
        match offset.checked_add(len) {
            Some(end) if end <= have => Ok(&self.bytes[offset as usize..end as usize]),
            _ => Err(self.err(
                offset,
                ErrorKind::Truncated {
                    what,
                    need: len,
                    have: have.saturating_sub(offset),
                },
            )),
        }
    }

    /// A region `offset..offset+size` named by a header, checked to lie in
    /// the buffer.
    pub fn region(&self, offset: u64, size: u64, what: &'static str) -> Result<&'a [u8]> {
        let limit = self.bytes.len() as u64;
        match offset.checked_add(size) {
            Some(end) if end <= limit => Ok(&self.bytes[offset as usize..end as usize]),
            _ => Err(self.err(
                offset,
                ErrorKind::OutOfBounds {
                    what,
                    offset,
                    size,
                    limit,
                    container: "file",
                },
            )),
        }
    }

    pub fn u16(&self, offset: u64, what: &'static str) -> Result<u16> {
        let s = self.slice(offset, 2, what)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }

    pub fn u32(&self, offset: u64, what: &'static str) -> Result<u32> {
        let s = self.slice(offset, 4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    pub fn u64(&self, offset: u64, what: &'static str) -> Result<u64> {
        let s = self.slice(offset, 8, what)?;
        let mut b = [0u8; 8];
        b.copy_from_slice(s);
        Ok(u64::from_le_bytes(b))
    }
}
