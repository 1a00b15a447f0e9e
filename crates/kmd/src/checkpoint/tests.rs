//! The checkpoint file: round trip, every kind of damage refused with a
//! message naming it, a mismatched configuration refused, and the metadata
//! against `docs/checkpoint.schema.json`.

use super::*;
use rocjitsu_config::{GpuConfig, Target};
use serde_json::Value;

fn sample(expect: &Expect) -> Checkpoint {
    let mut payload = PayloadWriter::default();
    let ring: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    let data: Vec<u8> = (0..4096u32).map(|i| (i ^ 0x5a) as u8).collect();
    let ring_blob = payload.add(&ring);
    let data_blob = payload.add(&data);
    let alloc = |id, kind, va, size, contents| AllocationState {
        id,
        gpu: 0,
        kind,
        va,
        size,
        flags: 0x8000_0001,
        mmap_offset: 1 << 32,
        mapped: true,
        contents,
    };
    Checkpoint {
        meta: Meta {
            format: FORMAT.into(),
            version: VERSION,
            rocjitsu: env!("CARGO_PKG_VERSION").into(),
            config_sha256: expect.config_sha256.clone(),
            targets: expect.targets.clone(),
            exec_mode: "functional".into(),
            gpu_clock: 123_456_789,
            clients: vec![ClientState {
                token: hex(&[7; 16]),
                pid: 4242,
                xnack: false,
                memory: MemoryState {
                    next_id: 4,
                    next_offset: (1 << 32) + 0x5000,
                    allocations: vec![
                        alloc(1, AllocKind::Gtt, 0x7f00_0000_0000, 8192, Some(ring_blob)),
                        alloc(2, AllocKind::Vram, 0x7f00_0001_0000, 4096, Some(data_blob)),
                        alloc(3, AllocKind::Doorbell, 0, 8192, None),
                    ],
                },
                events: EventsState {
                    page: Some(EventPage {
                        va: 0x7f00_0000_0000,
                        size: 8192,
                    }),
                    next_other: 1,
                    events: vec![
                        EventState {
                            id: 1,
                            kind: 0,
                            auto_reset: true,
                            signaled: false,
                            age: 5,
                            exception: None,
                        },
                        EventState {
                            id: 4096,
                            kind: 3,
                            auto_reset: false,
                            signaled: true,
                            age: 2,
                            exception: Some(hex(&[1; 32])),
                        },
                    ],
                },
                queues: QueuesState {
                    next_queue: 1,
                    queues: vec![QueueState {
                        id: 0,
                        gpu: 0,
                        kind: QueueKind::Aql,
                        doorbell_slot: 0,
                        ring_base: 0x7f00_0000_0000,
                        ring_size: 4096,
                        read_ptr: 0x7f00_0000_1080,
                        write_ptr: 0x7f00_0000_1038,
                        priority: 7,
                        read_value: 12,
                        write_value: 12,
                    }],
                },
            }],
        },
        payload: payload.bytes,
    }
}

fn expect() -> Expect {
    Expect::of(&GpuConfig::builtin(Target::Gfx942))
}

fn path() -> &'static Path {
    Path::new("test.ckpt")
}

#[test]
fn a_checkpoint_reads_back_as_written() {
    let c = sample(&expect());
    let bytes = c.encode();
    assert_eq!(&bytes[..8], b"RJCKPT\0\n");
    let back = Checkpoint::decode(path(), &bytes, &expect()).unwrap();
    assert_eq!(back, c);
    let a = &back.meta.clients[0].memory.allocations[1];
    assert_eq!(back.contents(a.contents.as_ref().unwrap())[1], 1 ^ 0x5a);
    // Through a file, written atomically.
    let dir = std::env::temp_dir().join(format!("rocjitsu-ckpt-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("round.ckpt");
    c.write(&f).unwrap();
    assert_eq!(Checkpoint::read(&f, &expect()).unwrap(), c);
    let _ = std::fs::remove_dir_all(&dir);
}

fn refused(bytes: &[u8], expect: &Expect) -> String {
    match Checkpoint::decode(path(), bytes, expect) {
        Ok(_) => panic!("a damaged checkpoint was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn damage_anywhere_is_refused_with_what_is_wrong() {
    let good = sample(&expect()).encode();
    let meta_len = u64::from_le_bytes(good[16..24].try_into().unwrap()) as usize;
    let payload_at = HEADER_BYTES as usize + meta_len;

    let mut b = good.clone();
    b[0] = b'X';
    assert!(refused(&b, &expect()).contains("not a rocjitsu checkpoint"));
    assert!(refused(b"", &expect()).contains("not a rocjitsu checkpoint"));

    let mut b = good.clone();
    b[8] = 2;
    let e = refused(&b, &expect());
    assert!(
        e.contains("format version 2") && e.contains("reads version 1"),
        "{e}"
    );

    // Truncated, or with bytes after the payload.
    for n in [40, payload_at - 1, good.len() - 1] {
        let e = refused(&good[..n], &expect());
        assert!(e.contains("truncated or corrupt"), "{n}: {e}");
    }
    let mut b = good.clone();
    b.push(0);
    assert!(refused(&b, &expect()).contains("the file has"));

    // A flipped byte in the metadata, and in each allocation's bytes.
    let mut b = good.clone();
    b[HEADER_BYTES as usize + 10] ^= 1;
    assert!(refused(&b, &expect()).contains("metadata's SHA-256"));
    let mut b = good.clone();
    b[payload_at + 100] ^= 0x80;
    let e = refused(&b, &expect());
    assert!(
        e.contains("allocation 1 at 0x7f0000000000") && e.contains("SHA-256"),
        "{e}"
    );
    let mut b = good.clone();
    let last = b.len() - 1;
    b[last] ^= 1;
    assert!(refused(&b, &expect()).contains("allocation 2 at 0x7f0000010000"));

    // Metadata that is well-formed JSON but not a checkpoint's: an
    // unknown field, or a blob outside the payload.
    let mut c = sample(&expect());
    let mut v = serde_json::to_value(&c.meta).unwrap();
    v["clients"][0]["surprise"] = Value::Bool(true);
    let bytes = raw(&v, &c.payload);
    let e = refused(&bytes, &expect());
    assert!(e.contains("metadata") && e.contains("surprise"), "{e}");
    c.meta.clients[0].memory.allocations[0]
        .contents
        .as_mut()
        .unwrap()
        .offset = 1 << 40;
    let e = refused(&c.encode(), &expect());
    assert!(e.contains("outside the payload"), "{e}");
}

/// The file of `meta` (any JSON) and `payload`, checksummed.
fn raw(meta: &Value, payload: &[u8]) -> Vec<u8> {
    let m = serde_json::to_vec(meta).unwrap();
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&HEADER_BYTES.to_le_bytes());
    out.extend_from_slice(&(m.len() as u64).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(&m));
    out.extend_from_slice(&m);
    out.extend_from_slice(payload);
    out
}

#[test]
fn another_configuration_or_target_is_refused_naming_both() {
    let bytes = sample(&expect()).encode();
    let other = Expect::of(&GpuConfig::builtin(Target::Gfx90a));
    let e = refused(&bytes, &other);
    assert!(
        e.contains("GPU targets") && e.contains("gfx942") && e.contains("gfx90a"),
        "{e}"
    );
    // Same target, another configuration (a GPU of another size).
    let mut cfg = GpuConfig::builtin(Target::Gfx942);
    cfg.gpus[0].memory.size_bytes /= 2;
    let e = refused(&bytes, &Expect::of(&cfg));
    assert!(
        e.contains("GPU configuration") && e.contains(&expect().config_sha256),
        "{e}"
    );
}

/// A validator of the JSON Schema subset `docs/checkpoint.schema.json`
/// uses (type, properties, required, additionalProperties: false, items,
/// enum, minimum, oneOf, $ref to $defs); the path of the first violation.
fn check(root: &Value, schema: &Value, v: &Value, path: &str) -> Result<(), String> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("only $defs references");
        return check(root, &root["$defs"][name], v, path);
    }
    if let Some(alts) = schema.get("oneOf").and_then(Value::as_array) {
        let ok = alts
            .iter()
            .filter(|s| check(root, s, v, path).is_ok())
            .count();
        return if ok == 1 {
            Ok(())
        } else {
            Err(format!("{path}: oneOf matched {ok}"))
        };
    }
    if let Some(t) = schema.get("type").and_then(Value::as_str) {
        let ok = match t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_u64() || v.is_i64(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => panic!("schema type {t} not supported by the test validator"),
        };
        if !ok {
            return Err(format!("{path}: expected {t}"));
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        return Err(format!("{path}: not in enum"));
    }
    if let (Some(n), Some(m)) = (v.as_f64(), schema.get("minimum").and_then(Value::as_f64))
        && n < m
    {
        return Err(format!("{path}: below minimum"));
    }
    if let (Some(s), Some(p)) = (v.as_str(), schema.get("pattern").and_then(Value::as_str)) {
        // The schema's patterns are all "^[0-9a-f]{N}$" or "^([0-9a-f]{2})*$".
        let hex = s
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase());
        let len_ok = match p {
            "^[0-9a-f]{64}$" => s.len() == 64,
            "^([0-9a-f]{2})*$" => s.len() % 2 == 0,
            _ => panic!("pattern {p} not supported by the test validator"),
        };
        if !hex || !len_ok {
            return Err(format!("{path}: does not match {p}"));
        }
    }
    if let (Some(a), Some(items)) = (v.as_array(), schema.get("items")) {
        for (i, x) in a.iter().enumerate() {
            check(root, items, x, &format!("{path}[{i}]"))?;
        }
    }
    if let Some(o) = v.as_object() {
        let props = schema.get("properties").and_then(Value::as_object);
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let r = r.as_str().unwrap();
            if !o.contains_key(r) {
                return Err(format!("{path}: missing {r}"));
            }
        }
        for (k, x) in o {
            let sub = format!("{path}.{k}");
            match props.and_then(|p| p.get(k)) {
                Some(s) => check(root, s, x, &sub)?,
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    return Err(format!("{sub}: not allowed"));
                }
                None => {}
            }
        }
    }
    Ok(())
}

fn schema() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/checkpoint.schema.json");
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

#[test]
fn the_metadata_follows_its_schema_and_the_schema_catches_changes() {
    let s = schema();
    let v = serde_json::to_value(sample(&expect()).meta).unwrap();
    check(&s, &s, &v, "$").unwrap();
    // Every object of the schema is closed and requires every property
    // the writer always writes (so the schema and the types stay in step).
    let mut bad = v.clone();
    bad["clients"][0]["queues"]["queues"][0]["kind"] = "mes".into();
    assert!(check(&s, &s, &bad, "$").unwrap_err().contains("kind"));
    let mut bad = v.clone();
    bad["clients"][0]["memory"]["allocations"][0]
        .as_object_mut()
        .unwrap()
        .remove("mapped");
    assert!(
        check(&s, &s, &bad, "$")
            .unwrap_err()
            .contains("missing mapped")
    );
    let mut bad = v;
    bad["clients"][0]["events"]["extra"] = 1.into();
    assert!(
        check(&s, &s, &bad, "$")
            .unwrap_err()
            .contains("not allowed")
    );
    fn closed(s: &Value, at: &str) {
        if let Some(p) = s.get("properties").and_then(Value::as_object) {
            assert_eq!(
                s.get("additionalProperties"),
                Some(&Value::Bool(false)),
                "{at} is not closed"
            );
            let req: Vec<&str> = s["required"]
                .as_array()
                .unwrap_or_else(|| panic!("{at} has no required"))
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            for (k, sub) in p {
                assert!(req.contains(&k.as_str()), "{at}.{k} is not required");
                closed(sub, &format!("{at}.{k}"));
            }
        }
        for k in ["items", "oneOf"] {
            match s.get(k) {
                Some(Value::Array(a)) => a.iter().for_each(|x| closed(x, at)),
                Some(x) => closed(x, at),
                None => {}
            }
        }
    }
    closed(&s, "$");
    for (name, d) in s["$defs"].as_object().unwrap() {
        closed(d, name);
    }
}
