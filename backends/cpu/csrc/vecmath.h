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

}  // namespace flambeau
