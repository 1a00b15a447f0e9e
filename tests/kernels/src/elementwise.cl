// Elementwise kernels: vector add in several types, saxpy/daxpy, byte and
// short loads and stores, float4 loads.
#include "ocl.h"

__kernel void vadd_i32(__global int *o, __global const int *a, __global const int *b, int n) {
  int i = GID_X;
  if (i < n)
    o[i] = a[i] + b[i];
}

__kernel void vadd_i64(__global long *o, __global const long *a, __global const long *b, int n) {
  int i = GID_X;
  if (i < n)
    o[i] = a[i] + b[i];
}

__kernel void vadd_f32(__global float *o, __global const float *a, __global const float *b, int n) {
  int i = GID_X;
  if (i < n)
    o[i] = a[i] + b[i];
}

__kernel void vadd_f64(__global double *o, __global const double *a, __global const double *b, int n) {
  int i = GID_X;
  if (i < n)
    o[i] = a[i] + b[i];
}

__kernel void vadd_f16(__global half *o, __global const half *a, __global const half *b, int n) {
  int i = GID_X;
  if (i < n)
    o[i] = a[i] + b[i];
}

__kernel void saxpy(__global float *y, __global const float *x, float a, int n) {
  int i = GID_X;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__kernel void daxpy(__global double *y, __global const double *x, double a, int n) {
  int i = GID_X;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

// 8- and 16-bit memory: signed/unsigned extension on load, truncation on store.
__kernel void small_ints(__global short *o16, __global uchar *o8, __global char *os8, __global const short *a,
                         __global const uchar *b, __global const char *c, int n) {
  int i = GID_X;
  if (i < n) {
    o16[i] = (short)(a[i] * 3 - (a[i] >> 1));
    o8[i] = (uchar)(b[i] + b[i] / 3) | (uchar)(a[i] & 0x0f);
    os8[i] = (char)(c[i] * 5 + (c[i] >> 2));
  }
}

// float4 loads and stores (dwordx4), with exactly representable arithmetic.
__kernel void vec4_ops(__global float4 *o, __global const float4 *a, __global const float4 *b, int n) {
  int i = GID_X;
  if (i < n) {
    float4 x = a[i], y = b[i];
    float4 r = x > y ? x : y;
    o[i] = (float4)(r.w, r.z + x.x, r.y - y.y, r.x * 2.0f);
  }
}

// uchar4 vectors: byte lanes of a dword.
__kernel void vec_u8(__global uchar4 *o, __global const uchar4 *a, int n) {
  int i = GID_X;
  if (i < n) {
    uchar4 x = a[i];
    o[i] = (uchar4)(x.w, x.z + 1, x.y ^ 0x5a, x.x >> 1);
  }
}

// Half precision: scalar fma (v_fma_f16), division and square root, and
// mixed-precision fma of f16 products into f32 (v_fma_mix_f32 / v_mad_mix).
__kernel void f16_math(__global half *ofma, __global half *odiv, __global half *osqrt, __global float *omix,
                       __global const half *a, __global const half *b, __global const half *c,
                       __global const float *f, int n) {
  int i = GID_X;
  if (i < n) {
    ofma[i] = __builtin_fmaf16(a[i], b[i], c[i]);
    odiv[i] = a[i] / b[i];
    osqrt[i] = __builtin_sqrtf16(__builtin_fabsf16(a[i]));
    omix[i] = __builtin_fmaf((float)a[i], (float)b[i], f[i]);
  }
}
