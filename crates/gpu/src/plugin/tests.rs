//! The plugins on a hand-written kernel whose instruction and byte counts
//! are known: 3 workgroups of 100 work-items (2 waves each: 64 + 36 lanes),
//! each lane adds 1 to its dword of a buffer and passes it through LDS.

use super::*;
use crate::exec::dispatch::{Extra, Launch, Stats, dispatch_with};
use crate::exec::engine::Program;
use crate::exec::op::Env;
use crate::mem::{Perms, Vm};
use rocjitsu_code::KernelDescriptor;
use rocjitsu_isa::Target;
use serde_json::Value;

/// 13 instructions per wave: smem 1, valu 2, wait 4, vmem_load 1,
/// vmem_store 1, lds 2, barrier 1, other (s_endpgm) 1.
const KERNEL: &str = "\
s_load_dwordx2 s[2:3], s[0:1], 0x0
v_lshlrev_b32_e32 v1, 2, v0
s_waitcnt lgkmcnt(0)
global_load_dword v2, v1, s[2:3]
s_waitcnt vmcnt(0)
v_add_u32_e32 v2, 1, v2
global_store_dword v1, v2, s[2:3]
ds_write_b32 v1, v2
s_waitcnt lgkmcnt(0)
s_barrier
ds_read_b32 v3, v1
s_waitcnt lgkmcnt(0)
s_endpgm";

const GROUPS: u32 = 3;
const ITEMS: u32 = 100;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rocjitsu-plugin-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs the kernel with `plugins`; returns the stats and the buffer.
fn run(plugins: Option<&Plugins>, threads: usize) -> (Stats, Vec<u8>) {
    run_asm(Target::Gfx942, KERNEL, plugins, threads)
}

/// Runs `asm` (a variant of [`KERNEL`]) on `t` with `plugins`.
fn run_asm(t: Target, asm: &str, plugins: Option<&Plugins>, threads: usize) -> (Stats, Vec<u8>) {
    let code = crate::exec::testing::assemble(t, asm);
    let vm = Vm::new();
    let base = vm.alloc(code.len() as u64, Perms::RW);
    vm.fill(base, &code).unwrap();
    let prog = Program::new(t, base, code);
    let buf = vm.alloc(4 * u64::from(ITEMS), Perms::RW);
    let init: Vec<u8> = (0..ITEMS).flat_map(|i| (10 * i).to_le_bytes()).collect();
    vm.fill(buf, &init).unwrap();
    let kernarg = vm.alloc(8, Perms::RW);
    vm.fill(kernarg, &buf.to_le_bytes()).unwrap();
    let mut kd = [0u8; 64];
    kd[0..4].copy_from_slice(&512u32.to_le_bytes()); // group segment (LDS)
    kd[56] = 1 << 3; // kernarg segment pointer in s[0:1]
    let launch = Launch {
        kernel: "plugin_test".into(),
        entry: base,
        descriptor: KernelDescriptor::from_bytes(&kd),
        grid: [GROUPS, 1, 1],
        block: [ITEMS, 1, 1],
        dynamic_lds: 0,
        kernarg,
        dispatch_packet: 0,
        queue: 0,
        private_bytes: 16,
        threads,
        timeout: None,
        max_lds: 65536,
        trace: 0,
    };
    let x = Extra {
        plugins,
        ..Extra::default()
    };
    let stats = dispatch_with(&vm, &Env::new(t), &prog, &launch, &x).unwrap();
    (stats, vm.read_vec(buf, 4 * u64::from(ITEMS)).unwrap())
}

fn plugins(specs: &str, dir: &std::path::Path) -> Plugins {
    Plugins::new(
        &Spec::parse_list(specs).unwrap(),
        &Output {
            dir: Some(dir.to_path_buf()),
        },
    )
    .unwrap()
}

fn file(dir: &std::path::Path, name: &str, ext: &str) -> String {
    let p = dir.join(format!("{name}-{}.{ext}", std::process::id()));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn metrics_counts_match_the_kernel() {
    let dir = temp_dir("metrics");
    let p = plugins("metrics:format=jsonl", &dir);
    let (stats, _) = run(Some(&p), 2);
    p.finish();
    let text = file(&dir, "metrics", "jsonl");
    let recs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 2, "{text}");
    for r in &recs {
        assert_eq!(r["schema"], SCHEMA);
        assert_eq!(r["plugin"], "metrics");
    }
    let (d, s) = (&recs[0], &recs[1]);
    assert_eq!(d["type"], "dispatch");
    assert_eq!(s["type"], "summary");
    let waves = u64::from(GROUPS * 2);
    assert_eq!(d["kernel"], "plugin_test");
    assert_eq!(d["grid"], serde_json::json!([GROUPS, 1, 1]));
    assert_eq!(d["waves"], waves);
    assert_eq!(d["wave_instructions"], 13 * waves);
    assert_eq!(d["wave_instructions"], stats.instructions);
    let fam = &d["by_family"];
    for (f, n) in [
        ("salu", 0),
        ("smem", 1),
        ("valu", 2),
        ("wait", 4),
        ("vmem_load", 1),
        ("vmem_store", 1),
        ("vmem_atomic", 0),
        ("lds", 2),
        ("barrier", 1),
        ("other", 1),
        ("mfma", 0),
        ("branch", 0),
    ] {
        assert_eq!(fam[f], n * waves, "{f}: {fam}");
    }
    let items = u64::from(GROUPS * ITEMS);
    let b = &d["bytes"];
    // Every lane loads and stores its dword; each wave's s_load reads 8.
    assert_eq!(b["global"]["read"], 4 * items + 8 * waves, "{b}");
    assert_eq!(b["global"]["written"], 4 * items, "{b}");
    assert_eq!(b["lds"]["read"], 4 * items, "{b}");
    assert_eq!(b["lds"]["written"], 4 * items, "{b}");
    assert_eq!(b["scratch"]["read"], 0);
    // 6 vector instructions per wave, 100 of 128 lanes active per group.
    assert_eq!(d["vector_instructions"], 6 * waves);
    let ratio = d["active_lane_ratio"].as_f64().unwrap();
    assert!((ratio - 100.0 / 128.0).abs() < 1e-12, "{ratio}");
    assert_eq!(s["dispatches"], 1);
    assert_eq!(s["wave_instructions"], 13 * waves);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn results_are_the_same_with_and_without_plugins() {
    let dir = temp_dir("same");
    let p = plugins("metrics;trace", &dir);
    let (s0, b0) = run(None, 1);
    let (s1, b1) = run(Some(&p), 1);
    assert_eq!(b0, b1);
    assert_eq!((s0.instructions, s0.waves), (s1.instructions, s1.waves));
    // Every workgroup adds 1 to the same dwords.
    let want: Vec<u8> = (0..ITEMS)
        .flat_map(|i| (10 * i + GROUPS).to_le_bytes())
        .collect();
    assert_eq!(b0, want);
    drop(p);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_is_a_valid_trace_event_file() {
    let dir = temp_dir("trace");
    let p = plugins("trace", &dir);
    run(Some(&p), 2);
    run(Some(&p), 1);
    p.finish();
    let v: Value = serde_json::from_str(&file(&dir, "trace", "json")).unwrap();
    let ev = v.as_array().expect("a JSON array of events");
    let of = |cat: &str| -> Vec<&Value> { ev.iter().filter(|e| e["cat"] == cat).collect() };
    let (d, g, w) = (of("dispatch"), of("workgroup"), of("wave"));
    assert_eq!(d.len(), 2, "one event per dispatch");
    assert_eq!(g.len(), 2 * GROUPS as usize, "one event per workgroup");
    assert_eq!(w.len(), 2 * 2 * GROUPS as usize, "one event per wave");
    let pid = u64::from(std::process::id());
    for e in d.iter().chain(&g).chain(&w) {
        assert_eq!(e["ph"], "X", "{e}");
        assert_eq!(e["pid"], pid, "{e}");
        assert!(e["name"].is_string(), "{e}");
        assert!(e["ts"].as_f64().unwrap() >= 0.0, "{e}");
        assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}");
        assert!(e["tid"].is_u64(), "{e}");
    }
    assert!(d.iter().all(|e| e["tid"] == 0));
    assert!(
        g.iter()
            .all(|e| (1..trace::WAVE_TID).contains(&e["tid"].as_u64().unwrap()))
    );
    assert!(
        w.iter()
            .all(|e| e["tid"].as_u64().unwrap() >= trace::WAVE_TID)
    );
    // Workgroups start at different times (not all at the epoch), in
    // order on each slot.
    let starts: std::collections::BTreeSet<u64> = g
        .iter()
        .map(|e| e["ts"].as_f64().unwrap().to_bits())
        .collect();
    assert!(
        starts.len() > 1,
        "every workgroup starts at the same time: {g:?}"
    );
    // Each workgroup lies inside its dispatch.
    for e in &g {
        let k = e["args"]["dispatch"].as_u64().unwrap();
        let disp = d.iter().find(|x| x["args"]["seq"] == k).unwrap();
        let (ts, dur) = (disp["ts"].as_f64().unwrap(), disp["dur"].as_f64().unwrap());
        let t = e["ts"].as_f64().unwrap();
        assert!(
            t >= ts && t + e["dur"].as_f64().unwrap() <= ts + dur + 1.0,
            "{e} {disp}"
        );
    }
    // Every track used is named.
    let named: Vec<&Value> = ev
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| &e["tid"])
        .collect();
    for e in d.iter().chain(&g).chain(&w) {
        assert!(named.contains(&&e["tid"]), "track {} unnamed", e["tid"]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn specs_parse_and_bad_ones_are_named() {
    let s = Spec::parse("metrics:format=jsonl, summary=false").unwrap();
    assert_eq!(s.name, "metrics");
    assert_eq!(s.options["format"], "jsonl");
    assert_eq!(s.options["summary"], "false");
    assert_eq!(Spec::parse_list("metrics; trace:waves=0").unwrap().len(), 2);
    assert!(Spec::parse("metrics:format").is_err());
    let out = Output::default();
    let err = |s: &str| {
        Plugins::new(&[Spec::parse(s).unwrap()], &out)
            .unwrap_err()
            .to_string()
    };
    let e = err("nosuch");
    assert!(
        e.contains("`nosuch`") && e.contains("metrics, coverage, hazards, races, trace"),
        "{e}"
    );
    let e = err("metrics:colour=red");
    assert!(e.contains("`colour`") && e.contains("format="), "{e}");
    let e = err("metrics:format=xml");
    assert!(e.contains("format=xml"), "{e}");
    // Every built-in checks its options through the same reader: values of
    // each kind are checked, unknown keys refused, good ones accepted.
    for (spec, bad) in [
        ("hazards:all=maybe", Some("all=maybe")),
        ("races:max_intervals=-3", Some("max_intervals=-3")),
        ("races:global=2", Some("global=2")),
        ("coverage:format=csv", Some("format=csv")),
        ("trace:waves=sometimes", Some("waves=sometimes")),
        ("trace:format=jsonl", Some("`format`")),
        ("coverage:all=true", Some("`all`")),
        ("races:format=json,global=off,max_intervals=10", None),
        ("hazards:format=jsonl,all=yes", None),
        ("metrics:summary=0", None),
        ("trace:waves=false", None),
    ] {
        let r = Plugins::check(&[Spec::parse(spec).unwrap()]);
        match bad {
            Some(part) => {
                let e = r.expect_err(spec).to_string();
                assert!(e.contains(part), "{spec}: {e}");
            }
            None => assert!(r.is_ok(), "{spec}: {r:?}"),
        }
    }
    // Not required: left out.
    let mut s = Spec::parse("nosuch").unwrap();
    s.require = false;
    assert!(Plugins::new(&[s], &out).unwrap().is_empty());
}

/// The hazards plugin's JSON records of one run of `asm` on `t`.
fn hazards_of(t: Target, asm: &str, name: &str) -> Vec<Value> {
    let dir = temp_dir(name);
    let p = plugins("hazards:format=jsonl", &dir);
    run_asm(t, asm, Some(&p), 2);
    p.finish();
    let text = file(&dir, "hazards", "jsonl");
    let _ = std::fs::remove_dir_all(&dir);
    let recs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = recs.last().expect("a summary record").clone();
    assert_eq!(summary["type"], "summary", "{text}");
    let hazards: Vec<Value> = recs.into_iter().filter(|r| r["type"] == "hazard").collect();
    assert_eq!(summary["hazards"], hazards.len(), "{text}");
    hazards
}

#[test]
fn hazards_finds_nothing_in_the_correct_kernel() {
    for t in Target::ALL {
        let h = hazards_of(t, KERNEL, "hazards-ok");
        assert!(h.is_empty(), "{t}: {h:?}");
    }
}

#[test]
fn hazards_reports_a_deleted_vmcnt_wait() {
    let asm = KERNEL.replacen("s_waitcnt vmcnt(0)", "s_nop 0", 1);
    let h = hazards_of(Target::Gfx942, &asm, "hazards-vm");
    // No later wait covers the load: every use of v2 is reported.
    let at: Vec<(&str, u64)> = h
        .iter()
        .map(|r| {
            (
                r["instruction"].as_str().unwrap(),
                r["offset"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        at,
        [
            ("v_add_u32_e32 v2, 1, v2", 0x1c),
            ("global_store_dword v1, v2, s[2:3]", 0x20),
            ("ds_write_b32 v1, v2", 0x28)
        ],
        "{h:?}"
    );
    for r in &h {
        assert_eq!(r["kind"], "missing-wait");
        assert_eq!(r["access"], "read");
        assert_eq!(r["kernel"], "plugin_test");
        assert_eq!(r["register"], "v2");
        assert_eq!(
            r["producer"]["instruction"],
            "global_load_dword v2, v1, s[2:3]"
        );
        assert_eq!(r["producer"]["offset"], 0x10);
        assert_eq!(r["counters"], "vmcnt");
        assert_eq!(r["waves"], u64::from(GROUPS * 2), "every wave hits it");
    }
}

#[test]
fn hazards_reports_lds_writes_in_flight_at_a_barrier() {
    let asm = KERNEL.replacen(
        "ds_write_b32 v1, v2\ns_waitcnt lgkmcnt(0)",
        "ds_write_b32 v1, v2\ns_nop 0",
        1,
    );
    let h = hazards_of(Target::Gfx90a, &asm, "hazards-bar");
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(h[0]["kind"], "barrier-lds-write");
    assert_eq!(h[0]["producer"]["instruction"], "ds_write_b32 v1, v2");
    assert_eq!(h[0]["instruction"], "s_barrier");
}

#[test]
fn hazards_reports_wait_states() {
    let asm = KERNEL.replacen(
        "s_endpgm",
        "v_cmp_eq_u32_e32 vcc, v0, v0\nv_cndmask_b32_e32 v4, v0, v0, vcc\ns_endpgm",
        1,
    );
    assert!(hazards_of(Target::Gfx90a, &asm, "hazards-ws0").is_empty());
    let h = hazards_of(Target::Gfx942, &asm, "hazards-ws");
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(h[0]["kind"], "wait-states");
    assert_eq!(h[0]["rule"], "valu-sgpr-valu");
    assert_eq!(h[0]["register"], "vcc");
    assert_eq!(
        h[0]["wait_states"],
        serde_json::json!({"needed": 2, "got": 0})
    );
    assert_eq!(
        h[0]["producer"]["instruction"],
        "v_cmp_eq_u32_e32 vcc, v0, v0"
    );
}
