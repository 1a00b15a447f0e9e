// Inclusive prefix sums: LDS Hillis-Steele scan and a wave-level DPP scan.
#include "ocl.h"

__kernel void scan_lds(__global int *out, __global const int *in, int n) {
  __local int buf[2][256];
  int t = TID_X, i = GID_X;
  int p = 0;
  buf[0][t] = i < n ? in[i] : 0;
  LDS_BARRIER();
  for (int off = 1; off < 256; off <<= 1) {
    int v = buf[p][t];
    if (t >= off)
      v += buf[p][t - off];
    buf[p ^ 1][t] = v;
    p ^= 1;
    LDS_BARRIER();
  }
  if (i < n)
    out[i] = buf[p][t];
}

__kernel void scan_wave(__global float *out, __global const float *in) {
  float v = in[GID_X];
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x111, 0xf, 0xf, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x112, 0xf, 0xf, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x113, 0xf, 0xf, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x114, 0xf, 0xe, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), 0x118, 0xf, 0xc, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), DPP_ROW_BCAST15, 0xa, 0xf, false));
  v += AS_FLOAT(__builtin_amdgcn_update_dpp(0, AS_INT(v), DPP_ROW_BCAST31, 0xc, 0xf, false));
  out[GID_X] = v;
}
