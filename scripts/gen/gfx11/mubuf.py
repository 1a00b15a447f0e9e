#!/usr/bin/env python3
"""Generates crates/isa/src/gfx11/tables/mubuf.rs by probing LLVM 22's
disassembler for the GFX11 MUBUF and MTBUF opcodes (gfx1100, gfx1151):
per opcode the mnemonic, the bits that must hold a fixed value (with glc
clear and set: atomics return a value only with glc) and the vdata width;
the soffset texts; and the MTBUF format names.

MUBUF: offset 11:0, slc 12, dlc 13, glc 14, op 25:18, 0x38 31:26.
MTBUF: offset 11:0, slc 12, dlc 13, glc 14, op 18:15, format 25:19, 0x3a.
Both: vaddr 39:32, vdata 47:40, srsrc 52:48 (in SGPR quads), tfe 53,
offen 54, idxen 55, soffset 63:56.

With `gfx10`, GFX10's (gfx1010, gfx1030; writes
crates/isa/src/gfx10/tables/mubuf.rs): offset 11:0, offen 12, idxen 13,
glc 14, dlc 15, lds 16 (MUBUF; forms also with lds set), MUBUF op 24:18,
MTBUF op 18:16 with its bit 3 at 53; slc 54, tfe 55.

    python3 scripts/gen/gfx11/mubuf.py [gfx10]
"""
import os, sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from oracle import CPUS, FAMILY, FeatOracle, header, table_path  # noqa: E402
from memprobe import dec, fixed_bits, parse_reg, rust_str  # noqa: E402
from valu import split  # noqa: E402

OUT = table_path("mubuf.rs")
GFX10 = FAMILY == "gfx10"
GLC = 1 << 14
W1 = 10 | (20 << 8) | (2 << 16) | ((0x7D if GFX10 else 0x7C) << 24)


def learn(o, w0, opbits, lds_bit=0, w1=W1):
    res = []
    for form in range(4 if lds_bit else 2):
        glc, lds = GLC if form & 1 else 0, lds_bit if form & 2 else 0
        base = w0 | glc | lds
        t, _ = dec(o, base, w1)
        if t is None:
            res.append(None)
            continue
        fix = fixed_bits(o, base, w1, opbits | glc | lds | (0x3F << 26))
        # soffset (63:56) and srsrc (52:48) validity is per value.
        fix &= ~((0xFF << 56) | (0x1F << 48))
        val = (base | (w1 << 32)) & fix
        name, toks, _, _ = split(t)
        r = parse_reg(toks[0]) if toks else None
        # 0xff: no operands at all (`buffer_gl0_inv`).
        data = 0xFF if not toks else r[2] if r and r[1] == 20 else 0
        res.append((name, fix, val, data))
    res += [None] * (4 - len(res))
    return None if all(r is None for r in res) else tuple(res)


def main():
    rows, index, per = [], {}, {}
    soff, fmts = {}, {}
    for cpu in CPUS:
        o = FeatOracle(cpu)
        mu, mt = [], []
        for op in range(256):
            r = learn(o, 0xE0000000 | (op << 18), 0xFF << 18, 1 << 16 if GFX10 else 0)
            key = None if r is None else ("mubuf", r)
            if key and key not in index:
                index[key] = len(rows)
                rows.append(key)
            mu.append(0xFF if key is None else index[key])
        for op in range(16):
            # Format 1 (the default, not printed).
            if GFX10:
                r = learn(o, 0xE8000000 | ((op & 7) << 16) | (1 << 19), (0x7 << 16) | (0x7F << 19),
                          w1=W1 | (op >> 3) << 21)
            else:
                r = learn(o, 0xE8000000 | (op << 15) | (1 << 19), (0xF << 15) | (0x7F << 19))
            key = None if r is None else ("mtbuf", r)
            if key and key not in index:
                index[key] = len(rows)
                rows.append(key)
            mt.append(0xFF if key is None else index[key])
        per[cpu] = (mu, mt)
        s = []
        # A one-dword load (buffer_load_b32 / buffer_load_dword).
        load = next(op for op in range(256) if mu[op] != 0xFF and rows[mu[op]][1][0]
                    and rows[mu[op]][1][0][0].startswith("buffer_load_") and rows[mu[op]][1][0][3] == 1
                    and "format" not in rows[mu[op]][1][0][0])
        for v in range(256):
            t, n = dec(o, 0xE0000000 | (load << 18), (W1 & 0xFFFFFF) | (v << 24))
            s.append(None if t is None else split(t)[1][-1] + (f" ; {split(t)[3]}" if split(t)[3] else ""))
        soff[cpu] = s
        f = []
        for v in range(128):
            t, _ = dec(o, 0xE8000000 | (v << 19), W1)
            if t is None:
                f.append(None)
            elif "format:" in t:
                f.append(t.split("format:")[1].split(" ")[0])
            else:
                f.append("")
        fmts[cpu] = f
    assert soff[CPUS[0]] == soff[CPUS[1]] and fmts[CPUS[0]] == fmts[CPUS[1]]
    out = [header("mubuf.py", "MUBUF and MTBUF opcodes: mnemonic, fixed bits (glc clear, set),\n"
                  "//! vdata width; soffset texts; MTBUF format names.").rstrip(), "",
           "use crate::gfx11::mubuf::{BufForm, BufOp};", "",
           f"pub static BUF_OPS: [BufOp; {len(rows)}] = ["]
    for _, r in rows:
        forms = ["None" if f is None else
                 f"Some(BufForm {{ fix: 0x{f[1]:016x}, val: 0x{f[2]:016x}, data: {f[3]} }})" for f in r]
        name = next(f[0] for f in r if f)
        out.append(f"    BufOp {{ name: {rust_str(name)}, forms: [{', '.join(forms)}] }},")
    out.append("];")
    for cpu in CPUS:
        mu, mt = per[cpu]
        out += ["", f"/// Row of `BUF_OPS` per MUBUF opcode on {cpu} (0xff: invalid).",
                f"pub static MUBUF_{cpu.upper()}: [u8; 256] = ["]
        for i in range(0, 256, 16):
            out.append("    " + ", ".join(str(x) for x in mu[i:i + 16]) + ",")
        out += ["];", f"/// Row of `BUF_OPS` per MTBUF opcode on {cpu} (0xff: invalid).",
                f"pub static MTBUF_{cpu.upper()}: [u8; 16] = [" + ", ".join(str(x) for x in mt) + "];"]
    out += ["", "/// How LLVM prints each soffset value (None: invalid; 255 reads a literal).",
            "pub static SOFFSET: [Option<&str>; 256] = ["]
    for x in soff[CPUS[0]]:
        out.append(f"    {'None' if x is None else 'Some(' + rust_str(x) + ')'},")
    out += ["];", "", "/// MTBUF format names (\"\": the default, not printed; None: invalid).",
            "pub static FORMATS: [Option<&str>; 128] = ["]
    for x in fmts[CPUS[0]]:
        out.append(f"    {'None' if x is None else 'Some(' + rust_str(x) + ')'},")
    out.append("];")
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
