#!/usr/bin/env python3
"""HIP Python (AMD's hip-python 7.2.2: Cython bindings of HIP and hiprtc)
on the emulated GPU: device properties, memory copies, a kernel compiled
at run time with hiprtc and launched with hipModuleLaunchKernel, events,
each result checked against numpy.

  rocjitsu --config configs/gfx942_cdna3_kmd.json -- python3 tests/frameworks/hip_python_smoke.py
"""

import ctypes
import sys

import numpy as np
from hip import hip, hiprtc

SOURCE = b"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


def ok(result):
    """hip-python returns (status, values...): fail on an error status."""
    status, *values = result if isinstance(result, tuple) else (result, )
    if isinstance(status, hip.hipError_t) and status != hip.hipError_t.hipSuccess:
        raise RuntimeError(f"{status}: {hip.hipGetErrorString(status)}")
    if isinstance(status, hiprtc.hiprtcResult) and status != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
        raise RuntimeError(f"{status}")
    return values[0] if len(values) == 1 else values


def main():
    props = hip.hipDeviceProp_t()
    ok(hip.hipGetDeviceProperties(props, 0))
    arch = props.gcnArchName.decode().split(":")[0]
    print(f"hip-python on {arch}, {props.multiProcessorCount} CUs, warp size {props.warpSize}")

    prog = ok(hiprtc.hiprtcCreateProgram(SOURCE, b"saxpy.hip", 0, [], []))
    opts = [f"--offload-arch={arch}".encode()]
    status, = hiprtc.hiprtcCompileProgram(prog, len(opts), opts)
    if status != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
        size = ok(hiprtc.hiprtcGetProgramLogSize(prog))
        log = bytearray(size)
        ok(hiprtc.hiprtcGetProgramLog(prog, log))
        raise RuntimeError(f"hiprtc: {status}: {log.decode(errors='replace')}")
    size = ok(hiprtc.hiprtcGetCodeSize(prog))
    code = bytearray(size)
    ok(hiprtc.hiprtcGetCode(prog, code))
    module = ok(hip.hipModuleLoadData(code))
    kernel = ok(hip.hipModuleGetFunction(module, b"saxpy"))

    n = 100_001
    rng = np.random.default_rng(11)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    dx = ok(hip.hipMalloc(x.nbytes))
    dy = ok(hip.hipMalloc(y.nbytes))
    ok(hip.hipMemcpy(dx, x, x.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    ok(hip.hipMemcpy(dy, y, y.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    start, stop = ok(hip.hipEventCreate()), ok(hip.hipEventCreate())
    block = 256
    # `extra`: the arguments as laid out in the kernarg segment (hip-python
    # packs a tuple of ctypes values and device pointers).
    args = (ctypes.c_float(2.5), dx, dy, ctypes.c_int(n))
    ok(hip.hipEventRecord(start, None))
    ok(hip.hipModuleLaunchKernel(kernel, (n + block - 1) // block, 1, 1, block, 1, 1, sharedMemBytes=0, stream=None,
                                 kernelParams=None, extra=args))
    ok(hip.hipEventRecord(stop, None))
    ok(hip.hipEventSynchronize(stop))
    ms = ok(hip.hipEventElapsedTime(start, stop))
    got = np.empty_like(y)
    ok(hip.hipMemcpy(got, dy, got.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    want = np.float32(2.5) * x + y
    if not np.allclose(got, want, rtol=1e-6, atol=1e-6):
        print(f"FAIL saxpy: max difference {np.abs(got - want).max()} from numpy")
        return 1
    print(f"PASS saxpy through hiprtc + hipModuleLaunchKernel ({ms:.2f} ms on the GPU's clock)")
    for p in (dx, dy):
        ok(hip.hipFree(p))
    ok(hip.hipModuleUnload(module))
    return 0


if __name__ == "__main__":
    sys.exit(main())
