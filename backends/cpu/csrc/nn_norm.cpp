// Fused layer norm and batch norm, forward and backward, for the ops flambeau-nn declares
// (nn_layer_norm, nn_layer_norm_backward, nn_batch_norm, nn_batch_norm_backward).
//
// Layer norm works on rows: input (M, N) with the statistics of each row; batch norm on channels:
// input (B, C, S) with the statistics of each channel over B and S. Statistics take two passes
// (the mean, then the squared deviations from it), which stays accurate where a one-pass E[x^2] -
// E[x]^2 cancels. Sums run in 16 independent lanes of the element type (vectorised) over blocks,
// each block then added into a double: float32's error stays at a few ulp per block.
//
// The Python side (flambeau_cpu/kernels/nn_normalization.py) hands over C-contiguous aligned
// float32/float64 arrays of one dtype (half inputs as float32 copies); every size and layout is
// checked again here before a pointer is taken. Threads split rows (layer norm) or channels (batch
// norm) statically, so the results do not depend on timing; the weight and bias gradients of layer
// norm are summed per thread, then across threads in a fixed order.
#include <cmath>
#include <vector>

#include "common.h"
#include "nn_args.h"

namespace flambeau {
namespace {

constexpr int kLanes = 16;
constexpr index_t kBlock = 4096;

#define NN_INLINE inline __attribute__((always_inline))

// The sum of f(i) over [0, n), in lanes of T within blocks and in double across blocks.
template <class T, class F>
NN_INLINE double lane_sum(index_t n, F f) {
  double total = 0.0;
  for (index_t b = 0; b < n; b += kBlock) {
    const index_t e = std::min(n, b + kBlock);
    T acc[kLanes] = {};
    index_t k = b;
    for (; k + kLanes <= e; k += kLanes) {
#pragma omp simd
      for (int j = 0; j < kLanes; ++j) acc[j] += f(k + j);
    }
    T s = 0;
    for (; k < e; ++k) s += f(k);
    for (int j = 0; j < kLanes; ++j) s += acc[j];
    total += s;
  }
  return total;
}

// -- argument checks (GIL held) -------------------------------------------------------------------

using nn_args::float_dtype;
using nn_args::pointer;

// -- layer norm -----------------------------------------------------------------------------------

template <class T>
FLAMBEAU_CLONES void layer_norm_rows(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, index_t begin,
                                     index_t end, index_t n, double eps) {
  for (index_t r = begin; r < end; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    const T m = static_cast<T>(lane_sum<T>(n, [&](index_t i) { return xr[i]; }) / static_cast<double>(n));
    const double var = lane_sum<T>(n, [&](index_t i) { const T d = xr[i] - m; return d * d; }) / static_cast<double>(n);
    const T rs = static_cast<T>(1.0 / std::sqrt(var + eps));
    mean[r] = m;
    rstd[r] = rs;
    if (w != nullptr && b != nullptr) {
#pragma omp simd
      for (index_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * rs * w[i] + b[i];
    } else if (w != nullptr) {
#pragma omp simd
      for (index_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * rs * w[i];
    } else if (b != nullptr) {
#pragma omp simd
      for (index_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * rs + b[i];
    } else {
#pragma omp simd
      for (index_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * rs;
    }
  }
}

// Rows [begin, end): their input gradient, and their weight/bias gradients added into gw, gb.
template <class T>
FLAMBEAU_CLONES void layer_norm_backward_rows(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* gx,
                                              T* gw, T* gb, index_t begin, index_t end, index_t n) {
  const double inv_n = 1.0 / static_cast<double>(n);
  for (index_t r = begin; r < end; ++r) {
    const T* gr = g + r * n;
    const T* xr = x + r * n;
    T* gxr = gx + r * n;
    const T m = mean[r], rs = rstd[r];
    double a, c;  // sum(g * w) and sum(g * w * xhat)
    if (w != nullptr) {
      a = lane_sum<T>(n, [&](index_t i) { return gr[i] * w[i]; });
      c = lane_sum<T>(n, [&](index_t i) { return gr[i] * w[i] * (xr[i] - m); }) * rs;
    } else {
      a = lane_sum<T>(n, [&](index_t i) { return gr[i]; });
      c = lane_sum<T>(n, [&](index_t i) { return gr[i] * (xr[i] - m); }) * rs;
    }
    const T ka = static_cast<T>(a * inv_n), kc = static_cast<T>(c * inv_n);
    if (w != nullptr) {
#pragma omp simd
      for (index_t i = 0; i < n; ++i) {
        const T xh = (xr[i] - m) * rs;
        gxr[i] = rs * (gr[i] * w[i] - ka - xh * kc);
        gw[i] += gr[i] * xh;
        gb[i] += gr[i];
      }
    } else {
#pragma omp simd
      for (index_t i = 0; i < n; ++i) {
        const T xh = (xr[i] - m) * rs;
        gxr[i] = rs * (gr[i] - ka - xh * kc);
        gw[i] += gr[i] * xh;
        gb[i] += gr[i];
      }
    }
  }
}

void nn_layer_norm(const py::array& x, const py::object& w, const py::object& b, double eps, const py::object& y,
                   const py::object& mean, const py::object& rstd, index_t rows, index_t n) {
  const char* op = "nn_layer_norm";
  const DType dt = float_dtype(op, x);
  if (rows < 0 || n <= 0) throw py::value_error("nn_layer_norm: bad sizes");
  const void* px = pointer(op, x, "input", dt, rows * n, false, false);
  const void* pw = pointer(op, w, "weight", dt, n, true, false);
  const void* pb = pointer(op, b, "bias", dt, n, true, false);
  void* py_ = pointer(op, y, "output", dt, rows * n, false, true);
  void* pm = pointer(op, mean, "mean", dt, rows, false, true);
  void* pr = pointer(op, rstd, "rstd", dt, rows, false, true);
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / n);
  py::gil_scoped_release nogil;
  parallel_chunks(rows, per_chunk, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      layer_norm_rows(static_cast<const float*>(px), static_cast<const float*>(pw), static_cast<const float*>(pb),
                      static_cast<float*>(py_), static_cast<float*>(pm), static_cast<float*>(pr), begin, end, n, eps);
    else
      layer_norm_rows(static_cast<const double*>(px), static_cast<const double*>(pw), static_cast<const double*>(pb),
                      static_cast<double*>(py_), static_cast<double*>(pm), static_cast<double*>(pr), begin, end, n,
                      eps);
  }, rows * n);
}

template <class T>
void layer_norm_backward_typed(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* gx, T* gw, T* gb,
                               index_t rows, index_t n) {
  const int nthreads = static_cast<int>(std::max<index_t>(1, std::min<index_t>(threads_for(rows * n), rows)));
  // One row of partial weight and bias gradients per thread, summed in thread order at the end.
  std::vector<T> partial(static_cast<std::size_t>(2 * nthreads * n), T(0));
  parallel_team(nthreads, [&](int tid, int team) {
    index_t begin = 0, end = 0;
    split_range(rows, tid, team, begin, end);
    T* pw = partial.data() + static_cast<index_t>(2 * tid) * n;
    layer_norm_backward_rows(g, x, mean, rstd, w, gx, pw, pw + n, begin, end, n);
  });
  for (index_t i = 0; i < n; ++i) {
    double sw = 0.0, sb = 0.0;
    for (int t = 0; t < nthreads; ++t) {
      sw += partial[static_cast<std::size_t>(2 * t) * n + i];
      sb += partial[static_cast<std::size_t>(2 * t + 1) * n + i];
    }
    gw[i] = static_cast<T>(sw);
    gb[i] = static_cast<T>(sb);
  }
}

void nn_layer_norm_backward(const py::array& g, const py::array& x, const py::object& mean, const py::object& rstd,
                            const py::object& w, const py::object& gx, const py::object& gw, const py::object& gb,
                            index_t rows, index_t n) {
  const char* op = "nn_layer_norm_backward";
  const DType dt = float_dtype(op, x);
  if (rows < 0 || n <= 0) throw py::value_error("nn_layer_norm_backward: bad sizes");
  const void* pg = pointer(op, g, "grad_out", dt, rows * n, false, false);
  const void* px = pointer(op, x, "input", dt, rows * n, false, false);
  const void* pm = pointer(op, mean, "mean", dt, rows, false, false);
  const void* pr = pointer(op, rstd, "rstd", dt, rows, false, false);
  const void* pw = pointer(op, w, "weight", dt, n, true, false);
  void* pgx = pointer(op, gx, "grad_input", dt, rows * n, false, true);
  void* pgw = pointer(op, gw, "grad_weight", dt, n, false, true);
  void* pgb = pointer(op, gb, "grad_bias", dt, n, false, true);
  py::gil_scoped_release nogil;
  if (dt == DType::f32)
    layer_norm_backward_typed(static_cast<const float*>(pg), static_cast<const float*>(px),
                              static_cast<const float*>(pm), static_cast<const float*>(pr),
                              static_cast<const float*>(pw), static_cast<float*>(pgx), static_cast<float*>(pgw),
                              static_cast<float*>(pgb), rows, n);
  else
    layer_norm_backward_typed(static_cast<const double*>(pg), static_cast<const double*>(px),
                              static_cast<const double*>(pm), static_cast<const double*>(pr),
                              static_cast<const double*>(pw), static_cast<double*>(pgx), static_cast<double*>(pgw),
                              static_cast<double*>(pgb), rows, n);
}

// -- batch norm -----------------------------------------------------------------------------------

// The sum over the batch of f(plane, i) for each plane's S elements (plane = the channel's data of one sample).
template <class T, class F>
NN_INLINE double channel_sum(index_t batch, index_t stride, index_t s, F f) {
  double total = 0.0;
  for (index_t k = 0; k < batch; ++k) total += lane_sum<T>(s, [&](index_t i) { return f(k * stride, i); });
  return total;
}

template <class T>
FLAMBEAU_CLONES void batch_norm_channels(const T* x, const T* w, const T* b, T* mean, T* var, T* y, bool training,
                                         double eps, index_t batch, index_t channels, index_t s, index_t begin,
                                         index_t end) {
  const index_t stride = channels * s;
  const double count = static_cast<double>(batch * s);
  for (index_t c = begin; c < end; ++c) {
    const T* xc = x + c * s;
    T* yc = y + c * s;
    if (training) {
      const T m = static_cast<T>(channel_sum<T>(batch, stride, s, [&](index_t o, index_t i) { return xc[o + i]; }) / count);
      const double v = channel_sum<T>(batch, stride, s, [&](index_t o, index_t i) {
        const T d = xc[o + i] - m;
        return d * d;
      }) / count;
      mean[c] = m;
      var[c] = static_cast<T>(v);
    }
    const T m = mean[c];
    const T rs = static_cast<T>(1.0 / std::sqrt(static_cast<double>(var[c]) + eps));
    const T scale = w != nullptr ? rs * w[c] : rs;
    const T shift = (b != nullptr ? b[c] : T(0)) - m * scale;
    for (index_t k = 0; k < batch; ++k) {
      const T* xp = xc + k * stride;
      T* yp = yc + k * stride;
#pragma omp simd
      for (index_t i = 0; i < s; ++i) yp[i] = xp[i] * scale + shift;
    }
  }
}

template <class T>
FLAMBEAU_CLONES void batch_norm_backward_channels(const T* g, const T* x, const T* mean, const T* var, const T* w,
                                                  T* gx, T* gw, T* gb, bool training, double eps, index_t batch,
                                                  index_t channels, index_t s, index_t begin, index_t end) {
  const index_t stride = channels * s;
  const double count = static_cast<double>(batch * s);
  for (index_t c = begin; c < end; ++c) {
    const T* xc = x + c * s;
    const T* gc = g + c * s;
    T* gxc = gx + c * s;
    const T m = mean[c];
    const double rs = 1.0 / std::sqrt(static_cast<double>(var[c]) + eps);
    const double sum_g = channel_sum<T>(batch, stride, s, [&](index_t o, index_t i) { return gc[o + i]; });
    const double sum_gd = channel_sum<T>(batch, stride, s, [&](index_t o, index_t i) { return gc[o + i] * (xc[o + i] - m); });
    gb[c] = static_cast<T>(sum_g);
    gw[c] = static_cast<T>(sum_gd * rs);
    const double scale = w != nullptr ? rs * static_cast<double>(w[c]) : rs;
    const T k1 = static_cast<T>(scale);
    // training: gx = scale * (g - mean(g) - (x - m) * rs^2 * mean(g (x - m)))
    const T k0 = training ? static_cast<T>(scale * sum_g / count) : T(0);
    const T k2 = training ? static_cast<T>(scale * rs * rs * sum_gd / count) : T(0);
    for (index_t k = 0; k < batch; ++k) {
      const T* xp = xc + k * stride;
      const T* gp = gc + k * stride;
      T* op = gxc + k * stride;
#pragma omp simd
      for (index_t i = 0; i < s; ++i) op[i] = gp[i] * k1 - k0 - (xp[i] - m) * k2;
    }
  }
}

void nn_batch_norm(const py::array& x, const py::object& w, const py::object& b, const py::object& mean,
                   const py::object& var, bool training, double eps, const py::object& y, index_t batch,
                   index_t channels, index_t s) {
  const char* op = "nn_batch_norm";
  const DType dt = float_dtype(op, x);
  if (batch < 0 || channels < 0 || s < 0) throw py::value_error("nn_batch_norm: bad sizes");
  const index_t total = batch * channels * s;
  const void* px = pointer(op, x, "input", dt, total, false, false);
  const void* pw = pointer(op, w, "weight", dt, channels, true, false);
  const void* pb = pointer(op, b, "bias", dt, channels, true, false);
  void* pm = pointer(op, mean, "mean", dt, channels, false, training);
  void* pv = pointer(op, var, "var", dt, channels, false, training);
  void* py_ = pointer(op, y, "output", dt, total, false, true);
  if (training && batch * s == 0) throw py::value_error("nn_batch_norm: no values per channel");
  py::gil_scoped_release nogil;
  parallel_chunks(channels, 1, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      batch_norm_channels(static_cast<const float*>(px), static_cast<const float*>(pw), static_cast<const float*>(pb),
                          static_cast<float*>(pm), static_cast<float*>(pv), static_cast<float*>(py_), training, eps,
                          batch, channels, s, begin, end);
    else
      batch_norm_channels(static_cast<const double*>(px), static_cast<const double*>(pw),
                          static_cast<const double*>(pb), static_cast<double*>(pm), static_cast<double*>(pv),
                          static_cast<double*>(py_), training, eps, batch, channels, s, begin, end);
  }, total);
}

void nn_batch_norm_backward(const py::array& g, const py::array& x, const py::object& mean, const py::object& var,
                            const py::object& w, bool training, double eps, const py::object& gx, const py::object& gw,
                            const py::object& gb, index_t batch, index_t channels, index_t s) {
  const char* op = "nn_batch_norm_backward";
  const DType dt = float_dtype(op, x);
  if (batch < 0 || channels < 0 || s < 0) throw py::value_error("nn_batch_norm_backward: bad sizes");
  const index_t total = batch * channels * s;
  const void* pg = pointer(op, g, "grad_out", dt, total, false, false);
  const void* px = pointer(op, x, "input", dt, total, false, false);
  const void* pm = pointer(op, mean, "mean", dt, channels, false, false);
  const void* pv = pointer(op, var, "var", dt, channels, false, false);
  const void* pw = pointer(op, w, "weight", dt, channels, true, false);
  void* pgx = pointer(op, gx, "grad_input", dt, total, false, true);
  void* pgw = pointer(op, gw, "grad_weight", dt, channels, false, true);
  void* pgb = pointer(op, gb, "grad_bias", dt, channels, false, true);
  py::gil_scoped_release nogil;
  parallel_chunks(channels, 1, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      batch_norm_backward_channels(static_cast<const float*>(pg), static_cast<const float*>(px),
                                   static_cast<const float*>(pm), static_cast<const float*>(pv),
                                   static_cast<const float*>(pw), static_cast<float*>(pgx), static_cast<float*>(pgw),
                                   static_cast<float*>(pgb), training, eps, batch, channels, s, begin, end);
    else
      batch_norm_backward_channels(static_cast<const double*>(pg), static_cast<const double*>(px),
                                   static_cast<const double*>(pm), static_cast<const double*>(pv),
                                   static_cast<const double*>(pw), static_cast<double*>(pgx),
                                   static_cast<double*>(pgw), static_cast<double*>(pgb), training, eps, batch,
                                   channels, s, begin, end);
  }, total);
}

void register_nn_norm(py::module_& m) {
  m.def("nn_layer_norm", &nn_layer_norm, "Layer norm of (rows, n) rows into output, mean, rstd.");
  m.def("nn_layer_norm_backward", &nn_layer_norm_backward, "Layer norm's input, weight and bias gradients.");
  m.def("nn_batch_norm", &nn_batch_norm, "Batch norm of (batch, channels, s) (statistics written in training).");
  m.def("nn_batch_norm_backward", &nn_batch_norm_backward, "Batch norm's input, weight and bias gradients.");
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_nn_norm);
