"""Assorted instruction families (src/misc.hip): buffer range checking,
integer dot products, byte permutes and funnel shifts, packed f16 fma,
64 KiB of LDS, and a long integer loop."""

import numpy as np

from harness import CDNA, In, Launch, Out, blocks, case, exact, i32
from numerics import f32_to_f16_rtz, f32_to_fp8, fp8_table


@case("buffer_oob", "misc", "buffer_oob")
def buffer_oob(rng, target):
    n, valid = 1024, 700
    x = rng.uniform(-100, 100, n).astype(np.float32)
    # x * 2 + 1: the product is exact, so contraction cannot change the sum.
    load = np.where(np.arange(n) < valid, x, np.float32(0))
    store = np.where(np.arange(n) < valid, load * np.float32(2) + np.float32(1), np.float32(0))
    return Launch(n // 256, 256, [Out("out", np.float32, n), Out("load", np.float32, n), In(x), i32(valid)],
                  [exact("load", load), exact("out", store)])


def _bytes(x, signed):
    b = ((x.view(np.uint32)[:, None] >> (8 * np.arange(4, dtype=np.uint32))) & 0xFF).astype(np.int64)
    return np.where(b >= 128, b - 256, b) if signed else b


@case("dot4_i8", "misc", "dot4", targets=CDNA)
def dot4_i8(rng, target):
    n = 2000
    a = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    b = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    c = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    s = c.astype(np.int64) + (_bytes(a, True) * _bytes(b, True)).sum(axis=1)
    u = c.view(np.uint32).astype(np.int64) + (_bytes(a, False) * _bytes(b, False)).sum(axis=1)
    return Launch(blocks(n, 256), 256, [Out("s", np.int32, n), Out("u", np.uint32, n), In(a), In(b), In(c), i32(n)],
                  [exact("s", (s & 0xFFFFFFFF).astype(np.uint32).view(np.int32)),
                   exact("u", (u & 0xFFFFFFFF).astype(np.uint32))])


@case("byte_perm_align", "misc", "byte_ops")
def byte_perm_align(rng, target):
    n = 2000
    a = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    choices = np.array([0, 1, 2, 3, 4, 5, 6, 7, 0x0C], dtype=np.uint32)
    sel = choices[rng.integers(0, len(choices), (n, 4))]
    s = (sel << (8 * np.arange(4, dtype=np.uint32))).sum(axis=1).astype(np.uint32)
    data = (a.astype(np.uint64) << np.uint64(32)) | b.astype(np.uint64)  # {a, b}, b in the low half
    byte = (data[:, None] >> (np.uint64(8) * sel.astype(np.uint64))) & np.uint64(0xFF)
    byte = np.where(sel == 0x0C, np.uint64(0), byte)
    perm = (byte << (np.uint64(8) * np.arange(4, dtype=np.uint64))).sum(axis=1).astype(np.uint32)
    align = ((data >> (s & 31).astype(np.uint64)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    abyte = ((data >> (np.uint64(8) * (s & 3).astype(np.uint64))) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return Launch(blocks(n, 256), 256,
                  [Out("perm", np.uint32, n), Out("align", np.uint32, n), Out("abyte", np.uint32, n), In(a), In(b),
                   In(s), i32(n)],
                  [exact("perm", perm), exact("align", align), exact("abyte", abyte)])


@case("half2_fma", "misc", "half2_fma")
def half2_fma(rng, target):
    n = 3000  # half2 elements
    sign = rng.choice([-1.0, 1.0], (2, 2 * n))
    a = (rng.uniform(0.25, 30, 2 * n) * sign[0]).astype(np.float16)
    b = (rng.uniform(0.25, 30, 2 * n) * sign[1]).astype(np.float16)
    c = rng.uniform(-300, 300, 2 * n).astype(np.float16)
    # |a|, |b| >= 1/4 puts every bit of a*b at or above 2^-24 and |c| < 2^9:
    # a*b + c is exact in f64 (33 bits), so one rounding to f16 is the fma.
    ref = (a.astype(np.float64) * b + c).astype(np.float16)
    return Launch(blocks(n, 256), 256, [Out("o", np.float16, 2 * n), In(a), In(b), In(c), i32(n)],
                  [exact("o", ref)])


@case("big_lds_64k", "misc", "big_lds")
def big_lds_64k(rng, target):
    groups, nt, rounds = 4, 256, 2
    k = np.arange(16384, dtype=np.uint64)
    out = np.zeros((groups, nt), np.uint64)
    for g in range(groups):
        big = ((k * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)) ^ np.uint64(g)
        rev = big[::-1].reshape(-1, nt)  # rows: k = t + nt * j, value big[16383 - k]
        per_t = rev.sum(axis=0)
        out[g] = per_t * np.uint64(sum(range(1, rounds + 1)))
    return Launch(groups, nt, [Out("out", np.uint32, groups * nt), i32(rounds)],
                  [exact("out", (out & np.uint64(0xFFFFFFFF)).astype(np.uint32))])


@case("lcg_loop", "misc", "lcg_loop")
def lcg_loop(rng, target):
    n, iters = 4096, 5000
    x = np.arange(n, dtype=np.uint32)
    for _ in range(iters):
        x = x * np.uint32(1664525) + np.uint32(1013904223)
    return Launch(n // 256, 256, [Out("out", np.uint32, n), i32(iters)], [exact("out", x)])


@case("cvt_pkrtz", "misc", "cvt_pkrtz")
def cvt_pkrtz(rng, target):
    n = 3000
    a = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 15, n))).astype(np.float32)
    b = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 15, n))).astype(np.float32)
    ref = np.stack([f32_to_f16_rtz(a), f32_to_f16_rtz(b)], axis=1)
    return Launch(blocks(n, 256), 256, [Out("o", np.float16, 2 * n), In(a), In(b), i32(n)], [exact("o", ref)])


@case("fp8_convert", "misc", "fp8_convert", targets=("gfx942", "gfx950"))
def fp8_convert(rng, target):
    # gfx942 converts to the FNUZ formats, gfx950 to OCP e4m3fn / e5m2.
    f8, b8 = ("e4m3fnuz", "e5m2fnuz") if target == "gfx942" else ("e4m3fn", "e5m2")
    n = 1024
    a = (rng.standard_normal(n) * np.exp2(rng.integers(-8, 6, n))).astype(np.float32)
    b = (rng.standard_normal(n) * np.exp2(rng.integers(-8, 6, n))).astype(np.float32)
    a = np.clip(a, -200, 200)  # inside both formats' ranges: no saturation question
    b = np.clip(b, -200, 200)
    codes = np.stack([f32_to_fp8(a, f8), f32_to_fp8(b, f8), f32_to_fp8(a, b8), f32_to_fp8(b, b8)], axis=1)
    packed = (codes.astype(np.uint32) << (8 * np.arange(4, dtype=np.uint32))).sum(axis=1).astype(np.uint32)
    back = np.stack([fp8_table(f8)[codes[:, 0]], fp8_table(f8)[codes[:, 1]], fp8_table(b8)[codes[:, 2]],
                     fp8_table(b8)[codes[:, 3]]], axis=1).astype(np.float32)
    return Launch(blocks(n, 256), 256, [Out("pk", np.uint32, n), Out("back", np.float32, 4 * n), In(a), In(b),
                                        i32(n)],
                  [exact("pk", packed), exact("back", back)])


@case("lds_reverse_wrap", "misc", "lds_reverse_hip")
def lds_reverse_wrap(rng, target):
    g = 6
    x = rng.standard_normal(256 * g).astype(np.float32)
    return Launch(g, 256, [Out("out", np.float32, 256 * g), In(x)], [exact("out", x.reshape(g, 256)[:, ::-1])])


@case("global_load_lds", "misc", "load_to_lds", targets=("gfx942", "gfx950"))
def global_load_lds(rng, target):
    g = 8
    x = rng.standard_normal(256 * g).astype(np.float32)
    return Launch(g, 256, [Out("out", np.float32, 256 * g), Out("rev", np.float32, 256 * g), In(x)],
                  [exact("out", x), exact("rev", x.reshape(g, 256)[:, ::-1])])
