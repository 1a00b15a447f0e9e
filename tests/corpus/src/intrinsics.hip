// Less common instructions reached through clang builtins: scalar memory and
// state (s_memtime, s_getreg, s_sleep, ...), dot products, LDS specials,
// buffer resources, fp8 conversions, and per-target additions.
#include "hip.h"

typedef float v2f __attribute__((ext_vector_type(2)));
typedef _Float16 v2h __attribute__((ext_vector_type(2)));
typedef short v2s __attribute__((ext_vector_type(2)));

KERNEL void scalar_state(unsigned long long *out, int n) {
#ifdef __GFX9__
  unsigned long long t0 = __builtin_amdgcn_s_memtime();
#else
  unsigned long long t0 = __builtin_readcyclecounter();
#endif
  __builtin_amdgcn_s_sleep(2);
  __builtin_amdgcn_s_setprio(3);
  unsigned hw = __builtin_amdgcn_s_getreg((20 << 0) | (0 << 6) | (31 << 11)); // HW_REG_HW_ID
#if defined(__GFX9__) || defined(__GFX10__)
  unsigned long long t1 = __builtin_amdgcn_s_memrealtime();
#else
  unsigned long long t1 = __builtin_amdgcn_s_sendmsg_rtnl(0x83); // MSG_RTN_GET_REALTIME
#endif
  __builtin_amdgcn_s_setprio(0);
#ifdef __GFX9__
  __builtin_amdgcn_s_dcache_wb();
#endif
  __builtin_amdgcn_sched_barrier(0);
  __builtin_amdgcn_s_waitcnt(0);
  if (TID_X == 0)
    out[GROUP_X] = (t1 - t0) + hw + (unsigned)n;
}

KERNEL void dot_products(float *of, int *oi, unsigned *ou, const v2h *a, const v2h *b, const int *x, const int *y,
                         int n) {
  int i = GID_X;
  if (i < n) {
#if !defined(__gfx1010__)
    of[i] = __builtin_amdgcn_fdot2(a[i], b[i], of[i], false);
#endif
#if defined(__gfx1030__)
    oi[i] = __builtin_amdgcn_sdot4(x[i], y[i], oi[i], false) + __builtin_amdgcn_sdot8(x[i], y[i], 3, true);
    ou[i] = __builtin_amdgcn_udot4((unsigned)x[i], (unsigned)y[i], ou[i], false) +
            __builtin_amdgcn_udot8((unsigned)x[i], (unsigned)y[i], 5, false);
#elif defined(__gfx1010__)
    // RDNA1 has no dot products.
    oi[i] = x[i] * y[i];
#elif defined(__GFX9__)
    oi[i] = __builtin_amdgcn_sdot4(x[i], y[i], oi[i], false) + __builtin_amdgcn_sdot8(x[i], y[i], 3, true);
    ou[i] = __builtin_amdgcn_udot4((unsigned)x[i], (unsigned)y[i], ou[i], false) +
            __builtin_amdgcn_udot8((unsigned)x[i], (unsigned)y[i], 5, false) +
            __builtin_amdgcn_sdot2(__builtin_bit_cast(v2s, x[i]), __builtin_bit_cast(v2s, y[i]), 1, false);
#else
    // Mixed-sign dot products (v_dot4_i32_iu8, v_dot8_i32_iu4).
    oi[i] = __builtin_amdgcn_sudot4(true, x[i], false, y[i], oi[i], false) +
            __builtin_amdgcn_sudot8(false, x[i], true, y[i], 3, true);
    ou[i] = __builtin_amdgcn_udot4((unsigned)x[i], (unsigned)y[i], ou[i], false) +
            __builtin_amdgcn_udot8((unsigned)x[i], (unsigned)y[i], 5, false);
#endif
  }
}

KERNEL void lds_special(int *out, const int *in, int n) {
  SHARED int buf[256];
  int t = TID_X;
  int slot = __builtin_amdgcn_ds_append(&buf[0]);
  buf[1 + (t & 127)] = in[GID_X];
  SYNC();
  int c = __builtin_amdgcn_ds_consume(&buf[128]);
  out[GID_X] = slot + c + buf[255 - (t & 127)] + n;
}

KERNEL void buffer_ops(float *out, const float *in, int n) {
  __amdgpu_buffer_rsrc_t rin = __builtin_amdgcn_make_buffer_rsrc((void *)in, 0, n * 4, 0x00027000);
  __amdgpu_buffer_rsrc_t rout = __builtin_amdgcn_make_buffer_rsrc(out, 0, n * 4, 0x00027000);
  int i = GID_X;
  float a = __builtin_amdgcn_raw_buffer_load_b32(rin, i * 4, 0, 0);
  v2f b = __builtin_amdgcn_raw_buffer_load_b64(rin, i * 8, 16, 1);
  __builtin_amdgcn_raw_buffer_store_b32(a + b.x + b.y, rout, i * 4, 0, 0);
  __builtin_amdgcn_raw_buffer_store_b16((unsigned short)i, rout, i * 2, 4, 2);
}

KERNEL void buffer_atomics(float *out, int *cnt, const float *in, int n) {
  __amdgpu_buffer_rsrc_t rf = __builtin_amdgcn_make_buffer_rsrc(out, 0, n * 4, 0x00027000);
  __amdgpu_buffer_rsrc_t rc = __builtin_amdgcn_make_buffer_rsrc(cnt, 0, 64, 0x00027000);
  __amdgpu_buffer_rsrc_t rin = __builtin_amdgcn_make_buffer_rsrc((void *)in, 0, n * 4, 0x00027000);
  SHARED float tile[64];
  int i = GID_X;
  float v = in[i];
  int old = __builtin_amdgcn_raw_ptr_buffer_atomic_add_i32(1, rc, (i & 15) * 4, 0, 0);
  __builtin_amdgcn_raw_ptr_buffer_atomic_add_i32(old, rc, 0, 16, 0);
#if defined(__gfx908__) || defined(__GFX10__)
  // CDNA1 has buffer_atomic_add_f32 without return and no f64 min/max;
  // RDNA1/2 have no buffer_atomic_add_f32.
  __builtin_amdgcn_raw_ptr_buffer_atomic_add_i32(old, rc, 4, 32, 0);
#else
  __builtin_amdgcn_raw_ptr_buffer_atomic_fadd_f32(v, rf, i * 4, 0, 0);
#endif
#ifdef __GFX9__
#if !defined(__gfx908__)
  __builtin_amdgcn_raw_ptr_buffer_atomic_fmax_f64((double)v, rf, 8 * (i & 7), 0, 0);
#endif
  __builtin_amdgcn_raw_ptr_buffer_load_lds(rin, (__attribute__((address_space(3))) void *)tile, 4, i * 4, 0, 0, 0);
#else
  __builtin_amdgcn_raw_ptr_buffer_atomic_fmax_f32(v, rf, 4 * (i & 7), 0, 0);
  tile[TID_X & 63] = __builtin_amdgcn_raw_buffer_load_b32(rin, i * 4, 0, 0);
#endif
  SYNC();
  out[n + i] = tile[TID_X & 63];
}

#if defined(__gfx942__) || defined(__gfx950__)
KERNEL void load_to_lds(float *out, const float *in) {
  SHARED float tile[256];
  typedef __attribute__((address_space(1))) void gptr;
  typedef __attribute__((address_space(3))) void lptr;
  __builtin_amdgcn_global_load_lds((gptr *)(in + GID_X), (lptr *)tile, 4, 0, 0);
  __builtin_amdgcn_global_load_lds((gptr *)(in + GID_X + 64), (lptr *)tile, 2, 512, 0);
  __builtin_amdgcn_global_load_lds((gptr *)(in + GID_X + 128), (lptr *)tile, 1, 768, 1);
  SYNC();
  out[GID_X] = tile[255 - TID_X];
}

KERNEL void fp8_convert(int *o, float *of, const float *a, const float *b, int n) {
  int i = GID_X;
  if (i < n) {
    int p = __builtin_amdgcn_cvt_pk_fp8_f32(a[i], b[i], 0, false);
    p = __builtin_amdgcn_cvt_pk_bf8_f32(a[i], b[i], p, true);
    p = __builtin_amdgcn_cvt_sr_fp8_f32(a[i], (int)b[i], p, 2);
    o[i] = p;
    of[i] = __builtin_amdgcn_cvt_f32_fp8(p, 1) + __builtin_amdgcn_cvt_f32_bf8(p, 3);
    v2f q = __builtin_amdgcn_cvt_pk_f32_fp8(p, false);
    of[n + i] = q.x + q.y;
  }
}
#endif

#if defined(__gfx950__)
typedef __bf16 v2bf __attribute__((ext_vector_type(2)));
KERNEL void gfx950_ops(unsigned *o, v2bf *ob, const unsigned *a, const float *f, int n) {
  int i = GID_X;
  if (i < n) {
    unsigned x = a[i];
    unsigned r = __builtin_amdgcn_prng_b32(x);
    r ^= __builtin_amdgcn_permlane32_swap(x, r, false, false)[0];
    r += __builtin_amdgcn_permlane16_swap(x, r, false, true)[1];
    r += (x & r) | (~x & a[i + 1]) ^ (r | ~a[i + 2]);
    o[i] = r;
    ob[i] = __builtin_amdgcn_cvt_sr_bf16_f32(ob[i], f[i], x, false);
    ob[n + i] = __builtin_amdgcn_cvt_scalef32_pk_bf16_fp8(x, f[i], false);
  }
}
KERNEL void gfx950_scaled_cvt(unsigned *o, float *of, v2h *oh, v2bf *ob, const unsigned *a, const float *f, int n) {
  typedef short v2s16 __attribute__((ext_vector_type(2)));
  int i = GID_X;
  unsigned x = a[i];
  float s = f[i];
  o[i] = __builtin_amdgcn_cvt_scalef32_pk_fp4_f32(x, s, f[i + 1], s, 0);
  v2f p = __builtin_amdgcn_cvt_scalef32_pk_f32_fp4(x, s, 1);
  of[i] = p.x + p.y + __builtin_amdgcn_cvt_scalef32_f32_fp8(x, s, 2) + __builtin_amdgcn_cvt_scalef32_f32_bf8(x, s, 1);
  oh[i] = __builtin_amdgcn_cvt_scalef32_pk_f16_fp8(x, s, true);
  ob[i] = __builtin_amdgcn_cvt_scalef32_pk_bf16_bf8(x, s, false);
  o[n + i] = __builtin_amdgcn_cvt_scalef32_sr_fp8_f32(x, f[i], x, s, 1);
  v2h h = {(_Float16)s, (_Float16)f[i + 2]};
  o[2 * n + i] = __builtin_bit_cast(unsigned, __builtin_amdgcn_cvt_scalef32_pk_fp8_f16((v2s16){0, 0}, h, s, false));
}
#endif

#if defined(__gfx90a__)
// Image instructions (MIMG): gfx90a still has them; gfx940 and later do not.
typedef float v4f __attribute__((ext_vector_type(4)));
KERNEL void image_ops(v4f *o, __amdgpu_texture_t t, int n) {
  int i = GID_X;
  v4f a = __builtin_amdgcn_image_load_1d_v4f32_i32(15, i, t, 0, 0);
  v4f b = __builtin_amdgcn_image_load_2d_v4f32_i32(3, i, n, t, 0, 0);
  float c = __builtin_amdgcn_image_load_2d_f32_i32(1, i, i + 1, t, 0, 0);
  __builtin_amdgcn_image_store_1d_v4f32_i32(a + b, 15, i + n, t, 0, 0);
  o[i] = a * c;
}
#endif
