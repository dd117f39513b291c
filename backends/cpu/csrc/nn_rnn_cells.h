// The fused recurrent cells' arithmetic, row by row: shared by the cell ops (nn_rnn.cpp) and the
// whole-layer ops (nn_rnn_layer.cpp), which run one cell per time step.
//
// Each works on rows [begin, end) of H hidden units (the LSTM's on the units [u0, u1) of each row, so
// that threads can own a share of the units across a whole layer): the gate pre-activations (B, 4H) for the LSTM in
// the order i, f, g, o, the input and hidden projections (B, 3H) for the GRU in the order r, z, n. The
// workspace the forward pass writes (the activated gates; for the GRU also W_hn h + b_hn) is what the
// backward pass reads, so nothing is recomputed there. Callers check every size and pointer first.
//
// In-place use: each element k is read before element k of an output is written and no element is
// read after another index's write, so an output may be the same array as the input it replaces
// (lstm_backward_rows: dcx == gcy; gru_backward_rows: dhx == ghy).
#pragma once

#include <type_traits>

#include "common.h"
#include "vecmath.h"
#include "vecmath_avx512.h"

namespace flambeau {
namespace rnn_cells {
namespace {  // internal linkage: each translation unit gets its own target_clones resolvers

template <class T> FLAMBEAU_INLINE T sigm(T x) { return T(1) / (T(1) + vec_exp(-x)); }

template <class T>
FLAMBEAU_CLONES void lstm_rows(const T* gates, const T* cx, T* hy, T* cy, T* work, index_t begin, index_t end,
                               index_t h, index_t u0, index_t u1) {
  for (index_t r = begin; r < end; ++r) {
    const T* gi = gates + r * 4 * h;
    const T* gf = gi + h;
    const T* gg = gi + 2 * h;
    const T* go = gi + 3 * h;
    T* wi = work + r * 4 * h;
    T* wf = wi + h;
    T* wg = wi + 2 * h;
    T* wo = wi + 3 * h;
    const T* c0 = cx + r * h;
    T* c1 = cy + r * h;
    T* h1 = hy + r * h;
#pragma omp simd
    for (index_t k = u0; k < u1; ++k) {
      const T i = sigm(gi[k]), f = sigm(gf[k]), g = vec_tanh(gg[k]), o = sigm(go[k]);
      const T c = f * c0[k] + i * g;
      wi[k] = i;
      wf[k] = f;
      wg[k] = g;
      wo[k] = o;
      c1[k] = c;
      h1[k] = o * vec_tanh(c);
    }
  }
}

#if FLAMBEAU_HAVE_AVX512
// sigm and vec_tanh per lane with exp16 (vecmath_avx512.h): the same operations, so the same bits.
FLAMBEAU_AVX512_INLINE __m512 sigm16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, avx512::exp16(avx512::xor16(x, _mm512_set1_ps(-0.0f)))));
}

FLAMBEAU_AVX512_INLINE __m512 tanh16(__m512 x) {
  const __m512 sign = _mm512_set1_ps(-0.0f);
  const __m512 ax = avx512::abs16(x);
  const __m512 z = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(-0.0056919357670121165f);
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(0.02062624866506158f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-0.0537353061020833f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(0.133313812075866f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-0.3333327920317832f));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(ax, z), p, ax);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 big = _mm512_sub_ps(
      one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(avx512::exp16(_mm512_add_ps(ax, ax)), one)));
  const __m512 mag = _mm512_mask_mov_ps(big, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.625f), _CMP_LT_OQ), small);
  return avx512::or16(mag, avx512::and16(x, sign));  // odd: the sign of x, -0 included
}

// lstm_rows<float> on AVX-512: same arithmetic, same results.
FLAMBEAU_AVX512 void lstm_rows_avx512(const float* gates, const float* cx, float* hy, float* cy, float* work,
                                      index_t begin, index_t end, index_t h, index_t u0, index_t u1) {
  for (index_t r = begin; r < end; ++r) {
    const float* gi = gates + r * 4 * h;
    float* wi = work + r * 4 * h;
    const float* c0 = cx + r * h;
    float* c1 = cy + r * h;
    float* h1 = hy + r * h;
    for (index_t k = u0; k < u1; k += 16) {
      const __mmask16 m = u1 - k >= 16 ? __mmask16(0xFFFF) : avx512::head_mask(u1 - k);
      const __m512 i = sigm16(_mm512_maskz_loadu_ps(m, gi + k));
      const __m512 f = sigm16(_mm512_maskz_loadu_ps(m, gi + h + k));
      const __m512 g = tanh16(_mm512_maskz_loadu_ps(m, gi + 2 * h + k));
      const __m512 o = sigm16(_mm512_maskz_loadu_ps(m, gi + 3 * h + k));
      const __m512 c = _mm512_fmadd_ps(f, _mm512_maskz_loadu_ps(m, c0 + k), _mm512_mul_ps(i, g));
      avx512::store16(wi + k, m, i);
      avx512::store16(wi + h + k, m, f);
      avx512::store16(wi + 2 * h + k, m, g);
      avx512::store16(wi + 3 * h + k, m, o);
      avx512::store16(c1 + k, m, c);
      avx512::store16(h1 + k, m, _mm512_mul_ps(o, tanh16(c)));
    }
  }
}
#endif

// lstm_rows, on AVX-512 for float32 where the CPU has it.
template <class T>
void lstm_rows_any(const T* gates, const T* cx, T* hy, T* cy, T* work, index_t begin, index_t end, index_t h,
                   index_t u0, index_t u1) {
#if FLAMBEAU_HAVE_AVX512
  if constexpr (std::is_same_v<T, float>) {
    if (avx512::usable()) return lstm_rows_avx512(gates, cx, hy, cy, work, begin, end, h, u0, u1);
  }
#endif
  lstm_rows(gates, cx, hy, cy, work, begin, end, h, u0, u1);
}

template <class T>
FLAMBEAU_CLONES void lstm_backward_rows(const T* ghy, const T* gcy, const T* cx, const T* cy, const T* work,
                                        T* dgates, T* dcx, index_t begin, index_t end, index_t h, index_t u0,
                                        index_t u1) {
  for (index_t r = begin; r < end; ++r) {
    const T* wi = work + r * 4 * h;
    const T* wf = wi + h;
    const T* wg = wi + 2 * h;
    const T* wo = wi + 3 * h;
    T* di = dgates + r * 4 * h;
    T* df = di + h;
    T* dg = di + 2 * h;
    T* dout = di + 3 * h;
    const T* c0 = cx + r * h;
    const T* c1 = cy + r * h;
    const T* gh = ghy != nullptr ? ghy + r * h : nullptr;
    const T* gc = gcy != nullptr ? gcy + r * h : nullptr;
    T* dc = dcx + r * h;
#pragma omp simd
    for (index_t k = u0; k < u1; ++k) {
      const T i = wi[k], f = wf[k], g = wg[k], o = wo[k];
      const T tc = vec_tanh(c1[k]);
      const T ghk = gh != nullptr ? gh[k] : T(0);
      const T gck = (gc != nullptr ? gc[k] : T(0)) + ghk * o * (T(1) - tc * tc);
      di[k] = gck * g * i * (T(1) - i);
      df[k] = gck * c0[k] * f * (T(1) - f);
      dg[k] = gck * i * (T(1) - g * g);
      dout[k] = ghk * tc * o * (T(1) - o);
      dc[k] = gck * f;
    }
  }
}

template <class T>
FLAMBEAU_CLONES void gru_rows(const T* ig, const T* hg, const T* hx, T* hy, T* work, index_t begin, index_t end,
                              index_t h) {
  for (index_t r = begin; r < end; ++r) {
    const T* ir = ig + r * 3 * h;
    const T* hr = hg + r * 3 * h;
    T* wr = work + r * 4 * h;
    const T* h0 = hx + r * h;
    T* h1 = hy + r * h;
#pragma omp simd
    for (index_t k = 0; k < h; ++k) {
      const T rg = sigm(ir[k] + hr[k]);
      const T z = sigm(ir[h + k] + hr[h + k]);
      const T hn = hr[2 * h + k];
      const T n = vec_tanh(ir[2 * h + k] + rg * hn);
      wr[k] = rg;
      wr[h + k] = z;
      wr[2 * h + k] = n;
      wr[3 * h + k] = hn;
      h1[k] = n + z * (h0[k] - n);
    }
  }
}

template <class T>
FLAMBEAU_CLONES void gru_backward_rows(const T* ghy, const T* hx, const T* work, T* dig, T* dhg, T* dhx, index_t begin,
                                       index_t end, index_t h) {
  for (index_t r = begin; r < end; ++r) {
    const T* wr = work + r * 4 * h;
    const T* g = ghy + r * h;
    const T* h0 = hx + r * h;
    T* di = dig + r * 3 * h;
    T* dh = dhg + r * 3 * h;
    T* dx = dhx + r * h;
#pragma omp simd
    for (index_t k = 0; k < h; ++k) {
      const T rg = wr[k], z = wr[h + k], n = wr[2 * h + k], hn = wr[3 * h + k];
      const T dn = g[k] * (T(1) - z) * (T(1) - n * n);
      const T dz = g[k] * (h0[k] - n) * z * (T(1) - z);
      const T dr = dn * hn * rg * (T(1) - rg);
      di[k] = dr;
      di[h + k] = dz;
      di[2 * h + k] = dn;
      dh[k] = dr;
      dh[h + k] = dz;
      dh[2 * h + k] = dn * rg;
      dx[k] = g[k] * z;
    }
  }
}

}  // namespace
}  // namespace rnn_cells
}  // namespace flambeau
