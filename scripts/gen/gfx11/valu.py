"""Shared analysis for the GFX11 vector ALU table generators: splitting
LLVM's text into operands and modifiers, and telling an operand's value
type from how LLVM prints constants in it."""
import re

# Text LLVM appends to an operand (a comment) or after the operands.
NOTE = re.compile(r"/\*[^*]*\*/")
MODS = re.compile(r" (op_sel|op_sel_hi|neg_lo|neg_hi|index_key|quad_perm|row_\w+|bank_mask|bound_ctrl|fi|dpp8|wait_exp|wait_va_vdst|wait_vdst|wait_vm_vsrc|byte_sel):| clamp| mul:| div:| fi:1| bound_ctrl| dmask:| dim:| unorm\b| glc\b| slc\b| dlc\b| r128\b| a16\b| tfe\b| lwe\b| d16\b")


def split(text):
    """(mnemonic, [operand tokens], modifier text, warning text)."""
    warn = ""
    if " ; " in text:
        text, warn = text.split(" ; ", 1)
    notes = []

    def keep(m):
        notes.append(m.group(0))
        return f"\x00{len(notes) - 1}\x00"

    text = NOTE.sub(keep, text)
    name, _, rest = text.partition(" ")
    m = MODS.search(" " + rest)
    mods = ""
    if m:
        cut = m.start()
        rest, mods = rest[:cut], rest[cut:]
    toks = [t.strip() for t in rest.split(",")] if rest.strip() else []
    back = lambda s: re.sub("\x00(\\d+)\x00", lambda m: notes[int(m.group(1))], s)
    return name, [back(t) for t in toks], back(mods).strip(), warn


def strip_note(tok):
    """(token without its comment, the register class the comment names or
    "imm" for an invalid immediate, or "")."""
    m = NOTE.search(tok)
    if not m:
        return tok, ""
    c = m.group(0)
    cls = re.search(r"'([^']+)'", c)
    return tok[: m.start()], (cls.group(1) if cls else "imm" if "immediate" in c else c)


REG = re.compile(r"^(v|s|ttmp)(\d+)(\.[lh])?$|^(v|s|ttmp)\[(\d+):(\d+)\]$")


def reg(tok):
    """(file, first, count, half) of a register token, else None."""
    tok = tok.strip("-|")
    for p in ("neg(", "abs("):
        if tok.startswith(p):
            tok = tok[len(p):-1]
    m = REG.match(tok)
    if not m:
        return None
    if m.group(1):
        return m.group(1), int(m.group(2)), 1, (m.group(3) or "")[1:]
    return m.group(4), int(m.group(5)), int(m.group(6)) - int(m.group(5)) + 1, ""


# How LLVM 22 prints inline constants and literals per value type (the
# same rules crates/isa/src/gfx9/operand.rs implements).
F32_INL = [0x3F000000, 0xBF000000, 0x3F800000, 0xBF800000, 0x40000000, 0xC0000000, 0x40800000, 0xC0800000, 0x3E22F983]
F16_INL = [0x3800, 0xB800, 0x3C00, 0xBC00, 0x4000, 0xC000, 0x4400, 0xC400, 0x3118]
BF16_INL = [0x3F00, 0xBF00, 0x3F80, 0xBF80, 0x4000, 0xC000, 0x4080, 0xC080, 0x3E22]
F64_HI = [0x3FE00000, 0xBFE00000, 0x3FF00000, 0xBFF00000, 0x40000000, 0xC0000000, 0x40100000, 0xC0100000]
FTXT = ["0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0", "0.15915494"]


def _i32(v):
    return v - (1 << 32) if v & 0x80000000 else v


def _i16(v):
    v &= 0xFFFF
    return v - (1 << 16) if v & 0x8000 else v


def lit_text(ty, v):
    lo = v & 0xFFFF
    if ty == "P32":
        # printImmediate32 of an operand that takes no constant.
        if -16 <= _i32(v) <= 64:
            return str(_i32(v))
        return FTXT[F32_INL.index(v)] if v in F32_INL else f"0x{v:x}"
    inl32 = -16 <= _i32(v) <= 64 or v in F32_INL
    if ty in ("I32", "F32", "V2I16"):
        marked, shown = inl32, v
    elif ty == "F16":
        marked, shown = (-16 <= _i16(lo) <= 64 or lo in F16_INL), lo
    elif ty == "F16W":
        marked, shown = (-16 <= _i16(lo) <= 64 or lo in F16_INL), v
    elif ty == "I16":
        marked, shown = inl32, lo
    elif ty == "BF16":
        marked, shown = (-16 <= _i16(lo) <= 64 or lo in BF16_INL), v
    elif ty == "V2F16":
        marked, shown = (-16 <= _i32(v) <= 64 or (lo in F16_INL and v >> 16 == 0)), v
    elif ty == "V2F16S":
        splat = lo == v >> 16 and (lo in F16_INL or lo <= 64)
        marked, shown = -16 <= _i32(v) <= 64 or splat, v
    elif ty == "V2BF16":
        marked, shown = (-16 <= _i32(v) <= 64 or (lo in BF16_INL and v >> 16 == 0)), v
    elif ty in ("F64", "V2F32"):
        if v == 0:
            return "0"
        if v in F64_HI:
            return FTXT[F64_HI.index(v)]
        marked, shown = False, v
    elif ty == "I64":
        marked, shown = v <= 64, v
    else:
        raise ValueError(ty)
    return f"lit(0x{v:x})" if marked else f"0x{shown:x}"


def inline_text(ty, field):
    i = field - 240
    if ty == "I16":
        return f"0x{F16_INL[i]:x}"
    if ty in ("F64", "I64", "V2F32") and field == 248:
        return "0.15915494309189532"
    return FTXT[i]


TYPES = ["I32", "F16", "I16", "BF16", "V2F16", "V2BF16", "V2I16", "F64", "I64", "V2F32", "P32", "V2F16S", "F16W"]
LITS = [0x12345678, 0x3C00, 0xFFFF3C00, 0x3F800000, 0x40, 0x3FF00000, 0x3F80, 0x3E22F983, 0x3C003C00]


def value_type(inl, lits):
    """The types whose printing matches: `inl` maps a field value (240, 248)
    to the text LLVM printed, `lits` a literal value to its text."""
    out = []
    for ty in TYPES:
        if all(inline_text(ty, f) == t for f, t in inl.items()) and all(
                lit_text(ty, v) == t for v, t in lits.items()):
            out.append(ty)
    return out


# DPP8 selectors probed to tell how LLVM prints an opcode's dpp8:[...]
# (see `dpp8_src`): inline integers, a negative one, a reserved value, the
# f32 constants 1.0 and 1/(2*pi), and a special register value.
DPP8_SELS = [0xC1, 0x80, 0xD0, 0xD1, 0xF2, 0xF8, 0xF9, 0x141]
F32_INLINE = [0x3F000000, 0xBF000000, 0x3F800000, 0xBF800000,
              0x40000000, 0xC0000000, 0x40800000, 0xC0800000, 0x3E22F983]


def dpp8_src_value(sel):
    """The selector field as LLVM prints it for opcodes whose DPP8 selector
    goes through its source-operand decoder: below 256, inline integers and
    the f32 inline constants become their 32-bit values (low 24 bits)."""
    if 128 <= sel <= 192:
        v = sel - 128
    elif 193 <= sel <= 208:
        v = 192 - sel
    elif 240 <= sel <= 248:
        v = F32_INLINE[sel - 240]
    else:
        v = sel
    return v & 0xFFFFFF


def dpp8_value(text):
    """The 24-bit selector printed in a dpp8:[...] modifier (None: none
    printed, as for `v_nop`)."""
    if text is None or "dpp8:[" not in text:
        return None
    sels = text.split("dpp8:[")[1].split("]")[0].split(",")
    return sum(int(x) << (3 * i) for i, x in enumerate(sels))


def dpp8_src(texts):
    """Whether LLVM prints the DPP8 selector through its source-operand
    decoder, from the texts of the `DPP8_SELS` probes (None: form invalid);
    raises if the texts fit neither the raw nor the decoded reading."""
    got = [dpp8_value(t) for t in texts]
    if all(g is None for g in got):
        return False
    raw = all(g == s for g, s in zip(got, DPP8_SELS))
    src = all(g == dpp8_src_value(s) for g, s in zip(got, DPP8_SELS))
    assert raw or src, ("dpp8 selector printed neither raw nor decoded", texts)
    return src
