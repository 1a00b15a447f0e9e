#!/usr/bin/env python3
"""Generates crates/isa/src/gfx12/tables/vbuffer.rs by probing LLVM 22's
disassembler for the GFX12 VBUFFER opcodes (gfx1201: buffer_* and, at
opcodes 0x80-0x8f, tbuffer_*): per opcode the mnemonic, the bits of the
first two dwords that must hold a fixed value (with th bit 0 clear and
set: atomics return a value only with TH_ATOMIC_RETURN), the vdata width
(0xff: no operands), how th reads and whether a negative offset decodes;
the soffset texts; and the format names.

Layout (96 bits): soffset 6:0, nv 7, op 21:14, tfe 22, 0b110001 31:26;
vdata 39:32, rsrc 47:41 (an SGPR quad), scope 51:50, th 54:52, format
61:55, offen 62, idxen 63; vaddr 71:64, a 24-bit offset 95:72.

    python3 scripts/gen/gfx12/vbuffer.py
"""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gfx11"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from oracle import FeatOracle, ROOT, header, table_path, words  # noqa: E402
from memprobe import parse_reg, rust_str  # noqa: E402
from valu import split  # noqa: E402

CPUS = ["gfx1201"]
OUT = table_path("vbuffer.rs")
ENC = 0x31 << 26
NULL = 0x7C
RET = 1 << 20  # th bit 0, in the second dword
FMT1 = 1 << 23  # format 1: the default, not printed
W1 = 20 | (4 << 9) | FMT1
O = FeatOracle("gfx1201")


def dec(w0, w1, w2=10):
    return O.decode(words(w0, w1, w2))[0]


def fixed_bits(w0, w1):
    """Bits of (w0, w1) whose flip makes the word invalid (w1 high); the
    opcode, soffset, rsrc, format and th bit 0 are not probed."""
    free = 0xFC000000 | (0xFF << 14) | 0x7F | (0x7F << 41) | (0x7F << 55) | (1 << 52)
    m = 0
    for b in range(64):
        if (free >> b) & 1:
            continue
        a0 = w0 ^ (1 << b) if b < 32 else w0
        a1 = w1 ^ (1 << (b - 32)) if b >= 32 else w1
        if dec(a0, a1) is None:
            m |= 1 << b
    return m


def th_kind(w0, w1):
    t = dec(w0, w1 | 2 << 20) or ""
    return "Atomic" if "TH_ATOMIC" in t else "Store" if "TH_STORE" in t else "Load"


def learn(op):
    w0 = ENC | (op << 14) | NULL
    res = []
    for ret in (0, RET):
        w1 = W1 | ret
        t = dec(w0, w1)
        if t is None:
            res.append(None)
            continue
        fix = fixed_bits(w0, w1)
        val = (w0 | (w1 << 32)) & fix
        name, toks, _, _ = split(t)
        r = parse_reg(toks[0]) if toks else None
        # 0xff: no operands at all.
        data = 0xFF if not toks else r[2] if r and r[1] == 20 else 0
        neg = dec(w0, w1, 10 | 0x800000 << 8) is not None
        res.append((name, fix, val, data, th_kind(w0, w1), neg))
    return None if res == [None, None] else tuple(res)


def main():
    rows, index, tab = [], {}, []
    for op in range(256):
        r = learn(op)
        if r is None:
            tab.append(0xFF)
            continue
        if r not in index:
            index[r] = len(rows)
            rows.append(r)
        tab.append(index[r])
    soff = []
    for v in range(128):
        t = dec(ENC | (0x14 << 14) | v, W1)
        soff.append(None if t is None else split(t)[1][-1] + (f" ; {split(t)[3]}" if split(t)[3] else ""))
    fmts = []
    for v in range(128):
        t = dec(ENC | (0x80 << 14) | NULL, (W1 & ~(0x7F << 23)) | v << 23)
        if t is None:
            fmts.append(None)
        elif "format:" in t:
            fmts.append(t.split("format:")[1].split(" ")[0])
        else:
            fmts.append("")
    out = [header("vbuffer.py", "VBUFFER opcodes: mnemonic, fixed bits (th bit 0 clear, set), vdata\n"
                  "//! width, th kind, negative offsets; soffset texts; format names.", CPUS)
           .replace("gfx11/vbuffer.py", "gfx12/vbuffer.py").rstrip(), "",
           "use crate::gfx12::cpol::ThKind;", "use crate::gfx12::vbuffer::{BufForm, BufOp};", "",
           f"pub static BUF_OPS: [BufOp; {len(rows)}] = ["]
    for r in rows:
        forms = ["None" if f is None else
                 f"Some(BufForm {{ fix: 0x{f[1]:016x}, val: 0x{f[2]:016x}, data: {f[3]}, th: ThKind::{f[4]}, "
                 f"negative: {str(f[5]).lower()} }})" for f in r]
        name = next(f[0] for f in r if f)
        out.append(f"    BufOp {{ name: {rust_str(name)}, forms: [{forms[0]}, {forms[1]}] }},")
    out += ["];", "", "/// Row of `BUF_OPS` per opcode (0xff: invalid).", "pub static BUF: [u8; 256] = ["]
    for i in range(0, 256, 16):
        out.append("    " + ", ".join(str(x) for x in tab[i:i + 16]) + ",")
    out += ["];", "", "/// How LLVM prints each soffset value (None: invalid).",
            "pub static SOFFSET: [Option<&str>; 128] = ["]
    for x in soff:
        out.append(f"    {'None' if x is None else 'Some(' + rust_str(x) + ')'},")
    out += ["];", "", "/// tbuffer format names (\"\": the default, not printed; None: invalid).",
            "pub static FORMATS: [Option<&str>; 128] = ["]
    for x in fmts:
        out.append(f"    {'None' if x is None else 'Some(' + rust_str(x) + ')'},")
    out.append("];")
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print(f"wrote {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
