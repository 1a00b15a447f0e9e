#!/usr/bin/env python3
"""Probes LLVM 22's disassembler for the GFX11 SMEM opcodes (gfx1100,
gfx1151) and writes crates/isa/src/gfx11/tables/smem.rs: per opcode the
mnemonic, the sdata width in dwords (0: no data operand; 0xff: sdata is a
7-bit immediate, `s_atc_probe`), the sbase width (0: no address), and which
of the glc/dlc bits LLVM accepts. With `gfx10`, GFX10's (gfx1010, gfx1030;
writes crates/isa/src/gfx10/tables/smem.rs): the same fields, glc at bit 16
and dlc at 14, `null` numbered 125.

    python3 scripts/gen/gfx11/smem.py [gfx10]
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import CPUS, FAMILY, FeatOracle, header, mask, table_path, words  # noqa: E402

OUT = table_path("smem.rs")
GLC, DLC, NULL = (16, 14, 0x7D) if FAMILY == "gfx10" else (14, 13, 0x7C)
ORACLES = [FeatOracle(c) for c in CPUS]


def texts(w0, w1):
    return [o.decode(words(w0, w1, 0))[0] for o in ORACLES]


def main():
    rows = []
    for op in range(256):
        w0 = 0xF4000000 | (op << 18) | (4 << 6) | 2
        w1 = (NULL << 25) | 0x10
        ts = texts(w0, w1)
        if not any(ts):
            continue
        t = {x for x in ts if x}.pop()
        name, _, args = t.partition(" ")
        toks = args.split(", ") if args else []
        data, base = 0, 0
        width = lambda tok: (lambda m: 1 if m.group(1) else int(m.group(3)) - int(m.group(2)) + 1)(
            re.fullmatch(r"s(\d+)|s\[(\d+):(\d+)\]", tok))
        # data, base, offset; GFX10 also has base, offset (s_dcache_discard)
        # and data alone (s_memtime, s_get_waveid_in_workgroup).
        if len(toks) == 3:
            data = 0xFF if re.fullmatch(r"\d+|0x[0-9a-f]+", toks[0]) else width(toks[0])
            base = width(toks[1])
            assert toks[2] == "0x10", t
        elif len(toks) == 2:
            base = width(toks[0])
            assert toks[1] == "0x10", t
        elif toks:
            data = width(toks[0])
        tg, td = texts(w0 | 1 << GLC, w1), texts(w0 | 1 << DLC, w1)
        glc, dlc = any(tg), any(td)
        # Cache bits LLVM accepts without printing (GFX10's s_atc_probe).
        hidden = any(a and a == b for a, b in zip(tg + td, ts + ts))
        # A returning atomic (glc): LLVM reads the data tuple twice, and
        # warns twice of a misaligned one.
        rtn = False
        if glc and data not in (0, 1, 0xFF):
            tw = texts((w0 & ~(0x7F << 6)) | 5 << 6 | 1 << GLC, w1)
            rtn = any(x and x.count("Warning:") == 2 for x in tw)
        rows.append(f"    SmemRow {{ op: {op}, name: \"{name}\", data: {data}, base: {base}, "
                    f"glc: {str(glc).lower()}, dlc: {str(dlc).lower()}, hidden: {str(hidden).lower()}, "
                    f"rtn: {str(rtn).lower()}, targets: {mask(ts)} }},")
    with open(OUT, "w") as f:
        f.write(header("smem.py", "SMEM opcodes: mnemonic, sdata and sbase widths, accepted cache bits."))
        f.write("use crate::gfx11::smem::SmemRow;\n\n")
        f.write("pub static SMEM: &[SmemRow] = &[\n" + "\n".join(rows) + "\n];\n")


if __name__ == "__main__":
    main()
