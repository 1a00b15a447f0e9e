// hipModuleLoad of a code object built separately with `hipcc --genco`
// (path in argv[1]), hipModuleGetFunction, hipModuleGetGlobal and
// hipModuleLaunchKernel with arguments passed both as kernelParams and as a
// packed `extra` buffer.
//
// hip-test genco: module/kernels.hip
// hip-test args: {genco}
#define TEST_NAME "module_load"
#include "common.h"

#include <cstring>
#include <vector>

int main(int argc, char **argv) {
  EXPECT(argc == 2, "usage: module_load CODE_OBJECT");
  const int n = 5000, block = 128, grid = (n + block - 1) / block;
  hipModule_t module;
  HIP_CHECK(hipModuleLoad(&module, argv[1]));
  hipFunction_t scale_add, add_bias;
  HIP_CHECK(hipModuleGetFunction(&scale_add, module, "scale_add"));
  HIP_CHECK(hipModuleGetFunction(&add_bias, module, "add_bias"));
  hipFunction_t missing;
  EXPECT(hipModuleGetFunction(&missing, module, "no_such_kernel") != hipSuccess,
         "hipModuleGetFunction found a kernel that is not in the module");

  std::vector<float> in(n), out(n);
  for (int i = 0; i < n; i++) in[i] = (float)(i % 251) * 0.25f;
  float *din, *dout;
  HIP_CHECK(hipMalloc(&din, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&dout, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(din, in.data(), n * sizeof(float), hipMemcpyHostToDevice));

  // 1. kernelParams: an array of pointers to the arguments.
  float a = 3.0f, b = -1.5f;
  int count = n;
  void *params[] = {&dout, &din, &a, &b, &count};
  HIP_CHECK(hipModuleLaunchKernel(scale_add, grid, 1, 1, block, 1, 1, 0, nullptr, params, nullptr));
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    float want = a * in[i] + b;
    EXPECT(out[i] == want, "kernelParams launch: out[%d] = %.9g, expected %.9g", i, out[i], want);
  }

  // 2. `extra`: the arguments packed with their natural alignment.
  struct {
    float *out;
    const float *in;
    float a, b;
    int n;
  } packed = {dout, din, 0.5f, 2.0f, n};
  size_t packed_size = sizeof(packed);
  void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                   HIP_LAUNCH_PARAM_END};
  HIP_CHECK(hipModuleLaunchKernel(scale_add, grid, 1, 1, block, 1, 1, 0, nullptr, nullptr, extra));
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    float want = 0.5f * in[i] + 2.0f;
    EXPECT(out[i] == want, "extra launch: out[%d] = %.9g, expected %.9g", i, out[i], want);
  }

  // 3. A module global written from the host, read by a kernel.
  hipDeviceptr_t gptr;
  size_t gsize = 0;
  HIP_CHECK(hipModuleGetGlobal(&gptr, &gsize, module, "module_bias"));
  EXPECT(gsize == sizeof(int), "module_bias has size %zu, expected %zu", gsize, sizeof(int));
  int bias = 4242;
  HIP_CHECK(hipMemcpyHtoD(gptr, &bias, sizeof(int)));
  std::vector<int> data(n);
  for (int i = 0; i < n; i++) data[i] = i * 3;
  int *ddata;
  HIP_CHECK(hipMalloc(&ddata, n * sizeof(int)));
  HIP_CHECK(hipMemcpy(ddata, data.data(), n * sizeof(int), hipMemcpyHostToDevice));
  void *bias_params[] = {&ddata, &count};
  HIP_CHECK(hipModuleLaunchKernel(add_bias, grid, 1, 1, block, 1, 1, 0, nullptr, bias_params, nullptr));
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipMemcpy(data.data(), ddata, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    EXPECT(data[i] == i * 3 + bias, "add_bias: data[%d] = %d, expected %d", i, data[i], i * 3 + bias);
  }

  HIP_CHECK(hipFree(din));
  HIP_CHECK(hipFree(dout));
  HIP_CHECK(hipFree(ddata));
  HIP_CHECK(hipModuleUnload(module));
  return pass();
}
