#!/usr/bin/env python3
"""CuPy for ROCm (cupy-rocm-7-0) on the emulated GPU, each result checked against numpy.

  rocjitsu --config configs/gfx950_cdna4_kmd.json -- python3 tests/frameworks/cupy_smoke.py

Elementwise arithmetic and ufuncs (kernels CuPy generates and compiles
in-process through hiprtc), reductions, a user ElementwiseKernel and
ReductionKernel, a matmul through hipBLAS (rocBLAS), cupy.sort (rocThrust),
a scan, fancy indexing and host/device copies. Prints `PASS name` or
`FAIL name: what` per case and `cupy: N passed, M failed, K not applicable`.

The hipBLAS case needs rocBLAS kernels for the GPU: Debian's rocBLAS 7.2.4
carries none for gfx950 (no TensileLibrary for it), where that case is not
applicable (rocBLAS itself would abort the process).
"""

import glob
import sys
import time
import traceback

import numpy as np

RNG = np.random.default_rng(20261205)


def close(name, got, want, rtol=1e-5, atol=1e-6):
    got = np.asarray(got)
    if got.shape != np.shape(want):
        raise AssertionError(f"{name}: shape {got.shape}, expected {np.shape(want)}")
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
        i = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
        raise AssertionError(f"{name}: {bad.sum()} elements differ, first at {i}: {got[i]!r} vs numpy "
                             f"{np.asarray(want)[i]!r}")


def elementwise(cp):
    a = RNG.standard_normal(100_003).astype(np.float32)
    b = RNG.standard_normal(100_003).astype(np.float32)
    x, y = cp.asarray(a), cp.asarray(b)
    close("add/mul", (x * 2 + y).get(), a * 2 + b)
    close("exp/sin", (cp.exp(x) - cp.sin(y)).get(), np.exp(a) - np.sin(b), 1e-5, 1e-5)
    close("where", cp.where(x > y, x, y).get(), np.maximum(a, b))
    i = RNG.integers(-1000, 1000, 4096).astype(np.int64)
    xi = cp.asarray(i)
    close("int floor_divide", (xi // 7).get(), i // 7)


def reductions(cp):
    a = RNG.standard_normal((257, 1031)).astype(np.float32)
    x = cp.asarray(a)
    close("sum", float(x.sum()), a.astype(np.float64).sum(), 1e-4, 1e-2)
    close("sum axis 0", x.sum(axis=0).get(), a.sum(axis=0), 1e-4, 1e-4)
    close("max axis 1", x.max(axis=1).get(), a.max(axis=1))
    close("argmin", int(x.argmin()), int(a.argmin()))
    close("mean/std", [float(x.mean()), float(x.std())], [a.mean(), a.std()], 1e-4, 1e-5)


def custom_kernels(cp):
    axpb = cp.ElementwiseKernel("float32 x, float32 a, float32 b", "float32 y", "y = a * x + b * x * x", "axpb")
    a = RNG.standard_normal(50_000).astype(np.float32)
    close("ElementwiseKernel", axpb(cp.asarray(a), np.float32(1.5), np.float32(-0.25)).get(),
          1.5 * a - 0.25 * a * a, 1e-5, 1e-5)
    l2 = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    m = RNG.standard_normal((64, 300)).astype(np.float32)
    close("ReductionKernel", l2(cp.asarray(m), axis=1).get(), np.sqrt((m * m).sum(axis=1)), 1e-5, 1e-5)
    raw = cp.RawKernel(
        r'''
extern "C" __global__ void twice(const int* x, int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2 * x[i] + i;
}''', "twice")
    n = 10_000
    xi = cp.arange(n, dtype=cp.int32)
    yi = cp.empty_like(xi)
    raw(((n + 255) // 256, ), (256, ), (xi, yi, np.int32(n)))
    close("RawKernel", yi.get(), 3 * np.arange(n))


def matmul(cp):
    for dt, tol in ((np.float32, 1e-4), (np.float64, 1e-10)):
        a = RNG.standard_normal((130, 70)).astype(dt)
        b = RNG.standard_normal((70, 90)).astype(dt)
        close(f"matmul {np.dtype(dt)}", (cp.asarray(a) @ cp.asarray(b)).get(), a @ b, tol, tol)
    v = RNG.standard_normal(500).astype(np.float32)
    close("dot", float(cp.dot(cp.asarray(v), cp.asarray(v))), float(v @ v), 1e-4)


def sort_scan(cp):
    a = RNG.standard_normal(40_000).astype(np.float32)
    close("sort", cp.sort(cp.asarray(a)).get(), np.sort(a), 0, 0)
    i = RNG.integers(0, 1 << 30, 20_000).astype(np.int32)
    close("argsort", i[cp.argsort(cp.asarray(i)).get()], np.sort(i), 0, 0)
    close("cumsum", cp.cumsum(cp.asarray(i.astype(np.int64))).get(), np.cumsum(i.astype(np.int64)), 0, 0)


def indexing(cp):
    a = RNG.standard_normal((300, 40)).astype(np.float32)
    idx = RNG.integers(0, 300, 77)
    x = cp.asarray(a)
    close("take rows", x[cp.asarray(idx)].get(), a[idx], 0, 0)
    close("transpose copy", cp.ascontiguousarray(x.T).get(), a.T, 0, 0)
    close("boolean mask", x[x > 1].get(), a[a > 1], 0, 0)


def rocblas_has_kernels(arch):
    return bool(glob.glob(f"/usr/lib/x86_64-linux-gnu/rocblas/*/library/TensileLibrary*_{arch}.dat"))


CASES = {
    "elementwise": elementwise,
    "reductions": reductions,
    "custom_kernels": custom_kernels,
    "matmul_hipblas": matmul,
    "sort_scan": sort_scan,
    "indexing": indexing,
}


def main():
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(0)
    arch = props["gcnArchName"].decode().split(":")[0]
    print(f"cupy {cp.__version__} on {arch} (HIP runtime {cp.cuda.runtime.runtimeGetVersion()})")
    passed = failed = na = 0
    for name, fn in CASES.items():
        if len(sys.argv) > 1 and sys.argv[1] not in name:
            continue
        if fn is matmul and not rocblas_has_kernels(arch):
            na += 1
            print(f"n/a {name}: Debian's rocBLAS carries no {arch} kernels")
            continue
        t0 = time.monotonic()
        try:
            fn(cp)
            cp.cuda.runtime.deviceSynchronize()
        except Exception as e:  # noqa: BLE001 (every failure is reported and counted)
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            traceback.print_exc(file=sys.stderr)
        else:
            passed += 1
            print(f"PASS {name} ({time.monotonic() - t0:.1f} s)")
        sys.stdout.flush()
    print(f"cupy: {passed} passed, {failed} failed, {na} not applicable")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
