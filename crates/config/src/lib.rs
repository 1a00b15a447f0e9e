//! GPU configurations: the JSON files under `configs/` that describe the
//! virtual GPUs (identity, SoC shape, per-CU resources, caches, memory,
//! queues and the values the simulated KFD topology reports).
//!
//! The schema is documented field by field in `configs/README.md` and, as a
//! JSON Schema, in `configs/schema.json`. Loading is strict: unknown keys are
//! rejected, and every error names the file and the JSON path of the
//! offending value (`gpus[0].soc.xcds: expected a positive integer, got 0`).

#![forbid(unsafe_code)]

pub mod env;
pub mod ip;
pub mod target;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use target::{Family, NotExecutable, Target, UnknownTarget};

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The configuration format version this loader reads.
pub const CONFIG_VERSION: u32 = 1;

/// PCI vendor id of AMD (ATI) GPUs.
pub const AMD_VENDOR_ID: u16 = 0x1002;

/// An error loading or validating a configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// The text is not valid JSON, does not match the schema, or fails
    /// semantic validation. `path` is the JSON path of the offending value
    /// (or of the object missing a field).
    #[error("{file}: {path}: {message}")]
    Invalid {
        file: String,
        path: String,
        message: String,
    },
}

impl ConfigError {
    /// JSON path of the offending value, if the error is about a value.
    pub fn path(&self) -> Option<&str> {
        match self {
            ConfigError::Io { .. } => None,
            ConfigError::Invalid { path, .. } => Some(path),
        }
    }
}

/// A configuration file: one or more GPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    /// Optional pointer to the JSON Schema, ignored by the loader.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Format version; must equal [`CONFIG_VERSION`].
    pub version: u32,
    /// The GPUs of the system, in KFD node order. May be left out only in
    /// a DBT guest configuration whose host GPUs come from elsewhere (its
    /// `simulator_config`, or the next KFD down for the `hardware` backend).
    #[serde(default)]
    pub gpus: Vec<GpuSpec>,
    /// DBT guest mode: show the application a guest GPU whose kernels are
    /// translated and run on a host GPU (see [`DbtGuest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dbt_guest: Option<DbtGuest>,
    /// Execution plugins enabled for every program on these GPUs (more come
    /// from `--plugin` and `ROCJITSU_PLUGINS`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<PluginConfig>,
}

/// One entry of a configuration's `plugins` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// The plugin's name (`rocjitsu plugins` lists them).
    pub name: String,
    /// Its options, as on the command line (`format: "jsonl"`); numbers and
    /// booleans are passed as their JSON text.
    #[serde(default)]
    pub options: std::collections::BTreeMap<String, serde_json::Value>,
    /// Whether a plugin this build does not have is an error (the default)
    /// or only a warning.
    #[serde(default = "yes")]
    pub require: bool,
}

fn yes() -> bool {
    true
}

/// An ISA a DBT guest or host may name. Wider than [`Target`] (the
/// targets the emulator implements): gfx1250's steppings are named here so
/// that the revision rules can be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DbtIsa {
    Gfx90a,
    Gfx942,
    Gfx950,
    Gfx1250,
}

impl DbtIsa {
    pub fn name(self) -> &'static str {
        match self {
            DbtIsa::Gfx90a => "gfx90a",
            DbtIsa::Gfx942 => "gfx942",
            DbtIsa::Gfx950 => "gfx950",
            DbtIsa::Gfx1250 => "gfx1250",
        }
    }

    /// The emulator's target of this ISA, if it implements it.
    pub fn gfx_target(self) -> Option<Target> {
        match self {
            DbtIsa::Gfx90a => Some(Target::Gfx90a),
            DbtIsa::Gfx942 => Some(Target::Gfx942),
            DbtIsa::Gfx950 => Some(Target::Gfx950),
            DbtIsa::Gfx1250 => None,
        }
    }

    /// Whether steppings of this ISA share an ELF machine id (so a code
    /// object does not say which one it was built for).
    pub fn has_revisions(self) -> bool {
        self == DbtIsa::Gfx1250
    }
}

impl fmt::Display for DbtIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A stepping of an ISA whose steppings share an ELF machine id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DbtRevision {
    #[default]
    Unspecified,
    A0,
    B0,
}

/// Where translated guest kernels run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DbtBackend {
    /// The next KFD down: a real `/dev/kfd`, or a rocjitsu daemon serving
    /// an emulated host GPU.
    Hardware,
    /// rocjitsu's emulated host GPU, in the application's process.
    Simulator,
}

/// How much the DBT guest layers log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DbtLogLevel {
    Off,
    Error,
    #[default]
    Warn,
    Info,
    Debug,
    Trace,
}

impl DbtLogLevel {
    pub fn name(self) -> &'static str {
        match self {
            DbtLogLevel::Off => "off",
            DbtLogLevel::Error => "error",
            DbtLogLevel::Warn => "warn",
            DbtLogLevel::Info => "info",
            DbtLogLevel::Debug => "debug",
            DbtLogLevel::Trace => "trace",
        }
    }
}

/// The `dbt_guest` block: the application sees a `guest_isa` GPU; its
/// kernels are translated to `host_isa` and run on host GPU `host_gpu_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DbtGuest {
    pub enabled: bool,
    /// The ISA the application sees (and compiles for).
    pub guest_isa: DbtIsa,
    /// The ISA of the GPU that runs the translated code.
    pub host_isa: DbtIsa,
    /// The host GPU: its index among the host's GPU nodes (KFD node order,
    /// as ROCR_VISIBLE_DEVICES counts them), from 0.
    #[serde(default)]
    pub host_gpu_id: u32,
    pub execution_backend: DbtBackend,
    /// A host GPU configuration for the `simulator` backend, relative to
    /// this file; when given, its GPUs take precedence over `gpus` here.
    /// [`GpuConfig::load`] replaces it with the resolved path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulator_config: Option<String>,
    #[serde(default)]
    pub guest_revision: DbtRevision,
    #[serde(default)]
    pub host_revision: DbtRevision,
    #[serde(default)]
    pub log_level: DbtLogLevel,
}

impl DbtGuest {
    /// The emulator target of the guest (its identity comes from the
    /// shipped configuration of that target).
    pub fn guest_target(&self) -> Option<Target> {
        self.guest_isa.gfx_target()
    }

    /// Checks that do not depend on the host GPUs; paths under `p`.
    fn validate(&self, p: &str) -> Check {
        for (field, isa, rev) in [
            ("guest_revision", self.guest_isa, self.guest_revision),
            ("host_revision", self.host_isa, self.host_revision),
        ] {
            if !isa.has_revisions() && rev != DbtRevision::Unspecified {
                return fail(
                    format!("{p}.{field}"),
                    format!(
                        "{isa} has no revisions that share an ELF machine id; leave {field} out (or `unspecified`)"
                    ),
                );
            }
        }
        if self.guest_isa == self.host_isa {
            if !self.guest_isa.has_revisions() {
                return fail(
                    format!("{p}.host_isa"),
                    format!(
                        "guest and host are both {}: there is nothing to translate; run on a {} configuration without dbt_guest",
                        self.guest_isa, self.host_isa
                    ),
                );
            }
            for (field, rev) in [
                ("guest_revision", self.guest_revision),
                ("host_revision", self.host_revision),
            ] {
                if rev == DbtRevision::Unspecified {
                    return fail(
                        format!("{p}.{field}"),
                        format!(
                            "a {} guest on a {} host needs both guest_revision and host_revision (`a0` or `b0`): the steppings share an ELF machine id",
                            self.guest_isa, self.host_isa
                        ),
                    );
                }
            }
            if self.guest_revision == self.host_revision {
                return fail(
                    format!("{p}.host_revision"),
                    "guest and host are the same ISA and revision: there is nothing to translate"
                        .into(),
                );
            }
        }
        if self.guest_target().is_none() {
            return fail(
                format!("{p}.guest_isa"),
                format!(
                    "no {} GPU identity is available (the emulator knows gfx90a, gfx942 and gfx950)",
                    self.guest_isa
                ),
            );
        }
        if self.execution_backend == DbtBackend::Hardware && self.simulator_config.is_some() {
            return fail(
                format!("{p}.simulator_config"),
                "only the `simulator` execution backend uses a simulator configuration; remove it or set execution_backend to `simulator`".into(),
            );
        }
        if self.simulator_config.as_deref() == Some("") {
            return fail(
                format!("{p}.simulator_config"),
                "expected a path to a host GPU configuration, got an empty string".into(),
            );
        }
        Ok(())
    }

    /// Checks against the host GPUs the simulator emulates.
    fn validate_host(&self, p: &str, gpus: &[GpuSpec], from: &str) -> Check {
        let Some(host) = self.host_isa.gfx_target() else {
            return fail(
                format!("{p}.host_isa"),
                format!(
                    "the simulator does not implement {}; it emulates gfx90a, gfx942 and gfx950",
                    self.host_isa
                ),
            );
        };
        let Some(g) = gpus.get(self.host_gpu_id as usize) else {
            return fail(
                format!("{p}.host_gpu_id"),
                format!(
                    "{} names host GPU {}, but {from} has {} GPU(s) (counted from 0)",
                    self.host_gpu_id,
                    self.host_gpu_id,
                    gpus.len()
                ),
            );
        };
        if g.gfx_target != host {
            return fail(
                format!("{p}.host_isa"),
                format!(
                    "host GPU {} of {from} is a {} ({}), not a {host}",
                    self.host_gpu_id, g.gfx_target, g.marketing_name
                ),
            );
        }
        Ok(())
    }
}

/// One GPU (one KFD node).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    /// Marketing name, e.g. `AMD Instinct MI300X`.
    pub marketing_name: String,
    /// LLVM processor name.
    pub gfx_target: Target,
    /// KFD `gfx_target_version`; must agree with `gfx_target`.
    pub gfx_target_version: u32,
    /// Architecture family (`CDNA2`, `CDNA3`, `CDNA4`); must agree with `gfx_target`.
    pub family: String,
    /// An APU: the GPU shares the host's memory (amdgpu's `AMD_IS_APU`).
    /// The DRM device info carries `AMDGPU_IDS_FLAGS_FUSION`, which
    /// libhsakmt turns into the node's `Integrated` flag and ROCr into
    /// the agent's `HSA_AMD_MEMORY_PROPERTY_AGENT_IS_APU`; the KFD node is
    /// otherwise a GPU node of its own (`cpu_cores_count` 0), and
    /// `memory.size_bytes` is the local memory KFD reports for it (TTM's
    /// page limit where the carve-out is small, `apu_prefer_gtt`).
    #[serde(default)]
    pub apu: bool,
    pub pci: Pci,
    pub soc: Soc,
    pub cu: Cu,
    pub caches: Caches,
    pub memory: Memory,
    pub queues: Queues,
    #[serde(default)]
    pub kfd: Kfd,
}

/// PCI identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pci {
    /// PCI vendor id (0x1002 for AMD).
    pub vendor_id: u16,
    /// PCI device id.
    pub device_id: u16,
    /// PCI revision id.
    #[serde(default)]
    pub revision_id: u8,
    /// PCI domain (segment).
    #[serde(default)]
    pub domain: u32,
    /// PCI bus/device/function as `bus << 8 | device << 3 | function`.
    #[serde(default)]
    pub location_id: u32,
}

/// SoC layout: XCDs (accelerator complex dies, one XCC each), shader engines
/// per XCD, CUs per shader engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Soc {
    /// Number of XCDs (KFD `num_xcc`).
    pub xcds: u32,
    /// Shader engines per XCD.
    pub shader_engines_per_xcd: u32,
    /// Shader arrays per shader engine (KFD `simd_arrays_per_engine`).
    #[serde(default = "one")]
    pub shader_arrays_per_engine: u32,
    /// Active CUs in each shader engine of an XCD (same for every XCD);
    /// its length is `shader_engines_per_xcd`.
    pub cus_per_shader_engine: Vec<u32>,
    /// Physical CUs per shader array, active or not (KFD `cu_per_simd_array`).
    pub max_cus_per_shader_array: u32,
    /// Active CUs of the whole GPU; must equal `xcds * sum(cus_per_shader_engine)`.
    pub total_cus: u32,
    /// Peak engine (shader) clock in MHz (KFD `max_engine_clk_fcompute`).
    pub max_engine_clock_mhz: u32,
}

fn one() -> u32 {
    1
}

/// Per-CU resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cu {
    /// SIMD units per CU (KFD `simd_per_cu`).
    pub simds: u32,
    /// Wave slots per SIMD (KFD `max_waves_per_simd`).
    pub wave_slots_per_simd: u32,
    /// Lanes per wave: 64 on CDNA, 32 on RDNA (KFD `wave_front_size`;
    /// RDNA runs wave64 kernels too, as their descriptors ask).
    #[serde(default = "wave64")]
    pub wavefront_size: u32,
    /// Local data share per CU in bytes (KFD `lds_size_in_kb` * 1024).
    pub lds_bytes: u32,
    /// Vector registers per SIMD lane, architectural and accumulation together
    /// (the unified VGPR file).
    pub vgprs_per_simd: u32,
    /// Most architectural VGPRs (v0..) one wave may address.
    pub max_vgprs_per_wave: u32,
    /// Most accumulation VGPRs (a0..) one wave may address.
    pub max_agprs_per_wave: u32,
    /// VGPR allocation granule (registers per lane).
    pub vgpr_alloc_granule: u32,
    /// Scalar registers per SIMD.
    pub sgprs_per_simd: u32,
    /// Most SGPRs one wave may address (excluding VCC and trap temporaries).
    pub max_sgprs_per_wave: u32,
    /// SGPR allocation granule.
    pub sgpr_alloc_granule: u32,
    /// Most work-items in a workgroup.
    #[serde(default = "max_wg")]
    pub max_workgroup_size: u32,
    /// Scratch wave slots per CU (KFD `max_slots_scratch_cu`).
    pub max_scratch_slots: u32,
}

fn wave64() -> u32 {
    64
}

fn max_wg() -> u32 {
    1024
}

/// Cache hierarchy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Caches {
    /// Vector L1 (TCP), one per CU.
    pub l1_vector: CuCache,
    /// Scalar data cache, shared by `cus_per_instance` CUs.
    pub l1_scalar: CuCache,
    /// Instruction cache, shared by `cus_per_instance` CUs.
    pub l1_instruction: CuCache,
    /// RDNA's graphics L1 (GL1), one per shader array, shared by its
    /// `cus_per_instance` CUs; absent or `null` on CDNA, which has none.
    #[serde(default)]
    pub gl1: Option<CuCache>,
    /// L2 (TCC), one per XCD.
    pub l2: L2Cache,
    /// Memory-attached last-level cache (AMD Infinity Cache); absent or
    /// `null` when the part has none.
    #[serde(default)]
    pub mall: Option<Mall>,
}

/// A cache private to one CU or shared by a few.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CuCache {
    /// Capacity of one instance in bytes (power of two).
    pub size_bytes: u32,
    /// Line size in bytes (power of two).
    pub line_bytes: u32,
    /// Ways (1 = direct mapped).
    pub associativity: u32,
    /// CUs sharing one instance.
    #[serde(default = "one")]
    pub cus_per_instance: u32,
}

/// The L2 cache of one XCD.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Cache {
    /// Capacity per XCD in bytes (a multiple of 64 KiB: Navi 31's 6 MiB
    /// is not a power of two).
    pub size_bytes_per_xcd: u32,
    /// Line size in bytes (power of two).
    pub line_bytes: u32,
    /// Ways.
    pub associativity: u32,
    /// Channels (slices) per XCD.
    pub channels: u32,
}

/// The memory-attached last-level cache of the whole GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mall {
    /// Capacity in bytes (a multiple of 1 MiB).
    pub size_bytes: u64,
    /// Line size in bytes (power of two).
    pub line_bytes: u32,
}

/// Device memory (KFD `mem_banks`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// Memory technology, e.g. `HBM3`, `GDDR6`.
    pub kind: String,
    /// Capacity in bytes (a multiple of 1 MiB; KFD `local_mem_size`).
    pub size_bytes: u64,
    /// Bus width in bits (a multiple of 16: GDDR6 channels are 16 bits).
    pub bus_width_bits: u32,
    /// Peak memory clock in MHz (KFD `mem_clk_max`).
    pub clock_mhz: u32,
    /// HBM stacks, or GDDR memory devices.
    pub stacks: u32,
}

/// Hardware queues, DMA engines and doorbells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Queues {
    /// SDMA engines for host<->device copies (KFD `num_sdma_engines`).
    pub sdma_engines: u32,
    /// SDMA engines dedicated to XGMI peer copies (KFD `num_sdma_xgmi_engines`).
    pub sdma_xgmi_engines: u32,
    /// Queues per SDMA engine (KFD `num_sdma_queues_per_engine`).
    pub sdma_queues_per_engine: u32,
    /// Micro engines for compute (MEC) per XCC.
    pub mecs_per_xcc: u32,
    /// Pipes per MEC.
    pub pipes_per_mec: u32,
    /// Hardware queues per pipe.
    pub queues_per_pipe: u32,
    /// Compute queues the KFD may map to hardware, whole GPU (KFD `num_cp_queues`).
    pub cp_queues: u32,
    /// Size of one doorbell in bytes (8: 64-bit doorbells on GFX9).
    pub doorbell_bytes: u32,
    /// Doorbells in one process's doorbell page range.
    pub doorbells_per_process: u32,
}

/// Bits of the KFD node property `capability` (kfd_topology.h).
pub mod hsa_cap {
    /// The GPU runs with SRAM ECC on (the ISA name reads `sramecc+`).
    pub const SRAM_EDCSUPPORTED: u32 = 0x0400_0000;
    /// SRAM ECC's old bit, which the kernel keeps 0 ("old buggy user mode
    /// depends on this being 0").
    pub const RESERVED_WAS_SRAM_EDCSUPPORTED: u32 = 0x0008_0000;
}

/// Values the simulated KFD topology reports that are not implied by the
/// rest of the configuration. All default to 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Kfd {
    /// Global data share per XCC in KiB (`gds_size_in_kb`).
    pub gds_size_in_kb: u32,
    /// Global wave sync resources (`num_gws`).
    pub num_gws: u32,
    /// HSA capability bits (`capability`).
    pub capability: u32,
    /// Debugger properties (`debug_prop`).
    pub debug_prop: u64,
    /// MEC firmware version (`fw_version`).
    pub fw_version: u32,
    /// SDMA firmware version (`sdma_fw_version`).
    pub sdma_fw_version: u32,
    /// XGMI hive id, 0 when not in a hive (`hive_id`).
    pub hive_id: u64,
    /// Unique id of the device (`unique_id`).
    pub unique_id: u64,
    /// DRM render node minor number (`drm_render_minor`).
    pub drm_render_minor: u32,
    /// Peak clock of the host CPU in MHz (`max_engine_clk_ccompute`).
    pub host_cpu_clock_mhz: u32,
}

impl GpuConfig {
    /// The configuration shipped in `configs/` for a target: MI210
    /// (gfx90a), MI300X (gfx942), MI355X (gfx950), MI100 (gfx908) or
    /// Radeon PRO W7900 (gfx1100).
    ///
    /// # Panics
    /// For a target outside [`Target::CONFIGURED`] (none is shipped).
    pub fn builtin(target: Target) -> GpuConfig {
        let (name, text) = match target {
            Target::Gfx90a => (
                "configs/gfx90a_cdna2_kmd.json",
                include_str!("../../../configs/gfx90a_cdna2_kmd.json"),
            ),
            Target::Gfx942 => (
                "configs/gfx942_cdna3_kmd.json",
                include_str!("../../../configs/gfx942_cdna3_kmd.json"),
            ),
            Target::Gfx950 => (
                "configs/gfx950_cdna4_kmd.json",
                include_str!("../../../configs/gfx950_cdna4_kmd.json"),
            ),
            Target::Gfx908 => (
                "configs/gfx908_cdna1_kmd.json",
                include_str!("../../../configs/gfx908_cdna1_kmd.json"),
            ),
            Target::Gfx1100 => (
                "configs/gfx1100_rdna3_kmd.json",
                include_str!("../../../configs/gfx1100_rdna3_kmd.json"),
            ),
            Target::Gfx1151 => (
                "configs/gfx1151_rdna35_kmd.json",
                include_str!("../../../configs/gfx1151_rdna35_kmd.json"),
            ),
            Target::Gfx1201 => (
                "configs/gfx1201_rdna4_kmd.json",
                include_str!("../../../configs/gfx1201_rdna4_kmd.json"),
            ),
            t => panic!("{}", NotExecutable(t)),
        };
        // The shipped files are validated by this crate's tests.
        GpuConfig::from_str(name, text).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Reads, parses and validates a configuration file.
    pub fn load(path: impl AsRef<Path>) -> Result<GpuConfig, ConfigError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            file: file.clone(),
            source,
        })?;
        let mut config = GpuConfig::parse(&file, &text)?;
        if let Some(d) = &mut config.dbt_guest
            && let Some(rel) = &d.simulator_config
        {
            // Relative to the file that names it.
            let host_path = path.parent().unwrap_or(Path::new(".")).join(rel);
            let host = GpuConfig::load(&host_path).map_err(|e| ConfigError::Invalid {
                file: file.clone(),
                path: "dbt_guest.simulator_config".into(),
                message: format!("cannot use {}: {e}", host_path.display()),
            })?;
            if host.dbt_guest.is_some() {
                return Err(ConfigError::Invalid {
                    file,
                    path: "dbt_guest.simulator_config".into(),
                    message: format!(
                        "{} is itself a DBT guest configuration; name a plain host GPU configuration (e.g. gfx942_cdna3_kmd.json)",
                        host_path.display()
                    ),
                });
            }
            let resolved = std::fs::canonicalize(&host_path).unwrap_or(host_path);
            d.simulator_config = Some(resolved.display().to_string());
            config.gpus = host.gpus;
        }
        config
            .validate()
            .map_err(|(path, message)| ConfigError::Invalid {
                file,
                path,
                message,
            })?;
        Ok(config)
    }

    /// Parses and validates configuration text; `name` names the source in errors.
    #[allow(clippy::should_implement_trait)]
    /// A `dbt_guest.simulator_config` is resolved against the current
    /// directory (use [`GpuConfig::load`] to resolve it against the file).
    pub fn from_str(name: &str, text: &str) -> Result<GpuConfig, ConfigError> {
        let mut config = GpuConfig::parse(name, text)?;
        if let Some(d) = &mut config.dbt_guest
            && let Some(rel) = &d.simulator_config
        {
            let host = GpuConfig::load(rel).map_err(|e| ConfigError::Invalid {
                file: name.to_string(),
                path: "dbt_guest.simulator_config".into(),
                message: format!("cannot use {rel}: {e}"),
            })?;
            config.gpus = host.gpus;
        }
        config
            .validate()
            .map_err(|(path, message)| ConfigError::Invalid {
                file: name.to_string(),
                path,
                message,
            })?;
        Ok(config)
    }

    /// Parses and makes the checks that need no other file.
    fn parse(name: &str, text: &str) -> Result<GpuConfig, ConfigError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let config: GpuConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            ConfigError::Invalid {
                file: name.to_string(),
                path: if path == "." { "$".to_string() } else { path },
                message: e.into_inner().to_string(),
            }
        })?;
        if let Some(d) = &config.dbt_guest {
            d.validate("dbt_guest")
                .map_err(|(path, message)| ConfigError::Invalid {
                    file: name.to_string(),
                    path,
                    message,
                })?;
        }
        Ok(config)
    }

    /// The DBT guest block, if it is enabled.
    pub fn guest(&self) -> Option<&DbtGuest> {
        self.dbt_guest.as_ref().filter(|d| d.enabled)
    }

    /// Semantic checks beyond the types: counts add up, sizes are powers of
    /// two where the hardware needs it, identity fields agree with the target.
    /// Returns the JSON path and message of the first problem.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.version != CONFIG_VERSION {
            return Err((
                "version".into(),
                format!(
                    "unsupported version {}, expected {CONFIG_VERSION}",
                    self.version
                ),
            ));
        }
        for (i, gpu) in self.gpus.iter().enumerate() {
            gpu.validate(&format!("gpus[{i}]"))?;
        }
        match &self.dbt_guest {
            Some(d) => {
                d.validate("dbt_guest")?;
                if d.execution_backend == DbtBackend::Simulator {
                    if self.gpus.is_empty() {
                        return Err((
                            "gpus".into(),
                            "the simulator backend needs the host GPUs: list them in `gpus` or name a host configuration in dbt_guest.simulator_config".into(),
                        ));
                    }
                    let from = if d.simulator_config.is_some() {
                        "the simulator configuration"
                    } else {
                        "`gpus`"
                    };
                    d.validate_host("dbt_guest", &self.gpus, from)?;
                }
            }
            None if self.gpus.is_empty() => {
                return Err(("gpus".into(), "expected at least one GPU".into()));
            }
            None => {}
        }
        Ok(())
    }
}

type Check = Result<(), (String, String)>;

fn positive(path: &str, field: &str, v: u64) -> Check {
    if v == 0 {
        return Err((
            format!("{path}.{field}"),
            format!("expected a positive integer, got {v}"),
        ));
    }
    Ok(())
}

fn pow2(path: &str, field: &str, v: u64) -> Check {
    if !v.is_power_of_two() {
        return Err((
            format!("{path}.{field}"),
            format!("expected a power of two, got {v}"),
        ));
    }
    Ok(())
}

fn multiple(path: &str, field: &str, v: u64, of: u64, what: &str) -> Check {
    if v == 0 || !v.is_multiple_of(of) {
        return Err((
            format!("{path}.{field}"),
            format!("expected a positive multiple of {what}, got {v}"),
        ));
    }
    Ok(())
}

fn fail(path: String, message: String) -> Check {
    Err((path, message))
}

impl GpuSpec {
    fn validate(&self, p: &str) -> Check {
        let t = self.gfx_target;
        if let Some(e) = t.not_configurable() {
            return fail(format!("{p}.gfx_target"), e.to_string());
        }
        if self.gfx_target_version != t.gfx_target_version() {
            return fail(
                format!("{p}.gfx_target_version"),
                format!(
                    "{} has gfx_target_version {}, got {}",
                    t,
                    t.gfx_target_version(),
                    self.gfx_target_version
                ),
            );
        }
        if self.family != t.architecture() {
            return fail(
                format!("{p}.family"),
                format!(
                    "{} is family {}, got {:?}",
                    t,
                    t.architecture(),
                    self.family
                ),
            );
        }
        if self.marketing_name.trim().is_empty() {
            return fail(
                format!("{p}.marketing_name"),
                "expected a non-empty name".into(),
            );
        }
        if self.pci.vendor_id != AMD_VENDOR_ID {
            return fail(
                format!("{p}.pci.vendor_id"),
                format!(
                    "expected {AMD_VENDOR_ID} (0x1002, AMD), got {}",
                    self.pci.vendor_id
                ),
            );
        }
        positive(&format!("{p}.pci"), "device_id", self.pci.device_id.into())?;
        if self.kfd.capability & hsa_cap::RESERVED_WAS_SRAM_EDCSUPPORTED != 0 {
            return fail(
                format!("{p}.kfd.capability"),
                format!(
                    "bit 19 (0x80000) is reserved and always 0 on a real KFD; SRAM ECC is bit 26 \
                     (0x4000000, HSA_CAP_SRAM_EDCSUPPORTED): use {}",
                    (self.kfd.capability & !hsa_cap::RESERVED_WAS_SRAM_EDCSUPPORTED)
                        | hsa_cap::SRAM_EDCSUPPORTED
                ),
            );
        }
        if self.kfd.capability & hsa_cap::SRAM_EDCSUPPORTED != 0 && !t.sramecc_default() {
            return fail(
                format!("{p}.kfd.capability"),
                format!("{t} has no SRAM ECC (sramecc); clear bit 26 (0x4000000)"),
            );
        }

        let s = &self.soc;
        let sp = format!("{p}.soc");
        positive(&sp, "xcds", s.xcds.into())?;
        positive(
            &sp,
            "shader_engines_per_xcd",
            s.shader_engines_per_xcd.into(),
        )?;
        positive(
            &sp,
            "shader_arrays_per_engine",
            s.shader_arrays_per_engine.into(),
        )?;
        positive(
            &sp,
            "max_cus_per_shader_array",
            s.max_cus_per_shader_array.into(),
        )?;
        positive(&sp, "max_engine_clock_mhz", s.max_engine_clock_mhz.into())?;
        if s.cus_per_shader_engine.len() != s.shader_engines_per_xcd as usize {
            return fail(
                format!("{sp}.cus_per_shader_engine"),
                format!(
                    "expected {} entries (shader_engines_per_xcd), got {}",
                    s.shader_engines_per_xcd,
                    s.cus_per_shader_engine.len()
                ),
            );
        }
        let max_per_se =
            u64::from(s.max_cus_per_shader_array) * u64::from(s.shader_arrays_per_engine);
        for (i, &n) in s.cus_per_shader_engine.iter().enumerate() {
            let f = format!("cus_per_shader_engine[{i}]");
            positive(&sp, &f, n.into())?;
            if u64::from(n) > max_per_se {
                return fail(
                    format!("{sp}.{f}"),
                    format!(
                        "{n} CUs exceed max_cus_per_shader_array * shader_arrays_per_engine = {max_per_se}"
                    ),
                );
            }
        }
        let per_xcd: u64 = s.cus_per_shader_engine.iter().map(|&n| u64::from(n)).sum();
        let total = per_xcd * u64::from(s.xcds);
        if total != u64::from(s.total_cus) {
            return fail(
                format!("{sp}.total_cus"),
                format!(
                    "expected xcds * sum(cus_per_shader_engine) = {} * {per_xcd} = {total}, got {}",
                    s.xcds, s.total_cus
                ),
            );
        }

        let c = &self.cu;
        let cp = format!("{p}.cu");
        positive(&cp, "simds", c.simds.into())?;
        positive(&cp, "wave_slots_per_simd", c.wave_slots_per_simd.into())?;
        if c.wavefront_size != t.wave_size() {
            return fail(
                format!("{cp}.wavefront_size"),
                format!(
                    "{t} ({}) waves have {} lanes, got {}",
                    t.architecture(),
                    t.wave_size(),
                    c.wavefront_size
                ),
            );
        }
        if !t.has_agprs() && c.max_agprs_per_wave != 0 {
            return fail(
                format!("{cp}.max_agprs_per_wave"),
                format!(
                    "{t} has no accumulation VGPRs; expected 0, got {}",
                    c.max_agprs_per_wave
                ),
            );
        }
        multiple(&cp, "lds_bytes", c.lds_bytes.into(), 1024, "1024 (1 KiB)")?;
        positive(&cp, "vgpr_alloc_granule", c.vgpr_alloc_granule.into())?;
        positive(&cp, "sgpr_alloc_granule", c.sgpr_alloc_granule.into())?;
        // RDNA's granules are not powers of two: gfx1100 allocates VGPRs
        // by 24 in wave32, and each wave gets all 106 SGPRs.
        if t.family() == Family::Gfx9 {
            pow2(&cp, "vgpr_alloc_granule", c.vgpr_alloc_granule.into())?;
            pow2(&cp, "sgpr_alloc_granule", c.sgpr_alloc_granule.into())?;
        }
        multiple(
            &cp,
            "vgprs_per_simd",
            c.vgprs_per_simd.into(),
            c.vgpr_alloc_granule.into(),
            "vgpr_alloc_granule",
        )?;
        positive(&cp, "max_vgprs_per_wave", c.max_vgprs_per_wave.into())?;
        if c.max_vgprs_per_wave + c.max_agprs_per_wave > c.vgprs_per_simd {
            return fail(
                format!("{cp}.max_agprs_per_wave"),
                format!(
                    "max_vgprs_per_wave + max_agprs_per_wave = {} exceeds vgprs_per_simd = {}",
                    c.max_vgprs_per_wave + c.max_agprs_per_wave,
                    c.vgprs_per_simd
                ),
            );
        }
        positive(&cp, "max_sgprs_per_wave", c.max_sgprs_per_wave.into())?;
        if c.max_sgprs_per_wave > c.sgprs_per_simd {
            return fail(
                format!("{cp}.max_sgprs_per_wave"),
                format!(
                    "{} exceeds sgprs_per_simd = {}",
                    c.max_sgprs_per_wave, c.sgprs_per_simd
                ),
            );
        }
        if c.max_workgroup_size == 0
            || !c.max_workgroup_size.is_multiple_of(c.wavefront_size)
            || c.max_workgroup_size > c.wavefront_size * c.simds * c.wave_slots_per_simd
        {
            return fail(
                format!("{cp}.max_workgroup_size"),
                format!(
                    "expected a multiple of wavefront_size that fits in one CU, got {}",
                    c.max_workgroup_size
                ),
            );
        }
        positive(&cp, "max_scratch_slots", c.max_scratch_slots.into())?;

        let k = format!("{p}.caches");
        for (name, cache) in [
            ("l1_vector", Some(&self.caches.l1_vector)),
            ("l1_scalar", Some(&self.caches.l1_scalar)),
            ("l1_instruction", Some(&self.caches.l1_instruction)),
            ("gl1", self.caches.gl1.as_ref()),
        ]
        .into_iter()
        .filter_map(|(n, c)| Some((n, c?)))
        {
            let cp = format!("{k}.{name}");
            pow2(&cp, "size_bytes", cache.size_bytes.into())?;
            pow2(&cp, "line_bytes", cache.line_bytes.into())?;
            positive(&cp, "associativity", cache.associativity.into())?;
            positive(&cp, "cus_per_instance", cache.cus_per_instance.into())?;
            if cache.line_bytes > cache.size_bytes {
                return fail(
                    format!("{cp}.line_bytes"),
                    "line larger than the cache".into(),
                );
            }
        }
        let l2 = &self.caches.l2;
        let lp = format!("{k}.l2");
        multiple(
            &lp,
            "size_bytes_per_xcd",
            l2.size_bytes_per_xcd.into(),
            64 << 10,
            "64 KiB",
        )?;
        pow2(&lp, "line_bytes", l2.line_bytes.into())?;
        positive(&lp, "associativity", l2.associativity.into())?;
        positive(&lp, "channels", l2.channels.into())?;
        if let Some(m) = &self.caches.mall {
            let mp = format!("{k}.mall");
            multiple(&mp, "size_bytes", m.size_bytes, 1 << 20, "1 MiB")?;
            pow2(&mp, "line_bytes", m.line_bytes.into())?;
        }

        let m = &self.memory;
        let mp = format!("{p}.memory");
        multiple(&mp, "size_bytes", m.size_bytes, 1 << 20, "1 MiB")?;
        multiple(&mp, "bus_width_bits", m.bus_width_bits.into(), 16, "16")?;
        positive(&mp, "clock_mhz", m.clock_mhz.into())?;
        positive(&mp, "stacks", m.stacks.into())?;

        let q = &self.queues;
        let qp = format!("{p}.queues");
        positive(&qp, "sdma_engines", q.sdma_engines.into())?;
        positive(
            &qp,
            "sdma_queues_per_engine",
            q.sdma_queues_per_engine.into(),
        )?;
        positive(&qp, "mecs_per_xcc", q.mecs_per_xcc.into())?;
        positive(&qp, "pipes_per_mec", q.pipes_per_mec.into())?;
        positive(&qp, "queues_per_pipe", q.queues_per_pipe.into())?;
        let hw = u64::from(s.xcds)
            * u64::from(q.mecs_per_xcc)
            * u64::from(q.pipes_per_mec)
            * u64::from(q.queues_per_pipe);
        positive(&qp, "cp_queues", q.cp_queues.into())?;
        if u64::from(q.cp_queues) > hw {
            return fail(
                format!("{qp}.cp_queues"),
                format!(
                    "{} exceeds the hardware queues (xcds * mecs_per_xcc * pipes_per_mec * queues_per_pipe = {hw})",
                    q.cp_queues
                ),
            );
        }
        if q.doorbell_bytes != 4 && q.doorbell_bytes != 8 {
            return fail(
                format!("{qp}.doorbell_bytes"),
                format!("expected 4 or 8, got {}", q.doorbell_bytes),
            );
        }
        positive(&qp, "doorbells_per_process", q.doorbells_per_process.into())?;
        Ok(())
    }

    /// Active CUs per XCD.
    pub fn cus_per_xcd(&self) -> u32 {
        self.soc.cus_per_shader_engine.iter().sum()
    }

    /// Shader engines of the whole GPU (KFD `array_count` / `simd_arrays_per_engine`).
    pub fn shader_engines(&self) -> u32 {
        self.soc.xcds * self.soc.shader_engines_per_xcd
    }

    /// SIMDs of the whole GPU (KFD `simd_count`).
    pub fn simd_count(&self) -> u32 {
        self.soc.total_cus * self.cu.simds
    }

    /// Wave slots of the whole GPU.
    pub fn wave_slots(&self) -> u64 {
        u64::from(self.simd_count()) * u64::from(self.cu.wave_slots_per_simd)
    }

    /// LDS per CU in KiB (KFD `lds_size_in_kb`).
    pub fn lds_size_in_kb(&self) -> u32 {
        self.cu.lds_bytes / 1024
    }

    /// The node's `capability` as KFD publishes it: the configured bits,
    /// plus `HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED` where KFD's
    /// `kfd_topology_set_dbg_firmware_support` sets it for the CDNA parts:
    /// MI100 (GC 9.4.1) from MEC firmware 60, MI200 (GC 9.4.2) from 51,
    /// MI300 and MI350 (GC 9.4.3, 9.5.0) always. The bit tells the runtime
    /// the CP can raise queue exceptions, so ROCr enables KFD's exception
    /// reporting (`AMDKFD_IOC_RUNTIME_ENABLE`) and installs its exception
    /// trap handler.
    pub fn capability(&self) -> u32 {
        const TRAP_DEBUG_FIRMWARE_SUPPORTED: u32 = 0x2000_0000;
        let fw = self.kfd.fw_version;
        let supported = match self.gfx_target_version {
            90008 => fw >= 60,
            90010 => fw >= 51,
            90402 | 90500 => true,
            _ => false,
        };
        self.kfd.capability
            | if supported {
                TRAP_DEBUG_FIRMWARE_SUPPORTED
            } else {
                0
            }
    }

    /// The GPU-specific lines of the KFD topology node's `properties` file
    /// (`/sys/class/kfd/kfd/topology/nodes/N/properties`), in the kernel's
    /// order, as (name, value). Per-system values (ids of CPU cores and
    /// SIMDs, link counts) are left to the caller.
    pub fn kfd_properties(&self) -> Vec<(&'static str, u64)> {
        let s = &self.soc;
        let c = &self.cu;
        let q = &self.queues;
        let k = &self.kfd;
        vec![
            ("simd_count", self.simd_count().into()),
            ("mem_banks_count", 1),
            ("max_waves_per_simd", c.wave_slots_per_simd.into()),
            ("lds_size_in_kb", self.lds_size_in_kb().into()),
            ("gds_size_in_kb", k.gds_size_in_kb.into()),
            ("num_gws", k.num_gws.into()),
            ("wave_front_size", c.wavefront_size.into()),
            (
                "array_count",
                u64::from(self.shader_engines()) * u64::from(s.shader_arrays_per_engine),
            ),
            ("simd_arrays_per_engine", s.shader_arrays_per_engine.into()),
            ("cu_per_simd_array", s.max_cus_per_shader_array.into()),
            ("simd_per_cu", c.simds.into()),
            ("max_slots_scratch_cu", c.max_scratch_slots.into()),
            ("gfx_target_version", self.gfx_target_version.into()),
            ("vendor_id", self.pci.vendor_id.into()),
            ("device_id", self.pci.device_id.into()),
            ("location_id", self.pci.location_id.into()),
            ("domain", self.pci.domain.into()),
            ("drm_render_minor", k.drm_render_minor.into()),
            ("hive_id", k.hive_id),
            ("num_sdma_engines", q.sdma_engines.into()),
            ("num_sdma_xgmi_engines", q.sdma_xgmi_engines.into()),
            (
                "num_sdma_queues_per_engine",
                q.sdma_queues_per_engine.into(),
            ),
            ("num_cp_queues", q.cp_queues.into()),
            ("max_engine_clk_fcompute", s.max_engine_clock_mhz.into()),
            ("local_mem_size", self.memory.size_bytes),
            ("fw_version", k.fw_version.into()),
            ("capability", self.capability().into()),
            ("debug_prop", k.debug_prop),
            ("sdma_fw_version", k.sdma_fw_version.into()),
            ("unique_id", k.unique_id),
            ("num_xcc", s.xcds.into()),
            ("max_engine_clk_ccompute", k.host_cpu_clock_mhz.into()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{configs_dir, shipped};
    use super::*;
    use serde_json::Value;

    fn mi300x_text() -> String {
        std::fs::read_to_string(configs_dir().join("gfx942_cdna3_kmd.json")).unwrap()
    }

    /// The MI300X config with one edit applied to its JSON value.
    fn edited(f: impl FnOnce(&mut Value)) -> String {
        let mut v: Value = serde_json::from_str(&mi300x_text()).unwrap();
        f(&mut v);
        serde_json::to_string_pretty(&v).unwrap()
    }

    fn err(text: &str) -> (String, String) {
        match GpuConfig::from_str("test.json", text) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => {
                let shown = e.to_string();
                assert!(shown.starts_with("test.json: "), "{shown}");
                (e.path().unwrap().to_string(), shown)
            }
        }
    }

    #[test]
    fn shipped_configs_load() {
        let all = shipped();
        let names: Vec<_> = all.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "gfx1100_rdna3_kmd.json",
                "gfx1151_rdna35_kmd.json",
                "gfx1201_rdna4_kmd.json",
                "gfx908_cdna1_kmd.json",
                "gfx90a_cdna2_kmd.json",
                "gfx942_cdna3_kmd.json",
                "gfx950_cdna4_kmd.json"
            ]
        );
        let want = [
            (
                "AMD Radeon Pro W7900",
                Target::Gfx1100,
                110000,
                96,
                48u64 << 30,
                65536,
            ),
            (
                "Radeon 8060S Graphics",
                Target::Gfx1151,
                110501,
                40,
                64 << 30,
                65536,
            ),
            (
                "AMD Radeon AI PRO R9700",
                Target::Gfx1201,
                120001,
                64,
                32 << 30,
                65536,
            ),
            (
                "AMD Instinct MI100",
                Target::Gfx908,
                90008,
                120,
                32 << 30,
                65536,
            ),
            (
                "AMD Instinct MI210",
                Target::Gfx90a,
                90010,
                104,
                64 << 30,
                65536,
            ),
            (
                "AMD Instinct MI300X",
                Target::Gfx942,
                90402,
                304,
                192 << 30,
                65536,
            ),
            (
                "AMD Instinct MI355X",
                Target::Gfx950,
                90500,
                256,
                288 << 30,
                163840,
            ),
        ];
        for ((file, cfg), (name, target, ver, cus, mem, lds)) in all.iter().zip(want) {
            assert_eq!(cfg.gpus.len(), 1, "{file}");
            let g = &cfg.gpus[0];
            assert_eq!(g.marketing_name, name);
            assert_eq!(g.gfx_target, target);
            assert_eq!(g.gfx_target_version, ver);
            assert_eq!(g.soc.total_cus, cus);
            assert_eq!(g.memory.size_bytes, mem);
            assert_eq!(g.cu.lds_bytes, lds);
            assert_eq!(g.cu.wavefront_size, target.wave_size());
            let simds = if target.has_agprs() { 4 } else { 2 };
            assert_eq!(g.simd_count(), cus * simds);
            assert!(file.starts_with(target.name()));
        }
    }

    #[test]
    fn kfd_properties_cover_the_node_file() {
        let (_, cfg) = shipped()
            .into_iter()
            .find(|(n, _)| n == "gfx942_cdna3_kmd.json")
            .unwrap();
        let props: std::collections::HashMap<_, _> =
            cfg.gpus[0].kfd_properties().into_iter().collect();
        for name in [
            "simd_count",
            "max_waves_per_simd",
            "lds_size_in_kb",
            "gds_size_in_kb",
            "num_gws",
            "wave_front_size",
            "array_count",
            "simd_arrays_per_engine",
            "cu_per_simd_array",
            "simd_per_cu",
            "max_slots_scratch_cu",
            "vendor_id",
            "device_id",
            "location_id",
            "domain",
            "drm_render_minor",
            "hive_id",
            "num_sdma_engines",
            "num_sdma_xgmi_engines",
            "num_sdma_queues_per_engine",
            "num_cp_queues",
            "max_engine_clk_fcompute",
            "local_mem_size",
            "fw_version",
            "capability",
            "debug_prop",
            "sdma_fw_version",
            "unique_id",
            "num_xcc",
            "max_engine_clk_ccompute",
            "gfx_target_version",
        ] {
            assert!(props.contains_key(name), "{name}");
        }
        assert_eq!(props["simd_count"], 1216);
        assert_eq!(props["array_count"], 32);
        assert_eq!(props["cu_per_simd_array"], 10);
        assert_eq!(props["num_xcc"], 8);
        assert_eq!(props["lds_size_in_kb"], 64);
        assert_eq!(props["gfx_target_version"], 90402);
        assert_eq!(props["device_id"], 0x74a1);
        assert_eq!(props["wave_front_size"], 64);
    }

    /// The W7900's node properties against those a Radeon RX 7900 XTX
    /// (the same Navi 31 die, gfx1100) reports under Linux: the
    /// `/sys/class/kfd/kfd/topology/nodes/1/properties` dump tinygrad keeps
    /// for its mock GPU (test/mockgpu/amd/amdgpu.py). Only the identity
    /// (device id, clocks, PCI location) differs between the two parts.
    #[test]
    fn w7900_node_properties_are_navi31s() {
        let cfg = GpuConfig::builtin(Target::Gfx1100);
        let props: std::collections::HashMap<_, _> =
            cfg.gpus[0].kfd_properties().into_iter().collect();
        for (name, want) in [
            ("simd_count", 192),
            ("max_waves_per_simd", 16),
            ("lds_size_in_kb", 64),
            ("gds_size_in_kb", 0),
            ("num_gws", 64),
            ("wave_front_size", 32),
            ("array_count", 12),
            ("simd_arrays_per_engine", 2),
            ("cu_per_simd_array", 8),
            ("simd_per_cu", 2),
            ("max_slots_scratch_cu", 32),
            ("gfx_target_version", 110000),
            ("vendor_id", 4098),
            ("hive_id", 0),
            ("num_sdma_engines", 2),
            ("num_sdma_xgmi_engines", 0),
            ("num_sdma_queues_per_engine", 6),
            ("num_cp_queues", 8),
            ("capability", 671588992),
            ("debug_prop", 1495),
            ("num_xcc", 1),
        ] {
            assert_eq!(props[name], want, "{name}");
        }
        assert_eq!(props["device_id"], 0x7448);
        assert_eq!(props["local_mem_size"], 48 << 30);
    }

    #[test]
    fn rdna_waves_and_registers() {
        let w7900 = std::fs::read_to_string(configs_dir().join("gfx1100_rdna3_kmd.json")).unwrap();
        let edit = |f: &dyn Fn(&mut Value)| {
            let mut v: Value = serde_json::from_str(&w7900).unwrap();
            f(&mut v);
            serde_json::to_string_pretty(&v).unwrap()
        };
        let (path, shown) = err(&edit(&|v| v["gpus"][0]["cu"]["wavefront_size"] = 64.into()));
        assert_eq!(path, "gpus[0].cu.wavefront_size");
        assert!(
            shown.contains("gfx1100 (RDNA3) waves have 32 lanes, got 64"),
            "{shown}"
        );
        let (path, shown) = err(&edit(&|v| {
            v["gpus"][0]["cu"]["max_agprs_per_wave"] = 256.into()
        }));
        assert_eq!(path, "gpus[0].cu.max_agprs_per_wave");
        assert!(shown.contains("no accumulation VGPRs"), "{shown}");
        let (path, _) = err(&edit(&|v| v["gpus"][0]["family"] = "CDNA3".into()));
        assert_eq!(path, "gpus[0].family");
        let (path, _) = err(&edit(&|v| {
            v["gpus"][0]["caches"]["gl1"]["line_bytes"] = 96.into()
        }));
        assert_eq!(path, "gpus[0].caches.gl1.line_bytes");
        // CDNA keeps power-of-two granules.
        let (path, _) = err(&edited(|v| {
            v["gpus"][0]["cu"]["vgpr_alloc_granule"] = 24.into()
        }));
        assert_eq!(path, "gpus[0].cu.vgpr_alloc_granule");
    }

    #[test]
    fn builtin_configs_are_the_shipped_files() {
        for (name, cfg) in shipped() {
            let t = cfg.gpus[0].gfx_target;
            assert_eq!(GpuConfig::builtin(t), cfg, "{name}");
        }
    }

    #[test]
    fn error_names_file_and_path() {
        let (path, shown) = err(&edited(|v| v["gpus"][0]["soc"]["xcds"] = 0.into()));
        assert_eq!(path, "gpus[0].soc.xcds");
        assert_eq!(
            shown,
            "test.json: gpus[0].soc.xcds: expected a positive integer, got 0"
        );
    }

    #[test]
    fn load_names_the_file() {
        let e = GpuConfig::load("/nonexistent/x.json").unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/x.json: "), "{e}");
        let dir = std::env::temp_dir().join(format!("rocjitsu-gpu-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.json");
        std::fs::write(&f, edited(|v| v["gpus"][0]["cu"]["simds"] = "four".into())).unwrap();
        let e = GpuConfig::load(&f).unwrap_err();
        let shown = e.to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            shown.starts_with(&format!("{}: gpus[0].cu.simds: ", f.display())),
            "{shown}"
        );
        assert!(shown.contains("invalid type"), "{shown}");
    }

    #[test]
    fn unknown_key() {
        let (path, shown) = err(&edited(|v| v["gpus"][0]["soc"]["xcd_count"] = 8.into()));
        assert_eq!(path, "gpus[0].soc.xcd_count");
        assert!(shown.contains("unknown field `xcd_count`"), "{shown}");
        let (path, _) = err(&edited(|v| v["extra"] = true.into()));
        assert_eq!(path, "extra");
    }

    #[test]
    fn wrong_type() {
        let (path, shown) = err(&edited(|v| {
            v["gpus"][0]["memory"]["size_bytes"] = (-1).into()
        }));
        assert_eq!(path, "gpus[0].memory.size_bytes");
        assert!(shown.contains("invalid value"), "{shown}");
        let (path, shown) = err(&edited(|v| v["gpus"][0]["gfx_target"] = "gfx1102".into()));
        assert_eq!(path, "gpus[0].gfx_target");
        assert!(shown.contains("unknown variant `gfx1102`"), "{shown}");
        // A known target the emulator does not execute is refused by name.
        let (path, shown) = err(&edited(|v| v["gpus"][0]["gfx_target"] = "gfx1030".into()));
        assert_eq!(path, "gpus[0].gfx_target");
        assert!(shown.contains("gfx1030"), "{shown}");
        assert!(shown.contains("not execute yet"), "{shown}");
        let (path, _) = err("true");
        assert_eq!(path, "$");
        let (_, shown) = err("{\"version\": 1, \"gpus\": [");
        assert!(shown.contains("EOF"), "{shown}");
    }

    #[test]
    fn missing_field() {
        let (path, shown) = err(&edited(|v| {
            v["gpus"][0]["soc"].as_object_mut().unwrap().remove("xcds");
        }));
        assert_eq!(path, "gpus[0].soc");
        assert!(shown.contains("missing field `xcds`"), "{shown}");
    }

    #[test]
    fn defaults_apply() {
        let cfg = GpuConfig::from_str(
            "t",
            &edited(|v| {
                let g = &mut v["gpus"][0];
                g.as_object_mut().unwrap().remove("kfd");
                g["cu"].as_object_mut().unwrap().remove("wavefront_size");
                g["soc"]
                    .as_object_mut()
                    .unwrap()
                    .remove("shader_arrays_per_engine");
                g["caches"].as_object_mut().unwrap().remove("mall");
            }),
        )
        .unwrap();
        let g = &cfg.gpus[0];
        assert_eq!(g.kfd, Kfd::default());
        assert_eq!(g.cu.wavefront_size, 64);
        assert_eq!(g.soc.shader_arrays_per_engine, 1);
        assert_eq!(g.caches.mall, None);
    }

    #[test]
    fn semantic_errors() {
        type Edit = Box<dyn Fn(&mut Value)>;
        let cases: Vec<(Edit, &str, &str)> = vec![
            (
                Box::new(|v| v["gpus"][0]["soc"]["total_cus"] = 300.into()),
                "gpus[0].soc.total_cus",
                "expected xcds * sum(cus_per_shader_engine) = 8 * 38 = 304, got 300",
            ),
            (
                Box::new(|v| {
                    v["gpus"][0]["soc"]["cus_per_shader_engine"] = serde_json::json!([10, 10, 18])
                }),
                "gpus[0].soc.cus_per_shader_engine",
                "expected 4 entries (shader_engines_per_xcd), got 3",
            ),
            (
                Box::new(|v| {
                    v["gpus"][0]["soc"]["cus_per_shader_engine"] = serde_json::json!([11, 10, 9, 8])
                }),
                "gpus[0].soc.cus_per_shader_engine[0]",
                "11 CUs exceed",
            ),
            (
                Box::new(|v| v["gpus"][0]["caches"]["l2"]["size_bytes_per_xcd"] = 3_000_000.into()),
                "gpus[0].caches.l2.size_bytes_per_xcd",
                "expected a positive multiple of 64 KiB, got 3000000",
            ),
            (
                Box::new(|v| v["gpus"][0]["caches"]["l1_vector"]["line_bytes"] = 96.into()),
                "gpus[0].caches.l1_vector.line_bytes",
                "power of two",
            ),
            (
                Box::new(|v| v["gpus"][0]["gfx_target_version"] = 90400.into()),
                "gpus[0].gfx_target_version",
                "gfx942 has gfx_target_version 90402, got 90400",
            ),
            (
                Box::new(|v| v["gpus"][0]["family"] = "CDNA4".into()),
                "gpus[0].family",
                "gfx942 is family CDNA3",
            ),
            (
                Box::new(|v| v["gpus"][0]["cu"]["wavefront_size"] = 32.into()),
                "gpus[0].cu.wavefront_size",
                "64 lanes",
            ),
            (
                Box::new(|v| v["gpus"][0]["cu"]["lds_bytes"] = 1000.into()),
                "gpus[0].cu.lds_bytes",
                "multiple of 1024",
            ),
            (
                Box::new(|v| v["gpus"][0]["memory"]["size_bytes"] = 12345.into()),
                "gpus[0].memory.size_bytes",
                "multiple of 1 MiB",
            ),
            (
                Box::new(|v| v["gpus"][0]["queues"]["doorbell_bytes"] = 16.into()),
                "gpus[0].queues.doorbell_bytes",
                "expected 4 or 8, got 16",
            ),
            (
                Box::new(|v| v["gpus"][0]["pci"]["vendor_id"] = 0x10de.into()),
                "gpus[0].pci.vendor_id",
                "AMD",
            ),
            (
                Box::new(|v| v["gpus"] = serde_json::json!([])),
                "gpus",
                "at least one GPU",
            ),
            (
                Box::new(|v| v["version"] = 2.into()),
                "version",
                "unsupported version 2",
            ),
            (
                Box::new(|v| {
                    let g = v["gpus"][0].clone();
                    let mut g2 = g.clone();
                    g2["cu"]["simds"] = 0.into();
                    v["gpus"] = serde_json::json!([g, g2]);
                }),
                "gpus[1].cu.simds",
                "expected a positive integer, got 0",
            ),
        ];
        for (edit, want_path, want_msg) in cases {
            let (path, shown) = err(&edited(edit));
            assert_eq!(path, want_path, "{shown}");
            assert!(shown.contains(want_msg), "{shown}");
        }
    }

    /// A validator for the subset of JSON Schema that `configs/schema.json`
    /// uses (type, properties, required, additionalProperties: false,
    /// minimum, maximum, enum, items, minItems, oneOf). Returns the path of
    /// the first violation.
    fn check(schema: &Value, v: &Value, path: &str) -> Result<(), String> {
        if let Some(alts) = schema.get("oneOf").and_then(Value::as_array) {
            let ok = alts.iter().filter(|s| check(s, v, path).is_ok()).count();
            return if ok == 1 {
                Ok(())
            } else {
                Err(format!("{path}: oneOf matched {ok}"))
            };
        }
        if let Some(t) = schema.get("type").and_then(Value::as_str) {
            let ok = match t {
                "object" => v.is_object(),
                "array" => v.is_array(),
                "string" => v.is_string(),
                "integer" => v.is_i64() || v.is_u64(),
                "boolean" => v.is_boolean(),
                "null" => v.is_null(),
                _ => panic!("schema type {t} not supported by the test validator"),
            };
            if !ok {
                return Err(format!("{path}: expected {t}"));
            }
        }
        if let Some(e) = schema.get("enum").and_then(Value::as_array)
            && !e.contains(v)
        {
            return Err(format!("{path}: not in enum"));
        }
        if let Some(n) = v.as_f64() {
            if schema
                .get("minimum")
                .and_then(Value::as_f64)
                .is_some_and(|m| n < m)
            {
                return Err(format!("{path}: below minimum"));
            }
            if schema
                .get("maximum")
                .and_then(Value::as_f64)
                .is_some_and(|m| n > m)
            {
                return Err(format!("{path}: above maximum"));
            }
        }
        if let Some(a) = v.as_array() {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            if (a.len() as u64) < min {
                return Err(format!("{path}: too few items"));
            }
            if let Some(items) = schema.get("items") {
                for (i, x) in a.iter().enumerate() {
                    check(items, x, &format!("{path}[{i}]"))?;
                }
            }
        }
        if let Some(o) = v.as_object() {
            let props = schema.get("properties").and_then(Value::as_object);
            for r in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let r = r.as_str().unwrap();
                if !o.contains_key(r) {
                    return Err(format!("{path}: missing {r}"));
                }
            }
            for (k, x) in o {
                let sub = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match props.and_then(|p| p.get(k)) {
                    Some(s) => check(s, x, &sub)?,
                    None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        return Err(format!("{sub}: not allowed"));
                    }
                    None => {}
                }
            }
        }
        Ok(())
    }

    fn schema() -> Value {
        serde_json::from_str(&std::fs::read_to_string(configs_dir().join("schema.json")).unwrap())
            .unwrap()
    }

    /// Every property the schema declares, as dotted paths (`gpus.soc.xcds`).
    fn schema_props(s: &Value, prefix: &str, out: &mut Vec<String>) {
        for alt in s
            .get("oneOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            schema_props(alt, prefix, out);
        }
        if let Some(items) = s.get("items") {
            schema_props(items, prefix, out);
        }
        for (k, sub) in s
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let p = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            out.push(p.clone());
            schema_props(sub, &p, out);
        }
    }

    /// Every key present in a value, as dotted paths, arrays flattened.
    fn value_keys(v: &Value, prefix: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    out.push(p.clone());
                    value_keys(x, &p, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| value_keys(x, prefix, out)),
            _ => {}
        }
    }

    #[test]
    fn shipped_configs_match_schema() {
        let s = schema();
        for (name, _) in shipped() {
            let text = std::fs::read_to_string(configs_dir().join(&name)).unwrap();
            let v: Value = serde_json::from_str(&text).unwrap();
            check(&s, &v, "").unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn schema_and_structs_agree() {
        let s = schema();
        let mut declared = vec![];
        schema_props(&s, "", &mut declared);
        declared.sort();
        declared.dedup();
        // Serializing writes every struct field, so the serialized config's
        // keys are exactly the structs' fields (plus the MALL's, present in
        // the MI300X config, and the GL1's, taken from the W7900's).
        let (_, mut cfg) = shipped()
            .into_iter()
            .find(|(n, _)| n == "gfx942_cdna3_kmd.json")
            .unwrap();
        cfg.gpus[0].caches.gl1 = GpuConfig::builtin(Target::Gfx1100).gpus[0]
            .caches
            .gl1
            .clone();
        cfg.schema = Some("./schema.json".into());
        // Every dbt_guest field, set.
        cfg.dbt_guest = Some(DbtGuest {
            enabled: true,
            guest_isa: DbtIsa::Gfx950,
            host_isa: DbtIsa::Gfx942,
            host_gpu_id: 0,
            execution_backend: DbtBackend::Simulator,
            simulator_config: Some("gfx942_cdna3_kmd.json".into()),
            guest_revision: DbtRevision::Unspecified,
            host_revision: DbtRevision::Unspecified,
            log_level: DbtLogLevel::Info,
        });
        // A plugins entry (its options are the plugin's, not the schema's).
        cfg.plugins = vec![PluginConfig {
            name: "metrics".into(),
            options: Default::default(),
            require: true,
        }];
        let v = serde_json::to_value(&cfg).unwrap();
        check(&s, &v, "").unwrap();
        let mut fields = vec![];
        value_keys(&v, "", &mut fields);
        fields.sort();
        fields.dedup();
        assert_eq!(declared, fields);
    }

    #[test]
    fn schema_rejects_broken_configs() {
        let s = schema();
        for bad in [
            edited(|v| v["gpus"][0]["soc"]["xcd_count"] = 8.into()),
            edited(|v| v["gpus"][0]["cu"]["simds"] = "four".into()),
            edited(|v| {
                v["gpus"][0]["soc"].as_object_mut().unwrap().remove("xcds");
            }),
            edited(|v| v["gpus"][0]["soc"]["xcds"] = 0.into()),
            edited(|v| v["gpus"][0]["gfx_target"] = "gfx1030".into()),
        ] {
            let v: Value = serde_json::from_str(&bad).unwrap();
            assert!(check(&s, &v, "").is_err(), "{bad}");
            assert!(GpuConfig::from_str("t", &bad).is_err());
        }
    }

    #[test]
    fn readme_documents_every_field() {
        let readme = std::fs::read_to_string(configs_dir().join("README.md")).unwrap();
        let mut declared = vec![];
        schema_props(&schema(), "", &mut declared);
        for p in declared {
            let leaf = p.rsplit('.').next().unwrap();
            assert!(
                readme.contains(&format!("`{leaf}`")),
                "README lacks `{leaf}` ({p})"
            );
        }
    }

    fn guest_text(f: impl FnOnce(&mut Value)) -> String {
        let mut v = serde_json::json!({
            "version": 1,
            "dbt_guest": {
                "enabled": true,
                "guest_isa": "gfx950",
                "host_isa": "gfx942",
                "execution_backend": "simulator",
            }
        });
        v["gpus"] = serde_json::from_str::<Value>(&mi300x_text()).unwrap()["gpus"].clone();
        f(&mut v);
        serde_json::to_string_pretty(&v).unwrap()
    }

    #[test]
    fn shipped_guest_configs_load() {
        let s = schema();
        for name in [
            "guest_gfx950_on_gfx942.json",
            "guest_gfx950_on_gfx942_hardware.json",
        ] {
            let path = configs_dir().join(name);
            let text = std::fs::read_to_string(&path).unwrap();
            check(&s, &serde_json::from_str(&text).unwrap(), "").unwrap();
            let cfg = GpuConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let d = cfg.guest().unwrap();
            assert_eq!((d.guest_isa, d.host_isa), (DbtIsa::Gfx950, DbtIsa::Gfx942));
            assert_eq!(d.guest_target(), Some(Target::Gfx950));
            match d.execution_backend {
                // The host GPUs come from the referenced MI300X file.
                DbtBackend::Simulator => {
                    assert_eq!(cfg.gpus.len(), 1);
                    assert_eq!(cfg.gpus[0].gfx_target, Target::Gfx942);
                    let resolved = d.simulator_config.as_deref().unwrap();
                    assert!(
                        Path::new(resolved).is_absolute()
                            && resolved.ends_with("configs/gfx942_cdna3_kmd.json"),
                        "{resolved}"
                    );
                }
                DbtBackend::Hardware => assert!(cfg.gpus.is_empty()),
            }
        }
    }

    #[test]
    fn guest_block_errors_name_the_path() {
        // The simulator's host GPUs in the same file.
        let ok = GpuConfig::from_str("test.json", &guest_text(|_| {})).unwrap();
        assert_eq!(ok.guest().unwrap().log_level, DbtLogLevel::Warn);
        assert_eq!(ok.guest().unwrap().guest_revision, DbtRevision::Unspecified);
        let off = GpuConfig::from_str(
            "test.json",
            &guest_text(|v| v["dbt_guest"]["enabled"] = false.into()),
        )
        .unwrap();
        assert!(off.guest().is_none() && off.dbt_guest.is_some());
        type Edit = Box<dyn FnOnce(&mut Value)>;
        let cases: Vec<(Edit, &str, &str)> = vec![
            (
                Box::new(|v| v["dbt_guest"]["host_gpu_id"] = 3.into()),
                "dbt_guest.host_gpu_id",
                "has 1 GPU(s)",
            ),
            (
                Box::new(|v| v["dbt_guest"]["host_isa"] = "gfx90a".into()),
                "dbt_guest.host_isa",
                "is a gfx942",
            ),
            (
                Box::new(|v| v["dbt_guest"]["host_isa"] = "gfx950".into()),
                "dbt_guest.host_isa",
                "nothing to translate",
            ),
            (
                Box::new(|v| v["dbt_guest"]["guest_revision"] = "a0".into()),
                "dbt_guest.guest_revision",
                "gfx950 has no revisions",
            ),
            (
                Box::new(|v| v["dbt_guest"]["execution_backend"] = "gpu".into()),
                "dbt_guest.execution_backend",
                "unknown variant",
            ),
            (
                Box::new(|v| v["dbt_guest"]["typo"] = 1.into()),
                "dbt_guest.typo",
                "unknown field",
            ),
            (
                Box::new(|v| {
                    v["dbt_guest"].as_object_mut().unwrap().remove("enabled");
                }),
                "dbt_guest",
                "missing field `enabled`",
            ),
            (
                Box::new(|v| {
                    v.as_object_mut().unwrap().remove("gpus");
                }),
                "gpus",
                "simulator backend needs the host GPUs",
            ),
            (
                Box::new(|v| {
                    v["dbt_guest"]["execution_backend"] = "hardware".into();
                    v["dbt_guest"]["simulator_config"] = "gfx942_cdna3_kmd.json".into();
                }),
                "dbt_guest.simulator_config",
                "only the `simulator` execution backend",
            ),
            (
                Box::new(|v| v["dbt_guest"]["simulator_config"] = "/nonexistent/x.json".into()),
                "dbt_guest.simulator_config",
                "/nonexistent/x.json",
            ),
            // gfx1250: steppings share an ELF machine id.
            (
                Box::new(|v| {
                    v["dbt_guest"]["guest_isa"] = "gfx1250".into();
                    v["dbt_guest"]["host_isa"] = "gfx1250".into();
                    v["dbt_guest"]["guest_revision"] = "a0".into();
                }),
                "dbt_guest.host_revision",
                "needs both guest_revision and host_revision",
            ),
            (
                Box::new(|v| {
                    v["dbt_guest"]["guest_isa"] = "gfx1250".into();
                    v["dbt_guest"]["host_isa"] = "gfx1250".into();
                }),
                "dbt_guest.guest_revision",
                "needs both guest_revision and host_revision",
            ),
            (
                Box::new(|v| {
                    v["dbt_guest"]["guest_isa"] = "gfx1250".into();
                    v["dbt_guest"]["host_isa"] = "gfx1250".into();
                    v["dbt_guest"]["guest_revision"] = "b0".into();
                    v["dbt_guest"]["host_revision"] = "b0".into();
                }),
                "dbt_guest.host_revision",
                "same ISA and revision",
            ),
            // Both revisions set: the block is consistent, but this build
            // has no gfx1250 identity to show.
            (
                Box::new(|v| {
                    v["dbt_guest"]["guest_isa"] = "gfx1250".into();
                    v["dbt_guest"]["host_isa"] = "gfx1250".into();
                    v["dbt_guest"]["guest_revision"] = "b0".into();
                    v["dbt_guest"]["host_revision"] = "a0".into();
                }),
                "dbt_guest.guest_isa",
                "no gfx1250 GPU identity",
            ),
        ];
        for (edit, path, msg) in cases {
            let text = guest_text(edit);
            let (p, shown) = err(&text);
            assert_eq!(p, path, "{shown}");
            assert!(shown.contains(msg), "{shown}");
        }
        // A guest configuration cannot serve as another's simulator host.
        let dir = std::env::temp_dir().join(format!("rocjitsu-guest-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("inner.json"), guest_text(|_| {})).unwrap();
        std::fs::write(
            dir.join("outer.json"),
            guest_text(|v| v["dbt_guest"]["simulator_config"] = "inner.json".into()),
        )
        .unwrap();
        let e = GpuConfig::load(dir.join("outer.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("dbt_guest.simulator_config") && e.contains("is itself a DBT guest"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
