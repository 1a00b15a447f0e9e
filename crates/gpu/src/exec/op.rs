//! The executable form of an instruction: an [`Op`], lowered once from the
//! decoded [`Inst`] (operands resolved to register-file indices, modifiers
//! unpacked, the semantic function chosen; see [`super::lower`]) and cached per code
//! address, so that executing it is one indirect call.

use super::wave::{Apertures, Src, Wave, sreg};
use crate::mem::{MemFault, Tlb, Vm};
use rocjitsu_isa::{Inst, Instruction, Target};

pub use super::wave::HwReg;

/// Per-dispatch constants an instruction may need.
#[derive(Clone, Debug)]
pub struct Env {
    pub target: Target,
    pub apertures: Apertures,
    /// Bytes of LDS the workgroup owns (static + dynamic).
    pub lds_size: u32,
    /// Start of the emulator's clock, for `s_memtime` / `s_memrealtime`.
    pub epoch: std::time::Instant,
    /// The GPU runs with SRAM ECC on: D16 loads (`*_d16`, `*_d16_hi`,
    /// format d16 loads, LDS d16 reads) write zeros to the half of the
    /// register they do not load instead of keeping it. Compilers targeting
    /// `sramecc+` or `sramecc` "any" rely on the zeros (a `_d16_hi` load
    /// `v_or`ed with a `_d16` one); only `sramecc-` code relies on the
    /// other half being kept.
    pub sramecc: bool,
}

impl Env {
    /// The environment of a `target` GPU as shipped (SRAM ECC as
    /// [`Target::sramecc_default`]).
    pub fn new(target: Target) -> Env {
        Env {
            target,
            apertures: Apertures::default(),
            lds_size: 0,
            epoch: std::time::Instant::now(),
            sramecc: target.sramecc_default(),
        }
    }

    /// What a D16 load keeps of the register it writes: the old value, or
    /// 0 when SRAM ECC is on.
    #[inline]
    pub fn d16_keep(&self, old: u32) -> u32 {
        if self.sramecc { 0 } else { old }
    }
}

/// What an instruction sees while it executes: its wave, the workgroup's
/// LDS, GPU memory (with the wave's cached translation) and the dispatch's
/// constants.
pub struct Ctx<'a> {
    pub wave: &'a mut Wave,
    pub lds: &'a mut [u8],
    pub vm: &'a Vm,
    pub tlb: &'a mut Tlb,
    pub env: &'a Env,
}

/// Why a wave stopped abnormally. The dispatcher adds where (kernel,
/// workgroup, wave, PC, instruction) to make the report.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Fault {
    #[error("{0}")]
    Memory(#[from] MemFault),
    /// An LDS access outside the workgroup's allocation.
    #[error(
        "LDS access of {size} bytes at offset 0x{addr:x} is outside the workgroup's {limit} bytes"
    )]
    Lds { addr: u64, size: u32, limit: u32 },
    /// Private memory (scratch) access outside the wave's segment.
    #[error(
        "private memory access of {size} bytes at offset 0x{addr:x} is outside the {limit} bytes per lane"
    )]
    Private { addr: u64, size: u32, limit: u32 },
    /// The bytes at PC do not decode to an instruction of the target.
    #[error("illegal instruction: {0}")]
    Illegal(String),
    /// The PC left the program's code (a branch or return to an address
    /// no executable code is mapped at, or, inside [`super::engine::run`],
    /// a call into another code object, which the dispatch follows).
    #[error("the PC 0x{0:x} is outside the kernel's code")]
    OutsideCode(u64),
    /// A valid instruction the emulator cannot execute.
    #[error("instruction `{0}` is not supported by the emulator")]
    Unsupported(&'static str),
    /// `s_trap`.
    #[error("s_trap {0}")]
    Trap(u16),
    /// An instruction whose operands make no sense at run time.
    #[error("{0}")]
    Invalid(String),
}

/// Executes one instruction. The wave's PC already points past it when
/// called; branches overwrite it.
pub type ExecFn = fn(&mut Ctx, &Op) -> Result<(), Fault>;

/// Modifiers of vector ALU instructions, unpacked from whichever encoding
/// carried them (VOP3 fields, SDWA or DPP source modifiers).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Mods {
    /// Bit i: negate source i (float), `neg_lo` in VOP3P.
    pub neg: u8,
    /// Bit i: absolute value of source i (float).
    pub abs: u8,
    /// VOP3P `neg_hi`.
    pub neg_hi: u8,
    /// VOP3 / VOP3P `op_sel` (bit 3: destination high half).
    pub opsel: u8,
    /// VOP3P `op_sel_hi`.
    pub opsel_hi: u8,
    pub clamp: bool,
    /// Output modifier: 0 none, 1 *2, 2 *4, 3 /2.
    pub omod: u8,
}

/// SDWA selects (ISA manual, "VOP_SDWA"): 0-3 byte, 4-5 word, 6 dword.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SdwaSel {
    pub dst_sel: u8,
    /// 0 pad with zeros, 1 sign-extend, 2 preserve.
    pub dst_unused: u8,
    pub src_sel: [u8; 2],
    /// Sign-extend the selected source bits (integer ops).
    pub sext: [bool; 2],
}

/// DPP controls (ISA manual, "VOP_DPP").
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DppCtl {
    pub ctrl: u16,
    pub bound_ctrl: bool,
    pub row_mask: u8,
    pub bank_mask: u8,
    /// GFX10+ `fi` (fetch inactive): a source lane in range is read even
    /// where EXEC is off.
    pub fi: bool,
}

/// GFX10+ DPP8: lane `l` reads lane `(l & !7) | sel[l & 7]`, the selects
/// three bits each from bit 0 (RDNA ISA manuals, "DPP8").
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Dpp8 {
    pub sel: u32,
    /// Fetch inactive: an inactive source lane is read (else it reads 0).
    pub fi: bool,
}

/// The extension word of an e32 vector instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ext {
    None,
    Sdwa(SdwaSel),
    Dpp(DppCtl),
    Dpp8(Dpp8),
}

/// Marks "no vector destination".
pub const NO_VDST: u16 = u16::MAX;

/// One lowered instruction.
///
/// The fields' meaning is the family's (documented in each lowering
/// function); for vector ALU instructions: `vdst` the destination register
/// (VGPR or AGPR index), `sdst` the scalar destination (VOPC / VOP3b carry
/// out, `v_readlane`), `src` the sources with implicit operands made
/// explicit (VCC carry-in as `src[2]`, the accumulator of `v_fmac` as
/// `src[2]`).
#[derive(Clone, Debug)]
pub struct Op {
    pub exec: ExecFn,
    pub len: u8,
    pub vdst: u16,
    pub sdst: u8,
    pub src: [Src; 3],
    pub mods: Mods,
    pub ext: Ext,
    /// An immediate: offset, simm16, ... (family-specific).
    pub imm: i64,
    /// The decoded instruction (of any family), for fields the lowering
    /// did not unpack and for fault reports.
    pub inst: Instruction,
    /// Family and memory access, for plugins.
    pub class: crate::plugin::Class,
    /// The X and Y operations of a GFX11 VOPD dual-issue instruction.
    pub pair: Option<Box<[Op; 2]>>,
}

impl Op {
    /// An op of a GFX9 instruction that executes `exec` with every other
    /// field empty.
    pub fn new(inst: Inst, exec: ExecFn) -> Op {
        Op::of(
            Instruction::Gfx9(inst),
            exec,
            crate::plugin::class::classify(&inst),
        )
    }

    /// An op of an instruction of any family, of plugin class `class`,
    /// that executes `exec` with every other field empty.
    pub fn of(inst: Instruction, exec: ExecFn, class: crate::plugin::Class) -> Op {
        Op {
            exec,
            // At most 16 bytes.
            len: inst.len() as u8,
            vdst: NO_VDST,
            sdst: sreg::NULL,
            src: [Src::None; 3],
            mods: Mods::default(),
            ext: Ext::None,
            imm: 0,
            class,
            inst,
            pair: None,
        }
    }

    /// The GFX9 instruction the op was lowered from (`None` for other
    /// families).
    #[inline]
    pub fn gfx9(&self) -> Option<&Inst> {
        match &self.inst {
            Instruction::Gfx9(i) => Some(i),
            _ => None,
        }
    }

    /// The op's mnemonic (for reports).
    pub fn name(&self) -> &'static str {
        self.inst.mnemonic()
    }
}
