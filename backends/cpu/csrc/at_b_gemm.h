// C (m, n) = A^T @ B for A (k, m) and B (k, n) whose k is long: the recurrent layers' weight gradients,
// every step's gate gradients (N, 4H) against the states or inputs before them (N, H or I), summed
// over all N rows. OpenBLAS packs both operands of such a product at every call (sgemm_otcopy took a
// quarter of the LSTM hidden weight's gradient, perf) and ran it at ~70% of the FMA units' peak.
//
// Neither operand needs packing for the AVX-512 tile: for 16 rows of C (16 columns of A) and one
// 512-bit panel of columns of B, step p of the sum reads A's 16 elements in row p (contiguous: each
// an embedded broadcast) and B's panel in row p (one load). k runs in blocks whose A strip and B
// panels stay in the L1 cache; C accumulates across the blocks. The tiles of rows of C are handed out
// to the threads one at a time (parallel_tasks), and each element is summed in row order of A and B by
// one thread: the result does not depend on the thread count. Without AVX-512 the callers use BLAS
// (gemm_rows, fortran_gemm.h).
#pragma once

#include <algorithm>

#include "common.h"
#include "vecmath_avx512.h"

namespace flambeau {
namespace at_b {
namespace {  // internal linkage: each translation unit gets its own copies

#ifdef FLAMBEAU_HAVE_AVX512

constexpr int kRows = 16;        // rows of C per tile (16 of the 32 vector registers hold sums)
constexpr index_t kBlock = 256;  // steps of k per block: a 16-row A strip and a B panel are 16 KB each

template <class T>
struct Lanes;
template <>
struct Lanes<float> {
  using V = __m512;
  using Mask = __mmask16;
  static constexpr index_t W = 16;
  static FLAMBEAU_AVX512_INLINE V zero() { return _mm512_setzero_ps(); }
  static FLAMBEAU_AVX512_INLINE V load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static constexpr Mask kFull = 0xFFFF;
  static FLAMBEAU_AVX512_INLINE void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static FLAMBEAU_AVX512_INLINE void store(float* p, Mask m, V v) { _mm512_mask_storeu_ps(p, m, v); }
  static FLAMBEAU_AVX512_INLINE V fma(float s, V b, V acc) { return _mm512_fmadd_ps(_mm512_set1_ps(s), b, acc); }
  static FLAMBEAU_AVX512_INLINE V add(V a, V b) { return _mm512_add_ps(a, b); }
};
template <>
struct Lanes<double> {
  using V = __m512d;
  using Mask = __mmask8;
  static constexpr index_t W = 8;
  static FLAMBEAU_AVX512_INLINE V zero() { return _mm512_setzero_pd(); }
  static FLAMBEAU_AVX512_INLINE V load(Mask m, const double* p) { return _mm512_maskz_loadu_pd(m, p); }
  static constexpr Mask kFull = 0xFF;
  static FLAMBEAU_AVX512_INLINE void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static FLAMBEAU_AVX512_INLINE void store(double* p, Mask m, V v) { _mm512_mask_storeu_pd(p, m, v); }
  static FLAMBEAU_AVX512_INLINE V fma(double s, V b, V acc) { return _mm512_fmadd_pd(_mm512_set1_pd(s), b, acc); }
  static FLAMBEAU_AVX512_INLINE V add(V a, V b) { return _mm512_add_pd(a, b); }
};

// R rows of C by one panel (the columns `mask` selects), over k steps: C (+)= A^T @ B there. A function
// of its own, not inlined into the loops around it (inlined, GCC stored the 16 sums at every step).
// Whole panels are stored with plain stores: Zen 4's masked stores are slow.
template <class T, int R>
__attribute__((target("avx512f"), noinline)) void tile(index_t k, const T* a, index_t lda, const T* b, index_t ldb,
                                                       T* c, index_t ldc, typename Lanes<T>::Mask mask,
                                                       bool accumulate) {
  using L = Lanes<T>;
  typename L::V acc[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) acc[r] = L::zero();
  for (index_t p = 0; p < k; ++p) {
    const typename L::V bv = L::load(mask, b + p * ldb);
    const T* ar = a + p * lda;
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) acc[r] = L::fma(ar[r], bv, acc[r]);
  }
  // branch-free loops over the sums: a test inside kept GCC from unrolling them, and the sums then
  // lived in memory, stored at every step of p
  if (accumulate) {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) acc[r] = L::add(L::load(mask, c + r * ldc), acc[r]);
  }
  if (mask == L::kFull) {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) L::store(c + r * ldc, acc[r]);
  } else {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) L::store(c + r * ldc, mask, acc[r]);
  }
}

// tile() for `rows` (<= R) rows.
template <class T, int R>
FLAMBEAU_AVX512_INLINE void tile_rows(int rows, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
                                      index_t ldc, typename Lanes<T>::Mask mask, bool accumulate) {
  if constexpr (R > 1) {
    if (rows < R) return tile_rows<T, R - 1>(rows, k, a, lda, b, ldb, c, ldc, mask, accumulate);
  }
  tile<T, R>(k, a, lda, b, ldb, c, ldc, mask, accumulate);
}

// Row tiles [t0, t1) of C = A^T @ B.
template <class T>
FLAMBEAU_AVX512 void row_tiles(index_t t0, index_t t1, index_t m, index_t n, index_t k, const T* a, index_t lda,
                               const T* b, index_t ldb, T* c, index_t ldc) {
  using L = Lanes<T>;
  constexpr index_t W = L::W;
  for (index_t t = t0; t < t1; ++t) {
    const index_t r0 = t * kRows;
    const int rows = static_cast<int>(std::min<index_t>(kRows, m - r0));
    for (index_t kb = 0; kb < k; kb += kBlock) {
      const index_t kl = std::min(kBlock, k - kb);
      for (index_t j = 0; j < n; j += W) {
        const index_t cols = std::min(W, n - j);
        const auto mask = static_cast<typename L::Mask>((1u << cols) - 1u);
        tile_rows<T, kRows>(rows, kl, a + kb * lda + r0, lda, b + kb * ldb + j, ldb, c + r0 * ldc + j, ldc, mask,
                            kb > 0);
      }
    }
  }
}

#endif  // FLAMBEAU_HAVE_AVX512

// Whether product() runs here (else the caller uses BLAS).
inline bool available() {
#ifdef FLAMBEAU_HAVE_AVX512
  return avx512::usable();
#else
  return false;
#endif
}

// C (m, n) = A^T @ B, A (k, m) and B (k, n) with rows lda and ldb apart, C's ldc apart; C = 0 when k is 0.
// Only where available(); row tiles split across threads.
template <class T>
void product(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c, index_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k == 0) {
    for (index_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
#ifdef FLAMBEAU_HAVE_AVX512
  const index_t tiles = (m + kRows - 1) / kRows;
  parallel_tasks(threads_for(m * n * (k / 8 + 1)), tiles,
                 [&](index_t t) { row_tiles(t, t + 1, m, n, k, a, lda, b, ldb, c, ldc); });
#endif
}

}  // namespace
}  // namespace at_b
}  // namespace flambeau
