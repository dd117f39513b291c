// Fused cross-entropy over class indices for (N, C) C-contiguous float32/float64 logits, threaded
// over rows (the ops nn_cross_entropy / nn_cross_entropy_backward that flambeau-nn declares).
//
// Forward, per row: the largest logit m, then lse = m + log(sum(exp(x - m))) in one pass that never
// stores the softmax; the row's loss is (1 - eps) w[t] (lse - x[t]) + eps / C * sum_c w_c (lse - x_c).
// Backward, per row: m and lse again (the row is read twice, written once), then
// s * (softmax(x) * a - eps / C * w) with a = (1 - eps) w[t] + eps / C * sum(w), and -s (1 - eps) w[t]
// more at the target. The reduction stays in Python (over N numbers).
// Each target is checked against [0, C) in the pass that reads it; the first bad row is returned.
#include <atomic>
#include <cmath>
#include <limits>
#include <string>

#include "common.h"
#include "vecmath.h"
#include "vecmath_avx512.h"

namespace flambeau {
namespace {

constexpr int kLanes = 16;

// log(sum(exp(x - m))) of a row whose largest element is the finite m (add m for the log-sum-exp;
// kept apart so that x - m stays exact for large m).
template <class T>
FLAMBEAU_INLINE double row_log_sum(const T* x, index_t n, T m) {
  double total = 0.0;
  constexpr index_t kBlock = 4096;
  for (index_t b = 0; b < n; b += kBlock) {
    const index_t e = std::min(n, b + kBlock);
    T acc[kLanes] = {};
    index_t k = b;
    for (; k + kLanes <= e; k += kLanes) {
#pragma omp simd
      for (int j = 0; j < kLanes; ++j) acc[j] += vec_exp(x[k + j] - m);
    }
    T s = 0;
    for (; k < e; ++k) s += vec_exp(x[k] - m);
    for (int j = 0; j < kLanes; ++j) s += acc[j];
    total += s;
  }
  return std::log(total);
}

// sum(w * x) (w == nullptr: sum(x)) in double.
template <class T>
FLAMBEAU_INLINE double row_weighted_sum(const T* x, const T* w, index_t n) {
  double total = 0.0;
  for (index_t i = 0; i < n; ++i) total += static_cast<double>(w ? w[i] * x[i] : x[i]);
  return total;
}

// sum(w * (x - m)) (w == nullptr: sum(x - m)) in double: the smoothing term without cancelling large logits.
template <class T>
FLAMBEAU_INLINE double row_weighted_shifted_sum(const T* x, const T* w, index_t n, T m) {
  double total = 0.0;
  for (index_t i = 0; i < n; ++i) total += static_cast<double>(w ? w[i] * (x[i] - m) : x[i] - m);
  return total;
}

#if FLAMBEAU_HAVE_AVX512
// The float32 rows' exp-bound pieces on AVX-512 (vecmath_avx512.h), with the generic forms' results:
// called once per row from the row loops below when avx512::usable().
FLAMBEAU_AVX512 float row_max_avx512(const float* x, index_t n) { return avx512::row_max(x, n); }

FLAMBEAU_AVX512 double row_log_sum_avx512(const float* x, index_t n, float m) {
  return std::log(avx512::row_sum_exp(x, nullptr, n, m));
}

// g = exp((x - m) - ls) * a - spread (* w when w is not null; spread 0: no subtraction).
FLAMBEAU_AVX512 void grad_row_avx512(const float* x, const float* w, float* g, index_t n, float m, float ls, float a,
                                     float spread) {
  const __m512 mv = _mm512_set1_ps(m), lsv = _mm512_set1_ps(ls), av = _mm512_set1_ps(a);
  const __m512 sv = _mm512_set1_ps(spread);
  for (index_t j = 0; j < n; j += 16) {
    const __mmask16 mask = n - j >= 16 ? __mmask16(0xFFFF) : avx512::head_mask(n - j);
    const __m512 e = avx512::exp16(_mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + j), mv), lsv));
    __m512 v;
    if (spread == 0.0f)
      v = _mm512_mul_ps(e, av);
    else if (w)
      v = _mm512_fmsub_ps(e, av, _mm512_mul_ps(sv, _mm512_maskz_loadu_ps(mask, w + j)));
    else
      v = _mm512_fmsub_ps(e, av, sv);
    avx512::store16(g + j, mask, v);
  }
}
#endif

// A row's largest element and log(sum(exp(x - m))), on AVX-512 when `wide` (float32 only).
template <bool wide, class T>
FLAMBEAU_INLINE T max_of_row(const T* row, index_t c) {
#if FLAMBEAU_HAVE_AVX512
  if constexpr (wide) return row_max_avx512(row, c);
#endif
  return row_max(row, c);
}

template <bool wide, class T>
FLAMBEAU_INLINE double log_sum_of_row(const T* row, index_t c, T m) {
#if FLAMBEAU_HAVE_AVX512
  if constexpr (wide) return row_log_sum_avx512(row, c, m);
#endif
  return row_log_sum(row, c, m);
}

struct Options {
  index_t n, c;
  std::int64_t ignore_index;
  double eps;
  double weight_sum;  // sum(w), or C without weights
};

// wide: float32 on AVX-512 (the exp-bound pieces above); the same results either way.
template <class T, bool wide = false>
FLAMBEAU_CLONES void forward_rows(const T* x, const std::int64_t* target, const T* w, T* losses, T* weights,
                                  const Options& o, index_t begin, index_t end, std::atomic<index_t>& bad) {
  const index_t c = o.c;
  for (index_t r = begin; r < end; ++r) {
    const std::int64_t t = target[r];
    if (t == o.ignore_index) {
      losses[r] = 0;
      weights[r] = 0;
      continue;
    }
    if (t < 0 || t >= c) {
      index_t seen = bad.load();
      while ((seen < 0 || r < seen) && !bad.compare_exchange_weak(seen, r)) {
      }
      losses[r] = 0;
      weights[r] = 0;
      continue;
    }
    const T* row = x + r * c;
    const T wt = w ? w[t] : T(1);
    weights[r] = wt;
    const T m = max_of_row<wide>(row, c);
    if (std::isnan(m) || std::isinf(m)) {
      losses[r] = std::numeric_limits<T>::quiet_NaN();
      continue;
    }
    const double ls = log_sum_of_row<wide>(row, c, m);
    // lse - x[t] as ls - (x[t] - m): exact for large logits
    double loss = (1.0 - o.eps) * wt * (ls - (static_cast<double>(row[t]) - m));
    if (o.eps != 0.0) loss += o.eps / c * (ls * o.weight_sum - row_weighted_shifted_sum(row, w, c, m));
    losses[r] = static_cast<T>(loss);
  }
}

template <class T, bool wide = false>
FLAMBEAU_CLONES void backward_rows(const T* x, const std::int64_t* target, const T* w, const T* scales, T* out,
                                   const Options& o, index_t begin, index_t end, std::atomic<index_t>& bad) {
  const index_t c = o.c;
  for (index_t r = begin; r < end; ++r) {
    T* g = out + r * c;
    const std::int64_t t = target[r];
    const T s = scales[r];
    if (t == o.ignore_index) {
      for (index_t j = 0; j < c; ++j) g[j] = 0;
      continue;
    }
    if (t < 0 || t >= c) {
      index_t seen = bad.load();
      while ((seen < 0 || r < seen) && !bad.compare_exchange_weak(seen, r)) {
      }
      for (index_t j = 0; j < c; ++j) g[j] = 0;
      continue;
    }
    const T* row = x + r * c;
    const T wt = w ? w[t] : T(1);
    const T m = max_of_row<wide>(row, c);
    if (std::isnan(m) || std::isinf(m)) {
      for (index_t j = 0; j < c; ++j) g[j] = std::numeric_limits<T>::quiet_NaN();
      continue;
    }
    const T ls = static_cast<T>(log_sum_of_row<wide>(row, c, m));
    const T a = static_cast<T>(s * ((1.0 - o.eps) * wt + o.eps / c * o.weight_sum));
#if FLAMBEAU_HAVE_AVX512
    if constexpr (wide) {
      grad_row_avx512(row, w, g, c, m, ls, a, o.eps != 0.0 ? static_cast<T>(s * o.eps / c) : T(0));
      g[t] -= static_cast<T>(s * (1.0 - o.eps) * wt);
      continue;
    }
#endif
    if (o.eps != 0.0) {
      const T spread = static_cast<T>(s * o.eps / c);
      if (w) {
#pragma omp simd
        for (index_t j = 0; j < c; ++j) g[j] = vec_exp((row[j] - m) - ls) * a - spread * w[j];
      } else {
#pragma omp simd
        for (index_t j = 0; j < c; ++j) g[j] = vec_exp((row[j] - m) - ls) * a - spread;
      }
    } else {
#pragma omp simd
      for (index_t j = 0; j < c; ++j) g[j] = vec_exp((row[j] - m) - ls) * a;
    }
    g[t] -= static_cast<T>(s * (1.0 - o.eps) * wt);
  }
}

// The arrays the row loops take; throws nothing, returns false for anything else.
bool check_layout(const py::array& input, const py::array& target, const py::object& weight, DType& dt) {
  if (input.ndim() != 2 || target.ndim() != 1 || !c_contiguous(input) || !c_contiguous(target) ||
      !is_aligned(input) || !is_aligned(target))
    return false;
  dt = dtype_of(input);
  if ((dt != DType::f32 && dt != DType::f64) || dtype_of(target) != DType::i64) return false;
  if (target.shape(0) != input.shape(0)) return false;
  if (!weight.is_none()) {
    const py::array w = weight.cast<py::array>();
    if (w.ndim() != 1 || w.shape(0) != input.shape(1) || dtype_of(w) != dt || !c_contiguous(w) || !is_aligned(w))
      return false;
  }
  return true;
}

bool vector_of(const py::array& a, DType dt, index_t n) {
  return a.ndim() == 1 && a.shape(0) == n && dtype_of(a) == dt && c_contiguous(a) && is_aligned(a);
}

// Per-row losses and target weights of cross-entropy (N, C) x (N,). Returns the first row whose
// target is out of range, -1 when all are in range, or -2 (touching nothing) for layouts it does not take.
index_t cross_entropy_rows(const py::array& input, const py::array& target, const py::object& weight,
                           std::int64_t ignore_index, double eps, py::array& losses, py::array& weights) {
  DType dt;
  if (!check_layout(input, target, weight, dt)) return -2;
  const index_t n = input.shape(0), c = input.shape(1);
  if (c == 0 || !vector_of(losses, dt, n) || !vector_of(weights, dt, n)) return -2;
  check_in_bounds(input, "input", false);
  check_in_bounds(target, "target", false);
  check_in_bounds(losses, "losses", true);
  check_in_bounds(weights, "weights", true);
  py::array w;
  if (!weight.is_none()) w = weight.cast<py::array>();
  Options o{n, c, ignore_index, eps, 0.0};
  const void* wp = weight.is_none() ? nullptr : w.data();
  if (wp) {
    check_in_bounds(w, "weight", false);
    o.weight_sum = dt == DType::f32 ? row_weighted_sum(static_cast<const float*>(wp), (const float*)nullptr, c)
                                    : row_weighted_sum(static_cast<const double*>(wp), (const double*)nullptr, c);
  } else {
    o.weight_sum = static_cast<double>(c);
  }
  const void* xp = input.data();
  const auto* tp = static_cast<const std::int64_t*>(target.data());
  void* lp = losses.mutable_data();
  void* ww = weights.mutable_data();
  std::atomic<index_t> bad{-1};
  const bool wide = avx512::usable();
  py::gil_scoped_release nogil;
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / c);
  parallel_chunks(
      n, per_chunk,
      [&](index_t begin, index_t end) {
        if (dt == DType::f32 && wide)
          forward_rows<float, true>(static_cast<const float*>(xp), tp, static_cast<const float*>(wp),
                                    static_cast<float*>(lp), static_cast<float*>(ww), o, begin, end, bad);
        else if (dt == DType::f32)
          forward_rows(static_cast<const float*>(xp), tp, static_cast<const float*>(wp), static_cast<float*>(lp),
                       static_cast<float*>(ww), o, begin, end, bad);
        else
          forward_rows(static_cast<const double*>(xp), tp, static_cast<const double*>(wp),
                       static_cast<double*>(lp), static_cast<double*>(ww), o, begin, end, bad);
      },
      n * c);
  return bad.load();
}

// out = d loss / d input for per-row upstream scales (already divided by the total weight for mean).
// Returns as cross_entropy_rows.
index_t cross_entropy_backward_rows(const py::array& scales, const py::array& input, const py::array& target,
                                    const py::object& weight, std::int64_t ignore_index, double eps, py::array& out) {
  DType dt;
  if (!check_layout(input, target, weight, dt)) return -2;
  const index_t n = input.shape(0), c = input.shape(1);
  if (c == 0 || !vector_of(scales, dt, n) || out.ndim() != 2 || out.shape(0) != n || out.shape(1) != c ||
      dtype_of(out) != dt || !c_contiguous(out) || !is_aligned(out))
    return -2;
  check_in_bounds(scales, "scales", false);
  check_in_bounds(input, "input", false);
  check_in_bounds(target, "target", false);
  check_in_bounds(out, "out", true);
  if (may_overlap(input, out) || may_overlap(scales, out)) return -2;
  py::array w;
  if (!weight.is_none()) w = weight.cast<py::array>();
  Options o{n, c, ignore_index, eps, 0.0};
  const void* wp = weight.is_none() ? nullptr : w.data();
  if (wp) {
    check_in_bounds(w, "weight", false);
    if (may_overlap(w, out)) return -2;
    o.weight_sum = dt == DType::f32 ? row_weighted_sum(static_cast<const float*>(wp), (const float*)nullptr, c)
                                    : row_weighted_sum(static_cast<const double*>(wp), (const double*)nullptr, c);
  } else {
    o.weight_sum = static_cast<double>(c);
  }
  const void* xp = input.data();
  const void* sp = scales.data();
  const auto* tp = static_cast<const std::int64_t*>(target.data());
  void* op = out.mutable_data();
  std::atomic<index_t> bad{-1};
  const bool wide = avx512::usable();
  py::gil_scoped_release nogil;
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / c);
  parallel_chunks(
      n, per_chunk,
      [&](index_t begin, index_t end) {
        if (dt == DType::f32 && wide)
          backward_rows<float, true>(static_cast<const float*>(xp), tp, static_cast<const float*>(wp),
                                     static_cast<const float*>(sp), static_cast<float*>(op), o, begin, end, bad);
        else if (dt == DType::f32)
          backward_rows(static_cast<const float*>(xp), tp, static_cast<const float*>(wp),
                        static_cast<const float*>(sp), static_cast<float*>(op), o, begin, end, bad);
        else
          backward_rows(static_cast<const double*>(xp), tp, static_cast<const double*>(wp),
                        static_cast<const double*>(sp), static_cast<double*>(op), o, begin, end, bad);
      },
      n * c);
  return bad.load();
}

// -- negative log-likelihood ---------------------------------------------------------------------
// Forward: one element per row, -w[t] x[r, t] (0 for an ignored row, whatever x holds there), read
// through the input's strides so that a permuted (N, C) view needs no copy. Backward: the gradient is
// zero but for -w[t] g_r at each kept row's target, g_r the row's upstream gradient ('none'), the
// gradient ('sum') or the gradient over the kept rows' total weight ('mean').

// The row's stride and the class stride of a 2-D float array, in elements; false if not aligned to them.
bool element_strides(const py::array& a, index_t& row, index_t& col) {
  const index_t item = static_cast<index_t>(a.itemsize());
  if (!is_aligned(a) || a.strides(0) % item != 0 || a.strides(1) % item != 0) return false;
  row = a.strides(0) / item;
  col = a.strides(1) / item;
  return true;
}

// Records row r as the first bad one unless an earlier one is.
inline void note_bad(std::atomic<index_t>& bad, index_t r) {
  index_t seen = bad.load();
  while ((seen < 0 || r < seen) && !bad.compare_exchange_weak(seen, r)) {
  }
}

template <class T>
void nll_forward_rows(const T* x, index_t row_stride, index_t col_stride, const std::int64_t* target, const T* w,
                      T* losses, T* weights, index_t c, std::int64_t ignore_index, index_t begin, index_t end,
                      std::atomic<index_t>& bad) {
  for (index_t r = begin; r < end; ++r) {
    const std::int64_t t = target[r];
    if (t == ignore_index || t < 0 || t >= c) {
      if (t != ignore_index) note_bad(bad, r);
      losses[r] = 0;
      weights[r] = 0;
      continue;
    }
    const T wt = w ? w[t] : T(1);
    weights[r] = wt;
    losses[r] = -wt * x[r * row_stride + t * col_stride];
  }
}

// Per-row losses and target weights of the NLL of (N, C) log-probabilities (any strides) and (N,)
// targets. Returns as cross_entropy_rows.
index_t nll_loss_rows(const py::array& input, const py::array& target, const py::object& weight,
                      std::int64_t ignore_index, py::array& losses, py::array& weights) {
  if (input.ndim() != 2) return -2;
  const DType dt = dtype_of(input);
  if (dt != DType::f32 && dt != DType::f64) return -2;
  const index_t n = input.shape(0), c = input.shape(1);
  index_t rs, cs;
  if (!element_strides(input, rs, cs)) return -2;
  if (!vector_of(target, DType::i64, n) || !vector_of(losses, dt, n) || !vector_of(weights, dt, n)) return -2;
  py::array w;
  if (!weight.is_none()) {
    w = weight.cast<py::array>();
    if (!vector_of(w, dt, c)) return -2;
    check_in_bounds(w, "weight", false);
  }
  check_in_bounds(input, "input", false);
  check_in_bounds(target, "target", false);
  check_in_bounds(losses, "losses", true);
  check_in_bounds(weights, "weights", true);
  if (may_overlap(losses, weights) || may_overlap(input, losses) || may_overlap(input, weights)) return -2;
  const void* xp = input.data();
  const void* wp = weight.is_none() ? nullptr : w.data();
  const auto* tp = static_cast<const std::int64_t*>(target.data());
  void* lp = losses.mutable_data();
  void* ww = weights.mutable_data();
  std::atomic<index_t> bad{-1};
  py::gil_scoped_release nogil;
  parallel_chunks(n, kParallelChunk, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      nll_forward_rows(static_cast<const float*>(xp), rs, cs, tp, static_cast<const float*>(wp),
                       static_cast<float*>(lp), static_cast<float*>(ww), c, ignore_index, begin, end, bad);
    else
      nll_forward_rows(static_cast<const double*>(xp), rs, cs, tp, static_cast<const double*>(wp),
                       static_cast<double*>(lp), static_cast<double*>(ww), c, ignore_index, begin, end, bad);
  });
  return bad.load();
}

template <class T>
void nll_backward_rows(const T* g, bool per_row, double scale, const std::int64_t* target, const T* w, T* out,
                       index_t c, std::int64_t ignore_index, index_t begin, index_t end, std::atomic<index_t>& bad) {
  std::fill(out + begin * c, out + end * c, T(0));
  for (index_t r = begin; r < end; ++r) {
    const std::int64_t t = target[r];
    if (t == ignore_index) continue;
    if (t < 0 || t >= c) {
      note_bad(bad, r);
      continue;
    }
    const double gr = per_row ? static_cast<double>(g[r]) : static_cast<double>(g[0]) * scale;
    out[r * c + t] = static_cast<T>(-gr * static_cast<double>(w ? w[t] : T(1)));
  }
}

// out = d loss / d input of the NLL for the upstream gradient grad_output ((N,) for reduction 'none',
// one element otherwise) into C-contiguous (N, C) `out`. Returns as cross_entropy_rows.
index_t nll_loss_backward_rows(const py::array& grad_output, const std::string& reduction, const py::array& target,
                               const py::object& weight, std::int64_t ignore_index, py::array& out) {
  if (reduction != "none" && reduction != "mean" && reduction != "sum") {
    throw py::value_error("nll_loss_backward_rows: reduction must be 'none', 'mean' or 'sum'");
  }
  if (out.ndim() != 2 || !c_contiguous(out) || !is_aligned(out)) return -2;
  const DType dt = dtype_of(out);
  if (dt != DType::f32 && dt != DType::f64) return -2;
  const index_t n = out.shape(0), c = out.shape(1);
  const bool per_row = reduction == "none";
  if (dtype_of(grad_output) != dt || !c_contiguous(grad_output) || !is_aligned(grad_output) ||
      grad_output.size() != (per_row ? n : 1))
    return -2;
  if (!vector_of(target, DType::i64, n)) return -2;
  py::array w;
  if (!weight.is_none()) {
    w = weight.cast<py::array>();
    if (!vector_of(w, dt, c)) return -2;
    check_in_bounds(w, "weight", false);
    if (may_overlap(w, out)) return -2;
  }
  check_in_bounds(grad_output, "grad_output", false);
  check_in_bounds(target, "target", false);
  check_in_bounds(out, "out", true);
  if (may_overlap(grad_output, out) || may_overlap(target, out)) return -2;
  const void* gp = grad_output.data();
  const void* wp = weight.is_none() ? nullptr : w.data();
  const auto* tp = static_cast<const std::int64_t*>(target.data());
  void* op = out.mutable_data();
  std::atomic<index_t> bad{-1};
  py::gil_scoped_release nogil;
  double scale = 1.0;
  if (reduction == "mean") {  // the kept rows' total weight (those out of range are reported below)
    double total = 0.0;
    for (index_t r = 0; r < n; ++r) {
      const std::int64_t t = tp[r];
      if (t == ignore_index || t < 0 || t >= c) continue;
      total += wp ? (dt == DType::f32 ? static_cast<double>(static_cast<const float*>(wp)[t])
                                      : static_cast<const double*>(wp)[t])
                  : 1.0;
    }
    scale = 1.0 / total;  // inf when every row is ignored: no row is written then
  }
  parallel_chunks(
      n, std::max<index_t>(1, kParallelChunk / std::max<index_t>(c, 1)),
      [&](index_t begin, index_t end) {
        if (dt == DType::f32)
          nll_backward_rows(static_cast<const float*>(gp), per_row, scale, tp, static_cast<const float*>(wp),
                            static_cast<float*>(op), c, ignore_index, begin, end, bad);
        else
          nll_backward_rows(static_cast<const double*>(gp), per_row, scale, tp, static_cast<const double*>(wp),
                            static_cast<double*>(op), c, ignore_index, begin, end, bad);
      },
      n * c);
  return bad.load();
}

void register_nn_loss(py::module_& m) {
  m.def("cross_entropy_rows", &cross_entropy_rows, py::arg("input"), py::arg("target"), py::arg("weight"),
        py::arg("ignore_index"), py::arg("label_smoothing"), py::arg("losses"), py::arg("weights"),
        "Per-row cross-entropy losses and target weights of (N, C) logits; the first row with an out-of-range "
        "target, -1 if none, -2 (touching nothing) for layouts it does not take.");
  m.def("nll_loss_rows", &nll_loss_rows, py::arg("input"), py::arg("target"), py::arg("weight"),
        py::arg("ignore_index"), py::arg("losses"), py::arg("weights"),
        "Per-row NLL losses and target weights of (N, C) log-probabilities (any strides); the first row with an "
        "out-of-range target, -1 if none, -2 (touching nothing) for layouts it does not take.");
  m.def("nll_loss_backward_rows", &nll_loss_backward_rows, py::arg("grad_output"), py::arg("reduction"),
        py::arg("target"), py::arg("weight"), py::arg("ignore_index"), py::arg("out"),
        "The gradient of the NLL with respect to (N, C) log-probabilities into C-contiguous out; returns as "
        "nll_loss_rows.");
  m.def("cross_entropy_backward_rows", &cross_entropy_backward_rows, py::arg("scales"), py::arg("input"),
        py::arg("target"), py::arg("weight"), py::arg("ignore_index"), py::arg("label_smoothing"), py::arg("out"),
        "The gradient of cross-entropy with respect to (N, C) logits for per-row upstream scales; returns as "
        "cross_entropy_rows.");
}

}  // namespace

FLAMBEAU_REGISTER(register_nn_loss);

}  // namespace flambeau
