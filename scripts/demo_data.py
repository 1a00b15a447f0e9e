#!/usr/bin/env python3
"""Inputs and checks for `make demo` (plain Python, no numpy).

  demo_data.py make DIR N          x.bin = 0.5*i, y.bin = 1 - i/N (float32), in.bin = i % 7
  demo_data.py saxpy DIR N A       checks DIR/y.out = A*x + y exactly (one fma or mul+add)
  demo_data.py reduce DIR N BLOCK  checks DIR/sums.bin against per-block sums of in.bin
"""
import pathlib
import struct
import sys


def floats(path):
    b = path.read_bytes()
    return list(struct.unpack(f"<{len(b) // 4}f", b))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def main():
    cmd, d, n = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3])
    if cmd == "make":
        (d / "x.bin").write_bytes(struct.pack(f"<{n}f", *[0.5 * i for i in range(n)]))
        (d / "y.bin").write_bytes(struct.pack(f"<{n}f", *[1 - i / n for i in range(n)]))
        (d / "in.bin").write_bytes(struct.pack(f"<{n}f", *[float(i % 7) for i in range(n)]))
        return 0
    if cmd == "saxpy":
        a = float(sys.argv[4])
        x, y0, y = floats(d / "x.bin"), floats(d / "y.bin"), floats(d / "y.out")
        bad = [i for i in range(n) if y[i] not in (f32(a * x[i] + y0[i]), f32(f32(a * x[i]) + y0[i]))]
        print(f"saxpy: {n - len(bad)} of {n} elements equal the CPU's a*x+y" + (f"; first wrong: {bad[0]}" if bad else ""))
        return 1 if bad else 0
    if cmd == "reduce":
        block = int(sys.argv[4])
        vals, sums = floats(d / "in.bin"), floats(d / "sums.bin")
        want = [sum(vals[b * 2 * block:(b + 1) * 2 * block]) for b in range(len(sums))]
        ok = all(abs(s - w) <= 1e-6 * max(1.0, abs(w)) for s, w in zip(sums, want))
        print(f"reduce_sum: {len(sums)} block sums, total {sum(sums):.0f} (CPU: {sum(want):.0f}): {'ok' if ok else 'WRONG'}")
        return 0 if ok else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
