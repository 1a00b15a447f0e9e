//! The sysfs files the amdgpu/KFD driver publishes, generated from the GPU
//! configuration into a private directory and served by path redirection
//! (the host's real `/sys` is never touched).
//!
//! Layout and property names follow the kernel's `kfd_topology.c`: node 0 is
//! the CPU, nodes 1.. the GPUs in config order, each with `gpu_id`, `name`,
//! `properties`, `mem_banks/K/properties`, `caches/K/properties` and
//! `io_links/K/properties`. Besides the topology: `/sys/module/amdgpu`
//! (`initstate`), `/sys/dev/char/226:<minor>` for each render node (its
//! `device` the PCI device, with amdgpu's `ip_discovery` tree) and
//! `/sys/class/drm/renderD<minor>` (`dev`, and `device` linking to it).
//!
//! The tree is written once per distinct content into
//! `$ROCJITSU_RUNTIME_DIR` (default `/tmp/rocjitsu-<uid>`) under a name that
//! is a hash of the content, atomically (a temporary directory renamed into
//! place), so concurrent processes share it and never see half a tree. The
//! runtime directory must be the caller's alone ([`rocjitsu_rpc::dir`]): a
//! directory of another user, one others can write to, or a symbolic link
//! is refused with the path and the fix.

use crate::gpu_id_of;
use rocjitsu_config::{GpuConfig, GpuSpec};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The host paths this driver answers for, and where each is served from
/// inside the generated tree.
const REDIRECTS: &[(&str, &str)] = &[
    ("/sys/devices/virtual/kfd/kfd", "kfd"),
    ("/sys/class/kfd/kfd", "kfd"),
    ("/sys/module/amdgpu", "module/amdgpu"),
    ("/sys/dev/char/226:", "dev/char/226:"),
    ("/sys/class/drm/renderD", "class/drm/renderD"),
    // libdrm names GPUs from this table; ours adds the configured names.
    ("/usr/share/libdrm/amdgpu.ids", "amdgpu.ids"),
];

/// True when `path` is one this driver serves (cheap; no allocation).
pub fn is_redirected(path: &[u8]) -> bool {
    REDIRECTS
        .iter()
        .any(|(from, _)| prefix_match(path, from.as_bytes()))
}

fn prefix_match(path: &[u8], prefix: &[u8]) -> bool {
    if !path.starts_with(prefix) {
        return false;
    }
    // "/sys/dev/char/226:" and "/sys/class/drm/renderD" end mid-name.
    prefix.ends_with(b":")
        || prefix.ends_with(b"D")
        || path.len() == prefix.len()
        || path[prefix.len()] == b'/'
}

/// A generated tree.
#[derive(Debug, Clone)]
pub struct SysfsTree {
    root: PathBuf,
}

impl SysfsTree {
    /// Writes (or reuses) the tree for `config` under `runtime_dir`.
    pub fn create(config: &GpuConfig, runtime_dir: &Path) -> std::io::Result<SysfsTree> {
        Self::write(render(config), runtime_dir)
    }

    /// A real machine's KFD topology (the files under `sys_root`'s
    /// `class/kfd/kfd/topology`, copied) with GPU `extra` appended as the
    /// last node under `gpu_id` `extra_id`. The real GPUs' render-node
    /// entries and `module/amdgpu` link back to `sys_root`.
    pub fn create_over_real(
        sys_root: &Path,
        extra: &GpuSpec,
        extra_id: u32,
        runtime_dir: &Path,
    ) -> std::io::Result<SysfsTree> {
        let real = sys_root.join("class/kfd/kfd/topology");
        let mut files = BTreeMap::new();
        copy_dir(&real, &real, &mut files)?;
        let mut files: BTreeMap<String, Entry> = files
            .into_iter()
            .map(|(k, v)| (format!("kfd/topology/{k}"), v))
            .collect();
        let nodes = (0..)
            .take_while(|n| files.contains_key(&format!("kfd/topology/nodes/{n}/gpu_id")))
            .count();
        if nodes == 0 {
            return Err(std::io::Error::other(format!(
                "{} has no KFD nodes",
                real.display()
            )));
        }
        // The extra GPU rendered as node `nodes` (so its SIMD ids follow the
        // real GPUs'), then renumbered.
        let cfg = GpuConfig {
            schema: None,
            version: rocjitsu_config::CONFIG_VERSION,
            gpus: vec![extra.clone(); nodes],
            dbt_guest: None,
            plugins: Vec::new(),
        };
        let ours = render(&cfg);
        let from = format!("kfd/topology/nodes/{nodes}/");
        let minor = extra.kfd.drm_render_minor;
        for (k, v) in ours {
            if let Some(rest) = k.strip_prefix(&from) {
                // The copies it was rendered with are not the real GPUs:
                // no peer links to them.
                if rest.starts_with("p2p_links/") {
                    continue;
                }
                let v = match (rest, v) {
                    ("properties", Entry::File(t)) => Entry::File(
                        t.lines()
                            .map(|l| {
                                if l.starts_with("p2p_links_count ") {
                                    "p2p_links_count 0\n".to_string()
                                } else {
                                    format!("{l}\n")
                                }
                            })
                            .collect(),
                    ),
                    (_, v) => v,
                };
                files.insert(format!("kfd/topology/nodes/{nodes}/{rest}"), v);
            } else if k.starts_with(&format!("dev/char/226:{minor}/"))
                || k.starts_with(&format!("class/drm/renderD{minor}/"))
            {
                files.insert(k, v);
            }
        }
        files.insert(
            format!("kfd/topology/nodes/{nodes}/gpu_id"),
            Entry::File(format!("{extra_id}\n")),
        );
        files.insert(
            format!("kfd/topology/nodes/{nodes}/io_links/0/properties"),
            Entry::File(io_link(nodes as u64, 0)),
        );
        // The CPU links to it.
        let cpu = "kfd/topology/nodes/0/properties".to_string();
        let cpu_text = match files.get(&cpu) {
            Some(Entry::File(t)) => Some(t.clone()),
            _ => None,
        };
        if let Some(text) = cpu_text {
            let mut links = 0;
            let mut out = String::new();
            for l in text.lines() {
                match l.strip_prefix("io_links_count ") {
                    Some(n) => {
                        links = n.trim().parse().unwrap_or(0);
                        let _ = writeln!(out, "io_links_count {}", links + 1);
                    }
                    None => {
                        out.push_str(l);
                        out.push('\n');
                    }
                }
            }
            files.insert(cpu, Entry::File(out));
            files.insert(
                format!("kfd/topology/nodes/0/io_links/{links}/properties"),
                Entry::File(io_link(0, nodes as u64)),
            );
        }
        // The real GPUs' render nodes, as the kernel shows them.
        for n in 1..nodes {
            let props = match files.get(&format!("kfd/topology/nodes/{n}/properties")) {
                Some(Entry::File(t)) => t.clone(),
                _ => continue,
            };
            let Some(m) = props
                .lines()
                .find_map(|l| l.strip_prefix("drm_render_minor "))
                .and_then(|v| v.trim().parse::<u32>().ok())
                .filter(|&m| m != 0)
            else {
                continue;
            };
            for (ours, theirs) in [
                (format!("dev/char/226:{m}"), format!("dev/char/226:{m}")),
                (
                    format!("class/drm/renderD{m}"),
                    format!("class/drm/renderD{m}"),
                ),
            ] {
                files.insert(
                    ours,
                    Entry::Link(sys_root.join(theirs).display().to_string()),
                );
            }
        }
        let module = sys_root.join("module/amdgpu");
        if module.exists() {
            files.insert(
                "module/amdgpu".into(),
                Entry::Link(module.display().to_string()),
            );
        } else {
            files.insert(
                "module/amdgpu/initstate".into(),
                Entry::File("live\n".into()),
            );
        }
        let named = GpuConfig {
            schema: None,
            version: rocjitsu_config::CONFIG_VERSION,
            gpus: vec![extra.clone()],
            dbt_guest: None,
            plugins: Vec::new(),
        };
        files.insert("amdgpu.ids".into(), Entry::File(amdgpu_ids(&named)));
        Self::write(files, runtime_dir)
    }

    fn write(files: BTreeMap<String, Entry>, runtime_dir: &Path) -> std::io::Result<SysfsTree> {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for (k, v) in &files {
            for b in k.bytes().chain([0]).chain(v.content().bytes()).chain([0]) {
                h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
            }
        }
        // The runtime directory is checked to be the caller's alone and
        // everything directly in it is reached through its descriptor
        // without following links; inside the temporary directory, which
        // this process just created there, nobody else can write.
        let dir =
            rocjitsu_rpc::dir::PrivateDir::ensure(runtime_dir, rocjitsu_config::env::RUNTIME_DIR)?;
        let name = format!("sysfs-{h:016x}");
        let root = runtime_dir.join(&name);
        if dir.exists(&name) && dir.existing_subdir(&name)?.exists(".complete") {
            return Ok(SysfsTree { root });
        }
        let tmp_name = format!(
            ".sysfs-{h:016x}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        );
        dir.create_dir_new(&tmp_name, 0o755)?;
        let tmp = runtime_dir.join(&tmp_name);
        for (rel, entry) in &files {
            let p = tmp.join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            match entry {
                Entry::File(text) => std::fs::write(&p, text)?,
                Entry::Dir => std::fs::create_dir_all(&p)?,
                Entry::Link(target) => std::os::unix::fs::symlink(target, &p)?,
            }
        }
        std::fs::write(tmp.join(".complete"), "")?;
        if dir.rename(&tmp_name, &name).is_err() {
            // Another process won the race; its tree has the same content.
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Ok(SysfsTree { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where a redirected host path lives in the tree, or `None` when the
    /// path is not one of ours.
    pub fn redirect(&self, path: &str) -> Option<PathBuf> {
        for (from, to) in REDIRECTS {
            if prefix_match(path.as_bytes(), from.as_bytes()) {
                let rest = &path[from.len()..];
                let mut p = self.root.join(to).into_os_string();
                p.push(rest);
                return Some(PathBuf::from(p));
            }
        }
        None
    }
}

/// Every readable file under `dir`, by path relative to `base` (sysfs
/// attributes that cannot be read are left out, as are symbolic links).
fn copy_dir(base: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let p = e.path();
        let rel = p
            .strip_prefix(base)
            .map(|r| r.display().to_string())
            .unwrap_or_default();
        let ty = e.file_type()?;
        if ty.is_dir() {
            out.insert(rel, Entry::Dir);
            copy_dir(base, &p, out)?;
        } else if ty.is_file()
            && let Ok(text) = std::fs::read_to_string(&p)
        {
            out.insert(rel, Entry::File(text));
        }
    }
    Ok(())
}

enum Entry {
    File(String),
    Dir,
    Link(String),
}

impl Entry {
    fn content(&self) -> &str {
        match self {
            Entry::File(s) | Entry::Link(s) => s,
            Entry::Dir => "",
        }
    }
}

fn props(list: &[(&str, u64)]) -> String {
    let mut s = String::new();
    for (k, v) in list {
        let _ = writeln!(s, "{k} {v}");
    }
    s
}

fn host_cpu_count() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
}

fn host_mem_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(16 << 30, |kb| kb * 1024)
}

/// The first SIMD id of GPU node `i` (KFD numbers GPU SIMDs from 0x80001000).
fn simd_id_base(i: usize) -> u64 {
    0x8000_1000 + i as u64 * 0x1000
}

/// Every file, directory and link of the tree, by relative path.
fn render(config: &GpuConfig) -> BTreeMap<String, Entry> {
    let mut f = BTreeMap::new();
    let topo = "kfd/topology";
    f.insert(format!("{topo}/generation_id"), Entry::File("1\n".into()));
    f.insert(
        format!("{topo}/system_properties"),
        Entry::File("platform_oem 0\nplatform_id 0\nplatform_rev 0\n".into()),
    );
    let gpus = &config.gpus;

    // Node 0: the host CPU.
    let n0 = format!("{topo}/nodes/0");
    f.insert(format!("{n0}/gpu_id"), Entry::File("0\n".into()));
    f.insert(format!("{n0}/name"), Entry::File("\n".into()));
    let cpu_props: Vec<(&str, u64)> = vec![
        ("cpu_cores_count", host_cpu_count()),
        ("simd_count", 0),
        ("mem_banks_count", 1),
        ("caches_count", 0),
        ("io_links_count", gpus.len() as u64),
        ("p2p_links_count", 0),
        ("cpu_core_id_base", 0),
        ("simd_id_base", 0),
        ("max_waves_per_simd", 0),
        ("lds_size_in_kb", 0),
        ("gds_size_in_kb", 0),
        ("num_gws", 0),
        ("wave_front_size", 0),
        ("array_count", 0),
        ("simd_arrays_per_engine", 0),
        ("cu_per_simd_array", 0),
        ("simd_per_cu", 0),
        ("max_slots_scratch_cu", 0),
        ("gfx_target_version", 0),
        ("vendor_id", 0),
        ("device_id", 0),
        ("location_id", 0),
        ("domain", 0),
        ("drm_render_minor", 0),
        ("hive_id", 0),
        ("num_sdma_engines", 0),
        ("num_sdma_xgmi_engines", 0),
        ("num_sdma_queues_per_engine", 0),
        ("num_cp_queues", 0),
        ("max_engine_clk_ccompute", 3000),
    ];
    f.insert(format!("{n0}/properties"), Entry::File(props(&cpu_props)));
    f.insert(
        format!("{n0}/mem_banks/0/properties"),
        Entry::File(props(&[
            ("heap_type", 0),
            ("size_in_bytes", host_mem_bytes()),
            ("flags", 0),
            ("width", 64),
            ("mem_clk_max", 0),
        ])),
    );
    f.insert(format!("{n0}/caches"), Entry::Dir);
    for (i, _) in gpus.iter().enumerate() {
        f.insert(
            format!("{n0}/io_links/{i}/properties"),
            Entry::File(io_link(0, i as u64 + 1)),
        );
    }
    f.insert(format!("{n0}/p2p_links"), Entry::Dir);

    for (i, g) in gpus.iter().enumerate() {
        let node = i + 1;
        let dir = format!("{topo}/nodes/{node}");
        f.insert(
            format!("{dir}/gpu_id"),
            Entry::File(format!("{}\n", gpu_id_of(config, i))),
        );
        f.insert(
            format!("{dir}/name"),
            Entry::File(format!("{}\n", g.gfx_target.name())),
        );
        let caches = caches(g, i);
        // GPUs of one XGMI hive (the same nonzero hive_id) link directly;
        // the others reach each other over PCIe through the CPU, which KFD
        // lists as peer-to-peer links (`kfd_add_peer_prop`).
        let peers: Vec<usize> = (0..gpus.len())
            .filter(|&j| j != i && g.kfd.hive_id != 0 && gpus[j].kfd.hive_id == g.kfd.hive_id)
            .collect();
        let pcie_peers: Vec<usize> = (0..gpus.len())
            .filter(|&j| j != i && !peers.contains(&j))
            .collect();
        let mut p: Vec<(&str, u64)> = vec![
            ("cpu_cores_count", 0),
            ("simd_count", g.simd_count().into()),
            ("mem_banks_count", 1),
            ("caches_count", caches.len() as u64),
            ("io_links_count", 1 + peers.len() as u64),
            ("p2p_links_count", pcie_peers.len() as u64),
            ("cpu_core_id_base", 0),
            ("simd_id_base", simd_id_base(i)),
        ];
        p.extend(
            g.kfd_properties()
                .into_iter()
                .filter(|(k, _)| *k != "simd_count" && *k != "mem_banks_count"),
        );
        f.insert(format!("{dir}/properties"), Entry::File(props(&p)));
        f.insert(
            format!("{dir}/mem_banks/0/properties"),
            Entry::File(props(&[
                ("heap_type", 1),
                ("size_in_bytes", g.memory.size_bytes),
                ("flags", 0),
                ("width", g.memory.bus_width_bits.into()),
                ("mem_clk_max", g.memory.clock_mhz.into()),
            ])),
        );
        for (k, c) in caches.into_iter().enumerate() {
            f.insert(format!("{dir}/caches/{k}/properties"), Entry::File(c));
        }
        f.insert(
            format!("{dir}/io_links/0/properties"),
            Entry::File(io_link(node as u64, 0)),
        );
        for (k, &j) in peers.iter().enumerate() {
            f.insert(
                format!("{dir}/io_links/{}/properties", k + 1),
                Entry::File(xgmi_link(node as u64, j as u64 + 1)),
            );
        }
        f.insert(format!("{dir}/p2p_links"), Entry::Dir);
        for (k, &j) in pcie_peers.iter().enumerate() {
            f.insert(
                format!("{dir}/p2p_links/{k}/properties"),
                Entry::File(pcie_peer_link(node as u64, j as u64 + 1)),
            );
        }

        // The render node's character device in /sys/dev/char.
        let minor = g.kfd.drm_render_minor;
        let chr = format!("dev/char/226:{minor}");
        f.insert(
            format!("{chr}/uevent"),
            Entry::File(format!(
                "MAJOR=226\nMINOR={minor}\nDEVNAME=dri/renderD{minor}\nDEVTYPE=drm_minor\n"
            )),
        );
        f.insert(format!("{chr}/dev"), Entry::File(format!("226:{minor}\n")));
        let dev = format!("{chr}/device");
        f.insert(format!("{dev}/drm/renderD{minor}"), Entry::Dir);
        // The primary node's name: libdrm tells devices apart by it
        // (`drmGetPrimaryDeviceNameFromFd`); without one, every GPU would
        // count as the first and get its marketing name.
        f.insert(
            format!("{dev}/drm/card{}", minor.saturating_sub(128)),
            Entry::Dir,
        );
        // libdrm takes the bus type from the name this link points to.
        f.insert(
            format!("{dev}/subsystem"),
            Entry::Link("../../../../bus/pci".into()),
        );
        f.insert(
            format!("{dev}/vendor"),
            Entry::File(format!("0x{:04x}\n", g.pci.vendor_id)),
        );
        f.insert(
            format!("{dev}/device"),
            Entry::File(format!("0x{:04x}\n", g.pci.device_id)),
        );
        f.insert(
            format!("{dev}/revision"),
            Entry::File(format!("0x{:02x}\n", g.pci.revision_id)),
        );
        f.insert(
            format!("{dev}/subsystem_vendor"),
            Entry::File(format!("0x{:04x}\n", g.pci.vendor_id)),
        );
        f.insert(
            format!("{dev}/subsystem_device"),
            Entry::File("0x0c34\n".into()),
        );
        f.insert(
            format!("{dev}/uevent"),
            Entry::File(format!(
                "DRIVER=amdgpu\nPCI_ID={:04X}:{:04X}\nPCI_SLOT_NAME={:04x}:{:02x}:{:02x}.{}\n",
                g.pci.vendor_id,
                g.pci.device_id,
                g.pci.domain,
                g.pci.location_id >> 8,
                (g.pci.location_id >> 3) & 0x1f,
                g.pci.location_id & 7
            )),
        );
        ip_discovery(&mut f, g, &format!("{dev}/ip_discovery"));
        device_attributes(&mut f, g, &dev);
        f.insert(
            format!("class/drm/renderD{minor}/dev"),
            Entry::File(format!("226:{minor}\n")),
        );
        // The render node's device is the PCI device, as in sysfs (where
        // both names lead to the same directory).
        f.insert(
            format!("class/drm/renderD{minor}/device"),
            Entry::Link(format!("../../../{dev}")),
        );
    }
    f.insert("amdgpu.ids".into(), Entry::File(amdgpu_ids(config)));
    f.insert(
        "module/amdgpu/initstate".into(),
        Entry::File("live\n".into()),
    );
    // amdgpu's `pcie_p2p` parameter (default on): peers reach each
    // other's VRAM over the bus. Debian's RCCL test runner checks it.
    f.insert(
        "module/amdgpu/parameters/pcie_p2p".into(),
        Entry::File("Y\n".into()),
    );
    f
}

/// The amdgpu attributes of the PCI device that tools such as rocm_smi
/// read, each in the kernel's format, from the configuration:
/// - `fw_version/*_fw_version` (`0x%08x`, amdgpu_ucode.c), of the
///   microcode the configuration's `kfd` block versions (KFD publishes the
///   same as `fw_version` and `sdma_fw_version`): `mec`, `sdma` and, with
///   a second SDMA instance, `sdma2`, as `AMDGPU_INFO_FW_VERSION` answers
///   ([`crate::drm`]). amdgpu hides an entry whose version is 0
///   (`amdgpu_ucode_sys_visible`), and so does this; the microcode not
///   modelled (MEC2 included) reads 0, so it has no entry.
/// - `unique_id` (`%016llx`, amdgpu_pm.c; every CDNA part has one) when
///   the configuration gives one.
/// - `mem_info_{vram,vis_vram,gtt}_total` (`%llu`, amdgpu_vram_mgr.c and
///   amdgpu_gtt_mgr.c): all VRAM is CPU-visible (as `AMDGPU_INFO_VRAM_GTT`
///   says), the GTT size is [`crate::drm`]'s.
/// - `current_compute_partition` / `current_memory_partition`
///   (amdgpu_gfx.c, amdgpu_gmc.c; GPUs of several XCDs): one KFD node per
///   GPU is SPX mode with one NUMA partition.
fn device_attributes(f: &mut BTreeMap<String, Entry>, g: &GpuSpec, dev: &str) {
    let second_sdma = g.queues.sdma_engines + g.queues.sdma_xgmi_engines > 1;
    for (name, version, present) in [
        ("mec", g.kfd.fw_version, true),
        ("sdma", g.kfd.sdma_fw_version, true),
        ("sdma2", g.kfd.sdma_fw_version, second_sdma),
    ] {
        if present && version != 0 {
            f.insert(
                format!("{dev}/fw_version/{name}_fw_version"),
                Entry::File(format!("0x{version:08x}\n")),
            );
        }
    }
    if g.kfd.unique_id != 0 {
        f.insert(
            format!("{dev}/unique_id"),
            Entry::File(format!("{:016x}\n", g.kfd.unique_id)),
        );
    }
    for (name, bytes) in [
        ("mem_info_vram_total", g.memory.size_bytes),
        ("mem_info_vis_vram_total", g.memory.size_bytes),
        ("mem_info_gtt_total", crate::drm::GTT_BYTES),
    ] {
        f.insert(format!("{dev}/{name}"), Entry::File(format!("{bytes}\n")));
    }
    if g.soc.xcds > 1 {
        f.insert(
            format!("{dev}/current_compute_partition"),
            Entry::File("SPX\n".into()),
        );
        f.insert(
            format!("{dev}/current_memory_partition"),
            Entry::File("NPS1\n".into()),
        );
    }
}

/// amdgpu's IP discovery tree (`amdgpu_discovery_sysfs_init` in
/// amdgpu_discovery.c): `die/<die>/` holds `num_ips`, a directory per
/// `hw_id` number and a link named after it ("GC" -> "11"), and in that a
/// directory per instance number with the `ip_hw_instance` attributes
/// `hw_id`, `num_instance`, `major`, `minor`, `revision` and `harvest`
/// (`0x%01X`). Everything is on die 0 (tinygrad reads `die/0`). The
/// register apertures (`num_base_addresses`, `base_addr`) are left out: the
/// emulated GPU has no MMIO registers to point at.
fn ip_discovery(f: &mut BTreeMap<String, Entry>, g: &GpuSpec, dir: &str) {
    let die = format!("{dir}/die/0");
    let blocks = rocjitsu_config::ip::ip_blocks(g);
    let num_ips: u32 = blocks.iter().map(|b| b.instances).sum();
    f.insert(
        format!("{die}/num_ips"),
        Entry::File(format!("{num_ips}\n")),
    );
    for b in &blocks {
        let id = b.hw_id;
        f.insert(format!("{die}/{}", b.name), Entry::Link(id.to_string()));
        let (major, minor, revision) = b.version;
        for i in 0..b.instances {
            let inst = format!("{die}/{id}/{i}");
            for (name, value) in [
                ("hw_id", id.to_string()),
                ("num_instance", i.to_string()),
                ("major", major.to_string()),
                ("minor", minor.to_string()),
                ("revision", revision.to_string()),
                // Nothing is harvested.
                ("harvest", "0x0".to_string()),
            ] {
                f.insert(format!("{inst}/{name}"), Entry::File(format!("{value}\n")));
            }
        }
    }
}

/// libdrm's marketing-name table: the host's, with an entry for each
/// configured GPU placed first so that the configuration's name wins.
fn amdgpu_ids(config: &GpuConfig) -> String {
    let host = std::fs::read_to_string("/usr/share/libdrm/amdgpu.ids").unwrap_or_default();
    let mut out = String::new();
    let mut lines = host.lines().peekable();
    // Comments, then the format version line, come first.
    while let Some(l) = lines.peek() {
        if l.starts_with('#') || l.trim().is_empty() {
            out.push_str(l);
            out.push('\n');
            lines.next();
        } else {
            break;
        }
    }
    match lines.next() {
        Some(version) => {
            out.push_str(version);
            out.push('\n');
        }
        None => out.push_str("1.0.0\n"),
    }
    for g in &config.gpus {
        let _ = writeln!(
            out,
            "{:04X},\t{:02X},\t{}",
            g.pci.device_id, g.pci.revision_id, g.marketing_name
        );
    }
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// A link of an XGMI hive (`HSA_IOLINKTYPE_XGMI` = 11, KFD's XGMI weight
/// 15): the GPUs reach each other's memory directly.
fn xgmi_link(from: u64, to: u64) -> String {
    props(&[
        ("type", 11),
        ("version_major", 0),
        ("version_minor", 0),
        ("node_from", from),
        ("node_to", to),
        ("weight", 15),
        ("min_latency", 0),
        ("max_latency", 0),
        ("min_bandwidth", 64_000),
        ("max_bandwidth", 64_000),
        ("recommended_transfer_size", 0),
        ("flags", 1),
    ])
}

/// A peer-to-peer link between two GPUs that are not in one hive: KFD's
/// copy of the GPU's PCIe link to the CPU, with the two GPUs' weights
/// added (`kfd_add_peer_prop`, large-BAR GPUs under amdgpu's `pcie_p2p`).
fn pcie_peer_link(from: u64, to: u64) -> String {
    props(&[
        ("type", 2),
        ("version_major", 0),
        ("version_minor", 0),
        ("node_from", from),
        ("node_to", to),
        ("weight", 40),
        ("min_latency", 0),
        ("max_latency", 0),
        ("min_bandwidth", 0),
        ("max_bandwidth", 0),
        ("recommended_transfer_size", 0),
        ("flags", 1),
    ])
}

fn io_link(from: u64, to: u64) -> String {
    props(&[
        ("type", 2),
        ("version_major", 0),
        ("version_minor", 0),
        ("node_from", from),
        ("node_to", to),
        ("weight", 20),
        ("min_latency", 0),
        ("max_latency", 0),
        ("min_bandwidth", 0),
        ("max_bandwidth", 0),
        ("recommended_transfer_size", 0),
        ("flags", 1),
    ])
}

/// `HSA_CACHE_TYPE_*` bits.
const CACHE_DATA: u64 = 1;
const CACHE_INSTRUCTION: u64 = 2;
const CACHE_HSACU: u64 = 8;

/// The GPU's caches as KFD lists them: one entry per instance, each naming
/// the CUs it serves in `sibling_map` (one flag per CU of the node).
fn caches(g: &GpuSpec, gpu_index: usize) -> Vec<String> {
    let cus = u64::from(g.soc.total_cus);
    let base = simd_id_base(gpu_index);
    let mut out = Vec::new();
    let mut add = |level: u64, size: u64, line: u32, assoc: u32, kind: u64, first: u64, n: u64| {
        let shown = cus.min(256);
        let sib: Vec<&str> = (0..shown)
            .map(|c| {
                if c >= first && c < first + n {
                    "1"
                } else {
                    "0"
                }
            })
            .collect();
        let mut s = props(&[
            ("processor_id_low", base + first * u64::from(g.cu.simds)),
            ("level", level),
            ("size", size / 1024),
            ("cache_line_size", line.into()),
            ("cache_lines_per_tag", 1),
            ("association", assoc.into()),
            ("latency", 1),
            ("type", kind | CACHE_HSACU),
        ]);
        let _ = writeln!(s, "sibling_map {}", sib.join(","));
        out.push(s);
    };
    let c = &g.caches;
    let per = |n: u32| u64::from(n.max(1));
    let mut cu = 0;
    while cu < cus {
        add(
            1,
            c.l1_vector.size_bytes.into(),
            c.l1_vector.line_bytes,
            c.l1_vector.associativity,
            CACHE_DATA,
            cu,
            per(c.l1_vector.cus_per_instance),
        );
        cu += per(c.l1_vector.cus_per_instance);
    }
    let mut cu = 0;
    while cu < cus {
        add(
            1,
            c.l1_scalar.size_bytes.into(),
            c.l1_scalar.line_bytes,
            c.l1_scalar.associativity,
            CACHE_DATA,
            cu,
            per(c.l1_scalar.cus_per_instance),
        );
        add(
            1,
            c.l1_instruction.size_bytes.into(),
            c.l1_instruction.line_bytes,
            c.l1_instruction.associativity,
            CACHE_INSTRUCTION,
            cu,
            per(c.l1_instruction.cus_per_instance),
        );
        cu += per(c.l1_scalar.cus_per_instance);
    }
    if let Some(gl1) = &c.gl1 {
        let mut cu = 0;
        while cu < cus {
            add(
                1,
                gl1.size_bytes.into(),
                gl1.line_bytes,
                gl1.associativity,
                CACHE_DATA,
                cu,
                per(gl1.cus_per_instance),
            );
            cu += per(gl1.cus_per_instance);
        }
    }
    let per_xcd = cus / u64::from(g.soc.xcds.max(1));
    for x in 0..u64::from(g.soc.xcds) {
        add(
            2,
            c.l2.size_bytes_per_xcd.into(),
            c.l2.line_bytes,
            c.l2.associativity,
            CACHE_DATA,
            x * per_xcd,
            per_xcd,
        );
    }
    if let Some(m) = &c.mall {
        add(3, m.size_bytes, m.line_bytes, 16, CACHE_DATA, 0, cus);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocjitsu_config::Target;

    #[test]
    fn tree_has_the_files_the_thunk_reads() {
        let dir = std::env::temp_dir().join(format!("rocjitsu-sysfs-test-{}", std::process::id()));
        let cfg = GpuConfig::builtin(Target::Gfx90a);
        let t = SysfsTree::create(&cfg, &dir).unwrap();
        let read = |p: &str| std::fs::read_to_string(t.redirect(p).unwrap()).unwrap();
        assert_eq!(
            read("/sys/devices/virtual/kfd/kfd/topology/generation_id"),
            "1\n"
        );
        let props = read("/sys/class/kfd/kfd/topology/nodes/1/properties");
        assert!(props.contains("gfx_target_version 90010\n"), "{props}");
        assert!(props.contains("drm_render_minor 128\n"));
        assert!(props.contains("simd_count 416\n"), "{props}");
        let n = props
            .lines()
            .find_map(|l| l.strip_prefix("caches_count "))
            .unwrap();
        let count: usize = n.parse().unwrap();
        // Every GPU cache entry carries the HSACU bit (ROCr asserts otherwise).
        for k in 0..count {
            let c = read(&format!(
                "/sys/class/kfd/kfd/topology/nodes/1/caches/{k}/properties"
            ));
            let ty: u64 = c
                .lines()
                .find_map(|l| l.strip_prefix("type "))
                .unwrap()
                .parse()
                .unwrap();
            assert_ne!(ty & CACHE_HSACU, 0);
        }
        // 104 L1 vector + 52 scalar + 52 instruction + 1 L2.
        assert_eq!(count, 209);
        assert!(
            t.redirect("/sys/dev/char/226:128/device/drm")
                .unwrap()
                .is_dir()
        );
        assert_eq!(read("/sys/module/amdgpu/initstate"), "live\n");
        let ids = read("/usr/share/libdrm/amdgpu.ids");
        assert!(ids.contains("740F,\t02,\tAMD Instinct MI210\n"), "{ids}");
        // A second create reuses the tree.
        let again = SysfsTree::create(&cfg, &dir).unwrap();
        assert_eq!(again.root(), t.root());
        assert!(t.redirect("/sys/devices/system/cpu").is_none());
        assert!(!is_redirected(b"/sys/class/kfdx"));
        assert!(is_redirected(b"/sys/class/kfd/kfd/topology"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The PCI device's amdgpu attributes rocm_smi reads, in amdgpu's
    /// formats: the MI300X's MEC and SDMA firmware (`0x%08x`, hidden when
    /// 0, as its SDMA firmware is in the shipped file), VRAM and GTT sizes,
    /// SPX/NPS1 partitions on a GPU of several XCDs; the MI210 (one XCD,
    /// no firmware versions) has neither partitions nor firmware entries.
    #[test]
    fn device_attributes_in_amdgpu_formats() {
        let dir = std::env::temp_dir().join(format!("rocjitsu-sysfs-attrs-{}", std::process::id()));
        let cfg = GpuConfig::builtin(Target::Gfx942);
        let g = &cfg.gpus[0];
        let t = SysfsTree::create(&cfg, &dir).unwrap();
        let path = |rest: &str| {
            t.redirect(&format!("/sys/class/drm/renderD128/device/{rest}"))
                .unwrap()
        };
        let read = |rest: &str| {
            std::fs::read_to_string(path(rest)).unwrap_or_else(|e| panic!("{rest}: {e}"))
        };
        assert_eq!(g.kfd.fw_version, 177);
        assert_eq!(read("fw_version/mec_fw_version"), "0x000000b1\n");
        assert!(!path("fw_version/sdma_fw_version").exists());
        assert!(!path("fw_version/mec2_fw_version").exists());
        assert_eq!(
            read("mem_info_vram_total"),
            format!("{}\n", g.memory.size_bytes)
        );
        assert_eq!(
            read("mem_info_vis_vram_total"),
            format!("{}\n", g.memory.size_bytes)
        );
        assert_eq!(read("mem_info_gtt_total"), "17179869184\n");
        assert_eq!(read("current_compute_partition"), "SPX\n");
        assert_eq!(read("current_memory_partition"), "NPS1\n");
        assert_eq!(
            std::fs::read_to_string(
                t.redirect("/sys/module/amdgpu/parameters/pcie_p2p")
                    .unwrap()
            )
            .unwrap(),
            "Y\n"
        );

        let mut cfg = GpuConfig::builtin(Target::Gfx90a);
        cfg.gpus[0].kfd.sdma_fw_version = 0x1234;
        cfg.gpus[0].kfd.unique_id = 0xabc;
        let t = SysfsTree::create(&cfg, &dir).unwrap();
        let path = |rest: &str| {
            t.redirect(&format!("/sys/class/drm/renderD128/device/{rest}"))
                .unwrap()
        };
        assert!(!path("fw_version/mec_fw_version").exists());
        assert_eq!(
            std::fs::read_to_string(path("fw_version/sdma2_fw_version")).unwrap(),
            "0x00001234\n"
        );
        assert_eq!(
            std::fs::read_to_string(path("unique_id")).unwrap(),
            "0000000000000abc\n"
        );
        assert!(!path("current_compute_partition").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// One IP block as a test expects it: name, hw_id, version, instances.
    type Ip = (&'static str, u16, (u8, u8, u8), u32);

    fn check_ip_discovery(target: Target, want: &[Ip], absent: &[u16]) {
        let dir = std::env::temp_dir().join(format!(
            "rocjitsu-sysfs-ipd-{}-{}",
            target.name(),
            std::process::id()
        ));
        let cfg = GpuConfig::builtin(target);
        let t = SysfsTree::create(&cfg, &dir).unwrap();
        let base = "/sys/class/drm/renderD128/device/ip_discovery/die/0";
        let path = |rest: &str| t.redirect(&format!("{base}/{rest}")).unwrap();
        let read = |rest: &str| {
            std::fs::read_to_string(path(rest)).unwrap_or_else(|e| panic!("{target}: {rest}: {e}"))
        };
        // What tinygrad lists: the numeric entries of die/0.
        let mut ids: Vec<u16> = std::fs::read_dir(path(""))
            .unwrap()
            .filter_map(|e| e.unwrap().file_name().to_str()?.parse().ok())
            .collect();
        ids.sort_unstable();
        let mut want_ids: Vec<u16> = want.iter().map(|w| w.1).collect();
        want_ids.sort_unstable();
        assert_eq!(ids, want_ids, "{target}");
        for &(name, id, (major, minor, rev), instances) in want {
            for i in 0..instances {
                // By number and through the name link alike.
                for block in [id.to_string(), name.to_string()] {
                    let at = |f: &str| read(&format!("{block}/{i}/{f}"));
                    assert_eq!(at("hw_id"), format!("{id}\n"), "{target} {name}");
                    assert_eq!(at("num_instance"), format!("{i}\n"));
                    assert_eq!(at("major"), format!("{major}\n"), "{target} {name}");
                    assert_eq!(at("minor"), format!("{minor}\n"), "{target} {name}");
                    assert_eq!(at("revision"), format!("{rev}\n"), "{target} {name}");
                    assert_eq!(at("harvest"), "0x0\n");
                }
            }
            assert!(
                !path(&format!("{id}/{instances}")).exists(),
                "{target} {name}"
            );
        }
        for id in absent {
            assert!(!path(&id.to_string()).exists(), "{target}: hw_id {id}");
        }
        let total: u32 = want.iter().map(|w| w.3).sum();
        let listed: u32 = read("num_ips").trim().parse().unwrap();
        assert_eq!(listed, total, "{target}");
        // The render node's device is the PCI device.
        let pci = t
            .redirect("/sys/class/drm/renderD128/device/vendor")
            .unwrap();
        assert_eq!(std::fs::read_to_string(pci).unwrap(), "0x1002\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// No video engines are listed (UVD/VCN 12, VCE 32).
    const VIDEO: [u16; 2] = [12, 32];

    #[test]
    fn ip_discovery_mi210() {
        check_ip_discovery(
            Target::Gfx90a,
            &[
                ("MP1", 1, (13, 0, 2), 1),
                ("GC", 11, (9, 4, 2), 1),
                ("MMHUB", 34, (9, 4, 2), 1),
                ("OSSSYS", 40, (4, 4, 0), 1),
                ("SDMA0", 42, (4, 4, 0), 5),
                ("NBIF", 108, (7, 4, 4), 1),
                ("MP0", 255, (13, 0, 2), 1),
                ("THM", 3, (13, 0, 2), 1),
                ("SMUIO", 4, (13, 0, 2), 1),
                ("ATHUB", 35, (9, 4, 2), 1),
                ("HDP", 41, (4, 4, 0), 1),
                ("DF", 46, (3, 6, 2), 1),
                ("UMC", 150, (6, 7, 0), 1),
            ],
            &VIDEO,
        );
    }

    #[test]
    fn ip_discovery_mi300x() {
        check_ip_discovery(
            Target::Gfx942,
            &[
                ("MP1", 1, (13, 0, 6), 1),
                ("GC", 11, (9, 4, 3), 8),
                ("MMHUB", 34, (1, 8, 0), 1),
                ("ATHUB", 35, (1, 8, 0), 1),
                ("OSSSYS", 40, (4, 4, 2), 1),
                ("SDMA0", 42, (4, 4, 2), 16),
                ("NBIF", 108, (7, 9, 0), 1),
                ("MP0", 255, (13, 0, 6), 1),
            ],
            &VIDEO,
        );
    }

    #[test]
    fn ip_discovery_mi100() {
        // Arcturus: amdgpu_discovery_set_ip_blocks, CHIP_ARCTURUS.
        check_ip_discovery(
            Target::Gfx908,
            &[
                ("MP1", 1, (11, 0, 2), 1),
                ("THM", 3, (11, 0, 3), 1),
                ("SMUIO", 4, (11, 0, 3), 1),
                ("GC", 11, (9, 4, 1), 1),
                ("MMHUB", 34, (9, 4, 1), 1),
                ("ATHUB", 35, (9, 4, 1), 1),
                ("OSSSYS", 40, (4, 2, 1), 1),
                ("HDP", 41, (4, 2, 1), 1),
                ("SDMA0", 42, (4, 2, 2), 8),
                ("DF", 46, (3, 6, 1), 1),
                ("NBIF", 108, (7, 4, 1), 1),
                ("UMC", 150, (6, 1, 2), 1),
                ("MP0", 255, (11, 0, 4), 1),
            ],
            &VIDEO,
        );
    }

    #[test]
    fn ip_discovery_mi355x() {
        // Only GC's version is known for MI350; SDMA and NBIO are absent.
        check_ip_discovery(
            Target::Gfx950,
            &[("GC", 11, (9, 5, 0), 8)],
            &[12, 32, 42, 108],
        );
    }

    #[test]
    fn ip_discovery_w7900() {
        // Navi 31: GC 11.0.0, two SDMA 6.0.0 engines under their own
        // hw_ids, NBIO 4.3.0 (which tinygrad's AMD backend reads), MP0/MP1
        // 13.0.0.
        check_ip_discovery(
            Target::Gfx1100,
            &[
                ("MP1", 1, (13, 0, 0), 1),
                ("GC", 11, (11, 0, 0), 1),
                ("SDMA0", 42, (6, 0, 0), 1),
                ("SDMA1", 43, (6, 0, 0), 1),
                ("NBIF", 108, (4, 3, 0), 1),
                ("MP0", 255, (13, 0, 0), 1),
            ],
            &VIDEO,
        );
    }

    #[test]
    fn ip_discovery_r9700() {
        // Navi 48: GC 12.0.1, two SDMA 7.0.1 engines under their own
        // hw_ids, the soc24 hubs (MMHUB 4.1.0, OSSSYS and HDP 7.0.0, NBIO
        // 6.3.1), MP0/MP1 14.0.3.
        check_ip_discovery(
            Target::Gfx1201,
            &[
                ("MP1", 1, (14, 0, 3), 1),
                ("GC", 11, (12, 0, 1), 1),
                ("MMHUB", 34, (4, 1, 0), 1),
                ("OSSSYS", 40, (7, 0, 0), 1),
                ("HDP", 41, (7, 0, 0), 1),
                ("SDMA0", 42, (7, 0, 1), 1),
                ("SDMA1", 43, (7, 0, 1), 1),
                ("NBIF", 108, (6, 3, 1), 1),
                ("MP0", 255, (14, 0, 3), 1),
            ],
            &VIDEO,
        );
    }

    /// The R9700's node as a Navi 48 reports it (a real RX 9070 XT's
    /// `properties`, the same die): wave32, 128 SIMDs in 4 shader engines
    /// of 2 arrays of 8 CUs, no GWS, 2 SDMA engines of 6 queues, 4 CP
    /// queues, and 138 caches (64 vector L0s, 32 instruction and 32 scalar
    /// caches of the WGPs, 8 of the shader arrays, the L2 and the MALL);
    /// the R9700's own rocminfo: 2350 MHz, 8 MiB L2, 64 MiB L3, ASIC
    /// revision 1 (capability bits 22-25).
    #[test]
    fn r9700_node_and_caches() {
        let dir = std::env::temp_dir().join(format!("rocjitsu-sysfs-r9700-{}", std::process::id()));
        let cfg = GpuConfig::builtin(Target::Gfx1201);
        let t = SysfsTree::create(&cfg, &dir).unwrap();
        let read = |p: &str| std::fs::read_to_string(t.redirect(p).unwrap()).unwrap();
        let node = "/sys/class/kfd/kfd/topology/nodes/1";
        let props = read(&format!("{node}/properties"));
        for line in [
            "cpu_core_id_base 0\n",
            "simd_count 128\n",
            "caches_count 138\n",
            "max_waves_per_simd 16\n",
            "lds_size_in_kb 64\n",
            "gds_size_in_kb 0\n",
            "num_gws 0\n",
            "wave_front_size 32\n",
            "array_count 8\n",
            "simd_arrays_per_engine 2\n",
            "cu_per_simd_array 8\n",
            "simd_per_cu 2\n",
            "max_slots_scratch_cu 32\n",
            "gfx_target_version 120001\n",
            "vendor_id 4098\n",
            "device_id 30033\n",
            "num_sdma_engines 2\n",
            "num_sdma_xgmi_engines 0\n",
            "num_sdma_queues_per_engine 6\n",
            "num_cp_queues 4\n",
            "max_engine_clk_fcompute 2350\n",
            "fw_version 1012\n",
            "sdma_fw_version 838\n",
        ] {
            assert!(props.contains(line), "{line}{props}");
        }
        let cap: u64 = props
            .lines()
            .find_map(|l| l.strip_prefix("capability "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!((cap >> 22) & 0xf, 1, "ASIC revision");
        assert_ne!(cap & 0x4000_0000, 0, "precise ALU operations (GC 12)");
        assert_eq!(read(&format!("{node}/name")), "gfx1201\n");
        let field = |c: &str, f: &str| -> u64 {
            c.lines()
                .find_map(|l| l.strip_prefix(&format!("{f} ")))
                .unwrap()
                .parse()
                .unwrap()
        };
        let shared = |c: &str| {
            c.lines()
                .find_map(|l| l.strip_prefix("sibling_map "))
                .unwrap()
                .split(',')
                .filter(|b| *b == "1")
                .count()
        };
        let mut kinds: Vec<(u64, u64, usize)> = (0..138)
            .map(|k| read(&format!("{node}/caches/{k}/properties")))
            .map(|c| (field(&c, "level"), field(&c, "size"), shared(&c)))
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(
            kinds,
            [
                (1, 16, 2),
                (1, 32, 1),
                (1, 32, 2),
                (1, 256, 8),
                (2, 8192, 64),
                (3, 65536, 64)
            ]
        );
        // ROCr's cache line size (rocminfo's "Cacheline Size") is the
        // L2's: 256 on a real R9700.
        let l2 = (0..138)
            .map(|k| read(&format!("{node}/caches/{k}/properties")))
            .find(|c| field(c, "level") == 2)
            .unwrap();
        assert_eq!(field(&l2, "cache_line_size"), 256);
        let bank = read(&format!("{node}/mem_banks/0/properties"));
        assert!(bank.contains("width 256\n"), "{bank}");
        assert!(bank.contains("mem_clk_max 1250\n"), "{bank}");
        let ids = read("/usr/share/libdrm/amdgpu.ids");
        assert!(
            ids.contains("7551,\tC0,\tAMD Radeon AI PRO R9700\n"),
            "{ids}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The W7900's node as a Navi 31 reports it (a 7900 XTX's dump):
    /// wave32, 192 SIMDs, and 206 caches: a vector L0 per CU, instruction
    /// and scalar caches per WGP, a GL1 per shader array, the L2 and the
    /// Infinity Cache, with sizes in KiB and the GL1 shared by 8 CUs.
    #[test]
    fn w7900_node_and_caches() {
        let dir = std::env::temp_dir().join(format!("rocjitsu-sysfs-w7900-{}", std::process::id()));
        let cfg = GpuConfig::builtin(Target::Gfx1100);
        let t = SysfsTree::create(&cfg, &dir).unwrap();
        let read = |p: &str| std::fs::read_to_string(t.redirect(p).unwrap()).unwrap();
        let node = "/sys/class/kfd/kfd/topology/nodes/1";
        let props = read(&format!("{node}/properties"));
        for line in [
            "simd_count 192\n",
            "caches_count 206\n",
            "wave_front_size 32\n",
            "array_count 12\n",
            "simd_arrays_per_engine 2\n",
            "cu_per_simd_array 8\n",
            "simd_per_cu 2\n",
            "max_waves_per_simd 16\n",
            "gfx_target_version 110000\n",
            "device_id 29768\n",
        ] {
            assert!(props.contains(line), "{line}{props}");
        }
        assert_eq!(read(&format!("{node}/name")), "gfx1100\n");
        let caches: Vec<String> = (0..206)
            .map(|k| read(&format!("{node}/caches/{k}/properties")))
            .collect();
        let field = |c: &str, f: &str| -> u64 {
            c.lines()
                .find_map(|l| l.strip_prefix(&format!("{f} ")))
                .unwrap()
                .parse()
                .unwrap()
        };
        let shared = |c: &str| {
            c.lines()
                .find_map(|l| l.strip_prefix("sibling_map "))
                .unwrap()
                .split(',')
                .filter(|b| *b == "1")
                .count()
        };
        let mut kinds: Vec<(u64, u64, usize)> = caches
            .iter()
            .map(|c| (field(c, "level"), field(c, "size"), shared(c)))
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(
            kinds,
            [
                (1, 16, 2),
                (1, 32, 1),
                (1, 32, 2),
                (1, 256, 8),
                (2, 6144, 96),
                (3, 98304, 96)
            ]
        );
        let gl1 = caches.iter().filter(|c| field(c, "size") == 256).count();
        assert_eq!(gl1, 12);
        assert!(t.redirect("/usr/share/libdrm/amdgpu.ids").is_some());
        let ids = read("/usr/share/libdrm/amdgpu.ids");
        assert!(ids.contains("7448,\t00,\tAMD Radeon Pro W7900\n"), "{ids}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The Strix Halo APU's GPU node as KFD shows it (rocminfo on a Radeon
    /// 8060S: 40 CUs in 2 shader engines of 2 arrays, a 2 MiB L2 and a
    /// 32 MiB Infinity Cache): a GPU node of its own, without CPU cores,
    /// whose local memory bank is public; 86 caches (a vector L0 per CU,
    /// instruction and scalar caches per WGP, a GL1 per shader array of 10
    /// CUs, the L2 and the MALL).
    #[test]
    fn strix_halo_node_and_caches() {
        let dir = std::env::temp_dir().join(format!("rocjitsu-sysfs-strix-{}", std::process::id()));
        let cfg = GpuConfig::builtin(Target::Gfx1151);
        let t = SysfsTree::create(&cfg, &dir).unwrap();
        let read = |p: &str| std::fs::read_to_string(t.redirect(p).unwrap()).unwrap();
        let node = "/sys/class/kfd/kfd/topology/nodes/1";
        let props = read(&format!("{node}/properties"));
        for line in [
            "cpu_cores_count 0\n",
            "simd_count 80\n",
            "caches_count 86\n",
            "wave_front_size 32\n",
            "array_count 4\n",
            "simd_arrays_per_engine 2\n",
            "cu_per_simd_array 10\n",
            "max_waves_per_simd 16\n",
            "gfx_target_version 110501\n",
            "device_id 5510\n",
            "location_id 25856\n",
            "max_engine_clk_fcompute 2900\n",
        ] {
            assert!(props.contains(line), "{line}{props}");
        }
        assert_eq!(read(&format!("{node}/name")), "gfx1151\n");
        let bank = read(&format!("{node}/mem_banks/0/properties"));
        assert!(bank.contains("heap_type 1\n"), "{bank}");
        assert!(
            bank.contains(&format!("size_in_bytes {}\n", 64u64 << 30)),
            "{bank}"
        );
        let field = |c: &str, f: &str| -> u64 {
            c.lines()
                .find_map(|l| l.strip_prefix(&format!("{f} ")))
                .unwrap()
                .parse()
                .unwrap()
        };
        let shared = |c: &str| {
            c.lines()
                .find_map(|l| l.strip_prefix("sibling_map "))
                .unwrap()
                .split(',')
                .filter(|b| *b == "1")
                .count()
        };
        let mut kinds: Vec<(u64, u64, usize)> = (0..86)
            .map(|k| read(&format!("{node}/caches/{k}/properties")))
            .map(|c| (field(&c, "level"), field(&c, "size"), shared(&c)))
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(
            kinds,
            [
                (1, 16, 2),
                (1, 32, 1),
                (1, 32, 2),
                (1, 256, 10),
                (2, 2048, 40),
                (3, 32768, 40)
            ]
        );
        let ids = read("/usr/share/libdrm/amdgpu.ids");
        assert!(ids.contains("1586,\tC1,\tRadeon 8060S Graphics\n"), "{ids}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Two GPUs outside a hive (two W7900s on PCIe) are each other's
    /// peer-to-peer link through the CPU, with the two PCIe weights added;
    /// GPUs of one hive have XGMI io_links and no p2p links.
    #[test]
    fn pcie_peers_get_p2p_links() {
        let dir = std::env::temp_dir().join(format!("rocjitsu-sysfs-p2p-{}", std::process::id()));
        let mut cfg = GpuConfig::builtin(Target::Gfx1100);
        let mut second = cfg.gpus[0].clone();
        second.pci.location_id = 0x400;
        second.kfd.drm_render_minor = 129;
        cfg.gpus.push(second);
        let t = SysfsTree::create(&cfg, &dir).unwrap();
        let read = |p: &str| std::fs::read_to_string(t.redirect(p).unwrap()).unwrap();
        let nodes = "/sys/class/kfd/kfd/topology/nodes";
        for (node, peer) in [(1, 2), (2, 1)] {
            let props = read(&format!("{nodes}/{node}/properties"));
            assert!(props.contains("io_links_count 1\n"), "{props}");
            assert!(props.contains("p2p_links_count 1\n"), "{props}");
            let link = read(&format!("{nodes}/{node}/p2p_links/0/properties"));
            for line in [
                "type 2\n".to_string(),
                format!("node_from {node}\n"),
                format!("node_to {peer}\n"),
                "weight 40\n".to_string(),
            ] {
                assert!(link.contains(&line), "{line}{link}");
            }
        }
        let mut hive = GpuConfig::builtin(Target::Gfx942);
        hive.gpus[0].kfd.hive_id = 7;
        let mut second = hive.gpus[0].clone();
        second.kfd.drm_render_minor = 129;
        hive.gpus.push(second);
        let t = SysfsTree::create(&hive, &dir).unwrap();
        let props =
            std::fs::read_to_string(t.redirect(&format!("{nodes}/1/properties")).unwrap()).unwrap();
        assert!(props.contains("io_links_count 2\n"), "{props}");
        assert!(props.contains("p2p_links_count 0\n"), "{props}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
