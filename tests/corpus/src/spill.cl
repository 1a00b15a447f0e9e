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
    acc += buf[idx[k] & 63];
  out[i] = acc;
}

__attribute__((amdgpu_num_vgpr(24))) __kernel void spill_vgprs(__global float *out, __global const float *in,
                                                              int n) {
  int i = GID_X;
  float v[40];
  for (int k = 0; k < 40; ++k)
    v[k] = in[i + k * n];
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 40; ++k)
      v[k] = v[k] * v[(k + 7) % 40] + v[(k + 13) % 40];
  float s = 0.0f;
  for (int k = 0; k < 40; ++k)
    s += v[k] * (float)(k + 1);
  out[i] = s;
}
