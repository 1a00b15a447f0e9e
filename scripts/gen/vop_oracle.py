"""Crash-isolated batch decoding through LLVM 22 (see scripts/dev/llvm_oracle.py),
tuned for probe sets in which many inputs crash LLVM: the child streams each
answer down a pipe, so a crash is noticed at once (end of file) rather than
after a timeout."""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "dev"))
from llvm_oracle import Oracle

_cache = {}


def decode_many(cpu, datas):
    """Like llvm_oracle.safe_decode_many: (text or None, size) per input, or
    ("<crash>", 0) where LLVM crashed."""
    out = [None] * len(datas)
    start = 0
    while start < len(datas):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            o = Oracle(cpu)
            f = os.fdopen(w, "w", buffering=1)
            for d in datas[start:]:
                t, n = o.decode(d)
                f.write(("\x00" if t is None else t.replace("\n", " ")) + "\t" + str(n) + "\n")
                f.flush()
            os._exit(0)
        os.close(w)
        got = 0
        with os.fdopen(r) as f:
            for line in f:
                t, n = line.rstrip("\n").rsplit("\t", 1)
                out[start + got] = (None if t == "\x00" else t, int(n))
                got += 1
        os.waitpid(pid, 0)
        start += got
        if start < len(datas):
            out[start] = ("<crash>", 0)
            start += 1
    return out
