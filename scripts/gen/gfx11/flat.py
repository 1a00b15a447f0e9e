#!/usr/bin/env python3
"""Generates crates/isa/src/gfx11/tables/flat.rs by probing LLVM 22's
disassembler for the GFX11 FLAT, SCRATCH and GLOBAL opcodes (gfx1100,
gfx1151): per segment and opcode the mnemonic, the bits that must hold a
fixed value (learned separately with glc clear and set, since atomics
return a value only with glc), the vdst and data widths and whether the
address is printed; and how LLVM prints each saddr value, per opcode (the
tid-addressed global opcodes take EXEC without the register-class note the
others print), as a list of distinct tables.

Layout: offset 12:0, dlc 13, glc 14, slc 15, seg 17:16, op 24:18; addr
39:32, data 47:40, saddr 54:48 (null: off), sve 55, vdst 63:56.

With `gfx10`, GFX10's (gfx1010, gfx1030; writes
crates/isa/src/gfx10/tables/flat.rs): offset 11:0, dlc 12, lds 13, seg
15:14, glc 16, slc 17, saddr null 0x7D; forms also with lds set.

    python3 scripts/gen/gfx11/flat.py [gfx10]
"""
import os, sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from oracle import CPUS, FAMILY, FeatOracle, header, table_path  # noqa: E402
from memprobe import dec, fixed_bits, operands, parse_reg, rust_str  # noqa: E402
from valu import split  # noqa: E402

OUT = table_path("flat.rs")
ENC = 0x37 << 26
GFX10 = FAMILY == "gfx10"
GLC = 1 << (16 if GFX10 else 14)
LDS = 1 << 13 if GFX10 else 0
SEG = 14 if GFX10 else 16
OFF = 0x7D if GFX10 else 0x7C  # saddr "off" (null)
SADDR = 0x7F << 48
OPBITS = 0xFC000000 | (0x7F << 18) | (3 << SEG)


def learn(o, seg, op):
    w0 = ENC | (seg << SEG) | (op << 18)
    w1 = OFF << 16
    res = []
    for form in range(4 if LDS else 2):
        glc, lds = GLC if form & 1 else 0, LDS if form & 2 else 0
        base0 = w0 | glc | lds
        if dec(o, base0, w1)[0] is None:
            res.append(None)
            continue
        free = OPBITS | glc | lds
        fix = fixed_bits(o, base0, w1, free)
        if seg != 0:
            fix &= ~SADDR
        val = (base0 | (w1 << 32)) & fix
        # Operand fields: distinct values where not fixed.
        p1 = w1
        for sh, v in ((32, 10), (40, 20), (56, 40)):
            if not (fix >> sh) & 0xFF:
                p1 |= v << (sh - 32)
        text, _ = dec(o, base0, p1)
        name, toks, mods = operands(text)
        vdst = data = 0
        addr = False
        for t in toks:
            r = parse_reg(t)
            if r and r[0] == "v" and r[1] == 40:
                vdst = r[2]
            elif r and r[0] == "v" and r[1] == 20:
                data = r[2]
            elif r and r[0] == "v" and r[1] == 10 or t == "off" and not addr and seg == 1:
                addr = True
        res.append((name, fix, val, vdst, data, addr))
    if all(r is None for r in res):
        return None
    return res + [None] * (4 - len(res))


def saddr_names(o, seg, op, lds=0):
    names = []
    w0 = ENC | (seg << SEG) | (op << 18) | lds
    for s in range(128):
        t, _ = dec(o, w0, 10 | (40 << 24) | (s << 16))
        if t is None:
            names.append(None)
            continue
        _, toks, _, warn = split(t.replace(" lds", ""))
        names.append(toks[-1] + (" ; " + warn if warn else ""))
    return names


def main():
    rows, index, per_cpu, tables = [], {}, {}, []
    for cpu in CPUS:
        o = FeatOracle(cpu)
        tab = []
        for seg in range(3):
            for op in range(128):
                r = learn(o, seg, op)
                if r is None:
                    tab.append(0xFF)
                    continue
                # The saddr texts without and (GFX10) with lds.
                sad = [0xFF, 0xFF]
                if seg != 0:
                    for li, lds in enumerate((0, LDS) if LDS else (0,)):
                        if not any(r[f] for f in range(4) if (f >> 1) == li):
                            continue
                        names = saddr_names(o, seg, op, lds)
                        if names not in tables:
                            tables.append(names)
                        sad[li] = tables.index(names)
                key = (*r, tuple(sad))
                if key not in index:
                    index[key] = len(rows)
                    rows.append(key)
                tab.append(index[key])
        per_cpu[cpu] = tab
    out = [header("flat.py", "FLAT/SCRATCH/GLOBAL opcodes: mnemonic, fixed bits (glc clear, set),\n"
                  "//! vdst and data widths, address printed; saddr texts per segment.").rstrip(), "",
           "use crate::gfx11::flat::{FlatForm, FlatOp};", "",
           f"pub static FLAT_OPS: [FlatOp; {len(rows)}] = ["]
    for r in rows:
        forms = []
        for f in r[:4]:
            if f is None:
                forms.append("None")
            else:
                name, fix, val, vdst, data, addr = f
                forms.append(f"Some(FlatForm {{ fix: 0x{fix:016x}, val: 0x{val:016x}, vdst: {vdst}, data: {data}, addr: {str(addr).lower()} }})")
        name = next(f[0] for f in r[:4] if f)
        out.append(f"    FlatOp {{ name: {rust_str(name)}, forms: [{', '.join(forms)}], saddr: [{r[4][0]}, {r[4][1]}] }},")
    out.append("];")
    for cpu in CPUS:
        out.append("")
        out.append(f"/// Row of `FLAT_OPS` for each seg * 128 + opcode on {cpu} (0xff: invalid).")
        out.append(f"pub static FLAT_{cpu.upper()}: [u8; 384] = [")
        t = per_cpu[cpu]
        for i in range(0, 384, 16):
            out.append("    " + ", ".join(str(x) for x in t[i:i + 16]) + ",")
        out.append("];")
    out.append("")
    out.append("/// How LLVM prints each saddr value (None: invalid), per `FlatOp::saddr`.")
    out.append(f"pub static SADDR: [[Option<&str>; 128]; {max(len(tables), 1)}] = [")
    for t in tables:
        out.append("    [")
        for x in t:
            out.append(f"        {'None' if x is None else 'Some(' + rust_str(x) + ')'},")
        out.append("    ],")
    out.append("];")
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
