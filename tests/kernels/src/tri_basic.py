"""Triton elementwise and row-wise kernels for the executed-kernel tests:
vector add with a partial last block, softmax, layer normalisation, cumsum,
histogram."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x, y, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


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
def cumsum_kernel(out, inp, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(inp + offs, mask=offs < n, other=0)
    tl.store(out + offs, tl.cumsum(x, axis=0), mask=offs < n)


@triton.jit
def histogram_kernel(out, inp, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(inp + offs, mask=offs < n, other=0) % BINS
    h = tl.histogram(x, BINS, mask=offs < n)
    tl.atomic_add(out + tl.arange(0, BINS), h)


@triton.jit
def sum_atomic(out, inp, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(inp + offs, mask=offs < n, other=0)
    tl.atomic_add(out, tl.sum(x, axis=0))
    tl.atomic_max(out + 1, tl.max(x, axis=0))


CORPUS = [
    dict(name="add_f32", fn=add_kernel,
         signature={"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 1024}, attrs={}),
    dict(name="add_f16", fn=add_kernel,
         signature={"x": "*fp16", "y": "*fp16", "o": "*fp16", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 512}),
    dict(name="softmax_f32", fn=softmax_kernel,
         signature={"out": "*fp32", "inp": "*fp32", "stride": "i32", "cols": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 1024}, attrs={}),
    dict(name="softmax_f16", fn=softmax_kernel,
         signature={"out": "*fp16", "inp": "*fp16", "stride": "i32", "cols": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 512}, attrs={}),
    dict(name="layernorm_bf16", fn=layernorm_kernel,
         signature={"out": "*bf16", "inp": "*bf16", "w": "*fp32", "b": "*fp32", "stride": "i32", "cols": "i32",
                    "eps": "fp32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 512}),
    dict(name="layernorm_f32", fn=layernorm_kernel,
         signature={"out": "*fp32", "inp": "*fp32", "w": "*fp32", "b": "*fp32", "stride": "i32", "cols": "i32",
                    "eps": "fp32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 256}, attrs={}),
    dict(name="cumsum_i32", fn=cumsum_kernel,
         signature={"out": "*i32", "inp": "*i32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 1024}, attrs={}),
    dict(name="histogram", fn=histogram_kernel,
         signature={"out": "*i32", "inp": "*i32", "n": "i32", "BLOCK": "constexpr", "BINS": "constexpr"},
         constexprs={"BLOCK": 1024, "BINS": 64}, attrs={}),
    dict(name="sum_i32", fn=sum_atomic,
         signature={"out": "*i32", "inp": "*i32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 1024}, attrs={}),
]
