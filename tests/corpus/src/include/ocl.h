// Shared helpers for the OpenCL C kernels of the corpus. The corpus is built
// with -nogpulib, so work-item functions come from clang builtins instead of
// the OpenCL library.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define TID_X ((int)__builtin_amdgcn_workitem_id_x())
#define TID_Y ((int)__builtin_amdgcn_workitem_id_y())
#define LSIZE_X ((int)__builtin_amdgcn_workgroup_size_x())
#define LSIZE_Y ((int)__builtin_amdgcn_workgroup_size_y())
#define GROUP_X ((int)__builtin_amdgcn_workgroup_id_x())
#define GROUP_Y ((int)__builtin_amdgcn_workgroup_id_y())
#define GID_X (GROUP_X * LSIZE_X + TID_X)
#define GID_Y (GROUP_Y * LSIZE_Y + TID_Y)

// Work-group barrier with LDS visibility (OpenCL's barrier(CLK_LOCAL_MEM_FENCE)).
#define LDS_BARRIER()                                     \
  do {                                                    \
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); \
    __builtin_amdgcn_s_barrier();                         \
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); \
  } while (0)

// Reinterpreting casts (OpenCL's as_float/as_int without the library header).
#define AS_FLOAT(x) __builtin_astype((x), float)
#define AS_INT(x) __builtin_astype((x), int)

// DPP row broadcasts (row_bcast:15 = 0x142, row_bcast:31 = 0x143) and wave
// shifts (wave_shl:1 = 0x130) exist up to GFX9; GFX10+ code uses row_share:15,
// row_xmask:15 and row_shl:1 in their place.
#ifdef __GFX9__
#define DPP_ROW_BCAST15 0x142
#define DPP_ROW_BCAST31 0x143
#define DPP_WAVE_SHL1 0x130
#else
#define DPP_ROW_BCAST15 0x15f
#define DPP_ROW_BCAST31 0x16f
#define DPP_WAVE_SHL1 0x101
#endif
