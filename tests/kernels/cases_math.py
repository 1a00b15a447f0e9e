"""Arithmetic cases: integer math (high products, division, shifts, bit
counts, bit fields, 64-bit), f64 and f32 correctly rounded operations,
transcendental f32 functions (with tolerances), conversions, compares."""

from fractions import Fraction

import numpy as np

from harness import In, Launch, Out, blocks, case, close, exact, i32, ulp
from numerics import directed, fma_f32


def _i32(rng, n, lo=-(2**31), hi=2**31 - 1):
    return rng.integers(lo, hi, n, dtype=np.int64, endpoint=True).astype(np.int32)


def _wrap32(x):
    return (np.asarray(x, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)


def _cdiv(a, b):
    """C's truncating integer division and remainder, on int64 values."""
    q = np.abs(a) // np.abs(b) * np.sign(a) * np.sign(b)
    return q, a - q * b


@case("int_mulhi", "intmath", "int_mulhi")
def int_mulhi(rng, target):
    n = 4096
    a, b = _i32(rng, n), _i32(rng, n)
    prod = a.astype(np.int64) * b.astype(np.int64)
    uprod = a.view(np.uint32).astype(np.uint64) * b.view(np.uint32).astype(np.uint64)
    return Launch(blocks(n, 256), 256,
                  [Out("hi", np.int32, n), Out("uhi", np.uint32, n), Out("lo", np.int32, n), In(a), In(b), i32(n)],
                  [exact("hi", (prod >> 32).astype(np.int32)), exact("uhi", (uprod >> np.uint64(32)).astype(np.uint32)),
                   exact("lo", _wrap32(prod).view(np.int32))])


@case("int_divmod", "intmath", "int_divmod")
def int_divmod(rng, target):
    n = 4096
    a = _i32(rng, n)
    b = _i32(rng, n)
    b[: n // 2] = _i32(rng, n // 2, -1000, 1000)  # small divisors too
    b[b == 0] = 7
    b[(a == -(2**31)) & (b == -1)] = 3
    q, r = _cdiv(a.astype(np.int64), b.astype(np.int64))
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    return Launch(blocks(n, 256), 256,
                  [Out("q", np.int32, n), Out("r", np.int32, n), Out("uq", np.uint32, n), Out("ur", np.uint32, n),
                   In(a), In(b), i32(n)],
                  [exact("q", q.astype(np.int32)), exact("r", r.astype(np.int32)), exact("uq", ua // ub),
                   exact("ur", ua % ub)])


@case("int_shifts", "intmath", "int_shifts")
def int_shifts(rng, target):
    n = 2048
    a, s = _i32(rng, n), _i32(rng, n)
    k = (s & 31).astype(np.uint32)
    ua = a.view(np.uint32)
    rot = (ua << k) | np.where(k == 0, 0, ua >> ((32 - k) & 31)).astype(np.uint32)
    return Launch(blocks(n, 256), 256,
                  [Out("shl", np.int32, n), Out("ashr", np.int32, n), Out("lshr", np.uint32, n),
                   Out("rot", np.uint32, n), In(a), In(s), i32(n)],
                  [exact("shl", (ua << k).view(np.int32)), exact("ashr", a >> k.astype(np.int32)),
                   exact("lshr", ua >> k), exact("rot", rot)])


@case("int_bits", "intmath", "int_bits")
def int_bits(rng, target):
    n = 3000
    a = _i32(rng, n).view(np.uint32)
    a[::5] >>= rng.integers(0, 32, len(a[::5])).astype(np.uint32)
    a[:3] = [0, 1, 0x80000000]
    bits = ((a[:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(np.uint32)
    pop = bits.sum(axis=1).astype(np.uint32)
    nz = a != 0
    clz = np.where(nz, 31 - np.floor(np.log2(np.where(nz, a, 1).astype(np.float64))), 32).astype(np.uint32)
    ctz = np.where(nz, np.argmax(bits, axis=1), 32).astype(np.uint32)
    rev = (bits * (np.uint32(1) << (31 - np.arange(32, dtype=np.uint32)))).sum(axis=1).astype(np.uint32)
    off = (np.arange(n) & 15).astype(np.uint32)
    bfe = ((a >> off) & 0x1FF) + ((a >> 5) & 0x3FF)
    field = ((a >> 8) & 0x7F).astype(np.int32)
    sbfe = np.where(field >= 64, field - 128, field).astype(np.int32)
    return Launch(blocks(n, 256), 256,
                  [Out("pop", np.uint32, n), Out("clz", np.uint32, n), Out("ctz", np.uint32, n),
                   Out("rev", np.uint32, n), Out("bfe", np.uint32, n), Out("sbfe", np.int32, n), In(a), i32(n)],
                  [exact("pop", pop), exact("clz", clz), exact("ctz", ctz), exact("rev", rev),
                   exact("bfe", bfe), exact("sbfe", sbfe)])


@case("int_minmax", "intmath", "int_minmax")
def int_minmax(rng, target):
    n = 2000
    a, b = _i32(rng, n, -(2**30), 2**30), _i32(rng, n, -(2**30), 2**30)
    b[::9] = a[::9]
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    o = np.minimum(a64, b64) * 2 + np.maximum(a64, b64) - np.abs(a64)
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    return Launch(blocks(n, 256), 256, [Out("o", np.int32, n), Out("ou", np.uint32, n), In(a), In(b), i32(n)],
                  [exact("o", _wrap32(o).view(np.int32)), exact("ou", np.minimum(ua, ub) ^ np.maximum(ua, ub))])


@case("i64_ops", "intmath", "i64_ops")
def i64_ops(rng, target):
    n = 1500
    a = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
    b = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
    b[: n // 3] = rng.integers(-100000, 100000, n // 3)
    b[b == 0] = 13
    q = np.array([int(x) // int(y) if (x >= 0) == (y > 0) else -(abs(int(x)) // abs(int(y))) for x, y in zip(a, b)],
                 dtype=np.int64)
    r = np.array([int(x) - int(qq) * int(y) for x, y, qq in zip(a, b, q)], dtype=np.int64)
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    mul = np.array([(int(x) * int(y)) & (2**64 - 1) for x, y in zip(ua, ub)], dtype=np.uint64).view(np.int64)
    shr = (ua >> (ub & np.uint64(63))) ^ (ub << (ua & np.uint64(63))) ^ (a >> 40).view(np.uint64)
    return Launch(blocks(n, 128), 128,
                  [Out("mul", np.int64, n), Out("div", np.int64, n), Out("rem", np.int64, n), Out("shr", np.uint64, n),
                   In(a), In(b), i32(n)],
                  [exact("mul", mul), exact("div", q), exact("rem", r), exact("shr", shr)])


@case("f64_math", "floatmath", "f64_math")
def f64_math(rng, target):
    n = 1000
    a = rng.uniform(0, 1e6, n) * np.exp2(rng.integers(-40, 40, n))
    b = rng.uniform(-1e3, 1e3, n)
    c = rng.uniform(-1e9, 1e9, n)
    # IEEE sqrt and division are correctly rounded in numpy; the fma is
    # rounded once from the exact rational value.
    fma = np.array([float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))) for x, y, z in zip(a, b, c)])
    return Launch(blocks(n, 64), 64,
                  [Out("sqrt", np.float64, n), Out("fma", np.float64, n), Out("div", np.float64, n), In(a), In(b),
                   In(c), i32(n)],
                  [exact("sqrt", np.sqrt(a)), exact("fma", fma), exact("div", a / b)])


@case("f32_divsqrt", "floatmath", "f32_divsqrt")
def f32_divsqrt(rng, target):
    # Built with -cl-fp32-correctly-rounded-divide-sqrt: exact references.
    n = 4096
    a = (rng.uniform(0, 1e4, n) * np.exp2(rng.integers(-60, 60, n))).astype(np.float32)
    b = (rng.uniform(-1e3, 1e3, n) * np.exp2(rng.integers(-60, 60, n))).astype(np.float32)
    c = rng.uniform(-1e3, 1e3, n).astype(np.float32)
    return Launch(blocks(n, 256), 256,
                  [Out("div", np.float32, n), Out("sqrt", np.float32, n), Out("fma", np.float32, n), In(a), In(b),
                   In(c), i32(n)],
                  [exact("div", a / b), exact("sqrt", np.sqrt(a)), exact("fma", fma_f32(a, b, c))])


@case("f32_transcendental", "floatmath", "f32_transcendental")
def f32_transcendental(rng, target):
    n = 4096
    x = rng.uniform(-10, 10, n).astype(np.float32)
    xd = x.astype(np.float64)
    ld = np.abs(xd) + 0.5  # |x| + 0.5f is exact in f32 for these magnitudes
    why = "llvm.exp/exp2.f32 lower to v_exp_f32 (about 1 ulp) plus range reduction; 4 ulps allowed"
    # log and log2 go through v_log_f32 (log2, about 1 ulp) times ln 2; near
    # log(1) = 0 a relative measure is meaningless, so 4 ulps relative plus
    # 1e-7 absolute (about ulp(1)).
    logwhy = "v_log_f32-based log/log2: 4 ulps relative plus 1e-7 absolute near 0"
    # v_sin/v_cos take x/(2 pi) (rounded product) and are accurate to about
    # 2^-21 absolute: 4e-6 absolute for |x| <= 10.
    trig = "v_sin_f32/v_cos_f32 of the rounded x/(2 pi): absolute error 4e-6 allowed for |x| <= 10"
    return Launch(blocks(n, 256), 256,
                  [Out("exp", np.float32, n), Out("log", np.float32, n), Out("sin", np.float32, n),
                   Out("cos", np.float32, n), Out("exp2", np.float32, n), Out("log2", np.float32, n), In(x), i32(n)],
                  [ulp("exp", np.exp(xd), 4, why=why),
                   close("log", np.log(ld), rtol=4 * 2.0 ** -23, atol=1e-7, why=logwhy),
                   close("sin", np.sin(xd), atol=4e-6, why=trig), close("cos", np.cos(xd), atol=4e-6, why=trig),
                   ulp("exp2", np.exp2(xd), 4, why=why),
                   close("log2", np.log2(ld), rtol=4 * 2.0 ** -23, atol=1e-7, why=logwhy)])


@case("conversions", "floatmath", "conversions")
def conversions(rng, target):
    n = 4096
    x = (rng.uniform(-1, 1, n) * np.exp2(rng.integers(-30, 20, n))).astype(np.float32)
    x[:16] = [0.5, 1.5, 2.5, -0.5, -2.5, 65504.0, 65520.0, 1e6, -1e6, 6e-8, 3e-8, 1e-10, -0.0, 0.0, 2049.0, 4097.0]
    k = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    d = rng.standard_normal(n) * np.exp2(rng.integers(-140, 120, n))
    h = rng.uniform(-60000, 60000, n).astype(np.float16)
    with np.errstate(over="ignore"):
        f16 = x.astype(np.float16)
    return Launch(blocks(n, 256), 256,
                  [Out("f16", np.float16, n), Out("i32", np.int32, n), Out("u32", np.uint32, n),
                   Out("fi", np.float32, n), Out("fu", np.float32, n), Out("f64", np.float32, n),
                   Out("d", np.float64, n), Out("fh", np.float32, n), In(x), In(k), In(d), In(h), i32(n)],
                  [exact("f16", f16), exact("i32", np.trunc(x).astype(np.int32)),
                   exact("u32", np.trunc(np.abs(x)).astype(np.uint32)), exact("fi", k.astype(np.float32)),
                   exact("fu", k.view(np.uint32).astype(np.float32)), exact("f64", d.astype(np.float32)),
                   exact("d", x.astype(np.float64)), exact("fh", h.astype(np.float32))])


@case("compare_select", "floatmath", "compare_select")
def compare_select(rng, target):
    n = 2048
    a = rng.uniform(-10, 10, n).astype(np.float32)
    b = rng.uniform(-10, 10, n).astype(np.float32)
    b[::5] = a[::5]
    a[3::17] = np.nan
    b[7::19] = np.nan
    a[11::23] = np.inf
    a[13::29] = -np.inf
    with np.errstate(invalid="ignore"):
        m = ((a < b).astype(np.int32) | (a <= b) << 1 | (a == b) << 2 | (a != b) << 3 | (a > b) << 4 |
             (a >= b) << 5 | np.isnan(a) << 6 | np.isinf(a) << 7)
        sel = np.where(a < b, a - b, np.where(a == b, np.float32(0.5), b))
        mm = np.fmin(a, b) + np.fmax(a, np.float32(1))
    return Launch(blocks(n, 256), 256,
                  [Out("mask", np.int32, n), Out("sel", np.float32, n), Out("minmax", np.float32, n), In(a), In(b),
                   i32(n)],
                  [exact("mask", m), exact("sel", sel), exact("minmax", mm)])


@case("float_edges", "floatmath", "float_edges")
def float_edges(rng, target):
    special = [np.nan, np.inf, -np.inf, 3e9, -3e9, 2.0 ** 31, -(2.0 ** 31), -(2.0 ** 31) - 256, 2.0 ** 32,
               4294967040.0, -1.5, -0.75, 0.9999999, 65519.99, 65520.0, -65520.0, 2.0 ** -24, 2.0 ** -25,
               3 * 2.0 ** -26, 1e-40, -1e-40, 1.17549435e-38, 1e-45, -0.0, 0.0]
    n = 1024
    x = np.concatenate([special, rng.standard_normal(n - len(special)) * np.exp2(rng.integers(-149, 127, n - len(
        special)))]).astype(np.float32)
    y = np.concatenate([np.full(len(special), 0.5),
                        rng.standard_normal(n - len(special)) * np.exp2(rng.integers(-60, 60, n - len(special)))])
    y = y.astype(np.float32)
    d = rng.standard_normal(n) * np.exp2(rng.integers(-160, 140, n))  # f32 denormals, overflow to inf
    d[:6] = [1e39, -1e39, 1e-46, 7e-46, 3.4028235677973366e38, 3.4028236e38]
    xd = x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore", under="ignore"):
        # Saturating conversions (ISA: out-of-range values clamp, NaN converts to 0).
        ri = np.where(np.isnan(xd), 0, np.clip(np.trunc(xd), -(2.0 ** 31), 2.0 ** 31 - 1)).astype(np.int64)
        ru = np.where(np.isnan(xd), 0, np.clip(np.trunc(xd), 0, 2.0 ** 32 - 1)).astype(np.int64)
        refs = [exact("i", ri.astype(np.int32)), exact("u", ru.astype(np.uint32)),
                exact("h", x.astype(np.float16)), exact("f", d.astype(np.float32)),
                exact("mul", x * y), exact("add", x + y), exact("div", x / y)]
    return Launch(blocks(n, 256), 256,
                  [Out("i", np.int32, n), Out("u", np.uint32, n), Out("h", np.float16, n), Out("f", np.float32, n),
                   Out("mul", np.float32, n), Out("add", np.float32, n), Out("div", np.float32, n), In(x), In(d),
                   In(y), i32(n)], refs)


def _round_mode_case(mode):
    def make(rng, target):
        n = 512
        a = rng.uniform(-1000, 1000, n).astype(np.float32)
        b = rng.uniform(-1000, 1000, n).astype(np.float32)
        c = rng.uniform(-1e6, 1e6, n)
        d = rng.uniform(-1e-3, 1e-3, n)
        # a + b and a * b are exact in f64 (exponents within 30 binades, 48-bit
        # products); the f64 sums are done exactly with rationals.
        ex_add, ex_mul = a.astype(np.float64) + b, a.astype(np.float64) * b
        ne_add, ne_mul = a + b, a * b

        def toward32(x, to):
            return np.nextafter(x, np.float32(to)).astype(np.float32)

        add = directed(ne_add, np.sign(ne_add.astype(np.float64) - ex_add), mode, toward32)
        mul = directed(ne_mul, np.sign(ne_mul.astype(np.float64) - ex_mul), mode, toward32)
        exact_d = [Fraction(float(x)) + Fraction(float(y)) for x, y in zip(c, d)]
        ne_d = np.array([float(q) for q in exact_d])
        cmp_d = np.array([(Fraction(float(r)) > q) - (Fraction(float(r)) < q) for r, q in zip(ne_d, exact_d)])
        dadd = directed(ne_d, cmp_d, mode, lambda x, to: np.nextafter(x, to))
        return Launch(blocks(n, 128), 128,
                      [Out("add", np.float32, n), Out("mul", np.float32, n), Out("dadd", np.float64, n), In(a), In(b),
                       In(c), In(d), i32(mode), i32(n)],
                      [exact("add", add), exact("mul", mul), exact("dadd", dadd)])
    return make


for _mode, _name in enumerate(("nearest", "up", "down", "zero")):
    case(f"round_mode_{_name}", "modes", "round_modes")(_round_mode_case(_mode))
