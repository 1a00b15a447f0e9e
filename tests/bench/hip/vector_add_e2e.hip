// A 16M-float vector add end to end: allocate, copy the inputs in, run the
// kernel, copy the result out and check it against the CPU; the wall time of
// each phase and of the whole is reported. argv[1] overrides the length.
#include "bench.h"

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char **argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 16l << 20;
  if (n < 1 || n > (1l << 30)) {
    std::printf("FAIL usage: vector_add_e2e [LENGTH in 1..2^30]\n");
    return 1;
  }
  size_t bytes = (size_t)n * sizeof(float);
  std::vector<float> a(n), b(n), c(n, 0.0f);
  for (long i = 0; i < n; i++) {
    a[i] = (float)(i % 1000) * 0.25f;
    b[i] = (float)(i % 777) - 100.0f;
  }
  // hipFree(nullptr) initialises the runtime outside the timed phases.
  HIP_CHECK(hipFree(nullptr));
  double t_start = now_s(), t = t_start;
  float *da, *db, *dc;
  HIP_CHECK(hipMalloc(&da, bytes));
  HIP_CHECK(hipMalloc(&db, bytes));
  HIP_CHECK(hipMalloc(&dc, bytes));
  double t_alloc = now_s() - t;
  t = now_s();
  HIP_CHECK(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
  double t_in = now_s() - t;
  t = now_s();
  const int block = 256;
  hipLaunchKernelGGL(vector_add, dim3((unsigned)((n + block - 1) / block)), dim3(block), 0, 0, da, db, dc, (int)n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  double t_kernel = now_s() - t;
  t = now_s();
  HIP_CHECK(hipMemcpy(c.data(), dc, bytes, hipMemcpyDeviceToHost));
  double t_out = now_s() - t;
  double t_total = now_s() - t_start;
  for (long i = 0; i < n; i++) {
    if (c[i] != a[i] + b[i]) {
      std::printf("FAIL c[%ld] = %.9g, expected %.9g\n", i, c[i], a[i] + b[i]);
      return 1;
    }
  }
  report("vadd_length", (double)n, "floats");
  report("vadd_alloc", t_alloc * 1e3, "ms");
  report("vadd_copy_in", t_in * 1e3, "ms");
  report("vadd_kernel", t_kernel * 1e3, "ms");
  report("vadd_copy_out", t_out * 1e3, "ms");
  report("vadd_total", t_total * 1e3, "ms");
  report("vadd_kernel_rate", (double)n / t_kernel / 1e6, "Melem/s");
  HIP_CHECK(hipFree(da));
  HIP_CHECK(hipFree(db));
  HIP_CHECK(hipFree(dc));
  return 0;
}
