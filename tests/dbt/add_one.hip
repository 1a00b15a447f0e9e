// The kernel tests/dbt/hsa_file_reader.cpp loads from a file (a bare code
// object: hipcc --cuda-device-only --no-gpu-bundle-output). Dispatched with
// 64-item workgroups; it reads no hidden arguments (the raw HSA dispatch
// fills only the pointer).
#include <hip/hip_runtime.h>

extern "C" __global__ void add_one(int* data) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  data[i] += 1;
}
