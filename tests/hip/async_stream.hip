// hipMemsetAsync, hipMemsetD32Async and hipMemcpyAsync (pinned and pageable
// host memory, device to device) on one stream around a kernel, synchronised
// once with hipStreamSynchronize: stream order alone must make it right.
#define TEST_NAME "async_stream"
#include "common.h"

#include <cstring>
#include <vector>

__global__ void add_index(int *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += i;
}

int main() {
  const int n = (1 << 18) + 5, block = 256, grid = (n + block - 1) / block;
  const size_t bytes = n * sizeof(int);
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  int *pinned_in, *pinned_out;
  HIP_CHECK(hipHostMalloc((void **)&pinned_in, bytes, hipHostMallocDefault));
  HIP_CHECK(hipHostMalloc((void **)&pinned_out, bytes, hipHostMallocDefault));
  std::vector<int> pageable_out(n, -1);
  for (int i = 0; i < n; i++) pinned_in[i] = 7 * i;
  std::memset(pinned_out, 0xFF, bytes);
  int *d, *d2;
  HIP_CHECK(hipMalloc(&d, bytes));
  HIP_CHECK(hipMalloc(&d2, bytes));

  // Bytes 0x01 everywhere, then words 1000 in [1000, 3000), then the first
  // 500 elements overwritten from pinned memory, then the kernel.
  const int a = 1000, b = 3000, head = 500;
  HIP_CHECK(hipMemsetAsync(d, 0x01, bytes, s));
  HIP_CHECK(hipMemsetD32Async((hipDeviceptr_t)(d + a), 1000, b - a, s));
  HIP_CHECK(hipMemcpyAsync(d, pinned_in, head * sizeof(int), hipMemcpyHostToDevice, s));
  hipLaunchKernelGGL(add_index, dim3(grid), dim3(block), 0, s, d, n);
  LAUNCH_CHECK();
  HIP_CHECK(hipMemcpyAsync(d2, d, bytes, hipMemcpyDeviceToDevice, s));
  HIP_CHECK(hipMemsetAsync(d, 0, bytes, s));
  HIP_CHECK(hipMemcpyAsync(pinned_out, d2, bytes, hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipMemcpyAsync(pageable_out.data(), d2, bytes, hipMemcpyDeviceToHost, s));
  HIP_CHECK(hipStreamSynchronize(s));

  for (int i = 0; i < n; i++) {
    int base = i < head ? 7 * i : (i >= a && i < b) ? 1000 : 0x01010101;
    int want = base + i;
    EXPECT(pinned_out[i] == want, "pinned result[%d] = %d, expected %d", i, pinned_out[i], want);
    EXPECT(pageable_out[i] == want, "pageable result[%d] = %d, expected %d", i, pageable_out[i], want);
  }
  // The final async memset reached d.
  std::vector<int> zeros(n, -1);
  HIP_CHECK(hipMemcpy(zeros.data(), d, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(zeros[i] == 0, "after hipMemsetAsync(0): d[%d] = %d", i, zeros[i]);

  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(d));
  HIP_CHECK(hipFree(d2));
  HIP_CHECK(hipHostFree(pinned_in));
  HIP_CHECK(hipHostFree(pinned_out));
  return pass();
}
