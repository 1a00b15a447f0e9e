// fp32 SIMT GEMM C = A (MxK) * B (KxN), row-major, 16x16 tiles staged in LDS;
// M, N, K need not be multiples of 16.
#include "ocl.h"

#define T 16

__kernel void sgemm(__global float *c, __global const float *a, __global const float *b, int M, int N, int K) {
  __local float as[T][T], bs[T][T + 1];
  int tx = TID_X, ty = TID_Y;
  int row = GROUP_Y * T + ty, col = GROUP_X * T + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += T) {
    as[ty][tx] = (row < M && k0 + tx < K) ? a[row * K + k0 + tx] : 0.0f;
    bs[ty][tx] = (k0 + ty < K && col < N) ? b[(k0 + ty) * N + col] : 0.0f;
    LDS_BARRIER();
    for (int k = 0; k < T; ++k)
      acc += as[ty][k] * bs[k][tx];
    LDS_BARRIER();
  }
  if (row < M && col < N)
    c[row * N + col] = acc;
}

// Double-precision GEMM, no LDS: one output per work-item.
__kernel void dgemm_naive(__global double *c, __global const double *a, __global const double *b, int M, int N,
                          int K) {
  int col = GID_X, row = GID_Y;
  if (row < M && col < N) {
    double acc = 0.0;
    for (int k = 0; k < K; ++k)
      acc += a[row * K + k] * b[k * N + col];
    c[row * N + col] = acc;
  }
}
