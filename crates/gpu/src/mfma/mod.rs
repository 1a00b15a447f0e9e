//! The matrix instructions of gfx90a (CDNA2), gfx942 (CDNA3) and gfx950
//! (CDNA4) as pure functions of their register operands: `V_MFMA_*`
//! (dense), `V_MFMA_SCALE_*` (gfx950 block-scaled) and `V_SMFMAC_*` (4:2
//! structured-sparse A), independent of the wave engine.
//!
//! # Register layouts
//!
//! A wave64 operand is a run of consecutive VGPRs (or AGPRs), each a
//! [`Lanes`] array. The lane layouts ([`layout`]) are those of the CDNA ISA
//! manuals' "Matrix Arithmetic Instructions" chapters as tabulated by AMD's
//! matrix instruction calculator:
//!
//! - an input operand (A: `M`x`K` per block, B: `K`x`N` per block, `B`
//!   blocks) holds `kpl = K*M*B/64` consecutive k elements per lane; row
//!   `i` (column `j` for B) of block `b`, element `k` sits in lane
//!   `i + M*b + M*B*(k / kpl)`, at element slot `k % kpl`; slot `e` of a
//!   `w`-bit type occupies bits `e*w .. e*w+w` of the lane's registers
//!   concatenated (first register lowest);
//! - a 32-bit result (C/D) is stored in 4-row tiles: row `i`, column `j`
//!   of block `b` is in register `b*M*N/64 + 4*(i / (4*64/N)) + i%4`, lane
//!   `(b % bpr)*N + ((i/4) % (64/N))*bpr*N + j` with `bpr` = blocks per
//!   register tile (16 for 4x4, else 1); 64-bit results use 1-row tiles
//!   in register pairs.
//!
//! # Numerics
//!
//! Every element is decoded exactly to f32 (f64 for the F64 forms, i32 for
//! the integer forms): f16, bf16, FP8 (FNUZ on gfx942, OCP E4M3/E5M2 on
//! gfx950), FP6/FP4 with [`crate::float`], XF32 by truncating an f32 to 10
//! mantissa bits (gfx942 truncates rather than rounds). Denormals are kept
//! on input and output (MFMA ignores the MODE denormal controls).
//!
//! Accumulation order: for each result element, `acc = C[i][j]`, then for
//! `k = 0, 1, ..., K-1` (for SMFMAC, the stored A elements in storage
//! order, each against the B row its index selects), `acc = acc + A[i][k]*B[k][j]`. Products of the 16-bit and
//! narrower float types are exact in f32, so each step rounds once (round
//! to nearest even) on the addition. F32 inputs use a fused multiply-add
//! per step (one rounding); F64 uses an f64 fused multiply-add per step;
//! the integer forms wrap in i32. The gfx950 scaled forms multiply each
//! exact product by the lane pair's E8M0 scales `2^(sa-127) * 2^(sb-127)`,
//! round that to f32 (exact unless it leaves f32's range), then add.
//! Hardware sums differently inside its dot-product units, so results on
//! real GPUs can differ from these in the last bits when cancellation or
//! many terms are involved; the order here is fixed and documented so that
//! results are reproducible.

mod kernel;
pub mod layout;
mod table;
#[cfg(test)]
mod tests;

use rocjitsu_isa::Target;

pub use table::{ALL, lookup, lookup_for};

/// One VGPR (or AGPR) of a wave64: lane-major.
pub type Lanes = [u32; 64];

/// An element type of a matrix operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Elem {
    F64,
    F32,
    /// An f32 register value that the instruction truncates to 10 mantissa bits.
    Xf32,
    F16,
    Bf16,
    I8,
    I32,
    /// gfx942 `fp8`: E4M3FNUZ.
    Fp8Fnuz,
    /// gfx942 `bf8`: E5M2FNUZ.
    Bf8Fnuz,
    /// gfx950 `fp8`: OCP E4M3FN.
    Fp8,
    /// gfx950 `bf8`: OCP E5M2.
    Bf8,
    /// gfx950 `fp6`: E2M3.
    Fp6,
    /// gfx950 `bf6`: E3M2.
    Bf6,
    /// gfx950 `fp4`: E2M1.
    Fp4,
}

impl Elem {
    /// Width of one element in bits.
    pub const fn bits(self) -> usize {
        match self {
            Elem::F64 => 64,
            Elem::F32 | Elem::Xf32 | Elem::I32 => 32,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::I8 | Elem::Fp8Fnuz | Elem::Bf8Fnuz | Elem::Fp8 | Elem::Bf8 => 8,
            Elem::Fp6 | Elem::Bf6 => 6,
            Elem::Fp4 => 4,
        }
    }

    /// The gfx950 f8f6f4 operand format selected by a CBSZ (A) or BLGP (B)
    /// value: 0 fp8, 1 bf8, 2 fp6, 3 bf6, 4 fp4.
    pub const fn f8f6f4(sel: u8) -> Option<Elem> {
        match sel {
            0 => Some(Elem::Fp8),
            1 => Some(Elem::Bf8),
            2 => Some(Elem::Fp6),
            3 => Some(Elem::Bf6),
            4 => Some(Elem::Fp4),
            _ => None,
        }
    }
}

/// Target bits of [`MfmaInfo::targets`].
pub const GFX90A: u8 = 1;
pub const GFX942: u8 = 2;
pub const GFX950: u8 = 4;
pub const GFX908: u8 = 8;

/// The bit of [`MfmaInfo::targets`] for a target.
pub const fn target_bit(t: Target) -> u8 {
    match t {
        Target::Gfx90a => GFX90A,
        Target::Gfx942 => GFX942,
        Target::Gfx950 => GFX950,
        Target::Gfx908 => GFX908,
        // Targets the emulator does not execute have no MFMA entries.
        _ => 0,
    }
}

/// The shape, types and modifiers of one matrix instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MfmaInfo {
    /// LLVM mnemonic without `_e64`.
    pub name: &'static str,
    /// The targets that have the instruction under this name ([`GFX90A`],
    /// [`GFX942`], [`GFX950`], [`GFX908`] bits). gfx942 and gfx950 share `fp8`/`bf8`
    /// mnemonics with different formats, so those have one entry each.
    pub targets: u8,
    pub m: usize,
    pub n: usize,
    /// The K of one block (for SMFMAC, the dense K that the sparse A expands to).
    pub k: usize,
    pub blocks: usize,
    /// Element type of A (for f8f6f4 forms, the widest format, fp8; the real
    /// one comes from CBSZ).
    pub a: Elem,
    /// Element type of B (f8f6f4: from BLGP).
    pub b: Elem,
    /// Element type of C and D: F32, I32 or F64.
    pub cd: Elem,
    /// Registers of A, B and C/D per lane (f8f6f4: for fp8 operands; fp6
    /// uses 6 and fp4 4, see [`MfmaInfo::a_dwords_for`]).
    pub a_dwords: usize,
    pub b_dwords: usize,
    pub cd_dwords: usize,
    /// SMFMAC: A is 4:2 structured-sparse, with an index register.
    pub sparse: bool,
    /// CBSZ/ABID broadcast one A block to several (multi-block forms).
    pub broadcast: bool,
    /// BLGP selects a B lane-group pattern.
    pub lane_pattern: bool,
    /// F64 forms of gfx942+: the neg bits (encoded in the BLGP field) negate A, B, C.
    pub neg: bool,
    /// gfx950 f8f6f4: CBSZ and BLGP select the A and B formats.
    pub f8f6f4: bool,
    /// gfx950 `v_mfma_scale_*`: per-lane E8M0 scales for A and B.
    pub scaled: bool,
    /// Issue passes (4 cycles each) on the entry's targets: from AMD's
    /// matrix instruction calculator for CDNA2/CDNA3; the gfx950-only
    /// forms are estimates.
    pub passes: u8,
}

impl MfmaInfo {
    /// Whether the instruction exists under this name on `t`.
    pub const fn on(&self, t: Target) -> bool {
        self.targets & target_bit(t) != 0
    }

    /// Elements of A per lane: K*M*B/64 (halved for the sparse A).
    pub const fn a_per_lane(&self) -> usize {
        let k = if self.sparse { self.k / 2 } else { self.k };
        k * self.m * self.blocks / 64
    }

    /// Elements of B per lane: K*N*B/64.
    pub const fn b_per_lane(&self) -> usize {
        self.k * self.n * self.blocks / 64
    }

    /// The A and B element types under these modifiers (f8f6f4: CBSZ/BLGP).
    pub fn elems(&self, mods: &MfmaMods) -> Result<(Elem, Elem), MfmaError> {
        if self.f8f6f4 {
            let a = Elem::f8f6f4(mods.cbsz).ok_or(MfmaError::Format(mods.cbsz))?;
            let b = Elem::f8f6f4(mods.blgp).ok_or(MfmaError::Format(mods.blgp))?;
            Ok((a, b))
        } else {
            Ok((self.a, self.b))
        }
    }

    /// Whether the shape is one the layouts describe (every table entry's
    /// is; checked so that a hand-made `MfmaInfo` cannot make the kernels
    /// divide by zero or index past their buffers).
    pub fn shape_ok(&self) -> bool {
        let dims = matches!((self.m, self.n), (4, 4) | (16, 16) | (32, 32));
        let blocks = self.blocks.is_power_of_two() && self.m * self.blocks <= 64;
        let k = self.k >= 1 && self.k * self.m * self.blocks <= 2048;
        let per_lane = self.a_per_lane() >= 1 && self.b_per_lane() >= 1;
        let sparse = !self.sparse || (self.k & 3 == 0 && self.blocks == 1);
        let cd = matches!(self.cd, Elem::F32 | Elem::I32 | Elem::F64)
            && self.cd_dwords == self.m * self.n * self.blocks * self.cd.bits() / 2048;
        dims && blocks && k && per_lane && sparse && cd
    }

    /// Registers of A under these modifiers.
    pub fn a_dwords_for(&self, mods: &MfmaMods) -> Result<usize, MfmaError> {
        let (a, _) = self.elems(mods)?;
        Ok((self.a_per_lane() * a.bits()).div_ceil(32))
    }

    /// Registers of B under these modifiers.
    pub fn b_dwords_for(&self, mods: &MfmaMods) -> Result<usize, MfmaError> {
        let (_, b) = self.elems(mods)?;
        Ok((self.b_per_lane() * b.bits()).div_ceil(32))
    }
}

/// The instruction's modifier fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MfmaMods {
    /// Control broadcast size: broadcast one A block to 2^cbsz blocks. On
    /// SMFMAC, non-zero selects index set 0 regardless of ABID. On gfx950
    /// f8f6f4, the A format.
    pub cbsz: u8,
    /// A-matrix broadcast identifier: the block broadcast under CBSZ; on
    /// SMFMAC (with cbsz 0) the index set.
    pub abid: u8,
    /// B lane-group pattern (gfx90a/gfx942/gfx950 non-f8f6f4, where
    /// supported); on gfx950 f8f6f4, the B format. Ignored by F64 forms.
    pub blgp: u8,
    /// F64 MFMA of gfx942+ ([`MfmaInfo::neg`]): neg modifiers (VOP3P
    /// neg_lo bits, which share the BLGP field): bit 0 negates A, bit 1 B,
    /// bit 2 C. Ignored elsewhere (gfx90a has no F64 negation).
    pub neg: u8,
    /// Scaled forms: per-lane scale VGPR values and their opsel byte
    /// selects (E8M0 in byte `sel` of each lane). `None` means scale 1.
    /// For `scale_src0` (A) `sel = op_sel[0] | op_sel_hi[0] << 1`, for
    /// `scale_src1` (B) `op_sel[1] | op_sel_hi[1] << 1` (the
    /// `v_mfma_ld_scale_b32` half's fields, as LLVM 22 emits them for the
    /// intrinsics' byte indices).
    pub scale_a: Option<(Lanes, u8)>,
    pub scale_b: Option<(Lanes, u8)>,
}

impl MfmaMods {
    /// The modifiers of a VOP3P-MAI encoding: `hi` is word 0 bits 14:8
    /// (CBSZ in 10:8, ABID in 14:11), `blgp` word 1 bits 63:61 (BLGP, and
    /// the neg bits of the gfx942+ F64 forms).
    pub fn from_fields(hi: u8, blgp: u8) -> MfmaMods {
        MfmaMods {
            cbsz: hi & 7,
            abid: (hi >> 3) & 15,
            blgp: blgp & 7,
            neg: blgp & 7,
            scale_a: None,
            scale_b: None,
        }
    }
}

/// A matrix instruction that cannot execute with these operands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MfmaError {
    #[error("{name}: operand {operand} needs {need} registers, got {got}")]
    Operand {
        name: &'static str,
        operand: char,
        need: usize,
        got: usize,
    },
    #[error("f8f6f4 operand format {0} is not fp8, bf8, fp6, bf6 or fp4")]
    Format(u8),
    #[error("{0} is a sparse instruction: use execute_smfmac")]
    Sparse(&'static str),
    #[error("{0} is not a sparse instruction: use execute")]
    NotSparse(&'static str),
    #[error("{0}: not a matrix instruction shape")]
    Shape(&'static str),
}

fn check_info(info: &MfmaInfo, sparse: bool) -> Result<(), MfmaError> {
    if !info.shape_ok() {
        Err(MfmaError::Shape(info.name))
    } else if info.sparse && !sparse {
        Err(MfmaError::Sparse(info.name))
    } else if !info.sparse && sparse {
        Err(MfmaError::NotSparse(info.name))
    } else {
        Ok(())
    }
}

fn check(name: &'static str, operand: char, need: usize, got: usize) -> Result<(), MfmaError> {
    if got < need {
        Err(MfmaError::Operand {
            name,
            operand,
            need,
            got,
        })
    } else {
        Ok(())
    }
}

/// d = A*B + C. `a`, `b`, `c` are the consecutive registers of each operand
/// (at least a_dwords, b_dwords, cd_dwords long); `d` receives cd_dwords
/// registers. c and d are distinct buffers (the caller copies when they
/// alias).
pub fn execute(
    info: &MfmaInfo,
    mods: &MfmaMods,
    a: &[Lanes],
    b: &[Lanes],
    c: &[Lanes],
    d: &mut [Lanes],
) -> Result<(), MfmaError> {
    check_info(info, false)?;
    check(info.name, 'A', info.a_dwords_for(mods)?, a.len())?;
    check(info.name, 'B', info.b_dwords_for(mods)?, b.len())?;
    check(info.name, 'C', info.cd_dwords, c.len())?;
    check(info.name, 'D', info.cd_dwords, d.len())?;
    kernel::dense(info, mods, a, b, Some(c), d)
}

/// d = A*B + d: [`execute`] with C and D the same registers (the usual
/// accumulate form), without a copy.
pub fn execute_in_place(
    info: &MfmaInfo,
    mods: &MfmaMods,
    a: &[Lanes],
    b: &[Lanes],
    cd: &mut [Lanes],
) -> Result<(), MfmaError> {
    check_info(info, false)?;
    check(info.name, 'A', info.a_dwords_for(mods)?, a.len())?;
    check(info.name, 'B', info.b_dwords_for(mods)?, b.len())?;
    check(info.name, 'C', info.cd_dwords, cd.len())?;
    kernel::dense(info, mods, a, b, None, cd)
}

/// SMFMAC: d (also the accumulator) += sparse A (4:2 structured, indices
/// from `idx` lane values with cbsz/abid selecting the index set) * B.
pub fn execute_smfmac(
    info: &MfmaInfo,
    mods: &MfmaMods,
    a: &[Lanes],
    b: &[Lanes],
    idx: &Lanes,
    cd: &mut [Lanes],
) -> Result<(), MfmaError> {
    check_info(info, true)?;
    check(info.name, 'A', info.a_dwords, a.len())?;
    check(info.name, 'B', info.b_dwords, b.len())?;
    check(info.name, 'D', info.cd_dwords, cd.len())?;
    kernel::sparse(info, mods, a, b, idx, cd)
}
