// Shared by the [kmd] benchmarks: HIP error checks and the result format.
// Each figure is printed as one line, `BENCH <key> <value> <unit>`, which
// scripts/bench_kmd.sh collects into its table. A benchmark whose results
// are wrong prints `FAIL <what>` and exits 1: its figures mean nothing.
#pragma once

#include <hip/hip_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define HIP_CHECK(expr)                                                                                      \
  do {                                                                                                       \
    hipError_t bench_err_ = (expr);                                                                          \
    if (bench_err_ != hipSuccess) {                                                                          \
      std::printf("FAIL %s:%d: %s returned %d (%s)\n", __FILE__, __LINE__, #expr, (int)bench_err_,         \
                  hipGetErrorString(bench_err_));                                                            \
      std::exit(1);                                                                                          \
    }                                                                                                        \
  } while (0)

static inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The q-quantile (0..1) of the samples, nearest rank.
static inline double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  size_t i = (size_t)(q * (double)(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

static inline void report(const char *key, double value, const char *unit) {
  if (value == (double)(long long)value) {
    std::printf("BENCH %s %lld %s\n", key, (long long)value, unit);
  } else {
    std::printf("BENCH %s %.6g %s\n", key, value, unit);
  }
  std::fflush(stdout);
}
