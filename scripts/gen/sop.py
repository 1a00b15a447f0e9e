#!/usr/bin/env python3
"""Probes LLVM 22's disassembler for the scalar ALU encodings (SOP1, SOP2,
SOPK, SOPC, SOPP) and writes crates/isa/src/gfx9/tables/sop.rs.

Each opcode is decoded with recognisable register numbers in its fields
(sdst=2, ssrc0=4, ssrc1=6) on every target; the printed operand list tells
which fields are operands and how wide they are. One row per opcode, with a
bit mask of the targets (bit 0 gfx90a, bit 1 gfx942, bit 2 gfx950, bit 3 gfx908) that
accept it.

    python3 scripts/gen/sop.py
"""
import os, re, sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts", "dev"))
from llvm_oracle import Oracle  # noqa: E402

CPUS = ["gfx90a", "gfx942", "gfx950", "gfx908"]
OUT = os.path.join(ROOT, "crates", "isa", "src", "gfx9", "tables", "sop.rs")
LIT = 0x12345678


def width_of(tok, field_regs):
    """(field name, width) of an operand token like `s2` or `s[4:5]`."""
    m = re.fullmatch(r"s(\d+)", tok)
    if m:
        return field_regs[int(m.group(1))], 1
    m = re.fullmatch(r"s\[(\d+):(\d+)\]", tok)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        return field_regs[lo], hi - lo + 1
    raise ValueError(tok)


def alu_shape(text):
    """dst, src0, src1 widths (0 = not an operand; 9 = gpr_idx mode)."""
    name, _, ops = text.partition(" ")
    w = {"dst": 0, "src0": 0, "src1": 0}
    regs = {2: "dst", 4: "src0", 6: "src1"}
    for tok in [t for t in ops.split(", ") if t]:
        if tok.startswith("gpr_idx("):
            w["src1"] = 9
            continue
        f, n = width_of(tok, regs)
        w[f] = n
    return name, (w["dst"], w["src0"], w["src1"])


def probe(words_of_op, ops):
    """{op: (text per cpu)} for the opcodes any target accepts."""
    oracles = [Oracle(c) for c in CPUS]
    out = {}
    for op in ops:
        texts = [o.decode_words(words_of_op(op))[0] for o in oracles]
        if any(texts):
            out[op] = texts
    return out


def mask(texts):
    return sum(1 << i for i, t in enumerate(texts) if t)


def one_text(texts):
    ts = {t for t in texts if t}
    assert len(ts) == 1, ts
    return ts.pop()


def gen_alu(kind, words_of_op, nops):
    rows = []
    o = Oracle("gfx942")
    for op, texts in probe(words_of_op, range(nops)).items():
        name, (d, s0, s1) = alu_shape(one_text(texts))
        # A source that only takes registers prints constants with an
        # "Invalid immediate" note: probe with the inline constant 0 (0x80).
        reg_only = 0
        if s0 in (1, 2):
            w = words_of_op(op)
            t = o.decode_words([(w[0] & ~0xFF) | 0x80] + w[1:])[0] or ""
            reg_only |= 1 if "Invalid immediate" in t else 0
        rows.append(f"    AluRow {{ op: {op}, name: \"{name}\", dst: {d}, src0: {s0}, src1: {s1}, src0_reg_only: {str(bool(reg_only)).lower()}, targets: {mask(texts)} }},")
    return f"#[rustfmt::skip]\npub static {kind}: &[AluRow] = &[\n" + "\n".join(rows) + "\n];\n"


def gen_sopk():
    rows = []
    for op, texts in probe(lambda op: [0xB0000000 | (op << 23) | (2 << 16) | 0x0604, LIT], range(0x1D)).items():
        t = one_text(texts)
        name = t.split(" ")[0]
        if name.startswith("s_setreg_imm32"):
            k = "SetRegImm32"
        elif "hwreg(" in t and t.split(" ")[1].startswith("hwreg"):
            k = "SetReg"
        elif "hwreg(" in t:
            k = "GetReg"
        elif re.search(r"s\[2:3\], 1540$", t):
            k = "Branch64"
        elif re.search(r" s2, 0x604$", t):
            k = "Imm"
        else:
            raise ValueError(t)
        rows.append(f"    KRow {{ op: {op}, name: \"{name}\", kind: SopkKind::{k}, targets: {mask(texts)} }},")
    return "#[rustfmt::skip]\npub static SOPK: &[KRow] = &[\n" + "\n".join(rows) + "\n];\n"


def gen_sopp():
    oracles = [Oracle(c) for c in CPUS]
    rows = []
    for op in range(128):
        w = lambda imm: [0xBF800000 | (op << 16) | imm]
        t0 = [o.decode_words(w(0))[0] for o in oracles]
        if not any(t0):
            continue
        t = one_text(t0)
        name = t.split(" ")[0]
        t1 = oracles[1].decode_words(w(1))[0]
        t7f = oracles[1].decode_words(w(0x7F))[0]
        args = t[len(name):]
        if "vmcnt" in args:
            k = "Waitcnt"
        elif "sendmsg" in args:
            k = "Sendmsg"
        elif "gpr_idx" in args:
            k = "GprIdxMode"
        elif t1 is None:
            k = "NoImm"
        elif t == name:
            k = "OptionalImm"
        elif t7f.endswith(" 127"):
            k = "Branch"
        elif t7f.endswith(" 0x7f"):
            k = "Imm"
        else:
            raise ValueError(t7f)
        rows.append(f"    PRow {{ op: {op}, name: \"{name}\", kind: SoppKind::{k}, targets: {mask(t0)} }},")
    return "#[rustfmt::skip]\npub static SOPP: &[PRow] = &[\n" + "\n".join(rows) + "\n];\n"


def hwreg_names():
    oracles = [Oracle(c) for c in CPUS]
    rows = []
    for i in range(64):
        w = [0xB0000000 | (0x11 << 23) | (2 << 16) | (31 << 11) | i]
        names = []
        for o in oracles:
            n = o.decode_words(w)[0].split("hwreg(")[1].rstrip(")")
            names.append(None if n.isdigit() else n)
        if any(names):
            n = {x for x in names if x}.pop()
            rows.append(f"    ({i}, \"{n}\", {mask(names)}),")
    return ("/// Symbolic `hwreg` names: (id, name, targets).\n"
            "#[rustfmt::skip]\npub static HWREG: &[(u8, &str, u8)] = &[\n" + "\n".join(rows) + "\n];\n")


def main():
    parts = [
        "// @generated by scripts/gen/sop.py from LLVM 22's disassembler; do not edit.\n",
        "//! Scalar ALU opcode tables: mnemonic, operand widths in dwords (0: the\n"
        "//! field is not an operand; 9: a `gpr_idx` mode immediate) and the\n"
        "//! targets that accept the opcode (bit 0 gfx90a, bit 1 gfx942, bit 2 gfx950, bit 3 gfx908).\n\n",
        "use crate::gfx9::sop::{AluRow, KRow, PRow, SopkKind, SoppKind};\n\n",
        gen_alu("SOP2", lambda op: [0x80000000 | (op << 23) | (2 << 16) | (6 << 8) | 4, LIT], 0x60), "\n",
        gen_alu("SOP1", lambda op: [0xBE800000 | (2 << 16) | (op << 8) | 4, LIT], 256), "\n",
        gen_alu("SOPC", lambda op: [0xBF000000 | (op << 16) | (6 << 8) | 4, LIT], 128), "\n",
        gen_sopk(), "\n", gen_sopp(), "\n", hwreg_names(),
    ]
    with open(OUT, "w") as f:
        f.write("".join(parts))


if __name__ == "__main__":
    main()
