// corpus-flags: -O2 -mllvm -amdgpu-atomic-optimizer-strategy=DPP
// LLVM's atomic optimizer in its DPP strategy: an atomic on one address
// becomes a wave-wide scan in whole-wave mode (v_set_inactive, DPP
// row_shr/row_bcast:15/row_bcast:31 or wave_shr:1, v_readlane_b32 of lane
// 63, v_writelane_b32 of the lanes 16/32/48 across the wave's rows) and one
// atomic from the first active lane, whose old value each lane combines with
// its exclusive prefix. The returned values expose every step of the scan.
#include "hip.h"

#define AGENT __HIP_MEMORY_SCOPE_AGENT

// c: [0] add (olds in oadd), [1] max (olds in omax), [2] min, [3] sub
// (olds in osub), [4] and, [5] or, [6] xor. Lanes with in[i] % 5 == 0 skip
// everything, so EXEC is partial inside the scan.
KERNEL void atomicopt_i32(int *c, int *oadd, int *omax, int *osub, const int *in, int n) {
  int i = GID_X;
  if (i >= n)
    return;
  int v = in[i];
  if (v % 5 == 0)
    return;
  oadd[i] = __hip_atomic_fetch_add(&c[0], v, __ATOMIC_RELAXED, AGENT);
  omax[i] = __hip_atomic_fetch_max(&c[1], v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_min(&c[2], v, __ATOMIC_RELAXED, AGENT);
  osub[i] = __hip_atomic_fetch_sub(&c[3], v, __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_and(&c[4], v | ~(1 << (i & 31)), __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_or(&c[5], 1 << (v & 31), __ATOMIC_RELAXED, AGENT);
  __hip_atomic_fetch_xor(&c[6], v, __ATOMIC_RELAXED, AGENT);
}

// 64-bit add with the olds returned: the scan of 64-bit values (pairs of
// DPP moves with carries).
KERNEL void atomicopt_u64(unsigned long long *c, unsigned long long *oadd, const unsigned long long *in, int n) {
  int i = GID_X;
  if (i >= n)
    return;
  oadd[i] = __hip_atomic_fetch_add(&c[0], in[i], __ATOMIC_RELAXED, AGENT);
}
