//! What a dead session left behind (its supervisor is gone): processes
//! found by the `MIRAGE_SESSION_DIR` tag in their environment, containers
//! and networks by the `mirage.session-dir` label, and its directory.

use mirage_container::Engine;
use mirage_core::session::{LABEL_SESSION_DIR, SessionDir};
use serde::Serialize;
use std::path::{Path, PathBuf};
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

    pub fn add(&mut self, o: Report) {
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
pub fn one(d: &SessionDir, dry: bool) -> Report {
    let engine = Engine::detect().ok();
    one_with(d, dry, engine.as_ref())
}

/// [`one`] with the container engine found already.
pub fn one_with(d: &SessionDir, dry: bool, engine: Option<&Engine>) -> Report {
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
            crate::remove_session_dir(d);
        }
    }
    r
}
