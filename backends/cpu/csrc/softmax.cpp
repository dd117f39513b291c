// softmax / log_softmax along the last dim of C-contiguous float32/float64 arrays, and their
// backward ops, threaded over rows.
//
// Forward: one pass for the row's largest element m, one that writes exp(x - m) and adds it up (or,
// for log_softmax, only adds it up), and one that scales (or writes x - m - log(sum)): the row stays
// in the cache between passes, so memory sees one read and one write per element. Backward: one
// pass for the row's sum (of g * y, or of g), one that writes the gradient.
// A row holding NaN or +inf, or only -inf, gives NaN everywhere, as PyTorch (x - m is NaN there).
#include <cmath>
#include <limits>

#include "common.h"
#include "vecmath.h"
#include "vecmath_avx512.h"

namespace flambeau {
namespace {

constexpr int kLanes = 16;
// float32 rows add up in float lanes in blocks of this many, each block then into a double.
constexpr index_t kBlock = 4096;

// sum(exp(x - m)), written to y as well when `store`.
template <class T, bool store>
FLAMBEAU_INLINE double row_sum_exp(const T* x, T* y, index_t n, T m) {
  double total = 0.0;
  for (index_t b = 0; b < n; b += kBlock) {
    const index_t e = std::min(n, b + kBlock);
    T acc[kLanes] = {};
    index_t k = b;
    for (; k + kLanes <= e; k += kLanes) {
#pragma omp simd
      for (int j = 0; j < kLanes; ++j) {
        const T v = vec_exp(x[k + j] - m);
        if (store) y[k + j] = v;
        acc[j] += v;
      }
    }
    T s = 0;
    for (; k < e; ++k) {
      const T v = vec_exp(x[k] - m);
      if (store) y[k] = v;
      s += v;
    }
    for (int j = 0; j < kLanes; ++j) s += acc[j];
    total += s;
  }
  return total;
}

// sum(a * b) (b == nullptr: sum(a)), in float lanes per block and a double across blocks.
template <class T>
FLAMBEAU_INLINE double row_dot(const T* a, const T* b, index_t n) {
  double total = 0.0;
  for (index_t blk = 0; blk < n; blk += kBlock) {
    const index_t e = std::min(n, blk + kBlock);
    T acc[kLanes] = {};
    index_t k = blk;
    if (b) {
      for (; k + kLanes <= e; k += kLanes) {
#pragma omp simd
        for (int j = 0; j < kLanes; ++j) acc[j] += a[k + j] * b[k + j];
      }
    } else {
      for (; k + kLanes <= e; k += kLanes) {
#pragma omp simd
        for (int j = 0; j < kLanes; ++j) acc[j] += a[k + j];
      }
    }
    T s = 0;
    for (; k < e; ++k) s += b ? a[k] * b[k] : a[k];
    for (int j = 0; j < kLanes; ++j) s += acc[j];
    total += s;
  }
  return total;
}

template <class T>
FLAMBEAU_CLONES void softmax_row(const T* x, T* y, index_t n, bool log) {
  const T m = row_max(x, n);
  if (std::isnan(m) || std::isinf(m)) {
    for (index_t i = 0; i < n; ++i) y[i] = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  if (log) {
    // (x - m) - log(sum), not x - (m + log(sum)): the latter rounds to m's ulp for large m
    const T ls = static_cast<T>(std::log(row_sum_exp<T, false>(x, nullptr, n, m)));
#pragma omp simd
    for (index_t i = 0; i < n; ++i) y[i] = (x[i] - m) - ls;
  } else {
    const T inv = static_cast<T>(1.0 / row_sum_exp<T, true>(x, y, n, m));
#pragma omp simd
    for (index_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

template <class T>
FLAMBEAU_CLONES void softmax_backward_row(const T* g, const T* y, T* out, index_t n, bool log) {
  if (log) {  // g - exp(y) * sum(g)
    const T s = static_cast<T>(row_dot<T>(g, nullptr, n));
#pragma omp simd
    for (index_t i = 0; i < n; ++i) out[i] = g[i] - vec_exp(y[i]) * s;
  } else {  // y * (g - sum(g * y))
    const T s = static_cast<T>(row_dot<T>(g, y, n));
#pragma omp simd
    for (index_t i = 0; i < n; ++i) out[i] = y[i] * (g[i] - s);
  }
}

#if FLAMBEAU_HAVE_AVX512
// softmax_row and softmax_backward_row's log form for float32 on AVX-512 (vecmath_avx512.h): the
// same passes, the same sums in the same order, so the same results, at about twice the speed (the
// rows are bound by exp).
FLAMBEAU_AVX512 void softmax_row_avx512(const float* x, float* y, index_t n, bool log) {
  const float m = avx512::row_max(x, n);
  if (std::isnan(m) || std::isinf(m)) {
    for (index_t i = 0; i < n; ++i) y[i] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const __m512 mv = _mm512_set1_ps(m);
  const __mmask16 tail = avx512::head_mask(n % 16);
  const index_t whole = n - n % 16;
  if (log) {
    const __m512 ls = _mm512_set1_ps(static_cast<float>(std::log(avx512::row_sum_exp(x, nullptr, n, m))));
    for (index_t i = 0; i < whole; i += 16)
      _mm512_storeu_ps(y + i, _mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), mv), ls));
    if (tail)
      _mm512_mask_storeu_ps(y + whole, tail, _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + whole), mv), ls));
  } else {
    const __m512 inv = _mm512_set1_ps(static_cast<float>(1.0 / avx512::row_sum_exp(x, y, n, m)));
    for (index_t i = 0; i < whole; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), inv));
    if (tail) _mm512_mask_storeu_ps(y + whole, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + whole), inv));
  }
}

// g - exp(y) * sum(g), as softmax_backward_row<float>(..., log=true).
FLAMBEAU_AVX512 void log_softmax_backward_row_avx512(const float* g, const float* y, float* out, index_t n) {
  const __m512 s = _mm512_set1_ps(static_cast<float>(avx512::row_sum(g, n)));
  const index_t whole = n - n % 16;
  for (index_t i = 0; i < whole; i += 16)
    _mm512_storeu_ps(out + i, _mm512_fnmadd_ps(avx512::exp16(_mm512_loadu_ps(y + i)), s, _mm512_loadu_ps(g + i)));
  if (const __mmask16 tail = avx512::head_mask(n % 16)) {
    const __m512 e = avx512::exp16(_mm512_maskz_loadu_ps(tail, y + whole));
    _mm512_mask_storeu_ps(out + whole, tail, _mm512_fnmadd_ps(e, s, _mm512_maskz_loadu_ps(tail, g + whole)));
  }
}
#endif

template <class Fn>
void over_rows(index_t rows, index_t n, Fn&& fn) {
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / std::max<index_t>(n, 1));
  parallel_chunks(
      rows, per_chunk,
      [&](index_t begin, index_t end) {
        for (index_t r = begin; r < end; ++r) fn(r);
      },
      rows * n);
}

// Whether `a` can be handed to the row loops: C-contiguous, aligned, of dtype `dt`, `size` elements.
bool usable(const py::array& a, DType dt, index_t size) {
  return a.ndim() >= 1 && c_contiguous(a) && is_aligned(a) && dtype_of(a) == dt && a.size() == size;
}

// out = softmax(input, -1) (log_softmax if `log`); False, touching nothing, for any other layout,
// dtype, an empty array, or overlapping input and out.
bool softmax_lastdim(const py::array& input, py::array& out, bool log) {
  if (input.ndim() < 1) return false;
  const DType dt = dtype_of(input);
  if (dt != DType::f32 && dt != DType::f64) return false;
  const index_t n = input.shape(input.ndim() - 1);
  if (n == 0 || input.size() == 0 || !usable(input, dt, input.size()) || !usable(out, dt, input.size()))
    return false;
  check_in_bounds(input, "input", false);
  check_in_bounds(out, "out", true);
  if (may_overlap(input, out)) return false;
  const index_t rows = input.size() / n;
  const void* src = input.data();
  void* dst = out.mutable_data();
  py::gil_scoped_release nogil;
  if (dt == DType::f32) {
    const float* x = static_cast<const float*>(src);
    float* y = static_cast<float*>(dst);
#if FLAMBEAU_HAVE_AVX512
    if (avx512::usable()) {
      over_rows(rows, n, [&](index_t r) { softmax_row_avx512(x + r * n, y + r * n, n, log); });
      return true;
    }
#endif
    over_rows(rows, n, [&](index_t r) { softmax_row(x + r * n, y + r * n, n, log); });
  } else {
    const double* x = static_cast<const double*>(src);
    double* y = static_cast<double*>(dst);
    over_rows(rows, n, [&](index_t r) { softmax_row(x + r * n, y + r * n, n, log); });
  }
  return true;
}

// out = the gradient of softmax (log_softmax if `log`) along the last dim at its output `output`,
// for the upstream gradient `grad`. False, touching nothing, for anything the row loops cannot take.
bool softmax_backward_lastdim(const py::array& grad, const py::array& output, py::array& out, bool log) {
  if (output.ndim() < 1) return false;
  const DType dt = dtype_of(output);
  if (dt != DType::f32 && dt != DType::f64) return false;
  const index_t size = output.size();
  const index_t n = output.shape(output.ndim() - 1);
  if (n == 0 || size == 0 || !usable(grad, dt, size) || !usable(output, dt, size) || !usable(out, dt, size))
    return false;
  check_in_bounds(grad, "grad_output", false);
  check_in_bounds(output, "output", false);
  check_in_bounds(out, "out", true);
  if (may_overlap(grad, out) || may_overlap(output, out)) return false;
  const index_t rows = size / n;
  const void* gp = grad.data();
  const void* yp = output.data();
  void* op = out.mutable_data();
  py::gil_scoped_release nogil;
  if (dt == DType::f32) {
    const float* g = static_cast<const float*>(gp);
    const float* y = static_cast<const float*>(yp);
    float* o = static_cast<float*>(op);
#if FLAMBEAU_HAVE_AVX512
    if (log && avx512::usable()) {
      over_rows(rows, n, [&](index_t r) { log_softmax_backward_row_avx512(g + r * n, y + r * n, o + r * n, n); });
      return true;
    }
#endif
    over_rows(rows, n, [&](index_t r) { softmax_backward_row(g + r * n, y + r * n, o + r * n, n, log); });
  } else {
    const double* g = static_cast<const double*>(gp);
    const double* y = static_cast<const double*>(yp);
    double* o = static_cast<double*>(op);
    over_rows(rows, n, [&](index_t r) { softmax_backward_row(g + r * n, y + r * n, o + r * n, n, log); });
  }
  return true;
}

void register_softmax(py::module_& m) {
  m.def("softmax_lastdim", &softmax_lastdim, py::arg("input"), py::arg("out"), py::arg("log"),
        "out = softmax(input, -1) (log_softmax when log) for C-contiguous float32/float64 arrays; False, "
        "touching nothing, for anything else.");
  m.def("softmax_backward_lastdim", &softmax_backward_lastdim, py::arg("grad_output"), py::arg("output"),
        py::arg("out"), py::arg("log"),
        "out = the gradient of softmax (log_softmax when log) along the last dim at its output; False, "
        "touching nothing, for anything but C-contiguous float32/float64 arrays of one shape.");
  m.def("set_avx512_paths", &avx512::set_usable, py::arg("on"),
        "Turn the float32 AVX-512 row loops (softmax, log-softmax's gradient, cross-entropy, the LSTM cell) on, "
        "where the CPU has AVX-512F, or off; returns whether they were on (always False in a build without "
        "them). For tests that compare them with the generic loops.");
}

}  // namespace

FLAMBEAU_REGISTER(register_softmax);

}  // namespace flambeau
