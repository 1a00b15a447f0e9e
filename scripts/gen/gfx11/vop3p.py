#!/usr/bin/env python3
"""Learns the GFX11 VOP3P opcode table (packed math, dot products, fma_mix,
WMMA) on gfx1100 and gfx1151 by probing LLVM 22's disassembler, and writes
crates/isa/src/gfx11/tables/vop3p.rs.

Per opcode: the mnemonic; the destination and source widths in wave32 and
wave64 (WMMA's matrices halve in wave64); each source's value type and the
register classes LLVM annotates; whether the opcode is packed (op_sel_hi
defaults to 1 and is printed when it differs) or a mix opcode (neg_lo and
neg_hi print as `-` and `|...|`); which modifier bits LLVM rejects, ignores
or prints; and which DPP forms exist.

    python3 scripts/gen/gfx11/vop3p.py
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import CPUS, decode_many, header, table_path, words  # noqa: E402
from valu import DPP8_SELS, LITS, dpp8_src, reg, split, strip_note, value_type  # noqa: E402

OUT = table_path("vop3p.rs")
SRC = (0x101, 0x102, 0x103)
HI_ALL = (1 << 14, 3 << 27)  # op_sel_hi of src2 (word 0) and src0/src1 (word 1)
W0BITS = list(range(8, 16))  # neg_hi[2:0], op_sel[2:0], op_sel_hi[2], clamp
W1BITS = list(range(27, 32))  # op_sel_hi[1:0], neg_lo[2:0]


def word(op, vdst=5, w0bits=0, srcs=SRC, w1bits=0, lit=0x12345678, w3=0x9ABCDEF0):
    w0 = 0xCC000000 | (op << 16) | vdst | w0bits
    w1 = srcs[0] | (srcs[1] << 9) | (srcs[2] << 18) | w1bits
    return words(w0, w1, lit, w3)


def with_src(srcs, k, v):
    s = list(srcs)
    s[k] = v
    return tuple(s)


def probes(op, vdst, hi):
    """`hi`: the op_sel_hi bits (word 0, word 1) of the base word."""
    w = lambda **kw: word(op, **{"vdst": vdst, **kw,
                                 "w0bits": kw.get("w0bits", 0) ^ hi[0],
                                 "w1bits": kw.get("w1bits", 0) ^ hi[1]})
    p = {"base": w(), "dst7": w(vdst=7)}
    for k in range(3):
        p[f"s{k}"] = w(srcs=with_src(SRC, k, 0x109 + k))
        p[f"s{k}sgpr"] = w(srcs=with_src(SRC, k, 2))
        p[f"s{k}const"] = w(srcs=with_src(SRC, k, 0x80))
        p[f"s{k}i240"] = w(srcs=with_src(SRC, k, 240))
        p[f"s{k}i248"] = w(srcs=with_src(SRC, k, 248))
        p[f"s{k}zero"] = w(srcs=with_src(SRC, k, 0x1FF))
        for j, v in enumerate(LITS):
            p[f"s{k}lit{j}"] = w(srcs=with_src(SRC, k, 255), lit=v)
    for b in W0BITS:
        p[f"w0b{b}"] = w(w0bits=1 << b)
    for b in W1BITS:
        p[f"w1b{b}"] = w(w1bits=1 << b)
    p["dpp"] = w(srcs=with_src(SRC, 0, 0xFA), lit=0xFF00E401)
    for b in (18, 19, 20, 21, 22, 23):
        p[f"dpp{b}"] = w(srcs=with_src(SRC, 0, 0xFA), lit=0xFF00E401 | 1 << b)
    p["dpp8"] = w(srcs=with_src(SRC, 0, 0xE9), lit=0xFAC68801)
    for j, sel in enumerate(DPP8_SELS):
        p[f"dpp8sel{j}"] = w(srcs=with_src(SRC, 0, 0xE9), lit=1 | sel << 8)
    for k in (1, 2):
        p[f"dpps{k}sgpr"] = w(srcs=with_src(with_src(SRC, 0, 0xFA), k, 2), lit=0xFF00E401)
        # Literals after the DPP dword: how the DPP form prints them.
        for j, v in enumerate(LITS):
            p[f"dpps{k}lit{j}"] = w(srcs=with_src(with_src(SRC, 0, 0xFA), k, 255), lit=0xFF00E401, w3=v)
    return p


def text(r, k):
    x = r.get(k, (None, 0))[0]
    return None if x in (None, "<crash>") else x


def analyse(op, r, r64):
    base = text(r, "base")
    name, toks, mods, _ = split(base)
    assert not mods, (op, base)
    toks_of = lambda k: split(text(r, k))[1] if text(r, k) else None
    role = {}
    for key, rl in [("dst7", "dst")] + [(f"s{k}", f"src{k}") for k in range(3)]:
        t2 = toks_of(key)
        if t2 and len(t2) == len(toks):
            diff = [i for i, (a, b) in enumerate(zip(toks, t2)) if a != b]
            if len(diff) == 1:
                role[diff[0]] = rl
    assert sorted(role) == list(range(len(toks))), (op, base, role)
    order = [role[i] for i in range(len(toks))]
    t64 = split(text(r64, "base"))[1]
    dst = None
    if "dst" in order:
        i = order.index("dst")
        dst = (reg(toks[i])[2], reg(t64[i])[2])
    srcs = []
    nsrc = sum(1 for x in order if x.startswith("src"))
    for k in range(nsrc):
        i = order.index(f"src{k}")
        n32 = reg(strip_note(toks[i])[0])[2]
        n64 = reg(strip_note(t64[i])[0])[2]
        inl, lits = {}, {}
        for fld in (240, 248):
            tx = text(r, f"s{k}i{fld}")
            if tx:
                inl[fld] = strip_note(split(tx)[1][i])[0].strip("-|")
        for j, v in enumerate(LITS):
            tx = text(r, f"s{k}lit{j}")
            if tx:
                lits[v] = strip_note(split(tx)[1][i])[0]
        tys = value_type(inl, lits) if (inl or lits) else ["I32"]
        ty = tys[0] if tys else "?"
        if not tys:
            print(f"op {op:#x} src{k}: no type fits {inl} {lits}", file=sys.stderr)
        bad = {}
        for kind, key in (("s", f"s{k}sgpr"), ("v", "base"), ("c", f"s{k}const")):
            tx = text(r, key)
            bad[kind] = strip_note(split(tx)[1][i])[1] if tx else "REJECT"
        # The type constants print as in the DPP16 form.
        dlits = {}
        for j, v in enumerate(LITS):
            tx = text(r, f"dpps{k}lit{j}") if k else None
            if tx and i < len(split(tx)[1]):
                dlits[v] = strip_note(split(tx)[1][i])[0].strip("-|")
        dtys = value_type({}, dlits) if dlits else [ty]
        dty = ty if ty in dtys or not dtys else dtys[0]
        srcs.append((n32, n64, ty, bad, dty))
    zero_src = 0
    for k in range(nsrc, 3):
        if text(r, f"s{k}zero") is None:
            zero_src |= 1 << k
    classes = {}
    for b in W0BITS + W1BITS:
        key = f"w0b{b}" if b < 16 else f"w1b{b}"
        tx = text(r, key)
        classes[b] = "Z" if tx is None else "I" if tx == base else "M"
    # GFX12's SWMMAC print op_sel bits as index_key: per op_sel bit k, bits
    # 2k+1:2k hold the value it gives alone.
    index_key = 0
    for k, b in enumerate((11, 12, 13)):
        m = re.search(r"index_key:(\d)", text(r, f"w0b{b}") or "")
        if m:
            index_key |= int(m.group(1)) << (2 * k)
    mix = False
    tn = text(r, "w1b29")
    if tn and "neg_lo" not in tn:
        mix = True
    dpp = 0
    if text(r, "dpp"):
        dpp |= 1
        for j, b in enumerate((18, 19, 20, 21, 22, 23)):
            if text(r, f"dpp{b}") is None:
                dpp |= 4 << j
    sel_src = False
    if text(r, "dpp8"):
        dpp |= 2
        sel_src = dpp8_src([text(r, f"dpp8sel{j}") for j in range(len(DPP8_SELS))])
    # Sources the DPP form takes as VGPR_32 (an SGPR is noted as invalid).
    dpp_vgpr = 0
    for k in (1, 2):
        tx = text(r, f"dpps{k}sgpr")
        if tx and "VGPR_32" in tx:
            dpp_vgpr |= 1 << k
    return dict(dpp_vgpr=dpp_vgpr, name=name, dst=dst, srcs=srcs, zero_src=zero_src, classes=classes, mix=mix, dpp=dpp,
                dpp8_src=sel_src, index_key=index_key)


def learn(cpu):
    datas, keys = [], []
    for op in range(128):
        for hi in ((1 << 14, 3 << 27), (0, 0)):
            keys.append((op, hi))
            datas.append(word(op, w0bits=hi[0], w1bits=hi[1]))
    found = dict(zip(keys, decode_many(cpu, datas)))
    bases = {}
    for op in range(128):
        a = found[(op, (1 << 14, 3 << 27))][0]
        b = found[(op, (0, 0))][0]
        if a and a != "<crash>" and "op_sel_hi" not in a:
            bases[op] = ((1 << 14, 3 << 27), True)
        elif b and b != "<crash>":
            bases[op] = ((0, 0), False)
    datas, keys = [], []
    for op, (hi, packed) in bases.items():
        for k, d in probes(op, 5, hi).items():
            keys.append((op, k))
            datas.append(d)
    r32 = dict(zip(keys, decode_many(cpu, datas)))
    r64 = dict(zip(keys, decode_many(cpu, datas, "+wavefrontsize64")))
    rows = {}
    for op, (hi, packed) in bases.items():
        r = {k: v for (o, k), v in r32.items() if o == op}
        q = {k: v for (o, k), v in r64.items() if o == op}
        d = analyse(op, r, q)
        # Constants may print differently when a source is narrower in
        # wave64: the value type per wave size.
        d64 = analyse(op, q, q)
        d["srcs"] = [(a[0], a[1], a[2], a[3], b[2], a[4]) for a, b in zip(d["srcs"], d64["srcs"])]
        # Modifier bits LLVM rejects per wave size (SWMMAC's index_key is
        # wider in wave64).
        d["classes64"] = d64["classes"]
        d["index_key"] |= d64["index_key"]
        d["packed"] = packed
        rows[op] = d
    return rows


def rust_ty(ty):
    return {"V2F16S": "V2F16Splat", "P32": "I32", "F16W": "F16Wide"}.get(ty, ty)


def rust_src(s):
    n32, n64, ty, bad, ty64, dty = s
    f = lambda x: "" if x in ("", "REJECT") else x
    flags = []
    if ty == "P32":
        flags.append("PLAIN")
    dty = rust_ty(dty)
    ty = f"[{rust_ty(ty)}, {rust_ty(ty64)}]"
    if bad["c"] == "imm":
        flags.append("NO_CONST")
    if bad["c"] == "REJECT":
        flags.append("REJECT_CONST")
    return (f"PSrc {{ w: [{n32}, {n64}], ty: {ty}, dpp_ty: {dty}, bad_s: \"{f(bad['s'])}\", "
            f"bad_v: \"{f(bad['v'])}\", flags: {'|'.join(flags) or '0'} }}")


def main():
    per = {cpu: learn(cpu) for cpu in CPUS}
    rows = []
    for op in range(128):
        groups = []
        for ci, cpu in enumerate(CPUS):
            d = per[cpu].get(op)
            if d is None:
                continue
            for g in groups:
                if g[1] == d:
                    g[0] |= 1 << ci
                    break
            else:
                groups.append([1 << ci, d])
        for mask, d in groups:
            zero = mods = zero64 = 0
            for bit, c in d["classes"].items():
                i = bit - 8 if bit < 16 else bit - 27 + 8
                if c == "Z":
                    zero |= 1 << i
                elif c == "M":
                    mods |= 1 << i
                c64 = d["classes64"][bit]
                if c64 == "Z":
                    zero64 |= 1 << i
                elif c64 == "M":
                    mods |= 1 << i
            srcs = ", ".join(rust_src(s) for s in d["srcs"])
            dst = "[0, 0]" if d["dst"] is None else f"[{d['dst'][0]}, {d['dst'][1]}]"
            rows.append(
                f"    PRow {{ op: {op}, tg: {mask}, name: \"{d['name']}\", dst: {dst}, srcs: &[{srcs}], "
                f"packed: {str(d['packed']).lower()}, mix: {str(d['mix']).lower()}, zero_src: {d['zero_src']}, "
                f"dpp: 0x{d['dpp']:02x}, dpp_vgpr: {d['dpp_vgpr']}, dpp8_src: {str(d['dpp8_src']).lower()}, "
                f"zero: [0x{zero:04x}, 0x{zero64:04x}], mods: 0x{mods:04x}, index_key: 0x{d['index_key']:02x} }},")
    body = "\n".join(rows)
    used = [c for c in ("NO_CONST", "PLAIN", "REJECT_CONST") if c in body]
    with open(OUT, "w") as fh:
        fh.write(header("vop3p.py", "VOP3P opcodes: mnemonic, operands and modifier bits.\n"
                        "//! Modifier bits: i < 8 is word 0 bit 8+i (neg_hi[2:0], op_sel[2:0],\n"
                        "//! op_sel_hi[2], clamp), 8+j is word 1 bit 27+j (op_sel_hi[1:0], neg_lo[2:0])."))
        fh.write(f"use crate::gfx11::vop3p::{{{', '.join(['PRow', 'PSrc'])}}};\n")
        if used:
            fh.write(f"use crate::gfx11::vop3::{{{', '.join(used)}}};\n")
        fh.write("use crate::gfx11::operand::ValType::*;\n\n")
        fh.write("pub static VOP3P: &[PRow] = &[\n" + body + "\n];\n")
    print(f"wrote {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
