//! The state of one wave (CDNA, wave64): scalar and vector register files,
//! EXEC, VCC, SCC, M0, MODE/STATUS/TRAPSTS and the program counter.
//!
//! The scalar register file is indexed by the 7-bit scalar operand field of
//! the encodings (ISA manual, "Scalar source operands"), so that VCC, EXEC,
//! M0, FLAT_SCRATCH and the trap temporaries live in the same array as the
//! SGPRs and an operand field is a plain index:
//! `s0..s101` = 0..101, `flat_scratch` = 102/103, `xnack_mask` = 104/105,
//! `vcc` = 106/107, `ttmp0..15` = 108..123, `m0` = 124, `null` = 125,
//! `exec` = 126/127.

use rocjitsu_isa::gfx9::operand::InlineFloat;

/// One vector register: a value per lane.
pub type Lanes = [u32; 64];

/// Scalar register file indices of the special registers.
pub mod sreg {
    pub const FLAT_SCRATCH: u8 = 102;
    pub const XNACK_MASK: u8 = 104;
    pub const VCC: u8 = 106;
    pub const TTMP0: u8 = 108;
    pub const M0: u8 = 124;
    pub const NULL: u8 = 125;
    pub const EXEC: u8 = 126;
    /// Outside the file: writes to it (and, for a pair, to the index after
    /// it) are dropped and reads give 0. GFX11's lowering makes `null`
    /// destinations this index, so that a 64-bit write to `null` does not
    /// reach EXEC_LO after it.
    pub const DISCARD: u8 = 0xfe;
}

/// Number of entries of the scalar file (the 7-bit operand space).
pub const SREGS: usize = 128;
/// Vector registers per wave: v0..v255 then a0..a255 (CDNA's unified file;
/// an AccVGPR `aN` is entry 256 + N).
pub const VREGS: usize = 512;
/// Entry of `a0` in [`Wave::v`].
pub const AGPR0: u16 = 256;

/// A source operand after lowering: where its value comes from.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Src {
    /// No operand.
    None,
    /// A scalar register (file index, see the module docs).
    S(u8),
    /// A vector register (`aN` is `AGPR0 + N`).
    V(u16),
    /// Inline integer constant -16..=64.
    Int(i8),
    /// Inline float constant; its bits depend on the operand's width.
    Float(InlineFloat),
    /// 32-bit literal constant.
    Lit(u32),
    /// Hardware constant registers (`src_shared_base`, ...).
    Hw(HwReg),
}

/// Hardware-provided constant registers readable as operands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HwReg {
    Scc,
    Vccz,
    Execz,
    SharedBase,
    SharedLimit,
    PrivateBase,
    PrivateLimit,
    PopsExitingWaveId,
    FlatScratchBaseLo,
    FlatScratchBaseHi,
    LdsDirect,
}

/// How a constant operand is widened: by the width and type the
/// instruction reads the operand as (ISA manual, "Inline constants" and
/// "Literal constants").
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Width {
    /// 16-bit operand: inline floats are half-precision bit patterns.
    B16,
    /// 32-bit operand: inline floats are single-precision bit patterns.
    B32,
    /// 64-bit float operand: inline floats are doubles; a literal is the
    /// high dword.
    F64,
    /// 64-bit integer operand: inline integers sign-extend; a literal is
    /// zero-extended.
    B64,
}

/// Why a wave is not running.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WaveState {
    Running,
    /// Waiting at `s_barrier` for the rest of its workgroup.
    Barrier,
    /// Executed `s_endpgm`.
    Ended,
}

/// The apertures and other per-dispatch constants a wave can read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Apertures {
    /// Start of the LDS aperture in flat addresses.
    pub shared_base: u64,
    /// Start of the private (scratch) aperture in flat addresses.
    pub private_base: u64,
}

impl Default for Apertures {
    /// The GFX9 KFD apertures: LDS at 1 << 48, scratch at 2 << 48 (each
    /// 4 GiB).
    fn default() -> Self {
        Apertures {
            shared_base: 1 << 48,
            private_base: 2 << 48,
        }
    }
}

/// One wave's architectural state.
#[derive(Clone, Debug)]
pub struct Wave {
    /// Scalar file, indexed by operand field (see the module docs).
    pub s: [u32; SREGS],
    /// Vector file: `v0..v255`, then `a0..a255`.
    pub v: Vec<Lanes>,
    pub scc: bool,
    pub pc: u64,
    /// The MODE register (rounding and denormal modes, IEEE, DX10 clamp).
    pub mode: u32,
    pub status: u32,
    pub trapsts: u32,
    pub state: WaveState,
    /// Index of the wave in its workgroup.
    pub id_in_group: u32,
    /// Instructions executed.
    pub insts: u64,
    /// The wave's private memory: `lane_bytes` bytes per lane, lane `l`'s at
    /// `l * lane_bytes`.
    pub scratch: Vec<u8>,
    pub lane_bytes: u32,
    /// A 32-lane wave (GFX10+ wave32): lanes 32..63 are never active, and
    /// lane masks (EXEC, VCC, compare and carry results) are one SGPR
    /// wide: `exec_lo`, `vcc_lo`.
    pub wave32: bool,
}

/// MODE's reset value at dispatch: round to nearest even for f32 and
/// f64/f16, f32 denormals flushed or kept and f64/f16 denormals kept per the
/// kernel descriptor (set by the dispatcher), IEEE and DX10 clamp per the
/// descriptor.
pub const MODE_DEFAULT: u32 = 0xf0;

impl Wave {
    pub fn new(vregs: usize) -> Wave {
        Wave {
            s: [0; SREGS],
            v: vec![[0; 64]; vregs.clamp(1, VREGS)],
            scc: false,
            pc: 0,
            mode: MODE_DEFAULT,
            status: 0,
            trapsts: 0,
            state: WaveState::Running,
            id_in_group: 0,
            insts: 0,
            scratch: Vec::new(),
            lane_bytes: 0,
            wave32: false,
        }
    }

    #[inline]
    pub fn exec(&self) -> u64 {
        self.s64(sreg::EXEC)
    }

    #[inline]
    pub fn set_exec(&mut self, v: u64) {
        self.set_s64(sreg::EXEC, v);
    }

    /// VCC (`vcc_lo` in a 32-lane wave).
    #[inline]
    pub fn vcc(&self) -> u64 {
        self.s64(sreg::VCC) & self.lane_mask()
    }

    /// The bits of the wave's lanes in a lane mask.
    #[inline]
    pub fn lane_mask(&self) -> u64 {
        if self.wave32 { 0xffff_ffff } else { u64::MAX }
    }

    /// Writes a lane mask to the scalar register(s) at `i`: one SGPR in a
    /// 32-lane wave, a pair in a 64-lane one.
    #[inline]
    pub fn set_mask(&mut self, i: u8, v: u64) {
        if self.wave32 {
            self.set_s32(i, v as u32);
        } else {
            self.set_s64(i, v);
        }
    }

    /// Reads a lane mask from the scalar register(s) at `i`.
    #[inline]
    pub fn mask(&self, i: u8) -> u64 {
        self.s64(i) & self.lane_mask()
    }

    #[inline]
    pub fn set_vcc(&mut self, v: u64) {
        self.set_mask(sreg::VCC, v);
    }

    #[inline]
    pub fn m0(&self) -> u32 {
        self.s[usize::from(sreg::M0)]
    }

    /// Reads the scalar register at file index `i` (0 outside the file).
    #[inline]
    pub fn s32(&self, i: u8) -> u32 {
        self.s.get(usize::from(i)).copied().unwrap_or(0)
    }

    /// Reads the 64-bit pair at `i`, `i + 1`.
    #[inline]
    pub fn s64(&self, i: u8) -> u64 {
        u64::from(self.s32(i)) | (u64::from(self.s32(i.wrapping_add(1))) << 32)
    }

    /// Writes a scalar register; writes to `null` and beyond the file are
    /// dropped.
    #[inline]
    pub fn set_s32(&mut self, i: u8, v: u32) {
        if i != sreg::NULL
            && let Some(r) = self.s.get_mut(usize::from(i))
        {
            *r = v;
        }
    }

    #[inline]
    pub fn set_s64(&mut self, i: u8, v: u64) {
        self.set_s32(i, v as u32);
        self.set_s32(i.wrapping_add(1), (v >> 32) as u32);
    }

    /// The vector register `i` (a zero register outside the file).
    #[inline(always)]
    pub fn vreg(&self, i: u16) -> &Lanes {
        static ZERO: Lanes = [0; 64];
        self.v.get(usize::from(i)).unwrap_or(&ZERO)
    }

    /// The vector register `i` for writing, if it exists.
    #[inline]
    pub fn vreg_mut(&mut self, i: u16) -> Option<&mut Lanes> {
        self.v.get_mut(usize::from(i))
    }

    /// Writes `vals` into vector register `i` in the lanes of `mask`.
    #[inline(always)]
    pub fn write_v(&mut self, i: u16, vals: &Lanes, mask: u64) {
        if let Some(r) = self.vreg_mut(i) {
            if mask == u64::MAX {
                *r = *vals;
            } else {
                // A select per lane, without branches, so that it vectorises.
                for (l, (d, s)) in r.iter_mut().zip(vals).enumerate() {
                    let m = ((mask >> l) as u32 & 1).wrapping_neg();
                    *d = (*s & m) | (*d & !m);
                }
            }
        }
    }

    /// The value of a hardware constant register.
    pub fn hw(&self, h: HwReg, ap: &Apertures) -> u64 {
        match h {
            HwReg::Scc => u64::from(self.scc),
            HwReg::Vccz => u64::from(self.vcc() == 0),
            HwReg::Execz => u64::from(self.exec() & self.lane_mask() == 0),
            // The aperture registers hold the 64-bit aperture address: read
            // as a 32-bit operand they give its low half, which is 0 (the
            // compiler reads them as 64 bits and keeps the high half).
            HwReg::SharedBase => ap.shared_base,
            HwReg::SharedLimit => ap.shared_base | 0xffff_ffff,
            HwReg::PrivateBase => ap.private_base,
            HwReg::PrivateLimit => ap.private_base | 0xffff_ffff,
            HwReg::PopsExitingWaveId => 0,
            HwReg::FlatScratchBaseLo => u64::from(self.s32(sreg::FLAT_SCRATCH)),
            HwReg::FlatScratchBaseHi => u64::from(self.s32(sreg::FLAT_SCRATCH + 1)),
            HwReg::LdsDirect => 0,
        }
    }

    /// A scalar source operand's 32-bit value (also the uniform value of a
    /// non-VGPR source of a vector instruction). VGPR sources read lane 0.
    #[inline]
    pub fn read_s32(&self, src: Src, w: Width, ap: &Apertures) -> u32 {
        match src {
            Src::S(i) => self.s32(i),
            Src::Lit(x) => x,
            Src::V(i) => self.vreg(i)[0],
            _ => const_bits(src, w, self, ap) as u32,
        }
    }

    /// A scalar source operand's 64-bit value (register pairs, or constants
    /// widened per `w`).
    #[inline]
    pub fn read_s64(&self, src: Src, w: Width, ap: &Apertures) -> u64 {
        match src {
            Src::S(i) => self.s64(i),
            Src::V(i) => u64::from(self.vreg(i)[0]) | (u64::from(self.vreg(i + 1)[0]) << 32),
            _ => const_bits(src, w, self, ap),
        }
    }

    /// A vector-instruction source's 32-bit lanes: a VGPR's lanes, or a
    /// scalar value broadcast.
    #[inline(always)]
    pub fn read_v32(&self, src: Src, w: Width, ap: &Apertures) -> Lanes {
        match src {
            Src::V(i) => *self.vreg(i),
            _ => [self.read_s32(src, w, ap); 64],
        }
    }

    /// A vector-instruction source's 64-bit lanes (VGPR pair or a 64-bit
    /// scalar value broadcast).
    #[inline]
    pub fn read_v64(&self, src: Src, w: Width, ap: &Apertures) -> [u64; 64] {
        match src {
            Src::V(i) => {
                let (lo, hi) = (self.vreg(i), self.vreg(i + 1));
                std::array::from_fn(|l| u64::from(lo[l]) | (u64::from(hi[l]) << 32))
            }
            _ => [self.read_s64(src, w, ap); 64],
        }
    }
}

/// The bits of a constant or hardware-register source read at width `w`.
pub fn const_bits(src: Src, w: Width, wave: &Wave, ap: &Apertures) -> u64 {
    match src {
        Src::Int(i) => match w {
            Width::B16 => u64::from(i as i16 as u16),
            Width::B32 => u64::from(i as i32 as u32),
            Width::F64 | Width::B64 => i as i64 as u64,
        },
        Src::Float(f) => match w {
            Width::B16 => u64::from(inline_f16(f)),
            Width::B32 => u64::from(if f == InlineFloat::InvTwoPi {
                0x3e22_f983
            } else {
                (f.value() as f32).to_bits()
            }),
            Width::F64 | Width::B64 => {
                if f == InlineFloat::InvTwoPi {
                    0x3fc4_5f30_6dc9_c882
                } else {
                    f.value().to_bits()
                }
            }
        },
        Src::Lit(x) => match w {
            Width::F64 => u64::from(x) << 32,
            _ => u64::from(x),
        },
        Src::Hw(h) => wave.hw(h, ap),
        Src::S(i) => match w {
            Width::F64 | Width::B64 => wave.s64(i),
            _ => u64::from(wave.s32(i)),
        },
        Src::V(i) => u64::from(wave.vreg(i)[0]),
        Src::None => 0,
    }
}

/// Half-precision bit patterns of the inline float constants.
fn inline_f16(f: InlineFloat) -> u16 {
    use InlineFloat::*;
    match f {
        Half => 0x3800,
        NegHalf => 0xb800,
        One => 0x3c00,
        NegOne => 0xbc00,
        Two => 0x4000,
        NegTwo => 0xc000,
        Four => 0x4400,
        NegFour => 0xc400,
        InvTwoPi => 0x3118,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_widen_per_operand_width() {
        let w = Wave::new(4);
        let ap = Apertures::default();
        let c = |s, k| const_bits(s, k, &w, &ap);
        assert_eq!(c(Src::Int(-1), Width::B32), 0xffff_ffff);
        assert_eq!(c(Src::Int(-1), Width::B64), u64::MAX);
        assert_eq!(c(Src::Float(InlineFloat::One), Width::B32), 0x3f80_0000);
        assert_eq!(c(Src::Float(InlineFloat::One), Width::F64), 1f64.to_bits());
        assert_eq!(c(Src::Float(InlineFloat::NegTwo), Width::B16), 0xc000);
        assert_eq!(c(Src::Lit(0x4000_0000), Width::F64), 0x4000_0000_0000_0000);
        assert_eq!(c(Src::Lit(0x8000_0000), Width::B64), 0x8000_0000);
    }

    #[test]
    fn special_registers_share_the_scalar_file() {
        let mut w = Wave::new(4);
        w.set_exec(0xdead_beef_0000_0001);
        assert_eq!(w.s[126], 1);
        assert_eq!(w.s[127], 0xdead_beef);
        w.set_s32(sreg::NULL, 5);
        assert_eq!(w.s32(sreg::NULL), 0);
        w.set_vcc(3);
        assert_eq!(
            w.read_s64(Src::S(sreg::VCC), Width::B64, &Apertures::default()),
            3
        );
    }
}
