#!/usr/bin/env python3
"""Triton's 1024^3 fp16 matmul launched through Triton's own HIP runtime,
timed, checked against numpy; writes what `rocjitsu run-kernel` needs to
run the very same code object (the hsaco Triton compiled here, its argument
list, grid, block and dynamic LDS, the input buffers) to OUT_DIR.

  rocjitsu --config configs/gfx942_cdna3_kmd.json --threads T -- \
      python3 tests/frameworks/bench_triton_matmul.py runtime OUT_DIR [--reps N]
  python3 tests/frameworks/bench_triton_matmul.py run-kernel OUT_DIR --rocjitsu PATH --threads T [--reps N]

The kernel is the corpus's (tests/corpus/src/tri_matmul.py), 64x64x32
tiles, 4 warps: the one `make bench-exec` times through run-kernel.
`runtime` prints one JSON object with the best launch-to-synchronised wall
time over the reps; `run-kernel` runs the saved object with `rocjitsu
run-kernel --stats` and prints the best dispatch wall time it reports. Both
check the product against numpy.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "hiptorch"))
sys.path.insert(0, str(HERE.parent / "corpus" / "src"))

import numpy as np  # noqa: E402

M = N = K = 1024
TOL = 2.0 ** -10  # f32 accumulation, one rounding to fp16


def close(got, ref):
    return bool(np.allclose(got, ref, rtol=TOL, atol=TOL * np.abs(ref).max()))


def through_run_kernel(args):
    spec = json.loads((args.out / "run_kernel.json").read_text())
    ref = np.load(args.out / spec["ref"])
    best, ok = float("inf"), True
    for _ in range(args.reps):
        cmd = [args.rocjitsu, "run-kernel", "--gpu", spec["arch"], "matmul.hsaco", "--kernel", spec["kernel"], "--grid",
               spec["grid"], "--block", spec["block"], "--dynamic-lds", str(spec["dynamic_lds"]), "--stats",
               "--threads", str(args.threads)]
        for a in spec["args"]:
            cmd += ["--arg", a]
        p = subprocess.run(cmd, cwd=args.out, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"run-kernel failed: {' '.join(cmd)}\n{p.stderr}")
        stats = dict(ln.split(":", 1) for ln in p.stdout.splitlines() if ":" in ln)
        best = min(best, float(stats["wall time"].split()[0]))
        got = np.fromfile(args.out / "c.bin", dtype=np.float16).astype(np.float64).reshape(M, N)
        ok &= close(got, ref)
    print(json.dumps({"arch": spec["arch"], "best_s": round(best, 4), "reps": args.reps, "ok": ok,
                      "threads": args.threads}))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("how", choices=("runtime", "run-kernel"))
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rocjitsu", help="the rocjitsu binary (run-kernel)")
    ap.add_argument("--threads", type=int, default=0, help="run-kernel's --threads (0: one per core)")
    args = ap.parse_args()
    if args.how == "run-kernel":
        return through_run_kernel(args)
    import torch  # noqa: E402  (the stand-in)
    import triton  # noqa: E402
    import triton.language as tl  # noqa: E402
    from tri_matmul import matmul_kernel  # noqa: E402

    tile = dict(BM=64, BN=64, BK=32, ACC=tl.float32)
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float16)
    at, bt = torch.tensor(a), torch.tensor(b)
    c = torch.empty((M, N), dtype=torch.float16)
    grid = (M // tile["BM"], N // tile["BN"])

    def launch():
        return matmul_kernel[grid](at, bt, c, M, N, K, K, 1, N, 1, N, 1, **tile, num_warps=4)

    t0 = time.monotonic()
    compiled = launch()
    torch.cuda.synchronize()
    first = time.monotonic() - t0
    best = float("inf")
    for _ in range(args.reps):
        t0 = time.monotonic()
        launch()
        torch.cuda.synchronize()
        best = min(best, time.monotonic() - t0)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    ok = close(c.numpy().astype(np.float64), ref)

    # What run-kernel needs: the compiled object and its non-constexpr
    # arguments in order (Triton drops constexprs and the ints it
    # specialised to 1), then its two scratch pointers.
    (args.out / "matmul.hsaco").write_bytes(compiled.asm["hsaco"])
    a.tofile(args.out / "a.bin")
    b.tofile(args.out / "b.bin")
    values = {"a": "in:a.bin", "b": "in:b.bin", "c": f"out:c.bin:{2 * M * N}", "M": f"i32:{M}", "N": f"i32:{N}",
              "K": f"i32:{K}", "sam": f"i32:{K}", "sak": "i32:1", "sbk": f"i32:{N}", "sbn": "i32:1",
              "scm": f"i32:{N}", "scn": "i32:1"}
    names = compiled.src.fn.arg_names
    kinds = compiled.src.signature
    consts = compiled.src.constants
    kept = [n for n in names if kinds.get(n) != "constexpr" and n not in consts and (names.index(n), ) not in consts]
    spec = {
        "arch": compiled.metadata.target.arch,
        "kernel": compiled.metadata.name,
        "grid": f"{grid[0]},{grid[1]}",
        "block": str(64 * compiled.metadata.num_warps),
        "dynamic_lds": compiled.metadata.shared,
        "args": [values[n] for n in kept] + ["null", "null"],
        "ref": "ref.npy",
    }
    np.save(args.out / "ref.npy", ref)
    (args.out / "run_kernel.json").write_text(json.dumps(spec, indent=1))
    print(json.dumps({"arch": compiled.metadata.target.arch, "first_s": round(first, 4), "best_s": round(best, 4),
                      "reps": args.reps, "ok": ok, "threads": os.environ.get("ROCJITSU_THREADS", "all")}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
