#!/usr/bin/env python3
"""Cross-checks the corpus listings against LLVM's disassembler C API (the
oracle of scripts/dev/llvm_oracle.py): every instruction line of
build/corpus/*/*.objdump is decoded again from its bytes (with the rest of its
run of contiguous bytes after it, as the corpus test does) and the text and
size must equal what llvm-objdump printed.

This validates the corpus itself and the way crates/isa/tests/it/corpus.rs reads
it: that the objdump text is the oracle's text (no symbolised operands), that
the byte runs are reassembled correctly, and that data lines (`.long`) are
exactly the words the oracle rejects.

  scripts/corpus_check.py [--out build/corpus] [--show 20]
"""

import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts" / "dev"))
from llvm_oracle import Oracle  # noqa: E402

LABEL = re.compile(r"^([0-9a-f]+) <(.*)>:$")
DATA = (".long", ".byte", ".short", ".quad")


def norm(s: str) -> str:
    return " ".join(s.split())


def parse(text: str):
    """Yields runs of contiguous bytes: (bytes, [(addr, off, len, text|None)])."""
    regions, cur = [], None
    for n, line in enumerate(text.splitlines(), 1):
        t = line.strip()
        if not t or t.startswith(";") or "file format" in t:
            continue
        if t.startswith("Disassembly of section"):
            if cur:
                regions.append(cur)
            cur = None
            continue
        if LABEL.match(t):
            continue
        pos = line.rfind("//")
        if pos < 0:
            raise ValueError(f"line {n}: unrecognised: {line!r}")
        asm, comment = norm(line[:pos]), line[pos + 2:]
        addr_s, rest = comment.split(":", 1)
        addr = int(addr_s, 16)
        data = bytearray()
        for tok in rest.split():
            if tok.startswith("<"):
                break
            if len(tok) == 8:
                data += int(tok, 16).to_bytes(4, "little")
            elif len(tok) == 2:
                data.append(int(tok, 16))
            else:
                raise ValueError(f"line {n}: bad bytes: {line!r}")
        is_data = any(asm == d or asm.startswith(d + " ") for d in DATA)
        if cur is None or cur[2] + len(cur[0]) != addr:
            if cur:
                regions.append(cur)
            cur = [bytearray(), [], addr]
        cur[1].append((addr, len(cur[0]), len(data), None if is_data else asm))
        cur[0] += data
    if cur:
        regions.append(cur)
    return regions


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "corpus")
    ap.add_argument("--show", type=int, default=20)
    args = ap.parse_args()
    if not args.out.is_dir():
        print(f"corpus_check: {args.out} missing: run `make corpus`", file=sys.stderr)
        return 1
    bad_total = 0
    shown = 0
    for tdir in sorted(p for p in args.out.iterdir() if p.is_dir() and not p.name.startswith(".")):
        oracles = {}
        n = bad = 0
        for f in sorted(tdir.glob("*.objdump")):
            text = f.read_text()
            # corpus.py marks wave64 listings of RDNA targets and gfx1201's
            # real-true16 listings.
            head = text.splitlines()[:2]
            features = ",".join(f for f, mark in (("+wavefrontsize64", "; rocjitsu-corpus: wavefront-size 64"),
                                                  ("+real-true16", "; rocjitsu-corpus: real-true16"))
                                if mark in head)
            if features not in oracles:
                oracles[features] = Oracle(tdir.name, features)
            oracle = oracles[features]
            for data, items, _start in parse(text):
                for addr, off, size, text in items:
                    n += 1
                    got, got_size = oracle.decode(bytes(data[off:]))
                    ok = (got is None) if text is None else (got is not None and norm(got) == text and got_size == size)
                    if not ok:
                        bad += 1
                        if shown < args.show:
                            shown += 1
                            print(f"  {tdir.name}/{f.name} @0x{addr:x}: oracle {got!r} ({got_size} bytes) | "
                                  f"objdump {text!r} ({size} bytes)")
        print(f"corpus_check {tdir.name}: {n} lines, {bad} differ from the oracle")
        bad_total += bad
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
