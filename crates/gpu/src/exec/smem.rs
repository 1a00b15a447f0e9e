//! Scalar memory: `s_load_*`, `s_buffer_load_*`, `s_store_*`, cache
//! control, `s_memtime` / `s_memrealtime`, scalar atomics.
//!
//! Lowered form: `sdst` the first data SGPR, `src[0]` the base register
//! pair (or buffer resource quad), `src[1]` an SGPR offset, `imm` the
//! immediate byte offset.

use super::op::{Ctx, ExecFn, Fault, Op, sdst_of, src_of, unsupported};
use super::wave::{Src, Width};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;
use rocjitsu_isa::gfx9::smem::SmemOffset;
use rocjitsu_isa::gfx9::sop::Field;

/// The semantic function of a scalar memory mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "s_load_dword" => s_load::<1>,
        "s_load_dwordx2" => s_load::<2>,
        "s_load_dwordx4" => s_load::<4>,
        "s_load_dwordx8" => s_load::<8>,
        "s_load_dwordx16" => s_load::<16>,
        _ => return None,
    })
}

/// Lowers an SMEM instruction.
pub fn lower(inst: Inst) -> Op {
    let mut op = Op::new(inst.clone(), lookup(inst.mnemonic()).unwrap_or(unsupported));
    if let Body::Smem(s) = &inst.body
        && let Some(f) = s.fields()
    {
        if let Field::Op(d) = &f.sdata {
            op.sdst = sdst_of(d);
        }
        if let Some(b) = &f.sbase {
            op.src[0] = src_of(b);
        }
        match f.offset {
            SmemOffset::None => {}
            SmemOffset::Imm(i) => op.imm = i64::from(i),
            SmemOffset::Sgpr(o) => op.src[1] = src_of(&o),
            SmemOffset::SgprImm(o, i) => {
                op.src[1] = src_of(&o);
                op.imm = i64::from(i);
            }
        }
    }
    op
}

/// The byte address of a scalar load: base + SGPR offset + immediate.
fn address(c: &Ctx, op: &Op) -> u64 {
    let base = c.wave.read_s64(op.src[0], Width::B64, &c.env.apertures) & 0xffff_ffff_ffff;
    let soff = match op.src[1] {
        Src::None => 0,
        s => u64::from(c.wave.read_s32(s, Width::B32, &c.env.apertures)),
    };
    base.wrapping_add(soff).wrapping_add(op.imm as u64)
}

/// `s_load_dword{,x2,x4,x8,x16}`: N dwords into `sdst..`. The address is
/// dword-aligned by the hardware (the low two bits are ignored).
fn s_load<const N: usize>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let addr = address(c, op) & !3;
    let mut buf = [0u8; 64];
    let bytes = &mut buf[..N * 4];
    c.vm.read(c.tlb, addr, bytes)?;
    for i in 0..N {
        let w = u32::from_le_bytes([
            bytes[i * 4],
            bytes[i * 4 + 1],
            bytes[i * 4 + 2],
            bytes[i * 4 + 3],
        ]);
        c.wave.set_s32(op.sdst.wrapping_add(i as u8), w);
    }
    Ok(())
}
