// Kernels that use scratch memory: a dynamically indexed private array, and
// register pressure beyond a small VGPR budget (forcing spills).
#include "ocl.h"

__kernel void private_array(__global float *out, __global const int *idx, __global const float *in, int n) {
  float buf[64];
  int i = GID_X;
  for (int k = 0; k < 64; ++k)
    buf[k] = in[i * 64 + k] * (float)k;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k)
    acc += buf[idx[i * n + k] & 63];
  out[i] = acc;
}

// 96 live values against a 64-VGPR budget (8 waves per SIMD): VGPR spills
// to scratch.
__attribute__((amdgpu_waves_per_eu(8, 8))) __kernel void spill_vgprs(__global float *out, __global const float *in,
                                                                     int n) {
  int i = GID_X;
  float v[96];
#pragma unroll
  for (int k = 0; k < 96; ++k)
    v[k] = in[i + k * n];
#pragma unroll
  for (int r = 0; r < 3; ++r) {
#pragma unroll
    for (int k = 0; k < 96; ++k)
      v[k] = __builtin_fmaf(v[k], v[(k * 7 + 5) % 96], v[(k * 13 + r) % 96]);
  }
#pragma unroll
  for (int k = 0; k < 96; ++k)
    out[i + k * n] = v[k] * v[95 - k];
}
