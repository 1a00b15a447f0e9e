"""Triton row-wise kernels: softmax, layer normalisation, and reductions."""

import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out, inp, stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < cols
    x = tl.load(inp + row * stride + offs, mask=m, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out + row * stride + offs, (e / tl.sum(e, axis=0)).to(out.dtype.element_ty), mask=m)


@triton.jit
def layernorm_kernel(out, inp, w, b, stride, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, cols, BLOCK):
        c = off + tl.arange(0, BLOCK)
        acc += tl.load(inp + row * stride + c, mask=c < cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / cols
    var = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, cols, BLOCK):
        c = off + tl.arange(0, BLOCK)
        x = tl.load(inp + row * stride + c, mask=c < cols, other=0.0).to(tl.float32)
        x = tl.where(c < cols, x - mean, 0.0)
        var += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(var, axis=0) / cols + eps)
    for off in range(0, cols, BLOCK):
        c = off + tl.arange(0, BLOCK)
        mk = c < cols
        x = tl.load(inp + row * stride + c, mask=mk, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * tl.load(w + c, mask=mk) + tl.load(b + c, mask=mk)
        tl.store(out + row * stride + c, y.to(out.dtype.element_ty), mask=mk)


@triton.jit
def sum_atomic(out, inp, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(inp + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out, tl.sum(x, axis=0))
    tl.atomic_max(out + 1, tl.max(x, axis=0))


@triton.jit
def cumsum_kernel(out, inp, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(inp + offs, mask=offs < n, other=0)
    tl.store(out + offs, tl.cumsum(x, axis=0), mask=offs < n)


@triton.jit
def histogram_kernel(out, inp, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(inp + offs, mask=offs < n, other=0) % BINS
    h = tl.histogram(x, BINS)
    tl.atomic_add(out + tl.arange(0, BINS), h)


@triton.jit
def transpose_kernel(out, inp, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(inp + rm[:, None] * N + rn[None, :], mask=m)
    tl.store(out + rn[:, None] * M + rm[None, :], tl.trans(x), mask=tl.trans(m))


CORPUS = [
    dict(name="softmax_f32", fn=softmax_kernel,
         signature={"out": "*fp32", "inp": "*fp32", "stride": "i32", "cols": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 1024}),
    dict(name="softmax_f16", fn=softmax_kernel,
         signature={"out": "*fp16", "inp": "*fp16", "stride": "i32", "cols": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 2048}, attrs={}),
    dict(name="layernorm_bf16", fn=layernorm_kernel,
         signature={"out": "*bf16", "inp": "*bf16", "w": "*fp32", "b": "*fp32", "stride": "i32", "cols": "i32",
                    "eps": "fp32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 512}),
    dict(name="sum_atomic_f32", fn=sum_atomic,
         signature={"out": "*fp32", "inp": "*fp32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 1024}),
    dict(name="sum_atomic_i32", fn=sum_atomic,
         signature={"out": "*i32", "inp": "*i32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 1024}),
    dict(name="cumsum_i32", fn=cumsum_kernel,
         signature={"out": "*i32", "inp": "*i32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 1024}),
    dict(name="cumsum_f32", fn=cumsum_kernel,
         signature={"out": "*fp32", "inp": "*fp32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 256}),
    dict(name="histogram", fn=histogram_kernel,
         signature={"out": "*i32", "inp": "*i32", "n": "i32", "BLOCK": "constexpr", "BINS": "constexpr"},
         constexprs={"BLOCK": 1024, "BINS": 64}),
    dict(name="transpose_f16", fn=transpose_kernel,
         signature={"out": "*fp16", "inp": "*fp16", "M": "i32", "N": "i32", "BM": "constexpr", "BN": "constexpr"},
         constexprs={"BM": 64, "BN": 64}),
]
