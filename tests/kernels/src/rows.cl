// Row-wise kernels, one work-group of 256 per row: softmax (LDS max and sum
// trees) and layer normalisation (DPP wave sums, then LDS across waves).
#include "ocl.h"

__kernel void softmax_rows(__global float *out, __global const float *in, int cols) {
  __local float red[256];
  int t = TID_X, row = GROUP_X, nt = LSIZE_X;
  __global const float *x = in + row * cols;
  float m = -3.0e38f;
  for (int c = t; c < cols; c += nt)
    m = __builtin_fmaxf(m, x[c]);
  red[t] = m;
  LDS_BARRIER();
  for (int s = nt / 2; s > 0; s >>= 1) {
    if (t < s)
      red[t] = __builtin_fmaxf(red[t], red[t + s]);
    LDS_BARRIER();
  }
  m = red[0];
  LDS_BARRIER();
  float sum = 0.0f;
  for (int c = t; c < cols; c += nt)
    sum += __builtin_expf(x[c] - m);
  red[t] = sum;
  LDS_BARRIER();
  for (int s = nt / 2; s > 0; s >>= 1) {
    if (t < s)
      red[t] += red[t + s];
    LDS_BARRIER();
  }
  float total = red[0];
  for (int c = t; c < cols; c += nt)
    out[row * cols + c] = __builtin_expf(x[c] - m) / total;
}

#if defined(__GFX9__)
// row_bcast DPP controls: GFX9 only.
static float wave_sum(float v) {
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x111, 0xf, 0xf, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x112, 0xf, 0xf, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x114, 0xf, 0xe, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x118, 0xf, 0xc, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x142, 0xa, 0xf, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x143, 0xc, 0xf, false));
  return AS_FLOAT(__builtin_amdgcn_readlane(AS_INT(v), 63));
}
#endif

#if defined(__GFX9__)
// row_bcast DPP controls: GFX9 only.
__kernel void layernorm(__global float *out, __global const float *in, __global const float *gamma,
                        __global const float *beta, int cols, float eps) {
  __local float part[2][4];
  int t = TID_X, row = GROUP_X, wave = t >> 6;
  __global const float *x = in + row * cols;
  float s = 0.0f, s2 = 0.0f;
  for (int c = t; c < cols; c += 256) {
    float v = x[c];
    s += v;
    s2 += v * v;
  }
  s = wave_sum(s);
  s2 = wave_sum(s2);
  if ((t & 63) == 0) {
    part[0][wave] = s;
    part[1][wave] = s2;
  }
  LDS_BARRIER();
  s = part[0][0] + part[0][1] + part[0][2] + part[0][3];
  s2 = part[1][0] + part[1][1] + part[1][2] + part[1][3];
  float mean = s / cols;
  float rstd = 1.0f / __builtin_sqrtf(s2 / cols - mean * mean + eps);
  for (int c = t; c < cols; c += 256)
    out[row * cols + c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
}
#endif
