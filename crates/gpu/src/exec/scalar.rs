//! Scalar ALU and program control: SOP1, SOP2, SOPC, SOPK and SOPP.
//!
//! Lowered form: `sdst` the scalar destination (file index), `src[0]`,
//! `src[1]` the scalar sources, `imm` the SOPK/SOPP 16-bit immediate
//! (sign-extended) and, for branches, the target address in `imm`.

use super::op::{Ctx, ExecFn, Fault, Op, base_name, sdst_of, src_of, unsupported};
use super::wave::{Src, WaveState, Width};
use rocjitsu_isa::Inst;
use rocjitsu_isa::gfx9::Body;
use rocjitsu_isa::gfx9::sop::Field;

/// The semantic function of a scalar mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "s_endpgm" => s_endpgm,
        "s_nop" | "s_waitcnt" => s_nop,
        "s_mov_b32" => s_mov_b32,
        "s_mov_b64" => s_mov_b64,
        "s_barrier" => s_barrier,
        "s_branch" => s_branch,
        _ => return None,
    })
}

/// Lowers a SOP1/SOP2/SOPC/SOPK/SOPP instruction.
pub fn lower(inst: Inst) -> Op {
    let name = base_name(inst.mnemonic());
    let mut op = Op::new(inst.clone(), lookup(name).unwrap_or(unsupported));
    match &inst.body {
        Body::Salu(s) => {
            if let Some(f) = s.fields() {
                if let Field::Op(d) = &f.sdst {
                    op.sdst = sdst_of(d);
                }
                if let Field::Op(o) = &f.src0 {
                    op.src[0] = src_of(o);
                }
                if let Field::Op(o) = &f.src1 {
                    op.src[1] = src_of(o);
                }
            }
        }
        Body::Sopk(k) => {
            if let Field::Op(d) = k.sdst() {
                op.sdst = sdst_of(&d);
            }
            op.imm = i64::from(k.simm16 as i16);
            if let Some(x) = k.imm32 {
                op.src[0] = Src::Lit(x);
            }
            if let Some(t) = k.branch_target(0) {
                op.imm = t as i64;
            }
        }
        Body::Sopp(p) => {
            op.imm = i64::from(p.simm16 as i16);
        }
        _ => {}
    }
    op
}

/// The branch destination of a SOPP/SOPK branch whose next instruction is
/// at `next_pc`: `simm16` counts dwords from it.
#[inline]
pub fn branch_dest(next_pc: u64, simm16: i64) -> u64 {
    next_pc.wrapping_add((simm16 * 4) as u64)
}

fn s_endpgm(c: &mut Ctx, _: &Op) -> Result<(), Fault> {
    c.wave.state = WaveState::Ended;
    Ok(())
}

fn s_nop(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Ok(())
}

fn s_barrier(c: &mut Ctx, _: &Op) -> Result<(), Fault> {
    c.wave.state = WaveState::Barrier;
    Ok(())
}

fn s_branch(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    c.wave.pc = branch_dest(c.wave.pc, op.imm);
    Ok(())
}

fn s_mov_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = c.wave.read_s32(op.src[0], Width::B32, &c.env.apertures);
    c.wave.set_s32(op.sdst, v);
    Ok(())
}

fn s_mov_b64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let v = c.wave.read_s64(op.src[0], Width::B64, &c.env.apertures);
    c.wave.set_s64(op.sdst, v);
    Ok(())
}
