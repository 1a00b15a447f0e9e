// corpus-targets: gfx1010 gfx1030
// RDNA1/RDNA2 (GFX10) through clang builtins: DPP16 and DPP8 lane moves,
// the row-crossing lane permutes, swizzles and lane reads in both wave
// sizes, 16-bit packed math whose operand selects compile to SDWA, and
// (gfx1030) dot products and the 64-bit atomics of GFX10.3.
#include "hip.h"

typedef _Float16 v2h __attribute__((ext_vector_type(2)));
typedef short v2s __attribute__((ext_vector_type(2)));

KERNEL void lane_moves(int *out, const int *in, int n) {
  int i = GID_X;
  int v = in[i];
  // DPP16: row shifts and broadcasts, bound_ctrl; DPP8 selects.
  int a = __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, false);
  int b = __builtin_amdgcn_mov_dpp(v, 0x141, 0xa, 0x5, true);
  int c = __builtin_amdgcn_mov_dpp8(v, 0x00fac688);
  // Lane permutes across rows and the 32-lane halves.
  int d = __builtin_amdgcn_permlane16(v, a, 0x76543210, 0xfedcba98, false, false);
  int e = __builtin_amdgcn_permlanex16(v, b, 0x01234567, 0x89abcdef, true, false);
  int f = __builtin_amdgcn_ds_swizzle(v, 0x041f);
  int g = __builtin_amdgcn_readlane(c, n & 31) + __builtin_amdgcn_readfirstlane(d);
  out[i] = a + b + c + d + e + f + g;
}

KERNEL void ballots(unsigned long long *out, const int *in, int n) {
  int i = GID_X;
#ifdef CORPUS_WAVE64
  unsigned long long m = __builtin_amdgcn_ballot_w64(in[i] > n);
#else
  unsigned long long m = __builtin_amdgcn_ballot_w32(in[i] > n);
#endif
  out[i] = m + __builtin_amdgcn_mbcnt_lo((unsigned)m, 0);
}

KERNEL void bytes_and_halves(unsigned *out, const unsigned *a, const unsigned *b, v2h *h, int n) {
  int i = GID_X;
  unsigned x = a[i], y = b[i];
  // Byte and half selects of 32-bit operands (SDWA where profitable).
  unsigned s = ((x >> 8) & 0xff) * ((y >> 16) & 0xff) + (unsigned short)(x >> 16) + (signed char)(y >> 24);
  v2h p = h[i];
  v2h q = {p.y, p.x};
  h[i] = p * q + (v2h){(_Float16)n, (_Float16)1};
  out[i] = s;
}

#if defined(__gfx1030__)
KERNEL void dots_and_atomics(int *oi, unsigned *ou, float *of, unsigned long long *cnt, const int *x, const int *y,
                             const v2h *a, const v2h *b, int n) {
  int i = GID_X;
  oi[i] = __builtin_amdgcn_sdot4(x[i], y[i], oi[i], false) + __builtin_amdgcn_sdot8(x[i], y[i], n, true);
  ou[i] = __builtin_amdgcn_udot2(__builtin_bit_cast(v2s, x[i]), __builtin_bit_cast(v2s, y[i]), 3u, false);
  of[i] = __builtin_amdgcn_fdot2(a[i], b[i], of[i], true);
  __hip_atomic_fetch_max(cnt, (unsigned long long)i, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_add(&cnt[1], 1ull, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
#endif
