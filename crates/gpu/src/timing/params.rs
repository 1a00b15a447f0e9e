//! The timing model's parameters: the `timing.model` block of a timing
//! file (`configs/timing/*.json`; every value's meaning and source in
//! `configs/timing/README.md`). Times are in cycles of the engine clock
//! unless a name says otherwise; bandwidths in bytes per cycle.

use serde::Deserialize;

/// The whole `timing.model` block.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Engine clock in MHz: cycles become time at this rate.
    pub clock_mhz: u32,
    /// Bytes of a cache line at every level (L1, L2, MALL).
    pub line_bytes: u32,
    pub cu: CuParams,
    pub issue: IssueParams,
    pub l1: L1Params,
    pub l2: L2Params,
    pub mall: MallParams,
    pub hbm: HbmParams,
    pub dispatch: DispatchParams,
}

/// A compute unit's resources, which bound how many waves it holds.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CuParams {
    pub simds: u32,
    /// Wave slots per SIMD.
    pub waves_per_simd: u32,
    /// VGPRs (ArchVGPRs and AccVGPRs together) per lane of a SIMD.
    pub vgprs_per_simd: u32,
    /// SGPRs per SIMD.
    pub sgprs_per_simd: u32,
    /// LDS bytes per compute unit.
    pub lds_bytes: u32,
}

/// Issue and pipeline figures of the instruction classes.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IssueParams {
    /// Cycles a SIMD waits between two issue turns: the sequencer visits
    /// the SIMDs of a CU in turn, one per cycle.
    pub simd_turn_cycles: u32,
    /// Cycles a wave64 VALU instruction holds its SIMD's vector ALU.
    pub valu_cycles: u32,
    /// The same for transcendental VALU instructions (`v_exp`, `v_rcp`, ...).
    pub trans_cycles: u32,
    /// Cycles per MFMA pass (the passes of each instruction come from
    /// LLVM's scheduling model, `rocjitsu_code::analysis::mfma_passes`).
    pub mfma_pass_cycles: u32,
    /// Cycles the CU's scalar ALU is busy per instruction.
    pub salu_cycles: u32,
    /// Cycles a branch holds the branch unit.
    pub branch_cycles: u32,
    /// Scalar memory (scalar cache hit) latency.
    pub smem_latency: u32,
    /// Cycles a vector memory instruction holds the CU's address unit.
    pub vmem_issue_cycles: u32,
    /// LDS latency (issue to data), without bank conflicts.
    pub lds_latency: u32,
    /// LDS bytes served per cycle.
    pub lds_bytes_per_cycle: u32,
    /// Cycles from the last wave reaching `s_barrier` to the waves going on.
    pub barrier_cycles: u32,
}

/// The per-CU vector L1 cache.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct L1Params {
    pub bytes: u32,
    pub ways: u32,
    /// Load issue to data of an L1 hit.
    pub hit_latency: u32,
    /// Bytes the L1 returns per cycle.
    pub bytes_per_cycle: u32,
}

/// The per-XCD L2 cache (the topology's `l2_cache`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct L2Params {
    pub bytes: u32,
    pub ways: u32,
    /// Cycles from a request's arrival to the response's departure on a hit
    /// (the links to and from the CU add their latencies).
    pub hit_latency: u32,
    /// Channels (lines interleave over them).
    pub channels: u32,
    /// Bytes one channel serves per cycle.
    pub bytes_per_cycle_per_channel: u32,
}

/// The memory-attached last-level cache (Infinity Cache), in
/// `gpu_memory`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MallParams {
    /// 0: no MALL.
    pub bytes: u64,
    pub ways: u32,
    /// Cycles from a request's arrival to the response's departure on a hit.
    pub hit_latency: u32,
    /// Bytes per cycle, all channels together.
    pub bytes_per_cycle: u32,
}

/// HBM behind the MALL.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HbmParams {
    /// Cycles a MALL miss adds.
    pub latency: u32,
    /// Achievable bytes per cycle, all channels together.
    pub bytes_per_cycle: u32,
    /// Channels (lines interleave over them).
    pub channels: u32,
}

/// The command processor and workgroup dispatch.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DispatchParams {
    /// Cycles between two workgroups an XCD's dispatcher places.
    pub cycles_per_workgroup: u32,
    /// Cycles from a workgroup's placement to its waves' first issue.
    pub wave_launch_cycles: u32,
    /// Cycles from the dispatch packet to the first workgroup placement,
    /// and from the last wave's end to the dispatch's completion.
    pub kernel_overhead_cycles: u32,
}

impl Params {
    /// Checks the values against each other; `Err((path, why))` names the
    /// first bad value by its JSON path below `$.timing.model`.
    pub fn check(&self) -> Result<(), (String, String)> {
        let positive: [(&str, u64); 30] = [
            ("clock_mhz", self.clock_mhz.into()),
            ("line_bytes", self.line_bytes.into()),
            ("cu.simds", self.cu.simds.into()),
            ("cu.waves_per_simd", self.cu.waves_per_simd.into()),
            ("cu.vgprs_per_simd", self.cu.vgprs_per_simd.into()),
            ("cu.sgprs_per_simd", self.cu.sgprs_per_simd.into()),
            ("cu.lds_bytes", self.cu.lds_bytes.into()),
            ("issue.simd_turn_cycles", self.issue.simd_turn_cycles.into()),
            ("issue.valu_cycles", self.issue.valu_cycles.into()),
            ("issue.trans_cycles", self.issue.trans_cycles.into()),
            ("issue.mfma_pass_cycles", self.issue.mfma_pass_cycles.into()),
            ("issue.salu_cycles", self.issue.salu_cycles.into()),
            ("issue.branch_cycles", self.issue.branch_cycles.into()),
            ("issue.smem_latency", self.issue.smem_latency.into()),
            (
                "issue.vmem_issue_cycles",
                self.issue.vmem_issue_cycles.into(),
            ),
            ("issue.lds_latency", self.issue.lds_latency.into()),
            (
                "issue.lds_bytes_per_cycle",
                self.issue.lds_bytes_per_cycle.into(),
            ),
            ("l1.bytes", self.l1.bytes.into()),
            ("l1.ways", self.l1.ways.into()),
            ("l1.hit_latency", self.l1.hit_latency.into()),
            ("l1.bytes_per_cycle", self.l1.bytes_per_cycle.into()),
            ("l2.bytes", self.l2.bytes.into()),
            ("l2.ways", self.l2.ways.into()),
            ("l2.hit_latency", self.l2.hit_latency.into()),
            ("l2.channels", self.l2.channels.into()),
            (
                "l2.bytes_per_cycle_per_channel",
                self.l2.bytes_per_cycle_per_channel.into(),
            ),
            ("mall.bytes_per_cycle", self.mall.bytes_per_cycle.into()),
            ("hbm.bytes_per_cycle", self.hbm.bytes_per_cycle.into()),
            ("hbm.channels", self.hbm.channels.into()),
            ("hbm.latency", self.hbm.latency.into()),
        ];
        for (k, v) in positive {
            if v == 0 {
                return Err((k.into(), "must be positive".into()));
            }
        }
        if !self.line_bytes.is_power_of_two() {
            return Err((
                "line_bytes".into(),
                format!("{} is not a power of two", self.line_bytes),
            ));
        }
        if self.cu.simds > 16 {
            return Err((
                "cu.simds".into(),
                format!("{} SIMDs; at most 16", self.cu.simds),
            ));
        }
        if self.mall.bytes > 0 && self.mall.ways == 0 {
            return Err(("mall.ways".into(), "must be positive".into()));
        }
        let caches: [(&str, u64, u32); 3] = [
            ("l1", self.l1.bytes.into(), self.l1.ways),
            ("l2", self.l2.bytes.into(), self.l2.ways),
            ("mall", self.mall.bytes, self.mall.ways.max(1)),
        ];
        for (k, bytes, ways) in caches {
            let set = u64::from(self.line_bytes) * u64::from(ways);
            if bytes % set != 0 {
                return Err((
                    format!("{k}.bytes"),
                    format!(
                        "{bytes} bytes do not make whole sets of {ways} ways of {}-byte lines",
                        self.line_bytes
                    ),
                ));
            }
        }
        Ok(())
    }
}
