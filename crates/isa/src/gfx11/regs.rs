//! The registers a GFX11 or GFX12 instruction reads and writes, in the
//! numbering of [`crate::gfx9::regs`] (`m0` is unit 124 whatever its field
//! value; `s102`..`s105` are SGPRs there, as they are on these targets).
//!
//! Explicit operands come from the fields the printers use, so a
//! register's file, index and width are those LLVM prints (a 16-bit VGPR
//! half `v5.h` is the unit of `v5`). Implicit operands, from the RDNA3 and
//! RDNA4 ISA manuals' instruction descriptions: VCC (`vcc_lo` in wave32)
//! for `s_cbranch_vcc*`, `v_div_fmas` and VOPD's `v_dual_cndmask_b32`;
//! EXEC for `*_saveexec`, `*_wrexec`, `v_cmpx*` and `s_cbranch_exec*`; M0
//! for `s_movrel*`, `v_movrel*`, `s_sendmsg`, GDS/GWS/`ds_append`/
//! `ds_consume`, LDS parameter and direct loads, buffer and global loads
//! to LDS and exports with `row_en`; SCC as [`scc_use`] says. Merged
//! destinations are also read: accumulators (`v_fmac`, `s_fmac`,
//! `v_dual_fmac`, `v_dual_dot2acc`, SWMMAC), `v_writelane`, and the 16-bit
//! scalar float results (the upper half is kept).
//!
//! Not tracked, as on GFX9: the EXEC mask every vector instruction reads,
//! and the registers `s_movrel*`/`v_movrel*` reach through M0.

use super::operand::{Operand, decode_src, decode_sreg, decode_stuple};
use crate::gfx9::regs::{
    EXEC, M0, Range, Regs, Unit, VCC, VGPR0, base_name, ds_regs, merges_dst, one, range_of,
};
use crate::gfx9::sop::Field;

fn op(o: Option<Operand>) -> Option<Range> {
    o.as_ref().and_then(range_of)
}

fn field(f: &Field) -> Option<Range> {
    match f {
        Field::Op(o) => range_of(o),
        Field::Unused(_) => None,
    }
}

/// `n` VGPRs from `v[idx]`.
fn vgprs(idx: u16, n: u8) -> Option<Range> {
    (n > 0 && n != u8::MAX).then(|| Range::new(VGPR0 + idx, n))
}

/// A lane mask of the wave size: `vcc_lo`/`exec_lo` or the pair.
fn mask(base: Unit, wave64: bool) -> Option<Range> {
    Some(Range::new(base, 1 + u8::from(wave64)))
}

/// EXEC as a `_b32` or `_b64` scalar instruction names it.
fn exec_of(name: &str) -> Option<Range> {
    Some(Range::new(EXEC, if name.ends_with("_b32") { 1 } else { 2 }))
}

/// Whether a scalar float instruction's result is 16 bits.
fn salu_f16_result(name: &str) -> bool {
    name.starts_with("s_cvt_f16")
        || name.ends_with("_f16") && !name.starts_with("s_cvt_") && !name.starts_with("s_cmp_")
}

pub(crate) fn salu(g: &mut Regs, s: &super::sop::Salu) {
    let name = s.row.name;
    let d = field(&s.sdst);
    g.write(d);
    g.read(field(&s.src0));
    g.read(field(&s.src1));
    if name.starts_with("s_bitset")
        || name.starts_with("s_cmov")
        || name.starts_with("s_fmac")
        || salu_f16_result(name)
    {
        g.read(d);
    }
    if name.contains("saveexec") || name.contains("wrexec") {
        g.read(exec_of(name));
        g.write(exec_of(name));
    }
    if name.starts_with("s_movrel") {
        g.read(one(M0));
    }
    g.scc(name);
}

pub(crate) fn sopk(g: &mut Regs, k: &super::sop::Sopk) {
    use super::sop::SopkKind;
    let name = k.row.name;
    let d = op(k.sdst());
    match k.row.kind {
        SopkKind::Imm if name.starts_with("s_cmpk") || name.starts_with("s_waitcnt") => g.read(d),
        SopkKind::Imm if name == "s_movk_i32" => g.write(d),
        SopkKind::Imm | SopkKind::Dec => {
            // s_addk, s_mulk, s_cmovk: read-modify-write.
            g.read(d);
            g.write(d);
        }
        SopkKind::Branch64 | SopkKind::GetReg => g.write(d),
        SopkKind::SetReg => g.read(d),
        SopkKind::SetRegImm32 | SopkKind::Version => {}
    }
    g.scc(name);
}

pub(crate) fn sopp(g: &mut Regs, p: &super::sop::Sopp, wave64: bool) {
    let name = p.row.name;
    match name {
        "s_cbranch_vccz" | "s_cbranch_vccnz" => g.read(mask(VCC, wave64)),
        "s_cbranch_execz" | "s_cbranch_execnz" => g.read(mask(EXEC, wave64)),
        "s_sendmsg" | "s_sendmsghalt" | "s_ttracedata" => g.read(one(M0)),
        _ => {}
    }
    g.scc(name);
}

/// Implicit operands of the vector ALU encodings (by the mnemonic without
/// its encoding suffix).
fn vector_implicit(g: &mut Regs, base: &str, wave64: bool, dst: Option<Range>) {
    if base.starts_with("v_cmpx_") {
        g.write(mask(EXEC, wave64));
    }
    if base.starts_with("v_movrel") {
        g.read(one(M0));
    }
    if base.starts_with("v_div_fmas") {
        g.read(mask(VCC, wave64));
    }
    if merges_dst(base) || base == "v_writelane_b32" {
        g.read(dst);
    }
}

pub(crate) fn vop(g: &mut Regs, v: &super::vop::Vop) {
    use super::vop::{Form, Role, VDst};
    let row = v.row;
    let form = v.form();
    let vdst = ((v.w0 >> 17) & 0xff) as u16;
    let mask_w = 1 + u8::from(v.wave64);
    let mut dst = None;
    let mut after_src = false;
    for role in row.roles {
        match role {
            Role::Dst => {
                dst = match row.dst {
                    VDst::V(n) => vgprs(vdst, n),
                    VDst::V16 => vgprs(vdst & 0x7f, 1),
                    VDst::S(n) => op(decode_src(vdst, n, v.literal())),
                    VDst::None => None,
                };
                g.write(dst);
            }
            Role::Vcc if after_src => g.read(mask(VCC, v.wave64)),
            Role::Vcc => g.write(mask(VCC, v.wave64)),
            Role::K => {}
            Role::Src0 => {
                after_src = true;
                let Some(s) = &row.src0 else { continue };
                let n = if s.w == 0 { mask_w } else { s.w };
                let f = match form {
                    Form::E32 => (v.w0 & 0x1ff) as u16,
                    _ => 256 | (v.w1 & 0xff) as u16,
                };
                let r = match decode_src(f, n, v.literal()) {
                    Some(Operand::Reg(r))
                        if s.t16 && r.file == crate::gfx9::operand::RegFile::Vgpr =>
                    {
                        vgprs(r.index & 0x7f, 1)
                    }
                    o => op(o),
                };
                g.read(r);
            }
            Role::Src1 => {
                after_src = true;
                let Some((n, t16)) = row.src1 else { continue };
                let f = ((v.w0 >> 9) & 0xff) as u16;
                g.read(if t16 { vgprs(f & 0x7f, 1) } else { vgprs(f, n) });
            }
        }
    }
    vector_implicit(g, base_name(v.mnemonic()), v.wave64, dst);
}

pub(crate) fn vop3(g: &mut Regs, v: &super::vop3::Vop3) {
    use super::vop3::Dst;
    let row = v.row;
    let vdst = u16::from(v.vdst());
    let mask_w = 1 + u8::from(v.wave64);
    let dst = match row.dst {
        Dst::No(_) => None,
        Dst::V(n) => vgprs(vdst, n),
        Dst::V16 => vgprs(vdst, 1),
        Dst::S(n) | Dst::SXexec(n) => op(decode_src(vdst, n, v.literal)),
        Dst::Mask => op(decode_src(vdst, mask_w, v.literal)),
    };
    g.write(dst);
    if row.sdst {
        g.write(op(decode_sreg(((v.w0 >> 8) & 0x7f) as u16, mask_w)));
    }
    for k in 0..row.srcs.len() {
        g.read(op(v.src(k)));
    }
    vector_implicit(g, base_name(row.name), v.wave64, dst);
}

pub(crate) fn vop3p(g: &mut Regs, p: &super::vop3p::Vop3p) {
    let row = p.row;
    let dst = vgprs((p.w0 & 0xff) as u16, row.dst[usize::from(p.wave64)]);
    g.write(dst);
    for k in 0..row.srcs.len() {
        g.read(op(p.src(k)));
    }
    if row.name.starts_with("v_swmmac") || merges_dst(row.name) {
        g.read(dst);
    }
}

pub(crate) fn vopd(g: &mut Regs, d: &super::vopd::Vopd) {
    use super::vopd::Role;
    let (dx, dy) = d.vdst();
    let (w0, w1) = (d.w0, d.w1);
    for (r, dst, src0, vsrc1) in [
        (d.x, dx, (w0 & 0x1ff) as u16, ((w0 >> 9) & 0xff) as u16),
        (d.y, dy, (w1 & 0x1ff) as u16, ((w1 >> 9) & 0xff) as u16),
    ] {
        let dst = vgprs(dst, 1);
        for role in r.roles {
            match role {
                Role::Dst => g.write(dst),
                Role::Src0 => g.read(op(decode_src(src0, 1, d.literal))),
                Role::Src1 => g.read(vgprs(vsrc1, 1)),
                Role::K => {}
            }
        }
        let base = r.name.replace("v_dual_", "v_");
        if merges_dst(&base) || base.starts_with("v_dot2acc") {
            g.read(dst);
        }
        if base == "v_cndmask_b32" {
            // VOPD runs in wave32 only.
            g.read(mask(VCC, false));
        }
    }
}

pub(crate) fn vinterp(g: &mut Regs, v: &super::interp::Vinterp) {
    g.write(vgprs((v.w0 & 0xff) as u16, 1));
    for k in 0..3 {
        let f = ((v.w1 >> (9 * k)) & 0x1ff) as u16;
        if v.row.t16 & (1 << k) != 0 {
            g.read(vgprs(f & 0xff, 1));
        } else {
            g.read(op(decode_src(f, 1, v.literal)));
        }
    }
}

/// LDS parameter and direct loads (GFX11 LDSDIR, GFX12 VDSDIR).
pub(crate) fn lds_dir(g: &mut Regs, w0: u32) {
    g.write(vgprs((w0 & 0xff) as u16, 1));
    g.read(one(M0));
}

pub(crate) fn exp(g: &mut Regs, e: &super::exp::Exp) {
    for k in 0..4 {
        if e.w0 >> k & 1 != 0 {
            g.read(vgprs(((e.w1 >> (8 * k)) & 0xff) as u16, 1));
        }
    }
    if e.w0 & 1 << 13 != 0 {
        g.read(one(M0));
    }
}

/// A vector memory instruction's data: read by stores, read and (when
/// returning) written by atomics (`cmpswap` returns half), written by
/// loads.
fn vmem_data(g: &mut Regs, name: &str, data: Option<Range>, returns: bool) {
    if name.contains("_store") {
        g.read(data);
    } else if name.contains("_atomic") {
        g.read(data);
        if returns {
            let half = name.contains("cmpswap");
            g.write(data.map(|r| Range::new(r.first, if half { r.count / 2 } else { r.count })));
        }
    } else {
        g.write(data);
    }
}

/// A FLAT/GLOBAL/SCRATCH address: the VGPR operand and the saddr SGPRs.
fn flat_addr(g: &mut Regs, seg: u32, addr: u16, vaddr_scratch: bool, saddr: u16, printed: bool) {
    const OFF: u16 = 0x7c;
    if printed {
        g.read(match seg {
            0 => vgprs(addr, 2),
            1 if vaddr_scratch => vgprs(addr, 1),
            1 => None,
            _ if saddr == OFF => vgprs(addr, 2),
            _ => vgprs(addr, 1),
        });
    }
    if seg != 0 && saddr != OFF {
        g.read(op(decode_sreg(saddr, if seg == 1 { 1 } else { 2 })));
    }
}

pub(crate) fn flat11(g: &mut Regs, f: &super::flat::Flat) {
    let w1 = f.w1;
    let form = f.form();
    let seg = f.seg();
    if form.vdst > 0 {
        g.write(vgprs((w1 >> 24) as u16, form.vdst));
    }
    flat_addr(
        g,
        seg,
        (w1 & 0xff) as u16,
        w1 & 1 << 23 != 0,
        ((w1 >> 16) & 0x7f) as u16,
        form.addr,
    );
    g.read(vgprs(((w1 >> 8) & 0xff) as u16, form.data));
    if f.op.name.contains("_lds_") {
        g.read(one(M0));
    }
}

pub(crate) fn buf11(g: &mut Regs, b: &super::mubuf::Buf) {
    let (w0, w1) = (b.w0, b.w1);
    let glc = (w0 >> 14) & 1 != 0;
    let data = b.op.forms[usize::from(glc)].map_or(0, |x| x.data);
    if data == super::mubuf::BARE {
        return;
    }
    let name = b.op.name;
    let tfe = w1 >> 21 & 1 != 0;
    let (offen, idxen) = (w1 >> 22 & 1 != 0, w1 >> 23 & 1 != 0);
    let vdata = ((w1 >> 8) & 0xff) as u16;
    vmem_data(
        g,
        name,
        vgprs(vdata, data + u8::from(tfe && !name.contains("_store"))),
        glc,
    );
    let vaddr = (w1 & 0xff) as u16;
    g.read(vgprs(vaddr, u8::from(offen) + u8::from(idxen)));
    g.read(op(decode_stuple(((w1 >> 16) & 0x1f) as u16 * 4, 4)));
    if b.literal.is_none() {
        g.read(op(decode_src((w1 >> 24) as u16, 1, None)));
    }
    if name.contains("_lds_") {
        g.read(one(M0));
    }
}

/// An image instruction's data, addresses, resource and sampler.
fn image(
    g: &mut Regs,
    name: &str,
    data: Option<Range>,
    addrs: &[(u16, u8)],
    rsrc: Option<Range>,
    ssamp: Option<Range>,
    glc: bool,
) {
    if name.starts_with("image_store") {
        g.read(data);
    } else if name.starts_with("image_atomic") {
        g.read(data);
        if glc {
            g.write(data);
        }
    } else {
        g.write(data);
    }
    for &(r, w) in addrs {
        g.read(vgprs(r, w));
    }
    g.read(rsrc);
    g.read(ssamp);
}

pub(crate) fn mimg11(g: &mut Regs, m: &super::mimg::Mimg) {
    let (w0, w1) = (m.w0, m.w1);
    let l = m.layout();
    let addrs: Vec<(u16, u8)> = if m.nsa.is_some() {
        l.addrs
            .iter()
            .enumerate()
            .map(|(k, &w)| (m.addr_reg(k), w))
            .collect()
    } else {
        vec![(m.addr_reg(0), l.addrs.first().copied().unwrap_or(0))]
    };
    let rsrc = op(decode_stuple(((w1 >> 16) & 0x1f) as u16 * 4, m.op.rsrc));
    let ssamp =
        m.op.ssamp
            .then(|| op(decode_stuple(((w1 >> 26) & 0x1f) as u16 * 4, 4)))
            .flatten();
    let data = vgprs(((w1 >> 8) & 0xff) as u16, l.data);
    image(g, m.op.name, data, &addrs, rsrc, ssamp, w0 & 1 << 14 != 0);
}

/// An SMEM instruction: base and offset are read (when the opcode has
/// operands), loads write their data.
fn smem(
    g: &mut Regs,
    name: &str,
    base_width: u8,
    base: Option<Operand>,
    soffset: Operand,
    data: Option<Operand>,
) {
    if base_width != 0 {
        g.read(op(base));
        g.read(op(Some(soffset)));
    }
    if name.starts_with("s_load") || name.starts_with("s_buffer_load") {
        g.write(op(data));
    }
}

impl super::Inst {
    /// The registers the instruction reads and writes (see the module
    /// documentation).
    pub fn regs(&self) -> Regs {
        use super::Body;
        let mut g = Regs::default();
        let wave64 = self.wave64();
        match self.body() {
            Body::Salu(s) => salu(&mut g, &s),
            Body::Sopk(k) => sopk(&mut g, &k),
            Body::Sopp(p) => sopp(&mut g, &p, wave64),
            Body::Smem(s) => smem(
                &mut g,
                s.row.name,
                s.row.base,
                s.base(),
                s.soffset(),
                s.data(),
            ),
            Body::Vop3(v) => vop3(&mut g, &v),
            Body::Vop(v) => vop(&mut g, &v),
            Body::Vop3p(p) => vop3p(&mut g, &p),
            Body::Vopd(d) => vopd(&mut g, &d),
            Body::Vinterp(v) => vinterp(&mut g, &v),
            Body::Ldsdir(l) => lds_dir(&mut g, l.w0),
            Body::Ds(d) => ds_regs(&mut g, &d.fields),
            Body::Flat(f) => flat11(&mut g, &f),
            Body::Buf(b) => buf11(&mut g, &b),
            Body::Exp(e) => exp(&mut g, &e),
            Body::Mimg(m) => mimg11(&mut g, &m),
        }
        g
    }
}

impl crate::gfx12::Inst {
    /// The registers the instruction reads and writes (see
    /// [`crate::gfx11::regs`]).
    pub fn regs(&self) -> Regs {
        use crate::gfx12::Body;
        let mut g = Regs::default();
        let wave64 = self.wave64();
        match self.body() {
            Body::Salu(s) => salu(&mut g, &s),
            Body::Sopk(k) => sopk(&mut g, &k),
            Body::Sopp(p) => sopp(&mut g, &p, wave64),
            Body::Smem(s) => smem(
                &mut g,
                s.row.name,
                s.row.base,
                s.base(),
                s.soffset(),
                s.data(),
            ),
            Body::Vop(v) => vop(&mut g, &v),
            Body::Vop3(v) => vop3(&mut g, &v),
            Body::Vop3p(p) => vop3p(&mut g, &p),
            Body::Vopd(d) => vopd(&mut g, &d),
            Body::Ds(d) => ds_regs(&mut g, &d.fields),
            Body::Vinterp(v) => vinterp(&mut g, &v),
            Body::Vdsdir(d) => lds_dir(&mut g, d.w0),
            Body::Exp(e) => exp(&mut g, &e),
            Body::Flat(f) => {
                let Some(form) = crate::gfx12::vflat::form_of(f.op, f.w1) else {
                    return g;
                };
                let (w0, w1, w2) = (f.w0, f.w1, f.w2);
                g.write(vgprs((w1 & 0xff) as u16, form.vdst[usize::from(f.wave64)]));
                flat_addr(
                    &mut g,
                    f.seg(),
                    (w2 & 0xff) as u16,
                    w1 & 1 << 17 != 0,
                    (w0 & 0x7f) as u16,
                    form.addr,
                );
                g.read(vgprs(((w1 >> 23) & 0xff) as u16, form.data));
                if f.op.name.contains("_lds_") {
                    g.read(one(M0));
                }
            }
            Body::Buf(b) => {
                let Some(form) = crate::gfx12::vbuffer::form_of(b.op, b.w1) else {
                    return g;
                };
                if form.data == crate::gfx12::vbuffer::BARE {
                    return g;
                }
                let (w0, w1, w2) = (b.w0, b.w1, b.w2);
                let name = b.op.name;
                let tfe = w0 >> 22 & 1 != 0;
                let (offen, idxen) = (w1 >> 30 & 1 != 0, w1 >> 31 != 0);
                let returns = (w1 >> 20) & 1 != 0;
                let width = form.data + u8::from(tfe && !name.contains("_store"));
                vmem_data(&mut g, name, vgprs((w1 & 0xff) as u16, width), returns);
                g.read(vgprs((w2 & 0xff) as u16, u8::from(offen) + u8::from(idxen)));
                g.read(op(decode_stuple(((w1 >> 9) & 0x7f) as u16, 4)));
                g.read(op(decode_sreg((w0 & 0x7f) as u16, 1)));
                if name.contains("_lds_") {
                    g.read(one(M0));
                }
            }
            Body::Image(m) => {
                let (w1, w2) = (m.w1, m.w2);
                let l = m.layout();
                let addrs: Vec<(u16, u8)> = l
                    .addrs
                    .iter()
                    .enumerate()
                    .map(|(k, &w)| (((w2 >> (8 * k)) & 0xff) as u16, w))
                    .collect();
                let rsrc = op(decode_src(((w1 >> 9) & 0x1ff) as u16, 8, m.literal));
                let ssamp =
                    m.op.ssamp
                        .then(|| op(decode_src((w1 >> 23) as u16, 4, m.literal)))
                        .flatten();
                let data = vgprs((w1 & 0xff) as u16, l.data);
                let returns = (w1 >> 20) & 1 != 0;
                image(&mut g, m.op.name, data, &addrs, rsrc, ssamp, returns);
            }
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use crate::{Target, WaveSize};

    fn regs(t: Target, bytes: &[u8]) -> (String, Vec<String>, Vec<String>) {
        let mut b = bytes.to_vec();
        b.extend_from_slice(&[0; 16]);
        let i = crate::decode_in(t, WaveSize::Wave32, &b).unwrap();
        let g = i.regs().unwrap();
        (
            i.to_string(),
            g.reads().map(|r| r.to_string()).collect(),
            g.writes().map(|r| r.to_string()).collect(),
        )
    }

    /// Hand-checked against the RDNA3/RDNA4 ISA manuals' operand
    /// descriptions (wave32: the lane masks are `vcc_lo` and `exec_lo`);
    /// the bytes are LLVM 22's encodings (`llvm-mc-22 -show-encoding`).
    #[test]
    fn implicit_roles() {
        /// Bytes, registers read, registers written, on both families.
        type Case<'a> = (&'a [u8], &'a [&'a str], &'a [&'a str]);
        let both: &[Case] = &[
            (&[0x00, 0x03, 0x94, 0x7c], &["v0", "v1"], &["vcc_lo"]),
            (
                &[0x01, 0x05, 0x00, 0x40],
                &["v1", "v2", "vcc_lo"],
                &["v0", "vcc_lo"],
            ),
            (&[0x01, 0x05, 0x00, 0x02], &["v1", "v2", "vcc_lo"], &["v0"]),
            (
                &[0x6a, 0x20, 0x80, 0xbe],
                &["vcc_lo", "exec_lo"],
                &["s0", "exec_lo", "scc"],
            ),
            (&[0x00, 0x03, 0x94, 0x7d], &["v0", "v1"], &["exec_lo"]),
            (
                &[0x01, 0x05, 0x50, 0xca, 0x04, 0x01, 0x02, 0x00],
                &["v1", "v2", "vcc_lo", "v4"],
                &["v0", "v3"],
            ),
            (&[0x02, 0x00, 0xa3, 0xbf], &["vcc_lo"], &[]),
            (&[0x01, 0x05, 0x00, 0x56], &["v1", "v2", "v0"], &["v0"]),
        ];
        for t in [Target::Gfx1100, Target::Gfx1151, Target::Gfx1201] {
            for &(bytes, reads, writes) in both {
                let (text, r, w) = regs(t, bytes);
                assert_eq!(r, reads, "{t}: reads of {text}");
                assert_eq!(w, writes, "{t}: writes of {text}");
            }
        }
        let own: &[(Target, Case)] = &[
            (
                Target::Gfx1100,
                (
                    &[0x00, 0x00, 0x52, 0xdc, 0x02, 0x00, 0x04, 0x01],
                    &["v2", "s[4:5]"],
                    &["v1"],
                ),
            ),
            (
                Target::Gfx1201,
                (
                    &[
                        0x04, 0x00, 0x05, 0xee, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
                    ],
                    &["v2", "s[4:5]"],
                    &["v1"],
                ),
            ),
            (
                Target::Gfx1100,
                (
                    &[0x01, 0x00, 0x04, 0xf4, 0x00, 0x00, 0x00, 0xf8],
                    &["s[2:3]"],
                    &["s[0:1]"],
                ),
            ),
            (
                Target::Gfx1201,
                (
                    &[0x01, 0x20, 0x00, 0xf4, 0x00, 0x00, 0x00, 0xf8],
                    &["s[2:3]"],
                    &["s[0:1]"],
                ),
            ),
            (
                Target::Gfx1100,
                (
                    &[0x00, 0x00, 0x50, 0xe0, 0x02, 0x01, 0x41, 0x08],
                    &["v2", "s[4:7]", "s8"],
                    &["v1"],
                ),
            ),
            (
                Target::Gfx1201,
                (
                    &[
                        0x08, 0x00, 0x05, 0xc4, 0x01, 0x08, 0x80, 0x40, 0x02, 0x00, 0x00, 0x00,
                    ],
                    &["v2", "s[4:7]", "s8"],
                    &["v1"],
                ),
            ),
            // s_add_f16 writes the low half: the high half is kept.
            (
                Target::Gfx1201,
                (&[0x01, 0x02, 0x80, 0xa4], &["s1", "s2", "s0"], &["s0"]),
            ),
        ];
        for &(t, (bytes, reads, writes)) in own {
            let (text, r, w) = regs(t, bytes);
            assert_eq!(r, reads, "{t}: reads of {text}");
            assert_eq!(w, writes, "{t}: writes of {text}");
        }
    }
}
