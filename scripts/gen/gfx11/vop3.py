#!/usr/bin/env python3
"""Learns the GFX11 VOP3 opcode table (10-bit opcodes: the `_e64` forms of
VOPC, VOP2 and VOP1 and the VOP3-only opcodes) on gfx1100 and gfx1151 by
probing LLVM 22's disassembler, and writes
crates/isa/src/gfx11/tables/vop3.rs.

For every opcode it decodes probe words and records: the mnemonic and
whether LLVM prints `_e64`; the destination (VGPR range, 16-bit VGPR half,
SGPR, a wave-sized mask, or none with the vdst value LLVM requires); a
VOP3b carry-out destination; for each source its width (0: wave-sized),
value type (how constants print), 16-bit-half register, and the register
classes LLVM annotates as invalid; and for each modifier bit whether LLVM
rejects it, ignores it, prints it, or falls back to its fake-16-bit form.

    python3 scripts/gen/gfx11/vop3.py
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import CPUS, decode_many, header, table_path, words  # noqa: E402
from valu import DPP8_SELS, LITS, dpp8_src, reg, split, strip_note, value_type  # noqa: E402

OUT = table_path("vop3.rs")
SRC = (0x101, 0x102, 0x103)
W0BITS = list(range(8, 16))  # abs[2:0] / sdst, op_sel[3:0], clamp
W1BITS = list(range(27, 32))  # omod[1:0], neg[2:0]


def word(op, vdst=5, hi=0, srcs=SRC, w1bits=0, lit=0x12345678, w3=0x9ABCDEF0):
    w0 = 0xD4000000 | (op << 16) | (hi << 8) | vdst
    w1 = srcs[0] | (srcs[1] << 9) | (srcs[2] << 18) | w1bits
    return words(w0, w1, lit, w3)


class Batch:
    """Collects probe words, decodes them in one crash-isolated batch."""

    def __init__(self):
        self.datas, self.keys = [], []

    def add(self, key, data):
        self.keys.append(key)
        self.datas.append(data)

    def run(self, cpu, features=""):
        out = {}
        for k, r in zip(self.keys, decode_many(cpu, self.datas, features)):
            out[k] = r
        return out


def with_src(srcs, k, v):
    s = list(srcs)
    s[k] = v
    return tuple(s)


def probes_for(op, vdst, hi0=0):
    """Probe words for one opcode given the vdst its base decodes with;
    `hi0` is or'ed into bits 14:8 of every word (a bit that selects the
    fake-16-bit form)."""
    w = lambda **kw: word(op, **{"vdst": vdst, **kw, "hi": kw.get("hi", 0) | hi0})
    p = {"base": w()}
    if vdst == 5:
        p["dst7"] = w(vdst=7)
    for k in range(3):
        p[f"s{k}"] = w(srcs=with_src(SRC, k, 0x109 + k))
        p[f"s{k}sgpr"] = w(srcs=with_src(SRC, k, 2))
        p[f"s{k}const"] = w(srcs=with_src(SRC, k, 0x80))
        p[f"s{k}i240"] = w(srcs=with_src(SRC, k, 240))
        p[f"s{k}i248"] = w(srcs=with_src(SRC, k, 248))
        p[f"s{k}zero"] = w(srcs=with_src(SRC, k, 0x1FF))
        p[f"s{k}hi"] = w(srcs=with_src(SRC, k, 0x1C0))
        for j, v in enumerate(LITS):
            p[f"s{k}lit{j}"] = w(srcs=with_src(SRC, k, 255), lit=v)
    p["dsthi"] = w(vdst=0xC0)
    p["dstexec"] = w(vdst=0x7E)
    # DPP forms: src0 0xFA (DPP16 dword: src0 v1, quad_perm identity, all
    # rows and banks) or 0xE9 (DPP8 identity) with a third dword.
    p["dpp"] = w(srcs=with_src(SRC, 0, 0xFA), lit=0xFF00E401)
    for b in (18, 19, 20, 21, 22, 23):
        p[f"dpp{b}"] = w(srcs=with_src(SRC, 0, 0xFA), lit=0xFF00E401 | 1 << b)
    p["dpp8"] = w(srcs=with_src(SRC, 0, 0xE9), lit=0xFAC68801)
    for j, sel in enumerate(DPP8_SELS):
        p[f"dpp8sel{j}"] = w(srcs=with_src(SRC, 0, 0xE9), lit=1 | sel << 8)
    for k in (1, 2):
        p[f"dpps{k}lit"] = w(srcs=with_src(with_src(SRC, 0, 0xFA), k, 255), lit=0xFF00E401)
        # Literals after the DPP dword: how the DPP form prints them.
        for j, v in enumerate(LITS):
            p[f"dpps{k}lit{j}"] = w(srcs=with_src(with_src(SRC, 0, 0xFA), k, 255), lit=0xFF00E401, w3=v)
    # Modifier bits in the DPP forms (their validation differs on GFX12's
    # fp8 conversions).
    for b in W0BITS + W1BITS:
        kw = {"hi": 1 << (b - 8)} if b < 16 else {"w1bits": 1 << b}
        p[f"dppb{b}"] = w(srcs=with_src(SRC, 0, 0xFA), lit=0xFF00E401, **kw)
        p[f"dpp8b{b}"] = w(srcs=with_src(SRC, 0, 0xE9), lit=0xFAC68801, **kw)
    p["hi2"] = w(hi=2)
    for b in W0BITS:
        p[f"w0b{b}"] = w(hi=1 << (b - 8))
    for b in W1BITS:
        p[f"w1b{b}"] = w(w1bits=1 << b)
    return p


def changed(a, b):
    """Indices of the tokens that differ between two operand lists."""
    if a is None or b is None or len(a) != len(b):
        return None
    return [i for i, (x, y) in enumerate(zip(a, b)) if x != y]


def dpp_type(t, k, i, ty):
    """The type constants of source `k` (token `i`) print as in the DPP16
    form, from the `dpps{k}lit{j}` probes; `ty` where they agree or there
    are none."""
    lits = {}
    for j, v in enumerate(LITS):
        tx = t(f"dpps{k}lit{j}") if k else None
        if tx:
            toks = split(tx)[1]
            if i < len(toks):
                lits[v] = strip_note(toks[i])[0].strip("-|")
    tys = value_type({}, lits) if lits else [ty]
    return ty if ty in tys or not tys else tys[0]


def analyse(op, vdst, r, r64, hi0=0):
    t = lambda k: r[k][0] if r[k][0] != "<crash>" else None
    base = t("base")
    name, toks, mods, warn = split(base)
    assert not mods, (op, base)
    suffix = name.endswith("_e64")
    if suffix:
        name = name[:-4]
    toks_of = lambda k: split(t(k))[1] if t(k) else None
    # Which token each field feeds.
    role = {}
    if vdst == 5:
        c = changed(toks, toks_of("dst7"))
        if c:
            assert len(c) == 1, (op, base, t("dst7"))
            role[c[0]] = "dst"
    for k in range(3):
        c = changed(toks, toks_of(f"s{k}"))
        if c:
            assert len(c) == 1, (op, k, base, t(f"s{k}"))
            role[c[0]] = f"src{k}"
    sdst = False
    h2 = toks_of("hi2")
    c = changed(toks, h2)
    if c and len(c) == 1 and c[0] not in role:
        tok = h2[c[0]]
        if reg(strip_note(tok)[0]) and reg(strip_note(tok)[0])[0] == "s":
            role[c[0]] = "sdst"
            sdst = True
    assert sorted(role) == list(range(len(toks))), (op, base, role)
    order = [role[i] for i in range(len(toks))]
    # Destination.
    b64 = split(r64["base"][0])[1] if r64["base"][0] not in (None, "<crash>") else None
    dst = f"No({vdst})"
    if "dst" in role.values():
        i = order.index("dst")
        f, first, n, half = reg(strip_note(toks[i])[0])
        n64 = reg(strip_note(b64[i])[0])[2] if b64 else n
        if f == "v":
            dst = "V16" if half else f"V({n})"
        elif n64 != n:
            dst = "Mask"
        else:
            dst = f"S({n})"
            # GFX12's v_s_* ops: the SReg_32_XEXEC class.
            tx = t("dstexec")
            if tx and strip_note(split(tx)[1][i])[1] == "SReg_32_XEXEC":
                dst = f"SXexec({n})"
    srcs = []
    nsrc = sum(1 for x in order if x.startswith("src"))
    for k in range(nsrc):
        i = order.index(f"src{k}")
        f, first, n, half = reg(strip_note(toks[i])[0])
        n64 = reg(strip_note(b64[i])[0])[2] if b64 else n
        w = 0 if n64 != n else n
        inl, lits = {}, {}
        for fld in (240, 248):
            tx = t(f"s{k}i{fld}")
            if tx:
                inl[fld] = strip_note(split(tx)[1][i])[0]
        for j, v in enumerate(LITS):
            tx = t(f"s{k}lit{j}")
            if tx:
                lits[v] = strip_note(split(tx)[1][i])[0]
        tys = value_type(inl, lits) if (inl or lits) else ["I32"]
        ty = tys[0] if tys else "?"
        if not tys:
            print(f"op {op:#x} src{k}: no type fits {inl} {lits}", file=sys.stderr)
        bad = {}
        for kind, key in (("s", f"s{k}sgpr"), ("v", "base"), ("c", f"s{k}const")):
            tx = t(key)
            bad[kind] = strip_note(split(tx)[1][i])[1] if tx else "REJECT"
        srcs.append((w, ty, bool(half), bad, dpp_type(t, k, i, ty)))
    # Unused source fields: does LLVM accept 0x1ff there? Used ones: a
    # VGPR above v127 (the fake-16-bit forms take v0..v127 only)?
    zero_src = 0
    lo128 = 0
    for k in range(nsrc, 3):
        if t(f"s{k}zero") is None:
            zero_src |= 1 << k
    for k in range(nsrc):
        if t(f"s{k}hi") is None:
            lo128 |= 1 << k
    if "dst" in order and t("dsthi") is None:
        lo128 |= 8
    # Modifier bits.
    classes = {}
    base_t16 = any(reg(strip_note(x)[0]) and reg(strip_note(x)[0])[3] for x in toks)
    for b in W0BITS + W1BITS:
        if sdst and b < 15 or (hi0 >> (b - 8)) & 1 and b < 16:
            continue
        key = f"w0b{b}" if b < 16 else f"w1b{b}"
        tx = t(key)
        if tx is None:
            classes[b] = "Z"
        elif tx == base:
            classes[b] = "I"
        else:
            tt = split(tx)[1]
            fake = base_t16 and not any(reg(strip_note(x)[0]) and reg(strip_note(x)[0])[3] for x in tt)
            classes[b] = "F" if fake else "M"
    # Entries of the printed op_sel, plus 8 when the last one is the
    # destination's (op_sel bit 3).
    opsel = 0
    for b in range(11, 15):
        tx = t(f"w0b{b}")
        if tx and "op_sel:[" in tx:
            opsel = tx.split("op_sel:[")[1].split("]")[0].count(",") + 1
            break
    # GFX12's fp8 conversions print op_sel bits as byte_sel: per op_sel
    # bit k, bits 2k+1:2k hold the byte_sel value it gives alone.
    byte_sel = 0
    for k, b in enumerate(range(11, 15)):
        tx = t(f"w0b{b}")
        m = re.search(r"byte_sel:(\d)", tx or "")
        if m:
            byte_sel |= int(m.group(1)) << (2 * k)
    tx = t("w0b14")
    if opsel and tx and "op_sel:[" in tx and tx.split("op_sel:[")[1].split("]")[0].endswith("1"):
        opsel |= 8
    # DPP forms: which exist, and the DPP16 dword's bits 23:18 (fi,
    # bound_ctrl, neg/abs) LLVM rejects.
    dpp = 0
    if t("dpp"):
        dpp |= 1
        for j, b in enumerate((18, 19, 20, 21, 22, 23)):
            if t(f"dpp{b}") is None:
                dpp |= 4 << j
    sel_src = False
    if t("dpp8"):
        dpp |= 2
        # Whether LLVM reads the DPP8 selector through its source-operand
        # decoder (GFX12's v_cvt_pk_fp8_f32 and kin).
        sel_src = dpp8_src([t(f"dpp8sel{j}") for j in range(len(DPP8_SELS))])
    # Modifier bits the base form rejects but the DPP forms accept.
    dpp_ok = 0
    for b in W0BITS + W1BITS:
        if classes.get(b) != "Z" or not dpp:
            continue
        ok = {t(f"dppb{b}") is not None for f in (1,) if dpp & 1} | \
             {t(f"dpp8b{b}") is not None for f in (2,) if dpp & 2}
        assert len(ok) == 1, (op, name, b)
        if ok.pop():
            dpp_ok |= 1 << (b - 8 if b < 16 else b - 27 + 8)
    # A DPP form whose src1 field of 255 takes no literal dword (LLVM's
    # multiply-accumulate DPP forms print the raw field value there).
    raw_src1 = bool(dpp) and nsrc > 1 and t("dpps1lit") is not None and r["dpps1lit"][1] == 12
    return dict(name=name, suffix=suffix, order=order, dst=dst, sdst=sdst, srcs=srcs,
                zero_src=zero_src, lo128=lo128, classes=classes, opsel=opsel, dpp=dpp,
                raw_src1=raw_src1, dpp8_src=sel_src, byte_sel=byte_sel, dpp_ok=dpp_ok)


# GFX10's interpolation opcodes: src0 is the attribute (attr[5:0], channel
# [7:6] and, on the f16 forms, `high` in bit 8), printed after src1 (the
# interpolated VGPR; `v_interp_mov_f32_e64`'s parameter); src2 where
# present. A literal in src1 crashes LLVM 22: no literal probes.
ATTR = 10


def interp_probes(op, vdst):
    w = lambda srcs=(ATTR, 0x102, 0x103), **kw: word(op, vdst, srcs=srcs, **kw)
    p = {"base": w(), "high": w(srcs=(ATTR | 0x100, 0x102, 0x103))}
    for k in (1, 2):
        for key, v in (("sgpr", 2), ("const", 0x80), ("i240", 240), ("i248", 248)):
            p[f"s{k}{key}"] = w(srcs=with_src((ATTR, 0x102, 0x103), k, v))
    for b in W0BITS:
        p[f"w0b{b}"] = w(hi=1 << (b - 8))
    for b in W1BITS:
        p[f"w1b{b}"] = w(w1bits=1 << b)
    return p


def analyse_interp(op, r):
    """The row of an interpolation opcode, in `analyse`'s shape; its
    sources' types are ATTR/ATTRH (the attribute, with `high`) and PARAM
    (`v_interp_mov_f32_e64`'s src1), which `rust_src` turns into flags."""
    t = lambda k: r[k][0] if r[k][0] != "<crash>" else None
    base = t("base")
    name, toks, mods, _ = split(base)
    assert not mods and toks[2] == f"attr{ATTR}.x", (op, base)
    suffix = name.endswith("_e64")
    if suffix:
        name = name[:-4]
    attr = "ATTRH" if t("high") else "ATTR"
    srcs = [(1, attr, False, {"s": "", "v": "", "c": ""}, attr)]
    for k, i in ((1, 1), (2, 3)):
        if i >= len(toks):
            break
        if toks[i].startswith("invalid_param_"):
            srcs.append((1, "PARAM", False, {"s": "", "v": "", "c": ""}, "PARAM"))
            continue
        inl = {f: strip_note(split(t(f"s{k}i{f}"))[1][i])[0] for f in (240, 248) if t(f"s{k}i{f}")}
        tys = value_type(inl, {})
        ty = tys[0] if tys else "I32"
        bad = {"v": "", "s": strip_note(split(t(f"s{k}sgpr"))[1][i])[1] if t(f"s{k}sgpr") else "REJECT"}
        tc = t(f"s{k}const")
        bad["c"] = strip_note(split(tc)[1][i])[1] if tc else "REJECT"
        srcs.append((1, ty, False, bad, ty))
    classes = {}
    for b in W0BITS + W1BITS:
        tx = t(f"w0b{b}" if b < 16 else f"w1b{b}")
        classes[b] = "Z" if tx is None else "I" if tx == base else "M"
    opsel = 0
    for b in range(11, 15):
        tx = t(f"w0b{b}")
        if tx and "op_sel:[" in tx:
            opsel = tx.split("op_sel:[")[1].split("]")[0].count(",") + 1
            break
    tx = t("w0b14")
    if opsel and tx and "op_sel:[" in tx and tx.split("op_sel:[")[1].split("]")[0].endswith("1"):
        opsel |= 8
    return dict(name=name, suffix=suffix, order=[], dst="V(1)", sdst=False, srcs=srcs,
                zero_src=0, lo128=0, classes=classes, opsel=opsel, dpp=0, raw_src1=False,
                dpp8_src=False, byte_sel=0, dpp_ok=0)


def learn(cpu):
    # Find each opcode's base word: vdst 5, else 0x7e (EXEC, v_cmpx), else 0.
    b = Batch()
    for op in range(1024):
        for vd in (5, 0x7E, 0):
            b.add((op, vd), word(op, vd))
    found = b.run(cpu)
    bases = {}
    for op in range(1024):
        for vd in (5, 0x7E, 0):
            tx = found[(op, vd)][0]
            if tx and tx != "<crash>":
                bases[op] = vd
                break
    # Interpolation opcodes (GFX10), found by their attribute operand.
    b = Batch()
    for op in range(1024):
        b.add(op, word(op, 5, srcs=(ATTR, 0x102, 0x103)))
    interp = [op for op, r in b.run(cpu).items() if r[0] and f"attr{ATTR}.x" in r[0]]
    b = Batch()
    for op in interp:
        bases.pop(op, None)
        for k, d in interp_probes(op, 5).items():
            b.add((op, k), d)
    ri = b.run(cpu)
    b = Batch()
    for op, vd in bases.items():
        for k, d in probes_for(op, vd).items():
            b.add((op, k), d)
    r32 = b.run(cpu)
    b64 = Batch()
    for op, vd in bases.items():
        b64.add((op, "base"), word(op, vd))
    r64 = b64.run(cpu, "+wavefrontsize64")
    rows = {}
    for op, vd in bases.items():
        r = {k: v for (o, k), v in r32.items() if o == op}
        rows[op] = analyse(op, vd, r, {"base": r64[(op, "base")]})
    for op in interp:
        rows[op] = analyse_interp(op, {k: v for (o, k), v in ri.items() if o == op})
    # The fake-16-bit forms: analysed again with their selecting bit set.
    fakes = {}
    b = Batch()
    for op, d in rows.items():
        fb = [bit for bit, c in d["classes"].items() if c == "F"]
        if fb:
            hi0 = 1 << (min(fb) - 8)
            fakes[op] = hi0
            for k, dd in probes_for(op, bases[op], hi0).items():
                b.add((op, k), dd)
    rf = b.run(cpu)
    b64 = Batch()
    for op, hi0 in fakes.items():
        b64.add((op, "base"), word(op, bases[op], hi=hi0))
    rf64 = b64.run(cpu, "+wavefrontsize64")
    fake_rows = {}
    for op, hi0 in fakes.items():
        r = {k: v for (o, k), v in rf.items() if o == op}
        fake_rows[op] = analyse(op, bases[op], r, {"base": rf64[(op, "base")]}, hi0)
    return rows, fake_rows


def rust_src(s):
    w, ty, t16, bad, dty = s
    dty = {"V2F16S": "V2F16Splat", "P32": "I32", "F16W": "F16Wide"}.get(dty, dty)
    f = lambda x: "" if x in ("", "REJECT") else x
    flags = []
    if ty in ("ATTR", "ATTRH", "PARAM"):
        flags = {"ATTR": ["ATTR"], "ATTRH": ["ATTR", "HIGH"], "PARAM": ["PARAM"]}[ty]
        ty = dty = "I32"
    if ty == "V2F16S":
        ty = "V2F16Splat"
    if ty == "P32":
        ty = "I32"
        flags.append("PLAIN")
    if bad["c"] == "imm":
        flags.append("NO_CONST")
    if bad["c"] == "REJECT":
        flags.append("REJECT_CONST")
    return (f"Src {{ w: {w}, ty: {ty}, dpp_ty: {dty}, t16: {str(t16).lower()}, bad_s: \"{f(bad['s'])}\", "
            f"bad_v: \"{f(bad['v'])}\", flags: {'|'.join(flags) or '0'} }}")


def emit(per, table):
    rows = []
    for op in range(1024):
        groups = []
        for ci, cpu in enumerate(CPUS):
            d = per[cpu][table].get(op)
            if d is None:
                continue
            for g in groups:
                if g[1] == d:
                    g[0] |= 1 << ci
                    break
            else:
                groups.append([1 << ci, d])
        for mask, d in groups:
            zero = mods = fake = 0
            for bit, c in d["classes"].items():
                i = bit - 8 if bit < 16 else bit - 27 + 8
                if c == "Z":
                    zero |= 1 << i
                elif c == "M":
                    mods |= 1 << i
                elif c == "F":
                    fake |= 1 << i
            srcs = ", ".join(rust_src(s) for s in d["srcs"])
            rows.append(
                f"    Row {{ op: 0x{op:03x}, tg: {mask}, name: \"{d['name']}\", e64: {str(d['suffix']).lower()}, "
                f"dst: Dst::{d['dst']}, sdst: {str(d['sdst']).lower()}, srcs: &[{srcs}], "
                f"zero_src: {d['zero_src']}, lo128: {d['lo128']}, dpp: 0x{d['dpp']:02x}, raw_src1: {str(d['raw_src1']).lower()}, dpp8_src: {str(d['dpp8_src']).lower()}, zero: 0x{zero:04x}, mods: 0x{mods:04x}, fake: 0x{fake:04x}, opsel: {d['opsel']}, byte_sel: 0x{d['byte_sel']:02x}, dpp_ok: 0x{d['dpp_ok']:04x} }},")
    return rows


def main():
    per = {}
    for cpu in CPUS:
        real, fake = learn(cpu)
        per[cpu] = [real, fake]
    rows = emit(per, 0)
    fake_rows = emit(per, 1)
    with open(OUT, "w") as fh:
        fh.write(header("vop3.py", "VOP3 opcodes (10 bits): mnemonic, operands and modifier bits.\n"
                        "//! Modifier bits: i < 8 is word 0 bit 8+i (abs[2:0], op_sel[3:0], clamp),\n"
                        "//! 8+j is word 1 bit 27+j (omod[1:0], neg[2:0])."))
        body = "\n".join(rows + fake_rows)
        used = [c for c in ("ATTR", "HIGH", "NO_CONST", "PARAM", "PLAIN", "REJECT_CONST")
                if re.search(rf"\b{c}\b", body)]
        fh.write(f"use crate::gfx11::vop3::{{{', '.join(['Dst', 'Row', 'Src'] + used)}}};\n")
        fh.write("use crate::gfx11::operand::ValType::*;\n\n")
        fh.write("pub static VOP3: &[Row] = &[\n" + "\n".join(rows) + "\n];\n\n")
        fh.write("/// The fake-16-bit forms of the opcodes with `fake` bits, analysed with\n"
                 "/// one of those bits set.\n")
        fh.write("pub static VOP3_FAKE16: &[Row] = &[\n" + "\n".join(fake_rows) + "\n];\n")
    print(f"wrote {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
