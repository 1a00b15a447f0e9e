//! Drives a container engine's command line (`podman`, or `docker`):
//! images imported from local root file systems (no registry is needed),
//! a network per session, one long-lived container per node, commands
//! executed in them, and removal by label.
//!
//! Some machines refuse the engine's defaults: root without
//! CAP_SYS_RESOURCE cannot raise the containers' rlimits (runc: "error
//! setting rlimits", crun: setrlimit EPERM, then "cgroups in hybrid mode not
//! supported"). When starting a container fails that way, [`Engine`] starts
//! it again with runc and limits the machine allows (`--ulimit nofile`,
//! `--ulimit nproc`), and keeps those flags for the rest of its life.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    #[error("no container engine: {0}")]
    NoEngine(String),
    #[error("`{command}` failed: {message}")]
    Failed { command: String, message: String },
    #[error(
        "image '{0}' is not in the container engine's local storage: build it with `mirage image build` (or import a root file system with `podman import`)"
    )]
    NoImage(String),
}

pub type Result<T, E = ContainerError> = std::result::Result<T, E>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Podman,
    Docker,
}

/// A container engine CLI.
#[derive(Debug)]
pub struct Engine {
    pub program: PathBuf,
    pub flavor: Flavor,
    pub version: String,
    /// Flags added to every `run` (decided when the first start fails).
    run_flags: Mutex<Option<Vec<String>>>,
}

/// One node's container.
#[derive(Debug, Clone, Default)]
pub struct NodeSpec {
    pub name: String,
    pub hostname: String,
    pub image: String,
    /// A network to join; `None` shares the host's.
    pub network: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub env: Vec<(String, String)>,
    /// (host path, path in the container, read-only)
    pub mounts: Vec<(PathBuf, PathBuf, bool)>,
}

/// An image in local storage.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ImageInfo {
    pub id: String,
    pub names: Vec<String>,
    pub labels: BTreeMap<String, String>,
    pub size: u64,
    pub created: i64,
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn shown(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// The rlimit flags of the fallback: this process's own open-files limit
/// (at most 65536) and a process limit the machines seen accept.
fn limited_flags(notes: bool) -> Vec<String> {
    let mut f = vec![];
    if which("runc").is_some() {
        f.extend(["--runtime".to_string(), "runc".to_string()]);
    }
    let (nofile, nproc) = if notes {
        (1024, 1000)
    } else {
        // SAFETY: rlimit is plain data written by getrlimit.
        let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
        // SAFETY: r is a valid rlimit to write.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0;
        let n = if ok { r.rlim_cur.min(65536) } else { 1024 };
        (n, 32768)
    };
    f.extend([
        "--ulimit".to_string(),
        format!("nofile={nofile}:{nofile}"),
        "--ulimit".to_string(),
        format!("nproc={nproc}:{nproc}"),
    ]);
    f
}

/// Labels as podman prints them (an object) or docker (`k=v,k2=v2`).
fn labels_of(v: &serde_json::Value) -> BTreeMap<String, String> {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
        serde_json::Value::String(s) => s
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        _ => BTreeMap::new(),
    }
}

/// A JSON list as podman prints it (one array), or as docker prints it
/// (one object per line).
fn json_list(out: &[u8]) -> serde_json::Value {
    if let Ok(v @ serde_json::Value::Array(_)) = serde_json::from_slice(out) {
        return v;
    }
    serde_json::Value::Array(
        String::from_utf8_lossy(out)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
    )
}

fn is_rlimit_failure(stderr: &str) -> bool {
    let s = stderr.to_ascii_lowercase();
    s.contains("rlimit") || s.contains("hybrid mode") || s.contains("setrlimit")
}

impl Engine {
    /// `$MIRAGE_CONTAINER_ENGINE` (a program name or path), else podman,
    /// else docker, whichever answers `--version`.
    pub fn detect() -> Result<Engine> {
        let candidates: Vec<PathBuf> =
            match std::env::var_os("MIRAGE_CONTAINER_ENGINE").filter(|v| !v.is_empty()) {
                Some(p) => {
                    let p = PathBuf::from(p);
                    vec![if p.components().count() > 1 {
                        p.clone()
                    } else {
                        which(&p.to_string_lossy()).unwrap_or(p)
                    }]
                }
                None => ["podman", "docker"]
                    .iter()
                    .filter_map(|n| which(n))
                    .collect(),
            };
        let mut tried = vec![];
        for p in candidates {
            let out = Command::new(&p)
                .arg("--version")
                .stdin(Stdio::null())
                .output();
            match out {
                Ok(o) if o.status.success() => {
                    let version = String::from_utf8_lossy(&o.stdout).trim().to_string();
                    let flavor = if version.to_ascii_lowercase().contains("podman") {
                        Flavor::Podman
                    } else {
                        Flavor::Docker
                    };
                    return Ok(Engine {
                        program: p,
                        flavor,
                        version,
                        run_flags: Mutex::new(
                            std::env::var("MIRAGE_CONTAINER_RUN_FLAGS")
                                .ok()
                                .map(|s| s.split_whitespace().map(String::from).collect()),
                        ),
                    });
                }
                Ok(o) => tried.push(format!(
                    "{}: {}",
                    p.display(),
                    String::from_utf8_lossy(&o.stderr).trim()
                )),
                Err(e) => tried.push(format!("{}: {e}", p.display())),
            }
        }
        Err(ContainerError::NoEngine(if tried.is_empty() {
            "neither podman nor docker is installed (Debian: apt-get install podman runc; `make setup` does it)".into()
        } else {
            tried.join("; ")
        }))
    }

    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.stdin(Stdio::null());
        c
    }

    /// The flags every `run` gets, once decided.
    pub fn run_flags(&self) -> Vec<String> {
        self.run_flags
            .lock()
            .map(|f| f.clone().unwrap_or_default())
            .unwrap_or_default()
    }

    fn output(&self, mut cmd: Command) -> Result<Vec<u8>> {
        let line = shown(&cmd);
        tracing::debug!("{line}");
        let out = cmd.output().map_err(|e| ContainerError::Failed {
            command: line.clone(),
            message: e.to_string(),
        })?;
        if !out.status.success() {
            return Err(ContainerError::Failed {
                command: line,
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(out.stdout)
    }

    fn args<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let mut c = self.command();
        c.args(args.into_iter().map(Into::into));
        c
    }

    /// Imports a root file system as image `name` (with labels and a
    /// default command of `/bin/bash`), replacing an image of that name.
    pub fn import(
        &self,
        rootfs: &Path,
        name: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<()> {
        let mut tar = Command::new("tar");
        tar.arg("-C")
            .arg(rootfs)
            // Scratch directories stay, empty: their files belong to
            // whoever uses the tree now (sockets of a running daemon).
            .args([
                "--one-file-system",
                "--exclude=./tmp/*",
                "--exclude=./var/tmp/*",
                "--exclude=./run/*",
                "-c",
                ".",
            ])
            .stdout(Stdio::piped())
            .stdin(Stdio::null());
        let tar_line = shown(&tar);
        let mut tar_child = tar.spawn().map_err(|e| ContainerError::Failed {
            command: tar_line.clone(),
            message: e.to_string(),
        })?;
        let mut imp = self.command();
        imp.arg("import");
        for (k, v) in labels {
            imp.arg("--change").arg(format!("LABEL {k}={v}"));
        }
        imp.args(["--change", "CMD [\"/bin/bash\"]", "-", name]);
        imp.stdin(
            tar_child
                .stdout
                .take()
                .map(Stdio::from)
                .unwrap_or(Stdio::null()),
        );
        let r = self.output(imp);
        let tar_status = tar_child.wait();
        r?;
        match tar_status {
            Ok(s) if s.success() => Ok(()),
            // GNU tar's "some files changed as they were read": a tree in
            // use elsewhere; what was read is in the image.
            Ok(s) if s.code() == Some(1) => {
                tracing::warn!(
                    "{}: files changed while the image was read (the tree is in use); the image holds them as read",
                    rootfs.display()
                );
                Ok(())
            }
            Ok(s) => Err(ContainerError::Failed {
                command: tar_line,
                message: format!("exited with {s}"),
            }),
            Err(e) => Err(ContainerError::Failed {
                command: tar_line,
                message: e.to_string(),
            }),
        }
    }

    /// The labels of an image, or `None` when there is no such image.
    pub fn image_labels(&self, name: &str) -> Option<BTreeMap<String, String>> {
        let out = self
            .output(self.args(["image", "inspect", "--format", "{{json .Labels}}", name]))
            .ok()?;
        let text = String::from_utf8_lossy(&out);
        let labels: Option<BTreeMap<String, String>> =
            serde_json::from_str(text.trim()).unwrap_or_default();
        Some(labels.unwrap_or_default())
    }

    pub fn image_exists(&self, name: &str) -> bool {
        self.image_labels(name).is_some()
    }

    /// The images carrying a label.
    pub fn images_with_label(&self, label: &str) -> Result<Vec<ImageInfo>> {
        let out = self.output(self.args([
            "images",
            "--filter",
            &format!("label={label}"),
            "--format",
            "json",
        ]))?;
        let v: serde_json::Value = json_list(&out);
        let mut list = vec![];
        for i in v.as_array().into_iter().flatten() {
            let labels = labels_of(&i["Labels"]);
            list.push(ImageInfo {
                id: i["Id"]
                    .as_str()
                    .unwrap_or_default()
                    .chars()
                    .take(12)
                    .collect(),
                names: i["Names"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|n| n.as_str().map(String::from))
                    .collect(),
                labels,
                size: i["Size"].as_u64().unwrap_or(0),
                created: i["Created"].as_i64().unwrap_or(0),
            });
        }
        Ok(list)
    }

    pub fn remove_image(&self, name: &str) -> Result<()> {
        self.output(self.args(["rmi", name])).map(|_| ())
    }

    /// Creates a network; returns its subnet when the engine reports one.
    pub fn network_create(&self, name: &str, labels: &BTreeMap<String, String>) -> Result<()> {
        let mut c = self.args(["network", "create"]);
        for (k, v) in labels {
            c.arg("--label").arg(format!("{k}={v}"));
        }
        c.arg(name);
        self.output(c).map(|_| ())
    }

    pub fn network_remove(&self, name: &str) -> Result<()> {
        let args: &[&str] = match self.flavor {
            Flavor::Podman => &["network", "rm", "-f", name],
            Flavor::Docker => &["network", "rm", name],
        };
        self.output(self.args(args)).map(|_| ())
    }

    /// Networks carrying `label=value`.
    pub fn networks_with_label(&self, label: &str, value: &str) -> Result<Vec<String>> {
        let out = self.output(self.args([
            "network",
            "ls",
            "--filter",
            &format!("label={label}={value}"),
            "--format",
            "{{.Name}}",
        ]))?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect())
    }

    /// Containers (running or not) carrying `label=value`, by name, with
    /// the values of `also` (another label) beside them.
    pub fn containers_with_label(
        &self,
        label: &str,
        value: &str,
    ) -> Result<Vec<(String, BTreeMap<String, String>)>> {
        let out = self.output(self.args([
            "ps",
            "-a",
            "--filter",
            &format!("label={label}={value}"),
            "--format",
            "json",
        ]))?;
        let v: serde_json::Value = json_list(&out);
        let mut list = vec![];
        for c in v.as_array().into_iter().flatten() {
            let name = c["Names"]
                .as_array()
                .and_then(|n| n.first())
                .and_then(|n| n.as_str())
                .map(String::from)
                .or_else(|| c["Names"].as_str().map(String::from))
                .unwrap_or_default();
            list.push((name, labels_of(&c["Labels"])));
        }
        Ok(list)
    }

    /// Removes a container at once (no stop timeout: the session is ending).
    pub fn remove(&self, name: &str) -> Result<()> {
        let args: &[&str] = match self.flavor {
            Flavor::Podman => &["rm", "-f", "-t", "0", name],
            Flavor::Docker => &["rm", "-f", name],
        };
        self.output(self.args(args)).map(|_| ())
    }

    fn run_command(&self, spec: &NodeSpec, flags: &[String]) -> Command {
        let mut c = self.args(["run", "-d"]);
        c.args(flags);
        c.args(["--name", &spec.name, "--hostname", &spec.hostname]);
        for (k, v) in &spec.labels {
            c.arg("--label").arg(format!("{k}={v}"));
        }
        match &spec.network {
            Some(n) => c.args(["--network", n]),
            None => c.args(["--network", "host"]),
        };
        for (k, v) in &spec.env {
            c.arg("--env").arg(format!("{k}={v}"));
        }
        for (h, g, ro) in &spec.mounts {
            let mut v = OsString::from(h);
            v.push(":");
            v.push(g);
            if *ro {
                v.push(":ro");
            }
            c.arg("--volume").arg(v);
        }
        c.args([spec.image.as_str(), "sleep", "infinity"]);
        c
    }

    /// Starts a node's container (its first process sleeps; executions come
    /// with `exec`). Returns the container id.
    pub fn run_node(&self, spec: &NodeSpec) -> Result<String> {
        if !self.image_exists(&spec.image) {
            return Err(ContainerError::NoImage(spec.image.clone()));
        }
        let decided = self.run_flags.lock().map(|f| f.clone()).unwrap_or(None);
        let ladder: Vec<Vec<String>> = match decided {
            Some(f) => vec![f],
            None => vec![vec![], limited_flags(false), limited_flags(true)],
        };
        let mut last = None;
        for flags in ladder {
            match self.output(self.run_command(spec, &flags)) {
                Ok(out) => {
                    if let Ok(mut f) = self.run_flags.lock() {
                        if f.is_none() && !flags.is_empty() {
                            tracing::info!(
                                "{} needs `{}` on this machine",
                                self.program.display(),
                                flags.join(" ")
                            );
                        }
                        *f = Some(flags);
                    }
                    return Ok(String::from_utf8_lossy(&out).trim().to_string());
                }
                Err(ContainerError::Failed { command, message }) if is_rlimit_failure(&message) => {
                    tracing::info!(
                        "starting {} failed on rlimits ({message}); trying lower limits",
                        spec.name
                    );
                    let _ = self.remove(&spec.name);
                    last = Some(ContainerError::Failed { command, message });
                }
                Err(e) => {
                    let _ = self.remove(&spec.name);
                    return Err(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| ContainerError::Failed {
            command: "run".into(),
            message: "no attempt".into(),
        }))
    }

    /// A container's address on a network.
    pub fn address(&self, container: &str, network: &str) -> Option<String> {
        let fmt = format!("{{{{(index .NetworkSettings.Networks \"{network}\").IPAddress}}}}");
        let out = self
            .output(self.args(["inspect", "--format", &fmt, container]))
            .ok()?;
        let ip = String::from_utf8_lossy(&out).trim().to_string();
        (!ip.is_empty() && ip != "<no value>").then_some(ip)
    }

    /// `exec` in a container: the command to spawn (stdin kept open; a
    /// terminal with `tty`).
    pub fn exec_command(
        &self,
        container: &str,
        env: &[(String, String)],
        workdir: Option<&Path>,
        tty: bool,
        argv: &[String],
    ) -> Command {
        let mut c = Command::new(&self.program);
        c.arg("exec").arg("-i");
        if tty {
            c.arg("-t");
        }
        for (k, v) in env {
            c.arg("--env").arg(format!("{k}={v}"));
        }
        if let Some(w) = workdir {
            c.arg("--workdir").arg(w);
        }
        c.arg(container);
        c.args(argv);
        c
    }

    /// A file of a running container (through `cat`), or `None`.
    pub fn read_file(&self, container: &str, path: &str) -> Option<Vec<u8>> {
        self.output(self.args(["exec", container, "cat", path]))
            .ok()
    }

    /// Appends text to a file in a running container (through `sh`).
    pub fn append(&self, container: &str, path: &str, text: &str) -> Result<()> {
        let mut c = self.args([
            "exec",
            "-i",
            container,
            "sh",
            "-c",
            &format!("cat >> {path}"),
        ]);
        c.stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let line = shown(&c);
        let mut child = c.spawn().map_err(|e| ContainerError::Failed {
            command: line.clone(),
            message: e.to_string(),
        })?;
        if let Some(mut i) = child.stdin.take() {
            let _ = i.write_all(text.as_bytes());
        }
        let out = child
            .wait_with_output()
            .map_err(|e| ContainerError::Failed {
                command: line.clone(),
                message: e.to_string(),
            })?;
        if !out.status.success() {
            return Err(ContainerError::Failed {
                command: line,
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_label_styles() {
        let o = labels_of(&serde_json::json!({"a": "1", "b": "/x"}));
        let d = labels_of(&serde_json::json!("a=1,b=/x"));
        assert_eq!(o, d);
        assert_eq!(d["b"], "/x");
    }

    #[test]
    fn both_json_list_styles() {
        assert_eq!(
            json_list(b"[{\"a\":1},{\"a\":2}]")
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            json_list(b"{\"a\":1}\n{\"a\":2}\n")
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(json_list(b"").as_array().unwrap().len(), 0);
    }

    #[test]
    fn rlimit_failures_are_recognised() {
        assert!(is_rlimit_failure(
            "runc create failed: error setting rlimits for ready process: error setting rlimit type 7: operation not permitted"
        ));
        assert!(is_rlimit_failure(
            "crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted"
        ));
        assert!(is_rlimit_failure(
            "cgroups in hybrid mode not supported, drop all controllers from cgroupv2"
        ));
        assert!(!is_rlimit_failure("Error: image not known"));
    }

    #[test]
    fn run_command_has_everything_the_node_needs() {
        let e = Engine {
            program: "podman".into(),
            flavor: Flavor::Podman,
            version: String::new(),
            run_flags: Mutex::new(None),
        };
        let spec = NodeSpec {
            name: "mirage-s-node0".into(),
            hostname: "node0".into(),
            image: "img".into(),
            network: Some("net".into()),
            labels: [("a".to_string(), "b".to_string())].into(),
            env: vec![("K".into(), "V".into())],
            mounts: vec![("/h".into(), "/g".into(), true)],
        };
        let line = shown(&e.run_command(&spec, &limited_flags(true)));
        for part in [
            "run -d",
            "--ulimit nofile=1024:1024 --ulimit nproc=1000:1000",
            "--name mirage-s-node0 --hostname node0",
            "--label a=b",
            "--network net",
            "--env K=V",
            "--volume /h:/g:ro",
            "img sleep infinity",
        ] {
            assert!(line.contains(part), "{part}: {line}");
        }
        let line = shown(&e.exec_command(
            "c",
            &[("A".into(), "1".into())],
            Some(Path::new("/w")),
            true,
            &["sh".into()],
        ));
        assert_eq!(line, "podman exec -i -t --env A=1 --workdir /w c sh");
    }
}
