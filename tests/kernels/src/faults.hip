// Kernels that must fault: the emulator reports them as GPU faults (exit
// status 2 of run-kernel) instead of crashing or returning data.
#include "hip.h"

KERNEL void null_store(int *p, int n) { p[GID_X] = n; }

KERNEL void far_load(int *out, const int *in, long far) { out[GID_X] = in[far + GID_X]; }

KERNEL void trap(int *out, const int *in) {
  if (in[GID_X] == 7)
    __builtin_trap();
  out[GID_X] = in[GID_X];
}

KERNEL void spin_forever(int *out, const volatile int *flag) {
  while (*flag == 0) {
  }
  out[GID_X] = 1;
}
