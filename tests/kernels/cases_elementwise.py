"""Elementwise cases: vector add in six types, saxpy/daxpy, 8/16-bit and
vector memory, bf16 conversions, Triton vector add. Every reference is the
correctly rounded result of the same operation (numpy's float16/float32
arithmetic is correctly rounded, see numerics.py for bf16 and fma), so the
comparisons are exact."""

import numpy as np

from harness import In, InOut, Launch, Out, blocks, case, close, exact, f32, f64, i32
from numerics import bf16_to_f32, f32_to_bf16, fma_f32, rand_bf16


def _vadd(rng, n, dtype, block=256, lo=-1000, hi=1000):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        b = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        with np.errstate(over="ignore"):
            ref = a + b  # wraps like the hardware
    else:
        a = rng.uniform(lo, hi, n).astype(dtype)
        b = rng.uniform(lo, hi, n).astype(dtype)
        with np.errstate(over="ignore"):
            ref = a + b
    return Launch(blocks(n, block), block, [Out("o", dtype, n), In(a), In(b), i32(n)], [exact("o", ref)])


# 1024 work-groups, the last one partial.
@case("vadd_i32", "elementwise", "vadd_i32")
def vadd_i32(rng, target):
    return _vadd(rng, 1024 * 256 - 77, np.int32)


@case("vadd_i32_block100", "elementwise", "vadd_i32")
def vadd_i32_block100(rng, target):
    # 100 work-items per group: every second wave starts with 36 lanes active.
    return _vadd(rng, 100 * 50 - 30, np.int32, block=100)


@case("vadd_i64", "elementwise", "vadd_i64")
def vadd_i64(rng, target):
    return _vadd(rng, 5000, np.int64)


@case("vadd_f32", "elementwise", "vadd_f32")
def vadd_f32(rng, target):
    return _vadd(rng, 1024 * 256 - 1, np.float32, lo=-1e6, hi=1e6)


@case("vadd_f64", "elementwise", "vadd_f64")
def vadd_f64(rng, target):
    return _vadd(rng, 3001, np.float64, block=128, lo=-1e12, hi=1e12)


@case("vadd_f16", "elementwise", "vadd_f16")
def vadd_f16(rng, target):
    # Values up to 40000 so that some sums overflow to infinity.
    return _vadd(rng, 4099, np.float16, lo=-40000, hi=40000)


@case("vadd_bf16", "bf16", "vadd_bf16")
def vadd_bf16(rng, target):
    n = 4000
    a, b = rand_bf16(rng, n, -100, 100), rand_bf16(rng, n, -100, 100)
    # The f32 sum of two bf16 is rounded once more to bf16 (round to nearest
    # even); the f32 sum itself is exact or innocuously rounded (24 >= 2*8+2).
    ref = f32_to_bf16(bf16_to_f32(a) + bf16_to_f32(b))
    return Launch(blocks(n, 256), 256, [Out("o", np.uint16, n), In(a), In(b), i32(n)], [exact("o", ref)])


@case("bf16_convert", "bf16", "bf16_convert")
def bf16_convert(rng, target):
    n = 3000
    b = rand_bf16(rng, n, -1e4, 1e4)
    f = rng.standard_normal(n).astype(np.float32) * np.float32(1000)
    # Ties to even: values exactly halfway between two bf16 numbers.
    f[:64] = ((rng.integers(0, 1 << 16, 64).astype(np.uint32) << 16) | 0x8000).view(np.float32)
    f[:64] = np.where(np.isfinite(f[:64]), f[:64], 1.0)
    return Launch(blocks(n, 256), 256,
                  [Out("of", np.float32, n), Out("ob", np.uint16, n), In(b), In(f), i32(n)],
                  [exact("of", bf16_to_f32(b)), exact("ob", f32_to_bf16(f))])


@case("saxpy", "elementwise", "saxpy")
def saxpy(rng, target):
    n = 100_000
    x = rng.uniform(-10, 10, n).astype(np.float32)
    y = rng.uniform(-10, 10, n).astype(np.float32)
    a = np.float32(2.7182817)
    # a * x + y is contracted to one fma (v_fmac_f32) by clang's default fp-contract=on.
    return Launch(blocks(n, 256), 256, [InOut("y", y), In(x), f32(a), i32(n)], [exact("y", fma_f32(a, x, y))])


@case("daxpy", "elementwise", "daxpy")
def daxpy(rng, target):
    from fractions import Fraction
    n = 2000
    x = rng.uniform(-10, 10, n)
    y = rng.uniform(-10, 10, n)
    a = 3.141592653589793
    # Contracted to v_fma/v_fmac_f64: one rounding of the exact a*x+y.
    ref = np.array([float(Fraction(a) * Fraction(float(xi)) + Fraction(float(yi))) for xi, yi in zip(x, y)])
    return Launch(blocks(n, 64), 64, [InOut("y", y), In(x), f64(a), i32(n)], [exact("y", ref)])


@case("small_ints", "elementwise", "small_ints")
def small_ints(rng, target):
    n = 3333
    a = rng.integers(-32768, 32767, n, dtype=np.int16, endpoint=True)
    b = rng.integers(0, 255, n, dtype=np.uint8, endpoint=True)
    c = rng.integers(-128, 127, n, dtype=np.int8, endpoint=True)
    a32, b32, c32 = a.astype(np.int32), b.astype(np.int32), c.astype(np.int32)
    o16 = (a32 * 3 - (a32 >> 1)).astype(np.int16)
    o8 = (((b32 + b32 // 3) & 0xFF) | (a32 & 0x0F)).astype(np.uint8)
    os8 = (c32 * 5 + (c32 >> 2)).astype(np.int8)
    return Launch(blocks(n, 128), 128,
                  [Out("o16", np.int16, n), Out("o8", np.uint8, n), Out("os8", np.int8, n), In(a), In(b), In(c),
                   i32(n)],
                  [exact("o16", o16), exact("o8", o8), exact("os8", os8)])


@case("vec4_f32", "elementwise", "vec4_ops")
def vec4_f32(rng, target):
    n = 2500  # float4 elements
    a = rng.uniform(-100, 100, (n, 4)).astype(np.float32)
    b = rng.uniform(-100, 100, (n, 4)).astype(np.float32)
    b[::7] = a[::7]
    r = np.where(a > b, a, b)
    ref = np.stack([r[:, 3], r[:, 2] + a[:, 0], r[:, 1] - b[:, 1], r[:, 0] * np.float32(2)], axis=1)
    return Launch(blocks(n, 256), 256, [Out("o", np.float32, 4 * n), In(a), In(b), i32(n)], [exact("o", ref)])


@case("vec_u8", "elementwise", "vec_u8")
def vec_u8(rng, target):
    n = 5000
    a = rng.integers(0, 256, (n, 4), dtype=np.uint8)
    a32 = a.astype(np.int32)
    ref = np.stack([a32[:, 3], (a32[:, 2] + 1) & 0xFF, a32[:, 1] ^ 0x5A, a32[:, 0] >> 1], axis=1).astype(np.uint8)
    return Launch(blocks(n, 64), 64, [Out("o", np.uint8, 4 * n), In(a), i32(n)], [exact("o", ref)])


@case("tri_add_f32", "tri_basic-add_f32", "add_kernel", triton=True)
def tri_add_f32(rng, target):
    n = 1000 * 1024 + 333
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    return Launch(blocks(n, 1024), None, [In(x), In(y), Out("o", np.float32, n), i32(n)], [exact("o", x + y)])


@case("tri_add_f16", "tri_basic-add_f16", "add_kernel", triton=True)
def tri_add_f16(rng, target):
    n = 512 * 40  # a multiple of 16, as the compiled specialisation assumes
    x = rng.uniform(-300, 300, n).astype(np.float16)
    y = rng.uniform(-300, 300, n).astype(np.float16)
    return Launch(blocks(n, 512), None, [In(x), In(y), Out("o", np.float16, n), i32(n)], [exact("o", x + y)])


@case("f16_math", "elementwise", "f16_math")
def f16_math(rng, target):
    n = 3000
    sign = rng.choice([-1.0, 1.0], (2, n))
    a = (rng.uniform(0.25, 30, n) * sign[0]).astype(np.float16)
    b = (rng.uniform(0.25, 30, n) * sign[1]).astype(np.float16)
    c = rng.uniform(-300, 300, n).astype(np.float16)
    f = rng.uniform(-300, 300, n).astype(np.float32)
    ad, bd = a.astype(np.float64), b.astype(np.float64)
    # |a|, |b| >= 1/4 and |c| < 2^9: a*b + c is exact in f64, so one rounding
    # to f16 is the fma; f16 products are exact in f32, so the mixed fma is
    # fma_f32 of the widened values. Division and square root go through f32
    # (or v_rcp/v_sqrt_f16): within one f16 ulp of the exact result.
    return Launch(blocks(n, 256), 256,
                  [Out("fma", np.float16, n), Out("div", np.float16, n), Out("sqrt", np.float16, n),
                   Out("mix", np.float32, n), In(a), In(b), In(c), In(f), i32(n)],
                  [exact("fma", (ad * bd + c).astype(np.float16)),
                   close("div", ad / bd, rtol=2.0 ** -10, why="within one f16 ulp"),
                   close("sqrt", np.sqrt(np.abs(ad)), rtol=2.0 ** -10, why="within one f16 ulp"),
                   exact("mix", fma_f32(a.astype(np.float32), b.astype(np.float32), f))])
