// A plane's windows (im2col) copied in chunks of W positions, for the packed convolution kernels.
//
// Shifts: im2col and col2im of a "same" convolution as shifted copies of the plane.
//
// With unit strides and an output as large as its input in every dim (a 3x3 convolution with padding
// 1, the common case in CNNs), kernel offset k reads input element l + shift[k] at output position l
// (flat indices of the plane), or padding where the window hangs over the edge. So offset k's columns
// are the plane itself, shifted, with some positions zeroed, and which positions those are is the
// same for every plane and every sample: one bit per position, in chunks of W positions (mask[k][q]).
// A chunk is then one masked vector load and one store (AVX-512's masked loads read nothing for the
// lanes they leave out, so the lanes over the padding, whose addresses fall outside the plane, are
// never read), against im2col_plane's per-row copies and padding fixes.
//
// Every position whose bit is set is inside the plane by construction (its coordinates were checked
// one by one), and the generic loops read only those.
//
// Gathers: any other geometry (strides, shrinking outputs) as a table of the element each kernel
// offset reads at each position (-1 for padding), built once per call; a chunk is then one masked
// gather, against im2col_plane's strided scalar copies (a 7x7 stride-2 stem spent ~3.5 ns per
// element there).
#pragma once

#include <cstdint>
#include <vector>

#include "common.h"
#include "im2col.h"
#include "vecmath_avx512.h"

namespace flambeau {
namespace im2col {
namespace {

struct Shifts {
  bool usable = false;          // the geometry is a "same" convolution with unit strides
  index_t chunks = 0;           // chunks of W positions per plane (the last one may be partial)
  std::vector<index_t> shift;   // per kernel offset
  std::vector<uint16_t> mask;   // per kernel offset and chunk: bit j for position q * W + j
};

// The shifts and masks of geometry g for chunks of `width` (<= 16) positions, or usable = false.
inline Shifts shifts(const Geometry& g, index_t width) {
  Shifts s;
  for (int i = 0; i < 3; ++i)
    if (g.stride[i] != 1 || g.small[i] != g.big[i]) return s;
  const index_t l_n = g.plane_small();
  s.usable = true;
  s.chunks = (l_n + width - 1) / width;
  s.shift.reserve(static_cast<std::size_t>(g.kernel_size()));
  s.mask.assign(static_cast<std::size_t>(g.kernel_size() * s.chunks), 0);
  const index_t d_n = g.big[0], h_n = g.big[1], w_n = g.big[2];
  index_t k = 0;
  for (index_t kd = 0; kd < g.kernel[0]; ++kd)
    for (index_t kh = 0; kh < g.kernel[1]; ++kh)
      for (index_t kw = 0; kw < g.kernel[2]; ++kw, ++k) {
        const index_t sd = kd * g.dil[0] - g.pad[0], sh = kh * g.dil[1] - g.pad[1], sw = kw * g.dil[2] - g.pad[2];
        s.shift.push_back((sd * h_n + sh) * w_n + sw);
        uint16_t* m = s.mask.data() + k * s.chunks;
        index_t l = 0;
        for (index_t d = 0; d < d_n; ++d)
          for (index_t h = 0; h < h_n; ++h)
            for (index_t w = 0; w < w_n; ++w, ++l) {
              const bool inside = d + sd >= 0 && d + sd < d_n && h + sh >= 0 && h + sh < h_n && w + sw >= 0 &&
                                  w + sw < w_n;
              if (inside) m[l / width] = static_cast<uint16_t>(m[l / width] | (1u << (l % width)));
            }
      }
  return s;
}

// Offset k's columns of `plane` as one row of chunks * W values (zero where a bit is clear).
template <class T, index_t W>
inline void copy_shifted(const T* plane, const Shifts& s, index_t k, T* dst) {
  const uint16_t* mask = s.mask.data() + k * s.chunks;
  const index_t shift = s.shift[static_cast<std::size_t>(k)];
  for (index_t q = 0; q < s.chunks; ++q, dst += W) {
    const unsigned m = mask[q];
    const index_t base = q * W + shift;
    for (index_t j = 0; j < W; ++j) dst[j] = (m >> j) & 1u ? plane[base + j] : T(0);
  }
}

// plane[l + shift[k]] += row[l] for the positions l whose bit is set (row: one offset's columns).
template <class T, index_t W>
inline void add_shifted(const T* row, const Shifts& s, index_t k, T* plane) {
  const uint16_t* mask = s.mask.data() + k * s.chunks;
  const index_t shift = s.shift[static_cast<std::size_t>(k)];
  for (index_t q = 0; q < s.chunks; ++q) {
    const unsigned m = mask[q];
    const index_t base = q * W + shift;
    for (index_t j = 0; j < W; ++j)
      if ((m >> j) & 1u) plane[base + j] += row[q * W + j];
  }
}

#ifdef FLAMBEAU_HAVE_AVX512
// The same with masked vector loads and stores; call only when avx512::usable().
FLAMBEAU_AVX512 void copy_shifted16(const float* plane, const Shifts& s, index_t k, float* dst) {
  const uint16_t* mask = s.mask.data() + k * s.chunks;
  const index_t shift = s.shift[static_cast<std::size_t>(k)];
  for (index_t q = 0; q < s.chunks; ++q, dst += 16) {
    // the address of a chunk over the edge lies outside the plane: only its masked-in lanes are read
    const float* src = reinterpret_cast<const float*>(reinterpret_cast<std::uintptr_t>(plane) +
                                                      static_cast<std::uintptr_t>((q * 16 + shift) * 4));
    _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(static_cast<__mmask16>(mask[q]), src));
  }
}
FLAMBEAU_AVX512 void copy_shifted8(const double* plane, const Shifts& s, index_t k, double* dst) {
  const uint16_t* mask = s.mask.data() + k * s.chunks;
  const index_t shift = s.shift[static_cast<std::size_t>(k)];
  for (index_t q = 0; q < s.chunks; ++q, dst += 8) {
    const double* src = reinterpret_cast<const double*>(reinterpret_cast<std::uintptr_t>(plane) +
                                                        static_cast<std::uintptr_t>((q * 8 + shift) * 8));
    _mm512_storeu_pd(dst, _mm512_maskz_loadu_pd(static_cast<__mmask8>(mask[q]), src));
  }
}
FLAMBEAU_AVX512 void add_shifted16(const float* row, const Shifts& s, index_t k, float* plane) {
  const uint16_t* mask = s.mask.data() + k * s.chunks;
  const index_t shift = s.shift[static_cast<std::size_t>(k)];
  for (index_t q = 0; q < s.chunks; ++q) {
    const __mmask16 m = static_cast<__mmask16>(mask[q]);
    float* p = reinterpret_cast<float*>(reinterpret_cast<std::uintptr_t>(plane) +
                                        static_cast<std::uintptr_t>((q * 16 + shift) * 4));
    const __m512 sum = _mm512_add_ps(_mm512_maskz_loadu_ps(m, p), _mm512_maskz_loadu_ps(m, row + q * 16));
    avx512::store16(p, m, sum);
  }
}
FLAMBEAU_AVX512 void add_shifted8(const double* row, const Shifts& s, index_t k, double* plane) {
  const uint16_t* mask = s.mask.data() + k * s.chunks;
  const index_t shift = s.shift[static_cast<std::size_t>(k)];
  for (index_t q = 0; q < s.chunks; ++q) {
    const __mmask8 m = static_cast<__mmask8>(mask[q]);
    double* p = reinterpret_cast<double*>(reinterpret_cast<std::uintptr_t>(plane) +
                                          static_cast<std::uintptr_t>((q * 8 + shift) * 8));
    const __m512d sum = _mm512_add_pd(_mm512_maskz_loadu_pd(m, p), _mm512_maskz_loadu_pd(m, row + q * 8));
    avx512::store8(p, m, sum);
  }
}
#endif

// Dispatch: the AVX-512 forms where usable, else the generic loops. W is 16 for float, 8 for double.
template <class T>
inline void copy_shifted_any(const T* plane, const Shifts& s, index_t k, T* dst) {
#ifdef FLAMBEAU_HAVE_AVX512
  if (avx512::usable()) {
    if constexpr (sizeof(T) == 4) copy_shifted16(plane, s, k, dst);
    else copy_shifted8(plane, s, k, dst);
    return;
  }
#endif
  copy_shifted<T, static_cast<index_t>(64 / sizeof(T))>(plane, s, k, dst);
}

template <class T>
inline void add_shifted_any(const T* row, const Shifts& s, index_t k, T* plane) {
#ifdef FLAMBEAU_HAVE_AVX512
  if (avx512::usable()) {
    if constexpr (sizeof(T) == 4) add_shifted16(row, s, k, plane);
    else add_shifted8(row, s, k, plane);
    return;
  }
#endif
  add_shifted<T, static_cast<index_t>(64 / sizeof(T))>(row, s, k, plane);
}

// The element of the plane that offset k reads at position l (table[k * chunks * W + l]), -1 for the
// padding and for the positions past the plane's last chunk. Only for planes of < 2**31 elements.
struct Gathers {
  bool usable = false;
  index_t chunks = 0;
  std::vector<int32_t> table;
};

// The most table entries built per call (16 MB); larger geometries keep im2col_plane.
constexpr index_t kMaxGatherEntries = index_t(1) << 22;

inline Gathers gathers(const Geometry& g, index_t width) {
  Gathers t;
  const index_t l_n = g.plane_small(), chunks = (l_n + width - 1) / width;
  if (g.plane_big() >= (index_t(1) << 31) || double(g.kernel_size()) * chunks * width > double(kMaxGatherEntries))
    return t;
  t.usable = true;
  t.chunks = chunks;
  t.table.assign(static_cast<std::size_t>(g.kernel_size() * chunks * width), -1);
  const index_t d_n = g.big[0], h_n = g.big[1], w_n = g.big[2];
  int32_t* row = t.table.data();
  for (index_t kd = 0; kd < g.kernel[0]; ++kd)
    for (index_t kh = 0; kh < g.kernel[1]; ++kh)
      for (index_t kw = 0; kw < g.kernel[2]; ++kw, row += chunks * width) {
        index_t l = 0;
        for (index_t od = 0; od < g.small[0]; ++od)
          for (index_t oh = 0; oh < g.small[1]; ++oh)
            for (index_t ow = 0; ow < g.small[2]; ++ow, ++l) {
              const index_t d = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
              const index_t h = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
              const index_t w = ow * g.stride[2] - g.pad[2] + kw * g.dil[2];
              if (d >= 0 && d < d_n && h >= 0 && h < h_n && w >= 0 && w < w_n)
                row[l] = static_cast<int32_t>((d * h_n + h) * w_n + w);
            }
      }
  return t;
}

// Offset k's columns of `plane` from the table, as one row of chunks * W values.
template <class T, index_t W>
inline void copy_gathered(const T* plane, const Gathers& t, index_t k, T* dst) {
  const int32_t* idx = t.table.data() + k * t.chunks * W;
  for (index_t q = 0; q < t.chunks; ++q, dst += W, idx += W)
    for (index_t j = 0; j < W; ++j) dst[j] = idx[j] >= 0 ? plane[idx[j]] : T(0);
}

#ifdef FLAMBEAU_HAVE_AVX512
FLAMBEAU_AVX512 void copy_gathered16(const float* plane, const Gathers& t, index_t k, float* dst) {
  const int32_t* idx = t.table.data() + k * t.chunks * 16;
  for (index_t q = 0; q < t.chunks; ++q, dst += 16, idx += 16) {
    const __m512i i = _mm512_loadu_si512(idx);
    const __mmask16 m = _mm512_cmpge_epi32_mask(i, _mm512_setzero_si512());
    _mm512_storeu_ps(dst, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, i, plane, 4));
  }
}
FLAMBEAU_AVX512 void copy_gathered8(const double* plane, const Gathers& t, index_t k, double* dst) {
  const int32_t* idx = t.table.data() + k * t.chunks * 8;
  for (index_t q = 0; q < t.chunks; ++q, dst += 8, idx += 8) {
    // 256-bit compare and movemask: GCC 12's 512-to-256 casts warn of uninitialised upper lanes
    const __m256i i = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx));
    const __mmask8 m = static_cast<__mmask8>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(-1)))));
    _mm512_storeu_pd(dst, _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, i, plane, 8));
  }
}
#endif

template <class T>
inline void copy_gathered_any(const T* plane, const Gathers& t, index_t k, T* dst) {
#ifdef FLAMBEAU_HAVE_AVX512
  if (avx512::usable()) {
    if constexpr (sizeof(T) == 4) copy_gathered16(plane, t, k, dst);
    else copy_gathered8(plane, t, k, dst);
    return;
  }
#endif
  copy_gathered<T, static_cast<index_t>(64 / sizeof(T))>(plane, t, k, dst);
}

// Chunk q of every kernel offset's columns of `plane`: offset k's chunk at dst + k * W, in the order
// of a packed panel's rows. Packing panel by panel writes each panel's rows in sequence, where offset
// by offset wrote one chunk per panel, a panel (tens of KB) apart: the stores then missed the TLB and
// took ~15 cycles a chunk (the packing was 16% of a 3x3 ResNet layer's time).
template <class T, index_t W>
inline void column_shifted(const T* plane, const Shifts& s, index_t q, index_t kk, T* dst) {
  for (index_t k = 0; k < kk; ++k, dst += W) {
    const unsigned m = s.mask[static_cast<std::size_t>(k * s.chunks + q)];
    const index_t base = q * W + s.shift[static_cast<std::size_t>(k)];
    for (index_t j = 0; j < W; ++j) dst[j] = (m >> j) & 1u ? plane[base + j] : T(0);
  }
}

template <class T, index_t W>
inline void column_gathered(const T* plane, const Gathers& t, index_t q, index_t kk, T* dst) {
  for (index_t k = 0; k < kk; ++k, dst += W) {
    const int32_t* idx = t.table.data() + (k * t.chunks + q) * W;
    for (index_t j = 0; j < W; ++j) dst[j] = idx[j] >= 0 ? plane[idx[j]] : T(0);
  }
}

#ifdef FLAMBEAU_HAVE_AVX512
FLAMBEAU_AVX512 void column_shifted16(const float* plane, const Shifts& s, index_t q, index_t kk, float* dst) {
  for (index_t k = 0; k < kk; ++k, dst += 16) {
    const float* src = reinterpret_cast<const float*>(
        reinterpret_cast<std::uintptr_t>(plane) +
        static_cast<std::uintptr_t>((q * 16 + s.shift[static_cast<std::size_t>(k)]) * 4));
    const __mmask16 m = static_cast<__mmask16>(s.mask[static_cast<std::size_t>(k * s.chunks + q)]);
    _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(m, src));
  }
}
FLAMBEAU_AVX512 void column_shifted8(const double* plane, const Shifts& s, index_t q, index_t kk, double* dst) {
  for (index_t k = 0; k < kk; ++k, dst += 8) {
    const double* src = reinterpret_cast<const double*>(
        reinterpret_cast<std::uintptr_t>(plane) +
        static_cast<std::uintptr_t>((q * 8 + s.shift[static_cast<std::size_t>(k)]) * 8));
    const __mmask8 m = static_cast<__mmask8>(s.mask[static_cast<std::size_t>(k * s.chunks + q)]);
    _mm512_storeu_pd(dst, _mm512_maskz_loadu_pd(m, src));
  }
}
FLAMBEAU_AVX512 void column_gathered16(const float* plane, const Gathers& t, index_t q, index_t kk, float* dst) {
  for (index_t k = 0; k < kk; ++k, dst += 16) {
    const __m512i i = _mm512_loadu_si512(t.table.data() + (k * t.chunks + q) * 16);
    const __mmask16 m = _mm512_cmpge_epi32_mask(i, _mm512_setzero_si512());
    _mm512_storeu_ps(dst, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, i, plane, 4));
  }
}
FLAMBEAU_AVX512 void column_gathered8(const double* plane, const Gathers& t, index_t q, index_t kk, double* dst) {
  for (index_t k = 0; k < kk; ++k, dst += 8) {
    const __m256i i = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.table.data() + (k * t.chunks + q) * 8));
    const __mmask8 m = static_cast<__mmask8>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(-1)))));
    _mm512_storeu_pd(dst, _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, i, plane, 8));
  }
}
#endif

// Chunk q of the kk kernel offsets' columns, shifted or gathered (whichever `shifts` / `gathers` is
// usable), on AVX-512 where usable.
template <class T>
inline void column_any(const T* plane, const Shifts& s, const Gathers& t, index_t q, index_t kk, T* dst) {
#ifdef FLAMBEAU_HAVE_AVX512
  if (avx512::usable()) {
    if constexpr (sizeof(T) == 4) {
      if (s.usable) column_shifted16(plane, s, q, kk, dst);
      else column_gathered16(plane, t, q, kk, dst);
    } else {
      if (s.usable) column_shifted8(plane, s, q, kk, dst);
      else column_gathered8(plane, t, q, kk, dst);
    }
    return;
  }
#endif
  constexpr index_t W = static_cast<index_t>(64 / sizeof(T));
  if (s.usable) column_shifted<T, W>(plane, s, q, kk, dst);
  else column_gathered<T, W>(plane, t, q, kk, dst);
}

}  // namespace
}  // namespace im2col
}  // namespace flambeau
