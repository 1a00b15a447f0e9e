//! The hardware IP blocks of each GPU and their versions, as amdgpu's IP
//! discovery table lists them (`/sys/class/drm/renderD*/device/ip_discovery`,
//! `AMDGPU_INFO_HW_IP_INFO`'s `ip_discovery_version`).
//!
//! The versions are the ASIC's, so they follow from the [`Target`]; the
//! instance counts of GC (one per XCC) and SDMA follow from the
//! configuration. Every version below is taken from the Linux kernel
//! (drivers/gpu/drm/amd); a block whose version could not be confirmed
//! there is left out rather than guessed:
//!
//! - gfx90a (MI200, Aldebaran): `amdgpu_discovery_set_ip_blocks`, case
//!   `CHIP_ALDEBARAN` (amdgpu_discovery.c), which sets each version by hand:
//!   MMHUB and ATHUB 9.4.2, OSSSYS and HDP 4.4.0, SDMA0 4.4.0 (five
//!   instances of SDMA0), DF 3.6.2, NBIO 7.4.4, UMC 6.7.0, MP0, MP1, THM and
//!   SMUIO 13.0.2, GC 9.4.2. Documentation/gpu/amdgpu/dgpu-asic-info-table.csv
//!   ("MI200 Series, ALDEBARAN") agrees on GC, SDMA, MP0 and MP1. Left out:
//!   XGMI (6.1.0 there, but on discovery-table GPUs it comes from the WAFLC
//!   block, so its sysfs entry is uncertain).
//! - gfx942 (MI300, Aqua Vanjaram): dgpu-asic-info-table.csv, "MI300 Series,
//!   AQUA_VANJARAM": GC 9.4.3, SDMA 4.4.2, MP0 and MP1 13.0.6 (kfd_device.c
//!   maps GC 9.4.3 to gfx_target_version 90402). MMHUB 1.8.0, ATHUB 1.8.0,
//!   OSSSYS 4.4.2 and NBIO 7.9.0: the register headers the GC 9.4.3 bring-up
//!   series added with it ("drm/amdgpu: add nbio v7_9_0 / athub v1_8_0 /
//!   osssys v4_4_2 / mmhub v1_8_0 ip headers", 2023), the versions tinygrad's
//!   own MI300 driver has register tables for. On MI300 every SDMA engine is
//!   an instance of SDMA0 (the harvest mask of `amdgpu_discovery_sysfs_ips`
//!   is indexed by SDMA0 instance number).
//! - gfx908 (MI100, Arcturus): `amdgpu_discovery_set_ip_blocks`, case
//!   `CHIP_ARCTURUS`: MMHUB and ATHUB 9.4.1, OSSSYS and HDP 4.2.1, SDMA
//!   4.2.2 (eight engines: SDMA0 and seven instances of SDMA1 there; listed
//!   here, as for the others, as instances of SDMA0), DF 3.6.1, NBIO 7.4.1,
//!   UMC 6.1.2, MP0 11.0.4, MP1 11.0.2, THM and SMUIO 11.0.3, GC 9.4.1
//!   (kfd_device.c: GC 9.4.1 is gfx_target_version 90008).
//! - gfx950 (MI350): GC 9.5.0 (kfd_device.c: the one GC version with
//!   gfx_target_version 90500). The SDMA, MMHUB, NBIO, OSSSYS versions of
//!   MI350 are not stated by the kernel sources and are left out.
//!
//! - gfx1100 (Navi 31: RX 7900 XT/XTX, Radeon PRO W7900):
//!   dgpu-asic-info-table.csv, "AMD Radeon RX 7900 XT /XTX": GC 11.0.0
//!   (kfd_device.c maps it to gfx_target_version 110000), SDMA 6.0.0, MP0
//!   and MP1 13.0.0. Navi parts list each SDMA engine under its own
//!   `hw_id` (SDMA0, SDMA1: amdgpu_discovery.c counts an SDMA instance for
//!   each of SDMA0..SDMA3_HWID), one instance each. NBIO 4.3.0: the first
//!   NBIO of the soc21 parts (`amdgpu_discovery_set_ip_blocks` picks
//!   `nbio_v4_3_funcs` for it; the nbio v4_3 support came with the GC
//!   11.0.0 bring-up, and 4.3.1 was added later beside it for another soc21
//!   part), the version tinygrad's own gfx1100 mock GPU lists too. Left
//!   out: DCN 3.2.0 (display) and the other blocks, whose versions the
//!   table does not give.
//!
//! - gfx1151 (Strix Halo: Radeon 8060S): GC 11.5.1 (kfd_device.c maps it
//!   to gfx_target_version 110501; gfx_v11_0.c and gmc_v11_0.c list it
//!   with the other GC 11.5 parts). The APU's SDMA, MP0/MP1 and hub
//!   versions are not in the kernel's ASIC tables and are left out.
//!
//! - gfx1201 (Navi 48: RX 9070 XT, Radeon AI PRO R9700): GC 12.0.1
//!   (kfd_device.c maps it to gfx_target_version 120001, and
//!   amdgpu_discovery.c gives it `AMDGPU_FAMILY_GC_12_0_0`), SDMA 7.0.1 on
//!   each of its two engines (sdma_v7_0.c loads `sdma_7_0_1.bin` beside
//!   Navi 44's 7.0.0; an R9700 `ip_discovery` tree kept as a public test
//!   fixture reads GC 12.0.1 and SDMA0 7.0.1), MP0 and MP1 14.0.3
//!   (psp_v14_0.c and smu_v14_0_2.c serve 14.0.2 and 14.0.3, the two GC 12
//!   dGPUs: Navi 44 and Navi 48), and the soc24 blocks
//!   its bring-up added (soc24.c, amdgpu_discovery.c): NBIO 6.3.1
//!   (nbif_v6_3_1.c, whose doorbell set-up gfx_v12_0.c calls), HDP 7.0.0,
//!   OSSSYS 7.0.0 (ih_v7_0.c) and MMHUB 4.1.0 (mmhub_v4_1_0.c). Left out:
//!   DCN 4.0.1, VCN/JPEG 5.0.0 and the other blocks.
//!
//! Video blocks (VCN/JPEG: 2.6.0 on MI200, 4.0.3 on MI300) are left out on
//! purpose: the emulator has no video engines, and the DRM answers say so
//! (`AMDGPU_INFO_VIDEO_CAPS` is refused, as on a GPU without them). Blocks
//! other than GC and SDMA are listed with one instance (their real
//! instance counts are not modelled).

use crate::{GpuSpec, Target};

/// `HW_ID`s of `soc15_hw_ip.h` (drivers/gpu/drm/amd/include).
pub mod hw_id {
    pub const MP1: u16 = 1;
    pub const THM: u16 = 3;
    pub const SMUIO: u16 = 4;
    pub const GC: u16 = 11;
    pub const MMHUB: u16 = 34;
    pub const ATHUB: u16 = 35;
    pub const OSSSYS: u16 = 40;
    pub const HDP: u16 = 41;
    pub const SDMA0: u16 = 42;
    pub const SDMA1: u16 = 43;
    pub const DF: u16 = 46;
    /// NBIO's blocks (amdgpu's `hw_id_map`: `NBIO_HWIP` is `NBIF_HWID`).
    pub const NBIF: u16 = 108;
    pub const UMC: u16 = 150;
    pub const MP0: u16 = 255;
}

/// An IP version: major, minor, revision.
pub type IpVersion = (u8, u8, u8);

/// One IP block of the discovery table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpBlock {
    /// The name amdgpu gives the `hw_id` (`hw_id_names[]`: "GC", "SDMA0").
    pub name: &'static str,
    pub hw_id: u16,
    pub version: IpVersion,
    /// Instances, numbered 0..instances.
    pub instances: u32,
}

/// The versions by target (one instance each; [`ip_blocks`] sets the GC and
/// SDMA counts).
fn versions(target: Target) -> &'static [(&'static str, u16, IpVersion)] {
    use hw_id as h;
    match target {
        Target::Gfx90a => &[
            ("MP1", h::MP1, (13, 0, 2)),
            ("THM", h::THM, (13, 0, 2)),
            ("SMUIO", h::SMUIO, (13, 0, 2)),
            ("GC", h::GC, (9, 4, 2)),
            ("MMHUB", h::MMHUB, (9, 4, 2)),
            ("ATHUB", h::ATHUB, (9, 4, 2)),
            ("OSSSYS", h::OSSSYS, (4, 4, 0)),
            ("HDP", h::HDP, (4, 4, 0)),
            ("SDMA0", h::SDMA0, (4, 4, 0)),
            ("DF", h::DF, (3, 6, 2)),
            ("NBIF", h::NBIF, (7, 4, 4)),
            ("UMC", h::UMC, (6, 7, 0)),
            ("MP0", h::MP0, (13, 0, 2)),
        ],
        Target::Gfx942 => &[
            ("MP1", h::MP1, (13, 0, 6)),
            ("GC", h::GC, (9, 4, 3)),
            ("MMHUB", h::MMHUB, (1, 8, 0)),
            ("ATHUB", h::ATHUB, (1, 8, 0)),
            ("OSSSYS", h::OSSSYS, (4, 4, 2)),
            ("SDMA0", h::SDMA0, (4, 4, 2)),
            ("NBIF", h::NBIF, (7, 9, 0)),
            ("MP0", h::MP0, (13, 0, 6)),
        ],
        Target::Gfx950 => &[("GC", h::GC, (9, 5, 0))],
        Target::Gfx908 => &[
            ("MP1", h::MP1, (11, 0, 2)),
            ("THM", h::THM, (11, 0, 3)),
            ("SMUIO", h::SMUIO, (11, 0, 3)),
            ("GC", h::GC, (9, 4, 1)),
            ("MMHUB", h::MMHUB, (9, 4, 1)),
            ("ATHUB", h::ATHUB, (9, 4, 1)),
            ("OSSSYS", h::OSSSYS, (4, 2, 1)),
            ("HDP", h::HDP, (4, 2, 1)),
            ("SDMA0", h::SDMA0, (4, 2, 2)),
            ("DF", h::DF, (3, 6, 1)),
            ("NBIF", h::NBIF, (7, 4, 1)),
            ("UMC", h::UMC, (6, 1, 2)),
            ("MP0", h::MP0, (11, 0, 4)),
        ],
        Target::Gfx1100 => &[
            ("MP1", h::MP1, (13, 0, 0)),
            ("GC", h::GC, (11, 0, 0)),
            ("SDMA0", h::SDMA0, (6, 0, 0)),
            ("SDMA1", h::SDMA1, (6, 0, 0)),
            ("NBIF", h::NBIF, (4, 3, 0)),
            ("MP0", h::MP0, (13, 0, 0)),
        ],
        Target::Gfx1151 => &[("GC", h::GC, (11, 5, 1))],
        Target::Gfx1201 => &[
            ("MP1", h::MP1, (14, 0, 3)),
            ("GC", h::GC, (12, 0, 1)),
            ("MMHUB", h::MMHUB, (4, 1, 0)),
            ("OSSSYS", h::OSSSYS, (7, 0, 0)),
            ("HDP", h::HDP, (7, 0, 0)),
            ("SDMA0", h::SDMA0, (7, 0, 1)),
            ("SDMA1", h::SDMA1, (7, 0, 1)),
            ("NBIF", h::NBIF, (6, 3, 1)),
            ("MP0", h::MP0, (14, 0, 3)),
        ],
        // Not executed: a configuration naming one is refused.
        _ => &[],
    }
}

/// The GPU's IP blocks in `hw_id` order: GC has one instance per XCC, SDMA0
/// one per SDMA engine (`sdma_engines + sdma_xgmi_engines`) unless the
/// engines have `hw_id`s of their own (SDMA1 listed: one instance each).
pub fn ip_blocks(g: &GpuSpec) -> Vec<IpBlock> {
    let table = versions(g.gfx_target);
    let sdma_ids = table.iter().any(|b| b.1 == hw_id::SDMA1);
    let mut v: Vec<IpBlock> = table
        .iter()
        .map(|&(name, hw_id, version)| IpBlock {
            name,
            hw_id,
            version,
            instances: match hw_id {
                hw_id::GC => g.soc.xcds,
                hw_id::SDMA0 if !sdma_ids => g.queues.sdma_engines + g.queues.sdma_xgmi_engines,
                _ => 1,
            },
        })
        .collect();
    v.sort_by_key(|b| b.hw_id);
    v
}

/// The version of the block with `hw_id`, if the GPU lists it.
pub fn version_of(g: &GpuSpec, hw_id: u16) -> Option<IpVersion> {
    versions(g.gfx_target)
        .iter()
        .find(|b| b.1 == hw_id)
        .map(|b| b.2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GpuConfig;

    #[test]
    fn every_target_lists_gc_with_its_target_version() {
        for t in Target::CONFIGURED {
            let cfg = GpuConfig::builtin(t);
            let g = &cfg.gpus[0];
            let gc = version_of(g, hw_id::GC).unwrap();
            // GC 9.4.3 is gfx942 (kfd_device.c); the others spell the target.
            let want = match t {
                Target::Gfx90a => (9, 4, 2),
                Target::Gfx942 => (9, 4, 3),
                Target::Gfx950 => (9, 5, 0),
                Target::Gfx908 => (9, 4, 1),
                Target::Gfx1100 => (11, 0, 0),
                Target::Gfx1151 => (11, 5, 1),
                Target::Gfx1201 => (12, 0, 1),
                _ => unreachable!("{t} has no configuration"),
            };
            assert_eq!(gc, want);
            let blocks = ip_blocks(g);
            assert!(blocks.windows(2).all(|w| w[0].hw_id < w[1].hw_id));
            let gc = blocks.iter().find(|b| b.name == "GC").unwrap();
            assert_eq!(gc.instances, g.soc.xcds);
        }
        let mi300 = GpuConfig::builtin(Target::Gfx942);
        let sdma = ip_blocks(&mi300.gpus[0])
            .into_iter()
            .find(|b| b.hw_id == hw_id::SDMA0)
            .unwrap();
        assert_eq!((sdma.version, sdma.instances), ((4, 4, 2), 16));
        let mi210 = GpuConfig::builtin(Target::Gfx90a);
        assert_eq!(version_of(&mi210.gpus[0], hw_id::SDMA0), Some((4, 4, 0)));
        let mi355 = GpuConfig::builtin(Target::Gfx950);
        assert_eq!(version_of(&mi355.gpus[0], hw_id::SDMA0), None);
        let mi100 = GpuConfig::builtin(Target::Gfx908);
        let sdma = ip_blocks(&mi100.gpus[0])
            .into_iter()
            .find(|b| b.hw_id == hw_id::SDMA0)
            .unwrap();
        assert_eq!((sdma.version, sdma.instances), ((4, 2, 2), 8));
        // Navi 31: two SDMA engines, each its own hw_id.
        let w7900 = GpuConfig::builtin(Target::Gfx1100);
        let sdma: Vec<_> = ip_blocks(&w7900.gpus[0])
            .into_iter()
            .filter(|b| b.name.starts_with("SDMA"))
            .map(|b| (b.name, b.hw_id, b.version, b.instances))
            .collect();
        assert_eq!(
            sdma,
            [
                ("SDMA0", hw_id::SDMA0, (6, 0, 0), 1),
                ("SDMA1", hw_id::SDMA1, (6, 0, 0), 1)
            ]
        );
        // tinygrad's AMD backend reads GC, SDMA0 and NBIO (its HDP flush
        // registers) from the discovery tree.
        assert_eq!(version_of(&w7900.gpus[0], hw_id::NBIF), Some((4, 3, 0)));
    }
}
