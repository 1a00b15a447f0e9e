// Elementwise half-precision kernels: scalar and packed (half2) arithmetic.
#include "ocl.h"

__kernel void vadd_f16(__global half *o, __global const half *a, __global const half *b, int n) {
  int i = GID_X;
  if (i < n)
    o[i] = a[i] * b[i] + (half)1.5h;
}

__kernel void pk_fma_f16(__global half2 *o, __global const half2 *a, __global const half2 *b, half2 c, int n) {
  int i = GID_X;
  if (i < n) {
    half2 x = a[i], y = b[i];
    half2 r = x * y + c;
    r = r > (half2)(0.0h) ? r : -r;
    o[i] = r.yx;
  }
}

__kernel void f16_convert(__global float *of, __global half *oh, __global const half *h, __global const float *f,
                          int n) {
  int i = GID_X;
  if (i < n) {
    of[i] = (float)h[i] * 2.0f;
    oh[i] = (half)(f[i] + 1.0f);
  }
}

__kernel void f16_math(__global half *o, __global const half *a, int n) {
  int i = GID_X;
  if (i < n) {
    half x = a[i];
    o[i] = __builtin_sqrtf16(x) + __builtin_fmaf16(x, x, (half)0.25h) - __builtin_fabsf16(x) +
           __builtin_amdgcn_rcph(x) + __builtin_amdgcn_rsqh(x) + __builtin_amdgcn_sinh(x);
  }
}
