// Math functions written so the compiler can vectorise loops that call them (libm's are opaque calls).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__GNUC__)
// Forced: a call per element would stop the loops around these from vectorising.
#define FLAMBEAU_INLINE inline __attribute__((always_inline))
#else
#define FLAMBEAU_INLINE inline
#endif

namespace flambeau {

// 2**n for n in [-126, 127], built from the exponent bits.
FLAMBEAU_INLINE float pow2i(std::int32_t n) {
  const std::int32_t bits = (n + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// e**x in float32, within about 1 ulp; branch-free so that `omp simd` loops vectorise.
// x = n*ln2 + r with |r| <= ln2/2; e**r from its Taylor series to r**7 (truncation < 1e-8 relative);
// 2**n applied as two factors so that results down to the smallest subnormal come out right.
FLAMBEAU_INLINE float vec_exp(float x) {
  constexpr float kMax = 88.72283905f;     // log(FLT_MAX)
  constexpr float kMin = -103.97208405f;   // log of the smallest subnormal
  const float xc = x > kMax ? kMax : (x < kMin ? kMin : x);
  const float shifter = 12582912.0f;       // 1.5 * 2**23: adding it rounds to an integer
  const float t = xc * 1.44269504088896341f + shifter;
  const float nf = t - shifter;
  const float r = (xc - nf * 0.693145751953125f) - nf * 1.428606765330187e-06f;  // ln2 split hi + lo
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const std::int32_t n = static_cast<std::int32_t>(nf);
  const std::int32_t n1 = n >> 1;
  const float y = p * pow2i(n1) * pow2i(n - n1);
  const float inf = std::numeric_limits<float>::infinity();
  return x != x ? x : (x > kMax ? inf : (x < kMin ? 0.0f : y));
}

FLAMBEAU_INLINE double vec_exp(double x) { return std::exp(x); }

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

// tanh in float32, within a few ulp; branch-free like vec_exp. Below |x| = 0.625 an odd polynomial
// (x + x**3 * P(x**2), fitted to a relative error under 5e-9); above, 1 - 2/(e**2|x| + 1), whose
// subtraction loses no accuracy there because the result is over half of 1. NaN and infinities
// come out of the second form (exp(NaN) is NaN, exp(inf) makes the fraction 0).
FLAMBEAU_INLINE float vec_tanh(float x) {
  const float ax = std::fabs(x);
  const float z = x * x;
  float p = -0.0056919357670121165f;
  p = p * z + 0.02062624866506158f;
  p = p * z - 0.0537353061020833f;
  p = p * z + 0.133313812075866f;
  p = p * z - 0.3333327920317832f;
  const float small = ax + ax * z * p;
  const float big = 1.0f - 2.0f / (vec_exp(2.0f * ax) + 1.0f);
  return std::copysign(ax < 0.625f ? small : big, x);  // odd, so -0 stays -0
}

FLAMBEAU_INLINE double vec_tanh(double x) { return std::tanh(x); }

// The largest element of a contiguous row of n values (-inf when empty); NaN if the row holds NaN.
// Sixteen lanes, so the loop vectorises; softmax, log-softmax, cross-entropy and logsumexp share it.
template <class T>
FLAMBEAU_INLINE T row_max(const T* x, std::int64_t n) {
  constexpr int kMaxLanes = 16;
  T lane[kMaxLanes];
  std::uint32_t nan[kMaxLanes];
  for (int j = 0; j < kMaxLanes; ++j) {
    lane[j] = -std::numeric_limits<T>::infinity();
    nan[j] = 0;
  }
  std::int64_t i = 0;
  for (; i + kMaxLanes <= n; i += kMaxLanes) {
#pragma omp simd
    for (int j = 0; j < kMaxLanes; ++j) {
      const T v = x[i + j];
      lane[j] = v > lane[j] ? v : lane[j];
      nan[j] |= static_cast<std::uint32_t>(v != v);
    }
  }
  T top = -std::numeric_limits<T>::infinity();
  std::uint32_t any_nan = 0;
  for (int j = 0; j < kMaxLanes; ++j) {
    top = lane[j] > top ? lane[j] : top;
    any_nan |= nan[j];
  }
  for (; i < n; ++i) {
    top = x[i] > top ? x[i] : top;
    any_nan |= static_cast<std::uint32_t>(x[i] != x[i]);
  }
  return any_nan ? std::numeric_limits<T>::quiet_NaN() : top;
}

// erfc in float32 with a fractional error under 1.2e-7 everywhere (a Chebyshev-fitted exp(-z*z + P(t))
// with t = 1 / (1 + |z| / 2)), branch-free so that the loops vectorise. Its relative accuracy in the
// tails keeps gelu(x) = x * erfc(-x / sqrt 2) / 2 accurate for very negative x, where 1 + erf would
// cancel to nothing.
FLAMBEAU_INLINE float vec_erfc(float z) {
  const float az = std::fabs(z);
  const float t = 1.0f / (1.0f + 0.5f * az);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float r = t * vec_exp(-az * az + p);
  return z >= 0.0f ? r : (z != z ? z : 2.0f - r);
}
FLAMBEAU_INLINE double vec_erfc(double z) { return std::erfc(z); }

// erf in float32, vectorisable (libm's erff is an opaque call costing ~20-60 ns here). Below
// |x| = 0.5 its odd Taylor series to x**17 (the first omitted term is under 1e-9 of the sum); above,
// 1 - erfc(|x|) with vec_erfc, whose relative error under 1.2e-7 costs erf at most as much there
// because erfc(0.5) < erf(0.5). NaN goes through the second form (vec_erfc returns it).
FLAMBEAU_INLINE float vec_erf(float x) {
  const float ax = std::fabs(x);
  const float z = x * x;
  float p = 1.646211437e-06f;
  p = p * z - 1.492565036e-05f;
  p = p * z + 1.205533298e-04f;
  p = p * z - 8.548327023e-04f;
  p = p * z + 5.223977625e-03f;
  p = p * z - 2.686617065e-02f;
  p = p * z + 1.128379167e-01f;
  p = p * z - 3.761263890e-01f;
  p = p * z + 1.128379167e+00f;
  const float small = x * p;
  const float big = std::copysign(1.0f - vec_erfc(ax), x);
  return ax < 0.5f ? small : big;
}
FLAMBEAU_INLINE double vec_erf(double x) { return std::erf(x); }

}  // namespace flambeau
