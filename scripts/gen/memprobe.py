"""Shared probing helpers for the memory-encoding table generators (ds.py,
flat.py, mubuf.py, mtbuf.py): learn from LLVM 22's disassembler which bits of
an opcode's encoding must hold a fixed value and which register fields print
as which operand."""
import os, re, sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "dev"))
from llvm_oracle import Oracle  # noqa: E402

CPUS = ["gfx90a", "gfx942", "gfx950", "gfx908"]
TAIL = 0x12345678


def dec(o, w0, w1):
    return o.decode_words([w0, w1, TAIL])


def fixed_bits(o, w0, w1, free0):
    """Bits (as a 64-bit mask, w1 in the high half) whose flip makes the
    baseline (w0, w1) invalid; bits in `free0` of w0 are not probed."""
    m = 0
    for b in range(64):
        if b < 32 and (free0 >> b) & 1:
            continue
        a0 = w0 ^ (1 << b) if b < 32 else w0
        a1 = w1 ^ (1 << (b - 32)) if b >= 32 else w1
        if dec(o, a0, a1)[0] is None:
            m |= 1 << b
    return m


REG = re.compile(r"^(v|a|s|ttmp)(?:(\d+)|\[(\d+):(\d+)\])")


def parse_reg(tok):
    m = REG.match(tok)
    if not m:
        return None
    if m.group(2) is not None:
        return m.group(1), int(m.group(2)), 1
    lo, hi = int(m.group(3)), int(m.group(4))
    return m.group(1), lo, hi - lo + 1


def operands(text):
    """Splits LLVM text into mnemonic, operand list and the trailing modifiers."""
    parts = text.split(None, 1)
    if len(parts) == 1:
        return parts[0], [], ""
    rest = parts[1]
    toks = rest.split(", ")
    last = toks[-1].split(" ")
    toks[-1] = last[0]
    if len(toks) == 1 and not (REG.match(toks[0]) or toks[0] == "off"):
        return parts[0], [], rest
    return parts[0], toks, " ".join(last[1:])


def op_classes(text):
    """The register class LLVM names in each operand's annotation ("" for an
    operand without one), in operand order."""
    parts = text.split(None, 1)
    if len(parts) == 1:
        return []
    rest = re.sub(r"/\*.*?\*/", lambda m: m.group(0).replace(",", "`"), parts[1])
    out = []
    for tok in rest.split(", "):
        m = re.search(r"operand has '(\w+)'", tok)
        out.append(m.group(1) if m else "")
    return out


def rust_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
