//! `mirage cleanup`: what killed sessions left behind. A session whose
//! lock is free has no supervisor; everything it started is found by its
//! tags: processes by `MIRAGE_SESSION_DIR` in their environment,
//! containers and networks by the `mirage.session-dir` label (only those
//! of this runtime directory are touched).

use crate::{Ctx, print_json};
use anyhow::Result;
use mirage_container::Engine;
use mirage_core::session::{self, LABEL_RUNTIME, LABEL_SESSION_DIR, Liveness, SessionDir};
use mirage_host::cleanup::{Report, one_with};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
            report.add(one_with(&d, dry, engine.as_ref()));
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
