//! Live metrics of a session: what each node's emulator counts per GPU
//! (cumulative counters and gauges, [`GpuSample`]), published by the
//! supervisor over the control socket ([`crate::ipc::Request::Metrics`])
//! a few times a second, and the rates a reader derives from two samples
//! ([`rates`]), summed per node.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One GPU's counters at one instant. Counters only grow while the
/// session lives; gauges (`waves_in_flight`, `dispatches_active`,
/// `vram_used`, `queues`) are the current values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSample {
    /// The GPU's index on its node.
    pub gpu: u32,
    /// Waves started and not yet ended.
    pub waves_in_flight: i64,
    /// Waves started.
    pub waves: u64,
    /// Dispatches started and ended.
    pub dispatches: u64,
    pub dispatches_active: u64,
    /// Wave-instructions executed, and per instruction family (the metrics
    /// plugin's families: `salu`, `valu`, `mfma`, `smem`, `vmem_load`, ...).
    pub wave_instructions: u64,
    pub by_family: BTreeMap<String, u64>,
    /// Bytes of global memory read, written and accessed by atomics (per
    /// active lane, as the metrics plugin counts them).
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub bytes_atomic: u64,
    /// Bytes of LDS accessed.
    pub lds_bytes: u64,
    /// VRAM in use and its size.
    pub vram_used: u64,
    pub vram_size: u64,
    /// Queues created on this GPU.
    pub queues: u64,
}

/// A dispatch starting or ending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DispatchEvent {
    /// Increases by one per event of the node.
    pub id: u64,
    pub gpu: u32,
    /// `begin` or `end`.
    pub event: String,
    pub kernel: String,
    /// Workgroups and work-items per workgroup.
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// With `end`: the wave-instructions it ran, its wall time, its fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wave_instructions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One node's GPUs at one instant, and the dispatch events since the
/// previous sample sent to the same reader.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeSample {
    pub node: u32,
    pub gpus: Vec<GpuSample>,
    #[serde(default)]
    pub events: Vec<DispatchEvent>,
}

/// What the supervisor sends: every node that has live counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// Seconds since the Unix epoch.
    pub time: f64,
    pub nodes: Vec<NodeSample>,
}

/// Per-second rates of one GPU between two samples, with its gauges.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuRates {
    pub gpu: u32,
    pub waves_in_flight: i64,
    pub dispatches_active: u64,
    pub dispatches: u64,
    pub wave_instructions: u64,
    pub wave_instructions_per_s: f64,
    /// Wave-instructions per second per family.
    pub by_family_per_s: BTreeMap<String, f64>,
    pub bytes_read_per_s: f64,
    pub bytes_written_per_s: f64,
    pub vram_used: u64,
    pub vram_size: u64,
    pub queues: u64,
}

/// One node's GPUs' rates and their sums.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeRates {
    pub node: u32,
    pub gpus: Vec<GpuRates>,
    /// The node's totals (sums over its GPUs).
    pub total: GpuRates,
    pub events: Vec<DispatchEvent>,
}

/// Rates between `prev` and `cur` (the same reader's consecutive frames;
/// without `prev`, rates are 0), per GPU and per node.
pub fn rates(prev: Option<&Frame>, cur: &Frame) -> Vec<NodeRates> {
    let dt = prev.map(|p| cur.time - p.time).unwrap_or(0.0);
    let per = |now: u64, before: Option<u64>| -> f64 {
        match before {
            Some(b) if dt > 0.0 => now.saturating_sub(b) as f64 / dt,
            _ => 0.0,
        }
    };
    cur.nodes
        .iter()
        .map(|n| {
            let pn = prev.and_then(|p| p.nodes.iter().find(|x| x.node == n.node));
            let gpus: Vec<GpuRates> = n
                .gpus
                .iter()
                .map(|g| {
                    let pg = pn.and_then(|p| p.gpus.iter().find(|x| x.gpu == g.gpu));
                    GpuRates {
                        gpu: g.gpu,
                        waves_in_flight: g.waves_in_flight,
                        dispatches_active: g.dispatches_active,
                        dispatches: g.dispatches,
                        wave_instructions: g.wave_instructions,
                        wave_instructions_per_s: per(
                            g.wave_instructions,
                            pg.map(|p| p.wave_instructions),
                        ),
                        by_family_per_s: g
                            .by_family
                            .iter()
                            .map(|(k, v)| {
                                (
                                    k.clone(),
                                    per(*v, pg.map(|p| p.by_family.get(k).copied().unwrap_or(0))),
                                )
                            })
                            .collect(),
                        bytes_read_per_s: per(g.bytes_read, pg.map(|p| p.bytes_read)),
                        bytes_written_per_s: per(g.bytes_written, pg.map(|p| p.bytes_written)),
                        vram_used: g.vram_used,
                        vram_size: g.vram_size,
                        queues: g.queues,
                    }
                })
                .collect();
            let mut total = GpuRates {
                gpu: u32::MAX,
                ..Default::default()
            };
            for g in &gpus {
                total.waves_in_flight += g.waves_in_flight;
                total.dispatches_active += g.dispatches_active;
                total.dispatches += g.dispatches;
                total.wave_instructions += g.wave_instructions;
                total.wave_instructions_per_s += g.wave_instructions_per_s;
                for (k, v) in &g.by_family_per_s {
                    *total.by_family_per_s.entry(k.clone()).or_default() += v;
                }
                total.bytes_read_per_s += g.bytes_read_per_s;
                total.bytes_written_per_s += g.bytes_written_per_s;
                total.vram_used += g.vram_used;
                total.vram_size += g.vram_size;
                total.queues += g.queues;
            }
            NodeRates {
                node: n.node,
                gpus,
                total,
                events: n.events.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(t: f64, insts: [u64; 2], valu: u64) -> Frame {
        Frame {
            time: t,
            nodes: vec![NodeSample {
                node: 0,
                gpus: (0..2)
                    .map(|i| GpuSample {
                        gpu: i,
                        waves_in_flight: 4,
                        wave_instructions: insts[i as usize],
                        by_family: [("valu".to_string(), valu)].into(),
                        vram_used: 100,
                        ..Default::default()
                    })
                    .collect(),
                events: vec![],
            }],
        }
    }

    #[test]
    fn rates_per_gpu_and_node() {
        let a = frame(10.0, [1000, 0], 500);
        let b = frame(10.5, [3000, 100], 1500);
        let r = rates(Some(&a), &b);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].gpus[0].wave_instructions_per_s, 4000.0);
        assert_eq!(r[0].gpus[1].wave_instructions_per_s, 200.0);
        assert_eq!(r[0].gpus[0].by_family_per_s["valu"], 2000.0);
        assert_eq!(r[0].total.wave_instructions_per_s, 4200.0);
        assert_eq!(r[0].total.waves_in_flight, 8);
        assert_eq!(r[0].total.vram_used, 200);
        // The first frame has no rates.
        assert_eq!(rates(None, &b)[0].total.wave_instructions_per_s, 0.0);
    }
}
