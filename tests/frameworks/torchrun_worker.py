#!/usr/bin/env python3
"""One rank of a torchrun job whose GPU work is HIP (hip-python), checking
the parts of a ROCm PyTorch run that do not need a ROCm build of torch:
torchrun's launcher and rank environment, its rendezvous (torch.distributed
with the gloo backend, on the CPU), one emulated GPU per local rank in one
daemon, and results gathered across ranks.

  rocjitsu --config configs/gfx942_cdna3_kmd_2gpu.json --daemon -- \\
      python3 -m torch.distributed.run --nproc-per-node 2 tests/frameworks/torchrun_worker.py

Each rank selects GPU LOCAL_RANK (hipSetDevice, as torch.cuda.set_device
does), checks it sees WORLD_SIZE GPUs, computes a saxpy there (hiprtc) whose
expected result depends on its rank, and all-reduces its checksum; rank 0
checks the sum of every rank's and prints `PASS torchrun ...`.
"""

import ctypes
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
from hip import hip, hiprtc

SOURCE = b"""
extern "C" __global__ void scale_add(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


def ok(result):
    status, *values = result if isinstance(result, tuple) else (result, )
    if isinstance(status, hip.hipError_t) and status != hip.hipError_t.hipSuccess:
        raise RuntimeError(f"{status}: {hip.hipGetErrorString(status)}")
    if isinstance(status, hiprtc.hiprtcResult) and status != hiprtc.hiprtcResult.HIPRTC_SUCCESS:
        raise RuntimeError(f"{status}")
    return values[0] if len(values) == 1 else values


def gpu_checksum(rank, local_rank):
    ok(hip.hipSetDevice(local_rank))
    props = hip.hipDeviceProp_t()
    ok(hip.hipGetDeviceProperties(props, local_rank))
    arch = props.gcnArchName.decode().split(":")[0]
    prog = ok(hiprtc.hiprtcCreateProgram(SOURCE, b"k.hip", 0, [], []))
    opts = [f"--offload-arch={arch}".encode()]
    ok(hiprtc.hiprtcCompileProgram(prog, len(opts), opts))
    code = bytearray(ok(hiprtc.hiprtcGetCodeSize(prog)))
    ok(hiprtc.hiprtcGetCode(prog, code))
    kernel = ok(hip.hipModuleGetFunction(ok(hip.hipModuleLoadData(code)), b"scale_add"))
    n = 4096
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, rank, dtype=np.float32)
    dx, dy = ok(hip.hipMalloc(x.nbytes)), ok(hip.hipMalloc(y.nbytes))
    ok(hip.hipMemcpy(dx, x, x.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    ok(hip.hipMemcpy(dy, y, y.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice))
    a = float(rank + 1)
    ok(hip.hipModuleLaunchKernel(kernel, n // 256, 1, 1, 256, 1, 1, sharedMemBytes=0, stream=None,
                                 kernelParams=None, extra=(ctypes.c_float(a), dx, dy, ctypes.c_int(n))))
    ok(hip.hipDeviceSynchronize())
    got = np.empty_like(y)
    ok(hip.hipMemcpy(got, dy, got.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    if not np.array_equal(got, a * x + y):
        raise AssertionError(f"rank {rank}: GPU {local_rank} computed a wrong saxpy")
    return arch, float(got.astype(np.float64).sum())


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("gloo")
    count = ok(hip.hipGetDeviceCount())
    if count < int(os.environ["LOCAL_WORLD_SIZE"]):
        raise AssertionError(f"rank {rank}: {count} GPU(s), fewer than the {os.environ['LOCAL_WORLD_SIZE']} local ranks")
    arch, checksum = gpu_checksum(rank, local_rank)
    t = torch.tensor([checksum], dtype=torch.float64)
    dist.all_reduce(t)
    x = np.arange(4096, dtype=np.float64)
    want = sum(((r + 1) * x + r).sum() for r in range(world))
    dist.barrier()
    if rank == 0:
        if t.item() != want:
            print(f"FAIL torchrun: all-reduced checksum {t.item()} != {want}")
            return 1
        print(f"PASS torchrun: {world} ranks, each on its own emulated {arch} (GPU = LOCAL_RANK), "
              f"gloo all-reduce of their results {t.item():.0f}")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
