#!/usr/bin/env python3
"""Learns the GFX9 VOP3 opcode table (opcodes 0x000..0x37f) by probing LLVM 22's
disassembler, and writes crates/isa/src/gfx9/tables/vop3.rs.

For every opcode and target it decodes a few probe words and records:
the mnemonic; the destination kind (VGPR, SGPR, none) and width; whether a
VOP3b scalar carry destination is present; for each source its width, which
register files it accepts (VGPR or SGPR or constant, VGPR only, SGPR only)
and how inline float constants print; and, for each modifier bit, whether it
must be zero (LLVM rejects the word), is ignored, or is printed.

    python3 scripts/gen/vop3.py   # needs libLLVM 22 (see scripts/dev/llvm_oracle.py)
"""
import os, re, struct, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "dev"))
import multiprocessing
from llvm_oracle import Oracle

def _worker(cpu, items, conn):
    o = Oracle(cpu)
    for i, data in items:
        conn.send((i, o.decode(data)))
    conn.send(None)


def safe_decode_many(cpu, datas):
    """Like llvm_oracle.safe_decode_many (inputs that crash LLVM become
    ("<crash>", 0)), but notices a crashed child at once through a pipe."""
    out = [None] * len(datas)
    todo = list(enumerate(datas))
    ctx = multiprocessing.get_context("fork")
    while todo:
        rx, tx = ctx.Pipe(False)
        p = ctx.Process(target=_worker, args=(cpu, todo, tx))
        p.start()
        tx.close()
        done = 0
        while True:
            try:
                r = rx.recv()
            except EOFError:
                break
            if r is None:
                break
            out[r[0]] = r[1]
            done += 1
        p.join()
        rest = todo[done:]
        if rest and p.exitcode != 0:
            out[rest[0][0]] = ("<crash>", 0)
            rest = rest[1:]
        todo = rest
    return out


ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "crates", "isa", "src", "gfx9", "tables", "vop3.rs")
CPUS = ["gfx90a", "gfx942", "gfx950", "gfx908"]
SRC = (266, 276, 286)  # v10, v20, v30


def word(op, vdst=4, srcs=SRC, w0bits=0, w1bits=0):
    w0 = 0xD0000000 | (op << 16) | vdst | w0bits
    w1 = srcs[0] | (srcs[1] << 9) | (srcs[2] << 18) | w1bits
    return struct.pack("<III", w0, w1, 0x12345678)


REG = re.compile(r"^(-?\|?)(v|s|a|ttmp)(\d+|\[(\d+):(\d+)\])")


def operands(text):
    """Splits LLVM text into mnemonic, operand tokens and trailing modifiers."""
    text = text.split(" ; ")[0]
    text = re.sub(r"/\*[^*]*\*/", lambda m: m.group(0).replace(" ", "~").replace(",", "`"), text)
    m = re.search(r" (op_sel|op_sel_hi|neg_lo|neg_hi|neg|cbsz|abid|blgp|bitop3):| clamp| mul:| div:", text)
    tail = ""
    if m:
        text, tail = text[: m.start()], text[m.start():]
    name, _, rest = text.partition(" ")
    toks = [t.strip() for t in rest.split(",")] if rest else []
    mods = []
    if toks:
        last = toks[-1].split(" ")
        toks[-1] = last[0]
        mods = last[1:]
    mods += tail.split()
    return name, toks, mods


def reg_of(tok):
    tok = tok.split("/*")[0].strip("-|")
    m = re.match(r"^(v|s|a|ttmp)(\d+)$", tok)
    if m:
        return m.group(1), int(m.group(2)), 1
    m = re.match(r"^(v|s|a|ttmp)\[(\d+):(\d+)\]$", tok)
    if m:
        lo, hi = int(m.group(2)), int(m.group(3))
        return m.group(1), lo, hi - lo + 1
    return None


# Source slot flags (see `vop3::Src`): 1 VGPR flagged (SGPR-only slot), 2 odd
# VGPR range flagged, 16 with class VReg (else VS), 4 SGPR flagged (VGPR-only
# slot), 8 inline constant flagged, 32 a literal is read as 16 bits (learned
# on gfx950, the only target with VOP3 literals, and applied to all).

# Per-(target, opcode) probes.  Index names the probe.
PROBES = [
    ("base", {}),
    ("odd", dict(vdst=5, srcs=(267, 277, 287))),
    ("odd2", dict(vdst=7, srcs=(269, 279, 289))),
    ("sgpr", dict(srcs=(12, 22, 32))),
    ("sgpr2", dict(srcs=(16, 24, 40))),
    ("const", dict(srcs=(128, 128, 128))),
    ("const2", dict(srcs=(129, 130, 131))),
    ("opsel", dict(w0bits=0x7800)),
    ("lit", dict(srcs=(255, 255, 255))),
    ("half", dict(srcs=(240, 240, 240))),
    ("inv2pi", dict(srcs=(248, 248, 248))),
]
BITS0 = list(range(8, 16))   # abs[2:0], op_sel[3:0], clamp (VOP3a); sdst, clamp (VOP3b)
BITS1 = list(range(27, 32))  # omod[1:0], neg[2:0]
for b in BITS0:
    PROBES.append((f"w0b{b}", dict(w0bits=1 << b)))
for b in BITS1:
    PROBES.append((f"w1b{b}", dict(w1bits=1 << b)))


def learn(cpu):
    datas, keys = [], []
    for op in range(0x380):
        for name, kw in PROBES:
            datas.append(word(op, **kw))
            keys.append((op, name))
    res = {}
    for k, r in zip(keys, safe_decode_many(cpu, datas)):
        res[k] = r[0]
    rows = {}
    attr = safe_decode_many(cpu, [word(op, **INTERP[0][1]) for op in range(0x380)])
    for op in range(0x380):
        base = res[(op, "base")]
        if "attr10.x" in (attr[op][0] or ""):
            rows[op] = learn_interp(cpu, op)
            continue
        if base is None or base == "<crash>":
            continue
        rows[op] = analyse(op, {n: res[(op, n)] for n, _ in PROBES})
    return rows


# Interpolation opcodes (GFX9 targets with graphics: gfx908): src0 holds the
# attribute (attr[5:0], channel [7:6] and, on the f16 forms, `high` in bit
# 8), printed after src1 (the interpolated VGPR). A literal in src1 crashes
# LLVM 22, so the constant probes avoid 255.
INTERP = [
    ("base", dict(srcs=(10, 276, 286))),
    ("sgpr", dict(srcs=(10, 22, 32))),
    ("const", dict(srcs=(10, 128, 128))),
    ("half", dict(srcs=(10, 240, 240))),
    ("inv2pi", dict(srcs=(10, 248, 248))),
    ("high", dict(srcs=(10 | 0x100, 276, 286))),
    ("opsel", dict(srcs=(10, 276, 286), w0bits=0x7800)),
]
for b in BITS0:
    INTERP.append((f"w0b{b}", dict(srcs=(10, 276, 286), w0bits=1 << b)))
for b in BITS1:
    INTERP.append((f"w1b{b}", dict(srcs=(10, 276, 286), w1bits=1 << b)))


def learn_interp(cpu, op):
    """The row of an interpolation opcode."""
    res = dict(zip((n for n, _ in INTERP), (r[0] for r in safe_decode_many(cpu, [word(op, **kw) for _, kw in INTERP]))))
    name, toks, mods = operands(res["base"])
    assert not mods and toks[0] == "v4" and toks[2] == "attr10.x", (op, res["base"])
    attr = 64 | (128 if res["high"] and res["high"] != "<crash>" else 0)
    slots = [(1, attr, ("0.5", "0.15915494"))]
    for pos in [1] + ([3] if len(toks) == 4 else []):
        if toks[pos].startswith("invalid_param_"):
            slots.append((1, 256, ("0.5", "0.15915494")))
            continue
        fl = 0
        t = tok_at(res, ("sgpr",), pos)
        if t and "/*Invalid~register" in t:
            assert "'VGPR_32'" in t, t
            fl |= 4 | 16
        t = tok_at(res, ("const",), pos)
        if t and "/*Invalid~immediate" in t:
            fl |= 8
        slots.append((1, fl, const_style(res, pos)))
    flags = {}
    for b in BITS0 + BITS1:
        t = res[f"w0b{b}" if b in BITS0 else f"w1b{b}"]
        if t is None:
            flags[b] = "Z"
        elif t == "<crash>" or t == res["base"]:
            flags[b] = "I"
        else:
            flags[b] = "M"
    return dict(name=name, dst=("v", 1, False), sdst=False, srcs=slots, flags=flags, opsel=opsel_entries(res))


def analyse(op, r):
    name, toks, mods = operands(r["base"])
    assert not mods, (op, r["base"])
    dst = ("-", 0, False)
    sdst = False
    srcs = []
    for i, t in enumerate(toks):
        if "/*" in t:
            bad = re.search(r"'(\w+)'", t).group(1) if "'" in t else t
        else:
            bad = ""
        reg = reg_of(t)
        assert reg, (op, r["base"], t)
        f, idx, n = reg
        if i == 0 and idx == 4:
            t = tok_at(r, ("odd", "odd2"), 0)
            # gfx90a and later annotate an odd destination range.
            dst = (f, n, bool(t) and n > 1 and "/*Invalid~register" in t)
        elif idx == 0 and f == "s":
            sdst = True
        else:
            srcs.append((idx, f, n, bad))
    srcs.sort()
    slots = []
    for j, (idx, f, n, bad) in enumerate(srcs):
        assert idx == 10 * (j + 1), (op, r["base"])
        pos = len(toks) - len(srcs) + j
        fl = 0
        if bad.startswith("SReg"):
            fl |= 1
        t = tok_at(r, ("odd", "odd2"), pos)
        if t and "/*Invalid~register" in t:
            fl |= 2
            if "'VReg" in t:
                fl |= 16
        t = tok_at(r, ("sgpr", "sgpr2"), pos)
        if t and "/*Invalid~register" in t:
            fl |= 4
        t = tok_at(r, ("const", "const2"), pos)
        if t and "/*Invalid~immediate" in t:
            fl |= 8
        t = tok_at(r, ("lit",), pos)
        if t and t.strip("-|").startswith("0x5678"):
            fl |= 32
        cst = const_style(r, pos)
        slots.append((n, fl, cst))
    flags = {}
    for b in BITS0 + BITS1:
        key = f"w0b{b}" if b in BITS0 and f"w0b{b}" in r and b < 16 else f"w1b{b}"
        t = r[key]
        if t is None:
            flags[b] = "Z"
        elif t == "<crash>" or t == r["base"]:
            flags[b] = "I"
        else:
            flags[b] = "M"
    return dict(name=name, dst=dst, sdst=sdst, srcs=slots, flags=flags, opsel=opsel_entries(r))


def tok_at(r, probes, pos):
    for p in probes:
        t = r[p]
        if t and t != "<crash>":
            return operands(t)[1][pos]
    return None


def opsel_entries(r):
    t = r["opsel"]
    if t and t != "<crash>" and "op_sel:[" in t:
        return t.split("op_sel:[")[1].split("]")[0].count(",") + 1
    return 0


def const_style(r, pos):
    toks = []
    for p in ("half", "inv2pi"):
        t = r[p]
        if t is None or t == "<crash>":
            toks.append("?")
        else:
            toks.append(operands(t)[1][pos].split("/*")[0])
    return tuple(toks)


STYLE = {("0.5", "0.15915494"): "F32", ("0x3800", "0x3118"): "I16",
         ("0.5", "0.15915494309189532"): "F64"}


def main():
    per = {cpu: learn(cpu) for cpu in CPUS}
    for op, d in per["gfx950"].items():
        for cpu in [c for c in CPUS if c != "gfx950"]:
            o = per[cpu].get(op)
            if o and o["name"] == d["name"]:
                o["srcs"] = [(n, fl | (f2 & 32), c) for (n, fl, c), (_, f2, _) in zip(o["srcs"], d["srcs"])]
    rows = []
    styles = set()
    for op in range(0x380):
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
            rows.append((op, mask, d))
            for s in d["srcs"]:
                styles.add(s[2])
    unknown = [s for s in styles if s not in STYLE]
    print("unrecognised constant styles:", unknown, file=sys.stderr)
    out = ["// @generated by scripts/gen/vop3.py from LLVM 22's disassembler; do not edit.",
           "//! VOP3 opcodes (0x000..0x37f): mnemonic, operand kinds and modifier bits",
           "//! for each target set (bit 0 gfx90a, bit 1 gfx942, bit 2 gfx950, bit 3 gfx908).",
           "",
           "use super::super::vop3::{Row, Src, Cst::*, Dst::*};",
           "",
           "pub(crate) static VOP3: &[Row] = &["]
    for op, mask, d in rows:
        f, n, align = d["dst"]
        dst = {"v": f"V({n})", "s": f"S({n})", "-": "No", "a": f"A({n})"}[f]
        srcs = ", ".join(f"Src({n}, {acc}, {STYLE.get(c, 'F32')})" for n, acc, c in d["srcs"])
        z = m = 0
        for b, c in d["flags"].items():
            bit = (b - 8) if b < 16 else (b - 27 + 8)
            if c == "Z":
                z |= 1 << bit
            elif c == "M":
                m |= 1 << bit
        out.append(f"    Row {{ op: 0x{op:03x}, tg: {mask}, name: \"{d['name']}\", dst: {dst}, "
                   f"dst_align: {str(align).lower()}, sdst: {str(d['sdst']).lower()}, srcs: &[{srcs}], opsel: {d['opsel']}, zero: 0x{z:04x}, mods: 0x{m:04x} }},")
    out.append("];")
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print(f"wrote {len(rows)} rows to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
