// A kernel that executes an illegal instruction: the word 0xffffffff, which
// no GFX9 encoding covers, emitted with inline asm. A real GPU traps the
// wave; ROCr's trap handler reports EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION (ROCm
// 6 and 7, through KFD's exception payload) or stores 0x40000000 into the
// queue's inactive signal (ROCm 5, whose thunk does not enable KFD's
// exception reporting), and ROCr calls the queue's error callback with
// HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION, on which HIP prints the status and
// aborts (HIP 7 returns hipErrorLaunchFailure from the synchronisation).
// The emulator reports the wave and the instruction itself.
// The program must neither hang nor finish normally.
//
// hip-test expect-exit: nonzero
// hip-test expect-stderr: rocjitsu: GPU node-1: a wave raised an exception (EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION)
// hip-test expect-stderr: HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent attempted to execute an illegal shader instruction.
// hip-test expect-pass-line: no
// hip-test targets: gfx90a, gfx942
#define TEST_NAME "illegal_instruction"
#include "common.h"

__global__ void illegal(int *out) {
  out[threadIdx.x] = 1;
  asm volatile(".long 0xffffffff");
  out[threadIdx.x] = 2;
}

int main() {
  int *out = nullptr;
  HIP_CHECK(hipMalloc(&out, 64 * sizeof(int)));
  std::printf("illegal_instruction: launching a kernel that executes 0xffffffff\n");
  std::fflush(stdout);
  hipLaunchKernelGGL(illegal, dim3(1), dim3(64), 0, 0, out);
  LAUNCH_CHECK();
  hipError_t err = hipDeviceSynchronize();
  if (err == hipErrorLaunchFailure) {
    // HIP 7 returns the queue error from the synchronisation after its
    // callback printed it; HIP 5 and 6 abort in the callback.
    std::fprintf(stderr, "illegal_instruction: hipDeviceSynchronize reported hipErrorLaunchFailure (%s)\n",
                 hipGetErrorString(err));
    return 1;
  }
  fail("hipDeviceSynchronize returned %d (%s) instead of the runtime reporting the illegal instruction",
       (int)err, hipGetErrorString(err));
}
