// Pitched 2D memory: hipMallocPitch, then hipMemcpy2D host-to-device,
// device-to-device (into a sub-window at a column and row offset) and
// device-to-host, and hipMemset2D, with an odd width in bytes; a kernel
// reads the pitched layout. Bytes outside each copied window must keep
// their previous values.
#define TEST_NAME "memcpy2d"
#include "common.h"

#include <vector>

// Adds 1 to every byte of a width x height window of a pitched array.
__global__ void bump(unsigned char *p, size_t pitch, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) p[y * pitch + x] += 1;
}

int main() {
  const int width = 333, height = 77;  // bytes per row, rows
  const int win_x = 5, win_y = 3, win_w = 200, win_h = 50;
  Lcg rng(11);
  std::vector<unsigned char> src(width * height);
  for (auto &b : src) b = (unsigned char)rng.next();

  unsigned char *a, *b;
  size_t pitch_a = 0, pitch_b = 0;
  HIP_CHECK(hipMallocPitch((void **)&a, &pitch_a, width, height));
  HIP_CHECK(hipMallocPitch((void **)&b, &pitch_b, width, height));
  EXPECT(pitch_a >= (size_t)width && pitch_b >= (size_t)width, "pitches %zu and %zu are below the width %d", pitch_a,
         pitch_b, width);

  // H2D: the whole array into a (pitched), then back with hipMemcpy2D.
  HIP_CHECK(hipMemcpy2D(a, pitch_a, src.data(), width, width, height, hipMemcpyHostToDevice));
  std::vector<unsigned char> back(width * height, 0);
  HIP_CHECK(hipMemcpy2D(back.data(), width, a, pitch_a, width, height, hipMemcpyDeviceToHost));
  for (int i = 0; i < width * height; i++) {
    EXPECT(back[i] == src[i], "H2D/D2H 2D round trip: byte (%d, %d) is 0x%02x, expected 0x%02x", i % width,
           i / width, back[i], src[i]);
  }

  // hipMemset2D: b all 0x33, then D2D of a's top-left win_w x win_h corner
  // into b at (win_x, win_y).
  HIP_CHECK(hipMemset2D(b, pitch_b, 0x33, width, height));
  HIP_CHECK(hipMemcpy2D(b + win_y * pitch_b + win_x, pitch_b, a, pitch_a, win_w, win_h, hipMemcpyDeviceToDevice));
  // A kernel bumps the window of b in place.
  dim3 block(32, 8), grid((win_w + 31) / 32, (win_h + 7) / 8);
  hipLaunchKernelGGL(bump, grid, block, 0, 0, b + win_y * pitch_b + win_x, pitch_b, win_w, win_h);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy2D(back.data(), width, b, pitch_b, width, height, hipMemcpyDeviceToHost));
  for (int y = 0; y < height; y++) {
    for (int x = 0; x < width; x++) {
      bool in = x >= win_x && x < win_x + win_w && y >= win_y && y < win_y + win_h;
      unsigned char want = in ? (unsigned char)(src[(y - win_y) * width + (x - win_x)] + 1) : 0x33;
      EXPECT(back[y * width + x] == want, "D2D 2D window: byte (%d, %d) is 0x%02x, expected 0x%02x%s", x, y,
             back[y * width + x], want, in ? "" : " (outside the window)");
    }
  }

  // D2H of a sub-window into the middle of a larger host array.
  const int host_pitch = 400;
  std::vector<unsigned char> host(host_pitch * 60, 0xEE);
  HIP_CHECK(hipMemcpy2D(host.data() + 2 * host_pitch + 7, host_pitch, a + 10 * pitch_a + 20, pitch_a, 100, 40,
                        hipMemcpyDeviceToHost));
  for (int y = 0; y < 60; y++) {
    for (int x = 0; x < host_pitch; x++) {
      bool in = x >= 7 && x < 107 && y >= 2 && y < 42;
      unsigned char want = in ? src[(y - 2 + 10) * width + (x - 7 + 20)] : 0xEE;
      EXPECT(host[y * host_pitch + x] == want, "D2H 2D sub-window: host byte (%d, %d) is 0x%02x, expected 0x%02x", x,
             y, host[y * host_pitch + x], want);
    }
  }
  HIP_CHECK(hipFree(a));
  HIP_CHECK(hipFree(b));
  return pass();
}
