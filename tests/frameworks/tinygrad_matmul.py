#!/usr/bin/env python3
"""tinygrad's AMD backend (DEV=AMD: its own KFD ioctls, queues and signals)
on the emulated GPU: the issue's one-liner, a 64x64 matmul of random
tensors, then a few more ops, each checked against numpy on the same inputs.

  DEV=AMD rocjitsu --config configs/gfx942_cdna3_kmd.json -- python3 tests/frameworks/tinygrad_matmul.py

On gfx942 (several XCCs) tinygrad drives an AQL queue with PM4 IBs; on
gfx1100 (one XCC) a PM4 ring, with wave32 kernels.
"""

import sys

import numpy as np
from tinygrad import Device, Tensor, dtypes


def check(name, got, want, rtol=1e-5, atol=1e-5):
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        raise SystemExit(f"FAIL {name}: max difference {np.abs(got - want).max()} from numpy")
    print(f"PASS {name}")


def main():
    dev = Device[Device.DEFAULT]
    print(f"tinygrad on {Device.DEFAULT} ({getattr(dev, 'arch', '?')})")
    if Device.DEFAULT != "AMD":
        raise SystemExit(f"FAIL: the default device is {Device.DEFAULT}, not AMD (set DEV=AMD)")
    a, b = Tensor.rand(64, 64), Tensor.rand(64, 64)
    an, bn = a.numpy(), b.numpy()
    check("rand(64,64) @ rand(64,64)", (a @ b).numpy(), an @ bn)
    x = np.random.default_rng(7).standard_normal((33, 129)).astype(np.float32)
    t = Tensor(x)
    check("softmax", t.softmax(axis=1).numpy(), np.exp(x) / np.exp(x).sum(axis=1, keepdims=True))
    check("sum/max", np.array([t.sum().item(), t.max().item()]), np.array([x.sum(), x.max()]), 1e-4, 1e-3)
    h = Tensor(x.astype(np.float16))
    check("fp16 relu*2", (h.relu() * 2).numpy().astype(np.float32), np.maximum(x, 0).astype(np.float16) * 2, 1e-3,
          1e-3)
    i = Tensor(np.arange(1000, dtype=np.int32), dtype=dtypes.int32)
    check("int cumsum", i.cumsum().numpy(), np.cumsum(np.arange(1000, dtype=np.int32)), 0, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
