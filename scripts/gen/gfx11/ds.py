#!/usr/bin/env python3
"""Generates crates/isa/src/gfx11/tables/ds.rs by probing LLVM 22's
disassembler: for each GFX11 DS opcode (gfx1100, gfx1151), the bits that
must hold a fixed value, the operand fields it prints (vdst, addr, data0,
data1) with their widths, and its offset style. The row type is GFX9's
(`gfx9::ds::DsOp`); the GFX11 layout moves the opcode to bits 25:18 and gds
to bit 17 and has no acc bit.

    python3 scripts/gen/gfx11/ds.py [gfx12]
"""
import os, sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from oracle import CPUS, FeatOracle, header, table_path  # noqa: E402
from memprobe import dec, fixed_bits, operands, parse_reg, rust_str  # noqa: E402

OUT = table_path("ds.rs")
ENC = 0x36 << 26
GDS = 1 << 17
FIELDS = {"addr": (32, 10), "data0": (40, 20), "data1": (48, 30), "vdst": (56, 40)}


def learn(o, op):
    base = None
    for g in (0, GDS):
        w0 = ENC | (op << 18) | g
        if dec(o, w0, 0)[0] is not None:
            base = w0
            break
    if base is None:
        return None
    fix = fixed_bits(o, base, 0, 0xFC000000 | (0xFF << 18))
    val = base & fix
    w1 = 0
    for f, (sh, v) in FIELDS.items():
        if not (fix >> sh) & 0xFF:
            w1 |= v << (sh - 32)
    off = 0 if fix & 0xFFFF else 0x0201
    text, _ = dec(o, base | off, w1)
    name, toks, mods = operands(text)
    ops = []
    for t in toks:
        r = parse_reg(t)
        f = next(k for k, (sh, v) in FIELDS.items() if r and r[1] == v)
        ops.append((f, r[2]))
    if "offset0:" in mods:
        style = "Off2"
    elif "swizzle" in mods:
        style = "Swizzle"
    elif "offset:" in mods:
        style = "Off16"
    else:
        style = "NoOff"
    gds_print = False
    if not fix & GDS:
        t4, _ = dec(o, base ^ GDS, w1)
        gds_print = bool(t4 is not None and t4.endswith(" gds"))
    elif text.endswith(" gds"):
        gds_print = True
    return (name, fix, val, tuple(ops), style, gds_print)


def main():
    rows, index, per_cpu = [], {}, {}
    for cpu in CPUS:
        o = FeatOracle(cpu)
        tab = []
        for op in range(256):
            r = learn(o, op)
            if r is None:
                tab.append(0xFF)
                continue
            if r not in index:
                index[r] = len(rows)
                rows.append(r)
            tab.append(index[r])
        per_cpu[cpu] = tab
    out = [header("ds.py", "DS opcodes: mnemonic, fixed bits, operand fields and offset style.").rstrip(),
           "", "use crate::gfx9::ds::{DsField::*, DsOp, DsOperand, OffStyle::*};", "",
           f"pub static DS_OPS: [DsOp; {len(rows)}] = ["]
    for name, fix, val, ops, style, gp in rows:
        o_s = ", ".join(f"DsOperand {{ field: {f.capitalize()}, width: {w}, cls: \"\", cls_acc: \"\", acc_agpr: false }}" for f, w in ops)
        out.append(f"    DsOp {{ name: {rust_str(name)}, fix: 0x{fix:016x}, val: 0x{val:016x}, ops: &[{o_s}], off: {style}, gds: {str(gp).lower()} }},")
    out.append("];")
    for cpu in CPUS:
        out.append("")
        out.append(f"/// Row of `DS_OPS` for each opcode on {cpu} (0xff: invalid).")
        out.append(f"pub static DS_{cpu.upper()}: [u8; 256] = [")
        t = per_cpu[cpu]
        for i in range(0, 256, 16):
            out.append("    " + ", ".join(str(x) for x in t[i:i + 16]) + ",")
        out.append("];")
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
