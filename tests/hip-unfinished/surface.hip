// Surface objects, unmodified HIP: a hipArray (hipArrayDefault: bookworm's
// HIP 5.2.3 refuses hipArraySurfaceLoadStore with hipErrorNotSupported,
// and its arrays are read-write images) is filled with
// hipMemcpy2DToArray, a kernel
// reads each element with surf2Dread and writes 3 * v + 1 into a second
// surface with surf2Dwrite (byte x coordinates, as CUDA defines them), and
// the result comes back with hipMemcpy2DFromArray, checked against the
// CPU. Elements outside the written window keep their values.
// hip-test targets: gfx90a
#define TEST_NAME "surface"
#include "common.h"

#include <vector>

__global__ void triple(hipSurfaceObject_t in, hipSurfaceObject_t out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    int v;
    surf2Dread(&v, in, x * (int)sizeof(int), y);
    surf2Dwrite(3 * v + 1, out, x * (int)sizeof(int), y);
  }
}

int main() {
  const int w = 37, h = 21, win_w = 30, win_h = 20;
  Lcg rng(9);
  std::vector<int> a(w * h), b(w * h);
  for (auto &v : a) v = (int)(rng.next() % 2000000) - 1000000;
  for (auto &v : b) v = (int)rng.next();
  hipChannelFormatDesc cd = hipCreateChannelDesc<int>();
  hipArray *ain, *aout;
  HIP_CHECK(hipMallocArray(&ain, &cd, w, h, hipArrayDefault));
  HIP_CHECK(hipMallocArray(&aout, &cd, w, h, hipArrayDefault));
  HIP_CHECK(hipMemcpy2DToArray(ain, 0, 0, a.data(), w * sizeof(int), w * sizeof(int), h, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy2DToArray(aout, 0, 0, b.data(), w * sizeof(int), w * sizeof(int), h, hipMemcpyHostToDevice));
  hipResourceDesc r = {};
  r.resType = hipResourceTypeArray;
  hipSurfaceObject_t sin, sout;
  r.res.array.array = ain;
  HIP_CHECK(hipCreateSurfaceObject(&sin, &r));
  r.res.array.array = aout;
  HIP_CHECK(hipCreateSurfaceObject(&sout, &r));
  dim3 block(8, 4), grid((win_w + 7) / 8, (win_h + 3) / 4);
  hipLaunchKernelGGL(triple, grid, block, 0, 0, sin, sout, win_w, win_h);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<int> got(w * h);
  HIP_CHECK(hipMemcpy2DFromArray(got.data(), w * sizeof(int), aout, 0, 0, w * sizeof(int), h, hipMemcpyDeviceToHost));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int want = (x < win_w && y < win_h) ? 3 * a[y * w + x] + 1 : b[y * w + x];
      EXPECT(got[y * w + x] == want, "element (%d, %d) is %d, expected %d", x, y, got[y * w + x], want);
    }
  HIP_CHECK(hipDestroySurfaceObject(sin));
  HIP_CHECK(hipDestroySurfaceObject(sout));
  HIP_CHECK(hipFreeArray(ain));
  HIP_CHECK(hipFreeArray(aout));
  return pass();
}
