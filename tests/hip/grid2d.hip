// 2D and 3D launches whose grids are not multiples of the block: every
// in-range element is written once with a function of its coordinates, and
// the bytes past the end of the output stay untouched.
#define TEST_NAME "grid2d"
#include "common.h"

#include <vector>

__global__ void transform2d(const int *in, int *out, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) out[y * width + x] = in[y * width + x] * 2 + x - 3 * y;
}

__global__ void coords3d(int *out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < nx && y < ny && z < nz) {
    // Also record which block and thread wrote the element.
    out[(z * ny + y) * nx + x] = (x << 20) | (y << 10) | z | ((int)(threadIdx.x + threadIdx.y + threadIdx.z) << 26);
  }
}

int main() {
  const int sentinel = (int)0xDEADBEEF, pad = 1024;

  // 2D: 1000 x 777 with 16 x 16 blocks.
  {
    const int w = 1000, h = 777, total = w * h;
    std::vector<int> in(total), out(total + pad);
    for (int i = 0; i < total; i++) in[i] = (i * 37) % 10007;
    int *din, *dout;
    HIP_CHECK(hipMalloc(&din, total * sizeof(int)));
    HIP_CHECK(hipMalloc(&dout, (total + pad) * sizeof(int)));
    HIP_CHECK(hipMemcpy(din, in.data(), total * sizeof(int), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemsetD32((hipDeviceptr_t)dout, sentinel, total + pad));
    dim3 block(16, 16), grid((w + 15) / 16, (h + 15) / 16);
    hipLaunchKernelGGL(transform2d, grid, block, 0, 0, din, dout, w, h);
    LAUNCH_CHECK();
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipMemcpy(out.data(), dout, (total + pad) * sizeof(int), hipMemcpyDeviceToHost));
    for (int y = 0; y < h; y++) {
      for (int x = 0; x < w; x++) {
        int want = in[y * w + x] * 2 + x - 3 * y;
        EXPECT(out[y * w + x] == want, "2D (%d, %d) = %d, expected %d", x, y, out[y * w + x], want);
      }
    }
    for (int i = total; i < total + pad; i++) {
      EXPECT(out[i] == sentinel, "2D: element %d past the end was written (0x%08x)", i, (unsigned)out[i]);
    }
    HIP_CHECK(hipFree(din));
    HIP_CHECK(hipFree(dout));
  }

  // 3D: 37 x 19 x 11 with 8 x 4 x 2 blocks.
  {
    const int nx = 37, ny = 19, nz = 11, total = nx * ny * nz;
    std::vector<int> out(total + pad);
    int *dout;
    HIP_CHECK(hipMalloc(&dout, (total + pad) * sizeof(int)));
    HIP_CHECK(hipMemsetD32((hipDeviceptr_t)dout, sentinel, total + pad));
    dim3 block(8, 4, 2), grid((nx + 7) / 8, (ny + 3) / 4, (nz + 1) / 2);
    hipLaunchKernelGGL(coords3d, grid, block, 0, 0, dout, nx, ny, nz);
    LAUNCH_CHECK();
    HIP_CHECK(hipDeviceSynchronize());
    HIP_CHECK(hipMemcpy(out.data(), dout, (total + pad) * sizeof(int), hipMemcpyDeviceToHost));
    for (int z = 0; z < nz; z++) {
      for (int y = 0; y < ny; y++) {
        for (int x = 0; x < nx; x++) {
          int tsum = x % 8 + y % 4 + z % 2;
          int want = (x << 20) | (y << 10) | z | (tsum << 26);
          int got = out[(z * ny + y) * nx + x];
          EXPECT(got == want, "3D (%d, %d, %d) = 0x%08x, expected 0x%08x", x, y, z, (unsigned)got, (unsigned)want);
        }
      }
    }
    for (int i = total; i < total + pad; i++) {
      EXPECT(out[i] == sentinel, "3D: element %d past the end was written (0x%08x)", i, (unsigned)out[i]);
    }
    HIP_CHECK(hipFree(dout));
  }
  return pass();
}
