// Reductions and scans: LDS tree reduction with barriers, DPP and ds_swizzle
// cross-lane reductions, LDS and DPP inclusive scans.
#include "ocl.h"
#include "kern.h"

// One partial sum per work-group of 256: the pairwise tree of LDS halves.
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

// Wave sum with DPP: row_shr:1,2,4,8 sums each row of 16 into its lane 15,
// row_bcast:15 and row_bcast:31 carry the row totals up, lane 63 holds the
// total. DPP controls: row_shr:k = 0x110+k, row_bcast:15 = 0x142,
// row_bcast:31 = 0x143.
#if defined(__GFX9__)
// row_bcast DPP controls: GFX9 only.
__kernel void reduce_dpp(__global int *out, __global const int *in) {
  int v = in[GID_X];
  v += __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x112, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x114, 0xf, 0xe, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x118, 0xf, 0xc, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x142, 0xa, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x143, 0xc, 0xf, false);
  // readlane before the branch: inside it, lane 63 is inactive.
  int total = __builtin_amdgcn_readlane(v, 63);
  if ((TID_X & 63) == 0)
    out[GID_X >> 6] = total;
}
#endif

// ds_swizzle in bit-mask mode (offset = xor_mask << 10 | or_mask << 5 |
// and_mask): xor 1, 2, 4, 8, 16 within each 32 lanes gives every lane the
// sum of its half-wave. Quad-perm mode (0x8000 | four 2-bit selects, lane 0's
// first): 0x801b reverses each quad.
__kernel void reduce_swizzle(__global int *out, __global int *oquad, __global const int *in) {
  int v = in[GID_X];
  int q = __builtin_amdgcn_ds_swizzle(v, 0x801b);
  v += __builtin_amdgcn_ds_swizzle(v, 0x041f);
  v += __builtin_amdgcn_ds_swizzle(v, 0x081f);
  v += __builtin_amdgcn_ds_swizzle(v, 0x101f);
  v += __builtin_amdgcn_ds_swizzle(v, 0x201f);
  v += __builtin_amdgcn_ds_swizzle(v, 0x401f);
  out[GID_X] = v + __builtin_amdgcn_readfirstlane(v);
  oquad[GID_X] = q;
}

// Inclusive scan of each block of 256 (Hillis-Steele, double-buffered in LDS).
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

// Inclusive scan of each wave with DPP: row_shr:1,2,4,8 scans rows of 16
// (lanes whose source is outside the row keep old = 0), then the row totals
// are added with row_bcast:15 (into rows 1 and 3) and row_bcast:31 (rows 2, 3).
#if defined(__GFX9__)
// row_bcast DPP controls: GFX9 only.
__kernel void scan_dpp(__global int *out, __global const int *in) {
  int v = in[GID_X];
  v += __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x112, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x114, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x118, 0xf, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x142, 0xa, 0xf, false);
  v += __builtin_amdgcn_update_dpp(0, v, 0x143, 0xc, 0xf, false);
  out[GID_X] = v;
}
#endif

// Cross-lane permutes: ds_bpermute (pull from lane+k), ds_permute (push to
// lane ^ 1) and DPP quad_perm / row_ror / row_mirror moves.
__kernel void lane_permute(__global int *opull, __global int *opush, __global int *oquad, __global int *oror,
                           __global int *omirror, __global const int *in) {
  int v = in[GID_X];
  int lane = LANE_ID;
  opull[GID_X] = __builtin_amdgcn_ds_bpermute(((lane + 5) & 63) << 2, v);
  opush[GID_X] = __builtin_amdgcn_ds_permute((lane ^ 1) << 2, v);
  oquad[GID_X] = __builtin_amdgcn_mov_dpp(v, 0x1b, 0xf, 0xf, false);   // quad_perm:[3,2,1,0]
  oror[GID_X] = __builtin_amdgcn_mov_dpp(v, 0x124, 0xf, 0xf, false);   // row_ror:4
  omirror[GID_X] = __builtin_amdgcn_mov_dpp(v, 0x140, 0xf, 0xf, false); // row_mirror
}
