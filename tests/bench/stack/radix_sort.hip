// rocPRIM device radix sort of N 32-bit keys (default 16 Mi), wall time of
// one sort after a first one (which loads the kernels). The result is
// checked: ascending, and the same multiset of keys (sum and xor).
//
//   radix_sort [N]
#include "bench.h"

#include <cstring>
#include <rocprim/rocprim.hpp>

#include <random>

int main(int argc, char **argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (size_t)16 << 20;
  std::vector<unsigned> keys(n);
  std::mt19937 rng(42);
  unsigned long long sum = 0, x = 0;
  for (auto &k : keys) {
    k = rng();
    sum += k;
    x ^= k;
  }
  unsigned *in, *out;
  HIP_CHECK(hipMalloc(&in, n * 4));
  HIP_CHECK(hipMalloc(&out, n * 4));
  HIP_CHECK(hipMemcpy(in, keys.data(), n * 4, hipMemcpyHostToDevice));
  size_t temp_bytes = 0;
  HIP_CHECK(rocprim::radix_sort_keys(nullptr, temp_bytes, in, out, n));
  void *temp;
  HIP_CHECK(hipMalloc(&temp, temp_bytes));
  double t0 = now_s();
  HIP_CHECK(rocprim::radix_sort_keys(temp, temp_bytes, in, out, n));
  HIP_CHECK(hipDeviceSynchronize());
  double first = now_s() - t0;
  t0 = now_s();
  HIP_CHECK(rocprim::radix_sort_keys(temp, temp_bytes, in, out, n));
  HIP_CHECK(hipDeviceSynchronize());
  double t = now_s() - t0;
  HIP_CHECK(hipMemcpy(keys.data(), out, n * 4, hipMemcpyDeviceToHost));
  unsigned long long s2 = 0, x2 = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && keys[i - 1] > keys[i]) {
      std::printf("FAIL keys[%zu] = %u after %u\n", i, keys[i], keys[i - 1]);
      return 1;
    }
    s2 += keys[i];
    x2 ^= keys[i];
  }
  if (s2 != sum || x2 != x) {
    std::printf("FAIL the sorted keys are not the input's\n");
    return 1;
  }
  report("radix_sort_keys", (double)n, "keys");
  report("radix_sort_first", first, "s");
  report("radix_sort_time", t, "s");
  report("radix_sort_rate", (double)n / t / 1e6, "Mkeys/s");
  return 0;
}
