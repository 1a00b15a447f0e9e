// corpus-flags: -O2 -cl-fp32-correctly-rounded-divide-sqrt
// Floating-point math: f64 sqrt/fma/div, correctly rounded f32 div/sqrt,
// transcendental f32 builtins, conversions, compares and selects.
#include "ocl.h"

__kernel void f64_math(__global double *osqrt, __global double *ofma, __global double *odiv,
                       __global const double *a, __global const double *b, __global const double *c, int n) {
  int i = GID_X;
  if (i < n) {
    osqrt[i] = __builtin_sqrt(a[i]);
    ofma[i] = __builtin_fma(a[i], b[i], c[i]);
    odiv[i] = a[i] / b[i];
  }
}

__kernel void f32_divsqrt(__global float *odiv, __global float *osqrt, __global float *ofma, __global const float *a,
                          __global const float *b, __global const float *c, int n) {
  int i = GID_X;
  if (i < n) {
    odiv[i] = a[i] / b[i];
    osqrt[i] = __builtin_sqrtf(a[i]);
    ofma[i] = __builtin_fmaf(a[i], b[i], c[i]);
  }
}

__kernel void f32_transcendental(__global float *oexp, __global float *olog, __global float *osin,
                                 __global float *ocos, __global float *oexp2, __global float *olog2,
                                 __global const float *x, int n) {
  int i = GID_X;
  if (i < n) {
    float v = x[i];
    oexp[i] = __builtin_expf(v);
    olog[i] = __builtin_logf(__builtin_fabsf(v) + 0.5f);
    osin[i] = __builtin_sinf(v);
    ocos[i] = __builtin_cosf(v);
    oexp2[i] = __builtin_exp2f(v);
    olog2[i] = __builtin_log2f(__builtin_fabsf(v) + 0.5f);
  }
}

__kernel void conversions(__global half *of16, __global int *oi32, __global uint *ou32, __global float *ofi,
                          __global float *ofu, __global float *of64, __global double *od, __global float *ofh,
                          __global const float *x, __global const int *k, __global const double *d,
                          __global const half *h, int n) {
  int i = GID_X;
  if (i < n) {
    float v = x[i];
    of16[i] = (half)v;
    oi32[i] = (int)v;
    ou32[i] = (uint)__builtin_fabsf(v);
    ofi[i] = (float)k[i];
    ofu[i] = (float)(uint)k[i];
    of64[i] = (float)d[i];
    od[i] = (double)v;
    ofh[i] = (float)h[i];
  }
}

__kernel void compare_select(__global int *omask, __global float *osel, __global float *ominmax,
                             __global const float *a, __global const float *b, int n) {
  int i = GID_X;
  if (i < n) {
    float x = a[i], y = b[i];
    int m = (x < y) | (x <= y) << 1 | (x == y) << 2 | (x != y) << 3 | (x > y) << 4 | (x >= y) << 5 |
            (x != x) << 6 | __builtin_isinf(x) << 7;
    omask[i] = m;
    osel[i] = x < y ? x - y : (x == y ? 0.5f : y);
    ominmax[i] = __builtin_fminf(x, y) + __builtin_fmaxf(x, 1.0f);
  }
}

// Edges of the number formats: float-to-int conversions out of range and of
// NaN (v_cvt_i32_f32 / v_cvt_u32_f32 saturate, NaN gives 0), f16 and f32
// overflow and underflow on conversion, denormal arithmetic.
__kernel void float_edges(__global int *oi, __global uint *ou, __global half *oh, __global float *of,
                          __global float *omul, __global float *oadd, __global float *odiv,
                          __global const float *x, __global const double *d, __global const float *y, int n) {
  int i = GID_X;
  if (i < n) {
    oi[i] = (int)x[i];
    ou[i] = (uint)x[i];
    oh[i] = (half)x[i];
    of[i] = (float)d[i];
    omul[i] = x[i] * y[i];
    oadd[i] = x[i] + y[i];
    odiv[i] = x[i] / y[i];
  }
}
