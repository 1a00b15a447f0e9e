// A kernel that writes through a bad pointer. A real GPU raises a memory
// access fault, and the emulator reports it (kernel, wave, PC, address).
// ROCr up to 6.x then prints "Memory access fault by GPU node-N (Agent
// handle: ...) on address ... Reason: ..." and aborts the process; HIP 7
// instead returns hipErrorIllegalAddress from the next synchronisation.
// The program must neither hang nor finish normally.
//
// hip-test expect-exit: nonzero
// hip-test expect-stderr: rocjitsu: GPU node-1: memory access fault on address 0x100
// hip-test expect-stderr: Memory access fault by GPU node- || fault: hipDeviceSynchronize reported hipErrorIllegalAddress
// hip-test expect-pass-line: no
#define TEST_NAME "fault"
#include "common.h"

// An address no allocation uses: the first page, never mapped in a process.
__global__ void write_bad(int *bad, int value) {
  bad[threadIdx.x] = value;
}

int main() {
  int *bad = reinterpret_cast<int *>(0x100);
  std::printf("fault: launching a kernel that writes to %p\n", (void *)bad);
  std::fflush(stdout);
  hipLaunchKernelGGL(write_bad, dim3(1), dim3(64), 0, 0, bad, 7);
  LAUNCH_CHECK();
  hipError_t err = hipDeviceSynchronize();
  if (err == hipErrorIllegalAddress) {
    std::fprintf(stderr, "fault: hipDeviceSynchronize reported hipErrorIllegalAddress (%s)\n",
                 hipGetErrorString(err));
    return 1;
  }
  if (err != hipSuccess) {
    fail("hipDeviceSynchronize returned %d (%s) instead of the runtime aborting on the fault", (int)err,
         hipGetErrorString(err));
  }
  fail("the kernel writing through %p completed without a memory access fault", (void *)bad);
}
