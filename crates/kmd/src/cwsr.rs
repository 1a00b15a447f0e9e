//! The sizes of a compute queue's context save/restore (CWSR) area, as
//! KFD computes them for a node (`kfd_queue_ctx_save_restore_size`,
//! kfd_queue.c) and checks them against what the runtime passes to
//! CREATE_QUEUE (`kfd_queue_acquire_buffers`): the thunk computes the same
//! numbers from the node's topology properties, so a mismatch means the
//! two disagree about the GPU.

use rocjitsu_config::GpuSpec;

/// `SIZEOF_HSA_USER_CONTEXT_SAVE_AREA_HEADER`.
const HEADER: u32 = 40;
const SGPR_SIZE_PER_CU: u32 = 0x4000;
const LDS_SIZE_PER_CU: u32 = 0x10000;
const HWREG_SIZE_PER_CU: u32 = 0x1000;
const DEBUGGER_BYTES_PER_WAVE: u32 = 32;
const DEBUGGER_BYTES_ALIGN: u32 = 64;
const PAGE: u32 = 4096;

/// A node's CWSR sizes, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CwsrSizes {
    /// The control stack, header included (`ctl_stack_size`).
    pub ctl_stack: u32,
    /// The whole save area of one XCC: control stack and workgroup data
    /// (`cwsr_size`).
    pub cwsr: u32,
    /// The debugger's memory after it (`debug_memory_size`).
    pub debug_memory: u32,
}

fn align(v: u32, to: u32) -> u32 {
    v.div_ceil(to) * to
}

/// VGPR file bytes per CU: 512 KiB on the CDNA parts with AccVGPRs, 384
/// KiB on Navi 31/32 and RDNA4 (1.5 times the VGPRs), 256 KiB otherwise.
fn vgpr_size_per_cu(gfxv: u32) -> u32 {
    match gfxv {
        90402 | 90010 | 90008 | 90500 => 0x80000,
        110000 | 110001 | 120000 | 120001 => 0x60000,
        _ => 0x40000,
    }
}

/// The sizes KFD computes for GPU `g`.
pub fn sizes(g: &GpuSpec) -> CwsrSizes {
    let gfxv = g.gfx_target_version;
    let props: std::collections::HashMap<&str, u64> = g.kfd_properties().into_iter().collect();
    let p = |k: &str| props.get(k).copied().unwrap_or(0) as u32;
    let cu_num = p("simd_count") / p("simd_per_cu").max(1) / g.soc.xcds.max(1);
    // Before GFX10 the waves a CU saves are bounded by the SPI's.
    let wave_num = if gfxv < 100100 {
        (cu_num * 40).min(p("array_count") / p("simd_arrays_per_engine").max(1) * 512)
    } else {
        cu_num * 32
    };
    let lds = if gfxv == 90500 {
        p("lds_size_in_kb") << 10
    } else {
        LDS_SIZE_PER_CU
    };
    let per_cu = vgpr_size_per_cu(gfxv) + SGPR_SIZE_PER_CU + lds + HWREG_SIZE_PER_CU;
    let wg_data = align(cu_num * per_cu, PAGE);
    let bytes_per_wave = if gfxv >= 100100 { 12 } else { 8 };
    let mut ctl_stack = align(HEADER + wave_num * bytes_per_wave + 8, PAGE);
    if gfxv / 10000 == 10 {
        // GFX10's hardware limits the control stack to 0x7000 bytes.
        ctl_stack = ctl_stack.min(0x7000);
    }
    CwsrSizes {
        ctl_stack,
        cwsr: ctl_stack + wg_data,
        debug_memory: align(wave_num * DEBUGGER_BYTES_PER_WAVE, DEBUGGER_BYTES_ALIGN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocjitsu_config::{GpuConfig, Target};

    /// The sizes follow from the node properties as the kernel computes
    /// them: the W7900 saves 32 waves of 96 CUs, 12 control-stack bytes
    /// each, and 384 KiB of VGPRs per CU; the MI210 40 waves of 104 CUs, 8
    /// bytes each, and 512 KiB.
    #[test]
    fn kfd_sizes_by_target() {
        let w7900 = sizes(&GpuConfig::builtin(Target::Gfx1100).gpus[0]);
        let ctl = align(40 + 96 * 32 * 12 + 8, 4096);
        assert_eq!(w7900.ctl_stack, ctl);
        assert_eq!(
            w7900.cwsr,
            ctl + align(96 * (0x60000 + 0x4000 + 0x10000 + 0x1000), 4096)
        );
        assert_eq!(w7900.debug_memory, 96 * 32 * 32);
        let mi210 = sizes(&GpuConfig::builtin(Target::Gfx90a).gpus[0]);
        let ctl = align(40 + 104 * 40 * 8 + 8, 4096);
        assert_eq!(mi210.ctl_stack, ctl);
        assert_eq!(
            mi210.cwsr,
            ctl + align(104 * (0x80000 + 0x4000 + 0x10000 + 0x1000), 4096)
        );
        // MI300X: per XCC (38 CUs), MI355X with its 160 KiB LDS.
        let mi300 = sizes(&GpuConfig::builtin(Target::Gfx942).gpus[0]);
        assert_eq!(mi300.ctl_stack, align(40 + 38 * 40 * 8 + 8, 4096));
        // The R9700: the sizes a real Navi 48 node reports (`cwsr_size`
        // 30699520, `ctl_stack_size` 28672: 32 waves of 64 CUs, 384 KiB of
        // VGPRs per CU).
        let r9700 = sizes(&GpuConfig::builtin(Target::Gfx1201).gpus[0]);
        assert_eq!((r9700.cwsr, r9700.ctl_stack), (30_699_520, 28_672));
        let mi355 = sizes(&GpuConfig::builtin(Target::Gfx950).gpus[0]);
        assert_eq!(
            mi355.cwsr - mi355.ctl_stack,
            align(32 * (0x80000 + 0x4000 + 160 * 1024 + 0x1000), 4096)
        );
    }
}
