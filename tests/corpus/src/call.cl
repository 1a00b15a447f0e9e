// Real function calls: non-inlined device functions (s_swappc, stack frames).
#include "ocl.h"

__attribute__((noinline)) float poly(float x, __global const float *coef, int deg) {
  float r = 0.0f;
  for (int k = deg; k >= 0; --k)
    r = r * x + coef[k];
  return r;
}

__attribute__((noinline)) void store_pair(__global float *p, float a, float b, int i) {
  p[2 * i] = a;
  p[2 * i + 1] = b;
}

__attribute__((noinline)) int collatz_steps(int x) {
  int s = 0;
  while (x > 1 && s < 1000) {
    x = (x & 1) ? 3 * x + 1 : x >> 1;
    ++s;
  }
  return s;
}

__kernel void call_poly(__global float *out, __global const float *x, __global const float *coef, int deg) {
  int i = GID_X;
  float a = poly(x[i], coef, deg);
  float b = poly(a, coef, deg - 1);
  store_pair(out, a, b + (float)collatz_steps(i), i);
}
