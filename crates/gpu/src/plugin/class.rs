//! What kind of instruction an [`Op`](crate::exec::Op) is, for plugins:
//! its family (the metrics plugin's counters) and, for memory
//! instructions, the access kind, segment and bytes per lane. Worked out
//! once per instruction when it is lowered (from the encoding and LLVM's
//! mnemonic) and kept in [`Op::class`](crate::exec::Op::class), so that an
//! observer reads it without decoding anything.

use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;

/// Instruction families, as counted by the metrics plugin.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Family {
    /// Scalar ALU (SOP1, SOP2, SOPC, SOPK, `s_getpc`, ...).
    Salu,
    /// Vector ALU (VOP1/2/C, VOP3, VOP3P) other than matrix instructions.
    Valu,
    /// Matrix instructions (`v_mfma*`, `v_smfmac*`).
    Mfma,
    /// Scalar memory (SMEM).
    Smem,
    /// Vector memory loads (FLAT, GLOBAL, SCRATCH, MUBUF, MTBUF, MIMG).
    VmemLoad,
    VmemStore,
    VmemAtomic,
    /// LDS / GDS instructions (DS), including lane exchanges (`ds_swizzle`,
    /// `ds_permute`).
    Lds,
    /// Branches, calls, returns (`s_branch`, `s_cbranch_*`, `s_setpc`,
    /// `s_swappc`, `s_call`).
    Branch,
    /// `s_waitcnt*`.
    Wait,
    /// `s_barrier`.
    Barrier,
    /// Everything else: `s_nop`, `s_endpgm`, `s_sendmsg`, cache controls,
    /// ...
    Other,
}

impl Family {
    pub const COUNT: usize = 12;
    pub const ALL: [Family; Family::COUNT] = [
        Family::Salu,
        Family::Valu,
        Family::Mfma,
        Family::Smem,
        Family::VmemLoad,
        Family::VmemStore,
        Family::VmemAtomic,
        Family::Lds,
        Family::Branch,
        Family::Wait,
        Family::Barrier,
        Family::Other,
    ];

    /// The name in reports and JSON records.
    pub fn name(self) -> &'static str {
        match self {
            Family::Salu => "salu",
            Family::Valu => "valu",
            Family::Mfma => "mfma",
            Family::Smem => "smem",
            Family::VmemLoad => "vmem_load",
            Family::VmemStore => "vmem_store",
            Family::VmemAtomic => "vmem_atomic",
            Family::Lds => "lds",
            Family::Branch => "branch",
            Family::Wait => "wait",
            Family::Barrier => "barrier",
            Family::Other => "other",
        }
    }

    /// Whether instructions of the family work per lane under EXEC (the
    /// ones the active-lane ratio is taken over).
    pub fn is_vector(self) -> bool {
        matches!(
            self,
            Family::Valu
                | Family::Mfma
                | Family::VmemLoad
                | Family::VmemStore
                | Family::VmemAtomic
                | Family::Lds
        )
    }
}

/// What a memory instruction does to memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MemKind {
    /// Not a memory access (ALU, lane exchange, cache control).
    None,
    Load,
    Store,
    /// Read-modify-write.
    Atomic,
}

/// The segment an instruction addresses. A FLAT instruction's lanes are
/// classified by aperture when it executes, a buffer's by its resource
/// (see [`super::MemEvent::lanes`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Seg {
    Flat,
    Global,
    Scratch,
    /// MUBUF / MTBUF (global, or private memory through the private-segment
    /// buffer).
    Buffer,
    /// DS instructions on the workgroup's LDS.
    Lds,
    /// DS instructions with the `gds` bit.
    Gds,
    /// SMEM: one access per wave, not per lane.
    Scalar,
    /// MIMG (not executed on CDNA compute).
    Image,
}

/// The plugin-facing class of one instruction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Class {
    pub family: Family,
    pub mem: MemKind,
    pub seg: Seg,
    /// Bytes accessed per active lane (per wave for [`Seg::Scalar`]); 0
    /// when [`Class::mem`] is [`MemKind::None`].
    pub bytes: u16,
}

impl Class {
    pub(crate) const fn plain(family: Family) -> Class {
        Class {
            family,
            mem: MemKind::None,
            seg: Seg::Global,
            bytes: 0,
        }
    }
}

/// Classifies a decoded instruction.
pub fn classify(inst: &Inst) -> Class {
    let name = inst.mnemonic();
    match inst.body() {
        Body::Salu(_) | Body::Sopk(_) => {
            if matches!(
                name,
                "s_setpc_b64" | "s_swappc_b64" | "s_call_b64" | "s_cbranch_g_fork"
            ) || name.starts_with("s_cbranch")
            {
                Class::plain(Family::Branch)
            } else if name.starts_with("s_waitcnt") {
                Class::plain(Family::Wait)
            } else {
                Class::plain(Family::Salu)
            }
        }
        Body::Sopp(_) => Class::plain(if name.starts_with("s_waitcnt") {
            Family::Wait
        } else if name == "s_barrier" {
            Family::Barrier
        } else if name == "s_branch" || name.starts_with("s_cbranch") || name == "s_setpc_b64" {
            Family::Branch
        } else {
            Family::Other
        }),
        Body::Smem(_) => smem(name),
        Body::Vop(_) | Body::Vop3(_) => Class::plain(Family::Valu),
        Body::Vop3p(_) => Class::plain(
            if name.starts_with("v_mfma") || name.starts_with("v_smfmac") {
                Family::Mfma
            } else {
                Family::Valu
            },
        ),
        Body::Ds(d) => ds(name, d.gds),
        Body::Flat(_) => {
            let seg = if name.starts_with("global_") {
                Seg::Global
            } else if name.starts_with("scratch_") {
                Seg::Scratch
            } else {
                Seg::Flat
            };
            vmem(name, seg)
        }
        Body::Mubuf(_) | Body::Mtbuf(_) => vmem(name, Seg::Buffer),
        Body::Mimg(_) => vmem(name, Seg::Image),
        // gfx908 (decoded, not executed).
        Body::Vintrp(_) => Class::plain(Family::Valu),
        Body::Exp(_) => Class::plain(Family::Other),
    }
}

/// Bytes of a `dword`, `dwordxN` type suffix (0 if none).
fn dwords(name: &str) -> u16 {
    for (s, b) in [
        ("dwordx16", 64),
        ("dwordx8", 32),
        ("dwordx4", 16),
        ("dwordx3", 12),
        ("dwordx2", 8),
        ("dword", 4),
    ] {
        if name.contains(s) {
            return b;
        }
    }
    0
}

pub(crate) fn smem(name: &str) -> Class {
    let mem = if name.contains("_load") {
        MemKind::Load
    } else if name.contains("_store") {
        MemKind::Store
    } else if name.starts_with("s_atomic") || name.starts_with("s_buffer_atomic") {
        MemKind::Atomic
    } else {
        // s_dcache_*, s_memtime, s_memrealtime, s_scratch_* probes.
        return Class::plain(Family::Smem);
    };
    let bytes = match mem {
        MemKind::Atomic if name.contains("_x2") => 8,
        MemKind::Atomic => 4,
        _ => dwords(name),
    };
    Class {
        family: Family::Smem,
        mem,
        seg: Seg::Scalar,
        bytes,
    }
}

pub(crate) fn vmem(name: &str, seg: Seg) -> Class {
    let (family, mem) = if name.contains("_load") {
        (Family::VmemLoad, MemKind::Load)
    } else if name.contains("_store") {
        (Family::VmemStore, MemKind::Store)
    } else if name.contains("_atomic") {
        (Family::VmemAtomic, MemKind::Atomic)
    } else {
        // buffer_wbinvl1, buffer_inv, buffer_wbl2: cache controls.
        return Class::plain(Family::Other);
    };
    let bytes = if mem == MemKind::Atomic {
        if name.contains("_x2") || name.contains("f64") {
            8
        } else {
            4
        }
    } else if name.contains("format") {
        // buffer_load_format_xyzw, tbuffer_store_format_d16_xy, ...
        let comps = name.rsplit('_').next().map_or(1, |c| c.len() as u16);
        comps * if name.contains("d16") { 2 } else { 4 }
    } else if name.contains("short") {
        2
    } else if name.contains("byte") {
        1
    } else {
        dwords(name)
    };
    Class {
        family,
        mem,
        seg,
        bytes,
    }
}

pub(crate) fn ds(name: &str, gds: bool) -> Class {
    let seg = if gds { Seg::Gds } else { Seg::Lds };
    let lds = |mem, bytes| Class {
        family: Family::Lds,
        mem,
        seg,
        bytes,
    };
    if matches!(
        name,
        "ds_swizzle_b32" | "ds_permute_b32" | "ds_bpermute_b32" | "ds_nop"
    ) || name.starts_with("ds_gws")
    {
        return Class::plain(Family::Lds);
    }
    if name == "ds_append" || name == "ds_consume" {
        return lds(MemKind::Atomic, 4);
    }
    let elem = if name.contains("b128") {
        16
    } else if name.contains("pk_") {
        4
    } else if name.contains("b128") {
        16
    } else if name.contains("b96") {
        12
    } else if name.contains("64") && !name.contains("st64") || name.contains("st64_b64") {
        8
    } else if name.contains("8") && !name.contains("st64") {
        1
    } else if name.contains("16") {
        2
    } else {
        4
    };
    let two = name.contains("read2") || name.contains("write2") || name.contains("wrxchg2");
    let bytes = if two { 2 * elem } else { elem };
    if name.starts_with("ds_read") || name.starts_with("ds_load") {
        lds(MemKind::Load, bytes)
    } else if (name.starts_with("ds_write") || name.starts_with("ds_store"))
        && !name.contains("wrxchg")
    {
        lds(MemKind::Store, bytes)
    } else {
        lds(MemKind::Atomic, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocjitsu_isa::Target;

    fn class_of(text: &str) -> Class {
        let bytes = crate::exec::testing::assemble(Target::Gfx942, text);
        classify(&rocjitsu_isa::decode(Target::Gfx942, &bytes).unwrap())
    }

    #[test]
    fn memory_instructions_have_their_sizes() {
        let cases: &[(&str, Family, MemKind, Seg, u16)] = &[
            (
                "global_load_dwordx4 v[0:3], v[4:5], off",
                Family::VmemLoad,
                MemKind::Load,
                Seg::Global,
                16,
            ),
            (
                "global_store_short v[0:1], v2, off",
                Family::VmemStore,
                MemKind::Store,
                Seg::Global,
                2,
            ),
            (
                "flat_load_ubyte v0, v[0:1]",
                Family::VmemLoad,
                MemKind::Load,
                Seg::Flat,
                1,
            ),
            (
                "global_atomic_add_x2 v[0:1], v[2:3], off",
                Family::VmemAtomic,
                MemKind::Atomic,
                Seg::Global,
                8,
            ),
            (
                "buffer_load_format_xyz v[0:2], off, s[0:3], 0",
                Family::VmemLoad,
                MemKind::Load,
                Seg::Buffer,
                12,
            ),
            (
                "ds_read2_b64 v[0:3], v4 offset1:1",
                Family::Lds,
                MemKind::Load,
                Seg::Lds,
                16,
            ),
            (
                "ds_write_b8 v0, v1",
                Family::Lds,
                MemKind::Store,
                Seg::Lds,
                1,
            ),
            (
                "ds_read2st64_b32 v[0:1], v2 offset1:1",
                Family::Lds,
                MemKind::Load,
                Seg::Lds,
                8,
            ),
            (
                "ds_add_u32 v0, v1",
                Family::Lds,
                MemKind::Atomic,
                Seg::Lds,
                4,
            ),
            (
                "s_load_dwordx8 s[0:7], s[0:1], 0x0",
                Family::Smem,
                MemKind::Load,
                Seg::Scalar,
                32,
            ),
        ];
        for &(text, family, mem, seg, bytes) in cases {
            let c = class_of(text);
            assert_eq!(
                (c.family, c.mem, c.seg, c.bytes),
                (family, mem, seg, bytes),
                "{text}"
            );
        }
    }

    #[test]
    fn control_and_alu_families() {
        for (text, family) in [
            ("s_add_u32 s0, s1, s2", Family::Salu),
            ("v_add_u32_e32 v0, v1, v2", Family::Valu),
            (
                "v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]",
                Family::Mfma,
            ),
            ("s_waitcnt vmcnt(0)", Family::Wait),
            ("s_barrier", Family::Barrier),
            ("s_cbranch_scc1 4", Family::Branch),
            ("s_setpc_b64 s[0:1]", Family::Branch),
            ("s_endpgm", Family::Other),
            (
                "ds_swizzle_b32 v0, v1 offset:swizzle(BROADCAST,2,0)",
                Family::Lds,
            ),
        ] {
            let c = class_of(text);
            assert_eq!(c.family, family, "{text}");
        }
        assert_eq!(class_of("ds_swizzle_b32 v0, v1").mem, MemKind::None);
    }
}
