#!/usr/bin/env python3
"""Learns the VOP1 / VOP2 / VOPC opcode tables by probing LLVM 22's disassembler.

    python3 scripts/gen/vop_tables.py > crates/isa/src/gfx9/tables/vop.rs

For every opcode and target it decodes a canonical e32 word and records the
mnemonic, the operand shape (carry-out / carry-in `vcc`, madmk/madak
constant, no operands), the destination kind and width, and the value class
of each source. The source class is found by decoding the opcode with a set of
literal and inline constants and keeping the printing model (below) that
reproduces LLVM's text. SDWA and DPP availability and source modifier kinds
are probed with canonical second dwords.
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "dev"))
from vop_oracle import decode_many as safe_decode_many
sys.path.insert(0, os.path.dirname(__file__))

CPUS = ["gfx90a", "gfx942", "gfx950", "gfx908"]

INL_INT = set(range(0, 65)) | {(0x100000000 - i) for i in range(1, 17)}
F32C = {0x3F000000: "0.5", 0xBF000000: "-0.5", 0x3F800000: "1.0", 0xBF800000: "-1.0", 0x40000000: "2.0",
        0xC0000000: "-2.0", 0x40800000: "4.0", 0xC0800000: "-4.0", 0x3E22F983: "0.15915494"}
F16C = {0x3800, 0xB800, 0x3C00, 0xBC00, 0x4000, 0xC000, 0x4400, 0xC400, 0x3118}
BF16C = {0x3F00, 0xBF00, 0x3F80, 0xBF80, 0x4000, 0xC000, 0x4080, 0xC080, 0x3E22}
F64H = {0x3FE00000: "0.5", 0xBFE00000: "-0.5", 0x3FF00000: "1.0", 0xBFF00000: "-1.0", 0x40000000: "2.0",
        0xC0000000: "-2.0", 0x40100000: "4.0", 0xC0100000: "-4.0"}
INL16 = set(range(0, 65)) | {(0x10000 - i) for i in range(1, 17)}


def lit(v): return f"lit(0x{v:x})"
def hx(v): return f"0x{v:x}"


def plain32(v):
    if v in INL_INT: return str(v if v < 0x80000000 else v - 0x100000000)
    if v in F32C: return F32C[v]
    return hx(v)


# How LLVM 22 prints a 32-bit literal for each source value class.
MODELS = {
    "B32": lambda v: lit(v) if v in INL_INT or v in F32C else hx(v),
    "F16": lambda v: lit(v) if (v & 0xFFFF) in INL16 or (v & 0xFFFF) in F16C else hx(v & 0xFFFF),
    "I16": lambda v: lit(v) if v in INL_INT or v in F32C else hx(v & 0xFFFF),
    "V2F16": lambda v: lit(v) if v in INL_INT or v in F16C else hx(v),
    "BF16": lambda v: lit(v) if (v & 0xFFFF) in INL16 or (v & 0xFFFF) in BF16C else hx(v),
    "V2BF16": lambda v: lit(v) if v in INL_INT or v in BF16C else hx(v),
    "F64": lambda v: "0" if v == 0 else F64H.get(v, hx(v)),
    "B64": lambda v: lit(v) if v <= 64 else hx(v),
    "V32": lambda v: plain32(v) + "/*Invalid immediate*/",
}
PROBE_LITS = [0, 1, 0x41, 0xFFFFFFFF, 0xFFFFFFEF, 0x3C00, 0x3118, 0xFFFF3C00, 0x3F800000, 0x3E22F983,
              0x12345678, 0x3FF00000, 0x80000000, 0x3F80, 0x3E22, 0xFFFF3F80, 0x40000000]


SDWA_PROBES = [("SDWA", 0), ("SDWA_S0_SEXT", 1 << 19), ("SDWA_S0_NEG", 1 << 20), ("SDWA_S1_SEXT", 1 << 27),
               ("SDWA_S1_NEG", 1 << 28), ("SDWA_CLAMP", 1 << 13), ("SDWA_OMOD", 1 << 14)]
DPP_PROBES = [("DPP", 0), ("DPP_S0_NEG", 1 << 20), ("DPP_S1_NEG", 1 << 22)]


def words(*ws):
    return b"".join((w & 0xFFFFFFFF).to_bytes(4, "little") for w in ws)


def enc(kind, op, src0, vdst=4, vsrc1=6):
    if kind == "vop2": return (op << 25) | (vdst << 17) | (vsrc1 << 9) | src0
    if kind == "vop1": return (0x3F << 25) | (vdst << 17) | (op << 9) | src0
    return (0x3E << 25) | (op << 17) | (vsrc1 << 9) | src0


def split_ops(text):
    parts = text.split(" ", 1)
    return parts[0], ([] if len(parts) == 1 else parts[1].split(", "))


def probe(kind, nops):
    """Returns {(op, cpu): info} for every opcode valid on some cpu."""
    out = {}
    for cpu in CPUS:
        base = [words(enc(kind, op, 258), 0x12345678) for op in range(nops)]
        base0 = [words(enc(kind, op, 258, vdst=0), 0x12345678) for op in range(nops)]
        rb = safe_decode_many(cpu, base + base0)
        for op in range(nops):
            t, n = rb[op]
            zero_dst = False
            if not t or t == "<crash>":
                t, n = rb[nops + op]
                zero_dst = True
                if not t or t == "<crash>":
                    continue
            out[(op, cpu)] = {"text": t, "size": n, "zero_dst": zero_dst}
        # Literal probes for the source class.
        ops = [op for op in range(nops) if (op, cpu) in out]
        qs = []
        for op in ops:
            vd = 0 if out[(op, cpu)]["zero_dst"] else 4
            for v in PROBE_LITS:
                qs.append(words(enc(kind, op, 255, vdst=vd), v))
        r = safe_decode_many(cpu, qs)
        for i, op in enumerate(ops):
            out[(op, cpu)]["lits"] = r[i * len(PROBE_LITS):(i + 1) * len(PROBE_LITS)]
        r = safe_decode_many(cpu, [words(enc(kind, op, 3, vdst=0 if out[(op, cpu)]["zero_dst"] else 4)) for op in ops])
        for i, op in enumerate(ops):
            out[(op, cpu)]["sgpr"] = r[i][0] or ""
        # SDWA and DPP: validity with a canonical second dword, then which
        # modifier bits each accepts.
        qs = []
        for op in ops:
            vd = 0 if out[(op, cpu)]["zero_dst"] else 4
            sb = 0x00060602 if kind == "vop1" else 0x06060602
            for name, bit in SDWA_PROBES:
                qs.append(words(enc(kind, op, 0xF9, vdst=vd), sb | bit))
            for name, bit in DPP_PROBES:
                qs.append(words(enc(kind, op, 0xFA, vdst=vd), 0xFF0000E4 | bit))
        # Operand-less opcodes: an SDWA / DPP dword with every field clear.
        bare = safe_decode_many(cpu, [words(enc(kind, op, s0, vdst=0), 0xE4) for op in ops for s0 in (0xF9, 0xFA)])
        for i, op in enumerate(ops):
            out[(op, cpu)]["bare"] = {"SDWA": bare[2 * i][1] == 8, "DPP": bare[2 * i + 1][1] == 8}
        # vsrc1's constant printing, seen through an SDWA scalar src1 (0.5):
        # 16-bit integer operands show the f16 bit pattern.
        if kind != "vop1":
            s1 = safe_decode_many(cpu, [words(enc(kind, op, 0xF9, vdst=4, vsrc1=240), 0x86060602) for op in ops])
            for i, op in enumerate(ops):
                out[(op, cpu)]["src1_i16"] = "0x3800" in (s1[i][0] or "")
        r = safe_decode_many(cpu, qs)
        n = len(SDWA_PROBES) + len(DPP_PROBES)
        for i, op in enumerate(ops):
            got = r[i * n:(i + 1) * n]
            ext = []
            ok = lambda x: bool(x[0]) and x[0] != "<crash>"
            if ok(got[0]):
                ext.append("SDWA")
                ext += [name for (name, bit), g in zip(SDWA_PROBES[1:], got[1:len(SDWA_PROBES)]) if ok(g)]
                if kind != "vopc" and "dst_sel:" not in got[0][0]:
                    ext.append("SDWA_NO_DST_SEL")
                # Modifier bits accepted but not printed.
                if ok(got[2]) and got[2][0] == got[0][0]:
                    ext.append("SDWA_S0_HIDDEN")
                if ok(got[4]) and got[4][0] == got[0][0]:
                    ext.append("SDWA_S1_HIDDEN")
            d = got[len(SDWA_PROBES):]
            if ok(d[0]):
                ext.append("DPP")
                ext += [name for (name, bit), g in zip(DPP_PROBES[1:], d[1:]) if ok(g)]
                if ok(d[1]) and d[1][0] == d[0][0]:
                    ext.append("DPP_S0_HIDDEN")
                if ok(d[2]) and d[2][0] == d[0][0]:
                    ext.append("DPP_S1_HIDDEN")
            out[(op, cpu)]["ext"] = ext
    return out


def src0_index(kind, shape_ops):
    return 0 if kind == "vopc" else 1


def classify(kind, info):
    """Source-0 value class from the literal probes."""
    name, ops = split_ops(info["text"])
    if not ops:
        return None
    pos = 1 + (1 if len(ops) > 1 and ops[1] == "vcc" and kind == "vop2" else 0)
    if kind == "vopc":
        pos = 1
    got = []
    for (t, n), v in zip(info["lits"], PROBE_LITS):
        if not t or t == "<crash>":
            return "?"
        got.append(split_ops(t)[1][pos].split(" ;")[0])
    for cls, m in MODELS.items():
        if all(g == m(v) for g, v in zip(got, PROBE_LITS)):
            return cls
    return "?" + repr(got)


def reg_kind(tok):
    """(file, width) of a printed register operand."""
    tok = tok.split("/*")[0]
    if tok == "vcc": return ("vcc", 2)
    f = tok[0]
    if "[" in tok:
        a, b = tok[2:-1].split(":")
        return (f, int(b) - int(a) + 1)
    return (f, 1)


def main():
    rows = {}
    order = []
    idx = {k: {c: {} for c in CPUS} for k in ("vop1", "vop2", "vopc")}
    for kind, nops in (("vop2", 62), ("vop1", 256), ("vopc", 256)):
        info = probe(kind, nops)
        for (op, cpu), inf in sorted(info.items()):
            name, ops = split_ops(inf["text"])
            flags = []
            base = name
            for suf in ("_e32",):
                if base.endswith(suf): base = base[: -len(suf)]
            if base == name: flags.append("NO_SUFFIX")
            if inf["zero_dst"]: flags.append("NO_OPERANDS")
            dst = src0w = src1w = None
            if kind == "vopc":
                dst = "Vcc"
                src0w = reg_kind(ops[1])[1]; src1w = reg_kind(ops[2])[1]
            elif not ops:
                dst = "None"
            else:
                f, w = reg_kind(ops[0])
                dst = {"v": "V", "s": "S", "a": "A"}[f] + str(32 * w)
                rest = ops[1:]
                if rest and rest[0] == "vcc":
                    flags.append("CARRY_OUT"); rest = rest[1:]
                if rest and rest[-1] == "vcc":
                    flags.append("VCC_IN"); rest = rest[:-1]
                if kind == "vop2" and len(rest) == 3:
                    if rest[1] == "0x12345678": flags.append("MADMK"); rest = [rest[0], rest[2]]
                    elif rest[2] == "0x12345678": flags.append("MADAK"); rest = rest[:2]
                src0w = reg_kind(rest[0])[1] if rest else None
                src1w = reg_kind(rest[1])[1] if len(rest) > 1 else None
                if rest and rest[0].startswith("a"): flags.append("SRC0_AGPR")
            cls = classify(kind, inf) if dst != "None" else None
            if cls and cls.startswith("?"):
                print(f"// WARNING {kind} {op:#x} {cpu}: {name} unclassified {cls}", file=sys.stderr)
                cls = "B32"
            if cls == "V32" and "SRC0_AGPR" in flags: cls = "A32"
            if cls == "V32" and "VRegOrLds_32" in inf["sgpr"]: cls = "VL32"
            if cls == "B32" and src0w == 2: cls = "B64"
            ext = tuple(inf.get("ext", []))
            if inf["zero_dst"]:
                ext = tuple(e for e in ("SDWA", "DPP") if inf["bare"][e])
            if kind == "vopc":
                ext = tuple(e for e in ext if e not in ("SDWA_CLAMP", "SDWA_OMOD"))
            if src1w == 1 and inf.get("src1_i16"):
                src1w = "I16"
            key = (kind, base, dst, cls, src0w, src1w, tuple(flags), ext)
            if key not in rows:
                rows[key] = len(order); order.append(key)
            idx[kind][cpu][op] = rows[key]
    print("// @generated by scripts/gen/vop_tables.py from LLVM 22's disassembler; do not edit.")
    print("//! VOP1 / VOP2 / VOPC opcode tables: one row per opcode meaning, and per-target")
    print("//! opcode-to-row maps (`NONE` = not a valid opcode on that target).")
    print()
    print("use super::super::vop::{Cls, Dst, VopOp, ext::*, flags::*};")
    print()
    print("macro_rules! op {")
    print("    ($n:literal, $d:ident, $s0:ident, $s1:ident, $f:expr, $x:expr) => {")
    print("        VopOp {")
    print("            name: $n,")
    print("            e32: concat!($n, \"_e32\"),")
    print("            sdwa: concat!($n, \"_sdwa\"),")
    print("            dpp: concat!($n, \"_dpp\"),")
    print("            dst: Dst::$d,")
    print("            src0: Cls::$s0,")
    print("            src1: Cls::$s1,")
    print("            flags: $f,")
    print("            ext: $x,")
    print("        }")
    print("    };")
    print("}")
    print()
    print("pub const NONE: u16 = u16::MAX;")
    print()
    print(f"pub static OPS: [VopOp; {len(order)}] = [")
    for (kind, base, dst, cls, s0w, s1w, flags, ext) in order:
        fl = " | ".join(flags) if flags else "0"
        ex = " | ".join(ext) if ext else "0"
        c0 = f"Cls::{cls}" if cls else "Cls::None"
        s1 = "Cls::None" if not s1w else {2: "Cls::B64", 1: "Cls::B32", "I16": "Cls::I16"}[s1w]
        print(f'    op!("{base}", {dst}, {c0[5:]}, {s1[5:]}, {fl}, {ex}),')
    print("];")
    for kind, n in (("vop2", 62), ("vop1", 256), ("vopc", 256)):
        print()
        print(f"/// {kind.upper()} opcode to row of [`OPS`], per target (gfx90a, gfx942, gfx950, gfx908).")
        print(f"pub static {kind.upper()}: [[u16; {n}]; {len(CPUS)}] = [")
        for cpu in CPUS:
            vals = [idx[kind][cpu].get(op, None) for op in range(n)]
            s = ", ".join("NONE" if v is None else str(v) for v in vals)
            print(f"    [{s}],")
        print("];")


if __name__ == "__main__":
    main()
