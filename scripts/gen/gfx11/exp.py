#!/usr/bin/env python3
"""Writes crates/isa/src/gfx11/tables/exp.rs: the EXP target names LLVM 22
prints on gfx1100 and gfx1151 (None: `invalid_target_N`).

    python3 scripts/gen/gfx11/exp.py
"""
import os, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import CPUS, FeatOracle, ROOT, header, words  # noqa: E402

OUT = os.path.join(ROOT, "crates", "isa", "src", "gfx11", "tables", "exp.rs")


def main():
    per = []
    for cpu in CPUS:
        o = FeatOracle(cpu)
        names = []
        for tg in range(64):
            t = o.decode(words(0xF8000000 | 0xF | tg << 4, 0x04030201))[0]
            n = t.split()[1]
            names.append(None if n.startswith("invalid_target_") else n)
        per.append(names)
    assert per[0] == per[1]
    rows = "\n".join("    " + ("None" if n is None else 'Some("' + n + '")') + "," for n in per[0])
    with open(OUT, "w") as fh:
        fh.write(header("exp.py", "EXP target names by target id (None: invalid_target_N)."))
        fh.write("pub static TARGETS: [Option<&str>; 64] = [\n" + rows + "\n];\n")


if __name__ == "__main__":
    main()
