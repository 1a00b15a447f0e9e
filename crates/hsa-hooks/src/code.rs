//! Code objects on the guest agent: the readers the application creates,
//! the translation of a guest code object to the host ISA at load time, and
//! the host readers and bytes each executable keeps alive.
//!
//! A load on the guest agent reads the reader's bytes (the application's
//! memory, or the bytes this library captured from a file), translates them
//! ([`crate::translate`]), makes a memory reader over the host code object
//! and loads it on the host agent. A translation failure fails the load
//! with `HSA_STATUS_ERROR_INVALID_CODE_OBJECT` and prints the translator's
//! message (kernel, PC, instruction) on stderr.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::abi::*;
use crate::hooks::core as core_hooks;
use crate::map::Pair;

enum Source {
    /// The application's memory, valid while the reader lives (the API's contract).
    Memory { ptr: usize, len: usize },
    /// Bytes read from a file by this library.
    Captured(Arc<[u8]>),
}

/// What a loaded executable keeps: our host readers and the bytes under them.
struct Held {
    reader: Option<Reader>,
    bytes: Arc<[u8]>,
}

#[derive(Default)]
struct Code {
    readers: HashMap<u64, Source>,
    executables: HashMap<u64, Vec<Held>>,
    translated: u64,
    failed: u64,
    bytes_in: u64,
    seconds: f64,
}

static CODE: Mutex<Option<Code>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Code) -> R) -> R {
    let mut g = CODE.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(Code::default))
}

pub fn remember_memory_reader(reader: Reader, ptr: *const c_void, len: usize) {
    with(|c| {
        c.readers.insert(
            reader.handle,
            Source::Memory {
                ptr: ptr as usize,
                len,
            },
        )
    });
}

pub fn forget_reader(reader: Reader) {
    with(|c| c.readers.remove(&reader.handle));
}

/// Reads `size` bytes at `offset` of `file` (0: to the end), as ROCr's file
/// readers do, and returns them or the status ROCr would.
fn capture(file: i32, offset: usize, size: usize) -> Result<Vec<u8>, (Status, String)> {
    if file < 0 {
        return Err((
            HSA_STATUS_ERROR_INVALID_ARGUMENT,
            format!("file descriptor {file} is not open"),
        ));
    }
    // SAFETY: fstat into a zeroed stat buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out buffer.
    if unsafe { libc::fstat(file, &mut st) } != 0 {
        return Err((
            HSA_STATUS_ERROR_INVALID_FILE,
            format!(
                "fstat of descriptor {file}: {}",
                std::io::Error::last_os_error()
            ),
        ));
    }
    let file_size = st.st_size.max(0) as usize;
    if file_size <= offset {
        return Err((
            HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
            format!("descriptor {file}: offset {offset} is past the file's {file_size} bytes"),
        ));
    }
    let size = if size == 0 { file_size - offset } else { size };
    let mut buf = vec![0u8; size];
    let mut done = 0;
    while done < size {
        // SAFETY: reads into the owned buffer's remaining bytes.
        let n = unsafe {
            libc::pread(
                file,
                buf[done..].as_mut_ptr().cast(),
                size - done,
                (offset + done) as libc::off_t,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err((
                HSA_STATUS_ERROR_INVALID_FILE,
                format!("reading descriptor {file}: {e}"),
            ));
        }
        if n == 0 {
            return Err((
                HSA_STATUS_ERROR_INVALID_FILE,
                format!(
                    "descriptor {file}: file ends at {} bytes, {size} asked from offset {offset}",
                    offset + done
                ),
            ));
        }
        done += n as usize;
    }
    Ok(buf)
}

/// A file-backed reader: the bytes are captured and the application gets a
/// memory reader over them, so a guest load can translate them.
///
/// # Safety
/// `reader` is null or writable.
pub unsafe fn create_from_file(
    file: i32,
    offset: usize,
    size: usize,
    reader: *mut Reader,
) -> Status {
    if reader.is_null() {
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    let bytes: Arc<[u8]> = match capture(file, offset, size) {
        Ok(b) => b.into(),
        Err((s, msg)) => {
            crate::log!(Warn, "code object reader from file: {msg}");
            return s;
        }
    };
    let mut r = Reader::default();
    // SAFETY: ROCr's entry over bytes that this library keeps alive with the reader.
    let s = unsafe {
        core_hooks::hsa_code_object_reader_create_from_memory::orig()(
            bytes.as_ptr().cast(),
            bytes.len(),
            &mut r,
        )
    };
    if s != HSA_STATUS_SUCCESS {
        return s;
    }
    crate::log!(
        Debug,
        "reader {:#x}: captured {} bytes of descriptor {file} at offset {offset}",
        r.handle,
        bytes.len()
    );
    with(|c| c.readers.insert(r.handle, Source::Captured(bytes)));
    // SAFETY: `reader` is the caller's non-null out pointer.
    unsafe { *reader = r };
    HSA_STATUS_SUCCESS
}

/// The reader's bytes, copied out (the application's memory may go away
/// once the reader is destroyed; the host code object is our own copy).
fn reader_bytes(reader: Reader) -> Option<Arc<[u8]>> {
    with(|c| match c.readers.get(&reader.handle)? {
        // SAFETY: the application keeps a memory reader's bytes valid while
        // the reader lives (hsa_code_object_reader_create_from_memory).
        Source::Memory { ptr, len } => Some(Arc::from(unsafe {
            std::slice::from_raw_parts(*ptr as *const u8, *len)
        })),
        Source::Captured(b) => Some(b.clone()),
    })
}

/// `hsa_executable_load_agent_code_object` on the guest agent.
///
/// # Safety
/// `options` and `loaded` are the application's arguments (null or valid).
pub unsafe fn load_guest(
    pair: Pair,
    executable: Executable,
    reader: Reader,
    options: *const c_char,
    loaded: *mut LoadedCodeObject,
) -> Status {
    let Some(guest_elf) = reader_bytes(reader) else {
        crate::log::write_line(
            crate::log::Level::Error,
            format_args!(
                "hsa_executable_load_agent_code_object: reader {:#x} is unknown to the guest-mode hooks (not made by hsa_code_object_reader_create_from_memory/_from_file in this process)",
                reader.handle
            ),
        );
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
    };
    // SAFETY: the caller's arguments.
    unsafe { load_translated(pair.host, executable, &guest_elf, options, loaded) }
}

/// The ELF target (EF_AMDGPU_MACH's processor name) of an AMDGPU code
/// object, or `None` when `elf` is not one.
pub fn elf_target(elf: &[u8]) -> Option<&'static str> {
    // ELF64 magic, EM_AMDGPU (224) at e_machine, e_flags at offset 48.
    if elf.len() < 52 || &elf[..4] != b"\x7fELF" || elf[4] != 2 {
        return None;
    }
    if u16::from_le_bytes([elf[18], elf[19]]) != 224 {
        return None;
    }
    let flags = u32::from_le_bytes([elf[48], elf[49], elf[50], elf[51]]);
    rocjitsu_code::elf::mach_name(flags & 0xff)
}

/// The ISA name of an agent (`gfx942`), from the runtime's own answer.
fn agent_isa(agent: Agent) -> String {
    let mut name = [0u8; 64];
    // SAFETY: a 64-byte buffer for HSA_AGENT_INFO_NAME.
    unsafe {
        core_hooks::original_agent_info(agent, HSA_AGENT_INFO_NAME, name.as_mut_ptr().cast())
    };
    let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    String::from_utf8_lossy(&name[..len]).into_owned()
}

/// `hsa_executable_load_agent_code_object` in hotswap mode: a `guest_isa`
/// code object loaded on a `host_isa` agent is translated and loaded on
/// that agent; every other load passes through.
///
/// # Safety
/// The application's arguments (null or valid).
pub unsafe fn load_hotswap(
    executable: Executable,
    agent: Agent,
    reader: Reader,
    options: *const c_char,
    loaded: *mut LoadedCodeObject,
) -> Status {
    let cfg = &crate::state().config.selection;
    let bytes = reader_bytes(reader);
    let target = bytes.as_deref().and_then(elf_target);
    if target == Some(cfg.guest_isa.as_str()) {
        let isa = agent_isa(agent);
        if isa == cfg.host_isa {
            crate::log!(
                Info,
                "hotswap: a {} code object loaded on the {isa} agent {:#x}: translating",
                cfg.guest_isa,
                agent.handle
            );
            let elf = bytes.expect("target implies bytes");
            // SAFETY: the caller's arguments.
            return unsafe { load_translated(agent, executable, &elf, options, loaded) };
        }
        crate::log!(
            Debug,
            "hotswap: a {} code object on a {isa} agent (not {}): passed through",
            cfg.guest_isa,
            cfg.host_isa
        );
    }
    // SAFETY: forwards the caller's arguments to ROCr.
    let s = unsafe {
        core_hooks::hsa_executable_load_agent_code_object::orig()(
            executable, agent, reader, options, loaded,
        )
    };
    if s == HSA_STATUS_SUCCESS {
        loaded_elsewhere(executable, reader);
    }
    s
}

/// Translates `guest_elf` and loads the host code object on `host`.
///
/// # Safety
/// `options` and `loaded` are the application's arguments (null or valid).
unsafe fn load_translated(
    host: Agent,
    executable: Executable,
    guest_elf: &[u8],
    options: *const c_char,
    loaded: *mut LoadedCodeObject,
) -> Status {
    let cfg = &crate::state().config.selection;
    let start = Instant::now();
    let result = crate::translate::translate(guest_elf, &cfg.guest_isa, &cfg.host_isa);
    let secs = start.elapsed().as_secs_f64();
    let host_elf: Arc<[u8]> = match result {
        Ok(t) => {
            crate::log!(
                Info,
                "translated a {} code object ({} bytes) to {} ({} bytes) in {:.3} ms{}",
                cfg.guest_isa,
                guest_elf.len(),
                cfg.host_isa,
                t.elf.len(),
                secs * 1e3,
                if t.report.is_empty() {
                    String::new()
                } else {
                    format!(": {}", t.report)
                }
            );
            with(|c| {
                c.translated += 1;
                c.bytes_in += guest_elf.len() as u64;
                c.seconds += secs;
            });
            t.elf.into()
        }
        Err(msg) => {
            with(|c| c.failed += 1);
            crate::log::write_line(
                crate::log::Level::Error,
                format_args!(
                    "cannot load a {} code object ({} bytes) on the {} host: {msg}",
                    cfg.guest_isa,
                    guest_elf.len(),
                    cfg.host_isa
                ),
            );
            return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
        }
    };
    let mut host_reader = Reader::default();
    // SAFETY: ROCr's entry over bytes kept alive with the executable.
    let s = unsafe {
        core_hooks::hsa_code_object_reader_create_from_memory::orig()(
            host_elf.as_ptr().cast(),
            host_elf.len(),
            &mut host_reader,
        )
    };
    if s != HSA_STATUS_SUCCESS {
        return s;
    }
    // SAFETY: ROCr's entry with the host agent and our reader; the caller's options and out pointer.
    let s = unsafe {
        core_hooks::hsa_executable_load_agent_code_object::orig()(
            executable,
            host,
            host_reader,
            options,
            loaded,
        )
    };
    if s != HSA_STATUS_SUCCESS {
        crate::log::write_line(
            crate::log::Level::Error,
            format_args!(
                "the runtime rejected the translated {} code object on the host agent: status {s:#x}",
                cfg.host_isa
            ),
        );
        // SAFETY: our own reader, used by nothing else.
        unsafe { core_hooks::hsa_code_object_reader_destroy::orig()(host_reader) };
        return s;
    }
    with(|c| {
        c.executables
            .entry(executable.handle)
            .or_default()
            .push(Held {
                reader: Some(host_reader),
                bytes: host_elf,
            })
    });
    HSA_STATUS_SUCCESS
}

/// A load on another agent from a captured reader keeps the bytes alive with the executable.
pub fn loaded_elsewhere(executable: Executable, reader: Reader) {
    with(|c| {
        if let Some(Source::Captured(b)) = c.readers.get(&reader.handle) {
            let bytes = b.clone();
            c.executables
                .entry(executable.handle)
                .or_default()
                .push(Held {
                    reader: None,
                    bytes,
                });
        }
    });
}

pub fn forget_executable(executable: Executable) {
    let held = with(|c| c.executables.remove(&executable.handle)).unwrap_or_default();
    for h in held {
        if let Some(r) = h.reader {
            // SAFETY: our own reader; its executable is gone.
            unsafe { core_hooks::hsa_code_object_reader_destroy::orig()(r) };
        }
        drop(h.bytes);
    }
}

pub fn report_totals() {
    with(|c| {
        crate::log!(
            Info,
            "code objects translated: {} ({} bytes in {:.3} ms), failed: {}",
            c.translated,
            c.bytes_in,
            c.seconds * 1e3,
            c.failed
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn capture_follows_the_runtime_file_semantics() {
        let mut f = tempfile();
        f.write_all(b"0123456789").unwrap();
        let fd = f.as_raw_fd();
        assert_eq!(capture(fd, 0, 0).unwrap(), b"0123456789");
        assert_eq!(capture(fd, 3, 4).unwrap(), b"3456");
        assert_eq!(capture(fd, 3, 0).unwrap(), b"3456789");
        assert_eq!(
            capture(fd, 10, 0).unwrap_err().0,
            HSA_STATUS_ERROR_INVALID_CODE_OBJECT
        );
        assert_eq!(
            capture(fd, 8, 5).unwrap_err().0,
            HSA_STATUS_ERROR_INVALID_FILE
        );
        assert_eq!(
            capture(-1, 0, 0).unwrap_err().0,
            HSA_STATUS_ERROR_INVALID_ARGUMENT
        );
    }

    fn tempfile() -> std::fs::File {
        let p = std::env::temp_dir().join(format!("rocjitsu-hooks-capture-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&p)
            .unwrap();
        std::fs::remove_file(&p).unwrap();
        f
    }
}
