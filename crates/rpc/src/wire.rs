//! The wire protocol between a client's preload library and the daemon.
//!
//! Every message is a fixed 16-byte [`Header`] followed by `payload_len`
//! bytes of an opcode-specific payload. All integers are little-endian;
//! byte strings are a `u32` length and the bytes. Nothing in a message is a
//! pointer the receiver follows: a client's ioctl carries copies of the
//! memory ranges its argument points at ([`Ioctl::buffers`]), keyed by the
//! client's addresses, and gets back the ranges the driver wrote.
//!
//! Decoding checks every length against the payload and against fixed
//! limits, and rejects trailing bytes, so a malformed or hostile message is
//! an error value, never a panic or an oversized allocation.

#![forbid(unsafe_code)]

use thiserror::Error;

/// The protocol version; a handshake with another one is refused.
pub const VERSION: u32 = 2;

/// Header size in bytes.
pub const HEADER_LEN: usize = 16;

/// The largest payload either side accepts.
pub const MAX_PAYLOAD: u32 = 4 << 20;

/// Most file descriptors one message carries.
pub const MAX_FDS: usize = 4;

/// Longest ioctl argument structure (`_IOC_SIZE` is 14 bits).
pub const MAX_ARG: usize = 1 << 14;

/// Most memory ranges one ioctl carries.
pub const MAX_BUFFERS: usize = 8;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum Opcode {
    /// Client: protocol version, pid, and (for a further connection of the
    /// same process) the process's token. Daemon: version, token, the GPU
    /// configuration and the sysfs tree's path.
    Handshake = 1,
    /// The client process is done with the GPU: the daemon releases
    /// everything it owned.
    Close = 2,
    /// What an mmap of a device file at an offset maps: the daemon answers
    /// with the backing memfd (SCM_RIGHTS) and the offset in it.
    Mmap = 3,
    /// An ioctl on a device file, with the memory its argument points at.
    Ioctl = 5,
    /// Instead of a handshake: the daemon answers with its accounting
    /// (clients, allocations, queues, VRAM in use) as JSON.
    Status = 6,
    /// Instead of a handshake: the daemon stops every queue between two
    /// packets, holds every client's further calls, writes a checkpoint of
    /// the GPU state to the path the payload names, and answers with a
    /// summary (JSON). It then stays frozen: what it holds is what the
    /// file says, until it is killed and restored from the file.
    Checkpoint = 7,
    /// After the handshake of a process a restored daemon waits for (its
    /// token): mappings of the daemon's memfds the process still has, as
    /// (start, length, file offset) with the memfds attached (SCM_RIGHTS;
    /// at most [`MAX_FDS`] a message).
    Adopt = 8,
    /// After the adopts: the daemon restores the process (adopting the
    /// memory offered) and answers with a summary (JSON); from then on the
    /// connection serves the process as any.
    Resume = 9,
}

impl Opcode {
    pub fn from_u16(v: u16) -> Option<Opcode> {
        Some(match v {
            1 => Opcode::Handshake,
            2 => Opcode::Close,
            3 => Opcode::Mmap,
            5 => Opcode::Ioctl,
            6 => Opcode::Status,
            7 => Opcode::Checkpoint,
            8 => Opcode::Adopt,
            9 => Opcode::Resume,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WireError {
    #[error("message truncated: {0}")]
    Truncated(&'static str),
    #[error("{what} of {len} exceeds the limit of {max}")]
    TooLong {
        what: &'static str,
        len: u64,
        max: u64,
    },
    #[error("unknown opcode {0}")]
    Opcode(u16),
    #[error("{0} trailing bytes after the payload")]
    Trailing(usize),
    #[error("invalid field: {0}")]
    Invalid(&'static str),
}

/// The fixed header of every message.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub opcode: u16,
    /// Reserved, 0.
    pub reserved: u16,
    /// Chosen by the client; the reply carries the same id.
    pub request_id: u32,
    pub payload_len: u32,
    /// Replies: 0 or the operation's non-negative result, or a negative
    /// errno. Requests: 0.
    pub result: i32,
}

impl Header {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..2].copy_from_slice(&self.opcode.to_le_bytes());
        b[2..4].copy_from_slice(&self.reserved.to_le_bytes());
        b[4..8].copy_from_slice(&self.request_id.to_le_bytes());
        b[8..12].copy_from_slice(&self.payload_len.to_le_bytes());
        b[12..16].copy_from_slice(&self.result.to_le_bytes());
        b
    }

    /// Decodes and checks a header (known opcode, payload within limits).
    pub fn decode(b: &[u8; HEADER_LEN]) -> Result<Header, WireError> {
        let h = Header {
            opcode: u16::from_le_bytes([b[0], b[1]]),
            reserved: u16::from_le_bytes([b[2], b[3]]),
            request_id: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            payload_len: u32::from_le_bytes([b[8], b[9], b[10], b[11]]),
            result: i32::from_le_bytes([b[12], b[13], b[14], b[15]]),
        };
        if Opcode::from_u16(h.opcode).is_none() {
            return Err(WireError::Opcode(h.opcode));
        }
        if h.payload_len > MAX_PAYLOAD {
            return Err(WireError::TooLong {
                what: "payload",
                len: h.payload_len.into(),
                max: MAX_PAYLOAD.into(),
            });
        }
        Ok(h)
    }

    pub fn opcode(&self) -> Option<Opcode> {
        Opcode::from_u16(self.opcode)
    }
}

/// Appends little-endian fields.
#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u32(v.len() as u32);
        self.buf.extend_from_slice(v);
        self
    }
    pub fn raw(&mut self, v: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(v);
        self
    }
}

/// Reads little-endian fields with bounds checks.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or(WireError::Truncated(what))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8, WireError> {
        Ok(self.take(1, what)?[0])
    }
    pub fn u32(&mut self, what: &'static str) -> Result<u32, WireError> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    pub fn u64(&mut self, what: &'static str) -> Result<u64, WireError> {
        let s = self.take(8, what)?;
        Ok(u64::from_le_bytes(std::array::from_fn(|i| s[i])))
    }
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], WireError> {
        let s = self.take(N, what)?;
        Ok(std::array::from_fn(|i| s[i]))
    }
    /// A `u32` count of at most `max`.
    pub fn count(&mut self, what: &'static str, max: usize) -> Result<usize, WireError> {
        let n = self.u32(what)? as usize;
        if n > max {
            return Err(WireError::TooLong {
                what,
                len: n as u64,
                max: max as u64,
            });
        }
        Ok(n)
    }

    /// A length-prefixed byte string of at most `max` bytes.
    pub fn bytes(&mut self, what: &'static str, max: usize) -> Result<&'a [u8], WireError> {
        let n = self.u32(what)? as usize;
        if n > max {
            return Err(WireError::TooLong {
                what,
                len: n as u64,
                max: max as u64,
            });
        }
        self.take(n, what)
    }
    /// Checks that everything was read.
    pub fn finish(&self) -> Result<(), WireError> {
        match self.buf.len() - self.pos {
            0 => Ok(()),
            n => Err(WireError::Trailing(n)),
        }
    }
}

/// A device file named in a request: `/dev/kfd` or GPU `gpu`'s render node.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Device {
    Kfd,
    Render { gpu: u32, minor: u32 },
}

impl Device {
    fn encode(&self, w: &mut Writer) {
        match *self {
            Device::Kfd => w.u8(0).u32(0).u32(0),
            Device::Render { gpu, minor } => w.u8(1).u32(gpu).u32(minor),
        };
    }

    fn decode(r: &mut Reader) -> Result<Device, WireError> {
        let kind = r.u8("device kind")?;
        let gpu = r.u32("device gpu")?;
        let minor = r.u32("device minor")?;
        match kind {
            0 if gpu == 0 && minor == 0 => Ok(Device::Kfd),
            0 => Err(WireError::Invalid("/dev/kfd with a GPU index or minor")),
            1 => Ok(Device::Render { gpu, minor }),
            _ => Err(WireError::Invalid("device kind")),
        }
    }
}

/// HANDSHAKE request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    pub version: u32,
    /// The client's process id (the daemon checks it against the socket's
    /// peer credentials).
    pub pid: u32,
    /// Zero for a new process; the process's token for a further
    /// connection of the same process (one per thread).
    pub token: [u8; 16],
}

impl Hello {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.version).u32(self.pid).raw(&self.token);
        w.buf
    }
    pub fn decode(p: &[u8]) -> Result<Hello, WireError> {
        let mut r = Reader::new(p);
        let h = Hello {
            version: r.u32("version")?,
            pid: r.u32("pid")?,
            token: r.array("token")?,
        };
        r.finish()?;
        Ok(h)
    }
}

/// Most bytes of the configuration JSON and of paths in a handshake reply.
pub const MAX_CONFIG: usize = 1 << 20;
pub const MAX_PATH: usize = 4096;

/// HANDSHAKE reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Welcome {
    pub version: u32,
    pub token: [u8; 16],
    /// The GPU configuration (JSON) the daemon emulates.
    pub config: String,
    /// Where the daemon wrote the KFD sysfs tree.
    pub sysfs_root: String,
}

impl Welcome {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.version)
            .raw(&self.token)
            .bytes(self.config.as_bytes())
            .bytes(self.sysfs_root.as_bytes());
        w.buf
    }
    pub fn decode(p: &[u8]) -> Result<Welcome, WireError> {
        let mut r = Reader::new(p);
        let version = r.u32("version")?;
        let token = r.array("token")?;
        let config = std::str::from_utf8(r.bytes("config", MAX_CONFIG)?)
            .map_err(|_| WireError::Invalid("config is not UTF-8"))?
            .to_string();
        let sysfs_root = std::str::from_utf8(r.bytes("sysfs root", MAX_PATH)?)
            .map_err(|_| WireError::Invalid("sysfs root is not UTF-8"))?
            .to_string();
        r.finish()?;
        Ok(Welcome {
            version,
            token,
            config,
            sysfs_root,
        })
    }
}

/// IOCTL request, and (with the driver's results) its reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ioctl {
    pub device: Device,
    pub request: u64,
    /// The argument structure (`_IOC_SIZE(request)` bytes).
    pub arg: Vec<u8>,
    /// Copies of the client memory the argument points at, by client
    /// address. In a reply: the ranges the driver wrote.
    pub buffers: Vec<(u64, Vec<u8>)>,
    /// File descriptors attached. Reply: a userptr allocation's memfd.
    /// Request: at most one, the memory a userptr allocation is to use
    /// (a sealed memfd the client already maps over the range).
    pub fds: u32,
    /// Request only: where in the attached descriptor the range starts.
    pub fd_offset: u64,
    /// Reply only: reports for the client's stderr (GPU faults of the
    /// client's queues since its last call).
    pub notes: Vec<String>,
}

/// Most notes in one reply, and bytes per note.
pub const MAX_NOTES: usize = 16;
pub const MAX_NOTE: usize = 64 << 10;

impl Ioctl {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        self.device.encode(&mut w);
        w.u64(self.request).bytes(&self.arg);
        w.u32(self.buffers.len() as u32);
        for (addr, data) in &self.buffers {
            w.u64(*addr).bytes(data);
        }
        w.u32(self.fds);
        w.u64(self.fd_offset);
        w.u32(self.notes.len() as u32);
        for n in &self.notes {
            w.bytes(n.as_bytes());
        }
        w.buf
    }

    pub fn decode(p: &[u8]) -> Result<Ioctl, WireError> {
        let mut r = Reader::new(p);
        let device = Device::decode(&mut r)?;
        let request = r.u64("request")?;
        let arg = r.bytes("argument", MAX_ARG)?.to_vec();
        let n = r.count("buffer count", MAX_BUFFERS)?;
        let mut buffers = Vec::with_capacity(n);
        for _ in 0..n {
            let addr = r.u64("buffer address")?;
            let data = r.bytes("buffer", MAX_PAYLOAD as usize)?.to_vec();
            if addr.checked_add(data.len() as u64).is_none() {
                return Err(WireError::Invalid("buffer wraps the address space"));
            }
            buffers.push((addr, data));
        }
        let fds = r.count("fd count", MAX_FDS)? as u32;
        let fd_offset = r.u64("descriptor offset")?;
        let n = r.count("note count", MAX_NOTES)?;
        let mut notes = Vec::with_capacity(n);
        for _ in 0..n {
            let b = r.bytes("note", MAX_NOTE)?;
            let n =
                std::str::from_utf8(b).map_err(|_| WireError::Invalid("a note is not UTF-8"))?;
            notes.push(n.to_string());
        }
        r.finish()?;
        Ok(Ioctl {
            device,
            request,
            arg,
            buffers,
            fds,
            fd_offset,
            notes,
        })
    }
}

/// MMAP request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Mmap {
    pub device: Device,
    pub offset: u64,
    pub len: u64,
}

impl Mmap {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        self.device.encode(&mut w);
        w.u64(self.offset).u64(self.len);
        w.buf
    }
    pub fn decode(p: &[u8]) -> Result<Mmap, WireError> {
        let mut r = Reader::new(p);
        let m = Mmap {
            device: Device::decode(&mut r)?,
            offset: r.u64("offset")?,
            len: r.u64("length")?,
        };
        r.finish()?;
        Ok(m)
    }
}

/// ADOPT request: mappings of the daemon's memfds, each (start address,
/// length, offset in the memfd), one memfd attached per entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adopt {
    pub maps: Vec<(u64, u64, u64)>,
}

impl Adopt {
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.maps.len() as u32);
        for &(start, len, off) in &self.maps {
            w.u64(start).u64(len).u64(off);
        }
        w.buf
    }
    pub fn decode(p: &[u8]) -> Result<Adopt, WireError> {
        let mut r = Reader::new(p);
        let n = r.count("mappings", MAX_FDS)?;
        let mut maps = Vec::with_capacity(n);
        for _ in 0..n {
            maps.push((r.u64("start")?, r.u64("length")?, r.u64("offset")?));
        }
        r.finish()?;
        Ok(Adopt { maps })
    }
}

/// MMAP reply: the offset in the memfd that comes with it.
pub fn encode_u64(v: u64) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

pub fn decode_u64(p: &[u8]) -> Result<u64, WireError> {
    let mut r = Reader::new(p);
    let v = r.u64("value")?;
    r.finish()?;
    Ok(v)
}

/// Decodes one request payload of `opcode` (used by the daemon and the fuzz
/// target): every well-formed request, or the first problem found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    Handshake(Hello),
    Close,
    Mmap(Mmap),
    Ioctl(Ioctl),
    Status,
    /// CHECKPOINT: the file to write.
    Checkpoint(String),
    Adopt(Adopt),
    Resume,
}

impl Request {
    pub fn decode(header: &Header, payload: &[u8]) -> Result<Request, WireError> {
        if payload.len() != header.payload_len as usize {
            return Err(WireError::Truncated("payload"));
        }
        match header.opcode() {
            Some(Opcode::Handshake) => Hello::decode(payload).map(Request::Handshake),
            Some(Opcode::Close) => {
                Reader::new(payload).finish()?;
                Ok(Request::Close)
            }
            Some(Opcode::Mmap) => Mmap::decode(payload).map(Request::Mmap),
            Some(Opcode::Ioctl) => Ioctl::decode(payload).map(Request::Ioctl),
            Some(Opcode::Status) => {
                Reader::new(payload).finish()?;
                Ok(Request::Status)
            }
            Some(Opcode::Checkpoint) => {
                let mut r = Reader::new(payload);
                let path = r.bytes("checkpoint path", 4096)?;
                r.finish()?;
                String::from_utf8(path.to_vec())
                    .map(Request::Checkpoint)
                    .map_err(|_| WireError::Invalid("checkpoint path"))
            }
            Some(Opcode::Adopt) => Adopt::decode(payload).map(Request::Adopt),
            Some(Opcode::Resume) => {
                Reader::new(payload).finish()?;
                Ok(Request::Resume)
            }
            None => Err(WireError::Opcode(header.opcode)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let h = Header {
            opcode: Opcode::Ioctl as u16,
            reserved: 0,
            request_id: 7,
            payload_len: 99,
            result: -22,
        };
        assert_eq!(Header::decode(&h.encode()).unwrap(), h);
        let io = Ioctl {
            device: Device::Render { gpu: 1, minor: 129 },
            request: 0xc018_4b0c,
            arg: vec![1, 2, 3],
            buffers: vec![(0x7000_0000, vec![9; 48]), (0x10, vec![])],
            fds: 1,
            fd_offset: 0x2000,
            notes: vec!["a fault".into()],
        };
        assert_eq!(Ioctl::decode(&io.encode()).unwrap(), io);
        let w = Welcome {
            version: VERSION,
            token: [5; 16],
            config: "{}".into(),
            sysfs_root: "/tmp/x".into(),
        };
        assert_eq!(Welcome::decode(&w.encode()).unwrap(), w);
        let m = Mmap {
            device: Device::Kfd,
            offset: 3 << 62,
            len: 8192,
        };
        assert_eq!(Mmap::decode(&m.encode()).unwrap(), m);
    }

    #[test]
    fn malformed_messages_are_errors() {
        let mut h = Header {
            opcode: 99,
            reserved: 0,
            request_id: 1,
            payload_len: 0,
            result: 0,
        };
        assert_eq!(Header::decode(&h.encode()), Err(WireError::Opcode(99)));
        h.opcode = Opcode::Ioctl as u16;
        h.payload_len = MAX_PAYLOAD + 1;
        assert!(matches!(
            Header::decode(&h.encode()),
            Err(WireError::TooLong { .. })
        ));
        let io = Ioctl {
            device: Device::Kfd,
            request: 1,
            arg: vec![0; 8],
            buffers: vec![],
            fds: 0,
            fd_offset: 0,
            notes: vec![],
        }
        .encode();
        // Every truncation fails cleanly; so does a trailing byte.
        for n in 0..io.len() {
            assert!(Ioctl::decode(&io[..n]).is_err(), "prefix of {n} bytes");
        }
        let mut long = io.clone();
        long.push(0);
        assert_eq!(Ioctl::decode(&long), Err(WireError::Trailing(1)));
        // A length field that claims more than the payload holds.
        let mut lying = io.clone();
        lying[17..21].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Ioctl::decode(&lying).is_err());
        // A buffer that wraps the address space.
        let wrap = Ioctl {
            device: Device::Kfd,
            request: 1,
            arg: vec![],
            buffers: vec![(u64::MAX - 1, vec![0; 4])],
            fds: 0,
            fd_offset: 0,
            notes: vec![],
        };
        assert_eq!(
            Ioctl::decode(&wrap.encode()),
            Err(WireError::Invalid("buffer wraps the address space"))
        );
        assert!(Hello::decode(&[0; 23]).is_err());
        assert!(Device::decode(&mut Reader::new(&[7, 0, 0, 0, 0, 0, 0, 0, 0])).is_err());
    }

    /// The fuzz target's property without the fuzzer: seeded random bytes
    /// and every single-byte mutation and truncation of valid messages
    /// decode to an error or to a value that re-encodes to the same bytes,
    /// never a panic.
    #[test]
    fn hostile_bytes_never_panic() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let valid = [
            Ioctl {
                device: Device::Render { gpu: 0, minor: 128 },
                request: 0xc018_4b0c,
                arg: vec![7; 24],
                buffers: vec![(0x7000_0000, vec![1; 96])],
                fds: 0,
                fd_offset: 0,
                notes: vec!["x".into()],
            }
            .encode(),
            Welcome {
                version: VERSION,
                token: [1; 16],
                config: "{}".into(),
                sysfs_root: "/tmp".into(),
            }
            .encode(),
            Hello {
                version: VERSION,
                pid: 1,
                token: [0; 16],
            }
            .encode(),
        ];
        let check = |p: &[u8]| {
            for op in 0..8u16 {
                let h = Header {
                    opcode: op,
                    reserved: 0,
                    request_id: 0,
                    payload_len: p.len() as u32,
                    result: 0,
                };
                if let Ok(Request::Ioctl(io)) = Request::decode(&h, p) {
                    assert_eq!(io.encode(), p);
                }
            }
            if let Ok(w) = Welcome::decode(p) {
                assert_eq!(w.encode(), p);
            }
            let _ = Hello::decode(p);
            let _ = Mmap::decode(p);
        };
        for v in &valid {
            for i in 0..v.len() {
                check(&v[..i]);
                for b in [0u8, 1, 0x7f, 0x80, 0xff] {
                    let mut m = v.clone();
                    m[i] = b;
                    check(&m);
                }
            }
        }
        for _ in 0..20_000 {
            let n = (next() % 200) as usize;
            let bytes: Vec<u8> = (0..n).map(|_| next() as u8).collect();
            check(&bytes);
            let mut hb = [0u8; HEADER_LEN];
            for b in hb.iter_mut() {
                *b = next() as u8;
            }
            let _ = Header::decode(&hb);
        }
    }
}
