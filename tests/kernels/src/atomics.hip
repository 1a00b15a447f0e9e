// Global atomics of every kind. Returned old values are only stored where
// their multiset does not depend on the order the hardware applies them in.
#include "hip.h"

#define AGENT __HIP_MEMORY_SCOPE_AGENT

// c: [0] add 1 (olds returned), [1] add v, [2] min, [3] max, [4] umin,
// [5] umax, [6] and, [7] or, [8] xor, [9] cmpxchg-loop increment (olds
// returned), [10] exchange (olds returned), [11] inc-wrap, [12] sub.
KERNEL void atomics_i32(int *c, int *oadd, int *ocas, int *oxchg, const int *in, int n) {
  int i = GID_X;
  if (i >= n)
    return;
  int v = in[i];
  oadd[i] = __hip_atomic_fetch_add(&c[0], 1, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_add(&c[1], v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_min(&c[2], v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_max(&c[3], v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_min((unsigned *)&c[4], (unsigned)v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_max((unsigned *)&c[5], (unsigned)v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_and(&c[6], v | ~(1 << (i & 31)), __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_or(&c[7], 1 << (v & 31), __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_xor(&c[8], v, __ATOMIC_RELAXED, AGENT);
  int old = __hip_atomic_load(&c[9], __ATOMIC_RELAXED, AGENT);
  while (!__hip_atomic_compare_exchange_weak(&c[9], &old, old + 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED, AGENT)) {
  }
  ocas[i] = old;
  oxchg[i] = __hip_atomic_exchange(&c[10], v, __ATOMIC_RELAXED, AGENT);
  __builtin_amdgcn_atomic_inc32((unsigned *)&c[11], 99u, __ATOMIC_RELAXED, "agent");
  __hip_atomic_fetch_sub(&c[12], v, __ATOMIC_RELAXED, AGENT);
}

// 64-bit: [0] add (olds returned), [1] max, [2] min, [3] xor, [4] cmpxchg once.
KERNEL void atomics_u64(unsigned long long *c, unsigned long long *oadd, int *owon, const unsigned long long *in,
                        int n) {
  int i = GID_X;
  if (i >= n)
    return;
  unsigned long long v = in[i];
  oadd[i] = __hip_atomic_fetch_add(&c[0], 1ull << 33, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_max(&c[1], v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_min(&c[2], v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_xor(&c[3], v, __ATOMIC_RELAXED, AGENT);
  unsigned long long expected = 0;
  owon[i] = __hip_atomic_compare_exchange_strong(&c[4], &expected, v, __ATOMIC_RELAXED, __ATOMIC_RELAXED, AGENT);
}

// Float atomics. Every addend is a multiple of 1/8 and all partial sums stay
// below 2^20, so every intermediate sum is exact in f32 and the result does
// not depend on the order. f[0] += 1.0 returns distinct olds 0..n-1.
KERNEL void atomics_f32(float *f, float *oold, double *d, const float *in, int n) {
  int i = GID_X;
  if (i >= n)
    return;
  float v = in[i];
  __hip_atomic_fetch_add(&f[1], v, __ATOMIC_RELAXED, AGENT);
  oold[i] = __hip_atomic_fetch_add(&f[0], 1.0f, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_max(&f[2], v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_min(&f[3], v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_add(&d[0], (double)v, __ATOMIC_RELAXED, AGENT);
}

// Same with unsafe-fp-atomics lowering (hardware float atomics without CAS loops).
KERNEL void atomics_f32_hw(float *f, const float *in, int n) {
  typedef __attribute__((address_space(1))) float gfloat;
  int i = GID_X;
  if (i < n) {
#if defined(__gfx908__)
    // gfx908 has the no-return form only (no atomic-fadd-rtn-insts): the
    // unused result and the attribute select global_atomic_add_f32.
    [[clang::atomic(no_remote_memory, no_fine_grained_memory, ignore_denormal_mode)]] {
      __hip_atomic_fetch_add(&f[i & 7], in[i], __ATOMIC_RELAXED, AGENT);
    }
#elif defined(__gfx1010__) || defined(__gfx1030__)
    // GFX10 has no global float add (gfx1030's float atomics are min and
    // max): the compiler's compare-and-swap loop.
    __hip_atomic_fetch_add(&f[i & 7], in[i], __ATOMIC_RELAXED, AGENT);
#else
    __builtin_amdgcn_global_atomic_fadd_f32((gfloat *)&f[i & 7], in[i]);
#endif
  }
}

// LDS atomics: per-group bins, then the group's bins written out.
KERNEL void atomics_lds(int *out, float *fout, const int *in, int n) {
  SHARED int ibins[64];
  SHARED int imax[64];
  SHARED float fbins[64];
  int t = TID_X;
  if (t < 64) {
    ibins[t] = 0;
    imax[t] = -1;
    fbins[t] = 0.0f;
  }
  SYNC();
  int i = GID_X;
  if (i < n) {
    int v = in[i];
    __hip_atomic_fetch_add(&ibins[v & 63], 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
    __hip_atomic_fetch_max(&imax[(v >> 6) & 63], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
    __hip_atomic_fetch_add(&fbins[v & 63], (float)(v & 7) * 0.5f, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  }
  SYNC();
  if (t < 64) {
    out[GROUP_X * 128 + t] = ibins[t];
    out[GROUP_X * 128 + 64 + t] = imax[t];
    fout[GROUP_X * 64 + t] = fbins[t];
  }
}

// f64 atomics on global memory (add, max, min) and LDS (add), with exactly
// summable values as above.
KERNEL void atomics_f64(double *d, double *ogroup, const double *in, int n) {
  SHARED double gsum;
  if (TID_X == 0)
    gsum = 0.0;
  SYNC();
  int i = GID_X;
  if (i < n) {
    double v = in[i];
    __hip_atomic_fetch_add(&d[0], v, __ATOMIC_RELAXED, AGENT);
    __hip_atomic_fetch_max(&d[1], v, __ATOMIC_RELAXED, AGENT);
    __hip_atomic_fetch_min(&d[2], v, __ATOMIC_RELAXED, AGENT);
    __hip_atomic_fetch_add(&gsum, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  }
  SYNC();
  if (TID_X == 0)
    ogroup[GROUP_X] = gsum;
}
