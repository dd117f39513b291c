// AVX-512 forms of the exp-bound row loops (softmax, log-softmax's gradient, cross-entropy, the LSTM
// cell), for float32, chosen at run time on CPUs that have AVX-512F.
//
// Why by hand: vec_exp (vecmath.h) is written so that `omp simd` loops vectorise on every x86-64, and
// so it builds 2**n from exponent bits in two factors and selects inf/0 outside the range; AVX-512's
// vscalefps does all of that in one instruction (p * 2**n, rounded once, overflow to inf, underflow
// through the subnormals to 0), which compilers never emit from scalar code. exp16 below is
// bit-identical to vec_exp (same reduction, same polynomial, same single rounding of the scaling) at
// 2.5x its speed on Zen 4, and the row helpers add up in the same lanes, blocks and order as their
// generic forms in softmax.cpp and nn_loss.cpp, so which path runs never changes a result.
//
// Use: call the row functions only when avx512::usable() is true (they hold AVX-512 instructions).
// Builds without them (other compilers or architectures) have usable() and set_usable() answering
// false, so callers test one flag and keep their #if around the AVX-512 code alone.
#pragma once

#include <atomic>
#include <cstdint>

#if defined(__GNUC__) && defined(__x86_64__)
#define FLAMBEAU_HAVE_AVX512 1
#include <immintrin.h>

#define FLAMBEAU_AVX512 __attribute__((target("avx512f")))
#define FLAMBEAU_AVX512_INLINE inline __attribute__((target("avx512f"), always_inline))

namespace flambeau {
namespace avx512 {

// Whether the AVX-512 paths run: on a CPU with AVX-512F unless set_usable(false) turned them off
// (the tests compare both paths on one machine).
inline std::atomic<bool>& usable_flag() {
  static std::atomic<bool> flag{__builtin_cpu_supports("avx512f") != 0};
  return flag;
}

inline bool usable() { return usable_flag().load(std::memory_order_relaxed); }

// Turns the AVX-512 paths on (where the CPU has them) or off; returns whether they were on.
inline bool set_usable(bool on) {
  return usable_flag().exchange(on && __builtin_cpu_supports("avx512f") != 0);
}

// a > b ? a : b per lane (vmaxps). Here and for vscalefps the maskz forms, because GCC 12 warns that
// the plain forms' undefined pass-through "may be used uninitialized" wherever they are inlined.
FLAMBEAU_AVX512_INLINE __m512 max16(__m512 a, __m512 b) { return _mm512_maskz_max_ps(0xFFFF, a, b); }
FLAMBEAU_AVX512_INLINE __m512 min16(__m512 a, __m512 b) { return _mm512_maskz_min_ps(0xFFFF, a, b); }

// Bitwise and, or, xor of floats with AVX-512F's integer forms (the float forms need AVX512DQ).
FLAMBEAU_AVX512_INLINE __m512 and16(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
FLAMBEAU_AVX512_INLINE __m512 or16(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
// |a| (clears the sign bit)
FLAMBEAU_AVX512_INLINE __m512 abs16(__m512 a) {
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7FFFFFFF)));
}
FLAMBEAU_AVX512_INLINE __m512 xor16(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

// e**x per lane: vec_exp's reduction and Taylor polynomial, then p * 2**n by vscalefps.
FLAMBEAU_AVX512_INLINE __m512 exp16(__m512 x) {
  // Wider than vec_exp's clamp [-103.97, 88.72]: scalef itself gives 0 below it and inf above it
  const __m512 xc = min16(max16(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(89.0f));
  const __m512 shifter = _mm512_set1_ps(12582912.0f);  // 1.5 * 2**23: adding it rounds to an integer
  const __m512 nf = _mm512_sub_ps(_mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), shifter), shifter);
  __m512 r = _mm512_fnmadd_ps(nf, _mm512_set1_ps(0.693145751953125f), xc);
  r = _mm512_fnmadd_ps(nf, _mm512_set1_ps(1.428606765330187e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512 y = _mm512_maskz_scalef_ps(0xFFFF, p, nf);
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);  // NaN stays NaN
}

// The first `n` (< 16) lanes set.
FLAMBEAU_AVX512_INLINE __mmask16 head_mask(std::int64_t n) {
  return static_cast<__mmask16>((1u << n) - 1u);
}

// Stores the lanes of `mask`: a plain store when all sixteen are set. Zen 4 runs masked 512-bit
// stores far slower than plain ones (the LSTM cell's six masked stores per chunk took most of its
// time), so loops whose every chunk but the last is whole keep the mask for that one.
FLAMBEAU_AVX512_INLINE void store16(float* p, __mmask16 mask, __m512 v) {
  if (mask == 0xFFFF) {
    _mm512_storeu_ps(p, v);
  } else {
    _mm512_mask_storeu_ps(p, mask, v);
  }
}
FLAMBEAU_AVX512_INLINE void store8(double* p, __mmask8 mask, __m512d v) {
  if (mask == 0xFF) {
    _mm512_storeu_pd(p, v);
  } else {
    _mm512_mask_storeu_pd(p, mask, v);
  }
}

// row_max (vecmath.h) for float32: the largest element, -inf when empty, NaN if the row holds NaN.
// Lanes, then the tail, compared in row_max's order (which of +0 and -0 wins depends on it).
FLAMBEAU_AVX512_INLINE float row_max(const float* x, std::int64_t n) {
  __m512 top = _mm512_set1_ps(-__builtin_inff());
  __mmask16 nan = 0;
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    top = max16(v, top);  // v > top ? v : top, as row_max's lanes
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  }
  alignas(64) float lane[16];
  _mm512_store_ps(lane, top);
  float best = -__builtin_inff();
  for (int j = 0; j < 16; ++j) best = lane[j] > best ? lane[j] : best;
  bool any_nan = nan != 0;
  for (; i < n; ++i) {
    best = x[i] > best ? x[i] : best;
    any_nan |= x[i] != x[i];
  }
  return any_nan ? __builtin_nanf("") : best;
}

// The sum of 16 lanes and a scalar tail total `s`, added as the generic loops do: s first, then
// lane 0, 1, ..., 15, in float.
FLAMBEAU_AVX512_INLINE float add_lanes(float s, __m512 acc) {
  alignas(64) float lane[16];
  _mm512_store_ps(lane, acc);
  for (int j = 0; j < 16; ++j) s += lane[j];
  return s;
}

// The tail's values (fewer than 16), added one by one in order to 0.
FLAMBEAU_AVX512_INLINE float add_in_order(__m512 v, std::int64_t count) {
  alignas(64) float lane[16];
  _mm512_store_ps(lane, v);
  float s = 0.0f;
  for (std::int64_t j = 0; j < count; ++j) s += lane[j];
  return s;
}

// Rows add up in float lanes in blocks of this many elements, each block then into a double (as the
// generic loops in softmax.cpp and nn_loss.cpp).
constexpr std::int64_t kBlock = 4096;

// sum(exp(x - m)) in double, also written to y when y is not null.
FLAMBEAU_AVX512_INLINE double row_sum_exp(const float* x, float* y, std::int64_t n, float m) {
  const __m512 mv = _mm512_set1_ps(m);
  double total = 0.0;
  for (std::int64_t b = 0; b < n; b += kBlock) {
    const std::int64_t e = b + kBlock < n ? b + kBlock : n;
    __m512 acc = _mm512_setzero_ps();
    std::int64_t k = b;
    for (; k + 16 <= e; k += 16) {
      const __m512 v = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + k), mv));
      if (y) _mm512_storeu_ps(y + k, v);
      acc = _mm512_add_ps(acc, v);
    }
    float s = 0.0f;
    if (k < e) {
      const __mmask16 mask = head_mask(e - k);
      const __m512 v = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + k), mv));
      if (y) _mm512_mask_storeu_ps(y + k, mask, v);
      s = add_in_order(v, e - k);
    }
    total += add_lanes(s, acc);
  }
  return total;
}

// sum(a) in double, added as row_dot(a, nullptr) in softmax.cpp.
FLAMBEAU_AVX512_INLINE double row_sum(const float* a, std::int64_t n) {
  double total = 0.0;
  for (std::int64_t b = 0; b < n; b += kBlock) {
    const std::int64_t e = b + kBlock < n ? b + kBlock : n;
    __m512 acc = _mm512_setzero_ps();
    std::int64_t k = b;
    for (; k + 16 <= e; k += 16) acc = _mm512_add_ps(acc, _mm512_loadu_ps(a + k));
    float s = 0.0f;
    if (k < e) s = add_in_order(_mm512_maskz_loadu_ps(head_mask(e - k), a + k), e - k);
    total += add_lanes(s, acc);
  }
  return total;
}

}  // namespace avx512
}  // namespace flambeau

#else  // no AVX-512 paths in this build

namespace flambeau {
namespace avx512 {
inline bool usable() { return false; }
inline bool set_usable(bool) { return false; }
}  // namespace avx512
}  // namespace flambeau

#endif  // defined(__GNUC__) && defined(__x86_64__)
