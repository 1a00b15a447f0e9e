//! LLVM 22's AMDGPU disassembler, loaded at run time through LLVM's C API
//! (`llvm-c/Disassembler.h`): the oracle `rocjitsu-isa` is tested against.
//!
//! [`Oracle`] decodes in this process. LLVM 22 itself crashes (SIGSEGV) on
//! some encodings, so bulk comparisons go through [`decode_isolated`], which
//! runs the oracle in a child process (the `llvm-oracle-worker` binary),
//! records the case a child died on as [`Outcome::Crashed`] and continues in
//! a new child after it.
//!
//! The library is `/usr/lib/llvm-22/lib/libLLVM.so.22.1`, or the path in the
//! environment variable `ROCJITSU_LIBLLVM`.

use std::ffi::{CString, c_char, c_int, c_void};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where libLLVM 22 is looked for unless `ROCJITSU_LIBLLVM` says otherwise.
pub const DEFAULT_LIBLLVM: &str = "/usr/lib/llvm-22/lib/libLLVM.so.22.1";

/// The target triple the disassembler is created for.
const TRIPLE: &str = "amdgcn-amd-amdhsa";

/// Size of the text buffer handed to `LLVMDisasmInstruction`.
const TEXT_BUF: usize = 512;

/// Why the oracle is not available.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "cannot load libLLVM 22 from {path}: {source}; install llvm-22 (scripts/setup.sh) or set ROCJITSU_LIBLLVM"
    )]
    Load {
        path: PathBuf,
        source: libloading::Error,
    },
    #[error("libLLVM at {path} lacks {symbol}: {source}; install llvm-22 (scripts/setup.sh)")]
    Symbol {
        path: PathBuf,
        symbol: &'static str,
        source: libloading::Error,
    },
    #[error("LLVM cannot create an AMDGPU disassembler for cpu {cpu:?}")]
    Context { cpu: String },
    #[error("cpu name {0:?} contains a NUL byte")]
    CpuName(String),
    #[error("oracle worker {path}: {source}")]
    Worker {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("oracle worker {path} failed to start for cpu {cpu}: {message}")]
    WorkerInit {
        path: PathBuf,
        cpu: String,
        message: String,
    },
}

/// The path of libLLVM 22: `ROCJITSU_LIBLLVM` or [`DEFAULT_LIBLLVM`].
pub fn libllvm_path() -> PathBuf {
    std::env::var_os("ROCJITSU_LIBLLVM")
        .map_or_else(|| PathBuf::from(DEFAULT_LIBLLVM), PathBuf::from)
}

type InitFn = unsafe extern "C" fn();
type CreateFn = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_char,
    *mut c_void,
    c_int,
    *const c_void,
    *const c_void,
) -> *mut c_void;
type DisasmFn = unsafe extern "C" fn(*mut c_void, *mut u8, u64, u64, *mut c_char, usize) -> usize;
type DisposeFn = unsafe extern "C" fn(*mut c_void);

/// Looks up the function `name` in `lib`.
///
/// # Safety
/// `T` must be the function pointer type of the symbol's C signature, and
/// the result must not be called after `lib` is dropped.
unsafe fn symbol<T: Copy>(
    lib: &libloading::Library,
    path: &Path,
    name: &'static str,
) -> Result<T, Error> {
    // SAFETY: the caller guarantees that `T` is the symbol's type.
    let s = unsafe { lib.get::<T>(name.as_bytes()) };
    s.map(|s| *s).map_err(|source| Error::Symbol {
        path: path.to_path_buf(),
        symbol: name,
        source,
    })
}

/// An LLVM disassembler context for one AMDGPU processor.
///
/// Not `Send`/`Sync`: an LLVM disassembler context is used from one thread.
pub struct Oracle {
    ctx: *mut c_void,
    disasm: DisasmFn,
    dispose: DisposeFn,
    /// Keeps the function pointers above valid; dropped last.
    _lib: libloading::Library,
}

impl Oracle {
    /// Loads libLLVM 22 and creates a disassembler for `cpu` (`gfx942`, ...).
    pub fn new(cpu: &str) -> Result<Oracle, Error> {
        Oracle::with_features(cpu, "")
    }

    /// Like [`Oracle::new`], with LLVM target features (`+wavefrontsize64`:
    /// wave64 operand widths on GFX10 and later, whose default is wave32).
    pub fn with_features(cpu: &str, features: &str) -> Result<Oracle, Error> {
        let path = libllvm_path();
        let ccpu = CString::new(cpu).map_err(|_| Error::CpuName(cpu.to_string()))?;
        let cfeat = CString::new(features).map_err(|_| Error::CpuName(features.to_string()))?;
        // SAFETY: loading libLLVM runs its static initialisers, which have no
        // preconditions; the library stays loaded for the life of `Oracle`.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|source| Error::Load {
            path: path.clone(),
            source,
        })?;
        // SAFETY: each type transcribes the C signature of the named LLVM C
        // API function (llvm-c/Target.h, llvm-c/Disassembler.h); the
        // pointers are stored beside `lib`, which keeps them valid.
        let (init_info, init_mc, init_dis, create, disasm, dispose) = unsafe {
            (
                symbol::<InitFn>(&lib, &path, "LLVMInitializeAMDGPUTargetInfo")?,
                symbol::<InitFn>(&lib, &path, "LLVMInitializeAMDGPUTargetMC")?,
                symbol::<InitFn>(&lib, &path, "LLVMInitializeAMDGPUDisassembler")?,
                symbol::<CreateFn>(&lib, &path, "LLVMCreateDisasmCPUFeatures")?,
                symbol::<DisasmFn>(&lib, &path, "LLVMDisasmInstruction")?,
                symbol::<DisposeFn>(&lib, &path, "LLVMDisasmDispose")?,
            )
        };
        let triple = CString::new(TRIPLE).map_err(|_| Error::CpuName(TRIPLE.to_string()))?;
        // SAFETY: the initialisers take no arguments and may be called more
        // than once; `create` gets NUL-terminated strings that outlive the
        // call, no user data (tag type 0) and no callbacks, which LLVM allows.
        let ctx = unsafe {
            init_info();
            init_mc();
            init_dis();
            create(
                triple.as_ptr(),
                ccpu.as_ptr(),
                cfeat.as_ptr(),
                std::ptr::null_mut(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if ctx.is_null() {
            return Err(Error::Context {
                cpu: cpu.to_string(),
            });
        }
        Ok(Oracle {
            ctx,
            disasm,
            dispose,
            _lib: lib,
        })
    }

    /// Decodes the instruction at the start of `bytes`: LLVM's text (without
    /// its leading tab) and the number of bytes consumed, or `None` when LLVM
    /// reports an invalid encoding (`<invalid>`, resuming 4 bytes later).
    ///
    /// LLVM may crash the process on some inputs; see [`decode_isolated`].
    pub fn decode(&self, bytes: &[u8]) -> Option<(String, usize)> {
        let mut buf = [0u8; TEXT_BUF];
        // SAFETY: `ctx` is a live context; LLVM reads at most `bytes.len()`
        // bytes (it does not write through the pointer, the C API merely
        // lacks `const`) and writes a NUL-terminated string of at most
        // `buf.len()` bytes into `buf`.
        let n = unsafe {
            (self.disasm)(
                self.ctx,
                bytes.as_ptr().cast_mut(),
                bytes.len() as u64,
                0,
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        if n == 0 {
            return None;
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let text = String::from_utf8_lossy(&buf[..end]);
        Some((text.trim_start_matches('\t').trim_end().to_string(), n))
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        // SAFETY: `ctx` came from `LLVMCreateDisasmCPUFeatures` and is
        // disposed of exactly once, before the library is unloaded.
        unsafe { (self.dispose)(self.ctx) }
    }
}

/// What the oracle said about one case in [`decode_isolated`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// LLVM decoded `size` bytes as `text`.
    Decoded { text: String, size: usize },
    /// LLVM reported an invalid encoding.
    Invalid,
    /// LLVM crashed the worker process on this case.
    Crashed,
}

/// The first line a worker writes once its oracle is ready.
pub const WORKER_READY: &str = "ready";

/// The worker's loop (the `llvm-oracle-worker` binary): creates an oracle for
/// `cpu`, writes [`WORKER_READY`], then for every input line of hex bytes
/// writes one line, `SIZE<TAB>TEXT` or `0` for an invalid encoding, flushed
/// before the next case is read so that the parent knows which case a crash
/// happened on.
pub fn worker_main(
    cpu: &str,
    features: &str,
    input: impl BufRead,
    mut out: impl Write,
) -> Result<(), Box<dyn std::error::Error>> {
    let oracle = Oracle::with_features(cpu, features)?;
    writeln!(out, "{WORKER_READY}")?;
    out.flush()?;
    let mut bytes = Vec::with_capacity(16);
    for line in input.lines() {
        let line = line?;
        bytes.clear();
        bytes.extend(hex_bytes(line.trim()));
        match oracle.decode(&bytes) {
            Some((text, size)) => writeln!(out, "{size}\t{text}")?,
            None => writeln!(out, "0")?,
        }
        out.flush()?;
    }
    Ok(())
}

/// Parses a string of hex digit pairs, ignoring a trailing odd digit and
/// pairs that are not hex.
fn hex_bytes(s: &str) -> impl Iterator<Item = u8> + '_ {
    (0..s.len() / 2).filter_map(move |i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
}

fn hex_line(bytes: &[u8], out: &mut String) {
    use std::fmt::Write as _;
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out.push('\n');
}

/// Decodes every case with the oracle for `cpu` in child processes running
/// `worker` (the `llvm-oracle-worker` binary). A case on which LLVM crashes
/// is [`Outcome::Crashed`]; a fresh worker continues with the next case.
pub fn decode_isolated(worker: &Path, cpu: &str, cases: &[Vec<u8>]) -> Result<Vec<Outcome>, Error> {
    decode_isolated_with(worker, cpu, "", cases)
}

/// [`decode_isolated`] with LLVM target features (see
/// [`Oracle::with_features`]).
pub fn decode_isolated_with(
    worker: &Path,
    cpu: &str,
    features: &str,
    cases: &[Vec<u8>],
) -> Result<Vec<Outcome>, Error> {
    let mut out = Vec::with_capacity(cases.len());
    while out.len() < cases.len() {
        let start = out.len();
        run_worker(worker, cpu, features, &cases[start..], &mut out)?;
        if out.len() < cases.len() {
            out.push(Outcome::Crashed);
        }
    }
    Ok(out)
}

/// Runs one worker over `cases`, appending its answers to `out` until it
/// finishes or dies.
fn run_worker(
    worker: &Path,
    cpu: &str,
    features: &str,
    cases: &[Vec<u8>],
    out: &mut Vec<Outcome>,
) -> Result<(), Error> {
    let werr = |source| Error::Worker {
        path: worker.to_path_buf(),
        source,
    };
    let mut child = Command::new(worker)
        .arg(cpu)
        .arg(features)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(werr)?;
    let (Some(stdin), Some(stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(werr(std::io::Error::other("worker pipes missing")));
    };
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    reader.read_line(&mut line).map_err(werr)?;
    if line.trim_end() != WORKER_READY {
        let mut message = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut message);
        let status = child.wait().map_err(werr)?;
        return Err(Error::WorkerInit {
            path: worker.to_path_buf(),
            cpu: cpu.to_string(),
            message: format!("{} ({status})", message.trim()),
        });
    }
    drop(stderr);
    let target = out.len() + cases.len();
    std::thread::scope(|s| -> Result<(), Error> {
        // Feed the cases from a second thread so that neither side blocks on
        // a full pipe; a write error means the worker died, which the reader
        // sees as end of file.
        s.spawn(move || {
            let mut w = BufWriter::new(stdin);
            let mut buf = String::new();
            for c in cases {
                buf.clear();
                hex_line(c, &mut buf);
                if w.write_all(buf.as_bytes()).is_err() {
                    return;
                }
            }
            let _ = w.flush();
        });
        while out.len() < target {
            line.clear();
            if reader.read_line(&mut line).map_err(werr)? == 0 {
                break;
            }
            out.push(parse_answer(line.trim_end_matches('\n')));
        }
        Ok(())
    })?;
    let _ = child.wait();
    Ok(())
}

/// Parses a worker's answer line.
fn parse_answer(line: &str) -> Outcome {
    match line.split_once('\t') {
        Some((size, text)) => match size.parse() {
            Ok(size) if size > 0 => Outcome::Decoded {
                text: text.to_string(),
                size,
            },
            _ => Outcome::Invalid,
        },
        None => Outcome::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oracle(cpu: &str) -> Oracle {
        Oracle::new(cpu).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn decodes_vop2_and_literal() {
        let o = oracle("gfx942");
        // v_add_f32_e32 v1, v2, v3: VOP2 opcode 1, vdst 1, vsrc1 3, src0 v2.
        assert_eq!(
            o.decode(&[0x02, 0x07, 0x02, 0x02]),
            Some(("v_add_f32_e32 v1, v2, v3".into(), 4))
        );
        // s_mov_b32 s0, literal 0x12345678 (SOP1 with src0 = 255).
        let got = o.decode(&[0xff, 0x00, 0x80, 0xbe, 0x78, 0x56, 0x34, 0x12]);
        assert_eq!(got, Some(("s_mov_b32 s0, 0x12345678".into(), 8)));
    }

    #[test]
    fn invalid_word_is_none() {
        let o = oracle("gfx90a");
        // Major opcode 0b111111 is no GFX9 encoding.
        assert_eq!(o.decode(&[0xff, 0xff, 0xff, 0xff]), None);
    }

    #[test]
    fn answers_parse() {
        assert_eq!(parse_answer("0"), Outcome::Invalid);
        assert_eq!(
            parse_answer("8\ts_nop 0"),
            Outcome::Decoded {
                text: "s_nop 0".into(),
                size: 8
            }
        );
        assert_eq!(hex_bytes("0aFfz1").collect::<Vec<_>>(), vec![0x0a, 0xff]);
    }

    #[test]
    fn bad_cpu_is_an_error() {
        assert!(Oracle::new("gfx9\0").is_err());
    }
}
