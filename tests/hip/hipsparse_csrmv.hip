// hipSPARSE csrmv (y = alpha * A * x + beta * y) on a random sparse matrix,
// against a CPU reference. Entries are small multiples of 1/4 and 1/8, so
// every product and partial sum is exact in fp32 whatever the summation
// order: the comparison is exact.
//
// hip-test libs: -lhipsparse
// hip-test needs: hipsparse
#define TEST_NAME "hipsparse_csrmv"
#include "common.h"

#include <hipsparse/hipsparse.h>

#include <vector>

#define SPARSE_CHECK(expr)                                                                      \
  do {                                                                                          \
    hipsparseStatus_t st_ = (expr);                                                             \
    if (st_ != HIPSPARSE_STATUS_SUCCESS) fail("%s:%d: %s returned hipsparse status %d", __FILE__, \
                                              __LINE__, #expr, (int)st_);                         \
  } while (0)

#pragma clang diagnostic ignored "-Wdeprecated-declarations"

int main() {
  const int m = 1000, n = 800;
  Lcg rng(2024);
  std::vector<int> row_ptr(m + 1, 0), cols;
  std::vector<float> vals;
  for (int r = 0; r < m; r++) {
    for (int c = 0; c < n; c++) {
      if (rng.next() % 100 < 5) {
        cols.push_back(c);
        vals.push_back((float)rng.range(-16, 16) / 4.0f);
      }
    }
    // Some rows stay empty on purpose.
    if (r % 97 == 0) {
      cols.resize(row_ptr[r]);
      vals.resize(row_ptr[r]);
    }
    row_ptr[r + 1] = (int)cols.size();
  }
  const int nnz = (int)cols.size();
  std::vector<float> x(n), y0(m), y(m);
  for (auto &v : x) v = (float)rng.range(-8, 8) / 8.0f;
  for (auto &v : y0) v = (float)rng.range(-40, 40) / 4.0f;
  const float alpha = 2.0f, beta = -1.0f;

  std::vector<float> want(m);
  for (int r = 0; r < m; r++) {
    double acc = 0;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; k++) acc += (double)vals[k] * x[cols[k]];
    want[r] = (float)(alpha * acc + beta * y0[r]);
  }

  int *d_row, *d_col;
  float *d_val, *d_x, *d_y;
  HIP_CHECK(hipMalloc(&d_row, (m + 1) * sizeof(int)));
  HIP_CHECK(hipMalloc(&d_col, nnz * sizeof(int)));
  HIP_CHECK(hipMalloc(&d_val, nnz * sizeof(float)));
  HIP_CHECK(hipMalloc(&d_x, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&d_y, m * sizeof(float)));
  HIP_CHECK(hipMemcpy(d_row, row_ptr.data(), (m + 1) * sizeof(int), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(d_col, cols.data(), nnz * sizeof(int), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(d_val, vals.data(), nnz * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(d_x, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(d_y, y0.data(), m * sizeof(float), hipMemcpyHostToDevice));

  hipsparseHandle_t handle;
  hipsparseMatDescr_t descr;
  SPARSE_CHECK(hipsparseCreate(&handle));
  SPARSE_CHECK(hipsparseCreateMatDescr(&descr));
  SPARSE_CHECK(hipsparseSetMatType(descr, HIPSPARSE_MATRIX_TYPE_GENERAL));
  SPARSE_CHECK(hipsparseSetMatIndexBase(descr, HIPSPARSE_INDEX_BASE_ZERO));
  SPARSE_CHECK(hipsparseScsrmv(handle, HIPSPARSE_OPERATION_NON_TRANSPOSE, m, n, nnz, &alpha, descr, d_val, d_row,
                               d_col, d_x, &beta, d_y));
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(y.data(), d_y, m * sizeof(float), hipMemcpyDeviceToHost));
  for (int r = 0; r < m; r++) {
    EXPECT(y[r] == want[r], "y[%d] = %.9g, expected %.9g (row with %d entries)", r, y[r], want[r],
           row_ptr[r + 1] - row_ptr[r]);
  }

  SPARSE_CHECK(hipsparseDestroyMatDescr(descr));
  SPARSE_CHECK(hipsparseDestroy(handle));
  HIP_CHECK(hipFree(d_row));
  HIP_CHECK(hipFree(d_col));
  HIP_CHECK(hipFree(d_val));
  HIP_CHECK(hipFree(d_x));
  HIP_CHECK(hipFree(d_y));
  std::printf("hipsparse_csrmv: %d x %d, %d nonzeros\n", m, n, nnz);
  return pass();
}
