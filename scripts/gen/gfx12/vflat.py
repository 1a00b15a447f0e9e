#!/usr/bin/env python3
"""Generates crates/isa/src/gfx12/tables/vflat.rs by probing LLVM 22's
disassembler for the GFX12 VFLAT, VSCRATCH and VGLOBAL opcodes (gfx1201):
per segment and opcode the mnemonic, the bits of the first two dwords that
must hold a fixed value (learned separately with th bit 0 clear and set,
since atomics return a value only with TH_ATOMIC_RETURN), the vdst and
data widths, whether the address is printed, how th reads (load, store,
atomic) and whether scale_offset is printed; and how LLVM prints each saddr
value, per opcode, as a list of distinct tables.

Layout (96 bits): saddr 6:0, nv 7, op 21:14, seg 25:24, 0b111011 31:26;
vdst 39:32, scale_offset 48, sve 49, scope 51:50, th 54:52, vsrc 62:55;
vaddr 71:64, a signed 24-bit offset 95:72.

    python3 scripts/gen/gfx12/vflat.py
"""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gfx11"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from oracle import FeatOracle, ROOT, header, table_path, words  # noqa: E402
from memprobe import operands, parse_reg, rust_str  # noqa: E402
from valu import split  # noqa: E402

CPUS = ["gfx1201"]
OUT = table_path("vflat.rs")
ENC = 0x3B << 26
OFF = 0x7C
RET = 1 << 20  # th bit 0, in the second dword
OPBITS = 0xFC000000 | (0xFF << 14) | (3 << 24) | 0x7F  # and saddr
O = FeatOracle("gfx1201")
O64 = FeatOracle("gfx1201", "+wavefrontsize64")
W2 = 10  # vaddr v10, offset 0


def dec(w0, w1, w2=W2, o=O):
    return o.decode(words(w0, w1, w2))[0]


def fixed_bits(w0, w1):
    """Bits of (w0, w1) whose flip makes the word invalid (w1 high)."""
    m = 0
    for b in range(64):
        if b < 32 and (OPBITS >> b) & 1 or b == 52:
            continue
        a0 = w0 ^ (1 << b) if b < 32 else w0
        a1 = w1 ^ (1 << (b - 32)) if b >= 32 else w1
        if dec(a0, a1) is None:
            m |= 1 << b
    return m


def th_kind(w0, w1):
    t = dec(w0, w1 | 2 << 20) or ""
    return "Atomic" if "TH_ATOMIC" in t else "Store" if "TH_STORE" in t else "Load"


def learn(seg, op):
    w0 = ENC | (seg << 24) | (op << 14) | OFF
    res = []
    for ret in (0, RET):
        w1 = ret
        if dec(w0, w1) is None:
            res.append(None)
            continue
        fix = fixed_bits(w0, w1)
        val = (w0 | (w1 << 32)) & fix
        p1 = w1
        if not fix >> 32 & 0xFF:
            p1 |= 40
        if not fix >> 55 & 0xFF:
            p1 |= 20 << 23
        text = dec(w0, p1)
        name, toks, _ = operands(text)
        vdst = data = vdst64 = 0
        addr = False
        for t in operands(dec(w0, p1, o=O64))[1]:
            r = parse_reg(t)
            if r and r[0] == "v" and r[1] == 40:
                vdst64 = r[2]
        for t in toks:
            r = parse_reg(t)
            if r and r[0] == "v" and r[1] == 40:
                vdst = r[2]
            elif r and r[0] == "v" and r[1] == 20:
                data = r[2]
            elif r and r[0] == "v" and r[1] == 10 or t == "off" and not addr and seg == 1:
                addr = True
        scale = dec(w0, w1 | 1 << 16) != dec(w0, w1)
        res.append((name, fix, val, (vdst, vdst64), data, addr, th_kind(w0, w1), scale))
    if res == [None, None]:
        return None
    return res


def saddr_names(seg, op):
    """How each saddr value prints ("": not printed; VFLAT accepts only
    null), None where LLVM rejects it."""
    names = []
    w0 = ENC | (seg << 24) | (op << 14)
    for s in range(128):
        t = dec(w0 | s, 40 | 20 << 23)
        if t is None:
            names.append(None)
            continue
        if seg == 0:
            names.append("")
            continue
        _, toks, _, warn = split(t)
        # "": no operands at all (global_inv, global_wb, global_wbinv).
        names.append((toks[-1] if toks else "") + (" ; " + warn if warn else ""))
    return names


def main():
    rows, index, tab, tables = [], {}, [], []
    for seg in range(4):
        for op in range(256):
            r = learn(seg, op)
            if r is None:
                tab.append(0xFF)
                continue
            names = saddr_names(seg, op)
            if names not in tables:
                tables.append(names)
            sad = tables.index(names)
            key = (*r, sad)
            if key not in index:
                index[key] = len(rows)
                rows.append(key)
            tab.append(index[key])
    assert len(rows) < 255
    out = [header("vflat.py", "VFLAT/VSCRATCH/VGLOBAL opcodes: mnemonic, fixed bits (th bit 0\n"
                  "//! clear, set), vdst and data widths, address printed, th kind, scale_offset;\n"
                  "//! saddr texts per segment.", CPUS).replace("gfx11/vflat.py", "gfx12/vflat.py").rstrip(),
           "", "use crate::gfx12::cpol::ThKind;", "use crate::gfx12::vflat::{FlatForm, FlatOp};", "",
           f"pub static FLAT_OPS: [FlatOp; {len(rows)}] = ["]
    for r in rows:
        forms = []
        for f in r[:2]:
            if f is None:
                forms.append("None")
            else:
                name, fix, val, vdst, data, addr, th, scale = f
                forms.append(f"Some(FlatForm {{ fix: 0x{fix:016x}, val: 0x{val:016x}, vdst: [{vdst[0]}, {vdst[1]}], data: {data}, "
                             f"addr: {str(addr).lower()}, th: ThKind::{th}, scale: {str(scale).lower()} }})")
        name = next(f[0] for f in r[:2] if f)
        out.append(f"    FlatOp {{ name: {rust_str(name)}, forms: [{forms[0]}, {forms[1]}], saddr: {r[2]} }},")
    out.append("];")
    out.append("")
    out.append("/// Row of `FLAT_OPS` for each seg * 256 + opcode (0xff: invalid).")
    out.append("pub static FLAT: [u8; 1024] = [")
    for i in range(0, 1024, 16):
        out.append("    " + ", ".join(str(x) for x in tab[i:i + 16]) + ",")
    out.append("];")
    out.append("")
    out.append("/// How LLVM prints each saddr value (None: invalid), per `FlatOp::saddr`.")
    out.append(f"pub static SADDR: [[Option<&str>; 128]; {len(tables)}] = [")
    for t in tables:
        out.append("    [")
        for x in t:
            out.append(f"        {'None' if x is None else 'Some(' + rust_str(x) + ')'},")
        out.append("    ],")
    out.append("];")
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print(f"wrote {len(rows)} rows, {len(tables)} saddr tables", file=sys.stderr)


if __name__ == "__main__":
    main()
