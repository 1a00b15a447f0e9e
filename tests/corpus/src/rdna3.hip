// corpus-targets: gfx1100 gfx1151
// RDNA3 (GFX11) additions through clang builtins: WMMA matrix products (the
// wave-sized forms: 8-register accumulators in wave32, 4 in wave64), lane
// permutes across rows, mixed-sign dot products, returning messages and
// LDS direct/parameter loads.
#include "hip.h"

typedef _Float16 v16h __attribute__((ext_vector_type(16)));
typedef short v16s __attribute__((ext_vector_type(16)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v2i __attribute__((ext_vector_type(2)));
typedef _Float16 v2h __attribute__((ext_vector_type(2)));
typedef short v2s __attribute__((ext_vector_type(2)));

#ifdef CORPUS_WAVE64
typedef float accf __attribute__((ext_vector_type(4)));
typedef int acci __attribute__((ext_vector_type(4)));
typedef _Float16 acch __attribute__((ext_vector_type(8)));
typedef short accs __attribute__((ext_vector_type(8)));
#define WMMA(op) __builtin_amdgcn_wmma_##op##_w64
#else
typedef float accf __attribute__((ext_vector_type(8)));
typedef int acci __attribute__((ext_vector_type(8)));
typedef _Float16 acch __attribute__((ext_vector_type(16)));
typedef short accs __attribute__((ext_vector_type(16)));
#define WMMA(op) __builtin_amdgcn_wmma_##op##_w32
#endif

KERNEL void wmma_float(accf *c, acch *h, accs *s, const v16h *a, const v16h *b, const v16s *x, const v16s *y,
                       int k) {
  int t = TID_X;
  accf acc = c[t];
  accf acc2 = c[64 + t];
  for (int i = 0; i < k; ++i) {
    acc = WMMA(f32_16x16x16_f16)(a[i * 64 + t], b[i * 64 + t], acc);
    acc2 = WMMA(f32_16x16x16_bf16)(x[i * 64 + t], y[i * 64 + t], acc2);
  }
  c[t] = acc;
  c[64 + t] = acc2;
  // 16-bit accumulators in the low (opsel 0) or high (opsel 1) halves.
  h[t] = WMMA(f16_16x16x16_f16)(a[t], b[t], h[t], false);
  h[64 + t] = WMMA(f16_16x16x16_f16)(a[t], b[t], h[64 + t], true);
  s[t] = WMMA(bf16_16x16x16_bf16)(x[t], y[t], s[t], true);
}

KERNEL void wmma_int(acci *c, const v4i *a, const v4i *b, const v2i *p, const v2i *q) {
  int t = TID_X;
  // Signed/unsigned A and B, clamp.
  c[t] = WMMA(i32_16x16x16_iu8)(true, a[t], false, b[t], c[t], false);
  c[64 + t] = WMMA(i32_16x16x16_iu8)(false, a[t], true, b[t], c[64 + t], true);
  c[128 + t] = WMMA(i32_16x16x16_iu4)(true, p[t], true, q[t], c[128 + t], false);
}

KERNEL void lane_permutes(int *out, const int *in, int sel0, int sel1) {
  int i = GID_X;
  int v = in[i];
  int a = __builtin_amdgcn_permlane16(v, v, sel0, sel1, false, false);
  int b = __builtin_amdgcn_permlanex16(v, a, sel1, sel0, true, false);
  int c = __builtin_amdgcn_permlane64(b);
  out[i] = a + b + c + __builtin_amdgcn_ds_bpermute((TID_X ^ 5) << 2, v);
}

KERNEL void dots_and_packed(float *of, _Float16 *oh, int *oi, const v2h *a, const v2h *b, const int *x,
                            const int *y, int n) {
  int i = GID_X;
  if (i < n) {
    of[i] = __builtin_amdgcn_fdot2(a[i], b[i], of[i], true);
    oh[i] = __builtin_amdgcn_fdot2_f16_f16(a[i], b[i], oh[i]);
    oi[i] = __builtin_amdgcn_sudot4(false, x[i], true, y[i], oi[i], true) +
            __builtin_amdgcn_sudot8(true, x[i], true, y[i], oi[n + i], false);
  }
}

KERNEL void messages(unsigned long long *out, unsigned *id) {
  unsigned long long t = __builtin_amdgcn_s_sendmsg_rtnl(0x83); // MSG_RTN_GET_REALTIME
  unsigned d = __builtin_amdgcn_s_sendmsg_rtn(0x80);            // MSG_RTN_GET_DOORBELL
  __builtin_amdgcn_s_sleep(1);
  if (TID_X == 0) {
    out[GROUP_X] = t;
    id[GROUP_X] = d;
  }
}
