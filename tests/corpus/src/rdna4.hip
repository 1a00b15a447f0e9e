// corpus-targets: gfx1201
// RDNA4 (GFX12) additions through clang builtins: WMMA with 8-element
// operands (f16, bf16, iu8, iu4, fp8/bf8), SWMMAC with a sparsity index,
// fp8/bf8 conversions, variable lane permutes, and the pseudo-scalar
// transcendental opcodes the compiler picks for uniform floats.
#include "hip.h"

typedef _Float16 v8h __attribute__((ext_vector_type(8)));
typedef _Float16 v16h __attribute__((ext_vector_type(16)));
typedef short v8s __attribute__((ext_vector_type(8)));
typedef short v16s __attribute__((ext_vector_type(16)));
typedef int v2i __attribute__((ext_vector_type(2)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef float v2f __attribute__((ext_vector_type(2)));

#ifdef CORPUS_WAVE64
typedef float accf __attribute__((ext_vector_type(4)));
typedef int acci __attribute__((ext_vector_type(4)));
typedef _Float16 acch __attribute__((ext_vector_type(4)));
typedef short accs __attribute__((ext_vector_type(4)));
typedef _Float16 ah __attribute__((ext_vector_type(4)));
typedef short as __attribute__((ext_vector_type(4)));
typedef int ai;
typedef v2i a8;
typedef v8h bh;
typedef v8s bs;
#define W(op) __builtin_amdgcn_wmma_##op##_w64_gfx12
#define S(op) __builtin_amdgcn_swmmac_##op##_w64
#else
typedef float accf __attribute__((ext_vector_type(8)));
typedef int acci __attribute__((ext_vector_type(8)));
typedef _Float16 acch __attribute__((ext_vector_type(8)));
typedef short accs __attribute__((ext_vector_type(8)));
typedef v8h ah;
typedef v8s as;
typedef v2i ai;
typedef v4i a8;
typedef v16h bh;
typedef v16s bs;
#define W(op) __builtin_amdgcn_wmma_##op##_w32_gfx12
#define S(op) __builtin_amdgcn_swmmac_##op##_w32
#endif

KERNEL void wmma12(accf *c, acch *h, accs *s, acci *ci, const ah *a, const as *x, const ai *p, const a8 *q,
                   int k) {
  int t = TID_X;
  accf acc = c[t];
  for (int i = 0; i < k; ++i) {
    acc = W(f32_16x16x16_f16)(a[i * 64 + t], a[i * 64 + t + 1], acc);
    acc = W(f32_16x16x16_bf16)(x[i * 64 + t], x[i * 64 + t + 1], acc);
    acc = W(f32_16x16x16_fp8_fp8)(p[i * 64 + t], p[i * 64 + t + 1], acc);
    acc = W(f32_16x16x16_bf8_fp8)(p[i * 64 + t], p[i * 64 + t + 1], acc);
  }
  c[t] = acc;
  h[t] = W(f16_16x16x16_f16)(a[t], a[t + 1], h[t]);
  s[t] = W(bf16_16x16x16_bf16)(x[t], x[t + 1], s[t]);
  ci[t] = W(i32_16x16x16_iu8)(true, p[t], false, p[t + 1], ci[t], true);
  ci[64 + t] = W(i32_16x16x32_iu4)(false, p[t], true, p[t + 1], ci[64 + t], false);
}

KERNEL void swmmac12(accf *c, acci *ci, const ah *a, const as *x, const ai *p, const a8 *q, const bh *bf,
                     const bs *bb, const int *idx) {
  int t = TID_X;
  c[t] = S(f32_16x16x32_f16)(a[t], bf[t], c[t], idx[t]);
  c[64 + t] = S(f32_16x16x32_bf16)(x[t], bb[t], c[64 + t], idx[t + 1]);
  ci[t] = S(i32_16x16x32_iu8)(true, p[t], false, q[t], ci[t], idx[t], true);
  c[128 + t] = S(f32_16x16x32_fp8_bf8)(p[t], q[t], c[128 + t], idx[t + 2]);
}

KERNEL void fp8_convert(int *o, float *f, const float *x, const int *b) {
  int i = GID_X;
  int v = __builtin_amdgcn_cvt_pk_fp8_f32(x[i], x[i + 1], b[i], false);
  v = __builtin_amdgcn_cvt_pk_bf8_f32(x[i + 2], x[i + 3], v, true);
  v = __builtin_amdgcn_cvt_sr_fp8_f32(x[i + 4], b[i + 1], v, 2);
  o[i] = __builtin_amdgcn_cvt_sr_bf8_f32(x[i + 5], b[i + 2], v, 3);
  v2f p = __builtin_amdgcn_cvt_pk_f32_fp8(b[i], true);
  f[i] = __builtin_amdgcn_cvt_f32_fp8(b[i], 1) + __builtin_amdgcn_cvt_f32_bf8(b[i], 2) + p.x + p.y;
}

KERNEL void permute_var(int *out, const int *in) {
  int i = GID_X;
  int v = in[i];
  int a = __builtin_amdgcn_permlane16_var(v, v, in[i + 1], false, false);
  out[i] = a + __builtin_amdgcn_permlanex16_var(a, v, in[i + 2], true, false);
}

KERNEL void scalar_trans(float *o, const float *a, float s, int n) {
  // Uniform operands: the compiler uses the v_s_* pseudo-scalar opcodes.
  float e = __builtin_expf(s) + __builtin_logf(s) + __builtin_sqrtf(s) + 1.0f / s;
  o[GID_X] = a[GID_X] * e + (float)n;
}
