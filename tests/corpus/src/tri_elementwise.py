"""Triton elementwise kernels in several data types."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x, y, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def fused_act(x, o, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0).to(tl.float32)
    r = v * tl.sigmoid(v) + alpha * tl.exp(-v * v) + tl.sqrt(tl.abs(v))
    tl.store(o + offs, r.to(o.dtype.element_ty), mask=m)


@triton.jit
def int_ops(x, y, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=1)
    b = tl.load(y + offs, mask=m, other=1)
    r = (a * b) ^ (a >> 3) | (b << 2)
    r = tl.where(a > b, r // (b | 1), r % 7)
    tl.store(o + offs, tl.maximum(r, a) - tl.minimum(r, b), mask=m)


def _ew(dt):
    return {"x": "*" + dt, "o": "*" + dt, "n": "i32", "alpha": "fp32", "BLOCK": "constexpr"}


CORPUS = [
    dict(name="add_f32", fn=add_kernel,
         signature={"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 1024}),
    dict(name="add_f64", fn=add_kernel,
         signature={"x": "*fp64", "y": "*fp64", "o": "*fp64", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 256}),
    dict(name="act_f16", fn=fused_act, signature=_ew("fp16"), constexprs={"BLOCK": 1024}),
    dict(name="act_bf16", fn=fused_act, signature=_ew("bf16"), constexprs={"BLOCK": 1024}),
    dict(name="act_f16_unaligned", fn=fused_act, signature=_ew("fp16"), constexprs={"BLOCK": 256}, attrs={}),
    dict(name="int_ops_i32", fn=int_ops,
         signature={"x": "*i32", "y": "*i32", "o": "*i32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 512}, attrs={}),
    dict(name="int_ops_i64", fn=int_ops,
         signature={"x": "*i64", "y": "*i64", "o": "*i64", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 256}),
]
