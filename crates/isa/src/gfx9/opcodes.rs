//! Every opcode the decoder knows on a target, read from the generated
//! tables, each with a minimal instance: the encoding's fixed bits, the
//! opcode field and operand fields that decode (register 0, or `v0` where
//! the opcode wants a VGPR). Lets a test walk every instruction of a target
//! (the emulator's "every opcode has semantics or a listed reason" test).

use super::Encoding;
use super::tables::{ds, flat, mimg, mubuf, smem, sop, vop, vop3::VOP3, vop3p::VOP3P};
use super::vop::flags;
use crate::Target;

/// One opcode of a target's decoder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opcode {
    pub encoding: Encoding,
    /// The opcode field (for FLAT, `seg * 128 + opcode`; for a gfx950
    /// scaled MFMA pair, the MFMA's opcode).
    pub op: u16,
    /// The mnemonic LLVM prints for the instance (with its `_e32` / `_e64`
    /// suffix where LLVM prints one).
    pub mnemonic: String,
    /// A minimal instance (zero past its length); see [`Opcode::bytes`].
    pub words: [u32; 4],
}

impl Opcode {
    /// The instance's bytes (16: a decoder reads the dwords it needs).
    pub fn bytes(&self) -> [u8; 16] {
        let mut b = [0; 16];
        for (c, w) in b.chunks_exact_mut(4).zip(self.words) {
            c.copy_from_slice(&w.to_le_bytes());
        }
        b
    }
}

/// Every opcode of every encoding that decodes on `target`, in table order.
/// Each instance is the first of a few candidate operand settings that
/// decodes to the table's mnemonic (the first candidate if none does, so
/// that a caller that decodes the instance sees the mismatch).
pub fn opcodes(target: Target) -> Vec<Opcode> {
    let bit = target.bit();
    let t = target.index();
    let mut out = Vec::new();
    let mut add = |encoding, op: u16, mnemonic: &str, cands: &[[u32; 4]]| {
        let words = cands
            .iter()
            .copied()
            .find(|w| decodes_as(target, w, mnemonic))
            .unwrap_or(cands[0]);
        out.push(Opcode {
            encoding,
            op,
            mnemonic: mnemonic.to_string(),
            words,
        });
    };
    let w = |w0: u32, w1: u32| [w0, w1, 0, 0];

    // Scalar ALU: all register fields s0 (s[0:1] for pairs).
    for (enc, rows, base, shift) in [
        (Encoding::Sop2, sop::SOP2, 0x8000_0000u32, 23),
        (Encoding::Sop1, sop::SOP1, 0xbe80_0000, 8),
        (Encoding::Sopc, sop::SOPC, 0xbf00_0000, 16),
    ] {
        for r in rows.iter().filter(|r| r.targets & bit != 0) {
            let w0 = base | u32::from(r.op) << shift;
            add(enc, r.op.into(), r.name, &[w(w0, 0)]);
        }
    }
    for r in sop::SOPK.iter().filter(|r| r.targets & bit != 0) {
        // hwreg 1 (HW_REG_MODE) where the immediate names a register.
        let w0 = 0xb000_0000 | u32::from(r.op) << 23;
        add(
            Encoding::Sopk,
            r.op.into(),
            r.name,
            &[w(w0, 0), w(w0 | 1, 0)],
        );
    }
    for r in sop::SOPP.iter().filter(|r| r.targets & bit != 0) {
        let w0 = 0xbf80_0000 | u32::from(r.op) << 16;
        add(Encoding::Sopp, r.op.into(), r.name, &[w(w0, 0)]);
    }
    for r in smem::SMEM.iter().filter(|r| r.targets & bit != 0) {
        // Immediate offset 0 (imm bit 17), or soffset s0.
        let w0 = 0xc000_0000 | u32::from(r.op) << 18;
        add(
            Encoding::Smem,
            r.op.into(),
            r.name,
            &[w(w0 | 1 << 17, 0), w(w0, 0)],
        );
    }

    // VOP1 / VOP2 / VOPC (e32): src0 v0, or s0; vsrc1 v0; vdst v0.
    for (enc, map, base, shift) in [
        (Encoding::Vop2, &vop::VOP2[t][..], 0u32, 25),
        (Encoding::Vop1, &vop::VOP1[t][..], 0x7e00_0000, 9),
        (Encoding::Vopc, &vop::VOPC[t][..], 0x7c00_0000, 17),
    ] {
        for (op, &r) in map.iter().enumerate().filter(|(_, r)| **r != vop::NONE) {
            let row = &vop::OPS[usize::from(r)];
            let w0 = base | (op as u32) << shift;
            let name = if row.flags & (flags::NO_OPERANDS | flags::NO_SUFFIX) != 0 {
                row.name
            } else {
                row.e32
            };
            add(enc, op as u16, name, &[w(w0 | 0x100, 0), w(w0, 0)]);
        }
    }
    // VOP3 (including the e64 forms of VOP1/2/C): sources v0, or s0.
    let v3 = 0x100 | 0x100 << 9 | 0x100 << 18;
    for r in VOP3.iter().filter(|r| r.tg & bit != 0) {
        let w0 = 0xd000_0000 | u32::from(r.op) << 16;
        let c = [w(w0, v3), w(w0, 0), w(w0, 0x100), w(w0, 0x100 | 0x100 << 9)];
        add(Encoding::Vop3, r.op, r.name, &c);
    }
    // VOP3P: sources v0 with op_sel_hi set (LLVM's default), or plain.
    for r in VOP3P.iter().filter(|r| r.tg & bit != 0) {
        let w0 = 0xd380_0000 | u32::from(r.op) << 16;
        let c = [
            w(w0 | 1 << 14, v3 | 3 << 27),
            w(w0, v3),
            w(w0, v3 | 3 << 27),
            w(w0 | 1 << 14, 0x100 | 0x100 << 9 | 3 << 27),
        ];
        add(Encoding::Vop3p, r.op.into(), r.name, &c);
    }
    // gfx950: a `v_mfma_ld_scale_b32` followed by an f8f6f4 MFMA with abid
    // 1 is one `v_mfma_scale_*` instruction.
    if let Some(ld) = VOP3P
        .iter()
        .find(|r| r.tg & bit != 0 && r.name == "v_mfma_ld_scale_b32")
    {
        let ld0 = 0xd380_0000 | u32::from(ld.op) << 16 | 1 << 14;
        let ld1 = 0x100 | 0x100 << 9 | 3 << 27;
        for r in VOP3P
            .iter()
            .filter(|r| r.tg & bit != 0 && r.name.ends_with("_f8f6f4"))
        {
            let m0 = 0xd380_0000 | u32::from(r.op) << 16 | 1 << 11;
            let m1 = 0x100 | 0x100 << 9 | 0x100 << 18;
            let name = format!("v_mfma_scale_{}", &r.name["v_mfma_".len()..]);
            add(Encoding::Vop3p, r.op.into(), &name, &[[ld0, ld1, m0, m1]]);
        }
    }

    // Memory encodings: the table's fixed bits, register fields 0.
    let ds_map = super::ds::table(target);
    for (op, &r) in ds_map.iter().enumerate().filter(|(_, r)| **r != 0xffff) {
        let row = &ds::DS_OPS[usize::from(r)];
        let [w0, w1] = split(0xd800_0000 | (op as u64) << 17 | row.val);
        add(Encoding::Ds, op as u16, row.name, &[w(w0, w1)]);
    }
    let flat_map = super::flat::tabs(target).ops;
    for (i, &r) in flat_map.iter().enumerate().filter(|(_, r)| **r != 0xffff) {
        let row = &flat::FLAT_OPS[usize::from(r)];
        let (seg, op) = (i as u64 / 128, i as u64 % 128);
        let base = 0xdc00_0000 | op << 18 | seg << 14 | row.val;
        // saddr off (0x7f, dword 1 bits 22:16), or s[0:1].
        let [a0, a1] = split(base | 0x7f << 48);
        let [b0, b1] = split(base);
        add(Encoding::Flat, i as u16, row.name, &[w(a0, a1), w(b0, b1)]);
    }
    let (mu, mt) = super::mubuf::tables(target);
    for (enc, map, base, shift) in [
        (Encoding::Mubuf, &mu[..], 0xe000_0000u64, 18),
        (Encoding::Mtbuf, &mt[..], 0xe800_0000, 15),
    ] {
        for (op, &r) in map.iter().enumerate().filter(|(_, r)| **r != 0xffff) {
            let row = &mubuf::BUF_OPS[usize::from(r)];
            let [w0, w1] = split(base | (op as u64) << shift | row.val);
            add(enc, op as u16, row.name, &[w(w0, w1)]);
        }
    }
    let mimg_map = super::mimg::table(target);
    for (op, &r) in mimg_map.iter().enumerate().filter(|(_, r)| **r != 0xffff) {
        let row = &mimg::MIMG_OPS[usize::from(r)];
        // dmask 1 (one data dword).
        let [w0, w1] = split(0xf000_0000 | (op as u64) << 18 | 1 << 8 | row.val);
        add(Encoding::Mimg, op as u16, row.name, &[w(w0, w1)]);
    }
    out
}

/// The two dwords of a 64-bit instruction.
fn split(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

/// Whether `words` decode on `target` to an instruction LLVM prints with
/// `mnemonic`.
fn decodes_as(target: Target, words: &[u32; 4], mnemonic: &str) -> bool {
    let mut b = [0; 16];
    for (c, w) in b.chunks_exact_mut(4).zip(words) {
        c.copy_from_slice(&w.to_le_bytes());
    }
    crate::decode(target, &b).is_ok_and(|i| printed_mnemonic(&i) == mnemonic)
}

/// The mnemonic as LLVM prints it: the first word of the disassembly
/// ([`Inst::mnemonic`](super::Inst::mnemonic) names a gfx950 scaled MFMA
/// pair by its first instruction).
pub fn printed_mnemonic(i: &super::Inst) -> String {
    let s = i.to_string();
    s.split_whitespace().next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table row yields an instance that decodes to its mnemonic.
    #[test]
    fn every_opcode_decodes_to_its_mnemonic() {
        let mut bad = Vec::new();
        for t in crate::gfx9::ALL_TARGETS {
            let ops = opcodes(t);
            assert!(ops.len() > 900, "{t}: {} opcodes", ops.len());
            for o in ops {
                let got = crate::decode(t, &o.bytes()).map(|i| printed_mnemonic(&i));
                if got.as_deref() != Ok(o.mnemonic.as_str()) {
                    bad.push(format!(
                        "{t} {:?} {:#x} {}: {got:?}",
                        o.encoding, o.op, o.mnemonic
                    ));
                }
            }
        }
        assert!(bad.is_empty(), "{} bad:\n{}", bad.len(), bad.join("\n"));
    }
}
