// Dynamic LDS (extern __shared__, sized at launch) placed after static LDS.
#include "hip.h"

extern "C" __attribute__((shared)) float dyn[];

KERNEL void dyn_lds_reverse(float *out, int *oflag, const float *in, int n) {
  SHARED int flag[4];
  int t = TID_X, nt = LSIZE_X;
  if (t < 4)
    flag[t] = t * 10;
  dyn[t] = in[GID_X];
  dyn[nt + t] = in[GID_X] * 2.0f;
  SYNC();
  out[GID_X] = dyn[nt - 1 - t] + dyn[2 * nt - 1 - t];
  if (t == 0)
    oflag[GROUP_X] = flag[0] + flag[1] + flag[2] + flag[3] + n;
}
