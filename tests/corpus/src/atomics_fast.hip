// corpus-flags: -O2 -munsafe-fp-atomics
// Floating-point atomics compiled to native instructions (no CAS loops):
// global, flat and LDS, f32/f64 and packed f16/bf16.
#include "hip.h"

typedef _Float16 v2h __attribute__((ext_vector_type(2)));
typedef short v2s __attribute__((ext_vector_type(2)));

KERNEL void fp_atomics_native(float *f, double *d, v2h *h, const float *in, int n) {
  int i = GID_X;
  if (i >= n)
    return;
  float v = in[i];
  __hip_atomic_fetch_add(&f[i & 15], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  float old = __hip_atomic_fetch_add(&f[16], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_add(&d[i & 7], (double)old, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_min(&d[8], (double)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_max(&d[9], (double)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
#if defined(__GFX9__) && !defined(__gfx908__)
  v2h p = {(_Float16)v, (_Float16)old};
  __builtin_amdgcn_global_atomic_fadd_v2f16((__attribute__((address_space(1))) v2h *)h, p);
#endif
}

KERNEL void fp_atomics_flat(float *f, double *d, int n) {
  // Generic (flat) pointers: the compiler cannot tell global from LDS.
  SHARED float lf[64];
  float *p = (GID_X & 1) ? f : lf;
  __hip_atomic_fetch_add(p + (TID_X & 63), 1.0f, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_add(d + (TID_X & 7), 2.0, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  SYNC();
  f[64 + GID_X] = lf[TID_X & 63] + (float)n;
}

KERNEL void fp_atomics_lds(float *out, const float *in) {
  SHARED float lf[64];
  SHARED double ld[8];
  int t = TID_X;
  if (t < 64)
    lf[t] = 0.0f;
  if (t < 8)
    ld[t] = 0.0;
  SYNC();
  float v = in[GID_X];
  __hip_atomic_fetch_add(&lf[t & 63], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_min(&lf[(t + 1) & 63], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  double o = __hip_atomic_fetch_add(&ld[t & 7], (double)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  SYNC();
  out[GID_X] = lf[t & 63] + (float)o;
}
