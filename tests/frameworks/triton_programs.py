#!/usr/bin/env python3
"""Triton programs through Triton's own HIP runtime, each checked against numpy.

Run inside a sysroot with the frameworks venv, under the emulator:
  rocjitsu --config configs/gfx942_cdna3_kmd.json -- python3 tests/frameworks/triton_programs.py [--size ci|full] [-k NAME]

Triton compiles each kernel for the GPU HIP reports, builds its launcher
and launches through libamdhip64 (hipModuleLaunchKernel); device buffers come
from the `torch` stand-in in tests/frameworks/hiptorch. Prints one line per
program (`PASS name (s)` or `FAIL name: what`) and `triton: N passed, M failed`.
"""

import argparse
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "hiptorch"))

import numpy as np  # noqa: E402
import torch  # noqa: E402  (the stand-in)
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

RNG = np.random.default_rng(20261205)


def close(name, got, want, rtol, atol):
    if got.shape != want.shape:
        raise AssertionError(f"{name}: shape {got.shape}, expected {want.shape}")
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        raise AssertionError(f"{name}: {bad.sum()} of {bad.size} elements differ, first at {i}: "
                             f"{got[i]!r} vs numpy {want[i]!r} (rtol {rtol}, atol {atol})")


# ---- vector add -----------------------------------------------------------


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def vector_add(size):
    n = {"ci": 98_432, "full": 1 << 22}[size]
    a = RNG.standard_normal(n, dtype=np.float32)
    b = RNG.standard_normal(n, dtype=np.float32)
    x, y = torch.tensor(a), torch.tensor(b)
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(n, 1024), )](x, y, out, n, BLOCK=1024)
    close("vector_add", out.numpy(), a + b, 0, 0)


# ---- fused softmax (one program per row, the row held in registers) -------


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols, BLOCK: tl.constexpr):
    start = tl.program_id(0)
    step = tl.num_programs(0)
    for row in tl.range(start, n_rows, step):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_stride + cols, y, mask=mask)


def softmax(size):
    rows, cols = {"ci": (96, 781), "full": (1823, 781)}[size]
    a = RNG.standard_normal((rows, cols), dtype=np.float32)
    x = torch.tensor(a)
    y = torch.empty_like(x)
    programs = min(rows, 64)
    softmax_kernel[(programs, )](y, x, x.stride(0), y.stride(0), rows, cols, BLOCK=triton.next_power_of_2(cols),
                                 num_warps=8)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    close("softmax", y.numpy(), e / e.sum(axis=1, keepdims=True), 1e-5, 1e-7)


# ---- layer norm (forward, with the mean and 1/std saved) ------------------


@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < n, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < n, other=0.0).to(tl.float32)
        d = tl.where(cols < n, x - mean, 0.0)
        acc += d * d
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for off in range(0, n, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < n
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_ptr + cols, y.to(tl.float16), mask=mask)


def layer_norm(size):
    rows, n = {"ci": (64, 1536), "full": (1151, 8192)}[size]
    eps = 1e-5
    a = (RNG.standard_normal((rows, n)) * 2 + 0.5).astype(np.float16)
    w = RNG.random(n).astype(np.float16)
    b = RNG.random(n).astype(np.float16)
    x, wt, bt = torch.tensor(a), torch.tensor(w), torch.tensor(b)
    y = torch.empty_like(x)
    mean = torch.empty(rows, dtype=torch.float32)
    rstd = torch.empty(rows, dtype=torch.float32)
    layer_norm_kernel[(rows, )](x, y, wt, bt, mean, rstd, x.stride(0), n, eps, BLOCK=1024, num_warps=8)
    a32 = a.astype(np.float32)
    m = a32.mean(axis=1)
    r = 1 / np.sqrt(a32.var(axis=1) + eps)
    want = ((a32 - m[:, None]) * r[:, None] * w.astype(np.float32) + b.astype(np.float32)).astype(np.float16)
    close("layer_norm mean", mean.numpy(), m, 1e-5, 1e-5)
    close("layer_norm rstd", rstd.numpy(), r, 1e-4, 0)
    close("layer_norm", y.numpy().astype(np.float32), want.astype(np.float32), 1e-2, 1e-2)


# ---- matmul with autotune (grouped program order, fp16 in, fp32 accumulate) -


def matmul_configs():
    return [
        triton.Config({"BM": 64, "BN": 64, "BK": 32, "GROUP_M": 4}, num_warps=4, num_stages=2),
        triton.Config({"BM": 128, "BN": 64, "BK": 64, "GROUP_M": 8}, num_warps=4, num_stages=2),
        triton.Config({"BM": 32, "BN": 32, "BK": 32, "GROUP_M": 1}, num_warps=2, num_stages=2),
    ]


@triton.autotune(configs=matmul_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BM)
    n_n = tl.cdiv(N, BN)
    per_group = GROUP_M * n_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = min(n_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        acc = tl.dot(tl.load(a, mask=rk[None, :] < left, other=0.0), tl.load(b, mask=rk[:, None] < left, other=0.0),
                     acc)
        a += BK * sak
        b += BK * sbk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc.to(tl.float16), mask=(cm[:, None] < M) &
             (cn[None, :] < N))


def matmul_launch(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]), )
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1))


def matmul(size):
    M, N, K = {"ci": (192, 160, 200), "full": (512, 512, 512)}[size]
    a = RNG.standard_normal((M, K)).astype(np.float16)
    b = RNG.standard_normal((K, N)).astype(np.float16)
    at, bt = torch.tensor(a), torch.tensor(b)
    c = torch.empty((M, N), dtype=torch.float16)
    matmul_launch(at, bt, c)
    best = matmul_kernel.best_config
    if best is None or len(matmul_kernel.cache) != 1:
        raise AssertionError(f"autotune chose nothing (best {best}, cache {matmul_kernel.cache})")
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    close("matmul", c.numpy().astype(np.float32), want.astype(np.float32), 1e-2, 5e-2)
    # A transposed operand through strides: the same kernel, a second key.
    bT = torch.tensor(np.ascontiguousarray(b.T))
    c2 = torch.empty((M, N), dtype=torch.float16)
    matmul_launch(at, bT.T, c2)
    close("matmul (B transposed)", c2.numpy().astype(np.float32), want.astype(np.float32), 1e-2, 5e-2)
    print(f"  autotune picked {best}")


# ---- flash attention (forward; causal and not) ----------------------------


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, stride_h, stride_m, N_CTX, H: tl.constexpr,
                    HEAD_DIM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh * stride_h
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.full([BM], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # log2(e): exp2 below
    hi = (start_m + 1) * BM if CAUSAL else N_CTX
    for start_n in range(0, hi, BN):
        cols = start_n + offs_n
        k = tl.load(k_ptr + base + cols[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, k) * qk_scale
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= cols[None, :], qk, -1.0e6)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + cols[:, None] * stride_m + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16))


def attention_reference(q, k, v, scale, causal):
    s = np.einsum("zhmd,zhnd->zhmn", q.astype(np.float32), k.astype(np.float32)) * scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    p = s / s.sum(axis=-1, keepdims=True)
    return np.einsum("zhmn,zhnd->zhmd", p, v.astype(np.float32))


def flash_attention(size):
    # The tutorial's head dimension and block shape (BM 128, BN 64, HEAD_DIM 64);
    # the CI size keeps batch, heads and context small.
    Z, H, N_CTX, D = {"ci": (1, 2, 256, 64), "full": (2, 4, 1024, 64)}[size]
    BM, BN = 128, 64
    scale = 0.5
    for causal in (False, True):
        q = (RNG.standard_normal((Z, H, N_CTX, D)) * 0.5).astype(np.float16)
        k = (RNG.standard_normal((Z, H, N_CTX, D)) * 0.5).astype(np.float16)
        v = (RNG.standard_normal((Z, H, N_CTX, D)) * 0.5).astype(np.float16)
        qt, kt, vt = torch.tensor(q), torch.tensor(k), torch.tensor(v)
        o = torch.empty_like(qt)
        attn_fwd_kernel[(N_CTX // BM, Z * H)](qt, kt, vt, o, scale, qt.stride(1), qt.stride(2), N_CTX, H=H,
                                              HEAD_DIM=D, BM=BM, BN=BN, CAUSAL=causal, num_warps=4, num_stages=1)
        want = attention_reference(q, k, v, scale, causal)
        close(f"flash_attention causal={causal}", o.numpy().astype(np.float32), want, 1e-2, 1e-2)


PROGRAMS = {
    "vector_add": vector_add,
    "softmax": softmax,
    "layer_norm": layer_norm,
    "matmul_autotune": matmul,
    "flash_attention": flash_attention,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=("ci", "full"), default="ci")
    ap.add_argument("-k", dest="filter", default="", help="run only programs whose name contains this")
    args = ap.parse_args()
    target = triton.runtime.driver.active.get_current_target()
    print(f"triton {triton.__version__} on {target.arch} (HIP {torch.version.hip}), size {args.size}")
    passed = failed = 0
    for name, fn in PROGRAMS.items():
        if args.filter not in name:
            continue
        t0 = time.monotonic()
        try:
            fn(args.size)
        except Exception as e:  # noqa: BLE001 (every failure is reported and counted)
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            traceback.print_exc(file=sys.stderr)
        else:
            passed += 1
            print(f"PASS {name} ({time.monotonic() - t0:.1f} s)")
        sys.stdout.flush()
    print(f"triton: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
