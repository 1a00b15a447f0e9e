// Row softmax with one work-group per row: max and sum reductions in LDS.
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
    sum += __builtin_amdgcn_exp2f((x[c] - m) * 1.4426950408889634f);
  red[t] = sum;
  LDS_BARRIER();
  for (int s = nt / 2; s > 0; s >>= 1) {
    if (t < s)
      red[t] += red[t + s];
    LDS_BARRIER();
  }
  float inv = __builtin_amdgcn_rcpf(red[0]);
  for (int c = t; c < cols; c += nt)
    out[row * cols + c] = __builtin_amdgcn_exp2f((x[c] - m) * 1.4426950408889634f) * inv;
}
