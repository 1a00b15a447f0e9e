//! Semantics of GFX11 operations GFX9 does not have or defines otherwise
//! (RDNA3 ISA manual, instruction descriptions): wave32 EXEC updates, the
//! returning messages, MODE-setting SOPP instructions, the cross-lane
//! permutes of RDNA, 16-bit bitwise operations and moves, and VOPD.

use super::super::op::{Ctx, ExecFn, Fault, Op};
use super::super::valu::{b16, b32, f16s, mask_src, write_b16};
use super::super::wave::{Src, Width};

/// The semantic function of a GFX11 mnemonic (without encoding suffix)
/// that has its own semantics here.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        // Scheduling hints, clauses, dependency counters, prefetch, and
        // messages without a functional effect (MSG_DEALLOC_VGPRS before
        // s_endpgm, ...).
        "s_delay_alu"
        | "s_clause"
        | "s_waitcnt_depctr"
        | "s_waitcnt_vscnt"
        | "s_waitcnt_vmcnt"
        | "s_waitcnt_expcnt"
        | "s_waitcnt_lgkmcnt"
        | "s_set_inst_prefetch_distance"
        | "s_code_end"
        | "s_wait_idle"
        | "s_dcache_inv"
        | "s_gl1_inv"
        | "s_icache_inv"
        | "buffer_gl0_inv"
        | "buffer_gl1_inv" => nop,
        "s_round_mode" => s_round_mode,
        "s_denorm_mode" => s_denorm_mode,
        "s_sendmsg_rtn_b32" => sendmsg_rtn::<false>,
        "s_sendmsg_rtn_b64" => sendmsg_rtn::<true>,
        "s_and_saveexec_b32" => saveexec32::<AND, false>,
        "s_or_saveexec_b32" => saveexec32::<OR, false>,
        "s_xor_saveexec_b32" => saveexec32::<XOR, false>,
        "s_and_not1_saveexec_b32" => saveexec32::<AND_NOT1, false>,
        "s_or_not1_saveexec_b32" => saveexec32::<OR_NOT1, false>,
        "s_and_not0_saveexec_b32" => saveexec32::<AND_NOT0, false>,
        "s_or_not0_saveexec_b32" => saveexec32::<OR_NOT0, false>,
        "s_nand_saveexec_b32" => saveexec32::<NAND, false>,
        "s_nor_saveexec_b32" => saveexec32::<NOR, false>,
        "s_xnor_saveexec_b32" => saveexec32::<XNOR, false>,
        "s_and_not0_wrexec_b32" => saveexec32::<AND_NOT0, true>,
        "s_and_not1_wrexec_b32" => saveexec32::<AND_NOT1, true>,
        "v_permlane16_b32" => permlane16::<false>,
        "v_permlanex16_b32" => permlane16::<true>,
        "v_permlane64_b32" => permlane64,
        "v_and_b16" => bitop16::<AND>,
        "v_or_b16" => bitop16::<OR>,
        "v_xor_b16" => bitop16::<XOR>,
        "v_not_b16" => not16,
        "v_mov_b16" => mov16,
        "v_cndmask_b16" => cndmask16,
        _ => return super::ops::lookup(name),
    })
}

fn nop(_: &mut Ctx, _: &Op) -> Result<(), Fault> {
    Ok(())
}

/// `s_round_mode`: MODE.FP_ROUND (bits 3:0) = SIMM16[3:0].
fn s_round_mode(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    c.wave.mode = (c.wave.mode & !0xf) | (op.imm as u32 & 0xf);
    Ok(())
}

/// `s_denorm_mode`: MODE.FP_DENORM (bits 7:4) = SIMM16[3:0].
fn s_denorm_mode(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    c.wave.mode = (c.wave.mode & !0xf0) | ((op.imm as u32 & 0xf) << 4);
    Ok(())
}

/// `MSG_RTN_GET_REALTIME`.
const MSG_RTN_GET_REALTIME: u32 = 131;

/// `s_sendmsg_rtn_b32/b64`: the message's answer to the destination. The
/// real-time counter (100 MHz, as `s_memrealtime`) is modelled; the other
/// messages (doorbell, DDID, TMA/TBA addresses) answer 0.
fn sendmsg_rtn<const WIDE: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let msg = c.wave.read_s32(op.src[0], Width::B32, &c.env.apertures) & 0xff;
    let v = if msg == MSG_RTN_GET_REALTIME {
        c.env.epoch.elapsed().as_nanos() as u64 / 10
    } else {
        0
    };
    if WIDE {
        c.wave.set_s64(op.sdst, v);
    } else {
        c.wave.set_s32(op.sdst, v as u32);
    }
    Ok(())
}

const AND: u8 = 0;
const OR: u8 = 1;
const XOR: u8 = 2;
const AND_NOT1: u8 = 3;
const OR_NOT1: u8 = 4;
const AND_NOT0: u8 = 5;
const OR_NOT0: u8 = 6;
const NAND: u8 = 7;
const NOR: u8 = 8;
const XNOR: u8 = 9;

#[inline(always)]
fn exec_op<const K: u8>(s: u32, e: u32) -> u32 {
    match K {
        AND => s & e,
        OR => s | e,
        XOR => s ^ e,
        AND_NOT1 => s & !e,
        OR_NOT1 => s | !e,
        AND_NOT0 => !s & e,
        OR_NOT0 => !s | e,
        NAND => !(s & e),
        NOR => !(s | e),
        _ => !(s ^ e),
    }
}

/// `s_<op>_saveexec_b32`: D = EXEC_LO; EXEC_LO = op(S0, EXEC_LO); SCC =
/// EXEC_LO != 0. `s_<op>_wrexec_b32` (`WR`): D = the new EXEC_LO. S0 is
/// read before D is written.
fn saveexec32<const K: u8, const WR: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    use super::super::wave::sreg::EXEC;
    let s = c.wave.read_s32(op.src[0], Width::B32, &c.env.apertures);
    let old = c.wave.s32(EXEC);
    let new = exec_op::<K>(s, old);
    c.wave.set_s32(EXEC, new);
    c.wave.set_s32(op.sdst, if WR { new } else { old });
    c.wave.scc = new != 0;
    Ok(())
}

/// `v_permlane16_b32` / `v_permlanex16_b32` (`X`): lane `l` of each row of
/// 16 reads lane `sel(l)` of src0 in its own row (`X`: in the other row of
/// its 32-lane half), `sel(l)` the 4-bit field `l % 16` of the 64-bit
/// select {src2, src1}. op_sel[0] is FI (a source lane is read even where
/// EXEC is off), op_sel[1] BOUND_CTRL (an inactive source gives 0 rather
/// than leaving the destination lane unchanged).
fn permlane16<const X: bool>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let ap = c.env.apertures;
    let lo = c.wave.read_s32(op.src[1], Width::B32, &ap);
    let hi = c.wave.read_s32(op.src[2], Width::B32, &ap);
    let sel = u64::from(lo) | (u64::from(hi) << 32);
    let fi = op.mods.opsel & 1 != 0;
    let bound = op.mods.opsel & 2 != 0;
    let exec = c.wave.exec();
    let src = match op.src[0] {
        Src::V(r) => *c.wave.vreg(r),
        s => [c.wave.read_s32(s, Width::B32, &ap); 64],
    };
    let mut out = *c.wave.vreg(op.vdst);
    for l in 0..64 {
        if exec >> l & 1 == 0 {
            continue;
        }
        let row = if X {
            (l & !31) | ((l & 16) ^ 16)
        } else {
            l & !15
        };
        let s = row | ((sel >> (4 * (l & 15))) & 0xf) as usize;
        if fi || exec >> s & 1 != 0 {
            out[l] = src[s];
        } else if bound {
            out[l] = 0;
        }
    }
    c.wave.write_v(op.vdst, &out, exec);
    Ok(())
}

/// `v_permlane64_b32` (wave64): lane `l` reads lane `l ^ 32` of src0.
fn permlane64(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let src = b32(c, op, 0);
    let out: [u32; 64] = std::array::from_fn(|l| src[l ^ 32]);
    let exec = c.wave.exec();
    c.wave.write_v(op.vdst, &out, exec);
    Ok(())
}

/// `v_and_b16` / `v_or_b16` / `v_xor_b16`.
fn bitop16<const K: u8>(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b) = (b16(c, op, 0), b16(c, op, 1));
    let r: [u16; 64] = std::array::from_fn(|l| match K {
        AND => a[l] & b[l],
        OR => a[l] | b[l],
        _ => a[l] ^ b[l],
    });
    write_b16(c, op, &r);
    Ok(())
}

/// `v_not_b16`.
fn not16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let a = b16(c, op, 0);
    let r: [u16; 64] = std::array::from_fn(|l| !a[l]);
    write_b16(c, op, &r);
    Ok(())
}

/// `v_mov_b16`.
fn mov16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let a = b16(c, op, 0);
    write_b16(c, op, &a);
    Ok(())
}

/// `v_cndmask_b16`: src1 where the lane's bit of the mask src2 is set, else
/// src0 (abs/neg apply as for floats).
fn cndmask16(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let (a, b) = (f16s(c, op, 0), f16s(c, op, 1));
    let m = mask_src(c, op, 2);
    let r: [u16; 64] = std::array::from_fn(|l| if m >> l & 1 != 0 { b[l] } else { a[l] });
    write_b16(c, op, &r);
    Ok(())
}

/// VOPD: the X and Y operations issue together, so Y reads the registers
/// as they were before X: X runs, its result is set aside and its
/// destination restored, Y runs, then X's result is written (the two
/// destinations differ by encoding).
pub fn vopd(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let Some(pair) = &op.pair else {
        return Err(Fault::Invalid("VOPD without its operations".into()));
    };
    let [x, y] = &**pair;
    let old = *c.wave.vreg(x.vdst);
    (x.exec)(c, x)?;
    let new = *c.wave.vreg(x.vdst);
    c.wave.write_v(x.vdst, &old, u64::MAX);
    (y.exec)(c, y)?;
    c.wave.write_v(x.vdst, &new, u64::MAX);
    Ok(())
}
