// hipMemcpy host-to-device and device-to-host bandwidth for a 64 MiB buffer
// (argv[1] MiB), from pinned (hipHostMalloc) and pageable (malloc) host
// memory: the median and best of 5 timed copies after one checked copy.
#include "bench.h"

#include <cstring>

namespace {

void measure(const char *kind, unsigned char *host, unsigned char *dev, size_t bytes) {
  // One round trip first, checked byte for byte.
  for (size_t i = 0; i < bytes; i++) host[i] = (unsigned char)(i * 131 + (i >> 12));
  HIP_CHECK(hipMemcpy(dev, host, bytes, hipMemcpyHostToDevice));
  std::memset(host, 0, bytes);
  HIP_CHECK(hipMemcpy(host, dev, bytes, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < bytes; i++) {
    if (host[i] != (unsigned char)(i * 131 + (i >> 12))) {
      std::printf("FAIL %s round trip: byte %zu is 0x%02x\n", kind, i, host[i]);
      std::exit(1);
    }
  }
  const int reps = 5;
  for (int dir = 0; dir < 2; dir++) {
    std::vector<double> gbs;
    for (int r = 0; r < reps; r++) {
      double t0 = now_s();
      if (dir == 0) {
        HIP_CHECK(hipMemcpy(dev, host, bytes, hipMemcpyHostToDevice));
      } else {
        HIP_CHECK(hipMemcpy(host, dev, bytes, hipMemcpyDeviceToHost));
      }
      gbs.push_back((double)bytes / (now_s() - t0) / 1e9);
    }
    char key[64];
    std::snprintf(key, sizeof key, "memcpy_%s_%s_median", dir == 0 ? "h2d" : "d2h", kind);
    report(key, quantile(gbs, 0.5), "GB/s");
    std::snprintf(key, sizeof key, "memcpy_%s_%s_best", dir == 0 ? "h2d" : "d2h", kind);
    report(key, *std::max_element(gbs.begin(), gbs.end()), "GB/s");
  }
}

}  // namespace

int main(int argc, char **argv) {
  long mib = argc > 1 ? std::atol(argv[1]) : 64;
  if (mib < 1) {
    std::printf("FAIL usage: memcpy_bandwidth [MIB >= 1]\n");
    return 1;
  }
  size_t bytes = (size_t)mib << 20;
  report("memcpy_size", (double)mib, "MiB");
  unsigned char *dev;
  HIP_CHECK(hipMalloc(&dev, bytes));
  unsigned char *pinned;
  HIP_CHECK(hipHostMalloc((void **)&pinned, bytes, hipHostMallocDefault));
  measure("pinned", pinned, dev, bytes);
  HIP_CHECK(hipHostFree(pinned));
  unsigned char *pageable = (unsigned char *)std::malloc(bytes);
  if (!pageable) {
    std::printf("FAIL malloc(%zu)\n", bytes);
    return 1;
  }
  measure("pageable", pageable, dev, bytes);
  std::free(pageable);
  HIP_CHECK(hipFree(dev));
  return 0;
}
