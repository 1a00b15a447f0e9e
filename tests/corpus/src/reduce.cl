// Reductions: LDS tree reduction and cross-lane reductions (DPP, ds_swizzle,
// ds_bpermute, readlane).
#include "ocl.h"

__kernel void reduce_lds(__global float *out, __global const float *in, int n) {
  __local float tile[256];
  int t = TID_X;
  int i = GID_X;
  tile[t] = i < n ? in[i] : 0.0f;
  LDS_BARRIER();
  for (int s = 128; s > 0; s >>= 1) {
    if (t < s)
      tile[t] += tile[t + s];
    LDS_BARRIER();
  }
  if (t == 0)
    out[GROUP_X] = tile[0];
}

// DPP controls: row_shr:1 = 0x111, row_shr:2 = 0x112, row_shr:4 = 0x114,
// row_shr:8 = 0x118, then the row broadcasts of ocl.h.
__kernel void reduce_dpp(__global int *out, __global const int *in) {
  int v = in[GID_X];
  v += __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x112, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x114, 0xf, 0xe, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x118, 0xf, 0xc, false);
  v += __builtin_amdgcn_update_dpp(0, v, DPP_ROW_BCAST15, 0xa, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, DPP_ROW_BCAST31, 0xc, 0xf, false);
  out[GROUP_X] = __builtin_amdgcn_readlane(v, 63);
}

__kernel void reduce_mov_dpp(__global float *out, __global const float *in) {
  float v = in[GID_X];
  for (int k = 0; k < 4; ++k) {
    int b = __builtin_amdgcn_mov_dpp(AS_INT(v), 0x1b, 0xf, 0xf, true); // quad_perm:[3,2,1,0]
    v += AS_FLOAT(b);
    b = __builtin_amdgcn_mov_dpp(AS_INT(v), DPP_WAVE_SHL1, 0xf, 0xf, false);
    v = __builtin_fmaxf(v, AS_FLOAT(b));
  }
  if (TID_X == 0)
    out[GROUP_X] = v;
}

// ds_swizzle offsets: 0x041f = xor 1 within groups of 32, 0x081f = xor 2, ...
__kernel void reduce_swizzle(__global int *out, __global const int *in) {
  int v = in[GID_X];
  v += __builtin_amdgcn_ds_swizzle(v, 0x041f);
  v += __builtin_amdgcn_ds_swizzle(v, 0x081f);
  v += __builtin_amdgcn_ds_swizzle(v, 0x101f);
  v += __builtin_amdgcn_ds_swizzle(v, 0x201f);
  v += __builtin_amdgcn_ds_swizzle(v, 0x401f);
  v += __builtin_amdgcn_ds_swizzle(v, 0x8055); // quad mode
  out[GID_X] = v + __builtin_amdgcn_readfirstlane(v);
}

__kernel void reduce_bpermute(__global float *out, __global const float *in) {
  float v = in[GID_X];
  int lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  for (int off = 32; off > 0; off >>= 1) {
    int src = ((lane + off) & 63) << 2;
    v += AS_FLOAT(__builtin_amdgcn_ds_bpermute(src, AS_INT(v)));
  }
  int p = __builtin_amdgcn_ds_permute(lane << 2, AS_INT(v));
  out[GID_X] = AS_FLOAT(p);
}

__kernel void ballot_vote(__global ulong *out, __global const int *in, int n) {
  int i = GID_X;
  bool pred = i < n && in[i] > 0;
  ulong mask = __builtin_amdgcn_ballot_w64(pred);
  uint lo = (uint)mask, hi = (uint)(mask >> 32);
  int before = __builtin_amdgcn_mbcnt_hi(hi, __builtin_amdgcn_mbcnt_lo(lo, 0u));
  if (pred)
    out[i] = mask + (ulong)before + (ulong)__builtin_amdgcn_readlane(i, 5);
}
