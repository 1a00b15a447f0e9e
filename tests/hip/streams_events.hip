// Several streams with events: hipEventElapsedTime is finite and >= 0 for
// events on one stream, hipStreamWaitEvent orders a consumer stream after a
// producer stream, and independent streams each finish their own work.
#define TEST_NAME "streams_events"
#include "common.h"

#include <cmath>
#include <vector>

// Enough arithmetic per element that the producer is not instantaneous.
__global__ void produce(int *buf, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = (unsigned)i;
  for (int r = 0; r < rounds; r++) v = v * 1664525u + 1013904223u;
  buf[i] = (int)(v & 0xffff) + 1;
}

__global__ void consume(const int *buf, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = buf[i] * 2 + 1;
}

__global__ void fill(int *out, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value + i;
}

static int produced(int i, int rounds) {
  unsigned v = (unsigned)i;
  for (int r = 0; r < rounds; r++) v = v * 1664525u + 1013904223u;
  return (int)(v & 0xffff) + 1;
}

int main() {
  const int n = 1 << 16, rounds = 64, block = 256, grid = (n + block - 1) / block;
  const size_t bytes = n * sizeof(int);

  // 1. Timing on one stream.
  hipStream_t s0;
  HIP_CHECK(hipStreamCreate(&s0));
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  int *buf, *out;
  HIP_CHECK(hipMalloc(&buf, bytes));
  HIP_CHECK(hipMalloc(&out, bytes));
  HIP_CHECK(hipMemset(buf, 0, bytes));
  HIP_CHECK(hipMemset(out, 0, bytes));
  HIP_CHECK(hipEventRecord(start, s0));
  hipLaunchKernelGGL(produce, dim3(grid), dim3(block), 0, s0, buf, n, rounds);
  LAUNCH_CHECK();
  HIP_CHECK(hipEventRecord(stop, s0));
  HIP_CHECK(hipEventSynchronize(stop));
  HIP_CHECK(hipEventQuery(stop));
  float ms = -1.0f;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  EXPECT(std::isfinite(ms) && ms >= 0.0f, "hipEventElapsedTime gave %g ms", ms);

  // 2. Ordering across streams: the consumer stream waits for an event
  // recorded after the producer kernel; `buf` was zeroed before, so a
  // consumer running early would see zeros.
  hipStream_t producer, consumer;
  HIP_CHECK(hipStreamCreateWithFlags(&producer, hipStreamNonBlocking));
  HIP_CHECK(hipStreamCreateWithFlags(&consumer, hipStreamNonBlocking));
  hipEvent_t produced_ev;
  HIP_CHECK(hipEventCreateWithFlags(&produced_ev, hipEventDisableTiming));
  HIP_CHECK(hipMemset(buf, 0, bytes));
  HIP_CHECK(hipMemset(out, 0, bytes));
  HIP_CHECK(hipDeviceSynchronize());
  hipLaunchKernelGGL(produce, dim3(grid), dim3(block), 0, producer, buf, n, rounds * 4);
  LAUNCH_CHECK();
  HIP_CHECK(hipEventRecord(produced_ev, producer));
  HIP_CHECK(hipStreamWaitEvent(consumer, produced_ev, 0));
  hipLaunchKernelGGL(consume, dim3(grid), dim3(block), 0, consumer, buf, out, n);
  LAUNCH_CHECK();
  HIP_CHECK(hipStreamSynchronize(consumer));
  std::vector<int> host(n);
  HIP_CHECK(hipMemcpy(host.data(), out, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    int want = produced(i, rounds * 4) * 2 + 1;
    EXPECT(host[i] == want, "consumer stream out[%d] = %d, expected %d (did it run before the producer?)", i, host[i],
           want);
  }
  HIP_CHECK(hipStreamQuery(producer));

  // 3. Four independent streams, each with its own buffer and timing events.
  const int ns = 4;
  hipStream_t streams[ns];
  hipEvent_t begin[ns], end[ns];
  int *bufs[ns];
  for (int s = 0; s < ns; s++) {
    HIP_CHECK(hipStreamCreate(&streams[s]));
    HIP_CHECK(hipEventCreate(&begin[s]));
    HIP_CHECK(hipEventCreate(&end[s]));
    HIP_CHECK(hipMalloc(&bufs[s], bytes));
  }
  for (int s = 0; s < ns; s++) {
    HIP_CHECK(hipEventRecord(begin[s], streams[s]));
    hipLaunchKernelGGL(fill, dim3(grid), dim3(block), 0, streams[s], bufs[s], n, 1000 * (s + 1));
    LAUNCH_CHECK();
    HIP_CHECK(hipEventRecord(end[s], streams[s]));
  }
  for (int s = 0; s < ns; s++) {
    HIP_CHECK(hipStreamSynchronize(streams[s]));
    float t = -1.0f;
    HIP_CHECK(hipEventElapsedTime(&t, begin[s], end[s]));
    EXPECT(std::isfinite(t) && t >= 0.0f, "stream %d: hipEventElapsedTime gave %g ms", s, t);
    HIP_CHECK(hipMemcpy(host.data(), bufs[s], bytes, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
      EXPECT(host[i] == 1000 * (s + 1) + i, "stream %d: buf[%d] = %d, expected %d", s, i, host[i], 1000 * (s + 1) + i);
    }
  }
  // Elapsed time between events of different streams, both complete.
  float cross = -1.0f;
  HIP_CHECK(hipEventElapsedTime(&cross, begin[0], end[ns - 1]));
  EXPECT(std::isfinite(cross), "cross-stream hipEventElapsedTime gave %g ms", cross);

  for (int s = 0; s < ns; s++) {
    HIP_CHECK(hipEventDestroy(begin[s]));
    HIP_CHECK(hipEventDestroy(end[s]));
    HIP_CHECK(hipStreamDestroy(streams[s]));
    HIP_CHECK(hipFree(bufs[s]));
  }
  HIP_CHECK(hipEventDestroy(start));
  HIP_CHECK(hipEventDestroy(stop));
  HIP_CHECK(hipEventDestroy(produced_ev));
  HIP_CHECK(hipStreamDestroy(s0));
  HIP_CHECK(hipStreamDestroy(producer));
  HIP_CHECK(hipStreamDestroy(consumer));
  HIP_CHECK(hipFree(buf));
  HIP_CHECK(hipFree(out));
  return pass();
}
