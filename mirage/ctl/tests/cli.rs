//! The `mirage` command line without sessions: help everywhere, the
//! stores through the CLI, JSON output, the backends' registry, and bad
//! input named clearly. (Sessions, the sysroot and containers are in
//! `e2e.rs`, run by `make test-mirage`.)

use std::path::PathBuf;
use std::process::{Command, Output};

struct Env {
    root: PathBuf,
}

impl Env {
    fn new(tag: &str) -> Env {
        let root = PathBuf::from(format!("/tmp/mirage-cli-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        Env { root }
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn mirage(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_mirage"))
            .args(args)
            .env("MIRAGE_HOME", self.home())
            .env("MIRAGE_RUNTIME_DIR", self.root.join("run"))
            .env_remove("MIRAGE_PROFILE")
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.mirage(args);
        assert!(
            o.status.success(),
            "mirage {args:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }

    fn fails(&self, args: &[&str]) -> String {
        let o = self.mirage(args);
        assert!(
            !o.status.success(),
            "mirage {args:?} succeeded: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        String::from_utf8(o.stderr).unwrap()
    }

    fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut a = args.to_vec();
        a.push("--json");
        serde_json::from_str(&self.ok(&a)).unwrap_or_else(|e| panic!("mirage {a:?}: not JSON: {e}"))
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[test]
fn help_everywhere() {
    let e = Env::new("help");
    let commands: &[&[&str]] = &[
        &[],
        &["run"],
        &["profile"],
        &["profile", "list"],
        &["profile", "show"],
        &["profile", "create"],
        &["profile", "import"],
        &["profile", "export"],
        &["profile", "delete"],
        &["topology"],
        &["topology", "list"],
        &["topology", "show"],
        &["topology", "create"],
        &["topology", "import"],
        &["topology", "delete"],
        &["agent"],
        &["agent", "list"],
        &["agent", "show"],
        &["agent", "import"],
        &["agent", "delete"],
        &["session"],
        &["session", "start"],
        &["session", "list"],
        &["session", "show"],
        &["session", "stop"],
        &["session", "logs"],
        &["exec"],
        &["serve"],
        &["cleanup"],
        &["emulators"],
        &["image"],
        &["image", "build"],
        &["image", "list"],
        &["image", "rm"],
    ];
    for c in commands {
        let mut a = c.to_vec();
        a.push("--help");
        let out = e.ok(&a);
        assert!(out.contains("Usage: mirage"), "{a:?}: {out}");
        assert!(
            out.contains("--json") && out.contains("--verbose"),
            "{a:?} lacks the global options: {out}"
        );
    }
    let run = e.ok(&["run", "--help"]);
    for flag in [
        "--profile",
        "--num-nodes",
        "--gpus-per-node",
        "--nproc-per-node",
        "--image",
        "--mount",
        "--env",
    ] {
        assert!(run.contains(flag), "run --help lacks {flag}");
    }
    let exec = e.ok(&["exec", "--help"]);
    for flag in ["--session", "--node", "--interactive", "--tty"] {
        assert!(exec.contains(flag), "exec --help lacks {flag}");
    }
}

#[test]
fn emulators_lists_every_backend() {
    let e = Env::new("emu");
    let v = e.json(&["emulators"]);
    let kinds: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["hotswap", "noop", "rocjitsu", "rocjitsu-dbt"]);
    let state = |k: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|b| b["kind"] == k)
            .unwrap()["availability"]
            .clone()
    };
    assert_eq!(state("noop")["state"], "available");
    // cargo builds librocjitsu.so beside the binary in a workspace build.
    let r = state("rocjitsu");
    assert_eq!(r["state"], "available", "{r}");
    assert!(
        r["detail"].as_str().unwrap().contains("librocjitsu.so"),
        "{r}"
    );
    // cargo builds librocjitsu_hooks.so there too (the DBT backends).
    for k in ["rocjitsu-dbt", "hotswap"] {
        let s = state(k);
        assert_eq!(s["state"], "available", "{s}");
        assert!(
            s["detail"]
                .as_str()
                .unwrap()
                .contains("librocjitsu_hooks.so"),
            "{s}"
        );
    }
    let text = e.ok(&["emulators"]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("rocjitsu-dbt") && l.contains(" available ")),
        "{text}"
    );
    // Without the hooks library: unavailable, saying what to build.
    let o = Command::new(env!("CARGO_BIN_EXE_mirage"))
        .args(["emulators", "--json"])
        .env("MIRAGE_HOME", e.home())
        .env("ROCJITSU_HOOKS", "/nonexistent/librocjitsu_hooks.so")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in ["rocjitsu-dbt", "hotswap"] {
        let s = v
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["kind"] == k)
            .unwrap()["availability"]
            .clone();
        assert_eq!(s["state"], "unavailable", "{s}");
        assert!(
            s["reason"].as_str().unwrap().contains(
                "ROCJITSU_HOOKS names /nonexistent/librocjitsu_hooks.so, which does not exist"
            ),
            "{s}"
        );
    }
    let err = e.fails(&["run", "--backend", "qemu", "--", "true"]);
    assert!(
        err.contains(
            "backend.kind: unknown backend 'qemu'; known: hotswap, noop, rocjitsu, rocjitsu-dbt"
        ),
        "{err}"
    );
}

#[test]
fn stores_through_the_cli() {
    let e = Env::new("stores");
    // Builtins.
    let names = |v: serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(e.json(&["profile", "list"])),
        ["mi210", "mi300x", "mi355x", "mi355x-dbt", "mi300x-hotswap"]
    );
    assert_eq!(
        names(e.json(&["agent", "list"])),
        ["MI210", "MI300X", "MI355X"]
    );
    assert!(names(e.json(&["topology", "list"])).contains(&"mi300x-x8".to_string()));
    let a = e.json(&["agent", "show", "MI355X"]);
    assert_eq!(a["gpu"]["gfx_target"], "gfx950");

    // A topology, a profile on it, export (self-contained), import elsewhere.
    e.ok(&[
        "topology",
        "create",
        "pair",
        "--agent",
        "MI300X",
        "--num-nodes",
        "2",
        "--gpus-per-node",
        "2",
    ]);
    assert!(e.home().join("topologies/pair.json").is_file());
    e.ok(&[
        "profile",
        "create",
        "lab",
        "--topology",
        "pair",
        "--backend",
        "noop",
        "--env",
        "A=1",
        "--mount",
        "/tmp:/data:ro",
    ]);
    let p = e.json(&["profile", "show", "lab"]);
    assert_eq!(p["topology"], "pair");
    assert_eq!(p["env"]["A"], "1");
    assert_eq!(p["mounts"][0]["read_only"], true);
    let exported = e.ok(&["profile", "export", "lab"]);
    let v: serde_json::Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(v["topology"]["nodes"], 2);
    assert_eq!(v["topology"]["agent"]["gpu"]["gfx_target"], "gfx942");
    let other = Env::new("stores2");
    let f = other.root.join("lab.json");
    std::fs::write(&f, &exported).unwrap();
    other.ok(&["profile", "import", f.to_str().unwrap(), "--name", "lab2"]);
    let p2 = other.json(&["profile", "show", "lab2"]);
    assert_eq!(p2["topology"]["gpus_per_node"], 2);
    // Deleting the topology leaves the exported copy self-contained but
    // breaks the profile that names it.
    e.ok(&["topology", "delete", "pair"]);
    let err = e.fails(&["profile", "export", "lab"]);
    assert!(
        err.contains("profile 'lab': topology: topology 'pair' not found"),
        "{err}"
    );
    e.ok(&["profile", "delete", "lab"]);
    let err = e.fails(&["profile", "show", "lab"]);
    assert!(
        err.contains("profile 'lab' not found; known: mi210, mi300x, mi355x"),
        "{err}"
    );

    // Builtins cannot be replaced or deleted.
    let err = e.fails(&["profile", "delete", "mi300x"]);
    assert!(
        err.contains("profile 'mi300x' is builtin and cannot be deleted"),
        "{err}"
    );
    let err = e.fails(&["profile", "create", "mi300x", "--from", "mi210"]);
    assert!(err.contains("builtin and cannot be replaced"), "{err}");

    // An agent edited from a builtin, imported, used by a profile.
    let mut a = e.json(&["agent", "show", "MI300X"]);
    a["name"] = "MI300X-small".into();
    a["gpu"]["soc"]["total_cus"] = 38.into();
    a["gpu"]["soc"]["xcds"] = 1.into();
    let af = e.root.join("small.json");
    std::fs::write(&af, a.to_string()).unwrap();
    // One XCD has fewer hardware queues: the check names the field.
    let err = e.fails(&["agent", "import", af.to_str().unwrap()]);
    assert!(
        err.contains("small.json: gpu.queues.cp_queues: 192 exceeds the hardware queues"),
        "{err}"
    );
    a["gpu"]["queues"]["cp_queues"] = 24.into();
    std::fs::write(&af, a.to_string()).unwrap();
    e.ok(&["agent", "import", af.to_str().unwrap()]);
    e.ok(&[
        "profile",
        "create",
        "small",
        "--agent",
        "MI300X-small",
        "--gpus-per-node",
        "4",
    ]);
    let p = e.json(&["profile", "show", "small"]);
    assert_eq!(p["topology"]["agent"], "MI300X-small");
    assert_eq!(p["topology"]["gpus_per_node"], 4);
}

#[test]
fn bad_input_is_named() {
    let e = Env::new("bad");
    let err = e.fails(&["run", "--profile", "nope", "--", "true"]);
    assert!(
        err.contains("profile 'nope' not found; known: mi210, mi300x, mi355x"),
        "{err}"
    );

    // A malformed profile file: the file and the field are named; listing
    // still shows the others.
    let dir = e.home().join("profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("broken.json"), r#"{"name": "broken", "backend": {"kind": "rocjitsu"}, "topology": "mi300x", "gpu_count": 2}"#).unwrap();
    let err = e.fails(&["run", "--profile", "broken", "--", "true"]);
    assert!(
        err.contains("profiles/broken.json: gpu_count: unknown field `gpu_count`"),
        "{err}"
    );
    let o = e.mirage(&["profile", "list"]);
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("warning: skipped profile file"),
        "{o:?}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("mi300x"));
    std::fs::write(dir.join("broken.json"), "{\"name\": \"broken\", ").unwrap();
    let err = e.fails(&["profile", "show", "broken"]);
    assert!(
        err.contains("broken.json: ") && err.contains("EOF while parsing"),
        "{err}"
    );
    std::fs::write(
        dir.join("broken.json"),
        r#"{"name": "broken", "backend": {"kind": "rocjitsu", "options": {"threads": "many"}}, "topology": "mi300x"}"#,
    )
    .unwrap();
    let err = e.fails(&["run", "--profile", "broken", "--", "true"]);
    assert!(
        err.contains("backend.options.threads: invalid type: string \"many\""),
        "{err}"
    );

    // The DBT backends check their options and agents by field.
    for (name, body, want) in [
        (
            "dbt1",
            r#"{"name": "dbt1", "backend": {"kind": "rocjitsu-dbt", "options": {"execution_backend": "gpu"}}, "topology": "mi355x"}"#,
            "backend.options.execution_backend: unknown variant `gpu`, expected `hardware` or `simulator`",
        ),
        (
            "dbt2",
            r#"{"name": "dbt2", "backend": {"kind": "rocjitsu-dbt", "options": {"host_agent": "MI210"}}, "topology": "mi355x"}"#,
            "backend.options.host_agent: agent MI210 is a gfx90a, but the DBT translator runs gfx950 code on a gfx942 host",
        ),
        (
            "dbt3",
            r#"{"name": "dbt3", "backend": {"kind": "rocjitsu-dbt"}, "topology": "mi300x"}"#,
            "topology.agent: the rocjitsu-dbt backend shows a gfx950 guest, but agent MI300X is a gfx942",
        ),
        (
            "dbt4",
            r#"{"name": "dbt4", "backend": {"kind": "rocjitsu-dbt"}, "topology": "mi355x-x8"}"#,
            "topology.gpus_per_node: DBT guest mode shows one guest GPU per node, got 8",
        ),
        (
            "hs1",
            r#"{"name": "hs1", "backend": {"kind": "hotswap", "options": {"translate": true}}, "topology": "mi300x"}"#,
            "backend.options.translate: unknown field `translate`",
        ),
        (
            "hs2",
            r#"{"name": "hs2", "backend": {"kind": "hotswap"}, "topology": "mi355x"}"#,
            "topology.agent: the hotswap backend translates gfx950 code objects for a gfx942 host, but agent MI355X is a gfx950",
        ),
        (
            "hs3",
            r#"{"name": "hs3", "backend": {"kind": "hotswap", "options": {"mode": "shared"}}, "topology": "mi300x"}"#,
            "backend.options.mode: 'shared' is neither",
        ),
    ] {
        std::fs::write(dir.join(format!("{name}.json")), body).unwrap();
        let err = e.fails(&["run", "--profile", name, "--", "true"]);
        assert!(err.contains(want), "{name}: {err}");
    }

    // Out-of-range overrides name the flag.
    let err = e.fails(&[
        "run",
        "--profile",
        "mi210",
        "--gpus-per-node",
        "0",
        "--",
        "true",
    ]);
    assert!(
        err.contains(
            "topology.gpus_per_node: --gpus-per-node: expected 1 to 16 GPUs per node, got 0"
        ),
        "{err}"
    );
    let err = e.fails(&[
        "run",
        "--profile",
        "mi210",
        "--mount",
        "relative:/x",
        "--",
        "true",
    ]);
    assert!(
        err.contains("mount 'relative:/x': relative is not an absolute path"),
        "{err}"
    );
    let err = e.fails(&["run", "--profile", "mi210", "--env", "1X=2", "--", "true"]);
    assert!(err.contains("'1X' is not a valid variable name"), "{err}");

    // A missing sysroot says how to build one; nothing is left behind.
    let err = e.fails(&[
        "run",
        "--profile",
        "mi300x",
        "--sysroot",
        "/nonexistent/root",
        "--",
        "true",
    ]);
    assert!(
        err.contains("sysroot /nonexistent/root is missing or not a root file system")
            && err.contains("scripts/sysroot.sh"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(e.root.join("run/sessions"))
        .map(|r| r.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");

    // A sysroot whose glibc is older than what librocjitsu.so (built on
    // this host) needs: named before anything runs. The host's libgcc_s
    // stands in for a libc that defines no GLIBC_ version.
    let fake = e.root.join("oldroot");
    let lib = fake.join("lib/x86_64-linux-gnu");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::create_dir_all(fake.join("bin")).unwrap();
    std::fs::write(fake.join("bin/sh"), "").unwrap();
    let host = std::path::Path::new("/lib/x86_64-linux-gnu");
    for l in ["libgcc_s.so.1", "libm.so.6", "ld-linux-x86-64.so.2"] {
        std::fs::copy(host.join(l), lib.join(l)).unwrap();
    }
    std::fs::copy(host.join("libgcc_s.so.1"), lib.join("libc.so.6")).unwrap();
    let err = e.fails(&[
        "run",
        "--profile",
        "mi300x",
        "--sysroot",
        fake.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert!(
        err.contains(&format!("sysroot {} cannot load", fake.display())),
        "{err}"
    );
    assert!(
        err.contains("librocjitsu.so: its libc.so.6 lacks GLIBC_2."),
        "{err}"
    );
    assert!(
        err.contains("use an image or sysroot with a newer glibc"),
        "{err}"
    );

    // Sessions that do not exist.
    let err = e.fails(&["session", "stop", "ghost"]);
    assert!(err.contains("no session 'ghost'; none is running"), "{err}");
    let err = e.fails(&["exec", "--", "true"]);
    assert!(err.contains("no session is running"), "{err}");
    assert_eq!(e.json(&["session", "list"]), serde_json::json!([]));
    assert_eq!(e.ok(&["cleanup"]).trim(), "nothing to clean up");
}

#[test]
fn noop_run_on_the_host() {
    // The whole session path (supervisor in `mirage run`, ranks, teardown)
    // without an emulator: fast enough for every `cargo test`.
    let e = Env::new("noop");
    // Rank 2 fails, which ends the other ranks: it waits (up to 20 s) until
    // they have printed and gone, so that every line is there to check.
    let done = e.root.join("ranks-done");
    std::fs::create_dir_all(&done).unwrap();
    let script = format!(
        "echo rank $RANK of $WORLD_SIZE; D={}; \
         if [ $RANK != 2 ]; then touch $D/$RANK; exit 0; fi; \
         i=0; while [ ! -e $D/0 ] || [ ! -e $D/1 ]; do \
           i=$((i + 1)); [ $i -gt 200 ] && break; sleep 0.1; done; exit 9",
        done.display()
    );
    let o = e.mirage(&[
        "run",
        "--backend",
        "noop",
        "--profile",
        "mi210",
        "--nproc-per-node",
        "3",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    for r in 0..3 {
        assert!(out.contains(&format!("[{r}] rank {r} of 3")), "{out}");
    }
    assert_eq!(o.status.code(), Some(9), "{out}");
    assert!(
        std::fs::read_dir(e.root.join("run/sessions"))
            .unwrap()
            .next()
            .is_none()
    );
}

#[test]
fn serve_refuses_a_token_file_others_can_replace() {
    let e = Env::new("serve-token");
    // /tmp is writable by everyone: a token there could be swapped.
    let err = e.fails(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        "/tmp/mirage-serve-test.token",
    ]);
    assert!(
        err.contains("--token-file /tmp/mirage-serve-test.token"),
        "{err}"
    );
    assert!(err.contains("only you can write to"), "{err}");
    assert!(!std::path::Path::new("/tmp/mirage-serve-test.token").exists());
}
