#!/usr/bin/env python3
"""Probes LLVM 22's disassembler for the GFX12 SMEM opcodes (gfx1201) and
writes crates/isa/src/gfx12/tables/smem.rs: per opcode the mnemonic, the
operand form and widths, whether LLVM prints the cache-policy fields (th,
scope, nv, scale_offset) and whether it accepts a negative offset.

GFX12 SMEM: sbase 5:0, sdata 12:6, op 18:13, nv 20, scope 22:21, th 24:23;
a signed 24-bit offset 55:32, scale_offset 56, soffset 63:57.

    python3 scripts/gen/gfx12/smem.py
"""
import os, re, sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gfx11"))
from oracle import ROOT, decode_many, header, table_path, words  # noqa: E402

CPUS = ["gfx1201"]
OUT = table_path("smem.rs")
NULL = 0x7C << 25


def text(w0, w1):
    t = decode_many("gfx1201", [words(w0, w1, 0)])[0][0]
    return None if t == "<crash>" else t


def main():
    rows = []
    for op in range(64):
        w0 = 0xF4000000 | (op << 13) | (4 << 6) | 2
        t = text(w0, NULL | 0x10)
        if not t:
            continue
        name, _, args = t.partition(" ")
        toks = args.split(", ") if args else []
        data, base, form = 0, 0, "Load"
        if not toks:
            form = "Bare"
        elif toks[-1] == "4":
            # s_prefetch_*: [sbase,] offset, soffset, sdata as an immediate.
            form, data = "Prefetch", 0xFF
            if len(toks) == 4:
                m = re.fullmatch(r"s\[(\d+):(\d+)\]", toks[0])
                base = int(m.group(2)) - int(m.group(1)) + 1
        else:
            if toks[0] == "4":
                data = 0xFF
            else:
                m = re.fullmatch(r"s(\d+)|s\[(\d+):(\d+)\]", toks[0])
                data = 1 if m.group(1) else int(m.group(3)) - int(m.group(2)) + 1
            m = re.fullmatch(r"s\[(\d+):(\d+)\]", toks[1])
            base = int(m.group(2)) - int(m.group(1)) + 1
            assert toks[2] == "0x10", t
        if data == 0xFF:
            # The immediate's field takes values below 32 only.
            imm = lambda v: text(w0 & ~(0x7F << 6) | v << 6, NULL | 0x10)
            assert imm(31) and not imm(32) and not imm(64), name
        cpol = text(w0 | 1 << 23, NULL | 0x10) != t
        scale = text(w0, NULL | 1 << 24) != text(w0, NULL)
        neg = text(w0, NULL | 0x800000) is not None
        rows.append(f"    SmemRow {{ op: {op}, name: \"{name}\", form: Form::{form}, data: {data}, "
                    f"base: {base}, cpol: {str(cpol).lower()}, scale: {str(scale).lower()}, "
                    f"negative: {str(neg).lower()} }},")
    with open(OUT, "w") as f:
        h = header("smem.py", "SMEM opcodes: mnemonic, operand form and widths, printed cache "
                   "policy, offsets accepted.", CPUS)
        f.write(h.replace("scripts/gen/gfx11/smem.py", "scripts/gen/gfx12/smem.py"))
        f.write("use crate::gfx12::smem::{Form, SmemRow};\n\n")
        f.write("pub static SMEM: &[SmemRow] = &[\n" + "\n".join(rows) + "\n];\n")


if __name__ == "__main__":
    main()
