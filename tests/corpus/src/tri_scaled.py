"""Triton block-scaled GEMMs (tl.dot_scaled: MX fp8/fp4 with e8m0 scales),
which use the scaled MFMAs on gfx950 and are emulated elsewhere, and an fp64
GEMM (v_mfma_f64)."""

import triton
import triton.language as tl


@triton.jit
def dot_scaled_kernel(a, b, sa, sb, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      FMT: tl.constexpr):
    # fp4 (e2m1) packs two values per byte along K.
    PACK: tl.constexpr = 2 if FMT == "e2m1" else 1
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rka = tl.arange(0, BK // PACK)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * (K // PACK) + (k // PACK + rka)[None, :])
        y = tl.load(b + (k // PACK + rka)[:, None] * BN + rn[None, :])
        xs = tl.load(sa + rm[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        ys = tl.load(sb + rn[:, None] * (K // 32) + (k // 32 + rs)[None, :])
        acc = tl.dot_scaled(x, xs, FMT, y, ys, FMT, acc)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(c.dtype.element_ty))


@triton.jit
def matmul_f64_kernel(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float64)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)


def _scaled(elem, out):
    return {"a": "*" + elem, "b": "*" + elem, "sa": "*u8", "sb": "*u8", "c": "*" + out, "K": "i32",
            "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "FMT": "constexpr"}


CORPUS = [
    dict(name="mxfp8_e4m3", fn=dot_scaled_kernel, signature=_scaled("fp8e4nv", "fp32"),
         constexprs={"BM": 64, "BN": 64, "BK": 128, "FMT": "e4m3"}),
    dict(name="mxfp8_e5m2", fn=dot_scaled_kernel, signature=_scaled("fp8e5", "bf16"),
         constexprs={"BM": 32, "BN": 32, "BK": 64, "FMT": "e5m2"}),
    dict(name="mxfp4", fn=dot_scaled_kernel, signature=_scaled("u8", "fp16"),
         constexprs={"BM": 64, "BN": 64, "BK": 128, "FMT": "e2m1"}),
    dict(name="matmul_f64", fn=matmul_f64_kernel,
         signature={"a": "*fp64", "b": "*fp64", "c": "*fp64", "K": "i32", "BM": "constexpr", "BN": "constexpr",
                    "BK": "constexpr"},
         constexprs={"BM": 32, "BN": 32, "BK": 16}),
]
