"""Triton kernels whose results are exact: row argmax and sort (cross-lane
shuffles and LDS exchanges), an associative scan with a custom combine, and
integer division/remainder with C semantics."""

import triton
import triton.language as tl


@triton.jit
def argmax_kernel(out_idx, out_max, inp, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(inp + row * cols + offs, mask=offs < cols, other=-float("inf"))
    tl.store(out_idx + row, tl.argmax(x, axis=0))
    tl.store(out_max + row, tl.max(x, axis=0))


@triton.jit
def sort_kernel(out, inp, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(inp + row * BLOCK + offs)
    tl.store(out + row * BLOCK + offs, tl.sort(x))


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def running_max_kernel(out, inp, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(inp + row * BLOCK + offs)
    tl.store(out + row * BLOCK + offs, tl.associative_scan(x, 0, _max_combine))


@triton.jit
def intdiv_kernel(q, r, a, b, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(a + offs, mask=m, other=1)
    y = tl.load(b + offs, mask=m, other=1)
    tl.store(q + offs, x // y, mask=m)
    tl.store(r + offs, x % y, mask=m)


CORPUS = [
    dict(name="argmax_f32", fn=argmax_kernel,
         signature={"out_idx": "*i32", "out_max": "*fp32", "inp": "*fp32", "cols": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 1024}, attrs={}),
    dict(name="sort_i32", fn=sort_kernel, signature={"out": "*i32", "inp": "*i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 256}),
    dict(name="running_max_i32", fn=running_max_kernel,
         signature={"out": "*i32", "inp": "*i32", "BLOCK": "constexpr"}, constexprs={"BLOCK": 512}),
    dict(name="intdiv_i32", fn=intdiv_kernel,
         signature={"q": "*i32", "r": "*i32", "a": "*i32", "b": "*i32", "n": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 512}, attrs={}),
]
