//! Hardware registers: `s_getreg_b32`, `s_setreg_b32`,
//! `s_setreg_imm32_b32` (ISA manual, "Hardware registers").
//!
//! The SIMM16 selector holds the register id in bits 5:0, the bit offset
//! in 10:6 and the field size minus one in 15:11. MODE and TRAPSTS are
//! read and written; STATUS reads the live SCC / EXECZ / VCCZ bits and
//! ignores writes (its writable bits are privileged); HW_ID, GPR_ALLOC,
//! LDS_ALLOC and SH_MEM_BASES describe the wave; the trap base / memory
//! addresses read 0 (no trap handler is installed); other ids read 0 and
//! ignore writes.

use super::s32;
use crate::exec::op::{Ctx, ExecFn, Fault, Op};
use crate::exec::wave::{SREGS, Wave};

/// Hardware register ids.
pub mod id {
    pub const MODE: u32 = 1;
    pub const STATUS: u32 = 2;
    pub const TRAPSTS: u32 = 3;
    pub const HW_ID: u32 = 4;
    pub const GPR_ALLOC: u32 = 5;
    pub const LDS_ALLOC: u32 = 6;
    pub const IB_STS: u32 = 7;
    pub const SH_MEM_BASES: u32 = 15;
}

/// STATUS bits the hardware keeps live: SCC (0), EXECZ (9), VCCZ (10).
const STATUS_SCC: u32 = 1;
const STATUS_EXECZ: u32 = 1 << 9;
const STATUS_VCCZ: u32 = 1 << 10;

/// The semantic function of a hardware-register mnemonic.
pub fn lookup(name: &str) -> Option<ExecFn> {
    Some(match name {
        "s_getreg_b32" => s_getreg_b32,
        "s_setreg_b32" => s_setreg_b32,
        "s_setreg_imm32_b32" => s_setreg_imm32_b32,
        _ => return None,
    })
}

/// A decoded `hwreg(id, offset, size)` selector.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Sel {
    pub id: u32,
    pub offset: u32,
    pub size: u32,
}

impl Sel {
    pub fn from_simm16(v: u16) -> Sel {
        let v = u32::from(v);
        Sel {
            id: v & 0x3f,
            offset: (v >> 6) & 0x1f,
            size: (v >> 11) + 1,
        }
    }

    /// The selected bits in place: `((1 << size) - 1) << offset`, within
    /// 32 bits.
    pub fn mask(self) -> u32 {
        let m = if self.size >= 32 {
            u32::MAX
        } else {
            (1 << self.size) - 1
        };
        m << self.offset
    }
}

/// The value of hardware register `id` as `s_getreg` sees it.
pub fn read(c: &Ctx, id: u32) -> u32 {
    let w: &Wave = c.wave;
    match id {
        id::MODE => w.mode,
        id::STATUS => {
            let mut s = w.status & !(STATUS_SCC | STATUS_EXECZ | STATUS_VCCZ);
            if w.scc {
                s |= STATUS_SCC;
            }
            if w.exec() == 0 {
                s |= STATUS_EXECZ;
            }
            if w.vcc() == 0 {
                s |= STATUS_VCCZ;
            }
            s
        }
        id::TRAPSTS => w.trapsts,
        id::HW_ID => {
            // WAVE_ID 3:0, SIMD_ID 5:4 (four SIMDs per CU, waves spread
            // round-robin); CU, SE, queue and pipe ids read 0.
            let wave = (w.id_in_group / 4) & 0xf;
            let simd = w.id_in_group & 3;
            wave | simd << 4
        }
        id::GPR_ALLOC => {
            // VGPR_SIZE 13:8 in granules of 8 registers, SGPR_SIZE 27:24 in
            // granules of 16, both minus one; bases 0.
            let vgpr = (w.v.len().div_ceil(8).saturating_sub(1)).min(63) as u32;
            let sgpr = (SREGS.div_ceil(16).saturating_sub(1)).min(15) as u32;
            vgpr << 8 | sgpr << 24
        }
        id::LDS_ALLOC => {
            // LDS_SIZE 20:12 in granules of 128 dwords; base 0.
            let g = c.env.lds_size.div_ceil(512).min(0x1ff);
            g << 12
        }
        id::SH_MEM_BASES => {
            // PRIVATE_BASE 15:0 and SHARED_BASE 31:16: bits 63:48 of the
            // apertures.
            let ap = &c.env.apertures;
            ((ap.private_base >> 48) as u32 & 0xffff) | ((ap.shared_base >> 48) as u32) << 16
        }
        _ => 0,
    }
}

/// Writes the bits of `mask` of hardware register `id` from `value`.
pub fn write(w: &mut Wave, id: u32, mask: u32, value: u32) {
    let merge = |old: u32| (old & !mask) | (value & mask);
    match id {
        id::MODE => w.mode = merge(w.mode),
        id::TRAPSTS => w.trapsts = merge(w.trapsts),
        _ => {}
    }
}

/// `s_getreg_b32`: D = the selected field, right-justified.
fn s_getreg_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let sel = Sel::from_simm16(op.imm as u16);
    let v = (read(c, sel.id) & sel.mask()) >> sel.offset;
    c.wave.set_s32(op.sdst, v);
    Ok(())
}

/// `s_setreg_b32`: the field = the low bits of the register the `sdst`
/// field names.
fn s_setreg_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let sel = Sel::from_simm16(op.imm as u16);
    let v = c.wave.s32(op.sdst);
    write(c.wave, sel.id, sel.mask(), v << sel.offset);
    Ok(())
}

/// `s_setreg_imm32_b32`: the field = the low bits of the literal.
fn s_setreg_imm32_b32(c: &mut Ctx, op: &Op) -> Result<(), Fault> {
    let sel = Sel::from_simm16(op.imm as u16);
    let v = s32(c, op, 0);
    write(c.wave, sel.id, sel.mask(), v << sel.offset);
    Ok(())
}
