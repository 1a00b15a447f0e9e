// Integer arithmetic: high halves of products, division and remainder,
// shifts and rotates, bit counts and bit-field extraction, 64-bit.
#include "ocl.h"

__kernel void int_mulhi(__global int *ohi, __global uint *ouhi, __global int *olo, __global const int *a,
                        __global const int *b, int n) {
  int i = GID_X;
  if (i < n) {
    ohi[i] = (int)(((long)a[i] * (long)b[i]) >> 32);
    ouhi[i] = (uint)(((ulong)(uint)a[i] * (ulong)(uint)b[i]) >> 32);
    olo[i] = a[i] * b[i];
  }
}

__kernel void int_divmod(__global int *oq, __global int *or, __global uint *ouq, __global uint *our,
                         __global const int *a, __global const int *b, int n) {
  int i = GID_X;
  if (i < n) {
    oq[i] = a[i] / b[i];
    or[i] = a[i] % b[i];
    ouq[i] = (uint)a[i] / (uint)b[i];
    our[i] = (uint)a[i] % (uint)b[i];
  }
}

__kernel void int_shifts(__global int *oshl, __global int *oashr, __global uint *olshr, __global uint *orot,
                         __global const int *a, __global const int *s, int n) {
  int i = GID_X;
  if (i < n) {
    int k = s[i] & 31;
    oshl[i] = (int)((uint)a[i] << k);
    oashr[i] = a[i] >> k;
    olshr[i] = (uint)a[i] >> k;
    orot[i] = __builtin_rotateleft32((uint)a[i], (uint)k);
  }
}

__kernel void int_bits(__global uint *opop, __global uint *oclz, __global uint *octz, __global uint *orev,
                       __global uint *obfe, __global int *osbfe, __global const uint *a, int n) {
  int i = GID_X;
  if (i < n) {
    uint x = a[i];
    opop[i] = __builtin_popcount(x);
    oclz[i] = x ? __builtin_clz(x) : 32;
    octz[i] = x ? __builtin_ctz(x) : 32;
    orev[i] = __builtin_bitreverse32(x);
    obfe[i] = __builtin_amdgcn_ubfe(x, i & 15, 9) + ((x >> 5) & 0x3ff);
    osbfe[i] = __builtin_amdgcn_sbfe((int)x, 8, 7);
  }
}

__kernel void int_minmax(__global int *o, __global uint *ou, __global const int *a, __global const int *b, int n) {
  int i = GID_X;
  if (i < n) {
    int x = a[i], y = b[i];
    o[i] = (x < y ? x : y) * 2 + (x > y ? x : y) - (x < 0 ? -x : x);
    ou[i] = ((uint)x < (uint)y ? (uint)x : (uint)y) ^ ((uint)x > (uint)y ? (uint)x : (uint)y);
  }
}

__kernel void i64_ops(__global long *omul, __global long *odiv, __global long *orem, __global ulong *oshr,
                      __global const long *a, __global const long *b, int n) {
  int i = GID_X;
  if (i < n) {
    long x = a[i], y = b[i];
    omul[i] = (long)((ulong)x * (ulong)y);
    odiv[i] = x / y;
    orem[i] = x % y;
    oshr[i] = ((ulong)x >> (y & 63)) ^ ((ulong)y << (x & 63)) ^ (ulong)(x >> 40);
  }
}
