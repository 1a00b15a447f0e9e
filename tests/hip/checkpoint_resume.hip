// A long run of dependent kernels, copies and fills over several device
// buffers, for the checkpoint test (scripts/checkpoint_test.py): its daemon
// is checkpointed mid-way (after the line `midway` on stdout, while the
// program goes on launching), killed and restored from the file, and the
// program must finish as an uninterrupted run does. At the end it prints a
// digest (FNV-1a) of every byte of every device buffer it allocated, then
// checks the results against a CPU computation of the same steps.
// Arguments: rounds (default 400). Built with the others, run by the
// checkpoint test only.
// hip-test run: no
#define TEST_NAME "checkpoint_resume"
#include "common.h"

#include <vector>

__global__ void mix(const unsigned *in, unsigned *out, int n, unsigned k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (in[i] ^ (in[(i + 1) % n] >> 3)) * 2654435761u + k;
}

__global__ void accumulate(const unsigned *in, unsigned long long *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] += in[i];
}

static unsigned long long fnv(const std::vector<unsigned char> &b) {
  unsigned long long h = 1469598103934665603ull;
  for (unsigned char c : b) h = (h ^ c) * 1099511628211ull;
  return h;
}

template <typename T>
static std::vector<unsigned char> bytes_of(const T *dev, size_t count) {
  std::vector<unsigned char> b(count * sizeof(T));
  HIP_CHECK(hipMemcpy(b.data(), dev, b.size(), hipMemcpyDeviceToHost));
  return b;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 400;
  const int n = 1 << 14;
  std::vector<unsigned> a(n), b(n), c(n);
  std::vector<unsigned long long> acc(n, 0);
  Lcg g(2026);
  for (unsigned &v : a) v = g.next();
  unsigned *da, *db, *dc;
  unsigned long long *dacc;
  HIP_CHECK(hipMalloc(&da, n * sizeof(unsigned)));
  HIP_CHECK(hipMalloc(&db, n * sizeof(unsigned)));
  HIP_CHECK(hipMalloc(&dc, n * sizeof(unsigned)));
  HIP_CHECK(hipMalloc(&dacc, n * sizeof(unsigned long long)));
  HIP_CHECK(hipMemcpy(da, a.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(db, 0, n * sizeof(unsigned)));
  HIP_CHECK(hipMemset(dc, 0x5a, n * sizeof(unsigned)));
  HIP_CHECK(hipMemset(dacc, 0, n * sizeof(unsigned long long)));
  std::fill(c.begin(), c.end(), 0x5a5a5a5au);
  for (int r = 0; r < rounds; r++) {
    unsigned k = 1000003u * (unsigned)r + 17u;
    hipLaunchKernelGGL(mix, dim3(n / 256), dim3(256), 0, 0, da, db, n, k);
    LAUNCH_CHECK();
    hipLaunchKernelGGL(accumulate, dim3(n / 256), dim3(256), 0, 0, db, dacc, n);
    LAUNCH_CHECK();
    for (int i = 0; i < n; i++) b[i] = (a[i] ^ (a[(i + 1) % n] >> 3)) * 2654435761u + k;
    for (int i = 0; i < n; i++) acc[i] += b[i];
    if (r % 8 == 7) {
      // A device-to-device copy and a fill between the kernels.
      HIP_CHECK(hipMemcpy(dc, db, n * sizeof(unsigned), hipMemcpyDeviceToDevice));
      c = b;
      HIP_CHECK(hipMemset(db, r & 0xff, 64 * sizeof(unsigned)));
      for (int i = 0; i < 64; i++) b[i] = 0x01010101u * (unsigned)(r & 0xff);
    }
    std::swap(da, db);
    std::swap(a, b);
    if (r == rounds / 2) {
      HIP_CHECK(hipDeviceSynchronize());
      std::printf("midway\n");
      std::fflush(stdout);
    }
  }
  HIP_CHECK(hipDeviceSynchronize());
  // Every byte of every device buffer, in allocation order (da/db swap
  // with the rounds; name them by the values they hold).
  std::printf("digest a %016llx\n", fnv(bytes_of(da, n)));
  std::printf("digest b %016llx\n", fnv(bytes_of(db, n)));
  std::printf("digest c %016llx\n", fnv(bytes_of(dc, n)));
  std::printf("digest acc %016llx\n", fnv(bytes_of(dacc, n)));
  std::vector<unsigned> back(n);
  std::vector<unsigned long long> back_acc(n);
  HIP_CHECK(hipMemcpy(back.data(), da, n * sizeof(unsigned), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(back[i] == a[i], "a[%d] is %u, expected %u", i, back[i], a[i]);
  HIP_CHECK(hipMemcpy(back.data(), dc, n * sizeof(unsigned), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(back[i] == c[i], "c[%d] is %u, expected %u", i, back[i], c[i]);
  HIP_CHECK(hipMemcpy(back_acc.data(), dacc, n * sizeof(unsigned long long), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    EXPECT(back_acc[i] == acc[i], "acc[%d] is %llu, expected %llu", i, back_acc[i], acc[i]);
  HIP_CHECK(hipFree(da));
  HIP_CHECK(hipFree(db));
  HIP_CHECK(hipFree(dc));
  HIP_CHECK(hipFree(dacc));
  return pass();
}
