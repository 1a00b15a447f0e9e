// Texture objects, unmodified HIP: tex1Dfetch of a linear buffer
// (hipResourceTypeLinear), and tex2D of a hipArray (hipMallocArray,
// hipMemcpy2DToArray) with linear filtering and normalised coordinates
// (clamp) and with point filtering (wrap), each against a CPU sampler
// written here from CUDA/HIP's texture rules.
// hip-test targets: gfx90a
#define TEST_NAME "texture"
#include "common.h"

#include <cmath>
#include <vector>

__global__ void fetch1d(hipTextureObject_t t, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);
}

__global__ void sample2d(hipTextureObject_t t, const float2 *uv, float4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, uv[i].x, uv[i].y);
}

static int clampi(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }
static int wrapi(int i, int n) { return ((i % n) + n) % n; }

int main() {
  Lcg rng(5);
  // --- tex1Dfetch over a plain device buffer.
  const int n = 1000;
  std::vector<float> lin(n);
  for (auto &v : lin) v = (float)(rng.next() % 100000) / 7.0f;
  float *dlin, *dout;
  HIP_CHECK(hipMalloc(&dlin, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&dout, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(dlin, lin.data(), n * sizeof(float), hipMemcpyHostToDevice));
  hipResourceDesc rl = {};
  rl.resType = hipResourceTypeLinear;
  rl.res.linear.devPtr = dlin;
  rl.res.linear.desc = hipCreateChannelDesc<float>();
  rl.res.linear.sizeInBytes = n * sizeof(float);
  hipTextureDesc tl = {};
  tl.readMode = hipReadModeElementType;
  hipTextureObject_t t1;
  HIP_CHECK(hipCreateTextureObject(&t1, &rl, &tl, nullptr));
  hipLaunchKernelGGL(fetch1d, dim3((n + 255) / 256), dim3(256), 0, 0, t1, dout, n);
  LAUNCH_CHECK();
  std::vector<float> got1(n);
  HIP_CHECK(hipMemcpy(got1.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(got1[i] == lin[i], "tex1Dfetch[%d] = %g, expected %g", i, got1[i], lin[i]);
  HIP_CHECK(hipDestroyTextureObject(t1));

  // --- tex2D of a 2D hipArray of float4.
  const int w = 13, h = 9;
  std::vector<float4> img(w * h);
  for (auto &p : img) p = make_float4((rng.next() % 1000) / 999.0f, (rng.next() % 1000) / 999.0f,
                                      (rng.next() % 1000) / 999.0f, (rng.next() % 1000) / 999.0f);
  hipChannelFormatDesc cd = hipCreateChannelDesc<float4>();
  hipArray *arr;
  HIP_CHECK(hipMallocArray(&arr, &cd, w, h, 0));
  HIP_CHECK(hipMemcpy2DToArray(arr, 0, 0, img.data(), w * sizeof(float4), w * sizeof(float4), h,
                               hipMemcpyHostToDevice));
  const int m = 512;
  std::vector<float2> uv(m);
  for (auto &c : uv) c = make_float2((int)(rng.next() % 3000) / 1000.0f - 1.0f, (int)(rng.next() % 3000) / 1000.0f - 1.0f);
  float2 *duv;
  float4 *dres;
  HIP_CHECK(hipMalloc(&duv, m * sizeof(float2)));
  HIP_CHECK(hipMalloc(&dres, m * sizeof(float4)));
  HIP_CHECK(hipMemcpy(duv, uv.data(), m * sizeof(float2), hipMemcpyHostToDevice));

  for (int pass = 0; pass < 2; pass++) {
    const bool linear = pass == 0;
    hipResourceDesc ra = {};
    ra.resType = hipResourceTypeArray;
    ra.res.array.array = arr;
    hipTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = linear ? hipAddressModeClamp : hipAddressModeWrap;
    td.filterMode = linear ? hipFilterModeLinear : hipFilterModePoint;
    td.readMode = hipReadModeElementType;
    td.normalizedCoords = 1;
    hipTextureObject_t t2;
    HIP_CHECK(hipCreateTextureObject(&t2, &ra, &td, nullptr));
    hipLaunchKernelGGL(sample2d, dim3(m / 64), dim3(64), 0, 0, t2, duv, dres, m);
    LAUNCH_CHECK();
    std::vector<float4> got(m);
    HIP_CHECK(hipMemcpy(got.data(), dres, m * sizeof(float4), hipMemcpyDeviceToHost));
    for (int i = 0; i < m; i++) {
      float x = uv[i].x * w, y = uv[i].y * h, want[4] = {0, 0, 0, 0};
      if (linear) {
        // Texel centres at i + 0.5: weights from the fraction of x - 0.5.
        float xs = x - 0.5f, ys = y - 0.5f;
        int i0 = (int)std::floor(xs), j0 = (int)std::floor(ys);
        float a = xs - std::floor(xs), b = ys - std::floor(ys);
        for (int dj = 0; dj < 2; dj++)
          for (int di = 0; di < 2; di++) {
            const float4 &p = img[clampi(j0 + dj, h) * w + clampi(i0 + di, w)];
            float wt = (di ? a : 1 - a) * (dj ? b : 1 - b);
            want[0] += wt * p.x, want[1] += wt * p.y, want[2] += wt * p.z, want[3] += wt * p.w;
          }
      } else {
        const float4 &p = img[wrapi((int)std::floor(y), h) * w + wrapi((int)std::floor(x), w)];
        want[0] = p.x, want[1] = p.y, want[2] = p.z, want[3] = p.w;
      }
      const float g[4] = {got[i].x, got[i].y, got[i].z, got[i].w};
      // GPUs weigh bilinear taps with 8-bit fractions: within 1/256 of the
      // exact weights for texel values in [0, 1].
      const float tol = linear ? 1.0f / 256 : 0.0f;
      for (int c = 0; c < 4; c++)
        EXPECT(std::fabs(g[c] - want[c]) <= tol, "%s tex2D at (%g, %g) channel %d: %g, expected %g",
               linear ? "linear" : "point", uv[i].x, uv[i].y, c, g[c], want[c]);
    }
    HIP_CHECK(hipDestroyTextureObject(t2));
  }
  HIP_CHECK(hipFreeArray(arr));
  HIP_CHECK(hipFree(dlin));
  HIP_CHECK(hipFree(dout));
  HIP_CHECK(hipFree(duv));
  HIP_CHECK(hipFree(dres));
  return pass();
}
