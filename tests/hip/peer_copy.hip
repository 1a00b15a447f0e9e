// Two GPUs of one XGMI hive: device 0 can access device 1's memory and the
// other way round; hipMemcpyPeer copies between them; with peer access
// enabled a kernel on device 1 reads device 0's buffer directly; a
// device-to-device hipMemcpy across the two works with unified addresses.
// hip-test gpus: 2
#define TEST_NAME "peer_copy"
#include "common.h"

#include <vector>

__global__ void fill(int *p, int n, int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + i;
}

__global__ void scale_from(const int *peer, int *out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = peer[i] * k;
}

int main() {
  int count = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  EXPECT(count == 2, "hipGetDeviceCount gave %d, the config has 2 GPUs", count);
  int can01 = 0, can10 = 0;
  HIP_CHECK(hipDeviceCanAccessPeer(&can01, 0, 1));
  HIP_CHECK(hipDeviceCanAccessPeer(&can10, 1, 0));
  EXPECT(can01 == 1 && can10 == 1, "peer access 0->1 %d, 1->0 %d; both GPUs are in one hive", can01, can10);
  const int n = 1 << 16;
  const size_t bytes = n * sizeof(int);
  int *a, *b, *c;
  HIP_CHECK(hipSetDevice(0));
  HIP_CHECK(hipMalloc(&a, bytes));
  HIP_CHECK(hipSetDevice(1));
  HIP_CHECK(hipMalloc(&b, bytes));
  HIP_CHECK(hipMalloc(&c, bytes));
  HIP_CHECK(hipSetDevice(0));
  hipLaunchKernelGGL(fill, dim3(n / 256), dim3(256), 0, 0, a, n, 5);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<int> h(n);

  HIP_CHECK(hipMemcpyPeer(b, 1, a, 0, bytes));
  HIP_CHECK(hipSetDevice(1));
  HIP_CHECK(hipMemcpy(h.data(), b, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(h[i] == 5 + i, "hipMemcpyPeer: element %d is %d", i, h[i]);

  HIP_CHECK(hipDeviceEnablePeerAccess(0, 0));
  hipLaunchKernelGGL(scale_from, dim3(n / 256), dim3(256), 0, 0, a, c, n, 3);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(h.data(), c, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(h[i] == 3 * (5 + i), "peer read: element %d is %d", i, h[i]);

  HIP_CHECK(hipSetDevice(0));
  HIP_CHECK(hipDeviceEnablePeerAccess(1, 0));
  HIP_CHECK(hipMemcpy(a, c, bytes, hipMemcpyDeviceToDevice));
  HIP_CHECK(hipMemcpy(h.data(), a, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(h[i] == 3 * (5 + i), "cross-device hipMemcpy: element %d is %d", i, h[i]);
  HIP_CHECK(hipFree(a));
  HIP_CHECK(hipSetDevice(1));
  HIP_CHECK(hipFree(b));
  HIP_CHECK(hipFree(c));
  return pass();
}
