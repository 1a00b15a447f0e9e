"""Triton GEMM benchmarks: 1024^3 fp16 on gfx942 and fp8 (OCP e4m3) on
gfx950 with 64x64 tiles (256 workgroups), the corpus's matmul kernel."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "corpus" / "src"))

from tri_matmul import _mm, _tiles, matmul_kernel  # noqa: E402

CORPUS = [
    dict(name="gemm_f16", fn=matmul_kernel, signature=_mm("fp16", "fp16"), constexprs=_tiles(64, 64, 32),
         options={"num_warps": 4}),
    dict(name="gemm_fp8", fn=matmul_kernel, signature=_mm("fp8e4nv", "bf16"), constexprs=_tiles(64, 64, 64),
         options={"num_warps": 4}, targets=("gfx950",)),
]
