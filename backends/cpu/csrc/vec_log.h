// log for float32 and float64, vectorisable: the unary log kernel and the Box-Muller samplers share it.
// Its own header (not vecmath.h, which the GEMM and nn kernels include) so that editing it rebuilds
// only the two files that use it.
#pragma once

#include "vecmath.h"

namespace flambeau {

// Natural logarithm, branch-free so that `omp simd` loops vectorise (libm's log is an opaque call,
// and numpy's float32 log on AVX2 machines is a scalar loop). Both precisions split x = m * 2**e with
// m in [sqrt(1/2), sqrt(2)) and f = m - 1 exact, then add e * ln2 as a two-part constant so that its
// rounding stays below half an ulp of the result. Subnormals are first scaled into the normal range.
// Special values come out as libm's: log(+-0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays NaN.

// float32: Cephes' logf polynomial for log(1 + f) - f + f**2 / 2 (within about 1 ulp).
FLAMBEAU_INLINE float vec_log(float x) {
  const bool tiny = x < 1.17549435e-38f;            // subnormal (or 0 / negative: replaced below)
  const float xs = tiny ? x * 33554432.0f : x;      // * 2**25
  std::int32_t bits;
  std::memcpy(&bits, &xs, sizeof bits);
  const std::int32_t e = ((bits >> 23) & 0xff) - 127 - (tiny ? 25 : 0);
  bits = (bits & 0x007fffff) | 0x3f800000;
  float m;
  std::memcpy(&m, &bits, sizeof m);                  // xs = m * 2**(e + scale), m in [1, 2)
  const bool big = m > 1.41421356f;
  const float f = big ? m * 0.5f - 1.0f : m - 1.0f;  // exact: m and m/2 are within a factor 2 of 1
  const float ef = static_cast<float>(e + (big ? 1 : 0));
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  y += -2.12194440e-4f * ef;  // ln2 = 0.693359375 - 2.12194440e-4: the first part times e is exact
  y += -0.5f * z;
  const float r = f + y + 0.693359375f * ef;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return x > 0.0f ? (x < inf ? r : x) : (x == 0.0f ? -inf : (x != x ? x : nan));
}

// float64: fdlibm's method, log(1 + f) = f - f**2 / 2 + s * (f**2 / 2 + R(s**2)) with s = f / (2 + f)
// (R a degree-14 even polynomial; error under 1 ulp).
FLAMBEAU_INLINE double vec_log(double x) {
  const bool tiny = x < 2.2250738585072014e-308;
  const double xs = tiny ? x * 18014398509481984.0 : x;  // * 2**54
  std::int64_t bits;
  std::memcpy(&bits, &xs, sizeof bits);
  // The biased exponent as a double through 2**52 + e's bits: AVX2 has no int64 -> double conversion,
  // and a static_cast would keep this loop scalar.
  const std::int64_t ebits = ((bits >> 52) & 0x7ff) | 0x4330000000000000LL;
  double eb;
  std::memcpy(&eb, &ebits, sizeof eb);
  bits = (bits & 0x000fffffffffffffLL) | 0x3ff0000000000000LL;
  double m;
  std::memcpy(&m, &bits, sizeof m);
  const bool big = m > 1.4142135623730951;
  const double f = big ? m * 0.5 - 1.0 : m - 1.0;
  const double k = (eb - 4503599627370496.0) - (tiny ? 1077.0 : 1023.0) + (big ? 1.0 : 0.0);  // exact
  const double s = f / (2.0 + f);
  const double z = s * s, w = z * z;
  const double t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
  const double t2 = z * (6.666666666666735130e-01 +
                         w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  const double R = t1 + t2;
  const double hfsq = 0.5 * f * f;
  constexpr double ln2_hi = 6.93147180369123816490e-01;  // ln2's top 32 bits: k * ln2_hi is exact
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  const double r = k * ln2_hi - ((hfsq - (s * (hfsq + R) + k * ln2_lo)) - f);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return x > 0.0 ? (x < inf ? r : x) : (x == 0.0 ? -inf : (x != x ? x : nan));
}

}  // namespace flambeau
