//! Vector memory: FLAT, GLOBAL and SCRATCH instructions, MUBUF and MTBUF
//! (loads, stores, atomics), through the GPU VM (global), the workgroup's
//! LDS (flat addresses in the LDS aperture) and the wave's private memory
//! (scratch).
//!
//! Lowered form: `vdst` the data destination register (VGPR or AGPR),
//! `src[0]` the address (VGPR or VGPR pair), `src[1]` the data register,
//! `src[2]` the scalar base (`saddr`, or the buffer resource), `imm` the
//! instruction offset.

use super::op::{Ctx, ExecFn, Fault, Op, unsupported};
use super::valu::lanes;
use super::wave::{AGPR0, Src};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;

/// The semantic function of a vector memory mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "global_load_dword" => global_load::<1>,
        "global_store_dword" => global_store::<1>,
        _ => return None,
    })
}

/// Lowers a FLAT/GLOBAL/SCRATCH, MUBUF or MTBUF instruction.
pub fn lower(inst: Inst) -> Op {
    let mut op = Op::new(inst.clone(), lookup(inst.mnemonic()).unwrap_or(unsupported));
    if let Body::Flat(f) = &inst.body {
        let acc = if f.acc { AGPR0 } else { 0 };
        op.vdst = acc + u16::from(f.vdst);
        op.src[0] = Src::V(u16::from(f.addr));
        op.src[1] = Src::V(acc + u16::from(f.data));
        // saddr 0x7f ("off") means a 64-bit VGPR address.
        op.src[2] = if f.saddr == 0x7f {
            Src::None
        } else {
            Src::S(f.saddr)
        };
        op.imm = i64::from(sext13(f.offset));
    }
    op
}

/// The 13-bit signed offset of GLOBAL/SCRATCH instructions.
fn sext13(v: u16) -> i16 {
    ((v << 3) as i16) >> 3
}

/// Per-lane addresses of a GLOBAL instruction: `saddr` + 32-bit VGPR offset,
/// or a 64-bit VGPR address, plus the offset.
fn global_addrs(c: &Ctx, op: &Op) -> [u64; 64] {
    let Src::V(a) = op.src[0] else { return [0; 64] };
    match op.src[2] {
        Src::S(s) => {
            let base = c.wave.s64(s);
            let off = c.wave.vreg(a);
            std::array::from_fn(|l| {
                base.wrapping_add(u64::from(off[l]))
                    .wrapping_add(op.imm as u64)
            })
        }
        _ => {
            let (lo, hi) = (c.wave.vreg(a), c.wave.vreg(a + 1));
            std::array::from_fn(|l| {
                (u64::from(lo[l]) | (u64::from(hi[l]) << 32)).wrapping_add(op.imm as u64)
            })
        }
    }
}

fn global_load<const N: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let mask = lanes(c, op);
    let addrs = global_addrs(c, op);
    let mut out = [[0u32; 64]; N];
    for l in 0..64 {
        if mask >> l & 1 != 0 {
            for (k, o) in out.iter_mut().enumerate() {
                o[l] = c.vm.read_u32(c.tlb, addrs[l].wrapping_add(4 * k as u64))?;
            }
        }
    }
    for (k, o) in out.iter().enumerate() {
        c.wave.write_v(op.vdst + k as u16, o, mask);
    }
    Ok(())
}

fn global_store<const N: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let mask = lanes(c, op);
    let addrs = global_addrs(c, op);
    let Src::V(d) = op.src[1] else { return Ok(()) };
    for l in 0..64 {
        if mask >> l & 1 != 0 {
            for k in 0..N {
                let v = c.wave.vreg(d + k as u16)[l];
                c.vm.write_u32(c.tlb, addrs[l].wrapping_add(4 * k as u64), v)?;
            }
        }
    }
    Ok(())
}
