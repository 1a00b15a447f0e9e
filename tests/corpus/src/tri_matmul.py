"""Triton GEMMs on the matrix cores (tl.dot) in fp16, bf16, fp32, int8 and fp8,
and a flash-attention forward kernel."""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    sam = tl.multiple_of(sam, 16)
    sbk = tl.multiple_of(sbk, 16)
    scm = tl.multiple_of(scm, 16)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    pa = a + rm[:, None] * sam + rk[None, :] * sak
    pb = b + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k in range(0, tl.cdiv(K, BK)):
        # K is a multiple of BK: unmasked, vectorised loads.
        x = tl.load(pa)
        y = tl.load(pb)
        acc += tl.dot(x, y, out_dtype=ACC)
        pa += BK * sak
        pb += BK * sbk
    pc = c + rm[:, None] * scm + rn[None, :] * scn
    tl.store(pc, acc.to(c.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def flash_attn_fwd(q, k, v, o, sm_scale, seqlen, stride_s,
                   BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    stride_s = tl.multiple_of(stride_s, 16)
    base = head * seqlen * stride_s
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, D)
    qt = tl.load(q + base + offs_m[:, None] * stride_s + offs_d[None, :])
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for start_n in range(0, seqlen, BN):
        kt = tl.load(k + base + (start_n + offs_n)[None, :] * stride_s + offs_d[:, None])
        s = tl.dot(qt, kt) * sm_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        vt = tl.load(v + base + (start_n + offs_n)[:, None] * stride_s + offs_d[None, :])
        acc += tl.dot(p.to(vt.dtype), vt)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o + base + offs_m[:, None] * stride_s + offs_d[None, :], acc.to(o.dtype.element_ty))


def _mm(a, c):
    sig = {"a": "*" + a, "b": "*" + a, "c": "*" + c}
    sig.update({k: "i32" for k in ("M", "N", "K", "sam", "sbk", "scm")})
    sig.update({k: "constexpr" for k in ("sak", "sbn", "scn", "BM", "BN", "BK", "ACC")})
    return sig


def _attn(dt):
    return {"q": "*" + dt, "k": "*" + dt, "v": "*" + dt, "o": "*" + dt, "sm_scale": "fp32", "seqlen": "i32",
            "stride_s": "i32", "BM": "constexpr", "BN": "constexpr", "D": "constexpr"}


_UNIT = {"sak": 1, "sbn": 1, "scn": 1}


def _tiles(bm, bn, bk, acc=tl.float32):
    return {**_UNIT, "BM": bm, "BN": bn, "BK": bk, "ACC": acc}


CORPUS = [
    dict(name="matmul_f16", fn=matmul_kernel, signature=_mm("fp16", "fp16"), constexprs=_tiles(128, 128, 32),
         options={"num_warps": 8}),
    dict(name="matmul_bf16", fn=matmul_kernel, signature=_mm("bf16", "bf16"),
         constexprs=_tiles(64, 64, 64)),
    dict(name="matmul_f32", fn=matmul_kernel, signature=_mm("fp32", "fp32"),
         constexprs=_tiles(64, 64, 16)),
    dict(name="matmul_i8", fn=matmul_kernel, signature=_mm("i8", "i32"),
         constexprs=_tiles(64, 64, 64, tl.int32)),
    dict(name="matmul_fp8e4", fn=matmul_kernel, signature=_mm("fp8e4b8", "fp16"),
         constexprs=_tiles(64, 64, 64), targets=("gfx942",)),
    dict(name="matmul_fp8e5", fn=matmul_kernel, signature=_mm("fp8e5b16", "fp16"),
         constexprs=_tiles(64, 64, 64), targets=("gfx942",)),
    dict(name="matmul_fp8e4", fn=matmul_kernel, signature=_mm("fp8e4nv", "bf16"),
         constexprs=_tiles(64, 64, 64), targets=("gfx950",)),
    dict(name="matmul_fp8e5", fn=matmul_kernel, signature=_mm("fp8e5", "bf16"),
         constexprs=_tiles(64, 64, 64), targets=("gfx950",)),
    dict(name="flash_attn_f16", fn=flash_attn_fwd, signature=_attn("fp16"),
         constexprs={"BM": 64, "BN": 64, "D": 64}, options={"num_warps": 4}),
    dict(name="flash_attn_bf16", fn=flash_attn_fwd, signature=_attn("bf16"),
         constexprs={"BM": 128, "BN": 32, "D": 128}, options={"num_warps": 4}),
]
