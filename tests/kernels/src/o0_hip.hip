// corpus-flags: -O0
// Unoptimised HIP code (-O0) with a device-function call and atomics.
#include "hip.h"

DEVICE float o0_clamp(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

KERNEL void o0_clamp_atomic(float *out, int *count, const float *in, int n) {
  int i = GID_X;
  if (i < n) {
    float v = o0_clamp(in[i], -1.0f, 1.0f);
    out[i] = v;
    if (v == 1.0f)
      __hip_atomic_fetch_add(count, 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
}
