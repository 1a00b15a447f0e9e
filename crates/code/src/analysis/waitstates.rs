//! Wait states the hardware does not enforce: between some pairs of
//! instructions the program must itself put independent instructions or
//! `s_nop`s (ISA manuals, "Manually inserted wait states"; MFMA
//! "Dependency resolution: required independent instructions"). This is
//! the one table of those rules for gfx90a, gfx942 and gfx950, read by the
//! `hazards` execution plugin (dynamically, along the path a wave takes)
//! and meant for the DBT scheduler and the timing model.
//!
//! A rule names a producer, a consumer, the registers linking them, and
//! the wait states needed between them. Distances count as LLVM's
//! `GCNHazardRecognizer` counts them: every instruction issued between the
//! two is one wait state, `s_nop N` is N+1. The numbers are the CDNA3 and
//! CDNA4 ISA manuals' and LLVM 22's (`GCNHazardRecognizer.cpp`: the checks
//! named in each [`Rule::about`]); MFMA pass counts are LLVM 22's
//! scheduling model's (`mfma_passes.rs`).
//!
//! [`Window`] is the checker: fed each issued instruction's [`Facts`] in
//! order, it keeps per register the time of the last write (or read) by
//! each kind of producer and reports a [`Violation`] when a consumer comes
//! too soon.

use super::mfma_passes::MFMA_PASSES;
use rocjitsu_isa::gfx9::Body;
use rocjitsu_isa::gfx9::regs::{EXEC, M0, Range, Regs, UNITS, VCC, VGPR0};
use rocjitsu_isa::gfx9::vop::Ext as VopExt;
use rocjitsu_isa::{Inst, Target};

/// Bits of [`Facts::kind`].
pub mod kind {
    pub const VALU: u32 = 1;
    pub const SALU: u32 = 1 << 1;
    /// MUBUF, MTBUF, MIMG.
    pub const VMEM: u32 = 1 << 2;
    /// FLAT, GLOBAL, SCRATCH.
    pub const FLAT: u32 = 1 << 3;
    pub const DS: u32 = 1 << 4;
    pub const SMEM: u32 = 1 << 5;
    /// `v_mfma*`, `v_smfmac*`.
    pub const MFMA: u32 = 1 << 6;
    /// An MFMA on the f64 (DGEMM) pipeline.
    pub const DGEMM: u32 = 1 << 7;
    pub const DOT: u32 = 1 << 8;
    /// Transcendental VALU (`v_exp`, `v_log`, `v_rcp`, `v_rsq`, `v_sqrt`,
    /// `v_sin`, `v_cos`).
    pub const TRANS: u32 = 1 << 9;
    pub const DPP: u32 = 1 << 10;
    /// Writes part of its destination: SDWA `dst_sel` other than DWORD,
    /// or VOP3 `op_sel[3]`.
    pub const DST_SEL: u32 = 1 << 11;
    pub const DIV_FMAS: u32 = 1 << 12;
    /// `v_readlane_b32`, `v_writelane_b32`.
    pub const RW_LANE: u32 = 1 << 13;
    /// `v_readlane_b32`, `v_readfirstlane_b32`.
    pub const READ_LANE: u32 = 1 << 14;
    pub const WRITE_LANE: u32 = 1 << 15;
    pub const SETREG: u32 = 1 << 16;
    pub const GETREG: u32 = 1 << 17;
    /// Reads M0 in a way the GFX9 M0 hazard covers: `s_movrel*`,
    /// `ds_*_addtid_b32`, GDS, `s_sendmsg`, LDS DMA.
    pub const M0_READ: u32 = 1 << 18;
    /// `v_fma_f64`, `v_fmac_f64`.
    pub const FMA64: u32 = 1 << 19;
    /// `s_nop`.
    pub const NOP: u32 = 1 << 20;
    /// An XDL MFMA (LLVM `isXDL`): on gfx90a every MFMA but DGEMMs, on
    /// gfx942 and gfx950 also not the f32-input ones (`v_mfma_f32_*_f32`,
    /// LLVM's `is_gfx940_xdl` unset).
    pub const XDL: u32 = 1 << 21;
}

/// What the rules need to know of one instruction, worked out once.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    pub mnemonic: &'static str,
    pub kind: u32,
    pub regs: Regs,
    /// Wait states it counts as (`s_nop N`: N+1, else 1).
    pub wait_states: u8,
    /// MFMA passes (LLVM's scheduling model).
    pub passes: u8,
    /// `s_setreg`/`s_getreg`: the hardware register id.
    pub hwreg: u8,
    /// `v_readlane`/`v_writelane`: the lane-select SGPR.
    pub lane_select: Option<Range>,
    /// `v_readlane`/`v_readfirstlane`: the VGPR read.
    pub lane_source: Option<Range>,
    /// MFMA sources A, B and C.
    pub mfma_src: [Option<Range>; 3],
    /// A store (or atomic) whose data of more than 64 bits the hardware
    /// reads after issue: the data registers.
    pub store_data: Option<Range>,
}

impl Facts {
    pub fn is(&self, k: u32) -> bool {
        self.kind & k != 0
    }

    fn first_write(&self) -> Option<Range> {
        self.regs.writes().next()
    }
}

/// The MFMA passes and DGEMM flag of a mnemonic on a target, from LLVM 22's
/// scheduling model.
pub fn mfma_passes(target: Target, mnemonic: &str) -> Option<(u8, bool)> {
    let name = mnemonic.strip_suffix("_e64").unwrap_or(mnemonic);
    let name = match name.strip_prefix("v_mfma_scale_") {
        Some(rest) => return mfma_passes(target, &format!("v_mfma_{rest}")),
        None => name,
    };
    let i = MFMA_PASSES.binary_search_by(|e| e.0.cmp(name)).ok()?;
    let (p, d) = MFMA_PASSES[i].1[target.index()];
    (p != 0).then_some((p, d))
}

const TRANS_OPS: &[&str] = &[
    "v_exp_f32",
    "v_exp_f16",
    "v_exp_legacy_f32",
    "v_log_f32",
    "v_log_f16",
    "v_log_legacy_f32",
    "v_rcp_f32",
    "v_rcp_f16",
    "v_rcp_f64",
    "v_rcp_iflag_f32",
    "v_rsq_f32",
    "v_rsq_f16",
    "v_rsq_f64",
    "v_sqrt_f32",
    "v_sqrt_f16",
    "v_sqrt_f64",
    "v_sin_f32",
    "v_sin_f16",
    "v_cos_f32",
    "v_cos_f16",
];

fn base_name(name: &str) -> &str {
    for suf in ["_e32", "_e64", "_sdwa", "_dpp"] {
        if let Some(b) = name.strip_suffix(suf) {
            return b;
        }
    }
    name
}

fn sreg_field(field: u16) -> Option<Range> {
    rocjitsu_isa::gfx9::operand::decode_sreg(field, 1)
        .as_ref()
        .and_then(rocjitsu_isa::gfx9::regs::range_of)
}

impl Facts {
    /// The facts of `inst`.
    pub fn of(inst: &Inst) -> Facts {
        use kind::*;
        let t = inst.target();
        let name = inst.mnemonic();
        let base = base_name(name);
        let regs = inst.regs();
        let mut f = Facts {
            mnemonic: name,
            kind: 0,
            regs,
            wait_states: 1,
            passes: 0,
            hwreg: 0,
            lane_select: None,
            lane_source: None,
            mfma_src: [None; 3],
            store_data: None,
        };
        match inst.body() {
            Body::Salu(_) => f.kind |= SALU,
            Body::Sopk(k) => {
                f.kind |= SALU;
                use rocjitsu_isa::gfx9::sop::SopkKind;
                match k.row.kind {
                    SopkKind::SetReg | SopkKind::SetRegImm32 => {
                        f.kind |= SETREG;
                        f.hwreg = (k.simm16 & 0x3f) as u8;
                    }
                    SopkKind::GetReg => {
                        f.kind |= GETREG;
                        f.hwreg = (k.simm16 & 0x3f) as u8;
                    }
                    _ => {}
                }
            }
            Body::Sopp(p) => {
                f.kind |= SALU;
                if name == "s_nop" {
                    f.kind |= NOP;
                    f.wait_states = (p.simm16 & 0xf) as u8 + 1;
                }
            }
            Body::Smem(_) => f.kind |= SMEM,
            Body::Vop(v) => {
                f.kind |= VALU;
                if let Some(x) = v.fields() {
                    match x.ext {
                        VopExt::Dpp(_) => f.kind |= DPP,
                        VopExt::Sdwa(s)
                            if s.dst_sel != 6
                                && !matches!(x.info.dst, rocjitsu_isa::gfx9::vop::Dst::Vcc) =>
                        {
                            f.kind |= DST_SEL
                        }
                        _ => {}
                    }
                    if base == "v_readfirstlane_b32" {
                        f.lane_source = rocjitsu_isa::gfx9::regs::range_of(&x.src0);
                    }
                }
            }
            Body::Vop3(v) => {
                f.kind |= VALU;
                if v.dst_op_sel() {
                    f.kind |= DST_SEL;
                }
                if matches!(base, "v_readlane_b32" | "v_writelane_b32") {
                    f.lane_select = sreg_field(v.src[1]).filter(|r| r.is_scalar());
                }
                if base == "v_readlane_b32" || base == "v_readfirstlane_b32" {
                    f.lane_source =
                        (v.src[0] >= 256).then(|| Range::new(VGPR0 + v.src[0] - 256, 1));
                }
            }
            Body::Vop3p(p) => {
                f.kind |= VALU;
                if p.row.kind == rocjitsu_isa::gfx9::vop3p::Kind::Mfma
                    && let Some((passes, dgemm)) = mfma_passes(t, name)
                {
                    f.kind |= MFMA;
                    if dgemm {
                        f.kind |= DGEMM;
                    } else if t == Target::Gfx90a || !name.ends_with("_f32") {
                        f.kind |= XDL;
                    }
                    f.passes = passes;
                    f.mfma_src = [p.source(0), p.source(1), p.source(2)];
                }
            }
            Body::Ds(d) => {
                f.kind |= DS;
                if (d.gds && !matches!(name, "ds_nop" | "ds_permute_b32" | "ds_bpermute_b32"))
                    || name.ends_with("_addtid_b32")
                    || name.starts_with("ds_gws")
                    || name == "ds_ordered_count"
                {
                    f.kind |= M0_READ;
                }
            }
            Body::Flat(x) => {
                f.kind |= FLAT;
                if regs.reads_unit(M0) {
                    f.kind |= M0_READ;
                }
                let stores = name.contains("_store") || name.contains("_atomic");
                if stores && x.op.data > 2 {
                    f.store_data = Some(Range::new(
                        if x.acc {
                            rocjitsu_isa::gfx9::regs::AGPR0
                        } else {
                            VGPR0
                        } + u16::from(x.data),
                        x.op.data,
                    ));
                }
            }
            Body::Mubuf(b) | Body::Mtbuf(b) => {
                f.kind |= VMEM;
                if b.lds {
                    f.kind |= M0_READ;
                }
                let stores = name.contains("_store") || name.contains("_atomic");
                let soffset_reg = b.literal().is_none() && b.soffset < 128 && b.soffset != 125;
                if stores && b.op.vdata > 2 && !soffset_reg {
                    f.store_data = Some(Range::new(
                        if b.vdata_agpr(t) {
                            rocjitsu_isa::gfx9::regs::AGPR0
                        } else {
                            VGPR0
                        } + u16::from(b.vdata),
                        b.op.vdata,
                    ));
                }
            }
            Body::Mimg(_) => f.kind |= VMEM,
            // gfx908's interpolation (a VALU operation reading its
            // attributes through M0) and export; the rules above are
            // gfx90a's and later, which have neither.
            Body::Vintrp(_) => f.kind |= VALU | M0_READ,
            Body::Exp(_) => {}
        }
        if name.starts_with("s_movrel")
            || matches!(name, "s_sendmsg" | "s_sendmsghalt" | "s_ttracedata")
        {
            f.kind |= M0_READ;
        }
        if base.starts_with("v_dot") {
            f.kind |= DOT;
        }
        if TRANS_OPS.contains(&base) {
            f.kind |= TRANS;
        }
        if base == "v_div_fmas_f32" || base == "v_div_fmas_f64" {
            f.kind |= DIV_FMAS;
        }
        if matches!(base, "v_readlane_b32" | "v_writelane_b32") {
            f.kind |= RW_LANE;
        }
        if matches!(base, "v_readlane_b32" | "v_readfirstlane_b32") {
            f.kind |= READ_LANE;
        }
        if base == "v_writelane_b32" {
            f.kind |= WRITE_LANE;
        }
        if matches!(base, "v_fma_f64" | "v_fmac_f64") {
            f.kind |= FMA64;
        }
        f
    }
}

/// One documented wait-state rule.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    /// What it requires, with its source.
    pub about: &'static str,
    /// Bit 0 gfx90a, bit 1 gfx942, bit 2 gfx950.
    pub targets: u8,
}

const ALL: u8 = 7;
const G94: u8 = 6;

/// The rules, in the order [`Violation::rule`] indexes them.
pub static RULES: &[Rule] = &[
    Rule {
        id: "valu-sgpr-vmem",
        about: "a VALU write of an SGPR (or VCC, EXEC) read by a VMEM/FLAT instruction needs 5 wait states (manual table; LLVM checkVMEMHazards)",
        targets: ALL,
    },
    Rule {
        id: "valu-vgpr-dpp",
        about: "a write of a VGPR read by a DPP instruction needs 2 wait states (LLVM checkDPPHazards)",
        targets: ALL,
    },
    Rule {
        id: "valu-exec-dpp",
        about: "a VALU write of EXEC followed by a DPP instruction needs 5 wait states (LLVM checkDPPHazards)",
        targets: ALL,
    },
    Rule {
        id: "valu-vcc-div-fmas",
        about: "a VALU write of VCC followed by v_div_fmas needs 4 wait states (LLVM checkDivFMasHazards)",
        targets: ALL,
    },
    Rule {
        id: "setreg-getreg",
        about: "s_setreg followed by s_getreg of the same hardware register needs 2 wait states (LLVM checkGetRegHazards)",
        targets: ALL,
    },
    Rule {
        id: "setreg-setreg",
        about: "s_setreg followed by s_setreg of the same hardware register needs 2 wait states (LLVM checkSetRegHazards)",
        targets: ALL,
    },
    Rule {
        id: "store-data-valu",
        about: "a VMEM/FLAT store of more than 64 bits of data (MUBUF without an SGPR soffset) followed by a VALU write of the data VGPRs needs 1 wait state (gfx90a), 2 (gfx942, gfx950) (LLVM checkVALUHazards)",
        targets: ALL,
    },
    Rule {
        id: "trans-valu",
        about: "a transcendental VALU result read by a non-transcendental VALU instruction needs 1 wait state (LLVM hasTransForwardingHazard)",
        targets: G94,
    },
    Rule {
        id: "dst-sel-valu",
        about: "a VALU write of part of a VGPR (SDWA dst_sel, op_sel[3]) read by a VALU instruction needs 1 wait state (LLVM hasDstSelForwardingHazard)",
        targets: G94,
    },
    Rule {
        id: "valu-sgpr-valu",
        about: "a VALU write of an SGPR or VCC read by a VALU instruction needs 2 wait states (LLVM hasVDecCoExecHazard)",
        targets: G94,
    },
    Rule {
        id: "valu-vgpr-readlane",
        about: "a VALU write of the VGPR v_readlane/v_readfirstlane reads needs 1 wait state (LLVM hasVDecCoExecHazard)",
        targets: G94,
    },
    Rule {
        id: "valu-exec-rwlane",
        about: "a VALU write of EXEC followed by v_readlane, v_readfirstlane or v_writelane needs 4 wait states (LLVM hasVDecCoExecHazard)",
        targets: G94,
    },
    Rule {
        id: "valu-sgpr-lane-select",
        about: "a VALU write of the SGPR v_readlane/v_writelane take as lane select needs 4 wait states (manual table; LLVM checkRWLaneHazards)",
        targets: ALL,
    },
    Rule {
        id: "salu-m0",
        about: "an SALU write of M0 followed by s_movrel, GDS, ds_*_addtid, s_sendmsg or LDS DMA needs 1 wait state (LLVM checkReadM0Hazards)",
        targets: ALL,
    },
    Rule {
        id: "valu-exec-mfma",
        about: "a VALU write of EXEC followed by an MFMA needs 4 wait states (manual MFMA table; LLVM checkMAIHazards90A)",
        targets: ALL,
    },
    Rule {
        id: "valu-vgpr-mfma",
        about: "a VALU (not MFMA, not dot) write of a VGPR read by an MFMA needs 2 wait states (manual MFMA table; LLVM checkMAIHazards90A)",
        targets: ALL,
    },
    Rule {
        id: "mfma-srcc",
        about: "an MFMA result read as another MFMA's C: same registers 0 (gfx942+ 2-pass: 2), overlapping by passes (manual MFMA table; LLVM checkMAIHazards90A)",
        targets: ALL,
    },
    Rule {
        id: "mfma-srcab",
        about: "an MFMA result read as another MFMA's A or B: XDL passes+3 (gfx950, more than 2 passes: +4), DGEMM 11 or 6 (manual MFMA table; LLVM checkMAIHazards90A)",
        targets: ALL,
    },
    Rule {
        id: "mfma-read",
        about: "an MFMA result read by a VALU, VMEM, FLAT or DS instruction: XDL passes+3 (gfx950, more than 2 passes: +4), DGEMM 18/9 (memory) or 11/6 (manual MFMA table; LLVM checkMAIVALUHazards)",
        targets: ALL,
    },
    Rule {
        id: "mfma-overwrite",
        about: "an MFMA result overwritten by a VALU or memory instruction: XDL passes+3 (gfx950: +4), DGEMM 11 or 6 (LLVM checkMAIVALUHazards)",
        targets: ALL,
    },
    Rule {
        id: "mfma-srcc-overwrite",
        about: "an XDL MFMA's C overwritten by a VALU or memory instruction: 1/3/7/15 for 2/4/8/16 passes (LLVM checkMAIVALUHazards)",
        targets: ALL,
    },
    Rule {
        id: "dgemm-fma64",
        about: "a DGEMM followed by v_fma_f64/v_fmac_f64 needs 2 wait states (LLVM checkMAIVALUHazards)",
        targets: ALL,
    },
    Rule {
        id: "dot-read",
        about: "a dot-product result read by a VALU or memory instruction needs 3 wait states (the same dot's C: 0) (LLVM checkMAIVALUHazards)",
        targets: ALL,
    },
    Rule {
        id: "valu-dgemm-vmem",
        about: "gfx90a: a VALU write of a VGPR read by a VMEM/FLAT/DS instruction with a DGEMM between needs 2 wait states (LLVM checkMAIVALUHazards)",
        targets: 1,
    },
];

/// A rule broken: the consumer came `got` wait states after the producer,
/// `needed` were required.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Violation<T> {
    /// Index in [`RULES`].
    pub rule: usize,
    /// The register linking them (for rules without one, the consumer's
    /// first operand or none).
    pub reg: Option<Range>,
    pub needed: u8,
    pub got: u32,
    /// The producer's tag and mnemonic.
    pub producer: T,
    pub producer_mnemonic: &'static str,
}

/// Producer tables: per register, the end time of the last such write
/// (or read).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(usize)]
enum Tab {
    /// Any VALU write (MFMA included).
    Valu,
    /// VALU other than MFMA.
    Legacy,
    /// VALU other than MFMA and dot.
    LegacyNotDot,
    /// Any instruction's write.
    Any,
    Trans,
    DstSel,
    Mfma,
    Dot,
    Salu,
    /// Registers read as >64-bit store data.
    StoreData,
    /// Registers read as an XDL MFMA's C.
    SrcC,
}

const TABS: usize = 11;

/// One register unit's end times, by [`Tab`] (16 slots: one cache line).
#[derive(Copy, Clone)]
#[repr(align(64))]
struct Times([u32; 16]);

/// Enough issued instructions to cover the longest rule (19 wait states).
const HISTORY: usize = 32;

#[derive(Copy, Clone)]
struct Issued<T> {
    end: u32,
    tag: T,
    /// What the rules ask of a producer (not the whole [`Facts`]: one of
    /// these is written per executed instruction).
    facts: Producer,
}

/// The facts of an issued instruction that rules read when it is the
/// producer.
#[derive(Copy, Clone, Debug)]
struct Producer {
    mnemonic: &'static str,
    kind: u32,
    passes: u8,
    first_write: Option<Range>,
}

impl Producer {
    fn is(&self, k: u32) -> bool {
        self.kind & k != 0
    }

    fn first_write(&self) -> Option<Range> {
        self.first_write
    }
}

/// The wait-state checker of one wave.
pub struct Window<T> {
    target: Target,
    now: u32,
    /// Per register unit, the end time in each table: one cache line per
    /// unit, so an instruction touches a line per register, not one per
    /// table and register.
    tabs: Box<[Times; UNITS]>,
    /// The latest end time written to each table.
    latest: [u32; TABS],
    dgemm_end: u32,
    setreg: [u32; 64],
    history: Vec<Option<Issued<T>>>,
    head: usize,
}

/// Far enough in the past that no rule applies.
const LONG_AGO: u32 = 0;
/// More wait states than any rule needs: an instruction this far back
/// constrains nothing.
const REACH: u32 = 64;
const START: u32 = 1 << 10;

impl<T: Copy> Window<T> {
    pub fn new(target: Target) -> Window<T> {
        Window {
            target,
            now: START,
            tabs: Box::new([Times([LONG_AGO; 16]); UNITS]),
            latest: [LONG_AGO; TABS],
            dgemm_end: LONG_AGO,
            setreg: [LONG_AGO; 64],
            history: vec![None; HISTORY],
            head: 0,
        }
    }

    /// Forgets the history (a new wave).
    pub fn clear(&mut self) {
        // Moving time on by more than any rule's reach retires every entry
        // without touching the tables.
        self.now = self.now.saturating_add(REACH);
        if self.now > u32::MAX / 2 {
            for t in self.tabs.iter_mut() {
                t.0.fill(LONG_AGO);
            }
            self.latest = [LONG_AGO; TABS];
            self.setreg = [LONG_AGO; 64];
            self.dgemm_end = LONG_AGO;
            self.now = START;
        }
        self.history.iter_mut().for_each(|h| *h = None);
    }

    fn since(&self, end: u32) -> u32 {
        self.now.saturating_sub(end)
    }

    /// The most recent issued instruction whose end time is `end`.
    fn issued(&self, end: u32) -> Option<&Issued<T>> {
        if end == LONG_AGO || self.since(end) >= REACH {
            return None;
        }
        self.history.iter().flatten().find(|h| h.end == end)
    }

    /// The latest end time in table `t` over the units of `r`.
    fn last(&self, t: Tab, r: Range) -> u32 {
        // Most tables had no entry within reach (no MFMA or trans op in the
        // last few instructions): nothing to look up.
        if self.since(self.latest[t as usize]) >= REACH {
            return LONG_AGO;
        }
        r.units()
            .map(|u| self.tabs[usize::from(u)].0[t as usize])
            .max()
            .unwrap_or(LONG_AGO)
    }

    /// Checks the instruction about to issue against what came before,
    /// appends what it breaks to `out`, then records it.
    pub fn step(&mut self, f: &Facts, tag: T, out: &mut Vec<Violation<T>>) {
        let plan = Plan::new(self.target, f);
        self.step_plan(&plan, tag, out);
    }

    #[inline(never)]
    fn report(
        &self,
        out: &mut Vec<Violation<T>>,
        rule: usize,
        reg: Option<Range>,
        needed: u8,
        end: u32,
    ) {
        let got = self.since(end);
        if end == LONG_AGO
            || got >= u32::from(needed)
            || RULES[rule].targets & self.target.bit() == 0
        {
            return;
        }
        if let Some(p) = self.issued(end) {
            out.push(Violation {
                rule,
                reg,
                needed,
                got,
                producer: p.tag,
                producer_mnemonic: p.facts.mnemonic,
            });
        }
    }

    /// Like [`Window::report`] for a per-register table: the latest
    /// producer over the units of `r`.
    #[inline]
    fn check_tab(&self, out: &mut Vec<Violation<T>>, rule: usize, t: Tab, r: Range, needed: u8) {
        let end = self.last(t, r);
        // The common case, kept inline: far enough back, nothing to report.
        if end == LONG_AGO || self.since(end) >= u32::from(needed) {
            return;
        }
        self.report(out, rule, Some(r), needed, end);
    }

    /// Checks the instruction of `plan` against what came before, appends
    /// what it breaks to `out`, then records it: [`Window::step`] with the
    /// consumer's part of the work done once, in [`Plan::new`].
    pub fn step_plan(&mut self, plan: &Plan, tag: T, out: &mut Vec<Violation<T>>) {
        self.check(plan, out);
        self.record(plan, tag);
    }

    fn check(&self, plan: &Plan, out: &mut Vec<Violation<T>>) {
        use kind::*;
        let f = &plan.facts;
        for c in plan.checks.iter() {
            match *c {
                Check::Tab {
                    rule,
                    tab,
                    reg,
                    needed,
                } => self.check_tab(out, usize::from(rule), tab, reg, needed),
                Check::SetReg { rule } => self.report(
                    out,
                    usize::from(rule),
                    None,
                    2,
                    self.setreg[usize::from(f.hwreg & 63)],
                ),
            }
        }
        if f.is(MFMA) {
            self.check_mfma(f, out);
        } else if f.is(VALU | VMEM | FLAT | DS) && self.mfma_consumers_possible(f) {
            let g94 = self.target != Target::Gfx90a;
            let g950 = self.target == Target::Gfx950;
            self.check_mfma_consumers(f, out, g94, g950);
        }
    }

    /// Whether any rule of [`Window::check_mfma_consumers`] can apply:
    /// a dot, MFMA or DGEMM producer within reach.
    fn mfma_consumers_possible(&self, f: &Facts) -> bool {
        let recent = |t: Tab| self.since(self.latest[t as usize]) < REACH;
        recent(Tab::Dot)
            || recent(Tab::Mfma)
            || recent(Tab::SrcC)
            || (self.dgemm_end != LONG_AGO
                && self.since(self.dgemm_end) < REACH
                && (f.is(kind::FMA64) || self.target == Target::Gfx90a))
    }

    /// Rules whose consumer is an MFMA.
    fn check_mfma(&self, f: &Facts, out: &mut Vec<Violation<T>>) {
        use kind::*;
        let g94 = self.target != Target::Gfx90a;
        let g950 = self.target == Target::Gfx950;
        self.check_tab(out, 14, Tab::Legacy, Range::new(EXEC, 2), 4);
        for (i, src) in f.mfma_src.iter().enumerate() {
            let Some(r) = *src else { continue };
            self.check_tab(out, 15, Tab::LegacyNotDot, r, 2);
            let end = self.last(Tab::Mfma, r);
            let Some(p) = self.issued(end) else { continue };
            let pf = &p.facts;
            let passes = pf.passes;
            let full = pf.first_write() == Some(r);
            let xdl = f.is(XDL);
            let p_xdl = pf.is(XDL);
            let f64_16 = pf.is(DGEMM) && pf.mnemonic.contains("16x16");
            let f64_4 = pf.is(DGEMM) && pf.mnemonic.contains("4x4");
            let need = if i == 2 {
                if !f.is(DGEMM) && !g94 && pf.is(DGEMM) {
                    0
                } else if full {
                    if f64_4 && f.is(DGEMM) && f.mnemonic.contains("4x4") {
                        4
                    } else if g94 && passes == 2 {
                        2
                    } else {
                        0
                    }
                } else if f64_16 {
                    if xdl { 0 } else { 9 }
                } else if f64_4 {
                    if xdl { 0 } else { 4 }
                } else if g94 {
                    if xdl && !p_xdl {
                        0
                    } else if p_xdl {
                        passes + 1
                    } else {
                        passes
                    }
                } else {
                    let dgemm = f.is(DGEMM);
                    match passes {
                        2 => 2 + u8::from(dgemm),
                        8 => 8 + u8::from(dgemm),
                        _ => 16 + u8::from(dgemm),
                    }
                }
            } else if f64_16 {
                11
            } else if f64_4 {
                6
            } else if g94 {
                xdl_read(passes, p_xdl, g950)
            } else {
                match passes {
                    2 => 5,
                    8 => 11,
                    _ => 19,
                }
            };
            self.report(out, if i == 2 { 16 } else { 17 }, Some(r), need, end);
        }
    }

    /// Rules whose producer is an MFMA or dot and whose consumer is a VALU
    /// or memory instruction.
    fn check_mfma_consumers(&self, f: &Facts, out: &mut Vec<Violation<T>>, g94: bool, g950: bool) {
        use kind::*;
        let mem = f.is(VMEM | FLAT | DS);
        for r in f.regs.reads().filter(|r| r.is_vector()) {
            // Dot results.
            let end = self.last(Tab::Dot, r);
            if let Some(p) = self.issued(end) {
                let same = p.facts.mnemonic == f.mnemonic;
                let is_c = same && f.regs.reads().filter(|x| x.is_vector()).nth(2) == Some(r);
                if !is_c {
                    self.report(out, 22, Some(r), 3, end);
                }
            }
            // gfx90a: VALU write, then a DGEMM, then the memory read.
            if mem && !g94 {
                let w = self.last(Tab::Valu, r);
                if self.dgemm_end > w {
                    self.report(out, 23, Some(r), 2, w);
                }
            }
            let end = self.last(Tab::Mfma, r);
            if let Some(p) = self.issued(end) {
                let pf = &p.facts;
                let need = if pf.is(DGEMM) {
                    match (pf.passes, mem) {
                        (4, true) => 9,
                        (4, false) => 6,
                        (_, true) => 18,
                        (_, false) => 11,
                    }
                } else if g94 {
                    xdl_read(pf.passes, pf.is(XDL), g950)
                } else {
                    match pf.passes {
                        2 => 5,
                        8 => 11,
                        _ => 19,
                    }
                };
                self.report(out, 18, Some(r), need, end);
            }
        }
        if f.is(FMA64) {
            self.report(out, 21, None, 2, self.dgemm_end);
        }
        for w in f.regs.writes().filter(|r| r.is_vector()) {
            let end = self.last(Tab::Dot, w);
            if let Some(p) = self.issued(end)
                && p.facts.mnemonic != f.mnemonic
            {
                self.report(out, 22, Some(w), 3, end);
            }
            let end = self.last(Tab::Mfma, w);
            if let Some(p) = self.issued(end) {
                let pf = &p.facts;
                let need = if pf.is(DGEMM) {
                    if pf.passes == 4 { 6 } else { 11 }
                } else if g94 {
                    xdl_read(pf.passes, pf.is(XDL), g950)
                } else {
                    match pf.passes {
                        2 => 5,
                        8 => 11,
                        _ => 19,
                    }
                };
                self.report(out, 19, Some(w), need, end);
            }
            let end = self.last(Tab::SrcC, w);
            if let Some(p) = self.issued(end) {
                let need = match p.facts.passes {
                    2 => 1,
                    4 => 3,
                    8 => 7,
                    _ => 15,
                };
                self.report(out, 20, Some(w), need, end);
            }
        }
    }

    fn record(&mut self, plan: &Plan, tag: T) {
        use kind::*;
        let f = &plan.facts;
        let end = self.now + u32::from(f.wait_states);
        let mut set = |t: Tab, r: Range| {
            self.latest[t as usize] = end;
            for u in r.units() {
                self.tabs[usize::from(u)].0[t as usize] = end;
            }
        };
        if plan.write_tabs != 0 {
            for w in f.regs.writes() {
                for t in TAB_LIST {
                    if plan.write_tabs & (1 << t as u16) != 0 {
                        set(t, w);
                    }
                }
            }
        }
        if let Some(r) = f.store_data {
            set(Tab::StoreData, r);
        }
        if f.is(XDL)
            && let Some(c) = f.mfma_src[2]
        {
            set(Tab::SrcC, c);
        }
        if f.is(DGEMM) {
            self.dgemm_end = end;
        }
        if f.is(SETREG) {
            self.setreg[usize::from(f.hwreg & 63)] = end;
        }
        self.history[self.head] = Some(Issued {
            end,
            tag,
            facts: plan.producer,
        });
        self.head = (self.head + 1) % HISTORY;
        self.now = end;
    }
}

/// One check of an instruction that depends on nothing but the
/// instruction (which registers, which table, how many wait states).
#[derive(Copy, Clone, Debug)]
enum Check {
    /// The latest producer in `tab` over `reg` must be `needed` back.
    Tab {
        rule: u8,
        tab: Tab,
        reg: Range,
        needed: u8,
    },
    /// The last `s_setreg` of the same hardware register must be 2 back.
    SetReg { rule: u8 },
}

/// What [`Window`] does for one instruction on one target, worked out once
/// from its [`Facts`] (the `hazards` plugin keeps one per PC): the checks
/// that depend only on the consumer, in the order the rules are listed,
/// and the tables its writes go to. Rules whose wait states depend on the
/// producer (MFMA, dot, DGEMM) are still worked out per step.
#[derive(Clone, Debug)]
pub struct Plan {
    facts: Facts,
    producer: Producer,
    checks: Box<[Check]>,
    /// Bit `Tab as u16`: the tables each written register goes to.
    write_tabs: u16,
}

impl Plan {
    pub fn new(target: Target, f: &Facts) -> Plan {
        use kind::*;
        let mut checks = Vec::new();
        let bit = target.bit();
        let applies = |rule: u8| RULES[usize::from(rule)].targets & bit != 0;
        let tab = |checks: &mut Vec<Check>, rule: u8, tab: Tab, reg: Range, needed: u8| {
            if applies(rule) {
                checks.push(Check::Tab {
                    rule,
                    tab,
                    reg,
                    needed,
                });
            }
        };
        let g94 = target != Target::Gfx90a;
        let exec = Range::new(EXEC, 2);
        let vcc = Range::new(VCC, 2);
        let reads = || f.regs.reads();
        let scalar_reads = || reads().filter(|r| r.is_scalar() && r.first != M0 && r.first != EXEC);

        // 0: VALU writes SGPR -> VMEM reads it (EXEC included).
        if f.is(VMEM | FLAT) {
            for r in reads().filter(|r| r.is_scalar()).chain([exec]) {
                tab(&mut checks, 0, Tab::Valu, r, 5);
            }
        }
        if f.is(DPP) {
            for r in reads().filter(|r| r.is_vector()) {
                tab(&mut checks, 1, Tab::Any, r, 2);
            }
            tab(&mut checks, 2, Tab::Valu, exec, 5);
        }
        if f.is(DIV_FMAS) {
            tab(&mut checks, 3, Tab::Valu, vcc, 4);
        }
        if f.is(GETREG | SETREG) {
            let rule = if f.is(GETREG) { 4 } else { 5 };
            if applies(rule) {
                checks.push(Check::SetReg { rule });
            }
        }
        if f.is(VALU) {
            for w in f.regs.writes().filter(|r| r.is_vector()) {
                tab(&mut checks, 6, Tab::StoreData, w, if g94 { 2 } else { 1 });
            }
            if g94 {
                if !f.is(TRANS) {
                    for r in reads().filter(|r| r.is_vector()) {
                        tab(&mut checks, 7, Tab::Trans, r, 1);
                    }
                }
                for r in reads().filter(|r| r.is_vector()) {
                    tab(&mut checks, 8, Tab::DstSel, r, 1);
                }
                for r in scalar_reads() {
                    tab(&mut checks, 9, Tab::Valu, r, 2);
                }
                if f.is(READ_LANE)
                    && let Some(r) = f.lane_source
                {
                    tab(&mut checks, 10, Tab::Valu, r, 1);
                }
                if f.is(READ_LANE | WRITE_LANE) {
                    tab(&mut checks, 11, Tab::Valu, exec, 4);
                }
            }
        }
        if f.is(RW_LANE)
            && let Some(r) = f.lane_select
        {
            tab(&mut checks, 12, Tab::Valu, r, 4);
        }
        if f.is(M0_READ) {
            tab(&mut checks, 13, Tab::Salu, Range::new(M0, 1), 1);
        }

        let mut write_tabs = 1u16 << Tab::Any as u16;
        let mut add = |t: Tab| write_tabs |= 1 << t as u16;
        if f.is(VALU) {
            add(Tab::Valu);
            if !f.is(MFMA) {
                add(Tab::Legacy);
                if !f.is(DOT) {
                    add(Tab::LegacyNotDot);
                }
            }
            if f.is(TRANS) {
                add(Tab::Trans);
            }
            if f.is(DST_SEL) {
                add(Tab::DstSel);
            }
            if f.is(MFMA) {
                add(Tab::Mfma);
            }
            if f.is(DOT) {
                add(Tab::Dot);
            }
        }
        if f.is(SALU) {
            add(Tab::Salu);
        }
        if f.regs.writes().next().is_none() {
            write_tabs = 0;
        }
        Plan {
            facts: *f,
            producer: Producer {
                mnemonic: f.mnemonic,
                kind: f.kind,
                passes: f.passes,
                first_write: f.first_write(),
            },
            checks: checks.into_boxed_slice(),
            write_tabs,
        }
    }

    /// The facts it was worked out from.
    pub fn facts(&self) -> &Facts {
        &self.facts
    }
}

const TAB_LIST: [Tab; TABS] = [
    Tab::Valu,
    Tab::Legacy,
    Tab::LegacyNotDot,
    Tab::Any,
    Tab::Trans,
    Tab::DstSel,
    Tab::Mfma,
    Tab::Dot,
    Tab::Salu,
    Tab::StoreData,
    Tab::SrcC,
];

/// An MFMA result read by a later instruction (or overwritten) on gfx942+:
/// passes+3 for XDL producers, passes+2 for the others; gfx950 adds one
/// for XDL producers of more than 2 passes.
fn xdl_read(passes: u8, xdl: bool, g950: bool) -> u8 {
    if xdl {
        passes + 3 + u8::from(g950 && passes > 2)
    } else {
        passes + 2
    }
}
