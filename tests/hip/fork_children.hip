// The torchrun pattern: a parent that already uses the GPU forks and execs
// several children, each of which uses the GPU itself (kernels, copies,
// its own check) while the parent keeps working; every exit status and
// every result must be right. In daemon mode all of them share one GPU; in
// local mode each process gets a GPU of its own.
// hip-test args: 3
#define TEST_NAME "fork_children"
#include "common.h"

#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

__global__ void affine(const int *in, int *out, int n, int a, int b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i] + b;
}

// Runs `rounds` launches of y = a*x + b through the GPU and checks them.
static void work(int seed, int rounds) {
  const int n = 1 << 14;
  std::vector<int> x(n), y(n);
  Lcg g(seed);
  for (int &v : x) v = (int)(g.next() % 1000);
  int *dx, *dy;
  HIP_CHECK(hipMalloc(&dx, n * sizeof(int)));
  HIP_CHECK(hipMalloc(&dy, n * sizeof(int)));
  HIP_CHECK(hipMemcpy(dx, x.data(), n * sizeof(int), hipMemcpyHostToDevice));
  for (int r = 0; r < rounds; r++) {
    int a = seed + r, b = 7 * r - seed;
    hipLaunchKernelGGL(affine, dim3(n / 256), dim3(256), 0, 0, dx, dy, n, a, b);
    LAUNCH_CHECK();
    HIP_CHECK(hipMemcpy(y.data(), dy, n * sizeof(int), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
      EXPECT(y[i] == a * x[i] + b, "seed %d round %d: element %d is %d, expected %d", seed, r, i, y[i], a * x[i] + b);
  }
  HIP_CHECK(hipFree(dx));
  HIP_CHECK(hipFree(dy));
}

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], "child") == 0) {
    int seed = std::atoi(argv[2]);
    work(seed, 20);
    std::printf("fork_children: child %d done\n", seed);
    return 0;
  }
  int children = argc > 1 ? std::atoi(argv[1]) : 3;
  work(1, 5); // the parent uses the GPU before forking
  std::vector<pid_t> pids;
  std::fflush(stdout);
  for (int c = 0; c < children; c++) {
    pid_t pid = fork();
    EXPECT(pid >= 0, "fork failed");
    if (pid == 0) {
      std::string seed = std::to_string(100 + c);
      execl("/proc/self/exe", argv[0], "child", seed.c_str(), (char *)nullptr);
      _exit(127);
    }
    pids.push_back(pid);
  }
  work(2, 10); // and while they run
  for (size_t c = 0; c < pids.size(); c++) {
    int st = 0;
    EXPECT(waitpid(pids[c], &st, 0) == pids[c], "waitpid failed");
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %zu failed (status 0x%x)", c, st);
  }
  work(3, 2); // and after
  return pass();
}
