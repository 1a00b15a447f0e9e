use super::*;
use serde_json::{Value, json};

fn configs() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/timing")
}

fn shipped() -> Topology {
    Topology::load(configs().join("mi300x.json")).unwrap_or_else(|e| panic!("{e}"))
}

/// A topology document around `topology` (`json!` sorts object keys, so
/// entries expand in name order).
fn doc(topology: Value) -> String {
    json!({"version": 1, "timing": {"topology": topology}}).to_string()
}

/// The path and message of the error `text` gives.
fn err(text: &str) -> (String, String) {
    match Topology::from_str("t.json", text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => {
            let shown = e.to_string();
            let path = e.path().unwrap().to_string();
            assert!(shown.starts_with(&format!("t.json: {path}: ")), "{shown}");
            let msg = shown[format!("t.json: {path}: ").len()..].to_string();
            (path, msg)
        }
    }
}

/// Asserts the error's path, and that its message contains `fragment`.
fn rejects(topology: Value, path: &str, fragment: &str) {
    let (p, m) = err(&doc(topology));
    assert_eq!(p, path, "{m}");
    assert!(m.contains(fragment), "{path}: {m}\n  expected: {fragment}");
}

fn count(t: &Topology, kind: Kind) -> usize {
    t.instances.iter().filter(|i| i.kind == kind).count()
}

fn link_paths(t: &Topology) -> Vec<(String, String)> {
    t.links
        .iter()
        .map(|l| {
            (
                t.instances[l.from].path.clone(),
                t.instances[l.to].path.clone(),
            )
        })
        .collect()
}

#[test]
fn the_mi300x_topology_expands() {
    let t = shipped();
    assert_eq!(count(&t, Kind::Soc), 1);
    assert_eq!(count(&t, Kind::Xcd), 8);
    assert_eq!(count(&t, Kind::L2Cache), 8);
    assert_eq!(count(&t, Kind::ShaderEngine), 32);
    assert_eq!(count(&t, Kind::ComputeUnit), 304);
    assert_eq!(count(&t, Kind::CommandProcessor), 9);
    assert_eq!(count(&t, Kind::GpuMemory), 1);
    assert_eq!(t.partitions, 9);
    // compute units <-> l2 and the XCD's cp (duplex), l2 <-> memory and
    // cp <-> xcd cps (duplex).
    assert_eq!(t.links.len(), 304 * 4 + 8 * 2 + 8 * 2);
    assert_eq!(t.lookahead(), Some(9520));
    let cu = t.find("xcd[3].shader_engine[2].compute_unit[8]").unwrap();
    assert_eq!(t.instances[cu].partition, 4);
    assert_eq!(
        t.instances[cu].json_path,
        "$.timing.topology.xcd[3].shader_engine[2].compute_unit[8]"
    );
    assert!(t.find("xcd[3].shader_engine[2].compute_unit[9]").is_none());
    assert_eq!(t.instances[t.find("gpu_memory").unwrap()].partition, 0);
    let links = link_paths(&t);
    assert!(links.contains(&("xcd[7].l2_cache".into(), "gpu_memory".into())));
    assert!(links.contains(&("gpu_memory".into(), "xcd[7].l2_cache".into())));
    assert!(links.contains(&(
        "xcd[3].shader_engine[2].compute_unit[8]".into(),
        "xcd[3].l2_cache".into()
    )));
    assert!(links.contains(&(
        "xcd[5].command_processor".into(),
        "xcd[5].shader_engine[3].compute_unit[8]".into()
    )));
    assert!(links.contains(&(
        "xcd[5].shader_engine[3].compute_unit[8]".into(),
        "xcd[5].command_processor".into()
    )));
    // Instances come in tree order: every parent before its children.
    for (i, inst) in t.instances.iter().enumerate() {
        assert!(inst.parent.is_none_or(|p| p < i));
    }
    // It builds and runs.
    let sim = t
        .build(|i| crate::synthetic::Synthetic::new(i.kind, 476, 0))
        .unwrap();
    assert_eq!(sim.partitions(), 9);
    assert_eq!(sim.lookahead(), Some(9520));
}

#[test]
fn patterns_bind_fan_in_and_fan_out() {
    let t = Topology::from_str(
        "t",
        &doc(json!({
            "command_processor": {},
            "gpu_memory": {},
            "xcd[0:3]": {
                "partition": true,
                "l2_cache": {},
                "shader_engine[0:2]": {"compute_unit[0:2]": {}}
            },
            "links": [
                // The [*] of `to` takes the xcd index of `from`.
                {"from": "xcd[*].shader_engine[*].compute_unit[1]", "to": "xcd[*].l2_cache", "latency_ps": 5},
                // Fan-out over an explicit range.
                {"from": "command_processor", "to": "xcd[1:3].l2_cache", "latency_ps": 7},
                // A second [*] in `to` beyond those of `from` takes every index.
                {"from": "gpu_memory", "to": "xcd[2].shader_engine[*]", "latency_ps": 9}
            ]
        })),
    )
    .unwrap();
    let links = link_paths(&t);
    let expect: Vec<(String, String)> = [
        ("xcd[0].shader_engine[0].compute_unit[1]", "xcd[0].l2_cache"),
        ("xcd[0].shader_engine[1].compute_unit[1]", "xcd[0].l2_cache"),
        ("xcd[1].shader_engine[0].compute_unit[1]", "xcd[1].l2_cache"),
        ("xcd[1].shader_engine[1].compute_unit[1]", "xcd[1].l2_cache"),
        ("xcd[2].shader_engine[0].compute_unit[1]", "xcd[2].l2_cache"),
        ("xcd[2].shader_engine[1].compute_unit[1]", "xcd[2].l2_cache"),
        ("command_processor", "xcd[1].l2_cache"),
        ("command_processor", "xcd[2].l2_cache"),
        ("gpu_memory", "xcd[2].shader_engine[0]"),
        ("gpu_memory", "xcd[2].shader_engine[1]"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(links, expect);
    assert_eq!(t.partitions, 4);
    assert_eq!(t.lookahead(), Some(7));
    assert_eq!(t.links[0].origin, "$.timing.topology.links[0]");
}

#[test]
fn a_node_of_gpus_partitioned_per_gpu() {
    let gpu = json!({
        "partition": true,
        "gpu_memory": {},
        "xcd[0:2]": {"l2_cache": {}},
        "links": [{"from": "xcd[*].l2_cache", "to": "gpu_memory", "latency_ps": 100, "duplex": true}]
    });
    let t = Topology::from_str(
        "t",
        &doc(json!({
            "kind": "node",
            "soc[0:4]": gpu,
            "links": [
                {"from": "soc[0].gpu_memory", "to": "soc[1:4].gpu_memory", "latency_ps": 700, "duplex": true}
            ]
        })),
    )
    .unwrap();
    assert_eq!(t.instances[0].path, "node");
    assert_eq!(t.instances[0].kind, Kind::Node);
    assert_eq!(t.partitions, 5);
    assert_eq!(count(&t, Kind::Soc), 4);
    assert_eq!(count(&t, Kind::L2Cache), 8);
    let l2 = t.find("soc[3].xcd[1].l2_cache").unwrap();
    assert_eq!(t.instances[l2].partition, 4);
    assert_eq!(
        t.instances[l2].json_path,
        "$.timing.topology.soc[3].xcd[1].l2_cache"
    );
    // Within a GPU, links stay inside its partition: the lookahead is the
    // GPU-to-GPU latency.
    assert_eq!(t.lookahead(), Some(700));
    assert!(link_paths(&t).contains(&("soc[2].gpu_memory".into(), "soc[0].gpu_memory".into())));
    rejects(
        json!({
            "kind": "node",
            "soc[0:2]": {"xcd[0:2]": {"l2_cache": {}, "links": [{"from": "l2_cache", "to": "gpu_memory", "latency_ps": 1}]}}
        }),
        "$.timing.topology.soc[0].xcd[0].links[0].to",
        "dangling link endpoint `gpu_memory`: `soc[0].xcd[0]` has no `gpu_memory` (its components: l2_cache)",
    );
}

#[test]
fn kind_defaults_to_the_name_and_may_be_given() {
    let t = Topology::from_str(
        "t",
        &doc(json!({
            "hbm": {"kind": "gpu_memory"},
            "xcd[0:2]": {"l2_cache": {}},
            "links": [{"from": "xcd[*].l2_cache", "to": "hbm", "latency_ps": 3}]
        })),
    )
    .unwrap();
    let hbm = t.find("hbm").unwrap();
    assert_eq!(t.instances[hbm].kind, Kind::GpuMemory);
    assert_eq!(t.partitions, 1);
    assert_eq!(t.lookahead(), None);
}

#[test]
fn unknown_component_kinds() {
    rejects(
        json!({"l3_cache": {}}),
        "$.timing.topology.l3_cache",
        "unknown component kind `l3_cache`; expected one of node, soc, gpu_memory, xcd, l2_cache, command_processor, shader_engine, compute_unit",
    );
    rejects(
        json!({"xcd[0:8]": {"cache": {"kind": "l3"}}}),
        "$.timing.topology.xcd[0].cache.kind",
        "unknown component kind `l3`",
    );
    rejects(
        json!({"kind": "xcd"}),
        "$.timing.topology.kind",
        "the root of the topology is a soc (one GPU, the default) or a node (several), got `xcd`",
    );
}

#[test]
fn misplaced_kinds() {
    rejects(
        json!({"xcd[0:8]": {"compute_unit[0:4]": {}}}),
        "$.timing.topology.xcd[0].compute_unit[0:4]",
        "a compute_unit cannot sit under a xcd: it belongs under shader_engine",
    );
    rejects(
        json!({"gpu_memory": {"l2_cache": {}}}),
        "$.timing.topology.gpu_memory.l2_cache",
        "a l2_cache cannot sit under a gpu_memory: it belongs under xcd",
    );
    rejects(
        json!({"soc": {}}),
        "$.timing.topology.soc",
        "a soc cannot sit under a soc: it belongs under node",
    );
    rejects(
        json!({"kind": "node", "soc[0:2]": {"node": {}}}),
        "$.timing.topology.soc[0].node",
        "a node cannot sit under a soc: it is only the root",
    );
    rejects(
        json!({"kind": "node", "xcd": {}}),
        "$.timing.topology.xcd",
        "a xcd cannot sit under a node: it belongs under soc",
    );
}

#[test]
fn bad_ranges() {
    rejects(
        json!({"xcd[8:4]": {}}),
        "$.timing.topology.xcd[8:4]",
        "bad range `xcd[8:4]`: the start must be below the end",
    );
    rejects(
        json!({"xcd[2:2]": {}}),
        "$.timing.topology.xcd[2:2]",
        "the start must be below the end",
    );
    rejects(
        json!({"xcd[0:x]": {}}),
        "$.timing.topology.xcd[0:x]",
        "`x` is not an index",
    );
    rejects(
        json!({"xcd[-1:3]": {}}),
        "$.timing.topology.xcd[-1:3]",
        "`-1` is not an index",
    );
    rejects(
        json!({"xcd[0:8": {}}),
        "$.timing.topology.xcd[0:8",
        "bad name `xcd[0:8`",
    );
    rejects(
        json!({"xcd[*]": {}}),
        "$.timing.topology.xcd[*]",
        "`*` is not an index",
    );
    rejects(
        json!({"Xcd": {}}),
        "$.timing.topology.Xcd",
        "bad name `Xcd`",
    );
    rejects(
        json!({"xcd[0:99999999]": {}}),
        "$.timing.topology.xcd[0:99999999]",
        "the topology expands to more than 1048576 components",
    );
    // Overlapping ranges, or a ranged and an unranged entry of one name.
    rejects(
        json!({"xcd[0:3]": {"shader_engine[0:3]": {}, "shader_engine[2:4]": {}}}),
        "$.timing.topology.xcd[0].shader_engine[2:4]",
        "`shader_engine[2]` is declared twice under xcd[0]",
    );
    rejects(
        json!({"xcd": {}, "xcd[0:2]": {}}),
        "$.timing.topology.xcd[0:2]",
        "`xcd[0]` is declared twice under soc",
    );
}

#[test]
fn dangling_link_endpoints() {
    rejects(
        json!({"gpu_memory": {}, "links": [{"from": "gpu_memory", "to": "command_processor", "latency_ps": 1}]}),
        "$.timing.topology.links[0].to",
        "dangling link endpoint `command_processor`: `soc` has no `command_processor` (its components: gpu_memory)",
    );
    rejects(
        json!({
            "gpu_memory": {},
            "xcd[0:8]": {"l2_cache": {}, "links": [{"from": "shader_engine[*]", "to": "l2_cache", "latency_ps": 1}]}
        }),
        "$.timing.topology.xcd[0].links[0].from",
        "dangling link endpoint `shader_engine[*]`: `xcd[0]` has no `shader_engine` (its components: l2_cache)",
    );
    rejects(
        json!({
            "gpu_memory": {},
            "xcd[0:8]": {"l2_cache": {}},
            "links": [{"from": "xcd[8].l2_cache", "to": "gpu_memory", "latency_ps": 1}]
        }),
        "$.timing.topology.links[0].from",
        "`soc` has no `xcd[8]` (its components: gpu_memory, xcd[0:8])",
    );
    rejects(
        json!({
            "gpu_memory": {},
            "xcd[0:8]": {"l2_cache": {}},
            "links": [{"from": "xcd.l2_cache", "to": "gpu_memory", "latency_ps": 1}]
        }),
        "$.timing.topology.links[0].from",
        "`xcd` under `soc` is a range (its components: gpu_memory, xcd[0:8]): pick one with xcd[i] or all with xcd[*]",
    );
    rejects(
        json!({
            "gpu_memory": {},
            "xcd[0:2]": {"l2_cache": {}},
            "links": [{"from": "xcd[*].l2_cache", "to": "gpu_memory[*]", "latency_ps": 1}]
        }),
        "$.timing.topology.links[0].to",
        "`gpu_memory` under `soc` is not a range: drop the index",
    );
    // A bound [*] whose index the other side lacks.
    rejects(
        json!({
            "xcd[0:4]": {"l2_cache": {}},
            "command_processor[0:2]": {},
            "links": [{"from": "xcd[*].l2_cache", "to": "command_processor[*]", "latency_ps": 1}]
        }),
        "$.timing.topology.links[0].to",
        "`soc` has no `command_processor[2]` (its components: command_processor[0:2], xcd[0:4]); its [*] takes the index 2 of the `from` side",
    );
    rejects(
        json!({"gpu_memory": {}, "links": [{"from": "", "to": "gpu_memory", "latency_ps": 1}]}),
        "$.timing.topology.links[0].from",
        "empty component pattern",
    );
    rejects(
        json!({"gpu_memory": {}, "links": [{"from": "gpu_memory", "to": "xcd[*.l2", "latency_ps": 1}]}),
        "$.timing.topology.links[0].to",
        "bad name `xcd[*`",
    );
    rejects(
        json!({"gpu_memory": {}, "links": [{"from": "gpu_memory", "to": "gpu_memory", "latency_ps": 1}]}),
        "$.timing.topology.links[0]",
        "`gpu_memory` is linked to itself",
    );
}

#[test]
fn zero_latency_between_partitions() {
    rejects(
        json!({
            "gpu_memory": {},
            "xcd[0:8]": {"partition": true, "l2_cache": {}},
            "links": [{"from": "xcd[*].l2_cache", "to": "gpu_memory", "latency_ps": 0}]
        }),
        "$.timing.topology.links[0].latency_ps",
        "a zero-latency link between partitions (`xcd[0].l2_cache` in partition 1 -> `gpu_memory` in partition 0)",
    );
    // The same link inside one partition is allowed.
    Topology::from_str(
        "t",
        &doc(json!({
            "gpu_memory": {},
            "xcd[0:8]": {"l2_cache": {}},
            "links": [{"from": "xcd[*].l2_cache", "to": "gpu_memory", "latency_ps": 0}]
        })),
    )
    .unwrap();
}

#[test]
fn zero_latency_cycles() {
    rejects(
        json!({
            "xcd[0:2]": {
                "partition": true,
                "l2_cache": {},
                "command_processor": {},
                "shader_engine[0:2]": {},
                "links": [
                    {"from": "command_processor", "to": "shader_engine[1]", "latency_ps": 0},
                    {"from": "shader_engine[1]", "to": "l2_cache", "latency_ps": 0},
                    {"from": "l2_cache", "to": "command_processor", "latency_ps": 0}
                ]
            }
        }),
        "$.timing.topology.xcd[0].links[0].latency_ps",
        "zero-latency links form a cycle (xcd[0].command_processor -> xcd[0].shader_engine[1] -> xcd[0].l2_cache -> xcd[0].command_processor)",
    );
    // Duplex at zero latency is a cycle of two.
    rejects(
        json!({"gpu_memory": {}, "command_processor": {},
               "links": [{"from": "command_processor", "to": "gpu_memory", "latency_ps": 0, "duplex": true}]}),
        "$.timing.topology.links[0].latency_ps",
        "(command_processor -> gpu_memory -> command_processor)",
    );
}

#[test]
fn schema_errors_name_the_path() {
    let (p, m) =
        err(r#"{"version": 1, "timing": {"topology": {"xcd[0:8]": {"partition": "yes"}}}}"#);
    assert_eq!(p, "$.timing.topology.xcd[0:8].partition");
    assert!(
        m.contains("invalid type: string \"yes\", expected a boolean"),
        "{m}"
    );
    let (p, m) = err(
        r#"{"version": 1, "timing": {"topology": {"gpu_memory": {}, "links": [{"from": "a", "to": "b", "latency": 3}]}}}"#,
    );
    assert_eq!(p, "$.timing.topology.links[0].latency");
    assert!(
        m.contains("unknown field `latency`, expected one of `from`, `to`, `latency_ps`, `duplex`"),
        "{m}"
    );
    let (p, m) =
        err(r#"{"version": 1, "timing": {"topology": {"links": [{"from": "a", "to": "b"}]}}}"#);
    assert_eq!(p, "$.timing.topology.links[0]");
    assert!(m.contains("missing field `latency_ps`"), "{m}");
    let (p, m) = err(r#"{"version": 1, "timing": {"topology": {"gpu_memory": 3}}}"#);
    assert_eq!(p, "$.timing.topology.gpu_memory");
    assert!(m.contains("expected a component"), "{m}");
    let (p, m) = err(r#"{"version": 1, "timing": {"topology": {"kind": "soc", "kind": "soc"}}}"#);
    assert_eq!(p, "$.timing.topology");
    assert!(m.contains("duplicate field `kind`"), "{m}");
    let (p, m) = err(r#"{"version": 2, "timing": {"topology": {}}}"#);
    assert_eq!(
        (p.as_str(), m.as_str()),
        ("$.version", "unsupported version 2, expected 1")
    );
    let (p, m) = err(r#"{"version": 1, "timing": {"topology": {}}, "extra": 1}"#);
    assert_eq!(p, "$.extra");
    assert!(m.contains("unknown field `extra`"), "{m}");
    let (p, _) = err("{");
    assert_eq!(p, "$");
    let e = Topology::load("/nonexistent/t.json").unwrap_err();
    assert!(
        e.path().is_none() && e.to_string().starts_with("/nonexistent/t.json: "),
        "{e}"
    );
}

/// Every property the schema declares, as dotted paths (`links.latency_ps`).
fn schema_props(
    s: &Value,
    defs: &Value,
    prefix: &str,
    out: &mut Vec<String>,
    seen: &mut Vec<String>,
) {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        if seen.iter().any(|n| n == name) {
            return;
        }
        seen.push(name.to_string());
        schema_props(&defs[name], defs, prefix, out, seen);
        seen.pop();
        return;
    }
    if let Some(items) = s.get("items") {
        schema_props(items, defs, prefix, out, seen);
    }
    for (k, sub) in s
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let p = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        out.push(p.clone());
        schema_props(sub, defs, &p, out, seen);
    }
}

#[test]
fn schema_readme_and_loader_agree() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(configs().join("schema.json")).unwrap())
            .unwrap();
    let mut props = Vec::new();
    schema_props(&schema, &schema["$defs"], "", &mut props, &mut Vec::new());
    props.sort();
    let expect = [
        "$schema",
        "timing",
        "timing.topology",
        "timing.topology.kind",
        "timing.topology.links",
        "timing.topology.links.duplex",
        "timing.topology.links.from",
        "timing.topology.links.latency_ps",
        "timing.topology.links.to",
        "timing.topology.partition",
        "version",
    ];
    // The timing model's block (read by the GPU's timing model).
    let model = [
        "timing.model",
        "timing.model.clock_mhz",
        "timing.model.line_bytes",
        "timing.model.cu",
        "timing.model.cu.simds",
        "timing.model.cu.waves_per_simd",
        "timing.model.cu.vgprs_per_simd",
        "timing.model.cu.sgprs_per_simd",
        "timing.model.cu.lds_bytes",
        "timing.model.issue",
        "timing.model.issue.simd_turn_cycles",
        "timing.model.issue.valu_cycles",
        "timing.model.issue.trans_cycles",
        "timing.model.issue.mfma_pass_cycles",
        "timing.model.issue.salu_cycles",
        "timing.model.issue.branch_cycles",
        "timing.model.issue.smem_latency",
        "timing.model.issue.vmem_issue_cycles",
        "timing.model.issue.lds_latency",
        "timing.model.issue.lds_bytes_per_cycle",
        "timing.model.issue.barrier_cycles",
        "timing.model.l1",
        "timing.model.l1.bytes",
        "timing.model.l1.ways",
        "timing.model.l1.hit_latency",
        "timing.model.l1.bytes_per_cycle",
        "timing.model.l2",
        "timing.model.l2.bytes",
        "timing.model.l2.ways",
        "timing.model.l2.hit_latency",
        "timing.model.l2.channels",
        "timing.model.l2.bytes_per_cycle_per_channel",
        "timing.model.mall",
        "timing.model.mall.bytes",
        "timing.model.mall.ways",
        "timing.model.mall.hit_latency",
        "timing.model.mall.bytes_per_cycle",
        "timing.model.hbm",
        "timing.model.hbm.latency",
        "timing.model.hbm.bytes_per_cycle",
        "timing.model.hbm.channels",
        "timing.model.dispatch",
        "timing.model.dispatch.cycles_per_workgroup",
        "timing.model.dispatch.wave_launch_cycles",
        "timing.model.dispatch.kernel_overhead_cycles",
    ];
    let mut expect: Vec<&str> = expect.iter().chain(model.iter()).copied().collect();
    expect.sort();
    assert_eq!(props, expect);
    // The kinds the schema allows are the loader's.
    let kinds: Vec<&str> = schema["$defs"]["component"]["properties"]["kind"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(kinds, Kind::ALL.map(Kind::name));
    // The README documents every field.
    let readme = std::fs::read_to_string(configs().join("README.md")).unwrap();
    for p in props {
        let leaf = p.rsplit('.').next().unwrap();
        assert!(
            readme.contains(&format!("`{leaf}`")),
            "configs/timing/README.md does not document `{leaf}`"
        );
    }
    for k in Kind::ALL {
        assert!(
            readme.contains(&format!("`{}`", k.name())),
            "README lacks kind {k}"
        );
    }
}
