#!/usr/bin/env python3
"""Learns the GFX11 VOPD (dual-issue) X and Y opcodes on gfx1100 and
gfx1151 (wave32; LLVM decodes no VOPD word in wave64) by probing LLVM 22's
disassembler, and writes crates/isa/src/gfx11/tables/vopd.rs: per opcode
the mnemonic, the printed operands (vdst, src0, vsrc1, the literal K),
src0's value type, and whether the vsrc1 field must be zero.

    python3 scripts/gen/gfx11/vopd.py
"""
import os, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import CPUS, decode_many, header, table_path, words  # noqa: E402
from valu import LITS, split, strip_note, value_type  # noqa: E402

OUT = table_path("vopd.rs")
ADD = 4  # v_dual_add_f32, the partner of every probe


def word(ox, oy, sx0=0x101, vx1=2, sy0=0x103, vy1=4, dx=5, dy=6, lit=0x12345678):
    w0 = 0xC8000000 | (ox << 22) | (oy << 17) | (vx1 << 9) | sx0
    w1 = (dx << 24) | (dy << 17) | (vy1 << 9) | sy0
    return words(w0, w1, lit, 0)


def probes(side, op, v1):
    """Probe words with `op` on `side` ("X" or "Y") and add on the other;
    `v1` is the vsrc1 of the base word."""
    if side == "X":
        w = lambda src0=0x101, vsrc1=v1, dst=5, lit=0x12345678: word(op, ADD, sx0=src0, vx1=vsrc1, dx=dst, lit=lit)
    else:
        w = lambda src0=0x101, vsrc1=v1, dst=6, lit=0x12345678: word(ADD, op, sy0=src0, vy1=vsrc1, dy=dst, lit=lit)
    p = {"base": w(), "s0": w(src0=0x109), "s1": w(vsrc1=10), "d": w(dst=9)}
    p["i240"] = w(src0=240)
    p["i248"] = w(src0=248)
    for j, v in enumerate(LITS):
        p[f"lit{j}"] = w(src0=255, lit=v)
    return {(v1, k): d for k, d in p.items()}


def text(r, k):
    x = r.get(k, (None, 0))[0]
    return None if x in (None, "<crash>") else x


def half(side, tx):
    return tx.split(" :: ")[0 if side == "X" else 1]


def analyse(side, op, rr):
    zero1 = text(rr, (2, "base")) is None
    r = {k: v for (v1, k), v in rr.items() if v1 == (0 if zero1 else 2)}
    base = text(r, "base")
    if base is None:
        return None
    name, toks, _, _ = split(half(side, base))
    roles = []
    for i, tok in enumerate(toks):
        role = None
        for key, rl in (("d", "Dst"), ("s0", "Src0"), ("s1", "Src1")):
            tx = text(r, key)
            if tx and split(half(side, tx))[1][i] != tok:
                role = rl
        if role is None and tok == "0x12345678":
            role = "K"
        assert role, (side, op, base)
        roles.append(role)
    i = roles.index("Src0")
    inl, lits = {}, {}
    for fld in (240, 248):
        tx = text(r, f"i{fld}")
        if tx:
            inl[fld] = strip_note(split(half(side, tx))[1][i])[0]
    for j, v in enumerate(LITS):
        tx = text(r, f"lit{j}")
        if tx:
            lits[v] = strip_note(split(half(side, tx))[1][i])[0]
    tys = value_type(inl, lits)
    assert tys, (side, op, inl, lits)
    return dict(name=name, roles=roles, ty=tys[0], zero1=zero1)


def main():
    rows = {"X": {}, "Y": {}}
    for ci, cpu in enumerate(CPUS):
        keys, datas = [], []
        for side, n in (("X", 16), ("Y", 32)):
            for op in range(n):
                for k, d in {**probes(side, op, 2), **probes(side, op, 0)}.items():
                    keys.append((side, op, k))
                    datas.append(d)
        res = dict(zip(keys, decode_many(cpu, datas)))
        for side, n in (("X", 16), ("Y", 32)):
            for op in range(n):
                r = {k: v for (s, o, k), v in res.items() if s == side and o == op}
                d = analyse(side, op, r)
                if d:
                    key = (op, str(d))
                    rows[side].setdefault(key, [0, d])[0] |= 1 << ci
    out = [header("vopd.py", "VOPD (dual-issue) X and Y opcodes: mnemonic, operands, src0 type.")]
    out.append("use crate::gfx11::vopd::{DualRow, Role::*};\nuse crate::gfx11::operand::ValType::*;\n\n")
    for side in ("X", "Y"):
        out.append(f"pub static VOPD_{side}: &[DualRow] = &[\n")
        for (op, _), (mask, d) in sorted(rows[side].items()):
            ty = {"V2F16S": "V2F16Splat"}.get(d["ty"], d["ty"])
            out.append(f"    DualRow {{ op: {op}, tg: {mask}, name: \"{d['name']}\", roles: &[{', '.join(d['roles'])}], "
                       f"ty: {ty}, zero_vsrc1: {str(d['zero1']).lower()} }},\n")
        out.append("];\n\n")
    with open(OUT, "w") as fh:
        fh.write("".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main()
