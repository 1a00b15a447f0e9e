#!/usr/bin/env python3
"""Generates crates/gpu/testdata/float_ref.bin: reference conversions for the
low-precision number formats of crates/gpu/src/float, computed by the
`ml_dtypes` package (and numpy for float16).

Needs numpy and ml_dtypes (pip install ml_dtypes; generated with ml_dtypes
0.6.0, numpy 2.4.6). Run from the repository root:

    python3 scripts/gen/float_ref.py

The file is zlib-compressed; uncompressed it is the magic b"RJFREF1\\n"
followed by sections, each: u8 name length, name (ASCII), u32 element count,
u8 element size in bytes, then the elements (little endian). Sections:

- "inputs" (u32): f32 bit patterns: all 65536 float16 values, sampled
  bfloat16 values, every finite value of each 8/6/4-bit format with its f32
  neighbours, the midpoints between adjacent values of every format (and
  their f32 neighbours), values just beyond the largest finite value,
  uniformly random f32 bit patterns (NaNs, infinities, denormals included)
  and random f32 of moderate exponent. Seeded: the output is deterministic.
- "enc.<format>" (u16 for f16/bf16, else u8): the input converted with
  round-to-nearest-even, non-saturating, as ml_dtypes/numpy do it.
- "dec.<format>" (u32): f32 bits of every encoding of the format.

Formats: f16 bf16 e4m3fnuz e5m2fnuz e4m3fn e5m2 e2m3 e3m2 e2m1 e8m0.
"""

import struct
import sys
import zlib
from pathlib import Path

import ml_dtypes
import numpy as np

FORMATS = [
    ("f16", np.float16, 16),
    ("bf16", ml_dtypes.bfloat16, 16),
    ("e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 8),
    ("e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 8),
    ("e4m3fn", ml_dtypes.float8_e4m3fn, 8),
    ("e5m2", ml_dtypes.float8_e5m2, 8),
    ("e2m3", ml_dtypes.float6_e2m3fn, 6),
    ("e3m2", ml_dtypes.float6_e3m2fn, 6),
    ("e2m1", ml_dtypes.float4_e2m1fn, 4),
    ("e8m0", ml_dtypes.float8_e8m0fnu, 8),
]


def decode_all(dtype, bits):
    """f32 values of all 2^bits encodings (ml_dtypes stores 6/4-bit types in a byte)."""
    n = 1 << bits
    store = np.uint16 if bits == 16 else np.uint8
    return np.arange(n, dtype=np.uint32).astype(store).view(dtype).astype(np.float32)


def f32_neighbours(vals):
    v = vals.astype(np.float32)
    up = np.nextafter(v, np.float32(np.inf), dtype=np.float32)
    dn = np.nextafter(v, np.float32(-np.inf), dtype=np.float32)
    return [v, up, dn]


def inputs():
    np.seterr(all="ignore")
    rng = np.random.default_rng(20261129)
    parts = []
    # Every float16 value.
    parts.append(np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32))
    # Sampled bfloat16 values.
    bf = rng.integers(0, 1 << 16, size=4096, dtype=np.uint32) << 16
    parts.append(bf.astype(np.uint32).view(np.float32))
    for name, dtype, bits in FORMATS:
        vals = decode_all(dtype, bits)
        fin = np.unique(np.abs(vals[np.isfinite(vals)]).astype(np.float64))
        if bits == 16:
            # Sample adjacent pairs for the 16-bit formats.
            idx = rng.integers(0, len(fin) - 1, size=2048)
            lo, hi = fin[idx], fin[idx + 1]
            chosen = fin[idx]
        else:
            lo, hi = fin[:-1], fin[1:]
            chosen = fin
        mids = ((lo + hi) / 2).astype(np.float32)  # exact: both are f32 values with few bits
        top = fin[-1]
        ulp = fin[-1] - fin[-2]
        beyond = np.array([top + ulp / 2, top + ulp, top * 2, top + ulp / 4, top + 3 * ulp / 4], dtype=np.float32)
        for group in (chosen.astype(np.float32), mids, beyond):
            for v in f32_neighbours(group):
                parts.append(v)
                parts.append(-v)
    # Uniform random bit patterns (about 0.4% NaN, some infinities/denormals).
    parts.append(rng.integers(0, 1 << 32, size=16000, dtype=np.uint64).astype(np.uint32).view(np.float32))
    # Random values of moderate magnitude, around the 8-bit formats' ranges.
    exp = rng.integers(127 - 40, 127 + 20, size=16000, dtype=np.uint32)
    man = rng.integers(0, 1 << 23, size=16000, dtype=np.uint32)
    sgn = rng.integers(0, 2, size=16000, dtype=np.uint32)
    parts.append(((sgn << 31) | (exp << 23) | man).astype(np.uint32).view(np.float32))
    # f32 denormals and specials.
    parts.append(rng.integers(1, 1 << 23, size=2000, dtype=np.uint32).view(np.float32))
    specials = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
                0xFF800001, 0x7FBFFFFF, 0x7FE12345, 0x7F7FFFFF, 0xFF7FFFFF, 1, 0x80000001,
                0x00800000, 0x80800000]
    parts.append(np.array(specials, dtype=np.uint32).view(np.float32))
    allv = np.concatenate([p.astype(np.float32) for p in parts]).view(np.uint32)
    # Unique bit patterns, in order of first appearance.
    _, first = np.unique(allv, return_index=True)
    return allv[np.sort(first)]


def section(name, arr, size):
    data = arr.astype({1: "<u1", 2: "<u2", 4: "<u4"}[size]).tobytes()
    nb = name.encode()
    return struct.pack("<B", len(nb)) + nb + struct.pack("<IB", len(arr), size) + data


def main():
    root = Path(__file__).resolve().parents[2]
    out = root / "crates/gpu/testdata/float_ref.bin"
    x_bits = inputs()
    x = x_bits.view(np.float32)
    blob = [b"RJFREF1\n", section("inputs", x_bits, 4)]
    with np.errstate(all="ignore"):
        for name, dtype, bits in FORMATS:
            enc = x.astype(dtype)
            store = np.uint16 if bits == 16 else np.uint8
            blob.append(section("enc." + name, enc.view(store), 2 if bits == 16 else 1))
            blob.append(section("dec." + name, decode_all(dtype, bits).view(np.uint32), 4))
    raw = b"".join(blob)
    out.write_bytes(zlib.compress(raw, 9))
    print(f"{out}: {len(x_bits)} inputs, {len(raw)} bytes raw, {out.stat().st_size} compressed",
          file=sys.stderr)


if __name__ == "__main__":
    main()
