// rocBLAS GEMM wall time per call: C = A * B for N x N matrices of f32
// (rocblas_sgemm) or f16 (rocblas_hgemm), column-major, no transposes.
//
//   gemm s|h N [CALLS]
//
// The first call (which loads the library's kernels) is timed apart; then
// CALLS more calls (default 2) are timed together, each followed by a
// device synchronisation. The inputs are small integers, so every product
// is exact in f32; 256 entries of C are checked against a CPU computation
// (f16: within its rounding of the exact result).
#include "bench.h"

#include <hip/hip_fp16.h>
#include <rocblas/rocblas.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#define ROCBLAS_CHECK(expr)                                                                  \
  do {                                                                                       \
    rocblas_status st_ = (expr);                                                             \
    if (st_ != rocblas_status_success) {                                                     \
      std::printf("FAIL %s:%d: %s returned %s\n", __FILE__, __LINE__, #expr,               \
                  rocblas_status_to_string(st_));                                            \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 3 || (std::string(argv[1]) != "s" && std::string(argv[1]) != "h")) {
    std::printf("usage: gemm s|h N [CALLS]\n");
    return 2;
  }
  const bool half = std::string(argv[1]) == "h";
  const int n = std::atoi(argv[2]);
  const int calls = argc > 3 ? std::atoi(argv[3]) : 2;
  const size_t elems = (size_t)n * n;
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> dist(-2, 2);
  std::vector<float> a(elems), b(elems);
  for (auto &x : a) x = (float)dist(rng);
  for (auto &x : b) x = (float)dist(rng);

  rocblas_handle h;
  ROCBLAS_CHECK(rocblas_create_handle(&h));
  const size_t esize = half ? 2 : 4;
  void *da, *db, *dc;
  HIP_CHECK(hipMalloc(&da, elems * esize));
  HIP_CHECK(hipMalloc(&db, elems * esize));
  HIP_CHECK(hipMalloc(&dc, elems * esize));
  if (half) {
    std::vector<__half> ha(elems), hb(elems);
    for (size_t i = 0; i < elems; i++) {
      ha[i] = __float2half(a[i]);
      hb[i] = __float2half(b[i]);
    }
    HIP_CHECK(hipMemcpy(da, ha.data(), elems * 2, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(db, hb.data(), elems * 2, hipMemcpyHostToDevice));
  } else {
    HIP_CHECK(hipMemcpy(da, a.data(), elems * 4, hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(db, b.data(), elems * 4, hipMemcpyHostToDevice));
  }
  HIP_CHECK(hipMemset(dc, 0, elems * esize));

  auto call = [&]() {
    if (half) {
      const rocblas_half one = {0x3c00}, zero = {0};
      ROCBLAS_CHECK(rocblas_hgemm(h, rocblas_operation_none, rocblas_operation_none, n, n, n, &one,
                                  (const rocblas_half *)da, n, (const rocblas_half *)db, n, &zero,
                                  (rocblas_half *)dc, n));
    } else {
      const float one = 1.0f, zero = 0.0f;
      ROCBLAS_CHECK(rocblas_sgemm(h, rocblas_operation_none, rocblas_operation_none, n, n, n, &one,
                                  (const float *)da, n, (const float *)db, n, &zero, (float *)dc, n));
    }
    HIP_CHECK(hipDeviceSynchronize());
  };
  double t0 = now_s();
  call();
  double first = now_s() - t0;
  t0 = now_s();
  for (int i = 0; i < calls; i++) call();
  double per_call = (now_s() - t0) / calls;

  // Check 256 entries against the exact products.
  std::vector<float> c(elems);
  if (half) {
    std::vector<__half> hc(elems);
    HIP_CHECK(hipMemcpy(hc.data(), dc, elems * 2, hipMemcpyDeviceToHost));
    for (size_t i = 0; i < elems; i++) c[i] = __half2float(hc[i]);
  } else {
    HIP_CHECK(hipMemcpy(c.data(), dc, elems * 4, hipMemcpyDeviceToHost));
  }
  std::uniform_int_distribution<int> pick(0, n - 1);
  for (int k = 0; k < 256; k++) {
    int i = pick(rng), j = pick(rng);
    double want = 0;
    for (int l = 0; l < n; l++) want += (double)a[(size_t)l * n + i] * b[(size_t)j * n + l];
    double got = c[(size_t)j * n + i];
    // f16 holds integers exactly up to 2048; beyond, within its spacing.
    double tol = half ? std::max(1.0, std::ldexp(1.0, (int)std::ilogb(std::fabs(want) + 1) - 10)) : 0.0;
    if (std::fabs(got - want) > tol) {
      std::printf("FAIL C[%d][%d] = %g, expected %g\n", i, j, got, want);
      return 1;
    }
  }
  const char *t = half ? "hgemm" : "sgemm";
  char key[64];
  std::snprintf(key, sizeof key, "%s_%d_first", t, n);
  report(key, first, "s");
  std::snprintf(key, sizeof key, "%s_%d_per_call", t, n);
  report(key, per_call, "s");
  std::snprintf(key, sizeof key, "%s_%d_rate", t, n);
  report(key, 2.0 * n * (double)n * n / per_call / 1e9, "GFLOP/s");
  rocblas_destroy_handle(h);
  return 0;
}
