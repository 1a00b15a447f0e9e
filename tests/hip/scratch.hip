// Private (scratch) memory: each thread keeps a 256-int array indexed with
// data-dependent subscripts, which the compiler cannot keep in registers, so
// the kernel needs a scratch allocation from the runtime (about 1 KiB per
// lane). A recursive device function is checked too. Results are exact
// integers.
#define TEST_NAME "scratch"
#include "common.h"

#include <vector>

constexpr int kLen = 256;

__device__ __noinline__ int collatz_steps(unsigned x, int depth) {
  if (x <= 1 || depth > 500) return depth;
  return collatz_steps((x & 1) ? 3 * x + 1 : x / 2, depth + 1);
}

__global__ void private_array(const int *seeds, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int buf[kLen];
  unsigned s = (unsigned)seeds[i];
  for (int k = 0; k < kLen; k++) {
    s = s * 1103515245u + 12345u;
    buf[k] = (int)(s >> 16);
  }
  // Data-dependent reads and writes.
  unsigned acc = 0;
  for (int k = 0; k < kLen; k++) {
    int j = (buf[k] ^ k) & (kLen - 1);
    acc += (unsigned)buf[j];
    buf[(j * 7 + 3) & (kLen - 1)] ^= (int)acc;
  }
  out[2 * i] = (int)(acc + (unsigned)buf[acc & (kLen - 1)]);
  out[2 * i + 1] = collatz_steps((unsigned)seeds[i] % 1000u + 1u, 0);
}

static void reference(int seed, int *r0, int *r1) {
  int buf[kLen];
  unsigned s = (unsigned)seed;
  for (int k = 0; k < kLen; k++) {
    s = s * 1103515245u + 12345u;
    buf[k] = (int)(s >> 16);
  }
  unsigned acc = 0;
  for (int k = 0; k < kLen; k++) {
    int j = (buf[k] ^ k) & (kLen - 1);
    acc += (unsigned)buf[j];
    buf[(j * 7 + 3) & (kLen - 1)] ^= (int)acc;
  }
  *r0 = (int)(acc + (unsigned)buf[acc & (kLen - 1)]);
  unsigned x = (unsigned)seed % 1000u + 1u;
  int depth = 0;
  while (!(x <= 1 || depth > 500)) {
    x = (x & 1) ? 3 * x + 1 : x / 2;
    depth++;
  }
  *r1 = depth;
}

int main() {
  const int n = 5000, block = 128, grid = (n + block - 1) / block;
  std::vector<int> seeds(n), out(2 * n, -1);
  for (int i = 0; i < n; i++) seeds[i] = (int)((unsigned)i * 2654435u + 17u);
  int *dseeds, *dout;
  HIP_CHECK(hipMalloc(&dseeds, n * sizeof(int)));
  HIP_CHECK(hipMalloc(&dout, 2 * n * sizeof(int)));
  HIP_CHECK(hipMemcpy(dseeds, seeds.data(), n * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(private_array, dim3(grid), dim3(block), 0, 0, dseeds, dout, n);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(out.data(), dout, 2 * n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    int r0, r1;
    reference(seeds[i], &r0, &r1);
    EXPECT(out[2 * i] == r0, "thread %d: private-array result %d, expected %d", i, out[2 * i], r0);
    EXPECT(out[2 * i + 1] == r1, "thread %d: recursion depth %d, expected %d", i, out[2 * i + 1], r1);
  }
  HIP_CHECK(hipFree(dseeds));
  HIP_CHECK(hipFree(dout));
  return pass();
}
