#!/usr/bin/env python3
"""scripts/dev/diff.py with the pipe-based crash isolation of vop_oracle.py.

Same arguments and output as scripts/dev/diff.py. LLVM 22 crashes on many
random SDWA words (about 2% of `--src0 0xf9` inputs); diff.py's
safe_decode_many waits for a 5-second queue timeout after each crash, this
wrapper notices the crash at once:

    python3 scripts/gen/vop_diff.py --cpu gfx942 --enc vop2 --src0 0xf9 --count 20000
"""
import os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dev"))
sys.path.insert(0, HERE)
import diff, vop_oracle

diff.safe_decode_many = vop_oracle.decode_many

if __name__ == "__main__":
    diff.main()
