// Work-item helpers for the executed-kernel tests, beyond the corpus's
// ocl.h/hip.h (y and z dimensions, lane id).
#pragma once

#define TID_Z ((int)__builtin_amdgcn_workitem_id_z())
#define LSIZE_Z ((int)__builtin_amdgcn_workgroup_size_z())
#define GROUP_Z ((int)__builtin_amdgcn_workgroup_id_z())
#define LANE_ID ((int)__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)))
