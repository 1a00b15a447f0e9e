#!/usr/bin/env python3
"""Probes LLVM 22's disassembler for the GFX11 SMEM opcodes (gfx1100,
gfx1151) and writes crates/isa/src/gfx11/tables/smem.rs: per opcode the
mnemonic, the sdata width in dwords (0: no data operand; 0xff: sdata is a
7-bit immediate, `s_atc_probe`), the sbase width (0: no address), and which
of the glc/dlc bits LLVM accepts.

    python3 scripts/gen/gfx11/smem.py
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import CPUS, FeatOracle, ROOT, header, mask, words  # noqa: E402

OUT = os.path.join(ROOT, "crates", "isa", "src", "gfx11", "tables", "smem.rs")
ORACLES = [FeatOracle(c) for c in CPUS]


def texts(w0, w1):
    return [o.decode(words(w0, w1, 0))[0] for o in ORACLES]


def main():
    rows = []
    for op in range(256):
        w0 = 0xF4000000 | (op << 18) | (4 << 6) | 2
        w1 = (0x7C << 25) | 0x10
        ts = texts(w0, w1)
        if not any(ts):
            continue
        t = {x for x in ts if x}.pop()
        name, _, args = t.partition(" ")
        toks = args.split(", ") if args else []
        data, base = 0, 0
        if toks:
            if re.fullmatch(r"\d+|0x[0-9a-f]+", toks[0]):
                data = 0xFF
            else:
                m = re.fullmatch(r"s(\d+)|s\[(\d+):(\d+)\]", toks[0])
                data = 1 if m.group(1) else int(m.group(3)) - int(m.group(2)) + 1
            m = re.fullmatch(r"s\[(\d+):(\d+)\]", toks[1])
            base = int(m.group(2)) - int(m.group(1)) + 1
            assert toks[2] == "0x10", t
        glc = any(texts(w0 | 1 << 14, w1))
        dlc = any(texts(w0 | 1 << 13, w1))
        rows.append(f"    SmemRow {{ op: {op}, name: \"{name}\", data: {data}, base: {base}, "
                    f"glc: {str(glc).lower()}, dlc: {str(dlc).lower()}, targets: {mask(ts)} }},")
    with open(OUT, "w") as f:
        f.write(header("smem.py", "SMEM opcodes: mnemonic, sdata and sbase widths, accepted cache bits."))
        f.write("use crate::gfx11::smem::SmemRow;\n\n")
        f.write("pub static SMEM: &[SmemRow] = &[\n" + "\n".join(rows) + "\n];\n")


if __name__ == "__main__":
    main()
