// Device-side printf from two blocks of two threads with integer, float,
// 64-bit and string arguments. The order of the lines across threads is not
// defined; the runner checks that each expected line appears (see the
// expect-stdout lines).
//
// hip-test expect-stdout: printf block 0 thread 0: i=0 x=0.50 big=1099511627776 s=rocjitsu
// hip-test expect-stdout: printf block 0 thread 1: i=1 x=1.50 big=1099511627777 s=rocjitsu
// hip-test expect-stdout: printf block 1 thread 0: i=2 x=2.50 big=1099511627778 s=rocjitsu
// hip-test expect-stdout: printf block 1 thread 1: i=3 x=3.50 big=1099511627779 s=rocjitsu
// hip-test expect-stdout: printf done: 4 lines
#define TEST_NAME "printf"
#include "common.h"

__global__ void say_hello(const char *tag) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  long long big = (1ll << 40) + i;
  printf("printf block %d thread %d: i=%d x=%.2f big=%lld s=%s\n", (int)blockIdx.x, (int)threadIdx.x, i,
         (double)(i + 0.5f), big, tag);
}

// Not const: a const namespace-scope variable would have internal linkage.
__device__ char kTag[] = "rocjitsu";

__global__ void say_done(int lines) {
  if (threadIdx.x == 0) printf("printf done: %d lines\n", lines);
}

int main() {
  const char *tag;
  HIP_CHECK(hipGetSymbolAddress((void **)&tag, HIP_SYMBOL(kTag)));
  hipLaunchKernelGGL(say_hello, dim3(2), dim3(2), 0, 0, tag);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  hipLaunchKernelGGL(say_done, dim3(1), dim3(64), 0, 0, 4);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  std::fflush(stdout);
  return pass();
}
