// corpus-flags: -O0
// Unoptimised mixed-precision arithmetic (-O0).
#include "ocl.h"

__kernel void o0_mixed(__global double *od, __global half *oh, __global const float *f, __global const long *l,
                       int n) {
  int i = GID_X;
  if (i < n) {
    double d = (double)f[i] * 1.5 + (double)l[i];
    od[i] = d / 3.0;
    oh[i] = (half)(f[i] * 0.5f);
  }
}

__kernel void o0_switch(__global int *o, __global const int *k, int n) {
  int i = GID_X;
  if (i < n) {
    int r;
    switch (k[i] & 7) {
    case 0: r = 10; break;
    case 1: r = k[i] * 3; break;
    case 2: r = k[i] >> 2; break;
    case 5: r = -k[i]; break;
    default: r = 0;
    }
    o[i] = r;
  }
}
