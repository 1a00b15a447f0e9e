// DBT guest mode, fail-closed: v_cvt_pk_fp8_f32 exists on both targets but
// converts to OCP e4m3 on gfx950 and to FNUZ e4m3 on gfx942 (whose format
// cannot hold every OCP value), and the translator has no exact gfx942
// sequence for it, so loading this program's code
// object on the guest agent must fail, and stderr must name the kernel, the
// PC and the instruction. The program reports what HIP returned and exits 1
// when the launch failed (0 would mean untranslated code ran).
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void fp8_kernel(unsigned* out) {
  unsigned i = threadIdx.x;
  out[i] = __builtin_amdgcn_cvt_pk_fp8_f32(float(i), 0.5f, 0, false);
}

int main() {
  unsigned* d = nullptr;
  if (hipMalloc(&d, 64 * sizeof(unsigned)) != hipSuccess) {
    printf("FAIL untranslatable: hipMalloc\n");
    return 2;
  }
  fp8_kernel<<<1, 64>>>(d);
  hipError_t launch = hipGetLastError();
  hipError_t sync = hipDeviceSynchronize();
  printf("launch: %s, sync: %s\n", hipGetErrorName(launch), hipGetErrorName(sync));
  return (launch == hipSuccess && sync == hipSuccess) ? 0 : 1;
}
