"""Triton matrix kernels on the matrix cores (tl.dot -> MFMA): GEMMs in
fp16, bf16, fp32, int8 and per-target fp8, a flash-attention forward pass,
and block-scaled MX GEMMs (tl.dot_scaled)."""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC: tl.constexpr):
    # Row-major A (MxK), B (KxN), C (MxN); K a multiple of BK.
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    pa = a + rm[:, None] * K + rk[None, :]
    pb = b + rk[:, None] * N + rn[None, :]
    ma = rm[:, None] < M
    mb = rn[None, :] < N
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K, BK):
        x = tl.load(pa, mask=ma, other=0.0)
        y = tl.load(pb, mask=mb, other=0.0)
        acc += tl.dot(x, y, out_dtype=ACC)
        pa += BK
        pb += BK * N
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty), mask=ma & mb)


@triton.jit
def flash_attn_fwd(q, k, v, o, sm_scale, seqlen, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    # q, k, v, o: [heads, seqlen, D]; grid (seqlen / BM, heads). sm_scale
    # includes log2(e) (exp2-based online softmax).
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    base = head * seqlen * D
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, D)
    qt = tl.load(q + base + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for start_n in range(0, seqlen, BN):
        kt = tl.load(k + base + (start_n + offs_n)[None, :] * D + offs_d[:, None])
        s = tl.dot(qt, kt) * sm_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        vt = tl.load(v + base + (start_n + offs_n)[:, None] * D + offs_d[None, :])
        acc += tl.dot(p.to(vt.dtype), vt)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o + base + offs_m[:, None] * D + offs_d[None, :], acc.to(o.dtype.element_ty))


@triton.jit
def dot_scaled_kernel(a, b, sa, sb, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      FMT: tl.constexpr):
    # A: (BM*grid0) x K elements (fp4: two per byte along K, low nibble first),
    # B: K x BN, scales: one e8m0 per 32 elements along K (sa: M x K/32,
    # sb: N x K/32); C: M x BN fp32.
    PACK: tl.constexpr = 2 if FMT == "e2m1" else 1
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rka = tl.arange(0, BK // PACK)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * (K // PACK) + (k // PACK + rka)[None, :])
        y = tl.load(b + (k // PACK + rka)[:, None] * BN + rn[None, :])
        xs = tl.load(sa + rm[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        ys = tl.load(sb + rn[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        acc = tl.dot_scaled(x, xs, FMT, y, ys, FMT, acc)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)


def _mm(a, c):
    return {"a": "*" + a, "b": "*" + a, "c": "*" + c, "M": "i32", "N": "i32", "K": "i32",
            "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "ACC": "constexpr"}


def _tiles(bm, bn, bk, acc=tl.float32):
    return {"BM": bm, "BN": bn, "BK": bk, "ACC": acc}


def _attn(dt):
    return {"q": "*" + dt, "k": "*" + dt, "v": "*" + dt, "o": "*" + dt, "sm_scale": "fp32", "seqlen": "i32",
            "BM": "constexpr", "BN": "constexpr", "D": "constexpr"}


def _scaled(elem):
    return {"a": "*" + elem, "b": "*" + elem, "sa": "*u8", "sb": "*u8", "c": "*fp32", "K": "i32",
            "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "FMT": "constexpr"}


CORPUS = [
    dict(name="matmul_f16", fn=matmul_kernel, signature=_mm("fp16", "fp16"), constexprs=_tiles(64, 64, 32)),
    dict(name="matmul_f16_big", fn=matmul_kernel, signature=_mm("fp16", "fp32"), constexprs=_tiles(128, 128, 32),
         options={"num_warps": 8}),
    dict(name="matmul_f16_small", fn=matmul_kernel, signature=_mm("fp16", "fp32"), constexprs=_tiles(16, 16, 64),
         options={"num_warps": 1}),
    dict(name="matmul_f64", fn=matmul_kernel, signature=_mm("fp64", "fp64"), constexprs=_tiles(32, 32, 16, tl.float64)),
    dict(name="matmul_bf16", fn=matmul_kernel, signature=_mm("bf16", "fp32"), constexprs=_tiles(64, 64, 64)),
    dict(name="matmul_f32", fn=matmul_kernel, signature=_mm("fp32", "fp32"), constexprs=_tiles(64, 64, 16)),
    dict(name="matmul_i8", fn=matmul_kernel, signature=_mm("i8", "i32"), constexprs=_tiles(64, 64, 64, tl.int32)),
    dict(name="matmul_fp8", fn=matmul_kernel, signature=_mm("fp8e4b8", "fp32"), constexprs=_tiles(64, 64, 64),
         targets=("gfx942",)),
    dict(name="matmul_fp8", fn=matmul_kernel, signature=_mm("fp8e4nv", "fp32"), constexprs=_tiles(64, 64, 64),
         targets=("gfx950",)),
    dict(name="matmul_bf8", fn=matmul_kernel, signature=_mm("fp8e5b16", "fp32"), constexprs=_tiles(64, 64, 64),
         targets=("gfx942",)),
    dict(name="matmul_bf8", fn=matmul_kernel, signature=_mm("fp8e5", "fp32"), constexprs=_tiles(64, 64, 64),
         targets=("gfx950",)),
    dict(name="flash_attn_f16", fn=flash_attn_fwd, signature=_attn("fp16"),
         constexprs={"BM": 64, "BN": 64, "D": 64}, options={"num_warps": 4}),
    dict(name="mxfp8", fn=dot_scaled_kernel, signature=_scaled("fp8e4nv"),
         constexprs={"BM": 32, "BN": 32, "BK": 64, "FMT": "e4m3"}, targets=("gfx950",)),
    dict(name="mxfp4", fn=dot_scaled_kernel, signature=_scaled("u8"),
         constexprs={"BM": 32, "BN": 32, "BK": 64, "FMT": "e2m1"}, targets=("gfx950",)),
]
