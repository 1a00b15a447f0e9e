// Dynamic shared memory (extern __shared__) sized at launch, alone and next
// to static shared memory: each block reverses its chunk through LDS. Sizes
// from one float per thread up to 48 KiB.
#define TEST_NAME "dynamic_shared"
#include "common.h"

#include <vector>

// Each block copies `per_thread` floats per thread into dynamic LDS and
// writes them back reversed within the block's chunk.
__global__ void reverse_chunks(const float *in, float *out, int per_thread) {
  extern __shared__ float dyn[];
  int chunk = blockDim.x * per_thread;
  int base = blockIdx.x * chunk;
  for (int k = 0; k < per_thread; k++) dyn[threadIdx.x + k * blockDim.x] = in[base + threadIdx.x + k * blockDim.x];
  __syncthreads();
  for (int k = 0; k < per_thread; k++) {
    int j = threadIdx.x + k * blockDim.x;
    out[base + j] = dyn[chunk - 1 - j];
  }
}

// Static and dynamic shared memory side by side: the static array holds a
// per-block offset that is added while reversing.
__global__ void reverse_with_static(const float *in, float *out) {
  __shared__ float offset[64];
  extern __shared__ float dyn[];
  if (threadIdx.x < 64) offset[threadIdx.x] = (float)(blockIdx.x * 64 + threadIdx.x);
  int base = blockIdx.x * blockDim.x;
  dyn[threadIdx.x] = in[base + threadIdx.x];
  __syncthreads();
  out[base + threadIdx.x] = dyn[blockDim.x - 1 - threadIdx.x] + offset[threadIdx.x % 64];
}

int main() {
  const int block = 256, blocks = 40;
  struct Case {
    int per_thread;  // 256 threads x per_thread floats x 4 bytes
  } cases[] = {{1}, {3}, {16}, {48}};  // 1 KiB, 3 KiB, 16 KiB, 48 KiB
  const int max_n = blocks * block * 48;
  std::vector<float> in(max_n), out(max_n);
  for (int i = 0; i < max_n; i++) in[i] = (float)(i % 4099) - 2000.0f;
  float *din, *dout;
  HIP_CHECK(hipMalloc(&din, max_n * sizeof(float)));
  HIP_CHECK(hipMalloc(&dout, max_n * sizeof(float)));
  HIP_CHECK(hipMemcpy(din, in.data(), max_n * sizeof(float), hipMemcpyHostToDevice));
  for (const Case &c : cases) {
    const int chunk = block * c.per_thread, n = blocks * chunk;
    const size_t shmem = chunk * sizeof(float);
    HIP_CHECK(hipMemset(dout, 0, max_n * sizeof(float)));
    hipLaunchKernelGGL(reverse_chunks, dim3(blocks), dim3(block), shmem, 0, din, dout, c.per_thread);
    LAUNCH_CHECK();
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
      int b = i / chunk, j = i % chunk;
      float want = in[b * chunk + chunk - 1 - j];
      EXPECT(out[i] == want, "%zu B of dynamic LDS: out[%d] = %g, expected %g", shmem, i, out[i], want);
    }
  }
  {
    const int n = blocks * block;
    HIP_CHECK(hipMemset(dout, 0, max_n * sizeof(float)));
    hipLaunchKernelGGL(reverse_with_static, dim3(blocks), dim3(block), block * sizeof(float), 0, din, dout);
    LAUNCH_CHECK();
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
      int b = i / block, t = i % block;
      float want = in[b * block + block - 1 - t] + (float)(b * 64 + t % 64);
      EXPECT(out[i] == want, "static + dynamic LDS: out[%d] = %g, expected %g", i, out[i], want);
    }
  }
  HIP_CHECK(hipFree(din));
  HIP_CHECK(hipFree(dout));
  return pass();
}
