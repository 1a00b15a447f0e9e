// LDS kernels: tiled transpose, 256-bin histogram with LDS and global atomics.
#include "ocl.h"

#define TILE 32

// 32x32 tiles, 32x8 work-items, padded rows against bank conflicts; partial
// tiles at the edges.
__kernel void transpose_f32(__global float *out, __global const float *in, int rows, int cols) {
  __local float tile[TILE][TILE + 1];
  int tx = TID_X, ty = TID_Y;
  int x = GROUP_X * TILE + tx, y = GROUP_Y * TILE + ty;
  for (int j = 0; j < TILE; j += 8)
    if (x < cols && y + j < rows)
      tile[ty + j][tx] = in[(y + j) * cols + x];
  LDS_BARRIER();
  x = GROUP_Y * TILE + tx;
  y = GROUP_X * TILE + ty;
  for (int j = 0; j < TILE; j += 8)
    if (x < rows && y + j < cols)
      out[(y + j) * rows + x] = tile[tx][ty + j];
}

// Grid-stride loop over the bytes; per-group LDS bins merged with global atomics.
__kernel void histogram256(__global uint *bins, __global const uchar *data, int n, int ngroups) {
  __local uint local_bins[256];
  int t = TID_X;
  local_bins[t] = 0;
  LDS_BARRIER();
  for (int i = GID_X; i < n; i += LSIZE_X * ngroups)
    __atomic_fetch_add(&local_bins[data[i]], 1u, __ATOMIC_RELAXED);
  LDS_BARRIER();
  uint c = local_bins[t];
  if (c)
    __atomic_fetch_add(&bins[t], c, __ATOMIC_RELAXED);
}

// Reversed LDS read: clang emits ds_read_b32 with base -4 * t and
// offset:1020, relying on the 32-bit wrap of LDS addresses.
__kernel void lds_reverse(__global float *out, __global const float *in) {
  __local float tile[256];
  int t = TID_X;
  tile[t] = in[GID_X];
  LDS_BARRIER();
  out[GID_X] = tile[255 - t];
}
