#!/usr/bin/env python3
"""Learns the GFX11 VINTERP opcodes (gfx1100, gfx1151) by probing LLVM 22's
disassembler, and writes crates/isa/src/gfx11/tables/vinterp.rs: per
opcode the mnemonic, which operands are 16-bit VGPR halves (bit 3: vdst,
bit k: srcK) and whether op_sel is printed.

    python3 scripts/gen/gfx11/vinterp.py
"""
import os, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import CPUS, FeatOracle, header, mask, table_path, words  # noqa: E402
from valu import reg, split  # noqa: E402

OUT = table_path("vinterp.rs")


def main():
    oracles = [FeatOracle(c) for c in CPUS]
    rows = []
    for op in range(128):
        w0 = 0xCD000000 | (op << 16) | 5
        w1 = 0x101 | (0x102 << 9) | (0x103 << 18)
        ts = [o.decode(words(w0, w1, 0))[0] for o in oracles]
        if not any(ts):
            continue
        t = {x for x in ts if x}.pop()
        name, toks, _, _ = split(t)
        t16 = 0
        for i, tok in enumerate(toks):
            if reg(tok)[3]:
                t16 |= 8 if i == 0 else 1 << (i - 1)
        to = oracles[0].decode(words(w0 | 1 << 11, w1, 0))[0]
        opsel = "op_sel" in (to or "")
        rows.append(f"    InterpRow {{ op: {op}, tg: {mask(ts)}, name: \"{name}\", t16: {t16}, opsel: {str(opsel).lower()} }},")
    with open(OUT, "w") as fh:
        fh.write(header("vinterp.py", "VINTERP opcodes: mnemonic, 16-bit operands, op_sel."))
        fh.write("use crate::gfx11::interp::InterpRow;\n\n")
        fh.write("pub static VINTERP: &[InterpRow] = &[\n" + "\n".join(rows) + "\n];\n")


if __name__ == "__main__":
    main()
