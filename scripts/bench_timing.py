#!/usr/bin/env python3
"""Calibration of the timing model (`make bench-timing`): runs the
microbenchmarks of tests/bench/timing/timing.cl through `rocjitsu
run-kernel --exec-mode clocked` and prints, per benchmark, the modelled
figure, the published measurement it is compared with (sources in
configs/timing/README.md) and the error (target: within 20%).

  chase-l1/l2/mall/hbm  pointer-chase latency (cycles per dependent load)
                        over 16 KiB, 2 MiB, 32 MiB and 512 MiB, one
                        element per 128-byte line: the difference of two
                        runs of different lap counts over the steps between
                        them, so the chain's set-up and the cold first lap
                        cancel out
  triad                 STREAM triad a = b + s*c, bandwidth (TB/s)
  mfma                  v_mfma_f32_32x32x8_f16 throughput of every SIMD
                        (dense FP16 TFLOP/s)

It also prints how much slower clocked mode is than functional mode on the
triad and MFMA kernels (wall time of the run-kernel process, best of
--reps).

Usage: scripts/bench_timing.py [--bin target/release/rocjitsu] [--threads N] [--reps N] [--quick]
The kernels are built by `scripts/corpus.py build --src tests/bench/timing
--out build/bench-timing --target gfx942`.
"""

import argparse
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CODE = ROOT / "build" / "bench-timing" / "gfx942" / "timing.hsaco"
CLOCK_HZ = 2100e6

# Published figures (configs/timing/README.md, "Calibration").
# Pointer chase: SC25 artifact (hibagus/SC25_AMD_CDNA3_Artifact,
# data/5_Memory/MI300X/exec/gpu-latency.out), cycles per load at the
# footprint nearest the one run here.
PUBLISHED = {
    "chase-l1": (115.4, "cycles", "[S1] SC25 MI300X gpu-latency, 16.8 kB"),
    "chase-l2": (210.2, "cycles", "[S1] SC25 MI300X gpu-latency, 2070 kB"),
    "chase-mall": (445.2, "cycles", "[S1] SC25 MI300X gpu-latency, 32827 kB"),
    "chase-hbm": (861.2, "cycles", "[S1] SC25 MI300X gpu-latency, 549583 kB"),
    "triad": (4.09, "TB/s", "[S2] Azure ND MI300X v5 STREAM triad"),
    "mfma": (1307.4, "TFLOP/s", "[R4] CDNA 3 white paper, MI300X peak dense FP16"),
}


def run(binary, kernel, grid, block, args, threads, mode="clocked"):
    cmd = [str(binary), "run-kernel", "--gpu", "gfx942", str(CODE), "--kernel", kernel,
           "--grid", str(grid), "--block", str(block), "--stats", "--threads", str(threads),
           "--exec-mode", mode]
    for a in args:
        cmd += ["--arg", a]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"bench-timing: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    m = re.search(r"^modelled cycles: (\d+)", p.stdout, re.M)
    cycles = int(m.group(1)) if m else None
    if mode == "clocked" and cycles is None:
        sys.exit(f"bench-timing: no modelled cycles in:\n{p.stdout}")
    return cycles, wall


def chase(binary, footprint, laps, threads):
    stride = 32  # words: one element per 128-byte line
    n = footprint // 128
    # The kernel chains element e to (e + p) mod n with a mask: n must be a
    # power of two, or the chain visits only part of the footprint.
    if n & (n - 1):
        sys.exit(f"bench-timing: chase footprint {footprint} bytes is not a power-of-two number of 128-byte lines")
    out = []
    for lap in laps:
        c, _ = run(binary, "chase", 1, 256,
                   [f"zero:{footprint}", f"u32:{n}", f"u32:{stride}", f"u32:{lap * n}", "zero:64"], threads)
        out.append(c)
    return (out[1] - out[0]) / ((laps[1] - laps[0]) * n)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", type=pathlib.Path, default=ROOT / "target" / "release" / "rocjitsu")
    ap.add_argument("--threads", type=int, default=0, help="host threads (default: all)")
    ap.add_argument("--reps", type=int, default=1, help="runs per slowdown figure (best of)")
    ap.add_argument("--quick", action="store_true", help="smaller triad and MFMA runs, no HBM chase")
    a = ap.parse_args()
    if not CODE.exists():
        sys.exit(f"bench-timing: {CODE} is missing; run make bench-timing")
    rows = []
    t = a.threads
    rows.append(("chase-l1", chase(a.bin, 16 << 10, (8, 16), t)))
    rows.append(("chase-l2", chase(a.bin, 2 << 20, (2, 4), t)))
    rows.append(("chase-mall", chase(a.bin, 32 << 20, (1, 2), t)))
    if not a.quick:
        rows.append(("chase-hbm", chase(a.bin, 512 << 20, (1, 2), t)))

    n = (4 << 20) if a.quick else (32 << 20)
    triad_args = [f"zero:{4 * n}", f"zero:{4 * n}", f"zero:{4 * n}", "f32:3.0", f"u32:{n}"]
    c, _ = run(a.bin, "triad", n // 256, 256, triad_args, t)
    rows.append(("triad", 3 * 4 * n / (c / CLOCK_HZ) / 1e12))

    iters = 8 if a.quick else 64
    waves = 304 * 4 * 2
    mfma_args = [f"zero:{4 * 64 * waves}", f"u32:{iters}"]
    c, _ = run(a.bin, "mfma", waves // 4, 256, mfma_args, t)
    flops = waves * iters * 4 * 32 * 32 * 8 * 2
    rows.append(("mfma", flops / (c / CLOCK_HZ) / 1e12))

    print(f"{'benchmark':<12} {'modelled':>10} {'published':>10} {'unit':<8} {'error':>7}  source")
    worst = 0.0
    for name, v in rows:
        pub, unit, src = PUBLISHED[name]
        err = (v - pub) / pub
        worst = max(worst, abs(err))
        print(f"{name:<12} {v:>10.1f} {pub:>10.1f} {unit:<8} {100 * err:>+6.1f}%  {src}")
    print(f"largest error: {100 * worst:.1f}% (target: within 20%)")

    print("\nclocked mode over functional mode (run-kernel wall time, best of --reps):")
    for name, kernel, grid, args in (("triad", "triad", n // 256, triad_args),
                                     ("mfma", "mfma", waves // 4, mfma_args)):
        f = min(run(a.bin, kernel, grid, 256, args, t, "functional")[1] for _ in range(a.reps))
        k = min(run(a.bin, kernel, grid, 256, args, t, "clocked")[1] for _ in range(a.reps))
        print(f"  {name:<6} functional {f:7.3f} s   clocked {k:7.3f} s   {k / f:5.2f}x")


if __name__ == "__main__":
    main()
