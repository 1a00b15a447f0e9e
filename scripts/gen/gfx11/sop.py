#!/usr/bin/env python3
"""Probes LLVM 22's disassembler for the scalar ALU encodings (SOP1, SOP2,
SOPK, SOPC, SOPP) of GFX11 (gfx1100 and gfx1151; writes
crates/isa/src/gfx11/tables/sop.rs) or, with `gfx12`, of GFX12 (gfx1201;
writes crates/isa/src/gfx12/tables/sop.rs). Both families share the field
layouts and the row types of `gfx11::sop`.

Each opcode is decoded with recognisable register numbers in its fields
(sdst=4, ssrc0=2, ssrc1=8); the printed operand list tells which fields are
operands and how wide they are; a second probe with other values in the
fields that are not operands tells whether LLVM ignores them. Also written:
the symbolic `hwreg` and `sendmsg` names.

    python3 scripts/gen/gfx11/sop.py [gfx12]
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import FeatOracle, decode_many, header, table_path, words  # noqa: E402

FAMILY = sys.argv[1] if len(sys.argv) > 1 else "gfx11"
CPUS = {"gfx10": ["gfx1010", "gfx1030"], "gfx11": ["gfx1100", "gfx1151"], "gfx12": ["gfx1201"]}[FAMILY]
OUT = table_path("sop.rs")
LIT = 0x12345678
ORACLES = [FeatOracle(c) for c in CPUS]


def mask(texts):
    """Target bit mask (bit i: CPUS[i]) of the inputs that decoded."""
    return sum(1 << i for i, t in enumerate(texts) if t and t != "<crash>")


def texts(ws):
    """LLVM's text per target (None: invalid). GFX12 probes run
    crash-isolated: some words crash LLVM 22 there (taken as invalid)."""
    if FAMILY == "gfx11":
        return [o.decode(words(*ws))[0] for o in ORACLES]
    out = []
    for c in CPUS:
        t = decode_many(c, [words(*ws)])[0][0]
        out.append(None if t == "<crash>" else t)
    return out


def one(ts):
    s = {t for t in ts if t}
    assert len(s) == 1, s
    return s.pop()


def width_of(tok, regs):
    m = re.fullmatch(r"s(\d+)", tok)
    if m:
        return regs[int(m.group(1))], 1
    m = re.fullmatch(r"s\[(\d+):(\d+)\]", tok)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        return regs[lo], hi - lo + 1
    raise ValueError(tok)


def alu_rows(kind, word_of, nops):
    """Rows `AluRow { op, name, dst, src0, src1, flags, targets }`; widths
    in dwords (0: not an operand); flags: 1 src0 takes registers only, 2
    src0 is an 8-bit sendmsg immediate, 4 an unused field must be zero, 8
    src0 and 16 src1 read 16-bit floats (a literal prints its low half),
    32 a literal K follows src1 (`s_fmaak`), 64 K sits between src0 and
    src1 (`s_fmamk`), 128 the sources read 16-bit integer-typed values
    (inline floats print as f16 bit patterns), 256 src0 names
    src_lds_direct without the register-class note."""
    rows = []
    for op in range(nops):
        ts = texts(word_of(op, 4, 2, 8))
        if not any(ts):
            continue
        t = one(ts)
        name, _, ops = t.partition(" ")
        w = {"dst": 0, "src0": 0, "src1": 0}
        flags = 0
        regs = {4: "dst", 2: "src0", 8: "src1"}
        toks = [x for x in ops.split(", ") if x]
        if toks and toks[-1] == "0x12345678":
            flags |= 32
            toks = toks[:-1]
        elif len(toks) == 4 and toks[2] == "0x12345678":
            flags |= 64
            toks = toks[:2] + toks[3:]
        for tok in toks:
            if tok.startswith("sendmsg("):
                w["src0"] = 1
                flags |= 2
                continue
            f, n = width_of(tok, regs)
            w[f] = n
        if w["src0"] and not flags & 2:
            t0 = one(texts(word_of(op, 4, 0x80, 8)))
            if "Invalid immediate" in t0:
                flags |= 1
        # 16-bit float sources: the literal prints as its low half; 16-bit
        # integer-typed ones print inline floats as f16 bit patterns too.
        for f, bit, ws in (("src0", 8, (4, 255, 8)), ("src1", 16, (4, 2, 255))):
            # (A literal crashes LLVM 22 on GFX12's barrier opcodes: no
            # literal to type there.)
            tls = texts(word_of(op, *ws))
            if w[f] == 1 and not flags & 3 and any(tls):
                tl = one(tls)
                if "0x5678" in tl.split(", ") or ", 0x5678" in tl:
                    flags |= bit
        # src_lds_direct in src0: printed without the SReg_32 note?
        if w["src0"] and not flags & 3:
            tls = texts(word_of(op, 4, 254, 8))
            if any(tls) and "src_lds_direct" in one(tls) and "Invalid register" not in one(tls):
                flags |= 256
        if w["src0"] == 1 and not flags & 3:
            th = one(texts(word_of(op, 4, 240, 8)))
            if "0x3800" in th:
                flags |= 128
                flags &= ~(8 | 16)
        # Fields that are not operands: other values decode the same?
        other = {f: (v if w[f] == 0 else {"dst": 4, "src0": 2, "src1": 8}[f])
                 for f, v in (("dst", 6), ("src0", 10), ("src1", 12))}
        t2 = texts(word_of(op, other["dst"], other["src0"], other["src1"]))
        if not any(t2):
            flags |= 4
        else:
            assert one(t2) == t, (t, t2)
        rows.append(f"    AluRow {{ op: {op}, name: \"{name}\", dst: {w['dst']}, src0: {w['src0']}, "
                    f"src1: {w['src1']}, flags: {flags}, targets: {mask(ts)} }},")
    return f"pub static {kind}: &[AluRow] = &[\n" + "\n".join(rows) + "\n];\n"


def sopk_rows():
    rows = []
    for op in range(32):
        w0 = 0xB0000000 | (op << 23) | (4 << 16) | 0x0604
        if (w0 >> 23) in (0x17D, 0x17E, 0x17F):
            continue
        ts = texts([w0, LIT])
        if not any(ts):
            continue
        t = one(ts)
        name, _, args = t.partition(" ")
        if name.startswith("s_setreg_imm32"):
            k = "SetRegImm32"
        elif args.startswith("hwreg("):
            k = "SetReg"
        elif "hwreg(" in args:
            k = "GetReg"
        elif name == "s_version":
            k = "Version"
        elif args == "s[4:5], 1540":
            k = "Branch64"
        elif args == "s4, 1540":
            k = "Dec"
        elif args == "s4, 0x604":
            k = "Imm"
        else:
            raise ValueError(t)
        zero = 0
        if k in ("Version", "SetRegImm32"):
            t2 = texts([w0 & ~(0x7F << 16) | (6 << 16), LIT])
            zero = 0 if any(t2) else 1
        rows.append(f"    KRow {{ op: {op}, name: \"{name}\", kind: SopkKind::{k}, sdst_zero: {str(bool(zero)).lower()}, targets: {mask(ts)} }},")
    return "pub static SOPK: &[KRow] = &[\n" + "\n".join(rows) + "\n];\n"


def sopp_rows():
    rows = []
    for op in range(128):
        w = lambda imm: [0xBF800000 | (op << 16) | imm]
        t0s = texts(w(0))
        if not any(t0s):
            continue
        # The depctr fields differ per target (gfx1010 has no hold_cnt).
        t0 = one(t0s) if not all(t and "depctr" in t for t in t0s) else t0s[-1]
        name = t0.split(" ")[0]
        t1 = texts(w(1))[0]
        t7f = texts(w(0x7F))[0]
        args = t0[len(name):]
        if "vmcnt" in args:
            k = "Waitcnt"
        elif "depctr" in args:
            k = "DepCtr"
        elif name == "s_delay_alu":
            k = "DelayAlu"
        elif "sendmsg" in args:
            k = "Sendmsg"
        elif t1 is None:
            k = "NoImm"
        elif t0 == name:
            k = "OptionalImm"
        elif t7f.endswith(" 127"):
            k = "Branch"
        elif args == " 0x0":
            k = "Hex"
        elif t7f.endswith(" 0x7f") and args == " 0":
            k = "Imm"
        else:
            raise ValueError(t0, t7f)
        rows.append(f"    PRow {{ op: {op}, name: \"{name}\", kind: SoppKind::{k}, targets: {mask(t0s)} }},")
    return "pub static SOPP: &[PRow] = &[\n" + "\n".join(rows) + "\n];\n"


def getreg_op():
    """The SOPK opcode of s_getreg_b32 (0x11 on GFX11/12, 0x12 on GFX10)."""
    for op in range(32):
        t = texts([0xB0000000 | (op << 23) | (4 << 16) | (31 << 11)])
        if any(x and x.startswith("s_getreg_b32 ") for x in t):
            return op
    raise ValueError("no s_getreg_b32")


def hwreg_names():
    rows = []
    op = getreg_op()
    for i in range(64):
        w = [0xB0000000 | (op << 23) | (4 << 16) | (31 << 11) | i]
        names = []
        for t in texts(w):
            n = t.split("hwreg(")[1].rstrip(")")
            names.append(None if n.isdigit() else n)
        if any(names):
            rows.append(f"    ({i}, \"{one(names)}\", {mask(names)}),")
    return ("/// Symbolic `hwreg` names: (id, name, targets).\n"
            "pub static HWREG: &[(u8, &str, u8)] = &[\n" + "\n".join(rows) + "\n];\n")


def sopp_op(name):
    for op in range(128):
        for imm in (0, 1):
            t = texts([0xBF800000 | (op << 16) | imm])
            if any(x and x.split()[0] == name for x in t):
                return op
    raise ValueError(name)


def sendmsg_texts():
    """GFX10's `sendmsg(...)` text per target for each immediate whose set
    bits are in the message (3:0), operation (6:4) and stream (9:8)
    fields, indexed by `stream << 7 | op << 4 | msg` ("": printed as the
    decimal immediate). GFX11 and GFX12 name messages by id alone (see
    `sendmsg_names`) and have no table."""
    if FAMILY != "gfx10":
        return ("/// GFX10's `sendmsg` texts (none in this family).\n"
                "pub static SENDMSG_TEXT: &[[&str; 512]] = &[];\n")
    op = sopp_op("s_sendmsg")
    out = ["/// `sendmsg(...)` text per target (see sop.py), indexed by",
           "/// `stream << 7 | op << 4 | msg` (\"\": the decimal immediate).",
           "pub static SENDMSG_TEXT: &[[&str; 512]] = &["]
    for o in ORACLES:
        out.append("    [")
        row = []
        for k in range(512):
            v = (k >> 7) << 8 | (k & 0x7F)
            t = o.decode(words(0xBF800000 | (op << 16) | v))[0]
            arg = t.split(" ", 1)[1]
            row.append(f'"{arg}"' if arg.startswith("sendmsg(") else '""')
        for i in range(0, 512, 4):
            out.append("        " + " ".join(x + "," for x in row[i:i + 4]))
        out.append("    ],")
    out.append("];")
    return "\n".join(out) + "\n"


def waitcnt_layout():
    """Which counter bit each bit of `s_waitcnt`'s immediate holds:
    (counter, bit) with counter 0 vmcnt, 1 expcnt, 2 lgkmcnt, 3 none,
    learned by clearing one bit of an all-ones immediate."""
    names = ("vmcnt", "expcnt", "lgkmcnt")
    try:
        op = sopp_op("s_waitcnt")
    except ValueError:
        op = None
    lay = []
    for b in range(16):
        ent = (3, 0)
        if op is not None:
            t = texts([0xBF800000 | (op << 16) | (0xFFFF ^ (1 << b))])[0]
            got = dict(re.findall(r"(\w+)\((\d+)\)", t.split(" ", 1)[1]))
            if len(got) == 1:
                (name, val), = got.items()
                # The cleared bit is the counter's lowest zero bit.
                v = int(val)
                bit = next(i for i in range(8) if not v >> i & 1)
                ent = (names.index(name), bit)
        lay.append(ent)
    return ("/// `s_waitcnt`'s immediate: (counter, bit) per bit, counter 0 vmcnt,\n"
            "/// 1 expcnt, 2 lgkmcnt, 3 none.\n"
            "pub static WAITCNT: [(u8, u8); 16] = [" + ", ".join(f"({c}, {b})" for c, b in lay) + "];\n")


def depctr_hold():
    """Target mask of the targets whose `s_waitcnt_depctr` has the
    hold_cnt field (gfx1010's has not)."""
    op = next((op for op in range(128)
               if any(t and " depctr_" in t for t in texts([0xBF800000 | (op << 16)]))), None)
    if op is None:
        return "/// Targets whose `s_waitcnt_depctr` has `depctr_hold_cnt`.\npub static DEPCTR_HOLD_CNT: u8 = 0;\n"
    return ("/// Targets whose `s_waitcnt_depctr` has `depctr_hold_cnt`.\n"
            f"pub static DEPCTR_HOLD_CNT: u8 = "
            f"{mask([t if t and 'depctr_hold_cnt' in t else None for t in texts([0xBF800000 | (op << 16)])])};\n")


def sendmsg_names():
    rows = []
    if FAMILY == "gfx10":
        return ("/// Symbolic `sendmsg` message names (GFX10: see `SENDMSG_TEXT`).\n"
                "pub static SENDMSG: &[(u8, &str, u8)] = &[];\n")
    for i in range(256):
        names = []
        for t in texts([0xBF800000 | (0x36 << 16) | i]):
            n = t.split("sendmsg(")[1].rstrip(")")
            names.append(None if n[0].isdigit() else n)
        if any(names):
            rows.append(f"    ({i}, \"{one(names)}\", {mask(names)}),")
    return ("/// Symbolic `sendmsg` message names: (id, name, targets).\n"
            "pub static SENDMSG: &[(u8, &str, u8)] = &[\n" + "\n".join(rows) + "\n];\n")


def main():
    sop2 = lambda op, d, s0, s1: [0x80000000 | (op << 23) | (d << 16) | (s1 << 8) | s0, LIT]
    sop1 = lambda op, d, s0, s1: [0xBE800000 | (d << 16) | (op << 8) | s0, LIT]
    sopc = lambda op, d, s0, s1: [0xBF000000 | (op << 16) | (s1 << 8) | s0, LIT]
    parts = [
        header("sop.py", "Scalar ALU opcode tables: mnemonic, operand widths in dwords (0: the\n"
               "//! field is not an operand), flags (see `AluRow`) and targets.",
               CPUS, "" if FAMILY == "gfx11" else FAMILY),
        "use crate::gfx11::sop::{AluRow, KRow, PRow, SopkKind, SoppKind};\n\n",
        alu_rows("SOP2", sop2, 0x60), "\n",
        alu_rows("SOP1", sop1, 256), "\n",
        alu_rows("SOPC", sopc, 128), "\n",
        sopk_rows(), "\n", sopp_rows(), "\n", hwreg_names(), "\n", sendmsg_names(), "\n",
        sendmsg_texts(), "\n", depctr_hold(), "\n", waitcnt_layout(),
    ]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("".join(parts))


if __name__ == "__main__":
    main()
