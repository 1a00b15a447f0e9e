// bf16 and f16 elementwise kernels written with clang's __bf16 and _Float16.
#include "hip.h"

typedef __bf16 bf16x2 __attribute__((ext_vector_type(2)));

KERNEL void vadd_bf16(__bf16 *o, const __bf16 *a, const __bf16 *b, int n) {
  int i = GID_X;
  if (i < n)
    o[i] = a[i] * b[i] + (__bf16)1.0f;
}

KERNEL void bf16_convert(float *of, __bf16 *ob, bf16x2 *op, const __bf16 *b, const float *f, int n) {
  int i = GID_X;
  if (i < n) {
    of[i] = (float)b[i] * 0.5f;
    ob[i] = (__bf16)(f[i] - 1.0f);
    bf16x2 p = {(__bf16)f[2 * i], (__bf16)f[2 * i + 1]};
    op[i] = p;
  }
}

KERNEL void f16_bf16_mix(_Float16 *oh, __bf16 *ob, const _Float16 *h, const __bf16 *b, int n) {
  int i = GID_X;
  if (i < n) {
    float x = (float)h[i] + (float)b[i];
    oh[i] = (_Float16)x * h[i];
    ob[i] = (__bf16)(x * x);
  }
}
