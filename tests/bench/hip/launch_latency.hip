// Launch-to-completion latency of an empty kernel: each iteration launches
// one single-wave kernel and waits for it with hipStreamSynchronize; the
// median, p90 and mean over the iterations (argv[1], default 2000) are
// reported after 20 warm-up launches.
#include "bench.h"

__global__ void empty_kernel() {}

int main(int argc, char **argv) {
  int iters = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (iters < 1) {
    std::printf("FAIL usage: launch_latency [ITERATIONS >= 1]\n");
    return 1;
  }
  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  for (int i = 0; i < 20; i++) {
    hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(64), 0, s);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipStreamSynchronize(s));
  }
  std::vector<double> us(iters);
  double t_all = now_s();
  for (int i = 0; i < iters; i++) {
    double t0 = now_s();
    hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(64), 0, s);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipStreamSynchronize(s));
    us[i] = (now_s() - t0) * 1e6;
  }
  t_all = now_s() - t_all;
  double mean = 0;
  for (double v : us) mean += v;
  mean /= iters;
  report("launch_iterations", iters, "launches");
  report("launch_latency_median", quantile(us, 0.5), "us");
  report("launch_latency_p90", quantile(us, 0.9), "us");
  report("launch_latency_mean", mean, "us");
  report("launch_rate", iters / t_all, "launches/s");
  HIP_CHECK(hipStreamDestroy(s));
  return 0;
}
