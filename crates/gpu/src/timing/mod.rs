//! Clocked mode: a timing model of the GPU that says how long a dispatch
//! would take, run on simdojo (`rocjitsu_simdojo`).
//!
//! The model is an observer of the functional run, never a second
//! executor: [`Recorder`] (an execution plugin) keeps each wave's
//! instruction stream in a compact form while the VM computes the results,
//! and [`simulate`] replays the streams through a model of the compute
//! units, caches, memory and command processors ([`model`]). The results
//! of a clocked run are therefore those of the functional run, bit for
//! bit; only the modelled time is added.
//!
//! The model's shape is a timing topology (`configs/timing/*.json`, read
//! by [`rocjitsu_simdojo::Topology`]) and its figures are the file's
//! `timing.model` block ([`Params`]; each value and its source in
//! `configs/timing/README.md`). The engine runs each XCD as a partition on
//! its own host thread and gives the same modelled cycles at any thread
//! count.

pub mod model;
pub mod params;
pub mod record;

pub use model::Kernel;
pub use params::Params;
pub use record::{DispatchTrace, Recorder};

use rocjitsu_isa::Target;
use rocjitsu_simdojo::{RunOptions, Time, Topology, TopologyError};
use std::sync::Arc;

/// How dispatches run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum ExecMode {
    /// Results only (the default).
    #[default]
    Functional,
    /// Results, and the modelled time of each dispatch.
    Clocked,
}

impl ExecMode {
    pub fn parse(s: &str) -> Result<ExecMode, String> {
        match s {
            "functional" => Ok(ExecMode::Functional),
            "clocked" => Ok(ExecMode::Clocked),
            _ => Err(format!(
                "unknown exec mode `{s}`; expected functional or clocked"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ExecMode::Functional => "functional",
            ExecMode::Clocked => "clocked",
        }
    }
}

/// A timing file: the topology and the model's parameters.
#[derive(Clone, Debug)]
pub struct TimingConfig {
    /// Where it came from (file name), for errors.
    pub name: String,
    pub topology: Topology,
    pub params: Params,
}

#[derive(Debug, thiserror::Error)]
pub enum TimingError {
    #[error(transparent)]
    Topology(#[from] TopologyError),
    #[error("{file}: {path}: {message}")]
    Invalid {
        file: String,
        path: String,
        message: String,
    },
    #[error(
        "no timing model for {target} ({name}); give one with --timing-config (configs/timing/mi300x.json models gfx942)"
    )]
    NoModel { target: &'static str, name: String },
    #[error(
        "kernel {kernel}: a wave needs {vgprs} VGPRs and {sgprs} SGPRs and a workgroup {lds} bytes of LDS and {waves} waves; a compute unit of the timing model cannot hold one workgroup"
    )]
    DoesNotFit {
        kernel: String,
        vgprs: u32,
        sgprs: u32,
        lds: u32,
        waves: usize,
    },
    #[error("timing model: {0}")]
    Engine(String),
    #[error(
        "timing model of kernel {kernel}: the run ended with {done} of {xcds} XCDs done (a wave waits for something that never comes)"
    )]
    Stalled {
        kernel: String,
        done: usize,
        xcds: usize,
    },
}

/// The timing file of MI300X, built in.
pub const MI300X: &str = include_str!("../../../../configs/timing/mi300x.json");

impl TimingConfig {
    /// Reads and checks a timing file.
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<TimingConfig, TimingError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| TimingError::Invalid {
            file: name.clone(),
            path: "$".into(),
            message: format!("cannot read: {e}"),
        })?;
        TimingConfig::from_str(&name, &text)
    }

    /// Parses and checks timing text; `name` names it in errors.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(name: &str, text: &str) -> Result<TimingConfig, TimingError> {
        let topology = Topology::from_str(name, text)?;
        let invalid = |path: String, message: String| TimingError::Invalid {
            file: name.to_string(),
            path,
            message,
        };
        let Some(model) = topology.model.clone() else {
            return Err(invalid(
                "$.timing".into(),
                "no `model` block: the timing model's parameters are missing (see configs/timing/README.md)".into(),
            ));
        };
        let params: Params = serde_path_to_error::deserialize(model).map_err(|e| {
            let p = e.path().to_string();
            let path = if p == "." {
                "$.timing.model".to_string()
            } else {
                format!("$.timing.model.{p}")
            };
            invalid(path, e.into_inner().to_string())
        })?;
        params
            .check()
            .map_err(|(p, m)| invalid(format!("$.timing.model.{p}"), m))?;
        check_topology(&topology).map_err(|(p, m)| invalid(p, m))?;
        Ok(TimingConfig {
            name: name.to_string(),
            topology,
            params,
        })
    }

    /// The built-in timing file of a target's GPU.
    pub fn builtin(target: Target) -> Result<TimingConfig, TimingError> {
        match target {
            Target::Gfx942 => TimingConfig::from_str("configs/timing/mi300x.json", MI300X),
            t => Err(TimingError::NoModel {
                target: t.name(),
                name: t.architecture().to_string(),
            }),
        }
    }

    /// Picoseconds per cycle of the model's clock.
    pub fn period(&self) -> Time {
        rocjitsu_simdojo::Clock::from_mhz(self.params.clock_mhz).map_or(1, |c| c.period())
    }
}

/// Checks that the topology has what the model sends messages over:
/// compute units linked both ways to an `l2_cache` and a
/// `command_processor`, L2 caches linked both ways to `gpu_memory`, XCD
/// command processors linked both ways to the GPU's.
fn check_topology(t: &Topology) -> Result<(), (String, String)> {
    use rocjitsu_simdojo::Kind;
    let linked = |a: usize, kind: Kind| {
        t.links
            .iter()
            .any(|l| l.from == a && t.instances[l.to].kind == kind)
            && t.links
                .iter()
                .any(|l| l.to == a && t.instances[l.from].kind == kind)
    };
    for (i, inst) in t.instances.iter().enumerate() {
        let need: &[Kind] = match inst.kind {
            Kind::ComputeUnit => &[Kind::L2Cache, Kind::CommandProcessor],
            Kind::L2Cache => &[Kind::GpuMemory],
            Kind::CommandProcessor => &[Kind::CommandProcessor],
            _ => &[],
        };
        for &k in need {
            if !linked(i, k) {
                return Err((
                    inst.json_path.clone(),
                    format!(
                        "{} `{}` needs links to and from a {k} for the timing model",
                        inst.kind, inst.path
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// What the model says of one dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub kernel: String,
    /// Modelled engine cycles from the dispatch packet to its completion.
    pub cycles: u64,
    /// The same in picoseconds.
    pub time_ps: u64,
    pub clock_mhz: u32,
    /// simdojo's figures: events handled, barrier epochs, host threads.
    pub events: u64,
    pub epochs: u64,
    pub threads: usize,
}

impl Report {
    /// Modelled seconds.
    pub fn seconds(&self) -> f64 {
        self.time_ps as f64 * 1e-12
    }
}

impl Kernel {
    /// A kernel's needs from its descriptor and dynamic LDS.
    pub fn of(kd: &rocjitsu_code::KernelDescriptor, target: Target, dynamic_lds: u32) -> Kernel {
        Kernel {
            vgprs: kd.vgpr_count(target),
            sgprs: kd.sgpr_count(target),
            lds_bytes: kd.group_segment_fixed_size + dynamic_lds,
        }
    }
}

/// Runs the model of `trace` on `threads` host threads.
pub fn simulate(
    cfg: &TimingConfig,
    trace: Arc<DispatchTrace>,
    kernel: Kernel,
    threads: usize,
) -> Result<Report, TimingError> {
    let p = &cfg.params;
    let per_simd =
        p.cu.waves_per_simd
            .min(p.cu.vgprs_per_simd / kernel.vgprs.max(1))
            .min(p.cu.sgprs_per_simd / kernel.sgprs.max(1));
    let waves = trace
        .groups
        .iter()
        .map(|g| g.waves.len())
        .max()
        .unwrap_or(0);
    if waves > 16 || waves as u32 > per_simd * p.cu.simds || kernel.lds_bytes > p.cu.lds_bytes {
        return Err(TimingError::DoesNotFit {
            kernel: trace.kernel.clone(),
            vgprs: kernel.vgprs,
            sgprs: kernel.sgprs,
            lds: kernel.lds_bytes,
            waves,
        });
    }
    let sh = Arc::new(model::Shared {
        p: p.clone(),
        trace: trace.clone(),
        kernel,
        period: cfg.period(),
        per_simd,
        line_bytes: u64::from(p.line_bytes),
    });
    let t = &cfg.topology;
    let mut sim = t
        .build(|inst| {
            let parent = inst.parent.map(|i| t.instances[i].kind);
            model::Block::of(inst, parent, &sh)
        })
        .map_err(|e| TimingError::Engine(e.to_string()))?;
    let stats = sim
        .run(RunOptions {
            threads: threads.max(1),
            until: Time::MAX,
        })
        .map_err(|e| TimingError::Engine(e.to_string()))?;
    let (end, done, xcds) = sim
        .components()
        .find_map(|(_, c)| c.end())
        .or_else(|| {
            sim.components().find_map(|(_, c)| match c {
                model::Block::Gpu(g) => Some((Time::MAX, g_done(g), g_xcds(g))),
                _ => None,
            })
        })
        .unwrap_or((Time::MAX, 0, 0));
    if end == Time::MAX {
        return Err(TimingError::Stalled {
            kernel: trace.kernel.clone(),
            done,
            xcds,
        });
    }
    let period = cfg.period();
    Ok(Report {
        kernel: trace.kernel.clone(),
        cycles: end.div_ceil(period),
        time_ps: end,
        clock_mhz: p.clock_mhz,
        events: stats.events,
        epochs: stats.epochs,
        threads: stats.threads,
    })
}

fn g_done(g: &model::GpuCp) -> usize {
    g.progress().0
}

fn g_xcds(g: &model::GpuCp) -> usize {
    g.progress().1
}

#[cfg(test)]
mod tests;
