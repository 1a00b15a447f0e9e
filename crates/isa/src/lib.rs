//! AMDGPU instruction set: decoding, encoding and LLVM-syntax disassembly.
//!
//! An instruction is a typed value ([`Inst`]): its encoding, opcode and
//! dwords, validated when decoding; [`Inst::body`] gives its operands and
//! modifiers in a per-family field struct. The printer writes LLVM 22's
//! syntax; the encoder writes the bytes back from the fields.
//! LLVM 22's disassembler is the oracle the decoder is tested against.
//!
//! Only the GFX9 CDNA targets (gfx90a, gfx942, gfx950) are implemented; the
//! [`Target`]/[`Family`] split leaves room for the RDNA encodings.

#![forbid(unsafe_code)]

pub mod gfx9;

pub use gfx9::Inst;
pub use gfx9::opcodes::{Opcode, opcodes};
// The targets live with the GPU configuration (`rocjitsu_config`), the one
// target type of every crate; the decoders are chosen by their `Family`.
pub use rocjitsu_config::{Family, Target, UnknownTarget};

/// Why a byte sequence did not decode to an instruction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The word at this position is not a valid instruction on the target.
    #[error("invalid {target} instruction word 0x{word:08x}")]
    Invalid { target: Target, word: u32 },
    /// The target's machine code is not decoded yet.
    #[error("{target} machine code is not decoded yet")]
    Unsupported { target: Target },
    /// The instruction needs more bytes than were given.
    #[error("truncated instruction: needs {need} bytes, {have} available")]
    Truncated { need: u32, have: u32 },
}

/// Decodes one instruction from the start of `bytes`.
///
/// On error, a disassembler prints `<invalid>` and resumes 4 bytes later, as
/// LLVM does.
#[inline(always)]
pub fn decode(target: Target, bytes: &[u8]) -> Result<Inst, DecodeError> {
    match target.family() {
        Family::Gfx9 if target.decodes() => gfx9::decode(target, bytes),
        _ => Err(DecodeError::Unsupported { target }),
    }
}

/// One line of a linear disassembly.
#[derive(Debug, Clone)]
pub struct Line {
    /// Byte offset of the instruction in the input.
    pub offset: usize,
    /// Its bytes (4 for an undecodable word).
    pub len: usize,
    /// The decoded instruction, or `None` for `<invalid>`.
    pub inst: Option<Inst>,
}

/// Decodes `bytes` linearly, as `llvm-mc --disassemble` and `llvm-objdump -d`
/// do: an undecodable word becomes an invalid line and decoding resumes 4
/// bytes later. A trailing fragment shorter than 4 bytes is reported as one
/// invalid line of its length.
pub fn disassemble(target: Target, bytes: &[u8]) -> Vec<Line> {
    let mut out = Vec::with_capacity(bytes.len() / 6);
    let mut off = 0;
    while off < bytes.len() {
        match decode(target, &bytes[off..]) {
            Ok(inst) => {
                let len = inst.len();
                out.push(Line {
                    offset: off,
                    len,
                    inst: Some(inst),
                });
                off += len;
            }
            Err(_) => {
                let len = (bytes.len() - off).min(4);
                out.push(Line {
                    offset: off,
                    len,
                    inst: None,
                });
                off += len;
            }
        }
    }
    out
}
