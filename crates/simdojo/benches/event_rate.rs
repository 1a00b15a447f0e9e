//! simdojo's event rate: the synthetic GPU model (`rocjitsu_simdojo::synthetic`)
//! the size of an MI300X (8 XCDs x 38 compute units, every compute unit
//! ticking at 2100 MHz) run for a stretch of simulated time at several
//! thread counts; prints events per second and the scaling over one thread.
//!
//! `make bench-simdojo` (`cargo bench -p rocjitsu-simdojo --bench event_rate
//! -- --threads 1,2,4,8,16`). Every run of one partitioning must end in the
//! same state as its first run (the engine is deterministic at any thread
//! count); the benchmark fails otherwise. A run uses at most one thread per
//! partition (`used`): 9 partitioned per XCD, 41 per shader engine. The
//! `cpu s` column is the process's CPU time over the run: where other work
//! shares the cores, the wall-time scaling says little, and the CPU time
//! at N threads over one thread's is the engine's parallel overhead.

use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Parser, ValueEnum};
use rocjitsu_simdojo::synthetic::{Cut, GpuShape, Synthetic};
use rocjitsu_simdojo::time::US;
use rocjitsu_simdojo::{RunOptions, Simulation, Topology};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CutArg {
    /// One partition per XCD, plus the memory's (9 on an MI300X).
    Xcd,
    /// One partition per XCD's L2 and one per shader engine, plus the
    /// memory's (41 on an MI300X).
    Se,
}

/// simdojo's event rate on a synthetic MI300X-sized model at several thread
/// counts.
#[derive(Debug, Parser)]
#[command(name = "event_rate")]
struct Args {
    /// Thread counts to run, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16")]
    threads: Vec<usize>,
    /// Partitionings to run.
    #[arg(long, value_delimiter = ',', default_value = "xcd,se")]
    cut: Vec<CutArg>,
    /// Simulated time per run, in microseconds.
    #[arg(long, default_value_t = 20)]
    sim_us: u64,
    /// Runs per thread count; the fastest is reported.
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Run the synthetic behaviour on this topology file instead of the
    /// generated ones (relative to the workspace root, e.g.
    /// configs/timing/mi300x.json); `--cut` is then ignored.
    #[arg(long, value_name = "FILE")]
    topology: Option<std::path::PathBuf>,
    /// Passed by `cargo bench`; ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

/// A digest of every component's state.
fn digest(sim: &Simulation<Synthetic>) -> u64 {
    sim.components().fold(0u64, |h, (_, c)| {
        (h ^ c.state() ^ c.handled().rotate_left(32)).wrapping_mul(0x100_0000_01B3)
    })
}

/// The process's CPU time (user and system, all threads) from
/// `/proc/self/stat`, in seconds at the kernel's USER_HZ of 100; 0 where
/// it cannot be read. On a machine shared with other work, the CPU time
/// at N threads over the CPU time at one shows the engine's own overhead
/// when the wall time cannot.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // The fields after the command name (which may hold spaces) start at
    // the state, field 3; utime and stime are fields 14 and 15.
    let Some((_, rest)) = stat.rsplit_once(") ") else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    (ticks(11) + ticks(12)) as f64 / 100.0
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.threads.contains(&0) {
        bail!("--threads: 0 is not a thread count");
    }
    let shape = GpuShape::mi300x();
    let until = args.sim_us * US;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runs: Vec<(&str, Topology)> = match &args.topology {
        Some(file) => {
            // `cargo bench` runs in the crate's directory: a relative path
            // is taken from the workspace root.
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            vec![("file", Topology::load(root.join(file))?)]
        }
        None => args
            .cut
            .iter()
            .map(|cut| {
                let (name, cut) = match cut {
                    CutArg::Xcd => ("xcd", Cut::Xcd),
                    CutArg::Se => ("se", Cut::ShaderEngine),
                };
                let topo = Topology::from_str("synthetic MI300X", &shape.topology_json(cut))
                    .context("the synthetic topology")?;
                Ok((name, topo))
            })
            .collect::<anyhow::Result<_>>()?,
    };
    let model = match &args.topology {
        Some(file) => format!(
            "the synthetic behaviour on {} ({} components, compute units at {} ps per cycle)",
            file.display(),
            runs[0].1.instances.len(),
            shape.clock.period()
        ),
        None => format!(
            "synthetic MI300X ({} XCDs x {} CUs = {} compute units at {} ps per cycle)",
            shape.xcds,
            shape.cus_per_shader_engine.iter().sum::<u32>(),
            shape.compute_units(),
            shape.clock.period()
        ),
    };
    println!(
        "simdojo event rate: {model}, {} us simulated, {cores} host cores",
        args.sim_us
    );
    println!(
        "{:<4} {:>10} {:>13} {:>7} {:>5} {:>11} {:>7} {:>8} {:>7} {:>10} {:>8}",
        "cut",
        "partitions",
        "lookahead ns",
        "threads",
        "used",
        "events",
        "epochs",
        "wall s",
        "cpu s",
        "Mevents/s",
        "scaling"
    );
    for (name, topo) in runs {
        let period = shape.clock.period();
        let mut base_rate = None;
        let mut expect = None;
        for &threads in &args.threads {
            let mut best: Option<(f64, u64, u64, usize, usize, f64)> = None;
            for _ in 0..args.repeat.max(1) {
                let mut sim =
                    topo.build(|i| Synthetic::new(i.kind, period, i.path.len() as u64))?;
                let (start, cpu0) = (Instant::now(), cpu_seconds());
                let stats = sim.run(RunOptions { threads, until })?;
                let wall = start.elapsed().as_secs_f64();
                let cpu = cpu_seconds() - cpu0;
                let d = digest(&sim);
                if *expect.get_or_insert(d) != d {
                    bail!(
                        "{name} at {threads} threads: the model ended in another state than at {} threads",
                        args.threads[0]
                    );
                }
                if best.is_none_or(|b| wall < b.0) {
                    best = Some((
                        wall,
                        stats.events,
                        stats.epochs,
                        sim.partitions(),
                        stats.threads,
                        cpu,
                    ));
                }
            }
            let Some((wall, events, epochs, partitions, used, cpu)) = best else {
                continue;
            };
            let rate = events as f64 / wall;
            let base = *base_rate.get_or_insert(rate);
            println!(
                "{:<4} {:>10} {:>13.1} {:>7} {:>5} {:>11} {:>7} {:>8.3} {:>7.2} {:>10.2} {:>7.2}x",
                name,
                partitions,
                topo.lookahead().unwrap_or(0) as f64 / 1000.0,
                threads,
                used,
                events,
                epochs,
                wall,
                cpu,
                rate / 1e6,
                rate / base
            );
        }
    }
    Ok(())
}
