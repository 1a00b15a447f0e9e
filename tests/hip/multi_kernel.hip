// Many kernels in flight before one hipDeviceSynchronize: a dependent chain
// on the null stream (each kernel reads the previous one's output) and
// independent chains on four more streams.
#define TEST_NAME "multi_kernel"
#include "common.h"

#include <vector>

__global__ void step(const int *in, int *out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 3 + k;
}

int main() {
  const int n = 3000, block = 64, grid = (n + block - 1) / block;
  const int chain = 24, nstreams = 4, per_stream = 8;
  const size_t bytes = n * sizeof(int);

  // The host reference: x -> 3x + k, applied for k = 1..steps (wrapping in
  // 32 bits as the GPU does).
  auto reference = [](int x0, int steps) {
    unsigned x = (unsigned)x0;
    for (int k = 1; k <= steps; k++) x = x * 3u + (unsigned)k;
    return (int)x;
  };

  std::vector<int> init(n);
  for (int i = 0; i < n; i++) init[i] = i - 1500;

  // Null-stream chain, ping-ponging between two buffers.
  int *ping, *pong;
  HIP_CHECK(hipMalloc(&ping, bytes));
  HIP_CHECK(hipMalloc(&pong, bytes));
  HIP_CHECK(hipMemcpy(ping, init.data(), bytes, hipMemcpyHostToDevice));

  // Stream chains, each with its own pair of buffers.
  hipStream_t streams[nstreams];
  int *sbuf[nstreams][2];
  for (int s = 0; s < nstreams; s++) {
    HIP_CHECK(hipStreamCreateWithFlags(&streams[s], hipStreamNonBlocking));
    HIP_CHECK(hipMalloc(&sbuf[s][0], bytes));
    HIP_CHECK(hipMalloc(&sbuf[s][1], bytes));
    HIP_CHECK(hipMemcpy(sbuf[s][0], init.data(), bytes, hipMemcpyHostToDevice));
  }

  // Enqueue everything, interleaving the streams, without waiting.
  for (int k = 1; k <= chain; k++) {
    int *src = (k % 2) ? ping : pong, *dst = (k % 2) ? pong : ping;
    hipLaunchKernelGGL(step, dim3(grid), dim3(block), 0, 0, src, dst, n, k);
    LAUNCH_CHECK();
    if (k <= per_stream) {
      for (int s = 0; s < nstreams; s++) {
        hipLaunchKernelGGL(step, dim3(grid), dim3(block), 0, streams[s], sbuf[s][(k + 1) % 2], sbuf[s][k % 2], n,
                           k);
        LAUNCH_CHECK();
      }
    }
  }
  HIP_CHECK(hipDeviceSynchronize());

  std::vector<int> got(n);
  HIP_CHECK(hipMemcpy(got.data(), (chain % 2) ? pong : ping, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    int want = reference(init[i], chain);
    EXPECT(got[i] == want, "null-stream chain of %d kernels: out[%d] = %d, expected %d", chain, i, got[i], want);
  }
  for (int s = 0; s < nstreams; s++) {
    HIP_CHECK(hipMemcpy(got.data(), sbuf[s][per_stream % 2], bytes, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
      int want = reference(init[i], per_stream);
      EXPECT(got[i] == want, "stream %d chain of %d kernels: out[%d] = %d, expected %d", s, per_stream, i, got[i],
             want);
    }
    HIP_CHECK(hipStreamDestroy(streams[s]));
    HIP_CHECK(hipFree(sbuf[s][0]));
    HIP_CHECK(hipFree(sbuf[s][1]));
  }
  HIP_CHECK(hipFree(ping));
  HIP_CHECK(hipFree(pong));
  return pass();
}
