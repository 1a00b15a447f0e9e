// The signal_backtrace diagnostic: after hsa_init (so the hooks library is
// loaded and its handler installed when ROCJITSU_DBT_SIGNAL_BACKTRACE=1),
// the program writes through a null pointer in a function of its own. The
// handler must print the faulting address and a stack that names this
// program, then the process must still die of SIGSEGV.
#include <hsa/hsa.h>

#include <cstdio>

extern "C" __attribute__((noinline)) void write_through(volatile int* p) { *p = 42; }

int main() {
  if (hsa_init() != HSA_STATUS_SUCCESS) {
    printf("FAIL fatal_signal: hsa_init\n");
    return 1;
  }
  fflush(stdout);
  write_through(nullptr);
  printf("FAIL fatal_signal: the write through a null pointer returned\n");
  return 1;
}
