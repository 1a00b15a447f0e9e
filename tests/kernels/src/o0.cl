// corpus-flags: -O0
// Unoptimised code (-O0): every variable lives in scratch.
#include "ocl.h"

typedef struct {
  float x, y, z;
  int id;
} particle;

__kernel void o0_saxpy(__global float *y, __global const float *x, float a, int n) {
  int i = GID_X;
  if (i < n)
    y[i] = __builtin_fmaf(a, x[i], y[i]);
}

__kernel void o0_particles(__global particle *p, float dt, int n) {
  int i = GID_X;
  if (i < n) {
    particle q = p[i];
    q.x += dt * q.y;
    q.y -= dt * q.z;
    q.id += 1;
    p[i] = q;
  }
}

__kernel void o0_loop_sum(__global int *out, __global const int *in, int n) {
  int s = 0;
  for (int k = 0; k < n; ++k) {
    if (in[k] & 1)
      s += in[k];
    else
      s -= in[k] >> 1;
  }
  out[GID_X] = s + GID_X;
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

__kernel void o0_lds(__global float *out, __global const float *in) {
  __local float t[64];
  int i = TID_X;
  t[i] = in[GID_X];
  LDS_BARRIER();
  out[GID_X] = t[63 - i] + t[i];
}
