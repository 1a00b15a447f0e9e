// A kernel that writes through a bad pointer. A real GPU raises a memory
// access fault; ROCr reports it on stderr ("Memory access fault by GPU
// node-N (Agent handle: ...) on address ... Reason: ...") and aborts the
// process. The program must neither hang nor finish normally: reaching the
// end of main is a failure.
//
// hip-test expect-exit: nonzero
// hip-test expect-stderr: Memory access fault by GPU node-
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
  if (err != hipSuccess) {
    fail("hipDeviceSynchronize returned %d (%s) instead of the runtime aborting on the fault", (int)err,
         hipGetErrorString(err));
  }
  fail("the kernel writing through %p completed without a memory access fault", (void *)bad);
}
