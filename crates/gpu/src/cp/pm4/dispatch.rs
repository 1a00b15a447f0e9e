//! A PM4 queue's registers and its dispatches: DISPATCH_DIRECT and
//! DISPATCH_INDIRECT launch the kernel the COMPUTE_* registers describe
//! (`gc_9_*_offset.h`, `gc_11_0_0_offset.h`: the same offsets but for
//! COMPUTE_PGM_RSRC3 and the units of COMPUTE_TMPRING_SIZE) on the same
//! wave engine as an AQL dispatch. There is no kernel descriptor: one is made from the
//! registers, enabling no user SGPR of its own, and the waves start with
//! COMPUTE_USER_DATA_0.. in their first USER_SGPR_COUNT SGPRs, the system
//! SGPRs COMPUTE_PGM_RSRC2 enables after them.

use super::super::launch::{self, MAX_PRIVATE};
use super::{At, Pm4};
use crate::cp::{Cx, Stop};
use crate::exec::dispatch::{Extra, Launch};
use rocjitsu_code::KernelDescriptor;
use rocjitsu_code::descriptor::{KERNEL_DESCRIPTOR_SIZE, PgmRsrc1, PgmRsrc2, PgmRsrc3};
use rocjitsu_config::Family;
use std::collections::HashMap;

pub const COMPUTE_DISPATCH_INITIATOR: u32 = 0x2e00;
pub const COMPUTE_DIM_X: u32 = 0x2e01;
pub const COMPUTE_START_X: u32 = 0x2e04;
pub const COMPUTE_NUM_THREAD_X: u32 = 0x2e07;
pub const COMPUTE_PGM_LO: u32 = 0x2e0c;
pub const COMPUTE_PGM_HI: u32 = 0x2e0d;
pub const COMPUTE_PGM_RSRC1: u32 = 0x2e12;
pub const COMPUTE_PGM_RSRC2: u32 = 0x2e13;
pub const COMPUTE_TMPRING_SIZE: u32 = 0x2e18;
/// gfx90a and gfx94x (kfdtest's `mmCOMPUTE_PGM_RSRC3` for Aldebaran).
pub const COMPUTE_PGM_RSRC3: u32 = 0x2e2d;
/// GFX10 and later (`regCOMPUTE_PGM_RSRC3` of `gc_11_0_0_offset.h`: 0x1bc8
/// in segment 0, whose base is 0x1260).
pub const COMPUTE_PGM_RSRC3_GFX10: u32 = 0x2e28;
pub const COMPUTE_USER_DATA_0: u32 = 0x2e40;
/// COMPUTE_USER_DATA_0..15.
const USER_DATA: u32 = 16;

/// DISPATCH_INITIATOR bits.
const COMPUTE_SHADER_EN: u32 = 1 << 0;
const PARTIAL_TG_EN: u32 = 1 << 1;
const FORCE_START_AT_000: u32 = 1 << 2;
const USE_THREAD_DIMENSIONS: u32 = 1 << 5;
/// CS_W32_EN (GFX10 and later): the waves have 32 lanes.
const CS_W32_EN: u32 = 1 << 15;

/// LDS_SIZE granule of COMPUTE_PGM_RSRC2 on gfx9: 128 dwords.
const LDS_GRANULE: u32 = 512;

/// The registers a queue has written, by dword offset (unwritten ones read
/// 0).
#[derive(Default)]
pub struct Regs(HashMap<u32, u32>);

impl Regs {
    pub fn get(&self, r: u32) -> u32 {
        self.0.get(&r).copied().unwrap_or(0)
    }

    pub fn set(&mut self, r: u32, v: u32) {
        self.0.insert(r, v);
    }

    fn three(&self, first: u32) -> [u32; 3] {
        std::array::from_fn(|i| self.get(first + i as u32))
    }
}

/// A work-item's private memory from COMPUTE_TMPRING_SIZE: WAVESIZE is a
/// wave's scratch, shared by its lanes; on gfx9 bits 12-24 in units of
/// 1 KiB, on GFX11 bits 12-26 in units of 256 bytes (64 dwords;
/// `COMPUTE_TMPRING_SIZE_GFX11` of ROCr's register headers, and Mesa's
/// `S_0286E8_WAVESIZE_GFX11` takes the wave's bytes over 256).
fn private_per_lane(family: Family, tmpring: u32, wave32: bool) -> u32 {
    let wave_bytes = match family {
        Family::Gfx9 | Family::Gfx10 => ((tmpring >> 12) & 0x1fff) * 1024,
        Family::Gfx11 | Family::Gfx12 => ((tmpring >> 12) & 0x7fff) * 256,
    };
    let lanes = if wave32 { 32 } else { 64 };
    (wave_bytes / lanes).min(MAX_PRIVATE)
}

impl Pm4 {
    /// Runs a dispatch of `dims` (workgroups, or work-items with
    /// USE_THREAD_DIMENSIONS) with DISPATCH_INITIATOR `initiator`, as a
    /// DISPATCH_DIRECT/INDIRECT at `at` asks. The dimensions are end
    /// values: without FORCE_START_AT_000 the workgroups run from
    /// COMPUTE_START_* up to them.
    pub(super) fn dispatch(
        &mut self,
        cx: &Cx,
        at: At,
        dims: [u32; 3],
        initiator: u32,
    ) -> Result<(), Stop> {
        for (i, &d) in dims.iter().enumerate() {
            self.regs.set(COMPUTE_DIM_X + i as u32, d);
        }
        self.regs.set(COMPUTE_DISPATCH_INITIATOR, initiator);
        if initiator & COMPUTE_SHADER_EN == 0 {
            return Ok(());
        }
        let r = &self.regs;
        let block = r.three(COMPUTE_NUM_THREAD_X).map(|n| n & 0xffff);
        let start = if initiator & FORCE_START_AT_000 != 0 {
            [0; 3]
        } else {
            r.three(COMPUTE_START_X)
        };
        let (grid, items) = if initiator & USE_THREAD_DIMENSIONS != 0 {
            if start != [0; 3] {
                return Err(self.bad(
                    cx,
                    at,
                    &format!("COMPUTE_START {start:?} with USE_THREAD_DIMENSIONS is not supported"),
                ));
            }
            if block.contains(&0) {
                return Err(self.bad(
                    cx,
                    at,
                    &format!("COMPUTE_NUM_THREAD gives workgroups of {block:?} work-items"),
                ));
            }
            // A partial last workgroup runs only with PARTIAL_TG_EN.
            let partial = initiator & PARTIAL_TG_EN != 0;
            let grid: [u32; 3] = std::array::from_fn(|i| {
                if partial {
                    dims[i].div_ceil(block[i])
                } else {
                    dims[i] / block[i]
                }
            });
            (grid, partial.then(|| dims.map(u64::from)))
        } else {
            (
                std::array::from_fn(|i| dims[i].saturating_sub(start[i])),
                None,
            )
        };
        if grid.contains(&0) {
            return Ok(());
        }
        let entry =
            (u64::from(r.get(COMPUTE_PGM_LO)) | u64::from(r.get(COMPUTE_PGM_HI) & 0xff) << 32) << 8;
        let mut kd = KernelDescriptor::from_bytes(&[0; KERNEL_DESCRIPTOR_SIZE]);
        kd.compute_pgm_rsrc1 = PgmRsrc1::from_raw(r.get(COMPUTE_PGM_RSRC1));
        kd.compute_pgm_rsrc2 = PgmRsrc2::from_raw(r.get(COMPUTE_PGM_RSRC2));
        let family = cx.gpu().spec.target.family();
        let rsrc3 = if family == Family::Gfx9 {
            COMPUTE_PGM_RSRC3
        } else {
            COMPUTE_PGM_RSRC3_GFX10
        };
        kd.compute_pgm_rsrc3 = PgmRsrc3::from_raw(r.get(rsrc3));
        kd.group_segment_fixed_size = kd.compute_pgm_rsrc2.granulated_lds_size * LDS_GRANULE;
        let users = kd.compute_pgm_rsrc2.user_sgpr_count;
        if users > USER_DATA {
            return Err(self.bad(
                cx,
                at,
                &format!("USER_SGPR_COUNT {users} is more than the {USER_DATA} COMPUTE_USER_DATA registers"),
            ));
        }
        let user: Vec<u32> = (0..users).map(|i| r.get(COMPUTE_USER_DATA_0 + i)).collect();
        let wave32 = cx.gpu().spec.target.supports_wave32()
            && r.get(COMPUTE_DISPATCH_INITIATOR) & CS_W32_EN != 0;
        let private_bytes = private_per_lane(family, r.get(COMPUTE_TMPRING_SIZE), wave32);
        kd.private_segment_fixed_size = private_bytes;
        let kernel = cx
            .kernels()
            .entry_name(cx.vm(), entry)
            .unwrap_or_else(|| format!("<code at 0x{entry:x}>"));
        let where_ = self.where_(at);
        kd.kernel_code_properties.enable_wavefront_size32 = wave32;
        let prog = launch::program(cx, &mut self.tlb, entry, wave32, &|| {
            format!("{where_}: kernel {kernel}")
        })?;
        let gpu = cx.gpu();
        let l = Launch {
            kernel: kernel.clone(),
            entry,
            descriptor: kd,
            grid,
            block,
            dynamic_lds: 0,
            kernarg: 0,
            dispatch_packet: 0,
            queue: 0,
            private_bytes: private_bytes.max(4).next_multiple_of(16),
            threads: cx.shared.opts.threads,
            timeout: cx.watchdog(),
            max_lds: gpu.spec.max_lds,
            trace: 0,
        };
        let extra = Extra {
            grid_items: items,
            dispatch_id: self.dispatches,
            user_sgprs: &user,
            first_group: start,
            ..Extra::default()
        };
        self.dispatches += 1;
        launch::run(cx, &mut self.pool, &prog, &l, extra, &|| {
            format!(
                "{where_}: dispatch of {kernel}, workgroups {start:?} to {:?} of {}x{}x{} work-items",
                dims, block[0], block[1], block[2]
            )
        })
    }
}
