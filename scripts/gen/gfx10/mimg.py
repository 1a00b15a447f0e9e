#!/usr/bin/env python3
"""Learns GFX10's MIMG opcodes (gfx1010, gfx1030) by probing LLVM 22's
disassembler and writes crates/isa/src/gfx10/tables/mimg.rs.

Layout: op bit 7 at 0, nsa 2:1 (the count of address dwords after the
second), dim 5:3, dlc 7, dmask 11:8, unorm 12, glc 13, r128 15, tfe 16,
lwe 17, op 24:18, slc 25; vaddr 39:32, vdata 47:40, srsrc 52:48, ssamp
57:53, a16 62, d16 63; NSA addresses in the bytes of the dwords after.

LLVM decodes a word to the default variant of its opcode for its NSA
dword count and then selects the variant that fits the address count
(from the opcode, dim and a16) and the data count (dmask, d16, tfe),
keeping the default when no such variant exists, the NSA dwords cannot
hold the addresses, or a widened register would pass v255. Per opcode:
the mnemonic and the text between it and vdata in the NSA form; the bits
that must hold a fixed value; whether the data count ignores dmask
(gathers); a sampler operand; the resource width; the address count per
dim and a16, non-NSA and NSA (0: no variant); the data counts with a
variant; and the default variants' data and address counts (non-NSA,
and per NSA dword count, 0: not decoded), learned from words whose
widened data register would pass v255.

    python3 scripts/gen/gfx10/mimg.py
"""
import itertools, os, re, sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gfx11"))
sys.argv.append("gfx10")
from oracle import CPUS, FeatOracle, table_path, words  # noqa: E402
from valu import reg, split  # noqa: E402

OUT = table_path("mimg.rs")
NSA = (0x04030201, 0x08070605, 0x0C0B0A09)
W1 = 10 | (20 << 8) | (2 << 16)
A16, D16 = 1 << 30, 1 << 31


class P:
    def __init__(self, cpu):
        self.o = FeatOracle(cpu)

    def t(self, w0, w1=W1):
        return self.o.decode(words(w0, w1, *NSA, 0))


def op_bits(op):
    return ((op & 0x7F) << 18) | (op >> 7)


def addrs_of(text):
    """The address registers' widths: the vaddr tuple, or the NSA list."""
    m = re.search(r", \[(.*?)\], (s\[|ttmp|null)", text)
    if m:
        return [reg(r)[2] for r in m.group(1).split(", ")]
    return [reg(split(text)[1][1])[2]]


def data_count(text):
    return reg(split(text)[1][0])[2]


def learn(p, op):
    base = None
    for nsa, dm, unorm, r128, a16, d16 in itertools.product(
            [0, 1, 2, 3], [1, 0xF, 0], [0, 1], [0, 1], [0, A16], [0, D16]):
        w0 = 0xF0000000 | op_bits(op) | nsa << 1 | dm << 8 | unorm << 12 | r128 << 15
        if p.t(w0, W1 | a16 | d16)[0]:
            base, bw1 = w0, W1 | a16 | d16
            break
    if base is None:
        return None
    nsa0 = (base >> 1) & 3
    text = p.t(base, bw1)[0]
    name, toks, _, _ = split(text)
    fix = 0
    for b in [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 25]:
        if p.t(base ^ (1 << b), bw1)[0] is None:
            fix |= 1 << b
    for b in range(21, 32):
        if p.t(base, bw1 ^ (1 << b))[0] is None:
            fix |= 1 << (32 + b)
    val = (base | bw1 << 32) & fix
    ssamp = len(toks) == 4
    rsrc = reg(toks[2])[2]
    bvh = "bvh" in name
    b0 = base & ~(0xF << 8)
    gather = False
    if not fix & (0xF << 8):
        t1, tf = p.t(b0 | 1 << 8, bw1 & ~D16)[0], p.t(b0 | 0xF << 8, bw1 & ~D16)[0]
        gather = bool(t1 and tf and data_count(t1) == data_count(tf) == 4)
    # Default variants: data widened past v255 keeps the decoded one.
    over = (bw1 & ~(0xFF << 8)) | (255 << 8)
    bo = base | (0xF << 8) if not fix & (0xF << 8) else base
    dflt = [0, 0, 0, 0]
    sep = " "
    for k in range(4):
        tk = p.t((bo & ~6) | k << 1, over)[0]
        if tk:
            dflt[k] = (data_count(tk), sum(addrs_of(tk)))
            m = re.match(re.escape(name) + r"( +)v", tk)
            if k and m:
                sep = m.group(1)
        else:
            dflt[k] = (0, 0)
    # The data counts LLVM has a variant for (bit n: n dwords).
    vdata_ok = 0
    combos = {}
    b1 = base & ~(0xF << 8 | 7 << 3)
    for dm, tfe, d16 in itertools.product((1, 3, 7, 0xF), (0, 1), (0, D16)):
        if fix & (0xF << 8) and dm != (base >> 8) & 0xF or fix & (1 << 16) and tfe \
                or fix & (D16 << 32) and d16 != bw1 & D16:
            continue
        n = 4 if gather else bin(dm).count("1")
        size = (n + 1) // 2 if d16 else n
        size += tfe
        tv = p.t(b1 | dm << 8 | tfe << 16, (bw1 & ~D16) | d16)[0]
        if tv and data_count(tv) == size:
            vdata_ok |= 1 << size
            combos.setdefault(size, (dm, tfe, d16))
    # Address counts per dim and a16, non-NSA and NSA (with the most NSA
    # dwords that decode), probed with a data count other than the
    # default's where there is one: where LLVM has no variant nothing is
    # converted (0).
    kmax = max((k for k in (1, 2, 3) if dflt[k][0]), default=0)
    sizes = [n for n in combos if n != dflt[0][0]]
    size = sizes[0] if sizes else dflt[0][0]
    dm, tfe, d16 = combos.get(size, ((base >> 8) & 0xF, 0, bw1 & D16))
    addrs = [[0, 0] for _ in range(8)]
    nsa = [[0, 0] for _ in range(8)]
    bvh_nsa = [[], []]
    for dim in range(8):
        for a16 in (0, A16):
            if fix & (7 << 3) and dim != (base >> 3) & 7 or fix & (A16 << 32) and a16 != bw1 & A16:
                continue
            w0 = (b1 & ~6) | dim << 3 | dm << 8 | tfe << 16
            w1 = (bw1 & ~(A16 | D16)) | a16 | d16
            for k in (0, kmax) if kmax else (0,):
                tx = p.t(w0 | k << 1, w1)[0]
                if tx is None or data_count(tx) != size:
                    continue
                if bvh and k:
                    bvh_nsa[a16 >> 30] = addrs_of(tx)
                elif k:
                    nsa[dim][a16 >> 30] = sum(addrs_of(tx))
                else:
                    addrs[dim][a16 >> 30] = addrs_of(tx)[0]
    return dict(name=name, nsa_sep=sep, fix=fix, val=val, ssamp=ssamp, rsrc=rsrc, bvh=bvh,
                gather=gather, addrs=addrs, nsa=nsa, dflt=dflt, vdata_ok=vdata_ok, bvh_nsa=bvh_nsa)


def main():
    per = []
    for cpu in CPUS:
        p = P(cpu)
        per.append({op: learn(p, op) for op in range(256)})
    rows, idx, tabs = [], {}, []
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
    out = ["// @generated by scripts/gen/gfx10/mimg.py from LLVM 22's disassembler; do not edit.",
           "//! MIMG opcodes: mnemonic, fixed bits, operands, address counts per dim and a16,",
           "//! and the default variants' data and address counts.",
           "//! Target masks: " + ", ".join(f"bit {i} {c}" for i, c in enumerate(CPUS)) + ".", "",
           "use crate::gfx10::mimg::MimgOp;", "", f"pub static MIMG_OPS: [MimgOp; {len(rows)}] = ["]
    for d in rows:
        pair = lambda l: "[" + ", ".join(f"[{a}, {b}]" for a, b in l) + "]"
        out.append(f"    MimgOp {{ name: \"{d['name']}\", nsa_sep: \"{d['nsa_sep']}\", fix: 0x{d['fix']:016x}, "
                   f"val: 0x{d['val']:016x}, ssamp: {str(d['ssamp']).lower()}, rsrc: {d['rsrc']}, "
                   f"bvh: {str(d['bvh']).lower()}, gather: {str(d['gather']).lower()}, vdata_ok: 0x{d['vdata_ok']:02x}, "
                   f"addrs: {pair(d['addrs'])}, nsa: {pair(d['nsa'])}, dflt: {pair(d['dflt'])}, "
                   f"bvh_nsa: [&{d['bvh_nsa'][0]}, &{d['bvh_nsa'][1]}] }},")
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
