//! `GuestKfd` over the simulated gfx942 driver, through the ioctl interface
//! (argument structures as `linux/kfd_ioctl.h` lays them out): the topology
//! shows host and guest, guest memory is host memory under a synthetic
//! handle with the guest's gpu_id rewritten in map requests, start-up
//! plumbing is answered for the guest, and guest execution is refused.

use rocjitsu_config::{DbtBackend, DbtGuest, DbtIsa, DbtLogLevel, DbtRevision, GpuConfig, Target};
use rocjitsu_kmd::{DeviceFile, Driver, DriverOptions, Errno, GuestKfd, SimulatedDriver};
use std::sync::Arc;

#[allow(unused_imports)]
use crate::common::*;

const KFD: DeviceFile = DeviceFile::Kfd;

fn guest_block() -> DbtGuest {
    DbtGuest {
        enabled: true,
        guest_isa: DbtIsa::Gfx950,
        host_isa: DbtIsa::Gfx942,
        host_gpu_id: 0,
        execution_backend: DbtBackend::Simulator,
        simulator_config: None,
        guest_revision: DbtRevision::Unspecified,
        host_revision: DbtRevision::Unspecified,
        log_level: DbtLogLevel::Warn,
    }
}

fn stack(tag: &str) -> (GuestKfd, Arc<SimulatedDriver>, std::path::PathBuf) {
    let config = GpuConfig::builtin(Target::Gfx942);
    let dir =
        std::env::temp_dir().join(format!("rocjitsu-guest-test-{tag}-{}", std::process::id()));
    let host = Arc::new(
        SimulatedDriver::new(DriverOptions {
            config: config.clone(),
            runtime_dir: dir.clone(),
            threads: 1,
            watchdog: None,
        })
        .unwrap(),
    );
    let g = GuestKfd::new(host.clone(), &config, &guest_block(), &dir).unwrap();
    (g, host, dir)
}

fn prop(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {key} in {text}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn topology_is_host_plus_guest() {
    let (g, _host, dir) = stack("topo");
    let read = |p: &str| std::fs::read_to_string(g.sysfs_redirect(p).unwrap()).unwrap();
    let nodes = "/sys/class/kfd/kfd/topology/nodes";
    let host = read(&format!("{nodes}/1/properties"));
    let guest = read(&format!("{nodes}/2/properties"));
    assert_eq!(prop(&host, "gfx_target_version"), 90402);
    assert_eq!(prop(&guest, "gfx_target_version"), 90500);
    // The MI355X identity of configs/gfx950_cdna4_kmd.json.
    let mi355 = GpuConfig::builtin(Target::Gfx950);
    assert_eq!(
        prop(&guest, "device_id"),
        u64::from(mi355.gpus[0].pci.device_id)
    );
    assert_eq!(read(&format!("{nodes}/2/name")), "gfx950\n");
    assert_eq!(
        read(&format!("{nodes}/1/gpu_id"))
            .trim()
            .parse::<u32>()
            .unwrap(),
        g.host_gpu_id()
    );
    assert_eq!(
        read(&format!("{nodes}/2/gpu_id"))
            .trim()
            .parse::<u32>()
            .unwrap(),
        g.guest_gpu_id()
    );
    assert_ne!(g.guest_gpu_id(), g.host_gpu_id());
    assert!(
        g.sysfs_redirect(&format!("{nodes}/3/properties"))
            .unwrap()
            .metadata()
            .is_err()
    );
    // The CPU links to both GPUs.
    assert_eq!(
        prop(&read(&format!("{nodes}/0/properties")), "io_links_count"),
        2
    );
    // A render node of its own, with its /sys/dev/char entries.
    let minor = g.guest_minor();
    assert_eq!(prop(&guest, "drm_render_minor"), u64::from(minor));
    assert_ne!(u64::from(minor), prop(&host, "drm_render_minor"));
    assert_eq!(
        g.device_for_path(&format!("/dev/dri/renderD{minor}")),
        Some(DeviceFile::Render { gpu: 1, minor })
    );
    assert_eq!(
        g.device_for_path("/dev/dri/renderD128"),
        Some(DeviceFile::Render { gpu: 0, minor: 128 })
    );
    assert_eq!(g.device_for_path("/dev/kfd"), Some(KFD));
    assert!(
        g.sysfs_redirect(&format!("/sys/dev/char/226:{minor}/device/drm"))
            .unwrap()
            .is_dir()
    );
    assert_eq!(
        read(&format!("/sys/dev/char/226:{minor}/dev")),
        format!("226:{minor}\n")
    );
    let ids = read("/usr/share/libdrm/amdgpu.ids");
    assert!(ids.contains("AMD Instinct MI355X") && ids.contains("AMD Instinct MI300X"));

    // libdrm's device information on the guest's render node is the guest's.
    let mut dev = vec![0u8; 368];
    let mut a = [0u8; 32];
    put64(&mut a, 0, dev.as_mut_ptr() as u64);
    put32(&mut a, 8, dev.len() as u32);
    put32(&mut a, 12, 0x16);
    let render = DeviceFile::Render { gpu: 1, minor };
    g.open(render).unwrap();
    g.ioctl(render, 0x4020_6445, &mut a).unwrap();
    assert_eq!(get32(&dev, 0), u32::from(mi355.gpus[0].pci.device_id));
    assert_eq!(get32(&dev, 48), mi355.gpus[0].soc.total_cus);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn guest_start_up_plumbing_is_answered() {
    let (g, _host, dir) = stack("plumbing");
    let guest = g.guest_gpu_id();
    let host = g.host_gpu_id();
    // GET_PROCESS_APERTURES_NEW: the count, then host's entry and guest's.
    let mut a = [0u8; 16];
    g.ioctl(KFD, iowr(0x14, 16), &mut a).unwrap();
    assert_eq!(get32(&a, 8), 2);
    let mut ap = vec![0u8; 56 * 4];
    put64(&mut a, 0, ap.as_mut_ptr() as u64);
    put32(&mut a, 8, 4);
    g.ioctl(KFD, iowr(0x14, 16), &mut a).unwrap();
    assert_eq!(get32(&a, 8), 2);
    assert_eq!(get32(&ap, 48), host);
    assert_eq!(get32(&ap, 56 + 48), guest);
    // The guest's apertures are the host GPU's (same LDS, scratch, GPUVM).
    assert_eq!(ap[..48], ap[56..56 + 48]);
    assert_eq!(get64(&ap, 56), 1 << 48);
    // Room for one only: the host's, as KFD fills what fits.
    put32(&mut a, 8, 1);
    g.ioctl(KFD, iowr(0x14, 16), &mut a).unwrap();
    assert_eq!(get32(&a, 8), 1);
    // The old GET_PROCESS_APERTURES (7 inline entries and a count).
    let mut old = vec![0u8; 7 * 56 + 8];
    g.ioctl(
        KFD,
        (2 << 30) | ((7 * 56 + 8) << 16) | (0x4b << 8) | 0x06,
        &mut old,
    )
    .unwrap();
    assert_eq!(get32(&old, 7 * 56), 2);
    assert_eq!(get32(&old, 56 + 48), guest);

    // ACQUIRE_VM {drm_fd, gpu_id} on the guest's render fd.
    let mut acq = [0u8; 8];
    put32(&mut acq, 0, 99);
    put32(&mut acq, 4, guest);
    g.ioctl(KFD, iow(0x15, 8), &mut acq).unwrap();
    // SET_MEMORY_POLICY, then a bad policy.
    let mut pol = [0u8; 32];
    put32(&mut pol, 16, guest);
    g.ioctl(KFD, iow(0x04, 32), &mut pol).unwrap();
    put32(&mut pol, 20, 7);
    assert_eq!(g.ioctl(KFD, iow(0x04, 32), &mut pol), Err(Errno::EINVAL));
    // GET_CLOCK_COUNTERS: the host GPU's clock, the guest's id kept.
    let mut clk = [0u8; 40];
    put32(&mut clk, 32, guest);
    g.ioctl(KFD, iowr(0x05, 40), &mut clk).unwrap();
    assert_ne!(get64(&clk, 0), 0, "GPU clock");
    assert_eq!(get64(&clk, 24), 1_000_000_000);
    assert_eq!(get32(&clk, 32), guest);
    // AVAILABLE_MEMORY: the host GPU's.
    let mut av = [0u8; 16];
    put32(&mut av, 8, guest);
    g.ioctl(KFD, iowr(0x23, 16), &mut av).unwrap();
    let guest_avail = get64(&av, 0);
    put32(&mut av, 8, host);
    g.ioctl(KFD, iowr(0x23, 16), &mut av).unwrap();
    assert_eq!(guest_avail, get64(&av, 0));
    assert!(guest_avail > 1 << 30);
    // Scratch backing and trap handler set-up.
    let mut sc = [0u8; 16];
    put32(&mut sc, 8, guest);
    g.ioctl(KFD, iow(0x11, 16), &mut sc).unwrap();
    let mut th = [0u8; 24];
    put32(&mut th, 16, guest);
    g.ioctl(KFD, iow(0x13, 24), &mut th).unwrap();
    // An id that is neither is the host's EINVAL.
    put32(&mut acq, 4, guest ^ host ^ 0x77);
    assert_eq!(g.ioctl(KFD, iow(0x15, 8), &mut acq), Err(Errno::EINVAL));
    assert!(g.refused().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn guest_memory_is_host_memory_and_map_rewrites_gpu_ids() {
    let (g, host, dir) = stack("map");
    let guest = g.guest_gpu_id();
    let host_id = g.host_gpu_id();
    let size = 1usize << 20;
    let va = reserve(size);
    let mut a = vram_args(va, size as u64, guest);
    g.ioctl(KFD, iowr(0x16, 40), &mut a).unwrap();
    let handle = get64(&a, 16);
    let offset = get64(&a, 24);
    // A synthetic handle in the guest's name; the caller's gpu_id kept.
    assert_eq!(handle >> 32, u64::from(guest));
    assert_eq!(get32(&a, 32), guest);
    assert_eq!(host.allocation_count(), 1);
    // Its pages come through the guest's render node (from the host's).
    let src = g
        .mmap(
            DeviceFile::Render {
                gpu: 1,
                minor: g.guest_minor(),
            },
            offset,
            size as u64,
        )
        .unwrap();
    // SAFETY: mapping the driver's memfd over the test's own reservation.
    let p = unsafe {
        libc::mmap(
            va as *mut libc::c_void,
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            src.fd,
            src.offset as libc::off_t,
        )
    };
    assert_eq!(p as u64, va);
    // MAP_MEMORY_TO_GPU on [guest, host]: the host maps it once; the
    // caller's array is untouched and all devices count as done.
    let ids = [guest, host_id];
    let mut m = [0u8; 24];
    put64(&mut m, 0, handle);
    put64(&mut m, 8, ids.as_ptr() as u64);
    put32(&mut m, 16, 2);
    g.ioctl(KFD, iowr(0x18, 24), &mut m).unwrap();
    assert_eq!(get32(&m, 20), 2);
    assert_eq!(get64(&m, 0), handle);
    assert_eq!(get64(&m, 8), ids.as_ptr() as u64);
    assert_eq!(ids, [guest, host_id]);
    // The host GPU sees what the CPU writes.
    // SAFETY: `va` is mapped read-write just above.
    unsafe { *((va + 64) as *mut u32) = 0xfeed_f00d };
    let mut tlb = rocjitsu_gpu::mem::Tlb::default();
    assert_eq!(host.vm().read_u32(&mut tlb, va + 64).unwrap(), 0xfeed_f00d);
    // Without the rewrite the host would refuse the guest's id.
    let only_guest = [guest];
    let mut direct = [0u8; 24];
    put64(&mut direct, 0, handle & 0xffff_ffff);
    put64(&mut direct, 8, only_guest.as_ptr() as u64);
    put32(&mut direct, 16, 1);
    assert_eq!(
        host.ioctl(KFD, iowr(0x18, 24), &mut direct),
        Err(Errno::EINVAL)
    );
    // UNMAP on [guest] alone, then free by the synthetic handle.
    put64(&mut m, 8, only_guest.as_ptr() as u64);
    put32(&mut m, 16, 1);
    put32(&mut m, 20, 0);
    g.ioctl(KFD, iowr(0x19, 24), &mut m).unwrap();
    assert_eq!(get32(&m, 20), 1);
    assert!(host.vm().read_u32(&mut tlb, va + 64).is_err());
    let mut f = [0u8; 8];
    put64(&mut f, 0, handle);
    g.ioctl(KFD, iow(0x17, 8), &mut f).unwrap();
    assert_eq!(host.allocation_count(), 0);
    assert_eq!(g.ioctl(KFD, iow(0x17, 8), &mut f), Err(Errno::EINVAL));
    // SAFETY: releasing the test's reservation.
    unsafe { libc::munmap(va as *mut libc::c_void, size) };
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn guest_execution_is_refused_and_logged() {
    let (g, host, dir) = stack("exec");
    let guest = g.guest_gpu_id();
    #[repr(C, align(64))]
    struct Ring([u8; 4096]);
    let ring = Box::new(Ring([0; 4096]));
    let ptrs = [0u64; 2];
    let mut q = [0u8; 96];
    put64(&mut q, 0, ring.0.as_ptr() as u64);
    put64(&mut q, 8, ptrs.as_ptr() as u64);
    put64(&mut q, 16, ptrs.as_ptr() as u64 + 8);
    put32(&mut q, 32, 4096);
    put32(&mut q, 36, guest);
    put32(&mut q, 40, 2); // AQL
    put32(&mut q, 44, 100);
    assert_eq!(g.ioctl(KFD, iowr(0x02, 96), &mut q), Err(Errno::EINVAL));
    assert_eq!(host.queue_count(), 0);
    // The same queue on the host GPU is created.
    put32(&mut q, 36, g.host_gpu_id());
    g.ioctl(KFD, iowr(0x02, 96), &mut q).unwrap();
    assert_eq!(host.queue_count(), 1);
    // A guest doorbell page, and a mapping of the guest's doorbells.
    let mut a = [0u8; 40];
    put64(&mut a, 8, 8192);
    put32(&mut a, 32, guest);
    put32(&mut a, 36, 0x9400_0008);
    assert_eq!(g.ioctl(KFD, iowr(0x16, 40), &mut a), Err(Errno::EINVAL));
    let off = (3u64 << 62) | (u64::from(guest) << 46);
    assert_eq!(g.mmap(KFD, off, 8192), Err(Errno::EINVAL));
    assert_eq!(
        g.refused(),
        [
            "CREATE_QUEUE",
            "ALLOC_MEMORY_OF_GPU (doorbell)",
            "mmap of the doorbells"
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn host_gpu_must_be_the_host_isa() {
    let config = GpuConfig::builtin(Target::Gfx90a);
    let dir = std::env::temp_dir().join(format!("rocjitsu-guest-test-isa-{}", std::process::id()));
    let host = Arc::new(
        SimulatedDriver::new(DriverOptions {
            config: config.clone(),
            runtime_dir: dir.clone(),
            threads: 1,
            watchdog: None,
        })
        .unwrap(),
    );
    let e = GuestKfd::new(host.clone(), &config, &guest_block(), &dir)
        .err()
        .unwrap();
    assert!(
        e.starts_with("dbt_guest.host_isa: host GPU 0 is a gfx90a"),
        "{e}"
    );
    let mut b = guest_block();
    b.host_gpu_id = 2;
    let e = GuestKfd::new(host, &config, &b, &dir).err().unwrap();
    assert!(e.starts_with("dbt_guest.host_gpu_id: 2"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A machine's KFD topology as the kernel publishes it: the CPU node and one
/// MI300X (gfx942) node, with its render node's /sys/dev/char entry.
fn fake_sys(root: &std::path::Path) {
    let topo = root.join("class/kfd/kfd/topology");
    let w = |p: &str, text: &str| {
        let p = topo.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("generation_id", "1\n");
    w("system_properties", "platform_oem 0\n");
    w("nodes/0/gpu_id", "0\n");
    w(
        "nodes/0/properties",
        "cpu_cores_count 16\nsimd_count 0\nio_links_count 1\ngfx_target_version 0\n",
    );
    w(
        "nodes/0/io_links/0/properties",
        "type 2\nnode_from 0\nnode_to 1\n",
    );
    w("nodes/1/gpu_id", "48879\n");
    w("nodes/1/name", "gfx942\n");
    w(
        "nodes/1/properties",
        "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\ndrm_render_minor 128\nio_links_count 1\n",
    );
    w(
        "nodes/1/io_links/0/properties",
        "type 2\nnode_from 1\nnode_to 0\n",
    );
    std::fs::create_dir_all(root.join("dev/char/226:128/device/drm/renderD128")).unwrap();
    std::fs::create_dir_all(root.join("module/amdgpu")).unwrap();
    std::fs::write(root.join("module/amdgpu/initstate"), "live\n").unwrap();
}

#[test]
fn real_kfd_topology_plus_guest() {
    let dir = std::env::temp_dir().join(format!("rocjitsu-guest-test-real-{}", std::process::id()));
    let sys = dir.join("sys");
    fake_sys(&sys);
    let gpus = rocjitsu_kmd::read_topology(&sys).unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(
        (
            gpus[0].gpu.gpu_id,
            gpus[0].gpu.minor,
            gpus[0].gfx_target_version
        ),
        (48879, 128, 90402)
    );
    // A stand-in for /dev/kfd (no AMD GPU here: the real one is untested).
    let dev = dir.join("kfd");
    std::fs::write(&dev, "").unwrap();
    let host =
        Arc::new(rocjitsu_kmd::KfdPassthrough::open_at(&sys, dev.to_str().unwrap()).unwrap());
    let g = GuestKfd::over_real(host, &guest_block(), &dir.join("rt")).unwrap();
    assert_eq!(g.host_gpu_id(), 48879);
    assert_eq!(g.guest_minor(), 129);
    let read = |p: &str| std::fs::read_to_string(g.sysfs_redirect(p).unwrap()).unwrap();
    let nodes = "/sys/class/kfd/kfd/topology/nodes";
    // The real nodes copied, the guest appended, the CPU linked to it.
    assert_eq!(read(&format!("{nodes}/1/gpu_id")), "48879\n");
    assert_eq!(
        prop(&read(&format!("{nodes}/1/properties")), "simd_count"),
        1216
    );
    let guest = read(&format!("{nodes}/2/properties"));
    assert_eq!(prop(&guest, "gfx_target_version"), 90500);
    assert_eq!(prop(&guest, "drm_render_minor"), 129);
    assert_eq!(
        read(&format!("{nodes}/2/gpu_id")),
        format!("{}\n", g.guest_gpu_id())
    );
    assert_eq!(
        prop(&read(&format!("{nodes}/0/properties")), "io_links_count"),
        2
    );
    assert_eq!(
        prop(
            &read(&format!("{nodes}/0/io_links/1/properties")),
            "node_to"
        ),
        2
    );
    assert_eq!(
        prop(
            &read(&format!("{nodes}/2/io_links/0/properties")),
            "node_from"
        ),
        2
    );
    // The real render node's entries lead to the real sysfs; the guest's are ours.
    assert!(
        g.sysfs_redirect("/sys/dev/char/226:128/device/drm/renderD128")
            .unwrap()
            .is_dir()
    );
    assert!(
        g.sysfs_redirect("/sys/dev/char/226:129/device/drm")
            .unwrap()
            .is_dir()
    );
    assert_eq!(read("/sys/module/amdgpu/initstate"), "live\n");
    // Guest plumbing needs no real device; a host call reaches the stand-in
    // (a plain file: ENOTTY).
    let mut acq = [0u8; 8];
    put32(&mut acq, 4, g.guest_gpu_id());
    g.ioctl(KFD, iow(0x15, 8), &mut acq).unwrap();
    let mut v = [0u8; 8];
    assert_eq!(
        g.ioctl(KFD, (2 << 30) | (8 << 16) | (0x4b << 8) | 0x01, &mut v),
        Err(Errno::ENOTTY)
    );
    // The wrong host ISA is named.
    let mut b = guest_block();
    b.host_isa = DbtIsa::Gfx90a;
    let host =
        Arc::new(rocjitsu_kmd::KfdPassthrough::open_at(&sys, dev.to_str().unwrap()).unwrap());
    let e = GuestKfd::over_real(host, &b, &dir.join("rt"))
        .err()
        .unwrap();
    assert!(e.contains("gfx_target_version 90402, not a gfx90a"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
