//! End-to-end tests of mirage with the real emulator: sessions and their
//! processes, HIP programs in the Debian sid sysroot (ROCm 6.4.3, gfx942),
//! multi-node ranks, podman containers, a terminal through a pty, and what
//! `mirage cleanup` does after a killed supervisor.
//!
//! Built with `--features e2e` (`make test-mirage`), since they need what
//! `make setup` installs and builds: `librocjitsu.so` beside `mirage`
//! (`cargo build --release --workspace`), the sid sysroot
//! (`scripts/sysroot.sh`, built here when missing), and podman with runc.
//! A missing piece fails the test that needs it, saying what is missing.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn rocjitsu_cache() -> PathBuf {
    std::env::var_os("ROCJITSU_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
                .join(".cache/rocjitsu")
        })
}

/// The gfx942 vector_add of tests/hip, built with the sysroot's hipcc.
fn vector_add() -> &'static Path {
    static PREREQ: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let r = PREREQ.get_or_init(|| {
        let bin = Path::new(env!("CARGO_BIN_EXE_mirage"));
        let lib = bin.with_file_name("librocjitsu.so");
        if !lib.is_file() {
            return Err(format!("{} is missing: run `cargo build --release --workspace` first (make test-mirage does)", lib.display()));
        }
        let st = Command::new("bash")
            .arg(repo().join("scripts/sysroot.sh"))
            .args(["--rocm", "6", "run", "--", "python3", "scripts/hip_tests.py", "build", "--target", "gfx942", "-k", "vector_add"])
            .current_dir(repo())
            .status()
            .map_err(|e| format!("scripts/sysroot.sh: {e}"))?;
        if !st.success() {
            return Err(format!("building vector_add for gfx942 in the sid sysroot failed ({st})"));
        }
        let exe = repo().join("build/hip/gfx942/vector_add");
        if !exe.is_file() {
            return Err(format!("{} was not built", exe.display()));
        }
        Ok(exe)
    });
    match r {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// podman, working, and the ROCm 6.4 image built from the sysroot.
fn image() -> &'static str {
    static IMAGE: OnceLock<Result<String, String>> = OnceLock::new();
    let r = IMAGE.get_or_init(|| {
        vector_add();
        let v = Command::new("podman").arg("--version").output();
        match v {
            Ok(o) if o.status.success() => {}
            _ => return Err("podman is not installed or does not run: `make setup` installs podman and runc (apt-get install podman runc); this test needs it and does not skip".into()),
        }
        let env = Env::new("image");
        let o = env.mirage(&["image", "build"], Duration::from_secs(600));
        if !o.status.success() {
            return Err(format!("mirage image build failed: {}", String::from_utf8_lossy(&o.stderr)));
        }
        Ok("mirage-rocm6.4".to_string())
    });
    match r {
        Ok(i) => i,
        Err(e) => panic!("{e}"),
    }
}

struct Env {
    root: PathBuf,
}

/// Waits for a child with a deadline (killing it then), collecting output.
fn wait_output(mut child: std::process::Child, timeout: Duration, what: &str) -> Output {
    let deadline = Instant::now() + timeout;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let t_out = std::thread::spawn(move || {
        let mut v = vec![];
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_end(&mut v);
        }
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = vec![];
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_end(&mut v);
        }
        v
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Output {
                status,
                stdout: t_out.join().unwrap(),
                stderr: t_err.join().unwrap(),
            };
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Env {
    fn new(tag: &str) -> Env {
        // Short: the control socket's path must fit in sockaddr_un.
        let root = PathBuf::from(format!("/tmp/mirage-e2e-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        Env { root }
    }

    fn runtime(&self) -> PathBuf {
        self.root.join("run")
    }

    fn sessions(&self) -> PathBuf {
        self.runtime().join("sessions")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mirage"));
        c.args(args)
            .env("MIRAGE_HOME", self.root.join("home"))
            .env("MIRAGE_RUNTIME_DIR", self.runtime())
            .env("ROCJITSU_CACHE", rocjitsu_cache())
            .env_remove("MIRAGE_PROFILE")
            .current_dir(repo());
        c
    }

    fn mirage(&self, args: &[&str], timeout: Duration) -> Output {
        let child = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_output(child, timeout, &format!("mirage {args:?}"))
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.mirage(args, Duration::from_secs(180));
        assert!(
            o.status.success(),
            "mirage {args:?} ({}): {}{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut a = args.to_vec();
        a.push("--json");
        serde_json::from_str(&self.ok(&a)).unwrap()
    }

    /// The processes the process table shows with a session's tag.
    fn tagged(&self, id: &str) -> Vec<u32> {
        let want = format!("MIRAGE_SESSION_DIR={}", self.sessions().join(id).display());
        let mut pids = vec![];
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Ok(env) = std::fs::read(e.path().join("environ"))
                && env.split(|&b| b == 0).any(|v| v == want.as_bytes())
            {
                pids.push(pid);
            }
        }
        pids
    }

    fn containers(&self) -> Vec<String> {
        let o = Command::new("podman")
            .args([
                "ps",
                "-a",
                "--filter",
                &format!("label=mirage.runtime={}", self.runtime().display()),
                "--format",
                "{{.Names}}",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(String::from)
            .collect()
    }

    fn networks(&self) -> Vec<String> {
        let o = Command::new("podman")
            .args([
                "network",
                "ls",
                "--filter",
                &format!("label=mirage.runtime={}", self.runtime().display()),
                "--format",
                "{{.Name}}",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(String::from)
            .collect()
    }

    fn no_sessions_left(&self) {
        let left: Vec<_> = std::fs::read_dir(self.sessions())
            .map(|r| r.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(
            left.is_empty(),
            "left in {}: {left:?}",
            self.sessions().display()
        );
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = self.command(&["session", "stop", "--all"]).output();
        let _ = self.command(&["cleanup"]).output();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn pid_alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("");
    !stat.is_empty() && state != "Z"
}

fn eventually(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "{what}: not after {timeout:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn lifecycle_profile_session_exec_stop() {
    let exe = vector_add();
    let e = Env::new("life");
    e.ok(&[
        "profile",
        "create",
        "lab",
        "--from",
        "mi300x",
        "--gpus-per-node",
        "2",
        "--description",
        "two MI300X in the sid sysroot",
    ]);
    let id = e
        .ok(&["session", "start", "--profile", "lab", "--id", "life1"])
        .trim()
        .to_string();
    assert_eq!(id, "life1");
    let list = e.json(&["session", "list"]);
    assert_eq!(list[0]["id"], "life1");
    assert_eq!(list[0]["status"], "running");
    let pid = list[0]["supervisor_pid"].as_u64().unwrap() as u32;
    assert!(pid_alive(pid));
    let show = e.json(&["session", "show", "life1"]);
    assert_eq!(show["nodes"][0]["gpus"], 2);
    assert_eq!(show["nodes"][0]["emulator"]["target"], "gfx942");
    // The node's GPUs live in a daemon hosted by the supervisor.
    assert_eq!(show["nodes"][0]["emulator"]["mode"], "daemon");
    let socket = show["nodes"][0]["emulator"]["daemon_socket"]
        .as_str()
        .unwrap()
        .to_string();
    let daemon_status = || {
        let o = Command::new(repo().join("target/release/rocjitsu"))
            .args(["daemon-status", "--socket", &socket])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    assert_eq!(daemon_status()["vram_used"], serde_json::json!([0, 0]));

    // rocminfo sees the node's two emulated GPUs.
    let info = e.ok(&["exec", "-s", "life1", "--", "rocminfo"]);
    let gpus = info
        .lines()
        .filter(|l| l.trim() == "Name:                    gfx942")
        .count();
    assert_eq!(gpus, 2, "{info}");
    assert_eq!(info.matches("AMD Instinct MI300X").count(), 2, "{info}");
    // A HIP program, and its exit status.
    let out = e.ok(&["exec", "--", exe.to_str().unwrap()]);
    assert!(out.contains("PASS vector_add"), "{out}");
    let o = e.mirage(
        &["exec", "--", "sh", "-c", "exit 7"],
        Duration::from_secs(60),
    );
    assert_eq!(o.status.code(), Some(7));
    // The daemon served those executions and holds nothing once they ended.
    eventually(
        "the daemon to release its clients",
        Duration::from_secs(20),
        || {
            let st = daemon_status();
            st["clients"] == 0 && st["allocations"] == 0
        },
    );

    // An execution that would outlive the session, one that escapes its
    // process group: the stop ends both.
    let mut bg = e
        .command(&["exec", "--", "sh", "-c", "setsid sleep 300 & sleep 300"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    eventually("the background execution", Duration::from_secs(20), || {
        e.tagged("life1").len() >= 3
    });
    let stopped = e.ok(&["session", "stop", "life1"]);
    assert!(stopped.contains("session life1 stopped"), "{stopped}");
    assert!(!pid_alive(pid), "the supervisor {pid} outlived stop");
    assert_eq!(
        e.tagged("life1"),
        Vec::<u32>::new(),
        "processes of the session left in the process table"
    );
    let st = bg.wait().unwrap();
    assert!(!st.success());
    e.no_sessions_left();
    assert_eq!(e.json(&["session", "list"]), serde_json::json!([]));
    let logs_err = e.mirage(&["session", "logs", "life1"], Duration::from_secs(10));
    assert!(!logs_err.status.success());
}

#[test]
fn run_mi300x_in_the_sysroot_returns_the_status() {
    let exe = vector_add();
    let e = Env::new("run");
    let o = e.mirage(
        &["run", "--profile", "mi300x", "--", exe.to_str().unwrap()],
        Duration::from_secs(180),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("PASS vector_add"),
        "{o:?}"
    );
    let script = format!("{} && exit 42", exe.display());
    let o = e.mirage(
        &["run", "--profile", "mi300x", "--", "sh", "-c", &script],
        Duration::from_secs(180),
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("PASS vector_add"),
        "{o:?}"
    );
    assert_eq!(o.status.code(), Some(42));
    e.no_sessions_left();
}

#[test]
fn two_nodes_two_ranks_environment() {
    let e = Env::new("ranks");
    let script = "echo ENV $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $NODE_RANK $MASTER_ADDR $MASTER_PORT $NCCL_HOSTID ${LD_PRELOAD%%:*}";
    let o = e.mirage(
        &[
            "run",
            "--profile",
            "mi210",
            "--num-nodes",
            "2",
            "--nproc-per-node",
            "2",
            "--",
            "sh",
            "-c",
            script,
        ],
        Duration::from_secs(120),
    );
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    let mut ranks = vec![];
    for line in out.lines() {
        let (prefix, rest) = line.split_once(' ').unwrap();
        let f: Vec<&str> = rest.split(' ').collect();
        assert_eq!(f[0], "ENV", "{line}");
        let rank: u32 = f[1].parse().unwrap();
        assert_eq!(
            prefix,
            format!("[{rank}]"),
            "output is prefixed by rank: {line}"
        );
        assert_eq!(f[2].parse::<u32>().unwrap(), rank % 2, "LOCAL_RANK: {line}");
        assert_eq!(f[3], "4", "WORLD_SIZE: {line}");
        assert_eq!(f[4], "2", "LOCAL_WORLD_SIZE: {line}");
        assert_eq!(f[5].parse::<u32>().unwrap(), rank / 2, "NODE_RANK: {line}");
        assert_eq!(f[6], "127.0.0.1", "MASTER_ADDR: {line}");
        assert!(f[7].parse::<u16>().unwrap() > 0, "MASTER_PORT: {line}");
        assert!(
            f[8].ends_with(&format!("-node{}", rank / 2)),
            "NCCL_HOSTID: {line}"
        );
        assert!(f[9].ends_with("librocjitsu.so"), "LD_PRELOAD: {line}");
        ranks.push((rank, f[7].to_string(), f[8].to_string()));
    }
    ranks.sort();
    assert_eq!(
        ranks.iter().map(|r| r.0).collect::<Vec<_>>(),
        [0, 1, 2, 3],
        "{out}"
    );
    assert!(
        ranks.iter().all(|r| r.1 == ranks[0].1),
        "one MASTER_PORT: {ranks:?}"
    );
    assert_eq!(ranks[0].2, ranks[1].2);
    assert_eq!(ranks[2].2, ranks[3].2);
    assert_ne!(ranks[0].2, ranks[2].2, "NCCL_HOSTID differs per node");
    e.no_sessions_left();
}

#[test]
fn containers_with_podman() {
    let exe = vector_add();
    let image = image();
    let e = Env::new("ctr");
    // Two nodes, one container each, on the session's network.
    let script = format!(
        "echo HOST $(hostname) $RANK $MASTER_ADDR; echo RES $(getent hosts node0 | head -n1 | cut -d' ' -f1) $(getent hosts node1 | head -n1 | cut -d' ' -f1); rocminfo | grep -c 'Marketing Name: *AMD Instinct MI300X'; {}",
        exe.display()
    );
    let o = e.mirage(
        &[
            "run",
            "--profile",
            "mi300x",
            "--image",
            image,
            "--num-nodes",
            "2",
            "--",
            "sh",
            "-c",
            &script,
        ],
        Duration::from_secs(300),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{o:?}");
    for n in 0..2 {
        assert!(out.contains(&format!("[{n}] HOST node{n} {n} ")), "{out}");
        assert!(out.contains(&format!("[{n}] PASS vector_add")), "{out}");
    }
    assert_eq!(
        out.matches("] 1\n").count(),
        2,
        "one MI300X per node: {out}"
    );
    let master = out
        .lines()
        .find(|l| l.starts_with("[0] HOST"))
        .unwrap()
        .split(' ')
        .nth(4)
        .unwrap()
        .to_string();
    assert!(
        master.split('.').count() == 4 && master != "127.0.0.1",
        "MASTER_ADDR is node0's address: {master}"
    );
    // Both nodes resolve both hostnames, node0 to MASTER_ADDR.
    let res: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_once("] RES ").map(|(_, r)| r))
        .collect();
    assert_eq!(res.len(), 2, "{out}");
    assert_eq!(res[0], res[1], "{out}");
    let addrs: Vec<&str> = res[0].split(' ').collect();
    assert_eq!(addrs.len(), 2, "{out}");
    assert_eq!(addrs[0], master);
    assert_ne!(addrs[0], addrs[1]);
    assert!(
        e.containers().is_empty(),
        "containers left: {:?}",
        e.containers()
    );
    assert!(e.networks().is_empty(), "networks left: {:?}", e.networks());
    e.no_sessions_left();

    // A missing image: a clear error, nothing left.
    let o = e.mirage(
        &[
            "run",
            "--profile",
            "mi300x",
            "--image",
            "mirage-no-such-image",
            "--",
            "true",
        ],
        Duration::from_secs(60),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("image 'mirage-no-such-image' is not in the container engine's local storage: build it with `mirage image build`"), "{err}");
    e.no_sessions_left();
    assert!(e.networks().is_empty());

    // A killed supervisor of a container session: no ghost, a clear error,
    // and cleanup removes its containers, network and processes.
    e.ok(&[
        "session",
        "start",
        "--profile",
        "mi300x",
        "--image",
        image,
        "--id",
        "k1",
    ]);
    let pid = e.json(&["session", "list"])[0]["supervisor_pid"]
        .as_u64()
        .unwrap() as i32;
    assert_eq!(e.containers().len(), 1);
    // SAFETY: kill has no memory arguments.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    eventually("the supervisor's death", Duration::from_secs(10), || {
        !pid_alive(pid as u32)
    });
    let o = e.mirage(&["session", "list", "--json"], Duration::from_secs(30));
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap(),
        serde_json::json!([])
    );
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("1 session(s) whose supervisor is gone (k1): `mirage cleanup`"),
        "{o:?}"
    );
    let o = e.mirage(&["exec", "-s", "k1", "--", "true"], Duration::from_secs(30));
    assert!(String::from_utf8_lossy(&o.stderr).contains("session 'k1' is not running: its supervisor is gone; `mirage cleanup` removes what it left"), "{o:?}");
    let report = e.json(&["cleanup"]);
    assert_eq!(report["removed"]["sessions"], serde_json::json!(["k1"]));
    assert_eq!(
        report["removed"]["containers"],
        serde_json::json!(["mirage-k1-node0"])
    );
    assert_eq!(
        report["removed"]["networks"],
        serde_json::json!(["mirage-k1"])
    );
    assert!(e.containers().is_empty() && e.networks().is_empty());
    assert!(e.tagged("k1").is_empty());
    e.no_sessions_left();
    assert_eq!(e.ok(&["cleanup"]).trim(), "nothing to clean up");
}

#[test]
fn killed_supervisor_on_the_host_then_cleanup() {
    let e = Env::new("kill");
    e.ok(&[
        "session",
        "start",
        "--profile",
        "mi210",
        "--num-nodes",
        "2",
        "--id",
        "k2",
    ]);
    let pid = e.json(&["session", "show", "k2"])["supervisor_pid"]
        .as_u64()
        .unwrap() as i32;
    // Executions pick their node.
    assert_eq!(
        e.ok(&[
            "exec",
            "-s",
            "k2",
            "-n",
            "1",
            "--",
            "sh",
            "-c",
            "echo $MIRAGE_NODE $NCCL_HOSTID"
        ])
        .trim(),
        "1 mirage-k2-node1"
    );
    let o = e.mirage(
        &["exec", "-s", "k2", "-n", "5", "--", "true"],
        Duration::from_secs(30),
    );
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("session k2: has no node 5: its nodes are 0 to 1"),
        "{o:?}"
    );
    // A process that escapes the execution's group and its parent's death.
    let mut bg = e
        .command(&[
            "exec",
            "-s",
            "k2",
            "--",
            "sh",
            "-c",
            "setsid sleep 300 & sleep 300",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    eventually("the execution", Duration::from_secs(20), || {
        e.tagged("k2").len() >= 3
    });
    // SAFETY: kill has no memory arguments.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = bg.wait();
    eventually("the supervisor's death", Duration::from_secs(10), || {
        !pid_alive(pid as u32)
    });
    // The escaped sleep is still there: only cleanup can find it.
    assert!(
        !e.tagged("k2").is_empty(),
        "nothing survived the supervisor: the test proves nothing"
    );
    assert_eq!(e.json(&["session", "list"]), serde_json::json!([]));
    let dry = e.json(&["cleanup", "--dry-run"]);
    assert_eq!(dry["removed"]["sessions"], serde_json::json!(["k2"]));
    assert!(!e.tagged("k2").is_empty(), "--dry-run removed something");
    let report = e.json(&["cleanup"]);
    assert!(
        !report["removed"]["processes"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{report}"
    );
    assert_eq!(e.tagged("k2"), Vec::<u32>::new());
    e.no_sessions_left();
}

/// Opens a pty pair.
fn openpty() -> (OwnedFd, OwnedFd) {
    let (mut m, mut s) = (-1, -1);
    // SAFETY: openpty writes two descriptors; the other arguments may be null.
    let r = unsafe {
        libc::openpty(
            &mut m,
            &mut s,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0);
    // SAFETY: two new descriptors we own.
    unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) }
}

fn read_until(master: &OwnedFd, want: &str, timeout: Duration) -> String {
    let mut got = Vec::new();
    let deadline = Instant::now() + timeout;
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        let mut p = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut p, 1, 100) } == 1 {
            // SAFETY: buf is valid for writes of its length.
            let n = unsafe { libc::read(master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            got.extend_from_slice(&buf[..n as usize]);
            if String::from_utf8_lossy(&got).contains(want) {
                break;
            }
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

fn type_in(master: &OwnedFd, s: &str) {
    // SAFETY: s is valid for reads of its length.
    let n = unsafe { libc::write(master.as_raw_fd(), s.as_ptr().cast(), s.len()) };
    assert_eq!(n as usize, s.len());
}

#[test]
fn exec_it_through_a_pty() {
    let e = Env::new("tty");
    e.ok(&["session", "start", "--profile", "mi210", "--id", "t1"]);
    let (master, slave) = openpty();
    let mut cmd = e.command(&["exec", "-s", "t1", "-it", "--", "/bin/sh"]);
    let s = slave.as_raw_fd();
    cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave.try_clone().unwrap()));
    // SAFETY: setsid and the ioctl are async-signal-safe; fd 0 is the slave.
    unsafe {
        cmd.pre_exec(move || {
            libc::setsid();
            let _ = s;
            libc::ioctl(0, libc::TIOCSCTTY, 0);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    drop(slave);
    type_in(&master, "echo hello-$((6*7)) $MIRAGE_SESSION; tty\n");
    let out = read_until(&master, "/dev/pts/", Duration::from_secs(30));
    assert!(out.contains("hello-42 t1"), "{out:?}");
    assert!(
        out.contains("/dev/pts/"),
        "the shell has a terminal: {out:?}"
    );
    // The session's rocjitsu environment is there too.
    type_in(&master, "rocminfo | grep -c 'Name: *gfx90a'\n");
    let out = read_until(&master, "1\r\n", Duration::from_secs(30));
    let answer = out.split("gfx90a'").nth(1).unwrap_or_default();
    assert!(answer.contains("1\r\n"), "{out:?}");
    type_in(&master, "exit 5\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        // Keep the master drained so the relay never blocks.
        read_until(&master, "\u{0}", Duration::from_millis(100));
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            Instant::now() < deadline,
            "mirage exec -it did not end after exit"
        );
    };
    assert_eq!(status.code(), Some(5));
    e.ok(&["session", "stop", "t1"]);
    assert!(e.tagged("t1").is_empty());
    e.no_sessions_left();
}

/// The DBT programs, built once in the ROCm 7.2.4 sysroot (HIP knows
/// gfx950 there): vector_add for gfx950 only, module_load for gfx942 (no
/// kernels of its own) and the module's kernels as a gfx950-only
/// `hipcc --genco` code object (an offload bundle, as hip_tests.py builds it).
struct DbtPrograms {
    vector_add_gfx950: PathBuf,
    module_load: PathBuf,
    kernels_gfx950: PathBuf,
}

fn dbt_programs() -> &'static DbtPrograms {
    static P: OnceLock<Result<DbtPrograms, String>> = OnceLock::new();
    let r = P.get_or_init(|| {
        let bin = Path::new(env!("CARGO_BIN_EXE_mirage"));
        for lib in ["librocjitsu.so", "librocjitsu_hooks.so"] {
            if !bin.with_file_name(lib).is_file() {
                return Err(format!("{} is missing: run `cargo build --release --workspace` first (make test-mirage does)", bin.with_file_name(lib).display()));
            }
        }
        let out = repo().join("build/mirage-dbt");
        std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
        let p = DbtPrograms {
            vector_add_gfx950: out.join("vector_add_gfx950"),
            module_load: out.join("module_load_gfx942"),
            kernels_gfx950: out.join("kernels_gfx950.genco.co"),
        };
        let jobs: [(&Path, &str, &[&str]); 3] = [
            (&p.vector_add_gfx950, "tests/hip/vector_add.hip", &["--offload-arch=gfx950", "-Itests/hip"]),
            (&p.module_load, "tests/hip/module_load.hip", &["--offload-arch=gfx942", "-Itests/hip"]),
            (&p.kernels_gfx950, "tests/hip/module/kernels.hip", &["--offload-arch=gfx950", "--genco"]),
        ];
        for (exe, src, flags) in jobs {
            let fresh = |s: &Path, o: &Path| {
                let m = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
                matches!((m(s), m(o)), (Some(a), Some(b)) if b >= a)
            };
            if fresh(&repo().join(src), exe) {
                continue;
            }
            let st = Command::new("bash")
                .arg(repo().join("scripts/sysroot.sh"))
                .args(["--rocm", "7", "run", "--", "hipcc", "-O2"])
                .args(flags)
                .arg(src)
                .arg("-o")
                .arg(exe)
                .current_dir(repo())
                .status()
                .map_err(|e| format!("scripts/sysroot.sh: {e}"))?;
            if !st.success() {
                return Err(format!("building {src} with the ROCm 7.2.4 sysroot's hipcc failed ({st}); `scripts/sysroot.sh --rocm 7` builds the sysroot"));
            }
        }
        Ok(p)
    });
    match r {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// `mirage run --profile mi355x-dbt`: rocminfo shows one GPU, the gfx950
/// guest; a gfx950-only HIP program passes (translated, run on the
/// emulated gfx942); `session show` says guest mode is local-launch only.
#[test]
fn dbt_guest_profile_shows_gfx950_and_runs_it() {
    let p = dbt_programs();
    let e = Env::new("dbt");
    let o = e.mirage(
        &["run", "--profile", "mi355x-dbt", "--", "rocminfo"],
        Duration::from_secs(180),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{o:?}");
    let gpus = out
        .lines()
        .filter(|l| l.trim() == "Device Type:             GPU")
        .count();
    assert_eq!(gpus, 1, "rocminfo shows {gpus} GPUs:\n{out}");
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("Name:") && l.trim_end().ends_with(" gfx950")),
        "{out}"
    );
    assert!(out.contains("amdgcn-amd-amdhsa--gfx950"), "{out}");
    assert!(!out.contains("gfx942"), "the host GPU shows:\n{out}");
    let o = e.mirage(
        &[
            "run",
            "--profile",
            "mi355x-dbt",
            "--",
            p.vector_add_gfx950.to_str().unwrap(),
        ],
        Duration::from_secs(180),
    );
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("PASS vector_add"),
        "{o:?}"
    );
    // A session: the node says how guest mode runs.
    let id = e.ok(&["session", "start", "--profile", "mi355x-dbt"]);
    let id = id.trim();
    let v = e.json(&["session", "show", id]);
    let text = v.to_string();
    assert!(text.contains("guest mode is local-launch only"), "{text}");
    assert!(text.contains("\"isa\":\"gfx950\""), "{text}");
    e.ok(&["session", "stop", id]);
    e.no_sessions_left();
}

/// `hotswap`: a gfx942 HIP program hipModuleLoad's a gfx950-only code
/// object; under the hotswap profile (daemon mode and local mode) it is
/// translated at load and passes; on the plain rocjitsu backend HIP refuses
/// it.
#[test]
fn hotswap_loads_a_gfx950_module_on_gfx942() {
    let p = dbt_programs();
    let e = Env::new("hotswap");
    let argv = [
        p.module_load.to_str().unwrap(),
        p.kernels_gfx950.to_str().unwrap(),
    ];
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "--profile"];
        a.extend(extra);
        a.push("--");
        a.extend(argv);
        e.mirage(&a, Duration::from_secs(180))
    };
    let o = run(&["mi300x-hotswap"]);
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("PASS module_load"),
        "{o:?}"
    );
    // Local mode: a profile with the rocjitsu backend's `mode` passed through.
    let dir = e.root.join("home/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    let sysroot = rocjitsu_cache().join("sysroot-sid-rocm7");
    std::fs::write(
        dir.join("hs-local.json"),
        serde_json::json!({"name": "hs-local", "backend": {"kind": "hotswap", "options": {"mode": "local"}},
            "topology": "mi300x", "sysroot": sysroot})
        .to_string(),
    )
    .unwrap();
    let o = run(&["hs-local"]);
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("PASS module_load"),
        "{o:?}"
    );
    // Without hotswap: HIP's own refusal.
    let o = run(&["mi300x-hotswap", "--backend", "rocjitsu"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !o.status.success() && out.contains("hipModuleLoad(&module, argv[1]) returned 200"),
        "{o:?}"
    );
    e.no_sessions_left();
}
