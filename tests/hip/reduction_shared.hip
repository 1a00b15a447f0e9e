// A tree reduction in static shared memory: each block sums its chunk, then
// one block sums the partial sums. Integer data, so the result is exact.
#define TEST_NAME "reduction_shared"
#include "common.h"

#include <vector>

constexpr int kBlock = 256;

__global__ void block_sum(const int *in, int *partial, int n) {
  __shared__ int sdata[kBlock];
  int tid = threadIdx.x;
  int i = blockIdx.x * (kBlock * 2) + tid;
  int v = 0;
  if (i < n) v += in[i];
  if (i + kBlock < n) v += in[i + kBlock];
  sdata[tid] = v;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
}

// One block strides over all partial sums.
__global__ void final_sum(const int *partial, int count, long long *total) {
  __shared__ long long sdata[kBlock];
  long long v = 0;
  for (int i = threadIdx.x; i < count; i += kBlock) v += partial[i];
  sdata[threadIdx.x] = v;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) sdata[threadIdx.x] += sdata[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *total = sdata[0];
}

int main() {
  const int n = (1 << 21) + 123;
  const int blocks = (n + 2 * kBlock - 1) / (2 * kBlock);
  std::vector<int> in(n);
  for (int i = 0; i < n; i++) in[i] = (int)((i * 7919u) % 2001u) - 1000;
  int *din, *dpartial;
  long long *dtotal;
  HIP_CHECK(hipMalloc(&din, n * sizeof(int)));
  HIP_CHECK(hipMalloc(&dpartial, blocks * sizeof(int)));
  HIP_CHECK(hipMalloc(&dtotal, sizeof(long long)));
  HIP_CHECK(hipMemcpy(din, in.data(), n * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(block_sum, dim3(blocks), dim3(kBlock), 0, 0, din, dpartial, n);
  LAUNCH_CHECK();
  hipLaunchKernelGGL(final_sum, dim3(1), dim3(kBlock), 0, 0, dpartial, blocks, dtotal);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());

  std::vector<int> partial(blocks);
  long long total = 0;
  HIP_CHECK(hipMemcpy(partial.data(), dpartial, blocks * sizeof(int), hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&total, dtotal, sizeof(long long), hipMemcpyDeviceToHost));
  long long want_total = 0;
  for (int b = 0; b < blocks; b++) {
    long long want = 0;
    for (int i = b * 2 * kBlock; i < (b + 1) * 2 * kBlock && i < n; i++) want += in[i];
    EXPECT(partial[b] == want, "block %d partial sum %d, expected %lld", b, partial[b], want);
    want_total += want;
  }
  EXPECT(total == want_total, "total %lld, expected %lld", total, want_total);
  HIP_CHECK(hipFree(din));
  HIP_CHECK(hipFree(dpartial));
  HIP_CHECK(hipFree(dtotal));
  return pass();
}
