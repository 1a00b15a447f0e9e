"""Case model of the executed-kernel tests (tests/kernels): what one case
launches (`Launch`: grid, block, arguments) and what it expects (`Check`s),
and the registry that `cases.py` fills and `scripts/kernels.py` runs.

A case is a function `make(rng, target) -> Launch` registered with `@case`.
It draws its inputs from the seeded generator, lists the kernel's explicit
arguments in order (In/Out/InOut buffers and scalars) and attaches checks
comparing the buffers read back after the run with a numpy reference."""

from __future__ import annotations

import dataclasses
import zlib
from typing import Callable

import numpy as np

CDNA = ("gfx90a", "gfx942", "gfx950", "gfx908")
RDNA = ("gfx1100", "gfx1100w64", "gfx1151", "gfx1151w64", "gfx1201", "gfx1201w64",
        "gfx1030", "gfx1030w64", "gfx1010", "gfx1010w64")
TARGETS = CDNA + RDNA


def wave_size(target: str) -> int:
    """Lanes per wave of a run target: RDNA's default build is wave32
    (gfx1010, gfx1030, gfx1100, gfx1151, gfx1201), its `w64` build and CDNA
    wave64."""
    return 32 if target.startswith("gfx1") and not target.endswith("w64") else 64


# --- arguments ------------------------------------------------------------------

@dataclasses.dataclass
class In:
    """A buffer initialised from `data`; its address is the argument."""
    data: np.ndarray


@dataclasses.dataclass
class Out:
    """A zeroed buffer of `count` elements of `dtype`, read back as `name`."""
    name: str
    dtype: object
    count: int


@dataclasses.dataclass
class InOut:
    """A buffer initialised from `data` and read back as `name`."""
    name: str
    data: np.ndarray


@dataclasses.dataclass
class Image:
    """An image: `desc` its eight resource-descriptor (T#) dwords, whose
    base address run-kernel fills in, and `data` its texels; the argument
    is the descriptor's address, and the data is read back as `name`."""
    name: str
    desc: np.ndarray
    data: np.ndarray


def tsharp(data_format, num_format, width, height=1, depth=1, pitch=None, ty=9, dst_sel=(4, 5, 6, 7)):
    """The T# dwords of a linear image (base address 0): DATA_FORMAT and
    NUM_FORMAT in word 1, WIDTH/HEIGHT - 1 in word 2, DST_SEL and TYPE (8 1D,
    9 2D, 10 3D, 12 1D array, 13 2D array) in word 3, DEPTH - 1 (depth or
    layers) and PITCH - 1 (elements) in word 4."""
    pitch = width if pitch is None else pitch
    w = np.zeros(8, dtype=np.uint32)
    w[1] = (data_format << 20) | (num_format << 26)
    w[2] = (width - 1) | ((height - 1) << 14)
    w[3] = dst_sel[0] | (dst_sel[1] << 3) | (dst_sel[2] << 6) | (dst_sel[3] << 9) | (ty << 28)
    w[4] = (depth - 1) | ((pitch - 1) << 13)
    return w


def ssharp(clamp=(2, 2, 2), bilinear=False, unnormalized=False, border=0):
    """The S# dwords: CLAMP_X/Y/Z (0 wrap, 1 mirror, 2 clamp to the last
    texel, 6 border), FORCE_UNNORMALIZED, MAX_LOD 15.99, XY_MAG/MIN_FILTER
    (0 point, 1 bilinear), BORDER_COLOR_TYPE (0 transparent black, 1 opaque
    black, 2 opaque white)."""
    f = 1 if bilinear else 0
    return np.array([clamp[0] | (clamp[1] << 3) | (clamp[2] << 6) | (int(unnormalized) << 15),
                     4095 << 12, (f << 20) | (f << 22), border << 30], dtype=np.uint32)


@dataclasses.dataclass
class Scalar:
    """A by-value argument: kind is i32, u32, i64, u64, f32, f64, f16 or bf16."""
    kind: str
    value: object

    def spec(self) -> str:
        v = self.value
        if self.kind in ("f32", "f64", "f16", "bf16"):
            return f"{self.kind}:{float(v)!r}"
        return f"{self.kind}:{int(v)}"


class Null:
    """A null pointer argument."""


def i32(v): return Scalar("i32", v)
def u32(v): return Scalar("u32", v)
def i64(v): return Scalar("i64", v)
def u64(v): return Scalar("u64", v)
def f32(v): return Scalar("f32", v)
def f64(v): return Scalar("f64", v)


SCALAR_SIZES = {"i32": 4, "u32": 4, "i64": 8, "u64": 8, "f32": 4, "f64": 8, "f16": 2, "bf16": 2}


# --- checks ---------------------------------------------------------------------

@dataclasses.dataclass
class Check:
    """Compares output `name` with `expected`.

    mode "exact": equal values (bitwise for floats, any NaN matches any NaN);
    mode "close": |got - expected| <= atol + rtol * |expected| elementwise,
    where atol may be an array (a per-element error bound);
    mode "ulp": float32 results within `ulps` units in the last place;
    mode "fn": `fn(got, outputs) -> (ok, detail)` for properties that span
    several outputs (e.g. the multiset of values an exchange returned).
    `view` reinterprets the raw bytes (default: the Out/InOut dtype);
    `transform` is applied to the output before comparing (e.g. np.sort for
    results whose order the hardware does not fix); `sl` compares a prefix."""
    name: str
    expected: np.ndarray
    mode: str = "exact"
    rtol: float = 0.0
    atol: object = 0.0
    ulps: int = 0
    transform: Callable | None = None
    view: object = None
    count: int | None = None
    why: str = ""
    fn: Callable | None = None


def exact(name, expected, **kw) -> Check:
    return Check(name, np.asarray(expected), "exact", **kw)


def close(name, expected, rtol=0.0, atol=0.0, why="", **kw) -> Check:
    return Check(name, np.asarray(expected), "close", rtol=rtol, atol=atol, why=why, **kw)


def ulp(name, expected, ulps, why="", **kw) -> Check:
    return Check(name, np.asarray(expected, dtype=np.float32), "ulp", ulps=ulps, why=why, **kw)


def prop(name, fn, **kw) -> Check:
    return Check(name, np.zeros(0), "fn", fn=fn, **kw)


def _fmt(v) -> str:
    if isinstance(v, (np.floating, float)):
        return f"{float(v)!r}"
    return str(v)


def _bits(v: np.ndarray) -> np.ndarray:
    return v.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[v.dtype.itemsize])


def compare(check: Check, got: np.ndarray, outputs: dict | None = None) -> tuple[bool, str]:
    """(ok, detail): detail names the first mismatching index, expected and
    got values, the number of mismatches and the largest error."""
    if check.mode == "fn":
        ok, detail = check.fn(got, outputs or {})
        return ok, "" if ok else f"{check.name}: {detail}"
    exp = np.asarray(check.expected)
    if check.transform is not None:
        got = check.transform(got)
    got = np.asarray(got).reshape(-1)
    exp = exp.reshape(-1)
    if got.size < exp.size:
        return False, f"{check.name}: {got.size} elements read back, {exp.size} expected"
    got = got[: exp.size]
    if check.mode == "exact":
        if np.issubdtype(exp.dtype, np.floating):
            got = got.astype(exp.dtype)
            both_nan = np.isnan(exp) & np.isnan(got)
            bad = (_bits(exp) != _bits(got)) & ~both_nan
            with np.errstate(invalid="ignore"):
                err = np.where(bad, np.abs(exp.astype(np.float64) - got.astype(np.float64)), 0.0)
        else:
            bad = exp != got.astype(exp.dtype)
            err = None
    elif check.mode == "close":
        e64, g64 = exp.astype(np.float64), got.astype(np.float64)
        atol = np.broadcast_to(np.asarray(check.atol, dtype=np.float64).reshape(-1)
                               if np.ndim(check.atol) else check.atol, e64.shape)
        with np.errstate(invalid="ignore"):
            diff = np.abs(g64 - e64)
            bad = ~(diff <= atol + check.rtol * np.abs(e64))
        bad &= ~(np.isnan(e64) & np.isnan(g64))
        bad &= ~(np.isinf(e64) & (e64 == g64))
        err = np.where(np.isfinite(diff), diff, np.inf)
    else:
        from numerics import ulp_diff_f32
        d = ulp_diff_f32(exp, got.astype(np.float32))
        bad = (d > check.ulps) & ~(np.isnan(exp) & np.isnan(got.astype(np.float32)))
        bad |= np.isnan(exp) != np.isnan(got.astype(np.float32))
        err = d.astype(np.float64)
    nbad = int(np.count_nonzero(bad))
    if nbad == 0:
        return True, ""
    first = int(np.flatnonzero(bad)[0])
    msg = (f"{check.name}: {nbad}/{exp.size} mismatches, first at [{first}]: "
           f"expected {_fmt(exp[first])} got {_fmt(got[first])}")
    if err is not None:
        msg += f", max error {float(np.max(np.where(bad, err, 0))):.3g}"
    if check.mode == "close":
        msg += f" (rtol {check.rtol:g}, atol {'per-element' if np.ndim(check.atol) else f'{check.atol:g}'})"
    elif check.mode == "ulp":
        msg += f" ulps (allowed {check.ulps})"
    return False, msg


# --- launches and the registry ---------------------------------------------------

def dims(v) -> tuple[int, int, int]:
    t = (v,) if isinstance(v, int) else tuple(v)
    return tuple(t) + (1,) * (3 - len(t))


@dataclasses.dataclass
class Launch:
    grid: object
    block: object
    args: list
    checks: list
    dynamic_lds: int = 0
    # A regular expression the fault report (run-kernel's stderr, exit
    # status 2) must match; the case then expects that fault and no outputs.
    expect_fault: str | None = None
    # The races the `races` plugin must report on this run, as
    # "space/scope" (lds/workgroup, global/workgroup, global/dispatch),
    # exactly; () for none. None: the plugin is not run for the case.
    races: tuple | None = None


@dataclasses.dataclass
class Case:
    name: str
    obj: str          # code object stem in build/kernels/<target>/
    kernel: str       # kernel symbol name
    make: Callable    # (rng, target) -> Launch
    targets: tuple = TARGETS
    triton: bool = False  # block size from metadata; trailing hidden pointers get null
    timeout: int = 300

    def seed(self) -> int:
        return zlib.crc32(self.name.encode())

    def launch(self, target: str) -> Launch:
        return self.make(np.random.default_rng(self.seed()), target)


REGISTRY: list[Case] = []


def case(name, obj, kernel, targets=TARGETS, triton=False, timeout=300):
    def register(fn):
        if any(c.name == name for c in REGISTRY):
            raise ValueError(f"duplicate case {name}")
        REGISTRY.append(Case(name, obj, kernel, fn, tuple(targets), triton, timeout))
        return fn
    return register


def blocks(n: int, block: int) -> int:
    return (n + block - 1) // block
