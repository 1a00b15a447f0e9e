"""Self-checks of the reference helpers in numerics.py against slow,
independent computations (exact rationals, the format definitions' known
values). Run by `scripts/kernels.py run --dry-run` and `selftest`."""

from fractions import Fraction

import numpy as np

from numerics import bf16_to_f32, f32_to_bf16, fma_f32, fp4_table, fp8_table, ulp_diff_f32


def _round_f32(q: Fraction) -> np.float32:
    """Round a rational to the nearest float32, ties to even (normal range)."""
    if q == 0:
        return np.float32(0.0)
    lo = np.float32(float(q))  # within a few ulps; step to the bracketing pair
    while Fraction(float(lo)) > q:
        lo = np.nextafter(lo, np.float32(-np.inf))
    while Fraction(float(np.nextafter(lo, np.float32(np.inf)))) <= q:
        lo = np.nextafter(lo, np.float32(np.inf))
    hi = np.nextafter(lo, np.float32(np.inf))
    dlo, dhi = q - Fraction(float(lo)), Fraction(float(hi)) - q
    if dlo < dhi:
        return lo
    if dhi < dlo:
        return hi
    return lo if (lo.view(np.uint32) & 1) == 0 else hi


def check_fma(rng) -> list[str]:
    errs = []
    a = rng.standard_normal(3000).astype(np.float32)
    b = rng.standard_normal(3000).astype(np.float32)
    c = rng.standard_normal(3000).astype(np.float32)
    # Cancellation-heavy inputs: c close to -a*b.
    c[:1000] = -(a[:1000].astype(np.float64) * b[:1000]).astype(np.float32)
    c[1000:1500] = (c[1000:1500] * np.float32(2.0 ** -30))
    # Double-rounding trap: a*b = 2^-24 - 2^-60, so a*b + c lies just below
    # the midpoint 1 + 3 * 2^-24; rounding to f64 first would land on it.
    a[0], b[0], c[0] = 2.0 ** -12 * (1 + 2.0 ** -18), 2.0 ** -12 * (1 - 2.0 ** -18), 1 + 2.0 ** -23
    got = fma_f32(a, b, c)
    if got[0] != np.float32(1 + 2.0 ** -23):
        errs.append(f"fma_f32 double-rounding case gave {got[0]!r}")
    for i in range(len(a)):
        want = _round_f32(Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i])))
        if want.view(np.uint32) != got[i].view(np.uint32) and not (want == 0 and got[i] == 0):
            errs.append(f"fma_f32({a[i]!r}, {b[i]!r}, {c[i]!r}) = {got[i]!r}, exact rounding {want!r}")
            break
    return errs


def check_bf16(rng) -> list[str]:
    errs = []
    x = (rng.standard_normal(5000) * np.exp2(rng.integers(-100, 100, 5000))).astype(np.float32)
    bits = f32_to_bf16(x)
    back = bf16_to_f32(bits).astype(np.float64)
    up = bf16_to_f32((bits.astype(np.uint32) + 1).astype(np.uint16)).astype(np.float64)
    dn = bf16_to_f32((bits.astype(np.int64) - 1).astype(np.uint16)).astype(np.float64)
    xd = x.astype(np.float64)
    # Nearest: no neighbour is strictly closer; ties go to an even pattern.
    worse = (np.abs(up - xd) < np.abs(back - xd)) | (np.abs(dn - xd) < np.abs(back - xd))
    tie = (np.abs(up - xd) == np.abs(back - xd)) | (np.abs(dn - xd) == np.abs(back - xd))
    if worse.any():
        errs.append(f"f32_to_bf16 not nearest for {x[np.flatnonzero(worse)[0]]!r}")
    if (tie & (bits & 1 == 1)).any():
        errs.append("f32_to_bf16 tie not rounded to even")
    if f32_to_bf16(np.float32(1.00390625))[()] != 0x3F80 or f32_to_bf16(np.float32(1.01171875))[()] != 0x3F82:
        errs.append("f32_to_bf16 ties to even wrong on 1 + 2^-8 / 1 + 3 * 2^-8")
    return errs


def check_fp8() -> list[str]:
    errs = []
    want = {"e4m3fn": 448.0, "e5m2": 57344.0, "e4m3fnuz": 240.0, "e5m2fnuz": 57344.0}
    smallest = {"e4m3fn": 2.0 ** -9, "e5m2": 2.0 ** -16, "e4m3fnuz": 2.0 ** -10, "e5m2fnuz": 2.0 ** -17}
    for fmt, mx in want.items():
        t = fp8_table(fmt)
        fin = t[np.isfinite(t)]
        if fin.max() != mx or -fin.min() != mx:
            errs.append(f"{fmt}: max {fin.max()} expected {mx}")
        if fin[fin > 0].min() != smallest[fmt]:
            errs.append(f"{fmt}: smallest {fin[fin > 0].min()} expected {smallest[fmt]}")
        nans = int(np.isnan(t).sum())
        expect_nans = {"e4m3fn": 2, "e5m2": 6, "e4m3fnuz": 1, "e5m2fnuz": 1}[fmt]
        if nans != expect_nans:
            errs.append(f"{fmt}: {nans} NaN codes, expected {expect_nans}")
    if fp8_table("e4m3fn")[0x38] != 1.0 or fp8_table("e4m3fnuz")[0x40] != 1.0 or fp8_table("e5m2")[0x3C] != 1.0:
        errs.append("fp8 encodings of 1.0 wrong")
    if list(fp4_table()[:8]) != [0, 0.5, 1, 1.5, 2, 3, 4, 6]:
        errs.append("fp4 table wrong")
    return errs


def check_fp8_encode(rng) -> list[str]:
    """f32_to_fp8 against the definition: the decoded value is a nearest
    finite value, and on ties the code is even."""
    from numerics import f32_to_fp8
    errs = []
    for fmt in ("e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz"):
        t = fp8_table(fmt)
        fin = np.sort(t[np.isfinite(t)])
        x = rng.uniform(-200, 200, 2000)
        mids = (fin[1:] + fin[:-1]) / 2  # exact ties
        x = np.concatenate([x, mids[np.abs(mids) < 200]]).astype(np.float32)
        x = x[np.abs(x) < 200]
        c = f32_to_fp8(x, fmt)
        dist = np.abs(t[c] - x)
        best = np.abs(fin[None, :] - x[:, None].astype(np.float64)).min(axis=1)
        if (dist > best).any():
            errs.append(f"{fmt}: f32_to_fp8 not nearest for {x[np.flatnonzero(dist > best)[0]]!r}")
        tie = np.isin(x.astype(np.float64), mids) & (t[c] != 0)
        if (c[tie] & 1).any():
            errs.append(f"{fmt}: f32_to_fp8 tie not rounded to the even code")
    return errs


def check_rtz() -> list[str]:
    from numerics import f32_to_f16_rtz
    # Truncation: |result| <= |x| and the next f16 away from zero is beyond |x|.
    x = np.array([1.0009765625 * 1.9, -1.0009765625 * 1.9, 65519.0, 3e-8, -1.5, 1.0], np.float32)
    got = f32_to_f16_rtz(x)
    with np.errstate(over="ignore"):
        away = np.nextafter(got, np.where(x < 0, np.float16(-np.inf), np.float16(np.inf))).astype(np.float64)
    xd = x.astype(np.float64)
    bad = (np.abs(got.astype(np.float64)) > np.abs(xd)) | (np.abs(away) <= np.abs(xd))
    return [f"f32_to_f16_rtz wrong for {x[bad]}"] if bad.any() else []


def check_ulp() -> list[str]:
    a = np.array([1.0, -0.0, 1.0], np.float32)
    b = np.array([np.nextafter(np.float32(1), np.float32(2)), 0.0, 1.0], np.float32)
    d = ulp_diff_f32(a, b)
    return [] if list(d) == [1, 0, 0] else [f"ulp_diff_f32 {list(d)}"]


def check_compare() -> list[str]:
    """The comparisons accept equal data and reject the smallest changes."""
    from harness import close, compare, exact, ulp
    errs = []
    x = np.array([1.0, -0.0, np.nan, np.inf, 3.5], np.float32)
    y = x.copy()
    y[4] = np.nextafter(y[4], np.float32(10))
    z = x.copy()
    z[1] = 0.0
    cases = [
        (exact("x", x), x, True), (exact("x", x), y, False), (exact("x", x), z, False),
        (exact("i", np.arange(5)), np.arange(5), True), (exact("i", np.arange(5)), np.arange(1, 6), False),
        (exact("i", np.arange(5)), np.arange(4), False),
        (close("x", x, rtol=1e-6), y, True), (close("x", x, rtol=1e-8), y, False),
        (close("x", x, atol=np.full(5, 1e-9)), y, False),
        (ulp("x", x, 1), y, True), (ulp("x", x, 0), y, False),
        (exact("s", np.array([1, 2, 3]), transform=np.sort), np.array([2, 3, 1]), True),
    ]
    for k, (chk, got, want) in enumerate(cases):
        ok, detail = compare(chk, got)
        if ok != want:
            errs.append(f"compare case {k}: {ok} (expected {want}) {detail}")
    ok, detail = compare(exact("x", x), y)
    if "first at [4]" not in detail:
        errs.append(f"compare detail does not name the first mismatch: {detail}")
    return errs


def run() -> list[str]:
    rng = np.random.default_rng(12345)
    return (check_fma(rng) + check_bf16(rng) + check_fp8() + check_fp8_encode(rng) + check_rtz() + check_ulp() +
            check_compare())


if __name__ == "__main__":
    problems = run()
    for p in problems:
        print(f"selftest: {p}")
    print(f"selftest: {'ok' if not problems else f'{len(problems)} problem(s)'}")
    raise SystemExit(1 if problems else 0)
