// Shared by the HIP end-to-end programs: every program defines TEST_NAME,
// checks every HIP call with HIP_CHECK, and ends with exactly one line,
// `PASS <name>` (exit 0) or `FAIL <name>: <what>` (exit 1).
#pragma once

#include <hip/hip_runtime.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#ifndef TEST_NAME
#error "define TEST_NAME before including common.h"
#endif

[[noreturn]] __attribute__((format(printf, 1, 2))) static inline void fail(const char *fmt, ...) {
  std::fflush(stdout);
  std::printf("FAIL %s: ", TEST_NAME);
  va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
  std::printf("\n");
  std::fflush(stdout);
  std::exit(1);
}

static inline int pass() {
  std::printf("PASS %s\n", TEST_NAME);
  std::fflush(stdout);
  return 0;
}

#define HIP_CHECK(expr)                                                                  \
  do {                                                                                   \
    hipError_t hip_check_err_ = (expr);                                                  \
    if (hip_check_err_ != hipSuccess) {                                                  \
      fail("%s:%d: %s returned %d (%s)", __FILE__, __LINE__, #expr, (int)hip_check_err_, \
           hipGetErrorString(hip_check_err_));                                           \
    }                                                                                    \
  } while (0)

// After a kernel launch: the launch itself and (with sync) its execution.
#define LAUNCH_CHECK() HIP_CHECK(hipGetLastError())

#define EXPECT(cond, ...)   \
  do {                      \
    if (!(cond)) {          \
      fail(__VA_ARGS__);    \
    }                       \
  } while (0)

// A small deterministic generator for test data (the same on every host).
struct Lcg {
  unsigned long long state;
  explicit Lcg(unsigned long long seed) : state(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  unsigned next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(state >> 33);
  }
  // Uniform integer in [lo, hi].
  int range(int lo, int hi) { return lo + (int)(next() % (unsigned)(hi - lo + 1)); }
};
