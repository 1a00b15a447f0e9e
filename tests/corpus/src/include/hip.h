// Shared helpers for the HIP kernels of the corpus (device-only compilation
// with -nogpuinc, so no HIP headers: kernels and indices come from attributes
// and clang builtins).
#pragma once

#define KERNEL extern "C" __attribute__((global))
#define DEVICE __attribute__((device))
#define SHARED __attribute__((shared))

#define TID_X ((int)__builtin_amdgcn_workitem_id_x())
#define LSIZE_X ((int)__builtin_amdgcn_workgroup_size_x())
#define GROUP_X ((int)__builtin_amdgcn_workgroup_id_x())
#define GID_X (GROUP_X * LSIZE_X + TID_X)

#define SYNC()                                            \
  do {                                                    \
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); \
    __builtin_amdgcn_s_barrier();                         \
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); \
  } while (0)
