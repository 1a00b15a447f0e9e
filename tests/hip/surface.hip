// Surface objects, unmodified HIP: a hipArray (hipArrayDefault: bookworm's
// HIP 5.2.3 refuses hipArraySurfaceLoadStore with hipErrorNotSupported,
// and its arrays are read-write images) is filled with
// hipMemcpy2DToArray, a kernel
// reads each element with surf2Dread and writes 3 * v + 1 into a second
// surface with surf2Dwrite (byte x coordinates, as CUDA defines them), and
// the result comes back with hipMemcpy2DFromArray, checked against the
// CPU. Elements outside the written window keep their values.
// The elements are floats holding integers (exact in float and after
// 3 * v + 1): HIP 5.2.3's surf2Dread<T> and surf2Dwrite<T> convert between
// T and the float4 that __ockl_image_load/store pass by value
// (static_cast), so an int surface's bits would come back converted, as
// on any GPU; HIP 6 and 7 copy the bits (a union).
// hip-test targets: gfx90a
#define TEST_NAME "surface"
#include "common.h"

#include <vector>

__global__ void triple(hipSurfaceObject_t in, hipSurfaceObject_t out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float v;
    surf2Dread(&v, in, x * (int)sizeof(float), y);
    surf2Dwrite(3.0f * v + 1.0f, out, x * (int)sizeof(float), y);
  }
}

int main() {
  const int w = 37, h = 21, win_w = 30, win_h = 20;
  Lcg rng(9);
  std::vector<float> a(w * h), b(w * h);
  for (auto &v : a) v = (float)((int)(rng.next() % 2000000) - 1000000);
  for (auto &v : b) v = (float)(rng.next() % 100000) / 8.0f;
  hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
  hipArray *ain, *aout;
  HIP_CHECK(hipMallocArray(&ain, &cd, w, h, hipArrayDefault));
  HIP_CHECK(hipMallocArray(&aout, &cd, w, h, hipArrayDefault));
  HIP_CHECK(hipMemcpy2DToArray(ain, 0, 0, a.data(), w * sizeof(float), w * sizeof(float), h, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy2DToArray(aout, 0, 0, b.data(), w * sizeof(float), w * sizeof(float), h, hipMemcpyHostToDevice));
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
  std::vector<float> got(w * h);
  HIP_CHECK(hipMemcpy2DFromArray(got.data(), w * sizeof(float), aout, 0, 0, w * sizeof(float), h, hipMemcpyDeviceToHost));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float want = (x < win_w && y < win_h) ? 3.0f * a[y * w + x] + 1.0f : b[y * w + x];
      EXPECT(got[y * w + x] == want, "element (%d, %d) is %.9g, expected %.9g", x, y, got[y * w + x], want);
    }
  HIP_CHECK(hipDestroySurfaceObject(sin));
  HIP_CHECK(hipDestroySurfaceObject(sout));
  HIP_CHECK(hipFreeArray(ain));
  HIP_CHECK(hipFreeArray(aout));
  return pass();
}
