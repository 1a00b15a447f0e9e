//! `mirage profile|topology|agent ...` and `mirage emulators`.

use crate::{Ctx, print_json, print_table};
use anyhow::{Context, Result, anyhow, bail};
use clap::Subcommand;
use mirage_core::backend::{self, Availability};
use mirage_core::catalog::{Entry, Kind, parse_file};
use mirage_core::model::{BackendSpec, NameOr, parse_env};
use mirage_core::{Agent, GpuLink, Mount, Profile, Topology};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum ProfileCmd {
    /// List the profiles (builtin and yours)
    List,
    /// Show a profile
    Show { name: String },
    /// Create a profile (from another with --from, or from a topology or agent)
    Create(Box<CreateProfile>),
    /// Import a profile file (checked; an inline topology and agent are kept inline)
    Import {
        file: PathBuf,
        /// Store it under another name
        #[arg(long)]
        name: Option<String>,
        /// Replace a profile of the same name
        #[arg(long)]
        force: bool,
    },
    /// Print a profile self-contained (topology and agent inline), to replay elsewhere
    Export {
        name: String,
        /// Write to a file instead of stdout
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Delete one of your profiles
    Delete { name: String },
}

#[derive(clap::Args)]
pub struct CreateProfile {
    name: String,
    /// Start from this profile
    #[arg(long)]
    from: Option<String>,
    #[arg(long)]
    description: Option<String>,
    /// Backend kind (default rocjitsu; see `mirage emulators`)
    #[arg(long)]
    backend: Option<String>,
    /// A backend option KEY=VALUE (VALUE as JSON, else a string; repeatable)
    #[arg(long = "option", value_name = "K=V")]
    options: Vec<String>,
    /// Topology by name
    #[arg(long)]
    topology: Option<String>,
    /// Agent (makes an inline topology with --num-nodes and --gpus-per-node)
    #[arg(long)]
    agent: Option<String>,
    #[arg(long, value_name = "N")]
    num_nodes: Option<u32>,
    #[arg(long, value_name = "G")]
    gpus_per_node: Option<u32>,
    /// Container image of executions
    #[arg(long, conflicts_with_all = ["sysroot", "host"])]
    image: Option<String>,
    /// Root file system of executions (chroot)
    #[arg(long, conflicts_with = "host")]
    sysroot: Option<PathBuf>,
    /// Executions on the host
    #[arg(long)]
    host: bool,
    /// A plugin of the backend (repeatable)
    #[arg(long = "plugin")]
    plugins: Vec<String>,
    /// KEY=VALUE for every execution (repeatable)
    #[arg(short, long = "env")]
    env: Vec<String>,
    /// HOST:GUEST[:ro] (repeatable)
    #[arg(long = "mount")]
    mounts: Vec<String>,
    /// Replace a profile of the same name
    #[arg(long)]
    force: bool,
}

#[derive(Subcommand)]
pub enum TopologyCmd {
    List,
    Show {
        name: String,
    },
    /// Create a topology: nodes x GPUs of one agent
    Create {
        name: String,
        #[arg(long)]
        agent: String,
        #[arg(long, value_name = "N", default_value_t = 1)]
        num_nodes: u32,
        #[arg(long, value_name = "G", default_value_t = 1)]
        gpus_per_node: u32,
        /// How a node's GPUs are linked
        #[arg(long, value_enum, default_value_t = LinkArg::Xgmi)]
        gpu_link: LinkArg,
        #[arg(long)]
        description: Option<String>,
        #[arg(long)]
        force: bool,
    },
    Import {
        file: PathBuf,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        force: bool,
    },
    Delete {
        name: String,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum LinkArg {
    Xgmi,
    Pcie,
}

#[derive(Subcommand)]
pub enum AgentCmd {
    List,
    /// Show an agent (`--json` prints a file to edit and import)
    Show {
        name: String,
    },
    /// Import an agent file: {"name", "description", "gpu": <one GPU in rocjitsu's configuration format>}
    Import {
        file: PathBuf,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        force: bool,
    },
    Delete {
        name: String,
    },
}

fn source(e: &mirage_core::Source) -> String {
    e.to_string()
}

fn warn_problems(problems: Vec<mirage_core::Error>) {
    for p in problems {
        eprintln!("mirage: warning: skipped {p}");
    }
}

fn topology_summary(ctx: &Ctx, t: &NameOr<Topology>) -> String {
    let t = match t {
        NameOr::Name(n) => match ctx.catalog.get::<Topology>(n) {
            Ok(e) => e.item,
            Err(_) => return format!("{n} (missing)"),
        },
        NameOr::Inline(t) => (**t).clone(),
    };
    let agent = match &t.agent {
        NameOr::Name(a) => a.clone(),
        NameOr::Inline(a) => a.name.clone(),
    };
    format!("{} x {} {agent}", t.nodes, t.gpus_per_node)
}

fn where_runs(p: &Profile) -> String {
    match (&p.image, &p.sysroot) {
        (Some(i), _) => format!("image {i}"),
        (None, Some(s)) => format!("sysroot {}", s.display()),
        _ => "host".into(),
    }
}

fn store_and_report<T: Kind>(ctx: &Ctx, item: &T, force: bool) -> Result<ExitCode> {
    let f = ctx.catalog.put(item, force)?;
    if ctx.json {
        print_json(&serde_json::json!({ "name": item.name(), "file": f }))?;
    } else {
        println!("{} {} stored in {}", T::KIND, item.name(), f.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn import<T: Kind>(
    ctx: &Ctx,
    file: &std::path::Path,
    rename: Option<String>,
    force: bool,
    set_name: impl FnOnce(&mut T, String),
) -> Result<ExitCode> {
    let mut item: T = parse_file(file)?;
    if let Some(n) = rename {
        set_name(&mut item, n);
    }
    store_and_report(ctx, &item, force)
}

fn delete<T: Kind>(ctx: &Ctx, name: &str) -> Result<ExitCode> {
    let f = ctx.catalog.delete::<T>(name)?;
    if ctx.json {
        print_json(&serde_json::json!({ "deleted": name, "file": f }))?;
    } else {
        println!("deleted {} {name} ({})", T::KIND, f.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn list_json<T: Kind>(entries: &[Entry<T>]) -> Result<()> {
    let v: Vec<serde_json::Value> = entries
        .iter()
        .map(|e| serde_json::json!({ "name": e.item.name(), "source": source(&e.source), "object": e.item }))
        .collect();
    print_json(&v)
}

pub fn profile(ctx: &Ctx, c: ProfileCmd) -> Result<ExitCode> {
    match c {
        ProfileCmd::List => {
            let (all, problems) = ctx.catalog.list::<Profile>();
            warn_problems(problems);
            if ctx.json {
                list_json(&all)?;
            } else {
                let rows: Vec<Vec<String>> = all
                    .iter()
                    .map(|e| {
                        vec![
                            e.item.name.clone(),
                            e.item.backend.kind.clone(),
                            topology_summary(ctx, &e.item.topology),
                            where_runs(&e.item),
                            source(&e.source),
                        ]
                    })
                    .collect();
                print_table(&["NAME", "BACKEND", "TOPOLOGY", "RUNS IN", "SOURCE"], &rows);
            }
        }
        ProfileCmd::Show { name } => {
            let e = ctx.catalog.get::<Profile>(&name)?;
            if ctx.json {
                print_json(&e.item)?;
            } else {
                let p = &e.item;
                println!("profile {}  ({})", p.name, source(&e.source));
                if !p.description.is_empty() {
                    println!("  {}", p.description);
                }
                println!("  backend:  {}", p.backend.kind);
                for (k, v) in &p.backend.options {
                    println!("    {k} = {v}");
                }
                println!("  topology: {}", topology_summary(ctx, &p.topology));
                println!("  runs in:  {}", where_runs(p));
                if !p.plugins.is_empty() {
                    println!("  plugins:  {}", p.plugins.join(", "));
                }
                for (k, v) in &p.env {
                    println!("  env:      {k}={v}");
                }
                for m in &p.mounts {
                    println!(
                        "  mount:    {}:{}{}",
                        m.host.display(),
                        m.guest.display(),
                        if m.read_only { ":ro" } else { "" }
                    );
                }
            }
        }
        ProfileCmd::Create(a) => return create_profile(ctx, *a),
        ProfileCmd::Import { file, name, force } => {
            return import::<Profile>(ctx, &file, name, force, |p, n| p.name = n);
        }
        ProfileCmd::Export { name, output } => {
            let r = ctx.catalog.resolve_name(&name)?;
            let mut text = serde_json::to_string_pretty(&r.profile)?;
            text.push('\n');
            match output {
                Some(f) => {
                    mirage_core::atomic::write(&f, text.as_bytes())?;
                    if !ctx.json {
                        eprintln!("profile {name} exported to {}", f.display());
                    }
                }
                None => print!("{text}"),
            }
        }
        ProfileCmd::Delete { name } => return delete::<Profile>(ctx, &name),
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_option(s: &str) -> Result<(String, serde_json::Value)> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| anyhow!("--option '{s}': expected KEY=VALUE"))?;
    let value =
        serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::String(v.to_string()));
    Ok((k.to_string(), value))
}

fn create_profile(ctx: &Ctx, a: CreateProfile) -> Result<ExitCode> {
    let mut p = match &a.from {
        Some(f) => ctx.catalog.get::<Profile>(f)?.item,
        None => {
            if a.topology.is_none() && a.agent.is_none() {
                bail!(
                    "profile {}: give --topology T, --agent A (with --num-nodes, --gpus-per-node) or --from PROFILE",
                    a.name
                );
            }
            Profile {
                name: a.name.clone(),
                description: String::new(),
                backend: BackendSpec {
                    kind: "rocjitsu".into(),
                    options: Default::default(),
                },
                topology: NameOr::Name(String::new()),
                image: None,
                sysroot: None,
                plugins: vec![],
                env: Default::default(),
                mounts: vec![],
            }
        }
    };
    p.name = a.name.clone();
    if let Some(d) = a.description {
        p.description = d;
    }
    if let Some(b) = a.backend {
        if b != p.backend.kind {
            p.backend.options.clear();
        }
        p.backend.kind = b;
    }
    for o in &a.options {
        let (k, v) = parse_option(o)?;
        p.backend.options.insert(k, v);
    }
    if let Some(t) = a.topology {
        p.topology = NameOr::Name(t);
    }
    if a.agent.is_some() || a.num_nodes.is_some() || a.gpus_per_node.is_some() {
        // An inline topology, starting from the current one.
        let mut t = match &p.topology {
            NameOr::Name(n) if !n.is_empty() => ctx.catalog.get::<Topology>(n)?.item,
            NameOr::Inline(t) => (**t).clone(),
            NameOr::Name(_) => Topology {
                name: a.name.clone(),
                description: String::new(),
                agent: NameOr::Name(String::new()),
                nodes: 1,
                gpus_per_node: 1,
                gpu_link: GpuLink::Xgmi,
            },
        };
        t.name = a.name.clone();
        if let Some(ag) = &a.agent {
            ctx.catalog.get::<Agent>(ag)?;
            t.agent = NameOr::Name(ag.clone());
        }
        if let Some(n) = a.num_nodes {
            t.nodes = n;
        }
        if let Some(g) = a.gpus_per_node {
            t.gpus_per_node = g;
        }
        p.topology = NameOr::Inline(Box::new(t));
    }
    if let Some(i) = a.image {
        p.image = Some(i);
        p.sysroot = None;
    }
    if let Some(s) = a.sysroot {
        p.sysroot = Some(s);
        p.image = None;
    }
    if a.host {
        p.image = None;
        p.sysroot = None;
    }
    p.plugins.extend(a.plugins);
    for e in &a.env {
        let (k, v) = parse_env(e).map_err(|m| anyhow!(m))?;
        p.env.insert(k, v);
    }
    for m in &a.mounts {
        p.mounts.push(m.parse::<Mount>().map_err(|e| anyhow!(e))?);
    }
    // The topology and agent must exist, and the backend accept the profile.
    let r = ctx.catalog.resolve(&p)?;
    let b = backend::find(&p.backend.kind).map_err(|e| anyhow!("profile {}: {e}", p.name))?;
    match b.availability() {
        Availability::Available { .. } => b
            .check(&r)
            .map_err(|e| anyhow!("profile {}: {e}", p.name))?,
        Availability::Unavailable { reason } => {
            eprintln!(
                "mirage: warning: backend {} is not available here ({reason}); the profile cannot run until it is",
                b.kind()
            )
        }
    }
    store_and_report(ctx, &p, a.force)
}

pub fn topology(ctx: &Ctx, c: TopologyCmd) -> Result<ExitCode> {
    match c {
        TopologyCmd::List => {
            let (all, problems) = ctx.catalog.list::<Topology>();
            warn_problems(problems);
            if ctx.json {
                list_json(&all)?;
            } else {
                let rows: Vec<Vec<String>> = all
                    .iter()
                    .map(|e| {
                        let agent = match &e.item.agent {
                            NameOr::Name(n) => n.clone(),
                            NameOr::Inline(a) => a.name.clone(),
                        };
                        vec![
                            e.item.name.clone(),
                            agent,
                            e.item.nodes.to_string(),
                            e.item.gpus_per_node.to_string(),
                            e.item.gpu_link.name().into(),
                            source(&e.source),
                        ]
                    })
                    .collect();
                print_table(
                    &["NAME", "AGENT", "NODES", "GPUS/NODE", "LINK", "SOURCE"],
                    &rows,
                );
            }
        }
        TopologyCmd::Show { name } => {
            let e = ctx.catalog.get::<Topology>(&name)?;
            if ctx.json {
                print_json(&e.item)?;
            } else {
                let t = &e.item;
                println!("topology {}  ({})", t.name, source(&e.source));
                if !t.description.is_empty() {
                    println!("  {}", t.description);
                }
                println!(
                    "  {}",
                    topology_summary(ctx, &NameOr::Inline(Box::new(t.clone())))
                );
                println!("  GPUs of a node linked by {}", t.gpu_link.name());
            }
        }
        TopologyCmd::Create {
            name,
            agent,
            num_nodes,
            gpus_per_node,
            gpu_link,
            description,
            force,
        } => {
            ctx.catalog
                .get::<Agent>(&agent)
                .with_context(|| format!("topology {name}: --agent"))?;
            let t = Topology {
                name,
                description: description.unwrap_or_default(),
                agent: NameOr::Name(agent),
                nodes: num_nodes,
                gpus_per_node,
                gpu_link: match gpu_link {
                    LinkArg::Xgmi => GpuLink::Xgmi,
                    LinkArg::Pcie => GpuLink::Pcie,
                },
            };
            return store_and_report(ctx, &t, force);
        }
        TopologyCmd::Import { file, name, force } => {
            return import::<Topology>(ctx, &file, name, force, |t, n| t.name = n);
        }
        TopologyCmd::Delete { name } => return delete::<Topology>(ctx, &name),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn agent(ctx: &Ctx, c: AgentCmd) -> Result<ExitCode> {
    match c {
        AgentCmd::List => {
            let (all, problems) = ctx.catalog.list::<Agent>();
            warn_problems(problems);
            if ctx.json {
                list_json(&all)?;
            } else {
                let rows: Vec<Vec<String>> = all
                    .iter()
                    .map(|e| {
                        let g = &e.item.gpu;
                        vec![
                            e.item.name.clone(),
                            g.gfx_target.name().into(),
                            g.marketing_name.clone(),
                            g.soc.total_cus.to_string(),
                            format!("{} GiB {}", g.memory.size_bytes >> 30, g.memory.kind),
                            source(&e.source),
                        ]
                    })
                    .collect();
                print_table(
                    &[
                        "NAME",
                        "TARGET",
                        "MARKETING NAME",
                        "CUS",
                        "MEMORY",
                        "SOURCE",
                    ],
                    &rows,
                );
            }
        }
        AgentCmd::Show { name } => {
            let e = ctx.catalog.get::<Agent>(&name)?;
            if ctx.json {
                print_json(&e.item)?;
            } else {
                let a = &e.item;
                let g = &a.gpu;
                println!("agent {}  ({})", a.name, source(&e.source));
                if !a.description.is_empty() {
                    println!("  {}", a.description);
                }
                println!(
                    "  {} ({}, {}), PCI device 0x{:04x}",
                    g.marketing_name, g.gfx_target, g.family, g.pci.device_id
                );
                println!(
                    "  {} CUs: {} XCD(s) x {} shader engines, LDS {} KiB/CU",
                    g.soc.total_cus,
                    g.soc.xcds,
                    g.soc.shader_engines_per_xcd,
                    g.cu.lds_bytes / 1024
                );
                println!(
                    "  memory: {} GiB {}",
                    g.memory.size_bytes >> 30,
                    g.memory.kind
                );
            }
        }
        AgentCmd::Import { file, name, force } => {
            return import::<Agent>(ctx, &file, name, force, |a, n| a.name = n);
        }
        AgentCmd::Delete { name } => return delete::<Agent>(ctx, &name),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn emulators(ctx: &Ctx) -> Result<ExitCode> {
    let all = backend::all();
    if ctx.json {
        let v: Vec<serde_json::Value> = all
            .iter()
            .map(|b| serde_json::json!({ "kind": b.kind(), "summary": b.summary(), "availability": b.availability() }))
            .collect();
        print_json(&v)?;
    } else {
        let rows: Vec<Vec<String>> = all
            .iter()
            .map(|b| {
                let (state, detail) = match b.availability() {
                    Availability::Available { detail } => ("available".to_string(), detail),
                    Availability::Unavailable { reason } => ("not available".to_string(), reason),
                };
                vec![b.kind().to_string(), state, b.summary().to_string(), detail]
            })
            .collect();
        print_table(&["KIND", "STATE", "WHAT", "DETAIL"], &rows);
    }
    Ok(ExitCode::SUCCESS)
}
