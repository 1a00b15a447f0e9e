"""Cases about parallelism: LDS reductions and scans with barriers,
cross-lane operations (DPP, ds_swizzle, ds_(b)permute, ballot), transposes
through LDS, atomics (global and LDS, integer and float), 2D/3D grids,
dynamic LDS and divergent loops."""

import numpy as np

from harness import CDNA, In, InOut, Launch, Out, blocks, case, exact, i32, prop, wave_size


def _waves(x, w=64):
    return x.reshape(-1, w)


@case("reduce_lds", "reduce", "reduce_lds")
def reduce_lds(rng, target):
    n = 300 * 256 - 50
    x = rng.standard_normal(n).astype(np.float32)
    g = blocks(n, 256)
    # The same pairwise tree in float32: bit-exact.
    t = np.zeros(g * 256, np.float32)
    t[:n] = x
    t = t.reshape(g, 256)
    s = 128
    while s:
        t[:, :s] = t[:, :s] + t[:, s:2 * s]
        s //= 2
    return Launch(g, 256, [Out("out", np.float32, g), In(x), i32(n)], [exact("out", t[:, 0])])


@case("reduce_dpp", "reduce", "reduce_dpp", targets=CDNA)
def reduce_dpp(rng, target):
    n = 64 * 4 * 50
    x = rng.integers(-(2**20), 2**20, n).astype(np.int32)
    return Launch(n // 256, 256, [Out("out", np.int32, n // 64), In(x)], [exact("out", _waves(x).sum(axis=1))])


@case("reduce_swizzle", "reduce", "reduce_swizzle")
def reduce_swizzle(rng, target):
    n = 64 * 2 * 40
    x = rng.integers(-(2**20), 2**20, n).astype(np.int32)
    halves = x.reshape(-1, 32).sum(axis=1)
    v = np.repeat(halves, 32)
    w = wave_size(target)
    first = np.repeat(v.reshape(-1, w)[:, 0], w)
    quad = x.reshape(-1, 4)[:, ::-1].reshape(-1)
    return Launch(n // 128, 128, [Out("out", np.int32, n), Out("quad", np.int32, n), In(x)],
                  [exact("out", v + first), exact("quad", quad)])


@case("scan_lds", "reduce", "scan_lds")
def scan_lds(rng, target):
    n = 100 * 256 + 17
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    g = blocks(n, 256)
    pad = np.zeros(g * 256, np.int32)
    pad[:n] = x
    ref = np.cumsum(pad.reshape(g, 256), axis=1).reshape(-1)[:n].astype(np.int32)
    return Launch(g, 256, [Out("out", np.int32, n), In(x), i32(n)], [exact("out", ref)])


@case("scan_dpp", "reduce", "scan_dpp", targets=CDNA)
def scan_dpp(rng, target):
    n = 64 * 4 * 20
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    return Launch(n // 256, 256, [Out("out", np.int32, n), In(x)],
                  [exact("out", np.cumsum(_waves(x), axis=1).astype(np.int32).reshape(-1))])


@case("lane_permute", "reduce", "lane_permute")
def lane_permute(rng, target):
    n = 64 * 4 * 4
    x = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    ws = wave_size(target)
    w = _waves(x, ws)
    lane = np.arange(ws)
    row = lane & ~15
    # ds_bpermute takes the lane number modulo the wave size.
    return Launch(n // 256, 256,
                  [Out("pull", np.int32, n), Out("push", np.int32, n), Out("quad", np.int32, n),
                   Out("ror", np.int32, n), Out("mirror", np.int32, n), In(x)],
                  [exact("pull", w[:, ((lane + 5) & 63) % ws]),
                   exact("push", w[:, lane ^ 1]),
                   exact("quad", w[:, (lane & ~3) | (3 - (lane & 3))]),
                   exact("ror", w[:, row | ((lane - 4) & 15)]),  # row_ror:4: lane i reads lane i-4 of its row
                   exact("mirror", w[:, row | (15 - (lane & 15))])])


# The kernel indexes its per-wave output by GID_X >> 6: 64-lane waves.
@case("wave_shuffle", "shuffle", "wave_allreduce", targets=CDNA + ("gfx1100w64", "gfx1151w64", "gfx1201w64", "gfx1030w64", "gfx1010w64"))
def wave_shuffle(rng, target):
    n = 64 * 2 * 30
    x = rng.standard_normal(n).astype(np.float32)
    k = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    # Butterfly in float32, same order as the kernel: bit-exact.
    v = _waves(x).copy()
    lane = np.arange(64)
    for mask in (32, 16, 8, 4, 2, 1):
        v = v + v[:, lane ^ mask]
    return Launch(n // 128, 128, [Out("out", np.float32, n), Out("max", np.int32, n // 64), In(x), In(k)],
                  [exact("out", v.reshape(-1)), exact("max", _waves(k).max(axis=1))])


@case("transpose_lds", "lds", "transpose_f32")
def transpose_lds(rng, target):
    rows, cols = 100, 75
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    return Launch((blocks(cols, 32), blocks(rows, 32)), (32, 8),
                  [Out("out", np.float32, rows * cols), In(x), i32(rows), i32(cols)], [exact("out", x.T)])


@case("histogram_lds", "lds", "histogram256")
def histogram_lds(rng, target):
    n, groups = 100_003, 64
    data = rng.integers(0, 256, n, dtype=np.uint8)
    data[:5000] = 42  # one hot bin
    return Launch(groups, 256, [Out("bins", np.uint32, 256), In(data), i32(n), i32(groups)],
                  [exact("bins", np.bincount(data, minlength=256).astype(np.uint32))])


def _multiset(init_name_index, olds_name, values):
    """The exchange property: the olds returned plus the final value are the
    initial value plus every value exchanged in, in some order."""
    buf, idx, init = init_name_index

    def check(got, outputs):
        seen = np.sort(np.concatenate([outputs[olds_name], outputs[buf][idx:idx + 1]]))
        want = np.sort(np.concatenate([values, [init]]).astype(seen.dtype))
        if seen.shape == want.shape and np.array_equal(seen, want):
            return True, ""
        return False, "returned olds + final value are not the initial value + the values exchanged in"
    return check


@case("atomics_i32", "atomics", "atomics_i32")
def atomics_i32(rng, target):
    n = 4000
    v = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    init = np.array([0, 5, 2**31 - 1, -(2**31), -1, 0, -1, 0x100, 0x5A5A5A5A, 1000, 77, 0, 0, 0, 0, 0],
                    dtype=np.int64).astype(np.int32)
    i = np.arange(n)
    v64 = v.astype(np.int64)
    exp = init.astype(np.int64).copy()
    exp[0] = n
    exp[1] = init[1] + v64.sum()
    exp[2] = min(init[2], v.min())
    exp[3] = max(init[3], v.max())
    exp[4] = min(init.view(np.uint32)[4], v.view(np.uint32).min())
    exp[5] = max(init.view(np.uint32)[5], v.view(np.uint32).max())
    exp[6] = int(np.bitwise_and.reduce(v | ~(np.int32(1) << (i & 31)).astype(np.int32))) & int(init[6])
    exp[7] = int(np.bitwise_or.reduce((np.uint32(1) << (v & 31).astype(np.uint32)).astype(np.uint32))) | int(init[7])
    exp[8] = int(np.bitwise_xor.reduce(v)) ^ int(init[8])
    exp[9] = init[9] + n
    exp[10] = -1  # order-dependent: checked through the exchange property
    exp[11] = n % 100  # atomic_inc with limit 99 wraps to 0 after 99
    exp[12] = int(init[12]) - v64.sum()
    ref = (exp & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    final = np.delete(ref, 10)
    return Launch(blocks(n, 256), 256,
                  [InOut("c", init), Out("oadd", np.int32, n), Out("ocas", np.int32, n), Out("oxchg", np.int32, n),
                   In(v), i32(n)],
                  [exact("c", final, transform=lambda c: np.delete(c, 10)),
                   exact("oadd", np.arange(n, dtype=np.int32), transform=np.sort),
                   exact("ocas", init[9] + np.arange(n, dtype=np.int32), transform=np.sort),
                   prop("oxchg", _multiset(("c", 10, init[10]), "oxchg", v))])


@case("atomics_u64", "atomics", "atomics_u64")
def atomics_u64(rng, target):
    n = 3000
    v = rng.integers(1, 2**63, n, dtype=np.int64).view(np.uint64) * np.uint64(2) + np.uint64(1)
    init = np.array([7, 0, 2**64 - 1, 0x0123456789ABCDEF, 0, 0, 0, 0], dtype=np.uint64)
    step = np.uint64(1 << 33)
    final = init.copy()
    final[0] = init[0] + step * np.uint64(n)
    final[1] = max(init[1], v.max())
    final[2] = min(init[2], v.min())
    final[3] = init[3] ^ np.bitwise_xor.reduce(v)

    def one_winner(got, outputs):
        won = outputs["owon"]
        if int(np.count_nonzero(won)) != 1:
            return False, f"{int(np.count_nonzero(won))} compare-exchanges succeeded, expected 1"
        winner = int(np.flatnonzero(won)[0])
        if outputs["c"][4] != v[winner]:
            return False, f"c[4] = {outputs['c'][4]}, the winner (work-item {winner}) stored {v[winner]}"
        return True, ""
    return Launch(blocks(n, 128), 128, [InOut("c", init), Out("oadd", np.uint64, n), Out("owon", np.int32, n),
                                        In(v), i32(n)],
                  [exact("c", final[:4]),
                   exact("oadd", init[0] + step * np.arange(n, dtype=np.uint64), transform=np.sort),
                   prop("owon", one_winner)])


@case("atomics_f32", "atomics", "atomics_f32")
def atomics_f32(rng, target):
    n = 4096
    # Multiples of 1/8 below 64 in magnitude: every partial sum (< 2^18) is
    # exact in f32 and f64, so the totals do not depend on the order.
    v = (rng.integers(-512, 512, n) / 8).astype(np.float32)
    f = np.array([0, 0.5, -np.inf, np.inf], dtype=np.float32)
    d = np.array([0.25], dtype=np.float64)
    ff = np.array([n, 0.5 + v.astype(np.float64).sum(), v.max(), v.min()], dtype=np.float32)
    return Launch(blocks(n, 256), 256, [InOut("f", f), Out("old", np.float32, n), InOut("d", d), In(v), i32(n)],
                  [exact("f", ff), exact("old", np.arange(n, dtype=np.float32), transform=np.sort),
                   exact("d", np.array([0.25 + v.astype(np.float64).sum()]))])


@case("atomics_f32_hw", "atomics", "atomics_f32_hw")
def atomics_f32_hw(rng, target):
    n = 5000
    v = (rng.integers(-4096, 4096, n) / 16).astype(np.float32)  # exact partial sums, as above
    f = np.zeros(8, np.float32)
    ref = np.array([v[k::8].astype(np.float64).sum() for k in range(8)], dtype=np.float32)
    return Launch(blocks(n, 256), 256, [InOut("f", f), In(v), i32(n)], [exact("f", ref)])


@case("atomics_lds", "atomics", "atomics_lds")
def atomics_lds(rng, target):
    n = 20 * 256 - 100
    v = rng.integers(0, 2**20, n).astype(np.int32)
    g = blocks(n, 256)
    ints = np.zeros((g, 128), np.int32)
    fl = np.zeros((g, 64), np.float32)
    for b in range(g):
        part = v[b * 256:(b + 1) * 256]
        ints[b, :64] = np.bincount(part & 63, minlength=64)
        mx = np.full(64, -1, np.int64)
        np.maximum.at(mx, (part >> 6) & 63, part)
        ints[b, 64:] = mx
        np.add.at(fl[b], part & 63, ((part & 7) * 0.5).astype(np.float32))  # sums of halves: exact
    return Launch(g, 256, [Out("out", np.int32, g * 128), Out("fout", np.float32, g * 64), In(v), i32(n)],
                  [exact("out", ints), exact("fout", fl)])


def _grid3d(grid, block):
    nx, ny, nz = (g * b for g, b in zip(grid, block))
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    bx, by, bz = block
    ref = (((x // bx) << 24) | ((y // by) << 20) | ((z // bz) << 16) | ((x % bx) << 8) | ((y % by) << 4) |
           (z % bz))
    return Launch(grid, block, [Out("out", np.int32, nx * ny * nz), i32(nx), i32(ny)],
                  [exact("out", ref.astype(np.int32))])


@case("grid3d", "control", "grid3d")
def grid3d(rng, target):
    return _grid3d((3, 5, 4), (8, 4, 2))


@case("grid3d_partial_waves", "control", "grid3d")
def grid3d_partial_waves(rng, target):
    # 5 x 3 x 7 = 105 work-items: the second wave of each group has 41 lanes.
    return _grid3d((2, 3, 2), (5, 3, 7))


@case("grid2d_partial", "control", "grid2d")
def grid2d_partial(rng, target):
    rows, cols = 77, 130
    a = rng.integers(-1000, 1000, (rows, cols)).astype(np.int32)
    b = rng.integers(-1000, 1000, (rows, cols)).astype(np.int32)
    ref = a * 3 - b + np.arange(rows, dtype=np.int32)[:, None]
    return Launch((blocks(cols, 16), blocks(rows, 16)), (16, 16),
                  [Out("c", np.int32, rows * cols), In(a), In(b), i32(rows), i32(cols)], [exact("c", ref)])


@case("ballot_rank", "control", "ballot_rank")
def ballot_rank(rng, target):
    n = 64 * 4 * 6 - 40
    v = rng.integers(-5, 5, n).astype(np.int32)
    g = blocks(n, 256)
    full = np.zeros(g * 256, np.int32)
    full[:n] = v
    ws = wave_size(target)
    w = _waves(full, ws)
    pred = w > 0
    count = np.repeat(pred.sum(axis=1), ws)
    rank = np.where(pred, np.cumsum(pred, axis=1) - 1, -1).reshape(-1)
    first = np.repeat(w[:, 0], ws).reshape(-1)
    uni = np.where(first > 0, full + first, full - first * 2)
    return Launch(g, 256, [Out("count", np.uint32, n), Out("rank", np.int32, n), Out("uni", np.int32, n), In(v),
                           i32(n)],
                  [exact("count", count[:n].astype(np.uint32)), exact("rank", rank[:n]), exact("uni", uni[:n])])


def _collatz(x):
    s = 0
    while x != 1:
        x = 3 * x + 1 if x & 1 else x >> 1
        s += 1
        if s >= 500:
            break
    return s


@case("early_exit", "control", "early_exit")
def early_exit(rng, target):
    rows, cols, thresh = 512, 200, 990
    a = rng.integers(0, 1000, (rows, cols)).astype(np.int32)
    hit = a > thresh
    found = np.where(hit.any(axis=1), np.argmax(hit, axis=1), -1).astype(np.int32)
    steps = np.array([_collatz(r + 1) for r in range(rows)], dtype=np.int32)
    return Launch(rows // 64, 64, [Out("found", np.int32, rows), Out("steps", np.int32, rows), In(a), i32(cols),
                                   i32(thresh)],
                  [exact("found", found), exact("steps", steps)])


@case("dynamic_lds", "dynlds", "dyn_lds_reverse")
def dynamic_lds(rng, target):
    nt, g = 128, 12
    x = rng.standard_normal(nt * g).astype(np.float32)
    r = x.reshape(g, nt)[:, ::-1]
    ref = r + r * np.float32(2)
    return Launch(g, nt, [Out("out", np.float32, nt * g), Out("flag", np.int32, g), In(x), i32(9)],
                  [exact("out", ref), exact("flag", np.full(g, 60 + 9, np.int32))], dynamic_lds=2 * nt * 4)


@case("lds_reverse", "lds", "lds_reverse")
def lds_reverse(rng, target):
    g = 6
    x = rng.standard_normal(256 * g).astype(np.float32)
    return Launch(g, 256, [Out("out", np.float32, 256 * g), In(x)], [exact("out", x.reshape(g, 256)[:, ::-1])])


@case("atomics_f64", "atomics", "atomics_f64")
def atomics_f64(rng, target):
    n = 3000
    v = rng.integers(-(2**20), 2**20, n) / 64.0  # partial sums stay exact in f64
    g = blocks(n, 256)
    d = np.array([0.5, -np.inf, np.inf])
    pad = np.zeros(g * 256)
    pad[:n] = v
    return Launch(g, 256, [InOut("d", d), Out("group", np.float64, g), In(v), i32(n)],
                  [exact("d", np.array([0.5 + v.sum(), v.max(), v.min()])),
                   exact("group", pad.reshape(g, 256).sum(axis=1))])


# The races plugin's cases: `races` names the races a run must report (space
# and scope: lds/workgroup, global/workgroup, global/dispatch), exactly; an
# empty tuple, none. The racy kernels' outputs depend on the order waves
# run in, so they are not compared; their twins' are.
RACE_BLOCK, RACE_GROUPS = 256, 6


def _race_ids():
    t = np.arange(RACE_BLOCK)
    return t, (t + 64) % RACE_BLOCK


@case("races_lds_racy", "races", "lds_neighbour_racy")
def races_lds_racy(rng, target):
    n = RACE_BLOCK * RACE_GROUPS
    return Launch(RACE_GROUPS, RACE_BLOCK, [Out("out", np.int32, n)], [], races=("lds/workgroup",))


@case("races_lds_sync", "races", "lds_neighbour_sync")
def races_lds_sync(rng, target):
    t, nb = _race_ids()
    ref = np.tile(3 * nb + 1, RACE_GROUPS).astype(np.int32)
    return Launch(RACE_GROUPS, RACE_BLOCK, [Out("out", np.int32, ref.size)], [exact("out", ref)], races=())


@case("races_lds_atomic", "races", "lds_atomic_sync")
def races_lds_atomic(rng, target):
    n = RACE_BLOCK * RACE_GROUPS
    ref = np.full(n, RACE_BLOCK, np.int32)
    return Launch(RACE_GROUPS, RACE_BLOCK, [Out("out", np.int32, n)], [exact("out", ref)], races=())


@case("races_global_waves_racy", "races", "global_waves_racy")
def races_global_waves_racy(rng, target):
    n = RACE_BLOCK * RACE_GROUPS
    return Launch(RACE_GROUPS, RACE_BLOCK, [Out("buf", np.int32, n), Out("out", np.int32, n)], [],
                  races=("global/workgroup",))


@case("races_global_waves_sync", "races", "global_waves_sync")
def races_global_waves_sync(rng, target):
    t, nb = _race_ids()
    n = RACE_BLOCK * RACE_GROUPS
    ref = np.tile(5 * nb + 2, RACE_GROUPS).astype(np.int32)
    return Launch(RACE_GROUPS, RACE_BLOCK, [Out("buf", np.int32, n), Out("out", np.int32, n)],
                  [exact("out", ref)], races=())


@case("races_global_groups_racy", "races", "global_groups_racy")
def races_global_groups_racy(rng, target):
    n = RACE_BLOCK * RACE_GROUPS
    return Launch(RACE_GROUPS, RACE_BLOCK, [Out("word", np.int32, 1), Out("out", np.int32, n)],
                  [exact("word", np.array([7], np.int32))], races=("global/dispatch",))


@case("races_global_groups_atomic", "races", "global_groups_atomic")
def races_global_groups_atomic(rng, target):
    n = RACE_BLOCK * RACE_GROUPS
    return Launch(RACE_GROUPS, RACE_BLOCK, [InOut("word", np.zeros(1, np.int32)), Out("out", np.int32, n)],
                  [exact("word", np.array([7 * RACE_GROUPS], np.int32))], races=())
