//! The 64-byte kernel descriptor of code object v3+ (AMDGPUUsage "Kernel
//! Descriptor" with the COMPUTE_PGM_RSRC1/2/3 and kernel code property
//! tables), decoded into named fields for the GFX9 targets.

use rocjitsu_isa::Target;

/// Size of a kernel descriptor in bytes.
pub const KERNEL_DESCRIPTOR_SIZE: usize = 64;

fn bits(v: u32, lo: u32, width: u32) -> u32 {
    (v >> lo) & ((1u32 << width) - 1)
}

fn bit(v: u32, b: u32) -> bool {
    (v >> b) & 1 != 0
}

/// COMPUTE_PGM_RSRC1.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PgmRsrc1 {
    pub raw: u32,
    /// Bits 0-5.
    pub granulated_workitem_vgpr_count: u32,
    /// Bits 6-9.
    pub granulated_wavefront_sgpr_count: u32,
    /// Bits 10-11.
    pub priority: u32,
    /// Bits 12-13 (0 round to nearest even, 1 +inf, 2 -inf, 3 toward zero).
    pub float_round_mode_32: u32,
    /// Bits 14-15.
    pub float_round_mode_16_64: u32,
    /// Bits 16-17 (0 flush source and destination, 1 flush destination, 2
    /// flush source, 3 no flush).
    pub float_denorm_mode_32: u32,
    /// Bits 18-19.
    pub float_denorm_mode_16_64: u32,
    /// Bit 20.
    pub priv_: bool,
    /// Bit 21.
    pub enable_dx10_clamp: bool,
    /// Bit 22.
    pub debug_mode: bool,
    /// Bit 23.
    pub enable_ieee_mode: bool,
    /// Bit 24.
    pub bulky: bool,
    /// Bit 25.
    pub cdbg_user: bool,
    /// Bit 26 (GFX9+).
    pub fp16_ovfl: bool,
    /// Bit 29 (GFX10+; reserved on GFX9).
    pub wgp_mode: bool,
    /// Bit 30 (GFX10+; reserved on GFX9).
    pub mem_ordered: bool,
    /// Bit 31 (GFX10+; reserved on GFX9).
    pub fwd_progress: bool,
}

impl PgmRsrc1 {
    pub fn from_raw(raw: u32) -> Self {
        PgmRsrc1 {
            raw,
            granulated_workitem_vgpr_count: bits(raw, 0, 6),
            granulated_wavefront_sgpr_count: bits(raw, 6, 4),
            priority: bits(raw, 10, 2),
            float_round_mode_32: bits(raw, 12, 2),
            float_round_mode_16_64: bits(raw, 14, 2),
            float_denorm_mode_32: bits(raw, 16, 2),
            float_denorm_mode_16_64: bits(raw, 18, 2),
            priv_: bit(raw, 20),
            enable_dx10_clamp: bit(raw, 21),
            debug_mode: bit(raw, 22),
            enable_ieee_mode: bit(raw, 23),
            bulky: bit(raw, 24),
            cdbg_user: bit(raw, 25),
            fp16_ovfl: bit(raw, 26),
            wgp_mode: bit(raw, 29),
            mem_ordered: bit(raw, 30),
            fwd_progress: bit(raw, 31),
        }
    }
}

/// COMPUTE_PGM_RSRC2.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PgmRsrc2 {
    pub raw: u32,
    /// Bit 0: scratch (private segment) wave offset enabled.
    pub enable_private_segment: bool,
    /// Bits 1-5: SGPRs the CP initializes before the system SGPRs.
    pub user_sgpr_count: u32,
    /// Bit 6.
    pub enable_trap_handler: bool,
    /// Bits 7, 8, 9.
    pub enable_sgpr_workgroup_id_x: bool,
    pub enable_sgpr_workgroup_id_y: bool,
    pub enable_sgpr_workgroup_id_z: bool,
    /// Bit 10.
    pub enable_sgpr_workgroup_info: bool,
    /// Bits 11-12: 0 X, 1 X and Y, 2 X, Y and Z work-item IDs in VGPRs.
    pub enable_vgpr_workitem_id: u32,
    /// Bit 13.
    pub enable_exception_address_watch: bool,
    /// Bit 14.
    pub enable_exception_memory: bool,
    /// Bits 15-23.
    pub granulated_lds_size: u32,
    /// Bits 24-30, in order: invalid operation, denormal source, division by
    /// zero, overflow, underflow, inexact, integer division by zero.
    pub enable_exception_ieee_754_fp_invalid_operation: bool,
    pub enable_exception_fp_denormal_source: bool,
    pub enable_exception_ieee_754_fp_division_by_zero: bool,
    pub enable_exception_ieee_754_fp_overflow: bool,
    pub enable_exception_ieee_754_fp_underflow: bool,
    pub enable_exception_ieee_754_fp_inexact: bool,
    pub enable_exception_int_divide_by_zero: bool,
}

impl PgmRsrc2 {
    pub fn from_raw(raw: u32) -> Self {
        PgmRsrc2 {
            raw,
            enable_private_segment: bit(raw, 0),
            user_sgpr_count: bits(raw, 1, 5),
            enable_trap_handler: bit(raw, 6),
            enable_sgpr_workgroup_id_x: bit(raw, 7),
            enable_sgpr_workgroup_id_y: bit(raw, 8),
            enable_sgpr_workgroup_id_z: bit(raw, 9),
            enable_sgpr_workgroup_info: bit(raw, 10),
            enable_vgpr_workitem_id: bits(raw, 11, 2),
            enable_exception_address_watch: bit(raw, 13),
            enable_exception_memory: bit(raw, 14),
            granulated_lds_size: bits(raw, 15, 9),
            enable_exception_ieee_754_fp_invalid_operation: bit(raw, 24),
            enable_exception_fp_denormal_source: bit(raw, 25),
            enable_exception_ieee_754_fp_division_by_zero: bit(raw, 26),
            enable_exception_ieee_754_fp_overflow: bit(raw, 27),
            enable_exception_ieee_754_fp_underflow: bit(raw, 28),
            enable_exception_ieee_754_fp_inexact: bit(raw, 29),
            enable_exception_int_divide_by_zero: bit(raw, 30),
        }
    }
}

/// COMPUTE_PGM_RSRC3 as defined for gfx90a and gfx942/gfx950.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PgmRsrc3 {
    pub raw: u32,
    /// Bits 0-5: first AccVGPR in the unified register file is
    /// `(accum_offset + 1) * 4`.
    pub accum_offset: u32,
    /// Bit 16: workgroup may be split across CUs.
    pub tg_split: bool,
}

impl PgmRsrc3 {
    pub fn from_raw(raw: u32) -> Self {
        PgmRsrc3 {
            raw,
            accum_offset: bits(raw, 0, 6),
            tg_split: bit(raw, 16),
        }
    }
}

/// The kernel code properties (descriptor bytes 56-57).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KernelCodeProperties {
    pub raw: u16,
    /// Bit 0 (4 user SGPRs).
    pub enable_sgpr_private_segment_buffer: bool,
    /// Bit 1 (2 user SGPRs).
    pub enable_sgpr_dispatch_ptr: bool,
    /// Bit 2 (2 user SGPRs).
    pub enable_sgpr_queue_ptr: bool,
    /// Bit 3 (2 user SGPRs).
    pub enable_sgpr_kernarg_segment_ptr: bool,
    /// Bit 4 (2 user SGPRs).
    pub enable_sgpr_dispatch_id: bool,
    /// Bit 5 (2 user SGPRs).
    pub enable_sgpr_flat_scratch_init: bool,
    /// Bit 6 (1 user SGPR).
    pub enable_sgpr_private_segment_size: bool,
    /// Bit 10 (GFX10+).
    pub enable_wavefront_size32: bool,
    /// Bit 11.
    pub uses_dynamic_stack: bool,
}

impl KernelCodeProperties {
    pub fn from_raw(raw: u16) -> Self {
        let r = u32::from(raw);
        KernelCodeProperties {
            raw,
            enable_sgpr_private_segment_buffer: bit(r, 0),
            enable_sgpr_dispatch_ptr: bit(r, 1),
            enable_sgpr_queue_ptr: bit(r, 2),
            enable_sgpr_kernarg_segment_ptr: bit(r, 3),
            enable_sgpr_dispatch_id: bit(r, 4),
            enable_sgpr_flat_scratch_init: bit(r, 5),
            enable_sgpr_private_segment_size: bit(r, 6),
            enable_wavefront_size32: bit(r, 10),
            uses_dynamic_stack: bit(r, 11),
        }
    }

    /// User SGPRs the enabled fields occupy, in the order the CP loads them
    /// (without preloaded kernel arguments).
    pub fn user_sgprs(&self) -> u32 {
        let mut n = 0;
        for (on, count) in [
            (self.enable_sgpr_private_segment_buffer, 4),
            (self.enable_sgpr_dispatch_ptr, 2),
            (self.enable_sgpr_queue_ptr, 2),
            (self.enable_sgpr_kernarg_segment_ptr, 2),
            (self.enable_sgpr_dispatch_id, 2),
            (self.enable_sgpr_flat_scratch_init, 2),
            (self.enable_sgpr_private_segment_size, 1),
        ] {
            if on {
                n += count;
            }
        }
        n
    }
}

/// What the CP or ADC writes into an SGPR at wave launch (AMDGPUUsage
/// "Initial Kernel Execution State"), in SGPR order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum SgprUse {
    /// 4 SGPRs: the scratch buffer resource (not on architected flat
    /// scratch targets such as gfx942).
    PrivateSegmentBuffer,
    /// 2 SGPRs: address of the AQL dispatch packet.
    DispatchPtr,
    /// 2 SGPRs: address of the AQL queue.
    QueuePtr,
    /// 2 SGPRs: address of the kernel arguments.
    KernargSegmentPtr,
    /// 2 SGPRs: the 64-bit dispatch ID.
    DispatchId,
    /// 2 SGPRs: flat scratch base and size.
    FlatScratchInit,
    /// 1 SGPR: per work-item private segment size.
    PrivateSegmentSize,
    /// Kernel argument dwords preloaded from the kernarg segment.
    PreloadedKernargs,
    /// 1 SGPR each: the workgroup ID in X, Y, Z.
    WorkgroupIdX,
    WorkgroupIdY,
    WorkgroupIdZ,
    /// 1 SGPR: workgroup information.
    WorkgroupInfo,
    /// 1 SGPR: the wave's offset into the scratch segment.
    PrivateSegmentWaveOffset,
}

/// One run of SGPRs initialized at launch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SgprSlot {
    pub what: SgprUse,
    /// First SGPR index.
    pub first: u32,
    /// Number of SGPRs.
    pub count: u32,
}

/// The kernel descriptor.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KernelDescriptor {
    /// Bytes 0-3.
    pub group_segment_fixed_size: u32,
    /// Bytes 4-7.
    pub private_segment_fixed_size: u32,
    /// Bytes 8-11.
    pub kernarg_size: u32,
    /// Bytes 16-23: entry point relative to the descriptor's address.
    pub kernel_code_entry_byte_offset: i64,
    /// Bytes 44-47.
    pub compute_pgm_rsrc3: PgmRsrc3,
    /// Bytes 48-51.
    pub compute_pgm_rsrc1: PgmRsrc1,
    /// Bytes 52-55.
    pub compute_pgm_rsrc2: PgmRsrc2,
    /// Bytes 56-57.
    pub kernel_code_properties: KernelCodeProperties,
    /// Bytes 58-59 bits 0-6 (code object v5+): SGPRs of preloaded kernarg data.
    pub kernarg_preload_spec_length: u32,
    /// Bytes 58-59 bits 7-15: dword offset in the kernarg segment of the preload.
    pub kernarg_preload_spec_offset: u32,
    /// The reserved bytes 12-15, 24-43 and 60-63, kept so that
    /// [`KernelDescriptor::to_bytes`] reproduces the input exactly.
    pub reserved: [u8; 28],
}

impl KernelDescriptor {
    /// Decodes a descriptor from its 64 bytes.
    pub fn from_bytes(b: &[u8; KERNEL_DESCRIPTOR_SIZE]) -> Self {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let mut e = [0u8; 8];
        e.copy_from_slice(&b[16..24]);
        let preload = u32::from(u16::from_le_bytes([b[58], b[59]]));
        let mut reserved = [0u8; 28];
        reserved[0..4].copy_from_slice(&b[12..16]);
        reserved[4..24].copy_from_slice(&b[24..44]);
        reserved[24..28].copy_from_slice(&b[60..64]);
        KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            kernel_code_entry_byte_offset: i64::from_le_bytes(e),
            compute_pgm_rsrc3: PgmRsrc3::from_raw(u32_at(44)),
            compute_pgm_rsrc1: PgmRsrc1::from_raw(u32_at(48)),
            compute_pgm_rsrc2: PgmRsrc2::from_raw(u32_at(52)),
            kernel_code_properties: KernelCodeProperties::from_raw(u16::from_le_bytes([
                b[56], b[57],
            ])),
            kernarg_preload_spec_length: bits(preload, 0, 7),
            kernarg_preload_spec_offset: bits(preload, 7, 9),
            reserved,
        }
    }

    /// Encodes the descriptor from its fields (the `raw` words of the
    /// register structs and the preload fields).
    pub fn to_bytes(&self) -> [u8; KERNEL_DESCRIPTOR_SIZE] {
        let mut b = [0u8; KERNEL_DESCRIPTOR_SIZE];
        b[0..4].copy_from_slice(&self.group_segment_fixed_size.to_le_bytes());
        b[4..8].copy_from_slice(&self.private_segment_fixed_size.to_le_bytes());
        b[8..12].copy_from_slice(&self.kernarg_size.to_le_bytes());
        b[12..16].copy_from_slice(&self.reserved[0..4]);
        b[16..24].copy_from_slice(&self.kernel_code_entry_byte_offset.to_le_bytes());
        b[24..44].copy_from_slice(&self.reserved[4..24]);
        b[44..48].copy_from_slice(&self.compute_pgm_rsrc3.raw.to_le_bytes());
        b[48..52].copy_from_slice(&self.compute_pgm_rsrc1.raw.to_le_bytes());
        b[52..56].copy_from_slice(&self.compute_pgm_rsrc2.raw.to_le_bytes());
        b[56..58].copy_from_slice(&self.kernel_code_properties.raw.to_le_bytes());
        let preload = (self.kernarg_preload_spec_length & 0x7f)
            | ((self.kernarg_preload_spec_offset & 0x1ff) << 7);
        b[58..60].copy_from_slice(&(preload as u16).to_le_bytes());
        b[60..64].copy_from_slice(&self.reserved[24..28]);
        b
    }

    /// User SGPRs initialized at wave launch: COMPUTE_PGM_RSRC2.USER_SGPR_COUNT,
    /// which covers the enabled code properties plus preloaded kernarg SGPRs.
    pub fn user_sgpr_count(&self) -> u32 {
        self.compute_pgm_rsrc2.user_sgpr_count
    }

    /// System SGPRs that follow the user SGPRs: workgroup IDs, workgroup
    /// info and the private segment wave offset.
    pub fn system_sgpr_count(&self) -> u32 {
        let r = &self.compute_pgm_rsrc2;
        [
            r.enable_sgpr_workgroup_id_x,
            r.enable_sgpr_workgroup_id_y,
            r.enable_sgpr_workgroup_id_z,
            r.enable_sgpr_workgroup_info,
            r.enable_private_segment,
        ]
        .iter()
        .filter(|&&b| b)
        .count() as u32
    }

    /// Allocated VGPRs: on gfx90a, gfx942 and gfx950 ArchVGPRs plus
    /// AccVGPRs in the unified file, in granules of 8 registers; on gfx908
    /// the larger of the ArchVGPR and AccVGPR counts (two files of the same
    /// size), in granules of 4 (AMDGPUUsage, `GRANULATED_WORKITEM_VGPR_COUNT`).
    pub fn vgpr_count(&self, target: Target) -> u32 {
        let granule = if target == Target::Gfx908 { 4 } else { 8 };
        (self.compute_pgm_rsrc1.granulated_workitem_vgpr_count + 1) * granule
    }

    /// Allocated SGPRs: on GFX9 the field counts 8-register granules and is
    /// always even (16-register allocation blocks).
    pub fn sgpr_count(&self, _target: Target) -> u32 {
        (self.compute_pgm_rsrc1.granulated_wavefront_sgpr_count + 1) * 8
    }

    /// The first AccVGPR index in the unified VGPR file (gfx90a and later;
    /// on gfx908 the field is reserved and the AccVGPRs are a separate file).
    pub fn accum_offset(&self) -> u32 {
        (self.compute_pgm_rsrc3.accum_offset + 1) * 4
    }

    /// The descriptor as `.amdhsa_*` assembler directives and their values
    /// (AMDGPUUsage "Code Object V3 and Above Kernel Descriptor Directives").
    /// Register counts are the allocated ones (`next_free_*` rounded up to
    /// the granule), and the `reserve_*` directives are 0, as nothing in the
    /// descriptor records them. gfx90a names the private segment bit
    /// `system_sgpr_private_segment_wavefront_offset`; gfx942 and gfx950
    /// (architected flat scratch) call it `enable_private_segment`.
    pub fn directives(&self, target: Target) -> Vec<(&'static str, u64)> {
        let r1 = &self.compute_pgm_rsrc1;
        let r2 = &self.compute_pgm_rsrc2;
        let r3 = &self.compute_pgm_rsrc3;
        let p = &self.kernel_code_properties;
        fn b<T: Into<u64>>(v: T) -> u64 {
            v.into()
        }
        let private_segment = if target.is_gfx940_plus() {
            "enable_private_segment"
        } else {
            "system_sgpr_private_segment_wavefront_offset"
        };
        let mut v = vec![
            ("group_segment_fixed_size", b(self.group_segment_fixed_size)),
            (
                "private_segment_fixed_size",
                b(self.private_segment_fixed_size),
            ),
            ("kernarg_size", b(self.kernarg_size)),
            ("accum_offset", b(self.accum_offset())),
            ("tg_split", b(r3.tg_split)),
            ("next_free_vgpr", b(self.vgpr_count(target))),
            ("reserve_vcc", 0),
            ("reserve_flat_scratch", 0),
            ("reserve_xnack_mask", 0),
            ("next_free_sgpr", b(self.sgpr_count(target))),
            ("float_round_mode_32", b(r1.float_round_mode_32)),
            ("float_round_mode_16_64", b(r1.float_round_mode_16_64)),
            ("float_denorm_mode_32", b(r1.float_denorm_mode_32)),
            ("float_denorm_mode_16_64", b(r1.float_denorm_mode_16_64)),
            ("dx10_clamp", b(r1.enable_dx10_clamp)),
            ("ieee_mode", b(r1.enable_ieee_mode)),
            ("fp16_overflow", b(r1.fp16_ovfl)),
            (private_segment, b(r2.enable_private_segment)),
            (
                "system_sgpr_workgroup_id_x",
                b(r2.enable_sgpr_workgroup_id_x),
            ),
            (
                "system_sgpr_workgroup_id_y",
                b(r2.enable_sgpr_workgroup_id_y),
            ),
            (
                "system_sgpr_workgroup_id_z",
                b(r2.enable_sgpr_workgroup_id_z),
            ),
            (
                "system_sgpr_workgroup_info",
                b(r2.enable_sgpr_workgroup_info),
            ),
            ("system_vgpr_workitem_id", b(r2.enable_vgpr_workitem_id)),
            (
                "exception_fp_ieee_invalid_op",
                b(r2.enable_exception_ieee_754_fp_invalid_operation),
            ),
            (
                "exception_fp_denorm_src",
                b(r2.enable_exception_fp_denormal_source),
            ),
            (
                "exception_fp_ieee_div_zero",
                b(r2.enable_exception_ieee_754_fp_division_by_zero),
            ),
            (
                "exception_fp_ieee_overflow",
                b(r2.enable_exception_ieee_754_fp_overflow),
            ),
            (
                "exception_fp_ieee_underflow",
                b(r2.enable_exception_ieee_754_fp_underflow),
            ),
            (
                "exception_fp_ieee_inexact",
                b(r2.enable_exception_ieee_754_fp_inexact),
            ),
            (
                "exception_int_div_zero",
                b(r2.enable_exception_int_divide_by_zero),
            ),
            ("user_sgpr_count", b(r2.user_sgpr_count)),
            (
                "user_sgpr_private_segment_buffer",
                b(p.enable_sgpr_private_segment_buffer),
            ),
            ("user_sgpr_dispatch_ptr", b(p.enable_sgpr_dispatch_ptr)),
            ("user_sgpr_queue_ptr", b(p.enable_sgpr_queue_ptr)),
            (
                "user_sgpr_kernarg_segment_ptr",
                b(p.enable_sgpr_kernarg_segment_ptr),
            ),
            ("user_sgpr_dispatch_id", b(p.enable_sgpr_dispatch_id)),
            (
                "user_sgpr_flat_scratch_init",
                b(p.enable_sgpr_flat_scratch_init),
            ),
            (
                "user_sgpr_private_segment_size",
                b(p.enable_sgpr_private_segment_size),
            ),
            (
                "user_sgpr_kernarg_preload_length",
                b(self.kernarg_preload_spec_length),
            ),
            (
                "user_sgpr_kernarg_preload_offset",
                b(self.kernarg_preload_spec_offset),
            ),
            ("wavefront_size32", b(p.enable_wavefront_size32)),
            ("uses_dynamic_stack", b(p.uses_dynamic_stack)),
        ];
        // COMPUTE_PGM_RSRC3's ACCUM_OFFSET and TG_SPLIT are gfx90a's and
        // later; gfx908's AccVGPRs are a file of their own.
        if !target.is_gfx90a_plus() {
            v.retain(|(name, _)| !matches!(*name, "accum_offset" | "tg_split"));
        }
        v
    }

    /// The SGPRs initialized at wave launch, in order: the user SGPRs the
    /// code properties enable, the preloaded kernel arguments, then the
    /// system SGPRs, which start at COMPUTE_PGM_RSRC2.USER_SGPR_COUNT.
    pub fn sgpr_layout(&self) -> Vec<SgprSlot> {
        let p = &self.kernel_code_properties;
        let r = &self.compute_pgm_rsrc2;
        let mut out = Vec::new();
        let mut next = 0;
        let mut push = |what, on: bool, count: u32, next: &mut u32| {
            if on && count > 0 {
                out.push(SgprSlot {
                    what,
                    first: *next,
                    count,
                });
                *next += count;
            }
        };
        push(
            SgprUse::PrivateSegmentBuffer,
            p.enable_sgpr_private_segment_buffer,
            4,
            &mut next,
        );
        push(
            SgprUse::DispatchPtr,
            p.enable_sgpr_dispatch_ptr,
            2,
            &mut next,
        );
        push(SgprUse::QueuePtr, p.enable_sgpr_queue_ptr, 2, &mut next);
        push(
            SgprUse::KernargSegmentPtr,
            p.enable_sgpr_kernarg_segment_ptr,
            2,
            &mut next,
        );
        push(SgprUse::DispatchId, p.enable_sgpr_dispatch_id, 2, &mut next);
        push(
            SgprUse::FlatScratchInit,
            p.enable_sgpr_flat_scratch_init,
            2,
            &mut next,
        );
        push(
            SgprUse::PrivateSegmentSize,
            p.enable_sgpr_private_segment_size,
            1,
            &mut next,
        );
        push(
            SgprUse::PreloadedKernargs,
            true,
            self.kernarg_preload_spec_length,
            &mut next,
        );
        let mut next = r.user_sgpr_count.max(next);
        push(
            SgprUse::WorkgroupIdX,
            r.enable_sgpr_workgroup_id_x,
            1,
            &mut next,
        );
        push(
            SgprUse::WorkgroupIdY,
            r.enable_sgpr_workgroup_id_y,
            1,
            &mut next,
        );
        push(
            SgprUse::WorkgroupIdZ,
            r.enable_sgpr_workgroup_id_z,
            1,
            &mut next,
        );
        push(
            SgprUse::WorkgroupInfo,
            r.enable_sgpr_workgroup_info,
            1,
            &mut next,
        );
        push(
            SgprUse::PrivateSegmentWaveOffset,
            r.enable_private_segment,
            1,
            &mut next,
        );
        out
    }

    /// The first SGPR of `what`, if the descriptor enables it.
    pub fn sgpr_of(&self, what: SgprUse) -> Option<u32> {
        self.sgpr_layout()
            .into_iter()
            .find(|s| s.what == what)
            .map(|s| s.first)
    }

    /// Work-item IDs arrive packed in v0 (X bits 0-9, Y 10-19, Z 20-29) on
    /// gfx90a, gfx942, gfx950 and GFX11 and later (LLVM's `PackedTID`);
    /// gfx908 and GFX10 put them in v0, v1 and v2.
    pub fn workitem_ids_packed(&self, target: Target) -> bool {
        !matches!(target, Target::Gfx908 | Target::Gfx1010 | Target::Gfx1030)
    }

    /// Work-item ID dimensions delivered in VGPRs (1, 2 or 3).
    pub fn workitem_id_dims(&self) -> u32 {
        self.compute_pgm_rsrc2.enable_vgpr_workitem_id.min(2) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_at_documented_positions_and_round_trip() {
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&256u32.to_le_bytes());
        b[8..12].copy_from_slice(&24u32.to_le_bytes());
        b[16..24].copy_from_slice(&0x1200i64.to_le_bytes());
        b[44..48].copy_from_slice(&0x0001_0001u32.to_le_bytes());
        // VGPR granule 1, SGPR granule 4, denorm 16/64 = 3, dx10 clamp, ieee.
        b[48..52]
            .copy_from_slice(&(1u32 | (4 << 6) | (3 << 18) | (1 << 21) | (1 << 23)).to_le_bytes());
        // user SGPRs 8, workgroup id x, vgpr workitem id 2.
        b[52..56].copy_from_slice(&((8u32 << 1) | (1 << 7) | (2 << 11)).to_le_bytes());
        b[56..58].copy_from_slice(&0x0009u16.to_le_bytes());
        b[58..60].copy_from_slice(&2u16.to_le_bytes());
        b[30] = 0x5a;
        let kd = KernelDescriptor::from_bytes(&b);
        assert_eq!(kd.group_segment_fixed_size, 256);
        assert_eq!(kd.kernarg_size, 24);
        assert_eq!(kd.kernel_code_entry_byte_offset, 0x1200);
        assert_eq!(kd.compute_pgm_rsrc3.accum_offset, 1);
        assert_eq!(kd.accum_offset(), 8);
        assert!(kd.compute_pgm_rsrc3.tg_split);
        assert_eq!(kd.vgpr_count(Target::Gfx942), 16);
        assert_eq!(kd.sgpr_count(Target::Gfx942), 40);
        assert_eq!(kd.compute_pgm_rsrc1.float_denorm_mode_16_64, 3);
        assert!(kd.compute_pgm_rsrc1.enable_dx10_clamp);
        assert!(kd.compute_pgm_rsrc1.enable_ieee_mode);
        assert_eq!(kd.user_sgpr_count(), 8);
        assert_eq!(kd.kernel_code_properties.user_sgprs(), 6);
        assert!(kd.compute_pgm_rsrc2.enable_sgpr_workgroup_id_x);
        assert_eq!(kd.workitem_id_dims(), 3);
        assert_eq!(kd.system_sgpr_count(), 1);
        assert_eq!(kd.kernarg_preload_spec_length, 2);
        assert_eq!(kd.to_bytes(), b);
        let layout: Vec<(SgprUse, u32, u32)> = kd
            .sgpr_layout()
            .iter()
            .map(|s| (s.what, s.first, s.count))
            .collect();
        assert_eq!(
            layout,
            [
                (SgprUse::PrivateSegmentBuffer, 0, 4),
                (SgprUse::KernargSegmentPtr, 4, 2),
                (SgprUse::PreloadedKernargs, 6, 2),
                (SgprUse::WorkgroupIdX, 8, 1),
            ]
        );
    }
}
