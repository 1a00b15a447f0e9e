// Grids and control flow: 2D/3D grids and work-groups, ballot and
// readfirstlane-uniform branches, loops with data-dependent early exits.
#include "ocl.h"
#include "kern.h"

// Every work-item writes its global linear index's encoding of all six ids.
__kernel void grid3d(__global int *out, int nx, int ny) {
  int gx = GROUP_X * LSIZE_X + TID_X;
  int gy = GROUP_Y * LSIZE_Y + TID_Y;
  int gz = GROUP_Z * LSIZE_Z + TID_Z;
  int idx = (gz * ny + gy) * nx + gx;
  out[idx] = (GROUP_X << 24) | (GROUP_Y << 20) | (GROUP_Z << 16) | (TID_X << 8) | (TID_Y << 4) | TID_Z;
}

// 2D grid with partial blocks in both dimensions: c = a * 3 - b (int).
__kernel void grid2d(__global int *c, __global const int *a, __global const int *b, int rows, int cols) {
  int x = GID_X, y = GID_Y;
  if (x < cols && y < rows)
    c[y * cols + x] = a[y * cols + x] * 3 - b[y * cols + x] + y;
}

// ballot of a predicate, its population count, each lane's rank among the
// set lanes (mbcnt), and a branch on a wave-uniform (readfirstlane) value.
__kernel void ballot_rank(__global uint *ocount, __global int *orank, __global int *ouni, __global const int *in,
                          int n) {
  int i = GID_X;
  int v = i < n ? in[i] : 0;
  bool pred = v > 0;
  ulong mask = __builtin_amdgcn_ballot_w64(pred);
  int rank = __builtin_amdgcn_mbcnt_hi((uint)(mask >> 32), __builtin_amdgcn_mbcnt_lo((uint)mask, 0u));
  int first = __builtin_amdgcn_readfirstlane(v);
  int u;
  if (first > 0)
    u = v + first;
  else
    u = v - first * 2;
  if (i < n) {
    ocount[i] = __builtin_popcountl(mask);
    orank[i] = pred ? rank : -1;
    ouni[i] = u;
  }
}

// First index in each row (of `cols`) whose value exceeds the threshold, or
// -1; plus the Collatz step count (divergent trip counts per lane).
__kernel void early_exit(__global int *ofound, __global int *osteps, __global const int *in, int cols, int thresh) {
  int r = GID_X;
  int found = -1;
  for (int c = 0; c < cols; ++c) {
    if (in[r * cols + c] > thresh) {
      found = c;
      break;
    }
  }
  ofound[r] = found;
  int x = r + 1, s = 0;
  while (x != 1) {
    x = (x & 1) ? 3 * x + 1 : x >> 1;
    if (++s >= 500)
      break;
  }
  osteps[r] = s;
}
