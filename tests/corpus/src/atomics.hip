// Atomics: integer and floating-point, on global memory and LDS, with
// returned and discarded results and several scopes.
#include "hip.h"

KERNEL void atomic_int_global(int *counters, unsigned *maxv, unsigned long long *wide, const int *in, int n) {
  int i = GID_X;
  if (i >= n)
    return;
  int v = in[i];
  __hip_atomic_fetch_add(&counters[0], 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  int old = __hip_atomic_fetch_add(&counters[1], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_max(&maxv[0], (unsigned)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_min(&counters[2], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  __hip_atomic_fetch_and(&counters[3], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_or(&counters[4], v, __ATOMIC_SEQ_CST, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_xor(&counters[5], old, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_exchange(&counters[6], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  int expected = v;
  __hip_atomic_compare_exchange_strong(&counters[7], &expected, old, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_AGENT);
  unsigned long long w = __hip_atomic_fetch_add(&wide[0], (unsigned long long)v, __ATOMIC_RELAXED,
                                                __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_max(&wide[1], w, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  maxv[1 + i] = (unsigned)expected + (unsigned)w;
}

KERNEL void atomic_float_global(float *f, double *d, const float *in, int n) {
  int i = GID_X;
  if (i >= n)
    return;
  float v = in[i];
  __hip_atomic_fetch_add(&f[0], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  float old = __hip_atomic_fetch_add(&f[1], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_max(&f[2], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_min(&f[3], old, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_add(&d[0], (double)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_max(&d[1], (double)old, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

KERNEL void atomic_lds(int *out, float *fout, const int *in, int n) {
  SHARED int ibins[64];
  SHARED float fbins[64];
  SHARED double dsum;
  int t = TID_X;
  if (t < 64) {
    ibins[t] = 0;
    fbins[t] = 0.0f;
  }
  if (t == 0)
    dsum = 0.0;
  SYNC();
  int i = GID_X;
  if (i < n) {
    int v = in[i];
    __hip_atomic_fetch_add(&ibins[v & 63], 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
    __hip_atomic_fetch_max(&ibins[(v >> 6) & 63], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
    float old = __hip_atomic_fetch_add(&fbins[v & 63], (float)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
    __hip_atomic_fetch_add(&dsum, (double)old, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
    int e = 0;
    __hip_atomic_compare_exchange_strong(&ibins[t & 63], &e, v, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                         __HIP_MEMORY_SCOPE_WORKGROUP);
  }
  SYNC();
  if (t < 64) {
    out[GROUP_X * 64 + t] = ibins[t];
    fout[GROUP_X * 64 + t] = fbins[t] + (float)dsum;
  }
}
