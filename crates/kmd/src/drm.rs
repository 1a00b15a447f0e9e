//! The amdgpu DRM answers libdrm needs on the render node: the driver
//! version and the `AMDGPU_INFO` queries ROCr's libdrm_amdgpu issues
//! (ACCEL_WORKING, DEV_INFO, READ_MMR_REG of GB_ADDR_CONFIG, HW_IP_COUNT).

use crate::Errno;
use crate::abi::{Args, drm, put_u32, put_u64};
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
            // struct drm_version: 3 ints, pad, then (len, ptr) x 3.
            a.set_u32(0, VERSION.0);
            a.set_u32(4, VERSION.1);
            a.set_u32(8, VERSION.2);
            let fields = [(16, "amdgpu"), (32, "20150101"), (48, "AMD GPU")];
            for (off, s) in fields {
                let len = a.u64(off);
                let ptr = a.u64(off + 8);
                let full = copy_field(mem, ptr, len, s)?;
                a.set_u64(off, full);
            }
            Ok(0)
        }
        drm::GET_MAGIC | drm::SET_CLIENT_CAP | drm::GEM_CLOSE => Ok(0),
        drm::GET_CAP => {
            // Every capability asked of a render node here is absent.
            a.set_u64(8, 0);
            Ok(0)
        }
        drm::AMDGPU_INFO => info(spec, a, mem),
        _ => Err(Errno::EINVAL),
    }
}

fn info(spec: &GpuSpec, a: &mut Args, mem: &dyn UserMemory) -> Result<i32, Errno> {
    let out = a.u64(0);
    let size = a.u32(8) as usize;
    let query = a.u32(12);
    if out == 0 || size == 0 {
        return Err(Errno::EINVAL);
    }
    let reply: Vec<u8> = match query {
        drm::INFO_ACCEL_WORKING => 1u32.to_le_bytes().to_vec(),
        drm::INFO_HW_IP_COUNT => {
            // Compute rings (AMDGPU_HW_IP_COMPUTE = 1) and DMA (= 2).
            let ip = a.u32(16);
            let n: u32 = match ip {
                1 => 1,
                2 => spec.queues.sdma_engines,
                _ => 0,
            };
            n.to_le_bytes().to_vec()
        }
        drm::INFO_READ_MMR_REG => {
            let reg = a.u32(16);
            let count = a.u32(20).clamp(1, 64);
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
            let mut v = vec![0u8; 24];
            put_u64(&mut v, 0, spec.memory.size_bytes);
            put_u64(&mut v, 8, spec.memory.size_bytes);
            put_u64(&mut v, 16, GTT_BYTES);
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
    let mut v = vec![0u8; drm::DEV_INFO_SIZE];
    let ses = g.soc.xcds * g.soc.shader_engines_per_xcd;
    put_u32(&mut v, 0, g.pci.device_id.into());
    put_u32(&mut v, 4, 0); // chip_rev
    put_u32(&mut v, 8, 0); // external_rev
    put_u32(&mut v, 12, g.pci.revision_id.into());
    put_u32(&mut v, 16, drm::FAMILY_AI);
    put_u32(&mut v, 20, ses);
    put_u32(&mut v, 24, g.soc.shader_arrays_per_engine);
    put_u32(&mut v, 28, 100_000); // gpu_counter_freq, kHz
    put_u64(&mut v, 32, u64::from(g.soc.max_engine_clock_mhz) * 1000);
    put_u64(&mut v, 40, u64::from(g.memory.clock_mhz) * 1000);
    put_u32(&mut v, 48, g.soc.total_cus);
    // cu_bitmap[4][4]: active CUs per SE (first 16 SEs, as the kernel).
    for (se, &n) in g.soc.cus_per_shader_engine.iter().enumerate().take(16) {
        let bits = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        put_u32(&mut v, 56 + (se % 4) * 16 + (se / 4) * 4, bits);
    }
    put_u64(&mut v, 144, 0x20_0000); // virtual_address_offset
    put_u64(&mut v, 152, 0x7fff_ffff_f000); // virtual_address_max
    put_u32(&mut v, 160, 4096); // virtual_address_alignment
    put_u32(&mut v, 164, 0x20_0000); // pte_fragment_size
    put_u32(&mut v, 168, 4096); // gart_page_size
    put_u32(&mut v, 176, 6); // vram_type: AMDGPU_VRAM_TYPE_HBM
    put_u32(&mut v, 180, g.memory.bus_width_bits);
    put_u32(&mut v, 240, g.cu.wavefront_size);
    put_u32(&mut v, 244, g.cu.max_vgprs_per_wave);
    put_u32(&mut v, 248, g.soc.max_cus_per_shader_array);
    put_u32(&mut v, 252, g.caches.l2.channels * g.soc.xcds);
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
        let mut a = Args::new(&[0; 64], 64);
        a.set_u64(16, 16);
        a.set_u64(24, name.as_mut_ptr() as u64);
        ioctl(g, drm::VERSION, &mut a, &crate::user::Local).unwrap();
        assert_eq!(a.u32(0), 3);
        assert_eq!(a.u64(16), 6);
        assert_eq!(&name[..6], b"amdgpu");

        let mut dev = vec![0u8; drm::DEV_INFO_SIZE];
        let mut a = Args::new(&[0; 32], 32);
        a.set_u64(0, dev.as_mut_ptr() as u64);
        a.set_u32(8, dev.len() as u32);
        a.set_u32(12, drm::INFO_DEV_INFO);
        ioctl(g, drm::AMDGPU_INFO, &mut a, &crate::user::Local).unwrap();
        assert_eq!(u32::from_le_bytes(dev[0..4].try_into().unwrap()), 0x740f);
        assert_eq!(u32::from_le_bytes(dev[48..52].try_into().unwrap()), 104);

        let mut reg = [0u8; 4];
        let mut a = Args::new(&[0; 32], 32);
        a.set_u64(0, reg.as_mut_ptr() as u64);
        a.set_u32(8, 4);
        a.set_u32(12, drm::INFO_READ_MMR_REG);
        a.set_u32(16, drm::GB_ADDR_CONFIG_REG);
        a.set_u32(20, 1);
        ioctl(g, drm::AMDGPU_INFO, &mut a, &crate::user::Local).unwrap();
        assert_eq!(u32::from_le_bytes(reg), GB_ADDR_CONFIG);

        // A register range that runs past the 32-bit register space.
        let mut regs = [0u8; 8];
        let mut a = Args::new(&[0; 32], 32);
        a.set_u64(0, regs.as_mut_ptr() as u64);
        a.set_u32(8, 8);
        a.set_u32(12, drm::INFO_READ_MMR_REG);
        a.set_u32(16, u32::MAX);
        a.set_u32(20, 2);
        assert_eq!(
            ioctl(g, drm::AMDGPU_INFO, &mut a, &crate::user::Local),
            Err(Errno::EINVAL)
        );

        let mut a = Args::new(&[0; 32], 32);
        a.set_u32(12, drm::INFO_DEV_INFO);
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
