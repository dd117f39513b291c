// The convolutions' own matrix product: C (m, n) = A (m, k) @ B with B packed in panels of W columns
// (packed_gemm.h's layout and 6x16 register tile). BLAS packs both operands at every call into its
// own buffers; a convolution's B is the im2col columns, which nn_conv_packed.cpp writes straight into
// panels, one sample at a time, while they are still in the cache. A is read in place (rows `lda`
// apart: the prefetcher follows its six row streams), so nothing else is copied.
//
// Blocking: k in slices of kKc rows, so that a panel's slice (16 KB) stays in L1 while the row tiles
// of A run over it; panels in groups of kNc, so that a group's slices stay in L2 for every row tile.
// Callers size every pointer: A (m, k), C (m, n) `ldc` apart, B ceil(n / W) panels `b_stride` apart.
#pragma once

#include <algorithm>

#include "common.h"
#include "packed_gemm.h"

namespace flambeau {
namespace conv_gemm {
namespace {  // internal linkage: each translation unit gets its own target_clones resolvers

using packed_gemm::kLanes;
using packed_gemm::kPanel;
using packed_gemm::Vec;

constexpr index_t kKc = 256;
constexpr index_t kNc = 64;

// k split into equal slices of at most kKc (288 as 144 + 144, not 256 + 32: every slice's partial
// sums are stored and reloaded, which a short slice does not pay back).
inline index_t k_slice(index_t k) {
  const index_t slices = (k + kKc - 1) / kKc;
  return (k + slices - 1) / slices;
}

// Rows [0, R) by one panel's `cols` real columns: C (= or +=) A @ panel (+ row_add[r] on row r).
template <class T, int R>
FLAMBEAU_INLINE void tile(index_t k, const T* a, index_t lda, const T* panel, T* c, index_t ldc, index_t cols,
                          bool accumulate, const T* row_add) {
  using V = typename Vec<T>::type;
  using U = typename Vec<T>::unaligned;
  constexpr index_t L = kLanes<T>;
  V acc[R][2];
  packed_gemm::panel_product<T, R>(k, a, lda, panel, acc);
  if (row_add != nullptr) {
    for (int r = 0; r < R; ++r) {
      acc[r][0] += row_add[r];
      acc[r][1] += row_add[r];
    }
  }
  if (cols == 2 * L) {
    for (int r = 0; r < R; ++r) {
      U* out = reinterpret_cast<U*>(c + r * ldc);
      if (accumulate) {
        out[0] = out[0] + acc[r][0];
        *reinterpret_cast<U*>(c + r * ldc + L) = *reinterpret_cast<const U*>(c + r * ldc + L) + acc[r][1];
      } else {
        out[0] = acc[r][0];
        *reinterpret_cast<U*>(c + r * ldc + L) = acc[r][1];
      }
    }
    return;
  }
  for (int r = 0; r < R; ++r) {  // a partial panel: only its real columns exist in C
    for (index_t j = 0; j < cols; ++j) {
      const T v = j < L ? acc[r][0][j] : acc[r][1][j - L];
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + v : v;
    }
  }
}

// C (m, n) = A (m, k) @ B (+ C when `accumulate`) (+ row_add[i] on row i when not null). B: panel q
// of W columns at b + q * b_stride, its row p at p * W, zero past column n.
template <class T>
FLAMBEAU_CLONES void multiply_generic(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b,
                                      index_t b_stride, T* c, index_t ldc, bool accumulate, const T* row_add) {
  constexpr index_t W = kPanel<T>;
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // an empty sum: C keeps its value (accumulate) or becomes row_add / 0
    if (accumulate && row_add == nullptr) return;
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) {
        const T add = row_add != nullptr ? row_add[i] : T(0);
        c[i * ldc + j] = accumulate ? c[i * ldc + j] + add : add;
      }
    return;
  }
  const index_t panels = (n + W - 1) / W;
  const index_t kc = k_slice(k);
  for (index_t kb = 0; kb < k; kb += kc) {
    const index_t kl = std::min(kc, k - kb);
    const bool acc = accumulate || kb > 0;
    const T* add = kb + kl == k ? row_add : nullptr;  // once, with the last slice
    for (index_t q0 = 0; q0 < panels; q0 += kNc) {
      const index_t q1 = std::min(panels, q0 + kNc);
      for (index_t r = 0; r < m; r += 6) {
        const T* pa = a + r * lda + kb;
        const T* ra = add != nullptr ? add + r : nullptr;
        for (index_t q = q0; q < q1; ++q) {
          const T* pb = b + q * b_stride + kb * W;
          T* pc = c + r * ldc + q * W;
          const index_t cols = std::min(W, n - q * W);
          switch (std::min<index_t>(6, m - r)) {
            case 6: tile<T, 6>(kl, pa, lda, pb, pc, ldc, cols, acc, ra); break;
            case 5: tile<T, 5>(kl, pa, lda, pb, pc, ldc, cols, acc, ra); break;
            case 4: tile<T, 4>(kl, pa, lda, pb, pc, ldc, cols, acc, ra); break;
            case 3: tile<T, 3>(kl, pa, lda, pb, pc, ldc, cols, acc, ra); break;
            case 2: tile<T, 2>(kl, pa, lda, pb, pc, ldc, cols, acc, ra); break;
            default: tile<T, 1>(kl, pa, lda, pb, pc, ldc, cols, acc, ra); break;
          }
        }
      }
    }
  }
}


#ifdef FLAMBEAU_HAVE_AVX512

// multiply_generic's loops around the 12-row tile.
template <class T>
FLAMBEAU_AVX512 void multiply512(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b,
                                 index_t b_stride, T* c, index_t ldc, bool accumulate, const T* row_add) {
  constexpr index_t W = kPanel<T>;
  const index_t panels = (n + W - 1) / W;
  const index_t kc = k_slice(k);
  for (index_t kb = 0; kb < k; kb += kc) {
    const index_t kl = std::min(kc, k - kb);
    const bool acc = accumulate || kb > 0;
    const T* add = kb + kl == k ? row_add : nullptr;
    for (index_t q0 = 0; q0 < panels; q0 += kNc) {
      const index_t q1 = std::min(panels, q0 + kNc);
      for (index_t r = 0; r < m; r += packed_gemm::kZmmRows) {
        const int rows = static_cast<int>(std::min<index_t>(packed_gemm::kZmmRows, m - r));
        const T* ra = add != nullptr ? add + r : nullptr;
        for (index_t q = q0; q < q1; ++q)
          packed_gemm::rows512<T, packed_gemm::kZmmRows>(rows, kl, a + r * lda + kb, lda, b + q * b_stride + kb * W,
                                                         acc ? c + r * ldc + q * W : nullptr, c + r * ldc + q * W,
                                                         ldc, std::min(W, n - q * W), ra);
      }
    }
  }
}
#endif

// C (m, n) = A (m, k) @ B (+ C when `accumulate`) (+ row_add[i] on row i when not null), on the
// AVX-512 tile where the CPU has it.
template <class T>
void multiply(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t b_stride, T* c,
              index_t ldc, bool accumulate, const T* row_add) {
#ifdef FLAMBEAU_HAVE_AVX512
  if (avx512::usable() && m > 0 && n > 0 && k > 0) {
    static_assert(kPanel<T> * sizeof(T) == 64, "a panel is one 512-bit register");
    multiply512(m, n, k, a, lda, b, b_stride, c, ldc, accumulate, row_add);
    return;
  }
#endif
  multiply_generic(m, n, k, a, lda, b, b_stride, c, ldc, accumulate, row_add);
}

}  // namespace
}  // namespace conv_gemm
}  // namespace flambeau
