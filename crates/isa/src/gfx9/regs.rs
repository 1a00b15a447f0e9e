//! The registers an instruction reads and writes, in one numbering of the
//! wave's register files ([`Unit`]), for analyses that follow data through
//! registers: the hazard checker, liveness, def-use (`rocjitsu_code::analysis`).
//!
//! Explicit operands come from the same table rows and fields the printer
//! uses, so a register's file, index and width are those LLVM prints.
//! Implicit operands are added where the ISA manual's instruction
//! descriptions name them: VCC for carry-in/out and `v_div_fmas`, EXEC for
//! `*_saveexec`, `v_cmpx*` and `s_cbranch_exec*`, M0 for the instructions
//! that take an address or count from it (LDS DMA, GDS, `*_addtid`,
//! `s_movrel*`, `v_movrel*`, `s_sendmsg`), and the destination of the
//! instructions that merge into it (`v_mac`/`v_fmac`, `v_writelane`, SDWA
//! with `dst_unused:UNUSED_PRESERVE`, SMFMAC's accumulator).
//!
//! SCC is a unit of its own ([`SCC`]): the scalar instructions that set it
//! (carries, compares, the bitwise and shift operations' "result is not
//! zero") and those that read it (carry-in, `s_cselect`, `s_cmov*`,
//! `s_cbranch_scc*`) are named by [`scc_use`], shared by every family; the
//! `src_scc`, `src_vccz` and `src_execz` sources read SCC, VCC and EXEC.
//!
//! Not tracked: the EXEC mask every vector instruction reads, and the
//! registers `s_movrel*`/`v_movrel*` reach through M0 (the printed operand
//! stands for them).

use super::operand::{Half, Operand, RegFile, Special, decode_src, decode_sreg};
use super::sop::{Field, SopkKind};
use super::vop::{Dst as VopDst, Ext as VopExt, flags};
use super::vop3::{Dst as V3Dst, SRC_ATTR, SRC_PARAM};
use super::vop3p::{Tail, Vop3p};
use super::{Body, Inst};

/// A 32-bit register in one numbering of the wave's files: the scalar
/// operand space as the encodings number it (0..=101 `s0`..`s101`, 102/103
/// `flat_scratch`, 104/105 `xnack_mask`, 106/107 `vcc`, 108..=123 `ttmp0`..,
/// 124 `m0`, 126/127 `exec`), then [`VGPR0`] + N for `vN` and [`AGPR0`] + N
/// for `aN`.
pub type Unit = u16;

pub const VCC: Unit = 106;
pub const TTMP0: Unit = 108;
pub const M0: Unit = 124;
pub const EXEC: Unit = 126;
/// The scalar condition code (the `src_scc` source field's value).
pub const SCC: Unit = 253;
pub const VGPR0: Unit = 256;
pub const AGPR0: Unit = 512;
/// Units in the numbering.
pub const UNITS: usize = 768;

/// `count` consecutive units from `first`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Range {
    pub first: Unit,
    pub count: u8,
}

impl Range {
    pub const fn new(first: Unit, count: u8) -> Range {
        Range { first, count }
    }

    pub fn units(self) -> impl Iterator<Item = Unit> {
        self.first..self.first + Unit::from(self.count)
    }

    pub fn overlaps(self, o: Range) -> bool {
        self.first < o.first + Unit::from(o.count) && o.first < self.first + Unit::from(self.count)
    }

    pub fn contains(self, u: Unit) -> bool {
        u >= self.first && u < self.first + Unit::from(self.count)
    }

    pub fn is_vector(self) -> bool {
        self.first >= VGPR0
    }

    pub fn is_scalar(self) -> bool {
        self.first < VGPR0
    }
}

impl std::fmt::Display for Range {
    /// LLVM's spelling: `s4`, `v[0:3]`, `a7`, `vcc`, `exec_lo`, `m0`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (p, base) = match self.first {
            VCC..=107 | 126 | 127 | 102..=105 => {
                let (name, b) = match self.first {
                    102 | 103 => ("flat_scratch", 102),
                    104 | 105 => ("xnack_mask", 104),
                    106 | 107 => ("vcc", 106),
                    _ => ("exec", 126),
                };
                return match (self.first - b, self.count) {
                    (0, 2) => f.write_str(name),
                    (0, _) => write!(f, "{name}_lo"),
                    _ => write!(f, "{name}_hi"),
                };
            }
            M0 => return f.write_str("m0"),
            SCC => return f.write_str("scc"),
            TTMP0..=123 => ("ttmp", TTMP0),
            0..=101 => ("s", 0),
            VGPR0..=511 => ("v", VGPR0),
            _ => ("a", AGPR0),
        };
        let i = self.first - base;
        if self.count <= 1 {
            write!(f, "{p}{i}")
        } else {
            write!(f, "{p}[{i}:{}]", i + Unit::from(self.count) - 1)
        }
    }
}

/// The registers of one instruction.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Regs {
    reads: [Option<Range>; 8],
    writes: [Option<Range>; 4],
}

impl Regs {
    pub fn reads(&self) -> impl Iterator<Item = Range> + '_ {
        self.reads.iter().map_while(|r| *r)
    }

    pub fn writes(&self) -> impl Iterator<Item = Range> + '_ {
        self.writes.iter().map_while(|r| *r)
    }

    pub fn reads_unit(&self, u: Unit) -> bool {
        self.reads().any(|r| r.contains(u))
    }

    pub fn writes_unit(&self, u: Unit) -> bool {
        self.writes().any(|r| r.contains(u))
    }

    fn push(list: &mut [Option<Range>], r: Range) {
        if r.count == 0 || list.iter().flatten().any(|x| *x == r) {
            return;
        }
        if let Some(slot) = list.iter_mut().find(|s| s.is_none()) {
            *slot = Some(r);
        }
    }

    pub(crate) fn read(&mut self, r: Option<Range>) {
        if let Some(r) = r {
            Regs::push(&mut self.reads, r);
        }
    }

    pub(crate) fn write(&mut self, r: Option<Range>) {
        if let Some(r) = r {
            Regs::push(&mut self.writes, r);
        }
    }

    /// Adds SCC as [`scc_use`] says for the mnemonic `name`.
    pub(crate) fn scc(&mut self, name: &str) {
        let u = scc_use(name);
        if u.reads {
            self.read(one(SCC));
        }
        if u.writes {
            self.write(one(SCC));
        }
    }
}

/// The units an operand names (`None` for constants, `null` and the
/// read-only hardware sources).
pub fn range_of(o: &Operand) -> Option<Range> {
    match *o {
        Operand::Reg(r) => {
            let base = match r.file {
                RegFile::Sgpr => 0,
                RegFile::Ttmp => TTMP0,
                RegFile::Vgpr => VGPR0,
                RegFile::Agpr => AGPR0,
            };
            Some(Range::new(base + r.index, r.count.max(1)))
        }
        Operand::Special(sp, half) => {
            let base = match sp {
                Special::FlatScratch => 102,
                Special::XnackMask => 104,
                Special::Vcc => VCC,
                Special::Exec => EXEC,
                Special::M0 | Special::SrcLdsDirect => return Some(Range::new(M0, 1)),
                Special::SrcScc => return Some(Range::new(SCC, 1)),
                Special::SrcVccz => return Some(Range::new(VCC, 2)),
                Special::SrcExecz => return Some(Range::new(EXEC, 2)),
                _ => return None,
            };
            Some(match half {
                Half::Full => Range::new(base, 2),
                Half::Lo => Range::new(base, 1),
                Half::Hi => Range::new(base + 1, 1),
            })
        }
        _ => None,
    }
}

fn field_range(f: &Field) -> Option<Range> {
    match f {
        Field::Op(o) => range_of(o),
        Field::Unused(_) => None,
    }
}

/// A scalar register field of `n` dwords.
fn sreg(field: u16, n: u8) -> Option<Range> {
    decode_sreg(field, n).as_ref().and_then(range_of)
}

/// A 9-bit source field of `n` dwords (VGPR when `agpr` is false).
fn src(field: u16, n: u8, agpr: bool) -> Option<Range> {
    if (256..512).contains(&field) {
        let base = if agpr { AGPR0 } else { VGPR0 };
        return Some(Range::new(base + field - 256, n));
    }
    decode_src(field, n, Some(0)).as_ref().and_then(range_of)
}

pub(crate) fn vreg(idx: u8, n: u8, agpr: bool) -> Option<Range> {
    let base = if agpr { AGPR0 } else { VGPR0 };
    (n > 0).then(|| Range::new(base + Unit::from(idx), n))
}

pub(crate) const fn one(u: Unit) -> Option<Range> {
    Some(Range::new(u, 1))
}

pub(crate) const fn pair(u: Unit) -> Option<Range> {
    Some(Range::new(u, 2))
}

impl Inst {
    /// The registers the instruction reads and writes (see the module
    /// documentation for what is included).
    pub fn regs(&self) -> Regs {
        let mut g = Regs::default();
        let name = self.mnemonic();
        match self.body() {
            Body::Salu(s) => {
                if let Some(f) = s.fields() {
                    let d = field_range(&f.sdst);
                    g.write(d);
                    g.read(field_range(&f.src0));
                    g.read(field_range(&f.src1));
                    // Read-modify-write and conditional destinations.
                    if name.starts_with("s_bitset") || name.starts_with("s_cmov") {
                        g.read(d);
                    }
                }
                if name.contains("saveexec") || name.contains("wrexec") {
                    g.read(pair(EXEC));
                    g.write(pair(EXEC));
                }
                if name.starts_with("s_movrel") {
                    g.read(one(M0));
                }
            }
            Body::Sopk(k) => {
                let d = field_range(&k.sdst());
                match k.row.kind {
                    SopkKind::Imm if name.starts_with("s_cmpk") => g.read(d),
                    SopkKind::Imm if name == "s_movk_i32" => g.write(d),
                    SopkKind::Imm => {
                        // s_addk, s_mulk, s_cmovk: read-modify-write.
                        g.read(d);
                        g.write(d);
                    }
                    SopkKind::Branch64 | SopkKind::GetReg => g.write(d),
                    SopkKind::SetReg => g.read(d),
                    SopkKind::SetRegImm32 => {}
                }
            }
            Body::Sopp(_) => match name {
                "s_cbranch_vccz" | "s_cbranch_vccnz" => g.read(pair(VCC)),
                "s_cbranch_execz" | "s_cbranch_execnz" => g.read(pair(EXEC)),
                "s_sendmsg" | "s_sendmsghalt" | "s_ttracedata" => g.read(one(M0)),
                _ => {}
            },
            Body::Smem(s) => {
                if let Some(f) = s.fields() {
                    g.read(f.sbase.as_ref().and_then(range_of));
                    match f.offset {
                        super::smem::SmemOffset::Sgpr(o)
                        | super::smem::SmemOffset::SgprImm(o, _) => g.read(range_of(&o)),
                        _ => {}
                    }
                    let d = field_range(&f.sdata);
                    if name.contains("_store") {
                        g.read(d);
                    } else if name.starts_with("s_atomic") || name.starts_with("s_buffer_atomic") {
                        g.read(d);
                        if f.glc {
                            let half = name.contains("cmpswap");
                            g.write(d.map(|r| {
                                Range::new(r.first, if half { r.count / 2 } else { r.count })
                            }));
                        }
                    } else if f.row.kind != super::smem::SmemKind::Probe {
                        g.write(d);
                    }
                }
            }
            Body::Vop(v) => {
                if let Some(f) = v.fields() {
                    let info = f.info;
                    let d = f.dst.as_ref().and_then(range_of);
                    g.write(d);
                    g.read(range_of(&f.src0));
                    g.read(f.src1.as_ref().and_then(range_of));
                    if info.flags & flags::CARRY_OUT != 0 {
                        g.write(pair(VCC));
                    }
                    if info.flags & flags::VCC_IN != 0 {
                        g.read(pair(VCC));
                    }
                    if info.dst == VopDst::Vcc && f.dst.is_none() {
                        g.write(pair(VCC));
                    }
                    let base = info.name;
                    if merges_dst(base) {
                        g.read(d);
                    }
                    if let VopExt::Sdwa(s) = f.ext
                        && s.dst_unused == 2
                        && info.dst != VopDst::Vcc
                    {
                        g.read(d);
                    }
                    if base == "v_swap_b32" {
                        g.write(range_of(&f.src0));
                        g.read(d);
                    }
                    vector_implicit(&mut g, base);
                }
            }
            Body::Vop3(v) => {
                let r = v.row;
                let lit = v.literal;
                let d = match r.dst {
                    V3Dst::No => None,
                    V3Dst::V(n) => vreg(v.vdst, n, false),
                    V3Dst::A(n) => vreg(v.vdst, n, true),
                    V3Dst::S(n) => sreg(u16::from(v.vdst), n),
                };
                g.write(d);
                if r.sdst {
                    g.write(sreg(u16::from(v.abs_opsel_sdst), 2));
                }
                for (s, &field) in r.srcs.iter().zip(v.src.iter()) {
                    let n = s.0;
                    if s.1 & (SRC_ATTR | SRC_PARAM) != 0 {
                        // gfx908's interpolation: the attribute data is
                        // addressed through M0.
                        g.read(one(M0));
                        continue;
                    }
                    if field == 255 && lit.is_none() {
                        continue;
                    }
                    g.read(src(field, n, false));
                }
                let base = base_name(r.name);
                if merges_dst(base) || base == "v_writelane_b32" {
                    g.read(d);
                }
                if base == "v_div_fmas_f32" || base == "v_div_fmas_f64" {
                    g.read(pair(VCC));
                }
                vector_implicit(&mut g, base);
            }
            Body::Vop3p(p) => {
                vop3p_regs(&mut g, &p);
                if let Tail::Scaled(m) = &p.tail
                    && let Some(m) = m.as_vop3p()
                {
                    vop3p_regs(&mut g, &m);
                }
            }
            Body::Ds(d) => ds_regs(&mut g, &d),
            Body::Flat(f) => {
                let t = self.target();
                g.write(vreg(f.vdst, f.vdst_width(t), f.acc));
                let off = f.saddr == 0x7f;
                let addr = match f.seg {
                    0 => 2,
                    1 if t.is_gfx940_plus() => u8::from(f.lds),
                    1 => u8::from(off),
                    _ if off => 2,
                    _ => 1,
                };
                g.read(vreg(f.addr, addr, false));
                g.read(vreg(f.data, f.op.data, f.acc));
                if f.seg != 0 && !off {
                    g.read(sreg(u16::from(f.saddr), if f.seg == 1 { 1 } else { 2 }));
                }
                if f.lds_mode(t) {
                    g.read(one(M0));
                }
            }
            Body::Mubuf(b) | Body::Mtbuf(b) => {
                if b.op.has_ops {
                    let vdata = vreg(
                        b.vdata,
                        b.vdata_width(self.target()),
                        b.vdata_agpr(self.target()),
                    );
                    if name.contains("_store") {
                        g.read(vdata);
                    } else if name.contains("_atomic") {
                        g.read(vdata);
                        if b.glc {
                            let half = name.contains("cmpswap");
                            g.write(vdata.map(|r| {
                                Range::new(r.first, if half { r.count / 2 } else { r.count })
                            }));
                        }
                    } else if !b.lds {
                        g.write(vdata);
                    }
                    let n = u8::from(b.offen) + u8::from(b.idxen);
                    g.read(vreg(b.vaddr, n, false));
                    g.read(Some(Range::new(Unit::from(b.srsrc) * 4, 4)));
                    if b.literal().is_none() {
                        g.read(sreg(u16::from(b.soffset), 1));
                    }
                }
                if b.lds {
                    g.read(one(M0));
                }
            }
            Body::Mimg(m) => {
                let t = self.target();
                let vdata = vreg(m.vdata, m.vdata_width(t), m.vdata_agpr(t));
                if name.starts_with("image_store") {
                    g.read(vdata);
                } else if name.starts_with("image_atomic") {
                    g.read(vdata);
                    if m.glc {
                        g.write(vdata);
                    }
                } else {
                    g.write(vdata);
                }
                g.read(vreg(m.vaddr, m.op.vaddr, false));
                g.read(Some(Range::new(Unit::from(m.srsrc & 31) * 4, 8)));
                if m.op.sampler {
                    g.read(Some(Range::new(Unit::from(m.ssamp & 31) * 4, 4)));
                }
            }
            Body::Vintrp(i) => {
                g.write(vreg(i.vdst(), 1, false));
                if !i.is_mov() {
                    g.read(vreg(i.vsrc(), 1, false));
                }
                g.read(one(M0));
            }
            Body::Exp(e) => {
                for k in 0..4 {
                    g.read(e.source(k).and_then(|v| vreg(v, 1, false)));
                }
                g.read(pair(EXEC));
            }
        }
        g.scc(name);
        g
    }
}

/// How a scalar instruction uses SCC, by LLVM's mnemonic (the names are
/// shared by every family; the ISA manuals' instruction descriptions).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SccUse {
    pub reads: bool,
    pub writes: bool,
}

/// [`SccUse`] of the instruction named `name`: SCC is read by carry-in
/// adds and subtracts, `s_cselect`, `s_cmov`, `s_cmovk` and
/// `s_cbranch_scc0/1`; it is written by integer adds and subtracts (carry
/// or overflow), integer min/max, the bitwise, shift, bit-field-extract,
/// count, `s_not`, `s_wqm`, `s_quadmask`, `s_abs`, `s_absdiff` operations
/// (result not zero), the `*_saveexec`/`*_wrexec` forms, and every compare
/// (`s_cmp*`, `s_cmpk*`, `s_bitcmp*`). Moves, multiplies, `s_bfm`,
/// `s_brev`, find-first-bit, sign extension, packing, float arithmetic
/// and the program-counter instructions leave it alone.
pub fn scc_use(name: &str) -> SccUse {
    if !name.starts_with("s_") {
        return SccUse::default();
    }
    let reads = matches!(
        name,
        "s_addc_u32"
            | "s_subb_u32"
            | "s_add_co_ci_u32"
            | "s_sub_co_ci_u32"
            | "s_cbranch_scc0"
            | "s_cbranch_scc1"
            | "s_cmovk_i32"
    ) || name.starts_with("s_cselect_")
        || name.starts_with("s_cmov_");
    const WRITE_NAMES: &[&str] = &[
        "s_add_u32",
        "s_sub_u32",
        "s_add_i32",
        "s_sub_i32",
        "s_addc_u32",
        "s_subb_u32",
        "s_add_co_u32",
        "s_add_co_i32",
        "s_add_co_ci_u32",
        "s_sub_co_u32",
        "s_sub_co_i32",
        "s_sub_co_ci_u32",
        "s_addk_i32",
        "s_addk_co_i32",
        "s_min_i32",
        "s_min_u32",
        "s_max_i32",
        "s_max_u32",
    ];
    const WRITE_PREFIXES: &[&str] = &[
        "s_and_",
        "s_andn",
        "s_or_",
        "s_orn",
        "s_xor_",
        "s_xnor_",
        "s_nand_",
        "s_nor_",
        "s_lshl",
        "s_lshr_",
        "s_ashr_",
        "s_bfe_",
        "s_absdiff_",
        "s_abs_",
        "s_not_",
        "s_wqm_",
        "s_bcnt",
        "s_quadmask_",
        "s_cmp_",
        "s_cmpk_",
        "s_bitcmp",
    ];
    let writes = WRITE_NAMES.contains(&name) || WRITE_PREFIXES.iter().any(|p| name.starts_with(p));
    SccUse { reads, writes }
}

impl Vop3p {
    /// The registers source `i` names (`None` for constants and absent
    /// sources): for MFMA, A, B and C.
    pub fn source(&self, i: usize) -> Option<Range> {
        let s = self.row.srcs.get(i)?;
        let field = self.src[i];
        if field == 255 && self.literal().is_none() {
            return None;
        }
        src(field, self.width(i, s), self.src_agpr(i, s))
    }
}

/// Registers of a DS instruction (GFX9's fields, which GFX11 and GFX12
/// share): the row's operands, and M0 for GDS, GWS, `ds_append`,
/// `ds_consume`, `ds_ordered_count` and `*_addtid`.
pub(crate) fn ds_regs(g: &mut Regs, d: &super::ds::Ds) {
    for o in d.op.ops {
        let agpr = d.acc && o.acc_agpr;
        let (idx, write) = match o.field {
            super::ds::DsField::Addr => (d.addr, false),
            super::ds::DsField::Data0 => (d.data0, false),
            super::ds::DsField::Data1 => (d.data1, false),
            super::ds::DsField::Vdst => (d.vdst, true),
        };
        let r = vreg(idx, o.width, agpr);
        if write { g.write(r) } else { g.read(r) }
    }
    let name = d.op.name;
    if d.gds
        || name.ends_with("_addtid_b32")
        || name.starts_with("ds_gws")
        || matches!(name, "ds_append" | "ds_consume" | "ds_ordered_count")
    {
        g.read(one(M0));
    }
}

/// Registers of a VOP3P instruction (one half of a scaled MFMA pair).
fn vop3p_regs(g: &mut Regs, p: &Vop3p) {
    let r = p.row;
    let mfma = r.kind == super::vop3p::Kind::Mfma;
    let d = vreg(p.vdst, r.dst, r.dst_agpr || (mfma && p.clamp));
    g.write(d);
    for i in 0..r.srcs.len() {
        g.read(p.source(i));
    }
    let base = r.name;
    if base.starts_with("v_smfmac") || merges_dst(base) {
        g.read(d);
    }
}

/// LLVM's mnemonic without its encoding suffix.
pub(crate) fn base_name(name: &str) -> &str {
    for suf in ["_e32", "_e64", "_sdwa", "_dpp"] {
        if let Some(b) = name.strip_suffix(suf) {
            return b;
        }
    }
    name
}

/// Instructions whose destination is also an input (accumulators).
pub(crate) fn merges_dst(base: &str) -> bool {
    base.starts_with("v_mac_")
        || base.starts_with("v_fmac_")
        || base.starts_with("v_pk_fmac")
        || base.starts_with("v_dot2c_")
        || base.starts_with("v_dot4c_")
        || base.starts_with("v_dot8c_")
}

/// Implicit operands shared by the vector ALU encodings.
fn vector_implicit(g: &mut Regs, base: &str) {
    if base.starts_with("v_cmpx_") {
        g.write(pair(EXEC));
    }
    if base.starts_with("v_movrel") {
        g.read(one(M0));
    }
}

#[cfg(test)]
mod tests {
    use crate::Target;

    fn regs(t: Target, words: &[u32]) -> (String, Vec<String>, Vec<String>) {
        let mut b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        b.extend_from_slice(&[0; 16]);
        let i = crate::decode(t, &b).unwrap();
        let g = i.regs();
        (
            i.to_string(),
            g.reads().map(|r| r.to_string()).collect(),
            g.writes().map(|r| r.to_string()).collect(),
        )
    }

    #[test]
    fn range_names() {
        use super::*;
        assert_eq!(Range::new(VGPR0 + 2, 2).to_string(), "v[2:3]");
        assert_eq!(Range::new(AGPR0 + 7, 1).to_string(), "a7");
        assert_eq!(Range::new(VCC, 2).to_string(), "vcc");
        assert_eq!(Range::new(EXEC + 1, 1).to_string(), "exec_hi");
        assert_eq!(Range::new(M0, 1).to_string(), "m0");
        assert_eq!(Range::new(4, 4).to_string(), "s[4:7]");
        assert!(Range::new(4, 4).overlaps(Range::new(7, 2)));
        assert!(!Range::new(4, 4).overlaps(Range::new(8, 2)));
    }

    /// Hand-checked against the ISA manual's operand descriptions; the
    /// words are LLVM 22's encodings (`llvm-mc-22 -show-encoding`).
    #[test]
    fn roles() {
        use Target::*;
        /// Target, words, registers read, registers written.
        type Case<'a> = (Target, &'a [u32], &'a [&'a str], &'a [&'a str]);
        let cases: &[Case] = &[
            // global_load_dwordx4 v[0:3], v[4:5], off
            (Gfx942, &[0xdc5c8000, 0x007f0004], &["v[4:5]"], &["v[0:3]"]),
            // global_store_dword v[0:1], v2, off
            (Gfx942, &[0xdc708000, 0x007f0200], &["v[0:1]", "v2"], &[]),
            // s_load_dwordx2 s[0:1], s[4:5], 0x0
            (Gfx942, &[0xc0060002, 0x00000000], &["s[4:5]"], &["s[0:1]"]),
            // v_add_co_u32_e32 v0, vcc, v1, v2
            (Gfx942, &[0x32000501], &["v1", "v2"], &["v0", "vcc"]),
            // v_cndmask_b32_e32 v0, v1, v2, vcc
            (Gfx942, &[0x00000501], &["v1", "v2", "vcc"], &["v0"]),
            // ds_read_b32 v1, v0
            (Gfx942, &[0xd86c0000, 0x01000000], &["v0"], &["v1"]),
            // ds_write_b32 v0, v1
            (Gfx942, &[0xd81a0000, 0x00000100], &["v0", "v1"], &[]),
            // v_readlane_b32 s0, v1, s2
            (Gfx942, &[0xd2890000, 0x00000501], &["v1", "s2"], &["s0"]),
            // s_and_saveexec_b64 s[0:1], vcc
            (
                Gfx942,
                &[0xbe80206a],
                &["vcc", "exec"],
                &["s[0:1]", "exec", "scc"],
            ),
            // SCC: set by adds, compares; read by carry-in, selects and
            // branches; left alone by moves and multiplies.
            (Gfx942, &[0x80000201], &["s1", "s2"], &["s0", "scc"]),
            (Gfx942, &[0x82000201], &["s1", "s2", "scc"], &["s0", "scc"]),
            (Gfx942, &[0x85000201], &["s1", "s2", "scc"], &["s0"]),
            (Gfx942, &[0xbe800001], &["s1"], &["s0"]),
            (Gfx942, &[0xbf850002], &["scc"], &[]),
            (Gfx942, &[0x92000201], &["s1", "s2"], &["s0"]),
            (Gfx942, &[0xbf060100], &["s0", "s1"], &["scc"]),
            // v_cndmask_b32_e64 v0, v1, v2, src_scc
            (
                Gfx942,
                &[0xd1000000, 0x03f60501],
                &["v1", "v2", "scc"],
                &["v0"],
            ),
            // v_fmac_f32_e32 v0, v1, v2
            (Gfx942, &[0x76000501], &["v1", "v2", "v0"], &["v0"]),
            // v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]
            (
                Gfx942,
                &[0xd3cc0000, 0x04022510],
                &["v[16:17]", "v[18:19]", "v[0:15]"],
                &["v[0:15]"],
            ),
            // buffer_load_dword v1, v2, s[4:7], s8 offen
            (
                Gfx942,
                &[0xe0501000, 0x08010102],
                &["v2", "s[4:7]", "s8"],
                &["v1"],
            ),
            // buffer_atomic_cmpswap v[2:3], v4, s[8:11], 0 offen sc0
            (
                Gfx942,
                &[0xe1045000, 0x80020204],
                &["v[2:3]", "v4", "s[8:11]"],
                &["v2"],
            ),
            // v_cmpx_eq_u32_e32 vcc, v0, v1
            (Gfx942, &[0x7db40300], &["v0", "v1"], &["vcc", "exec"]),
            // v_div_fmas_f32 v0, v1, v2, v3
            (
                Gfx942,
                &[0xd1e20000, 0x040e0501],
                &["v1", "v2", "v3", "vcc"],
                &["v0"],
            ),
        ];
        for &(t, words, reads, writes) in cases {
            let (text, r, w) = regs(t, words);
            assert_eq!(r, reads, "reads of {text}");
            assert_eq!(w, writes, "writes of {text}");
        }
    }
}
