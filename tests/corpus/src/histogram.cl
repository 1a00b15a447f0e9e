// 256-bin histogram: per-group LDS atomics, then global atomics.
#include "ocl.h"

__kernel void histogram256(__global uint *bins, __global const uchar *data, int n) {
  __local uint local_bins[256];
  int t = TID_X;
  local_bins[t] = 0;
  LDS_BARRIER();
  for (int i = GID_X; i < n; i += LSIZE_X * 1024)
    __atomic_fetch_add(&local_bins[data[i]], 1u, __ATOMIC_RELAXED);
  LDS_BARRIER();
  uint c = local_bins[t];
  if (c)
    __atomic_fetch_add(&bins[t], c, __ATOMIC_RELAXED);
}
