//! The GPU targets the emulator knows, and the features that make their
//! encodings and their KFD identities differ: the one target type of every
//! crate (`rocjitsu_isa` re-exports it for its decoders).

use std::fmt;
use std::str::FromStr;

/// An AMDGPU processor the emulator knows: whose machine code
/// `rocjitsu_isa` reads and writes and whose GPUs a configuration may
/// describe (`gfx_target`, spelt as LLVM names it: `"gfx942"`).
///
/// [`Target::ALL`] lists the targets the emulator executes; the others
/// ([`Target::KNOWN`]) are read by the ISA layer (disassembly, analysis)
/// and refused by the GPU side with [`Target::not_executable`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// CDNA2 (MI200 series, MI210).
    Gfx90a,
    /// CDNA3 (MI300 series, MI300X).
    Gfx942,
    /// CDNA4 (MI350 series, MI355X).
    Gfx950,
    /// CDNA1 (MI100).
    Gfx908,
    /// RDNA1 (Navi 10: RX 5700 XT).
    Gfx1010,
    /// RDNA2 (Navi 21: RX 6900 XT, W6800).
    Gfx1030,
    /// RDNA3 (Navi 31: RX 7900 XTX, W7900).
    Gfx1100,
    /// RDNA3.5 (Strix Halo: Radeon 8060S).
    Gfx1151,
    /// RDNA4 (Navi 48: RX 9070 XT, R9700).
    Gfx1201,
}

/// The encoding family a target belongs to; one decoder module per family.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// GFX9 encodings (Vega, CDNA1-4).
    Gfx9,
    /// GFX10 encodings (RDNA1-2).
    Gfx10,
    /// GFX11 encodings (RDNA3, RDNA3.5).
    Gfx11,
    /// GFX12 encodings (RDNA4).
    Gfx12,
}

impl Target {
    /// Every target the emulator executes (configurations, kernels): the
    /// CDNA2-4 targets in release order, then CDNA1 gfx908 (so that each
    /// GFX9 target's position is its [`Target::index`]).
    pub const ALL: [Target; 4] = [
        Target::Gfx90a,
        Target::Gfx942,
        Target::Gfx950,
        Target::Gfx908,
    ];

    /// The targets whose kernels the wave engine runs (`rocjitsu
    /// run-kernel`, the engine's tests, dispatches through the driver):
    /// [`Target::ALL`], gfx1010 (RDNA1), gfx1030 (RDNA2), gfx1100 (RDNA3),
    /// gfx1151 (RDNA3.5) and gfx1201 (RDNA4), in wave32 and wave64.
    pub const KERNELS: [Target; 9] = [
        Target::Gfx90a,
        Target::Gfx942,
        Target::Gfx950,
        Target::Gfx908,
        Target::Gfx1010,
        Target::Gfx1030,
        Target::Gfx1100,
        Target::Gfx1151,
        Target::Gfx1201,
    ];

    /// The targets with a GPU configuration (`configs/*_kmd.json`): the
    /// simulated driver shows them to applications (KFD topology, DRM
    /// answers) and runs their dispatches. [`Target::ALL`], gfx1100
    /// (RDNA3, the Radeon PRO W7900), gfx1151 (RDNA3.5, the Strix Halo
    /// APU's Radeon 8060S) and gfx1201 (RDNA4, the Radeon AI PRO R9700).
    pub const CONFIGURED: [Target; 7] = [
        Target::Gfx90a,
        Target::Gfx942,
        Target::Gfx950,
        Target::Gfx908,
        Target::Gfx1100,
        Target::Gfx1151,
        Target::Gfx1201,
    ];

    /// Every target the emulator knows: [`Target::ALL`] and those whose code
    /// is read but not yet executed.
    pub const KNOWN: [Target; 9] = [
        Target::Gfx90a,
        Target::Gfx942,
        Target::Gfx950,
        Target::Gfx908,
        Target::Gfx1010,
        Target::Gfx1030,
        Target::Gfx1100,
        Target::Gfx1151,
        Target::Gfx1201,
    ];

    /// LLVM's processor name (`-mcpu`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
            Target::Gfx950 => "gfx950",
            Target::Gfx908 => "gfx908",
            Target::Gfx1010 => "gfx1010",
            Target::Gfx1030 => "gfx1030",
            Target::Gfx1100 => "gfx1100",
            Target::Gfx1151 => "gfx1151",
            Target::Gfx1201 => "gfx1201",
        }
    }

    /// The target's position among its [`Family`]'s targets; generated
    /// opcode tables index per-target columns and availability masks by it.
    #[inline]
    pub const fn index(self) -> usize {
        match self {
            Target::Gfx90a | Target::Gfx1010 | Target::Gfx1100 | Target::Gfx1201 => 0,
            Target::Gfx942 | Target::Gfx1030 | Target::Gfx1151 => 1,
            Target::Gfx950 => 2,
            Target::Gfx908 => 3,
        }
    }

    /// `1 << index()`: the target's bit in a table's availability mask.
    #[inline]
    pub const fn bit(self) -> u8 {
        1 << self.index()
    }

    /// The encoding family.
    pub fn family(self) -> Family {
        match self {
            Target::Gfx90a | Target::Gfx942 | Target::Gfx950 | Target::Gfx908 => Family::Gfx9,
            Target::Gfx1010 | Target::Gfx1030 => Family::Gfx10,
            Target::Gfx1100 | Target::Gfx1151 => Family::Gfx11,
            Target::Gfx1201 => Family::Gfx12,
        }
    }

    /// Whether `rocjitsu_isa` decodes, encodes and prints this target's
    /// machine code: every known target's (the callers that check it keep
    /// refusing, by name, a target added here before its decoder).
    pub fn decodes(self) -> bool {
        true
    }

    /// Whether `rocjitsu_isa` describes the registers each instruction of
    /// this target reads and writes (`Instruction::regs`), which control
    /// flow and liveness analysis need: GFX9, GFX11 and GFX12, not yet GFX10.
    pub fn has_register_roles(self) -> bool {
        !matches!(self, Target::Gfx1010 | Target::Gfx1030)
    }

    /// Whether the emulator executes code of this target (it is in
    /// [`Target::ALL`]).
    pub fn executes(self) -> bool {
        Target::ALL.contains(&self)
    }

    /// Whether the wave engine runs kernels of this target (it is in
    /// [`Target::KERNELS`]).
    pub fn runs_kernels(self) -> bool {
        Target::KERNELS.contains(&self)
    }

    /// Whether a GPU configuration may name this target (it is in
    /// [`Target::CONFIGURED`]).
    pub fn has_gpu_config(self) -> bool {
        Target::CONFIGURED.contains(&self)
    }

    /// The error a configuration naming a target without a GPU
    /// configuration gets, or `None`.
    pub fn not_configurable(self) -> Option<NotExecutable> {
        (!self.has_gpu_config()).then_some(NotExecutable(self))
    }

    /// The error a kernel of a target the wave engine does not run gets
    /// (`run-kernel`, the code-object loader), or `None`.
    pub fn kernels_not_executable(self) -> Option<NotExecutable> {
        (!self.runs_kernels()).then_some(NotExecutable(self))
    }

    /// The error the GPU side gives for a target it does not execute, or
    /// `None` for one it does.
    pub fn not_executable(self) -> Option<NotExecutable> {
        (!self.executes()).then_some(NotExecutable(self))
    }

    /// The KFD `gfx_target_version` (major * 10000 + minor * 100 + stepping).
    pub fn gfx_target_version(self) -> u32 {
        match self {
            Target::Gfx90a => 90010,
            Target::Gfx942 => 90402,
            Target::Gfx950 => 90500,
            Target::Gfx908 => 90008,
            Target::Gfx1010 => 100100,
            Target::Gfx1030 => 100300,
            Target::Gfx1100 => 110000,
            Target::Gfx1151 => 110501,
            Target::Gfx1201 => 120001,
        }
    }

    /// The architecture's name, as a configuration's `family` gives it.
    pub fn architecture(self) -> &'static str {
        match self {
            Target::Gfx90a => "CDNA2",
            Target::Gfx942 => "CDNA3",
            Target::Gfx950 => "CDNA4",
            Target::Gfx908 => "CDNA1",
            Target::Gfx1010 => "RDNA1",
            Target::Gfx1030 => "RDNA2",
            Target::Gfx1100 => "RDNA3",
            Target::Gfx1151 => "RDNA3.5",
            Target::Gfx1201 => "RDNA4",
        }
    }

    /// gfx90a and later CDNA (LLVM's `FeatureGFX90AInsts`; not gfx908):
    /// VGPR and AGPR tuples must be even-aligned, memory instructions take
    /// AGPR data (the `acc` bit, where gfx908 has `tfe`), 64-bit DPP is
    /// `row_newbcast` only, and packed-FP32 and FP64 MFMA exist.
    pub fn is_gfx90a_plus(self) -> bool {
        matches!(self, Target::Gfx90a | Target::Gfx942 | Target::Gfx950)
    }

    /// gfx940 and later: `sc0`/`sc1`/`nt` cache bits replace `glc`/`slc`, and
    /// several instructions were added or removed.
    pub fn is_gfx940_plus(self) -> bool {
        matches!(self, Target::Gfx942 | Target::Gfx950)
    }

    /// gfx950-only instructions (f8f6f4 and scaled MFMA, `v_prng_b32`, ...).
    pub fn is_gfx950(self) -> bool {
        matches!(self, Target::Gfx950)
    }

    /// Whether the target has the `sramecc` feature and its products run
    /// with SRAM ECC on (the Instinct parts: MI100, MI200, MI300, MI350;
    /// their ISA name reads `gfx942:sramecc+`). With ECC on, the D16 loads
    /// write zeros to the half of the register they do not load, where
    /// without it they keep it (LLVM's `d16PreservesUnusedBits`).
    pub fn sramecc_default(self) -> bool {
        self.family() == Family::Gfx9
    }

    /// Has accumulation VGPRs (AccVGPRs, `a0`..`a255`): the CDNA targets.
    pub fn has_agprs(self) -> bool {
        self.family() == Family::Gfx9
    }

    /// The wavefront size code runs in unless its kernel descriptor asks
    /// for the other one: 64 on GFX9, 32 on GFX10 and later (LLVM's default
    /// too).
    pub fn wave_size(self) -> u32 {
        match self.family() {
            Family::Gfx9 => 64,
            Family::Gfx10 | Family::Gfx11 | Family::Gfx12 => 32,
        }
    }

    /// Whether waves of 32 lanes exist (GFX10 and later; `wavefront_size32`
    /// in the kernel descriptor).
    pub fn supports_wave32(self) -> bool {
        self.family() != Family::Gfx9
    }

    /// The ELF `e_flags` machine value (EF_AMDGPU_MACH_*).
    pub fn elf_mach(self) -> u32 {
        match self {
            Target::Gfx90a => 0x3f,
            Target::Gfx942 => 0x4c,
            Target::Gfx950 => 0x4f,
            Target::Gfx908 => 0x30,
            Target::Gfx1010 => 0x33,
            Target::Gfx1030 => 0x36,
            Target::Gfx1100 => 0x41,
            Target::Gfx1151 => 0x4a,
            Target::Gfx1201 => 0x4e,
        }
    }

    /// The target for an ELF `e_flags` machine value, if known.
    pub fn from_elf_mach(mach: u32) -> Option<Target> {
        Target::KNOWN.into_iter().find(|t| t.elf_mach() == mach)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A target the emulator knows but does not execute yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0} {what} not execute yet: the emulator runs gfx908, gfx90a, gfx942, gfx950, \
     gfx1100, gfx1151 and gfx1201 code (and gfx1010 and gfx1030 kernels through run-kernel); \
     pick one of those (a \
     configuration's gfx_target, a code object's --offload-arch)",
    what = if self.0.decodes() { "decodes but does" } else { "code does" }
)]
pub struct NotExecutable(pub Target);

/// A processor name that is not a known target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown GPU target `{0}`: expected one of gfx90a, gfx942, gfx950, gfx908, gfx1010, \
     gfx1030, gfx1100, gfx1151, gfx1201"
)]
pub struct UnknownTarget(pub String);

impl FromStr for Target {
    type Err = UnknownTarget;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // Accept target IDs with features (`gfx90a:xnack-`) and the triple form.
        let base = s.split(':').next().unwrap_or(s);
        let base = base.rsplit('-').next().unwrap_or(base);
        Target::KNOWN
            .into_iter()
            .find(|t| t.name() == base)
            .ok_or_else(|| UnknownTarget(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_target_ids() {
        assert_eq!("gfx942".parse::<Target>().unwrap(), Target::Gfx942);
        assert_eq!(
            "gfx90a:sramecc+:xnack-".parse::<Target>().unwrap(),
            Target::Gfx90a
        );
        assert_eq!(
            "amdgcn-amd-amdhsa--gfx950".parse::<Target>().unwrap(),
            Target::Gfx950
        );
        assert_eq!("gfx1100".parse::<Target>().unwrap(), Target::Gfx1100);
        assert!("gfx1102".parse::<Target>().is_err());
        assert!("gfx906".parse::<Target>().is_err());
    }

    #[test]
    fn elf_mach_round_trips() {
        for t in Target::KNOWN {
            assert_eq!(Target::from_elf_mach(t.elf_mach()), Some(t));
        }
    }

    /// Targets of one family have distinct table indices.
    #[test]
    fn indices_are_distinct_within_a_family() {
        for a in Target::KNOWN {
            for b in Target::KNOWN {
                if a != b && a.family() == b.family() {
                    assert_ne!(a.index(), b.index(), "{a} {b}");
                }
            }
        }
    }

    #[test]
    fn the_engine_runs_kernels_of_the_executed_targets_and_rdna() {
        for t in Target::KNOWN {
            let want = t.executes()
                || matches!(
                    t,
                    Target::Gfx1010
                        | Target::Gfx1030
                        | Target::Gfx1100
                        | Target::Gfx1151
                        | Target::Gfx1201
                );
            assert_eq!(t.runs_kernels(), want, "{t}");
            assert_eq!(t.kernels_not_executable().is_none(), want, "{t}");
        }
    }

    #[test]
    fn configured_targets_run_their_kernels() {
        for t in Target::KNOWN {
            let want = Target::CONFIGURED.contains(&t);
            assert_eq!(t.has_gpu_config(), want, "{t}");
            assert_eq!(t.not_configurable().is_none(), want, "{t}");
            if want {
                assert!(t.runs_kernels(), "{t}");
            }
        }
        assert!(Target::Gfx1100.has_gpu_config());
        let e = Target::Gfx1030.not_configurable().unwrap().to_string();
        assert!(e.contains("gfx1100"), "{e}");
    }

    #[test]
    fn only_the_executed_targets_execute() {
        for t in Target::KNOWN {
            assert_eq!(t.not_executable().is_none(), Target::ALL.contains(&t));
        }
        for t in Target::KNOWN.into_iter().filter(|t| !t.executes()) {
            let e = t.not_executable().unwrap().to_string();
            let want = if t.decodes() {
                format!("{t} decodes but does not execute yet")
            } else {
                format!("{t} code does not execute yet")
            };
            assert!(e.starts_with(&want), "{e}");
        }
    }
}
