// bf16 elementwise kernels (clang's __bf16: arithmetic in f32, rounded to
// nearest even on the store).
#include "hip.h"

KERNEL void vadd_bf16(__bf16 *o, const __bf16 *a, const __bf16 *b, int n) {
  int i = GID_X;
  if (i < n)
    o[i] = a[i] + b[i];
}

KERNEL void bf16_convert(float *of, __bf16 *ob, const __bf16 *b, const float *f, int n) {
  int i = GID_X;
  if (i < n) {
    of[i] = (float)b[i];
    ob[i] = (__bf16)f[i];
  }
}
