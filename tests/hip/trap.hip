// A kernel that calls __builtin_trap() (s_trap 2). A real GPU enters the
// trap handler, which reports EC_QUEUE_WAVE_ABORT (ROCm 6 and 7) or stores
// 0x80000000 into the queue's inactive signal (ROCm 5); ROCr calls the
// queue's error callback with HSA_STATUS_ERROR_EXCEPTION and HIP prints it
// and aborts (HIP 7 returns hipErrorLaunchFailure from the synchronisation).
// The program must neither hang nor finish normally.
//
// hip-test expect-exit: nonzero
// hip-test expect-stderr: rocjitsu: GPU node-1: a wave raised an exception (EC_QUEUE_WAVE_ABORT)
// hip-test expect-stderr: HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.
// hip-test expect-pass-line: no
// hip-test targets: gfx90a, gfx942
#define TEST_NAME "trap"
#include "common.h"

__global__ void trap(int *out, int n) {
  if ((int)threadIdx.x == n) {
    __builtin_trap();
  }
  out[threadIdx.x] = 1;
}

int main() {
  int *out = nullptr;
  HIP_CHECK(hipMalloc(&out, 64 * sizeof(int)));
  std::printf("trap: launching a kernel that calls __builtin_trap()\n");
  std::fflush(stdout);
  hipLaunchKernelGGL(trap, dim3(1), dim3(64), 0, 0, out, 5);
  LAUNCH_CHECK();
  hipError_t err = hipDeviceSynchronize();
  if (err == hipErrorLaunchFailure) {
    // HIP 7 returns the queue error from the synchronisation after its
    // callback printed it; HIP 5 and 6 abort in the callback.
    std::fprintf(stderr, "trap: hipDeviceSynchronize reported hipErrorLaunchFailure (%s)\n",
                 hipGetErrorString(err));
    return 1;
  }
  fail("hipDeviceSynchronize returned %d (%s) instead of the runtime reporting the trap", (int)err,
       hipGetErrorString(err));
}
