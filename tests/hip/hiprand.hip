// hipRAND on the device: uniform and normal fp32 numbers from the XORWOW
// (default) and Philox generators. Checks: uniform values lie in (0, 1],
// sample means and variances within tolerances of many standard errors of
// the exact values (uniform 1/2 and 1/12, normal 0 and 1), the same seed
// reproduces the same bits, and another seed gives other numbers. The longer
// timeout covers rocRAND's XORWOW set-up kernel (a skip-ahead per engine).
//
// hip-test libs: -lhiprand
// hip-test needs: hiprand
// hip-test timeout: 300
#define TEST_NAME "hiprand"
#include "common.h"

#include <hiprand/hiprand.h>

#include <cmath>
#include <cstring>
#include <vector>

#define RAND_CHECK(expr)                                                                                     \
  do {                                                                                                       \
    hiprandStatus_t st_ = (expr);                                                                            \
    if (st_ != HIPRAND_STATUS_SUCCESS) fail("%s:%d: %s returned hiprand status %d", __FILE__, __LINE__, #expr, \
                                            (int)st_);                                                       \
  } while (0)

namespace {

const size_t kN = 1 << 18;

enum class Dist { Uniform, Normal };

std::vector<float> generate(hiprandRngType_t type, unsigned long long seed, Dist dist, float *dbuf) {
  hiprandGenerator_t gen;
  RAND_CHECK(hiprandCreateGenerator(&gen, type));
  RAND_CHECK(hiprandSetPseudoRandomGeneratorSeed(gen, seed));
  if (dist == Dist::Uniform) {
    RAND_CHECK(hiprandGenerateUniform(gen, dbuf, kN));
  } else {
    RAND_CHECK(hiprandGenerateNormal(gen, dbuf, kN, 0.0f, 1.0f));
  }
  HIP_CHECK(hipDeviceSynchronize());
  std::vector<float> out(kN);
  HIP_CHECK(hipMemcpy(out.data(), dbuf, kN * sizeof(float), hipMemcpyDeviceToHost));
  RAND_CHECK(hiprandDestroyGenerator(gen));
  return out;
}

void moments(const std::vector<float> &v, double *mean, double *var) {
  double s = 0, s2 = 0;
  for (float f : v) s += f;
  *mean = s / (double)v.size();
  for (float f : v) s2 += ((double)f - *mean) * ((double)f - *mean);
  *var = s2 / (double)(v.size() - 1);
}

void check_generator(hiprandRngType_t type, const char *gname, float *dbuf) {
  // Standard errors for n = 2^18: uniform mean 5.6e-4, uniform variance
  // 1.5e-4, normal mean 2.0e-3, normal variance 2.8e-3. The tolerances are
  // about ten of them.
  std::vector<float> u = generate(type, 1234, Dist::Uniform, dbuf);
  for (size_t i = 0; i < kN; i++) {
    EXPECT(u[i] > 0.0f && u[i] <= 1.0f, "%s uniform[%zu] = %.9g is outside (0, 1]", gname, i, u[i]);
  }
  double mean, var;
  moments(u, &mean, &var);
  EXPECT(std::fabs(mean - 0.5) < 0.005, "%s uniform mean %.6f, expected 0.5 +- 0.005", gname, mean);
  EXPECT(std::fabs(var - 1.0 / 12.0) < 0.0015, "%s uniform variance %.6f, expected %.6f +- 0.0015", gname, var,
         1.0 / 12.0);
  // Fraction in the lower half: binomial, standard error 1e-3.
  size_t low = 0;
  for (float f : u) low += f <= 0.5f;
  double frac = (double)low / kN;
  EXPECT(std::fabs(frac - 0.5) < 0.01, "%s uniform: %.4f of the values <= 0.5, expected 0.5 +- 0.01", gname, frac);

  std::vector<float> g = generate(type, 1234, Dist::Normal, dbuf);
  for (size_t i = 0; i < kN; i++) {
    EXPECT(std::isfinite(g[i]), "%s normal[%zu] = %g is not finite", gname, i, g[i]);
  }
  moments(g, &mean, &var);
  EXPECT(std::fabs(mean) < 0.02, "%s normal mean %.6f, expected 0 +- 0.02", gname, mean);
  EXPECT(std::fabs(var - 1.0) < 0.03, "%s normal variance %.6f, expected 1 +- 0.03", gname, var);
  // P(|z| <= 1) = 0.682689; standard error 9e-4.
  size_t within = 0;
  for (float f : g) within += std::fabs(f) <= 1.0f;
  frac = (double)within / kN;
  EXPECT(std::fabs(frac - 0.682689) < 0.01, "%s normal: %.4f of the values within one sigma, expected 0.6827", gname,
         frac);

  // The same seed reproduces every bit; another seed does not.
  std::vector<float> again = generate(type, 1234, Dist::Uniform, dbuf);
  EXPECT(std::memcmp(again.data(), u.data(), kN * sizeof(float)) == 0, "%s: seed 1234 did not reproduce its numbers",
         gname);
  std::vector<float> other = generate(type, 99, Dist::Uniform, dbuf);
  size_t same = 0;
  for (size_t i = 0; i < kN; i++) same += other[i] == u[i];
  EXPECT(same < kN / 100, "%s: seeds 1234 and 99 agree on %zu of %zu values", gname, same, kN);
}

}  // namespace

int main() {
  float *dbuf;
  HIP_CHECK(hipMalloc(&dbuf, kN * sizeof(float)));
  check_generator(HIPRAND_RNG_PSEUDO_DEFAULT, "xorwow", dbuf);
  check_generator(HIPRAND_RNG_PSEUDO_PHILOX4_32_10, "philox", dbuf);
  HIP_CHECK(hipFree(dbuf));
  return pass();
}
