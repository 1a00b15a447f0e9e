#!/usr/bin/env python3
"""Differential probe of our decoder against LLVM 22 on random words of one encoding.

    scripts/dev/diff.py --cpu gfx942 --enc vop2 [--count 20000] [--seed 1] [--show 30]
    scripts/dev/diff.py --cpu gfx942 --enc vop1 --src0 0xf9     # force src0 (SDWA)

Prints the agreement rate (same text and size, or both invalid), round-trip
failures, and the first disagreements as `HEX | ours | llvm`.
Encodings: vop2 vop1 vopc sop2 sopk sop1 sopc sopp smem exp vop3 vop3p vintrp ds flat mubuf mtbuf mimg any.
"""
import argparse, os, random, subprocess, sys
sys.path.insert(0, os.path.dirname(__file__))
from llvm_oracle import safe_decode_many

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def top_bits_ok(enc, w):
    t7, t9, t4, t6 = w >> 25, w >> 23, w >> 28, w >> 26
    if enc == "any": return True
    if enc == "vop2": return w >> 31 == 0 and t7 not in (0x3E, 0x3F)
    if enc == "vop1": return t7 == 0x3F
    if enc == "vopc": return t7 == 0x3E
    if enc == "sop2": return w >> 30 == 2 and t4 != 0xB
    if enc == "sopk": return t4 == 0xB and t9 not in (0x17D, 0x17E, 0x17F)
    if enc == "sop1": return t9 == 0x17D
    if enc == "sopc": return t9 == 0x17E
    if enc == "sopp": return t9 == 0x17F
    six = {"smem": 0x30, "exp": 0x31, "vintrp": 0x35, "ds": 0x36, "flat": 0x37, "mubuf": 0x38, "mtbuf": 0x3A, "mimg": 0x3C}
    if enc in six: return t6 == six[enc]
    if enc == "vop3": return t6 == 0x34 and (w >> 23) & 7 != 7
    if enc == "vop3p": return t9 == 0x1A7
    raise SystemExit("unknown encoding " + enc)


def gen(enc, rng, src0):
    while True:
        w = rng.getrandbits(32)
        if enc not in ("any", "vop2") and not top_bits_ok(enc, w):
            # Force the top bits by rejection on the cheap families, by construction on others.
            fix = {"vop1": (0xFE000000, 0x7E000000), "vopc": (0xFE000000, 0x7C000000),
                   "sop1": (0xFF800000, 0xBE800000), "sopc": (0xFF800000, 0xBF000000), "sopp": (0xFF800000, 0xBF800000),
                   "sopk": (0xF0000000, 0xB0000000), "sop2": (0xC0000000, 0x80000000),
                   "smem": (0xFC000000, 0xC0000000), "exp": (0xFC000000, 0xC4000000), "vop3": (0xFC000000, 0xD0000000),
                   "vop3p": (0xFF800000, 0xD3800000), "vintrp": (0xFC000000, 0xD4000000), "ds": (0xFC000000, 0xD8000000),
                   "flat": (0xFC000000, 0xDC000000), "mubuf": (0xFC000000, 0xE0000000), "mtbuf": (0xFC000000, 0xE8000000),
                   "mimg": (0xFC000000, 0xF0000000)}[enc]
            w = (w & ~fix[0] & 0xFFFFFFFF) | fix[1]
        if src0 is not None:
            w = (w & ~0x1FF) | src0
        if top_bits_ok(enc, w):
            return w.to_bytes(4, "little") + rng.getrandbits(64).to_bytes(8, "little")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu", default="gfx942")
    ap.add_argument("--enc", default="any")
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=30)
    ap.add_argument("--src0", type=lambda s: int(s, 0))
    ap.add_argument("--bin", default=None, help="path to the built `dis` example")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    datas = [gen(a.enc, rng, a.src0) for _ in range(a.count)]
    ref = safe_decode_many(a.cpu, datas)
    exe = a.bin
    if exe is None:
        subprocess.run(["cargo", "build", "-q", "-p", "rocjitsu-isa", "--example", "dis"], cwd=ROOT, check=True)
        exe = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "examples", "dis")
    p = subprocess.run([exe, a.cpu], input="\n".join(d.hex() for d in datas) + "\n", capture_output=True, text=True)
    ours = p.stdout.splitlines()
    agree = crash = rt = 0
    bad = []
    for d, r, o in zip(datas, ref, ours):
        parts = o.split("\t")
        otext, osize = parts[0], int(parts[1])
        if len(parts) > 2: rt += 1
        if r[0] == "<crash>":
            crash += 1
            continue
        rtext = r[0] if r[0] is not None else "<invalid>"
        rsize = r[1] if r[0] is not None else 4
        if " ".join(otext.split()) == " ".join(rtext.split()) and (osize == rsize or rtext == "<invalid>"):
            agree += 1
        else:
            bad.append((d[:max(osize, rsize, 4)].hex(), otext, rtext))
    n = len(datas) - crash
    print(f"{a.cpu} {a.enc}: {agree}/{n} agree ({100.0 * agree / max(n, 1):.3f}%), {crash} crash LLVM, {rt} round-trip failures")
    for h, o, r in bad[: a.show]:
        print(f"  {h} | {o} | {r}")


if __name__ == "__main__":
    main()
