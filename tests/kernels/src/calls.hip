// Calls beyond inlining: recursion (a dynamic stack), and indirect calls
// through a table of device-function pointers (relocated at load time).
#include "hip.h"

DEVICE __attribute__((noinline)) int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

// Sum of a[lo..hi) by recursive halving.
DEVICE __attribute__((noinline)) long rsum(const int *a, int lo, int hi) {
  if (hi - lo <= 2) {
    long s = 0;
    for (int k = lo; k < hi; ++k)
      s += a[k];
    return s;
  }
  int mid = lo + (hi - lo) / 2;
  return rsum(a, lo, mid) * 3 + rsum(a, mid, hi);
}

KERNEL void recursion(int *ofib, long *osum, const int *a, int n) {
  int i = GID_X;
  ofib[i] = fib(i % 16);
  osum[i] = rsum(a, i, i + n);
}

typedef int (*binop)(int, int);
DEVICE __attribute__((noinline)) int op_add(int x, int y) { return x + y; }
DEVICE __attribute__((noinline)) int op_sub(int x, int y) { return x - y; }
DEVICE __attribute__((noinline)) int op_mul(int x, int y) { return x * y; }
DEVICE __attribute__((noinline)) int op_xor(int x, int y) { return x ^ y; }
__attribute__((device)) binop ops[4] = {op_add, op_sub, op_mul, op_xor};

KERNEL void indirect_calls(int *out, const int *sel, const int *x, const int *y, int n) {
  int i = GID_X;
  if (i < n)
    out[i] = ops[sel[i] & 3](x[i], y[i]);
}
