// c = a + b over a length that is not a multiple of the block size; fp32
// addition is exactly rounded on both sides, so the comparison is exact.
#define TEST_NAME "vector_add"
#include "common.h"

#include <vector>

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = (1 << 20) + 7;
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (int i = 0; i < n; i++) {
    a[i] = 0.5f * (float)i;
    b[i] = (float)(i % 97) - 3.25f;
  }
  float *da, *db, *dc;
  size_t bytes = n * sizeof(float);
  HIP_CHECK(hipMalloc(&da, bytes));
  HIP_CHECK(hipMalloc(&db, bytes));
  HIP_CHECK(hipMalloc(&dc, bytes));
  HIP_CHECK(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(dc, 0, bytes));
  const int block = 256;
  hipLaunchKernelGGL(vector_add, dim3((n + block - 1) / block), dim3(block), 0, 0, da, db, dc, n);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(c.data(), dc, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    float want = a[i] + b[i];
    EXPECT(c[i] == want, "c[%d] = %.9g, expected %.9g", i, c[i], want);
  }
  HIP_CHECK(hipFree(da));
  HIP_CHECK(hipFree(db));
  HIP_CHECK(hipFree(dc));
  return pass();
}
