// hipGetDeviceCount, hipGetDeviceProperties, hipDeviceGetAttribute and
// hipMemGetInfo against the GPU configuration the emulator was started with:
// the runner reads the expected values from the config JSON and passes them
// as arguments.
//
// hip-test args: {props}
#define TEST_NAME "device_props"
#include "common.h"

#include <cstring>
#include <string>

namespace {

struct Expected {
  int count = -1;
  std::string name, arch;
  long long cus = -1, warp = -1, lds = -1, mem = -1, clock_mhz = -1, max_threads = -1, integrated = -1;
};

long long parse_int(const char *flag, const char *s) {
  char *end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0') fail("%s: not an integer: '%s'", flag, s);
  return v;
}

Expected parse_args(int argc, char **argv) {
  Expected e;
  for (int i = 1; i < argc; i++) {
    std::string flag = argv[i];
    if (i + 1 >= argc) fail("%s needs a value", argv[i]);
    const char *v = argv[++i];
    if (flag == "--count") e.count = (int)parse_int(argv[i - 1], v);
    else if (flag == "--name") e.name = v;
    else if (flag == "--arch") e.arch = v;
    else if (flag == "--cus") e.cus = parse_int(argv[i - 1], v);
    else if (flag == "--warp") e.warp = parse_int(argv[i - 1], v);
    else if (flag == "--lds") e.lds = parse_int(argv[i - 1], v);
    else if (flag == "--mem") e.mem = parse_int(argv[i - 1], v);
    else if (flag == "--clock-mhz") e.clock_mhz = parse_int(argv[i - 1], v);
    else if (flag == "--max-threads") e.max_threads = parse_int(argv[i - 1], v);
    else if (flag == "--integrated") e.integrated = parse_int(argv[i - 1], v);
    else fail("unknown option %s", flag.c_str());
  }
  if (e.count < 0 || e.name.empty() || e.arch.empty() || e.cus < 0 || e.warp < 0 || e.lds < 0 || e.mem < 0 ||
      e.clock_mhz < 0 || e.max_threads < 0 || e.integrated < 0) {
    fail("usage: device_props --count N --name NAME --arch gfxNNN --cus N --warp N --lds BYTES --mem BYTES "
         "--clock-mhz MHZ --max-threads N --integrated 0|1");
  }
  return e;
}

}  // namespace

int main(int argc, char **argv) {
  Expected e = parse_args(argc, argv);
  int count = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  EXPECT(count == e.count, "hipGetDeviceCount = %d, expected %d", count, e.count);
  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, 0));
  EXPECT(e.name == p.name, "name '%s', expected '%s'", p.name, e.name.c_str());
  // gcnArchName is the target followed by its feature flags, e.g.
  // "gfx90a:sramecc+:xnack-".
  std::string gcn = p.gcnArchName;
  EXPECT(gcn == e.arch || gcn.rfind(e.arch + ":", 0) == 0, "gcnArchName '%s', expected '%s[:features]'",
         p.gcnArchName, e.arch.c_str());
  // gfxXYZ: major X, minor Y (the stepping Z is not part of the version);
  // gfxXXYZ (gfx1100): major XX.
  size_t digits = e.arch.size() - 3;
  int want_major = digits == 4 ? (e.arch[3] - '0') * 10 + (e.arch[4] - '0') : e.arch[3] - '0';
  int want_minor = e.arch[digits == 4 ? 5 : 4] - '0';
  EXPECT(p.major == want_major && p.minor == want_minor, "compute capability %d.%d, expected %d.%d", p.major,
         p.minor, want_major, want_minor);
  // RDNA runs workgroups in WGP mode: HIP counts WGPs (two CUs each).
  long long want_mps = p.major >= 10 ? e.cus / 2 : e.cus;
  EXPECT(p.multiProcessorCount == want_mps, "multiProcessorCount %d, expected %lld", p.multiProcessorCount,
         want_mps);
  EXPECT(p.warpSize == e.warp, "warpSize %d, expected %lld", p.warpSize, e.warp);
  EXPECT((long long)p.sharedMemPerBlock == e.lds, "sharedMemPerBlock %zu, expected %lld", p.sharedMemPerBlock, e.lds);
  EXPECT((long long)p.maxSharedMemoryPerMultiProcessor == e.lds, "maxSharedMemoryPerMultiProcessor %zu, expected %lld",
         p.maxSharedMemoryPerMultiProcessor, e.lds);
  EXPECT((long long)p.totalGlobalMem == e.mem, "totalGlobalMem %zu, expected %lld", p.totalGlobalMem, e.mem);
  EXPECT((long long)p.clockRate == e.clock_mhz * 1000, "clockRate %d kHz, expected %lld kHz", p.clockRate,
         e.clock_mhz * 1000);
  EXPECT(p.maxThreadsPerBlock == e.max_threads, "maxThreadsPerBlock %d, expected %lld", p.maxThreadsPerBlock,
         e.max_threads);
  // An APU (ROCr's HSA_AMD_MEMORY_PROPERTY_AGENT_IS_APU) is an integrated
  // device sharing host memory.
  EXPECT(p.integrated == e.integrated, "integrated %d, expected %lld", p.integrated, e.integrated);

  // The attribute interface agrees with the property struct.
  int v = 0;
  HIP_CHECK(hipDeviceGetAttribute(&v, hipDeviceAttributeMultiprocessorCount, 0));
  EXPECT(v == want_mps, "hipDeviceAttributeMultiprocessorCount %d, expected %lld", v, want_mps);
  HIP_CHECK(hipDeviceGetAttribute(&v, hipDeviceAttributeWarpSize, 0));
  EXPECT(v == e.warp, "hipDeviceAttributeWarpSize %d, expected %lld", v, e.warp);
  HIP_CHECK(hipDeviceGetAttribute(&v, hipDeviceAttributeMaxSharedMemoryPerBlock, 0));
  EXPECT(v == e.lds, "hipDeviceAttributeMaxSharedMemoryPerBlock %d, expected %lld", v, e.lds);
  HIP_CHECK(hipDeviceGetAttribute(&v, hipDeviceAttributeClockRate, 0));
  EXPECT(v == e.clock_mhz * 1000, "hipDeviceAttributeClockRate %d, expected %lld", v, e.clock_mhz * 1000);
  HIP_CHECK(hipDeviceGetAttribute(&v, hipDeviceAttributeIntegrated, 0));
  EXPECT(v == e.integrated, "hipDeviceAttributeIntegrated %d, expected %lld", v, e.integrated);

  // hipMemGetInfo: the total is the device memory, the free part no more.
  size_t free_bytes = 0, total_bytes = 0;
  HIP_CHECK(hipMemGetInfo(&free_bytes, &total_bytes));
  EXPECT((long long)total_bytes == e.mem, "hipMemGetInfo total %zu, expected %lld", total_bytes, e.mem);
  EXPECT(free_bytes > 0 && free_bytes <= total_bytes, "hipMemGetInfo free %zu of %zu", free_bytes, total_bytes);

  // A device id past the last one is rejected.
  hipDeviceProp_t q;
  EXPECT(hipGetDeviceProperties(&q, count) != hipSuccess, "hipGetDeviceProperties(%d) succeeded with %d devices",
         count, count);
  std::printf("device_props: %s (%s), %d CUs, wave%d, %zu B LDS, %zu B memory, %d kHz\n", p.name, p.gcnArchName,
              p.multiProcessorCount, p.warpSize, p.sharedMemPerBlock, p.totalGlobalMem, p.clockRate);
  return pass();
}
