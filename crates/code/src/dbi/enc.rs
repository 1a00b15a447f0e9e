//! Encoders for the GFX9 scalar and vector instructions the probes emit
//! (CDNA3 ISA guide, "Microcode Formats": SOP1, SOP2, SOPC, SOPP, SMEM,
//! VOP2, VOP3, GLOBAL). The unit tests decode each with the gfx942 decoder
//! (checked against LLVM 22) and compare the text.

/// `s_waitcnt lgkmcnt(0)`.
pub const S_WAITCNT_LGKM0: u32 = 0xbf8c_c07f;
/// `s_waitcnt vmcnt(0)`.
pub const S_WAITCNT_VM0: u32 = 0xbf8c_0f70;
/// The SSRC field of EXEC (64-bit operands name its low half).
pub const EXEC: u32 = 126;
/// The SSRC field of a literal constant.
pub const LITERAL: u32 = 255;

/// SOP1 opcodes.
pub mod sop1 {
    pub const MOV_B32: u32 = 0x00;
    pub const MOV_B64: u32 = 0x01;
    pub const GETPC_B64: u32 = 0x1c;
}

/// SOP2 opcodes.
pub mod sop2 {
    pub const ADD_U32: u32 = 0x00;
    pub const ADDC_U32: u32 = 0x04;
    pub const AND_B32: u32 = 0x0c;
    pub const CSELECT_B32: u32 = 0x0a;
    pub const MUL_I32: u32 = 0x24;
}

/// SOPC opcodes.
pub mod sopc {
    pub const CMP_EQ_U32: u32 = 0x06;
    pub const CMP_LG_U32: u32 = 0x07;
    pub const CMP_LT_U32: u32 = 0x0a;
}

/// SMEM opcodes.
pub mod smem {
    pub const STORE_DWORD: u32 = 16;
    pub const STORE_DWORDX2: u32 = 17;
    pub const ATOMIC_ADD: u32 = 130;
    pub const ATOMIC_ADD_X2: u32 = 162;
}

/// The inline constant for the integer `i` (-16..=64) as an SSRC field.
pub const fn int(i: i32) -> u32 {
    if i >= 0 {
        (128 + i) as u32
    } else {
        (192 - i) as u32
    }
}

/// SOP1 `sdst = op(ssrc0)`.
pub fn sop1(op: u32, sdst: u32, ssrc0: u32) -> u32 {
    0xbe80_0000 | (sdst & 0x7f) << 16 | op << 8 | (ssrc0 & 0xff)
}

/// SOP2 `sdst = op(ssrc0, ssrc1)` (one of them may be [`LITERAL`]: the
/// literal dword follows).
pub fn sop2(op: u32, sdst: u32, ssrc0: u32, ssrc1: u32) -> u32 {
    0x8000_0000 | op << 23 | (sdst & 0x7f) << 16 | (ssrc1 & 0xff) << 8 | (ssrc0 & 0xff)
}

/// SOPC `scc = op(ssrc0, ssrc1)`.
pub fn sopc(op: u32, ssrc0: u32, ssrc1: u32) -> u32 {
    0xbf00_0000 | op << 16 | (ssrc1 & 0xff) << 8 | (ssrc0 & 0xff)
}

/// `s_cbranch_scc0` by `dwords` (relative to the next instruction).
pub fn s_cbranch_scc0(dwords: i16) -> u32 {
    0xbf84_0000 | u32::from(dwords as u16)
}

/// SMEM with an immediate offset (21-bit signed on GFX9): `sdata` and the
/// 64-bit base `s[sbase:sbase+1]` (`sbase` even); `glc` returns the
/// atomic's value before the operation into `sdata`.
pub fn smem(op: u32, sdata: u32, sbase: u32, offset: i32, glc: bool) -> [u32; 2] {
    [
        0xc000_0000
            | op << 18
            | 1 << 17
            | u32::from(glc) << 16
            | (sdata & 0x7f) << 6
            | ((sbase >> 1) & 0x3f),
        (offset as u32) & 0x1f_ffff,
    ]
}

/// Whether `offset` fits an SMEM immediate offset.
pub fn smem_offset_fits(offset: i64) -> bool {
    (-(1 << 20)..(1 << 20)).contains(&offset)
}

/// VOP3 `v_mbcnt_lo_u32_b32 vdst, -1, 0` and `v_mbcnt_hi_u32_b32 vdst,
/// -1, vdst`: the lane id.
pub fn lane_id(vdst: u32) -> [u32; 4] {
    let v = 256 + vdst;
    [
        0xd28c_0000 | (vdst & 0xff),
        int(0) << 9 | int(-1),
        0xd28d_0000 | (vdst & 0xff),
        v << 9 | int(-1),
    ]
}

/// VOP2 `v_lshlrev_b32_e32 vdst, shift, vsrc1`.
pub fn v_lshlrev_b32(vdst: u32, shift: u32, vsrc1: u32) -> u32 {
    0x12 << 25 | (vdst & 0xff) << 17 | (vsrc1 & 0xff) << 9 | int(shift as i32)
}

/// GLOBAL store with an SGPR base: `op vaddr, v[vdata..], s[saddr:saddr+1]
/// offset:offset` (`offset` 13-bit signed); the address is
/// `s[saddr:saddr+1] + vaddr + offset`.
pub fn global_store(op: u32, vaddr: u32, vdata: u32, saddr: u32, offset: i32) -> [u32; 2] {
    [
        0xdc00_0000 | op << 18 | 2 << 14 | (offset as u32 & 0x1fff),
        (saddr & 0x7f) << 16 | (vdata & 0xff) << 8 | (vaddr & 0xff),
    ]
}

/// GLOBAL opcodes.
pub mod global {
    pub const STORE_DWORD: u32 = 0x1c;
    pub const STORE_DWORDX2: u32 = 0x1d;
}

/// VOP3 `v_readlane_b32 sdst, vsrc, lane` and `v_writelane_b32 vdst, ssrc,
/// lane`.
pub fn v_readlane(sdst: u32, vsrc: u32, lane: u32) -> [u32; 2] {
    [
        0xd289_0000 | (sdst & 0x7f),
        int(lane as i32) << 9 | (256 + vsrc),
    ]
}

pub fn v_writelane(vdst: u32, ssrc: u32, lane: u32) -> [u32; 2] {
    [0xd28a_0000 | (vdst & 0xff), int(lane as i32) << 9 | ssrc]
}
