//! Checkpoints: the emulated GPU state of a device's processes in a file,
//! and that file read back, checked, for a restore
//! ([`SimulatedDriver::snapshot`](crate::SimulatedDriver::snapshot),
//! [`SimulatedDriver::restore`](crate::SimulatedDriver::restore)).
//!
//! The layout (version 1; `docs/checkpoint.md` describes it, and
//! `docs/checkpoint.schema.json` is the JSON Schema of the metadata):
//!
//! ```text
//! offset  size  field
//!      0     8  magic "RJCKPT\0\n"
//!      8     4  format version, u32 little-endian (1)
//!     12     4  header size, u32 LE (64)
//!     16     8  metadata length M, u64 LE
//!     24     8  payload length P, u64 LE
//!     32    32  SHA-256 of the metadata
//!     64     M  metadata: UTF-8 JSON, [`Meta`]
//!   64+M     P  payload: the allocations' bytes, each at the offset its
//!               metadata entry names, with its own SHA-256
//! ```
//!
//! Reading checks everything before anything is used: the magic, the
//! version, the lengths against the file's size, the metadata's checksum
//! and shape (unknown fields are refused), every allocation's checksum,
//! and the GPU configuration (its SHA-256 and targets) against the one the
//! reader runs; each failure is a [`CheckpointError`] naming what differs.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The first 8 bytes of every checkpoint file.
pub const MAGIC: [u8; 8] = *b"RJCKPT\0\n";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
/// Bytes before the metadata.
pub const HEADER_BYTES: u32 = 64;
/// The `format` field of the metadata.
pub const FORMAT: &str = "rocjitsu-checkpoint";

/// The metadata of a checkpoint (the JSON after the header).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Always [`FORMAT`].
    pub format: String,
    /// The format version, as in the header.
    pub version: u32,
    /// The rocjitsu version that wrote it.
    pub rocjitsu: String,
    /// SHA-256 (hex) of the GPU configuration as JSON
    /// ([`config_sha256`]).
    pub config_sha256: String,
    /// Each GPU's gfx target, in configuration order.
    pub targets: Vec<String>,
    /// How dispatches run (`functional`: the driver has no clocked mode,
    /// so no modelled time is carried from one dispatch to the next).
    pub exec_mode: String,
    /// The GPU timestamp counter (100 MHz) when the checkpoint was taken.
    /// The counter follows CLOCK_BOOTTIME, so a restore on the same boot
    /// goes on from the host's clock; this is a record, not a setting.
    pub gpu_clock: u64,
    /// The processes on the device.
    pub clients: Vec<ClientState>,
}

/// One process's driver state (KFD's `kfd_process`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientState {
    /// The daemon's token of the process (hex; empty in local mode), with
    /// which it reconnects.
    pub token: String,
    /// The process id the daemon knew it by (0 in local mode).
    pub pid: u32,
    /// SET_XNACK_MODE's setting.
    pub xnack: bool,
    pub memory: MemoryState,
    pub events: EventsState,
    pub queues: QueuesState,
}

/// A process's allocations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryState {
    /// The id the next allocation gets.
    pub next_id: u32,
    /// The render-node mmap offset the next VRAM/GTT buffer gets.
    pub next_offset: u64,
    pub allocations: Vec<AllocationState>,
}

/// What kind of memory an allocation is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllocKind {
    Vram,
    Gtt,
    Userptr,
    Doorbell,
    Mmio,
}

/// One allocation (ALLOC_MEMORY_OF_GPU).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocationState {
    /// The allocation id (the low 32 bits of the KFD handle).
    pub id: u32,
    /// GPU index in configuration order.
    pub gpu: usize,
    pub kind: AllocKind,
    /// GPU (= host) virtual address and size in bytes (a page multiple).
    pub va: u64,
    pub size: u64,
    /// KFD_IOC_ALLOC_MEM_FLAGS_*.
    pub flags: u32,
    /// The mmap offset ALLOC_MEMORY_OF_GPU answered; for userptr memory
    /// the address of the process's pages, which need not be the GPU
    /// address (the thunk registers host memory at a GPU address of its
    /// own aperture: [`AllocationState::process_address`]).
    pub mmap_offset: u64,
    /// Whether it is mapped to the GPU (MAP_MEMORY_TO_GPU).
    pub mapped: bool,
    /// Its bytes in the payload (memory with contents: VRAM, GTT,
    /// userptr).
    pub contents: Option<Blob>,
}

impl AllocationState {
    /// Where the process maps the allocation's bytes: a userptr
    /// allocation's pages are at its mmap offset (the user address
    /// registered), which on dGPUs the thunk gives a GPU address of its
    /// own (hsaKmtRegisterMemory: a PROT_NONE reservation there, the data
    /// elsewhere); VRAM and GTT are mapped at their GPU address.
    pub fn process_address(&self) -> u64 {
        match self.kind {
            AllocKind::Userptr => self.mmap_offset,
            _ => self.va,
        }
    }
}

/// A range of the payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blob {
    /// Offset from the start of the payload.
    pub offset: u64,
    pub len: u64,
    /// SHA-256 of the bytes (hex).
    pub sha256: String,
}

/// A process's events.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsState {
    /// The event page (signal slots): the GPU address and size of the
    /// buffer CREATE_EVENT named.
    pub page: Option<EventPage>,
    /// The next id of a non-signal event, less the signal-slot limit.
    pub next_other: u32,
    pub events: Vec<EventState>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventPage {
    pub va: u64,
    pub size: u64,
}

/// One event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventState {
    pub id: u32,
    /// KFD_IOC_EVENT_* type.
    pub kind: u32,
    pub auto_reset: bool,
    pub signaled: bool,
    /// KFD's event age.
    pub age: u64,
    /// The memory-exception data of the last fault (hex), if any.
    pub exception: Option<String>,
}

/// A process's queues.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueuesState {
    /// The id the next queue gets.
    pub next_queue: u32,
    pub queues: Vec<QueueState>,
}

/// What ring a queue is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    Aql,
    Sdma,
    Pm4,
}

/// One queue, stopped between two packets of its ring.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueState {
    /// The KFD queue id.
    pub id: u32,
    pub gpu: usize,
    pub kind: QueueKind,
    /// The doorbell slot (its offset in the doorbell page is slot times
    /// the configuration's doorbell size).
    pub doorbell_slot: u32,
    pub ring_base: u64,
    /// Ring size in bytes (0: inactive, a percentage of 0).
    pub ring_size: u64,
    /// Addresses of the read and write pointers.
    pub read_ptr: u64,
    pub write_ptr: u64,
    pub priority: u32,
    /// The pointers' values when the queue was stopped (the read pointer
    /// is where the restored queue goes on; both are in the saved memory
    /// too, this is for people and checks).
    pub read_value: u64,
    pub write_value: u64,
}

/// A checkpoint: metadata and payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub meta: Meta,
    pub payload: Vec<u8>,
}

/// What the reader runs: a checkpoint of another configuration is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expect {
    pub config_sha256: String,
    pub targets: Vec<String>,
}

impl Expect {
    pub fn of(config: &rocjitsu_config::GpuConfig) -> Expect {
        Expect {
            config_sha256: config_sha256(config),
            targets: targets(config),
        }
    }
}

/// Why a checkpoint cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a rocjitsu checkpoint (the file does not begin with the checkpoint magic)", path.display())]
    NotACheckpoint { path: PathBuf },
    #[error(
        "{}: checkpoint format version {found}, but this rocjitsu reads version {supported} only (restore it with the rocjitsu that wrote it)",
        path.display()
    )]
    Version {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("{}: truncated or corrupt: {what}", path.display())]
    Corrupt { path: PathBuf, what: String },
    #[error("{}: metadata: {what}", path.display())]
    Metadata { path: PathBuf, what: String },
    #[error("{}: {what} differs: the checkpoint has {file}, this daemon runs {ours} (restore with the configuration it was taken with)", path.display())]
    Mismatch {
        path: PathBuf,
        what: String,
        file: String,
        ours: String,
    },
    /// State a checkpoint does not hold (yet), or that cannot be restored.
    #[error("{0}")]
    Unsupported(String),
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of a hex string (None if it is not one).
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The configuration's identity in a checkpoint: SHA-256 of its JSON.
pub fn config_sha256(config: &rocjitsu_config::GpuConfig) -> String {
    sha256_hex(serde_json::to_string(config).unwrap_or_default().as_bytes())
}

/// Each GPU's gfx target.
pub fn targets(config: &rocjitsu_config::GpuConfig) -> Vec<String> {
    config
        .gpus
        .iter()
        .map(|g| g.gfx_target.to_string())
        .collect()
}

impl Checkpoint {
    /// The header and metadata (the payload follows them).
    fn head(&self) -> Vec<u8> {
        let meta = serde_json::to_vec_pretty(&self.meta).unwrap_or_default();
        let mut out = Vec::with_capacity(HEADER_BYTES as usize + meta.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&HEADER_BYTES.to_le_bytes());
        out.extend_from_slice(&(meta.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&Sha256::digest(&meta));
        out.extend_from_slice(&meta);
        out
    }

    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.head();
        out.extend_from_slice(&self.payload);
        out
    }

    /// Writes the file atomically (a temporary file beside it, renamed).
    pub fn write(&self, path: &Path) -> Result<(), CheckpointError> {
        use std::io::Write;
        let io = |source| CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        };
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let written = std::fs::File::create(&tmp).and_then(|mut f| {
            f.write_all(&self.head())?;
            f.write_all(&self.payload)?;
            f.sync_all()
        });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }

    /// Reads and checks the file at `path` against what the reader runs.
    pub fn read(path: &Path, expect: &Expect) -> Result<Checkpoint, CheckpointError> {
        let bytes = std::fs::read(path).map_err(|source| CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Checkpoint::decode(path, &bytes, expect)
    }

    /// [`Checkpoint::read`] of bytes (`path` names them in errors).
    pub fn decode(path: &Path, b: &[u8], expect: &Expect) -> Result<Checkpoint, CheckpointError> {
        let path = path.to_path_buf();
        let corrupt = |what: String| CheckpointError::Corrupt {
            path: path.clone(),
            what,
        };
        if b.len() < 8 || b[..8] != MAGIC {
            return Err(CheckpointError::NotACheckpoint { path });
        }
        if b.len() < HEADER_BYTES as usize {
            return Err(corrupt(format!(
                "the header is {HEADER_BYTES} bytes, the file {}",
                b.len()
            )));
        }
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| u64::from_le_bytes(std::array::from_fn(|i| b[o + i]));
        let version = u32_at(8);
        if version != VERSION {
            return Err(CheckpointError::Version {
                path,
                found: version,
                supported: VERSION,
            });
        }
        if u32_at(12) != HEADER_BYTES {
            return Err(corrupt(format!(
                "header size {} (version {VERSION} has {HEADER_BYTES})",
                u32_at(12)
            )));
        }
        let (m, p) = (u64_at(16), u64_at(24));
        let want = u64::from(HEADER_BYTES)
            .checked_add(m)
            .and_then(|x| x.checked_add(p));
        if want != Some(b.len() as u64) {
            return Err(corrupt(format!(
                "the header announces {m} bytes of metadata and {p} of payload after {HEADER_BYTES}, the file has {} bytes",
                b.len()
            )));
        }
        let h = HEADER_BYTES as usize;
        let meta_bytes = &b[h..h + m as usize];
        if Sha256::digest(meta_bytes).as_slice() != &b[32..64] {
            return Err(corrupt(
                "the metadata's SHA-256 does not match the header's".into(),
            ));
        }
        let meta: Meta =
            serde_json::from_slice(meta_bytes).map_err(|e| CheckpointError::Metadata {
                path: path.clone(),
                what: e.to_string(),
            })?;
        let bad_meta = |what: String| CheckpointError::Metadata {
            path: path.clone(),
            what,
        };
        if meta.format != FORMAT {
            return Err(bad_meta(format!(
                "format is `{}`, not `{FORMAT}`",
                meta.format
            )));
        }
        if meta.version != version {
            return Err(bad_meta(format!(
                "version {} differs from the header's {version}",
                meta.version
            )));
        }
        let payload = b[h + m as usize..].to_vec();
        for (ci, c) in meta.clients.iter().enumerate() {
            for (ai, a) in c.memory.allocations.iter().enumerate() {
                let Some(blob) = &a.contents else { continue };
                let at = format!(
                    "clients[{ci}].memory.allocations[{ai}] (allocation {} at 0x{:x})",
                    a.id, a.va
                );
                let end = blob.offset.checked_add(blob.len);
                if end.is_none_or(|e| e > payload.len() as u64) || blob.len != a.size {
                    return Err(corrupt(format!(
                        "{at}: contents at payload offset {} of {} bytes lie outside the payload of {} bytes or differ from its size {}",
                        blob.offset,
                        blob.len,
                        payload.len(),
                        a.size
                    )));
                }
                let bytes = &payload[blob.offset as usize..(blob.offset + blob.len) as usize];
                if sha256_hex(bytes) != blob.sha256 {
                    return Err(corrupt(format!(
                        "{at}: the contents' SHA-256 does not match the metadata's"
                    )));
                }
            }
        }
        let mismatch = |what: &str, file: String, ours: String| CheckpointError::Mismatch {
            path: path.clone(),
            what: what.into(),
            file,
            ours,
        };
        if meta.targets != expect.targets {
            return Err(mismatch(
                "the GPU targets",
                meta.targets.join(", "),
                expect.targets.join(", "),
            ));
        }
        if meta.config_sha256 != expect.config_sha256 {
            return Err(mismatch(
                "the GPU configuration (SHA-256 of its JSON)",
                meta.config_sha256.clone(),
                expect.config_sha256.clone(),
            ));
        }
        Ok(Checkpoint { meta, payload })
    }

    /// The bytes of an allocation's contents.
    pub fn contents(&self, blob: &Blob) -> &[u8] {
        &self.payload[blob.offset as usize..(blob.offset + blob.len) as usize]
    }
}

/// Collects the payload while a checkpoint is written.
#[derive(Default)]
pub struct PayloadWriter {
    pub bytes: Vec<u8>,
}

impl PayloadWriter {
    /// Appends `data`, returning where it is.
    pub fn add(&mut self, data: &[u8]) -> Blob {
        let offset = self.bytes.len() as u64;
        self.bytes.extend_from_slice(data);
        Blob {
            offset,
            len: data.len() as u64,
            sha256: sha256_hex(data),
        }
    }
}

#[cfg(test)]
mod tests;
