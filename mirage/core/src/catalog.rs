//! The stores: agents, topologies and profiles, each a JSON file
//! `<home>/<kind>s/<name>.json`, beside the builtins (read-only; a user
//! object cannot take a builtin's name). Files are written atomically.

use crate::model::{self, Agent, NameOr, Problem, Profile, Resolved, Topology};
use crate::{Error, Result, atomic};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// The builtin objects (from `mirage-builtin`).
#[derive(Debug, Clone, Default)]
pub struct Builtins {
    pub agents: Vec<Agent>,
    pub topologies: Vec<Topology>,
    pub profiles: Vec<Profile>,
}

/// Where an object comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Builtin,
    File(PathBuf),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Builtin => f.write_str("builtin"),
            Source::File(p) => write!(f, "{}", p.display()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Entry<T> {
    pub item: T,
    pub source: Source,
}

/// One kind of stored object.
pub trait Kind: Serialize + DeserializeOwned + Clone {
    /// `agent`, `topology`, `profile`.
    const KIND: &'static str;
    /// The directory under the home: `agents`, ...
    const DIR: &'static str;
    fn name(&self) -> &str;
    fn validate(&self) -> Result<(), Problem>;
    fn builtins(b: &Builtins) -> &[Self];
}

impl Kind for Agent {
    const KIND: &'static str = "agent";
    const DIR: &'static str = "agents";
    fn name(&self) -> &str {
        &self.name
    }
    fn validate(&self) -> Result<(), Problem> {
        Agent::validate(self)
    }
    fn builtins(b: &Builtins) -> &[Self] {
        &b.agents
    }
}

impl Kind for Topology {
    const KIND: &'static str = "topology";
    const DIR: &'static str = "topologies";
    fn name(&self) -> &str {
        &self.name
    }
    fn validate(&self) -> Result<(), Problem> {
        Topology::validate(self)
    }
    fn builtins(b: &Builtins) -> &[Self] {
        &b.topologies
    }
}

impl Kind for Profile {
    const KIND: &'static str = "profile";
    const DIR: &'static str = "profiles";
    fn name(&self) -> &str {
        &self.name
    }
    fn validate(&self) -> Result<(), Problem> {
        Profile::validate(self)
    }
    fn builtins(b: &Builtins) -> &[Self] {
        &b.profiles
    }
}

/// The stores of one configuration directory plus the builtins.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub home: PathBuf,
    pub builtins: Builtins,
}

/// Parses and validates one object file; errors name the file and field.
pub fn parse_file<T: Kind>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let what = format!("{} file {}", T::KIND, path.display());
    model::parse_valid(&what, &text, T::validate)
}

impl Catalog {
    pub fn new(home: PathBuf, builtins: Builtins) -> Catalog {
        Catalog { home, builtins }
    }

    fn dir<T: Kind>(&self) -> PathBuf {
        self.home.join(T::DIR)
    }

    fn file<T: Kind>(&self, name: &str) -> PathBuf {
        self.dir::<T>().join(format!("{name}.json"))
    }

    /// Every object: builtins first, then the files in name order. Files
    /// that do not parse are returned as errors beside the good ones.
    pub fn list<T: Kind>(&self) -> (Vec<Entry<T>>, Vec<Error>) {
        let mut out: Vec<Entry<T>> = T::builtins(&self.builtins)
            .iter()
            .map(|t| Entry {
                item: t.clone(),
                source: Source::Builtin,
            })
            .collect();
        let mut problems = vec![];
        let dir = self.dir::<T>();
        let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => vec![],
            Err(e) => {
                problems.push(Error::io(&dir, e));
                vec![]
            }
        };
        files.sort();
        for f in files {
            match self.load_file::<T>(&f) {
                Ok(t) => out.push(Entry {
                    item: t,
                    source: Source::File(f),
                }),
                Err(e) => problems.push(e),
            }
        }
        (out, problems)
    }

    fn load_file<T: Kind>(&self, path: &Path) -> Result<T> {
        let t: T = parse_file(path)?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if t.name() != stem {
            return Err(Error::invalid(
                format!("{} file {}", T::KIND, path.display()),
                "name",
                format!(
                    "is '{}' but the file is named {stem}.json: rename the file or change the name",
                    t.name()
                ),
            ));
        }
        Ok(t)
    }

    fn known_names<T: Kind>(&self) -> String {
        let (all, _) = self.list::<T>();
        let names: Vec<&str> = all.iter().map(|e| e.item.name()).collect();
        if names.is_empty() {
            format!("there are none (`mirage {} import FILE` adds one)", T::KIND)
        } else {
            format!("known: {}", names.join(", "))
        }
    }

    /// One object by name.
    pub fn get<T: Kind>(&self, name: &str) -> Result<Entry<T>> {
        if let Some(t) = T::builtins(&self.builtins)
            .iter()
            .find(|t| t.name() == name)
        {
            return Ok(Entry {
                item: t.clone(),
                source: Source::Builtin,
            });
        }
        crate::check_name(name).map_err(|m| Error::Other(format!("{} {m}", T::KIND)))?;
        let f = self.file::<T>(name);
        if f.exists() {
            return Ok(Entry {
                item: self.load_file(&f)?,
                source: Source::File(f),
            });
        }
        Err(Error::NotFound {
            kind: T::KIND,
            name: name.to_string(),
            hint: self.known_names::<T>(),
        })
    }

    /// Stores an object (validated); `replace` allows overwriting a user
    /// object of the same name. Returns the file written.
    pub fn put<T: Kind>(&self, t: &T, replace: bool) -> Result<PathBuf> {
        let what = format!("{} '{}'", T::KIND, t.name());
        t.validate().map_err(|(p, m)| Error::invalid(&what, p, m))?;
        if T::builtins(&self.builtins)
            .iter()
            .any(|b| b.name() == t.name())
        {
            return Err(Error::Other(format!(
                "{what} is builtin and cannot be replaced: choose another name"
            )));
        }
        let f = self.file::<T>(t.name());
        if f.exists() && !replace {
            return Err(Error::Other(format!(
                "{what} exists ({}): delete it first or pass --force",
                f.display()
            )));
        }
        let dir = self.dir::<T>();
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        atomic::write_json(&f, t)?;
        Ok(f)
    }

    /// Removes a user object. Returns the file removed.
    pub fn delete<T: Kind>(&self, name: &str) -> Result<PathBuf> {
        if T::builtins(&self.builtins).iter().any(|b| b.name() == name) {
            return Err(Error::Other(format!(
                "{} '{name}' is builtin and cannot be deleted",
                T::KIND
            )));
        }
        let entry = self.get::<T>(name)?;
        let Source::File(f) = entry.source else {
            unreachable!("builtins were checked above");
        };
        std::fs::remove_file(&f).map_err(|e| Error::io(&f, e))?;
        Ok(f)
    }

    /// A topology with its agent inlined.
    pub fn resolve_topology(&self, t: &Topology) -> Result<Topology> {
        let mut t = t.clone();
        if let NameOr::Name(a) = &t.agent {
            let agent = self
                .get::<Agent>(a)
                .map_err(|e| Error::Other(format!("topology '{}': agent: {e}", t.name)))?;
            t.agent = NameOr::Inline(Box::new(agent.item));
        }
        Ok(t)
    }

    /// A profile with its topology and agent inlined (self-contained).
    pub fn resolve(&self, p: &Profile) -> Result<Resolved> {
        let mut p = p.clone();
        let topology = match &p.topology {
            NameOr::Name(n) => {
                self.get::<Topology>(n)
                    .map_err(|e| Error::Other(format!("profile '{}': topology: {e}", p.name)))?
                    .item
            }
            NameOr::Inline(t) => (**t).clone(),
        };
        let topology = self
            .resolve_topology(&topology)
            .map_err(|e| Error::Other(format!("profile '{}': {e}", p.name)))?;
        p.topology = NameOr::Inline(Box::new(topology));
        Resolved::from_inline(p.clone())
            .map_err(|(path, m)| Error::invalid(format!("profile '{}'", p.name), path, m))
    }

    /// A profile by name, resolved.
    pub fn resolve_name(&self, name: &str) -> Result<Resolved> {
        let p = self.get::<Profile>(name)?;
        self.resolve(&p.item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BackendSpec, GpuLink};
    use rocjitsu_config::{GpuConfig, Target};

    fn catalog(tag: &str) -> Catalog {
        let home =
            std::env::temp_dir().join(format!("mirage-catalog-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        let agent = Agent {
            name: "MI300X".into(),
            description: String::new(),
            gpu: GpuConfig::builtin(Target::Gfx942).gpus[0].clone(),
        };
        let topo = Topology {
            name: "mi300x".into(),
            description: String::new(),
            agent: NameOr::Name("MI300X".into()),
            nodes: 1,
            gpus_per_node: 1,
            gpu_link: GpuLink::Xgmi,
        };
        let prof = Profile {
            name: "mi300x".into(),
            description: String::new(),
            backend: BackendSpec {
                kind: "rocjitsu".into(),
                options: Default::default(),
            },
            topology: NameOr::Name("mi300x".into()),
            image: None,
            sysroot: None,
            plugins: vec![],
            env: Default::default(),
            mounts: vec![],
        };
        Catalog::new(
            home,
            Builtins {
                agents: vec![agent],
                topologies: vec![topo],
                profiles: vec![prof],
            },
        )
    }

    #[test]
    fn put_get_list_delete() {
        let c = catalog("crud");
        let mut p = c.get::<Profile>("mi300x").unwrap().item;
        assert!(
            c.put(&p, false)
                .unwrap_err()
                .to_string()
                .contains("builtin")
        );
        p.name = "mine".into();
        let f = c.put(&p, false).unwrap();
        assert!(f.ends_with("profiles/mine.json"));
        assert!(
            c.put(&p, false)
                .unwrap_err()
                .to_string()
                .contains("--force")
        );
        c.put(&p, true).unwrap();
        assert_eq!(
            c.get::<Profile>("mine").unwrap().source,
            Source::File(f.clone())
        );
        let (all, problems) = c.list::<Profile>();
        assert!(problems.is_empty());
        assert_eq!(
            all.iter().map(|e| e.item.name.as_str()).collect::<Vec<_>>(),
            ["mi300x", "mine"]
        );
        let r = c.resolve_name("mine").unwrap();
        assert_eq!(r.agent().name, "MI300X");
        assert!(
            c.delete::<Profile>("mi300x")
                .unwrap_err()
                .to_string()
                .contains("builtin")
        );
        c.delete::<Profile>("mine").unwrap();
        let e = c.get::<Profile>("mine").unwrap_err().to_string();
        assert_eq!(e, "profile 'mine' not found; known: mi300x");
        std::fs::remove_dir_all(&c.home).unwrap();
    }

    #[test]
    fn broken_files_are_named() {
        let c = catalog("broken");
        let dir = c.home.join("profiles");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("bad.json"),
            r#"{"name":"bad","backend":{"kind":"noop"},"topology":"mi300x","gpus":3}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("other.json"),
            r#"{"name":"misnamed","backend":{"kind":"noop"},"topology":"mi300x"}"#,
        )
        .unwrap();
        let (all, problems) = c.list::<Profile>();
        assert_eq!(all.len(), 1);
        let msgs: Vec<String> = problems.iter().map(|e| e.to_string()).collect();
        assert!(
            msgs[0].contains("bad.json: gpus: unknown field `gpus`"),
            "{msgs:?}"
        );
        assert!(
            msgs[1].contains("other.json: name: is 'misnamed' but the file is named other.json"),
            "{msgs:?}"
        );
        let e = c.get::<Profile>("bad").unwrap_err().to_string();
        assert!(e.contains("bad.json: gpus: unknown field"), "{e}");
        std::fs::write(
            dir.join("dangling.json"),
            r#"{"name":"dangling","backend":{"kind":"noop"},"topology":"nowhere"}"#,
        )
        .unwrap();
        let e = c.resolve_name("dangling").unwrap_err().to_string();
        assert_eq!(
            e,
            "profile 'dangling': topology: topology 'nowhere' not found; known: mi300x"
        );
        std::fs::remove_dir_all(&c.home).unwrap();
    }
}
