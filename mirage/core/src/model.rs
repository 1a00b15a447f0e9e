//! The objects: an agent (one GPU model), a topology (nodes x GPUs of one
//! agent and how they are linked), a profile (backend + topology + where
//! executions run + plugins), and a resolved profile (a profile with its
//! topology and agent inlined: self-contained, what a session runs and what
//! `mirage profile export` writes).
//!
//! Parsing is strict: unknown keys are errors and every error carries the
//! JSON path of the offending value. Semantic checks (`validate`) return the
//! path and the message of the first problem.

use rocjitsu_config::{GpuConfig, GpuSpec};
use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::PathBuf;

/// The most nodes a topology may have.
pub const MAX_NODES: u32 = 64;
/// The most GPUs one node may have (render minors 128 and up, one per GPU).
pub const MAX_GPUS_PER_NODE: u32 = 16;

/// A problem found by `validate`: JSON path and message.
pub type Problem = (String, String);

/// A GPU model: the identity, shape and memory of one emulated GPU, in
/// rocjitsu's GPU configuration format (`configs/README.md`, one entry of
/// `gpus`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub gpu: GpuSpec,
}

impl Agent {
    pub fn validate(&self) -> Result<(), Problem> {
        crate::check_name(&self.name).map_err(|m| ("name".to_string(), m))?;
        let cfg = GpuConfig {
            schema: None,
            version: rocjitsu_config::CONFIG_VERSION,
            gpus: vec![self.gpu.clone()],
            dbt_guest: None,
            plugins: Vec::new(),
        };
        cfg.validate()
            .map_err(|(p, m)| (p.replacen("gpus[0]", "gpu", 1), m))
    }
}

/// How the GPUs of one node are linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuLink {
    /// One XGMI hive per node (the node's GPUs share a hive id), as on
    /// MI300X/MI355X platforms.
    #[default]
    Xgmi,
    /// PCIe only (no hive).
    Pcie,
}

impl GpuLink {
    pub fn name(self) -> &'static str {
        match self {
            GpuLink::Xgmi => "xgmi",
            GpuLink::Pcie => "pcie",
        }
    }
}

/// Nodes x GPUs per node of one agent, and how they are linked. Nodes are
/// linked by a virtual Ethernet: a container network per session when the
/// nodes are containers, the host's loopback otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The agent's name, or the agent itself.
    pub agent: NameOr<Agent>,
    pub nodes: u32,
    pub gpus_per_node: u32,
    #[serde(default)]
    pub gpu_link: GpuLink,
}

impl Topology {
    pub fn validate(&self) -> Result<(), Problem> {
        crate::check_name(&self.name).map_err(|m| ("name".to_string(), m))?;
        if !(1..=MAX_NODES).contains(&self.nodes) {
            return Err((
                "nodes".into(),
                format!("expected 1 to {MAX_NODES} nodes, got {}", self.nodes),
            ));
        }
        if !(1..=MAX_GPUS_PER_NODE).contains(&self.gpus_per_node) {
            return Err((
                "gpus_per_node".into(),
                format!(
                    "expected 1 to {MAX_GPUS_PER_NODE} GPUs per node, got {}",
                    self.gpus_per_node
                ),
            ));
        }
        match &self.agent {
            NameOr::Name(n) => crate::check_name(n).map_err(|m| ("agent".to_string(), m)),
            NameOr::Inline(a) => a.validate().map_err(|(p, m)| (format!("agent.{p}"), m)),
        }
    }
}

/// Which emulator backend runs a profile, and its options (checked by the
/// backend: unknown options are errors).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendSpec {
    pub kind: String,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub options: serde_json::Map<String, serde_json::Value>,
}

/// A host directory or file made visible to executions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mount {
    pub host: PathBuf,
    pub guest: PathBuf,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

impl std::str::FromStr for Mount {
    type Err = String;

    /// `HOST:GUEST[:ro|:rw]`, both absolute.
    fn from_str(s: &str) -> Result<Mount, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let (host, guest, ro) = match parts.as_slice() {
            [h, g] => (*h, *g, false),
            [h, g, "ro"] => (*h, *g, true),
            [h, g, "rw"] => (*h, *g, false),
            _ => {
                return Err(format!(
                    "mount '{s}': expected HOST:GUEST or HOST:GUEST:ro (absolute paths)"
                ));
            }
        };
        let m = Mount {
            host: host.into(),
            guest: guest.into(),
            read_only: ro,
        };
        m.validate().map_err(|(_, e)| format!("mount '{s}': {e}"))?;
        Ok(m)
    }
}

impl Mount {
    pub fn validate(&self) -> Result<(), Problem> {
        if !self.host.is_absolute() {
            return Err((
                "host".into(),
                format!("{} is not an absolute path", self.host.display()),
            ));
        }
        if !self.guest.is_absolute() {
            return Err((
                "guest".into(),
                format!("{} is not an absolute path", self.guest.display()),
            ));
        }
        Ok(())
    }
}

/// Parses `K=V` (an environment variable assignment).
pub fn parse_env(s: &str) -> Result<(String, String), String> {
    let Some((k, v)) = s.split_once('=') else {
        return Err(format!("--env '{s}': expected KEY=VALUE"));
    };
    check_env_key(k).map_err(|e| format!("--env '{s}': {e}"))?;
    Ok((k.to_string(), v.to_string()))
}

fn check_env_key(k: &str) -> Result<(), String> {
    let ok = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{k}' is not a valid variable name (letters, digits, '_')"
        ))
    }
}

/// A profile: backend + topology + where executions run + plugins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub backend: BackendSpec,
    /// The topology's name, or the topology itself.
    pub topology: NameOr<Topology>,
    /// A container image: executions run in one container per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// A root file system entered with chroot (e.g. the sid sysroot with
    /// ROCm 6.4); without `image` and `sysroot`, executions run on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysroot: Option<PathBuf>,
    /// Backend plugins, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<String>,
    /// Environment variables of every execution.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Host paths made visible to every execution.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mounts: Vec<Mount>,
}

impl Profile {
    pub fn validate(&self) -> Result<(), Problem> {
        crate::check_name(&self.name).map_err(|m| ("name".to_string(), m))?;
        if self.backend.kind.is_empty() {
            return Err((
                "backend.kind".into(),
                "is empty: name a backend (`mirage emulators` lists them)".into(),
            ));
        }
        match &self.topology {
            NameOr::Name(n) => crate::check_name(n).map_err(|m| ("topology".to_string(), m))?,
            NameOr::Inline(t) => t
                .validate()
                .map_err(|(p, m)| (format!("topology.{p}"), m))?,
        }
        if self.image.is_some() && self.sysroot.is_some() {
            return Err((
                "image".into(),
                "a profile runs in an image or in a sysroot, not both: remove one".into(),
            ));
        }
        if let Some(i) = &self.image
            && i.trim().is_empty()
        {
            return Err(("image".into(), "is empty".into()));
        }
        if let Some(s) = &self.sysroot
            && !s.is_absolute()
        {
            return Err((
                "sysroot".into(),
                format!("{} is not an absolute path", s.display()),
            ));
        }
        for (i, p) in self.plugins.iter().enumerate() {
            crate::check_name(p).map_err(|m| (format!("plugins[{i}]"), m))?;
        }
        for k in self.env.keys() {
            check_env_key(k).map_err(|m| (format!("env.{k}"), m))?;
        }
        for (i, m) in self.mounts.iter().enumerate() {
            m.validate()
                .map_err(|(p, e)| (format!("mounts[{i}].{p}"), e))?;
        }
        Ok(())
    }
}

/// Where a session's executions run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Root {
    Host,
    Sysroot(PathBuf),
    Image(String),
}

impl fmt::Display for Root {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Root::Host => f.write_str("host"),
            Root::Sysroot(p) => write!(f, "sysroot {}", p.display()),
            Root::Image(i) => write!(f, "image {i}"),
        }
    }
}

/// A profile with its topology and agent inlined.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The profile, self-contained (`topology` and its `agent` inline).
    pub profile: Profile,
}

impl Resolved {
    /// Wraps a profile whose topology and agent are inline.
    pub fn from_inline(profile: Profile) -> Result<Resolved, Problem> {
        match &profile.topology {
            NameOr::Inline(t) if matches!(t.agent, NameOr::Inline(_)) => {}
            NameOr::Inline(_) => {
                return Err((
                    "topology.agent".into(),
                    "must be the agent itself, not its name".into(),
                ));
            }
            NameOr::Name(_) => {
                return Err((
                    "topology".into(),
                    "must be the topology itself, not its name".into(),
                ));
            }
        }
        profile.validate()?;
        Ok(Resolved { profile })
    }

    pub fn topology(&self) -> &Topology {
        match &self.profile.topology {
            NameOr::Inline(t) => t,
            NameOr::Name(_) => unreachable!("a resolved profile holds its topology"),
        }
    }

    fn topology_mut(&mut self) -> &mut Topology {
        match &mut self.profile.topology {
            NameOr::Inline(t) => t,
            NameOr::Name(_) => unreachable!("a resolved profile holds its topology"),
        }
    }

    pub fn agent(&self) -> &Agent {
        match &self.topology().agent {
            NameOr::Inline(a) => a,
            NameOr::Name(_) => unreachable!("a resolved profile holds its agent"),
        }
    }

    pub fn root(&self) -> Root {
        match (&self.profile.image, &self.profile.sysroot) {
            (Some(i), _) => Root::Image(i.clone()),
            (None, Some(s)) => Root::Sysroot(s.clone()),
            (None, None) => Root::Host,
        }
    }

    /// Applies command-line overrides, then validates again.
    pub fn apply(&mut self, o: &Overrides) -> Result<(), Problem> {
        if let Some(n) = o.num_nodes {
            self.topology_mut().nodes = n;
        }
        if let Some(g) = o.gpus_per_node {
            self.topology_mut().gpus_per_node = g;
        }
        if let Some(b) = &o.backend {
            if *b != self.profile.backend.kind {
                self.profile.backend.options.clear();
            }
            self.profile.backend.kind = b.clone();
        }
        if let Some(i) = &o.image {
            self.profile.image = Some(i.clone());
            self.profile.sysroot = None;
        }
        if let Some(s) = &o.sysroot {
            self.profile.sysroot = Some(s.clone());
            self.profile.image = None;
        }
        if o.host {
            self.profile.sysroot = None;
            self.profile.image = None;
        }
        for (k, v) in &o.env {
            self.profile.env.insert(k.clone(), v.clone());
        }
        self.profile.mounts.extend(o.mounts.iter().cloned());
        self.profile.validate().map_err(|(p, m)| {
            let flag = match p.as_str() {
                "topology.nodes" => "--num-nodes: ".to_string(),
                "topology.gpus_per_node" => "--gpus-per-node: ".to_string(),
                _ => String::new(),
            };
            (p, format!("{flag}{m}"))
        })
    }
}

/// What `mirage run` and `mirage session start` may change in a profile.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub num_nodes: Option<u32>,
    pub gpus_per_node: Option<u32>,
    pub backend: Option<String>,
    pub image: Option<String>,
    pub sysroot: Option<PathBuf>,
    /// Run on the host (drop the profile's image or sysroot).
    pub host: bool,
    pub env: Vec<(String, String)>,
    pub mounts: Vec<Mount>,
}

/// A reference by name, or the object itself (what `export` writes).
#[derive(Debug, Clone, PartialEq)]
pub enum NameOr<T> {
    Name(String),
    Inline(Box<T>),
}

impl<T: Serialize> Serialize for NameOr<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NameOr::Name(n) => s.serialize_str(n),
            NameOr::Inline(t) => t.serialize(s),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for NameOr<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: DeserializeOwned> Visitor<'de> for V<T> {
            type Value = NameOr<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a name (a string) or the object itself")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(NameOr::Name(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                // The object is collected, then parsed on its own with its
                // own path tracking; `parse` splices the inner path in.
                let v: serde_json::Value =
                    Deserialize::deserialize(de::value::MapAccessDeserializer::new(map))?;
                match serde_path_to_error::deserialize::<_, T>(v) {
                    Ok(t) => Ok(NameOr::Inline(Box::new(t))),
                    Err(e) => {
                        let path = e.path().to_string();
                        Err(de::Error::custom(InlineError {
                            path,
                            message: e.into_inner().to_string(),
                        }))
                    }
                }
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// An error inside an inline object, carrying its path below the object
/// (spliced into the outer path by [`parse`]).
struct InlineError {
    path: String,
    message: String,
}

const INLINE_MARK: &str = "\u{1}inline-path:";

impl fmt::Display for InlineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{INLINE_MARK}{}\u{1}{}", self.path, self.message)
    }
}

/// Parses JSON text strictly. `what` names the source in errors; the
/// error's path is the JSON path of the offending value (`$` for the root).
pub fn parse<T: DeserializeOwned>(what: &str, text: &str) -> crate::Result<T> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let mut path = e.path().to_string();
        let mut message = e.into_inner().to_string();
        // Nested inline objects: splice their paths in.
        while let Some(start) = message.find(INLINE_MARK) {
            let rest = &message[start + INLINE_MARK.len()..];
            let Some((inner, msg)) = rest.split_once('\u{1}') else {
                break;
            };
            if inner != "." {
                path = if path == "." {
                    inner.to_string()
                } else {
                    format!("{path}.{inner}")
                };
            }
            message = msg.to_string();
        }
        crate::Error::invalid(what, if path == "." { "$".into() } else { path }, message)
    })
}

/// Parses and validates.
pub fn parse_valid<T: DeserializeOwned>(
    what: &str,
    text: &str,
    validate: impl FnOnce(&T) -> Result<(), Problem>,
) -> crate::Result<T> {
    let t: T = parse(what, text)?;
    validate(&t).map_err(|(p, m)| crate::Error::invalid(what, p, m))?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent() -> Agent {
        Agent {
            name: "MI300X".into(),
            description: String::new(),
            gpu: GpuConfig::builtin(rocjitsu_config::Target::Gfx942).gpus[0].clone(),
        }
    }

    fn profile_text() -> String {
        serde_json::json!({
            "name": "p",
            "backend": {"kind": "rocjitsu"},
            "topology": {"name": "t", "agent": serde_json::to_value(agent()).unwrap(), "nodes": 2, "gpus_per_node": 2}
        })
        .to_string()
    }

    #[test]
    fn profile_round_trips_inline_and_by_name() {
        let p: Profile = parse("p", &profile_text()).unwrap();
        let r = Resolved::from_inline(p.clone()).unwrap();
        assert_eq!(r.topology().nodes, 2);
        assert_eq!(r.agent().name, "MI300X");
        let back: Profile = parse("p", &serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        let by_name: Profile = parse(
            "p",
            r#"{"name":"q","backend":{"kind":"noop"},"topology":"mi300x"}"#,
        )
        .unwrap();
        assert_eq!(by_name.topology, NameOr::Name("mi300x".into()));
        assert!(Resolved::from_inline(by_name).is_err());
    }

    #[test]
    fn unknown_keys_are_named_with_their_path() {
        let mut v: serde_json::Value = serde_json::from_str(&profile_text()).unwrap();
        v["colour"] = "red".into();
        let e = parse::<Profile>("profile file x.json", &v.to_string())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("profile file x.json: colour: unknown field `colour`"),
            "{e}"
        );

        let mut v: serde_json::Value = serde_json::from_str(&profile_text()).unwrap();
        v["topology"]["agent"]["gpu"]["soc"]["xcd_count"] = 8.into();
        let e = parse::<Profile>("profile file x.json", &v.to_string())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("topology.agent.gpu.soc.xcd_count: unknown field `xcd_count`"),
            "{e}"
        );

        let mut v: serde_json::Value = serde_json::from_str(&profile_text()).unwrap();
        v["topology"]["nodes"] = "two".into();
        let e = parse::<Profile>("p", &v.to_string())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("topology.nodes: invalid type: string \"two\""),
            "{e}"
        );

        let e = parse::<Profile>("p", "{\"name\": ")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p: name: EOF while parsing"), "{e}");
    }

    #[test]
    fn semantic_checks_name_the_field() {
        let p: Profile = parse("p", &profile_text()).unwrap();
        type Edit = Box<dyn Fn(&mut Profile)>;
        let cases: Vec<(Edit, &str, &str)> = vec![
            (
                Box::new(|p| p.name = "a b".into()),
                "name",
                "not a valid name",
            ),
            (Box::new(|p| p.image = Some("img".into())), "", ""),
            (
                Box::new(|p| {
                    p.image = Some("img".into());
                    p.sysroot = Some("/x".into())
                }),
                "image",
                "not both",
            ),
            (
                Box::new(|p| p.sysroot = Some("rel".into())),
                "sysroot",
                "not an absolute path",
            ),
            (
                Box::new(|p| {
                    p.env.insert("A-B".into(), "1".into());
                }),
                "env.A-B",
                "not a valid variable",
            ),
            (
                Box::new(|p| {
                    if let NameOr::Inline(t) = &mut p.topology {
                        t.gpus_per_node = 17
                    }
                }),
                "topology.gpus_per_node",
                "1 to 16",
            ),
            (
                Box::new(|p| {
                    if let NameOr::Inline(t) = &mut p.topology
                        && let NameOr::Inline(a) = &mut t.agent
                    {
                        a.gpu.soc.xcds = 0
                    }
                }),
                "topology.agent.gpu.soc.xcds",
                "positive",
            ),
        ];
        for (edit, path, msg) in cases {
            let mut q = p.clone();
            edit(&mut q);
            match q.validate() {
                Ok(()) => assert!(path.is_empty(), "expected {path}"),
                Err((got, m)) => {
                    assert_eq!(got, path, "{m}");
                    assert!(m.contains(msg), "{m}");
                }
            }
        }
    }

    #[test]
    fn overrides() {
        let p: Profile = parse("p", &profile_text()).unwrap();
        let mut r = Resolved::from_inline(p).unwrap();
        let o = Overrides {
            num_nodes: Some(3),
            image: Some("img".into()),
            env: vec![("A".into(), "1".into())],
            ..Default::default()
        };
        r.apply(&o).unwrap();
        assert_eq!(r.topology().nodes, 3);
        assert_eq!(r.root(), Root::Image("img".into()));
        let e = r
            .apply(&Overrides {
                gpus_per_node: Some(0),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(e.0, "topology.gpus_per_node");
        assert!(e.1.starts_with("--gpus-per-node: "), "{}", e.1);
    }

    #[test]
    fn mounts_and_env_parse() {
        let m: Mount = "/a:/b:ro".parse().unwrap();
        assert!(m.read_only);
        assert!("/a".parse::<Mount>().is_err());
        assert!(
            "a:/b"
                .parse::<Mount>()
                .unwrap_err()
                .contains("not an absolute path")
        );
        assert_eq!(parse_env("A=b=c").unwrap(), ("A".into(), "b=c".into()));
        assert!(parse_env("A").is_err());
        assert!(parse_env("1A=x").is_err());
    }
}
