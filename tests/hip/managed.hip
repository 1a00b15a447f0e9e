// Managed (unified) memory: hipMallocManaged buffers written by the host,
// updated by kernels (plain stores and atomics) and read back by the host
// after a synchronize, without a copy; a __managed__ variable; hipMemAdvise
// and hipMemPrefetchAsync with hipMemRangeGetAttribute reporting what was
// set; hipPointerGetAttributes; many allocate/free cycles; hipMemAttachHost.
#define TEST_NAME "managed"
#include "common.h"

#include <vector>

__managed__ int managed_counter = 5;

__global__ void scale_add(float *x, int n, float a, float b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

__global__ void count_odd(const int *v, int n, int *count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && (v[i] & 1)) atomicAdd(count, 1);
}

__global__ void bump_counter(int by) { atomicAdd(&managed_counter, by); }

static int get_attr_int(hipMemRangeAttribute attr, const void *p, size_t bytes) {
  int v = -12345;
  HIP_CHECK(hipMemRangeGetAttribute(&v, sizeof(v), attr, p, bytes));
  return v;
}

int main() {
  int dev = 0;
  HIP_CHECK(hipSetDevice(dev));
  int managed = 0;
  HIP_CHECK(hipDeviceGetAttribute(&managed, hipDeviceAttributeManagedMemory, dev));
  EXPECT(managed == 1, "hipDeviceAttributeManagedMemory = %d, expected 1", managed);

  // A multi-megabyte buffer: host writes, two kernels, host reads between.
  const int n = (3 << 20) + 19;
  const size_t bytes = n * sizeof(float);
  float *x = nullptr;
  HIP_CHECK(hipMallocManaged(&x, bytes));
  EXPECT(x != nullptr, "hipMallocManaged returned null");
  for (int i = 0; i < n; i++) x[i] = (float)(i % 1000) * 0.25f;
  const int block = 256, grid = (n + block - 1) / block;
  hipLaunchKernelGGL(scale_add, dim3(grid), dim3(block), 0, 0, x, n, 2.0f, 1.0f);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) {
    float want = 2.0f * ((float)(i % 1000) * 0.25f) + 1.0f;
    EXPECT(x[i] == want, "after the first kernel x[%d] = %.9g, expected %.9g", i, x[i], want);
  }
  // The host changes a few elements; the GPU must see them.
  x[0] = 100.0f;
  x[n - 1] = -3.0f;
  hipLaunchKernelGGL(scale_add, dim3(grid), dim3(block), 0, 0, x, n, 1.0f, -1.0f);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  EXPECT(x[0] == 99.0f && x[n - 1] == -4.0f, "host writes not seen: x[0] = %g, x[n-1] = %g", x[0],
         x[n - 1]);
  EXPECT(x[4097] == 2.0f * ((float)(4097 % 1000) * 0.25f), "x[4097] = %g", x[4097]);

  hipPointerAttribute_t pa;
  HIP_CHECK(hipPointerGetAttributes(&pa, x));
  EXPECT(pa.isManaged, "hipPointerGetAttributes: isManaged = %d", (int)pa.isManaged);

  // Advice and prefetch over part of the buffer; the range attributes say so.
  const size_t part = 1 << 20;
  HIP_CHECK(hipMemAdvise(x, part, hipMemAdviseSetPreferredLocation, dev));
  int loc = get_attr_int(hipMemRangeAttributePreferredLocation, x, part);
  EXPECT(loc == dev, "preferred location after hipMemAdvise = %d, expected %d", loc, dev);
  HIP_CHECK(hipMemAdvise(x, part, hipMemAdviseSetReadMostly, dev));
  int rm = get_attr_int(hipMemRangeAttributeReadMostly, x, part);
  EXPECT(rm == 1, "read-mostly after hipMemAdvise = %d, expected 1", rm);
  HIP_CHECK(hipMemAdvise(x, part, hipMemAdviseUnsetReadMostly, dev));
  rm = get_attr_int(hipMemRangeAttributeReadMostly, x, part);
  EXPECT(rm == 0, "read-mostly after unset = %d, expected 0", rm);
  HIP_CHECK(hipMemAdvise(x, part, hipMemAdviseSetAccessedBy, dev));
  int by[4] = {-7, -7, -7, -7};
  HIP_CHECK(hipMemRangeGetAttribute(by, sizeof(by), hipMemRangeAttributeAccessedBy, x, part));
  EXPECT(by[0] == dev, "accessed-by after hipMemAdvise = %d, expected %d", by[0], dev);

  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  HIP_CHECK(hipMemPrefetchAsync(x, bytes, dev, s));
  hipLaunchKernelGGL(scale_add, dim3(grid), dim3(block), 0, s, x, n, 1.0f, 1.0f);
  LAUNCH_CHECK();
  HIP_CHECK(hipStreamSynchronize(s));
  loc = get_attr_int(hipMemRangeAttributeLastPrefetchLocation, x, bytes);
  EXPECT(loc == dev, "last prefetch location = %d, expected %d", loc, dev);
  HIP_CHECK(hipMemPrefetchAsync(x, bytes, hipCpuDeviceId, s));
  HIP_CHECK(hipStreamSynchronize(s));
  loc = get_attr_int(hipMemRangeAttributeLastPrefetchLocation, x, bytes);
  EXPECT(loc == hipCpuDeviceId, "last prefetch location = %d, expected the CPU (%d)", loc,
         hipCpuDeviceId);
  EXPECT(x[0] == 100.0f && x[12345] == 2.0f * ((float)(12345 % 1000) * 0.25f) + 1.0f,
         "after the prefetched kernel x[0] = %g, x[12345] = %g", x[0], x[12345]);
  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipFree(x));

  // Atomics on managed memory, and a __managed__ variable.
  const int m = 100003;
  int *v = nullptr, *count = nullptr;
  HIP_CHECK(hipMallocManaged(&v, m * sizeof(int)));
  HIP_CHECK(hipMallocManaged(&count, sizeof(int), hipMemAttachHost));
  Lcg rng(7);
  int odd = 0;
  for (int i = 0; i < m; i++) {
    v[i] = (int)rng.next();
    odd += v[i] & 1;
  }
  *count = 0;
  hipLaunchKernelGGL(count_odd, dim3((m + block - 1) / block), dim3(block), 0, 0, v, m, count);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  EXPECT(*count == odd, "atomic count on managed memory = %d, expected %d", *count, odd);
  HIP_CHECK(hipFree(v));
  HIP_CHECK(hipFree(count));

  EXPECT(managed_counter == 5, "__managed__ initial value %d", managed_counter);
  managed_counter = 10;
  hipLaunchKernelGGL(bump_counter, dim3(4), dim3(64), 0, 0, 3);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  EXPECT(managed_counter == 10 + 4 * 64 * 3, "__managed__ counter = %d, expected %d",
         managed_counter, 10 + 4 * 64 * 3);

  // Many allocate/use/free cycles of varied sizes: nothing leaks or breaks.
  for (int round = 0; round < 200; round++) {
    int len = 1 + (round * 7919) % 70000;
    float *y = nullptr;
    HIP_CHECK(hipMallocManaged(&y, len * sizeof(float)));
    for (int i = 0; i < len; i++) y[i] = (float)i;
    hipLaunchKernelGGL(scale_add, dim3((len + 63) / 64), dim3(64), 0, 0, y, len, 1.0f, (float)round);
    LAUNCH_CHECK();
    HIP_CHECK(hipDeviceSynchronize());
    EXPECT(y[len - 1] == (float)(len - 1) + (float)round && y[0] == (float)round,
           "round %d: y[0] = %g, y[%d] = %g", round, y[0], len - 1, y[len - 1]);
    HIP_CHECK(hipFree(y));
  }
  return pass();
}
