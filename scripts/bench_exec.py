#!/usr/bin/env python3
"""Execution-engine benchmarks: runs kernels with `rocjitsu run-kernel
--stats`, checks each result against a numpy reference, and prints the
figures.

  ALU-bound       alu_int (integer hash chain), wave-instructions/s, 1 thread
  memory-bound    triad (a = b + s*c over 4 Mi floats), wave-instructions/s, 1 thread
  MFMA GEMM       Triton 1024^3 fp16 GEMM on gfx942, 1 thread and all threads
  FP8 GEMM        Triton 1024^3 fp8 (e4m3) GEMM on gfx950, 1 thread and all threads

Each figure runs on the interpreter and on the translation tier (`--exec
interp,jit` by default; `auto` too if named), interleaved, best of --reps,
with the ratio; the GEMM lines add GFLOP/s and their fraction of the host's
single-core SGEMM (numpy's OpenBLAS, one thread, measured in the same run);
jit lines add the translation time and the share of instructions that ran
through the interpreter's semantic functions. Wall time and the process's
CPU time are both printed: on a shared machine the CPU time is the steadier.

With --plugins: the ALU, triad and GEMM (fp16, gfx942) runs without a
plugin and with each built-in plugin (metrics, trace, hazards, races,
coverage), each the best of --reps runs, interleaved, and the ratios to the
run without a plugin (targets: metrics under 1.3x, hazards and races under
3x); with --baseline [NAME=]BIN (repeatable) also the run without a plugin on another build (the
one before the plugins: "no plugin, unchanged").

Usage: scripts/bench_exec.py [--bin target/release/rocjitsu] [--quick] [--only NAME] [--exec interp,jit,auto]
                             [--reps N] [--threads N] [--plugins [--baseline BIN]]
Kernels are built by `scripts/corpus.py build --src tests/bench/src --out build/bench-kernels`.
Run with the Triton venv's python (it has numpy), as `make bench-exec` does.
"""

import argparse
import os
import pathlib
import resource
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNELS = ROOT / "build" / "bench-kernels"


# With --dbt: gfx950 code objects are translated for gfx942 (`rocjitsu dbt
# translate`) and run there instead; the figure's GPU reads gfx950>gfx942.
DBT = {"on": False, "tmp": None}


def dbt_code(binary, code):
    out = DBT["tmp"] / f"dbt-{code.name}"
    if not out.exists():
        p = subprocess.run([str(binary), "dbt", "translate", "--guest", "gfx950", "--host", "gfx942",
                            str(code), str(out)], capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"bench: {code} does not translate: {p.stderr.strip()}")
    return out


# With --plugins: the extra run-kernel options of the current run, and the
# binary to run instead of --bin (the baseline build).
PLUGIN = {"args": [], "bin": None}
# The execution tier of the current run (run-kernel --exec).
EXEC = {"mode": None}


def run(binary, code, kernel, grid, block, args, threads, gpu, lds=0):
    if DBT["on"] and gpu == "gfx950":
        code, gpu = dbt_code(binary, code), "gfx942"
    binary = PLUGIN["bin"] or binary
    cmd = [str(binary), "run-kernel", "--gpu", gpu, str(code), "--kernel", kernel, "--grid", grid,
           "--block", block, "--stats", "--threads", str(threads), "--dynamic-lds", str(lds)] + PLUGIN["args"]
    if EXEC["mode"]:
        cmd += ["--exec", EXEC["mode"]]
    for a in args:
        cmd += ["--arg", a]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd)}\n{p.stderr}")
    stats = {}
    for line in p.stdout.splitlines():
        k, _, v = line.partition(":")
        stats[k.strip()] = v.strip()
    # The whole process's CPU time (user + system), whatever the build prints.
    stats["process cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return stats


WALLS = []
# The stats of every figure, in order.
RUNS = []


def figure(name, gpu, threads, stats, ok):
    insts = int(stats["instructions"].split()[0])
    wall = float(stats["wall time"].split()[0])
    WALLS.append(wall)
    RUNS.append(stats)
    if DBT["on"] and gpu == "gfx950":
        gpu = "dbt>942"
    cpu = stats.get("cpu time", "").split()
    cpu = f" cpu={float(cpu[0]):8.3f} s" if cpu else ""
    mode = f" {EXEC['mode']:<6}" if EXEC["mode"] else ""
    print(f"{name:<28} {gpu:<7}{mode} threads={stats['threads']:<3} wall={wall:9.3f} s{cpu}  "
          f"{insts / wall / 1e6:8.1f} M wave-inst/s  insts={insts:>12}  result={'ok' if ok else 'WRONG'}",
          flush=True)
    return ok


def alu_ref(n, iters):
    x = np.arange(n, dtype=np.uint32)
    y = x ^ np.uint32(0x9E3779B9)
    with np.errstate(over="ignore"):
        for _ in range(iters):
            x = x * np.uint32(1664525) + np.uint32(1013904223)
            y ^= x >> np.uint32(7)
            y = (y << np.uint32(3)) | (y >> np.uint32(29))
            x = x + y
    return x ^ y


def bench_alu(b, tmp, gpu, threads, quick):
    n, iters = 65536, (100 if quick else 1000)
    out = tmp / "alu.bin"
    s = run(b, KERNELS / gpu / "alu.hsaco", "alu_int", str(n // 256), "256",
            [f"out:{out}:{4 * n}", f"u32:{iters}"], threads, gpu)
    got = np.fromfile(out, dtype=np.uint32)
    return figure("ALU-bound (alu_int)", gpu, threads, s, np.array_equal(got, alu_ref(n, iters)))


def bench_triad(b, tmp, gpu, threads, quick):
    n = 1 << (20 if quick else 22)
    rng = np.random.default_rng(1)
    bb = rng.standard_normal(n).astype(np.float32)
    cc = rng.standard_normal(n).astype(np.float32)
    bb.tofile(tmp / "b.bin")
    cc.tofile(tmp / "c.bin")
    s = run(b, KERNELS / gpu / "stream.hsaco", "triad", str(n // 256), "256",
            [f"out:{tmp / 'a.bin'}:{4 * n}", f"in:{tmp / 'b.bin'}", f"in:{tmp / 'c.bin'}", "f32:1.5", f"u32:{n}"],
            threads, gpu)
    got = np.fromfile(tmp / "a.bin", dtype=np.float32)
    # Fused or not, the result is within one rounding of the exact value.
    ok = np.allclose(got, bb.astype(np.float64) + 1.5 * cc.astype(np.float64), rtol=2e-7, atol=1e-30)
    return figure("memory-bound (triad)", gpu, threads, s, ok)


def e4m3_table():
    """float64 value of every OCP e4m3 (fn) byte; 0x7f/0xff are NaN."""
    v = np.arange(256)
    sign = np.where(v & 0x80, -1.0, 1.0)
    e, mant = (v >> 3) & 0xF, v & 7
    mag = np.where(e == 0, mant / 8.0 * 2.0 ** -6, (1 + mant / 8.0) * 2.0 ** (e - 7.0))
    mag = np.where((v & 0x7F) == 0x7F, np.nan, mag)
    return sign * mag


def bench_gemm(b, tmp, gpu, threads, kind):
    m = n = k = 1024
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    bm = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    if kind == "f16":
        a, bm = a.astype(np.float16), bm.astype(np.float16)
        a.tofile(tmp / "ga.bin")
        bm.tofile(tmp / "gb.bin")
        ref = a.astype(np.float64) @ bm.astype(np.float64)
        out_t, name = np.float16, "gemm_f16"
    else:
        # Random OCP e4m3 bytes with magnitudes up to 2 (exponent field <= 8),
        # decoded by a table written from the format's definition.
        a8 = (rng.integers(0, 0x48, (m, k)) | (rng.integers(0, 2, (m, k)) << 7)).astype(np.uint8)
        b8 = (rng.integers(0, 0x48, (k, n)) | (rng.integers(0, 2, (k, n)) << 7)).astype(np.uint8)
        a8.tofile(tmp / "ga.bin")
        b8.tofile(tmp / "gb.bin")
        ref = e4m3_table()[a8] @ e4m3_table()[b8]
        out_t, name = "bf16", "gemm_fp8"
    code = KERNELS / gpu / f"tri_gemm-{name}.hsaco"
    s = run(b, code, "matmul_kernel", f"{m // 64},{n // 64}", "256",
            [f"in:{tmp / 'ga.bin'}", f"in:{tmp / 'gb.bin'}", f"out:{tmp / 'gc.bin'}:{2 * m * n}",
             f"i32:{m}", f"i32:{n}", f"i32:{k}", f"i32:{k}", f"i32:{n}", f"i32:{n}", "null", "null"],
            threads, gpu, lds=65536)  # Triton's shared memory is dynamic LDS
    if out_t == "bf16":
        raw = np.fromfile(tmp / "gc.bin", dtype=np.uint16).astype(np.uint32) << np.uint32(16)
        got = raw.view(np.float32).astype(np.float64).reshape(m, n)
    else:
        got = np.fromfile(tmp / "gc.bin", dtype=out_t).astype(np.float64).reshape(m, n)
    # f32 accumulation over k=1024 products, then one rounding to the
    # output type (2^-8 relative for bf16, 2^-11 for f16).
    tol = 2.0 ** -7 if kind != "f16" else 2.0 ** -10
    ok = np.allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max())
    label = "MFMA GEMM 1024^3 fp16" if kind == "f16" else "FP8 GEMM 1024^3 e4m3"
    return figure(label, gpu, threads, s, ok)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "rocjitsu"))
    ap.add_argument("--quick", action="store_true", help="smaller ALU/memory runs")
    ap.add_argument("--only", action="append", help="alu, triad, gemm-f16, gemm-fp8 (repeatable)")
    ap.add_argument("--dbt", action="store_true",
                    help="gfx950 only: each benchmark natively, then translated for gfx942 (rocjitsu dbt "
                         "translate) and run there; prints the time ratio (target <= 1.5x)")
    ap.add_argument("--plugins", action="store_true",
                    help="each benchmark without a plugin, with metrics and with trace; prints the ratios")
    ap.add_argument("--reps", type=int, default=3, help="runs per figure (the best counts)")
    ap.add_argument("--exec", default="interp,jit",
                    help="execution tiers to compare, comma-separated (interp, jit, auto)")
    ap.add_argument("--threads", type=int, default=0,
                    help="the all-threads GEMM runs' host threads (default: every core)")
    ap.add_argument("--baseline", action="append", default=[], metavar="[NAME=]BIN",
                    help="with --plugins: another rocjitsu build to run without a plugin too "
                         "(repeatable; NAME labels its column)")
    ap.add_argument("--plugin-list", default="metrics,trace,hazards,races,coverage",
                    help="with --plugins: the plugins to run, comma-separated (default: every built-in)")
    args = ap.parse_args()
    if args.dbt:
        return main_dbt(args)
    if args.plugins:
        return main_plugins(args)
    only = set(args.only or ["alu", "triad", "gemm-f16", "gemm-fp8"])
    all_threads = args.threads or os.cpu_count() or 1
    modes = [m for m in args.exec.split(",") if m]
    sgemm = host_sgemm_gflops()
    print(f"host SGEMM 1024^3 (numpy's BLAS, 1 thread): {sgemm:.1f} GFLOP/s", flush=True)
    ok = True
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        benches = []
        for gpu in ("gfx90a", "gfx942", "gfx950"):
            if "alu" in only:
                benches.append((f"ALU-bound {gpu}", 1, lambda g=gpu: bench_alu(args.bin, tmp, g, 1, args.quick)))
            if "triad" in only:
                benches.append((f"triad {gpu}", 1, lambda g=gpu: bench_triad(args.bin, tmp, g, 1, args.quick)))
        for threads in sorted({1, all_threads}):
            if "gemm-f16" in only:
                benches.append((f"GEMM fp16 gfx942 t{threads}", threads,
                                lambda t=threads: bench_gemm(args.bin, tmp, "gfx942", t, "f16")))
            if "gemm-fp8" in only:
                benches.append((f"GEMM fp8 gfx950 t{threads}", threads,
                                lambda t=threads: bench_gemm(args.bin, tmp, "gfx950", t, "fp8")))
        for label, threads, fn in benches:
            best = {}
            # Interleaved repetitions, so that a slow spell of the machine
            # hits every tier alike.
            for _ in range(args.reps):
                for m in modes:
                    EXEC["mode"] = m
                    ok &= fn()
                    st = RUNS[-1]
                    wall = WALLS[-1]
                    cpu = float(st.get("cpu time", "0").split()[0])
                    prev = best.get(m)
                    if prev is None or wall < prev[0]:
                        best[m] = (wall, cpu if prev is None else min(cpu, prev[1]), st)
                    else:
                        best[m] = (prev[0], min(cpu, prev[1]), prev[2])
            EXEC["mode"] = None
            rows.append((label, threads, best))
    print(f"\nexec tiers: best of {args.reps} runs each, interleaved; ratio = interp time / tier time "
          f"(this machine: {os.cpu_count()} cores{', shared' if os.environ.get('CI') is None else ''})")
    for label, threads, best in rows:
        base = best.get("interp")
        for m, (wall, cpu, st) in best.items():
            insts = int(st["instructions"].split()[0])
            line = f"  {label:<24} {m:<6} wall {wall:8.3f} s  cpu {cpu:8.3f} s  {insts / wall / 1e6:8.1f} M wave-inst/s"
            if base and m != "interp":
                line += f"  {base[0] / wall:5.2f}x wall, {base[1] / cpu if cpu else 0:5.2f}x cpu"
            if label.startswith("GEMM"):
                gflops = 2 * 1024 ** 3 / wall / 1e9
                line += f"  {gflops:6.2f} GFLOP/s"
                if threads == 1 and sgemm:
                    line += f" = {100 * gflops / sgemm:5.2f}% of host SGEMM"
            if "jit translation" in st:
                blocks = st.get("jit blocks", "").split(" (")[0]
                tinsts = st.get("jit blocks", "(0").split("(")[1].split()[0]
                calls = st.get("jit calls", "0 (0%)").split(")")[0].split("(")[-1]
                line += f"  [{blocks} blocks, {tinsts} insts translated in {st['jit translation']}; {calls} via calls]"
            print(line, flush=True)
    return 0 if ok else 1


def host_sgemm_gflops():
    """1024^3 f32 matrix product with numpy on one thread (OpenBLAS in
    numpy's wheels): the host's single-core limit the GEMM figures are
    compared with. Run in a child so that the thread limit applies."""
    code = ("import numpy as np, time\n"
            "a = np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32)\n"
            "b = np.random.default_rng(1).standard_normal((1024, 1024), dtype=np.float32)\n"
            "a @ b\n"
            "best = min((lambda t: (a @ b, time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(5))\n"
            "print(2 * 1024 ** 3 / best / 1e9)\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    try:
        return float(p.stdout.strip())
    except ValueError:
        print(f"bench: host SGEMM did not run: {p.stderr.strip()}", flush=True)
        return 0.0


def main_dbt(args):
    """Emulated run time of translated code on gfx942 over native gfx950."""
    only = set(args.only or ["alu", "triad", "gemm-f16"])
    ok = True
    ratios = []
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        DBT["tmp"] = tmp
        for name, fn in (("alu", lambda: bench_alu(args.bin, tmp, "gfx950", 1, args.quick)),
                         ("triad", lambda: bench_triad(args.bin, tmp, "gfx950", 1, args.quick)),
                         ("gemm-f16", lambda: bench_gemm(args.bin, tmp, "gfx950", 1, "f16"))):
            if name not in only:
                continue
            DBT["on"] = False
            ok &= fn()
            DBT["on"] = True
            ok &= fn()
            native, translated = WALLS[-2], WALLS[-1]
            ratios.append(translated / native)
            print(f"dbt {name}: translated on gfx942 {translated:.3f} s / native gfx950 {native:.3f} s = "
                  f"{translated / native:.2f}x (target <= 1.5x)", flush=True)
    if ratios:
        geo = float(np.exp(np.mean(np.log(ratios))))
        print(f"dbt: geometric mean {geo:.2f}x over {len(ratios)} benchmarks")
    return 0 if ok else 1


def main_plugins(args):
    """Run time with each plugin over the run time without one."""
    only = set(args.only or ["alu", "triad", "gemm-f16"])
    ok = True
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        out = tmp / "plugin-out"
        configs = [("none", None, [])]
        for i, b in enumerate(args.baseline):
            name, eq, path = b.partition("=")
            if not eq:
                name, path = ("baseline" if len(args.baseline) == 1 else f"baseline{i + 1}"), b
            if not os.access(path, os.X_OK):
                raise SystemExit(f"bench: --baseline {b}: {path} is not an executable rocjitsu build")
            configs.append((name, path, []))
        configs += [(p, None, ["--plugin", p, "--plugin-out", str(out)])
                    for p in args.plugin_list.split(",") if p]
        benches = (("alu", "ALU-bound (alu_int)", lambda: bench_alu(args.bin, tmp, "gfx942", 1, args.quick)),
                   ("triad", "memory-bound (triad)", lambda: bench_triad(args.bin, tmp, "gfx942", 1, args.quick)),
                   ("gemm-f16", "MFMA GEMM 1024^3 fp16", lambda: bench_gemm(args.bin, tmp, "gfx942", 1, "f16")))
        for name, label, fn in benches:
            if name not in only:
                continue
            best = {}
            # Interleaved repetitions, so that a slow spell of the machine
            # hits every configuration alike.
            for _ in range(args.reps):
                for cname, binary, extra in configs:
                    PLUGIN["args"], PLUGIN["bin"] = extra, binary
                    ok &= fn()
                    wall, cpu = WALLS[-1], RUNS[-1]["process cpu"]
                    prev = best.get(cname, (float("inf"), float("inf")))
                    best[cname] = (min(prev[0], wall), min(prev[1], cpu))
                    if out.exists():
                        for f in out.iterdir():
                            f.unlink()
            PLUGIN["args"], PLUGIN["bin"] = [], None
            rows.append((label, best))
    names = [c[0] for c in configs]
    print(f"\nplugins: best of {args.reps} runs, gfx942, 1 thread; ratio to no plugin "
          f"(targets: metrics < 1.3x, hazards and races < 3x; baseline: another build without a plugin); "
          f"wall time, then the process's CPU time (user + system, the steadier figure on a shared machine)")
    print(f"  {'benchmark':<24}" + "".join(f"{n:>20}" for n in names))
    for label, best in rows:
        for i, what in enumerate(("wall", "cpu")):
            base = best["none"][i]
            cells = [f"{base:.3f} s"] + [f"{best[n][i]:.3f} s {best[n][i] / base:5.2f}x" for n in names[1:]]
            print(f"  {label + ' ' + what:<24}" + "".join(f"{c:>20}" for c in cells))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
