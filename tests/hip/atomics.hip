// Global atomics: int atomicAdd (counter and histogram), atomicMax,
// atomicMin, atomicCAS (a CAS-loop add and slot claiming), atomicExch, and
// float atomicAdd of values whose sums are exact in fp32.
#define TEST_NAME "atomics"
#include "common.h"

#include <algorithm>
#include <climits>
#include <vector>

constexpr int kBins = 256;
constexpr int kSlots = 64;

__device__ int hash_value(int i) {
  unsigned v = (unsigned)i * 2654435761u;
  return (int)((v >> 7) % 1000003u) - 500000;
}

struct Results {
  int counter;
  int max_value;
  int min_value;
  int cas_sum;
  int exch_last;
  float fsum;
  int hist[kBins];
  int slots[kSlots];
  int slot_wins;
};

__global__ void atomics_kernel(Results *r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&r->counter, 1);
  int h = hash_value(i);
  atomicMax(&r->max_value, h);
  atomicMin(&r->min_value, h);
  atomicAdd(&r->hist[(unsigned)h % kBins], 1);
  // Add i % 7 with a compare-and-swap loop.
  int old = r->cas_sum, assumed;
  do {
    assumed = old;
    old = atomicCAS(&r->cas_sum, assumed, assumed + i % 7);
  } while (old != assumed);
  // The first thread to swap -1 out of a slot claims it.
  if (atomicCAS(&r->slots[i % kSlots], -1, i) == -1) atomicAdd(&r->slot_wins, 1);
  atomicExch(&r->exch_last, i % kSlots + 1000);
  atomicAdd(&r->fsum, 0.5f);
}

static int hash_host(int i) {
  unsigned v = (unsigned)i * 2654435761u;
  return (int)((v >> 7) % 1000003u) - 500000;
}

int main() {
  const int n = 100000, block = 256, grid = (n + block - 1) / block;
  Results init{};
  init.max_value = INT_MIN;
  init.min_value = INT_MAX;
  for (int &s : init.slots) s = -1;
  Results *d;
  HIP_CHECK(hipMalloc(&d, sizeof(Results)));
  HIP_CHECK(hipMemcpy(d, &init, sizeof(Results), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(atomics_kernel, dim3(grid), dim3(block), 0, 0, d, n);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  Results r;
  HIP_CHECK(hipMemcpy(&r, d, sizeof(Results), hipMemcpyDeviceToHost));

  int want_max = INT_MIN, want_min = INT_MAX, want_cas = 0;
  std::vector<int> hist(kBins, 0);
  for (int i = 0; i < n; i++) {
    int h = hash_host(i);
    want_max = std::max(want_max, h);
    want_min = std::min(want_min, h);
    hist[(unsigned)h % kBins]++;
    want_cas += i % 7;
  }
  EXPECT(r.counter == n, "atomicAdd counter %d, expected %d", r.counter, n);
  EXPECT(r.max_value == want_max, "atomicMax %d, expected %d", r.max_value, want_max);
  EXPECT(r.min_value == want_min, "atomicMin %d, expected %d", r.min_value, want_min);
  EXPECT(r.cas_sum == want_cas, "atomicCAS-loop sum %d, expected %d", r.cas_sum, want_cas);
  for (int b = 0; b < kBins; b++) {
    EXPECT(r.hist[b] == hist[b], "histogram bin %d holds %d, expected %d", b, r.hist[b], hist[b]);
  }
  EXPECT(r.slot_wins == kSlots, "%d slots claimed, expected %d", r.slot_wins, kSlots);
  for (int s = 0; s < kSlots; s++) {
    EXPECT(r.slots[s] >= 0 && r.slots[s] < n && r.slots[s] % kSlots == s, "slot %d holds %d, not a claimant", s,
           r.slots[s]);
  }
  EXPECT(r.exch_last >= 1000 && r.exch_last < 1000 + kSlots, "atomicExch left %d, not a value any thread wrote",
         r.exch_last);
  EXPECT(r.fsum == 0.5f * n, "float atomicAdd sum %.9g, expected %.9g", r.fsum, 0.5f * n);
  HIP_CHECK(hipFree(d));
  return pass();
}
