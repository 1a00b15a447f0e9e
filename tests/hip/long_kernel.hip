// A kernel that runs for a long time (a busy loop for argv[1] million
// iterations per work-item) after allocating memory: the daemon tests kill
// this program with SIGKILL while its kernel runs and check that the daemon
// frees what it owned. Built with the others, not run by the suite.
// hip-test run: no
#define TEST_NAME "long_kernel"
#include "common.h"

__global__ void spin(unsigned *out, unsigned iters) {
  unsigned v = threadIdx.x;
  for (unsigned i = 0; i < iters; i++) v = v * 1664525u + 1013904223u;
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

int main(int argc, char **argv) {
  unsigned iters = (unsigned)(argc > 1 ? std::atoi(argv[1]) : 100) * 1000000u;
  unsigned *out;
  HIP_CHECK(hipMalloc(&out, 1 << 20));
  hipLaunchKernelGGL(spin, dim3(64), dim3(256), 0, 0, out, iters);
  LAUNCH_CHECK();
  std::printf("long_kernel: launched\n");
  std::fflush(stdout);
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipFree(out));
  return pass();
}
