//! The topology from configuration: a tree of components (soc, gpu_memory,
//! xcd, l2_cache, command_processor, shader_engine, compute_unit; a node of
//! several socs for more than one GPU) with
//! index ranges (`"xcd[0:8]"`), partitions, and links written as patterns
//! (`"xcd[*].l2_cache" -> "gpu_memory"`).
//!
//! The format is documented in `configs/timing/README.md` and, as a JSON
//! Schema, in `configs/timing/schema.json`. Loading is strict (unknown keys
//! are rejected), and every error names the file and the JSON path of the
//! offending value. Paths name instances: `$.timing.topology.xcd[3].links[0].to`
//! is the `to` of the first link of the fourth instance of an `xcd[0:8]`
//! entry (a link of a ranged entry is resolved once per instance).

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use crate::engine::{
    BuildError, Component, ComponentId, ModelBuilder, Simulation, zero_latency_cycle,
};
use crate::time::Time;

/// The format version this loader reads.
pub const TOPOLOGY_VERSION: u32 = 1;

/// Instances one configuration may expand to (a guard against a range
/// typed with a few zeros too many).
pub const MAX_INSTANCES: usize = 1 << 20;

/// The component kinds of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A machine of several GPUs: the root, holding `soc` entries.
    Node,
    Soc,
    GpuMemory,
    Xcd,
    L2Cache,
    CommandProcessor,
    ShaderEngine,
    ComputeUnit,
}

impl Kind {
    /// Every kind, in the order error messages list them.
    pub const ALL: [Kind; 8] = [
        Kind::Node,
        Kind::Soc,
        Kind::GpuMemory,
        Kind::Xcd,
        Kind::L2Cache,
        Kind::CommandProcessor,
        Kind::ShaderEngine,
        Kind::ComputeUnit,
    ];

    /// The name used in configurations.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Node => "node",
            Kind::Soc => "soc",
            Kind::GpuMemory => "gpu_memory",
            Kind::Xcd => "xcd",
            Kind::L2Cache => "l2_cache",
            Kind::CommandProcessor => "command_processor",
            Kind::ShaderEngine => "shader_engine",
            Kind::ComputeUnit => "compute_unit",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kinds that may sit directly under this one.
    pub fn children(self) -> &'static [Kind] {
        match self {
            Kind::Node => &[Kind::Soc],
            Kind::Soc => &[Kind::GpuMemory, Kind::Xcd, Kind::CommandProcessor],
            Kind::Xcd => &[Kind::L2Cache, Kind::ShaderEngine, Kind::CommandProcessor],
            Kind::ShaderEngine => &[Kind::ComputeUnit],
            Kind::GpuMemory | Kind::L2Cache | Kind::CommandProcessor | Kind::ComputeUnit => &[],
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error loading a topology.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// The text is not valid JSON, does not match the schema, or fails
    /// validation; `path` is the JSON path of the offending value.
    #[error("{file}: {path}: {message}")]
    Invalid {
        file: String,
        path: String,
        message: String,
    },
}

impl TopologyError {
    /// The JSON path of the offending value, if the error is about a value.
    pub fn path(&self) -> Option<&str> {
        match self {
            TopologyError::Io { .. } => None,
            TopologyError::Invalid { path, .. } => Some(path),
        }
    }
}

/// One component of the expanded tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// Its path from the root: `xcd[3].shader_engine[1].compute_unit[7]`;
    /// the root's is its kind, `soc` or `node`.
    pub path: String,
    /// Its kind.
    pub kind: Kind,
    /// The partition it runs in: 0 for the root's, then one per instance of
    /// an entry marked `"partition": true`, in tree order.
    pub partition: u32,
    /// Its parent (`None` for the root).
    pub parent: Option<usize>,
    /// Its index in its entry's range (`Some(3)` for `xcd[3]`).
    pub index: Option<u32>,
    /// Its name without the index (`xcd`).
    pub base: String,
    /// Its JSON path (`$.timing.topology.xcd[3]`).
    pub json_path: String,
    children: Vec<usize>,
}

/// One expanded one-way link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The sending instance.
    pub from: usize,
    /// The receiving instance.
    pub to: usize,
    /// Its latency in picoseconds.
    pub latency: Time,
    /// The JSON path of the link entry it came from.
    pub origin: String,
}

/// A validated, expanded topology: instances in tree order (the root
/// first, each entry's instances in index order) and links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    pub instances: Vec<Instance>,
    pub links: Vec<Link>,
    /// The number of partitions.
    pub partitions: u32,
    /// The file's `timing.model` block, unread: the parameters of the
    /// model that runs on this topology (the GPU's timing model reads and
    /// checks them, with JSON paths under `$.timing.model`).
    pub model: Option<serde_json::Value>,
}

/// A topology file: `{"version": 1, "timing": {"topology": {...}}}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(rename = "$schema", default)]
    #[allow(dead_code)]
    schema: Option<String>,
    version: u32,
    timing: Timing,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Timing {
    topology: Node,
    #[serde(default)]
    model: Option<serde_json::Value>,
}

/// One entry of the tree as written: its own keys and its children (every
/// other key), in the order written.
#[derive(Default)]
struct Node {
    kind: Option<String>,
    partition: bool,
    links: Vec<LinkSpec>,
    children: Vec<(String, Node)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkSpec {
    from: String,
    to: String,
    latency_ps: Time,
    #[serde(default)]
    duplex: bool,
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a component: an object of \"kind\", \"partition\", \"links\" and child components")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut node = Node::default();
                let (mut partition, mut links) = (false, false);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "kind" if node.kind.is_some() => {
                            return Err(de::Error::duplicate_field("kind"));
                        }
                        "kind" => node.kind = Some(map.next_value()?),
                        "partition" if partition => {
                            return Err(de::Error::duplicate_field("partition"));
                        }
                        "partition" => {
                            partition = true;
                            node.partition = map.next_value()?;
                        }
                        "links" if links => return Err(de::Error::duplicate_field("links")),
                        "links" => {
                            links = true;
                            node.links = map.next_value()?;
                        }
                        _ => {
                            let child = map.next_value()?;
                            node.children.push((key, child));
                        }
                    }
                }
                Ok(node)
            }
        }
        d.deserialize_map(V)
    }
}

type Check<T = ()> = Result<T, (String, String)>;

/// A name with an optional index or range, as in a key (`xcd[0:8]`) or a
/// pattern segment (`xcd[*]`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sel {
    None,
    One(u32),
    Range(u32, u32),
    All,
}

fn valid_base(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Splits `name[sel]` into the name and the selector; `star` allows `[*]`.
fn parse_segment(s: &str, star: bool) -> Result<(String, Sel), String> {
    let syntax = || {
        format!(
            "bad name `{s}`: expected lower-case letters, digits and `_`, then optionally [i], [start:end]{}",
            if star { " or [*]" } else { "" }
        )
    };
    let (base, sel) = match s.find('[') {
        None => (s, None),
        Some(i) => {
            let inner = s[i + 1..].strip_suffix(']').ok_or_else(syntax)?;
            (&s[..i], Some(inner))
        }
    };
    if !valid_base(base) {
        return Err(syntax());
    }
    let num = |t: &str| -> Result<u32, String> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("bad range `{s}`: `{t}` is not an index"));
        }
        t.parse::<u32>()
            .map_err(|_| format!("bad range `{s}`: `{t}` is too large"))
    };
    let sel = match sel {
        None => Sel::None,
        Some("*") if star => Sel::All,
        Some(inner) => match inner.split_once(':') {
            None => Sel::One(num(inner)?),
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a >= b {
                    return Err(format!(
                        "bad range `{s}`: the start must be below the end ({base}[0:8] is {base}[0] to {base}[7])"
                    ));
                }
                Sel::Range(a, b)
            }
        },
    };
    Ok((base.to_string(), sel))
}

fn parse_pattern(p: &str) -> Result<Vec<(String, Sel)>, String> {
    if p.is_empty() {
        return Err("empty component pattern; write a path such as `xcd[*].l2_cache`".into());
    }
    p.split('.').map(|s| parse_segment(s, true)).collect()
}

impl Topology {
    /// Reads and validates a topology file.
    pub fn load(path: impl AsRef<Path>) -> Result<Topology, TopologyError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TopologyError::Io {
            file: file.clone(),
            source,
        })?;
        Topology::from_str(&file, &text)
    }

    /// Parses and validates topology text; `name` names the source in errors.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(name: &str, text: &str) -> Result<Topology, TopologyError> {
        let invalid = |path: String, message: String| TopologyError::Invalid {
            file: name.to_string(),
            path,
            message,
        };
        let de = &mut serde_json::Deserializer::from_str(text);
        let file: File = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            // `.` is the document, `?` a place serde cannot name (the end of
            // the text).
            let path = if path == "." || path == "?" {
                "$".to_string()
            } else {
                format!("$.{path}")
            };
            invalid(path, e.into_inner().to_string())
        })?;
        if file.version != TOPOLOGY_VERSION {
            return Err(invalid(
                "$.version".into(),
                format!(
                    "unsupported version {}, expected {TOPOLOGY_VERSION}",
                    file.version
                ),
            ));
        }
        let mut t = Topology::expand(&file.timing.topology).map_err(|(p, m)| invalid(p, m))?;
        t.model = file.timing.model;
        Ok(t)
    }

    fn expand(root: &Node) -> Check<Topology> {
        const ROOT: &str = "$.timing.topology";
        let kind = match root.kind.as_deref() {
            None | Some("soc") => Kind::Soc,
            Some("node") => Kind::Node,
            Some(k) => {
                return Err((
                    format!("{ROOT}.kind"),
                    format!(
                        "the root of the topology is a soc (one GPU, the default) or a node (several), got `{k}`"
                    ),
                ));
            }
        };
        let mut t = Topology {
            instances: vec![Instance {
                path: kind.name().into(),
                kind,
                partition: 0,
                parent: None,
                index: None,
                base: kind.name().into(),
                json_path: ROOT.into(),
                children: Vec::new(),
            }],
            links: Vec::new(),
            partitions: 1,
            model: None,
        };
        let mut nodes: Vec<&Node> = vec![root];
        t.add_children(0, root, &mut nodes)?;
        for (id, node) in nodes.iter().enumerate() {
            for (j, spec) in node.links.iter().enumerate() {
                t.add_links(id, j, spec)?;
            }
        }
        t.check_latencies()?;
        Ok(t)
    }

    /// Expands `node`'s children under instance `parent` (depth first, so
    /// instances come in tree order); `nodes[i]` is instance i's entry.
    fn add_children<'n>(
        &mut self,
        parent: usize,
        node: &'n Node,
        nodes: &mut Vec<&'n Node>,
    ) -> Check {
        let pkind = self.instances[parent].kind;
        let pjson = self.instances[parent].json_path.clone();
        for (key, child) in &node.children {
            let at = format!("{pjson}.{key}");
            let (base, sel) = parse_segment(key, false).map_err(|m| (at.clone(), m))?;
            let kind_name = child.kind.as_deref().unwrap_or(&base);
            let Some(kind) = Kind::from_name(kind_name) else {
                let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
                let (path, how) = match &child.kind {
                    Some(_) => (format!("{at}.kind"), ""),
                    None => (
                        at.clone(),
                        "; an entry whose name is not its kind names it with \"kind\"",
                    ),
                };
                return Err((
                    path,
                    format!(
                        "unknown component kind `{kind_name}`; expected one of {}{how}",
                        names.join(", ")
                    ),
                ));
            };
            if !pkind.children().contains(&kind) {
                let homes: Vec<&str> = Kind::ALL
                    .iter()
                    .filter(|k| k.children().contains(&kind))
                    .map(|k| k.name())
                    .collect();
                let home = if homes.is_empty() {
                    "it is only the root".to_string()
                } else {
                    format!("it belongs under {}", homes.join(" or "))
                };
                return Err((at, format!("a {kind} cannot sit under a {pkind}: {home}")));
            }
            let indices: Vec<Option<u32>> = match sel {
                Sel::None => vec![None],
                Sel::One(i) => vec![Some(i)],
                Sel::Range(a, b) => (a..b).map(Some).collect(),
                Sel::All => unreachable!("keys are parsed without [*]"),
            };
            if self.instances.len() + indices.len() > MAX_INSTANCES {
                return Err((
                    at,
                    format!("the topology expands to more than {MAX_INSTANCES} components"),
                ));
            }
            for index in indices {
                let name = match index {
                    Some(i) => format!("{base}[{i}]"),
                    None => base.clone(),
                };
                let clash = self.instances[parent].children.iter().any(|&c| {
                    let s = &self.instances[c];
                    s.base == base && (s.index == index || s.index.is_none() != index.is_none())
                });
                if clash {
                    return Err((
                        at,
                        format!(
                            "`{name}` is declared twice under {} (entries of one name need disjoint ranges, all ranged or none)",
                            self.instances[parent].path
                        ),
                    ));
                }
                let partition = if child.partition {
                    self.partitions += 1;
                    self.partitions - 1
                } else {
                    self.instances[parent].partition
                };
                let path = if parent == 0 {
                    name.clone()
                } else {
                    format!("{}.{name}", self.instances[parent].path)
                };
                let id = self.instances.len();
                self.instances.push(Instance {
                    path,
                    kind,
                    partition,
                    parent: Some(parent),
                    index,
                    base: base.clone(),
                    json_path: format!("{pjson}.{name}"),
                    children: Vec::new(),
                });
                self.instances[parent].children.push(id);
                nodes.push(child);
                self.add_children(id, child, nodes)?;
            }
        }
        Ok(())
    }

    /// A short list of an instance's children for error messages
    /// (`gpu_memory, xcd[0:8]`).
    fn child_summary(&self, id: usize) -> String {
        let mut out: Vec<String> = Vec::new();
        let kids = &self.instances[id].children;
        let mut i = 0;
        while i < kids.len() {
            let c = &self.instances[kids[i]];
            let mut j = i + 1;
            match c.index {
                None => out.push(c.base.clone()),
                Some(first) => {
                    let mut last = first;
                    while j < kids.len() {
                        let d = &self.instances[kids[j]];
                        if d.base != c.base || d.index != Some(last + 1) {
                            break;
                        }
                        last += 1;
                        j += 1;
                    }
                    out.push(if last == first {
                        format!("{}[{first}]", c.base)
                    } else {
                        format!("{}[{first}:{}]", c.base, last + 1)
                    });
                }
            }
            i = j;
        }
        if out.is_empty() {
            "none".into()
        } else {
            out.join(", ")
        }
    }

    /// The instances a pattern names under `start`: each with the indices
    /// its `[*]` segments took. The k-th `[*]` takes `bound[k]` when given.
    fn resolve(
        &self,
        start: usize,
        pattern: &[(String, Sel)],
        bound: &[u32],
    ) -> Result<Vec<(usize, Vec<u32>)>, String> {
        let mut current: Vec<(usize, Vec<u32>)> = vec![(start, Vec::new())];
        let mut stars = 0;
        for (base, sel) in pattern {
            let mut next = Vec::new();
            for (c, taken) in &current {
                let inst = &self.instances[*c];
                let kids: Vec<usize> = inst
                    .children
                    .iter()
                    .copied()
                    .filter(|&k| self.instances[k].base == *base)
                    .collect();
                let has = || format!("its components: {}", self.child_summary(*c));
                if kids.is_empty() {
                    return Err(format!("`{}` has no `{base}` ({})", inst.path, has()));
                }
                let ranged = self.instances[kids[0]].index.is_some();
                let pick = |i: u32| -> Result<usize, String> {
                    kids.iter()
                        .copied()
                        .find(|&k| self.instances[k].index == Some(i))
                        .ok_or_else(|| format!("`{}` has no `{base}[{i}]` ({})", inst.path, has()))
                };
                match sel {
                    Sel::None if ranged => {
                        return Err(format!(
                            "`{base}` under `{}` is a range ({}): pick one with {base}[i] or all with {base}[*]",
                            inst.path,
                            has()
                        ));
                    }
                    Sel::None => next.push((kids[0], taken.clone())),
                    _ if !ranged => {
                        return Err(format!(
                            "`{base}` under `{}` is not a range: drop the index",
                            inst.path
                        ));
                    }
                    Sel::One(i) => next.push((pick(*i)?, taken.clone())),
                    Sel::Range(a, b) => {
                        for i in *a..*b {
                            next.push((pick(i)?, taken.clone()));
                        }
                    }
                    Sel::All => match bound.get(stars) {
                        Some(&i) => {
                            let k = pick(i).map_err(|m| {
                                format!("{m}; its [*] takes the index {i} of the `from` side")
                            })?;
                            let mut t = taken.clone();
                            t.push(i);
                            next.push((k, t));
                        }
                        None => {
                            for &k in &kids {
                                let mut t = taken.clone();
                                t.push(self.instances[k].index.unwrap_or(0));
                                next.push((k, t));
                            }
                        }
                    },
                }
            }
            if *sel == Sel::All {
                stars += 1;
            }
            current = next;
        }
        Ok(current)
    }

    fn add_links(&mut self, id: usize, j: usize, spec: &LinkSpec) -> Check {
        let origin = format!("{}.links[{j}]", self.instances[id].json_path);
        let from_pat = parse_pattern(&spec.from).map_err(|m| (format!("{origin}.from"), m))?;
        let to_pat = parse_pattern(&spec.to).map_err(|m| (format!("{origin}.to"), m))?;
        let froms = self.resolve(id, &from_pat, &[]).map_err(|m| {
            (
                format!("{origin}.from"),
                format!("dangling link endpoint `{}`: {m}", spec.from),
            )
        })?;
        for (f, stars) in froms {
            let tos = self.resolve(id, &to_pat, &stars).map_err(|m| {
                (
                    format!("{origin}.to"),
                    format!("dangling link endpoint `{}`: {m}", spec.to),
                )
            })?;
            for (t, _) in tos {
                if f == t {
                    return Err((
                        origin,
                        format!(
                            "`{}` is linked to itself; a component reaches itself with a self-event",
                            self.instances[f].path
                        ),
                    ));
                }
                self.links.push(Link {
                    from: f,
                    to: t,
                    latency: spec.latency_ps,
                    origin: origin.clone(),
                });
                if spec.duplex {
                    self.links.push(Link {
                        from: t,
                        to: f,
                        latency: spec.latency_ps,
                        origin: origin.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    fn check_latencies(&self) -> Check {
        for l in &self.links {
            let (f, t) = (&self.instances[l.from], &self.instances[l.to]);
            if l.latency == 0 && f.partition != t.partition {
                return Err((
                    format!("{}.latency_ps", l.origin),
                    format!(
                        "a zero-latency link between partitions (`{}` in partition {} -> `{}` in partition {}): links between partitions need a positive latency (the smallest is the lookahead of the parallel run); give it one or put both ends in one partition",
                        f.path, f.partition, t.path, t.partition
                    ),
                ));
            }
        }
        let edges: Vec<(u32, u32, Time)> = self
            .links
            .iter()
            .map(|l| (l.from as u32, l.to as u32, l.latency))
            .collect();
        if let Some(cycle) = zero_latency_cycle(self.instances.len(), &edges) {
            let (a, b) = (cycle[0] as usize, cycle[1] as usize);
            let origin = self
                .links
                .iter()
                .find(|l| l.from == a && l.to == b && l.latency == 0)
                .map_or_else(
                    || "$.timing.topology".to_string(),
                    |l| format!("{}.latency_ps", l.origin),
                );
            let names: Vec<&str> = cycle
                .iter()
                .map(|&c| self.instances[c as usize].path.as_str())
                .collect();
            return Err((
                origin,
                format!(
                    "zero-latency links form a cycle ({}): an event could go round it forever without time advancing; give one of them a latency",
                    names.join(" -> ")
                ),
            ));
        }
        Ok(())
    }

    /// The smallest latency of a link between partitions (`None` if no
    /// link crosses partitions).
    pub fn lookahead(&self) -> Option<Time> {
        self.links
            .iter()
            .filter(|l| self.instances[l.from].partition != self.instances[l.to].partition)
            .map(|l| l.latency)
            .min()
    }

    /// The instance at `path` (`xcd[3].l2_cache`; the root is `soc`).
    pub fn find(&self, path: &str) -> Option<usize> {
        self.instances.iter().position(|i| i.path == path)
    }

    /// Builds a simulation: one component per instance, made by `make`
    /// (component ids are instance indices), and the links. Each component's
    /// ports are named after their peers' paths ([`crate::Ctx::out_port`]).
    pub fn build<C: Component>(
        &self,
        mut make: impl FnMut(&Instance) -> C,
    ) -> Result<Simulation<C>, BuildError> {
        let mut b = ModelBuilder::new();
        for inst in &self.instances {
            b.add(inst.path.clone(), inst.partition, make(inst));
        }
        for l in &self.links {
            b.link(
                ComponentId(l.from as u32),
                ComponentId(l.to as u32),
                l.latency,
            );
        }
        b.build()
    }
}

#[cfg(test)]
mod tests;
