// corpus-flags: -O2 -fno-inline
// Real function calls (s_swappc_b64, stack frames in scratch): no inlining.
#include "ocl.h"

__attribute__((noinline)) float poly(float x, __global const float *coef, int deg) {
  float r = 0.0f;
  for (int k = deg; k >= 0; --k)
    r = __builtin_fmaf(r, x, coef[k]);
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

// A by-value struct argument and a recursive-looking chain of calls.
typedef struct {
  int lo, hi;
} range;

__attribute__((noinline)) int clampi(int v, range r) { return v < r.lo ? r.lo : (v > r.hi ? r.hi : v); }

__kernel void call_poly(__global float *out, __global int *osteps, __global const float *x,
                        __global const float *coef, int deg) {
  int i = GID_X;
  float a = poly(x[i], coef, deg);
  float b = poly(a, coef, deg - 1);
  store_pair(out, a, b, i);
  range r = {3, 40};
  osteps[i] = clampi(collatz_steps(i + 1), r);
}
