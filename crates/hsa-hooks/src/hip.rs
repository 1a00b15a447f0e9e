//! Hotswap at the HIP level: `hipModuleLoad`, `hipModuleLoadData` and
//! `hipModuleLoadDataEx`, exported by this library for when it is also in
//! `LD_PRELOAD` (mirage's `hotswap` backend puts it there).
//!
//! HIP checks a module's target itself before it reaches the HSA loader: a
//! gfx950-only code object (a raw ELF, or an offload bundle without a
//! host entry) is refused on a gfx942 with `hipErrorNoBinaryForGpu`. So in
//! hotswap mode (`ROCJITSU_DBT_MODE=hotswap`, `ROCJITSU_DBT_CONFIG`) these
//! wrappers look at the image: a `guest_isa` ELF, or a bundle whose only
//! AMDGPU entries are `guest_isa`, is translated to `host_isa` and handed to
//! the runtime's `hipModuleLoadData(Ex)` as a host ELF; anything else goes
//! to the runtime unchanged. Outside hotswap mode they only forward.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::{Mutex, OnceLock};

type HipError = c_int;
/// hipErrorInvalidImage.
const HIP_ERROR_INVALID_IMAGE: HipError = 200;
/// hipErrorFileNotFound.
const HIP_ERROR_FILE_NOT_FOUND: HipError = 301;
/// hipErrorNotFound (the runtime's entry is missing).
const HIP_ERROR_NOT_FOUND: HipError = 500;

const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";

/// (guest ISA, host ISA) when hotswap mode is on in this process.
fn hotswap() -> Option<&'static (String, String)> {
    static ON: OnceLock<Option<(String, String)>> = OnceLock::new();
    ON.get_or_init(|| {
        if crate::config::Mode::parse(
            std::env::var(rocjitsu_config::env::DBT_MODE)
                .ok()
                .as_deref(),
        )
        .ok()?
            != crate::config::Mode::Hotswap
        {
            return None;
        }
        let path = std::env::var(rocjitsu_config::env::DBT_CONFIG).ok()?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| eprintln!("rocjitsu hotswap: ROCJITSU_DBT_CONFIG={path}: {e}"))
            .ok()?;
        match crate::config::parse(&path, &text) {
            Ok(Some(c)) => Some((c.selection.guest_isa, c.selection.host_isa)),
            Ok(None) => None,
            Err(e) => {
                eprintln!("rocjitsu hotswap: {e}");
                None
            }
        }
    })
    .as_ref()
}

/// Host code objects handed to the runtime: kept for the process's life
/// (a module may refer to its image).
static KEPT: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

fn u16_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?) as u64)
}
fn u32_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?) as u64)
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// The size of an ELF64 image from its headers (section and program
/// headers, and every section's extent), reading only through `read`.
fn elf_size(read: &dyn Fn(usize, usize) -> Option<Vec<u8>>) -> Option<usize> {
    let h = read(0, 64)?;
    if &h[..4] != b"\x7fELF" || h[4] != 2 {
        return None;
    }
    let (phoff, shoff) = (u64_at(&h, 32)?, u64_at(&h, 40)?);
    let (phentsize, phnum) = (u16_at(&h, 54)?, u16_at(&h, 56)?);
    let (shentsize, shnum) = (u16_at(&h, 58)?, u16_at(&h, 60)?);
    let mut end = 64u64
        .max(phoff + phentsize * phnum)
        .max(shoff + shentsize * shnum);
    if shnum > 0 && shentsize >= 64 {
        let sh = read(shoff as usize, (shentsize * shnum) as usize)?;
        for i in 0..shnum as usize {
            let s = &sh[i * shentsize as usize..];
            // SHT_NOBITS (8) takes no file space.
            if u32_at(s, 4)? != 8 {
                end = end.max(u64_at(s, 24)? + u64_at(s, 32)?);
            }
        }
    }
    Some(end as usize)
}

/// The AMDGPU entries of an offload bundle: (target processor, bytes).
fn bundle_entries(b: &[u8]) -> Option<Vec<(String, &[u8])>> {
    if !b.starts_with(BUNDLE_MAGIC) {
        return None;
    }
    let n = u64_at(b, 24)? as usize;
    let mut at = 32;
    let mut out = vec![];
    for _ in 0..n {
        let (off, size, tlen) = (
            u64_at(b, at)? as usize,
            u64_at(b, at + 8)? as usize,
            u64_at(b, at + 16)? as usize,
        );
        let triple = std::str::from_utf8(b.get(at + 24..at + 24 + tlen)?).ok()?;
        at += 24 + tlen;
        // e.g. hipv4-amdgcn-amdhsa--gfx950:sramecc+:xnack-
        if let Some(rest) = triple.split("amdgcn-amd-amdhsa-").nth(1) {
            let proc = rest.trim_start_matches('-').split(':').next()?.to_string();
            out.push((proc, b.get(off..off + size)?));
        }
    }
    Some(out)
}

/// The size of a bundle in memory (its header, then the furthest entry).
fn bundle_size(read: &dyn Fn(usize, usize) -> Option<Vec<u8>>) -> Option<usize> {
    let h = read(0, 32)?;
    if !h.starts_with(BUNDLE_MAGIC) {
        return None;
    }
    let n = u64_at(&h, 24)? as usize;
    let mut at = 32;
    let mut end = 32;
    for _ in 0..n {
        let e = read(at, 24)?;
        let (off, size, tlen) = (u64_at(&e, 0)?, u64_at(&e, 8)?, u64_at(&e, 16)?);
        at += 24 + tlen as usize;
        end = end.max(at).max((off + size) as usize);
    }
    Some(end)
}

/// What to do with an image.
enum Plan {
    /// Hand it to the runtime as it is.
    Forward,
    /// Load this host ELF instead.
    Host(Vec<u8>),
    /// Translation failed (already reported).
    Fail,
}

fn plan(image: &[u8], guest: &str, host: &str, what: &str) -> Plan {
    let elf: &[u8] = if let Some(entries) = bundle_entries(image) {
        if entries.iter().any(|(p, _)| p == host) {
            return Plan::Forward;
        }
        match entries.iter().find(|(p, _)| p == guest) {
            Some((_, e)) => e,
            None => return Plan::Forward,
        }
    } else if crate::code::elf_target(image) == Some(guest) {
        image
    } else {
        return Plan::Forward;
    };
    match crate::translate::translate(elf, guest, host) {
        Ok(t) => {
            crate::log!(
                Info,
                "hotswap: {what}: translated a {guest} code object ({} bytes) to {host} ({} bytes){}",
                elf.len(),
                t.elf.len(),
                if t.report.is_empty() {
                    String::new()
                } else {
                    format!(": {}", t.report)
                }
            );
            Plan::Host(t.elf)
        }
        Err(msg) => {
            crate::log::write_line(
                crate::log::Level::Error,
                format_args!(
                    "hotswap: {what}: cannot load a {guest} code object on the {host} GPU: {msg}"
                ),
            );
            Plan::Fail
        }
    }
}

/// The runtime's entry `name` (the next definition after this library).
fn next<T: Copy>(name: &CStr) -> Option<T> {
    // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: T is the function-pointer type of the named entry.
    Some(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
}

type LoadData = unsafe extern "C" fn(*mut c_void, *const c_void) -> HipError;
type LoadFile = unsafe extern "C" fn(*mut c_void, *const c_char) -> HipError;
type LoadDataEx = unsafe extern "C" fn(
    *mut c_void,
    *const c_void,
    c_uint,
    *mut c_int,
    *mut *mut c_void,
) -> HipError;

fn keep(elf: Vec<u8>) -> *const c_void {
    let mut k = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    k.push(elf);
    k.last().expect("just pushed").as_ptr().cast()
}

/// Reads an image in memory whose size the caller does not give.
///
/// # Safety
/// `image` points to a whole ELF or offload bundle.
unsafe fn image_bytes<'a>(image: *const c_void) -> Option<&'a [u8]> {
    if image.is_null() {
        return None;
    }
    let read = |off: usize, len: usize| -> Option<Vec<u8>> {
        // SAFETY: the headers lie inside the image (the caller's contract).
        Some(unsafe { std::slice::from_raw_parts(image.cast::<u8>().add(off), len) }.to_vec())
    };
    let size = bundle_size(&read).or_else(|| elf_size(&read))?;
    // SAFETY: the image is `size` bytes (from its own headers).
    Some(unsafe { std::slice::from_raw_parts(image.cast(), size) })
}

/// # Safety
/// The HIP API's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoadData(module: *mut c_void, image: *const c_void) -> HipError {
    let Some(real) = next::<LoadData>(c"hipModuleLoadData") else {
        return HIP_ERROR_NOT_FOUND;
    };
    if let Some((guest, host)) = hotswap()
        // SAFETY: the caller's image.
        && let Some(bytes) = unsafe { image_bytes(image) }
    {
        match plan(bytes, guest, host, "hipModuleLoadData") {
            // SAFETY: our own host ELF, kept alive.
            Plan::Host(elf) => return unsafe { real(module, keep(elf)) },
            Plan::Fail => return HIP_ERROR_INVALID_IMAGE,
            Plan::Forward => {}
        }
    }
    // SAFETY: forwards the caller's arguments.
    unsafe { real(module, image) }
}

/// # Safety
/// The HIP API's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoadDataEx(
    module: *mut c_void,
    image: *const c_void,
    n: c_uint,
    options: *mut c_int,
    values: *mut *mut c_void,
) -> HipError {
    let Some(real) = next::<LoadDataEx>(c"hipModuleLoadDataEx") else {
        return HIP_ERROR_NOT_FOUND;
    };
    if let Some((guest, host)) = hotswap()
        // SAFETY: the caller's image.
        && let Some(bytes) = unsafe { image_bytes(image) }
    {
        match plan(bytes, guest, host, "hipModuleLoadDataEx") {
            // SAFETY: our own host ELF, kept alive; the caller's options.
            Plan::Host(elf) => return unsafe { real(module, keep(elf), n, options, values) },
            Plan::Fail => return HIP_ERROR_INVALID_IMAGE,
            Plan::Forward => {}
        }
    }
    // SAFETY: forwards the caller's arguments.
    unsafe { real(module, image, n, options, values) }
}

/// # Safety
/// The HIP API's contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoad(module: *mut c_void, fname: *const c_char) -> HipError {
    let Some(real) = next::<LoadFile>(c"hipModuleLoad") else {
        return HIP_ERROR_NOT_FOUND;
    };
    if let Some((guest, host)) = hotswap()
        && !fname.is_null()
    {
        // SAFETY: a NUL-terminated path (the API's contract).
        let path = unsafe { CStr::from_ptr(fname) }
            .to_string_lossy()
            .into_owned();
        let Ok(bytes) = std::fs::read(&path) else {
            // The runtime reports a missing file its own way.
            // SAFETY: forwards the caller's arguments.
            return match unsafe { real(module, fname) } {
                0 => 0,
                _ if !std::path::Path::new(&path).exists() => HIP_ERROR_FILE_NOT_FOUND,
                e => e,
            };
        };
        match plan(&bytes, guest, host, &format!("hipModuleLoad({path})")) {
            Plan::Host(elf) => {
                let Some(data) = next::<LoadData>(c"hipModuleLoadData") else {
                    return HIP_ERROR_NOT_FOUND;
                };
                // SAFETY: our own host ELF, kept alive.
                return unsafe { data(module, keep(elf)) };
            }
            Plan::Fail => return HIP_ERROR_INVALID_IMAGE,
            Plan::Forward => {}
        }
    }
    // SAFETY: forwards the caller's arguments.
    unsafe { real(module, fname) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut head = BUNDLE_MAGIC.to_vec();
        head.extend((entries.len() as u64).to_le_bytes());
        let table: usize = entries.iter().map(|(t, _)| 24 + t.len()).sum();
        let mut off = 32 + table;
        let mut body: Vec<u8> = vec![];
        for (t, b) in entries {
            head.extend((off as u64).to_le_bytes());
            head.extend((b.len() as u64).to_le_bytes());
            head.extend((t.len() as u64).to_le_bytes());
            head.extend(t.as_bytes());
            body.extend(*b);
            off += b.len();
        }
        head.extend(body);
        head
    }

    #[test]
    fn bundles_are_read_by_target() {
        let b = bundle(&[
            ("host-x86_64-unknown-linux-gnu-", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx950:sramecc+", b"GUEST"),
        ]);
        let e = bundle_entries(&b).unwrap();
        assert_eq!(e, vec![("gfx950".to_string(), &b"GUEST"[..])]);
        let read = |o: usize, l: usize| b.get(o..o + l).map(<[u8]>::to_vec);
        assert_eq!(bundle_size(&read), Some(b.len()));
        // A bundle that has the host's entry goes to the runtime as it is.
        let both = bundle(&[
            ("hipv4-amdgcn-amd-amdhsa--gfx942", b"HOST"),
            ("hipv4-amdgcn-amd-amdhsa--gfx950", b"GUEST"),
        ]);
        assert!(matches!(
            plan(&both, "gfx950", "gfx942", "t"),
            Plan::Forward
        ));
        // Not a code object at all: forwarded (the runtime's error).
        assert!(matches!(
            plan(b"junk", "gfx950", "gfx942", "t"),
            Plan::Forward
        ));
    }
}
