//! The `trace` plugin: a trace in the JSON trace-event format that Perfetto
//! (ui.perfetto.dev) and chrome://tracing open, of dispatches, workgroups
//! per host-thread slot and waves, over host time.
//!
//! The file (`trace-<pid>.json` in the plugin directory, else the current
//! directory) is a JSON array of events, complete after every dispatch:
//! each dispatch's events are written over the closing `]`, which is
//! written again after them. Tracks (`tid`): 0 the dispatches; `1 + slot`
//! the workgroups that host-thread slot ran; `WAVE_TID + 64 * slot + wave`
//! the waves of that slot (wave index in the workgroup). Timestamps are
//! microseconds since the plugins started.

use super::{
    DispatchEnd, DispatchInfo, DispatchObserver, GroupEvent, Observer, Options, Output, Plugin,
    PluginError, Spec, Wants, WaveId, lock, micros,
};
use serde_json::json;
use std::collections::BTreeSet;
use std::io::{Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub const OPTIONS: &str = "waves=true|false (true)";

/// The first wave track's `tid`.
pub const WAVE_TID: u64 = 10_000;

struct File {
    f: std::fs::File,
    path: PathBuf,
    /// Tracks named so far (a `thread_name` metadata event each).
    named: BTreeSet<u64>,
    failed: bool,
}

impl File {
    /// Appends `events` (JSON objects) before the closing `]`.
    fn append(&mut self, events: &[serde_json::Value]) {
        if self.failed || events.is_empty() {
            return;
        }
        let mut text = String::new();
        for e in events {
            text += ",\n";
            text += &e.to_string();
        }
        text += "\n]\n";
        let r = self
            .f
            .seek(SeekFrom::End(-3))
            .and_then(|_| self.f.write_all(text.as_bytes()));
        if let Err(e) = r {
            tracing::warn!("trace plugin: writing {}: {e}", self.path.display());
            self.failed = true;
        }
    }
}

struct Inner {
    waves: bool,
    pid: u32,
    file: Mutex<File>,
    dispatches: std::sync::atomic::AtomicU64,
}

pub struct Trace {
    inner: Arc<Inner>,
}

fn options(spec: &Spec) -> Result<bool, PluginError> {
    let mut o = Options::new("trace", OPTIONS, spec);
    let r = o.bool("waves", true)?;
    o.finish().map(|()| r)
}

pub(crate) fn check(spec: &Spec) -> Result<(), PluginError> {
    options(spec).map(|_| ())
}

pub(crate) fn make(spec: &Spec, out: &Output) -> Result<Box<dyn Plugin>, PluginError> {
    let waves = options(spec)?;
    let (mut f, path) = out.file("trace", "json")?;
    let pid = std::process::id();
    let head = json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                      "args": {"name": format!("rocjitsu GPU (pid {pid})")}});
    // The last three bytes are always "\n]\n" (see `File::append`).
    f.write_all(format!("[\n{head}\n]\n").as_bytes())
        .map_err(|e| PluginError::Output {
            plugin: "trace",
            why: format!("writing {}: {e}", path.display()),
        })?;
    Ok(Box::new(Trace {
        inner: Arc::new(Inner {
            waves,
            pid,
            file: Mutex::new(File {
                f,
                path,
                named: BTreeSet::new(),
                failed: false,
            }),
            dispatches: Default::default(),
        }),
    }))
}

impl Plugin for Trace {
    fn name(&self) -> &'static str {
        "trace"
    }

    fn wants(&self) -> Wants {
        Wants::default()
    }

    fn dispatch(&self, d: &DispatchInfo) -> Box<dyn DispatchObserver> {
        Box::new(Dispatch {
            info: d.clone(),
            events: Mutex::new(Vec::new()),
            inner: self.inner.clone(),
        })
    }

    fn finish(&self) {
        let f = lock(&self.inner.file);
        let n = self
            .inner
            .dispatches
            .load(std::sync::atomic::Ordering::Relaxed);
        eprintln!(
            "rocjitsu: trace of {n} dispatch(es) in {} (open it in ui.perfetto.dev or chrome://tracing)",
            f.path.display()
        );
    }
}

/// A workgroup or wave span, kept until the dispatch ends.
#[derive(Clone, Copy)]
struct Span {
    tid: u64,
    group: [u32; 3],
    /// Wave index, or `u32::MAX` for the workgroup.
    wave: u32,
    waves: u32,
    start: Instant,
    end: Instant,
}

struct Dispatch {
    info: DispatchInfo,
    events: Mutex<Vec<Span>>,
    inner: Arc<Inner>,
}

impl DispatchObserver for Dispatch {
    fn worker(&self, slot: usize) -> Box<dyn Observer + '_> {
        Box::new(Worker {
            d: self,
            slot: slot as u64,
            group_start: Instant::now(),
            wave_start: Vec::new(),
            spans: Vec::new(),
        })
    }

    fn end(self: Box<Self>, end: &DispatchEnd) {
        let spans = self.events.into_inner().unwrap_or_else(|e| e.into_inner());
        let d = &self.info;
        let pid = self.inner.pid;
        let us = |t: Instant| micros(t);
        let mut ev = Vec::with_capacity(spans.len() + 1);
        ev.push(json!({
            "name": d.kernel, "cat": "dispatch", "ph": "X", "pid": pid, "tid": 0,
            "ts": us(d.start), "dur": end.wall.as_secs_f64() * 1e6,
            "args": {"seq": d.seq, "grid": d.grid, "block": d.block, "dispatch_id": d.dispatch_id,
                     "workgroups": end.workgroups, "waves": end.waves,
                     "wave_instructions": end.instructions, "error": end.error},
        }));
        let mut tids = BTreeSet::new();
        for s in &spans {
            tids.insert(s.tid);
            let g = s.group;
            let dur = s.end.saturating_duration_since(s.start).as_secs_f64() * 1e6;
            ev.push(if s.wave == u32::MAX {
                json!({
                    "name": format!("{} wg ({},{},{})", d.kernel, g[0], g[1], g[2]),
                    "cat": "workgroup", "ph": "X", "pid": pid, "tid": s.tid,
                    "ts": us(s.start), "dur": dur,
                    "args": {"dispatch": d.seq, "group": g, "waves": s.waves},
                })
            } else {
                json!({
                    "name": format!("wave {}", s.wave),
                    "cat": "wave", "ph": "X", "pid": pid, "tid": s.tid,
                    "ts": us(s.start), "dur": dur,
                    "args": {"dispatch": d.seq, "group": g, "wave": s.wave},
                })
            });
        }
        let mut f = lock(&self.inner.file);
        let mut names = Vec::new();
        tids.insert(0);
        for t in tids {
            if f.named.insert(t) {
                let name = match t {
                    0 => "dispatches".to_string(),
                    t if t < WAVE_TID => format!("slot {} workgroups", t - 1),
                    t => format!("slot {} wave {}", (t - WAVE_TID) / 64, (t - WAVE_TID) % 64),
                };
                names.push(
                    json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": t,
                                  "args": {"name": name}}),
                );
                names.push(
                    json!({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": t,
                                  "args": {"sort_index": t}}),
                );
            }
        }
        names.extend(ev);
        f.append(&names);
        self.inner
            .dispatches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

struct Worker<'a> {
    d: &'a Dispatch,
    slot: u64,
    group_start: Instant,
    wave_start: Vec<Instant>,
    spans: Vec<Span>,
}

impl Observer for Worker<'_> {
    fn group_begin(&mut self, _g: &GroupEvent) {
        self.group_start = Instant::now();
    }

    fn wave_begin(&mut self, w: WaveId) {
        if self.d.inner.waves {
            let i = w.wave as usize;
            if self.wave_start.len() <= i {
                self.wave_start.resize(i + 1, self.group_start);
            }
            self.wave_start[i] = self.group_start;
        }
    }

    fn wave_end(&mut self, w: WaveId) {
        if self.d.inner.waves {
            let start = self
                .wave_start
                .get(w.wave as usize)
                .copied()
                .unwrap_or(self.group_start);
            self.spans.push(Span {
                tid: WAVE_TID + 64 * self.slot + u64::from(w.wave),
                group: w.group,
                wave: w.wave,
                waves: 0,
                start,
                end: Instant::now(),
            });
        }
    }

    fn group_end(&mut self, g: &GroupEvent) {
        self.spans.push(Span {
            tid: 1 + self.slot,
            group: g.group,
            wave: u32::MAX,
            waves: g.waves,
            start: self.group_start,
            end: Instant::now(),
        });
    }

    fn finish(self: Box<Self>) {
        lock(&self.d.events).extend(self.spans);
    }
}
