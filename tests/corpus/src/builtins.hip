// ALU and machine-state builtins: med3, cube, class, trig_preop, packing
// conversions, SAD/QSAD, perm/alignbit; s_sendmsg, perf levels, cache
// control, s_setreg, GWS (global wave sync) operations.
#include "hip.h"
typedef _Float16 v2h __attribute__((ext_vector_type(2)));
typedef short v2s __attribute__((ext_vector_type(2)));
typedef unsigned short v2us __attribute__((ext_vector_type(2)));
KERNEL void alu_builtins(float *of, double *od, unsigned *ou, v2h *oh, const float *f, const double *d,
                         const unsigned *u, int n) {
  int i = GID_X;
  float x = f[i], y = f[i + 1], z = f[i + 2];
  unsigned a = u[i], b = u[i + 1];
  of[i] = __builtin_amdgcn_fmed3f(x, y, z) + __builtin_amdgcn_cubeid(x, y, z) + __builtin_amdgcn_cubesc(x, y, z) +
          __builtin_amdgcn_cubetc(x, y, z) + __builtin_amdgcn_cubema(x, y, z) + __builtin_amdgcn_frexp_mantf(x) +
          (float)__builtin_amdgcn_classf(x, 0x3f) + __builtin_amdgcn_rsq_clampf(y);
  od[i] = __builtin_amdgcn_trig_preop(d[i], 2) + __builtin_amdgcn_fract(d[i]) + __builtin_amdgcn_frexp_mant(d[i]) +
          (double)__builtin_amdgcn_frexp_exp(d[i]) + __builtin_amdgcn_rsq_clamp(d[i]) +
          (double)__builtin_amdgcn_class(d[i], 3);
  oh[i] = __builtin_bit_cast(v2h, __builtin_amdgcn_cvt_pkrtz(x, y));
  v2s p = __builtin_amdgcn_cvt_pknorm_i16(x, y);
  v2us q = __builtin_amdgcn_cvt_pk_u16(a, b);
  ou[i] = __builtin_amdgcn_perm(a, b, 0x05040100) + __builtin_amdgcn_alignbit(a, b, 7) +
          (unsigned)__builtin_amdgcn_mqsad_pk_u16_u8((unsigned long)a, b, (unsigned long)b) +
          __builtin_amdgcn_sad_hi_u8(a, b, 3) + __builtin_amdgcn_sad_u16(a, b, 5) +
          (unsigned)__builtin_bit_cast(int, p) + __builtin_bit_cast(unsigned, q) +
          (unsigned)__builtin_amdgcn_fmed3h((_Float16)x, (_Float16)y, (_Float16)z);
}
KERNEL void state_builtins(unsigned *o, int n) {
  __builtin_amdgcn_s_sendmsg(3, (unsigned)n);
  __builtin_amdgcn_s_incperflevel(1);
  __builtin_amdgcn_s_decperflevel(1);
  __builtin_amdgcn_s_dcache_inv();
#if defined(__gfx90a__)
  __builtin_amdgcn_buffer_wbinvl1();
#endif
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_s_setreg((1 << 0) | (0 << 6) | (3 << 11), (unsigned)n);
#if !defined(__gfx1201__)
  // GFX12 has no GWS.
  __builtin_amdgcn_ds_gws_init((unsigned)n, 0);
  __builtin_amdgcn_ds_gws_barrier((unsigned)n, 1);
  __builtin_amdgcn_ds_gws_sema_v(2);
  __builtin_amdgcn_ds_gws_sema_br((unsigned)n, 3);
  __builtin_amdgcn_ds_gws_sema_p(4);
#endif
  __builtin_amdgcn_s_ttracedata(n);
  o[GID_X] = __builtin_amdgcn_s_getpc() + __builtin_amdgcn_groupstaticsize() + __builtin_amdgcn_read_exec_lo();
}
