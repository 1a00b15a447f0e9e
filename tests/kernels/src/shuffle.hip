// Butterfly all-reduce of a wave with __shfl_xor-style exchanges (ds_bpermute),
// and a wave maximum with __shfl_down-style exchanges.
#include "hip.h"
#include "kern.h"

DEVICE static float shfl_xor(float v, int mask) {
  int lane = LANE_ID;
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane ^ mask) << 2, __builtin_bit_cast(int, v)));
}

DEVICE static int shfl_down(int v, int delta) {
  int lane = LANE_ID;
  int src = lane + delta < 64 ? lane + delta : lane;
  return __builtin_amdgcn_ds_bpermute(src << 2, v);
}

KERNEL void wave_allreduce(float *out, int *omax, const float *in, const int *k) {
  float v = in[GID_X];
  for (int mask = 32; mask > 0; mask >>= 1)
    v += shfl_xor(v, mask);
  out[GID_X] = v;
  int m = k[GID_X];
  for (int d = 32; d > 0; d >>= 1) {
    int o = shfl_down(m, d);
    m = o > m ? o : m;
  }
  if (LANE_ID == 0)
    omax[GID_X >> 6] = m;
}
