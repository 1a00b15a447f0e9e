//! Encoders for the host (gfx942) instructions the rewrites emit, from the
//! GFX9 microcode formats (CDNA3 ISA guide, "Microcode Formats"). Each
//! builder returns the instruction's dwords; the unit tests decode every one
//! with the gfx942 decoder (checked against LLVM 22) and compare the text.

/// A source operand field (9 bits): SGPRs 0-101, VCC 106/107, M0 124,
/// EXEC 126/127, inline constants 128-208 and 240-247, literal 255, VGPRs
/// 256-511.
pub type Src = u16;

/// The source field of VGPR `n`.
pub const fn v(n: u32) -> Src {
    (256 + n) as Src
}

/// The inline constant for the integer `i` (-16..=64).
pub const fn int(i: i32) -> Src {
    if i >= 0 {
        (128 + i) as Src
    } else {
        (192 - i) as Src
    }
}

/// Special source fields.
pub const M0: Src = 124;
pub const EXEC_LO: Src = 126;
pub const EXEC_HI: Src = 127;

/// `s_mov_b64 exec, -1` (SALU moves leave SCC alone).
pub const S_MOV_B64_EXEC_ALL: u32 = 0xbefe_01c1;

/// The literal-constant source field.
pub const LITERAL: Src = 255;

/// `s_nop N`.
pub fn s_nop(n: u16) -> u32 {
    0xbf80_0000 | u32::from(n & 7)
}

/// `s_branch` by `dwords` (relative to the next instruction).
pub fn s_branch(dwords: i16) -> u32 {
    0xbf82_0000 | u32::from(dwords as u16)
}

/// `s_waitcnt lgkmcnt(0)`.
pub const S_WAITCNT_LGKM0: u32 = 0xbf8c_c07f;
/// `s_waitcnt vmcnt(0)`.
pub const S_WAITCNT_VM0: u32 = 0xbf8c_0f70;

/// VOP1 opcodes.
pub mod vop1 {
    pub const MOV_B32: u32 = 0x01;
    pub const NOT_B32: u32 = 0x2b;
}

/// VOP2 opcodes.
pub mod vop2 {
    pub const ASHRREV_I32: u32 = 0x11;
    pub const LSHLREV_B32: u32 = 0x12;
    pub const AND_B32: u32 = 0x13;
    pub const OR_B32: u32 = 0x14;
    pub const XOR_B32: u32 = 0x15;
    pub const ADD_U32: u32 = 0x34;
    pub const SUB_U32: u32 = 0x35;
}

/// VOP3 opcodes.
pub mod vop3 {
    pub const CVT_F16_F32: u32 = 0x14a;
    pub const BFE_U32: u32 = 0x1c8;
    pub const BFE_I32: u32 = 0x1c9;
    pub const BFI_B32: u32 = 0x1ca;
    pub const PERM_B32: u32 = 0x1ed;
    pub const LSHL_ADD_U32: u32 = 0x1fd;
    pub const LSHL_OR_B32: u32 = 0x200;
    pub const LSHRREV_B32_E64: u32 = 0x110;
    pub const READLANE_B32: u32 = 0x289;
    pub const WRITELANE_B32: u32 = 0x28a;
    pub const MBCNT_LO_U32_B32: u32 = 0x28c;
    pub const MBCNT_HI_U32_B32: u32 = 0x28d;
}

/// FLAT/GLOBAL opcodes.
pub mod flat {
    pub const GLOBAL_LOAD_DWORDX4: u32 = 0x17;
}

/// DS opcodes.
pub mod ds {
    pub const READ_B32: u32 = 0x36;
    pub const READ_U8: u32 = 0x3a;
    pub const READ_U16: u32 = 0x3c;
    pub const BPERMUTE_B32: u32 = 0x3f;
    pub const WRITE_B128: u32 = 0xdf;
}

/// A sequence of host instruction dwords under construction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seq {
    pub words: Vec<u32>,
}

impl Seq {
    pub fn new() -> Seq {
        Seq::default()
    }

    pub fn raw(&mut self, w: &[u32]) -> &mut Seq {
        self.words.extend_from_slice(w);
        self
    }

    /// VOP1 `vdst = op(src0)`; a literal `src0` takes `lit`.
    pub fn vop1(&mut self, op: u32, vdst: u32, src0: Src, lit: Option<u32>) -> &mut Seq {
        self.words
            .push(0x7e00_0000 | (vdst & 0xff) << 17 | op << 9 | u32::from(src0));
        if src0 == LITERAL {
            self.words.push(lit.unwrap_or(0));
        }
        self
    }

    /// `v_mov_b32 vdst, src0`.
    pub fn mov(&mut self, vdst: u32, src0: Src) -> &mut Seq {
        self.vop1(vop1::MOV_B32, vdst, src0, None)
    }

    /// `v_mov_b32 vdst, literal`.
    pub fn mov_lit(&mut self, vdst: u32, lit: u32) -> &mut Seq {
        self.vop1(vop1::MOV_B32, vdst, LITERAL, Some(lit))
    }

    /// VOP2 `vdst = op(src0, vsrc1)`; a literal `src0` takes `lit`.
    pub fn vop2(
        &mut self,
        op: u32,
        vdst: u32,
        src0: Src,
        vsrc1: u32,
        lit: Option<u32>,
    ) -> &mut Seq {
        self.words
            .push(op << 25 | (vdst & 0xff) << 17 | (vsrc1 & 0xff) << 9 | u32::from(src0));
        if src0 == LITERAL {
            self.words.push(lit.unwrap_or(0));
        }
        self
    }

    /// VOP3 (VOP3a) with source modifiers: `abs`/`neg` bit i for source i.
    #[allow(clippy::too_many_arguments)]
    pub fn vop3_mods(
        &mut self,
        op: u32,
        vdst: u32,
        src: [Src; 3],
        abs: u8,
        neg: u8,
        opsel: u8,
        clamp: bool,
    ) -> &mut Seq {
        self.words.push(
            0xd000_0000
                | op << 16
                | u32::from(clamp) << 15
                | u32::from(opsel & 0xf) << 11
                | u32::from(abs & 7) << 8
                | (vdst & 0xff),
        );
        self.words.push(
            u32::from(neg & 7) << 29
                | u32::from(src[2]) << 18
                | u32::from(src[1]) << 9
                | u32::from(src[0]),
        );
        self
    }

    /// VOP3 without modifiers.
    pub fn vop3(&mut self, op: u32, vdst: u32, src: [Src; 3]) -> &mut Seq {
        self.vop3_mods(op, vdst, src, 0, 0, 0, false)
    }

    /// DS: `vdst = op(addr, data0, data1) offset`.
    pub fn ds(
        &mut self,
        op: u32,
        vdst: u32,
        addr: u32,
        data0: u32,
        data1: u32,
        offset: u16,
    ) -> &mut Seq {
        self.words.push(0xd800_0000 | op << 17 | u32::from(offset));
        self.words
            .push((vdst & 0xff) << 24 | (data1 & 0xff) << 16 | (data0 & 0xff) << 8 | (addr & 0xff));
        self
    }

    /// The lane id (0..63) into `vdst`.
    pub fn lane_id(&mut self, vdst: u32) -> &mut Seq {
        self.vop3(vop3::MBCNT_LO_U32_B32, vdst, [int(-1), int(0), 0]);
        self.vop3(vop3::MBCNT_HI_U32_B32, vdst, [int(-1), v(vdst), 0])
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}
