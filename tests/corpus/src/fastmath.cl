// corpus-flags: -O3 -cl-fast-relaxed-math
// Relaxed floating-point math (-cl-fast-relaxed-math): divisions and square
// roots become v_rcp/v_rsq, contractions become FMAs.
#include "ocl.h"

__kernel void normalize3(__global float *out, __global const float *in, int n) {
  int i = GID_X;
  if (i < n) {
    float x = in[3 * i], y = in[3 * i + 1], z = in[3 * i + 2];
    float inv = 1.0f / __builtin_sqrtf(x * x + y * y + z * z);
    out[3 * i] = x * inv;
    out[3 * i + 1] = y * inv;
    out[3 * i + 2] = z * inv;
  }
}

__kernel void sigmoid_h(__global half *out, __global const half *in, __global const double *d, __global double *od,
                        int n) {
  int i = GID_X;
  if (i < n) {
    float v = (float)in[i];
    out[i] = (half)(1.0f / (1.0f + __builtin_amdgcn_exp2f(-v * 1.442695f)));
    od[i] = d[i] / (d[i] + 1.0) + __builtin_sqrt(d[i]);
  }
}

__kernel void pairwise_dist(__global float *out, __global const float2 *p, int n) {
  int i = GID_X;
  float2 a = p[i];
  float acc = 0.0f;
  for (int j = 0; j < n; ++j) {
    float2 b = p[j];
    float dx = a.x - b.x, dy = a.y - b.y;
    acc += 1.0f / (dx * dx + dy * dy + 1e-3f);
  }
  out[i] = acc;
}
