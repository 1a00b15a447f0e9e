#!/usr/bin/env python3
"""PyOpenCL over ROCm's OpenCL runtime (Debian's rocm-opencl-icd: ROCclr's
OpenCL on ROCr) on the emulated GPU: a kernel built from OpenCL C at run
time, pyopencl.array arithmetic and a reduction, each checked against numpy.

  rocjitsu --config configs/gfx942_cdna3_kmd.json -- python3 tests/frameworks/pyopencl_smoke.py
"""

import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla

SOURCE = """
__kernel void axpy(float a, __global const float* x, __global float* y) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
"""


def main():
    amd = [p for p in cl.get_platforms() if "AMD" in p.name]
    if not amd:
        print(f"FAIL: no AMD OpenCL platform among {[p.name for p in cl.get_platforms()]}")
        return 1
    dev = amd[0].get_devices()[0]
    print(f"pyopencl {cl.VERSION_TEXT} on {amd[0].name}: {dev.name}, {dev.max_compute_units} CUs")
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    rng = np.random.default_rng(5)
    x = rng.standard_normal(65536).astype(np.float32)
    y = rng.standard_normal(65536).astype(np.float32)
    dx, dy = cla.to_device(q, x), cla.to_device(q, y)
    prg = cl.Program(ctx, SOURCE).build()
    prg.axpy(q, x.shape, None, np.float32(3.0), dx.data, dy.data)
    want = np.float32(3.0) * x + y
    failed = 0
    for name, got, ref, tol in (("axpy kernel", dy.get(), want, 1e-6),
                                ("array arithmetic", (dx * 2 - dy).get(), 2 * x - want, 1e-5),
                                ("sum", np.float64(cla.sum(dx).get()), x.astype(np.float64).sum(), 1e-3)):
        if np.allclose(got, ref, rtol=tol, atol=tol):
            print(f"PASS {name}")
        else:
            failed += 1
            print(f"FAIL {name}: max difference {np.abs(got - ref).max()} from numpy")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
