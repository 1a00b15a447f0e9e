#!/usr/bin/env python3
"""Writes crates/isa/src/gfx11/tables/exp.rs: the EXP mnemonic and target
names LLVM 22 prints on gfx1100 and gfx1151 (None: `invalid_target_N`);
with `gfx12`, crates/isa/src/gfx12/tables/exp.rs for gfx1201.

    python3 scripts/gen/gfx11/exp.py [gfx12]
"""
import os, sys

sys.path.insert(0, os.path.dirname(__file__))
from oracle import CPUS, FeatOracle, header, table_path, words  # noqa: E402

OUT = table_path("exp.rs")


def main():
    per, mnemonics = [], set()
    for cpu in CPUS:
        o = FeatOracle(cpu)
        names = []
        for tg in range(64):
            t = o.decode(words(0xF8000000 | 0xF | tg << 4, 0x04030201))[0]
            mnemonics.add(t.split()[0])
            n = t.split()[1]
            names.append(None if n.startswith("invalid_target_") else n)
        per.append(names)
    assert all(p == per[0] for p in per) and len(mnemonics) == 1
    rows = "\n".join("    " + ("None" if n is None else 'Some("' + n + '")') + "," for n in per[0])
    with open(OUT, "w") as fh:
        fh.write(header("exp.py", "EXP target names by target id (None: invalid_target_N)."))
        fh.write(f"pub static MNEMONIC: &str = \"{mnemonics.pop()}\";\n\n")
        fh.write("pub static TARGETS: [Option<&str>; 64] = [\n" + rows + "\n];\n")


if __name__ == "__main__":
    main()
