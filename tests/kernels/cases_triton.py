"""Triton cases: row-wise kernels (softmax, layernorm, cumsum, histogram,
atomic reductions) and the matrix-core kernels (tl.dot GEMMs in fp16, bf16,
fp32, int8, fp8, flash attention, MX block-scaled dots on gfx950). The block
size is the compiled kernel's (num_warps * 64, from its metadata)."""

import numpy as np

from harness import In, InOut, Launch, Out, blocks, case, close, exact, f32, i32
from numerics import EPS16, EPS32, EPSBF16, bf16_to_f32, e8m0_to_f64, fp4_table, fp8_table, rand_bf16, rand_fp8


def tcase(name, obj, kernel, targets=("gfx90a", "gfx942", "gfx950", "gfx908", "gfx1100", "gfx1151", "gfx1201")):
    return case(name, obj, kernel, targets=targets, triton=True)


@tcase("tri_softmax_f32", "tri_basic-softmax_f32", "softmax_kernel")
def tri_softmax(rng, target):
    rows, cols = 32, 1000
    x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    # As for the OpenCL softmax: exp within a few ulps, a sum of 1000 terms
    # (at most ~10 rounding levels, 6e-7) and a division; 4e-6 relative.
    return Launch(rows, None, [Out("out", np.float32, rows * cols), In(x), i32(cols), i32(cols)],
                  [close("out", e / e.sum(axis=1, keepdims=True), rtol=4e-6, atol=1e-9)])


@tcase("tri_softmax_f16_unaligned", "tri_basic-softmax_f16", "softmax_kernel")
def tri_softmax_f16(rng, target):
    rows, cols = 16, 333  # odd row stride: no vectorised access
    x = (rng.standard_normal((rows, cols)) * 2).astype(np.float16)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    # f32 softmax as above (4e-6), then rounded to f16 (2^-11 relative, and
    # 2^-25 absolute for results in the subnormal range).
    return Launch(rows, None, [Out("out", np.float16, rows * cols), In(x), i32(cols), i32(cols)],
                  [close("out", e / e.sum(axis=1, keepdims=True), rtol=EPS16 + 4e-6, atol=2.0 ** -25)])


@tcase("tri_layernorm_bf16", "tri_basic-layernorm_bf16", "layernorm_kernel")
def tri_layernorm_bf16(rng, target):
    rows, cols, eps = 8, 1024, 1e-5
    x = rand_bf16(rng, rows * cols, -3, 4).reshape(rows, cols)
    w = rng.uniform(0.5, 1.5, cols).astype(np.float32)
    b = rng.uniform(-1, 1, cols).astype(np.float32)
    xd = bf16_to_f32(x).astype(np.float64)
    mean = xd.mean(axis=1, keepdims=True)
    ref = (xd - mean) / np.sqrt(((xd - mean) ** 2).mean(axis=1, keepdims=True) + eps) * w + b
    # f32 statistics as for the f32 case (1e-5), then rounded to bf16 (2^-8 relative).
    return Launch(rows, None, [Out("out", np.uint16, rows * cols), In(x), In(w), In(b), i32(cols), i32(cols),
                               f32(eps)],
                  [close("out", ref, rtol=EPSBF16, atol=1e-5, transform=bf16_to_f32)])


@tcase("tri_layernorm_f32", "tri_basic-layernorm_f32", "layernorm_kernel")
def tri_layernorm(rng, target):
    rows, cols, eps = 16, 1000, 1e-5
    x = (rng.standard_normal((rows, cols)) + 0.5).astype(np.float32)
    w = rng.uniform(0.5, 1.5, cols).astype(np.float32)
    b = rng.uniform(-1, 1, cols).astype(np.float32)
    xd = x.astype(np.float64)
    mean = xd.mean(axis=1, keepdims=True)
    ref = (xd - mean) / np.sqrt(((xd - mean) ** 2).mean(axis=1, keepdims=True) + eps) * w + b
    # Two-pass f32 statistics over 1000 terms, outputs up to ~5: 1e-5 absolute.
    return Launch(rows, None, [Out("out", np.float32, rows * cols), In(x), In(w), In(b), i32(cols), i32(cols),
                               f32(eps)],
                  [close("out", ref, atol=1e-5, rtol=1e-5)])


@tcase("tri_cumsum_i32", "tri_basic-cumsum_i32", "cumsum_kernel")
def tri_cumsum(rng, target):
    n = 5000
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    g = blocks(n, 1024)
    pad = np.zeros(g * 1024, np.int32)
    pad[:n] = x
    ref = np.cumsum(pad.reshape(g, 1024), axis=1).reshape(-1)[:n].astype(np.int32)
    return Launch(g, None, [Out("out", np.int32, n), In(x), i32(n)], [exact("out", ref)])


@tcase("tri_histogram", "tri_basic-histogram", "histogram_kernel")
def tri_histogram(rng, target):
    n = 10_000
    x = rng.integers(0, 1 << 20, n).astype(np.int32)
    return Launch(blocks(n, 1024), None, [Out("out", np.int32, 64), In(x), i32(n)],
                  [exact("out", np.bincount(x % 64, minlength=64).astype(np.int32))])


@tcase("tri_sum_atomic_i32", "tri_basic-sum_i32", "sum_atomic")
def tri_sum_atomic(rng, target):
    n = 10_000
    x = rng.integers(-(2**20), 2**20, n).astype(np.int32)
    out = np.array([3, -(2**31)], dtype=np.int64).astype(np.int32)
    # Masked-off lanes contribute 0 to the max as well (other=0).
    return Launch(blocks(n, 1024), None, [InOut("out", out), In(x), i32(n)],
                  [exact("out", np.array([(3 + x.astype(np.int64).sum() + 2**31) % 2**32 - 2**31,
                                          max(x.max(), 0)], dtype=np.int32))])


def _gemm_bound(a, b, k, extra=0.0):
    """Elementwise error bound of an f32-accumulated dot of exactly
    represented inputs: (k + 1) * 2^-24 * (|A| |B|) (sequential or blocked
    summation, plus the final rounding), plus `extra` relative to |A| |B|."""
    mag = np.abs(a) @ np.abs(b)
    return ((k + 1) * EPS32 + extra) * mag


def _mm(m, n, k, grid_tile, a, b, ref_a, ref_b, out_dtype, extra=0.0, rtol=0.0):
    ref = ref_a @ ref_b
    tol = _gemm_bound(ref_a, ref_b, k, extra)
    return Launch((m // grid_tile[0], n // grid_tile[1]), None,
                  [In(a), In(b), Out("c", out_dtype, m * n), i32(m), i32(n), i32(k)],
                  [close("c", ref, rtol=rtol, atol=tol + (2.0 ** -24 if out_dtype == np.float16 else 0.0))])


@tcase("tri_matmul_f16", "tri_dot-matmul_f16", "matmul_kernel")
def tri_matmul_f16(rng, target):
    m, n, k = 128, 128, 256
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    # f16 products are exact in the f32 accumulator; the output is rounded to
    # f16 (relative 2^-11, plus 2^-24 absolute for subnormal results).
    return _mm(m, n, k, (64, 64), a, b, a.astype(np.float64), b.astype(np.float64), np.float16, rtol=EPS16)


@tcase("tri_matmul_f16_512threads", "tri_dot-matmul_f16_big", "matmul_kernel")
def tri_matmul_f16_big(rng, target):
    m, n, k = 256, 256, 64
    a = rng.uniform(-2, 2, (m, k)).astype(np.float16)
    b = rng.uniform(-2, 2, (k, n)).astype(np.float16)
    return _mm(m, n, k, (128, 128), a, b, a.astype(np.float64), b.astype(np.float64), np.float32)


@tcase("tri_matmul_f16_16x16", "tri_dot-matmul_f16_small", "matmul_kernel")
def tri_matmul_f16_small(rng, target):
    m, n, k = 48, 32, 128  # 16x16 tiles, one wave each
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    return _mm(m, n, k, (16, 16), a, b, a.astype(np.float64), b.astype(np.float64), np.float32)


@tcase("tri_matmul_f64", "tri_dot-matmul_f64", "matmul_kernel")
def tri_matmul_f64(rng, target):
    m, n, k = 64, 96, 48
    a = rng.uniform(-1, 1, (m, k))
    b = rng.uniform(-1, 1, (k, n))
    # f64 accumulation: (k + 1) * 2^-53 * (|A| |B|) elementwise, against the
    # products summed in extended precision (np.longdouble).
    ref = (a.astype(np.longdouble) @ b.astype(np.longdouble)).astype(np.float64)
    bound = (k + 1) * 2.0 ** -53 * (np.abs(a) @ np.abs(b)) * 1.01
    return Launch((m // 32, n // 32), None, [In(a), In(b), Out("c", np.float64, m * n), i32(m), i32(n), i32(k)],
                  [close("c", ref, atol=bound)])


@tcase("tri_matmul_bf16", "tri_dot-matmul_bf16", "matmul_kernel")
def tri_matmul_bf16(rng, target):
    m, n, k = 128, 64, 192
    a = rand_bf16(rng, m * k, -1, 1).reshape(m, k)
    b = rand_bf16(rng, k * n, -1, 1).reshape(k, n)
    fa, fb = bf16_to_f32(a).astype(np.float64), bf16_to_f32(b).astype(np.float64)
    return _mm(m, n, k, (64, 64), a, b, fa, fb, np.float32)


@tcase("tri_matmul_f32", "tri_dot-matmul_f32", "matmul_kernel")
def tri_matmul_f32(rng, target):
    m, n, k = 64, 128, 64
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    # gfx942 lowers fp32 tl.dot to v_mfma_*_xf32, whose inputs keep 10
    # mantissa bits: each product is off by up to 2 * 2^-10 relative.
    extra = 2.0 ** -9 if target == "gfx942" else 0.0
    return _mm(m, n, k, (64, 64), a, b, a.astype(np.float64), b.astype(np.float64), np.float32, extra=extra)


@tcase("tri_matmul_i8", "tri_dot-matmul_i8", "matmul_kernel")
def tri_matmul_i8(rng, target):
    m, n, k = 64, 128, 256
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    ref = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    return Launch((m // 64, n // 64), None, [In(a), In(b), Out("c", np.int32, m * n), i32(m), i32(n), i32(k)],
                  [exact("c", ref)])


@tcase("tri_matmul_fp8", "tri_dot-matmul_fp8", "matmul_kernel", targets=("gfx942", "gfx950"))
def tri_matmul_fp8(rng, target):
    # gfx942: fp8e4b8 (e4m3 fnuz, bias 8); gfx950: fp8e4nv (OCP e4m3fn).
    fmt = "e4m3fnuz" if target == "gfx942" else "e4m3fn"
    m, n, k = 128, 64, 128
    a = rand_fp8(rng, fmt, (m, k), 16.0)
    b = rand_fp8(rng, fmt, (k, n), 16.0)
    table = fp8_table(fmt)
    return _mm(m, n, k, (64, 64), a, b, table[a], table[b], np.float32)


@tcase("tri_matmul_bf8", "tri_dot-matmul_bf8", "matmul_kernel", targets=("gfx942", "gfx950"))
def tri_matmul_bf8(rng, target):
    # gfx942: fp8e5b16 (e5m2 fnuz, bias 16); gfx950: fp8e5 (OCP e5m2).
    fmt = "e5m2fnuz" if target == "gfx942" else "e5m2"
    m, n, k = 64, 128, 128
    a = rand_fp8(rng, fmt, (m, k), 8.0)
    b = rand_fp8(rng, fmt, (k, n), 8.0)
    table = fp8_table(fmt)
    return _mm(m, n, k, (64, 64), a, b, table[a], table[b], np.float32)


@tcase("tri_flash_attention_f16", "tri_dot-flash_attn_f16", "flash_attn_fwd")
def tri_flash_attention(rng, target):
    heads, seq, d = 2, 128, 64
    q = rng.uniform(-1, 1, (heads, seq, d)).astype(np.float16)
    k = rng.uniform(-1, 1, (heads, seq, d)).astype(np.float16)
    v = rng.uniform(-1, 1, (heads, seq, d)).astype(np.float16)
    scale = np.float32(1.4426950408889634 / np.sqrt(d))
    s = np.einsum("hmd,hnd->hmn", q.astype(np.float64), k.astype(np.float64)) * float(scale)
    p = np.exp2(s - s.max(axis=2, keepdims=True))
    ref = np.einsum("hmn,hnd->hmd", p / p.sum(axis=2, keepdims=True), v.astype(np.float64))
    # With |v| <= 1: P is rounded to f16 before the second dot (2^-11 relative
    # on each weight: at most 4.9e-4 on the output) while the normaliser l
    # sums the unrounded P (up to another 4.9e-4), the output is rounded to
    # f16 (4.9e-4 for |o| <= 1), exp2 and f32 sums add ~1e-6: 2e-3 absolute.
    return Launch((seq // 64, heads), None,
                  [In(q), In(k), In(v), Out("o", np.float16, heads * seq * d), f32(scale), i32(seq)],
                  [close("o", ref, atol=2e-3)])


def _mx(rng, fmt, m, n, k):
    """Random MX operands: element codes and e8m0 scales (one per 32 along K)."""
    if fmt == "e2m1":
        table = fp4_table()
        ca = rng.integers(0, 16, (m, k)).astype(np.uint8)
        cb = rng.integers(0, 16, (k, n)).astype(np.uint8)
        a = (ca[:, 0::2] | (ca[:, 1::2] << 4)).astype(np.uint8)      # two per byte along K, low nibble first
        b = (cb[0::2, :] | (cb[1::2, :] << 4)).astype(np.uint8)
    else:
        table = fp8_table("e4m3fn")
        ca, cb = rand_fp8(rng, "e4m3fn", (m, k), 64.0), rand_fp8(rng, "e4m3fn", (k, n), 64.0)
        a, b = ca, cb
    sa = rng.integers(120, 134, (m, k // 32)).astype(np.uint8)
    sb = rng.integers(120, 134, (n, k // 32)).astype(np.uint8)
    fa = table[ca] * np.repeat(e8m0_to_f64(sa), 32, axis=1)
    fb = table[cb] * np.repeat(e8m0_to_f64(sb), 32, axis=1).T
    return a, b, sa, sb, fa, fb


def _mx_case(rng, fmt):
    m, n, k = 64, 32, 128
    a, b, sa, sb, fa, fb = _mx(rng, fmt, m, n, k)
    # Scaled products are exact in f32 (scales are powers of two in range);
    # f32 accumulation bound as for the other GEMMs.
    return Launch(m // 32, None, [In(a), In(b), In(sa), In(sb), Out("c", np.float32, m * n), i32(k)],
                  [close("c", fa @ fb, atol=_gemm_bound(fa, fb, k))])


@tcase("tri_mxfp8_dot_scaled", "tri_dot-mxfp8", "dot_scaled_kernel", targets=("gfx950",))
def tri_mxfp8(rng, target):
    return _mx_case(rng, "e4m3")


@tcase("tri_mxfp4_dot_scaled", "tri_dot-mxfp4", "dot_scaled_kernel", targets=("gfx950",))
def tri_mxfp4(rng, target):
    return _mx_case(rng, "e2m1")


@tcase("tri_argmax_f32", "tri_misc-argmax_f32", "argmax_kernel")
def tri_argmax(rng, target):
    rows, cols = 40, 1000
    x = rng.standard_normal((rows, cols)).astype(np.float32)  # distinct values: no ties
    return Launch(rows, None, [Out("idx", np.int32, rows), Out("max", np.float32, rows), In(x), i32(cols)],
                  [exact("idx", np.argmax(x, axis=1).astype(np.int32)), exact("max", x.max(axis=1))])


@tcase("tri_sort_i32", "tri_misc-sort_i32", "sort_kernel")
def tri_sort(rng, target):
    rows = 24
    x = rng.integers(-(2**31), 2**31 - 1, (rows, 256), dtype=np.int64).astype(np.int32)
    x[:, :40] = rng.integers(-5, 5, (rows, 40))  # duplicates
    return Launch(rows, None, [Out("out", np.int32, rows * 256), In(x)], [exact("out", np.sort(x, axis=1))])


@tcase("tri_running_max_i32", "tri_misc-running_max_i32", "running_max_kernel")
def tri_running_max(rng, target):
    rows = 16
    x = rng.integers(-(2**31), 2**31 - 1, (rows, 512), dtype=np.int64).astype(np.int32)
    return Launch(rows, None, [Out("out", np.int32, rows * 512), In(x)],
                  [exact("out", np.maximum.accumulate(x, axis=1))])


@tcase("tri_intdiv_i32", "tri_misc-intdiv_i32", "intdiv_kernel")
def tri_intdiv(rng, target):
    n = 5000
    a = rng.integers(-(2**31) + 1, 2**31 - 1, n, dtype=np.int64)
    b = rng.integers(-1000, 1000, n, dtype=np.int64)
    b[b == 0] = 7
    # Triton's // and % on integers truncate toward zero (C semantics).
    q = np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)
    r = a - q * b
    return Launch(blocks(n, 512), None,
                  [Out("q", np.int32, n), Out("r", np.int32, n), In(a.astype(np.int32)), In(b.astype(np.int32)),
                   i32(n)],
                  [exact("q", q.astype(np.int32)), exact("r", r.astype(np.int32))])


# Integer-valued operands: every product and partial sum is an integer below
# 2^24 (below 2^11 for f16 outputs), so the result is exact whatever the
# summation order or MFMA blocking; any lane/layout mistake shows as a mismatch.
def _mm_exact(m, n, k, tile, a, b, fa, fb, out_dtype):
    ref = (fa.astype(np.float64) @ fb.astype(np.float64)).astype(out_dtype)
    return Launch((m // tile[0], n // tile[1]), None, [In(a), In(b), Out("c", out_dtype, m * n), i32(m), i32(n),
                                                       i32(k)],
                  [exact("c", ref)])


@tcase("tri_matmul_f16_exact", "tri_dot-matmul_f16", "matmul_kernel")
def tri_matmul_f16_exact(rng, target):
    m, n, k = 128, 128, 256
    a = rng.integers(-2, 3, (m, k)).astype(np.float16)
    b = rng.integers(-2, 3, (k, n)).astype(np.float16)
    return _mm_exact(m, n, k, (64, 64), a, b, a, b, np.float16)


@tcase("tri_matmul_bf16_exact", "tri_dot-matmul_bf16", "matmul_kernel")
def tri_matmul_bf16_exact(rng, target):
    from numerics import f32_to_bf16
    m, n, k = 128, 64, 192
    fa = rng.integers(-8, 9, (m, k)).astype(np.float32)
    fb = rng.integers(-8, 9, (k, n)).astype(np.float32)
    return _mm_exact(m, n, k, (64, 64), f32_to_bf16(fa), f32_to_bf16(fb), fa, fb, np.float32)


@tcase("tri_matmul_f32_exact", "tri_dot-matmul_f32", "matmul_kernel")
def tri_matmul_f32_exact(rng, target):
    m, n, k = 64, 128, 64
    a = rng.integers(-8, 9, (m, k)).astype(np.float32)  # exact in xf32's 10-bit mantissa too
    b = rng.integers(-8, 9, (k, n)).astype(np.float32)
    return _mm_exact(m, n, k, (64, 64), a, b, a, b, np.float32)


@tcase("tri_matmul_fp8_exact", "tri_dot-matmul_fp8", "matmul_kernel", targets=("gfx942", "gfx950"))
def tri_matmul_fp8_exact(rng, target):
    fmt = "e4m3fnuz" if target == "gfx942" else "e4m3fn"
    table = fp8_table(fmt)
    ints = np.flatnonzero(np.isfinite(table) & (np.abs(table) <= 8) & (table == np.round(table)))
    m, n, k = 128, 64, 128
    a = ints[rng.integers(0, len(ints), (m, k))].astype(np.uint8)
    b = ints[rng.integers(0, len(ints), (k, n))].astype(np.uint8)
    return _mm_exact(m, n, k, (64, 64), a, b, table[a], table[b], np.float32)


@tcase("tri_mxfp8_exact", "tri_dot-mxfp8", "dot_scaled_kernel", targets=("gfx950",))
def tri_mxfp8_exact(rng, target):
    table = fp8_table("e4m3fn")
    ints = np.flatnonzero(np.isfinite(table) & (np.abs(table) <= 8) & (table == np.round(table)))
    m, n, k = 64, 32, 128
    ca = ints[rng.integers(0, len(ints), (m, k))].astype(np.uint8)
    cb = ints[rng.integers(0, len(ints), (k, n))].astype(np.uint8)
    sa = rng.integers(125, 130, (m, k // 32)).astype(np.uint8)  # scales 1/4 .. 8: still exact
    sb = rng.integers(125, 130, (n, k // 32)).astype(np.uint8)
    fa = table[ca] * np.repeat(e8m0_to_f64(sa), 32, axis=1)
    fb = table[cb] * np.repeat(e8m0_to_f64(sb), 32, axis=1).T
    return Launch(m // 32, None, [In(ca), In(cb), In(sa), In(sb), Out("c", np.float32, m * n), i32(k)],
                  [exact("c", (fa @ fb).astype(np.float32))])
