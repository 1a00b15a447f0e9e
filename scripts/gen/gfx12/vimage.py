#!/usr/bin/env python3
"""Learns the GFX12 VIMAGE and VSAMPLE opcodes (gfx1201) by probing LLVM
22's disassembler and writes crates/isa/src/gfx12/tables/vimage.rs, in the
row type of the GFX11 MIMG table (`gfx11::mimg::MimgOp`, whose NSA fields
hold GFX12's address lists).

As on GFX11, LLVM decodes a word to a default variant of its opcode and
re-selects the variant that fits the address count (opcode, dim, a16) and
the data count (dmask, d16, tfe), keeping the default when no variant fits
or a widened register would pass v255. Per opcode: the mnemonic, the bits
that must hold a fixed value, whether the data count ignores dmask, a
sampler operand, the address register widths per dim and a16, the data
counts LLVM has variants for, and the default variant's counts.

VIMAGE: dim 2:0, r128 4, d16 5, a16 6, nv 7, op 21:14, dmask 25:22,
0b110100 31:26; vdata 39:32, rsrc 49:41, scope 51:50, th 54:52, tfe 55;
vaddr0..vaddr3 in the bytes of the third dword.
VSAMPLE: as VIMAGE but tfe 3, unorm 13, 0b111001 31:26; lwe 40, samp
63:55.

    python3 scripts/gen/gfx12/vimage.py
"""
import itertools, os, re, sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gfx11"))
from oracle import FeatOracle, ROOT, header, table_path, words  # noqa: E402
from valu import reg, split  # noqa: E402

CPUS = ["gfx1201"]
OUT = table_path("vimage.rs")
ADDRS = 10 | 11 << 8 | 12 << 16 | 13 << 24
O = FeatOracle("gfx1201")


class Enc:
    def __init__(self, top, sample, samp=8):
        self.top, self.sample = top, sample
        # rsrc s[4:11]; samp s[8:11]
        self.w1 = 20 | (4 << 9) | ((samp << 23) if sample else 0)
        self.w2 = ADDRS

    def tfe(self, on):
        """(word 0 bits, word 1 bits) of tfe."""
        return ((on << 3), 0) if self.sample else (0, on << 23)

    def t(self, w0, w1=None, w2=None):
        w2 = self.w2 if w2 is None else w2
        return O.decode(words(w0, self.w1 if w1 is None else w1, w2, 0x12345678))[0]


def widths(text):
    """The widths of the registers of the address list."""
    m = re.search(r", \[(.*?)\], ", text)
    if m:
        return [reg(r)[2] for r in m.group(1).split(", ")]
    return [reg(split(text)[1][1])[2]]


def data_count(text):
    return reg(split(text)[1][0])[2]


def learn(e0, op):
    base = None
    # VSAMPLE opcodes without a sampler take a zero samp field; address
    # bytes past an opcode's addresses must be zero.
    encs = [e0, Enc(e0.top, True, 0)] if e0.sample else [e0]
    for e, n in itertools.product(encs, (4, 3, 2, 1)):
        e.w2 = ADDRS & ((1 << (8 * n)) - 1)
        for dm, a16, d16 in itertools.product([1, 0xF, 0], [0, 1], [0, 1]):
            w0 = (e.top << 24) | (op << 14) | (dm << 22) | (a16 << 6) | (d16 << 5) | 1
            if e.t(w0):
                base = w0
                break
        if base is not None:
            break
    if base is None:
        return None
    addr_zero = sum(1 << k for k in range(4) if e.t(base, None, e.w2 | 13 << (8 * k)) is None)
    text = e.t(base)
    name, toks, mods, _ = split(text)
    fix = 0
    for b in list(range(0, 14)) + list(range(22, 26)):
        if e.t(base ^ (1 << b)) is None:
            fix |= 1 << b
    # The operands, the address list counted once: a sampler is the fourth.
    ssamp = e.sample and len(split(re.sub(r"\[v[^\]]*\]", "A", text))[1]) == 4
    w1bits = [8, 18, 19, 20, 21, 22] + ([] if ssamp else list(range(23, 32)))
    for b in w1bits:
        if e.t(base, e.w1 ^ (1 << b)) is None:
            fix |= 1 << (32 + b)
    assert not (fix >> 32) & e.w1, name
    val = base & fix & 0xFFFFFFFF
    gather = False
    dmask_fixed = fix & (0xF << 22)
    b0 = base & ~(0xF << 22 | 1 << 5)
    if not dmask_fixed:
        t1, tf = e.t(b0 | 1 << 22), e.t(b0 | 0xF << 22)
        gather = bool(t1 and tf and data_count(t1) == data_count(tf) == 4)
    over = (e.w1 & ~0xFF) | 255
    bo = base | (0xF << 22) if not dmask_fixed else base
    # The default variant: where the data count the word asks for differs
    # from the default's, a widened register passing v255 makes LLVM keep
    # the default; try d16 and tfe until the printed count shows that.
    dflt = (0, 0)
    for d16, tfe in ((0, 0), (1, 0), (0, 1), (1, 1)):
        if d16 and fix & (1 << 5):
            continue
        t0, t1 = e.tfe(tfe)
        w0 = bo & ~(1 << 5) | d16 << 5 | t0
        t_d = e.t(w0, over | t1)
        if not t_d:
            continue
        n = 4 if gather else bin((w0 >> 22) & 0xF).count("1") or 1
        want = ((n + 1) // 2 if d16 else n) + tfe
        if data_count(t_d) != want or dflt == (0, 0):
            dflt = (data_count(t_d), sum(widths(t_d)))
        if data_count(t_d) != want:
            break
    m = re.match(re.escape(name) + r"( +)v", text)
    sep = m.group(1) if m else " "
    vdata_ok = 0
    combos = {}
    b1 = base & ~(0xF << 22 | 1 << 5 | 7)
    tfe_fixed = fix & ((1 << 3) if e.sample else (1 << 55))
    for dm, tfe, d16 in itertools.product((1, 3, 7, 0xF), (0, 1), (0, 1)):
        if dmask_fixed and dm != (base >> 22) & 0xF or tfe_fixed and tfe or fix & (1 << 5) and d16:
            continue
        n = 4 if gather else bin(dm).count("1")
        size = (n + 1) // 2 if d16 else n
        size += tfe
        t0, t1 = e.tfe(tfe)
        tv = e.t(b1 | (base & 7) | dm << 22 | d16 << 5 | t0, e.w1 | t1)
        if tv and data_count(tv) == size:
            vdata_ok |= 1 << size
            combos.setdefault(size, (dm, tfe, d16))
    sizes = [n for n in combos if n != dflt[0]]
    size = sizes[0] if sizes else dflt[0]
    dm, tfe, d16 = combos.get(size, ((base >> 22) & 0xF, 0, 0))
    nsa = [[[], []] for _ in range(8)]
    for dim in range(8):
        for a16 in (0, 1):
            if fix & 7 and dim != base & 7 or fix & (1 << 6) and a16 != (base >> 6) & 1:
                continue
            t0, t1 = e.tfe(tfe)
            w0 = b1 & ~(1 << 6) | dim | a16 << 6 | dm << 22 | d16 << 5 | t0
            tx = e.t(w0, e.w1 | t1)
            if tx is None or data_count(tx) != size:
                continue
            nsa[dim][a16] = widths(tx)
    return dict(name=name, nsa_sep=sep, fix=fix, val=val, ssamp=ssamp, gather=gather, nsa=nsa,
                dflt=dflt, vdata_ok=vdata_ok, addr_zero=addr_zero)


def main():
    rows, idx, tabs = [], {}, []
    for top, sample in ((0xD0, False), (0xE4, True)):
        e = Enc(top, sample)
        tab = []
        for op in range(256):
            d = learn(e, op)
            if d is None:
                tab.append(0xFF)
                continue
            key = repr(sorted(d.items()))
            if key not in idx:
                idx[key] = len(rows)
                rows.append(d)
            tab.append(idx[key])
        tabs.append(tab)
    out = [header("vimage.py", "VIMAGE and VSAMPLE opcodes: mnemonic, fixed bits, operands, address\n"
                  "//! register widths per dim and a16, and the default variant's data and address counts.",
                  CPUS).replace("gfx11/vimage.py", "gfx12/vimage.py").rstrip(), "",
           "use crate::gfx11::mimg::MimgOp;", "", f"pub static IMAGE_OPS: [MimgOp; {len(rows)}] = ["]
    for d in rows:
        nsa = ", ".join(f"[&{a}, &{b}]" for a, b in d["nsa"])
        out.append(f"    MimgOp {{ name: \"{d['name']}\", nsa_sep: \"{d['nsa_sep']}\", fix: 0x{d['fix']:016x}, "
                   f"val: 0x{d['val']:08x}, ssamp: {str(d['ssamp']).lower()}, rsrc: 8, "
                   f"bvh: false, gather: {str(d['gather']).lower()}, vdata_ok: 0x{d['vdata_ok']:02x}, "
                   f"addrs: [[0, 0]; 8], nsa: [{nsa}], "
                   f"dflt: [0, 0], nsa_dflt: [{d['dflt'][0]}, {d['dflt'][1]}], bvh_nsa: [&[], &[]], "
                   f"addr_zero: 0x{d['addr_zero']:x} }},")
    out.append("];")
    for name, tab in zip(("VIMAGE", "VSAMPLE"), tabs):
        out += ["", f"/// Row of `IMAGE_OPS` per {name} opcode (0xff: invalid).",
                f"pub static {name}: [u8; 256] = ["]
        for i in range(0, 256, 16):
            out.append("    " + ", ".join(str(x) for x in tab[i:i + 16]) + ",")
        out.append("];")
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print(f"wrote {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
