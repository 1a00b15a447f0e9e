//! The GPU targets the emulator implements, and the features that make their
//! encodings and their KFD identities differ: the one target type of every
//! crate (`rocjitsu_isa` re-exports it for its decoders).

use std::fmt;
use std::str::FromStr;

/// An AMDGPU processor the emulator implements: whose machine code
/// `rocjitsu_isa` reads and writes and whose GPUs a configuration describes
/// (`gfx_target`, spelt as LLVM names it: `"gfx942"`).
///
/// Only the GFX9 CDNA family is implemented today; RDNA targets (gfx11, gfx12)
/// get their own [`Family`] and decoder module.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// CDNA2 (MI200 series, MI210).
    Gfx90a,
    /// CDNA3 (MI300 series, MI300X).
    Gfx942,
    /// CDNA4 (MI350 series, MI355X).
    Gfx950,
}

/// The encoding family a target belongs to; one decoder module per family.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// GFX9 encodings (Vega, CDNA1-4).
    Gfx9,
}

impl Target {
    /// Every implemented target, in release order.
    pub const ALL: [Target; 3] = [Target::Gfx90a, Target::Gfx942, Target::Gfx950];

    /// LLVM's processor name (`-mcpu`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
            Target::Gfx950 => "gfx950",
        }
    }

    /// The target's position in [`Target::ALL`]; generated opcode tables
    /// index per-target columns and availability masks by it.
    #[inline]
    pub const fn index(self) -> usize {
        match self {
            Target::Gfx90a => 0,
            Target::Gfx942 => 1,
            Target::Gfx950 => 2,
        }
    }

    /// `1 << index()`: the target's bit in a table's availability mask.
    #[inline]
    pub const fn bit(self) -> u8 {
        1 << self.index()
    }

    /// The encoding family.
    pub fn family(self) -> Family {
        Family::Gfx9
    }

    /// The KFD `gfx_target_version` (major * 10000 + minor * 100 + stepping).
    pub fn gfx_target_version(self) -> u32 {
        match self {
            Target::Gfx90a => 90010,
            Target::Gfx942 => 90402,
            Target::Gfx950 => 90500,
        }
    }

    /// The architecture's name, as a configuration's `family` gives it.
    pub fn architecture(self) -> &'static str {
        match self {
            Target::Gfx90a => "CDNA2",
            Target::Gfx942 => "CDNA3",
            Target::Gfx950 => "CDNA4",
        }
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

    /// Has accumulation VGPRs (AccVGPRs, `a0`..`a255`). All CDNA targets do.
    pub fn has_agprs(self) -> bool {
        true
    }

    /// Native wavefront size.
    pub fn wave_size(self) -> u32 {
        64
    }

    /// The ELF `e_flags` machine value (EF_AMDGPU_MACH_*).
    pub fn elf_mach(self) -> u32 {
        match self {
            Target::Gfx90a => 0x3f,
            Target::Gfx942 => 0x4c,
            Target::Gfx950 => 0x4f,
        }
    }

    /// The target for an ELF `e_flags` machine value, if implemented.
    pub fn from_elf_mach(mach: u32) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.elf_mach() == mach)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A processor name that is not an implemented target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown GPU target `{0}`: expected one of gfx90a, gfx942, gfx950")]
pub struct UnknownTarget(pub String);

impl FromStr for Target {
    type Err = UnknownTarget;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // Accept target IDs with features (`gfx90a:xnack-`) and the triple form.
        let base = s.split(':').next().unwrap_or(s);
        let base = base.rsplit('-').next().unwrap_or(base);
        Target::ALL
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
        assert!("gfx1100".parse::<Target>().is_err());
    }

    #[test]
    fn elf_mach_round_trips() {
        for t in Target::ALL {
            assert_eq!(Target::from_elf_mach(t.elf_mach()), Some(t));
        }
    }
}
