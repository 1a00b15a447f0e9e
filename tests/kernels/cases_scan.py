"""Triton scans and atomics that cross wave boundaries (tests/kernels/src/tri_scan.py):
row-wise cumsum over a [4, 512] tile in a 256-lane workgroup (forward and
reverse, int32 and float32, masked columns) and elementwise integer atomics
with many lanes on one address, each against numpy."""

import pathlib

import numpy as np

from harness import In, InOut, Launch, Out, blocks, case, exact, i32, prop
from cases_triton import tcase

ROWS, BLOCK = 4, 512
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def _cumsum(rng, dtype, reverse, cols):
    rows = 12
    # Integers (also as float32): every partial sum is exact in f32, so the
    # result does not depend on the order of the scan tree.
    x = rng.integers(-1000, 1000, (rows, cols)).astype(dtype)
    src = x[:, ::-1] if reverse else x
    ref = np.cumsum(src.astype(np.int64), axis=1)
    ref = (ref[:, ::-1] if reverse else ref).astype(dtype)
    return Launch(rows // ROWS, None, [Out("out", dtype, rows * cols), In(x), i32(cols)],
                  [exact("out", ref)])


for _ty, _dt in (("i32", np.int32), ("f32", np.float32)):
    for _rev in (False, True):
        for _cols in (BLOCK, 300):
            _name = f"tri_cumsum2d_{_ty}{'_rev' if _rev else ''}{'' if _cols == BLOCK else '_masked'}"
            tcase(_name, f"tri_scan-cumsum2d_{_ty}{'_rev' if _rev else ''}", "cumsum2d_kernel")(
                lambda rng, target, dt=_dt, rev=_rev, cols=_cols: _cumsum(rng, dt, rev, cols))


def _slot_reduce(q, slots, fn, init):
    out = np.full(slots, init, dtype=q.dtype)
    for s in range(slots):
        v = q[s::slots]
        if v.size:
            out[s] = fn(init, fn.reduce(v))
    return out


OBJDUMP = pathlib.Path(__file__).resolve().parents[2] / "build" / "kernels"


def _wave_combine_unsigned(target, obj):
    """Whether Triton combined the lanes of a wave that share an address
    before the atomic, with an unsigned max (its intra-wave reduction on
    CDNA3/CDNA4, AtomicRMWOpsEmitter.cpp in Triton 3.9, combines `max`/`min`
    with umax/umin). Read from the code object's listing (llvm-objdump-22),
    so the reference follows the code the GPU runs."""
    text = (OBJDUMP / target / f"{obj}.objdump").read_text()
    return "v_max_u32" in text and "ds_bpermute_b32" in text


def _atomic_minmax(rng, target, obj, slots):
    n = 5000
    v = rng.uniform(-3, 3, n).astype(np.float32)
    q = (v * np.float32(1000.0)).astype(np.int32)  # truncation toward zero, as fptosi
    u = q.view(np.uint32)
    init = np.concatenate([np.full(slots, I32_MIN), np.full(slots, I32_MAX)]).astype(np.int32)
    uinit = np.concatenate([np.zeros(slots), np.full(slots, 0xFFFFFFFF)]).astype(np.uint32)
    if slots == 1 and _wave_combine_unsigned(target, obj):
        # On hardware each wave's 64 values (one address) become one atomic
        # of their unsigned max/min; the atomics themselves are signed.
        waves = [u[i:i + 64] for i in range(0, n, 64)]
        smax = max(w.max().view(np.int32) for w in waves)
        smin = min(w.min().view(np.int32) for w in waves)
        ref = np.array([max(smax, I32_MIN), min(smin, I32_MAX)], np.int32)
    else:
        ref = np.concatenate([_slot_reduce(q, slots, np.maximum, np.int32(I32_MIN)),
                              _slot_reduce(q, slots, np.minimum, np.int32(I32_MAX))])
    uref = np.concatenate([_slot_reduce(u, slots, np.maximum, np.uint32(0)),
                           _slot_reduce(u, slots, np.minimum, np.uint32(0xFFFFFFFF))])
    return Launch(blocks(n, 256), None,
                  [InOut("out", init), InOut("uout", uinit), In(v), i32(n), i32(slots)],
                  [exact("out", ref), exact("uout", uref)])


# One address for the whole grid, a few, and many lanes per address.
for _obj in ("atomic_minmax", "atomic_minmax_aligned"):
    for _slots in (1, 7, 600):
        tcase(f"tri_{_obj}_i32_{_slots}slots", f"tri_scan-{_obj}", "atomic_minmax_kernel")(
            lambda rng, target, obj=_obj, slots=_slots: _atomic_minmax(rng, target, f"tri_scan-{obj}", slots))


@tcase("tri_atomic_bits_i32", "tri_scan-atomic_bits", "atomic_bits_kernel")
def tri_atomic_bits(rng, target):
    n, slots = 3000, 5
    q = rng.integers(I32_MIN, I32_MAX, n, endpoint=True).astype(np.int32)
    # A few set bits per value, so the AND of each slot is not just 0.
    q |= np.int32(0x40100001)
    init = np.concatenate([np.full(slots, -1), np.zeros(3 * slots)]).astype(np.int32)
    u = q.view(np.uint32)
    ref = np.concatenate([
        _slot_reduce(u, slots, np.bitwise_and, np.uint32(0xFFFFFFFF)),
        _slot_reduce(u, slots, np.bitwise_or, np.uint32(0)),
        _slot_reduce(u, slots, np.bitwise_xor, np.uint32(0)),
        _slot_reduce(u, slots, np.add, np.uint32(0)),
    ]).view(np.int32)
    return Launch(blocks(n, 256), None, [InOut("out", init), In(q), i32(n), i32(slots)],
                  [exact("out", ref)])


@tcase("tri_atomic_max_ret_i32", "tri_scan-atomic_max_ret", "atomic_max_ret_kernel")
def tri_atomic_max_ret(rng, target):
    n, slots = 2000, 3
    q = rng.integers(-100_000, 100_000, n).astype(np.int32)
    init = np.full(slots, I32_MIN, np.int32)
    final = _slot_reduce(q, slots, np.maximum, np.int32(I32_MIN))

    def olds(got, outputs):
        got = np.asarray(got).reshape(-1)[:n].astype(np.int64)
        for s in range(slots):
            seen = set(q[s::slots].tolist()) | {I32_MIN}
            o = got[s::slots]
            bad = [int(x) for x in o if int(x) not in seen or x > final[s]]
            if bad:
                return False, f"slot {s}: returned {bad[0]}, neither the initial value nor a stored one <= {final[s]}"
            # Each returned value is what the slot held before the lane's
            # max: exactly one lane of the slot sees the initial value.
            if int(np.count_nonzero(o == I32_MIN)) != 1:
                return False, f"slot {s}: {int(np.count_nonzero(o == I32_MIN))} lanes saw the initial value, expected 1"
        return True, ""

    return Launch(blocks(n, 256), None, [InOut("out", init), Out("old", np.int32, n), In(q), i32(n), i32(slots)],
                  [exact("out", final), prop("old", olds)])


def _wave_scan_check(name, v, active, init, combine, identity, mask):
    """The atomic optimizer's promise for one address: within each wave of
    64 work-items, the old value lane l sees is the wave's base combined with
    the exclusive scan of the active lanes before it; and the waves' bases
    chain from `init`, each wave's atomic applied once in some order."""
    def check(got, outputs):
        got = [int(x) & mask for x in np.asarray(got).reshape(-1)[:v.size]]
        bases, totals = [], []
        for w0 in range(0, v.size, 64):
            lanes = [l for l in range(w0, min(w0 + 64, v.size)) if active[l]]
            if not lanes:
                continue
            base = got[lanes[0]]
            acc = identity
            for l in lanes:
                want = combine(base, acc) & mask
                if got[l] != want:
                    return False, (f"{name}[{l}] = {got[l]:#x}, expected {want:#x} (wave at {w0}: base "
                                   f"{base:#x} combined with the exclusive scan of the lanes before)")
                acc = combine(acc, int(v[l]))
            bases.append(base)
            totals.append(acc)
        cur, left = int(init) & mask, list(range(len(bases)))
        while left:
            k = next((k for k in left if bases[k] == cur), None)
            if k is None:
                return False, f"{name}: no wave's atomic saw {cur:#x}: the waves' bases do not chain from the initial value"
            cur = combine(cur, totals[k]) & mask
            left.remove(k)
        return True, ""
    return check


@case("atomicopt_i32", "atomicopt", "atomicopt_i32")
def atomicopt_i32(rng, target):
    n = 3000
    v = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    active = (v % 5) != 0
    a = v[active].astype(np.int64)
    i = np.flatnonzero(active)
    init = np.array([7, I32_MIN, I32_MAX, 11, -1, 0x100, 0x5A5A5A5A], np.int64).astype(np.int32)
    m32 = 0xFFFFFFFF
    exp = [init[0] + a.sum(), max(int(init[1]), int(a.max())), min(int(init[2]), int(a.min())),
           int(init[3]) - a.sum(),
           int(np.bitwise_and.reduce(v[active] | ~(np.int32(1) << (i & 31)).astype(np.int32))) & int(init[4]),
           int(np.bitwise_or.reduce((np.uint32(1) << (v[active] & 31).astype(np.uint32)))) | int(init[5]),
           int(np.bitwise_xor.reduce(v[active])) ^ int(init[6])]
    final = (np.array(exp, np.int64) & m32).astype(np.uint32).view(np.int32)
    sx = lambda x: x - (1 << 32) if x & 0x80000000 else x  # noqa: E731
    return Launch(blocks(n, 256), 256,
                  [InOut("c", init), Out("oadd", np.int32, n), Out("omax", np.int32, n), Out("osub", np.int32, n),
                   In(v), i32(n)],
                  [exact("c", final),
                   prop("oadd", _wave_scan_check("oadd", v, active, init[0], lambda x, y: x + y, 0, m32)),
                   prop("omax", _wave_scan_check("omax", v, active, init[1],
                                                 lambda x, y: max(sx(x & m32), sx(y & m32)), I32_MIN, m32)),
                   prop("osub", _wave_scan_check("osub", -v.astype(np.int64), active, init[3],
                                                 lambda x, y: x + y, 0, m32))])


@case("atomicopt_u64", "atomicopt", "atomicopt_u64")
def atomicopt_u64(rng, target):
    n = 1000
    # Values near 2^32 make every step of the 64-bit scan carry.
    v = (rng.integers(0, 2**33, n, dtype=np.int64).astype(np.uint64) + np.uint64(2**32 - 2**31))
    init = np.array([2**40 + 3], np.uint64)
    m64 = (1 << 64) - 1
    return Launch(blocks(n, 128), 128, [InOut("c", init), Out("oadd", np.uint64, n), In(v), i32(n)],
                  [exact("c", np.array([(int(init[0]) + int(v.astype(object).sum())) & m64], np.uint64)),
                   prop("oadd", _wave_scan_check("oadd", v.astype(object), np.ones(n, bool), int(init[0]),
                                                 lambda x, y: x + y, 0, m64))])
