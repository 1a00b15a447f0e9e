// Assorted instruction families through clang builtins: raw buffer
// loads/stores with range checking, packed integer dot products, byte
// permutes and funnel shifts, packed half fma, 64 KiB of LDS, and a long
// integer loop.
#include "hip.h"

typedef _Float16 half2_t __attribute__((ext_vector_type(2)));

// Loads through a buffer resource whose range is `valid` elements: lanes
// past it read 0 (range checking of raw buffers); stores past `valid` are
// dropped.
KERNEL void buffer_oob(float *out, float *oload, const float *in, int valid) {
  __amdgpu_buffer_rsrc_t rin = __builtin_amdgcn_make_buffer_rsrc((void *)in, 0, valid * 4, 0x00027000);
  __amdgpu_buffer_rsrc_t rout = __builtin_amdgcn_make_buffer_rsrc(out, 0, valid * 4, 0x00027000);
  int i = GID_X;
  float v = __builtin_bit_cast(float, __builtin_amdgcn_raw_buffer_load_b32(rin, i * 4, 0, 0));
  oload[i] = v;
  __builtin_amdgcn_raw_buffer_store_b32(__builtin_bit_cast(unsigned, v * 2.0f + 1.0f), rout, i * 4, 0, 0);
}

#if defined(__GFX9__)
// The dot1-insts builtins (v_dot4_i32_i8, v_dot4_u32_u8): CDNA only.
KERNEL void dot4(int *os, unsigned *ou, const int *a, const int *b, const int *c, int n) {
  int i = GID_X;
  if (i < n) {
    os[i] = __builtin_amdgcn_sdot4(a[i], b[i], c[i], false);
    ou[i] = __builtin_amdgcn_udot4((unsigned)a[i], (unsigned)b[i], (unsigned)c[i], false);
  }
}
#endif

// v_perm_b32 with byte selectors 0-7 (bytes of {a, b}, b in the low half)
// and 0x0c (zero); v_alignbit_b32 / v_alignbyte_b32 funnel shifts.
KERNEL void byte_ops(unsigned *operm, unsigned *oalign, unsigned *obyte, const unsigned *a, const unsigned *b,
                     const unsigned *s, int n) {
  int i = GID_X;
  if (i < n) {
    operm[i] = __builtin_amdgcn_perm(a[i], b[i], s[i]);
    oalign[i] = __builtin_amdgcn_alignbit(a[i], b[i], s[i] & 31);
    obyte[i] = __builtin_amdgcn_alignbyte(a[i], b[i], s[i] & 3);
  }
}

KERNEL void half2_fma(half2_t *o, const half2_t *a, const half2_t *b, const half2_t *c, int n) {
  int i = GID_X;
  if (i < n)
    o[i] = __builtin_elementwise_fma(a[i], b[i], c[i]);
}

// 64 KiB of LDS: each work-group fills it, then reads it back reversed.
KERNEL void big_lds(unsigned *out, int rounds) {
  SHARED unsigned big[16384];
  int t = TID_X, nt = LSIZE_X;
  for (int k = t; k < 16384; k += nt)
    big[k] = (unsigned)(k * 2654435761u) ^ (unsigned)GROUP_X;
  SYNC();
  unsigned acc = 0;
  for (int r = 0; r < rounds; ++r)
    for (int k = t; k < 16384; k += nt)
      acc += big[16383 - k] * (unsigned)(r + 1);
  out[GID_X] = acc;
}

// A linear congruential generator iterated `iters` times per work-item.
KERNEL void lcg_loop(unsigned *out, int iters) {
  unsigned x = (unsigned)GID_X;
  for (int k = 0; k < iters; ++k)
    x = x * 1664525u + 1013904223u;
  out[GID_X] = x;
}

// v_cvt_pkrtz_f16_f32: two floats to a half2, rounding toward zero.
KERNEL void cvt_pkrtz(half2_t *o, const float *a, const float *b, int n) {
  int i = GID_X;
  if (i < n)
    o[i] = __builtin_bit_cast(half2_t, __builtin_amdgcn_cvt_pkrtz(a[i], b[i]));
}

// Reversed LDS read; clang may fold 255 - t into ds_read_b32 with a negative
// VGPR base and offset:1020, relying on the 32-bit wrap of LDS addresses.
KERNEL void lds_reverse_hip(float *out, const float *in) {
  SHARED float tile[256];
  tile[TID_X] = in[GID_X];
  SYNC();
  out[GID_X] = tile[255 - TID_X];
}

#if defined(__gfx942__) || defined(__gfx950__)
// fp8 (e4m3: FNUZ on gfx942, OCP on gfx950) and bf8 (e5m2) conversions:
// v_cvt_pk_fp8_f32 / v_cvt_pk_bf8_f32 into the bytes of a word, and back
// with v_cvt_f32_fp8 / v_cvt_f32_bf8.
KERNEL void fp8_convert(unsigned *opk, float *oback, const float *a, const float *b, int n) {
  int i = GID_X;
  if (i < n) {
    int p = __builtin_amdgcn_cvt_pk_fp8_f32(a[i], b[i], 0, false);
    p = __builtin_amdgcn_cvt_pk_bf8_f32(a[i], b[i], p, true);
    opk[i] = (unsigned)p;
    oback[4 * i] = __builtin_amdgcn_cvt_f32_fp8(p, 0);
    oback[4 * i + 1] = __builtin_amdgcn_cvt_f32_fp8(p, 1);
    oback[4 * i + 2] = __builtin_amdgcn_cvt_f32_bf8(p, 2);
    oback[4 * i + 3] = __builtin_amdgcn_cvt_f32_bf8(p, 3);
  }
}

// global_load_lds_dword: each lane's dword goes to LDS at the wave's base
// (M0) + 4 * lane; then the block reads LDS in order and reversed (the
// reversed read is ds_read_b32 with a negative VGPR base and offset:1020,
// relying on the 32-bit wrap of the LDS address).
KERNEL void load_to_lds(float *out, float *orev, const float *in) {
  SHARED float tile[256];
  typedef __attribute__((address_space(1))) void gptr;
  typedef __attribute__((address_space(3))) void lptr;
  int wave = TID_X >> 6;
  __builtin_amdgcn_global_load_lds((gptr *)(in + GID_X), (lptr *)(tile + 64 * wave), 4, 0, 0);
  SYNC();
  out[GID_X] = tile[TID_X];
  orev[GID_X] = tile[255 - TID_X];
}
#endif
