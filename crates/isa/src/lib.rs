//! AMDGPU instruction set: decoding, encoding and LLVM-syntax disassembly.
//!
//! An instruction is a typed value ([`Inst`]): its encoding, opcode and
//! dwords, validated when decoding; [`Inst::body`] gives its operands and
//! modifiers in a per-family field struct. The printer writes LLVM 22's
//! syntax; the encoder writes the bytes back from the fields.
//! LLVM 22's disassembler is the oracle the decoder is tested against.
//!
//! One module per encoding family: [`gfx9`] (CDNA: gfx908, gfx90a, gfx942,
//! gfx950), [`gfx10`] (RDNA1 and RDNA2: gfx1010, gfx1030), [`gfx11`] (RDNA3:
//! gfx1100, gfx1151) and [`gfx12`] (RDNA4: gfx1201). [`decode`] and [`Inst`] are the
//! GFX9 decoder the execution engine runs; [`decode_in`] and
//! [`Instruction`] cover every family, for a wavefront size.

#![forbid(unsafe_code)]

pub mod gfx10;
pub mod gfx11;
pub mod gfx12;
pub mod gfx9;
pub mod objdump;

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

/// The wavefront size code is decoded for. On GFX10 and later it decides
/// the width of the operands that hold a bit per lane (VCC, EXEC, carry
/// and compare masks), which LLVM prints as `vcc_lo` or `vcc`; GFX9 runs
/// 64-lane waves only.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WaveSize {
    Wave32,
    Wave64,
}

impl WaveSize {
    /// The wave size code of `target` runs in by default (LLVM's default
    /// when disassembling).
    pub fn default_for(target: Target) -> WaveSize {
        if target.wave_size() == 32 {
            WaveSize::Wave32
        } else {
            WaveSize::Wave64
        }
    }

    /// The LLVM target feature that selects it (`+wavefrontsize64`).
    pub fn llvm_feature(self) -> &'static str {
        match self {
            WaveSize::Wave32 => "+wavefrontsize32",
            WaveSize::Wave64 => "+wavefrontsize64",
        }
    }

    /// Lanes per wave.
    pub fn lanes(self) -> u32 {
        match self {
            WaveSize::Wave32 => 32,
            WaveSize::Wave64 => 64,
        }
    }
}

/// How 16-bit VALU operands are read and printed: LLVM's `real-true16`
/// target feature. The instruction bits mean the same to the hardware in
/// either mode; the modes differ in the words LLVM accepts and how it
/// prints their operands. Only GFX12 has two modes here: LLVM 22 defaults
/// to real-true16 on GFX11 (the only mode our GFX11 tables learn) and to
/// fake-16-bit on gfx1201; GFX9 and GFX10 have neither.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum True16 {
    /// LLVM 22's default for the target (what `llvm-objdump-22 -d`
    /// prints): on gfx1201 fake-16-bit operands, 32-bit register names of
    /// v0-v127 (a register above v127 annotated as invalid or rejected).
    #[default]
    LlvmDefault,
    /// `+real-true16`: VGPR halves `v1.l`/`v1.h` (bit 7 of an 8-bit VGPR
    /// field, or an op_sel bit, selects the half). It accepts every word
    /// the default mode does and names the half the hardware reads, so
    /// execution decodes in it; Triton's LLVM emits gfx1201 code in it.
    Real,
}

impl True16 {
    /// The LLVM target feature that selects the mode on `target` (`""`
    /// where it is the target's default).
    pub fn llvm_feature(self, target: Target) -> &'static str {
        match (self, target.family()) {
            (True16::Real, Family::Gfx12) => "+real-true16",
            _ => "",
        }
    }
}

/// A decoded instruction of any family.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Instruction {
    Gfx9(Inst),
    Gfx10(gfx10::Inst),
    Gfx11(gfx11::Inst),
    Gfx12(gfx12::Inst),
}

impl Instruction {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        match self {
            Instruction::Gfx9(i) => i.len(),
            Instruction::Gfx10(i) => i.len(),
            Instruction::Gfx11(i) => i.len(),
            Instruction::Gfx12(i) => i.len(),
        }
    }

    /// Never true: every instruction has at least one dword.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The target it was decoded for.
    pub fn target(&self) -> Target {
        match self {
            Instruction::Gfx9(i) => i.target(),
            Instruction::Gfx10(i) => i.target(),
            Instruction::Gfx11(i) => i.target(),
            Instruction::Gfx12(i) => i.target(),
        }
    }

    /// The instruction's bytes, re-encoded from its fields.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Instruction::Gfx9(i) => i.encode(),
            Instruction::Gfx10(i) => i.encode(),
            Instruction::Gfx11(i) => i.encode(),
            Instruction::Gfx12(i) => i.encode(),
        }
    }

    /// For PC-relative branches, the address the instruction at `pc`
    /// branches to.
    pub fn branch_target(&self, pc: u64) -> Option<u64> {
        match self {
            Instruction::Gfx9(i) => i.branch_target(pc),
            Instruction::Gfx10(i) => i.branch_target(pc),
            Instruction::Gfx11(i) => i.branch_target(pc),
            Instruction::Gfx12(i) => i.branch_target(pc),
        }
    }

    /// Whether a branch target is printed as a label when it has one (SOPP
    /// branches; `llvm-objdump` annotates only those).
    pub fn is_sopp(&self) -> bool {
        match self {
            Instruction::Gfx9(i) => i.encoding() == gfx9::Encoding::Sopp,
            Instruction::Gfx10(i) => i.encoding() == gfx10::Encoding::Sopp,
            Instruction::Gfx11(i) => i.encoding() == gfx11::Encoding::Sopp,
            Instruction::Gfx12(i) => i.encoding() == gfx12::Encoding::Sopp,
        }
    }

    /// LLVM's mnemonic, with the encoding suffix where LLVM prints one.
    pub fn mnemonic(&self) -> &'static str {
        match self {
            Instruction::Gfx9(i) => i.mnemonic(),
            Instruction::Gfx10(i) => i.mnemonic(),
            Instruction::Gfx11(i) => i.mnemonic(),
            Instruction::Gfx12(i) => i.mnemonic(),
        }
    }

    /// For SOP1, SOP2 and SOPC instructions, their operands as LLVM prints
    /// them: the destination, then the two sources (`None` where the
    /// opcode has no such operand). `None` for other encodings.
    pub fn salu_operands(&self) -> Option<[Option<gfx9::operand::Operand>; 3]> {
        use gfx9::sop::Field;
        let op = |f: &Field| match f {
            Field::Op(o) => Some(*o),
            Field::Unused(_) => None,
        };
        match self {
            Instruction::Gfx9(i) => match i.body() {
                gfx9::Body::Salu(s) => s.fields().map(|f| [op(&f.sdst), op(&f.src0), op(&f.src1)]),
                _ => None,
            },
            Instruction::Gfx11(i) => match i.body() {
                gfx11::Body::Salu(s) => Some([op(&s.sdst), op(&s.src0), op(&s.src1)]),
                _ => None,
            },
            Instruction::Gfx12(i) => match i.body() {
                gfx12::Body::Salu(s) => Some([op(&s.sdst), op(&s.src0), op(&s.src1)]),
                _ => None,
            },
            // GFX10's operand roles are not described yet.
            Instruction::Gfx10(_) => None,
        }
    }

    /// The registers the instruction reads and writes ([`gfx9::regs`],
    /// [`gfx11::regs`]), for the families whose register roles are
    /// described (GFX9, GFX11, GFX12); `None` for the others (GFX10).
    pub fn regs(&self) -> Option<gfx9::regs::Regs> {
        match self {
            Instruction::Gfx9(i) => Some(i.regs()),
            Instruction::Gfx11(i) => Some(i.regs()),
            Instruction::Gfx12(i) => Some(i.regs()),
            Instruction::Gfx10(_) => None,
        }
    }
}

impl std::fmt::Display for Instruction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Instruction::Gfx9(i) => i.fmt(f),
            Instruction::Gfx10(i) => i.fmt(f),
            Instruction::Gfx11(i) => i.fmt(f),
            Instruction::Gfx12(i) => i.fmt(f),
        }
    }
}

/// Decodes one instruction of any implemented family from the start of
/// `bytes`, for waves of `wave` lanes (ignored on GFX9), in LLVM 22's
/// default syntax for the target ([`True16::LlvmDefault`]).
#[inline(always)]
pub fn decode_in(target: Target, wave: WaveSize, bytes: &[u8]) -> Result<Instruction, DecodeError> {
    decode_with(target, wave, True16::LlvmDefault, bytes)
}

/// [`decode_in`] in the 16-bit operand mode `t16`; the execution engine
/// decodes with [`True16::Real`], the hardware's reading.
#[inline(always)]
pub fn decode_with(
    target: Target,
    wave: WaveSize,
    t16: True16,
    bytes: &[u8],
) -> Result<Instruction, DecodeError> {
    match target.family() {
        Family::Gfx9 => decode(target, bytes).map(Instruction::Gfx9),
        Family::Gfx11 => {
            gfx11::decode(target, wave == WaveSize::Wave64, bytes).map(Instruction::Gfx11)
        }
        Family::Gfx12 => {
            gfx12::decode_mode(target, wave == WaveSize::Wave64, t16 == True16::Real, bytes)
                .map(Instruction::Gfx12)
        }
        Family::Gfx10 => {
            gfx10::decode(target, wave == WaveSize::Wave64, bytes).map(Instruction::Gfx10)
        }
    }
}

/// [`disassemble`] for any implemented family, for waves of `wave` lanes.
pub fn disassemble_in(target: Target, wave: WaveSize, bytes: &[u8]) -> Vec<Line<Instruction>> {
    disassemble_with(target, wave, True16::LlvmDefault, bytes)
}

/// [`disassemble_in`] in the 16-bit operand mode `t16`.
pub fn disassemble_with(
    target: Target,
    wave: WaveSize,
    t16: True16,
    bytes: &[u8],
) -> Vec<Line<Instruction>> {
    linear(bytes, |b| decode_with(target, wave, t16, b))
}

/// Decodes one instruction from the start of `bytes` with the GFX9 decoder
/// (gfx908, gfx90a, gfx942, gfx950; other targets give
/// [`DecodeError::Unsupported`]).
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
pub struct Line<I = Inst> {
    /// Byte offset of the instruction in the input.
    pub offset: usize,
    /// Its bytes (4 for an undecodable word).
    pub len: usize,
    /// The decoded instruction, or `None` for `<invalid>`.
    pub inst: Option<I>,
}

/// Decodes `bytes` linearly, as `llvm-mc --disassemble` and `llvm-objdump -d`
/// do: an undecodable word becomes an invalid line and decoding resumes 4
/// bytes later. A trailing fragment shorter than 4 bytes is reported as one
/// invalid line of its length.
pub fn disassemble(target: Target, bytes: &[u8]) -> Vec<Line> {
    linear(bytes, |b| decode(target, b))
}

/// The linear sweep of [`disassemble`] with any decoder.
fn linear<I: Copy + InstLen>(
    bytes: &[u8],
    decode: impl Fn(&[u8]) -> Result<I, DecodeError>,
) -> Vec<Line<I>> {
    let mut out = Vec::with_capacity(bytes.len() / 6);
    let mut off = 0;
    while off < bytes.len() {
        match decode(&bytes[off..]) {
            Ok(inst) => {
                let len = inst.size();
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

/// The size of a decoded instruction, for [`linear`].
trait InstLen {
    fn size(&self) -> usize;
}

impl InstLen for Inst {
    fn size(&self) -> usize {
        self.len()
    }
}

impl InstLen for Instruction {
    fn size(&self) -> usize {
        self.len()
    }
}
