// DBT guest mode, fail-closed: v_prng_b32 exists on gfx950 only and the
// translator has no gfx942 sequence for it, so loading this program's code
// object on the guest agent must fail, and stderr must name the kernel, the
// PC and the instruction. The program reports what HIP returned and exits 1
// when the launch failed (0 would mean untranslated code ran).
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void prng_kernel(unsigned* out) {
  unsigned i = threadIdx.x;
  out[i] = __builtin_amdgcn_prng_b32(i * 2654435761u);
}

int main() {
  unsigned* d = nullptr;
  if (hipMalloc(&d, 64 * sizeof(unsigned)) != hipSuccess) {
    printf("FAIL untranslatable: hipMalloc\n");
    return 2;
  }
  prng_kernel<<<1, 64>>>(d);
  hipError_t launch = hipGetLastError();
  hipError_t sync = hipDeviceSynchronize();
  printf("launch: %s, sync: %s\n", hipGetErrorName(launch), hipGetErrorName(sync));
  return (launch == hipSuccess && sync == hipSuccess) ? 0 : 1;
}
