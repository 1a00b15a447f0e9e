#!/usr/bin/env python3
"""Learns the GFX11 MIMG opcodes (gfx1100, gfx1151) by probing LLVM 22's
disassembler and writes crates/isa/src/gfx11/tables/mimg.rs.

LLVM decodes a MIMG word to a default variant of the opcode and then
re-selects the variant that fits the address count (from the opcode, the
dimension and a16) and the data count (dmask, d16, tfe), keeping the
default when no such variant exists or a widened register would pass v255.
Per opcode this records: the mnemonic and the text between it and vdata
in the NSA form; the bits that must hold a fixed value; whether the data
count ignores dmask (gather4, msaa_load: always 4); a sampler operand;
the resource width; the address count for each dim and a16 (0: no
variant); and the default variant's data and address counts, learned
from words whose widened data register would pass v255.

Layout: nsa 0, dim 4:2, unorm 7, dmask 11:8, slc 12, dlc 13, glc 14,
r128 15, a16 16, d16 17, op 25:18; vaddr 39:32, vdata 47:40, srsrc 52:48,
tfe 53, lwe 54, ssamp 62:58; NSA addresses in the bytes of a third dword.

    python3 scripts/gen/gfx11/mimg.py
"""
import itertools, os, re, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import CPUS, FeatOracle, ROOT, header, words  # noqa: E402
from valu import reg, split  # noqa: E402

OUT = os.path.join(ROOT, "crates", "isa", "src", "gfx11", "tables", "mimg.rs")
NSA3 = 0x04030201
W1 = 10 | (20 << 8) | (2 << 16)


class P:
    def __init__(self, cpu):
        self.o = FeatOracle(cpu)

    def t(self, w0, w1=W1, w2=NSA3):
        return self.o.decode(words(w0, w1, w2, 0x08070605))


def addr_count(text, nsa):
    """Addresses a text shows: the vaddr tuple's width, or the NSA list's
    (first entries single registers, the last a tuple)."""
    if nsa:
        return sum(nsa_widths(text))
    toks = split(text)[1]
    return reg(toks[1])[2]


def nsa_widths(text):
    """The widths of the registers of an NSA address list."""
    m = re.search(r", \[(.*?)\], (s\[|ttmp|null)", text)
    return [reg(r)[2] for r in m.group(1).split(", ")]


def data_count(text):
    return reg(split(text)[1][0])[2]


def learn(p, op):
    base = None
    for dm, r128, a16, d16, unorm in itertools.product([1, 0xF, 0], [0, 1], [0, 1], [0, 1], [0, 1]):
        w0 = 0xF0000000 | (op << 18) | (dm << 8) | (r128 << 15) | (a16 << 16) | (d16 << 17) | (unorm << 7)
        if p.t(w0)[0]:
            base = w0
            break
    if base is None:
        return None
    text = p.t(base)[0]
    name, toks, mods, _ = split(text)
    # Fixed bits of word 0 (not nsa, op or the encoding) and word 1.
    fix = 0
    for b in list(range(1, 18)):
        if p.t(base ^ (1 << b))[0] is None:
            fix |= 1 << b
    for b in (21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31):
        if p.t(base, W1 ^ (1 << b))[0] is None:
            fix |= 1 << (32 + b)
    val = base & fix & 0xFFFFFFFF
    ssamp = len(toks) == 4
    rsrc = reg(toks[2])[2]
    bvh = "bvh" in name
    # Data count with dmask 0xf vs 1 (no tfe, no d16).
    b0 = base & ~(0xF << 8 | 1 << 17)
    gather = False
    if not fix & (0xF << 8):
        t1, tf = p.t(b0 | 1 << 8)[0], p.t(b0 | 0xF << 8)[0]
        gather = bool(t1 and tf and data_count(t1) == data_count(tf) == 4)
    # Default variants: data widened past v255 keeps the decoded one.
    over = (W1 & ~(0xFF << 8)) | (255 << 8)
    dflt = (0, 0)
    bo = base | (0xF << 8) if not fix & (0xF << 8) else base
    t_d = p.t(bo, over)[0]
    if t_d:
        dflt = (data_count(t_d), addr_count(t_d, False))
    nsa_dflt = (0, 0)
    nsa_sep = " "
    tn = p.t(bo | 1, over)[0]
    if tn:
        nsa_dflt = (data_count(tn), addr_count(tn, True))
        m = re.match(re.escape(name) + r"( +)v", tn)
        if m:
            nsa_sep = m.group(1)
    # The data counts LLVM has a variant for (bit n: n dwords), at dim 0.
    vdata_ok = 0
    combos = {}
    b1 = base & ~(0xF << 8 | 1 << 17 | 7 << 2)
    for dm, tfe, d16 in itertools.product((1, 3, 7, 0xF), (0, 1), (0, 1)):
        if fix & (0xF << 8) and dm != (base >> 8) & 0xF or fix & (1 << 53) and tfe or fix & (1 << 17) and d16:
            continue
        n = 4 if gather else bin(dm).count("1")
        size = (n + 1) // 2 if d16 else n
        size += tfe
        tv = p.t(b1 | dm << 8 | d16 << 17, W1 | tfe << 21)[0]
        if tv and data_count(tv) == size:
            vdata_ok |= 1 << size
            combos.setdefault(size, (dm, tfe, d16))
    # Address layouts per dim and a16, non-NSA and NSA, probed with a data
    # count other than the default's when there is one: where LLVM has no
    # variant for the layout nothing is converted (recorded as 0 / []).
    sizes = [n for n in combos if n != dflt[0]]
    size = sizes[0] if sizes else dflt[0]
    dm, tfe, d16 = combos.get(size, ((base >> 8) & 0xF, 0, 0))
    addrs = [[0, 0] for _ in range(8)]
    nsa = [[[], []] for _ in range(8)]
    for dim in range(8):
        for a16 in (0, 1):
            if fix & (7 << 2) and dim != (base >> 2) & 7 or fix & (1 << 16) and a16 != (base >> 16) & 1:
                continue
            w0 = b1 & ~(1 << 16) | dim << 2 | a16 << 16 | dm << 8 | d16 << 17
            for n in (0, 1):
                tx = p.t(w0 | n, W1 | tfe << 21)[0]
                if tx is None or data_count(tx) != size:
                    continue
                if n:
                    nsa[dim][a16] = nsa_widths(tx)
                else:
                    addrs[dim][a16] = addr_count(tx, False)
    # BVH: the NSA register widths per a16 (node pointer, ray extent,
    # origin, direction, inverse direction).
    bvh_nsa = [[], []]
    if bvh:
        for a16 in (0, 1):
            w0 = base & ~(1 << 16) | a16 << 16 | 1
            tb = p.t(w0)[0]
            if tb:
                bvh_nsa[a16] = nsa_widths(tb)
    return dict(name=name, nsa_sep=nsa_sep, fix=fix, val=val, ssamp=ssamp, rsrc=rsrc, bvh=bvh,
                gather=gather, addrs=addrs, nsa=nsa, dflt=dflt, nsa_dflt=nsa_dflt, bvh_nsa=bvh_nsa,
                vdata_ok=vdata_ok)


def main():
    per = []
    for cpu in CPUS:
        p = P(cpu)
        per.append({op: learn(p, op) for op in range(256)})
    rows, idx = [], {}
    tabs = []
    for ci in range(len(CPUS)):
        tab = []
        for op in range(256):
            d = per[ci][op]
            if d is None:
                tab.append(0xFF)
                continue
            key = repr(sorted(d.items()))
            if key not in idx:
                idx[key] = len(rows)
                rows.append(d)
            tab.append(idx[key])
        tabs.append(tab)
    out = [header("mimg.py", "MIMG opcodes: mnemonic, fixed bits, operands, address counts per\n"
                  "//! dim and a16, and the default variant's data and address counts.").rstrip(), "",
           "use crate::gfx11::mimg::MimgOp;", "", f"pub static MIMG_OPS: [MimgOp; {len(rows)}] = ["]
    for d in rows:
        addrs = ", ".join(f"[{a}, {b}]" for a, b in d["addrs"])
        nsa = ", ".join(f"[&{a}, &{b}]" for a, b in d["nsa"])
        out.append(f"    MimgOp {{ name: \"{d['name']}\", nsa_sep: \"{d['nsa_sep']}\", fix: 0x{d['fix']:016x}, "
                   f"val: 0x{d['val']:08x}, ssamp: {str(d['ssamp']).lower()}, rsrc: {d['rsrc']}, "
                   f"bvh: {str(d['bvh']).lower()}, gather: {str(d['gather']).lower()}, vdata_ok: 0x{d['vdata_ok']:02x}, addrs: [{addrs}], nsa: [{nsa}], "
                   f"dflt: [{d['dflt'][0]}, {d['dflt'][1]}], nsa_dflt: [{d['nsa_dflt'][0]}, {d['nsa_dflt'][1]}], "
                   f"bvh_nsa: [&{d['bvh_nsa'][0]}, &{d['bvh_nsa'][1]}], addr_zero: 0 }},")
    out.append("];")
    for cpu, tab in zip(CPUS, tabs):
        out += ["", f"/// Row of `MIMG_OPS` per opcode on {cpu} (0xff: invalid).",
                f"pub static MIMG_{cpu.upper()}: [u8; 256] = ["]
        for i in range(0, 256, 16):
            out.append("    " + ", ".join(str(x) for x in tab[i:i + 16]) + ",")
        out.append("];")
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
