//! The amdgpu DRM answers libdrm needs on the render node: the driver
//! version and the `AMDGPU_INFO` queries ROCr's libdrm_amdgpu issues
//! (ACCEL_WORKING, DEV_INFO, READ_MMR_REG of GB_ADDR_CONFIG, HW_IP_COUNT)
//! and those runtimes that drive KFD themselves read (tinygrad):
//! HW_IP_INFO, FW_VERSION, MEMORY. Each follows `amdgpu_info_ioctl`
//! (amdgpu_kms.c), errnos included; the emulated GPUs have no video
//! engines, so the video queries get what amdgpu gives a GPU without them.

use crate::Errno;
use crate::abi::{Args, drm, put};
use crate::user::UserMemory;
use rocjitsu_config::GpuSpec;
use rocjitsu_config::ip::{self, IpVersion};

/// `GB_ADDR_CONFIG` with a 256-byte pipe interleave, which the image
/// address library requires on GFX9: the GPU's, since tiled images are
/// laid out from it both by ROCr's address library and by the emulated
/// texture unit.
pub const GB_ADDR_CONFIG: u32 = rocjitsu_gpu::exec::mimg::tiling::GB_ADDR_CONFIG;

/// The amdgpu DRM version (major 3 as every amdgpu since 2015).
const VERSION: (u32, u32, u32) = (3, 57, 0);

/// Copies `s` to a user buffer of `len` bytes at `ptr` and returns the full
/// length, as `drm_copy_field` does.
/// The GTT size the render node reports (`AMDGPU_INFO_VRAM_GTT`): what a
/// daemon's client may hold in GTT buffers at most
/// ([`crate::daemon::ClientLimits`]).
pub const GTT_BYTES: u64 = 16 << 30;

fn copy_field(mem: &dyn UserMemory, ptr: u64, len: u64, s: &str) -> Result<u64, Errno> {
    let n = (s.len() as u64).min(len) as usize;
    if n > 0 && ptr != 0 {
        mem.write(ptr, &s.as_bytes()[..n])?;
    }
    Ok(s.len() as u64)
}

/// A render-node ioctl on GPU `spec`, of which `vram_used` bytes are
/// allocated (by every process).
pub fn ioctl(
    spec: &GpuSpec,
    vram_used: u64,
    nr: u8,
    a: &mut Args,
    mem: &dyn UserMemory,
) -> Result<i32, Errno> {
    match nr {
        drm::VERSION => {
            use drm::version as v;
            a.set(v::VERSION_MAJOR, VERSION.0);
            a.set(v::VERSION_MINOR, VERSION.1);
            a.set(v::VERSION_PATCHLEVEL, VERSION.2);
            let fields = [
                (v::NAME_LEN, v::NAME, "amdgpu"),
                (v::DATE_LEN, v::DATE, "20150101"),
                (v::DESC_LEN, v::DESC, "AMD GPU"),
            ];
            for (len, ptr, s) in fields {
                let full = copy_field(mem, a.get(ptr), a.get(len), s)?;
                a.set(len, full);
            }
            Ok(0)
        }
        drm::GET_MAGIC | drm::SET_CLIENT_CAP => Ok(0),
        drm::GET_CAP => {
            // Every capability asked of a render node here is absent.
            a.set(drm::get_cap::VALUE, 0);
            Ok(0)
        }
        drm::AMDGPU_INFO => info(spec, vram_used, a, mem),
        _ => Err(Errno::EINVAL),
    }
}

fn info(spec: &GpuSpec, vram_used: u64, a: &mut Args, mem: &dyn UserMemory) -> Result<i32, Errno> {
    use drm::info as i;
    let out = a.get(i::RETURN_POINTER);
    let size = a.get(i::RETURN_SIZE) as usize;
    let query = a.get(i::QUERY);
    tracing::debug!("AMDGPU_INFO query 0x{query:02x}");
    if out == 0 || size == 0 {
        return Err(Errno::EINVAL);
    }
    let reply: Vec<u8> = match query {
        drm::INFO_ACCEL_WORKING => 1u32.to_le_bytes().to_vec(),
        drm::INFO_HW_IP_COUNT => {
            // Compute rings (AMDGPU_HW_IP_COMPUTE = 1), DMA (= 2) and,
            // on RDNA, GFX (= 0).
            let ip = a.get(i::HW_IP_TYPE);
            let gc = ip::version_of(spec, ip::hw_id::GC).unwrap_or_default();
            let n: u32 = match ip {
                0 => gfx_rings(gc),
                1 => 1,
                2 => spec.queues.sdma_engines,
                _ => 0,
            };
            n.to_le_bytes().to_vec()
        }
        drm::INFO_READ_MMR_REG => {
            let reg = a.get(i::MMR_DWORD_OFFSET);
            let count = a.get(i::MMR_COUNT).clamp(1, 64);
            let mut v = Vec::new();
            // The register range is the client's: one past the end of
            // the 32-bit register space is EINVAL.
            reg.checked_add(count - 1).ok_or(Errno::EINVAL)?;
            for i in 0..count {
                let val = if reg + i == drm::GB_ADDR_CONFIG_REG {
                    GB_ADDR_CONFIG
                } else {
                    0
                };
                v.extend_from_slice(&val.to_le_bytes());
            }
            v
        }
        drm::INFO_DEV_INFO => dev_info(spec),
        drm::INFO_VRAM_GTT => {
            use drm::info_vram_gtt as m;
            let mut v = vec![0u8; m::SIZE];
            put(&mut v, m::VRAM_SIZE, spec.memory.size_bytes);
            put(&mut v, m::VRAM_CPU_ACCESSIBLE_SIZE, spec.memory.size_bytes);
            put(&mut v, m::GTT_SIZE, GTT_BYTES);
            v
        }
        drm::INFO_HW_IP_INFO => hw_ip_info(spec, a.get(i::HW_IP_TYPE), a.get(i::HW_IP_INSTANCE))?,
        drm::INFO_FW_VERSION => {
            // "We only support one instance of each IP block right now."
            if a.get(i::FW_IP_INSTANCE) != 0 {
                return Err(Errno::EINVAL);
            }
            firmware(spec, a.get(i::FW_TYPE), a.get(i::FW_INDEX))?
        }
        drm::INFO_MEMORY => memory(spec, vram_used),
        // `query_video_codecs` finds no VCN, for either type, and any
        // other type is refused too: EINVAL.
        drm::INFO_VIDEO_CAPS => return Err(Errno::EINVAL),
        _ => return Err(Errno::EINVAL),
    };
    let n = reply.len().min(size);
    mem.write(out, &reply[..n])?;
    Ok(0)
}

/// VRAM amdgpu keeps for page tables (`AMDGPU_VM_RESERVED_VRAM`,
/// amdgpu_vm.h): not usable by allocations.
const VM_RESERVED_VRAM: u64 = 8 << 20;

/// Compute rings the kernel sets up per GPU (`amdgpu_num_kcq`'s default,
/// 8), of which a context gets at most `amdgpu_ctx_num_entities`: 4 for
/// COMPUTE, 2 for DMA, 1 for GFX.
const KERNEL_COMPUTE_RINGS: u32 = 8;

/// The amdgpu IP block (driver) that runs GC version `gc`, as
/// `amdgpu_discovery_set_gc_ip_blocks` picks it, by its version:
/// `gfx_v9_0_ip_block` (9.0) up to GC 9.4.2, `gfx_v9_4_3_ip_block` (9.4)
/// for GC 9.4.3, 9.4.4 and 9.5.0, `gfx_v11_0_ip_block` (11.0) for GC 11,
/// `gfx_v12_0_ip_block` (12.0) for GC 12.0.0 and 12.0.1.
fn gfx_block(gc: IpVersion) -> (u32, u32) {
    if gc.0 == 12 {
        (12, 0)
    } else if gc.0 == 11 {
        (11, 0)
    } else if gc >= (9, 4, 3) {
        (9, 4)
    } else {
        (9, 0)
    }
}

/// GFX (graphics) rings the kernel gives a context: none on CDNA, which has
/// no graphics pipe; one on RDNA (`amdgpu_ctx_num_entities`: 1 for GFX).
fn gfx_rings(gc: IpVersion) -> u32 {
    u32::from(gc.0 >= 10)
}

/// The SDMA IP block (`amdgpu_discovery_set_sdma_ip_blocks`):
/// `sdma_v4_0_ip_block` (4.0) up to SDMA 4.4.0, `sdma_v4_4_2_ip_block`
/// (4.4) for 4.4.2, 4.4.4 and 4.4.5, `sdma_v6_0_ip_block` (6.0) for SDMA 6,
/// `sdma_v7_0_ip_block` (7.0) for SDMA 7.0.0 and 7.0.1 (GC 12).
/// Where the SDMA version is not known (MI350, Strix Halo), the GC version
/// tells: sdma_v4_4_2.c serves the GC 9.4.3 family, GC 9.5.0 included (its
/// queue-reset switch names it); every GC 11 part has an SDMA 6.
fn sdma_block(sdma: Option<IpVersion>, gc: IpVersion) -> (u32, u32) {
    match sdma {
        Some(v) if v.0 == 7 => (7, 0),
        Some(v) if v.0 == 6 => (6, 0),
        Some(v) if v >= (4, 4, 2) => (4, 4),
        Some(_) => (4, 0),
        None if gc.0 >= 12 => (7, 0),
        None if gc.0 >= 11 => (6, 0),
        None if gc >= (9, 4, 3) => (4, 4),
        None => (4, 0),
    }
}

/// `IP_VERSION_MAJ_MIN_REV`: bits 23:16 major, 15:8 minor, 7:0 revision.
fn packed(v: IpVersion) -> u32 {
    u32::from(v.0) << 16 | u32::from(v.1) << 8 | u32::from(v.2)
}

/// `AMDGPU_INFO_HW_IP_INFO` (`amdgpu_hw_ip_info`).
fn hw_ip_info(g: &GpuSpec, ty: u32, instance: u32) -> Result<Vec<u8>, Errno> {
    use drm::info_hw_ip as h;
    if instance >= drm::HW_IP_INSTANCE_MAX_COUNT || ty >= drm::HW_IP_NUM {
        return Err(Errno::EINVAL);
    }
    let mut v = vec![0u8; drm::HW_IP_INFO_SIZE];
    let gc = ip::version_of(g, ip::hw_id::GC).unwrap_or_default();
    let (block, rings, (start, size), discovery) = match ty {
        // GFX and COMPUTE are the same block; CDNA has no GFX rings.
        drm::HW_IP_GFX | drm::HW_IP_COMPUTE => {
            let rings = if ty == drm::HW_IP_GFX {
                gfx_rings(gc)
            } else {
                KERNEL_COMPUTE_RINGS.min(4)
            };
            (gfx_block(gc), rings, (32, 32), Some(gc))
        }
        drm::HW_IP_DMA => {
            let sdma = ip::version_of(g, ip::hw_id::SDMA0);
            let engines = g.queues.sdma_engines + g.queues.sdma_xgmi_engines;
            (sdma_block(sdma, gc), engines.min(2), (256, 4), sdma)
        }
        // No such engine: amdgpu finds no block and answers zeros.
        _ => return Ok(v),
    };
    put(&mut v, h::HW_IP_VERSION_MAJOR, block.0);
    put(&mut v, h::HW_IP_VERSION_MINOR, block.1);
    put(&mut v, h::CAPABILITIES_FLAGS, 0);
    put(&mut v, h::IB_START_ALIGNMENT, start);
    put(&mut v, h::IB_SIZE_ALIGNMENT, size);
    put(&mut v, h::AVAILABLE_RINGS, (1u32 << rings) - 1);
    // 0 where the version is not known (MI350's SDMA).
    put(&mut v, h::IP_DISCOVERY_VERSION, discovery.map_or(0, packed));
    Ok(v)
}

/// `AMDGPU_INFO_FW_VERSION` (`amdgpu_firmware_info`): the MEC and SDMA
/// versions the configuration gives (KFD's `fw_version`, `sdma_fw_version`,
/// which amdgpu takes from the same fields); every other firmware the GPU
/// has reports version 0 (not modelled), with no feature versions.
fn firmware(g: &GpuSpec, fw_type: u32, index: u32) -> Result<Vec<u8>, Errno> {
    use drm::info_firmware as f;
    let engines = g.queues.sdma_engines + g.queues.sdma_xgmi_engines;
    let ver = match fw_type {
        drm::FW_GFX_MEC => match index {
            0 => g.kfd.fw_version,
            // MEC2: not in the configuration.
            1 => 0,
            _ => return Err(Errno::EINVAL),
        },
        drm::FW_SDMA if index < engines => g.kfd.sdma_fw_version,
        drm::FW_SDMA => return Err(Errno::EINVAL),
        // TA_FW_TYPE_PSP_XGMI (2) to TA_FW_TYPE_PSP_SECUREDISPLAY (7).
        drm::FW_TA if (2..=7).contains(&index) => 0,
        drm::FW_TA => return Err(Errno::EINVAL),
        0x01..=0x07 | 0x0a..=drm::FW_LAST => 0,
        _ => return Err(Errno::EINVAL),
    };
    let mut v = vec![0u8; f::SIZE];
    put(&mut v, f::VER, ver);
    put(&mut v, f::FEATURE, 0);
    Ok(v)
}

/// `AMDGPU_INFO_MEMORY`: VRAM less what page tables keep, all of it
/// CPU-visible (as `INFO_VRAM_GTT` reports), in use as the device's VRAM
/// pool says; GTT as `INFO_VRAM_GTT` gives it (its use is not tracked).
/// The largest allocation is 3/4 of a heap, as amdgpu computes it.
fn memory(g: &GpuSpec, vram_used: u64) -> Vec<u8> {
    use drm::memory_info as m;
    let mut v = vec![0u8; m::SIZE];
    let total = g.memory.size_bytes;
    let usable = total.saturating_sub(VM_RESERVED_VRAM);
    put(&mut v, m::VRAM_TOTAL_HEAP_SIZE, total);
    put(&mut v, m::VRAM_USABLE_HEAP_SIZE, usable);
    put(&mut v, m::VRAM_HEAP_USAGE, vram_used);
    put(&mut v, m::VRAM_MAX_ALLOCATION, usable * 3 / 4);
    put(&mut v, m::CPU_VRAM_TOTAL_HEAP_SIZE, total);
    put(&mut v, m::CPU_VRAM_USABLE_HEAP_SIZE, usable);
    put(&mut v, m::CPU_VRAM_HEAP_USAGE, vram_used);
    put(&mut v, m::CPU_VRAM_MAX_ALLOCATION, usable * 3 / 4);
    put(&mut v, m::GTT_TOTAL_HEAP_SIZE, GTT_BYTES);
    put(&mut v, m::GTT_USABLE_HEAP_SIZE, GTT_BYTES);
    put(&mut v, m::GTT_HEAP_USAGE, 0);
    put(&mut v, m::GTT_MAX_ALLOCATION, GTT_BYTES * 3 / 4);
    v
}

/// `struct drm_amdgpu_info_device` (libdrm 2.4.114 layout; newer libdrm
/// reads a longer struct and gets zeros past it).
fn dev_info(g: &GpuSpec) -> Vec<u8> {
    use drm::info_device as d;
    let mut v = vec![0u8; drm::DEV_INFO_SIZE];
    let ses = g.soc.xcds * g.soc.shader_engines_per_xcd;
    put(&mut v, d::DEVICE_ID, g.pci.device_id.into());
    put(&mut v, d::CHIP_REV, 0);
    put(&mut v, d::EXTERNAL_REV, 0);
    put(&mut v, d::PCI_REV, g.pci.revision_id.into());
    let gc = ip::version_of(g, ip::hw_id::GC).unwrap_or_default();
    let family = match gc {
        (12, 0, _) => drm::FAMILY_GC_12_0_0,
        (11, 5, _) => drm::FAMILY_GC_11_5_0,
        (11, ..) => drm::FAMILY_GC_11_0_0,
        _ => drm::FAMILY_AI,
    };
    put(&mut v, d::FAMILY, family);
    // amdgpu_kms.c: an APU's device info carries AMDGPU_IDS_FLAGS_FUSION.
    put(
        &mut v,
        d::IDS_FLAGS,
        if g.apu { drm::IDS_FLAGS_FUSION } else { 0 },
    );
    put(&mut v, d::NUM_SHADER_ENGINES, ses);
    put(
        &mut v,
        d::NUM_SHADER_ARRAYS_PER_ENGINE,
        g.soc.shader_arrays_per_engine,
    );
    put(&mut v, d::GPU_COUNTER_FREQ, 100_000);
    put(
        &mut v,
        d::MAX_ENGINE_CLOCK,
        u64::from(g.soc.max_engine_clock_mhz) * 1000,
    );
    put(
        &mut v,
        d::MAX_MEMORY_CLOCK,
        u64::from(g.memory.clock_mhz) * 1000,
    );
    put(&mut v, d::CU_ACTIVE_NUMBER, g.soc.total_cus);
    // Active CUs of each shader array, at `[se % 4][sa + (se / 4) * sas]`
    // (gfx_v9_0_get_cu_info with one array per engine; gfx_v11_0_get_cu_info
    // puts engines 4..7 in the last two columns), as far as the 4x4 fits.
    let mut bitmap = [0u8; 64];
    let sas = g.soc.shader_arrays_per_engine.max(1) as usize;
    for (se, &n) in g.soc.cus_per_shader_engine.iter().enumerate() {
        for sa in 0..sas {
            let col = sa + (se / 4) * sas;
            if col >= 4 {
                continue;
            }
            let per = n as usize / sas + usize::from(sa < n as usize % sas);
            let bits: u32 = if per >= 32 {
                u32::MAX
            } else {
                (1u32 << per) - 1
            };
            let at = (se % 4) * 16 + col * 4;
            bitmap[at..at + 4].copy_from_slice(&bits.to_le_bytes());
        }
    }
    put(&mut v, d::CU_BITMAP, bitmap);
    put(&mut v, d::VIRTUAL_ADDRESS_OFFSET, 0x20_0000);
    put(&mut v, d::VIRTUAL_ADDRESS_MAX, 0x7fff_ffff_f000);
    put(&mut v, d::VIRTUAL_ADDRESS_ALIGNMENT, 4096);
    put(&mut v, d::PTE_FRAGMENT_SIZE, 0x20_0000);
    put(&mut v, d::GART_PAGE_SIZE, 4096);
    let kind = g.memory.kind.to_ascii_uppercase();
    let vram_type = if kind == "GDDR6" {
        drm::VRAM_TYPE_GDDR6
    } else if kind.starts_with("LPDDR5") {
        drm::VRAM_TYPE_LPDDR5
    } else {
        drm::VRAM_TYPE_HBM
    };
    put(&mut v, d::VRAM_TYPE, vram_type);
    put(&mut v, d::VRAM_BIT_WIDTH, g.memory.bus_width_bits);
    put(&mut v, d::WAVE_FRONT_SIZE, g.cu.wavefront_size);
    put(&mut v, d::NUM_SHADER_VISIBLE_VGPRS, g.cu.max_vgprs_per_wave);
    put(&mut v, d::NUM_CU_PER_SH, g.soc.max_cus_per_shader_array);
    put(&mut v, d::NUM_TCC_BLOCKS, g.caches.l2.channels * g.soc.xcds);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocjitsu_config::{GpuConfig, Target};

    #[test]
    fn version_and_dev_info() {
        let cfg = GpuConfig::builtin(Target::Gfx90a);
        let g = &cfg.gpus[0];
        let mut name = [0u8; 16];
        use crate::abi::get;
        use drm::{info as i, version as v};
        let mut a = Args::new(&[0; 64], 64);
        a.set(v::NAME_LEN, 16);
        a.set(v::NAME, name.as_mut_ptr() as u64);
        ioctl(g, 0, drm::VERSION, &mut a, &crate::user::Local).unwrap();
        assert_eq!(a.get(v::VERSION_MAJOR), 3);
        assert_eq!(a.get(v::NAME_LEN), 6);
        assert_eq!(&name[..6], b"amdgpu");

        let mut dev = vec![0u8; drm::DEV_INFO_SIZE];
        let mut a = Args::new(&[0; 32], 32);
        a.set(i::RETURN_POINTER, dev.as_mut_ptr() as u64);
        a.set(i::RETURN_SIZE, dev.len() as u32);
        a.set(i::QUERY, drm::INFO_DEV_INFO);
        ioctl(g, 0, drm::AMDGPU_INFO, &mut a, &crate::user::Local).unwrap();
        assert_eq!(get(&dev, drm::info_device::DEVICE_ID), 0x740f);
        assert_eq!(get(&dev, drm::info_device::CU_ACTIVE_NUMBER), 104);

        let mut reg = [0u8; 4];
        let mut a = Args::new(&[0; 32], 32);
        a.set(i::RETURN_POINTER, reg.as_mut_ptr() as u64);
        a.set(i::RETURN_SIZE, 4);
        a.set(i::QUERY, drm::INFO_READ_MMR_REG);
        a.set(i::MMR_DWORD_OFFSET, drm::GB_ADDR_CONFIG_REG);
        a.set(i::MMR_COUNT, 1);
        ioctl(g, 0, drm::AMDGPU_INFO, &mut a, &crate::user::Local).unwrap();
        assert_eq!(u32::from_le_bytes(reg), GB_ADDR_CONFIG);

        // A register range that runs past the 32-bit register space.
        let mut regs = [0u8; 8];
        let mut a = Args::new(&[0; 32], 32);
        a.set(i::RETURN_POINTER, regs.as_mut_ptr() as u64);
        a.set(i::RETURN_SIZE, 8);
        a.set(i::QUERY, drm::INFO_READ_MMR_REG);
        a.set(i::MMR_DWORD_OFFSET, u32::MAX);
        a.set(i::MMR_COUNT, 2);
        assert_eq!(
            ioctl(g, 0, drm::AMDGPU_INFO, &mut a, &crate::user::Local),
            Err(Errno::EINVAL)
        );

        let mut a = Args::new(&[0; 32], 32);
        a.set(i::QUERY, drm::INFO_DEV_INFO);
        assert_eq!(
            ioctl(g, 0, drm::AMDGPU_INFO, &mut a, &crate::user::Local),
            Err(Errno::EINVAL)
        );
        assert_eq!(
            ioctl(g, 0, 0x44, &mut a, &crate::user::Local),
            Err(Errno::EINVAL)
        );
    }

    /// The device info of the Strix Halo APU carries the fusion flag (an
    /// integrated GPU to libdrm, libhsakmt and ROCr), GC 11.5's family and
    /// LPDDR5 memory; the W7900's is a discrete GDDR6 GC 11.0 part.
    #[test]
    fn apu_dev_info_has_the_fusion_flag() {
        use crate::abi::get;
        use drm::info as i;
        let dev_info = |t: Target| {
            let cfg = GpuConfig::builtin(t);
            let mut dev = vec![0u8; drm::DEV_INFO_SIZE];
            let mut a = Args::new(&[0; 32], 32);
            a.set(i::RETURN_POINTER, dev.as_mut_ptr() as u64);
            a.set(i::RETURN_SIZE, dev.len() as u32);
            a.set(i::QUERY, drm::INFO_DEV_INFO);
            ioctl(
                &cfg.gpus[0],
                0,
                drm::AMDGPU_INFO,
                &mut a,
                &crate::user::Local,
            )
            .unwrap();
            dev
        };
        let d = drm::info_device::IDS_FLAGS;
        let strix = dev_info(Target::Gfx1151);
        assert_eq!(get(&strix, d), drm::IDS_FLAGS_FUSION);
        assert_eq!(get(&strix, drm::info_device::FAMILY), 150);
        assert_eq!(get(&strix, drm::info_device::VRAM_TYPE), 12);
        assert_eq!(get(&strix, drm::info_device::DEVICE_ID), 0x1586);
        assert_eq!(get(&strix, drm::info_device::CU_ACTIVE_NUMBER), 40);
        assert_eq!(get(&strix, drm::info_device::NUM_SHADER_ENGINES), 2);
        let w7900 = dev_info(Target::Gfx1100);
        assert_eq!(get(&w7900, d), 0);
        assert_eq!(get(&w7900, drm::info_device::FAMILY), 145);
        assert_eq!(get(&w7900, drm::info_device::VRAM_TYPE), 9);
    }
}
