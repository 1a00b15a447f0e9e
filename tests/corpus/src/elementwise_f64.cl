// Elementwise double-precision kernels.
#include "ocl.h"

__kernel void daxpy(__global double *y, __global const double *x, double a, int n) {
  int i = GID_X;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

__kernel void f64_math(__global double *o, __global const double *x, __global const float *f, int n) {
  int i = GID_X;
  if (i < n) {
    double v = x[i];
    double r = __builtin_sqrt(__builtin_fabs(v)) + __builtin_amdgcn_rcp(v) + __builtin_amdgcn_rsq(v + 1.0);
    r = __builtin_fma(r, v, (double)f[i]);
    r = __builtin_fmin(r, 1.0e30) + __builtin_floor(v) + __builtin_trunc(v);
    o[i] = r / (v + 3.0);
  }
}

__kernel void f64_convert(__global int *oi, __global float *of, __global double *od, __global const double *x,
                          __global const long *l, int n) {
  int i = GID_X;
  if (i < n) {
    oi[i] = (int)x[i];
    of[i] = (float)x[i];
    od[i] = (double)l[i] + (double)(int)l[i];
  }
}
