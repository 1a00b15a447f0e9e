//! The `metrics` plugin: per dispatch, the kernel, grid, waves,
//! wave-instructions by family ([`Family`]), bytes read, written and
//! accessed atomically per space, the active-lane ratio of vector
//! instructions and the achieved wave-instructions per second; a summary
//! per kernel when the process is done with the GPU.
//!
//! Each host thread counts into its own [`Counts`] (no lock per
//! instruction) and adds them to the dispatch's when it leaves it.

use super::{
    DispatchEnd, DispatchInfo, DispatchObserver, Family, Format, InstEvent, MemEvent, MemKind,
    Observer, Options, Output, Plugin, PluginError, SCHEMA, Sink, Space, Spec, Wants, lock,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

pub const OPTIONS: &str = "format=text|jsonl (text), summary=true|false (true)";

/// What one thread, one dispatch or one kernel's dispatches executed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Wave-instructions.
    pub instructions: u64,
    /// Wave-instructions per [`Family`] (indexed by `Family as usize`).
    pub by_family: [u64; Family::COUNT],
    /// Vector instructions ([`Family::is_vector`]) and their active lanes.
    pub vector: u64,
    pub lanes: u64,
    /// Bytes per [`Space`] (indexed by `Space as usize`): read, written,
    /// accessed by atomics.
    pub bytes: [[u64; 3]; 4],
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.instructions += o.instructions;
        for (a, b) in self.by_family.iter_mut().zip(o.by_family) {
            *a += b;
        }
        self.vector += o.vector;
        self.lanes += o.lanes;
        for (a, b) in self.bytes.iter_mut().zip(o.bytes) {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
    }

    pub fn family(&self, f: Family) -> u64 {
        self.by_family[f as usize]
    }

    /// Bytes of `space`: (read, written, atomic).
    pub fn bytes_of(&self, space: Space) -> (u64, u64, u64) {
        let b = self.bytes[space as usize];
        (b[0], b[1], b[2])
    }

    /// Active lanes over 64 per vector instruction (1 when there was none).
    pub fn lane_ratio(&self) -> f64 {
        if self.vector == 0 {
            1.0
        } else {
            self.lanes as f64 / (64.0 * self.vector as f64)
        }
    }

    fn families_json(&self) -> Value {
        Value::Object(
            Family::ALL
                .iter()
                .map(|f| (f.name().to_string(), json!(self.family(*f))))
                .collect(),
        )
    }

    fn bytes_json(&self) -> Value {
        Value::Object(
            Space::ALL
                .iter()
                .map(|s| {
                    let (r, w, a) = self.bytes_of(*s);
                    (
                        s.name().to_string(),
                        json!({"read": r, "written": w, "atomic": a}),
                    )
                })
                .collect(),
        )
    }
}

/// One kernel's dispatches, for the summary.
#[derive(Clone, Debug, Default)]
struct Totals {
    dispatches: u64,
    waves: u64,
    counts: Counts,
    wall: f64,
}

struct Inner {
    format: Format,
    summary: bool,
    sink: Mutex<Sink>,
    /// Per kernel, in order of first dispatch.
    totals: Mutex<Vec<(String, Totals)>>,
}

pub struct Metrics {
    inner: Arc<Inner>,
}

/// The options of `spec`, checked.
fn options(spec: &Spec) -> Result<(Format, bool), PluginError> {
    let mut o = Options::new("metrics", OPTIONS, spec);
    let r = (o.format()?, o.bool("summary", true)?);
    o.finish().map(|()| r)
}

pub(crate) fn check(spec: &Spec) -> Result<(), PluginError> {
    options(spec).map(|_| ())
}

pub(crate) fn make(spec: &Spec, out: &Output) -> Result<Box<dyn Plugin>, PluginError> {
    let (format, summary) = options(spec)?;
    let sink = out.open("metrics", format.ext())?;
    Ok(Box::new(Metrics {
        inner: Arc::new(Inner {
            format,
            summary,
            sink: Mutex::new(sink),
            totals: Mutex::new(Vec::new()),
        }),
    }))
}

impl Plugin for Metrics {
    fn name(&self) -> &'static str {
        "metrics"
    }

    fn wants(&self) -> Wants {
        Wants {
            instructions: true,
            memory: true,
            code: false,
        }
    }

    fn dispatch(&self, d: &DispatchInfo) -> Box<dyn DispatchObserver> {
        Box::new(Dispatch {
            info: d.clone(),
            counts: Mutex::new(Counts::default()),
            inner: self.inner.clone(),
        })
    }

    fn finish(&self) {
        let i = &self.inner;
        if !i.summary {
            return;
        }
        let totals = lock(&i.totals).clone();
        if totals.is_empty() {
            return;
        }
        let text = match i.format {
            Format::Text => summary_table(&totals),
            Format::Jsonl => totals
                .iter()
                .map(|(k, t)| {
                    let r = json!({
                        "schema": SCHEMA,
                        "plugin": "metrics",
                        "type": "summary",
                        "pid": std::process::id(),
                        "kernel": k,
                        "dispatches": t.dispatches,
                        "waves": t.waves,
                        "wave_instructions": t.counts.instructions,
                        "by_family": t.counts.families_json(),
                        "bytes": t.counts.bytes_json(),
                        "active_lane_ratio": t.counts.lane_ratio(),
                        "wall_s": t.wall,
                        "wave_instructions_per_s": rate(t.counts.instructions, t.wall),
                    });
                    format!("{r}\n")
                })
                .collect(),
        };
        lock(&i.sink).write(&text);
    }
}

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

/// Bytes with a binary unit.
fn human(b: u64) -> String {
    let mut v = b as f64;
    for u in ["B", "KiB", "MiB", "GiB"] {
        if v < 1024.0 || u == "GiB" {
            return if u == "B" {
                format!("{b} B")
            } else {
                format!("{v:.1} {u}")
            };
        }
        v /= 1024.0;
    }
    unreachable!()
}

/// A count with a metric suffix.
fn short(n: f64) -> String {
    if n >= 1e9 {
        format!("{:.2}G", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.2}M", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1}k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

fn summary_table(totals: &[(String, Totals)]) -> String {
    let mut s = String::from("metrics: summary (per kernel)\n");
    s += &format!(
        "  {:<32} {:>5} {:>8} {:>10} {:>6} {:>6} {:>6} {:>6} {:>6} {:>10} {:>10} {:>5} {:>9}\n",
        "kernel",
        "disp",
        "waves",
        "wave-insts",
        "valu%",
        "mfma%",
        "salu%",
        "vmem%",
        "lds%",
        "global rd",
        "global wr",
        "lanes",
        "inst/s"
    );
    let pct = |c: &Counts, fs: &[Family]| {
        let n: u64 = fs.iter().map(|f| c.family(*f)).sum();
        if c.instructions == 0 {
            0.0
        } else {
            100.0 * n as f64 / c.instructions as f64
        }
    };
    for (k, t) in totals {
        let c = &t.counts;
        let name = if k.len() > 32 {
            format!("{}..", &k[..30])
        } else {
            k.clone()
        };
        let (r, w, a) = c.bytes_of(Space::Global);
        s += &format!(
            "  {:<32} {:>5} {:>8} {:>10} {:>6.1} {:>6.1} {:>6.1} {:>6.1} {:>6.1} {:>10} {:>10} {:>5.2} {:>9}\n",
            name,
            t.dispatches,
            t.waves,
            short(c.instructions as f64),
            pct(c, &[Family::Valu]),
            pct(c, &[Family::Mfma]),
            pct(c, &[Family::Salu]),
            pct(
                c,
                &[Family::VmemLoad, Family::VmemStore, Family::VmemAtomic]
            ),
            pct(c, &[Family::Lds]),
            human(r + a),
            human(w + a),
            c.lane_ratio(),
            short(rate(c.instructions, t.wall)),
        );
    }
    s
}

struct Dispatch {
    info: DispatchInfo,
    counts: Mutex<Counts>,
    inner: Arc<Inner>,
}

impl DispatchObserver for Dispatch {
    fn worker(&self, _slot: usize) -> Box<dyn Observer + '_> {
        Box::new(Worker {
            d: self,
            c: Counts::default(),
        })
    }

    fn end(self: Box<Self>, end: &DispatchEnd) {
        let c = self.counts.into_inner().unwrap_or_else(|e| e.into_inner());
        let d = &self.info;
        let wall = end.wall.as_secs_f64();
        let inner = &self.inner;
        {
            let mut t = lock(&inner.totals);
            let k = match t.iter().position(|(k, _)| *k == d.kernel) {
                Some(k) => k,
                None => {
                    t.push((d.kernel.clone(), Totals::default()));
                    t.len() - 1
                }
            };
            let e = &mut t[k].1;
            e.dispatches += 1;
            e.waves += end.waves;
            e.counts.add(&c);
            e.wall += wall;
        }
        let line = match inner.format {
            Format::Jsonl => {
                let r = json!({
                    "schema": SCHEMA,
                    "plugin": "metrics",
                    "type": "dispatch",
                    "pid": std::process::id(),
                    "seq": d.seq,
                    "kernel": d.kernel,
                    "target": d.target.name(),
                    "grid": d.grid,
                    "block": d.block,
                    "dispatch_id": d.dispatch_id,
                    "threads": d.threads,
                    "workgroups": end.workgroups,
                    "waves": end.waves,
                    "wave_instructions": c.instructions,
                    "by_family": c.families_json(),
                    "bytes": c.bytes_json(),
                    "vector_instructions": c.vector,
                    "active_lane_ratio": c.lane_ratio(),
                    "wall_s": wall,
                    "wave_instructions_per_s": rate(c.instructions, wall),
                    "error": end.error,
                });
                format!("{r}\n")
            }
            Format::Text => {
                let fams = Family::ALL
                    .iter()
                    .filter(|f| c.family(**f) > 0)
                    .map(|f| format!("{} {}", f.name(), c.family(*f)))
                    .collect::<Vec<_>>()
                    .join(", ");
                let bytes = Space::ALL
                    .iter()
                    .filter_map(|s| {
                        let (r, w, a) = c.bytes_of(*s);
                        (r + w + a > 0).then(|| {
                            let mut x = format!("{} rd {} wr {}", s.name(), human(r), human(w));
                            if a > 0 {
                                x += &format!(" atomic {}", human(a));
                            }
                            x
                        })
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                format!(
                    "metrics: dispatch {} {} grid {}x{}x{} block {}x{}x{}: {} waves, {} wave-insts ({fams}); {}; lanes {:.2}; {:.3} s, {} wave-insts/s{}\n",
                    d.seq,
                    d.kernel,
                    d.grid[0],
                    d.grid[1],
                    d.grid[2],
                    d.block[0],
                    d.block[1],
                    d.block[2],
                    end.waves,
                    c.instructions,
                    if bytes.is_empty() {
                        "no memory"
                    } else {
                        &bytes
                    },
                    c.lane_ratio(),
                    wall,
                    short(rate(c.instructions, wall)),
                    end.error
                        .as_ref()
                        .map(|e| format!(" (stopped: {})", e.lines().next().unwrap_or_default()))
                        .unwrap_or_default(),
                )
            }
        };
        lock(&inner.sink).write(&line);
    }
}

struct Worker<'a> {
    d: &'a Dispatch,
    c: Counts,
}

impl Observer for Worker<'_> {
    #[inline]
    fn instruction(&mut self, i: &InstEvent) {
        let f = i.op.class.family;
        let c = &mut self.c;
        c.instructions += 1;
        c.by_family[f as usize] += 1;
        if f.is_vector() {
            c.vector += 1;
            c.lanes += u64::from(i.exec.count_ones());
        }
    }

    fn memory(&mut self, m: &MemEvent) {
        let k = match m.op.class.mem {
            MemKind::Load => 0,
            MemKind::Store => 1,
            MemKind::Atomic => 2,
            MemKind::None => return,
        };
        for (s, b) in m.bytes_by_space().into_iter().enumerate() {
            self.c.bytes[s][k] += b;
        }
    }

    fn finish(self: Box<Self>) {
        lock(&self.d.counts).add(&self.c);
    }
}
