// Kernels built separately with `hipcc --genco` and loaded by module_load.hip
// through hipModuleLoad.
#include <hip/hip_runtime.h>

extern "C" __device__ int module_bias;

__device__ int module_bias = 0;

extern "C" __global__ void scale_add(float *out, const float *in, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i] + b;
}

// Adds the module global to every element.
extern "C" __global__ void add_bias(int *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += module_bias;
}
