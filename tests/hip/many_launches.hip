// Hundreds of small kernels and copies from one process, each result
// checked: the daemon tests run several of these at once against one
// daemon (argument: a seed, so that concurrent clients compute different
// things, and the number of rounds).
// hip-test args: 1 200
#define TEST_NAME "many_launches"
#include "common.h"

#include <vector>

__global__ void step(const unsigned *in, unsigned *out, int n, unsigned k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2654435761u + k;
}

int main(int argc, char **argv) {
  unsigned seed = argc > 1 ? (unsigned)std::atoi(argv[1]) : 1;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 200;
  const int n = 4096;
  std::vector<unsigned> host(n), back(n);
  Lcg g(seed);
  for (unsigned &v : host) v = g.next();
  unsigned *a, *b;
  HIP_CHECK(hipMalloc(&a, n * sizeof(unsigned)));
  HIP_CHECK(hipMalloc(&b, n * sizeof(unsigned)));
  HIP_CHECK(hipMemcpy(a, host.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
  for (int r = 0; r < rounds; r++) {
    unsigned k = seed * 1000003u + (unsigned)r;
    hipLaunchKernelGGL(step, dim3(n / 256), dim3(256), 0, 0, a, b, n, k);
    LAUNCH_CHECK();
    for (unsigned &v : host) v = v * 2654435761u + k;
    std::swap(a, b);
    if (r % 10 == 9 || r == rounds - 1) {
      HIP_CHECK(hipMemcpy(back.data(), a, n * sizeof(unsigned), hipMemcpyDeviceToHost));
      for (int i = 0; i < n; i++)
        EXPECT(back[i] == host[i], "seed %u round %d: element %d is %u, expected %u", seed, r, i, back[i], host[i]);
    }
  }
  HIP_CHECK(hipFree(a));
  HIP_CHECK(hipFree(b));
  return pass();
}
