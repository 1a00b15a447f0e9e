// Rounding modes: the kernel writes MODE.FP_ROUND (hwreg MODE bits 3:0:
// f32 in 1:0, f64/f16 in 3:2; 0 nearest even, 1 +inf, 2 -inf, 3 zero) with
// s_setreg_b32, then adds and multiplies.
#include "ocl.h"

// hwreg(HW_REG_MODE, 0, 4): id 1, offset 0, size 4 -> 1 | 0 << 6 | 3 << 11.
#define HWREG_MODE_ROUND 0x1801

__kernel void round_modes(__global float *oadd, __global float *omul, __global double *odadd,
                          __global const float *a, __global const float *b, __global const double *c,
                          __global const double *d, int mode, int n) {
  __builtin_amdgcn_s_setreg(HWREG_MODE_ROUND, __builtin_amdgcn_readfirstlane(mode | (mode << 2)));
  int i = GID_X;
  if (i < n) {
    oadd[i] = a[i] + b[i];
    omul[i] = a[i] * b[i];
    odadd[i] = c[i] + d[i];
  }
}
