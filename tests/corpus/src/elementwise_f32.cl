// Elementwise single-precision kernels: saxpy, math builtins, conversions.
#include "ocl.h"

__kernel void saxpy(__global float *y, __global const float *x, float a, int n) {
  int i = GID_X;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__kernel void f32_math(__global float *out, __global const float *in, int n) {
  int i = GID_X;
  if (i >= n)
    return;
  float x = in[i];
  float r = __builtin_sqrtf(__builtin_fabsf(x)) + __builtin_amdgcn_rsqf(x * x + 1.0f);
  r += __builtin_amdgcn_rcpf(x + 2.0f) * __builtin_amdgcn_sinf(x) - __builtin_amdgcn_cosf(x);
  r += __builtin_amdgcn_exp2f(x * 0.5f) + __builtin_amdgcn_logf(__builtin_fabsf(x) + 1.0f);
  r = __builtin_fmaf(r, x, __builtin_amdgcn_fractf(x));
  r = __builtin_fminf(__builtin_fmaxf(r, -4.0f), 1.0e6f);
  r = __builtin_amdgcn_ldexpf(r, __builtin_amdgcn_frexp_expf(x));
  out[i] = __builtin_copysignf(r, x) + __builtin_floorf(x) + __builtin_ceilf(x) + __builtin_truncf(x) +
           __builtin_rintf(x);
}

__kernel void f32_div_select(__global float *out, __global const float *a, __global const float *b, int n) {
  int i = GID_X;
  if (i < n) {
    float q = a[i] / b[i];
    out[i] = (a[i] > b[i]) ? q : (a[i] == b[i] ? 0.5f : -q);
  }
}

__kernel void f32_convert(__global int *oi, __global uint *ou, __global float *of, __global const float *x,
                          __global const int *k, int n) {
  int i = GID_X;
  if (i < n) {
    oi[i] = (int)x[i];
    ou[i] = (uint)(x[i] * 3.0f);
    of[i] = (float)k[i] + (float)(uint)k[i] * 0.25f;
  }
}

__kernel void relu_gelu(__global float4 *out, __global const float4 *in, int n) {
  int i = GID_X;
  if (i < n) {
    float4 v = in[i];
    float4 r = v > 0.0f ? v : 0.0f;
    float4 t = v * (1.0f + 0.044715f * v * v);
    out[i] = r + 0.5f * t;
  }
}
