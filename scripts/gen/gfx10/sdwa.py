#!/usr/bin/env python3
"""Learns GFX10's SDWA forms of the VOP1, VOP2 and VOPC opcodes (src0 0xF9,
a second dword of operand selects and modifiers) on gfx1010 and gfx1030 by
probing LLVM 22's disassembler, and writes
crates/isa/src/gfx10/tables/sdwa.rs.

Per opcode that has the form: its mnemonic; which source modifiers LLVM
accepts (sext for integer operands, neg/abs for float ones) and which it
accepts without printing; clamp and omod; whether a destination select is
printed; and how constants in an SGPR-or-constant source print (their
value type).

    python3 scripts/gen/gfx10/sdwa.py
"""
import os, re, sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gfx11"))
sys.argv.append("gfx10")
from oracle import CPUS, decode_many, table_path, words  # noqa: E402
from valu import value_type  # noqa: E402

OUT = table_path("sdwa.rs")
KINDS = (("Vop1", 256), ("Vop2", 64), ("Vopc", 256))
# Probe bits of the SDWA dword and the flag each shows.
BITS = [(19, "S0_SEXT"), (20, "S0_NEG"), (27, "S1_SEXT"), (28, "S1_NEG"), (13, "CLAMP"), (14, "OMOD")]
MODS = re.compile(r" (clamp|mul:|div:|dst_sel:|src0_sel:)")


def w0(kind, op, src0=0xF9, vdst=5, vsrc1=6):
    if kind == "Vop1":
        return 0x7E000000 | (vdst << 17) | (op << 9) | src0
    if kind == "Vop2":
        return (op << 25) | (vdst << 17) | (vsrc1 << 9) | src0
    return 0x7C000000 | (op << 17) | (vsrc1 << 9) | src0


def base_w1(kind):
    """src0 v2, selects DWORD, no modifiers (VOPC: no sdst)."""
    return {"Vop1": 0x00060602, "Vop2": 0x06060602, "Vopc": 0x06060002}[kind]


def ops_of(text):
    """The operand tokens of an SDWA text (before the modifiers)."""
    name, _, rest = text.partition(" ")
    m = MODS.search(" " + rest)
    if m:
        rest = rest[: m.start()]
    return [t.strip() for t in rest.split(",")] if rest.strip() else []


def learn(cpu):
    probes, keys = [], []

    def add(key, *ws):
        keys.append(key)
        probes.append(words(*ws, 0))

    for kind, n in KINDS:
        for op in range(n):
            b1 = base_w1(kind)
            add((kind, op, "base"), w0(kind, op), b1)
            add((kind, op, "bare"), w0(kind, op, vdst=0, vsrc1=0), 0)
            for bit, _ in BITS:
                add((kind, op, bit), w0(kind, op), b1 | 1 << bit)
                add((kind, op, f"bare{bit}"), w0(kind, op, vdst=0, vsrc1=0), 1 << bit)
            # Constants through the SGPR-or-constant selects: 0.5 (240) and
            # 1/(2*pi) (248) in src0 (s0 bit 23) and src1 (s1 bit 31).
            for f in (240, 248):
                add((kind, op, f"s0i{f}"), w0(kind, op), (b1 & ~0xFF) | f | 1 << 23)
                add((kind, op, f"s1i{f}"), w0(kind, op, vsrc1=f), b1 | 1 << 31)
            add((kind, op, "sd"), w0(kind, op), b1 | 1 << 15 | 4 << 8)
    res = dict(zip(keys, (r[0] if r[0] != "<crash>" else None for r in decode_many(cpu, probes))))
    rows = {}
    for kind, n in KINDS:
        for op in range(n):
            t = lambda k: res[(kind, op, k)]
            base = t("base")
            bare = False
            if base is None:
                base = t("bare")
                bare = True
                if base is None or " " in base:
                    continue
            name = base.split()[0]
            flags = []
            if bare:
                flags.append("BARE")
            for bit, fl in BITS:
                tx = t(f"bare{bit}" if bare else bit)
                if tx is None:
                    continue
                if tx == base and fl in ("S0_NEG", "S1_NEG", "S0_SEXT", "S1_SEXT"):
                    flags.append(fl.replace("_NEG", "_HIDDEN").replace("_SEXT", "_HIDDEN"))
                flags.append(fl)
            if kind != "Vopc" and not bare and "dst_sel:" not in base:
                flags.append("NO_DST_SEL")
            tys = []
            for k in (0, 1):
                inl = {}
                for f in (240, 248):
                    tx = t(f"s{k}i{f}")
                    if tx:
                        toks = ops_of(tx)
                        # The source is the first (src0) or last (src1)
                        # token that is not vcc.
                        src = [x for x in toks if not x.startswith("vcc")]
                        tok = src[1 if k == 0 and len(src) > 2 else 0] if k == 0 else src[-1]
                        inl[f] = tok.strip("-|").split("/*")[0]
                found = value_type(inl, {}) if inl else ["I32"]
                tys.append(found[0] if found else "I32")
            rows[(kind, op)] = (name, tuple(sorted(set(flags))), tuple(tys))
    return rows


def main():
    per = {cpu: learn(cpu) for cpu in CPUS}
    out = []
    for kind, n in KINDS:
        for op in range(n):
            groups = []
            for ci, cpu in enumerate(CPUS):
                d = per[cpu].get((kind, op))
                if d is None:
                    continue
                for g in groups:
                    if g[1] == d:
                        g[0] |= 1 << ci
                        break
                else:
                    groups.append([1 << ci, d])
            for mask, (name, flags, tys) in groups:
                fl = " | ".join(flags) or "0"
                out.append(f"    SdwaRow {{ kind: Kind::{kind}, op: {op}, tg: {mask}, name: \"{name}\", "
                           f"flags: {fl}, ty: [{tys[0]}, {tys[1]}] }},")
    with open(OUT, "w") as fh:
        fh.write("// @generated by scripts/gen/gfx10/sdwa.py from LLVM 22's disassembler; do not edit.\n"
                 "//! The SDWA forms of GFX10's VOP1, VOP2 and VOPC opcodes.\n"
                 "//! Target masks: " + ", ".join(f"bit {i} {c}" for i, c in enumerate(CPUS)) + ".\n\n")
        fh.write("use crate::gfx11::operand::ValType::*;\n")
        fh.write("use crate::gfx11::vop::Kind;\n")
        fh.write("use crate::gfx11::vop::sdwa::{SdwaRow, *};\n\n")
        fh.write("pub static SDWA: &[SdwaRow] = &[\n" + "\n".join(out) + "\n];\n")
    print(f"wrote {len(out)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
