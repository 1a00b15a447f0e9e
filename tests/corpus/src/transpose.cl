// Tiled matrix transpose through LDS (with padding against bank conflicts).
#include "ocl.h"

#define TILE 32

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

__kernel void transpose_u8(__global uchar *out, __global const uchar *in, int rows, int cols) {
  __local uchar tile[64][65];
  int tx = TID_X, ty = TID_Y;
  int x = GROUP_X * 64 + tx, y = GROUP_Y * 64 + ty;
  for (int j = 0; j < 64; j += 4)
    tile[ty + j][tx] = in[(y + j) * cols + x];
  LDS_BARRIER();
  for (int j = 0; j < 64; j += 4)
    out[(GROUP_X * 64 + ty + j) * rows + GROUP_Y * 64 + tx] = tile[tx][ty + j];
}
