//! The render node's `AMDGPU_INFO` queries through the simulated driver,
//! with `struct drm_amdgpu_info` and the answers laid out as
//! `drm/amdgpu_drm.h` defines them, and errnos as `amdgpu_info_ioctl`
//! (amdgpu_kms.c) returns them.

use rocjitsu_config::{GpuConfig, Target};
use rocjitsu_kmd::{DeviceFile, Driver, DriverOptions, Errno, SimulatedDriver, gpu_id_of};

#[allow(unused_imports)]
use crate::common::*;

const RENDER: DeviceFile = DeviceFile::Render { gpu: 0, minor: 128 };

/// `DRM_IOCTL_AMDGPU_INFO`: `_IOW('d', 0x45, struct drm_amdgpu_info)`.
const AMDGPU_INFO: u64 = 0x4020_6445;

const HW_IP_INFO: u32 = 0x02;
const FW_VERSION: u32 = 0x0e;
const MEMORY: u32 = 0x19;
const VIDEO_CAPS: u32 = 0x21;

fn driver(target: Target) -> (SimulatedDriver, u32) {
    let config = GpuConfig::builtin(target);
    let gpu_id = gpu_id_of(&config, 0);
    let dir = std::env::temp_dir().join(format!(
        "rocjitsu-kmd-drm-{}-{}",
        target.name(),
        std::process::id()
    ));
    let d = SimulatedDriver::new(DriverOptions {
        config,
        runtime_dir: dir,
        threads: 1,
        watchdog: None,
    })
    .unwrap();
    (d, gpu_id)
}

/// AMDGPU_INFO `query` with the union's first three words `u`, answered
/// into a buffer of `size` bytes.
fn info(d: &SimulatedDriver, query: u32, u: [u32; 3], size: usize) -> Result<Vec<u8>, Errno> {
    let mut out = vec![0xa5u8; size];
    let mut a = [0u8; 32];
    put64(&mut a, 0, out.as_mut_ptr() as u64);
    put32(&mut a, 8, size as u32);
    put32(&mut a, 12, query);
    for (k, w) in u.iter().enumerate() {
        put32(&mut a, 16 + 4 * k, *w);
    }
    d.ioctl(RENDER, AMDGPU_INFO, &mut a)?;
    Ok(out)
}

/// `struct drm_amdgpu_info_hw_ip`: (major, minor, capabilities,
/// ib_start_alignment, ib_size_alignment, available_rings,
/// ip_discovery_version, userq_num_slots).
fn hw_ip(d: &SimulatedDriver, ty: u32) -> (u32, u32, u64, u32, u32, u32, u32, u32) {
    let v = info(d, HW_IP_INFO, [ty, 0, 0], 40).unwrap();
    (
        get32(&v, 0),
        get32(&v, 4),
        get64(&v, 8),
        get32(&v, 16),
        get32(&v, 20),
        get32(&v, 24),
        get32(&v, 28),
        get32(&v, 32),
    )
}

#[test]
fn hw_ip_info_compute_and_dma() {
    // (target, GFX IP block, GC, SDMA IP block, SDMA discovery version,
    // GFX rings).
    let cases = [
        // gfx_v9_0 for GC 9.4.2; sdma_v4_0 for SDMA 4.4.0.
        (Target::Gfx90a, (9, 0), 0x09_04_02, (4, 0), 0x04_04_00, 0),
        // gfx_v9_4_3 and sdma_v4_4_2 for GC 9.4.3 / SDMA 4.4.2.
        (Target::Gfx942, (9, 4), 0x09_04_03, (4, 4), 0x04_04_02, 0),
        // MI350's SDMA version is not known: 0.
        (Target::Gfx950, (9, 4), 0x09_05_00, (4, 4), 0, 0),
        // gfx_v11_0 and sdma_v6_0 for GC 11.0.0 / SDMA 6.0.0; RDNA has a
        // graphics ring.
        (
            Target::Gfx1100,
            (11, 0),
            0x0b_00_00,
            (6, 0),
            0x06_00_00,
            0x1,
        ),
        // gfx_v12_0 and sdma_v7_0 for GC 12.0.1 / SDMA 7.0.1.
        (
            Target::Gfx1201,
            (12, 0),
            0x0c_00_01,
            (7, 0),
            0x07_00_01,
            0x1,
        ),
    ];
    for (t, gfx, gc, sdma, sdma_v, gfx_rings) in cases {
        let (d, _) = driver(t);
        let c = hw_ip(&d, 1);
        assert_eq!(c, (gfx.0, gfx.1, 0, 32, 32, 0xf, gc, 0), "{t} COMPUTE");
        let g = hw_ip(&d, 0);
        assert_eq!(g, (gfx.0, gfx.1, 0, 32, 32, gfx_rings, gc, 0), "{t} GFX");
        let s = hw_ip(&d, 2);
        assert_eq!(s, (sdma.0, sdma.1, 0, 256, 4, 0x3, sdma_v, 0), "{t} DMA");
        // Video engines (UVD 3 .. VPE 9): no block, zeros, success.
        for ty in 3..=9 {
            assert_eq!(hw_ip(&d, ty), (0, 0, 0, 0, 0, 0, 0, 0), "{t} type {ty}");
        }
        // Past AMDGPU_HW_IP_NUM, or a second instance: EINVAL.
        assert_eq!(info(&d, HW_IP_INFO, [10, 0, 0], 40), Err(Errno::EINVAL));
        assert_eq!(info(&d, HW_IP_INFO, [1, 1, 0], 40), Err(Errno::EINVAL));
        // An older, 32-byte structure gets 32 bytes.
        let short = info(&d, HW_IP_INFO, [1, 0, 0], 32).unwrap();
        assert_eq!(short.len(), 32);
        assert_eq!(get32(&short, 28), gc);
    }
}

#[test]
fn fw_version_queries() {
    for t in Target::CONFIGURED {
        let (d, _) = driver(t);
        let cfg = GpuConfig::builtin(t);
        let g = &cfg.gpus[0];
        let engines = g.queues.sdma_engines + g.queues.sdma_xgmi_engines;
        let fw = |ty: u32, inst: u32, index: u32| {
            info(&d, FW_VERSION, [ty, inst, index], 8).map(|v| (get32(&v, 0), get32(&v, 4)))
        };
        // MEC (0x08) index 0 and SDMA (0x0b): the KFD properties' versions.
        assert_eq!(fw(0x08, 0, 0), Ok((g.kfd.fw_version, 0)), "{t}");
        assert_eq!(fw(0x08, 0, 1), Ok((0, 0)));
        assert_eq!(fw(0x08, 0, 2), Err(Errno::EINVAL));
        assert_eq!(fw(0x0b, 0, 0), Ok((g.kfd.sdma_fw_version, 0)));
        assert_eq!(fw(0x0b, 0, engines - 1), Ok((g.kfd.sdma_fw_version, 0)));
        assert_eq!(fw(0x0b, 0, engines), Err(Errno::EINVAL));
        // Other firmware: known types answer (version 0), unknown are EINVAL.
        for ty in [0x01, 0x04, 0x07, 0x0a, 0x0c, 0x12, 0x1c] {
            assert_eq!(fw(ty, 0, 0), Ok((0, 0)), "{t} type {ty:#x}");
        }
        for ty in [0x00, 0x09, 0x1d] {
            assert_eq!(fw(ty, 0, 0), Err(Errno::EINVAL), "{t} type {ty:#x}");
        }
        // TA: XGMI (2) .. SECUREDISPLAY (7).
        assert_eq!(fw(0x13, 0, 2), Ok((0, 0)));
        assert_eq!(fw(0x13, 0, 1), Err(Errno::EINVAL));
        assert_eq!(fw(0x13, 0, 8), Err(Errno::EINVAL));
        // "We only support one instance of each IP block right now."
        assert_eq!(fw(0x08, 1, 0), Err(Errno::EINVAL));
    }
}

#[test]
fn memory_heaps_follow_vram_use() {
    let (d, gpu_id) = driver(Target::Gfx942);
    let total = GpuConfig::builtin(Target::Gfx942).gpus[0].memory.size_bytes;
    let usable = total - (8 << 20);
    let heaps = |d: &SimulatedDriver| {
        let v = info(d, MEMORY, [0; 3], 96).unwrap();
        (0..12).map(|k| get64(&v, 8 * k)).collect::<Vec<u64>>()
    };
    let gtt = 16u64 << 30;
    let idle = [
        total,
        usable,
        0,
        usable * 3 / 4,
        total,
        usable,
        0,
        usable * 3 / 4,
        gtt,
        gtt,
        0,
        gtt * 3 / 4,
    ];
    assert_eq!(heaps(&d), idle);
    // 2 MiB of VRAM in use shows in both VRAM heaps.
    let size = 2 << 20;
    let va = reserve(size);
    let mut a = vram_args(va, size as u64, gpu_id);
    d.ioctl(DeviceFile::Kfd, iowr(0x16, 40), &mut a).unwrap();
    let h = heaps(&d);
    assert_eq!((h[2], h[6]), (size as u64, size as u64));
    // A shorter buffer gets its size only.
    let v = info(&d, MEMORY, [0; 3], 8).unwrap();
    assert_eq!(get64(&v, 0), total);
    // No buffer at all is EINVAL.
    assert_eq!(info(&d, MEMORY, [0; 3], 0), Err(Errno::EINVAL));
}

#[test]
fn video_caps_are_refused_as_without_video_engines() {
    for t in Target::CONFIGURED {
        let (d, _) = driver(t);
        for ty in [0, 1, 2] {
            assert_eq!(
                info(&d, VIDEO_CAPS, [ty, 0, 0], 4096),
                Err(Errno::EINVAL),
                "{t} type {ty}"
            );
        }
    }
}

/// `AMDGPU_INFO_DEV_INFO` of the W7900 (`struct drm_amdgpu_info_device`
/// offsets from amdgpu_drm.h): the GC 11 family, GDDR6, six shader
/// engines of two arrays of 8 CUs each in the CU bitmap (engines 4 and 5
/// in the third and fourth columns, as gfx_v11_0_get_cu_info lays them
/// out), wave32, 24 L2 channels.
#[test]
fn w7900_device_info() {
    let (d, _) = driver(Target::Gfx1100);
    let v = info(&d, 0x16, [0; 3], 368).unwrap();
    assert_eq!(get32(&v, 0), 0x7448, "device_id");
    assert_eq!(get32(&v, 16), 145, "AMDGPU_FAMILY_GC_11_0_0");
    assert_eq!(get32(&v, 20), 6, "num_shader_engines");
    assert_eq!(get32(&v, 24), 2, "num_shader_arrays_per_engine");
    assert_eq!(get32(&v, 48), 96, "cu_active_number");
    let bitmap = |se: usize, col: usize| get32(&v, 56 + se * 16 + col * 4);
    for se in 0..4 {
        assert_eq!((bitmap(se, 0), bitmap(se, 1)), (0xff, 0xff), "SE{se}");
    }
    for se in 4..6 {
        assert_eq!(
            (bitmap(se - 4, 2), bitmap(se - 4, 3)),
            (0xff, 0xff),
            "SE{se}"
        );
    }
    assert_eq!((bitmap(2, 2), bitmap(3, 3)), (0, 0));
    assert_eq!(get32(&v, 176), 9, "AMDGPU_VRAM_TYPE_GDDR6");
    assert_eq!(get32(&v, 180), 384, "vram_bit_width");
    assert_eq!(get32(&v, 240), 32, "wave_front_size");
    assert_eq!(get32(&v, 248), 8, "num_cu_per_sh");
    assert_eq!(get32(&v, 252), 24, "num_tcc_blocks");
    // The MI300X keeps GFX9's family and HBM.
    let (d, _) = driver(Target::Gfx942);
    let v = info(&d, 0x16, [0; 3], 368).unwrap();
    assert_eq!((get32(&v, 16), get32(&v, 176)), (141, 6));
}

/// `AMDGPU_INFO_DEV_INFO` of the Radeon AI PRO R9700 (Navi 48): GC 12's
/// family, GDDR6 on a 256-bit bus, four shader engines of two arrays of 8
/// CUs in the CU bitmap, wave32, 16 L2 channels.
#[test]
fn r9700_device_info() {
    let (d, _) = driver(Target::Gfx1201);
    let v = info(&d, 0x16, [0; 3], 368).unwrap();
    assert_eq!(get32(&v, 0), 0x7551, "device_id");
    assert_eq!(get32(&v, 16), 152, "AMDGPU_FAMILY_GC_12_0_0");
    assert_eq!(get32(&v, 20), 4, "num_shader_engines");
    assert_eq!(get32(&v, 24), 2, "num_shader_arrays_per_engine");
    assert_eq!(get32(&v, 48), 64, "cu_active_number");
    let bitmap = |se: usize, col: usize| get32(&v, 56 + se * 16 + col * 4);
    for se in 0..4 {
        assert_eq!(
            (bitmap(se, 0), bitmap(se, 1), bitmap(se, 2)),
            (0xff, 0xff, 0),
            "SE{se}"
        );
    }
    assert_eq!(get32(&v, 176), 9, "AMDGPU_VRAM_TYPE_GDDR6");
    assert_eq!(get32(&v, 180), 256, "vram_bit_width");
    assert_eq!(get32(&v, 240), 32, "wave_front_size");
    assert_eq!(get32(&v, 248), 8, "num_cu_per_sh");
    assert_eq!(get32(&v, 252), 16, "num_tcc_blocks");
}
