//! `mirage cleanup`: what killed sessions left behind. A session whose
//! lock is free has no supervisor; everything it started is found by its
//! tags: processes by `MIRAGE_SESSION_DIR` in their environment,
//! containers and networks by the `mirage.session-dir` label (only those
//! of this runtime directory are touched).

use crate::{Ctx, print_json};
use anyhow::Result;
use mirage_container::Engine;
use mirage_core::session::{self, LABEL_RUNTIME, LABEL_SESSION_DIR, Liveness, SessionDir};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub sessions: Vec<String>,
    pub processes: Vec<u32>,
    pub containers: Vec<String>,
    pub networks: Vec<String>,
    pub directories: Vec<PathBuf>,
}

impl Report {
    pub fn summary(&self) -> String {
        format!(
            "{} process(es), {} container(s), {} network(s), {} directorie(s)",
            self.processes.len(),
            self.containers.len(),
            self.networks.len(),
            self.directories.len()
        )
    }

    fn add(&mut self, o: Report) {
        self.sessions.extend(o.sessions);
        self.processes.extend(o.processes);
        self.containers.extend(o.containers);
        self.networks.extend(o.networks);
        self.directories.extend(o.directories);
    }
}

fn remove_containers(engine: Option<&Engine>, session_dir: &Path, dry: bool, r: &mut Report) {
    let Some(e) = engine else { return };
    let value = session_dir.display().to_string();
    for (name, _) in e
        .containers_with_label(LABEL_SESSION_DIR, &value)
        .unwrap_or_default()
    {
        if dry || e.remove(&name).is_ok() {
            r.containers.push(name);
        }
    }
    for net in e
        .networks_with_label(LABEL_SESSION_DIR, &value)
        .unwrap_or_default()
    {
        if dry || e.network_remove(&net).is_ok() {
            r.networks.push(net);
        }
    }
}

/// Removes what one dead session left.
pub fn one(ctx: &Ctx, d: &SessionDir, dry: bool) -> Report {
    let engine = Engine::detect().ok();
    one_with(ctx, d, dry, engine.as_ref())
}

fn one_with(_ctx: &Ctx, d: &SessionDir, dry: bool, engine: Option<&Engine>) -> Report {
    let mut r = Report {
        sessions: vec![d.id.clone()],
        ..Default::default()
    };
    r.processes = if dry {
        mirage_core::proctable::of_session(&d.dir)
    } else {
        mirage_core::proctable::kill_session(&d.dir, Duration::from_secs(2))
    };
    remove_containers(engine, &d.dir, dry, &mut r);
    if d.dir.exists() {
        r.directories.push(d.dir.clone());
        if !dry {
            mirage_host::remove_session_dir(d);
        }
    }
    r
}

fn pid_alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("");
    !stat.is_empty() && state != "Z" && state != "X"
}

pub fn command(ctx: &Ctx, dry: bool) -> Result<ExitCode> {
    let sessions = ctx.paths.sessions();
    let engine = Engine::detect().ok();
    let mut report = Report::default();
    // 1. Session directories whose supervisor is gone.
    for (d, l) in session::scan(&sessions) {
        if l == Liveness::Dead {
            report.add(one_with(ctx, &d, dry, engine.as_ref()));
        }
    }
    // 2. Directories a teardown was removing when it died.
    if let Ok(rd) = std::fs::read_dir(&sessions) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name
                .strip_prefix('.')
                .and_then(|n| n.rsplit_once(".removing-"))
                .and_then(|(_, p)| p.parse::<u32>().ok())
                && !pid_alive(pid)
            {
                report.directories.push(e.path());
                if !dry {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
    let alive = |dir: &Path| {
        dir.is_dir()
            && SessionDir::new(
                &sessions,
                &dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            )
            .liveness()
                == Liveness::Alive
    };
    // 3. Tagged processes of sessions of this runtime directory that are gone.
    let mut orphans: Vec<u32> = vec![];
    for (pid, dir) in mirage_core::proctable::tagged() {
        if dir.starts_with(&sessions) && !alive(&dir) && !report.processes.contains(&pid) {
            orphans.push(pid);
        }
    }
    if !orphans.is_empty() {
        if !dry {
            mirage_core::proctable::signal_all(&orphans, libc::SIGKILL);
        }
        report.processes.extend(orphans);
    }
    // 4. Containers and networks of this runtime directory whose session is gone.
    if let Some(e) = &engine {
        let runtime = ctx.paths.runtime.display().to_string();
        for (name, labels) in e
            .containers_with_label(LABEL_RUNTIME, &runtime)
            .unwrap_or_default()
        {
            // A container whose labels cannot be read is left alone.
            let Some(dir) = labels.get(LABEL_SESSION_DIR).map(PathBuf::from) else {
                continue;
            };
            if !alive(&dir)
                && !report.containers.contains(&name)
                && (dry || e.remove(&name).is_ok())
            {
                report.containers.push(name);
            }
        }
        for net in e
            .networks_with_label(LABEL_RUNTIME, &runtime)
            .unwrap_or_default()
        {
            let id = net.strip_prefix("mirage-").unwrap_or(&net);
            if !alive(&sessions.join(id))
                && !report.networks.contains(&net)
                && (dry || e.network_remove(&net).is_ok())
            {
                report.networks.push(net);
            }
        }
    }
    if ctx.json {
        print_json(&serde_json::json!({ "dry_run": dry, "removed": report }))?;
    } else if report.sessions.is_empty()
        && report.processes.is_empty()
        && report.containers.is_empty()
        && report.networks.is_empty()
        && report.directories.is_empty()
    {
        println!("nothing to clean up");
    } else {
        let verb = if dry { "would remove" } else { "removed" };
        for s in &report.sessions {
            println!("session {s}: supervisor gone");
        }
        for p in &report.processes {
            println!("{verb} process {p}");
        }
        for c in &report.containers {
            println!("{verb} container {c}");
        }
        for n in &report.networks {
            println!("{verb} network {n}");
        }
        for d in &report.directories {
            println!("{verb} {}", d.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
