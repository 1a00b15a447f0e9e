// corpus-flags: -O0
// Unoptimised code (-O0): stack traffic through scratch, no scheduling.
#include "ocl.h"

typedef struct {
  float x, y, z;
  int id;
} particle;

__kernel void o0_saxpy(__global float *y, __global const float *x, float a, int n) {
  int i = GID_X;
  if (i < n)
    y[i] = a * x[i] + y[i];
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
  out[GID_X] = s;
}

__kernel void o0_lds(__global float *out, __global const float *in) {
  __local float t[64];
  int i = TID_X;
  t[i] = in[GID_X];
  LDS_BARRIER();
  out[GID_X] = t[63 - i] + t[i];
}
