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
