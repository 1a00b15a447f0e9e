"""Triton kernels whose scans and atomics cross wave boundaries: a row-wise
cumsum over a [ROWS, BLOCK] tile wider than one wave (forward and reverse,
int32 and float32, masked columns), and an elementwise tl.atomic_max /
atomic_min / atomic_and / atomic_or / atomic_xor on int32 where many lanes
hit the same address."""

import triton
import triton.language as tl


@triton.jit
def cumsum2d_kernel(out, inp, cols, ROWS: tl.constexpr, BLOCK: tl.constexpr, REVERSE: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    m = c < cols
    x = tl.load(inp + r * cols + c, mask=m, other=0)
    tl.store(out + r * cols + c, tl.cumsum(x, axis=1, reverse=REVERSE), mask=m)


@triton.jit
def atomic_minmax_kernel(out, uout, inp, n, slots, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(inp + offs, mask=m, other=0.0)
    q = (v * 1000.0).to(tl.int32)
    s = offs % slots
    tl.atomic_max(out + s, q, mask=m)
    tl.atomic_min(out + slots + s, q, mask=m)
    u = q.to(tl.uint32, bitcast=True)
    tl.atomic_max(uout + s, u, mask=m)
    tl.atomic_min(uout + slots + s, u, mask=m)


@triton.jit
def atomic_bits_kernel(out, inp, n, slots, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    q = tl.load(inp + offs, mask=m, other=0)
    s = offs % slots
    tl.atomic_and(out + s, q, mask=m)
    tl.atomic_or(out + slots + s, q, mask=m)
    tl.atomic_xor(out + 2 * slots + s, q, mask=m)
    tl.atomic_add(out + 3 * slots + s, q, mask=m)


@triton.jit
def atomic_max_ret_kernel(out, old, inp, n, slots, BLOCK: tl.constexpr):
    # The returning form: every lane's old value is a value the slot held,
    # so it is at most the final maximum.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    q = tl.load(inp + offs, mask=m, other=0)
    o = tl.atomic_max(out + offs % slots, q, mask=m)
    tl.store(old + offs, o, mask=m)


def _cumsum(name, ty, reverse):
    return dict(name=name, fn=cumsum2d_kernel,
                signature={"out": f"*{ty}", "inp": f"*{ty}", "cols": "i32", "ROWS": "constexpr",
                           "BLOCK": "constexpr", "REVERSE": "constexpr"},
                constexprs={"ROWS": 4, "BLOCK": 512, "REVERSE": reverse}, attrs={},
                options={"num_warps": 4})


CORPUS = [
    _cumsum("cumsum2d_i32", "i32", False),
    _cumsum("cumsum2d_i32_rev", "i32", True),
    _cumsum("cumsum2d_f32", "fp32", False),
    _cumsum("cumsum2d_f32_rev", "fp32", True),
    dict(name="atomic_minmax", fn=atomic_minmax_kernel,
         signature={"out": "*i32", "uout": "*u32", "inp": "*fp32", "n": "i32", "slots": "i32",
                    "BLOCK": "constexpr"},
         constexprs={"BLOCK": 256}, attrs={}, options={"num_warps": 4}),
    # With Triton's default specialisation (16-byte aligned pointers and
    # sizes): buffer atomics on gfx942/gfx950.
    dict(name="atomic_minmax_aligned", fn=atomic_minmax_kernel,
         signature={"out": "*i32", "uout": "*u32", "inp": "*fp32", "n": "i32", "slots": "i32",
                    "BLOCK": "constexpr"},
         constexprs={"BLOCK": 256}, options={"num_warps": 4}),
    dict(name="atomic_bits", fn=atomic_bits_kernel,
         signature={"out": "*i32", "inp": "*i32", "n": "i32", "slots": "i32", "BLOCK": "constexpr"},
         constexprs={"BLOCK": 256}, attrs={}, options={"num_warps": 4}),
    dict(name="atomic_max_ret", fn=atomic_max_ret_kernel,
         signature={"out": "*i32", "old": "*i32", "inp": "*i32", "n": "i32", "slots": "i32",
                    "BLOCK": "constexpr"},
         constexprs={"BLOCK": 256}, attrs={}, options={"num_warps": 4}),
]
