// corpus-targets: gfx908 gfx90a gfx942 gfx950
// Matrix cores through clang's MFMA builtins (v_mfma_*, v_smfmac_*), with
// per-target variants (CDNA1 gfx908, CDNA2 gfx90a, CDNA3 gfx942, CDNA4
// gfx950).
#include "hip.h"

typedef float v4f __attribute__((ext_vector_type(4)));
typedef float v16f __attribute__((ext_vector_type(16)));
typedef float v32f __attribute__((ext_vector_type(32)));
typedef double v4d __attribute__((ext_vector_type(4)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v8i __attribute__((ext_vector_type(8)));
typedef int v16i __attribute__((ext_vector_type(16)));
typedef _Float16 v4h __attribute__((ext_vector_type(4)));
typedef _Float16 v8h __attribute__((ext_vector_type(8)));
typedef short v4s __attribute__((ext_vector_type(4)));
typedef short v2s __attribute__((ext_vector_type(2)));
typedef __bf16 v8bf __attribute__((ext_vector_type(8)));

KERNEL void mfma_f32(v16f *c32, v4f *c16, v32f *c64, const float *a, const float *b, int k) {
  int t = TID_X;
  v16f acc = c32[t];
  v4f acc2 = c16[t];
  for (int i = 0; i < k; ++i) {
    acc = __builtin_amdgcn_mfma_f32_32x32x2f32(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_f32_16x16x4f32(a[i * 64 + t], b[i * 64 + t], acc2, 0, 0, 0);
  }
  c64[t] = __builtin_amdgcn_mfma_f32_32x32x1f32(a[t], b[t], c64[t], 1, 2, 3);
  c32[t] = acc;
  c16[t] = acc2;
}

KERNEL void mfma_f16_bf16(v16f *c32, v4f *c16, const v4h *a, const v4h *b, const v4s *x, const v4s *y, int k) {
  int t = TID_X;
  v16f acc = c32[t];
  v4f acc2 = c16[t];
  for (int i = 0; i < k; ++i) {
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_f32_16x16x16f16(a[i * 64 + t], b[i * 64 + t], acc2, 0, 0, 0);
#if defined(__gfx908__)
    // CDNA1's bf16 MFMAs take two bf16 per source (no _1k forms).
    v2s xs = {x[i * 64 + t].x, x[i * 64 + t].y}, ys = {y[i * 64 + t].z, y[i * 64 + t].w};
    acc = __builtin_amdgcn_mfma_f32_32x32x4bf16(xs, ys, acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_f32_16x16x8bf16(xs, ys, acc2, 0, 0, 1);
#else
    acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(x[i * 64 + t], y[i * 64 + t], acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(x[i * 64 + t], y[i * 64 + t], acc2, 0, 0, 1);
#endif
  }
  acc2 = __builtin_amdgcn_mfma_f32_4x4x4f16(a[t], b[t], acc2, 4, 0, 0);
  c32[t] = acc;
  c16[t] = acc2;
}

#if !defined(__gfx908__)
KERNEL void mfma_f64(v4d *c, double *d, const double *a, const double *b, int k) {
  int t = TID_X;
  v4d acc = c[t];
  double acc2 = d[t];
  for (int i = 0; i < k; ++i) {
    acc = __builtin_amdgcn_mfma_f64_16x16x4f64(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_f64_4x4x4f64(a[i * 64 + t], b[i * 64 + t], acc2, 0, 0, 0);
  }
  c[t] = acc;
  d[t] = acc2;
}
#endif

#if defined(__gfx908__) || defined(__gfx90a__)
KERNEL void mfma_int8(v16i *c, v4i *d, const int *a, const int *b, int k) {
  int t = TID_X;
  v16i acc = c[t];
  v4i acc2 = d[t];
  for (int i = 0; i < k; ++i) {
    acc = __builtin_amdgcn_mfma_i32_32x32x8i8(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_i32_16x16x16i8(a[i * 64 + t], b[i * 64 + t], acc2, 0, 0, 0);
  }
  c[t] = acc;
  d[t] = acc2;
}
#else
KERNEL void mfma_int8(v16i *c, v4i *d, const long *a, const long *b, int k) {
  int t = TID_X;
  v16i acc = c[t];
  v4i acc2 = d[t];
  for (int i = 0; i < k; ++i) {
    acc = __builtin_amdgcn_mfma_i32_32x32x16_i8(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_i32_16x16x32_i8(a[i * 64 + t], b[i * 64 + t], acc2, 0, 0, 0);
  }
  c[t] = acc;
  d[t] = acc2;
}

KERNEL void mfma_fp8(v16f *c32, v4f *c16, const long *a, const long *b, int k) {
  int t = TID_X;
  v16f acc = c32[t];
  v4f acc2 = c16[t];
  for (int i = 0; i < k; ++i) {
    acc = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
    acc = __builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8(a[i * 64 + t], b[i * 64 + t], acc2, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(a[i * 64 + t], b[i * 64 + t], acc2, 0, 0, 0);
  }
  c32[t] = acc;
  c16[t] = acc2;
}

typedef short v8s __attribute__((ext_vector_type(8)));
typedef int v2i __attribute__((ext_vector_type(2)));

KERNEL void smfmac(v4f *c, v16f *d, v16i *e, const v4h *a, const v8h *b, const v4s *x, const v8s *y, const v2i *p,
                   const v4i *q, const int *idx, int k) {
  int t = TID_X;
  v4f acc = c[t];
  v16f acc2 = d[t];
  v16i acc3 = e[t];
  for (int i = 0; i < k; ++i) {
    int j = i * 64 + t;
    acc = __builtin_amdgcn_smfmac_f32_16x16x32_f16(a[j], b[j], acc, idx[i], 0, 0);
    acc2 = __builtin_amdgcn_smfmac_f32_32x32x16_f16(a[j], b[j], acc2, idx[i], 0, 1);
    acc = __builtin_amdgcn_smfmac_f32_16x16x32_bf16(x[j], y[j], acc, idx[i], 1, 0);
    acc3 = __builtin_amdgcn_smfmac_i32_32x32x32_i8(p[j], q[j], acc3, idx[i], 0, 0);
    acc = __builtin_amdgcn_smfmac_f32_16x16x64_bf8_fp8(p[j], q[j], acc, idx[i], 0, 0);
    acc2 = __builtin_amdgcn_smfmac_f32_32x32x32_fp8_fp8(p[j], q[j], acc2, idx[i], 0, 0);
  }
  c[t] = acc;
  d[t] = acc2;
  e[t] = acc3;
}
#endif

#if defined(__gfx950__)
KERNEL void mfma_gfx950(v16f *c32, v4f *c16, const v8h *a, const v8h *b, const v8bf *x, const v8bf *y, int k) {
  int t = TID_X;
  v16f acc = c32[t];
  v4f acc2 = c16[t];
  for (int i = 0; i < k; ++i) {
    acc = __builtin_amdgcn_mfma_f32_32x32x16_f16(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_f32_16x16x32_f16(a[i * 64 + t], b[i * 64 + t], acc2, 0, 0, 0);
    acc = __builtin_amdgcn_mfma_f32_32x32x16_bf16(x[i * 64 + t], y[i * 64 + t], acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_f32_16x16x32_bf16(x[i * 64 + t], y[i * 64 + t], acc2, 0, 0, 0);
  }
  c32[t] = acc;
  c16[t] = acc2;
}

KERNEL void mfma_scale_f8f6f4(v4f *c, v16f *d, const v8i *a, const v8i *b, const int *sa, const int *sb, int k) {
  int t = TID_X;
  v4f acc = c[t];
  v16f acc2 = d[t];
  for (int i = 0; i < k; ++i) {
    acc = __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0, sa[i], 0,
                                                           sb[i]);
    acc2 = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(a[i * 64 + t], b[i * 64 + t], acc2, 1, 1, 0, sa[i], 0,
                                                           sb[i]);
  }
  c[t] = acc;
  d[t] = acc2;
}
#endif

#if defined(__gfx942__)
typedef float v2f __attribute__((ext_vector_type(2)));
KERNEL void mfma_xf32(v4f *c, v16f *d, const v2f *a, const v2f *b, int k) {
  int t = TID_X;
  v4f acc = c[t];
  v16f acc2 = d[t];
  for (int i = 0; i < k; ++i) {
    acc = __builtin_amdgcn_mfma_f32_16x16x8_xf32(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
    acc2 = __builtin_amdgcn_mfma_f32_32x32x4_xf32(a[i * 64 + t], b[i * 64 + t], acc2, 0, 0, 0);
  }
  c[t] = acc;
  d[t] = acc2;
}
#endif
