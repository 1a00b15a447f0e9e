// Inter-process memory (hipIpcGetMemHandle / hipIpcOpenMemHandle): the
// parent fills a device buffer and hands its IPC handle to a child process
// (fork + exec of this program), which opens it, doubles every element in
// place with a kernel and closes it; the parent then sees the doubled
// values. Both processes must share one GPU, so this runs in daemon mode
// (in local mode each process has a GPU of its own).
// hip-test modes: daemon, attach
#define TEST_NAME "ipc"
#include "common.h"

#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

__global__ void fill(int *p, int n, int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + 3 * i;
}

__global__ void twice(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 2;
}

static const int N = 1 << 18;

static std::string hex(const void *p, size_t n) {
  static const char *d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; i++) {
    unsigned char b = ((const unsigned char *)p)[i];
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

static void unhex(const char *s, void *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned v = 0;
    std::sscanf(s + 2 * i, "%2x", &v);
    ((unsigned char *)p)[i] = (unsigned char)v;
  }
}

static int child(const char *handle_hex) {
  hipIpcMemHandle_t h;
  EXPECT(std::strlen(handle_hex) == 2 * sizeof(h), "child: a handle of %zu hex digits", std::strlen(handle_hex));
  unhex(handle_hex, &h, sizeof(h));
  void *p = nullptr;
  HIP_CHECK(hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess));
  int *d = static_cast<int *>(p);
  int first = 0;
  HIP_CHECK(hipMemcpy(&first, d, sizeof(int), hipMemcpyDeviceToHost));
  EXPECT(first == 11, "child: the shared buffer starts with %d, the parent wrote 11", first);
  hipLaunchKernelGGL(twice, dim3(N / 256), dim3(256), 0, 0, d, N);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  HIP_CHECK(hipIpcCloseMemHandle(p));
  std::printf("ipc child: doubled %d elements\n", N);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], "child") == 0) return child(argv[2]);
  int *d = nullptr;
  HIP_CHECK(hipMalloc(&d, N * sizeof(int)));
  hipLaunchKernelGGL(fill, dim3(N / 256), dim3(256), 0, 0, d, N, 11);
  LAUNCH_CHECK();
  HIP_CHECK(hipDeviceSynchronize());
  hipIpcMemHandle_t h;
  HIP_CHECK(hipIpcGetMemHandle(&h, d));
  std::string arg = hex(&h, sizeof(h));
  std::fflush(stdout);
  pid_t pid = fork();
  EXPECT(pid >= 0, "fork failed");
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], "child", arg.c_str(), (char *)nullptr);
    _exit(127);
  }
  int st = 0;
  EXPECT(waitpid(pid, &st, 0) == pid, "waitpid failed");
  EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed (status 0x%x)", st);
  std::vector<int> h_out(N);
  HIP_CHECK(hipMemcpy(h_out.data(), d, N * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    EXPECT(h_out[i] == 2 * (11 + 3 * i), "element %d is %d after the child, expected %d", i, h_out[i],
           2 * (11 + 3 * i));
  HIP_CHECK(hipFree(d));
  return pass();
}
