//! The amdgpu DRM answers libdrm needs on the render node: the driver
//! version and the `AMDGPU_INFO` queries ROCr's libdrm_amdgpu issues
//! (ACCEL_WORKING, DEV_INFO, READ_MMR_REG of GB_ADDR_CONFIG, HW_IP_COUNT).

use crate::Errno;
use crate::abi::{Args, drm, put};
use crate::user::UserMemory;
use rocjitsu_config::GpuSpec;

/// `GB_ADDR_CONFIG` with a 256-byte pipe interleave, which the image
/// address library requires on GFX9.
pub const GB_ADDR_CONFIG: u32 = 0x2a11_4042;

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

pub fn ioctl(spec: &GpuSpec, nr: u8, a: &mut Args, mem: &dyn UserMemory) -> Result<i32, Errno> {
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
        drm::GET_MAGIC | drm::SET_CLIENT_CAP | drm::GEM_CLOSE => Ok(0),
        drm::GET_CAP => {
            // Every capability asked of a render node here is absent.
            a.set(drm::get_cap::VALUE, 0);
            Ok(0)
        }
        drm::AMDGPU_INFO => info(spec, a, mem),
        _ => Err(Errno::EINVAL),
    }
}

fn info(spec: &GpuSpec, a: &mut Args, mem: &dyn UserMemory) -> Result<i32, Errno> {
    use drm::info as i;
    let out = a.get(i::RETURN_POINTER);
    let size = a.get(i::RETURN_SIZE) as usize;
    let query = a.get(i::QUERY);
    if out == 0 || size == 0 {
        return Err(Errno::EINVAL);
    }
    let reply: Vec<u8> = match query {
        drm::INFO_ACCEL_WORKING => 1u32.to_le_bytes().to_vec(),
        drm::INFO_HW_IP_COUNT => {
            // Compute rings (AMDGPU_HW_IP_COMPUTE = 1) and DMA (= 2).
            let ip = a.get(i::HW_IP_TYPE);
            let n: u32 = match ip {
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
        _ => return Err(Errno::EINVAL),
    };
    let n = reply.len().min(size);
    mem.write(out, &reply[..n])?;
    Ok(0)
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
    put(&mut v, d::FAMILY, drm::FAMILY_AI);
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
    // Active CUs per SE (first 16 SEs, as the kernel).
    let mut bitmap = [0u8; 64];
    for (se, &n) in g.soc.cus_per_shader_engine.iter().enumerate().take(16) {
        let bits: u32 = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        let at = (se % 4) * 16 + (se / 4) * 4;
        bitmap[at..at + 4].copy_from_slice(&bits.to_le_bytes());
    }
    put(&mut v, d::CU_BITMAP, bitmap);
    put(&mut v, d::VIRTUAL_ADDRESS_OFFSET, 0x20_0000);
    put(&mut v, d::VIRTUAL_ADDRESS_MAX, 0x7fff_ffff_f000);
    put(&mut v, d::VIRTUAL_ADDRESS_ALIGNMENT, 4096);
    put(&mut v, d::PTE_FRAGMENT_SIZE, 0x20_0000);
    put(&mut v, d::GART_PAGE_SIZE, 4096);
    put(&mut v, d::VRAM_TYPE, 6); // AMDGPU_VRAM_TYPE_HBM
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
        ioctl(g, drm::VERSION, &mut a, &crate::user::Local).unwrap();
        assert_eq!(a.get(v::VERSION_MAJOR), 3);
        assert_eq!(a.get(v::NAME_LEN), 6);
        assert_eq!(&name[..6], b"amdgpu");

        let mut dev = vec![0u8; drm::DEV_INFO_SIZE];
        let mut a = Args::new(&[0; 32], 32);
        a.set(i::RETURN_POINTER, dev.as_mut_ptr() as u64);
        a.set(i::RETURN_SIZE, dev.len() as u32);
        a.set(i::QUERY, drm::INFO_DEV_INFO);
        ioctl(g, drm::AMDGPU_INFO, &mut a, &crate::user::Local).unwrap();
        assert_eq!(get(&dev, drm::info_device::DEVICE_ID), 0x740f);
        assert_eq!(get(&dev, drm::info_device::CU_ACTIVE_NUMBER), 104);

        let mut reg = [0u8; 4];
        let mut a = Args::new(&[0; 32], 32);
        a.set(i::RETURN_POINTER, reg.as_mut_ptr() as u64);
        a.set(i::RETURN_SIZE, 4);
        a.set(i::QUERY, drm::INFO_READ_MMR_REG);
        a.set(i::MMR_DWORD_OFFSET, drm::GB_ADDR_CONFIG_REG);
        a.set(i::MMR_COUNT, 1);
        ioctl(g, drm::AMDGPU_INFO, &mut a, &crate::user::Local).unwrap();
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
            ioctl(g, drm::AMDGPU_INFO, &mut a, &crate::user::Local),
            Err(Errno::EINVAL)
        );

        let mut a = Args::new(&[0; 32], 32);
        a.set(i::QUERY, drm::INFO_DEV_INFO);
        assert_eq!(
            ioctl(g, drm::AMDGPU_INFO, &mut a, &crate::user::Local),
            Err(Errno::EINVAL)
        );
        assert_eq!(
            ioctl(g, 0x44, &mut a, &crate::user::Local),
            Err(Errno::EINVAL)
        );
    }
}
