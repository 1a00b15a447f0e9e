"""Whole-program cases: softmax, layer normalisation, GEMMs (SIMT fp32/fp64),
scratch (private arrays and VGPR spills), real calls, -O0 code."""

from fractions import Fraction

import numpy as np

from harness import CDNA, In, InOut, Launch, Out, blocks, case, close, exact, f32, i32
from numerics import EPS32, fma_f32


def _softmax(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _layernorm(x, g, b, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


@case("softmax", "rows", "softmax_rows")
def softmax(rng, target):
    rows, cols = 64, 1000
    x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
    # Relative error budget: x - max rounded (2^-24 |x - max|, significant only
    # where the output is below atol), expf within a few ulps (3e-7), the sum
    # (4 sequential terms per work-item, then 8 tree levels: 12 * 2^-24 = 7e-7)
    # and the 2.5-ulp OpenCL division (1.5e-7): about 1.2e-6; 4e-6 allowed.
    return Launch(rows, 256, [Out("out", np.float32, rows * cols), In(x), i32(cols)],
                  [close("out", _softmax(x), rtol=4e-6, atol=1e-9)])


@case("layernorm", "rows", "layernorm", targets=CDNA)
def layernorm(rng, target):
    rows, cols, eps = 32, 3000, 1e-5
    x = (rng.standard_normal((rows, cols)) + 0.5).astype(np.float32)
    g = rng.uniform(0.5, 1.5, cols).astype(np.float32)
    b = rng.uniform(-1, 1, cols).astype(np.float32)
    # Sums of 3000 f32 terms (about 12 rounding steps deep on each path),
    # E[x^2] - mean^2 with |mean| ~ 0.5 and var ~ 1: relative error of the
    # variance about 1e-6, outputs up to ~5 in magnitude: 2e-5 absolute.
    return Launch(rows, 256, [Out("out", np.float32, rows * cols), In(x), In(g), In(b), i32(cols), f32(eps)],
                  [close("out", _layernorm(x, g, b, eps), atol=2e-5, rtol=1e-5)])


@case("sgemm_simt", "gemm", "sgemm")
def sgemm_simt(rng, target):
    M, N, K = 100, 70, 90
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    # Sequential f32 accumulation over K terms: |error| <= K * 2^-24 * (|A| |B|)
    # (the standard gamma_K bound, first order), elementwise.
    bound = (K + 1) * EPS32 * (np.abs(a).astype(np.float64) @ np.abs(b))
    return Launch((blocks(N, 16), blocks(M, 16)), (16, 16),
                  [Out("c", np.float32, M * N), In(a), In(b), i32(M), i32(N), i32(K)],
                  [close("c", a.astype(np.float64) @ b, atol=bound)])


@case("dgemm_naive", "gemm", "dgemm_naive")
def dgemm_naive(rng, target):
    M, N, K = 40, 50, 64
    a = rng.uniform(-1, 1, (M, K))
    b = rng.uniform(-1, 1, (K, N))
    # Sequential f64 accumulation (fma or not): |error| <= K * 2^-53 * (|A| |B|)
    # against the exact rational product.
    bound = (K + 1) * 2.0 ** -53 * (np.abs(a) @ np.abs(b))
    fa = [[Fraction(float(v)) for v in row] for row in a]
    fb = [[Fraction(float(v)) for v in row] for row in b.T]
    ref = np.array([[float(sum(x * y for x, y in zip(ra, cb))) for cb in fb] for ra in fa])
    return Launch((blocks(N, 16), blocks(M, 4)), (16, 4),
                  [Out("c", np.float64, M * N), In(a), In(b), i32(M), i32(N), i32(K)],
                  [close("c", ref, atol=bound)])


@case("scratch_private_array", "scratch", "private_array")
def scratch_private_array(rng, target):
    threads, n = 256, 50
    x = rng.standard_normal(threads * 64).astype(np.float32)
    idx = rng.integers(0, 1000, threads * n).astype(np.int32)
    buf = x.reshape(threads, 64) * np.arange(64, dtype=np.float32)
    acc = np.zeros(threads, np.float32)
    for k in range(n):  # same sequential f32 order as the kernel: exact
        acc = acc + buf[np.arange(threads), idx.reshape(threads, n)[:, k] & 63]
    return Launch(threads // 64, 64, [Out("out", np.float32, threads), In(idx), In(x), i32(n)],
                  [exact("out", acc)])


@case("scratch_spill", "scratch", "spill_vgprs")
def scratch_spill(rng, target):
    n = 256
    x = rng.uniform(-1, 1, 96 * n).astype(np.float32)
    v = x.reshape(96, n).copy()
    for r in range(3):  # the kernel's in-place update order, one fma each: exact
        for k in range(96):
            v[k] = fma_f32(v[k], v[(k * 7 + 5) % 96], v[(k * 13 + r) % 96])
    out = v * v[::-1]
    return Launch(n // 64, 64, [Out("out", np.float32, 96 * n), In(x), i32(n)], [exact("out", out)])


def _collatz(x):
    s = 0
    while x > 1 and s < 1000:
        x = 3 * x + 1 if x & 1 else x >> 1
        s += 1
    return s


@case("call_noinline", "call", "call_poly")
def call_noinline(rng, target):
    n, deg = 512, 6
    x = rng.uniform(-1, 1, n).astype(np.float32)
    coef = rng.uniform(-1, 1, deg + 1).astype(np.float32)

    def poly(v, d):
        r = np.zeros_like(v)
        for k in range(d, -1, -1):
            r = fma_f32(r, v, np.full_like(v, coef[k]))
        return r
    a = poly(x, deg)
    b = poly(a, deg - 1)
    steps = np.clip([_collatz(i + 1) for i in range(n)], 3, 40).astype(np.int32)
    return Launch(n // 64, 64, [Out("out", np.float32, 2 * n), Out("steps", np.int32, n), In(x), In(coef), i32(deg)],
                  [exact("out", np.stack([a, b], axis=1)), exact("steps", steps)])


@case("o0_saxpy", "o0", "o0_saxpy")
def o0_saxpy(rng, target):
    n = 1000
    x = rng.uniform(-10, 10, n).astype(np.float32)
    y = rng.uniform(-10, 10, n).astype(np.float32)
    return Launch(blocks(n, 64), 64, [InOut("y", y), In(x), f32(1.5), i32(n)],
                  [exact("y", fma_f32(np.float32(1.5), x, y))])


@case("o0_particles", "o0", "o0_particles")
def o0_particles(rng, target):
    n, dt = 300, 0.125
    p = np.zeros(n, dtype=[("x", np.float32), ("y", np.float32), ("z", np.float32), ("id", np.int32)])
    for f in ("x", "y", "z"):
        p[f] = rng.uniform(-10, 10, n)
    p["id"] = np.arange(n) * 3
    q = p.copy()
    d = np.float32(dt)
    # dt is a power of two: dt * y is exact, so contraction does not matter.
    q["x"] = p["x"] + d * p["y"]
    q["y"] = p["y"] - d * p["z"]
    q["id"] = p["id"] + 1
    return Launch(blocks(n, 64), 64, [InOut("p", p), f32(dt), i32(n)],
                  [exact("p", q.view(np.uint32).reshape(-1), view=np.uint32)])


@case("o0_loop_sum", "o0", "o0_loop_sum")
def o0_loop_sum(rng, target):
    n = 100
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    s = int(np.where(a & 1, a, -(a >> 1)).sum())
    return Launch(2, 64, [Out("out", np.int32, 128), In(a), i32(n)], [exact("out", s + np.arange(128, dtype=np.int32))])


@case("o0_switch", "o0", "o0_switch")
def o0_switch(rng, target):
    n = 1000
    k = rng.integers(-10000, 10000, n).astype(np.int32)
    sel = k & 7
    ref = np.select([sel == 0, sel == 1, sel == 2, sel == 5], [np.full(n, 10), k * 3, k >> 2, -k], 0).astype(np.int32)
    return Launch(blocks(n, 64), 64, [Out("o", np.int32, n), In(k), i32(n)], [exact("o", ref)])


@case("o0_lds", "o0", "o0_lds")
def o0_lds(rng, target):
    g = 16
    x = rng.standard_normal(64 * g).astype(np.float32)
    w = x.reshape(g, 64)
    return Launch(g, 64, [Out("out", np.float32, 64 * g), In(x)], [exact("out", w[:, ::-1] + w)])


@case("o0_hip_call_atomic", "o0_hip", "o0_clamp_atomic")
def o0_hip_call_atomic(rng, target):
    n = 2000
    x = rng.uniform(-2, 2, n).astype(np.float32)
    x[::10] = 1.0
    c = np.clip(x, -1, 1)
    return Launch(blocks(n, 128), 128, [Out("out", np.float32, n), Out("count", np.int32, 1), In(x), i32(n)],
                  [exact("out", c), exact("count", np.array([np.count_nonzero(c == 1.0)], np.int32))])


def _rsum(a, lo, hi):
    if hi - lo <= 2:
        return int(a[lo:hi].sum())
    mid = lo + (hi - lo) // 2
    return _rsum(a, lo, mid) * 3 + _rsum(a, mid, hi)


@case("recursion", "calls", "recursion")
def recursion(rng, target):
    threads, n = 128, 37
    a = rng.integers(-1000, 1000, threads + n).astype(np.int32)
    fib = [0, 1]
    while len(fib) < 16:
        fib.append(fib[-1] + fib[-2])
    return Launch(threads // 64, 64,
                  [Out("fib", np.int32, threads), Out("sum", np.int64, threads), In(a), i32(n)],
                  [exact("fib", np.array([fib[i % 16] for i in range(threads)], np.int32)),
                   exact("sum", np.array([_rsum(a.astype(np.int64), i, i + n) for i in range(threads)], np.int64))])


@case("indirect_calls", "calls", "indirect_calls")
def indirect_calls(rng, target):
    n = 1000
    sel = rng.integers(0, 1 << 20, n).astype(np.int32)
    x = rng.integers(-(2**20), 2**20, n).astype(np.int32)
    y = rng.integers(-(2**10), 2**10, n).astype(np.int32)
    x64, y64, s = x.astype(np.int64), y.astype(np.int64), sel & 3
    ref = np.select([s == 0, s == 1, s == 2], [x64 + y64, x64 - y64, x64 * y64], x64 ^ y64).astype(np.int32)
    return Launch(blocks(n, 128), 128, [Out("out", np.int32, n), In(sel), In(x), In(y), i32(n)], [exact("out", ref)])
