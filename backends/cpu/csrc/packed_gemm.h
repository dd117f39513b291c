// C = D + A @ B for a B that is used many times: the recurrent layers multiply every time step's
// states by the same hidden weight. BLAS packs its operands into cache-friendly panels at every
// call; for a (32, 128) @ (128, 512) step product OpenBLAS spent ~40% of its time packing the weight
// (perf, sgemm_itcopy). Here B is packed once per layer and each product runs only the kernel.
//
// Packed layout: panel q holds B's columns [q * W, q * W + W) as k rows of W contiguous elements
// (W = two 32-byte vectors: 16 floats or 8 doubles), zero-padded past column n. A tile of up to six
// rows of C by one panel lives in twelve vector registers while k runs (the classic 6x16 AVX2 tile);
// the loops are written with GCC vector types and compiled per instruction set (FLAMBEAU_CLONES).
// Panels are split across threads; rows of A, D and C are `lda`/`ldc` apart. Callers size every
// pointer: A (m, k), D and C (m, n).
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "common.h"
#include "vecmath.h"
#include "vecmath_avx512.h"

namespace flambeau {
namespace packed_gemm {
namespace {  // internal linkage: each translation unit gets its own target_clones resolvers

template <class T>
struct Vec;
// `type` for registers, `unaligned` for loads and stores at any element's address (GCC then emits
// plain unaligned vector moves; memcpy through an array made it bounce the registers via the stack).
template <>
struct Vec<float> {
  typedef float type __attribute__((vector_size(32)));
  typedef float unaligned __attribute__((vector_size(32), aligned(4)));
};
template <>
struct Vec<double> {
  typedef double type __attribute__((vector_size(32)));
  typedef double unaligned __attribute__((vector_size(32), aligned(8)));
};

constexpr int kTileRows = 6;
template <class T>
constexpr index_t kLanes = static_cast<index_t>(32 / sizeof(T));
template <class T>
constexpr index_t kPanel = 2 * kLanes<T>;

template <class T>
struct PackedB {
  index_t k = 0, n = 0, panels = 0;
  std::unique_ptr<T[]> data;  // panels * k * kPanel<T>

  const T* panel(index_t q) const { return data.get() + q * k * kPanel<T>; }
};

// A packed B of k rows and n columns, its panels unset (not zeroed: the weights' packing ran on one
// thread before the step loops, and zeroing first added a pass) until pack_panels fills them.
template <class T>
PackedB<T> empty(index_t k, index_t n) {
  constexpr index_t W = kPanel<T>;
  PackedB<T> out;
  out.k = k;
  out.n = n;
  out.panels = (n + W - 1) / W;
  out.data.reset(new T[static_cast<std::size_t>(std::max<index_t>(out.panels * k * W, 1))]);
  return out;
}

// Fills panels [q0, q1) of `out` from B (out.k, out.n), element (p, j) at b[p * row_step + j * col_step]
// (a transposed matrix: swap the steps), and the last panel's columns past n with zeros. Threads may
// fill disjoint panel ranges at the same time.
template <class T>
void pack_panels(PackedB<T>& out, const T* b, index_t row_step, index_t col_step, index_t q0, index_t q1) {
  constexpr index_t W = kPanel<T>;
  const index_t k = out.k;
  for (index_t q = q0; q < q1; ++q) {
    const index_t cols = std::min(W, out.n - q * W);
    T* dst = out.data.get() + q * k * W;
    for (index_t p = 0; p < k; ++p) {
      for (index_t j = 0; j < cols; ++j) dst[p * W + j] = b[p * row_step + (q * W + j) * col_step];
      for (index_t j = cols; j < W; ++j) dst[p * W + j] = T(0);
    }
  }
}

// Packs B (k, n), element (p, j) at b[p * row_step + j * col_step], on the calling thread.
template <class T>
PackedB<T> pack(const T* b, index_t k, index_t n, index_t row_step, index_t col_step) {
  PackedB<T> out = empty<T>(k, n);
  pack_panels(out, b, row_step, col_step, 0, out.panels);
  return out;
}

// acc[r] = A's row r (rows `lda` apart) @ the panel, for rows [0, R): the tile's inner loop.
template <class T, int R>
FLAMBEAU_INLINE void panel_product(index_t k, const T* a, index_t lda, const T* panel,
                                   typename Vec<T>::type (&acc)[R][2]) {
  using V = typename Vec<T>::type;
  using U = typename Vec<T>::unaligned;
  constexpr index_t L = kLanes<T>;
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = V{};
  for (index_t p = 0; p < k; ++p) {
    const V b0 = *reinterpret_cast<const U*>(panel + p * 2 * L);
    const V b1 = *reinterpret_cast<const U*>(panel + p * 2 * L + L);
    for (int r = 0; r < R; ++r) {
      const T s = a[r * lda + p];  // scalar * vector: one broadcast load, then fused multiply-adds
      acc[r][0] += s * b0;
      acc[r][1] += s * b1;
    }
  }
}

// Rows [0, R) of C's columns [0, cols) for one panel: C = D + A @ panel (D may be C, or null for 0).
template <class T, int R>
FLAMBEAU_INLINE void tile(index_t k, const T* a, index_t lda, const T* panel, const T* d, T* c, index_t ldc,
                          index_t cols) {
  using V = typename Vec<T>::type;
  using U = typename Vec<T>::unaligned;
  constexpr index_t L = kLanes<T>;
  V acc[R][2];
  panel_product<T, R>(k, a, lda, panel, acc);
  if (cols == 2 * L) {
    for (int r = 0; r < R; ++r) {
      V o0 = acc[r][0], o1 = acc[r][1];
      if (d != nullptr) {
        o0 += *reinterpret_cast<const U*>(d + r * ldc);
        o1 += *reinterpret_cast<const U*>(d + r * ldc + L);
      }
      *reinterpret_cast<U*>(c + r * ldc) = o0;
      *reinterpret_cast<U*>(c + r * ldc + L) = o1;
    }
    return;
  }
  for (int r = 0; r < R; ++r) {  // the last, partial panel
    for (index_t j = 0; j < cols; ++j) {
      const T v = j < L ? acc[r][0][j] : acc[r][1][j - L];
      c[r * ldc + j] = (d != nullptr ? d[r * ldc + j] : T(0)) + v;
    }
  }
}

#ifdef FLAMBEAU_HAVE_AVX512
// The AVX-512 tile: a panel's W columns are one 512-bit register, so a tile is 12 rows by one panel,
// twelve accumulators, and each multiply-add takes its row's element of A as an embedded broadcast
// (one instruction where the 256-bit tile needs a broadcast and two multiply-adds). On Zen 4, whose
// units are 256 bits wide, this halves the instructions per multiply-add; the 256-bit tile's were
// enough to keep it below the FMA units' peak. Each element is summed in the same order as by the
// 256-bit tile (one fused multiply-add per k, then D), so both give the same bits.
template <class T>
struct Zmm;
template <>
struct Zmm<float> {
  using V = __m512;
  static FLAMBEAU_AVX512_INLINE V zero() { return _mm512_setzero_ps(); }
  static FLAMBEAU_AVX512_INLINE V load(const float* p) { return _mm512_loadu_ps(p); }
  static FLAMBEAU_AVX512_INLINE void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static FLAMBEAU_AVX512_INLINE V fma(float s, V b, V acc) { return _mm512_fmadd_ps(_mm512_set1_ps(s), b, acc); }
  static FLAMBEAU_AVX512_INLINE V add(V a, V b) { return _mm512_add_ps(a, b); }
  static FLAMBEAU_AVX512_INLINE V splat(float s) { return _mm512_set1_ps(s); }
};
template <>
struct Zmm<double> {
  using V = __m512d;
  static FLAMBEAU_AVX512_INLINE V zero() { return _mm512_setzero_pd(); }
  static FLAMBEAU_AVX512_INLINE V load(const double* p) { return _mm512_loadu_pd(p); }
  static FLAMBEAU_AVX512_INLINE void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static FLAMBEAU_AVX512_INLINE V fma(double s, V b, V acc) { return _mm512_fmadd_pd(_mm512_set1_pd(s), b, acc); }
  static FLAMBEAU_AVX512_INLINE V add(V a, V b) { return _mm512_add_pd(a, b); }
  static FLAMBEAU_AVX512_INLINE V splat(double s) { return _mm512_set1_pd(s); }
};

constexpr int kZmmRows = 12;

// Rows [0, R) of C's columns [0, cols) for one panel: C = D + (A @ panel + row_add[r] on row r), D and
// row_add null for none (D may be C: accumulate). D's rows are ldc apart, as C's.
template <class T, int R>
FLAMBEAU_AVX512_INLINE void tile512(index_t k, const T* a, index_t lda, const T* panel, const T* d, T* c,
                                    index_t ldc, index_t cols, const T* row_add) {
  using Z = Zmm<T>;
  constexpr index_t W = kPanel<T>;
  typename Z::V acc[R];
  for (int r = 0; r < R; ++r) acc[r] = Z::zero();
  for (index_t p = 0; p < k; ++p) {
    const typename Z::V b = Z::load(panel + p * W);
    for (int r = 0; r < R; ++r) acc[r] = Z::fma(a[r * lda + p], b, acc[r]);
  }
  if (row_add != nullptr)
    for (int r = 0; r < R; ++r) acc[r] = Z::add(acc[r], Z::splat(row_add[r]));
  if (cols == W) {
    for (int r = 0; r < R; ++r) Z::store(c + r * ldc, d != nullptr ? Z::add(Z::load(d + r * ldc), acc[r]) : acc[r]);
    return;
  }
  alignas(64) T tmp[W];
  for (int r = 0; r < R; ++r) {  // a partial panel: only its real columns exist in C
    Z::store(tmp, acc[r]);
    for (index_t j = 0; j < cols; ++j) c[r * ldc + j] = d != nullptr ? d[r * ldc + j] + tmp[j] : tmp[j];
  }
}


// tile512 for `rows` (<= R) rows.
template <class T, int R>
FLAMBEAU_AVX512_INLINE void rows512(int rows, index_t k, const T* a, index_t lda, const T* b, const T* d, T* c,
                                    index_t ldc, index_t cols, const T* row_add) {
  if constexpr (R > 1) {
    if (rows < R) return rows512<T, R - 1>(rows, k, a, lda, b, d, c, ldc, cols, row_add);
  }
  tile512<T, R>(k, a, lda, b, d, c, ldc, cols, row_add);
}

// panels() on the AVX-512 tile.
template <class T>
FLAMBEAU_AVX512 void panels512(const PackedB<T>& b, index_t q0, index_t q1, index_t m, const T* a, index_t lda,
                               const T* d, T* c, index_t ldc) {
  constexpr index_t W = kPanel<T>;
  const index_t k = b.k;
  for (index_t q = q0; q < q1; ++q) {
    const T* panel = b.panel(q);
    const index_t cols = std::min(W, b.n - q * W), col = q * W;
    for (index_t r = 0; r < m; r += kZmmRows) {
      const int rows = static_cast<int>(std::min<index_t>(kZmmRows, m - r));
      rows512<T, kZmmRows>(rows, k, a + r * lda, lda, panel, d != nullptr ? d + r * ldc + col : nullptr,
                           c + r * ldc + col, ldc, cols, static_cast<const T*>(nullptr));
    }
  }
}
#endif

// Panels [q0, q1) of C (m, n) = D + A (m, k) @ B.
template <class T>
FLAMBEAU_CLONES void panels_generic(const PackedB<T>& b, index_t q0, index_t q1, index_t m, const T* a, index_t lda,
                                    const T* d, T* c, index_t ldc) {
  constexpr index_t W = kPanel<T>;
  const index_t k = b.k;
  for (index_t q = q0; q < q1; ++q) {
    const T* panel = b.panel(q);
    const index_t cols = std::min(W, b.n - q * W);
    const index_t col = q * W;
    index_t r = 0;
    for (; r + kTileRows <= m; r += kTileRows)
      tile<T, kTileRows>(k, a + r * lda, lda, panel, d != nullptr ? d + r * ldc + col : nullptr, c + r * ldc + col,
                         ldc, cols);
    const T* dr = d != nullptr ? d + r * ldc + col : nullptr;
    T* cr = c + r * ldc + col;
    switch (m - r) {
      case 5: tile<T, 5>(k, a + r * lda, lda, panel, dr, cr, ldc, cols); break;
      case 4: tile<T, 4>(k, a + r * lda, lda, panel, dr, cr, ldc, cols); break;
      case 3: tile<T, 3>(k, a + r * lda, lda, panel, dr, cr, ldc, cols); break;
      case 2: tile<T, 2>(k, a + r * lda, lda, panel, dr, cr, ldc, cols); break;
      case 1: tile<T, 1>(k, a + r * lda, lda, panel, dr, cr, ldc, cols); break;
      default: break;
    }
  }
}

// Panels [q0, q1) of C (m, n) = D + A (m, k) @ B, on the AVX-512 tile where the CPU has it.
template <class T>
void panels(const PackedB<T>& b, index_t q0, index_t q1, index_t m, const T* a, index_t lda, const T* d, T* c,
            index_t ldc) {
#ifdef FLAMBEAU_HAVE_AVX512
  if (avx512::usable() && b.k > 0) return panels512(b, q0, q1, m, a, lda, d, c, ldc);
#endif
  panels_generic(b, q0, q1, m, a, lda, d, c, ldc);
}

// C (m, n) = D + A (m, k) @ B, D null for none or C itself to accumulate; panels split across threads.
template <class T>
void multiply(const PackedB<T>& b, index_t m, const T* a, index_t lda, const T* d, T* c, index_t ldc) {
  if (m <= 0 || b.n <= 0) return;
  const index_t work = m * b.n * std::max<index_t>(b.k, 1) / 8;  // multiply-adds, weighted as elementwise work
  parallel_chunks(b.panels, 1, [&](index_t q0, index_t q1) { panels(b, q0, q1, m, a, lda, d, c, ldc); }, work);
}

}  // namespace
}  // namespace packed_gemm
}  // namespace flambeau
