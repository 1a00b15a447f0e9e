//! mirage's builtin objects.
//!
//! - Agents `MI210` (gfx90a), `MI300X` (gfx942), `MI355X` (gfx950): the GPU
//!   of rocjitsu's shipped configurations (`configs/*.json`).
//! - Topologies: `mi210`, `mi300x`, `mi355x` (one node, one GPU) and
//!   `mi210-x4` (PCIe), `mi300x-x8`, `mi355x-x8` (one node, eight GPUs in
//!   one XGMI hive, as on the vendors' platforms).
//! - Profiles `mi210`, `mi300x`, `mi355x` on the rocjitsu backend. Which
//!   ROCm runs decides where: bookworm's ROCm 5.2.3 on the host knows
//!   gfx90a only, so `mi210` runs on the host; `mi300x` runs in the Debian
//!   sid sysroot with ROCm 6.4.3 and `mi355x` in the one with ROCm 7.2.4
//!   (HIP 6.4 has no gfx950 device), both built by rocjitsu's
//!   `scripts/sysroot.sh` under `$ROCJITSU_CACHE` (default
//!   `~/.cache/rocjitsu`). `--image` runs them in a container instead.
//! - Profiles `mi355x-dbt` (the `rocjitsu-dbt` backend: an MI355X guest
//!   on an emulated MI300X host) and `mi300x-hotswap` (the `hotswap`
//!   backend: an MI300X that loads gfx950 code objects), both in the sid
//!   sysroot with ROCm 7.2.4.

#![forbid(unsafe_code)]

use mirage_core::model::{BackendSpec, NameOr};
use mirage_core::{Agent, Builtins, GpuLink, Profile, Topology};
use rocjitsu_config::{GpuConfig, Target};
use std::path::PathBuf;

/// rocjitsu's download and sysroot cache.
pub fn rocjitsu_cache() -> PathBuf {
    if let Some(c) = std::env::var_os(rocjitsu_config::env::CACHE).filter(|c| !c.is_empty()) {
        return c.into();
    }
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/root".into())
        .join(".cache/rocjitsu")
}

/// The sid sysroot with ROCm `major` (6 or 7) that `scripts/sysroot.sh` builds.
pub fn sid_sysroot(major: u32) -> PathBuf {
    rocjitsu_cache().join(format!("sysroot-sid-rocm{major}"))
}

struct Part {
    agent: &'static str,
    target: Target,
    description: &'static str,
    multi: (u32, GpuLink),
    sysroot: Option<u32>,
    runs: &'static str,
}

const PARTS: &[Part] = &[
    Part {
        agent: "MI210",
        target: Target::Gfx90a,
        description: "AMD Instinct MI210: gfx90a (CDNA2), 104 CUs, 64 GiB HBM2e",
        multi: (4, GpuLink::Pcie),
        sysroot: None,
        runs: "bookworm's ROCm 5.2.3 on the host",
    },
    Part {
        agent: "MI300X",
        target: Target::Gfx942,
        description: "AMD Instinct MI300X: gfx942 (CDNA3), 304 CUs in 8 XCDs, 192 GiB HBM3",
        multi: (8, GpuLink::Xgmi),
        sysroot: Some(6),
        runs: "ROCm 6.4.3 in the Debian sid sysroot",
    },
    Part {
        agent: "MI355X",
        target: Target::Gfx950,
        description: "AMD Instinct MI355X: gfx950 (CDNA4), 256 CUs in 8 XCDs, 288 GiB HBM3E",
        multi: (8, GpuLink::Xgmi),
        sysroot: Some(7),
        runs: "ROCm 7.2.4 in the Debian sid sysroot",
    },
];

pub fn builtins() -> Builtins {
    let mut b = Builtins::default();
    for p in PARTS {
        let lower = p.agent.to_ascii_lowercase();
        b.agents.push(Agent {
            name: p.agent.into(),
            description: p.description.into(),
            gpu: GpuConfig::builtin(p.target).gpus[0].clone(),
        });
        b.topologies.push(Topology {
            name: lower.clone(),
            description: format!("one node with one {}", p.agent),
            agent: NameOr::Name(p.agent.into()),
            nodes: 1,
            gpus_per_node: 1,
            gpu_link: p.multi.1,
        });
        let (n, link) = p.multi;
        b.topologies.push(Topology {
            name: format!("{lower}-x{n}"),
            description: format!("one node with {n} {}s linked by {}", p.agent, link.name()),
            agent: NameOr::Name(p.agent.into()),
            nodes: 1,
            gpus_per_node: n,
            gpu_link: link,
        });
        b.profiles.push(Profile {
            name: lower.clone(),
            description: format!("one emulated {} on rocjitsu, {}", p.agent, p.runs),
            backend: BackendSpec {
                kind: "rocjitsu".into(),
                options: Default::default(),
            },
            topology: NameOr::Name(lower),
            image: None,
            sysroot: p.sysroot.map(sid_sysroot),
            plugins: vec![],
            env: Default::default(),
            mounts: vec![],
        });
    }
    // Beyond the plain emulation: DBT guest mode and hotswap (both on an
    // emulated MI300X host; ROCm 7.2.4, whose HIP knows gfx950).
    let extra = |name: &str, description: &str, kind: &str, topology: &str| Profile {
        name: name.into(),
        description: description.into(),
        backend: BackendSpec {
            kind: kind.into(),
            options: Default::default(),
        },
        topology: NameOr::Name(topology.into()),
        image: None,
        sysroot: Some(sid_sysroot(7)),
        plugins: vec![],
        env: Default::default(),
        mounts: vec![],
    };
    b.profiles.push(extra(
        "mi355x-dbt",
        "an MI355X (gfx950) shown by rocjitsu's DBT guest mode, its kernels translated and run on an emulated MI300X (gfx942), ROCm 7.2.4 in the Debian sid sysroot",
        "rocjitsu-dbt",
        "mi355x",
    ));
    b.profiles.push(extra(
        "mi300x-hotswap",
        "an emulated MI300X (gfx942) that loads gfx950 code objects by translating them at load time (no guest identity), ROCm 7.2.4 in the Debian sid sysroot",
        "hotswap",
        "mi300x",
    ));
    b
}

#[cfg(test)]
mod tests {
    use mirage_core::Catalog;

    #[test]
    fn builtins_are_valid_and_resolve() {
        let b = super::builtins();
        for a in &b.agents {
            a.validate().unwrap();
        }
        for t in &b.topologies {
            t.validate().unwrap();
        }
        let c = Catalog::new(std::env::temp_dir().join("mirage-builtin-none"), b.clone());
        for p in &b.profiles {
            let r = c.resolve(p).unwrap();
            assert_eq!(r.topology().gpus_per_node, 1);
        }
        let r = c.resolve_name("mi300x").unwrap();
        assert_eq!(r.agent().gpu.gfx_target.name(), "gfx942");
        assert!(
            r.profile
                .sysroot
                .as_ref()
                .unwrap()
                .ends_with("sysroot-sid-rocm6")
        );
        assert!(c.resolve_name("mi210").unwrap().profile.sysroot.is_none());
        assert_eq!(
            c.get::<mirage_core::Topology>("mi300x-x8")
                .unwrap()
                .item
                .gpus_per_node,
            8
        );
    }
}
