// Host<->device throughput of hipMemcpy (pinned and pageable host memory)
// and of managed memory moved by hipMemPrefetchAsync, MIB MiB each (default
// 256), best of 3. A kernel checks the managed bytes on the device side and
// the host checks what it reads back.
//
//   migrate [MIB]
#include "bench.h"

#include <cstring>

__global__ void bump(unsigned *p, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

int main(int argc, char **argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  const size_t bytes = mib << 20, n = bytes / 4;
  int dev = 0;
  HIP_CHECK(hipGetDevice(&dev));
  auto gbps = [&](double s) { return (double)bytes / s / 1e9; };
  auto best = [](auto f) {
    double b = 1e30;
    for (int i = 0; i < 3; i++) {
      double t0 = now_s();
      f();
      b = std::min(b, now_s() - t0);
    }
    return b;
  };
  void *d;
  HIP_CHECK(hipMalloc(&d, bytes));
  void *pinned;
  HIP_CHECK(hipHostMalloc(&pinned, bytes));
  std::vector<unsigned char> pageable(bytes, 1);
  std::memset(pinned, 2, bytes);
  report("copy_size", (double)mib, "MiB");
  report("h2d_pinned", gbps(best([&] { HIP_CHECK(hipMemcpy(d, pinned, bytes, hipMemcpyHostToDevice)); })), "GB/s");
  report("d2h_pinned", gbps(best([&] { HIP_CHECK(hipMemcpy(pinned, d, bytes, hipMemcpyDeviceToHost)); })), "GB/s");
  report("h2d_pageable",
         gbps(best([&] { HIP_CHECK(hipMemcpy(d, pageable.data(), bytes, hipMemcpyHostToDevice)); })), "GB/s");
  report("d2h_pageable",
         gbps(best([&] { HIP_CHECK(hipMemcpy(pageable.data(), d, bytes, hipMemcpyDeviceToHost)); })), "GB/s");
  if (pageable[bytes - 1] != 1) {
    std::printf("FAIL pageable readback %u\n", pageable[bytes - 1]);
    return 1;
  }

  unsigned *m;
  HIP_CHECK(hipMallocManaged(&m, bytes));
  for (size_t i = 0; i < n; i++) m[i] = (unsigned)i;
  double to_dev = 1e30, to_host = 1e30;
  for (int r = 0; r < 3; r++) {
    double t0 = now_s();
    HIP_CHECK(hipMemPrefetchAsync(m, bytes, dev, 0));
    HIP_CHECK(hipStreamSynchronize(0));
    to_dev = std::min(to_dev, now_s() - t0);
    bump<<<(unsigned)((n + 255) / 256), 256>>>(m, n);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());
    t0 = now_s();
    HIP_CHECK(hipMemPrefetchAsync(m, bytes, hipCpuDeviceId, 0));
    HIP_CHECK(hipStreamSynchronize(0));
    to_host = std::min(to_host, now_s() - t0);
  }
  for (size_t i = 0; i < n; i += 4099) {
    if (m[i] != (unsigned)i + 3) {
      std::printf("FAIL managed[%zu] = %u, expected %zu\n", i, m[i], i + 3);
      return 1;
    }
  }
  report("managed_prefetch_to_device", gbps(to_dev), "GB/s");
  report("managed_prefetch_to_host", gbps(to_host), "GB/s");
  return 0;
}
