"""Image instructions (src/images.cl, gfx90a only: gfx942 and gfx950 have no
MIMG): loads and stores of linear images through descriptors built here,
and sampling with normalised coordinates, point and bilinear filtering and
the address modes, against a numpy sampler written from the ISA guide's
rules (texel-space coordinate u * size in f32; nearest reads floor(x) of x
rounded to the texture unit's sub-texel precision, 1/256 texel, ties to
even; bilinear reads floor(x - 0.5) and the next texel weighted by the
fraction)."""

import numpy as np

from harness import Image, In, Launch, Out, blocks, case, close, exact, f32, i32, ssharp, tsharp

# IMG_DATA_FORMAT / IMG_NUM_FORMAT values.
FMT_8_8_8_8, FMT_16_16_16_16, FMT_32, FMT_32_32_32_32 = 10, 12, 4, 14
UNORM, FLOAT = 0, 7
WRAP, MIRROR, CLAMP, BORDER = 0, 1, 2, 6

# The emulator filters in f32 with exact (unquantised) weights; the
# reference works in f64. The difference is the f32 rounding of at most
# eight weighted products of values in [0, 1].
FILTER_ATOL = 2e-6


def index(mode, i, n):
    """Texel indices after an address mode; -1 for the border."""
    if mode == WRAP:
        return np.mod(i, n)
    if mode == MIRROR:
        j = np.mod(i, 2 * n)
        return np.where(j >= n, 2 * n - 1 - j, j)
    if mode == CLAMP:
        return np.clip(i, 0, n - 1)
    return np.where((i >= 0) & (i < n), i, -1)


def subtexel(x):
    """Texel-space coordinates (products of f32 coordinates and small sizes,
    exact in f64) as the unit computes them in f32, rounded to the nearest
    1/256 texel (ties to even)."""
    steps = np.float32(256)
    return np.rint(np.asarray(x, np.float32) * steps) / steps


def taps(mode, x, n, linear):
    """[(indices, weights)] along one axis for texel-space coordinates x."""
    if not linear:
        return [(index(mode, np.floor(subtexel(x)).astype(np.int64), n), np.ones_like(x))]
    xs = x - 0.5
    i0 = np.floor(xs).astype(np.int64)
    a = xs - np.floor(xs)
    return [(index(mode, i0, n), 1 - a), (index(mode, i0 + 1, n), a)]


def ref_sample(img, coords, modes, linear, border):
    """img[z][y][x][c] (float64); coords (N, axes) normalised, axes x[, y[, z]]."""
    axes = coords.shape[1]
    shape = img.shape[:3][::-1]  # (w, h, d)
    per_axis = [taps(modes[k], coords[:, k] * shape[k], shape[k], linear) for k in range(axes)]
    while len(per_axis) < 3:
        per_axis.append([(np.zeros(len(coords), np.int64), np.ones(len(coords)))])
    out = np.zeros((len(coords), 4))
    for iz, wz in per_axis[2]:
        for iy, wy in per_axis[1]:
            for ix, wx in per_axis[0]:
                inside = (ix >= 0) & (iy >= 0) & (iz >= 0)
                t = np.where(inside[:, None], img[np.maximum(iz, 0), np.maximum(iy, 0), np.maximum(ix, 0)],
                             np.asarray(border, dtype=np.float64)[None, :])
                out += (wx * wy * wz)[:, None] * t
    return out


@case("image_load_store", "images", "img_copy_scale", targets=("gfx90a",))
def image_load_store(rng, target):
    w, h, pitch = 24, 10, 32
    src = np.zeros((h, pitch, 4), np.uint8)
    src[:, :w] = rng.integers(0, 256, (h, w, 4))
    # BGRA in memory, read as RGBA with alpha forced to 1 (dst_sel z, y, x, 1).
    desc = tsharp(FMT_8_8_8_8, UNORM, w, h, pitch=pitch, dst_sel=(6, 5, 4, 1))
    loaded = np.ones((h, w, 4), np.float32)
    loaded[..., :3] = src[:, :w, [2, 1, 0]].astype(np.float32) / np.float32(255)
    scale = np.float32(0.75)
    # Stores write components in memory order (no swizzle), as 16-bit unorm
    # rounded to nearest even.
    stored = np.rint(np.clip(loaded * scale, 0, 1) * np.float32(65535)).astype(np.uint16)
    dst = np.zeros((h, w, 4), np.uint16)
    return Launch((w // 8, h // 2), (8, 2),
                  [Out("out", np.float32, w * h * 4), Image("src", desc, src),
                   Image("dst", tsharp(FMT_16_16_16_16, UNORM, w, h), dst), f32(scale), i32(w)],
                  [exact("out", loaded.reshape(-1)), exact("dst", stored.reshape(-1))])


def _sample2d(rng, modes, linear, border):
    w, h, n = 7, 5, 500
    img = rng.uniform(0, 1, (1, h, w, 4)).astype(np.float32)
    uv = rng.uniform(-1.2, 2.2, (n, 2)).astype(np.float32)
    want = ref_sample(img.astype(np.float64), uv.astype(np.float64), modes, linear,
                      {0: [0, 0, 0, 0], 1: [0, 0, 0, 1], 2: [1, 1, 1, 1]}[border])
    s = ssharp(clamp=(modes[0], modes[1], CLAMP), bilinear=linear, border=border)
    return Launch(blocks(n, 64), 64,
                  [Out("out", np.float32, n * 4), Image("img", tsharp(FMT_32_32_32_32, FLOAT, w, h), img[0]),
                   In(s), In(uv), i32(n)],
                  [close("out", want.reshape(-1), atol=FILTER_ATOL, why="f32 filtering")])


@case("image_sample_bilinear_clamp", "images", "img_sample_2d", targets=("gfx90a",))
def image_sample_bilinear_clamp(rng, target):
    return _sample2d(rng, (CLAMP, CLAMP), True, 0)


@case("image_sample_bilinear_wrap_mirror", "images", "img_sample_2d", targets=("gfx90a",))
def image_sample_bilinear_wrap_mirror(rng, target):
    return _sample2d(rng, (WRAP, MIRROR), True, 0)


@case("image_sample_bilinear_border", "images", "img_sample_2d", targets=("gfx90a",))
def image_sample_bilinear_border(rng, target):
    return _sample2d(rng, (BORDER, BORDER), True, 1)


@case("image_sample_nearest_wrap", "images", "img_sample_2d", targets=("gfx90a",))
def image_sample_nearest_wrap(rng, target):
    return _sample2d(rng, (WRAP, BORDER), False, 2)


@case("image_sample_3d_trilinear", "images", "img_sample_3d", targets=("gfx90a",))
def image_sample_3d_trilinear(rng, target):
    w, h, d, n = 6, 5, 4, 300
    img = rng.uniform(0, 1, (d, h, w)).astype(np.float32)
    uvw = np.zeros((n, 4), np.float32)
    uvw[:, :3] = rng.uniform(-0.3, 1.3, (n, 3))
    want = ref_sample(np.repeat(img[..., None], 4, axis=3).astype(np.float64), uvw[:, :3].astype(np.float64),
                      (CLAMP, CLAMP, CLAMP), True, [0, 0, 0, 0])
    # One-component R32F: y and z read 0, w reads 1.
    want[:, 1:3] = 0
    want[:, 3] = 1
    return Launch(blocks(n, 64), 64,
                  [Out("out", np.float32, n * 4), Image("img", tsharp(FMT_32, FLOAT, w, h, depth=d, ty=10), img),
                   In(ssharp(bilinear=True)), In(uvw), i32(n)],
                  [close("out", want.reshape(-1), atol=FILTER_ATOL, why="f32 filtering")])


@case("image_sample_2darray_nearest", "images", "img_sample_2darray", targets=("gfx90a",))
def image_sample_2darray_nearest(rng, target):
    w, h, layers, n = 5, 4, 3, 256
    img = rng.integers(0, 256, (layers, h, w, 4)).astype(np.uint8)
    uvl = np.zeros((n, 4), np.float32)
    uvl[:, :2] = rng.uniform(0, 1, (n, 2))
    # Layers are rounded to nearest even and clamped.
    uvl[:, 2] = rng.uniform(-1, layers + 1, n)
    layer = np.clip(np.rint(uvl[:, 2]), 0, layers - 1).astype(np.int64)
    x = np.floor(subtexel(uvl[:, 0] * np.float32(w))).astype(np.int64)
    y = np.floor(subtexel(uvl[:, 1] * np.float32(h))).astype(np.int64)
    want = img[layer, y, x].astype(np.float32) / np.float32(255)
    return Launch(blocks(n, 64), 64,
                  [Out("out", np.float32, n * 4),
                   Image("img", tsharp(FMT_8_8_8_8, UNORM, w, h, depth=layers, ty=13), img),
                   In(ssharp()), In(uvl), i32(n)],
                  [exact("out", want.reshape(-1))])
