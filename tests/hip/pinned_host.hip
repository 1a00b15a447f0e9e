// Pinned host memory: a kernel reads and writes hipHostMalloc memory
// directly (through hipHostGetDevicePointer), and memory registered with
// hipHostRegister; copies between pinned memory and device memory.
#define TEST_NAME "pinned_host"
#include "common.h"

#include <cstdlib>
#include <cstring>

__global__ void scale(const int *in, int *out, int n, int mul, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * mul + add;
}

int main() {
  const int n = 100003, block = 128, grid = (n + block - 1) / block;
  const size_t bytes = n * sizeof(int);

  // 1. hipHostMalloc input and output, used by the kernel in place.
  int *hin, *hout;
  HIP_CHECK(hipHostMalloc((void **)&hin, bytes, hipHostMallocDefault));
  HIP_CHECK(hipHostMalloc((void **)&hout, bytes, hipHostMallocDefault));
  for (int i = 0; i < n; i++) {
    hin[i] = i - 5000;
    hout[i] = -1;
  }
  int *din, *dout;
  HIP_CHECK(hipHostGetDevicePointer((void **)&din, hin, 0));
  HIP_CHECK(hipHostGetDevicePointer((void **)&dout, hout, 0));
  hipLaunchKernelGGL(scale, dim3(grid), dim3(block), 0, 0, din, dout, n, 3, 1);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) {
    EXPECT(hout[i] == hin[i] * 3 + 1, "hipHostMalloc output[%d] = %d, expected %d", i, hout[i], hin[i] * 3 + 1);
  }

  // 2. Pinned <-> device copies.
  int *dev;
  HIP_CHECK(hipMalloc(&dev, bytes));
  HIP_CHECK(hipMemcpy(dev, hin, bytes, hipMemcpyHostToDevice));
  std::memset(hout, 0, bytes);
  HIP_CHECK(hipMemcpy(hout, dev, bytes, hipMemcpyDeviceToHost));
  EXPECT(std::memcmp(hout, hin, bytes) == 0, "pinned -> device -> pinned copy differs");
  // The kernel reads device memory and writes pinned host memory.
  hipLaunchKernelGGL(scale, dim3(grid), dim3(block), 0, 0, dev, dout, n, -2, 7);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) {
    EXPECT(hout[i] == hin[i] * -2 + 7, "device -> pinned output[%d] = %d, expected %d", i, hout[i], hin[i] * -2 + 7);
  }

  // 3. Ordinary malloc'd memory registered with hipHostRegister.
  int *reg = (int *)std::malloc(bytes);
  EXPECT(reg != nullptr, "malloc(%zu) failed", bytes);
  for (int i = 0; i < n; i++) reg[i] = 0x7777;
  HIP_CHECK(hipHostRegister(reg, bytes, hipHostRegisterMapped));
  int *dreg;
  HIP_CHECK(hipHostGetDevicePointer((void **)&dreg, reg, 0));
  hipLaunchKernelGGL(scale, dim3(grid), dim3(block), 0, 0, din, dreg, n, 5, -3);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) {
    EXPECT(reg[i] == hin[i] * 5 - 3, "hipHostRegister output[%d] = %d, expected %d", i, reg[i], hin[i] * 5 - 3);
  }
  HIP_CHECK(hipHostUnregister(reg));
  std::free(reg);

  HIP_CHECK(hipFree(dev));
  HIP_CHECK(hipHostFree(hin));
  HIP_CHECK(hipHostFree(hout));
  return pass();
}
