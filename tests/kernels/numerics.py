"""Bit-exact CPU reference helpers for the executed-kernel tests: bf16 and fp8
encodings, an exactly rounded f32 fma, and error measures. Written from the
format definitions (IEEE 754 binary16/32/64, bfloat16 = the top half of a
binary32, OCP 8-bit floating point spec for e4m3fn/e5m2, and the "fnuz"
variants used by gfx942: no negative zero, 0x80 is the only NaN, exponent
bias one larger)."""

import numpy as np


# --- bfloat16 -----------------------------------------------------------------

def bf16_to_f32(bits) -> np.ndarray:
    """bf16 bit patterns (uint16) to float32, exactly."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x) -> np.ndarray:
    """float32 to bf16 bits, round to nearest even; NaNs become a quiet NaN."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    out = rounded.astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), out)


def rand_bf16(rng, n, lo=-4.0, hi=4.0) -> np.ndarray:
    return f32_to_bf16(rng.uniform(lo, hi, n).astype(np.float32))


# --- 8-bit floats ---------------------------------------------------------------

FP8_FORMATS = {
    # name: (exponent bits, mantissa bits, bias, fnuz)
    "e4m3fn": (4, 3, 7, False),
    "e5m2": (5, 2, 15, False),
    "e4m3fnuz": (4, 3, 8, True),
    "e5m2fnuz": (5, 2, 16, True),
}


def fp8_table(fmt: str) -> np.ndarray:
    """The 256 values of an 8-bit float format as float64 (NaN where the code
    is a NaN, +-inf for e5m2's infinities)."""
    ebits, mbits, bias, fnuz = FP8_FORMATS[fmt]
    vals = np.empty(256, dtype=np.float64)
    emax = (1 << ebits) - 1
    for code in range(256):
        s = -1.0 if code & 0x80 else 1.0
        e = (code >> mbits) & emax
        m = code & ((1 << mbits) - 1)
        if fnuz:
            if code == 0x80:
                vals[code] = np.nan
                continue
        elif fmt == "e4m3fn":
            if e == emax and m == (1 << mbits) - 1:
                vals[code] = np.nan
                continue
        elif e == emax:  # e5m2: IEEE-like
            vals[code] = s * np.inf if m == 0 else np.nan
            continue
        if e == 0:
            vals[code] = s * m * 2.0 ** (1 - bias - mbits)
        else:
            vals[code] = s * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
    return vals


def rand_fp8(rng, fmt: str, shape, max_abs: float) -> np.ndarray:
    """Random finite fp8 codes (uint8) whose magnitude is at most max_abs."""
    table = fp8_table(fmt)
    ok = np.flatnonzero(np.isfinite(table) & (np.abs(table) <= max_abs))
    return ok[rng.integers(0, len(ok), size=shape)].astype(np.uint8)


def e8m0_to_f64(bits) -> np.ndarray:
    """OCP MX E8M0 scale: 2**(bits - 127) (0xFF is NaN, unused here)."""
    return np.ldexp(1.0, np.asarray(bits, dtype=np.int64) - 127)


def fp4_table() -> np.ndarray:
    """The 16 values of OCP e2m1 (fp4)."""
    mags = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    return np.array(mags + [-m for m in mags], dtype=np.float64)


# --- exactly rounded fused multiply-add -----------------------------------------

def fma_f32(a, b, c) -> np.ndarray:
    """fma(a, b, c) for float32 arrays, rounded once to nearest even.

    a*b is exact in float64 (24+24 < 53 bits). The sum p + c is computed with
    TwoSum (s + e == p + c exactly), then s is replaced by the round-to-odd
    value of p + c at 53 bits; rounding that to float32 is then a single
    correct rounding (53 >= 24 + 2)."""
    a = np.asarray(a, dtype=np.float32).astype(np.float64)
    b = np.asarray(b, dtype=np.float32).astype(np.float64)
    c = np.asarray(c, dtype=np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        p = a * b
        s = p + c
        pp = s - c  # TwoSum: the part of s that came from p
        e = (c - (s - pp)) + (p - pp)
        t = np.nextafter(s, np.where(e > 0, np.inf, -np.inf))
        odd_s = (s.view(np.uint64) & 1) == 1
        inexact = (e != 0) & np.isfinite(s)
        s = np.where(inexact & ~odd_s, t, s)
        return s.astype(np.float32)


# --- error measures --------------------------------------------------------------

def ulp_diff_f32(a, b) -> np.ndarray:
    """Distance in units in the last place between float32 arrays (ordered
    integer mapping of the bit patterns; +0 and -0 are 0 apart)."""
    def ordered(x):
        i = np.asarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(ordered(a) - ordered(b))


EPS32 = 2.0 ** -24  # unit roundoff of binary32
EPS16 = 2.0 ** -11  # binary16
EPSBF16 = 2.0 ** -8  # bfloat16


def f32_to_f16_rtz(x) -> np.ndarray:
    """float32 to float16 rounding toward zero (finite inputs; overflow gives
    the largest finite value, as truncation does)."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(over="ignore"):
        h = x.astype(np.float16)  # nearest even
    hd, xd = h.astype(np.float64), x.astype(np.float64)
    too_big = np.abs(hd) > np.abs(xd)
    toward0 = np.nextafter(h, np.float16(0)).astype(np.float16)
    return np.where(too_big, toward0, h).astype(np.float16)


def f32_to_fp8(x, fmt: str) -> np.ndarray:
    """float32 to 8-bit float codes, round to nearest, ties to the even code,
    for finite values within the format's range (no saturation handling)."""
    table = fp8_table(fmt)
    codes = np.flatnonzero(np.isfinite(table))
    vals = table[codes]
    xd = np.asarray(x, dtype=np.float64).reshape(-1)
    d = np.abs(xd[:, None] - vals[None, :])
    best = d.min(axis=1, keepdims=True)
    cand = d == best
    # Among equally near codes prefer the even one (ties to even; FNUZ
    # formats round -tiny to +0, their only zero); between +0 and -0 (OCP),
    # the one with the sign of x.
    sign_ok = (np.signbit(vals)[None, :] == np.signbit(xd)[:, None]) | (vals[None, :] != 0)
    score = cand * 4 + ((codes & 1) == 0)[None, :] * 2 + sign_ok
    return codes[np.argmax(score, axis=1)].astype(np.uint8).reshape(np.shape(x))


def directed(nearest, exact_cmp, mode: int, toward):
    """Directed rounding from the round-to-nearest result: `exact_cmp` is
    sign(nearest - exact) (-1, 0, 1) per element, `toward(x, direction)` the
    next representable value. Modes as MODE.FP_ROUND: 0 nearest even,
    1 toward +inf, 2 toward -inf, 3 toward zero."""
    r = np.array(nearest, copy=True)
    if mode == 0:
        return r
    up = toward(r, np.inf)
    down = toward(r, -np.inf)
    if mode == 1:
        return np.where(exact_cmp < 0, up, r)
    if mode == 2:
        return np.where(exact_cmp > 0, down, r)
    too_big = ((r > 0) & (exact_cmp > 0)) | ((r < 0) & (exact_cmp < 0))
    return np.where(too_big, np.where(r > 0, down, up), r)
