// Kernels for the races plugin: each racy kernel has a twin that orders the
// same accesses (a barrier, an atomic) and must be reported race-free.
#include "hip.h"

#define AGENT __HIP_MEMORY_SCOPE_AGENT

// LDS: every work-item stores into LDS, then reads the slot of the
// work-item one wave further on, which another wave stores.
KERNEL void lds_neighbour_racy(int *out) {
  SHARED int s[256];
  int t = TID_X;
  s[t] = 3 * t + 1;
  out[GID_X] = s[(t + 64) % LSIZE_X];
}

KERNEL void lds_neighbour_sync(int *out) {
  SHARED int s[256];
  int t = TID_X;
  s[t] = 3 * t + 1;
  SYNC();
  out[GID_X] = s[(t + 64) % LSIZE_X];
}

// LDS atomics from every wave, read after a barrier.
KERNEL void lds_atomic_sync(int *out) {
  SHARED int count;
  if (TID_X == 0)
    count = 0;
  SYNC();
  __hip_atomic_fetch_add(&count, 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  SYNC();
  out[GID_X] = count;
}

// Global memory within a workgroup: the same exchange through `buf`.
KERNEL void global_waves_racy(int *buf, int *out) {
  int t = TID_X, base = GROUP_X * LSIZE_X;
  buf[base + t] = 5 * t + 2;
  out[base + t] = buf[base + (t + 64) % LSIZE_X];
}

KERNEL void global_waves_sync(int *buf, int *out) {
  int t = TID_X, base = GROUP_X * LSIZE_X;
  buf[base + t] = 5 * t + 2;
  SYNC();
  out[base + t] = buf[base + (t + 64) % LSIZE_X];
}

// Global memory across workgroups: every workgroup stores to one word...
KERNEL void global_groups_racy(int *word, int *out) {
  if (TID_X == 0)
    word[0] = 7;
  out[GID_X] = TID_X;
}

// ... or adds to it atomically.
KERNEL void global_groups_atomic(int *word, int *out) {
  if (TID_X == 0)
    __hip_atomic_fetch_add(word, 7, __ATOMIC_RELAXED, AGENT);
  out[GID_X] = TID_X;
}
