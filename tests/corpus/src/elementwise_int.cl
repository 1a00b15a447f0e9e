// Elementwise integer kernels: 8/16/32/64-bit arithmetic, bit operations.
#include "ocl.h"

__kernel void int_ops(__global int *o, __global const int *a, __global const int *b, int n) {
  int i = GID_X;
  if (i < n) {
    int x = a[i], y = b[i];
    int r = x * y + (x >> 3) - (y << 2);
    r ^= (x & 0xff00) | (y % 7);
    r += x / (y | 1);
    r += __builtin_popcount(x) + __builtin_clz(x | 1) + __builtin_ctz(y | 0x100);
    r = __builtin_elementwise_min(r, x) + __builtin_elementwise_max(r, y) + __builtin_elementwise_abs(x);
    o[i] = r + (int)__builtin_bitreverse32(y);
  }
}

__kernel void u64_ops(__global ulong *o, __global const ulong *a, __global const ulong *b, int n) {
  int i = GID_X;
  if (i < n) {
    ulong x = a[i], y = b[i];
    ulong r = x * y + (x >> 17) + (y << 33);
    r ^= x / (y | 1);
    r += __builtin_popcountl(x) + __builtin_clzl(y | 1);
    o[i] = r > x ? r : x - y;
  }
}

__kernel void small_ints(__global short *o16, __global uchar *o8, __global const short *a, __global const uchar *b,
                         int n) {
  int i = GID_X;
  if (i < n) {
    o16[i] = (short)(a[i] * 3 - (a[i] >> 1));
    o8[i] = (uchar)(b[i] + b[i] / 3) | (uchar)(a[i] & 0x0f);
  }
}

__kernel void bitfield(__global uint *o, __global const uint *a, int n) {
  int i = GID_X;
  if (i < n) {
    uint x = a[i];
    uint r = __builtin_amdgcn_ubfe(x, 4, 12) + (uint)__builtin_amdgcn_sbfe((int)x, 8, 8);
    r += __builtin_amdgcn_alignbyte(x, r, 2) + __builtin_amdgcn_lerp(x, r, 1);
    r += __builtin_amdgcn_sad_u8(x, r, 7) + __builtin_amdgcn_msad_u8(x, r, 9);
    o[i] = __builtin_rotateleft32(r, 5) + (uint)__builtin_amdgcn_mbcnt_lo(x, 0);
  }
}
