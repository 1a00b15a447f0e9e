#!/usr/bin/env python3
"""Learns the GFX11 VOP1, VOP2 and VOPC opcodes in their 32-bit forms
(`_e32`, with a literal when src0 is 255) and their DPP16 and DPP8 forms
(src0 0xFA, 0xE9/0xEA, a second dword of DPP controls) on gfx1100 and
gfx1151 by probing LLVM 22's disassembler, and writes
crates/isa/src/gfx11/tables/vop.rs.

Per opcode: the mnemonic of each form, the order of the printed operands
(destination, the implicit `vcc` LLVM prints for carry and condition
operands, src0, vsrc1, the literal constant K of v_fmamk/v_fmaak), the
destination kind, src0's and vsrc1's widths, value types, 16-bit halves and
the register classes LLVM annotates, which DPP neg/abs bits LLVM
accepts, and (GFX12's fake-16-bit operands) which operands LLVM annotates
or rejects above v127.

    python3 scripts/gen/gfx11/vop.py
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import CPUS, decode_many, header, table_path, words  # noqa: E402
from valu import DPP8_SELS, LITS, dpp8_src, reg, split, strip_note, value_type  # noqa: E402

OUT = table_path("vop.rs")
KINDS = (("Vop1", 256), ("Vop2", 64), ("Vopc", 256))
DPP16 = 0xFF00E400 | 1  # src0 v1, quad_perm:[0,1,2,3], row/bank masks 0xf
DPP8 = 0x00FAC688 << 8 | 1  # src0 v1, dpp8:[0,1,2,3,4,5,6,7]
K = 0x12345678


def w0(kind, op, vdst=5, vsrc1=2, src0=0x101):
    if kind == "Vop1":
        return 0x7E000000 | (vdst << 17) | (op << 9) | src0
    if kind == "Vop2":
        return (op << 25) | (vdst << 17) | (vsrc1 << 9) | src0
    return 0x7C000000 | (op << 17) | (vsrc1 << 9) | src0


def probes(kind, op):
    p = {}
    e = lambda **kw: words(w0(kind, op, **kw), K, 0x9ABCDEF0)
    p["base"] = e()
    p["dst7"] = e(vdst=7)
    p["dsthi"] = e(vdst=0x85)
    p["s0"] = e(src0=0x109)
    p["s1"] = e(vsrc1=10)
    p["s1hi"] = e(vsrc1=0x82)
    p["s0hi"] = e(src0=0x181)
    p["s0sgpr"] = e(src0=2)
    p["s0const"] = e(src0=0x80)
    p["s0i240"] = e(src0=240)
    p["s0i248"] = e(src0=248)
    for j, v in enumerate(LITS):
        p[f"s0lit{j}"] = words(w0(kind, op, src0=255), v, 0x9ABCDEF0)
    p["alt"] = words(w0(kind, op, vdst=0, vsrc1=0, src0=0), K, 0)
    p["dpp"] = words(w0(kind, op, src0=0xFA), DPP16, 0)
    for b in (18, 19, 20, 21, 22, 23):
        p[f"dpp{b}"] = words(w0(kind, op, src0=0xFA), DPP16 | 1 << b, 0)
    p["dpphi"] = words(w0(kind, op, src0=0xFA), DPP16 | 0x80, 0)
    p["dpp8"] = words(w0(kind, op, src0=0xE9), DPP8, 0)
    for j, sel in enumerate(DPP8_SELS):
        p[f"dpp8sel{j}"] = words(w0(kind, op, src0=0xE9), 1 | sel << 8, 0)
    return p


def text(r, k):
    x = r[k][0]
    return None if x in (None, "<crash>") else x


def analyse(kind, op, r, r64):
    base = text(r, "base")
    if base is None:
        return None
    name, toks, mods, _ = split(base)
    assert not mods, (kind, op, base)
    toks_of = lambda k: split(text(r, k))[1] if text(r, k) else None
    roles = [None] * len(toks)
    for key, role in (("dst7", "Dst"), ("s0", "Src0"), ("s1", "Src1")):
        t2 = toks_of(key)
        if t2 and len(t2) == len(toks):
            diff = [i for i, (a, b) in enumerate(zip(toks, t2)) if a != b]
            if len(diff) == 1:
                roles[diff[0]] = role
    for i, tok in enumerate(toks):
        if roles[i] is None:
            if tok in ("vcc_lo", "vcc"):
                roles[i] = "Vcc"
            elif tok == f"0x{K:x}":
                roles[i] = "K"
    assert None not in roles, (kind, op, base, roles)
    t64 = split(text(r64, "base"))[1] if text(r64, "base") else toks
    dst = "None"
    if "Dst" in roles:
        i = roles.index("Dst")
        f, first, n, half = reg(strip_note(toks[i])[0])
        dst = "V16" if half else f"V({n})" if f == "v" else f"S({n})"
    src0 = src1 = None
    if "Src0" in roles:
        i = roles.index("Src0")
        f, first, n, half = reg(strip_note(toks[i])[0])
        inl, lits = {}, {}
        for fld in (240, 248):
            tx = text(r, f"s0i{fld}")
            if tx:
                inl[fld] = strip_note(split(tx)[1][i])[0]
        for j, v in enumerate(LITS):
            tx = text(r, f"s0lit{j}")
            if tx:
                lits[v] = strip_note(split(tx)[1][i])[0]
        tys = value_type(inl, lits) if (inl or lits) else ["I32"]
        ty = tys[0] if tys else "?"
        if not tys:
            print(f"{kind} {op:#x}: no type fits {inl} {lits}", file=sys.stderr)
        bad_s = strip_note(split(text(r, "s0sgpr"))[1][i])[1] if text(r, "s0sgpr") else "REJECT"
        tc = text(r, "s0const")
        bad_c = strip_note(split(tc)[1][i])[1] if tc else "REJECT"
        bad_v = strip_note(toks[i])[1]
        src0 = (n, ty, bool(half), bad_s, bad_v, bad_c)
    if "Src1" in roles:
        i = roles.index("Src1")
        f, first, n, half = reg(strip_note(toks[i])[0])
        src1 = (n, bool(half))
    # Fake-16-bit operands (GFX12): registers above v127 are annotated
    # (sources: bit 0 src0, bit 1 vsrc1) or rejected (bit 3: vdst).
    lo128 = 0
    if dst in ("V(1)",) and text(r, "dsthi") is None:
        lo128 |= 8
    for bit, key, role, classes in ((1, "s0hi", "Src0", ("VS_32_Lo128",)),
                                    (2, "s1hi", "Src1", ("VGPR_32_Lo128",))):
        if role in roles and text(r, key) and not (src0 if role == "Src0" else src1)[2 if role == "Src0" else 1]:
            cls = strip_note(split(text(r, key))[1][roles.index(role)])[1]
            if cls:
                assert cls in classes, (kind, op, key, cls)
                lo128 |= bit
    if lo128 & 1 and text(r, "dpphi"):
        cls = strip_note(split(text(r, "dpphi"))[1][roles.index("Src0")])[1]
        assert cls == "VGPR_32_Lo128", (kind, op, cls)
    # DPP forms.
    dpp_name = dpp8_name = ""
    dpp_zero = dpp_mods = 0
    td = text(r, "dpp")
    if td:
        dpp_name = split(td)[0]
        for j, b in enumerate((20, 21, 22, 23)):
            tb = text(r, f"dpp{b}")
            if tb is None:
                dpp_zero |= 1 << j
            elif tb != td:
                dpp_mods |= 1 << j
        # GFX12's v_cndmask_b32_dpp closes src1's abs bar after vcc.
        tb = text(r, "dpp23")
        if tb and re.search(r"vcc(_lo)?\|", tb):
            dpp_mods |= 16
    t8 = text(r, "dpp8")
    sel_src = False
    if t8:
        dpp8_name = split(t8)[0]
        sel_src = dpp8_src([text(r, f"dpp8sel{j}") for j in range(len(DPP8_SELS))])
    return dict(name=name, roles=roles, dst=dst, src0=src0, src1=src1, dpp=dpp_name,
                dpp8=dpp8_name, dpp_zero=dpp_zero, dpp_mods=dpp_mods, dpp8_src=sel_src,
                lo128=lo128)


def learn(cpu):
    datas, keys = [], []
    for kind, n in KINDS:
        for op in range(n):
            if kind == "Vop2" and op in (0x3E, 0x3F):
                continue
            for k, d in probes(kind, op).items():
                keys.append((kind, op, k))
                datas.append(d)
    res = dict(zip(keys, decode_many(cpu, datas)))
    datas64, keys64 = [], []
    for kind, n in KINDS:
        for op in range(n):
            keys64.append((kind, op, "base"))
            datas64.append(words(w0(kind, op), K, 0x9ABCDEF0))
    res64 = dict(zip(keys64, decode_many(cpu, datas64, "+wavefrontsize64")))
    out = {}
    for kind, n in KINDS:
        for op in range(n):
            if kind == "Vop2" and op in (0x3E, 0x3F):
                continue
            r = {k: v for (kd, o, k), v in res.items() if kd == kind and o == op}
            d = analyse(kind, op, r, {"base": res64[(kind, op, "base")]})
            if d is None and text(r, "alt"):
                # Opcodes without operands (v_nop, v_pipeflush): the fields
                # must be zero.
                d = dict(name=text(r, "alt"), roles=[], dst="None", src0=None, src1=None,
                         dpp="", dpp8="", dpp_zero=0, dpp_mods=0, dpp8_src=False, bare=True,
                         lo128=0)
            if d is not None:
                out[(kind, op)] = d
    return out


def rust_src0(s):
    if s is None:
        return "None"
    n, ty, t16, bad_s, bad_v, bad_c = s
    f = lambda x: "" if x in ("", "REJECT") else x
    flags = []
    if ty == "V2F16S":
        ty = "V2F16Splat"
    if ty == "P32":
        ty = "I32"
        flags.append("PLAIN")
    if bad_c == "imm":
        flags.append("NO_CONST")
    if bad_c == "REJECT":
        flags.append("REJECT_CONST")
    return (f"Some(Src {{ w: {n}, ty: {ty}, dpp_ty: {ty}, t16: {str(t16).lower()}, bad_s: \"{f(bad_s)}\", "
            f"bad_v: \"{f(bad_v)}\", flags: {'|'.join(flags) or '0'} }})")


def main():
    per = {cpu: learn(cpu) for cpu in CPUS}
    rows = []
    for kind, n in KINDS:
        for op in range(n):
            groups = []
            for ci, cpu in enumerate(CPUS):
                d = per[cpu].get((kind, op))
                if d is None:
                    continue
                for g in groups:
                    if g[1] == d:
                        g[0] |= 1 << ci
                        break
                else:
                    groups.append([1 << ci, d])
            for mask, d in groups:
                roles = ", ".join(f"Role::{x}" for x in d["roles"])
                s1 = "None" if d["src1"] is None else f"Some(({d['src1'][0]}, {str(d['src1'][1]).lower()}))"
                rows.append(
                    f"    VopRow {{ kind: Kind::{kind}, op: {op}, tg: {mask}, name: \"{d['name']}\", "
                    f"dpp: \"{d['dpp']}\", dpp8: \"{d['dpp8']}\", roles: &[{roles}], dst: VDst::{d['dst']}, "
                    f"src0: {rust_src0(d['src0'])}, src1: {s1}, bare: {str(d.get('bare', False)).lower()}, "
                    f"dpp_zero: {d['dpp_zero']}, dpp_mods: {d['dpp_mods']}, "
                    f"dpp8_src: {str(d['dpp8_src']).lower()}, lo128: {d['lo128']} }},")
    body = "\n".join(rows)
    used = [c for c in ("NO_CONST", "PLAIN", "REJECT_CONST") if c in body]
    with open(OUT, "w") as fh:
        fh.write(header("vop.py", "VOP1, VOP2 and VOPC opcodes in their 32-bit and DPP forms.\n"
                        "//! DPP modifier bits: 0 src0 neg, 1 src0 abs, 2 src1 neg, 3 src1 abs."))
        fh.write("use crate::gfx11::vop::{Kind, Role, VDst, VopRow};\n")
        fh.write(f"use crate::gfx11::vop3::{{{', '.join(['Src'] + used)}}};\n")
        fh.write("use crate::gfx11::operand::ValType::*;\n\n")
        fh.write("pub static VOP: &[VopRow] = &[\n" + body + "\n];\n")
    print(f"wrote {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
